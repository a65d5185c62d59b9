"""Progress of long work that shows with or without a terminal.

On a terminal, a rich progress bar on stderr. Anywhere else (``make run >
log``, CI, nohup, a pipe), plain lines on stderr: one when the work starts,
then one every ``interval`` seconds *and* whenever a step finishes (at most
one per ``interval``), each with the elapsed time, the count done and what
is running, and a last one at the end — so a log always shows that work
goes on and what it is doing.

>>> import io
>>> out = io.StringIO()
>>> with Reporter("demo", total=2, stream=out, interval=0) as r:
...     r.running("step a")
...     r.advance("a done")
...     r.advance("b done")
>>> print(out.getvalue().replace("0 s", "T"), end="")  # doctest: +NORMALIZE_WHITESPACE
demo: 0 of 2 started
demo: 1 of 2 done, T elapsed; a done
demo: 2 of 2 done, T elapsed; b done
demo: finished 2 of 2 in T
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import IO, Any, Optional

__all__ = ["Reporter", "plain_interval"]


def plain_interval() -> float:
    """Seconds between plain progress lines (``IBCLOUD_PROGRESS_SECONDS``, default 10).

    >>> plain_interval() > 0
    True
    """
    try:
        value = float(os.environ.get("IBCLOUD_PROGRESS_SECONDS", "10"))
    except ValueError:
        return 10.0
    return value if value > 0 else 10.0


class Reporter:
    """Progress of ``total`` steps called ``label``.

    ``mode``: ``"auto"`` (a bar on a terminal, plain lines elsewhere),
    ``"plain"``, ``"bar"`` or ``"off"``.

    >>> with Reporter("quiet", total=1, mode="off") as r:
    ...     r.advance()
    >>> r.done
    1
    """

    def __init__(self, label: str, total: int, stream: Optional[IO[str]] = None, interval: Optional[float] = None,
                 mode: str = "auto") -> None:
        self.label, self.total, self.done = label, total, 0
        self.stream = stream if stream is not None else sys.stderr
        self.interval = plain_interval() if interval is None else interval
        if mode == "auto":
            mode = "bar" if getattr(self.stream, "isatty", lambda: False)() else "plain"
        self.mode = mode
        self.current = ""
        self.start = time.monotonic()
        self._last = self.start
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: Optional[threading.Thread] = None
        self._bar: Any = None
        self._bar_id: Any = None

    # -- plain lines
    def _line(self, text: str) -> None:
        try:
            print(text, file=self.stream, flush=True)
        except (OSError, ValueError):  # the log went away; the work goes on
            pass

    def _elapsed(self) -> str:
        seconds = time.monotonic() - self.start
        return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            with self._lock:
                if time.monotonic() - self._last >= self.interval:
                    self._last = time.monotonic()
                    running = f"; running: {self.current}" if self.current else ""
                    self._line(f"{self.label}: {self.done} of {self.total} done, {self._elapsed()} elapsed{running}")

    def __enter__(self) -> "Reporter":
        if self.mode == "bar" and self.total:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=Console(file=self.stream), transient=False)
            self._bar.__enter__()
            self._bar_id = self._bar.add_task(self.label, total=self.total)
        elif self.mode == "plain":
            self._line(f"{self.label}: 0 of {self.total} started")
            if self.interval > 0:
                self._ticker = threading.Thread(target=self._tick, daemon=True)
                self._ticker.start()
        return self

    def running(self, text: str) -> None:
        """Says what is running now (shown in the next plain line).

        >>> r = Reporter("x", 1, mode="off")
        >>> r.running("routing ft324"); r.current
        'routing ft324'
        """
        with self._lock:
            self.current = text
        if self._bar is not None:
            self._bar.update(self._bar_id, description=f"{self.label}: {text}")

    def advance(self, text: str = "") -> None:
        """One step done; ``text`` says which.

        >>> r = Reporter("x", 2, mode="off")
        >>> r.advance("a"); r.done
        1
        """
        with self._lock:
            self.done += 1
            if self._bar is not None:
                self._bar.advance(self._bar_id)
            elif self.mode == "plain" and (time.monotonic() - self._last >= self.interval or self.done == self.total):
                self._last = time.monotonic()
                self._line(f"{self.label}: {self.done} of {self.total} done, {self._elapsed()} elapsed"
                           + (f"; {text}" if text else ""))

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=1)
        if self._bar is not None:
            self._bar.__exit__(*exc)
        elif self.mode == "plain":
            self._line(f"{self.label}: finished {self.done} of {self.total} in {self._elapsed()}")
