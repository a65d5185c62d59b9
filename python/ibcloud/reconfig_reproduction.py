"""``ibcloud reproduce reconfig``: Papers III and IV (fast fat-tree
reconfiguration) rerun, our numbers beside the paper's.

Parts (docs/reproductions/reconfig.md explains every deviation):

* **H1** Paper III Table I topologies: full ftree reconfiguration (from
  scratch; and reusing the data structures) vs a hybrid sub-tree
  reconfiguration of one 2-level sub-tree with NoFTree; the 50 %–98.7 % claim.
* **H2** NoFTree bandwidth cases: Fig. 5/6 (1/3 → 1.0) and the Fig. 7
  testbed (0.5 → 1.0).
* **H3** SlimUpdate vs ftree: first random link failure on G/H (≈80 %/40 %
  fewer modifications), successive link failures up to k−1, 10 node
  shutdowns (310 vs 1,057), topology B calibration (3.7 vs 5.5), and the
  effective bisection bandwidth after the events.
* **H4** Table 3: SlimUpdate / ftree routing-time ratios.
* **H5** metabase: mFatTree initial, phase II re-selection ("Recon-SM",
  ≈85 % saving at 4,096 nodes), "Recon-Parallel" model, 2×/4×
  oversubscription (46 %/66 % less than ftree).
* **H6** node orders (Table 4 topologies): Bruck, 2/4/6-neighbor and
  recursive doubling over random orders, ftree vs Algorithm 5.
* **H7** spanning-tree counts (6/2 on XGFT(3;4,4,3;1,2,3)).
* **HW** Paper IV's hardware results on the packet simulator
  (:mod:`ibcloud.reconfig_hw`): Fig. 3 (topology A, two node shutdowns,
  FTree with the unicast cache vs SlimUpdate: Netgauge EBB, OSU alltoall),
  Fig. 4 and Table 1 (topology B, one link failure: EBB, HPCC ping-pong and
  rings), Fig. 5 (OSU latency).

The default is reduced (fewer seeds, orders and bisections, the smaller
Table 4 rows); ``--full`` runs the paper's sizes (10,000 orders and
bisections; hours). Writes ``summary.json``, CSV tables and plots to
``--out`` (default ``out/reproductions/reconfig``). Ends with the scoreboard
of ibcloud/claims/reconfig.toml; exit status 1 when a prediction or
qualitative claim that ran does not hold.

>>> rep = reproduce(quick=True, out=None, plots=False)
>>> [c["id"] for c in rep["checks"]][:3]
['C1', 'C1v', 'C2']
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from ibcloud import _native, reconfig_hw
from ibcloud.analysis import analyze
from ibcloud.checks import Check, claims, complete, counts, exit_status, render_scoreboard
from ibcloud.fabric import Fabric
from ibcloud.reconfig import noftree, tree_counts
from ibcloud.routing import route
from ibcloud.tables import ForwardingTables
from ibcloud.safeio import dumps_json

__all__ = ["DESCRIPTION", "DEFAULT_OUT", "PAPER", "configure", "reproduce", "run"]

#: One line for ``ibcloud reproduce --list``.
DESCRIPTION = "Papers III/IV: sub-tree reconfiguration, NoFTree, SlimUpdate, metabase-aided routing (fat-trees)"
#: Where results go unless ``--out`` says otherwise.
DEFAULT_OUT = Path("out") / "reproductions" / "reconfig"

#: The papers' numbers (reference C §3).
PAPER: Dict[str, Any] = {
    "subtree_reduction": "50% to 98.7% (largest topologies)",
    "reuse_reduction_testbed": 0.50,
    "noftree": {"fig5_6": (1 / 3, 1.0), "fig7": (0.5, 1.0)},
    "first_link_failure_saving": {"G": 0.80, "H": 0.40},
    "k_minus_1_saving": {"8-ary-2": 0.21, "16-ary-2": 0.39, "8-ary-2 2:1": 0.125, "16-ary-2 2:1": 0.14},
    "node_shutdowns_16ary2": {"slimupdate": 310, "ftree": 1057, "saving": 0.707, "2:1 saving": 0.1925},
    "topology_b": {"slimupdate": 3.7, "ftree": 5.5},
    "table3": {16: (0.190, 0.206), 64: (0.290, 0.330), 256: (1.452, 1.558), 512: (17.364, 18.834),
               1728: (177.712, 209.888), 4096: (1013.246, 1438.498)},
    "metabase": {"256": {"mfattree": 1.96, "ftree": 1.25}, "4096": {"mfattree": 979.3, "ftree": 987.5,
                 "recon_sm": 150.8, "recon_parallel": 0.2, "saving": 0.85},
                 "8192 (2:1)": {"mfattree": 1301, "ftree": 2420}, "16384 (4:1)": {"mfattree": 1945, "ftree": 5827}},
    "node_order": {"bruck": "SlimUpdate 1.0 (non-oversubscribed); FTree 0.56 on 8-ary-3",
                   "neighbors": "SlimUpdate 0.50/0.25/0.16 for 2/4/6-neighbor",
                   "recdbl": "SlimUpdate 1.0 except 6-ary-2 (0.94); FTree 0.55-0.82"},
    "tree_counts": {"XGFT(3;4,4,3;1,2,3)": (6, 2)},
}

#: Paper III Table I: name -> generator spec (k-3-o-half = k-ary-3-tree with o*k
#: nodes per leaf; full = roots use all 2k ports).
TABLE_I = {
    f"{k}-3-{o}-{kind}": f"XGFT(3;{o * k},{k},{k if kind == 'half' else 2 * k};1,{k},{k})"
    for k in (8, 12, 16, 18) for o in ((1, 2, 4) if k == 8 else (1, 2) if k in (12, 16) else (1,))
    for kind in ("half", "full")
}
TABLE_I_SIZES = {"8-3-1-half": (512, 192), "8-3-1-full": (1024, 320), "8-3-2-half": (1024, 192),
                 "8-3-2-full": (2048, 320), "8-3-4-half": (2048, 192), "8-3-4-full": (4096, 320),
                 "12-3-1-half": (1728, 432), "12-3-1-full": (3456, 720), "12-3-2-half": (3456, 432),
                 "12-3-2-full": (6912, 720), "16-3-1-half": (4096, 768), "16-3-1-full": (8192, 1280),
                 "16-3-2-half": (8192, 768), "16-3-2-full": (16384, 1280), "18-3-1-half": (5832, 972),
                 "18-3-1-full": (11664, 1620)}

#: Paper IV's simulated trees (Table 2 reconstructed: G/H certain).
SLIM_TREES = {"4-ary-2": "4-ary-2", "4-ary-2 2:1": "XGFT(2;8,4;1,4)", "8-ary-2": "8-ary-2",
              "8-ary-2 2:1": "XGFT(2;16,8;1,8)", "4-ary-3": "4-ary-3", "4-ary-3 2:1": "XGFT(3;8,4,4;1,4,4)",
              "16-ary-2 (G)": "16-ary-2", "16-ary-2 2:1 (H)": "XGFT(2;32,16;1,16)"}

TABLE3 = {16: "4-ary-2", 64: "8-ary-2", 256: "16-ary-2", 512: "8-ary-3", 1728: "12-ary-3", 4096: "16-ary-3"}

TABLE4 = {"4-ary-2": (4, 2), "6-ary-2": (6, 2), "8-ary-2": (8, 2), "4-ary-3": (4, 3), "16-ary-2": (16, 2),
          "8-ary-3": (8, 3)}


def _gen(spec: str) -> Fabric:
    return Fabric.generate(spec)


def _oversub(k: int, n: int, o: int) -> str:
    m = [o * k] + [k] * (n - 1)
    w = [1] + [k] * (n - 1)
    return f"XGFT({n};{','.join(map(str, m))};{','.join(map(str, w))})"


def _h1(quick: bool, repeats: int, log) -> List[Dict[str, Any]]:
    rows = []
    names = list(TABLE_I)
    if quick:
        names = ["8-3-1-half", "8-3-1-full"]
    for name in names:
        f = _gen(TABLE_I[name])
        log(f"H1 {name}")
        r = json.loads(_native.reconfig_subtree_timing(f._native, repeats))
        r.update(topology=name, paper_nodes=TABLE_I_SIZES[name][0], paper_switches=TABLE_I_SIZES[name][1],
                 subtree_reduction=1 - r["subtree"] / r["full"], reuse_reduction=1 - r["full_reuse"] / r["full"],
                 smp_reduction=1 - r["subtree_changed_blocks"] / max(r["full_changed_blocks"], 1))
        r.update(_h1_work(r))
        rows.append(r)
    return rows


def _h1_work(r: Dict[str, Any]) -> Dict[str, Any]:
    """C1's deterministic measure of work: (switch, LID) entries the routing
    computes. OpenSM's phases in Paper III's Figs. 9-10 ("Build LID
    Matrices": a hop count per switch and LID; "Route CNs" and the LFTs: an
    entry per switch and LID) each loop over these pairs, so their time is
    proportional to the count. A full ftree run covers every switch and every
    LID (compute nodes and switches); the hybrid sub-tree run only the
    sub-tree's switches and its compute nodes (C §2.2 step 5).

    >>> w = _h1_work({"nodes": 512, "switches": 192, "subtree_switches": 16, "subtree_destinations": 64})
    >>> w["work_full"], w["work_subtree"], round(w["work_reduction"], 4)
    (135168, 1024, 0.9924)
    """
    full = r["switches"] * (r["nodes"] + r["switches"])
    sub = r["subtree_switches"] * r["subtree_destinations"]
    return {"work_full": full, "work_subtree": sub, "work_reduction": 1 - sub / full,
            "work_reduction_cn_lids": 1 - sub / (r["switches"] * r["nodes"])}


def _testbed() -> Fabric:
    """Paper III's testbed read top-down (reference C §3.1), as ibnetdiscover text."""
    sw = {f"S{i}": 0x1000 + i for i in range(1, 11)}
    ports: Dict[str, Dict[int, str]] = {s: {} for s in sw}
    cas: List[str] = []

    def link(a: str, pa: int, b: str, pb: int) -> None:
        ports[a][pa] = f'"S-{sw[b]:016x}"[{pb}]' if b in sw else f'"H-{0x2000 + int(b[2:]):016x}"[1]'
        if b in sw:
            ports[b][pb] = f'"S-{sw[a]:016x}"[{pa}]'

    roots, mids, leaves = ["S9", "S10"], ["S5", "S6", "S7", "S8"], ["S1", "S2", "S3", "S4"]
    for ri, r in enumerate(roots):
        for mi, m in enumerate(mids):
            link(r, mi + 1, m, ri + 1)
    for li, leaf in enumerate(leaves):
        pod = li // 2
        for k in range(2):
            link(leaf, k + 1, mids[pod * 2 + k], li % 2 + 3)
        for c in range(4 if li < 3 else 2):
            no = li * 4 + c + 1
            link(leaf, c + 3, f"CN{no}", 1)
            cas.append(f'Ca 1 "H-{0x2000 + no:016x}" # "CN{no}"\n[1](000000000000{no:04x}) "S-{sw[leaf]:016x}"[{c + 3}]\n')
    text = ""
    for s, pmap in ports.items():
        text += f'Switch 8 "S-{sw[s]:016x}" # "{s}"\n' + "".join(f"[{p}] {r}\n" for p, r in sorted(pmap.items())) + "\n"
    f = Fabric.from_text(text + "\n".join(cas), "ibnetdiscover")
    f.assign_lids()
    return f


