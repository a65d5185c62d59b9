"""Routing side by side with OpenSM 3.3.23 on ibsim, in one run.

For each preset and engine: OpenSM routes the fabric on ibsim (routing phase
from its log: "building routing with '<engine>'" to "<engine> tables
configured on all switches", verbosity 0x47), ibcloud routes the same fabric
with the same LIDs (best of --repeat runs), and the script prints both times,
the ratio, and whether the tables are identical entry for entry.

    .venv/bin/python bench/routing_vs_opensm.py --presets ft5832 ft11664 --engines ftree minhop updn
    .venv/bin/python bench/routing_vs_opensm.py --presets ft5832 --engines dfsssp --json out/bench.json

Nothing here is a test: machines are noisy, so read the ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ibcloud import Fabric, read_guid2lid, read_lfts, route
from ibcloud.interop import IbSim, run_opensm


def measure(preset: str, engines: list[str], repeat: int, workdir: Path) -> list[dict]:
    fabric = Fabric.generate(preset)
    net = workdir / f"{preset}.net"
    fabric.write(net)
    rows = []
    with IbSim(net, timeout=600) as sim:
        for engine in engines:
            run = run_opensm(sim, routing_engine=engine, verbosity="0x47", timeout=3600)
            row = {"preset": preset, "engine": engine, "opensm_engine": run.engine_used,
                   "opensm_seconds": run.routing_seconds}
            if run.returncode != 0 or run.engine_used != engine:
                row["note"] = f"OpenSM used {run.engine_used} (exit {run.returncode})"
                rows.append(row)
                run.remove()
                continue
            ours = fabric.copy()
            ours.assign_lids(policy="guid2lid", guid2lid=read_guid2lid(run.guid2lid))
            best = None
            for _ in range(repeat):
                routing = route(ours, engine)
                best = routing.seconds if best is None else min(best, routing.seconds)
            theirs = read_lfts(run.lfts, ours)
            diff = routing.tables.differences(theirs)
            row.update({
                "ibcloud_seconds": best,
                "ratio": (run.routing_seconds / best) if run.routing_seconds and best else None,
                "identical": not diff,
                "switches_differing": len(diff),
                "entries_differing": sum(d[2] for d in diff),
            })
            rows.append(row)
            run.remove()  # OpenSM's dumps of ft11664 take 2 GB of tmpfs
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", default=["ft648"])
    parser.add_argument("--engines", nargs="+", default=["ftree", "minhop", "updn"])
    parser.add_argument("--repeat", type=int, default=3, help="ibcloud runs per case; the best counts")
    parser.add_argument("--workdir", type=Path, default=Path("/dev/shm"))
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    for preset in args.presets:
        rows += measure(preset, args.engines, args.repeat, args.workdir)
    table = Table(title="routing: OpenSM 3.3.23 on ibsim vs ibcloud (same fabric, same LIDs)")
    for col in ("preset", "engine", "OpenSM s", "ibcloud s", "ratio", "tables"):
        table.add_column(col, justify="right" if col.endswith("s") or col == "ratio" else "left")
    for r in rows:
        if "note" in r:
            table.add_row(r["preset"], r["engine"], "-", "-", "-", r["note"])
            continue
        same = "identical" if r["identical"] else f"{r['entries_differing']} entries differ"
        osm = f"{r['opensm_seconds']:.3f}" if r["opensm_seconds"] is not None else "?"
        ratio = f"{r['ratio']:.0f}x" if r["ratio"] else "?"
        table.add_row(r["preset"], r["engine"], osm, f"{r['ibcloud_seconds']:.4f}", ratio, same)
    Console().print(table)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
