"""Measures ``ibcloud agent``'s own CPU use on this host (issue 21,
Performance: under 1 % of a core at a 1 s period).

``.venv/bin/python bench/agent_overhead.py [--seconds 60] [--vms 2]`` (root, cgroup
v1 or v2 with the cpu controller) creates ``--vms`` empty cgroups under
``/sys/fs/cgroup/cpu/ibcloud-overhead-<pid>/`` (v1) with an IB counters
tree each (a copy of the sysfs fixture, read every period like a real
port), runs ``ibcloud agent --policy freemarket`` at a 1 s interval with
the latency socket open, and reads the agent's utime+stime from
``/proc/<pid>/stat`` after a 5 s warm-up (Python start-up excluded) and at
the end. Prints the CPU per cent of one core and removes what it made.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CPU = Path("/sys/fs/cgroup/cpu")
ACCT = Path("/sys/fs/cgroup/cpuacct")


def _ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)


def measure(seconds: float = 60.0, vms: int = 2, warmup: float = 5.0) -> "dict[str, float]":
    """Runs the agent for ``warmup + seconds`` and returns its CPU use."""
    name = f"ibcloud-overhead-{os.getpid()}"
    tmp = Path(tempfile.mkdtemp(prefix="ibcloud-overhead-"))
    made: "list[Path]" = []
    agent = None
    try:
        for root in (CPU, ACCT):
            for sub in [""] + [f"/vm{i}" for i in range(vms)]:
                (root / (name + sub)).mkdir()
                made.append(root / (name + sub))
        lines = ["[agent]", 'state-file = "state.json"', 'socket = "lat.sock"', "", ]
        for i in range(vms):
            counters = tmp / f"ib{i}" / "counters"
            counters.mkdir(parents=True)
            for f in ("port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets"):
                (counters / f).write_text("0\n")
            lines += ["[[vm]]", f'name = "vm{i}"', f'cgroup = "{name}/vm{i}"', f'counters = "{counters}"',
                      "latency = true", ""]
        lines += ["[policy]", 'interval = "1s"', 'epoch = "60s"']
        cfg = tmp / "AGENT.toml"
        cfg.write_text("\n".join(lines) + "\n")
        agent = subprocess.Popen([sys.executable, "-m", "ibcloud.cli.main", "agent", "--policy", "freemarket",
                                  "--config", str(cfg), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        time.sleep(warmup)
        hz = os.sysconf("SC_CLK_TCK")
        t0, c0 = time.monotonic(), _ticks(agent.pid)
        time.sleep(seconds)
        t1, c1 = time.monotonic(), _ticks(agent.pid)
        agent.terminate()
        out, err = agent.communicate(timeout=30)
        if agent.returncode != 0:
            raise RuntimeError(f"agent failed: {err}")
        summary = json.loads(out)
        return {"seconds": t1 - t0, "cpu_seconds": (c1 - c0) / hz,
                "cpu_pct_of_core": 100.0 * (c1 - c0) / hz / (t1 - t0), "steps": summary["steps"], "vms": vms}
    finally:
        if agent is not None and agent.poll() is None:
            agent.kill()
            agent.wait()
        for d in reversed(made):
            d.rmdir()
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: "list[str] | None" = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--vms", type=int, default=2)
    a = p.parse_args(argv)
    r = measure(a.seconds, a.vms)
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
