"""Packet-level simulator speed: equal-size comparison with BookSim2, and scaling.

    .venv/bin/python bench/netsim_speed.py [--booksim /path/to/booksim] [--repeat 2] [--sizes 64 512] [--loads 0.3 0.7] [--json]
    .venv/bin/python bench/netsim_speed.py --scale [--scale-time 50us]

**Beside BookSim2** (``--booksim``, a binary built outside the project from
github.com/booksim/booksim2 ``src/``). Both simulators get the same work:

* topology: ``ft324`` (ftree routing) against BookSim's ``fattree`` k=18 n=2
  (324 endpoints, 36 switches of 36 ports, two levels), and our ``8-ary-3``
  against ``fattree`` k=8 n=3 (512 endpoints, 192 switches, three levels);
* traffic: uniform random destinations, Poisson arrivals (BookSim: Bernoulli),
  offered load 0.3 and 0.7 of the link rate;
* packets of 64 B, 512 B and 2 KB: BookSim's flit is 64 bytes (our credit
  unit), so its packets are 1, 8 and 32 flits; ours carry no extra wire
  overhead (``wire_overhead_bytes=0``) so a packet is exactly 1, 8 or 32 units;
* buffers: 32 KB (512 units) per input port on both sides: ours one VL,
  BookSim four VCs of 128 flits (with one VC BookSim's 1-flit packets
  saturate at 0.24 of the link, so it could not carry the offered 0.3).

The work measure is flit-hops: flits (64-byte units) × links crossed, the HCA
links included on both sides (BookSim's ``Hops average`` counts routers, so
its links per packet are hops + 1). BookSim's figure is accepted flit rate ×
endpoints × simulated cycles × (hops + 1). Speed is flit-hops per CPU second
of the process (ours: the Python process around ``simulate``, set-up
included; BookSim: the child's CPU time), so the ratio does not depend on
how busy the shared machine is. Each case runs ours and BookSim alternately
``--repeat`` times and keeps the best of each; the cases are interleaved in
one invocation.

**Scaling** (``--scale``): uniform 0.3 load with 64 B packets on ft324, ft648,
ft5832 and ft11664 (ftree routing), each in its own process: set-up seconds
(route check included), events per packet, µs per event and peak memory.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

BOOKSIM_CONFIG = """topology = fattree;
k = {k};
n = {n};
routing_function = nca;
num_vcs = 4;
vc_buf_size = 128;
traffic = uniform;
packet_size = {flits};
injection_rate_uses_flits = 1;
injection_rate = {load};
sim_type = throughput;
warmup_periods = 1;
sample_period = {cycles};
max_samples = 1;
sim_count = 1;
"""

#: (our preset, BookSim k, BookSim n, endpoints)
TOPOLOGIES: List[Tuple[str, int, int, int]] = [("ft324", 18, 2, 324), ("8-ary-3", 8, 3, 512)]
SIZES = (64, 512, 2048)
LOADS = (0.3, 0.7)
#: BookSim flit = our credit unit.
FLIT_BYTES = 64
#: Simulated time of our runs per packet size (about 1e5–1e6 packets on ft324).
OUR_TIME = {64: "100us", 512: "400us", 2048: "1ms"}


def cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_booksim(binary: str, k: int, n: int, nodes: int, flits: int, load: float, cycles: int) -> Dict[str, Any]:
    """One BookSim2 run; flit-hops (links, HCA links included) per CPU second."""
    with tempfile.TemporaryDirectory(prefix="netsim-booksim-") as d:
        cfg = os.path.join(d, "fattree.cfg")
        with open(cfg, "w") as fh:
            fh.write(BOOKSIM_CONFIG.format(k=k, n=n, flits=flits, load=load, cycles=cycles))
        c0 = cpu_children()
        t0 = time.perf_counter()
        out = subprocess.run([binary, cfg], capture_output=True, text=True, cwd=d, check=False).stdout
        wall = time.perf_counter() - t0
        cpu = cpu_children() - c0

    def last(pattern: str) -> Optional[float]:
        m = re.findall(pattern, out)
        return float(m[-1]) if m else None

    accepted = last(r"Accepted flit rate average\s*=\s*([\d.eE+-]+)")
    hops = last(r"Hops average = ([\d.eE+-]+)")
    cycles_run = last(r"Time taken is (\d+) cycles")
    if accepted is None or hops is None or cycles_run is None:
        raise RuntimeError(f"BookSim printed no statistics:\n{out[-2000:]}")
    flit_hops = accepted * nodes * cycles_run * (hops + 1.0)
    return {"cpu": cpu, "wall": wall, "cycles": cycles_run, "accepted": accepted, "hops": hops,
            "flit_hops": flit_hops, "flit_hops_per_s": flit_hops / cpu}


def run_ours(tables: Any, size: int, load: float, end: int) -> Dict[str, Any]:
    from ibcloud.sim import simulate

    c0 = time.process_time()
    r = simulate(tables, f"uniform:load={load},size={size},poisson=1", end, record_ports=False,
                 mtu=max(size, 256), wire_overhead_bytes=0)
    cpu = time.process_time() - c0
    packets = int(r.flows["completed_msgs"].sum())
    return {"cpu": cpu, "wall": r.wall_seconds, "events": r.events, "flit_hops": r.unit_hops,
            "packet_hops": r.packet_hops, "packets": packets,
            "events_per_packet": r.events / max(packets, 1), "us_per_event": r.wall_seconds / max(r.events, 1) * 1e6,
            "flit_hops_per_s": r.unit_hops / cpu}


def compare(args: argparse.Namespace) -> List[Dict[str, Any]]:
    from ibcloud import Fabric, route
    from ibcloud.sim import parse_duration

    rows = []
    for preset, k, n, nodes in TOPOLOGIES:
        tables = route(Fabric.generate(preset), "ftree").tables
        for size in args.sizes:
            for load in args.loads:
                flits = size // FLIT_BYTES
                end = parse_duration(args.time or OUR_TIME.get(size, "400us"))
                ours: Optional[Dict[str, Any]] = None
                bs: Optional[Dict[str, Any]] = None
                for _ in range(args.repeat):
                    o = run_ours(tables, size, load, end)
                    if ours is None or o["cpu"] < ours["cpu"]:
                        ours = o
                    if args.booksim:
                        b = run_booksim(args.booksim, k, n, nodes, flits, load, args.cycles)
                        if bs is None or b["cpu"] < bs["cpu"]:
                            bs = b
                assert ours is not None
                row = {"topology": preset, "booksim": f"k{k}n{n}", "size": size, "load": load,
                       "ours": ours, "booksim_run": bs,
                       "ratio": ours["flit_hops_per_s"] / bs["flit_hops_per_s"] if bs else None}
                rows.append(row)
                if not args.json:
                    line = (f"{preset:8s} {size:5d} B load {load}: ours {ours['flit_hops_per_s'] / 1e6:7.2f} M flit-hops/CPU-s "
                            f"({ours['events_per_packet']:.2f} events/packet, {ours['us_per_event']:.3f} us/event)")
                    if bs:
                        line += (f"  BookSim2 k{k}n{n} {bs['flit_hops_per_s'] / 1e6:6.3f} M ({bs['cycles']:.0f} cycles, "
                                 f"accepted {bs['accepted']:.3f}, {bs['hops']:.2f} router hops)  ratio {row['ratio']:.1f}x")
                    print(line, flush=True)
    return rows


SCALE_CHILD = r"""
import json, resource, sys, time
from ibcloud import Fabric, route
from ibcloud.sim import parse_duration, simulate
preset, end = sys.argv[1], parse_duration(sys.argv[2])
tables = route(Fabric.generate(preset), "ftree").tables
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
r = simulate(tables, "uniform:load=0.3,size=64,poisson=1", end, record_ports=False, mtu=256, wire_overhead_bytes=0)
total = time.perf_counter() - t0
packets = int(r.flows["completed_msgs"].sum())
print(json.dumps({"preset": preset, "endpoints": len(r.flows), "setup_s": total - r.wall_seconds, "run_s": r.wall_seconds,
                  "events": r.events, "packets": packets, "events_per_packet": r.events / max(packets, 1),
                  "us_per_event": r.wall_seconds / max(r.events, 1) * 1e6,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "before_run_mb": base / 1024}))
