"""NPB Table 2 on the packet simulator (ibcloud.pftree.npb): the skeletons'
arithmetic against the NPB 3.x sizes, the placement, the noise draws, the
calibration arithmetic, bad input, and one small simulated run (≈ 2 s)."""

from __future__ import annotations

import math
import random

import pytest

from ibcloud.pftree import npb


def _step(steps, name):
    return next(s for s in steps if s.name == name)


def test_ft_is_one_all_to_all_per_fft_with_the_class_volume():
    for cls, (points, iters) in {"A": (256 * 256 * 128, 6), "B": (512 * 256 * 256, 20),
                                 "C": (512 ** 3, 20)}.items():
        a2a = _step(npb.skeleton("ft", cls), "alltoall")
        assert a2a.count == iters + 1
        assert len(a2a.messages) == 16 * 15
        assert {b for _, _, b in a2a.messages} == {points * 16 // 256}
        # 4 ranks per node: each node pair carries 16 rank pairs.
        m = npb.node_matrix(a2a)
        assert len(m) == 12 and set(m.values()) == {16 * points * 16 // 256}


def test_cg_transpose_partners_and_row_steps_stay_on_a_node_by_slot():
    steps = npb.skeleton("cg", "B")
    tr = _step(steps, "transpose")
    assert tr.count == 75 * 26
    pairs = {(s, d) for s, d, _ in tr.messages}
    assert (1, 4) in pairs and (4, 1) in pairs and all((r, r) not in pairs for r in range(16))
    assert {b for _, _, b in tr.messages} == {75000 // 4 * 8}
    for s in steps:
        if s.name.startswith(("row-sum", "dot-allreduce")):
            assert npb.node_matrix(s) == {}, s.name  # a process row is one node's four ranks
            assert npb.node_matrix(s, placement="cyclic") != {}
    # transpose: one message per ordered node pair.
    assert npb.node_matrix(tr) == {(i, j): 150000 for i in range(4) for j in range(4) if i != j}


def test_is_mg_and_ep_steps():
    st = npb.skeleton("is", "C")
    assert {b for _, _, b in _step(st, "key-alltoallv").messages} == {(1 << 27) * 4 // 256}
    assert [s.name for s in st if s.name.startswith("bucket")] == [f"bucket-allreduce[{k}]" for k in range(4)]
    assert all(s.count == 10 for s in st)
    # recursive doubling: steps 0 and 1 inside a node, 2 and 3 across nodes.
    assert npb.node_matrix(_step(st, "bucket-allreduce[1]")) == {}
    assert npb.node_matrix(_step(st, "bucket-allreduce[2]")) == {(0, 1): 16384, (1, 0): 16384, (2, 3): 16384,
                                                               (3, 2): 16384}
    mg = npb.skeleton("mg", "A")
    # 2 x 2 x 4 grid: only axis 3 leaves the node; the finest level's face is (128 + 2)^2 doubles.
    top = [s for s in mg if s.name.startswith("comm3-L8-")]
    assert [s.name for s in top] == ["comm3-L8-axis1", "comm3-L8-axis2", "comm3-L8-axis3"]
    assert npb.node_matrix(top[0]) == {} and npb.node_matrix(top[1]) == {}
    m = npb.node_matrix(top[2])
    assert m[(0, 1)] == 4 * 130 * 130 * 8 and (0, 2) not in m and top[2].count == 3 * 4
    assert [s.count for s in mg if s.name.startswith("comm3-L1-")] == [2 * 4] * 3
    ep = npb.skeleton("ep", "C")
    assert len(ep) == 12 and sum(len(npb.node_matrix(s)) > 0 for s in ep) == 6


def test_bad_input_is_refused_clearly():
    with pytest.raises(ValueError, match="unknown NPB kernel 'bt'"):
        npb.skeleton("bt", "A")
    with pytest.raises(ValueError, match="unknown NPB class 'S'"):
        npb.skeleton("cg", "S")
    with pytest.raises(ValueError, match="power of two"):
        npb.skeleton("ft", "A", ranks=12)
    with pytest.raises(ValueError, match="unknown placement"):
        npb.node_matrix(npb.skeleton("ft", "A")[0], placement="x")
    with pytest.raises(ValueError, match="draws must be at least 1"):
        npb.run(draws=0)
    with pytest.raises(ValueError, match="cap must be at least 1024"):
        npb.run(cap=10)
    with pytest.raises(ValueError, match="app_port must be 0-2"):
        npb.run(app_port=3)
    with pytest.raises(ValueError, match="noise_partitions must be 1 or 2"):
        npb.run(noise_partitions=3)
    with pytest.raises(ValueError, match="unknown reading 'ftree'"):
        npb.run(readings=["ftree"])


def test_noise_stays_inside_each_partition():
    groups = [[1, 2, 3, 4], [5, 6, 7, 8]]
    for seed in range(20):
        fl = npb.noise_flows(groups, random.Random(seed))
        assert [s for s, _ in fl] == [1, 2, 3, 4, 5, 6, 7, 8]
        assert all(s != d and (s <= 4) == (d <= 4) for s, d in fl)


def test_predict_fits_compute_to_the_ext_column_and_refuses_an_impossible_fit():
    comm = [{"kernel": "cg", "class": "A", "reading": "pftree-ext", "draw": d, "comm_s": x} for d, x in
            enumerate((0.01, 0.03))]
    comm += [{"kernel": "cg", "class": "A", "reading": "pftree", "draw": 0, "comm_s": 0.05},
             {"kernel": "ft", "class": "A", "reading": "pftree-ext", "draw": 0, "comm_s": 1.0},
             {"kernel": "ft", "class": "A", "reading": "pftree", "draw": 0, "comm_s": 2.0}]
    rows = {r["kernel"]: r for r in npb.predict(comm)}
    cg = rows["cg"]
    assert cg["comm_ext_s"] == pytest.approx(0.02) and cg["compute_s"] == pytest.approx(0.12)
    assert cg["pftree_s"] == pytest.approx(0.17) and cg["saving_pct"] == pytest.approx(100 * (1 - 0.14 / 0.17))
    assert cg["slowdown"] == pytest.approx(2.5)
    assert cg["implied_comm_ext_s"] == pytest.approx((0.228 - 0.140) / 1.5)
    # our -Ext communication (1 s) above the paper's FT A time (0.712 s): no fit, no prediction
    assert rows["ft"]["compute_s"] < 0 and math.isnan(rows["ft"]["pftree_s"]) and math.isnan(rows["ft"]["saving_pct"])


def test_a_small_run_shares_links_under_pftree_only_and_slows_is_there():
    r = npb.run(draws=1, kernels=["is"], classes=["A"], cap=1 << 16, readings=["pftree", "pftree-ext",
                                                                               "pftree one noise partition"])
    assert r["app_links_shared"] == {"pftree": 8, "pftree-ext": 0, "pftree one noise partition": 0}
    assert r["vls"][0] != r["vls"][1]  # pFTree puts the sharing partitions on separate VLs
    comm = {c["reading"]: c["comm_s"] for c in r["comm"]}
    assert comm["pftree"] > 1.5 * comm["pftree-ext"]
    assert comm["pftree one noise partition"] == pytest.approx(comm["pftree-ext"], rel=1e-6)
    keys = [s for s in r["steps"] if s["step"] == "key-alltoallv"]
    assert all(s["extrapolated"] for s in keys) and all(s["max_node_pair_bytes"] == 1 << 21 for s in keys)


def test_fig7_no_reading_of_the_vl_arbitration_tables_separates_phase_2_from_phase_3():
    from ibcloud.pftree import testbed

    r = testbed.arbitration_readings()
    assert set(r) == set(testbed.ARBITRATION)
    for label, rates in r.items():
        if not label.startswith("interferers"):
            assert abs(rates[1] - rates[2]) < 5, label  # the victim alone on its VL: same share with 1 or 2 flows
    assert r["equal weights (judged)"][1] == pytest.approx(r["OpenSM QoS defaults (high 0:4, low 1-3:4, limit 0)"][1],
                                                           abs=5)
    assert r["victim VL weighted 2:1"][1] > r["equal weights (judged)"][1] > r["victim VL weighted 1:2"][1]
    assert r["victim VL high priority, unlimited"][2] == pytest.approx(r["victim VL high priority, unlimited"][0], abs=5)


@pytest.mark.parametrize("placement", ["block", "cyclic"])
def test_every_skeleton_is_well_formed_and_node_bytes_are_conserved(placement):
    for kernel in npb.KERNELS:
        for cls in npb.CLASSES:
            steps = npb.skeleton(kernel, cls)
            assert steps and all(s.count >= 1 and s.messages for s in steps), (kernel, cls)
            for s in steps:
                assert all(0 <= a < 16 and 0 <= b < 16 and a != b and n > 0 for a, b, n in s.messages), s.name
                per = 4
                inter = sum(n for a, b, n in s.messages if ((a // per != b // per) if placement == "block"
                                                            else (a % per != b % per)))
                assert sum(npb.node_matrix(s, placement=placement).values()) == inter, s.name
