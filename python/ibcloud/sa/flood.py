"""The SA flooder (Paper I's SAF): SubnAdmGet(PathRecord) queries through
libibumad to the running SM, W outstanding at a time, every answer checked
against the expected (SL, MTU, rate) of our own resolution.

The loop runs in Rust (``ibcloud_sm::sa::flood``, GIL released). The
former Python loop over ctypes is kept as ``engine="python"`` only to
measure what it cost (issue 19: it capped a flood of OpenSM on ibsim at
~10 k queries/s at any window; ``bench/sa_flood.py --engines python
native`` shows both).

Counts, never crashes: answers that do not parse (``malformed``), whose TID
is not outstanding (``unmatched``), whose status is non-zero
(``status_errors``), whose (SLID, DLID, SL, MTU, rate) differ from ours
(``mismatched``), requests with no answer within the timeout (``timeouts``)
and sends libibumad refused (``send_errors``).

>>> s = FloodStats(window=4, duration=1.0, sent=10, answered=10, latencies_us=[100.0] * 10)
>>> s.summary()["qps"]
10.0
"""

from __future__ import annotations

import json
import random
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from ibcloud.safeio import checked_ints

__all__ = ["FloodStats", "flood", "main"]


@dataclass
class FloodStats:
    """What one flood did.

    >>> FloodStats(window=1).summary()["answered"]
    0
    """

    window: int
    duration: float = 0.0
    sent: int = 0
    answered: int = 0
    valid: int = 0
    mismatched: int = 0
    malformed: int = 0
    unmatched: int = 0
    status_errors: int = 0
    timeouts: int = 0
    send_errors: int = 0
    caching_flag: int = 0
    latencies_us: list[float] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    sm_lid: int = 0
    answered_in_window: int = 0
    rounds: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """Counts, queries/s and latency percentiles (µs).

        >>> FloodStats(window=2, duration=2.0, answered=4, latencies_us=[1, 2, 3, 4]).summary()["p50_us"]
        2.5
        """
        lat = sorted(self.latencies_us)

        def pct(p: float) -> float | None:
            if not lat:
                return None
            k = (len(lat) - 1) * p
            lo = int(k)
            hi = min(lo + 1, len(lat) - 1)
            return lat[lo] + (lat[hi] - lat[lo]) * (k - lo)

        out = {k: v for k, v in asdict(self).items() if k != "latencies_us"}
        out["qps"] = (self.answered_in_window or self.answered) / self.duration if self.duration > 0 else 0.0
        out["mean_us"] = sum(lat) / len(lat) if lat else None
        for name, p in (("p50_us", 0.5), ("p90_us", 0.9), ("p99_us", 0.99), ("max_us", 1.0)):
            out[name] = pct(p)
        return out


