"""Benchmark: SA PathRecord queries/s, OpenSM's SA beside ibcloud's, on the
same ibsim fabric, with the SA flooder keeping W = 1 / 4 / 16 queries
outstanding (every answer checked against our resolution of that SM's own
tables). Also the flooder itself before and after issue 19's fix: the former
Python loop (``--engines python``) beside the Rust one (``native``).

One run per cell on this shared 2-core machine: read the ratios in one run,
not the seconds. A benchmark, not a test.

    .venv/bin/python bench/sa_vs_opensm.py [--preset ft324] [--seconds 5] [--engines native python] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ibcloud import Fabric
from ibcloud.interop import IbSim, _scratch_root
from ibcloud.sa.run import OpenSmDaemon, expected_answers
from ibcloud.sm import SmDaemon
from ibcloud.tables import read_lfts


def _flood(sim: IbSim, fabric_file: Path, lfts: Path, windows: list[int], engines: list[str], seconds: float,
           repeats: int, seed: int = 1, num_pairs: int = 4096) -> list[dict[str, Any]]:
    fabric = Fabric.read(fabric_file)
    tables = read_lfts(lfts, fabric)
    lids = sorted(n["lid"] for n in fabric.nodes() if n["kind"] == "ca")
    rng = random.Random(seed)
    pairs = [(rng.choice(lids), rng.choice(lids)) for _ in range(num_pairs)]
    expected, _ = expected_answers(tables, pairs)
    runs = []
    best: dict[tuple[str, int], dict[str, Any]] = {}
    for _ in range(repeats):
        runs.extend(_flood_once(sim, pairs, expected, windows, engines, seconds, seed))
    for r in runs:
        k = (r["engine"], r["window"])
        if k not in best or r.get("qps", 0) > best[k].get("qps", 0):
            best[k] = r
    return [best[(e, w)] for e in engines for w in windows]


def _flood_once(sim: IbSim, pairs: list[tuple[int, int]], expected: dict[Any, Any], windows: list[int],
                engines: list[str], seconds: float, seed: int) -> list[dict[str, Any]]:
    runs = []
    for engine in engines:
        for w in windows:
            spec = sim.workdir / f"flood-{engine}-w{w}.json"
            out = sim.workdir / f"flood-{engine}-w{w}.out.json"
            spec.write_text(json.dumps({"pairs": pairs, "expected": [[*k, *v] for k, v in expected.items()],
                                        "window": w, "duration": seconds, "timeout_ms": 1000, "seed": seed,
                                        "engine": engine}))
            done = subprocess.run([sys.executable, "-m", "ibcloud.sa.flood", str(spec), str(out)], cwd=sim.workdir,
                                  env=sim.client_env(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=seconds + 120)
            r = json.loads(out.read_text()) if out.exists() else {"error": done.stderr[-300:]}
            r.update(engine=engine, window=w)
            runs.append(r)
    return runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="ft324")
    ap.add_argument("--windows", nargs="+", type=int, default=[1, 4, 16])
    ap.add_argument("--engines", nargs="+", default=["native", "python"], choices=["native", "python"])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--repeats", type=int, default=3, help="runs per cell, interleaved; the best is reported")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sa-vs-", dir=_scratch_root()))
    results: dict[str, list[dict[str, Any]]] = {}
    try:
        net = work / f"{args.preset}.net"
        Fabric.generate(args.preset).write(net)
        with IbSim(net) as sim, OpenSmDaemon(sim) as osm:
            results["OpenSM"] = _flood(sim, osm.subnet_lst, osm.lfts, args.windows, args.engines, args.seconds,
                                       args.repeats)
            shutil.copyfile(osm.cache_dir / "guid2lid", work / "guid2lid")
        with IbSim(net) as sim, SmDaemon(sim, args=["--guid2lid", str(work / "guid2lid")]) as sm:
            results["ibcloud"] = _flood(sim, sm.dump_dir / "fabric.topo", sm.dump_dir / "opensm-lfts.dump",
                                        args.windows, args.engines, args.seconds, args.repeats)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"SA PathRecord queries/s on {args.preset} (ibsim), best of {args.repeats} × {args.seconds:.0f} s per cell, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'SA':<8} {'flooder':<8} " + " ".join(f"{'W=' + str(w):>10}" for w in args.windows) + "   wrong/timeouts")
    for sa, runs in results.items():
        for engine in args.engines:
            row = [r for r in runs if r["engine"] == engine]
            cells = " ".join(f"{r.get('qps', float('nan')):>10.0f}" for r in row)
            bad = sum(r.get("answered", 0) - r.get("valid", 0) for r in row)
            tmo = sum(r.get("timeouts", 0) for r in row)
            errs = [r["error"] for r in row if "error" in r]
            print(f"{sa:<8} {engine:<8} {cells}   {bad}/{tmo}" + (f"  errors: {errs}" if errs else ""))
    print("flooder CPU per answered query, µs (user+system of the flooder process; load-independent)")
    for sa, runs in results.items():
        for engine in args.engines:
            row = [r for r in runs if r["engine"] == engine]
            print(f"{sa:<8} {engine:<8} " + " ".join(f"{(r.get('cpu_us_per_query') or float('nan')):>10.1f}"
                                                     for r in row))
    print("mean / p50 latency, µs")
    for sa, runs in results.items():
        for engine in args.engines:
            row = [r for r in runs if r["engine"] == engine]
            print(f"{sa:<8} {engine:<8} " + " ".join(
                f"{(r.get('mean_us') or float('nan')):>6.0f}/{(r.get('p50_us') or float('nan')):<5.0f}" for r in row))
    if "native" in args.engines:
        for w in args.windows:
            o = next((r for r in results["OpenSM"] if r["engine"] == "native" and r["window"] == w), {})
            i = next((r for r in results["ibcloud"] if r["engine"] == "native" and r["window"] == w), {})
            if o.get("qps") and i.get("qps"):
                print(f"  W={w}: ibcloud/OpenSM = {i['qps'] / o['qps']:.2f}")
    if args.json:
        print(json.dumps({k: [{x: y for x, y in r.items() if x != "examples"} for r in v]
                          for k, v in results.items()}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
