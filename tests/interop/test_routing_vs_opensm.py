"""Our engines against OpenSM 3.3.23's on ibsim: same fabric, same LIDs, the
same forwarding tables entry for entry. Runs in CI, never skipped.

The 5,832- and 11,664-node trees, and the cases too slow for OpenSM here, are
compared by bench/routing_vs_opensm.py, which also times both sides.
"""

from __future__ import annotations

from typing import Dict, Iterator, Tuple

import pytest

from ibcloud import Fabric, read_guid2lid, read_lfts, route
from ibcloud.interop import IbSim, run_opensm

PRESETS = ["ft324", "ft648", "4-ary-2-full", "8-ary-2", "4-ary-3-full", "16-ary-2", "8-ary-3", "8-ary-3-full"]
ENGINES = ["ftree", "minhop", "updn", "dfsssp", "lash"]
# OpenSM's lash takes 6.8 s on 8-ary-3 and 64 s on 8-ary-3-full here: left to the benchmark.
TOO_SLOW_FOR_CI = {("lash", "ft648"), ("lash", "8-ary-3"), ("lash", "8-ary-3-full")}
CASES = [(p, e) for p in PRESETS for e in ENGINES if (e, p) not in TOO_SLOW_FOR_CI]


@pytest.fixture(scope="module")
def simulators(tmp_path_factory) -> Iterator[Dict[str, Tuple[Fabric, IbSim]]]:
    """One ibsim per preset, started on first use, stopped at the end."""
    sims: Dict[str, Tuple[Fabric, IbSim]] = {}

    def get(preset: str) -> Tuple[Fabric, IbSim]:
        if preset not in sims:
            fabric = Fabric.generate(preset)
            net = tmp_path_factory.mktemp(preset) / f"{preset}.net"
            fabric.write(net)
            sims[preset] = (fabric, IbSim(net).start())
        return sims[preset]

    yield get  # type: ignore[misc]
    for _, sim in sims.values():
        sim.stop()


@pytest.mark.parametrize("preset,engine", CASES)
def test_tables_identical_to_opensm(simulators, preset: str, engine: str) -> None:
    fabric, sim = simulators(preset)
    run = run_opensm(sim, routing_engine=engine)
    assert run.returncode == 0, run.log.read_text()[-3000:]
    assert run.engine_used == engine, f"OpenSM fell back to {run.engine_used} on {preset}"
    ours = fabric.copy()
    ours.assign_lids(policy="guid2lid", guid2lid=read_guid2lid(run.guid2lid))
    theirs = read_lfts(run.lfts, ours)
    mine = route(ours, engine).tables
    diff = mine.differences(theirs)
    assert not diff, f"{engine} on {preset}: {sum(d[2] for d in diff)} entries differ, first switches {diff[:3]}"
    assert mine.unrouted() == 0
