"""``ibcloud agent`` against real cgroups (v1, this machine's cpu and cpuacct
hierarchies), driven by FreeMarket, the ResEx policy, from a scripted I/O feed.

Two CPU-bound processes share one CPU, each in its own cgroup
(``/sys/fs/cgroup/{cpu,cpuacct}/ibcloud-test-<pid>/vm1|vm2``). The feed
makes vm1 move 2 MB per 250 ms interval, so its Resos run below the 10 %
floor early in the epoch and FreeMarket cuts its cap once per epoch
(``cut-every = "epoch"``) by ``cut-step`` 0.7: from 100 to 30 % of a CPU.
The test checks the agent actually did that to the kernel: the quota file
reads 30 % of vm1's own period, ``cpu.stat`` shows vm1 throttled and vm2
not, the CPU time cpuacct measures follows the cap, the floor crossing
happens at the step the thesis's arithmetic predicts from the logged
observations, and vm1's and vm2's original settings come back when the
agent ends, on SIGTERM, and on SIGKILL (through the guardian).

Not skipped: this machine is root with a cgroup v1 cpu controller; elsewhere
the test fails saying what is missing (see docs/agent.md).
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
INTERVAL_S = 0.25
STEPS = 24
#: vm1's original period (µs): non-default, so a restore that only resets the
#: quota would be caught; vm2's original quota likewise.
VM1_PERIOD = 50_000
VM2_QUOTA = 95_000


def _require_host() -> None:
    problems = []
    if os.geteuid() != 0:
        problems.append("not root (cgroups cannot be created)")
    if not (CPU / "cpu.cfs_quota_us").is_file():
        problems.append(f"no cgroup v1 cpu controller at {CPU}")
    if not (ACCT / "cpuacct.usage").is_file():
        problems.append(f"no cgroup v1 cpuacct controller at {ACCT}")
    if problems:
        pytest.fail("the real-cgroup agent test needs " + "; ".join(problems) + " (docs/agent.md)")


def _read(p: Path) -> str:
    return p.read_text().strip()


def _stat(group: Path) -> "dict[str, int]":
    return {k: int(v) for k, v in (line.split() for line in (group / "cpu.stat").read_text().splitlines())}


@pytest.fixture()
def host(tmp_path):
    """Two cgroups with a pinned CPU-bound process each; removed at the end."""
    _require_host()
    name = f"ibcloud-test-{os.getpid()}"
    made: "list[Path]" = []
    procs: "list[subprocess.Popen]" = []
    cpu = max(os.sched_getaffinity(0))
    try:
        for root in (CPU, ACCT):
            for sub in ("", "/vm1", "/vm2"):
                d = root / (name + sub)
                d.mkdir()
                made.append(d)
        # The machine is shared (other builds and tests run beside this
        # one): the test's parent group gets the largest CFS weight, so on
        # the chosen CPU vm1 and vm2 compete with each other, not with the
        # rest of the host, and the shares below measure the caps.
        (CPU / name / "cpu.shares").write_text("262144")
        (CPU / name / "vm1" / "cpu.cfs_period_us").write_text(str(VM1_PERIOD))
        (CPU / name / "vm2" / "cpu.cfs_quota_us").write_text(str(VM2_QUOTA))
        for vm in ("vm1", "vm2"):
            p = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            procs.append(p)
            os.sched_setaffinity(p.pid, {cpu})  # one CPU: the caps bind
            for root in (CPU, ACCT):
                (root / name / vm / "cgroup.procs").write_text(str(p.pid))
        yield {"name": name, "tmp": tmp_path, "procs": procs}
    finally:
        for p in procs:
            p.kill()
            p.wait()
        for d in reversed(made):
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except OSError:
                    time.sleep(0.05)


def _config(host, tag: str) -> Path:
    tmp, name = host["tmp"], host["name"]
    feed = tmp / f"feed-{tag}.jsonl"
    with open(feed, "w") as f:
        for k in range(STEPS):
            f.write(json.dumps({"period": k, "vm": "vm1", "bytes": 2_000_000}) + "\n")
            f.write(json.dumps({"period": k, "vm": "vm2", "bytes": 0}) + "\n")
    cfg = tmp / f"AGENT-{tag}.toml"
    cfg.write_text(f"""