def _round_summary(number: int, window: int, lats: list[float], round_s: float) -> dict[str, Any]:
    """Q/s, mean, median and std. dev. (µs) of one round's answers.

    >>> _round_summary(1, 2, [1.0, 3.0], 2.0)["median_us"]
    2.0
    """
    n = len(lats)
    srt = sorted(lats)
    mean = sum(srt) / n if n else None
    median = (srt[(n - 1) // 2] + srt[n // 2]) / 2 if n else None
    std = (sum((x - mean) ** 2 for x in srt) / (n - 1)) ** 0.5 if n > 1 and mean is not None else None
    return {"round": number, "window": window, "answered": n, "qps": n / round_s, "mean_us": mean,
            "median_us": median, "std_us": std}


@checked_ints(pairs=(0, 0xFFFF), window=(1, 2**31 - 1), timeout_ms=(1, 2**31 - 1), sm_lid=(1, 0xBFFF), port=(0, 255))
def flood(
    pairs: list[tuple[int, int]],
    expected: dict[tuple[int, int], tuple[int, int, int]] | None,
    *,
    window: int = 1,
    duration: float = 5.0,
    timeout_ms: int = 1000,
    sm_lid: int | None = None,
    ca: str | None = None,
    port: int = 0,
    seed: int = 1,
    random_pairs: bool = True,
    max_queries: int | None = None,
    schedule: list[int] | None = None,
    round_s: float = 20.0,
    engine: str = "native",
) -> FloodStats:
    """Floods the SM for ``duration`` seconds keeping ``window`` queries outstanding.

    ``pairs`` are (SLID, DLID); drawn at random (``random_pairs``) or cycled
    in order. ``expected`` maps a pair to (SL, MTU code, rate code).
    ``schedule`` (Algorithm 1) gives the window of each round of ``round_s``
    seconds instead (0 = idle) and overrides ``window`` and ``duration``;
    per-round counts and latencies are then in ``stats.rounds``.

    >>> flood.__name__
    'flood'
    """
    if engine == "native":
        return _flood_native(pairs, expected, window=window, duration=duration, timeout_ms=timeout_ms,
                             sm_lid=sm_lid, ca=ca, port=port, seed=seed, random_pairs=random_pairs,
                             max_queries=max_queries, schedule=schedule, round_s=round_s)
    if engine != "python":
        raise ValueError(f"unknown flooder engine {engine!r} (native or python)")
    from ibcloud import _native
    from ibcloud.sa.umad import ETIMEDOUT, Umad

    if schedule is not None:
        if not schedule or min(schedule) < 0 or round_s <= 0:
            raise ValueError("a schedule needs rounds, windows >= 0 and a positive round length")
        duration = len(schedule) * round_s
        window = max(schedule)
    if window < 1:
        raise ValueError("window must be at least 1")
    if not pairs:
        raise ValueError("no (SLID, DLID) pairs to query")
    u = Umad(ca, port)
    stats = FloodStats(window=window)
    dst = sm_lid if sm_lid is not None else u.port.sm_lid
    stats.sm_lid = dst
    if not dst:
        u.close()
        raise RuntimeError("no SM: the port knows no SM LID (is a subnet manager running?)")
    rng = random.Random(seed)
    outstanding: dict[int, tuple[float, tuple[int, int]]] = {}
    tid = 0
    idx = 0
    get_mad, parse = _native.sa_get_path_mad, _native.sa_parse_mad
    now = time.perf_counter
    start = now()
    end = start + duration
    timeout_s = timeout_ms / 1000.0
    lat = stats.latencies_us
    per_round: list[list[float]] = [[] for _ in (schedule or [])]

    def send_one() -> None:
        nonlocal tid, idx
        if random_pairs:
            pair = pairs[rng.randrange(len(pairs))]
        else:
            pair = pairs[idx % len(pairs)]
            idx += 1
        tid = (tid + 1) & 0xFFFFFFFF
        if u.send(get_mad(tid, pair[0], pair[1]), dst, u.port.sm_sl, timeout_ms) < 0:
            stats.send_errors += 1
            return
        outstanding[tid] = (now(), pair)
        stats.sent += 1

    def take(got: tuple[int, bytes], t: float) -> None:
        status, mad = got
        try:
            method, mstatus, rtid, slid, dlid, sl, mtu, rate, caching, _life = parse(mad)
        except Exception:  # a malformed answer is counted, never fatal
            stats.malformed += 1
            return
        entry = outstanding.pop(rtid & 0xFFFFFFFF, None)
        if status == ETIMEDOUT:
            if entry is not None:
                stats.timeouts += 1
            return
        if entry is None or method != 0x81:
            stats.unmatched += 1
            return
        sent_at, pair = entry
        stats.answered += 1
        lat.append((t - sent_at) * 1e6)
        if per_round:
            per_round[min(int((t - start) / round_s), len(per_round) - 1)].append((t - sent_at) * 1e6)
        if mstatus != 0:
            stats.status_errors += 1
            return
        stats.caching_flag += bool(caching)
        want = expected.get(pair) if expected is not None else None
        if (slid, dlid) == pair and (want is None or want == (sl, mtu, rate)):
            stats.valid += 1
        else:
            stats.mismatched += 1
            if len(stats.examples) < 10:
                stats.examples.append(f"{pair}: got slid={slid} dlid={dlid} sl={sl} mtu={mtu} rate={rate}, "
                                      f"expected {want}")

    def expire(t: float) -> None:
        for k in [k for k, (s, _) in outstanding.items() if t - s > timeout_s]:
            del outstanding[k]
            stats.timeouts += 1

    try:
        while True:
            t = now()
            if t >= end or (max_queries is not None and stats.sent >= max_queries):
                break
            if schedule is not None:
                window = schedule[min(int((t - start) / round_s), len(schedule) - 1)]
            while len(outstanding) < window and (max_queries is None or stats.sent < max_queries):
                before = stats.send_errors
                send_one()
                if stats.send_errors > before:
                    break
            got = u.recv(min(timeout_ms, 100))
            t = now()
            if got is not None:
                take(got, t)
            expire(t)
        stats.duration = now() - start
        in_window = stats.answered
        # drain: answers to the last requests are checked, not counted in the rate
        while outstanding:
            got = u.recv(min(timeout_ms, 100))
            t = now()
            if got is not None:
                take(got, t)
            expire(t)
        stats.answered_in_window = in_window
        for r, lats in enumerate(per_round):
            stats.rounds.append(_round_summary(r + 1, (schedule or [0])[r], lats, round_s))
    finally:
        u.close()
    return stats


def _flood_native(pairs: list[tuple[int, int]], expected: dict[tuple[int, int], tuple[int, int, int]] | None, *,
                  window: int, duration: float, timeout_ms: int, sm_lid: int | None, ca: str | None, port: int,
                  seed: int, random_pairs: bool, max_queries: int | None, schedule: list[int] | None,
                  round_s: float) -> FloodStats:
    """:func:`flood` in Rust; the same statistics.

    >>> _flood_native.__name__
    '_flood_native'
    """
    from ibcloud import _native

    if schedule is not None and (not schedule or min(schedule) < 0 or round_s <= 0):
        raise ValueError("a schedule needs rounds, windows >= 0 and a positive round length")
    if window < 1 and schedule is None:
        raise ValueError("window must be at least 1")
    if not pairs:
        raise ValueError("no (SLID, DLID) pairs to query")
    spec = {"pairs": [list(p) for p in pairs],
            "expected": [[k[0], k[1], *v] for k, v in (expected or {}).items()],
            "window": window, "duration": duration, "timeout_ms": timeout_ms, "sm_lid": sm_lid,
            "seed": seed, "random": random_pairs, "max_queries": max_queries, "schedule": schedule,
            "round_s": round_s}
    try:
        raw = json.loads(_native.sm_sa_flood(json.dumps(spec), ca=ca, port=port))
    except _native.SmError as err:
        raise RuntimeError(str(err)) from err
    rounds = raw.pop("round_latencies_us", [])
    stats = FloodStats(**{k: v for k, v in raw.items() if k in FloodStats.__dataclass_fields__})
    for r, lats in enumerate(rounds):
        stats.rounds.append(_round_summary(r + 1, (schedule or [0])[r], lats, round_s))
    return stats


def main(argv: list[str] | None = None) -> int:
    """Worker entry point: ``python -m ibcloud.sa.flood SPEC.json OUT.json``
    (run under the shim by :func:`ibcloud.sa.run.flood_on_ibsim`).

    >>> main.__name__
    'main'
    """
    args = sys.argv[1:] if argv is None else argv
    spec = json.loads(Path(args[0]).read_text())
    pairs = [tuple(p) for p in spec["pairs"]]
    expected = {(e[0], e[1]): (e[2], e[3], e[4]) for e in spec["expected"]} if spec.get("expected") else None
    out: dict[str, Any] = {}
    import resource

    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    try:
        stats = flood(pairs, expected, window=spec.get("window", 1), duration=spec.get("duration", 5.0),
                      timeout_ms=spec.get("timeout_ms", 1000), sm_lid=spec.get("sm_lid"),
                      seed=spec.get("seed", 1), random_pairs=spec.get("random", True),
                      schedule=spec.get("schedule"), round_s=spec.get("round_s", 20.0),
                      engine=spec.get("engine", "native"))
        out = stats.summary()
        # The flooder's own CPU per answered query (user + system, all
        # threads): what it costs independent of how loaded the machine is.
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
        out["cpu_s"] = cpu
        out["cpu_us_per_query"] = cpu / stats.answered * 1e6 if stats.answered else None
    except Exception as err:  # reported to the parent, never a traceback
        out = {"error": f"{type(err).__name__}: {err}"}
    Path(args[1]).write_text(json.dumps(out))
    return 0 if "error" not in out else 1


if __name__ == "__main__":
    raise SystemExit(main())
