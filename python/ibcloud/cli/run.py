"""``ibcloud run``: the main job, a tour of the whole system. Generates a
fat-tree (648 nodes by default) and writes it in every writable format under
``--out`` (plus OpenSM's guid2lid LID cache), reading each file back; then
runs the tour as a campaign on Dask (results under ``--out``/results):
the physical tree routed (ftree) and verified; the default virtualized cloud
(every CA a vSwitch hypervisor with 4 VFs, 50 % of the VF slots holding VMs)
routed with vSwitchFatTree and verified (reachability, deadlock freedom);
a random live-migration campaign comparing ItRC, FTreeMinRC and full
re-routing; the effective bisection bandwidth; seed 004's IBMon,
I/O-thrashing, FaReS, ResEx, Sphinx and DRX reproductions at a reduced size with their scoreboards
(``--no-reproductions`` skips them); one live ItRC migration on
ibsim with ibcloud's own SM (4-ary-2-full, 2 VFs; ``--no-live`` skips it);
and writes the HTML report
(``--report``, default ./report/index.html).

>>> import tempfile
>>> from ibcloud.cli.main import main
>>> out = tempfile.mkdtemp()
>>> main(["run", "--preset", "4-ary-2-full", "--quick", "--scheduler", "inline", "--out", out,  # doctest: +ELLIPSIS
...       "--report", out + "/report"])
4-ary-2-full: XGFT(2;4,8;1,4)...
wrote .../4-ary-2-full.ibcf (native, ... bytes; read back: 32 CAs, 12 switches, 64 links)
...
routed 4-ary-2-full with ftree in ... ms: 12 switches x 44 LIDs, 0 CA LIDs unrouted; verified: 992 of 992 CA pairs reachable, credit loops: none
virtualized cloud: 32 hypervisors x 4 VFs, 64 VMs (50% of VF slots), ...
10 random live migrations, mean switch SMPs per migration: ItRC ...
bisect bandwidth of 4-ary-2-full/ftree over 100 random bisections (seed 1): mean ...
live migration on ibsim (ibcloud sm, 4-ary-2-full, 2 VFs): vm0 -> ...
campaign: 4 tasks (4 ran, 0 reused) in ... s; all checks passed; results in .../results
report: .../report/index.html
0
"""

from __future__ import annotations

import argparse
import html
import sys
from pathlib import Path
from typing import Any, List, Optional, Tuple

from ibcloud.cli._display import print_summary, progress
from ibcloud.progress import plain_interval
from ibcloud.cli._args import add_out
from ibcloud.cli.main import ExitStatus
from ibcloud.exceptions import CampaignError
from ibcloud.fabric import Fabric
from ibcloud.formats import formats
from ibcloud.generate import FatTreeParams
from ibcloud.tables import read_guid2lid, write_guid2lid
from ibcloud.safeio import dumps_json

__all__ = ["register"]


def _counts(fabric: Fabric) -> str:
    return f"{fabric.num_cas} CAs, {fabric.num_switches} switches, {fabric.num_links} links"


