"""The results store: one directory per campaign run.

Layout::

    RESULTS/
      campaign.toml          the campaign file as given (last run)
      tasks.json             every task of the campaign: hash, kind, experiment, settings
      versions.json          ibcloud, Python and library versions of the last run
      results/<hash>.parquet rows of one finished task (written atomically)
      files/<hash>/...       files a task produced (plots, reproduction output)
      failed/<hash>.json     the error of a task that failed (removed when it succeeds)

A task is finished when its Parquet file exists; nothing else marks it, so
an interrupted run (killed client, dead worker) loses only unfinished tasks.
Every row carries ``task``, ``kind``, ``experiment``, ``settings`` (JSON),
``seconds``, ``status`` and the task's parameters as columns.

>>> import tempfile
>>> store = Store(tempfile.mkdtemp())
>>> store.finished()
set()
"""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from ibcloud.exceptions import CampaignError
from ibcloud.safeio import atomic_path, atomic_write

__all__ = ["Store", "query", "versions"]


def versions() -> Dict[str, str]:
    """Versions of ibcloud, Python and the libraries results depend on.

    >>> "ibcloud" in versions() and "python" in versions()
    True
    """
    from importlib import metadata

    from ibcloud import __version__

    out = {"ibcloud": __version__, "python": sys.version.split()[0], "platform": platform.platform()}
    for name in ("numpy", "pandas", "pyarrow", "dask", "distributed", "duckdb", "matplotlib"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


class Store:
    """A results directory (created when missing).

    >>> import tempfile
    >>> Store(tempfile.mkdtemp()).path.is_dir()
    True
    """

    def __init__(self, path: Union[str, os.PathLike]) -> None:
        self.path = Path(path)
        (self.path / "results").mkdir(parents=True, exist_ok=True)

    def finished(self) -> set:
        """Hashes of the finished tasks: those with a complete result file
        (a truncated or damaged one is not finished; see :meth:`damaged`).

        >>> import tempfile
        >>> Store(tempfile.mkdtemp()).finished()
        set()
        """
        return {p.stem for p in (self.path / "results").glob("*.parquet")
                if not p.name.startswith(".") and _complete_parquet(p)}

    def damaged(self) -> List[Path]:
        """Result files that are not complete Parquet files (a killed copy,
        a full disk): their tasks count as unfinished and run again.

        >>> import tempfile
        >>> s = Store(tempfile.mkdtemp())
        >>> _ = (s.path / "results" / "abc.parquet").write_bytes(b"PAR1 cut off")
        >>> [p.name for p in s.damaged()], s.finished()
        (['abc.parquet'], set())
        """
        return sorted(p for p in (self.path / "results").glob("*.parquet")
                      if not p.name.startswith(".") and not _complete_parquet(p))

    def check_owner(self, campaign: Any, force: bool = False) -> None:
        """Refuses to mix two campaigns in one results directory: raises
        :class:`CampaignError` when the directory holds another campaign's
        results (by name) or files ibcloud did not write, unless ``force``.

        >>> import tempfile
        >>> from ibcloud.campaign.spec import parse
        >>> s = Store(tempfile.mkdtemp())
        >>> s.save_campaign(parse('[campaign]\\nname = "a"\\n[[experiment]]\\nkind = "route"\\ntopology = "ft324"\\n', "a.toml"))
        >>> s.check_owner(parse('[campaign]\\nname = "b"\\n[[experiment]]\\nkind = "route"\\ntopology = "ft324"\\n', "b.toml"))
        Traceback (most recent call last):
        ...
        ibcloud.exceptions.CampaignError: ...: holds the results of campaign 'a', not 'b'; give another results directory, or --force to add to it
        """
        if force:
            return
        tasks_file = self.path / "tasks.json"
        if tasks_file.exists():
            try:
                owner = json.loads(tasks_file.read_text()).get("name")
            except (ValueError, UnicodeDecodeError, AttributeError):
                raise CampaignError(f"{tasks_file}: damaged (not the JSON ibcloud writes); "
                                    "give another results directory, or --force") from None
            if owner != campaign.name:
                raise CampaignError(f"{self.path}: holds the results of campaign {owner!r}, not {campaign.name!r}; "
                                    "give another results directory, or --force to add to it")
        elif any((self.path / "results").iterdir()):
            raise CampaignError(f"{self.path}: holds results without a tasks.json (another tool's, or a damaged "
                                "store); give another results directory, or --force to add to it")
        foreign = self.foreign()
        if foreign:
            raise CampaignError(f"{self.path}: holds files ibcloud did not write ({', '.join(foreign[:3])}"
                                f"{', ...' if len(foreign) > 3 else ''}); give another results directory, "
                                "or --force")

    def owner(self) -> Optional[str]:
        """The name of the campaign whose results these are (None: no tasks.json, or unreadable).

        >>> import tempfile
        >>> Store(tempfile.mkdtemp()).owner() is None
        True
        """
        try:
            name = json.loads((self.path / "tasks.json").read_text()).get("name")
        except (OSError, ValueError, UnicodeDecodeError, AttributeError):
            return None
        return name if isinstance(name, str) else None

    def foreign(self) -> List[str]:
        """Entries of the directory that a campaign run does not write.

        >>> import tempfile
        >>> s = Store(tempfile.mkdtemp())
        >>> _ = (s.path / "results" / "thesis.csv").write_text("x")
        >>> s.foreign()
        ['results/thesis.csv']
        """
        out = [p.name for p in self.path.iterdir() if p.name not in _OWN_ENTRIES and not p.name.startswith(".")]
        for sub, suffix in (("results", ".parquet"), ("failed", ".json")):
            folder = self.path / sub
            if folder.is_dir():
                out += [f"{sub}/{p.name}" for p in folder.iterdir()
                        if not (p.suffix == suffix or p.name.startswith("."))]
        return sorted(out)

    def clear(self) -> None:
        """Removes what a campaign run wrote here, and only that (see
        :meth:`foreign`): results, failures, task files, the saved campaign.

        >>> import tempfile
        >>> s = Store(tempfile.mkdtemp())
        >>> _ = (s.path / "results" / "x.parquet").write_bytes(b"")
        >>> _ = (s.path / "notes.txt").write_text("mine")
        >>> s.clear(); sorted(p.name for p in s.path.iterdir())
        ['notes.txt', 'results']
        """
        import shutil

        for sub, suffix in (("results", ".parquet"), ("failed", ".json")):
            folder = self.path / sub
            if folder.is_dir():
                for p in folder.iterdir():
                    if p.suffix == suffix or (p.name.startswith(".") and p.name.endswith(".tmp")):
                        p.unlink()
        if (self.path / "files").is_dir():
            shutil.rmtree(self.path / "files")
        for name in ("campaign.toml", "tasks.json", "versions.json"):
            (self.path / name).unlink(missing_ok=True)
        (self.path / "results").mkdir(exist_ok=True)

    def write(self, task: Any, outcome: Any, worker: str = "") -> None:
        """Stores a finished task's rows and files (atomically: a temporary
        name, then a rename).

        >>> import tempfile
        >>> from ibcloud.campaign.spec import Task
        >>> from ibcloud.campaign.kinds import Outcome
        >>> s = Store(tempfile.mkdtemp())
        >>> t = Task.make("route", {"topology": "ft324"}, "e")
        >>> s.write(t, Outcome([{"x": 1}]))
        >>> s.finished() == {t.hash}
        True
        """
        import pandas as pd

        for name, data in outcome.files.items():
            atomic_write(self.path / "files" / task.hash / name, data)
        base = {"task": task.hash, "kind": task.kind, "experiment": task.experiment,
                "settings": json.dumps(task.settings, sort_keys=True), "seconds": float(outcome.seconds),
                "status": int(outcome.status), "worker": worker, "row": 0}
        params = {k: (json.dumps(v, sort_keys=True) if isinstance(v, (list, dict)) else v) for k, v in task.settings.items() if k != "kind"}
        rows = []
        for i, row in enumerate(outcome.rows or [{}]):
            merged = {**base, "row": i, **params}
            for k, v in row.items():
                merged[k if k not in merged else f"result_{k}"] = v
            rows.append(merged)
        frame = pd.DataFrame(rows)
        with atomic_path(self.path / "results" / f"{task.hash}.parquet") as tmp:
            # Page checksums let finished() tell a file damaged in the middle from a whole one.
            frame.to_parquet(tmp, index=False, write_page_checksum=True)
        failed = self.path / "failed" / f"{task.hash}.json"
        if failed.exists():
            failed.unlink()

    def fail(self, task: Any, error: str) -> None:
        """Records a failed task (rerunning the campaign retries it).

        >>> import tempfile
        >>> from ibcloud.campaign.spec import Task
        >>> s = Store(tempfile.mkdtemp())
        >>> s.fail(Task.make("route", {"topology": "x"}, "e"), "boom")
        >>> len(list((s.path / "failed").iterdir()))
        1
        """
        atomic_write(self.path / "failed" / f"{task.hash}.json",
                     json.dumps({"task": task.hash, "settings": task.settings, "error": error}, indent=1))

    def failures(self) -> List[Dict[str, Any]]:
        """The recorded failures.

        >>> import tempfile
        >>> Store(tempfile.mkdtemp()).failures()
        []
        """
        folder = self.path / "failed"
        return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []

    def save_campaign(self, campaign: Any) -> None:
        """Writes campaign.toml, tasks.json and versions.json.

        >>> import tempfile
        >>> from ibcloud.campaign.spec import parse
        >>> s = Store(tempfile.mkdtemp())
        >>> s.save_campaign(parse('[[experiment]]\\nkind = "route"\\ntopology = "ft324"\\n', "c.toml"))
        >>> sorted(p.name for p in s.path.iterdir())
        ['campaign.toml', 'results', 'tasks.json', 'versions.json']
        """
        atomic_write(self.path / "campaign.toml", campaign.text)
        tasks = [{"task": t.hash, "kind": t.kind, "experiment": t.experiment, "settings": t.settings}
                 for t in campaign.tasks]
        atomic_write(self.path / "tasks.json", json.dumps({"name": campaign.name, "description": campaign.description,
                                                           "source": campaign.source, "tasks": tasks}, indent=1))
        atomic_write(self.path / "versions.json", json.dumps(versions(), indent=1))

    def frame(self, kind: Optional[str] = None) -> Any:
        """All finished rows (optionally of one kind) as a DataFrame, via DuckDB.

        >>> import tempfile
        >>> len(Store(tempfile.mkdtemp()).frame())
        0
        """
        import pandas as pd

        if not self.finished():
            return pd.DataFrame()
        sql = "SELECT * FROM results" + (f" WHERE kind = '{kind}'" if kind else "") + " ORDER BY task, row"
        return query(self.path, sql)


#: What a campaign run writes into its results directory (see :meth:`Store.foreign`).
_OWN_ENTRIES = {"results", "failed", "files", "campaign.toml", "tasks.json", "versions.json"}


def _complete_parquet(path: Path) -> bool:
    """Whether ``path`` is a whole, readable Parquet file. First the cheap
    test: the magic at both ends and a footer that fits (a truncated copy
    loses the trailing magic). Then every row group is read, verifying the
    page checksums the store writes: a file damaged in the middle with both
    ends intact (a bad sector, a botched copy) fails here and its task runs
    again instead of counting as done. Result files are a few rows each, so
    reading them costs milliseconds."""
    try:
        size = path.stat().st_size
        if size < 12:
            return False
        with open(path, "rb") as fh:
            head = fh.read(4)
            fh.seek(size - 8)
            tail = fh.read(8)
        footer = int.from_bytes(tail[:4], "little")
        if not (head == b"PAR1" and tail[4:] == b"PAR1" and footer + 12 <= size):
            return False
    except OSError:
        return False
    import pyarrow.parquet as pq

    try:
        with pq.ParquetFile(path, page_checksum_verification=True) as pf:
            for i in range(pf.num_row_groups):
                pf.read_row_group(i)
    except Exception:  # noqa: BLE001 — pyarrow raises several types (ArrowInvalid, OSError, ...) for damage
        return False
    return True


def query(path: Union[str, os.PathLike], sql: str) -> Any:
    """Runs DuckDB ``sql`` over a results directory, where the view
    ``results`` holds every finished row (columns of all kinds, by name), and
    ``tasks`` the campaign's task list. Returns a DataFrame.

    >>> import tempfile
    >>> from ibcloud.campaign.spec import Task
    >>> from ibcloud.campaign.kinds import Outcome
    >>> s = Store(tempfile.mkdtemp())
    >>> s.write(Task.make("route", {"topology": "ft324"}, "e"), Outcome([{"x": 41}]))
    >>> int(query(s.path, "SELECT x + 1 AS y FROM results").y[0])
    42
    """
    import duckdb

    root = Path(path)
    if not (root / "results").is_dir():
        raise CampaignError(f"{root}: not a results directory (no results/ folder)")
    damaged = Store(root).damaged()
    if damaged:
        raise CampaignError(f"{damaged[0]}: damaged result file (truncated, or not Parquet)"
                            + (f", and {len(damaged) - 1} more" if len(damaged) > 1 else "")
                            + "; rerun the campaign to redo its task(s)")
    con = duckdb.connect()
    try:
        files = sorted(p for p in (root / "results").glob("*.parquet") if not p.name.startswith("."))
        if files:
            listing = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
            con.execute(f"CREATE VIEW results AS SELECT * FROM read_parquet([{listing}], union_by_name = true)")
        else:
            con.execute("CREATE VIEW results AS SELECT NULL::VARCHAR AS task WHERE false")
        tasks_file = root / "tasks.json"
        if tasks_file.exists():
            import pandas as pd

            try:
                tasks = json.loads(tasks_file.read_text())["tasks"]
            except (ValueError, KeyError, TypeError, UnicodeDecodeError):
                raise CampaignError(f"{tasks_file}: damaged (not the JSON ibcloud writes)") from None
            tasks_df = pd.DataFrame([{"task": t["task"], "kind": t["kind"], "experiment": t["experiment"],
                                      "settings": json.dumps(t["settings"], sort_keys=True)} for t in tasks])
            con.register("tasks", tasks_df)
        try:
            return con.execute(sql).df()
        except duckdb.Error as error:
            bad = _unreadable(files)
            if bad is not None:
                raise CampaignError(bad) from None
            raise CampaignError(f"query failed: {str(error)[:500]}") from None
    except duckdb.Error as error:  # the views: a result file DuckDB cannot read
        raise CampaignError(_unreadable(files) or f"cannot read the results: {str(error)[:500]}") from None
    finally:
        con.close()


def _unreadable(files: List[Path]) -> Optional[str]:
    """The first result file pyarrow cannot read, as an error message (None: all read)."""
    import pyarrow.parquet as pq

    for f in files:
        try:
            pq.read_table(f)
        except Exception as error:  # noqa: BLE001 — pyarrow raises several types for damaged files
            return (f"{f}: damaged result file ({str(error)[:200]}); rerun the campaign after deleting it "
                    "to redo its task")
    return None
