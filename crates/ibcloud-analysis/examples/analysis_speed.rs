//! Times the targets: 10,000 bisect runs and one complete shift on a
//! preset routed by ftree. `cargo run --release -p ibcloud-analysis --example
//! analysis_speed -- [PRESET] [RUNS]` (default ft11664 10000).

use ibcloud_analysis::{analyze_with_paths, AnalysisOptions, Endpoints, PathMode, Paths, Pattern};
use ibcloud_routing::{registry, EngineOptions};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let preset = args.get(1).map_or("ft11664", String::as_str);
    let runs: u64 = args.get(2).map_or(Ok(10_000), |r| r.parse())?;
    let fabric = ibcloud_fabric::generate::preset(preset)?.build()?;
    let tables = registry::engine("ftree", &EngineOptions::default())?
        .route(&fabric)?
        .tables;
    let endpoints = Endpoints::cas(&fabric);
    let t = Instant::now();
    let paths = Paths::new(&fabric, &tables, &endpoints, PathMode::default())?;
    println!(
        "{preset}: paths for {} endpoints in {:.2} s (precomputed: {})",
        endpoints.len(),
        t.elapsed().as_secs_f64(),
        paths.is_precomputed()
    );
    let t = Instant::now();
    let opts = AnalysisOptions {
        runs,
        seed: 1,
        ..AnalysisOptions::default()
    };
    let r = analyze_with_paths(&fabric, &paths, &Pattern::Bisect, &opts, &mut |_, _| true)?;
    println!(
        "bisect x{runs}: {:.2} s, mean EBB {:.4}",
        t.elapsed().as_secs_f64(),
        r.ebb().mean
    );
    let t = Instant::now();
    let opts = AnalysisOptions {
        runs: 1,
        seed: 1,
        ..AnalysisOptions::default()
    };
    let r = analyze_with_paths(&fabric, &paths, &Pattern::Shift, &opts, &mut |_, _| true)?;
    println!(
        "shift ({} levels): {:.2} s, acc_band {:.4}",
        r.runs[0].levels,
        t.elapsed().as_secs_f64(),
        r.runs[0].acc_band
    );
    let t = Instant::now();
    let walk = Paths::new(&fabric, &tables, &endpoints, PathMode::Walk)?;
    let opts = AnalysisOptions {
        runs: runs / 10,
        seed: 1,
        ..AnalysisOptions::default()
    };
    let r = analyze_with_paths(&fabric, &walk, &Pattern::Bisect, &opts, &mut |_, _| true)?;
    println!(
        "bisect x{} walking the tables: {:.2} s, mean EBB {:.4}",
        runs / 10,
        t.elapsed().as_secs_f64(),
        r.ebb().mean
    );
    Ok(())
}
