"""``ibcloud route``: compute forwarding tables, or compare two table sets.

* ``route FABRIC --engine NAME [-o OUT]`` routes a fabric file, preset or spec
  with an engine (``ibcloud route --list`` shows them) and writes the tables:
  ``.ibcf`` as the native format (fabric and tables), anything else as
  OpenSM's ``opensm-lfts.dump`` (loadable with ``opensm -R file -U OUT``).
  ``--lids GUID2LID`` takes the LIDs from OpenSM's cache first, so the tables
  fit a fabric OpenSM configured.
* ``route --compare A B [--fabric FABRIC]`` prints, per switch, the entries and
  64-LID blocks (SMPs) in which two table sets differ; exit status 1 when they
  differ. Dumps need ``--fabric``; native files carry their fabric.
* ``route FABRIC --engine pftree-ext --partitions partitions.conf
  [--isolation strict|best-effort] [--weights FILE] [--variant SWITCH]``
  routes partition-aware (``pftree``, ``pftree-ext``, ``pftree-wt``; see
  docs/pftree.md) and prints each partition's links, shared links and VL;
  ``--qos-dir DIR`` writes partitions.conf with the SLs, opensm-qos.conf and
  qos-policy.conf for OpenSM, ``--psl``/``--sl2vl-dump`` ibdmchk's inputs.

>>> from ibcloud.cli.main import main
>>> main(["route", "--list"])  # doctest: +ELLIPSIS
ftree ...
0
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Dict, Optional

from ibcloud.cli._args import add_out, deprecated
from ibcloud.cli.main import ExitStatus
from ibcloud.cli.topo import _load
from ibcloud.exceptions import RoutingError
from ibcloud.fabric import Fabric
from ibcloud.routing import engines, read_guid_list, read_tables, route, write_tables
from ibcloud.safeio import dumps_json

__all__ = ["register"]


def _route(args: argparse.Namespace) -> ExitStatus:
    """Route a fabric with an engine and write its forwarding tables."""
    from ibcloud.cli._routed import give_lids

    fabric, label = _load(args.fabric, args.format)
    give_lids(fabric, args)
    if args.roots:
        _warn_unknown(fabric, args.roots, "switch", "ERR AB24/AB25: root switch GUID not found")
    if args.cn_guids:
        _warn_unknown(fabric, args.cn_guids, "port", "ERR AB1E: compute node GUID not found")
    if args.engine.startswith("pftree"):
        if args.order or args.order_by_traffic:
            raise RoutingError("--order and --order-by-traffic need --engine noftree")
        return _route_partitioned(args, fabric, label)
    if args.partitions or args.weights or args.isolation:
        raise RoutingError(f"--partitions, --weights and --isolation are for the pftree engines, not {args.engine}")
    if args.order or args.order_by_traffic:
        from ibcloud.reconfig import noftree, order_by_traffic, read_order

        if args.engine != "noftree":
            raise RoutingError("--order and --order-by-traffic need --engine noftree")
        order = read_order(fabric, args.order) if args.order else order_by_traffic(fabric, args.order_by_traffic)
        routing = noftree(fabric, order, roots=read_guid_list(args.roots) if args.roots else None)
    else:
        from ibcloud.cli._routed import lid_hint

        with lid_hint():
            routing = route(
                fabric,
            args.engine,
                roots=read_guid_list(args.roots) if args.roots else None,
                compute_nodes=read_guid_list(args.cn_guids) if args.cn_guids else None,
                max_vls=args.max_vls,
            )
    unrouted = routing.tables.unrouted()
    report: Dict[str, Any] = {
        "fabric": label,
        "engine": args.engine,
        "seconds": round(routing.seconds, 6),
        "switches": routing.tables.num_switches,
        "max_lid": fabric.max_lid,
        "unrouted_entries": unrouted,
        "sls": routing.path_sls.num_sls if routing.path_sls is not None else 1,
    }
    if args.output:
        report["output"] = str(args.output)
        report["output_format"] = write_tables(routing.tables, args.output)
    if args.path_sls:
        if routing.path_sls is None:
            raise RoutingError(f"{args.engine} uses SL 0 for every path here; there are no path SLs to write")
        routing.path_sls.write(args.path_sls)
        report["path_sls"] = str(args.path_sls)
    if args.json:
        print(dumps_json(report, indent=2))
    else:
        print(
            f"{label}: {args.engine} routed {report['switches']} switches x {fabric.max_lid} LIDs "
            f"in {routing.seconds * 1000:.1f} ms; {unrouted} entries unrouted; {report['sls']} SL(s)"
        )
        if args.output:
            print(f"wrote {args.output} ({report['output_format']})")
    return ExitStatus.SUCCESS


def _warn_unknown(fabric: Fabric, path: str, what: str, opensm: str) -> None:
    """Warns (stderr) about GUIDs of a --roots/--cn-guids file that name no
    switch (node GUID) or LID-holding port (port GUID) of the fabric: OpenSM
    logs them and routes without them, and so do we, but not silently."""
    import sys

    if what == "switch":
        nodes = fabric.to_pandas()
        known = {int(g) for g in nodes[nodes.kind == "switch"].guid}
    else:
        known = set(fabric.guid2lid())
    unknown = [g for g in read_guid_list(path) if g not in known]
    for guid in unknown[:10]:
        print(f"ibcloud: warning: {path}: 0x{guid:016x} is not a {what} of the fabric; routed without it "
              f"(OpenSM logs {opensm})", file=sys.stderr)
    if len(unknown) > 10:
        print(f"ibcloud: warning: {path}: {len(unknown) - 10} more unknown GUIDs", file=sys.stderr)


def _route_partitioned(args: argparse.Namespace, fabric: Fabric, label: str) -> ExitStatus:
    """Route with a pftree engine and report the partitions."""
    import sys

    from ibcloud import partitions as pt

    conf = pt.PartitionConfig.read(args.partitions) if args.partitions else None
    routing = pt.route(
        fabric, args.engine, conf, isolation=args.isolation,
        weights=pt.read_weights(args.weights) if args.weights else None,
        max_vls=args.max_vls, variant=args.variant or ["corrected"],
        roots=read_guid_list(args.roots) if args.roots else None,
    )
    report: Dict[str, Any] = {
        "fabric": label, "engine": args.engine, "variant": routing.variant,
        "seconds": round(routing.seconds, 6), "switches": routing.tables.num_switches,
        "unrouted_entries": routing.tables.unrouted(), "vls": routing.vls,
        "partitions": routing.report["partitions"], "violations": routing.report["violations"],
        "warnings": (conf.warnings if conf else []) + routing.warnings,
    }
    if args.output:
        report["output"] = str(args.output)
        report["output_format"] = write_tables(routing.tables, args.output)
    if args.path_sls and routing.path_sls is not None:
        routing.path_sls.write(args.path_sls)
        report["path_sls"] = str(args.path_sls)
    if args.psl or args.sl2vl_dump:
        if not (args.psl and args.sl2vl_dump):
            raise RoutingError("--psl and --sl2vl-dump go together")
        report["ibdmchk_files"] = pt.write_ibdmchk_files(routing, args.psl, args.sl2vl_dump)
    if args.qos_dir:
        qos = Path(args.qos_dir)
        qos.mkdir(parents=True, exist_ok=True)
        if conf is not None:
            routing.configured(conf).write(qos / "partitions.conf")
        pt.write_qos(routing.pkey_sls(), qos, max_vls=args.max_vls or 8)
        report["qos_dir"] = str(qos)
    if args.json:
        print(dumps_json(report, indent=2))
    else:
        print(f"{label}: {args.engine} ({routing.variant}) routed {report['switches']} switches "
              f"in {routing.seconds * 1000:.1f} ms; {report['unrouted_entries']} entries unrouted")
        print(routing.frame().to_string(index=False))
        for w in report["warnings"]:
            print(f"warning: {w}", file=sys.stderr)
        if args.output:
            print(f"wrote {args.output} ({report['output_format']})")
    return ExitStatus.SUCCESS


def _compare(args: argparse.Namespace) -> ExitStatus:
    fabric: Optional[Fabric] = None
    source = args.fabric_for_compare or args.fabric
    if source:
        fabric, _ = _load(source, args.format)
    a_path, b_path = args.compare
    fabric_a, a = read_tables(a_path, fabric)
    _, b = read_tables(b_path, fabric if fabric is not None else fabric_a)
    rows = a.differences(b)
    total_entries = sum(r[2] for r in rows)
    total_blocks = sum(r[3] for r in rows)
    if args.json:
        print(dumps_json({
            "a": str(a_path), "b": str(b_path), "identical": not rows,
            "switches_differing": len(rows), "entries_differing": total_entries, "blocks_differing": total_blocks,
            "switches": [{"guid": f"0x{g:016x}", "description": d, "entries": e, "blocks": k} for g, d, e, k in rows],
        }, indent=2))
    else:
        for guid, desc, entries, blocks in rows:
            print(f"0x{guid:016x} {desc}: {entries} entries, {blocks} blocks differ")
        verdict = "identical" if not rows else f"{len(rows)} switches differ"
        print(f"{a_path} vs {b_path}: {verdict} ({total_entries} entries, {total_blocks} blocks = SMPs)")
    return ExitStatus.SUCCESS if not rows else ExitStatus.FAILURE


def _list(args: argparse.Namespace) -> ExitStatus:
    if args.json:
        print(dumps_json([{"engine": name, "description": description} for name, description in engines()], indent=2))
        return ExitStatus.SUCCESS
    for name, description in engines():
        print(f"{name:<8} {description}")
    return ExitStatus.SUCCESS


def _dispatch(args: argparse.Namespace) -> ExitStatus:
    if args.list:
        return _list(args)
    if args.compare:
        return _compare(args)
    if not args.fabric:
        raise RoutingError("give a FABRIC to route, --compare A B, or --list")
    return _route(args)


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Adds ``route`` to the top-level parser.

    >>> parser = argparse.ArgumentParser(prog="ibcloud")
    >>> register(parser.add_subparsers())
    >>> args = parser.parse_args(["route", "ft648", "--engine", "updn", "-o", "x.dump"])
    >>> args.fabric, args.engine, str(args.output)
    ('ft648', 'updn', 'x.dump')
    """
    cmd = subparsers.add_parser("route", help="compute forwarding tables, or compare two table sets", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    cmd.add_argument("fabric", nargs="?", metavar="FABRIC", help="fabric file, preset or spec")
    cmd.add_argument("--engine", default="ftree", help="routing engine (default: ftree; see --list)")
    add_out(cmd, ".ibcf (native) or an opensm-lfts.dump to write", "--output", type=Path)
    cmd.add_argument("--input-format", dest="format", metavar="F", help="format of FABRIC (default: guessed)")
    deprecated(cmd, "--format", "--input-format", "format")
    cmd.add_argument("--lids", metavar="GUID2LID", help="take LIDs from this OpenSM guid2lid file first")
    cmd.add_argument("--assign-lids", choices=("opensm", "packed"), metavar="POLICY",
                     help="assign LIDs first (opensm: as OpenSM on a fresh subnet; packed), for files without LIDs")
    cmd.add_argument("--roots", metavar="FILE", help="root switch GUIDs, one per line (updn, ftree)")
    cmd.add_argument("--cn-guids", metavar="FILE", help="compute node port GUIDs, one per line (ftree)")
    cmd.add_argument("--max-vls", type=int, metavar="N", help="virtual layers for dfsssp and lash")
    cmd.add_argument("--path-sls", metavar="FILE", help="write the path SLs (dfsssp, lash) as ibcloud-path-sls.dump")
    cmd.add_argument("--order", metavar="FILE", help="noftree: node order (GUID/LID list, ftree CA-order dump)")
    cmd.add_argument("--order-by-traffic", metavar="PATTERN", help="noftree: nodes ranked by the traffic PATTERN sends")
    cmd.add_argument("--partitions", metavar="FILE", help="OpenSM partitions.conf (pftree engines)")
    cmd.add_argument("--isolation", choices=["strict", "best-effort"], help="pFTree-Ext global policy (overrides the file)")
    cmd.add_argument("--weights", metavar="FILE", help="node weights, 'PORT_GUID WEIGHT' per line (pftree-wt)")
    cmd.add_argument("--variant", action="append", metavar="SWITCH",
                     help="pftree reading: corrected (default), literal, or literal-marking, literal-exclusion, "
                          "leaf-by-leaf, alg2-return, vl-for-def, marks-only, grouped (repeatable)")
    cmd.add_argument("--qos-dir", metavar="DIR", help="write partitions.conf with SLs and OpenSM QoS files here (pftree)")
    cmd.add_argument("--psl", metavar="FILE", help="write ibdmchk's path-SL file (pftree, with --sl2vl-dump)")
    cmd.add_argument("--sl2vl-dump", metavar="FILE", help="write an opensm-sl2vl.dump for ibdmchk (pftree)")
    cmd.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two table files instead of routing")
    cmd.add_argument("--fabric", dest="fabric_for_compare", metavar="FABRIC",
                     help="the fabric of the tables compared (needed for opensm-lfts.dump files)")
    cmd.add_argument("--list", action="store_true", help="list the engines")
    cmd.add_argument("--json", action="store_true", help="print JSON")
    cmd.set_defaults(run=_dispatch)
