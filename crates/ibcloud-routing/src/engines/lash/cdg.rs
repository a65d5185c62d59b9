//! LASH's per-layer channel dependency graphs, with the bookkeeping of
//! OpenSM's `cdg_vertex_t` reproduced count for count.
//!
//! A vertex is a channel (switch → neighbour switch) in one layer; a
//! dependency `a → b` means some path in the layer uses channel `a` then `b`.
//! OpenSM adds a path's dependencies tentatively ("temp"), keeps them if the
//! layer stays acyclic and rolls them back otherwise; its counters have quirks
//! that change later decisions, and they are kept here on purpose:
//!
//! * a failed trial rolls back appended dependencies but not the use counts
//!   it added to dependencies that already existed, so those counts only grow;
//! * removing a dependency shifts the later ones down but leaves the old last
//!   slot's count behind, and the next dependency appended there starts from
//!   that stale count;
//! * a vertex freed while another still depends on it (possible after the
//!   above) stays reachable through that dangling dependency: we keep it as a
//!   tombstone with its last dependencies, which is what the freed memory
//!   holds until the allocator reuses it.
//!
//! Cycle checks: every new dependency of a layer is inserted into a maintained
//! topological order of the layer (two-way search in the style of Pearce–Kelly
//! and Bender et al.: forward from the head and backward from the tail within
//! the affected range, in turns, until they meet, which is a cycle, or one
//! side is exhausted, whose vertices then move behind the tail or before the
//! head). On an acyclic layer whose live vertices depend on no tombstone this
//! answers exactly what OpenSM's depth-first search from the two paths' first
//! channels answers, without visiting the whole layer per pair. Once a
//! live vertex of a layer depends on a tombstone, the search could run into
//! it, and for that layer OpenSM's search itself is replayed from then on ([`Cdg::dfs_cycle`]); [`Cdg::is_ordered`] tells which.

/// "No vertex / no channel".
pub(super) const NONE: u32 = u32::MAX;

/// The routes LASH checks: for every (switch, destination switch) the channel
/// taken, and every channel's far end.
#[derive(Clone, Debug)]
pub(super) struct Paths {
    /// Number of switches.
    pub(super) n: usize,
    /// `hop[s * n + d]`: channel leaving `s` towards `d` ([`NONE`] for `s == d`).
    pub(super) hop: Vec<u32>,
    /// Channel → the switch it leads to.
    pub(super) to: Vec<u32>,
}

