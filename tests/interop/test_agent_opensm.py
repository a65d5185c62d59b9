"""``ibcloud agent --policy sphinx`` drives a real OpenSM 3.3.23 on ibsim 0.10.

OpenSM runs as a daemon on a small ibsim fabric, started with an
opensm.conf holding the StMax QoS options (VL weights 32:32). The agent
runs Sphinx from a replay feed: one period with Table 8's collocated
latencies (Nectere loses 6.5x what Memcached does against a 1:1 target),
then periods with equal losses (the error is zero, so the delay holds).
Sphinx delays Memcached's SL; the agent rewrites opensm.conf (CCTI_Min of
SL1 = the delay, VL1's weight scaled down) and sends SIGHUP. The test reads
the VL arbitration tables back from an adapter and a switch port with
``smpquery vlarb``, checks OpenSM re-read the CC option (its stdout), then
stops the agent with SIGTERM and checks the original opensm.conf and the
32:32 tables are back. Real tools, never skipped.
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

from ibcloud import Fabric
from ibcloud.interop import IbSim
from ibcloud.qos import opensm_conf, parse_vlarb

NET = """\
Hca\t1 "H-0000000000000001"
[1]\t"S-0000000000000010"[1]

Hca\t1 "H-0000000000000002"
[1]\t"S-0000000000000010"[2]

