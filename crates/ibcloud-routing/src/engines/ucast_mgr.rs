//! OpenSM's unicast manager (`osm_ucast_mgr.c`, `osm_switch.c`), shared by the
//! `minhop` and `updn` engines: the order in which destinations are routed,
//! the min-hop candidate ports of every switch towards every other switch,
//! and the per-switch port balancing that turns them into forwarding tables.
//!
//! What OpenSM 3.3.23 does, and what this module reproduces entry for entry
//! (default options: no guid_routing_order/port_prof_ignore/hop_weights/
//! port_search_ordering files, `port_profile_switch_nodes`, `scatter_ports`
//! and `port_shifting` off, existing LFTs ignored on the first sweep):
//!
//! * **Hop matrices.** Per switch and destination *switch*, the hop count
//!   through each switch-to-switch port. CA LIDs use the hops to the switch
//!   the CA is cabled to. The engines fill these ([`HopSource`]).
//! * **Destination order.** Switches in OpenSM's switch table order (node GUID
//!   in network byte order, i.e. byte-swapped on x86), stably sorted by the
//!   number of CA/router links, most first; for each, its CA/router ports in
//!   port order. Then every other port with a LID (switch port 0s, CAs not
//!   cabled to a switch) in port-GUID table order (port GUID byte-swapped).
//!   With LMC > 0 the whole list is walked once per LID offset.
//! * **Port choice** (`osm_switch_recommend_path`) per switch and LID: the
//!   switch's own LID goes to port 0, a CA cabled to it to that port; otherwise
//!   among the ports with the least hops, the one with the fewest CA LIDs
//!   routed through it so far on this switch (routes to switch LIDs are not
//!   counted), the lowest port number on a tie. Counters start at zero for
//!   every switch. For the second and later LIDs of an LMC range the search
//!   starts after the port chosen for the previous LID, and ports leading to a
//!   system / node the port's earlier LIDs do not use yet are preferred.

use crate::engine::RoutingError;
use crate::graph::SwitchGraph;
use ibcloud_fabric::lft::{ForwardingTables, NO_PORT};
use ibcloud_fabric::{Fabric, Guid, Lid, NodeId, PortRef};
use std::collections::HashMap;

/// "No path" in hop tables and LFTs (OpenSM's `OSM_NO_PATH`).
pub(crate) const NO_PATH: u8 = 255;

/// A bit per switch-to-switch port of one switch, indexed by the port's
/// position in [`SwitchGraph::ports`] (ascending port order).
pub(crate) type PortMask<const W: usize> = [u64; W];

/// Where a destination LID range lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DestKind {
    /// A switch's port 0 (switch index).
    Switch(u32),
    /// A CA or router port cabled to switch `sw` on its port `port`.
    Ca {
        /// Switch index.
        sw: u32,
        /// Port on that switch.
        port: u8,
    },
    /// A CA or router port not cabled to a switch: no route.
    Unattached,
}

/// One entry of OpenSM's port order list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dest {
    /// Base LID.
    pub lid: u16,
    /// LMC of the port.
    pub lmc: u8,
    /// Where it attaches.
    pub kind: DestKind,
}

/// GUID as OpenSM's tables order it: the network-byte-order value read as a
/// little-endian integer.
fn table_key(g: Guid) -> u64 {
    g.0.swap_bytes()
}

/// Switch indices in OpenSM's switch table order (`sw_guid_tbl`).
pub(crate) fn switch_table_order(fabric: &Fabric, graph: &SwitchGraph) -> Vec<u32> {
    let mut order: Vec<u32> = (0..graph.len() as u32).collect();
    order.sort_by_key(|&s| table_key(fabric.node(graph.switches[s as usize]).guid));
    order
}