impl Paths {
    /// The channels of the path `s → d`, in order.
    fn walk(&self, s: u32, d: u32) -> impl Iterator<Item = u32> + '_ {
        let mut sw = s;
        std::iter::from_fn(move || {
            if sw == d {
                return None;
            }
            let c = self.hop[sw as usize * self.n + d as usize];
            if c == NONE {
                return None; // unreachable; the engine checks connectivity first
            }
            sw = self.to[c as usize];
            Some(c)
        })
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Dep {
    v: u32,
    used: i32,
}

#[derive(Clone, Debug)]
struct Vertex {
    /// Added by the trial in progress.
    temp: bool,
    /// Freed by balancing while possibly still depended upon.
    tombstone: bool,
    /// OpenSM's `seen` and `visiting_number` of its cycle search.
    seen: bool,
    visit: u32,
    num_temp_depend: u32,
    num_using: i32,
    /// Dependencies in use are `deps[..num_deps]`; slots beyond keep the
    /// counts OpenSM leaves there.
    num_deps: u32,
    deps: Vec<Dep>,
    /// In the topological-order list.
    linked: bool,
    label: u64,
    prev: u32,
    next: u32,
    /// Live vertices depending on this one (backward search, tombstone check).
    ins: Vec<u32>,
    /// Search marks, forward and backward.
    fmark: u32,
    bmark: u32,
}

impl Vertex {
    fn fresh() -> Self {
        Self {
            temp: true,
            tombstone: false,
            seen: false,
            visit: 0,
            num_temp_depend: 0,
            num_using: 0,
            num_deps: 0,
            deps: Vec::new(),
            linked: false,
            label: 0,
            prev: NONE,
            next: NONE,
            ins: Vec::new(),
            fmark: 0,
            bmark: 0,
        }
    }
}

/// Label spacing of the topological-order list, the gap below which a
/// window is relabelled, and the first label (tiny in unit tests, so that
/// they relabel all the time).
const SPACING: u64 = if cfg!(test) { 4 } else { 1 << 32 };
const MIN_GAP: u64 = if cfg!(test) { 1 } else { 1 << 20 };
const FIRST_LABEL: u64 = if cfg!(test) { 8 } else { 1 << 62 };

/// The dependency graphs of all layers.
#[derive(Debug)]
pub(super) struct Cdg {
    num_chans: usize,
    /// Per layer: channel → vertex.
    slots: Vec<Vec<u32>>,
    vtx: Vec<Vertex>,
    /// Ids of freed temporary vertices (never tombstones), for reuse.
    free: Vec<u32>,
    /// Per layer: its order is maintained and decides cycles (else: replay).
    ordered: Vec<bool>,
    head: u32,
    /// A dependency inserted since the last [`Cdg::take_cycle`] closed a cycle.
    cycle: bool,
    stamp: u32,
    fstack: Vec<u32>,
    bstack: Vec<u32>,
    ffound: Vec<u32>,
    bfound: Vec<u32>,
    dfs: Vec<(u32, u32, u32)>,
    visited: Vec<u32>,
}

impl Cdg {
    pub(super) fn new(num_chans: usize) -> Self {
        Self {
            num_chans,
            slots: Vec::new(),
            vtx: Vec::new(),
            free: Vec::new(),
            ordered: Vec::new(),
            head: NONE,
            cycle: false,
            stamp: 0,
            fstack: Vec::new(),
            bstack: Vec::new(),
            ffound: Vec::new(),
            bfound: Vec::new(),
            dfs: Vec::new(),
            visited: Vec::new(),
        }
    }

    /// Makes layers `0..=lane` exist.
    pub(super) fn ensure_lane(&mut self, lane: usize) {
        while self.slots.len() <= lane {
            self.slots.push(vec![NONE; self.num_chans]);
            self.ordered.push(true);
        }
    }

    /// Whether cycles in `lane` are decided by the maintained order
    /// ([`Cdg::take_cycle`]); if not, replay OpenSM's search ([`Cdg::dfs_cycle`]).
    pub(super) fn is_ordered(&self, lane: usize) -> bool {
        self.ordered[lane]
    }

    /// Stops maintaining the order of `lane` (tests: replay everywhere).
    #[cfg(test)]
    pub(super) fn unorder(&mut self, lane: usize) {
        self.ordered[lane] = false;
    }

    /// Whether a dependency added to an ordered layer since the last call
    /// closed a cycle.
    pub(super) fn take_cycle(&mut self) -> bool {
        std::mem::take(&mut self.cycle)
    }

    /// The vertex of the first channel of `s → d` in `lane`.
    pub(super) fn first_vertex(&self, paths: &Paths, s: u32, d: u32, lane: usize) -> u32 {
        paths
            .walk(s, d)
            .next()
            .map_or(NONE, |c| self.slots[lane][c as usize])
    }

    // ---- OpenSM's generate / set permanent / remove temp / remove semipermanent

    /// Adds the path `s → d` to `lane` tentatively (`generate_cdg_for_sp`).
    pub(super) fn add_path(&mut self, paths: &Paths, s: u32, d: u32, lane: usize) {
        let mut prev = NONE;
        for c in paths.walk(s, d) {
            let mut v = self.slots[lane][c as usize];
            if v == NONE {
                v = self.alloc();
                self.slots[lane][c as usize] = v;
                if self.ordered[lane] {
                    self.link_after(prev, v);
                }
            }
            self.vtx[v as usize].num_using += 1;
            if prev != NONE {
                self.add_dep(prev, v, lane);
            }
            prev = v;
        }
    }

