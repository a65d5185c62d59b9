//! The engine trait, its result and its errors.

use crate::sl::PathSls;
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Fabric, Guid};

/// What a routing engine computes.
#[derive(Clone, Debug, PartialEq)]
pub struct Routing {
    /// Every switch's LFT; switch LIDs route to port 0 on the switch itself.
    pub tables: ForwardingTables,
    /// The service level of every path, for engines that break deadlocks with
    /// virtual layers (dfsssp, lash); `None` means SL 0 everywhere.
    pub path_sls: Option<PathSls>,
}

/// Computes forwarding tables, like an OpenSM routing engine.
///
/// Implementations must be deterministic (same fabric and LIDs, same tables,
/// on any number of threads) and must not panic on any fabric: a topology
/// they cannot route is a [`RoutingError`].
pub trait RoutingEngine: Send + Sync + std::fmt::Debug {
    /// The registry name (`ftree`, `minhop`, …).
    fn name(&self) -> &'static str;

    /// Routes `fabric`, whose LIDs are assigned.
    fn route(&self, fabric: &Fabric) -> Result<Routing, RoutingError>;
}

/// Options an engine may use; each engine documents which ones it reads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineOptions {
    /// Root switches by node GUID (updn's roots file, ftree's root_guid file).
    pub roots: Option<Vec<Guid>>,
    /// Compute nodes by port GUID (ftree's cn_guid file).
    pub compute_nodes: Option<Vec<Guid>>,
    /// Virtual lanes / layers available to deadlock-free engines (1..=15);
    /// `None`: the engine's OpenSM default.
    pub max_vls: Option<u8>,
    /// A node order for fat-tree routing (Paper III's NoFTree): compute-node
    /// LIDs, possibly only some of them; ftree routes each leaf's nodes in
    /// the slots this order gives them (`ftree::leaf_slots`).
    pub node_order: Option<Vec<ibcloud_fabric::Lid>>,
    /// Partitions for the partition-aware engines (pftree, pftree-ext,
    /// pftree-wt), as read from OpenSM's partitions.conf.
    pub partitions: Option<ibcloud_fabric::partitions::PartitionConfig>,
    /// pFTree-Ext's global policy; overrides the file's `global_isolation`
    /// (best-effort when neither says).
    pub isolation: Option<ibcloud_fabric::partitions::GlobalPolicy>,
    /// pFTree-Wt node weights by CA port GUID (others weigh 1).
    pub node_weights: Option<Vec<(Guid, f64)>>,
    /// pFTree's corrected or literal readings of the printed pseudocode.
    pub pftree_variant: crate::engines::pftree::PftreeVariant,
}

/// Why a fabric could not be routed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RoutingError {
    /// No engine of that name.
    #[error("unknown routing engine '{name}'; known: {known}")]
    UnknownEngine {
        /// The name asked for.
        name: String,
        /// The registered names, comma-separated.
        known: String,
    },
    /// The topology is not one this engine accepts (e.g. ftree on a non-fat-tree),
    /// with the reason, as OpenSM would log it.
    #[error("{engine}: {reason}")]
    Unsupported {
        /// The engine.
        engine: &'static str,
        /// Why.
        reason: String,
    },
    /// A switch or CA port that must have a LID has none.
    #[error("{0} has no LID; assign LIDs before routing")]
    MissingLid(String),
    /// Some destinations cannot be reached at all.
    #[error("{engine}: the fabric is disconnected: {detail}")]
    Disconnected {
        /// The engine.
        engine: &'static str,
        /// Which parts.
        detail: String,
    },
    /// More virtual layers would be needed than are available.
    #[error("{engine}: needs {needed} virtual layers to be deadlock-free but only {available} are available")]
    NotEnoughLayers {
        /// The engine.
        engine: &'static str,
        /// Layers needed.
        needed: usize,
        /// Layers available.
        available: usize,
    },
    /// Bad engine options.
    #[error("{0}")]
    BadOptions(String),
}
