"""Our tables checked by the real tools: OpenSM's `file` engine installs them
in ibsim and `ibroute` reads them back; `ibdmchk` verifies connectivity and
credit loops. Runs in CI, never skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from ibcloud import Fabric, read_guid2lid, route, verify
from ibcloud.interop import IbSim, ibdmchk, ibroute_tables, run_opensm
from ibcloud.verify import write_fdbs

PRESETS = ["ft324", "ft648", "4-ary-2-full", "8-ary-2", "4-ary-3-full", "16-ary-2", "8-ary-3", "8-ary-3-full"]


@pytest.fixture(scope="module")
def subnets(tmp_path_factory):
    """Per preset: the fabric with OpenSM's LIDs and OpenSM's subnet.lst."""
    cache = {}

    def get(preset: str):
        if preset not in cache:
            fabric = Fabric.generate(preset)
            net = tmp_path_factory.mktemp(preset) / f"{preset}.net"
            fabric.write(net)
            with IbSim(net) as sim:
                run = run_opensm(sim)
            assert run.returncode == 0
            fabric.assign_lids(policy="guid2lid", guid2lid=read_guid2lid(run.guid2lid))
            cache[preset] = (fabric, run.subnet_lst)
        return cache[preset]

    return get


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("engine", ["ftree", "updn"])
def test_ibdmchk_and_we_agree_tables_are_connected_and_deadlock_free(subnets, preset, engine, tmp_path: Path) -> None:
    fabric, subnet_lst = subnets(preset)
    routing = route(fabric, engine)
    assert verify(routing).ok
    fdbs = tmp_path / "opensm.fdbs"
    write_fdbs(routing.tables, fdbs)
    verdict = ibdmchk(subnet_lst, fdbs)
    assert verdict.connected, verdict.output[-2000:]
    assert verdict.credit_loops is False, verdict.output[-2000:]
    n = fabric.num_cas
    assert verdict.paths == n * (n - 1)


def test_ibdmchk_finds_what_we_find_on_broken_tables(subnets, tmp_path: Path) -> None:
    fabric, subnet_lst = subnets("4-ary-2-full")
    tables = route(fabric, "minhop").tables
    leaf = next(n for n in fabric.nodes() if n["kind"] == "switch")
    host = next(n for n in fabric.nodes() if n["kind"] == "ca" and n["lid"] > 20)
    tables.set(leaf["guid"], host["lid"], 1)  # towards a host that is not the destination
    ours = verify(tables)
    assert not ours.ok and ours.data["failures"]["wrong_endpoint"] > 0
    fdbs = tmp_path / "opensm.fdbs"
    write_fdbs(tables, fdbs)
    assert not ibdmchk(subnet_lst, fdbs).connected


@pytest.mark.parametrize("engine", ["ftree", "updn"])
def test_ibroute_reads_back_tables_installed_by_the_file_engine(engine: str, tmp_path: Path) -> None:
    fabric = Fabric.generate("ft648")
    net = tmp_path / "ft648.net"
    fabric.write(net)
    ours = route(fabric, engine).tables
    dump = tmp_path / "ours-lfts.dump"
    ours.write_opensm(dump)
    with IbSim(net) as sim:
        run = run_opensm(sim, routing_engine="file", lfts_file=dump)
        assert run.returncode == 0 and run.engine_used == "file", run.log.read_text()[-2000:]
        assert read_guid2lid(run.guid2lid) == fabric.guid2lid()
        installed = ibroute_tables(sim, fabric)
    assert installed.differences(ours) == []
    assert installed == ours
