//! Shared fixtures for ibcloud's criterion benchmarks (internal crate).
//!
//! Tiers follow the reference documents: `small` fabrics finish in
//! microseconds, `large` ones are the 11,664-node tree every paper uses.
#![warn(missing_docs)]

use ibcloud_fabric::{generate, Fabric};

/// Presets benchmarked for fabric-level work, smallest first.
pub const FABRIC_TIERS: [&str; 3] = ["ft648", "ft5832", "ft11664"];

/// Builds a preset fabric, panicking on a bad name (benchmarks only).
pub fn fabric(preset: &str) -> Fabric {
    generate::preset(preset)
        .and_then(|p| p.build().map_err(|e| panic!("{e}")))
        .expect("known preset")
}
