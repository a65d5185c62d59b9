//! `lash`: LAyered SHortest path routing (Skeie, Lysne, Theiss), as OpenSM
//! 3.3.23's `osm_ucast_lash.c` computes it.
//!
//! 1. Switches get LASH ids in the order of OpenSM's switch table (node GUID
//!    in network byte order); their links are their switch-to-switch ports in
//!    port order, one per cable (no mesh analysis, OpenSM's default).
//! 2. Minimal paths: from every switch in id order, a breadth-first tree over
//!    the links in order; every switch of that tree takes, towards each switch
//!    below it, the child leading there, unless an earlier tree already gave
//!    it a choice. Between two switches, the first cable to a neighbour is used.
//! 3. Layers: the switch pairs `(i, j)`, `i < j`, in order, each with both of
//!    its paths, go into the lowest layer whose channel dependency graph stays
//!    acyclic; a new layer is opened when none does, and more layers than are
//!    available is [`RoutingError::NotEnoughLayers`].
//! 4. Balancing (only with more than one layer): pairs drawn with glibc's
//!    unseeded `rand()` (the first pair of the fullest layer at or after the
//!    draw) move from the fullest to the emptiest layer when that keeps it
//!    acyclic, until the two layers of the last attempt differ by fewer than 6
//!    paths or as many attempts failed as the fullest layer held paths. The
//!    first attempt takes layer 0 as the fullest and the last layer as the
//!    emptiest; OpenSM's bookkeeping quirks are kept (see `cdg`), since they
//!    decide what moves.
//! 5. Tables: a LID on a switch's own CA ports (or the switch itself) leaves by
//!    that port (0); any other LID by the cable towards its switch's next hop.
//!    Every LID of an LMC range is routed alike. The SL of a path is the layer
//!    of its switch pair plus `lash_start_vl`, and `lash_start_vl` within one
//!    switch.
//!
//! OpenSM derives the layers available from the switches' operational VLs
//! (ibsim's switches report VL0–7: 8 layers); the fabric model has no VL
//! capabilities, so the default is 8 and [`EngineOptions::max_vls`] sets it.
//! Where OpenSM would loop forever in balancing (its fullest layer has no pair
//! left to try but its trial counter is not zero) we stop balancing instead.

mod cdg;
mod glibc_rand;

use cdg::{Cdg, Paths, NONE};
use glibc_rand::GlibcRand;
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Fabric, Lid, PortNum};

use crate::engine::{EngineOptions, Routing, RoutingEngine, RoutingError};
use crate::graph::SwitchGraph;
use crate::sl::PathSls;

const NAME: &str = "lash";

/// OpenSM's `balance_limit`.
const BALANCE_LIMIT: i64 = 6;
/// OpenSM's `MAX_INT`, the start of its search for the emptiest layer.
const MAX_INT: i64 = 9999;

/// The lash engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lash {
    /// Operational VLs of the fabric (OpenSM's `vl_min` before `lash_start_vl`).
    vls: u8,
    /// OpenSM's `lash_start_vl`: the first VL/SL used.
    start_vl: u8,
}

/// What the layering did, as OpenSM logs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LashStats {
    /// Layers available (operational VLs minus `lash_start_vl`).
    pub available: usize,
    /// Layers used ("Lanes needed").
    pub layers: usize,
    /// Paths per layer after assignment ("Lanes in layer i" before balancing).
    pub paths_per_layer_assigned: Vec<usize>,
    /// Paths per layer after balancing.
    pub paths_per_layer: Vec<usize>,
}

impl Lash {
    /// Operational VLs assumed when [`EngineOptions::max_vls`] is not given:
    /// what OpenSM finds on ibsim (switch ports with VL0–7 operational).
    pub const DEFAULT_VLS: u8 = 8;

    /// The engine; reads [`EngineOptions::max_vls`] (1..=15) as the fabric's
    /// operational VLs.
    pub fn new(options: &EngineOptions) -> Result<Self, RoutingError> {
        let vls = options.max_vls.unwrap_or(Self::DEFAULT_VLS);
        if !(1..=15).contains(&vls) {
            return Err(RoutingError::BadOptions(format!(
                "{NAME}: max_vls must be 1..=15, not {vls}"
            )));
        }
        Ok(Self { vls, start_vl: 0 })
    }

