"""Static congestion analysis of forwarding tables, as ORCS does it.

A communication pattern (``bisect``, ``shift``, ``bruck``, ...) runs over a set
of endpoints in *levels*: the flows of a level share the links at the same
time, levels follow one another and never interfere. A link's congestion in
a level is the number (or weight) of flows crossing it; a flow's congestion
is the largest on its path (an unshared route counts 1, as in ORCS's code).
Per run this gives ORCS's metrics: ``acc_band`` (mean of 1/congestion, the
fraction of peak bandwidth; over random bisections the *effective bisection
bandwidth*), ``max_cong``, ``sum_max_cong`` and ``dep_max_delay``. Every run
draws a fresh endpoint order from its own random stream, so a seed gives the
same numbers on any number of threads. docs/analysis.md has the definitions.

>>> from ibcloud import Fabric, route
>>> r = route(Fabric.generate("ft324"), "ftree")
>>> a = analyze(r, "bisect", runs=100, seed=1)
>>> len(a.runs), 0.5 < a.ebb()["mean"] <= 1.0
(100, True)
"""

from __future__ import annotations

import csv
import io
import os
import re
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ibcloud import _native
from ibcloud.exceptions import AnalysisError, ParseError
from ibcloud.routing import Routing
from ibcloud.safeio import checked_ints
from ibcloud.tables import ForwardingTables

if TYPE_CHECKING:  # pragma: no cover
    import pandas

__all__ = ["Analysis", "analyze", "patterns", "read_node_order", "read_traffic_matrix", "ftree_ca_order",
           "write_ftree_ca_order", "PERCENTILES"]

#: The percentiles :meth:`Analysis.ebb` reports.
PERCENTILES = (1, 5, 25, 50, 75, 95, 99)

PathLike = Union[str, "os.PathLike[str]"]


def patterns() -> List[str]:
    """Names of the built-in patterns (``neighbor`` takes a count as its
    argument, ``recdbl`` the argument ``fold``).

    >>> "bisect" in patterns() and "shift" in patterns()
    True
    """
    return list(_native.pattern_names())


def _stats(values: Sequence[float]) -> Dict[str, float]:
    import numpy as np

    v = np.asarray([x for x in values if x == x], dtype=float)
    if len(v) == 0:
        return {"count": 0}
    out = {"count": int(len(v)), "mean": float(v.mean()), "std": float(v.std()), "min": float(v.min()),
           "max": float(v.max())}
    for p in PERCENTILES:
        out[f"p{p}"] = float(np.percentile(v, p))
    return out


