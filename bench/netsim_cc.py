"""IB congestion control on ft324 (issue 18): the hot-spot and uniform +
hot-spot cases with CC off, ``default`` and ``ranadive``.

Prints, per case and preset: mean victim throughput (Gb/s), the hot node's
link utilisation (payload delivered to #0 over the QDR payload capacity),
total delivered payload (Gb/s), all over the whole run, and FECN marks.

    .venv/bin/python bench/netsim_cc.py [--time 3ms] [--json]
"""

import argparse
import json

from ibcloud import Fabric, route
from ibcloud.sim import simulate

QDR_PAYLOAD = 32.0 * 2048 / 2082


def hot_spot() -> str:
    """18 nodes of leaf 1 → #0 at 1.5× in total; 0.5-load victims to leaf 2."""
    each = 1.5 * QDR_PAYLOAD / 18
    parts = [f"flow:src=#{k},dst=#0,gbps={each},size=2048,poisson=true" for k in range(18, 36)]
    parts += [f"flow:src=#{k},dst=#{k + 18},load=0.5,size=2048,poisson=true" for k in range(18, 36)]
    return ";".join(parts)


UNIFORM_HOT = "uniform:load=0.3,size=2048,poisson=1;hotspot:hot=#0,load=1.5,size=2048,poisson=1"


def measure(tables, traffic: str, cc: str, time: str) -> dict:
    r = simulate(tables, traffic, time, congestion_control=cc, record_ports=False)
    f = r.flows
    secs = r.end_ps / 1e12
    hot_name = r.endpoints[0]
    to_hot = f[f["dst"] == hot_name]["delivered_bytes"].sum()
    if traffic == UNIFORM_HOT:
        # Uniform flows also reach #0: count the bytes #0's link received.
        slot = [i for i, lab in enumerate(r.port_labels) if lab == f"'{hot_name}' port 1"]
        rows = r.ports[r.ports["slot"].isin(slot)]
        to_hot = rows["rcv_data"].sum() * 4 * 2048 / 2082
        victims = f[f["name"].str.endswith("->uniform")]
    else:
        victims = f[f["dst"] != hot_name]
    return {
        "victim_gbps": round(float(victims["gbps"].mean()), 2),
        "hot_utilisation": round(float(to_hot * 8 / secs / 1e9 / QDR_PAYLOAD), 3),
        "total_gbps": round(float(f["delivered_bytes"].sum() * 8 / secs / 1e9), 1),
        "fecn_marks": int(r.ports["fecn_marked"].sum()),
        "becns": int(f["becns"].sum()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time", default="3ms")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    tables = route(Fabric.generate("ft324"), "ftree").tables
    out = []
    for case, traffic in (("hot-spot", hot_spot()), ("uniform+hot-spot", UNIFORM_HOT)):
        for cc in ("off", "default", "ranadive"):
            row = {"case": case, "cc": cc, **measure(tables, traffic, cc, a.time)}
            out.append(row)
            if not a.json:
                print(row, flush=True)
    if a.json:
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
