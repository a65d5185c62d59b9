//! The common change metrics of a reconfiguration, and the transition check.
//!
//! "Paths modified" has no unit in the papers (reference C §1.5); every
//! reconfiguration reports all three candidates:
//!
//! - **changed entries**: (switch, DLID) pairs whose output port differs —
//!   the primary metric, the one Paper IV's numbers fit;
//! - **changed destinations**: DLIDs changed on at least one switch;
//! - **changed paths**: (source CA, destination CA) pairs whose hop
//!   sequence through the tables differs.
//!
//! and the cost of installing the change: **changed blocks** (64-LID LFT
//! blocks that differ, i.e. the SMPs of OpenSM's differential update) and
//! the switches that receive at least one.
//!
//! [`updown_union`] checks the transition: while old and new tables coexist
//! a packet may meet either entry at every switch, so the union of both must
//! never turn from a down link to an up link (which would allow a credit
//! loop in a VL-free fat-tree).

use ibcloud_fabric::lft::{ForwardingTables, NO_PORT};
use ibcloud_fabric::{Fabric, Lid, NodeId, PortRef};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// What changed between two table sets.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeReport {
    /// (switch, DLID) entries whose port differs.
    pub changed_entries: u64,
    /// DLIDs changed on at least one switch.
    pub changed_destinations: u64,
    /// 64-LID LFT blocks that differ (SMPs of a differential update).
    pub changed_blocks: u64,
    /// Switches that receive at least one block.
    pub switches_touched: u64,
    /// (source CA, destination CA) pairs whose path differs; `None` when not
    /// computed.
    pub changed_paths: Option<u64>,
}

impl ChangeReport {
    /// Entries, destinations, blocks and switches of `new` against `old`
    /// (paths are left out; see [`changed_paths`]).
    pub fn between(old: &ForwardingTables, new: &ForwardingTables) -> Self {
        let n = old.num_nodes().max(new.num_nodes());
        let per: Vec<(u64, u64, Vec<u16>)> = (0..n)
            .into_par_iter()
            .map(|i| {
                let sw = NodeId(i as u32);
                let diff: Vec<u16> = new
                    .differing_entries(old, sw)
                    .map(|(l, _, _)| l.0)
                    .collect();
                let blocks = if diff.is_empty() {
                    0
                } else {
                    new.changed_blocks(old, sw).len() as u64
                };
                (diff.len() as u64, blocks, diff)
            })
            .collect();
        let mut dests = std::collections::BTreeSet::new();
        let mut r = ChangeReport::default();
        for (e, b, d) in per {
            r.changed_entries += e;
            r.changed_blocks += b;
            r.switches_touched += u64::from(b > 0);
            dests.extend(d);
        }
        r.changed_destinations = dests.len() as u64;
        r
    }

    /// Like [`ChangeReport::between`], counting only the destinations `lids`
    /// (e.g. the compute nodes live before and after an event, as the
    /// papers count "paths modified").
    pub fn between_for(old: &ForwardingTables, new: &ForwardingTables, lids: &[Lid]) -> Self {
        let n = old.num_nodes().max(new.num_nodes());
        let per: Vec<(u64, u64, Vec<u16>)> = (0..n)
            .into_par_iter()
            .map(|i| {
                let sw = NodeId(i as u32);
                let mut blocks = std::collections::BTreeSet::new();
                let mut diff = Vec::new();
                if old.table(sw).is_empty() && new.table(sw).is_empty() {
                    return (0, 0, diff);
                }
                for &l in lids {
                    if old.get(sw, l) != new.get(sw, l) {
                        diff.push(l.0);
                        blocks.insert(l.0 as usize / Lid::PER_LFT_BLOCK);
                    }
                }
                (diff.len() as u64, blocks.len() as u64, diff)
            })
            .collect();
        let mut dests = std::collections::BTreeSet::new();
        let mut r = ChangeReport::default();
        for (e, b, d) in per {
            r.changed_entries += e;
            r.changed_blocks += b;
            r.switches_touched += u64::from(b > 0);
            dests.extend(d);
        }
        r.changed_destinations = dests.len() as u64;
        r
    }

    /// Adds the changed-path count.
    pub fn with_paths(mut self, paths: u64) -> Self {
        self.changed_paths = Some(paths);
        self
    }
}

