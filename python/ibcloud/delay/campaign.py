"""Paper VI's experiments as one campaign: leave-one-day-out cross-validation
of both packers over every threshold, cap and host size (Section V-C, Tables
I and II), and the full-data packings of Sections V-A and V-B.

Every configuration is one Rust job; all jobs run in one parallel call. The
result is a table with one row per host of every packing, which
:func:`table_i`, :func:`table_ii` and :func:`headline_ratios` aggregate the
way the paper does: all hosts of the 13 folds and the three host sizes pooled
per setting.

>>> from ibcloud.delay import synthetic_trace
>>> trace = synthetic_trace(seed=1, n_vms=30, days=3)
>>> result = run_campaign(trace, cores=(12,), util_thresholds=(50, 100), delay_thresholds=(100,), caps=(10,))
>>> sorted(set(result.bins["experiment"]))
['cross-validation', 'full-data']
>>> table_i(result.bins).index.tolist()
[50, 100]
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ibcloud.delay.errors import DelayParameterError
from ibcloud.delay.packing import PackingSpec, run_packings, segments_of_days
from ibcloud.delay.trace import Trace
from ibcloud.safeio import checked_ints

__all__ = [
    "CAPS",
    "CORES",
    "DELAY_THRESHOLDS",
    "UTIL_THRESHOLDS",
    "CampaignResult",
    "equal_delay_threshold",
    "headline_ratios",
    "run_campaign",
    "summarise",
    "table_i",
    "table_ii",
]

#: Host sizes of the paper, cores.
CORES: Tuple[int, ...] = (12, 16, 32)
#: Fill thresholds of Table I, percent.
UTIL_THRESHOLDS: Tuple[int, ...] = (30, 40, 50, 60, 70, 80, 90, 100)
#: Fill thresholds of Table II and of the full-data figures, percent.
DELAY_THRESHOLDS: Tuple[int, ...] = (70, 80, 90, 100)
#: Accepted delays of Table II, minutes per day.
CAPS: Tuple[int, ...] = (1, 10, 100, 1000)
#: Accepted delay of the full-data delay packing (Section V-B), minutes over the whole trace.
FULL_DATA_CAP_TOTAL = 1000.0

#: Columns of the statistics tables, in the paper's order.
STAT_COLUMNS = ("avg_delay", "median_delay", "max_delay", "avg_filling", "median_filling", "max_filling",
                "avg_pct_delayed", "avg_delay_when_delayed")


@dataclasses.dataclass
class CampaignResult:
    """All hosts of all packings of a campaign.

    >>> from ibcloud.delay import synthetic_trace
    >>> r = run_campaign(synthetic_trace(seed=1, n_vms=10, days=2), cores=(16,), util_thresholds=(100,),
    ...                  delay_thresholds=(100,), caps=(1,), full_data=False)
    >>> r.packings, list(r.bins.columns[:4])
    (4, ['experiment', 'by', 'cores', 'threshold'])
    """

    bins: Any
    """pandas DataFrame, one row per host: experiment (``cross-validation`` or
    ``full-data``), by, cores, threshold, cap (min/day), fold (held-out day,
    -1 for full data), host, n_vms, packing_load, packing_delay, total_delay
    (min, over the evaluation window), delay_per_day, max_delay, pct_delayed,
    mean_delay_when_delayed, filling (%), delayed_demand_pct."""
    packings: int
    """Number of packings run."""
    seconds: float
    """Wall time of the packings and evaluations."""
    settings: Dict[str, Any]
    """Resolved parameters (for the record next to the results)."""


def _jobs(trace: Trace, cores: Sequence[float], util_thresholds: Sequence[float], delay_thresholds: Sequence[float],
          caps: Sequence[float], folds: Sequence[int], full_data: bool, fit: str, unit: str):
    days = trace.whole_days
    jobs: List[Tuple[PackingSpec, list, list]] = []
    meta: List[Dict[str, Any]] = []
    for fold in folds:
        pack = segments_of_days(trace, [d for d in range(days) if d != fold])
        test = segments_of_days(trace, [fold])
        for k in cores:
            for theta in util_thresholds:
                jobs.append((PackingSpec("utilisation", k, theta, None, fit, unit), pack, test))
                meta.append({"experiment": "cross-validation", "fold": fold})
            for cap in caps:
                for theta in delay_thresholds:
                    jobs.append((PackingSpec("delay", k, theta, cap, fit, unit), pack, test))
                    meta.append({"experiment": "cross-validation", "fold": fold})
    if full_data:
        whole = [(0, trace.n_samples)]
        per_day = FULL_DATA_CAP_TOTAL / trace.days
        for k in cores:
            for theta in delay_thresholds:
                jobs.append((PackingSpec("utilisation", k, theta, None, fit, unit), whole, whole))
                meta.append({"experiment": "full-data", "fold": -1})
                jobs.append((PackingSpec("delay", k, theta, per_day, fit, unit), whole, whole))
                meta.append({"experiment": "full-data", "fold": -1})
    return jobs, meta


@checked_ints
def run_campaign(
    trace: Trace,
    cores: Sequence[float] = CORES,
    util_thresholds: Sequence[float] = UTIL_THRESHOLDS,
    delay_thresholds: Sequence[float] = DELAY_THRESHOLDS,
    caps: Sequence[float] = CAPS,
    folds: Optional[Sequence[int]] = None,
    full_data: bool = True,
    fit: str = "best",
    unit: str = "wall_minutes",
) -> CampaignResult:
    """Runs the cross-validation (every fold: all whole days but one to
    pack, the held-out day to evaluate) and, with ``full_data``, the
    whole-trace packings (utilisation at ``delay_thresholds``, and delay with
    1,000 minutes over the whole trace).

    >>> from ibcloud.delay import synthetic_trace
    >>> r = run_campaign(synthetic_trace(seed=1, n_vms=10, days=2), cores=(16,), util_thresholds=(100,),
    ...                  delay_thresholds=(100,), caps=(1,), folds=[0])
    >>> r.packings
    4
    """
    import pandas as pd

    days = trace.whole_days
    if days < 2:
        raise DelayParameterError(f"cross-validation needs at least two whole days; the trace has {days}")
    folds = list(range(days)) if folds is None else list(folds)
    for fold in folds:
        if not 0 <= fold < days:
            raise DelayParameterError(f"fold {fold} is not one of the {days} whole days")
    jobs, meta = _jobs(trace, cores, util_thresholds, delay_thresholds, caps, folds, full_data, fit, unit)
    started = time.perf_counter()
    results = run_packings(trace, jobs, packing_delays=False)
    seconds = time.perf_counter() - started
    rows = []
    for m, result in zip(meta, results):
        spec = result.spec
        eval_days = result.eval_days
        for i, host in enumerate(result.hosts):
            s = host.stats
            rows.append((m["experiment"], spec.by, spec.cores, spec.threshold,
                         spec.cap if spec.by == "delay" else np.nan, m["fold"], i, len(host.vms), host.load,
                         host.packing_delay, s.total_delay, s.total_delay / eval_days, s.max_delay, s.pct_delayed,
                         s.mean_delay_when_delayed, s.delayed_intervals > 0, host.filling(spec.cores),
                         100.0 * s.delayed_demand_share))
    columns = ["experiment", "by", "cores", "threshold", "cap", "fold", "host", "n_vms", "packing_load",
               "packing_delay", "total_delay", "delay_per_day", "max_delay", "pct_delayed",
               "mean_delay_when_delayed", "any_delay", "filling", "delayed_demand_pct"]
    bins = pd.DataFrame.from_records(rows, columns=columns)
    settings = {
        "trace": trace.summary(),
        "cores": list(cores),
        "util_thresholds": list(util_thresholds),
        "delay_thresholds": list(delay_thresholds),
        "caps_min_per_day": list(caps),
        "folds": folds,
        "full_data": full_data,
        "full_data_cap_total_min": FULL_DATA_CAP_TOTAL,
        "fit": fit,
        "unit": unit,
        "initial_backlog": "empty at the start of every packing and evaluation segment",
    }
    return CampaignResult(bins, len(jobs), seconds, settings)


def summarise(hosts) -> Dict[str, float]:
    """The eight statistics of a table row over a set of hosts (a DataFrame
    with ``delay_per_day``, ``filling``, ``pct_delayed``,
    ``mean_delay_when_delayed`` and ``any_delay`` columns). The conditional
    delay is averaged over hosts that had any delay (0 when none had).

    >>> import pandas as pd
    >>> hosts = pd.DataFrame({"delay_per_day": [0.0, 10.0], "filling": [40.0, 60.0], "pct_delayed": [0.0, 2.0],
    ...                       "mean_delay_when_delayed": [0.0, 0.5], "any_delay": [False, True]})
    >>> summarise(hosts)["avg_delay_when_delayed"], summarise(hosts)["median_filling"]
    (0.5, 50.0)
    """
    delayed = hosts[hosts["any_delay"]]
    return {
        "avg_delay": float(hosts["delay_per_day"].mean()),
        "median_delay": float(hosts["delay_per_day"].median()),
        "max_delay": float(hosts["delay_per_day"].max()),
        "avg_filling": float(hosts["filling"].mean()),
        "median_filling": float(hosts["filling"].median()),
        "max_filling": float(hosts["filling"].max()),
        "avg_pct_delayed": float(hosts["pct_delayed"].mean()),
        "avg_delay_when_delayed": float(delayed["mean_delay_when_delayed"].mean()) if len(delayed) else 0.0,
        "hosts": int(len(hosts)),
    }


def _table(bins, by: str, keys: List[str]):
    import pandas as pd

    sel = bins[(bins["experiment"] == "cross-validation") & (bins["by"] == by)]
    rows = {}
    for key, group in sel.groupby(keys, sort=True):
        rows[key] = summarise(group)
    table = pd.DataFrame.from_dict(rows, orient="index")
    if len(keys) == 2:
        table.index = pd.MultiIndex.from_tuples(table.index, names=keys)
    else:
        table.index = [k[0] if isinstance(k, tuple) else k for k in table.index]
        table.index.name = keys[0]
    return table


def table_i(bins):
    """Table I: cross-validated utilisation packing, one row per threshold
    (all folds and host sizes pooled).

    >>> from ibcloud.delay import synthetic_trace
    >>> r = run_campaign(synthetic_trace(seed=1, n_vms=10, days=2), cores=(16,), util_thresholds=(100,),
    ...                  delay_thresholds=(100,), caps=(1,), full_data=False)
    >>> list(table_i(r.bins).columns[:3])
    ['avg_delay', 'median_delay', 'max_delay']
    """
    return _table(bins, "utilisation", ["threshold"])


def table_ii(bins):
    """Table II: cross-validated delay packing, one row per (cap, threshold).

    >>> from ibcloud.delay import synthetic_trace
    >>> r = run_campaign(synthetic_trace(seed=1, n_vms=10, days=2), cores=(16,), util_thresholds=(100,),
    ...                  delay_thresholds=(100,), caps=(1,), full_data=False)
    >>> table_ii(r.bins).index.tolist()
    [(1.0, 100)]
    """
    return _table(bins, "delay", ["cap", "threshold"])


def _nearest(table, column: str, target: float, log: bool) -> Any:
    values = table[column].astype(float)
    if log:
        distance = (np.log10(values.clip(lower=1e-6)) - np.log10(max(target, 1e-6))).abs()
    else:
        distance = (values - target).abs()
    return distance.idxmin()


def headline_ratios(t1, t2) -> Dict[str, Dict[str, Any]]:
    """The paper's two headline comparisons, on the paper's pairs of settings
    and on the nearest pairs in these results:

    * equal average delay: utilisation θ = 70 % against delay ≤ 1,000 min/day
      at θ = 100 % (the paper: 4.0× lower worst-case delay);
    * equal utilisation: utilisation θ = 30 % against delay ≤ 1 min/day at
      θ = 80 % (the paper: 47× lower average delay).

    ``matched`` replaces the utilisation row by the one nearest to the delay
    row's average delay (log scale) or average filling.

    >>> import pandas as pd
    >>> t1 = pd.DataFrame({"avg_delay": [7.05, 783.49], "max_delay": [1923.19, 46706.97],
    ...                    "avg_filling": [29.2, 63.9]}, index=[30, 70])
    >>> t2 = pd.DataFrame({"avg_delay": [0.15, 783.87], "max_delay": [21.35, 11596.53], "avg_filling": [31.64, 69.4]},
    ...                   index=pd.MultiIndex.from_tuples([(1, 80), (1000, 100)]))
    >>> round(headline_ratios(t1, t2)["equal_delay"]["max_delay_ratio"], 2)
    4.03
    >>> round(headline_ratios(t1, t2)["equal_utilisation"]["avg_delay_ratio"], 1)
    47.0
    """

    def ratio(a: float, b: float) -> float:
        return float(a / b) if b > 0 else float("inf")

    out: Dict[str, Dict[str, Any]] = {}
    pairs = {
        "equal_delay": (70, (1000, 100)),
        "equal_utilisation": (30, (1, 80)),
    }
    for name, (theta, key) in pairs.items():
        if theta not in t1.index or key not in t2.index:
            continue
        u, d = t1.loc[theta], t2.loc[key]
        if name == "equal_delay":
            matched = _nearest(t1, "avg_delay", float(d["avg_delay"]), log=True)
        else:
            matched = _nearest(t1, "avg_filling", float(d["avg_filling"]), log=False)
        m = t1.loc[matched]
        out[name] = {
            "utilisation_threshold": theta,
            "delay_setting": {"cap": key[0], "threshold": key[1]},
            "utilisation": {c: float(u[c]) for c in ("avg_delay", "max_delay", "avg_filling")},
            "delay": {c: float(d[c]) for c in ("avg_delay", "max_delay", "avg_filling")},
            "avg_delay_ratio": ratio(u["avg_delay"], d["avg_delay"]),
            "max_delay_ratio": ratio(u["max_delay"], d["max_delay"]),
            "matched_threshold": int(matched) if float(matched).is_integer() else float(matched),
            "matched_avg_delay_ratio": ratio(m["avg_delay"], d["avg_delay"]),
            "matched_max_delay_ratio": ratio(m["max_delay"], d["max_delay"]),
            "matched_avg_filling": float(m["avg_filling"]),
        }
    return out


@checked_ints(steps=(1, 64))
def equal_delay_threshold(trace: Trace, target_avg_delay: float, low: float = 30.0, high: float = 100.0,
                          steps: int = 10, fit: str = "best", unit: str = "wall_minutes",
                          cores: Sequence[float] = CORES, column: str = "avg_delay") -> Dict[str, Any]:
    """The utilisation threshold θ whose cross-validated average test-day
    delay equals ``target_avg_delay`` (the paper's "equal average delay"
    read exactly): bisection on θ between ``low`` and ``high`` over
    ``steps`` halvings, every step a full cross-validation (all folds and
    host sizes pooled, as Table I), instead of the nearest grid setting. The
    average delay is a step function of θ (host counts are integers), so
    the result is the bracket's upper end with its row. ``column =
    "avg_filling"`` matches the average filling instead ("equal
    utilisation"); any column that grows with θ works.

    >>> from ibcloud.delay import synthetic_trace
    >>> t = synthetic_trace(seed=1, n_vms=20, days=2)
    >>> m = equal_delay_threshold(t, 1.0, steps=3, cores=(16,))
    >>> sorted(m)[:3], 30.0 <= m["threshold"] <= 100.0
    (['avg_delay', 'avg_filling', 'bracket'], True)
    """

    def row(theta: float) -> Dict[str, float]:
        r = run_campaign(trace, cores=cores, util_thresholds=(theta,), delay_thresholds=(), caps=(),
                         full_data=False, fit=fit, unit=unit)
        return summarise(r.bins[r.bins["by"] == "utilisation"])

    lo, hi = float(low), float(high)
    hi_row = row(hi)
    for _ in range(max(0, steps)):
        mid = (lo + hi) / 2.0
        mid_row = row(mid)
        if mid_row[column] >= target_avg_delay:
            hi, hi_row = mid, mid_row
        else:
            lo = mid
    return {"threshold": hi, "bracket": [lo, hi], "target_avg_delay": float(target_avg_delay),
            "avg_delay": hi_row["avg_delay"], "max_delay": hi_row["max_delay"], "avg_filling": hi_row["avg_filling"],
            "hosts": hi_row["hosts"]}
