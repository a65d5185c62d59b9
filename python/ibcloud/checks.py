"""What counts as reproduced: one claim registry, one :class:`Check` per
headline claim of a paper, and the scoreboard that counts them.

Every headline claim of a reproduction is one record of its registry,
``python/ibcloud/claims/NAME.toml`` (id, source, the paper's value, a
tolerance fixed from the paper's own precision before our value was looked
at, and a *kind*):

* ``prediction`` — nothing in our model was fitted to it;
* ``calibration`` — a parameter of ours was fitted to it;
* ``construction`` — closed-form arithmetic, an input, or enforced by the
  algorithm on the same data it is judged on;
* ``qualitative`` — a direction or an ordering without a number.

A run judges each record (:meth:`Claim.judge`) and gets a :class:`Check`
whose :attr:`Check.verdict` is one of ``reproduced`` (only a prediction
within its tolerance), ``shape only`` (a qualitative claim that holds, or a
prediction outside its tolerance whose direction holds), ``not reproduced``,
``not attempted`` (the registry says we never ran it), ``not run`` (this
run's options skipped it), or ``calibration`` / ``construction`` (shown,
never counted as evidence). The exit status of a reproduction
(:func:`exit_status`) depends on the prediction and qualitative rows only.

>>> c = Check("R1", "Fig. 3 cases", True, "totals 0 / 7.5 / 3 min", kind="construction")
>>> c.mark, c.verdict
('ok', 'construction')
>>> Check("H1", "x", True, "", kind="prediction").verdict
'reproduced'
"""

from __future__ import annotations

import dataclasses
import tomllib
from importlib import resources
from typing import Any, Dict, Iterable, List, Optional

__all__ = ["Check", "Claim", "KINDS", "VERDICTS", "claims", "parse_registry", "complete", "counts", "exit_status", "scoreboard_rows",
           "render_scoreboard"]

#: The kinds of claim (see the module's docstring).
KINDS = ("prediction", "calibration", "construction", "qualitative")
#: Verdicts in scoreboard order.
VERDICTS = ("reproduced", "calibration", "construction", "shape only", "not reproduced", "not attempted", "not run")


@dataclasses.dataclass(frozen=True)
class Check:
    """One claim of the paper and what our run shows.

    >>> Check("C1", "phy shares no link", True, "9/9 trees").passed
    True
    >>> Check("T2", "7.5 Gb/s", False, "12.5", kind="prediction", shape=True).verdict
    'shape only'
    """

    id: str
    """The claim's id in the registry and the reproduction page (docs/reproductions/NAME.md)."""
    claim: str
    """What the paper shows."""
    passed: bool
    """Whether our value agrees with the paper's within the tolerance (or the stated condition holds)."""
    detail: str
    """Our numbers behind the verdict."""
    kind: str = "prediction"
    """prediction, calibration, construction or qualitative."""
    source: str = ""
    """Where the claim is: seed file and line, or reference section."""
    paper: str = ""
    """The paper's value as printed."""
    tolerance: str = ""
    """The tolerance, fixed from the paper's precision before comparing."""
    shape: Optional[bool] = None
    """For a prediction outside its tolerance: whether its direction/ordering still holds."""
    attempted: bool = True
    """False when we never ran the experiment (verdict ``not attempted``)."""
    run: bool = True
    """False when this run's options skipped it (verdict ``not run``)."""
    note: str = ""
    """Why the tolerance is what it is, or the cause of a gap."""

    @property
    def mark(self) -> str:
        """``ok`` or ``FAIL`` (agreement, whatever the kind).

        >>> Check("R9", "x", False, "").mark
        'FAIL'
        """
        return "ok" if self.passed else "FAIL"

    @property
    def verdict(self) -> str:
        """The scoreboard verdict (see :data:`VERDICTS`).

        >>> Check("a", "b", True, "", kind="qualitative").verdict
        'shape only'
        >>> Check("a", "b", True, "", attempted=False).verdict
        'not attempted'
        """
        if not self.attempted:
            return "not attempted"
        if not self.run:
            return "not run"
        if self.kind in ("calibration", "construction"):
            return self.kind
        if self.kind == "qualitative":
            return "shape only" if self.passed else "not reproduced"
        if self.passed:
            return "reproduced"
        return "shape only" if self.shape else "not reproduced"

    @property
    def evidence(self) -> bool:
        """Whether this row decides the exit status (prediction or qualitative, run).

        >>> Check("a", "b", True, "", kind="construction").evidence
        False
        """
        return self.attempted and self.run and self.kind in ("prediction", "qualitative")

    def as_dict(self) -> Dict[str, Any]:
        """JSON form.

        >>> Check("a", "b", False, "c").as_dict()["verdict"]
        'not reproduced'
        """
        d = dataclasses.asdict(self)
        d.update(verdict=self.verdict, mark=self.mark)
        return d


@dataclasses.dataclass(frozen=True)
class Claim:
    """One record of a claim registry (``ibcloud/claims/NAME.toml``).

    >>> r = claims("delay")
    >>> r["R2"].kind
    'calibration'
    """

    id: str
    claim: str
    kind: str
    source: str
    paper: str = ""
    tolerance: str = ""
    attempted: bool = True
    note: str = ""

    def judge(self, passed: bool, detail: str, shape: Optional[bool] = None) -> Check:
        """Our verdict on this claim.

        >>> claims("delay")["R1"].judge(True, "ok").verdict
        'construction'
        """
        return Check(self.id, self.claim, bool(passed), detail, self.kind, self.source, self.paper, self.tolerance,
                     None if shape is None else bool(shape), self.attempted, True, self.note)

    def skipped(self, why: str) -> Check:
        """This claim as not attempted (registry) or not run (options of this run).

        >>> claims("delay")["R1"].skipped("--x").verdict
        'not run'
        """
        return Check(self.id, self.claim, False, why, self.kind, self.source, self.paper, self.tolerance, None,
                     self.attempted, False, self.note)


