"""What a command may write over: one rule for every output option.

docs/cli.md: a command never replaces or deletes what it did not create
unless ``--force`` is given. :data:`OUTPUTS` names every option of the
command line that writes (checked against the whole parser by
``tests/unit/test_hardening.py``, so a new output option cannot slip by);
:func:`add_force` gives each of those commands ``--force``, and
:func:`check` runs before the command does anything:

* a **file** option (``-o x.dump``, ``--plot a.png``, ``--csv PREFIX`` for
  its three files) refuses a path that already exists. ibcloud cannot tell
  a file it wrote an hour ago from the user's thesis, so re-running into the
  same name needs ``--force`` (or another name), as with ``set -o noclobber``.
  A path that exists but is not a regular file (``/dev/null``, a FIFO) is
  written in place, never renamed over; ``-`` is stdout.
* a **folder** option (``sim --out DIR``, ``host run --out DIR``, ``route
  --qos-dir DIR``, ``sm run --dump-dir DIR``) is used when it does not exist,
  is empty, or was written before by the same command: after a successful
  run the command leaves ``DIR/.ibcloud-out.json`` naming itself, so running
  it again into DIR works without ``--force``; a folder holding anything
  else is refused.
* ``run``, ``campaign run``, ``report`` and ``reproduce`` manage their
  folders themselves with finer rules (a campaign store knows its files, a
  report lists its plots); they are ``"own"`` here.
* ``sm run --guid2lid`` is OpenSM's LID cache and ``event --metabase`` Paper
  III's metabase, both read and rewritten on purpose;
  ``reproduce --scoreboard`` regenerates a tracked document on purpose.

>>> import argparse, tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "thesis.dump").write_text("mine")
>>> args = argparse.Namespace(output=str(d / "thesis.dump"), force=False)
>>> try:
...     check(("route",), args)
... except Exception as err:
...     print(str(err).replace(str(d), "D"))
D/thesis.dump already exists; ibcloud replaces a file only with --force (or give another -o/--out)
>>> args.force = True
>>> check(("route",), args)
"""

from __future__ import annotations

import argparse
import os
import stat
from typing import TYPE_CHECKING, Dict, Iterator, Tuple

if TYPE_CHECKING:  # imported where used: ``--help`` loads this module and should stay quick
    from pathlib import Path

__all__ = ["OUTPUTS", "add_force", "check", "check_folder", "mark_done", "mark_folder", "MARKER"]

#: Command path → {argparse dest: kind}. Kinds: "file", "prefix" (analyze
#: --csv: PREFIX-runs.csv, -hist_max_cong.csv, -links.csv), "dir" (marker
#: rule above), "own" (the command's own rules), "cache" (read and rewritten
#: on purpose). Every option that writes must be listed.
OUTPUTS: Dict[Tuple[str, ...], Dict[str, str]] = {
    ("topo", "generate"): {"output": "file"},
    ("topo", "convert"): {"output": "file"},
    ("route",): {"output": "file", "path_sls": "file", "psl": "file", "sl2vl_dump": "file", "qos_dir": "dir"},
    ("event",): {"output": "file", "metabase": "cache"},
    ("analyze",): {"csv": "prefix", "plot": "file"},
    ("consolidate",): {"placement": "file"},
    ("vswitch", "build"): {"output": "file"},
    ("migrate",): {"write": "file"},
    ("migrate-sim",): {"csv": "file"},
    ("sim",): {"out": "dir"},
    ("host", "run"): {"out": "dir"},
    ("host", "nectere"): {"out": "dir"},
    ("host", "layout"): {"out": "file"},
    ("sm", "run"): {"summary": "file", "smp_log": "file", "dump_dir": "dir", "guid2lid": "cache"},
    ("agent",): {"log": "file", "parquet": "file"},
    ("qos", "write"): {"out": "file"},
    ("cc", "write"): {"out": "file"},
    ("run",): {"out": "own", "report": "own"},
    ("campaign", "run"): {"results": "own", "report": "own"},
    ("report",): {"out": "own"},
    ("reproduce",): {"results": "own", "report": "own", "scoreboard": "cache"},
}

#: Suffixes an ``analyze --csv PREFIX`` writes.
PREFIX_FILES = ("-runs.csv", "-hist_max_cong.csv", "-links.csv")

#: Left in a folder output after a successful run: which command wrote it.
MARKER = ".ibcloud-out.json"


def _refuse(message: str) -> None:
    """An output would replace something the command did not create: an
    :class:`~ibcloud.IbcloudError` (exit 2). Imported here, not at the top:
    ``--help`` must not load the Rust core."""
    from ibcloud.exceptions import IbcloudError

    raise IbcloudError(message)


def add_force(parser: argparse.ArgumentParser, path: Tuple[str, ...]) -> None:
    """Gives ``parser`` (the command at ``path``) ``--force`` unless it has one.

    >>> p = argparse.ArgumentParser()
    >>> add_force(p, ("route",))
    >>> p.parse_args(["--force"]).force
    True
    """
    if path not in OUTPUTS or any("--force" in a.option_strings for a in parser._actions):
        return
    parser.add_argument("--force", action="store_true",
                        help="replace existing output files and write into folders ibcloud did not create")


