//! FreeMarket (F §5.6.2, Algorithm 2) stepped on a synthetic VmSample feed,
//! against hand-worked Reso arithmetic (F reference §5.6 ambiguity 1: two
//! VMs, equal split → 624,288 Resos each; the 2 MB VM at 932 MiB/s crosses
//! the 10 % floor ≈ 0.53 s into the epoch).

use ibcloud_control::capping::{build_cap_policy, CapChange, CapPolicy, VmSample};
use ibcloud_control::Time;

const MS: Time = 1_000_000_000;

fn names() -> Vec<String> {
    vec!["small".into(), "big".into()]
}

fn policy(extra: serde_json::Value) -> Box<dyn CapPolicy> {
    let p = extra.as_object().cloned().unwrap_or_default();
    build_cap_policy("freemarket", &p, &names()).unwrap()
}

/// The reference's two VMs over one 1 ms interval: the 64 KB Nectere VM
/// (one 64 KiB message per 209 µs, busy polling: 100 % CPU) and the 2 MB
/// VM at 932 MiB/s (100 % CPU).
fn feed(big_cpu: f64) -> Vec<VmSample> {
    let s = |bytes: u64, cpu: f64| VmSample {
        interval: MS,
        bytes,
        requests: 1,
        cpu_pct: cpu,
        cap: 0,
        latencies_us: vec![],
    };
    vec![
        s(65_536 * 1000 / 209, 100.0),
        s(932 * 1_048_576 / 1000, big_cpu),
    ]
}

/// Steps `p` from `from` to `to` ms; returns (time in ms, change) pairs.
fn run(p: &mut dyn CapPolicy, from: u64, to: u64) -> Vec<(u64, CapChange)> {
    let mut out = Vec::new();
    for ms in from..=to {
        for c in p.step(ms * MS, &feed(100.0)) {
            out.push((ms, c));
        }
    }
    out
}

#[test]
fn worked_example_crosses_the_floor_at_533_ms() {
    let mut p = policy(serde_json::json!({}));
    let changes = run(p.as_mut(), 1, 1000);
    // Allocation: 100,000 CPU + 1,048,576 / 2 MTUs = 624,288 (construction).
    let first = &p.records()[..2];
    assert!((first[0].balance + 100.0 + 306.2 - 624_288.0).abs() < 0.1);
    // Big VM spends 954.368 MTUs + 100 CPU % = 1054.368 Resos/ms; the 10 %
    // floor (62,428.8) is crossed by the charge of interval 533:
    // 624,288 − 533 × 1054.368 = 62,309.9 (hand-worked).
    let (t0, c0) = changes[0];
    assert_eq!((t0, c0), (533, CapChange { vm: 1, cap: 90 }));
    // Only the big VM is ever cut; the small one ends with about a third.
    assert!(changes.iter().all(|(_, c)| c.vm == 1));
    let small_end = p.records().iter().rev().find(|r| r.vm == 0).unwrap();
    let frac = small_end.balance / 624_288.0;
    assert!((frac - 0.349).abs() < 0.001, "{frac}");
    // Cut by 10 % of the previous cap every interval: 90, 81, 72.9 → 73 …
    let caps: Vec<u32> = changes.iter().take(5).map(|(_, c)| c.cap).collect();
    assert_eq!(caps, [90, 81, 73, 66, 59]);
    // … down to the 1 % floor, and no cut once ≤ 10 % of the epoch is left.
    assert!(changes.iter().all(|&(t, _)| t < 900));
    assert_eq!(changes.last().unwrap().1.cap, 1);
}

#[test]
fn saw_tooth_replenishes_and_restores_each_epoch() {
    let mut p = policy(serde_json::json!({}));
    let changes = run(p.as_mut(), 1, 3000);
    // Each epoch: cut from 533 ms into it, restored (cap 0) at its start.
    for e in 0..3u64 {
        let first = changes.iter().find(|(t, _)| (t - 1) / 1000 == e).unwrap();
        if e == 0 {
            assert_eq!(*first, (533, CapChange { vm: 1, cap: 90 }));
        } else {
            assert_eq!(*first, (e * 1000 + 1, CapChange { vm: 1, cap: 0 }));
            let cut = changes
                .iter()
                .find(|(t, c)| (t - 1) / 1000 == e && c.cap == 90);
            assert_eq!(cut.unwrap().0, e * 1000 + 533);
        }
    }
    // The big VM's balance: falls to ~62k, rises to 624,288 − one interval.
    let big: Vec<f64> = p
        .records()
        .iter()
        .filter(|r| r.vm == 1)
        .map(|r| r.balance)
        .collect();
    assert!(
        (big[1000] - (624_288.0 - 1054.368)).abs() < 1.0,
        "{}",
        big[1000]
    );
    assert!(big[999] < 62_428.8);
}

