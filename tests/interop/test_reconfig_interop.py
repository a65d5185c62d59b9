"""Reconfigured tables (Paper III sub-tree with NoFTree, Paper IV SlimUpdate
and metabase) checked by the real tools: ibdmchk verifies connectivity and
credit loops, OpenSM's `file` engine installs them in ibsim and `ibroute`
reads them back unchanged. Runs in CI, never skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from ibcloud import Fabric, read_guid2lid, route
from ibcloud.interop import IbSim, ibdmchk, ibroute_tables, run_opensm
from ibcloud.reconfig import reconfigure
from ibcloud.verify import write_fdbs


@pytest.fixture(scope="module")
def subnet(tmp_path_factory):
    fabric = Fabric.generate("4-ary-3-full")
    net = tmp_path_factory.mktemp("reconfig") / "t.net"
    fabric.write(net)
    with IbSim(net) as sim:
        run = run_opensm(sim)
    assert run.returncode == 0
    fabric.assign_lids(policy="guid2lid", guid2lid=read_guid2lid(run.guid2lid))
    return fabric, net, run.subnet_lst


def _reconfigured(fabric: Fabric, method: str):
    old = route(fabric, "ftree").tables
    cas = [n for n in fabric.nodes() if n["kind"] != "switch"]
    if method == "subtree":
        order = [n["lid"] for n in cas[:16]][::-1]
        return reconfigure(fabric, old, None, method="subtree", nodes=[cas[0]["description"]], order=order)
    if method == "slimupdate":
        host = cas[5]["description"]
        down = reconfigure(fabric, old, "shutdown", host, method="full").tables
        return reconfigure(fabric, down, "boot", host, method="slimupdate", before=[("shutdown", [host])])
    return reconfigure(fabric, old, None, method="metabase", order=[n["lid"] for n in cas][::-1])


@pytest.mark.parametrize("method", ["subtree", "slimupdate", "metabase"])
def test_reconfigured_tables_pass_ibdmchk_and_install_in_opensm(subnet, method: str, tmp_path: Path) -> None:
    fabric, net, subnet_lst = subnet
    result = _reconfigured(fabric, method)
    assert result.ok, result.report
    assert result.changes["changed_entries"] > 0
    fdbs = tmp_path / "opensm.fdbs"
    write_fdbs(result.tables, fdbs)
    verdict = ibdmchk(subnet_lst, fdbs)
    assert verdict.connected, verdict.output[-2000:]
    assert verdict.credit_loops is False, verdict.output[-2000:]
    assert verdict.paths == fabric.num_cas * (fabric.num_cas - 1)
    dump = tmp_path / "reconfigured-lfts.dump"
    result.tables.write_opensm(dump)
    with IbSim(net) as sim:
        run = run_opensm(sim, routing_engine="file", lfts_file=dump, guid2lid=None)
        assert run.returncode == 0 and run.engine_used == "file", run.log.read_text()[-2000:]
        installed = ibroute_tables(sim, fabric)
    assert installed.differences(result.tables) == []
