//! One uniform run for profiling and the scaling table (release build):
//! `cargo run --release -p ibcloud-netsim --example speed -- ft324 0.3 64 100us`
//! prints set-up and run CPU seconds, events per packet, µs per event and the
//! process's peak memory. A fifth argument `ports` records port counters
//! every microsecond and adds them to the fingerprint (checks that an
//! engine change keeps what sweeps and controllers see); a sixth replaces
//! the uniform traffic with any compact traffic spec.

use ibcloud_netsim::time::parse_duration;
use ibcloud_netsim::{SimConfig, Simulation, TrafficSpec};

fn peak_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// CPU seconds of this thread so far (/proc/thread-self/schedstat), so
/// figures hold on a busy machine.
fn cpu_s() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |ns| ns / 1e9)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: &'static str| args.get(i).map_or(d, |s| s.as_str()).to_string();
    let preset = arg(1, "ft324");
    let load = arg(2, "0.3");
    let size: u32 = arg(3, "64").parse()?;
    let end = parse_duration(&arg(4, "100us"))?;
    let mut f = ibcloud_fabric::generate::preset(&preset)?.build()?;
    ibcloud_fabric::lids::assign_lids(&mut f, &Default::default())?;
    let t = ibcloud_routing::registry::engine("ftree", &Default::default())?
        .route(&f)?
        .tables;
    let ports = arg(5, "") == "ports";
    let cfg = SimConfig {
        mtu: size.max(256),
        wire_overhead_bytes: 0,
        record_ports: ports,
        sweep_interval: if ports {
            1_000_000
        } else {
            SimConfig::default().sweep_interval
        },
        ..SimConfig::default()
    };
    let traffic = args
        .get(6)
        .cloned()
        .unwrap_or_else(|| format!("uniform:load={load},size={size},poisson=1"));
    let spec = TrafficSpec::parse_compact(&traffic)?;
    let c0 = cpu_s();
    let mut sim = Simulation::new(&f, &t, &cfg, &spec, end)?;
    let setup = cpu_s() - c0;
    let c1 = cpu_s();
    let r = sim.run()?;
    let run = cpu_s() - c1;
    let packets: u64 = r.flows.iter().map(|x| x.counters.completed_msgs).sum();
    // A fingerprint of the outcome, to check that an engine change keeps a
    // seed's results bit-identical.
    let fingerprint = r.flows.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, x| {
        let c = &x.counters;
        [
            c.delivered_bytes,
            c.completed_msgs,
            c.latency_sum as u64,
            c.latency_max,
            c.becns,
        ]
        .iter()
        .fold(h, |h, &v| (h ^ v).wrapping_mul(0x100_0000_01b3))
    });
    let mix = |h: u64, c: &ibcloud_netsim::stats::PortCounters| {
        [
            c.xmit_bytes,
            c.rcv_bytes,
            c.xmit_pkts,
            c.rcv_pkts,
            c.xmit_wait,
            c.fecn_marked,
        ]
        .iter()
        .fold(h, |h, &v| (h ^ v).wrapping_mul(0x100_0000_01b3))
    };
    let fingerprint = if ports {
        let h = r.ports.iter().fold(fingerprint, mix);
        r.port_series.iter().fold(h, |h, s| {
            mix((h ^ s.time ^ s.slot as u64).wrapping_mul(3), &s.counters)
        })
    } else {
        fingerprint
    };
    println!(
        "{preset} load {load} {size} B: set-up {setup:.3} CPU-s, run {run:.3} CPU-s, {} events, {packets} packets, \
         {:.2} events/packet, {:.3} us/event, {:.1} M unit-hops/CPU-s, peak {:.0} MB, fingerprint {fingerprint:016x}",
        r.events,
        r.events as f64 / packets.max(1) as f64,
        run / r.events.max(1) as f64 * 1e6,
        r.unit_hops as f64 / run / 1e6,
        peak_mb()
    );
    Ok(())
}
