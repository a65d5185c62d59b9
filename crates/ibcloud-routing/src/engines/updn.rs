//! `updn`: OpenSM's up/down routing (`osm_ucast_updn.c`).
//!
//! 1. **Roots**: the switches of [`EngineOptions::roots`] (OpenSM's
//!    `root_guid_file`; GUIDs that are not switches of the fabric are skipped,
//!    as OpenSM does), or else OpenSM's guess from min-hop distances
//!    (`updn_find_root_nodes_by_min_hop`): a switch is a root when, counting
//!    every CA/router port by the hops from the switch to the switch it is
//!    cabled to, exactly one hop count holds more than 90 % of them and no other
//!    more than 5 %.
//! 2. **Ranks**: breadth-first distance from the nearest root.
//! 3. **Directions**: a link from `a` to `b` goes *up* when `b` has the lower
//!    rank (or, at equal rank, the lower node GUID), *down* otherwise, and up
//!    between two roots.
//! 4. **Hop tables**: per destination switch, OpenSM's breadth-first walk
//!    outward from it that never takes an up step after a down step. The
//!    walk keeps one direction per switch (the one it was queued with) rather
//!    than searching both states, so it is not always the shortest legal path;
//!    it is reproduced exactly, including that.
//! 5. **Tables**: the same per-switch balancing as `minhop` over these hop
//!    tables (module `ucast_mgr`).
//!
//! Like OpenSM, a fabric without roots (none found, or none of the given GUIDs
//! is a switch) or without switches is refused ([`RoutingError::Unsupported`];
//! OpenSM then falls back to minhop). A fabric whose switches are not all
//! connected is [`RoutingError::Disconnected`]. Destinations the walk cannot
//! reach from some switch are left unset there (255), as OpenSM leaves them.

use super::minhop::MinHopTables;
use super::ucast_mgr::{self, HopSource, PortMask, NO_PATH};
use crate::engine::{EngineOptions, Routing, RoutingEngine, RoutingError};
use crate::graph::SwitchGraph;
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Fabric, Guid};

/// OpenSM's up/down engine.
#[derive(Clone, Debug, Default)]
pub struct UpDn {
    roots: Option<Vec<Guid>>,
}

impl UpDn {
    /// An engine with the given root switches (node GUIDs), or OpenSM's own
    /// guess when `None`.
    pub fn new(roots: Option<Vec<Guid>>) -> Self {
        Self { roots }
    }

    /// The registry constructor: reads [`EngineOptions::roots`].
    pub fn boxed(options: &EngineOptions) -> Result<Box<dyn RoutingEngine>, RoutingError> {
        Ok(Box::new(Self::new(options.roots.clone())))
    }

    /// Which switches of `graph` are roots.
    fn roots(
        &self,
        fabric: &Fabric,
        graph: &SwitchGraph,
        dist: &[u8],
    ) -> Result<Vec<bool>, RoutingError> {
        let n = graph.len();
        let mut root = vec![false; n];
        match &self.roots {
            Some(guids) => {
                for g in guids {
                    if let Some(id) = fabric.node_by_guid(*g) {
                        if let Some(&s) = graph.index.get(id.index()).filter(|&&s| s != u32::MAX) {
                            root[s as usize] = true;
                        }
                    }
                }
                if !root.contains(&true) {
                    return Err(RoutingError::Unsupported {
                        engine: "updn",
                        reason: format!(
                            "no root switches: none of the {} GUIDs given is a switch of the fabric",
                            guids.len()
                        ),
                    });
                }
            }
            None => {
                root = roots_by_min_hop(fabric, graph, dist);
                if !root.contains(&true) {
                    return Err(RoutingError::Unsupported {
                        engine: "updn",
                        reason: "no root switches were found by min-hop analysis; give the roots explicitly".into(),
                    });
                }
            }
        }
        Ok(root)
    }
}

/// `updn_find_root_nodes_by_min_hop`.
fn roots_by_min_hop(fabric: &Fabric, graph: &SwitchGraph, dist: &[u8]) -> Vec<bool> {
    const HOPS_MAX: usize = 64;
    let n = graph.len();
    let mut cas_per_sw = vec![0u32; n];
    let mut cas = 0u32;
    for (id, node) in fabric.iter_nodes() {
        if node.is_switch() {
            continue;
        }
        for (_, r) in fabric.neighbors(id) {
            let s = graph.index[r.node.index()];
            if s != u32::MAX {
                cas_per_sw[s as usize] += 1;
                cas += 1;
            }
        }
    }
    let (thd1, thd2) = (f64::from(cas) * 0.9, f64::from(cas) * 0.05);
    (0..n)
        .map(|s| {
            let mut hist = [0u32; HOPS_MAX];
            for (t, &c) in cas_per_sw.iter().enumerate() {
                let h = dist[s * n + t] as usize;
                if c > 0 && h < HOPS_MAX {
                    hist[h] += c;
                }
            }
            let over1 = hist.iter().filter(|&&h| f64::from(h) > thd1).count();
            let over2 = hist.iter().filter(|&&h| f64::from(h) > thd2).count();
            over1 == 1 && over2 == 1
        })
        .collect()
}

