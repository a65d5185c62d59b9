//! Paper IV's SlimUpdate (Algorithms 1–3, reference C §2.5): fat-tree
//! routing that keeps each destination's existing port choices as long as
//! the port works and stays under its cap (Minimal Routing Update).
//!
//! Per leaf in ftree's tuple order, per compute node (nodes that have an
//! entry in the old tables first, then new ones; port order otherwise), the
//! destination's downward path is built going up from its leaf
//! (Algorithm 2): at every switch the old main up port is kept if it still
//! works and has routed fewer destinations than its cap; otherwise the
//! least-loaded up port is taken, ties to the remote switch with the largest
//! GUID (OpenSM's `get_port_max_guid`), then to the lowest port. From every
//! switch on that path, the up-going routes of the switches below it are set
//! going down (Algorithm 3), keeping the old port among parallel links when
//! it is still among the least loaded.
//!
//! Decisions where the paper is silent (reference C §2.5, all [inferred]):
//!
//! - **Caps**: for the up ports of switch `s`, `ceil(E(s) / U(s))` where
//!   `U(s)` is its working up ports and `E(s)` the destinations expected
//!   through it: the live compute nodes of a leaf, and above the leaves the
//!   sum over the links from below of `E(child) / U(child)`.
//! - **Old main path**: the old downward path is read from the old tables by
//!   walking them from a leaf in another top-level sub-tree: every up-route
//!   converges on the old main root, and the descent from it names the main
//!   switch of every level. A switch's old up port is the one towards the
//!   old main switch one level up, if that switch still forwards the
//!   destination down to it.
//! - **Blank switches**: switches the recursion does not reach (ftree fills
//!   them with secondary routes) keep their old port if it still leads the
//!   right way (down towards the destination's leaf when it is below, else
//!   up towards a switch from which it can be reached), else the first such
//!   port; a switch from which the leaf cannot be reached at all (e.g. a
//!   middle switch that lost its only link to it) gets no entry, so that no
//!   old down-going entry meets a new up-going one during the transition.
//! - **Switch LIDs**: min-hop up/down, keeping old ports; a leaf left
//!   without an up/down path to a switch after a failure gets a route with
//!   one down→up turn, so every CA still reaches every switch (see
//!   `switch_lids`).
//!
//! The result is deterministic; the third level of 3-level trees is balanced
//! a little less well than by ftree (the paper says so too).

use std::time::{Duration, Instant};

use ibcloud_fabric::lft::{ForwardingTables, NO_PORT};
use ibcloud_fabric::{Fabric, Guid, Lid, PortRef};
use ibcloud_routing::EngineOptions;
use serde::{Deserialize, Serialize};

use crate::error::ReconfigError;
use crate::switch_lids::route_switch_lids;
use crate::topo::{Topo, NONE};

/// SlimUpdate's options.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SlimUpdateOptions {
    /// Root switches by node GUID; default: the roots ftree finds in the
    /// fabric before the event (a degraded tree is then still ranked the same
    /// way, and ftree's symmetry check is skipped, as with OpenSM's
    /// `root_guid_file`).
    pub roots: Option<Vec<Guid>>,
    /// Keep old port choices (on: SlimUpdate; off: the same routine without
    /// memory, i.e. SlimUpdate's first run).
    pub keep: Option<bool>,
    /// The literal reading of Algorithm 2's test (a variant, reported beside
    /// the default): the old port is kept only while the *switch* has routed
    /// fewer destinations in total than the port's cap
    /// (`sw.num_allocated_paths()` as printed), instead of the port's own
    /// counter (the prose, C §2.5). Off by default.
    pub switch_counter: bool,
    /// Caps by integer division, `max(1, floor(E / U))` (what C's `/` gives
    /// in an OpenSM patch; a variant beside the default `ceil(E / U)`, which
    /// never forces a balanced choice to move). Off by default.
    pub cap_floor: bool,
}

