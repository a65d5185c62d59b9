"""Seed 002's pFTree gaps under every reading of the algorithm we have
(``ibcloud.partitions.VARIANT_SWITCHES``): the corrected pFTree the
reproduction judges, the printed pseudocode (``literal``) and each literal
part alone, the marks-only and grouped readings; ``--placement random``
draws the victims uniformly over all nodes instead of a quarter of every
leaf (the paper says evenly; a sensitivity reading). Evidence for
docs/reproductions/pftree.md ("Causes of the gaps"); not a benchmark of
speed. Same victims, noise and metric as ``ibcloud reproduce pftree``.

    python bench/pftree_readings.py [--runs 20] [--draws 2] [--placement even|random]
    python bench/pftree_readings.py --wt [--placement random]   # Fig. 15 interference, pFTree and -Wt per reading
"""

from __future__ import annotations

import argparse
import random

from ibcloud.analysis import analyze
from ibcloud.fabric import Fabric
from ibcloud.partitions import interference, leaf_nodes, route, victim_delays
from ibcloud.pftree.reproduction import _config, _draw, _receivers

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
    p.add_argument("--wt", action="store_true", help="Fig. 15 instead: interference of pFTree and -Wt per reading")
    args = p.parse_args(argv)
    if args.wt:
        return _wt(args)
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


def _wt(args) -> int:
    """Mean interference (intra-partition flows on shared links) over 8 receiver counts, as the reproduction."""
    from ibcloud.pftree import paper

    draw_of = _draw if args.placement == "even" else _random_draw
    specs = {t[0]: t for t in paper.TABLE3}
    print("nodes  variant            pFTree    -Wt   change   (paper 32: 192 -> 293, +52.6 %; 1024: +86.76 %)")
    for nodes in [n for n in args.sizes if n in (32, 1024)] or [32, 1024]:
        _, m1, m2, w2 = specs[nodes]
        fabric = Fabric.generate(f"XGFT(2;{m1},{m2};1,{w2})")
        for variant in ("corrected", "marks-only", "grouped"):
            base, wt = [], []
            for draw in range(args.draws):
                rng = random.Random(1 * 1000003 + nodes * 101 + draw)
                victims, others, per_leaf = draw_of(fabric, rng)
                if per_leaf is None:
                    leaf_of = {g: k for k, leaf in enumerate(leaf_nodes(fabric)) for _, g in leaf}
                    per_leaf = [[x for x in victims if leaf_of[x[1]] == k] for k in range(len(leaf_nodes(fabric)))]
                conf = _config(victims, others)
                lids = [lid for lid, _ in victims] + [lid for lid, _ in others]
                labels = [0] * len(victims) + [1] * len(others)
                for count in sorted({max(1, round(len(victims) * k / 8)) for k in range(1, 9)}):
                    w = [(g, 100.0) for g in _receivers(per_leaf, count, rng)]
                    base.append(interference(route(fabric, "pftree", conf, variant=variant).tables, lids,
                                             labels)["flows_on_shared"])
                    wt.append(interference(route(fabric, "pftree-wt", conf, variant=variant, weights=w).tables, lids,
                                           labels)["flows_on_shared"])
            b, t = _avg(base), _avg(wt)
            change = f"{100 * (t / b - 1):+.1f} %" if b else "n/a"
            print(f"{nodes:>5}  {variant:<16} {b:>8.0f} {t:>7.0f}  {change}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
