"""``ibcloud sm``: ibcloud's own subnet manager over libibumad.

``sm run [--engine E] [--once] [--socket S] [--smp-log F] …`` runs the SM on
the local port: a real HCA, or ibsim's when started with the umad2sim shim
preloaded (``LD_PRELOAD`` and ``IBSIM_SOCKNAME``, as for OpenSM). It
discovers the subnet, assigns LIDs (``--guid2lid`` cache, ``--lmc``), routes
with the engine, programs the switches and brings every port to ACTIVE;
with ``--once`` it stops there (like ``opensm -o``), otherwise it keeps
sweeping every ``--sweep-interval`` seconds and serves the control socket.
``--smp-log`` writes one JSON line per SMP sent (kind, target route,
attribute modifier — the LFT block —, attempt). The summary (SMPs by kind,
seconds from the start of the sweep to the last acknowledgement) is printed
(``--json``) and written to ``--summary``.

``sm ctl SOCKET status|counters|sweep|light|stop`` talks to a running SM;
``sm ctl SOCKET migrate VM HYPERVISOR [itrc|ftree-minrc|full] [partial] [check=refuse|report|off]``
migrates a VM live on a vSwitch fabric (from ``ibcloud vswitch build``):
the planned SMPs are sent, counted and reported beside the model's.

>>> from ibcloud.cli.main import main
>>> main(["sm", "run", "--engine", "nonsense", "--once"])  # doctest: +ELLIPSIS
2
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ibcloud.cli.main import ExitStatus
from ibcloud.safeio import dumps_json

__all__ = ["register"]


def _print_summary(s: dict[str, Any]) -> None:
    b = s["bring_up"]
    if b.get("standby_because"):
        print(f"STANDBY: {b['standby_because']}; nothing programmed")
    print(f"subnet: {b['switches']} switches, {b['cas']} CAs, {b['links']} links; SM LID {b['sm_lid']}, "
          f"max LID {b['max_lid']}")
    if b["routing_error"]:
        print(f"routing failed ({b['routing_error']}); tables left as they were")
    else:
        print(f"engine {b['engine']}: routed in {b['routing_seconds']:.3f} s")
    p = b["program"]
    print(f"bring-up: {b['total_smps']} SMPs ({b['discovery_smps']} discovery, {p['total_smps']} programming) "
          f"in {b['seconds']:.3f} s; {len(p['lft_blocks_sent'])} LFT blocks sent, {p['lft_blocks_skipped']} "
          f"already held; {p['ports_activated']} ports activated")
    for kind, n in sorted(p["smps"].items()):
        print(f"  {kind:<28} {n}")
    for what in b["unreachable"]:
        print(f"unreachable: {what[0]}: {what[1]}")
    for f in p["failures"]:
        print(f"failed: {f}")
    for w in b.get("warnings", []):
        print(f"warning: {w}")
    q = b.get("qos")
    if q:
        print(f"qos: {q['sl2vl_sets']} SL2VL tables and {q['vlarb_sets']} VLArb blocks set, {q['verified']} read "
              f"back equal ({q['total_smps']} SMPs)")
        for f in q["failures"]:
            print(f"qos failed: {f}")
    c = s["counters"]
    print(f"counters: {c['total_sent']} sent, {c['retries']} retries, {c['timeouts']} timeouts, "
          f"{c['status_errors']} status errors, {c['malformed']} malformed, {c['traps']} traps; "
          f"stopped by {s['stopped_by']}")


def _run(args: argparse.Namespace) -> int:
    from ibcloud.sm import SmError, run

    try:
        summary = run(args.engine, once=args.once, lmc=args.lmc, guid2lid=args.guid2lid, dump_dir=args.dump_dir,
                      smp_log=args.smp_log, socket=args.socket, sweep_interval=args.sweep_interval,
                      timeout_ms=args.timeout_ms, retries=args.retries, window=args.window,
                      read_lfts=args.read_lfts, ca=args.ca, port=args.port, priority=args.priority,
                      sa=not args.no_sa, sa_caching=args.sa_caching, reconfig=args.reconfig,
                      vswitch_scheme=args.vswitch_scheme, rediscovery=args.rediscovery, qos=args.qos)
    except SmError as err:
        print(f"ibcloud: error: {err}", file=sys.stderr)
        return int(ExitStatus.ERROR)
    if args.summary:
        from ibcloud.safeio import atomic_write

        atomic_write(args.summary, dumps_json(summary, indent=2) + "\n")
    if args.json:
        print(dumps_json(summary, indent=2))
    else:
        _print_summary(summary)
    b = summary["bring_up"]
    bad = (b["routing_error"] or b["unreachable"] or b["program"]["failures"] or b.get("standby_because")
           or (b.get("qos") or {}).get("failures"))
    return int(ExitStatus.FAILURE if bad else ExitStatus.SUCCESS)


def _ctl_text(answer: Any, prefix: str = "") -> str:
    """The SM's reply as ``key: value`` lines (nested keys dotted).

    >>> print(_ctl_text({"ok": True, "counters": {"sent": 3, "retries": 0}, "vms": ["vm0"]}))
    ok: true
    counters.sent: 3
    counters.retries: 0
    vms: ["vm0"]
    """
    if not isinstance(answer, dict):
        return f"{prefix or 'reply'}: {json.dumps(answer)}"
    lines = []
    for key, value in answer.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            lines.append(_ctl_text(value, name))
        else:
            lines.append(f"{name}: {json.dumps(value) if not isinstance(value, str) else value}")
    return "\n".join(lines)


def _ctl(args: argparse.Namespace) -> int:
    from ibcloud.sm import ctl

    answer = ctl(args.socket, " ".join(args.cmd))
    print(dumps_json(answer, indent=2) if args.json else _ctl_text(answer))
    return int(ExitStatus.SUCCESS if answer.get("ok") else ExitStatus.FAILURE)


def register(commands: Any) -> None:
    """Adds ``sm`` to the ``ibcloud`` parser.

    >>> import argparse
    >>> p = argparse.ArgumentParser(); register(p.add_subparsers())
    >>> p.parse_args(["sm", "run", "--once"]).engine
    'minhop'
    """
    sm = commands.add_parser("sm", help="ibcloud's own subnet manager (libibumad; ibsim via umad2sim)",
                             description=__doc__.split(">>>")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = sm.add_subparsers(dest="sm_command", metavar="SUBCOMMAND", required=True)
    r = sub.add_parser("run", help="run the SM on the local port")
    r.add_argument("--engine", default="minhop", help="routing engine (ibcloud route --list-engines); default minhop")
    r.add_argument("--once", action="store_true", help="stop after the bring-up (like opensm -o)")
    r.add_argument("--lmc", type=int, default=0, choices=range(8), metavar="0..7", help="LMC of CA ports")
    r.add_argument("--guid2lid", type=Path, help="guid2lid cache: read if present, written after every heavy sweep")
    r.add_argument("--dump-dir", type=Path, help="write fabric.topo, opensm-lfts.dump and guid2lid here")
    r.add_argument("--smp-log", type=Path, help="one JSON line per SMP sent")
    r.add_argument("--socket", type=Path, help="control socket (see ibcloud sm ctl)")
    r.add_argument("--summary", type=Path, help="write the JSON summary here")
    r.add_argument("--sweep-interval", type=float, default=10.0, metavar="S", help="seconds between light sweeps")
    r.add_argument("--timeout-ms", type=int, default=200, help="per-SMP timeout (ms), default 200")
    r.add_argument("--retries", type=int, default=3, help="resends after a timeout, default 3")
    r.add_argument("--window", type=int, default=4, help="most SMPs outstanding, default 4 (OpenSM's max_wire_smps)")
    r.add_argument("--read-lfts", action="store_true", help="read LFT blocks the SM has not seen before sending")
    r.add_argument("--ca", help="CA name (default: the first)")
    r.add_argument("--port", type=int, default=0, help="port number (default: the first active)")
    r.add_argument("--priority", type=int, default=0, choices=range(16), metavar="0..15", help="SM priority")
    r.add_argument("--reconfig", choices=["full", "slimupdate", "subtree"], default="full",
                   help="how a heavy sweep after a change re-routes: the engine again, Paper IV's SlimUpdate, or "
                        "Paper III's sub-tree around the changed links, grown until ibcloud's verification passes")
    r.add_argument("--vswitch-scheme", choices=["prepopulated", "dynamic"], default="prepopulated",
                   help="LID scheme of a vSwitch fabric, for live migration (ctl migrate)")
    r.add_argument("--rediscovery", choices=["targeted", "full"], default="targeted",
                   help="how a heavy sweep after the first finds the subnet: re-read only the switches that flag "
                        "PortStateChange or sent a trap (falls back to the full walk when that cannot explain what it "
                        "sees), or walk the whole subnet again as OpenSM does")
    r.add_argument("--no-sa", action="store_true", help="do not answer SubnAdmGet(PathRecord)")
    r.add_argument("--sa-caching", action="store_true", help="set Paper I's caching flag in the SA's PathRecords")
    r.add_argument("--qos", metavar="POLICY_OR_FILE",
                   help="program SL2VL and VL arbitration of a QoS policy on every port after each heavy sweep "
                        "(stmax, stmaxq, drxmax, drxmaxq or a TOML file; docs/qos.md)")
    r.add_argument("--json", action="store_true", help="print the summary as JSON")
    r.set_defaults(run=_run)
    c = sub.add_parser("ctl", help="send a command to a running SM")
    c.add_argument("socket", type=Path, help="the SM's control socket")
    c.add_argument("cmd", nargs="+", metavar="COMMAND",
                   help="status | counters | sweep | light | stop | migrate VM HYPERVISOR [itrc|ftree-minrc|full] "
                        "[partial] [check=refuse|report|off] (transition deadlock check; default refuse)")
    c.add_argument("--json", action="store_true", help="print the SM's reply as JSON (default: key: value lines)")
    c.set_defaults(run=_ctl)
