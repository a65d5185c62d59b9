//! Routing on the constructed tree: OpenSM's `fabric_route_to_cns`,
//! `fabric_route_to_non_cns` and `fabric_route_to_switches` with the two
//! recursions (down-going routes found by going up, up-going routes by going
//! down) and their port counters.
//!
//! Every decision is OpenSM's; the work is organised differently:
//!
//! - OpenSM keeps per-switch, per-LID hop and LFT arrays, but a LID's entries
//!   are only read while that LID is routed (the dummy LID 0 is wiped after
//!   each use). One column per switch for the LID in progress is equivalent
//!   and stays in L1 cache; finished columns are transposed into the tables at
//!   the end.
//! - OpenSM re-sorts port groups with a bubble sort, which is quadratic for
//!   groups that move towards the front. Its comparators are total preorders
//!   (see [`Router::sort_down`] for the one exception), and a bubble sort that
//!   swaps only strictly misordered neighbours yields the unique stable order,
//!   so an insertion sort gives the identical array. Counters and tuple ranks
//!   are packed into one sort key per group.
//! - Most of OpenSM's time goes into scanning the groups below a switch only to
//!   find every switch there already routed with as few hops. Switches with the
//!   same switches below them form a class; after one scan, the most hops found
//!   below is remembered for the class, and a later scan of any switch of the
//!   class that cannot beat it is skipped. Hop counts only decrease while a
//!   LID is routed (the exception, a dummy CN's leaf, switches this off), so
//!   the bound stays valid, and a skipped scan would have changed nothing: its
//!   postponed sort gives the same order when the next real scan sorts.

use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::Lid;

use super::build::{Switch, Tree};
use super::unsupported;
use crate::engine::RoutingError;

const NO_PATH: u8 = 0xFF;
/// OpenSM stores hop counts in a byte with 0xFF meaning "none"; a route that
/// long cannot occur in a tree of rank ≤ 8 unless it wanders through
/// same-rank links, and is refused rather than wrapped.
const MAX_HOPS: u8 = 0xFC;
/// "No previous switch" / "remote is a CA".
const NONE: u32 = u32::MAX;

/// What lies below a switch.
const BELOW_NOTHING: u8 = 0;
const BELOW_CAS: u8 = 1;
const BELOW_SWITCHES: u8 = 2;

/// The port groups of every switch in one direction, in their current order:
/// switch `s` owns `g[off[s]..off[s + 1]]`, and `r` holds each group's remote
/// switch (NONE for a CA).
struct Lists {
    off: Vec<u32>,
    g: Vec<u32>,
    r: Vec<u32>,
}

impl Lists {
    fn new(t: &Tree, pick: fn(&Switch) -> &Vec<u32>) -> Self {
        let mut off = Vec::with_capacity(t.sw.len() + 1);
        let mut g = Vec::new();
        off.push(0);
        for s in &t.sw {
            g.extend_from_slice(pick(s));
            off.push(g.len() as u32);
        }
        let r = g
            .iter()
            .map(|&x| {
                let grp = &t.groups[x as usize];
                if grp.remote_is_sw {
                    grp.remote
                } else {
                    NONE
                }
            })
            .collect();
        Self { off, g, r }
    }

    #[inline]
    fn range(&self, s: u32) -> (usize, usize) {
        (self.off[s as usize] as usize, self.off[s as usize + 1] as usize)
    }

    /// Stable sort of one switch's groups by `key` (see the module notes).
    #[inline]
    fn sort(&mut self, s: u32, key: &[u64]) {
        let (a, b) = self.range(s);
        for i in a + 1..b {
            let (x, xr) = (self.g[i], self.r[i]);
            let kx = key[x as usize];
            if kx >= key[self.g[i - 1] as usize] {
                continue;
            }
            let mut j = i;
            while j > a && kx < key[self.g[j - 1] as usize] {
                self.g[j] = self.g[j - 1];
                self.r[j] = self.r[j - 1];
                j -= 1;
            }
            self.g[j] = x;
            self.r[j] = xr;
        }
    }

