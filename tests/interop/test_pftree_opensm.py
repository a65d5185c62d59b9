"""pFTree-Ext with the real components: the partitions.conf and QoS files we
write are accepted by OpenSM 3.3.23 on ibsim (it creates the partitions and
programs our P_Keys into the ports), our tables load through OpenSM's
``file`` engine unchanged, and ibdmchk finds them connected and free of
credit loops with our path-SL and SL2VL files. Runs in CI, never skipped."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from ibcloud import Fabric, read_guid2lid
from ibcloud.interop import IbSim, ibroute_tables, run_opensm
from ibcloud.partitions import Partition, PartitionConfig, leaf_nodes, route, write_ibdmchk_files, write_qos
from ibcloud.verify import write_fdbs

SPEC = "XGFT(2;8,4;1,4)"


def _config(fabric: Fabric) -> PartitionConfig:
    leaves = leaf_nodes(fabric)
    victims = [(hex(g), "full") for leaf in leaves for _, g in leaf[:2]]
    t2 = [(hex(g), "full") for leaf in leaves for _, g in leaf[2:5]]
    t3 = [(hex(g), "limited") for leaf in leaves for _, g in leaf[5:]] + [(hex(leaves[0][5][1]), "full")]
    return PartitionConfig.build([
        Partition("Default", 0x7FFF, None, None, [("ALL", "full"), ("SELF", "full")]),
        Partition("victims", 0x0001, "phy", None, victims),
        Partition("t2", 0x0002, "vlane", None, t2),
        Partition("t3", 0x0003, "vlane", None, t3),
    ], global_isolation="strict")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    d = tmp_path_factory.mktemp("pftree")
    fabric = Fabric.generate(SPEC)
    net = d / "t.net"
    fabric.write(net)
    with IbSim(net) as sim:
        first = run_opensm(sim)
        assert first.returncode == 0
        fabric.assign_lids(policy="guid2lid", guid2lid=read_guid2lid(first.guid2lid))
        conf = _config(fabric)
        routing = route(fabric, "pftree-ext", conf)
        routing.configured(conf).write(d / "partitions.conf")
        qos_conf, qos_policy = write_qos(routing.pkey_sls(), d)
        dump = d / "pftree-lfts.dump"
        routing.tables.write_opensm(dump)
        settings = {"partition_config_file": str(d / "partitions.conf"), "qos_policy_file": str(qos_policy)}
        for line in qos_conf.read_text().splitlines():
            if line and not line.startswith("#"):
                key, value = line.split(" ", 1)
                settings[key] = value
        run = run_opensm(sim, routing_engine="file", lfts_file=dump, config=settings, verbosity="0x47",
                         guid2lid=first.guid2lid)
        installed = ibroute_tables(sim, fabric)
        leaves = leaf_nodes(fabric)
        pkeys = {
            "victim": sim.run_client(["smpquery", "pkeys", str(leaves[0][0][0])]).stdout,
            "t3_limited": sim.run_client(["smpquery", "pkeys", str(leaves[1][6][0])]).stdout,
            "t3_full": sim.run_client(["smpquery", "pkeys", str(leaves[0][5][0])]).stdout,
        }
    return fabric, conf, routing, run, installed, pkeys, d


def test_opensm_accepts_our_partitions_and_qos_files(setup) -> None:
    _, conf, routing, run, _, pkeys, d = setup
    log = run.log.read_text()
    assert run.returncode == 0 and run.engine_used == "file", log[-2000:]
    assert "PARSE ERROR" not in log and "Partition configuration in error" not in log, log[-3000:]
    assert "Failed parsing QoS policy file" not in log and "ERR AC" not in log
    assert "Loading QoS policy file" in log
    # Our policies are flags OpenSM ignores with a warning, as intended.
    assert re.search(r"PARSE WARN: line \d+: unrecognized partition flag 'isolation' - ignored", log)
    # The P_Keys reached the ports: full members carry 0x8000|pkey, limited ones the bare key.
    assert re.search(r"\b0x8001\b", pkeys["victim"]), pkeys["victim"]
    assert re.search(r"\b0x0003\b", pkeys["t3_limited"]), pkeys["t3_limited"]
    assert re.search(r"\b0x8003\b", pkeys["t3_full"]), pkeys["t3_full"]
    # The vlane partition that shares links got an SL of its own, written as sl= for OpenSM.
    assert routing.pkey_sls(), routing.report
    text = (d / "partitions.conf").read_text()
    for pkey, sl in routing.pkey_sls():
        assert f"=0x{pkey:04x}, sl={sl}," in text


def test_pftree_ext_tables_load_through_the_file_engine_and_pass_ibdmchk(setup) -> None:
    fabric, _, routing, run, installed, _, d = setup
    assert installed == routing.tables
    assert all(p["ok"] for p in routing.report["partitions"])
    fdbs, psl, sl2vl = d / "opensm.fdbs", d / "ibdmchk.psl", d / "ibdmchk.sl2vl"
    write_fdbs(routing.tables, fdbs)
    assert write_ibdmchk_files(routing, psl, sl2vl)
    out = subprocess.run(
        ["ibdmchk", "-s", str(run.subnet_lst), "-f", str(fdbs), "-m", "/dev/null", "-c", str(psl), "-d", str(sl2vl)],
        capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
    )
    text = out.stdout + out.stderr
    n = fabric.num_cas
    assert f"-I- Scanned:{n * (n - 1)} CA to CA paths" in text, text[-2000:]
    assert "missing paths" not in text and "-E- Fail to find" not in text
    assert "-I- Defined 2 SLs in use" in text
    assert "-I- no credit loops found" in text, text[-2000:]
