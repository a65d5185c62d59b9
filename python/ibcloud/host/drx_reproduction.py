"""``ibcloud reproduce drx``: G R1-R11, DRX (Ranadive ch. VI, Figs. 29-39)
on the host simulator: G's Symmetric, Asymmetric-1 and Asymmetric-2
layouts (:mod:`ibcloud.host.drx_layouts`) with the pricing policies of
Table 4 (EB/HB × Dist/Local), the platform-only CC-Dist and PC-Dist, and
the Fig. 36 sensitivity setups.

Every claim is a record of python/ibcloud/claims/drx.toml (committed before
these runs), judged here and printed as the scoreboard at the end; only
prediction and qualitative rows decide the exit status. The policies are
judged as G writes them (A5 as-written caps, A6 "5 points, at most 25
removed", A1 as-written Algorithm 4); the repaired modes (A5 δC ≤ 1 and
caps ≥ cap_min, A1 IOmin added) and A6's other reading (down to a cap of
25) run beside and are printed, never judged (G §10.3).

Time scale: every G time (starts, epoch 60 s, interval 1 s, CFS period,
TeraSort's phases) is multiplied by ``scale`` (default 0.1: a 6 s epoch and
100 ms intervals); the output states it. Nectere's SLA level is its CQE
rate alone, measured first (a **calibration** of the SLA, as G's SLA is
"within 15 % of base").

>>> SIZES["default"]               # (hosts, time scale)
(8, 0.1)
"""

from __future__ import annotations

import argparse
from typing import Any, Dict, List, Optional

from ibcloud.checks import Check, claims, complete, render_scoreboard
from ibcloud.cli._args import integer
from ibcloud.exceptions import ParseError
from ibcloud.host import sphinx_motivation
from ibcloud.host.drx_layouts import G_TIMES, LAYOUTS, ensembles, scenario, sensitivity
from ibcloud.host.ibmon import checks_of, finish
from ibcloud.host.resex import _Runs
from ibcloud.host.thrashing import _run_all
from ibcloud.safeio import checked_ints

__all__ = ["SIZES", "PRICING", "configure", "controller", "reproduce", "run"]

#: size → (hosts, scale): the default run, the full-scale one and a seconds-long tour.
SIZES = {"default": (8, 0.1), "full": (8, 1.0), "tour": (4, 0.02)}
#: Pricing policies of G Table 4 (judged as written) and the platform-only ones.
PRICING = ("eb-dist", "hb-dist", "eb-local", "hb-local")
PLATFORM = ("cc-dist", "pc-dist")
#: G Table 6's static hardware policies (the fabric's QoS and CC presets, docs/qos.md).
HARDWARE = ("stmax", "stmaxq")
#: The DRX-triggered ones: QoS from the start (G §4.5), Table 5's CC pushed through the SM at the first violation.
DRX_HARDWARE = ("drxmax", "drxmaxq")
#: Beside R8 (never judged): StMax's CC alone (its QoS alone is DRXMax/DRXMaxQ when DRX never pushes: the same
#: scenario with a controller that only watches). With ``--r8-causes`` also the packet-level uncontrolled run and
#: DRXMaxQ with its QoS pushed at the violation (SM restart; only QPs created afterwards take the new SLs): two
#: runs of ≈ 5·10⁸ events each, about a minute of CPU each, so the default size skips them; and StMax/StMaxQ
#: with CC on the bulk SL only (G §9 A11's other reading: the CA Control_Map without SL0).
R8_BESIDE = ("stmax/cc-only",)
R8_CAUSES = ("none/packet", "drxmaxq/qos-at-violation", "stmax/cc-bulk", "stmaxq/cc-bulk")
#: Event budget of the packet-level runs at the default scale 0.1 (an uncontrolled one needs ≈ 5.2·10⁸), scaled
#: with the run's length at larger scales.
HW_EVENTS = 1_000_000_000
SLA = 0.15          # G: Nectere within 15 % of its base CQE/s
CAP_TOL = 5.0       # caps "≈ N": ±5 points
SAME = 0.05         # "about equal" / "close to baseline": 5 %
CLIENT, SERVER = "nectere-client", "nectere-server"


def _s(x: float) -> str:
    return f"{round(x, 9):g}s"