def _bandwidth(tables: ForwardingTables, flows) -> float:
    return analyze(tables, "matrix", matrix=[(s, d, 1.0, 0) for s, d in flows], shuffle=False).ebb()["mean"]


def _h2() -> Dict[str, Any]:
    f = _gen("XGFT(2;4,4;1,4)")
    lids = [n["lid"] for n in f.nodes() if n["kind"] != "switch"]
    flows = [(lids[1], lids[4]), (lids[2], lids[8]), (lids[3], lids[12])]
    fig56 = (_bandwidth(route(f, "ftree").tables, flows), _bandwidth(noftree(f, [lids[4], lids[8], lids[12]]).tables, flows))
    tb = _testbed()
    by = {n["description"]: n["lid"] for n in tb.nodes()}
    old = route(tb, "ftree").tables
    from ibcloud.reconfig import reconfigure

    r = reconfigure(tb, old, None, method="subtree", nodes=["CN1", "CN5"], order=[by["CN1"], by["CN3"]])
    flows7 = [(by["CN5"], by["CN1"]), (by["CN7"], by["CN3"])]
    fig7 = (_bandwidth(old, flows7), _bandwidth(r.tables, flows7))
    return {"fig5_6": fig56, "fig7": fig7, "fig7_subtree_switches": len(r.report["subtree"]["switches"]),
            "fig7_verified": r.ok}