    fn add_dep(&mut self, p: u32, v: u32, lane: usize) {
        let pv = &mut self.vtx[p as usize];
        let n = pv.num_deps as usize;
        let mut exists = false;
        for d in &mut pv.deps[..n] {
            if d.v == v {
                exists = true;
                d.used += 1;
            }
        }
        if exists {
            return;
        }
        if n < pv.deps.len() {
            pv.deps[n].v = v;
            pv.deps[n].used += 1;
        } else {
            pv.deps.push(Dep { v, used: 1 });
        }
        pv.num_deps += 1;
        if !pv.temp {
            pv.num_temp_depend += 1;
        }
        self.vtx[v as usize].ins.push(p);
        if self.ordered[lane] {
            self.order_edge(p, v);
        }
    }

    /// Keeps the trial's additions along `s → d` (`set_temp_depend_to_permanent_for_sp`).
    pub(super) fn make_permanent(&mut self, paths: &Paths, s: u32, d: u32, lane: usize) {
        for c in paths.walk(s, d) {
            let v = self.slots[lane][c as usize];
            if v == NONE {
                continue;
            }
            let vx = &mut self.vtx[v as usize];
            if vx.temp {
                vx.temp = false;
            } else {
                vx.num_temp_depend = 0;
            }
        }
    }

    /// Rolls the trial's additions along `s → d` back (`remove_temp_depend_for_sp`).
    pub(super) fn remove_temp(&mut self, paths: &Paths, s: u32, d: u32, lane: usize) {
        for c in paths.walk(s, d) {
            let v = self.slots[lane][c as usize];
            if v == NONE {
                continue;
            }
            if self.vtx[v as usize].temp {
                self.slots[lane][c as usize] = NONE;
                self.drop_out_deps(v, 0);
                self.unlink(v);
                self.free.push(v);
            } else {
                let keep = self.vtx[v as usize]
                    .num_deps
                    .saturating_sub(self.vtx[v as usize].num_temp_depend);
                self.drop_out_deps(v, keep as usize);
                let vx = &mut self.vtx[v as usize];
                vx.num_deps = keep;
                vx.num_temp_depend = 0;
                vx.num_using -= 1;
                for d in vx.deps.iter_mut().skip(keep as usize) {
                    d.used = 0;
                }
            }
        }
    }

    /// Takes the established path `s → d` out of `lane`
    /// (`remove_semipermanent_depend_for_sp`, balancing only).
    pub(super) fn remove_semipermanent(&mut self, paths: &Paths, s: u32, d: u32, lane: usize) {
        let chans: Vec<u32> = paths.walk(s, d).collect();
        // OpenSM's `depend` survives from one step to the next.
        let mut depend = 0usize;
        for (k, &c) in chans.iter().enumerate() {
            let v = self.slots[lane][c as usize];
            if v == NONE {
                continue;
            }
            if self.vtx[v as usize].num_using == 1 {
                self.slots[lane][c as usize] = NONE;
                self.drop_out_deps(v, 0);
                self.unlink(v);
                let vx = &mut self.vtx[v as usize];
                vx.tombstone = true;
                // The allocator's bookkeeping overwrites `seen` with non-zero bytes.
                vx.seen = true;
                if !vx.ins.is_empty() {
                    // A live vertex depends on a tombstone: replay from now on.
                    self.ordered[lane] = false;
                }
                continue;
            }
            let next_vertex = chans.get(k + 1).map(|&c2| self.slots[lane][c2 as usize]);
            let vx = &mut self.vtx[v as usize];
            vx.num_using -= 1;
            let Some(w) = next_vertex else { continue };
            let n = vx.num_deps as usize;
            if let Some(i) = vx.deps[..n].iter().rposition(|dep| dep.v == w) {
                depend = i;
            }
            if depend >= vx.deps.len() {
                vx.deps.resize(depend + 1, Dep { v: NONE, used: 0 });
            }
            if vx.deps[depend].used == 1 {
                if n > 0 {
                    let gone = vx.deps[depend].v;
                    for i in depend..n.saturating_sub(1) {
                        vx.deps[i] = vx.deps[i + 1];
                    }
                    vx.num_deps -= 1;
                    if depend < n {
                        self.forget_dep(v, gone);
                    }
                }
            } else {
                vx.deps[depend].used -= 1;
            }
        }
    }

