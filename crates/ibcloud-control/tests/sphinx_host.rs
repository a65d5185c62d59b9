//! Sphinx as a `[[controllers]]` kind of the host simulator (G §6.6–6.7's
//! shape): Nectere's 64 KB requests (a0 → b0) and Memcached's 512 KB Get
//! replies (server a1 → client b1) share host A's link. Sphinx reads both
//! clients' latencies and delays the Memcached server's queue pairs.
//!
//! Tolerance fixed before the first run: the mean LP of the steps in the
//! last third of the run within ±30 % of the target (a closed loop of a
//! few hundred requests per period is noisier than the fabric-level test).

use ibcloud_host::{RunResult, Scenario, World};

/// QDR, 2 KB MTU; congestion control on only as Sphinx's actuator
/// (switches never mark), a CCT of 20 ns per index.
fn fabric() -> String {
    let cct: Vec<String> = (0..128)
        .map(|i| format!(r#"{{"shift": 0, "multiplier": {i}}}"#))
        .collect();
    format!(
        r#""fabric": {{"link": "4xQDR", "mtu": 2048,
        "congestion-control": {{"threshold": 0, "cct-unit": 20000, "cct": [{}]}}}}"#,
        cct.join(", ")
    )
}

fn scenario(workloads: &str, controllers: &str, duration: &str) -> Scenario {
    Scenario::from_json(&format!(
        r#"{{"duration": "{duration}", "sample-interval": "1ms", {},
        "hosts": [{{"name": "A"}}, {{"name": "B"}}],
        "vms": [{{"name": "a0", "host": "A"}}, {{"name": "a1", "host": "A"}},
                {{"name": "b0", "host": "B"}}, {{"name": "b1", "host": "B"}}],
        "workloads": {workloads}, "controllers": {controllers}}}"#,
        fabric()
    ))
    .unwrap()
}

const NECTERE: &str = r#"{"kind": "nectere", "vm": "a0", "peer": "b0", "size": "64k"}"#;
const MEMCACHED: &str =
    r#"{"kind": "memcached", "vm": "b1", "peer": "a1", "sizes": ["512k"], "per-size": 1000000}"#;

fn run(sc: &Scenario) -> RunResult {
    sc.validate().unwrap();
    World::new(sc, &ibcloud_control::build)
        .unwrap()
        .run(&mut |_, _| {})
        .unwrap()
}

fn mean_us(r: &RunResult, vm: usize) -> f64 {
    let l: Vec<f64> = r
        .latencies
        .iter()
        .filter(|l| l.0 == vm)
        .map(|l| l.2 as f64 / 1e6)
        .collect();
    assert!(!l.is_empty(), "VM {vm} recorded nothing");
    l.iter().sum::<f64>() / l.len() as f64
}

#[test]
fn sphinx_holds_lp_between_nectere_and_memcached_on_the_host_model() {
    let base_n = mean_us(&run(&scenario(&format!("[{NECTERE}]"), "[]", "20ms")), 0);
    let base_m = mean_us(&run(&scenario(&format!("[{MEMCACHED}]"), "[]", "20ms")), 3);
    let both = format!("[{NECTERE}, {MEMCACHED}]");
    let co = run(&scenario(&both, "[]", "20ms"));
    let (pl_n, pl_m) = (
        mean_us(&co, 0) / base_n - 1.0,
        mean_us(&co, 3) / base_m - 1.0,
    );
    eprintln!("base {base_n:.1} / {base_m:.1} µs; unmanaged PL {pl_n:.3} / {pl_m:.3}");
    // Measured: bases 158.3 / 147.1 µs, unmanaged losses 9.5 % / 9.4 %
    // (these uncalibrated workloads interfere symmetrically, so 1:1 is
    // nearly where they start; 1:4 needs the controller: LP 0.25 at a
    // delay of 1–2 indices).
    assert!(
        pl_n > 0.05 && pl_m > 0.05,
        "they interfere: {pl_n:.3} / {pl_m:.3}"
    );
    for target in ["1:1", "1:4"] {
        let ctl = format!(
            r#"[{{"kind": "sphinx", "period": "1ms", "control-latency": "5us",
                 "flows": [{{"vm": "a0", "base-us": {base_n}}},
                           {{"vm": "b1", "base-us": {base_m}, "act-on": ["a1"]}}],
                 "groups": [{{"a": "a0", "b": "b1", "target": "{target}"}}]}}]"#
        );
        let sc = scenario(&both, &ctl, "150ms");
        let r = run(&sc);
        let rep = &r.controllers[0];
        let recs = rep["sphinx"].as_array().unwrap();
        assert!(rep["errors"].as_array().unwrap().is_empty(), "{rep}");
        assert!(recs.len() > 60, "{} steps", recs.len());
        let tail: Vec<f64> = recs[recs.len() * 2 / 3..]
            .iter()
            .filter_map(|x| x["lp"].as_f64())
            .collect();
        let mean = tail.iter().sum::<f64>() / tail.len() as f64;
        let want = ibcloud_control::sphinx::policy_ratio(target).unwrap();
        let last = recs.last().unwrap();
        eprintln!(
            "target {target}: mean LP {mean:.3} (last delay {})",
            last["delay_b"]
        );
        assert!(
            (mean / want - 1.0).abs() < 0.3,
            "target {target}: mean LP {mean:.3}"
        );
        // The delays reached a1's queue pairs through the host.
        assert!(r
            .actions
            .iter()
            .any(|a| a.vm == "a1" && a.action.starts_with("cc-delay=") && a.ok.is_empty()));
    }
}

#[test]
fn bad_sphinx_tables_are_named() {
    let bad = |ctl: &str| {
        let sc = scenario(&format!("[{NECTERE}, {MEMCACHED}]"), ctl, "1ms");
        match World::new(&sc, &ibcloud_control::build) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted: {ctl}"),
        }
    };
    let e = bad(r#"[{"kind": "sphinx", "groups": []}]"#);
    assert!(e.contains("flows"), "{e}");
    let e = bad(r#"[{"kind": "sphinx", "flows": [{"vm": "zz", "base-us": 1}], "groups": []}]"#);
    assert!(e.contains("no VM 'zz'"), "{e}");
    let e = bad(
        r#"[{"kind": "sphinx", "flows": [{"vm": "a0", "base-us": 1}, {"vm": "b1", "base-us": 1}],
             "groups": [{"a": "a0", "b": "b1", "target": "1:0"}]}]"#,
    );
    assert!(e.contains("groups[0].target"), "{e}");
    let e = bad(
        r#"[{"kind": "sphinx", "flows": [{"vm": "a0", "base-us": 1}, {"vm": "b1", "base-us": 1}],
             "groups": [{"a": "a0", "b": "b1", "target": 1}], "k-j": 3}]"#,
    );
    assert!(e.contains("k-j"), "{e}");
    let e = bad(
        r#"[{"kind": "sphinx", "flows": [{"vm": "a0", "base-us": 1}, {"vm": "b1", "base-us": 1}],
             "groups": [{"a": "a0", "b": "b1", "target": 1}], "retarget": [{"at": "1ms", "group": 4, "target": 1}]}]"#,
    );
    assert!(e.contains("retarget[0].group"), "{e}");
}
