//! Targeted re-discovery: after a change, re-read only what changed instead
//! of walking the whole subnet again.
//!
//! A full discovery ([`crate::discover`]) costs NodeInfo, NodeDescription,
//! SwitchInfo and PortInfo on every port of every switch — 5,290 SMPs on
//! ft648 — and OpenSM pays that (and more) on every heavy sweep. When the
//! node set is unchanged, the IBA already tells the SM where to look: a
//! switch whose port changed state sets PortStateChange in its SwitchInfo
//! (IBA 14.2.5.4), and the SM clears it when programming. So this walk goes
//! breadth first from the SM's port, like discovery, but over the links it
//! already knows:
//!
//! 1. per hop level, one SwitchInfo Get per switch (by a directed route
//!    over links not known to be down);
//! 2. a switch that reports PortStateChange (or that sent a trap) gets
//!    PortInfo on every port; a known link whose port is now down is dropped,
//!    a port that is up without a known link is probed with NodeInfo and
//!    joined to the node it reaches; the far end's PortInfo is read too;
//! 3. the next level is reached only through the links that are still up,
//!    so no directed route crosses a link the walk has seen fail.
//!
//! Anything the cache cannot explain — an unknown node behind a new link, a
//! switch that does not answer, a node no longer reachable (the node set
//! changed) — gives up and the caller runs the full discovery; the reason is
//! reported. On ft648 a link failure costs 54 SwitchInfo + 2 × 37 PortInfo
//! instead of the full walk.

use crate::discover::Discovery;
use crate::error::SmError;
use crate::mads::{Mads, Request};
use crate::transport::Transport;
use crate::wire::{attr, NodeInfoRepr, NodeType, PortInfoRepr, Route, SmpRepr, SwitchInfoRepr};
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// How a heavy sweep finds out what the subnet looks like.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub enum Rediscovery {
    /// Re-read only the switches that flag a change (falls back to the full
    /// walk when the cache cannot explain what it sees).
    #[default]
    Targeted,
    /// Walk the whole subnet on every heavy sweep (OpenSM's behaviour).
    Full,
}

impl Rediscovery {
    /// Parses `targeted` or `full`.
    pub fn parse(s: &str) -> Result<Self, SmError> {
        match s {
            "targeted" => Ok(Self::Targeted),
            "full" => Ok(Self::Full),
            o => Err(SmError::Refused(format!(
                "unknown rediscovery '{o}' (targeted, full)"
            ))),
        }
    }
}

/// Outcome of a targeted walk.
#[derive(Debug)]
pub enum Outcome {
    /// The subnet as it is now (same nodes, same order as before).
    Updated {
        /// The updated discovery.
        discovery: Discovery,
        /// Switches that flagged a change (or sent a trap) and were re-read.
        changed_switches: usize,
        /// Links dropped.
        links_down: usize,
        /// Links added.
        links_up: usize,
    },
    /// The cache cannot explain what was seen: run the full discovery.
    GiveUp(String),
}

type End = (usize, u8);

fn key(a: End, b: End) -> (End, End) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

