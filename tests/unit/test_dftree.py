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


def test_hpcc_loops_replay_the_benchmark_on_latency_samples() -> None:
    """HPCC's ping-pong and ring statistics (docs/reproductions/dftree.md, R2)."""
    from ibcloud.dftree import hpcc

    lat = {(a, b): [1.0] * 80 for a in range(3) for b in range(3) if a != b}
    lat[(0, 2)] = [1.0] * 79 + [50.0]  # one slow message: in the pair's last measurement only
    mn, avg, mx = hpcc.pingpong(lat, o=0.5)
    assert mn == mx == avg == 1.5  # HPCC keeps the best of 5 measurements per pair
    lat[(0, 2)] = [9.0] * 80  # a slow direction: its pairs average (9 + 1) / 2 + o
    mn, avg, mx = hpcc.pingpong(lat, o=0.5)
    assert (mn, mx) == (1.5, 5.5) and avg == pytest.approx((4 * 1.5 + 2 * 5.5) / 6)
    # Rings: one slow directed link holds up every process (the maximum over processes).
    fast = {p: [1.0] for p in lat}
    assert hpcc.ring([0, 1, 2], fast, o=0.0) == 0.5
    slow = {**fast, (0, 1): [5.0]}
    assert hpcc.ring([0, 1, 2], slow, o=0.0) > 1.5
    assert hpcc.random_rings(3, fast, o=1.0) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="no latency samples"):
        hpcc.ring([0, 1], {(0, 1): [], (1, 0): [1.0]}, o=0.0)


def test_probe_schedule_gives_each_host_one_probe_per_slot() -> None:
    from ibcloud.dftree.reproduction import probe_schedule

    s = probe_schedule(6)
    assert len(s) == 30 and len({(a, b) for a, b, _ in s}) == 30
    for j in range(5):
        slot = [(a, b) for a, b, k in s if k == j]
        assert sorted(a for a, _ in slot) == list(range(6)) and sorted(b for _, b in slot) == list(range(6))


def test_hpcc_latency_rows_on_the_testbed() -> None:
    """The probes see the hot-spot: without dFtree a message from a contributor waits behind its
    hot-spot packets; with dFtree only messages to the hot-spot itself do (slow lane)."""
    from ibcloud.dftree.reproduction import PAPER, hpcc_latency

    h = hpcc_latency("2ms", None)
    lat = h["table"]
    assert lat[("3b", False)]["min"] == pytest.approx(PAPER["latency"]["3b"]["min"][0])  # the calibration
    assert 1.0 < h["o_us"] < 2.0
    pm = h["pair_mean_us"]
    assert pm[("3a", False)]["H1->H2"] > 20 and pm[("3a", True)]["H1->H2"] < 2
    assert pm[("3a", True)]["H1->H5"] > 50  # to the hot-spot: behind the slow lane's queue
    for b in ("3a", "3b"):
        assert lat[(b, True)]["avg"] < lat[(b, False)]["avg"] / 2


def test_648_node_traffic_readings() -> None:
    from ibcloud.dftree.reproduction import READINGS648, Reading648, hotspots648, spec648

    assert hotspots648(9)[-1] == 576 and hotspots648(1) == [0]
    s = spec648(3, Reading648())
    # group hot-spots: node group 217-432 (#216-#431) sends 5 % of its messages to node 217 (#216)
    part = next(p for p in s.split(";") if "hot=#216" in p)
    assert "fraction=0.05" in part and "sources=#216|#217|" in part and part.count("#") == 217
    assert s.startswith("uniform:load=0.5000,size=2048,sources=#0|#216|#432")  # the hot-spots send uniformly
    assert "hot=#0|#216|#432" in spec648(3, Reading648(scope="global"))
    assert len({rd.label() for _, rd in READINGS648}) == len(READINGS648)


def test_pattern_backlog_limit_is_a_traffic_option() -> None:
    t = ibcloud.route(Fabric.generate("4-ary-2-full"), "ftree").tables
    spec = "hotspot:hot=#0,fraction=1,load=0.9,size=4096"
    few = simulate(t, spec + ",max-backlog=2", "200us")
    many = simulate(t, spec + ",max-backlog=100000", "200us")
    assert few.flows["refused_msgs"].sum() > 0 and many.flows["refused_msgs"].sum() == 0


def test_per_node_throughput_metrics_agree_on_uniform_traffic() -> None:
    """The two readings of "throughput per end node": payload delivered per node, and what each
    non-hot-spot node receives (PortRcvData, headers included: (2048 + 34) / 2048 more)."""
    from ibcloud.dftree.reproduction import per_node_gbps

    t = ibcloud.route(Fabric.generate("4-ary-2-full"), "ftree").tables
    r = simulate(t, "uniform:load=0.3,size=2048", "1ms")
    delivered = per_node_gbps(r, 0.2, 1.0, [0], "all")
    received = per_node_gbps(r, 0.2, 1.0, [0], "victims")
    assert 9.0 < delivered < 9.6 and received == pytest.approx(delivered * 2082 / 2048, rel=0.03)
    assert per_node_gbps(r, 0.0, 1.0, [], "victims") > 9.0  # from time 0: counters start at zero