"""


def scale(args: argparse.Namespace) -> List[Dict[str, Any]]:
    rows = []
    for preset in ("ft324", "ft648", "ft5832", "ft11664"):
        out = subprocess.run([sys.executable, "-c", SCALE_CHILD, preset, args.scale_time],
                             capture_output=True, text=True, check=True).stdout
        row = json.loads(out.strip().splitlines()[-1])
        rows.append(row)
        if not args.json:
            print(f"{preset:8s} {row['endpoints']:6d} endpoints: set-up {row['setup_s']:6.2f} s, run {row['run_s']:7.2f} s, "
                  f"{row['events_per_packet']:.2f} events/packet, {row['us_per_event']:.3f} us/event, "
                  f"peak {row['peak_mb']:.0f} MB (before the run {row['before_run_mb']:.0f} MB)", flush=True)
    return rows


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--booksim", metavar="BINARY", help="a BookSim2 binary to compare with")
    ap.add_argument("--repeat", type=int, default=2, help="alternate runs per case; the best of each counts (default 2)")
    ap.add_argument("--time", help="our simulated time per run (default by packet size: 100us, 400us, 1ms)")
    ap.add_argument("--cycles", type=int, default=2000, help="BookSim's measured cycles after its warm-up (default 2000)")
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="packet sizes in bytes (default 64 512 2048)")
    ap.add_argument("--loads", type=float, nargs="+", default=list(LOADS), help="offered loads (default 0.3 0.7)")
    ap.add_argument("--scale", action="store_true", help="the scaling table instead of the comparison")
    ap.add_argument("--scale-time", default="50us", help="simulated time per scaling run (default 50us)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows = scale(args) if args.scale else compare(args)
    load = os.getloadavg()
    if args.json:
        print(json.dumps({"rows": rows, "loadavg": load}, indent=2))
    else:
        print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
