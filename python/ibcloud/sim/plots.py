"""Plots of a :class:`ibcloud.sim.SimResult` (matplotlib, Agg): throughput
and latency per flow over time, and XmitWait of the busiest ports.

>>> import tempfile
>>> from ibcloud import Fabric, route
>>> from ibcloud.sim import simulate
>>> t = route(Fabric.generate("4-ary-2-full"), "ftree").tables
>>> r = simulate(t, "flow:src=#0,dst=#5", "100us", sweep_interval="10us")
>>> [p.name for p in plot_result(r, tempfile.mkdtemp())]
['throughput.png', 'latency.png', 'xmit_wait.png']
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, List

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ibcloud.safeio import atomic_path  # noqa: E402

if TYPE_CHECKING:
    from ibcloud.sim import SimResult

__all__ = ["plot_result"]

_MAX_LINES = 12


def _per_flow(ax, series, column: str, ylabel: str, n_flows: int) -> None:
    if n_flows <= _MAX_LINES:
        for flow, g in series.groupby("flow", sort=True):
            ax.plot(g["time_us"] / 1000, g[column], label=str(g["name"].iloc[0]), drawstyle="steps-pre")
        if n_flows:
            ax.legend(fontsize="small", loc="best")
    else:
        g = series.groupby("time_us")[column]
        t = np.array(sorted(series["time_us"].unique())) / 1000
        ax.plot(t, g.mean().to_numpy(), label="mean", color="C0")
        ax.fill_between(t, g.min().to_numpy(), g.max().to_numpy(), alpha=0.25, color="C0", label="min-max")
        ax.legend(fontsize="small", loc="best")
    ax.set_xlabel("time (ms)")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)


def plot_result(result: "SimResult", out: Path, title: str = "") -> List[Path]:
    """Writes throughput.png, latency.png and xmit_wait.png into ``out``.

    >>> import tempfile
    >>> from ibcloud import Fabric, route
    >>> from ibcloud.sim import simulate
    >>> t = route(Fabric.generate("4-ary-2-full"), "ftree").tables
    >>> len(plot_result(simulate(t, "uniform:load=0.3", "40us", sweep_interval="10us"), tempfile.mkdtemp()))
    3
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    n = len(result.flows)
    for column, ylabel, name in (("gbps", "payload throughput (Gb/s)", "throughput.png"),
                                 ("mean_latency_us", "mean message latency (us)", "latency.png")):
        fig, ax = plt.subplots(figsize=(8, 4.5))
        _per_flow(ax, result.flow_series, column, ylabel, n)
        ax.set_title(title or ylabel)
        fig.tight_layout()
        p = out / name
        with atomic_path(p, keep_suffix=True) as tmp:
            fig.savefig(tmp, dpi=110)
        plt.close(fig)
        paths.append(p)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ps = result.port_series
    if len(ps):
        last = ps.groupby("slot")["xmit_wait"].max().sort_values(ascending=False)
        top = [s for s, w in last.items() if w > 0][:8]
        for s in top:
            g = ps[ps["slot"] == s].sort_values("time_us")
            rate = np.diff(g["xmit_wait"].to_numpy(), prepend=0) / np.diff(g["time_us"].to_numpy(), prepend=0).clip(min=1e-9)
            ax.plot(g["time_us"] / 1000, rate * 1e6, label=str(g["port"].iloc[0]), drawstyle="steps-pre")
        if top:
            ax.legend(fontsize="x-small", loc="best")
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("XmitWait ticks per second")
    ax.set_title(title or "busiest ports by XmitWait")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    p = out / "xmit_wait.png"
    with atomic_path(p, keep_suffix=True) as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)
    paths.append(p)
    return paths
