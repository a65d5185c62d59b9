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
//!   and stays in L1 cache. Finished columns go, 64 at a time, to a second
//!   thread that writes them into the tables while routing goes on (OpenSM's
//!   order of LIDs does not matter for the result; without the thread, or on
//!   small fabrics, they are written in place).
//! - OpenSM re-sorts port groups with a bubble sort, which is quadratic for
//!   groups that move towards the front. Its comparators are total preorders
//!   (see [`Router::sort_down`] for the one exception), and a bubble sort that
//!   swaps only strictly misordered neighbours yields the unique stable order,
//!   so an insertion sort gives the identical array. Counters and tuple ranks
//!   are packed into one sort key per group.
//! - Port groups live per direction in flat arrays of 16-byte entries (sort
//!   key, remote switch, first port) in their current order, so that one LID's
//!   traversal touches about a megabyte on ft11664 and stays in L2 cache.
//! - Most of OpenSM's time goes into scanning the groups below a switch only to
//!   find every switch there already routed with as few hops. Switches with the
//!   same switches below them form a class; after one scan, the most hops found
//!   below is remembered for the class, and a later scan of any switch of the
//!   class that cannot beat it is skipped. Hop counts only decrease while a
//!   LID is routed (the exception, a dummy CN's leaf, switches this off), so
//!   the bound stays valid, and a skipped scan would have changed nothing: its
//!   postponed sort gives the same order when the next real scan sorts.

use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Mutex;

use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Lid, NodeId};

use super::build::{undefined, Switch, Tree};
use super::slots::Slot;
use super::unsupported;
use crate::engine::RoutingError;

const NO_PATH: u8 = 0xFF;
/// OpenSM stores hop counts in a byte with 0xFF meaning "none"; a route that
/// long cannot occur in a tree of rank ≤ 8 unless it wanders through
/// same-rank links, and is refused rather than wrapped.
const MAX_HOPS: u8 = 0xFC;
/// "No previous switch" / "no class".
const NONE: u32 = u32::MAX;
/// "Remote is a CA" in an [`Entry`].
const NO_SW: u16 = u16::MAX;
/// Bits of a sort key below the counter: the tuple rank of the remote switch.
/// Switches have distinct unicast LIDs, so there are fewer than 0xC000 tuple
/// ranks and 16 bits hold them all (an untupled switch sorts as 0xFFFF, after
/// every assigned rank, as OpenSM's all-0xFF tuple does); the counter gets
/// the upper 48 bits, room for the weighted counters of `vswitch-ftree`.
const SHIFT: u32 = 16;
/// One unit of a counter in a sort key.
const COUNT: u64 = 1 << SHIFT;
/// The tuple-rank part of a sort key.
const TIE: u64 = COUNT - 1;
/// The most a counter may reach (48 bits); `vswitch-ftree` checks its weights
/// against it before routing.
pub(crate) const MAX_COUNTER: u64 = (1 << (64 - SHIFT)) - 1;

/// What lies below a switch.
const BELOW_NOTHING: u8 = 0;
const BELOW_CAS: u8 = 1;
const BELOW_SWITCHES: u8 = 2;

/// One port group in a switch's list (16 bytes).
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Counter << SHIFT | tuple rank of the remote switch. The counter is the
    /// up-going one for down and sibling groups and the down-going one for up
    /// groups: the only counters OpenSM ever raises on each kind.
    key: u64,
    /// The group's first port in `Tree::ports`.
    port: u32,
    /// Remote switch (NO_SW for a CA); unique within one list. Switches have
    /// distinct unicast LIDs, so there are fewer than 0xC000.
    remote: u16,
    /// Remote port number of the first port.
    rport: u8,
    /// Number of ports in the group (at most 254).
    span: u8,
}

/// The port groups of every switch in one direction, in their current order:
/// switch `s` owns `e[off[s]..off[s + 1]]`.
struct Lists {
    off: Vec<u32>,
    e: Vec<Entry>,
}

impl Lists {
    fn new(t: &Tree, pick: fn(&Switch) -> &Vec<u32>) -> Self {
        let mut off = Vec::with_capacity(t.sw.len() + 1);
        let mut e = Vec::new();
        off.push(0);
        for s in &t.sw {
            e.extend(pick(s).iter().map(|&g| {
                let g = &t.groups[g as usize];
                Entry {
                    key: (g.remote_trank as u64).min(TIE),
                    port: g.first_port,
                    remote: if g.remote_is_sw {
                        g.remote as u16
                    } else {
                        NO_SW
                    },
                    rport: t.ports[g.first_port as usize].remote_port,
                    span: g.num_ports.min(255) as u8,
                }
            }));
            off.push(e.len() as u32);
        }
        Self { off, e }
    }