    /// A live vertex's dependencies `deps[keep..num_deps]` go away (or the
    /// vertex stops being live, `keep` 0): their targets lose an in-degree.
    fn drop_out_deps(&mut self, v: u32, keep: usize) {
        let n = self.vtx[v as usize].num_deps as usize;
        for i in keep..n {
            let w = self.vtx[v as usize].deps[i].v;
            self.forget_dep(v, w);
        }
    }

    /// The live vertex `p` no longer depends on `w`.
    fn forget_dep(&mut self, p: u32, w: u32) {
        let ins = &mut self.vtx[w as usize].ins;
        if let Some(i) = ins.iter().position(|&u| u == p) {
            ins.swap_remove(i);
        }
    }

    fn alloc(&mut self) -> u32 {
        if let Some(v) = self.free.pop() {
            self.vtx[v as usize] = Vertex::fresh();
            v
        } else {
            self.vtx.push(Vertex::fresh());
            (self.vtx.len() - 1) as u32
        }
    }

    // ---- OpenSM's cycle search, replayed (balancing)

    /// `cycle_exists` started at `start`: a depth-first search that reports a
    /// dependency back to a vertex still being explored. Marks stay until
    /// [`Cdg::reset_visits`], as in OpenSM, where the second search of a pair
    /// runs over the first one's marks.
    pub(super) fn dfs_cycle(&mut self, start: u32) -> bool {
        if start == NONE {
            return false;
        }
        let mut found = false;
        self.dfs.clear();
        // The start vertex is always (re)entered.
        self.vtx[start as usize].visit = 1;
        self.visited.push(start);
        self.dfs.push((start, 0, 1));
        while let Some(top) = self.dfs.last_mut() {
            let (v, i, depth) = *top;
            let vx = &self.vtx[v as usize];
            if i < vx.num_deps {
                top.1 += 1;
                let w = vx.deps[i as usize].v;
                let wx = &mut self.vtx[w as usize];
                if wx.visit > 0 {
                    if depth + 1 > wx.visit && !wx.seen {
                        found = true;
                        break;
                    }
                } else {
                    wx.visit = depth + 1;
                    self.visited.push(w);
                    self.dfs.push((w, 0, depth + 1));
                }
            } else {
                self.vtx[v as usize].seen = true;
                self.dfs.pop();
            }
        }
        for &(v, _, _) in &self.dfs {
            self.vtx[v as usize].seen = true;
        }
        self.dfs.clear();
        found
    }

    /// Clears the search marks of live vertices (tombstones keep theirs).
    pub(super) fn reset_visits(&mut self) {
        for &v in &self.visited {
            let vx = &mut self.vtx[v as usize];
            if !vx.tombstone {
                vx.visit = 0;
                vx.seen = false;
            }
        }
        self.visited.clear();
    }

    // ---- topological order (layer assignment)

