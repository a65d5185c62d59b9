"""Host-simulator speed on the issue's first benchmark case:

one F-testbed host (8 PCPUs, credit1) with two VMs — a 2 MB and a 64 KB
RDMA Write stream at full depth (100), one VM capped at 50 % — writing to
a second host over 4x SDR, 1 KB MTU, 10 s simulated, single-threaded.

    .venv/bin/python bench/host_speed.py [--seconds 10] [--runs 1] [--modes packet,fluid]

Prints, per time scale, events/s (host + packet events) and simulated
seconds per wall second (the issue's target: at least 5). ``packet``: every
1 KB packet in the packet simulator (several events each: injection, switch
arrival, forwarding, sink, credits), so packet events dominate. ``fluid``:
the 2 MB bulk stream as a flow-level rate (``mode = "fluid"``), the 64 KB
stream still packet-level. ``all-fluid``: both streams fluid. The
bandwidths of the runs are printed beside each other (equal work, same
process, one after the other).

``--g-testbed`` runs the issue's second case instead: G's 8-host one-switch
testbed (4x QDR, 2 KB MTU, KVM/CFS hosts with 12 PCPUs and SR-IOV HCAs of
16 VFs, every VM pinned to its own PCPU) in the Symmetric layout of G §5.3:
on every host 4 Hadoop TeraSort VMs and 4 HPL VMs, Nectere's client on host
0 and server on host 1; Hadoop from 0 s, HPL from 30 s, Nectere from 31 s,
60 s simulated (target: under 60 s wall). TeraSort and HPL traffic is fluid
(``--g-mode packet`` makes it packet-level), Nectere packet-level. The
skeletons' parameters are the defaults of ``ibcloud_host::scenario::skeleton``
(docs/host.md), fixed before this benchmark was first run. Each Hadoop VM
shuffles to its twin on the next host, each HPL rank sends its panel to the
rank k+1 hosts on (k = its index on the host).
"""

from __future__ import annotations

import argparse
import json
import time

from ibcloud.host import run


def scenario(seconds: float, bulk_mode: str = "packet") -> dict:
    return {
        "duration": f"{seconds}s",
        "sample-interval": "100ms",
        "hosts": [{"name": "A", "pcpus": 8}, {"name": "B", "pcpus": 8}],
        "vms": [{"name": "v2m", "host": "A"}, {"name": "v64k", "host": "A", "cap": 50},
                {"name": "s1", "host": "B"}, {"name": "s2", "host": "B"}],
        "workloads": [
            {"kind": "rdma-write", "vm": "v2m", "peer": "s1", "size": "2M", "depth": 100, "mode": "packet" if bulk_mode == "packet" else "fluid"},
            {"kind": "rdma-write", "vm": "v64k", "peer": "s2", "size": "64k", "depth": 100,
             "mode": "fluid" if bulk_mode == "all-fluid" else "packet"},
        ],
    }


def g_testbed(seconds: float = 60.0, mode: str = "fluid") -> dict:
    """G's Symmetric layout on 8 hosts (see the module docstring)."""
    hosts = [{"name": f"h{i}", "pcpus": 12, "scheduler": {"kind": "cfs"},
              "adapter": {"kind": "sriov", "vfs": 16}} for i in range(8)]
    vms, wls = [], []
    for h in range(8):
        for k in range(4):
            vms.append({"name": f"h{h}-hadoop{k}", "host": f"h{h}", "pin": [k]})
            vms.append({"name": f"h{h}-hpl{k}", "host": f"h{h}", "pin": [4 + k]})
    vms += [{"name": "nectere-client", "host": "h0", "pin": [8]},
            {"name": "nectere-server", "host": "h1", "pin": [8]}]
    for h in range(8):
        for k in range(4):
            wls.append({"kind": "terasort", "vm": f"h{h}-hadoop{k}", "peer": f"h{(h + 1) % 8}-hadoop{k}",
                        "mode": mode})
            wls.append({"kind": "hpl", "vm": f"h{h}-hpl{k}", "peer": f"h{(h + k + 1) % 8}-hpl{k}",
                        "mode": mode, "start": f"{min(30.0, seconds / 2)}s"})
    # Nectere, 64 KB; the server's compute is G's 212 us variant less the
    # transfers (chosen, not fitted: 64 KB at 4 GB/s each way ≈ 2 × 17 us).
    wls.append({"kind": "nectere", "vm": "nectere-client", "peer": "nectere-server", "size": "64k",
                "service": "178us", "start": f"{min(31.0, seconds / 2 + min(1.0, seconds / 10))}s"})
    return {"duration": f"{seconds}s", "sample-interval": "1s",
            "fabric": {"link": "4xQDR", "mtu": 2048},
            "hosts": hosts, "vms": vms, "workloads": wls}


