"""``ibcloud run``: the main job. Generates a fat-tree (648 nodes by default),
prints its summary, and writes it in every writable format under ``--out``
(plus OpenSM's guid2lid LID cache), reading each file back to check it; then
routes it (ftree by default), writes the tables natively and as opensm-lfts.dump,
and verifies them (reachability, loops, credit loops); finally analyses the
effective bisection bandwidth over random bisections (ORCS's bisect pattern)
and plots its histogram.

>>> import tempfile
>>> from ibcloud.cli.main import main
>>> main(["run", "--preset", "4-ary-2-full", "--bisections", "100", "--out", tempfile.mkdtemp()])  # doctest: +ELLIPSIS
4-ary-2-full: XGFT(2;4,8;1,4)
...
wrote .../4-ary-2-full.ibcf (native, ... bytes; read back: 32 CAs, 12 switches, 64 links)
wrote .../4-ary-2-full.topo (ibnetdiscover, ... bytes; read back: 32 CAs, 12 switches, 64 links)
wrote .../4-ary-2-full.net (ibsim, ... bytes; read back: 32 CAs, 12 switches, 64 links)
wrote .../4-ary-2-full.guid2lid (OpenSM LID cache, ... bytes; read back: 44 LIDs)
routed 4-ary-2-full with ftree in ... ms: 12 switches x 44 LIDs, 0 CA LIDs unrouted
wrote .../4-ary-2-full-ftree.ibcf (native: fabric and tables) and .../4-ary-2-full-ftree-lfts.dump (opensm-lfts.dump)
verified: CA and router pairs: 992 (32 sources x 32 destination LIDs, 12 switches)
  reachability: all 992 pairs reachable
...
  credit loops: none ...
bisect bandwidth over 100 random bisections (seed 1): mean ... of peak ...
0
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List, Optional, Tuple

from ibcloud.cli._display import print_summary, progress
from ibcloud.cli.main import ExitStatus
from ibcloud.fabric import Fabric
from ibcloud.formats import formats
from ibcloud.generate import FatTreeParams
from ibcloud.routing import route, write_tables
from ibcloud.verify import verify
from ibcloud.analysis import analyze
from ibcloud.tables import read_guid2lid, write_guid2lid

__all__ = ["register"]


def _counts(fabric: Fabric) -> str:
    return f"{fabric.num_cas} CAs, {fabric.num_switches} switches, {fabric.num_links} links"


def _run(args: argparse.Namespace) -> ExitStatus:
    """Generate a fabric, print its summary and write it in every format.

    Writes PRESET.ibcf (native), PRESET.topo (ibnetdiscover), PRESET.net
    (ibsim) and PRESET.guid2lid (OpenSM's LID cache) under --out and reads
    each back; a file that does not read back to the same fabric makes the
    run fail (status 1).
    """
    params = FatTreeParams.parse(args.preset)
    with progress(f"generating {args.preset}"):
        fabric = params.build()
    print_summary(fabric.summary(), f"{args.preset}: {params}")

    args.out.mkdir(parents=True, exist_ok=True)
    written: List[Tuple[Path, str, str, Optional[str]]] = []
    with progress("writing") as step:
        for fmt in (f for f in formats() if f["can_write"]):
            path = args.out / f"{args.preset}.{fmt['extension']}"
            step(f"writing {path}")
            fabric.write(path, fmt["name"])
            step(f"reading back {path}")
            back = Fabric.read(path, fmt["name"])
            problem = fabric.topology_difference(back)
            if problem is None and back.guid2lid() != fabric.guid2lid():
                problem = "LIDs differ"
            written.append((path, str(fmt["name"]), _counts(back), problem))
        path = args.out / f"{args.preset}.guid2lid"
        step(f"writing {path}")
        write_guid2lid(fabric.guid2lid(), path)
        lids = read_guid2lid(path)
        written.append((path, "OpenSM LID cache", f"{len(lids)} LIDs", None if lids == fabric.guid2lid() else "LIDs differ"))

    with progress(f"routing with {args.engine}"):
        routing = route(fabric, args.engine)
    unrouted = routing.tables.unrouted()

    status = ExitStatus.SUCCESS
    for path, name, counts, problem in written:
        print(f"wrote {path} ({name}, {path.stat().st_size:,} bytes; read back: {counts})")
        if problem is not None:
            print(f"ibcloud: {path} does not read back to the same fabric: {problem}", file=sys.stderr)
            status = ExitStatus.FAILURE

    print(
        f"routed {args.preset} with {args.engine} in {routing.seconds * 1000:.1f} ms: "
        f"{routing.tables.num_switches} switches x {fabric.max_lid} LIDs, {unrouted} CA LIDs unrouted"
    )
    native = args.out / f"{args.preset}-{args.engine}.ibcf"
    dump = args.out / f"{args.preset}-{args.engine}-lfts.dump"
    write_tables(routing.tables, native)
    write_tables(routing.tables, dump)
    print(f"wrote {native} (native: fabric and tables) and {dump} (opensm-lfts.dump)")
    with progress("verifying"):
        report = verify(routing)
    lines = report.text.rstrip().splitlines()
    print("verified: " + lines[0] + "".join(f"\n  {line}" for line in lines[1:]))
    if unrouted or not report.ok:
        status = ExitStatus.FAILURE

    with progress(f"analysing {args.bisections} random bisections"):
        bisect = analyze(routing, "bisect", runs=args.bisections, seed=args.seed)
    e = bisect.ebb()
    plot = args.out / f"{args.preset}-{args.engine}-bisect.png"
    bisect.plot(plot, title=f"{args.preset} routed by {args.engine}: effective bisection bandwidth")
    print(
        f"bisect bandwidth over {args.bisections} random bisections (seed {args.seed}): mean {e['mean']:.4f} of peak "
        f"(min {e['min']:.4f}, p5 {e['p5']:.4f}, median {e['p50']:.4f}, max {e['max']:.4f}); "
        f"routes by max congestion: "
        + ", ".join(f"{c:g}: {s * 100:.1f}%" for c, s in zip(bisect.hist_max_cong["max_cong"], bisect.hist_max_cong["share"]))
    )
    print(f"plotted the histograms to {plot}")
    if bisect.broken_flows:
        status = ExitStatus.FAILURE
    return status


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Adds ``run`` to the top-level parser.

    >>> parser = argparse.ArgumentParser(prog="ibcloud")
    >>> register(parser.add_subparsers())
    >>> args = parser.parse_args(["run"])
    >>> args.preset, str(args.out)
    ('ft648', 'out')
    """
    doc = (_run.__doc__ or "").strip()
    run = subparsers.add_parser("run", help=doc.splitlines()[0], description=doc)
    run.add_argument("--out", type=Path, default=Path("out"), metavar="DIR", help="output directory (default: ./out)")
    run.add_argument("--preset", default="ft648", help="preset or spec to generate (default: ft648)")
    run.add_argument("--engine", default="ftree", help="routing engine (default: ftree)")
    run.add_argument("--bisections", type=int, default=1000, help="random bisections to analyse (default: 1000)")
    run.add_argument("--seed", type=int, default=1, help="seed of the bisections (default: 1)")
    run.set_defaults(run=_run)