/// Next switch or CA reached from `sw` through `port` in `fabric`.
fn next(fabric: &Fabric, sw: NodeId, port: u8) -> Option<NodeId> {
    if port == NO_PORT || port == 0 {
        return None;
    }
    fabric.remote(PortRef::new(sw, port)).map(|r| r.node)
}

/// The live CA ports (linked, with a LID): (LID, CA node, its switch).
pub(crate) fn live_cas(fabric: &Fabric) -> Vec<(Lid, NodeId, NodeId)> {
    let mut out = Vec::new();
    for ca in fabric.cas() {
        for port in fabric.ports(ca).iter().skip(1) {
            if let (true, Some(r)) = (port.lid.is_set(), port.remote) {
                if fabric.node(r.node).is_switch() {
                    out.push((Lid(port.lid.0), ca, r.node));
                }
            }
        }
    }
    out
}

/// Number of (source CA, destination CA) pairs whose hop sequence differs
/// between `old` (walked in `old_fabric`) and `new` (walked in `new_fabric`).
/// Sources and destinations are the CAs live in both fabrics; node ids must
/// be the same in both (events only remove links).
pub fn changed_paths(
    old_fabric: &Fabric,
    old: &ForwardingTables,
    new_fabric: &Fabric,
    new: &ForwardingTables,
) -> u64 {
    let new_cas = live_cas(new_fabric);
    let live_old: std::collections::HashSet<(u16, u32)> = live_cas(old_fabric)
        .iter()
        .map(|(l, _, s)| (l.0, s.0))
        .collect();
    let cas: Vec<(Lid, NodeId, NodeId)> = new_cas
        .into_iter()
        .filter(|(l, _, s)| live_old.contains(&(l.0, s.0)))
        .collect();
    // Sources per switch.
    let n = old_fabric.num_nodes().max(new_fabric.num_nodes());
    let mut per_switch = vec![0u64; n];
    for (_, _, s) in &cas {
        per_switch[s.index()] += 1;
    }
    let sources: Vec<(NodeId, u64)> = per_switch
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(i, &c)| (NodeId(i as u32), c))
        .collect();
    cas.par_iter()
        .map(|&(lid, dst, dsw)| {
            // 0 = unknown, 1 = same, 2 = differs (memo per destination).
            let mut memo = vec![0u8; n];
            let mut changed = 0u64;
            for &(sw, count) in &sources {
                let own = u64::from(sw == dsw);
                if differs(old_fabric, old, new_fabric, new, sw, lid, dst, &mut memo) {
                    changed += count - own;
                }
            }
            changed
        })
        .sum()
}

#[allow(clippy::too_many_arguments)]
fn differs(
    old_fabric: &Fabric,
    old: &ForwardingTables,
    new_fabric: &Fabric,
    new: &ForwardingTables,
    start: NodeId,
    lid: Lid,
    dst: NodeId,
    memo: &mut [u8],
) -> bool {
    let mut trail = Vec::new();
    let mut sw = start;
    let verdict = loop {
        match memo[sw.index()] {
            1 => break false,
            2 => break true,
            _ => {}
        }
        if trail.len() > 64 {
            break true; // a loop in one of them: count as changed
        }
        trail.push(sw);
        let po = old.get(sw, lid).unwrap_or(NO_PORT);
        let pn = new.get(sw, lid).unwrap_or(NO_PORT);
        if po != pn {
            break true;
        }
        let (a, b) = (next(old_fabric, sw, po), next(new_fabric, sw, pn));
        if a != b {
            break true;
        }
        match a {
            None => break false, // both dead ends at the same place
            Some(x) if x == dst => break false,
            Some(x) if old_fabric.node(x).is_switch() => sw = x,
            Some(_) => break false,
        }
    };
    for s in trail {
        memo[s.index()] = if verdict { 2 } else { 1 };
    }
    verdict
}

/// A down→up turn in the union of two table sets: a packet for `lid` may go
/// down from `from` to `via` and then up from `via` to `to`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpDownViolation {
    /// Destination LID.
    pub lid: Lid,
    /// The switch that sends the packet down.
    pub from: NodeId,
    /// The switch that then sends it up.
    pub via: NodeId,
    /// Where it goes up to.
    pub to: NodeId,
}

