//! FTreeMinRC's switch marking (Paper V §6, reference B §2.4): from the two
//! leaves up, level by level, until both sides reach the same set of
//! switches (the common ancestors) or the roots; then the switches on the
//! active routes between the two hypervisors first.
//!
//! The tree is ftree's own ([`FatTree`]) built on the physical view of the
//! virtualized fabric, so marking agrees with routing on what a leaf, an up
//! port and a tuple are.

use std::collections::HashMap;

use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Lid, NodeId};
use ibcloud_routing::engines::vswitch_ftree::physical_view;
use ibcloud_routing::fat_tree::{FatTree, Remote, SwitchIx};
use ibcloud_routing::EngineOptions;
use serde::Serialize;

use crate::error::VSwitchError;
use crate::model::VirtualFabric;

/// The fat-tree behind a virtual fabric, for marking.
#[derive(Clone, Debug)]
pub struct TreeInfo {
    tree: FatTree,
    /// Tree switch → node of the virtual fabric.
    node: Vec<NodeId>,
    /// Node of the virtual fabric → tree switch.
    ix: HashMap<NodeId, SwitchIx>,
    /// Up neighbours of every tree switch (switch indices, ascending).
    up: Vec<Vec<SwitchIx>>,
}

/// The switches FTreeMinRC marks for one migration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Marking {
    /// Marked switches: the two leaves, then each level up to the common
    /// ancestors (source side, destination side), in tree-index order per level.
    pub marked: Vec<NodeId>,
    /// Levels climbed (0: the same leaf).
    pub levels: u32,
    /// Rank of the common ancestors (the leaf rank for an intra-leaf move).
    pub ancestor_rank: u32,
}

impl TreeInfo {
    pub(crate) fn build(vf: &VirtualFabric) -> Result<Self, VSwitchError> {
        let view = physical_view(&vf.fabric)?;
        let tree = FatTree::build(&view.fabric, &EngineOptions::default())
            .map_err(|e| VSwitchError::NotFatTree(e.to_string()))?;
        Ok(Self::from_tree(tree, &view.original))
    }

    /// The tree of a physical fat-tree (no vSwitches), nodes as they are.
    pub fn from_physical(fabric: &ibcloud_fabric::Fabric) -> Result<Self, VSwitchError> {
        let tree = FatTree::build(fabric, &EngineOptions::default())
            .map_err(|e| VSwitchError::NotFatTree(e.to_string()))?;
        let original: Vec<NodeId> = (0..fabric.num_nodes() as u32).map(NodeId).collect();
        Ok(Self::from_tree(tree, &original))
    }

    fn from_tree(tree: FatTree, original: &[NodeId]) -> Self {
        let slots = tree.num_switch_slots();
        let mut node = vec![NodeId(u32::MAX); slots];
        let mut ix = HashMap::new();
        let mut up = vec![Vec::new(); slots];
        for s in tree.switches() {
            let n = original[tree.node(s).index()];
            node[s as usize] = n;
            ix.insert(n, s);
            let mut u: Vec<SwitchIx> = tree
                .up_groups(s)
                .filter_map(|g| match g.remote {
                    Remote::Switch(r) => Some(r),
                    Remote::Ca { .. } => None,
                })
                .collect();
            u.sort_unstable();
            u.dedup();
            up[s as usize] = u;
        }
        Self { tree, node, ix, up }
    }

    /// The ftree view.
    pub fn fat_tree(&self) -> &FatTree {
        &self.tree
    }

    /// The tree index of a switch node of the virtual fabric.
    pub fn index_of(&self, node: NodeId) -> Option<SwitchIx> {
        self.ix.get(&node).copied()
    }

    /// The virtual fabric node of a tree switch.
    pub fn node_of(&self, s: SwitchIx) -> NodeId {
        self.node[s as usize]
    }

    /// The leaf with this OpenSM tuple (e.g. `[3, 0, 1, 1]`).
    pub fn leaf_by_tuple(&self, tuple: &[u8]) -> Option<NodeId> {
        self.tree
            .leaves()
            .iter()
            .find(|&&l| self.tree.tuple(l) == tuple)
            .map(|&l| self.node_of(l))
    }

    /// Marks the switches for a move between the hypervisors on `src_leaf`
    /// and `dst_leaf` (physical leaf nodes).
    pub fn mark(&self, src_leaf: NodeId, dst_leaf: NodeId) -> Result<Marking, VSwitchError> {
        let ls = self.index_of(src_leaf).ok_or_else(|| {
            VSwitchError::NotFatTree(format!("switch {} is not a leaf of the tree", src_leaf.0))
        })?;
        let ld = self.index_of(dst_leaf).ok_or_else(|| {
            VSwitchError::NotFatTree(format!("switch {} is not a leaf of the tree", dst_leaf.0))
        })?;
        if ls == ld {
            return Ok(Marking {
                marked: vec![src_leaf],
                levels: 0,
                ancestor_rank: self.tree.rank(ls),
            });
        }
        let mut seen = vec![false; self.node.len()];
        let mut marked = vec![src_leaf, dst_leaf];
        seen[ls as usize] = true;
        seen[ld as usize] = true;
        let (mut fs, mut fd) = (vec![ls], vec![ld]);
        let mut levels = 0;
        loop {
            let next = |f: &[SwitchIx]| {
                let mut n: Vec<SwitchIx> = f
                    .iter()
                    .flat_map(|&s| self.up[s as usize].iter().copied())
                    .collect();
                n.sort_unstable();
                n.dedup();
                n
            };
            let (ns, nd) = (next(&fs), next(&fd));
            if ns.is_empty() || nd.is_empty() {
                break;
            }
            levels += 1;
            for &s in ns.iter().chain(nd.iter()) {
                if !seen[s as usize] {
                    seen[s as usize] = true;
                    marked.push(self.node[s as usize]);
                }
            }
            fs = ns;
            fd = nd;
            if fs == fd {
                break;
            }
        }
        let ancestor_rank = fs.first().map_or(0, |&s| self.tree.rank(s));
        Ok(Marking {
            marked,
            levels,
            ancestor_rank,
        })
    }
}

/// Switches on the LFT path from `from` to `lid` (stops at a CA, a switch
/// without an entry, port 0, or after `limit` hops), `from` included.
pub fn lft_path(
    vf: &VirtualFabric,
    tables: &ForwardingTables,
    from: NodeId,
    lid: Lid,
) -> Vec<NodeId> {
    let f = vf.fabric();
    let mut out = vec![from];
    let mut at = from;
    for _ in 0..64 {
        let Some(p) = tables.get(at, lid) else { break };
        if p == 0 {
            break;
        }
        let Some(r) = f.remote(ibcloud_fabric::PortRef::new(at, p)) else {
            break;
        };
        if !f.node(r.node).is_switch() {
            break;
        }
        at = r.node;
        out.push(at);
    }
    out
}
