//! `ftree`: OpenSM's fat-tree routing (osm_ucast_ftree.c, OpenSM 3.3.23),
//! reproduced entry for entry.
//!
//! **Construction**, in OpenSM's order and with its refusals
//! ([`RoutingError::Unsupported`] carrying OpenSM's reason):
//!
//! 1. LMC > 0 anywhere, fewer than 2 switches, fewer than 2 non-switch nodes or
//!    fewer than 2 CAs: refused.
//! 2. Ranking: switches cabled to CAs get distance 0 and a BFS over switch
//!    links ranks the rest; the ranks are flipped, and the switches found
//!    farthest from the CAs (rank 0) are used as roots for a second BFS that
//!    sets the final ranks. With [`EngineOptions::roots`] the BFS starts from
//!    those switches instead (unknown GUIDs are ignored; none known: ranking
//!    from the CAs). Unranked switches are dropped with the CA ports on them.
//! 3. Port groups: per switch, the ports to one remote node (one remote LID)
//!    form a group, up/down/sibling by the remote's rank, in port order.
//! 4. Leaves: every switch with a compute node (CN) must have the leaf rank
//!    (the highest rank; with roots given, the rank of the first CN's switch).
//!    The tree rank must be 2..=8.
//! 5. Tuples: BFS from the first leaf in OpenSM's switch order (node GUID in
//!    network byte order), giving each newly seen switch the first free tuple
//!    next to its discoverer's; each visited switch's groups are then sorted
//!    by remote tuple. The leaves are taken in tuple order, from the first to
//!    the last switch with CNs; `max_cn_per_leaf` is the most CNs on a leaf.
//! 6. Validation (skipped when roots are given, as in OpenSM): per rank, every
//!    switch must have as many up groups as the first one (and down groups
//!    above the leaves) with as many ports per group.
//!
//! **Routing**: for each leaf in tuple order, each CN in port order, the
//! down-going route is chosen by going up the least loaded up group (group
//! counter, then remote tuple; port by port counter), counted; the other up
//! groups get uncounted secondary routes; at every switch reached, up-going
//! routes are set on the switches below by going down, counting the
//! down-going ports used. Leaves with fewer CNs route dummy CNs (counters
//! only) up to `max_cn_per_leaf`. Then non-CN CA ports (only with
//! [`EngineOptions::compute_nodes`]), counted, in CA order. Then every
//! switch LID, in switch order, as a secondary route: no down counters, but
//! the up-going counters still move, exactly as in OpenSM. Roots get no route
//! to other roots (that would turn down then up; OpenSM's `connect_roots` is
//! off by default), and router LIDs are not routed, as in OpenSM.
//!
//! Options: `roots` = OpenSM's `root_guid_file`; `compute_nodes` = its
//! `cn_guid_file` (port GUIDs; an empty list is refused like an empty file);
//! `node_order` = Paper III's NoFTree: each leaf's compute nodes are routed
//! in the slots the order gives them instead of port order (see `slots.rs`);
//! without it the tables are OpenSM's.
//! Not supported: `io_guid_file`/`max_reverse_hops`, `quasi_ftree_indexing`
//! and `connect_roots` (all off by default in OpenSM).
//!
//! Differences from OpenSM by design: OpenSM routes only what its SM sees (the
//! part of the fabric cabled to the SM's port); this engine routes the whole
//! fabric it is given. Where OpenSM's result is undefined — it sorts port
//! groups by remote switch tuple and reads a CA's memory as a switch when a
//! group leading to a CA is among them: a switch above the leaf rank with a CA
//! and other groups below it, or a switch whose down groups include CAs and
//! must be re-sorted because routes through a switch below or beside it were
//! counted — the tree is refused; so is a route longer than 252 hops, where
//! OpenSM's byte hop counters would wrap.
//!
//! The engine builds its own port groups from the fabric rather than from
//! [`crate::graph::SwitchGraph`]: it needs the CA ports and OpenSM's order.

pub(crate) mod build;
pub(crate) mod route;
pub(crate) mod slots;

use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Fabric, Guid, Lid};

use crate::engine::{EngineOptions, Routing, RoutingEngine, RoutingError};

/// OpenSM's fat-tree routing engine.
#[derive(Clone, Debug, Default)]
pub struct FtreeEngine {
    roots: Option<Vec<Guid>>,
    compute_nodes: Option<Vec<Guid>>,
    node_order: Option<Vec<Lid>>,
}

impl FtreeEngine {
    /// The engine with OpenSM's defaults (no root or CN files).
    pub fn new() -> Self {
        Self::default()
    }

    /// Configured by `options` (`roots`, `compute_nodes`; `max_vls` is ignored).
    pub fn with_options(options: &EngineOptions) -> Self {
        Self {
            roots: options.roots.clone(),
            compute_nodes: options.compute_nodes.clone(),
            node_order: options.node_order.clone(),
        }
    }

    /// OpenSM's compute-node order, as it writes `opensm-ftree-ca-order.dump`:
    /// leaf switches in index order, on each the LIDs of its compute-node
    /// ports in down-port-group order, padded with `None` (OpenSM's `DUMMY`
    /// line) up to the most compute nodes on any leaf. Pattern analyses take
    /// ranks in this order to see the routing the way ftree laid it out.
    pub fn ca_order(&self, fabric: &Fabric) -> Result<Vec<Option<Lid>>, RoutingError> {
        fabric
            .lid_table()
            .map_err(|e| unsupported(format!("the fabric's LIDs are unusable: {e}")))?;
        let tree = build::Tree::build(fabric, self)?;
        if self.node_order.is_none() {
            return Ok(tree.ca_order());
        }
        let slots = slots::leaf_slots(&tree, self.node_order.as_deref())?;
        Ok(slots
            .iter()
            .flatten()
            .map(|s| s.map(|s| Lid(s.lid)))
            .collect())
    }

    /// Registry constructor.
    pub(crate) fn boxed(options: &EngineOptions) -> Result<Box<dyn RoutingEngine>, RoutingError> {
        Ok(Box::new(Self::with_options(options)))
    }
}

fn unsupported(reason: impl Into<String>) -> RoutingError {
    RoutingError::Unsupported {
        engine: "ftree",
        reason: reason.into(),
    }
}

impl RoutingEngine for FtreeEngine {
    fn name(&self) -> &'static str {
        "ftree"
    }

    fn route(&self, fabric: &Fabric) -> Result<Routing, RoutingError> {
        fabric
            .lid_table()
            .map_err(|e| unsupported(format!("the fabric's LIDs are unusable: {e}")))?;
        let tree = build::Tree::build(fabric, self)?;
        let slots = slots::leaf_slots(&tree, self.node_order.as_deref())?;
        let mut tables = ForwardingTables::new(fabric);
        route::Router::new(&tree, &slots).run(&mut tables)?;
        Ok(Routing {
            tables,
            path_sls: None,
        })
    }
}

#[cfg(test)]
mod tests;
