"""Each reproduction's scoreboard at its default size: every claim's verdict
is asserted, so a regression in a reproduced number (or a claim quietly
changing kind) fails CI. Timings never enter a verdict.

Runtime (2-core machine, CPU seconds): delay ≈ 17, pftree ≈ 21 (NPB Table 2 ≈ 13), dftree ≈ 55,
reconfig ≈ 80 (the readings of Paper IV's "modifications" add ≈ 5, the hardware results on the packet simulator ≈ 25), sa-cache ≈ 20, ibmon ≈ 11, thrashing ≈ 28, fares ≈ 100 (the judged reading), resex ≈ 15, drx ≈ 210 (28 host runs of G's 8-host layouts at time scale 0.1, 4 of them packet-level), vswitch ≈ 11 (the Fig. 8 campaign on the four
smaller Table 4 topologies: the two 8-ary-3 trees alone take ≈ 4 min, and
``ibcloud reproduce all`` judges them when it regenerates SCOREBOARD.md)."""

from __future__ import annotations

import pytest

C, K, S, N, A = "construction", "calibration", "shape only", "not reproduced", "not attempted"
R = "reproduced"


def _verdicts(checks):
    return {(c["id"] if isinstance(c, dict) else c.id): (c["verdict"] if isinstance(c, dict) else c.verdict)
            for c in checks}


@pytest.mark.slow
def test_delay_scoreboard_at_the_default_size():
    from ibcloud.delay import synthetic_trace
    from ibcloud.delay.reproduction import reproduce

    rep = reproduce(synthetic_trace(seed=0), out=None, plots=False, paper_scale=True)
    assert _verdicts(rep.checks) == {"R1": C, "R2": K, "R3": C, "R4": S, "R4f": K, "R5": K, "R6": S, "R6b": S,
                                     "R6c": N, "R7": S, "R8": S}
    by = {c.id: c for c in rep.checks}
    assert by["R2"].passed and by["R5"].passed and not by["R4f"].passed  # calibration agreement shown, not counted
    assert not rep.ok
    # Causes (docs/reproductions/delay.md): matching θ exactly does not close R6, and at equal average delay
    # both packings open the same hosts, hence the same filling (R6c's arithmetic).
    eq = rep.headlines["equal_delay"]
    b = eq["bisected"]
    assert 70 <= b["threshold"] <= 80 and b["max_delay_ratio"] < 3
    assert b["hosts"] == 195 and abs(b["avg_filling"] - eq["delay"]["avg_filling"]) < 0.05
    assert 30 <= rep.headlines["equal_utilisation"]["bisected"]["threshold"] <= 40


@pytest.mark.slow
def test_pftree_scoreboard_at_the_default_size():
    from ibcloud.pftree.reproduction import reproduce

    rep = reproduce(out=None, plots=False)
    assert _verdicts(rep.checks) == {"C1": C, "C2": C, "C3": C, "C3b": S, "C4": S, "T4": N, "T4g": N, "T4m": N, "F10": N,
                                     "F10b": N, "C5": N, "C5a": R, "C5b": N, "C5c": S, "C6": R, "C6b": S, "C7": S,
                                     "C8": S, "C8a": N, "C8b": S, "X7a": K, "X7": N, "X7b": C, "X2c": K, "X2cg": S,
                                     "X2ep": S, "X2ft": S, "X2is": S, "X2mg": S, "X2o": N, "X2t": N}
    assert all(c.passed for c in rep.checks if c.kind == "construction")
    # The cause found for the pFTree column: the grouped reading (beside, never judged) gives Table 4's
    # gather maxima exactly, and its -Ext the paper's bisect averages on 128/192 nodes.
    by = {c.id: c for c in rep.checks}
    assert "grouped reading 112 / 294 / 560" in by["T4m"].detail
    assert "grouped reading 2.0 / 2.1 /" in by["C3b"].detail
    # Fig. 7 on the packet simulator: equal-weight VL arbitration halves the victim in both phases.
    assert by["X7a"].passed and by["X7b"].passed and not by["X7"].passed
    bed = rep.testbed
    assert bed["pftree"][1] < bed["pftree"][0] and bed["pftree one VL"][2] < bed["pftree"][2]
    # NPB Table 2: compute fitted to every -Ext time; with one interfering partition pFTree already isolates
    # the application on Fig. 8's tree (no saving at all), with two it shares on a separate VL.
    assert by["X2c"].passed and "15/15 fitted" in by["X2c"].detail
    assert all("one interfering partition: 0.0 / 0.0 / 0.0 %" in by[k].detail for k in ("X2cg", "X2ft", "X2is"))
    assert (rep.npb["saving_pct"] > 0).sum() >= 12 and rep.settings["npb_vls"][0] != rep.settings["npb_vls"][1]