class Analysis:
    """The result of :func:`analyze`.

    ``runs`` has one row per run (``run, levels, flows, broken, acc_band,
    max_cong, sum_max_cong, dep_max_delay``), ``hist_max_cong`` ORCS's
    histogram over all routes (``max_cong, routes, share``), ``links`` every
    directed link some flow crossed (``total`` over all runs, ``mean`` per run,
    ``max`` in any level), ``broken`` the first flows whose path breaks.

    >>> from ibcloud import Fabric, route
    >>> a = analyze(route(Fabric.generate("4-ary-2-full"), "ftree"), "gather", shuffle=False)
    >>> a.runs.loc[0, "dep_max_delay"], a.hist_max_cong.iloc[0]["max_cong"]
    (np.float64(31.0), np.float64(31.0))
    """

    def __init__(self, raw: Dict[str, Any], tables: Optional[ForwardingTables] = None) -> None:
        import pandas as pd

        self.raw = raw
        self._tables = tables
        self._efi: Optional[Dict[str, Any]] = None
        self.pattern: str = raw["pattern"]
        self.seed: int = raw["seed"]
        #: LIDs of the endpoints in position order (ranks map into these per run).
        self.endpoints: List[int] = list(raw["endpoint_lids"])
        self.precomputed_paths: bool = raw["precomputed_paths"]
        self.broken_flows: int = raw["broken_flows"]
        #: Node-order entries that named no endpoint (skipped, as ORCS does).
        self.order_skipped: int = raw["order_skipped"]
        self.fixed_ranks: int = raw["fixed_ranks"]
        self.runs = pd.DataFrame(raw["runs"])
        hist = pd.DataFrame(raw["hist_max_cong"], columns=["max_cong", "routes"])
        hist["share"] = hist["routes"] / max(int(hist["routes"].sum()), 1)
        self.hist_max_cong = hist
        links = pd.DataFrame(raw["links"], columns=["guid", "port", "node", "remote_guid", "remote_port",
                                                     "remote_node", "switch_to_switch", "total", "max"])
        links["mean"] = links["total"] / max(len(self.runs), 1)
        self.links = links
        self.broken = pd.DataFrame(raw["broken"], columns=["run", "level", "src_lid", "dst_lid", "failure"])

    def ebb(self) -> Dict[str, float]:
        """``acc_band`` over runs: count, mean, std, min, max and percentiles.
        With the bisect pattern this is the effective bisection bandwidth as a
        fraction of peak.

        >>> from ibcloud import Fabric, route
        >>> a = analyze(route(Fabric.generate("ft324"), "ftree"), "bisect", runs=10, seed=2)
        >>> sorted(a.ebb())[:3]
        ['count', 'max', 'mean']
        """
        return _stats(self.runs["acc_band"].tolist())

    def stats(self, metric: str) -> Dict[str, float]:
        """Statistics of any per-run metric (a column of :attr:`runs`).

        >>> from ibcloud import Fabric, route
        >>> a = analyze(route(Fabric.generate("ft324"), "ftree"), "bisect", runs=5)
        >>> a.stats("max_cong")["count"]
        5
        """
        if metric not in self.runs.columns:
            raise AnalysisError(f"unknown metric '{metric}' (known: {', '.join(self.runs.columns)})")
        return _stats(self.runs[metric].tolist())

    def hist_acc_band(self, width: float = 0.05) -> "pandas.DataFrame":
        """ORCS's hist_acc_band: runs per ``acc_band`` bin of ``width`` over
        [0, 1] (the last bin includes 1.0).

        >>> from ibcloud import Fabric, route
        >>> a = analyze(route(Fabric.generate("ft324"), "ftree"), "bisect", runs=20)
        >>> int(a.hist_acc_band()["runs"].sum())
        20
        """
        import numpy as np
        import pandas as pd

        bins = max(int(round(1.0 / width)), 1)
        v = self.runs["acc_band"].dropna().to_numpy()
        idx = np.minimum(np.floor(v / width).astype(int), bins - 1)
        counts = np.bincount(idx, minlength=bins)[:bins]
        lo = np.arange(bins) * width
        return pd.DataFrame({"low": lo, "high": lo + width, "runs": counts})

    def hist_max_cong_bandwidth(self) -> float:
        """ORCS's "BW" line of hist_max_cong: mean of 1/congestion over every
        route of every run.

        >>> from ibcloud import Fabric, route
        >>> a = analyze(route(Fabric.generate("4-ary-2-full"), "ftree"), "gather")
        >>> round(a.hist_max_cong_bandwidth(), 4)
        0.0323
        """
        h = self.hist_max_cong
        total = h["routes"].sum()
        return float((h["routes"] / h["max_cong"]).sum() / total) if total else float("nan")

    def forwarding_index(self) -> Dict[str, Any]:
        """The edge forwarding index of the tables: CA-to-CA routes per
        directed switch-to-switch link over *all* CA pairs (``max`` is the
        index; ``mean``, ``min``, ``busiest``), independent of the pattern.

        >>> from ibcloud import Fabric, route
        >>> a = analyze(route(Fabric.generate("ft324"), "ftree"), "bisect")
        >>> a.forwarding_index()["max"]  # 18 sources x 17 destinations per up link
        306
        """
        if self._efi is None:
            if self._tables is None:
                return {}
            from ibcloud.verify import verify

            self._efi = verify(self._tables, credit_loops=False).data["link_routes"]
        return dict(self._efi)

    def summary(self) -> Dict[str, Any]:
        """Everything in plain types (what ``ibcloud analyze --json`` prints).

        >>> from ibcloud import Fabric, route
        >>> s = analyze(route(Fabric.generate("ft324"), "ftree"), "shift", shuffle=False).summary()
        >>> s["pattern"], s["runs"], s["levels"]
        ('shift', 1, 323)
        """
        busiest = self.links.sort_values(["max", "total"], ascending=False).head(10)
        return {
            "pattern": self.pattern,
            "seed": self.seed,
            "endpoints": len(self.endpoints),
            "runs": int(len(self.runs)),
            "levels": int(self.runs["levels"].max()) if len(self.runs) else 0,
            "flows": int(self.runs["flows"].sum()),
            "broken_flows": int(self.broken_flows),
            "acc_band": self.ebb(),
            "max_cong": self.stats("max_cong"),
            "sum_max_cong": self.stats("sum_max_cong"),
            "dep_max_delay": self.stats("dep_max_delay"),
            "hist_max_cong": [[float(c), int(k)] for c, k in zip(self.hist_max_cong["max_cong"],
                                                                  self.hist_max_cong["routes"])],
            "hist_max_cong_bandwidth": self.hist_max_cong_bandwidth(),
            "hist_acc_band": self.hist_acc_band()["runs"].astype(int).tolist(),
            "links_used": int(len(self.links)),
            "link_load_max": float(self.links["max"].max()) if len(self.links) else 0.0,
            "link_load_mean": float(self.links["mean"].mean()) if len(self.links) else 0.0,
            "forwarding_index": self.forwarding_index(),
            "busiest_links": busiest[["node", "port", "remote_node", "remote_port", "max", "mean"]].to_dict("records"),
            "broken": self.broken.to_dict("records"),
            "order_skipped": self.order_skipped,
            "precomputed_paths": self.precomputed_paths,
        }

    def plot(self, path: PathLike, title: Optional[str] = None) -> None:
        """Writes a PNG: the acc_band histogram over runs and the max-congestion
        histogram over routes, side by side.

        >>> import tempfile, os
        >>> from ibcloud import Fabric, route
        >>> a = analyze(route(Fabric.generate("ft324"), "ftree"), "bisect", runs=50)
        >>> with tempfile.TemporaryDirectory() as d:
        ...     a.plot(os.path.join(d, "ebb.png"))
        ...     os.path.getsize(os.path.join(d, "ebb.png")) > 1000
        True
        """
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
        h = self.hist_acc_band()
        left.bar(h["low"], h["runs"], width=0.05, align="edge", color="#3b75af", edgecolor="white")
        e = self.ebb()
        if e.get("count"):
            left.axvline(e["mean"], color="#c44e52", linestyle="--", label=f"mean {e['mean']:.3f}")
            left.legend(loc="upper left")
        left.set_xlim(0, 1)
        left.set_xlabel("acc_band (fraction of peak bandwidth)")
        left.set_ylabel("runs")
        left.set_title(f"{self.pattern}: hist_acc_band over {len(self.runs)} runs")
        m = self.hist_max_cong
        right.bar([f"{c:g}" for c in m["max_cong"]], m["share"] * 100, color="#55a868")
        right.set_xlabel("max congestion on the route")
        right.set_ylabel("% of routes")
        right.set_title("hist_max_cong")
        if title:
            fig.suptitle(title)
        fig.tight_layout()
        from ibcloud.safeio import atomic_path

        with atomic_path(path, keep_suffix=True) as tmp:
            fig.savefig(tmp, dpi=110)
        plt.close(fig)

    def __repr__(self) -> str:
        e = self.ebb()
        mean = f"{e['mean']:.4f}" if e.get("count") else "n/a"
        return (f"Analysis(pattern={self.pattern!r}, endpoints={len(self.endpoints)}, runs={len(self.runs)}, "
                f"acc_band_mean={mean}, broken_flows={self.broken_flows})")


