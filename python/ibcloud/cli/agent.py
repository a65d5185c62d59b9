"""``ibcloud agent``: run a CPU-capping, DRX or Sphinx policy against the real host.

``agent --policy fares|freemarket|ioshares|drx|sphinx --config AGENT.toml``
runs the same policy objects the host simulator runs, against Linux cgroups:
every period it reads each VM's InfiniBand counters (sysfs, ``rdma
statistic`` or ``perfquery``), its cgroup's CPU usage and the latencies its
application reported on the agent's Unix socket (``VM LATENCY_US`` lines),
steps the policy and writes the CPU quotas it asks for (cgroup v1
``cpu.cfs_quota_us`` or v2 ``cpu.max``). ``--dry-run`` only logs them.
DRX's hardware policies and Sphinx push QoS / congestion-control settings
to a running OpenSM (``[opensm]``: its opensm.conf is rewritten, then
SIGHUP; the original file comes back when the agent stops).

The original limits are saved to the state file before the first write and
restored when the agent stops (SIGTERM, Ctrl-C, ``--steps``, the end of a
replay feed), when it fails (a sensor disappears, a write is refused: exit
1), and — through a guardian process holding a pipe to the agent — when it
is killed. ``--restore`` puts back what a crashed agent left. See
docs/agent.md.

>>> from ibcloud.cli.main import main
>>> main(["agent", "--policy", "freemarket", "--config", "/nonexistent/AGENT.toml"])  # doctest: +ELLIPSIS
2
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from typing import Any, Callable

from ibcloud.cli.main import ExitStatus
from ibcloud.safeio import dumps_json

__all__ = ["register", "guardian_command"]

POLICIES = ("fares", "freemarket", "ioshares", "drx", "sphinx")


def guardian_command() -> "list[str]":
    """The guardian's command line; the agent appends the state file and its
    PID. It is this module run as a script.

    >>> guardian_command()[1:]
    ['-m', 'ibcloud.cli.agent']
    """
    return [sys.executable, "-m", "ibcloud.cli.agent"]


class _Terminated(Exception):
    """Raised by the SIGTERM handler inside the agent's signal check."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated("SIGTERM")


def _print_summary(s: "dict[str, Any]") -> None:
    how = {"stopped": f"stopped by {s.get('signal') or 'request'}", "steps": "step limit reached",
           "replay-end": "replay feed ended"}.get(s["ended"], s["ended"])
    mode = " (dry run: nothing written)" if s["dry_run"] else ""
    print(f"agent: policy {s['policy']}, cgroup {s['cgroup_version']}: {s['steps']} steps, "
          f"{s['changes']} cap changes{mode}; {how}")
    if s.get("recovered"):
        print(f"recovered a crashed run's state file: restored {', '.join(s['recovered']['restored'])}")
    if s.get("restored"):
        print(f"original limits restored: {', '.join(s['restored']['restored'])}")
    if s.get("caps_written_max_ms") is not None:
        print(f"caps written at most {s['caps_written_max_ms']:.2f} ms after a step's observations were complete")
    fab = s.get("fabric")
    if fab:
        timing = f", decision to sweep done: mean {fab['applied_mean_ms']:.0f} ms" if fab.get("applied_mean_ms") else ""
        print(f"OpenSM (pid {fab['pid']}): {fab['reloads']} reloads of {fab['conf']}{timing}; "
              + ("original opensm.conf restored" if fab["restored"] else "opensm.conf untouched"))
        if fab.get("note"):
            print(f"note: {fab['note']}")
    if s["malformed_reports"]:
        print(f"malformed latency reports ignored: {s['malformed_reports']}")


def _to_parquet(log: Path, out: Path) -> None:
    import pandas as pd

    from ibcloud.safeio import atomic_path

    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    with atomic_path(out) as tmp:
        pd.DataFrame(rows).to_parquet(tmp, index=False)


