//! A second update phase after a fault: entries for the switches that the
//! path-keeping methods leave blank.
//!
//! After a link fails, SlimUpdate gives no entry for a compute node to a
//! switch that has no up/down path to that node's leaf (e.g. the middle
//! switch that lost its link to the leaf, the roots above it and the middle
//! switches cabled to those roots), so that no old down-going entry meets a
//! new up-going one while the update is applied. No compute-node traffic
//! uses those entries in the new tables, but the switches' own packets do:
//! answers to LID-routed SMPs and traps to the SM are dropped there.
//!
//! [`complete_blank_entries`] fills them — per CA LID, a shortest path from
//! each blank switch to a switch whose entry leads to the LID (Dijkstra over
//! all switch links, unit weights, labelled with the hops the existing
//! entries need) — and changes nothing else. It is safe to send **once the
//! first phase is installed and every CA pair is reachable** (check that
//! first): then no compute-node path enters a blank switch (it would be
//! dropped there), the new entries add no dependency to any compute-node
//! path, and what uses them is the switches' own management traffic (SMPs
//! on VL15, which has no flow control). Sent together with the first phase,
//! old entries could steer compute-node traffic into them.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use ibcloud_fabric::lft::{ForwardingTables, NO_PORT};
use ibcloud_fabric::{Fabric, Lid, NodeId, PortRef};

use crate::error::ReconfigError;

/// Fills the entries for CA LIDs that switches with a physical path to the
/// LID do not have; returns the new tables and how many entries were added.
pub fn complete_blank_entries(
    fabric: &Fabric,
    tables: &ForwardingTables,
) -> Result<(ForwardingTables, u64), ReconfigError> {
    if tables.num_nodes() != fabric.num_nodes() {
        return Err(ReconfigError::WrongTables {
            tables: tables.num_nodes(),
            fabric: fabric.num_nodes(),
        });
    }
    let owners = fabric
        .lid_table()
        .map_err(|e| ReconfigError::BadOptions(e.to_string()))?;
    let n = fabric.num_nodes();
    let switches: Vec<NodeId> = fabric.switches().collect();
    let mut out = tables.clone();
    let mut added = 0u64;
    for (lid, owner) in owners.iter().enumerate() {
        let Some(owner) = owner else { continue };
        if fabric.node(owner.node).is_switch() {
            continue;
        }
        let lid = Lid(lid as u16);
        let Some(leaf) = fabric.remote(*owner).map(|r| r.node) else {
            continue;
        };
        if !fabric.node(leaf).is_switch() {
            continue;
        }
        let entry = |s: NodeId| tables.get(s, lid).unwrap_or(NO_PORT);
        // Hops to the LID along the existing entries: reverse edges from the
        // delivering leaf.
        let mut into: Vec<Vec<NodeId>> = vec![Vec::new(); n];
        for &s in &switches {
            let p = entry(s);
            if p == NO_PORT || s == leaf {
                continue;
            }
            if let Some(r) = fabric.remote(PortRef::new(s, p)) {
                if fabric.node(r.node).is_switch() {
                    into[r.node.index()].push(s);
                }
            }
        }
        let mut label = vec![u32::MAX; n];
        label[leaf.index()] = 0;
        let mut queue = VecDeque::from([leaf]);
        while let Some(s) = queue.pop_front() {
            for &u in &into[s.index()] {
                if label[u.index()] == u32::MAX {
                    label[u.index()] = label[s.index()] + 1;
                    queue.push_back(u);
                }
            }
        }
        let blank: Vec<NodeId> = switches
            .iter()
            .copied()
            .filter(|&s| entry(s) == NO_PORT && s != leaf)
            .collect();
        if blank.is_empty() {
            continue;
        }
        // Dijkstra from the switches whose entries deliver, into blank ones.
        let routed: Vec<bool> = label.iter().map(|&l| l != u32::MAX).collect();
        let mut heap: BinaryHeap<Reverse<(u32, u32)>> = switches
            .iter()
            .filter(|s| routed[s.index()])
            .map(|s| Reverse((label[s.index()], s.0)))
            .collect();
        while let Some(Reverse((d, s))) = heap.pop() {
            let s = NodeId(s);
            if d > label[s.index()] {
                continue;
            }
            for (_, r) in fabric.neighbors(s) {
                let x = r.node;
                if fabric.node(x).is_switch()
                    && !routed[x.index()]
                    && entry(x) == NO_PORT
                    && d + 1 < label[x.index()]
                {
                    label[x.index()] = d + 1;
                    heap.push(Reverse((d + 1, x.0)));
                }
            }
        }
        for s in blank {
            let l = label[s.index()];
            if l == u32::MAX || l == 0 {
                continue;
            }
            if let Some((p, _)) = fabric
                .neighbors(s)
                .find(|(_, r)| fabric.node(r.node).is_switch() && label[r.node.index()] == l - 1)
            {
                out.set(s, lid, p);
                added += 1;
            }
        }
    }
    Ok((out, added))
}