def _targets(path: Tuple[str, ...], args: argparse.Namespace) -> Iterator[Tuple[str, str, str]]:
    """(option dest, kind, one path it writes) for each output given."""
    for dest, kind in OUTPUTS.get(path, {}).items():
        value = getattr(args, dest, None)
        if value in (None, "", "-") or kind in ("own", "cache"):
            continue
        if kind == "prefix":
            for suffix in PREFIX_FILES:
                yield dest, "file", f"{os.fspath(value)}{suffix}"
        else:
            yield dest, kind, os.fspath(value)


def _option(dest: str) -> str:
    return {"output": "-o/--out", "out": "-o/--out", "placement": "-o/--out", "write": "-o/--out",
            "csv": "--csv"}.get(
        dest, "--" + dest.replace("_", "-"))


def _ours(folder: Path, command: str) -> bool:
    import json

    try:
        return json.loads((folder / MARKER).read_text()).get("command") == command
    except (OSError, ValueError, AttributeError):
        return False


def check(path: Tuple[str, ...], args: argparse.Namespace) -> None:
    """Raises :class:`~ibcloud.IbcloudError` when an output of the command at
    ``path`` would replace something it did not create and ``args.force``
    is not set (module docstring).

    >>> check(("topo", "generate"), argparse.Namespace(output="no/such/file.net", force=False))
    >>> check(("topo", "generate"), argparse.Namespace(output="-", force=False))  # stdout
    """
    if getattr(args, "force", False):
        return
    command = " ".join(path)
    for dest, kind, target in _targets(path, args):
        try:
            st = os.stat(target)
        except FileNotFoundError:
            continue
        except OSError:
            continue  # let the command report what it cannot reach
        if kind == "file":
            if stat.S_ISREG(st.st_mode):
                _refuse(f"{target} already exists; ibcloud replaces a file only with --force "
                                        f"(or give another {_option(dest)})")
            # /dev/null, a FIFO: written in place; a folder: the writer names the problem
        elif kind == "dir" and stat.S_ISDIR(st.st_mode):
            from pathlib import Path

            check_folder(Path(target), command)


def check_folder(folder: Path, command: str, force: bool = False) -> None:
    """Raises :class:`~ibcloud.IbcloudError` when ``folder`` holds anything and
    was not written by ``command`` before (its :data:`MARKER`), unless ``force``.

    >>> import json, tempfile
    >>> from pathlib import Path
    >>> d = Path(tempfile.mkdtemp())
    >>> check_folder(d, "sim")  # empty
    >>> _ = (d / "notes.txt").write_text("mine")
    >>> try:
    ...     check_folder(d, "sim")
    ... except Exception as err:
    ...     print(str(err).replace(str(d), "D"))
    D: folder holds files 'ibcloud sim' did not write (notes.txt); give an empty or new folder, or --force to write into it
    >>> mark_folder(d, "sim"); check_folder(d, "sim")  # once marked as its own
    """
    if force or not folder.is_dir():
        return
    if _ours(folder, command):
        return
    # Sub-folders the same command wrote (`reproduce delay` into
    # out/reproductions/delay, then `reproduce all` into out/reproductions) are its own too.
    entries = [p.name for p in folder.iterdir() if p.name != MARKER and not (p.is_dir() and _ours(p, command))]
    if entries:
        shown = ", ".join(sorted(entries)[:3]) + (", ..." if len(entries) > 3 else "")
        _refuse(f"{folder}: folder holds files 'ibcloud {command}' did not write ({shown}); "
                                f"give an empty or new folder, or --force to write into it")


def mark_folder(folder: Path, command: str) -> None:
    """Leaves :data:`MARKER` naming ``command`` in ``folder`` (when it exists).

    >>> import json, tempfile
    >>> from pathlib import Path
    >>> d = Path(tempfile.mkdtemp())
    >>> mark_folder(d, "host run"); json.loads((d / MARKER).read_text())
    {'command': 'host run'}
    """
    import json

    from ibcloud.safeio import atomic_write

    if not folder.is_dir():
        return
    try:
        atomic_write(folder / MARKER, json.dumps({"command": command}) + "\n")
    except OSError:
        pass  # a read-only folder: the next run needs --force, nothing worse


def mark_done(path: Tuple[str, ...], args: argparse.Namespace) -> None:
    """After a run: leaves :data:`MARKER` in each folder output, so the same
    command may write there again.

    >>> import json, tempfile
    >>> from pathlib import Path
    >>> d = Path(tempfile.mkdtemp())
    >>> mark_done(("sim",), argparse.Namespace(out=str(d))); (d / MARKER).exists()
    True
    """
    from pathlib import Path

    for dest, kind, target in _targets(path, args):
        if kind == "dir":
            mark_folder(Path(target), " ".join(path))