def _ebb(tables: ForwardingTables, runs: int, seed: int) -> float:
    return analyze(tables, "bisect", runs=runs, seed=seed).ebb()["mean"]


def _h3(quick: bool, seeds: int, ebb_runs: int, log) -> Dict[str, Any]:
    out: Dict[str, Any] = {"first_link": [], "k_minus_1": [], "shutdowns": [], "topology_b": None}
    trees = SLIM_TREES if not quick else {"16-ary-2 (G)": "16-ary-2", "16-ary-2 2:1 (H)": "XGFT(2;32,16;1,16)"}
    for name, spec in trees.items():
        f = _gen(spec)
        log(f"H3 {name}")
        k = int(name.split("-")[0])
        first = {"ftree": [], "slim": [], "ftree_paths": [], "slim_paths": [], "ftree_blocks": [], "slim_blocks": []}
        for seed in range(seeds):
            steps = json.loads(_native.reconfig_fault_scenario(f._native, "link", 1, seed)[0])
            s = steps[0]
            first["ftree"].append(s["ftree_cn"]["changed_entries"])
            first["slim"].append(s["slim_cn"]["changed_entries"])
            first["ftree_paths"].append(s["ftree_cn"]["changed_paths"])
            first["slim_paths"].append(s["slim_cn"]["changed_paths"])
            first["ftree_blocks"].append(s["ftree"]["changed_blocks"])
            first["slim_blocks"].append(s["slim"]["changed_blocks"])
        row = {"tree": name, **{key: statistics.mean(v) for key, v in first.items()}}
        row["saving"] = 1 - row["slim"] / max(row["ftree"], 1e-9)
        out["first_link"].append(row)
        for kind, count, key in (("link", k - 1, "k_minus_1"), ("node", 10, "shutdowns")):
            steps_json, now, t_f, t_s = _native.reconfig_fault_scenario(f._native, kind, count, 0)
            steps = json.loads(steps_json)
            cum_f = sum(s["ftree_cn"]["changed_entries"] for s in steps)
            cum_s = sum(s["slim_cn"]["changed_entries"] for s in steps)
            row = {"tree": name, "events": len(steps), "ftree_cumulative": cum_f, "slim_cumulative": cum_s,
                   "saving": 1 - cum_s / max(cum_f, 1e-9),
                   "per_step": [(s["ftree_cn"]["changed_entries"], s["slim_cn"]["changed_entries"]) for s in steps]}
            if ebb_runs:
                row["ebb_ftree"] = _ebb(ForwardingTables._from_native(t_f), ebb_runs, 1)
                row["ebb_slim"] = _ebb(ForwardingTables._from_native(t_s), ebb_runs, 1)
            out[key].append(row)
    f = _gen("3-ary-2")
    a, b = [], []
    for seed in range(max(seeds, 20)):
        s = json.loads(_native.reconfig_fault_scenario(f._native, "link", 1, seed)[0])[0]
        a.append(s["ftree_cn"]["changed_entries"])
        b.append(s["slim_cn"]["changed_entries"])
    out["topology_b"] = {"ftree": statistics.mean(a), "slim": statistics.mean(b)}
    out["readings"] = [] if quick else _h3_readings(seeds, log)
    return out


#: Readings of Paper IV's undefined "modifications" (reference C §1.5), tried
#: to find which gives the paper's numbers: (name, what it counts, ftree's
#: field, SlimUpdate's field, how the steps combine). Fields are the
#: ChangeReports of each scenario step (ibcloud_reconfig::experiments);
#: "sum" adds the steps, "last" takes the last event alone, "start" compares
#: the tables after the last event with the fault-free ones.
READINGS = [
    ("entries, live CNs (judged)", "changed (switch, DLID) entries of the compute nodes live before and after",
     "ftree_cn", "slim_cn", "changed_entries", "sum"),
    ("entries, all LIDs", "the same, switch LIDs and departed nodes included", "ftree", "slim", "changed_entries", "sum"),
    ("entries, departed LIDs removed", "a shut-down node's entries count as removed on every switch", "ftree_dep",
     "slim_dep", "changed_entries", "sum"),
    ("entries since fault-free", "tables after the last event against the fault-free ones (live CNs)", "ftree_start",
     "slim_start", "changed_entries", "start"),
    ("since fault-free, departed removed", "the same, departed nodes' removed entries included", "ftree_start_dep",
     "slim_start_dep", "changed_entries", "start"),
    ("entries at the last event only", "the k-th event alone (\"7th failure\")", "ftree_cn", "slim_cn",
     "changed_entries", "last"),
    ("destinations", "DLIDs changed on at least one switch", "ftree_cn", "slim_cn", "changed_destinations", "sum"),
    ("source-destination paths", "CA pairs whose hop sequence changed", "ftree_cn", "slim_cn", "changed_paths", "sum"),
    ("64-LID blocks", "LFT blocks rewritten (SMPs); × 64 for entries rewritten whole", "ftree", "slim",
     "changed_blocks", "sum"),
    ("switches touched", "switches that receive a block", "ftree", "slim", "switches_touched", "sum"),
    ("variant: caps floor(E/U)", "SlimUpdate with integer-division caps (beside), live CNs", "ftree_cn",
     "slim_floor_cn", "changed_entries", "sum"),
    ("variant: caps floor(E/U), since fault-free, departed removed", "the same variant, the C4 reading",
     "ftree_start_dep", "slim_floor_start_dep", "changed_entries", "start"),
    ("variant: switch-level counter", "Algorithm 2's printed sw.num_allocated_paths() test (beside), live CNs",
     "ftree_cn", "slim_switch_counter_cn", "changed_entries", "sum"),
]

