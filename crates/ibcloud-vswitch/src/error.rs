//! The crate's error type: every refusal names what was wrong.

use ibcloud_analysis::AnalysisError;
use ibcloud_routing::RoutingError;

/// Why a vSwitch operation was refused. Every refusal leaves the virtual
/// fabric unchanged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum VSwitchError {
    /// No VM of that name or LID.
    #[error("unknown VM '{0}'")]
    UnknownVm(String),
    /// No hypervisor of that name or index.
    #[error("unknown hypervisor '{0}'")]
    UnknownHypervisor(String),
    /// The destination hypervisor has no free VF.
    #[error("hypervisor '{0}' has no free VF")]
    NoFreeVf(String),
    /// A VM cannot migrate to the hypervisor it is on.
    #[error("VM '{vm}' is already on hypervisor '{hypervisor}'")]
    SameHypervisor {
        /// The VM.
        vm: String,
        /// Its hypervisor.
        hypervisor: String,
    },
    /// The unicast LID space (0x0001-0xBFFF) is exhausted.
    #[error(
        "LID space exhausted ({scheme} scheme): {needed} LIDs needed, 49151 unicast LIDs exist"
    )]
    LidExhausted {
        /// "prepopulated" or "dynamic".
        scheme: &'static str,
        /// LIDs the request needs in total.
        needed: u64,
    },
    /// FTreeMinRC (or another fat-tree method) on a fabric that is not one.
    #[error("not a fat-tree, FTreeMinRC cannot mark switches: {0}")]
    NotFatTree(String),
    /// A VM name is used twice.
    #[error("a VM named '{0}' already exists")]
    DuplicateVm(String),
    /// Bad parameters or an inconsistent virtual fabric.
    #[error("{0}")]
    BadInput(String),
    /// Routing failed.
    #[error(transparent)]
    Routing(#[from] RoutingError),
    /// The analysis failed.
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
}
