"""``ibcloud reproduce ibmon``: F R1-R2, IBMon (Ranadive ch. III, Figs. 4-6,
8-10) on the host simulator.

IBMon scans a VM's CQ ring from dom0 every Δ (read-only, CQEs carry no
timestamp) and estimates Σ byte_len / Δ. Every number is labelled
**prediction**, **calibration**, **construction** or **qualitative**; every
headline claim is a record of python/ibcloud/claims/ibmon.toml, judged there
and printed as the scoreboard at the end; only prediction and qualitative
rows decide the exit status. Tolerances follow
docs/reproductions/SCOREBOARD.md (docs/reproductions/ibmon.md says which
pre-run tolerance a rule replaced).

- R1 / Fig. 4: RDMA Read, 64 KB and 128 KB, fixed Δ swept 1-1000 µs.
  Baseline CQ sizing is perftest's (CQ = transmission depth, depth 100 ×
  2 for our two-entries-per-request rule); the variant with a small ring
  (depth 4, 8 entries) is printed beside it.
- R1 / Fig. 5: adaptive Δ (start = buffer / link rate, grow ×2 above the
  link maximum), accuracy per buffer size.
- R2 / Figs. 8-10: three VMs, VMs 2 and 3 throttled, one IBMon; accuracy
  per VM, and the overhead with the memory-contention model (its stall per
  page is our parameter: **construction**) and without (zero by
  construction).

"""

from __future__ import annotations

import argparse
import json
from typing import Any, Dict, List, Optional

from ibcloud.checks import Check, claims, complete, exit_status, render_scoreboard
from ibcloud.host import run as run_scenario

__all__ = ["configure", "reproduce", "run"]

LINK_MAX = 953.67  # 8 Gb/s data in MiB/s: IBMon's "fabric maximum" (construction)

#: Tolerances (registry python/ibcloud/claims/ibmon.toml; rules in docs/reproductions/SCOREBOARD.md).
TOL_PLATEAU = 0.01          # "reports the fabric max": within 1 % of it (fixed before running)
TOL_SWEET = 0.10            # "slight underestimation" at the best Δ: within 10 % (fixed before running)
LONG_BAND = (1 / 15, 1 / 5)  # "up to ~10×" under at the longest Δ: 5-15× (rule 2)
UNDER_LONG = 0.5            # the shape of that claim: at least 2× under (the pre-run tolerance)
TOL_FINE = 0.28             # Fig. 5: "within 27 %" at every granularity (rule 4: one unit of slack)
TOL_LARGE = 0.055           # Fig. 5: "within ~5 %" for large buffers ≥ 64 KB (rule 2)
TOL_MULTI = 0.16            # Fig. 9: "within 15 %" per VM (rule 4)
TOL_OVERHEAD = 0.06         # Fig. 10: "on average within 5 %" (rule 4; construction)
F_ITERATIONS = 20_000       # F §3.6.2


def _read(size: str, iterations: int, depth: int, cq: int, ibmon: Dict[str, Any]) -> Dict[str, Any]:
    sc = {"duration": "20s", "sample-interval": "10ms",
          "hosts": [{"name": "A"}, {"name": "B"}],
          "vms": [{"name": "c", "host": "A", "cq-entries": cq}, {"name": "s", "host": "B"}],
          "workloads": [{"kind": "rdma-read", "vm": "c", "peer": "s", "size": size, "iterations": iterations,
                         "depth": depth}],
          "controllers": [dict(kind="ibmon", vms=["c"], **ibmon)]}
    r = run_scenario(sc)
    w = r.workloads().iloc[0]
    rep = r.controllers()[0]["vms"][0]
    return {"actual": float(w["mib_s"]), "ibmon": rep["average_mib_s"], "lost": rep["lost_cqes"],
            "final_interval_us": r.controllers()[0]["final_interval_us"]}


