"""Campaigns: file validation (key and line named, nothing run), expansion,
resumable runs, Parquet + DuckDB results, killed workers and clients."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ibcloud.campaign import Store, load, parse, query, run
from ibcloud.cli.main import main
from ibcloud.exceptions import CampaignError

ROOT = Path(__file__).resolve().parents[2]
IBCLOUD = str(Path(sys.executable).with_name("ibcloud"))

GOOD = """\
[campaign]
name = "sweep"
description = "routing and analysis on two small trees"

[[experiment]]
name = "routes"
kind = "route"
topology = ["4-ary-2-full", "8-ary-2"]
engine = ["ftree", "minhop", "updn"]

[[experiment]]
name = "bisect"
kind = "analyze"
topology = "8-ary-2"
runs = 20
seed = [1, 2]
"""


def _error(text: str, *fragments: str) -> str:
    with pytest.raises(CampaignError) as info:
        parse(text, "exp.toml")
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_expansion_is_the_cartesian_product_in_declared_order():
    c = parse(GOOD, "exp.toml")
    assert c.name == "sweep"
    assert len(c.tasks) == 6 + 2
    assert [(t.settings["topology"], t.settings["engine"]) for t in c.tasks[:3]] == [
        ("4-ary-2-full", "ftree"), ("4-ary-2-full", "minhop"), ("4-ary-2-full", "updn")]
    assert c.tasks[6].settings == {"kind": "analyze", "topology": "8-ary-2", "engine": "ftree", "pattern": "bisect",
                                   "runs": 20, "seed": 1}
    # the hash is a function of the resolved settings only: defaults spelled out change nothing
    spelled = parse(GOOD.replace('runs = 20', 'runs = 20\npattern = "bisect"'), "other.toml")
    assert [t.hash for t in spelled.tasks] == [t.hash for t in c.tasks]
    assert len({t.hash for t in c.tasks}) == len(c.tasks)


@pytest.mark.parametrize(("edit", "fragments"), [
    (("engine = [", "engin = ["), ("exp.toml:9:", "unknown key 'engin'", "[[experiment]] 1")),
    (("runs = 20", "runs = 20\nbisections = 3"), ("exp.toml:16:", "unknown key 'bisections'")),
    (('description =', 'descripton ='), ("exp.toml:3:", "unknown key 'descripton' in [campaign]")),
    (("runs = 20", "runs = -5"), ("exp.toml:15:", "runs = -5", "at least 0")),
    (("seed = [1, 2]", 'seed = "one"'), ("exp.toml:16:", "seed", "integer")),
    (('"8-ary-2"]', '"ft999"]'), ("exp.toml:8:", "topology", "ft999")),
    (('topology = "8-ary-2"', 'topology = "missing/fabric.topo"'), ("exp.toml:14:", "does not exist")),
    (('engine = ["ftree"', 'engine = ["fastest"'), ("exp.toml:9:", "fastest", "unknown routing engine")),
    (('kind = "analyze"', 'kind = "analyse"'), ("exp.toml:13:", "unknown kind 'analyse'")),
    (('topology = "8-ary-2"\n', ''), ("exp.toml:11:", "needs 'topology'")),
    (("runs = 20", "runs = 20\npattern = \"nosuch\""), ("exp.toml:", "pattern", "nosuch")),
    (("seed = [1, 2]", "seed = []"), ("exp.toml:16:", "empty sweep")),
    (("[campaign]", "[campaign\n"), ("exp.toml:1:", "not valid TOML")),
])
def test_bad_campaign_files_name_key_and_line(edit, fragments):
    old, new = edit
    assert old in GOOD
    _error(GOOD.replace(old, new, 1), *fragments)


def test_impossible_migration_parameters():
    base = '[[experiment]]\nkind = "migration"\ntopology = "4-ary-2-full"\n'
    _error(base + "population = 1.5\n", "exp.toml:4:", "population = 1.5", "at most 1")
    _error(base + "vfs = 0\n", "exp.toml:4:", "vfs", "at least 1")
    _error(base + 'pattern = "shuffle"\n', "exp.toml:", "shuffle", "unknown migration pattern")
    _error('[[experiment]]\nkind = "migrate"\ntopology = "4-ary-2-full"\npopulation = 1.0\n', "every VF slot is full")


def test_bad_file_fails_before_anything_runs(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text(GOOD.replace("runs = 20", "runs = 20\nrepeat = 2"))
    results = tmp_path / "results"
    assert main(["campaign", "run", str(bad), "-r", str(results), "--scheduler", "inline"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:16: unknown key 'repeat'" in err and "Traceback" not in err
    assert not results.exists()
    assert main(["campaign", "check", str(tmp_path / "none.toml")]) == 2


def test_resumable_runs_and_duckdb(tmp_path, capsys):
    c = parse(GOOD, "exp.toml")
    results = tmp_path / "r"
    first = run(c, results, scheduler="inline", progress=False)
    assert (first.ran, first.skipped, first.failed, first.problems) == (8, 0, 0, 0)
    again = run(c, results, scheduler="inline", progress=False)
    assert (again.ran, again.skipped) == (0, 8)
    # lose two results: a rerun computes exactly those
    lost = sorted((results / "results").glob("*.parquet"))[:2]
    for path in lost:
        path.unlink()
    third = run(c, results, scheduler="inline", progress=False)
    assert (third.ran, third.skipped) == (2, 6)
    frame = query(results, "SELECT kind, count(*) AS n FROM results GROUP BY kind ORDER BY kind")
    assert frame.values.tolist() == [["analyze", 2], ["route", 6]]
    ok = query(results, "SELECT bool_and(verify_ok) AS ok, count(DISTINCT engine) AS e FROM results WHERE kind='route'")
    assert bool(ok.ok[0]) and int(ok.e[0]) == 3
    # the settings column is the resolved settings, and matches tasks.json
    joined = query(results, "SELECT count(*) AS n FROM results r JOIN tasks t ON r.task = t.task AND r.settings = t.settings")
    assert int(joined.n[0]) == 8
    assert main(["results", "query", str(results), "SELECT engine, topology FROM results WHERE kind = 'route' "
                 "ORDER BY topology, engine LIMIT 2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"engine": "ftree", "topology": "4-ary-2-full"},
                                                  {"engine": "minhop", "topology": "4-ary-2-full"}]
    assert main(["results", "query", str(results), "SELECT nosuchcolumn FROM results"]) == 2
    assert "nosuchcolumn" in capsys.readouterr().err


def _campaign_file(tmp_path: Path, tasks: int, runs: int) -> Path:
    path = tmp_path / "slow.toml"
    path.write_text('[campaign]\nname = "slow"\n[[experiment]]\nkind = "analyze"\ntopology = "ft648"\n'
                    f"runs = {runs}\nseed = {list(range(1, tasks + 1))}\n")
    return path


def _wait_for(results: Path, n: int, proc: subprocess.Popen, timeout: float = 90) -> int:
    deadline = time.time() + timeout
    while time.time() < deadline:
        done = len(list((results / "results").glob("*.parquet"))) if (results / "results").is_dir() else 0
        if done >= n:
            return done
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("campaign made no progress")


def _workers(pid: int) -> list:
    import psutil

    return [p for p in psutil.Process(pid).children(recursive=True)
            if any("spawn" in part or "multiprocessing" in part for part in p.cmdline())]


def test_killed_worker_and_killed_client_lose_no_finished_result(tmp_path):
    """A worker killed mid-run: its task is rescheduled, the campaign
    completes. The whole run killed mid-way: finished results stay, a rerun
    computes only the missing tasks."""
    tasks = 8
    path = _campaign_file(tmp_path, tasks, 40000)  # ≈ 0.6 s per task: the kills land mid-run
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    results = tmp_path / "r1"
    proc = subprocess.Popen([IBCLOUD, "campaign", "run", str(path), "-r", str(results), "--workers", "2", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    _wait_for(results, 1, proc)
    victims = _workers(proc.pid)
    assert victims, "no worker process found"
    victims[-1].kill()
    assert len(Store(results).finished()) < tasks  # the kill landed mid-run
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert (summary["ran"], summary["failed"]) == (tasks, 0)
    assert len(Store(results).finished()) == tasks

    results2 = tmp_path / "r2"
    proc = subprocess.Popen([IBCLOUD, "campaign", "run", str(path), "-r", str(results2), "--workers", "2", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    _wait_for(results2, 2, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    kept = len(Store(results2).finished())
    assert 2 <= kept < tasks
    rerun = subprocess.run([IBCLOUD, "campaign", "run", str(path), "-r", str(results2), "--workers", "2", "--json"],
                           capture_output=True, text=True, env=env, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    summary = json.loads(rerun.stdout)
    assert (summary["ran"], summary["skipped"]) == (tasks - kept, kept)
    # the two runs agree on every value that does not depend on timing
    cols = "task, seed, ebb_mean, ebb_min, ebb_max, broken_flows"
    a = query(results, f"SELECT {cols} FROM results ORDER BY task")
    b = query(results2, f"SELECT {cols} FROM results ORDER BY task")
    assert a.equals(b)


def test_load_reads_files_relative_to_the_campaign(tmp_path):
    from ibcloud import Fabric

    Fabric.generate("4-ary-2-full").write(tmp_path / "small.topo")
    (tmp_path / "c.toml").write_text('[[experiment]]\nkind = "route"\ntopology = "small.topo"\n')
    c = load(tmp_path / "c.toml")
    assert c.tasks[0].settings["topology"] == str((tmp_path / "small.topo").resolve())
    summary = run(c, tmp_path / "r", scheduler="inline", progress=False)
    assert summary.ran == 1 and summary.problems == 0


def test_example_campaign_validates(capsys):
    assert main(["campaign", "check", str(ROOT / "docs" / "examples" / "campaign.toml")]) == 0
    assert capsys.readouterr().out.startswith("example: 21 task(s)")


def test_reproduce_all_is_one_task_per_registered_reproduction(capsys):
    from ibcloud.cli.reproduce import REPRODUCTIONS, _campaign

    c = _campaign(list(REPRODUCTIONS), ["--no-plots"])
    assert [t.settings["reproduction"] for t in c.tasks] == list(REPRODUCTIONS)
    assert all(t.settings["options"] == ["--no-plots"] for t in c.tasks)
    # options every reproduction's parser must accept, checked before anything runs
    assert main(["reproduce", "all", "--no-such-option"]) == 2
    assert "unrecognized arguments: --no-such-option" in capsys.readouterr().err
