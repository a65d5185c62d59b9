//! Release-mode timing of the dfsssp engine on the big presets:
//! `cargo run --release -p ibcloud-routing --example dfsssp_timing [preset...]`.

use ibcloud_routing::engines::dfsssp::Dfsssp;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut names: Vec<String> = std::env::args().skip(1).collect();
    if names.is_empty() {
        names = vec!["ft5832".into(), "ft11664".into()];
    }
    for name in names {
        let fabric = ibcloud_fabric::generate::preset(&name)?.build()?;
        let t = Instant::now();
        let r = Dfsssp::default().route_detailed(&fabric)?;
        println!(
            "{name}: {:.3} s, {} layer(s) needed of {}, {} paths",
            t.elapsed().as_secs_f64(),
            r.layers.vls_needed,
            r.layers.vls_available,
            r.layers.paths_per_vl.iter().sum::<u64>()
        );
    }
    Ok(())
}
