"""``ibcloud reproduce sphinx``: G R12-R16, Latency Proportionality and
Sphinx (Ranadive ch. VII, Tables 8, Eq. 8, Figs. 47-55) on the host
simulator, Nectere beside RDMA-Memcached.

Every claim is a record of python/ibcloud/claims/sphinx.toml (committed
before these runs), judged here and printed as the scoreboard at the end;
only prediction and qualitative rows decide the exit status.

Layout (G §6.3, Fig. 46, our reading): two hosts on one QDR switch, 4 KB
MTU. Nectere's client (host A) sends 64 KB requests to its server (host
B); Memcached's server (host A) sends 512 KB values to its client (host
B). Both cross host A's link: one of Fig. 46's two link-sharing pairs.
Nectere is on SL0 → VL0, Memcached on SL1 → VL1 (their own SLs), VL
arbitration weights from the case. Congestion control is on only as the
actuator (switches never mark): a linear CCT whose time per index is
fitted to Eq. 8's slope (**calibration**, A15). Calibrations: Nectere's
server compute to Table 8's 48 µs, Memcached's lookup time to 187 µs.

>>> s = reproduce("tour")
>>> round(s["base"]["nectere_us"]), round(s["base"]["memcached_us"])   # calibration
(48, 187)
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ibcloud.checks import Check, claims, complete, render_scoreboard
from ibcloud.host.ibmon import checks_of, finish
from ibcloud.host.thrashing import _run_all
from ibcloud.safeio import checked_ints

__all__ = ["TARGETS", "bp_weights", "configure", "reproduce", "run", "scenario"]

#: LP targets of Table 8 (PL_Nectere : PL_Memcached).
TARGETS = {"1:1": 1.0, "1:4": 0.25, "4:1": 4.0, "1:10": 0.1}
#: Table 8 as printed: base, collocated, BP and LP latencies (Nectere, Memcached), µs.
TABLE8_BASE = (48.0, 187.0)
TABLE8_COLL = (64.1, 196.7)
TABLE8_BP = {"1:1": (63.7, 204.5), "1:4": (63.3, 205.1), "4:1": (65.8, 196.9), "1:10": (63.0, 205.5)}
TABLE8_LP = {"1:1": (59.2, 230.0), "1:4": (54.0, 284.0), "4:1": (63.6, 200.3), "1:10": (52.4, 364.0)}

# Calibrations (fitted, see docs/reproductions/sphinx.md; never evidence).
#: Nectere's server compute, fitted so that 64 KB Nectere alone takes Table 8's 48 µs.
N_SERVICE_US = 19.1
#: Memcached's lookup time, fitted so that a 512 KB Get alone takes Table 8's 187 µs.
M_SERVICE_US = 42.68
#: The CCT's time per index (ps), fitted so that Eq. 8's slope is 1.28 index per % (A15).
CCT_UNIT_PS = 8160

EQ8_SLOPE = 1.28
CCTI_LIMIT = 127
#: The grid "hand-tuning" searches: VL arbitration weights (Nectere VL0, Memcached VL1) × Memcached's delay.
GRID_WEIGHTS = [(1, 255), (16, 255), (32, 128), (32, 32), (128, 32), (255, 16), (255, 1)]
#: Delays of the grid: ≥ 0 on Memcached's server, < 0 on Nectere's client (−d = CCT index d there).
GRID_DELAYS = [0, 4, 8, 16, 32, 64, 96, 127, -4, -8, -16, -32, -64, -127]
#: Sizes and durations: (static runs, Sphinx runs) in ms.
DURATIONS = {"default": (30, 600), "tour": (10, 0)}
REL = 0.20        # ±20 % relative (claims/sphinx.toml)
NEAR_MANUAL = 0.10
FLAT = 0.01
PERIOD = "1ms"    # Sphinx's control period (the seed gives none)


def bp_weights(target: float) -> Tuple[int, int]:
    """BP (G §6.2): VL weights (Nectere, Memcached) in the inverse ratio of
    the LP target, the larger one 128 (64-byte units, ≤ 255).

    >>> bp_weights(0.25), bp_weights(1.0), bp_weights(4.0), bp_weights(0.1)
    ((128, 32), (128, 128), (32, 128), (128, 13))
    """
    if not (target > 0 and math.isfinite(target)):
        raise ValueError(f"target must be a positive number, got {target}")
    if target <= 1:
        return 128, max(1, round(128 * target))
    return max(1, round(128 / target)), 128


def _fabric(weights: Optional[Tuple[int, int]], cct_unit_ps: int) -> Dict[str, Any]:
    f: Dict[str, Any] = {"link": "4xQDR", "mtu": 4096,
                         "congestion-control": {"threshold": 0, "cct-unit": int(cct_unit_ps),
                                                "cct": [{"shift": 0, "multiplier": i} for i in range(128)]}}
    if weights is not None:
        f["vls"] = 2
        f["sl2vl"] = [0, 1] + [0] * 14
        f["vl-arbitration"] = {"low": [{"vl": 0, "weight": int(weights[0])}, {"vl": 1, "weight": int(weights[1])}]}
    return f


@checked_ints(duration_ms=(1, 10 ** 6), delay=(-CCTI_LIMIT, CCTI_LIMIT), cct_unit_ps=(1, 10 ** 9), weights=(1, 255),
              m_per_size=(1, 10 ** 9))
def scenario(duration_ms: int = 30, nectere: bool = True, memcached: bool = True,
             weights: Optional[Tuple[int, int]] = (32, 32), delay: int = 0, n_service_us: float = N_SERVICE_US,
             m_service_us: float = M_SERVICE_US, cct_unit_ps: int = CCT_UNIT_PS,
             controllers: Optional[List[Dict[str, Any]]] = None, arbitration: str = "per-packet",
             n_size: str = "64k", m_sizes: Tuple[str, ...] = ("512k",), m_per_size: int = 10 ** 7,
             jitter: float = 0.0) -> Dict[str, Any]:
    """A host scenario in the layout above: ``weights`` = VL weights
    (Nectere, Memcached) with each application on its own SL, or None for
    one shared SL (Unmanaged); ``delay`` = a static CCT index on the
    Memcached server's queue pairs (the Manual knob), or with a negative
    value on Nectere's client; ``arbitration`` = the adapters' (docs/host.md);
    ``n_size`` = Nectere's request size; ``m_sizes`` = Memcached's value
    sizes, cycled ``m_per_size`` Gets each (G Fig. 41's alternating client);
    ``jitter`` = both servers' ``service-jitter`` (docs/host.md).

    >>> sc = scenario(weights=(128, 32), delay=16)
    >>> [v["name"] for v in sc["vms"]], sc["controllers"][0]["ccti"]
    (['nc', 'ns', 'ms', 'mc'], 16)
    >>> scenario(delay=200)
    Traceback (most recent call last):
    ...
    ibcloud.safeio.IntRangeError: delay=200 is out of range (-127 to 127)
    """
    for name, v in (("n_service_us", n_service_us), ("m_service_us", m_service_us)):
        if not (v >= 0 and math.isfinite(v)):
            raise ValueError(f"scenario: {name} must be a non-negative number of us, got {v}")
    if not (0 <= jitter < 1):
        raise ValueError(f"scenario: jitter must be a fraction in [0, 1), got {jitter}")
    vms: List[Dict[str, Any]] = []
    wls: List[Dict[str, Any]] = []
    if nectere:
        vms += [{"name": "nc", "host": "A"}, {"name": "ns", "host": "B"}]
        wls.append({"kind": "nectere", "vm": "nc", "peer": "ns", "size": n_size, "reply-size": "64",
                    "service": f"{n_service_us}us", "sl": 0})
    if memcached:
        vms += [{"name": "ms", "host": "A"}, {"name": "mc", "host": "B"}]
        wls.append({"kind": "memcached", "vm": "mc", "peer": "ms", "sizes": list(m_sizes), "per-size": int(m_per_size),
                    "service": f"{m_service_us}us", "sl": 0 if weights is None else 1})
    sc: Dict[str, Any] = {"duration": f"{duration_ms}ms", "sample-interval": "1ms",
                          "fabric": _fabric(weights, cct_unit_ps),
                          "hosts": [{"name": h, "adapter": {"arbitration": arbitration}} for h in "AB"],
                          "vms": vms, "workloads": wls}
    ctl = list(controllers or [])
    if delay > 0 and memcached:
        ctl.append({"kind": "cc-delay", "vms": ["ms"], "ccti": int(delay)})
    if delay < 0 and nectere:
        ctl.append({"kind": "cc-delay", "vms": ["nc"], "ccti": int(-delay)})
    if ctl:
        sc["controllers"] = ctl
    if jitter > 0:
        for w in wls:
            w["service-jitter"] = float(jitter)
    return sc


#: Table 9 as printed, per row (LP target): bases, Collocated, BP and LP latencies (Nectere, Memcached), µs.
TABLE9 = {"1:1": ((100.5, 99.5), (121.3, 112.8), (116.3, 110.4), (116.0, 113.5)),
          "1:4": ((212.0, 187.0), (238.2, 191.4), (225.6, 195.6), (222.3, 215.9)),
          "4:1": ((48.0, 46.7), (57.4, 51.1), (60.7, 50.6), (60.8, 50.3)),
          "1:10": ((212.0, 99.5), (223.4, 112.6), (223.5, 103.8), (219.5, 132.8))}
#: Memcached's value size per base (reading, claims/sphinx.toml R12-t9-base-*): G's three sizes paired with the
#: three bases in order; a 512 KB Get cannot finish in under 132 µs on QDR, so 99.5 and 46.7 µs are smaller values.
T9_M_SIZE = {187.0: "512k", 99.5: "16k", 46.7: "4k"}


def _fit_services(workers: Optional[int]) -> Dict[str, Dict[float, float]]:
    """Table 9's calibrations, in one step each: alone, a request's latency
    is the fabric's part plus the server's compute, so one run at zero
    compute gives the compute each base needs (64 KB Nectere requests;
    Memcached's value size per base from ``T9_M_SIZE``)."""
    sizes = sorted(set(T9_M_SIZE.values()))
    pilots = [scenario(10, memcached=False, n_service_us=0.0)] + [
        scenario(10, nectere=False, m_service_us=0.0, m_sizes=(z,)) for z in sizes]
    res = _run_all(pilots, workers)
    n0 = _mean(res[0], "nc", 0.002)
    m0 = {z: _mean(r, "mc", 0.002) for z, r in zip(sizes, res[1:])}
    return {"nectere": {b: round(b - n0, 3) for b in sorted({v[0][0] for v in TABLE9.values()})},
            "memcached": {b: round(b - m0[z], 3) for b, z in T9_M_SIZE.items()},
            "zero_compute": {"nectere_64k": n0, **{f"memcached_{z}": v for z, v in m0.items()}}}


def _table9(size: str, short: int, long_: int, workers: Optional[int]) -> Tuple[Dict[str, Any], List[Check]]:
    """Table 9's four rows and Figs. 53(a)/54(a): each row is its own
    Nectere/Memcached pair, calibrated to its bases, then Collocated, BP and
    (default size) the same QoS × CC grid as Table 8, and Sphinx on the
    1:1 and 1:4 pairs."""
    fit = _fit_services(workers)
    cases: List[Tuple[str, Dict[str, Any]]] = []
    pair: Dict[str, Dict[str, Any]] = {}
    grid = [(w, d) for w in GRID_WEIGHTS for d in GRID_DELAYS] if size == "default" else []
    for t, (b, *_rest) in TABLE9.items():
        kw = dict(n_service_us=fit["nectere"][b[0]], m_service_us=fit["memcached"][b[1]], m_sizes=(T9_M_SIZE[b[1]],))
        pair[t] = kw
        cases += [(f"{t}/base-n", scenario(short, memcached=False, **kw)),
                  (f"{t}/base-m", scenario(short, nectere=False, **kw)),
                  (f"{t}/collocated", scenario(short, **kw)),
                  # Reading (never judged): both servers' compute ±JITTER, so the closed loops cannot phase-lock.
                  (f"{t}/jitter-base-n", scenario(short, memcached=False, jitter=JITTER, **kw)),
                  (f"{t}/jitter-base-m", scenario(short, nectere=False, jitter=JITTER, **kw)),
                  (f"{t}/jitter-collocated", scenario(short, jitter=JITTER, **kw)),
                  (f"{t}/bp", scenario(short, weights=bp_weights(TARGETS[t]), **kw))]
        cases += [(f"{t}/grid-{w[0]}-{w[1]}-{d}", scenario(short, weights=w, delay=d, **kw)) for w, d in grid]
    if long_:
        for t in ("1:1", "1:4"):
            cases.append((f"{t}/sphinx", scenario(long_, controllers=[_sphinx(t, TABLE9[t][0])], **pair[t])))
        # Reading (never judged): Fig. 55's own pair (212 / 187 µs) for the 1:4 → 1:1 change; R16 is judged on 48 / 187.
        cases.append(("1:4/retarget", scenario(2 * long_, controllers=[
            _sphinx("1:4", TABLE9["1:4"][0], retarget=(f"{long_}ms", "1:1"))], **pair["1:4"])))
    res = dict(zip([n for n, _ in cases], _run_all([sc for _, sc in cases], workers)))
    warm = 0.002
    reg = claims("sphinx")
    checks: List[Check] = []
    rows: Dict[str, Any] = {}
    for t, (paper_base, paper_coll, paper_bp, paper_lp) in TABLE9.items():
        base = (_mean(res[f"{t}/base-n"], "nc", warm), _mean(res[f"{t}/base-m"], "mc", warm))

        def row(name: str, t0: float = warm, t1: float = math.inf) -> Dict[str, Any]:
            ln, lm = _mean(res[name], "nc", t0, t1), _mean(res[name], "mc", t0, t1)
            pn, pm, r = _pl((ln, lm), base)
            return {"nectere_us": ln, "memcached_us": lm, "pl_nectere": pn, "pl_memcached": pm, "ratio": r}

        jb = (_mean(res[f"{t}/jitter-base-n"], "nc", warm), _mean(res[f"{t}/jitter-base-m"], "mc", warm))
        jl = (_mean(res[f"{t}/jitter-collocated"], "nc", warm), _mean(res[f"{t}/jitter-collocated"], "mc", warm))
        jp = _pl(jl, jb)
        x: Dict[str, Any] = {"base": base, "memcached_size": T9_M_SIZE[paper_base[1]],
                             "jitter_collocated": {"jitter": JITTER, "base": jb, "nectere_us": jl[0],
                                                   "memcached_us": jl[1], "pl_nectere": jp[0], "pl_memcached": jp[1]},
                             "services_us": (pair[t]["n_service_us"], pair[t]["m_service_us"]),
                             "collocated": row(f"{t}/collocated"),
                             "bp": row(f"{t}/bp") | {"weights": bp_weights(TARGETS[t])},
                             "grid": [row(f"{t}/grid-{w[0]}-{w[1]}-{d}") | {"weights": w, "delay": d}
                                      for w, d in grid]}
        checks.append(reg[f"R12-t9-base-{t}"].judge(
            all(abs(o - p) <= 0.5 for o, p in zip(base, paper_base)),
            f"{base[0]:.2f} : {base[1]:.2f} us (compute {pair[t]['n_service_us']:.2f} / lookup "
            f"{pair[t]['m_service_us']:.2f} us fitted; Memcached {x['memcached_size']} values)"))
        pp = _pl(paper_coll, paper_base)
        co = x["collocated"]
        checks.append(reg[f"R12-t9-coll-{t}"].judge(
            pp[1] > 0 and abs(co["pl_nectere"] / pp[0] - 1) <= REL and abs(co["pl_memcached"] / pp[1] - 1) <= REL,
            f"{co['nectere_us']:.1f} : {co['memcached_us']:.1f} us, {co['pl_nectere']:+.1%} : "
            f"{co['pl_memcached']:+.1%} (thesis {pp[0]:+.1%} : {pp[1]:+.1%}); reading, compute ±{JITTER:.0%} "
            f"(not judged): {jp[0]:+.1%} : {jp[1]:+.1%}"))
        bp, pb = x["bp"], _pl(paper_bp, paper_base)
        checks.append(reg[f"R12-t9-bp-{t}"].judge(
            math.isfinite(bp["ratio"]) and abs(bp["ratio"] / pb[2] - 1) <= REL,
            f"weights {bp['weights'][0]}:{bp['weights'][1]}: {bp['nectere_us']:.1f} : {bp['memcached_us']:.1f} us, "
            f"PL {bp['pl_nectere']:.1%} : {bp['pl_memcached']:.1%}, ratio {bp['ratio']:.2f} (thesis {pb[2]:.2f})"))
        if grid:
            ok = [g for g in x["grid"] if math.isfinite(g["ratio"]) and g["ratio"] > 0]
            g = min(ok, key=lambda g: abs(math.log(g["ratio"] / TARGETS[t]))) if ok else None
            x["manual"] = g
            checks.append(reg[f"R12-t9-lp-{t}"].judge(
                g is not None and abs(g["ratio"] / TARGETS[t] - 1) <= REL,
                "no grid point with both losses positive" if g is None else
                f"best of {len(grid)}: weights {g['weights'][0]}:{g['weights'][1]}, delay {g['delay']}: "
                f"{g['nectere_us']:.1f} : {g['memcached_us']:.1f} us, ratio {g['ratio']:.2f} (thesis's hand-tuned "
                f"{_pl(paper_lp, paper_base)[2]:.2f})"))
        if long_ and t in ("1:1", "1:4"):
            end = long_ / 1000
            sx = _tail(_records(res[f"{t}/sphinx"]), 0.0, end) | row(f"{t}/sphinx", end * 2 / 3, end)
            x["sphinx"] = sx
            m = x.get("manual")
            if m is None:
                checks.append(reg[f"R14-pair-{t}"].judge(False, "no Manual point"))
            else:
                dn, dm = sx["nectere_us"] / m["nectere_us"] - 1, sx["memcached_us"] / m["memcached_us"] - 1
                checks.append(reg[f"R14-pair-{t}"].judge(
                    abs(dn) <= NEAR_MANUAL and abs(dm) <= NEAR_MANUAL,
                    f"{paper_base[0]:g} / {paper_base[1]:g} us pair: Sphinx {sx['nectere_us']:.1f} : "
                    f"{sx['memcached_us']:.1f} (LP {sx['lp']:.3f}, delay {sx['delay']:.1f}) vs Manual "
                    f"{m['nectere_us']:.1f} : {m['memcached_us']:.1f} us ({dn:+.1%} / {dm:+.1%})"))
        rows[t] = x
    out: Dict[str, Any] = {"rows": rows, "calibration": fit}
    if long_:
        end = long_ / 1000
        recs = _records(res["1:4/retarget"])
        out["retarget"] = {"before": _tail(recs, 0.0, end), "after": _tail(recs, end, 2 * end)}
    return out, checks


def _sphinx(target: str, base: Tuple[float, float], max_delay: int = CCTI_LIMIT,
            retarget: Optional[Tuple[str, str]] = None) -> Dict[str, Any]:
    c: Dict[str, Any] = {"kind": "sphinx", "period": PERIOD, "control-latency": "5us", "max-delay": int(max_delay),
                         "flows": [{"vm": "nc", "base-us": base[0]},
                                   {"vm": "mc", "base-us": base[1], "act-on": ["ms"]}],
                         "groups": [{"a": "nc", "b": "mc", "target": target}]}
    if retarget:
        c["retarget"] = [{"at": retarget[0], "group": 0, "target": retarget[1]}]
    return c


def _mean(result: Any, vm: str, t0: float = 0.0, t1: float = math.inf) -> float:
    lat = result.latencies()
    x = lat[(lat.vm == vm) & (lat.time_s >= t0) & (lat.time_s < t1)].latency_us
    return float(x.mean()) if len(x) else math.nan


def _pl(lat: Tuple[float, float], base: Tuple[float, float]) -> Tuple[float, float, float]:
    pn, pm = max(0.0, lat[0] / base[0] - 1), max(0.0, lat[1] / base[1] - 1)
    return pn, pm, (pn / pm if pm > 0 else math.inf)


def _records(result: Any) -> List[Dict[str, Any]]:
    for c in result.controllers():
        if "sphinx" in c:
            return [dict(r, time_s=r["time"] * 1e-12) for r in c["sphinx"]]
    return []


def _tail(recs: List[Dict[str, Any]], t0: float, t1: float, top: int = CCTI_LIMIT) -> Dict[str, Any]:
    """Mean LP, delay and saturation (the controller's flag, at either end
    of the range; ``at_max``: the delay at ``top``) over the last third of
    [t0, t1)."""
    rs = [r for r in recs if t0 + (t1 - t0) * 2 / 3 <= r["time_s"] < t1]
    lps = [r["lp"] for r in rs if r.get("lp") is not None and math.isfinite(r["lp"])]
    return {"steps": len(rs), "lp": sum(lps) / len(lps) if lps else math.nan,
            "delay": sum(r["delay_b"] for r in rs) / len(rs) if rs else math.nan,
            "saturated": sum(1 for r in rs if r.get("saturated")) / len(rs) if rs else 0.0,
            "at_max": sum(1 for r in rs if r["delay_b"] >= top) / len(rs) if rs else 0.0}


def _io(quick: bool) -> Dict[str, Any]:
    """R13: the RDMA Send sweep of G Fig. 48 on the packet simulator (QDR,
    4 KB MTU, hosts #0 → #1 on one leaf), at the calibrated CCT."""
    from ibcloud import Fabric, route
    from ibcloud.host.sphinx import io_model

    t = route(Fabric.generate("4-ary-2-full"), "ftree").tables
    delays = [5, 15, 40, 80, 127] if not quick else [15, 127]
    pts, fits = io_model(t, sizes=[1024, 4096, 524288], delays=delays, mtu=4096, cct_ns=CCT_UNIT_PS / 1000,
                         messages=2)
    return {"points": pts.to_dict("records"),
            "fits": {int(k): (None if v is None else {"slope": v[0], "intercept": v[1], "r2": v[2]})
                     for k, v in fits.items()}}


def reproduce(size: str = "default", workers: Optional[int] = None, out: Optional[str] = None) -> Dict[str, Any]:
    """Runs every experiment of ``size`` (``default`` or ``tour``) and
    judges the claims; with ``out``, writes Parquet tables and a plot there.

    >>> s = reproduce("tour")
    >>> s["collocated"]["pl_nectere"] > 0
    True
    """
    if size not in DURATIONS:
        raise ValueError(f"size must be one of {', '.join(DURATIONS)}")
    short, long_ = DURATIONS[size]
    cases: List[Tuple[str, Dict[str, Any]]] = [
        ("base-n", scenario(short, memcached=False)), ("base-m", scenario(short, nectere=False)),
        ("collocated", scenario(short)), ("unmanaged", scenario(short, weights=None))]
    for name, r in TARGETS.items():
        cases.append((f"bp-{name}", scenario(short, weights=bp_weights(r))))
    grid = [(w, d) for w in GRID_WEIGHTS for d in GRID_DELAYS] if size == "default" else \
        [((32, 32), 64), ((255, 1), 0)]
    for w, d in grid:
        cases.append((f"grid-{w[0]}-{w[1]}-{d}", scenario(short, weights=w, delay=d)))
    # Readings of the collocated interference (printed beside, never judged; docs/reproductions/sphinx.md).
    readings: Dict[str, Dict[str, Any]] = {"per-message": dict(arbitration="per-message", weights=None),
                                           "jitter": dict(jitter=JITTER)}
    for name, kw in readings.items():
        cases += [(f"reading-{name}-base-n", scenario(short, memcached=False, **kw)),
                  (f"reading-{name}-base-m", scenario(short, nectere=False, **kw)),
                  (f"reading-{name}", scenario(short, **kw))]
    base = TABLE8_BASE  # Sphinx's flows' SLOs: Table 8's bases (which ours are calibrated to)
    if long_:
        for tgt in ("1:1", "1:4"):
            cases.append((f"sphinx-{tgt}", scenario(long_, controllers=[_sphinx(tgt, base)])))
        # Reading (never judged): Sphinx's QoS part as BP weights from the policy (G §6.6), the CC loop on top.
        cases.append(("sphinx-bpw-1:4", scenario(long_, weights=bp_weights(0.25), controllers=[_sphinx("1:4", base)])))
        # Readings (never judged): the seed's loop run twice as long, and the log-ratio error form (A14).
        cases.append(("sphinx-long-1:4", scenario(2 * long_, controllers=[_sphinx("1:4", base)])))
        cases.append(("sphinx-logratio-1:4", scenario(long_, controllers=[{**_sphinx("1:4", base),
                                                                           "error": "log-ratio"}])))
        cases.append(("sphinx-bounded", scenario(long_, controllers=[_sphinx("1:4", base, max_delay=BOUND)])))
        cases.append(("sphinx-retarget", scenario(2 * long_, controllers=[
            _sphinx("1:4", base, retarget=(f"{long_}ms", "1:1"))])))
    results = _run_all([sc for _, sc in cases], workers)
    res = dict(zip([n for n, _ in cases], results))
    warm = 0.002
    ours_base = (_mean(res["base-n"], "nc", warm), _mean(res["base-m"], "mc", warm))

    def lat(name: str, t0: float = warm, t1: float = math.inf) -> Tuple[float, float]:
        return _mean(res[name], "nc", t0, t1), _mean(res[name], "mc", t0, t1)

    def row(name: str, t0: float = warm, t1: float = math.inf) -> Dict[str, Any]:
        ln, lm = lat(name, t0, t1)
        pn, pm, r = _pl((ln, lm), ours_base)
        return {"nectere_us": ln, "memcached_us": lm, "pl_nectere": pn, "pl_memcached": pm, "ratio": r}

    s: Dict[str, Any] = {"size": size, "durations_ms": {"static": short, "sphinx": long_},
                         "cct_unit_ps": CCT_UNIT_PS, "calibration": {"n_service_us": N_SERVICE_US,
                                                                     "m_service_us": M_SERVICE_US},
                         "base": {"nectere_us": ours_base[0], "memcached_us": ours_base[1]},
                         "collocated": row("collocated"), "unmanaged": row("unmanaged"),
                         "bp": {t: row(f"bp-{t}") | {"weights": bp_weights(r)} for t, r in TARGETS.items()},
                         "grid": [row(f"grid-{w[0]}-{w[1]}-{d}") | {"weights": w, "delay": d} for w, d in grid]}
    s["readings"] = {}
    for name in readings:
        bb = (_mean(res[f"reading-{name}-base-n"], "nc", warm), _mean(res[f"reading-{name}-base-m"], "mc", warm))
        ln, lm = lat(f"reading-{name}")
        pn, pm, r = _pl((ln, lm), bb)
        s["readings"][name] = {"base": bb, "nectere_us": ln, "memcached_us": lm, "pl_nectere": pn,
                               "pl_memcached": pm, "ratio": r}
    reg = claims("sphinx")
    checks: List[Check] = []
    checks.append(reg["R12-base-N"].judge(abs(ours_base[0] - 48.0) <= 0.5,
                                          f"{ours_base[0]:.2f} us (service {N_SERVICE_US} us fitted to it)"))
    checks.append(reg["R12-base-M"].judge(abs(ours_base[1] - 187.0) <= 0.5,
                                          f"{ours_base[1]:.2f} us (lookup {M_SERVICE_US} us fitted to it)"))
    co = s["collocated"]
    un = s["unmanaged"]
    pmsg, jit = s["readings"]["per-message"], s["readings"]["jitter"]
    extra = (f"; Unmanaged (one SL): {un['pl_nectere']:+.1%} / {un['pl_memcached']:+.1%}; reading, adapters "
             f"per-message (not judged): {pmsg['pl_nectere']:+.1%} / {pmsg['pl_memcached']:+.1%}; reading, compute "
             f"±{JITTER:.0%} (not judged): {jit['pl_nectere']:+.1%} / {jit['pl_memcached']:+.1%}")
    checks.append(reg["R12-coll-N"].judge(abs(co["pl_nectere"] / 0.335 - 1) <= REL,
                                          f"{co['nectere_us']:.1f} us, {co['pl_nectere']:+.1%}" + extra))
    checks.append(reg["R12-coll-M"].judge(abs(co["pl_memcached"] / 0.052 - 1) <= REL,
                                          f"{co['memcached_us']:.1f} us, {co['pl_memcached']:+.1%}" + extra))
    best: Dict[str, Dict[str, Any]] = {}
    for t, r in TARGETS.items():
        b = s["bp"][t]
        checks.append(reg[f"R12-bp-{t}"].judge(
            b["ratio"] > (1 + REL) * r, f"weights {b['weights'][0]}:{b['weights'][1]}: {b['nectere_us']:.1f} : "
            f"{b['memcached_us']:.1f} us, PL {b['pl_nectere']:.1%} : {b['pl_memcached']:.1%}, ratio {b['ratio']:.2f}"))
        if size != "default":
            continue  # a two-point grid is no hand-tuning: R12-lp is judged at the default size only
        ok = [g for g in s["grid"] if math.isfinite(g["ratio"]) and g["ratio"] > 0]
        g = min(ok, key=lambda g: abs(math.log(g["ratio"] / r))) if ok else None
        if g is None:
            checks.append(reg[f"R12-lp-{t}"].judge(False, "no grid point with both losses positive"))
            continue
        best[t] = g
        mo = [g for g in ok if g["delay"] >= 0]
        gm = min(mo, key=lambda g: abs(math.log(g["ratio"] / r))) if mo else None
        only = "" if gm is None else (f"; delaying Memcached only: {gm['weights'][0]}:{gm['weights'][1]}, "
                                      f"delay {gm['delay']}, ratio {gm['ratio']:.2f}")
        checks.append(reg[f"R12-lp-{t}"].judge(
            abs(g["ratio"] / r - 1) <= REL, f"best of {len(grid)}: weights {g['weights'][0]}:{g['weights'][1]}, "
            f"delay {g['delay']} (< 0: on Nectere): {g['nectere_us']:.1f} : {g['memcached_us']:.1f} us, ratio "
            f"{g['ratio']:.2f}" + only))
    s["manual"] = best
    # R13
    io = _io(size != "default")
    s["io_model"] = io
    f512 = io["fits"].get(524288)
    checks.append(reg["R13-slope"].judge(f512 is not None and abs(f512["slope"] - EQ8_SLOPE) <= 0.01,
                                         "no fit" if f512 is None else
                                         f"slope {f512['slope']:.3f} index per % at {CCT_UNIT_PS / 1000:g} ns per "
                                         f"index (fitted to 1.28)"))
    checks.append(reg["R13-linear"].judge(f512 is not None and f512["r2"] >= 0.99,
                                          "no fit" if f512 is None else f"R² = {f512['r2']:.4f}"))
    small = [p for p in io["points"] if p["size"] <= 4096]
    worst = max((abs(p["increase_pct"]) for p in small), default=math.nan)
    checks.append(reg["R13-small"].judge(worst <= 100 * FLAT, f"largest change at ≤ 4 KB: {worst:.2f} % over "
                                                              f"delays up to {max(p['delay'] for p in small)}"))
    # R14-R16
    if long_:
        end = long_ / 1000
        sp = {}
        for tgt in ("1:1", "1:4", "bounded", "bpw-1:4", "logratio-1:4"):
            name = f"sphinx-{tgt}"
            tail = _tail(_records(res[name]), 0.0, end, BOUND if tgt == "bounded" else CCTI_LIMIT)
            sp[tgt] = tail | row(name, end * 2 / 3, end)
        recs_long = _records(res["sphinx-long-1:4"])
        sp["long-1:4"] = _tail(recs_long, end, 2 * end) | row("sphinx-long-1:4", end * 5 / 3, 2 * end)
        s["sphinx"] = sp
        for tgt in ("1:1", "1:4"):
            x = sp[tgt]
            checks.append(reg[f"R14-{tgt}"].judge(
                abs(x["lp"] / TARGETS[tgt] - 1) <= REL,
                f"mean LP {x['lp']:.3f} over {x['steps']} steps (mean delay {x['delay']:.1f}); latencies "
                f"{x['nectere_us']:.1f} : {x['memcached_us']:.1f} us" + (
                    "" if tgt != "1:4" else f"; readings (not judged): BP weights 128:32 under the loop: mean LP "
                    f"{sp['bpw-1:4']['lp']:.3f}, delay {sp['bpw-1:4']['delay']:.1f}; the same loop over "
                    f"{2 * end:g} s, last third of its second half: LP {sp['long-1:4']['lp']:.3f}, delay "
                    f"{sp['long-1:4']['delay']:.1f}; log-ratio error: LP {sp['logratio-1:4']['lp']:.3f}, delay "
                    f"{sp['logratio-1:4']['delay']:.1f}")))
        near = []
        for tgt in ("1:1", "1:4"):
            x, m = sp[tgt], best.get(tgt)
            if m is None:
                near.append((tgt, False, "no Manual point"))
                continue
            dn, dm = x["nectere_us"] / m["nectere_us"] - 1, x["memcached_us"] / m["memcached_us"] - 1
            near.append((tgt, abs(dn) <= NEAR_MANUAL and abs(dm) <= NEAR_MANUAL,
                         f"{tgt}: Sphinx {x['nectere_us']:.1f} : {x['memcached_us']:.1f} vs Manual "
                         f"{m['nectere_us']:.1f} : {m['memcached_us']:.1f} us ({dn:+.1%} / {dm:+.1%})"))
        checks.append(reg["R14-manual"].judge(all(n[1] for n in near), "; ".join(n[2] for n in near)))
        x, xl = sp["1:4"], sp["long-1:4"]
        checks.append(reg["R15-saturate"].judge(
            x["at_max"] >= 0.5 and x["lp"] > (1 + REL) * 0.25,
            f"delay at {CCTI_LIMIT} in {x['at_max']:.0%} of the last third's steps (mean {x['delay']:.1f}); mean LP "
            f"{x['lp']:.3f}; reading, twice as long (not judged): at {CCTI_LIMIT} in {xl['at_max']:.0%}, LP "
            f"{xl['lp']:.3f}"))
        x = sp["bounded"]
        checks.append(reg["R15-bounded"].judge(
            x["at_max"] >= 0.5 and x["lp"] > (1 + REL) * 0.25,
            f"max-delay {BOUND}: at it in {x['at_max']:.0%} of the last third's steps; mean LP {x['lp']:.3f}, PL "
            f"{x['pl_nectere']:.1%} : {x['pl_memcached']:.1%}"))
        recs = _records(res["sphinx-retarget"])
        before, after = _tail(recs, 0.0, end), _tail(recs, end, 2 * end)
        pre = [r for r in recs if r["time_s"] < end]
        post = [r for r in recs if r["time_s"] >= end]
        s["retarget"] = {"before": before, "after": after,
                         "price_before": pre[-1]["price"] if pre else None,
                         "price_after": post[0]["price"] if post else None}
        pb, pa = s["retarget"]["price_before"], s["retarget"]["price_after"]
        checks.append(reg["R16-price"].judge(pb is not None and pa is not None and pa < pb,
                                             "no step on one side of the change" if pb is None or pa is None else
                                             f"price {pb:.2f} → {pa:.2f} at the first step after the change"))
        checks.append(reg["R16-delay"].judge(after["delay"] < before["delay"],
                                             f"mean delay {before['delay']:.1f} → {after['delay']:.1f}"))
        checks.append(reg["R16-reconverge"].judge(abs(after["lp"] - 1) <= REL,
                                                  f"mean LP {before['lp']:.3f} (1:4) → {after['lp']:.3f} (1:1)"))
        s["records"] = {n: _records(res[n]) for n in res if n.startswith("sphinx-")}
    s["table9"], t9 = _table9(size, short, long_, workers)
    checks += t9
    s["checks"] = [c.as_dict() for c in complete(
        "sphinx", checks, "not run at this size (the tour size skips the Sphinx runs and searches no grid)")]
    if out:
        s["files"] = [str(p) for p in _write(out, s)]
    return s


#: The jitter reading beside Table 9's Collocated rows: each server's compute uniform in ±5 % (docs/host.md).
JITTER = 0.05

#: R15-bounded's actuator bound: below what 1:4 needs on our plant (fixed with the claim).
BOUND = 8


def _write(out: str, s: Dict[str, Any]) -> List[Path]:
    import pandas as pd

    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    files = []
    p = d / "grid.parquet"
    pd.DataFrame([{k: (list(v) if isinstance(v, tuple) else v) for k, v in g.items()} for g in s["grid"]]) \
        .assign(weights=lambda x: x.weights.astype(str)).to_parquet(p, index=False)
    files.append(p)
    rows = [dict(r, case=n) for n, rs in s.get("records", {}).items() for r in rs]
    if rows:
        p = d / "sphinx_steps.parquet"
        pd.DataFrame(rows).to_parquet(p, index=False)
        files.append(p)
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
        for n, rs in s["records"].items():
            axes[0].plot([r["time_s"] * 1e3 for r in rs], [r["lp"] for r in rs], label=n, lw=0.8)
            axes[1].step([r["time_s"] * 1e3 for r in rs], [r["delay_b"] for r in rs], where="post", lw=0.8)
        axes[0].set_ylabel("LP = PL_N / PL_M")
        axes[0].set_ylim(0, 3)
        axes[0].legend(fontsize="small")
        axes[1].set_ylabel("Memcached CC delay (CCT index)")
        axes[1].set_xlabel("simulated time (ms)")
        axes[0].set_title("G Figs. 51-52, 55 (ours)")
        p = d / "sphinx_lp.png"
        fig.savefig(p, dpi=100)
        plt.close(fig)
        files.append(p)
    return files


def _print(s: Dict[str, Any]) -> None:
    b = s["base"]
    print("G R12 (Table 8): Nectere 64 KB (A→B, SL0) beside Memcached 512 KB Gets (values A→B, SL1), QDR, 4 KB MTU")
    print(f"  base (calibration): {b['nectere_us']:.1f} : {b['memcached_us']:.1f} us (thesis 48 : 187)")

    def line(label: str, x: Dict[str, Any], paper: str = "") -> None:
        print(f"  {label:<28} {x['nectere_us']:7.1f} : {x['memcached_us']:6.1f} us   PL {x['pl_nectere']:6.1%} : "
              f"{x['pl_memcached']:6.1%}   ratio {x['ratio']:6.2f}   {paper}")

    line("Collocated (own SLs, 32:32)", s["collocated"], "thesis 64.1 : 196.7, ratio 6.47")
    line("Unmanaged (one SL)", s["unmanaged"])
    for t, x in s["bp"].items():
        pn, pm = TABLE8_BP[t]
        line(f"BP {t} (weights {x['weights'][0]}:{x['weights'][1]})", x, f"thesis {pn} : {pm}")
    for t, x in s["manual"].items():
        pn, pm = TABLE8_LP[t]
        line(f"Manual {t} ({x['weights'][0]}:{x['weights'][1]}, d={x['delay']})", x, f"thesis {pn} : {pm}")
    for t, x in s.get("sphinx", {}).items():
        top = BOUND if t == "bounded" else CCTI_LIMIT
        print(f"  Sphinx {t:<8} last third: LP {x['lp']:.3f}, delay {x['delay']:.1f}, at its maximum {top} in "
              f"{x['at_max']:.0%} of steps; {x['nectere_us']:.1f} : {x['memcached_us']:.1f} us"
              + {"bpw-1:4": "   (reading: BP weights 128:32 under the loop, not judged)",
               "long-1:4": "   (reading: the same loop run twice as long, second half, not judged)",
               "logratio-1:4": "   (reading: log-ratio error, not judged)"}.get(t, ""))
    t9 = s.get("table9", {})
    for t, x in t9.get("rows", {}).items():
        print(f"  Table 9 {t:<5} base {x['base'][0]:.1f} : {x['base'][1]:.1f} us (calibration; Memcached "
              f"{x['memcached_size']})")
        line(f"  Collocated {t}", x["collocated"], "thesis " + " : ".join(f"{v:g}" for v in TABLE9[t][1]))
        line(f"  BP {t}", x["bp"], "thesis " + " : ".join(f"{v:g}" for v in TABLE9[t][2]))
        if x.get("manual"):
            m = x["manual"]
            line(f"  Manual {t} ({m['weights'][0]}:{m['weights'][1]}, d={m['delay']})", m,
                 "thesis " + " : ".join(f"{v:g}" for v in TABLE9[t][3]))
        if x.get("sphinx"):
            sx = x["sphinx"]
            print(f"    Sphinx {t} on this pair, last third: LP {sx['lp']:.3f}, delay {sx['delay']:.1f}; "
                  f"{sx['nectere_us']:.1f} : {sx['memcached_us']:.1f} us")
    if t9.get("retarget"):
        b, a = t9["retarget"]["before"], t9["retarget"]["after"]
        print(f"  reading (not judged): Fig. 55's own pair 212 / 187 us, 1:4 → 1:1: LP {b['lp']:.3f} → {a['lp']:.3f}, "
              f"delay {b['delay']:.1f} → {a['delay']:.1f}")
    f = s["io_model"]["fits"]
    print("G R13 (Eq. 8): " + ", ".join(f"{k} B: " + ("flat" if v is None else f"slope {v['slope']:.3f}, "
                                                        f"R² {v['r2']:.4f}") for k, v in f.items()))
    render_scoreboard("sphinx", checks_of(s))


def configure(parser: argparse.ArgumentParser) -> None:
    """Adds the reproduction's options.

    >>> p = argparse.ArgumentParser(); configure(p)
    >>> p.parse_args([]).size
    'default'
    """
    from ibcloud.cli._args import integer

    parser.add_argument("--size", default="default", choices=sorted(DURATIONS),
                        help="default: 30 ms static runs (a 98-point QoS × CC grid) and 0.6 s Sphinx runs, Tables 8 and 9 (≈ 20 s); "
                             "tour: 10 ms static runs, no grid claims, no loops (seconds)")
    parser.add_argument("--threads", type=integer(1), default=None, metavar="N",
                        help="scenarios run at once (default: every CPU; results do not depend on it)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--out", default=None, help="write summary.json, Parquet tables and a plot into this folder")


def run(args: argparse.Namespace) -> int:
    """Runs, prints and ends with the scoreboard; exit status 1 when a
    prediction or qualitative claim that ran does not hold.

    >>> import contextlib, io
    >>> p = argparse.ArgumentParser(); configure(p)
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     status = run(p.parse_args(["--size", "tour"]))
    >>> "Scoreboard (sphinx)" in out.getvalue() and "calibration" in out.getvalue()
    True
    """
    s = reproduce(args.size, args.threads, args.out)
    return finish(s, args, _print)