#: The scenarios the paper gives numbers for: (claim ids, tree, event kind, events).
READING_CASES = [("C3a", "16-ary-2 (G)", "link", 1), ("C3b", "16-ary-2 2:1 (H)", "link", 1),
                 ("C8a", "8-ary-2", "link", 7), ("C8b", "16-ary-2 (G)", "link", 15),
                 ("C8c", "8-ary-2 2:1", "link", 7), ("C8d", "16-ary-2 2:1 (H)", "link", 15),
                 ("C4", "16-ary-2 (G)", "node", 10), ("C4b", "16-ary-2 2:1 (H)", "node", 10)]
READING_PAPER = {"C3a": 80, "C3b": 40, "C8a": 21, "C8b": 39, "C8c": 12.5, "C8d": 14, "C4": 70.7, "C4b": 19.25}


def _reading_value(steps: List[Dict[str, Any]], key: str, field: str, mode: str) -> float:
    use = steps[-1:] if mode in ("last", "start") else steps
    return float(sum(s[key][field] or 0 for s in use))


def _h3_readings(seeds: int, log) -> List[Dict[str, Any]]:
    """Every reading of "modifications" on each scenario the paper gives a
    number for, mean over ``seeds`` random event sequences."""
    rows = []
    for cid, tree, kind, count in READING_CASES:
        log(f"H3 readings {cid} {tree}")
        f = _gen(SLIM_TREES[tree])
        runs = [json.loads(_native.reconfig_fault_scenario(f._native, kind, count, seed)[0]) for seed in range(seeds)]
        for name, what, fk, sk, field, mode in READINGS:
            a = statistics.mean(_reading_value(st, fk, field, mode) for st in runs)
            b = statistics.mean(_reading_value(st, sk, field, mode) for st in runs)
            per = [1 - _reading_value(st, sk, field, mode) / max(_reading_value(st, fk, field, mode), 1e-9)
                   for st in runs]
            rows.append({"claim": cid, "tree": tree, "events": count, "reading": name, "counts": what,
                         "ftree": a, "slim": b, "saving": 1 - b / a if a else float("nan"),
                         "saving_min": min(per), "saving_max": max(per), "seeds": seeds,
                         "paper_saving": READING_PAPER[cid] / 100})
    return rows


def _h4_h5(quick: bool, repeats: int, log) -> Dict[str, Any]:
    rows = []
    sizes = TABLE3 if not quick else {16: "4-ary-2", 256: "16-ary-2", 512: "8-ary-3"}
    for nodes, spec in sizes.items():
        log(f"H4/H5 {spec}")
        r = json.loads(_native.reconfig_routing_times(_gen(spec)._native, repeats))
        r.update(topology=spec, paper_ftree_ms=PAPER["table3"][nodes][0], paper_slim_ms=PAPER["table3"][nodes][1])
        rows.append(r)
    over = []
    if not quick:
        for label, spec in (("8192 (2:1)", "XGFT(3;32,16,16;1,16,16)"), ("16384 (4:1)", "XGFT(3;64,16,16;1,16,16)")):
            log(f"H5 {label}")
            r = json.loads(_native.reconfig_routing_times(_gen(spec)._native, 1))
            r.update(topology=label)
            over.append(r)
    return {"table3": rows, "oversubscribed": over}


def _h6(quick: bool, orders: int, log) -> List[Dict[str, Any]]:
    patterns = ["bruck", "2neighbor", "4neighbor", "6neighbor", "recdbl"]
    rows = []
    names = list(TABLE4) if not quick else ["4-ary-2", "8-ary-2"]
    ratios = (1, 2, 3, 4) if not quick else (1, 4)
    for name in names:
        k, n = TABLE4[name]
        for o in ratios:
            if not quick and orders > 100 and k ** n * o > 1024:
                continue  # the largest rows only with --full and few orders (time)
            log(f"H6 {name} x{o}")
            f = _gen(_oversub(k, n, o))
            for contiguous in (False, True):
                res = json.loads(_native.reconfig_node_order(f._native, patterns, orders, 7, contiguous))
                for r in res:
                    r.update(topology=name, oversubscription=o, nodes=f.num_cas,
                             orders_kind="leaf-contiguous" if contiguous else "uniform")
                    rows.append(r)
    return rows