def controller(policy: str, sc: Dict[str, Any], scale: float, sla: float, mode: str = "as-written") -> Dict[str, Any]:
    """The ``kind = "drx"`` table for ``policy`` on scenario ``sc``: epoch,
    interval and CFS period scaled, Nectere's per-VM SLA level ``sla``
    (CQEs/s); ``mode`` ``repaired`` sets A1 and A5 repaired, ``cap-25``
    A6's other reading.

    >>> from ibcloud.host.drx_layouts import scenario
    >>> c = controller("hb-dist", scenario(hosts=2), 0.1, 900.0)
    >>> c["interval"], c["epoch"], c["vmes"]["nectere"]["sla-cqe-per-s"]
    ('0.1s', '6s', 900.0)
    >>> controller("hb-dist", scenario(hosts=2), 0.1, 900.0, mode="fixed")
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.ParseError: drx: mode must be as-written, repaired or cap-25, got 'fixed'
    """
    if mode not in ("as-written", "repaired", "cap-25"):
        raise ParseError(f"drx: mode must be as-written, repaired or cap-25, got {mode!r}")
    vmes = ensembles(sc)
    vmes["nectere"]["sla-cqe-per-s"] = sla
    c: Dict[str, Any] = {"kind": "drx", "policy": policy, "interval": _s(G_TIMES["interval"] * scale),
                         "epoch": _s(G_TIMES["epoch"] * scale), "cfs-period": _s(G_TIMES["cfs"] * scale),
                         "vmes": vmes}
    if mode == "repaired":
        c["cap-mode"] = "repaired"
        c["eviction"] = "repaired"
    elif mode == "cap-25":
        c["cc-floor"] = "cap-25"
    return c




def _alone(hosts: int, scale: float, workers: Optional[int]) -> Dict[str, Any]:
    """Nectere alone for 20 G seconds: its request rate and latency, and the
    per-VM CQE rate DRX's HAs measure (every interval a violation against an
    unreachable SLA, so each record carries the rate)."""
    sc = scenario("symmetric", hosts, scale, others=False, end=20.0)
    sc["controllers"] = [controller("eb-dist", sc, scale, 1e12)]
    r = _run_all([sc], workers)[0]
    rep = r.controllers()[0]
    idx = {n: i for i, n in enumerate(r.vm_names)}
    per = {}
    for vm in (CLIENT, SERVER):
        xs = [x["io"] for x in rep.get("records", []) if x["kind"] == "violation" and x["vm"] == idx[vm]]
        xs = xs[1:]  # the first interval holds Nectere's start
        per[vm] = sum(xs) / len(xs) if xs else 0.0
    st = _nectere(r, 0.0)
    return st | {"cqe_per_s": per}


def _nectere(r: Any, t0: float) -> Dict[str, Any]:
    lat = r.latencies()
    n = lat[(lat.vm == CLIENT) & (lat.time_s >= t0)]
    xs = sorted(n.latency_us)
    if not xs:
        return {"n": 0, "rate": 0.0}

    def q(p: float) -> float:
        return float(xs[min(len(xs) - 1, int(p * len(xs)))])

    return {"n": len(xs), "rate": len(xs) / (r.end_s - t0), "mean_us": float(sum(xs) / len(xs)), "p1_us": q(0.01),
            "p50_us": q(0.5), "p99_us": q(0.99)}


def _rounds(r: Any, t0: float) -> Dict[str, Dict[str, float]]:
    """Rounds (TeraSort jobs, HPL panel steps, MRBench jobs) finished after
    ``t0`` per ensemble: how many and their mean duration (s)."""
    lat = r.latencies()
    lat = lat[(lat.time_s >= t0) & ~lat.vm.str.startswith("nectere")]
    out: Dict[str, Dict[str, float]] = {}
    for vm, g in lat.groupby("vm"):
        key = str(vm).split("-", 1)[1].rstrip("0123456789")
        o = out.setdefault(key, {"n": 0, "sum_us": 0.0})
        o["n"] += len(g)
        o["sum_us"] += float(g.latency_us.sum())
    return {k: {"n": int(v["n"]), "mean_s": v["sum_us"] * 1e-6 / v["n"] if v["n"] else 0.0} for k, v in out.items()}


def _loss(mine: Dict[str, Dict[str, float]], none: Dict[str, Dict[str, float]]) -> Dict[str, float]:
    """Interferer loss against the uncontrolled run, in G's metrics: Linpack's
    Gflops (panel steps done), Hadoop's and MRBench's job run time."""
    out = {}
    for k, v in mine.items():
        ref = none.get(k)
        if not ref or not ref["n"]:
            continue
        if k.startswith("linpack"):
            out[k] = 1 - v["n"] / ref["n"]
        elif v["n"] and ref["mean_s"]:
            out[k] = v["mean_s"] / ref["mean_s"] - 1
    return out