    /// Inserts `x → y` into the order; sets `cycle` if it closes one.
    fn order_edge(&mut self, x: u32, y: u32) {
        if self.cycle {
            return; // the trial is lost and will be rolled back
        }
        let ub = self.vtx[x as usize].label;
        if x == y {
            self.cycle = true;
            return;
        }
        if ub < self.vtx[y as usize].label {
            return;
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            for v in &mut self.vtx {
                v.fmark = 0;
                v.bmark = 0;
            }
            self.stamp = 1;
        }
        let (stamp, lb) = (self.stamp, self.vtx[y as usize].label);
        for list in [
            &mut self.fstack,
            &mut self.bstack,
            &mut self.ffound,
            &mut self.bfound,
        ] {
            list.clear();
        }
        self.fstack.push(y);
        self.vtx[y as usize].fmark = stamp;
        self.bstack.push(x);
        self.vtx[x as usize].bmark = stamp;
        loop {
            // One vertex forward: what y reaches below x's label.
            let Some(w) = self.fstack.pop() else {
                // Everything y reaches (below x) moves right behind x.
                let mut moved = std::mem::take(&mut self.ffound);
                moved.sort_unstable_by_key(|&v| self.vtx[v as usize].label);
                for &v in &moved {
                    self.unlink(v);
                }
                self.splice_after(x, &moved);
                self.ffound = moved;
                return;
            };
            self.ffound.push(w);
            for i in 0..self.vtx[w as usize].num_deps as usize {
                let z = self.vtx[w as usize].deps[i].v;
                let zx = &mut self.vtx[z as usize];
                if zx.bmark == stamp {
                    self.cycle = true; // z reaches x
                    return;
                }
                if zx.fmark != stamp && zx.label < ub {
                    zx.fmark = stamp;
                    self.fstack.push(z);
                }
            }
            // One vertex backward: what reaches x above y's label.
            let Some(w) = self.bstack.pop() else {
                // Everything reaching x (above y) moves right before y.
                let mut moved = std::mem::take(&mut self.bfound);
                moved.sort_unstable_by_key(|&v| self.vtx[v as usize].label);
                for &v in &moved {
                    self.unlink(v);
                }
                let before = self.vtx[y as usize].prev;
                self.splice_after(before, &moved);
                self.bfound = moved;
                return;
            };
            self.bfound.push(w);
            for i in 0..self.vtx[w as usize].ins.len() {
                let z = self.vtx[w as usize].ins[i];
                let zx = &mut self.vtx[z as usize];
                if zx.fmark == stamp {
                    self.cycle = true; // y reaches z
                    return;
                }
                if zx.bmark != stamp && zx.label > lb {
                    zx.bmark = stamp;
                    self.bstack.push(z);
                }
            }
        }
    }

    /// Links `v` right after `a` (at the front when `a` is [`NONE`]).
    fn link_after(&mut self, a: u32, v: u32) {
        self.splice_after(a, &[v]);
    }

    /// Links the unlinked vertices `vs`, in this order, right after `a` (at
    /// the front when `a` is [`NONE`]). Where the labels around `a` are too
    /// dense, the vertices after `a` are spread out over a window that doubles
    /// until it has room (or reaches the end of the list, where room is
    /// unlimited).
    fn splice_after(&mut self, a: u32, vs: &[u32]) {
        let Some(&last_new) = vs.last() else { return };
        let k = vs.len() as u64;
        let next = if a == NONE {
            self.head
        } else {
            self.vtx[a as usize].next
        };
        // Link first.
        let mut prev = a;
        for &v in vs {
            let vx = &mut self.vtx[v as usize];
            vx.linked = true;
            vx.prev = prev;
            if prev == NONE {
                self.head = v;
            } else {
                self.vtx[prev as usize].next = v;
            }
            prev = v;
        }
        self.vtx[last_new as usize].next = next;
        if next != NONE {
            self.vtx[next as usize].prev = last_new;
        }
        let first_new = vs[0];
        if a == NONE {
            // Front: hug the old head, whose label starts far from 0.
            let hi = if next == NONE {
                FIRST_LABEL + SPACING
            } else {
                self.vtx[next as usize].label
            };
            if hi > k {
                let step = (hi / (k + 1)).clamp(1, SPACING);
                self.label_run(first_new, k, hi - step * k, step);
                return;
            }
        }
        let lo = if a == NONE {
            0
        } else {
            self.vtx[a as usize].label
        };
        let (mut end, mut j, mut want) = (next, 0u64, 1u64);
        let hi = loop {
            let hi = if end == NONE {
                u64::MAX
            } else {
                self.vtx[end as usize].label
            };
            if end == NONE || (hi - lo) / (j + k + 1) >= MIN_GAP {
                break hi;
            }
            while j < want && end != NONE {
                end = self.vtx[end as usize].next;
                j += 1;
            }
            want *= 2;
        };
        let step = ((hi - lo) / (j + k + 1)).clamp(1, SPACING);
        self.label_run(first_new, k + j, lo + step, step);
    }

