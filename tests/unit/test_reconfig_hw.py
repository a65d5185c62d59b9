"""Paper IV's hardware results on the packet simulator (ibcloud.reconfig_hw):
the benchmark models, the calibration and the judging. About 10 s; the
scoreboard at the default size is asserted in test_scoreboard_defaults.py."""

from __future__ import annotations

import copy
import itertools

import pytest

from ibcloud import route
from ibcloud.reconfig_hw import (
    CASES,
    JUDGED_SHUTDOWN,
    PAPER,
    Net,
    _times_many,
    calibrate,
    checks,
    ebb_raw,
    matchings,
    pingpong,
    paper_result,
    pingpong_fast,
    ring,
    shutdown_class,
    topology_a,
    topology_b,
)


def test_matchings_are_every_perfect_matching_once():
    ms = matchings(range(6))
    assert len(ms) == 15 and len({tuple(sorted(m)) for m in ms}) == 15
    for m in ms:
        assert sorted(x for pair in m for x in pair) == list(range(6))
    with pytest.raises(ValueError):
        matchings(range(5))


def test_topology_a_paths_and_shutdown_classes():
    net = Net(topology_a())
    t = route(net.fabric, "ftree").tables
    assert net.leaves == [[1, 2, 3, 4], [5, 6, 7, 8]]
    assert len(net.path(t, 1, 2)) == 1 and len(net.path(t, 1, 8)) == 3
    classes = {(u, v): shutdown_class(net, t, u, v) for u, v in itertools.combinations(net.ranks, 2)}
    judged = sorted(p for p, c in classes.items() if c.startswith(JUDGED_SHUTDOWN))
    assert judged == [(1, 3), (2, 4), (5, 7), (6, 8)]
    # ftree alternates the roots by port: the judged pairs went up through one root, the others did not
    assert all(classes[p].endswith("(same root)") for p in judged)
    assert classes[(1, 2)].endswith("(different roots)") and classes[(1, 4)].endswith("(different roots)")


def test_times_follow_the_host_cap_and_link_sharing():
    net = Net(topology_a())
    t = route(net.fabric, "ftree").tables
    mib = 1 << 20
    alone = _times_many(net, t, [[(1, 5, mib, 0)]], 2000.0)[0][0]
    assert abs(alone - mib / 2000.0) < 5  # paced at the cap (the first packet leaves at once), a few µs of pipeline
    # two senders into one destination share its link: each takes about twice as long
    both = _times_many(net, t, [[(1, 5, mib, 0), (6, 5, mib, 0)]], None)[0]
    single = _times_many(net, t, [[(1, 5, mib, 0)]], None)[0][0]
    assert min(both) > 1.8 * single


def test_ebb_sees_shared_roots():
    net = Net(topology_a())
    t = route(net.fabric, "ftree").tables
    kib = 256 * 1024
    local = ebb_raw(net, t, net.ranks, [[(1, 2), (3, 4), (5, 6), (7, 8)]], 3800.0, kib)["ebb"]
    # 1 and 3 go down through one root (alternate ports): the pairs (5, 1) and (7, 3) share it both ways
    shared = ebb_raw(net, t, net.ranks, [[(5, 1), (7, 3), (2, 4), (6, 8)]], 3800.0, kib)["ebb"]
    spread = ebb_raw(net, t, net.ranks, [[(5, 1), (6, 2), (3, 4), (7, 8)]], 3800.0, kib)["ebb"]
    assert local > 3700 and spread > 3700
    assert shared < 0.8 * local


def test_ring_is_hpccs_better_of_two_implementations():
    net = Net(topology_b(), stale=1)
    t = route(net.fabric, "ftree").tables
    r = ring(net, t, [net.ranks, [1, 5, 2, 6, 3, 7, 4, 8]], 3800.0, 1.0, 250_000)
    assert 0.9 * 3800 < r["natural_mbps"] < 3800
    assert r["random_mbps"] <= r["natural_mbps"]
    # the judged value is never below either implementation alone
    assert r["random_mbps"] >= max(r["sendrecv_random_mbps"], r["nonblocking_random_mbps"]) - 1e-9


