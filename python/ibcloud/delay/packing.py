"""Consolidating VMs onto hosts by utilisation or by delay (Paper VI,
Section V), packed on some days and judged on others.

Both packers sort the VMs by mean demand over the packing days (descending;
ties keep trace order) and place them one by one on hosts of ``cores`` cores
filled as if they had ``threshold`` % of them:

* ``by="utilisation"``: a host accepts a VM while the sum of mean demands
  stays ≤ threshold × cores (equality allowed);
* ``by="delay"``: the same test, and the host's total delay over the packing
  days at threshold × cores stays ≤ ``cap`` minutes per day × packing days.

``fit="best"`` (default) puts the VM on the fullest accepting host (ties: the
earliest opened), ``fit="first"`` on the earliest opened. A VM no host
accepts opens a new host, and stays alone there if it alone breaks the test.
Every host is then evaluated on the evaluation days at its **full** capacity.
The packers run in Rust (``ibcloud-cloud``), all jobs of a call in parallel.

>>> from ibcloud.delay import synthetic_trace
>>> trace = synthetic_trace(seed=1, n_vms=40, days=2)
>>> c = consolidate(trace, by="delay", cap=10, threshold=100, cores=16, pack_days=[0], eval_days=[1])
>>> len(c.hosts) >= 1, c.spec.label()
(True, 'delay ≤ 10 min/day, θ = 100 %, 16 cores')
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from ibcloud import _native
from ibcloud.delay.errors import DelayParameterError
from ibcloud.delay.kernel import DelayStats, check_unit
from ibcloud.delay.trace import MINUTES_PER_DAY, Trace
from ibcloud.safeio import checked_ints

__all__ = ["Consolidation", "Host", "PackingSpec", "consolidate", "run_packings", "segments_of_days"]

METHODS = ("utilisation", "delay")
FITS = ("best", "first")

Segments = List[Tuple[int, int]]


@dataclasses.dataclass(frozen=True)
class PackingSpec:
    """One packing's parameters, checked on creation.

    >>> PackingSpec("utilisation", cores=12, threshold=70).label()
    'utilisation θ = 70 %, 12 cores'
    >>> PackingSpec("delay", cores=12, threshold=70)
    Traceback (most recent call last):
    ...
    ibcloud.delay.errors.DelayParameterError: packing by delay needs a cap (accepted delay in minutes per day)
    """

    by: str
    """``"utilisation"`` or ``"delay"``."""
    cores: float
    """Cores per host, K."""
    threshold: float
    """Fill threshold θ in percent (0 < θ ≤ 100)."""
    cap: Optional[float] = None
    """Accepted total delay per host, minutes per day (``by="delay"`` only)."""
    fit: str = "best"
    """``"best"`` or ``"first"``."""
    unit: str = "wall_minutes"
    """Delay unit of the cap and of the results."""

    def __post_init__(self) -> None:
        aliases = {"utilization": "utilisation", "util": "utilisation"}
        object.__setattr__(self, "by", aliases.get(self.by, self.by))
        if self.by not in METHODS:
            raise DelayParameterError(f"unknown packing criterion '{self.by}' (expected one of: {', '.join(METHODS)})")
        if not (np.isfinite(self.cores) and self.cores > 0):
            raise DelayParameterError(f"cores = {self.cores}: hosts need a positive number of cores")
        if not (np.isfinite(self.threshold) and 0 < self.threshold <= 100):
            raise DelayParameterError(f"threshold = {self.threshold} %: the fill threshold must be in (0, 100]")
        if self.fit not in FITS:
            raise DelayParameterError(f"unknown fit rule '{self.fit}' (expected one of: {', '.join(FITS)})")
        object.__setattr__(self, "unit", check_unit(self.unit))
        if self.by == "delay":
            if self.cap is None:
                raise DelayParameterError("packing by delay needs a cap (accepted delay in minutes per day)")
            if not (np.isfinite(self.cap) and self.cap >= 0):
                raise DelayParameterError(f"cap = {self.cap}: the accepted delay is a number of minutes per day ≥ 0")

    def label(self) -> str:
        """A short human-readable name.

        >>> PackingSpec("delay", 32, 90, cap=1).label()
        'delay ≤ 1 min/day, θ = 90 %, 32 cores'
        """
        cores = f"{self.cores:g} cores"
        if self.by == "utilisation":
            return f"utilisation θ = {self.threshold:g} %, {cores}"
        unit = "min/day" if self.unit == "wall_minutes" else "core-min/day"
        return f"delay ≤ {self.cap:g} {unit}, θ = {self.threshold:g} %, {cores}"

    def as_dict(self) -> Dict[str, Any]:
        """JSON-ready form.

        >>> PackingSpec("utilisation", 12, 70).as_dict()["threshold"]
        70
        """
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Host:
    """One host (bin) of a consolidation.

    >>> from ibcloud.delay.kernel import delay_stats
    >>> h = Host(vms=[0, 3], load=6.0, packing_delay=0.0, stats=delay_stats([6.0, 6.0], capacity=12))
    >>> h.filling(12)
    50.0
    """

    vms: List[int]
    """Trace row indices of its VMs, in placement order."""
    load: float
    """Sum of the VMs' mean demand over the packing days, cores."""
    packing_delay: float
    """Total delay over the packing days at threshold × cores (what the packer
    saw; NaN for utilisation packings run without packing delays)."""
    stats: DelayStats
    """Delay statistics over the evaluation days at full capacity."""

    def filling(self, cores: float) -> float:
        """Mean demand over the evaluation days in percent of ``cores``.

        >>> from ibcloud.delay.kernel import delay_stats
        >>> Host([0], 1.0, 0.0, delay_stats([3.0], capacity=12)).filling(12)
        25.0
        """
        return self.stats.filling(cores)