    /// OpenSM's literal bubble sort, for a comparator that is not a total preorder.
    fn bubble_sort(&mut self, s: u32, less: impl Fn(u32, u32, u32, u32) -> bool) {
        let (a, b) = self.range(s);
        let n = b - a;
        let mut i = 0;
        while i + 1 < n {
            let mut swapped = false;
            for j in a + 1..b - i {
                if less(self.g[j], self.r[j], self.g[j - 1], self.r[j - 1]) {
                    self.g.swap(j, j - 1);
                    self.r.swap(j, j - 1);
                    swapped = true;
                }
            }
            if !swapped {
                break;
            }
            i += 1;
        }
    }
}

/// Classes of switches with the same set of switches below them, no CA below
/// and nothing beside them; returns the class of every switch and the count.
fn classes(t: &Tree, down: &Lists) -> (Vec<u32>, usize) {
    let mut class = vec![NONE; t.sw.len()];
    let mut ids: std::collections::HashMap<Vec<u32>, u32> = std::collections::HashMap::new();
    for (s, sw) in t.sw.iter().enumerate() {
        let (a, b) = down.range(s as u32);
        if sw.removed || a == b || !sw.sib.is_empty() || down.r[a..b].contains(&NONE) {
            continue;
        }
        let mut key = down.r[a..b].to_vec();
        key.sort_unstable();
        let n = ids.len() as u32;
        class[s] = *ids.entry(key).or_insert(n);
    }
    let n = ids.len();
    (class, n)
}

const COUNT: u64 = 1 << 32;

pub(super) struct Router<'a> {
    t: &'a Tree,
    down: Lists,
    up: Lists,
    sib: Lists,
    /// Per group: up-going counter << 32 | remote tuple rank (OpenSM's
    /// "compare load up" order as one number).
    key_up: Vec<u64>,
    /// Per group: down-going counter << 32 | remote tuple rank.
    key_down: Vec<u64>,
    /// Per port: up-going and down-going counters.
    port_up: Vec<u32>,
    port_down: Vec<u32>,
    /// Per switch: BELOW_*.
    below: Vec<u8>,
    is_root: Vec<bool>,
    /// OpenSM's `counter_up_changed`: the down groups need sorting.
    changed: Vec<bool>,
    /// OpenSM's `min_counter_down`.
    min_counter_down: Vec<u32>,
    /// LFT entry of every tree switch for the LID being routed.
    lft: Vec<u8>,
    /// Hop count of every tree switch for the LID being routed.
    hops: Vec<u8>,
    /// Class of every switch (NONE: not tracked), see the module notes.
    class: Vec<u32>,
    /// Per class, for the LID being routed: no switch below the class has more
    /// hops than this (0xFF: unknown).
    bound: Vec<u8>,
    /// False once a hop count went up during this LID: bounds are then ignored.
    monotone: bool,
    /// Finished LFT columns: `out[lid * switches + s]`.
    out: Vec<u8>,
    too_long: bool,
}

impl<'a> Router<'a> {
    pub(super) fn new(t: &'a Tree, max_lid: u16) -> Self {
        let n = t.sw.len();
        let down = Lists::new(t, |s| &s.down);
        let up = Lists::new(t, |s| &s.up);
        let sib = Lists::new(t, |s| &s.sib);
        let (class, classes) = classes(t, &down);
        let tie = |g: &super::build::Group| g.remote_trank as u64;
        let below = t
            .sw
            .iter()
            .map(|s| {
                if s.down.is_empty() {
                    BELOW_NOTHING
                } else if s.only_cas {
                    BELOW_CAS
                } else {
                    BELOW_SWITCHES
                }
            })
            .collect();
        Self {
            t,
            down,
            up,
            sib,
            key_up: t.groups.iter().map(tie).collect(),
            key_down: t.groups.iter().map(tie).collect(),
            port_up: vec![0; t.ports.len()],
            port_down: vec![0; t.ports.len()],
            below,
            is_root: t.sw.iter().map(|s| s.rank == 0).collect(),
            changed: vec![false; n],
            min_counter_down: vec![0; n],
            lft: vec![NO_PATH; n],
            hops: vec![NO_PATH; n],
            class,
            bound: vec![NO_PATH; classes],
            monotone: true,
            out: vec![NO_PATH; (max_lid as usize + 1) * n],
            too_long: false,
        }
    }

