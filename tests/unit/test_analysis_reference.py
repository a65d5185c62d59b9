"""An independent cross-check of the static congestion analysis (issue 4).

The reference below is written from ORCS's definitions, in plain Python
(dicts and lists, no numpy), and shares nothing with the Rust analysis but
the fabric's nodes and links and ``ForwardingTables.get``:

- paths are walked hop by hop through the tables (CA → its switch, then the
  output port of every switch for the destination LID) and named as directed
  links ``(node GUID, output port)``, the CA → switch link included;
- the deterministic patterns are generated here from ORCS's
  pattern_generator (levels run until the generator gives nothing, except
  ``ring`` with n levels and ``shift`` with n − 1); only the random ``rand``
  pattern takes its flows from ``ibcloud._native.pattern_levels``, and the
  per-run rank orders come from ``ibcloud._native.run_orders``;
- per level, a directed link's load is the sum of the weights of the level's
  flows crossing it; a flow's congestion is the largest load on its path
  divided by its own weight (an unshared route counts 1); per run
  ``acc_band`` is the mean of 1/congestion over all flows of all levels,
  ``max_cong`` the largest flow congestion, ``sum_max_cong`` the sum over
  levels of the largest bottleneck load, ``dep_max_delay`` the longest
  chain (a flow starts when the flows of the previous level that ended at
  its source have finished and takes its bottleneck load); flows whose path
  breaks count in ``broken`` and nowhere else.

Every number is compared for exact equality: the sums of 1/congestion are
taken in the same order as the Rust side (flow order within a level, then
level by level), so not even ``acc_band`` needs a tolerance.

The interop test tests/interop/test_analysis_opensm.py loads this file for
its reference as well.
"""

from __future__ import annotations

import math
import random
import re
from typing import Dict, List, Optional, Sequence, Tuple

import pandas as pd
import pytest

import ibcloud
from ibcloud import Fabric, ForwardingTables, route
from ibcloud import _native
from ibcloud.analysis import analyze
from ibcloud.exceptions import AnalysisError, ParseError

Link = Tuple[int, int]  # (node GUID, output port)

# The Rust side's failure texts (ibcloud_routing::verify::Failure's Display).
FAILURE_TEXT = {
    "unset": "no LFT entry (255)",
    "no_such_port": "entry names a port the switch does not have",
    "uncabled": "entry names a port without a cable",
    "wrong_endpoint": "entry leads to a port that is not the destination",
    "port0": "entry says port 0 on a switch that is not the destination",
    "loop": "forwarding loop",
}


# --------------------------------------------------------------------------
# The reference: paths
# --------------------------------------------------------------------------


class RefNet:
    """The fabric as plain dicts, and paths walked through the tables."""

    def __init__(self, fabric: Fabric, tables: ForwardingTables) -> None:
        nodes = fabric.nodes()
        self.kind = {n["id"]: n["kind"] for n in nodes}
        self.guid = {n["id"]: n["guid"] for n in nodes}
        self.num_ports = {n["id"]: n["num_ports"] for n in nodes}
        self.desc = {n["id"]: n["description"] for n in nodes}
        self.peer: Dict[Tuple[int, int], Tuple[int, int]] = {}
        for link in fabric.links():
            a, b = (link["node_a"], link["port_a"]), (link["node_b"], link["port_b"])
            self.peer[a] = b
            self.peer[b] = a
        # Endpoints: every CA port with a LID, in node order.
        self.ca_of_lid: Dict[int, int] = {}
        self.ca_lids: List[int] = []
        for n in nodes:
            if n["kind"] != "switch" and n["lid"]:
                assert n["num_ports"] == 1, "the reference handles single-port CAs only"
                self.ca_lids.append(n["lid"])
                self.ca_of_lid[n["lid"]] = n["id"]
        self.switches = sum(1 for k in self.kind.values() if k == "switch")
        self.tables = tables
        self._paths: Dict[Tuple[int, int], object] = {}
        self._entry: Dict[Tuple[int, int], Optional[int]] = {}

    def _lft(self, node: int, lid: int) -> Optional[int]:
        key = (node, lid)
        if key not in self._entry:
            self._entry[key] = self.tables.get(self.guid[node], lid)
        return self._entry[key]

    def path(self, src_lid: int, dst_lid: int):
        """The directed links from CA ``src_lid`` to CA ``dst_lid`` as a tuple
        of (node GUID, port), or a failure name (a str)."""
        key = (src_lid, dst_lid)
        if key in self._paths:
            return self._paths[key]
        src, dst = self.ca_of_lid[src_lid], self.ca_of_lid[dst_lid]
        target = (dst, 1)
        result = self._walk(src, target, dst_lid)
        self._paths[key] = result
        return result

    def _walk(self, src: int, target: Tuple[int, int], dst_lid: int):
        hop = self.peer.get((src, 1))
        if hop is None:
            return "uncabled"
        links: List[Link] = [(self.guid[src], 1)]
        if hop == target:
            return tuple(links)
        node = hop[0]
        seen = set()
        while True:
            if self.kind[node] != "switch":
                return "wrong_endpoint"
            if node in seen:
                return "loop"
            seen.add(node)
            port = self._lft(node, dst_lid)
            if port is None:
                return "unset"
            if port == 0:
                return "port0"
            if port > self.num_ports[node]:
                return "no_such_port"
            hop = self.peer.get((node, port))
            if hop is None:
                return "uncabled"
            links.append((self.guid[node], port))
            if hop == target:
                return tuple(links)
            node = hop[0]


# --------------------------------------------------------------------------
# The reference: ORCS's patterns (ranks 0..n-1), level by level
# --------------------------------------------------------------------------


def _bisect(n: int, level: int) -> List[Tuple[int, int]]:
    # ORCS pairs counter with counter+1 (the direction is ibcloud's choice: 2i -> 2i+1).
    return [(c, c + 1) for c in range(0, n - 1, 2)] if level == 0 else []


def _bisect_fb_sym(n: int, level: int) -> List[Tuple[int, int]]:
    out = []
    if level == 0:
        for c in range(0, n - 1, 2):
            out += [(c, c + 1), (c + 1, c)]
    return out


def _tree(n: int, level: int) -> List[Tuple[int, int]]:
    dist = 2**level
    return [(i, i + dist) for i in range(dist) if i + dist < n]


