//! The partition validator (pFTree-Ext's VALIDATEPOLICIES, E §2.3.7): which
//! directed switch-to-switch links each partition's intra-partition routes
//! use, which of them it shares with other partitions, on which VLs, and
//! whether its isolation policy holds.
//!
//! Only routes between members that may talk (at least one full member) are
//! followed; routes between partitions and the default partition's routes
//! carry management traffic only and are left out. Links into and out of CAs
//! are per node and never shared between partitions unless a port is in two
//! of them, so only switch-to-switch links are reported.
//!
//! - a `phy` partition must share no link;
//! - a `vlane` partition must not share a link with a partition on its VL;
//! - `def` partitions are reported, never violated.
//!
//! Violations fail the routing in `strict` mode and are warnings in
//! `best-effort` mode; the report lists them either way.

use std::collections::HashMap;

use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::partitions::{GlobalPolicy, Isolation, Partitions};
use ibcloud_fabric::{Fabric, Guid, PortNum, PortRef};
use rayon::prelude::*;
use serde::Serialize;

use super::{Net, TO_ENDPOINT, UNCABLED};

/// Which partitions' routes use each directed switch-to-switch link.
#[derive(Clone, Debug)]
pub struct LinkUsage {
    /// Number of partitions.
    pub num_partitions: usize,
    /// Per channel (switch, out port): (switch node GUID, port, next switch node GUID).
    pub channels: Vec<(Guid, PortNum, Guid)>,
    /// Per channel and partition: the partition's destinations whose routes
    /// from the partition's sources cross it; `flows[c * num_partitions + p]`.
    pub flows: Vec<u32>,
    /// Walks that did not arrive (loops, holes), at most one per source switch and destination.
    pub broken: u64,
}

impl LinkUsage {
    /// Destinations of partition `p` routed over channel `c`.
    pub fn get(&self, c: usize, p: usize) -> u32 {
        self.flows[c * self.num_partitions + p]
    }

    /// Partitions using channel `c`.
    pub fn users(&self, c: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.num_partitions).filter(move |&p| self.get(c, p) > 0)
    }
}

/// Follows every intra-partition route of `partitions` through `tables`.
pub fn link_usage(
    fabric: &Fabric,
    tables: &ForwardingTables,
    partitions: &Partitions,
) -> LinkUsage {
    let net = Net::new(fabric, tables, false);
    let np = partitions.partitions.len();
    let mut channels = Vec::with_capacity(net.next.len());
    for (s, &node) in net.switches.iter().enumerate() {
        let base = net.chan_base[s] as usize;
        let end = net.chan_base[s + 1] as usize;
        for c in base..end {
            let to = net.next[c];
            let to_guid = if to == UNCABLED || to == TO_ENDPOINT {
                Guid(0)
            } else {
                fabric.node(net.switches[to as usize]).guid
            };
            channels.push((fabric.node(node).guid, (c - base) as PortNum, to_guid));
        }
    }
    let at: HashMap<PortRef, u32> = net.sources.iter().map(|s| (s.port, s.switch)).collect();
    let limit = net.switches.len() + 1;
    // Per destination, the switches already known to reach it: a walk
    // stops there, so each destination costs O(switches), not O(sources).
    // Sources are taken per switch (a partition's members on one leaf share
    // their walk), destinations in LID order (neighbouring LIDs share the
    // tables' cache lines).
    let mut any_src: Vec<Vec<u32>> = Vec::with_capacity(np);
    let mut full_src: Vec<Vec<u32>> = Vec::with_capacity(np);
    let mut dests: Vec<(u16, u32, usize, bool)> = Vec::new();
    for (pi, p) in partitions.partitions.iter().enumerate() {
        let mut any: Vec<u32> = Vec::new();
        let mut full: Vec<u32> = Vec::new();
        for &(r, _, l, m) in &p.members {
            let Some(&sw) = at.get(&r) else { continue };
            any.push(sw);
            if m.is_full() {
                full.push(sw);
            }
            dests.push((l.0, sw, pi, m.is_full()));
        }
        any.sort_unstable();
        any.dedup();
        full.sort_unstable();
        full.dedup();
        any_src.push(any);
        full_src.push(full);
    }
    dests.sort_unstable_by_key(|d| (d.0, d.2));
    // Destinations in a few contiguous chunks over the threads; counts are
    // sums, so the result does not depend on the number of threads.
    let nch = channels.len();
    let chunk = dests.len() / (rayon::current_num_threads() * 2).max(1) + 1;
    let parts: Vec<(Vec<u32>, u64)> = dests
        .par_chunks(chunk)
        .map(|block| {
            let mut flows = vec![0u32; nch * np.max(1)];
            let mut broken = 0u64;
            let mut seen = vec![0u32; net.switches.len()];
            let mut stamp = 0u32;
            for &(dlid, dsw, pi, dfull) in block {
                // A limited destination hears only full members. Members on
                // the destination's own switch need no link (marked seen).
                let sources = if dfull { &any_src[pi] } else { &full_src[pi] };
                stamp += 1;
                seen[dsw as usize] = stamp;
                for &ssw in sources {
                    let mut sw = ssw;
                    let mut steps = 0;
                    while seen[sw as usize] != stamp {
                        seen[sw as usize] = stamp;
                        let port = net.lft[sw as usize]
                            .get(dlid as usize)
                            .copied()
                            .unwrap_or(255);
                        let c = net.chan_base[sw as usize] as usize + port as usize;
                        if port == 255 || c >= net.chan_base[sw as usize + 1] as usize {
                            broken += 1;
                            break;
                        }
                        let next = net.next[c];
                        if next == UNCABLED || next == TO_ENDPOINT || steps > limit {
                            broken += 1;
                            break;
                        }
                        flows[c * np + pi] += 1;
                        sw = next;
                        steps += 1;
                    }
                }
            }
            (flows, broken)
        })
        .collect();
    let mut flows = vec![0u32; nch * np.max(1)];
    let mut broken = 0u64;
    for (f, b) in parts {
        for (x, y) in flows.iter_mut().zip(f) {
            *x += y;
        }
        broken += b;
    }
    LinkUsage {
        num_partitions: np,
        channels,
        flows,
        broken,
    }
}