impl RoutingEngine for UpDn {
    fn name(&self) -> &'static str {
        "updn"
    }

    fn route(&self, fabric: &Fabric) -> Result<Routing, RoutingError> {
        let graph = SwitchGraph::new(fabric)?;
        if graph.is_empty() {
            return Err(RoutingError::Unsupported {
                engine: "updn",
                reason: "this is not a switched subnet".into(),
            });
        }
        let order = ucast_mgr::port_order(self.name(), fabric, &graph)?;
        let dist = ucast_mgr::distances(&graph);
        ucast_mgr::check_connected(self.name(), fabric, &graph, &dist)?;
        let root = self.roots(fabric, &graph, &dist)?;
        let walk = Walk::new(fabric, &graph, &root);
        let tables = match ucast_mgr::mask_words(&graph) {
            1 => build::<1>(fabric, &graph, &order, &dist, &walk),
            2 => build::<2>(fabric, &graph, &order, &dist, &walk),
            3 => build::<3>(fabric, &graph, &order, &dist, &walk),
            _ => build::<4>(fabric, &graph, &order, &dist, &walk),
        };
        Ok(Routing {
            tables,
            path_sls: None,
        })
    }
}

/// The tables from the walk's hop tables.
fn build<const W: usize>(
    fabric: &Fabric,
    graph: &SwitchGraph,
    order: &[ucast_mgr::Dest],
    dist: &[u8],
    walk: &Walk,
) -> ForwardingTables {
    if walk.down.is_empty() {
        // Without a single down step (every switch a root, as OpenSM finds on
        // two-level trees and on ft11664) the walk is a plain shortest-path
        // search: min-hop's tables are its result.
        ucast_mgr::build_lfts::<W>(fabric, graph, order, &MinHopTables { graph, dist })
    } else {
        ucast_mgr::build_lfts::<W>(fabric, graph, order, &walk.tables::<W>())
    }
}

/// The switch-port graph with up/down directions, flattened.
struct Walk {
    n: usize,
    /// Per switch, its first slot in the flat port arrays.
    start: Vec<u32>,
    /// Every switch-to-switch port, switch by switch in port order.
    slots: Vec<Slot>,
    /// Per switch, its first slot in `down`.
    down_start: Vec<u32>,
    /// The slots that step down, switch by switch in port order: all a switch
    /// reached by a down step may take.
    down: Vec<Slot>,
}

/// A switch-to-switch port in the walk.
#[derive(Clone, Copy, Debug)]
struct Slot {
    /// The neighbour switch.
    remote: u32,
    /// The neighbour's slot of the same link.
    back: u32,
    /// Its position among the neighbour's slots.
    back_pos: u8,
    /// True if the step from this switch to the neighbour goes up.
    up: bool,
}

impl Walk {
    fn new(fabric: &Fabric, graph: &SwitchGraph, root: &[bool]) -> Self {
        let n = graph.len();
        // Ranks: breadth-first from the roots.
        let mut rank = vec![u32::MAX; n];
        let mut queue = std::collections::VecDeque::new();
        for s in ucast_mgr::switch_table_order(fabric, graph) {
            if root[s as usize] {
                rank[s as usize] = 0;
                queue.push_back(s);
            }
        }
        while let Some(u) = queue.pop_front() {
            for sp in &graph.ports[u as usize] {
                if rank[sp.remote as usize] > rank[u as usize].saturating_add(1) {
                    rank[sp.remote as usize] = rank[u as usize] + 1;
                    queue.push_back(sp.remote);
                }
            }
        }
        let id: Vec<u64> = graph
            .switches
            .iter()
            .map(|&s| fabric.node(s).guid.0)
            .collect();
        let mut start = Vec::with_capacity(n + 1);
        let mut total = 0u32;
        for p in &graph.ports {
            start.push(total);
            total += p.len() as u32;
        }
        start.push(total);
        let mut slots = Vec::with_capacity(total as usize);
        for (u, ports) in graph.ports.iter().enumerate() {
            for sp in ports {
                let r = sp.remote as usize;
                let k = graph.ports[r]
                    .iter()
                    .position(|q| q.port == sp.remote_port && q.remote as usize == u);
                let k = k.unwrap_or(0);
                slots.push(Slot {
                    remote: sp.remote,
                    back: start[r] + k as u32,
                    back_pos: k as u8,
                    up: goes_up(rank[u], rank[r], id[u], id[r]),
                });
            }
        }
        let mut down_start = Vec::with_capacity(n + 1);
        let mut down = Vec::new();
        for u in 0..n {
            down_start.push(down.len() as u32);
            down.extend(
                slots[start[u] as usize..start[u + 1] as usize]
                    .iter()
                    .filter(|s| !s.up),
            );
        }
        down_start.push(down.len() as u32);
        Self {
            n,
            start,
            slots,
            down_start,
            down,
        }
    }

