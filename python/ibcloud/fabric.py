"""The :class:`Fabric`: one InfiniBand subnet (switches, channel adapters,
routers, their ports, LIDs and links), generated or read from a file.

>>> f = Fabric.generate("ft648")
>>> f.num_cas, f.num_switches, f.lft_blocks
(648, 54, 11)
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Union

from ibcloud import _native
from ibcloud.exceptions import UnsupportedError
from ibcloud.formats import format_name
from ibcloud.safeio import checked_ints

if TYPE_CHECKING:
    import pandas

__all__ = ["Fabric"]

PathLike = Union[str, "os.PathLike[str]"]


def _rows(columns: Dict[str, List[Any]]) -> List[Dict[str, Any]]:
    names = list(columns)
    return [dict(zip(names, values)) for values in zip(*columns.values())]


class Fabric:
    """An InfiniBand subnet.

    Make one with :meth:`generate` (presets and XGFT/PGFT specs),
    :meth:`read` (ibnetdiscover, ibsim, native, OpenSM subnet.lst) or
    :meth:`from_text`. Node ids are dense (0..num_nodes-1) in the fabric's
    order; generated fabrics list CAs first, then switches from the leaves up.

    >>> f = Fabric.generate("4-ary-2-full")
    >>> f
    Fabric(cas=32, switches=12, routers=0, links=64, max_lid=44)
    >>> f.nodes()[0]["description"], f.nodes()[-1]["kind"]
    ('hca-00001 HCA-1', 'switch')
    """

    _native: _native.Fabric

    @classmethod
    def _from_native(cls, native: _native.Fabric) -> Fabric:
        self = cls.__new__(cls)
        self._native = native
        return self

    # -- construction ---------------------------------------------------------

    @classmethod
    @checked_ints
    def generate(cls, spec: str, radix: Optional[int] = None, rate: Optional[str] = None) -> Fabric:
        """Builds a fat-tree from a preset name (see :func:`ibcloud.presets`),
        ``XGFT(h;m..;w..)``, ``PGFT(h;m..;w..;p..)`` or ``K-ary-N``, with packed
        LIDs. ``radix`` overrides the switch port count, ``rate`` the link rate.

        >>> Fabric.generate("ft324")
        Fabric(cas=324, switches=36, routers=0, links=648, max_lid=360)
        >>> Fabric.generate("XGFT(2;4,4;1,4)", radix=8, rate="4xEDR").links()[0]["rate"]
        '4xEDR'
        """
        from ibcloud.generate import FatTreeParams

        params = FatTreeParams.parse(spec)
        if radix is not None:
            params = params.with_radix(radix)
        if rate is not None:
            params = params.with_rate(rate)
        return params.build()

    @classmethod
    def read(cls, path: PathLike, format: Optional[str] = None) -> Fabric:
        """Reads a fabric file. Without ``format`` the format is guessed from
        the file name (``.ibcf``, ``.topo``, ``.net``, ``.lst``), then from
        the content. Malformed content raises
        :class:`~ibcloud.exceptions.ParseError` naming file and line.

        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "ft324.topo"
        >>> Fabric.generate("ft324").write(path)
        >>> Fabric.read(path).num_cas
        324
        """
        return cls._from_native(_native.read_fabric(os.fspath(path), format))

    @classmethod
    def from_text(cls, text: str, format: str, name: str = "<input>") -> Fabric:
        """Parses a fabric from text in a text format (``ibnetdiscover``,
        ``ibsim``, ``subnet-lst``); ``name`` stands for the file in messages.

        >>> net = '''
        ... Switch 4 "sw1"
        ... [1] "host1"[1]
        ... [2] "host2"[1]
        ...
        ... Hca 1 "host1"
        ... [1] "sw1"[1]
        ...
        ... Hca 1 "host2"
        ... [1] "sw1"[2]
        ... '''
        >>> Fabric.from_text(net, "ibsim")
        Fabric(cas=2, switches=1, routers=0, links=2, max_lid=0)
        """
        if format_name(format) == "native":
            raise UnsupportedError("the native format is binary; use Fabric.from_bytes")
        return cls.from_bytes(text.encode(), format, name)

    @classmethod
    def from_bytes(cls, data: bytes, format: str, name: str = "<input>") -> Fabric:
        """Parses a fabric from bytes in any format.

        >>> f = Fabric.generate("ft324")
        >>> Fabric.from_bytes(f.to_bytes("native"), "native") == f
        True
        """
        return cls._from_native(_native.parse_fabric(bytes(data), format, name))

    # -- output ---------------------------------------------------------------

    def write(self, path: PathLike, format: Optional[str] = None) -> None:
        """Writes the fabric to ``path``; without ``format``, the extension
        decides (``.ibcf`` native, ``.topo`` ibnetdiscover, ``.net`` ibsim).

        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "tree.ibcf"
        >>> Fabric.generate("8-ary-2").write(path)
        >>> Fabric.read(path).num_switches
        16
        """
        _native.write_fabric(self._native, os.fspath(path), format)

    def to_bytes(self, format: str) -> bytes:
        """The fabric serialised in ``format``.

        >>> Fabric.generate("ft324").to_bytes("native")[:8]
        b'IBCLOUD\\x00'
        """
        return _native.render_fabric(self._native, format)

    def to_text(self, format: str) -> str:
        """The fabric in a text format (``ibnetdiscover`` or ``ibsim``).

        >>> text = Fabric.generate("4-ary-2-full").to_text("ibsim")
        >>> text.count("Switch"), text.count("Hca")
        (12, 32)
        """
        if format_name(format) == "native":
            raise UnsupportedError("the native format is binary; use Fabric.to_bytes")
        return self.to_bytes(format).decode()

    # -- queries --------------------------------------------------------------

    @property
    def num_nodes(self) -> int:
        """Number of nodes of every kind.

        >>> Fabric.generate("ft324").num_nodes
        360
        """
        return self._native.num_nodes

    @property
    def num_switches(self) -> int:
        """Number of switches.

        >>> Fabric.generate("ft5832").num_switches
        972
        """
        return self._native.num_switches

    @property
    def num_cas(self) -> int:
        """Number of channel adapters (compute nodes).

        >>> Fabric.generate("ft5832").num_cas
        5832
        """
        return self._native.num_cas

    @property
    def num_routers(self) -> int:
        """Number of routers.

        >>> Fabric.generate("ft324").num_routers
        0
        """
        return self._native.num_routers

    @property
    def num_links(self) -> int:
        """Number of links (cables).

        >>> Fabric.generate("ft324").num_links
        648
        """
        return self._native.num_links

    @property
    def max_lid(self) -> int:
        """Highest LID in use, LMC ranges counted in full; 0 without LIDs.

        >>> Fabric.generate("ft648").max_lid
        702
        """
        return self._native.max_lid

    @property
    def lids_in_use(self) -> int:
        """Number of LIDs in use, each LMC range counted in full.

        >>> f = Fabric.generate("ft324")
        >>> f.assign_lids(lmc=1)
        >>> f.lids_in_use
        684
        """
        return self._native.lids_in_use

    @property
    def lft_blocks(self) -> int:
        """Linear-forwarding-table blocks each switch needs: floor(max_lid/64)+1.

        >>> Fabric.generate("ft11664").lft_blocks
        208
        """
        return self._native.lft_blocks

    @property
    def ranked(self) -> bool:
        """True when every switch carries an OpenSM rank (generated fabrics do;
        fabrics read from most files need :meth:`infer_ranks`).

        >>> Fabric.generate("ft324").ranked
        True
        """
        return self._native.ranked

    def nodes(self) -> List[Dict[str, Any]]:
        """One dict per node: ``id``, ``kind`` (switch/ca/router), ``guid``,
        ``description``, ``num_ports``, ``rank`` (None for CAs) and ``lid``
        (switch port 0 or CA port 1; 0 when unassigned).

        >>> node = Fabric.generate("ft324").nodes()[-1]
        >>> node["kind"], node["description"], node["rank"], node["lid"], node["num_ports"]
        ('switch', 'sw-L2-0018', 0, 360, 36)
        """
        return _rows(self._native.node_columns())

    def links(self) -> List[Dict[str, Any]]:
        """One dict per link: ``node_a``, ``port_a``, ``node_b``, ``port_b``
        (node ids as in :meth:`nodes`, ``node_a`` the lower end) and ``rate``.

        >>> Fabric.generate("ft324").links()[0]
        {'node_a': 0, 'port_a': 1, 'node_b': 324, 'port_b': 1, 'rate': '4xQDR'}
        """
        return _rows(self._native.link_columns())

    def to_pandas(self, table: str = "nodes") -> "pandas.DataFrame":
        """The ``nodes`` or ``links`` table as a pandas DataFrame (needs pandas),
        with the columns of :meth:`nodes` or :meth:`links`; ``rank`` is a
        nullable integer column (``<NA>`` for CAs).

        >>> df = Fabric.generate("ft648").to_pandas()
        >>> df.groupby("kind").size().to_dict()
        {'ca': 648, 'switch': 54}
        >>> links = Fabric.generate("ft648").to_pandas("links")
        >>> len(links), links["rate"].unique().tolist()
        (1296, ['4xQDR'])
        """
        import pandas

        if table == "nodes":
            df = pandas.DataFrame(self._native.node_columns())
            df["rank"] = df["rank"].astype("Int64")
            df["guid"] = df["guid"].astype("uint64")
            return df
        if table == "links":
            return pandas.DataFrame(self._native.link_columns())
        raise ValueError(f"unknown table {table!r} (expected 'nodes' or 'links')")

    def summary(self) -> Dict[str, Any]:
        """The fabric at a glance: ``cas``, ``switches``, ``routers``, ``links``,
        ``levels`` (per OpenSM rank, roots first: ``switches``, ``radix``,
        ``switch_links``, ``ca_links``, pairs being ``[min, max]``),
        ``lids_used``, ``max_lid``, ``lft_blocks_per_switch``,
        ``full_lft_smps`` and ``link_rates``.

        >>> s = Fabric.generate("ft11664").summary()
        >>> s["lids_used"], s["lft_blocks_per_switch"], s["full_lft_smps"]
        (13284, 208, 336960)
        >>> [(level["rank"], level["switches"]) for level in s["levels"]]
        [(0, 324), (1, 648), (2, 648)]
        """
        return _native.summarize(self._native)

    def copy(self) -> Fabric:
        """An independent copy (:meth:`assign_lids` and :meth:`infer_ranks`
        change a fabric in place).

        >>> f = Fabric.generate("ft324")
        >>> g = f.copy()
        >>> g.assign_lids(lmc=1)
        >>> f.max_lid, g.max_lid
        (360, 684)
        """
        return Fabric._from_native(self._native.copy())

    def topology_difference(self, other: Fabric) -> Optional[str]:
        """The first difference a discovery tool could see (node GUIDs, kinds,
        port counts, links), or None when the topologies agree.

        >>> a = Fabric.generate("ft324")
        >>> a.topology_difference(Fabric.generate("ft324")) is None
        True
        >>> b, _ = a.inject_faults(links=1, seed=1)
        >>> a.topology_difference(b).startswith("node 0x")
        True
        """
        return self._native.topology_difference(other._native)

    # -- changes --------------------------------------------------------------

    @checked_ints
    def assign_lids(
        self,
        policy: str = "packed",
        lmc: int = 0,
        lmc_esp0: bool = False,
        sm_port_guid: Optional[int] = None,
        guid2lid: Union[PathLike, Dict[int, Tuple[int, int]], None] = None,
    ) -> None:
        """Reassigns every LID in place.

        ``policy`` ``"packed"`` hands out LIDs from 1 in fabric order (CAs
        first for generated trees); ``"opensm"`` follows OpenSM 3.3 on a fresh
        subnet: the port ``sm_port_guid`` (where the SM runs) first, then
        every port by GUID in network byte order; ``"guid2lid"`` keeps the LIDs
        of ``guid2lid`` (a path to OpenSM's cache file or a dict as
        :meth:`guid2lid` returns) and gives other ports free LIDs in OpenSM's
        order, as OpenSM does with its cache. ``lmc`` (0-7) gives each CA
        port 2^lmc aligned LIDs; switch port 0 gets them too with ``lmc_esp0``.

        >>> f = Fabric.generate("ft648")
        >>> f.assign_lids(lmc=2)
        >>> f.max_lid, f.lft_blocks
        (2646, 42)
        >>> f.assign_lids(policy="opensm", sm_port_guid=f.nodes()[0]["guid"] + 1)
        >>> f.nodes()[0]["lid"]
        1
        >>> g = Fabric.generate("ft648")
        >>> g.assign_lids(policy="guid2lid", guid2lid={f.nodes()[0]["guid"] + 1: (700, 700)})
        >>> g.nodes()[0]["lid"]
        700
        """
        if guid2lid is not None and not isinstance(guid2lid, dict):
            from ibcloud.tables import read_guid2lid

            guid2lid = read_guid2lid(guid2lid)
        _native.assign_lids(self._native, policy, lmc, lmc_esp0, sm_port_guid, guid2lid)

    def clear_lids(self) -> None:
        """Removes every LID, as on a subnet no SM has configured yet (files
        written then carry no LIDs, so OpenSM picks its own).

        >>> f = Fabric.generate("ft324")
        >>> f.clear_lids()
        >>> f.max_lid, f.guid2lid()
        (0, {})
        """
        self._native.clear_lids()

    def guid2lid(self) -> Dict[int, Tuple[int, int]]:
        """The LIDs as OpenSM's guid2lid cache holds them: port GUID → (first
        LID, last LID), for switch port 0 and every CA port with a LID.

        >>> f = Fabric.generate("4-ary-2-full")
        >>> f.assign_lids(lmc=1)
        >>> g2l = f.guid2lid()
        >>> len(g2l), g2l[f.nodes()[0]["guid"] + 1]
        (44, (2, 3))
        """
        return _native.guid2lid_of(self._native)

    def infer_ranks(self) -> None:
        """Sets OpenSM-style ranks on every switch from the topology (leaves are
        the switches with CAs; roots, rank 0, are the farthest from them).

        >>> f = Fabric.generate("ft5832")
        >>> f.infer_ranks()
        >>> sorted({n["rank"] for n in f.nodes() if n["kind"] == "switch"})
        [0, 1, 2]
        """
        self._native.infer_ranks()

    @checked_ints
    def inject_faults(self, links: int = 0, switches: int = 0, seed: int = 0) -> Tuple[Fabric, Dict[str, Any]]:
        """A copy without ``switches`` random switches and then ``links`` random
        switch-to-switch links, drawn reproducibly from ``seed``; and a report
        of what was removed: ``{"switches": [guid, ...], "links": [(guid,
        port, guid, port), ...]}``. LIDs are kept.

        >>> f = Fabric.generate("ft324")
        >>> broken, report = f.inject_faults(links=3, switches=1, seed=7)
        >>> broken.num_switches, len(report["links"]), len(report["switches"])
        (35, 3, 1)
        """
        native, report = _native.inject_faults(self._native, links, switches, seed)
        return Fabric._from_native(native), report

    # -- dunder ---------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Fabric):
            return NotImplemented
        return self._native == other._native

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._native)
