"""``ibcloud topo``: generate, inspect and convert fabrics.

* ``topo generate SPEC`` builds a preset or XGFT/PGFT/k-ary-n tree, optionally
  with LMC and random faults, and writes it;
* ``topo info FILE_OR_SPEC`` prints counts per OpenSM rank, LIDs, LFT blocks
  and link rates (``--json`` for machines);
* ``topo convert IN OUT`` converts between formats;
* ``topo presets`` lists the named fabrics of the papers.

>>> from ibcloud.cli.main import main
>>> main(["topo", "info", "ft324", "--json"])  # doctest: +ELLIPSIS
{
  "source": "ft324",
  ...
  "lft_blocks_per_switch": 6,
  ...
}
0
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Tuple

from ibcloud.cli._display import counts, describe, print_summary, progress
from ibcloud.cli._args import add_out, deprecated
from ibcloud.cli.main import ExitStatus
from ibcloud.exceptions import UnsupportedError
from ibcloud.fabric import Fabric
from ibcloud.formats import format_name, formats, guess_format
from ibcloud.generate import FatTreeParams, presets
from ibcloud.safeio import dumps_json

__all__ = ["register"]


def _bounded(low: int, high: int = sys.maxsize) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
        if not low <= value <= high:
            limit = f"at least {low}" if high == sys.maxsize else f"{low} to {high}"
            raise argparse.ArgumentTypeError(f"{value} is out of range ({limit})")
        return value

    return parse


def _format_arg(writable: bool) -> Callable[[str], str]:
    names = [f["name"] for f in formats() if f["can_write"] or not writable]

    def parse(text: str) -> str:
        try:
            name = format_name(text)
        except UnsupportedError:
            name = None
        if name not in names:
            raise argparse.ArgumentTypeError(f"'{text}' is not one of: {', '.join(names)}")
        return name

    return parse


def _looks_like_path(source: str) -> bool:
    path = Path(source)
    return path.exists() or "/" in source or bool(path.suffix)


def _load(source: str, fmt: str | None) -> Tuple[Fabric, str]:
    """A fabric read from a file, or generated from a preset or spec; and its label."""
    if fmt is not None or _looks_like_path(source):
        detected = fmt or guess_format(source) or "detected from content"
        return Fabric.read(source, format=fmt), f"{source} ({detected})"
    params = FatTreeParams.parse(source)
    return params.build(), f"{source}: {params}"


def _generate(args: argparse.Namespace) -> ExitStatus:
    """Generate a fat-tree from a preset or an XGFT/PGFT/K-ary-N spec.

    Writes it to OUT (format from --format or the extension; `-` writes a text
    format to stdout) and prints a one-line summary.
    """
    fmt = args.format
    if args.output not in (None, "-") and fmt is None and guess_format(args.output) is None:
        raise UnsupportedError(f"{args.output}: cannot tell the format from the name; use .ibcf, .topo or .net, or --format")
    with progress(f"generating {args.spec}") as step:
        fabric = Fabric.generate(args.spec, radix=args.radix, rate=args.rate)
        removed = ""
        if args.fail_links or args.fail_switches:
            step("injecting faults")
            fabric, report = fabric.inject_faults(links=args.fail_links, switches=args.fail_switches, seed=args.seed)
            removed = (
                f"; removed {len(report['switches'])} switches and {len(report['links'])} links (seed {args.seed})"
            )
        if args.lmc is not None:
            step("assigning LIDs")
            fabric.assign_lids(lmc=args.lmc)
        target = ""
        if args.output == "-":
            text = fabric.to_text(fmt or "ibnetdiscover")
            sys.stdout.write(text)
        elif args.output is not None:
            step(f"writing {args.output}")
            fabric.write(args.output, fmt)
            target = f" -> {args.output} ({fmt or guess_format(args.output)})"
    if args.json:
        faults = ({"switches": len(report["switches"]), "links": len(report["links"]), "seed": args.seed}
                  if removed else None)
        written = args.output not in (None, "-")
        line = json.dumps({"spec": args.spec, **counts(fabric), "removed": faults,
                           "output": args.output if written else None,
                           "format": (fmt or guess_format(args.output)) if written else None}, indent=2)
    else:
        line = f"{args.spec}: {describe(fabric)}{removed}{target}"
    # With `-o -` the fabric itself is on stdout, so the summary goes to stderr.
    print(line, file=sys.stderr if args.output == "-" else sys.stdout)
    return ExitStatus.SUCCESS


def _info(args: argparse.Namespace) -> ExitStatus:
    """Show counts per OpenSM rank, LIDs, LFT blocks and link rates.

    FILE_OR_SPEC is a fabric file (any readable format) or a preset/spec to
    generate. Files without switch ranks are ranked as OpenSM would.
    """
    with progress(f"loading {args.source}"):
        fabric, label = _load(args.source, args.format)
        if not fabric.ranked:
            fabric.infer_ranks()
        summary = fabric.summary()
    if args.json:
        print(dumps_json({"source": args.source, **summary}, indent=2))
    else:
        print_summary(summary, label)
    return ExitStatus.SUCCESS


def _convert(args: argparse.Namespace) -> ExitStatus:
    """Convert a fabric file from one format to another.

    Formats come from --from/--to or the file names (and, for IN, the content).
    """
    with progress(f"reading {args.input}") as step:
        fabric = Fabric.read(args.input, format=args.source_format)
        step(f"writing {args.output}")
        fabric.write(args.output, format=args.target_format)
    source = args.source_format or guess_format(args.input) or "detected from content"
    target = args.target_format or guess_format(args.output)
    if args.json:
        print(dumps_json({"input": args.input, "input_format": source, "output": args.output,
                          "output_format": target, **counts(fabric)}, indent=2))
    else:
        print(f"{args.input} ({source}) -> {args.output} ({target}): {describe(fabric)}")
    return ExitStatus.SUCCESS


def _presets(args: argparse.Namespace) -> ExitStatus:
    """List the named fabrics with their counts and where they come from."""
    rows = presets()
    if args.json:
        print(dumps_json(rows, indent=2))
        return ExitStatus.SUCCESS
    from rich.console import Console
    from rich.table import Table

    table = Table(title="presets (any XGFT(h;m..;w..), PGFT(h;m..;w..;p..) or K-ary-N works too)")
    table.add_column("name", no_wrap=True)
    for header in ("CAs", "switches", "radix"):
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("spec and source")
    for p in rows:
        radix = str(p["radix"] or "-")
        table.add_row(p["name"], f"{p['cas']:,}", f"{p['switches']:,}", radix, f"{p['spec']}\n{p['source']}")
    Console(highlight=False).print(table)
    return ExitStatus.SUCCESS


def _help(function: Callable[..., Any]) -> Dict[str, str]:
    doc = (function.__doc__ or "").strip()
    return {"help": doc.splitlines()[0], "description": doc}


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Adds ``topo`` and its subcommands to the top-level parser.

    >>> parser = argparse.ArgumentParser(prog="ibcloud")
    >>> register(parser.add_subparsers())
    >>> args = parser.parse_args(["topo", "generate", "ft648", "--fail-links", "3"])
    >>> args.spec, args.fail_links, args.seed
    ('ft648', 3, 0)
    """
    topo = subparsers.add_parser("topo", help="generate, inspect and convert fabrics", description=__doc__)
    commands = topo.add_subparsers(title="commands", dest="topo_command", metavar="COMMAND", required=True)

    gen = commands.add_parser("generate", **_help(_generate))
    gen.add_argument("spec", metavar="SPEC", help="preset (see `ibcloud topo presets`), XGFT(...), PGFT(...) or K-ary-N")
    add_out(gen, "file to write (`-` for stdout); nothing is written without it", "--output")
    gen.add_argument("--output-format", dest="format", type=_format_arg(writable=True), metavar="F",
                     help="output format (default: from OUT's extension)")
    deprecated(gen, "--format", "--output-format", "format", type=_format_arg(writable=True))
    gen.add_argument("--radix", type=_bounded(1, 254), metavar="N", help="switch port count (default: as the spec says)")
    gen.add_argument("--rate", metavar="RATE", help="link rate such as 4xQDR, 4xEDR (default: 4xQDR)")
    gen.add_argument("--lmc", type=_bounded(0, 7), metavar="N", help="LMC for CA ports, 0-7 (default: 0)")
    gen.add_argument("--fail-links", type=_bounded(0), default=0, metavar="N", help="remove N random switch-to-switch links")
    gen.add_argument("--fail-switches", type=_bounded(0), default=0, metavar="N", help="remove N random switches")
    gen.add_argument("--seed", type=_bounded(0, 2**64 - 1), default=0, metavar="S", help="seed of the faults (default: 0)")
    gen.add_argument("--json", action="store_true", help="print the summary as JSON (on stderr with `-o -`)")
    gen.set_defaults(run=_generate)

    info = commands.add_parser("info", **_help(_info))
    info.add_argument("source", metavar="FILE_OR_SPEC", help="fabric file, preset or spec")
    info.add_argument("--json", action="store_true", help="print JSON instead of tables")
    info.add_argument("--input-format", dest="format", type=_format_arg(writable=False), metavar="F",
                      help="format of FILE (default: guessed)")
    deprecated(info, "--format", "--input-format", "format", type=_format_arg(writable=False))
    info.set_defaults(run=_info)

    conv = commands.add_parser("convert", **_help(_convert))
    conv.add_argument("input", metavar="IN", help="fabric file to read")
    conv.add_argument("output", metavar="OUT", help="file to write")
    conv.add_argument("--input-format", dest="source_format", type=_format_arg(writable=False), metavar="F",
                      help="format of IN (default: guessed)")
    conv.add_argument("--output-format", dest="target_format", type=_format_arg(writable=True), metavar="F",
                      help="format of OUT (default: from its extension)")
    deprecated(conv, "--from", "--input-format", "source_format", type=_format_arg(writable=False))
    deprecated(conv, "--to", "--output-format", "target_format", type=_format_arg(writable=True))
    conv.add_argument("--json", action="store_true", help="print the summary as JSON")
    conv.set_defaults(run=_convert)

    pre = commands.add_parser("presets", **_help(_presets))
    pre.add_argument("--json", action="store_true", help="print JSON instead of a table")
    pre.set_defaults(run=_presets)
