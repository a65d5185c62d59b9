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
are printed too.

`--link-failure`: the first up-link of sw-L1-0001 pulled through ibsim's
console; OpenSM's re-sweep against ibcloud's SM with `--reconfig full`,
`slimupdate` and `subtree` (SMPs, LFT SMPs beside the model's prediction).

`--migration`: one VM migration on a virtualized fabric (2 VFs per
hypervisor, prepopulated LIDs, a VM on every third hypervisor). OpenSM runs
the `file` engine; the tables after the migration (a fresh vswitch-ftree
routing of the new placement, ibcloud.vswitch's `full` method) are written
to its LFT file and OpenSM is sent SIGHUP (by PID), which starts a heavy
sweep that loads and programs them; its SMPs are its ActCount difference,
its time from the first log line after the signal to SUBNET UP, and its
tables are read back with ibroute. OpenSM cannot move a LID between ports,
so the LID move is not in its count. ibcloud's SM migrates the VM with
ItRC and FTreeMinRC (`ctl migrate … check=report`), observed SMPs beside
the plan's.

    .venv/bin/python bench/sm_vs_opensm.py --presets ft648 --engines ftree minhop --link-failure --migration
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
    return {"method": last["method"], "routing_error": last["routing_error"], "smps": last["total_smps"],
            "discovery": last["discovery"], "discovery_smps": last["discovery_smps"],
            "programming_smps": last["program"]["total_smps"], "lft_smps":
            last["program"]["smps"].get("Set LinearForwardingTable", 0),
            "predicted_lft_blocks": last["predicted_lft_blocks"], "seconds": last["seconds"],
            "second_phase_lft_smps": ((last.get("completion") or {}).get("program") or {}).get("smps", {}).get(
                "Set LinearForwardingTable", 0),
            "second_phase_predicted": (last.get("completion") or {}).get("predicted_lft_blocks", 0)}


def _migration_opensm(net: Path, vm: str, dst: str) -> dict:
    import os
    import signal

    from ibcloud import route
    from ibcloud.interop import ibroute_tables
    from ibcloud.tables import read_lfts
    from ibcloud.vswitch import VirtualFabric

    lfts = net.parent / f"{net.stem}-file-engine.dump"
    lfts.unlink(missing_ok=True)
    with IbSim(net, timeout=600) as sim:
        # First sweep: no file yet, OpenSM falls back to minhop (its default
        # without no_fallback); the fabric it reports has its LIDs.
        with OpenSmDaemon(sim, config={"routing_engine": "file", "lfts_file": str(lfts)}, timeout=3600) as sm:
            assert sm.proc is not None
            fabric = Fabric.read(sm.subnet_lst)

            def resweep(tables: object) -> dict:
                tables.write_opensm(lfts)  # type: ignore[attr-defined]
                # The file engine maps every LID through the port GUID of the
                # line's comment to the LID OpenSM gave that port (it cannot
                # move a LID): without the comments it programs them as written.
                lfts.write_text(re.sub(r" # .*$", "", lfts.read_text(), flags=re.M))
                before = sm.log.read_text(errors="replace").splitlines()
                ups = sum("SUBNET UP" in l for l in before)
                act0 = _act(sim)
                os.kill(sm.proc.pid, signal.SIGHUP)  # OpenSM: a HUP starts a heavy sweep
                deadline = time.monotonic() + 600
                while time.monotonic() < deadline:
                    lines = sm.log.read_text(errors="replace").splitlines()
                    if sum("SUBNET UP" in l for l in lines) > ups:
                        break
                    time.sleep(0.1)
                time.sleep(1.0)
                act1 = _act(sim)
                lines = sm.log.read_text(errors="replace").splitlines()
                new = [_stamp_seconds(l) for l in lines[len(before):]]
                up = [_stamp_seconds(l) for l in lines[len(before):] if "SUBNET UP" in l]
                first = next((x for x in new if x is not None), None)
                used = [l for l in lines[len(before):] if "tables configured on all switches" in l]
                return {"smps": act1 - act0 - 1, "seconds": (up[-1] - first) if up and first is not None else None,
                        "file_engine": any("'file'" in l or " file " in l for l in used)}

            initial = route(fabric, "vswitch-ftree").tables
            load = resweep(initial)
            model = VirtualFabric.from_fabric(fabric, "prepopulated")
            model.set_tables(initial)
            plan = model.migrate(vm, dst, method="full")
            moved = resweep(model.tables())
            held = ibroute_tables(sim, fabric)
    rows = lambda t: set(zip(*(t.entries()[k] for k in ("switch_guid", "lid", "port"))))  # noqa: E731
    return {"load": load, "migration": moved, "plan_switch_smps": plan["switch_smps"],
            "tables_match": rows(held) == rows(model.tables()), "lids": "OpenSM does not move the VM's LID"}


def _migration_ibcloud(net: Path, vm: str, dst: str, method: str) -> dict:
    from ibcloud.sm import SmDaemon

    with IbSim(net, timeout=600) as sim:
        with SmDaemon(sim, engine="vswitch-ftree", args=["--sweep-interval", "600"], timeout=3600) as sm:
            a = sm.ctl(f"migrate {vm} {dst} {method} check=report")
    if not a["ok"]:
        raise RuntimeError(a["error"])
    r = a["result"]
    return {"method": method, "smps": r["observed_switch_smps"] + r["observed_hypervisor_smps"] + r["extra_blocks"],
            "switch_smps": r["observed_switch_smps"], "predicted_switch_smps": r["predicted_switch_smps"],
            "hypervisor_smps": r["observed_hypervisor_smps"], "extra_vswitch_blocks": r["extra_blocks"],
            "seconds": r["seconds"], "transition_deadlock_free": r["transition"]["deadlock_free"],
            "transition_seconds": r["transition"]["seconds"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--presets", nargs="+", default=["ft648"])
    ap.add_argument("--engines", nargs="*", default=["ftree", "minhop"], help="bring-up engines (none: skip bring-up)")
    ap.add_argument("--link-failure", action="store_true",
                    help="also: one link failure (the first up-link of sw-L1-0001) handled by OpenSM vs ibcloud (full, slimupdate)")
    ap.add_argument("--migration", nargs="?", const="vm0:#31", metavar="VM:HYP",
                    help="also: one VM migration (default vm0:#31) on the virtualized preset: OpenSM re-sweeping "
                         "from an updated file-engine table vs ibcloud sm ItRC and FTreeMinRC")
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
                for method in ("full", "slimupdate", "subtree"):
                    console.print(f"[bold]{preset} {engine}[/]: link failure, ibcloud sm --reconfig {method} …")
                    row[f"failure_ibcloud_{method}"] = _link_failure_ibcloud(net, engine, leaf, method)
            rows.append(row)
    migrations = []
    if args.migration:
        from ibcloud.vswitch import VirtualFabric

        vm, _, dst = args.migration.partition(":")
        for preset in args.presets:
            built = VirtualFabric.virtualize(Fabric.generate(preset), vfs=2, scheme="prepopulated")
            for h in range(0, built.num_hypervisors, 3):
                built.boot_vm(f"vm{h}", f"#{h}")
            vnet = args.workdir / f"{preset}-virtual.net"
            built.fabric().write(vnet)
            console.print(f"[bold]{preset} virtualized[/]: migration {vm} → {dst}, OpenSM file engine …")
            m = {"preset": preset, "vm": vm, "to": dst, "opensm": _migration_opensm(vnet, vm, dst)}
            for method in ("itrc", "ftree-minrc"):
                console.print(f"[bold]{preset} virtualized[/]: migration {vm} → {dst}, ibcloud sm {method} …")
                m[method] = _migration_ibcloud(vnet, vm, dst, method)
            migrations.append(m)
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
                  "ibcloud slimupdate SMPs (LFT + 2nd phase; predicted)", "ibcloud slimupdate s",
                  "ibcloud subtree SMPs (LFT + 2nd phase; predicted)", "ibcloud subtree s"):
            t.add_column(c)
        for r in rows:
            o, f = r["failure_opensm"], r["failure_ibcloud_full"]
            cells = []
            for m in ("slimupdate", "subtree"):
                x = r[f"failure_ibcloud_{m}"]
                cells += [f"{x['smps']} ({x['lft_smps']} + {x['second_phase_lft_smps']}; "
                          f"{x['predicted_lft_blocks']} + {x['second_phase_predicted']})"
                          + (" engine refused: old tables kept" if x["routing_error"] else ""), f"{x['seconds']:.3f}"]
            t.add_row(r["preset"], r["engine"], str(o["smps"]), f"{o['seconds']:.3f}" if o["seconds"] else "?",
                      f"{f['smps']} ({f['lft_smps']})" + (" engine refused: old tables kept" if f["routing_error"] else ""),
                      f"{f['seconds']:.3f}", *cells)
        console.print(t)
    if migrations:
        t = Table(title="one VM migration: OpenSM heavy sweep from an updated file-engine table vs ibcloud sm "
                        "(SMPs; seconds from the decision to the last answer)")
        for c in ("preset", "VM → HYP", "OpenSM SMPs", "OpenSM s", "OpenSM tables = model", "ItRC SMPs (switch; plan)",
                  "ItRC s", "FTreeMinRC SMPs (switch; plan)", "FTreeMinRC s"):
            t.add_column(c)
        for m in migrations:
            o = m["opensm"]["migration"]
            cells = []
            for k in ("itrc", "ftree-minrc"):
                x = m[k]
                cells += [f"{x['smps']} ({x['switch_smps']}; {x['predicted_switch_smps']})",
                          f"{x['seconds']:.3f} ({x['transition_seconds']:.3f} check)"]
            t.add_row(m["preset"], f"{m['vm']} → {m['to']}", str(o["smps"]),
                      f"{o['seconds']:.3f}" if o["seconds"] is not None else "?",
                      str(m["opensm"]["tables_match"]), *cells)
        console.print(t)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"bring_up": rows, "migrations": migrations}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
