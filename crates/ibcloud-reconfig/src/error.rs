//! Why a reconfiguration could not run.

use ibcloud_routing::RoutingError;

/// Bad input to an event or a reconfiguration. Nothing is changed when one
/// is returned: the fabric state and the tables are as before the call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ReconfigError {
    /// A node name, GUID or LID that names nothing in the fabric.
    #[error(
        "unknown node '{0}' (give a node GUID, a port GUID, 'lid:N' or a unique node description)"
    )]
    UnknownNode(String),
    /// A node description that several nodes share.
    #[error("node description '{0}' is not unique; give its GUID instead")]
    AmbiguousNode(String),
    /// A port that does not exist or carries no link.
    #[error("{0}")]
    NoSuchLink(String),
    /// An event that does not apply to the current state (failing a failed
    /// link, booting a running node, shutting down a switch, …).
    #[error("{0}")]
    BadEvent(String),
    /// The fabric is not a fat-tree the way OpenSM's ftree sees it.
    #[error("not a fat-tree: {0}")]
    NotFatTree(String),
    /// Forwarding tables that do not belong to the fabric.
    #[error("the forwarding tables cover {tables} nodes but the fabric has {fabric}")]
    WrongTables {
        /// Nodes the tables cover.
        tables: usize,
        /// Nodes in the fabric.
        fabric: usize,
    },
    /// A node order naming nodes that are not compute nodes of the fabric
    /// (or outside the selected sub-tree), or naming one twice.
    #[error("{0}")]
    BadOrder(String),
    /// Bad options (empty node set, zero paths, …).
    #[error("{0}")]
    BadOptions(String),
    /// A metabase that does not fit the fabric, or an unreadable metabase file.
    #[error("metabase: {0}")]
    Metabase(String),
    /// The routing engine refused.
    #[error(transparent)]
    Routing(#[from] RoutingError),
    /// Reading an order file or a pattern failed.
    #[error("{0}")]
    Input(String),
}

impl ReconfigError {
    /// Maps a routing error met while building the fat-tree view.
    pub(crate) fn from_tree(e: RoutingError) -> Self {
        match e {
            RoutingError::Unsupported { reason, .. } => Self::NotFatTree(reason),
            other => Self::Routing(other),
        }
    }
}
