"""Packet-level InfiniBand simulation (the ``ibcloud-netsim`` core).

:func:`simulate` runs one scenario on a fabric and its forwarding tables:
traffic (the compact form ``uniform:load=0.5,size=4096``, a JSON document or
dict, or a trace), run-time events (link failure, table and SL changes), an
optional controller called at every performance sweep, and the settings of
:func:`config` (MTU, VLs, buffers, host limits, VL arbitration, congestion
control, ...). It returns a :class:`SimResult` with pandas tables, Parquet or
CSV output and plots. :func:`simulate_many` runs several scenarios on all
cores. docs/netsim.md describes the model.

>>> from ibcloud import Fabric, route
>>> t = route(Fabric.generate("4-ary-2-full"), "ftree").tables
>>> r = simulate(t, "shift:load=0.5,size=4096", "200us", mtu=4096)
>>> round(float(r.flows["gbps"].mean()) / 31.7, 1)
0.5
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import numpy as np
import pandas as pd

from ibcloud import _native
from ibcloud.exceptions import ParseError, SimulationError
from ibcloud.safeio import atomic_path, atomic_write, checked_ints, dumps_json
from ibcloud.tables import ForwardingTables

__all__ = [
    "SimResult",
    "Sweep",
    "cc_preset",
    "config",
    "parse_duration",
    "parse_traffic",
    "pcie_gbps",
    "simulate",
    "simulate_many",
]

_DURATIONS = {"link_delay", "switch_latency", "sweep_interval", "xmit_wait_tick"}


@checked_ints
def parse_duration(value: Union[str, int, float]) -> int:
    """A duration (``"10ms"``, ``"2.5us"``; numbers are picoseconds) in picoseconds.

    >>> parse_duration("10ms"), parse_duration(500)
    (10000000000, 500)
    >>> parse_duration("soon")
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.SimulationError: cannot parse duration 'soon' (expected a number with ps, ns, us, ms or s, e.g. 10ms)
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if value < 0:
            raise SimulationError(f"duration {value} is negative")
        return int(value)
    if isinstance(value, float):
        return parse_duration(f"{value}s")
    return int(_native.sim_parse_duration(str(value)))


@checked_ints
def pcie_gbps(gen: int, lanes: int, max_payload: int = 128, dllp_share: float = 0.04) -> float:
    """Usable PCIe payload rate in Gb/s, the HCA host limit (docs/netsim.md).

    >>> round(pcie_gbps(1, 8), 2)    # ConnectX DDR on PCIe 1.1 x8: S003's 12.9 Gb/s
    12.93
    """
    return float(_native.sim_pcie_gbps(gen, lanes, max_payload, dllp_share))


def cc_preset(name: str = "default") -> Dict[str, Any]:
    """Congestion-control settings: ``default`` or ``ranadive`` (G Table 5).

    >>> cc_preset("ranadive")["ccti-timer"]
    32767
    """
    return json.loads(_native.sim_cc_preset(name))


def _vlarb_table(value: Any) -> List[Dict[str, int]]:
    if isinstance(value, str):
        out = []
        for part in [p for p in value.split(",") if p.strip()]:
            try:
                vl, weight = part.split(":")
                out.append({"vl": int(vl), "weight": int(weight)})
            except ValueError:
                raise SimulationError(f"VL arbitration entry '{part}' is not VL:WEIGHT") from None
        return out
    return [dict(e) if isinstance(e, dict) else {"vl": int(e[0]), "weight": int(e[1])} for e in value]