@dataclasses.dataclass(frozen=True)
class Consolidation:
    """A packing and the evaluation of each of its hosts.

    >>> from ibcloud.delay import synthetic_trace
    >>> c = consolidate(synthetic_trace(seed=2, n_vms=30, days=1), by="utilisation", threshold=80, cores=12)
    >>> sum(len(h.vms) for h in c.hosts)
    30
    """

    spec: PackingSpec
    """How it was packed."""
    hosts: List[Host]
    """The hosts in opening order."""
    pack_segments: Segments
    """Sample ranges the packer saw."""
    eval_segments: Segments
    """Sample ranges the hosts were judged on."""
    interval_minutes: float
    """Sampling interval of the trace."""

    @property
    def eval_days(self) -> float:
        """Length of the evaluation window in days.

        >>> from ibcloud.delay import synthetic_trace
        >>> consolidate(synthetic_trace(seed=2, n_vms=5, days=1), by="utilisation", threshold=80, cores=12).eval_days
        1.0
        """
        return sum(b - a for a, b in self.eval_segments) * self.interval_minutes / MINUTES_PER_DAY

    def rows(self, vm_ids: Optional[Sequence[str]] = None) -> List[Dict[str, Any]]:
        """One dict per host: VMs, packing load and delay, and the evaluation
        statistics (total delay also per day).

        >>> from ibcloud.delay import synthetic_trace
        >>> c = consolidate(synthetic_trace(seed=2, n_vms=5, days=1), by="utilisation", threshold=80, cores=12)
        >>> sorted(c.rows()[0])[:4]
        ['delay_per_day', 'delayed_demand_pct', 'filling_pct', 'host']
        """
        out = []
        for i, h in enumerate(self.hosts):
            s = h.stats
            out.append({
                "host": i,
                "vms": [vm_ids[v] for v in h.vms] if vm_ids is not None else list(h.vms),
                "n_vms": len(h.vms),
                "packing_load_cores": h.load,
                "packing_delay": h.packing_delay,
                "total_delay": s.total_delay,
                "delay_per_day": s.total_delay / self.eval_days,
                "max_delay": s.max_delay,
                "pct_delayed": s.pct_delayed,
                "mean_delay_when_delayed": s.mean_delay_when_delayed,
                "filling_pct": h.filling(self.spec.cores),
                "delayed_demand_pct": 100.0 * s.delayed_demand_share,
            })
        return out


_MATRICES: "weakref.WeakKeyDictionary[Trace, Any]" = weakref.WeakKeyDictionary()


