"""`ibcloud.sim` and `ibcloud sim`: API, controller hook, events, outputs,
exit statuses and bad input (the model itself is tested in Rust:
crates/ibcloud-netsim/tests)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import ibcloud
from ibcloud import Fabric
from ibcloud.cli.main import main
from ibcloud.exceptions import IbcloudError, SimulationError
from ibcloud.sim import config, simulate, simulate_many


@pytest.fixture(scope="module")
def tables():
    return ibcloud.route(Fabric.generate("4-ary-2-full"), "ftree").tables


def test_offered_load_is_carried_and_runs_repeat(tables) -> None:
    r = simulate(tables, "shift:load=0.4,size=4096", "300us", mtu=4096)
    link = 32.0 * 4096 / 4130
    assert abs(r.flows["gbps"].mean() / link - 0.4) < 0.03
    assert r.summary()["dropped_packets"] == 0 and r.unit_hops > 0
    again = simulate(tables, "shift:load=0.4,size=4096", "300us", mtu=4096)
    pd.testing.assert_frame_equal(r.flows, again.flows)
    assert set(r.port_series.columns) >= {"time_us", "port", "xmit_data", "rcv_data", "xmit_wait", "xmit_pkts"}
    # 64-bit PortXmitData in 32-bit words grows with time.
    s = r.port_series[r.port_series["slot"] == r.port_series["slot"].iloc[0]]
    assert s["xmit_data"].is_monotonic_increasing


def test_python_controller_changes_a_flows_sl_at_a_sweep(tables) -> None:
    seen = []

    def controller(sweep):
        seen.append(sweep.time_ps)
        assert len(sweep.congestion()) == len(sweep.xmit_wait)
        assert len(sweep.hca_facing()) == 32 and len(sweep.endpoint_lids) == 32
        if sweep.time_ps == 100_000_000:
            return [{"type": "set-flow-sl", "flow": 0, "sl": 1}]
        return None

    r = simulate(tables, "flow:src=#0,dst=#9,size=64k", "300us", vls=2, controller=controller)
    assert seen[:3] == [100_000_000, 200_000_000, 300_000_000]
    sl = r.flow_series.set_index("time_us")["sl"]
    # Samples hold the SL of the interval that ends there; the action at
    # 100 us shows from the next one.
    assert sl.loc[100.0] == 0 and sl.loc[200.0] == 1 and sl.loc[300.0] == 1 and int(r.flows["sl"].iloc[0]) == 1
    assert r.gbps(0, "100us") > 20

    def broken(sweep):
        raise ValueError("oops")

    with pytest.raises(SimulationError, match="controller raised"):
        simulate(tables, "flow:src=#0,dst=#9", "300us", controller=broken)
    with pytest.raises(SimulationError, match="VL 1 is not operational"):
        simulate(tables, "flow:src=#0,dst=#9", "300us", controller=lambda s: [{"type": "set-sl2-vl", "node": 0,
                                                                               "in_port": None, "out_port": None,
                                                                               "map": [1] * 16}])


def test_events_by_name_and_their_errors(tables) -> None:
    fabric = Fabric.generate("4-ary-2-full")
    leaf = next(n for n in fabric.nodes() if n["kind"] == "switch" and n["rank"] == 1)
    ev = [{"time": "50us", "type": "link-down", "node": leaf["description"], "port": 1},
          {"time": "150us", "type": "link-up", "node": leaf["description"], "port": 1}]
    r = simulate(tables, "uniform:load=0.3", "300us", events=ev)
    assert r.dropped > 0
    with pytest.raises(SimulationError, match="unknown node 'nowhere'"):
        simulate(tables, "uniform:load=0.3", "100us", events=[{"time": "1us", "type": "link-down",
                                                               "node": "nowhere", "port": 1}])
    with pytest.raises(SimulationError, match="every event needs a time"):
        simulate(tables, "uniform:load=0.3", "100us", events=[{"type": "link-up", "node": 0, "port": 1}])


def test_bad_input_raises_before_the_run(tables) -> None:
    with pytest.raises(SimulationError, match="unknown endpoint 'H99'"):
        simulate(tables, "flow:src=H99,dst=#1", "1ms")
    with pytest.raises(SimulationError, match="smaller than one 4096-byte MTU"):
        simulate(tables, "uniform:load=0.1", "1ms", mtu=4096, buffer_bytes=4096)
    with pytest.raises(SimulationError, match="cannot parse duration"):
        simulate(tables, "uniform:load=0.1", "ten ms")
    with pytest.raises(SimulationError, match="unknown pattern"):
        simulate(tables, "bursty:load=0.1", "1ms")
    with pytest.raises(SimulationError, match="unknown simulation option"):
        config(buffer=1)
    fabric = Fabric.generate("4-ary-2-full")
    broken = ibcloud.route(fabric, "ftree").tables
    far = [n for n in fabric.nodes() if n["kind"] == "ca"][-1]
    for sw in (n for n in fabric.nodes() if n["kind"] == "switch"):
        broken.set(sw["guid"], far["lid"], 1)
    with pytest.raises(SimulationError, match="no route from"):
        simulate(broken, "uniform:load=0.1", "1ms")
    assert issubclass(SimulationError, IbcloudError)


def test_parallel_runs_keep_input_order() -> None:
    t = ibcloud.route(Fabric.generate("4-ary-2-full"), "ftree").tables
    runs = [{"traffic": f"uniform:load={x}", "time": "100us", "seed": 3} for x in (0.1, 0.3, 0.1)]
    a, b, c = simulate_many(t, runs)
    pd.testing.assert_frame_equal(a.flows, c.flows)
    assert b.flows["gbps"].mean() > 2 * a.flows["gbps"].mean()
    bad = simulate_many(t, [{"traffic": "flow:src=#0,dst=#1", "time": "10us", "max_events": 5}])
    assert isinstance(bad[0], SimulationError) and "budget" in str(bad[0])


def test_cli_writes_tables_and_plots(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    args = ["sim", "4-ary-2-full", "--route", "ftree", "--traffic", "uniform:load=0.3;hotspot:hot=#0,load=1.5",
            "--time", "200us", "--out", str(out), "--json", "--pcie", "2:8", "--cc", "default"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["flows"] == 32 + 31 and data["events"] > 0
    for name in ("flows.parquet", "flow_series.parquet", "port_series.parquet", "ports.parquet",
                 "summary.json", "throughput.png", "latency.png", "xmit_wait.png"):
        assert (out / name).stat().st_size > 0, name
    flows = pd.read_parquet(out / "flows.parquet")
    assert len(flows) == 63 and flows["becns"].sum() > 0
    assert main(["sim", "4-ary-2-full", "--route", "ftree", "--traffic", "shift:load=0.2", "--time", "50us",
                 "--out", str(tmp_path / "csv"), "--out-format", "csv", "--no-plots"]) == 0
    assert (tmp_path / "csv" / "port_series.csv").read_text().startswith("time_us,slot,port,xmit_data")
    assert "throughput per flow" in capsys.readouterr().out


def test_cli_events_file_and_trace(tmp_path: Path, capsys) -> None:
    trace = tmp_path / "t.csv"
    trace.write_text("time,src,dst,bytes\n1us,#0,#5,65536\n2us,#1,#5,4096\n")
    assert main(["sim", "4-ary-2-full", "--route", "ftree", "--trace", str(trace), "--time", "100us",
                 "--json", "--flows", "5"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert sum(f["completed_msgs"] for f in data["flow_table"]) == 2
    ev = tmp_path / "ev.json"
    ev.write_text(json.dumps([{"time": "10us", "type": "set-destination-sl", "dst": "#5", "sl": 1}]))
    assert main(["sim", "4-ary-2-full", "--route", "ftree", "--trace", str(trace), "--time", "100us",
                 "--events", str(ev), "--vls", "2", "--flows", "0"]) == 0


@pytest.mark.parametrize("extra,message", [
    (["--traffic", "flow:src=nobody,dst=#1"], "unknown endpoint 'nobody'"),
    (["--traffic", "uniform:load=0.5", "--time", "10 parsecs"], "cannot parse duration"),
    (["--traffic", "uniform:load=0.5", "--buffer-bytes", "1024"], "smaller than one 2048-byte MTU"),
    (["--traffic", "uniform:lod=0.5"], "unknown field"),
    ([], "give --traffic SPEC or --trace CSV"),
])
def test_cli_bad_input_exits_2(extra, message, capsys) -> None:
    assert main(["sim", "4-ary-2-full", "--route", "ftree", *extra]) == 2
    assert message in capsys.readouterr().err


RING = """
Switch 4 "S0"
[1] "H0"[1]
[2] "S1"[3]
[3] "S2"[2]

