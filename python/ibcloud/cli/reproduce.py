"""``ibcloud reproduce NAME [OPTIONS]``: rerun a paper's experiments and print
our numbers beside the paper's.

``ibcloud reproduce --list`` shows the reproductions;
``ibcloud reproduce NAME --help`` shows a reproduction's options. Each one is
a module named in :data:`REPRODUCTIONS` with ``configure(parser)`` (adds its
options) and ``run(args) -> int`` (exit status: 0 when every prediction and
qualitative claim of its registry, ``ibcloud/claims/NAME.toml``, holds, 1
when one does not; calibration and construction rows and wall-clock times
never decide it); the module is imported only when it runs, so adding one
costs the other commands nothing. Every reproduction ends with its
scoreboard; ``ibcloud reproduce all`` also prints the totals per paper,
writes them to ``OUT/scoreboard.json`` and ``OUT/scoreboard.parquet`` and
regenerates ``docs/reproductions/SCOREBOARD.md`` (``--scoreboard FILE``).

>>> from ibcloud.cli.main import main
>>> main(["reproduce", "--list"])  # doctest: +ELLIPSIS
delay  Paper VI: ...
0
"""

from __future__ import annotations

import argparse
import importlib
import re
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Tuple

from ibcloud.cli.main import ExitStatus
from ibcloud.exceptions import IbcloudError
from ibcloud.safeio import dumps_json

if TYPE_CHECKING:
    from ibcloud.campaign.spec import Campaign

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
    "dftree": ("ibcloud.dftree.reproduction",
               "Seed 003: dFtree slow lane for hot-spot flows (Exp. I-IV, parking lot, b_eff rings, 648 nodes)"),
    "sa-cache": ("ibcloud.sa.reproduction",
                 "Paper I: SA path-record caching — Table V, Figs. 5-7, cache bound, OpenSM flood on ibsim"),
    "ibmon": ("ibcloud.host.ibmon", "Seed 004 F R1-R2: IBMon CQ introspection — interval sweep, accuracy, 3 VMs, overhead"),
    "thrashing": ("ibcloud.host.thrashing", "Seed 004 F R3: I/O thrashing under credit1 caps — Table 3, Figs. 12-13"),
    "resex": ("ibcloud.host.resex", "Seed 004 F R5-R8: ResEx — Nectere collocation, BR-cap law, FreeMarket, IOShares"),
    "fares": ("ibcloud.host.fares", "Seed 004 F R4: FaReS Cap-Boost — scaler search, Fig. 17 NAS pairs, Figs. 15-16, 18"),
    "sphinx": ("ibcloud.host.sphinx_reproduction", "Seed 004 G R12-R16: Sphinx — Table 8 LP, Eq. 8, the LP controller"),
    "drx": ("ibcloud.host.drx_reproduction", "Seed 004 G R1-R11: DRX — Symmetric/Asymmetric layouts, EB/HB × Dist/Local"),
}


def _split_out(options: List[str], default: Path) -> Tuple[List[str], Path]:
    """Takes ``--out DIR`` out of a reproduction's options (the runner sets
    it; the task's files are copied there afterwards)."""
    rest: List[str] = []
    out = default
    i = 0
    while i < len(options):
        if options[i] == "--out" and i + 1 < len(options):
            out = Path(options[i + 1])
            i += 2
            continue
        if options[i].startswith("--out="):
            out = Path(options[i].split("=", 1)[1])
        else:
            rest.append(options[i])
        i += 1
    return rest, out


def _campaign(names: List[str], options: List[str]) -> "Campaign":
    """The campaign of a ``reproduce`` command: one task per reproduction."""
    import json

    from ibcloud.campaign.spec import parse

    head = f'[campaign]\nname = "{"reproductions" if len(names) > 1 else "reproduce-" + names[0]}"\n'
    text = head + "".join(f'\n[[experiment]]\nname = "reproduce-{n}"\nkind = "reproduce"\nreproduction = "{n}"\n'
                          f"options = {json.dumps(options)}\n" for n in names)
    return parse(text, "ibcloud reproduce")