/// SlimUpdate's tables and statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct SlimUpdateResult {
    /// The new tables.
    pub tables: ForwardingTables,
    /// Destinations routed.
    pub destinations: u64,
    /// Up-port choices (one per destination and level) kept from the old tables.
    pub kept: u64,
    /// Up-port choices made afresh.
    pub moved: u64,
    /// Time spent routing (the view of the new fabric included).
    pub time: Duration,
}

/// Serialisable summary of a [`SlimUpdateResult`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlimUpdateStats {
    /// Destinations routed.
    pub destinations: u64,
    /// Kept up-port choices.
    pub kept: u64,
    /// Fresh up-port choices.
    pub moved: u64,
}

/// The roots ftree's ranking finds in `fabric`: the switches farthest from
/// the switches with CAs (a BFS over switch links, as OpenSM's first
/// ranking pass; no symmetry check, so it also works on a degraded tree).
pub fn roots_of(fabric: &Fabric) -> Result<Vec<Guid>, ReconfigError> {
    let n = fabric.num_nodes();
    let mut dist = vec![u32::MAX; n];
    let mut queue = std::collections::VecDeque::new();
    for sw in fabric.switches() {
        if fabric
            .neighbors(sw)
            .any(|(_, r)| !fabric.node(r.node).is_switch())
        {
            dist[sw.index()] = 0;
            queue.push_back(sw);
        }
    }
    while let Some(s) = queue.pop_front() {
        for (_, r) in fabric.neighbors(s) {
            if fabric.node(r.node).is_switch() && dist[r.node.index()] == u32::MAX {
                dist[r.node.index()] = dist[s.index()] + 1;
                queue.push_back(r.node);
            }
        }
    }
    let max = fabric
        .switches()
        .map(|s| dist[s.index()])
        .filter(|&d| d != u32::MAX)
        .max()
        .ok_or_else(|| ReconfigError::NotFatTree("no switch is cabled to a CA".into()))?;
    if max == 0 {
        return Err(ReconfigError::NotFatTree(
            "the switches form a single level".into(),
        ));
    }
    Ok(fabric
        .switches()
        .filter(|s| dist[s.index()] == max)
        .map(|s| fabric.node(s).guid)
        .collect())
}

/// SlimUpdate's first run: no old tables.
pub fn slim_initial(fabric: &Fabric) -> Result<SlimUpdateResult, ReconfigError> {
    let roots = roots_of(fabric)?;
    run(None, None, fabric, &roots, false, false)
}

/// Re-routes `new_fabric` keeping the choices of `old` (the tables installed
/// on `old_fabric`, the fabric before the event; node ids must match).
pub fn slim_update(
    old_fabric: &Fabric,
    old: &ForwardingTables,
    new_fabric: &Fabric,
    options: &SlimUpdateOptions,
) -> Result<SlimUpdateResult, ReconfigError> {
    if old_fabric.num_nodes() != new_fabric.num_nodes() || old.num_nodes() != old_fabric.num_nodes()
    {
        return Err(ReconfigError::WrongTables {
            tables: old.num_nodes(),
            fabric: new_fabric.num_nodes(),
        });
    }
    let roots = match &options.roots {
        Some(r) => r.clone(),
        None => roots_of(old_fabric)?,
    };
    let keep = options.keep.unwrap_or(true);
    run(
        keep.then_some(old_fabric),
        keep.then_some(old),
        new_fabric,
        &roots,
        options.switch_counter,
        options.cap_floor,
    )
}

