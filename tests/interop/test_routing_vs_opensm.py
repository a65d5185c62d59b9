"""Our engines against OpenSM 3.3.23's on ibsim: same fabric, same LIDs, the
same forwarding tables entry for entry. Runs in CI, never skipped.

The 5,832- and 11,664-node trees are compared by bench/routing_vs_opensm.py,
which also times both sides.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ibcloud import Fabric, read_guid2lid, read_lfts, route
from ibcloud.interop import IbSim, run_opensm

PRESETS = ["ft324", "ft648", "4-ary-2-full", "8-ary-2", "4-ary-3-full", "16-ary-2", "8-ary-3", "8-ary-3-full"]
ENGINES = ["ftree", "minhop", "updn"]


@pytest.fixture(scope="module", params=PRESETS)
def opensm_tables(request, tmp_path_factory):
    """OpenSM's tables for every engine on one preset, from one ibsim."""
    preset = request.param
    fabric = Fabric.generate(preset)
    net = tmp_path_factory.mktemp(preset) / f"{preset}.net"
    fabric.write(net)
    results = {}
    with IbSim(net) as sim:
        for engine in ENGINES:
            run = run_opensm(sim, routing_engine=engine)
            assert run.returncode == 0, run.log.read_text()[-3000:]
            assert run.engine_used == engine, f"OpenSM fell back to {run.engine_used} on {preset}"
            results[engine] = run
    return preset, fabric, results


@pytest.mark.parametrize("engine", ENGINES)
def test_tables_identical_to_opensm(opensm_tables, engine: str) -> None:
    preset, fabric, runs = opensm_tables
    run = runs[engine]
    ours = fabric.copy()
    ours.assign_lids(policy="guid2lid", guid2lid=read_guid2lid(run.guid2lid))
    theirs = read_lfts(run.lfts, ours)
    mine = route(ours, engine).tables
    diff = mine.differences(theirs)
    assert not diff, f"{engine} on {preset}: {sum(d[2] for d in diff)} entries differ, first switches {diff[:3]}"
    assert mine.unrouted() == 0