    /// Uses VLs/SLs from `start_vl` on (OpenSM's `lash_start_vl`, default 0);
    /// the layers available shrink accordingly.
    pub fn with_start_vl(mut self, start_vl: u8) -> Self {
        self.start_vl = start_vl;
        self
    }

    /// Routes `fabric` and reports the layering.
    pub fn route_with_stats(&self, fabric: &Fabric) -> Result<(Routing, LashStats), RoutingError> {
        if self.start_vl >= self.vls {
            return Err(RoutingError::BadOptions(format!(
                "{NAME}: start VL ({}) too high for the operational VLs ({})",
                self.start_vl, self.vls
            )));
        }
        let available = (self.vls - self.start_vl) as usize;
        let g = SwitchGraph::new(fabric)?;
        check_ca_lids(fabric, &g)?;
        let n = g.len();
        let lids = lid_list(&g);
        let mut tables = ForwardingTables::new(fabric);
        if n == 0 {
            let stats = LashStats {
                available,
                layers: 0,
                paths_per_layer_assigned: vec![],
                paths_per_layer: vec![],
            };
            return Ok((
                Routing {
                    tables,
                    path_sls: Some(PathSls::new(&lids)),
                },
                stats,
            ));
        }

        let topo = Topology::new(fabric, &g);
        let paths = topo
            .minimal_paths()
            .map_err(|unreached| RoutingError::Disconnected {
                engine: NAME,
                detail: format!(
                    "switch '{}' cannot be reached from switch '{}'",
                    fabric
                        .node(g.switches[topo.sw_of[unreached as usize] as usize])
                        .description,
                    fabric.node(g.switches[topo.sw_of[0] as usize]).description
                ),
            })?;
        let mut layers = Layers::assign(&paths, available)?;
        let assigned = layers.count.iter().map(|&c| c as usize).collect();
        layers.balance(&paths);
        let stats = LashStats {
            available,
            layers: layers.needed,
            paths_per_layer_assigned: assigned,
            paths_per_layer: layers.count.iter().map(|&c| c as usize).collect(),
        };

        // Forwarding tables.
        for t in &g.targets {
            let Some(ts) = t.switch else { continue };
            let dst = topo.lash_of[ts as usize] as usize;
            for s in 0..n {
                let port: PortNum = if s == dst {
                    t.port
                } else {
                    let c = paths.hop[s * n + dst];
                    if c == NONE {
                        continue;
                    }
                    topo.chan_port[c as usize]
                };
                let sw = g.switches[topo.sw_of[s] as usize];
                for k in 0..(1u32 << t.lmc.min(7)) {
                    tables.set(sw, Lid((t.lid.0 as u32 + k).min(0xffff) as u16), port);
                }
            }
        }

        // Path SLs.
        let mut sls = PathSls::new(&lids);
        let sw_of_lid = lid_switches(&g, &topo, fabric.max_lid());
        let start = self.start_vl;
        for &src in &lids {
            let Some(s) = sw_of_lid[src.0 as usize] else {
                continue;
            };
            for &dst in &lids {
                let Some(d) = sw_of_lid[dst.0 as usize] else {
                    continue;
                };
                let sl = if s == d {
                    start
                } else {
                    start + layers.lane[s as usize * n + d as usize]
                };
                if sl != 0 {
                    sls.set(src, dst, sl);
                }
            }
        }
        Ok((
            Routing {
                tables,
                path_sls: Some(sls),
            },
            stats,
        ))
    }
}

impl RoutingEngine for Lash {
    fn name(&self) -> &'static str {
        NAME
    }

    fn route(&self, fabric: &Fabric) -> Result<Routing, RoutingError> {
        self.route_with_stats(fabric).map(|(r, _)| r)
    }
}

/// A CA or router port cabled to a switch must have a LID.
fn check_ca_lids(fabric: &Fabric, g: &SwitchGraph) -> Result<(), RoutingError> {
    for (id, node) in fabric.iter_nodes().filter(|(_, n)| !n.is_switch()) {
        for (p, port) in fabric.ports(id).iter().enumerate().skip(1) {
            let to_switch = port
                .remote
                .is_some_and(|r| g.index[r.node.index()] != u32::MAX);
            if to_switch && !port.lid.is_set() {
                return Err(RoutingError::MissingLid(format!(
                    "'{}' port {p}",
                    node.description
                )));
            }
        }
    }
    Ok(())
}

