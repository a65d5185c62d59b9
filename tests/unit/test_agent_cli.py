"""``ibcloud agent`` as a command: bad input exits 2 naming file and line, a
dry run on real cgroups writes nothing and logs what it would do (JSON lines
and Parquet), ``--restore`` without a state file has nothing to do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ibcloud.cli.main import main

CPU = Path("/sys/fs/cgroup/cpu")
ACCT = Path("/sys/fs/cgroup/cpuacct")


def _agent(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ibcloud.cli.main", "agent", *args],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("body, where, what", [
    ("[agent]\nperiod = 1\nspeed = 3\n", ":3:", "unknown field `speed`"),
    ("[[vm]]\nname = 'a'\ncgroup = 'ibcloud-no-such-cgroup'\n[policy]\ninterval = '1s'\nepoch = '10s'\n",
     ":3:", "does not exist"),
    ("[[vm]]\nname = 'a'\ncgroup = '.'\n[policy]\ninterval = '1s'\nepoch = '10s'\nfloor = 7\n", ":3:", "cgroup"),
    ("[agent]\ncgroup-version = 'v2'\n[[vm]]\nname = 'a'\ncgroup = 'x'\n[policy]\ninterval = '1s'\nepoch = '10s'\n",
     ":2:", "v2"),
])
def test_bad_input_exits_2_with_file_and_line(tmp_path, capsys, body, where, what):
    cfg = tmp_path / "AGENT.toml"
    cfg.write_text(body)
    assert main(["agent", "--policy", "freemarket", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ibcloud: error: ") and f"AGENT.toml{where}" in err and what in err, err
    assert "Traceback" not in err


def test_policy_parameter_error_names_its_line(tmp_path, capsys):
    cfg = tmp_path / "AGENT.toml"
    cfg.write_text("[[vm]]\nname = 'a'\ncgroup = 'x'\n[policy]\ninterval = '1s'\nepoch = '10s'\nfloor = 7\n")
    assert main(["agent", "--policy", "freemarket", "--config", str(cfg), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "AGENT.toml:" in err and "floor" in err, err


def test_restore_without_state_file(tmp_path):
    cfg = tmp_path / "AGENT.toml"
    cfg.write_text("[agent]\nstate-file = 'none.json'\n[[vm]]\nname = 'a'\ncgroup = 'x'\n")
    r = _agent("--restore", "--config", str(cfg))
    assert r.returncode == 0 and "nothing to restore" in r.stdout, r


def test_dry_run_on_real_cgroups_writes_nothing(tmp_path):
    if os.geteuid() != 0 or not (CPU / "cpu.cfs_quota_us").is_file():
        pytest.fail("needs root and the cgroup v1 cpu controller (docs/agent.md)")
    name = f"ibcloud-test-dry-{os.getpid()}"
    made = []
    try:
        for root in (CPU, ACCT):
            (root / name).mkdir()
            made.append(root / name)
        feed = tmp_path / "feed.csv"
        feed.write_text("period,vm,bytes,cpu_pct\n" + "".join(f"{k},vm1,2000000,50\n" for k in range(6)))
        cfg = tmp_path / "AGENT.toml"
        cfg.write_text(f"""[agent]
state-file = "state.json"
replay = "feed.csv"
[[vm]]
name = "vm1"
cgroup = "{name}"
[policy]
interval = "50ms"
epoch = "1s"
link-bytes-per-s = 102400.0
""")
        r = _agent("--policy", "freemarket", "--config", str(cfg), "--dry-run", "--parquet",
                   str(tmp_path / "a.parquet"), "--json")
        assert r.returncode == 0, r.stderr
        s = json.loads(r.stdout)
        assert s["dry_run"] and s["steps"] == 6 and s["changes"] >= 1, s
        assert "dry run: not written" in r.stderr
        assert (CPU / name / "cpu.cfs_quota_us").read_text().strip() == "-1"
        assert not (tmp_path / "state.json").exists()
        import pandas as pd

        log = pd.read_parquet(tmp_path / "a.parquet")
        assert list(log["step"]) == list(range(6)) and log["dry_run"].all()
        assert log["cap"].iloc[-1] > 0  # what it would have set
    finally:
        for d in made:
            d.rmdir()
