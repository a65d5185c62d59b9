"""Fat-tree generators: XGFT/PGFT parameters, k-ary-n-trees and the named
fabrics of the reference papers.

Notation is the textbook one (Öhring et al.; Zahavi's PGFT): level 0 holds
the compute nodes, level h the roots; ``m_i`` is the number of children of a
level-i node, ``w_i`` the number of parents of a level-(i-1) node and ``p_i``
the number of parallel links between them.

>>> params = FatTreeParams.parse("XGFT(3;4,4,3;1,2,3)")
>>> params.num_compute_nodes, params.num_switches
(48, 24)
>>> params.build()
Fabric(cas=48, switches=24, routers=0, links=90, max_lid=72)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Sequence

from ibcloud import _native
from ibcloud.safeio import checked_ints

if TYPE_CHECKING:
    from ibcloud.fabric import Fabric

__all__ = ["FatTreeParams", "presets"]


def presets() -> List[Dict[str, object]]:
    """Every named fabric: ``name``, ``source`` (where the papers use it),
    ``spec`` (its XGFT form), ``cas``, ``switches`` and ``radix``.

    >>> ft648 = next(p for p in presets() if p["name"] == "ft648")
    >>> ft648["spec"], ft648["cas"], ft648["switches"], ft648["radix"]
    ('XGFT(2;18,36;1,18)', 648, 54, 36)
    """
    return _native.presets()


class FatTreeParams:
    """Parameters of a PGFT (an XGFT when every ``p_i`` is 1).

    Every constructor validates, so a ``FatTreeParams`` always describes a
    tree that :meth:`build` can make; invalid parameters raise
    :class:`~ibcloud.exceptions.TopologyError`. Values are immutable:
    :meth:`with_radix` and :meth:`with_rate` return new ones.

    >>> FatTreeParams.k_ary_n_tree(4, 3)
    FatTreeParams('XGFT(3;4,4,4;1,4,4)', radix=8, rate='4xQDR')
    """

    _native: _native.FatTreeParams

    @classmethod
    def _from_native(cls, native: _native.FatTreeParams) -> FatTreeParams:
        self = cls.__new__(cls)
        self._native = native
        return self

    @classmethod
    def parse(cls, spec: str) -> FatTreeParams:
        """A preset name (``ft648``), ``XGFT(h;m..;w..)``, ``PGFT(h;m..;w..;p..)``
        or ``K-ary-N``.

        >>> str(FatTreeParams.parse("ft324"))
        'XGFT(2;18,18;1,18)'
        >>> FatTreeParams.parse("pgft(2;4,4;1,2;1,2)").p
        [1, 2]
        """
        return cls._from_native(_native.FatTreeParams.parse(spec))

    @classmethod
    @checked_ints
    def xgft(cls, m: Sequence[int], w: Sequence[int]) -> FatTreeParams:
        """XGFT(h; m; w) in textbook order (``m[0]``: CAs per leaf switch).

        >>> FatTreeParams.xgft([18, 36], [1, 18]).num_switches
        54
        """
        return cls._from_native(_native.FatTreeParams.xgft(list(m), list(w)))

    @classmethod
    @checked_ints
    def pgft(cls, m: Sequence[int], w: Sequence[int], p: Sequence[int]) -> FatTreeParams:
        """PGFT(h; m; w; p) in textbook order.

        >>> FatTreeParams.pgft([2, 2], [1, 2], [1, 3]).build().num_links
        16
        """
        return cls._from_native(_native.FatTreeParams.pgft(list(m), list(w), list(p)))

    @classmethod
    @checked_ints
    def from_roots_first(cls, m: Sequence[int], w: Sequence[int]) -> FatTreeParams:
        """Paper V's roots-first notation XGFT(n; m1..mn; w1..wn), where ``m[0]``
        counts the children of a root and ``w[-1]`` the parents of a CA.

        >>> p = FatTreeParams.from_roots_first([8, 4, 4], [4, 4, 1])
        >>> p.num_compute_nodes, p.num_switches
        (128, 80)
        """
        return cls._from_native(_native.FatTreeParams.from_roots_first(list(m), list(w)))

    @classmethod
    @checked_ints
    def k_ary_n_tree(cls, k: int, n: int) -> FatTreeParams:
        """A k-ary-n-tree: k^n CAs and n·k^(n-1) switches of 2k ports.

        >>> t = FatTreeParams.k_ary_n_tree(12, 4)
        >>> t.num_compute_nodes, t.num_switches, t.radix
        (20736, 6912, 24)
        """
        return cls._from_native(_native.FatTreeParams.k_ary_n_tree(k, n))

    @checked_ints
    def with_radix(self, radix: int) -> FatTreeParams:
        """The same tree on switches of ``radix`` ports (unused ports stay free).

        >>> FatTreeParams.parse("4-ary-2").with_radix(36).build().summary()["levels"][0]["radix"]
        [36, 36]
        """
        return self._from_native(self._native.with_radix(radix))

    def with_rate(self, rate: str) -> FatTreeParams:
        """The same tree with every link at ``rate`` (``4xQDR``, ``4xEDR``, ``12xHDR`` ...).

        >>> FatTreeParams.parse("ft324").with_rate("4xEDR").rate
        '4xEDR'
        """
        return self._from_native(self._native.with_rate(rate))

    @property
    def h(self) -> int:
        """Number of switch levels.

        >>> FatTreeParams.parse("ft5832").h
        3
        """
        return self._native.h

    @property
    def m(self) -> List[int]:
        """``m_1..m_h``: children of a level-i node.

        >>> FatTreeParams.parse("ft648").m
        [18, 36]
        """
        return self._native.m

    @property
    def w(self) -> List[int]:
        """``w_1..w_h``: parents of a level-(i-1) node.

        >>> FatTreeParams.parse("ft648").w
        [1, 18]
        """
        return self._native.w

    @property
    def p(self) -> List[int]:
        """``p_1..p_h``: parallel links between connected nodes of adjacent levels.

        >>> FatTreeParams.parse("ft648").p
        [1, 1]
        """
        return self._native.p

    @property
    def radix(self) -> Optional[int]:
        """Switch port count, or None for exactly the ports in use.

        >>> FatTreeParams.parse("XGFT(2;4,4;1,2)").radix is None
        True
        """
        return self._native.radix

    @property
    def rate(self) -> str:
        """Rate of every link, spelled like ``4xQDR``.

        >>> FatTreeParams.parse("ft648").rate
        '4xQDR'
        """
        return self._native.rate

    @property
    def num_compute_nodes(self) -> int:
        """Number of compute nodes (CAs): the product of the ``m_i``.

        >>> FatTreeParams.parse("ft11664").num_compute_nodes
        11664
        """
        return self._native.num_compute_nodes

    @property
    def num_switches(self) -> int:
        """Number of switches over all levels.

        >>> FatTreeParams.parse("ft11664").num_switches
        1620
        """
        return self._native.num_switches

    @checked_ints
    def nodes_at_level(self, level: int) -> int:
        """Nodes at ``level`` (0 = compute nodes, h = roots).

        >>> t = FatTreeParams.parse("XGFT(3;4,4,3;1,2,3)")
        >>> [t.nodes_at_level(i) for i in range(t.h + 1)]
        [48, 12, 6, 6]
        """
        return self._native.nodes_at_level(level)

    @checked_ints
    def ports_used(self, level: int) -> int:
        """Ports a level-``level`` node uses: ``m_i·p_i`` down plus ``w_{i+1}·p_{i+1}`` up.

        >>> t = FatTreeParams.parse("ft648")
        >>> [t.ports_used(i) for i in range(t.h + 1)]
        [1, 36, 36]
        """
        return self._native.ports_used(level)

    def build(self) -> Fabric:
        """Builds the fabric, with packed LIDs (CAs 1..N, then switches).

        >>> FatTreeParams.parse("ft324").build()
        Fabric(cas=324, switches=36, routers=0, links=648, max_lid=360)
        """
        from ibcloud.fabric import Fabric

        return Fabric._from_native(self._native.build())

    def __str__(self) -> str:
        return str(self._native)

    def __repr__(self) -> str:
        return repr(self._native)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FatTreeParams):
            return NotImplemented
        return self._native == other._native

    def __hash__(self) -> int:
        return hash((str(self), self.radix, self.rate))
