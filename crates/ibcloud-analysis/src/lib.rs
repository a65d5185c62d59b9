//! # ibcloud-analysis
//!
//! Static congestion analysis of forwarding tables, as ORCS (the Oblivious
//! Routing Congestion Simulator used by the papers) does it, exact and fast.
//!
//! A communication **pattern** (bisect, shift, bruck, …) is laid over a set of
//! **endpoints** (CA ports) in **levels**: the flows of one level run at the
//! same time, levels run one after the other and never interfere. Every flow
//! takes its path through the forwarding tables; the **congestion** of a
//! directed link in a level is the number (or weight) of that level's flows
//! crossing it, and a flow's congestion is the largest on its path. From
//! these come ORCS's metrics, per run: `hist_max_cong` (an unshared route
//! counts 1, as in ORCS's code), `hist_acc_band` (mean over flows of
//! 1/congestion, the effective-bandwidth fraction; averaged over random
//! bisections it is the effective bisection bandwidth), `sum_max_cong`,
//! `dep_max_delay` and per-link loads. Runs draw a fresh node order each, from
//! a ChaCha stream per run, so a seed gives the same numbers on any number of
//! threads.
//!
//! ```
//! use ibcloud_analysis::{analyze, AnalysisOptions, Endpoints, Pattern};
//! use ibcloud_routing::{registry, EngineOptions};
//! let fabric = ibcloud_fabric::generate::preset("ft324")?.build()?;
//! let routing = registry::engine("ftree", &EngineOptions::default())?.route(&fabric)?;
//! let endpoints = Endpoints::cas(&fabric);
//! let options = AnalysisOptions { runs: 20, seed: 1, ..AnalysisOptions::default() };
//! let result = analyze(&fabric, &routing.tables, &endpoints, &Pattern::Bisect, &options)?;
//! assert_eq!(result.runs.len(), 20);
//! let ebb = result.ebb();
//! assert!(ebb.mean > 0.5 && ebb.mean <= 1.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

mod endpoints;
mod error;
mod metrics;
mod order;
pub mod partition;
mod paths;
mod patterns;
mod result;
mod run;

pub use endpoints::{Endpoint, Endpoints, Subset};
pub use error::AnalysisError;
pub use order::{run_stream, RankOrder};
pub use paths::{PathMode, Paths};
pub use patterns::{Flow, Pattern, PatternInstance, TrafficMatrix, PATTERN_NAMES};
pub use result::{Analysis, BrokenFlow, LinkLoad, RunStats, Stats};
pub use run::{analyze, analyze_with_paths, AnalysisOptions};
