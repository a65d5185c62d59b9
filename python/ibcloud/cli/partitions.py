"""``ibcloud partitions``: read and check partition configurations.

* ``partitions parse FILE`` reads an OpenSM partitions.conf the way OpenSM
  3.3.23 does and lists its partitions, policies and OpenSM's warnings; a
  syntax error is reported with file, line and column (exit status 2).
* ``partitions check FABRIC --partitions FILE (--lfts DUMP | --route ENGINE)``
  validates forwarding tables (ours or OpenSM's) against the configuration:
  per partition the switch-to-switch links its routes use, those it shares
  with other partitions, and its VL; a ``phy`` partition must share none, a
  ``vlane`` partition none on its VL. Exit status 1 when a policy fails.
  ``--route pftree-ext`` (or ``pftree``, ``pftree-wt``) routes with the
  partitions and checks with the VLs the engine assigned; with ``--lfts``,
  ``--path-sls`` gives each partition's VL (SL of its first member pair).

>>> import tempfile, pathlib
>>> from ibcloud.cli.main import main
>>> p = pathlib.Path(tempfile.mkdtemp()) / "partitions.conf"
>>> _ = p.write_text("Default=0x7fff : ALL=full ;\\nt1=0x1, isolation=phy : ALL_CAS=full ;\\n")
>>> main(["partitions", "parse", str(p)])  # doctest: +ELLIPSIS
partition ...
0
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Dict, List, Optional

from ibcloud.cli._routed import add_arguments
from ibcloud.cli.main import ExitStatus
from ibcloud.cli.topo import _load
from ibcloud.partitions import PartitionConfig, check, report_frame, route
from ibcloud.safeio import dumps_json

__all__ = ["register"]


def _parse(args: argparse.Namespace) -> ExitStatus:
    """Read a partitions.conf and list it."""
    conf = PartitionConfig.read(args.file)
    rows = [
        {"partition": p.name, "pkey": None if p.pkey is None else f"0x{p.pkey:04x}", "isolation": p.isolation or "-",
         "sl": "-" if p.sl is None else p.sl, "members": len(p.members), "line": p.line}
        for p in conf.partitions
    ]
    if args.json:
        print(dumps_json({"global_isolation": conf.global_isolation, "partitions": rows,
                          "warnings": conf.warnings}, indent=2))
    else:
        import pandas

        print(pandas.DataFrame(rows, columns=["partition", "pkey", "isolation", "sl", "members", "line"])
              .to_string(index=False))
        print(f"global isolation: {conf.global_isolation or 'not set (best-effort)'}")
        for w in conf.warnings:
            print(f"warning: {w}", file=sys.stderr)
    return ExitStatus.SUCCESS


def _check(args: argparse.Namespace) -> ExitStatus:
    """Validate tables against a partition configuration."""
    conf = PartitionConfig.read(args.partitions)
    warnings: List[str] = list(conf.warnings)
    vls: Optional[List[int]] = None
    if args.route and args.route.startswith("pftree"):
        fabric, _ = _load(args.fabric, args.format)
        if args.lids:
            fabric.assign_lids(policy="guid2lid", guid2lid=args.lids)
        routing = route(fabric, args.route, conf, isolation=args.isolation)
        tables, vls = routing.tables, routing.vls
        warnings += routing.warnings
    else:
        from ibcloud.cli._routed import load

        fabric, tables, sls = load(args)
        if args.path_sls:
            from ibcloud.verify import read_path_sls_any as read_path_sls

            sls = read_path_sls(args.path_sls)
        if sls is not None:
            # A partition's VL: the SL of its first member pair (identity SL2VL).
            members, _ = conf.resolve(fabric)
            vls = []
            for name in dict.fromkeys(members["partition"]):
                lids = members[members["partition"] == name]["lid"].tolist()
                vls.append(sls.get(lids[0], lids[1]) if len(lids) > 1 else 0)
    report, resolve_warnings = check(tables, conf, isolation=args.isolation, vls=vls)
    warnings += resolve_warnings
    out: Dict[str, Any] = {**report, "warnings": warnings}
    if args.json:
        print(dumps_json(out, indent=2))
    else:
        print(report_frame(report).to_string(index=False))
        for p in report["partitions"]:
            for s in p["shared"][: args.max_links]:
                print(f"  {p['name']}: 0x{s['from']:016x}/{s['port']} -> 0x{s['to']:016x} shared with "
                      f"{', '.join(s['with'])}{' (same VL)' if s['same_vl'] else ''}")
        for v in report["violations"]:
            print(f"violation: {v}")
        for w in warnings:
            print(f"warning: {w}", file=sys.stderr)
    return ExitStatus.SUCCESS if not report["violations"] else ExitStatus.FAILURE


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Adds ``partitions`` (``parse``, ``check``) to the top-level parser.

    >>> parser = argparse.ArgumentParser(prog="ibcloud")
    >>> register(parser.add_subparsers())
    >>> args = parser.parse_args(["partitions", "check", "ft648", "--partitions", "p.conf", "--route", "ftree"])
    >>> args.partitions, args.route
    ('p.conf', 'ftree')
    """
    cmd = subparsers.add_parser("partitions", help="read partitions.conf, check tables against partitions",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = cmd.add_subparsers(dest="partitions_command", metavar="SUBCOMMAND", required=True)
    parse = sub.add_parser("parse", help="read a partitions.conf as OpenSM does")
    parse.add_argument("file", metavar="FILE")
    parse.add_argument("--json", action="store_true", help="print JSON")
    parse.set_defaults(run=_parse)
    chk = sub.add_parser("check", help="per-partition shared links and VLs of forwarding tables")
    add_arguments(chk)
    chk.add_argument("--partitions", required=True, metavar="FILE", help="OpenSM partitions.conf")
    chk.add_argument("--path-sls", metavar="FILE", help="path SLs (ibcloud-path-sls.dump) giving the partitions' VLs")
    chk.add_argument("--isolation", choices=["strict", "best-effort"], help="global policy (overrides the file)")
    chk.add_argument("--max-links", type=int, default=5, metavar="N", help="shared links listed per partition")
    chk.add_argument("--json", action="store_true", help="print JSON")
    chk.set_defaults(run=_check)