/// OpenSM's port order list (`sort_ports_by_switch_load` + `add_port_to_order_list`).
///
/// Fails if a CA or router port cabled to a switch has no LID, or if LIDs
/// collide or leave the unicast range (no SM would hand such LIDs out).
pub(crate) fn port_order(
    engine: &'static str,
    fabric: &Fabric,
    graph: &SwitchGraph,
) -> Result<Vec<Dest>, RoutingError> {
    fabric.lid_table().map_err(|e| RoutingError::Unsupported {
        engine,
        reason: format!("the fabric's LIDs are not usable: {e}"),
    })?;
    let mut target_of: HashMap<PortRef, usize> = HashMap::with_capacity(graph.targets.len());
    for (i, t) in graph.targets.iter().enumerate() {
        target_of.insert(t.owner, i);
    }
    let dest = |i: usize| {
        let t = &graph.targets[i];
        let kind = if fabric.node(t.owner.node).is_switch() {
            DestKind::Switch(graph.index[t.owner.node.index()])
        } else {
            match t.switch {
                Some(sw) => DestKind::Ca { sw, port: t.port },
                None => DestKind::Unattached,
            }
        };
        Dest {
            lid: t.lid.0,
            lmc: t.lmc,
            kind,
        }
    };
    // Switches by endport links, most first; stable, so ties keep table order
    // (glibc's qsort is a merge sort for arrays this small).
    let mut switches = switch_table_order(fabric, graph);
    let endports = |s: u32| {
        fabric
            .neighbors(graph.switches[s as usize])
            .filter(|(_, r)| !fabric.node(r.node).is_switch())
            .count()
    };
    let load: Vec<usize> = (0..graph.len() as u32).map(endports).collect();
    switches.sort_by_key(|&s| std::cmp::Reverse(load[s as usize]));

    let mut taken = vec![false; graph.targets.len()];
    let mut order = Vec::with_capacity(graph.targets.len());
    for &s in &switches {
        for (_, r) in fabric.neighbors(graph.switches[s as usize]) {
            if fabric.node(r.node).is_switch() {
                continue;
            }
            match target_of.get(&r) {
                Some(&i) if !taken[i] => {
                    taken[i] = true;
                    order.push(dest(i));
                }
                Some(_) => {}
                None => return Err(RoutingError::MissingLid(fabric.port_label(r))),
            }
        }
    }
    let mut rest: Vec<usize> = (0..graph.targets.len()).filter(|&i| !taken[i]).collect();
    rest.sort_by_key(|&i| {
        let owner = graph.targets[i].owner;
        table_key(fabric.port(owner).map(|p| p.guid).unwrap_or_default())
    });
    order.extend(rest.into_iter().map(dest));
    Ok(order)
}

/// Supplies one switch's least hops and min-hop ports towards every switch.
pub(crate) trait HopSource<const W: usize>: Sync {
    /// Fills, for switch `s` and every destination switch `d`, `least[d]` (hops
    /// in switch-to-switch links, [`NO_PATH`] if unreachable) and `masks[d]`
    /// (the ports of `s` through which `d` is `least[d]` hops away).
    fn fill(&self, s: usize, least: &mut [u8], masks: &mut [PortMask<W>]);
}

/// Mask words needed for the switch-to-switch ports of every switch, if at most
/// 4 (a switch has at most 254 external ports).
pub(crate) fn mask_words(graph: &SwitchGraph) -> usize {
    graph
        .ports
        .iter()
        .map(|p| p.len().div_ceil(64))
        .max()
        .unwrap_or(0)
        .max(1)
}

