"""``ibcloud event``: apply a fabric event and re-route the way you choose.

``event FABRIC (--lfts FILE | --route ENGINE | X.ibcf) EVENT [TARGET...]
--method full|subtree|slimupdate|metabase`` applies EVENT to the fabric whose
tables are given and prints what the re-routing changed: (switch, DLID)
entries, destinations, 64-LID blocks (= SMPs of a differential update),
switches touched, optionally changed source–destination paths
(``--changed-paths``), the time spent, and the verdict of the verification
(all-pairs reachability and credit loops on the new tables, no down→up turn in
the union of old and new). Exit status 1 when the event disconnects nodes or
the verification fails.

Events: ``fail-link NODE PORT`` (or ``NODE:PORT``), ``restore-link``,
``fail-switch NODE``, ``restore-switch NODE``, ``shutdown NODE``, ``boot
NODE``, and ``reorder`` (no change to the fabric: a performance-driven
re-route, e.g. with ``--order``). A NODE is a GUID, ``lid:N``, a node
description or its first word. ``--before "EVENT TARGET"`` (repeatable)
describes the state the tables belong to (e.g. a node already shut down,
so that it can boot).

Methods: ``full`` (ftree, or NoFTree with an order), ``subtree`` (Paper III:
only the smallest sub-tree holding ``--nodes``, by default the node or leaf
of the event), ``slimupdate`` (Paper IV: keep existing port choices),
``metabase`` (Paper IV: stored leaf-to-leaf paths, ``--metabase FILE`` to
keep them between runs). ``--order FILE`` / ``--order-by-traffic PATTERN``
give a node order (NoFTree for full and subtree, Algorithm 5 for metabase).
``-o OUT`` writes the new tables (``.ibcf``: with the fabric after the event).

>>> from ibcloud.cli.main import main
>>> main(["event", "16-ary-2", "--route", "ftree", "shutdown", "hca-00001", "--method", "slimupdate"])
... # doctest: +ELLIPSIS
shutdown hca-00001 -> slimupdate: ... entries ...
verification: ... OK
0
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any, Dict, List, Optional

from ibcloud.cli._routed import add_arguments, load
from ibcloud.cli._args import add_out, deprecated
from ibcloud.cli.main import ExitStatus
from ibcloud.exceptions import ReconfigError
from ibcloud.reconfig import EVENTS, METHODS, order_by_traffic, read_order, reconfigure
from ibcloud.routing import write_tables
from ibcloud.safeio import dumps_json

__all__ = ["register"]


def _before(items: Optional[List[str]]) -> List[Any]:
    out = []
    for text in items or []:
        words = shlex.split(text)
        if not words or words[0] not in EVENTS:
            raise ReconfigError(f"--before '{text}': expected an event ({', '.join(EVENTS)}) and its target")
        out.append((words[0], words[1:]))
    return out


def _text(target: str, report: Dict[str, Any]) -> str:
    c = report["changes"]
    paths = f", {c['changed_paths']} paths" if c.get("changed_paths") is not None else ""
    lines = [
        f"{report['event']}{(' ' + target) if target else ''} -> {report['method']}: "
        f"{c['changed_entries']} entries ({c['changed_destinations']} destinations), "
        f"{c['changed_blocks']} blocks (SMPs) on {c['switches_touched']} switches{paths}; "
        f"{report['seconds'] * 1000:.2f} ms"
    ]
    if report.get("phases"):
        lines.append("phases: " + ", ".join(f"{n} {s * 1000:.2f} ms" for n, s in report["phases"]))
    sub = report.get("subtree")
    if sub:
        lines.append(
            f"sub-tree: {sub['levels']} levels, {len(sub['switches'])} switches, {len(sub['leaves'])} leaves, "
            f"{len(sub['destinations'])} destinations{' (the whole tree)' if sub['full'] else ''}"
        )
    slim = report.get("slimupdate")
    if slim:
        lines.append(f"slimupdate: {slim['kept']} port choices kept, {slim['moved']} moved")
    if report.get("unreachable_pairs"):
        ex = "; ".join(f"{a} - {b}" for a, b in report["unreachable_examples"][:5])
        lines.append(f"disconnected: {report['unreachable_pairs']} node pairs have no path left (e.g. {ex})")
    check = report.get("check")
    if check:
        ok = check["pairs"] == check["reachable"] and check["credit_loop_free"] and not check["updown_violations"]
        turns = len(check["updown_violations"])
        lines.append(
            f"verification: {check['reachable']}/{check['pairs']} pairs reachable, "
            f"{'no credit loop' if check['credit_loop_free'] else 'CREDIT LOOP'}, "
            f"{'no' if not turns else str(turns) + '+'} down->up turns in old + new: {'OK' if ok else 'FAILED'}"
        )
    return "\n".join(lines)


def _event(args: argparse.Namespace) -> ExitStatus:
    """Apply a fabric event and re-route."""
    fabric, tables, _ = load(args)
    before = _before(args.before)
    if before and args.route:
        if args.route != "ftree":
            raise ReconfigError("--before with --route needs --route ftree (the state is routed after the events)")
        tables = reconfigure(fabric, tables, None, method="full", before=before, verify=False).tables
    order = None
    if args.order:
        order = read_order(fabric, args.order)
    elif args.order_by_traffic:
        order = order_by_traffic(fabric, args.order_by_traffic, runs=args.traffic_runs, seed=args.seed)
    event = None if args.event == "reorder" else args.event
    if event is None and args.target:
        raise ReconfigError("reorder takes no target")
    result = reconfigure(
        fabric,
        tables,
        event,
        *args.target,
        method=args.method,
        before=before,
        nodes=args.nodes,
        order=order,
        verify=not args.no_verify,
        paths=args.changed_paths,
        metabase=args.metabase,
        metabase_paths=args.paths_per_leaf,
        disjoint=args.disjoint,
    )
    report = dict(result.report)
    if args.output:
        report["output"] = str(args.output)
        report["output_format"] = write_tables(result.tables, args.output)
    if args.json:
        print(dumps_json(report, indent=2))
    else:
        print(_text(" ".join(args.target), report))
        if args.output:
            print(f"wrote {args.output} ({report['output_format']})")
    return ExitStatus.SUCCESS if result.ok else ExitStatus.FAILURE


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Adds ``event`` to the top-level parser.

    >>> parser = argparse.ArgumentParser(prog="ibcloud")
    >>> register(parser.add_subparsers())
    >>> a = parser.parse_args(["event", "ft324", "--route", "ftree", "fail-link", "sw-L1-0001", "19"])
    >>> a.event, a.target, a.method
    ('fail-link', ['sw-L1-0001', '19'], 'slimupdate')
    """
    cmd = subparsers.add_parser("event", help="apply a fabric event and re-route (full, subtree, slimupdate, metabase)",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(cmd)
    cmd.add_argument("event", choices=EVENTS + ("reorder",), help="what happens")
    cmd.add_argument("target", nargs="*", help="NODE PORT (links) or NODE")
    cmd.add_argument("--method", choices=METHODS, default="slimupdate", help="how to re-route (default: slimupdate)")
    cmd.add_argument("--nodes", nargs="+", metavar="NODE", help="subtree: nodes whose smallest sub-tree is re-routed")
    cmd.add_argument("--order", metavar="FILE", help="node order: GUID/LID list or opensm-ftree-ca-order.dump")
    cmd.add_argument("--order-by-traffic", metavar="PATTERN", help="node order: ranked by the traffic PATTERN sends")
    cmd.add_argument("--traffic-runs", type=int, default=1, metavar="N", help="analysis runs for --order-by-traffic")
    cmd.add_argument("--seed", type=int, default=0, help="seed for --order-by-traffic")
    cmd.add_argument("--before", action="append", metavar="'EVENT TARGET'", help="events the tables already include")
    cmd.add_argument("--metabase", metavar="FILE", help="metabase file to load (if present) and save")
    cmd.add_argument("--paths-per-leaf", type=int, metavar="N", help="metabase paths per leaf (default: max CNs per leaf)")
    cmd.add_argument("--disjoint", action="store_true", help="metabase: link-disjoint spanning trees only")
    cmd.add_argument("--changed-paths", action="store_true", help="also count changed source-destination paths")
    cmd.add_argument("--no-verify", action="store_true", help="skip the verification")
    add_out(cmd, "write the new tables (.ibcf with the fabric, else lfts dump)", "--output")
    cmd.add_argument("--json", action="store_true", help="print JSON")
    cmd.set_defaults(run=_event)