def _caps(r: Any, rep: Dict[str, Any], t_from: float, t_to: float) -> Dict[str, float]:
    """Time-averaged cap (%) per ensemble over [t_from, t_to) from DRX's
    records (a reset at each epoch boundary puts every cap back to 100)."""
    names = r.vm_names
    recs = sorted(rep.get("records", []), key=lambda x: x["time"])
    cap = {i: 100.0 for i in range(len(names))}
    area = {i: 0.0 for i in range(len(names))}
    last = t_from
    for x in recs + [{"time": t_to * 1e12, "kind": "end"}]:
        t = x["time"] * 1e-12
        if t > last and last < t_to:
            hi = min(t, t_to)
            for i in cap:
                area[i] += cap[i] * (hi - last)
            last = hi
        if x["kind"] == "cap" and x.get("vm") is not None:
            cap[x["vm"]] = x["cap"]
        elif x["kind"] == "epoch-reset":
            cap = {i: 100.0 for i in cap}
    out: Dict[str, List[float]] = {}
    for i, n in enumerate(names):
        if n.startswith("nectere"):
            continue
        key = n.split("-", 1)[1].rstrip("0123456789")
        out.setdefault(key, []).append(area[i] / max(t_to - t_from, 1e-12))
    return {k: sum(v) / len(v) for k, v in out.items()}


def _violations(r: Any, rep: Dict[str, Any]) -> List[float]:
    nect = {i for i, n in enumerate(r.vm_names) if n.startswith("nectere")}
    return sorted({x["time"] * 1e-12 for x in rep.get("records", []) if x["kind"] == "violation" and x["vm"] in nect})


def _time_to_sla(viol: List[float], start: float, end: float, interval: float) -> Optional[float]:
    """From ``start`` (an epoch boundary): the first interval end at which no
    Nectere VM reported a violation."""
    k = 1
    while start + k * interval <= end + 1e-9:
        t = start + k * interval
        if not any(abs(v - t) < interval / 4 for v in viol):
            return (k - 1) * interval
        k += 1
    return None


def _price_runs(rep: Dict[str, Any], interval: float) -> Dict[int, int]:
    """Per VME index: how many separate runs of consecutive intervals its price was raised in."""
    by: Dict[int, List[float]] = {}
    for x in rep.get("records", []):
        if x["kind"] == "price" and x.get("vme") is not None:
            by.setdefault(x["vme"], []).append(x["time"] * 1e-12)
    out = {}
    for v, ts in by.items():
        ts = sorted(set(round(t / interval) for t in ts))
        out[v] = 1 + sum(1 for a, b in zip(ts, ts[1:]) if b - a > 1) if ts else 0
    return out


def _cases(hosts: int, scale: float, sla: float, beside: bool = True, causes: bool = False) -> _Runs:
    runs = _Runs()
    for layout in LAYOUTS:
        sc = scenario(layout, hosts, scale)
        runs.add(f"{layout}/none", sc)
        if layout == "symmetric":
            runs.add("symmetric/none/skeleton", scenario(layout, hosts, scale, hpl_step=None))
        policies = PRICING + PLATFORM if layout == "symmetric" else PRICING
        for p in policies:
            runs.add(f"{layout}/{p}", dict(sc, controllers=[controller(p, sc, scale, sla)]))
        if layout == "symmetric":
            for p in ("eb-dist", "hb-dist"):
                runs.add(f"{layout}/{p}/repaired", dict(sc, controllers=[controller(p, sc, scale, sla, "repaired")]))
            for p in PLATFORM:
                runs.add(f"{layout}/{p}/cap-25", dict(sc, controllers=[controller(p, sc, scale, sla, "cap-25")]))
    for layout in ("symmetric", "asym1"):
        # G Table 6's static policies (R8, R9): QoS and CC from time 0; bulk flows packet-level, since fluid flows
        # see neither VL arbitration nor CC. Heaviest runs first.
        for q in HARDWARE:
            runs.cases.insert(0, (f"{layout}/{q}", _hardware(layout, hosts, scale, sla, q)))
    for name in DRX_HARDWARE + (R8_BESIDE if beside else ()) + (R8_CAUSES if causes else ()):
        runs.cases.insert(0, (f"symmetric/{name}", _hardware("symmetric", hosts, scale, sla, name)))
    for setup in ("a", "b"):
        sc = sensitivity(setup, scale)
        runs.add(f"fig36{setup}/none", sc)
        for p in ("eb-dist", "hb-dist"):
            runs.add(f"fig36{setup}/{p}", dict(sc, controllers=[controller(p, sc, scale, sla)]))
    return runs