def config(**options: Any) -> Dict[str, Any]:
    """The full settings (kebab-case JSON form) with ``options`` applied.

    Options use snake_case: ``mtu``, ``vls``, ``buffer_bytes``,
    ``hca_buffer_bytes``, ``wire_overhead_bytes``, ``link_delay``,
    ``switch_latency``, ``store_and_forward``, ``host_gbps``, ``sink_gbps``,
    ``vl_arbitration`` (dict with ``high``/``low`` tables as ``"0:32,1:32"``
    and ``high_limit``), ``sl2vl`` (16 VLs), ``congestion_control`` (a
    preset name, a dict, or None), ``sweep_interval``, ``xmit_wait_tick``,
    ``record_ports``, ``max_events``, ``max_packets``, ``seed``. Durations
    may be strings like ``"20ns"``.

    >>> c = config(mtu=4096, vls=2, link_delay="50ns", congestion_control="default")
    >>> c["mtu"], c["link-delay"], c["congestion-control"]["threshold"]
    (4096, 50000, 15)
    >>> config(mtuu=1)
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.SimulationError: unknown simulation option 'mtuu'
    """
    c = json.loads(_native.sim_default_config())
    for key, value in options.items():
        k = key.replace("_", "-")
        if k not in c:
            raise SimulationError(f"unknown simulation option '{key}'")
        if key in _DURATIONS and value is not None:
            value = parse_duration(value)
        if key == "congestion_control" and isinstance(value, str):
            value = None if value in ("off", "none") else cc_preset(value)
        if key == "vl_arbitration" and value is not None:
            arb = dict(c["vl-arbitration"])
            for k2, v2 in dict(value).items():
                k2 = k2.replace("_", "-")
                arb[k2] = _vlarb_table(v2) if k2 in ("high", "low") else int(v2)
            value = arb
        c[k] = value
    return c


def parse_traffic(spec: Union[str, Dict[str, Any], os.PathLike], trace: Optional[os.PathLike] = None) -> Dict[str, Any]:
    """A traffic spec as a dict: compact text, JSON text, a dict, or a file
    (``.json``, or ``.csv`` for a trace ``time,src,dst,bytes[,sl]``).

    >>> parse_traffic("uniform:load=0.5,size=4096")["patterns"][0]["load"]
    0.5
    >>> parse_traffic("flow:src=H1,dst=H2,size=64k")["flows"][0]["size"]
    65536
    """
    from ibcloud.safeio import read_text

    trace_arg = None
    source = str(trace) if trace is not None else None
    if trace is not None:
        trace_arg = (read_text(trace), str(trace))
        if not trace_arg[0].strip():
            raise ParseError(f"{trace}:1: empty trace, expected a header time,src,dst,bytes[,sl] and messages")
    if isinstance(spec, dict):
        text = json.dumps(spec)
    elif spec is None or spec == "":
        text = ""
    else:
        s = str(spec)
        p = Path(s)
        if len(s) < 4096 and p.suffix in (".json", ".csv", ".txt") and p.exists():
            if p.suffix == ".csv":
                return parse_traffic("", trace=p) if trace is None else parse_traffic("", trace=trace)
            text = read_text(p)
            source = s
            if not text.strip():
                raise ParseError(f"{s}:1: empty traffic file, expected JSON or the compact form")
        else:
            text = s
    try:
        return json.loads(_native.sim_parse_traffic(text, trace_arg))
    except (ParseError, SimulationError) as err:
        # Name the file the spec came from when the core could not know it.
        if source is not None and source not in str(err):
            raise type(err)(f"{source}: {err}") from None
        raise


