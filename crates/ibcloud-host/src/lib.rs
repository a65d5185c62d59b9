//! # ibcloud-host
//!
//! Virtualized hosts on top of `ibcloud-netsim`: physical CPUs shared by
//! VMs under a CPU scheduler model (Xen credit1 or Linux CFS bandwidth
//! control), guest programs that only progress while their vCPU runs, and
//! InfiniBand adapters (Xen split-driver VMM-bypass, SR-IOV) whose work
//! requests progress on netsim's HCA whether or not the owner runs.
//! Completions land in fixed-size CQ rings in guest memory that the
//! hypervisor can read (IBMon). This crate never reads a wall clock.
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub mod sched;

/// Simulated time in picoseconds (netsim's).
pub type Time = ibcloud_netsim::time::Time;

pub mod cq;
pub mod fluid;
pub mod nas;
pub mod program;
pub mod scenario;
pub mod sm;
pub mod view;
pub mod world;

pub use scenario::{Scenario, ScenarioError};
pub use view::{ActionRecord, Actuation, HostController, View, VmView};
pub use world::{RunError, RunResult, World};