/// Checks that the union of `old` and `new` never turns down→up for the
/// destinations `lids`; `rank` gives each node's OpenSM rank (roots 0,
/// `None` for nodes outside the tree; CAs count as below every switch).
/// Returns at most `max` violations, in (LID, switch) order.
pub fn updown_union(
    fabric_old: &Fabric,
    old: &ForwardingTables,
    fabric_new: &Fabric,
    new: &ForwardingTables,
    rank: &[Option<u32>],
    lids: &[Lid],
    max: usize,
) -> Vec<UpDownViolation> {
    let switches: Vec<NodeId> = fabric_new.switches().collect();
    let rk = |n: NodeId| -> Option<u32> { rank.get(n.index()).copied().flatten() };
    // Hops (old and new) of `sw` for `lid`: (next node, is it up?).
    let hops = |sw: NodeId, lid: Lid| -> [(Option<NodeId>, bool); 2] {
        let mut out = [(None, false); 2];
        for (i, (f, t)) in [(fabric_old, old), (fabric_new, new)]
            .into_iter()
            .enumerate()
        {
            let nx = t.get(sw, lid).and_then(|p| next(f, sw, p));
            let up = match (nx, rk(sw)) {
                (Some(x), Some(r)) if f.node(x).is_switch() => rk(x).is_some_and(|rx| rx < r),
                _ => false,
            };
            out[i] = (nx, up);
        }
        out
    };
    let mut found: Vec<UpDownViolation> = lids
        .par_iter()
        .flat_map_iter(|&lid| {
            let mut v = Vec::new();
            for &sw in &switches {
                let Some(r) = rk(sw) else { continue };
                for (nx, _) in hops(sw, lid) {
                    let Some(x) = nx else { continue };
                    if !fabric_new.node(x).is_switch() {
                        continue;
                    }
                    if rk(x).is_none_or(|rx| rx <= r) {
                        continue; // not a down move
                    }
                    for (to, up) in hops(x, lid) {
                        if up {
                            v.push(UpDownViolation {
                                lid,
                                from: sw,
                                via: x,
                                to: to.unwrap_or(x),
                            });
                        }
                    }
                }
            }
            v
        })
        .collect();
    found.sort_by_key(|v| (v.lid, v.from, v.via, v.to));
    found.dedup();
    found.truncate(max);
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibcloud_fabric::generate::preset;
    use ibcloud_routing::{registry, EngineOptions};

    #[test]
    fn identical_tables_change_nothing() {
        let f = preset("4-ary-2-full").unwrap().build().unwrap();
        let t = registry::engine("ftree", &EngineOptions::default())
            .unwrap()
            .route(&f)
            .unwrap()
            .tables;
        assert_eq!(ChangeReport::between(&t, &t), ChangeReport::default());
        assert_eq!(changed_paths(&f, &t, &f, &t), 0);
    }

    #[test]
    fn one_entry_changes_one_block_and_its_paths() {
        let f = preset("4-ary-2-full").unwrap().build().unwrap();
        let t = registry::engine("ftree", &EngineOptions::default())
            .unwrap()
            .route(&f)
            .unwrap()
            .tables;
        // Change a leaf's up entry towards a remote CA to another up port.
        let (lid, _, leaf) = live_cas(&f)[0];
        let other_leaf = live_cas(&f)
            .into_iter()
            .map(|(_, _, s)| s)
            .find(|&s| s != leaf)
            .unwrap();
        let cur = t.get(other_leaf, lid).unwrap();
        let alt = f
            .neighbors(other_leaf)
            .map(|(p, _)| p)
            .find(|&p| {
                p != cur
                    && f.remote(PortRef::new(other_leaf, p))
                        .is_some_and(|r| f.node(r.node).is_switch())
            })
            .unwrap();
        let mut t2 = t.clone();
        t2.set(other_leaf, lid, alt);
        let r = ChangeReport::between(&t, &t2);
        assert_eq!(
            (r.changed_entries, r.changed_blocks, r.switches_touched),
            (1, 1, 1)
        );
        assert_eq!(r.changed_destinations, 1);
        let cas_on_other = live_cas(&f).iter().filter(|c| c.2 == other_leaf).count() as u64;
        assert_eq!(changed_paths(&f, &t, &f, &t2), cas_on_other);
    }
}
