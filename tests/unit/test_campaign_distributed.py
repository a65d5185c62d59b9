"""A Dask scheduler and two workers started as separate processes on
loopback (the venv's ``dask scheduler`` / ``dask worker``) run a small
campaign; its results equal those of the in-process run, and the tasks were
spread over both workers."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ibcloud.campaign import load, query, run

BIN = Path(sys.executable).parent

CAMPAIGN = """\
[campaign]
name = "distributed"

[[experiment]]
name = "routes"
kind = "route"
topology = ["4-ary-2-full", "8-ary-2"]
engine = ["ftree", "minhop"]

[[experiment]]
name = "bisect"
kind = "analyze"
topology = "ft324"
runs = 50
seed = [1, 2, 3]

[[experiment]]
name = "moves"
kind = "migration"
topology = "4-ary-2-full"
population = [0.25, 0.5]
pattern = "random:8"
steps = 2
bisect_runs = 10
"""

# Values that do not depend on timing or on the worker that ran the task.
STABLE = ("task, row, kind, experiment, settings, status, verify_ok, reachable, pairs, unrouted, ebb_mean, ebb_min, "
          "ebb_max, broken_flows, record, percent, ebb_minrc, ebb_fresh, itrc_smps_mean, minrc_smps_mean")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def cluster(tmp_path):
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    logs = [open(tmp_path / f"{name}.log", "w") for name in ("scheduler", "worker1", "worker2")]
    procs = [subprocess.Popen([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], stdout=logs[0], stderr=subprocess.STDOUT)]
    try:
        deadline = time.time() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.time() < deadline, (tmp_path / "scheduler.log").read_text()
                time.sleep(0.1)
        for i in (1, 2):
            procs.append(subprocess.Popen([str(BIN / "dask"), "worker", address, "--host", "127.0.0.1",
                                           "--nthreads", "1", "--nworkers", "1", "--no-dashboard",
                                           "--name", f"w{i}"], stdout=logs[i], stderr=subprocess.STDOUT,
                                          cwd=tmp_path))
        from distributed import Client

        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for log in logs:
            log.close()


def test_external_scheduler_matches_local_run(cluster, tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(CAMPAIGN)
    campaign = load(path)
    assert len(campaign.tasks) == 4 + 3 + 2
    far = run(campaign, tmp_path / "far", scheduler=cluster, progress=False)
    assert (far.ran, far.failed, far.problems) == (9, 0, 0)
    near = run(campaign, tmp_path / "near", scheduler="inline", progress=False)
    assert near.ran == 9
    sql = f"SELECT {STABLE} FROM results ORDER BY task, row"
    a, b = query(tmp_path / "far", sql), query(tmp_path / "near", sql)
    assert len(a) == len(b) > 9
    assert a.equals(b)
    workers = query(tmp_path / "far", "SELECT DISTINCT worker FROM results").worker.tolist()
    assert len(workers) == 2 and all(w.startswith("tcp://127.0.0.1:") for w in workers)
    # the same campaign against the same scheduler again: nothing to do
    again = run(campaign, tmp_path / "far", scheduler=cluster, progress=False)
    assert (again.ran, again.skipped) == (0, 9)
    # and through the CLI
    out = subprocess.run([str(BIN / "ibcloud"), "campaign", "run", str(path), "-r", str(tmp_path / "cli"),
                          "--scheduler", cluster, "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["ran"] == 9
