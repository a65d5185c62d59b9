//! Why an analysis could not run.

use ibcloud_fabric::{Guid, Lid};

/// Problems with the inputs of an analysis (not with the routes: broken routes
/// are counted and reported in the result).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AnalysisError {
    /// The tables were made for another fabric.
    #[error("the forwarding tables cover {tables} nodes but the fabric has {fabric}")]
    WrongFabric {
        /// Nodes the tables cover.
        tables: usize,
        /// Nodes in the fabric.
        fabric: usize,
    },
    /// The fabric's LIDs are unusable.
    #[error("the fabric's LIDs are inconsistent: {0}")]
    Lids(#[from] ibcloud_fabric::LidError),
    /// A LID names no port of the fabric.
    #[error("item {index}: LID {lid} is not assigned to any port of the fabric")]
    UnknownLid {
        /// Position in the caller's list (0-based).
        index: usize,
        /// The LID.
        lid: Lid,
    },
    /// A LID or GUID names a switch, which cannot be a traffic endpoint.
    #[error(
        "item {index}: {what} belongs to switch '{switch}'; endpoints must be CA or router ports"
    )]
    SwitchEndpoint {
        /// Position in the caller's list (0-based).
        index: usize,
        /// What was given, e.g. "LID 12".
        what: String,
        /// The switch's description.
        switch: String,
    },
    /// A GUID names no node or port of the fabric.
    #[error("item {index}: GUID {guid} is neither a node nor a port of the fabric")]
    UnknownGuid {
        /// Position in the caller's list (0-based).
        index: usize,
        /// The GUID.
        guid: Guid,
    },
    /// The same endpoint appears twice in an endpoint list.
    #[error("item {index}: endpoint {what} is listed twice")]
    DuplicateEndpoint {
        /// Position of the second occurrence (0-based).
        index: usize,
        /// The endpoint.
        what: String,
    },
    /// A traffic-matrix row sends from a node to itself.
    #[error(
        "traffic matrix row {index}: source and destination are the same endpoint (LID {lid})"
    )]
    SelfFlow {
        /// Row (0-based).
        index: usize,
        /// The LID.
        lid: Lid,
    },
    /// A traffic-matrix weight is not a positive finite number.
    #[error("traffic matrix row {index}: weight {weight} is not a positive finite number")]
    BadWeight {
        /// Row (0-based).
        index: usize,
        /// The weight.
        weight: f64,
    },
    /// The pattern cannot be laid over this many endpoints.
    #[error("pattern '{pattern}' {requirement}, but there are {nodes} endpoints{hint}")]
    PatternSize {
        /// The pattern's name.
        pattern: String,
        /// What it needs, e.g. "needs an even number of endpoints".
        requirement: String,
        /// Endpoints available.
        nodes: usize,
        /// How to fix it.
        hint: String,
    },
    /// Unknown pattern name or bad pattern argument.
    #[error("{0}")]
    BadPattern(String),
    /// Bad analysis options (runs, subset size, …).
    #[error("{0}")]
    BadOptions(String),
}