@pytest.mark.slow
def test_dftree_scoreboard_at_the_default_size():
    from ibcloud.dftree.reproduction import reproduce

    rep = reproduce(out=None, plots=False)
    assert _verdicts(rep.checks) == {"T0": K, "T1a": R, "T1b": R, "T1c": S, "T1d": R, "T2a": S, "T2b": S, "T2c": R,
                                     "T2d": R, "T4": S, "T6": S, "P1": S, "R1a": S, "R1b": S, "R1c": S, "R1d": S,
                                     "R2o": K, "R2a": S, "R2b": S, "R2c": S, "R2d": S, "R2e": S, "R2f": R, "R2g": S,
                                     "R2h": S, "R2i": S, "R2j": S, "S1a": S, "S1b": S, "S1c": S, "S2": S}
    by = {c.id: c for c in rep.checks}
    assert by["R2o"].passed  # the end-host latency is fitted to 3b's min ping-pong
    # docs/reproductions/dftree.md: S003's method (oracle) at 648 nodes under the judged reading, gains ordered
    # 1 > 3 > 9 (S2) but 1 and 3 hot-spots far above S003's; the real controller flaps with 9 hot-spots.
    gain = {r["hotspots"]: r["oracle_gain_pct"] for r in rep.sim648}
    assert gain[1] > gain[3] > gain[9] > 100 and gain[1] > 1000
    assert next(r for r in rep.sim648 if r["hotspots"] == 9)["dftree_marks"] > 9


@pytest.mark.slow
def test_reconfig_scoreboard_at_the_default_size():
    from ibcloud.reconfig_reproduction import reproduce

    rep = reproduce(out=None, plots=False, repeats=1)
    assert _verdicts(rep["checks"]) == {"C1": S, "C1v": S, "C2": R, "C2b": R, "C3a": S, "C3b": S, "C8a": S,
                                        "C8b": S, "C8c": S, "C8d": S, "C4": S, "C4b": S, "C9": S, "C10": A, "C5": A,
                                        "C11": S, "C7": R, "C12": N, "C13": N, "C14": R, "C6": C,
                                        # Paper IV's hardware results on the packet simulator (reconfig_hw)
                                        "HW0": K, "HW1": K, "HW2": C, "HW3": S, "HW4": S, "HW5": S, "HW6": S,
                                        "HW7": S, "HW8": S, "HW9": S, "HW10": S, "HW11": S, "HW12": S, "HW13a": S,
                                        "HW13b": S, "HW13c": S, "HW13d": N, "HW14": N, "HW15": S, "HW16": K,
                                        "HW17": S, "HW18": S, "HW19": N}
    by = {c["id"]: c for c in rep["checks"]}
    # the time claims: work counts (deterministic) judged, wall-clock ratios shown but never counted
    assert "99.05 % (8-3-4-half) … 99.95 % (18-3-1-full)" in by["C1"]["detail"]
    assert "−0.0 % / −50.0 % / −75.0 %" in by["C11"]["detail"]
    assert "benchmark ratio, not counted" in by["C10"]["detail"] and "benchmark ratio, not counted" in by["C5"]["detail"]
    # the readings of "modifications": removed LIDs since the fault-free routing give the paper's 310 (ours 320)
    rd = {(r["claim"], r["reading"]): r for r in rep["h3"]["readings"]}
    assert rd[("C4", "since fault-free, departed removed")]["slim"] == 320
    assert rd[("C3a", "entries, live CNs (judged)")]["slim"] == 46
    # Fig. 3a within 0.6 / 1.6 % of the paper after the shutdowns; the causes of the B gaps (docs/reproductions/
    # reconfig.md): no reading of FTree after the link failure reaches the paper's 1972 MB/s
    assert by["HW3"]["detail"].startswith("2458.4 MB/s") and by["HW4"]["detail"].startswith("3175.5 MB/s")
    hw = rep["hw"]
    assert hw["b"]["cases"]["minhop_fault"]["ebb"] > 2300 and hw["b"]["cases"]["ftree_fault_full_leaves"]["ebb"] > 2200


