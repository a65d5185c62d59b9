"""Seed 002's pFTree gaps under every reading of the algorithm we have
(``ibcloud.partitions.VARIANT_SWITCHES``): the corrected pFTree the
reproduction judges, the printed pseudocode (``literal``) and each literal
part alone, the marks-only and grouped readings; ``--placement random``
draws the victims uniformly over all nodes instead of a quarter of every
leaf (the paper says evenly; a sensitivity reading). Evidence for
docs/reproductions/pftree.md ("Causes of the gaps"); not a benchmark of
speed. Same victims, noise and metric as ``ibcloud reproduce pftree``.

    python bench/pftree_readings.py [--runs 20] [--draws 2] [--placement even|random]
"""

from __future__ import annotations

import argparse
import random

from ibcloud.analysis import analyze
from ibcloud.fabric import Fabric
from ibcloud.partitions import interference, leaf_nodes, route, victim_delays
from ibcloud.pftree.reproduction import _config, _draw

VARIANTS = ["corrected", "literal", "literal-marking", "literal-exclusion", "leaf-by-leaf", "alg2-return",
            "marks-only", "grouped"]


def _random_draw(fabric, rng):
    """Victims: a quarter of all nodes, uniformly (not per leaf)."""
    nodes = [n for leaf in leaf_nodes(fabric) for n in leaf]
    pick = set(rng.sample(range(len(nodes)), len(nodes) // 4))
    return [n for i, n in enumerate(nodes) if i in pick], [n for i, n in enumerate(nodes) if i not in pick], None


def _avg(xs):
    return sum(xs) / len(xs)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--draws", type=int, default=2)
    p.add_argument("--sizes", type=int, nargs="+", default=[32, 128, 192, 256, 1024])
    p.add_argument("--placement", choices=["even", "random"], default="even")
    p.add_argument("--variants", nargs="+", default=VARIANTS)
    args = p.parse_args(argv)
    from ibcloud.pftree import paper

    specs = {t[0]: t for t in paper.TABLE3}
    print("variant            nodes  pFTree bisect  gather  (Table 4: 99.9/275.8/509.3, 66.2/204.8/254.9)  "
          "-Ext/pFTree EBB (1024: 23.3 %)  interference (32: 192)")
    for nodes in args.sizes:
        _, m1, m2, w2 = specs[nodes]
        fabric = Fabric.generate(f"XGFT(2;{m1},{m2};1,{w2})")
        for variant in args.variants:
            bis, gat, share, intf = [], [], [], []
            for draw in range(args.draws):
                rng = random.Random(1 * 1000003 + nodes * 101 + draw)
                victims, others, _ = (_draw if args.placement == "even" else _random_draw)(fabric, rng)
                conf = _config(victims, others)
                v = [lid for lid, _ in victims]
                o = [lid for lid, _ in others]
                try:
                    t = route(fabric, "pftree", conf, variant=variant).tables
                    ext = route(fabric, "pftree-ext", conf, variant=variant).tables
                except Exception as e:  # a literal variant may fail to route: that is evidence too
                    print(f"{variant:<18} {nodes:>5}  fails: {str(e)[:80]}")
                    break
                if nodes in (128, 192, 256):
                    bis.append(_avg(victim_delays(t, v, "bisect", o, "shift", runs=args.runs, seed=1 + draw)))
                    gat.append(_avg(victim_delays(t, v, "gather", o, "shift", runs=args.runs, seed=1 + draw)))
                if nodes == 1024:
                    a = analyze(t, "bisect", runs=args.runs, seed=1 + draw, lids=o).ebb()["mean"]
                    b = analyze(ext, "bisect", runs=args.runs, seed=1 + draw, lids=o).ebb()["mean"]
                    share.append(b / a)
                if nodes == 32:
                    intf.append(interference(t, v + o, [0] * len(v) + [1] * len(o))["flows_on_shared"])
            else:
                cells = [f"{_avg(bis):13.1f}" if bis else " " * 13, f"{_avg(gat):7.1f}" if gat else " " * 7,
                         " " * 46, f"{100 * _avg(share):29.1f} %" if share else " " * 31,
                         f"{_avg(intf):12.0f}" if intf else ""]
                print(f"{variant:<18} {nodes:>5}  " + " ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