    /// Runs the walk from every destination switch and collects least hops and
    /// min-hop ports, column by column (`[destination * n + switch]`).
    fn tables<const W: usize>(&self) -> WalkTables<W> {
        let n = self.n;
        let threads = std::thread::available_parallelism()
            .map_or(1, |t| t.get())
            .min(n.div_ceil(32))
            .max(1);
        let chunk = n.div_ceil(threads);
        // Each thread walks a range of destinations into its own columns.
        let run = |dests: std::ops::Range<usize>| -> (Vec<u8>, Vec<PortMask<W>>) {
            let mut st = WalkState::new(self);
            let mut least = vec![NO_PATH; dests.len() * n];
            let mut masks = vec![[0u64; W]; dests.len() * n];
            for (i, d) in dests.enumerate() {
                let cols = (
                    &mut least[i * n..(i + 1) * n],
                    &mut masks[i * n..(i + 1) * n],
                );
                self.walk(d, &mut st, cols.0, cols.1);
            }
            (least, masks)
        };
        let parts: Vec<(Vec<u8>, Vec<PortMask<W>>)> = if threads == 1 {
            vec![run(0..n)]
        } else {
            std::thread::scope(|scope| {
                let hs: Vec<_> = (0..threads)
                    .map(|t| {
                        let r = t * chunk..((t + 1) * chunk).min(n);
                        let f = &run;
                        scope.spawn(move || f(r))
                    })
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .collect()
            })
        };
        let mut least = Vec::with_capacity(n * n);
        let mut masks = Vec::with_capacity(n * n);
        for (l, m) in parts {
            least.extend_from_slice(&l);
            masks.extend_from_slice(&m);
        }
        WalkTables { n, least, masks }
    }

    /// `updn_bfs_by_node` from destination switch `d`, leaving every switch's
    /// least hops towards `d` in `least` and its least-hop ports in `masks`.
    ///
    /// A port's hop count only ever decreases, so the least-hop port set is
    /// kept up to date as counts are lowered instead of scanned afterwards.
    /// A switch is processed each time it is dequeued; processing it again
    /// with a least hop count and direction no better than an earlier
    /// processing (up allows every step, down only down steps) cannot lower
    /// any hop count, so it is skipped.
    fn walk<const W: usize>(
        &self,
        d: usize,
        st: &mut WalkState,
        least: &mut [u8],
        masks: &mut [PortMask<W>],
    ) {
        let WalkState {
            hops,
            up,
            done_up,
            done_down,
            queued,
            queue,
        } = st;
        let (start, slots) = (&self.start[..], &self.slots[..]);
        hops.fill(NO_PATH);
        done_up.fill(u8::MAX);
        done_down.fill(u8::MAX);
        least[d] = 0;
        up[d] = true;
        queue.clear();
        queue.push_back(d as u32);
        while let Some(u) = queue.pop_front() {
            let u = u as usize;
            queued[u] = false;
            let going_up = up[u];
            let cur = least[u];
            if going_up {
                if done_up[u] <= cur {
                    continue;
                }
                done_up[u] = cur;
            } else {
                if done_up[u] <= cur || done_down[u] <= cur {
                    continue;
                }
                done_down[u] = cur;
            }
            if cur >= NO_PATH - 1 {
                continue;
            }
            let next = cur + 1;
            let mine = if going_up {
                &slots[start[u] as usize..start[u + 1] as usize]
            } else {
                &self.down[self.down_start[u] as usize..self.down_start[u + 1] as usize]
            };
            for slot in mine {
                let b = slot.back as usize;
                if next < hops[b] {
                    hops[b] = next;
                    let r = slot.remote as usize;
                    let (w, bit) = (slot.back_pos as usize / 64, 1u64 << (slot.back_pos % 64));
                    if next < least[r] {
                        least[r] = next;
                        masks[r] = [0; W];
                        masks[r][w] = bit;
                    } else if next == least[r] {
                        masks[r][w] |= bit;
                    }
                    if !queued[r] {
                        up[r] = slot.up;
                        queued[r] = true;
                        queue.push_back(r as u32);
                    }
                }
            }
        }
        // The destination itself routes to port 0, never through these.
        masks[d] = [0; W];
    }
}