/// Every LID in use (LMC ranges in full), ascending.
fn lid_list(g: &SwitchGraph) -> Vec<Lid> {
    let mut lids: Vec<Lid> = g
        .targets
        .iter()
        .flat_map(|t| (0..1u32 << t.lmc.min(7)).map(move |k| t.lid.0 as u32 + k))
        .filter(|&l| l <= Lid::UNICAST_MAX.0 as u32)
        .map(|l| Lid(l as u16))
        .collect();
    lids.sort_unstable();
    lids.dedup();
    lids
}

/// LID → LASH id of the switch it is reached through.
fn lid_switches(g: &SwitchGraph, topo: &Topology, max_lid: u16) -> Vec<Option<u32>> {
    let mut map = vec![None; max_lid as usize + 1];
    for t in &g.targets {
        let Some(ts) = t.switch else { continue };
        for k in 0..1u32 << t.lmc.min(7) {
            if let Some(slot) = map.get_mut(t.lid.0 as usize + k as usize) {
                *slot = Some(topo.lash_of[ts as usize]);
            }
        }
    }
    map
}

/// Switches in LASH order with their links and channels.
#[derive(Debug)]
struct Topology {
    /// LASH id → switch index of the [`SwitchGraph`].
    sw_of: Vec<u32>,
    /// Switch index → LASH id.
    lash_of: Vec<u32>,
    /// Per LASH id: its links in port order as (channel, neighbour).
    links: Vec<Vec<(u32, u32)>>,
    /// Channel → port of its first cable.
    chan_port: Vec<PortNum>,
    /// Channel → neighbour's LASH id.
    chan_to: Vec<u32>,
}

impl Topology {
    fn new(fabric: &Fabric, g: &SwitchGraph) -> Self {
        let n = g.len();
        let mut sw_of: Vec<u32> = (0..n as u32).collect();
        // OpenSM's switch table is keyed by the GUID as stored (network byte
        // order), compared as a host (little-endian) integer.
        sw_of.sort_by_key(|&i| fabric.node(g.switches[i as usize]).guid.0.swap_bytes());
        let mut lash_of = vec![0u32; n];
        for (l, &i) in sw_of.iter().enumerate() {
            lash_of[i as usize] = l as u32;
        }
        let mut links = Vec::with_capacity(n);
        let mut chan_port = Vec::new();
        let mut chan_to = Vec::new();
        for &i in &sw_of {
            let first = chan_to.len();
            let mut mine = Vec::with_capacity(g.ports[i as usize].len());
            for sp in &g.ports[i as usize] {
                let to = lash_of[sp.remote as usize];
                let c = match chan_to[first..].iter().position(|&t| t == to) {
                    Some(k) => (first + k) as u32,
                    None => {
                        chan_to.push(to);
                        chan_port.push(sp.port);
                        (chan_to.len() - 1) as u32
                    }
                };
                mine.push((c, to));
            }
            links.push(mine);
        }
        Self {
            sw_of,
            lash_of,
            links,
            chan_port,
            chan_to,
        }
    }

    /// OpenSM's `shortest_path` + `generate_routing_func_for_mst` for every
    /// root in order; `Err(switch)` names a switch the first tree misses.
    fn minimal_paths(&self) -> Result<Paths, u32> {
        let n = self.sw_of.len();
        let mut hop = vec![NONE; n * n];
        let mut parent = vec![NONE; n];
        let mut via = vec![NONE; n];
        let mut order = Vec::with_capacity(n);
        for r in 0..n as u32 {
            parent.fill(NONE);
            order.clear();
            parent[r as usize] = r;
            order.push(r);
            let mut head = 0;
            while head < order.len() {
                let s = order[head];
                head += 1;
                for &(c, t) in &self.links[s as usize] {
                    if parent[t as usize] == NONE {
                        parent[t as usize] = s;
                        via[t as usize] = c;
                        order.push(t);
                    }
                }
            }
            if order.len() < n {
                return Err(parent.iter().position(|&p| p == NONE).unwrap_or(0) as u32);
            }
            // Every ancestor of w routes to w through its child on the tree
            // path, unless an earlier tree decided already.
            for &w in &order[1..] {
                let mut child = w;
                loop {
                    let a = parent[child as usize];
                    let slot = &mut hop[a as usize * n + w as usize];
                    if *slot == NONE {
                        *slot = via[child as usize];
                    }
                    if a == r {
                        break;
                    }
                    child = a;
                }
            }
        }
        Ok(Paths {
            n,
            hop,
            to: self.chan_to.clone(),
        })
    }
}

