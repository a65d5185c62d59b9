//! A read-only view of a fat-tree exactly as the `ftree` engine sees it:
//! OpenSM's ranks, tuples, leaf order, port groups and compute nodes.
//!
//! Everything built on fat-trees (node-ordered and weighted variants of
//! ftree, sub-tree reconfiguration, FTreeMinRC's switch marking, SlimUpdate)
//! starts from this view, so they all agree with ftree on what a leaf, a root
//! or an up port is.
//!
//! ```
//! use ibcloud_fabric::generate::FatTreeParams;
//! use ibcloud_fabric::lids::{assign_lids, LidOptions};
//! use ibcloud_routing::fat_tree::FatTree;
//! use ibcloud_routing::EngineOptions;
//!
//! // The 4-ary 2-tree: 4 leaves, 4 roots, 4 nodes per leaf.
//! let mut fabric = FatTreeParams::k_ary_n_tree(4, 2).build().unwrap();
//! assign_lids(&mut fabric, &LidOptions::default()).unwrap();
//! let tree = FatTree::build(&fabric, &EngineOptions::default()).unwrap();
//! assert_eq!(tree.leaves().len(), 4);
//! assert_eq!(tree.leaf_rank(), 1);
//! let leaf = tree.leaves()[0];
//! assert_eq!(tree.compute_nodes(leaf).len(), 4);
//! assert_eq!(tree.up_groups(leaf).count(), 4);
//! assert_eq!(tree.tuple(leaf), vec![1, 0]);
//! ```

use ibcloud_fabric::{Fabric, Guid, Lid, NodeId, PortNum};

use crate::engine::{EngineOptions, RoutingError};
use crate::engines::ftree::build::{Group, Tree};
use crate::engines::ftree::FtreeEngine;

/// Index of a switch in the view (OpenSM's switch-table order: node GUID in
/// network byte order).
pub type SwitchIx = u32;

/// The far end of a port group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Remote {
    /// Another switch of the tree.
    Switch(SwitchIx),
    /// A CA port, by LID.
    Ca {
        /// The CA node.
        node: NodeId,
        /// The LID of the CA port the group leads to.
        lid: Lid,
    },
}

/// The ports of one switch that lead to one remote node, in port order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortGroup {
    /// Where the ports lead.
    pub remote: Remote,
    /// `(local port, remote port)` pairs, in ascending local port order.
    pub ports: Vec<(PortNum, PortNum)>,
}

/// A compute node on a leaf switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComputeNode {
    /// The CA node.
    pub node: NodeId,
    /// The CA port's GUID.
    pub port_guid: Guid,
    /// The CA port's LID.
    pub lid: Lid,
    /// The leaf switch's port towards it.
    pub leaf_port: PortNum,
}

/// A fat-tree as OpenSM's ftree builds it, refused where ftree refuses.
#[derive(Clone, Debug)]
pub struct FatTree {
    tree: Tree,
    by_node: Vec<SwitchIx>,
}

impl FatTree {
    /// Builds the view; `options` are ftree's (`roots`, `compute_nodes`).
    /// The fabric's LIDs must be assigned.
    pub fn build(fabric: &Fabric, options: &EngineOptions) -> Result<Self, RoutingError> {
        fabric.lid_table().map_err(|e| RoutingError::Unsupported {
            engine: "ftree",
            reason: format!("the fabric's LIDs are unusable: {e}"),
        })?;
        let tree = Tree::build(fabric, &FtreeEngine::with_options(options))?;
        let mut by_node = vec![SwitchIx::MAX; fabric.num_nodes()];
        for (i, s) in tree.sw.iter().enumerate() {
            if !s.removed {
                by_node[s.node.index()] = i as SwitchIx;
            }
        }
        Ok(Self { tree, by_node })
    }