def run_g(seconds: float, mode: str) -> dict:
    t0 = time.perf_counter()
    r = run(g_testbed(seconds, mode))
    wall = time.perf_counter() - t0
    w = r.workloads()
    lat = r.latencies()
    nect = lat[lat["vm"] == "nectere-client"] if "vm" in lat.columns else lat.iloc[0:0]
    col = [c for c in lat.columns if "latency" in c]
    return {
        "case": "G testbed, 8 hosts, Symmetric (32 TeraSort + 32 HPL VMs, Nectere 64 KB), CFS, SR-IOV, 4x QDR",
        "bulk_mode": mode,
        "simulated_s": r.end_s,
        "wall_s": wall,
        "target_wall_s": 60.0,
        "events": r.events,
        "events_per_s": r.events / wall,
        "sim_s_per_wall_s": r.end_s / wall,
        "terasort_gib": float(w[w["kind"] == "terasort"]["bytes"].sum() / 2**30),
        "terasort_jobs": int(w[w["kind"] == "terasort"]["completed"].sum()),
        "hpl_gib": float(w[w["kind"] == "hpl"]["bytes"].sum() / 2**30),
        "hpl_panel_steps": int(w[w["kind"] == "hpl"]["completed"].sum()),
        "nectere_requests": int(w[w["kind"] == "nectere"]["completed"].sum()),
        "nectere_latency_us_mean": float(w[w["kind"] == "nectere"]["latency_mean_us"].iloc[0] or 0.0),
        "nectere_latency_us_p99": float(nect[col[0]].quantile(0.99)) if len(nect) and col else None,
    }


def g_compare(seconds: float) -> list:
    """The G case on a short window at both time scales (equal work, one
    process): TeraSort and HPL volume, HPL step time, Nectere's latency
    distribution — the fluid mode checked against packet level where
    flows from several hosts meet."""
    rows = []
    for mode in ("packet", "fluid"):
        t0 = time.perf_counter()
        r = run(g_testbed(seconds, mode))
        wall = time.perf_counter() - t0
        w, lat = r.workloads(), r.latencies()
        n = lat[lat["vm"] == "nectere-client"]["latency_us"]
        hpl = lat[lat["vm"].str.contains("hpl")]["latency_us"]
        rows.append({
            "case": f"G testbed, {seconds:g} s window", "bulk_mode": mode, "wall_s": wall, "events": r.events,
            "terasort_mib": float(w[w["kind"] == "terasort"]["bytes"].sum() / 2**20),
            "hpl_steps": int(w[w["kind"] == "hpl"]["completed"].sum()),
            "hpl_step_ms_mean": float(hpl.mean() / 1e3) if len(hpl) else None,
            "nectere_requests": int(len(n)),
            **{f"nectere_us_{k}": float(v) for k, v in
               (("mean", n.mean()), ("p50", n.quantile(0.5)), ("p90", n.quantile(0.9)), ("p99", n.quantile(0.99)))},
        })
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0, help="simulated seconds (default 10)")
    ap.add_argument("--runs", type=int, default=1, help="best of N runs (default 1)")
    ap.add_argument("--modes", default="packet,fluid,all-fluid",
                    help="time scales to run, comma-separated: packet (both streams packet-level), fluid (the "
                         "2 MB stream fluid), all-fluid (both streams fluid) (default: all three)")
    ap.add_argument("--g-testbed", action="store_true", help="run G's 8-host testbed case instead")
    ap.add_argument("--g-seconds", type=float, default=60.0, help="simulated seconds of the G case (default 60)")
    ap.add_argument("--g-mode", default="fluid", choices=["fluid", "packet"],
                    help="time scale of TeraSort and HPL traffic in the G case (default fluid)")
    ap.add_argument("--g-compare", type=float, metavar="SECONDS",
                    help="run the G case for SECONDS at packet level and with fluid bulk flows, side by side")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    results = []
    if a.g_compare:
        results += g_compare(a.g_compare)
        a.modes = ""
    elif a.g_testbed:
        results.append(run_g(a.g_seconds, a.g_mode))
        a.modes = ""
    for mode in [m for m in a.modes.split(",") if m]:
        best = None
        for _ in range(a.runs):
            t0 = time.perf_counter()
            r = run(scenario(a.seconds, mode))
            wall = time.perf_counter() - t0
            if best is None or wall < best[0]:
                best = (wall, r)
        wall, r = best
        w = r.workloads()
        results.append({
            "case": "F testbed, 2 VMs (2 MB + 64 KB RDMA Write, depth 100, the 64 KB one capped at 50 %), credit1",
            "bulk_mode": mode,
            "simulated_s": r.end_s,
            "wall_s": wall,
            "events": r.events,
            "events_per_s": r.events / wall,
            "sim_s_per_wall_s": r.end_s / wall,
            "target_sim_s_per_wall_s": 5.0,
            "mib_s": dict(zip(w["vm"], w["hw_mib_s"].round(1))),
        })
    if a.json:
        print(json.dumps(results, indent=2))
    else:
        for out in results:
            for k, v in out.items():
                print(f"{k}: {v}")
            print()


if __name__ == "__main__":
    main()
