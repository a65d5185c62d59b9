"""``ibcloud verify``: check forwarding tables, ours or OpenSM's.

``verify FABRIC [--lfts FILE]`` walks the tables of every CA pair (switch
pairs too with ``--include-switches``): reachability, loops and dead ends,
path lengths, routes per link, and credit loops on the channel dependency
graph. FABRIC is a native file holding tables (``ibcloud route -o X.ibcf``),
or any fabric file/preset with ``--lfts`` an opensm-lfts.dump (and
``--lids`` OpenSM's guid2lid when the fabric file carries no LIDs).
``--route ENGINE`` routes the fabric first. Exit status 1 when a check fails.

>>> from ibcloud.cli.main import main
>>> main(["verify", "ft324", "--route", "minhop"])  # doctest: +ELLIPSIS
CA and router pairs: 104652 ...
credit loops: none ...
0
"""

from __future__ import annotations

import argparse

from ibcloud.cli._routed import add_arguments, load
from ibcloud.cli.main import ExitStatus
from ibcloud.verify import read_path_sls_any, verify
from ibcloud.safeio import dumps_json

__all__ = ["register"]


def _sl2vl(text: str) -> list:
    try:
        vls = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not 16 comma-separated VLs") from None
    if len(vls) != 16 or not all(0 <= v <= 15 for v in vls):
        raise argparse.ArgumentTypeError(f"'{text}' is not 16 comma-separated VLs 0-15")
    return vls


def _verify(args: argparse.Namespace) -> ExitStatus:
    """Verify forwarding tables: reachability, loops, credit loops."""
    # A dump routing to a port the switch lacks is a failed route to report
    # (exit 1), not a file that cannot be read (exit 2): docs/routing.md.
    _, tables, routed_sls = load(args, keep_missing_ports=True)
    path_sls = read_path_sls_any(args.path_sls) if args.path_sls else routed_sls
    report = verify(tables, path_sls=path_sls, include_switches=args.include_switches,
                    credit_loops=not args.no_credit_loops, per_link=args.per_link, sl2vl=args.sl2vl)
    print(dumps_json(report.data, indent=2) if args.json else report.text.rstrip())
    return ExitStatus.SUCCESS if report.ok else ExitStatus.FAILURE


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Adds ``verify`` to the top-level parser.

    >>> parser = argparse.ArgumentParser(prog="ibcloud")
    >>> register(parser.add_subparsers())
    >>> args = parser.parse_args(["verify", "f.topo", "--lfts", "opensm-lfts.dump", "--json"])
    >>> args.fabric, args.lfts, args.json
    ('f.topo', 'opensm-lfts.dump', True)
    """
    cmd = subparsers.add_parser("verify", help="check forwarding tables: reachability, loops, credit loops",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(cmd)
    cmd.add_argument("--path-sls", metavar="FILE", help="path SLs (ibcloud-path-sls.dump) for the credit-loop check")
    cmd.add_argument("--sl2vl", type=_sl2vl, metavar="V0,..,V15", help="SL-to-VL map (default: identity)")
    cmd.add_argument("--include-switches", action="store_true", help="switch LIDs are sources and destinations too")
    cmd.add_argument("--no-credit-loops", action="store_true", help="skip the credit-loop check")
    cmd.add_argument("--per-link", action="store_true", help="list every link's route count (with --json)")
    cmd.add_argument("--json", action="store_true", help="print the report as JSON")
    cmd.set_defaults(run=_verify)
