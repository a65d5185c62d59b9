"""``ibcloud campaign run|check|kinds``, ``ibcloud results query`` and
``ibcloud report``: run a campaign file on Dask, query its results with
DuckDB, render the HTML report (docs/platform.md).

>>> import pathlib, tempfile
>>> from ibcloud.cli.main import main
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "c.toml").write_text('[[experiment]]\\nkind = "route"\\ntopology = "4-ary-2-full"\\n')
>>> main(["campaign", "check", str(d / "c.toml")])
c: 1 task(s) (route: 1)
0
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

from ibcloud.cli._args import add_out, deprecated
from ibcloud.cli.main import ExitStatus
from ibcloud.safeio import dumps_json

__all__ = ["register"]


def _check(args: argparse.Namespace) -> int:
    from ibcloud.campaign import load

    campaign = load(args.file)
    kinds = collections.Counter(t.kind for t in campaign.tasks)
    if args.json:
        print(dumps_json({"name": campaign.name, "tasks": len(campaign.tasks), "kinds": dict(kinds),
                          "task_list": [{"task": t.hash, "experiment": t.experiment, "settings": t.settings}
                                        for t in campaign.tasks] if args.verbose else None}, indent=2))
        return ExitStatus.SUCCESS
    print(f"{campaign.name}: {len(campaign.tasks)} task(s) ("
          + ", ".join(f"{k}: {n}" for k, n in kinds.items()) + ")")
    if args.verbose:
        for task in campaign.tasks:
            print(f"  {task.hash}  {task.experiment:<16} {json.dumps(task.settings, sort_keys=True)}")
    return ExitStatus.SUCCESS


def _run(args: argparse.Namespace) -> int:
    from ibcloud.campaign import load, render, run

    campaign = load(args.file)
    results = args.results or Path("out") / "campaigns" / campaign.name
    summary = run(campaign, results, scheduler=args.scheduler, workers=args.workers, progress=True,
                  force=args.force)
    page = render(results, args.report) if args.report else None
    if args.json:
        print(dumps_json({"tasks": summary.tasks, "ran": summary.ran, "skipped": summary.skipped,
                          "failed": summary.failed, "problems": summary.problems, "seconds": summary.seconds,
                          "results": str(results), "report": str(page) if page else None}))
    else:
        print(f"{campaign.name}: {summary.tasks} task(s): {summary.ran} ran, {summary.skipped} already done, "
              f"{summary.failed} failed, {summary.problems} reported a problem; {summary.seconds:.1f} s")
        print(f"results in {results}" + (f"; report {page}" if page else ""))
    if summary.failed:
        print(f"ibcloud: {summary.failed} task(s) failed (see {Path(results) / 'failed'}); "
              "rerun to retry them", file=sys.stderr)
    return ExitStatus.SUCCESS if summary.complete and not summary.problems else ExitStatus.FAILURE


def _kinds(args: argparse.Namespace) -> int:
    from ibcloud.campaign import KINDS

    if args.json:
        print(dumps_json({name: {"description": kind.description,
                                 "params": {p: {"type": str(v.type), "required": v.required, "default": v.default,
                                                "choices": list(v.choices) if v.choices else None, "doc": v.doc}
                                            for p, v in kind.params.items()}}
                          for name, kind in KINDS.items()}, indent=2, default=str))
        return ExitStatus.SUCCESS
    for name, kind in KINDS.items():
        print(f"{name}: {kind.description}")
        for pname, p in kind.params.items():
            default = "required" if p.required else f"default {json.dumps(p.default)}"
            extra = f"; one of {', '.join(p.choices)}" if p.choices else ""
            print(f"  {pname} ({p.type}, {default}{extra}): {p.doc}")
    return ExitStatus.SUCCESS


def _query(args: argparse.Namespace) -> int:
    import pandas as pd

    from ibcloud.campaign import query

    frame = query(args.results, args.sql)
    if args.json:
        print(frame.to_json(orient="records"))
    elif args.csv:
        frame.to_csv(sys.stdout, index=False)
    else:
        with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
            print(frame.to_string(index=False))
    return ExitStatus.SUCCESS


def _report(args: argparse.Namespace) -> int:
    from ibcloud.campaign import render
    from ibcloud.exceptions import CampaignError

    if not (Path(args.results) / "results").is_dir():
        raise CampaignError(f"{args.results}: not a results directory (no results/ folder)")
    page = render(args.results, args.out, force=args.force)
    if args.json:
        files = sorted(str(p.relative_to(page.parent)) for p in page.parent.rglob("*")
                       if p.is_file() and not p.name.startswith("."))
        print(dumps_json({"report": str(page), "results": str(args.results), "files": files}, indent=2))
    else:
        print(f"wrote {page}")
    return ExitStatus.SUCCESS


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Adds ``campaign``, ``results`` and ``report`` to the top-level parser.

    >>> parser = argparse.ArgumentParser(prog="ibcloud")
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["campaign", "run", "x.toml", "--scheduler", "tcp://h:8786"]).scheduler
    'tcp://h:8786'
    """
    campaign = subparsers.add_parser("campaign", help="run a declarative experiment campaign on Dask",
                                     description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = campaign.add_subparsers(dest="action", required=True, metavar="ACTION")
    run = sub.add_parser("run", help="run a campaign file's unfinished tasks")
    run.add_argument("file", type=Path, metavar="FILE", help="campaign file (TOML)")
    add_out(run, "results directory (default: out/campaigns/NAME)", "--results", "-r", dest="results", metavar="DIR",
            type=Path)
    run.add_argument("--scheduler", metavar="ADDR",
                     help="Dask scheduler tcp://HOST:PORT (default: a local cluster; 'inline' runs in-process)")
    run.add_argument("--workers", type=int, metavar="N", help="local cluster worker processes (default: CPUs, max 4)")
    run.add_argument("--report", type=Path, metavar="DIR", help="also render the HTML report into DIR")
    run.add_argument("--force", action="store_true",
                     help="add to a results directory that holds another campaign's results or foreign files")
    run.add_argument("--json", action="store_true", help="print the summary as JSON")
    run.set_defaults(run=_run)
    check = sub.add_parser("check", help="validate a campaign file and count its tasks")
    check.add_argument("file", type=Path, metavar="FILE")
    check.add_argument("-v", "--verbose", action="store_true", help="list every task with its hash and settings")
    check.add_argument("--json", action="store_true", help="print JSON")
    check.set_defaults(run=_check)
    kinds = sub.add_parser("kinds", help="list the task kinds and their parameters")
    kinds.add_argument("--json", action="store_true", help="print JSON")
    kinds.set_defaults(run=_kinds)

    results = subparsers.add_parser("results", help="query a campaign's results with DuckDB SQL")
    rsub = results.add_subparsers(dest="action", required=True, metavar="ACTION")
    q = rsub.add_parser("query", help="run SQL over the views 'results' (every row) and 'tasks'")
    q.add_argument("results", type=Path, metavar="DIR")
    q.add_argument("sql", metavar="SQL")
    fmt = q.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="rows as JSON records")
    fmt.add_argument("--csv", action="store_true", help="rows as CSV")
    q.set_defaults(run=_query)

    report = subparsers.add_parser("report", help="render a results directory as a static HTML report")
    report.add_argument("results", type=Path, metavar="RESULTS")
    report.add_argument("-o", "--out", type=Path, default=Path("report"), metavar="DIR",
                        help="report directory (default: ./report)")
    report.add_argument("--force", action="store_true", help="overwrite an index.html ibcloud did not write")
    report.add_argument("--json", action="store_true", help="print what was written as JSON")
    report.set_defaults(run=_report)
