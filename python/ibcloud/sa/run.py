"""Flooding OpenSM on ibsim: a long-running OpenSM (:class:`OpenSmDaemon`)
on an :class:`~ibcloud.interop.IbSim`, our resolution of the SM's own
fabric and tables as the expected answers, and the flooder run as a shimmed
worker process in the simulator's scratch folder (:func:`flood_on_ibsim`).

>>> OpenSmDaemon.__name__
'OpenSmDaemon'
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ibcloud.interop import IbSim, InteropError, _scratch_root, _tail
from ibcloud.safeio import checked_ints

__all__ = ["OpenSmDaemon", "benchmark_on_ibsim", "expected_answers", "flood_on_ibsim"]


class OpenSmDaemon:
    """OpenSM running as the subnet's SM (not ``-o``) until stopped, with its
    dumps (``opensm-subnet.lst``, ``opensm-lfts.dump``) in its own folder and
    periodic sweeps off, so the SA answers queries undisturbed.

    >>> from ibcloud import Fabric
    >>> import pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> Fabric.generate("4-ary-2-full").write(d / "t.net")
    >>> with IbSim(d / "t.net") as sim, OpenSmDaemon(sim) as sm:
    ...     sm.subnet_lst.exists()
    True
    """

    def __init__(self, sim: IbSim, *, config: dict[str, str] | None = None, timeout: float = 600.0) -> None:
        self.sim = sim
        self.dir = Path(tempfile.mkdtemp(prefix="opensm-sa-", dir=_scratch_root()))
        self.dump_dir = self.dir / "dumps"
        self.cache_dir = self.dir / "cache"
        self.dump_dir.mkdir()
        self.cache_dir.mkdir()
        self.log = self.dir / "opensm.log"
        self.config = {"dump_files_dir": str(self.dump_dir), "sweep_interval": "0", **(config or {})}
        self.timeout = timeout
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def subnet_lst(self) -> Path:
        """OpenSM's view of the fabric.

        >>> OpenSmDaemon.subnet_lst.__doc__.split()[0]
        "OpenSM's"
        """
        return self.dump_dir / "opensm-subnet.lst"

    @property
    def lfts(self) -> Path:
        """OpenSM's forwarding tables.

        >>> OpenSmDaemon.lfts.__doc__.split()[0]
        "OpenSM's"
        """
        return self.dump_dir / "opensm-lfts.dump"

    def start(self) -> OpenSmDaemon:
        """Starts OpenSM and waits for SUBNET UP and its dumps.

        >>> OpenSmDaemon.start.__name__
        'start'
        """
        conf = self.dir / "opensm.conf"
        conf.write_text("".join(f"{k} {v}\n" for k, v in self.config.items()))
        env = self.sim.client_env()
        env["OSM_CACHE_DIR"] = str(self.cache_dir)
        cmd = ["opensm", "-F", str(conf), "-f", str(self.log), "-d", "2", "-D", "0x43"]
        self.proc = subprocess.Popen(cmd, cwd=self.sim.workdir, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + self.timeout
        while True:
            text = self.log.read_text(errors="replace") if self.log.exists() else ""
            if "SUBNET UP" in text and self.lfts.exists() and self.subnet_lst.exists():
                time.sleep(0.5)  # let the dumps finish
                return self
            if self.proc.poll() is not None:
                raise InteropError(f"opensm exited with {self.proc.returncode}:\n{_tail(self.log)}")
            if time.monotonic() > deadline:
                self.stop()
                raise InteropError(f"opensm did not bring the subnet up within {self.timeout:.0f} s")
            time.sleep(0.2)

    def stop(self) -> None:
        """Stops OpenSM (by PID) and removes its folder.

        >>> OpenSmDaemon.stop.__name__
        'stop'
        """
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        import shutil

        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> OpenSmDaemon:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@checked_ints(pairs=(0, 0xFFFF), mtu=(1, 5))
def expected_answers(tables: Any, pairs: list[tuple[int, int]], *, mtu: int = 4,
                     path_sls: Any = None) -> tuple[dict[tuple[int, int], tuple[int, int, int]], list[str]]:
    """Our resolution of ``pairs`` on ``tables`` (an :class:`ibcloud.tables.ForwardingTables`):
    (SL, MTU code, rate code) per pair, and the problems of pairs with no path.

    >>> from ibcloud import Fabric, route
    >>> f = Fabric.generate("4-ary-2-full")
    >>> t = route(f, "minhop").tables
    >>> lids = sorted(n["lid"] for n in f.nodes() if n["kind"] == "ca")
    >>> ans, bad = expected_answers(t, [(lids[0], lids[-1])])
    >>> ans[(lids[0], lids[-1])], bad
    ((0, 4, 7), [])
    """
    from ibcloud import _native

    native_sls = getattr(path_sls, "_native", path_sls)
    out: dict[tuple[int, int], tuple[int, int, int]] = {}
    problems: list[str] = []
    for pair, (ans, err) in zip(pairs, _native.sa_resolve(tables._native, pairs, native_sls, mtu)):
        if ans is None:
            problems.append(f"{pair}: {err}")
        else:
            out[pair] = (ans[0], ans[1], ans[2])
    return out, problems


@checked_ints(windows=(1, 2**31 - 1), timeout_ms=(1, 2**31 - 1), sm_lid=(1, 0xBFFF), mtu=(256, 4096))
def flood_on_ibsim(
    net_file: str | os.PathLike[str],
    windows: list[int],
    *,
    duration: float = 5.0,
    num_pairs: int = 4096,
    seed: int = 1,
    mtu: int = 4,
    timeout_ms: int = 1000,
    sm_lid: int | None = None,
    opensm_config: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Starts ibsim and OpenSM on ``net_file``, resolves ``num_pairs`` random
    CA pairs on OpenSM's own fabric and tables, and floods once per window.

    Returns ``{"nodes": …, "runs": [summary per window], "unresolved": […]}``.

    >>> flood_on_ibsim.__name__
    'flood_on_ibsim'
    """
    from ibcloud import Fabric
    from ibcloud.tables import read_lfts

    runs = []
    with IbSim(net_file) as sim, OpenSmDaemon(sim, config=opensm_config) as sm:
        fabric = Fabric.read(sm.subnet_lst)
        tables = read_lfts(sm.lfts, fabric)
        lids = sorted(n["lid"] for n in fabric.nodes() if n["kind"] == "ca")
        rng = random.Random(seed)
        pairs = [(rng.choice(lids), rng.choice(lids)) for _ in range(num_pairs)]
        expected, problems = expected_answers(tables, pairs, mtu=mtu)
        for w in windows:
            spec = sim.workdir / f"flood-w{w}.json"
            out = sim.workdir / f"flood-w{w}.out.json"
            spec.write_text(json.dumps({
                "pairs": pairs, "expected": [[*k, *v] for k, v in expected.items()], "window": w,
                "duration": duration, "timeout_ms": timeout_ms, "sm_lid": sm_lid, "seed": seed,
            }))
            env = sim.client_env()
            cmd = [sys.executable, "-m", "ibcloud.sa.flood", str(spec), str(out)]
            try:
                done = subprocess.run(cmd, cwd=sim.workdir, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                                      text=True, timeout=duration + 120)
            except subprocess.TimeoutExpired:
                runs.append({"window": w, "error": "flooder did not finish"})
                continue
            if out.exists():
                runs.append(json.loads(out.read_text()))
            else:
                runs.append({"window": w, "error": f"flooder exited with {done.returncode}: {done.stderr[-500:]}"})
    return {"net": str(net_file), "nodes": len(lids), "pairs": len(pairs), "runs": runs, "unresolved": problems}


