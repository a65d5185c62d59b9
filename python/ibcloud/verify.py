"""Verification of forwarding tables, ours or OpenSM's.

:func:`verify` walks the tables for every CA pair (and switch pairs with
``include_switches``): reachability, forwarding loops and dead ends, the
path-length histogram, routes per link, and the credit-loop (deadlock) check
on the channel dependency graph per VL, using the path SLs of dfsssp or lash.

>>> from ibcloud import Fabric, route
>>> report = verify(route(Fabric.generate("ft324"), "ftree"))
>>> report.ok, report.data["reachable"] == report.data["pairs"]
(True, True)
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional, Sequence, Union

from ibcloud import _native
from ibcloud.routing import Routing
from ibcloud.safeio import checked_ints
from ibcloud.tables import ForwardingTables

__all__ = ["VerifyReport", "read_path_sls", "verify", "write_fdbs"]


class VerifyReport:
    """What :func:`verify` found: ``ok`` (all pairs reachable, no loop, no
    credit loop), ``text`` for people and ``data`` (a dict) for machines.

    >>> from ibcloud import Fabric
    >>> empty = verify(ForwardingTables(Fabric.generate("8-ary-2")))
    >>> empty.ok, empty.data["failures"]["unset"] > 0
    (False, True)
    """

    def __init__(self, ok: bool, text: str, data: Dict[str, Any]) -> None:
        self.ok = ok
        self.text = text
        self.data = data

    def __repr__(self) -> str:
        return f"VerifyReport(ok={self.ok}, pairs={self.data.get('pairs')}, reachable={self.data.get('reachable')})"


@checked_ints
def verify(
    routing: Union[Routing, ForwardingTables],
    *,
    path_sls: Optional[_native.PathSls] = None,
    include_switches: bool = False,
    credit_loops: bool = True,
    max_failures: int = 10,
    per_link: bool = False,
    sl2vl: Optional[Sequence[int]] = None,
) -> VerifyReport:
    """Verifies a :class:`Routing` (tables and path SLs) or bare tables.

    ``include_switches`` makes switches sources and destinations too (OpenSM's
    ftree leaves root-to-root switch LIDs unset, so expect failures there);
    ``per_link`` lists every link's route count in ``data["per_link"]``;
    ``sl2vl`` maps the 16 SLs to VLs for the credit-loop check (identity by default).

    >>> from ibcloud import Fabric, route
    >>> r = route(Fabric.generate("4-ary-3-full"), "lash")
    >>> verify(r).data["credit_loops"]["acyclic"]
    True
    """
    if isinstance(routing, Routing):
        tables, path_sls = routing.tables, path_sls if path_sls is not None else routing.path_sls
    else:
        tables = routing
    ok, text, data = _native.verify_tables(
        tables._native, path_sls, include_switches, credit_loops, max_failures, per_link,
        list(sl2vl) if sl2vl is not None else None,
    )
    return VerifyReport(ok, text, json.loads(data))


def read_path_sls(path: Union[str, "os.PathLike[str]"], opensm_log: bool = False) -> _native.PathSls:
    """Reads path SLs written by ``PathSls.write`` (``ibcloud-path-sls.dump``),
    or with ``opensm_log`` the SL lines of an OpenSM log taken at ``-D 0x4b``.

    >>> import tempfile, pathlib
    >>> from ibcloud import Fabric, route
    >>> r = route(Fabric.generate("4-ary-3-full"), "lash")
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "ibcloud-path-sls.dump"
    >>> r.path_sls.write(p)
    >>> read_path_sls(p).num_sls == r.path_sls.num_sls
    True
    """
    return _native.read_path_sls(os.fspath(path), opensm_log)  # an empty file is an error there


def read_path_sls_any(path: Union[str, "os.PathLike[str]"]) -> _native.PathSls:
    """Path SLs from either file :func:`read_path_sls` reads: an
    ``ibcloud-path-sls.dump``, or else OpenSM's log (``-D 0x4b``); an error
    names what was expected of both.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "osm.log"
    >>> _ = p.write_text("no SLs here\\n")
    >>> read_path_sls_any(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.ParseError: ...osm.log...
    """
    from ibcloud.exceptions import ParseError

    try:
        return read_path_sls(path)
    except ParseError as as_dump:
        try:
            sls = read_path_sls(path, opensm_log=True)
        except ParseError:
            raise as_dump from None
        if sls.num_sls == 0:  # a log without SL lines says nothing: not "every path on SL 0"
            raise ParseError(f"{os.fspath(path)}: neither an ibcloud-path-sls.dump ({as_dump}) nor an OpenSM log "
                             "with path SLs (run OpenSM with -D 0x4b)") from None
        return sls


def write_fdbs(tables: ForwardingTables, path: Union[str, "os.PathLike[str]"]) -> None:
    """Writes tables as OpenSM's ``opensm.fdbs``, the form ``ibdmchk -f`` reads.

    >>> import tempfile, pathlib
    >>> from ibcloud import Fabric, route
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "opensm.fdbs"
    >>> write_fdbs(route(Fabric.generate("8-ary-2"), "minhop").tables, p)
    >>> p.read_text().splitlines()[0]
    'dump_ucast_routes: Switch 0x0002c90201000001'
    """
    _native.write_fdbs(tables._native, os.fspath(path))
