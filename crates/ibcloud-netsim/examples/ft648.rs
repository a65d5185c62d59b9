//! Times the 648-node fat-tree under uniform traffic (release build):
//! `cargo run --release -p ibcloud-netsim --example ft648 -- 0.5 10ms`.

use ibcloud_netsim::time::parse_duration;
use ibcloud_netsim::{SimConfig, Simulation, TrafficSpec};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let load = args.get(1).map_or("0.5", |s| s.as_str());
    let end = parse_duration(args.get(2).map_or("1ms", |s| s.as_str()))?;
    let mut f = ibcloud_fabric::generate::preset("ft648")?.build()?;
    ibcloud_fabric::lids::assign_lids(&mut f, &Default::default())?;
    let t = ibcloud_routing::registry::engine("ftree", &Default::default())?
        .route(&f)?
        .tables;
    let cfg = SimConfig {
        mtu: 4096,
        record_ports: false,
        ..SimConfig::default()
    };
    let spec = TrafficSpec::parse_compact(&format!("uniform:load={load},size=4096"))?;
    let mut sim = Simulation::new(&f, &t, &cfg, &spec, end)?;
    let t0 = std::time::Instant::now();
    let r = sim.run()?;
    let wall = t0.elapsed().as_secs_f64();
    let g: f64 = r.flows.iter().map(|x| x.gbps).sum::<f64>() / r.flows.len() as f64;
    println!(
        "load {load}: wall {wall:.2}s events {} unit-hops {} ({:.2} M/s) packet-hops {:.2} M/s, mean {g:.2} Gb/s per node",
        r.events,
        r.unit_hops,
        r.unit_hops as f64 / wall / 1e6,
        r.packet_hops as f64 / wall / 1e6
    );
    Ok(())
}
