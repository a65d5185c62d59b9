//! DRX end to end on the host simulator (`kind = "drx"` through
//! `ibcloud_control::build`): a 64 KB Nectere client on host A talks to its
//! server on host B; a 2 MB Nectere pair (the bulk ensemble) joins on the
//! same hosts at 50 ms. With the SLA at Nectere's measured base rate, the
//! HAs must report violations, the PM must price the bulk ensemble and the
//! CFS quotas of *both* its VMs (Dist) must arrive `2 × message latency +
//! PM processing` after detection. Intervals are scaled to 10 ms (stated:
//! G's are 1 s) so the run stays short.

use ibcloud_host::{RunResult, Scenario, World};

const MS: u64 = 1_000_000_000;

fn run(policy: &str, sla: f64, duration: &str, extra: &str) -> RunResult {
    let json = format!(
        r#"{{"duration": "{duration}", "hosts": [{{"name": "A", "scheduler": {{"kind": "cfs"}}}}, {{"name": "B", "scheduler": {{"kind": "cfs"}}}}],
        "vms": [{{"name": "rep", "host": "A"}}, {{"name": "intf", "host": "A"}},
                {{"name": "rs", "host": "B"}}, {{"name": "is", "host": "B"}}],
        "workloads": [{{"kind": "nectere", "vm": "rep", "peer": "rs", "size": "64k"}},
                      {{"kind": "nectere", "vm": "intf", "peer": "is", "size": "2M", "start": "50ms"}}],
        "controllers": [{{"kind": "drx", "policy": "{policy}", "interval": "10ms", "epoch": "1s",
            "cfs-period": "10ms" {extra},
            "vmes": {{"nect": {{"vms": ["rep", "rs"], "g": 20000, "sla-cqe-per-s": {sla}, "priority": "high"}},
                     "bulk": {{"vms": ["intf", "is"], "g": 100000, "io-min": 1000}}}}}}]}}"#,
    );
    let sc = Scenario::from_json(&json).unwrap();
    World::new(&sc, &ibcloud_control::build)
        .unwrap()
        .run(&mut |_, _| {})
        .unwrap()
}

fn records(r: &RunResult) -> Vec<serde_json::Value> {
    r.controllers[0]["records"].as_array().unwrap().clone()
}

