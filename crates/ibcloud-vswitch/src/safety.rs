//! Safety of a migration: after it, every VM LID (or any LID list) must be
//! reachable from every switch without loops; and — beyond the papers, who
//! leave it as future work (reference B §2.6) — whether the *transition* can
//! deadlock while some switches hold old and others new entries.
//!
//! The transition check builds the channel dependency graph over the union
//! of old and new routes: a channel is a directed link between two switches
//! (vSwitches included), and for every destination LID, a switch whose old
//! or new entry sends it on channel c1 into a switch whose old or new entry
//! sends it on c2 makes c2 depend on c1 — except at a vSwitch, which is an
//! HCA: a packet reaching it from the leaf goes to a VF or is dropped, never
//! back up (so old and new vSwitch entries cannot bounce a packet between
//! leaf and hypervisor). A cycle means the transition can
//! deadlock, and the migration should use the partially static scheme: its
//! invalidation phase only removes routes (old ∪ dropped = old) and its
//! update phase only adds the new ones (dropped ∪ new = new), so each phase
//! is as deadlock-free as the old and the new tables themselves.

use std::collections::HashMap;

use ibcloud_fabric::lft::{ForwardingTables, NO_PORT};
use ibcloud_fabric::{Fabric, Lid, NodeId, PortRef};
use serde::Serialize;

use crate::model::VirtualFabric;
use crate::reconfig::Plan;

/// Outcome of walking the tables towards some LIDs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Reachability {
    /// (switch, LID) pairs checked.
    pub checked: u64,
    /// Pairs that loop.
    pub loops: u64,
    /// Pairs that end without reaching the LID's port.
    pub dead_ends: u64,
    /// The first problems, described.
    pub problems: Vec<String>,
}

impl Reachability {
    /// No loop and no dead end.
    pub fn ok(&self) -> bool {
        self.loops == 0 && self.dead_ends == 0
    }
}

/// Walks from every switch of `fabric` to each of `lids` (memoised per LID).
pub fn reachability(fabric: &Fabric, tables: &ForwardingTables, lids: &[Lid]) -> Reachability {
    let owner: HashMap<u16, PortRef> = fabric
        .lid_ports()
        .map(|(p, port)| (port.lid.0, p))
        .collect();
    let switches: Vec<NodeId> = fabric.switches().collect();
    let mut out = Reachability::default();
    // 0 unknown, 1 in progress, 2 arrives, 3 fails.
    let mut state = vec![0u8; fabric.num_nodes()];
    for &lid in lids {
        state.iter_mut().for_each(|s| *s = 0);
        let Some(&target) = owner.get(&lid.0) else {
            out.dead_ends += switches.len() as u64;
            out.problems
                .push(format!("LID {} belongs to no port", lid.0));
            continue;
        };
        for &start in &switches {
            out.checked += 1;
            let mut path = Vec::new();
            let mut at = start;
            let verdict = loop {
                match state[at.index()] {
                    2 => break 2,
                    3 => break 3,
                    1 => {
                        out.loops += 1;
                        if out.problems.len() < 10 {
                            out.problems.push(format!(
                                "LID {}: forwarding loop through '{}'",
                                lid.0,
                                fabric.node(at).description
                            ));
                        }
                        break 3;
                    }
                    _ => {}
                }
                state[at.index()] = 1;
                path.push(at);
                if target.node == at {
                    break 2;
                }
                let p = tables.get(at, lid).unwrap_or(NO_PORT);
                let next = (p != NO_PORT && p != 0)
                    .then(|| fabric.remote(PortRef::new(at, p)))
                    .flatten();
                match next {
                    Some(r) if r == target => break 2,
                    Some(r) if fabric.node(r.node).is_switch() => at = r.node,
                    _ => {
                        out.dead_ends += 1;
                        if out.problems.len() < 10 {
                            out.problems.push(format!(
                                "LID {}: dead end at '{}' (port {p})",
                                lid.0,
                                fabric.node(at).description
                            ));
                        }
                        break 3;
                    }
                }
            };
            for n in path {
                state[n.index()] = verdict;
            }
        }
    }
    out
}

/// Whether a migration's transition can deadlock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TransitionReport {
    /// No cycle in the dependency graph of old ∪ new routes.
    pub deadlock_free: bool,
    /// Channels of one cycle, described (`'switch' port N`).
    pub cycle: Vec<String>,
    /// Channels and dependencies of the union graph.
    pub channels: usize,
    /// Distinct dependencies.
    pub dependencies: usize,
    /// The migration should use the partially static scheme.
    pub needs_partially_static: bool,
}