    /// Every switch index of the tree (switches ftree dropped as unranked
    /// are not part of it).
    pub fn switches(&self) -> impl Iterator<Item = SwitchIx> + '_ {
        (0..self.tree.sw.len() as SwitchIx).filter(|&s| !self.tree.sw[s as usize].removed)
    }

    /// Number of switch slots (indices run `0..num_switch_slots()`; some may
    /// be dropped switches, see [`FatTree::switches`]).
    pub fn num_switch_slots(&self) -> usize {
        self.tree.sw.len()
    }

    /// The tree index of a switch node, if it is part of the tree.
    pub fn index_of(&self, node: NodeId) -> Option<SwitchIx> {
        self.by_node
            .get(node.index())
            .copied()
            .filter(|&s| s != SwitchIx::MAX)
    }

    /// The switch's node in the fabric.
    pub fn node(&self, s: SwitchIx) -> NodeId {
        self.tree.sw[s as usize].node
    }

    /// The switch's node GUID.
    pub fn guid(&self, s: SwitchIx) -> Guid {
        self.tree.sw[s as usize].guid
    }

    /// The switch's LID.
    pub fn lid(&self, s: SwitchIx) -> Lid {
        Lid(self.tree.sw[s as usize].lid)
    }

    /// OpenSM's rank: 0 for roots, [`FatTree::leaf_rank`] for leaves.
    pub fn rank(&self, s: SwitchIx) -> u32 {
        self.tree.sw[s as usize].rank
    }

    /// The tuple ("index") OpenSM gives the switch: its rank, then one digit
    /// per level; empty when it has none.
    pub fn tuple(&self, s: SwitchIx) -> Vec<u8> {
        let t = &self.tree.sw[s as usize].tuple;
        t.iter().take_while(|&&b| b != 0xFF).copied().collect()
    }

    /// Whether the switch is a leaf (has the leaf rank and compute nodes, or
    /// is in the leaf array).
    pub fn is_leaf(&self, s: SwitchIx) -> bool {
        self.tree.sw[s as usize].is_leaf
    }

    /// The rank of the leaves (the tree has `leaf_rank() + 1` levels).
    pub fn leaf_rank(&self) -> u32 {
        self.tree.leaf_rank
    }

    /// Leaf switches in tuple order: the order ftree routes them in.
    pub fn leaves(&self) -> &[SwitchIx] {
        &self.tree.leaves
    }

    /// The most compute nodes on one leaf (ftree pads the others with dummies).
    pub fn max_cn_per_leaf(&self) -> u32 {
        self.tree.max_cn_per_leaf
    }

    /// Port groups towards the roots, in the order built (sorted by remote tuple).
    pub fn up_groups(&self, s: SwitchIx) -> impl Iterator<Item = PortGroup> + '_ {
        self.groups(&self.tree.sw[s as usize].up)
    }

    /// Port groups towards the leaves and CAs, in the order built.
    pub fn down_groups(&self, s: SwitchIx) -> impl Iterator<Item = PortGroup> + '_ {
        self.groups(&self.tree.sw[s as usize].down)
    }

    /// Port groups to switches of the same rank.
    pub fn sibling_groups(&self, s: SwitchIx) -> impl Iterator<Item = PortGroup> + '_ {
        self.groups(&self.tree.sw[s as usize].sib)
    }

    /// Compute nodes on a switch, in ftree's routing order (down-group order).
    pub fn compute_nodes(&self, s: SwitchIx) -> Vec<ComputeNode> {
        let mut out = Vec::new();
        for &g in &self.tree.sw[s as usize].down {
            let g = &self.tree.groups[g as usize];
            if g.remote_is_sw {
                continue;
            }
            let Some(p) = self.tree.ca_port(g.remote, g.remote_lid) else {
                continue;
            };
            if p.is_cn {
                out.push(ComputeNode {
                    node: self.tree.ca[g.remote as usize].node,
                    port_guid: p.guid,
                    lid: Lid(p.lid),
                    leaf_port: p.switch_port,
                });
            }
        }
        out
    }

    /// OpenSM's `opensm-ftree-ca-order.dump` order (see [`FtreeEngine::ca_order`]).
    pub fn ca_order(&self) -> Vec<Option<Lid>> {
        self.tree.ca_order()
    }

    fn groups<'a>(&'a self, list: &'a [u32]) -> impl Iterator<Item = PortGroup> + 'a {
        list.iter()
            .map(|&g| self.group(&self.tree.groups[g as usize]))
    }

    fn group(&self, g: &Group) -> PortGroup {
        let remote = if g.remote_is_sw {
            Remote::Switch(g.remote)
        } else {
            Remote::Ca {
                node: self.tree.ca[g.remote as usize].node,
                lid: Lid(g.remote_lid),
            }
        };
        let ports = self.tree.ports[g.first_port as usize..(g.first_port + g.num_ports) as usize]
            .iter()
            .map(|p| (p.port, p.remote_port))
            .collect();
        PortGroup { remote, ports }
    }
}
