//! The two application workloads of G §8 / F §7 that are not skeletons of
//! G §5.3: RDMA-Memcached Gets with alternating value sizes and the MPI
//! map-reduce sort with a tunable I/O ratio; each runs to completion, its
//! cost follows its knob, and bad keys are refused with their place.

use ibcloud_host::{RunResult, Scenario, World};

mod common;
use common::no_controllers;

/// Two hosts, VMs a0, a1 on A and b0, b1 on B; `workloads` is the JSON array.
fn scenario(workloads: &str) -> Scenario {
    Scenario::from_json(&format!(
        r#"{{"duration": "5s", "sample-interval": "100ms",
        "hosts": [{{"name": "A"}}, {{"name": "B"}}],
        "vms": [{{"name": "a0", "host": "A"}}, {{"name": "a1", "host": "A"}},
                {{"name": "b0", "host": "B"}}, {{"name": "b1", "host": "B"}}],
        "workloads": {workloads}}}"#
    ))
    .unwrap()
}

fn run(workloads: &str) -> RunResult {
    let sc = scenario(workloads);
    sc.validate().unwrap();
    World::new(&sc, &no_controllers)
        .unwrap()
        .run(&mut |_, _| {})
        .unwrap()
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// A pass of 4 KB / 16 KB / 512 KB Gets completes every request, the
/// client records one latency per Get, and the mean latency of each size
/// grows with the value size (the 512 KB value's transfer dominates).
#[test]
fn memcached_latency_grows_with_the_value_size() {
    let r = run(r#"[{"kind": "memcached", "vm": "a0", "peer": "b0", "per-size": 5}]"#);
    let w = &r.workloads[0];
    assert_eq!(w.completed, 15);
    assert!(w.finish_s.is_some());
    let client: Vec<f64> = r
        .latencies
        .iter()
        .filter(|l| l.0 == 0)
        .map(|l| l.2 as f64)
        .collect();
    assert_eq!(client.len(), 15);
    let (k4, k16, k512) = (
        mean(&client[0..5]),
        mean(&client[5..10]),
        mean(&client[10..15]),
    );
    eprintln!("memcached mean latency, ps: 4k {k4:.0}, 16k {k16:.0}, 512k {k512:.0}");
    assert!(k4 < k16 && k16 < k512, "{k4} {k16} {k512}");
    // 512 KB at 4xQDR-class rates takes more than 100 us on the wire alone.
    assert!(k512 > 100e6 && k512 > 10.0 * k4, "{k4} {k512}");
    // The sizes alternate: a second pass repeats the first one's pattern.
    let r = run(
        r#"[{"kind": "memcached", "vm": "a0", "peer": "b0", "per-size": 2,
             "sizes": ["512k", "4k"], "iterations": 8}]"#,
    );
    let c: Vec<f64> = r
        .latencies
        .iter()
        .filter(|l| l.0 == 0)
        .map(|l| l.2 as f64)
        .collect();
    assert_eq!(c.len(), 8);
    assert!(c[0] > 10.0 * c[2] && c[4] > 10.0 * c[6], "{c:?}");
}

fn sort_runtime(ratio: &str) -> f64 {
    // Four VMs, two per host, each pair writing across hosts (F Fig. 18).
    let r = run(&format!(
        r#"[{{"kind": "mapreduce-sort", "vm": "a0", "peer": "b0", "iterations": 2, "io-ratio": "{ratio}"}},
            {{"kind": "mapreduce-sort", "vm": "b1", "peer": "a1", "iterations": 2, "io-ratio": "{ratio}"}}]"#
    ));
    let mut worst: f64 = 0.0;
    for w in &r.workloads {
        assert_eq!(w.completed, 2, "{ratio}");
        worst = worst.max(w.finish_s.expect("finished") - w.start_s);
    }
    worst
}

/// Two rounds finish at each ratio, and more messages per compute unit
/// make the job longer.
#[test]
fn mapreduce_sort_run_time_grows_with_the_io_ratio() {
    let base = sort_runtime("1:1");
    let five = sort_runtime("1:5");
    eprintln!("mapreduce-sort, 2 rounds: 1:1 {base:.4} s, 1:5 {five:.4} s");
    assert!(base > 0.06, "{base}"); // 2 × (20 + 10) ms of compute at least
    assert!(five > base, "{base} {five}");
}

#[test]
fn bad_application_keys_name_their_place() {
    let bad = |w: &str| scenario(w).validate().unwrap_err();
    let e = bad(r#"[{"kind": "memcached", "vm": "a0", "peer": "b0", "sizes": []}]"#);
    assert_eq!(e.path, "workloads[0].sizes");
    assert!(e.problem.contains("at least one"), "{e}");
    let e = bad(r#"[{"kind": "memcached", "vm": "a0", "peer": "b0", "sizes": [0]}]"#);
    assert_eq!(e.path, "workloads[0].sizes");
    let e = bad(r#"[{"kind": "memcached", "vm": "a0", "peer": "b0", "per-size": 0}]"#);
    assert_eq!(e.path, "workloads[0].per-size");
    let e = bad(r#"[{"kind": "nectere", "vm": "a0", "peer": "b0", "sizes": ["4k"]}]"#);
    assert_eq!(e.path, "workloads[0].sizes");
    for r in ["1-5", "0:5", "1:x", "5", "1:5:2", ""] {
        let e = bad(&format!(
            r#"[{{"kind": "mapreduce-sort", "vm": "a0", "peer": "b0", "io-ratio": "{r}"}}]"#
        ));
        assert_eq!(e.path, "workloads[0].io-ratio", "{r}");
        assert!(e.problem.contains("positive integers"), "{r}: {e}");
    }
    let e = bad(r#"[{"kind": "terasort", "vm": "a0", "peer": "b0", "io-ratio": "1:2"}]"#);
    assert_eq!(e.path, "workloads[0].io-ratio");
    let e = Scenario::from_json(
        r#"{"hosts": [{"name": "A"}, {"name": "B"}], "workloads": [{"kind": "memcached", "size-list": []}]}"#,
    )
    .unwrap_err();
    assert!(e.problem.contains("unknown field `size-list`"), "{e}");
}
