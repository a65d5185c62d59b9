"""Interop with the real tools: ibsim, ibnetdiscover and OpenSM 3.3.23.

These run in CI for real; a missing tool is a failure, never a skip
(`make test` installs them).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import ibcloud
from ibcloud import Fabric
from ibcloud.interop import IbSim, ibnetdiscover, run_opensm, tools_available


def test_every_tool_is_installed() -> None:
    missing = [name for name, ok in tools_available().items() if not ok]
    assert not missing, f"missing interop tools {missing}; run `make test`, which installs them"


@pytest.fixture(scope="module")
def ft648() -> Fabric:
    return Fabric.generate("ft648")


@pytest.fixture(scope="module")
def ft648_sim(ft648: Fabric, tmp_path_factory: pytest.TempPathFactory):
    net = tmp_path_factory.mktemp("ft648") / "ft648.net"
    ft648.write(net)
    with IbSim(net) as sim:
        yield sim


@pytest.fixture(scope="module")
def opensm_run(ft648_sim: IbSim):
    run = run_opensm(ft648_sim)
    assert run.returncode == 0, run.log.read_text()[-3000:]
    return run


def test_ibnetdiscover_sees_exactly_the_generated_fabric(ft648: Fabric, ft648_sim: IbSim, tmp_path: Path) -> None:
    topo = tmp_path / "discovered.topo"
    ibnetdiscover(ft648_sim, topo)
    discovered = Fabric.read(topo, format="ibnetdiscover")
    assert (discovered.num_cas, discovered.num_switches, discovered.num_links) == (648, 54, 648 + 36 * 18)
    assert ft648.topology_difference(discovered) is None
    # Descriptions survive the trip through ibsim too.
    assert sorted(discovered.to_pandas()["description"]) == sorted(ft648.to_pandas()["description"])


def test_ibsim_loads_our_ibnetdiscover_output(tmp_path: Path) -> None:
    fabric = Fabric.generate("4-ary-3-full")
    topo = tmp_path / "ours.topo"
    fabric.write(topo)
    with IbSim(topo) as sim:
        again = Fabric.from_text(ibnetdiscover(sim), "ibnetdiscover")
    assert fabric.topology_difference(again) is None


def _sm_port_guid(fabric: Fabric) -> int:
    """ibsim attaches the SM to the first node of the net file: our writer puts hca-00001 there."""
    first = fabric.nodes()[0]
    assert first["kind"] == "ca"
    return first["guid"] + 1


def test_opensm_dumps_read_back(ft648: Fabric, opensm_run) -> None:
    assert opensm_run.engine_used == "minhop"
    subnet = Fabric.read(opensm_run.subnet_lst, format="subnet-lst")
    assert ft648.topology_difference(subnet) is None
    g2l = ibcloud.read_guid2lid(opensm_run.guid2lid)
    # The net file carries our packed LIDs; ibsim applies them and OpenSM keeps valid LIDs.
    assert g2l == ft648.guid2lid()
    # subnet.lst carries the same LIDs, and the tables route every LID on every switch.
    assert subnet.guid2lid() == g2l
    tables = ibcloud.read_lfts(opensm_run.lfts, subnet)
    assert tables.num_switches == 54
    assert tables.unrouted() == 0


def test_opensm_order_lid_assignment_matches_opensm(ft648: Fabric, tmp_path: Path) -> None:
    """On a subnet without LIDs, OpenSM's choice is what our `opensm` policy predicts."""
    bare = ft648.copy()
    bare.clear_lids()
    net = tmp_path / "bare.net"
    bare.write(net)
    with IbSim(net) as sim:
        run = run_opensm(sim)
    assert run.returncode == 0, run.log.read_text()[-3000:]
    g2l = ibcloud.read_guid2lid(run.guid2lid)
    assert sorted(lo for lo, _ in g2l.values()) == list(range(1, 703)), "OpenSM packs LIDs 1..702"
    ours = ft648.copy()
    ours.assign_lids(policy="opensm", sm_port_guid=_sm_port_guid(ft648))
    assert ours.guid2lid() == g2l
    assert ours.guid2lid() != ft648.guid2lid(), "the two policies differ, so this test can fail"


def test_file_engine_loads_tables_we_write(ft648: Fabric, opensm_run, ft648_sim: IbSim, tmp_path: Path) -> None:
    fabric = ft648.copy()
    fabric.assign_lids(policy="guid2lid", guid2lid=opensm_run.guid2lid)
    assert fabric.guid2lid() == ibcloud.read_guid2lid(opensm_run.guid2lid)
    tables = ibcloud.read_lfts(opensm_run.lfts, fabric)
    # Send one leaf's traffic for a remote host up another root, so the table
    # differs from what minhop computed and only the file engine can install it.
    nodes = fabric.nodes()
    leaf = next(n for n in nodes if n["kind"] == "switch" and n["rank"] == 1)
    remote_host = next(n for n in reversed(nodes) if n["kind"] == "ca")
    up_ports = sorted(
        (l["port_a"] if l["node_a"] == leaf["id"] else l["port_b"])
        for l in fabric.links()
        if leaf["id"] in (l["node_a"], l["node_b"])
        and nodes[l["node_b"] if l["node_a"] == leaf["id"] else l["node_a"]]["kind"] == "switch"
    )
    assert len(up_ports) == 18
    current = tables.get(leaf["guid"], remote_host["lid"])
    assert current in up_ports
    new_port = next(p for p in up_ports if p != current)
    tables.set(leaf["guid"], remote_host["lid"], new_port)
    ours = tmp_path / "ours-lfts.dump"
    tables.write_opensm(ours)
    run = run_opensm(ft648_sim, routing_engine="file", lfts_file=ours, guid2lid=opensm_run.guid2lid)
    assert run.returncode == 0, run.log.read_text()[-3000:]
    assert run.engine_used == "file", f"OpenSM used {run.engine_used}, not our tables"
    installed = ibcloud.read_lfts(run.lfts, fabric)
    assert installed.get(leaf["guid"], remote_host["lid"]) == new_port
    assert installed == tables
    assert run.lfts.read_text() == ours.read_text()
