"""Campaigns: declarative experiments (TOML) expanded into tasks, run on Dask
distributed (a local cluster or ``tcp://HOST:PORT``), resumable, with results
as Parquet queryable with DuckDB and a static HTML report (docs/platform.md).

>>> import tempfile
>>> c = parse('''
... [campaign]
... name = "tiny"
... [[experiment]]
... kind = "route"
... topology = "4-ary-2-full"
... engine = ["ftree", "minhop"]
... ''', "tiny.toml")
>>> d = tempfile.mkdtemp()
>>> run(c, d, scheduler="inline", progress=False).ran
2
>>> query(d, "SELECT engine, verify_ok FROM results ORDER BY engine").values.tolist()
[['ftree', True], ['minhop', True]]
"""

from ibcloud.campaign.kinds import KINDS, execute
from ibcloud.campaign.report import render
from ibcloud.campaign.runner import RunSummary, run
from ibcloud.campaign.spec import Campaign, Task, load, parse, task_hash
from ibcloud.campaign.store import Store, query, versions

__all__ = ["KINDS", "Campaign", "RunSummary", "Store", "Task", "execute", "load", "parse", "query", "render", "run",
           "task_hash", "versions"]