def _bruck(n: int, level: int) -> List[Tuple[int, int]]:
    dist = 2**level
    return [] if dist >= n else [(i, (i + dist) % n) for i in range(n)]


def _gather(n: int, level: int) -> List[Tuple[int, int]]:
    return [(i, 0) for i in range(1, n)] if level == 0 else []


def _scatter(n: int, level: int) -> List[Tuple[int, int]]:
    return [(0, i) for i in range(1, n)] if level == 0 else []


def _recdbl(n: int, level: int, fold: bool) -> List[Tuple[int, int]]:
    power = 1
    while power * 2 <= n:
        power *= 2
    assert fold or power == n
    dist = 2**level
    out = []
    if dist < power:
        for start in range(0, power, 2 * dist):
            for k in range(start, start + dist):
                if k + dist < n:
                    out += [(k, k + dist), (k + dist, k)]
    elif level >= 1 and 2 ** (level - 1) < power:
        out = [(i, i + power) for i in range(n - power)]
    return out


def _neighbor2d(n: int, level: int) -> List[Tuple[int, int]]:
    if level > 0:
        return []
    xmax = math.ceil(math.sqrt(n))
    ymax = math.ceil(n / xmax)

    def node(x: int, y: int) -> int:
        return (y % ymax) * xmax + (x % xmax)

    out = set()
    for v in range(n):
        x, y = v % xmax, v // xmax
        for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            i = 1
            while node(x + dx * i, y + dy * i) >= n:  # jump over empty grid cells
                i += 1
            w = node(x + dx * i, y + dy * i)
            if w != v:
                out.add((v, w))
    return sorted(out)


def _neighbors(n: int, k: int) -> List[Tuple[int, int]]:
    """ORCS's genptrn_nneighbor: every rank fills its k slots from left to
    right with the first higher rank that has a free slot and is not already
    its neighbour; each slot gives one flow (so both directions appear)."""
    slots: List[List[Optional[int]]] = [[None] * k for _ in range(n)]
    for i in range(n):
        for s in range(k):
            if slots[i][s] is not None:
                continue
            for j in range(i + 1, n):
                if i in slots[j]:
                    continue
                if None in slots[j]:
                    slots[j][slots[j].index(None)] = i
                    slots[i][s] = j
                    break
    return [(i, peer) for i in range(n) for peer in slots[i] if peer is not None]


def pattern_flows(name: str, n: int, arg: Optional[str] = None, *, seed: int = 0, run: int = 0,
                  shuffle: bool = True) -> List[List[Tuple[int, int]]]:
    """The levels of ``name`` over n ranks (lists of (src rank, dst rank))."""
    if name == "rand":  # the only drawn pattern: its flows come from the library
        return [list(map(tuple, level)) for level in _native.pattern_levels("rand", n, seed, run, None, shuffle)]
    if name == "shift":
        return [[(i, (i + k) % n) for i in range(n)] for k in range(1, n)]
    if name == "ring":
        return [[(lv, (lv + 1) % n)] for lv in range(n)]
    if name in ("2neighbor", "4neighbor", "6neighbor", "neighbor"):
        k = int(arg) if name == "neighbor" else int(name[0])
        return [_neighbors(n, k)]
    single = {"bisect": _bisect, "bisect_fb_sym": _bisect_fb_sym, "tree": _tree, "bruck": _bruck,
              "gather": _gather, "scatter": _scatter, "neighbor2d": _neighbor2d}
    if name in single:
        gen = single[name]
    elif name == "recdbl":
        def gen(m: int, level: int) -> List[Tuple[int, int]]:
            return _recdbl(m, level, arg == "fold")
    else:
        raise ValueError(name)
    levels = []
    while True:  # ORCS runs levels until the generator gives no pair
        flows = gen(n, len(levels))
        if not flows:
            return levels
        levels.append(flows)


# --------------------------------------------------------------------------
# The reference: metrics
# --------------------------------------------------------------------------


class RefResult:
    def __init__(self) -> None:
        self.runs: List[Dict[str, float]] = []
        self.hist: Dict[float, int] = {}
        self.link_total: Dict[Link, float] = {}
        self.link_max: Dict[Link, float] = {}
        self.broken: Dict[Tuple[int, int, int, int], str] = {}  # (run, level, src, dst) -> failure
        self.net: Optional[RefNet] = None

    def hist_rows(self) -> List[Tuple[float, int]]:
        return sorted(self.hist.items())


def reference_run(net: RefNet, levels: Sequence[Sequence[Tuple[int, int, float]]], lid_of_rank: Sequence[int],
                  run: int, out: RefResult) -> None:
    """One run: levels of (src rank, dst rank, weight); ranks map to LIDs."""
    flows = broken = 0
    inv_sum = 0.0
    max_cong = 0.0
    sum_max_cong = 0.0
    # rank -> latest finish of the previous level's flows into it. (ORCS's own code builds a graph that
    # links only the first such flow per rank and measures it by BFS; for the built-in patterns, where
    # a rank sends and receives at most one flow per level in multi-level patterns, that is the same.)
    ready: Dict[int, float] = {}
    delay = 0.0
    for lv, level in enumerate(levels):
        load: Dict[Link, float] = {}
        arrived = []
        for s, d, w in level:
            p = net.path(lid_of_rank[s], lid_of_rank[d])
            if isinstance(p, str):
                broken += 1
                out.broken[(run, lv, lid_of_rank[s], lid_of_rank[d])] = p
                continue
            arrived.append((s, d, w, p))
            for link in p:
                load[link] = load.get(link, 0) + w
        level_inv = 0.0
        level_max_load = 0.0
        finish_at: Dict[int, float] = {}
        for s, d, w, p in arrived:
            bottleneck = max(load[link] for link in p)
            cong = bottleneck / w
            out.hist[cong] = out.hist.get(cong, 0) + 1
            level_inv += 1.0 / cong
            flows += 1
            max_cong = max(max_cong, cong)
            level_max_load = max(level_max_load, bottleneck)
            finish = ready.get(s, 0.0) + bottleneck
            finish_at[d] = max(finish_at.get(d, 0.0), finish)
            delay = max(delay, finish)
        ready = finish_at
        inv_sum += level_inv
        sum_max_cong += level_max_load
        for link, value in load.items():
            out.link_total[link] = out.link_total.get(link, 0.0) + value
            out.link_max[link] = max(out.link_max.get(link, 0.0), value)
    out.runs.append({
        "run": run, "levels": len(levels), "flows": flows, "broken": broken,
        "acc_band": inv_sum / flows if flows else math.nan, "max_cong": float(max_cong),
        "sum_max_cong": float(sum_max_cong), "dep_max_delay": float(delay),
    })


