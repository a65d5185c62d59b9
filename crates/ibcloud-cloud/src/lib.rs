//! # ibcloud-cloud
//!
//! Cloud resource management over virtualised hosts. This first part holds
//! the **workload delay** of Paper VI ("The concept of workload delay as a
//! Quality-of-Service metric for consolidated cloud environments with
//! deadline requirements") and the two VM consolidation schemes it compares.
//!
//! ```text
//!  per-VM CPU demand (cores, one row per VM, Δt minutes per sample)
//!        │                                   Demand + Window (segments)
//!        ▼
//!  pack ── utilisation: best-fit decreasing on mean demand ≤ θ·K
//!       └─ delay:       same order, admit while total delay at θ·K ≤ limit
//!        │                                   Packing (bins of VM indices)
//!        ▼
//!  evaluate ── backlog q(t+1) = max{q(t) + d(t+1) − CΔt, 0} at C = K
//!        │                                   DelayStats per bin
//!        ▼
//!  run_jobs ── many (pack window, eval window, spec) jobs in parallel
//! ```
//!
//! The layer computes; it never reads files, clocks or random numbers. Trace
//! loading, cleaning, the synthetic generator and the reproduction of the
//! paper's tables live in the Python package (`ibcloud.delay`).
//!
//! ## Determinism
//!
//! Every result depends only on its inputs: VMs are sorted by mean demand
//! (descending, ties by index), bins are tried in a fixed order (ties by
//! creation order), sums run in index order, and [`run_jobs`] returns results
//! in job order whatever the number of threads.
//!
//! ```
//! use ibcloud_cloud::{pack, Criterion, Demand, PackSpec, Window};
//! // Three VMs, four one-minute samples each (cores).
//! let demand = Demand::new(3, 4, 1.0, vec![
//!     1.0, 1.0, 1.0, 1.0,
//!     0.5, 0.5, 0.5, 0.5,
//!     0.6, 0.6, 0.6, 0.6,
//! ]).unwrap();
//! let spec = PackSpec::new(2.0, 0.75, Criterion::Utilisation);
//! let packing = pack(&demand, &Window::all(&demand), &spec).unwrap();
//! assert_eq!(packing.members(), vec![vec![0, 1], vec![2]]);
//! ```
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

mod blocks;
mod campaign;
mod delay;
mod demand;
mod error;
mod packing;

pub use campaign::{run_jobs, Job, JobResult};
pub use delay::{backlog, delay_stats, total_delay, DelayStats, DelayUnit, Host, BACKLOG_EPSILON};
pub use demand::{Demand, Window};
pub use error::ConsolidationError;
pub use packing::{evaluate, pack, Bin, Criterion, Fit, PackSpec, Packing};