def _fig4(sizes: List[str], intervals_us: List[float], iterations: int, depth: int) -> List[Dict[str, Any]]:
    rows = []
    for size in sizes:
        for iv in intervals_us:
            x = _read(size, iterations, depth, 2 * depth, {"interval": f"{iv}us", "adaptive": False,
                                                        "min-interval": "1us", "max-interval": "1000us"})
            x.update(size=size, interval_us=iv, depth=depth)
            x["ratio"] = (x["ibmon"] or 0.0) / x["actual"]
            rows.append(x)
    return rows


def _fig5(sizes: List[str], iterations: int) -> List[Dict[str, Any]]:
    rows = []
    for size in sizes:
        b = int(size[:-1]) * (1024 if size.endswith("k") else 1048576) if size[-1] in "kM" else int(size)
        start_us = min(max(b / (LINK_MAX * 1048576) * 1e6, 1.0), 1000.0)
        x = _read(size, iterations, 16, 32, {"interval": f"{start_us:.3f}us", "adaptive": True})
        x.update(size=size, start_interval_us=start_us)
        x["error"] = (x["ibmon"] or 0.0) / x["actual"] - 1
        rows.append(x)
    return rows


def _multi(iterations: int, overhead: bool, average: str = "busy") -> Dict[str, Any]:
    vms = [{"name": f"vm{i}", "host": "A", "cq-entries": 64} for i in (1, 2, 3)]
    vms += [{"name": f"srv{i}", "host": "B"} for i in (1, 2, 3)]
    wls = []
    for i, thr in ((1, None), (2, "150us"), (3, "300us")):
        w = {"kind": "rdma-read", "vm": f"vm{i}", "peer": f"srv{i}", "size": "64k", "iterations": iterations,
             "depth": 8}
        if thr:
            w["throttle"] = thr
        wls.append(w)
    mon: Dict[str, Any] = {"kind": "ibmon", "interval": "70us", "adaptive": True, "vms": ["vm1", "vm2", "vm3"]}
    if overhead:
        mon["overhead"] = "memory-contention"
    mon["average-over"] = average
    sc = {"duration": "20s", "hosts": [{"name": "A"}, {"name": "B"}], "vms": vms, "workloads": wls,
          "controllers": [mon]}
    r = run_scenario(sc)
    w = r.workloads().set_index("vm")
    rep = r.controllers()[0]
    samples = r.ibmon()
    out = {"overhead_model": rep["overhead_model"], "vms": []}
    for v in rep["vms"]:
        a = w.loc[v["vm"]]
        # IBMon's average over the VM's own run (the benchmark's window).
        g = samples[(samples.vm == v["vm"]) & (samples.time_s > a["start_s"]) & (samples.time_s <= a["finish_s"])]
        if average == "busy":
            g = g[g.cqes > 0]
        est = float(g["mib_s"].mean()) if len(g) else 0.0
        out["vms"].append({"vm": v["vm"], "actual": float(a["mib_s"]), "ibmon": est,
                           "time_s": float(a["finish_s"] - a["start_s"])})
    return out


