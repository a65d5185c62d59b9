"""dFtree (S003): dynamic slow-lane allocation for hot-spot flows on the
packet simulator.

:func:`config` gives the controller's settings (S003's T = 100,000
XmitWait ticks/s, utilisation < 0.5, and the choices where S003 is silent);
pass them as ``simulate(..., controller="dftree", dftree={...})`` (see
:func:`ibcloud.sim.simulate`). :func:`testbed` builds S003's Fig. 3a/3b
testbed with its forwarding tables. docs/dftree.md describes the method.

>>> from ibcloud.sim import simulate
>>> t = testbed("3a")
>>> spec = "flow:src=H2,dst=H3;flow:src=H1,dst=H5,start=1ms;flow:src=H3,dst=H5,start=1ms"
>>> r = simulate(t, spec, "4ms", controller="dftree", dftree={"interval": "1ms"}, **testbed_settings())
>>> [e["kind"] for e in r.dftree_events][:1]
['mark']
>>> r.gbps(0, "3ms") > 9  # 6.5 without dFtree: 16 Gb/s up-link minus 1→5
True
"""

from __future__ import annotations

import json
from typing import Any, Dict

from ibcloud import _native
from ibcloud.exceptions import SimulationError
from ibcloud.safeio import checked_ints
from ibcloud.tables import ForwardingTables

__all__ = ["config", "testbed", "testbed_settings"]

_DURATIONS = {"interval", "trap_latency", "host_delay", "reroute_delay"}


def config(**options: Any) -> Dict[str, Any]:
    """dFtree's full settings (kebab-case JSON form) with ``options``
    applied: ``interval`` (PM sweep, default 2ms), ``threshold`` (T,
    100000 ticks/s), ``utilisation`` (0.5), ``max_bandwidth`` (``data`` or
    ``signalling``), ``trap_latency`` (10us), ``host_delay`` (0),
    ``fast_sl``/``slow_sl`` (0/1), ``fast_vl``/``slow_vl`` (0/1),
    ``configure_sl2vl``, ``unpath``, ``clear_sweeps`` (1: no hysteresis),
    ``reroute``, ``reroute_delay`` (100us).
    Durations may be strings.

    >>> c = config(interval="1ms")
    >>> c["interval"], c["threshold"], c["utilisation"]
    (1000000000, 100000.0, 0.5)
    >>> config(intervall=1)
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.SimulationError: unknown dftree option 'intervall'
    """
    from ibcloud.sim import parse_duration

    c = json.loads(_native.dftree_default_config())
    for key, value in options.items():
        k = key.replace("_", "-")
        if k not in c:
            raise SimulationError(f"unknown dftree option '{key}'")
        if key.replace("-", "_") in _DURATIONS:
            value = parse_duration(value)
        c[k] = value
    return c


def testbed(variant: str = "3a") -> ForwardingTables:
    """S003's testbed with its forwarding tables: ``3a`` (3 leaves × 2 hosts,
    all 4x DDR) or ``3b`` (3 leaves × 4 hosts, 4x DDR hosts, 4x QDR
    up-links); hosts ``H1``… have LID = number (docs/dftree.md).

    >>> t = testbed("3b")
    >>> t.num_switches
    4
    """
    shapes = {"3a": (2, "4xDDR", "4xDDR"), "3b": (4, "4xDDR", "4xQDR")}
    if variant not in shapes:
        raise SimulationError(f"unknown testbed '{variant}' (3a, 3b)")
    h, hr, ur = shapes[variant]
    native = _native.dftree_testbed(h, hr, ur)
    return ForwardingTables._from_native(native)


@checked_ints
def testbed_settings(vls: int = 2) -> Dict[str, Any]:
    """Simulator settings of S003's testbed: MTU 2048, PCIe 1.1 x8 host and
    sink limits (12.9 Gb/s), ``vls`` data VLs.

    >>> s = testbed_settings()
    >>> s["mtu"], round(s["host_gbps"], 2), s["vls"]
    (2048, 12.93, 2)
    """
    from ibcloud.sim import pcie_gbps

    host = pcie_gbps(1, 8, 128, 0.04)
    return {"mtu": 2048, "vls": vls, "host_gbps": host, "sink_gbps": host}
