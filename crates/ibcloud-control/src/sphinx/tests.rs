//! Closed-loop tests of Sphinx on a plant whose losses move linearly with
//! the delay of the throttled flow (the shape of Eq. 8 for large buffers).

use super::*;
use crate::Time;

const SECOND: Time = 1_000_000_000_000;

fn pair(target: f64) -> Vec<LpGroup> {
    vec![LpGroup { a: 0, b: 1, target }]
}

fn flows() -> Vec<SphinxFlow> {
    vec![
        SphinxFlow {
            name: "nectere".into(),
            base_us: 48.0,
        },
        SphinxFlow {
            name: "memcached".into(),
            base_us: 187.0,
        },
    ]
}

/// Latencies when b is delayed by `db` and a by `da`: a loses 33 % unmanaged
/// and 1 point less per unit of b's delay; b loses 5 % plus 0.4 points per
/// unit of its delay (and the mirror for a's delay).
fn plant(da: u16, db: u16) -> [f64; 2] {
    let (da, db) = (da as f64, db as f64);
    let pl_a = (0.33 - 0.01 * db + 0.004 * da).max(0.0);
    let pl_b = (0.05 + 0.004 * db - 0.01 * da).max(0.0);
    [48.0 * (1.0 + pl_a), 187.0 * (1.0 + pl_b)]
}

fn run(s: &mut Sphinx, from: usize, steps: usize) {
    for k in from..from + steps {
        let d = s.delays().to_vec();
        s.step((k as Time + 1) * SECOND, &plant(d[0], d[1]))
            .unwrap();
    }
}

/// Mean achieved ratio over the last `n` records.
fn mean_lp(s: &Sphinx, n: usize) -> f64 {
    let r = s.records();
    r[r.len() - n..].iter().map(|x| x.lp.unwrap()).sum::<f64>() / n as f64
}

#[test]
fn holds_lp_1_1_and_1_4_with_every_error_form() {
    // 1:1 needs b's delay ≈ 20 on this plant, 1:4 ≈ 29.
    for form in [
        ErrorForm::RatioDifference,
        ErrorForm::LogRatio,
        ErrorForm::ShareDifference,
    ] {
        for target in [1.0, 0.25] {
            let params = SphinxParams {
                error: form,
                ..SphinxParams::default()
            };
            let mut s = Sphinx::new(flows(), pair(target), params).unwrap();
            run(&mut s, 0, 300);
            let lp = mean_lp(&s, 50);
            assert!(
                (lp / target - 1.0).abs() < 0.15,
                "{form:?} target {target}: mean LP {lp}"
            );
            assert_eq!(s.delays()[0], 0, "a is never delayed with Throttle::Second");
        }
    }
}

#[test]
fn saturated_actuator_leaves_the_shortfall_of_fig_52d() {
    // 1:4 needs delay ≈ 29; an actuator that stops at 10 cannot get there.
    let params = SphinxParams {
        max_delay: 10,
        ..SphinxParams::default()
    };
    let mut s = Sphinx::new(flows(), pair(0.25), params).unwrap();
    run(&mut s, 0, 100);
    let last = s.records().last().unwrap().clone();
    assert!(last.saturated);
    assert_eq!(last.delay_b, 10);
    assert!(last.lp.unwrap() > 1.0, "far from 1:4: {:?}", last.lp);
    // The price keeps integrating while the delay is stuck.
    assert!(last.price > s.records()[50].price);
}

#[test]
fn a_looser_target_lowers_the_price_and_gives_resources_back() {
    // G R16 / Fig. 55: 1:4 → 1:1 at run time.
    let mut s = Sphinx::new(flows(), pair(0.25), SphinxParams::default()).unwrap();
    run(&mut s, 0, 200);
    let before = s.delays()[1];
    let price_before = s.records().last().unwrap().price;
    s.set_target(0, 1.0).unwrap();
    run(&mut s, 200, 200);
    let after = s.delays()[1];
    assert!((27..=31).contains(&before), "1:4 delay {before}");
    assert!((18..=22).contains(&after), "1:1 delay {after}");
    let r = &s.records()[200];
    assert!(r.d_price < 0.0, "the price falls at once: {}", r.d_price);
    assert!(s.records().last().unwrap().price < price_before);
    assert!((mean_lp(&s, 50) - 1.0).abs() < 0.15);
}

