"""The Rust packers against a plain Python transcription of Paper VI's
algorithms, and their documented rules (ties, equality, lonely VMs, units)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibcloud.delay import (DelayParameterError, PackingSpec, Trace, consolidate, delay_stats, run_packings,
                           synthetic_trace)


def ref_pack(cpu, segments, cores, theta, limit=None, fit="best", dt=1.0):
    """Best/first-fit decreasing as the paper describes it: sort by mean,
    admit by mean ≤ θK (and, with a limit, total delay at θK ≤ limit)."""
    capacity = cores * theta
    window = np.concatenate([cpu[:, a:b] for a, b in segments], axis=1)
    lengths = [b - a for a, b in segments]
    means = window.sum(axis=1) / window.shape[1]
    order = sorted(range(cpu.shape[0]), key=lambda v: -means[v])
    raw_limit = None if limit is None else limit / ((dt / capacity) * dt)

    def sum_r(series):
        total, start = 0.0, 0
        for n in lengths:
            r = 0.0
            for x in series[start:start + n]:
                r = max(r + (x - capacity), 0.0)
                total += r
            start += n
        return total

    bins = []  # [members, load, series]
    for vm in order:
        candidates = [i for i, b in enumerate(bins) if b[1] + means[vm] <= capacity]
        if fit == "best":
            candidates.sort(key=lambda i: -bins[i][1])
        chosen = None
        for i in candidates:
            if raw_limit is None or sum_r(bins[i][2] + window[vm]) <= raw_limit:
                chosen = i
                break
        if chosen is None:
            bins.append([[vm], means[vm], window[vm].copy()])
        else:
            bins[chosen][0].append(vm)
            bins[chosen][1] += means[vm]
            bins[chosen][2] = bins[chosen][2] + window[vm]
    return [b[0] for b in bins]


def trace_of(cpu, vcpus=None):
    cpu = np.asarray(cpu, dtype=float)
    vcpus = vcpus if vcpus is not None else [int(np.ceil(max(row.max(), 1)))for row in cpu]
    return Trace(cpu, vcpus)


# Multiples of 1/8: every sum is exact, so the reference and the Rust core
# must take the same decisions even at ties.
eighths = st.integers(0, 24).map(lambda k: k / 8)


@st.composite
def small_traces(draw):
    n_vms = draw(st.integers(1, 9))
    n = draw(st.integers(2, 40))
    cpu = np.array([[draw(eighths) for _ in range(n)] for _ in range(n_vms)])
    cut = draw(st.integers(1, n - 1))
    segments = [(0, cut), (cut, n)] if draw(st.booleans()) else [(0, n)]
    return cpu, segments


@settings(max_examples=120, deadline=None)
@given(small_traces(), st.sampled_from([2, 4]), st.sampled_from([0.5, 0.75, 1.0]),
       st.sampled_from([None, 0.0, 0.25, 2.0, 50.0]), st.sampled_from(["best", "first"]))
def test_rust_packers_match_the_reference(case, cores, theta, limit, fit):
    cpu, segments = case
    trace = trace_of(cpu)
    window_minutes = sum(b - a for a, b in segments)
    by = "utilisation" if limit is None else "delay"
    cap = None if limit is None else limit * 1440 / window_minutes  # per day, so that cap × days ≈ limit
    spec = PackingSpec(by, cores, theta * 100, cap, fit)
    got = run_packings(trace, [(spec, segments, [(0, cpu.shape[1])])])[0]
    effective = None if cap is None else float(cap) * (window_minutes * 1.0 / 1440)  # as run_packings computes it
    expected = ref_pack(cpu, segments, cores, theta, effective, fit)
    assert [h.vms for h in got.hosts] == expected
    for host in got.hosts:
        whole = delay_stats(cpu[host.vms].sum(axis=0), capacity=cores)
        assert host.stats.total_delay == pytest.approx(whole.total_delay, rel=1e-9, abs=1e-9)
        assert host.stats.delayed_intervals == whole.delayed_intervals
        assert host.stats.mean_demand == pytest.approx(whole.mean_demand)


def test_delay_packing_keeps_coinciding_bursts_apart():
    # Two VMs that both fit on average but burst in the same minute.
    cpu = [[2.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]]
    util = consolidate(trace_of(cpu), by="utilisation", threshold=100, cores=2)
    delay = consolidate(trace_of(cpu), by="delay", cap=0, threshold=100, cores=2)
    assert [h.vms for h in util.hosts] == [[0, 1, 2]]
    assert [h.vms for h in delay.hosts] == [[0, 2], [1]]
    assert all(h.stats.total_delay == 0 for h in delay.hosts)


def test_a_vm_that_alone_breaks_the_cap_stays_alone():
    cpu = [[3.0] * 10, [0.5] * 10, [0.5] * 10]
    c = consolidate(trace_of(cpu), by="delay", cap=0, threshold=100, cores=2)
    assert [h.vms for h in c.hosts] == [[0], [1, 2]]
    assert c.hosts[0].packing_delay > 0


def test_equal_means_keep_trace_order_and_equal_fill_is_accepted():
    cpu = [[1.0], [3.0], [1.0], [3.0]]
    c = consolidate(trace_of(cpu, [4] * 4), by="utilisation", threshold=100, cores=4)
    assert [h.vms for h in c.hosts] == [[1, 0], [3, 2]]


def test_threshold_is_the_packing_capacity_and_full_cores_judge():
    cpu = [[1.0, 1.0, 1.0, 1.0], [0.6, 0.6, 0.6, 0.6]]
    c = consolidate(trace_of(cpu), by="utilisation", threshold=50, cores=2)
    assert len(c.hosts) == 2  # 1.0 + 0.6 > 1.0 = 50 % of 2 cores


def test_units_scale_by_the_capacity():
    trace = synthetic_trace(seed=2, n_vms=30, days=1)
    wall = consolidate(trace, by="utilisation", threshold=100, cores=4)
    core = consolidate(trace, by="utilisation", threshold=100, cores=4, unit="core_minutes")
    assert [h.vms for h in wall.hosts] == [h.vms for h in core.hosts]
    for a, b in zip(wall.hosts, core.hosts):
        assert b.stats.total_delay == pytest.approx(4 * a.stats.total_delay)


def test_the_cap_is_per_day_of_the_packing_window():
    trace = synthetic_trace(seed=4, n_vms=60, days=3)
    c = consolidate(trace, by="delay", cap=10, threshold=100, cores=12, pack_days=[0, 1], eval_days=[2])
    assert c.eval_days == 1
    assert all(h.packing_delay <= 20 + 1e-9 for h in c.hosts if len(h.vms) > 1)


def test_same_seed_same_result():
    def once():
        trace = synthetic_trace(seed=9, n_vms=50, days=2)
        c = consolidate(trace, by="delay", cap=5, threshold=90, cores=12, pack_days=[0], eval_days=[1])
        return [(h.vms, h.stats.total_delay) for h in c.hosts]

    assert once() == once()


@pytest.mark.parametrize("kwargs, message", [
    ({"by": "delay", "cap": None}, "needs a cap"),
    ({"by": "delay", "cap": -1}, "cap = -1"),
    ({"by": "utilisation", "threshold": 0}, "threshold = 0"),
    ({"by": "utilisation", "threshold": 120}, "threshold = 120"),
    ({"by": "utilisation", "cores": 0}, "cores = 0"),
    ({"by": "utilisation", "fit": "worst"}, "unknown fit rule"),
    ({"by": "size"}, "unknown packing criterion"),
    ({"by": "utilisation", "pack_days": [5]}, "day 5 is not one of the 1 whole days"),
])
def test_bad_parameters_are_refused(kwargs, message):
    trace = synthetic_trace(seed=1, n_vms=5, days=1)
    with pytest.raises(DelayParameterError, match=message):
        consolidate(trace, **kwargs)