    /// Routes everything and writes the LFTs.
    pub(super) fn run(mut self, tables: &mut ForwardingTables) -> Result<(), RoutingError> {
        self.route_to_cns();
        self.route_to_non_cns();
        self.route_to_switches();
        if self.too_long {
            return Err(unsupported(format!("a route would exceed {MAX_HOPS} hops; OpenSM's hop counters would wrap")));
        }
        self.write(tables);
        Ok(())
    }

    /// Copies the finished columns into the tables, 64 switches at a time so
    /// that reads and writes both stay in cache.
    fn write(&self, tables: &mut ForwardingTables) {
        let n = self.t.sw.len();
        let lids = self.out.len() / n.max(1);
        for s0 in (0..n).step_by(64) {
            let s1 = (s0 + 64).min(n);
            for lid in 1..lids {
                let row = &self.out[lid * n + s0..lid * n + s1];
                for (i, &p) in row.iter().enumerate() {
                    if p != NO_PATH {
                        tables.set(self.t.sw[s0 + i].node, Lid(lid as u16), p);
                    }
                }
            }
        }
    }

    fn start(&mut self, sw: u32, port: u8, hops: u8) {
        self.lft.fill(NO_PATH);
        self.hops.fill(NO_PATH);
        self.bound.fill(NO_PATH);
        self.monotone = true;
        self.lft[sw as usize] = port;
        self.hops[sw as usize] = hops;
    }

    fn emit(&mut self, lid: u16) {
        let n = self.lft.len();
        let at = lid as usize * n;
        if let Some(col) = self.out.get_mut(at..at + n) {
            col.copy_from_slice(&self.lft);
        }
    }

    fn route_to_cns(&mut self) {
        for li in 0..self.t.leaves.len() {
            let leaf = self.t.leaves[li];
            let mut routed = 0u32;
            let (a, b) = self.down.range(leaf);
            for k in a..b {
                let g = &self.t.groups[self.down.g[k] as usize];
                if g.remote_is_sw || self.t.ca[g.remote as usize].cn_num == 0 {
                    continue;
                }
                if !self.t.ca_port(g.remote, g.remote_lid).is_some_and(|p| p.is_cn) {
                    continue;
                }
                let lid = g.remote_lid;
                let port = self.t.ports[g.first_port as usize].port;
                self.start(leaf, port, 1);
                self.down_by_up(leaf, NONE, lid, true, 1);
                self.emit(lid);
                routed += 1;
            }
            for _ in routed..self.t.max_cn_per_leaf {
                self.start(leaf, NO_PATH, 1);
                self.down_by_up(leaf, NONE, 0, true, 1);
            }
        }
    }

    fn route_to_non_cns(&mut self) {
        for c in 0..self.t.ca.len() {
            for k in 0..self.t.ca[c].ports.len() {
                let p = &self.t.ca[c].ports[k];
                if p.is_cn {
                    continue;
                }
                let (lid, sw, port) = (p.lid, p.switch, p.switch_port);
                self.start(sw, port, 1);
                self.down_by_up(sw, NONE, lid, true, 1);
                self.emit(lid);
            }
        }
    }