/// Checks the transition from the current tables to those after `plan`.
pub fn transition(vf: &VirtualFabric, plan: &Plan) -> TransitionReport {
    let fabric = vf.fabric();
    let old = vf.tables();
    let mut new: HashMap<(NodeId, u16), u8> = HashMap::new();
    for &(sw, lid, p) in &plan.writes {
        new.insert((sw, lid.0), p);
    }
    let mut lids: Vec<u16> = fabric.lid_ports().map(|(_, p)| p.lid.0).collect();
    lids.extend(plan.swapped_lid.map(|l| l.0));
    lids.push(plan.vm_lid.0);
    lids.sort_unstable();
    lids.dedup();
    let switches: Vec<NodeId> = fabric.switches().collect();
    // A vSwitch is its hypervisor's HCA: what reaches it from the leaf is
    // delivered to a VF or dropped, never sent back up.
    let mut is_vswitch = vec![false; fabric.num_nodes()];
    for h in vf.hypervisors() {
        is_vswitch[h.vswitch.index()] = true;
    }
    // Channel of (switch, port) when it leads to a switch.
    let chan = |sw: NodeId, p: u8| -> Option<(u32, NodeId)> {
        if p == NO_PORT || p == 0 {
            return None;
        }
        let r = fabric.remote(PortRef::new(sw, p))?;
        fabric.node(r.node).is_switch().then(|| {
            (
                fabric.port_index(PortRef::new(sw, p)).unwrap_or(0) as u32,
                r.node,
            )
        })
    };
    let entries = |sw: NodeId, lid: u16| -> [u8; 2] {
        let o = old.get(sw, Lid(lid)).unwrap_or(NO_PORT);
        let n = new.get(&(sw, lid)).copied().unwrap_or(o);
        [o, n]
    };
    let mut edges: Vec<u64> = Vec::new();
    for &lid in &lids {
        for &u in &switches {
            let eu = entries(u, lid);
            for (i, &p) in eu.iter().enumerate() {
                if i == 1 && p == eu[0] {
                    continue;
                }
                let Some((c1, v)) = chan(u, p) else { continue };
                if is_vswitch[v.index()] {
                    continue;
                }
                let ev = entries(v, lid);
                for (j, &q) in ev.iter().enumerate() {
                    if j == 1 && q == ev[0] {
                        continue;
                    }
                    if let Some((c2, _)) = chan(v, q) {
                        edges.push((c1 as u64) << 32 | c2 as u64);
                    }
                }
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    let n = fabric.num_port_slots();
    let mut off = vec![0usize; n + 1];
    for &e in &edges {
        off[(e >> 32) as usize + 1] += 1;
    }
    for i in 0..n {
        off[i + 1] += off[i];
    }
    let adj: Vec<u32> = edges.iter().map(|&e| e as u32).collect();
    let channels = {
        let mut c: Vec<u32> = edges
            .iter()
            .flat_map(|&e| [(e >> 32) as u32, e as u32])
            .collect();
        c.sort_unstable();
        c.dedup();
        c.len()
    };
    // Iterative DFS: 0 white, 1 grey, 2 black.
    let mut color = vec![0u8; n];
    let mut cycle = Vec::new();
    'outer: for s in 0..n {
        if color[s] != 0 || off[s] == off[s + 1] {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(s, off[s])];
        color[s] = 1;
        while let Some(&mut (v, ref mut k)) = stack.last_mut() {
            if *k < off[v + 1] {
                let w = adj[*k] as usize;
                *k += 1;
                if color[w] == 1 {
                    let from = stack.iter().position(|&(x, _)| x == w).unwrap_or(0);
                    cycle = stack[from..].iter().map(|&(x, _)| x).collect();
                    break 'outer;
                }
                if color[w] == 0 {
                    color[w] = 1;
                    stack.push((w, off[w]));
                }
            } else {
                color[v] = 2;
                stack.pop();
            }
        }
    }
    let label = |slot: usize| -> String {
        for (id, node) in fabric.iter_nodes() {
            for p in 0..=node.num_ports {
                if fabric.port_index(PortRef::new(id, p)) == Some(slot) {
                    return fabric.port_label(PortRef::new(id, p));
                }
            }
        }
        format!("port slot {slot}")
    };
    let deadlock_free = cycle.is_empty();
    TransitionReport {
        deadlock_free,
        cycle: cycle.into_iter().map(label).collect(),
        channels,
        dependencies: edges.len(),
        needs_partially_static: !deadlock_free,
    }
}
