"""The static HTML report of a results directory: one page (index.html) with
a section per experiment (its results table and plots as PNG), the paper's
values beside ours for reproductions (their checks and plots), failures, and
the exact settings and versions used. No JavaScript, no external resources:
the folder can be copied anywhere and opened offline.

>>> import tempfile
>>> from ibcloud.campaign.spec import parse
>>> from ibcloud.campaign.runner import run
>>> d = tempfile.mkdtemp()
>>> _ = run(parse('[[experiment]]\\nkind = "route"\\ntopology = "4-ary-2-full"\\n', "c.toml"), d,
...         scheduler="inline", progress=False)
>>> page = render(d, d + "/report")
>>> page.name, "<table" in page.read_text()
('index.html', True)
"""

from __future__ import annotations

import html
import json
import os
import shutil
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from ibcloud.campaign.store import Store
from ibcloud.exceptions import CampaignError
from ibcloud.safeio import atomic_path, atomic_write

__all__ = ["render"]

_META = ("kind", "experiment", "settings", "worker", "row")


def _params(rows: Any) -> List[str]:
    """The parameter names of an experiment's kind."""
    from ibcloud.campaign.kinds import KINDS

    kind = KINDS.get(str(rows.kind.iloc[0]))
    return list(kind.params) if kind else []

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { border-bottom: 2px solid #446; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
th { background: #eef; } td.l, th.l { text-align: left; }
.pass { color: #060; font-weight: bold; } .fail { color: #a00; font-weight: bold; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0; }
pre { background: #f6f6f6; padding: 0.5em; overflow-x: auto; font-size: 0.85em; }
.summary { font-size: 1.05em; } .wrap { overflow-x: auto; }
"""


#: Column name endings that carry a unit, and how the header shows it.
_UNITS = (("_ms", "ms"), ("_us", "µs"), ("_seconds", "s"), ("_gbps", "Gb/s"), ("_pct", "%"), ("_bytes", "bytes"))


def _header(column: str) -> str:
    """A column name with its unit spelt out: ``route_ms`` → ``route (ms)``.

    >>> _header("route_ms"), _header("seconds"), _header("ebb_mean")
    ('route (ms)', 'time (s)', 'ebb_mean')
    """
    if column == "seconds":
        return "time (s)"
    for suffix, unit in _UNITS:
        if column.endswith(suffix) and len(column) > len(suffix):
            return f"{column[: -len(suffix)]} ({unit})"
    return column


def _number(column: str, value: float) -> str:
    """Times with a fixed number of decimals, other values with 4 significant digits.

    >>> _number("route_ms", 12.345678), _number("seconds", 0.0123), _number("ebb_mean", 0.876543)
    ('12.35', '0.012', '0.8765')
    """
    if value != value:  # NaN
        return ""
    if column == "seconds" or column.endswith(("_ms", "_us", "_seconds")):
        return f"{value:,.3f}" if abs(value) < 1 else f"{value:,.2f}"
    return f"{value:.4g}"


def _table(frame: Any, cls: str = "results", limit: int = 500) -> str:
    if frame is None or len(frame) == 0:
        return "<p>(no rows)</p>"
    frame = frame.head(limit)
    head = "".join(f"<th>{html.escape(_header(str(c)))}</th>" for c in frame.columns)
    body = []
    for row in frame.itertuples(index=False):
        cells = []
        for column, value in zip(frame.columns, row):
            if isinstance(value, float):
                text = _number(str(column), value)
            elif value is None:
                text = ""
            else:
                text = str(value)
            css = ""
            if isinstance(value, bool) or text in ("True", "False"):
                css = ' class="pass"' if text == "True" else ' class="fail"'
            elif not isinstance(value, (int, float)):
                css = ' class="l"'
            cells.append(f"<td{css}>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<div class="wrap"><table class="{cls}"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def _sorted(frame: Any, params: List[str]) -> Any:
    """Rows in the order a reader looks for them: by the experiment's
    parameters (as written), then row number — not by task hash."""
    keys = [c for c in params if c in frame and frame[c].map(lambda v: isinstance(v, (list, dict))).sum() == 0]
    keys += [c for c in ("row",) if c in frame]
    if not keys:
        return frame
    try:
        return frame.sort_values(keys, kind="stable", na_position="last")
    except TypeError:  # mixed types in a parameter column
        return frame.sort_values(keys, key=lambda col: col.astype(str), kind="stable")


def _clean(frame: Any) -> Any:
    keep = [c for c in frame.columns if c not in _META and not frame[c].isna().all()]
    return frame[keep]


def _has_data(fig: Any) -> bool:
    """Whether every axes of ``fig`` draws at least one finite value (a bar
    or a line point): a plot of NaN columns is an empty frame, not a plot."""
    import math

    for ax in fig.axes:
        values = [p.get_height() for p in ax.patches]
        for line in ax.get_lines():
            values.extend(float(v) for v in line.get_ydata() if v is not None)
        if not any(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
            return False
    return bool(fig.axes)


def _save(fig: Any, path: Path) -> bool:
    """Writes ``fig`` to ``path`` (atomically) when it has data; returns whether it did."""
    import matplotlib.pyplot as plt

    from ibcloud.safeio import atomic_path

    try:
        if not _has_data(fig):
            return False
        with atomic_path(path, keep_suffix=True) as tmp:
            fig.savefig(tmp, format="png", dpi=90, bbox_inches="tight")
        return True
    finally:
        plt.close(fig)


def _plots(kind: str, frame: Any, out: Path, stem: str) -> List[Path]:
    """Kind-specific plots of one experiment's rows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made: List[Path] = []
    if kind == "migration" and "record" in frame:
        snaps = frame[frame.record == "snapshot"]
        if len(snaps) and "ebb_minrc" in snaps:
            fig, ax = plt.subplots(figsize=(7, 3.5))
            for task, group in snaps.groupby("task", sort=True):
                first = group.iloc[0]
                label = f"{first.get('topology')} {first.get('placement')}/{first.get('pattern')} p={first.get('population')}"
                line = ax.plot(group.percent, group.ebb_minrc, marker="o", label=f"{label} FTreeMinRC")[0]
                ax.plot(group.percent, group.ebb_fresh, ls="--", color=line.get_color(), label=f"{label} fresh")
            ax.set_xlabel("migrations done (%)")
            ax.set_ylabel("mean effective bisection bandwidth")
            ax.legend(fontsize=6)
            path = out / f"{stem}-ebb.png"
            if _save(fig, path):
                made.append(path)
        summary = frame[frame.record == "summary"]
        cols = [c for c in ("itrc_switch_smps_mean", "minrc_switch_smps_mean", "full_switch_smps_mean")
                if c in summary]
        if not cols:
            cols = [c for c in summary.columns if c.endswith("_mean") and ("smps" in c or "switches" in c)][:6]
        if len(summary) and cols:
            fig, ax = plt.subplots(figsize=(7, 3.5))
            means = summary[cols].mean()
            ax.bar([c.replace("_mean", "") for c in cols], means.values, color="#4a7")
            ax.set_ylabel("mean per migration")
            ax.tick_params(axis="x", labelrotation=30, labelsize=7)
            path = out / f"{stem}-migration.png"
            if _save(fig, path):
                made.append(path)
    elif kind == "analyze" and "ebb_mean" in frame:
        fig, ax = plt.subplots(figsize=(7, 3.5))
        labels = [f"{r.topology}/{r.engine}/s{r.seed}" for r in frame.itertuples()]
        ax.bar(labels, frame.ebb_mean, color="#47a")
        ax.set_ylabel("mean effective bisection bandwidth")
        ax.set_ylim(0, 1.05)
        ax.tick_params(axis="x", labelrotation=30, labelsize=7)
        path = out / f"{stem}-ebb.png"
        if _save(fig, path):
            made.append(path)
    elif kind == "migrate" and "record" in frame:
        summary = frame[frame.record == "summary"]
        cols = [("itrc_switch_smps_mean", "ItRC"), ("ftree_minrc_switch_smps_mean", "FTreeMinRC"),
                ("full_switch_smps_mean", "full re-route\n(differential)"),
                ("full_distribution_smps_mean", "full LFT\ndistribution")]
        cols = [(c, label) for c, label in cols if c in summary]
        if len(summary) and cols:
            fig, (ax, bx) = plt.subplots(1, 2, figsize=(9, 3.5))
            values = [float(summary[c].mean()) for c, _ in cols]
            ax.bar([label for _, label in cols], values, color=["#4a7", "#47a", "#a74", "#999"][:len(cols)])
            ax.set_yscale("log")
            ax.set_ylabel("switch SMPs per migration (mean)")
            ax.tick_params(axis="x", labelsize=7)
            times = [(c, label) for c, label in (("itrc_time_ms_mean", "ItRC"), ("ftree_minrc_time_ms_mean",
                                                  "FTreeMinRC"), ("full_time_ms_mean", "full")) if c in summary]
            bx.bar([label for _, label in times], [float(summary[c].mean()) for c, _ in times],
                   color=["#4a7", "#47a", "#a74"][:len(times)])
            bx.set_ylabel("predicted reconfiguration time (ms)")
            path = out / f"{stem}-methods.png"
            if _save(fig, path):
                made.append(path)
    elif kind == "route" and "route_ms" in frame and len(frame) > 1:
        fig, ax = plt.subplots(figsize=(7, 3.5))
        labels = [f"{r.topology}/{r.engine}" for r in frame.itertuples()]
        ax.bar(labels, frame.route_ms, color="#a74")
        ax.set_ylabel("routing time (ms)")
        ax.tick_params(axis="x", labelrotation=30, labelsize=7)
        path = out / f"{stem}-route.png"
        if _save(fig, path):
            made.append(path)
    return made


def _reproduction(frame: Any, root: Path, out: Path, made: Optional[List[Path]] = None) -> str:
    parts: List[str] = []
    for task, group in frame.groupby("task", sort=True):
        summary = group[group.record == "summary"].iloc[0] if "record" in group else group.iloc[0]
        status = int(summary.get("status", 0))
        parts.append(f"<h3>reproduce {html.escape(str(summary.get('reproduction')))} "
                     f"{html.escape(str(summary.get('options')))} — "
                     f"<span class=\"{'pass' if status == 0 else 'fail'}\">"
                     f"{'every prediction holds' if status == 0 else 'a prediction does not hold'}</span> "
                     f"({float(summary.get('seconds', 0)):.1f} s)</h3>")
        checks = group[group.record == "check"] if "record" in group else group.iloc[0:0]
        if len(checks):
            parts.append("<p>Checks: the paper's claim beside our value.</p>")
            parts.append(_table(_clean(checks).drop(columns=[c for c in ("record", "status", "seconds", "reproduction",
                                                                          "options", "output", "json")
                                                             if c in checks], errors="ignore"), "checks"))
        data = summary.get("json")
        if isinstance(data, str) and data:
            parts.append(_paper_tables(json.loads(data)))
        files = root / "files" / str(task)
        if files.is_dir():
            for png in sorted(files.rglob("*.png")):
                rel = Path("files") / str(task) / png.relative_to(files)
                with atomic_path(out / rel) as tmp:
                    shutil.copyfile(png, tmp)
                if made is not None:
                    made.append(out / rel)
                parts.append(f'<figure><img src="{html.escape(rel.as_posix())}" alt="{html.escape(png.stem)}">'
                             f"<figcaption>{html.escape(png.name)}</figcaption></figure>")
    return "\n".join(parts)


def _paper_tables(data: Any) -> str:
    """Tables of a reproduction's JSON whose rows carry a paper value beside ours."""
    import pandas as pd

    parts: List[str] = []
    if not isinstance(data, dict):
        return ""
    for key, value in data.items():
        if key == "checks" or not isinstance(value, list) or not value or not all(isinstance(r, dict) for r in value):
            continue
        columns = set().union(*(r.keys() for r in value))
        if not any("paper" in str(c) for c in columns):
            continue
        frame = pd.DataFrame(value)
        for c in frame.columns:
            if frame[c].map(lambda v: isinstance(v, (list, dict))).any():
                frame[c] = frame[c].map(json.dumps)
        parts.append(f"<h4>{html.escape(key)} (paper beside ours)</h4>" + _table(frame, "paper"))
    return "\n".join(parts)


#: Lists the files the last render wrote, so the next one removes only those it no longer makes.
MANIFEST = ".ibcloud-report.json"


def _check_out(out: Path, force: bool) -> List[str]:
    """The files an earlier render wrote into ``out``; refuses a folder whose
    index.html ibcloud did not write (unless ``force``)."""
    manifest = out / MANIFEST
    if manifest.exists():
        try:
            files = json.loads(manifest.read_text()).get("files", [])
            return [f for f in files if isinstance(f, str) and ".." not in Path(f).parts]
        except (ValueError, UnicodeDecodeError, AttributeError):
            return []
    page = out / "index.html"
    if page.exists() and not force:
        head = page.read_bytes()[:4096]
        if b'content="ibcloud"' not in head and b"Every task's resolved settings" not in page.read_bytes():
            raise CampaignError(f"{page}: exists and was not written by ibcloud; give another report directory, "
                                "or --force to overwrite it")
    return []


def render(results: Union[str, os.PathLike], out: Union[str, os.PathLike], title: Optional[str] = None,
           summary_html: str = "", force: bool = False) -> Path:
    """Writes ``out``/index.html (and its PNGs) for the results directory
    ``results``; returns the page's path. ``summary_html`` goes at the top.

    Every file is written under a temporary name and renamed; plots an
    earlier render made that this one does not are removed (the list is kept
    in ``out``/.ibcloud-report.json), nothing else is. An index.html that
    ibcloud did not write is not overwritten unless ``force``.

    >>> import tempfile
    >>> render(tempfile.mkdtemp(), tempfile.mkdtemp()).name
    'index.html'
    """
    store = Store(results)
    frame = store.frame()  # before anything is written: a damaged store is an error, not a half report
    out = Path(out)
    earlier = _check_out(out, force)
    out.mkdir(parents=True, exist_ok=True)
    (out / "img").mkdir(exist_ok=True)
    made: List[Path] = []
    root = store.path
    meta: Dict[str, Any] = json.loads((root / "tasks.json").read_text()) if (root / "tasks.json").exists() else {}
    vers = json.loads((root / "versions.json").read_text()) if (root / "versions.json").exists() else {}
    name = title or meta.get("name", root.name)
    total = len(meta.get("tasks", []))
    finished = len(store.finished())
    failures = store.failures()
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
             f"<meta name=\"generator\" content=\"ibcloud\"><title>{html.escape(name)}</title>"
             f"<style>{_CSS}</style></head><body>", f"<h1>{html.escape(name)}</h1>"]
    if meta.get("description"):
        parts.append(f"<p>{html.escape(meta['description'])}</p>")
    parts.append(f'<p class="summary">{finished} of {total} task(s) finished, {len(failures)} failed. '
                 f"Results: <code>{html.escape(str(root.resolve()))}</code></p>")
    parts.append(summary_html)
    from ibcloud.campaign.scoreboard import html_section  # the reproductions' claims, kinds and verdicts

    parts.append(html_section(root, store.frame("reproduce") if len(frame) else None))
    if len(frame):
        order = list(dict.fromkeys(t["experiment"] for t in meta.get("tasks", []))) or \
            list(dict.fromkeys(frame.experiment))
        for i, experiment in enumerate(order):
            rows = frame[frame.experiment == experiment]
            if not len(rows):
                continue
            kind = str(rows.kind.iloc[0])
            parts.append(f"<h2>{html.escape(experiment)} <small>({html.escape(kind)}, "
                         f"{rows.task.nunique()} task(s))</small></h2>")
            if kind == "reproduce":
                parts.append(_reproduction(rows, root, out, made))
                continue
            plotted = rows[[c for c in rows.columns if not rows[c].isna().all()]]
            for png in _plots(kind, plotted, out / "img", f"{i:02d}-{experiment}"):
                made.append(png)
                rel = png.relative_to(out).as_posix()
                parts.append(f'<figure><img src="{html.escape(rel)}" alt="{html.escape(png.stem)}"></figure>')
            params = [c for c in _params(rows) if c in rows]
            per_task = _sorted(rows.drop_duplicates("task")[["task"] + params + ["seconds", "status"]], params)
            parts.append("<h3>tasks</h3>" + _table(per_task, "tasks"))
            results = _sorted(rows, params).drop(columns=[c for c in params + ["seconds", "status"] if c in rows])
            if "task" in results and results.task.nunique() == 1:
                results = results.drop(columns=["task"])
            else:
                results = results.assign(task=results.task.str[:8])
            if "record" in rows and rows.record.notna().any():
                for record, group in results.groupby("record", sort=False):
                    parts.append(f"<h3>{html.escape(str(record))}</h3>" +
                                 _table(_clean(group).drop(columns=["record"]) if len(group.columns) else group))
            else:
                parts.append("<h3>results</h3>" + _table(_clean(results)))
    if failures:
        parts.append("<h2>Failed tasks</h2>")
        for f in failures:
            parts.append(f"<h3>{html.escape(f['task'])}</h3><pre>{html.escape(json.dumps(f['settings']))}\n"
                         f"{html.escape(f['error'])}</pre>")
    parts.append("<h2>Settings</h2><p>Every task's resolved settings (its hash names its result file):</p>")
    import pandas as pd

    done = store.finished()  # once: it reads every result file
    tasks = pd.DataFrame([{"task": t["task"], "experiment": t["experiment"],
                           "settings": json.dumps(t["settings"], sort_keys=True),
                           "finished": t["task"] in done} for t in meta.get("tasks", [])])
    parts.append(_table(tasks, "settings"))
    if (root / "campaign.toml").exists():
        parts.append("<h3>Campaign file</h3><pre>" + html.escape((root / "campaign.toml").read_text()) + "</pre>")
    parts.append("<h2>Versions</h2>" + _table(pd.DataFrame([{"component": k, "version": v} for k, v in vers.items()]),
                                               "versions"))
    parts.append("</body></html>")
    page = out / "index.html"
    atomic_write(page, "\n".join(parts))
    written = sorted({p.relative_to(out).as_posix() for p in made if p.is_relative_to(out)} | {"index.html"})
    for stale in set(earlier) - set(written):
        (out / stale).unlink(missing_ok=True)
    atomic_write(out / MANIFEST, json.dumps({"files": written}, indent=1))
    return page
