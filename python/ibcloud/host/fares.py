"""``ibcloud reproduce fares``: F R4, FaReS Cap-Boost (Ranadive ch. IV,
Algorithm 1; Figs. 15-18) on the host simulator.

The policy is the Rust ``fares`` controller (crates/ibcloud-control/src/
fares.rs, docs/fares.md); this module only builds scenarios, runs them
(in parallel, :func:`ibcloud.host.thrashing._run_all`), searches the scalers
on a training pair and judges the claims of
python/ibcloud/claims/fares.toml. Every number printed is labelled
**calibration** (the training pair, where the scalers are fitted),
**prediction** (the evaluation pairs: nothing fitted to them) or
**construction**; only prediction and qualitative rows decide the exit
status.

Set-up (F §4.6, §6.1): hosts A (8 PCPUs) and B (4), credit1; every
application on 4 single-vCPU VMs, two per host (the ``split`` placement of
``reproduce thrashing``); NAS skeletons of ``ibcloud-host`` (class B
patterns). The main application runs ``steps`` supersteps (scaled down
from class B: the ratio of degradations is a ratio of rates); the
background runs until the main has finished. Degradation = increase of the
main's run time over alone; for the background, alone rate ÷ consolidated
rate − 1 (bytes its ranks completed while the main ran). Ratio =
degradation(background) ÷ degradation(main) (F §9 item 8).

Scaler calibration (F R4): on the training pair (IS main, CG background:
F Table 2's pair, not a Fig. 17 pair) a bisection over the aggressiveness ``k`` (α, β, γ =
k × their defaults) stops when the achieved ratio is within F's σ of the
target; the evaluation pairs then run with the ``k`` found, never searched.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ibcloud.checks import Check, claims, complete, exit_status, render_scoreboard
from ibcloud.cli._args import integer
from ibcloud.host.ibmon import checks_of, write_summary
from ibcloud.host.thrashing import _run_all
from ibcloud.safeio import checked_ints, dumps_json

__all__ = ["PAIRS", "TRAIN", "TARGETS", "calibrate", "configure", "reproduce", "run"]

HOSTS = [{"name": "A", "pcpus": 8}, {"name": "B", "pcpus": 4}]   # F §6.1: 8 + 4 cores (the baseline)
#: The readings of F's unstated CPU layout: ``baseline`` = F §6.1's 8 + 4 cores (no CPU contention between the 8
#: single-vCPU VMs); ``contended`` = 2 + 2 PCPUs (the VMs of both applications share CPUs, 2:1), reported beside.
READINGS = {"baseline": HOSTS, "contended": [{"name": "A", "pcpus": 2}, {"name": "B", "pcpus": 2}]}
PLACE = ["A", "A", "B", "B"]
#: F Fig. 17's pairs: (main, background).
PAIRS = {"a": ("bt", "cg"), "b": ("lu", "cg"), "c": ("bt", "sp"), "d": ("lu", "ft"), "e": ("sp", "is"),
         "f": ("bt", "ft")}
#: The training pair of the scaler search (not in Fig. 17).
TRAIN = ("is", "cg")
#: Target degradation ratios (background : main) and the search's stopping rule: F's σ at 5:1 and 10:1; ±0.5 at
#: "≈ 1:1" (rule 2).
TARGETS = {1: 0.5, 5: 0.33, 10: 0.8}
#: F's averages over the six pairs (Fig. 17 bar labels, §4.6.2).
THESIS = {1: 1.0, 5: 5.0, 10: 10.36}
#: Supersteps of each main application at the default size (class B: BT 200, LU 250, SP 400, MG 20, IS 10):
#: about 3-4.4 s alone; beside IS (1.4 s of compute per superstep) the main runs 5 times longer, so that the
#: background's rate is read over several of its supersteps.
STEPS = {"bt": 12, "lu": 18, "sp": 50, "mg": 10, "is": 3}
#: The skeletons' default scalers (docs/fares.md): α, β, γ; the search scales them by k.
SCALERS = (-0.6, -0.3, -0.1)
K_RANGE = (0.01, 10.0)
INF = float("inf")


def _fares(main: List[str], bg: List[str], target: float, k: float, monitor: bool = False,
           sl: str = "0/1") -> Dict[str, Any]:
    """A ``[[controllers]]`` table: ``sl`` 0/1 = main high, background low;
    1/1 = both low at equal shares (Fig. 16's SL 1/1)."""
    a, b, g = (k * s for s in SCALERS)
    c: Dict[str, Any] = {"kind": "fares", "alpha": a, "beta": b, "gamma": g, "cpus": 12}
    if sl == "1/1":
        c.update(low=main + bg, ratio=1)
    else:
        c.update(high=main, low=bg, ratio=target)
    if monitor:
        c["monitor-only"] = True
    return c


def _ranks(tag: str, bench: str, n: int = 4) -> List[str]:
    return [f"{tag}-{bench}{r}" for r in range(n)]


def _pair_scenario(main: str, bg: str, steps: int, duration: float, ctl: Optional[Dict[str, Any]] = None,
                   with_main: bool = True, with_bg: bool = True, main_compute: Optional[str] = None,
                   hosts: Optional[List[Dict[str, Any]]] = None) -> Dict[str, Any]:
    """The main (``steps`` supersteps) and the background (until the end)
    NAS skeletons, 4 ranks each, two per host."""
    vms: List[Dict[str, Any]] = []
    wls: List[Dict[str, Any]] = []
    for tag, bench, on, it in (("m", main, with_main, steps), ("b", bg, with_bg, 10 ** 6)):
        if not on:
            continue
        ranks = _ranks(tag, bench)
        vms += [{"name": n, "host": h} for n, h in zip(ranks, PLACE)]
        wl: Dict[str, Any] = {"kind": "nas", "benchmark": bench, "ranks": ranks, "iterations": it}
        if tag == "m" and main_compute:
            wl["compute"] = main_compute
        wls.append(wl)
    sc: Dict[str, Any] = {"duration": f"{duration:.3f}s", "sample-interval": "100ms", "hosts": hosts or HOSTS,
                          "vms": vms, "workloads": wls}
    if ctl is not None:
        sc["controllers"] = [ctl]
    return sc


def _bg_rate(result: Any, bg: str, until: float) -> float:
    """Bytes per second the background's ranks completed up to ``until``."""
    s = result.samples()
    s = s[s.vm.str.startswith("b-") & (s.time_s <= until + 1e-9)]
    return float(s.bytes.sum()) / until if until > 0 else 0.0


def _main_time(result: Any) -> float:
    w = result.workloads()
    t = w[w.vm.str.startswith("m-")].finish_s.iloc[0]
    return INF if t is None or t != t else float(t)


def _ratio(d_bg: float, d_main: float) -> float:
    if d_main <= 0:
        return INF if d_bg > 0 else float("nan")
    return d_bg / d_main


def _ratio_text(x: float) -> str:
    """A degradation ratio for the reports, in words where it is not a number.

    >>> _ratio_text(4.61), _ratio_text(float("nan")), _ratio_text(float("inf"))
    ('4.61', 'undefined (0/0)', 'unbounded')
    """
    if x != x:
        return "undefined (0/0)"
    if math.isinf(x):
        return "unbounded"
    return f"{x:.2f}"


def _records(result: Any) -> List[Dict[str, Any]]:
    """The FaReS controller's action log of a run (time, VM, observed, price, cap)."""
    out = []
    for c in result.controllers():
        for r in c.get("records", []):
            out.append({"time_s": r["time"] * 1e-12, "vm": result.vm_names[r["vm"]], "observed": r["observed"],
                        "price": r["price"], "level": r["balance"], "cap": r["cap"]})
    return out


class _Pair:
    """One (main, background) pair: the main's time alone, the background's
    alone run (its rate is read up to the same instant as in each
    consolidated run, so a bursty background such as IS is compared phase
    for phase), and the judging of consolidated runs."""

    def __init__(self, main: str, bg: str, steps: int, main_compute: Optional[str], t0: float,
                 hosts: List[Dict[str, Any]]):
        self.main, self.bg, self.steps, self.compute, self.t0 = main, bg, steps, main_compute, t0
        self.hosts = hosts
        self.bg_alone: Any = None

    def alone_scenarios(self) -> List[Dict[str, Any]]:
        return [_pair_scenario(self.main, self.bg, self.steps, 4 * self.t0, with_main=False, hosts=self.hosts)]

    def scenario(self, ctl: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        return _pair_scenario(self.main, self.bg, self.steps, 4 * self.t0, ctl, main_compute=self.compute,
                              hosts=self.hosts)

    def judge(self, result: Any) -> Dict[str, Any]:
        tm = _main_time(result)
        if tm == INF:
            return {"t_main": None, "d_main": INF, "d_bg": float("nan"), "ratio": 0.0}
        rate = _bg_rate(result, self.bg, tm)
        r0 = _bg_rate(self.bg_alone, self.bg, tm)
        d_main = tm / self.t0 - 1
        d_bg = r0 / rate - 1 if rate > 0 else INF
        return {"t_main": tm, "d_main": d_main, "d_bg": d_bg, "ratio": _ratio(d_bg, d_main)}

    def ctl(self, target: float, k: float, monitor: bool = False) -> Dict[str, Any]:
        return _fares(_ranks("m", self.main), _ranks("b", self.bg), target, k, monitor)


def _pairs(specs: List[Tuple[str, str, int, Optional[str]]], workers: Optional[int],
           hosts: List[Dict[str, Any]]) -> List[_Pair]:
    """Pairs with their alone references (two parallel batches; runs are
    deterministic, so the training pair's are reused across targets)."""
    key = json.dumps([specs, hosts])
    if key in _ALONE:
        return _ALONE[key]
    mains = _run_all([_pair_scenario(m, b, st, 600, with_bg=False, main_compute=c, hosts=hosts)
                      for m, b, st, c in specs], workers)
    pairs = [_Pair(m, b, st, c, _main_time(r), hosts) for (m, b, st, c), r in zip(specs, mains)]
    for p, r in zip(pairs, _run_all([p.alone_scenarios()[0] for p in pairs], workers)):
        p.bg_alone = r
    _ALONE.clear()  # keep the last set only
    _ALONE[key] = pairs
    return pairs


_ALONE: Dict[str, List[_Pair]] = {}


@checked_ints
def calibrate(target: int, steps: int = STEPS["is"], iterations: int = 6, reading: str = "baseline",
              workers: Optional[int] = None) -> Dict[str, Any]:
    """The scaler search of F R4 on the training pair (IS main, CG
    background): bisection of the aggressiveness ``k`` in log space over
    :data:`K_RANGE` (the ratio rises with ``k``: more charge-back on the
    background) until the ratio is within F's σ of ``target`` or
    ``iterations`` runs are spent. Returns ``k``, the ratio reached, every
    probe, and ``reachable`` (False when the target lies outside the
    ratios of the range's ends: then the nearer end is used).

    >>> calibrate(3)
    Traceback (most recent call last):
    ...
    ValueError: calibrate: target must be one of 1, 5, 10, got 3
    """
    if target not in TARGETS:
        raise ValueError(f"calibrate: target must be one of {', '.join(map(str, TARGETS))}, got {target}")
    tol = TARGETS[target]
    pair = _pairs([(TRAIN[0], TRAIN[1], steps, None)], workers, READINGS[reading])[0]
    lo, hi = K_RANGE
    ends = [pair.judge(r) for r in _run_all([pair.scenario(pair.ctl(target, k)) for k in (lo, hi)], workers)]
    probes = [{"k": lo, **ends[0]}, {"k": hi, **ends[1]}]
    r_lo, r_hi = ends[0]["ratio"], ends[1]["ratio"]
    out = {"target": target, "pair": list(TRAIN), "t0": pair.t0, "probes": probes}
    if not r_lo - tol <= target <= r_hi + tol:
        best = probes[0] if abs(r_lo - target) <= abs(r_hi - target) else probes[1]
        return {**out, "k": best["k"], "ratio": best["ratio"], "reachable": False}
    best = min(probes, key=lambda p: abs(p["ratio"] - target))
    for _ in range(iterations):
        if abs(best["ratio"] - target) <= tol:
            break
        k = math.sqrt(lo * hi)
        p = {"k": k, **pair.judge(_run_all([pair.scenario(pair.ctl(target, k))], workers)[0])}
        probes.append(p)
        if p["ratio"] < target:
            lo = k
        else:
            hi = k
        if abs(p["ratio"] - target) < abs(best["ratio"] - target):
            best = p
    return {**out, "k": best["k"], "ratio": best["ratio"], "reachable": True}


def _fig17(ks: Dict[int, float], steps_scale: float, reading: str, workers: Optional[int],
           keys: str = "abcdef") -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """Every pair (of ``keys``): alone, Thrash (no FaReS), monitor-only, and FaReS at each target."""
    specs = [(main, bg, max(1, round(STEPS[main] * steps_scale * (5 if bg == "is" else 1))), None)
             for main, bg in (PAIRS[k] for k in keys)]
    pairs = dict(zip(keys, _pairs(specs, workers, READINGS[reading])))
    cases = [(key, name, ctl) for key, p in pairs.items()
             for name, ctl in [("thrash", None), ("monitor", p.ctl(1, 1.0, monitor=True))]
             + [(t, p.ctl(t, ks[t])) for t in TARGETS]]
    results = _run_all([pairs[key].scenario(ctl) for key, _, ctl in cases], workers)
    out: Dict[str, Any] = {key: {"main": p.main, "bg": p.bg, "steps": p.steps, "t0": p.t0}
                           for key, p in pairs.items()}
    logs = []
    for (key, name, _), r in zip(cases, results):
        out[key][str(name)] = pairs[key].judge(r)
        for row in _records(r):
            logs.append({"pair": key, "case": str(name), **row})
    return out, logs


def _fig15(workers: Optional[int], steps: int, reading: str = "baseline") -> Dict[str, Any]:
    """High-priority MG beside low-priority IS: requests completed per
    100 ms window by MG's four ranks and by IS's, without and with FaReS
    (target 5:1, k = 1)."""
    main, bg = "mg", "is"
    # MG alone: 0.383 s per superstep (F Table 1's calibration); 3× that bounds a consolidated run.
    dur = 3 * 0.383 * steps * (2 if reading == "contended" else 1) + 1
    runs = _run_all([_pair_scenario(main, bg, steps, dur, ctl, hosts=READINGS[reading]) for ctl in
                     (None, _fares(_ranks("m", main), _ranks("b", bg), 5, 1.0))], workers)
    out: Dict[str, Any] = {}
    for name, r in zip(("without", "with"), runs):
        s = r.samples()
        tm = _main_time(r)
        s = s[s.time_s <= tm + 1e-9]
        per = s.groupby([s.time_s.round(6), s.vm.str[:2]]).requests.sum().unstack(fill_value=0)
        series = {"MG (high)": per.get("m-", per.iloc[:, 0] * 0).astype(float).tolist(),
                  "IS (low)": per.get("b-", per.iloc[:, 0] * 0).astype(float).tolist()}
        times = [float(t) for t in per.index]
        mg = series["MG (high)"]
        mean = statistics.fmean(mg) if mg else 0.0
        cv = statistics.pstdev(mg) / mean if mean > 0 else INF
        out[name] = {"t_main": tm, "times": times, "series": series, "mg_mean": mean, "mg_cv": cv,
                     "is_total": sum(series["IS (low)"])}
    return out


def _fig16(workers: Optional[int], steps: int) -> Dict[str, Any]:
    """RDMA Write (2 MB, depth 100, fluid; client on A, server on B) beside
    MG-4 / MG-8: Required (MG alone), Thrash, SL 1/1, SL 0/1."""
    out: Dict[str, Any] = {}
    for n in (4, 8):
        ranks = [f"mg{r}" for r in range(n)]
        place = (["A", "B"] * n)[:n]
        vms = [{"name": r, "host": h} for r, h in zip(ranks, place)]
        mg = {"kind": "nas", "benchmark": "mg", "ranks": ranks, "iterations": steps}
        wr = {"kind": "rdma-write", "vm": "wc", "peer": "ws", "size": "2M", "depth": 100, "mode": "fluid"}
        both = vms + [{"name": "wc", "host": "A"}, {"name": "ws", "host": "B"}]

        def sc(ctl: Optional[Dict[str, Any]], alone: bool = False) -> Dict[str, Any]:
            s: Dict[str, Any] = {"duration": f"{3 * 0.383 * steps + 1:.3f}s", "sample-interval": "100ms",
                                 "hosts": HOSTS,
                                 "vms": vms if alone else both, "workloads": [mg] if alone else [mg, wr]}
            if ctl:
                s["controllers"] = [ctl]
            return s

        cases = {"required": sc(None, True), "thrash": sc(None),
                 "sl11": sc(_fares(ranks, ["wc"], 1, 1.0, sl="1/1")),
                 "sl01": sc(_fares(ranks, ["wc"], 1, 1.0))}
        res = dict(zip(cases, _run_all(list(cases.values()), workers)))
        row = {}
        for name, r in res.items():
            w = r.workloads().set_index("vm")
            row[name] = {"mg_s": float(w.loc["mg0", "finish_s"]),
                         "write_mib_s": None if name == "required" else float(w.loc["wc", "hw_mib_s"])}
        out[f"mg{n}"] = row
    return out


def _fig18(workers: Optional[int], rounds: int) -> Dict[str, Any]:
    """Two MPI map-reduce sorts (4 VMs each, 2 per host); MMR-2 at I/O ratio
    1:m, MMR-1 at 1:1 rerun until MMR-2 finishes: each alone, without
    FaReS, with FaReS (MMR-1 high, MMR-2 low, target ratio m)."""
    out: Dict[str, Any] = {}
    for m in (5, 10, 20):
        def sc(which: Tuple[bool, bool], ctl: bool, duration: float = 600.0) -> Dict[str, Any]:
            vms, wls = [], []
            for inst, on, ratio, it in ((1, which[0], "1:1", 10 ** 6), (2, which[1], f"1:{m}", rounds)):
                if not on:
                    continue
                names = [f"mmr{inst}-{k}" for k in range(4)]
                vms += [{"name": v, "host": h} for v, h in zip(names, PLACE)]
                wls += [{"kind": "mapreduce-sort", "vm": names[0], "peer": names[2], "io-ratio": ratio,
                         "iterations": it},
                        {"kind": "mapreduce-sort", "vm": names[3], "peer": names[1], "io-ratio": ratio,
                         "iterations": it}]
            s: Dict[str, Any] = {"duration": f"{duration:.3f}s", "sample-interval": "100ms", "hosts": HOSTS, "vms": vms,
                                 "workloads": wls}
            if ctl:
                s["controllers"] = [{"kind": "fares", "high": [f"mmr1-{k}" for k in range(4)],
                                     "low": [f"mmr2-{k}" for k in range(4)], "ratio": m, "cpus": 12}]
            return s

        alone2 = _run_all([sc((False, True), False)], workers)[0]
        bound = 6 * float(alone2.workloads().set_index("vm").loc["mmr2-0", "finish_s"]) + 1
        res = {"alone2": alone2, **dict(zip(["thrash", "fares"], _run_all(
            [sc((True, True), False, bound), sc((True, True), True, bound)], workers)))}
        t2 = {n: float(r.workloads().set_index("vm").loc["mmr2-0", "finish_s"]) for n, r in res.items()}
        # MMR-1's rate: rounds completed (its latency samples) per second while MMR-2 ran.
        alone1 = _run_all([sc((True, False), False) | {"duration": f"{t2['alone2']:.3f}s"}], workers)[0]

        def rate1(r: Any, until: float) -> float:
            lat = r.latencies()
            return float(((lat.vm == "mmr1-0") & (lat.time_s <= until)).sum()) / until

        r1 = rate1(alone1, t2["alone2"])
        row: Dict[str, Any] = {"alone2_s": t2["alone2"], "mmr1_alone_rounds_s": r1}
        for n in ("thrash", "fares"):
            rr = rate1(res[n], t2[n])
            row[n] = {"mmr2_s": t2[n], "d_mmr2": t2[n] / t2["alone2"] - 1,
                      "d_mmr1": r1 / rr - 1 if rr > 0 else INF}
        out[f"1:{m}"] = row
    return out


def _mean_sd(xs: List[float]) -> Tuple[float, float]:
    fin = [x for x in xs if math.isfinite(x)]
    if len(fin) < len(xs) or not fin:
        return INF, INF
    return statistics.fmean(fin), statistics.pstdev(fin) if len(fin) > 1 else 0.0


def _checks(s: Dict[str, Any]) -> List[Check]:
    reg = claims("fares")
    out: List[Check] = []
    for t, cid in ((1, "CAL-1"), (5, "CAL-5"), (10, "CAL-10")):
        c = s["calibration"][str(t)]
        reach = "" if c["reachable"] else " (target outside the search range's ratios: nearest end used)"
        out.append(reg[cid].judge(abs(c["ratio"] - t) <= TARGETS[t],
                                  f"k = {c['k']:.3g}: ratio {c['ratio']:.2f}:1 on {TRAIN[0].upper()} vs {TRAIN[1].upper()}{reach}"))
    f17 = s["fig17"]
    keys = list(f17)
    ratios = {t: [f17[k][str(t)]["ratio"] for k in keys] for t in TARGETS}
    thrash = [f17[k]["thrash"]["ratio"] for k in keys]

    def fmt(xs: List[float]) -> str:
        return ", ".join(f"({k}) {_ratio_text(x)}" for k, x in zip(keys, xs))

    def stat(x: float) -> str:
        return f"{x:.2f}" if math.isfinite(x) else "undefined (not every pair's ratio is a number)"

    m1, _ = _mean_sd(ratios[1])
    out.append(reg["F17-1"].judge(abs(m1 - 1) <= 0.5, f"mean {stat(m1)}: {fmt(ratios[1])}; Thrash {fmt(thrash)}",
                                  shape=math.isfinite(m1) and abs(m1 - 1) < abs(_mean_sd(thrash)[0] - 1)))
    for t, cid, tol, sd_bound in ((5, "F17-5", 1.0, 0.34), (10, "F17-10", 0.8, 0.9)):
        m, sd = _mean_sd(ratios[t])
        mean_ok = abs(m - THESIS[t]) <= tol
        out.append(reg[cid].judge(mean_ok, f"mean {stat(m)}, σ {stat(sd)}: {fmt(ratios[t])}",
                                  shape=math.isfinite(m) and m > m1))
        # F's σ says how consistently FaReS reaches the target: one pair has no spread, and a small spread
        # around a missed mean (e.g. caps that change nothing) is no evidence of it.
        if len(keys) >= 2:
            out.append(reg[f"{cid}-sd"].judge(
                mean_ok and sd <= sd_bound,
                f"σ {stat(sd)}" + ("" if mean_ok else f" around a mean of {stat(m)}, off the target: not judged alone")))
    order = [ratios[1][i] < ratios[5][i] < ratios[10][i] for i in range(len(keys))]
    out.append(reg["F17-order"].judge(all(order), f"{sum(order)}/{len(order)} pairs in order"))
    ovh = [abs(f17[k]["monitor"]["d_main"] - f17[k]["thrash"]["d_main"]) * 100 for k in keys]
    out.append(reg["OVH"].judge(max(ovh) < 1.0, f"largest change of the main's degradation {max(ovh):.3f} points"))
    if "fig15" in s:
        w, wo = s["fig15"]["with"], s["fig15"]["without"]
        ok = w["mg_mean"] > wo["mg_mean"] and w["mg_cv"] < wo["mg_cv"] and w["is_total"] < wo["is_total"]
        out.append(reg["F15"].judge(ok, f"MG completions/window mean {wo['mg_mean']:.1f} → {w['mg_mean']:.1f}, "
                                        f"CV {wo['mg_cv']:.2f} → {w['mg_cv']:.2f}; IS completions "
                                        f"{wo['is_total']:.0f} → {w['is_total']:.0f} (without → with)"))
    if "fig16" in s:
        for n, cid in ((4, "F16-MG4"), (8, "F16-MG8")):
            r = s["fig16"][f"mg{n}"]
            out.append(reg[cid].judge(r["sl11"]["mg_s"] < r["thrash"]["mg_s"],
                                      f"MG-{n} {r['required']['mg_s']:.2f} s alone, Thrash {r['thrash']['mg_s']:.2f}, "
                                      f"SL 1/1 {r['sl11']['mg_s']:.2f}, SL 0/1 {r['sl01']['mg_s']:.2f}"))
        ok = all(s["fig16"][f"mg{n}"]["sl01"]["mg_s"] < s["fig16"][f"mg{n}"]["sl11"]["mg_s"]
                 and s["fig16"][f"mg{n}"]["sl01"]["write_mib_s"] < s["fig16"][f"mg{n}"]["sl11"]["write_mib_s"]
                 for n in (4, 8))
        out.append(reg["F16-SL01"].judge(ok, "; ".join(
            f"MG-{n}: write {s['fig16'][f'mg{n}']['sl11']['write_mib_s']:.0f} (SL 1/1) vs "
            f"{s['fig16'][f'mg{n}']['sl01']['write_mib_s']:.0f} MiB/s (SL 0/1)" for n in (4, 8))))
    if "fig18" in s:
        f18 = s["fig18"]
        d10 = f18["1:10"]["thrash"]["d_mmr2"]
        out.append(reg["F18-thrash"].judge(abs(d10 * 100 - 1600) <= 100, f"MMR-2 {d10:+.0%} at 1:10 without FaReS",
                                           shape=d10 > 1.0))
        # Ideal (our reading): each instance degrades by its I/O share's worth: MMR-2 by 1/m, MMR-1 by m.
        ideal_ok = all(f18[r]["thrash"]["d_mmr2"] > 2 * (1 / m) and f18[r]["thrash"]["d_mmr1"] > 2 * 0
                       for r, m in (("1:5", 5), ("1:10", 10)))
        out.append(reg["F18-ideal"].judge(ideal_ok, "; ".join(
            f"{r}: MMR-1 {f18[r]['thrash']['d_mmr1']:+.0%}, MMR-2 {f18[r]['thrash']['d_mmr2']:+.0%}"
            for r in ("1:5", "1:10"))))
        imp = all(f18[r]["fares"]["d_mmr1"] < f18[r]["thrash"]["d_mmr1"]
                  and f18[r]["fares"]["d_mmr2"] < f18[r]["thrash"]["d_mmr2"] for r in ("1:5", "1:10"))
        out.append(reg["F18-improve"].judge(imp, "; ".join(
            f"{r}: MMR-1 {f18[r]['thrash']['d_mmr1']:+.0%} → {f18[r]['fares']['d_mmr1']:+.0%}, MMR-2 "
            f"{f18[r]['thrash']['d_mmr2']:+.0%} → {f18[r]['fares']['d_mmr2']:+.0%}" for r in ("1:5", "1:10"))))

        def change(r: str) -> float:
            a = _ratio(f18[r]["thrash"]["d_mmr1"], f18[r]["thrash"]["d_mmr2"])
            b = _ratio(f18[r]["fares"]["d_mmr1"], f18[r]["fares"]["d_mmr2"])
            return abs(b / a - 1) if a and math.isfinite(a) and math.isfinite(b) else INF

        out.append(reg["F18-20"].judge(change("1:20") < change("1:10"),
                                       f"FaReS changes the ratio by {change('1:20'):.0%} at 1:20, "
                                       f"{change('1:10'):.0%} at 1:10"))
    return complete("fares", out, "not run with these options (--no-fig15 / --no-fig16 / --no-fig18)")


@checked_ints
def reproduce(scale: int = 4, do_fig15: bool = True, do_fig16: bool = True, do_fig18: bool = True,
              iterations: int = 6, workers: Optional[int] = None, contended: bool = True,
              pairs: str = "abcdef") -> Dict[str, Any]:
    """Runs the calibration, then everything else; returns rows, action
    logs and checks. ``scale`` is the size in quarters of the default
    (4 = default; 1 = the tour's reduced size). ``contended`` adds the
    ``contended`` reading of the CPU layout (:data:`READINGS`), with its own
    scaler search, beside the baseline (judged).

    >>> s = reproduce(scale=1, do_fig15=False, do_fig16=False, do_fig18=False, iterations=0,
    ...               contended=False, pairs="a")
    >>> [(c["id"], c["verdict"]) for c in s["checks"]][:3]   # the search: calibration rows
    [('CAL-1', 'calibration'), ('CAL-5', 'calibration'), ('CAL-10', 'calibration')]
    >>> s["fig17"]["a"]["thrash"]["d_main"] < 0.01   # baseline: BT is not degraded by CG (the cause)
    True
    """
    if scale < 1:
        raise ValueError("scale must be at least 1")
    if not pairs or any(k not in PAIRS for k in pairs) or len(set(pairs)) != len(pairs):
        raise ValueError(f"pairs: letters of Fig. 17's pairs (a-f), each once, got '{pairs}'")
    f = scale / 4
    s: Dict[str, Any] = {"scale": scale, "readings": {}}
    logs: List[Dict[str, Any]] = []
    for reading in ["baseline"] + (["contended"] if contended else []):
        cal = {str(t): calibrate(t, max(1, round(STEPS["is"] * f)), iterations, reading, workers) for t in TARGETS}
        ks = {t: cal[str(t)]["k"] for t in TARGETS}
        f17, log = _fig17(ks, f, reading, workers, pairs)
        s["readings"][reading] = {"hosts": READINGS[reading], "calibration": cal, "k": ks, "fig17": f17}
        logs += [{"reading": reading, **row} for row in log]
    s["calibration"] = s["readings"]["baseline"]["calibration"]
    s["fig17"] = s["readings"]["baseline"]["fig17"]
    if do_fig15:
        s["fig15"] = _fig15(workers, max(1, round(20 * f)))
        if contended:
            s["fig15_contended"] = _fig15(workers, max(1, round(20 * f)), "contended")
    if do_fig16:
        s["fig16"] = _fig16(workers, max(1, round(STEPS["mg"] * f)))
    if do_fig18:
        s["fig18"] = _fig18(workers, max(1, 10 * scale))
    s["action_log"] = logs
    s["checks"] = [c.as_dict() for c in _checks(s)]
    return s


def _print(s: Dict[str, Any]) -> None:
    print(f"F R4 / FaReS Cap-Boost on the host simulator (size {s['scale']}/4 of the default)")
    for reading, r in s["readings"].items():
        judged = "judged" if reading == "baseline" else "reported beside, not judged"
        hosts = " + ".join(str(h["pcpus"]) for h in r["hosts"])
        print(f"Reading '{reading}' (PCPUs {hosts}; {judged})")
        print(f"  scaler search on the training pair {TRAIN[0].upper()} (main) vs {TRAIN[1].upper()} (background)"
              " — calibration:")
        for t, c in r["calibration"].items():
            probes = ", ".join(f"k {p['k']:.3g} → {p['ratio']:.2f}" for p in c["probes"])
            print(f"    target {t}:1: k = {c['k']:.3g}, ratio {c['ratio']:.2f}:1"
                  f"{'' if c['reachable'] else ' (unreachable in the range)'}   [{probes}]")
        print("  Fig. 17 NAS pairs: degradation main/background, ratio — prediction")
        print(f"    {'pair':<11} {'alone s':>7} {'Thrash':>21} {'1:1':>21} {'5:1':>21} {'10:1':>21}")
        for k, p in r["fig17"].items():
            cells = [f"{p[c]['d_main']:+.1%}/{p[c]['d_bg']:+.0%} {p[c]['ratio']:6.2f}" for c in ("thrash", "1", "5", "10")]
            print(f"    ({k}) {p['main'].upper()}-{p['bg'].upper():<4} {p['t0']:>7.2f} " + " ".join(f"{c:>21}" for c in cells))
        for t in TARGETS:
            m, sd = _mean_sd([p[str(t)]["ratio"] for p in r["fig17"].values()])
            print(f"    target {t}:1: mean {m:.2f}, σ {sd:.2f}   (thesis {THESIS[t]:.2f}"
                  f"{'' if t == 1 else f', σ {TARGETS[t]}'})")
    for key in ("fig15", "fig15_contended"):
        if key not in s:
            continue
        for n in ("without", "with"):
            r = s[key][n]
            print(f"Fig. 15 ({'baseline' if key == 'fig15' else 'contended, not judged'}) {n} FaReS: MG completions/100 ms mean {r['mg_mean']:.1f} (CV {r['mg_cv']:.2f}); "
                  f"IS {r['is_total']:.0f} completions; MG done {r['t_main']:.2f} s (qualitative)")
    if "fig16" in s:
        print("Fig. 16 RDMA Write vs MG (MG run time s; write MiB/s) — qualitative")
        for n, r in s["fig16"].items():
            print("  " + n.upper() + ": " + ", ".join(
                f"{c} {v['mg_s']:.2f}" + (f" / {v['write_mib_s']:.0f}" if v["write_mib_s"] is not None else "")
                for c, v in r.items()))
    if "fig18" in s:
        print("Fig. 18 MMR (degradation MMR-1 / MMR-2; prediction at 1:10 without FaReS)")
        for r, v in s["fig18"].items():
            print(f"  {r:>5}: Thrash {v['thrash']['d_mmr1']:+.0%} / {v['thrash']['d_mmr2']:+.0%}   "
                  f"FaReS {v['fares']['d_mmr1']:+.0%} / {v['fares']['d_mmr2']:+.0%}")
    render_scoreboard("fares", checks_of(s))


def write_outputs(s: Dict[str, Any], out: str) -> None:
    """``OUT/summary.json``, ``OUT/actions.parquet`` (the FaReS action log
    of every Fig. 17 run: reading, pair, case, time_s, vm, observed
    requests, price = Δcap, level, cap) and ``OUT/fares.png`` (cap
    trajectories of pair (a) and the Fig. 15 series).

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> write_outputs({"checks": [], "action_log": [{"reading": "baseline", "pair": "a", "case": "5", "time_s": 0.09,
    ...                "vm": "b-cg0", "observed": 420.0, "price": -16.0, "level": 84.0, "cap": 84}]}, d)
    >>> sorted(p.name for p in Path(d).iterdir())
    ['actions.parquet', 'fares.png', 'summary.json']
    """
    import pandas as pd

    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    logs = s.get("action_log", [])
    write_summary({k: v for k, v in s.items() if k != "action_log"}, out)
    df = pd.DataFrame(logs, columns=["reading", "pair", "case", "time_s", "vm", "observed", "price", "level", "cap"])
    df.to_parquet(d / "actions.parquet", index=False)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    a = df[(df.pair == "a") & df.vm.str.startswith("b-")]
    for (reading, case, vm), g in a.groupby(["reading", "case", "vm"]):
        if vm.endswith("0") and case in ("1", "5", "10"):
            axes[0].plot(g.time_s, g.level, "-" if reading == "baseline" else "--",
                         label=f"{reading}, target {case}:1, {vm}")
    axes[0].set(title="Fig. 17 (a) BT vs CG: background cap (CG rank 0)", xlabel="time (s)", ylabel="cap (%)")
    if len(a):
        axes[0].legend(fontsize=7)
    if "fig15" in s:
        for n, ls in (("without", "--"), ("with", "-")):
            r = s["fig15"][n]
            for vm, ys in r["series"].items():
                axes[1].plot(r["times"][:len(ys)], ys, ls, label=f"{vm} {n} FaReS")
        axes[1].set(title="Fig. 15: completions per 100 ms", xlabel="time (s)", ylabel="requests")
        axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(d / "fares.png", dpi=100)
    plt.close(fig)


def _pairs_arg(text: str) -> str:
    """``--pairs``: letters of Fig. 17's pairs, each once.

    >>> _pairs_arg("ab")
    'ab'
    >>> _pairs_arg("az")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: letters of Fig. 17's pairs (a-f), each once, got 'az'
    """
    if not text or any(k not in PAIRS for k in text) or len(set(text)) != len(text):
        raise argparse.ArgumentTypeError(f"letters of Fig. 17's pairs (a-f), each once, got '{text}'")
    return text


def configure(parser: argparse.ArgumentParser) -> None:
    """Adds the reproduction's options.

    >>> p = argparse.ArgumentParser(); configure(p)
    >>> p.parse_args([]).scale
    4
    """
    parser.add_argument("--scale", type=integer(1), default=4,
                        help="size in quarters of the default (main supersteps, MMR rounds; default 4; the tour uses 1)")
    parser.add_argument("--search-steps", type=integer(0), default=6,
                        help="bisection runs of the scaler search per target (default 6)")
    parser.add_argument("--pairs", default="abcdef", type=_pairs_arg,
                        help="Fig. 17 pairs to run (letters a-f, default all; the F17 means are over these)")
    parser.add_argument("--no-fig15", action="store_true", help="skip Fig. 15 (MG vs IS time series)")
    parser.add_argument("--no-fig16", action="store_true", help="skip Fig. 16 (RDMA Write vs MG-4/MG-8)")
    parser.add_argument("--no-fig18", action="store_true", help="skip Fig. 18 (MPI map-reduce)")
    parser.add_argument("--no-contended", action="store_true",
                        help="skip the 'contended' CPU reading (2 + 2 PCPUs) of Fig. 17 reported beside the baseline")
    parser.add_argument("--threads", type=integer(1), default=None, metavar="N",
                        help="scenarios run at once (default: every CPU; results do not depend on it)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--out", default=None,
                        help="write summary.json, actions.parquet (the action logs) and fares.png into this folder")


def run(args: argparse.Namespace) -> int:
    """Runs, prints and ends with the scoreboard; exit status 1 when a
    prediction or qualitative claim that ran does not hold.

    >>> p = argparse.ArgumentParser(); configure(p)
    >>> a = p.parse_args(["--pairs", "a"]); a.scale = 0
    >>> run(a)
    Traceback (most recent call last):
    ...
    ValueError: scale must be at least 1
    """
    s = reproduce(args.scale, not args.no_fig15, not args.no_fig16, not args.no_fig18, args.search_steps,
                  args.threads, not args.no_contended, args.pairs)
    if args.out:
        write_outputs(s, args.out)
    s.pop("action_log", None)
    if args.json:
        print(dumps_json(s, indent=2, default=str))
    else:
        _print(s)
    return exit_status(checks_of(s))