def _run(args: argparse.Namespace) -> ExitStatus:
    """The tour: the default virtualized cloud built, routed, verified, migrated, analysed and reported.

    Generates PRESET (ft648) and writes it in every format under --out,
    reading each back; then runs the tour campaign on Dask: PRESET routed
    with --engine and verified; the virtualized cloud (every CA a hypervisor
    with --vfs VFs behind a vSwitch, --population of the VF slots holding
    VMs) routed with vSwitchFatTree and verified (reachability, credit
    loops); --migrations random live migrations, each planned with ItRC,
    FTreeMinRC and a full re-route; the bisection bandwidth; the IBMon,
    I/O-thrashing, FaReS, ResEx, Sphinx and DRX reproductions at a reduced size, printing their
    scoreboards (--no-reproductions skips them); then one live
    ItRC migration on ibsim with ibcloud's SM (--no-live skips it); writes the HTML
    report to --report and prints a summary. Status 1 when a check fails.
    """
    from ibcloud.campaign import Store, parse, render
    from ibcloud.campaign import run as run_campaign

    if args.quick:
        args.bisections, args.migrations, args.ebb_runs = min(args.bisections, 100), min(args.migrations, 10), 0
        args.reproductions = False
    params = FatTreeParams.parse(args.preset)
    campaign = parse(_tour_campaign(args), "ibcloud run")
    results = args.out / "results"
    if results.exists():
        # Never delete, or mix with, what the tour did not write: files of
        # the user's, another campaign's results.
        store = Store(results)
        owner = store.owner()
        if not args.force:
            foreign = store.foreign()
            if foreign:
                raise CampaignError(f"{results}: holds files ibcloud run did not write ({', '.join(foreign[:3])}"
                                    f"{', ...' if len(foreign) > 3 else ''}); move them, give another --out, "
                                    "or --force to keep them and run anyway")
            if owner is not None and not owner.startswith("tour-") or owner is None and store.finished():
                raise CampaignError(f"{results}: holds the results of campaign {owner!r}, not of an ibcloud run; "
                                    "give another --out, or --force to replace them")
        if not args.resume or owner != campaign.name:
            store.clear()
    with progress(f"generating {args.preset}"):
        fabric = params.build()
    print_summary(fabric.summary(), f"{args.preset}: {params}")
    if fabric.num_cas > 1000:
        # Said up front: on a big tree the tour is long work. Measured on the
        # 2-core machine for ft5832 (5,832 CAs) with --quick, under load: the
        # virtualized cloud routed and verified 2.4 min, 10 migrations over
        # 5 min; the bandwidth snapshots of the full tour add more.
        print(f"note: {args.preset} has {fabric.num_cas:,} CAs: the tour takes tens of minutes on a small "
              f"machine (for 5,832 CAs, 2 cores: the virtualized cloud about 2-3 min, {args.migrations} "
              f"migrations well over 5 min{'' if args.quick or not args.ebb_runs else ', then the bandwidth snapshots'}"
              f"); progress lines follow on stderr every {plain_interval():.0f} s", file=sys.stderr)

    _check_fabric_files(args)
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

    status = ExitStatus.SUCCESS
    for path, name, counts, problem in written:
        print(f"wrote {path} ({name}, {path.stat().st_size:,} bytes; read back: {counts})")
        if problem is not None:
            print(f"ibcloud: {path} does not read back to the same fabric: {problem}", file=sys.stderr)
            status = ExitStatus.FAILURE

    summary = run_campaign(campaign, results, scheduler=args.scheduler, workers=args.workers, progress=True,
                           force=True)
    store = Store(results)
    frame = store.frame()
    if summary.failed or not len(frame):
        for failure in store.failures():
            print(f"ibcloud: task {failure['settings']['kind']} failed:\n{failure['error']}", file=sys.stderr)
        return ExitStatus.FAILURE

    def row(experiment: str, record: Optional[str] = None) -> Any:
        rows = frame[frame.experiment == experiment]
        if record is not None:
            rows = rows[rows.record == record]
        return rows.iloc[0]

    lines: List[str] = []
    r = row("physical")
    lines.append(f"routed {args.preset} with {args.engine} in {r.route_ms:.1f} ms: {r.switches} switches x "
                 f"{r.max_lid} LIDs, {r.unrouted} CA LIDs unrouted; verified: {r.reachable:,} of {r.pairs:,} CA pairs "
                 f"reachable, credit loops: {'none' if r.credit_loop_free else 'FOUND'}")
    c = row("cloud")
    lines.append(f"virtualized cloud: {c.hypervisors} hypervisors x {args.vfs} VFs, {c.vms} VMs "
                 f"({c.vms / c.vf_slots:.0%} of VF slots), {c.max_lid} LIDs; vSwitchFatTree in {c.route_ms:.1f} ms; "
                 f"verified: {c.reachable:,} of {c.pairs:,} CA pairs reachable, "
                 f"credit loops: {'none' if c.credit_loop_free else 'FOUND'}, "
                 f"LID walks from every switch: {c.lids_checked:,} LIDs, {c.lid_walk_problems} problems")
    m = row("migrations", "summary")
    lines.append(f"{int(m.migrations)} random live migrations, mean switch SMPs per migration: "
                 f"ItRC {m.itrc_switch_smps_mean:.1f}, FTreeMinRC {m.ftree_minrc_switch_smps_mean:.1f}, "
                 f"full re-route {m.full_switch_smps_mean:.1f} (differential; a full LFT distribution is "
                 f"{m.full_distribution_smps_mean:.0f}); predicted time: ItRC {m.itrc_time_ms_mean:.2f} ms, "
                 f"FTreeMinRC {m.ftree_minrc_time_ms_mean:.2f} ms, full {m.full_time_ms_mean:.2f} ms; "
                 f"moved VMs unreachable: {int(m.unreachable)}; transitions free of credit loops: "
                 f"{m.transition_deadlock_free_share:.0%} (the rest need the partially static scheme)")
    b = row("bisection")
    lines.append(f"bisect bandwidth of {args.preset}/{args.engine} over {args.bisections} random bisections "
                 f"(seed {args.seed}): mean {b.ebb_mean:.4f} of peak (min {b.ebb_min:.4f}, max {b.ebb_max:.4f})")
    if "ebb" in set(frame.experiment):
        snaps = frame[(frame.experiment == "ebb") & (frame.record == "snapshot")]
        last = snaps.iloc[-1]
        lines.append(f"bisect bandwidth among the VMs during the migrations: FTreeMinRC {snaps.ebb_minrc.iloc[0]:.4f} "
                     f"-> {last.ebb_minrc:.4f} after {int(last.migrations)} migrations, "
                     f"fresh vSwitchFatTree {last.ebb_fresh:.4f}")
    repro_lines, repro_missed = _reproduction_lines(frame)
    lines.extend(repro_lines)
    if not summary.complete or summary.problems - repro_missed:
        status = ExitStatus.FAILURE
    if args.live:
        live = _live_migration(args.out)
        if live is None:
            return ExitStatus.FAILURE
        line, ok = live
        lines.append(line)
        if not ok:
            status = ExitStatus.FAILURE
    verdict = "all checks passed" if status == ExitStatus.SUCCESS else \
        f"{summary.problems - repro_missed} task(s) found a problem"
    summary_html = "<h2>Summary</h2><ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + \
        f"<li>{html.escape(verdict)}; campaign: {summary.tasks} tasks in {summary.seconds:.1f} s</li></ul>"
    page = render(results, args.report, title=f"ibcloud tour: {args.preset} virtualized cloud",
                  summary_html=summary_html, force=args.force)
    for line in lines:
        print(line)
    print(f"campaign: {summary.tasks} tasks ({summary.ran} ran, {summary.skipped} reused) in {summary.seconds:.1f} s; "
          f"{verdict}; results in {results}")
    print(f"report: {page.resolve()}")
    return status


