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
import contextlib
from pathlib import Path
from typing import Any, Iterator, Optional, Tuple

from ibcloud.cli._args import deprecated
from ibcloud.cli.topo import _load
from ibcloud.exceptions import RoutingError
from ibcloud.fabric import Fabric
from ibcloud.routing import read_tables, route
from ibcloud.tables import ForwardingTables

__all__ = ["add_arguments", "give_lids", "load"]


@contextlib.contextmanager
def lid_hint() -> Iterator[None]:
    """Adds what to give to a "port has no LID" error of the core.

    >>> with lid_hint():
    ...     pass
    """
    from ibcloud.exceptions import IbcloudError

    try:
        yield
    except IbcloudError as err:
        if "has no LID" in str(err) and "--assign-lids" not in str(err):
            raise type(err)(f"{err} (the fabric file has none: give --lids GUID2LID or --assign-lids opensm)") from None
        raise


def give_lids(fabric: Fabric, args: argparse.Namespace) -> None:
    """Applies ``--lids GUID2LID`` or ``--assign-lids POLICY``; a fabric with
    no LIDs and neither option is an error that says what to give.

    >>> from ibcloud import Fabric
    >>> f = Fabric.generate("4-ary-2-full")
    >>> give_lids(f, argparse.Namespace(lids=None, assign_lids="packed")); f.max_lid
    44
    """
    if getattr(args, "lids", None):
        fabric.assign_lids(policy="guid2lid", guid2lid=args.lids)
    elif getattr(args, "assign_lids", None):
        fabric.assign_lids(policy=args.assign_lids)
    if fabric.max_lid == 0:
        raise RoutingError(f"{getattr(args, 'fabric', 'the fabric')}: no port has a LID; give --lids GUID2LID "
                           "(OpenSM's cache) or --assign-lids opensm")


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
    cmd.add_argument("--assign-lids", choices=("opensm", "packed"), metavar="POLICY",
                     help="assign LIDs first (opensm: as OpenSM on a fresh subnet; packed), for files without LIDs")
    cmd.add_argument("--input-format", dest="format", metavar="F", help="format of FABRIC (default: guessed)")
    deprecated(cmd, "--format", "--input-format", "format")


def load(
    args: argparse.Namespace, *, keep_missing_ports: bool = False
) -> Tuple[Fabric, ForwardingTables, Optional[Any]]:
    """The fabric, its tables and path SLs (None unless an engine made them).
    ``keep_missing_ports`` keeps dump entries naming a port the switch does
    not have (``verify`` reports them as failed routes); every other command
    refuses them with the dump's file and line.

    >>> p = argparse.ArgumentParser()
    >>> add_arguments(p)
    >>> load(p.parse_args(["ft324"]))
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.RoutingError: give --lfts FILE, --route ENGINE, or a native .ibcf file that holds tables
    """
    if args.route or args.lfts:
        fabric, _ = _load(args.fabric, args.format)
        give_lids(fabric, args)
        if args.route:
            with lid_hint():
                routing = route(fabric, args.route)
            return fabric, routing.tables, routing.path_sls
        _, tables = read_tables(args.lfts, fabric, keep_missing_ports=keep_missing_ports)
        return fabric, tables, None
    if Path(args.fabric).suffix == ".ibcf":
        fabric, tables = read_tables(args.fabric)
        return fabric, tables, None
    raise RoutingError("give --lfts FILE, --route ENGINE, or a native .ibcf file that holds tables")
