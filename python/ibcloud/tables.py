"""Linear forwarding tables and OpenSM's files for them.

:class:`ForwardingTables` holds, for every switch, destination LID → output
port. :func:`read_lfts` loads OpenSM's ``opensm-lfts.dump``;
:meth:`ForwardingTables.write_opensm` writes one that OpenSM's ``file``
routing engine loads (``opensm -R file -U PATH``). :func:`read_guid2lid` and
:func:`write_guid2lid` handle OpenSM's LID cache.

>>> from ibcloud import Fabric
>>> f = Fabric.generate("4-ary-2-full")
>>> t = ForwardingTables(f)
>>> t.unrouted()        # 12 switches x 32 CA LIDs, nothing routed yet
384
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple, Union

from ibcloud import _native
from ibcloud.safeio import checked_ints

if TYPE_CHECKING:
    import pandas

    from ibcloud.fabric import Fabric

__all__ = ["ForwardingTables", "read_lfts", "read_guid2lid", "write_guid2lid"]

PathLike = Union[str, "os.PathLike[str]"]


class ForwardingTables:
    """Every switch's linear forwarding table (LID → port; unset entries drop).

    Tables are bound to a snapshot of the fabric they were made for: switches
    are named by node GUID, and LIDs mean what they meant in that fabric.

    >>> from ibcloud import Fabric
    >>> f = Fabric.generate("4-ary-2-full")
    >>> leaf = next(n["guid"] for n in f.nodes() if n["kind"] == "switch")
    >>> t = ForwardingTables(f)
    >>> t.set(leaf, 1, 1)
    >>> t.get(leaf, 1), t.get(leaf, 2)
    (1, None)
    """

    _native: _native.ForwardingTables

    def __init__(self, fabric: Fabric) -> None:
        self._native = _native.ForwardingTables(fabric._native)

    @classmethod
    def _from_native(cls, native: _native.ForwardingTables) -> ForwardingTables:
        self = cls.__new__(cls)
        self._native = native
        return self

    @property
    def num_switches(self) -> int:
        """Switches with a table.

        >>> from ibcloud import Fabric
        >>> ForwardingTables(Fabric.generate("ft324")).num_switches
        36
        """
        return self._native.num_switches

    @checked_ints(lid=(0, 0xFFFF))
    def get(self, switch_guid: int, lid: int) -> Optional[int]:
        """Output port of a switch for ``lid``, or None if unset.

        >>> from ibcloud import Fabric
        >>> f = Fabric.generate("8-ary-2")
        >>> sw = f.nodes()[-1]["guid"]
        >>> ForwardingTables(f).get(sw, 3) is None
        True
        """
        return self._native.get(switch_guid, lid)

    @checked_ints(lid=(0, 0xFFFF), port=(0, 255))
    def set(self, switch_guid: int, lid: int, port: int) -> None:
        """Sets one entry; the port must exist on the switch (0 = the switch itself).

        >>> from ibcloud import Fabric, TopologyError
        >>> f = Fabric.generate("8-ary-2")
        >>> sw = f.nodes()[-1]["guid"]
        >>> t = ForwardingTables(f)
        >>> t.set(sw, 3, 2)
        >>> try:
        ...     t.set(sw, 3, 99)
        ... except TopologyError as e:
        ...     print(e)
        port 99 does not exist on switch 0x0002c90202000008, which has 16 ports
        """
        self._native.set(switch_guid, lid, port)

    def unrouted(self, switch_lids: bool = False) -> int:
        """Entries a complete routing needs but these tables lack: every CA and
        router LID, on every switch, without a port (0 for a complete routing);
        with ``switch_lids`` switch LIDs count too (OpenSM's ftree leaves those
        only a down-up turn could reach unset).

        >>> from ibcloud import Fabric
        >>> t = ForwardingTables(Fabric.generate("8-ary-2"))
        >>> t.unrouted(), t.unrouted(switch_lids=True)
        (1024, 1280)
        """
        return self._native.unrouted(switch_lids)

    @checked_ints
    def changed_blocks(self, other: ForwardingTables, switch_guid: int) -> List[int]:
        """The 64-LID blocks of one switch that differ from ``other``: the SMPs
        a differential update (as OpenSM does) sends to that switch.

        >>> from ibcloud import Fabric
        >>> f = Fabric.generate("8-ary-2")
        >>> sw = f.nodes()[-1]["guid"]
        >>> a, b = ForwardingTables(f), ForwardingTables(f)
        >>> b.set(sw, 70, 1)
        >>> a.changed_blocks(b, sw)
        [1]
        """
        return self._native.changed_blocks(other._native, switch_guid)

    def differences(self, other: ForwardingTables) -> List[Tuple[int, str, int, int]]:
        """Per switch that differs from ``other`` (tables of the same fabric):
        ``(switch GUID, description, differing entries, differing blocks)``.

        >>> from ibcloud import Fabric
        >>> f = Fabric.generate("8-ary-2")
        >>> a, b = ForwardingTables(f), ForwardingTables(f)
        >>> b.set(f.nodes()[-1]["guid"], 70, 1)
        >>> [(hex(guid), desc, entries, blocks) for guid, desc, entries, blocks in a.differences(b)]
        [('0x2c90202000008', 'sw-L2-0008', 1, 1)]
        """
        return self._native.differences(other._native)

    def entries(self) -> Dict[str, List[int]]:
        """Every set entry as columns ``switch_guid``, ``lid``, ``port``.

        >>> from ibcloud import Fabric
        >>> f = Fabric.generate("8-ary-2")
        >>> t = ForwardingTables(f)
        >>> t.set(f.nodes()[-1]["guid"], 5, 4)
        >>> t.entries()["port"]
        [4]
        """
        return self._native.entries()

    def to_pandas(self) -> "pandas.DataFrame":
        """:meth:`entries` as a DataFrame.

        >>> from ibcloud import Fabric
        >>> ForwardingTables(Fabric.generate("8-ary-2")).to_pandas().columns.tolist()
        ['switch_guid', 'lid', 'port']
        """
        import pandas

        return pandas.DataFrame(self.entries())

    def write_opensm(self, path: PathLike) -> None:
        """Writes the tables as OpenSM's ``opensm-lfts.dump``, which OpenSM's
        ``file`` routing engine loads (``opensm -R file -U PATH``).

        >>> import tempfile, pathlib
        >>> from ibcloud import Fabric
        >>> f = Fabric.generate("8-ary-2")
        >>> t = ForwardingTables(f)
        >>> t.set(f.nodes()[-1]["guid"], 5, 4)
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "lfts.dump"
        >>> t.write_opensm(p)
        >>> read_lfts(p, f) == t
        True
        """
        self._native.write_opensm(os.fspath(path))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ForwardingTables):
            return NotImplemented
        return self._native == other._native

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._native)


def read_lfts(path: PathLike, fabric: Fabric, *, keep_missing_ports: bool = False) -> ForwardingTables:
    """Reads OpenSM's ``opensm-lfts.dump`` as tables for ``fabric``. Switches
    are matched by GUID; a dump taken under other LIDs is refused, naming the
    line, because its entries would point at the wrong ports. An entry naming
    a port the switch does not have is refused too, unless
    ``keep_missing_ports``: then it is kept, and :func:`ibcloud.verify`
    reports its routes as failed ("a port that does not exist").

    >>> import tempfile, pathlib
    >>> from ibcloud import Fabric, ParseError
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "bad.dump"
    >>> _ = p.write_text("Unicast lids [0-3] of switch Lid 1 guid 0x12 ('x'):\\n0x0001 000\\n")
    >>> try:
    ...     read_lfts(p, Fabric.generate("8-ary-2"))
    ... except ParseError as e:
    ...     print("bad.dump" in str(e))
    True
    """
    return ForwardingTables._from_native(
        _native.read_lfts(os.fspath(path), fabric._native, keep_missing_ports=keep_missing_ports)
    )


def read_guid2lid(path: PathLike) -> Dict[int, Tuple[int, int]]:
    """Reads OpenSM's ``guid2lid`` cache: port GUID → (first LID, last LID).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "guid2lid"
    >>> _ = p.write_text("0x0002c90300000101 0x0001 0x0001\\n")
    >>> {hex(guid): lids for guid, lids in read_guid2lid(p).items()}
    {'0x2c90300000101': (1, 1)}
    """
    return _native.read_guid2lid(os.fspath(path))


@checked_ints
def write_guid2lid(guid2lid: Dict[int, Tuple[int, int]], path: PathLike) -> None:
    """Writes a guid2lid map (e.g. :meth:`Fabric.guid2lid`) in OpenSM's format,
    so OpenSM started with ``OSM_CACHE_DIR`` there keeps these LIDs.

    >>> import tempfile, pathlib
    >>> from ibcloud import Fabric
    >>> f = Fabric.generate("8-ary-2")
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "guid2lid"
    >>> write_guid2lid(f.guid2lid(), p)
    >>> read_guid2lid(p) == f.guid2lid()
    True
    """
    _native.write_guid2lid(guid2lid, os.fspath(path))
