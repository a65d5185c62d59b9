"""A virtualized fabric (each hypervisor's HCA emulated as a vSwitch with PF
and VFs, as the papers' ibsim testbed did) run through the real tools: ibsim
emulates it, OpenSM assigns LIDs and installs our `vswitch-ftree` tables with
its `file` engine, `ibroute` reads them back from every switch (vSwitches
included) and `ibdmchk` finds every path connected and no credit loop. Runs
in CI, never skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from ibcloud import Fabric, read_guid2lid, verify
from ibcloud.interop import IbSim, ibdmchk, ibroute_tables, run_opensm
from ibcloud.verify import write_fdbs
from ibcloud.vswitch import VirtualFabric


@pytest.mark.parametrize("preset,vfs", [("4-ary-2-full", 2), ("8-ary-2", 3)])
def test_vswitch_ftree_tables_installed_by_opensm_and_checked(preset: str, vfs: int, tmp_path: Path) -> None:
    built = VirtualFabric.virtualize(Fabric.generate(preset), vfs=vfs, scheme="prepopulated")
    for h in range(0, built.num_hypervisors, 3):
        built.boot_vm(f"vm{h}", f"#{h}")
    fabric = built.fabric()
    net = tmp_path / "virtual.net"
    fabric.write(net)
    assert "Hca" in net.read_text().split("Switch")[0]  # a CA first: ibsim puts the SM there
    with IbSim(net) as sim:
        first = run_opensm(sim)
        assert first.returncode == 0, first.log.read_text()[-2000:]
        # Our virtual fabric with OpenSM's LIDs (every VF has one: prepopulated).
        fabric.assign_lids(policy="guid2lid", guid2lid=read_guid2lid(first.guid2lid))
        vf = VirtualFabric.from_fabric(fabric, "prepopulated")
        assert vf.num_vms == len(range(0, built.num_hypervisors, 3))
        ours = vf.tables()
        assert verify(ours).ok
        dump = tmp_path / "vswitch-lfts.dump"
        ours.write_opensm(dump)
        run = run_opensm(sim, routing_engine="file", lfts_file=dump, guid2lid=first.guid2lid)
        assert run.returncode == 0 and run.engine_used == "file", run.log.read_text()[-2000:]
        installed = ibroute_tables(sim, vf.fabric())
    assert installed.differences(ours) == []
    fdbs = tmp_path / "opensm.fdbs"
    write_fdbs(ours, fdbs)
    try:
        verdict = ibdmchk(run.subnet_lst, fdbs)
    finally:
        first.remove()
        run.remove()
    assert verdict.connected, verdict.output[-2000:]
    assert verdict.credit_loops is False, verdict.output[-2000:]
    n = vf.fabric().num_cas
    assert verdict.paths == n * (n - 1)
