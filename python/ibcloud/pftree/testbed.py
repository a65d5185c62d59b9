"""Seed 002's isolation testbed (Fig. 7, E §3.1.1) on the packet simulator.

The Fig. 5 tree: two roots, three leaves of three nodes (A–C, D–F, G–I), 4x
QDR links. Partitions: P1 = {A, E} (the victim), P2 = {B, F, G, H, I}, P3 =
{C, D}. The seed fixes A, E (P1), B, F, I (P2) and C (P3); where D, G and H
sit is missing (a GAP), so we chose the completion under which our pFTree
routes as the seed's text says: A shares its down link to L1 with C, E its
down link to L2 with F, each on a VL of its own.

The victim flow A→E runs throughout; P2's B→F joins for the second phase,
I→F for the third; B→F stops after the third, I→F after the fourth (the
paper's 20 / 40 / 60 / 80 s, scaled to 200 µs phases: a greedy flow reaches
its steady rate within microseconds). Each phase's mean rate of A→E (after
a quarter of the phase) is reported, for pFTree (partitions on separate VLs,
equal-weight VL arbitration) and pFTree-Ext (P1 phy), plus two readings of
the same pFTree tables beside (not the paper's set-up): every flow on one
VL, and the VLs merged on the roots only (the switches' SL2VL maps every SL
to VL 0 there; separated on every other hop).

The HCA's rate is the one number fitted: a single perftest flow reached
3,742 MB/s on the testbed, so the host limit is set to 3,742 MB/s of payload
(29.936 Gb/s); the rates under interference are predictions.

>>> r = run()
>>> round(r["pftree"][0]), round(r["pftree-ext"][1])
(3741, 3741)
"""

from __future__ import annotations

from typing import Dict, List

from ibcloud.fabric import Fabric
from ibcloud.partitions import Partition, PartitionConfig, leaf_nodes, route
from ibcloud.safeio import checked_ints

__all__ = ["PAPER", "HOST_MBPS", "PARTITIONS", "ARBITRATION", "run", "arbitration_readings"]

#: Fig. 7: victim A→E in MB/s, alone / + B→F / + B→F and I→F, with pFTree (separate VLs); -Ext stays at 3,742.
PAPER = {"alone": 3742.0, "one": 2270.0, "two": 1518.0}
#: The fitted host limit: the testbed's single-flow perftest rate.
HOST_MBPS = 3742.0
#: Partition of each node (D, G, H chosen, see the module's docstring).
PARTITIONS = {"A": 1, "B": 2, "C": 3, "D": 3, "E": 1, "F": 2, "G": 2, "H": 2, "I": 2}


def _config(names) -> PartitionConfig:
    return PartitionConfig.build([
        Partition(f"P{p}", p, "phy" if p == 1 else "def", None,
                  [(hex(names[k][1]), "full") for k in sorted(PARTITIONS) if PARTITIONS[k] == p])
        for p in (1, 2, 3)
    ])


@checked_ints(phase_us=(1, 10**9), mtu=(256, 4096))
def run(phase_us: int = 200, mtu: int = 2048) -> Dict[str, List[float]]:
    """Mean A→E rate (MB/s) in each of the five phases, per engine:
    ``pftree``, ``pftree-ext``, ``pftree one VL`` (pFTree's tables with
    every flow on VL 0) and ``pftree roots one VL`` (VLs merged on the
    roots); ``vls`` the VL of P1, P2, P3 under pFTree.

    >>> run()["vls"]
    [1, 2, 0]
    """
    from ibcloud.sim import simulate

    fabric = Fabric.generate("XGFT(2;3,3;1,2)")
    names = dict(zip("ABCDEFGHI", [n for leaf in leaf_nodes(fabric) for n in leaf]))
    conf = _config(names)
    out: Dict[str, List[float]] = {}
    p = phase_us
    roots = [n["description"] for n in fabric.nodes() if n["kind"] == "switch" and n["rank"] == 0]
    merge_roots = [{"time": 0, "type": "set-sl2-vl", "node": root, "in_port": port, "out_port": None, "map": [0] * 16}
                   for root in roots for port in range(1, 4)]
    for label, engine, one_vl, events in (("pftree", "pftree", False, None), ("pftree-ext", "pftree-ext", False, None),
                                          ("pftree one VL", "pftree", True, None),
                                          ("pftree roots one VL", "pftree", False, merge_roots)):
        r = route(fabric, engine, conf)
        if label == "pftree":
            out["vls"] = list(r.vls)
        sl = {k: 0 if one_vl else r.vls[k - 1] for k in (1, 2, 3)}
        lid = lambda k: f"lid:{names[k][0]}"  # noqa: E731
        spec = (f"flow:src={lid('A')},dst={lid('E')},sl={sl[1]};"
                f"flow:src={lid('B')},dst={lid('F')},sl={sl[2]},start={p}us,stop={3 * p}us;"
                f"flow:src={lid('I')},dst={lid('F')},sl={sl[2]},start={2 * p}us,stop={4 * p}us")
        res = simulate(r.tables, spec, f"{5 * p}us", events=events, vls=4, mtu=mtu, host_gbps=HOST_MBPS * 8 / 1000,
                       sweep_interval=f"{max(1, p // 20)}us")
        out[label] = [res.gbps(0, f"{k * p + p // 4}us", f"{(k + 1) * p}us") * 1000 / 8 for k in range(5)]
    return out


