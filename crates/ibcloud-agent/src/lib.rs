//! `ibcloud agent`: the same controller objects the host simulator runs
//! (FaReS, FreeMarket, IOShares as [`CapPolicy`], DRX and Sphinx),
//! driving real VMs on a Linux host and a running OpenSM.
//!
//! - [`cgroup`]: the actuator, CPU quotas through cgroup v1 or v2;
//! - [`state`]: the state file of original limits, restore, the guardian;
//! - [`sensors`]: InfiniBand counters, latency reports, CPU %, replay;
//! - [`config`]: the `AGENT.toml` file;
//! - [`policies`]: DRX and Sphinx (the simulator's controller objects)
//!   beside the capping policies;
//! - [`opensm`]: QoS / congestion-control settings pushed to a running
//!   OpenSM (opensm.conf + reload);
//! - [`run`]: the control loop.
//!
//! [`CapPolicy`]: ibcloud_control::capping::CapPolicy

pub mod cgroup;
pub mod config;
pub mod opensm;
pub mod policies;
pub mod run;
pub mod sensors;
pub mod state;

/// Why the agent could not run or stopped.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum AgentError {
    /// Bad input: configuration, paths, a cgroup version the host lacks
    /// (the CLI exits 2).
    #[error("{0}")]
    Input(String),
    /// A failure while running (sensor gone, write refused); the original
    /// limits have been restored where possible (the CLI exits 1).
    #[error("{0}")]
    Runtime(String),
}
