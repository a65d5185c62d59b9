//! The simulated subnet manager (`ibcloud_host::sm`): a QoS push costs an
//! SM restart and MADs and acts only on QPs created afterwards (G §3.3,
//! §10.1 item 4); a congestion-control push costs MADs only.

use ibcloud_host::{RunResult, Scenario, World};

mod common;
use common::no_controllers;

/// Nectere (SL0) beside a bulk workload (SL1) on two hosts; StMaxQ's QoS
/// pushed at 5 ms (SM restart 2 ms, 10 us per MAD).
fn scenario(path_sl: &str, bulk: &str, parts: &str) -> Scenario {
    Scenario::from_json(&format!(
        r#"{{"duration": "30ms", "sample-interval": "1ms",
        "fabric": {{"link": "4xQDR", "mtu": 2048, "vls": 2}},
        "sm": {{"mad-latency": "10us", "restart": "2ms", "path-sl": "{path_sl}",
                "pushes": [{{"at": "5ms", "policy": "stmaxq", "parts": "{parts}"}}]}},
        "hosts": [{{"name": "A"}}, {{"name": "B"}}],
        "vms": [{{"name": "a0", "host": "A"}}, {{"name": "a1", "host": "A"}},
                {{"name": "b0", "host": "B"}}, {{"name": "b1", "host": "B"}}],
        "workloads": [
          {{"kind": "nectere", "vm": "a0", "peer": "b0", "size": "64k", "sl": 0}},
          {bulk}]}}"#
    ))
    .unwrap()
}

const WRITER: &str =
    r#"{"kind": "rdma-write", "vm": "a1", "peer": "b1", "size": "512k", "depth": 4, "sl": 1}"#;
/// Hadoop-like: a new job (new QPs) every ~3 ms.
const TERASORT: &str = r#"{"kind": "terasort", "vm": "a1", "peer": "b1", "size": "512k", "messages": 8,
    "compute-before": "200us", "compute-after": "200us", "sl": 1}"#;

fn run(sc: &Scenario) -> RunResult {
    sc.validate().unwrap();
    World::new(sc, &no_controllers)
        .unwrap()
        .run(&mut |_, _| {})
        .unwrap()
}

/// Mean Nectere latency (µs) of requests completed after `from` ps.
fn nectere_after(r: &RunResult, from: u64) -> f64 {
    let l: Vec<f64> = r
        .latencies
        .iter()
        .filter(|l| l.0 == 0 && l.1 > from)
        .map(|l| l.2 as f64 / 1e6)
        .collect();
    assert!(l.len() > 20, "{} Nectere requests", l.len());
    l.iter().sum::<f64>() / l.len() as f64
}

#[test]
fn a_qos_push_acts_after_restart_and_mads_and_only_on_new_qps() {
    let given = run(&scenario("given", WRITER, "qos"));
    let push = &given.sm[0];
    // 2 hosts on one 3-port switch: 2 outputs × (2 VLArb blocks + 4 SL2VL
    // tables, input ports 0-3) + 2 CA ports × 3 = 18 MADs: two windows.
    assert_eq!((push.qos_mads, push.cc_mads), (18, 0));
    assert_eq!(push.restart, 2_000_000_000);
    assert_eq!(push.in_force, 5_000_000_000 + 2_000_000_000 + 20_000_000);
    assert!(push.error.is_empty(), "{}", push.error);
    let t = push.in_force + 1_000_000_000;
    // SLs as given: the writer is on SL1 from the start, so 254:1 favours
    // Nectere as soon as the tables are written.
    let favoured = nectere_after(&given, t);
    // SLs from the SA: the writer's QP was created without QoS, on SL0, and
    // keeps it: Nectere shares VL0 with it after the push too.
    let sa = nectere_after(&run(&scenario("sa", WRITER, "qos")), t);
    assert!(
        sa > 1.05 * favoured,
        "old QP keeps SL0: {sa:.1} us vs {favoured:.1} us with the SL given"
    );
    // Hadoop opens new QPs for every job: after the push they get SL1.
    let hadoop = nectere_after(&run(&scenario("sa", TERASORT, "qos")), t + 4_000_000_000);
    let hadoop_given = nectere_after(&run(&scenario("given", TERASORT, "qos")), t + 4_000_000_000);
    assert!(
        (hadoop / hadoop_given - 1.0).abs() < 0.05,
        "new jobs' QPs take SL1: {hadoop:.1} vs {hadoop_given:.1} us"
    );
}

#[test]
fn a_cc_push_needs_no_restart_and_a_qos_push_needs_the_vls() {
    let r = run(&scenario("given", WRITER, "cc"));
    let p = &r.sm[0];
    // 1 switch setting + 2 × (CA setting + 2 CCT blocks).
    assert_eq!((p.cc_mads, p.qos_mads, p.restart), (7, 0, 0));
    assert_eq!(p.in_force, 5_000_000_000 + 10_000_000);
    assert!(p.error.is_empty(), "{}", p.error);
    // Without a second VL the QoS push is refused, and the record says why.
    let mut sc = scenario("given", WRITER, "qos");
    sc.fabric.vls = 1;
    let r = run(&sc);
    assert!(r.sm[0].error.contains("VLs"), "{}", r.sm[0].error);
}

#[test]
fn bad_sm_settings_name_their_key() {
    for (key, value, want) in [
        ("mad-latency", r#""-1us""#, "negative"),
        ("mad-latency", r#""nan""#, "cannot read"),
        ("restart", r#""7200s""#, "absurd"),
        ("mad-window", "0", "1-1024"),
        ("path-sl", r#""sometimes""#, "given or sa"),
    ] {
        let sc = Scenario::from_json(&format!(
            r#"{{"sm": {{"{key}": {value}}}, "hosts": [{{"name": "A"}}, {{"name": "B"}}]}}"#
        ))
        .unwrap();
        let e = sc.validate().unwrap_err();
        assert_eq!(e.path, format!("sm.{key}"));
        assert!(e.problem.contains(want), "{key}: {}", e.problem);
    }
    let e = Scenario::from_json(r#"{"sm": {"mad-latencies": "1us"}}"#).unwrap_err();
    assert_eq!(e.path, "sm");
}
