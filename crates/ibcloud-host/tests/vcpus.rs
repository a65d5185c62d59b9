//! Multi-vCPU VMs: one program per vCPU (a workload's `vcpu` / `peer-vcpu`),
//! a cap or quota per VM shared by its vCPUs, one output row per vCPU
//! (`name`, `name/1`, …), and bad input refused with its place.

use ibcloud_host::{Scenario, World};

mod common;
use common::{no_controllers, run};

/// VM `db` (`vcpus` vCPUs, `extra` VM keys) on host A (scheduler `sched`)
/// runs two busy-polling 2 KB RDMA Write streams, one per vCPU, to `p` on B.
fn two_streams(sched: &str, extra: &str) -> String {
    format!(
        r#"{{"duration": "600ms", "sample-interval": "50ms",
        "hosts": [{{"name": "A", "pcpus": 4, "scheduler": {{"kind": "{sched}"}}}}, {{"name": "B"}}],
        "vms": [{{"name": "db", "host": "A", "vcpus": 2 {extra}}}, {{"name": "p", "host": "B"}}],
        "workloads": [{{"kind": "rdma-write", "vm": "db", "peer": "p", "size": "2k", "depth": 4}},
                      {{"kind": "rdma-write", "vm": "db", "vcpu": 1, "peer": "p", "size": "2k", "depth": 4}}]}}"#
    )
}

fn cpu_s(r: &ibcloud_host::RunResult) -> Vec<(String, f64)> {
    r.workloads
        .iter()
        .map(|w| (w.vm.clone(), w.cpu_s))
        .collect()
}

#[test]
fn each_vcpu_runs_its_own_program_and_the_cap_is_the_vms() {
    // Uncapped: both vCPUs busy all the time (they busy-poll).
    let free = run(&two_streams("credit1", ""));
    assert_eq!(free.vms, vec!["db", "db/1", "p"]);
    let c = cpu_s(&free);
    assert_eq!(c[0].0, "db");
    assert_eq!(c[1].0, "db/1");
    for (_, s) in &c {
        assert!((s - 0.6).abs() < 0.002, "{c:?}");
    }
    // Capped at 100 % (of one PCPU) for the whole VM: one PCPU in total
    // (0.6 s of CPU in 0.6 s), in bursts (credit1: both vCPUs run 60 ms and
    // are parked 60 ms; CFS: both run 50 ms of each 100 ms period).
    for sched in ["credit1", "cfs"] {
        let capped = run(&two_streams(sched, r#", "cap": 100"#));
        let c = cpu_s(&capped);
        let total: f64 = c.iter().map(|x| x.1).sum();
        assert!((total - 0.6).abs() < 0.02, "{sched}: {c:?}");
        assert!((c[0].1 - c[1].1).abs() < 0.025, "{sched}: {c:?}");
        // Both streams still move data: the adapter works while they are parked.
        assert!(capped.workloads.iter().all(|w| w.completed > 0));
    }
}

fn problem(json: &str) -> (String, String) {
    let sc = match Scenario::from_json(json) {
        Ok(sc) => sc,
        Err(e) => return (e.path, e.problem),
    };
    if let Err(e) = sc.validate() {
        return (e.path, e.problem);
    }
    match World::new(&sc, &no_controllers) {
        Ok(_) => (String::new(), "accepted".into()),
        Err(e) => (String::new(), e.to_string()),
    }
}

#[test]
fn bad_vcpu_input_is_refused_with_its_place() {
    let base = two_streams("credit1", "");
    let (p, m) = problem(&base.replace(r#""vcpus": 2"#, r#""vcpus": 0"#));
    assert_eq!(p, "vms[0].vcpus");
    assert!(m.contains("1-64"), "{m}");
    let (p, m) = problem(&base.replace(r#""vcpu": 1"#, r#""vcpu": 2"#));
    assert_eq!(p, "workloads[1].vcpu");
    assert!(m.contains("has 2 vCPUs (0-1), not vCPU 2"), "{m}");
    let (p, _) = problem(&base.replace(r#""vcpu": 1,"#, r#""vcpu": 1, "peer-vcpu": 1,"#));
    assert_eq!(p, "workloads[1].peer-vcpu");
    let (p, m) = problem(&base.replace(r#""vcpus": 2"#, r#""vcpus": 2, "cap": 250"#));
    assert_eq!(p, "vms[0].cap");
    assert!(m.contains("(0, 200]"), "{m}");
    // Two programs on one vCPU.
    let (_, m) = problem(&base.replace(r#", "vcpu": 1"#, ""));
    assert!(m.contains("one per vCPU"), "{m}");
    // A VM may not take the name of another VM's vCPU.
    let (p, m) = problem(&base.replace(
        r#"{"name": "p", "host": "B"}"#,
        r#"{"name": "p", "host": "B"}, {"name": "db/1", "host": "B"}"#,
    ));
    assert_eq!(p, "vms[2].name");
    assert!(m.contains("vCPU 1 of VM 'db'"), "{m}");
}

/// Every combination of a grid of `vcpus`, `vcpu`, `peer-vcpu` and `cap`
/// (valid and not): accepted exactly when each is in range, otherwise
/// refused naming the first bad key; never a panic.
#[test]
fn the_vcpu_keys_are_checked_over_a_grid() {
    for vcpus in [0usize, 1, 2, 3, 64, 65] {
        for vcpu in [0usize, 1, 2, 64] {
            for peer_vcpu in [0usize, 1] {
                for cap in [
                    None,
                    Some(-5.0),
                    Some(0.0),
                    Some(50.0),
                    Some(100.0),
                    Some(200.0),
                    Some(6400.5),
                ] {
                    let cap_json = cap.map(|c| format!(r#", "cap": {c}"#)).unwrap_or_default();
                    let json = format!(
                        r#"{{"duration": "1ms", "hosts": [{{"name": "A"}}, {{"name": "B"}}],
                        "vms": [{{"name": "v", "host": "A", "vcpus": {vcpus} {cap_json}}}, {{"name": "p", "host": "B"}}],
                        "workloads": [{{"kind": "rdma-write", "vm": "v", "vcpu": {vcpu}, "peer": "p",
                                        "peer-vcpu": {peer_vcpu}}}]}}"#
                    );
                    let (path, _) = problem(&json);
                    let vcpus_ok = (1..=64).contains(&vcpus);
                    let cap_ok = cap.is_none_or(|c| c > 0.0 && c <= 100.0 * vcpus as f64);
                    let want = if !vcpus_ok {
                        "vms[0].vcpus"
                    } else if !cap_ok {
                        "vms[0].cap"
                    } else if vcpu >= vcpus {
                        "workloads[0].vcpu"
                    } else if peer_vcpu >= 1 {
                        "workloads[0].peer-vcpu"
                    } else {
                        ""
                    };
                    assert_eq!(
                        path, want,
                        "vcpus {vcpus} vcpu {vcpu} peer {peer_vcpu} cap {cap:?}"
                    );
                }
            }
        }
    }
}