    fn route_to_switches(&mut self) {
        for s in 0..self.t.sw.len() as u32 {
            if self.t.sw[s as usize].removed {
                continue;
            }
            let lid = self.t.sw[s as usize].lid;
            self.start(s, 0, 0);
            self.down_by_up(s, NONE, lid, false, 0);
            self.emit(lid);
        }
    }

    /// The least loaded port of a group: the first with the smallest counter.
    #[inline]
    fn min_port(&self, g: u32, counters: &[u32]) -> usize {
        let g = &self.t.groups[g as usize];
        let first = g.first_port as usize;
        if g.num_ports == 1 {
            return first;
        }
        let c = &counters[first..first + g.num_ports as usize];
        let mut best = 0;
        for (i, &x) in c.iter().enumerate().skip(1) {
            if x < c[best] {
                best = i;
            }
        }
        first + best
    }

    #[inline]
    fn set(&mut self, sw: u32, port: u8, hops: u8) {
        self.lft[sw as usize] = port;
        if hops > self.hops[sw as usize] {
            self.monotone = false;
        }
        self.hops[sw as usize] = hops;
    }

    /// OpenSM's `fabric_route_upgoing_by_going_down`: up-going routes towards
    /// `lid` on the switches below (and, for real LIDs, beside) `sw`.
    fn up_by_down(&mut self, sw: u32, prev: u32, lid: u16, hops: u8) -> bool {
        match self.below[sw as usize] {
            BELOW_NOTHING => return false,
            // Every group leads to a CA: nothing to sort or route below
            // (construction refuses CAs next to switch groups).
            BELOW_CAS => return true,
            _ => {}
        }
        if hops >= MAX_HOPS {
            self.too_long = true;
            return false;
        }
        let next = hops + 1;
        let class = self.class[sw as usize];
        if class != NONE && self.monotone && self.bound[class as usize] <= next {
            return false;
        }
        if self.changed[sw as usize] {
            self.down.sort(sw, &self.key_up);
            self.changed[sw as usize] = false;
        }
        let (sa, sb) = self.sib.range(sw);
        if sa != sb {
            self.sib.sort(sw, &self.key_up);
        }
        let (a, b) = self.down.range(sw);
        let mut created = false;
        let mut most = 0u8;
        let mut k = a;
        while k < b {
            let r = self.down.r[k];
            k += 1;
            if r == NONE {
                created = true;
                continue;
            }
            // Skip the switch we came up from, and switches already routed
            // with as few hops (unset is 0xFF, above any `next`).
            let h = self.hops[r as usize];
            if r == prev || h <= next {
                most = most.max(h);
                continue;
            }
            most = most.max(next);
            let g = self.down.g[k - 1];
            created |= self.descend(sw, g, r, lid, next);
        }
        if class != NONE {
            self.bound[class as usize] = most;
        }
        if lid != 0 {
            let mut k = sa;
            while k < sb {
                let r = self.sib.r[k];
                k += 1;
                if r == prev || self.hops[r as usize] <= next {
                    continue;
                }
                let g = self.sib.g[k - 1];
                created |= self.descend(sw, g, r, lid, next);
            }
        }
        created
    }

    /// One step down (or sideways) from `sw` through group `g` to switch `r`.
    #[inline]
    fn descend(&mut self, sw: u32, g: u32, r: u32, lid: u16, next: u8) -> bool {
        let p = self.min_port(g, &self.port_up);
        self.set(r, self.t.ports[p].remote_port, next);
        let routed = match self.below[r as usize] {
            BELOW_NOTHING => false,
            BELOW_CAS => true,
            _ => self.up_by_down(r, NONE, lid, next),
        };
        if routed {
            self.port_up[p] += 1;
            self.key_up[g as usize] += COUNT;
            self.changed[sw as usize] = true;
        }
        routed
    }

