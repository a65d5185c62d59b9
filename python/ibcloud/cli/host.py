"""``ibcloud host run SCENARIO.toml --out DIR [--json]``: virtualized hosts
on the packet simulator.

A scenario (TOML; docs/host.md) names hosts (PCPUs, credit1 or CFS
scheduler, a VMM-bypass or SR-IOV adapter), VMs (host, pinning, cap,
weight, quota, CQ size), workloads (rdma-write, rdma-read, send, nectere,
memcached; G's skeletons terasort, mrbench, hpl, mapreduce-sort; nas;
each packet-level or fluid) and
controllers (ibmon), a duration and a seed. Every key is checked before
the run; a problem is reported as ``FILE:LINE: path: problem`` with exit
status 2. The run writes per-VM time series (CPU %, bytes, CQEs, polling
time, latency), per-request latencies, workload summaries and controller
actions as Parquet plus summary.json and PNG plots into DIR, and prints a
table (or, with ``--json``, the summary).

>>> import tempfile, pathlib
>>> from ibcloud.cli.main import main
>>> from ibcloud.host import EXAMPLE
>>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "s.toml").write_text(EXAMPLE)
>>> main(["host", "run", str(d / "s.toml"), "--out", str(d / "out"), "--no-plots"])  # doctest: +ELLIPSIS
simulated 0.05 s ...
0
"""

from __future__ import annotations

import argparse
import sys
import time

from ibcloud.cli._args import integer, real
from ibcloud.cli.main import ExitStatus
from ibcloud.safeio import dumps_json

__all__ = ["register"]


def _run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from ibcloud.host import Scenario, run
    from ibcloud.progress import Reporter

    scenario = Scenario.load(args.scenario).check()
    t0 = time.perf_counter()
    # Percent of the simulated time: a bar on a terminal, plain lines (every
    # IBCLOUD_PROGRESS_SECONDS) in logs and CI; none with --json.
    with Reporter("host run", total=100, mode="off" if args.json else "auto") as bar:

        def progress(now: float, end: float) -> None:
            bar.running(f"{now:.3f} of {end:.3f} s simulated")
            while bar.done < min(100, int(100 * now / end) if end else 100):
                bar.advance()

        r = run(scenario, progress=progress)
    wall = time.perf_counter() - t0
    if args.out:
        r.write(args.out, plots=not args.no_plots)
    if args.json:
        s = r.summary()
        s["wall_s"] = wall
        print(dumps_json(s, indent=2))
        return ExitStatus.SUCCESS
    print(f"simulated {r.end_s:.6g} s in {wall:.2f} s wall ({r.events} events)")
    t = Table(box=None)
    for col in ("workload", "vm", "done", "MiB/s", "issue s", "finish s", "lat us (sd)", "PTime s", "CPU s"):
        t.add_column(col)
    for w in r.workloads().to_dict("records"):
        lat = "" if w["latency_mean_us"] is None else f"{w['latency_mean_us']:.1f} ({w['latency_std_us']:.1f})"
        fin = "-" if w["finish_s"] is None or w["finish_s"] != w["finish_s"] else f"{w['finish_s']:.4f}"
        t.add_row(w["name"], w["vm"], str(w["completed"]), f"{w['mib_s']:.1f}", f"{w['issue_s']:.4f}", fin, lat,
                  f"{w['ptime_s']:.4f}", f"{w['cpu_s']:.4f}")
    Console().print(t)
    _print_split(r)
    for c in r.controllers():
        if c.get("kind") == "ibmon":
            print(f"ibmon (overhead model: {c['overhead_model']}):")
            for v in c["vms"]:
                avg = v["average_mib_s"]
                print(f"  {v['vm']}: {'-' if avg is None else f'{avg:.1f}'} MiB/s, lost CQEs {v['lost_cqes']}, "
                      f"stall {v['stall_s']:.6f} s")
    if args.out:
        print(f"wrote {args.out}")
    return ExitStatus.SUCCESS


def _print_split(r) -> None:
    """Nectere's CTime / WTime / PTime (F §5.2) per workload that has them."""
    rows = [w for w in r.workloads().to_dict("records") if w.get("ctime_mean_us") is not None]
    if not rows:
        return
    print("Nectere latency split (docs/host.md), us: mean / p50 / p99")
    print(f"  {'workload':<20} {'latency':>23} {'CTime':>23} {'WTime':>23} {'PTime':>20}")
    for w in rows:
        f = lambda k: " / ".join(f"{w[f'{k}_{q}_us']:.1f}" for q in ("mean", "p50", "p99"))  # noqa: E731
        lat = " / ".join(f"{w[k]:.1f}" for k in ("latency_mean_us", "latency_p50_us", "latency_p99_us"))
        print(f"  {w['name']:<20} {lat:>23} {f('ctime'):>23} {f('wtime'):>23} {f('ptime'):>20}")


def _nectere(args: argparse.Namespace) -> int:
    """``ibcloud host nectere``: Nectere alone (or beside an interferer)."""
    from ibcloud.host import run
    from ibcloud.host.nectere import scenario

    r = run(scenario(size=args.size, service=args.service, depth=args.depth, reply=args.reply,
                     duration=args.duration, interferer=args.interferer, interferer_cap=args.interferer_cap,
                     instances=args.instances))
    if args.out:
        r.write(args.out, plots=not args.no_plots)
    if args.json:
        print(dumps_json(r.summary(), indent=2))
        return ExitStatus.SUCCESS
    print(f"simulated {r.end_s:.6g} s ({r.events} events); F §5.7 layout: clients on host A, servers on host B")
    _print_split(r)
    if args.out:
        print(f"wrote {args.out}")
    return ExitStatus.SUCCESS


