"""Fast fat-tree reconfiguration: fabric events and the methods of Papers
III and IV (docs/reconfig.md).

* :func:`reconfigure` applies an event — ``fail-link``, ``restore-link``,
  ``fail-switch``, ``restore-switch``, ``shutdown``, ``boot`` or none (a
  performance-driven change) — and re-routes with ``full`` (ftree),
  ``subtree`` (Paper III: only the smallest sub-tree holding some nodes),
  ``slimupdate`` (Paper IV: keep existing port choices) or ``metabase``
  (Paper IV: stored leaf-to-leaf paths, phase II only when the switches did
  not change); it reports changed entries, blocks (SMPs), paths, time and the
  verification verdict.
* :func:`noftree` routes with Paper III's node order; orders come from
  :func:`read_order` (GUID/LID lists, OpenSM's ftree CA-order dump) or
  :func:`order_by_traffic` (nodes ranked by the traffic a pattern sends them).
* :func:`tree_counts` gives Paper IV's spanning-tree counts.

>>> from ibcloud import Fabric, route
>>> f = Fabric.generate("16-ary-2")
>>> old = route(f, "ftree").tables
>>> r = reconfigure(f, old, "shutdown", "hca-00001", method="slimupdate")
>>> r.ok, r.changes["changed_entries"] < 100
(True, True)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ibcloud import _native
from ibcloud.fabric import Fabric
from ibcloud.routing import Routing
from ibcloud.safeio import checked_ints
from ibcloud.tables import ForwardingTables

__all__ = [
    "EVENTS",
    "METHODS",
    "Reconfiguration",
    "noftree",
    "order_by_traffic",
    "read_order",
    "received_traffic",
    "reconfigure",
    "tree_counts",
]

#: Event kinds :func:`reconfigure` knows.
EVENTS = ("fail-link", "restore-link", "fail-switch", "restore-switch", "shutdown", "boot")
#: Re-routing methods.
METHODS = ("full", "subtree", "subtree-grow", "slimupdate", "metabase")

PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class Reconfiguration:
    """The result of :func:`reconfigure`: the fabric after the event, the
    new tables and the report (a dict, as ``ibcloud event --json`` prints it).

    >>> from ibcloud import Fabric, route
    >>> f = Fabric.generate("8-ary-2")
    >>> r = reconfigure(f, route(f, "ftree").tables, method="full")
    >>> r.event, r.changes["changed_entries"], r.ok
    ('reorder', 0, True)
    """

    #: The fabric after the event (failed links and shut-down nodes have no cable).
    fabric: Fabric
    #: The new forwarding tables.
    tables: ForwardingTables
    #: Everything measured: changes, seconds, phases, unreachable pairs, check.
    report: Dict[str, Any]

    @property
    def event(self) -> str:
        """The event kind (``reorder`` for none).

        >>> Reconfiguration(None, None, {"event": "boot"}).event  # type: ignore[arg-type]
        'boot'
        """
        return str(self.report["event"])

    @property
    def changes(self) -> Dict[str, Any]:
        """Changed entries, destinations, blocks (SMPs), switches touched, paths.

        >>> Reconfiguration(None, None, {"changes": {"changed_entries": 3}}).changes  # type: ignore[arg-type]
        {'changed_entries': 3}
        """
        return dict(self.report["changes"])

    @property
    def ok(self) -> bool:
        """No pair disconnected and, when verified, every pair reachable, no
        credit loop and no down→up turn in the union of old and new tables.

        >>> Reconfiguration(None, None, {"unreachable_pairs": 0, "check": None}).ok  # type: ignore[arg-type]
        True
        """
        check = self.report.get("check")
        verified = check is None or (
            check["pairs"] == check["reachable"] and check["credit_loop_free"] and not check["updown_violations"]
        )
        return self.report.get("unreachable_pairs", 0) == 0 and verified


@checked_ints
def reconfigure(
    fabric: Fabric,
    tables: ForwardingTables,
    event: Optional[str] = None,
    *target: str,
    method: str = "slimupdate",
    before: Sequence[Tuple[str, Sequence[str]]] = (),
    nodes: Optional[Sequence[str]] = None,
    order: Optional[Sequence[int]] = None,
    verify: bool = True,
    paths: bool = False,
    metabase: Optional[PathLike] = None,
    metabase_paths: Optional[int] = None,
    disjoint: bool = False,
) -> Reconfiguration:
    """Applies ``event`` (with its ``target``: ``NODE PORT`` or ``NODE:PORT``
    for links, ``NODE`` otherwise; a node is a GUID, ``lid:N`` or a unique
    description) to ``fabric`` and re-routes with ``method``.

    ``tables`` belong to ``fabric`` after the ``before`` events (pairs of
    kind and target list). ``nodes`` choose the sub-tree (default: the node
    or leaf of the event); ``order`` (CA LIDs) makes full and subtree use
    NoFTree and metabase Algorithm 5; ``metabase`` is a file to load the
    metabase from and save it to. ``paths`` also counts changed
    source–destination paths.

    >>> from ibcloud import Fabric, route
    >>> f = Fabric.generate("4-ary-3-full")
    >>> old = route(f, "ftree").tables
    >>> r = reconfigure(f, old, "fail-link", "sw-L1-0001:5", method="slimupdate", paths=True)
    >>> r.ok, r.changes["changed_entries"] > 0
    (True, True)
    >>> reconfigure(f, old, "fail-link", "no-such-switch:1")
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.ReconfigError: unknown node 'no-such-switch' (give a node GUID, a port GUID, 'lid:N' or a unique node description)
    """
    ev = (event, [str(t) for t in target]) if event is not None else None
    native_fabric, native_tables, report = _native.reconfig_apply(
        fabric._native,
        tables._native,
        ev,
        method,
        [(k, [str(a) for a in args]) for k, args in before],
        [str(n) for n in nodes] if nodes is not None else None,
        [int(x) for x in order] if order is not None else None,
        verify,
        paths,
        os.fspath(metabase) if metabase is not None else None,
        metabase_paths,
        disjoint,
    )
    return Reconfiguration(
        Fabric._from_native(native_fabric), ForwardingTables._from_native(native_tables), json.loads(report)
    )


@checked_ints
def noftree(fabric: Fabric, order: Sequence[int], roots: Optional[Sequence[int]] = None) -> Routing:
    """Paper III's NoFTree: ftree routing each leaf's compute nodes in the
    slots ``order`` (CA LIDs, possibly only some) gives them.

    >>> from ibcloud import Fabric, route
    >>> f = Fabric.generate("16-ary-2")
    >>> noftree(f, []).tables == route(f, "ftree").tables
    True
    """
    tables, seconds = _native.reconfig_route_noftree(
        fabric._native, [int(x) for x in order], list(roots) if roots is not None else None
    )
    return Routing(ForwardingTables._from_native(tables), None, "noftree", seconds)


def read_order(fabric: Fabric, path: PathLike) -> List[int]:
    """Reads a node order (GUIDs, LIDs or OpenSM's opensm-ftree-ca-order.dump;
    DUMMY lines skipped) as CA LIDs; unknown or repeated nodes are errors.

    >>> import tempfile, pathlib
    >>> from ibcloud import Fabric
    >>> f = Fabric.generate("8-ary-2")
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "order"
    >>> _ = p.write_text("0x0003\\n0xFFFF\\tDUMMY\\n0x0002\\n")
    >>> read_order(f, p) == [3, 2] or read_order(f, p)
    True
    """
    return list(_native.reconfig_read_order(fabric._native, os.fspath(path)))


@checked_ints
def received_traffic(
    fabric: Fabric, pattern: str, pattern_arg: Optional[str] = None, runs: int = 1, seed: int = 0, shuffle: bool = True
) -> "Any":
    """Per CA the traffic ``pattern`` sends it over ``runs`` analysis runs,
    highest first, as a DataFrame (``lid``, ``received``).

    >>> from ibcloud import Fabric
    >>> df = received_traffic(Fabric.generate("8-ary-2"), "gather", shuffle=False)
    >>> int(df.iloc[0]["received"]), int(df["received"].sum())
    (63, 63)
    """
    import pandas as pd

    rows = _native.reconfig_order_by_traffic(fabric._native, pattern, pattern_arg, runs, seed, shuffle)
    return pd.DataFrame(rows, columns=["lid", "received"])


@checked_ints
def order_by_traffic(
    fabric: Fabric, pattern: str, pattern_arg: Optional[str] = None, runs: int = 1, seed: int = 0, shuffle: bool = True
) -> List[int]:
    """CA LIDs ranked by the traffic ``pattern`` sends them (those receiving
    nothing left out): a NoFTree order "by received traffic".

    >>> from ibcloud import Fabric
    >>> len(order_by_traffic(Fabric.generate("8-ary-2"), "gather", shuffle=False))
    1
    """
    rows = _native.reconfig_order_by_traffic(fabric._native, pattern, pattern_arg, runs, seed, shuffle)
    return [lid for lid, received in rows if received > 0]


def tree_counts(fabric: Fabric) -> Tuple[int, int]:
    """Paper IV's (different, link-disjoint) spanning trees towards a leaf.

    >>> from ibcloud import Fabric
    >>> tree_counts(Fabric.generate("XGFT(3;4,4,3;1,2,3)"))
    (6, 2)
    """
    return tuple(_native.reconfig_tree_counts(fabric._native))  # type: ignore[return-value]
