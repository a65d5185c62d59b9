//! Many packings at once: pack on one window, evaluate every host on another,
//! in parallel, results in job order.

use crate::blocks::Profile;
use crate::delay::{DelayStats, DelayUnit};
use crate::demand::{Demand, Window};
use crate::error::ConsolidationError;
use crate::packing::{evaluate, pack_profiled, PackSpec, Packing};
use rayon::prelude::*;

/// Pack on `pack_window` by `spec`, then evaluate each host on `eval_window`
/// at its full `spec.cores` (not θ·K), in `eval_unit`.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// Samples the packer sees (training days).
    pub pack_window: Window,
    /// Samples the hosts are judged on (the held-out day).
    pub eval_window: Window,
    /// How to pack.
    pub spec: PackSpec,
    /// Unit of the evaluated delays.
    pub eval_unit: DelayUnit,
    /// Also compute the packing-window delay of utilisation packings (one
    /// more pass over every VM's demand; delay packings always have it).
    pub packing_delays: bool,
}

/// A job's packing and the evaluation of each of its hosts.
#[derive(Clone, Debug, PartialEq)]
pub struct JobResult {
    /// The hosts, in opening order.
    pub packing: Packing,
    /// One entry per host, same order.
    pub stats: Vec<DelayStats>,
}

/// Runs every job on the rayon pool and returns the results in job order;
/// the first error (in job order) stops nothing but is the one returned.
///
/// ```
/// use ibcloud_cloud::{run_jobs, Criterion, DelayUnit, Demand, Job, PackSpec, Window};
/// let d = Demand::new(2, 4, 1.0, vec![1.0, 3.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]).unwrap();
/// let job = Job {
///     pack_window: Window::new(&d, vec![0..2]).unwrap(),
///     eval_window: Window::new(&d, vec![2..4]).unwrap(),
///     spec: PackSpec::new(4.0, 1.0, Criterion::Utilisation),
///     eval_unit: DelayUnit::WallMinutes,
///     packing_delays: true,
/// };
/// let results = run_jobs(&d, &[job]).unwrap();
/// assert_eq!(results[0].stats[0].filling(4.0), 50.0);
/// ```
pub fn run_jobs(demand: &Demand, jobs: &[Job]) -> Result<Vec<JobResult>, ConsolidationError> {
    // Jobs on the same packing window share its profile (mean and peak per VM).
    let mut windows: Vec<&Window> = Vec::new();
    let index: Vec<usize> = jobs
        .iter()
        .map(
            |job| match windows.iter().position(|w| **w == job.pack_window) {
                Some(i) => i,
                None => {
                    windows.push(&job.pack_window);
                    windows.len() - 1
                }
            },
        )
        .collect();
    let profiles: Vec<Profile> = windows
        .par_iter()
        .map(|w| Profile::new(demand, w))
        .collect();
    jobs.par_iter()
        .zip(index.par_iter())
        .map(|(job, &w)| {
            let packing = pack_profiled(
                demand,
                &job.pack_window,
                &job.spec,
                &profiles[w],
                job.packing_delays,
            )?;
            let stats = packing
                .bins
                .iter()
                .map(|bin| {
                    evaluate(
                        demand,
                        &bin.vms,
                        &job.eval_window,
                        job.spec.cores,
                        job.eval_unit,
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(JobResult { packing, stats })
        })
        .collect()
}
