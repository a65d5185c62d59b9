"""``ibcloud analyze``: ORCS-style congestion analysis of forwarding tables.

``analyze FABRIC (--lfts FILE | --route ENGINE) --pattern bisect --runs 10000
--seed 1`` lays a communication pattern over the CA ports (or ``--nodes``,
``--guids``, ``--count N --subset rand``) in levels and reports per run the
fraction of peak bandwidth (acc_band; over random bisections the effective
bisection bandwidth), the congestion histogram over all routes
(hist_max_cong), sum_max_cong, dep_max_delay and the busiest links.
``--matrix CSV`` analyses a weighted traffic matrix instead. ``--order FILE``
(ORCS's GUID list or OpenSM's opensm-ftree-ca-order.dump) or ``--order
ftree`` fixes the first ranks. ``--json`` prints everything, ``--csv PREFIX``
writes the tables, ``--plot PNG`` the histograms. Exit status 1 when flows
do not arrive (broken paths are counted and listed, not dropped).

>>> from ibcloud.cli.main import main
>>> main(["analyze", "ft324", "--route", "ftree", "--pattern", "shift", "--order", "ftree", "--no-shuffle"])  # doctest: +ELLIPSIS
pattern shift over 324 endpoints, 1 run of 323 levels, 104652 flows...
acc_band (fraction of peak bandwidth): mean 1.0000 ...
hist_max_cong (routes by the congestion of their busiest link; BW 1.0000):
       1     104652 100.00% ...
...
edge forwarding index (routes per switch-to-switch link, all CA pairs): max 306, mean 306.0, min 306
...
0
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import List, Optional


from ibcloud.analysis import Analysis, analyze, patterns
from ibcloud.cli._routed import add_arguments, load
from ibcloud.cli.main import ExitStatus
from ibcloud.exceptions import AnalysisError
from ibcloud.safeio import dumps_json

__all__ = ["register", "render"]


def _words(text: str) -> List[str]:
    """Items of ``a,b c`` or of ``@FILE`` (separated by commas or blanks, # comments)."""
    if text.startswith("@"):
        from ibcloud.safeio import read_text

        text = read_text(text[1:])
    return [w for line in text.splitlines() for w in line.split("#")[0].replace(",", " ").split()]


def _lid_list(text: str) -> List[int]:
    """LIDs from ``1,2,0x10`` or ``@FILE``."""
    try:
        words = _words(text)
        lids = [int(w, 0) for w in words]
    except ValueError:
        from ibcloud.safeio import excerpt

        bad = next(w for w in _words(text) if not _is_int(w))
        raise AnalysisError(f"--nodes {text if text.startswith('@') else ''}: {excerpt(bad)} is not a LID"
                            .replace(" :", ":")) from None
    if text.startswith("@") and not lids:
        raise AnalysisError(f"--nodes {text}: no LIDs in {text[1:]} (an empty or comment-only file)")
    for lid in lids:
        if not 0 < lid <= 0xBFFF:
            raise AnalysisError(f"--nodes {text if text.startswith('@') else ''}: LID {lid} is outside 0x0001-0xBFFF"
                                .replace(" :", ":"))
    return lids


def _is_int(word: str) -> bool:
    try:
        int(word, 0)
        return True
    except ValueError:
        return False


def _bar(n: int, top: int, width: int = 30) -> str:
    return "█" * (0 if top == 0 else max(1 if n else 0, round(width * n / top)))


def render(a: Analysis, links: int = 5) -> str:
    """The text report.

    >>> from ibcloud import Fabric, route
    >>> a = analyze(route(Fabric.generate("4-ary-2-full"), "ftree"), "gather", shuffle=False)
    >>> print(render(a).splitlines()[0])
    pattern gather over 32 endpoints, 1 run of 1 level, 31 flows, paths precomputed
    """
    s = a.summary()
    out: List[str] = []
    plural = lambda n, w: f"{n} {w}" + ("" if n == 1 else "s")  # noqa: E731
    out.append(f"pattern {s['pattern']} over {s['endpoints']} endpoints, {plural(s['runs'], 'run')} of "
               f"{plural(s['levels'], 'level')}, {s['flows']} flows, "
               f"paths {'precomputed' if s['precomputed_paths'] else 'walked per flow'}")
    e = s["acc_band"]
    if e.get("count"):
        out.append(f"acc_band (fraction of peak bandwidth): mean {e['mean']:.4f}  min {e['min']:.4f}  "
                   f"p5 {e['p5']:.4f}  median {e['p50']:.4f}  p95 {e['p95']:.4f}  max {e['max']:.4f}")
    for key in ("max_cong", "sum_max_cong", "dep_max_delay"):
        m = s[key]
        if m.get("count"):
            out.append(f"{key}: mean {m['mean']:.2f}  min {m['min']:g}  max {m['max']:g}")
    if s["runs"] > 1 and e.get("count"):
        out.append("hist_acc_band (runs per 0.05 bin):")
        h = a.hist_acc_band()
        top = int(h["runs"].max())
        for lo, hi, n in zip(h["low"], h["high"], h["runs"]):
            if n:
                out.append(f"  {lo:4.2f}-{hi:4.2f} {int(n):>8} {_bar(int(n), top)}")
    out.append(f"hist_max_cong (routes by the congestion of their busiest link; BW {s['hist_max_cong_bandwidth']:.4f}):")
    hist = a.hist_max_cong
    top = int(hist["routes"].max()) if len(hist) else 0
    for c, n, share in zip(hist["max_cong"], hist["routes"], hist["share"]):
        out.append(f"  {c:>6g} {int(n):>10} {share * 100:6.2f}% {_bar(int(n), top)}")
    out.append(f"links used: {s['links_used']}, highest load in one level {s['link_load_max']:g}, "
               f"mean load per run {s['link_load_mean']:.3f}")
    efi = s.get("forwarding_index") or {}
    if efi:
        out.append(f"edge forwarding index (routes per switch-to-switch link, all CA pairs): max {efi['max']}, "
                   f"mean {efi['mean']:.1f}, min {efi['min']}")
    for b in s["busiest_links"][:links]:
        out.append(f"  '{b['node']}' port {b['port']} -> '{b['remote_node']}' port {b['remote_port']}: "
                   f"max {b['max']:g}, mean {b['mean']:.3f}")
    if s["order_skipped"]:
        out.append(f"node order: {s['order_skipped']} entries name no endpoint and were skipped")
    if s["broken_flows"]:
        out.append(f"BROKEN: {s['broken_flows']} flows do not arrive (left out of the metrics); first ones:")
        for b in s["broken"][:10]:
            out.append(f"  run {b['run']} level {b['level']}: LID {b['src_lid']} -> LID {b['dst_lid']}: {b['failure']}")
    return "\n".join(out)


def _analyze(args: argparse.Namespace) -> ExitStatus:
    """Analyse congestion of a pattern over forwarding tables."""
    _, tables, _ = load(args)
    a = analyze(
        tables,
        args.pattern,
        runs=args.runs,
        seed=args.seed,
        pattern_arg=args.pattern_arg,
        lids=_lid_list(args.nodes) if args.nodes else None,
        guids=[int(g, 16) for g in _words(args.guids)] if args.guids else None,
        count=args.count,
        subset=args.subset,
        order=args.order,
        shuffle=not args.no_shuffle,
        matrix=args.matrix,
        threads=args.threads,
        progress=sys.stderr.isatty() and not args.json,
    )
    if args.csv:
        prefix = Path(args.csv)
        prefix.parent.mkdir(parents=True, exist_ok=True)
        from ibcloud.safeio import atomic_write

        atomic_write(f"{prefix}-runs.csv", a.runs.to_csv(index=False))
        atomic_write(f"{prefix}-hist_max_cong.csv", a.hist_max_cong.to_csv(index=False))
        atomic_write(f"{prefix}-links.csv", a.links.to_csv(index=False))
    if args.plot:
        Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
        a.plot(args.plot, title=f"{args.fabric}: {a.pattern}")
    if args.json:
        print(dumps_json(a.summary(), indent=2, default=_json_default))
    else:
        print(render(a, links=args.links))
        if args.plot:
            print(f"plot: {args.plot}")
    return ExitStatus.FAILURE if a.broken_flows else ExitStatus.SUCCESS


def _json_default(v: object) -> object:
    if isinstance(v, float) and math.isnan(v):
        return None
    if hasattr(v, "item"):
        return v.item()  # numpy scalars
    return str(v)


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Adds ``analyze`` to the top-level parser.

    >>> parser = argparse.ArgumentParser(prog="ibcloud")
    >>> register(parser.add_subparsers())
    >>> a = parser.parse_args(["analyze", "f.topo", "--lfts", "x", "--pattern", "shift", "--runs", "3"])
    >>> a.pattern, a.runs, a.seed
    ('shift', 3, 0)
    """
    cmd = subparsers.add_parser("analyze", help="congestion analysis of forwarding tables (ORCS metrics)",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(cmd)
    cmd.add_argument("--pattern", default="bisect", metavar="NAME",
                     help=f"communication pattern (default bisect): {', '.join(patterns())}")
    cmd.add_argument("--pattern-arg", metavar="ARG", help="pattern argument (neighbor: count; recdbl: fold)")
    cmd.add_argument("--matrix", metavar="CSV", help="a traffic matrix (src,dst[,weight][,level] LIDs) instead")
    cmd.add_argument("--runs", type=int, default=1, help="runs, each with a fresh random node order (default 1)")
    cmd.add_argument("--seed", type=int, default=0, help="seed of the runs' random streams (default 0)")
    cmd.add_argument("--nodes", metavar="LIDS", help="endpoints: LIDs '1,2,0x10' or @FILE (default: all CA ports)")
    cmd.add_argument("--guids", metavar="GUIDS", help="endpoints: port or node GUIDs (hex) or @FILE")
    cmd.add_argument("--count", type=int, metavar="N", help="use N of the endpoints, picked by --subset")
    cmd.add_argument("--subset", default="rand", choices=["rand", "guid_asc", "guid_desc", "linear_bfs"],
                     help="how --count picks endpoints (default rand)")
    cmd.add_argument("--order", metavar="FILE|ftree",
                     help="fixed rank order first: a GUID list, OpenSM's opensm-ftree-ca-order.dump, or 'ftree'")
    cmd.add_argument("--no-shuffle", action="store_true", help="do not shuffle the endpoints between runs")
    cmd.add_argument("--threads", type=int, metavar="N", help="worker threads (default: all cores)")
    cmd.add_argument("--links", type=int, default=5, metavar="N", help="busiest links to list (default 5)")
    cmd.add_argument("--json", action="store_true", help="print the report as JSON")
    cmd.add_argument("--csv", metavar="PREFIX", help="write PREFIX-runs.csv, -hist_max_cong.csv, -links.csv")
    cmd.add_argument("--plot", metavar="PNG", help="write the acc_band and max-congestion histograms")
    cmd.set_defaults(run=_analyze)
