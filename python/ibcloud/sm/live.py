"""Live cases on ibsim with ibcloud's SM: observed SMPs beside the model's.

These are the building blocks for ``ibcloud reproduce vswitch --live`` and
``ibcloud reproduce reconfig --live`` (the reproduction modules are not
hooked up yet; see docs/sm.md). Each function starts ibsim and the SM, runs
the cases, stops both by PID and returns one row per case.

Labels: the SMP counts the SM observes are acknowledged SMPs on the wire;
the model's counts are **predictions** computed offline, before the event,
by ``ibcloud.vswitch`` (migration plans) and ``ibcloud.reconfig``
(SlimUpdate's changed blocks) from the fabric and tables the SM dumped.
The SM sends the plan it is given, so for migrations equality of the
counts is partly **construction**; the read-back of every switch (by
directed route) is what shows the fabric holds the model's tables.

>>> rows = live_migrations("4-ary-2-full", vfs=2, moves=[("vm0", "#31")], methods=["itrc"])
>>> [(r["method"], r["observed_switch_smps"] == r["predicted_switch_smps"], r["tables_match"]) for r in rows]
[('itrc', True, True)]
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any, Optional, Sequence

from ibcloud import Fabric
from ibcloud.safeio import checked_ints

__all__ = ["live_migrations", "live_link_failures"]


def _read_back_by_direct_route(sim: Any, fabric: Fabric, dr_paths: Path) -> Any:
    """Every switch's LFT read with ``ibroute -D PATH`` (directed route, so it
    does not depend on the LFTs being read), as tables for ``fabric``;
    ``dr_paths`` is the SM's dump of one ``GUID PATH`` line per switch."""
    from ibcloud import _native
    from ibcloud.tables import ForwardingTables

    lid_of = {n["guid"]: n["lid"] for n in fabric.nodes()}
    texts = []
    for line in dr_paths.read_text().splitlines():
        guid, path = line.split()
        out = sim.run_client(["ibroute", "-n", "-D", path]).stdout
        texts.append(re.sub(r"of switch DR path [^,]*?; dlid \d+; [0-9,]+ guid",
                            f"of switch Lid {lid_of[int(guid, 16)]} guid", out, count=1))
    return ForwardingTables._from_native(_native.parse_ibroute("".join(texts), fabric._native, "ibroute"))


def _rows(t: Any) -> set:
    e = t.entries()
    return set(zip(e["switch_guid"], e["lid"], e["port"]))


def model_plus_completion(back: Any, model: Any, added: int) -> bool:
    """Whether the tables read back are the model's plus exactly ``added``
    entries where the model has none (the SM's second phase after a fault,
    :mod:`ibcloud_reconfig::completion`, fills the switches the method
    leaves blank).

    >>> model_plus_completion.__name__
    'model_plus_completion'
    """
    b, m = _rows(back), _rows(model)
    held = {(g, lid) for g, lid, _ in m}
    extra = b - m
    return m <= b and len(extra) == added and all((g, lid) not in held for g, lid, _ in extra)


@checked_ints
def live_migrations(preset: str, *, vfs: int = 2, scheme: str = "prepopulated", boot_every: int = 3,
                    moves: Sequence[tuple[str, str]] = (("vm0", "#31"),),
                    methods: Sequence[str] = ("itrc", "ftree-minrc"),
                    check: str = "report", partially_static: bool = False,
                    workdir: Optional[Path] = None) -> list[dict[str, Any]]:
    """Per method, a fresh vSwitch fabric on ibsim (``vfs`` VFs per
    hypervisor, a VM on every ``boot_every``-th hypervisor) brought up by the
    SM with vswitch-ftree, then the ``moves`` migrated live one after the
    other; per move the model's SMPs beside the observed ones and whether
    every switch holds the model's tables afterwards.

    ``check`` is the SM's transition-check policy (``refuse``, ``report``,
    ``off``): the papers' one-step plans mostly fail the check (old and new
    routes of the VM's LID meet in a leaf ↔ middle-switch cycle), so the
    reproduction sends them with ``report`` and shows the verdict beside the
    offline model's; ``partially_static`` migrates with invalidation first.

    >>> live_migrations.__name__
    'live_migrations'
    """
    from ibcloud.interop import IbSim, ibnetdiscover
    from ibcloud.sm import SmDaemon
    from ibcloud.tables import read_lfts
    from ibcloud.vswitch import VirtualFabric

    work = Path(workdir or tempfile.mkdtemp(prefix="ibcloud-live-"))
    rows: list[dict[str, Any]] = []
    for method in methods:
        built = VirtualFabric.virtualize(Fabric.generate(preset), vfs=vfs, scheme=scheme)
        for h in range(0, built.num_hypervisors, boot_every):
            built.boot_vm(f"vm{h}", f"#{h}")
        net = work / f"{preset}-{method}.net"
        built.fabric().write(net)
        args = ["--sweep-interval", "3600", "--vswitch-scheme", scheme]
        with IbSim(net) as sim, SmDaemon(sim, engine="vswitch-ftree", args=args) as sm:
            before = Fabric.read(sm.dump_dir / "fabric.topo")
            model = VirtualFabric.from_fabric(before, scheme)
            model.set_tables(read_lfts(sm.dump_dir / "opensm-lfts.dump", before))
            for vm, dst in moves:
                plan = model.migrate(vm, dst, method=method, partially_static=partially_static)
                answer = sm.ctl(f"migrate {vm} {dst} {method} check={check}" + (" partial" if partially_static else ""))
                if not answer["ok"]:
                    rows.append({"preset": preset, "method": method, "vm": vm, "to": dst, "error": answer["error"],
                                 "transition": (answer.get("result") or {}).get("transition")})
                    continue
                r = answer["result"]
                seen = Fabric.from_text(ibnetdiscover(sim), "ibnetdiscover")
                back = _read_back_by_direct_route(sim, seen, sm.dump_dir / "dr-paths")
                # The VM answers at its new VF: LID-routed NodeInfo from the SM's port names the VF's GUID.
                vf = next((n for n in model.fabric().nodes() if n["lid"] == r["vm_lid"]), None)
                info = sim.run_client(["smpquery", "nodeinfo", str(r["vm_lid"])]).stdout
                reachable = vf is not None and f"{vf['guid']:x}" in info.replace("0x", "").lower()
                rows.append({
                    "preset": preset, "method": method, "vm": vm, "to": dst,
                    "predicted_switch_smps": plan["switch_smps"], "observed_switch_smps": r["observed_switch_smps"],
                    "predicted_hypervisor_smps": plan["hypervisor_smps"],
                    "observed_hypervisor_smps": r["observed_hypervisor_smps"],
                    "extra_vswitch_blocks": r["extra_blocks"], "refused_by_ibsim": r["failures"],
                    "seconds": r["seconds"], "tables_match": _rows(back) == _rows(model.tables()),
                    "vm_lid": r["vm_lid"], "vm_reachable": reachable,
                    "transition": r["transition"],
                    "model_one_step_deadlock_free": plan["transition"]["deadlock_free"],
                })
    return rows