def reference_pattern(net: RefNet, endpoints: Sequence[int], pattern: str, *, runs: int, seed: int,
                      arg: Optional[str] = None, shuffle: bool = True, fixed: Sequence[int] = ()) -> RefResult:
    """A pattern over ``endpoints`` (LIDs) for ``runs`` runs, rank orders as
    analyze draws them."""
    n = len(endpoints)
    orders = _native.run_orders(n, seed, runs, shuffle, list(fixed))
    out = RefResult()
    out.net = net
    fixed_levels = None if pattern == "rand" else pattern_flows(pattern, n, arg)
    for run in range(runs):
        levels = fixed_levels if fixed_levels is not None else pattern_flows(pattern, n, seed=seed, run=run,
                                                                             shuffle=shuffle)
        lid_of_rank = [endpoints[pos] for pos in orders[run]]
        reference_run(net, [[(s, d, 1.0) for s, d in level] for level in levels], lid_of_rank, run, out)
    return out


def reference_matrix(net: RefNet, rows: Sequence[Tuple[int, int, float, int]],
                     runs: int) -> Tuple[RefResult, List[int]]:
    """A traffic matrix (src LID, dst LID, weight, level): levels in level
    order (empty ones dropped), rows in file order within a level."""
    endpoints: List[int] = []
    for s, d, _, _ in rows:
        for lid in (s, d):
            if lid not in endpoints:
                endpoints.append(lid)
    rank = {lid: i for i, lid in enumerate(endpoints)}
    by_level: Dict[int, List[Tuple[int, int, float]]] = {}
    for s, d, w, lv in rows:
        by_level.setdefault(lv, []).append((rank[s], rank[d], w))
    levels = [by_level[lv] for lv in sorted(by_level)]
    out = RefResult()
    out.net = net
    for run in range(runs):
        reference_run(net, levels, endpoints, run, out)
    return out, endpoints


# --------------------------------------------------------------------------
# Comparison with the Rust analysis
# --------------------------------------------------------------------------


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def assert_identical(a: ibcloud.Analysis, ref: RefResult, what: str) -> None:
    """Every number of ``a`` equals the reference, exactly."""
    got = a.runs.to_dict("records")
    assert len(got) == len(ref.runs), f"{what}: {len(got)} runs, reference {len(ref.runs)}"
    for g, r in zip(got, ref.runs):
        for col in ("run", "levels", "flows", "broken", "acc_band", "max_cong", "sum_max_cong", "dep_max_delay"):
            assert _same(float(g[col]), float(r[col])), \
                f"{what}: run {r['run']} {col}: rust {g[col]!r}, reference {r[col]!r}"
    hist = [(float(c), int(k)) for c, k in zip(a.hist_max_cong["max_cong"], a.hist_max_cong["routes"])]
    assert hist == ref.hist_rows(), f"{what}: hist_max_cong rust {hist}, reference {ref.hist_rows()}"
    total = sum(k for _, k in hist)
    assert list(a.hist_max_cong["share"]) == [k / total for _, k in hist]
    links = {(int(g), int(p)): (float(t), float(m))
             for g, p, t, m in zip(a.links["guid"], a.links["port"], a.links["total"], a.links["max"])}
    mine = {k: (float(ref.link_total[k]), float(ref.link_max[k])) for k in ref.link_total}
    assert links == mine, f"{what}: link loads differ on {len(set(links.items()) ^ set(mine.items()))} entries, " \
                          f"e.g. {sorted(set(links.items()) ^ set(mine.items()))[:4]}"
    assert list(a.links["mean"]) == [t / len(ref.runs) for t, _ in (links[k] for k in zip(
        a.links["guid"].astype(int), a.links["port"].astype(int)))]
    # Each link row names its far end and whether both ends are switches.
    net = ref.net
    if net is not None:
        node_of_guid = {g: n for n, g in net.guid.items()}
        for row in a.links.itertuples(index=False):
            here = node_of_guid[int(row.guid)]
            there = net.peer[(here, int(row.port))]
            assert (int(row.remote_guid), int(row.remote_port)) == (net.guid[there[0]], there[1]), row
            assert (row.node, row.remote_node) == (net.desc[here], net.desc[there[0]]), row
            assert bool(row.switch_to_switch) == (net.kind[here] == net.kind[there[0]] == "switch"), row
    broken = sum(r["broken"] for r in ref.runs)
    assert a.broken_flows == broken, f"{what}: broken flows rust {a.broken_flows}, reference {broken}"
    for run, level, s, d, failure in a.broken.itertuples(index=False):
        key = (int(run), int(level), int(s), int(d))
        assert key in ref.broken, f"{what}: rust lists broken flow {key} the reference delivers"
        assert failure == FAILURE_TEXT[ref.broken[key]], f"{what}: {key}: rust says {failure!r}, " \
                                                         f"reference {ref.broken[key]}"
    assert len(a.broken) == min(20, broken), f"{what}: {len(a.broken)} examples of {broken} broken flows"


# --------------------------------------------------------------------------
# Fabrics (built once per module)
# --------------------------------------------------------------------------

_CACHE: Dict[str, Tuple[Fabric, ForwardingTables]] = {}


def routed(spec: str, engine: str) -> Tuple[Fabric, ForwardingTables]:
    key = f"{spec}/{engine}"
    if key not in _CACHE:
        fabric = Fabric.generate(spec)
        _CACHE[key] = (fabric, route(fabric, engine).tables)
    return _CACHE[key]


def copy_tables(fabric: Fabric, tables: ForwardingTables, skip=lambda guid, lid: False) -> ForwardingTables:
    """A copy of ``tables`` built entry by entry (``skip`` leaves entries unset)."""
    out = ForwardingTables(fabric)
    e = tables.entries()
    skipped = 0
    for guid, lid, port in zip(e["switch_guid"], e["lid"], e["port"]):
        if skip(guid, lid):
            skipped += 1
        else:
            out.set(guid, lid, port)
    assert (out == tables) == (skipped == 0)
    return out