class Sweep:
    """What a controller sees at one performance sweep: counters per port
    slot (numpy arrays, cumulative and at the previous sweep), the port
    slots themselves (``node``, ``port``, ``remote`` slot, ``endpoint``
    index, ``is_switch``, ``gbps``; -1 for none), ``endpoint_lids`` and per
    flow progress.

    ``congestion()`` and ``bandwidth()`` are S003's metrics (ΔXmitWait and
    ΔXmitData × 4 per second); ``hca_facing()`` lists the switch ports whose
    cable leads to an HCA, with that HCA's endpoint index.

    >>> s = Sweep({"time": 2, "interval": 1, "xmit_wait": [5], "prev_xmit_wait": [1],
    ...            "xmit_data": [10], "prev_xmit_data": [0], "rcv_data": [0], "prev_rcv_data": [0],
    ...            "xmit_pkts": [1], "flow_delivered_bytes": [], "flow_sl": []}, None)
    >>> float(s.congestion()[0])   # 4 ticks in 1 ps
    4000000000000.0
    """

    def __init__(self, raw: Dict[str, Any], slots: Optional[pd.DataFrame]) -> None:
        self.time_ps: int = int(raw["time"])
        self.interval_ps: int = int(raw["interval"])
        self.xmit_wait = np.asarray(raw["xmit_wait"], dtype=np.uint64)
        self.prev_xmit_wait = np.asarray(raw["prev_xmit_wait"], dtype=np.uint64)
        self.xmit_data = np.asarray(raw["xmit_data"], dtype=np.uint64)
        self.prev_xmit_data = np.asarray(raw["prev_xmit_data"], dtype=np.uint64)
        self.rcv_data = np.asarray(raw["rcv_data"], dtype=np.uint64)
        self.xmit_pkts = np.asarray(raw["xmit_pkts"], dtype=np.uint64)
        n = len(self.xmit_wait)

        def ids(key: str) -> np.ndarray:
            a = np.asarray(raw.get(key, [-1] * n), dtype=np.int64)
            a[a == 0xFFFFFFFF] = -1
            return a

        self.node = ids("slot_node")
        self.port = ids("slot_port")
        self.remote = ids("slot_remote")
        self.endpoint = ids("slot_endpoint")
        self.is_switch = np.asarray(raw.get("slot_is_switch", [False] * n), dtype=bool)
        self.gbps = np.asarray(raw.get("slot_gbps", [0.0] * n), dtype=float)
        self.endpoint_lids = np.asarray(raw.get("endpoint_lids", []), dtype=np.int64)
        self.flow_delivered_bytes = np.asarray(raw["flow_delivered_bytes"], dtype=np.uint64)
        sl = raw["flow_sl"]
        self.flow_sl = np.frombuffer(sl, dtype=np.uint8) if isinstance(sl, bytes) else np.asarray(sl, dtype=np.uint8)
        self.slots = slots

    def hca_facing(self) -> List[tuple]:
        """(switch port slot, endpoint index) of every switch port cabled to an HCA.

        >>> raw = {"time": 1, "interval": 1, "xmit_wait": [0, 0], "prev_xmit_wait": [0, 0],
        ...        "xmit_data": [0, 0], "prev_xmit_data": [0, 0], "rcv_data": [0, 0], "prev_rcv_data": [0, 0],
        ...        "xmit_pkts": [0, 0], "flow_delivered_bytes": [], "flow_sl": [],
        ...        "slot_remote": [1, 0], "slot_endpoint": [0xFFFFFFFF, 7], "slot_is_switch": [True, False]}
        >>> Sweep(raw, None).hca_facing()
        [(0, 7)]
        """
        out = []
        for s in np.nonzero(self.is_switch & (self.remote >= 0))[0]:
            ep = self.endpoint[self.remote[s]]
            if ep >= 0:
                out.append((int(s), int(ep)))
        return out

    def congestion(self) -> np.ndarray:
        """ΔXmitWait per second for every port slot.

        >>> Sweep({"time": 2, "interval": 1_000_000, "xmit_wait": [3], "prev_xmit_wait": [1],
        ...        "xmit_data": [0], "prev_xmit_data": [0], "rcv_data": [0], "prev_rcv_data": [0],
        ...        "xmit_pkts": [0], "flow_delivered_bytes": [], "flow_sl": []}, None).congestion().tolist()
        [2000000.0]
        """
        return (self.xmit_wait - self.prev_xmit_wait).astype(float) / (self.interval_ps / 1e12)

    def bandwidth(self) -> np.ndarray:
        """ΔXmitData × 4 bytes per second for every port slot.

        >>> Sweep({"time": 2, "interval": 1_000_000, "xmit_wait": [0], "prev_xmit_wait": [0],
        ...        "xmit_data": [10], "prev_xmit_data": [0], "rcv_data": [0], "prev_rcv_data": [0],
        ...        "xmit_pkts": [0], "flow_delivered_bytes": [], "flow_sl": []}, None).bandwidth().tolist()
        [40000000.0]
        """
        return (self.xmit_data - self.prev_xmit_data).astype(float) * 4 / (self.interval_ps / 1e12)