def _hardware(layout: str, hosts: int, scale: float, sla: float, name: str) -> Dict[str, Any]:
    """A hardware-policy run of ``layout`` with the bulk flows packet-level
    (fluid flows see neither VL arbitration nor CC). ``name``: ``stmax`` or
    ``stmaxq`` (QoS and CC from time 0); ``drxmax`` or ``drxmaxq`` (QoS from
    time 0, DRX pushes the CC through the SM at the first violation);
    ``<static>/cc-only`` or ``/qos-only`` (one part of the preset from time
    0); ``<static>/cc-bulk`` (the preset with CC on the bulk SL only, A11);
    ``drxmaxq/qos-at-violation`` (QoS and CC pushed at the violation, SM
    restart, SLs from the SA at QP creation); ``none/packet`` (uncontrolled).

    >>> sc = _hardware("symmetric", 2, 0.1, 900.0, "drxmax")
    >>> sc["fabric"]["qos"], sc["fabric"]["qos-parts"], sc["controllers"][0]["policy"]
    ('drxmax', 'qos', 'drxmax')
    >>> _hardware("symmetric", 2, 0.1, 900.0, "drxmaxq/qos-at-violation")["sm"]
    {'path-sl': 'sa'}
    """
    sc = scenario(layout, hosts, scale)
    sc["max-events"] = max(HW_EVENTS, int(HW_EVENTS * 0.1 / scale))  # events grow with the run's length
    for w in sc["workloads"]:
        w["mode"] = "packet"
    policy, _, variant = name.partition("/")
    if policy == "none":
        return sc
    if variant == "qos-at-violation":
        sc["fabric"]["vls"] = 2
        sc["sm"] = {"path-sl": "sa"}
        sc["controllers"] = [dict(controller(policy, sc, scale, sla), **{"qos-at": "violation"})]
        return sc
    sc["fabric"]["qos"] = policy
    if variant == "cc-bulk":
        sc["fabric"]["qos-cc-sls"] = "bulk"
    elif variant:
        sc["fabric"]["qos-parts"] = variant.split("-")[0]
    if policy in DRX_HARDWARE:
        sc["fabric"]["qos-parts"] = "qos"
        sc["controllers"] = [controller(policy, sc, scale, sla)]
    return sc


