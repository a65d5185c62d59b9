//! Bad input never panics: every parameter key × a set of hostile values
//! builds a policy or returns a clear error, and a policy that builds keeps
//! its caps and balances finite when stepped with hostile samples (NaN and
//! infinite CPU %, huge byte counts, NaN latencies, zero intervals, missing
//! VMs).

use ibcloud_control::capping::{build_cap_policy, VmSample};
use serde_json::{json, Value};

const KEYS: [&str; 36] = [
    "vms",
    "interval",
    "epoch",
    "mtu",
    "link-bytes-per-s",
    "cpu-price",
    "mtu-price",
    "balance",
    "vcpus",
    "weights",
    "floor",
    "epoch-guard",
    "cut",
    "cut-step",
    "cut-every",
    "restore-at-epoch",
    "min-cap",
    "uncapped-base",
    "record-every",
    "mode",
    "reporters",
    "sla",
    "window",
    "baseline",
    "base-mean-us",
    "base-std-us",
    "statistic",
    "intf-units",
    "interferer",
    "share-intervals",
    "cap-from",
    "cpu-rate",
    "rate-decay",
    "rate-reset-at-epoch",
    "floor-rule",
    "no-such-key",
];

fn hostile() -> Vec<Value> {
    vec![
        Value::Null,
        json!(-1),
        json!(0),
        json!(0.5),
        json!(1),
        json!(1e308),
        json!(-1e308),
        json!(u64::MAX),
        json!("abc"),
        json!("1ms"),
        json!("0s"),
        json!("-1ms"),
        json!(""),
        json!(true),
        json!([]),
        json!(["a"]),
        json!([1, 2]),
        json!(["a", "a"]),
        json!({"a": 2}),
        json!({"zz": 2}),
        json!({"a": -1}),
        json!("as-written"),
        json!("base"),
    ]
}

fn hostile_samples(k: u64) -> Vec<VmSample> {
    let lat = match k % 4 {
        0 => vec![f64::NAN, 1e300, -5.0],
        1 => vec![f64::INFINITY],
        2 => vec![209.0; 40],
        _ => vec![],
    };
    vec![
        VmSample {
            interval: if k.is_multiple_of(3) {
                0
            } else {
                1_000_000_000
            },
            bytes: u64::MAX,
            requests: u64::MAX,
            cpu_pct: [f64::NAN, f64::INFINITY, -50.0, 1e12][(k % 4) as usize],
            cap: 0,
            latencies_us: lat,
        },
        VmSample {
            bytes: k * 1_000_000,
            requests: k,
            cpu_pct: 100.0,
            latencies_us: vec![209.0 * (1 + k % 3) as f64; 8],
            ..Default::default()
        },
        // The third VM ("c") is missing from the slice every other step.
    ]
}

#[test]
fn hostile_parameters_and_samples_never_panic() {
    let names: Vec<String> = vec!["a".into(), "b".into(), "c".into()];
    let mut built = 0;
    for kind in ["freemarket", "ioshares"] {
        for key in KEYS {
            for v in hostile() {
                let mut p = serde_json::Map::new();
                p.insert(key.into(), v.clone());
                if key == "base-mean-us" || key == "base-std-us" {
                    p.insert("baseline".into(), json!("base"));
                }
                match build_cap_policy(kind, &p, &names) {
                    Err(e) => {
                        assert!(e.starts_with(kind), "{kind} {key}={v}: {e}");
                    }
                    Ok(mut pol) => {
                        built += 1;
                        for k in 1..=40u64 {
                            let mut f = hostile_samples(k);
                            if k.is_multiple_of(2) {
                                f.push(VmSample::default());
                            }
                            for c in pol.step(k * 1_000_000_000, &f) {
                                assert!(c.vm < 3, "{kind} {key}={v}: {c:?}");
                            }
                        }
                        for r in pol.records() {
                            assert!(
                                r.balance.is_finite()
                                    && r.price.is_finite()
                                    && r.observed.is_finite(),
                                "{kind} {key}={v}: {r:?}"
                            );
                        }
                        let rep = pol.report(&names);
                        assert!(serde_json::to_string(&rep).is_ok());
                    }
                }
            }
        }
    }
    assert!(built > 60, "{built}");
}