/// Layer assignment and balancing.
#[derive(Debug)]
struct Layers {
    n: usize,
    /// Layers available.
    available: usize,
    /// Layers in use ("lanes needed").
    needed: usize,
    /// `lane[s * n + d]`: layer of the pair (without `lash_start_vl`).
    lane: Vec<u8>,
    /// Paths per layer (`num_mst_in_lane`).
    count: Vec<i64>,
    cdg: Cdg,
}

impl Layers {
    /// `lash_core`'s assignment loop.
    fn assign(paths: &Paths, available: usize) -> Result<Self, RoutingError> {
        let n = paths.n;
        let mut cdg = Cdg::new(paths.to.len());
        cdg.ensure_lane(0);
        let mut lane = vec![0u8; n * n];
        let mut count = vec![0i64; 1];
        let mut needed = 1usize;
        for i in 0..n as u32 {
            for d in i + 1..n as u32 {
                let mut v = 0usize;
                let mut cycle = false;
                while v < needed {
                    cdg.add_path(paths, i, d, v);
                    cdg.add_path(paths, d, i, v);
                    cycle = cdg.take_cycle();
                    if cycle {
                        cdg.remove_temp(paths, i, d, v);
                        cdg.remove_temp(paths, d, i, v);
                        v += 1;
                    } else {
                        cdg.make_permanent(paths, i, d, v);
                        cdg.make_permanent(paths, d, i, v);
                        count[v] += 2;
                        break;
                    }
                }
                if cycle {
                    needed += 1;
                    if needed > available {
                        return Err(RoutingError::NotEnoughLayers {
                            engine: NAME,
                            needed,
                            available,
                        });
                    }
                    cdg.ensure_lane(v);
                    count.push(0);
                    cdg.add_path(paths, i, d, v);
                    cdg.add_path(paths, d, i, v);
                    cdg.take_cycle();
                    cdg.make_permanent(paths, i, d, v);
                    cdg.make_permanent(paths, d, i, v);
                    count[v] += 2;
                }
                lane[i as usize * n + d as usize] = v as u8;
                lane[d as usize * n + i as usize] = v as u8;
            }
        }
        Ok(Self {
            n,
            available,
            needed,
            lane,
            count,
            cdg,
        })
    }

