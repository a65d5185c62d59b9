//! A compact, index-based copy of the fat-tree view that the path-keeping
//! algorithms (SlimUpdate, the metabase) walk: per switch its rank, its up
//! and down switch ports one by one, its compute nodes, and which leaves lie
//! below it.
//!
//! Ranks follow OpenSM (roots 0, leaves `leaf_rank`); "up" means towards
//! rank 0. Switch indices are the [`FatTree`] ones.

use ibcloud_fabric::{Fabric, Guid, NodeId, PortNum};
use ibcloud_routing::fat_tree::{ComputeNode, FatTree, Remote};
use ibcloud_routing::EngineOptions;

use crate::error::ReconfigError;

/// "No switch".
pub(crate) const NONE: u32 = u32::MAX;

/// One switch-to-switch port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hop {
    /// Local port.
    pub(crate) port: PortNum,
    /// The switch at the far end.
    pub(crate) remote: u32,
    /// Its port.
    pub(crate) rport: PortNum,
}

/// A fixed-width set of leaf positions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LeafSet(Vec<u64>);

impl LeafSet {
    fn new(n: usize) -> Self {
        Self(vec![0; n.div_ceil(64)])
    }
    /// An empty set for positions `0..n`.
    pub(crate) fn with_len(n: usize) -> Self {
        Self::new(n)
    }
    /// Adds position `i`.
    pub(crate) fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    /// Adds every position of `o`.
    pub(crate) fn union(&mut self, o: &LeafSet) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }
    /// Whether leaf position `i` is in the set.
    pub(crate) fn contains(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
}

/// The tree, flattened.
#[derive(Clone, Debug)]
pub(crate) struct Topo {
    /// Fabric node of each switch index.
    pub(crate) node: Vec<NodeId>,
    /// Node GUID of each switch.
    pub(crate) guid: Vec<Guid>,
    /// OpenSM rank (`u32::MAX` for switch slots ftree dropped).
    pub(crate) rank: Vec<u32>,
    /// Ports towards lower ranks' parents (up), one entry per port, in group order.
    pub(crate) up: Vec<Vec<Hop>>,
    /// Ports towards switches of a higher rank (down), one entry per port.
    pub(crate) down: Vec<Vec<Hop>>,
    /// Compute nodes per switch, in ftree's routing order (leaves only).
    pub(crate) cns: Vec<Vec<ComputeNode>>,
    /// Leaves in tuple order.
    pub(crate) leaves: Vec<u32>,
    /// Position of each switch in `leaves`, or [`NONE`].
    pub(crate) leaf_pos: Vec<u32>,
    /// Leaves below (or equal to) each switch.
    pub(crate) below: Vec<LeafSet>,
    /// Switch index of each fabric node, or [`NONE`].
    pub(crate) by_node: Vec<u32>,
    /// The leaf rank.
    pub(crate) leaf_rank: u32,
}

impl Topo {
    /// Builds the view of `fabric` with ftree's `options`.
    pub(crate) fn build(fabric: &Fabric, options: &EngineOptions) -> Result<Self, ReconfigError> {
        let tree = FatTree::build(fabric, options).map_err(ReconfigError::from_tree)?;
        Ok(Self::from_tree(fabric, &tree))
    }

    /// Flattens an existing view.
    pub(crate) fn from_tree(fabric: &Fabric, tree: &FatTree) -> Self {
        let n = tree.num_switch_slots();
        let mut t = Topo {
            node: vec![NodeId(u32::MAX); n],
            guid: vec![Guid(0); n],
            rank: vec![u32::MAX; n],
            up: vec![Vec::new(); n],
            down: vec![Vec::new(); n],
            cns: vec![Vec::new(); n],
            leaves: tree.leaves().to_vec(),
            leaf_pos: vec![NONE; n],
            below: Vec::new(),
            by_node: vec![NONE; fabric.num_nodes()],
            leaf_rank: tree.leaf_rank(),
        };
        for s in tree.switches() {
            let i = s as usize;
            t.node[i] = tree.node(s);
            t.guid[i] = tree.guid(s);
            t.rank[i] = tree.rank(s);
            t.by_node[tree.node(s).index()] = s;
            for g in tree.up_groups(s) {
                if let Remote::Switch(r) = g.remote {
                    t.up[i].extend(g.ports.iter().map(|&(port, rport)| Hop {
                        port,
                        remote: r,
                        rport,
                    }));
                }
            }
            for g in tree.down_groups(s) {
                if let Remote::Switch(r) = g.remote {
                    t.down[i].extend(g.ports.iter().map(|&(port, rport)| Hop {
                        port,
                        remote: r,
                        rport,
                    }));
                }
            }
            t.cns[i] = tree.compute_nodes(s);
        }
        for (p, &l) in t.leaves.iter().enumerate() {
            t.leaf_pos[l as usize] = p as u32;
        }
        // Leaves below: from the leaves upwards, rank by rank.
        let nl = t.leaves.len();
        let mut below = vec![LeafSet::new(nl); n];
        for (p, &l) in t.leaves.iter().enumerate() {
            below[l as usize].insert(p);
        }
        let mut order: Vec<u32> = tree.switches().collect();
        order.sort_by_key(|&s| std::cmp::Reverse(t.rank[s as usize]));
        for s in order {
            let mut acc = below[s as usize].clone();
            for h in &t.down[s as usize] {
                let b = below[h.remote as usize].clone();
                acc.union(&b);
            }
            below[s as usize] = acc;
        }
        t.below = below;
        t
    }

    /// Number of switch slots.
    pub(crate) fn len(&self) -> usize {
        self.node.len()
    }

    /// Whether the slot is a switch of the tree.
    pub(crate) fn is_switch(&self, s: u32) -> bool {
        self.rank[s as usize] != u32::MAX
    }

    /// Per switch: whether leaf position `lp` can be reached from it going
    /// up then down (it is below the switch or below one of its ancestors).
    pub(crate) fn reach(&self, lp: usize) -> Vec<bool> {
        let mut reach = vec![false; self.len()];
        for s in self.top_down() {
            let si = s as usize;
            reach[si] =
                self.below[si].contains(lp) || self.up[si].iter().any(|h| reach[h.remote as usize]);
        }
        reach
    }

    /// Switch slots of the tree, roots first (by rank, then index).
    pub(crate) fn top_down(&self) -> Vec<u32> {
        let mut v: Vec<u32> = (0..self.len() as u32)
            .filter(|&s| self.is_switch(s))
            .collect();
        v.sort_by_key(|&s| (self.rank[s as usize], s));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibcloud_fabric::generate::FatTreeParams;
    use ibcloud_fabric::lids::{assign_lids, LidOptions};

    #[test]
    fn k_ary_3_tree_below_sets() {
        let mut f = FatTreeParams::k_ary_n_tree(2, 3).build().unwrap();
        assign_lids(&mut f, &LidOptions::default()).unwrap();
        let t = Topo::build(&f, &EngineOptions::default()).unwrap();
        assert_eq!(t.leaves.len(), 4);
        assert_eq!(t.leaf_rank, 2);
        for s in t.top_down() {
            let n = (0..4).filter(|&p| t.below[s as usize].contains(p)).count();
            let expect = match t.rank[s as usize] {
                0 => 4,
                1 => 2,
                _ => 1,
            };
            assert_eq!(n, expect, "switch {s}");
            assert_eq!(
                t.up[s as usize].len(),
                if t.rank[s as usize] == 0 { 0 } else { 2 }
            );
        }
    }
}