# --------------------------------------------------------------------------
# 1. Reference = Rust on 20 random runs of every pattern, three fabrics
# --------------------------------------------------------------------------

ALL_PATTERNS = [("bisect", None), ("bisect_fb_sym", None), ("rand", None), ("shift", None), ("ring", None),
                ("tree", None), ("bruck", None), ("gather", None), ("scatter", None), ("2neighbor", None),
                ("4neighbor", None), ("6neighbor", None), ("neighbor", "3"), ("neighbor2d", None)]

FABRICS = [
    # full-bisection 3-level tree, 128 CAs (a power of two: recdbl without fold)
    ("4-ary-3-full", "ftree", [("recdbl", None)]),
    # oversubscribed 2-level tree, 48 CAs (recdbl needs 'fold')
    ("XGFT(2;8,6;1,3)", "updn", [("recdbl", "fold")]),
    # 64 CAs, minhop
    ("8-ary-2", "minhop", [("recdbl", None), ("recdbl", "fold")]),
]

CASES = [(spec, engine, p, arg) for spec, engine, extra in FABRICS for p, arg in ALL_PATTERNS + extra]


@pytest.mark.parametrize("spec,engine,pattern,arg", CASES, ids=[f"{s}-{e}-{p}{'-' + a if a else ''}"
                                                                 for s, e, p, a in CASES])
def test_reference_equals_rust_on_random_runs(spec: str, engine: str, pattern: str, arg: Optional[str]) -> None:
    fabric, tables = routed(spec, engine)
    net = RefNet(fabric, tables)
    runs = 20
    seed = 1000 + len(pattern) * 7 + len(spec)
    a = analyze(tables, pattern, pattern_arg=arg, runs=runs, seed=seed)
    assert a.endpoints == net.ca_lids, "endpoints are every CA port in fabric order"
    ref = reference_pattern(net, net.ca_lids, pattern, runs=runs, seed=seed, arg=arg)
    assert a.broken_flows == 0
    assert_identical(a, ref, f"{pattern} on {spec}/{engine}")
    bands = [r["acc_band"] for r in ref.runs]
    ebb = a.ebb()
    assert (ebb["count"], ebb["min"], ebb["max"]) == (runs, min(bands), max(bands))
    assert math.isclose(ebb["mean"], sum(bands) / runs, rel_tol=1e-12)


def test_shift_spanning_several_jobs() -> None:
    """ft324: 323 shift levels of 324 flows do not fit one job (65,536 flows),
    so the delay chain crosses jobs; still identical."""
    fabric, tables = routed("ft324", "ftree")
    net = RefNet(fabric, tables)
    a = analyze(tables, "shift", runs=2, seed=5)
    assert_identical(a, reference_pattern(net, net.ca_lids, "shift", runs=2, seed=5), "shift on ft324")


def test_endpoint_subsets_and_fixed_order() -> None:
    """lids= (a subset in a given order), count=/subset=guid_desc, and a fixed
    order prefix followed by shuffled ranks."""
    fabric, tables = routed("XGFT(2;8,6;1,3)", "minhop")
    net = RefNet(fabric, tables)
    rng = random.Random(7)
    lids = rng.sample(net.ca_lids, 30)
    for pattern in ("bisect", "tree", "4neighbor"):
        a = analyze(tables, pattern, lids=lids, runs=20, seed=3)
        assert a.endpoints == lids
        assert_identical(a, reference_pattern(net, lids, pattern, runs=20, seed=3), f"{pattern} on 30 LIDs")
    # guid_desc: the 20 CA ports with the highest port GUIDs, highest first.
    port_guid = {lids_[0]: guid for guid, lids_ in fabric.guid2lid().items()}
    top = sorted(net.ca_lids, key=lambda lid: port_guid[lid], reverse=True)[:20]
    a = analyze(tables, "bruck", count=20, subset="guid_desc", runs=20, seed=4)
    assert a.endpoints == top
    assert_identical(a, reference_pattern(net, top, "bruck", runs=20, seed=4), "bruck on guid_desc 20")
    # A fixed prefix (order=LIDs): those ranks first, the rest shuffled per run.
    prefix = net.ca_lids[::-5][:6]
    a = analyze(tables, "shift", order=prefix, runs=20, seed=9)
    fixed = [net.ca_lids.index(lid) for lid in prefix]
    orders = _native.run_orders(len(net.ca_lids), 9, 20, True, fixed)
    assert all([net.ca_lids[p] for p in o[:6]] == prefix for o in orders)
    assert_identical(a, reference_pattern(net, net.ca_lids, "shift", runs=20, seed=9, fixed=fixed),
                     "shift with a fixed prefix")
    # shuffle=False: rank i is endpoint i in every run.
    a = analyze(tables, "bisect", runs=3, shuffle=False)
    ref = reference_pattern(net, net.ca_lids, "bisect", runs=3, seed=0, shuffle=False)
    assert_identical(a, ref, "bisect unshuffled")
    assert len(set(a.runs["acc_band"])) == 1


def test_long_patterns_spanning_several_jobs() -> None:
    """ft324: 324 ranks give 202 levels per job, so ring (324 levels) is cut
    in two jobs and the delay chain (324 long) crosses them; tree and bruck
    have 9 levels."""
    fabric, tables = routed("ft324", "ftree")
    net = RefNet(fabric, tables)
    for pattern in ("ring", "tree", "bruck"):
        a = analyze(tables, pattern, runs=3, seed=1)
        assert_identical(a, reference_pattern(net, net.ca_lids, pattern, runs=3, seed=1), f"{pattern} on ft324")
        if pattern == "ring":
            assert list(a.runs["dep_max_delay"]) == [324.0] * 3


def test_lmc_endpoints_use_base_lids() -> None:
    fabric = Fabric.generate("8-ary-2")
    fabric.assign_lids(lmc=2)
    tables = route(fabric, "minhop").tables
    net = RefNet(fabric, tables)
    assert net.ca_lids[:3] == [4, 8, 12]
    a = analyze(tables, "bisect", runs=20, seed=2)
    assert a.endpoints == net.ca_lids
    assert_identical(a, reference_pattern(net, net.ca_lids, "bisect", runs=20, seed=2), "bisect with LMC 2")
    # A LID inside a port's range names that port.
    assert analyze(tables, "bisect", lids=[net.ca_lids[0] + 1, net.ca_lids[1] + 3]).endpoints == net.ca_lids[:2]


