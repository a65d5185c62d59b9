"""The SA flooder against OpenSM on ibsim: every SubnAdmGet(PathRecord)
answer must carry the SL, MTU and rate our own resolution finds on
OpenSM's fabric and tables. Runs in CI, never skipped."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ibcloud import Fabric
from ibcloud.sa import OpenSmDaemon, expected_answers, flood_on_ibsim
from ibcloud.interop import IbSim
from ibcloud.tables import read_lfts

BAD = ("mismatched", "malformed", "unmatched", "status_errors", "timeouts", "send_errors")


def _heterogeneous_net(tmp_path: Path) -> Path:
    """4-ary-2-full at 4xEDR with every link of the first leaf switch at 4xFDR."""
    net = tmp_path / "het.net"
    Fabric.generate("4-ary-2-full", rate="4xEDR").write(net)
    text = net.read_text()
    leaf = re.search(r'"(S-[0-9a-f]+)"', text).group(1)
    blocks = text.split("\n\n")
    out = []
    for b in blocks:
        if f'"{leaf}"' in b.splitlines()[0] if b.startswith("Switch") else False:
            b = b.replace("4xEDR", "4xFDR")
        else:
            b = "\n".join(l.replace("4xEDR", "4xFDR") if f'"{leaf}"' in l else l for l in b.splitlines())
        out.append(b)
    net.write_text("\n\n".join(out))
    return net


def test_every_answer_matches_our_resolution_on_a_heterogeneous_fabric(tmp_path: Path) -> None:
    net = _heterogeneous_net(tmp_path)
    out = flood_on_ibsim(net, [1, 8], duration=1.5, num_pairs=2000, seed=3)
    assert out["unresolved"] == []
    for run in out["runs"]:
        assert "error" not in run, run
        assert run["answered"] > 500, run
        assert run["valid"] == run["answered"], run["examples"]
        assert all(run[k] == 0 for k in BAD), run


def test_expected_rates_really_differ_on_that_fabric(tmp_path: Path) -> None:
    net = _heterogeneous_net(tmp_path)
    with IbSim(net) as sim, OpenSmDaemon(sim) as sm:
        fabric = Fabric.read(sm.subnet_lst)
        tables = read_lfts(sm.lfts, fabric)
    lids = sorted(n["lid"] for n in fabric.nodes() if n["kind"] == "ca")
    pairs = [(a, b) for a in lids for b in lids]
    expected, problems = expected_answers(tables, pairs)
    assert problems == []
    rates = {v[2] for v in expected.values()}
    assert rates == {12, 16}  # 56 Gb/s (FDR) through the slow leaf, 100 Gb/s (EDR) elsewhere


def test_a_missing_sm_is_reported_not_raised(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    net = tmp_path / "t.net"
    Fabric.generate("4-ary-2-full").write(net)
    with IbSim(net) as sim:
        spec = sim.workdir / "spec.json"
        out = sim.workdir / "out.json"
        spec.write_text(json.dumps({"pairs": [[1, 2]], "expected": [], "window": 2, "duration": 0.5}))
        done = subprocess.run([sys.executable, "-m", "ibcloud.sa.flood", str(spec), str(out)], cwd=sim.workdir,
                              env=sim.client_env(), capture_output=True, text=True, timeout=60)
        assert done.returncode == 1
        assert "no SM" in json.loads(out.read_text())["error"]


def test_algorithm_1_template_adds_load_per_round(tmp_path: Path) -> None:
    from ibcloud.sa.run import benchmark_on_ibsim

    net = tmp_path / "t.net"
    Fabric.generate("4-ary-2-full").write(net)
    out = benchmark_on_ibsim(net, mifs=2, k=4, rounds=3, round_s=1.0)
    assert out["errors"] == [] and out["wrong_answers"] == 0 and out["unresolved"] == []
    rounds = out["rounds"]
    assert [r["instances"] for r in rounds] == [1, 9, 17]
    # Round 1 is the SIF alone; from round 2 the MIFs add load the SIF shares.
    assert rounds[0]["total_qps"] == rounds[0]["sif_qps"] > 0
    assert all(r["total_qps"] > r["sif_qps"] for r in rounds[1:])