struct Router<'a> {
    t: &'a Topo,
    old_fabric: Option<&'a Fabric>,
    old: Option<&'a ForwardingTables>,
    /// Offsets of each switch's up hops / down hops in the counters.
    up_off: Vec<usize>,
    down_off: Vec<usize>,
    cnt_down: Vec<u32>,
    cnt_up: Vec<u32>,
    cap: Vec<u32>,
    /// Per destination: switch written?
    seen: Vec<bool>,
    col: Vec<u8>,
    pod: Vec<u32>,
    /// Per switch: can reach the current leaf going up then down.
    reach: Vec<bool>,
    reach_leaf: usize,
    /// Per switch, for the current leaf: ports a blank entry may use, and the first.
    blank_mask: Vec<[u64; 4]>,
    blank_first: Vec<u8>,
    kept: u64,
    moved: u64,
    /// Algorithm 2's literal switch-level counter (see [`SlimUpdateOptions`]).
    switch_counter: bool,
}

fn run(
    old_fabric: Option<&Fabric>,
    old: Option<&ForwardingTables>,
    fabric: &Fabric,
    roots: &[Guid],
    switch_counter: bool,
    cap_floor: bool,
) -> Result<SlimUpdateResult, ReconfigError> {
    let t0 = Instant::now();
    let opts = EngineOptions {
        roots: Some(roots.to_vec()),
        ..EngineOptions::default()
    };
    let t = Topo::build(fabric, &opts)?;
    let n = t.len();
    let mut up_off = vec![0; n + 1];
    let mut down_off = vec![0; n + 1];
    for s in 0..n {
        up_off[s + 1] = up_off[s] + t.up[s].len();
        down_off[s + 1] = down_off[s] + t.down[s].len();
    }
    // Caps, from the leaves up.
    let mut e = vec![0f64; n];
    let mut order = t.top_down();
    order.reverse();
    for &s in &order {
        let si = s as usize;
        if t.leaf_pos[si] != NONE {
            e[si] += t.cns[si].len() as f64;
        }
        let u = t.up[si].len();
        if u > 0 {
            let share = e[si] / u as f64;
            for h in &t.up[si] {
                e[h.remote as usize] += share;
            }
        }
    }
    let cap: Vec<u32> = (0..n)
        .map(|s| {
            let u = t.up[s].len().max(1) as f64;
            let share = e[s] / u;
            let c = if cap_floor {
                (share + 1e-9).floor()
            } else {
                (share - 1e-9).ceil()
            };
            c.max(1.0) as u32
        })
        .collect();
    // Pods: components of the switches below the roots.
    let mut pod = vec![NONE; n];
    let mut next_pod = 0;
    for &l in &t.leaves {
        if pod[l as usize] != NONE {
            continue;
        }
        let mut stack = vec![l];
        pod[l as usize] = next_pod;
        while let Some(s) = stack.pop() {
            for h in t.up[s as usize].iter().chain(&t.down[s as usize]) {
                let r = h.remote as usize;
                if t.rank[r] > 0 && t.rank[r] != u32::MAX && pod[r] == NONE {
                    pod[r] = next_pod;
                    stack.push(h.remote);
                }
            }
        }
        next_pod += 1;
    }
    let mut r = Router {
        t: &t,
        old_fabric,
        old,
        cnt_down: vec![0; up_off[n]],
        cnt_up: vec![0; down_off[n]],
        up_off,
        down_off,
        cap,
        seen: vec![false; n],
        col: vec![NO_PORT; n],
        pod,
        reach: vec![false; n],
        reach_leaf: usize::MAX,
        blank_mask: vec![[0; 4]; n],
        blank_first: vec![NO_PORT; n],
        kept: 0,
        moved: 0,
        switch_counter,
    };
    let mut tables = ForwardingTables::new(fabric);
    let mut destinations = 0;
    let mut batch_lids: Vec<Lid> = Vec::with_capacity(BATCH);
    let mut batch: Vec<u8> = Vec::with_capacity(BATCH * n);
    for (li, &leaf) in t.leaves.iter().enumerate() {
        let mut cns = t.cns[leaf as usize].clone();
        if let Some(o) = old {
            let ln = t.node[leaf as usize];
            cns.sort_by_key(|c| o.get(ln, c.lid).is_none());
        }
        for c in cns {
            r.route(li, leaf, c.lid, c.leaf_port);
            // Columns are buffered and written 64 at a time, switch by
            // switch, so each LFT row is touched once per batch.
            batch_lids.push(c.lid);
            batch.extend_from_slice(&r.col);
            if batch_lids.len() == BATCH {
                flush(&t, &mut tables, &mut batch_lids, &mut batch);
            }
            destinations += 1;
        }
    }
    flush(&t, &mut tables, &mut batch_lids, &mut batch);
    route_switch_lids(&t, fabric, old, &mut tables);
    Ok(SlimUpdateResult {
        tables,
        destinations,
        kept: r.kept,
        moved: r.moved,
        time: t0.elapsed(),
    })
}