def _check_fabric_files(args: argparse.Namespace) -> None:
    """The fabric files the tour writes into --out replace nothing it did not
    write: --out is the tour's own when it carries the tour's mark, or (from
    before the mark existed) a results store of a tour campaign; otherwise an
    existing PRESET.ibcf/.topo/.net/.guid2lid is refused unless --force."""
    from ibcloud.campaign import Store
    from ibcloud.cli._outputs import MARKER, mark_folder

    def ours() -> bool:
        import json

        try:
            if json.loads((args.out / MARKER).read_text()).get("command") == "run":
                return True
        except (OSError, ValueError, AttributeError):
            pass
        results = args.out / "results"
        return results.is_dir() and (Store(results).owner() or "").startswith("tour-")

    targets = [args.out / f"{args.preset}.{fmt['extension']}" for fmt in formats() if fmt["can_write"]]
    targets.append(args.out / f"{args.preset}.guid2lid")
    if not args.force and not ours():
        existing = [p.name for p in targets if p.exists()]
        if existing:
            raise CampaignError(f"{args.out}: holds {', '.join(existing)}, which ibcloud run did not write; "
                                "give another --out, or --force to replace them")
    args.out.mkdir(parents=True, exist_ok=True)
    mark_folder(args.out, "run")


def _live_migration(out: Path) -> Optional[Tuple[str, bool]]:
    """One live ItRC migration on ibsim with ibcloud's SM (4-ary-2-full, 2 VFs
    per hypervisor): the summary line and whether it agreed, or None (after
    a message on stderr) when ibsim or the SM could not run."""
    from ibcloud.exceptions import IbcloudError
    from ibcloud.interop import InteropError
    from ibcloud.sm import SmError
    from ibcloud.sm.live import live_migrations

    work = out / "live"
    work.mkdir(parents=True, exist_ok=True)
    try:
        with progress("live migration on ibsim with ibcloud's SM"):
            rows = live_migrations("4-ary-2-full", vfs=2, moves=[("vm0", "#31")], methods=["itrc"], workdir=work)
    except (IbcloudError, InteropError, SmError, OSError) as err:
        print(f"ibcloud: the live migration on ibsim could not run: {err}\n"
              "(ibsim, infiniband-diags and libumad2sim come from `make system-deps`; --no-live skips this step)",
              file=sys.stderr)
        return None
    r = rows[0]
    if "error" in r:
        return f"live migration on ibsim (ibcloud sm, 4-ary-2-full, 2 VFs): {r['vm']} -> {r['to']} REFUSED: " \
            f"{r['error']}", False
    equal = r["observed_switch_smps"] == r["predicted_switch_smps"]
    ok = equal and r["tables_match"] and r["vm_reachable"]
    line = (f"live migration on ibsim (ibcloud sm, 4-ary-2-full, 2 VFs): {r['vm']} -> hypervisor {r['to']} with ItRC, "
            f"switch SMPs observed {r['observed_switch_smps']} {'==' if equal else '!='} planned "
            f"{r['predicted_switch_smps']} (construction: the SM sends the plan); every switch's tables read back "
            f"{'equal to' if r['tables_match'] else 'DIFFERENT from'} the model's, VM "
            f"{'reachable' if r['vm_reachable'] else 'NOT reachable'} at LID {r['vm_lid']} (evidence); "
            f"decision to last acknowledgement {1000 * r['seconds']:.1f} ms")
    return line, ok