#: Readings of the VL arbitration tables (not given by the seed) for pFTree's VLs (P1 → 1, P2 → 2, P3 → 0):
#: label → ``vl_arbitration`` of :func:`ibcloud.sim.config`. None of them is fitted to Fig. 7.
ARBITRATION = {
    "equal weights (judged)": None,
    "OpenSM QoS defaults (high 0:4, low 1-3:4, limit 0)": {"high": "0:4", "low": "0:0,1:4,2:4,3:4", "high_limit": 0},
    "victim VL weighted 2:1": {"low": "0:32,1:64,2:32,3:32"},
    "victim VL weighted 1:2": {"low": "0:32,1:32,2:64,3:32"},
    "victim VL high priority, unlimited": {"high": "1:255", "low": "0:32,2:32,3:32", "high_limit": 255},
    "interferers' VL high priority, unlimited": {"high": "2:255", "low": "0:32,1:32,3:32", "high_limit": 255},
}


@checked_ints(phase_us=(1, 10**9), mtu=(256, 4096))
def arbitration_readings(phase_us: int = 200, mtu: int = 2048) -> Dict[str, List[float]]:
    """Mean A→E rate (MB/s) per phase with pFTree's tables and VLs under each
    reading of :data:`ARBITRATION`: whatever the tables, the victim alone on
    its VL gets the same share with one interferer as with two (unless the
    interferers' VL has absolute priority and starves it).

    >>> r = arbitration_readings()
    >>> all(abs(v[1] - v[2]) < 5 for k, v in r.items() if not k.startswith("interferers"))
    True
    >>> [round(x) for x in r["interferers' VL high priority, unlimited"][1:3]]
    [191, 0]
    """
    from ibcloud.sim import simulate

    fabric = Fabric.generate("XGFT(2;3,3;1,2)")
    names = dict(zip("ABCDEFGHI", [n for leaf in leaf_nodes(fabric) for n in leaf]))
    r = route(fabric, "pftree", _config(names))
    sl = {k: r.vls[k - 1] for k in (1, 2, 3)}
    lid = lambda k: f"lid:{names[k][0]}"  # noqa: E731
    p = phase_us
    spec = (f"flow:src={lid('A')},dst={lid('E')},sl={sl[1]};"
            f"flow:src={lid('B')},dst={lid('F')},sl={sl[2]},start={p}us,stop={3 * p}us;"
            f"flow:src={lid('I')},dst={lid('F')},sl={sl[2]},start={2 * p}us,stop={4 * p}us")
    out: Dict[str, List[float]] = {}
    for label, arb in ARBITRATION.items():
        extra = {} if arb is None else {"vl_arbitration": arb}
        res = simulate(r.tables, spec, f"{5 * p}us", vls=4, mtu=mtu, host_gbps=HOST_MBPS * 8 / 1000,
                       sweep_interval=f"{max(1, p // 20)}us", **extra)
        out[label] = [res.gbps(0, f"{k * p + p // 4}us", f"{(k + 1) * p}us") * 1000 / 8 for k in range(5)]
    return out
