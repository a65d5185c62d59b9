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

__all__ = ["ExitStatus", "build_parser", "main"]


class ExitStatus(enum.IntEnum):
    """How a run ended.

    >>> int(ExitStatus.ERROR)
    2
    """

    SUCCESS = 0  # ran, and everything checked out
    FAILURE = 1  # ran, and found a problem (e.g. a file that does not read back)
    ERROR = 2  # could not run: bad input, bad parameters, a missing file


#: The subcommands, in the order ``--help`` lists them: the module that
#: registers them, and each command's one-line help. ``main`` imports only
#: the module of the command being run (``ibcloud --help`` and ``--version``
#: import none of them, and so none of the Rust core, numpy or pandas);
#: the others get a stub parser with the same name and help, which
#: ``tests/unit/test_hardening.py`` checks against the real ones.
COMMANDS: "list[tuple[str, dict[str, str]]]" = [
    ("ibcloud.cli.topo", {"topo": "generate, inspect and convert fabrics"}),
    ("ibcloud.cli.route", {"route": "compute forwarding tables, or compare two table sets"}),
    ("ibcloud.cli.verify", {"verify": "check forwarding tables: reachability, loops, credit loops"}),
    ("ibcloud.cli.analyze", {"analyze": "congestion analysis of forwarding tables (ORCS metrics)"}),
    ("ibcloud.cli.run", {"run": "The tour: the default virtualized cloud built, routed, verified, migrated, "
                                "analysed and reported."}),
    ("ibcloud.cli.consolidate", {"consolidate": "pack a trace's VMs onto hosts by delay or utilisation"}),
    ("ibcloud.cli.reproduce", {"reproduce": "rerun a paper's experiments beside its numbers"}),
    ("ibcloud.cli.event", {"event": "apply a fabric event and re-route (full, subtree, slimupdate, metabase)"}),
    ("ibcloud.cli.sim", {"sim": "packet-level simulation (credits, VLs, arbitration, congestion control)"}),
    ("ibcloud.cli.partitions", {"partitions": "read partitions.conf, check tables against partitions"}),
    ("ibcloud.cli.vswitch", {"vswitch": "SR-IOV vSwitch LID capacity and virtualized fabrics",
                             "migrate": "live-migrate a VM and reconfigure the subnet",
                             "migrate-sim": "simulate a migration pattern (Paper V)"}),
    ("ibcloud.cli.campaign", {"campaign": "run a declarative experiment campaign on Dask",
                              "results": "query a campaign's results with DuckDB SQL",
                              "report": "render a results directory as a static HTML report"}),
    ("ibcloud.cli.sa", {"sa": "subnet administration: resolve path records, flood an SM"}),
    ("ibcloud.cli.host", {"host": "virtualized hosts: CPU schedulers, VMM-bypass/SR-IOV HCAs, IBMon"}),
    ("ibcloud.cli.sm", {"sm": "ibcloud's own subnet manager (libibumad; ibsim via umad2sim)"}),
    ("ibcloud.cli.agent", {"agent": "run a capping, DRX or Sphinx policy on this host's cgroups and OpenSM"}),
    ("ibcloud.cli.qos", {"qos": "QoS (SL2VL, VL arbitration, high limit) as OpenSM options",
                         "cc": "congestion control (switch/CA settings, CCT) as OpenSM options"}),
]


def version() -> str:
    """The version, without importing the Rust core (``ibcloud._version``;
    ``ibcloud.__version__``, the core's, is the same string).

    >>> import ibcloud
    >>> version() == ibcloud.__version__
    True
    """
    from ibcloud._version import VERSION

    return VERSION


class _Version(argparse.Action):
    """``--version``, looked up only when asked for."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"ibcloud {version()}")
        parser.exit()


def build_parser(only: Optional[str] = "") -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered (``only=""``,
    the default). With ``only=NAME`` just that command's module is imported
    and the others are stubs that answer the top-level ``--help``; with
    ``only=None`` every command is a stub (what :func:`main` uses for
    ``ibcloud --help`` and an unknown command).

    >>> build_parser().parse_args(["topo", "info", "ft648", "--json"]).json
    True
    """
    import importlib

    parser = argparse.ArgumentParser(
        prog="ibcloud",
        description="Tools for virtualized InfiniBand HPC clouds.",
    )
    parser.add_argument("--version", action=_Version, help="show program's version number and exit")
    commands = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND", required=True)
    for module, names in COMMANDS:
        if only == "" or only in names:
            importlib.import_module(module).register(commands)
        else:
            for name, help in names.items():
                commands.add_parser(name, help=help, add_help=False)
    from ibcloud.cli._args import harden

    return harden(parser)  # every int/float option range-checked, named in the error


def _command_of(argv: Sequence[str]) -> Optional[str]:
    """The subcommand named in ``argv`` (the first word that is not an
    option: the top level has no option taking a value), or None."""
    known = {name for _, names in COMMANDS for name in names}
    for word in map(str, argv):
        if word == "--":
            return None
        if not word.startswith("-"):
            return word if word in known else None
    return None


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
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # the commonest question, answered without building the parser
        print(f"ibcloud {version()}")
        return int(ExitStatus.SUCCESS)
    parser = build_parser(only=_command_of(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit:  # --help, --version and usage errors
        return exit.code if isinstance(exit.code, int) else int(ExitStatus.ERROR)
    from ibcloud.cli import _outputs
    from ibcloud.exceptions import IbcloudError

    command = getattr(args, "command_path", ())
    try:
        _outputs.check(command, args)
        status = args.run(args)
        if int(status) != ExitStatus.ERROR:
            _outputs.mark_done(command, args)
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