def _layout(args: argparse.Namespace) -> int:
    from ibcloud.host.layouts import LAYOUTS, layout, to_toml
    from ibcloud.safeio import atomic_write

    if args.list:
        if args.json:
            print(dumps_json({name: what for name, (what, _) in LAYOUTS.items()}, indent=2))
            return ExitStatus.SUCCESS
        for name, (what, _) in LAYOUTS.items():
            print(f"{name:<20} {what}")
        return ExitStatus.SUCCESS
    if not args.name:
        print("ibcloud: error: host layout: name a layout (--list shows them)", file=sys.stderr)
        return ExitStatus.ERROR
    sc = layout(args.name, args.hosts, args.scale, args.policy, args.sla)
    text = to_toml(sc, f"ibcloud host layout {args.name}" + (f" --policy {args.policy}" if args.policy else "") +
                   f": {LAYOUTS[args.name][0]}\nrun it with: ibcloud host run FILE.toml --out DIR")
    if args.out:
        atomic_write(args.out, text)
    if args.json:
        print(dumps_json({"layout": args.name, "policy": args.policy, "out": args.out, "scenario": sc}, indent=2))
    elif args.out:
        print(f"wrote {args.out}")
    else:
        print(text, end="")
    return ExitStatus.SUCCESS


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Adds ``host`` (with ``run``) to the top-level parser.

    >>> parser = argparse.ArgumentParser(prog="ibcloud")
    >>> register(parser.add_subparsers())
    >>> a = parser.parse_args(["host", "run", "s.toml", "--json"])
    >>> a.scenario, a.json
    ('s.toml', True)
    """
    cmd = subparsers.add_parser("host", help="virtualized hosts: CPU schedulers, VMM-bypass/SR-IOV HCAs, IBMon",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = cmd.add_subparsers(dest="host_command", required=True)
    r = sub.add_parser("run", help="run a TOML scenario", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("scenario", help="scenario file (TOML)")
    r.add_argument("--out", metavar="DIR", help="write Parquet tables, summary.json and plots into DIR")
    r.add_argument("--json", action="store_true", help="print the summary as JSON")
    r.add_argument("--no-plots", action="store_true", help="do not draw PNG plots")
    r.set_defaults(run=_run)
    n = sub.add_parser("nectere", help="run Nectere alone (or beside an interferer) and print CTime/WTime/PTime",
                       description="Nectere (F §5.4) in F §5.7's layout: each instance's client on host A, its "
                       "server on host B, every VM on its own PCPU; prints the latency and its CTime / WTime / "
                       "PTime split (docs/host.md).")
    n.add_argument("--size", default="64k", help="request size (default 64k)")
    n.add_argument("--reply", default="64", help="reply size (default 64 bytes)")
    n.add_argument("--service", default="129.3us", help="server compute per request (default 129.3us, "
                   "the calibration to F's 209 us)")
    n.add_argument("--depth", type=int, default=1, help="requests in flight per client (default 1)")
    n.add_argument("--instances", type=int, default=1, help="identical Nectere instances (F Fig. 20)")
    n.add_argument("--interferer", metavar="SIZE", help="add a Nectere instance of this size (e.g. 2M)")
    n.add_argument("--interferer-cap", type=float, metavar="PCT", help="CPU cap of the interferer's client")
    n.add_argument("--duration", default="200ms", help="simulated time (default 200ms)")
    n.add_argument("--out", metavar="DIR", help="write Parquet tables, summary.json and plots into DIR")
    n.add_argument("--json", action="store_true", help="print the summary as JSON")
    n.add_argument("--no-plots", action="store_true", help="do not draw PNG plots")
    n.set_defaults(run=_nectere)
    lay = sub.add_parser("layout", help="write one of G's experiment layouts as a scenario file",
                         description="Writes a layout of seed 004 G (DRX's Fig. 31 and 36 layouts, Sphinx's Table 8 "
                         "and 9 pairs, the Fig. 40, 41 and 44 motivation runs) as a TOML scenario for "
                         "`ibcloud host run`: the same document `ibcloud reproduce drx|sphinx` runs "
                         "(ibcloud.host.layouts).")
    lay.add_argument("name", nargs="?", help="layout name (--list shows them)")
    lay.add_argument("--list", action="store_true", help="list the layouts")
    lay.add_argument("--policy", help="DRX: eb-dist, hb-dist, eb-local, hb-local, cc-dist, pc-dist, stmax, stmaxq; "
                     "Sphinx: an LP target such as 1:4; fig44: the 2 MB instance's VL weight")
    lay.add_argument("--hosts", type=integer(1, 64), default=8, help="DRX layouts: hosts (default 8, G's)")
    lay.add_argument("--scale", type=real(0.001, 1.0), default=0.1, help="DRX layouts: time scale (default 0.1, as reproduce drx)")
    lay.add_argument("--sla", type=real(1e-9), help="DRX policies: Nectere's per-VM SLA level in CQEs/s (default: run "
                     "Nectere alone first, as reproduce drx does)")
    lay.add_argument("--out", metavar="FILE", help="write the scenario here (default: standard output)")
    lay.add_argument("--json", action="store_true", help="print the scenario document (or, with --list, the "
                     "layouts) as JSON")
    lay.set_defaults(run=_layout)
