//! Times the `ftree` engine on a preset (default ft11664):
//! `cargo run --release -p ibcloud-routing --example ftree_time -- ft11664`.

use ibcloud_fabric::generate::preset;
use ibcloud_routing::engines::ftree::FtreeEngine;
use ibcloud_routing::RoutingEngine;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let name = std::env::args().nth(1).unwrap_or_else(|| "ft11664".into());
    let runs: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let f = preset(&name)?.build()?;
    let engine = FtreeEngine::new();
    let mut best = f64::MAX;
    for _ in 0..runs {
        let t = std::time::Instant::now();
        let r = engine.route(&f)?;
        best = best.min(t.elapsed().as_secs_f64());
        std::hint::black_box(r);
    }
    println!("{name}: ftree {best:.3} s (best of {runs})");
    Ok(())
}