def _dynamics(average: str) -> Dict[str, Any]:
    """Three VMs reading 64 KB until the end; VMs 2 and 3 are throttled to
    one request per 300 µs from 100 ms on (F Fig. 8). Per 10 ms window:
    actual bytes vs IBMon's estimate; lag = time after the change until the
    estimate stays within 15 % of the actual rate."""
    vms = [{"name": f"vm{i}", "host": "A", "cq-entries": 64} for i in (1, 2, 3)]
    vms += [{"name": f"srv{i}", "host": "B"} for i in (1, 2, 3)]
    wls = []
    for i in (1, 2, 3):
        w = {"kind": "rdma-read", "vm": f"vm{i}", "peer": f"srv{i}", "size": "64k", "depth": 8}
        if i > 1:
            w.update({"throttle": "300us", "throttle-from": "100ms"})
        wls.append(w)
    sc = {"duration": "250ms", "sample-interval": "10ms", "hosts": [{"name": "A"}, {"name": "B"}],
          "vms": vms, "workloads": wls,
          "controllers": [{"kind": "ibmon", "interval": "70us", "vms": ["vm1", "vm2", "vm3"],
                           "average-over": average}]}
    r = run_scenario(sc)
    samples = r.samples()
    mon = r.ibmon()
    out: Dict[str, Any] = {}
    for vm in ("vm2", "vm3"):
        act = samples[samples.vm == vm].set_index("time_s")["mib_s"]
        m = mon[mon.vm == vm]
        if average == "busy":
            m = m[m.cqes > 0]
        rows = []
        for t, a in act.items():
            g = m[(m.time_s > t - 0.01) & (m.time_s <= t)]
            rows.append((round(t, 3), float(a), float(g["mib_s"].mean()) if len(g) else 0.0))
        after = [(t, a, e) for t, a, e in rows if t > 0.1]
        lag = None
        for k, (t, a, e) in enumerate(after):
            if all(abs(e2 - a2) <= 0.15 * a2 for _, a2, e2 in after[k:]):
                lag = round((t - 0.1) * 1000, 1)
                break
        out[vm] = {"rows": rows, "lag_ms": lag}
    return out