def read_node_order(path: PathLike) -> List[int]:
    """Reads a node-order file: ORCS's GUID list or OpenSM's
    ``opensm-ftree-ca-order.dump``. Values up to 0xFFFF are LIDs (0xFFFF is a
    DUMMY slot), larger ones GUIDs.

    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "order")
    ...     _ = open(p, "w").write("0x0003\\tH1\\n0xFFFF\\tDUMMY\\n0002c90300000100\\n")
    ...     [hex(v) for v in read_node_order(p)]
    ['0x3', '0xffff', '0x2c90300000100']
    """
    return list(_native.read_node_order(os.fspath(path)))


def ftree_ca_order(routing_or_fabric: Any) -> List[Optional[int]]:
    """ftree's compute-node order (LIDs leaf by leaf, None for a DUMMY slot),
    as OpenSM writes it to ``opensm-ftree-ca-order.dump``.

    >>> from ibcloud import Fabric
    >>> order = ftree_ca_order(Fabric.generate("4-ary-2-full"))
    >>> len(order), order.count(None)
    (32, 0)
    """
    fabric = getattr(routing_or_fabric, "_native", routing_or_fabric)
    return list(_native.ftree_ca_order(fabric))


def write_ftree_ca_order(fabric: Any, path: PathLike) -> None:
    """Writes ftree's compute-node order in OpenSM's
    ``opensm-ftree-ca-order.dump`` layout.

    >>> import tempfile, os
    >>> from ibcloud import Fabric
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_ftree_ca_order(Fabric.generate("4-ary-2-full"), os.path.join(d, "o.dump"))
    ...     len(read_node_order(os.path.join(d, "o.dump")))
    32
    """
    _native.write_ftree_ca_order(fabric._native, os.fspath(path))