#[test]
fn drx_prices_and_caps_the_bulk_ensemble_on_both_hosts() {
    // Base: with an unreachable SLA every interval is a violation whose
    // record carries the measured rate; static StMax never caps.
    let probe = run("stmax", 1e9, "60ms", "");
    let rates: Vec<f64> = records(&probe)
        .iter()
        .filter(|r| {
            r["kind"] == "violation"
                && r["vm"] == 0
                && r["vme"] == 1
                && r["time"].as_u64().unwrap() <= 50 * MS
        })
        .map(|r| r["io"].as_f64().unwrap())
        .collect();
    assert!(rates.len() >= 3, "{rates:?}");
    let base = rates[1..].iter().sum::<f64>() / (rates.len() - 1) as f64;
    assert!(base > 1000.0, "Nectere base {base} CQE/s");

    let r = run("eb-dist", base, "150ms", "");
    let rec = records(&r);
    let first = rec
        .iter()
        .find(|x| x["kind"] == "violation")
        .expect("a violation once the bulk pair runs");
    let t0 = first["time"].as_u64().unwrap();
    assert!(t0 > 50 * MS, "violation at {t0} before the interference");
    let price = rec.iter().find(|x| x["kind"] == "price").unwrap();
    // Ensembles in name order: bulk = 0.
    assert_eq!(r.controllers[0]["vmes"][0], "bulk");
    assert_eq!(price["vme"], 0);
    assert!((price["dp"].as_f64().unwrap() - 1.0).abs() < 1e-12);
    // Both bulk VMs (hosts A and B) capped 2.1 ms after detection.
    for vm in ["intf", "is"] {
        let a = r
            .actions
            .iter()
            .find(|a| a.vm == vm && a.action.starts_with("quota="))
            .unwrap_or_else(|| panic!("no quota for {vm}"));
        assert_eq!(a.issued, t0 + 2 * MS + MS / 10, "{vm}");
    }
    let resp = &r.controllers[0]["response"];
    assert_eq!(resp["max_ms"].as_f64(), Some(2.1));
    assert!(r.controllers[0]["evidence"]["response"]
        .as_str()
        .unwrap()
        .starts_with("construction"));
    assert!(r.actions.iter().all(|a| a.vm != "rep" && a.vm != "rs"));
    assert!(r.actions.iter().all(|a| a.ok.is_empty()), "{:?}", r.actions);

    // The loop closes: Nectere's rate over the last 50 ms (violation
    // records carry it) is higher with EB-Dist than uncontrolled.
    let late = |r: &RunResult| -> Vec<f64> {
        records(r)
            .iter()
            .filter(|x| x["kind"] == "violation" && x["vm"] == 0)
            .filter(|x| x["time"].as_u64().unwrap() > 100 * MS)
            .map(|x| x["io"].as_f64().unwrap())
            .collect()
    };
    let free = run("stmax", 1e9, "150ms", "");
    let eb = run("eb-dist", 1e9, "150ms", "");
    let mean = |v: Vec<f64>| v.iter().sum::<f64>() / v.len() as f64;
    let (f, e) = (mean(late(&free)), mean(late(&eb)));
    eprintln!(
        "Nectere base {base:.0}, uncontrolled {f:.0}, EB-Dist {e:.0} CQE/s; caps {:?}",
        r.actions
            .iter()
            .map(|a| (a.applied / MS, a.vm.clone(), a.action.clone()))
            .collect::<Vec<_>>()
    );
    assert!(
        f < 0.85 * base,
        "interference too small to judge: {f} vs {base}"
    );
    assert!(e > f, "EB-Dist {e} vs uncontrolled {f}");
}

