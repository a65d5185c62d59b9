"""Wall time of one DRX Symmetric run (G's 8 hosts, 32 TeraSort + 32 HPL
VMs, Nectere packet-level, bulk fluid, EB-Dist with G's SLA) at a time
scale: ``--scale 0.1`` is ``ibcloud reproduce drx``'s default (120 G s as
12 simulated s), ``--scale 1`` the full run (120 simulated s, two 60 s
epochs). Prints JSON: wall s, simulated s, events, simulated s per wall s.

    .venv/bin/python bench/drx_speed.py --scale 0.1 --scale 1
"""

from __future__ import annotations

import argparse
import json
import time

from ibcloud.host import run
from ibcloud.host.drx_layouts import scenario
from ibcloud.host.drx_reproduction import _alone, controller


def one(scale: float) -> dict:
    cq = _alone(8, scale, 1)["cqe_per_s"]
    sc = scenario("symmetric", 8, scale)
    sc["controllers"] = [controller("eb-dist", sc, scale, min(cq.values()))]
    t0 = time.perf_counter()
    r = run(sc)
    wall = time.perf_counter() - t0
    return {"case": "DRX Symmetric, 8 hosts, EB-Dist", "scale": scale, "simulated_s": r.end_s, "wall_s": wall,
            "events": r.events, "sim_s_per_wall_s": r.end_s / wall}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, action="append", help="time scale (repeatable; default 0.1)")
    a = ap.parse_args()
    print(json.dumps([one(s) for s in (a.scale or [0.1])], indent=2))


if __name__ == "__main__":
    main()
