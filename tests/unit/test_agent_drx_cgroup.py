"""``ibcloud agent --policy drx`` against real cgroups (v1, this machine's cpu
and cpuacct hierarchies), driven by a scripted CQE feed.

Two cgroups, ``nectere`` (a high-priority ensemble with an SLA of 1000
CQE/s) and ``hadoop`` (a low-priority bulk ensemble). The feed meets
Nectere's SLA for two 100 ms intervals, misses it once (PD 0.5), then meets
it again. DRX (Equal-Blame, Distributed: the PM raises the price of the
ensemble sharing Nectere's host, the HA turns it into an Eq. 7 cap) must
write that cap into hadoop's ``cpu.cfs_quota_us`` at the violation's step
and keep it until the epoch ends; Nectere is never capped; both original
limits come back on SIGTERM. Not skipped: this machine is root with a
cgroup v1 cpu controller; elsewhere the test fails saying what is missing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CPU = Path("/sys/fs/cgroup/cpu")
ACCT = Path("/sys/fs/cgroup/cpuacct")
HADOOP_PERIOD = 50_000


def _require_host() -> None:
    if os.geteuid() != 0 or not (CPU / "cpu.cfs_quota_us").is_file() or not (ACCT / "cpuacct.usage").is_file():
        pytest.fail("the real-cgroup DRX agent test needs root and cgroup v1 cpu + cpuacct (docs/agent.md)")


@pytest.fixture()
def groups():
    _require_host()
    name = f"ibcloud-drx-test-{os.getpid()}"
    made: "list[Path]" = []
    try:
        for root in (CPU, ACCT):
            for sub in ("", "/nectere", "/hadoop"):
                d = root / (name + sub)
                d.mkdir()
                made.append(d)
        # non-default originals, so a restore that only resets the quota shows
        (CPU / name / "hadoop" / "cpu.cfs_period_us").write_text(str(HADOOP_PERIOD))
        (CPU / name / "nectere" / "cpu.cfs_quota_us").write_text("90000")
        yield name
    finally:
        for d in reversed(made):
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except OSError:
                    time.sleep(0.05)


def _rows(path: Path) -> "list[dict]":
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_drx_caps_the_bulk_cgroup_at_the_violation_and_restores(groups: str, tmp_path: Path) -> None:
    feed = tmp_path / "feed.jsonl"
    with open(feed, "w") as f:
        for k in range(200):
            f.write(json.dumps({"period": k, "vm": "nectere", "requests": 50 if k == 2 else 100}) + "\n")
            f.write(json.dumps({"period": k, "vm": "hadoop", "requests": 2000}) + "\n")
    cfg = tmp_path / "AGENT.toml"
    cfg.write_text(f"""
[agent]
state-file = "state.json"
replay = "feed.jsonl"
log = "actions.jsonl"
cgroup-version = "v1"

[[vm]]
name = "nectere"
cgroup = "{groups}/nectere"

[[vm]]
name = "hadoop"
cgroup = "{groups}/hadoop"

[policy]
policy = "eb-dist"
interval = "100ms"
epoch = "60s"
vmes = {{ nect = {{ vms = ["nectere"], g = 1000.0, io-min = 1000.0, priority = "high" }}, bulk = {{ vms = ["hadoop"], g = 20000.0, io-min = 100.0, priority = "low" }} }}
""")
    agent = subprocess.Popen([sys.executable, "-m", "ibcloud.cli.main", "agent", "--policy", "drx", "--config",
                              str(cfg), "--json", "--parquet", str(tmp_path / "actions.parquet")], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    hadoop, nectere = CPU / groups / "hadoop", CPU / groups / "nectere"
    try:
        log = tmp_path / "actions.jsonl"
        deadline = time.monotonic() + 30
        while not any(r["step"] >= 3 for r in _rows(log)):
            assert agent.poll() is None, agent.communicate()
            assert time.monotonic() < deadline, "the agent logged no 4th step"
            time.sleep(0.05)
        rows = _rows(log)
        had = {r["step"]: r for r in rows if r["vm"] == "hadoop"}
        nec = {r["step"]: r for r in rows if r["vm"] == "nectere"}
        assert had[0]["cap"] == had[1]["cap"] == 0
        cap = had[2]["cap"]
        assert 0 < cap < 100 and had[2]["changed"], had[2]
        assert cap == round(had[2]["drx_cap_pct"])
        assert any(e["kind"] == "violation" for e in nec[2]["drx_events"])
        # The SLA is met again: the cap holds until the epoch ends, so the
        # kernel's quota is this cap of hadoop's own period.
        assert had[3]["cap"] == cap
        assert int((hadoop / "cpu.cfs_quota_us").read_text()) == cap * HADOOP_PERIOD // 100
        assert int((hadoop / "cpu.cfs_period_us").read_text()) == HADOOP_PERIOD
        assert all(r["cap"] == 90 and not r["changed"] for r in nec.values())  # its original, untouched
        assert int((nectere / "cpu.cfs_quota_us").read_text()) == 90000
        agent.send_signal(signal.SIGTERM)
        out, err = agent.communicate(timeout=30)
        assert agent.returncode == 0, err
        summary = json.loads(out)
        assert summary["policy"] == "drx-eb-dist" and summary["report"]["response"]["violations"] == 1
        # the host's violation-to-cap time is measured (its value is a figure, not a check)
        assert summary["caps_written_max_ms"] > 0 and had[2]["caps_written_ms"] > 0
        assert sorted(summary["restored"]["restored"]) == ["hadoop", "nectere"]
        import pandas as pd

        table = pd.read_parquet(tmp_path / "actions.parquet")
        capped = table[(table.vm == "hadoop") & (table.step == 2)]
        assert list(capped.cap) == [cap] and float(capped.price.iloc[0]) > 1.0
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
    assert int((hadoop / "cpu.cfs_quota_us").read_text()) == -1
    assert int((hadoop / "cpu.cfs_period_us").read_text()) == HADOOP_PERIOD
    assert int((nectere / "cpu.cfs_quota_us").read_text()) == 90000
