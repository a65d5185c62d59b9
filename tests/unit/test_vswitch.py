"""`ibcloud.vswitch` and the `vswitch`, `migrate`, `migrate-sim` commands:
worked examples, round trips through files, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ibcloud
from ibcloud import Fabric
from ibcloud.cli.main import main
from ibcloud.exceptions import VSwitchError
from ibcloud.vswitch import VirtualFabric, capacity, simulate, table2


def test_capacity_cli_prints_the_papers_bound(capsys) -> None:
    assert main(["vswitch", "capacity", "--vfs", "16"]) == 0
    out = capsys.readouterr().out
    assert "2,891 hypervisors" in out and "46,256 VMs" in out
    assert main(["vswitch", "capacity", "--vfs", "16", "--share", "4", "--json"]) == 0
    c = json.loads(capsys.readouterr().out)
    assert c["extension"]["vlids"] == 196608 and c["hybrid"]["max_vms"] > c["dynamic"]["max_running_vms"]
    assert capacity(4)["prepopulated"] == {"max_hypervisors": 9830, "max_vms": 39320}


def test_table2_cells() -> None:
    assert table2(Fabric.generate("ft648")) == {"nodes": 648, "switches": 54, "lids": 702, "blocks": 11,
                                                "full_rc_smps": 594, "min_smps": 1, "max_smps": 108}


@pytest.mark.parametrize("ext", ["net", "topo", "ibcf"])
def test_build_writes_a_fabric_that_reads_back(tmp_path: Path, capsys, ext: str) -> None:
    out = tmp_path / f"v.{ext}"
    assert main(["vswitch", "build", "4-ary-2-full", "--vfs", "2", "--population", "0.5", "-o", str(out),
                 "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["vms"] == 32 and info["switches"] == 12 + 32
    vf = VirtualFabric.from_fabric(Fabric.read(out))
    assert vf.num_vms == 32 and vf.num_hypervisors == 32
    assert vf.check()["loops"] == 0


def test_migrate_cli_reports_and_writes(tmp_path: Path, capsys) -> None:
    src = tmp_path / "v.topo"
    assert main(["vswitch", "build", "ft324", "--population", "0.1", "-o", str(src)]) == 0
    capsys.readouterr()
    after = tmp_path / "after.topo"
    rc = main(["migrate", str(src), "--vm", "vm0", "--to", "hca-00300", "--method", "itrc", "--json",
               "--write", str(after), "--partially-static"])
    assert rc == 0
    r = json.loads(capsys.readouterr().out)
    assert r["applied"] and r["reachable"] and r["hypervisor_smps"] == 3 and r["path_computation_s"] == 0
    # Partially static: one invalidation SMP per updated switch (same block).
    inval = [s for s in r["smps"] if s["kind"] == "Invalidate"]
    assert len(inval) == len(r["switches_updated"])
    vms = {v["name"]: v for v in VirtualFabric.from_fabric(Fabric.read(after)).vms()}
    assert vms["vm0"]["hypervisor"].startswith("hca-00300") and vms["vm0"]["lid"] == r["lid"]
    # Text output and the transition verdict decide the exit status.
    rc = main(["migrate", str(after), "--vm", "vm0", "--to", "hca-00001"])
    out = capsys.readouterr().out
    assert "switch SMPs" in out and "transition" in out
    assert rc in (0, 1) and (rc == 1) == ("can deadlock" in out)


def test_migrate_bad_input_exits_2(tmp_path: Path, capsys) -> None:
    assert main(["migrate", "4-ary-2-full", "--vm", "nope", "--to", "#1"]) == 2
    assert "unknown VM 'nope'" in capsys.readouterr().err
    assert main(["migrate", "4-ary-2-full", "--vm", "vm0", "--to", "nohost"]) == 2
    assert "unknown hypervisor" in capsys.readouterr().err
    # One VF per hypervisor, all full: no free VF anywhere.
    assert main(["migrate", "4-ary-2-full", "--vfs", "1", "--population", "1", "--vm", "vm0", "--to", "#5"]) == 2
    assert "no free VF" in capsys.readouterr().err


def test_refusals_leave_the_fabric_unchanged() -> None:
    vf = VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=1, scheme="prepopulated")
    vf.boot_vm("a", "#0")
    vf.boot_vm("b", "#1")
    before = (vf.vms(), vf.tables())
    with pytest.raises(VSwitchError, match="no free VF"):
        vf.migrate("a", "#1")
    with pytest.raises(VSwitchError, match="already on"):
        vf.migrate("a", "#0")
    with pytest.raises(VSwitchError, match="LID space exhausted"):
        VirtualFabric.virtualize(Fabric.generate("16-ary-2"), vfs=250, scheme="prepopulated")
    assert (vf.vms(), vf.tables()) == before
    assert issubclass(VSwitchError, ibcloud.IbcloudError)


def test_ftree_minrc_on_a_non_fat_tree_is_refused(tmp_path: Path) -> None:
    # A ring of three switches with two hosts each (ibnetdiscover text).
    lines = []
    for i in range(3):
        lines += [f'Switch 8 "S-{i + 1:016x}" # "sw{i}"',
                  f'[1] "S-{(i + 1) % 3 + 1:016x}"[2]', f'[2] "S-{(i - 1) % 3 + 1:016x}"[1]',
                  f'[3] "H-{0x100 + 2 * i:016x}"[1]', f'[4] "H-{0x101 + 2 * i:016x}"[1]', ""]
    for i in range(6):
        lines += [f'Ca 1 "H-{0x100 + i:016x}" # "h{i}"', f'[1] "S-{i // 2 + 1:016x}"[{3 + i % 2}]', ""]
    path = tmp_path / "ring.topo"
    path.write_text("\n".join(lines))
    vf = VirtualFabric.virtualize(Fabric.read(path), vfs=1)
    vf.boot_vm("x", "#0")
    before = vf.tables()
    with pytest.raises(VSwitchError, match="not a fat-tree"):
        vf.migrate("x", "#5", method="ftree-minrc")
    assert vf.tables() == before and vf.vms()[0]["hypervisor_index"] == 0
    assert vf.migrate("x", "#5", method="itrc")["reachable"]


def test_migrate_sim_cli(tmp_path: Path, capsys) -> None:
    csv = tmp_path / "m.csv"
    assert main(["migrate-sim", "4-ary-2-full", "--pattern", "consolidate", "--population", "0.5",
                 "--bisect-runs", "20", "--steps", "2", "--transition-check", "--csv", str(csv), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["vms"] == 64 and s["unreachable"] == 0 and len(s["snapshots"]) == 3
    assert s["minrc_switches_mean"] <= s["itrc_switches_mean"]
    assert csv.read_text().startswith("vm,src,dst")
    assert main(["migrate-sim", "4-ary-2-full", "--pattern", "sideways"]) == 2


def test_simulation_is_deterministic() -> None:
    f = Fabric.generate("4-ary-2-full")
    a = simulate(f, pattern="grouping:2", population=0.75, bisect_runs=10, steps=2, seed=5)
    b = simulate(f, pattern="grouping:2", population=0.75, bisect_runs=10, steps=2, seed=5)
    assert a.raw == b.raw


def test_vswitch_ftree_is_a_registered_engine() -> None:
    assert "vswitch-ftree" in dict(ibcloud.engines())
    vf = VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=2, scheme="prepopulated")
    routed = ibcloud.route(vf.fabric(), "vswitch-ftree")
    assert routed.tables.unrouted() == 0
    assert ibcloud.verify(routed).ok


def test_reproduce_lists_vswitch(capsys) -> None:
    assert main(["reproduce", "--list"]) == 0
    assert "vswitch" in capsys.readouterr().out
