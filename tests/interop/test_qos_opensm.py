"""QoS and congestion control written by ibcloud-qos, applied by the real
OpenSM 3.3.23 on ibsim 0.10 and read back with smpquery.

Runs in CI for real (a missing tool is a failure, never a skip). The QoS
check reads SL2VL, VL arbitration, OperVLs and VLHighLimit back from a CA
port and from switch ports (an HCA-facing and an inter-switch port) and
compares them with the policy's own tables (VLHighLimit excepted: ibsim
does not store it). ibsim implements no
Congestion Control class (docs/qos.md): the CC check is that OpenSM
accepts every option and runs its CC setup, and it pins down what ibsim
does with those MADs instead.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from ibcloud import Fabric
from ibcloud.interop import IbSim, OpenSmRun, run_opensm
from ibcloud.qos import expected_vlarb, opensm_conf, parse_sl2vl, parse_vlarb, policy_tables

# An HCA first (its port is the SM port), two switches, three HCAs.
NET = """\
Hca\t1 "H-0000000000000001"
[1]\t"S-0000000000000010"[1]

Hca\t1 "H-0000000000000002"
[1]\t"S-0000000000000010"[2]

Hca\t1 "H-0000000000000003"
[1]\t"S-0000000000000011"[2]

Switch\t4 "S-0000000000000010"
[1]\t"H-0000000000000001"[1]
[2]\t"H-0000000000000002"[1]
[3]\t"S-0000000000000011"[3]

