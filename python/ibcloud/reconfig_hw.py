"""Paper IV's hardware results (reference C §3.3) on the packet simulator.

The testbed: 8 ConnectX-3 hosts and QDR InfiniScale IV switches wired as

* **topology A** — 2 roots, 2 leaves of 4 nodes, each leaf one link to each
  root (2:1), ``XGFT(2;4,2;1,2)``;
* **topology B** — the 3-ary-2-tree (3 leaves of 3 nodes, 3 roots); the
  ninth node is stale (routed, never an MPI rank).

Routing: FTree is our OpenSM-faithful ftree. On A two nodes shut down and
OpenSM's unicast routing cache keeps FTree's tables (no re-routing);
SlimUpdate re-routes each shutdown from its previous tables. On B one
switch-to-switch link fails: FTree re-routes the whole fabric (the cache
does not cover switch links), SlimUpdate updates its tables; every link of
B is failed in turn and the results averaged, as the paper averages over
links.

Benchmarks (each message posted at time 0 on the simulator; a message's
completion is its last byte consumed at the sink):

* **Netgauge EBB** (1 MiB): every rank of a random bisection pair sends
  256 KiB (``EBB_REPS`` MiB with ``full``) to its partner and receives as
  much; a rank's time is
  the later of its send and its receive; EBB = bytes / mean time over all
  ranks and bisections (Netgauge's own average). Bisections are all
  perfect matchings of the ranks (105 of 8, 15 of 6), or a seeded sample.
* **OSU alltoall** (1 MiB): pairwise exchange, step i sends to rank + i and
  receives from rank − i; each step ends with its slowest message (the
  steps are chained by the ranks' receives); latency = sum of the steps
  plus a per-message host overhead per step.
* **HPCC** (``bench_lat_bw``) ping-pong (2,000,000 bytes; 8 bytes for
  latency): one-way time of every rank pair alone, minimum bandwidth /
  maximum latency; naturally and randomly ordered rings in both
  directions, the better of two ``MPI_Sendrecv`` in turn and non-blocking
  sends to both neighbours at once (two SLs, so the two sends share the HCA
  as two queue pairs); per pattern latency = the slowest rank's iteration
  / 2, bandwidth = bytes / latency; random rings (``rings`` seeded
  permutations) combine by the geometric mean of their latencies.

Fitted (calibration rows): the host injection cap to HPCC's 3856.83 MB/s
ping-pong (HW0), a per-message host overhead to its 1.699 µs latency
(HW16), and one Netgauge efficiency factor to Fig. 3a's full-tree 2650
MB/s (HW1). MB = 10^6 bytes (Netgauge prints bytes/µs; HPCC GB/s ×1000).

>>> cal = calibrate()
>>> round(cal["host_mbps"]) > 3856
True
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ibcloud.fabric import Fabric
from ibcloud.partitions import leaf_nodes
from ibcloud.routing import route
from ibcloud.tables import ForwardingTables
from ibcloud.safeio import checked_ints

__all__ = ["PAPER", "EBB_REPS", "HPCC_BYTES", "calibrate", "matchings", "run", "topology_a", "topology_b"]

#: Paper IV §3.3 (reference C): Fig. 3 (A), Fig. 4 (B), Table 1 (B).
PAPER: Dict[str, Any] = {
    "ebb_a": {"full": 2650.0, "ftree_after": 2473.0, "slim_after": 3227.0},
    "alltoall_a_us": {"ftree_after": 2751.0, "slim_after": 1817.0},
    "ebb_b": {"ftree_fault": 1972.0, "slim_fault": 2187.0},
    # cases: FTree no fault, SlimUpdate no fault, FTree 1 fault, SlimUpdate 1 fault
    "table1": {
        "pingpong_mbps": (3856.83, 3854.17, 3853.29, 3853.09),
        "natural_ring_mbps": (3783.34, 3809.54, 3791.46, 3784.19),
        "random_ring_mbps": (2703.00, 2647.91, 2189.44, 2400.32),
        "pingpong_latency_us": (1.699, 1.624, 1.684, 1.743),
        "random_ring_latency_us": (1.201, 1.216, 1.196, 1.218),
    },
}
#: Table 1's four columns.
CASES = ("ftree", "slim", "ftree_fault", "slim_fault")
#: Netgauge: MiB per direction and rank per bisection (the repetitions of one round).
EBB_REPS = 2
#: HPCC's ping-pong and ring message (bytes).
HPCC_BYTES = 2_000_000
#: OSU alltoall message (bytes).
OSU_BYTES = 1 << 20
#: A 4x QDR link's payload rate at MTU 2048 (32 Gb/s × 2048 / 2082 bytes on the wire), MB/s: bounds run times only.
LINK_MBPS = 3935.0
#: Settings of every run: 4x QDR (the generator's default rate), MTU 2048 (OpenSM's default partition MTU).
SIM = {"mtu": 2048}


def topology_a() -> Fabric:
    """Topology A: 2 roots, 2 leaves of 4 nodes, 2:1.

    >>> f = topology_a(); f.num_cas, len(leaf_nodes(f))
    (8, 2)
    """
    return Fabric.generate("XGFT(2;4,2;1,2)")


def topology_b() -> Fabric:
    """Topology B: the 3-ary-2-tree (9 nodes; the ninth stale).

    >>> topology_b().num_cas
    9
    """
    return Fabric.generate("3-ary-2")


@checked_ints
def matchings(ranks: Sequence[int]) -> List[List[Tuple[int, int]]]:
    """Every perfect matching of ``ranks`` (the random bisections Netgauge
    draws, each equally likely).

    >>> len(matchings(range(8))), len(matchings(range(6))), matchings([1, 2, 3, 4])[0]
    (105, 15, [(1, 2), (3, 4)])
    """
    ranks = list(ranks)
    if not ranks:
        return [[]]
    if len(ranks) % 2:
        raise ValueError("a bisection needs an even number of ranks")
    first, rest = ranks[0], ranks[1:]
    out = []
    for i, other in enumerate(rest):
        for m in matchings(rest[:i] + rest[i + 1:]):
            out.append([(first, other)] + m)
    return out


class Net:
    """A fabric with its CA LIDs, leaves and the walk of a route through tables.

    >>> n = Net(topology_a())
    >>> n.leaves[0][:2], n.ranks[:3]
    ([1, 2], [1, 2, 3])
    """

    def __init__(self, fabric: Fabric, stale: int = 0) -> None:
        self.fabric = fabric
        nodes = fabric.nodes()
        self.by_id = {n["id"]: n for n in nodes}
        self.guid_of = {n["id"]: n["guid"] for n in nodes}
        self.port = {}
        for l in fabric.links():
            self.port[(l["node_a"], l["port_a"])] = l["node_b"]
            self.port[(l["node_b"], l["port_b"])] = l["node_a"]
        self.lid_node = {n["lid"]: n["id"] for n in nodes if n["kind"] != "switch"}
        self.desc = {n["lid"]: n["description"] for n in nodes if n["kind"] != "switch"}
        self.leaves: List[List[int]] = [[lid for lid, _ in leaf] for leaf in leaf_nodes(fabric)]
        cas = [lid for leaf in self.leaves for lid in leaf]
        #: MPI ranks (CA LIDs, leaf by leaf); the last ``stale`` nodes are routed but never ranks.
        self.ranks: List[int] = cas[: len(cas) - stale]
        self.leaf_of = {lid: i for i, leaf in enumerate(self.leaves) for lid in leaf}

    def path(self, tables: ForwardingTables, src: int, dst: int) -> List[str]:
        """Switch descriptions from ``src``'s leaf to ``dst`` (LIDs).

        >>> n = Net(topology_a()); t = route(n.fabric, "ftree").tables
        >>> len(n.path(t, 1, 2)), len(n.path(t, 1, 5))
        (1, 3)
        """
        node = self.port[(self.lid_node[src], 1)]
        out = []
        while self.by_id[node]["kind"] == "switch":
            out.append(self.by_id[node]["description"].split()[0])
            if len(out) > 16:
                raise RuntimeError(f"routing loop from LID {src} to {dst}")
            p = tables.get(self.guid_of[node], dst)
            if p is None:
                raise RuntimeError(f"no route from LID {src} to {dst} at {out[-1]}")
            node = self.port[(node, p)]
        if node != self.lid_node[dst]:
            raise RuntimeError(f"route from LID {src} ends at the wrong node")
        return out


def _key(tables: ForwardingTables) -> Tuple:
    e = tables.entries()
    return tuple(sorted(zip(e["switch_guid"], e["lid"], e["port"])))


def _times_many(net: Net, tables: ForwardingTables, runs: Sequence[Sequence[Tuple[int, int, int, int]]],
                host_mbps: Optional[float]) -> List[List[float]]:
    """Per run, the completion time (µs) of each message (src LID, dst LID,
    bytes, SL), all posted at time 0, one message per (source, SL); runs go
    to :func:`ibcloud.sim.simulate_many`."""
    from ibcloud.sim import simulate_many

    jobs = []
    for msgs in runs:
        keys = [(s, sl) for s, _, _, sl in msgs]
        if len(set(keys)) != len(keys):
            raise ValueError("one message per source and SL")
        vls = 1 + max(sl for *_, sl in msgs)
        trace = [{"time": 0, "src": f"lid:{s}", "dst": f"lid:{d}", "bytes": int(b), "sl": sl} for s, d, b, sl in msgs]
        # Every message done long before: all bytes through one host at its cap, plus 100 µs; one sweep at the end.
        end = int(100 + 2 * sum(b for *_, b, _ in msgs) / min(host_mbps or LINK_MBPS, LINK_MBPS))
        jobs.append({"traffic": {"trace": trace}, "time": f"{end}us", "sweep_interval": f"{end}us", "vls": vls,
                     "host_gbps": host_mbps * 8 / 1000 if host_mbps else None, **SIM})
    out = []
    for msgs, res in zip(runs, simulate_many(tables, jobs)):
        if isinstance(res, Exception):
            raise res
        if res.dropped:
            raise RuntimeError(f"{res.dropped} packets dropped")
        # one flow per source (named after the source's description, in endpoint order)
        lat = {}
        for _, row in res.flows.iterrows():
            lat[row["src"]] = (float(row["max_latency_us"]), int(row["completed_msgs"]))
        srcs = list(dict.fromkeys(s for s, *_ in msgs))
        done = {}
        for s in srcs:
            t, n = lat[net.desc[s]]
            if n != sum(1 for x in msgs if x[0] == s):
                raise RuntimeError(f"a message from LID {s} did not complete")
            done[s] = t
        out.append([done[s] for s, *_ in msgs])
    return out


def ebb_raw(net: Net, tables: ForwardingTables, ranks: Sequence[int], bisections: Sequence[Sequence[Tuple[int, int]]],
            host_mbps: Optional[float], nbytes: int) -> Dict[str, float]:
    """Netgauge's EBB before the efficiency factor: every pair exchanges
    ``nbytes`` both ways; a rank's time is the later of its send and its
    receive; EBB = bytes / mean time over every rank and bisection (MB/s),
    with the per-bisection mean of bytes / time beside.

    >>> net = Net(topology_a()); t = route(net.fabric, "ftree").tables
    >>> round(ebb_raw(net, t, net.ranks, [[(1, 2), (3, 4), (5, 6), (7, 8)]], 3800.0, 65536)["ebb"])
    3773
    """
    runs = [[(a, b, nbytes, 0) for a, b in m] + [(b, a, nbytes, 0) for a, b in m] for m in bisections]
    times = []
    per = []
    for m, t in zip(bisections, _times_many(net, tables, runs, host_mbps)):
        k = len(m)
        rank_t = [max(t[i], t[k + i]) for i in range(k)] * 2
        times += rank_t
        per.append(nbytes / statistics.mean(rank_t))
    return {"ebb": nbytes / statistics.mean(times), "ebb_round_mean": statistics.mean(per)}


def alltoall_us(net: Net, tables: ForwardingTables, ranks: Sequence[int], host_mbps: Optional[float], overhead_us: float,
                nbytes: int) -> float:
    """OSU alltoall latency (µs) as pairwise exchange: p − 1 steps, step i
    rank r → rank r + i; each step lasts until its slowest message, plus
    the per-message host overhead.

    >>> net = Net(topology_a()); t = route(net.fabric, "ftree").tables
    >>> round(alltoall_us(net, t, net.ranks, 3800.0, 1.0, 65536))
    179
    """
    p = len(ranks)
    runs = [[(ranks[r], ranks[(r + i) % p], nbytes, 0) for r in range(p)] for i in range(1, p)]
    return sum(max(t) + overhead_us for t in _times_many(net, tables, runs, host_mbps))


def alltoall_at_once_us(net: Net, tables: ForwardingTables, ranks: Sequence[int], host_mbps: Optional[float],
                       overhead_us: float, nbytes: int) -> float:
    """A reading of OSU alltoall beside the pairwise one: every rank posts
    its p − 1 messages at once (one SL each, so they share the HCA as
    separate queue pairs); latency = the last completion plus one overhead.

    >>> net = Net(topology_a()); t = route(net.fabric, "ftree").tables
    >>> round(alltoall_at_once_us(net, t, net.ranks, 3800.0, 1.0, 65536))
    135
    """
    p = len(ranks)
    msgs = [(ranks[r], ranks[(r + i) % p], nbytes, i - 1) for r in range(p) for i in range(1, p)]
    return max(_times_many(net, tables, [msgs], host_mbps)[0]) + overhead_us


def ring(net: Net, tables: ForwardingTables, orders: Sequence[Sequence[int]], host_mbps: Optional[float],
         overhead_us: float, nbytes: int) -> Dict[str, Any]:
    """HPCC's ring test (bench_lat_bw: both directions, the better of two
    implementations) per ring order: (a) two MPI_Sendrecv in turn (all send
    right, then all send left; each phase ends with its slowest message)
    and (b) two non-blocking sends and receives at once (SL 0 right, SL 1
    left, so they share the HCA as two queue pairs). A rank pays the
    per-message overhead once per message it sends. The time of one
    iteration is the slowest rank's; HPCC's per-pattern latency is that time
    / 2 and its bandwidth ``nbytes`` / latency. Returns per-order latency
    (µs) and bandwidth (MB/s): the naturally ordered ring is ``orders[0]``;
    random rings combine as HPCC does, by the geometric mean of their
    latencies.

    >>> net = Net(topology_b(), stale=1); t = route(net.fabric, "ftree").tables
    >>> r = ring(net, t, [net.ranks, [1, 5, 2, 6, 3, 7, 4, 8]], 3800.0, 1.0, 65536)
    >>> round(r["natural_mbps"]), round(r["random_mbps"])
    (3556, 2479)
    """
    runs = []
    for o in orders:
        p = len(o)
        right = [(o[i], o[(i + 1) % p], nbytes, 0) for i in range(p)]
        left = [(o[i], o[(i - 1) % p], nbytes, 0) for i in range(p)]
        runs += [right, left, right + [(s, d, b, 1) for s, d, b, _ in left]]
    t = _times_many(net, tables, runs, host_mbps)
    lat, nb_only, sr, nb = [], [], [], []
    for k in range(len(orders)):
        sendrecv = max(t[3 * k]) + max(t[3 * k + 1]) + 2 * overhead_us
        nonblocking = max(t[3 * k + 2]) + 2 * overhead_us
        lat.append(min(sendrecv, nonblocking) / 2)
        sr.append(sendrecv / 2)
        nb.append(nonblocking / 2)
        nb_only.append(2 * nbytes / (max(t[3 * k + 2]) + overhead_us))
    rand = statistics.geometric_mean(lat[1:]) if len(lat) > 1 else math.nan
    gm = lambda x: statistics.geometric_mean(x[1:]) if len(x) > 1 else math.nan  # noqa: E731
    return {"natural_latency_us": lat[0], "random_latency_us": rand, "natural_mbps": nbytes / lat[0],
            "random_mbps": nbytes / rand, "latencies_us": lat,
            "sendrecv_random_mbps": nbytes / gm(sr), "nonblocking_random_mbps": nbytes / gm(nb),
            # our first model, before HPCC's source was read (reported beside): (b) alone, one overhead, arithmetic mean
            "first_model_random_mbps": statistics.mean(nb_only[1:]) if len(nb_only) > 1 else math.nan,
            "first_model_natural_mbps": nb_only[0]}


def pingpong(net: Net, tables: ForwardingTables, ranks: Sequence[int], host_mbps: Optional[float], overhead_us: float,
             nbytes: int = HPCC_BYTES) -> Dict[str, Any]:
    """HPCC ping-pong: every rank pair alone; one-way 8-byte latency (max
    over pairs, µs) and ``nbytes`` bandwidth of the slowest pair (MB/s).

    >>> net = Net(topology_b(), stale=1); t = route(net.fabric, "ftree").tables
    >>> p = pingpong(net, t, net.ranks, 3800.0, 1.0, 65536)
    >>> p["max_latency_us"], round(p["min_bandwidth_mbps"]), p["pair"]
    (1.3905, 3522, [1, 4])
    """
    pairs = list(itertools.combinations(ranks, 2))
    lat = [t[0] + overhead_us for t in _times_many(net, tables, [[(a, b, 8, 0)] for a, b in pairs], host_mbps)]
    worst = pairs[max(range(len(pairs)), key=lambda i: (lat[i], -i))]
    t = _times_many(net, tables, [[(worst[0], worst[1], nbytes, 0)]], host_mbps)[0][0]
    return {"max_latency_us": max(lat), "min_bandwidth_mbps": nbytes / (t + overhead_us), "pair": list(worst)}


def pingpong_fast(net: Net, tables: ForwardingTables, ranks: Sequence[int], host_mbps: Optional[float], overhead_us: float,
                  nbytes: int = HPCC_BYTES) -> Dict[str, Any]:
    """:func:`pingpong` on one pair per distinct switch path length (an
    unloaded pair's time depends on nothing else): the same maximum latency
    and minimum bandwidth at a fraction of the runs.

    >>> net = Net(topology_b(), stale=1); t = route(net.fabric, "ftree").tables
    >>> p = pingpong_fast(net, t, net.ranks, 3800.0, 1.0, 65536)
    >>> p["max_latency_us"], round(p["min_bandwidth_mbps"])
    (1.3905, 3522)
    """
    pairs = list(itertools.combinations(ranks, 2))
    by_len: Dict[int, Tuple[int, int]] = {}
    for a, b in pairs:
        by_len.setdefault(len(net.path(tables, a, b)), (a, b))
    return _pingpong_pairs(net, tables, [by_len[k] for k in sorted(by_len)], host_mbps, overhead_us, nbytes)


def _pingpong_pairs(net: Net, tables: ForwardingTables, pairs: Sequence[Tuple[int, int]], host_mbps: Optional[float],
                    overhead_us: float, nbytes: int) -> Dict[str, Any]:
    lat = [t[0] + overhead_us for t in _times_many(net, tables, [[(a, b, 8, 0)] for a, b in pairs], host_mbps)]
    bw = [nbytes / (t[0] + overhead_us)
          for t in _times_many(net, tables, [[(a, b, nbytes, 0)] for a, b in pairs], host_mbps)]
    return {"max_latency_us": max(lat), "min_bandwidth_mbps": min(bw), "pair": list(pairs[lat.index(max(lat))])}


def slim_initial(fabric: Fabric) -> ForwardingTables:
    """SlimUpdate's first run (no old tables). On A and B it differs from
    ftree only in which root each leaf's nodes go up to (ties broken the
    other way): the roots swap, the balance is the same.

    >>> f = topology_a(); s, t = slim_initial(f), route(f, "ftree").tables
    >>> s == t, len(s.entries()["lid"]) == len(t.entries()["lid"])
    (False, True)
    """
    from ibcloud import _native

    return ForwardingTables._from_native(_native.reconfig_slim_initial(fabric._native))


def calibrate(host_target: float = PAPER["table1"]["pingpong_mbps"][0],
              latency_target: float = PAPER["table1"]["pingpong_latency_us"][0]) -> Dict[str, Any]:
    """The two host numbers, fitted on topology B under FTree without a
    fault (Table 1's first column): the per-message overhead (µs) so that
    the longest pair's 8-byte one-way latency is ``latency_target``, then
    the injection cap (MB/s) so that its 2,000,000-byte ping-pong reaches
    ``host_target``.

    >>> cal = calibrate()
    >>> abs(cal["pingpong_mbps"] - 3856.83) <= 0.01, round(cal["pingpong_latency_us"], 3)
    (True, 1.699)
    """
    net = Net(topology_b(), stale=1)
    t = route(net.fabric, "ftree").tables
    raw = pingpong_fast(net, t, net.ranks, None, 0.0)
    overhead = latency_target - raw["max_latency_us"]
    a, b = raw["pair"]
    cap = host_target
    for _ in range(4):
        one_way = _times_many(net, t, [[(a, b, HPCC_BYTES, 0)]], cap)[0][0]
        pipe = one_way - HPCC_BYTES / cap
        cap = HPCC_BYTES / (HPCC_BYTES / host_target - overhead - pipe)
    got = pingpong_fast(net, t, net.ranks, cap, overhead)
    return {"host_mbps": cap, "overhead_us": overhead, "pingpong_mbps": got["min_bandwidth_mbps"],
            "pingpong_latency_us": got["max_latency_us"], "pair": got["pair"]}


def _leaf_pos(net: Net, lid: int) -> Tuple[int, int]:
    leaf = net.leaf_of[lid]
    return leaf, net.leaves[leaf].index(lid)


def _root(net: Net, tables: ForwardingTables, lid: int) -> str:
    """The root FTree sends traffic to ``lid`` through (from another leaf)."""
    src = next(x for x in net.ranks if net.leaf_of[x] != net.leaf_of[lid])
    return net.path(tables, src, lid)[1]


def shutdown_class(net: Net, tables: ForwardingTables, u: int, v: int) -> str:
    """How two shut-down nodes of A relate: same leaf and alternate ports
    (the judged reading of "non-adjacent"), same leaf ports 1 and 4, same
    leaf adjacent ports, or different leaves; with whether FTree routed both
    through the same root.

    >>> n = Net(topology_a()); t = route(n.fabric, "ftree").tables
    >>> shutdown_class(n, t, 1, 3), shutdown_class(n, t, 1, 2), shutdown_class(n, t, 1, 5)
    ('same leaf, alternate ports (same root)', 'same leaf, adjacent ports (different roots)', 'different leaves (same root)')
    """
    (la, pa), (lb, pb) = _leaf_pos(net, u), _leaf_pos(net, v)
    roots = "same root" if _root(net, tables, u) == _root(net, tables, v) else "different roots"
    if la != lb:
        kind = "different leaves"
    else:
        kind = {1: "same leaf, adjacent ports", 2: "same leaf, alternate ports", 3: "same leaf, ports 1 and 4"}[abs(pa - pb)]
    return f"{kind} ({roots})"


#: The reading of "two non-adjacent nodes" the claims are judged on (see the page).
JUDGED_SHUTDOWN = "same leaf, alternate ports"


def _topology_a(cal: Dict[str, Any], full: bool, all_pairs: bool, log) -> Dict[str, Any]:
    from ibcloud.reconfig import reconfigure

    net = Net(topology_a())
    ft = route(net.fabric, "ftree").tables
    slim0 = slim_initial(net.fabric)
    nbytes = EBB_REPS * (1 << 20) if full else 256 * 1024
    host, o = cal["host_mbps"], cal["overhead_us"]
    full_ft = ebb_raw(net, ft, net.ranks, matchings(net.ranks), host, nbytes)
    full_slim = full_ft if _key(slim0) == _key(ft) else ebb_raw(net, slim0, net.ranks, matchings(net.ranks), host, nbytes)
    factor = PAPER["ebb_a"]["full"] / full_ft["ebb"]
    pairs = list(itertools.combinations(net.ranks, 2))
    if not all_pairs:  # every judged pair, one representative of each other class
        seen, keep = set(), []
        for u, v in pairs:
            c = shutdown_class(net, ft, u, v)
            if c.startswith(JUDGED_SHUTDOWN) or c not in seen:
                keep.append((u, v))
                seen.add(c)
        pairs = keep
    rows = []
    for u, v in pairs:
        log(f"HW topology A: shutdown of LIDs {u} and {v}")
        r1 = reconfigure(net.fabric, slim0, "shutdown", f"lid:{u}", method="slimupdate")
        r2 = reconfigure(net.fabric, r1.tables, "shutdown", f"lid:{v}", method="slimupdate",
                         before=[("shutdown", [f"lid:{u}"])])
        if not (r1.ok and r2.ok):
            raise RuntimeError(f"SlimUpdate after the shutdown of {u}, {v} left pairs unreachable")
        live = [x for x in net.ranks if x not in (u, v)]
        ms = matchings(live)
        row = {"down": [u, v], "class": shutdown_class(net, ft, u, v),
               "slim_changed_entries": r1.changes["changed_entries"] + r2.changes["changed_entries"]}
        for alg, tables in (("ftree", ft), ("slim", r2.tables)):
            e = ebb_raw(net, tables, live, ms, host, nbytes)
            row[f"ebb_{alg}"] = factor * e["ebb"]
            row[f"ebb_{alg}_round_mean"] = factor * e["ebb_round_mean"]
            row[f"alltoall_{alg}_us"] = alltoall_us(net, tables, live, host, o, OSU_BYTES)
            row[f"alltoall_at_once_{alg}_us"] = alltoall_at_once_us(net, tables, live, host, o, OSU_BYTES)
        rows.append(row)
    judged = [r for r in rows if r["class"].startswith(JUDGED_SHUTDOWN)]
    mean = {k: statistics.mean(r[k] for r in judged) for k in judged[0] if k.startswith(("ebb_", "alltoall_"))}
    return {"netgauge_factor": factor, "ebb_bytes": nbytes, "full_ftree_raw": full_ft["ebb"],
            "full_ftree": factor * full_ft["ebb"], "full_slim": factor * full_slim["ebb"],
            "full_ftree_round_mean": factor * full_ft["ebb_round_mean"],
            "slim_first_equals_ftree": _key(slim0) == _key(ft), "shutdowns": rows, "judged": mean,
            "judged_pairs": [r["down"] for r in judged]}


def _verified(r: Any) -> bool:
    """Every pair of live nodes reachable, no credit loop, no up/down violation
    (a node shut down before is unreachable by design)."""
    c = r.report.get("check")
    return c is not None and c["pairs"] == c["reachable"] and c["credit_loop_free"] and not c["updown_violations"]


def _switch_links(fabric: Fabric) -> List[str]:
    nodes = {n["id"]: n for n in fabric.nodes()}
    out = []
    for l in fabric.links():
        a, b = nodes[l["node_a"]], nodes[l["node_b"]]
        if a["kind"] == "switch" and b["kind"] == "switch":
            out.append(f"{a['description'].split()[0]}:{l['port_a']}")
    return sorted(out)


def _topology_b(cal: Dict[str, Any], factor: float, full: bool, rings: int, bisections: int, log,
                stale: str = "routed") -> Dict[str, Any]:
    """Topology B's cases; ``stale`` = "routed" (the judged reading: node 9
    is cabled and routed, never a rank) or "absent" (a reading beside: node
    9 is shut down before the first routing)."""
    from ibcloud.reconfig import reconfigure

    if stale == "routed":
        net = Net(topology_b(), stale=1)
    elif stale == "absent":
        f = topology_b()
        nine = Net(f).ranks[-1]
        net = Net(reconfigure(f, route(f, "ftree").tables, "shutdown", f"lid:{nine}", method="full").fabric)
    else:
        raise ValueError(f"stale is 'routed' or 'absent', not {stale!r}")
    host, o = cal["host_mbps"], cal["overhead_us"]
    ft = route(net.fabric, "ftree").tables
    slim0 = slim_initial(net.fabric)
    rng = random.Random(4)
    orders = [list(net.ranks)]
    for _ in range(rings):
        x = list(net.ranks)
        rng.shuffle(x)
        orders.append(x)
    allm = matchings(net.ranks)
    ms = allm if bisections >= len(allm) else random.Random(5).sample(allm, bisections)
    ring_bytes = HPCC_BYTES if full else HPCC_BYTES // 8
    ebb_bytes = EBB_REPS * (1 << 20) if full else 256 * 1024
    cache: Dict[Tuple, Dict[str, Any]] = {}

    def measure(tables: ForwardingTables, fault: bool) -> Dict[str, Any]:
        k = (_key(tables), fault)
        if k in cache:
            return cache[k]
        bw = ring(net, tables, orders, host, o, ring_bytes)
        lat = ring(net, tables, orders, host, o, 8)
        pp = pingpong_fast(net, tables, net.ranks, host, o)
        r = {"natural_ring_mbps": bw["natural_mbps"], "random_ring_mbps": bw["random_mbps"],
             "random_ring_latency_us": lat["random_latency_us"], "pingpong_mbps": pp["min_bandwidth_mbps"],
             "pingpong_latency_us": pp["max_latency_us"], "natural_ring_latency_us": lat["natural_latency_us"],
             "first_model_random_ring_mbps": bw["first_model_random_mbps"],
             "sendrecv_random_ring_mbps": bw["sendrecv_random_mbps"],
             "nonblocking_random_ring_mbps": bw["nonblocking_random_mbps"],
             "first_model_natural_ring_mbps": bw["first_model_natural_mbps"]}
        if fault:
            r["ebb"] = factor * ebb_raw(net, tables, net.ranks, ms, host, ebb_bytes)["ebb"]
            r["alltoall_us"] = alltoall_us(net, tables, net.ranks, host, o, 256 * 1024)
        cache[k] = r
        return r

    log("HW topology B: no fault")
    cases = {"ftree": measure(ft, False), "slim": measure(slim0, False)}
    links = []
    for link in _switch_links(net.fabric):
        log(f"HW topology B: link {link} fails")
        rf = reconfigure(net.fabric, ft, "fail-link", link, method="full")
        rs = reconfigure(net.fabric, slim0, "fail-link", link, method="slimupdate")
        if not (_verified(rf) and _verified(rs)):
            raise RuntimeError(f"re-routing after the failure of {link} left live pairs unreachable")
        # OpenSM's ftree refuses the degraded tree without a root GUID file (ERR AB09) and falls back to minhop
        mh = route(rf.fabric, "minhop").tables
        links.append({"link": link, "ftree": measure(rf.tables, True), "slim": measure(rs.tables, True),
                      "minhop": measure(mh, True), "ftree_without_roots": _ftree_refuses(rf.fabric),
                      "ftree_changed_entries": rf.changes["changed_entries"],
                      "slim_changed_entries": rs.changes["changed_entries"]})
    for alg in ("ftree", "slim", "minhop"):
        cases[f"{alg}_fault"] = {k: statistics.mean(x[alg][k] for x in links) for k in links[0][alg]}
    full_leaves = {i for i, leaf in enumerate(net.leaves) if all(x in net.ranks for x in leaf)}
    sub = [x for x in links if _link_leaf(net, x["link"]) in full_leaves]
    for alg in ("ftree", "slim"):
        cases[f"{alg}_fault_full_leaves"] = {k: statistics.mean(x[alg][k] for x in sub) for k in sub[0][alg]}
    return {"cases": cases, "links": links, "rings": rings, "ring_bytes": ring_bytes, "ebb_bytes": ebb_bytes,
            "bisections": len(ms), "slim_first_equals_ftree": _key(slim0) == _key(ft)}


def _link_leaf(net: Net, link: str) -> int:
    """Index of the leaf switch a failed leaf–root link ``SWITCH:PORT`` belongs to (-1 for none).

    >>> n = Net(topology_b()); _link_leaf(n, "sw-L1-0002:4"), _link_leaf(n, "sw-L2-0001:1")
    (1, -1)
    """
    name = link.split(":")[0]
    for i, leaf in enumerate(net.leaves):
        sw = net.port[(net.lid_node[leaf[0]], 1)]
        if net.by_id[sw]["description"].split()[0] == name:
            return i
    return -1


def _ftree_refuses(fabric: Fabric) -> bool:
    """Whether ftree without given roots refuses ``fabric`` (OpenSM's
    fabric_validate_topology: switches of one rank differ in up groups)."""
    from ibcloud.exceptions import RoutingError

    try:
        route(fabric, "ftree")
    except RoutingError:
        return True
    return False


def run(quick: bool = False, full: bool = False, log=lambda msg: None) -> Dict[str, Any]:
    """Every hardware result on the simulator; ``full`` uses the paper's
    message sizes, every bisection and more random rings.

    >>> hw = run(quick=True)  # about 10 s
    >>> round(hw["a"]["full_ftree"]), {"ftree", "slim_fault"} <= set(hw["b"]["cases"])
    (2650, True)
    """
    cal = calibrate()
    log(f"HW calibration: host cap {cal['host_mbps']:.2f} MB/s, overhead {cal['overhead_us']:.4f} µs")
    a = _topology_a(cal, full, full, log)
    b = _topology_b(cal, a["netgauge_factor"], full, 30 if full else (4 if quick else 10),
                    105 if full else (8 if quick else 24), log)
    out = {"calibration": cal, "a": a, "b": b, "settings": {"full": full, "quick": quick}}
    if full:
        out["b_absent"] = _stale_absent(cal, a["netgauge_factor"], full, log)
    return out


def _stale_absent(cal: Dict[str, Any], factor: float, full: bool = False, log=lambda msg: None) -> Dict[str, Any]:
    """The reading of topology B beside the judged one: the stale ninth node
    shut down before the first routing (run by ``--full``; at the default
    sizes with ``_stale_absent(calibrate(), 0.9643)``)."""
    b = _topology_b(cal, factor, full, 30 if full else 10, 105 if full else 24, log, stale="absent")
    return {"cases": b["cases"], "links": b["links"]}


def _each(ours: Sequence[float], paper: Sequence[float], tol: float, fmt: str) -> Tuple[bool, str]:
    ok = all(abs(x - p) <= tol for x, p in zip(ours, paper))
    return ok, " / ".join(fmt.format(x) for x in ours)


def paper_result() -> Dict[str, Any]:
    """A :func:`run` result holding the paper's own values (what a model
    matching Paper IV exactly would return; the A/B alltoall values the
    paper does not print are placeholders): for examples, and to check that
    the judging passes the paper itself.

    >>> paper_result()["a"]["judged"]["ebb_slim"]
    3227.0
    """
    t1 = PAPER["table1"]
    cases = {c: {"pingpong_mbps": t1["pingpong_mbps"][i], "natural_ring_mbps": t1["natural_ring_mbps"][i],
                 "random_ring_mbps": t1["random_ring_mbps"][i], "pingpong_latency_us": t1["pingpong_latency_us"][i],
                 "random_ring_latency_us": t1["random_ring_latency_us"][i]} for i, c in enumerate(CASES)}
    cases["ftree_fault"].update(ebb=1972.0, alltoall_us=700.0)
    cases["slim_fault"].update(ebb=2187.0, alltoall_us=690.0)
    return {"calibration": {"pingpong_mbps": 3856.83, "host_mbps": 3870.0, "overhead_us": 1.3},
            "a": {"full_ftree": 2650.0, "full_slim": 2650.0, "full_ftree_raw": 2748.0, "netgauge_factor": 0.96,
                  "slim_first_equals_ftree": False,
                  "judged": {"ebb_ftree": 2473.0, "ebb_slim": 3227.0, "alltoall_ftree_us": 2751.0,
                             "alltoall_slim_us": 1817.0}},
            "b": {"cases": cases, "links": [{}] * 9}}


def checks(hw: Dict[str, Any]) -> List[Any]:
    """Judges HW0-HW19 of ibcloud/claims/reconfig.toml on :func:`run`'s result.

    >>> verdicts = {c.id: c.verdict for c in checks(paper_result())}
    >>> verdicts["HW1"], verdicts["HW3"], verdicts["HW14"]
    ('calibration', 'reproduced', 'shape only')
    """
    from ibcloud.checks import claims

    reg = claims("reconfig")
    cal, a, cases = hw["calibration"], hw["a"], hw["b"]["cases"]
    j = a["judged"]
    t1 = PAPER["table1"]
    out = [
        reg["HW0"].judge(abs(cal["pingpong_mbps"] - t1["pingpong_mbps"][0]) <= 0.01,
                         f"{cal['pingpong_mbps']:.2f} MB/s with a host cap of {cal['host_mbps']:.2f} MB/s"),
        reg["HW1"].judge(abs(a["full_ftree"] - 2650) <= 5,
                         f"{a['full_ftree']:.1f} MB/s: factor {a['netgauge_factor']:.4f} on the simulated "
                         f"{a['full_ftree_raw']:.1f} MB/s (all 105 bisections)"),
        reg["HW2"].judge(abs(a["full_slim"] - 2650) <= 5, f"{a['full_slim']:.1f} MB/s"
                         + (" (SlimUpdate's first run routes exactly as ftree here)" if a["slim_first_equals_ftree"]
                            else "")),
        reg["HW3"].judge(abs(j["ebb_ftree"] - 2473) <= 1, f"{j['ebb_ftree']:.1f} MB/s",
                         shape=j["ebb_ftree"] < a["full_ftree"]),
        reg["HW4"].judge(abs(j["ebb_slim"] - 3227) <= 1, f"{j['ebb_slim']:.1f} MB/s",
                         shape=j["ebb_slim"] > j["ebb_ftree"]),
    ]
    gain = 100 * (j["ebb_slim"] / a["full_ftree"] - 1)
    out.append(reg["HW5"].judge(gain >= 20, f"{gain:+.1f} %", shape=gain > 0))
    ft, sl = j["alltoall_ftree_us"], j["alltoall_slim_us"]
    out.append(reg["HW6"].judge(abs(ft - 2751) <= 1, f"{ft:.1f} µs", shape=ft > sl))
    out.append(reg["HW7"].judge(abs(sl - 1817) <= 0.5, f"{sl:.1f} µs", shape=sl < ft))
    less = 100 * (1 - sl / ft)
    out.append(reg["HW8"].judge(33 <= less <= 35, f"{less:.1f} % lower", shape=less > 0))
    ef, es = cases["ftree_fault"]["ebb"], cases["slim_fault"]["ebb"]
    nl = len(hw["b"]["links"])
    out.append(reg["HW9"].judge(abs(ef - 1972) <= 1, f"{ef:.1f} MB/s (mean of {nl} links)", shape=ef < es))
    out.append(reg["HW10"].judge(abs(es - 2187) <= 1, f"{es:.1f} MB/s (mean of {nl} links)", shape=es > ef))
    pp = [cases[c]["pingpong_mbps"] for c in CASES]
    ok, txt = _each(pp[1:], t1["pingpong_mbps"][1:], 0.01, "{:.2f}")
    out.append(reg["HW11"].judge(ok, txt + " MB/s", shape=all(abs(x / pp[0] - 1) <= 0.001 for x in pp[1:])))
    nat = [cases[c]["natural_ring_mbps"] for c in CASES]
    ok, txt = _each(nat, t1["natural_ring_mbps"], 0.01, "{:.2f}")
    out.append(reg["HW12"].judge(ok, txt + " MB/s", shape=max(nat) / min(nat) - 1 <= 0.01))
    rnd = [cases[c]["random_ring_mbps"] for c in CASES]
    shapes = [rnd[0] < nat[0], rnd[1] < nat[1], rnd[2] < rnd[0], rnd[3] > rnd[2]]
    for cid, x, p, s in zip(("HW13a", "HW13b", "HW13c", "HW13d"), rnd, t1["random_ring_mbps"], shapes):
        out.append(reg[cid].judge(abs(x - p) <= 0.01, f"{x:.2f} MB/s", shape=s))
    g = 100 * (rnd[3] / rnd[2] - 1)
    out.append(reg["HW14"].judge(8.5 <= g <= 9.5, f"{g:+.1f} %", shape=g > 0))
    drop = 100 * (1 - rnd[2] / rnd[0])
    spread_pp, spread_nat = 100 * (max(pp) / min(pp) - 1), 100 * (max(nat) / min(nat) - 1)
    out.append(reg["HW15"].judge(spread_pp <= 1 and spread_nat <= 1 and drop > 5,
                                 f"ping-pong spread {spread_pp:.2f} %, natural ring {spread_nat:.2f} %, "
                                 f"FTree's random ring {-drop:+.1f} % with the fault"))
    lat = [cases[c]["pingpong_latency_us"] for c in CASES]
    out.append(reg["HW16"].judge(abs(lat[0] - t1["pingpong_latency_us"][0]) <= 0.001,
                                 f"{lat[0]:.3f} µs with a per-message overhead of {cal['overhead_us']:.4f} µs"))
    ok, txt = _each(lat[1:], t1["pingpong_latency_us"][1:], 0.001, "{:.3f}")
    out.append(reg["HW17"].judge(ok, txt + " µs", shape=all(abs(x / lat[0] - 1) <= 0.1 for x in lat[1:])))
    rl = [cases[c]["random_ring_latency_us"] for c in CASES]
    ok, txt = _each(rl, t1["random_ring_latency_us"], 0.001, "{:.3f}")
    out.append(reg["HW18"].judge(ok, txt + " µs", shape=all(r < p for r, p in zip(rl, lat))))
    af, as_ = cases["ftree_fault"]["alltoall_us"], cases["slim_fault"]["alltoall_us"]
    out.append(reg["HW19"].judge(as_ < af, f"alltoall 256 KiB: SlimUpdate {as_:.1f} vs FTree {af:.1f} µs "
                                          f"(mean of {nl} links)"))
    return out


def table_rows(hw: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Every compared number, ours beside the paper's (one row each; the
    CSV ``hw_paper_iv.csv``).

    >>> row = table_rows(paper_result())[2]
    >>> row["case"], row["paper"], row["ours"]
    ('A 2 nodes down, FTree (cache)', 2473.0, 2473.0)
    """
    a, cases, t1 = hw["a"], hw["b"]["cases"], PAPER["table1"]
    j = a["judged"]
    rows = [
        {"figure": "Fig. 3a", "metric": "EBB 1 MiB (MB/s)", "case": "A full tree, FTree", "paper": 2650.0,
         "ours": a["full_ftree"]},
        {"figure": "Fig. 3a", "metric": "EBB 1 MiB (MB/s)", "case": "A full tree, SlimUpdate", "paper": 2650.0,
         "ours": a["full_slim"]},
        {"figure": "Fig. 3a", "metric": "EBB 1 MiB (MB/s)", "case": "A 2 nodes down, FTree (cache)", "paper": 2473.0,
         "ours": j["ebb_ftree"]},
        {"figure": "Fig. 3a", "metric": "EBB 1 MiB (MB/s)", "case": "A 2 nodes down, SlimUpdate", "paper": 3227.0,
         "ours": j["ebb_slim"]},
        {"figure": "Fig. 3b", "metric": "alltoall 1 MiB (µs)", "case": "A 2 nodes down, FTree (cache)", "paper": 2751.0,
         "ours": j["alltoall_ftree_us"]},
        {"figure": "Fig. 3b", "metric": "alltoall 1 MiB (µs)", "case": "A 2 nodes down, SlimUpdate", "paper": 1817.0,
         "ours": j["alltoall_slim_us"]},
        {"figure": "Fig. 4", "metric": "EBB 1 MiB (MB/s)", "case": "B 1 link down, FTree", "paper": 1972.0,
         "ours": cases["ftree_fault"]["ebb"]},
        {"figure": "Fig. 4", "metric": "EBB 1 MiB (MB/s)", "case": "B 1 link down, SlimUpdate", "paper": 2187.0,
         "ours": cases["slim_fault"]["ebb"]},
    ]
    labels = {"ftree": "B FTree, no fault", "slim": "B SlimUpdate, no fault", "ftree_fault": "B FTree, 1 fault",
              "slim_fault": "B SlimUpdate, 1 fault"}
    for metric, unit in (("pingpong_mbps", "MB/s"), ("natural_ring_mbps", "MB/s"), ("random_ring_mbps", "MB/s"),
                         ("pingpong_latency_us", "µs"), ("random_ring_latency_us", "µs")):
        for i, c in enumerate(CASES):
            rows.append({"figure": "Table 1", "metric": f"{metric} ({unit})", "case": labels[c],
                         "paper": t1[metric][i], "ours": cases[c][metric]})
    fitted = {("Fig. 3a", "A full tree, FTree"), ("Table 1", "B FTree, no fault")}
    for r in rows:
        r["difference_pct"] = 100 * (r["ours"] / r["paper"] - 1)
        calibrated = (r["figure"], r["case"]) in fitted and not r["metric"].startswith(("natural", "random"))
        r["kind"] = "calibration" if calibrated else "prediction"
    return rows


