"""G §6.1's motivation rows, judged by ``ibcloud reproduce drx`` as R10 and
R11 (python/ibcloud/claims/drx.toml, whose tolerances were committed
before these runs): two-host runs in the layout of ``reproduce sphinx``
(docs/reproductions/sphinx.md) with Table 8's calibrations.

* R10, Fig. 41: Nectere (64 KB requests) beside an RDMA-Memcached client
  that alternates 1,000 Gets of 4 KB and 1,000 of 512 KB, both on one SL.
  Nectere's latency per Memcached phase is a square wave; its amplitude is
  the mean over the 512 KB phases over the mean over the 4 KB phases − 1.
* R11, Fig. 44: two Nectere instances, 64 KB and 2 MB requests, clients on
  host A and servers on host B. The 64 KB one is on SL0 → VL0 at weight
  254, the 2 MB one on SL1 → VL1 at weight *x* (G Table 6's way of giving
  priority); "Equal" puts both on one SL. The 64 KB instance's PL (mean
  latency over its latency alone − 1) is traced over *x*.

>>> m = square_wave(per_size=100, cycles=1)
>>> m["phases"][0]["size"], m["phases"][1]["size"]
('4k', '512k')
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence

from ibcloud.checks import Check
from ibcloud.host.sphinx_reproduction import N_SERVICE_US, scenario
from ibcloud.host.thrashing import _run_all
from ibcloud.safeio import checked_ints

__all__ = ["WEIGHTS", "checks", "describe", "square_wave", "weight_sweep"]

#: Fig. 44's x axis, the 2 MB instance's VL weight (64-byte units), and the 64 KB instance's weight.
WEIGHTS = (1, 2, 4, 8, 16, 32, 64, 128, 254)
HIGH = 254
REL = 0.20            # R11: ±20 % relative (claims/drx.toml)
R10_BAND = (0.35, 0.45)


def _phases(result: Any, sizes: Sequence[str], per_size: int) -> List[Dict[str, Any]]:
    """Splits the run at Memcached's size changes (Get k has size
    ``sizes[(k // per_size) % len(sizes)]``) and averages Nectere's
    latencies completed inside each phase; the first phase starts after
    the warm-up of 2 ms."""
    lat = result.latencies()
    mc = lat[lat.vm == "mc"].time_s.tolist()
    nc = lat[lat.vm == "nc"]
    ends = [mc[k - 1] for k in range(per_size, len(mc) + 1, per_size)]
    out, t0 = [], 0.002
    for j, t1 in enumerate(ends):
        x = nc[(nc.time_s >= t0) & (nc.time_s < t1)].latency_us
        out.append({"size": sizes[j % len(sizes)], "start_s": t0, "end_s": t1, "requests": int(len(x)),
                    "nectere_us": float(x.mean()) if len(x) else math.nan})
        t0 = t1
    return out


@checked_ints(per_size=(1, 10 ** 6), cycles=(1, 100))
def square_wave(per_size: int = 1000, cycles: int = 2, arbitration: str = "per-packet",
                workers: Optional[int] = None) -> Dict[str, Any]:
    """R10 (G Fig. 41): Nectere beside Memcached alternating 4 KB and
    512 KB Gets, ``per_size`` each, for ``cycles`` cycles, on one SL.
    Returns the phases (size, time span, Nectere's mean latency), Nectere
    alone and the amplitude (512 KB phases over 4 KB phases − 1).

    >>> m = square_wave(per_size=100, cycles=1)
    >>> m["amplitude"] > 0
    True
    """
    sizes = ("4k", "512k")
    # Long enough for every phase: a 512 KB Get takes at most ≈ 300 µs collocated, a 4 KB one ≈ 60 µs.
    dur_ms = max(5, math.ceil(cycles * per_size * 0.4 + 5))
    mixed = scenario(dur_ms, weights=None, m_sizes=sizes, m_per_size=per_size, arbitration=arbitration)
    for w in mixed["workloads"]:
        if w["kind"] == "memcached":
            w["iterations"] = cycles * per_size * len(sizes)
    runs = _run_all([mixed, scenario(10, memcached=False, arbitration=arbitration)], workers)
    phases = _phases(runs[0], sizes, per_size)[: cycles * len(sizes)]
    lat = runs[1].latencies()
    alone = float(lat[(lat.vm == "nc") & (lat.time_s >= 0.002)].latency_us.mean())
    by = {z: [p["nectere_us"] for p in phases if p["size"] == z and p["requests"]] for z in sizes}
    small, large = by["4k"], by["512k"]
    amp = (sum(large) / len(large)) / (sum(small) / len(small)) - 1 if small and large else math.nan
    return {"per_size": per_size, "cycles": cycles, "arbitration": arbitration, "phases": phases,
            "nectere_alone_us": alone, "amplitude": amp,
            "separated": bool(small and large and min(large) > max(small))}


def _two_nectere(duration_ms: int, weights: Optional[tuple], small: bool = True, large: bool = True) -> Dict[str, Any]:
    sc = scenario(duration_ms, memcached=False, weights=weights)
    sc["vms"] = []
    sc["workloads"] = []
    for name, size, sl, on in (("n64k", "64k", 0, small), ("n2m", "2M", 1, large)):
        if not on:
            continue
        sc["vms"] += [{"name": name, "host": "A"}, {"name": name + "-srv", "host": "B"}]
        sc["workloads"].append({"kind": "nectere", "vm": name, "peer": name + "-srv", "size": size,
                                "reply-size": "64", "service": f"{N_SERVICE_US}us",
                                "sl": 0 if weights is None else sl})
    return sc


@checked_ints(duration_ms=(5, 10 ** 5))
def weight_sweep(duration_ms: int = 60, weights: Sequence[int] = WEIGHTS,
                 workers: Optional[int] = None) -> Dict[str, Any]:
    """R11 (G Fig. 44): the 64 KB Nectere's latency and PL alone, under
    Equal (one SL) and with the 2 MB instance's VL at each weight of
    ``weights`` (the 64 KB one's at 254).

    >>> w = weight_sweep(duration_ms=10, weights=[8])
    >>> w["equal"]["pl"] > 0, sorted(w["weighted"])
    (True, [8])
    """
    for x in weights:
        if not (isinstance(x, int) and 1 <= x <= 255):
            raise ValueError(f"weight_sweep: weights are VL arbitration weights 1-255, got {x!r}")
    scs = [_two_nectere(10, None, large=False), _two_nectere(duration_ms, None)]
    scs += [_two_nectere(duration_ms, (HIGH, int(x))) for x in weights]
    runs = _run_all(scs, workers)

    def mean(r: Any, vm: str) -> float:
        lat = r.latencies()
        return float(lat[(lat.vm == vm) & (lat.time_s >= 0.002)].latency_us.mean())

    alone = mean(runs[0], "n64k")

    def point(r: Any) -> Dict[str, float]:
        m = mean(r, "n64k")
        return {"n64k_us": m, "n2m_us": mean(r, "n2m"), "pl": m / alone - 1}

    return {"alone_us": alone, "equal": point(runs[1]),
            "weighted": {int(x): point(r) for x, r in zip(weights, runs[2:])}}


def checks(reg: Dict[str, Any], wave: Dict[str, Any], sweep: Dict[str, Any],
           wave_readings: Optional[Dict[str, Dict[str, Any]]] = None) -> List[Check]:
    """Judges R10 and R11 of ``reg`` (claims("drx")) on the runs above.

    >>> from ibcloud.checks import claims
    >>> cs = checks(claims("drx"), square_wave(per_size=100, cycles=1), weight_sweep(duration_ms=10, weights=[8]))
    >>> [c.as_dict()["id"] for c in cs]
    ['R10', 'R11']
    """
    lo, hi = R10_BAND
    amp = wave["amplitude"]
    ph = "; ".join(f"{p['size']} {p['nectere_us']:.1f}" for p in wave["phases"])
    extra = "".join(f"; reading, adapters {k} (not judged): {v['amplitude']:+.1%}"
                    for k, v in (wave_readings or {}).items())
    out = [reg["R10"].judge(
        math.isfinite(amp) and lo <= amp <= hi and wave["separated"],
        f"Nectere alone {wave['nectere_alone_us']:.1f} us; per phase (Memcached size, Nectere us): {ph}; amplitude "
        f"{amp:+.1%}, phases {'separated' if wave['separated'] else 'overlap'}" + extra)]
    eq = sweep["equal"]
    w8 = sweep["weighted"].get(8)
    curve = ", ".join(f"{x}: {p['pl']:+.1%}" for x, p in sorted(sweep["weighted"].items()))
    out.append(reg["R11"].judge(
        w8 is not None and eq["pl"] > 0 and abs(w8["pl"] / eq["pl"] - 1) <= REL,
        f"64 KB alone {sweep['alone_us']:.1f} us; PL under Equal {eq['pl']:+.1%}; with the 2 MB at weight x "
        f"(64 KB at {HIGH}): {curve}"))
    return out


def describe(m: Dict[str, Any]) -> List[str]:
    """The text lines of ``reproduce drx`` for R10 and R11 (``m`` is its
    summary's ``motivation``).

    >>> m = {"square_wave": square_wave(per_size=100, cycles=1), "weight_sweep": weight_sweep(10, [8]),
    ...      "square_wave_readings": {}}
    >>> describe(m)[0].startswith("G R10")
    True
    """
    w, sw = m["square_wave"], m["weight_sweep"]
    out = [f"G R10 (Fig. 41): Nectere 64 KB beside Memcached alternating 4 KB / 512 KB Gets ({w['per_size']} each), "
           f"one SL; Nectere alone {w['nectere_alone_us']:.1f} us",
           "  phases (Memcached size: Nectere mean us): " + ", ".join(
               f"{p['size']}: {p['nectere_us']:.1f}" for p in w["phases"]),
           f"  amplitude {w['amplitude']:+.1%} (prediction; thesis ≈ +40 %)" + "".join(
               f"; reading, adapters {k}: {v['amplitude']:+.1%} (not judged)"
               for k, v in m.get("square_wave_readings", {}).items()),
           f"G R11 (Fig. 44): 64 KB Nectere (VL0, weight {HIGH}) beside a 2 MB one (VL1, weight x); 64 KB alone "
           f"{sw['alone_us']:.1f} us, PL under Equal (one SL) {sw['equal']['pl']:+.1%}",
           "  PL of the 64 KB by x: " + ", ".join(f"{x}: {p['pl']:+.1%}" for x, p in sorted(sw["weighted"].items()))]
    return out
