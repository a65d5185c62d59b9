"""Terminal output shared by the subcommands: one-line descriptions, the
summary tables of ``topo info`` and ``run``, and transient progress spinners.
Tables and spinners use rich; results go to stdout, spinners to stderr.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Sequence

from ibcloud.fabric import Fabric

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


def describe(fabric: Fabric) -> str:
    """One line with the counts that matter for routing.

    >>> describe(Fabric.generate("ft648"))
    '648 CAs, 54 switches, 1296 links, max LID 702 (11 LFT blocks per switch)'
    """
    routers = f", {fabric.num_routers} routers" if fabric.num_routers else ""
    return (
        f"{fabric.num_cas} CAs, {fabric.num_switches} switches{routers}, {fabric.num_links} links, "
        f"max LID {fabric.max_lid} ({fabric.lft_blocks} LFT blocks per switch)"
    )


def counts(fabric: Fabric) -> Dict[str, int]:
    """:func:`describe`'s counts for ``--json``.

    >>> counts(Fabric.generate("ft648"))["max_lid"]
    702
    """
    return {"cas": fabric.num_cas, "switches": fabric.num_switches, "routers": fabric.num_routers,
            "links": fabric.num_links, "max_lid": fabric.max_lid, "lft_blocks_per_switch": fabric.lft_blocks}


def span(pair: Sequence[int]) -> str:
    """A ``[min, max]`` pair as ``36`` or ``18-36``.

    >>> span([36, 36]), span([18, 36])
    ('36', '18-36')
    """
    low, high = pair
    return str(low) if low == high else f"{low}-{high}"


def role(rank: Optional[int], top: int) -> str:
    """The name of an OpenSM rank in a tree whose leaves have rank ``top``.

    >>> [role(r, 2) for r in (0, 1, 2, None)]
    ['root', 'middle', 'leaf', 'unranked']
    """
    if rank is None:
        return "unranked"
    if rank == 0:
        return "root+leaf" if top == 0 else "root"
    return "leaf" if rank == top else "middle"


def summary_tables(summary: Dict[str, Any], title: str) -> List[Table]:
    """The ``topo info`` tables for a :meth:`Fabric.summary`: totals, then one
    row per OpenSM rank (roots first).

    >>> totals, levels = summary_tables(Fabric.generate("ft324").summary(), "ft324")
    >>> levels.row_count, levels.columns[1].header
    (2, 'role')
    """
    from rich.table import Table

    totals = Table(title=title, show_header=False, title_justify="left")
    totals.add_column("quantity")
    totals.add_column("value", justify="right")
    rates = ", ".join(f"{count} × {rate}" for rate, count in summary["link_rates"].items()) or "-"
    for name, value in [
        ("CAs", summary["cas"]),
        ("switches", summary["switches"]),
        ("routers", summary["routers"]),
        ("links", summary["links"]),
        ("link rates", rates),
        ("LIDs used", summary["lids_used"]),
        ("max LID", summary["max_lid"]),
        ("LFT blocks per switch", summary["lft_blocks_per_switch"]),
        ("full-LFT SMPs (switches × blocks)", summary["full_lft_smps"]),
    ]:
        totals.add_row(name, f"{value:,}" if isinstance(value, int) else value)

    levels = Table(title="switches per OpenSM rank (roots = rank 0)", title_justify="left")
    for header in ("rank", "role", "switches", "radix", "switch links", "CA links"):
        levels.add_column(header, justify="left" if header == "role" else "right")
    ranks = [level["rank"] for level in summary["levels"] if level["rank"] is not None]
    top = max(ranks, default=0)
    for level in summary["levels"]:
        levels.add_row(
            "-" if level["rank"] is None else str(level["rank"]),
            role(level["rank"], top),
            f"{level['switches']:,}",
            span(level["radix"]),
            span(level["switch_links"]),
            span(level["ca_links"]),
        )
    return [totals, levels]


def print_summary(summary: Dict[str, Any], title: str, console: Optional[Console] = None) -> None:
    """Prints :func:`summary_tables` to ``console`` (default: stdout).

    >>> import io
    >>> from rich.console import Console
    >>> console = Console(file=io.StringIO(), width=100)
    >>> print_summary(Fabric.generate("4-ary-2-full").summary(), "4-ary-2-full", console)
    >>> "LFT blocks per switch" in console.file.getvalue()
    True
    """
    from rich.console import Console

    console = console or Console(highlight=False)
    for table in summary_tables(summary, title):
        console.print(table)


@contextlib.contextmanager
def progress(description: str) -> Iterator[Callable[[str], None]]:
    """Progress of multi-step work on stderr; yields a function that
    replaces the step text. On a terminal, a transient spinner (nothing is
    left behind); elsewhere (a log, CI, nohup), plain lines with the elapsed
    time and the current step — none for work done within 2 s, then one per
    step and one every 10 s (``IBCLOUD_PROGRESS_SECONDS``) while a step runs,
    so long work is never silent and short work stays quiet.

    >>> with progress("generating") as step:
    ...     step("writing")
    """
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        from ibcloud.progress import plain_interval

        with _PlainSteps(description, plain_interval()) as steps:
            yield steps.step
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(description, total=None)
        yield lambda text: bar.update(task, description=text)


class _PlainSteps:
    """Plain progress lines for :func:`progress` without a terminal."""

    QUIET_SECONDS = 2.0

    def __init__(self, description: str, interval: float) -> None:
        import threading
        import time

        self.current, self.interval = description, interval
        self.start = self.last = time.monotonic()
        self.printed = False
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._tick, daemon=True)

    def _line(self) -> None:
        import sys
        import time

        self.last = time.monotonic()
        self.printed = True
        try:
            print(f"{self.current} ({self.last - self.start:.0f} s)", file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass

    def _tick(self) -> None:
        import time

        wait = self.QUIET_SECONDS
        while not self.stop.wait(wait):
            with self.lock:
                if time.monotonic() - self.last >= self.interval or not self.printed:
                    self._line()
            wait = min(self.interval, 1.0)

    def step(self, text: str) -> None:
        import time

        with self.lock:
            self.current = text
            if time.monotonic() - self.start >= self.QUIET_SECONDS:
                self._line()

    def __enter__(self) -> "_PlainSteps":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        self.thread.join(timeout=1)