    /// Sorts a switch's up or sibling groups by down load. OpenSM's comparator
    /// breaks ties by the remote switches' `min_counter_down` in one direction
    /// only, so it is a total preorder only when those are equal — always in
    /// practice (they never rise above 0) — otherwise the literal bubble sort runs.
    fn sort_down(lists: &mut Lists, key: &[u64], min_counter_down: &[u32], s: u32) {
        let (a, b) = lists.range(s);
        let load = |r: u32| min_counter_down[r as usize];
        let first = lists.r.get(a).map(|&r| load(r));
        if lists.r[a..b].iter().all(|&r| Some(load(r)) == first) {
            lists.sort(s, key);
        } else {
            lists.bubble_sort(s, |x, xr, y, yr| {
                let (kx, ky) = (key[x as usize], key[y as usize]);
                if kx >> 32 != ky >> 32 {
                    return kx >> 32 < ky >> 32;
                }
                if load(xr) > load(yr) {
                    return false;
                }
                (kx as u32) < (ky as u32)
            });
        }
    }

    /// OpenSM's `fabric_route_downgoing_by_going_up`: from `sw` up the least
    /// loaded group (counted when `main`), secondary routes up the others and
    /// sideways, after the up-going routes below `sw`.
    fn down_by_up(&mut self, sw: u32, prev: u32, lid: u16, main: bool, hops: u8) -> bool {
        let mut created = self.up_by_down(sw, prev, lid, hops);
        let (a, b) = self.up.range(sw);
        if self.is_root[sw as usize] || a == b {
            return created;
        }
        if hops >= MAX_HOPS {
            self.too_long = true;
            return created;
        }
        Self::sort_down(&mut self.up, &self.key_down, &self.min_counter_down, sw);
        let next = hops + 1;

        let min_group = self.up.g[a];
        let remote = self.up.r[a];
        if main {
            let p = self.min_port(min_group, &self.port_down);
            self.key_down[min_group as usize] += COUNT;
            self.port_down[p] += 1;
            let counter = (self.key_down[min_group as usize] >> 32) as u32;
            if counter == self.min_counter_down[remote as usize].wrapping_add(1) {
                self.recalculate_min_counter_down(remote);
            }
            if self.lft[remote as usize] == NO_PATH || next < self.hops[remote as usize] {
                self.set(remote, self.t.ports[p].remote_port, next);
            }
            created |= self.down_by_up(remote, sw, lid, main, next);
        }

        let mut k = a + usize::from(main);
        while k < b {
            let r = self.up.r[k];
            k += 1;
            if self.lft[r as usize] != NO_PATH && next >= self.hops[r as usize] {
                continue;
            }
            let p = self.min_port(self.up.g[k - 1], &self.port_down);
            self.set(r, self.t.ports[p].remote_port, next);
            created |= self.down_by_up(r, sw, lid, false, next);
        }

        let (sa, sb) = self.sib.range(sw);
        if sa != sb {
            Self::sort_down(&mut self.sib, &self.key_down, &self.min_counter_down, sw);
        }
        let mut k = sa;
        while k < sb {
            let r = self.sib.r[k];
            k += 1;
            if self.lft[r as usize] != NO_PATH && next >= self.hops[r as usize] {
                continue;
            }
            let p = self.min_port(self.sib.g[k - 1], &self.port_down);
            self.set(r, self.t.ports[p].remote_port, next);
            let routed = self.down_by_up(r, sw, lid, false, next);
            created |= routed;
            if routed {
                // OpenSM credits the group chosen for the main path and the
                // port just used towards the sibling.
                self.key_down[min_group as usize] += COUNT;
                self.port_down[p] += 1;
            }
        }
        created
    }

    fn recalculate_min_counter_down(&mut self, sw: u32) {
        let (a, b) = self.down.range(sw);
        let min = self.down.g[a..b].iter().map(|&g| (self.key_down[g as usize] >> 32) as u32).fold(1u32 << 30, u32::min);
        self.min_counter_down[sw as usize] = min;
    }
}