def _write_csvs(hw: Dict[str, Any], out) -> None:
    """``hw_paper_iv.csv`` (ours beside the paper's), ``hw_topology_a.csv``
    (every shutdown pair run) and ``hw_topology_b.csv`` (every failed link)."""
    import pandas as pd
    from pathlib import Path

    out = Path(out)
    pd.DataFrame(table_rows(hw)).to_csv(out / "hw_paper_iv.csv", index=False)
    pd.DataFrame(hw["a"]["shutdowns"]).to_csv(out / "hw_topology_a.csv", index=False)
    rows = []
    for link in hw["b"]["links"]:
        for alg in ("ftree", "slim", "minhop"):
            rows.append({"link": link["link"], "algorithm": alg if alg != "minhop" else "minhop (OpenSM's fallback)",
                         "changed_entries": link.get(f"{alg}_changed_entries"),
                         "ftree_refused_without_roots": link["ftree_without_roots"], **link[alg]})
    pd.DataFrame(rows).to_csv(out / "hw_topology_b.csv", index=False)


def _print_report(hw: Dict[str, Any]) -> None:
    """The hardware section of ``ibcloud reproduce reconfig``'s text report."""
    cal, a, b = hw["calibration"], hw["a"], hw["b"]
    print("HW Paper IV hardware results on the packet simulator (4x QDR, MTU 2048)")
    print(f"  calibration: host cap {cal['host_mbps']:.2f} MB/s (HPCC ping-pong {cal['pingpong_mbps']:.2f}, paper "
          f"3856.83), per-message overhead {cal['overhead_us']:.4f} µs (latency {cal['pingpong_latency_us']:.3f}, "
          f"paper 1.699), Netgauge factor {a['netgauge_factor']:.4f} (A full tree {a['full_ftree_raw']:.1f} → 2650)")
    print(f"  topology A shutdowns (EBB {a['ebb_bytes'] // 1024} KiB per rank, every bisection; judged: "
          f"'{JUDGED_SHUTDOWN}', pairs {a['judged_pairs']})")
    for r in a["shutdowns"]:
        print(f"    down {r['down']!s:<8} {r['class']:<44} EBB FTree {r['ebb_ftree']:7.1f} SlimUpdate "
              f"{r['ebb_slim']:7.1f}  alltoall FTree {r['alltoall_ftree_us']:7.1f} SlimUpdate "
              f"{r['alltoall_slim_us']:7.1f} µs")
    print(f"  topology B, one link failure ({len(b['links'])} links; EBB {b['bisections']} bisections of "
          f"{b['ebb_bytes'] // 1024} KiB; {b['rings']} random rings of {b['ring_bytes']} bytes)")
    for x in b["links"]:
        print(f"    {x['link']:<14} EBB FTree {x['ftree']['ebb']:7.1f} SlimUpdate {x['slim']['ebb']:7.1f}  random ring "
              f"FTree {x['ftree']['random_ring_mbps']:7.1f} SlimUpdate {x['slim']['random_ring_mbps']:7.1f}")
    j, mf = a["judged"], b["cases"]["minhop_fault"]
    print("  readings beside (not judged): Netgauge per-round mean of bytes/time: A full "
          f"{a['full_ftree_round_mean']:.1f}, after FTree {j['ebb_ftree_round_mean']:.1f} SlimUpdate "
          f"{j['ebb_slim_round_mean']:.1f} MB/s; alltoall with every message posted at once: FTree "
          f"{j['alltoall_at_once_ftree_us']:.1f} SlimUpdate {j['alltoall_at_once_slim_us']:.1f} µs; B after the fault "
          f"with OpenSM's minhop fallback (ftree without a root file refuses the degraded tree on "
          f"{sum(x['ftree_without_roots'] for x in b['links'])} of {len(b['links'])} links): EBB {mf['ebb']:.1f} MB/s, "
          f"random ring {mf['random_ring_mbps']:.1f} MB/s, alltoall {mf['alltoall_us']:.1f} µs")
    c = b["cases"]
    for label, key in (("HPCC (a) two Sendrecv alone", "sendrecv_random_ring_mbps"),
                       ("HPCC (b) non-blocking alone", "nonblocking_random_ring_mbps"),
                       ("our first model (b alone, arithmetic mean)", "first_model_random_ring_mbps")):
        print(f"  reading beside: random ring, {label}: " + " / ".join(f"{c[k][key]:.1f}" for k in CASES)
              + " MB/s (paper 2703.00 / 2647.91 / 2189.44 / 2400.32)")
    fl, sl = c["ftree_fault_full_leaves"], c["slim_fault_full_leaves"]
    print(f"  reading beside: only links of the two leaves with three ranks: EBB FTree {fl['ebb']:.1f} SlimUpdate "
          f"{sl['ebb']:.1f} MB/s, random ring FTree {fl['random_ring_mbps']:.1f} SlimUpdate {sl['random_ring_mbps']:.1f}")
    if "b_absent" in hw:
        ca = hw["b_absent"]["cases"]
        print("  reading beside: node 9 shut down before the first routing, after the fault FTree / SlimUpdate: "
              f"EBB {ca['ftree_fault']['ebb']:.1f} / {ca['slim_fault']['ebb']:.1f} MB/s, random ring "
              f"{ca['ftree_fault']['random_ring_mbps']:.1f} / {ca['slim_fault']['random_ring_mbps']:.1f} MB/s, "
              f"alltoall {ca['ftree_fault']['alltoall_us']:.1f} / {ca['slim_fault']['alltoall_us']:.1f} µs")
    print(f"  {'figure':<8}{'metric':<32}{'case':<32}{'paper':>10}{'ours':>10}{'diff':>9}  kind")
    for r in table_rows(hw):
        print(f"  {r['figure']:<8}{r['metric']:<32}{r['case']:<32}{r['paper']:>10.2f}{r['ours']:>10.2f}"
              f"{r['difference_pct']:>+8.1f}%  {r['kind']}")