def _run_json(args: argparse.Namespace) -> ExitStatus:
    """``run --json``: the tour as :func:`_run` does it, its printed lines
    captured, then one JSON object on stdout: ``status``, ``preset``, the
    paths (``out``, ``results``, ``report``), ``lines`` (the text summary),
    ``rows`` (every result row, by experiment, from the store) and
    ``failures``. Progress stays on stderr."""
    import contextlib
    import io
    import json

    from ibcloud.campaign import Store

    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        status = _run(args)
    results = args.out / "results"
    store = Store(results)
    frame = store.frame()
    rows = {}
    if len(frame):
        for experiment, group in frame.groupby("experiment", sort=False):
            rows[str(experiment)] = json.loads(group.dropna(axis=1, how="all").to_json(orient="records"))
    page = args.report / "index.html"
    print(dumps_json({"status": int(status), "preset": args.preset, "out": str(args.out), "results": str(results),
                      "report": str(page) if page.exists() else None,
                      "lines": [line for line in text.getvalue().splitlines() if line.strip()],
                      "rows": rows, "failures": store.failures()}, indent=2, default=str))
    return status


def _tour_campaign(args: argparse.Namespace) -> str:
    """The tour as a campaign file (saved with the results)."""
    common = f'topology = "{args.preset}"\nvfs = {args.vfs}\npopulation = {args.population}\nseed = {args.seed}\n'
    text = (f'[campaign]\nname = "tour-{args.preset}"\n'
            f'description = "ibcloud run: the default virtualized cloud, routed, verified, migrated and analysed"\n'
            f'\n[[experiment]]\nname = "physical"\nkind = "route"\ntopology = "{args.preset}"\n'
            f'engine = "{args.engine}"\n'
            f'\n[[experiment]]\nname = "cloud"\nkind = "cloud"\n{common}'
            f'\n[[experiment]]\nname = "migrations"\nkind = "migrate"\n{common}migrations = {args.migrations}\n'
            f'\n[[experiment]]\nname = "bisection"\nkind = "analyze"\ntopology = "{args.preset}"\n'
            f'engine = "{args.engine}"\nruns = {args.bisections}\nseed = {args.seed}\n')
    if args.ebb_runs:
        text += (f'\n[[experiment]]\nname = "ebb"\nkind = "migration"\n{common}'
                 f'pattern = "random:{args.migrations}"\nsteps = 4\nbisect_runs = {args.ebb_runs}\n')
    if args.reproductions:
        for name, options in TOUR_REPRODUCTIONS.items():
            opts = ", ".join(f'"{o}"' for o in options)
            text += (f'\n[[experiment]]\nname = "reproduce-{name}"\nkind = "reproduce"\n'
                     f'reproduction = "{name}"\noptions = [{opts}]\n')
    return text