def test_order_entries_and_linear_bfs_subset() -> None:
    """order= mixes port GUIDs, node GUIDs, LIDs; DUMMY (0xFFFF) is dropped
    silently, unknown and repeated entries are skipped and counted."""
    fabric, tables = routed("4-ary-3-full", "ftree")
    net = RefNet(fabric, tables)
    nodes = fabric.nodes()
    cas = [n for n in nodes if n["kind"] == "ca"]
    port_guid = {lids[0]: guid for guid, lids in fabric.guid2lid().items()}
    order = [port_guid[cas[10]["lid"]], cas[3]["guid"], cas[7]["lid"], 0xFFFF, 4000, cas[3]["lid"]]
    a = analyze(tables, "bisect", order=order, runs=20, seed=1)
    assert (a.fixed_ranks, a.order_skipped) == (3, 2)
    fixed = [net.ca_lids.index(cas[i]["lid"]) for i in (10, 3, 7)]
    assert_identical(a, reference_pattern(net, net.ca_lids, "bisect", runs=20, seed=1, fixed=fixed),
                     "bisect with mixed order entries")
    # linear_bfs: CAs in breadth-first order of their nodes from node 0, over ports in port order.
    seen, queue, bfs = {0}, [0], []
    while queue:
        node = queue.pop(0)
        if net.kind[node] != "switch":
            bfs.append(nodes[node]["lid"])
        for port in range(1, net.num_ports[node] + 1):
            peer = net.peer.get((node, port))
            if peer is not None and peer[0] not in seen:
                seen.add(peer[0])
                queue.append(peer[0])
    a = analyze(tables, "bisect", count=40, subset="linear_bfs", runs=20, seed=6)
    assert a.endpoints == bfs[:40]
    assert_identical(a, reference_pattern(net, bfs[:40], "bisect", runs=20, seed=6), "bisect on linear_bfs 40")


# --------------------------------------------------------------------------
# 2. A weighted traffic matrix
# --------------------------------------------------------------------------


def test_weighted_traffic_matrix(tmp_path) -> None:
    fabric, tables = routed("XGFT(2;8,6;1,3)", "updn")
    net = RefNet(fabric, tables)
    rng = random.Random(11)
    weights = [0.25, 0.5, 1.0, 1.5, 2.0, 3.25, 7.0]
    rows = []
    for level in (0, 2, 5):  # gaps: empty levels are dropped
        for _ in range(40):
            s, d = rng.sample(net.ca_lids, 2)
            rows.append((s, d, rng.choice(weights), level))
    rows.append(rows[3])  # the same flow twice in one level
    ref, endpoints = reference_matrix(net, rows, runs=3)
    a = analyze(tables, matrix=rows, runs=3, seed=1)
    assert a.endpoints == endpoints
    assert list(a.runs["levels"]) == [3, 3, 3]
    assert_identical(a, ref, "weighted matrix")
    assert any(c != int(c) for c, _ in ref.hist_rows()), "weights give fractional congestion"
    # The same matrix from a CSV file (hex LIDs, comments, a default weight column).
    csv = tmp_path / "m.csv"
    csv.write_text("# a comment\nsrc,dst,weight,level\n" +
                   "".join(f"{hex(s)},{d},{w},{lv}\n" for s, d, w, lv in rows))
    b = analyze(tables, matrix=csv, runs=3)
    pd.testing.assert_frame_equal(a.runs, b.runs)
    # Unit weights take the integer path: same numbers as the same flows with weight 1.0 written out.
    unit = [(s, d, 1.0, lv) for s, d, _, lv in rows]
    ref_unit, _ = reference_matrix(net, unit, runs=1)
    assert_identical(analyze(tables, matrix=unit), ref_unit, "unit matrix")


# --------------------------------------------------------------------------
# 3. Broken tables: unset entries, uncabled ports, port 0, wrong endpoint, loops
# --------------------------------------------------------------------------


def _broken_tables() -> Tuple[Fabric, ForwardingTables, Dict[str, int]]:
    fabric, good = routed("8-ary-2", "minhop")
    nodes = fabric.nodes()
    leaves = [n for n in nodes if n["kind"] == "switch" and n["rank"] == 1]
    roots = [n for n in nodes if n["kind"] == "switch" and n["rank"] == 0]
    by_id = {n["id"]: n for n in nodes}
    links = fabric.links()
    leaf_of = {}  # CA LID -> its leaf switch node, port
    for l in links:
        a, b = by_id[l["node_a"]], by_id[l["node_b"]]
        if a["kind"] == "ca":
            leaf_of[a["lid"]] = (b, l["port_b"])
    cabled = {(l["node_a"], l["port_a"]) for l in links} | {(l["node_b"], l["port_b"]) for l in links}
    ca_lids = sorted(leaf_of)
    lid_unset, lid_uncabled, lid_port0, lid_wrong, lid_loop = ca_lids[3], ca_lids[12], ca_lids[21], ca_lids[30], \
        ca_lids[47]
    own_leaf = {lid: leaf_of[lid][0]["guid"] for lid in ca_lids}
    # Unset: every leaf but its own forgets lid_unset.
    t = copy_tables(fabric, good, skip=lambda g, lid: lid == lid_unset and g != own_leaf[lid_unset])
    # Uncabled: every root sends lid_uncabled out of its first uncabled port.
    for r in roots:
        spare = next(p for p in range(1, r["num_ports"] + 1) if (r["id"], p) not in cabled)
        t.set(r["guid"], lid_uncabled, spare)
    # Port 0: one foreign leaf says port 0 for lid_port0.
    foreign = next(lf for lf in leaves if lf["guid"] != own_leaf[lid_port0])
    t.set(foreign["guid"], lid_port0, 0)
    # Wrong endpoint: the destination's own leaf delivers lid_wrong to its neighbour CA.
    leaf, _ = leaf_of[lid_wrong]
    other = next(p for lid, (lf, p) in leaf_of.items() if lf["id"] == leaf["id"] and lid != lid_wrong)
    t.set(leaf["guid"], lid_wrong, other)
    # Loop: a foreign leaf sends lid_loop to root R, R sends it straight back.
    loop_leaf = next(lf for lf in leaves if lf["guid"] != own_leaf[lid_loop])
    up = good.get(loop_leaf["guid"], lid_loop)
    peer = {}
    for link in links:
        peer[(link["node_a"], link["port_a"])] = (link["node_b"], link["port_b"])
        peer[(link["node_b"], link["port_b"])] = (link["node_a"], link["port_a"])
    root_id, back = peer[(loop_leaf["id"], up)]  # the root's port back to loop_leaf
    assert by_id[root_id]["kind"] == "switch" and by_id[root_id]["rank"] == 0
    t.set(by_id[root_id]["guid"], lid_loop, back)
    lids = {"unset": lid_unset, "uncabled": lid_uncabled, "port0": lid_port0, "wrong_endpoint": lid_wrong,
            "loop": lid_loop}
    return fabric, t, lids