def _run(args: argparse.Namespace) -> int:
    if args.list or not args.name:
        if not args.list:
            raise IbcloudError("give a reproduction NAME or 'all' (ibcloud reproduce --list shows them)")
        for name, (_, what) in REPRODUCTIONS.items():
            print(f"{name:<6} {what}")
        return ExitStatus.SUCCESS
    if args.name != "all" and args.name not in REPRODUCTIONS:
        raise IbcloudError(f"unknown reproduction '{args.name}' (known: {', '.join(REPRODUCTIONS)}, all)")
    names = list(REPRODUCTIONS) if args.name == "all" else [args.name]
    # The runner's own options may also follow NAME; the rest belong to the reproduction(s).
    runner = argparse.ArgumentParser(add_help=False)
    _runner_options(runner, suppress=True)
    ours, options = runner.parse_known_args(list(args.options))
    for key, value in vars(ours).items():
        if value not in (None, False):
            setattr(args, key, value)
    # Parse here first: --help and usage errors answer at once, before any task runs.
    for name in names:
        module = importlib.import_module(REPRODUCTIONS[name][0])
        parser = argparse.ArgumentParser(prog=f"ibcloud reproduce {name}", description=module.__doc__,
                                         formatter_class=argparse.RawDescriptionHelpFormatter)
        module.configure(parser)
        try:
            parser.parse_args(options)
        except SystemExit as exit:  # --help, or a usage error (status 2)
            return exit.code if isinstance(exit.code, int) else int(ExitStatus.ERROR)
    default_out = Path("out") / "reproductions"
    options, out = _split_out(options, default_out / names[0] if len(names) == 1 else default_out)
    from ibcloud.campaign import render, run, Store
    from ibcloud.cli._outputs import check_folder, mark_folder

    # OUT is written into (the reproduction's files are copied there): a folder of the user's is refused;
    # one any reproduction wrote is the command's own (one reproduction, or all of them, may run there again).
    command = "reproduce"
    check_folder(out, command, force=args.force)
    if args.json and "--json" not in options:
        options = options + ["--json"]  # the reproduction's own result as JSON, stored with the task

    campaign = _campaign(names, options)
    results = args.results or (out / "campaign" if len(names) == 1 else out / "results")
    store = Store(results)
    if not args.resume:
        for task in campaign.tasks:
            (store.path / "results" / f"{task.hash}.parquet").unlink(missing_ok=True)
    scheduler = args.scheduler or (None if len(names) > 1 else "inline")
    summary = run(campaign, results, scheduler=scheduler, workers=args.workers,
                  progress=len(names) > 1)  # a bar on a terminal, plain lines in logs
    status = ExitStatus.SUCCESS if summary.complete else ExitStatus.FAILURE
    frame = store.frame("reproduce")
    report: List[dict] = []
    for task in campaign.tasks:
        name = task.settings["reproduction"]
        rows = frame[(frame.task == task.hash) & (frame.record == "summary")] if len(frame) else frame
        if not len(rows):
            print(f"ibcloud: reproduction {name} did not finish (see {store.path / 'failed'})", file=sys.stderr)
            report.append({"reproduction": name, "status": None, "finished": False})
            continue
        row = rows.iloc[0]
        error = row.get("error")
        if isinstance(error, str) and error:
            if len(names) == 1:
                raise IbcloudError(error)
            print(f"ibcloud: reproduction {name}: error: {error}", file=sys.stderr)
            report.append({"reproduction": name, "status": int(ExitStatus.ERROR), "finished": False, "error": error})
            status = ExitStatus.ERROR
            continue
        if len(names) > 1 and not args.json:
            print(f"=== reproduce {name} ({row.seconds:.1f} s, "
                  f"{'every prediction holds' if row.status == 0 else 'a prediction does not hold'})")
        files = store.path / "files" / task.hash
        target = out / name if len(names) > 1 else out
        # The task ran in a temporary folder (removed since); its files are now in target.
        text = _TMP.sub(lambda _: str(target), str(row.output))
        if args.json:
            report.append({"reproduction": name, "status": int(row.status), "finished": True,
                           "seconds": float(row.seconds), "out": str(target), "result": _json_or_text(text)})
        else:
            sys.stdout.write(text)
        if int(row.status) != 0 and status == ExitStatus.SUCCESS:
            status = ExitStatus.FAILURE
        if files.is_dir():
            shutil.copytree(files, target, dirs_exist_ok=True)
            mark_folder(target, command)
    mark_folder(out, command)
    if len(names) > 1:
        _scoreboard(frame, out, args.scoreboard, quiet=args.json)
    if summary.skipped:
        print(f"({summary.skipped} stored result(s) of identical earlier runs reused)", file=sys.stderr)
    page = render(results, args.report, force=args.force) if args.report else None
    if page is not None:
        print(f"wrote {page}", file=sys.stderr)
    if args.json:
        import json

        from ibcloud.campaign.scoreboard import claims_frame, totals

        claims = claims_frame(out, frame)
        for entry in report:
            mine = claims[claims.reproduction == entry["reproduction"]] if len(claims) else claims
            entry["claims"] = mine.to_dict(orient="records")
        t = {k: dict(v) for k, v in totals(claims).to_dict(orient="index").items()}
        if len(names) == 1 and report and isinstance(report[0].get("result"), dict):
            # One reproduction: its own JSON document, as it always printed,
            # with the scoreboard rows and the runner's facts added.
            doc = dict(report[0]["result"])
            for key, value in (("claims", report[0]["claims"]), ("totals", t), ("status", int(status)),
                               ("out", report[0]["out"]), ("report", str(page) if page is not None else None)):
                doc.setdefault(key, value)
        else:
            doc = {"status": int(status), "reproductions": report, "totals": t,
                   "report": str(page) if page is not None else None}
        print(dumps_json(doc, indent=2, default=str))
    return int(status)