Switch\t4 "S-0000000000000010"
[1]\t"H-0000000000000001"[1]
[2]\t"H-0000000000000002"[1]
"""

MAX_DELAY = 127


def _wait_for(what: str, check, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def _v1_tree(root: Path, vms: "list[str]") -> None:
    """A cgroup v1 layout in a folder (Sphinx sets no cap; the agent still
    saves and restores the VMs' limits)."""
    for sub, files in (("cpu", {"cpu.cfs_quota_us": "-1\n"}), ("cpuacct", {"cpuacct.usage": "0\n"})):
        (root / sub).mkdir(parents=True)
        for name, text in files.items():
            (root / sub / name).write_text(text)
    for vm in vms:
        cpu, acct = root / "cpu" / vm, root / "cpuacct" / vm
        cpu.mkdir()
        acct.mkdir()
        (cpu / "cpu.cfs_quota_us").write_text("-1\n")
        (cpu / "cpu.cfs_period_us").write_text("100000\n")
        (cpu / "cpu.stat").write_text("nr_periods 0\nnr_throttled 0\nthrottled_time 0\n")
        (acct / "cpuacct.usage").write_text("0\n")


AGENT = """\
[agent]
state-file = "agent.state"
cgroup-root = "cgroup"
cgroup-version = "v1"
replay = "feed.jsonl"
log = "actions.jsonl"
socket = "agent.sock"

[[vm]]
name = "nectere"
cgroup = "nectere"
sl = 0
latency = true

[[vm]]
name = "memcached"
cgroup = "memcached"
sl = 1
latency = true

[policy]
period = "100ms"
flows = [{ vm = "nectere", base-us = 48.0 }, { vm = "memcached", base-us = 187.0 }]
groups = [{ a = "nectere", b = "memcached", target = "1:1" }]

[opensm]
conf = "osm/opensm.conf"
pid-file = "osm/opensm.pid"
log = "osm/opensm.log"
base = "stmax"
actuator = "both"
"""


def _feed(path: Path, periods: int) -> None:
    rows = [{"period": 0, "vm": "nectere", "latencies_us": [64.1]},
            {"period": 0, "vm": "memcached", "latencies_us": [196.7]}]
    for k in range(1, periods):
        # PL 0.1 for both: LP = 1, the target; the delay holds.
        rows += [{"period": k, "vm": "nectere", "latencies_us": [52.8]},
                 {"period": k, "vm": "memcached", "latencies_us": [205.7]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _smp_vlarb(sim: IbSim, *args: str) -> "list[list[int]]":
    return parse_vlarb(sim.run_client(["smpquery", "vlarb", *args]).stdout)["low"][:2]


def _log_rows(path: Path) -> "list[dict]":
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_sphinx_agent_reprograms_a_running_opensm(tmp_path: Path) -> None:
    net = tmp_path / "agent.net"
    net.write_text(NET)
    osm = tmp_path / "osm"
    (osm / "cache").mkdir(parents=True)
    conf, log, out = osm / "opensm.conf", osm / "opensm.log", osm / "opensm.stdout"
    original = f"dump_files_dir {osm}\nsweep_interval 0\n" + opensm_conf("stmax", "qos")
    conf.write_text(original)
    _v1_tree(tmp_path / "cgroup", ["nectere", "memcached"])
    _feed(tmp_path / "feed.jsonl", 400)
    (tmp_path / "AGENT.toml").write_text(AGENT)
    with IbSim(net) as sim:
        env = sim.client_env()
        env["OSM_CACHE_DIR"] = str(osm / "cache")
        with open(out, "wb") as stdout:
            opensm = subprocess.Popen(["opensm", "-F", str(conf), "-f", str(log), "-d", "2", "-D", "0x43"],
                                      cwd=sim.workdir, env=env, stdin=subprocess.DEVNULL, stdout=stdout,
                                      stderr=subprocess.STDOUT, start_new_session=True)
        agent = None
        try:
            (osm / "opensm.pid").write_text(f"{opensm.pid}\n")
            ups = lambda: log.read_text().count("SUBNET UP") if log.exists() else 0  # noqa: E731
            _wait_for("OpenSM's first SUBNET UP", lambda: ups() >= 1)
            # OpenSM's own port gets LID 1 with an empty LID cache.
            assert _smp_vlarb(sim, "1") == [[0, 32], [1, 32]]
            agent = subprocess.Popen([sys.executable, "-m", "ibcloud.cli.main", "agent", "--policy", "sphinx",
                                      "--config", str(tmp_path / "AGENT.toml"), "--no-guardian", "--json",
                                      "--parquet", str(tmp_path / "actions.parquet")],
                                     cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            actions = tmp_path / "actions.jsonl"

            def settled() -> bool:
                # Step 1 (equal losses) logged: step 0's push is on the fabric.
                return any(r["step"] >= 1 for r in _log_rows(actions))

            _wait_for("the agent's second step", settled)
            rows = _log_rows(actions)
            first = [r for r in rows if r["step"] == 0]
            mem = next(r for r in first if r["vm"] == "memcached")
            nec = next(r for r in first if r["vm"] == "nectere")
            delay = mem["cc_delay"]
            # Eq. 9-10 by hand: e = PL_a/PL_b - 1, P = 4 e (period-s 1), R = 0.25 P.
            pl_a, pl_b = (64.1 - 48) / 48, (196.7 - 187) / 187
            assert mem["pl"] == pytest.approx(pl_b) and nec["pl"] == pytest.approx(pl_a)
            assert delay == round(0.25 * 4 * (pl_a / pl_b - 1)) and delay > 0
            assert nec["cc_delay"] == 0
            assert mem["fabric_reloaded"] is True and mem["fabric_applied_ms"] > 0
            weight = max(1, round(32 * (1 - delay / MAX_DELAY)))
            assert _smp_vlarb(sim, "1") == [[0, 32], [1, weight]]
            lids = {n["description"]: n["lid"] for n in Fabric.read(osm / "opensm-subnet.lst").nodes()}
            sw = lids["S-0000000000000010"]
            assert _smp_vlarb(sim, str(sw), "2") == [[0, 32], [1, weight]]
            far = lids["H-0000000000000002"]
            assert _smp_vlarb(sim, str(far)) == [[0, 32], [1, weight]]
            managed = conf.read_text()
            assert f"cc_ca_cong_setting_ccti_min 1 {delay}\n" in managed
            assert "cc_ca_cong_setting_ccti_min 0 0\n" in managed
            assert managed.startswith(f"dump_files_dir {osm}\nsweep_interval 0\n")
            # G R16 on the real host: a looser target for Nectere (1:4) over the
            # socket; the price rises again and Memcached's delay with it.
            import socket

            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
                c.connect(str(tmp_path / "agent.sock"))
                c.sendall(b"!target 0 1:4\n")
            _wait_for("a step with the new target",
                      lambda: any(r.get("lp_target") == 0.25 for r in _log_rows(actions)))
            after = next(r for r in _log_rows(actions) if r["vm"] == "memcached" and r.get("lp_target") == 0.25)
            assert after["lp_error"] == pytest.approx(0.75, abs=1e-9)
            assert after["cc_delay"] > delay and after["fabric_reloaded"]
            agent.send_signal(signal.SIGTERM)
            stdout_text, stderr_text = agent.communicate(timeout=30)
            assert agent.returncode == 0, stderr_text
            summary = json.loads(stdout_text)
            fab = summary["fabric"]
            assert fab["restored"] and fab["reloads"] >= 3 and fab["pid"] == opensm.pid
            # The original file names no CC option: the agent says what stays.
            assert "congestion-control" in fab["note"]
            assert conf.read_text() == original
            assert _smp_vlarb(sim, "1") == [[0, 32], [1, 32]]
            assert _smp_vlarb(sim, str(sw), "2") == [[0, 32], [1, 32]]
            import pandas as pd

            table = pd.read_parquet(tmp_path / "actions.parquet")
            step0 = table[(table.vm == "memcached") & (table.step == 0)]
            assert list(step0.cc_delay) == [delay] and list(step0.lp_target) == [1.0]
        finally:
            if agent is not None and agent.poll() is None:
                agent.kill()
                agent.wait()
            opensm.send_signal(signal.SIGTERM)
            try:
                opensm.wait(timeout=10)
            except subprocess.TimeoutExpired:
                opensm.kill()
                opensm.wait()
    # OpenSM prints each option it loads when the value changes; its stdout
    # is complete once it has exited. The CC options were re-read on SIGHUP.
    text = out.read_text(errors="replace")
    assert f"Loading Cached Option:cc_ca_cong_setting_ccti_min = {delay}" in text
    assert "Loading Cached Option:congestion_control = TRUE" in text
    assert "Unrecognized token" not in text


DRX_AGENT = """\
[agent]
state-file = "agent.state"
cgroup-root = "cgroup"
cgroup-version = "v1"
replay = "feed.jsonl"
log = "actions.jsonl"

[[vm]]
name = "nectere"
cgroup = "nectere"

[[vm]]
name = "hadoop"
cgroup = "hadoop"

[policy]
policy = "drxmaxq"
interval = "100ms"
epoch = "60s"
vmes = { nect = { vms = ["nectere"], g = 1000.0, io-min = 1000.0, priority = "high" }, bulk = { vms = ["hadoop"], g = 20000.0, io-min = 100.0, priority = "low" } }

[opensm]
conf = "osm/opensm.conf"
pid-file = "osm/opensm.pid"
log = "osm/opensm.log"
cc-sls = "bulk"
"""


def _start_opensm(sim: IbSim, osm: Path, original: str) -> subprocess.Popen:
    (osm / "cache").mkdir(parents=True)
    (osm / "opensm.conf").write_text(original)
    env = sim.client_env()
    env["OSM_CACHE_DIR"] = str(osm / "cache")
    with open(osm / "opensm.stdout", "wb") as stdout:
        proc = subprocess.Popen(["opensm", "-F", str(osm / "opensm.conf"), "-f", str(osm / "opensm.log"), "-d", "2",
                                 "-D", "0x43"], cwd=sim.workdir, env=env, stdin=subprocess.DEVNULL, stdout=stdout,
                                stderr=subprocess.STDOUT, start_new_session=True)
    (osm / "opensm.pid").write_text(f"{proc.pid}\n")
    log = osm / "opensm.log"
    _wait_for("OpenSM's first SUBNET UP", lambda: log.exists() and "SUBNET UP" in log.read_text())
    return proc


def _stop(proc: "subprocess.Popen | None") -> None:
    if proc is not None and proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_drxmaxq_agent_pushes_qos_at_start_and_cc_at_the_first_violation(tmp_path: Path) -> None:
    """DRXMaxQ (G Table 4/6): QoS 254:1 from the start, G Table 5's CC
    pushed when Nectere first misses its SLA; both reach the running OpenSM
    through opensm.conf + SIGHUP and are undone (QoS) at exit."""
    net = tmp_path / "agent.net"
    net.write_text(NET)
    osm = tmp_path / "osm"
    original = f"dump_files_dir {osm}\nsweep_interval 0\n" + opensm_conf("stmax", "qos")
    _v1_tree(tmp_path / "cgroup", ["nectere", "hadoop"])
    rows = []
    for k in range(100):
        # SLA: 1000 CQE/s = 100 per 100 ms; met in period 0, missed from period 2 on.
        rows += [{"period": k, "vm": "nectere", "requests": 100 if k < 2 else 50},
                 {"period": k, "vm": "hadoop", "requests": 2000}]
    (tmp_path / "feed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "AGENT.toml").write_text(DRX_AGENT)
    conf = osm / "opensm.conf"
    with IbSim(net) as sim:
        opensm = _start_opensm(sim, osm, original)
        agent = None
        try:
            assert _smp_vlarb(sim, "1") == [[0, 32], [1, 32]]
            agent = subprocess.Popen([sys.executable, "-m", "ibcloud.cli.main", "agent", "--policy", "drx",
                                      "--config", str(tmp_path / "AGENT.toml"), "--no-guardian", "--json"],
                                     cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            actions = tmp_path / "actions.jsonl"
            _wait_for("the agent's second step", lambda: any(r["step"] >= 1 for r in _log_rows(actions)))
            # QoS is in force from the start (the push before the first step).
            assert _smp_vlarb(sim, "1") == [[0, 254], [1, 1]]
            _wait_for("the step after the violation",
                      lambda: any(r["step"] >= 3 for r in _log_rows(actions)))
            rows = _log_rows(actions)
            viol = [r for r in rows if r["vm"] == "nectere" and any(e["kind"] == "violation"
                                                                     for e in r.get("drx_events", []))]
            assert viol and viol[0]["step"] == 2
            # CC went out at the violation's step, not before.
            assert {r["step"] for r in rows if r["fabric_reloaded"]} == {2}, rows
            text = conf.read_text()
            assert "congestion_control TRUE" in text and "cc_ca_cong_setting_control_map 0xFFFE" in text
            assert "qos_vlarb_low 0:254,1:1" in text
            sw = {n["description"]: n["lid"] for n in Fabric.read(osm / "opensm-subnet.lst").nodes()}["S-0000000000000010"]
            assert _smp_vlarb(sim, str(sw), "1") == [[0, 254], [1, 1]]
            # a hardware policy sets no cap
            assert all(r["cap"] == 0 for r in rows)
            agent.send_signal(signal.SIGTERM)
            out, err = agent.communicate(timeout=30)
            assert agent.returncode == 0, err
            fab = json.loads(out)["fabric"]
            assert fab["restored"] and fab["reloads"] == 2
            assert conf.read_text() == original
            assert _smp_vlarb(sim, "1") == [[0, 32], [1, 32]]
        finally:
            _stop(agent)
            _stop(opensm)
    text = (osm / "opensm.stdout").read_text(errors="replace")
    assert "Loading Cached Option:congestion_control = TRUE" in text
    assert "Unrecognized token" not in text


def test_sphinx_dry_run_a_killed_agent_and_a_dead_opensm(tmp_path: Path) -> None:
    net = tmp_path / "agent.net"
    net.write_text(NET)
    osm = tmp_path / "osm"
    original = f"dump_files_dir {osm}\nsweep_interval 0\n" + opensm_conf("stmax", "qos")
    _v1_tree(tmp_path / "cgroup", ["nectere", "memcached"])
    # collocated every period: the delay rises at every step, so every step pushes
    rows = [{"period": k, "vm": vm, "latencies_us": [lat]} for k in range(400)
            for vm, lat in (("nectere", 64.1), ("memcached", 196.7))]
    (tmp_path / "feed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "AGENT.toml").write_text(AGENT)
    conf, log = osm / "opensm.conf", osm / "opensm.log"
    cmd = [sys.executable, "-m", "ibcloud.cli.main", "agent", "--policy", "sphinx", "--config",
           str(tmp_path / "AGENT.toml"), "--no-guardian", "--json"]
    with IbSim(net) as sim:
        opensm = _start_opensm(sim, osm, original)
        agent = None
        try:
            ups = log.read_text().count("SUBNET UP")
            done = subprocess.run(cmd + ["--dry-run", "--steps", "3"], cwd=tmp_path, capture_output=True, text=True,
                                  timeout=60)
            assert done.returncode == 0, done.stderr
            fab = json.loads(done.stdout)["fabric"]
            assert (fab["reloads"], fab["restored"]) == (0, False)
            assert conf.read_text() == original and log.read_text().count("SUBNET UP") == ups
            delays = [r["cc_delay"] for r in _log_rows(tmp_path / "actions.jsonl") if r["vm"] == "memcached"]
            assert len(delays) == 3 and delays == sorted(delays) and delays[-1] > 0
            # SIGKILL: the guardian writes the original back and reloads OpenSM.
            guarded = [c for c in cmd if c != "--no-guardian"]
            agent = subprocess.Popen(guarded, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            _wait_for("a pushed step", lambda: any(r.get("fabric_reloaded") for r in
                                                   _log_rows(tmp_path / "actions.jsonl")))
            assert conf.read_text() != original
            agent.kill()
            agent.communicate(timeout=30)
            _wait_for("the guardian's restore", lambda: conf.read_text() == original
                      and not (tmp_path / "agent.state").exists())
            _wait_for("OpenSM's sweep after the guardian's SIGHUP",
                      lambda: _smp_vlarb(sim, "1") == [[0, 32], [1, 32]])
            agent = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            (tmp_path / "actions.jsonl").unlink()
            _wait_for("a pushed step", lambda: any(r.get("fabric_reloaded") for r in
                                                   _log_rows(tmp_path / "actions.jsonl")))
            opensm.kill()
            opensm.wait()
            out, err = agent.communicate(timeout=30)
            assert agent.returncode == 1, err
            assert "OpenSM went away" in err and "restored" in err and "Traceback" not in err
            assert conf.read_text() == original
            assert not (tmp_path / "agent.state").exists()
        finally:
            _stop(agent)
            _stop(opensm)


def _bad(tmp_path: Path, agent_toml: str) -> "subprocess.CompletedProcess[str]":
    if not (tmp_path / "cgroup").exists():
        _v1_tree(tmp_path / "cgroup", ["nectere", "memcached"])
    (tmp_path / "osm").mkdir(exist_ok=True)
    if not (tmp_path / "osm" / "opensm.conf").exists():
        (tmp_path / "osm" / "opensm.conf").write_text("sweep_interval 0\n")
    (tmp_path / "AGENT.toml").write_text(agent_toml)
    return subprocess.run([sys.executable, "-m", "ibcloud.cli.main", "agent", "--policy", "sphinx", "--config",
                           str(tmp_path / "AGENT.toml"), "--no-guardian"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_bad_sphinx_setups_exit_2_with_file_and_line(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    base = AGENT.replace('pid-file = "osm/opensm.pid"', f"pid = {dead.pid}")
    cases = [
        # a PID that is not running
        (base, f"pid = {dead.pid}", "no running OpenSM"),
        # a running process that is not OpenSM
        (AGENT.replace('pid-file = "osm/opensm.pid"', f"pid = {os.getpid()}"), "pid = ", "not opensm"),
        # unknown parameter of the controller
        (base.replace('period = "100ms"', 'period = "100ms"\nk-z = 3'), "k-z", "k-z"),
        # a flow naming a VM not in the config
        (base.replace('vm = "memcached", base-us', 'vm = "memcache", base-us'), "flows =", "no VM 'memcache'"),
        # an opensm.conf that cannot be replaced (root cannot create files in /proc)
        (base.replace('conf = "osm/opensm.conf"', 'conf = "/proc/version"'), "conf = ", "cannot be replaced"),
        # a missing PID file
        (AGENT, "pid-file", "cannot read"),
    ]
    for text, needle, problem in cases:
        done = _bad(tmp_path, text)
        assert done.returncode == 2, (needle, done.stderr)
        line = _line_of(text, needle)
        assert f"AGENT.toml:{line}:" in done.stderr and problem in done.stderr, (needle, done.stderr)
        assert "Traceback" not in done.stderr
