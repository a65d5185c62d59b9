"""What counts as reproduced: one :class:`Check` per claim of a paper.

Every ``ibcloud reproduce NAME`` module lists its claims as checks, prints
them and exits 1 when one fails.

>>> Check("R1", "Fig. 3 cases", True, "totals 0 / 7.5 / 3 min").mark
'ok'
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict

__all__ = ["Check"]


@dataclasses.dataclass(frozen=True)
class Check:
    """One claim of the paper and whether our run shows it.

    >>> Check("C1", "phy shares no link", True, "9/9 trees").passed
    True
    """

    id: str
    """The claim's id in the reproduction page (docs/reproductions/NAME.md)."""
    claim: str
    """What the paper shows."""
    passed: bool
    """Whether this run shows it."""
    detail: str
    """Our numbers behind the verdict."""

    @property
    def mark(self) -> str:
        """``ok`` or ``FAIL``.

        >>> Check("R9", "x", False, "").mark
        'FAIL'
        """
        return "ok" if self.passed else "FAIL"

    def as_dict(self) -> Dict[str, Any]:
        """JSON form.

        >>> Check("a", "b", False, "c").as_dict()["id"]
        'a'
        """
        return {"id": self.id, "claim": self.claim, "passed": self.passed, "detail": self.detail}
