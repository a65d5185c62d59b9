"""Campaign files: parsing, validation with line numbers, expansion into tasks.

A campaign file is TOML: one ``[campaign]`` table and one or more
``[[experiment]]`` tables. Every experiment names a task ``kind`` (see
:data:`ibcloud.campaign.kinds.KINDS`) and its parameters; a parameter given
as a list (where the parameter itself is not a list) is a sweep axis, and an
experiment expands into the cartesian product of its axes, in the order the
kind declares its parameters. Every problem — unknown key, wrong type,
impossible value, missing topology — is found before anything runs and is
reported as ``FILE:LINE: problem`` with the key named.

>>> text = '''
... [campaign]
... name = "demo"
... [[experiment]]
... kind = "route"
... topology = ["4-ary-2-full", "8-ary-2"]
... engine = ["ftree", "minhop"]
... '''
>>> c = parse(text, "demo.toml")
>>> len(c.tasks), c.tasks[0].settings["engine"], c.tasks[1].settings["topology"]
(4, 'ftree', '4-ary-2-full')
>>> parse(text.replace("engine", "engin"), "demo.toml")
Traceback (most recent call last):
...
ibcloud.exceptions.CampaignError: demo.toml:7: unknown key 'engin' in [[experiment]] 1 (kind 'route' takes: name, kind, topology, engine, credit_loops)
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import re
import tomllib
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from ibcloud.exceptions import CampaignError

__all__ = ["Campaign", "Task", "load", "parse", "task_hash"]

#: Keys of the ``[campaign]`` table.
CAMPAIGN_KEYS = ("name", "description")

#: Bumped when a task kind's results change meaning (part of every task hash).
SCHEMA = 1


def task_hash(settings: Dict[str, Any]) -> str:
    """The identity of a task: SHA-256 (first 16 hex digits) of its resolved
    settings as canonical JSON. A finished task is kept under this name, so a
    rerun skips it.

    >>> len(task_hash({"kind": "route", "topology": "ft324", "engine": "ftree"}))
    16
    """
    blob = json.dumps({"schema": SCHEMA, **settings}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclasses.dataclass(frozen=True)
class Task:
    """One task: its kind, its resolved settings (every parameter, defaults
    filled in), the experiment it came from and its hash.

    >>> t = Task.make("route", {"topology": "ft324", "engine": "ftree", "credit_loops": True}, "e1")
    >>> t.kind, t.experiment, len(t.hash)
    ('route', 'e1', 16)
    """

    kind: str
    settings: Dict[str, Any]
    experiment: str
    hash: str

    @classmethod
    def make(cls, kind: str, params: Dict[str, Any], experiment: str) -> "Task":
        """Builds a task from a kind and its resolved parameters.

        >>> Task.make("route", {"topology": "ft324"}, "x").settings
        {'kind': 'route', 'topology': 'ft324'}
        """
        settings = {"kind": kind, **params}
        return cls(kind, settings, experiment, task_hash(settings))


@dataclasses.dataclass
class Campaign:
    """A parsed campaign: name, description, the source text and its tasks
    (deduplicated by hash, in file order).

    >>> c = parse('[[experiment]]\\nkind = "route"\\ntopology = "ft324"\\n', "x.toml")
    >>> c.name, len(c.tasks)
    ('x', 1)
    """

    name: str
    description: str
    source: str
    text: str
    tasks: List[Task]


def _line_of(text: str, section: str, index: int, key: Optional[str]) -> int:
    """1-based line of ``key`` in the ``index``-th (0-based) ``section``
    table (``[campaign]`` or ``[[experiment]]``), or of the header itself."""
    lines = text.splitlines()
    header = re.compile(r"^\s*\[\[\s*experiment\s*\]\]" if section == "experiment" else r"^\s*\[\s*campaign\s*\]")
    any_header = re.compile(r"^\s*\[")
    seen = -1
    start = None
    for i, line in enumerate(lines):
        if header.match(line):
            seen += 1
            if seen == index:
                start = i
                break
    if start is None:
        return 1
    if key is None:
        return start + 1
    keyre = re.compile(r"^\s*(\"?)" + re.escape(key) + r"\1\s*=")
    for j in range(start + 1, len(lines)):
        if any_header.match(lines[j]):
            break
        if keyre.match(lines[j]):
            return j + 1
    return start + 1


def _check_topology(value: str, base: Path) -> str:
    """A generator spec that parses, or a fabric file that exists (made absolute)."""
    from ibcloud.generate import FatTreeParams

    looks_like_file = "/" in value or Path(value).suffix in (".ibcf", ".topo", ".net", ".lst")
    if looks_like_file:
        path = Path(value)
        if not path.is_absolute():
            path = base / path
        if not path.is_file():
            raise ValueError(f"topology file '{value}' does not exist")
        return str(path.resolve())
    try:
        FatTreeParams.parse(value)
    except Exception as error:  # noqa: BLE001 — any parse failure is the user's
        raise ValueError(f"unknown topology '{value}' ({error})") from None
    return value


def _check_scenario(value: Any, base: Path) -> Dict[str, Any]:
    """A host scenario (``ibcloud host run``): a TOML file (looked up in
    ``base`` when relative) or an inline table, checked by the core and
    returned as its table, so a task's hash covers the scenario's contents."""
    from ibcloud.exceptions import ParseError
    from ibcloud.host import Scenario

    try:
        if isinstance(value, str):
            path = Path(value)
            if not path.is_absolute():
                path = base / path
            if not path.is_file():
                raise ValueError(f"scenario file '{value}' does not exist")
            scenario = Scenario.load(path)
        else:
            scenario = Scenario(dict(value), "inline table")
        scenario.check()
    except ParseError as error:
        raise ValueError(str(error)) from None
    return scenario.data


def parse(text: str, source: str = "<campaign>", base: Optional[Path] = None) -> Campaign:
    """Parses and validates campaign ``text`` (``source`` names it in errors;
    relative topology files are looked up in ``base``).

    >>> parse('[[experiment]]\\nkind = "analyze"\\ntopology = "ft324"\\nruns = -1\\n', "c.toml")
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.CampaignError: c.toml:4: runs = -1: must be at least 0
    """
    from ibcloud.campaign.kinds import KINDS

    base = base or Path.cwd()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        match = re.search(r"line (\d+)", str(error))
        raise CampaignError(f"{source}:{match.group(1) if match else 1}: not valid TOML: {str(error)[:300]}") from None
    for key in data:
        if key not in ("campaign", "experiment"):
            line = next((i + 1 for i, l in enumerate(text.splitlines())
                         if re.match(r"^\s*\[*\s*\"?" + re.escape(key) + r"\b", l)), 1)
            raise CampaignError(f"{source}:{line}: unknown key '{key}' (a campaign file has [campaign] and [[experiment]] tables)")
    head = data.get("campaign", {})
    if not isinstance(head, dict):
        raise CampaignError(f"{source}:{_line_of(text, 'campaign', 0, None)}: 'campaign' must be a table")
    for key, value in head.items():
        line = _line_of(text, "campaign", 0, key)
        if key not in CAMPAIGN_KEYS:
            raise CampaignError(f"{source}:{line}: unknown key '{key}' in [campaign] (known: {', '.join(CAMPAIGN_KEYS)})")
        if not isinstance(value, str):
            raise CampaignError(f"{source}:{line}: campaign.{key} must be a string")
    experiments = data.get("experiment", [])
    if not isinstance(experiments, list) or not experiments:
        raise CampaignError(f"{source}:1: no [[experiment]] table: nothing to run")
    tasks: List[Task] = []
    seen = set()
    for index, exp in enumerate(experiments):
        def fail(key: Optional[str], problem: str) -> CampaignError:
            return CampaignError(f"{source}:{_line_of(text, 'experiment', index, key)}: {problem}")

        kind_name = exp.get("kind")
        if kind_name is None:
            raise fail(None, f"[[experiment]] {index + 1} has no 'kind' (one of: {', '.join(KINDS)})")
        if kind_name not in KINDS:
            raise fail("kind", f"unknown kind '{kind_name}' (one of: {', '.join(KINDS)})")
        kind = KINDS[kind_name]
        label = exp.get("name", f"{kind_name}-{index + 1}")
        if not isinstance(label, str):
            raise fail("name", "name must be a string")
        for key in exp:
            if key not in ("name", "kind") and key not in kind.params:
                raise fail(key, f"unknown key '{key}' in [[experiment]] {index + 1} "
                                f"(kind '{kind_name}' takes: name, kind, {', '.join(kind.params)})")
        axes: List[List[Any]] = []
        for pname, param in kind.params.items():
            if pname not in exp:
                if param.required:
                    raise fail(None, f"[[experiment]] {index + 1} (kind '{kind_name}') needs '{pname}'")
                axes.append([param.default])
                continue
            raw = exp[pname]
            values = raw if isinstance(raw, list) and not param.is_list else [raw]
            if isinstance(raw, list) and not param.is_list and not raw:
                raise fail(pname, f"{pname} = []: an empty sweep runs nothing")
            checked = []
            for value in values:
                try:
                    value = param.check(value)
                    if pname == "topology":
                        value = _check_topology(value, base)
                    elif param.type == "scenario":
                        value = _check_scenario(value, base)
                except ValueError as error:
                    raise fail(pname, f"{pname} = {json.dumps(value)}: {error}") from None
                checked.append(value)
            axes.append(checked)
        for combo in itertools.product(*axes):
            params = dict(zip(kind.params, combo))
            try:
                kind.validate(params)
            except ValueError as error:
                key = str(error).split(" ", 1)[0].strip(":")
                raise fail(key if key in kind.params else None, str(error)) from None
            task = Task.make(kind_name, params, label)
            if task.hash not in seen:
                seen.add(task.hash)
                tasks.append(task)
    name = head.get("name") or Path(source).stem
    return Campaign(name, head.get("description", ""), source, text, tasks)


def load(path: Union[str, Path]) -> Campaign:
    """Reads and validates a campaign file.

    >>> load("/no/such/file.toml")
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.CampaignError: /no/such/file.toml: cannot read: No such file or directory
    """
    from ibcloud.exceptions import ParseError
    from ibcloud.safeio import read_text

    path = Path(path)
    try:
        text = read_text(path)
    except OSError as error:
        raise CampaignError(f"{path}: cannot read: {error.strerror}") from None
    except ParseError as error:
        raise CampaignError(str(error)) from None
    if not text.strip():
        raise CampaignError(f"{path}:1: empty campaign file (expected [campaign] and [[experiment]] tables)")
    return parse(text, str(path), path.parent)
