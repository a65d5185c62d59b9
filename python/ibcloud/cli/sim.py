"""``ibcloud sim``: packet-level simulation of a routed fabric.

``sim FABRIC (--lfts FILE | --route ENGINE) --traffic SPEC --time 10ms
--out DIR`` runs the traffic (the compact form
``uniform:load=0.5,size=4096``, several joined by ``;``, a JSON file, or
``--trace CSV``) through the fabric with credits, VLs and arbitration, then
prints a summary, writes flows, flow_series, port_series and ports as
Parquet (or ``--out-format csv``) and PNG plots into DIR. ``--events FILE``
schedules link failures and table or SL changes (JSON). Exit status 1 when
the run deadlocked (the credit cycle is printed) or dropped packets, 2 on
bad input. docs/netsim.md documents the traffic format and every option.

>>> from ibcloud.cli.main import main
>>> main(["sim", "4-ary-2-full", "--route", "ftree", "--traffic", "shift:load=0.5", "--time", "100us", "--flows", "0"])  # doctest: +ELLIPSIS
simulated 100 us of 32 flows: ...
0
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Optional

from ibcloud.cli._routed import add_arguments, load
from ibcloud.cli._args import add_out, deprecated
from ibcloud.cli.main import ExitStatus
from ibcloud.exceptions import ParseError, SimulationError
from ibcloud.safeio import dumps_json

if TYPE_CHECKING:
    from rich.table import Table

    from ibcloud.sim import SimResult

# ibcloud.sim (numpy, pandas) and rich load when a simulation runs, not with
# the parser: `ibcloud --version` and `--help` stay fast.

__all__ = ["register", "render"]


def _options(args: argparse.Namespace) -> Dict[str, Any]:
    from ibcloud.sim import parse_duration, pcie_gbps

    opts: Dict[str, Any] = {}
    if args.config:
        from ibcloud.safeio import load_json

        loaded = load_json(args.config)
        if not isinstance(loaded, dict):
            raise SimulationError(f"{args.config}:1: expected a JSON object of settings, found {type(loaded).__name__}")
        opts.update({k.replace("-", "_"): v for k, v in loaded.items()})
    for name in ("mtu", "vls", "buffer_bytes", "hca_buffer_bytes", "host_gbps", "sink_gbps", "seed",
                 "max_events", "max_packets"):
        v = getattr(args, name)
        if v is not None:
            opts[name] = v
    for name in ("link_delay", "switch_latency", "sweep_interval", "xmit_wait_tick"):
        v = getattr(args, name)
        if v is not None:
            opts[name] = parse_duration(v)
    if args.pcie:
        try:
            gen, lanes = (int(x) for x in args.pcie.lower().replace("x", ":").split(":"))
        except ValueError:
            raise SimulationError(f"--pcie '{args.pcie}' is not GEN:LANES (e.g. 1:8)") from None
        cap = pcie_gbps(gen, lanes)
        opts.setdefault("host_gbps", cap)
        opts.setdefault("sink_gbps", cap)
    if args.store_and_forward:
        opts["store_and_forward"] = True
    if args.cc:
        opts["congestion_control"] = args.cc
    if args.vlarb_high or args.vlarb_low or args.high_limit is not None:
        arb: Dict[str, Any] = {}
        if args.vlarb_high:
            arb["high"] = args.vlarb_high
        if args.vlarb_low:
            arb["low"] = args.vlarb_low
        if args.high_limit is not None:
            arb["high_limit"] = args.high_limit
        opts["vl_arbitration"] = arb
    if args.sl2vl:
        try:
            m = [int(x) for x in args.sl2vl.split(",")]
        except ValueError:
            raise SimulationError("--sl2vl takes 16 comma-separated VLs") from None
        if len(m) != 16:
            raise SimulationError("--sl2vl takes 16 comma-separated VLs")
        opts["sl2vl"] = m
    return opts


def render(r: SimResult, flows: int = 20) -> str:
    """The text summary.

    >>> from ibcloud import Fabric, route
    >>> t = route(Fabric.generate("4-ary-2-full"), "ftree").tables
    >>> from ibcloud.sim import simulate
    >>> print(render(simulate(t, "flow:src=#0,dst=#1", "50us")).splitlines()[0])  # doctest: +ELLIPSIS
    simulated 50 us of 1 flow: ... events
    """
    s = r.summary()
    n = s["flows"]
    lines = [f"simulated {s['simulated_us']:g} us of {n} flow{'s' if n != 1 else ''}: "
             f"{s['events']} events"
             + (f" in {s['wall_seconds']:.2f} s wall ({s['unit_hops_per_second'] / 1e6:.1f} M unit-hops/s)"
                if s.get("unit_hops_per_second") and s["wall_seconds"] >= 0.01 else "")]
    lines.append(f"throughput per flow: mean {s['mean_flow_gbps']:.3f} Gb/s, min {s['min_flow_gbps']:.3f}, "
                 f"total {s['total_gbps']:.1f} Gb/s")
    if s["mean_latency_us"] is not None:
        lines.append(f"message latency: mean {s['mean_latency_us']:.3f} us")
    if s["refused_msgs"]:
        lines.append(f"messages refused at full source backlogs: {s['refused_msgs']}")
    if s["dropped_packets"]:
        lines.append(f"DROPPED packets (down links or missing LFT entries): {s['dropped_packets']}")
    if s["max_xmit_wait_port"]:
        lines.append(f"most XmitWait: {s['max_xmit_wait_port']}")
    return "\n".join(lines)


def _table(r: SimResult, limit: int) -> Table:
    from rich.table import Table

    t = Table(title=f"flows (first {min(limit, len(r.flows))} of {len(r.flows)})")
    for c in ("flow", "Gb/s", "mean lat (us)", "max lat (us)", "msgs", "refused", "SL", "BECN"):
        t.add_column(c, justify="left" if c == "flow" else "right")
    for _, f in r.flows.head(limit).iterrows():
        lat = f["mean_latency_us"]
        t.add_row(str(f["name"]), f"{f['gbps']:.3f}", "-" if math.isnan(lat) else f"{lat:.2f}",
                  f"{f['max_latency_us']:.2f}", str(f["completed_msgs"]), str(f["refused_msgs"]),
                  str(f["sl"]), str(f["becns"]))
    return t


# Bounds of the traffic numbers checked before a run (the simulator itself
# is left as it is): a source faster than this schedules messages less than
# a picosecond apart and the run makes no progress in simulated time.
_MAX_LOAD = 100.0  # 10,000 % of the source's link
_MAX_GBPS = 100_000.0


def check_traffic(spec: Any, where: str) -> None:
    """Refuses NaN, infinite, negative and absurd numbers anywhere in a
    parsed traffic spec (``load`` at most 100, i.e. 10,000 % of a link;
    ``gbps`` at most 100,000), naming the key.

    >>> check_traffic({"patterns": [{"pattern": "uniform", "load": 0.5}]}, "--traffic")
    >>> check_traffic({"patterns": [{"pattern": "uniform", "load": 1e20}]}, "--traffic")
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.SimulationError: --traffic: load 1e+20 is above 100 (10,000 % of a link)
    """
    if isinstance(spec, dict):
        for key, value in spec.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                if not math.isfinite(value):
                    raise SimulationError(f"{where}: {key} {value} is not a finite number")
                if key in ("load", "gbps", "fraction") and value < 0:
                    raise SimulationError(f"{where}: {key} {value:g} is negative")
                if key == "load" and value > _MAX_LOAD:
                    raise SimulationError(f"{where}: load {value:g} is above {_MAX_LOAD:g} (10,000 % of a link)")
                if key == "gbps" and value > _MAX_GBPS:
                    raise SimulationError(f"{where}: gbps {value:g} is above {_MAX_GBPS:,.0f}")
            else:
                check_traffic(value, where)
    elif isinstance(spec, list):
        for item in spec:
            check_traffic(item, where)


_NON_FINITE = re.compile(r"(?i)(?<![a-z0-9_-])(nan|[+-]?inf(inity)?)(?![a-z0-9_])")


def _sim(args: argparse.Namespace) -> ExitStatus:
    """Simulate traffic on a routed fabric."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from ibcloud.sim import parse_duration, parse_traffic, simulate

    if not args.traffic and not args.trace:
        raise SimulationError("give --traffic SPEC or --trace CSV")
    where = f"--traffic {args.traffic}" if args.traffic else f"--trace {args.trace}"
    if args.traffic and not Path(args.traffic).suffix and _NON_FINITE.search(args.traffic.split(":", 1)[-1]):
        raise SimulationError(f"{where}: NaN and infinity are not numbers a source can send at")
    parsed = parse_traffic(args.traffic or "", trace=args.trace)
    check_traffic(parsed, args.traffic if args.traffic and Path(args.traffic).suffix else where)
    _, tables, _ = load(args)
    end = parse_duration(args.time)
    events = None
    if args.events:
        from ibcloud.safeio import load_json

        events = load_json(args.events)
        if not isinstance(events, list):
            raise SimulationError(f"{args.events}:1: expected a JSON list of events, found {type(events).__name__}")
    opts = _options(args)
    console = Console(stderr=True)
    show = console.is_terminal and not args.json
    try:
        with Progress(TextColumn("simulating"), BarColumn(), TextColumn("{task.fields[now]}"), TimeElapsedColumn(),
                      console=console, transient=True, disable=not show) as bar:
            task = bar.add_task("sim", total=end, now="")

            def progress(now: int, total: int) -> None:
                bar.update(task, completed=now, now=f"{now / 1e6:.0f}/{total / 1e6:.0f} us")

            dft = _dftree_options(args)
            r = simulate(tables, args.traffic or "", end, events=events, progress=progress if show else None,
                         trace=args.trace, controller="dftree" if dft is not None else None, dftree=dft, **opts)
    except SimulationError as err:
        _name_the_file(err, args)
        if "credit deadlock" in str(err):
            if args.json:
                print(dumps_json({"deadlock": str(err)}))
            else:
                print(f"DEADLOCK: {err}")
            return ExitStatus.FAILURE
        raise
    except ParseError as err:
        _name_the_file(err, args)
        raise
    written = []
    if args.out:
        written = r.write(args.out, args.out_format)
        if not args.no_plots:
            written += r.plot(args.out, title=f"{args.fabric}: {args.traffic or args.trace}")
    if args.json:
        out = r.summary()
        out["files"] = [str(p) for p in written]
        out["flow_table"] = json.loads(r.flows.head(args.flows).to_json(orient="records"))
        if args.controller == "dftree":
            out["dftree_events"] = r.dftree_events
        print(dumps_json(out, indent=2, default=str))
    else:
        print(render(r))
        if args.flows:
            Console(width=120).print(_table(r, args.flows))
        if args.controller == "dftree":
            kinds = [e["kind"] for e in r.dftree_events]
            print(f"dftree: {kinds.count('mark')} hot-spot marks, {kinds.count('trap')} traps, "
                  f"{kinds.count('unmark')} unmarks, {kinds.count('reroute')} reroutes")
        if written:
            print(f"wrote {len(written)} files to {args.out}")
    return ExitStatus.FAILURE if r.dropped else ExitStatus.SUCCESS