    #[inline]
    fn range(&self, s: u32) -> (usize, usize) {
        (
            self.off[s as usize] as usize,
            self.off[s as usize + 1] as usize,
        )
    }

    /// Position of the group leading to `remote` in switch `s`'s list, trying
    /// `hint` first.
    #[inline]
    fn find(&self, s: u32, remote: u16, hint: usize) -> Option<usize> {
        if self.e.get(hint).is_some_and(|e| e.remote == remote) {
            return Some(hint);
        }
        let (a, b) = self.range(s);
        (a..b).find(|&k| self.e[k].remote == remote)
    }

    /// Stable sort of one switch's groups by `mask & key` (see the module notes).
    #[inline]
    fn sort(&mut self, s: u32, mask: u64) {
        let (a, b) = self.range(s);
        for i in a + 1..b {
            let x = self.e[i];
            let kx = x.key & mask;
            if kx >= self.e[i - 1].key & mask {
                continue;
            }
            let mut j = i;
            while j > a && kx < self.e[j - 1].key & mask {
                self.e[j] = self.e[j - 1];
                j -= 1;
            }
            self.e[j] = x;
        }
    }

    /// OpenSM's literal bubble sort, for a comparator that is not a total preorder.
    fn bubble_sort(&mut self, s: u32, less: impl Fn(&Entry, &Entry) -> bool) {
        let (a, b) = self.range(s);
        let n = b - a;
        let mut i = 0;
        while i + 1 < n {
            let mut swapped = false;
            for j in a + 1..b - i {
                if less(&self.e[j], &self.e[j - 1]) {
                    self.e.swap(j, j - 1);
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
    let mut ids: std::collections::HashMap<Vec<u16>, u32> = std::collections::HashMap::new();
    for (s, sw) in t.sw.iter().enumerate() {
        let (a, b) = down.range(s as u32);
        let below = &down.e[a..b];
        if sw.removed
            || below.is_empty()
            || !sw.sib.is_empty()
            || below.iter().any(|e| e.remote == NO_SW)
        {
            continue;
        }
        let mut key: Vec<u16> = below.iter().map(|e| e.remote).collect();
        key.sort_unstable();
        let n = ids.len() as u32;
        class[s] = *ids.entry(key).or_insert(n);
    }
    let n = ids.len();
    (class, n)
}

/// Which routing passes to run after the compute nodes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Passes {
    /// Non-compute-node CA ports.
    pub(crate) non_cns: bool,
    /// Switch LIDs.
    pub(crate) switches: bool,
}

impl Passes {
    /// OpenSM's three passes.
    pub(crate) const ALL: Passes = Passes {
        non_cns: true,
        switches: true,
    };
    /// Compute nodes only.
    pub(crate) const CNS: Passes = Passes {
        non_cns: false,
        switches: false,
    };
}

#[derive(Clone, Copy)]
enum Side {
    Down,
    Sib,
}

pub(crate) struct Router<'a> {
    t: &'a Tree,
    /// Per leaf, the compute nodes (or dummies) in routing order.
    slots: &'a [Vec<Option<Slot>>],
    down: Lists,
    up: Lists,
    sib: Lists,
    /// Per port: the port number at the remote end.
    rport: Vec<u8>,
    /// Per port: OpenSM's up-going and down-going port counters (kept for
    /// groups of several ports only: a lone port is always the least loaded).
    port_up: Vec<u64>,
    port_down: Vec<u64>,
    /// Weight of the destination being routed: what its routes add to the
    /// counters (1 in OpenSM; a VM's share of its vSwitch in `vswitch-ftree`).
    w: u64,
    /// Weight of a dummy compute node.
    dummy_weight: u64,
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
    /// Finished LFT columns not yet written: their LIDs, and the columns.
    chunk: Chunk,
    too_long: bool,
    /// A switch whose down groups OpenSM would sort with a CA among them.
    undefined: Option<u32>,
}

/// Finished LFT columns: `cols[j * switches + s]` is switch `s`'s port for `lids[j]`.
#[derive(Default)]
struct Chunk {
    lids: Vec<u16>,
    cols: Vec<u8>,
}

/// Columns per chunk.
const CHUNK: usize = 64;
/// Below this many table entries a writer thread is not worth starting.
const THREAD_MIN_ENTRIES: usize = 1 << 20;

impl Chunk {
    /// Writes the columns, switch by switch so that each table is written in
    /// LID order while the chunk stays in cache.
    fn write(&self, nodes: &[NodeId], tables: &mut ForwardingTables) {
        let n = nodes.len();
        for (s, &node) in nodes.iter().enumerate() {
            for (j, &lid) in self.lids.iter().enumerate() {
                let p = self.cols[j * n + s];
                if p != NO_PATH {
                    tables.set(node, Lid(lid), p);
                }
            }
        }
    }
}

/// Where finished chunks go.
struct Sink<'s, 't> {
    nodes: &'s [NodeId],
    tables: &'s Mutex<&'t mut ForwardingTables>,
    thread: Option<SyncSender<Chunk>>,
}

impl Sink<'_, '_> {
    fn take(&mut self, chunk: Chunk) {
        let chunk = match &self.thread {
            Some(tx) => match tx.send(chunk) {
                Ok(()) => return,
                Err(e) => e.0,
            },
            None => chunk,
        };
        let mut tables = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        chunk.write(self.nodes, &mut tables);
    }
}

impl<'a> Router<'a> {
    pub(crate) fn new(t: &'a Tree, slots: &'a [Vec<Option<Slot>>]) -> Self {
        let n = t.sw.len();
        let down = Lists::new(t, |s| &s.down);
        let up = Lists::new(t, |s| &s.up);
        let sib = Lists::new(t, |s| &s.sib);
        let (class, classes) = classes(t, &down);
        let below =
            t.sw.iter()
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
            slots,
            down,
            up,
            sib,
            rport: t.ports.iter().map(|p| p.remote_port).collect(),
            port_up: vec![0; t.ports.len()],
            port_down: vec![0; t.ports.len()],
            w: 1,
            dummy_weight: 1,
            below,
            is_root: t.sw.iter().map(|s| s.rank == 0).collect(),
            changed: vec![false; n],
            min_counter_down: vec![0; n],
            lft: vec![NO_PATH; n],
            hops: vec![NO_PATH; n],
            class,
            bound: vec![NO_PATH; classes],
            monotone: true,
            chunk: Chunk::default(),
            too_long: false,
            undefined: None,
        }
    }

    /// Dummy compute nodes add `w` to the counters instead of 1.
    pub(crate) fn with_dummy_weight(mut self, w: u64) -> Self {
        self.dummy_weight = w;
        self
    }

    /// Routes everything and writes the LFTs.
    pub(super) fn run(self, tables: &mut ForwardingTables) -> Result<(), RoutingError> {
        let nodes: Vec<NodeId> = self.t.sw.iter().map(|s| s.node).collect();
        self.run_passes(tables, &nodes, Passes::ALL)
    }

    /// Routes the chosen passes and writes the LFTs of tree switch `s` into
    /// `tables` as node `nodes[s]`.
    pub(crate) fn run_passes(
        mut self,
        tables: &mut ForwardingTables,
        nodes: &[NodeId],
        passes: Passes,
    ) -> Result<(), RoutingError> {
        let nodes = nodes.to_vec();
        let lids = nodes.first().map_or(0, |&n| tables.table(n).len());
        let threaded = nodes.len() * lids >= THREAD_MIN_ENTRIES;
        let tables = Mutex::new(tables);
        std::thread::scope(|scope| {
            let mut sink = Sink {
                nodes: &nodes,
                tables: &tables,
                thread: None,
            };
            if threaded {
                let (tx, rx) = sync_channel::<Chunk>(8);
                let (nodes, tables) = (&nodes, &tables);
                let writer = std::thread::Builder::new()
                    .name("ftree-lft".into())
                    .spawn_scoped(scope, move || {
                        let mut tables = tables.lock().unwrap_or_else(|e| e.into_inner());
                        for chunk in rx {
                            chunk.write(nodes, &mut tables);
                        }
                    });
                // Without a thread (it could not start), chunks are written here.
                sink.thread = writer.ok().map(|_| tx);
            }
            self.route_to_cns(&mut sink);
            if passes.non_cns {
                self.route_to_non_cns(&mut sink);
            }
            if passes.switches {
                self.route_to_switches(&mut sink);
            }
            let last = std::mem::take(&mut self.chunk);
            sink.take(last);
            // Dropping the sender ends the writer; the scope waits for it.
        });
        if let Some(s) = self.undefined {
            let sw = &self.t.sw[s as usize];
            return Err(undefined(sw.guid, sw.rank));
        }
        if self.too_long {
            return Err(unsupported(format!(
                "a route would exceed {MAX_HOPS} hops; OpenSM's hop counters would wrap"
            )));
        }
        Ok(())
    }

    fn start(&mut self, sw: u32, port: u8, hops: u8) {
        self.lft.fill(NO_PATH);
        self.hops.fill(NO_PATH);
        self.bound.fill(NO_PATH);
        self.monotone = true;
        self.lft[sw as usize] = port;
        self.hops[sw as usize] = hops;
    }

    fn emit(&mut self, lid: u16, sink: &mut Sink) {
        self.chunk.lids.push(lid);
        self.chunk.cols.extend_from_slice(&self.lft);
        if self.chunk.lids.len() == CHUNK {
            let full = std::mem::take(&mut self.chunk);
            sink.take(full);
        }
    }

    fn route_to_cns(&mut self, sink: &mut Sink) {
        // Down groups with CAs among them are never re-sorted (that is
        // refused as undefined), so port order is OpenSM's.
        for li in 0..self.t.leaves.len() {
            let leaf = self.t.leaves[li];
            for k in 0..self.slots[li].len() {
                match self.slots[li][k] {
                    Some(Slot { lid, port, weight }) => {
                        self.w = weight;
                        self.start(leaf, port, 1);
                        self.down_by_up(leaf, NONE, lid, true, 1);
                        self.emit(lid, sink);
                    }
                    None => {
                        self.w = self.dummy_weight;
                        self.start(leaf, NO_PATH, 1);
                        self.down_by_up(leaf, NONE, 0, true, 1);
                    }
                }
            }
        }
    }

    fn route_to_non_cns(&mut self, sink: &mut Sink) {
        self.w = 1;
        for c in 0..self.t.ca.len() {
            for k in 0..self.t.ca[c].ports.len() {
                let p = &self.t.ca[c].ports[k];
                if p.is_cn {
                    continue;
                }
                let (lid, sw, port) = (p.lid, p.switch, p.switch_port);
                self.start(sw, port, 1);
                self.down_by_up(sw, NONE, lid, true, 1);
                self.emit(lid, sink);
            }
        }
    }

    fn route_to_switches(&mut self, sink: &mut Sink) {
        self.w = 1;
        for s in 0..self.t.sw.len() as u32 {
            if self.t.sw[s as usize].removed {
                continue;
            }
            let lid = self.t.sw[s as usize].lid;
            self.start(s, 0, 0);
            self.down_by_up(s, NONE, lid, false, 0);
            self.emit(lid, sink);
        }
    }

    /// The least loaded port of a group and its remote port number: the first
    /// port with the smallest counter.
    #[inline]
    fn min_port(&self, e: &Entry, counters: &[u64]) -> (usize, u8) {
        let first = e.port as usize;
        if e.span <= 1 {
            return (first, e.rport);
        }
        let c = &counters[first..first + e.span as usize];
        let mut best = 0;
        for (i, &x) in c.iter().enumerate().skip(1) {
            if x < c[best] {
                best = i;
            }
        }
        (first + best, self.rport[first + best])
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
            // Every group leads to a CA and there is nothing beside: nothing
            // to sort (no counter here ever moves) or route.
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
            if self.t.sw[sw as usize].sorts_cas {
                self.undefined.get_or_insert(sw);
            }
            self.down.sort(sw, u64::MAX);
            self.changed[sw as usize] = false;
        }
        let (sa, sb) = self.sib.range(sw);
        if sa != sb {
            self.sib.sort(sw, u64::MAX);
        }
        let (a, b) = self.down.range(sw);
        let mut created = false;
        let mut most = 0u8;
        for k in a..b {
            let r = self.down.e[k].remote;
            if r == NO_SW {
                created = true;
                continue;
            }
            // Skip the switch we came up from, and switches already routed
            // with as few hops (unset is 0xFF, above any `next`).
            let h = self.hops[r as usize];
            if r as u32 == prev || h <= next {
                most = most.max(h);
                continue;
            }
            most = most.max(next);
            created |= self.descend(sw, Side::Down, k, r, lid, next);
        }
        if class != NONE {
            self.bound[class as usize] = most;
        }
        if lid != 0 {
            for k in sa..sb {
                let r = self.sib.e[k].remote;
                if r as u32 == prev || self.hops[r as usize] <= next {
                    continue;
                }
                created |= self.descend(sw, Side::Sib, k, r, lid, next);
            }
        }
        created
    }

