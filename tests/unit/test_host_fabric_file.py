"""``ibcloud host run`` on a fabric read from a file (item 8 of issue 17:
hosts attach to any netsim fabric), the path relative to the scenario
file; the run equals the one on the generated preset. About 1 s."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ibcloud import Fabric
from ibcloud.host import Scenario, run

IBCLOUD = str(Path(sys.executable).with_name("ibcloud"))

SCENARIO = """\
duration = "10ms"
[fabric]
{fabric}
[[hosts]]
name = "A"
[[hosts]]
name = "B"
[[hosts]]
name = "C"
[[vms]]
name = "a"
host = "A"
[[vms]]
name = "c"
host = "C"
[[workloads]]
kind = "rdma-write"
vm = "a"
peer = "c"
size = "256k"
depth = 8
"""


def test_a_fabric_file_relative_to_the_scenario_runs_like_its_preset(tmp_path):
    f = Fabric.generate("4-ary-2-tree")
    f.assign_lids(policy="opensm")
    (tmp_path / "fabrics").mkdir()
    (tmp_path / "fabrics" / "tree.topo").write_text(f.to_text("ibnetdiscover"))
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.format(fabric='file = "fabrics/tree.topo"'))
    out = subprocess.run([IBCLOUD, "host", "run", str(path), "--json"], capture_output=True, text=True, cwd="/")
    assert out.returncode == 0, out.stderr
    from_file = json.loads(out.stdout)["workloads"][0]
    preset = run(Scenario.from_text(SCENARIO.format(fabric='preset = "4-ary-2-tree"'))).summary()["workloads"][0]
    assert from_file["completed"] == preset["completed"] > 0
    assert from_file["hw_mib_s"] == preset["hw_mib_s"]


def test_a_missing_fabric_file_is_named_with_its_line(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.format(fabric='file = "nowhere.topo"'))
    out = subprocess.run([IBCLOUD, "host", "run", str(path)], capture_output=True, text=True)
    assert out.returncode == 2
    assert f"ibcloud: error: {path}:3: fabric.file: " in out.stderr and "nowhere.topo" in out.stderr, out.stderr
