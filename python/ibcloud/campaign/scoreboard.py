"""The reproduction scoreboard of a results store: every headline claim of
every reproduction that ran, with its kind and verdict, and the totals per
paper and overall (``ibcloud reproduce all`` prints and writes them; the
HTML report shows the same table).

Claims come from the ``checks`` of each ``reproduce`` task's stored JSON
(see :mod:`ibcloud.checks`). Only predictions within tolerance count as
reproduced; calibration and construction rows are shown, never counted.

>>> import tempfile
>>> claims_frame(tempfile.mkdtemp()).empty
True
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from ibcloud.checks import VERDICTS
from ibcloud.safeio import dumps_json

__all__ = ["claims_frame", "totals", "markdown", "html_section", "write", "PAPERS"]

#: Reproduction → the paper(s) it reproduces (scoreboard labels).
PAPERS: Dict[str, str] = {
    "sa-cache": "Paper I (SA path-record cache)",
    "vswitch": "Papers II/V (SR-IOV vSwitch)",
    "reconfig": "Papers III/IV (fat-tree reconfiguration)",
    "delay": "Paper VI (workload delay)",
    "pftree": "Seed 002 (pFTree, -Ext, -Wt)",
    "dftree": "Seed 003 (dFtree)",
    "ibmon": "Seed 004 F R1-R2 (IBMon)",
    "thrashing": "Seed 004 F R3 (I/O thrashing)",
    "resex": "Seed 004 F R5-R8 (ResEx)",
    "fares": "Seed 004 F R4 (FaReS)",
    "sphinx": "Seed 004 G R12-R16 (Sphinx)",
    "drx": "Seed 004 G R1-R11 (DRX)",
}

#: Columns of the totals, in order (the verdicts, then the number of claims).
COLUMNS = list(VERDICTS) + ["claims"]


def _checks_of(data: Any) -> List[Dict[str, Any]]:
    checks = data.get("checks") if isinstance(data, dict) else None
    return [c for c in checks if isinstance(c, dict)] if isinstance(checks, list) else []


def claims_frame(results: Union[str, os.PathLike], frame: Any = None) -> Any:
    """One row per claim of every reproduction stored under ``results``
    (or in the store's ``frame`` when given).

    >>> import tempfile
    >>> list(claims_frame(tempfile.mkdtemp()).columns)[:3]
    ['reproduction', 'paper', 'id']
    """
    import pandas as pd

    from ibcloud.campaign.store import Store

    cols = ["reproduction", "paper", "id", "kind", "verdict", "agrees", "claim", "paper_value", "tolerance", "ours",
            "source", "note"]
    if frame is None:
        store = Store(results)
        frame = store.frame("reproduce") if store.finished() else pd.DataFrame()
    if not len(frame) or "record" not in frame:
        return pd.DataFrame(columns=cols)
    rows = []
    for _, summary in frame[frame.record == "summary"].iterrows():
        name = str(summary.get("reproduction"))
        data = json.loads(summary["json"]) if isinstance(summary.get("json"), str) and summary["json"] else None
        for c in _checks_of(data):
            # A check that is not a record of a claim registry (no source) is never counted as evidence.
            verdict = c.get("verdict", "unregistered") if c.get("source") else "unregistered"
            rows.append({"reproduction": name, "paper": PAPERS.get(name, name), "id": c.get("id"),
                         "kind": c.get("kind", "unlabelled") if c.get("source") else "unregistered",
                         "verdict": verdict,
                         "agrees": "" if c.get("verdict") in ("not attempted", "not run")
                         else ("yes" if c.get("passed") else "no"),
                         "claim": c.get("claim", ""), "paper_value": c.get("paper", ""),
                         "tolerance": c.get("tolerance", ""), "ours": c.get("detail", ""),
                         "source": c.get("source", ""), "note": c.get("note", "")})
    return pd.DataFrame(rows, columns=cols)


def _by_reproduction(claims: Any) -> List[Any]:
    """(name, claims) per reproduction, in the order of :data:`PAPERS` (others after, by name)."""
    if not len(claims):
        return []
    order = {name: i for i, name in enumerate(PAPERS)}
    groups = list(claims.groupby("reproduction", sort=False))
    return sorted(groups, key=lambda g: (order.get(g[0], len(order)), g[0]))


def totals(claims: Any) -> Any:
    """Counts per reproduction (paper) and overall.

    >>> import pandas as pd
    >>> t = totals(pd.DataFrame([{"reproduction": "x", "paper": "P", "verdict": "reproduced"}]))
    >>> int(t.loc["overall", "reproduced"]), int(t.loc["overall", "claims"])
    (1, 1)
    """
    import pandas as pd

    extra = sorted(set(claims["verdict"]) - set(VERDICTS)) if len(claims) else []
    cols = COLUMNS[:-1] + extra + ["claims"]
    out = {}
    for name, group in _by_reproduction(claims):
        counts = group["verdict"].value_counts()
        out[name] = {"paper": group["paper"].iloc[0], **{v: int(counts.get(v, 0)) for v in cols[:-1]},
                     "claims": len(group)}
    counts = claims["verdict"].value_counts() if len(claims) else {}
    out["overall"] = {"paper": "all", **{v: int(counts.get(v, 0)) for v in cols[:-1]}, "claims": len(claims)}
    return pd.DataFrame.from_dict(out, orient="index")[["paper"] + cols]


def _md_cell(text: Any) -> str:
    return str(text if text is not None else "").replace("|", "\\|").replace("\n", " ")


def markdown(claims: Any, command: str = "ibcloud reproduce all") -> str:
    """docs/reproductions/SCOREBOARD.md: the rules, the totals and every claim.

    >>> import pandas as pd
    >>> "| overall |" in markdown(pd.DataFrame(columns=["reproduction", "paper", "verdict"]))
    True
    """
    t = totals(claims)
    lines = [
        "# Reproduction scoreboard",
        "",
        f"Generated by `{command}` (do not edit by hand; the claim registries are",
        "`python/ibcloud/claims/*.toml`). Every headline claim of every reproduction",
        "is one record: where it is in the paper, the paper's value, a tolerance",
        "fixed from the paper's own precision *before* our value was looked at, and",
        "its kind:",
        "",
        "* **prediction** — nothing in our model was fitted to it;",
        "* **calibration** — a parameter of ours was fitted to it;",
        "* **construction** — closed-form arithmetic, an input, or enforced by the",
        "  algorithm on the same data it is judged on;",
        "* **qualitative** — a direction or ordering without a number.",
        "",
        "Verdicts: **reproduced** only for a prediction within its tolerance;",
        "**shape only** for a qualitative claim that holds, or a prediction outside",
        "its tolerance whose direction still holds; **not reproduced**; **not",
        "attempted** (never run: wall-clock comparisons belong to the benchmarks, and",
        "experiments we have no model for); calibration and construction rows are",
        "shown as such (with whether they agree within tolerance) and never counted.",
        "The exit status of a reproduction depends",
        "on its prediction and qualitative rows only, never on wall-clock time.",
        "",
        "Tolerance rules (the per-claim `tolerance` says which applied):",
        "",
        "1. a value printed exactly: ± one unit in its last printed digit (it may be",
        "   rounded or truncated);",
        "2. a value the paper marks approximate (≈, about, ~, \"up to about\"): ± half a",
        "   unit of its last non-zero digit (≈ 80 % → 75–85 %; ≈ 1 % → ≤ 1.5 %);",
        "3. counts and exact fractions that follow from the topology: exact;",
        "4. a bound (\"at least\", \"never\"): the bound itself, one printed unit of slack.",
        "",
        "Where a claim is not reproduced, the reproduction page",
        "(`docs/reproductions/NAME.md`) shows what we found about the cause.",
        "",
        "## Totals",
        "",
        "| reproduction | paper | " + " | ".join(t.columns[1:]) + " |",
        "|---|---|" + "---|" * (len(t.columns) - 1),
    ]
    for name, row in t.iterrows():
        lines.append(f"| {name} | {row['paper']} | " + " | ".join(str(int(row[c])) for c in t.columns[1:]) + " |")
    for name, group in _by_reproduction(claims):
        lines += ["", f"## {name}: {group['paper'].iloc[0]}", "",
                  "| id | kind | verdict | within tolerance | claim | paper | tolerance | ours | source |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for _, c in group.iterrows():
            lines.append("| " + " | ".join(_md_cell(c.get(k, "")) for k in (
                "id", "kind", "verdict", "agrees", "claim", "paper_value", "tolerance", "ours", "source")) + " |")
    return "\n".join(lines) + "\n"


def write(claims: Any, out: Union[str, os.PathLike]) -> List[Path]:
    """``scoreboard.json`` (claims and totals) and ``scoreboard.parquet``
    (one row per claim) in ``out``.

    >>> import tempfile, pandas as pd
    >>> [p.name for p in write(pd.DataFrame(columns=["reproduction", "paper", "verdict"]), tempfile.mkdtemp())]
    ['scoreboard.json', 'scoreboard.parquet']
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t = totals(claims)
    j = out / "scoreboard.json"
    j.write_text(dumps_json({"totals": {k: dict(v) for k, v in t.to_dict(orient="index").items()},
                             "claims": claims.to_dict(orient="records")}, indent=2, default=str) + "\n")
    p = out / "scoreboard.parquet"
    claims.astype(str).to_parquet(p, index=False)
    return [j, p]


def html_section(results: Union[str, os.PathLike, None] = None, frame: Any = None) -> str:
    """The scoreboard as an HTML section for the campaign report (empty when
    no reproduction ran).

    >>> import tempfile
    >>> html_section(tempfile.mkdtemp())
    ''
    """
    claims = claims_frame(results or ".", frame)
    if not len(claims):
        return ""
    t = totals(claims)
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in ["reproduction"] + list(t.columns))
    body = "".join("<tr>" + f"<td>{html.escape(str(name))}</td>" +
                   "".join(f"<td>{html.escape(str(v))}</td>" for v in row.values) + "</tr>" for name, row in t.iterrows())
    cols = ["reproduction", "id", "kind", "verdict", "agrees", "claim", "paper_value", "tolerance", "ours", "source"]
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(str(c[k]))}</td>" for k in cols) + "</tr>"
                   for _, c in claims.iterrows())
    return ("<h2>Reproduction scoreboard</h2><p>Only a prediction within its tolerance counts as reproduced; "
            "calibration and construction rows are shown, never counted.</p>"
            f"<table class=\"scoreboard\"><tr>{head}</tr>{body}</table>"
            f"<table class=\"claims\"><tr>{''.join(f'<th>{c}</th>' for c in cols)}</tr>{rows}</table>")


def render_totals(claims: Any, file: Optional[Any] = None) -> None:
    """Prints the totals per paper and overall as plain text.

    >>> import pandas as pd
    >>> render_totals(pd.DataFrame([{"reproduction": "x", "paper": "P", "verdict": "reproduced"}]))  # doctest: +ELLIPSIS
    <BLANKLINE>
    Scoreboard: ...
    """
    import sys

    out = file or sys.stdout
    t = totals(claims)
    short = {"reproduced": "reprod.", "calibration": "calib.", "construction": "constr.", "shape only": "shape",
             "not reproduced": "not repr.", "not attempted": "not att.", "not run": "not run"}
    cols = list(t.columns[1:])
    print("\nScoreboard: claims per paper (only predictions within tolerance count as reproduced)", file=out)
    print(f"  {'reproduction':<12} {'paper':<42}" + "".join(f"{short.get(c, c):>10}" for c in cols), file=out)
    for name, row in t.iterrows():
        print(f"  {name:<12} {str(row['paper']):<42}" + "".join(f"{int(row[c]):>10}" for c in cols), file=out)
