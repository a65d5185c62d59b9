//! Routes a preset (or a topology file) with `lash`, prints the time and the
//! layering, and compares with an OpenSM run's dumps when given.
//!
//! ```text
//! cargo run --release -p ibcloud-routing --example lash_compare -- ft324 [dump_dir] [max_vls]
//! ```
//! `dump_dir` holds `opensm-lfts.dump` and `guid2lid` of an OpenSM lash run on
//! the same fabric; with it the LIDs are taken from its guid2lid.

use ibcloud_fabric::formats::{guid2lid, lfts_dump, read_fabric};
use ibcloud_fabric::lids::{assign_lids, LidOptions, LidPolicy};
use ibcloud_fabric::{generate, Lid};
use ibcloud_routing::engines::lash::Lash;
use ibcloud_routing::EngineOptions;
use std::path::Path;
use std::time::Instant;

#[path = "../tests/support/lash_support.rs"]
mod lash_support;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args
        .first()
        .ok_or("usage: lash_compare <preset|file> [dump_dir] [max_vls]")?;
    let mut fabric = if let Some(dims) = name.strip_prefix("torus:") {
        let dims: Vec<usize> = dims.split('x').map(str::parse).collect::<Result<_, _>>()?;
        lash_support::torus(&dims, 1)
    } else if Path::new(name).exists() {
        read_fabric(Path::new(name), None)?
    } else {
        generate::preset(name)?.build()?
    };
    let dump = args
        .get(1)
        .filter(|d| !d.is_empty() && *d != "-")
        .map(Path::new);
    if let Some(dir) = dump {
        let text = std::fs::read_to_string(dir.join("guid2lid"))?;
        let map = guid2lid::parse(&text, "guid2lid")?;
        assign_lids(
            &mut fabric,
            &LidOptions {
                policy: LidPolicy::Guid2Lid { map, sm_port: None },
                ..Default::default()
            },
        )?;
    } else if fabric.max_lid() == 0 {
        assign_lids(&mut fabric, &LidOptions::default())?;
    }
    if let Ok(out) = std::env::var("LASH_WRITE") {
        ibcloud_fabric::formats::write_fabric(&fabric, Path::new(&out), None)?;
    }
    let max_vls = args.get(2).map(|v| v.parse::<u8>()).transpose()?;
    let engine = Lash::new(&EngineOptions {
        max_vls,
        ..Default::default()
    })?;
    let t = Instant::now();
    let (routing, stats) = engine.route_with_stats(&fabric)?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{name}: {} switches, {} LIDs, routed in {secs:.3} s; layers {} of {}; per layer {:?} -> {:?}",
        fabric.switches().count(),
        fabric.lids_in_use(),
        stats.layers,
        stats.available,
        stats.paths_per_layer_assigned,
        stats.paths_per_layer
    );
    if let Some(dir) = dump {
        let text = std::fs::read_to_string(dir.join("opensm-lfts.dump"))?;
        let theirs = lfts_dump::parse(&text, "opensm-lfts.dump")?.to_tables(&fabric)?;
        let mut diffs = 0usize;
        for sw in fabric.switches() {
            let (a, b) = (routing.tables.table(sw), theirs.table(sw));
            for lid in 1..a.len().max(b.len()) {
                let (x, y) = (
                    a.get(lid).copied().unwrap_or(255),
                    b.get(lid).copied().unwrap_or(255),
                );
                if x != y {
                    if diffs < 10 {
                        println!(
                            "  differs: switch '{}' LID {} ours {x} OpenSM {y}",
                            fabric.node(sw).description,
                            Lid(lid as u16)
                        );
                    }
                    diffs += 1;
                }
            }
        }
        println!("  {diffs} differing LFT entries");
        if let Some(sls) = &routing.path_sls {
            println!("  SLs in use: {}", sls.num_sls());
            // "slid dlid sl" lines from OpenSM's PathRecords (saquery), if present.
            if let Ok(text) = std::fs::read_to_string(dir.join("sls.txt")) {
                let (mut same, mut differ) = (0usize, 0usize);
                for line in text.lines() {
                    let v: Vec<u16> = line
                        .split_whitespace()
                        .filter_map(|w| w.parse().ok())
                        .collect();
                    if let [s, d, sl] = v[..] {
                        if sls.get(Lid(s), Lid(d)) as u16 == sl {
                            same += 1;
                        } else {
                            if differ < 10 {
                                println!(
                                    "  SL differs: {s} -> {d}: ours {} OpenSM {sl}",
                                    sls.get(Lid(s), Lid(d))
                                );
                            }
                            differ += 1;
                        }
                    }
                }
                println!("  path SLs: {same} equal to OpenSM's, {differ} differ");
            }
        }
    }
    Ok(())
}