class SimResult:
    """The outcome of one run: flows, time series and port counters.

    >>> from ibcloud import Fabric, route
    >>> t = route(Fabric.generate("4-ary-2-full"), "ftree").tables
    >>> r = simulate(t, "flow:src=#0,dst=#5,size=64k", "100us")
    >>> int(r.flows["completed_msgs"].iloc[0]) > 0
    True
    """

    def __init__(self, raw: Dict[str, Any]) -> None:
        self._summary = json.loads(raw["summary"])
        self.wall_seconds: float = float(raw.get("wall", float("nan")))
        #: dFtree's decisions (mark, unmark, trap, reroute; times in ps), if it ran.
        self.dftree_events: List[Dict[str, Any]] = json.loads(raw.get("dftree_events") or "[]")
        s = self._summary
        self.end_ps: int = s["end_time"]
        self.events: int = s["events"]
        self.unit_hops: int = s["unit_hops"]
        self.packet_hops: int = s["packet_hops"]
        self.dropped: int = s["dropped"]
        self.endpoints: List[str] = s["endpoints"]
        self.port_labels: List[str] = s["port_labels"]
        rows = []
        for f in s["flows"]:
            c = f["counters"]
            rows.append({
                "name": f["name"],
                "src": self.endpoints[f["src"]],
                "dst": self.endpoints[f["dst"]] if f["dst"] < len(self.endpoints) else "*",
                "gbps": f["gbps"],
                "mean_latency_us": f["mean_latency_us"] if f["mean_latency_us"] is not None else math.nan,
                "max_latency_us": f["max_latency_us"],
                "delivered_bytes": c["delivered_bytes"],
                "injected_bytes": c["injected_bytes"],
                "offered_msgs": c["offered_msgs"],
                "refused_msgs": c["refused_msgs"],
                "completed_msgs": c["completed_msgs"],
                "sl": c["sl"],
                "ccti": c["ccti"],
                "becns": c["becns"],
            })
        #: One row per flow: throughput (payload Gb/s), latency, counters.
        self.flows = pd.DataFrame(rows)
        fs = raw["flow_series"]
        self.flow_series = pd.DataFrame({
            "time_us": np.frombuffer(fs["time"], dtype="<u8") / 1e6,
            "flow": np.frombuffer(fs["flow"], dtype="<u8").astype(np.int64),
            "gbps": np.frombuffer(fs["gbps"], dtype="<f8"),
            "completed": np.frombuffer(fs["completed"], dtype="<u8").astype(np.int64),
            "mean_latency_us": np.frombuffer(fs["mean_latency_us"], dtype="<f8"),
            "sl": np.frombuffer(fs["sl"], dtype="<u8").astype(np.int64),
        })
        names = np.array(self.flows["name"]) if len(self.flows) else np.array([], dtype=object)
        self.flow_series.insert(2, "name", names[self.flow_series["flow"].to_numpy()] if len(names) else [])
        ps = raw["port_series"]
        slot = np.frombuffer(ps["slot"], dtype="<u8").astype(np.int64)
        labels = np.array(self.port_labels, dtype=object)
        self.port_series = pd.DataFrame({
            "time_us": np.frombuffer(ps["time"], dtype="<u8") / 1e6,
            "slot": slot,
            "port": labels[slot] if len(slot) else np.array([], dtype=object),
            "xmit_data": np.frombuffer(ps["xmit_bytes"], dtype="<u8") // 4,
            "rcv_data": np.frombuffer(ps["rcv_bytes"], dtype="<u8") // 4,
            "xmit_pkts": np.frombuffer(ps["xmit_pkts"], dtype="<u8"),
            "rcv_pkts": np.frombuffer(ps["rcv_pkts"], dtype="<u8"),
            "xmit_wait": np.frombuffer(ps["xmit_wait"], dtype="<u8"),
        })
        prow = []
        for i, c in enumerate(s["ports"]):
            if c["xmit_pkts"] or c["rcv_pkts"] or c["xmit_wait"]:
                prow.append({"slot": i, "port": self.port_labels[i], "xmit_data": c["xmit_bytes"] // 4,
                             "rcv_data": c["rcv_bytes"] // 4, "xmit_pkts": c["xmit_pkts"],
                             "rcv_pkts": c["rcv_pkts"], "xmit_wait": c["xmit_wait"],
                             "fecn_marked": c["fecn_marked"]})
        #: Final counters of every port that carried traffic (PortXmitData etc. in 32-bit words).
        self.ports = pd.DataFrame(prow, columns=["slot", "port", "xmit_data", "rcv_data", "xmit_pkts",
                                                 "rcv_pkts", "xmit_wait", "fecn_marked"])

    @checked_ints
    def gbps(self, flow: Union[int, str], start: Union[str, int] = 0, stop: Optional[Union[str, int]] = None) -> float:
        """Mean payload Gb/s of one flow (index or name) over sweep
        intervals ending in (start, stop].

        >>> from ibcloud import Fabric, route
        >>> t = route(Fabric.generate("4-ary-2-full"), "ftree").tables
        >>> r = simulate(t, "flow:src=#0,dst=#5,gbps=10,size=4096", "300us")
        >>> round(r.gbps(0, "100us"), 1)
        10.0
        """
        fs = self.flow_series
        idx = flow if isinstance(flow, int) else int(self.flows.index[self.flows["name"] == flow][0])
        lo = parse_duration(start) / 1e6
        hi = parse_duration(stop) / 1e6 if stop is not None else math.inf
        sel = fs[(fs["flow"] == idx) & (fs["time_us"] > lo) & (fs["time_us"] <= hi)]
        return float(sel["gbps"].mean()) if len(sel) else math.nan

    def summary(self) -> Dict[str, Any]:
        """Scalars of the run (JSON-ready).

        >>> from ibcloud import Fabric, route
        >>> t = route(Fabric.generate("4-ary-2-full"), "ftree").tables
        >>> simulate(t, "shift:load=0.2", "50us").summary()["flows"]
        32
        """
        f = self.flows
        lat = f["mean_latency_us"].dropna() if len(f) else pd.Series(dtype=float)
        return {
            "simulated_us": self.end_ps / 1e6,
            "wall_seconds": self.wall_seconds,
            "events": self.events,
            "unit_hops": self.unit_hops,
            "unit_hops_per_second": self.unit_hops / self.wall_seconds if self.wall_seconds > 0 else None,
            "packet_hops": self.packet_hops,
            "dropped_packets": self.dropped,
            "flows": len(f),
            "mean_flow_gbps": float(f["gbps"].mean()) if len(f) else 0.0,
            "min_flow_gbps": float(f["gbps"].min()) if len(f) else 0.0,
            "total_gbps": float(f["gbps"].sum()) if len(f) else 0.0,
            "mean_latency_us": float(lat.mean()) if len(lat) else None,
            "refused_msgs": int(f["refused_msgs"].sum()) if len(f) else 0,
            "max_xmit_wait_port": (self.ports.sort_values("xmit_wait").iloc[-1]["port"]
                                   if len(self.ports) and self.ports["xmit_wait"].max() > 0 else None),
        }

    def write(self, out: Union[str, os.PathLike], format: str = "parquet") -> List[Path]:
        """Writes flows, flow_series, port_series and ports as Parquet or CSV,
        and summary.json, into ``out``; returns the paths.

        >>> import tempfile
        >>> from ibcloud import Fabric, route
        >>> t = route(Fabric.generate("4-ary-2-full"), "ftree").tables
        >>> [p.name for p in simulate(t, "shift:load=0.2", "20us").write(tempfile.mkdtemp(), "csv")]
        ['flows.csv', 'flow_series.csv', 'port_series.csv', 'ports.csv', 'summary.json']
        """
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        paths = []
        for name in ("flows", "flow_series", "port_series", "ports"):
            df = getattr(self, name)
            if format not in ("parquet", "csv"):
                raise SimulationError(f"unknown output format '{format}' (parquet, csv)")
            p = d / f"{name}.{format}"
            with atomic_path(p) as tmp:
                if format == "parquet":
                    df.to_parquet(tmp, index=False)
                else:
                    df.to_csv(tmp, index=False)
            paths.append(p)
        p = d / "summary.json"
        atomic_write(p, dumps_json(self.summary(), indent=2, default=str) + "\n")
        paths.append(p)
        return paths

    def plot(self, out: Union[str, os.PathLike], title: str = "") -> List[Path]:
        """PNG plots into ``out``: throughput and latency over time, XmitWait
        of the busiest ports; returns the paths.

        >>> import tempfile
        >>> from ibcloud import Fabric, route
        >>> t = route(Fabric.generate("4-ary-2-full"), "ftree").tables
        >>> len(simulate(t, "shift:load=0.2", "20us", sweep_interval="5us").plot(tempfile.mkdtemp()))
        3
        """
        from ibcloud.sim.plots import plot_result

        return plot_result(self, Path(out), title)

    def __repr__(self) -> str:
        return f"<SimResult {len(self.flows)} flows, {self.end_ps / 1e6:g} us, {self.events} events>"