/// Destinations per batch of buffered columns.
const BATCH: usize = 64;

/// Writes buffered columns (`batch[i * n + s]` for `lids[i]`) switch by switch.
fn flush(t: &Topo, tables: &mut ForwardingTables, lids: &mut Vec<Lid>, batch: &mut Vec<u8>) {
    let n = t.len();
    for s in 0..n {
        if !t.is_switch(s as u32) {
            continue;
        }
        for (i, &lid) in lids.iter().enumerate() {
            let p = batch[i * n + s];
            if p != NO_PORT {
                tables.set(t.node[s], lid, p);
            }
        }
    }
    lids.clear();
    batch.clear();
}

impl Router<'_> {
    /// The old main switch per rank for `lid` (NONE where unknown).
    fn old_main(&self, leaf_pos: usize, lid: Lid) -> Vec<u32> {
        let t = self.t;
        let mut main = vec![NONE; t.leaf_rank as usize + 1];
        let (Some(f), Some(old)) = (self.old_fabric, self.old) else {
            return main;
        };
        let my_pod = self.pod[t.leaves[leaf_pos] as usize];
        let Some(&far) = t.leaves.iter().find(|&&l| self.pod[l as usize] != my_pod) else {
            return main;
        };
        let mut path = Vec::new();
        let mut sw = t.node[far as usize];
        for _ in 0..64 {
            let s = t.by_node[sw.index()];
            if s == NONE {
                break;
            }
            path.push(s);
            let Some(p) = old.get(sw, lid) else { break };
            match f.remote(PortRef::new(sw, p)) {
                Some(x) if f.node(x.node).is_switch() => sw = x.node,
                _ => break,
            }
        }
        let Some(top) = path.iter().position(|&s| {
            path.iter()
                .all(|&o| t.rank[o as usize] >= t.rank[s as usize])
        }) else {
            return main;
        };
        for &s in &path[top..] {
            let rk = t.rank[s as usize] as usize;
            if rk < main.len() && main[rk] == NONE {
                main[rk] = s;
            }
        }
        main
    }

    fn old_port(&self, s: u32, lid: Lid) -> u8 {
        self.old
            .and_then(|o| o.get(self.t.node[s as usize], lid))
            .unwrap_or(NO_PORT)
    }

    fn route(&mut self, leaf_pos: usize, leaf: u32, lid: Lid, leaf_port: u8) {
        let t = self.t;
        self.seen.iter_mut().for_each(|x| *x = false);
        self.col.iter_mut().for_each(|x| *x = NO_PORT);
        self.seen[leaf as usize] = true;
        self.col[leaf as usize] = leaf_port;
        if self.reach_leaf != leaf_pos {
            self.reach_leaf = leaf_pos;
            self.reach = t.reach(leaf_pos);
            // Per switch, the ports a blank entry may use for this leaf: down
            // towards it when it is below, else up towards a switch that can
            // reach it.
            for s in 0..t.len() {
                let below = t.below[s].contains(leaf_pos);
                let hops = if below { &t.down[s] } else { &t.up[s] };
                let mut mask = [0u64; 4];
                let mut first = NO_PORT;
                for h in hops {
                    let ok = if below {
                        t.below[h.remote as usize].contains(leaf_pos)
                    } else {
                        self.reach[h.remote as usize]
                    };
                    if ok {
                        mask[h.port as usize / 64] |= 1 << (h.port % 64);
                        if first == NO_PORT {
                            first = h.port;
                        }
                    }
                }
                self.blank_mask[s] = mask;
                self.blank_first[s] = first;
            }
        }
        let main = self.old_main(leaf_pos, lid);
        let mut sw = leaf;
        let mut prev = NONE;
        loop {
            self.descend(sw, prev, lid);
            let si = sw as usize;
            if t.up[si].is_empty() {
                break;
            }
            let rk = t.rank[si] as usize;
            let want = if rk > 0 { main[rk - 1] } else { NONE };
            let base = self.up_off[si];
            let cur = (want != NONE)
                .then(|| {
                    t.up[si]
                        .iter()
                        .position(|h| h.remote == want && self.old_port(h.remote, lid) == h.rport)
                })
                .flatten();
            let used = if self.switch_counter {
                self.cnt_down[base..base + t.up[si].len()]
                    .iter()
                    .sum::<u32>()
            } else {
                cur.map_or(0, |i| self.cnt_down[base + i])
            };
            let sel = match cur {
                Some(i) if used < self.cap[si] && !self.seen[t.up[si][i].remote as usize] => {
                    self.kept += 1;
                    i
                }
                _ => {
                    self.moved += u64::from(self.old.is_some());
                    let mut best = None::<(u32, std::cmp::Reverse<Guid>, u8, usize)>;
                    for (i, h) in t.up[si].iter().enumerate() {
                        if self.seen[h.remote as usize] {
                            continue;
                        }
                        let key = (
                            self.cnt_down[base + i],
                            std::cmp::Reverse(t.guid[h.remote as usize]),
                            h.port,
                            i,
                        );
                        if best.is_none_or(|b| key < b) {
                            best = Some(key);
                        }
                    }
                    match best {
                        Some(b) => b.3,
                        None => break,
                    }
                }
            };
            let h = t.up[si][sel];
            self.cnt_down[base + sel] += 1;
            self.seen[h.remote as usize] = true;
            self.col[h.remote as usize] = h.rport;
            prev = sw;
            sw = h.remote;
        }
        // Blank switches.
        for s in 0..t.len() {
            if !t.is_switch(s as u32) || self.seen[s] {
                continue;
            }
            let oldp = self.old_port(s as u32, lid);
            let m = &self.blank_mask[s];
            self.col[s] = if oldp != NO_PORT && m[oldp as usize / 64] & (1 << (oldp % 64)) != 0 {
                oldp
            } else {
                self.blank_first[s]
            };
        }
    }

    /// Algorithm 3: up-going routes on the switches below `sw` (not via `prev`).
    fn descend(&mut self, sw: u32, prev: u32, lid: Lid) {
        let t = self.t;
        let mut stack = vec![(sw, prev)];
        while let Some((s, excl)) = stack.pop() {
            let si = s as usize;
            let base = self.down_off[si];
            let hops = &t.down[si];
            let mut i = 0;
            while i < hops.len() {
                // One group: consecutive hops to the same remote.
                let r = hops[i].remote;
                let mut j = i;
                while j < hops.len() && hops[j].remote == r {
                    j += 1;
                }
                if r != excl && !self.seen[r as usize] {
                    let oldp = self.old_port(r, lid);
                    let min = (i..j).map(|k| self.cnt_up[base + k]).min().unwrap_or(0);
                    let keep =
                        (i..j).find(|&k| hops[k].rport == oldp && self.cnt_up[base + k] == min);
                    let sel = keep.unwrap_or_else(|| {
                        (i..j).find(|&k| self.cnt_up[base + k] == min).unwrap_or(i)
                    });
                    self.cnt_up[base + sel] += 1;
                    self.seen[r as usize] = true;
                    self.col[r as usize] = hops[sel].rport;
                    stack.push((r, NONE));
                }
                i = j;
            }
        }
    }
}