def _json_or_text(text: str):
    """A reproduction's printed result: its JSON value, or the text when it printed none.

    >>> _json_or_text('{"a": 1}'), _json_or_text("Table I")
    ({'a': 1}, 'Table I')
    """
    import json

    try:
        return json.loads(text)
    except ValueError:
        return text


#: The campaign runner's temporary output folder of a reproduce task (see ibcloud.campaign.kinds).
_TMP = re.compile(r"/[^\s\"']*?ibcloud-reproduce-[A-Za-z0-9_]+")


def _scoreboard(frame, out: Path, markdown_path, quiet: bool = False) -> None:
    """Totals per paper and overall: printed, written as JSON and Parquet to
    ``out``, and as Markdown to ``markdown_path`` (default: the repository's
    docs/reproductions/SCOREBOARD.md when run from its root, else OUT)."""
    from ibcloud.campaign.scoreboard import claims_frame, markdown, render_totals, write

    claims = claims_frame(out, frame)
    if not quiet:  # with --json, the totals are in the JSON document
        render_totals(claims)
    written = write(claims, out)
    if markdown_path is None:
        docs = Path("docs") / "reproductions"
        markdown_path = docs / "SCOREBOARD.md" if docs.is_dir() else out / "SCOREBOARD.md"
    Path(markdown_path).parent.mkdir(parents=True, exist_ok=True)
    Path(markdown_path).write_text(markdown(claims))
    print(f"wrote {', '.join(str(p) for p in written)} and {markdown_path}", file=sys.stderr)


def _runner_options(parser: argparse.ArgumentParser, suppress: bool = False) -> None:
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument("--results", type=Path, metavar="DIR", default=default,
                        help="campaign results directory (default: OUT/campaign for one, out/reproductions/results for all)")
    parser.add_argument("--scheduler", metavar="ADDR", default=default,
                        help="Dask scheduler tcp://HOST:PORT (default: in-process for one, a local cluster for all)")
    parser.add_argument("--workers", type=int, metavar="N", default=default, help="local cluster workers for 'all'")
    parser.add_argument("--resume", action="store_true", default=argparse.SUPPRESS if suppress else False,
                        help="reuse stored results of identical runs (finish an interrupted 'all')")
    parser.add_argument("--report", type=Path, metavar="DIR", default=default,
                        help="also render the HTML report of the results")
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS if suppress else False,
                        help="print JSON: one reproduction's own result document, or for 'all' each one's status and "
                             "result; both with the scoreboard rows ('claims': claim, kind, paper, tolerance, "
                             "ours, verdict) and the 'totals'")
    parser.add_argument("--force", action="store_true", default=argparse.SUPPRESS if suppress else False,
                        help="write into an OUT folder or --report folder ibcloud did not create")
    parser.add_argument("--scoreboard", type=Path, metavar="FILE", default=default,
                        help="'all': where the Markdown scoreboard goes (default: docs/reproductions/SCOREBOARD.md "
                             "when run from the repository's root, else OUT/SCOREBOARD.md)")


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
    _runner_options(cmd)
    cmd.add_argument("name", nargs="?", metavar="NAME", help=f"which one ({', '.join(REPRODUCTIONS)}) or all")
    cmd.add_argument("options", nargs=argparse.REMAINDER, metavar="...",
                     help="options of the reproduction (see ibcloud reproduce NAME --help)")
    cmd.set_defaults(run=_run)
