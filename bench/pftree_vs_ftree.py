"""pftree-ext with 8 partitions against plain ftree on the same tree, same
run (``make bench-pftree``). Target: pftree-ext within 2x ftree's time.

Partitions: the compute nodes of every leaf are dealt round-robin into 8
partitions (each spans every leaf): one ``phy``, three ``vlane``, four
``def``; best-effort global policy. Times are the engines' own (routing
only; pftree-ext includes its validator and VL assignment), best of
``--repeat`` runs, release build.

>>> from ibcloud.pftree import paper  # the bench needs nothing else importable
"""

from __future__ import annotations

import argparse
import json
import os
import time

from ibcloud import Fabric
from ibcloud.partitions import Partition, PartitionConfig, leaf_nodes, route
from ibcloud.routing import route as plain_route

POLICIES = ["phy", "vlane", "vlane", "vlane", "def", "def", "def", "def"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--preset", default="ft11664")
    p.add_argument("--partitions", type=int, default=8)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    t0 = time.perf_counter()
    fabric = Fabric.generate(args.preset)
    members = [[] for _ in range(args.partitions)]
    for leaf in leaf_nodes(fabric):
        for i, (_, guid) in enumerate(leaf):
            members[i % args.partitions].append((hex(guid), "full"))
    conf = PartitionConfig.build(
        [Partition(f"tenant{k}", k + 1, POLICIES[k % len(POLICIES)], None, m) for k, m in enumerate(members)],
        global_isolation="best-effort",
    )
    setup = time.perf_counter() - t0
    ftree, pftree = [], []
    result = None
    for _ in range(args.repeat):
        ftree.append(plain_route(fabric, "ftree").seconds)
        result = route(fabric, "pftree-ext", conf)
        pftree.append(result.seconds)
    load = os.getloadavg()
    out = {
        "preset": args.preset, "cas": fabric.num_cas, "partitions": args.partitions,
        "ftree_best_s": round(min(ftree), 4), "pftree_ext_best_s": round(min(pftree), 4),
        "ratio": round(min(pftree) / min(ftree), 2), "target_ratio": 2.0,
        "ftree_all_s": [round(x, 4) for x in ftree], "pftree_ext_all_s": [round(x, 4) for x in pftree],
        "vls": result.vls, "violations": len(result.report["violations"]), "warnings": len(result.warnings),
        "setup_s": round(setup, 2), "loadavg": [round(x, 2) for x in load],
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"{args.preset} ({fabric.num_cas} CAs, {args.partitions} partitions): ftree {out['ftree_best_s']:.3f} s, "
              f"pftree-ext {out['pftree_ext_best_s']:.3f} s, ratio {out['ratio']:.2f} (target <= 2.0); "
              f"VLs {result.vls}; {out['violations']} policy violations (best-effort); load {out['loadavg']}")


if __name__ == "__main__":
    main()
