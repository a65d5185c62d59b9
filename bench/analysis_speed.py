"""Congestion-analysis speed against the issue's targets, with a plain-Python
reference implementation as the peer (ORCS itself needs MPI, Boost and
Graphviz's cgraph, none of which are packaged here).

    .venv/bin/python bench/analysis_speed.py [--preset ft11664] [--runs 10000]

Prints: path preparation, 10,000 bisect runs (all threads and one thread),
one complete shift all-to-all, and the same bisect runs in plain Python on a
few runs, scaled, as a ratio.
"""

from __future__ import annotations

import argparse
import time

from ibcloud import Fabric, analyze, route
from ibcloud import _native


def reference_bisect(fabric: Fabric, tables, lids, orders) -> list:
    """acc_band per run, walking the tables hop by hop in Python."""
    lft = {}
    nodes = fabric.nodes()
    by_lid = {n["lid"]: n for n in nodes if n["kind"] == "ca"}
    peer = {}
    for link in fabric.links():
        a, b = (link["node_a"], link["port_a"]), (link["node_b"], link["port_b"])
        peer[a], peer[b] = b, a
    switches = {n["id"] for n in nodes if n["kind"] == "switch"}

    def path(src, dst):
        here = (by_lid[src]["id"], 1)
        links = [here]
        node = peer[here][0]
        while node in switches:
            key = (node, dst)
            p = lft.get(key)
            if p is None:
                p = lft[key] = tables.get(nodes[node]["guid"], dst)
            links.append((node, p))
            node = peer[(node, p)][0]
        return links

    out = []
    for order in orders:
        flows = [(lids[order[2 * i]], lids[order[2 * i + 1]]) for i in range(len(order) // 2)]
        load = {}
        paths = [path(s, d) for s, d in flows]
        for p in paths:
            for link in p:
                load[link] = load.get(link, 0) + 1
        out.append(sum(1 / max(load[link] for link in p) for p in paths) / len(paths))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="ft11664")
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--reference-runs", type=int, default=5)
    args = ap.parse_args()
    fabric = Fabric.generate(args.preset)
    routing = route(fabric, "ftree")

    t = time.perf_counter()
    a = analyze(routing, "bisect", runs=args.runs, seed=1)
    bisect_s = time.perf_counter() - t
    t = time.perf_counter()
    one = analyze(routing, "bisect", runs=max(args.runs // 10, 1), seed=1, threads=1)
    one_thread_s = (time.perf_counter() - t) * (args.runs / max(args.runs // 10, 1))
    t = time.perf_counter()
    s = analyze(routing, "shift", seed=1)
    shift_s = time.perf_counter() - t

    lids = a.endpoints
    orders = _native.run_orders(len(lids), 1, args.reference_runs)
    t = time.perf_counter()
    ref = reference_bisect(fabric, routing.tables, lids, orders)
    ref_per_run = (time.perf_counter() - t) / args.reference_runs
    same = all(abs(x - y) < 1e-12 for x, y in zip(ref, a.runs["acc_band"][: args.reference_runs]))

    print(f"{args.preset}: {len(lids)} endpoints, ftree tables")
    print(f"bisect x{args.runs}: {bisect_s:.2f} s on all threads (target < 10 s), "
          f"~{one_thread_s:.2f} s on one thread; mean EBB {a.ebb()['mean']:.4f}")
    print(f"shift all-to-all ({int(s.runs.loc[0, 'levels'])} levels): {shift_s:.2f} s (target < 60 s); "
          f"acc_band {s.runs.loc[0, 'acc_band']:.4f}")
    print(f"plain-Python reference: {ref_per_run * 1000:.0f} ms per bisect run (first {args.reference_runs} runs "
          f"{'identical' if same else 'DIFFERENT'}); ibcloud {bisect_s / args.runs * 1000:.3f} ms per run: "
          f"{ref_per_run / (bisect_s / args.runs):.0f}x faster")


if __name__ == "__main__":
    main()