/// Routes every switch's LFT from its hop tables, as `ucast_mgr_build_lfts`.
pub(crate) fn build_lfts<const W: usize>(
    fabric: &Fabric,
    graph: &SwitchGraph,
    order: &[Dest],
    hops: &dyn HopSource<W>,
) -> ForwardingTables {
    let mut tables = ForwardingTables::new(fabric);
    let n = graph.len();
    if n == 0 {
        return tables;
    }
    let len = tables.table(graph.switches[0]).len();
    let lmc = order.iter().map(|d| d.lmc).max().unwrap_or(0);
    let fast = targets(order);
    let route_range = |range: std::ops::Range<usize>| -> Vec<Vec<u8>> {
        // Counts per port stay below the number of CA LIDs (LMC 0 only).
        let mut scratch = Scratch::<W>::new(n, if lmc == 0 { order.len() } else { 0 });
        range
            .map(|s| {
                hops.fill(s, &mut scratch.least, &mut scratch.masks);
                let mut lft = vec![NO_PORT; len];
                if lmc == 0 {
                    route_switch_fast(graph, &fast, s, &mut scratch, &mut lft);
                } else {
                    route_switch_general(fabric, graph, order, lmc, true, s, &scratch, &mut lft);
                }
                lft
            })
            .collect()
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .min(n.div_ceil(16))
        .max(1);
    let chunk = n.div_ceil(threads);
    let results: Vec<Vec<Vec<u8>>> = if threads == 1 {
        vec![route_range(0..n)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let r = t * chunk..((t + 1) * chunk).min(n);
                    let f = &route_range;
                    scope.spawn(move || f(r))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    };
    for (s, lft) in results.into_iter().flatten().enumerate() {
        let sw = graph.switches[s];
        for (lid, &p) in lft.iter().enumerate() {
            if p != NO_PORT {
                tables.set(sw, Lid(lid as u16), p);
            }
        }
    }
    tables
}

/// Per-thread buffers for one switch at a time.
struct Scratch<const W: usize> {
    least: Vec<u8>,
    masks: Vec<PortMask<W>>,
    /// Distinct masks of the current switch, with a lower bound of the least
    /// count among their ports.
    distinct: Vec<(PortMask<W>, u32)>,
    /// Destination switch → index into `distinct` (`u32::MAX`: unreachable).
    mask_id: Vec<u32>,
    /// Open-addressing table over `distinct`.
    slots: Vec<u32>,
    /// `levels[c]`: ports whose path count is `c`.
    levels: Vec<PortMask<W>>,
}

impl<const W: usize> Scratch<W> {
    fn new(n: usize, max_count: usize) -> Self {
        Self {
            least: vec![NO_PATH; n],
            masks: vec![[0; W]; n],
            distinct: Vec::new(),
            mask_id: vec![0; n],
            slots: vec![0; (2 * n).next_power_of_two()],
            levels: vec![[0; W]; max_count + 2],
        }
    }

    /// Index of mask `m` among the distinct masks of this switch.
    fn intern(&mut self, m: PortMask<W>) -> u32 {
        let mut h = 0u64;
        for w in m {
            h = (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
        }
        let cap = self.slots.len() - 1;
        let mut i = (h as usize) & cap;
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                self.distinct.push((m, 0));
                self.slots[i] = self.distinct.len() as u32;
                return self.distinct.len() as u32 - 1;
            }
            if self.distinct[slot as usize - 1].0 == m {
                return slot - 1;
            }
            i = (i + 1) & cap;
        }
    }
}

fn and<const W: usize>(a: &PortMask<W>, b: &PortMask<W>) -> PortMask<W> {
    std::array::from_fn(|i| a[i] & b[i])
}

fn lowest_bit<const W: usize>(m: &PortMask<W>) -> Option<usize> {
    m.iter()
        .enumerate()
        .find(|(_, &w)| w != 0)
        .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
}

/// A destination LID as the LMC-0 loop needs it.
#[derive(Clone, Copy)]
struct Target {
    lid: u16,
    /// Counted in the port balance (a CA or router port, not a switch).
    counted: bool,
    /// Port on `switch` (0 for a switch's own LID).
    port: u8,
    /// Switch index it hangs off, `u32::MAX` if none.
    switch: u32,
}

fn targets(order: &[Dest]) -> Vec<Target> {
    order
        .iter()
        .map(|d| match d.kind {
            DestKind::Switch(s) => Target {
                lid: d.lid,
                counted: false,
                port: 0,
                switch: s,
            },
            DestKind::Ca { sw, port } => Target {
                lid: d.lid,
                counted: true,
                port,
                switch: sw,
            },
            DestKind::Unattached => Target {
                lid: d.lid,
                counted: false,
                port: NO_PATH,
                switch: u32::MAX,
            },
        })
        .collect()
}

/// LMC 0: every LID searched from port 1, so the choice is the lowest-numbered
/// least-hop port among those with the smallest count. Path counts are kept as
/// per-count port sets, and every distinct candidate set keeps a lower bound of
/// its smallest count (counts only grow), so a choice costs O(1) amortised.
fn route_switch_fast<const W: usize>(
    graph: &SwitchGraph,
    targets: &[Target],
    s: usize,
    sc: &mut Scratch<W>,
    lft: &mut [u8],
) {
    let ports = &graph.ports[s];
    let mut all = [0u64; W];
    for k in 0..ports.len() {
        all[k / 64] |= 1 << (k % 64);
    }
    sc.levels[0] = all;
    let mut top = 0usize;
    sc.distinct.clear();
    sc.slots.fill(0);
    // Distinct candidate set of every reachable destination switch; u32::MAX
    // for none.
    for d in 0..sc.least.len() {
        sc.mask_id[d] = if sc.least[d] == NO_PATH || sc.masks[d] == [0; W] {
            u32::MAX
        } else {
            let m = sc.masks[d];
            sc.intern(m)
        };
    }
    let me = s as u32;
    let mut port_of = [NO_PATH; 256];
    for (k, p) in ports.iter().enumerate().take(256) {
        port_of[k] = p.port;
    }
    // Plain slices, so the loop keeps them in registers.
    let Scratch {
        mask_id,
        distinct,
        levels,
        ..
    } = sc;
    let (mask_id, distinct, levels) = (&mask_id[..], &mut distinct[..], &mut levels[..]);
    for t in targets {
        let slot = &mut lft[t.lid as usize];
        if t.switch == me {
            *slot = t.port;
            continue;
        }
        let id = match mask_id.get(t.switch as usize) {
            Some(&id) if id != u32::MAX => id as usize,
            _ => {
                *slot = NO_PATH;
                continue;
            }
        };
        let (m, mut c) = distinct[id];
        let k = loop {
            if let Some(k) = lowest_bit(&and(&levels[c as usize], &m)) {
                break k;
            }
            c += 1;
        };
        distinct[id].1 = c;
        *slot = port_of[k & 255];
        if t.counted {
            let (w, b) = (k / 64, 1u64 << (k % 64));
            levels[c as usize][w] &= !b;
            levels[c as usize + 1][w] |= b;
            top = top.max(c as usize + 1);
        }
    }
    for l in &mut levels[..=top] {
        *l = [0; W];
    }
}

/// A remote node an LMC port's earlier LIDs already go to from this switch
/// (`struct osm_remote_node`).
#[derive(Clone, Copy)]
struct Remote {
    node: NodeId,
    forwarded_to: u32,
}

/// LMC > 0: the full `osm_switch_recommend_path`, walking the candidate
/// ports explicitly, with its system / node diversity rules when `lmc_rules`
/// (OpenSM applies them whenever the subnet's LMC is above 0).
#[allow(clippy::too_many_arguments)]
fn route_switch_general<const W: usize>(
    fabric: &Fabric,
    graph: &SwitchGraph,
    order: &[Dest],
    lmc: u8,
    lmc_rules: bool,
    s: usize,
    sc: &Scratch<W>,
    lft: &mut [u8],
) {
    let sw_node = graph.switches[s];
    let ports = &graph.ports[s];
    // OpenSM's num_ports counts port 0.
    let num_ports = fabric.node(sw_node).num_ports as usize + 1;
    let remote_node = |port: u8| fabric.remote(PortRef::new(sw_node, port)).map(|r| r.node);
    let mut counts = vec![0u32; num_ports];
    let mut used: Vec<Vec<Remote>> = vec![Vec::new(); order.len()];
    for offset in 0..1u16 << lmc {
        for (di, d) in order.iter().enumerate() {
            if offset >= 1 << d.lmc {
                continue;
            }
            let lid = (d.lid + offset) as usize;
            let start_from = if offset > 0 {
                lft[lid - 1] as usize + 1
            } else {
                1
            };
            let (dsw, counted) = match d.kind {
                DestKind::Switch(t) if t as usize == s => {
                    lft[lid] = 0;
                    continue;
                }
                DestKind::Switch(t) => (t as usize, false),
                DestKind::Ca { sw, port } if sw as usize == s => {
                    lft[lid] = port;
                    counts[port as usize] += 1;
                    note_remote(&mut used[di], remote_node(port));
                    continue;
                }
                DestKind::Ca { sw, .. } => (sw as usize, true),
                DestKind::Unattached => {
                    lft[lid] = NO_PATH;
                    continue;
                }
            };
            let port = if sc.least[dsw] == NO_PATH {
                NO_PATH
            } else {
                let m = &sc.masks[dsw];
                let first = start_from % num_ports;
                let cands = (0..ports.len())
                    .filter(|&k| m[k / 64] >> (k % 64) & 1 == 1)
                    .map(|k| ports[k].port)
                    .filter(|&p| p as usize >= first)
                    .chain(
                        (0..ports.len())
                            .filter(|&k| m[k / 64] >> (k % 64) & 1 == 1)
                            .map(|k| ports[k].port)
                            .filter(|&p| (p as usize) < first),
                    );
                recommend(
                    fabric,
                    cands,
                    &counts,
                    lmc_rules.then_some(used[di].as_slice()),
                    remote_node,
                )
            };
            lft[lid] = port;
            if counted && port != NO_PATH {
                counts[port as usize] += 1;
                note_remote(&mut used[di], remote_node(port));
            }
        }
    }
}

/// `find_and_add_remote_sys` + `forwarded_to++`.
fn note_remote(used: &mut Vec<Remote>, node: Option<NodeId>) {
    let Some(node) = node else { return };
    match used.iter_mut().find(|r| r.node == node) {
        Some(r) => r.forwarded_to += 1,
        None => used.push(Remote {
            node,
            forwarded_to: 1,
        }),
    }
}

/// The choice among least-hop `cands` (in search order): the first with the
/// least count, or with `used` (the LMC rules) OpenSM's preference for ports
/// towards systems, then nodes, the port's other LIDs do not use yet.
fn recommend(
    fabric: &Fabric,
    cands: impl Iterator<Item = u8>,
    counts: &[u32],
    used: Option<&[Remote]>,
    remote_node: impl Fn(u8) -> Option<NodeId>,
) -> u8 {
    let mut least_paths = u32::MAX;
    let mut least_other_sys = u32::MAX;
    let mut least_other_node = u32::MAX;
    let mut least_forwarded = u32::MAX;
    let (mut best, mut best_other_sys, mut best_other_node) = (0u8, 0u8, 0u8);
    let mut found = false;
    for port in cands {
        let count = counts[port as usize];
        let Some(rn) = remote_node(port) else {
            continue;
        };
        let Some(used) = used else {
            if count < least_paths {
                found = true;
                best = port;
                least_paths = count;
            }
            continue;
        };
        let rnode = fabric.node(rn);
        let same_sys = used
            .iter()
            .find(|r| fabric.node(r.node).system_image_guid == rnode.system_image_guid);
        let seen = match same_sys {
            None => {
                if count < least_other_sys {
                    least_other_sys = count;
                    best_other_sys = port;
                    least_forwarded = 0;
                }
                None
            }
            Some(_) => {
                let same_node = used.iter().find(|r| fabric.node(r.node).guid == rnode.guid);
                if same_node.is_none() && count < least_other_node {
                    least_other_node = count;
                    best_other_node = port;
                    least_forwarded = 0;
                }
                same_node
            }
        };
        if count < least_paths {
            found = true;
            best = port;
            least_paths = count;
            if let Some(r) = seen.filter(|r| r.forwarded_to < least_forwarded) {
                least_forwarded = r.forwarded_to;
            }
        } else if let Some(r) =
            seen.filter(|r| count == least_paths && r.forwarded_to < least_forwarded)
        {
            least_forwarded = r.forwarded_to;
            best = port;
        }
    }
    if !found {
        return NO_PATH;
    }
    if best != 0 {
        if best_other_sys != 0 {
            return best_other_sys;
        }
        if best_other_node != 0 {
            return best_other_node;
        }
    }
    best
}

/// Switch-to-switch hop distances between all switches, `dist[a * n + b]`
/// ([`NO_PATH`] if unreachable or 255 hops or more, beyond OpenSM's 8-bit
/// hop counts). Symmetric.
///
/// One breadth-first search from every switch at once: per switch a bit set
/// of the sources whose search has reached it, grown a level at a time by
/// OR-ing the neighbours' newly reached sets.
pub(crate) fn distances(graph: &SwitchGraph) -> Vec<u8> {
    let n = graph.len();
    let words = n.div_ceil(64);
    let mut dist = vec![NO_PATH; n * n];
    // Compact adjacency without self-loops or repeated neighbours.
    let mut start = Vec::with_capacity(n + 1);
    let mut adj: Vec<u32> = Vec::new();
    for (s, ports) in graph.ports.iter().enumerate() {
        start.push(adj.len());
        let first = adj.len();
        for p in ports {
            if p.remote as usize != s && !adj[first..].contains(&p.remote) {
                adj.push(p.remote);
            }
        }
    }
    start.push(adj.len());
    let mut seen = vec![0u64; n * words];
    let mut frontier = vec![0u64; n * words];
    let mut next = vec![0u64; n * words];
    for v in 0..n {
        seen[v * words + v / 64] |= 1 << (v % 64);
        frontier[v * words + v / 64] |= 1 << (v % 64);
        dist[v * n + v] = 0;
    }
    for level in 1..NO_PATH {
        let mut any = false;
        for v in 0..n {
            let acc = &mut next[v * words..(v + 1) * words];
            acc.fill(0);
            for &u in &adj[start[v]..start[v + 1]] {
                let f = &frontier[u as usize * words..(u as usize + 1) * words];
                for (a, &b) in acc.iter_mut().zip(f) {
                    *a |= b;
                }
            }
            let sn = &mut seen[v * words..(v + 1) * words];
            let row = &mut dist[v * n..(v + 1) * n];
            for (w, (a, s)) in acc.iter_mut().zip(sn.iter_mut()).enumerate() {
                *a &= !*s;
                *s |= *a;
                let mut bits = *a;
                while bits != 0 {
                    row[w * 64 + bits.trailing_zeros() as usize] = level;
                    bits &= bits - 1;
                    any = true;
                }
            }
        }
        std::mem::swap(&mut frontier, &mut next);
        if !any {
            break;
        }
    }
    dist
}

/// The first switch not reachable from switch 0, as a routing error.
pub(crate) fn check_connected(
    engine: &'static str,
    fabric: &Fabric,
    graph: &SwitchGraph,
    dist: &[u8],
) -> Result<(), RoutingError> {
    let n = graph.len();
    match (0..n).find(|&b| dist[b] == NO_PATH) {
        None => Ok(()),
        Some(b) => Err(RoutingError::Disconnected {
            engine,
            detail: format!(
                "switch '{}' cannot reach switch '{}'",
                fabric.node(graph.switches[0]).description,
                fabric.node(graph.switches[b]).description
            ),
        }),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use ibcloud_fabric::formats::lfts_dump;

    /// The first `n` differing entries, as (switch description, LID, ours, theirs).
    pub(crate) fn diff(
        fabric: &Fabric,
        ours: &ForwardingTables,
        theirs: &ForwardingTables,
        n: usize,
    ) -> (usize, Vec<(String, u16, u8, u8)>) {
        let mut total = 0;
        let mut first = Vec::new();
        for (sw, lid, x, y) in ours.differences(theirs) {
            total += 1;
            if first.len() < n {
                first.push((fabric.node(sw).description.clone(), lid.0, x, y));
            }
        }
        (total, first)
    }

    /// The fabric of fixture `dir` (its `topo.net`, else `preset`) with the
    /// LIDs OpenSM had (its guid2lid, LMC from the widest range), and OpenSM's
    /// tables from its `opensm-lfts.dump`.
    pub(crate) fn fixture(preset: &str, dir: &str) -> (Fabric, ForwardingTables) {
        use ibcloud_fabric::formats::guid2lid;
        use ibcloud_fabric::lids::{assign_lids, LidOptions, LidPolicy};
        let base = format!("{}/../../fixtures/opensm/{dir}", env!("CARGO_MANIFEST_DIR"));
        let read = |name: &str| {
            let path = format!("{base}/{name}");
            (
                std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}")),
                path,
            )
        };
        let net = std::path::PathBuf::from(format!("{base}/topo.net"));
        let mut f = if net.exists() {
            ibcloud_fabric::formats::read_fabric(&net, None).unwrap()
        } else {
            ibcloud_fabric::generate::preset(preset)
                .unwrap()
                .build()
                .unwrap()
        };
        let (text, path) = read("guid2lid");
        let map = guid2lid::parse(&text, &path).unwrap();
        assert_eq!(map.len(), f.lid_ports().count(), "{path} covers every port");
        let lmc = map
            .values()
            .map(|(lo, hi)| (hi.0 - lo.0 + 1).trailing_zeros() as u8)
            .max()
            .unwrap_or(0);
        let options = LidOptions {
            policy: LidPolicy::Guid2Lid {
                map: map.clone(),
                sm_port: None,
            },
            lmc,
            lmc_esp0: false,
        };
        assign_lids(&mut f, &options).unwrap();
        assert_eq!(
            ibcloud_fabric::lids::guid2lid_of(&f),
            map,
            "{path}: OpenSM kept every LID"
        );
        let (text, path) = read("opensm-lfts.dump");
        let tables = lfts_dump::parse(&text, &path)
            .unwrap()
            .to_tables(&f)
            .unwrap();
        (f, tables)
    }

    /// The root GUIDs of fixture `dir` (`roots.txt`, OpenSM's root_guid_file).
    pub(crate) fn fixture_roots(dir: &str) -> Vec<Guid> {
        let path = format!(
            "{}/../../fixtures/opensm/{dir}/roots.txt",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        text.lines()
            .map(|l| Guid(u64::from_str_radix(l.trim().trim_start_matches("0x"), 16).unwrap()))
            .collect()
    }

    /// A small random fabric: switches with random GUIDs and port counts,
    /// random switch links (parallel links and cables between two ports of
    /// one switch included), CAs with one or two ports cabled to random
    /// switches (sometimes to nothing or to another CA), LIDs with `lmc`.
    pub(crate) fn random_fabric(seed: u64, lmc: u8) -> Fabric {
        use ibcloud_fabric::lids::{assign_lids, LidOptions, LidPolicy};
        use ibcloud_fabric::{FabricBuilder, LinkRate, NodeKind, NodeSpec};
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut rnd = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n.max(1)
        };
        let mut b = FabricBuilder::new();
        let ns = 1 + rnd(9) as usize;
        let mut free: Vec<(NodeId, Vec<u8>)> = Vec::new();
        for i in 0..ns {
            let ports = 3 + rnd(8) as u8;
            let guid = Guid((rnd(1 << 40) << 8) | i as u64 | 0x1000_0000_0000);
            let id = b
                .add_node(NodeSpec::new(
                    NodeKind::Switch,
                    guid,
                    ports as u32,
                    format!("sw{i}"),
                ))
                .unwrap();
            free.push((id, (1..=ports).collect()));
        }
        let take = |free: &mut Vec<(NodeId, Vec<u8>)>, s: usize, r: u64| -> Option<PortRef> {
            let (id, ports) = &mut free[s];
            (!ports.is_empty())
                .then(|| PortRef::new(*id, ports.swap_remove(r as usize % ports.len())))
        };
        // A spanning chain first (mostly connected), then extra links.
        for i in 1..ns {
            if rnd(12) == 0 {
                continue;
            }
            let j = rnd(i as u64) as usize;
            let (a, c) = (take(&mut free, i, rnd(64)), take(&mut free, j, rnd(64)));
            if let (Some(a), Some(c)) = (a, c) {
                b.connect(a, c, LinkRate::default()).unwrap();
            }
        }
        for _ in 0..rnd(2 * ns as u64 + 2) {
            let (i, j) = (rnd(ns as u64) as usize, rnd(ns as u64) as usize);
            let a = take(&mut free, i, rnd(64));
            let c = take(&mut free, j, rnd(64));
            if let (Some(a), Some(c)) = (a, c) {
                b.connect(a, c, LinkRate::default()).unwrap();
            }
        }
        let mut lonely: Option<PortRef> = None;
        for c in 0..rnd(14) {
            let ports = 1 + rnd(2) as u8;
            let mut spec = NodeSpec::new(
                NodeKind::Ca,
                Guid(0x2000_0000_0000 | (rnd(1 << 30) << 8) | c),
                ports as u32,
                format!("ca{c}"),
            );
            spec.system_image_guid = Guid(0x3000 + rnd(3));
            let id = b.add_node(spec).unwrap();
            for p in 1..=ports {
                match rnd(10) {
                    0 => {}
                    1 => match lonely.take() {
                        Some(o) if o.node != id => b
                            .connect(o, PortRef::new(id, p), LinkRate::default())
                            .unwrap(),
                        _ => lonely = Some(PortRef::new(id, p)),
                    },
                    _ => {
                        let s = rnd(ns as u64) as usize;
                        if let Some(a) = take(&mut free, s, rnd(64)) {
                            b.connect(a, PortRef::new(id, p), LinkRate::default())
                                .unwrap();
                        }
                    }
                }
            }
        }
        let mut f = b.build();
        let policy = if rnd(2) == 0 {
            LidPolicy::Packed
        } else {
            LidPolicy::OpenSm { sm_port: None }
        };
        assign_lids(
            &mut f,
            &LidOptions {
                policy,
                lmc,
                lmc_esp0: rnd(4) == 0,
            },
        )
        .unwrap();
        f
    }

    /// Follows every LID from every switch. Every route must end at the LID's
    /// owner without a loop, in the fewest switch hops when `min_hop`; with
    /// `complete` no CA LID may be unset. Returns the number of unset entries
    /// (switch LIDs only with `complete`).
    pub(crate) fn check_routes(
        f: &Fabric,
        t: &ForwardingTables,
        min_hop: bool,
        complete: bool,
    ) -> usize {
        let g = SwitchGraph::new(f).unwrap();
        let dist = distances(&g);
        let n = g.len();
        let mut unset = 0;
        for tg in &g.targets {
            let Some(dsw) = tg.switch else { continue };
            for lid in tg.lid.0..tg.lid.0 + (1 << tg.lmc) {
                for s in 0..n {
                    let (mut at, mut hops) = (s, 0usize);
                    loop {
                        let port = t.get(g.switches[at], Lid(lid));
                        let Some(port) = port else {
                            let ca = !f.node(tg.owner.node).is_switch();
                            assert!(!(complete && ca), "CA LID {lid} unset at switch {at}");
                            unset += 1;
                            hops = usize::MAX;
                            break;
                        };
                        if port == 0 {
                            assert_eq!(
                                PortRef::new(g.switches[at], 0),
                                tg.owner,
                                "LID {lid} ends at switch {at}"
                            );
                            break;
                        }
                        let r = f
                            .remote(PortRef::new(g.switches[at], port))
                            .expect("routed to a cabled port");
                        if !f.node(r.node).is_switch() {
                            assert_eq!(r, tg.owner, "LID {lid} leaves switch {at} to the wrong CA");
                            break;
                        }
                        at = g.index[r.node.index()] as usize;
                        hops += 1;
                        assert!(hops <= n, "LID {lid} loops from switch {s}");
                    }
                    if min_hop && hops != usize::MAX && dist[s * n + dsw as usize] != NO_PATH {
                        assert_eq!(
                            hops,
                            dist[s * n + dsw as usize] as usize,
                            "LID {lid} from switch {s}"
                        );
                    }
                }
            }
        }
        unset
    }

    /// Routes with the explicit search at LMC 0 (no LMC rules), for
    /// comparison with the fast path.
    fn general_lmc0(fabric: &Fabric) -> ForwardingTables {
        let graph = SwitchGraph::new(fabric).unwrap();
        let order = port_order("minhop", fabric, &graph).unwrap();
        let dist = distances(&graph);
        let hops = crate::engines::minhop::MinHopTables {
            graph: &graph,
            dist: &dist,
        };
        let mut tables = ForwardingTables::new(fabric);
        let len = tables.table(graph.switches[0]).len();
        let mut sc = Scratch::<1>::new(graph.len(), order.len());
        for s in 0..graph.len() {
            HopSource::<1>::fill(&hops, s, &mut sc.least, &mut sc.masks);
            let mut lft = vec![NO_PORT; len];
            route_switch_general(fabric, &graph, &order, 0, false, s, &sc, &mut lft);
            for (lid, &p) in lft.iter().enumerate() {
                if p != NO_PORT {
                    tables.set(graph.switches[s], Lid(lid as u16), p);
                }
            }
        }
        tables
    }

    #[test]
    fn fast_path_equals_the_explicit_search() {
        use crate::RoutingEngine;
        let mut compared = 0;
        for seed in 0..300 {
            let f = random_fabric(seed, 0);
            let Ok(r) = crate::engines::minhop::MinHop.route(&f) else {
                continue;
            };
            if f.switches().count() == 0 {
                continue;
            }
            compared += 1;
            let (n, first) = diff(&f, &r.tables, &general_lmc0(&f), 5);
            assert_eq!(n, 0, "seed {seed}: {first:?}");
        }
        assert!(compared > 100, "only {compared} fabrics were routable");
    }

    #[test]
    fn switch_table_order_is_by_swapped_guid() {
        let f = ibcloud_fabric::generate::preset("4-ary-2-full")
            .unwrap()
            .build()
            .unwrap();
        let g = SwitchGraph::new(&f).unwrap();
        let order = switch_table_order(&f, &g);
        let keys: Vec<u64> = order
            .iter()
            .map(|&s| f.node(g.switches[s as usize]).guid.0.swap_bytes())
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn order_lists_cas_by_switch_then_switches() {
        let f = ibcloud_fabric::generate::preset("4-ary-2-full")
            .unwrap()
            .build()
            .unwrap();
        let g = SwitchGraph::new(&f).unwrap();
        let order = port_order("minhop", &f, &g).unwrap();
        assert_eq!(order.len(), g.targets.len());
        let cas = order
            .iter()
            .take_while(|d| matches!(d.kind, DestKind::Ca { .. }))
            .count();
        assert_eq!(cas, 32);
        assert!(order[cas..]
            .iter()
            .all(|d| matches!(d.kind, DestKind::Switch(_))));
    }
}
