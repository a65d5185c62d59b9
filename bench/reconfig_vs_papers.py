"""Papers III/IV timing claims, as ratios measured in one run (never a
pass/fail of ``ibcloud reproduce reconfig``): sub-tree reconfiguration /
full ftree (Paper III: 50 % to 98.7 % less), SlimUpdate / ftree routing time
(Table 3: 1.07-1.42), metabase phase II / ftree (Recon-SM: ≈ 0.15 at 4,096
nodes) and mFatTree initial / ftree (1.0 at 4,096 nodes; 0.54 / 0.33 on the
2:1 / 4:1 trees).

    python bench/reconfig_vs_papers.py [--repeats 3] [--big]
"""

from __future__ import annotations

import argparse
import json
import os

from ibcloud import _native
from ibcloud.fabric import Fabric
from ibcloud.reconfig_reproduction import PAPER, TABLE3, TABLE_I


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="best of N (default 3)")
    parser.add_argument("--big", action="store_true", help="also the 2:1 / 4:1 trees of 8,192 / 16,384 nodes")
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f}; ratios measured in one run, best of {args.repeats}")
    print("Paper III: sub-tree reconfiguration vs a full ftree route (paper: 50 % to 98.7 % less time)")
    for name in ("8-3-1-half", "12-3-1-full", "18-3-1-full"):
        r = json.loads(_native.reconfig_subtree_timing(Fabric.generate(TABLE_I[name])._native, args.repeats))
        print(f"  {name:<12} sub-tree / full = {r['subtree'] / r['full']:.4f} ({1 - r['subtree'] / r['full']:.1%} less)")
    print("Paper IV Table 3 and Figs. 11-12: ours / ours beside the paper's ratio")
    for nodes, spec in TABLE3.items():
        r = json.loads(_native.reconfig_routing_times(Fabric.generate(spec)._native, args.repeats))
        pf, ps = PAPER["table3"][nodes]
        line = (f"  {nodes:>5} {spec:<9} SlimUpdate/ftree {r['slimupdate'] / r['ftree']:.2f} (paper {ps / pf:.2f}); "
                f"mFatTree/ftree {r['mfattree'] / r['ftree']:.2f}; phase II/ftree {r['phase2'] / r['ftree']:.3f}")
        if nodes == 4096:
            m = PAPER["metabase"]["4096"]
            line += f" (paper {m['mfattree'] / m['ftree']:.2f} and {m['recon_sm'] / m['ftree']:.3f})"
        print(line)
    if args.big:
        for label, spec in (("8192 (2:1)", "XGFT(3;32,16,16;1,16,16)"), ("16384 (4:1)", "XGFT(3;64,16,16;1,16,16)")):
            r = json.loads(_native.reconfig_routing_times(Fabric.generate(spec)._native, 1))
            m = PAPER["metabase"][label]
            print(f"  {label:<12} mFatTree/ftree {r['mfattree'] / r['ftree']:.2f} (paper {m['mfattree'] / m['ftree']:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