def reproduce(iterations: int = 2000, sizes=("64k", "128k"), intervals_us=(1, 4, 16, 64, 128, 256, 1000),
              fig5_sizes=("4k", "16k", "64k", "256k", "1M")) -> Dict[str, Any]:
    """Runs R1 and R2; returns rows and checks.

    >>> s = reproduce(200, ["64k"], [4, 1000], ["64k"])
    >>> round(s["fig4"][0]["ibmon"], 2)   # Δ = 4 us: the plateau at the link maximum
    953.67
    """
    reg = claims("ibmon")
    checks: List[Check] = []
    span = min(intervals_us) <= 1 and max(intervals_us) >= 1000
    checks.append(reg["S1"].judge(
        {"64k", "128k"} <= set(sizes) and span and iterations == F_ITERATIONS,
        f"sizes {', '.join(sizes)}; Δ {min(intervals_us):g}-{max(intervals_us):g} µs; {iterations} iterations"))
    base = _fig4(list(sizes), list(intervals_us), iterations, depth=100)
    variant = _fig4(list(sizes), list(intervals_us), iterations, depth=4)
    s: Dict[str, Any] = {"fig4": base, "fig4_small_ring": variant}
    for size in sizes:
        if f"R1-sweet-{size}" not in reg:  # a size the thesis does not show: printed, not judged
            continue
        rows = [r for r in base if r["size"] == size]
        per_msg_us = (int(size[:-1]) * 1024) / (930 * 1048576) * 1e6
        short = [r for r in rows if r["interval_us"] < per_msg_us / 2]
        if short:
            ok = all(abs((r["ibmon"] or 0) / LINK_MAX - 1) <= TOL_PLATEAU for r in short)
            checks.append(reg[f"R1-plateau-{size}"].judge(
                ok, ", ".join(f"{r['interval_us']:g} us → {(r['ibmon'] or 0):.1f} MiB/s" for r in short),
                shape=all((r["ibmon"] or 0) > r["actual"] for r in short)))
        best = min(rows, key=lambda r: abs(r["ratio"] - 1))
        checks.append(reg[f"R1-sweet-{size}"].judge(abs(best["ratio"] - 1) <= TOL_SWEET,
                                                    f"best Δ {best['interval_us']:g} us: ratio {best['ratio']:.3f}"))
        longest = max(rows, key=lambda r: r["interval_us"])
        small = [r for r in variant if r["size"] == size and r["interval_us"] == longest["interval_us"]]
        checks.append(reg[f"R1-long-{size}"].judge(
            LONG_BAND[0] <= longest["ratio"] <= LONG_BAND[1],
            f"Δ {longest['interval_us']:g} us: ratio {longest['ratio']:.3f} (lost CQEs {longest['lost']}); "
            "small-ring variant: " + ", ".join(f"{r['ratio']:.2f}" for r in small),
            shape=longest["ratio"] <= UNDER_LONG))
    f5 = _fig5(list(fig5_sizes), iterations)
    s["fig5"] = f5
    checks.append(reg["R1-fine"].judge(all(abs(r["error"]) <= TOL_FINE for r in f5),
                                       ", ".join(f"{r['size']} {r['error']:+.1%}" for r in f5)))
    large = [r for r in f5 if r["size"] in ("64k", "128k", "256k", "1M", "2M")]
    if large:
        checks.append(reg["R1-large"].judge(all(abs(r["error"]) <= TOL_LARGE for r in large),
                                            ", ".join(f"{r['size']} {r['error']:+.1%}" for r in large)))
    m0 = _multi(max(iterations // 2, 100), overhead=False)
    m1 = _multi(max(iterations // 2, 100), overhead=True)
    s["multi"] = m0
    s["multi_overhead"] = m1
    m_all = _multi(max(iterations // 2, 100), overhead=False, average="all")
    s["multi_average_all"] = m_all
    errs = [abs((v["ibmon"] or 0) / v["actual"] - 1) for v in m0["vms"]]
    errs_all = [abs((v["ibmon"] or 0) / v["actual"] - 1) for v in m_all["vms"]]
    checks.append(reg["R2-accuracy"].judge(
        all(e <= TOL_MULTI for e in errs),
        ", ".join(f"{v['vm']} {(v['ibmon'] or 0) / v['actual'] - 1:+.1%}" for v in m0["vms"])
        + " (variant average-over=all: " + ", ".join(f"{e:.1%}" for e in errs_all) + ")",
        shape=all(e <= 0.5 for e in errs)))
    dyn = _dynamics("busy")
    dyn_all = _dynamics("all")
    s["dynamics"] = dyn
    s["dynamics_average_all"] = dyn_all
    checks.append(reg["R2-dynamics"].judge(
        all(dyn[v]["lag_ms"] is not None for v in ("vm2", "vm3")),
        ", ".join(f"{v} lag {dyn[v]['lag_ms']} ms" for v in ("vm2", "vm3"))
        + " (variant average-over=all: "
        + ", ".join(f"{v} lag {dyn_all[v]['lag_ms']} ms" for v in ("vm2", "vm3")) + ")"))
    over = [b["time_s"] / a["time_s"] - 1 for a, b in zip(m0["vms"], m1["vms"])]
    s["overhead"] = over
    mean_over = sum(over) / len(over)
    checks.append(reg["R2-overhead"].judge(
        mean_over <= TOL_OVERHEAD,
        f"mean {mean_over:+.2%} with a 100 ns stall per CQ page per scan (our parameter); 0 without a model"))
    s["checks"] = [c.as_dict() for c in complete("ibmon", checks, "not run with these options (--sizes, --intervals)")]
    s["construction"] = {
        "overhead_none": "0 by construction (no contention model)",
        "overhead_model": f"memory-contention, stall 100 ns per CQ page per scan (our parameter): mean "
                          f"{mean_over:+.2%} — construction, not a prediction (F: within 5 %)",
    }
    return s


def checks_of(s: Dict[str, Any]) -> List[Check]:
    """The scoreboard rows of a summary (its ``checks``) as :class:`Check`.

    >>> checks_of({"checks": [Check("a", "b", True, "c").as_dict()]})[0].verdict
    'reproduced'
    """
    fields = Check.__dataclass_fields__
    return [Check(**{k: v for k, v in c.items() if k in fields}) for c in s["checks"]]


def write_summary(s: Dict[str, Any], out: str) -> None:
    """``OUT/summary.json``: every row and the scoreboard (what ``ibcloud
    reproduce all`` reads).

    >>> import pathlib, tempfile
    >>> d = tempfile.mkdtemp(); write_summary({"checks": []}, d)
    >>> json.loads((pathlib.Path(d) / "summary.json").read_text())
    {'checks': []}
    """
    from pathlib import Path

    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / "summary.json").write_text(json.dumps(s, indent=2, default=str) + "\n")


def _print(s: Dict[str, Any]) -> None:
    print("F R1 / Fig. 4: RDMA Read, IBMon average / benchmark BW by fixed Δ — prediction")
    print(f"  {'size':>5} {'Δ us':>6} {'actual':>8} {'ibmon':>8} {'ratio':>6} {'lost':>6} | small ring ratio")
    for r, v in zip(s["fig4"], s["fig4_small_ring"]):
        print(f"  {r['size']:>5} {r['interval_us']:>6} {r['actual']:>8.1f} {(r['ibmon'] or 0):>8.1f} "
              f"{r['ratio']:>6.3f} {r['lost']:>6} | {v['ratio']:.3f} (lost {v['lost']})")
    print("F R1 / Fig. 5: adaptive Δ, error by buffer size — prediction (thesis: ≤27 % fine, ≤5 % large)")
    for r in s["fig5"]:
        print(f"  {r['size']:>5}: actual {r['actual']:.1f} ibmon {(r['ibmon'] or 0):.1f} error {r['error']:+.1%} "
              f"(Δ {r['start_interval_us']:.2f}→{r['final_interval_us']:.2f} us)")
    print("F R2 / Figs. 8-10: three VMs (VM2, VM3 throttled) — prediction (thesis: within 15 %)")
    for v, w in zip(s["multi"]["vms"], s["multi_average_all"]["vms"]):
        print(f"  {v['vm']}: actual {v['actual']:.1f} ibmon {(v['ibmon'] or 0):.1f} "
              f"(variant average-over=all: {(w['ibmon'] or 0):.1f})")
    for v in ("vm2", "vm3"):
        print(f"  {v} throttled at 100 ms: IBMon within 15 % after {s['dynamics'][v]['lag_ms']} ms "
              f"(variant average-over=all: {s['dynamics_average_all'][v]['lag_ms']} ms)")
    print(f"  overhead without a model: {s['construction']['overhead_none']}")
    print(f"  overhead with a model: {s['construction']['overhead_model']}")
    render_scoreboard("ibmon", checks_of(s))


def configure(parser: argparse.ArgumentParser) -> None:
    """Adds the reproduction's options.

    >>> p = argparse.ArgumentParser(); configure(p)
    >>> p.parse_args([]).iterations
    2000
    """
    parser.add_argument("--iterations", type=int, default=2000, help="RDMA Read iterations (F: 20,000; default 2,000)")
    parser.add_argument("--intervals", default="1,4,16,64,128,256,1000", help="fixed Δ values in µs (Fig. 4)")
    parser.add_argument("--sizes", default="64k,128k", help="buffer sizes of Fig. 4")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--out", default=None, help="write summary.json (rows and the scoreboard) into this folder")


def run(args: argparse.Namespace) -> int:
    """Runs, prints and ends with the scoreboard; exit status 1 when a
    prediction or qualitative claim that ran does not hold (calibration and
    construction rows never decide it).

    >>> import contextlib, io
    >>> p = argparse.ArgumentParser(); configure(p)
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     status = run(p.parse_args(["--iterations", "200", "--intervals", "4,64,1000", "--sizes", "64k"]))
    >>> text = out.getvalue()
    >>> "prediction" in text and "by construction" in text and "Scoreboard (ibmon)" in text
    True
    """
    intervals = [float(x) for x in args.intervals.split(",") if x]
    sizes = [x for x in args.sizes.split(",") if x]
    s = reproduce(args.iterations, sizes, intervals)
    if args.out:
        write_summary(s, args.out)
    if args.json:
        print(json.dumps(s, indent=2, default=str))
    else:
        _print(s)
    return exit_status(checks_of(s))
