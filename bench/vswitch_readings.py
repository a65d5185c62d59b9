"""Papers II/V, Fig. 8: the gap between FTreeMinRC and a fresh
vSwitchFatTree at 100 % of the migrations under both readings of the
bisections' participants (VMs only, our default; VMs and PFs), for the
consolidation/grouping scenarios (the paper: ≈ 1 %) and uniform ↔ random
(up to ≈ 10 %). Evidence for docs/reproductions/vswitch.md ("Causes of the
gaps"); not a speed benchmark.

    python bench/vswitch_readings.py [--bisect-runs 200] [--topologies T ...]
"""

from __future__ import annotations

import argparse

from ibcloud.fabric import Fabric
from ibcloud.vswitch import simulate
from ibcloud.vswitch.reproduction import SCENARIOS, TOPOLOGIES


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bisect-runs", type=int, default=200)
    p.add_argument("--topologies", nargs="+", default=TOPOLOGIES[:4])
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    print("largest gap at 100 % (fresh − FTreeMinRC) / fresh, by reading of the bisect participants")
    print(f"{'topology':<14} {'scenarios':<26} {'VMs':>8} {'VMs+PFs':>9}")
    for topo in args.topologies:
        physical = Fabric.generate(topo)
        for label, pick in (("consolidate/grouping", lambda pl, pat: pat in ("consolidate", "grouping")),
                            ("uniform<->random", lambda pl, pat: (pl, pat) in (("uniform", "random"),
                                                                               ("random", "to-uniform")))):
            gaps = {}
            for reading in ("vms", "vms+pfs"):
                worst = 0.0
                for i, (pl, pat, pop) in enumerate(SCENARIOS):
                    if not pick(pl, pat):
                        continue
                    s = simulate(physical, 4, pop, pl, pat, args.seed + i, 10, args.bisect_runs, endpoints=reading)
                    last = s.raw["snapshots"][-1]
                    if last["ebb_fresh"] > 0:
                        worst = max(worst, (last["ebb_fresh"] - last["ebb_minrc"]) / last["ebb_fresh"])
                gaps[reading] = worst
            print(f"{topo:<14} {label:<26} {100 * gaps['vms']:7.1f}% {100 * gaps['vms+pfs']:8.1f}%", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