def test_pingpong_on_one_pair_per_path_length_equals_every_pair():
    net = Net(topology_b(), stale=1)
    t = route(net.fabric, "ftree").tables
    every, fast = pingpong(net, t, net.ranks, 3800.0, 1.0), pingpong_fast(net, t, net.ranks, 3800.0, 1.0)
    assert abs(every["max_latency_us"] - fast["max_latency_us"]) < 1e-9
    assert abs(every["min_bandwidth_mbps"] - fast["min_bandwidth_mbps"]) < 1e-6


def test_calibration_hits_table_1():
    cal = calibrate()
    assert abs(cal["pingpong_mbps"] - 3856.83) <= 0.01
    assert abs(cal["pingpong_latency_us"] - 1.699) <= 0.001
    assert cal["host_mbps"] > cal["pingpong_mbps"] and 0 < cal["overhead_us"] < 1.699


def _paper_like():
    """A result with the paper's own values (what a perfect model returns)."""
    return paper_result()


def test_judging_the_papers_own_values():
    verdicts = {c.id: c.verdict for c in checks(_paper_like())}
    assert verdicts["HW0"] == verdicts["HW1"] == verdicts["HW16"] == "calibration"
    # HW2 is a construction: by symmetry SlimUpdate's first run is HW1's calibrated FTree value
    assert verdicts["HW2"] == "construction"
    for cid in ("HW3", "HW4", "HW5", "HW6", "HW7", "HW8", "HW9", "HW10", "HW11", "HW12", "HW13a", "HW13b",
                "HW13c", "HW13d", "HW17", "HW18"):
        assert verdicts[cid] == "reproduced", cid
    # the paper's own table gives +9.6 %, outside "≈ 9 %" (8.5-9.5 %): the text and the table disagree
    assert verdicts["HW14"] == "shape only"
    # qualitative rows that hold are "shape only", never reproduced
    assert verdicts["HW15"] == "shape only" and verdicts["HW19"] == "shape only"


def test_judging_fails_outside_tolerance_and_checks_direction():
    hw = _paper_like()
    hw["a"]["judged"]["ebb_ftree"] = 2475.0  # two units off: outside ±1, still below the full tree
    hw["a"]["judged"]["ebb_slim"] = 2400.0  # below FTree: the direction fails
    hw["b"]["cases"]["slim_fault"]["alltoall_us"] = 710.0
    by = {c.id: c for c in checks(hw)}
    assert by["HW3"].verdict == "shape only"
    assert by["HW4"].verdict == "not reproduced"
    assert by["HW19"].verdict == "not reproduced"
    worse = copy.deepcopy(_paper_like())
    worse["b"]["cases"]["ftree_fault"]["random_ring_mbps"] = 2703.0  # the fault no longer hurts FTree
    assert {c.id: c.verdict for c in checks(worse)}["HW15"] == "not reproduced"


def test_plot_and_table_of_ours_beside_the_papers(tmp_path):
    from ibcloud.reconfig_hw import plot, table_rows

    hw = _paper_like()
    rows = table_rows(hw)
    assert len(rows) == 28 and all(abs(r["difference_pct"]) < 1e-9 for r in rows)
    plot(hw, tmp_path)
    assert (tmp_path / "hw_paper_iv.png").stat().st_size > 10_000
    kinds = {(r["figure"], r["case"], r["metric"]): r["kind"] for r in rows}
    assert [k for k, v in kinds.items() if v == "calibration"] == [
        ("Fig. 3a", "A full tree, FTree", "EBB 1 MiB (MB/s)"), ("Table 1", "B FTree, no fault", "pingpong_mbps (MB/s)"),
        ("Table 1", "B FTree, no fault", "pingpong_latency_us (µs)")]
