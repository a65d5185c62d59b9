//! Cost of one ResEx control step (FreeMarket, IOShares) for 64 VMs, to
//! compare with the 1 ms charging interval it must fit in (F §5.6.1).
//!
//! Each VM sends some MTUs, uses some CPU and (IOShares) reports four
//! latencies per interval; VM 0's latency rises after the first second so
//! IOShares raises rates and caps. Policy time advances 1 ms per step; the
//! thread CPU time (and wall-clock time) per step is printed (a benchmark:
//! never a test).
//!
//! Run: `cargo run --release -p ibcloud-control --example resex_step [steps]`

use ibcloud_control::capping::{build_cap_policy, VmSample};
use std::time::Instant;

const VMS: usize = 64;
const MS: u64 = 1_000_000_000;

fn feed(k: u64) -> Vec<VmSample> {
    (0..VMS)
        .map(|i| {
            let base = 209.0 + ((k * 31 + i as u64 * 7) % 13) as f64;
            let lat = if i == 0 && k > 1000 { base * 1.5 } else { base };
            VmSample {
                interval: MS,
                bytes: 1024 * (20 + (i as u64 * 37 + k) % 40) * if i == 1 { 30 } else { 1 },
                requests: 1 + (k + i as u64) % 3,
                cpu_pct: 50.0 + (i % 50) as f64,
                cap: 0,
                latencies_us: vec![lat, lat + 2.0, lat - 1.0, lat + 0.5],
            }
        })
        .collect()
}

/// CPU time of this thread (ns), from /proc (0 where unavailable): on a
/// shared, loaded machine the wall clock overstates the cost.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let steps: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5000);
    let names: Vec<String> = (0..VMS).map(|i| format!("vm{i}")).collect();
    let trace: Vec<Vec<VmSample>> = (1..=steps).map(feed).collect();
    println!("one control step for {VMS} VMs ({steps} steps of 1 ms policy time, release build):");
    for kind in ["freemarket", "ioshares"] {
        for every in [1u64, 1000] {
            let mut params = serde_json::Map::new();
            params.insert("record-every".into(), every.into());
            let mut p = build_cap_policy(kind, &params, &names).expect("policy");
            let mut changes = 0usize;
            let (t0, c0) = (Instant::now(), cpu_ns());
            for (k, f) in trace.iter().enumerate() {
                changes += p.step((k as u64 + 1) * MS, f).len();
            }
            let ns = t0.elapsed().as_nanos() as f64 / steps as f64;
            let cpu = (cpu_ns() - c0) as f64 / steps as f64;
            println!(
                "  {kind:<10} record-every {every:>4}: {cpu:>7.0} ns CPU/step = {:.2} % of the 1 ms interval \
                 (wall {ns:.0} ns; {changes} cap changes, {} records)",
                cpu / 1e4,
                p.records().len()
            );
        }
    }
}
