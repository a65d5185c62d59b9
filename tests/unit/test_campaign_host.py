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


def test_a_parallel_sweep_gives_the_rows_and_files_of_a_serial_one(tmp_path):
    # Sweeps over seeds and parameters (here two scenario files: uncapped and a 50 % cap) run one task per
    # worker process of a local Dask cluster; the stored rows and files must be those of a serial run.
    free = EXAMPLE.replace('"64k"', '"2k"').replace('"50ms"', '"150ms"')  # parked from 60 ms when capped
    (tmp_path / "free.toml").write_text(free)
    (tmp_path / "capped.toml").write_text(free.replace('host = "A"\n', 'host = "A"\ncap = 50\n', 1))
    text = '[[experiment]]\nkind = "host"\nscenario = ["free.toml", "capped.toml"]\nseed = [1, 2]\n'
    campaign = parse(text, "c.toml", tmp_path)
    assert len(campaign.tasks) == 4
    serial = run(campaign, tmp_path / "serial", scheduler="inline", progress=False)
    parallel = run(campaign, tmp_path / "parallel", workers=2, progress=False)
    assert serial.complete and parallel.complete and parallel.ran == 4
    frames = [Store(tmp_path / d).frame("host") for d in ("serial", "parallel")]
    assert set(frames[1].worker) - {"inline"} and len(set(frames[1].worker)) == 2  # both workers took tasks
    same = [f.drop(columns=["seconds", "worker"]).sort_values(["task", "row"]).reset_index(drop=True)
            for f in frames]
    assert same[0].equals(same[1])
    capped = same[0][(same[0].record == "vm") & (same[0].vm == "vm1")]
    assert capped.mib_s.nunique() == 2  # the cap changes the result: the sweep is not vacuous
    for f in sorted((tmp_path / "serial" / "files").rglob("*.*")):
        twin = tmp_path / "parallel" / f.relative_to(tmp_path / "serial")
        assert twin.read_bytes() == f.read_bytes(), f.name


def test_reproduce_thrashing_runs_its_sweep_in_parallel_with_the_serial_results():
    # Table 3's cap × start-phase grid (6 scenarios) on 1 and on 2 threads: identical rows and verdicts.
    from ibcloud.host.thrashing import reproduce

    runs = [reproduce(phases=2, mb_requests=60, do_fig12=False, do_fig13=False, do_nas=False, workers=n)
            for n in (1, 2)]
    assert runs[0]["table3"] == runs[1]["table3"]
    assert runs[0]["checks"] == runs[1]["checks"]
    assert runs[0]["table3"][50]["rows"][0]["bw_2k"] < runs[0]["table3"][100]["rows"][0]["bw_2k"] / 2
