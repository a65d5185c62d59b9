"""Figures of the delay reproduction, drawn with matplotlib's Agg canvas (no
display needed) from result tables and demand series only; nothing here
calls the Rust core.

* :func:`plot_cases`: Fig. 3, three single-core workloads;
* :func:`plot_host`: Fig. 2, demand, served work, capacity and delay of a host;
* :func:`plot_fleet`: Fig. 1, mean, median and spread across VMs over time;
* :func:`plot_full_data`: Figs. 4 and 5, total delay per host, whole trace;
* :func:`plot_scatter`: Figs. 6 and 7, test-day delay against filling;
* :func:`plot_pareto`: average delay against average filling, every setting.

>>> import tempfile, pathlib
>>> path = plot_cases(pathlib.Path(tempfile.mkdtemp()) / "cases.png")
>>> path.stat().st_size > 0
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Sequence, Union

import numpy as np

from ibcloud.delay.kernel import current_delay, served
from ibcloud.safeio import checked_ints

__all__ = ["CASES", "plot_cases", "plot_fleet", "plot_full_data", "plot_host", "plot_pareto", "plot_scatter"]

#: Paper VI's Fig. 3 on one core, 15 one-minute samples (Case 3's series is
#: not given in the paper; this one has a lower total and a higher peak than
#: Case 2, which is the case's point).
CASES: Dict[str, List[float]] = {
    "Case 1": [1.0] * 15,
    "Case 2": [1.5] + [1.0] * 14,
    "Case 3": [2.0, 0.0, 1.0, 1.0, 1.0] * 3,
}

#: Delays of 0 drawn at this value on log axes.
ZERO_FLOOR = 1e-2


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _save(fig, path: Union[str, Path]) -> Path:
    path = Path(path)
    from ibcloud.safeio import atomic_path

    with atomic_path(path, keep_suffix=True) as tmp:
        fig.savefig(tmp, dpi=110)
    return path


def plot_cases(path: Union[str, Path]) -> Path:
    """Fig. 3: demand, current delay and total delay of :data:`CASES`.

    >>> import tempfile, pathlib
    >>> plot_cases(pathlib.Path(tempfile.mkdtemp()) / "c.png").suffix
    '.png'
    """
    fig = _figure(10, 6.5)
    axes = fig.subplots(3, 3, sharex=True)
    for col, (name, series) in enumerate(CASES.items()):
        d = np.asarray(series)
        w = current_delay(d, capacity=1.0)
        t = np.arange(1, d.size + 1)
        axes[0, col].step(t, 100 * d, where="mid", color="tab:blue", label="demand")
        axes[0, col].axhline(100, color="black", lw=0.8, ls="--", label="capacity")
        axes[0, col].set_ylim(0, 100 * max(d.max(), 1.0) * 1.1)
        axes[0, col].set_title(name)
        axes[1, col].bar(t, w, color="tab:orange")
        axes[2, col].plot(t, np.cumsum(w), color="tab:red", marker=".")
        axes[2, col].set_xlabel("time (one sample per minute)")
    axes[0, 0].set_ylabel("CPU (%)")
    axes[1, 0].set_ylabel("delay (min)")
    axes[2, 0].set_ylabel("total delay (min)")
    axes[0, 0].legend(loc="upper right", fontsize=8)
    return _save(fig, path)


def plot_host(demand: Sequence[float], cores: float, path: Union[str, Path], interval_minutes: float = 1.0,
              title: str = "") -> Path:
    """Fig. 2: a host's demand, the work it serves (above the demand while a
    backlog drains), its capacity, the current delay and the total delay.

    >>> import tempfile, pathlib
    >>> demand = [10, 15, 11, 9, 14, 13, 8, 8]
    >>> plot_host(demand, 12, pathlib.Path(tempfile.mkdtemp()) / "h.png").exists()
    True
    """
    d = np.asarray(demand, dtype=float)
    t = np.arange(d.size) * interval_minutes
    w = current_delay(d, cores, interval_minutes)
    fig = _figure(10, 6)
    top, middle, bottom = fig.subplots(3, 1, sharex=True)
    top.plot(t, 100 * d, lw=0.9, label="resource demand")
    top.plot(t, 100 * served(d, cores, interval_minutes), lw=0.9, label="resource utilisation (served)")
    top.axhline(100 * cores, color="black", ls="--", lw=0.8, label=f"max capacity ({100 * cores:g} %)")
    top.set_ylabel("CPU (%)")
    top.legend(loc="upper right", fontsize=8)
    if title:
        top.set_title(title)
    change = np.diff(np.concatenate([[0.0], w]))
    middle.bar(t, np.where(change > 0, change, 0), color="tab:red", width=interval_minutes, label="delay added")
    middle.bar(t, np.where(change < 0, change, 0), color="tab:green", width=interval_minutes, label="delay consumed")
    middle.plot(t, w, color="black", lw=0.9, label="current delay")
    middle.set_ylabel("delay (min)")
    middle.legend(loc="upper right", fontsize=8)
    bottom.plot(t, np.cumsum(w) * interval_minutes, color="tab:purple")
    bottom.set_ylabel("total delay (min)")
    bottom.set_xlabel("minutes")
    return _save(fig, path)


@checked_ints
def plot_fleet(cpu: np.ndarray, vcpus: Sequence[int], path: Union[str, Path], interval_minutes: float = 1.0,
               zoom_minutes: int = 60) -> Path:
    """Fig. 1: mean, median and standard deviation across VMs of the CPU
    utilisation (percent of each VM's vCPUs), whole trace and a zoom.

    >>> import tempfile, pathlib
    >>> cpu = np.abs(np.random.default_rng(1).normal(0.1, 0.05, (5, 120)))
    >>> plot_fleet(cpu, [1] * 5, pathlib.Path(tempfile.mkdtemp()) / "f.png").exists()
    True
    """
    util = 100 * np.asarray(cpu) / np.asarray(vcpus, dtype=float)[:, None]
    mean, median, std = util.mean(axis=0), np.median(util, axis=0), util.std(axis=0)
    t = np.arange(util.shape[1]) * interval_minutes / 60.0
    fig = _figure(10, 5.5)
    whole, zoom = fig.subplots(2, 1)
    for ax, sl in ((whole, slice(None)), (zoom, slice(0, max(1, int(zoom_minutes / interval_minutes))))):
        ax.plot(t[sl], mean[sl], lw=0.7, label="mean")
        ax.plot(t[sl], median[sl], lw=0.7, label="median")
        ax.plot(t[sl], std[sl], lw=0.7, label="std. dev.")
        ax.set_ylabel("CPU (% of vCPUs)")
    whole.set_title("CPU utilisation across VMs")
    whole.legend(loc="upper right", fontsize=8)
    zoom.set_xlabel("hours")
    return _save(fig, path)


def plot_full_data(bins, by: str, path: Union[str, Path]) -> Path:
    """Figs. 4 (``by="utilisation"``) and 5 (``"delay"``): total delay of each
    host over the whole trace, one panel per host size and threshold. Zero
    delays are drawn at 0.01 minutes.

    >>> import pandas as pd, tempfile, pathlib
    >>> bins = pd.DataFrame({"experiment": ["full-data"] * 2, "by": ["utilisation"] * 2, "cores": [12, 12],
    ...                      "threshold": [100, 100], "host": [0, 1], "total_delay": [5e4, 0.0]})
    >>> plot_full_data(bins, "utilisation", pathlib.Path(tempfile.mkdtemp()) / "f4.png").exists()
    True
    """
    sel = bins[(bins["experiment"] == "full-data") & (bins["by"] == by)]
    cores = sorted(sel["cores"].unique())
    thresholds = sorted(sel["threshold"].unique())
    fig = _figure(3 * max(1, len(thresholds)), 2.4 * max(1, len(cores)))
    axes = np.atleast_2d(fig.subplots(max(1, len(cores)), max(1, len(thresholds)), sharey=True, squeeze=False))
    for i, k in enumerate(cores):
        for j, theta in enumerate(thresholds):
            ax = axes[i, j]
            hosts = sel[(sel["cores"] == k) & (sel["threshold"] == theta)].sort_values("host")
            ax.bar(hosts["host"] + 1, np.maximum(hosts["total_delay"], ZERO_FLOOR), color="tab:blue")
            ax.set_xticks(hosts["host"] + 1)
            ax.set_yscale("log")
            ax.set_title(f"{k:g} cores, θ = {theta:g} %", fontsize=9)
            if i == len(cores) - 1:
                ax.set_xlabel("host")
        axes[i, 0].set_ylabel("total delay (min)")
    what = "average utilisation" if by == "utilisation" else "delay"
    fig.suptitle(f"Packing on the whole trace by {what}")
    return _save(fig, path)


def plot_scatter(bins, by: str, path: Union[str, Path]) -> Path:
    """Figs. 6 and 7: every host of the cross-validation, test-day filling
    against test-day total delay (log; zero drawn at 0.01), marker by host
    size, one panel per setting, with the mean (solid) and median (dashed) of
    both.

    >>> import pandas as pd, tempfile, pathlib
    >>> bins = pd.DataFrame({"experiment": ["cross-validation"] * 2, "by": ["delay"] * 2, "cores": [12, 32],
    ...                      "threshold": [100, 100], "cap": [10.0, 10.0], "filling": [50.0, 60.0],
    ...                      "delay_per_day": [0.0, 12.0]})
    >>> plot_scatter(bins, "delay", pathlib.Path(tempfile.mkdtemp()) / "f7.png").exists()
    True
    """
    sel = bins[(bins["experiment"] == "cross-validation") & (bins["by"] == by)]
    keys = ["threshold"] if by == "utilisation" else ["cap", "threshold"]
    groups = list(sel.groupby(keys, sort=True))
    ncols = 4
    nrows = max(1, -(-len(groups) // ncols))
    fig = _figure(3.2 * ncols, 2.6 * nrows)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False)).ravel()
    markers = {12: "o", 16: "s", 32: "^"}
    for ax, (key, hosts) in zip(axes, groups):
        key = key if isinstance(key, tuple) else (key,)
        for k, group in hosts.groupby("cores"):
            ax.scatter(group["filling"], np.maximum(group["delay_per_day"], ZERO_FLOOR), s=6, alpha=0.5,
                       marker=markers.get(int(k), "x"), label=f"{k:g} cores")
        ax.set_yscale("log")
        for stat, style in ((np.mean, "-"), (np.median, "--")):
            ax.axvline(stat(hosts["filling"]), color="black", lw=0.7, ls=style)
            ax.axhline(max(stat(hosts["delay_per_day"]), ZERO_FLOOR), color="tab:red", lw=0.7, ls=style)
        title = f"θ = {key[-1]:g} %" if by == "utilisation" else f"≤ {key[0]:g} min/day, θ = {key[1]:g} %"
        ax.set_title(title, fontsize=9)
    for ax in axes[len(groups):]:
        ax.set_visible(False)
    axes[0].legend(fontsize=7, loc="lower right")
    for ax in axes[::ncols]:
        ax.set_ylabel("test-day delay (min)")
    for ax in axes[-ncols:]:
        ax.set_xlabel("test-day filling (%)")
    what = "average utilisation" if by == "utilisation" else "delay"
    fig.suptitle(f"Cross-validated packing by {what}: every host of the 13 folds")
    return _save(fig, path)


def plot_pareto(table_i, table_ii, path: Union[str, Path], paper_i=None, paper_ii=None) -> Path:
    """Average test-day delay against average filling for every setting of
    both packers (ours solid, the paper's dotted when given).

    >>> import pandas as pd, tempfile, pathlib
    >>> t1 = pd.DataFrame({"avg_delay": [1.0, 100.0], "avg_filling": [30.0, 90.0]}, index=[30, 100])
    >>> t2 = pd.DataFrame({"avg_delay": [0.1, 50.0], "avg_filling": [40.0, 70.0]},
    ...                   index=pd.MultiIndex.from_tuples([(1.0, 70), (1.0, 100)], names=["cap", "threshold"]))
    >>> plot_pareto(t1, t2, pathlib.Path(tempfile.mkdtemp()) / "p.png").exists()
    True
    """
    fig = _figure(7, 5)
    ax = fig.subplots()
    ax.plot(table_i["avg_filling"], np.maximum(table_i["avg_delay"], ZERO_FLOOR), "o-", color="black",
            label="utilisation (θ 30–100 %)")
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
    for color, (cap, rows) in zip(colors, table_ii.groupby(level=0)):
        ax.plot(rows["avg_filling"], np.maximum(rows["avg_delay"], ZERO_FLOOR), "s-", color=color,
                label=f"delay ≤ {cap:g} min/day (θ 70–100 %)")
    if paper_i is not None:
        ax.plot(paper_i["avg_filling"], np.maximum(paper_i["avg_delay"], ZERO_FLOOR), "o:", color="black", alpha=0.5,
                label="paper, utilisation")
    if paper_ii is not None:
        for color, (cap, rows) in zip(colors, paper_ii.groupby(level=0)):
            ax.plot(rows["avg_filling"], np.maximum(rows["avg_delay"], ZERO_FLOOR), "s:", color=color, alpha=0.5)
    ax.set_yscale("log")
    ax.set_xlabel("average test-day filling (%)")
    ax.set_ylabel("average test-day delay per host (min)")
    ax.set_title("Delay against filling, every setting (paper dotted)")
    ax.legend(fontsize=8)
    return _save(fig, path)
