"""Virtualized hosts on the packet simulator (``ibcloud-host`` and
``ibcloud-control``): Xen credit1 / CFS-bandwidth CPU schedulers, guest
programs, VMM-bypass and SR-IOV adapters, CQ rings, IBMon.

Build a :class:`Scenario` (TOML, see docs/host.md), :func:`run` it, read the
results as pandas DataFrames:

>>> from ibcloud.host import EXAMPLE, Scenario, run
>>> r = run(Scenario.from_text(EXAMPLE))
>>> int(round(r.workloads().loc[0, "mib_s"], -1))   # calibration target: 930 MB/s
930
>>> sorted(r.samples().columns)[:3]
['bytes', 'cpu_pct', 'cqes']
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Union

import pandas as pd

from ibcloud import _native
from ibcloud.host.scenario import EXAMPLE, Scenario, locate
from ibcloud.safeio import checked_ints, dumps_json

__all__ = ["EXAMPLE", "HostResult", "Scenario", "locate", "run"]

PS = 1e-12


@functools.lru_cache(maxsize=1)
def _example() -> "HostResult":
    """The result of :data:`EXAMPLE` (shared by the examples below)."""
    return run(Scenario.from_text(EXAMPLE))


def _is_drx(report: Dict[str, Any]) -> bool:
    """A DRX controller's report (docs/drx.md) rather than a capping policy's."""
    return "responses" in report and "vmes" in report


class HostResult:
    """Results of one run: per-VM time series, per-request latencies,
    workload summaries, controller actions and reports.

    >>> _example().vm_names
    ['vm1', 'peer']
    """

    def __init__(self, raw: Dict[str, Any]):
        self.raw = raw
        self.vm_names: List[str] = raw["vms"]

    @property
    def end_s(self) -> float:
        """Simulated end time (s).

        >>> round(_example().end_s, 6)
        0.05
        """
        return self.raw["end"] * PS

    @property
    def events(self) -> int:
        """Host + network events processed.

        >>> _example().events > 10000
        True
        """
        return int(self.raw["events"])

    def samples(self) -> pd.DataFrame:
        """Per VM and interval: time_s, vm, cpu_pct, bytes, mib_s, cqes,
        ptime_s, latency_mean_us, requests.

        >>> s = _example().samples()
        >>> round(s[s.vm == "vm1"].cpu_pct.iloc[-1])   # the client busy-polls
        100
        """
        df = pd.DataFrame(self.raw["samples"])
        if df.empty:
            return pd.DataFrame(columns=["time_s", "vm", "cpu_pct", "bytes", "mib_s", "cqes", "ptime_s",
                                         "latency_mean_us", "requests"])
        df["time_s"] = df.pop("time") * PS
        df["vm"] = [self.vm_names[i] for i in df["vm"]]
        dt = df.groupby("vm")["time_s"].diff().fillna(df["time_s"])
        df["mib_s"] = df["bytes"] / dt.where(dt > 0, 1) / 1048576.0
        df["ptime_s"] = df.pop("ptime") * PS
        df["latency_mean_us"] = df.pop("latency_mean") * 1e-6
        return df

    def latencies(self) -> pd.DataFrame:
        """Every request: vm, time_s (completion), latency_us (Nectere).

        >>> list(_example().latencies().columns)
        ['vm', 'time_s', 'latency_us']
        """
        rows = self.raw["latencies"]
        return pd.DataFrame({
            "vm": [self.vm_names[r[0]] for r in rows],
            "time_s": [r[1] * PS for r in rows],
            "latency_us": [r[2] * 1e-6 for r in rows],
        })

    def latency_parts(self) -> pd.DataFrame:
        """Nectere's split of every request latency (F §5.2; docs/host.md):
        vm, time_s, ctime_us (server compute), wtime_us (request and reply
        with the HCAs and link), ptime_us (guest polling and bookkeeping);
        the three add up to the request's latency_us.

        >>> list(_example().latency_parts().columns)
        ['vm', 'time_s', 'ctime_us', 'wtime_us', 'ptime_us']
        """
        rows = self.raw.get("latency_parts", [])
        return pd.DataFrame({
            "vm": [self.vm_names[r[0]] for r in rows],
            "time_s": [r[1] * PS for r in rows],
            "ctime_us": [r[2] * 1e-6 for r in rows],
            "wtime_us": [r[3] * 1e-6 for r in rows],
            "ptime_us": [r[4] * 1e-6 for r in rows],
        })

    def workloads(self) -> pd.DataFrame:
        """One row per workload (completed, bytes, MiB/s, issue time, …).

        >>> _example().workloads().loc[0, "kind"]
        'rdma-write'
        """
        return pd.DataFrame(self.raw["workloads"])

    def actions(self) -> pd.DataFrame:
        """Every controller action: issued_s, applied_s, controller, vm, action, ok.

        >>> len(_example().actions())
        0
        """
        df = pd.DataFrame(self.raw["actions"])
        if df.empty:
            return pd.DataFrame(columns=["issued_s", "applied_s", "controller", "vm", "action", "ok"])
        df["issued_s"] = df.pop("issued") * PS
        df["applied_s"] = df.pop("applied") * PS
        return df

    def sm_pushes(self) -> pd.DataFrame:
        """Every push of the run's subnet manager (docs/host.md): who asked,
        the preset and parts, MADs, restart, when the SM got it and when it
        was in force (s), and any error.

        >>> list(_example().sm_pushes().columns)[:4]
        ['by', 'tag', 'policy', 'parts']
        """
        cols = ["by", "tag", "policy", "parts", "cc_sls", "received_s", "restart_s", "cc_mads", "qos_mads",
                "in_force_s", "spread_s", "error"]
        rows = [{"by": r["by"], "tag": r["tag"], "policy": r["request"]["preset"], "parts": r["request"]["parts"],
                 "cc_sls": r["request"]["cc_sls"], "received_s": r["received"] * PS, "restart_s": r["restart"] * PS,
                 "cc_mads": r["cc_mads"], "qos_mads": r["qos_mads"], "in_force_s": r["in_force"] * PS,
                 "spread_s": r["spread"] * PS, "error": r["error"]} for r in self.raw.get("sm", [])]
        return pd.DataFrame(rows, columns=cols)

    def controllers(self) -> List[Dict[str, Any]]:
        """The controllers' own reports (IBMon: per-VM averages, samples).

        >>> _example().controllers()
        []
        """
        return self.raw["controllers"]

    @checked_ints
    def ibmon(self, which: int = 0) -> pd.DataFrame:
        """IBMon samples of the ``which``-th IBMon controller.

        >>> _example().ibmon().empty
        True
        """
        reps = [c for c in self.controllers() if c.get("kind") == "ibmon"]
        if not reps:
            return pd.DataFrame(columns=["time_s", "vm", "interval_us", "cqes", "bytes", "raw_mib_s", "mib_s"])
        df = pd.DataFrame(reps[which]["samples"])
        if df.empty:
            return df
        df["time_s"] = df.pop("time") * PS
        df["interval_us"] = df.pop("interval") * 1e-6
        df["vm"] = [self.vm_names[i] for i in df["vm"]]
        return df

    def policy_records(self) -> pd.DataFrame:
        """The capping policies' action logs (FaReS, FreeMarket, IOShares):
        one row per (policy step, VM) with what the policy judged, the price
        and balance in force and the cap it set (0 = uncapped).

        >>> list(_example().policy_records().columns)
        ['policy', 'time_s', 'vm', 'observed', 'price', 'balance', 'cap']
        """
        cols = ["policy", "time_s", "vm", "observed", "price", "balance", "cap"]
        rows = [{"policy": c.get("kind"), "time_s": r["time"] * PS, "vm": self.vm_names[r["vm"]],
                 "observed": r["observed"], "price": r["price"], "balance": r["balance"], "cap": r["cap"]}
                for c in self.controllers() if not _is_drx(c) for r in c.get("records", [])]
        return pd.DataFrame(rows, columns=cols)

    def sphinx_steps(self) -> pd.DataFrame:
        """Every Sphinx controller's steps (docs/sphinx.md): per step and LP
        group, the PLs, LP, target, error, price, resource and the delays
        pushed (``delay_a``, ``delay_b``: CCT indices), and whether the
        actuator saturated.

        >>> _example().sphinx_steps().empty
        True
        """
        rows = [dict(r, controller=i, time_s=r["time"] * PS)
                for i, c in enumerate(self.controllers()) for r in c.get("sphinx", [])]
        return pd.DataFrame(rows)

    @checked_ints
    def drx_records(self, which: int = 0) -> pd.DataFrame:
        """The ``which``-th DRX controller's log (G §10.3; docs/drx.md): one
        row per control action — violation, price change, cap, epoch reset,
        hardware push and its time in force — with the victim's PD, δP,
        Δp/p, the price, δC and the cap, VMs and ensembles by name.

        >>> list(_example().drx_records().columns)[:5]
        ['time_s', 'kind', 'event', 'host', 'vm']
        """
        cols = ["time_s", "kind", "event", "host", "vm", "vme", "io", "pd", "dp", "rel", "price", "dc", "cap"]
        reps = [c for c in self.controllers() if _is_drx(c)]
        if not reps:
            return pd.DataFrame(columns=cols)
        rep = reps[which]
        hosts, vmes = rep.get("hosts", []), rep.get("vmes", [])

        def name(xs: List[str], i: Optional[int]) -> Optional[str]:
            return None if i is None else xs[i]

        rows = [{"time_s": r["time"] * PS, "kind": r["kind"], "event": r.get("event"),
                 "host": name(hosts, r.get("host")), "vm": name(self.vm_names, r.get("vm")),
                 "vme": name(vmes, r.get("vme")), **{k: r.get(k) for k in cols[6:]}}
                for r in rep.get("records", [])]
        return pd.DataFrame(rows, columns=cols)

    def summary(self) -> Dict[str, Any]:
        """A JSON-able summary (what ``--json`` prints).

        >>> _example().summary()["workloads"][0]["vm"]
        'vm1'
        """
        return {
            "end_s": self.end_s,
            "events": self.events,
            "workloads": self.raw["workloads"],
            "actions": len(self.raw["actions"]),
            "sm": self.raw.get("sm", []),
            "controllers": [{k: v for k, v in c.items() if k not in ("samples", "decisions", "records")}
                            for c in self.controllers()],
        }

    def write(self, out: Union[str, Path], plots: bool = True) -> List[Path]:
        """Writes samples, latencies, workloads, actions (and IBMon samples)
        as Parquet, summary.json, and PNG plots into ``out``.

        >>> import tempfile
        >>> sorted(p.name for p in _example().write(tempfile.mkdtemp(), plots=False))[:2]
        ['actions.parquet', 'latencies.parquet']
        """
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        files = []
        tables = {"samples": self.samples(), "latencies": self.latencies(), "workloads": self.workloads(),
                  "actions": self.actions()}
        if self.raw.get("latency_parts"):
            tables["latency_parts"] = self.latency_parts()
        if any(c.get("kind") == "ibmon" for c in self.controllers()):
            tables["ibmon"] = self.ibmon()
        if any("records" in c and not _is_drx(c) for c in self.controllers()):
            tables["policy_records"] = self.policy_records()
        if any(c.get("sphinx") for c in self.controllers()):
            tables["sphinx_steps"] = self.sphinx_steps()
        for i in range(sum(1 for c in self.controllers() if _is_drx(c))):
            tables["drx_records" + (f"_{i}" if i else "")] = self.drx_records(i)
        for name, df in tables.items():
            p = d / f"{name}.parquet"
            df.to_parquet(p, index=False)
            files.append(p)
        p = d / "summary.json"
        p.write_text(dumps_json(self.summary(), indent=2))
        files.append(p)
        if plots:
            files.extend(self._plots(d))
        return files

    def _plots(self, d: Path) -> List[Path]:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        s = self.samples()
        out = []
        if s.empty:
            return out
        fig, axes = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
        for vm, g in s.groupby("vm"):
            axes[0].plot(g["time_s"], g["mib_s"], label=vm)
            axes[1].plot(g["time_s"], g["cpu_pct"], label=vm)
        axes[0].set_ylabel("MiB/s completed")
        axes[1].set_ylabel("CPU % (of one PCPU)")
        axes[1].set_xlabel("simulated time (s)")
        axes[0].legend(fontsize="small")
        fig.tight_layout()
        p = d / "timeseries.png"
        fig.savefig(p, dpi=100)
        plt.close(fig)
        out.append(p)
        lat = self.latencies()
        if not lat.empty:
            fig, ax = plt.subplots(figsize=(6, 4))
            for vm, g in lat.groupby("vm"):
                ax.hist(g["latency_us"], bins=60, alpha=0.6, label=vm)
            ax.set_xlabel("request latency (us)")
            ax.legend(fontsize="small")
            p = d / "latency.png"
            fig.savefig(p, dpi=100)
            plt.close(fig)
            out.append(p)
        rec = self.policy_records()
        if not rec.empty:
            # Cap trajectories (0 = uncapped, drawn at 100) and Reso balances (the saw-tooth).
            fig, axes = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
            for (pol, vm), g in rec.groupby(["policy", "vm"]):
                axes[0].step(g["time_s"], g["cap"].where(g["cap"] > 0, 100), where="post", label=f"{vm} ({pol})")
                axes[1].plot(g["time_s"], g["balance"], label=f"{vm} ({pol})")
            axes[0].set_ylabel("CPU cap (%)")
            axes[1].set_ylabel("balance (Resos)")
            axes[1].set_xlabel("simulated time (s)")
            axes[0].legend(fontsize="small")
            fig.tight_layout()
            p = d / "policy.png"
            fig.savefig(p, dpi=100)
            plt.close(fig)
            out.append(p)
        return out


def run(scenario: Union[Scenario, Dict[str, Any], str, Path],
        progress: Optional[Callable[[float, float], None]] = None) -> HostResult:
    """Checks and runs a scenario (a :class:`Scenario`, a dict, TOML text or
    a path); ``progress(now_s, end_s)`` is called at every sample.

    >>> r = run(EXAMPLE.replace('"64k"', '"2k"'))
    >>> round(r.workloads().loc[0, "mib_s"])   # calibration target: 448 MB/s
    448
    """
    if isinstance(scenario, Path) or (isinstance(scenario, str) and "\n" not in scenario
                                      and scenario.endswith(".toml")):
        scenario = Scenario.load(scenario)
    elif isinstance(scenario, str):
        scenario = Scenario.from_text(scenario)
    elif isinstance(scenario, dict):
        scenario = Scenario(scenario)
    scenario.check()
    cb = None
    if progress is not None:
        cb = lambda now, end: progress(now * PS, end * PS)  # noqa: E731
    raw = json.loads(_native.host_run(scenario.to_json(), cb))
    return HostResult(raw)
