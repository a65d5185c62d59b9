"""`ibcloud.dftree`, `simulate(controller="dftree")`, `ibcloud sim
--controller dftree` and `ibcloud reproduce dftree` (the algorithm itself
is tested in Rust: crates/ibcloud-netsim/src/dftree.rs and tests/dftree.rs)."""

from __future__ import annotations

import json

import pytest

import ibcloud
from ibcloud import Fabric
from ibcloud.cli.main import main
from ibcloud.dftree import config
from ibcloud.dftree import testbed as bed
from ibcloud.dftree import testbed_settings as bed_settings
from ibcloud.exceptions import SimulationError
from ibcloud.sim import simulate

EXP1 = "flow:src=H2,dst=H3;" + ";".join(f"flow:src={c},dst=H5,start=2ms" for c in ("H1", "H3", "H6"))


def test_exp1_victim_recovers_only_hot_spot_traffic_moves() -> None:
    t = bed("3a")
    base = simulate(t, EXP1, "6ms", **bed_settings())
    r = simulate(t, EXP1, "6ms", controller="dftree", dftree={"interval": "1ms"}, **bed_settings())
    assert base.gbps(0, "4ms") < 4.0 and r.gbps(0, "4ms") > 10.0
    marks = [e for e in r.dftree_events if e["kind"] == "mark"]
    assert marks and marks[0]["time"] == 3_000_000_000 and marks[0]["hotspot"] == 4
    traps = [e for e in r.dftree_events if e["kind"] == "trap"]
    assert {e["dst"] for e in traps} == {4} and {0, 2} <= {e["host"] for e in traps}
    # Giving only settings selects dFtree as well; no controller: no events.
    again = simulate(t, EXP1, "6ms", dftree={"interval": "1ms"}, **bed_settings())
    assert again.dftree_events == r.dftree_events
    assert base.dftree_events == []


def test_exactly_t_is_not_congested_in_simulation() -> None:
    t = bed("3a")
    r = simulate(t, EXP1, "4ms", controller="dftree", dftree={"interval": "1ms"}, **bed_settings())
    c = next(e["congestion"] for e in r.dftree_events if e["kind"] == "mark")
    # The same run with T equal to the congestion that triggered the mark
    # does not mark at that sweep.
    r2 = simulate(t, EXP1, "4ms", controller="dftree", dftree={"interval": "1ms", "threshold": c},
                  **bed_settings())
    assert not any(e["kind"] == "mark" and e["time"] == 3_000_000_000 and e["congestion"] == c
                   for e in r2.dftree_events)


def test_bad_settings_are_refused() -> None:
    t = bed("3a")
    with pytest.raises(SimulationError, match="unknown dftree option"):
        config(interva="1ms")
    with pytest.raises(SimulationError, match="must differ"):
        simulate(t, EXP1, "1ms", dftree={"slow_sl": 0}, **bed_settings())
    with pytest.raises(SimulationError, match="unknown controller"):
        simulate(t, EXP1, "1ms", controller="pftree")
    with pytest.raises(SimulationError, match="need controller='dftree'"):
        simulate(t, EXP1, "1ms", controller=lambda s: None, dftree={})
    # dFtree needs the slow lane's VL.
    with pytest.raises(SimulationError, match="VL"):
        simulate(t, EXP1, "1ms", controller="dftree", **bed_settings(vls=1))
    with pytest.raises(SimulationError, match="unknown testbed"):
        bed("3c")


def test_cli_sim_controller_dftree(capsys) -> None:
    args = ["sim", "4-ary-2-full", "--route", "ftree", "--traffic", "hotspot:hot=#0,load=3,size=2048",
            "--time", "2ms", "--vls", "2", "--sink-gbps", "20", "--controller", "dftree",
            "--dftree-interval", "500us", "--dftree-clear-sweeps", "2", "--flows", "0"]
    assert main(args + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    kinds = [e["kind"] for e in out["dftree_events"]]
    assert "mark" in kinds and "trap" in kinds
    assert main(args) == 0
    assert "dftree: 1 hot-spot marks" in capsys.readouterr().out
    one_vl = [a if a != "2" or args[i - 1] != "--vls" else "1" for i, a in enumerate(args)]
    assert main(one_vl) == 2  # one VL: no slow lane


def test_reproduce_dftree_testbed_part(tmp_path, capsys) -> None:
    status = main(["reproduce", "dftree", "--no-sim", "--no-rings", "--out", str(tmp_path), "--json"])
    out = json.loads(capsys.readouterr().out)
    verdicts = {c["id"]: c["verdict"] for c in out["checks"]}
    # Exp. III collapses to 3.23 Gb/s where the paper has 3.4 (±0.1): a prediction that misses, exit 1.
    assert status == 1 and verdicts["T1c"] == "shape only"
    assert [verdicts[k] for k in ("T1a", "T1b", "T1d", "T2c", "T2d")] == ["reproduced"] * 5
    assert verdicts["T2a"] == verdicts["T2b"] == "shape only" and verdicts["S1a"] == verdicts["R1a"] == "not run"
    rows = {r["experiment"]: r for r in out["testbed"]}
    assert rows["IV"]["victim_without"] < 2.6 and rows["IV"]["victim_with"] > 12.5
    assert (tmp_path / "victims.png").exists() and (tmp_path / "summary.json").exists()


def test_a_receive_limit_fitted_to_the_parking_lot_predicts_exp_iii() -> None:
    """docs/reproductions/dftree.md: with the sink at 13.6 Gb/s (fitted to the parking lot's 6.8, so P1
    turns calibration) Exp. III's collapse is S003's 3.4."""
    from ibcloud.dftree.reproduction import reproduce

    rep = reproduce(out=None, plots=False, rings=False, sim=False, testbed_sink=13.6)
    by = {c.id: c for c in rep.checks}
    assert by["P1"].verdict == "calibration" and by["P1"].passed
    assert by["T1c"].verdict == "reproduced" and by["T1d"].verdict == "shape only"