def claims(name: str) -> Dict[str, Claim]:
    """The claim registry of reproduction ``name``, in file order.

    >>> list(claims("delay"))[:3]
    ['R1', 'R2', 'R3']
    """
    text = resources.files("ibcloud.claims").joinpath(f"{name}.toml").read_text(encoding="utf-8")
    return parse_registry(text, f"ibcloud/claims/{name}.toml")


def parse_registry(text: str, where: str) -> Dict[str, Claim]:
    """Claims of one registry's TOML ``text`` (errors name ``where`` and the record).

    >>> parse_registry('[[claim]]\\nid = "A"\\nclaim = "x"\\nkind = "guess"\\nsource = "s"\\n', "f.toml")
    Traceback (most recent call last):
    ...
    ValueError: f.toml, claim 1: kind 'guess' is not one of prediction, calibration, construction, qualitative
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{where}: {e}") from None
    out: Dict[str, Claim] = {}
    for i, rec in enumerate(data.get("claim", [])):
        at = f"{where}, claim {i + 1}"
        missing = [k for k in ("id", "claim", "kind", "source") if k not in rec]
        if missing:
            raise ValueError(f"{at}: missing {', '.join(missing)}")
        if rec["kind"] not in KINDS:
            raise ValueError(f"{at}: kind '{rec['kind']}' is not one of {', '.join(KINDS)}")
        if rec["id"] in out:
            raise ValueError(f"{at}: duplicate id {rec['id']}")
        out[rec["id"]] = Claim(**{k: v for k, v in rec.items() if k in Claim.__dataclass_fields__})
    return out


def complete(name: str, judged: Iterable[Check], skipped_why: str = "not run with these options") -> List[Check]:
    """Every claim of the registry, in registry order: the judged ones, the
    rest as not attempted / not run.

    >>> rows = complete("delay", [])
    >>> {c.verdict for c in rows} <= {"not run", "not attempted"}
    True
    """
    by = {c.id: c for c in judged}
    reg = claims(name)
    unknown = [i for i in by if i not in reg]
    if unknown:
        raise ValueError(f"ibcloud/claims/{name}.toml has no claim {', '.join(unknown)}")
    out = []
    for cid, claim in reg.items():
        if not claim.attempted:
            out.append(claim.skipped("never attempted (see the reproduction page)"))
        elif cid in by:
            out.append(by[cid])
        else:
            out.append(claim.skipped(skipped_why))
    return out


def counts(checks: Iterable[Any]) -> Dict[str, int]:
    """How many claims have each verdict (dicts or :class:`Check`).

    >>> counts([Check("a", "b", True, ""), Check("c", "d", True, "", kind="calibration")])["reproduced"]
    1
    """
    out = {v: 0 for v in VERDICTS}
    for c in checks:
        v = c["verdict"] if isinstance(c, dict) else c.verdict
        out[v] = out.get(v, 0) + 1
    out["claims"] = sum(out[v] for v in VERDICTS)
    return out


def exit_status(checks: Iterable[Check]) -> int:
    """0 when every prediction and qualitative claim that ran holds, else 1
    (calibration and construction rows and timings never decide it).

    >>> exit_status([Check("a", "b", False, "", kind="construction")])
    0
    >>> exit_status([Check("a", "b", False, "")])
    1
    """
    return 0 if all(c.passed for c in checks if c.evidence) else 1


def scoreboard_rows(checks: Iterable[Check]) -> List[Dict[str, Any]]:
    """The scoreboard as records (for JSON, Parquet and the HTML report).

    >>> scoreboard_rows([Check("a", "b", True, "x")])[0]["verdict"]
    'reproduced'
    """
    return [c.as_dict() for c in checks]


def render_scoreboard(name: str, checks: List[Check], file: Any = None) -> None:
    """Prints the scoreboard of one reproduction as plain text (every claim
    with its kind, the paper's value, the tolerance, ours and the verdict,
    then the counts).

    >>> render_scoreboard("x", [Check("C1", "claim", True, "3.2", paper="3", tolerance="±0.5")])
    <BLANKLINE>
    Scoreboard (x): every headline claim, its kind and our verdict
      C1   prediction    reproduced         claim
                                            paper 3 (tolerance ±0.5) | ours 3.2
    1 claim: 1 reproduced (prediction within tolerance)
    """
    import sys

    out = file or sys.stdout
    print(f"\nScoreboard ({name}): every headline claim, its kind and our verdict", file=out)
    for c in checks:
        verdict = c.verdict + (", off" if c.kind in ("calibration", "construction") and c.run and not c.passed else "")
        print(f"  {c.id:<4} {c.kind:<13} {verdict:<18} {c.claim}", file=out)
        paper = f"paper {c.paper}" + (f" (tolerance {c.tolerance})" if c.tolerance else "") + " | " if c.paper else ""
        print(f"  {'':<37} {paper}ours {c.detail}", file=out)
    n = counts(checks)
    parts = [f"{n['reproduced']} reproduced (prediction within tolerance)"]
    parts += [f"{n[v]} {v}" for v in VERDICTS[1:] if n[v]]
    print(f"{n['claims']} claim{'s' if n['claims'] != 1 else ''}: " + ", ".join(parts), file=out)