#[test]
fn cut_options_change_the_cut() {
    // Once per epoch: a single 90 % cap until the epoch ends.
    let mut p = policy(serde_json::json!({"cut-every": "epoch"}));
    let c = run(p.as_mut(), 1, 1001);
    assert_eq!(
        c,
        [
            (533, CapChange { vm: 1, cap: 90 }),
            (1001, CapChange { vm: 1, cap: 0 })
        ]
    );
    // −10 points: 90, 80, 70 …
    let mut p = policy(serde_json::json!({"cut": "points"}));
    let c: Vec<u32> = run(p.as_mut(), 1, 540).iter().map(|x| x.1.cap).collect();
    assert_eq!(&c[..4], [90, 80, 70, 60]);
    // Not restored: the cap stays into the next epoch.
    let mut p = policy(serde_json::json!({"restore-at-epoch": false}));
    let c = run(p.as_mut(), 1, 1100);
    assert!(c.iter().all(|(t, _)| *t < 900));
    // Per-resource balances: the big VM's IB share (524,288) hits 10 % first,
    // 524,288 − 495 × 954.368 = 51,875.8 < 52,428.8 (hand-worked).
    let mut p = policy(serde_json::json!({"balance": "per-resource"}));
    assert_eq!(
        run(p.as_mut(), 1, 600)[0],
        (495, CapChange { vm: 1, cap: 90 })
    );
    // Observed CPU as the uncapped VM's previous value: 10 % off 60 %.
    let mut p = policy(serde_json::json!({"uncapped-base": "observed"}));
    let mut first = None;
    for ms in 1..=600u64 {
        if let Some(c) = p.step(ms * MS, &feed(60.0)).first() {
            first = Some(*c);
            break;
        }
    }
    assert_eq!(first, Some(CapChange { vm: 1, cap: 54 }));
}

#[test]
fn weights_and_monitored_vms_split_the_link() {
    let mut p = policy(serde_json::json!({"weights": {"big": 3}, "vms": ["small", "big"]}));
    p.step(MS, &feed(100.0));
    let r = p.records();
    // big: 100,000 + 3/4 × 1,048,576 = 886,432 before its first charge.
    assert!(
        (r[1].balance + 1054.368 - 886_432.0).abs() < 0.01,
        "{}",
        r[1].balance
    );
    let mut p = policy(serde_json::json!({"vms": ["big"]}));
    p.step(MS, &feed(100.0));
    assert_eq!(p.records().len(), 1);
    assert!((p.records()[0].balance + 1054.368 - 1_148_576.0).abs() < 0.01);
}

#[test]
fn a_recorded_trace_replays_identically() {
    let trace: Vec<Vec<VmSample>> = (0..1500u64)
        .map(|k| {
            let mut f = feed(100.0 - (k % 7) as f64);
            f[1].bytes = f[1].bytes * (k % 5) / 2;
            f
        })
        .collect();
    let play = || {
        let mut p = policy(serde_json::json!({}));
        let c: Vec<_> = trace
            .iter()
            .enumerate()
            .flat_map(|(k, f)| p.step((k as u64 + 1) * MS, f))
            .collect();
        (c, p.records().to_vec())
    };
    let (a, b) = (play(), play());
    assert!(!a.0.is_empty());
    assert_eq!(a, b);
}

#[test]
fn bad_parameters_are_clear_errors() {
    let bad = |j: serde_json::Value| {
        let p = j.as_object().cloned().unwrap();
        build_cap_policy("freemarket", &p, &names()).unwrap_err()
    };
    let e = bad(serde_json::json!({"flor": 0.1}));
    assert!(
        e.starts_with("freemarket: unknown parameter `flor`, expected one of"),
        "{e}"
    );
    assert_eq!(
        bad(serde_json::json!({"floor": 0})),
        "freemarket: floor: must lie in (0, 1), got 0"
    );
    assert_eq!(
        bad(serde_json::json!({"floor": null})),
        "freemarket: floor: expected a number, got null"
    );
    assert_eq!(
        bad(serde_json::json!({"mtu": -1})),
        "freemarket: mtu: must be positive, got -1"
    );
    assert!(bad(serde_json::json!({"epoch": "1.5ms"})).contains("whole number"));
    assert!(bad(serde_json::json!({"interval": "0ms"})).contains("positive"));
    assert!(bad(serde_json::json!({"vms": ["nope"]})).contains("unknown VM 'nope'"));
    assert!(bad(serde_json::json!({"weights": [1]})).contains("one value per VM"));
    assert!(bad(serde_json::json!({"cut": "halve"})).contains("multiplicative, points"));
    assert!(bad(serde_json::json!({"record-every": 0})).contains("positive integer"));
    let e = build_cap_policy("freemarkt", &Default::default(), &names()).unwrap_err();
    assert!(e.contains("unknown capping policy 'freemarkt'"), "{e}");
}
