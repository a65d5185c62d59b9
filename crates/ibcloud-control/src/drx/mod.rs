//! DRX, Distributed Resource Exchange (G §1–5): ResEx extended from one
//! host to a cluster. A cluster manager (PM: Workload Configurator, DCCR
//! Finder, Resource Pricer), Ensemble Managers and Host Agents (each HA
//! doubles as the EM of its VMs, G §5.1) protect latency-sensitive
//! ensembles (SS) from bulk ones (SV): on an SLA violation the PM raises
//! the price of every VME that shares the victim's host (DCCR) and the HAs
//! turn price rises into CPU caps (CFS quota), or the PM pushes IB
//! congestion-control/QoS settings through the SM.
//!
//! One module per job:
//! - [`workload`]: W_i = (g, IOmin, α, HP|LP) and Algorithm 4 (A1–A3).
//! - [`placement`]: hosts, VMs, VMEs and DCCR (Eq. 3), Dist/Local targets.
//! - [`pricing`]: δP (EB/HB), Eq. 6, MaxPrice, freeze, one change per
//!   interval, epoch reset and slow restore (A8).
//! - [`cap`]: Eq. 7 (A5 as written / repaired), CC-Dist and PC-Dist (A6).
//! - [`messages`], [`agent`] (HA), [`manager`] (PM), [`cluster`] (the
//!   driver), [`record`] (action log, G R5 responses, hardware pushes).
//! - [`config`]: the policies (G Table 4) and every option; [`sim`]: the
//!   controller that runs DRX on the host simulator.
//!
//! Resos accounting reuses ResEx's [`Ledger`](crate::resex::resos::Ledger).
//! docs/drx.md lists every reading of G §9 chosen here.

pub(crate) mod agent;
pub mod cap;
pub mod cluster;
pub mod config;
pub(crate) mod manager;
pub mod messages;
pub mod placement;
pub mod pricing;
pub mod record;
pub mod sim;
pub mod workload;

pub use cluster::Drx;
pub use config::{DrxConfig, PolicyKind, VmeSpec};
