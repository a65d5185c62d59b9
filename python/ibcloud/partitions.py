"""IB partitions and partition-aware fat-tree routing (seed 002: pFTree,
pFTree-Ext, pFTree-Wt).

A :class:`PartitionConfig` is OpenSM's ``partitions.conf`` (read, built and
written in OpenSM 3.3.23's syntax) with pFTree-Ext's policies carried as
partition flags OpenSM ignores: ``isolation=phy|vlane|def`` per partition and
``global_isolation=strict|best-effort``. :func:`route` runs ``pftree``,
``pftree-ext`` or ``pftree-wt`` and returns the tables, each partition's SL
(= VL) on its paths and the validator's report; :func:`check` validates any
tables (ours or OpenSM's) against a configuration. :func:`write_qos` writes
the OpenSM QoS options that make a real OpenSM hand out those SLs.

>>> from ibcloud import Fabric
>>> fabric = Fabric.generate("XGFT(2;8,4;1,4)")
>>> leaves = leaf_nodes(fabric)
>>> victims = [guid for leaf in leaves for _, guid in leaf[:2]]
>>> others = [guid for leaf in leaves for _, guid in leaf[2:]]
>>> conf = PartitionConfig.build([
...     Partition("victims", 0x0001, "phy", None, [(hex(g), "full") for g in victims]),
...     Partition("tenant", 0x0002, None, None, [(hex(g), "full") for g in others]),
... ], global_isolation="strict")
>>> r = route(fabric, "pftree-ext", conf)
>>> [(p["name"], len(p["shared"]), p["ok"]) for p in r.report["partitions"]]
[('victims', 0, True), ('tenant', 0, True)]
>>> r.engine, r.variant
('pftree-ext', 'corrected')
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

from ibcloud import _native
from ibcloud.safeio import checked_ints
from ibcloud.tables import ForwardingTables

if TYPE_CHECKING:
    import pandas

    from ibcloud.fabric import Fabric

__all__ = [
    "Partition",
    "PartitionConfig",
    "PartitionedRouting",
    "check",
    "contention",
    "interference",
    "leaf_nodes",
    "learn_weights",
    "partition_delays",
    "read_weights",
    "route",
    "victim_delays",
    "write_ibdmchk_files",
    "write_qos",
]

PathLike = Union[str, "os.PathLike[str]"]

#: The switches of :class:`ibcloud_routing::engines::pftree::PftreeVariant`.
VARIANT_SWITCHES = ("corrected", "literal", "literal-marking", "literal-exclusion", "leaf-by-leaf", "alg2-return", "vl-for-def", "marks-only", "grouped")


@dataclass
class Partition:
    """One partition: name, 15-bit P_Key (None: OpenSM generates one),
    isolation policy (``phy``, ``vlane``, ``def`` or None), SL (None: none
    given) and members as (port GUID or keyword, membership or None).

    >>> p = Partition("gold", 0x8001, "vlane", 1, [("0x10", "full"), ("ALL_CAS", None)])
    >>> p.pkey, p.isolation
    (32769, 'vlane')
    """

    name: str
    pkey: Optional[int]
    isolation: Optional[str]
    sl: Optional[int]
    members: List[Tuple[str, Optional[str]]] = field(default_factory=list)
    #: Line of the definition in its file (0 when built in code).
    line: int = 0


class PartitionConfig:
    """A partition configuration: what OpenSM's ``partitions.conf`` says.

    >>> conf = PartitionConfig.parse("Default=0x7fff : ALL=full ;\\n"
    ...                              "a=0x1, isolation=phy : 0x10=full, 0x11 ;\\n")
    >>> [(p.name, p.pkey, p.isolation) for p in conf.partitions]
    [('Default', 32767, None), ('a', 1, 'phy')]
    >>> from ibcloud.exceptions import ParseError
    >>> try:
    ...     PartitionConfig.parse("a=0x1 0x10 ;", "p.conf")
    ... except ParseError as e:
    ...     print(str(e).split(" (")[0])
    p.conf:1:1: no partition definition found
    """

    _native: _native.PartitionConfig

    def __init__(self, native: _native.PartitionConfig) -> None:
        self._native = native

    @classmethod
    def parse(cls, text: str, file: str = "<string>") -> PartitionConfig:
        """Parses partitions.conf text; syntax errors raise ``ParseError``
        naming ``file:line:column`` as OpenSM would reject the file.

        >>> PartitionConfig.parse("p=2, sl=99 : 0x5 ;").warnings
        ["<string>:line 1:6: flag 'sl' requires valid value - skipped"]
        """
        return cls(_native.PartitionConfig.parse(text, file))

    @classmethod
    def read(cls, path: PathLike) -> PartitionConfig:
        """Reads a partitions.conf file.

        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "partitions.conf"
        >>> _ = p.write_text("Default=0x7fff : ALL=full ;\\n")
        >>> len(PartitionConfig.read(p).partitions)
        1
        """
        return cls(_native.read_partitions_conf(os.fspath(path)))

    @classmethod
    def build(cls, partitions: Sequence[Partition], global_isolation: Optional[str] = None) -> PartitionConfig:
        """A configuration from :class:`Partition` values.

        >>> c = PartitionConfig.build([Partition("a", 1, "vlane", None, [("0x10", "full")])], "strict")
        >>> c.global_isolation, c.partitions[0].members
        ('strict', [('0x0000000000000010', 'full')])
        """
        rows = [(p.name, p.pkey, p.isolation, p.sl, list(p.members)) for p in partitions]
        return cls(_native.PartitionConfig.build(rows, global_isolation))

    @property
    def partitions(self) -> List[Partition]:
        """The partitions, in order of first definition.

        >>> PartitionConfig.parse("x : ALL ;").partitions[0].pkey is None
        True
        """
        return [Partition(n, k, i, s, list(m), line) for n, k, i, s, m, line in self._native.partitions]

    @property
    def warnings(self) -> List[str]:
        """What OpenSM would warn about (unknown flags, bad ``sl`` values, …).

        >>> PartitionConfig.parse("x, frob : ALL ;").warnings
        ["<string>:line 1:4: unrecognized partition flag 'frob' - ignored"]
        """
        return list(self._native.warnings)

    @property
    def global_isolation(self) -> Optional[str]:
        """``strict`` or ``best-effort`` when the file says (``global_isolation=`` flag).

        >>> PartitionConfig.parse("Default=0x7fff, global_isolation=strict : ALL ;").global_isolation
        'strict'
        """
        return self._native.global_isolation

    def to_text(self) -> str:
        """The configuration in OpenSM's syntax.

        >>> text = PartitionConfig.parse("a=0x1, isolation=phy : 0x10=full ;").to_text()
        >>> text.splitlines()[2]
        'a=0x0001, isolation=phy :'
        """
        return self._native.to_text()

    def write(self, path: PathLike) -> None:
        """Writes the configuration as a partitions.conf file.

        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "partitions.conf"
        >>> PartitionConfig.parse("a=0x1 : ALL ;").write(p)
        >>> PartitionConfig.read(p).partitions[0].name
        'a'
        """
        from ibcloud.safeio import atomic_write

        atomic_write(path, self.to_text())

    def resolve(self, fabric: "Fabric", strict: bool = False) -> Tuple["pandas.DataFrame", List[str]]:
        """Members per partition on ``fabric`` as a DataFrame (``partition``,
        ``pkey``, ``isolation``, ``lid``, ``guid``, ``membership``) and the
        warnings; ``strict`` raises ``RoutingError`` on unknown or overlapping
        members. The default partition is left out.

        >>> from ibcloud import Fabric
        >>> f = Fabric.generate("4-ary-2")
        >>> df, warnings = PartitionConfig.parse("a=0x1 : ALL_CAS=full, 0x99 ;").resolve(f)
        >>> len(df), warnings[0].split(":")[0]
        (16, "partition 'a' (line 1)")
        """
        import pandas

        parts, warnings = self._native.resolve(fabric._native, strict)
        rows = [
            {"partition": name, "pkey": pkey, "isolation": iso, "lid": lid, "guid": guid, "membership": m}
            for name, pkey, iso, members in parts
            for lid, guid, m in members
        ]
        cols = ["partition", "pkey", "isolation", "lid", "guid", "membership"]
        return pandas.DataFrame(rows, columns=cols), list(warnings)

    def __repr__(self) -> str:
        return repr(self._native)


@dataclass
class PartitionedRouting:
    """What :func:`route` returns.

    >>> from ibcloud import Fabric
    >>> r = route(Fabric.generate("4-ary-2"), "pftree")
    >>> r.vls, r.path_sls is None, r.seconds >= 0
    ([], True, True)
    """

    #: Every switch's forwarding table.
    tables: ForwardingTables
    #: Each partition's SL on its intra-partition paths (None: SL 0 everywhere).
    path_sls: Optional[_native.PathSls]
    #: Engine name.
    engine: str
    #: ``corrected``, ``literal`` or the switches used.
    variant: str
    #: Seconds spent routing.
    seconds: float
    #: The validator's report (``partitions``: name, pkey, isolation, vl, links, shared, ok; ``violations``).
    report: Dict[str, Any]
    #: What was relaxed (best-effort) or ignored.
    warnings: List[str]
    #: VL (= SL) per partition, in report order.
    vls: List[int]

    def frame(self) -> "pandas.DataFrame":
        """Per partition: name, pkey, isolation, members, vl, links used, links shared, ok.

        >>> from ibcloud import Fabric
        >>> route(Fabric.generate("4-ary-2"), "pftree").frame().empty
        True
        """
        return report_frame(self.report)

    def pkey_sls(self) -> List[Tuple[int, int]]:
        """(P_Key, SL) of every partition with an SL of its own.

        >>> from ibcloud import Fabric
        >>> route(Fabric.generate("4-ary-2"), "pftree").pkey_sls()
        []
        """
        return [(p["pkey"], v) for p, v in zip(self.report["partitions"], self.vls) if v > 0]


    def configured(self, partitions: PartitionConfig) -> PartitionConfig:
        """``partitions`` with every routed partition's ``sl=`` set to its
        VL, so OpenSM (with :func:`write_qos`'s options) hands out our SLs.

        >>> from ibcloud import Fabric
        >>> conf = PartitionConfig.parse("a=0x1 : ALL_CAS=full ;")
        >>> route(Fabric.generate("4-ary-2"), "pftree", conf).configured(conf).partitions[0].sl
        0
        """
        sl_of = {p["pkey"]: v for p, v in zip(self.report["partitions"], self.vls)}
        parts = []
        for p in partitions.partitions:
            key = p.pkey & 0x7FFF if p.pkey is not None else None
            sl = sl_of.get(key, p.sl) if key is not None and key != 0x7FFF else p.sl
            parts.append(Partition(p.name, p.pkey, p.isolation, sl, p.members))
        return PartitionConfig.build(parts, partitions.global_isolation)


def report_frame(report: Dict[str, Any]) -> "pandas.DataFrame":
    """A validator report as a DataFrame, one row per partition.

    >>> report_frame({"partitions": [{"name": "a", "pkey": 1, "isolation": "phy", "members": 2,
    ...                               "vl": 0, "links": 4, "shared": [], "ok": True}]})["shared_links"].tolist()
    [0]
    """
    import pandas

    rows = [
        {
            "partition": p["name"], "pkey": p["pkey"], "isolation": p["isolation"], "members": p["members"],
            "vl": p["vl"], "links": p["links"], "shared_links": len(p["shared"]), "ok": p["ok"],
        }
        for p in report.get("partitions", [])
    ]
    cols = ["partition", "pkey", "isolation", "members", "vl", "links", "shared_links", "ok"]
    return pandas.DataFrame(rows, columns=cols)


@checked_ints
def route(
    fabric: "Fabric",
    engine: str = "pftree-ext",
    partitions: Optional[PartitionConfig] = None,
    *,
    isolation: Optional[str] = None,
    weights: Optional[Sequence[Tuple[int, float]]] = None,
    max_vls: Optional[int] = None,
    variant: Union[str, Sequence[str]] = "corrected",
    roots: Optional[Sequence[int]] = None,
) -> PartitionedRouting:
    """Routes ``fabric`` with ``pftree``, ``pftree-ext`` or ``pftree-wt``.

    ``isolation`` (``strict``/``best-effort``) overrides the file's global
    policy; ``weights`` are (port GUID, weight) for pftree-wt; ``max_vls`` the
    operational data VLs (default 8); ``variant`` one or more of
    :data:`VARIANT_SWITCHES` (``literal`` = the printed pseudocode).
    A strict policy that cannot be met raises ``RoutingError``.

    >>> from ibcloud import Fabric
    >>> from ibcloud.exceptions import RoutingError
    >>> f = Fabric.generate("XGFT(2;3,2;1,2)")
    >>> leaves = leaf_nodes(f)
    >>> parts = [Partition(f"p{k}", k + 1, "phy", None, [(hex(leaf[k][1]), "full") for leaf in leaves]) for k in range(3)]
    >>> try:
    ...     route(f, "pftree-ext", PartitionConfig.build(parts), isolation="strict")
    ... except RoutingError as e:
    ...     print(str(e)[:38])
    pftree-ext: strict isolation cannot be
    >>> r = route(f, "pftree-ext", PartitionConfig.build(parts), isolation="best-effort")
    >>> r.warnings[0].startswith("best-effort")
    True
    """
    switches = [variant] if isinstance(variant, str) else list(variant)
    tables, sls, seconds, report, warnings, vls, label = _native.route_pftree(
        fabric._native,
        engine,
        partitions._native if partitions is not None else None,
        isolation,
        [(int(g), float(w)) for g, w in weights] if weights is not None else None,
        max_vls,
        switches,
        list(roots) if roots is not None else None,
    )
    return PartitionedRouting(
        ForwardingTables._from_native(tables), sls, engine, label, seconds, json.loads(report), list(warnings), list(vls)
    )


@checked_ints
def check(
    tables: ForwardingTables,
    partitions: PartitionConfig,
    *,
    isolation: Optional[str] = None,
    vls: Optional[Sequence[int]] = None,
) -> Tuple[Dict[str, Any], List[str]]:
    """Validates any tables against a configuration: per partition the links
    it uses and shares and its VL; a ``phy`` partition must share no link, a
    ``vlane`` one no link with a partition on its VL. Returns (report,
    warnings); ``report["violations"]`` lists what failed.

    >>> from ibcloud import Fabric
    >>> from ibcloud.routing import route as plain_route
    >>> f = Fabric.generate("XGFT(2;4,2;1,2)")
    >>> leaves = leaf_nodes(f)
    >>> conf = PartitionConfig.build([
    ...     Partition("a", 1, "phy", None, [(hex(l[0][1]), "full") for l in leaves]),
    ...     Partition("b", 2, None, None, [(hex(g), "full") for l in leaves for _, g in l[1:]])])
    >>> report, _ = check(plain_route(f, "ftree").tables, conf)
    >>> len(report["violations"])
    1
    """
    report, warnings = _native.check_partitions(
        tables._native, partitions._native, isolation, list(vls) if vls is not None else None
    )
    return json.loads(report), list(warnings)


@checked_ints
def write_qos(pkey_sls: Sequence[Tuple[int, int]], directory: PathLike, max_vls: int = 8) -> Tuple[Path, Path]:
    """Writes ``opensm-qos.conf`` (``qos TRUE``, SL2VL, VL arbitration: pass
    it to OpenSM with ``--config`` or append it to opensm.conf) and
    ``qos-policy.conf`` (SL per P_Key) into ``directory``.

    >>> import tempfile
    >>> a, b = write_qos([(1, 1)], tempfile.mkdtemp(), max_vls=2)
    >>> "qos_sl2vl 0,1,0" in a.read_text(), "any, pkey 0x0001 : 1" in b.read_text()
    (True, True)
    """
    conf, policy = _native.qos_files(list(pkey_sls), max_vls)
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    from ibcloud.safeio import atomic_write

    atomic_write(d / "opensm-qos.conf", conf)
    atomic_write(d / "qos-policy.conf", policy)
    return d / "opensm-qos.conf", d / "qos-policy.conf"


def write_ibdmchk_files(routing: PartitionedRouting, psl: PathLike, sl2vl: PathLike) -> bool:
    """Writes ibdmchk's path-SL file (``-c``) and an ``opensm-sl2vl.dump``
    (``-d``, identity SL2VL) for a routing; False (nothing written) when
    every path is on SL 0.

    >>> import tempfile, pathlib
    >>> from ibcloud import Fabric
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> write_ibdmchk_files(route(Fabric.generate("4-ary-2"), "pftree"), d / "psl", d / "sl2vl")
    False
    """
    if routing.path_sls is None:
        return False
    _native.write_ibdmchk_sl_files(routing.tables._native, routing.path_sls, os.fspath(psl), os.fspath(sl2vl))
    return True


def leaf_nodes(fabric: "Fabric") -> List[List[Tuple[int, int]]]:
    """Compute nodes per leaf as ftree sees the tree: [[(LID, port GUID)]].

    >>> from ibcloud import Fabric
    >>> [len(l) for l in leaf_nodes(Fabric.generate("XGFT(2;8,4;1,4)"))]
    [8, 8, 8, 8]
    """
    return [list(leaf) for leaf in _native.leaf_nodes(fabric._native)]


@checked_ints
def learn_weights(
    bandwidth: Sequence[Tuple[int, float]], a: float = 1.0, b: float = 100.0, literal: bool = False
) -> List[Tuple[int, float]]:
    """Node weights in [a, b] from receive bandwidths (seed 002 Eq. 1,
    corrected: ``a + (x - min B)(b - a)/(max B - min B)``; ``literal`` uses
    the printed ``(x - a)…``); equal bandwidths give every node ``a``.

    >>> learn_weights([(1, 0.0), (2, 5.0), (3, 10.0)])
    [(1, 1.0), (2, 50.5), (3, 100.0)]
    >>> learn_weights([(1, 3.0), (2, 3.0)])
    [(1, 1.0), (2, 1.0)]
    """
    return [(int(g), float(w)) for g, w in _native.learn_weights(list(bandwidth), a, b, literal)]


def read_weights(path: PathLike) -> List[Tuple[int, float]]:
    """Reads a weights file: ``PORT_GUID WEIGHT`` per line, ``#`` comments.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "w"
    >>> _ = p.write_text("# receivers\\n0x10 100\\n0x12 1\\n")
    >>> read_weights(p)
    [(16, 100.0), (18, 1.0)]
    """
    return [(int(g), float(w)) for g, w in _native.read_weights(os.fspath(path))]


@checked_ints
def victim_delays(
    tables: ForwardingTables,
    victims: Sequence[int],
    victim_pattern: str,
    noise: Sequence[int],
    noise_pattern: str = "null",
    *,
    runs: int = 100,
    seed: int = 1,
) -> List[float]:
    """dep_max_delay of ``victim_pattern`` on ``victims`` (LIDs) while
    ``noise_pattern`` runs on ``noise`` (all its levels at once; ``shift`` is
    ORCS's all-to-all), one value per run.

    >>> from ibcloud import Fabric
    >>> f = Fabric.generate("XGFT(2;8,4;1,4)")
    >>> leaves = leaf_nodes(f)
    >>> v = [lid for leaf in leaves for lid, _ in leaf[:2]]
    >>> o = [lid for leaf in leaves for lid, _ in leaf[2:]]
    >>> conf = PartitionConfig.build([
    ...     Partition("v", 1, "phy", None, [(hex(g), "full") for leaf in leaves for _, g in leaf[:2]]),
    ...     Partition("o", 2, None, None, [(hex(g), "full") for leaf in leaves for _, g in leaf[2:]])])
    >>> t = route(f, "pftree-ext", conf).tables
    >>> set(victim_delays(t, v, "gather", o, "shift", runs=5))
    {7.0}
    """
    delays, _ = _native.victim_delays(tables._native, list(victims), victim_pattern, list(noise), noise_pattern, runs, seed)
    return list(delays)


@checked_ints
def partition_delays(
    fabric: "Fabric",
    tables: ForwardingTables,
    partitions: PartitionConfig,
    pattern: str = "bisect",
    noise: str = "shift",
    *,
    runs: int = 20,
    seed: int = 1,
) -> "pandas.DataFrame":
    """dep_max_delay per partition: each routed partition in turn runs
    ``pattern`` while all other partitions' members run ``noise`` together.
    One row per partition: ``partition``, ``members``, ``min``, ``avg``, ``max``.

    >>> from ibcloud import Fabric
    >>> f = Fabric.generate("XGFT(2;8,4;1,4)")
    >>> leaves = leaf_nodes(f)
    >>> conf = PartitionConfig.build([
    ...     Partition("v", 1, "phy", None, [(hex(g), "full") for leaf in leaves for _, g in leaf[:2]]),
    ...     Partition("o", 2, None, None, [(hex(g), "full") for leaf in leaves for _, g in leaf[2:]])])
    >>> df = partition_delays(f, route(f, "pftree-ext", conf).tables, conf, "gather", runs=3)
    >>> df[["partition", "members", "max"]].values.tolist()
    [['v', 8, 7.0], ['o', 24, 23.0]]
    """
    import pandas

    members, _ = partitions.resolve(fabric)
    rows = []
    names = list(dict.fromkeys(members["partition"]))
    for name in names:
        mine = members[members["partition"] == name]["lid"].tolist()
        others = sorted(set(members[members["partition"] != name]["lid"]) - set(mine))
        if len(mine) < 2:
            continue
        d = victim_delays(tables, mine, pattern, others, noise if len(others) > 1 else "null", runs=runs, seed=seed)
        rows.append({"partition": name, "members": len(mine), "min": min(d), "avg": sum(d) / len(d), "max": max(d)})
    return pandas.DataFrame(rows, columns=["partition", "members", "min", "avg", "max"])


@checked_ints
def contention(tables: ForwardingTables, endpoints: Sequence[int], receivers: Sequence[int]) -> Dict[str, int]:
    """Receiver contention (seed 002 §7): per direction, Σ (R − 1) over
    switch-to-switch links crossed by routes to R ≥ 2 receivers, and the
    number of such links. ``endpoints`` are LIDs, ``receivers`` positions in it.

    >>> from ibcloud import Fabric
    >>> from ibcloud.routing import route as plain_route
    >>> f = Fabric.generate("XGFT(2;4,2;1,2)")
    >>> lids = [lid for leaf in leaf_nodes(f) for lid, _ in leaf]
    >>> contention(plain_route(f, "ftree").tables, lids, [0, 2])["down"]  # both down R1 -> L1
    1
    >>> contention(plain_route(f, "ftree").tables, lids, [0, 1])["down"]
    0
    """
    (uc, ul), (dc, dl) = _native.contention(tables._native, list(endpoints), list(receivers))
    return {"up": uc, "up_links": ul, "down": dc, "down_links": dl}


@checked_ints
def interference(
    tables: ForwardingTables, endpoints: Sequence[int], labels: Sequence[int], flows: str = "intra"
) -> Dict[str, int]:
    """Inter-partition interference, three readings (switch-to-switch links,
    both directions summed): ``flow_pairs`` (Σ flows_p × flows_q per link),
    ``flows_on_shared`` (flows on links used by ≥ 2 partitions) and
    ``shared_links``. ``labels[i]`` is endpoint i's partition (-1: none).
    ``flows``: ``intra`` (pairs within a partition), ``all-src`` / ``all-dst``
    (every pair, stale routes too, under its source's / destination's
    partition).

    >>> from ibcloud import Fabric
    >>> from ibcloud.routing import route as plain_route
    >>> f = Fabric.generate("XGFT(2;4,2;1,2)")
    >>> lids = [lid for leaf in leaf_nodes(f) for lid, _ in leaf]
    >>> interference(plain_route(f, "ftree").tables, lids, [i % 2 for i in range(len(lids))])["shared_links"]
    0
    """
    fp, fs, sl = _native.interference(tables._native, list(endpoints), list(labels), flows)
    return {"flow_pairs": fp, "flows_on_shared": fs, "shared_links": sl}