#[test]
fn unknown_key_and_bad_spec_are_errors() {
    let names: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
    let opts = |extra: &str| -> ibcloud_host::scenario::ControllerOptions {
        serde_json::from_str(&format!(
            r#"{{"kind": "drx", "policy": "hb-dist", "vmes": {{"x": {{"vms": ["a"], "g": 10}}}} {extra}}}"#
        ))
        .unwrap()
    };
    assert!(ibcloud_control::build(&opts(""), &names).is_ok());
    let err = |extra: &str| ibcloud_control::build(&opts(extra), &names).unwrap_err();
    assert!(err(r#", "bogus": 1"#).contains("unknown parameter `bogus`"));
    assert!(err(r#", "policy": "nope""#).contains("policy"));
    assert!(err(r#", "cap-mode": "fixed""#).contains("cap-mode"));
    assert!(err(r#", "tolerance": 1.5"#).contains("tolerance"));
    assert!(err(r#", "vmes": {"y": {"vms": ["zz"], "g": 1}}"#).contains("unknown VM 'zz'"));
    assert!(err(r#", "vmes": {"y": {"vms": ["a"], "g": 1, "weird": 2}}"#).contains("`weird`"));
    assert!(err(r#", "vmes": {"y": {"vms": ["a"]}}"#).contains("g: required"));
}

#[test]
fn build_on_checks_the_layout() {
    // Minimums of the low-priority ensemble above two links' capacity:
    // found when the scenario is built, naming the ensemble.
    let names: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
    let hosts: Vec<String> = ["A", "B"].iter().map(|s| s.to_string()).collect();
    let opts: ibcloud_host::scenario::ControllerOptions = serde_json::from_str(
        r#"{"kind": "drx", "policy": "eb-dist", "link-cqe-per-s": 100,
            "vmes": {"bulk": {"vms": ["a", "b"], "g": 500, "io-min": 300}}}"#,
    )
    .unwrap();
    assert!(ibcloud_control::build(&opts, &names).is_ok());
    let e = ibcloud_control::build_on(&opts, &names, &hosts).unwrap_err();
    assert!(e.contains("unsatisfiable") && e.contains("bulk"), "{e}");
}

/// DRXMax/DRXMaxQ on the host's SM: the first violation makes the PM ask
/// the SM for Table 5's CC (with `qos-at = "violation"` also Table 6's QoS,
/// after an SM restart); DRX records when it is in force.
fn run_hw(policy: &str, extra: &str) -> RunResult {
    let json = format!(
        r#"{{"duration": "60ms", "fabric": {{"link": "4xQDR", "mtu": 2048, "vls": 2}},
        "sm": {{"restart": "5ms", "path-sl": "sa"}},
        "hosts": [{{"name": "A", "scheduler": {{"kind": "cfs"}}}}, {{"name": "B", "scheduler": {{"kind": "cfs"}}}}],
        "vms": [{{"name": "rep", "host": "A"}}, {{"name": "intf", "host": "A"}},
                {{"name": "rs", "host": "B"}}, {{"name": "is", "host": "B"}}],
        "workloads": [{{"kind": "nectere", "vm": "rep", "peer": "rs", "size": "64k", "sl": 0}},
                      {{"kind": "nectere", "vm": "intf", "peer": "is", "size": "2M", "sl": 1}}],
        "controllers": [{{"kind": "drx", "policy": "{policy}", "interval": "10ms", "epoch": "1s",
            "cfs-period": "10ms" {extra},
            "vmes": {{"nect": {{"vms": ["rep", "rs"], "g": 20000, "sla-cqe-per-s": 1e9, "priority": "high"}},
                     "bulk": {{"vms": ["intf", "is"], "g": 100000, "io-min": 1000}}}}}}]}}"#,
    );
    let sc = Scenario::from_json(&json).unwrap();
    sc.validate().unwrap();
    World::new(&sc, &ibcloud_control::build)
        .unwrap()
        .run(&mut |_, _| {})
        .unwrap()
}

#[test]
fn drxmax_pushes_cc_through_the_sm_at_the_first_violation() {
    let r = run_hw("drxmax", "");
    let rec = records(&r);
    let t0 = rec.iter().find(|x| x["kind"] == "violation").unwrap()["time"]
        .as_u64()
        .unwrap();
    assert_eq!(r.sm.len(), 1, "one push: {:?}", r.sm);
    let p = &r.sm[0];
    assert_eq!(p.by, "drx-drxmax");
    // HA → PM 1 ms, PM 0.1 ms, PM → SM 1 ms; 7 CC MADs in one window.
    assert_eq!(p.received, t0 + 2 * MS + MS / 10);
    assert_eq!((p.cc_mads, p.qos_mads, p.restart), (7, 0, 0));
    assert_eq!(p.in_force, p.received + 390_625_000);
    assert!(p.error.is_empty(), "{}", p.error);
    let hw = r.controllers[0]["hardware"].as_array().unwrap();
    let cc = hw
        .iter()
        .find(|h| h["setting"] == "congestion-control")
        .unwrap();
    assert_eq!(cc["applied"].as_u64(), Some(p.in_force));
    assert_eq!(cc["sm"]["cc_mads"], 7);
    let done = rec
        .iter()
        .find(|x| x["kind"] == "hardware-in-force")
        .unwrap();
    assert_eq!(done["time"].as_u64(), Some(p.in_force));

    // qos-at = violation: one push with QoS and CC, after the SM restart.
    let r = run_hw("drxmaxq", r#", "qos-at": "violation""#);
    let p = &r.sm[0];
    assert_eq!(p.restart, 5 * MS);
    assert!(p.qos_mads > 0 && p.cc_mads == 7);
    assert!(p.error.is_empty(), "{}", p.error);
    let hw = r.controllers[0]["hardware"].as_array().unwrap();
    assert_eq!(hw.len(), 2, "QoS and CC, both at the violation: {hw:?}");
    assert!(hw.iter().all(|h| h["applied"].as_u64() == Some(p.in_force)));
}
