"""Benchmark: our SA flooder against OpenSM 3.3.23 on ibsim, one client
keeping W = 1 / 4 / 16 queries outstanding, on the 324- and 5,832-node trees;
every answer checked against our resolution. Prints queries/s beside the
issue's reference and the load average.

    .venv/bin/python bench/sa_flood.py [--presets ft324 ft5832] [--seconds 10] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from ibcloud import Fabric
from ibcloud.sa.reproduction import FLOOD_REFERENCE
from ibcloud.sa.run import flood_on_ibsim


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--presets", nargs="+", default=["ft324", "ft5832"])
    ap.add_argument("--windows", nargs="+", type=int, default=[1, 4, 16])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--repeats", type=int, default=2, help="runs per window; the best is reported")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    results = {}
    for preset in args.presets:
        with tempfile.TemporaryDirectory(prefix="sa-bench-") as d:
            net = Path(d) / f"{preset}.net"
            Fabric.generate(preset).write(net)
            out = flood_on_ibsim(net, [w for w in args.windows for _ in range(args.repeats)], duration=args.seconds)
        best: dict[int, dict] = {}
        for r in out["runs"]:
            if "error" in r:
                print(f"{preset} W={r.get('window')}: {r['error']}")
                continue
            if r["window"] not in best or r["qps"] > best[r["window"]]["qps"]:
                best[r["window"]] = r
        results[preset] = {"nodes": out["nodes"], "best": best, "load": os.getloadavg()}
        ref = FLOOD_REFERENCE.get(preset, {})
        print(f"{preset} ({out['nodes']} CAs), load average {os.getloadavg()[0]:.1f}")
        for w, r in sorted(best.items()):
            bad = r["answered"] - r["valid"]
            ratio = f"{r['qps'] / ref[w]:.2f}× reference" if w in ref else ""
            print(f"  W={w:<3} {r['qps']:>8.0f} Q/s (reference {ref.get(w, '-')}; {ratio})  p50 {r['p50_us']:.0f} µs  "
                  f"p99 {r['p99_us']:.0f} µs  wrong answers {bad}  timeouts {r['timeouts']}")
    if args.json:
        print(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