def _checks(rep: Dict[str, Any]) -> List[Check]:
    """Judges ibcloud/claims/reconfig.toml (wall-clock claims are not judged here: make bench-reconfig)."""
    reg = claims("reconfig")
    checks: List[Check] = []
    h1 = rep["h1"]
    checks.append(reg["C1v"].judge(all(r["verified"] for r in h1),
                                   f"{sum(r['verified'] for r in h1)} of {len(h1)} sub-tree reconfigurations verified"))
    h2 = rep["h2"]
    checks.append(reg["C2"].judge(abs(h2["fig5_6"][0] - 1 / 3) < 1e-9 and h2["fig5_6"][1] == 1.0,
                                  f"{h2['fig5_6'][0]:.3f} → {h2['fig5_6'][1]:.3f}"))
    checks.append(reg["C2b"].judge(list(h2["fig7"]) == [0.5, 1.0], f"{h2['fig7'][0]:.2f} → {h2['fig7'][1]:.2f}"))
    first = {r["tree"]: r for r in rep["h3"]["first_link"]}
    for cid, tree, lo, hi in (("C3a", "16-ary-2 (G)", 0.75, 0.85), ("C3b", "16-ary-2 2:1 (H)", 0.35, 0.45)):
        if tree in first:
            r = first[tree]
            checks.append(reg[cid].judge(lo <= r["saving"] <= hi, f"{r['saving']:.1%} ({r['slim']:.1f} vs "
                                         f"{r['ftree']:.1f} entries)", shape=r["slim"] < r["ftree"]))
    km1 = {r["tree"]: r for r in rep["h3"]["k_minus_1"]}
    for cid, tree, want, tol in (("C8a", "8-ary-2", 21, 1), ("C8b", "16-ary-2 (G)", 39, 1),
                                 ("C8c", "8-ary-2 2:1", 12.5, 0.1), ("C8d", "16-ary-2 2:1 (H)", 14, 1)):
        if tree in km1:
            r = km1[tree]
            checks.append(reg[cid].judge(abs(100 * r["saving"] - want) <= tol,
                                         f"{100 * r['saving']:.1f} % ({r['slim_cumulative']} vs {r['ftree_cumulative']})",
                                         shape=r["saving"] > 0))
    shut = {r["tree"]: r for r in rep["h3"]["shutdowns"]}
    if "16-ary-2 (G)" in shut:
        r = shut["16-ary-2 (G)"]
        checks.append(reg["C4"].judge(abs(100 * r["saving"] - 70.7) <= 0.1,
                                      f"{r['slim_cumulative']} vs {r['ftree_cumulative']} ({100 * r['saving']:.1f} %)",
                                      shape=r["slim_cumulative"] < 0.5 * r["ftree_cumulative"]))
    if "16-ary-2 2:1 (H)" in shut:
        r = shut["16-ary-2 2:1 (H)"]
        checks.append(reg["C4b"].judge(abs(100 * r["saving"] - 19.25) <= 0.01,
                                       f"{r['slim_cumulative']} vs {r['ftree_cumulative']} ({100 * r['saving']:.1f} %)",
                                       shape=r["saving"] > 0))
    b = rep["h3"]["topology_b"]
    ratio = b["slim"] / b["ftree"]
    checks.append(reg["C9"].judge(0.66 <= ratio <= 0.69, f"{b['slim']:.1f} / {b['ftree']:.1f} = {ratio:.2f}",
                                  shape=ratio < 1))
    h6 = rep["h6"]

    def row(topo: str, pattern: str, kind: str, o: int = 1) -> Optional[Dict[str, Any]]:
        return next((r for r in h6 if r["topology"] == topo and r["pattern"] == pattern and r["orders_kind"] == kind
                     and r["oversubscription"] == o), None)

    r = row("8-ary-3", "bruck", "uniform")
    if r:
        checks.append(reg["C7"].judge(abs(r["ftree"] - 0.56) <= 0.01, f"{r['ftree']:.3f} ({r['orders']} orders)"))
        best = max((x for x in (row("8-ary-3", "bruck", k) for k in ("uniform", "leaf-contiguous")) if x),
                   key=lambda x: x["metabase"])
        checks.append(reg["C12"].judge(abs(r["metabase"] - 1.0) <= 0.1,
                                       f"Algorithm 5 {r['metabase']:.3f} vs ftree {r['ftree']:.3f} (uniform orders); "
                                       f"best reading ({best['orders_kind']}) {best['metabase']:.3f} vs {best['ftree']:.3f}",
                                       shape=r["metabase"] > r["ftree"] + 0.05))
    nb = [row(t, p, "leaf-contiguous", o) for t in TABLE4 for p in ("2neighbor", "4neighbor", "6neighbor")
          for o in (1, 2, 3, 4)]
    nb = [x for x in nb if x]
    if nb:
        want = {"2neighbor": 0.50, "4neighbor": 0.25, "6neighbor": 0.16}
        bad = [x for x in nb if abs(x["metabase"] - want[x["pattern"]]) > 0.01]
        checks.append(reg["C13"].judge(not bad, f"{len(nb) - len(bad)} of {len(nb)} rows within ±0.01"
                                       + (f"; e.g. {bad[0]['topology']} ×{bad[0]['oversubscription']} {bad[0]['pattern']} "
                                          f"{bad[0]['metabase']:.3f}" if bad else "")))
    r = row("6-ary-2", "recdbl", "leaf-contiguous")
    if r:
        checks.append(reg["C14"].judge(abs(r["metabase"] - 0.94) <= 0.01, f"{r['metabase']:.3f}"))
    checks.append(reg["C6"].judge(list(rep["h7"]) == [6, 2], str(rep["h7"])))
    if rep["hw"] is not None:
        checks.extend(reconfig_hw.checks(rep["hw"]))
    if not rep["settings"]["quick"]:
        checks.append(_judge_c1(reg["C1"], h1))
    c11 = _judge_c11(reg["C11"], rep["h4_h5"])
    if c11 is not None:
        checks.append(c11)
    done = complete("reconfig", checks, "not run with --quick")
    # C10 and C5 are benchmark ratios: not counted, but our measured ratio is shown.
    extra = {"C10": _c10_detail(rep["h4_h5"]), "C5": _c5_detail(rep["h4_h5"])}
    done = [dataclasses.replace(c, detail=extra[c.id]) if c.id in extra and extra[c.id] else c for c in done]
    closest = _closest_readings(rep["h3"].get("readings", []))
    return [dataclasses.replace(c, detail=f"{c.detail}; {closest[c.id]}") if c.id in closest and c.run else c
            for c in done]


def _closest_readings(rows: List[Dict[str, Any]]) -> Dict[str, str]:
    """Per SlimUpdate claim, the reading of "modifications" whose saving is
    nearest the paper's (reported beside the judged value, never judged).

    >>> _closest_readings([{"claim": "C4", "reading": "a", "ftree": 10, "slim": 3, "saving": 0.7, "seeds": 2,
    ...                     "paper_saving": 0.707}])["C4"]
    'closest reading (reported, not judged): a 10 vs 3 = 70.0 % (mean of 2 seeds)'
    """
    out = {}
    for cid in dict.fromkeys(r["claim"] for r in rows):
        mine = [r for r in rows if r["claim"] == cid and r["ftree"]]
        if not mine:
            continue
        r = min(mine, key=lambda x: abs(x["saving"] - x["paper_saving"]))
        out[cid] = (f"closest reading (reported, not judged): {r['reading']} {r['ftree']:.0f} vs {r['slim']:.0f} = "
                    f"{100 * r['saving']:.1f} % (mean of {r['seeds']} seeds)")
    return out


def _judge_c1(claim, h1: List[Dict[str, Any]]) -> Check:
    """C1 on (switch, LID) entries computed (:func:`_h1_work`): the largest
    reduction over Table I against 98.7 %."""
    best = max(h1, key=lambda r: r["work_reduction"])
    low = min(h1, key=lambda r: r["work_reduction"])
    return claim.judge(abs(100 * best["work_reduction"] - 98.7) <= 0.1,
                       f"work (switch, LID entries computed): {100 * low['work_reduction']:.2f} % "
                       f"({low['topology']}) … {100 * best['work_reduction']:.2f} % ({best['topology']}); "
                       f"without switch LIDs up to {100 * max(r['work_reduction_cn_lids'] for r in h1):.2f} %; "
                       f"wall-clock (printed, not judged) {100 * min(r['subtree_reduction'] for r in h1):.1f}-"
                       f"{100 * max(r['subtree_reduction'] for r in h1):.1f} %",
                       shape=all(0.5 <= r["work_reduction"] < 1 for r in h1))


