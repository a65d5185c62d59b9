//! ROUTEDOWNGOINGBYASCENDING and ROUTEUPGOINGBYDESCENDING (seed 002 Algs. 3
//! and 4, corrected as E §2.3.4–2.3.5 says) with partition marks, policy
//! exclusion and weighted port loads.
//!
//! For one destination LID on leaf L:
//!
//! - *ascending* (Alg. 3): at each switch the up-port group is chosen by
//!   load (ties: highest remote GUID); among equally least-loaded groups one
//!   whose remote switch is DOWN-marked with the node's P_Key wins (the one
//!   with most nodes of the partition); otherwise the first group in load
//!   order whose switch is not excluded by the policy rule (D3). If every
//!   group is excluded (D1), `strict` fails and `best-effort` takes the least
//!   loaded group and warns. The chosen port's load grows by the node's
//!   weight (1 except in pFTree-Wt) and the remote switch is marked (D2).
//!   Like ftree, the other up groups then get uncounted secondary routes so
//!   that every switch above the leaf can reach the LID;
//! - *descending* (Alg. 4, D5): from every switch reached, each lower switch
//!   without an equal or shorter route gets one through its least-loaded
//!   port to this switch, counted on the main path.
//!
//! Switch LIDs are routed the same way from the switch itself, uncounted and
//! unmarked (ftree's secondary routes to switches).

use std::collections::BTreeSet;

use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::partitions::{GlobalPolicy, Isolation};
use ibcloud_fabric::{Guid, Lid, NodeId, PortNum};

use super::options::{Flavor, PftreeVariant};
use crate::engine::RoutingError;
use crate::fat_tree::{FatTree, Remote, SwitchIx};

/// A port group to another switch; the first (local, remote) port pair is
/// kept inline (most groups have one port), parallel ones in `rest`.
#[derive(Clone, Debug)]
struct Grp {
    remote: SwitchIx,
    guid: Guid,
    first: (PortNum, PortNum),
    rest: Vec<(PortNum, PortNum)>,
}

impl Grp {
    fn len(&self) -> usize {
        1 + self.rest.len()
    }

    fn ports(&self) -> impl Iterator<Item = (PortNum, PortNum)> + '_ {
        std::iter::once(self.first).chain(self.rest.iter().copied())
    }
}

/// The router's state over all LIDs.
#[derive(Debug)]
pub(crate) struct Router<'a> {
    tree: &'a FatTree,
    up: Vec<Vec<Grp>>,
    down: Vec<Vec<Grp>>,
    node: Vec<NodeId>,
    /// Load per (switch, local port): routes (or weight) assigned through it.
    load: Vec<f64>,
    /// DOWN marks per switch: (partition, nodes routed).
    marks: Vec<Vec<(u16, u32)>>,
    /// Row width of `load`.
    stride: usize,
    /// Policy of each partition index.
    policy: Vec<Isolation>,
    hop: Vec<u32>,
    stamp: Vec<u32>,
    cur: u32,
    flavor: Flavor,
    variant: PftreeVariant,
    global: GlobalPolicy,
    /// (switch, partition) pairs where no up-port met the policy (D1).
    pub(crate) relaxed: BTreeSet<(SwitchIx, Option<u16>)>,
    /// Per switch, pFTree's `max`: ⌈compute nodes below / up-ports⌉.
    cap: Vec<f64>,
    /// Whether the node being routed packs onto marked ports up to `cap`.
    packing: bool,
    /// Switches with the same switches below them share a class (all
    /// level-1 switches of a pod, say). Once one of them has handed routes
    /// down at hop h, every switch below has a route of at most h + 1, so a
    /// class member at hop ≥ h has nothing to hand down (ftree's trick):
    /// per LID, the lowest hop a class was scanned at.
    class: Vec<u32>,
    class_hop: Vec<u32>,
    class_stamp: Vec<u32>,
    /// The LFT column of the LID being routed, per switch slot (written to
    /// the tables 64 LIDs at a time: column writes across every switch's
    /// table would miss the cache on each entry).
    col: Vec<u8>,
    pending: Vec<u8>,
    pending_lids: Vec<Lid>,
}

/// "No port" in a column.
const UNSET: u8 = 255;
/// LIDs buffered before they are written to the tables.
const BATCH: usize = 64;