Switch\t4 "S-0000000000000011"
[2]\t"H-0000000000000003"[1]
[3]\t"S-0000000000000010"[3]
"""

# A policy with different tables per port class, so a class mix-up shows.
CLASSES = """\
preset = "stmaxq"
[qos]
max-vls = 4
[qos.ca]
high-limit = 4
vlarb-high = [[0, 16]]
vlarb-low = "0:200,1:1,2:2,3:3"
sl2vl = [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 15]
[qos.swe]
high-limit = 0
vlarb-low = "0:254,1:1,3:7"
sl2vl = [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3]
"""

REJECTED = re.compile(r"Unrecognized token|Warning: Cached Option|Invalid Cached Option|Parsing error|invalid")


# OpenSM 3.3.23's defaults of the options ours may repeat unchanged.
OPENSM_DEFAULTS = {
    "cc_key": "0x0000000000000000",
    "cc_max_outstanding_mads": "500",
    "cc_sw_cong_setting_credit_mask": "0x" + "00" * 32,
    "cc_sw_cong_setting_victim_mask": "0x" + "00" * 32,
    "cc_sw_cong_setting_credit_starvation_threshold": "0x00",
    "cc_sw_cong_setting_credit_starvation_return_delay": "0:0",
    "qos_high_limit": "0",
}


@pytest.fixture
def net(tmp_path: Path) -> Path:
    path = tmp_path / "qos.net"
    path.write_text(NET)
    return path


def _accepted(run: OpenSmRun, conf: str) -> None:
    """OpenSM started, loaded every option we wrote and rejected none."""
    assert run.returncode == 0, run.log.read_text()[-3000:]
    out = (run.log.parent / "opensm.stdout").read_text()
    bad = [line for line in out.splitlines() if REJECTED.search(line)]
    assert not bad, bad
    # OpenSM logs an option only when it changes the value held, so an
    # option written with OpenSM's own default (osm_subnet.c) is silent.
    loaded = {m.group(1) for m in re.finditer(r"Loading Cached Option:(\S+) = ", out)}
    written = dict(line.split(None, 1) for line in conf.splitlines() if line and not line.startswith("#"))
    silent = {k: v for k, v in written.items() if k not in loaded}
    assert all(OPENSM_DEFAULTS.get(k) == v for k, v in silent.items()), f"OpenSM did not load {silent}"


def _lids(run: OpenSmRun) -> dict[str, int]:
    return {n["description"]: n["lid"] for n in Fabric.read(run.subnet_lst).nodes()}


def _smp(sim: IbSim, *args: str) -> str:
    return sim.run_client(["smpquery", *args]).stdout


def _portinfo(sim: IbSim, lid: int, port: int) -> dict[str, str]:
    text = _smp(sim, "portinfo", str(lid), str(port))
    return {m.group(1): m.group(2) for m in re.finditer(r"^(\w+):\.+(.*)$", text, re.M)}


_OPER = {1: "VL0", 2: "VL0-1", 3: "VL0-3", 4: "VL0-7", 5: "VL0-14"}


def _check_port(sim: IbSim, lid: int, port: int, tables: dict, sl2vl_rows: dict) -> None:
    pi = _portinfo(sim, lid, port)
    code = tables["op_vls_code"]
    assert pi["OperVLs"] == _OPER[code]
    # VLHighLimit is not compared: ibsim 0.10's PortInfo Set does not keep
    # it (sim_mad.c do_portinfo), so it reads 0 whatever OpenSM sent.
    arb = parse_vlarb(_smp(sim, "vlarb", str(lid), str(port)))
    assert arb["low"] == expected_vlarb(tables["vlarb_low"], arb["low_cap"], code)
    assert arb["high"] == expected_vlarb(tables["vlarb_high"], arb["high_cap"], code)
    assert sl2vl_rows and all(row == tables["sl2vl"] for row in sl2vl_rows.values()), sl2vl_rows


@pytest.mark.parametrize("policy", ["stmaxq", "classes"])
def test_opensm_programs_our_qos_tables(policy: str, net: Path, tmp_path: Path) -> None:
    if policy == "classes":
        path = tmp_path / "classes.toml"
        path.write_text(CLASSES)
        policy = str(path)
    conf = opensm_conf(policy, "qos")
    want = policy_tables(policy)["qos"]
    with IbSim(net) as sim:
        run = run_opensm(sim, config_text=conf)
        try:
            _accepted(run, conf)
            lids = _lids(run)
            hca = lids["H-0000000000000001"]
            _check_port(sim, hca, 0, want["ca"], parse_sl2vl(_smp(sim, "sl2vl", str(hca))))
            # A remote HCA too: OpenSM programs every CA, not just its own.
            far = lids["H-0000000000000003"]
            _check_port(sim, far, 0, want["ca"], parse_sl2vl(_smp(sim, "sl2vl", str(far))))
            sw = lids["S-0000000000000010"]
            for port in (1, 3):  # towards an HCA; towards the other switch
                rows = parse_sl2vl(_smp(sim, "sl2vl", str(sw), str(port)))
                assert {o for (_, o) in rows} == {port}
                _check_port(sim, sw, port, want["swe"], rows)
        finally:
            run.remove()


def test_opensm_accepts_our_cc_options(net: Path) -> None:
    conf = opensm_conf("stmax", "all")
    qos = policy_tables("stmax")["qos"]
    with IbSim(net) as sim:
        # 0x47 adds OpenSM's verbose level, where the CC manager logs each answer.
        run = run_opensm(sim, config_text=conf, verbosity="0x47")
        try:
            _accepted(run, conf)
            log = run.log.read_text()
            answers = re.findall(r"cc_rcv_mad: Processing received MAD status (0x[0-9a-f]+) for attr ID (\d+) "
                                 r"mod 0x0 node (0x[0-9a-f]+)", log)
            lids = _lids(run)
            # The CC setup ran: CACongestionSetting (22) and CongestionControlTable
            # (23) went to all three CAs; SwitchCongestionSetting (20) to both switches.
            assert {n for s, a, n in answers if a == "22"} == {n for s, a, n in answers if a == "23"}
            assert len({n for s, a, n in answers if a == "22"}) == 3
            assert len({n for s, a, n in answers if a == "20"}) == 2
            # ibsim 0.10 has no CC agent and dispatches on class & 0xF: the CC
            # MADs reach the SMI handler with the same attribute ID. GUIDInfo
            # (0x14) refuses Set (status 0x8, so OpenSM marks the switches
            # CC-unavailable); P_KeyTable (0x16) and SL2VL (0x17) take the CA
            # settings and the CCT, overwriting what OpenSM programmed there.
            assert {s for s, a, n in answers if a == "20"} == {"0x8"}
            assert {s for s, a, n in answers if a in ("22", "23")} == {"0x0"}
            hca = lids["H-0000000000000001"]
            assert parse_sl2vl(_smp(sim, "sl2vl", str(hca)))[(0, 0)] != qos["ca"]["sl2vl"]
            # Switches keep the QoS tables: their SL2VL was not hit.
            sw = lids["S-0000000000000010"]
            rows = parse_sl2vl(_smp(sim, "sl2vl", str(sw), "1"))
            assert all(row == qos["swe"]["sl2vl"] for row in rows.values())
        finally:
            run.remove()


def test_our_sm_programs_the_same_tables_on_ibsim(net: Path, tmp_path: Path) -> None:
    """ibcloud's own SM (`sm run --qos`) sets SL2VL and VL arbitration on
    ibsim (which implements Set for both) and smpquery reads back what
    OpenSM would have programmed from the same policy."""
    path = tmp_path / "classes.toml"
    path.write_text(CLASSES)
    want = policy_tables(path)["qos"]
    with IbSim(net) as sim:
        cmd = [sys.executable, "-m", "ibcloud.cli.main", "sm", "run", "--once", "--qos", str(path),
               "--dump-dir", str(tmp_path / "dumps"), "--json"]
        summary = json.loads(sim.run_client(cmd, timeout=120).stdout)
        q = summary["bring_up"]["qos"]
        # 3 + 2 live switch ports x 5 input ports (0-4), 3 CAs; 2 VLArb blocks per live port.
        assert (q["sl2vl_sets"], q["vlarb_sets"], q["failures"]) == ((3 + 2) * 5 + 3, 2 * (3 + 2 + 3), [])
        assert q["verified"] == q["sl2vl_sets"] + q["vlarb_sets"]
        lids = {n["description"]: n["lid"] for n in Fabric.read(tmp_path / "dumps" / "fabric.topo").nodes()}
        # Our SM leaves OperationalVLs as the ports report them (ibsim: VL0-7),
        # so VLs are masked with 7, not with the policy's max_op_vls.
        for name, port, cls in [("H-0000000000000003", 0, "ca"), ("S-0000000000000011", 3, "swe")]:
            lid = lids[name]
            arb = parse_vlarb(_smp(sim, "vlarb", str(lid), str(port)))
            assert arb["low"] == expected_vlarb(want[cls]["vlarb_low"], arb["low_cap"], 4)
            assert arb["high"] == expected_vlarb(want[cls]["vlarb_high"], arb["high_cap"], 4)
            rows = parse_sl2vl(_smp(sim, "sl2vl", str(lid), *([str(port)] if port else [])))
            assert rows and all(r == want[cls]["sl2vl"] for r in rows.values()), rows


def _wait_for(what: str, check, timeout: float = 30.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def test_a_running_opensm_applies_new_weights_after_sighup(net: Path, tmp_path: Path) -> None:
    """A policy change at run time (DRXMax -> DRXMaxQ, or Sphinx moving VL
    weights): rewrite the QoS options, send SIGHUP; OpenSM 3.3.23 re-reads
    them (they are marked updatable in its option table) and programs the
    new tables on its next sweep."""
    import os
    import signal
    import subprocess

    run_dir = tmp_path / "osm"
    (run_dir / "cache").mkdir(parents=True)
    conf, log = run_dir / "opensm.conf", run_dir / "opensm.log"
    base = f"dump_files_dir {run_dir}\nsweep_interval 0\n"
    conf.write_text(base + opensm_conf("drxmax", "qos"))
    with IbSim(net) as sim:
        env = sim.client_env()
        env["OSM_CACHE_DIR"] = str(run_dir / "cache")
        proc = subprocess.Popen(["opensm", "-F", str(conf), "-f", str(log), "-d", "2", "-D", "0x43"],
                                cwd=sim.workdir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            ups = lambda: log.read_text().count("SUBNET UP") if log.exists() else 0  # noqa: E731
            _wait_for("the first SUBNET UP", lambda: ups() >= 1)
            # OpenSM gives its own port LID 1 when its LID cache is empty.
            low = lambda: parse_vlarb(_smp(sim, "vlarb", "1"))["low"][:2]  # noqa: E731
            assert low() == [[0, 32], [1, 32]]
            conf.write_text(base + opensm_conf("drxmaxq", "qos"))
            os.kill(proc.pid, signal.SIGHUP)
            _wait_for("the sweep after SIGHUP", lambda: ups() >= 2)
            assert low() == [[0, 254], [1, 1]]
            sw = _lids_from_subnet(run_dir)["S-0000000000000011"]
            assert parse_vlarb(_smp(sim, "vlarb", str(sw), "3"))["low"][:2] == [[0, 254], [1, 1]]
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def _lids_from_subnet(run_dir: Path) -> dict[str, int]:
    return {n["description"]: n["lid"] for n in Fabric.read(run_dir / "opensm-subnet.lst").nodes()}
