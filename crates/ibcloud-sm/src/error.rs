//! Errors of the subnet manager.

use std::time::Duration;

/// A MAD that does not fit its layout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The buffer is shorter than the layout.
    #[error("buffer too short: {what} needs {need} bytes, got {got}")]
    Truncated {
        /// The structure.
        what: &'static str,
        /// Bytes needed.
        need: usize,
        /// Bytes present.
        got: usize,
    },
    /// A field holds a value the layout does not allow.
    #[error("malformed {what}: {problem}")]
    Malformed {
        /// The structure.
        what: &'static str,
        /// What is wrong.
        problem: String,
    },
}

/// Why the SM could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum SmError {
    /// libibumad refused (no device, no port, registration failed).
    #[error("libibumad: {0}")]
    Umad(String),
    /// A MAD from the fabric did not parse.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// A node did not answer after every retry.
    #[error("{attr} to {target} unanswered after {tries} tries of {timeout:?}")]
    Timeout {
        /// Attribute name.
        attr: &'static str,
        /// Route label.
        target: String,
        /// Sends made.
        tries: u32,
        /// Per-try timeout.
        timeout: Duration,
    },
    /// A node answered with a MAD status.
    #[error("{attr} to {target}: MAD status 0x{status:04x}")]
    Status {
        /// Attribute name.
        attr: &'static str,
        /// Route label.
        target: String,
        /// The status.
        status: u16,
    },
    /// The discovered fabric is inconsistent or LIDs cannot be assigned.
    #[error("fabric: {0}")]
    Fabric(#[from] ibcloud_fabric::FabricError),
    /// Building the fabric model failed.
    #[error("topology: {0}")]
    Topology(#[from] ibcloud_fabric::TopologyError),
    /// The routing engine failed; the old tables stay in place.
    #[error("routing: {0}")]
    Routing(#[from] ibcloud_routing::RoutingError),
    /// Reading or writing a file or socket.
    #[error("{path}: {source}")]
    Io {
        /// The file or socket.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Another SM is master on this fabric.
    #[error("another SM is master on this fabric: {0}")]
    OtherMaster(String),
    /// Anything else the SM refuses, with the reason.
    #[error("{0}")]
    Refused(String),
}