Switch 4 "S1"
[1] "H1"[1]
[2] "S2"[3]
[3] "S0"[2]

Switch 4 "S2"
[1] "H2"[1]
[2] "S0"[3]
[3] "S1"[2]

Hca 1 "H0"
[1] "S0"[1]

Hca 1 "H1"
[1] "S1"[1]

Hca 1 "H2"
[1] "S2"[1]
"""


def test_cli_reports_a_credit_deadlock_with_exit_1(tmp_path: Path, capsys) -> None:
    fabric = Fabric.from_text(RING, "ibsim")
    fabric.assign_lids()
    tables = ibcloud.ForwardingTables(fabric)
    nodes = fabric.nodes()
    hosts = {n["description"]: n["lid"] for n in nodes if n["kind"] == "ca"}
    for sw in (n for n in nodes if n["kind"] == "switch"):
        for host, lid in hosts.items():
            # Every flow goes clockwise: a credit loop S0 -> S1 -> S2 -> S0.
            tables.set(sw["guid"], lid, 1 if host[1] == sw["description"][1] else 2)
    path = tmp_path / "ring.ibcf"
    ibcloud.routing.write_tables(tables, path)
    args = ["sim", str(path), "--traffic", "flow:src=H0,dst=H2;flow:src=H1,dst=H0;flow:src=H2,dst=H1",
            "--time", "10ms", "--buffer-bytes", "2112", "--hca-buffer-bytes", "2112", "--sink-gbps", "2"]
    assert main(args) == 1
    out = capsys.readouterr().out
    # The cycle lists input buffers: each waits for the next one's credits.
    assert out.startswith("DEADLOCK: credit deadlock at")
    assert "'S0' port 3 VL0 -> 'S1' port 3 VL0 -> 'S2' port 3 VL0" in out
