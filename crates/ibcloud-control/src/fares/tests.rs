//! Hand-worked cases of Algorithm 1. Set-up of most: a 100 ms window, a
//! fixed t1req of 100 µs (MAX_REQs = 1000), VM 0 high and VM 1 low priority
//! at 1:1 (each allocated half: 500 requests), so HL = 500, ML = 250,
//! LL = 50 requests; α β γ δ = −0.6, −0.3, −0.1, 0.2; Δcap = 100 × boost ÷
//! window.

use super::*;
use crate::capping::build_cap_policy;
use serde_json::json;

const MS: Time = 1_000_000_000;

fn params() -> FaresParams {
    FaresParams {
        period: 100 * MS,
        t1req: Some(100_000_000),
        fairness: Fairness::Resource { x: 1.0, y: 1.0 },
        ..FaresParams::default()
    }
}

fn pair(p: FaresParams) -> Fares {
    Fares::new(p, vec![Some(Priority::High), Some(Priority::Low)]).unwrap()
}

fn sample(requests: u64, cpu: f64) -> VmSample {
    VmSample {
        interval: 100 * MS,
        bytes: requests * 65536,
        requests,
        cpu_pct: cpu,
        cap: 0,
        latencies_us: vec![],
    }
}

/// One step with the high VM idle and the low VM completing `reqs`.
fn low_step(f: &mut Fares, now: Time, reqs: u64) -> Vec<CapChange> {
    f.step(now, &[sample(0, 50.0), sample(reqs, 50.0)])
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn alpha_branch_charges_back() {
    // 800 > HL: α·reqs·t1req = −0.6·800·1e-4 = −0.048 s → Δcap −48 → 52.
    let mut f = pair(params());
    let b = f.boost(1, &sample(800, 50.0), 10.0).unwrap();
    assert_eq!(b.band, Band::High);
    assert!(close(b.boost_s, -0.048) && close(b.dcap, -48.0));
    assert_eq!(
        low_step(&mut f, 100 * MS, 800),
        vec![CapChange { vm: 1, cap: 52 }]
    );
}

#[test]
fn beta_gamma_delta_branches() {
    let mut f = pair(params());
    // ML < 300 < HL: β: −0.3·300·1e-4 = −0.009 s → −9.
    let b = f.boost(1, &sample(300, 0.0), 0.0).unwrap();
    assert_eq!(b.band, Band::Medium);
    assert!(close(b.dcap, -9.0));
    // LL < 100 < ML: γ: −0.1·100·1e-4 = −0.001 s → −1.
    let b = f.boost(1, &sample(100, 0.0), 0.0).unwrap();
    assert_eq!(b.band, Band::Low);
    assert!(close(b.dcap, -1.0));
    // 10 < LL: δ·(MAX_REQs − reqs)·t1req = 0.2·990·1e-4 = 0.0198 s → +19.8.
    let b = f.boost(1, &sample(10, 0.0), 0.0).unwrap();
    assert_eq!(b.band, Band::Idle);
    assert!(close(b.dcap, 19.8));
    // Charged to 52, then given back 19.8 → 71.8 → 72.
    low_step(&mut f, 100 * MS, 800);
    assert_eq!(
        low_step(&mut f, 200 * MS, 10),
        vec![CapChange { vm: 1, cap: 72 }]
    );
    // Two more idle windows: 91.6, then 111.4 → cap-max → uncapped (0).
    assert_eq!(
        low_step(&mut f, 300 * MS, 10),
        vec![CapChange { vm: 1, cap: 92 }]
    );
    assert_eq!(
        low_step(&mut f, 400 * MS, 10),
        vec![CapChange { vm: 1, cap: 0 }]
    );
}

#[test]
fn high_priority_branch() {
    let mut f = pair(params());
    // 600 > HL and load < MAX_LOAD: MAX_REQs·t1req = 0.1 s → +100.
    let b = f.boost(0, &sample(600, 0.0), 50.0).unwrap();
    assert!(close(b.boost_s, 0.1) && close(b.dcap, 100.0));
    // Load at MAX_LOAD (not below): no change; below HL: no change.
    assert_eq!(f.boost(0, &sample(600, 0.0), 90.0).unwrap().boost_s, 0.0);
    assert_eq!(f.boost(0, &sample(400, 0.0), 10.0).unwrap().boost_s, 0.0);
    // The high VM is never charged back, however much it sends.
    let ch = f.step(100 * MS, &[sample(1000, 100.0), sample(0, 0.0)]);
    assert!(ch.is_empty());
}

#[test]
fn host_load_is_sum_over_cpus() {
    // 8 VMs at 100 % on 8 CPUs = 100 % ≥ MAX_LOAD 90: no boost; at 80 % each: 80 < 90.
    let mut p = params();
    p.cap_min = 1.0;
    let f = Fares::new(p, vec![Some(Priority::High); 8]).unwrap();
    let busy: Vec<_> = (0..8).map(|_| sample(200, 100.0)).collect();
    assert!(close(f.load(&busy, 0), 100.0));
    let light: Vec<_> = (0..8).map(|_| sample(200, 80.0)).collect();
    assert!(close(f.load(&light, 0), 80.0));
}

#[test]
fn boundaries() {
    for (boundary, want, dcap) in [
        (Boundary::Above, Band::High, -30.0),   // α·500·1e-4 = −0.03 s
        (Boundary::Below, Band::Medium, -15.0), // β·500·1e-4 = −0.015 s
        (Boundary::AsWritten, Band::None, 0.0),
    ] {
        let mut p = params();
        p.boundary = boundary;
        let mut f = pair(p);
        let b = f.boost(1, &sample(500, 0.0), 0.0).unwrap();
        assert_eq!(b.band, want, "{boundary:?}");
        assert!(close(b.dcap, dcap), "{boundary:?}: {}", b.dcap);
    }
    // reqs == LL under `below` is idle (δ), under `above` it is γ.
    let mut p = params();
    p.boundary = Boundary::Below;
    assert_eq!(
        pair(p).boost(1, &sample(50, 0.0), 0.0).unwrap().band,
        Band::Idle
    );
    assert_eq!(
        pair(params()).boost(1, &sample(50, 0.0), 0.0).unwrap().band,
        Band::Low
    );
}

#[test]
fn rounding_carry_keeps_small_boosts() {
    // 60 requests (γ): −0.1·60·1e-4 = −0.0006 s → Δcap −0.6 per window.
    let mut carry = pair(params());
    let mut p = params();
    p.rounding = Rounding::Truncate;
    let mut trunc = pair(p);
    let mut caps = (vec![], vec![]);
    for k in 1..=5 {
        caps.0.extend(low_step(&mut carry, k * 100 * MS, 60));
        caps.1.extend(low_step(&mut trunc, k * 100 * MS, 60));
    }
    // carry: 99.4 (cap 99), 98.8, 98.2, 97.6 (98), 97.0.
    assert_eq!(
        caps.0,
        vec![
            CapChange { vm: 1, cap: 99 },
            CapChange { vm: 1, cap: 98 },
            CapChange { vm: 1, cap: 97 }
        ]
    );
    // truncate: 99.4 → 99, 98.4 → 98, …: every window loses 1 (rounded).
    assert_eq!(caps.1.len(), 5);
    assert_eq!(caps.1.last().unwrap().cap, 95);
}

#[test]
fn cap_bounds() {
    let mut p = params();
    p.cap_min = 10.0;
    let mut f = pair(p);
    for k in 1..=10 {
        low_step(&mut f, k * 100 * MS, 1000);
    }
    assert_eq!(f.records().last().unwrap().cap, 10);
}

#[test]
fn measured_t1req_from_bytes() {
    // 10 requests of 2 MiB at 932 MiB/s: t1req = 2/932 s; then a window
    // with no completion keeps the measured value.
    let mut p = params();
    p.t1req = None;
    let mut f = pair(p);
    let s = VmSample {
        interval: 100 * MS,
        bytes: 10 << 21,
        requests: 10,
        ..VmSample::default()
    };
    let b = f.boost(1, &s, 0.0).unwrap();
    assert!(close(b.t1req_s, 2.0 / 932.0));
    assert!(close(b.max_reqs, 0.1 / (2.0 / 932.0)));
    let b = f.boost(1, &sample(0, 0.0), 0.0).unwrap();
    assert!(close(b.t1req_s, 2.0 / 932.0));
}

#[test]
fn fairness_shares() {
    // Degradation ratio 4, gain 1: low weight 1/4 → shares 0.8 / 0.2.
    let mut p = params();
    p.fairness = Fairness::Degradation {
        ratio: 4.0,
        gain: 1.0,
    };
    let f = pair(p.clone());
    assert!(close(f.shares()[0], 0.8) && close(f.shares()[1], 0.2));
    // Gain 0: equal shares whatever the ratio.
    p.fairness = Fairness::Degradation {
        ratio: 4.0,
        gain: 0.0,
    };
    assert!(close(pair(p.clone()).shares()[1], 0.5));
    // Resource 3:1.
    p.fairness = Fairness::Resource { x: 3.0, y: 1.0 };
    let mut f = pair(p);
    assert!(close(f.shares()[1], 0.25));
    // Quota 250: HL = 250, so 300 is now above HL.
    assert_eq!(f.boost(1, &sample(300, 0.0), 0.0).unwrap().band, Band::High);
}

#[test]
fn monitor_only_never_changes_a_cap() {
    let mut p = params();
    p.monitor_only = true;
    let mut f = pair(p);
    for k in 1..=5 {
        assert!(low_step(&mut f, k * 100 * MS, 1000).is_empty());
    }
    assert_eq!(f.records().len(), 10);
    assert!(f.records().last().unwrap().balance < 100.0);
}

#[test]
fn unmanaged_and_empty_windows_are_skipped() {
    let mut f = Fares::new(params(), vec![None, Some(Priority::Low)]).unwrap();
    let mut s = sample(800, 0.0);
    s.interval = 0;
    assert!(f.step(0, &[sample(800, 0.0), s]).is_empty());
    assert!(f.records().is_empty());
}

#[test]
fn replay_is_deterministic() {
    // A recorded trace: a bursty low VM and a steady high VM.
    let trace: Vec<Vec<VmSample>> = (0..200u64)
        .map(|k| {
            let burst = [900, 30, 400, 120, 0, 700][(k % 6) as usize];
            vec![sample(550, 60.0), sample(burst + k % 7, 90.0)]
        })
        .collect();
    let run = || {
        let mut p = params();
        p.t1req = None;
        let mut f = pair(p);
        let mut caps = Vec::new();
        for (k, obs) in trace.iter().enumerate() {
            caps.push(f.step(k as Time * 100 * MS, obs));
        }
        (caps, f.records().to_vec())
    };
    let (a, b) = (run(), run());
    assert_eq!(a, b);
    assert_eq!(a.1.len(), 400);
    // The low VM was charged back at some point.
    assert!(a.1.iter().any(|r| r.vm == 1 && r.cap > 0 && r.cap < 100));
}

fn table(v: serde_json::Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[test]
fn from_params_and_registry() {
    let names: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    let p = table(
        json!({"high": ["a"], "low": ["b"], "period": "30ms", "ratio": "5:1",
                         "alpha": -1.0, "boundary": "as-written", "t1req": "10us"}),
    );
    let f = Fares::from_params(&p, &names).unwrap();
    assert_eq!(f.params().period, 30 * MS);
    assert_eq!(f.params().t1req, Some(10_000_000));
    assert_eq!(
        f.params().fairness,
        Fairness::Degradation {
            ratio: 5.0,
            gain: 1.0
        }
    );
    assert_eq!(f.shares()[2], 0.0);
    let pol = build_cap_policy("fares", &p, &names).unwrap();
    assert_eq!(pol.name(), "fares");
    assert_eq!(pol.period(), 30 * MS);
}

#[test]
fn bad_parameters_are_clear_errors() {
    let names: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
    let cases = [
        (
            json!({"high": ["a"], "colour": 1}),
            "unknown field `colour`",
        ),
        (json!({"high": ["a"], "ratio": "0:1"}), "positive numbers"),
        (json!({"high": ["a"], "ratio": -2.0}), "must be positive"),
        (json!({"high": ["a"], "ratio": 0.0}), "must be positive"),
        (json!({"high": ["a"], "hl": 0.5, "ml": 0.5}), "hl > ml > ll"),
        (
            json!({"high": ["a"], "alpha": "x"}),
            "alpha: expected a finite number",
        ),
        (
            json!({"high": ["a"], "alpha": null}),
            "alpha: expected a finite number",
        ),
        (json!({"high": ["z"]}), "unknown VM 'z'"),
        (json!({"high": ["a"], "low": ["a"]}), "listed twice"),
        (json!({}), "at least one VM"),
        (json!({"high": ["a"], "period": "0s"}), "period"),
        (json!({"high": ["a"], "period": "soon"}), "period"),
        (
            json!({"high": ["a"], "boundary": "middle"}),
            "boundary: expected one of",
        ),
        (json!({"high": ["a"], "cap-min": 0}), "cap-min"),
        (
            json!({"high": ["a"], "fairness": "resource", "ratio": 2}),
            "ratio and gain",
        ),
        (
            json!({"high": ["a"], "fairness": "resource", "proportion": "3:-1"}),
            "positive",
        ),
        (
            json!({"high": ["a"], "proportion": "3:1"}),
            "fairness = \"resource\"",
        ),
        (json!({"high": ["a"], "gain": -1}), "gain"),
    ];
    for (v, want) in cases {
        let e = Fares::from_params(&table(v.clone()), &names).unwrap_err();
        assert!(e.contains(want), "{v}: {e}");
    }
    let e = build_cap_policy("fairshare", &Map::new(), &names).unwrap_err();
    assert!(e.contains("unknown capping policy"));
}