    /// One step down (or sideways) from `sw` through the group at `k` to `r`,
    /// which has more hops than `next` (so hop counts keep decreasing).
    #[inline(always)]
    fn descend(&mut self, sw: u32, side: Side, k: usize, r: u16, lid: u16, next: u8) -> bool {
        let e = match side {
            Side::Down => self.down.e[k],
            Side::Sib => self.sib.e[k],
        };
        let (p, rport) = self.min_port(&e, &self.port_up);
        self.lft[r as usize] = rport;
        self.hops[r as usize] = next;
        let (routed, moved) = match self.below[r as usize] {
            BELOW_NOTHING => (false, false),
            BELOW_CAS => (true, false),
            _ => (self.up_by_down(r as u32, NONE, lid, next), true),
        };
        if routed {
            if e.span > 1 {
                self.port_up[p] += self.w;
            }
            let list = match side {
                Side::Down => &mut self.down,
                Side::Sib => &mut self.sib,
            };
            // The list cannot have been re-sorted by the recursion (that takes
            // a path back to `sw`, which has fewer hops), but look it up anyway.
            let k = if moved { list.find(sw, r, k) } else { Some(k) };
            if let Some(k) = k {
                list.e[k].key += self.w * COUNT;
            }
            self.changed[sw as usize] = true;
        }
        routed
    }

