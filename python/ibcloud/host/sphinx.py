"""Sphinx (G §6): Latency Proportionality held by a two-stage controller.

The controller and the I/O model live in Rust
(crates/ibcloud-control/src/sphinx/, docs/sphinx.md); this module is their
Python face: :class:`Controller` steps the controller on latencies you
observe (a replayable state machine: no clock is read), :func:`io_model`
runs the Eq. 8 sweep on the packet simulator and :func:`policy_ratio`
reads a named LP policy.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import pandas as pd

from ibcloud import _native
from ibcloud.exceptions import SimulationError
from ibcloud.tables import ForwardingTables
from ibcloud.safeio import checked_ints

__all__ = ["Controller", "io_model", "policy_ratio"]

_US = 1_000_000  # ps per µs


def policy_ratio(text: str) -> float:
    """The LP target of a named policy or a written ratio.

    ``fair`` = 1:1, ``latency-first`` = 1:4, ``throughput-first`` = 4:1.

    >>> policy_ratio("fair"), policy_ratio("1:4"), policy_ratio("0.1")
    (1.0, 0.25, 0.1)
    >>> policy_ratio("1:0")
    Traceback (most recent call last):
    ...
    ValueError: LP target '1:0' must be a positive finite ratio (like 1:4, 0.25 or fair)
    """
    return _native.sphinx_policy_ratio(text)


class Controller:
    """Sphinx's two-stage controller over LP groups.

    ``flows`` maps a flow name to its base (standalone) latency in µs;
    ``groups`` are ``(a, b, target)`` with flow names and a target ratio
    PL_a / PL_b (a number or a policy such as ``"1:4"``). ``params`` are
    the options of docs/sphinx.md in snake_case: ``k_i`` (4), ``k_p``
    (0.25), ``period_s`` (1), ``error`` (``ratio-difference``,
    ``log-ratio``, ``share-difference``), ``max_error`` (10), ``throttle``
    (``second`` or ``both``), ``max_delay`` (127).

    >>> c = Controller({"nectere": 48.0, "memcached": 187.0}, [("nectere", "memcached", "1:1")])
    >>> c.step(1.0, {"nectere": 64.1, "memcached": 196.7})   # Table 8, collocated
    {'memcached': 5}
    >>> c.set_target(0, "1:4")
    >>> round(float(c.records()["lp"].iloc[0]), 2)
    6.47
    """

    def __init__(self, flows: Dict[str, float], groups: Sequence[Tuple[str, str, Union[str, float]]],
                 **params: Any) -> None:
        self.names: List[str] = list(flows)
        index = {n: i for i, n in enumerate(self.names)}
        gs = []
        for g in groups:
            a, b, target = g
            for name in (a, b):
                if name not in index:
                    raise ValueError(f"LP group ({a}, {b}) names unknown flow '{name}'")
            ratio = policy_ratio(target) if isinstance(target, str) else float(target)
            gs.append({"a": index[a], "b": index[b], "target": ratio})
        fl = [{"name": n, "base_us": float(v)} for n, v in flows.items()]
        p = {k.replace("_", "-"): v for k, v in params.items()}
        self._inner = _native.Sphinx(json.dumps(fl), json.dumps(gs), json.dumps(p))

    def step(self, now_s: float, latency_us: Dict[str, float]) -> Dict[str, int]:
        """One control period at ``now_s`` seconds with the latencies (µs) of
        every flow; returns the flows whose delay changed and the new delay
        (a CCT index).

        >>> c = Controller({"n": 48.0, "m": 187.0}, [("n", "m", 1.0)])
        >>> c.step(1.0, {"n": 64.1, "m": 196.7}), c.step(2.0, {"n": 48.0, "m": 187.0})
        ({'m': 5}, {})
        """
        missing = [n for n in self.names if n not in latency_us]
        if missing:
            raise ValueError(f"no latency for flow(s) {', '.join(missing)}")
        lats = [float(latency_us[n]) for n in self.names]
        out = self._inner.step(int(round(now_s * 1e12)), lats)
        return {self.names[f]: d for f, d in out}

    @checked_ints
    def set_target(self, group: int, target: Union[str, float]) -> None:
        """Changes a group's target at run time (G R16).

        >>> c = Controller({"n": 48.0, "m": 187.0}, [("n", "m", 1.0)])
        >>> c.set_target(0, "1:4")
        >>> c.set_target(1, 1.0)
        Traceback (most recent call last):
        ...
        ValueError: no LP group 1
        """
        ratio = policy_ratio(target) if isinstance(target, str) else float(target)
        self._inner.set_target(group, ratio)

    def delays(self) -> Dict[str, int]:
        """The current delay of every flow.

        >>> Controller({"n": 48.0, "m": 187.0}, [("n", "m", 1.0)]).delays()
        {'n': 0, 'm': 0}
        """
        return dict(zip(self.names, self._inner.delays()))

    def records(self) -> pd.DataFrame:
        """One row per group and step: time_s, pl_a, pl_b, lp, target,
        error, price, d_price, resource, delay_a, delay_b, saturated.

        >>> c = Controller({"n": 48.0, "m": 187.0}, [("n", "m", 1.0)])
        >>> _ = c.step(0.5, {"n": 64.1, "m": 196.7})
        >>> c.records()[["time_s", "delay_b", "saturated"]].values.tolist()
        [[0.5, 5, False]]
        """
        rows = json.loads(self._inner.records_json())
        df = pd.DataFrame(rows, columns=["time", "group", "pl_a", "pl_b", "lp", "target", "error", "price",
                                         "d_price", "resource", "delay_a", "delay_b", "saturated"])
        df.insert(0, "time_s", df.pop("time") / 1e12)
        return df


@checked_ints
def io_model(tables: Any, sizes: Sequence[int] = (4096, 65536, 524288), delays: Sequence[int] = (5, 10, 20, 40),
             *, src: str = "#0", dst: str = "#1", messages: int = 4, cct_ns: float = 20.0,
             **options: Any) -> Tuple[pd.DataFrame, Dict[int, Optional[Tuple[float, float, float]]]]:
    """The I/O model sweep of G §6.4 (Fig. 48) on the packet simulator.

    One send at a time from ``src`` to ``dst`` for each size and delay (a
    CCT index; the table rises by ``cct_ns`` per index, switches never mark).
    Returns the points (size, delay, latency_us, increase_pct) and, per size,
    Eq. 8's least-squares line ``delay = slope · increase% + intercept`` as
    ``(slope, intercept, r2)``, or None for a size the delay does not move.
    ``options`` are simulator settings (:func:`ibcloud.sim.config`).

    >>> from ibcloud import Fabric, route
    >>> t = route(Fabric.generate("4-ary-2-full"), "ftree").tables
    >>> pts, fits = io_model(t, sizes=[4096, 524288], delays=[10, 20], mtu=4096)
    >>> pts[pts["size"] == 4096]["increase_pct"].tolist()
    [0.0, 0.0, 0.0]
    >>> fits[4096] is None, round(fits[524288][2], 4)
    (True, 1.0)
    """
    from ibcloud.sim import config

    if not (cct_ns > 0 and cct_ns < 1e9):
        raise SimulationError(f"cct_ns must be a positive number of ns, got {cct_ns}")
    cc = config(congestion_control="default")["congestion-control"]
    unit_ps = int(round(cct_ns * 1000))
    cc.update({"threshold": 0, "cct-unit": unit_ps,
               "cct": [{"shift": 0, "multiplier": i} for i in range(int(cc["ccti-limit"]) + 1)]})
    cfg = config(**options)
    cfg["congestion-control"] = cc
    if hasattr(tables, "tables") and not isinstance(tables, ForwardingTables):
        tables = tables.tables
    if not isinstance(tables, ForwardingTables):
        raise SimulationError("give forwarding tables (e.g. route(fabric, 'ftree').tables)")
    raw = json.loads(_native.sphinx_io_sweep(tables._native, json.dumps(cfg), src, dst, [int(s) for s in sizes],
                                             [int(d) for d in delays], int(messages)))
    pts = pd.DataFrame(raw["points"], columns=["size", "delay", "latency_us", "increase_pct"])
    fits = {int(k): (tuple(v) if v is not None else None) for k, v in raw["fits"].items()}
    return pts, fits
