//! # ibcloud-vswitch
//!
//! The SR-IOV vSwitch architecture of Papers II and V: every VM gets its own
//! LID behind a virtual switch in its hypervisor's HCA, keeps LID, vGUID and
//! GID across live migration, and the subnet is fixed after a migration with
//! a handful of SMPs and no path computation.
//!
//! - [`capacity`]: LID-space arithmetic of both LID schemes, the LRH
//!   extension and the hybrid option.
//! - [`build`]: hypervisors with `V` VFs on the leaf ports of any fabric,
//!   each HCA emulated as a vSwitch (the papers' ibsim testbed).
//! - [`model`]: [`VirtualFabric`], hypervisors, VFs, VMs, boot and shutdown
//!   under prepopulated or dynamic LIDs; its tables come from
//!   `vswitch-ftree` (Paper V's vSwitchFatTree, in `ibcloud-routing`).
//! - [`marking`]: FTreeMinRC's switch marking on ftree's tree.
//! - [`reconfig`]: ItRC, FTreeMinRC, full re-route, partially static: exact
//!   SMP lists from real table diffs, applied atomically.
//! - [`timing`]: the SMP timing model.
//! - [`safety`]: reachability after a migration and the transition deadlock
//!   check.
//! - [`sim`]: the migration simulator (vSwitchMigrationSim).
//!
//! ```
//! use ibcloud_fabric::generate::preset;
//! use ibcloud_vswitch::{Method, Scheme, VirtualFabric};
//! let physical = preset("4-ary-2-full")?.build()?;
//! let mut vf = VirtualFabric::virtualize(&physical, 4, Scheme::Dynamic)?;
//! vf.boot_vm("web", 0)?;
//! let vm = vf.find_vm("web")?;
//! let plan = vf.migrate(vm, 1, Method::FtreeMinRc, false)?;
//! assert_eq!(plan.marked.len(), 1); // same leaf: one switch
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub mod build;
pub mod capacity;
mod error;
pub mod marking;
pub mod model;
pub mod reconfig;
pub mod safety;
pub mod sim;
pub mod timing;

pub use error::VSwitchError;
pub use model::{Scheme, VirtualFabric};
pub use reconfig::{Method, Plan, Smp, SmpKind};
