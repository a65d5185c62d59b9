"""Workload delay of one host (Paper VI, Section IV), vectorised with numpy.

A host of capacity ``C`` cores receives demand ``d(t)`` (cores, averaged over
interval ``t`` of ``Δt`` minutes). Work it cannot serve waits and is served
first come, first served, as soon as there is room::

    q(t+1) = max{q(t) + d(t+1)·Δt − C·Δt, 0}    backlog in core-minutes, q(0) = 0
    w(t)   = q(t) / C                           current delay, wall-clock minutes
    Q      = Σ_t w(t) · Δt / 1 min              total delay (Eq. 1)

The recursion is Lindley's; with ``S(t)`` the running sum of
``(d − C)·Δt`` it is ``q(t) = S(t) − min(0, min_{s≤t} S(s))``: a cumulative sum
and a running minimum, no Python loop. Every function works on the last axis,
so a 2-D array holds one host per row.

Units (``unit=``): ``"wall_minutes"`` (default; the magnitudes of the paper's
tables match it, see docs/delay.md) reports ``w`` and ``Q`` as above;
``"core_minutes"`` reports ``q`` and ``Σ q·Δt`` (Eq. 1 read literally), ``C``
times larger. Backlog at or below :data:`BACKLOG_EPSILON` core-minutes per
minute of Δt counts as none (floating-point residue of a drained queue).

The Rust packers (:mod:`ibcloud.delay.packing`) run the same recursion as a
loop; the tests check that both agree.

>>> import numpy as np
>>> backlog([1.5, 1.0, 1.0, 1.0], capacity=1)          # Fig. 3, Case 2
array([0.5, 0.5, 0.5, 0.5])
>>> round(float(total_delay(np.full(1440, 15.6), capacity=12)), 6)  # 130 % of 12 cores, a day
311256.0
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Sequence, Tuple

import numpy as np

from ibcloud.delay.errors import DelayParameterError
from ibcloud.safeio import checked_ints

__all__ = [
    "BACKLOG_EPSILON",
    "UNITS",
    "DelayStats",
    "backlog",
    "current_delay",
    "delay_stats",
    "served",
    "total_delay",
]

#: Backlog (core-minutes per minute of Δt) at or below which the queue is empty.
BACKLOG_EPSILON = 1e-9

#: The delay units, default first.
UNITS = ("wall_minutes", "core_minutes")


def check_unit(unit: str) -> str:
    """The canonical unit name for ``unit`` (``wall``/``core`` accepted).

    >>> check_unit("core")
    'core_minutes'
    """
    aliases = {"wall": "wall_minutes", "core": "core_minutes", "wall-minutes": "wall_minutes",
               "core-minutes": "core_minutes"}
    name = aliases.get(unit, unit)
    if name not in UNITS:
        raise DelayParameterError(f"unknown delay unit '{unit}' (expected one of: {', '.join(UNITS)})")
    return name


def _check_host(capacity: float, interval_minutes: float) -> None:
    if not (np.isfinite(capacity) and capacity > 0):
        raise DelayParameterError(f"capacity = {capacity}: a host needs a positive number of cores")
    if not (np.isfinite(interval_minutes) and interval_minutes > 0):
        raise DelayParameterError(f"interval_minutes = {interval_minutes}: must be a positive number of minutes")


def backlog(demand, capacity: float, interval_minutes: float = 1.0) -> np.ndarray:
    """The backlog ``q(t)`` in core-minutes after each interval (last axis).

    >>> backlog([[2.0, 0.0, 1.0], [0.5, 0.5, 0.5]], capacity=1)
    array([[1., 0., 0.],
           [0., 0., 0.]])
    """
    _check_host(capacity, interval_minutes)
    d = np.asarray(demand, dtype=float)
    running = np.cumsum((d - capacity) * interval_minutes, axis=-1)
    lowest = np.minimum(np.minimum.accumulate(running, axis=-1), 0.0)
    q = running - lowest
    q[q <= BACKLOG_EPSILON * interval_minutes] = 0.0
    return q


def current_delay(demand, capacity: float, interval_minutes: float = 1.0, unit: str = "wall_minutes") -> np.ndarray:
    """The delay a request arriving in each interval sees: ``q/C`` minutes
    (or ``q`` core-minutes with ``unit="core_minutes"``).

    >>> current_delay([3.0, 2.0], capacity=2)
    array([0.5, 0.5])
    """
    q = backlog(demand, capacity, interval_minutes)
    return q / capacity if check_unit(unit) == "wall_minutes" else q


def total_delay(demand, capacity: float, interval_minutes: float = 1.0, unit: str = "wall_minutes"):
    """Total delay ``Q`` (Eq. 1) per host: the sum of the current delay over
    every minute (each interval counts ``Δt`` minutes).

    >>> float(total_delay([1.5] + [1.0] * 14, capacity=1))   # Case 2 over 15 minutes
    7.5
    """
    return current_delay(demand, capacity, interval_minutes, unit).sum(axis=-1) * interval_minutes


def served(demand, capacity: float, interval_minutes: float = 1.0) -> np.ndarray:
    """The work actually served per interval, in cores: ``min(C, q(t−1)/Δt + d(t))``.
    Above the demand while a backlog drains, never above ``C``.

    >>> served([2.0, 0.0, 0.5], capacity=1)
    array([1. , 1. , 0.5])
    """
    d = np.asarray(demand, dtype=float)
    q = backlog(d, capacity, interval_minutes)
    before = np.concatenate([np.zeros(d.shape[:-1] + (1,)), q[..., :-1]], axis=-1)
    return np.minimum(capacity, before / interval_minutes + d)


@dataclasses.dataclass(frozen=True)
class DelayStats:
    """What one host's demand did over a window (the per-bin columns of the
    paper's Tables I and II).

    >>> s = delay_stats([2.0, 0.0, 1.0, 1.0], capacity=1)
    >>> s.total_delay, s.max_delay, s.pct_delayed, s.filling(1)
    (1.0, 1.0, 25.0, 100.0)
    """

    total_delay: float
    """Total delay Q over the window."""
    max_delay: float
    """Largest current delay of any interval."""
    intervals: int
    """Intervals in the window."""
    delayed_intervals: int
    """Intervals that ended with a backlog, q(t) > 0."""
    mean_delay_when_delayed: float
    """Mean current delay over the delayed intervals (0 when none)."""
    mean_demand: float
    """Mean demand in cores."""
    delayed_demand_share: float
    """Share (0–1) of the demand volume that arrived in delayed intervals."""

    @property
    def pct_delayed(self) -> float:
        """Percentage of intervals with a backlog ("% of workload delayed").

        >>> delay_stats([1.5, 1.0], capacity=1).pct_delayed
        100.0
        """
        return 100.0 * self.delayed_intervals / self.intervals if self.intervals else 0.0

    def filling(self, cores: float) -> float:
        """Mean demand as a percentage of ``cores`` ("bin filling"; from
        demand, so above 100 % when the host is overloaded on average).

        >>> delay_stats([6.0, 18.0], capacity=12).filling(12)
        100.0
        """
        return 100.0 * self.mean_demand / cores


@checked_ints
def delay_stats(demand, capacity: float, interval_minutes: float = 1.0, unit: str = "wall_minutes",
                segments: Optional[Sequence[Tuple[int, int]]] = None) -> DelayStats:
    """:class:`DelayStats` of one host's demand series. ``segments`` (pairs
    ``(start, end)``) restrict it to parts of the series, each starting with an
    empty queue (a training window that skips the test day).

    >>> delay_stats([2.0, 1.0, 1.0, 1.0], capacity=1).total_delay
    4.0
    >>> delay_stats([2.0, 1.0, 1.0, 1.0], capacity=1, segments=[(0, 2), (2, 4)]).total_delay
    2.0
    """
    d = np.asarray(demand, dtype=float)
    if d.ndim != 1:
        raise DelayParameterError("delay_stats takes one host's series (a 1-D array)")
    unit = check_unit(unit)
    pieces = [d[a:b] for a, b in segments] if segments is not None else [d]
    w = np.concatenate([current_delay(p, capacity, interval_minutes, unit) for p in pieces])
    x = np.concatenate(pieces)
    delayed = w > 0
    n_delayed = int(delayed.sum())
    volume = float(x.sum())
    return DelayStats(
        total_delay=float(w.sum() * interval_minutes),
        max_delay=float(w.max(initial=0.0)),
        intervals=int(x.size),
        delayed_intervals=n_delayed,
        mean_delay_when_delayed=float(w[delayed].mean()) if n_delayed else 0.0,
        mean_demand=float(x.mean()) if x.size else 0.0,
        delayed_demand_share=float(x[delayed].sum() / volume) if volume > 0 else 0.0,
    )
