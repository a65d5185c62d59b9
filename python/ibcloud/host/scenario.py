"""Scenario files for ``ibcloud host run``: TOML in, checked by the Rust
core table by table (unknown keys rejected), errors located to a line.

>>> s = Scenario.from_text(EXAMPLE)
>>> s.data["workloads"][0]["kind"]
'rdma-write'
>>> try:
...     Scenario.from_text(EXAMPLE.replace("depth = 16", "depht = 16"), "x.toml").check()
... except ParseError as err:
...     print(str(err).split(": unknown")[0])
x.toml:24: workloads[0]
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from ibcloud import _native
from ibcloud.exceptions import ParseError

__all__ = ["EXAMPLE", "Scenario", "locate"]

#: A small scenario: F's testbed, one RDMA Write stream at depth 16.
EXAMPLE = """\
duration = "50ms"
seed = 1

[[hosts]]
name = "A"
pcpus = 8

[[hosts]]
name = "B"

[[vms]]
name = "vm1"
host = "A"

[[vms]]
name = "peer"
host = "B"

[[workloads]]
kind = "rdma-write"
vm = "vm1"
peer = "peer"
size = "64k"
depth = 16
"""

_HEADER = re.compile(r"^\s*\[(\[)?\s*([A-Za-z0-9_.\-]+)\s*\]?\]\s*(#.*)?$")


def _non_finite(value: Any, path: str = "") -> Optional[Tuple[str, str]]:
    """The first NaN or infinity in a parsed document, as (path, problem):
    TOML allows ``nan`` and ``inf``, JSON (what the core reads) does not,
    and no scenario key means anything by them.

    >>> _non_finite({"controllers": [{"kind": "fares", "alpha": float("nan")}]})
    ('controllers[0].alpha', 'nan is not a finite number')
    >>> _non_finite({"seed": 1}) is None
    True
    """
    if isinstance(value, float) and not math.isfinite(value):
        return path, f"{value} is not a finite number"
    if isinstance(value, dict):
        for k, v in value.items():
            found = _non_finite(v, f"{path}.{k}" if path else str(k))
            if found:
                return found
    if isinstance(value, list):
        for i, v in enumerate(value):
            found = _non_finite(v, f"{path}[{i}]")
            if found:
                return found
    return None


def locate(text: str, path: str, problem: str = "") -> int:
    """The 1-based line a checker error path (``workloads[2].depth``) points
    at in ``text``; the key named in an ``unknown field `x``` problem wins.

    >>> locate("a = 1\\n[[vms]]\\nname = 'x'\\n[[vms]]\\nname = 'y'\\ncap = 500\\n", "vms[1].cap")
    6
    """
    lines = text.splitlines()
    m = re.match(r"^([A-Za-z\-]+)(?:\[(\d+)\])?((?:\.[A-Za-z0-9\-]+)*)$", path or "")
    unknown = re.search(r"unknown field `([^`]+)`", problem)
    keys: List[str] = []
    top, index = "", None
    if m:
        top, index = m.group(1), m.group(2)
        keys = [k for k in m.group(3).split(".") if k]
    if unknown:
        keys = keys + [unknown.group(1)]
    # The line range of the table the path names.
    start, end = 0, len(lines)
    if index is not None or (top and top not in ("duration", "seed", "sample-interval", "max-events", "max-samples")):
        seen = -1
        found = False
        for i, line in enumerate(lines):
            h = _HEADER.match(line)
            if not h:
                continue
            name = h.group(2)
            if found and not name.startswith(top + "."):
                end = i
                break
            if name == top and (index is None or h.group(1)):
                seen += 1
                if index is None or seen == int(index):
                    start, found = i, True
        if not found:
            start, end = 0, len(lines)
    else:
        for i, line in enumerate(lines):
            if _HEADER.match(line):
                end = i
                break
    for key in reversed(keys or [top]):
        pat = re.compile(r"^\s*(" + re.escape(key) + r"|\"" + re.escape(key) + r"\")\s*=|[{,]\s*" + re.escape(key) + r"\s*=")
        for i in range(start, end):
            if pat.search(lines[i]):
                return i + 1
    return start + 1


@dataclass
class Scenario:
    """A scenario: the parsed TOML document (``data``) and where it came from.

    >>> Scenario({"hosts": [{"name": "A"}, {"name": "B"}]}).check().data["hosts"][1]["name"]
    'B'


    Build one from a file (:meth:`load`), text (:meth:`from_text`) or a
    dict (``Scenario(data)``); :meth:`check` validates it in the core;
    :func:`ibcloud.host.run` runs it.
    """

    data: Dict[str, Any]
    source: str = "<scenario>"
    text: Optional[str] = None
    _checked: bool = field(default=False, repr=False)

    @classmethod
    def load(cls, path: Union[str, Path]) -> "Scenario":
        """Reads a TOML scenario file.

        >>> import pathlib, tempfile
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.toml"; _ = p.write_text(EXAMPLE)
        >>> Scenario.load(p).data["duration"]
        '50ms'
        """
        p = Path(path)
        sc = cls.from_text(p.read_text(), str(p))
        fabric = sc.data.get("fabric")
        if isinstance(fabric, dict) and isinstance(fabric.get("file"), str):
            # A fabric file is named relative to the scenario file.
            fabric["file"] = str((p.parent / fabric["file"]).resolve())
        if isinstance(fabric, dict) and isinstance(fabric.get("qos"), str):
            # So is a QoS policy file (a preset name stays as it is).
            q = p.parent / fabric["qos"]
            if q.is_file():
                fabric["qos"] = str(q.resolve())
        return sc

    @classmethod
    def from_text(cls, text: str, source: str = "<scenario>") -> "Scenario":
        """Parses TOML text (syntax errors name the line).

        >>> try:
        ...     Scenario.from_text("a = = 1", "bad.toml")
        ... except ParseError as err:
        ...     print(str(err).split(":")[:2])
        ['bad.toml', '1']
        """
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            m = re.search(r"\(at line (\d+), column (\d+)\)", str(err))
            where = f"{source}:{m.group(1)}" if m else source
            msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(err))
            raise ParseError(f"{where}: {msg}") from None
        return cls(data, source, text)

    def to_json(self) -> str:
        """The document as JSON (what the core reads).

        >>> Scenario({"seed": 3}).to_json()
        '{"seed": 3}'
        """
        return json.dumps(self.data, default=str)

    def check(self) -> "Scenario":
        """Validates everything before a run; raises :class:`ParseError`
        naming the file and line.

        >>> bad = EXAMPLE.replace('host = "B"', 'host = "C"')
        >>> try:
        ...     Scenario.from_text(bad, "s.toml").check()
        ... except ParseError as err:
        ...     print(err)
        s.toml:17: vms[1].host: unknown host 'C'
        """
        problem: Optional[Tuple[str, str]] = _non_finite(self.data)
        if problem is None:
            problem = _native.host_check(self.to_json())
        if problem is not None:
            path, what = problem
            if self.text is not None:
                line = locate(self.text, path, what)
                raise ParseError(f"{self.source}:{line}: {path + ': ' if path else ''}{what}")
            raise ParseError(f"{self.source}: {path + ': ' if path else ''}{what}")
        self._checked = True
        return self