@checked_ints
def simulate(
    tables: Any,
    traffic: Union[str, Dict[str, Any], os.PathLike],
    time: Union[str, int] = "1ms",
    *,
    events: Optional[Sequence[Dict[str, Any]]] = None,
    controller: Optional[Union[str, Callable[[Sweep], Optional[List[Dict[str, Any]]]]]] = None,
    progress: Optional[Callable[[int, int], None]] = None,
    trace: Optional[os.PathLike] = None,
    dftree: Optional[Dict[str, Any]] = None,
    **options: Any,
) -> SimResult:
    """Runs one simulation of ``time`` on ``tables`` (a ForwardingTables or
    a Routing; the fabric is the one the tables belong to).

    ``events`` are dicts with ``time`` and an action ``type``:
    ``link-down``/``link-up`` (``node``, ``port``), ``set-lft`` (``switch``,
    ``lid``, ``port``), ``set-flow-sl`` (``flow``, ``sl``),
    ``set-destination-sl`` (``dst``, ``sl``), ``set-sl2-vl`` (``node``,
    ``in_port``, ``out_port``, ``map``), ``set-flow-rate`` (``flow``,
    ``gbps``), ``set-flow-cc-delay`` (``flow``, ``ccti``: a static
    congestion-control delay, as Sphinx's SM pushes it; needs
    ``congestion_control``). Nodes, endpoints and flows may be given by name.
    ``controller(sweep)`` is called at every sweep with a :class:`Sweep` and
    returns such actions (without ``time``) or None; ``controller="dftree"``
    runs S003's dFtree (Rust) with the settings ``dftree`` (options of
    :func:`ibcloud.dftree.config`; giving ``dftree`` alone selects it too),
    and its decisions land in ``SimResult.dftree_events``. Other keyword
    options are the settings of :func:`config`.

    >>> from ibcloud import Fabric, route
    >>> t = route(Fabric.generate("4-ary-2-full"), "ftree").tables
    >>> simulate(t, "flow:src=nobody,dst=#1", "1ms")
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.SimulationError: bad traffic spec (flow 0): unknown endpoint 'nobody' (give a CA node description, lid:N, a GUID 0x… or #index)
    """
    if hasattr(tables, "tables") and not isinstance(tables, ForwardingTables):
        tables = tables.tables
    if not isinstance(tables, ForwardingTables):
        raise SimulationError("give forwarding tables (e.g. route(fabric, 'ftree').tables)")
    cfg = json.dumps(config(**options))
    spec = json.dumps(parse_traffic(traffic, trace=trace))
    end = parse_duration(time)
    ev = json.dumps(list(events)) if events else None
    cb = None
    dft = None
    if controller == "dftree" or (controller is None and dftree is not None):
        from ibcloud.dftree import config as dftree_config

        dft = json.dumps(dftree_config(**(dftree or {})))
    elif isinstance(controller, str):
        raise SimulationError(f"unknown controller '{controller}' (dftree, or a Python function)")
    elif controller is not None:
        if dftree is not None:
            raise SimulationError("dftree settings need controller='dftree'")
        func = controller

        def cb(raw: Dict[str, Any]) -> Optional[List[Dict[str, Any]]]:
            return func(Sweep(raw, None))
    raw = _native.simulate(tables._native, cfg, spec, end, ev, cb, progress, dft)
    return SimResult(raw)


def simulate_many(
    tables: Any,
    runs: Sequence[Dict[str, Any]],
) -> List[Union[SimResult, SimulationError]]:
    """Runs several scenarios in parallel on all cores; each run is a dict
    with ``traffic``, ``time`` and settings of :func:`config`. Results come
    in input order; a run that failed is its :class:`SimulationError`.

    >>> from ibcloud import Fabric, route
    >>> t = route(Fabric.generate("4-ary-2-full"), "ftree").tables
    >>> rs = simulate_many(t, [{"traffic": "uniform:load=0.2", "time": "50us", "seed": s} for s in (1, 2)])
    >>> [type(r).__name__ for r in rs]
    ['SimResult', 'SimResult']
    """
    if hasattr(tables, "tables") and not isinstance(tables, ForwardingTables):
        tables = tables.tables
    jobs = []
    for r in runs:
        r = dict(r)
        traffic = r.pop("traffic")
        time = r.pop("time", "1ms")
        jobs.append((json.dumps(config(**r)), json.dumps(parse_traffic(traffic)), parse_duration(time)))
    out = _native.simulate_many(tables._native, jobs)
    return [SimResult(x) if isinstance(x, dict) else x for x in out]
