"""The one way CLI commands get a fabric with forwarding tables: a native
file holding both, or any fabric with ``--lfts`` (opensm-lfts.dump or native
tables) or ``--route ENGINE``; ``--lids`` takes LIDs from an OpenSM guid2lid
file first.

>>> import argparse
>>> p = argparse.ArgumentParser()
>>> add_arguments(p)
>>> args = p.parse_args(["ft324", "--route", "ftree"])
>>> fabric, tables, sls = load(args)
>>> tables.unrouted()
0
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Optional, Tuple

from ibcloud.cli.topo import _load
from ibcloud.exceptions import RoutingError
from ibcloud.fabric import Fabric
from ibcloud.routing import read_tables, route
from ibcloud.tables import ForwardingTables

__all__ = ["add_arguments", "load"]


def add_arguments(cmd: argparse.ArgumentParser) -> None:
    """Adds FABRIC, ``--lfts``, ``--route``, ``--lids`` and ``--format``.

    >>> p = argparse.ArgumentParser()
    >>> add_arguments(p)
    >>> p.parse_args(["f.topo", "--lfts", "x.dump"]).lfts
    'x.dump'
    """
    cmd.add_argument("fabric", metavar="FABRIC", help="fabric file, preset or spec; or a native file with tables")
    cmd.add_argument("--lfts", metavar="FILE", help="forwarding tables: opensm-lfts.dump or a native file")
    cmd.add_argument("--route", metavar="ENGINE", help="route FABRIC with ENGINE first")
    cmd.add_argument("--lids", metavar="GUID2LID", help="take LIDs from this OpenSM guid2lid file first")
    cmd.add_argument("--format", help="format of FABRIC (default: guessed)")


def load(args: argparse.Namespace) -> Tuple[Fabric, ForwardingTables, Optional[Any]]:
    """The fabric, its tables and path SLs (None unless an engine made them).

    >>> p = argparse.ArgumentParser()
    >>> add_arguments(p)
    >>> load(p.parse_args(["ft324"]))
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.RoutingError: give --lfts FILE, --route ENGINE, or a native .ibcf file that holds tables
    """
    if args.route or args.lfts:
        fabric, _ = _load(args.fabric, args.format)
        if args.lids:
            fabric.assign_lids(policy="guid2lid", guid2lid=args.lids)
        if args.route:
            routing = route(fabric, args.route)
            return fabric, routing.tables, routing.path_sls
        _, tables = read_tables(args.lfts, fabric)
        return fabric, tables, None
    if Path(args.fabric).suffix == ".ibcf":
        fabric, tables = read_tables(args.fabric)
        return fabric, tables, None
    raise RoutingError("give --lfts FILE, --route ENGINE, or a native .ibcf file that holds tables")
