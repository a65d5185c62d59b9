//! Topology generators: XGFT/PGFT fat-trees, k-ary-n-trees, the papers'
//! named fabrics and seeded fault injection.

mod fat_tree;
mod faults;
mod presets;

pub use fat_tree::FatTreeParams;
pub use faults::{inject_faults, FaultReport, FaultSpec};
pub use presets::{preset, presets, Preset};