_INT = re.compile(r"^(0[xX][0-9a-fA-F]+|[0-9]+)$")


def read_traffic_matrix(path: PathLike) -> Tuple[List[Tuple[int, int, float, int]], List[int]]:
    """Reads a traffic matrix CSV with a header naming the columns ``src``,
    ``dst`` (LIDs, decimal or 0x-hex), ``weight`` (optional, default 1, a
    positive number) and ``level`` (optional, default 0: rows of one level run
    together, levels one after another). Returns the rows and their line
    numbers; errors name the file and line.

    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "m.csv")
    ...     _ = open(p, "w").write("src,dst,weight\\n1,0x2,2.5\\n")
    ...     read_traffic_matrix(p)
    ([(1, 2, 2.5, 0)], [2])
    """
    from ibcloud.safeio import read_text

    name = os.fspath(path)
    text = read_text(name)
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise ParseError(f"{name}:{line}: NUL byte in a CSV file")
    if not text.strip():
        raise ParseError(f"{name}:1: empty traffic matrix, expected a header src,dst[,weight][,level]")
    csv.field_size_limit(1 << 20)
    try:
        return _matrix_rows(name, csv.reader(io.StringIO(text, newline="")))
    except csv.Error as err:
        raise ParseError(f"{name}: not a CSV traffic matrix: {err}") from None


def _matrix_rows(name: str, reader: Any) -> Tuple[List[Tuple[int, int, float, int]], List[int]]:
    from ibcloud.safeio import excerpt

    rows: List[Tuple[int, int, float, int]] = []
    lines: List[int] = []
    header: Optional[List[str]] = None
    for record in reader:
        line = reader.line_num
        if not record or all(not c.strip() for c in record) or record[0].lstrip().startswith("#"):
            continue
        if header is None:
            header = [c.strip().lower() for c in record]
            unknown = [c for c in header if c not in ("src", "dst", "weight", "level")]
            if unknown or "src" not in header or "dst" not in header:
                raise ParseError(f"{name}:{line}: the header must name src, dst and optionally weight, level "
                                 f"(found {excerpt(', '.join(header))})")
            continue
        if len(record) != len(header):
            raise ParseError(f"{name}:{line}: expected {len(header)} fields, found {len(record)}")
        cell = dict(zip(header, (c.strip() for c in record)))

        def lid(key: str) -> int:
            v = cell[key]
            if not _INT.match(v):
                raise ParseError(f"{name}:{line}: {key} {excerpt(v)} is not a LID")
            n = int(v, 0) if v.lower().startswith("0x") else int(v)
            if not 1 <= n <= 0xBFFF:
                raise ParseError(f"{name}:{line}: {key} {excerpt(v)} is not a unicast LID (1-0xbfff)")
            return n

        try:
            weight = float(cell.get("weight", "1") or "1")
        except ValueError:
            raise ParseError(f"{name}:{line}: weight {excerpt(cell['weight'])} is not a number") from None
        if not (weight > 0 and weight != float("inf")):
            raise ParseError(f"{name}:{line}: weight {excerpt(cell.get('weight', ''))} is not a positive finite number")
        level_text = cell.get("level", "0") or "0"
        if not (level_text.isascii() and level_text.isdigit() and len(level_text) < 10):
            raise ParseError(f"{name}:{line}: level {excerpt(level_text)} is not a non-negative integer")
        rows.append((lid("src"), lid("dst"), weight, int(level_text)))
        lines.append(line)
    if header is None:
        raise ParseError(f"{name}:1: empty traffic matrix (expected a header src,dst[,weight][,level])")
    return rows, lines


