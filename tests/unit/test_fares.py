"""FaReS (docs/fares.md) through the Python layer: the `fares` controller in
a scenario caps the low-priority VMs and logs its decisions, bad parameters
are clear errors, and `reproduce fares` is wired (its registry, options and
calibration argument checks). The numbers of Algorithm 1 are tested by hand
in crates/ibcloud-control/src/fares/tests.rs; the default-size scoreboard in
test_scoreboard_defaults.py."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from ibcloud.checks import claims
from ibcloud.host import Scenario, run
from ibcloud.host import fares

ROOT = Path(__file__).resolve().parents[2]


def _pair(ctl):
    sc = fares._pair_scenario("bt", "cg", 2, 1.0, ctl, hosts=fares.READINGS["contended"])
    return sc


def test_the_controller_caps_only_the_low_priority_vms_and_logs_every_window():
    ctl = fares._fares(fares._ranks("m", "bt"), fares._ranks("b", "cg"), 5, 1.0)
    r = run(_pair(ctl))
    acts = r.actions()
    assert len(acts) > 0 and set(acts.vm) <= set(fares._ranks("b", "cg"))
    rep = [c for c in r.controllers() if c.get("kind") == "fares"][0]
    assert rep["steps"] == 11  # 1 s / 90 ms
    assert len(rep["records"]) == 11 * 8  # one row per managed VM per window
    caps = [x["cap"] for x in rep["records"] if x["vm"] >= 4]
    assert min(c for c in caps if c > 0) < 100


def test_monitor_only_changes_nothing():
    ctl = fares._fares(fares._ranks("m", "bt"), fares._ranks("b", "cg"), 5, 1.0, monitor=True)
    with_mon, without = run(_pair(ctl)), run(_pair(None))
    assert len(with_mon.actions()) == 0
    assert with_mon.workloads().finish_s.tolist() == without.workloads().finish_s.tolist()


@pytest.mark.parametrize("extra, message", [
    ({"colour": 1}, "unknown field `colour`"),
    ({"ratio": "0:1"}, "positive numbers"),
    ({"ratio": -1}, "must be positive"),
    ({"hl": 0.1, "ml": 0.2}, "hl > ml > ll"),
    ({"high": ["nobody"]}, "unknown VM 'nobody'"),
])
def test_bad_parameters_are_clear_errors(extra, message):
    ctl = {"kind": "fares", "high": ["m-bt0"], **extra}
    with pytest.raises(Exception) as e:
        run(_pair(ctl))
    assert message in str(e.value)


def test_the_example_scenario_runs_from_the_cli(tmp_path):
    text = (ROOT / "docs" / "examples" / "fares.toml").read_text().replace('duration = "4s"', 'duration = "500ms"')
    sc = Scenario.from_text(text)
    assert sc.to_json()  # parses and checks
    p = tmp_path / "f.toml"
    p.write_text(text.replace('ratio = "5:1"', 'ratio = "5:1"\nwhatever = 3'))
    cp = subprocess.run([str(Path(sys.executable).parent / "ibcloud"), "host", "run", str(p)], capture_output=True, text=True)
    assert cp.returncode == 2 and "ibcloud: error:" in cp.stderr and "whatever" in cp.stderr


def test_registry_and_options():
    reg = claims("fares")
    assert reg["CAL-5"].kind == "calibration" and reg["F17-5"].kind == "prediction"
    p = argparse.ArgumentParser()
    fares.configure(p)
    a = p.parse_args(["--scale", "1", "--no-fig16"])
    assert a.scale == 1 and a.no_fig16 and not a.no_fig18
    with pytest.raises(SystemExit):
        p.parse_args(["--scale", "0"])


def test_calibrate_rejects_targets_without_a_search():
    with pytest.raises(ValueError, match="1:1 needs no calibration"):
        fares.calibrate(1)
    with pytest.raises(Exception):
        fares.calibrate(-5)
