"""HPCC b_eff latency statistics (S003 Tables II/III) from one-way message
latencies measured on the packet simulator.

HPCC's ``bench_lat_bw`` measures latency with 8-byte messages in two ways:

* **ping-pong**: one client/server pair at a time (every ordered pair of
  processes, each as client once), 8 round trips per measurement, latency =
  time / 16, the minimum of 5 measurements; min / avg / max over the pairs;
* **rings**: all processes at once, each sends to its left and right
  neighbour and receives from both (``MPI_Sendrecv`` right then left, and
  ``Isend``/``Irecv`` both plus ``Waitall``), 5 timed iterations after one
  warm-up, latency = time / (2 × 5), the smaller of the two methods, the
  maximum over processes, the minimum of 8 measurements; the naturally
  ordered ring, and the geometric mean over 30 random rings.

The simulator cannot run a closed loop (a message posted when another one
arrives), so :mod:`ibcloud.dftree.reproduction` measures one-way network
latencies of sparse 8-byte probes between every ordered pair under the
hot-spot background (posted at the same instants for all pairs, every
period), and the functions here replay HPCC's loops on those samples: the
k-th exchange of a pair uses the pair's k-th sample. ``o`` is the end-host
software latency of one message (MPI send + receive), the one parameter
fitted (to one paper value, a calibration).

>>> lat = {(0, 1): [1.0] * 80, (1, 0): [1.0] * 80}
>>> pingpong(lat, o=1.0)
(2.0, 2.0, 2.0)
>>> round(ring([0, 1], lat, o=1.0), 3)
1.0
"""

from __future__ import annotations

import math
import random
from typing import Dict, List, Sequence, Tuple

from ibcloud.safeio import checked_ints

__all__ = ["pingpong", "ring", "random_rings", "LOOPS", "MEASUREMENTS", "RING_LOOPS", "RING_MEASUREMENTS",
           "RANDOM_RINGS"]

#: HPCC's ping-pong: 8 round trips per measurement, 5 measurements.
LOOPS, MEASUREMENTS = 8, 5
#: HPCC's ring latency: 5 timed iterations (+1 warm-up), 8 measurements, 30 random rings.
RING_LOOPS, RING_MEASUREMENTS, RANDOM_RINGS = 5, 8, 30

Samples = Dict[Tuple[int, int], Sequence[float]]


def _take(lat: Samples, pair: Tuple[int, int], k: int) -> float:
    s = lat[pair]
    if not s:
        raise ValueError(f"no latency samples for pair {pair}")
    return s[k % len(s)]


def pingpong(lat: Samples, o: float) -> Tuple[float, float, float]:
    """(min, avg, max) ping-pong latency over all ordered pairs (client,
    server) of ``lat``'s keys: per pair the minimum over
    :data:`MEASUREMENTS` of the mean one-way time of :data:`LOOPS` round
    trips, each one-way time = sample + ``o``. Client *a* of pair {a, b}
    uses samples 0…39, client *b* samples 40…79 (HPCC measures both).

    >>> lat = {(0, 1): [1.0] * 40 + [3.0] * 40, (1, 0): [1.0] * 80}
    >>> pingpong(lat, o=0.0)
    (1.0, 1.5, 2.0)
    >>> pingpong({(0, 1): [], (1, 0): [1.0]}, 0.0)
    Traceback (most recent call last):
    ...
    ValueError: no latency samples for pair (0, 1)
    """
    per_pair = []
    for (a, b) in sorted(lat):
        base = 0 if a < b else LOOPS * MEASUREMENTS
        best = math.inf
        for m in range(MEASUREMENTS):
            t = 0.0
            for r in range(LOOPS):
                k = base + m * LOOPS + r
                t += _take(lat, (a, b), k) + _take(lat, (b, a), k) + 2 * o
            best = min(best, t / (2 * LOOPS))
        per_pair.append(best)
    return min(per_pair), sum(per_pair) / len(per_pair), max(per_pair)


@checked_ints
def ring(order: Sequence[int], lat: Samples, o: float, start: int = 0) -> float:
    """HPCC's ring latency of the ring ``order`` (process ids, neighbours
    adjacent, wrapping): the minimum over :data:`RING_MEASUREMENTS` of the
    maximum over processes of min(Sendrecv loop, non-blocking loop) /
    (2 × :data:`RING_LOOPS`). A message from p to q sent at t arrives at
    t + o + the next sample of (p, q). Processes start each loop together.
    ``start`` offsets the sample index (different rings use different
    samples).

    Sendrecv: phase 1 sends right and waits for the left neighbour's
    message, phase 2 the other way; non-blocking: both sends at once, wait
    for both messages.

    >>> lat = {(i, j): [1.0] for i in range(3) for j in range(3) if i != j}
    >>> ring([0, 1, 2], lat, o=0.0)  # non-blocking: one latency per 2 messages
    0.5
    >>> lat[(0, 1)] = [5.0]
    >>> ring([0, 1, 2], lat, o=0.0)  # the slow link holds up everyone
    1.7
    """
    n = len(order)
    left = {order[i]: order[(i - 1) % n] for i in range(n)}
    right = {order[i]: order[(i + 1) % n] for i in range(n)}
    k = {pair: start for pair in lat}

    def sample(p: int, q: int) -> float:
        v = _take(lat, (p, q), k[(p, q)])
        k[(p, q)] += 1
        return v

    best = math.inf
    for _ in range(RING_MEASUREMENTS):
        per: Dict[int, List[float]] = {p: [] for p in order}
        for variant in ("sendrecv", "nonblocking"):
            t = {p: 0.0 for p in order}
            t0 = dict(t)
            for it in range(-1, RING_LOOPS):
                if it == 0:
                    t0 = dict(t)
                if variant == "sendrecv":
                    t = {p: max(t[p], t[left[p]] + o + sample(left[p], p)) for p in order}
                    t = {p: max(t[p], t[right[p]] + o + sample(right[p], p)) for p in order}
                else:
                    t = {p: max(t[left[p]] + o + sample(left[p], p), t[right[p]] + o + sample(right[p], p))
                         for p in order}
            for p in order:
                per[p].append((t[p] - t0[p]) / (2 * RING_LOOPS))
        best = min(best, max(min(v) for v in per.values()))
    return best


@checked_ints
def random_rings(n: int, lat: Samples, o: float, count: int = RANDOM_RINGS, seed: int = 0) -> float:
    """Geometric mean of :func:`ring` over ``count`` random orderings of
    processes 0…n−1 (HPCC: 30).

    >>> lat = {(i, j): [2.0] for i in range(4) for j in range(4) if i != j}
    >>> random_rings(4, lat, o=0.0, count=3)
    1.0
    """
    rng = random.Random(seed)
    logs = []
    for c in range(count):
        order = list(range(n))
        rng.shuffle(order)
        logs.append(math.log(ring(order, lat, o, start=c * 7)))
    return math.exp(sum(logs) / count)
