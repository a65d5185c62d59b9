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
        """Hashes of the finished tasks.

        >>> import tempfile
        >>> Store(tempfile.mkdtemp()).finished()
        set()
        """
        return {p.stem for p in (self.path / "results").glob("*.parquet")}

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
            target = self.path / "files" / task.hash / name
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(target.name + ".tmp")
            tmp.write_bytes(data)
            os.replace(tmp, target)
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
        target = self.path / "results" / f"{task.hash}.parquet"
        tmp = target.with_name(f".{task.hash}.tmp")
        frame.to_parquet(tmp, index=False)
        os.replace(tmp, target)
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
        target = self.path / "failed" / f"{task.hash}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({"task": task.hash, "settings": task.settings, "error": error}, indent=1))

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
        (self.path / "campaign.toml").write_text(campaign.text)
        tasks = [{"task": t.hash, "kind": t.kind, "experiment": t.experiment, "settings": t.settings}
                 for t in campaign.tasks]
        (self.path / "tasks.json").write_text(json.dumps({"name": campaign.name, "description": campaign.description,
                                                          "source": campaign.source, "tasks": tasks}, indent=1))
        (self.path / "versions.json").write_text(json.dumps(versions(), indent=1))

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
    con = duckdb.connect()
    try:
        files = sorted((root / "results").glob("*.parquet"))
        if files:
            listing = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
            con.execute(f"CREATE VIEW results AS SELECT * FROM read_parquet([{listing}], union_by_name = true)")
        else:
            con.execute("CREATE VIEW results AS SELECT NULL::VARCHAR AS task WHERE false")
        tasks_file = root / "tasks.json"
        if tasks_file.exists():
            import pandas as pd

            tasks = json.loads(tasks_file.read_text())["tasks"]
            tasks_df = pd.DataFrame([{"task": t["task"], "kind": t["kind"], "experiment": t["experiment"],
                                      "settings": json.dumps(t["settings"], sort_keys=True)} for t in tasks])
            con.register("tasks", tasks_df)
        try:
            return con.execute(sql).df()
        except duckdb.Error as error:
            raise CampaignError(f"query failed: {error}") from None
    finally:
        con.close()