@pytest.mark.slow
def test_sa_cache_scoreboard_at_the_default_size():
    from ibcloud.sa.reproduction import reproduce

    rep = reproduce(flood_presets=[], plots=False)  # the ibsim flood is no claim of the paper
    assert _verdicts(rep["checks"]) == {"V1": C, "V2": K, "V2m": K, "V2r": K, "V3": S, "V4": S, "V5": N, "V6": N,
                                        "F5a": C, "F5b": K, "F5c": S, "F5d": N, "F6a": S, "F6b": N, "F7": C, "CB": C}
    assert rep["scoreboard"]["reproduced"] == 0 and rep["ok"] is False
    # Causes (docs/reproductions/sa-cache.md): Table V's own period arithmetic on our means gives its SIF rate
    # (V3); kernel retries skew the response times as Table V's (V5); a kept backoff cuts F6b's count.
    v = rep["variants"]
    assert all(abs(v["sif_rate_from_mean"][key] - 98) <= 2 for key in ("4,8", "5,8"))
    assert all(r["median_ms"] < 0.7 * r["mean_ms"] for r in v["kernel_retries"])
    kept, reset = sorted(v["kept_backoff"]["lidtracker_kept"]), sorted(v["kept_backoff"]["lidtracker_reset"])
    assert kept[len(kept) // 2] * 2 < reset[len(reset) // 2]


@pytest.mark.slow
def test_vswitch_scoreboard_on_the_smaller_topologies():
    from ibcloud.vswitch.reproduction import TOPOLOGIES, reproduce

    rep = reproduce(out=None, plots=False, topologies=TOPOLOGIES[:4])
    assert _verdicts(rep.checks) == {"T2": C, "T2m": C, "H3a": C, "H3b": C, "M1": R, "H5": A, "H8": C, "H4": K,
                                     "H4b": C, "H6": S, "R0": S, "H7a": S, "H7b": R, "H7c": S, "F6": A}


@pytest.mark.slow
def test_ibmon_scoreboard_at_the_default_size():
    from ibcloud.checks import exit_status
    from ibcloud.host.ibmon import checks_of, reproduce

    rows = checks_of(reproduce())
    assert _verdicts(rows) == {"S1": C, "R1-plateau-64k": R, "R1-plateau-128k": R, "R1-sweet-64k": S,
                               "R1-sweet-128k": S, "R1-long-64k": N, "R1-long-128k": N, "R1-fine": R, "R1-large": R,
                               "R1-overhead": S, "R1-dynamic": S, "R2-accuracy": R, "R2-dynamics": S, "R2-overhead": R}
    by = {c.id: c for c in rows}
    assert not by["S1"].passed  # 2,000 of F's 20,000 iterations: shown as off
    assert "memory-contention model on" in by["R1-overhead"].detail  # the output says the model is on
    assert exit_status(rows) == 1


@pytest.mark.slow
def test_thrashing_scoreboard_at_the_default_size():
    from ibcloud.checks import exit_status
    from ibcloud.host.ibmon import checks_of
    from ibcloud.host.thrashing import reproduce

    rows = checks_of(reproduce())
    assert _verdicts(rows) == {"T3-2k-100": K, "T3-2m-100": K, "T3-total-100": C, "T3-2k-75": S, "T3-2m-75": S,
                               "T3-total-75": R, "T3-2k-50": S, "T3-2m-50": S, "T3-total-50": S, "F11-requests": S,
                               "F11-bytes": N, "F11-full": "not run", "F12-deep": N, "F12-shallow": S, "F13": S,
                               "T1-MG-alone": K, "T1": N, "T1-write": R, "T2-IS-alone": K, "T2-CG-alone": K,
                               "T2": N, "T2-CG": N}
    # Table 3's calibration and construction rows disagree by rule 1 (shown as off), never counted.
    assert not any(c.passed for c in rows if c.kind in ("calibration", "construction") and c.id.startswith("T3"))
    assert all(c.passed for c in rows if c.id.endswith("-alone"))  # the NAS calibration rows hold
    assert exit_status(rows) == 1


@pytest.mark.slow
def test_resex_scoreboard_at_the_default_size():
    from ibcloud.checks import exit_status
    from ibcloud.host.ibmon import checks_of
    from ibcloud.host.resex import reproduce

    s = reproduce()
    rows = checks_of(s)
    assert _verdicts(rows) == {"R5-base": K, "R5-mean": S, "R5-widen": S, "R5-faster": S, "R5-ctime": S,
                               "R5-wtime": S, "R5-ptime": N, "R5-homog": S, "R6-br-256k": N, "R6-br-all": N,
                               "R6-br-cap": C, "R6-sweep": S, "R6-sweep-base": S, "R7-sawtooth": S,
                               "R7-between": S, "R7-nointf": S, "R8-near-base": S, "R8-beats-fm": S,
                               "R8-nointf": N, "R8-cap": S, "R8-report": C}
    assert all(c.passed for c in rows if c.kind in ("calibration", "construction"))
    # Algorithm 3 as written charges and caps the reporting VM too: reported beside, worse than repaired.
    io, aw = s["policies"]["ioshares-repaired"], s["policies"]["ioshares-as-written"]
    assert aw["128k"]["mean_us"] > io["128k"]["mean_us"] + 20
    # R8-nointf's cause (docs/reproductions/resex.md): judged on "either", the standard deviation's rise caps
    # the 10-requests-per-epoch VM; the mean-only variant leaves it uncapped.
    assert s["policies"]["ioshares-repaired"]["nointf"]["final_cap"] < 50
    assert s["policies"]["ioshares-mean"]["nointf"]["final_cap"] == 100
def test_fares_scoreboard_at_the_default_size():
    # The judged (baseline) reading only: the contended reading is reported beside and never judged, so
    # leaving it out changes no verdict (≈ 100 s on 2 cores instead of ≈ 180 s).
    from ibcloud.checks import exit_status
    from ibcloud.host.fares import reproduce
    from ibcloud.host.ibmon import checks_of

    s = reproduce(contended=False)
    rows = checks_of(s)
    assert _verdicts(rows) == {"CAL-1": K, "CAL-5": K, "CAL-10": K, "F17-1": N, "F17-5": N, "F17-5-sd": N,
                               "F17-10": N, "F17-10-sd": N, "F17-order": N, "OVH": C, "F15": N, "F16-MG4": N,
                               "F16-MG8": N, "F16-SL01": N, "F18-thrash": N, "F18-ideal": N, "F18-improve": N,
                               "F18-20": S}
    # Cause (docs/reproductions/fares.md): on F's 8 + 4 PCPUs the mains are not degraded by consolidation,
    # so the scaler search has nothing to fit and every calibration row is off.
    assert all(not s["calibration"][t]["reachable"] for t in ("1", "5", "10"))
    assert all(abs(p["thrash"]["d_main"]) < 0.01 for p in s["fig17"].values())
    # Monitor-only changes nothing (construction).
    assert all(p["monitor"]["t_main"] == p["thrash"]["t_main"] for p in s["fig17"].values())
    assert exit_status(rows) == 1


def test_sphinx_scoreboard_at_the_default_size():
    from ibcloud.host.ibmon import checks_of
    from ibcloud.host.sphinx_reproduction import reproduce

    s = reproduce()
    rows = checks_of(s)
    assert _verdicts(rows) == {"R12-base-N": K, "R12-base-M": K, "R12-coll-N": N, "R12-coll-M": N, "R12-bp-1:1": N,
                               "R12-bp-1:4": R, "R12-bp-4:1": N, "R12-bp-1:10": R, "R12-lp-1:1": R, "R12-lp-1:4": R,
                               "R12-lp-4:1": N, "R12-lp-1:10": R,
                               "R12-t9-base-1:1": K, "R12-t9-coll-1:1": N, "R12-t9-bp-1:1": N, "R12-t9-lp-1:1": R,
                               "R12-t9-base-1:4": K, "R12-t9-coll-1:4": N, "R12-t9-bp-1:4": N, "R12-t9-lp-1:4": R,
                               "R12-t9-base-4:1": K, "R12-t9-coll-4:1": N, "R12-t9-bp-4:1": N, "R12-t9-lp-4:1": N,
                               "R12-t9-base-1:10": K, "R12-t9-coll-1:10": N, "R12-t9-bp-1:10": N,
                               "R12-t9-lp-1:10": N, "R13-slope": K, "R13-linear": C,
                               "R13-small": R, "R14-1:1": R, "R14-1:4": N, "R14-manual": N, "R14-pair-1:1": R,
                               "R14-pair-1:4": R,
                               "R15-saturate": N, "R15-bounded": C, "R16-price": C, "R16-delay": R,
                               "R16-reconverge": R}
    assert all(c.passed for c in rows if c.kind in ("calibration", "construction"))
    # Causes (docs/reproductions/sphinx.md): per-packet turns between QPs make the interference symmetric, and
    # one message at a time (the per-message reading) overshoots on Nectere's side: the thesis lies between.
    pm = s["readings"]["per-message"]
    assert s["collocated"]["pl_nectere"] < 0.335 < pm["pl_nectere"] and pm["pl_memcached"] < 0.1
    # At 1:4 the CC-only loop is still climbing (near CCTI_Limit) at 0.6 s; with BP weights under it, it holds.
    assert s["sphinx"]["1:4"]["delay"] > 100 and abs(s["sphinx"]["bpw-1:4"]["lp"] / 0.25 - 1) < 0.2
    # Table 9: our interference is the other application's share of the link, a few % at these loads in every row
    # (the thesis's +5-21 % is not link sharing); R14-pair-1:1 holds on latencies while Nectere loses nothing (LP 0).
    t9 = s["table9"]["rows"]
    assert all(max(x["collocated"]["pl_nectere"], x["collocated"]["pl_memcached"]) < 0.06 for x in t9.values())
    assert t9["1:1"]["sphinx"]["pl_nectere"] < 0.005 and abs(t9["1:4"]["sphinx"]["lp"] / 0.25 - 1) < 0.2
    # Breaking the closed loops' phase-lock (compute ±5 %, a reading) leaves every row's losses near 1 % or below
    # Table 8-like 5.5 %: phase-locking is not what hides the thesis's 20 %.
    assert all(max(x["jitter_collocated"]["pl_nectere"], x["jitter_collocated"]["pl_memcached"]) < 0.06
               for x in t9.values()) and t9["1:1"]["jitter_collocated"]["pl_nectere"] > 0.003


@pytest.mark.slow
def test_drx_scoreboard_at_the_default_size():
    from ibcloud.checks import exit_status
    from ibcloud.host.drx_reproduction import reproduce
    from ibcloud.host.ibmon import checks_of

    s = reproduce()
    rows = checks_of(s)
    assert _verdicts(rows) == {"R1-drop": N, "R1-cal": K, "R1-wider": S, "R2-eb-dist": N, "R2-hb-dist": R,
                               "R2-eb-local": R, "R2-hb-local": R, "R2-cc-dist": R, "R2-pc-dist": R, "R2-hurt": N,
                               "R3-least": N, "R3-same": S, "R4-eb": S, "R4-hb": S, "R4-slower": S, "R5": C,
                               "R6a": S, "R6b": N, "R7-asym1": S, "R7-asym2": S, "R7-asym2-intf": S,
                               "R8-floor": N, "R8-static": S, "R8-hadoop": A, "R9": S, "R10": N, "R11": N}
    assert all(c.passed for c in rows if c.kind in ("calibration", "construction"))
    c = s["cases"]
    # R8-static holds trivially: with QoS from the start, DRXMax/DRXMaxQ keep Nectere inside its SLA, so DRX never
    # pushes the CC (docs/reproductions/drx.md); StMax's CC alone leaves it below the floor too.
    assert all(c[f"symmetric/{q}"]["violations"] == 0 and "push" not in c[f"symmetric/{q}"]
               for q in ("drxmax", "drxmaxq"))
    assert c["symmetric/stmax/cc-only"]["degradation"] < 0.15
    # Causes (docs/reproductions/drx.md): EB-Dist misses the SLA by one point; Linpack holds > 95 % of the CQEs,
    # so HB-Dist leaves Hadoop uncapped and cuts Linpack harder than EB-Dist (R3); Fig. 36(b)'s interferers never
    # push Nectere past its SLA, so no price moves (R6b).
    assert 0.15 < c["symmetric/eb-dist"]["degradation"] < 0.17
    assert c["symmetric/hb-dist"]["caps_last_quarter"]["hadoop"] > 99
    assert c["fig36b/none"]["degradation"] < 0.15 and c["fig36b/hb-dist"]["violations"] == 0
    # The static hardware policies (bulk packet-level) hold Nectere far below G's ≈ 20 % floor.
    assert all(c[f"{lay}/{q}"]["degradation"] < 0.05 for lay in ("symmetric", "asym1") for q in ("stmax", "stmaxq"))
    # Asymmetric-2 needs no control: uncontrolled Nectere is within its SLA already.
    assert c["asym2/none"]["degradation"] < 0.15
    # R10, R11 (docs/reproductions/drx.md): the thesis's +40 % lies between the adapters' per-packet and per-message
    # readings; with Nectere's VL at 254, weights up to 64 give the 2 MB one a packet per turn, so the curve is flat.
    m = s["motivation"]
    assert m["square_wave"]["amplitude"] < 0.35 < m["square_wave_readings"]["per-message"]["amplitude"]
    assert len({round(p["pl"], 6) for x, p in m["weight_sweep"]["weighted"].items() if x <= 64}) == 1
    assert exit_status(rows) == 1

