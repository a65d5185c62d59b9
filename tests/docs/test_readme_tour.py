"""The README's commands run as written: every ``ibcloud`` (and ``python3
-c``) line of every ``sh`` block, in README order, through the real command,
in one empty folder that sees only the repository's fixtures/ and docs/
(so a line may use what an earlier line wrote, as a reader following the
README would).

A line that is not run here is listed below with the reason and what covers
it instead: SLOW (minutes of work; the test must stay cheap) or EXTERNAL
(needs something the README starts by hand: a Dask scheduler on another
machine, ibsim with the umad2sim shim). The test fails when a listed line
has left the README (so the lists cannot go stale) and when a README line is
neither run nor listed, so a new README command is run from the day it is
written."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Command -> why it is not run here, and what covers it.
SLOW = {
    "ibcloud run --preset ft5832 --out results/":
        "the main job takes tens of minutes (it says so up front, then prints progress lines); `ibcloud run` "
        "itself is run by the docstring test of ibcloud.cli.run and test_hardening",
    "ibcloud run --quick":
        "the tour on ft648 with the campaign on Dask (about a minute); the same code on 4-ary-2-full is the "
        "docstring test of ibcloud.cli.run",
    "ibcloud reproduce reconfig": "minutes; `reproduce reconfig --quick` is the docstring test of "
                                  "ibcloud.reconfig_reproduction",
    "ibcloud reproduce pftree": "minutes; tests/unit/test_partitions.py runs it small",
    "ibcloud reproduce vswitch": "minutes (the Fig. 8 campaign); tests/unit/test_vswitch.py runs it small",
    "ibcloud reproduce dftree": "about a minute of simulation; tests/unit/test_dftree.py runs it small",
    "ibcloud reproduce sa-cache": "floods OpenSM on ibsim; tests/unit/test_sa.py and test_hardening run it "
                                  "with --no-flood",
    "ibcloud reproduce thrashing": "minutes of host simulation; tests/unit/test_host.py",
    "ibcloud reproduce ibmon": "minutes of host simulation; tests/unit/test_host.py",
    "ibcloud reproduce fares": "minutes of host simulation; tests/unit/test_fares.py and the tour (reduced size)",
    "ibcloud reproduce resex": "≈ 20 s of host simulation; tests/unit/test_scoreboard_defaults.py runs it at the "
                               "default size and asserts its scoreboard, the docstring test of ibcloud.host.resex "
                               "at the tour's size",
    "ibcloud reproduce drx": "minutes of host simulation (36 runs); tests/unit/test_scoreboard_defaults.py runs it "
                             "at the default size",
    "ibcloud reproduce all --report report/reproductions": "every reproduction: tens of minutes",
    "ibcloud sa flood --ibsim ft324 --window 1 4 16": "starts ibsim and OpenSM (interop); tests/unit/test_sa.py",
}
EXTERNAL = {
    "ibcloud campaign run docs/examples/sweep.toml -o out/sweep --scheduler tcp://10.0.0.1:8786":
        "a Dask scheduler on another machine; tests/unit/test_campaign_distributed.py starts one locally",
    "ibcloud sm run --engine ftree --once --dump-dir dumps --smp-log smps.jsonl":
        "needs `ibsim` running and LD_PRELOAD=libumad2sim.so (the line above it); tests/unit/test_sm_cli.py",
    "ibcloud sm run --engine vswitch-ftree --socket sm.sock --reconfig slimupdate &":
        "a daemon on ibsim, as above",
    "ibcloud sm ctl sm.sock migrate vm0 '#31' ftree-minrc": "talks to the daemon above",
}


def _blocks() -> list:
    """(command, whole line) for every ``ibcloud``/``python3 -c`` line of every sh block, in order."""
    text = (ROOT / "README.md").read_text()
    commands = []
    for body in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in body.replace("\\\n", " ").splitlines():
            code = re.sub(r"\s+", " ", line.split("  #")[0]).strip()
            if code.startswith(("ibcloud ", "python3 -c ")):
                commands.append((code, line))
    return commands


TOUR = _blocks()


def test_listed_lines_are_still_in_the_readme():
    assert set(SLOW) | set(EXTERNAL) <= {c for c, _ in TOUR}
    assert len(TOUR) >= 50  # every block was found


def test_readme_runs_as_written(tmp_path):
    for name in ("fixtures", "docs"):
        os.symlink(ROOT / name, tmp_path / name)
    exe = Path(sys.executable).with_name("ibcloud")
    ran = []
    for code, line in TOUR:
        if code in SLOW or code in EXTERNAL:
            continue
        argv = shlex.split(code)
        argv[0] = str(exe) if argv[0] == "ibcloud" else sys.executable
        proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        allowed = (0, 1) if "exit 1" in line else (0,)
        assert proc.returncode in allowed, f"{code}\n{proc.stderr[-2000:]}"
        assert "Traceback" not in proc.stderr, code
        ran.append(code)
    assert len(ran) == len(TOUR) - len(SLOW) - len(EXTERNAL)
