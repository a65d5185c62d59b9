"""The delay kernel: Paper VI's worked examples, the closed form against the
recursion, units and sampling intervals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibcloud.delay import DelayParameterError, backlog, current_delay, delay_stats, served, total_delay


def lindley(demand, capacity, dt=1.0):
    """The recursion as the paper writes it, one step at a time (core-minutes)."""
    q, out = 0.0, []
    for d in demand:
        q = max(q + d * dt - capacity * dt, 0.0)
        out.append(q)
    return np.array(out)


def test_fig3_case1_constant_demand_at_capacity_has_no_delay():
    assert total_delay([1.0] * 15, capacity=1) == 0.0


def test_fig3_case2_a_spike_delays_everything_after_it_by_half_a_minute():
    demand = [1.5] + [1.0] * 14
    assert current_delay(demand, capacity=1).tolist() == [0.5] * 15
    assert total_delay(demand, capacity=1) == pytest.approx(0.5 * 15)


def test_fig3_case3_less_total_but_a_higher_peak_than_case2():
    case2 = delay_stats([1.5] + [1.0] * 14, capacity=1)
    case3 = delay_stats([2.0, 0.0, 1.0, 1.0, 1.0] * 3, capacity=1)
    assert case3.total_delay < case2.total_delay and case3.max_delay > case2.max_delay


@pytest.mark.parametrize("rho", [1.1, 1.3, 2.0])
def test_constant_overload_has_the_closed_form(rho):
    t = 1440
    assert total_delay(np.full(t, 12 * rho), capacity=12) == pytest.approx((rho - 1) * t * (t + 1) / 2, rel=1e-9)


def test_table_i_magnitude_supports_wall_clock_minutes():
    # A host at 130 % all day: ~311,000 wall-minutes (Table I's maximum is
    # 293,551), but 12 times that in core-minutes.
    day = np.full(1440, 15.6)
    assert total_delay(day, 12) == pytest.approx(311_256, rel=1e-9)
    assert total_delay(day, 12, unit="core_minutes") == pytest.approx(12 * 311_256, rel=1e-9)


def test_five_minute_samples_count_every_minute():
    # 30 % over capacity for one 5-minute interval, then at capacity: every
    # later request waits 1.5 min, and each interval counts five minutes.
    s = delay_stats([1.3, 1.0, 1.0], capacity=1, interval_minutes=5)
    assert s.max_delay == pytest.approx(1.5)
    assert s.total_delay == pytest.approx(3 * 1.5 * 5)
    assert s.pct_delayed == 100.0


def test_served_work_exceeds_demand_while_a_backlog_drains_and_never_the_capacity():
    demand = np.array([20.0, 5.0, 5.0, 5.0, 13.0])
    out = served(demand, capacity=12)
    assert out.max() <= 12
    assert out[1] > demand[1]
    assert out.sum() == pytest.approx(demand.sum() - backlog(demand, 12)[-1])  # nothing lost, nothing invented


def test_rows_are_hosts():
    demand = np.array([[2.0, 0.0], [0.5, 0.5]])
    assert total_delay(demand, capacity=1).tolist() == [1.0, 0.0]


def test_segments_restart_with_an_empty_queue():
    assert delay_stats([2.0, 1.0, 1.0, 1.0], capacity=1, segments=[(0, 2), (2, 4)]).total_delay == 2.0


def test_conditional_statistics():
    s = delay_stats([3.0, 1.0, 0.0, 1.0], capacity=2)  # backlog 1, 0, 0, 0 core-min
    assert (s.delayed_intervals, s.mean_delay_when_delayed, s.max_delay) == (1, 0.5, 0.5)
    assert s.delayed_demand_share == pytest.approx(3.0 / 5.0)
    assert s.filling(2) == pytest.approx(62.5)


@pytest.mark.parametrize("kwargs", [{"capacity": 0}, {"capacity": -1}, {"capacity": 1, "interval_minutes": 0},
                                    {"capacity": 1, "unit": "seconds"}])
def test_bad_parameters(kwargs):
    with pytest.raises(DelayParameterError):
        total_delay([1.0], **kwargs)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(0, 40, allow_nan=False), min_size=1, max_size=200), st.floats(0.5, 32),
       st.sampled_from([1.0, 5.0]))
def test_closed_form_matches_the_recursion(demand, capacity, dt):
    expected = lindley(demand, capacity, dt)
    got = backlog(demand, capacity, dt)
    assert np.allclose(got, expected, rtol=1e-9, atol=1e-6)
    assert total_delay(demand, capacity, dt) == pytest.approx((expected / capacity).sum() * dt, rel=1e-9, abs=1e-6)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 20, allow_nan=False), min_size=1, max_size=100), st.floats(0.5, 16),
       st.floats(0, 5))
def test_more_demand_never_means_less_delay(demand, capacity, extra):
    more = np.asarray(demand) + extra
    assert total_delay(more, capacity) >= total_delay(demand, capacity) - 1e-9
