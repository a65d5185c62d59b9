//! Calibration against S002/S003 (E §3.1.1, §3.3, §4.2): the QDR single-flow
//! cap, the DDR host cap, the parking-lot share and the victim collapse —
//! the last one emerging from FIFOs and credits only.

mod common;

use common::*;
use ibcloud_netsim::config::pcie_gbps;
use ibcloud_netsim::time::{MS, US};
use ibcloud_netsim::{SimConfig, Simulation, TrafficSpec};

/// ConnectX DDR on PCIe 1.1 x8 (S003's testbed): both directions limited.
fn ddr_testbed_config() -> SimConfig {
    let host = pcie_gbps(1, 8, 128, 0.04);
    SimConfig {
        mtu: 2048,
        host_gbps: Some(host),
        sink_gbps: Some(host),
        sweep_interval: 100 * US,
        ..SimConfig::default()
    }
}

#[test]
fn qdr_single_flow_reaches_3742_mib_per_s() {
    // S002's testbed: ConnectX-3 QDR, perftest with 64 KB messages, MTU 2048.
    let (f, t) = star(2, "4xQDR");
    let cfg = SimConfig {
        mtu: 2048,
        ..SimConfig::default()
    };
    let spec = TrafficSpec::parse_compact("flow:src=H1,dst=H2,size=65536").unwrap();
    let r = Simulation::new(&f, &t, &cfg, &spec, MS)
        .unwrap()
        .run()
        .unwrap();
    let g = gbps(&r, 0, 200 * US, MS);
    // perftest reports MB/s as 2^20 bytes per second.
    let mib = g * 1e9 / 8.0 / 1_048_576.0;
    eprintln!("qdr {mib}");
    assert!(
        (mib - 3742.0).abs() / 3742.0 < 0.01,
        "QDR single flow {mib:.0} MiB/s, paper 3742"
    );
}

#[test]
fn ddr_host_cap_is_12_9_gbps() {
    let (f, t) = star(2, "4xDDR");
    let spec = TrafficSpec::parse_compact("flow:src=H1,dst=H2,size=65536").unwrap();
    let r = Simulation::new(&f, &t, &ddr_testbed_config(), &spec, MS)
        .unwrap()
        .run()
        .unwrap();
    let g = gbps(&r, 0, 200 * US, MS);
    assert!(
        (g - 12.9).abs() < 0.15,
        "DDR host-capped flow {g:.2} Gb/s, paper 12.9"
    );
}

fn exp1(with_contributors: bool) -> Vec<f64> {
    let (f, t, _) = testbed_3a("4xDDR");
    let mut text = String::from("flow:src=H2,dst=H3");
    if with_contributors {
        text.push_str(";flow:src=H1,dst=H5;flow:src=H3,dst=H5;flow:src=H6,dst=H5");
    }
    let spec = TrafficSpec::parse_compact(&text).unwrap();
    let r = Simulation::new(&f, &t, &ddr_testbed_config(), &spec, 3 * MS)
        .unwrap()
        .run()
        .unwrap();
    (0..r.flows.len() as u32)
        .map(|i| gbps(&r, i, MS, 3 * MS))
        .collect()
}

#[test]
fn victim_collapses_to_the_contributors_rate_and_parking_lot_favours_the_local_flow() {
    // S003 Exp. I without dFtree: victim 2→3 at 12.9 Gb/s alone ...
    let alone = exp1(false);
    assert!(
        (alone[0] - 12.9).abs() < 0.2,
        "victim alone {:.2}",
        alone[0]
    );
    // ... then 1→5, 3→5, 6→5 start: 6→5 joins at the last switch and gets
    // about half the hot-spot (paper 6.8), 1→5 and 3→5 share the rest (≈3),
    // and the victim, which only shares A's up-link FIFO at the root with
    // 1→5, falls to about 1→5's rate (paper 3).
    let r = exp1(true);
    let (victim, c15, c35, c65) = (r[0], r[1], r[2], r[3]);
    eprintln!("alone {alone:?} exp1 {r:?}");
    assert!(
        (6.2..=7.0).contains(&c65),
        "parking lot: 6→5 at {c65:.2} Gb/s, paper 6.8"
    );
    assert!(
        (2.7..=3.6).contains(&c15) && (2.7..=3.6).contains(&c35),
        "1→5 {c15:.2}, 3→5 {c35:.2}"
    );
    assert!(
        (2.5..=3.8).contains(&victim),
        "victim {victim:.2} Gb/s, paper 3"
    );
    assert!(
        (victim - c15).abs() < 0.5,
        "victim {victim:.2} vs contributor {c15:.2}"
    );
}