#[test]
fn throttle_both_delays_the_flow_that_loses_too_little() {
    // Unmanaged, a loses 6.6× what b loses; a target of 10:1 asks a to lose
    // more, so the resource goes negative and a is the one delayed.
    let params = SphinxParams {
        throttle: Throttle::Both,
        error: ErrorForm::LogRatio,
        ..SphinxParams::default()
    };
    let mut s = Sphinx::new(flows(), pair(10.0), params).unwrap();
    run(&mut s, 0, 300);
    assert!(s.delays()[0] > 0 && s.delays()[1] == 0, "{:?}", s.delays());
    assert!(
        (mean_lp(&s, 50) / 10.0 - 1.0).abs() < 0.25,
        "{}",
        mean_lp(&s, 50)
    );
}

#[test]
fn same_observations_same_records() {
    let mut a = Sphinx::new(flows(), pair(0.25), SphinxParams::default()).unwrap();
    let mut b = a.clone();
    run(&mut a, 0, 50);
    run(&mut b, 0, 50);
    assert_eq!(a.records(), b.records());
}

#[test]
fn bad_input_is_named() {
    let p = SphinxParams::default;
    let err = |r: Result<Sphinx, String>| r.unwrap_err();
    assert!(err(Sphinx::new(flows(), pair(0.0), p())).contains("target"));
    assert!(err(Sphinx::new(flows(), pair(f64::NAN), p())).contains("target"));
    assert!(err(Sphinx::new(
        flows(),
        vec![LpGroup {
            a: 0,
            b: 2,
            target: 1.0
        }],
        p()
    ))
    .contains("flow 2"));
    assert!(err(Sphinx::new(
        flows(),
        vec![LpGroup {
            a: 1,
            b: 1,
            target: 1.0
        }],
        p()
    ))
    .contains("itself"));
    let two = vec![
        LpGroup {
            a: 0,
            b: 1,
            target: 1.0,
        },
        LpGroup {
            a: 1,
            b: 0,
            target: 1.0,
        },
    ];
    assert!(err(Sphinx::new(flows(), two, p())).contains("one group"));
    let mut bad = flows();
    bad[1].base_us = -1.0;
    assert!(err(Sphinx::new(bad, pair(1.0), p())).contains("memcached"));
    let gains = SphinxParams {
        k_i: f64::INFINITY,
        ..p()
    };
    assert!(err(Sphinx::new(flows(), pair(1.0), gains)).contains("k-i"));

    let mut s = Sphinx::new(flows(), pair(1.0), p()).unwrap();
    assert!(s
        .step(SECOND, &[50.0])
        .unwrap_err()
        .contains("1 latencies for 2"));
    let e = s.step(SECOND, &[50.0, f64::NAN]).unwrap_err();
    assert!(e.contains("memcached"), "{e}");
    s.step(SECOND, &[50.0, 190.0]).unwrap();
    assert!(s
        .step(SECOND, &[50.0, 190.0])
        .unwrap_err()
        .contains("not after"));
    assert!(s.set_target(3, 1.0).unwrap_err().contains("no LP group 3"));
    assert!(s.set_target(0, -1.0).is_err());
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the latencies, the delays stay in range and every
        /// recorded number is finite.
        #[test]
        fn delays_stay_in_range(
            lats in proptest::collection::vec((0.0f64..1e6, 0.0f64..1e6), 1..60),
            target in 0.01f64..100.0,
            both in any::<bool>(),
        ) {
            let params = SphinxParams {
                throttle: if both { Throttle::Both } else { Throttle::Second },
                max_delay: 40,
                ..SphinxParams::default()
            };
            let mut s = Sphinx::new(flows(), pair(target), params).unwrap();
            for (k, (a, b)) in lats.iter().enumerate() {
                s.step((k as Time + 1) * SECOND, &[*a, *b]).unwrap();
                prop_assert!(s.delays().iter().all(|&d| d <= 40));
            }
            for r in s.records() {
                prop_assert!(r.error.is_finite() && r.price.is_finite() && r.resource.is_finite());
                prop_assert!(r.lp.is_none_or(f64::is_finite));
            }
        }
    }
}
