//! Compares an engine's tables with an OpenSM dump, and times the engine.
//!
//! ```text
//! cargo run --release -p ibcloud-routing --example compare_opensm -- <engine> <preset> [opensm-lfts.dump] [guid2lid]
//! ```
//!
//! Without a dump it only times the engine (best of five runs, and the
//! average CPU time of all threads).

use ibcloud_fabric::formats::{guid2lid, lfts_dump};
use ibcloud_fabric::{generate, lids};
use ibcloud_routing::{registry, EngineOptions};
use std::time::Instant;

const RUNS: usize = 5;

/// CPU time of this process so far (user + system, all threads), from
/// /proc/self/stat at 100 ticks per second; `None` off Linux.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [engine, preset, rest @ ..] = args.as_slice() else {
        return Err("usage: compare_opensm <engine> <preset> [opensm-lfts.dump] [guid2lid]".into());
    };
    let mut fabric = generate::preset(preset)?.build()?;
    if let Some(g) = rest.get(1) {
        let map = guid2lid::parse(&std::fs::read_to_string(g)?, g)?;
        // The LMC is the widest range of the map; switches keep one LID.
        let lmc = map
            .values()
            .map(|(lo, hi)| (hi.0 - lo.0 + 1).trailing_zeros() as u8)
            .max()
            .unwrap_or(0);
        let options = lids::LidOptions {
            policy: lids::LidPolicy::Guid2Lid { map, sm_port: None },
            lmc,
            lmc_esp0: false,
        };
        lids::assign_lids(&mut fabric, &options)?;
    }
    // "updn-top": updn with the top-level switches as roots.
    let (engine, options) = if engine == "updn-top" {
        let mut ranked = fabric.clone();
        ranked.infer_ranks();
        let roots = ranked
            .switches()
            .filter(|&s| ranked.node(s).rank == Some(0))
            .map(|s| ranked.node(s).guid);
        (
            "updn",
            EngineOptions {
                roots: Some(roots.collect()),
                ..Default::default()
            },
        )
    } else {
        (engine.as_str(), EngineOptions::default())
    };
    let e = registry::engine(engine, &options)?;
    let mut best = f64::MAX;
    let mut routing = None;
    let cpu0 = cpu_seconds();
    for _ in 0..RUNS {
        let t = Instant::now();
        let r = e.route(&fabric)?;
        best = best.min(t.elapsed().as_secs_f64());
        routing = Some(r);
    }
    let cpu = cpu_seconds().map(|c| (c - cpu0.unwrap_or(c)) / RUNS as f64);
    let ours = routing.ok_or("no run")?.tables;
    let cpu = cpu.map_or(String::new(), |c| format!(", {c:.3} s CPU per run"));
    println!("{engine} on {preset}: {best:.4} s wall (best of {RUNS}){cpu}");
    if let Some(dump) = rest.first() {
        let theirs = lfts_dump::parse(&std::fs::read_to_string(dump)?, dump)?.to_tables(&fabric)?;
        let mut total = 0usize;
        for (sw, lid, x, y) in ours.differences(&theirs) {
            total += 1;
            if total <= 20 {
                println!(
                    "  {} lid {}: ours {x}, opensm {y}",
                    fabric.node(sw).description,
                    lid.0
                );
            }
        }
        let entries: usize = fabric.switches().map(|s| ours.table(s).len()).sum();
        println!("{total} of {entries} entries differ from OpenSM");
    }
    Ok(())
}