@pytest.mark.parametrize("paths", ["table", "walk"])
def test_broken_entries_are_counted(paths: str) -> None:
    fabric, tables, lids = _broken_tables()
    net = RefNet(fabric, tables)
    # Every kind of failure is there, for the expected number of sources.
    kinds = {}
    for s in net.ca_lids:
        for d in net.ca_lids:
            if s != d and isinstance(net.path(s, d), str):
                kinds.setdefault(net.path(s, d), set()).add(d)
    assert {k: sorted(v) for k, v in kinds.items()} == {k: [lid] for k, lid in lids.items()}
    failing_sources = {k: sum(1 for s in net.ca_lids if s != lid and isinstance(net.path(s, lid), str))
                       for k, lid in lids.items()}
    # 56 foreign CAs lose lid_unset and lid_uncabled, 8 behind one leaf lose lid_port0 and (at least) lid_loop,
    # all 63 others reach a wrong CA for lid_wrong.
    assert failing_sources["unset"] == 56 and failing_sources["uncabled"] == 56
    assert failing_sources["port0"] == 8 and failing_sources["wrong_endpoint"] == 63
    assert failing_sources["loop"] >= 8
    for pattern, arg in (("shift", None), ("bisect", None), ("rand", None), ("6neighbor", None), ("recdbl", None)):
        a = analyze(tables, pattern, pattern_arg=arg, runs=20, seed=21, paths=paths)
        ref = reference_pattern(net, net.ca_lids, pattern, runs=20, seed=21, arg=arg)
        assert sum(r["broken"] for r in ref.runs) > 0
        assert_identical(a, ref, f"{pattern} on broken tables ({paths})")
        assert a.precomputed_paths == (paths == "table")
    # Every flow into one broken LID, by matrix: counted, with examples, nothing crashes.
    rows = [(s, lids["loop"], 1.0, 0) for s in net.ca_lids if s != lids["loop"]]
    a = analyze(tables, matrix=rows, paths=paths)
    ref, _ = reference_matrix(net, rows, runs=1)
    assert_identical(a, ref, "matrix into the looping LID")
    assert set(a.broken["failure"]) == {"forwarding loop"}


def test_broken_entries_with_several_jobs() -> None:
    """Shift on ft324 (two jobs per run) with a third of the switches missing
    three LIDs: broken flows cut the delay chain across the job boundary."""
    fabric, good = routed("ft324", "ftree")
    tables = copy_tables(fabric, good, skip=lambda guid, lid: lid in (5, 77, 200) and guid % 3 == 0)
    net = RefNet(fabric, tables)
    a = analyze(tables, "shift", runs=1, seed=4)
    ref = reference_pattern(net, net.ca_lids, "shift", runs=1, seed=4)
    assert ref.runs[0]["broken"] > 0
    assert_identical(a, ref, "shift on ft324 with unset entries")


def test_all_flows_broken_gives_nan_bandwidth() -> None:
    fabric, good = routed("8-ary-2", "minhop")
    empty = ForwardingTables(fabric)
    a = analyze(empty, "bisect", runs=2, seed=1)
    assert list(a.runs["flows"]) == [0, 0] and list(a.runs["broken"]) == [32, 32]
    assert a.runs["acc_band"].isna().all() and a.broken_flows == 64
    assert len(a.links) == 0 and len(a.hist_max_cong) == 0
    assert set(a.broken["failure"]) == {"no LFT entry (255)"}


# --------------------------------------------------------------------------
# 4. Hand-computed cases on XGFT(2;2,2;1,2): 4 CAs, 2 leaves, 2 roots
# --------------------------------------------------------------------------


def _tiny(shared: bool) -> Tuple[Fabric, ForwardingTables, Dict[str, dict]]:
    """LIDs 1, 2 on leaf A; 3, 4 on leaf B. Flows 1->3 and 2->4 go over root 1
    and root 2 (disjoint), or both over root 1 (``shared``)."""
    f = Fabric.generate("XGFT(2;2,2;1,2)")
    t = route(f, "minhop").tables
    n = {x["description"]: x for x in f.nodes()}
    leaf_a, leaf_b, root1, root2 = n["sw-L1-0001"], n["sw-L1-0002"], n["sw-L2-0001"], n["sw-L2-0002"]
    assert [x["lid"] for x in f.nodes() if x["kind"] == "ca"] == [1, 2, 3, 4]
    t.set(leaf_a["guid"], 3, 3)  # port 3 -> root 1
    t.set(leaf_a["guid"], 4, 3 if shared else 4)
    for root in (root1, root2):
        t.set(root["guid"], 3, 2)  # port 2 -> leaf B
        t.set(root["guid"], 4, 2)
    t.set(leaf_b["guid"], 3, 1)
    t.set(leaf_b["guid"], 4, 2)
    # The way back: LID 1 over root 1, LID 2 over root 2.
    t.set(leaf_b["guid"], 1, 3)
    t.set(leaf_b["guid"], 2, 4)
    for root in (root1, root2):
        t.set(root["guid"], 1, 1)  # port 1 -> leaf A
        t.set(root["guid"], 2, 1)
    t.set(leaf_a["guid"], 1, 1)
    t.set(leaf_a["guid"], 2, 2)
    return f, t, {"A": leaf_a, "B": leaf_b, "R1": root1, "R2": root2, "ca": {x["lid"]: x for x in f.nodes()}}