@checked_ints(timeout_ms=(1, 2**31 - 1), mtu=(256, 4096))
def benchmark_on_ibsim(
    net_file: str | os.PathLike[str],
    *,
    mifs: int = 1,
    k: int = 8,
    rounds: int = 3,
    round_s: float = 20.0,
    num_pairs: int = 4096,
    seed: int = 1,
    mtu: int = 4,
    timeout_ms: int = 1000,
) -> dict[str, Any]:
    """Paper I's Algorithm 1 against OpenSM on ibsim: one SIF flooder with
    one query outstanding, ``mifs`` MIF flooders (separate processes, each
    a host) whose window grows by ``k`` per round from round 2; per round the
    SIF's Q/s, mean, median and std. dev. and the total Q/s. ibsim takes at
    most 10 clients: OpenSM + SIF + up to 8 MIFs.

    >>> benchmark_on_ibsim.__name__
    'benchmark_on_ibsim'
    """
    from ibcloud import Fabric
    from ibcloud.tables import read_lfts

    if not 0 <= mifs <= 8:
        raise InteropError("ibsim takes at most 10 clients: 0 to 8 MIFs")
    schedules = [[1] * rounds] + [[0] + [k * r for r in range(1, rounds)] for _ in range(mifs)]
    with IbSim(net_file) as sim, OpenSmDaemon(sim) as sm:
        fabric = Fabric.read(sm.subnet_lst)
        tables = read_lfts(sm.lfts, fabric)
        lids = sorted(n["lid"] for n in fabric.nodes() if n["kind"] == "ca")
        rng = random.Random(seed)
        pairs = [(rng.choice(lids), rng.choice(lids)) for _ in range(num_pairs)]
        expected, problems = expected_answers(tables, pairs, mtu=mtu)
        procs = []
        for i, sched in enumerate(schedules):
            spec = sim.workdir / f"bench-{i}.json"
            spec.write_text(json.dumps({
                "pairs": pairs, "expected": [[*kk, *v] for kk, v in expected.items()], "schedule": sched,
                "round_s": round_s, "timeout_ms": timeout_ms, "seed": seed + i,
            }))
            out = sim.workdir / f"bench-{i}.out.json"
            procs.append((out, subprocess.Popen([sys.executable, "-m", "ibcloud.sa.flood", str(spec), str(out)],
                                                cwd=sim.workdir, env=sim.client_env(), stdin=subprocess.DEVNULL,
                                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)))
        results = []
        for out, proc in procs:
            try:
                _, err = proc.communicate(timeout=rounds * round_s + 120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                results.append({"error": "flooder did not finish"})
                continue
            results.append(json.loads(out.read_text()) if out.exists()
                           else {"error": f"flooder exited with {proc.returncode}: {err.decode(errors='replace')[-300:]}"})
    table = []
    for r in range(rounds):
        sif = results[0].get("rounds", [{}] * rounds)[r] if "error" not in results[0] else {}
        total = sum(res["rounds"][r]["qps"] for res in results if "error" not in res)
        table.append({"round": r + 1, "instances": 1 + mifs * k * r, "sif_qps": sif.get("qps"),
                      "sif_mean_us": sif.get("mean_us"), "sif_median_us": sif.get("median_us"),
                      "sif_std_us": sif.get("std_us"), "total_qps": total})
    bad = sum(res.get("answered", 0) - res.get("valid", 0) for res in results if "error" not in res)
    return {"nodes": len(lids), "mifs": mifs, "k": k, "rounds": table, "wrong_answers": bad,
            "errors": [res["error"] for res in results if "error" in res], "unresolved": problems}
