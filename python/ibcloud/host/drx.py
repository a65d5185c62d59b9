"""DRX (G §2–4, docs/drx.md): the Workload Configurator (Algorithm 4) and
the DCCR relation (Eq. 3), computed in Rust (``ibcloud_control::drx``).

The control plane itself (PM / HA, prices, caps) runs inside a host
scenario as ``[[controllers]] kind = "drx"``.

>>> vms = {"n0": "h0", "h0a": "h0", "l0a": "h0", "h1a": "h1"}
>>> dccr("n0", vms, {"nectere": ["n0"], "hadoop": ["h0a", "h1a"], "linpack": ["l0a"]})
['hadoop', 'linpack']
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from ibcloud import _native

__all__ = ["configure_workloads", "dccr"]


def configure_workloads(workloads: Sequence[Mapping[str, Any]], links: Sequence[float], *,
                        eviction: str = "as-written", comparison: str = "algorithm",
                        capacity: str = "sum") -> Dict[str, Any]:
    """Algorithm 4 (G §2.2): which workloads' SLAs are met (``ss``) and
    which are kept at their minimum (``sv``).

    Each workload is a mapping with ``name``, ``g`` and ``io_min`` (CQEs/s),
    ``priority`` (``"high"`` or ``"low"``), optional ``alpha`` (default 1)
    and ``links`` (indices into ``links``, needed for
    ``capacity="per-link"``). ``links`` are link capacities in CQEs/s. The
    options are G §9's readings: ``eviction`` A1 (``"as-written"`` or
    ``"repaired"``), ``comparison`` A2 (``"algorithm"`` or ``"strict"``),
    ``capacity`` A3 (``"sum"`` or ``"per-link"``). ``fits`` says whether
    every minimum really fits (as written, it may not). Bad or
    unsatisfiable input raises ``ValueError`` naming the workload.

    >>> ws = [dict(name="a", g=40, io_min=35, priority="high"),
    ...       dict(name="b", g=70, io_min=5, priority="high"),
    ...       dict(name="lp", g=20, io_min=10, priority="low")]
    >>> configure_workloads(ws, [100.0])
    {'ss': ['b'], 'sv': ['a', 'lp'], 'evicted': ['a'], 'fits': False}
    >>> configure_workloads(ws, [100.0], eviction="repaired")["ss"]
    []
    >>> configure_workloads([dict(name="x", g=5, io_min=6, priority="high")], [10.0])
    Traceback (most recent call last):
    ...
    ValueError: workload 'x': IOmin (6) exceeds its guarantee g (5)
    """
    specs: List[Tuple[str, float, float, float, str, List[int]]] = []
    for w in workloads:
        unknown = set(w) - {"name", "g", "io_min", "alpha", "priority", "links"}
        if unknown:
            raise ValueError(f"workload {w.get('name', '?')!r}: unknown keys {sorted(unknown)}")
        if "name" not in w or "g" not in w:
            raise ValueError(f"workload {w.get('name', '?')!r}: 'name' and 'g' are required")
        specs.append((str(w["name"]), float(w["g"]), float(w.get("io_min", 0.0)), float(w.get("alpha", 1.0)),
                      str(w.get("priority", "low")), [int(x) for x in w.get("links", [])]))
    raw = json.loads(_native.drx_configure(specs, [float(x) for x in links], eviction, comparison, capacity))
    names = [s[0] for s in specs]
    return {"ss": [names[i] for i in raw["ss"]], "sv": [names[i] for i in raw["sv"]],
            "evicted": [names[i] for i in raw["evicted"]], "fits": bool(raw["fits"])}


def dccr(vm: str, vms: Mapping[str, str], vmes: Mapping[str, Sequence[str]], *,
         include_own: bool = False) -> List[str]:
    """DCCR(vm) (G Eq. 3): the ensembles with a VM on ``vm``'s host.

    ``vms`` maps each VM to its host, ``vmes`` each ensemble to its VMs.
    ``vm``'s own ensemble is left out unless ``include_own`` (G's
    [inferred] default). Names come in the order of ``vmes``.

    >>> vms = {"n0": "A", "n1": "B", "h0": "A", "h1": "B"}
    >>> dccr("n1", vms, {"nectere": ["n0", "n1"], "hadoop": ["h0", "h1"]})
    ['hadoop']
    >>> dccr("h0", vms, {"nectere": ["n0", "n1"], "hadoop": ["h0", "h1"]})
    ['nectere']
    """
    return list(_native.drx_dccr(vm, [(str(k), str(v)) for k, v in vms.items()],
                                 [(str(k), [str(x) for x in v]) for k, v in vmes.items()],
                                 bool(include_own)))
