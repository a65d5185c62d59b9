"""The ``host`` campaign kind: a host-simulator scenario (file or inline
table) checked when the campaign is parsed, its contents in the task hash,
and one ``run`` row plus one ``vm`` row per VM stored (~3 s)."""

from __future__ import annotations

import json

import pytest

from ibcloud.campaign import Store, parse, run
from ibcloud.exceptions import CampaignError
from ibcloud.host import EXAMPLE

INLINE = """\
[[experiment]]
name = "inline"
kind = "host"
seed = [1, 2]

[experiment.scenario]
duration = "20ms"

[[experiment.scenario.hosts]]
name = "A"

[[experiment.scenario.hosts]]
name = "B"

[[experiment.scenario.vms]]
name = "c"
host = "A"

[[experiment.scenario.vms]]
name = "s"
host = "B"

[[experiment.scenario.workloads]]
kind = "rdma-write"
vm = "c"
peer = "s"
size = "2k"
depth = 16
"""


def test_a_scenario_file_is_read_relative_to_the_campaign_and_hashed_by_its_contents(tmp_path):
    (tmp_path / "s.toml").write_text(EXAMPLE)
    text = '[[experiment]]\nkind = "host"\nscenario = "s.toml"\n'
    first = parse(text, "c.toml", tmp_path).tasks
    assert len(first) == 1 and first[0].settings["scenario"]["workloads"][0]["size"] == "64k"
    (tmp_path / "s.toml").write_text(EXAMPLE.replace('"64k"', '"2k"'))
    second = parse(text, "c.toml", tmp_path).tasks
    assert second[0].hash != first[0].hash  # a changed file is never mistaken for a stored result


@pytest.mark.parametrize("scenario, fragment", [
    ('"missing.toml"', "scenario file 'missing.toml' does not exist"),
    ("3", "must be a scenario file name or an inline table"),
    ('"bad.toml"', "bad.toml:17: vms[1].host: unknown host 'C'"),
])
def test_bad_scenarios_fail_when_the_campaign_is_parsed(tmp_path, scenario, fragment):
    (tmp_path / "bad.toml").write_text(EXAMPLE.replace('host = "B"', 'host = "C"'))
    with pytest.raises(CampaignError) as err:
        parse(f'[[experiment]]\nkind = "host"\nscenario = {scenario}\n', "c.toml", tmp_path)
    assert fragment in str(err.value) and "c.toml:3" in str(err.value)


def test_inline_scenario_sweeps_seeds_and_stores_per_vm_rows(tmp_path):
    campaign = parse(INLINE, "c.toml", tmp_path)
    assert [t.settings["seed"] for t in campaign.tasks] == [1, 2]
    summary = run(campaign, tmp_path / "r", scheduler="inline", progress=False)
    assert summary.complete
    frame = Store(tmp_path / "r").frame("host")
    vms = frame[frame.record == "vm"]
    assert sorted(vms.vm) == ["c", "c", "s", "s"]
    client = vms[vms.vm == "c"]
    # 2 KB RDMA Write alone: the calibration target of the adapter model (448 MB/s), not evidence.
    assert ((client.mib_s - 448).abs() < 15).all()
    assert (client.completed > 0).all() and (client.cpu_pct_mean > 50).all()  # the client busy-polls
    runs = frame[frame.record == "run"]
    assert len(runs) == 2 and (runs.vms == 2).all() and (runs.end_s > 0.019).all()
    assert json.loads(frame.scenario.iloc[0])["duration"] == "20ms"
    files = sorted(p.name for p in (tmp_path / "r" / "files").rglob("*") if p.is_file())
    assert files == ["samples.csv", "samples.csv", "summary.json", "summary.json"]