def _c11_rows(h45: Dict[str, Any]) -> Optional[List[Dict[str, Any]]]:
    rows = {r["nodes"]: r for r in h45["table3"] + h45["oversubscribed"]}
    if not all(n in rows for n in (4096, 8192, 16384)):
        return None
    return [rows[n] for n in (4096, 8192, 16384)]


def _c11_savings(r: Dict[str, Any]) -> Dict[str, float]:
    """Routes computed by mFatTree's initial run against ftree's: paths per
    leaf = link-disjoint trees (judged) or our default path count.

    >>> s = _c11_savings({"leaves": 256, "max_cn_per_leaf": 32, "trees_disjoint": 16, "ftree_routes": 8192,
    ...                   "metabase_routes": 8192})
    >>> s["disjoint"], s["default"]
    (0.5, 0.0)
    """
    disjoint = r["leaves"] * min(r["trees_disjoint"], r["max_cn_per_leaf"])
    return {"disjoint": 1 - disjoint / r["ftree_routes"], "default": 1 - r["metabase_routes"] / r["ftree_routes"]}


def _judge_c11(claim, h45: Dict[str, Any]) -> Optional[Check]:
    rows = _c11_rows(h45)
    if rows is None:
        return None
    want = (0.8, 46.2, 66.6)
    got = [100 * _c11_savings(r)["disjoint"] for r in rows]
    default = [100 * _c11_savings(r)["default"] for r in rows]
    wall = [100 * (1 - r["mfattree"] / r["ftree"]) for r in rows]
    ok = all(abs(g - w) <= 0.5 for g, w in zip(got, want))
    return claim.judge(ok, "routes computed, 4,096 / 8,192 (2:1) / 16,384 (4:1) nodes: "
                       + " / ".join(f"−{g:.1f} %" for g in got)
                       + f" (paths = {rows[0]['trees_disjoint']} disjoint trees per leaf); default path count "
                       + " / ".join(f"−{g:.1f} %" for g in default)
                       + "; wall-clock (not judged) " + " / ".join(f"{-w:+.0f} %" for w in wall),
                       shape=got[1] > 0 and got[2] > got[1])


def _c10_detail(h45: Dict[str, Any]) -> str:
    rows = h45["table3"]
    if not rows:
        return ""
    over = [100 * (r["slimupdate"] / r["ftree"] - 1) for r in rows]
    return (f"benchmark ratio, not counted: our SlimUpdate's first run {min(over):+.0f} … {max(over):+.0f} % over "
            f"our ftree ({', '.join(str(r['nodes']) for r in rows)} nodes, one run, best of repeats)")


def _c5_detail(h45: Dict[str, Any]) -> str:
    r = next((x for x in h45["table3"] if x["nodes"] == 4096), None)
    if r is None:
        return ""
    return (f"benchmark ratio, not counted: phase II {1e3 * r['phase2']:.2f} vs ftree {1e3 * r['ftree']:.2f} ms "
            f"({100 * (1 - r['phase2'] / r['ftree']):.0f} % less) at 4,096 nodes; counts bracket it at 0-100 % "
            f"(routes computed 0 of {r['ftree_routes']}; columns written {r['nodes']} of {r['ftree_routes']})")


def reproduce(quick: bool = False, full: bool = False, out: Optional[Path] = DEFAULT_OUT, plots: bool = True,
              repeats: int = 3, verbose: bool = False) -> Dict[str, Any]:
    """Runs everything; ``quick`` is a seconds-long subset (for tests),
    ``full`` the paper's sizes. Returns the report (and writes it to ``out``).

    >>> r = reproduce(quick=True, out=None, plots=False)
    >>> r["h2"]["fig7"]
    [0.5, 1.0]
    """
    def log(msg: str) -> None:
        if verbose:
            print(f"  {msg}", flush=True)

    start = time.perf_counter()
    seeds = 20 if full else (3 if quick else 10)
    ebb_runs = 10000 if full else (0 if quick else 1000)
    orders = 10000 if full else (4 if quick else 100)
    rep: Dict[str, Any] = {
        "settings": {"quick": quick, "full": full, "repeats": repeats, "seeds": seeds, "ebb_runs": ebb_runs,
                     "orders": orders},
        "paper": PAPER,
    }
    rep["h1"] = _h1(quick, 1 if quick else repeats, log)
    rep["h2"] = {k: list(v) if isinstance(v, tuple) else v for k, v in _h2().items()}
    rep["h3"] = _h3(quick, seeds, ebb_runs, log)
    rep["h4_h5"] = _h4_h5(quick, 1 if quick else repeats, log)
    rep["h6"] = _h6(quick, orders, log)
    rep["h7"] = list(tree_counts(_gen("XGFT(3;4,4,3;1,2,3)")))
    rep["hw"] = None if quick else reconfig_hw.run(full=full, log=log)
    checks = _checks(rep)
    rep["checks"] = [c.as_dict() for c in checks]
    rep["scoreboard"] = counts(checks)
    rep["ok"] = exit_status(checks) == 0
    rep["seconds"] = time.perf_counter() - start
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(dumps_json(rep, indent=2, default=str))
        _csvs(rep, out)
        if plots:
            _plots(rep, out)
    return rep


def _csvs(rep: Dict[str, Any], out: Path) -> None:
    import pandas as pd

    pd.DataFrame(rep["h1"]).to_csv(out / "h1_subtree.csv", index=False)
    for key in ("first_link", "k_minus_1", "shutdowns"):
        pd.DataFrame(rep["h3"][key]).to_csv(out / f"h3_{key}.csv", index=False)
    pd.DataFrame(rep["h3"]["readings"]).to_csv(out / "h3_readings.csv", index=False)
    pd.DataFrame(rep["h4_h5"]["table3"] + rep["h4_h5"]["oversubscribed"]).to_csv(out / "h4_h5_times.csv", index=False)
    pd.DataFrame(rep["h6"]).to_csv(out / "h6_node_order.csv", index=False)
    if rep["hw"] is not None:
        reconfig_hw._write_csvs(rep["hw"], out)