[agent]
state-file = "state-{tag}.json"
replay = "{feed.name}"
log = "actions-{tag}.jsonl"
cgroup-version = "v1"

[[vm]]
name = "vm1"
cgroup = "{name}/vm1"

[[vm]]
name = "vm2"
cgroup = "{name}/vm2"

[policy]
interval = "250ms"
epoch = "20s"
link-bytes-per-s = 102400.0
cut-every = "epoch"
cut-step = 0.7
restore-at-epoch = false
""")
    return cfg


def _start(cfg: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ibcloud.cli.main", "agent", "--policy", "freemarket",
                             "--config", str(cfg), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_capped(host, agent: subprocess.Popen, timeout: float = 8.0) -> None:
    quota = CPU / host["name"] / "vm1" / "cpu.cfs_quota_us"
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if _read(quota) == str(VM1_PERIOD * 30 // 100):
            return
        if agent.poll() is not None:
            break
        time.sleep(0.02)
    if agent.poll() is None:
        agent.terminate()
    out, err = agent.communicate(timeout=10)
    pytest.fail(f"vm1 was never capped to 30 %: quota {_read(quota)}; agent said {out} {err}")


def _assert_originals(host) -> None:
    g = CPU / host["name"]
    assert _read(g / "vm1" / "cpu.cfs_quota_us") == "-1"
    assert _read(g / "vm1" / "cpu.cfs_period_us") == str(VM1_PERIOD)
    assert _read(g / "vm2" / "cpu.cfs_quota_us") == str(VM2_QUOTA)
    assert _read(g / "vm2" / "cpu.cfs_period_us") == "100000"


def _children(pid: int) -> "list[int]":
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(c) for c in (task / "children").read_text().split()]
    return out


def test_freemarket_caps_real_cgroups_and_restores_them(host):
    g = CPU / host["name"]
    a = ACCT / host["name"]
    cfg = _config(host, "run")
    agent = _start(cfg)
    try:
        _wait_capped(host, agent)
        # Measure the shares over 2 s of the capped phase (the cap holds
        # to the end: one cut per epoch, no restore inside the 20 s epoch).
        t0 = time.monotonic()
        u0 = [int(_read(a / vm / "cpuacct.usage")) for vm in ("vm1", "vm2")]
        s0 = [_stat(g / vm) for vm in ("vm1", "vm2")]
        time.sleep(2.0)
        u1 = [int(_read(a / vm / "cpuacct.usage")) for vm in ("vm1", "vm2")]
        s1 = [_stat(g / vm) for vm in ("vm1", "vm2")]
        wall_ns = (time.monotonic() - t0) * 1e9
        assert _read(g / "vm1" / "cpu.cfs_quota_us") == str(VM1_PERIOD * 30 // 100), "cap held"
        out, err = agent.communicate(timeout=30)
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
    assert agent.returncode == 0, err
    summary = json.loads(out)
    assert summary["ended"] == "replay-end" and summary["steps"] == STEPS
    _assert_originals(host)
    assert not (host["tmp"] / "state-run.json").exists()

    # Throttling: vm1's periods throttled, vm2 (cap 95 %, sharing the CPU
    # with vm1) never.
    assert s1[0]["nr_throttled"] - s0[0]["nr_throttled"] >= 10
    assert s1[0]["throttled_time"] > s0[0]["throttled_time"]
    assert s1[1]["nr_throttled"] == s0[1]["nr_throttled"]

    # CPU shares. The cap lets vm1 run 15 ms per 50 ms period = 30 % of the
    # CPU. Tolerance, fixed before measuring: the 2 s window cuts at most
    # one period at each end (±15 ms = ±0.75 points) and CFS may overrun a
    # quota by up to a scheduler tick per period (4 ms / 50 ms at HZ=250 is
    # an upper bound; ≤ +2 points measured over many periods), so
    # vm1 ≤ 30 + 3 points. Below, vm1 can lose time only to other load on
    # the CPU, which the parent group's weight (262144 vs 1024) bounds to
    # well under a few points; 8 points are allowed for kernel threads and
    # interrupts on a busy shared machine. vm2 gets the rest: at least 20
    # points more than vm1.
    share = [100.0 * (u1[i] - u0[i]) / wall_ns for i in range(2)]
    assert 22.0 <= share[0] <= 33.0, share
    assert share[1] > share[0] + 20.0, share

    # The policy's arithmetic, recomputed from the logged observations:
    # pooled balance per VM per epoch = CPU 100 × 80 intervals + IB pool
    # 102400 B/s × 20 s / 1024 B / 2 VMs = 8000 + 1000 Resos; each interval
    # costs cpu_pct + bytes/1024; the cut fires on the first interval whose
    # charge leaves < 10 % (900) with > 10 % of the epoch left. CPU % is
    # charged per 250 ms interval covered (the logged interval_s).
    rows = [json.loads(line) for line in (host["tmp"] / "actions-run.jsonl").read_text().splitlines()]
    vm1 = [r for r in rows if r["vm"] == "vm1"]
    assert len(vm1) == STEPS
    left, expect_cut = 9000.0, None
    for r in vm1:
        left -= r["cpu_pct"] * r["interval_s"] / INTERVAL_S + r["bytes"] / 1024.0
        if left < 900.0 and expect_cut is None:
            expect_cut = r["step"]
    cuts = [r["step"] for r in vm1 if r["changed"]]
    assert cuts == [expect_cut], (cuts, expect_cut)
    assert vm1[expect_cut]["cap"] == 30
    assert all(r["cap"] == 95 and not r["changed"] for r in rows if r["vm"] == "vm2")
    # Before the cut the two processes split the CPU (≈ 50 % each); after it
    # vm1's measured cpu_pct stays at or under its cap (+3 points as above).
    after = [r["cpu_pct"] for r in vm1[expect_cut + 2:]]
    assert after and max(after) <= 33.0, after
    before = [r["cpu_pct"] for r in vm1[1:expect_cut]]
    assert before and min(before) > 35.0, before


def test_sigterm_restores(host):
    agent = _start(_config(host, "term"))
    try:
        _wait_capped(host, agent)
        agent.send_signal(signal.SIGTERM)
        out, err = agent.communicate(timeout=10)
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
    assert agent.returncode == 0, err
    assert json.loads(out)["ended"] == "stopped"
    _assert_originals(host)
    assert not (host["tmp"] / "state-term.json").exists()


def test_sigkill_is_restored_by_the_guardian_then_the_next_start_finds_nothing(host):
    cfg = _config(host, "kill")
    agent = _start(cfg)
    guardians: "list[int]" = []
    try:
        _wait_capped(host, agent)
        guardians = _children(agent.pid)
        assert guardians, "the agent started no guardian"
        agent.kill()  # SIGKILL: no handler runs in the agent
        agent.communicate(timeout=10)
        quota = CPU / host["name"] / "vm1" / "cpu.cfs_quota_us"
        end = time.monotonic() + 10
        while _read(quota) != "-1" and time.monotonic() < end:
            time.sleep(0.05)
        _assert_originals(host)
        state = host["tmp"] / "state-kill.json"
        while state.exists() and time.monotonic() < end:
            time.sleep(0.05)
        assert not state.exists(), "the guardian removes the state file after restoring"
        # and `--restore` then has nothing to do
        r = subprocess.run([sys.executable, "-m", "ibcloud.cli.main", "agent", "--restore", "--config", str(cfg)],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0 and "nothing to restore" in r.stdout, r
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        for pid in guardians:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
