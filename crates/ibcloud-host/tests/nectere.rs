//! Nectere's latency split (F §5.2): CTime + WTime + PTime = latency per
//! request; CTime = `service` when the server runs alone; under a 2 MB
//! interferer WTime grows and CTime does not.

mod common;
use common::run;

fn layout(interferer: &str) -> String {
    // F §5.7's default layout: each instance has its client on A and its
    // server on B; every VM has its own PCPU (2 per host).
    format!(
        r#"{{"duration": "60ms",
        "hosts": [{{"name": "A", "pcpus": 2}}, {{"name": "B", "pcpus": 2}}],
        "vms": [{{"name": "c64", "host": "A"}}, {{"name": "s64", "host": "B"}},
                {{"name": "cbig", "host": "A"}}, {{"name": "sbig", "host": "B"}}],
        "workloads": [{{"kind": "nectere", "vm": "c64", "peer": "s64", "size": "64k"}}{interferer}]}}"#
    )
}

#[test]
fn parts_sum_to_the_latency_and_ctime_is_the_service_alone() {
    let r = run(&layout(""));
    assert!(r.latencies.len() > 200, "{}", r.latencies.len());
    let c64 = r.vms.iter().position(|v| v == "c64").unwrap();
    let lats: Vec<_> = r.latencies.iter().filter(|l| l.0 == c64).collect();
    let parts: Vec<_> = r.latency_parts.iter().filter(|l| l.0 == c64).collect();
    assert_eq!(lats.len(), parts.len());
    for (l, p) in lats.iter().zip(&parts) {
        assert_eq!(l.1, p.1);
        assert_eq!(p.2 + p.3 + p.4, l.2, "{l:?} {p:?}");
        // Alone, the server's compute takes exactly the service time.
        assert_eq!(p.2, 129_300_000, "{p:?}");
        assert!(
            p.3 > 60_000_000,
            "a 64 KB request takes > 60 us on the wire: {p:?}"
        );
    }
    let w = &r.workloads[0];
    assert!((w.ctime_p50_us.unwrap() - 129.3).abs() < 1e-9);
    let sum = w.ctime_mean_us.unwrap() + w.wtime_mean_us.unwrap() + w.ptime_mean_us.unwrap();
    assert!((sum - w.latency_mean_us.unwrap()).abs() < 1e-6);
    assert!(w.latency_p50_us.unwrap() <= w.latency_p99_us.unwrap());
}

#[test]
fn a_2mb_interferer_grows_wtime_not_ctime() {
    let base = run(&layout(""));
    let intf = run(&layout(
        r#", {"kind": "nectere", "vm": "cbig", "peer": "sbig", "size": "2M"}"#,
    ));
    let (b, i) = (&base.workloads[0], &intf.workloads[0]);
    assert!((i.ctime_mean_us.unwrap() - b.ctime_mean_us.unwrap()).abs() < 1e-6);
    assert!(
        i.wtime_mean_us.unwrap() > 1.2 * b.wtime_mean_us.unwrap(),
        "{b:?} {i:?}"
    );
    assert!(i.latency_mean_us.unwrap() > b.latency_mean_us.unwrap());
}

#[test]
fn other_workloads_have_no_split() {
    let r = run(&layout(
        r#", {"kind": "rdma-write", "vm": "cbig", "peer": "sbig", "size": "64k", "iterations": 10}"#,
    ));
    assert!(r.workloads[1].ctime_mean_us.is_none());
    assert!(r.workloads[0].ctime_mean_us.is_some());
}

#[test]
fn service_jitter_spreads_the_compute_reproducibly() {
    let jittered = r#", "service-jitter": 0.2}]}"#;
    let doc = layout("").replacen("}]}", jittered, 1);
    let (a, b, plain) = (run(&doc), run(&doc), run(&layout("")));
    // Same seed, same run.
    assert_eq!(a.latencies, b.latencies);
    let w = &a.workloads[0];
    let (lo, hi) = (w.ctime_p50_us.unwrap(), w.ctime_p99_us.unwrap());
    // Each request's compute within 129.3 us ± 20 %, and spread (not one value).
    assert!(hi > lo && hi <= 129.3 * 1.2 + 1e-6, "{w:?}");
    // Uniform around the service: the mean moves by well under 2 %.
    let (m, m0) = (
        w.ctime_mean_us.unwrap(),
        plain.workloads[0].ctime_mean_us.unwrap(),
    );
    assert!((m / m0 - 1.0).abs() < 0.02, "{m} vs {m0}");
    // Another seed, another draw.
    let other = run(&doc.replacen("{\"duration\"", "{\"seed\": 7, \"duration\"", 1));
    assert_ne!(other.latencies, a.latencies);
}

#[test]
fn service_jitter_is_checked() {
    for (v, kind) in [
        ("1.0", "nectere"),
        ("-0.1", "nectere"),
        ("0.1", "rdma-write"),
    ] {
        let doc = layout("").replacen(
            r#""kind": "nectere", "vm": "c64", "peer": "s64", "size": "64k"}"#,
            &format!(r#""kind": "{kind}", "vm": "c64", "peer": "s64", "size": "64k", "service-jitter": {v}}}"#),
            1,
        );
        let e = ibcloud_host::Scenario::from_json(&doc)
            .and_then(|s| s.validate().map(|_| s))
            .unwrap_err();
        assert_eq!(e.path, "workloads[0].service-jitter", "{v} {kind}: {e}");
    }
}
