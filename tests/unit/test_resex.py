"""Nectere as a benchmark (`ibcloud host nectere`, the CTime/WTime/PTime
split in `ibcloud host run`), the IOShares scenario example, and the ResEx
reproduction at the tour size (R5, R6: no policy)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ibcloud.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def test_host_run_accepts_the_ioshares_example(tmp_path, capsys):
    example = ROOT / "docs" / "examples" / "resex-ioshares.toml"
    assert main(["host", "run", str(example), "--json", "--out", str(tmp_path / "o"), "--no-plots"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["controllers"][0]["kind"] == "ioshares"
    assert s["actions"] > 0  # the interferer gets capped
    rep = next(w for w in s["workloads"] if w["vm"] == "c64k")
    assert rep["ctime_mean_us"] == pytest.approx(129.3)
    assert (tmp_path / "o" / "latency_parts.parquet").exists()


def test_host_nectere_prints_the_split(capsys):
    assert main(["host", "nectere", "--duration", "20ms"]) == 0
    out = capsys.readouterr().out
    assert "CTime" in out and "129.3 / 129.3 / 129.3" in out


def test_host_nectere_json_and_parts_add_up(capsys):
    assert main(["host", "nectere", "--duration", "30ms", "--interferer", "2M", "--json"]) == 0
    w = json.loads(capsys.readouterr().out)["workloads"][0]
    assert w["vm"] == "c64k"
    total = w["ctime_mean_us"] + w["wtime_mean_us"] + w["ptime_mean_us"]
    assert total == pytest.approx(w["latency_mean_us"])
    assert w["wtime_mean_us"] > 90  # the 2 MB interferer shares the A→B link


@pytest.mark.parametrize("argv, problem", [
    (["--interferer-cap", "50"], "interferer_cap needs an interferer"),
    (["--interferer", "2M", "--interferer-cap", "0"], "interferer_cap must be in (0, 100]"),
    (["--depth", "0"], "depth"),
    (["--size", "sixty"], "size"),
])
def test_host_nectere_bad_input(capsys, argv, problem):
    assert main(["host", "nectere", "--duration", "5ms", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ibcloud: error:") and problem in err, err


def test_reproduce_resex_at_the_tour_size(tmp_path, capsys):
    from ibcloud.host.resex import reproduce

    s = reproduce(size="tour", do_policies=False, out=str(tmp_path))
    v = {c["id"]: c["verdict"] for c in s["checks"]}
    assert v["R5-base"] == "calibration" and v["R6-br-cap"] == "construction"
    assert v["R5-ctime"] == "shape only" and v["R5-wtime"] == "shape only"
    assert all(v[k] == "not run" for k in v if k.startswith(("R7", "R8-near", "R8-beats", "R8-nointf", "R8-cap")))
    assert (tmp_path / "latencies.parquet").exists() and (tmp_path / "fig19_histogram.png").exists()