def live_link_failures(preset: str, links: Sequence[str], *, engine: str = "ftree", reconfig: str = "slimupdate",
                       workdir: Optional[Path] = None) -> list[dict[str, Any]]:
    """Per link (``"sw-L1-0001:5"``), a fresh fabric brought up by the SM
    (``--reconfig slimupdate`` or ``subtree``), the link pulled through
    ibsim's console, and the LFT SMPs the SM sent beside the changed blocks
    predicted offline by ``ibcloud.reconfig`` (``slimupdate``, or
    ``subtree-grow`` — Paper III's sub-tree grown until verified — for
    ``subtree``), with Paper III's strict sub-tree beside for reference; then
    the SM's second phase (entries for the switches the method leaves blank)
    and whether every switch answers a LID-routed SMP from the SM's port.

    >>> live_link_failures.__name__
    'live_link_failures'
    """
    import time

    from ibcloud.interop import ibnetdiscover
    from ibcloud.reconfig import reconfigure
    from ibcloud.sm import SmDaemon
    from ibcloud.sm.console import IbSimConsole
    from ibcloud.tables import read_lfts

    work = Path(workdir or tempfile.mkdtemp(prefix="ibcloud-live-"))
    net = work / f"{preset}.net"
    Fabric.generate(preset).write(net)
    rows: list[dict[str, Any]] = []
    for link in links:
        name, port = link.rsplit(":", 1)
        args = ["--sweep-interval", "3600", "--reconfig", reconfig]
        with IbSimConsole(net) as sim, SmDaemon(sim, engine=engine, args=args) as sm:
            before = Fabric.read(sm.dump_dir / "fabric.topo")
            old = read_lfts(sm.dump_dir / "opensm-lfts.dump", before)
            model = reconfigure(before, old, "fail-link", link,
                                method="subtree-grow" if reconfig == "subtree" else reconfig)
            full = reconfigure(before, old, "fail-link", link, method="full", verify=False)
            strict = reconfigure(before, old, "fail-link", link, method="subtree")
            node = next(n for n in before.nodes() if n["description"] == name)
            sim.command(f'Unlink "{"S" if node["kind"] == "switch" else "H"}-{node["guid"]:016x}"[{port}]')
            for _ in range(600):
                status = sm.ctl("status")["result"]
                if status["heavy_sweeps"] > 1:
                    break
                time.sleep(0.05)
            last = status["last_sweep"]
            seen = Fabric.from_text(ibnetdiscover(sim), "ibnetdiscover")
            back = _read_back_by_direct_route(sim, seen, sm.dump_dir / "dr-paths")
            silent = [n["description"] for n in seen.nodes() if n["kind"] == "switch"
                      and sim.run_client(["smpquery", "nodedesc", str(n["lid"])], check=False).returncode != 0]
        completion = last.get("completion") or {}
        second = completion.get("program") or {}
        rows.append({
            "preset": preset, "link": link, "method": last["method"], "swept": status["heavy_sweeps"] > 1,
            "predicted_lft_blocks": model.changes["changed_blocks"],
            "observed_lft_smps": last["program"]["smps"].get("Set LinearForwardingTable", 0),
            "sm_predicted_lft_blocks": last.get("predicted_lft_blocks"),
            "full_reroute_lft_blocks": full.changes["changed_blocks"],
            "failures": list(last["program"].get("failures", [])),
            "tables_match": model_plus_completion(back, model.tables, completion.get("entries_added", 0)),
            "model_ok": model.ok,
            "second_phase_entries": completion.get("entries_added", 0),
            "second_phase_lft_smps": (second.get("smps") or {}).get("Set LinearForwardingTable", 0),
            "second_phase_predicted_lft_blocks": completion.get("predicted_lft_blocks", 0),
            "switches_not_answering_lid_routed": silent,
            "discovery_smps": last["discovery_smps"], "seconds": last["seconds"],
            "reconfig": reconfig,
            "subtree_levels": [(a["levels"], a["check"]["reachable"] == a["check"]["pairs"]
                                and a["check"]["credit_loop_free"] and not a["check"]["updown_violations"])
                               for a in (last.get("subtree") or {}).get("attempts", [])],
            "strict_subtree_lft_blocks": strict.changes["changed_blocks"], "strict_subtree_ok": strict.ok,
        })
    return rows
