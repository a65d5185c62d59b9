"""``ibcloud reproduce NAME [OPTIONS]``: rerun a paper's experiments and print
our numbers beside the paper's.

``ibcloud reproduce --list`` shows the reproductions;
``ibcloud reproduce NAME --help`` shows a reproduction's options. Each one is
a module named in :data:`REPRODUCTIONS` with ``configure(parser)`` (adds its
options) and ``run(args) -> int`` (exit status: 0 when every check of what
counts as reproduced passes, 1 when one fails); the module is imported only
when it runs, so adding one costs the other commands nothing.

>>> from ibcloud.cli.main import main
>>> main(["reproduce", "--list"])  # doctest: +ELLIPSIS
delay  Paper VI: ...
0
"""

from __future__ import annotations

import argparse
import importlib
from typing import Dict, Tuple

from ibcloud.cli.main import ExitStatus
from ibcloud.exceptions import IbcloudError

__all__ = ["REPRODUCTIONS", "register"]

#: Name → (module with ``configure`` and ``run``, one-line description).
REPRODUCTIONS: Dict[str, Tuple[str, str]] = {
    "delay": ("ibcloud.delay.reproduction",
              "Paper VI: workload delay as a QoS metric; utilisation- vs delay-based VM consolidation"),
    "reconfig": ("ibcloud.reconfig_reproduction",
                 "Papers III/IV: sub-tree reconfiguration, NoFTree, SlimUpdate, metabase-aided routing"),
    "pftree": ("ibcloud.pftree.reproduction",
               "Seed 002: pFTree, pFTree-Ext isolation and pFTree-Wt balance (Figs. 10-11, 13-15, Table 4)"),
    "vswitch": ("ibcloud.vswitch.reproduction",
                "Papers II/V: SR-IOV vSwitch — Table I/2, FTreeMinRC marking (Table 3), Fig. 8 migration campaign"),
    "sa-cache": ("ibcloud.sa.reproduction",
                 "Paper I: SA path-record caching — Table V, Figs. 5-7, cache bound, OpenSM flood on ibsim"),
}


def _run(args: argparse.Namespace) -> int:
    if args.list or not args.name:
        if not args.list:
            raise IbcloudError("give a reproduction NAME (ibcloud reproduce --list shows them)")
        for name, (_, what) in REPRODUCTIONS.items():
            print(f"{name:<6} {what}")
        return ExitStatus.SUCCESS
    if args.name not in REPRODUCTIONS:
        raise IbcloudError(f"unknown reproduction '{args.name}' (known: {', '.join(REPRODUCTIONS)})")
    module = importlib.import_module(REPRODUCTIONS[args.name][0])
    parser = argparse.ArgumentParser(prog=f"ibcloud reproduce {args.name}", description=module.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    module.configure(parser)
    try:
        options = parser.parse_args(args.options)
    except SystemExit as exit:  # --help, or a usage error (status 2)
        return exit.code if isinstance(exit.code, int) else int(ExitStatus.ERROR)
    return int(module.run(options))


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Adds ``reproduce`` to the top-level parser.

    >>> parser = argparse.ArgumentParser(prog="ibcloud")
    >>> register(parser.add_subparsers())
    >>> args = parser.parse_args(["reproduce", "delay", "--seed", "2", "--json"])
    >>> args.name, args.options
    ('delay', ['--seed', '2', '--json'])
    """
    cmd = subparsers.add_parser("reproduce", help="rerun a paper's experiments beside its numbers",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cmd.add_argument("--list", action="store_true", help="list the reproductions")
    cmd.add_argument("name", nargs="?", metavar="NAME", help=f"which one ({', '.join(REPRODUCTIONS)})")
    cmd.add_argument("options", nargs=argparse.REMAINDER, metavar="...",
                     help="options of the reproduction (see ibcloud reproduce NAME --help)")
    cmd.set_defaults(run=_run)
