"""``ibcloud host layout``: every G layout is a valid scenario, written as TOML
that reads back to the same document, and bad names or policies are exit 2."""

from __future__ import annotations

import tomllib

import pytest

from ibcloud.cli.main import main
from ibcloud.exceptions import ParseError
from ibcloud.host import Scenario
from ibcloud.host.layouts import LAYOUTS, layout, to_toml

POLICY = {"drx-symmetric": "hb-dist", "drx-asym1": "stmaxq", "drx-fig36b": "eb-dist", "sphinx-table8": "1:4",
          "sphinx-table9-1:4": "fair", "fig44": "8"}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_every_layout_is_a_valid_scenario_and_round_trips_through_toml(name):
    kw = dict(hosts=2, scale=0.02, sla=1000.0) if name.startswith("drx") else {}
    for policy in (None, POLICY.get(name)):
        sc = layout(name, policy=policy, **kw)
        text = to_toml(sc, f"test {name}")
        assert tomllib.loads(text) == sc
        Scenario.from_text(text, f"{name}.toml").check()


def test_policies_reach_the_scenario():
    assert layout("drx-symmetric", 2, 0.02, "hb-dist", 1000.0)["controllers"][0]["policy"] == "hb-dist"
    sc = layout("drx-asym1", 2, 0.02, "stmax")
    assert sc["fabric"]["qos"] == "stmax" and {w.get("mode") for w in sc["workloads"]} == {"packet"}
    assert "controllers" not in layout("fig44", policy="equal") and layout("fig44")["fabric"].get("vls") is None
    t9 = layout("sphinx-table9-1:1")
    assert [w["sizes"] for w in t9["workloads"] if w["kind"] == "memcached"] == [["16k"]]


@pytest.mark.parametrize("name,policy,msg", [
    ("fig44", "300", "VL weight 1-255"), ("drx-symmetric", "fastest", "policy must be one of"),
    ("sphinx-table8", "1:0", "positive finite ratio"), ("nowhere", None, "unknown layout")])
def test_bad_layouts_are_named(name, policy, msg):
    with pytest.raises(ParseError, match=msg):
        layout(name, policy=policy)


def test_cli_writes_a_file_refuses_to_replace_it_and_host_run_reads_it(tmp_path, capsys):
    out = tmp_path / "f40.toml"
    assert main(["host", "layout", "fig40", "--out", str(out)]) == 0
    assert out.read_text().startswith("# ibcloud host layout fig40")
    assert main(["host", "layout", "fig40", "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["host", "run", str(out), "--json", "--no-plots"]) == 0
    assert main(["host", "layout", "fig44", "--policy", "0"]) == 2
    assert "VL weight" in capsys.readouterr().err
    assert main(["host", "layout"]) == 2
    assert main(["host", "layout", "--list"]) == 0
    assert "sphinx-table9-1:10" in capsys.readouterr().out


def test_toml_writer_names_what_toml_cannot_hold():
    with pytest.raises(ValueError, match=r"workloads\[0\]\.sl: TOML has no null"):
        to_toml({"duration": "1ms", "workloads": [{"kind": "nectere", "sl": None}]})


def test_a_sphinx_layout_runs_and_writes_its_steps(tmp_path):
    import pandas as pd

    from ibcloud.host import run

    sc = layout("sphinx-table8", policy="1:4")
    sc["duration"] = "20ms"
    r = run(sc)
    steps = r.sphinx_steps()
    assert len(steps) >= 15 and set(steps.target) == {0.25} and steps.delay_b.max() > 0
    files = {p.name for p in r.write(tmp_path, plots=False)}
    assert "sphinx_steps.parquet" in files and len(pd.read_parquet(tmp_path / "sphinx_steps.parquet")) == len(steps)