def _plots(rep: Dict[str, Any], out: Path) -> None:
    from matplotlib.figure import Figure

    def save(fig, name: str) -> None:
        fig.savefig(out / name, dpi=110)

    h1 = rep["h1"]
    fig = Figure(figsize=(10, 4), layout="constrained")
    ax = fig.add_subplot()
    x = range(len(h1))
    ax.bar([i - 0.27 for i in x], [r["full"] * 1e3 for r in h1], 0.27, label="full ftree (from scratch)")
    ax.bar(list(x), [r["full_reuse"] * 1e3 for r in h1], 0.27, label="full, data structures reused")
    ax.bar([i + 0.27 for i in x], [r["subtree"] * 1e3 for r in h1], 0.27, label="2-level sub-tree (NoFTree)")
    ax.set_yscale("log")
    ax.set_xticks(list(x), [r["topology"] for r in h1], rotation=45, ha="right")
    ax.set_ylabel("reconfiguration time (ms)")
    ax.set_title("Paper III Fig. 10 analogue: reconfiguration time per Table I topology")
    ax.legend()
    save(fig, "h1_reconfiguration_time.png")

    fig = Figure(figsize=(10, 4), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, key, title in ((axes[0], "k_minus_1", "successive link failures"), (axes[1], "shutdowns", "node shutdowns")):
        for r in rep["h3"][key]:
            steps = range(1, len(r["per_step"]) + 1)
            line = ax.plot(steps, [p[0] for p in r["per_step"]], "--", label=f"{r['tree']} ftree")
            ax.plot(steps, [p[1] for p in r["per_step"]], "-", color=line[0].get_color(), label=f"{r['tree']} SlimUpdate")
        ax.set_xlabel("event")
        ax.set_ylabel("changed (switch, DLID) entries")
        ax.set_title(title)
    axes[1].legend(fontsize=6)
    save(fig, "h3_slimupdate.png")

    t3 = rep["h4_h5"]["table3"] + rep["h4_h5"]["oversubscribed"]
    fig = Figure(figsize=(8, 4), layout="constrained")
    ax = fig.add_subplot()
    labels = [f"{r['topology']}\n{r['nodes']}" for r in t3]
    x = range(len(t3))
    for off, key, label in ((-0.3, "ftree", "ftree"), (-0.1, "slimupdate", "SlimUpdate (first run)"),
                            (0.1, "mfattree", "mFatTree initial"), (0.3, "phase2", "metabase phase II (Recon-SM)")):
        ax.bar([i + off for i in x], [r[key] * 1e3 for r in t3], 0.2, label=label)
    ax.set_yscale("log")
    ax.set_xticks(list(x), labels, fontsize=7)
    ax.set_ylabel("routing time (ms)")
    ax.set_title("Paper IV Table 3 / Figs. 11-12 analogue")
    ax.legend(fontsize=7)
    save(fig, "h4_h5_routing_time.png")

    if rep.get("hw") is not None:
        reconfig_hw.plot(rep["hw"], out)
    h6 = rep["h6"]
    if h6:
        fig = Figure(figsize=(10, 4), layout="constrained")
        ax = fig.add_subplot()
        h6 = [r for r in h6 if r["orders_kind"] == "leaf-contiguous"]
        labels = [f"{r['topology']} x{r['oversubscription']}\n{r['pattern']}" for r in h6]
        x = range(len(h6))
        ax.bar([i - 0.2 for i in x], [r["ftree"] for r in h6], 0.4, label="ftree (port order)")
        ax.bar([i + 0.2 for i in x], [r["metabase"] for r in h6], 0.4, label="Algorithm 5 (metabase)")
        ax.set_xticks(list(x), labels, rotation=90, fontsize=5)
        ax.set_ylabel("mean effective bandwidth")
        ax.set_title("Paper IV Figs. 13-14 analogue: random leaf-contiguous node orders")
        ax.legend()
        save(fig, "h6_node_order.png")


def _print(rep: Dict[str, Any]) -> None:
    print("H1 Paper III: reconfiguration time, full ftree vs one 2-level sub-tree (NoFTree)")
    print(f"{'topology':<13}{'nodes':>6}{'sw':>6}{'full ms':>10}{'reuse ms':>10}{'sub ms':>9}{'reduction':>10}"
          f"{'SMPs sub/full':>15}{'work sub/full (switch, LID entries)':>38}{'work reduction':>16}")
    for r in rep["h1"]:
        print(f"{r['topology']:<13}{r['nodes']:>6}{r['switches']:>6}{r['full'] * 1e3:>10.2f}{r['full_reuse'] * 1e3:>10.2f}"
              f"{r['subtree'] * 1e3:>9.3f}{r['subtree_reduction']:>10.1%}"
              f"{r['subtree_changed_blocks']:>8}/{r['full_changed_blocks']:<6}"
              f"{r['work_subtree']:>20}/{r['work_full']:<17}{r['work_reduction']:>16.2%}")
    print(f"  paper: {PAPER['subtree_reduction']} (C1 is judged on the work column: entries computed; times are not judged)")
    h2 = rep["h2"]
    print("H2 NoFTree: Fig. 5/6 %.3f -> %.3f (paper 0.333 -> 1.0); Fig. 7 testbed %.2f -> %.2f (paper 0.5 -> 1.0)"
          % (h2["fig5_6"][0], h2["fig5_6"][1], h2["fig7"][0], h2["fig7"][1]))
    h3 = rep["h3"]
    print("H3 SlimUpdate vs ftree, changed (switch, DLID) entries of live compute nodes")
    for r in h3["first_link"]:
        paper = PAPER["first_link_failure_saving"].get(r["tree"][-2], None)
        print(f"  first link failure {r['tree']:<18} ftree {r['ftree']:8.1f}  SlimUpdate {r['slim']:7.1f}  "
              f"saving {r['saving']:.0%}" + (f"  (paper ~{paper:.0%})" if paper else "")
              + f"; paths {r['ftree_paths']:.0f} vs {r['slim_paths']:.0f}; blocks {r['ftree_blocks']:.0f} vs "
              f"{r['slim_blocks']:.0f}")
    for key, label in (("k_minus_1", "k-1 link failures"), ("shutdowns", "10 node shutdowns")):
        for r in h3[key]:
            ebb = (f"; EBB ftree {r['ebb_ftree']:.3f} SlimUpdate {r['ebb_slim']:.3f}" if "ebb_ftree" in r else "")
            print(f"  {label:<18} {r['tree']:<18} cumulative ftree {r['ftree_cumulative']:6} SlimUpdate "
                  f"{r['slim_cumulative']:6} saving {r['saving']:.0%}{ebb}")
    print(f"  paper: k-1 failures {PAPER['k_minus_1_saving']}; shutdowns 16-ary-2 310 vs 1057 (70.7%), 2:1 19.25%")
    b = h3["topology_b"]
    print(f"  topology B (3-ary-2), one link failure: ftree {b['ftree']:.1f} SlimUpdate {b['slim']:.1f} entries "
          f"(ratio {b['slim'] / b['ftree']:.2f}; paper 5.5 vs 3.7 paths, ratio 0.67)")
    if h3["readings"]:
        print(f"  readings of \"modifications\" (mean of {h3['readings'][0]['seeds']} seeds; saving = 1 - SlimUpdate / ftree)")
        for cid in dict.fromkeys(r["claim"] for r in h3["readings"]):
            rows = [r for r in h3["readings"] if r["claim"] == cid]
            print(f"   {cid} {rows[0]['tree']} x{rows[0]['events']} (paper {100 * rows[0]['paper_saving']:g} %): "
                  + "; ".join(f"{r['reading']} {r['ftree']:.0f}/{r['slim']:.0f}={100 * r['saving']:.0f} %" for r in rows))
    print("H4/H5 routing time (ms): ours, then paper Table 3")
    for r in rep["h4_h5"]["table3"] + rep["h4_h5"]["oversubscribed"]:
        paper = (f"  paper ftree {r['paper_ftree_ms']} SlimUpdate {r['paper_slim_ms']} "
                 f"(x{r['paper_slim_ms'] / r['paper_ftree_ms']:.2f})" if "paper_ftree_ms" in r else "")
        print(f"  {r['topology']:<26}{r['nodes']:>6} ftree {r['ftree'] * 1e3:9.2f} SlimUpdate {r['slimupdate'] * 1e3:9.2f}"
              f" (x{r['slimupdate'] / r['ftree']:.2f}) mFatTree {r['mfattree'] * 1e3:9.2f} phase II "
              f"{r['phase2'] * 1e3:7.3f} ({1 - r['phase2'] / r['ftree']:.0%} less) parallel {r['parallel'] * 1e3:.4f}"
              + paper)
    print("  paper: 4096 nodes Recon-SM 150.8 ms vs 987.5 ms (85%), Recon-Parallel 0.2 ms; 2:1 1301 vs 2420, 4:1 1945 vs 5827")
    print("  routes computed (C11's measure): " + "; ".join(
        f"{r['nodes']} nodes ftree {r['ftree_routes']} mFatTree {r['leaves'] * min(r['trees_disjoint'], r['max_cn_per_leaf'])}"
        f" (disjoint paths) / {r['metabase_routes']} (default paths)"
        for r in rep["h4_h5"]["table3"] + rep["h4_h5"]["oversubscribed"] if "ftree_routes" in r))
    print("H6 node orders: mean effective bandwidth, ftree vs Algorithm 5")
    for r in rep["h6"]:
        print(f"  {r['topology']:<9} x{r['oversubscription']} {r['nodes']:>5} {r['orders_kind']:<15} {r['pattern']:<10} "
              f"ftree {r['ftree']:.3f} Alg5 {r['metabase']:.3f}  ({r['orders']} orders)")
    print(f"  paper: {PAPER['node_order']}")
    print(f"H7 spanning trees XGFT(3;4,4,3;1,2,3): {rep['h7']} (paper 6 different, 2 disjoint)")
    if rep["hw"] is not None:
        reconfig_hw._print_report(rep["hw"])
    print("Wall-clock comparisons with the papers (H1, Table 3, Figs. 11-12) are printed above for information;"
          " make bench-reconfig reports them as ratios.")
    render_scoreboard("reconfig", [Check(**{k: v for k, v in c.items() if k not in ("verdict", "mark")})
                                   for c in rep["checks"]])


def configure(parser: argparse.ArgumentParser) -> None:
    """Adds the options of ``ibcloud reproduce reconfig``.

    >>> p = argparse.ArgumentParser()
    >>> configure(p)
    >>> p.parse_args(["--quick", "--json"]).quick
    True
    """
    parser.add_argument("--quick", action="store_true", help="a seconds-long subset")
    parser.add_argument("--full", action="store_true", help="the paper's sizes (10,000 orders/bisections; hours)")
    parser.add_argument("--repeats", type=int, default=3, help="timing repeats (best is kept)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    parser.add_argument("--no-plots", action="store_true", help="skip the figures")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    from ibcloud.sm.live_reproduction import add_options
    add_options(parser, "reconfig")


def run(args: argparse.Namespace) -> int:
    """Runs the reproduction; 1 when a prediction or qualitative claim that
    ran does not hold (see :func:`ibcloud.checks.exit_status`).

    >>> import tempfile
    >>> p = argparse.ArgumentParser(); configure(p)
    >>> run(p.parse_args(["--quick", "--no-plots", "--out", tempfile.mkdtemp(), "--json"]))  # doctest: +ELLIPSIS
    {...
    1
    """
    if args.live:
        from ibcloud.sm.live_reproduction import run_reconfig
        return run_reconfig(args)
    rep = reproduce(quick=args.quick, full=args.full, out=args.out, plots=not args.no_plots, repeats=args.repeats,
                    verbose=not args.json)
    if args.json:
        print(dumps_json(rep, indent=2, default=str))
    else:
        _print(rep)
        print(f"wrote {args.out} ({rep['seconds']:.1f} s)")
    return 0 if rep["ok"] else 1