/// Row width of the per-port load array (switch ports 0..=254).
fn stride(tree: &FatTree) -> usize {
    tree.switches()
        .map(|s| {
            tree.up_groups(s)
                .chain(tree.down_groups(s))
                .flat_map(|g| g.ports.into_iter().map(|p| p.0 as usize + 1))
                .max()
                .unwrap_or(1)
        })
        .max()
        .unwrap_or(1)
}

impl<'a> Router<'a> {
    pub(crate) fn new(
        tree: &'a FatTree,
        policy: Vec<Isolation>,
        flavor: Flavor,
        variant: PftreeVariant,
        global: GlobalPolicy,
    ) -> Self {
        let n = tree.num_switch_slots();
        let mut up = vec![Vec::new(); n];
        let mut down = vec![Vec::new(); n];
        let mut node = vec![NodeId(0); n];
        let grp = |g: crate::fat_tree::PortGroup| match g.remote {
            Remote::Switch(r) if !g.ports.is_empty() => Some(Grp {
                remote: r,
                guid: tree.guid(r),
                first: g.ports[0],
                rest: g.ports[1..].to_vec(),
            }),
            Remote::Switch(_) => None,
            Remote::Ca { .. } => None,
        };
        for s in tree.switches() {
            up[s as usize] = tree.up_groups(s).filter_map(grp).collect();
            down[s as usize] = tree.down_groups(s).filter_map(grp).collect();
            node[s as usize] = tree.node(s);
        }
        Self {
            tree,
            up,
            down,
            node,
            load: vec![0.0; n * stride(tree)],
            stride: stride(tree),
            marks: vec![Vec::new(); n],
            policy,
            hop: vec![0; n],
            stamp: vec![0; n],
            cur: 0,
            flavor,
            variant,
            global,
            relaxed: BTreeSet::new(),
            cap: Vec::new(),
            packing: false,
            class: Vec::new(),
            class_hop: Vec::new(),
            class_stamp: Vec::new(),
            col: vec![UNSET; n],
            pending: Vec::with_capacity(n * BATCH),
            pending_lids: Vec::with_capacity(BATCH),
        }
        .with_caps()
        .with_classes()
    }

    fn with_classes(mut self) -> Self {
        let mut ids: std::collections::HashMap<Vec<u32>, u32> = std::collections::HashMap::new();
        let mut class = vec![u32::MAX; self.down.len()];
        for (s, groups) in self.down.iter().enumerate() {
            let mut below: Vec<u32> = groups.iter().map(|g| g.remote).collect();
            below.sort_unstable();
            let next = ids.len() as u32;
            class[s] = *ids.entry(below).or_insert(next);
        }
        self.class_hop = vec![0; ids.len()];
        self.class_stamp = vec![0; ids.len()];
        self.class = class;
        self
    }

    /// pFTree's `max` counter per switch: compute nodes in its subtree over
    /// its up-ports, rounded up.
    fn with_caps(mut self) -> Self {
        let n = self.up.len();
        let mut cns = vec![0usize; n];
        for &l in self.tree.leaves() {
            cns[l as usize] = self.tree.compute_nodes(l).len();
        }
        let mut cap = vec![f64::INFINITY; n];
        for s in self.tree.switches() {
            // Leaves below s (breadth-first over down groups).
            let mut seen = vec![false; n];
            let mut stack = vec![s];
            let mut below = 0usize;
            seen[s as usize] = true;
            while let Some(x) = stack.pop() {
                below += cns[x as usize];
                for g in &self.down[x as usize] {
                    if !seen[g.remote as usize] {
                        seen[g.remote as usize] = true;
                        stack.push(g.remote);
                    }
                }
            }
            let ups: usize = self.up[s as usize].iter().map(Grp::len).sum();
            if ups > 0 {
                cap[s as usize] = below.div_ceil(ups) as f64;
            }
        }
        self.cap = cap;
        self
    }

    #[inline]
    fn pix(&self, s: SwitchIx, p: PortNum) -> usize {
        s as usize * self.stride + p as usize
    }

    #[inline]
    fn better(&self, s: SwitchIx, h: u32) -> bool {
        self.stamp[s as usize] != self.cur || self.hop[s as usize] > h
    }

    fn reach(&mut self, s: SwitchIx, h: u32) {
        self.stamp[s as usize] = self.cur;
        self.hop[s as usize] = h;
    }

    fn group_load(&self, s: SwitchIx, g: &Grp) -> f64 {
        g.ports().map(|(p, _)| self.load[self.pix(s, p)]).sum()
    }