def _matrix(trace: Trace):
    """The trace's demand in the Rust core, built once per trace."""
    matrix = _MATRICES.get(trace)
    if matrix is None:
        data = np.ascontiguousarray(trace.cpu, dtype="<f8").tobytes()
        matrix = _native.DemandMatrix(data, trace.n_vms, trace.n_samples, trace.interval_minutes)
        _MATRICES[trace] = matrix
    return matrix


@checked_ints
def segments_of_days(trace: Trace, days: Iterable[int]) -> Segments:
    """Sample ranges covering the given whole days, adjacent days merged.

    >>> import numpy as np
    >>> t = Trace(np.zeros((1, 1440 * 4)), vcpus=[1])
    >>> segments_of_days(t, [0, 1, 3])
    [(0, 2880), (4320, 5760)]
    """
    segments: Segments = []
    for day in sorted(set(days)):
        a, b = trace.day_window(day)
        if segments and segments[-1][1] == a:
            segments[-1] = (segments[-1][0], b)
        else:
            segments.append((a, b))
    if not segments:
        raise DelayParameterError("no days given")
    return segments


def run_packings(trace: Trace, jobs: Sequence[Tuple[PackingSpec, Segments, Segments]],
                 packing_delays: bool = True) -> List[Consolidation]:
    """Packs and evaluates every ``(spec, pack_segments, eval_segments)`` job,
    in parallel in Rust; results in job order. Without ``packing_delays``,
    utilisation packings skip :attr:`Host.packing_delay` (NaN; it costs one
    more pass over the trace per packing).

    >>> from ibcloud.delay import synthetic_trace
    >>> t = synthetic_trace(seed=3, n_vms=20, days=1)
    >>> spec = PackingSpec("utilisation", 12, 100)
    >>> [len(c.hosts) > 0 for c in run_packings(t, [(spec, [(0, 720)], [(720, 1440)])])]
    [True]
    """
    native_jobs = []
    for spec, pack, evaluate in jobs:
        limit = None
        if spec.by == "delay":
            pack_days = sum(b - a for a, b in pack) * trace.interval_minutes / MINUTES_PER_DAY
            limit = float(spec.cap) * pack_days
        native_jobs.append((list(pack), list(evaluate), float(spec.cores), spec.threshold / 100.0, limit, spec.fit,
                            spec.unit, bool(packing_delays)))
    try:
        results = _matrix(trace).run_jobs(native_jobs)
    except ValueError as err:
        raise DelayParameterError(str(err)) from None
    out = []
    for (spec, pack, evaluate), (bins, loads, delays, stats) in zip(jobs, results):
        hosts = [Host(list(vms), load, delay, DelayStats(*s)) for vms, load, delay, s in zip(bins, loads, delays, stats)]
        out.append(Consolidation(spec, hosts, list(pack), list(evaluate), trace.interval_minutes))
    return out


@checked_ints
def consolidate(
    trace: Trace,
    by: str = "delay",
    cap: Optional[float] = None,
    threshold: float = 100.0,
    cores: float = 16,
    fit: str = "best",
    unit: str = "wall_minutes",
    pack_days: Optional[Iterable[int]] = None,
    eval_days: Optional[Iterable[int]] = None,
) -> Consolidation:
    """Packs ``trace`` once. Without ``pack_days``/``eval_days`` the whole
    trace is used for both (Paper VI, Sections V-A and V-B); with them, whole
    days (0-based, 1,440 one-minute samples each from the first sample).

    >>> from ibcloud.delay import synthetic_trace
    >>> c = consolidate(synthetic_trace(seed=4, n_vms=30, days=1), by="delay", cap=100, cores=12)
    >>> all(h.packing_delay <= 100 for h in c.hosts if len(h.vms) > 1)
    True
    """
    spec = PackingSpec(by, cores, threshold, cap if by != "utilisation" else None, fit, unit)
    whole: Segments = [(0, trace.n_samples)]
    pack = segments_of_days(trace, pack_days) if pack_days is not None else whole
    evaluate = segments_of_days(trace, eval_days) if eval_days is not None else whole
    return run_packings(trace, [(spec, pack, evaluate)])[0]