def _links(a: ibcloud.Analysis) -> Dict[Tuple[str, int], Tuple[float, float]]:
    return {(node, int(port)): (float(t), float(m)) for node, port, t, m in
            zip(a.links["node"], a.links["port"], a.links["total"], a.links["max"])}


def test_two_flows_disjoint() -> None:
    f, t, n = _tiny(shared=False)
    for a in (analyze(t, matrix=[(1, 3, 1.0, 0), (2, 4, 1.0, 0)]),
              analyze(t, "bisect", lids=[1, 3, 2, 4], shuffle=False)):
        r = a.runs.iloc[0]
        assert (r["levels"], r["flows"], r["broken"]) == (1, 2, 0)
        assert (r["acc_band"], r["max_cong"], r["sum_max_cong"], r["dep_max_delay"]) == (1.0, 1.0, 1.0, 1.0)
        assert a.hist_max_cong[["max_cong", "routes"]].values.tolist() == [[1.0, 2]]
        ca = lambda lid: n["ca"][lid]["description"]  # noqa: E731
        assert _links(a) == {(ca(1), 1): (1.0, 1.0), ("sw-L1-0001", 3): (1.0, 1.0), ("sw-L2-0001", 2): (1.0, 1.0),
                             ("sw-L1-0002", 1): (1.0, 1.0), (ca(2), 1): (1.0, 1.0), ("sw-L1-0001", 4): (1.0, 1.0),
                             ("sw-L2-0002", 2): (1.0, 1.0), ("sw-L1-0002", 2): (1.0, 1.0)}
        assert a.hist_max_cong_bandwidth() == 1.0


def test_two_flows_sharing_a_link() -> None:
    f, t, n = _tiny(shared=True)
    for a in (analyze(t, matrix=[(1, 3, 1.0, 0), (2, 4, 1.0, 0)]),
              analyze(t, "bisect", lids=[1, 3, 2, 4], shuffle=False)):
        r = a.runs.iloc[0]
        assert (r["acc_band"], r["max_cong"], r["sum_max_cong"], r["dep_max_delay"]) == (0.5, 2.0, 2.0, 2.0)
        assert a.hist_max_cong[["max_cong", "routes"]].values.tolist() == [[2.0, 2]]
        links = _links(a)
        assert links[("sw-L1-0001", 3)] == (2.0, 2.0) and links[("sw-L2-0001", 2)] == (2.0, 2.0)
        assert links[("sw-L1-0002", 1)] == (1.0, 1.0) and ("sw-L1-0001", 4) not in links
        assert a.hist_max_cong_bandwidth() == 0.5
        assert len(links) == 6


def test_levels_and_delay_chain_by_hand() -> None:
    """Level 0: 1->3 and 2->4 share a link (load 2, finish 2 at LIDs 3, 4).
    Level 1: 1->2 inside leaf A (LID 1 received nothing: 0 -> 1).
    Level 2: 3->1: LID 3 received nothing in level 1, so it starts at 0 (not
    at level 0's finish 2) -> 1. dep_max_delay = 2, sum_max_cong = 2+1+1."""
    f, t, _ = _tiny(shared=True)
    a = analyze(t, matrix=[(1, 3, 1.0, 0), (2, 4, 1.0, 0), (1, 2, 1.0, 1), (3, 1, 1.0, 2)], runs=2)
    for r in a.runs.to_dict("records"):
        assert (r["levels"], r["flows"], r["broken"]) == (3, 4, 0)
        assert (r["acc_band"], r["max_cong"], r["sum_max_cong"], r["dep_max_delay"]) == (0.75, 2.0, 4.0, 2.0)
    assert a.hist_max_cong[["max_cong", "routes"]].values.tolist() == [[1.0, 4], [2.0, 4]]
    links = _links(a)
    assert links[("sw-L1-0001", 3)] == (4.0, 2.0)  # 2 per run, 2 runs; 2 in its level
    # A chain over three levels.
    b = analyze(t, matrix=[(1, 3, 1.0, 0), (2, 4, 1.0, 0), (3, 2, 1.0, 1), (4, 1, 1.0, 1), (1, 3, 1.0, 2)])
    r = b.runs.iloc[0]
    # level 0: loads 2 (finish 2 at 3 and 4); level 1: 3->2, 4->1 on separate links (start 2, finish 3);
    # level 2: 1->3 starts at 3 (4->1 ended at 1) -> 4.
    assert (r["sum_max_cong"], r["dep_max_delay"]) == (4.0, 4.0), b.runs


def test_weighted_flows_by_hand() -> None:
    """Weights 3 and 1 on one shared link: load 4; congestion is the load
    over the flow's own weight (4/3 and 4), so acc_band = (3/4 + 1/4) / 2."""
    f, t, _ = _tiny(shared=True)
    a = analyze(t, matrix=[(1, 3, 3.0, 0), (2, 4, 1.0, 0)])
    r = a.runs.iloc[0]
    acc_band = (1.0 / (4.0 / 3.0) + 1.0 / 4.0) / 2
    assert (r["acc_band"], r["max_cong"], r["sum_max_cong"], r["dep_max_delay"]) == (acc_band, 4.0, 4.0, 4.0)
    assert acc_band == 0.5
    assert a.hist_max_cong[["max_cong", "routes"]].values.tolist() == [[4.0 / 3.0, 1], [4.0, 1]]
    assert _links(a)[("sw-L1-0001", 3)] == (4.0, 4.0)
    # Alone, a heavy flow is unshared: congestion 1.
    b = analyze(t, matrix=[(1, 3, 5.0, 0)])
    assert (b.runs.loc[0, "max_cong"], b.runs.loc[0, "acc_band"], b.runs.loc[0, "sum_max_cong"]) == (1.0, 1.0, 5.0)


def test_gather_and_scatter_by_hand() -> None:
    """Gather on 4 CAs: all three flows end on rank 0's switch->CA link:
    congestion 3 each; scatter: all start on rank 0's CA->switch link."""
    f, t, _ = _tiny(shared=False)
    for pattern in ("gather", "scatter"):
        a = analyze(t, pattern, shuffle=False)
        r = a.runs.iloc[0]
        assert (r["flows"], r["max_cong"], r["sum_max_cong"], r["dep_max_delay"]) == (3, 3.0, 3.0, 3.0)
        assert r["acc_band"] == (1 / 3 + 1 / 3 + 1 / 3) / 3
        assert a.hist_max_cong[["max_cong", "routes"]].values.tolist() == [[3.0, 3]]