    /// `balance_virtual_lanes`.
    fn balance(&mut self, paths: &Paths) {
        let (n, lanes) = (self.n, self.needed);
        if lanes <= 1 {
            return;
        }
        debug_assert!(lanes <= self.available);
        let mut loc = Locations::new(n, lanes);
        for s in 0..n {
            for d in 0..n {
                if s != d {
                    loc.set(s, d, self.lane[s * n + d] as usize, 1);
                }
            }
        }
        let mut rng = GlibcRand::new(1);
        let mut max_l = 0usize;
        let mut min_l = lanes - 1;
        let mut trials = self.count[max_l];
        // OpenSM has no bound; this one is never reached by a terminating run.
        let mut budget = 64 * (n * n + 16) as u64;
        loop {
            if loc.ones[max_l] == 0 || budget == 0 {
                break; // OpenSM would search for a pair forever here
            }
            budget -= 1;
            let src = rng.next_u31() as usize % n;
            let dest = rng.next_u31() as usize % n;
            let (src, dest) = loc.find(src, dest, max_l);
            let (s, d) = (src as u32, dest as u32);
            self.cdg.add_path(paths, s, d, min_l);
            self.cdg.add_path(paths, d, s, min_l);
            let mut cycle = self.cdg.take_cycle();
            if !self.cdg.is_ordered(min_l) {
                let first = self.cdg.first_vertex(paths, s, d, min_l);
                let second = self.cdg.first_vertex(paths, d, s, min_l);
                let c1 = self.cdg.dfs_cycle(first);
                let c2 = self.cdg.dfs_cycle(second);
                self.cdg.reset_visits();
                cycle = c1 || c2;
            }
            if cycle {
                self.cdg.remove_temp(paths, s, d, min_l);
                self.cdg.remove_temp(paths, d, s, min_l);
                loc.set(src, dest, max_l, 2);
                loc.set(dest, src, max_l, 2);
                trials -= 2;
            } else {
                self.cdg.make_permanent(paths, s, d, min_l);
                self.cdg.make_permanent(paths, d, s, min_l);
                self.count[max_l] -= 2;
                self.count[min_l] += 2;
                self.cdg.remove_semipermanent(paths, s, d, max_l);
                self.cdg.remove_semipermanent(paths, d, s, max_l);
                loc.set(src, dest, max_l, 0);
                loc.set(dest, src, max_l, 0);
                loc.set(src, dest, min_l, 1);
                loc.set(dest, src, min_l, 1);
                self.lane[src * n + dest] = min_l as u8;
                self.lane[dest * n + src] = min_l as u8;
            }
            let stop = trials == 0 || self.count[max_l] - self.count[min_l] < BALANCE_LIMIT;

            let (old_min, old_max) = (min_l, max_l);
            let (mut lo, mut hi) = (MAX_INT, 0i64);
            for (l, &c) in self.count.iter().enumerate().take(lanes) {
                if c < lo {
                    lo = c;
                    min_l = l;
                }
                if c > hi {
                    hi = c;
                    max_l = l;
                }
            }
            if old_min != min_l {
                trials = self.count[max_l];
                loc.retry(max_l);
            }
            if old_max != max_l {
                trials = self.count[max_l];
                loc.retry(old_max);
            }
            if stop {
                break;
            }
        }
    }
}

/// OpenSM's `virtual_location[src][dest][layer]` (0: not in the layer, 1: in
/// it, 2: in it but failed to move this round), with counts to search fast.
#[derive(Debug)]
struct Locations {
    n: usize,
    /// `state[(layer * n + src) * n + dest]`.
    state: Vec<u8>,
    /// Entries equal to 1 per (layer, src) row and per layer.
    row_ones: Vec<u32>,
    ones: Vec<usize>,
    /// Per layer: where 2 was written (to turn back into 1 without a scan).
    failed: Vec<Vec<(u32, u32)>>,
}

impl Locations {
    fn new(n: usize, lanes: usize) -> Self {
        Self {
            n,
            state: vec![0; n * n * lanes],
            row_ones: vec![0; n * lanes],
            ones: vec![0; lanes],
            failed: vec![Vec::new(); lanes],
        }
    }

    fn get(&self, s: usize, d: usize, l: usize) -> u8 {
        self.state[(l * self.n + s) * self.n + d]
    }

    fn set(&mut self, s: usize, d: usize, l: usize, val: u8) {
        let slot = &mut self.state[(l * self.n + s) * self.n + d];
        if *slot == 1 {
            self.ones[l] -= 1;
            self.row_ones[l * self.n + s] -= 1;
        }
        if val == 1 {
            self.ones[l] += 1;
            self.row_ones[l * self.n + s] += 1;
        }
        if val == 2 {
            self.failed[l].push((s as u32, d as u32));
        }
        *slot = val;
    }

    /// Every 2 of layer `l` back to 1.
    fn retry(&mut self, l: usize) {
        for (s, d) in std::mem::take(&mut self.failed[l]) {
            if self.get(s as usize, d as usize, l) == 2 {
                self.set(s as usize, d as usize, l, 1);
            }
        }
    }

    /// OpenSM's search from a random (src, dest) for a pair of layer `l`:
    /// row by row from `src`, each row cyclically from `dest`. Needs a 1 in
    /// the layer.
    fn find(&self, mut src: usize, dest: usize, l: usize) -> (usize, usize) {
        let n = self.n;
        loop {
            if self.row_ones[l * n + src] > 0 {
                let row = &self.state[(l * n + src) * n..(l * n + src + 1) * n];
                if let Some(d) = (dest..n).chain(0..dest).find(|&d| row[d] == 1) {
                    return (src, d);
                }
            }
            src = (src + 1) % n;
        }
    }
}

#[cfg(test)]
mod tests;