    /// Sorts a switch's up (`mask` all ones) or sibling (`mask` TIE: their
    /// down counters never move) groups by down load. OpenSM's comparator
    /// breaks ties by the remote switches' `min_counter_down` in one direction
    /// only, so it is a total preorder only when those are equal — always in
    /// practice (they never rise above 0) — otherwise the literal bubble sort runs.
    fn sort_down(list: &mut Lists, min_counter_down: &[u32], s: u32, mask: u64) {
        let (a, b) = list.range(s);
        let load = |r: u16| min_counter_down[r as usize];
        let Some(first) = list.e[a..b].first().map(|e| load(e.remote)) else {
            return;
        };
        if list.e[a..b].iter().all(|e| load(e.remote) == first) {
            list.sort(s, mask);
        } else {
            list.bubble_sort(s, |x, y| {
                let (kx, ky) = (x.key & mask, y.key & mask);
                if kx >> SHIFT != ky >> SHIFT {
                    return kx >> SHIFT < ky >> SHIFT;
                }
                if load(x.remote) > load(y.remote) {
                    return false;
                }
                kx & TIE < ky & TIE
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
        Self::sort_down(&mut self.up, &self.min_counter_down, sw, u64::MAX);
        let next = hops + 1;

        let min_remote = self.up.e[a].remote;
        let m = min_remote as u32;
        if main {
            let e = self.up.e[a];
            let (p, rport) = self.min_port(&e, &self.port_down);
            self.up.e[a].key += self.w * COUNT;
            if e.span > 1 {
                self.port_down[p] += self.w;
            }
            let counter = self.up.e[a].key >> SHIFT;
            if counter == u64::from(self.min_counter_down[m as usize]) + self.w {
                self.recalculate_min_counter_down(m);
            }
            if self.lft[m as usize] == NO_PATH || next < self.hops[m as usize] {
                self.set(m, rport, next);
            }
            created |= self.down_by_up(m, sw, lid, main, next);
        }

        for k in a + usize::from(main)..b {
            let e = self.up.e[k];
            let r = e.remote as u32;
            if self.lft[r as usize] != NO_PATH && next >= self.hops[r as usize] {
                continue;
            }
            let (_, rport) = self.min_port(&e, &self.port_down);
            self.set(r, rport, next);
            created |= self.down_by_up(r, sw, lid, false, next);
        }

        let (sa, sb) = self.sib.range(sw);
        if sa != sb {
            Self::sort_down(&mut self.sib, &self.min_counter_down, sw, TIE);
        }
        for k in sa..sb {
            let e = self.sib.e[k];
            let r = e.remote as u32;
            if self.lft[r as usize] != NO_PATH && next >= self.hops[r as usize] {
                continue;
            }
            let (p, rport) = self.min_port(&e, &self.port_down);
            self.set(r, rport, next);
            let routed = self.down_by_up(r, sw, lid, false, next);
            created |= routed;
            if routed {
                // OpenSM credits the group chosen for the main path and the
                // port just used towards the sibling.
                if let Some(k) = self.up.find(sw, min_remote, a) {
                    self.up.e[k].key += self.w * COUNT;
                }
                if e.span > 1 {
                    self.port_down[p] += self.w;
                }
            }
        }
        created
    }

    /// OpenSM sets `min_counter_down` to the least down-going counter of the
    /// switch's down groups, or 2^30 without any. Down-going counters are only
    /// ever raised on up groups, so that least counter is always 0.
    fn recalculate_min_counter_down(&mut self, sw: u32) {
        let (a, b) = self.down.range(sw);
        self.min_counter_down[sw as usize] = if a == b { 1 << 30 } else { 0 };
    }
}