def plot(hw: Dict[str, Any], out) -> None:
    """``hw_paper_iv.png``: ours beside the paper's for Fig. 3a, Fig. 3b, Fig. 4
    and Table 1's random ring.

    >>> from pathlib import Path
    >>> plot(paper_result(), Path("."))
    >>> Path("hw_paper_iv.png").stat().st_size > 0
    True
    """
    from pathlib import Path

    from matplotlib.figure import Figure

    rows = table_rows(hw)
    panels = [("Fig. 3a: EBB 1 MiB, topology A (MB/s)", [r for r in rows if r["figure"] == "Fig. 3a"]),
              ("Fig. 3b: alltoall 1 MiB after the shutdowns (µs)", [r for r in rows if r["figure"] == "Fig. 3b"]),
              ("Fig. 4: EBB 1 MiB, B after a link failure (MB/s)", [r for r in rows if r["figure"] == "Fig. 4"]),
              ("Table 1: random ring, B (MB/s)", [r for r in rows if r["metric"].startswith("random_ring_mbps")])]
    fig = Figure(figsize=(12, 7), layout="constrained")
    for ax, (title, sel) in zip(fig.subplots(2, 2).flat, panels):
        x = range(len(sel))
        ax.bar([i - 0.2 for i in x], [r["paper"] for r in sel], 0.4, label="paper (hardware)")
        ax.bar([i + 0.2 for i in x], [r["ours"] for r in sel], 0.4, label="ours (packet simulator)")
        ax.set_xticks(list(x), [r["case"].replace(", ", "\n", 1) for r in sel], fontsize=7)
        ax.set_title(title, fontsize=9)
    fig.axes[0].legend(fontsize=7)
    fig.savefig(Path(out) / "hw_paper_iv.png", dpi=110)