/// Walks the known subnet from the SM's port (see the module docs).
/// `trap_nodes` are nodes (indices into `previous.nodes`) that sent a trap
/// since the last heavy sweep: they are re-read even without PortStateChange.
pub fn rediscover<T: Transport>(
    mads: &mut Mads<T>,
    previous: &Discovery,
    trap_nodes: &BTreeSet<usize>,
) -> Result<Outcome, SmError> {
    let mut d = previous.clone();
    d.unreachable.clear();
    let n = d.nodes.len();
    // Adjacency by (node, port) → far end, from the known links.
    let mut peer: BTreeMap<End, End> = BTreeMap::new();
    for &(a, b) in &d.links {
        peer.insert(a, b);
        peer.insert(b, a);
    }
    let (sm_node, sm_port) = d.sm_port;
    let mut new_routes: Vec<BTreeMap<u8, Vec<u8>>> = vec![BTreeMap::new(); n];
    new_routes[sm_node].insert(if is_switch(&d, sm_node) { 0 } else { sm_port }, Vec::new());
    let mut changed = 0usize;
    let (mut downs, mut ups) = (0usize, 0usize);
    // The frontier: switches reached at this level, with their route.
    let mut level: Vec<(usize, Vec<u8>)> = Vec::new();
    if is_switch(&d, sm_node) {
        level.push((sm_node, Vec::new()));
    } else {
        match peer.get(&(sm_node, sm_port)) {
            Some(&(s, _)) if is_switch(&d, s) => {
                new_routes[s].insert(0, vec![sm_port]);
                level.push((s, vec![sm_port]));
            }
            _ => return Ok(Outcome::GiveUp("the SM's port has no known switch".into())),
        }
    }
    let mut seen_switch: HashSet<usize> = level.iter().map(|&(s, _)| s).collect();
    // Switches at the far end of a changed link not walked yet: re-read
    // when their level comes, flag or not.
    let mut force: BTreeSet<usize> = BTreeSet::new();
    while !level.is_empty() {
        // 1. SwitchInfo of this level.
        let reqs: Vec<Request> = level
            .iter()
            .map(|(_, r)| Request::get(attr::SWITCH_INFO, 0, Route::Directed(r.clone())))
            .collect();
        let mut reread: Vec<usize> = Vec::new();
        for ((s, r), ans) in level.iter().zip(mads.run(&reqs)) {
            let si = match ans.and_then(|x: SmpRepr| Ok(SwitchInfoRepr::parse(&x.data)?)) {
                Ok(si) => si,
                Err(e) => {
                    return Ok(Outcome::GiveUp(format!(
                        "{} does not answer SwitchInfo on {}: {e}",
                        d.nodes[*s].description,
                        Route::Directed(r.clone()).label()
                    )))
                }
            };
            if si.port_state_change || trap_nodes.contains(s) || force.contains(s) {
                reread.push(*s);
            }
            d.nodes[*s].switch_info = Some(si);
        }
        // 2. PortInfo on every port of the switches that flag a change.
        let mut reqs = Vec::new();
        let mut what = Vec::new();
        for &s in &reread {
            let route = new_routes[s][&0].clone();
            for p in 0..=d.nodes[s].info.num_ports {
                reqs.push(Request::get(
                    attr::PORT_INFO,
                    p as u32,
                    Route::Directed(route.clone()),
                ));
                what.push((s, p));
            }
        }
        changed += reread.len();
        let mut probes: Vec<(End, Vec<u8>)> = Vec::new();
        let mut far_reads: Vec<End> = Vec::new();
        for ((s, p), ans) in what.into_iter().zip(mads.run(&reqs)) {
            let pi = match ans.and_then(|x| Ok(PortInfoRepr::parse(&x.data)?)) {
                Ok(pi) => pi,
                Err(e) => {
                    return Ok(Outcome::GiveUp(format!(
                        "{} port {p} does not answer PortInfo: {e}",
                        d.nodes[s].description
                    )))
                }
            };
            let up = pi.link_up();
            d.nodes[s].ports.insert(p, pi);
            if p == 0 {
                continue;
            }
            match (peer.get(&(s, p)).copied(), up) {
                (Some(far), false) => {
                    peer.remove(&(s, p));
                    peer.remove(&far);
                    d.links.retain(|&(a, b)| key(a, b) != key((s, p), far));
                    far_reads.push(far);
                    downs += 1;
                }
                (None, true) => {
                    let mut path = new_routes[s][&0].clone();
                    path.push(p);
                    if path.len() > crate::wire::smp::MAX_HOPS {
                        return Ok(Outcome::GiveUp("a new link beyond 64 hops".into()));
                    }
                    probes.push(((s, p), path));
                }
                _ => {}
            }
        }
        // New links: the far end must be a node the SM knows.
        let reqs: Vec<Request> = probes
            .iter()
            .map(|(_, path)| Request::get(attr::NODE_INFO, 0, Route::Directed(path.clone())))
            .collect();
        for ((end, path), ans) in probes.into_iter().zip(mads.run(&reqs)) {
            let info = match ans.and_then(|x| Ok(NodeInfoRepr::parse(&x.data)?)) {
                Ok(i) => i,
                Err(e) => {
                    return Ok(Outcome::GiveUp(format!(
                        "the new link at {} port {} does not answer NodeInfo: {e}",
                        d.nodes[end.0].description, end.1
                    )))
                }
            };
            let Some(&idx) = d.by_guid.get(&info.node_guid) else {
                return Ok(Outcome::GiveUp(format!(
                    "a node not seen before (GUID 0x{:016x}) behind {} port {}",
                    info.node_guid, d.nodes[end.0].description, end.1
                )));
            };
            let far = (idx, info.local_port);
            if let Some(&old) = peer.get(&far) {
                // The far port was cabled elsewhere: a recabling, not a
                // restore. The full walk sorts it out.
                return Ok(Outcome::GiveUp(format!(
                    "{} port {} moved (was linked to {} port {})",
                    d.nodes[idx].description, far.1, d.nodes[old.0].description, old.1
                )));
            }
            peer.insert(end, far);
            peer.insert(far, end);
            d.links.push((end, far));
            ups += 1;
            if !is_switch(&d, idx) {
                new_routes[idx].entry(far.1).or_insert(path);
            }
            far_reads.push(far);
        }
        // The far ends' PortInfo (its state for bring-up), by the route the
        // walk has for that node, when it has one yet; a far switch not yet
        // walked is read when its own level comes (it flags the change too).
        let mut reqs = Vec::new();
        let mut who = Vec::new();
        let flagged: BTreeSet<usize> = reread.iter().copied().collect();
        for far in far_reads {
            let (node, port) = far;
            if flagged.contains(&node) {
                continue; // read with all its ports above
            }
            let route = if is_switch(&d, node) {
                new_routes[node].get(&0).cloned()
            } else {
                new_routes[node]
                    .get(&port)
                    .cloned()
                    .or_else(|| reach_ca(&d, &peer, &new_routes, far))
            };
            match route {
                Some(r) => {
                    reqs.push(Request::get(
                        attr::PORT_INFO,
                        port as u32,
                        Route::Directed(r),
                    ));
                    who.push(far);
                }
                None if is_switch(&d, node) => {
                    force.insert(node);
                }
                None => {}
            }
        }
        for ((node, port), ans) in who.into_iter().zip(mads.run(&reqs)) {
            match ans.and_then(|x| Ok(PortInfoRepr::parse(&x.data)?)) {
                Ok(pi) => {
                    d.nodes[node].ports.insert(port, pi);
                }
                Err(e) => {
                    return Ok(Outcome::GiveUp(format!(
                        "{} port {port} does not answer PortInfo: {e}",
                        d.nodes[node].description
                    )))
                }
            }
        }
        // 3. The next level, over the links still up.
        let mut next = Vec::new();
        for (s, route) in &level {
            for p in 1..=d.nodes[*s].info.num_ports {
                let Some(&(far, far_port)) = peer.get(&(*s, p)) else {
                    continue;
                };
                let mut path = route.clone();
                path.push(p);
                if is_switch(&d, far) {
                    if seen_switch.insert(far) && path.len() <= crate::wire::smp::MAX_HOPS {
                        new_routes[far].insert(0, path.clone());
                        next.push((far, path));
                    }
                } else {
                    new_routes[far].entry(far_port).or_insert(path);
                }
            }
        }
        level = next;
    }
    // Every node must still be reached by the ports it was reached on.
    for (i, node) in d.nodes.iter().enumerate() {
        for k in node.routes.keys() {
            if !new_routes[i].contains_key(k) {
                return Ok(Outcome::GiveUp(format!(
                    "{} is no longer reachable (the node set changed)",
                    node.description
                )));
            }
        }
    }
    for (node, routes) in d.nodes.iter_mut().zip(new_routes) {
        node.routes = routes;
    }
    Ok(Outcome::Updated {
        discovery: d,
        changed_switches: changed,
        links_down: downs,
        links_up: ups,
    })
}

fn is_switch(d: &Discovery, i: usize) -> bool {
    d.nodes[i].info.node_type == NodeType::Switch
}

/// A CA port's route through the switch it is cabled to, when that switch
/// has one already.
fn reach_ca(
    d: &Discovery,
    peer: &BTreeMap<End, End>,
    routes: &[BTreeMap<u8, Vec<u8>>],
    ca: End,
) -> Option<Vec<u8>> {
    let &(s, p) = peer.get(&ca)?;
    if !is_switch(d, s) {
        return None;
    }
    let mut r = routes[s].get(&0)?.clone();
    r.push(p);
    Some(r)
}