#: The seed-004 reproductions in the tour, at a reduced size (seconds each;
#: ``ibcloud reproduce NAME`` runs the full size). Their scoreboards are
#: printed; a prediction the model does not reproduce is a finding, not a
#: failed check, so it does not change the tour's exit status.
TOUR_REPRODUCTIONS = {
    "ibmon": ["--iterations", "300", "--intervals", "4,64,1000", "--sizes", "64k"],
    "thrashing": ["--phases", "1", "--mb-requests", "120", "--no-fig12"],
    "resex": ["--size", "tour"],
    "fares": ["--scale", "1", "--search-steps", "0", "--pairs", "a", "--no-contended", "--no-fig16", "--no-fig18"],
    "sphinx": ["--size", "tour"],
    "drx": ["--size", "tour"],
}


def _reproduction_lines(frame: Any) -> Tuple[List[str], int]:
    """The tour's lines for its reproductions (a header naming the reduced
    size, then the scoreboard as the reproduction printed it) and how many
    of them exited 1 (a prediction not reproduced)."""
    lines: List[str] = []
    missed = 0
    for name, options in TOUR_REPRODUCTIONS.items():
        rows = frame[(frame.experiment == f"reproduce-{name}") & (frame.record == "summary")]
        if not len(rows):
            continue
        r = rows.iloc[0]
        missed += int(r.status) != 0
        out = str(r.output)
        board = out[out.find("Scoreboard ("):].strip() if "Scoreboard (" in out else "(no scoreboard printed)"
        lines.append(f"reproduce {name} at the tour's reduced size ({' '.join(options)}; the full size: "
                     f"ibcloud reproduce {name}):\n{board}")
    return lines, missed


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
    add_out(run, "output directory (default: ./out)", dest="out", metavar="DIR", type=Path, default=Path("out"))
    run.add_argument("--preset", default="ft648", help="preset or spec to generate (default: ft648)")
    run.add_argument("--engine", default="ftree", help="routing engine (default: ftree)")
    run.add_argument("--bisections", type=int, default=1000, help="random bisections to analyse (default: 1000)")
    run.add_argument("--seed", type=int, default=1, help="seed of VM placement, migrations and bisections (default: 1)")
    run.add_argument("--vfs", type=int, default=4, help="VFs per hypervisor (default: 4)")
    run.add_argument("--population", type=float, default=0.5, help="share of VF slots holding a VM (default: 0.5)")
    run.add_argument("--migrations", type=int, default=40, help="random live migrations (default: 40)")
    run.add_argument("--ebb-runs", type=int, default=100, metavar="N",
                     help="bisections per snapshot of the VMs' bandwidth during the migrations (0: skip; default 100)")
    run.add_argument("--quick", action="store_true",
                     help="a seconds-long tour: 100 bisections, 10 migrations, no bandwidth snapshots, "
                          "no reproductions")
    run.add_argument("--no-reproductions", dest="reproductions", action="store_false",
                     help="skip the reduced-size seed-004 reproductions (ibmon, thrashing, fares, resex) and their scoreboards")
    run.add_argument("--no-live", dest="live", action="store_false",
                     help="skip the live migration on ibsim with ibcloud's SM (run after the offline tour)")
    run.add_argument("--report", type=Path, default=Path("report"), metavar="DIR",
                     help="report directory (default: ./report)")
    run.add_argument("--scheduler", metavar="ADDR",
                     help="Dask scheduler tcp://HOST:PORT (default: a local cluster; 'inline' runs in-process)")
    run.add_argument("--workers", type=int, default=2, metavar="N", help="local cluster workers (default: 2)")
    run.add_argument("--resume", action="store_true", help="keep finished tasks of an earlier run in --out/results")
    run.add_argument("--force", action="store_true",
                     help="use --out/results even when it holds files the tour did not write (they are kept)")
    run.add_argument("--json", action="store_true",
                     help="print one JSON object (summary lines, result rows, paths) instead of text")
    run.set_defaults(run=lambda args: _run_json(args) if args.json else _run(args))
