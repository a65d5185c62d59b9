"""Entry point of the ``ibcloud`` command: parse the arguments, run the
subcommand, return an :class:`ExitStatus`.

Errors the user can fix (bad input files, unknown presets, invalid
parameters, missing files) are reported as ``ibcloud: error: <message>`` on
stderr with status 2, never as a traceback.

>>> main(["--version"])  # doctest: +ELLIPSIS
ibcloud ...
0
"""

from __future__ import annotations

import argparse
import enum
import os
import sys
from typing import Optional, Sequence

from ibcloud import __version__
from ibcloud.exceptions import IbcloudError

__all__ = ["ExitStatus", "build_parser", "main"]


class ExitStatus(enum.IntEnum):
    """How a run ended.

    >>> int(ExitStatus.ERROR)
    2
    """

    SUCCESS = 0  # ran, and everything checked out
    FAILURE = 1  # ran, and found a problem (e.g. a file that does not read back)
    ERROR = 2  # could not run: bad input, bad parameters, a missing file


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered.

    >>> build_parser().parse_args(["topo", "info", "ft648", "--json"]).json
    True
    """
    from ibcloud.cli import (
        analyze, campaign, consolidate, event, host, partitions, reproduce, route, run, sa, sim, topo, verify, vswitch,
    )
    from ibcloud.cli import sm

    parser = argparse.ArgumentParser(
        prog="ibcloud",
        description="Tools for virtualized InfiniBand HPC clouds.",
    )
    parser.add_argument("--version", action="version", version=f"ibcloud {__version__}")
    commands = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND", required=True)
    topo.register(commands)
    route.register(commands)
    verify.register(commands)
    analyze.register(commands)
    run.register(commands)
    consolidate.register(commands)
    reproduce.register(commands)
    event.register(commands)
    sim.register(commands)
    partitions.register(commands)
    vswitch.register(commands)
    campaign.register(commands)
    sa.register(commands)
    host.register(commands)
    sm.register(commands)
    from ibcloud.cli._args import harden

    return harden(parser)  # every int/float option range-checked, named in the error


def _describe(err: BaseException) -> str:
    if isinstance(err, OSError) and err.filename is not None and err.strerror:
        return f"{err.filename}: {err.strerror}"
    if isinstance(err, UnicodeDecodeError):
        return f"input is not UTF-8 text: byte 0x{err.object[err.start]:02x} at offset {err.start}"
    if isinstance(err, MemoryError):
        return "out of memory (an input far larger than expected?)"
    if isinstance(err, RecursionError):
        return "input nested too deeply"
    return str(err) or type(err).__name__


def _report(err: BaseException) -> None:
    # Every message is bounded and escaped here, whatever raised it: a
    # hostile file must not reach the terminal through an error message.
    from ibcloud.safeio import bounded

    print(f"ibcloud: error: {bounded(_describe(err))}", file=sys.stderr)
    cause = err.__cause__
    while cause is not None:
        print(f"  caused by: {bounded(_describe(cause), 500)}", file=sys.stderr)
        cause = cause.__cause__


# Raised by readers of user files (json, tomllib, csv, pyarrow, int()/float()
# of file content) for bad input; reported as errors, not tracebacks. Set
# IBCLOUD_DEBUG=1 to see the traceback of one of these instead.
_INPUT_ERRORS = (ValueError, OverflowError, UnicodeError, MemoryError, RecursionError, EOFError)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs ``ibcloud`` with ``argv`` (default: the process arguments) and
    returns the exit status.

    >>> main(["topo", "info", "ft999"])
    2
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit:  # --help, --version and usage errors
        return exit.code if isinstance(exit.code, int) else int(ExitStatus.ERROR)
    try:
        status = args.run(args)
    except BrokenPipeError:
        # The reader went away (`ibcloud topo presets | head`): not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        status = ExitStatus.SUCCESS
    except KeyboardInterrupt:
        print("ibcloud: interrupted", file=sys.stderr)
        return 130
    except (IbcloudError, OSError) as err:
        _report(err)
        status = ExitStatus.ERROR
    except _INPUT_ERRORS as err:
        if os.environ.get("IBCLOUD_DEBUG"):
            raise
        _report(err)
        status = ExitStatus.ERROR
    return int(status)

if __name__ == "__main__":
    sys.exit(main())
