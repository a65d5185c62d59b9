"""Workload delay as a QoS metric and delay-aware VM consolidation (Paper VI).

* :class:`Trace`: per-VM CPU demand on a common grid; loaders for the
  Bitbrains GWA-T-12 and Azure public VM CPU layouts and a plain layout
  (:func:`read_trace`), and a seeded synthetic stand-in for the paper's
  trace (:func:`synthetic_trace`).
* :mod:`~ibcloud.delay.kernel`: the backlog recursion
  ``q(t+1) = max{q(t) + d(t+1) − CΔt, 0}`` and the total delay, vectorised.
* :func:`consolidate`: best-fit-decreasing packing by utilisation threshold or
  by delay cap (Rust), evaluated on held-out days.
* :func:`run_campaign`, :func:`table_i`, :func:`table_ii`: the paper's
  cross-validation; ``ibcloud reproduce delay`` prints it beside the paper.

Needs numpy and pandas (pyarrow for Parquet, matplotlib for plots).

>>> from ibcloud.delay import consolidate, synthetic_trace
>>> trace = synthetic_trace(seed=7, n_vms=40, days=2)
>>> c = consolidate(trace, by="delay", cap=10, threshold=100, cores=16, pack_days=[0], eval_days=[1])
>>> sorted(v for h in c.hosts for v in h.vms) == list(range(40))
True
"""

from ibcloud.delay.campaign import CampaignResult, headline_ratios, run_campaign, table_i, table_ii
from ibcloud.delay.errors import DelayParameterError, TraceError
from ibcloud.delay.kernel import DelayStats, backlog, current_delay, delay_stats, served, total_delay
from ibcloud.delay.packing import Consolidation, Host, PackingSpec, consolidate, run_packings
from ibcloud.delay.synthetic import SyntheticParams, synthetic_trace
from ibcloud.delay.trace import CleaningReport, Trace

__all__ = [
    "CampaignResult",
    "CleaningReport",
    "Consolidation",
    "DelayParameterError",
    "DelayStats",
    "Host",
    "PackingSpec",
    "SyntheticParams",
    "Trace",
    "TraceError",
    "backlog",
    "consolidate",
    "current_delay",
    "delay_stats",
    "headline_ratios",
    "run_campaign",
    "run_packings",
    "served",
    "synthetic_trace",
    "table_i",
    "table_ii",
    "total_delay",
]