def _run(args: argparse.Namespace) -> int:
    from ibcloud import _native as n

    def native(call: Callable[[], str]) -> Any:
        """The call's JSON result, or the exit status of its error (input: 2, run time: 1)."""
        try:
            return json.loads(call())
        except n.AgentInputError as err:
            print(f"ibcloud: error: {err}", file=sys.stderr)
            return ExitStatus.ERROR
        except n.AgentRuntimeError as err:
            print(f"ibcloud: error: {err}", file=sys.stderr)
            return ExitStatus.FAILURE

    if args.restore:
        r = native(lambda: n.agent_restore(str(args.config)))
        if isinstance(r, ExitStatus):
            return int(r)
        print(dumps_json(r) if args.json else
              ("no state file: nothing to restore" if r is None else f"restored: {', '.join(r['restored'])}"))
        return int(ExitStatus.SUCCESS)
    if args.policy is None:
        print("ibcloud: error: agent: --policy is required (unless --restore)", file=sys.stderr)
        return int(ExitStatus.ERROR)
    log = args.log
    if args.parquet and log is None:
        log = args.parquet.with_suffix(".jsonl")
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        summary = native(lambda: n.agent_run(str(args.config), args.policy, dry_run=args.dry_run, steps=args.steps,
                                             log=None if log is None else str(log),
                                             guardian=None if args.no_guardian else guardian_command()))
    finally:
        signal.signal(signal.SIGTERM, previous)
    if isinstance(summary, ExitStatus):
        return int(summary)
    if args.parquet and log is not None and log.exists():
        _to_parquet(log, args.parquet)
    if args.json:
        print(dumps_json(summary, indent=2))
    else:
        _print_summary(summary)
    return int(ExitStatus.SUCCESS)


def register(commands: Any) -> None:
    """Adds ``agent`` to the ``ibcloud`` parser.

    >>> import argparse
    >>> p = argparse.ArgumentParser(); register(p.add_subparsers())
    >>> p.parse_args(["agent", "--policy", "freemarket", "--config", "a.toml"]).policy
    'freemarket'
    """
    a = commands.add_parser("agent", help="run a capping, DRX or Sphinx policy on this host's cgroups and OpenSM",
                            description=__doc__.split(">>>")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--policy", choices=POLICIES, help="the policy ([policy] holds its parameters; drx and sphinx as in a host scenario's [[controllers]])")
    a.add_argument("--config", type=Path, required=True, help="AGENT.toml (see docs/agent.md)")
    a.add_argument("--dry-run", action="store_true", help="only log the caps and settings it would set; no quota, opensm.conf or signal")
    a.add_argument("--steps", type=int, help="stop after this many control steps")
    a.add_argument("--log", type=Path, help="action log, one JSON line per VM per step (overrides [agent] log)")
    a.add_argument("--parquet", type=Path, help="also write the action log as Parquet here at the end")
    a.add_argument("--restore", action="store_true", help="restore the limits a crashed agent left, then exit")
    a.add_argument("--no-guardian", action="store_true",
                   help="do not start the guardian process (a SIGKILLed agent then leaves caps until --restore)")
    a.add_argument("--json", action="store_true", help="print the summary as JSON")
    a.set_defaults(run=_run)


def _guardian_main(argv: "list[str]") -> int:
    """The guardian process: ``python -m ibcloud.cli.agent STATE_FILE PID``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # outlive a terminal's Ctrl-C
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # and a group-wide SIGTERM
    from ibcloud import _native as n

    state_file, pid = argv
    try:
        r = json.loads(n.agent_guard(state_file, int(pid)))
    except n.AgentRuntimeError as err:
        print(f"ibcloud agent guardian: error: {err}", file=sys.stderr)
        return 1
    if r is not None:
        print(f"ibcloud agent guardian: agent {pid} died without restoring; restored "
              f"{', '.join(r['restored'])}" + (f"; FAILED: {r['failed']}" if r["failed"] else ""), file=sys.stderr)
        return 1 if r["failed"] else 0
    return 0


if __name__ == "__main__":
    sys.exit(_guardian_main(sys.argv[1:]))