    /// The least-loaded port of a group (ties: lowest port).
    fn least_port(&self, s: SwitchIx, g: &Grp) -> (PortNum, PortNum) {
        let mut best = g.first;
        for &pp in &g.rest {
            if self.load[self.pix(s, pp.0)] < self.load[self.pix(s, best.0)] {
                best = pp;
            }
        }
        best
    }

    /// Starts a new LID.
    fn next_lid(&mut self) {
        self.cur = self.cur.wrapping_add(1);
        if self.cur == 0 {
            self.stamp.fill(0);
            self.class_stamp.fill(0);
            self.cur = 1;
        }
    }

    /// Routes a compute node's LID: leaf port, then Algs. 3/4 from its leaf.
    /// `packing`: pFTree-Ext's phy-first pass: fill ports already marked
    /// with the partition up to `max` before opening new ones, so the phy
    /// nodes of all leaves, routed first, take as few switches as Alg. 2's
    /// interleaving would give them.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn route_cn(
        &mut self,
        tables: &mut ForwardingTables,
        leaf: SwitchIx,
        lid: Lid,
        leaf_port: PortNum,
        part: Option<u16>,
        weight: f64,
        packing: bool,
    ) -> Result<(), RoutingError> {
        self.packing = packing;
        self.next_lid();
        self.col[leaf as usize] = leaf_port;
        self.reach(leaf, 0);
        self.ascend(leaf, true, part, weight)?;
        self.finish(tables, lid);
        Ok(())
    }

    /// Moves the finished column to the batch, writing a full batch out.
    fn finish(&mut self, tables: &mut ForwardingTables, lid: Lid) {
        self.pending.extend_from_slice(&self.col);
        self.col.fill(UNSET);
        self.pending_lids.push(lid);
        if self.pending_lids.len() == BATCH {
            self.flush(tables);
        }
    }

    /// Writes the buffered columns into the tables, switch by switch.
    pub(crate) fn flush(&mut self, tables: &mut ForwardingTables) {
        let n = self.col.len();
        for s in 0..n {
            let node = self.node[s];
            for (i, &lid) in self.pending_lids.iter().enumerate() {
                let p = self.pending[i * n + s];
                if p != UNSET {
                    tables.set(node, lid, p);
                }
            }
        }
        self.pending.clear();
        self.pending_lids.clear();
    }

    /// Routes a switch's own LID (uncounted, unmarked).
    pub(crate) fn route_switch(
        &mut self,
        tables: &mut ForwardingTables,
        s: SwitchIx,
    ) -> Result<(), RoutingError> {
        let lid = self.tree.lid(s);
        if lid.0 == 0 {
            return Ok(());
        }
        self.next_lid();
        self.col[s as usize] = 0;
        self.reach(s, 0);
        self.ascend(s, false, None, 0.0)?;
        self.finish(tables, lid);
        Ok(())
    }

    fn ascend(
        &mut self,
        sw: SwitchIx,
        main: bool,
        part: Option<u16>,
        w: f64,
    ) -> Result<(), RoutingError> {
        self.descend(sw, main, part, w);
        let n = self.up[sw as usize].len();
        if n == 0 {
            return Ok(());
        }
        let h = self.hop[sw as usize] + 1;
        let chosen = if main {
            let g = self.select(sw, part)?;
            let grp = &self.up[sw as usize][g];
            let r = grp.remote;
            let (lp, rp) = self.least_port(sw, grp);
            self.col[r as usize] = rp;
            self.reach(r, h);
            let i = self.pix(sw, lp);
            self.load[i] += w;
            if let Some(p) = part {
                self.mark(r, p);
            }
            self.ascend(r, true, part, w)?;
            Some(g)
        } else {
            None
        };
        for g in 0..n {
            if Some(g) == chosen {
                continue;
            }
            let grp = &self.up[sw as usize][g];
            let r = grp.remote;
            if !self.better(r, h) {
                continue;
            }
            let (_, rp) = self.least_port(sw, grp);
            self.col[r as usize] = rp;
            self.reach(r, h);
            self.ascend(r, false, part, w)?;
        }
        Ok(())
    }

    /// Alg. 4 (D5): a route up to `sw` on every lower switch without one.
    fn descend(&mut self, sw: SwitchIx, main: bool, part: Option<u16>, w: f64) {
        let here = self.hop[sw as usize];
        let c = self.class[sw as usize] as usize;
        if self.class_stamp[c] == self.cur && self.class_hop[c] <= here {
            return;
        }
        self.class_stamp[c] = self.cur;
        self.class_hop[c] = here;
        let h = here + 1;
        for g in 0..self.down[sw as usize].len() {
            let grp = &self.down[sw as usize][g];
            let r = grp.remote;
            if !self.better(r, h) {
                continue;
            }
            // The lower switch's port up to `sw`: least up-load on the lower side.
            let mut best = grp.first;
            for &pp in &grp.rest {
                if self.load[self.pix(sw, pp.0)] < self.load[self.pix(sw, best.0)] {
                    best = pp;
                }
            }
            self.col[r as usize] = best.1;
            self.reach(r, h);
            if main {
                let i = self.pix(sw, best.0);
                self.load[i] += w;
            }
            let _ = part;
            self.descend(r, main, part, w);
        }
    }

    fn mark(&mut self, r: SwitchIx, p: u16) {
        let m = &mut self.marks[r as usize];
        if let Some(e) = m.iter_mut().find(|e| e.0 == p) {
            e.1 += 1;
        } else if !self.variant.literal_marking || m.is_empty() {
            m.push((p, 1));
        }
    }

    fn policy_of(&self, p: Option<u16>) -> Isolation {
        p.and_then(|p| self.policy.get(p as usize).copied())
            .unwrap_or_default()
    }

    /// Whether the policy rule (D3) keeps a node of `part` off switch `r`.
    fn excluded(&self, r: SwitchIx, part: Option<u16>) -> bool {
        if self.flavor != Flavor::Ext {
            return false;
        }
        let mine = self.policy_of(part);
        self.marks[r as usize].iter().any(|&(q, _)| {
            if Some(q) == part {
                return false;
            }
            let theirs = self.policy_of(Some(q));
            if self.variant.literal_exclusion {
                theirs > mine
            } else {
                mine == Isolation::Phy || theirs == Isolation::Phy
            }
        })
    }

    /// Alg. 3's choice of up group at `sw` for a node of `part`.
    fn select(&mut self, sw: SwitchIx, part: Option<u16>) -> Result<usize, RoutingError> {
        let groups = &self.up[sw as usize];
        let mut order: Vec<(f64, Guid, usize)> = groups
            .iter()
            .enumerate()
            .map(|(i, g)| (self.group_load(sw, g), g.guid, i))
            .collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
        if self.packing {
            if let Some(p) = part {
                // Marked groups with room first (most nodes of the partition),
                // then the least-loaded unmarked one with room.
                let cap = self.cap[sw as usize];
                let room = |i: usize, l: f64| l + 1.0 <= cap * groups[i].len() as f64;
                let mut best: Option<(u32, usize)> = None;
                for &(l, _, i) in &order {
                    let r = groups[i].remote;
                    if !room(i, l) || self.excluded(r, part) {
                        continue;
                    }
                    if let Some(&(_, c)) = self.marks[r as usize].iter().find(|m| m.0 == p) {
                        if best.is_none_or(|(bc, _)| c > bc) {
                            best = Some((c, i));
                        }
                    }
                }
                if let Some((_, i)) = best {
                    return Ok(i);
                }
                if let Some(&(_, _, i)) = order
                    .iter()
                    .find(|&&(l, _, i)| room(i, l) && !self.excluded(groups[i].remote, part))
                {
                    return Ok(i);
                }
            }
        }
        let min = order[0].0;
        if let Some(p) = part {
            let mut best: Option<(u32, usize)> = None;
            for &(l, _, i) in &order {
                if l != min {
                    break;
                }
                let r = groups[i].remote;
                let Some(&(_, count)) = self.marks[r as usize].iter().find(|m| m.0 == p) else {
                    continue;
                };
                if !self.variant.literal_exclusion && self.excluded(r, part) {
                    continue;
                }
                if best.is_none_or(|(c, _)| count > c) {
                    best = Some((count, i));
                }
            }
            if let Some((_, i)) = best {
                return Ok(i);
            }
        }
        for &(_, _, i) in &order {
            if !self.excluded(groups[i].remote, part) {
                return Ok(i);
            }
        }
        // D1: every up group is excluded.
        if self.global == GlobalPolicy::Strict {
            return Err(RoutingError::Unsupported {
                engine: self.flavor.name(),
                reason: format!(
                    "strict isolation cannot be met: every up-port of switch {} is taken by another partition for partition #{} ({})",
                    self.tree.guid(sw),
                    part.map_or(-1, i64::from),
                    self.policy_of(part),
                ),
            });
        }
        self.relaxed.insert((sw, part));
        Ok(order[0].2)
    }
}
