//! Parameter sweeps: many independent runs (seeds, loads, configurations)
//! on all cores, results in input order.

use crate::config::SimConfig;
use crate::engine::Simulation;
use crate::error::NetsimError;
use crate::stats::SimResult;
use crate::time::Time;
use crate::traffic::TrafficSpec;
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::Fabric;
use rayon::prelude::*;

/// One run of a sweep.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// Settings (including the seed).
    pub config: SimConfig,
    /// Traffic.
    pub traffic: TrafficSpec,
    /// Simulated time.
    pub end: Time,
}

/// Runs every spec in parallel; the i-th result belongs to the i-th spec,
/// whatever the number of threads.
pub fn run_many(
    fabric: &Fabric,
    tables: &ForwardingTables,
    runs: &[RunSpec],
) -> Vec<Result<SimResult, NetsimError>> {
    runs.par_iter()
        .map(|r| Simulation::new(fabric, tables, &r.config, &r.traffic, r.end)?.run())
        .collect()
}
