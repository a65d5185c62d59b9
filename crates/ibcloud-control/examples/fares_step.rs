//! One FaReS control step for 64 VMs (32 high, 32 low priority), timed:
//! prints ns per step (issue 21: well under the 1 ms ResEx interval).
//!
//! `cargo run --release -p ibcloud-control --example fares_step`

use ibcloud_control::capping::{CapPolicy, VmSample};
use ibcloud_control::fares::{Fares, FaresParams, Priority};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    const VMS: usize = 64;
    const STEPS: u64 = 20_000;
    let prio = (0..VMS)
        .map(|i| {
            Some(if i % 2 == 0 {
                Priority::High
            } else {
                Priority::Low
            })
        })
        .collect();
    let mut f = Fares::new(FaresParams::default(), prio).expect("default parameters are valid");
    // Varied request counts so every band of FindCPUBoost is taken.
    let obs: Vec<Vec<VmSample>> = (0..6u64)
        .map(|k| {
            (0..VMS as u64)
                .map(|i| VmSample {
                    interval: 90_000_000_000,
                    bytes: ((i * 37 + k * 101) % 900) * 65536,
                    requests: (i * 37 + k * 101) % 900,
                    cpu_pct: ((i * 13 + k) % 100) as f64,
                    cap: 0,
                    latencies_us: Vec::new(),
                })
                .collect()
        })
        .collect();
    let t = Instant::now();
    for s in 0..STEPS {
        black_box(f.step(s * 90_000_000_000, black_box(&obs[(s % 6) as usize])));
    }
    let ns = t.elapsed().as_nanos() as f64 / STEPS as f64;
    println!(
        "fares: one control step for {VMS} VMs: {ns:.0} ns/step ({:.4} ms; {} log rows)",
        ns / 1e6,
        f.records().len()
    );
}