/// `updn_get_dir`: true for up.
fn goes_up(cur_rank: u32, rem_rank: u32, cur_id: u64, rem_id: u64) -> bool {
    if cur_rank == 0 && rem_rank == 0 {
        return true;
    }
    match cur_rank.cmp(&rem_rank) {
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Equal => cur_id > rem_id,
    }
}

/// Buffers of one walk.
struct WalkState {
    hops: Vec<u8>,
    up: Vec<bool>,
    /// Least hop count of the best processing so far going up / down.
    done_up: Vec<u8>,
    done_down: Vec<u8>,
    queued: Vec<bool>,
    queue: std::collections::VecDeque<u32>,
}

impl WalkState {
    fn new(w: &Walk) -> Self {
        Self {
            hops: vec![NO_PATH; w.slots.len()],
            up: vec![false; w.n],
            done_up: vec![u8::MAX; w.n],
            done_down: vec![u8::MAX; w.n],
            queued: vec![false; w.n],
            queue: std::collections::VecDeque::with_capacity(w.n),
        }
    }
}

/// The walk's results for every switch pair, `[destination * n + switch]`.
struct WalkTables<const W: usize> {
    n: usize,
    least: Vec<u8>,
    masks: Vec<PortMask<W>>,
}

impl<const W: usize> HopSource<W> for WalkTables<W> {
    fn fill(&self, s: usize, least: &mut [u8], masks: &mut [PortMask<W>]) {
        for (d, (l, m)) in least.iter_mut().zip(masks.iter_mut()).enumerate() {
            *l = self.least[d * self.n + s];
            *m = self.masks[d * self.n + s];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::minhop::MinHop;
    use crate::engines::ucast_mgr::tests::{
        check_routes, diff, fixture, fixture_roots, random_fabric,
    };
    use ibcloud_fabric::generate::preset;

    fn check_fixture(name: &str) {
        let (f, theirs) = fixture(
            name.split("-lmc").next().unwrap_or(name),
            &format!("updn/{name}"),
        );
        let ours = UpDn::default().route(&f).unwrap().tables;
        let (n, first) = diff(&f, &ours, &theirs, 10);
        assert_eq!(
            n, 0,
            "{name}: {n} entries differ from OpenSM, first: {first:?}"
        );
    }

    #[test]
    fn matches_opensm_on_4_ary_2_full() {
        check_fixture("4-ary-2-full");
    }

    #[test]
    fn matches_opensm_on_8_ary_2() {
        check_fixture("8-ary-2");
    }

    #[test]
    fn matches_opensm_on_4_ary_3_full() {
        check_fixture("4-ary-3-full");
    }

    #[test]
    fn matches_opensm_on_16_ary_2() {
        check_fixture("16-ary-2");
    }

    #[test]
    fn routes_random_fabrics_without_loops() {
        let (mut routed, mut refused) = (0, 0);
        for seed in 0..200 {
            let f = random_fabric(seed, (seed % 3) as u8);
            match UpDn::default().route(&f) {
                Ok(r) => {
                    check_routes(&f, &r.tables, false, false);
                    routed += 1;
                }
                Err(RoutingError::Disconnected { .. } | RoutingError::Unsupported { .. }) => {
                    refused += 1
                }
                Err(e) => panic!("seed {seed}: {e}"),
            }
        }
        assert!(
            routed > 50 && refused > 0,
            "{routed} routed, {refused} refused"
        );
    }

    #[test]
    fn given_roots_route_random_fabrics_without_loops() {
        let mut routed = 0;
        for seed in 0..200 {
            let f = random_fabric(seed, 0);
            let roots: Vec<Guid> = f
                .switches()
                .take(1 + seed as usize % 2)
                .map(|s| f.node(s).guid)
                .collect();
            if let Ok(r) = UpDn::new(Some(roots)).route(&f) {
                check_routes(&f, &r.tables, false, false);
                routed += 1;
            }
        }
        assert!(routed > 100, "{routed} routed");
    }

    #[test]
    fn matches_opensm_with_lmc_1() {
        check_fixture("4-ary-3-full-lmc1");
    }

    fn check_roots_fixture(preset: &str, dir: &str) -> (Fabric, ForwardingTables) {
        let (f, theirs) = fixture(preset, &format!("updn/{dir}"));
        let roots = fixture_roots(&format!("updn/{dir}"));
        let t = UpDn::new(Some(roots)).route(&f).unwrap().tables;
        let (n, first) = diff(&f, &t, &theirs, 10);
        assert_eq!(
            n, 0,
            "{dir}: {n} entries differ from OpenSM, first: {first:?}"
        );
        (f, t)
    }

    #[test]
    fn matches_opensm_with_given_roots() {
        // OpenSM's root_guid_file held the 16 spines.
        let (f, t) = check_roots_fixture("4-ary-3-full", "4-ary-3-full-roots");
        // Every CA LID is reached on a shortest path; switches that share no
        // root and are not above one another (e.g. two middle switches of one
        // pod) have no up/down route between them, and OpenSM leaves those
        // switch LIDs unset.
        check_routes(&f, &t, true, true);
        assert_eq!(t.unrouted(&f, true), 1776);
    }

    #[test]
    fn matches_opensm_on_non_trees_with_given_roots() {
        // 20 switches linked at random, 39 CAs, LMC 1, three roots; many
        // destinations have no up/down route from some switches.
        let (f, t) = check_roots_fixture("", "random-lmc1-roots");
        assert!(t.unrouted(&f, true) > 0);
        // A 4 x 4 torus with some doubled links, three roots.
        check_roots_fixture("", "torus-roots");
    }

    #[test]
    #[ignore = "big tree: run with --ignored (release mode recommended)"]
    fn routes_ft11664_from_the_spines_on_shortest_paths() {
        let mut f = preset("ft11664").unwrap().build().unwrap();
        f.infer_ranks();
        let roots = f
            .switches()
            .filter(|&s| f.node(s).rank == Some(0))
            .map(|s| f.node(s).guid)
            .collect();
        let t = UpDn::new(Some(roots)).route(&f).unwrap().tables;
        check_routes(&f, &t, true, true);
        // OpenSM itself takes every switch as a root here: min-hop's tables.
        assert_eq!(
            UpDn::default().route(&f).unwrap(),
            MinHop.route(&f).unwrap()
        );
    }

    #[test]
    fn all_roots_is_min_hop() {
        let f = preset("8-ary-2").unwrap().build().unwrap();
        let roots = f.switches().map(|s| f.node(s).guid).collect();
        let updn = UpDn::new(Some(roots)).route(&f).unwrap();
        assert_eq!(updn, MinHop.route(&f).unwrap());
    }

    #[test]
    fn refuses_without_roots() {
        let f = preset("4-ary-2-full").unwrap().build().unwrap();
        let ca = f.cas().next().unwrap();
        for roots in [vec![], vec![Guid(0xdead)], vec![f.node(ca).guid]] {
            let err = UpDn::new(Some(roots)).route(&f).unwrap_err();
            assert!(
                matches!(err, RoutingError::Unsupported { engine: "updn", .. }),
                "{err}"
            );
        }
        // A ring of four switches with a CA each: every switch sees CAs at
        // hops 0, 1 and 2, so min-hop analysis finds no root.
        let mut b = ibcloud_fabric::FabricBuilder::new();
        use ibcloud_fabric::{NodeKind, NodeSpec, PortRef};
        let sw: Vec<_> = (0..4u64)
            .map(|i| {
                b.add_node(NodeSpec::new(
                    NodeKind::Switch,
                    Guid(0x100 + i),
                    4,
                    format!("s{i}"),
                ))
                .unwrap()
            })
            .collect();
        for i in 0..4 {
            b.connect(
                PortRef::new(sw[i], 1),
                PortRef::new(sw[(i + 1) % 4], 2),
                Default::default(),
            )
            .unwrap();
            let ca = b
                .add_node(NodeSpec::new(
                    NodeKind::Ca,
                    Guid(0x200 + i as u64),
                    1,
                    format!("h{i}"),
                ))
                .unwrap();
            b.connect(
                PortRef::new(sw[i], 3),
                PortRef::new(ca, 1),
                Default::default(),
            )
            .unwrap();
        }
        let mut ring = b.build();
        ibcloud_fabric::lids::assign_lids(&mut ring, &Default::default()).unwrap();
        let err = UpDn::default().route(&ring).unwrap_err();
        assert!(
            matches!(err, RoutingError::Unsupported { engine: "updn", .. }),
            "{err}"
        );
        // With a root given it routes the ring.
        let t = UpDn::new(Some(vec![Guid(0x100)]))
            .route(&ring)
            .unwrap()
            .tables;
        assert_eq!(check_routes(&ring, &t, false, true), 0);
    }
}
