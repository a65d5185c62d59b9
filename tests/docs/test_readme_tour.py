"""The README's command-line tour runs as written: every ``ibcloud`` (and
``python3 -c``) line of the tour block and of the delay block, in order, through the real command,
in an empty folder that sees only the repository's fixtures/ and docs/.

Lines that take minutes are listed in SLOW with the reason and the test that
covers them instead; the test fails if one of them leaves the README, so the
list cannot go stale, and nothing else is left out."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Command -> why it is not run here, and what covers it.
SLOW = {
    "ibcloud run --preset ft5832 --out results/":
        "the main job takes tens of minutes; `ibcloud run` itself is run by the docstring test of ibcloud.cli.run",
}


def _block(after: str) -> list:
    """The ``ibcloud`` commands of the first sh block after the heading ``after``."""
    text = (ROOT / "README.md").read_text()
    start = text.index(after)
    body = re.search(r"```sh\n(.*?)```", text[start:], re.S).group(1)
    commands = []
    for line in body.replace("\\\n", " ").splitlines():
        code = line.split("  #")[0].strip()
        if code.startswith(("ibcloud ", "python3 -c ")):
            commands.append((code, line))
    return commands


TOUR = _block("### The command line") + _block("### Workload delay and VM consolidation")


def test_slow_lines_are_still_in_the_readme():
    assert set(SLOW) <= {c for c, _ in TOUR}


def test_tour_runs_as_written(tmp_path):
    for name in ("fixtures", "docs"):
        os.symlink(ROOT / name, tmp_path / name)
    exe = Path(sys.executable).with_name("ibcloud")
    ran = []
    for code, line in TOUR:
        if code in SLOW:
            continue
        argv = shlex.split(code)
        argv[0] = str(exe) if argv[0] == "ibcloud" else sys.executable
        proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        allowed = (0, 1) if "exit 1" in line else (0,)
        assert proc.returncode in allowed, f"{code}\n{proc.stderr[-2000:]}"
        ran.append(code)
    assert len(ran) == len(TOUR) - len(SLOW)
