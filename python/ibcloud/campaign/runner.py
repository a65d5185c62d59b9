"""Runs a campaign's unfinished tasks on Dask distributed and stores each
result the moment it arrives.

The client submits one Dask task per unfinished campaign task (key
``ibcloud-<hash>``, so resubmitting the same campaign never duplicates work
on a shared scheduler), and writes each result to the store as it completes
(:func:`distributed.as_completed`). A worker that dies takes only its
running tasks with it: the scheduler reschedules them on the other workers
(after ``distributed.scheduler.allowed-failures`` deaths a task fails with
``KilledWorker`` and is recorded in ``failed/``), and finished results are
already on disk. Rerunning the campaign runs only what is missing.

>>> import tempfile
>>> from ibcloud.campaign.spec import parse
>>> c = parse('[[experiment]]\\nkind = "route"\\ntopology = "4-ary-2-full"\\n', "c.toml")
>>> summary = run(c, tempfile.mkdtemp(), scheduler="inline", progress=False)
>>> summary.ran, summary.skipped, summary.failed
(1, 0, 0)
"""

from __future__ import annotations

import dataclasses
import os
import time
import traceback
from pathlib import Path
from typing import Any, List, Optional, Union

from ibcloud.campaign.kinds import execute
from ibcloud.campaign.store import Store
from ibcloud.exceptions import CampaignError
from ibcloud.safeio import checked_ints

__all__ = ["RunSummary", "run"]


@dataclasses.dataclass
class RunSummary:
    """What a run did: tasks in the campaign, run now, skipped (already
    finished), failed, tasks whose result says a check failed, wall time.

    >>> RunSummary(3, 2, 1, 0, 0, 1.5).complete
    True
    """

    tasks: int
    ran: int
    skipped: int
    failed: int
    problems: int
    seconds: float
    results: Optional[Path] = None

    @property
    def complete(self) -> bool:
        """Every task of the campaign has a result.

        >>> RunSummary(3, 1, 1, 1, 0, 1.0).complete
        False
        """
        return self.ran + self.skipped == self.tasks


def _worker_task(settings: dict) -> Any:
    """Runs in a worker: the outcome, with the worker's address."""
    outcome = execute(settings)
    try:
        from distributed import get_worker

        address = get_worker().address
    except (ImportError, ValueError):
        address = "local"
    return outcome, address


def _running(waiting: dict) -> str:
    """What is still running or queued, for progress lines: the first few tasks by name."""
    names = [_describe(t) for t in list(waiting.values())[:3]]
    more = len(waiting) - len(names)
    return "; ".join(names) + (f"; and {more} more" if more > 0 else "")


def _describe(task: Any) -> str:
    """A short name of a task for progress lines: experiment and its main settings."""
    keys = ("topology", "engine", "method", "pattern", "population", "seed")
    shown = ", ".join(f"{task.settings[k]}" for k in keys if k in task.settings)
    return f"{task.experiment} ({task.kind}{': ' + shown if shown else ''})"


@checked_ints
def run(campaign: Any, results: Union[str, os.PathLike], scheduler: Optional[str] = None,
        workers: Optional[int] = None, progress: Union[bool, str] = True, retry_failed: bool = True,
        force: bool = False) -> RunSummary:
    """Runs ``campaign``'s unfinished tasks and stores their results in
    ``results``. ``scheduler``: None for a local cluster of ``workers``
    processes (default: the number of CPUs, at most 4), ``tcp://HOST:PORT``
    for a running Dask scheduler, or ``"inline"`` to run in this process
    without Dask (for debugging). ``progress``: True (a bar on a terminal,
    periodic plain lines on stderr elsewhere), False, or a
    :class:`~ibcloud.progress.Reporter` mode. A directory holding another
    campaign's results is refused unless ``force`` (:meth:`Store.check_owner`).

    >>> import tempfile
    >>> from ibcloud.campaign.spec import parse
    >>> c = parse('[[experiment]]\\nkind = "route"\\ntopology = "4-ary-2-full"\\n', "c.toml")
    >>> d = tempfile.mkdtemp()
    >>> _ = run(c, d, scheduler="inline", progress=False)
    >>> run(c, d, scheduler="inline", progress=False).skipped
    1
    """
    from ibcloud.progress import Reporter

    if workers is not None and workers < 1:
        raise CampaignError(f"workers = {workers}: a local cluster needs at least 1 worker")
    start = time.perf_counter()
    store = Store(results)
    store.check_owner(campaign, force=force)
    store.save_campaign(campaign)
    done = store.finished()
    pending = [t for t in campaign.tasks if t.hash not in done]
    skipped = len(campaign.tasks) - len(pending)
    ran = failed = problems = 0
    label = f"campaign {campaign.name}" + (f" ({skipped} already done)" if skipped else "")
    mode = progress if isinstance(progress, str) else ("auto" if progress else "off")

    with Reporter(label, len(pending), mode=mode) as bar:

        def advance(task: Any) -> None:
            bar.advance(_describe(task))

        if scheduler == "inline":
            for task in pending:
                bar.running(_describe(task))
                try:
                    outcome = execute(task.settings)
                except Exception:  # noqa: BLE001 — recorded, the campaign goes on
                    store.fail(task, traceback.format_exc())
                    failed += 1
                else:
                    store.write(task, outcome, "inline")
                    ran += 1
                    problems += outcome.status != 0
                advance(task)
        elif pending:
            from distributed import Client, LocalCluster, as_completed

            cluster = None
            if scheduler is None:
                n = workers or max(1, min(4, os.cpu_count() or 1))
                cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=40)
                client = Client(cluster)
            else:
                if not scheduler.startswith(("tcp://", "tls://", "inproc://", "ucx://")):
                    raise CampaignError(f"--scheduler {scheduler}: give tcp://HOST:PORT (or 'inline')")
                try:
                    client = Client(scheduler, timeout="20s")
                except (OSError, TimeoutError) as error:
                    raise CampaignError(f"cannot reach the Dask scheduler at {scheduler}: {error}") from None
            try:
                by_key = {}
                futures: List[Any] = []
                for task in pending:
                    future = client.submit(_worker_task, task.settings, key=f"ibcloud-{task.hash}", pure=False,
                                           retries=0)
                    by_key[future.key] = task
                    futures.append(future)
                waiting = dict(by_key)
                bar.running(_running(waiting))
                for future in as_completed(futures):
                    task = by_key[future.key]
                    try:
                        outcome, address = future.result()
                    except Exception as error:  # noqa: BLE001 — KilledWorker, task errors
                        store.fail(task, f"{type(error).__name__}: {error}")
                        failed += 1
                    else:
                        store.write(task, outcome, str(address))
                        ran += 1
                        problems += outcome.status != 0
                    future.release()
                    advance(task)
                    waiting.pop(future.key, None)
                    bar.running(_running(waiting))
            finally:
                client.close()
                if cluster is not None:
                    cluster.close()
    return RunSummary(len(campaign.tasks), ran, skipped, failed, problems, time.perf_counter() - start,
                      store.path)