def _tables_of(routing: Union[Routing, ForwardingTables]) -> ForwardingTables:
    if isinstance(routing, Routing):
        return routing.tables
    if isinstance(routing, ForwardingTables):
        return routing
    raise TypeError(f"expected a Routing or ForwardingTables, got {type(routing).__name__}")


@checked_ints
def analyze(
    routing: Union[Routing, ForwardingTables],
    pattern: str = "bisect",
    *,
    runs: int = 1,
    seed: int = 0,
    pattern_arg: Optional[str] = None,
    lids: Optional[Sequence[int]] = None,
    guids: Optional[Sequence[int]] = None,
    count: Optional[int] = None,
    subset: str = "rand",
    order: Union[None, str, PathLike, Sequence[int]] = None,
    shuffle: bool = True,
    matrix: Union[None, PathLike, Sequence[Tuple[int, int, float, int]]] = None,
    threads: Optional[int] = None,
    paths: str = "auto",
    progress: Union[bool, Callable[[int, int], Any]] = False,
) -> Analysis:
    """Runs ``pattern`` over the endpoints through ``routing``'s tables.

    Endpoints: every CA port with a LID, or ``lids`` / ``guids`` (port or
    node GUIDs, e.g. a partition's members); ``count`` picks that many of
    them by ``subset`` (``rand``, ``guid_asc``, ``guid_desc``, ``linear_bfs``).
    Every run shuffles them (``shuffle=False``: ranks in the given order);
    ``order`` puts endpoints first in a fixed order: a node-order file, a
    list of LIDs/GUIDs, or ``"ftree"`` for ftree's compute-node order.
    ``matrix`` (a CSV path or ``(src_lid, dst_lid, weight, level)`` rows)
    replaces the pattern with a weighted traffic matrix. ``paths``: ``auto``
    (precompute when it fits in memory), ``table`` or ``walk``.
    ``progress``: True for a progress bar, or a callable ``(done, total)``.

    Broken paths (unset entries, loops, tables that do not match the fabric)
    are counted per run and listed in ``broken``; the metrics are over the
    flows that arrive.

    >>> from ibcloud import Fabric, route
    >>> r = route(Fabric.generate("ft324"), "ftree")
    >>> analyze(r, "shift", order="ftree", shuffle=False).runs.loc[0, "acc_band"]
    np.float64(1.0)
    >>> analyze(r, "bisect", lids=[1, 2, 3])
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.AnalysisError: pattern 'bisect' needs an even number of endpoints, but there are 3 endpoints (pick 2 with --count)
    """
    tables = _tables_of(routing)
    rows = None
    lines: List[int] = []
    source = None
    if matrix is not None:
        if isinstance(matrix, (str, os.PathLike)):
            source = os.fspath(matrix)
            rows, lines = read_traffic_matrix(source)
        else:
            rows = [(int(s), int(d), float(w), int(lv)) for s, d, w, lv in matrix]
    order_values: Optional[List[int]] = None
    order_ftree = False
    if isinstance(order, str) and order == "ftree":
        order_ftree = True
    elif isinstance(order, (str, os.PathLike)):
        order_values = read_node_order(order)
    elif order is not None:
        order_values = [int(v) for v in order]
    callback = progress if callable(progress) else None
    bar = None
    if progress is True:
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        bar = Progress(TextColumn(f"analyzing {pattern if matrix is None else 'matrix'}"), BarColumn(),
                       TextColumn("{task.completed}/{task.total} jobs"), TimeRemainingColumn(), transient=True)
        task = bar.add_task("analyze", total=None)
        bar.start()

        def callback(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

    try:
        raw = _native.analyze(
            tables._native, pattern, pattern_arg, runs, seed, shuffle,
            list(lids) if lids is not None else None, list(guids) if guids is not None else None,
            rows, subset, count, order_values, order_ftree, threads, paths, callback,
        )
    except AnalysisError as err:
        m = re.match(r"traffic matrix row (\d+): (.*)", str(err))
        if m and source is not None:
            raise AnalysisError(f"{source}:{lines[int(m.group(1))]}: {m.group(2)}") from None
        m = re.match(r"item (\d+): (.*)", str(err))
        if m and source is not None:
            raise AnalysisError(f"{source}:{lines[int(m.group(1))]}: {m.group(2)}") from None
        raise
    finally:
        if bar is not None:
            bar.stop()
    return Analysis(raw, tables)
