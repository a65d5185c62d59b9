"""``ibcloud consolidate TRACE``: pack a trace's VMs onto hosts by delay or by
utilisation (Paper VI) and report each host's delay.

* ``--by delay --cap MIN`` admits a VM to a host while the host's total delay
  over the packing days stays within MIN minutes per day, at ``--threshold``
  % of ``--cores`` cores (default 100 % of 16);
* ``--by utilisation --threshold PCT`` fills hosts to PCT % of their cores by
  the VMs' mean demand.

By default the whole trace is used to pack and to judge; ``--pack-days`` and
``--eval-days`` (0-based whole days, e.g. ``0-11`` and ``12``) split it, and
``--cross-validate`` runs every leave-one-day-out split and prints the
paper's statistics over all hosts. ``--placement FILE`` writes ``vm_id,host``
as CSV. TRACE is a plain-layout CSV/Parquet file, a Bitbrains GWA-T-12
directory or an Azure VM CPU readings file or directory (docs/delay.md).

Exit status 1 when a host's delay per evaluation day exceeds ``--cap`` (with
either criterion), 2 on bad input.

>>> import pathlib
>>> from ibcloud.cli.main import main
>>> plain = pathlib.Path(__file__).parents[3] / "fixtures" / "traces" / "plain.csv"
>>> main(["consolidate", str(plain), "--by", "delay", "--cap", "10", "--cores", "4", "--json"])  # doctest: +ELLIPSIS
{
  "trace": {
...
0
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List, Optional

from ibcloud.cli._args import add_out, deprecated
from ibcloud.cli.main import ExitStatus
from ibcloud.safeio import dumps_json

__all__ = ["register", "parse_days"]


def parse_days(text: str) -> List[int]:
    """``"0-3,7"`` → ``[0, 1, 2, 3, 7]``.

    >>> parse_days("0-2,5")
    [0, 1, 2, 5]
    """
    days: List[int] = []
    try:
        for part in text.split(","):
            if "-" in part:
                a, b = part.split("-", 1)
                days.extend(range(int(a), int(b) + 1))
            else:
                days.append(int(part))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a list of days like 0-11 or 0,3,5") from None
    if not days or min(days) < 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a list of days ≥ 0")
    return days


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{value:g} is not positive")
    return value


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{value:g} is negative")
    return value


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _console():
    from rich.console import Console

    console = Console(highlight=False)
    return console if console.is_terminal else Console(highlight=False, width=140)


def _fmt(v: float) -> str:
    if v != v:  # NaN
        return "-"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.2f}"


def _consolidate(args: argparse.Namespace) -> ExitStatus:
    """Pack a trace by delay or utilisation and report every host."""
    from rich.table import Table

    from ibcloud.delay import consolidate
    from ibcloud.delay.campaign import run_campaign, summarise
    from ibcloud.delay.errors import DelayParameterError
    from ibcloud.delay.loaders import read_trace

    if args.by == "delay" and args.cap is None:
        raise DelayParameterError("--by delay needs --cap (the accepted delay in minutes per day)")
    if args.cross_validate and (args.pack_days or args.eval_days):
        raise DelayParameterError("--cross-validate chooses the days itself; leave out --pack-days/--eval-days")
    trace = read_trace(args.trace, args.layout, vmtable=args.vmtable, vcpus=args.vcpus,
                       bad_vms="drop" if args.drop_bad_vms else "error")
    if trace.cleaning.text() and not args.json:
        print(trace.cleaning.text(), file=sys.stderr)
    cap = args.cap if args.by == "delay" else None
    unit = "core-min" if args.unit == "core_minutes" else "min"

    if args.cross_validate:
        result = run_campaign(trace, cores=(args.cores,), util_thresholds=(args.threshold,) if cap is None else (),
                              delay_thresholds=(args.threshold,) if cap is not None else (),
                              caps=(cap,) if cap is not None else (), full_data=False, fit=args.fit, unit=args.unit)
        hosts = result.bins
        stats = summarise(hosts)
        over = int((hosts["delay_per_day"] > args.cap).sum()) if args.cap is not None else 0
        report = {"trace": trace.summary(), "by": args.by, "cap_per_day": args.cap, "threshold": args.threshold,
                  "cores": args.cores, "fit": args.fit, "unit": args.unit, "folds": trace.whole_days,
                  "packings": result.packings, "seconds": round(result.seconds, 3), "statistics": stats,
                  "hosts_over_cap": over}
        if args.json:
            print(dumps_json(report, indent=2))
        else:
            console = _console()
            console.print(f"{trace!r}")
            console.print(f"leave-one-day-out over {trace.whole_days} days, {args.by}"
                          + (f" ≤ {args.cap:g} {unit}/day" if cap is not None else "")
                          + f", θ = {args.threshold:g} %, {args.cores:g} cores: {stats['hosts']} hosts in "
                          f"{result.packings} packings ({result.seconds:.2f} s)")
            table = Table(title="test-day statistics over all hosts of all folds", title_justify="left")
            for h in ("avg delay", "median", "max", "avg fill %", "median fill", "max fill", "% delayed",
                      "delay if >0"):
                table.add_column(h, justify="right")
            table.add_row(*[_fmt(stats[k]) for k in ("avg_delay", "median_delay", "max_delay", "avg_filling",
                                                     "median_filling", "max_filling", "avg_pct_delayed",
                                                     "avg_delay_when_delayed")])
            console.print(table)
            if args.cap is not None:
                console.print(f"{over} host-days above {args.cap:g} {unit}")
        return ExitStatus.FAILURE if over else ExitStatus.SUCCESS

    result = consolidate(trace, by=args.by, cap=cap, threshold=args.threshold, cores=args.cores, fit=args.fit,
                         unit=args.unit, pack_days=args.pack_days, eval_days=args.eval_days)
    rows = result.rows(trace.vm_ids)
    over = [r for r in rows if args.cap is not None and r["delay_per_day"] > args.cap]
    if args.placement:
        from ibcloud.safeio import atomic_write

        lines = ["vm_id,host"] + [f"{vm},{r['host']}" for r in rows for vm in r["vms"]]
        atomic_write(args.placement, "\n".join(lines) + "\n")
    if args.json:
        print(dumps_json({
            "trace": trace.summary(), "spec": result.spec.as_dict(), "pack_segments": result.pack_segments,
            "eval_segments": result.eval_segments, "eval_days": result.eval_days, "hosts": rows,
            "hosts_over_cap": len(over), "placement": str(args.placement) if args.placement else None,
        }, indent=2, default=lambda v: None))
    else:
        console = _console()
        console.print(f"{trace!r}")
        console.print(f"{result.spec.label()}, {args.fit} fit: {_count(len(rows), 'host')}; judged on "
                      f"{result.eval_days:g} day(s) at full capacity")
        table = Table(title_justify="left")
        for h in ("host", "VMs", "load (cores)", f"packing delay ({unit})", f"delay/day ({unit})",
                  f"max delay ({unit})", "% delayed", "filling %"):
            table.add_column(h, justify="right")
        for r in rows:
            table.add_row(str(r["host"]), str(r["n_vms"]), f"{r['packing_load_cores']:.2f}", _fmt(r["packing_delay"]),
                          _fmt(r["delay_per_day"]), _fmt(r["max_delay"]), f"{r['pct_delayed']:.2f}",
                          f"{r['filling_pct']:.1f}", style="red" if r in over else None)
        console.print(table)
        if args.placement:
            console.print(f"wrote {args.placement}")
        if args.cap is not None:
            console.print(f"{len(over)} of {len(rows)} hosts above {args.cap:g} {unit}/day")
    return ExitStatus.FAILURE if over else ExitStatus.SUCCESS


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Adds ``consolidate`` to the top-level parser.

    >>> parser = argparse.ArgumentParser(prog="ibcloud")
    >>> register(parser.add_subparsers())
    >>> args = parser.parse_args(["consolidate", "t.csv", "--by", "delay", "--cap", "10"])
    >>> args.trace, args.by, args.cap, args.cores, args.threshold
    ('t.csv', 'delay', 10.0, 16.0, 100.0)
    """
    cmd = subparsers.add_parser("consolidate", help="pack a trace's VMs onto hosts by delay or utilisation",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cmd.add_argument("trace", metavar="TRACE", help="trace file or directory (plain, Bitbrains or Azure layout)")
    cmd.add_argument("--layout", choices=("plain", "bitbrains", "azure"), help="layout of TRACE (default: guessed)")
    cmd.add_argument("--vmtable", metavar="FILE", help="Azure vmtable with the VMs' core counts")
    cmd.add_argument("--vcpus", type=int, metavar="N", help="Azure: this many vCPUs for every VM")
    cmd.add_argument("--drop-bad-vms", action="store_true",
                     help="drop VMs with gaps or bad samples (the paper's cleaning) instead of stopping")
    cmd.add_argument("--by", choices=("delay", "utilisation"), default="delay", help="packing criterion (default: delay)")
    cmd.add_argument("--cap", type=_non_negative, metavar="MIN",
                     help="accepted total delay per host, minutes per day (needed with --by delay)")
    cmd.add_argument("--threshold", type=_positive, default=100.0, metavar="PCT",
                     help="fill threshold θ in percent of the cores (default: 100)")
    cmd.add_argument("--cores", type=_positive, default=16.0, metavar="K", help="cores per host (default: 16)")
    cmd.add_argument("--fit", choices=("best", "first"), default="best", help="fit rule (default: best)")
    cmd.add_argument("--unit", choices=("wall_minutes", "core_minutes"), default="wall_minutes",
                     help="delay unit (default: wall_minutes)")
    cmd.add_argument("--pack-days", type=parse_days, metavar="DAYS", help="whole days to pack on, e.g. 0-11")
    cmd.add_argument("--eval-days", type=parse_days, metavar="DAYS", help="whole days to judge on, e.g. 12")
    cmd.add_argument("--cross-validate", action="store_true", help="every leave-one-day-out split")
    add_out(cmd, "write the placement (vm_id,host) as CSV", "--placement", dest="placement", metavar="FILE")
    cmd.add_argument("--json", action="store_true", help="print JSON")
    cmd.set_defaults(run=_consolidate)