    /// Labels `count` list vertices from `v` on: `first`, `first + step`, ….
    fn label_run(&mut self, mut v: u32, count: u64, first: u64, step: u64) {
        let mut label = first;
        for _ in 0..count {
            let vx = &mut self.vtx[v as usize];
            vx.label = label;
            label += step;
            v = vx.next;
        }
    }

    fn unlink(&mut self, v: u32) {
        if !self.vtx[v as usize].linked {
            return;
        }
        let (p, n) = {
            let vx = &self.vtx[v as usize];
            (vx.prev, vx.next)
        };
        if p == NONE {
            if self.head == v {
                self.head = n;
            }
        } else {
            self.vtx[p as usize].next = n;
        }
        if n != NONE {
            self.vtx[n as usize].prev = p;
        }
        let vx = &mut self.vtx[v as usize];
        vx.prev = NONE;
        vx.next = NONE;
        vx.linked = false;
    }
}

#[cfg(test)]
impl Cdg {
    /// Test check of `lane`: (a live dependency runs against the maintained
    /// order, the live vertices' dependencies contain a cycle).
    pub(super) fn audit(&self, lane: usize) -> (bool, bool) {
        let live: Vec<u32> = self.slots[lane]
            .iter()
            .copied()
            .filter(|&v| v != NONE)
            .collect();
        let mut against_order = false;
        let mut indeg = std::collections::HashMap::new();
        for &v in &live {
            let vx = &self.vtx[v as usize];
            for d in &vx.deps[..vx.num_deps as usize] {
                if !self.vtx[d.v as usize].tombstone {
                    against_order |= vx.label >= self.vtx[d.v as usize].label;
                    *indeg.entry(d.v).or_insert(0usize) += 1;
                }
            }
        }
        let mut queue: Vec<u32> = live
            .iter()
            .copied()
            .filter(|v| !indeg.contains_key(v))
            .collect();
        let mut done = 0;
        while let Some(v) = queue.pop() {
            done += 1;
            let vx = &self.vtx[v as usize];
            for d in &vx.deps[..vx.num_deps as usize] {
                if let Some(k) = indeg.get_mut(&d.v) {
                    *k -= 1;
                    if *k == 0 {
                        queue.push(d.v);
                    }
                }
            }
        }
        (against_order, done != live.len())
    }

    /// Test check of the order list: links consistent, labels increasing.
    pub(super) fn check_list(&self) -> Result<(), String> {
        let (mut v, mut prev, mut last, mut n) = (self.head, NONE, None, 0);
        while v != NONE {
            let vx = &self.vtx[v as usize];
            if vx.prev != prev || !vx.linked {
                return Err(format!("list broken at {v}"));
            }
            if last.is_some_and(|l| vx.label <= l) {
                return Err(format!("labels not increasing at {v}"));
            }
            (last, prev, v, n) = (Some(vx.label), v, vx.next, n + 1);
        }
        let linked = self.vtx.iter().filter(|x| x.linked).count();
        if linked != n {
            return Err(format!("{linked} vertices marked linked, {n} in the list"));
        }
        Ok(())
    }
}
