"""Routing engines: compute every switch's forwarding table.

The engines are OpenSM's, re-implemented in Rust to produce the same tables
(see docs/routing.md): ``ftree``, ``minhop``, ``updn``, ``dfsssp`` and
``lash``. Python functions can be registered as engines too
(:func:`register_engine`), so experiments can try a new routing without
touching Rust.

>>> from ibcloud import Fabric
>>> "ftree" in dict(engines()) or not engines()
True
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ibcloud import _native
from ibcloud.exceptions import ParseError, RoutingError
from ibcloud.safeio import checked_ints
from ibcloud.tables import ForwardingTables, read_lfts

if TYPE_CHECKING:
    from ibcloud.fabric import Fabric

__all__ = ["Routing", "engines", "register_engine", "route", "read_guid_list", "read_tables", "write_tables"]

PathLike = Union[str, "os.PathLike[str]"]

#: Engines written in Python: name -> (function, description).
_PY_ENGINES: Dict[str, Tuple[Callable[["Fabric"], ForwardingTables], str]] = {}


@dataclass
class Routing:
    """The result of :func:`route`.

    >>> from ibcloud import Fabric
    >>> r = Routing(ForwardingTables(Fabric.generate("8-ary-2")), None, "empty", 0.0)
    >>> r.tables.unrouted() > 0, r.path_sls
    (True, None)
    """

    #: Every switch's forwarding table.
    tables: ForwardingTables
    #: The SL of every path (``get(src_lid, dst_lid)``) for dfsssp and lash; None means SL 0.
    path_sls: Optional[_native.PathSls]
    #: Engine name.
    engine: str
    #: Seconds spent in the engine.
    seconds: float


def engines() -> List[Tuple[str, str]]:
    """Every engine as (name, description): the Rust ones, then those
    registered from Python.

    >>> names = [name for name, _ in engines()]
    >>> len(names) == len(set(names))
    True
    """
    return list(_native.engines()) + [(name, desc) for name, (_, desc) in _PY_ENGINES.items()]


def register_engine(name: str, function: Callable[["Fabric"], ForwardingTables], description: str = "") -> None:
    """Makes ``function(fabric) -> ForwardingTables`` available to :func:`route`
    and the ``ibcloud route --engine`` option under ``name``.

    >>> from ibcloud import Fabric
    >>> def leaf_only(fabric):
    ...     tables = ForwardingTables(fabric)
    ...     return tables
    >>> register_engine("nothing", leaf_only, "routes nothing (example)")
    >>> route(Fabric.generate("8-ary-2"), "nothing").tables.unrouted()
    1024
    """
    if name in dict(_native.engines()):
        raise RoutingError(f"'{name}' is a built-in engine and cannot be replaced")
    _PY_ENGINES[name] = (function, description)


@checked_ints
def route(
    fabric: "Fabric",
    engine: str = "ftree",
    *,
    roots: Optional[Sequence[int]] = None,
    compute_nodes: Optional[Sequence[int]] = None,
    max_vls: Optional[int] = None,
) -> Routing:
    """Routes ``fabric`` (whose LIDs are assigned) with ``engine``.

    ``roots`` are root switch GUIDs (updn's and ftree's root GUID file),
    ``compute_nodes`` CA port GUIDs (ftree's CN GUID file), ``max_vls`` the
    virtual layers dfsssp and lash may use.

    >>> from ibcloud import Fabric, RoutingError
    >>> try:
    ...     route(Fabric.generate("8-ary-2"), "nosuch")
    ... except RoutingError as e:
    ...     print(str(e).split(";")[0])
    unknown routing engine 'nosuch'
    """
    if engine in _PY_ENGINES:
        start = time.perf_counter()
        tables = _PY_ENGINES[engine][0](fabric)
        return Routing(tables, None, engine, time.perf_counter() - start)
    tables, sls, seconds = _native.route(
        fabric._native,
        engine,
        list(roots) if roots is not None else None,
        list(compute_nodes) if compute_nodes is not None else None,
        max_vls,
    )
    return Routing(ForwardingTables._from_native(tables), sls, engine, seconds)


def read_guid_list(path: PathLike) -> List[int]:
    """Reads a GUID file as OpenSM's ``root_guid_file`` / ``cn_guid_file``: one
    GUID per line (``0x`` hex), blank lines and ``#`` comments ignored.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "roots"
    >>> _ = p.write_text("# roots\\n0x0002c90202000001\\n\\n0x2c90202000002\\n")
    >>> [hex(g) for g in read_guid_list(p)]
    ['0x2c90202000001', '0x2c90202000002']
    >>> _ = p.write_text("0xZZ\\n")
    >>> try:
    ...     read_guid_list(p)
    ... except ParseError as e:
    ...     print(str(e).endswith("roots:1: '0xZZ' is not a GUID"))
    True
    """
    from ibcloud.safeio import excerpt, read_text

    guids = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            guid = int(text, 16)
            if not 0 < guid < 1 << 64:
                raise ValueError
        except ValueError:
            raise ParseError(f"{os.fspath(path)}:{number}: {excerpt(text)} is not a GUID") from None
        guids.append(guid)
    if not guids:
        raise ParseError(f"{os.fspath(path)}:1: no GUIDs (an empty or comment-only file)")
    return guids


def write_tables(tables: ForwardingTables, path: PathLike) -> str:
    """Writes tables: ``.ibcf`` as the native format (fabric and tables
    together), anything else as OpenSM's ``opensm-lfts.dump``. Returns the
    format written.

    >>> import tempfile, pathlib
    >>> from ibcloud import Fabric
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> t = ForwardingTables(Fabric.generate("8-ary-2"))
    >>> write_tables(t, d / "r.ibcf"), write_tables(t, d / "opensm-lfts.dump")
    ('native', 'opensm-lfts.dump')
    """
    if Path(path).suffix == ".ibcf":
        _native.write_native_with_tables(tables._native, os.fspath(path))
        return "native"
    tables.write_opensm(path)
    return "opensm-lfts.dump"


def read_tables(
    path: PathLike, fabric: Optional["Fabric"] = None, *, keep_missing_ports: bool = False
) -> Tuple["Fabric", ForwardingTables]:
    """Reads tables from a native file (which carries its fabric) or an
    ``opensm-lfts.dump`` (which needs ``fabric``). Returns (fabric, tables).
    ``keep_missing_ports`` is passed to :func:`ibcloud.tables.read_lfts`.

    >>> import tempfile, pathlib
    >>> from ibcloud import Fabric
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> f = Fabric.generate("8-ary-2")
    >>> _ = write_tables(ForwardingTables(f), d / "r.ibcf")
    >>> g, t = read_tables(d / "r.ibcf")
    >>> g == f, t.num_switches
    (True, 16)
    """
    from ibcloud.fabric import Fabric

    if Path(path).suffix == ".ibcf":
        native_fabric, native_tables = _native.read_native_with_tables(os.fspath(path))
        if native_tables is None:
            raise ParseError(f"{os.fspath(path)}: holds a fabric but no forwarding tables")
        return Fabric._from_native(native_fabric), ForwardingTables._from_native(native_tables)
    if fabric is None:
        raise RoutingError(f"{os.fspath(path)}: an opensm-lfts.dump needs the fabric it belongs to")
    return fabric, read_lfts(path, fabric, keep_missing_ports=keep_missing_ports)
