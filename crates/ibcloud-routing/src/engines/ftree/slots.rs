//! The order ftree routes each leaf's compute nodes in: one slot per node up
//! to `max_cn_per_leaf`, dummies (counters only) in the empty ones.
//!
//! Without a node order this is OpenSM's: port order, dummies last. With one
//! it is Paper III's NoFTree (reference C §2.3): the node at position `n` of
//! the order takes slot `n mod max_cn_per_leaf` on its leaf, so consecutive
//! nodes of the order go down through different upper switches; nodes not in
//! the order fill the free slots in port order. Two listed nodes of one leaf
//! that want the same slot are not specified by the paper: the later one
//! takes the next free slot cyclically.

use std::collections::HashMap;

use ibcloud_fabric::{Lid, PortNum};

use super::build::Tree;
use crate::engine::RoutingError;

/// A compute node to route from its leaf: LID and the leaf's port to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    pub(crate) lid: u16,
    pub(crate) port: PortNum,
    /// What routing it adds to the port counters (1 in OpenSM).
    pub(crate) weight: u64,
}

/// Per leaf (in `tree.leaves` order), `max_cn_per_leaf` slots.
pub(crate) fn leaf_slots(
    tree: &Tree,
    order: Option<&[Lid]>,
) -> Result<Vec<Vec<Option<Slot>>>, RoutingError> {
    let width = tree.max_cn_per_leaf as usize;
    let on_leaf: Vec<Vec<Slot>> = tree.leaves.iter().map(|&l| port_order(tree, l)).collect();
    let Some(order) = order else {
        return Ok(on_leaf
            .into_iter()
            .map(|cns| pad(cns.into_iter().map(Some).collect(), width))
            .collect());
    };
    let mut where_: HashMap<u16, (usize, Slot)> = HashMap::new();
    for (li, cns) in on_leaf.iter().enumerate() {
        for &c in cns {
            where_.insert(c.lid, (li, c));
        }
    }
    let mut slots: Vec<Vec<Option<Slot>>> = vec![vec![None; width]; on_leaf.len()];
    let mut placed: HashMap<u16, usize> = HashMap::new();
    for (n, lid) in order.iter().enumerate() {
        let Some(&(li, slot)) = where_.get(&lid.0) else {
            return Err(RoutingError::BadOptions(format!(
                "node order entry {} (LID {}) is not a compute node of this fat-tree",
                n + 1,
                lid.0
            )));
        };
        if let Some(first) = placed.insert(lid.0, n) {
            return Err(RoutingError::BadOptions(format!(
                "node order lists LID {} twice (entries {} and {})",
                lid.0,
                first + 1,
                n + 1
            )));
        }
        let row = &mut slots[li];
        let want = n % width;
        let free = (0..width)
            .map(|k| (want + k) % width)
            .find(|&s| row[s].is_none())
            .expect("a leaf has as many slots as compute nodes at least");
        row[free] = Some(slot);
    }
    for (li, cns) in on_leaf.iter().enumerate() {
        let row = &mut slots[li];
        for c in cns.iter().filter(|c| !placed.contains_key(&c.lid)) {
            let free = row.iter().position(Option::is_none).expect("enough slots");
            row[free] = Some(*c);
        }
    }
    Ok(slots)
}

/// A leaf's compute nodes in down-group (port) order, as OpenSM routes them.
fn port_order(tree: &Tree, leaf: u32) -> Vec<Slot> {
    let mut out = Vec::new();
    for &g in &tree.sw[leaf as usize].down {
        let g = &tree.groups[g as usize];
        if g.remote_is_sw || tree.ca[g.remote as usize].cn_num == 0 {
            continue;
        }
        if !tree
            .ca_port(g.remote, g.remote_lid)
            .is_some_and(|p| p.is_cn)
        {
            continue;
        }
        out.push(Slot {
            lid: g.remote_lid,
            port: tree.ports[g.first_port as usize].port,
            weight: 1,
        });
    }
    out
}

fn pad(mut row: Vec<Option<Slot>>, width: usize) -> Vec<Option<Slot>> {
    row.resize(width.max(row.len()), None);
    row
}
