"""Paper IV's topology B after a leaf–root link failure, routed by the real
OpenSM 3.3.23 on ibsim: its ftree refuses the degraded tree (ERR AB09 in
fabric_validate_topology) and OpenSM falls back to minhop, as our ftree
engine refuses it without given roots. docs/reproductions/reconfig.md
(section HW) reports this reading beside the judged one. Runs in CI, never
skipped."""

from __future__ import annotations

import pytest

from ibcloud import route
from ibcloud.exceptions import RoutingError
from ibcloud.interop import IbSim, run_opensm
from ibcloud.reconfig import reconfigure
from ibcloud.reconfig_hw import _ftree_refuses, topology_b


def _opensm_ftree(fabric, tmp_path):
    fabric.write(tmp_path / "b.net")
    with IbSim(tmp_path / "b.net") as sim:
        run = run_opensm(sim, routing_engine="ftree")
    try:
        return run.returncode, run.engine_used, run.log.read_text(errors="replace")
    finally:
        run.remove()


def test_opensm_routes_intact_topology_b_with_ftree(tmp_path):
    code, engine, _ = _opensm_ftree(topology_b(), tmp_path)
    assert code == 0 and engine == "ftree"


@pytest.mark.parametrize("link", ["sw-L1-0002:4", "sw-L1-0003:6"])
def test_opensm_ftree_falls_back_to_minhop_after_a_link_failure(tmp_path, link):
    f = topology_b()
    degraded = reconfigure(f, route(f, "ftree").tables, "fail-link", link, method="full").fabric
    code, engine, log = _opensm_ftree(degraded, tmp_path)
    assert code == 0 and engine == "minhop"
    assert "ERR AB09" in log and "not a fat-tree" in log
    # our engine refuses the same fabric for the same reason
    assert _ftree_refuses(degraded)
    with pytest.raises(RoutingError, match="upward port groups"):
        route(degraded, "ftree")