def _name_the_file(err: Exception, args: argparse.Namespace) -> None:
    """Re-raises a core error about settings, events, a trace or a traffic
    file with the file's name in front (the core only sees their contents)."""
    text = str(err)
    traffic_file = args.traffic if args.traffic and Path(args.traffic).suffix else None
    for path, marker in ((args.config, "bad configuration"), (args.trace, "trace row"),
                         (traffic_file, "bad traffic spec"), (args.events, "event")):
        if path and marker in text.lower() and path not in text:
            raise type(err)(f"{path}: {text}") from None


def _dftree_options(args: argparse.Namespace) -> Optional[Dict[str, Any]]:
    """dFtree settings from the command line, or None without --controller dftree.

    >>> ns = argparse.Namespace(controller="dftree", dftree_interval="1ms", dftree_threshold=None,
    ...     dftree_utilisation=None, dftree_trap_latency=None, dftree_host_delay=None,
    ...     dftree_max_bandwidth=None, dftree_clear_sweeps=None, dftree_no_reroute=False)
    >>> _dftree_options(ns)
    {'interval': '1ms'}
    """
    if getattr(args, "controller", "none") != "dftree":
        return None
    out: Dict[str, Any] = {}
    for key in ("interval", "threshold", "utilisation", "trap_latency", "host_delay", "max_bandwidth",
                "clear_sweeps"):
        v = getattr(args, f"dftree_{key}")
        if v is not None:
            out[key] = v
    if args.dftree_no_reroute:
        out["reroute"] = False
    return out


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Adds ``sim`` to the top-level parser.

    >>> parser = argparse.ArgumentParser(prog="ibcloud")
    >>> register(parser.add_subparsers())
    >>> a = parser.parse_args(["sim", "ft648", "--route", "ftree", "--traffic", "uniform:load=0.3", "--time", "1ms"])
    >>> a.time, a.out_format
    ('1ms', 'parquet')
    """
    cmd = subparsers.add_parser("sim", help="packet-level simulation (credits, VLs, arbitration, congestion control)",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(cmd)
    cmd.add_argument("--traffic", metavar="SPEC", help="traffic: compact form, JSON text or a .json file")
    cmd.add_argument("--trace", metavar="CSV", help="replay messages time,src,dst,bytes[,sl]")
    cmd.add_argument("--time", default="1ms", help="simulated time (default 1ms)")
    add_out(cmd, "write tables and plots into DIR", dest="out", metavar="DIR")
    cmd.add_argument("--output-format", dest="out_format", default="parquet", choices=["parquet", "csv"],
                     help="table format (default parquet)")
    deprecated(cmd, "--out-format", "--output-format", "out_format", choices=["parquet", "csv"])
    cmd.add_argument("--no-plots", action="store_true", help="do not draw PNG plots")
    cmd.add_argument("--events", metavar="JSON", help="run-time events (link-down, set-lft, set-flow-sl, ...)")
    cmd.add_argument("--config", metavar="JSON", help="settings file (keys as in docs/netsim.md)")
    cmd.add_argument("--mtu", type=int, help="MTU in bytes (default 2048)")
    cmd.add_argument("--vls", type=int, help="operational data VLs (default 1)")
    cmd.add_argument("--buffer-bytes", type=int, help="switch input buffer per port, split across VLs (default 32768)")
    cmd.add_argument("--hca-buffer-bytes", type=int, help="HCA receive buffer per port (default 32768)")
    cmd.add_argument("--host-gbps", type=float, help="HCA injection limit in payload Gb/s")
    cmd.add_argument("--sink-gbps", type=float, help="HCA sink limit in payload Gb/s")
    cmd.add_argument("--pcie", metavar="GEN:LANES", help="set both host limits from a PCIe link (1:8 = 12.9 Gb/s)")
    cmd.add_argument("--link-delay", help="cable propagation delay (default 20ns)")
    cmd.add_argument("--switch-latency", help="switch forwarding latency (default 100ns)")
    cmd.add_argument("--store-and-forward", action="store_true", help="store-and-forward instead of cut-through")
    cmd.add_argument("--cc", choices=["off", "default", "ranadive"], help="IB congestion control preset")
    cmd.add_argument("--vlarb-high", metavar="VL:W,...", help="high-priority VL arbitration table")
    cmd.add_argument("--vlarb-low", metavar="VL:W,...", help="low-priority table (default every VL weight 32)")
    cmd.add_argument("--high-limit", type=int, help="Limit of High Priority (4 KB units; 255 unlimited)")
    cmd.add_argument("--sl2vl", metavar="V,...", help="SL to VL map, 16 entries (default SL mod VLs)")
    cmd.add_argument("--sweep-interval", help="performance sweep interval (default 100us)")
    cmd.add_argument("--xmit-wait-tick", help="XmitWait tick (default 1us)")
    cmd.add_argument("--seed", type=int, help="random seed (default 1)")
    cmd.add_argument("--max-events", type=int, help="event budget")
    cmd.add_argument("--max-packets", type=int, help="packets-in-flight budget")
    cmd.add_argument("--flows", type=int, default=20, metavar="N", help="flows to list (default 20; 0 none)")
    cmd.add_argument("--json", action="store_true", help="print the summary as JSON")
    cmd.add_argument("--controller", choices=["none", "dftree"], default="none",
                     help="control loop at the sweeps: dftree = S003's slow lane (needs --vls 2)")
    cmd.add_argument("--dftree-interval", help="dFtree PM sweep interval (default 2ms)")
    cmd.add_argument("--dftree-threshold", type=float, help="T in XmitWait ticks/s (default 100000)")
    cmd.add_argument("--dftree-utilisation", type=float, help="contributor utilisation cut-off (default 0.5)")
    cmd.add_argument("--dftree-trap-latency", help="PM decision to host action (default 10us)")
    cmd.add_argument("--dftree-host-delay", help="host agent's SL change delay (default 0)")
    cmd.add_argument("--dftree-max-bandwidth", choices=["data", "signalling"],
                     help="utilisation relative to the data (default) or signalling rate")
    cmd.add_argument("--dftree-clear-sweeps", type=int, help="sweeps below T before a mark clears (default 1)")
    cmd.add_argument("--dftree-no-reroute", action="store_true", help="no SM reroute after link failures")
    cmd.set_defaults(run=_sim)
