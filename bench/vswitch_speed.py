"""The vSwitch issue's performance targets, timed (release build):

1. FTreeMinRC's worst-case marking (first ↔ last leaf) on the 20,736-node
   4-level tree: target < 5 ms (Paper V Table 3: 79 ms); also ft5832 and
   ft11664 (paper: 3 and 3.4 ms).
2. One migration's table update on ft11664 (4 VFs per hypervisor, dynamic
   LIDs, 25 % population): planning from the current tables plus applying,
   FTreeMinRC and ItRC, intra- and inter-leaf; target < 1 ms.
3. The Fig. 8 campaign (126 simulations × 11 snapshots, 10,000 bisections of
   both table sets per snapshot): target < 30 min. ``--campaign sample`` runs
   one scenario per topology and population (18 simulations, the random
   pattern: 2 × hypervisors migrations, the longest) and extrapolates ×7
   (7 scenarios per population); ``--campaign full`` runs all 126.

    .venv/bin/python bench/vswitch_speed.py                   # marking, migration, sampled campaign
    .venv/bin/python bench/vswitch_speed.py --campaign none   # without the campaign
    make bench-vswitch

Nothing here is a test: machines are noisy; the load is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from ibcloud import Fabric
from ibcloud.vswitch import VirtualFabric, simulate, worst_case_marking
from ibcloud.vswitch.reproduction import SCENARIOS, TOPOLOGIES


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--campaign", choices=("none", "sample", "full"), default="sample")
    parser.add_argument("--bisect-runs", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=5, help="repeats of the small timings (best reported)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the results as JSON")
    args = parser.parse_args(argv)
    results = {"load_before": load()}

    print(f"load average: {results['load_before']}")
    for preset, paper in (("ft5832", 3.0), ("ft11664", 3.4), ("ft20736", 79.0)):
        m = worst_case_marking(Fabric.generate(preset), repeats=max(args.repeat, 20))
        results[f"marking_{preset}_ms"] = m["ms"]
        print(f"FTreeMinRC worst-case marking {preset}: {m['marked']} of {m['switches']} switches in "
              f"{m['ms']:.4f} ms (paper {paper} ms, {paper / m['ms']:.0f}× faster)")

    t0 = time.perf_counter()
    vf = VirtualFabric.virtualize(Fabric.generate("ft11664"), vfs=4, scheme="dynamic")
    setup = time.perf_counter() - t0
    t0 = time.perf_counter()
    for h in range(0, vf.num_hypervisors):
        vf.boot_vm(f"vm{h}", f"#{h}")
    vf.reroute()
    print(f"ft11664 virtualized (4 VFs): {setup:.1f} s; 11,664 VMs booted and routed with vswitch-ftree: "
          f"{time.perf_counter() - t0:.1f} s")
    half = vf.num_hypervisors // 2
    for j, method in enumerate(("ftree-minrc", "itrc")):
        for label, far in (("intra-leaf", False), ("inter-leaf", True)):
            best_plan = best_apply = best_total = float("inf")
            smps = []
            for k in range(args.repeat):
                h = 4 * (args.repeat * (2 * j + far) + k)   # a fresh VM each time, on hypervisor h
                dst = (h + half) % vf.num_hypervisors if far else h + 1   # h even: h + 1 is on its leaf
                t0 = time.perf_counter()
                r = vf.migrate(f"vm{h}", f"#{dst}", method=method, check=False)
                total = (time.perf_counter() - t0) * 1e6
                best_plan = min(best_plan, r["plan_us"])
                best_apply = min(best_apply, r["apply_us"])
                best_total = min(best_total, total)
                smps.append(r["switch_smps"])
            key = f"migration_{method}_{label}"
            results[key] = {"plan_us": best_plan, "apply_us": best_apply, "python_us": best_total, "smps": smps}
            print(f"one migration on ft11664, {method}, {label}: plan {best_plan:.0f} µs + apply "
                  f"{best_apply:.0f} µs = {(best_plan + best_apply) / 1000:.3f} ms (switch SMPs {smps}; "
                  f"{best_total / 1000:.2f} ms through Python incl. JSON)")

    if args.campaign != "none":
        started = time.perf_counter()
        per: dict = {}
        for topo in TOPOLOGIES:
            physical = Fabric.generate(topo)
            for i, (pl, pat, pop) in enumerate(SCENARIOS):
                if args.campaign == "sample" and not (pl == "random" and pat == "random"):
                    continue
                t0 = time.perf_counter()
                simulate(physical, 4, pop, pl, pat, 1 + i, 10, args.bisect_runs)
                dt = time.perf_counter() - t0
                per[f"{topo} {pl}->{pat} {int(pop * 100)}%"] = dt
                print(f"  {topo:<14} {pl:>7} → {pat:<11} {int(pop * 100):>2} %: {dt:7.1f} s", flush=True)
        spent = time.perf_counter() - started
        estimate = spent * 7 if args.campaign == "sample" else spent
        results["campaign"] = {"mode": args.campaign, "seconds": spent, "estimate_full_seconds": estimate,
                               "per_simulation": per, "bisect_runs": args.bisect_runs}
        what = "measured" if args.campaign == "full" else "extrapolated ×7 from 18 random-pattern simulations"
        print(f"Fig. 8 campaign: {spent / 60:.1f} min spent; whole campaign {estimate / 60:.1f} min ({what})")
    results["load_after"] = load()
    print(f"load average: {results['load_after']}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
