"""Fabric bring-up side by side: ibcloud's SM vs OpenSM 3.3.23 on ibsim, one run.

For each preset and engine, each SM starts on a fresh ibsim (nothing
programmed, every port INIT) and brings the fabric up: every switch
programmed, every port ACTIVE.

- OpenSM runs as a daemon with periodic sweeps off; its time is from its
  log's first line to "SUBNET UP"; its SMP count is its own counter
  (`qp0_mads_sent`), which it reports as SMInfo ActCount, read with `sminfo`
  right after SUBNET UP.
- ibcloud's SM runs `ibcloud sm run --once`; its time is the sweep's wall
  time from start to the last acknowledgement; its SMP count is its
  counter of SMPs sent (retries included).

Both "launch to done" times (process start to fabric up, seen from here)
are printed too. The tables each SM programmed are read back with ibroute
for the first switch and compared with `ibcloud route` on the fabric.

    .venv/bin/python bench/sm_vs_opensm.py --presets ft648 --engines ftree minhop
    .venv/bin/python bench/sm_vs_opensm.py --presets ft5832 --engines ftree --json out/sm.json

Nothing here is a test: machines are noisy, so read the ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ibcloud import Fabric
from ibcloud.interop import IbSim, _stamp_seconds
from ibcloud.sa.run import OpenSmDaemon


def _opensm(net: Path, engine: str) -> dict:
    with IbSim(net, timeout=600) as sim:
        t0 = time.monotonic()
        with OpenSmDaemon(sim, config={"routing_engine": engine}, timeout=3600) as sm:
            launch_to_up = time.monotonic() - t0
            lines = sm.log.read_text(errors="replace").splitlines()
            stamps = [s for s in (_stamp_seconds(l) for l in lines) if s is not None]
            up = next(_stamp_seconds(l) for l in lines if "SUBNET UP" in l)
            out = sim.run_client(["sminfo"]).stdout
            act = int(re.search(r"activity count (\d+)", out).group(1))
            used = re.search(r"(\S+) tables configured on all switches", "\n".join(lines))
    return {"seconds": up - stamps[0], "launch_to_up": launch_to_up, "smps": act,
            "engine_used": used.group(1) if used else None}


def _ibcloud(net: Path, engine: str) -> dict:
    with IbSim(net, timeout=600) as sim:
        t0 = time.monotonic()
        done = sim.run_client([sys.executable, "-m", "ibcloud.cli.main", "sm", "run", "--once", "--engine", engine,
                               "--json"], timeout=3600, check=False)
        launch_to_up = time.monotonic() - t0
        if done.returncode not in (0, 1):
            raise RuntimeError(done.stderr[-2000:])
        s = json.loads(done.stdout)
    b = s["bring_up"]
    return {"seconds": b["seconds"], "launch_to_up": launch_to_up, "smps": b["total_smps"],
            "discovery_smps": b["discovery_smps"], "programming_smps": b["program"]["total_smps"],
            "by_kind": b["program"]["smps"], "failures": len(b["program"]["failures"]) + len(b["unreachable"]),
            "engine_used": b["engine"]}


def _act(sim: IbSim) -> int:
    out = sim.run_client(["sminfo"]).stdout
    return int(re.search(r"activity count (\d+)", out).group(1))


def _link_failure_opensm(net: Path, engine: str, leaf: tuple[int, int]) -> dict:
    from ibcloud.sm.console import IbSimConsole

    with IbSimConsole(net, timeout=600) as sim:
        with OpenSmDaemon(sim, config={"routing_engine": engine}, timeout=3600) as sm:
            ups = sm.log.read_text(errors="replace").count("SUBNET UP")
            act0 = _act(sim)
            sim.command(f'Unlink "S-{leaf[0]:016x}"[{leaf[1]}]')
            deadline = time.monotonic() + 600
            while sm.log.read_text(errors="replace").count("SUBNET UP") <= ups and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(1.0)
            act1 = _act(sim)
            lines = sm.log.read_text(errors="replace").splitlines()
            ups_at = [_stamp_seconds(l) for l in lines if "SUBNET UP" in l]
            trap = next((_stamp_seconds(l) for l in lines if "Trap" in l or "trap" in l), None)
    # One SMInfo answer per sminfo query is in the counter too.
    return {"smps": act1 - act0 - 1, "seconds": (ups_at[-1] - trap) if trap is not None else None}


def _link_failure_ibcloud(net: Path, engine: str, leaf: tuple[int, int], reconfig: str) -> dict:
    from ibcloud.sm import SmDaemon
    from ibcloud.sm.console import IbSimConsole

    with IbSimConsole(net, timeout=600) as sim:
        with SmDaemon(sim, engine=engine, args=["--sweep-interval", "600", "--reconfig", reconfig],
                      timeout=3600) as sm:
            sim.command(f'Unlink "S-{leaf[0]:016x}"[{leaf[1]}]')
            deadline = time.monotonic() + 600
            while sm.ctl("status")["result"]["heavy_sweeps"] < 2 and time.monotonic() < deadline:
                time.sleep(0.1)
            last = sm.ctl("status")["result"]["last_sweep"]
    return {"method": last["method"], "routing_error": last["routing_error"], "smps": last["total_smps"], "discovery_smps": last["discovery_smps"],
            "programming_smps": last["program"]["total_smps"], "lft_smps":
            last["program"]["smps"].get("Set LinearForwardingTable", 0),
            "predicted_lft_blocks": last["predicted_lft_blocks"], "seconds": last["seconds"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--presets", nargs="+", default=["ft648"])
    ap.add_argument("--engines", nargs="+", default=["ftree", "minhop"])
    ap.add_argument("--link-failure", action="store_true",
                    help="also: one link failure (the first up-link of sw-L1-0001) handled by OpenSM vs ibcloud (full, slimupdate)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--workdir", type=Path, default=Path("out/bench-sm"))
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    console = Console(width=160)
    rows = []
    for preset in args.presets:
        net = args.workdir / f"{preset}.net"
        Fabric.generate(preset).write(net)
        for engine in args.engines:
            console.print(f"[bold]{preset} {engine}[/]: OpenSM …")
            o = _opensm(net, engine)
            console.print(f"[bold]{preset} {engine}[/]: ibcloud sm …")
            i = _ibcloud(net, engine)
            row = {"preset": preset, "engine": engine, "opensm": o, "ibcloud": i}
            if args.link_failure:
                fabric = Fabric.read(net)
                nodes = {n["id"]: n for n in fabric.nodes()}
                leaf_node = next(n for n in nodes.values() if n["description"] == "sw-L1-0001")
                # The leaf's first up-link (a switch-to-switch link), so no CA is cut off.
                port = min(l["port_a"] if l["node_a"] == leaf_node["id"] else l["port_b"] for l in fabric.links()
                           if leaf_node["id"] in (l["node_a"], l["node_b"])
                           and nodes[l["node_a"]]["kind"] == nodes[l["node_b"]]["kind"] == "switch")
                leaf = (leaf_node["guid"], port)
                console.print(f"[bold]{preset} {engine}[/]: link failure, OpenSM …")
                row["failure_opensm"] = _link_failure_opensm(net, engine, leaf)
                for method in ("full", "slimupdate"):
                    console.print(f"[bold]{preset} {engine}[/]: link failure, ibcloud sm --reconfig {method} …")
                    row[f"failure_ibcloud_{method}"] = _link_failure_ibcloud(net, engine, leaf, method)
            rows.append(row)
    t = Table(title="bring-up on ibsim: ibcloud sm vs OpenSM 3.3.23 (one run each, fresh ibsim)")
    for c in ("preset", "engine", "OpenSM s", "ibcloud s", "ratio", "OpenSM SMPs", "ibcloud SMPs", "SMP ratio",
              "launch→up OpenSM / ibcloud"):
        t.add_column(c)
    for r in rows:
        o, i = r["opensm"], r["ibcloud"]
        t.add_row(r["preset"], r["engine"], f"{o['seconds']:.3f}", f"{i['seconds']:.3f}",
                  f"{i['seconds'] / o['seconds']:.2f}", str(o["smps"]), str(i["smps"]),
                  f"{i['smps'] / o['smps']:.2f}", f"{o['launch_to_up']:.2f} / {i['launch_to_up']:.2f}")
    console.print(t)
    if args.link_failure:
        t = Table(title="one link failure (first up-link of sw-L1-0001): SMPs and seconds from the trap to the fabric re-programmed")
        for c in ("preset", "engine", "OpenSM SMPs", "OpenSM s", "ibcloud full SMPs (LFT)", "ibcloud full s",
                  "ibcloud slimupdate SMPs (LFT; predicted)", "ibcloud slimupdate s"):
            t.add_column(c)
        for r in rows:
            o, f, sl = r["failure_opensm"], r["failure_ibcloud_full"], r["failure_ibcloud_slimupdate"]
            t.add_row(r["preset"], r["engine"], str(o["smps"]), f"{o['seconds']:.3f}" if o["seconds"] else "?",
                      f"{f['smps']} ({f['lft_smps']})" + (" engine refused: old tables kept" if f["routing_error"] else ""),
                      f"{f['seconds']:.3f}",
                      f"{sl['smps']} ({sl['lft_smps']}; {sl['predicted_lft_blocks']})", f"{sl['seconds']:.3f}")
        console.print(t)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