/// One link a partition shares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SharedLink {
    /// Sending switch (node GUID).
    pub from: Guid,
    /// Its port.
    pub port: PortNum,
    /// Receiving switch.
    pub to: Guid,
    /// The other partitions on it (names).
    pub with: Vec<String>,
    /// Whether one of them is on the same VL.
    pub same_vl: bool,
}

/// The validator's finding for one partition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PartitionCheck {
    /// Name.
    pub name: String,
    /// 15-bit P_Key.
    pub pkey: u16,
    /// Policy.
    pub isolation: String,
    /// Member ports.
    pub members: usize,
    /// Its VL (the VL of its SL).
    pub vl: u8,
    /// Switch-to-switch links its routes use.
    pub links: usize,
    /// Links it shares.
    pub shared: Vec<SharedLink>,
    /// Whether its policy holds.
    pub ok: bool,
}

/// The whole validation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PartitionReport {
    /// Per partition.
    pub partitions: Vec<PartitionCheck>,
    /// Global mode used.
    pub global: String,
    /// Policy violations in words.
    pub violations: Vec<String>,
    /// Pairs whose route did not arrive.
    pub broken_pairs: u64,
}

impl PartitionReport {
    /// Whether every policy holds.
    pub fn ok(&self) -> bool {
        self.violations.is_empty()
    }

    /// Whether routing must fail: violations under `strict`.
    pub fn fails(&self) -> bool {
        !self.ok() && self.global == GlobalPolicy::Strict.keyword()
    }
}

/// Validates `partitions` on `tables`; `vls[p]` is partition p's VL.
pub fn validate_partitions(
    fabric: &Fabric,
    tables: &ForwardingTables,
    partitions: &Partitions,
    vls: &[u8],
) -> PartitionReport {
    let usage = link_usage(fabric, tables, partitions);
    check(&usage, partitions, vls)
}

/// The policy check on a computed [`LinkUsage`].
pub fn check(usage: &LinkUsage, partitions: &Partitions, vls: &[u8]) -> PartitionReport {
    let np = partitions.partitions.len();
    let vl = |p: usize| vls.get(p).copied().unwrap_or(0);
    let mut out = Vec::with_capacity(np);
    let mut violations = Vec::new();
    for (pi, p) in partitions.partitions.iter().enumerate() {
        let mut links = 0;
        let mut shared = Vec::new();
        for c in 0..usage.channels.len() {
            if usage.get(c, pi) == 0 {
                continue;
            }
            links += 1;
            let others: Vec<usize> = usage.users(c).filter(|&q| q != pi).collect();
            if others.is_empty() {
                continue;
            }
            let (from, port, to) = usage.channels[c];
            shared.push(SharedLink {
                from,
                port,
                to,
                with: others
                    .iter()
                    .map(|&q| partitions.partitions[q].name.clone())
                    .collect(),
                same_vl: others.iter().any(|&q| vl(q) == vl(pi)),
            });
        }
        let ok = match p.isolation {
            Isolation::Phy => shared.is_empty(),
            Isolation::Vlane => !shared.iter().any(|s| s.same_vl),
            Isolation::Def => true,
        };
        if !ok {
            let n = match p.isolation {
                Isolation::Phy => shared.len(),
                _ => shared.iter().filter(|s| s.same_vl).count(),
            };
            let first = shared
                .iter()
                .find(|s| p.isolation == Isolation::Phy || s.same_vl)
                .map(|s| {
                    format!(
                        "{}/{} -> {} with {}",
                        s.from,
                        s.port,
                        s.to,
                        s.with.join(",")
                    )
                })
                .unwrap_or_default();
            violations.push(format!(
                "partition '{}' (0x{:04x}, {}) shares {n} link(s){} (first: {first})",
                p.name,
                p.pkey,
                p.isolation,
                if p.isolation == Isolation::Vlane {
                    format!(" on its VL {}", vl(pi))
                } else {
                    String::new()
                }
            ));
        }
        out.push(PartitionCheck {
            name: p.name.clone(),
            pkey: p.pkey,
            isolation: p.isolation.to_string(),
            members: p.members.len(),
            vl: vl(pi),
            links,
            shared,
            ok,
        });
    }
    PartitionReport {
        partitions: out,
        global: partitions.global.keyword().to_owned(),
        violations,
        broken_pairs: usage.broken,
    }
}
