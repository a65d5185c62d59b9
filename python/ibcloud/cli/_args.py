"""Checked number arguments for every subcommand.

``build_parser`` passes the finished parser through :func:`harden`: every
option declared ``type=int`` becomes a whole number in 0..2**63-1 and every
``type=float`` a finite number, so ``--runs -1``, ``--workers -1``,
``--seed 1e99`` or ``--duration nan`` are refused by argparse with the
option named (exit 2) instead of reaching the Rust core as an
``OverflowError`` or a hang. Options that need more (at least 1, a LID) use
:func:`integer` / :func:`real` directly; :data:`MINIMUM` names the counts
that must be at least 1 wherever they appear.

>>> import argparse
>>> p = argparse.ArgumentParser(prog="x", exit_on_error=False)
>>> _ = p.add_argument("--runs", type=int)
>>> harden(p).parse_args(["--runs", "3"]).runs
3
>>> try:
...     p.parse_args(["--runs", "-1"])
... except argparse.ArgumentError as err:
...     print(err)
argument --runs: -1 is below the minimum 1
"""

from __future__ import annotations

import argparse
import math
from typing import Callable, Optional

__all__ = ["integer", "real", "harden", "lid", "MINIMUM"]

I64_MAX = (1 << 63) - 1

#: Options that count something that must happen at least once.
MINIMUM = {
    "--runs": 1, "--workers": 1, "--bisections": 1, "--threads": 1, "--traffic-runs": 1, "--vfs": 1,
    "--mtu": 256, "--vls": 1, "--mifs": 1, "--rounds": 1, "--k": 1, "--pairs": 1, "--window": 1,
    "--paths-per-leaf": 1, "--count": 1, "--vcpus": 1, "--buffer-bytes": 1, "--hca-buffer-bytes": 1,
    "--max-events": 1, "--max-packets": 1, "--dftree-clear-sweeps": 1, "--timeout-ms": 1, "--max-vls": 1,
}


def integer(low: int = 0, high: int = I64_MAX) -> Callable[[str], int]:
    """An argparse type: a whole number (decimal or 0x-hex) in ``low..high``.

    >>> integer(1, 10)("0x3")
    3
    """
    def parse(text: str) -> int:
        try:
            value = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below the minimum {low}")
        if value > high:
            raise argparse.ArgumentTypeError(f"{text[:40]} is above the maximum {high}")
        return value
    parse.__name__ = "integer"
    return parse


def real(low: float = -math.inf, high: float = math.inf) -> Callable[[str], float]:
    """An argparse type: a finite number in ``low..high`` (no NaN, no inf).

    >>> real(0)("2.5")
    2.5
    """
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a number") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text[:40]} is not a finite number")
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value:g} is outside {low:g}..{high:g}")
        return value
    parse.__name__ = "number"
    return parse


_LID = integer(1, 0xBFFF)


def lid(text: str) -> int:
    """An argparse type: a unicast LID, 0x0001-0xBFFF.

    >>> lid("0x10"), lid("49151")
    (16, 49151)
    """
    return _LID(text)


def _option(action: argparse.Action) -> Optional[str]:
    longs = [s for s in action.option_strings if s.startswith("--")]
    return longs[0] if longs else None


def help_text(text: Optional[str]) -> Optional[str]:
    """A docstring as help text: the doctest examples (from the first
    ``>>>`` line on) are for the test suite, not for ``--help``.

    >>> help_text("Does X.\\n\\n>>> main(['x'])\\n0\\n")
    'Does X.'
    """
    if not text or ">>>" not in text:
        return text
    lines = text.splitlines()
    cut = next(i for i, line in enumerate(lines) if line.lstrip().startswith(">>>"))
    return "\n".join(lines[:cut]).rstrip()


def harden(parser: argparse.ArgumentParser, path: tuple = ()) -> argparse.ArgumentParser:
    """Replaces plain ``int``/``float`` types in ``parser`` and all its
    subparsers by checked ones (see the module docstring), and strips
    doctest examples from descriptions and help; gives every command that
    writes ``--force`` and records its name in ``args.command_path``
    (:mod:`ibcloud.cli._outputs`); returns it.

    >>> p = argparse.ArgumentParser(prog="x", description="Does X.\\n\\n>>> x()\\n")
    >>> _ = p.add_argument("--load", type=float)
    >>> harden(p).description, p.parse_args(["--load", "0.5"]).load
    ('Does X.', 0.5)
    """
    from ibcloud.cli._outputs import add_force

    parser.description = help_text(parser.description)
    if path:
        add_force(parser, path)
        parser.set_defaults(command_path=path)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            names = {}
            for name, sub in action.choices.items():
                names.setdefault(id(sub), (name, sub))
            for name, sub in names.values():
                harden(sub, path + (name,))
            for choice in action._choices_actions:
                choice.help = help_text(choice.help)
            continue
        action.help = help_text(action.help)
        name = _option(action)
        if action.type is int:
            action.type = integer(MINIMUM.get(name or "", 0))
        elif action.type is float:
            action.type = real()
    return parser


class _Deprecated(argparse.Action):
    """An old spelling of an option: works as before, says once what replaced it."""

    def __init__(self, option_strings, dest, replacement: str = "", **kwargs):
        self.replacement = replacement
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        import sys

        print(f"ibcloud: warning: {option_string} is deprecated; use {self.replacement}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def deprecated(cmd: argparse.ArgumentParser, old: str, new: str, dest: str, **kwargs) -> None:
    """Adds ``old`` as a hidden alias of the option ``new`` (same ``dest``),
    so scripts written for the old spelling keep working.

    >>> p = argparse.ArgumentParser(prog="x")
    >>> _ = p.add_argument("-o", "--out", dest="output")
    >>> deprecated(p, "--write", "-o/--out", "output")
    >>> p.parse_args(["--write", "f"]).output
    'f'
    """
    cmd.add_argument(old, dest=dest, action=_Deprecated, replacement=new, help=argparse.SUPPRESS, **kwargs)


def add_out(cmd: argparse.ArgumentParser, help: str, *old: str, dest: str = "output", metavar: str = "OUT",
            **kwargs) -> None:
    """The output option of a command, ``-o/--out``, with ``old`` spellings
    kept as hidden deprecated aliases (docs/cli.md).

    >>> p = argparse.ArgumentParser(prog="x")
    >>> add_out(p, "file to write", "--output")
    >>> p.parse_args(["-o", "a"]).output, p.parse_args(["--output", "b"]).output
    ('a', 'b')
    """
    cmd.add_argument("-o", "--out", dest=dest, metavar=metavar, help=help, **kwargs)
    for name in old:
        deprecated(cmd, name, "-o/--out", dest, metavar=metavar, **{k: v for k, v in kwargs.items() if k == "type"})