# --------------------------------------------------------------------------
# 5. Bad input
# --------------------------------------------------------------------------


@pytest.mark.parametrize("text,line,words", [
    ("from,to\n1,3\n", 1, "header"),
    ("src,dst\n1,3\nx1,3\n", 3, "is not a LID"),
    ("src,dst\n1,3\n0,3\n", 3, "not a unicast LID"),
    ("# c\n\nsrc,dst,weight\n1,3,1\n2,4,0\n", 5, "positive"),
    ("src,dst,weight\n1,3,-2\n", 2, "positive"),
    ("src,dst,weight\n1,3,nan\n", 2, "positive"),
    ("src,dst\n1,3,4\n", 2, "expected 2 fields"),
    ("src,dst\n1,3\n2,2\n", 3, ""),        # a self flow (library check, mapped to the line)
    ("src,dst\n1,3\n# c\n2,999\n", 4, ""),  # a LID no port has
    ("src,dst\n1,7\n", 2, ""),              # a switch LID
    ("", 1, "empty"),
])
def test_bad_traffic_matrix_names_file_and_line(tmp_path, text: str, line: int, words: str) -> None:
    f, t, _ = _tiny(shared=False)
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises((ParseError, AnalysisError)) as err:
        analyze(t, matrix=path)
    message = str(err.value)
    assert message.startswith(f"{path}:{line}: "), f"expected '{path}:{line}: ...', got {message!r}"
    assert words in message


def test_bad_sizes_say_why() -> None:
    fabric, tables = routed("XGFT(2;8,6;1,3)", "updn")
    lids = [n["lid"] for n in fabric.nodes() if n["kind"] == "ca"]
    with pytest.raises(AnalysisError, match=r"even number of endpoints.*3 endpoints"):
        analyze(tables, "bisect", lids=lids[:3])
    with pytest.raises(AnalysisError, match=r"even"):
        analyze(tables, "bisect_fb_sym", lids=lids[:7])
    with pytest.raises(AnalysisError, match=r"power-of-two.*48.*32.*fold"):
        analyze(tables, "recdbl")
    with pytest.raises(AnalysisError, match=r"power-of-two"):
        analyze(tables, "recdbl", lids=lids[:6])
    assert len(analyze(tables, "recdbl", pattern_arg="fold").runs) == 1
    with pytest.raises(AnalysisError, match="neighbour"):
        analyze(tables, "neighbor", pattern_arg="6", lids=lids[:6])
    with pytest.raises(AnalysisError, match="unknown pattern"):
        analyze(tables, "bogus")
    with pytest.raises(AnalysisError, match="at least 1"):
        analyze(tables, "bisect", runs=0)
    switch_lid = next(n["lid"] for n in fabric.nodes() if n["kind"] == "switch")
    with pytest.raises(AnalysisError):
        analyze(tables, "bisect", lids=[lids[0], switch_lid])
    with pytest.raises(AnalysisError):
        analyze(tables, "bisect", lids=[lids[0], lids[0]])
    with pytest.raises(AnalysisError):
        analyze(tables, "bisect", lids=[lids[0], 4000])
    with pytest.raises(AnalysisError, match="cannot pick 49"):
        analyze(tables, "bisect", count=49)
    with pytest.raises(AnalysisError, match="subset"):
        analyze(tables, "bisect", count=4, subset="zigzag")


def test_tables_naming_ports_the_fabric_lacks_are_refused(tmp_path) -> None:
    """An opensm-lfts.dump entry for a port the switch does not have cannot
    reach the analysis: read_lfts names the line (ForwardingTables.set refuses
    it too), so NoSuchPort never needs counting."""
    fabric, tables = routed("8-ary-2", "minhop")
    good = tmp_path / "good.dump"
    tables.write_opensm(good)
    lines = good.read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("0x0005 "))
    lines[i] = "0x0005 040" + lines[i][len("0x0005 005"):]
    bad = tmp_path / "bad.dump"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(ParseError, match=rf"^{re.escape(str(bad))}:{i + 1}: port 40 does not exist"):
        ibcloud.read_lfts(bad, fabric)
    leaf = next(n for n in fabric.nodes() if n["kind"] == "switch")
    with pytest.raises(ibcloud.TopologyError):
        tables.set(leaf["guid"], 5, 40)


# --------------------------------------------------------------------------
# 6. Determinism: any number of threads, any path mode, the same numbers
# --------------------------------------------------------------------------


@pytest.mark.parametrize("tables_of,pattern,arg", [("xgft", "bisect", None), ("xgft", "rand", None),
                                                    ("xgft", "shift", None), ("xgft", "recdbl", "fold"),
                                                    ("broken", "rand", None)])
def test_threads_and_path_modes_give_identical_frames(tables_of: str, pattern: str, arg: Optional[str]) -> None:
    tables = routed("XGFT(2;8,6;1,3)", "updn")[1] if tables_of == "xgft" else _broken_tables()[1]
    runs = 3 if pattern == "shift" else 300  # 300 runs: several chunks, spread over the threads
    results = [analyze(tables, pattern, pattern_arg=arg, runs=runs, seed=77, threads=th, paths=mode)
               for th, mode in ((1, "table"), (2, "table"), (2, "walk"), (None, "auto"))]
    first = results[0]
    assert (len(first.broken) > 0) == (tables_of == "broken")
    for other in results[1:]:
        pd.testing.assert_frame_equal(first.runs, other.runs, check_exact=True)
        pd.testing.assert_frame_equal(first.hist_max_cong, other.hist_max_cong, check_exact=True)
        pd.testing.assert_frame_equal(first.links, other.links, check_exact=True)
        pd.testing.assert_frame_equal(first.broken, other.broken, check_exact=True)
        assert first.broken_flows == other.broken_flows
    again = analyze(tables, pattern, pattern_arg=arg, runs=runs, seed=77, threads=2)
    pd.testing.assert_frame_equal(first.runs, again.runs, check_exact=True)
    different = analyze(tables, pattern, pattern_arg=arg, runs=runs, seed=78, threads=2)
    assert not first.runs.equals(different.runs), "another seed draws other orders"