def _push(rep: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The first run-time hardware push of a DRX report: violation detected,
    request at the SM, in force (s), the SM's MADs and restart, and
    violation → in force (ms)."""
    hw = [h for h in rep.get("hardware", []) if h.get("event") is not None]
    if not hw:
        return None
    ev = hw[0]["event"]
    det = next((r["detected"] for r in rep.get("responses", []) if r["event"] == ev), None)
    sm = hw[0].get("sm") or {}
    out = {"settings": [h["setting"] for h in hw if h["event"] == ev], "sent_s": hw[0]["sent"] * 1e-12,
           "in_force_s": hw[0]["applied"] * 1e-12, "mads": sm.get("cc_mads", 0) + sm.get("qos_mads", 0),
           "restart_s": sm.get("restart", 0) * 1e-12, "by_sm": bool(sm)}
    if det is not None:
        out["detected_s"] = det * 1e-12
        out["violation_to_in_force_ms"] = (hw[0]["applied"] - det) * 1e-9
    return out


def _case(r: Any, scale: float, base: Dict[str, Any], none: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    t_n = G_TIMES["nectere"] * scale
    st = _nectere(r, t_n)
    st["degradation"] = 1 - st["rate"] / base["rate"] if base["rate"] else None
    st["rounds"] = _rounds(r, t_n)
    if none is not None:
        st["loss"] = _loss(st["rounds"], none["rounds"])
    reps = r.controllers()
    if reps:
        rep = reps[0]
        interval, epoch = G_TIMES["interval"] * scale, G_TIMES["epoch"] * scale
        end = r.end_s
        st["error"] = rep.get("error")
        st["configuration_fits"] = rep.get("configuration_fits")
        st["response"] = rep.get("response")
        # Fig. 34-35's averages: the second epoch's last quarter (the first epoch holds Nectere's start).
        st["caps_last_quarter"] = _caps(r, rep, end - 0.25 * epoch, end)
        st["caps_nectere_run"] = _caps(r, rep, t_n, end)
        viol = _violations(r, rep)
        st["violations"] = len(viol)
        st["time_to_sla_s"] = _time_to_sla(viol, epoch, end, interval)
        st["price_runs"] = {rep["vmes"][k]: v for k, v in _price_runs(rep, interval).items()}
        push = _push(rep)
        if push is not None:
            st["push"] = push
    return st


@checked_ints(workers=(1, 1024), hosts=(2, 36))
def reproduce(size: str = "default", workers: Optional[int] = None, hosts: Optional[int] = None,
              scale: Optional[float] = None, r8_causes: bool = False) -> Dict[str, Any]:
    """Runs every case of ``size`` (``default``: 8 hosts at scale 0.1;
    ``full``: scale 1; ``tour``: 4 hosts at 0.02) and judges the claims.

    The tour runs in about 30 s (it skips R8's CC-alone run); ``reproduce("tour")["cases"]`` holds
    ``symmetric/none``, ``symmetric/eb-dist`` … with their degradation,
    losses and caps. ``r8_causes`` adds R8's two heavy cause-isolation runs
    (the packet-level uncontrolled run, DRXMaxQ's QoS pushed at the
    violation).

    >>> reproduce("huge")
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.ParseError: drx: size must be one of default, full, tour, got 'huge'
    """
    if size not in SIZES:
        raise ParseError(f"drx: size must be one of {', '.join(SIZES)}, got {size!r}")
    h0, s0 = SIZES[size]
    hosts = h0 if hosts is None else hosts
    scale = s0 if scale is None else scale
    alone = _alone(hosts, scale, workers)
    cq = alone["cqe_per_s"]
    sla = min(cq.values()) if cq else 0.0
    if not sla > 0:
        raise ParseError("drx: Nectere completed nothing alone; nothing to judge")
    # The tour skips R8's unjudged cause-isolation runs (four packet-level runs).
    res = _cases(hosts, scale, sla, beside=size != "tour", causes=r8_causes).run(workers)
    cases: Dict[str, Any] = {}
    for name in res:
        if name.endswith("/none") or name.endswith("/skeleton"):
            cases[name] = _case(res[name], scale, alone, None)
    for name, r in res.items():
        if not (name.endswith("/none") or name.endswith("/skeleton")):
            # Another time scale: no loss against the hybrid run.
            hw = name.split("/")[1] in HARDWARE + DRX_HARDWARE or name.endswith("/packet")
            cases[name] = _case(r, scale, alone, None if hw else cases[name.split("/")[0] + "/none"])
    s: Dict[str, Any] = {"size": size, "hosts": hosts, "scale": scale, "r8_causes": r8_causes,
                         "time_scale": f"1 simulated s = {1 / scale:g} G s: epoch {G_TIMES['epoch'] * scale:g} s, "
                                       f"interval {G_TIMES['interval'] * scale:g} s, Linpack at "
                                       f"{G_TIMES['linpack'] * scale:g} s, Nectere at {G_TIMES['nectere'] * scale:g} s, "
                                       f"end {G_TIMES['end'] * scale:g} s",
                         "sla_cqe_per_s": sla, "alone": alone, "cases": cases}
    # R10, R11: G §6.1's two-host motivation runs (ibcloud.host.sphinx_motivation), cheap enough for every size.
    wave = sphinx_motivation.square_wave(workers=workers)
    s["motivation"] = {"square_wave": wave, "weight_sweep": sphinx_motivation.weight_sweep(workers=workers),
                       "square_wave_readings": {"per-message": sphinx_motivation.square_wave(
                           arbitration="per-message", workers=workers)}}
    m = s["motivation"]
    judged = _judge(s) + sphinx_motivation.checks(claims("drx"), wave, m["weight_sweep"], m["square_wave_readings"])
    s["checks"] = [c.as_dict() for c in complete("drx", judged, "not run at this size")]
    return s


def _sec(x: Optional[float]) -> str:
    return "never" if x is None else f"{x:.2f} s"


def _pct(x: Optional[float]) -> str:
    return "n/a" if x is None else f"{100 * x:.1f} %"


def _judge(s: Dict[str, Any]) -> List[Check]:
    reg = claims("drx")
    c = s["cases"]
    out: List[Check] = []
    al = s["alone"]
    sym = c["symmetric/none"]
    d = {k: v.get("degradation") for k, v in c.items()}

    def beside(p: str) -> str:
        rp = c.get(f"symmetric/{p}/repaired") or c.get(f"symmetric/{p}/cap-25")
        tag = "repaired" if f"symmetric/{p}/repaired" in c else "A6 cap-25"
        return f" ({tag}, not judged: {_pct(rp.get('degradation'))})" if rp else ""

    sk = c["symmetric/none/skeleton"]
    out.append(reg["R1-drop"].judge(d["symmetric/none/skeleton"] > SLA,
                                    f"{_pct(d['symmetric/none/skeleton'])} ({al['rate']:.0f} → {sk['rate']:.0f} "
                                    f"requests/s), HPL at 30 ms per panel step"))
    out.append(reg["R1-cal"].judge(0.25 <= d["symmetric/none"] <= 0.35,
                                   f"{_pct(d['symmetric/none'])} ({al['rate']:.0f} → {sym['rate']:.0f} requests/s), "
                                   f"HPL at 1 ms per panel step"))
    out.append(reg["R1-wider"].judge(
        sym["p50_us"] > al["p50_us"] and sym["p99_us"] - sym["p1_us"] > al["p99_us"] - al["p1_us"],
        f"p50 {al['p50_us']:.1f} → {sym['p50_us']:.1f} us; p99−p1 {al['p99_us'] - al['p1_us']:.1f} → "
        f"{sym['p99_us'] - sym['p1_us']:.1f} us"))
    for p, cid, ok in (("eb-dist", "R2-eb-dist", lambda x: x <= SLA), ("hb-dist", "R2-hb-dist", lambda x: x <= SLA),
                       ("eb-local", "R2-eb-local", lambda x: x > SLA), ("hb-local", "R2-hb-local", lambda x: x > SLA),
                       ("cc-dist", "R2-cc-dist", lambda x: SLA < x < d["symmetric/none"]),
                       ("pc-dist", "R2-pc-dist", lambda x: SLA < x < d["symmetric/none"])):
        x = d[f"symmetric/{p}"]
        out.append(reg[cid].judge(ok(x), f"{_pct(x)} (uncontrolled {_pct(d['symmetric/none'])})" + beside(p)))

    def loss(p: str, k: str, layout: str = "symmetric") -> float:
        return c[f"{layout}/{p}"].get("loss", {}).get(k, 0.0)

    kinds = ("hadoop", "linpack")
    hurt = all(loss(q, k) > max(loss("eb-dist", k), loss("hb-dist", k)) for q in PLATFORM for k in kinds)
    out.append(reg["R2-hurt"].judge(hurt, "; ".join(
        f"{p}: " + ", ".join(f"{k} {_pct(loss(p, k))}" for k in kinds) for p in ("eb-dist", "hb-dist") + PLATFORM)))
    out.append(reg["R3-least"].judge(all(loss("hb-dist", k) < loss("eb-dist", k) for k in kinds), "loss " + "; ".join(
        f"{k}: HB {_pct(loss('hb-dist', k))} vs EB {_pct(loss('eb-dist', k))}" for k in kinds)))
    me, mh = c["symmetric/eb-dist"].get("mean_us", 0.0), c["symmetric/hb-dist"].get("mean_us", 0.0)
    out.append(reg["R3-same"].judge(me > 0 and abs(mh / me - 1) <= SAME, f"EB {me:.1f} vs HB {mh:.1f} us"))
    ce, ch = c["symmetric/eb-dist"].get("caps_last_quarter", {}), c["symmetric/hb-dist"].get("caps_last_quarter", {})
    rce = c.get("symmetric/eb-dist/repaired", {}).get("caps_last_quarter", {})
    rch = c.get("symmetric/hb-dist/repaired", {}).get("caps_last_quarter", {})

    def caps(x: Dict[str, float]) -> str:
        return " / ".join(f"{k} {x.get(k, 100.0):.1f}" for k in kinds)

    ok_e = all(abs(ce.get(k, 100.0) - 60.0) <= CAP_TOL for k in kinds)
    out.append(reg["R4-eb"].judge(ok_e, f"{caps(ce)} (repaired, not judged: {caps(rce)})",
                                  shape=all(ce.get(k, 100.0) < 100.0 for k in kinds)))
    ok_h = abs(ch.get("hadoop", 100.0) - 71.0) <= CAP_TOL and abs(ch.get("linpack", 100.0) - 50.0) <= CAP_TOL
    out.append(reg["R4-hb"].judge(ok_h, f"{caps(ch)} (repaired, not judged: {caps(rch)})",
                                  shape=ch.get("hadoop", 100.0) > ch.get("linpack", 100.0)))
    te, th = c["symmetric/eb-dist"].get("time_to_sla_s"), c["symmetric/hb-dist"].get("time_to_sla_s")
    out.append(reg["R4-slower"].judge(te is not None and (th is None or th > te),
                                      f"second epoch: EB-Dist within SLA after {_sec(te)}, HB-Dist after {_sec(th)} "
                                      f"(simulated, scale {s['scale']:g})"))
    resp = [v["response"]["max_ms"] for v in c.values() if v.get("response") and v["response"].get("max_ms")]
    out.append(reg["R5"].judge(bool(resp) and max(resp) <= 5.0,
                               f"max {max(resp) if resp else None} ms over {len(resp)} controlled runs"))
    a_e, a_h = c["fig36a/eb-dist"].get("mean_us", 0.0), c["fig36a/hb-dist"].get("mean_us", 0.0)
    out.append(reg["R6a"].judge(0 < a_e <= a_h, f"EB {a_e:.1f} vs HB {a_h:.1f} us (uncontrolled "
                                                f"{c['fig36a/none'].get('mean_us', 0.0):.1f})"))
    bh, be = c["fig36b/hb-dist"], c["fig36b/eb-dist"]
    runs_h = bh.get("price_runs", {})
    tot_h = sum(100 - v for v in bh.get("caps_nectere_run", {}).values())
    tot_e = sum(100 - v for v in be.get("caps_nectere_run", {}).values())
    out.append(reg["R6b"].judge(len(runs_h) >= 2 and all(v >= 2 for v in runs_h.values()) and tot_h > tot_e,
                                f"HB price-raise runs per ensemble {runs_h}; summed mean cap cut HB {tot_h:.1f} vs "
                                f"EB {tot_e:.1f} points (rounds: {bh.get('rounds')})"))
    a1 = {p: d[f"asym1/{p}"] for p in PRICING}
    out.append(reg["R7-asym1"].judge(all(x > SLA for x in a1.values()),
                                     ", ".join(f"{p} {_pct(x)}" for p, x in a1.items()) +
                                     f" (uncontrolled {_pct(d['asym1/none'])})"))
    a2 = {p: d[f"asym2/{p}"] for p in PRICING}
    out.append(reg["R7-asym2"].judge(all(x <= SLA for x in a2.values()),
                                     ", ".join(f"{p} {_pct(x)}" for p, x in a2.items()) +
                                     f" (uncontrolled {_pct(d['asym2/none'])})"))
    out.append(reg["R7-asym2-intf"].judge(
        all(loss(p, k, "asym2") <= SAME for p in PRICING for k in kinds),
        "; ".join(f"{p}: " + ", ".join(f"{k} {_pct(loss(p, k, 'asym2'))}" for k in kinds) for p in PRICING)))
    hw = {k: d[k] for k in (f"{lay}/{q}" for lay in ("symmetric", "asym1") for q in HARDWARE)}
    def qos_only(q: str) -> str:
        x = c.get(f"symmetric/{q}")
        if x is None:
            return "n/a"
        return "n/a (DRX pushed)" if x.get("push") else _pct(x.get("degradation"))

    iso = (f"CC only (StMax's Table 5 CC, one VL) {_pct(d.get('symmetric/stmax/cc-only'))}; QoS only 32:32 "
           f"{qos_only('drxmax')}, 254:1 {qos_only('drxmaxq')} (DRXMax/DRXMaxQ runs, DRX never pushed); "
           f"packet-level uncontrolled {_pct(d.get('symmetric/none/packet'))}; CC on the bulk SL only (A11's other "
           f"reading) StMax {_pct(d.get('symmetric/stmax/cc-bulk'))}, StMaxQ {_pct(d.get('symmetric/stmaxq/cc-bulk'))}")
    out.append(reg["R8-floor"].judge(all(hw[f"symmetric/{q}"] >= SLA for q in HARDWARE),
                                     ", ".join(f"{q} {_pct(hw[f'symmetric/{q}'])}" for q in HARDWARE) +
                                     " (bulk packet-level; capping: EB-Dist " + _pct(d["symmetric/eb-dist"]) +
                                     f"). Cause isolation, not judged: {iso}"))
    st = {q: d.get(f"symmetric/{q}") for q in HARDWARE + DRX_HARDWARE}
    pairs = (("stmax", "drxmax"), ("stmaxq", "drxmaxq"))
    ok = all(st[a] is not None and st[b] is not None and st[a] <= st[b] for a, b in pairs)

    def push(q: str) -> str:
        p = c.get(f"symmetric/{q}", {}).get("push")
        if not p:
            return f"{q}: no push (no violation)"
        return (f"{q}: CC in force {p.get('violation_to_in_force_ms', float('nan')):.2f} ms after the violation "
                f"({p['mads']} MADs{', SM restart %g s' % p['restart_s'] if p['restart_s'] else ''})")

    qv = c.get("symmetric/drxmaxq/qos-at-violation", {})  # only with --r8-causes
    out.append(reg["R8-static"].judge(ok, "; ".join(f"{a} {_pct(st[a])} vs {b} {_pct(st[b])}" for a, b in pairs) +
                                      "; " + "; ".join(push(q) for q in DRX_HARDWARE) +
                                      f" (beside, not judged: DRXMaxQ with its QoS pushed at the violation "
                                      f"{_pct(qv.get('degradation'))})"))
    best = min(a1.values())
    out.append(reg["R9"].judge(all(hw[f"asym1/{q}"] < best and 0.15 <= hw[f"asym1/{q}"] <= 0.25 for q in HARDWARE),
                               ", ".join(f"{q} {_pct(hw[f'asym1/{q}'])}" for q in HARDWARE) +
                               f" vs best capping {_pct(best)}", shape=all(hw[f"asym1/{q}"] < best for q in HARDWARE)))
    return out


def _print(s: Dict[str, Any]) -> None:
    al = s["alone"]
    print(f"G R1-R11 (DRX) on {s['hosts']} hosts, time scale {s['scale']:g}: {s['time_scale']}")
    print(f"Nectere alone: {al['rate']:.0f} requests/s, mean {al['mean_us']:.1f} us; SLA level per VM "
          f"{s['sla_cqe_per_s']:.0f} CQE/s (calibration: its CQE rate alone), violation when > 15 % below")
    print(f"  {'case':<28} {'degr.':>7} {'mean us':>8} {'p99 us':>8} {'Hadoop loss':>11} {'Linpack loss':>12} "
          f"{'caps H/L (last ¼ epoch)':>24} {'to SLA s':>8}")
    for name, x in s["cases"].items():
        lo = x.get("loss", {})
        caps = x.get("caps_last_quarter")
        cs = "" if caps is None else " / ".join(f"{v:.1f}" for v in caps.values())
        tts = x.get("time_to_sla_s")
        print(f"  {name:<28} {_pct(x.get('degradation')):>7} {x.get('mean_us', 0.0):8.1f} {x.get('p99_us', 0.0):8.1f} "
              f"{_pct(lo.get('hadoop')) if 'hadoop' in lo else '':>11} "
              f"{_pct(lo.get('linpack')) if 'linpack' in lo else '':>12} {cs:>24} "
              f"{'' if tts is None else f'{tts:.2f}':>8}")
    for name, x in s["cases"].items():
        p = x.get("push")
        if p:
            print(f"  {name}: SM push {'+'.join(p['settings'])}: violation at {p.get('detected_s', float('nan')):.3f} s, "
                  f"request at the SM {p['sent_s']:.4f} s, in force {p['in_force_s']:.4f} s "
                  f"({p.get('violation_to_in_force_ms', float('nan')):.2f} ms; {p['mads']} MADs"
                  f"{', SM restart %g s' % p['restart_s'] if p['restart_s'] else ''})")
    print("Judged: the policies as written; '/repaired' (A1, A5) and '/cap-25' (A6's other reading) are printed only; "
          "hardware runs (stmax … drxmaxq) are bulk packet-level; 'stmax/cc-only', 'none/packet', "
          "'drxmaxq/qos-at-violation' and '*/cc-bulk' are printed only (R8's cause isolation, G's other DRXMaxQ "
          "reading and A11's other reading; all but the first with --r8-causes).")
    if "motivation" in s:
        for line in sphinx_motivation.describe(s["motivation"]):
            print(line)
    render_scoreboard("drx", checks_of(s))


def configure(parser: argparse.ArgumentParser) -> None:
    """Adds the reproduction's options.

    >>> p = argparse.ArgumentParser(); configure(p)
    >>> p.parse_args([]).size, p.parse_args(["--full"]).size
    ('default', 'full')
    """
    parser.add_argument("--size", default="default", choices=sorted(SIZES),
                        help="default: 8 hosts at time scale 0.1 (a 6 s epoch, 100 ms intervals); full: scale 1 "
                             "(G's 60 s epoch, long); tour: 4 hosts at 0.02 (seconds)")
    parser.add_argument("--full", dest="size", action="store_const", const="full", help="same as --size full")
    parser.add_argument("--hosts", type=integer(2), default=None, metavar="N", help="hosts (default: the size's)")
    parser.add_argument("--threads", type=integer(1), default=None, metavar="N",
                        help="scenarios run at once (default: every CPU; results do not depend on it)")
    parser.add_argument("--r8-causes", action="store_true",
                        help="add R8's cause-isolation runs (packet-level uncontrolled; DRXMaxQ's QoS pushed at "
                             "the violation; StMax/StMaxQ with CC on the bulk SL only, A11): about four more "
                             "minutes of CPU")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--out", default=None, help="write summary.json into this folder")


def run(args: argparse.Namespace) -> int:
    """Runs, prints and ends with the scoreboard; exit status 1 when a
    prediction or qualitative claim that ran does not hold.

    >>> p = argparse.ArgumentParser(); configure(p)
    >>> p.parse_args(["--hosts", "1"])
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    if args.hosts is not None and args.hosts > 36:
        raise ParseError(f"drx: --hosts must be at most 36 (one 36-port switch), got {args.hosts}")
    s = reproduce(args.size, args.threads, args.hosts, r8_causes=args.r8_causes)
    return finish(s, args, _print)
