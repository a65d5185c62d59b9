//! Deadlock removal: channel dependency graphs per virtual layer, cycle
//! breaking by moving paths to the next layer, and the final balancing of
//! layers over the available SLs, as OpenSM's `dfsssp_remove_deadlocks`.
//!
//! Channels are switch-to-switch ports (`Topo` slots). A path from a CA adds
//! the dependency of each consecutive pair of channels it uses; paths from
//! switches start at port 0 and add nothing, as in OpenSM.

use super::{EndPort, LidMatrix, Topo, NONE};
use crate::engine::RoutingError;
use ibcloud_fabric::lft::NO_PORT;

/// The outcome: SL table over the sorted end-port LIDs and the layer counts.
#[derive(Debug)]
pub(super) struct Layers {
    /// End-port LIDs, ascending.
    pub(super) lids: Vec<u16>,
    /// `vl[src_index * lids.len() + dst_index]`; `None` when every pair is on SL 0.
    pub(super) vl: Option<Vec<u8>>,
    /// Layers needed (available + 1 when even the last layer had a cycle).
    pub(super) needed: usize,
    /// Paths per layer before balancing.
    pub(super) paths_per_vl: Vec<u64>,
    /// SLs per layer after balancing.
    pub(super) split_count: Vec<u8>,
}

fn engine_error(reason: impl Into<String>) -> RoutingError {
    RoutingError::Unsupported {
        engine: "dfsssp",
        reason: reason.into(),
    }
}

fn no_path(topo: &Topo, v: u32, lid: u16) -> RoutingError {
    engine_error(format!(
        "switch LID {} has no route to LID {lid}",
        topo.lid[v as usize]
    ))
}

/// Assigns every end-port pair a layer and balances the layers over `vls` SLs.
pub(super) fn remove_deadlocks(
    topo: &Topo,
    order: &[EndPort],
    lft: &LidMatrix,
    vls: u8,
) -> Result<Layers, RoutingError> {
    let avail = vls as usize;
    let mut lids: Vec<u16> = order.iter().flat_map(|e| e.lids()).collect();
    lids.sort_unstable();
    let total: u64 = order.iter().map(|e| 1u64 << e.lmc).sum();
    let same_port: u64 = order.iter().map(|e| 1u64 << (2 * e.lmc as u32)).sum();
    let (needed, mut paths_per_vl, mut vl) = if layer0_is_acyclic(topo, order, lft)? {
        let mut ppv = vec![0u64; avail];
        ppv[0] = total * total - same_port;
        (1, ppv, None)
    } else {
        let (needed, ppv, vl) = Exact::new(topo, order, lft, &lids, avail).run()?;
        (needed, ppv, Some(vl))
    };
    let before = paths_per_vl.clone();
    let split_count = balance(
        needed,
        avail,
        &mut paths_per_vl,
        vl.as_mut().map(|v| (v.as_mut_slice(), lids.len())),
    )?;
    Ok(Layers {
        lids,
        vl,
        needed,
        paths_per_vl: before,
        split_count,
    })
}

/// OpenSM's balancing: spare SLs go one by one to the layer with the most
/// paths per SL; then layers are renumbered (highest first) to the first SL
/// of their range, moving at most as many table entries as the layer counted.
fn balance(
    needed: usize,
    avail: usize,
    ppv: &mut [u64],
    table: Option<(&mut [u8], usize)>,
) -> Result<Vec<u8>, RoutingError> {
    if needed > avail {
        return Err(RoutingError::NotEnoughLayers {
            engine: "dfsssp",
            needed,
            available: avail,
        });
    }
    let mut split = vec![0u8; avail];
    for s in split.iter_mut().take(needed) {
        *s = 1;
    }
    if needed < avail {
        for _ in needed..avail {
            let (mut vl, mut most) = (0, 0.0f64);
            for t in 0..needed {
                let avg = ppv[t] as f64 / split[t] as f64;
                if most < avg {
                    vl = t;
                    most = avg;
                }
            }
            split[vl] += 1;
        }
        let mut table = table;
        for from in (1..needed).rev() {
            let to: usize = split[..from].iter().map(|&s| s as usize).sum();
            let count = ppv[from];
            if let Some((vls, n)) = table.as_mut() {
                change_vl(vls, *n, from as u8, to as u8, count);
            }
            split[to] = split[from];
            split[from] = 0;
            ppv[to] = ppv[from];
            ppv[from] = 0;
        }
    }
    Ok(split)
}

/// OpenSM's `vltable_change_vl`: the first `count` pairs (source-major,
/// skipping a LID to itself) on `from` move to `to`.
fn change_vl(vl: &mut [u8], n: usize, from: u8, to: u8, count: u64) {
    let mut set = 0u64;
    for s in 0..n {
        for d in 0..n {
            if set == count {
                return;
            }
            if s != d && vl[s * n + d] == from {
                vl[s * n + d] = to;
                set += 1;
            }
        }
    }
}

/// True if the dependency graph of all paths on one layer has no cycle.
/// Per destination LID the paths form a tree, so each switch is walked once
/// per destination; dependencies are kept as (switch, in port, out port) bits.
fn layer0_is_acyclic(
    topo: &Topo,
    order: &[EndPort],
    lft: &LidMatrix,
) -> Result<bool, RoutingError> {
    let n = topo.len();
    if n == 0 {
        return Ok(true);
    }
    // Per vertex a (ports+1)² matrix of used (in, out) port pairs.
    let width: Vec<usize> = (0..n as u32).map(|v| topo.slots(v).len()).collect();
    let mut mbase = Vec::with_capacity(n + 1);
    let mut acc = 0usize;
    for w in &width {
        mbase.push(acc);
        acc += w * w;
    }
    let mut used = vec![false; acc];
    let mut cas = vec![0u32; n];
    for e in order.iter().filter(|e| !e.is_switch) {
        cas[e.vertex as usize] += 1;
    }
    let entries: Vec<u32> = (0..n as u32).filter(|&v| cas[v as usize] > 0).collect();
    let mut seen = vec![0u32; n];
    let mut epoch = 0u32;
    for dest in order {
        for dlid in dest.lids() {
            epoch += 1;
            let row = lft.row(lft.row_of[dlid as usize] as usize);
            for &e in &entries {
                let own = u32::from(!dest.is_switch && dest.vertex == e);
                if cas[e as usize] - own == 0 {
                    continue;
                }
                let (mut s, mut in_port) = (e, None::<u8>);
                let mut steps = 0;
                loop {
                    let out = row[s as usize];
                    if out == NO_PORT {
                        return Err(no_path(topo, s, dlid));
                    }
                    let slot = topo.base[s as usize] as usize + out as usize;
                    if out == 0
                        || slot >= topo.base[s as usize + 1] as usize
                        || topo.peer[slot] == NONE
                    {
                        break;
                    }
                    if let Some(i) = in_port {
                        used[mbase[s as usize] + i as usize * width[s as usize] + out as usize] =
                            true;
                    }
                    if seen[s as usize] == epoch {
                        break;
                    }
                    seen[s as usize] = epoch;
                    steps += 1;
                    if steps > n {
                        return Err(engine_error(format!("forwarding loop towards LID {dlid}")));
                    }
                    in_port = Some(topo.peer_port[slot]);
                    s = topo.peer[slot];
                }
            }
        }
    }
    // Kahn's algorithm over the channels (slots).
    let slots = topo.peer.len();
    let mut out_deg = vec![0u32; slots + 1];
    let mut indeg = vec![0u32; slots];
    let mut edges = Vec::new();
    for v in 0..n {
        let w = width[v];
        for i in 0..w {
            for o in 0..w {
                if used[mbase[v] + i * w + o] {
                    let slot_in = topo.base[v] as usize + i;
                    let from = topo.base[topo.peer[slot_in] as usize] as usize
                        + topo.peer_port[slot_in] as usize;
                    let to = topo.base[v] as usize + o;
                    edges.push((from as u32, to as u32));
                    out_deg[from] += 1;
                    indeg[to] += 1;
                }
            }
        }
    }
    let mut start = vec![0u32; slots + 1];
    for i in 0..slots {
        start[i + 1] = start[i] + out_deg[i];
    }
    let mut fill = start.clone();
    let mut adj = vec![0u32; edges.len()];
    for &(f, t) in &edges {
        adj[fill[f as usize] as usize] = t;
        fill[f as usize] += 1;
    }
    let mut stack: Vec<u32> = (0..slots as u32)
        .filter(|&c| indeg[c as usize] == 0)
        .collect();
    let mut done = 0usize;
    while let Some(c) = stack.pop() {
        done += 1;
        for &t in &adj[start[c as usize] as usize..start[c as usize + 1] as usize] {
            indeg[t as usize] -= 1;
            if indeg[t as usize] == 0 {
                stack.push(t);
            }
        }
    }
    Ok(done == slots)
}

const UNKNOWN: u8 = 0;
const GRAY: u8 = 1;
const BLACK: u8 = 2;

#[derive(Debug)]
struct CdgNode {
    /// OpenSM's channel id: switch LID, port, peer LID, peer port.
    id: u64,
    /// Dependencies in insertion order (indices into `Layer::links`).
    links: Vec<u32>,
    status: u8,
    pre: u32,
    left: u32,
    right: u32,
}

#[derive(Debug)]
struct CdgLink {
    node: u32,
    num_pairs: u32,
    removed: u32,
    pairs: Vec<u32>,
}

/// One layer's channel dependency graph, with OpenSM's binary search tree
/// over channel ids (its pre-order decides where a search restarts).
#[derive(Debug)]
struct Layer {
    node_of: Vec<u32>,
    nodes: Vec<CdgNode>,
    links: Vec<CdgLink>,
    root: u32,
    /// Pre-order of the tree and each node's place in it (built before a search).
    preorder: Vec<u32>,
    place: Vec<u32>,
    /// Every node before this pre-order position is known not UNKNOWN.
    cursor: usize,
}

impl Layer {
    fn new(slots: usize) -> Self {
        Self {
            node_of: vec![NONE; slots],
            nodes: Vec::new(),
            links: Vec::new(),
            root: NONE,
            preorder: Vec::new(),
            place: Vec::new(),
            cursor: 0,
        }
    }

    fn node(&mut self, slot: usize, id: u64) -> u32 {
        let c = self.node_of[slot];
        if c != NONE {
            return c;
        }
        let c = self.nodes.len() as u32;
        self.nodes.push(CdgNode {
            id,
            links: Vec::new(),
            status: UNKNOWN,
            pre: NONE,
            left: NONE,
            right: NONE,
        });
        self.node_of[slot] = c;
        if self.root == NONE {
            self.root = c;
        } else {
            let mut cur = self.root;
            loop {
                let cid = self.nodes[cur as usize].id;
                let next = if id < cid {
                    &mut self.nodes[cur as usize].left
                } else if id > cid {
                    &mut self.nodes[cur as usize].right
                } else {
                    break;
                };
                if *next == NONE {
                    *next = c;
                    break;
                }
                cur = *next;
            }
        }
        c
    }

    fn find_link(&self, from: u32, to: u32) -> Option<u32> {
        self.nodes[from as usize]
            .links
            .iter()
            .copied()
            .find(|&l| self.links[l as usize].node == to)
    }

    /// OpenSM's `update_channel_dep_graph`.
    fn add_path(&mut self, path: &[(usize, u64)], srcdest: u32) {
        let mut last = NONE;
        for &(slot, id) in path {
            let c = self.node(slot, id);
            if last != NONE {
                match self.find_link(last, c) {
                    Some(l) => {
                        let link = &mut self.links[l as usize];
                        if link.num_pairs == 0 {
                            link.removed = 0;
                        }
                        link.pairs.push(srcdest);
                        link.num_pairs += 1;
                    }
                    None => {
                        let l = self.links.len() as u32;
                        self.links.push(CdgLink {
                            node: c,
                            num_pairs: 1,
                            removed: 0,
                            pairs: vec![srcdest],
                        });
                        self.nodes[last as usize].links.push(l);
                    }
                }
            }
            last = c;
        }
    }

    /// OpenSM's `remove_path_from_cdg`.
    fn remove_path(&mut self, path: &[(usize, u64)]) -> Result<(), RoutingError> {
        let mut last = NONE;
        for &(slot, _) in path {
            let c = self.node_of[slot];
            if c == NONE {
                return Err(engine_error("a moved path uses a channel its layer lacks"));
            }
            if last != NONE {
                if let Some(l) = self.find_link(last, c) {
                    let link = &mut self.links[l as usize];
                    link.removed = link.removed.wrapping_add(1);
                }
            }
            last = c;
        }
        Ok(())
    }

    fn build_preorder(&mut self) {
        self.preorder.clear();
        self.place = vec![0; self.nodes.len()];
        let mut stack = Vec::new();
        if self.root != NONE {
            stack.push(self.root);
        }
        while let Some(c) = stack.pop() {
            self.place[c as usize] = self.preorder.len() as u32;
            self.preorder.push(c);
            let node = &self.nodes[c as usize];
            if node.right != NONE {
                stack.push(node.right);
            }
            if node.left != NONE {
                stack.push(node.left);
            }
        }
        self.cursor = 0;
    }

    fn set_unknown(&mut self, c: u32) {
        self.nodes[c as usize].status = UNKNOWN;
        self.cursor = self.cursor.min(self.place[c as usize] as usize);
    }

    /// OpenSM's `get_next_cdg_node`: the first UNKNOWN node in tree pre-order.
    fn next_unknown(&mut self) -> Option<u32> {
        while self.cursor < self.preorder.len() {
            let c = self.preorder[self.cursor];
            if self.nodes[c as usize].status == UNKNOWN {
                return Some(c);
            }
            self.cursor += 1;
        }
        None
    }

    /// OpenSM's `search_cycle_in_channel_dep_graph`: a depth-first search from
    /// `start` that returns the GRAY node an edge closes a cycle at. Finished
    /// (BLACK) nodes drop their pair lists; GRAY nodes and `pre` links left
    /// by an earlier search stay, as in OpenSM.
    fn search_cycle(&mut self, start: u32) -> Option<u32> {
        let mut current = start;
        loop {
            self.nodes[current as usize].status = GRAY;
            let mut next = NONE;
            for &l in &self.nodes[current as usize].links {
                let t = self.links[l as usize].node;
                match self.nodes[t as usize].status {
                    UNKNOWN => {
                        next = t;
                        break;
                    }
                    GRAY => return Some(t),
                    _ => {}
                }
            }
            if next != NONE {
                self.nodes[next as usize].pre = current;
                current = next;
                continue;
            }
            self.nodes[current as usize].status = BLACK;
            for i in 0..self.nodes[current as usize].links.len() {
                let l = self.nodes[current as usize].links[i] as usize;
                let link = &mut self.links[l];
                link.pairs = Vec::new();
                link.num_pairs = 0;
                link.removed = 0;
            }
            let pre = self.nodes[current as usize].pre;
            if pre != NONE {
                self.nodes[current as usize].pre = NONE;
                current = pre;
            } else {
                current = self.next_unknown()?;
            }
        }
    }

    /// OpenSM's `get_weakest_link_in_cycle`: walks GRAY successors from
    /// `cycle` back to it, marking them UNKNOWN, and unlinks the edge with the
    /// fewest remaining pairs (the first such on the walk).
    fn weakest_link(&mut self, cycle: u32) -> Result<u32, RoutingError> {
        let fail = || {
            engine_error("OpenSM's cycle search would fail on this fabric (no cycle edge found)")
        };
        let gray_link = |layer: &Self, c: u32| {
            layer.nodes[c as usize]
                .links
                .iter()
                .copied()
                .find(|&l| layer.nodes[layer.links[l as usize].node as usize].status == GRAY)
        };
        let remaining = |layer: &Self, l: u32| {
            let link = &layer.links[l as usize];
            link.num_pairs.wrapping_sub(link.removed)
        };
        let mut current = cycle;
        let (mut weakest, mut owner) = (None, NONE);
        if let Some(l) = gray_link(self, current) {
            weakest = Some(l);
            owner = current;
            current = self.links[l as usize].node;
        }
        let mut steps = 0usize;
        loop {
            self.set_unknown(current);
            if let Some(l) = gray_link(self, current) {
                let w = weakest.ok_or_else(fail)?;
                if remaining(self, l) < remaining(self, w) {
                    weakest = Some(l);
                    owner = current;
                }
                current = self.links[l as usize].node;
            }
            if current == cycle {
                self.set_unknown(current);
                break;
            }
            steps += 1;
            if steps > self.nodes.len() + 1 {
                return Err(engine_error(
                    "OpenSM's cycle search would not terminate on this fabric",
                ));
            }
        }
        let w = weakest.ok_or_else(fail)?;
        self.nodes[owner as usize].links.retain(|&l| l != w);
        Ok(w)
    }
}

/// The exact replica, used when layer 0 has a cycle.
struct Exact<'a> {
    topo: &'a Topo,
    order: &'a [EndPort],
    lft: &'a LidMatrix,
    avail: usize,
    n: usize,
    index_of: Vec<u32>,
    /// End port owning each LID (index into `order`).
    port_of: Vec<u32>,
    vl: Vec<u8>,
    layers: Vec<Layer>,
    path: Vec<(usize, u64)>,
}

impl<'a> Exact<'a> {
    fn new(
        topo: &'a Topo,
        order: &'a [EndPort],
        lft: &'a LidMatrix,
        lids: &[u16],
        avail: usize,
    ) -> Self {
        let max = lids.last().copied().unwrap_or(0) as usize;
        let mut index_of = vec![NONE; max + 1];
        for (i, &l) in lids.iter().enumerate() {
            index_of[l as usize] = i as u32;
        }
        let mut port_of = vec![NONE; max + 1];
        for (i, e) in order.iter().enumerate() {
            for l in e.lids() {
                port_of[l as usize] = i as u32;
            }
        }
        let slots = topo.peer.len();
        Self {
            topo,
            order,
            lft,
            avail,
            n: lids.len(),
            index_of,
            port_of,
            vl: vec![0; lids.len() * lids.len()],
            layers: (0..avail).map(|_| Layer::new(slots)).collect(),
            path: Vec::new(),
        }
    }

    /// The channels of the path from CA port `src` to `dlid`, with OpenSM's ids.
    fn walk(&mut self, src: &EndPort, dlid: u16) -> Result<(), RoutingError> {
        self.path.clear();
        let topo = self.topo;
        let mut s = src.vertex;
        loop {
            let out = self.lft.get(dlid, s);
            if out == NO_PORT {
                return Err(no_path(topo, s, dlid));
            }
            let slot = topo.base[s as usize] as usize + out as usize;
            if out == 0 || slot >= topo.base[s as usize + 1] as usize || topo.peer[slot] == NONE {
                return Ok(());
            }
            let r = topo.peer[slot];
            let id = (topo.lid[s as usize] as u64) << 48
                | (out as u64) << 32
                | (topo.lid[r as usize] as u64) << 16
                | topo.peer_port[slot] as u64;
            self.path.push((slot, id));
            if self.path.len() > topo.len() {
                return Err(engine_error(format!("forwarding loop towards LID {dlid}")));
            }
            s = r;
        }
    }

    fn vl_at(&self, slid: u16, dlid: u16) -> &u8 {
        let (s, d) = (
            self.index_of[slid as usize] as usize,
            self.index_of[dlid as usize] as usize,
        );
        &self.vl[s * self.n + d]
    }

    fn run(mut self) -> Result<(usize, Vec<u64>, Vec<u8>), RoutingError> {
        let avail = self.avail;
        let mut ppv = vec![0u64; avail];
        for dest in self.order {
            for src in self.order {
                if std::ptr::eq(src, dest) {
                    continue;
                }
                for slid in src.lids() {
                    for dlid in dest.lids() {
                        if !src.is_switch {
                            self.walk(src, dlid)?;
                            let path = std::mem::take(&mut self.path);
                            self.layers[0].add_path(&path, (slid as u32) << 16 | dlid as u32);
                            self.path = path;
                        }
                        ppv[0] += 1;
                    }
                }
            }
        }
        let mut needed = 1usize;
        for test in 0..avail.saturating_sub(1) {
            if self.layers[test].root == NONE {
                continue;
            }
            self.layers[test].build_preorder();
            let mut start = self.layers[test].root;
            while let Some(cycle) = self.layers[test].search_cycle(start) {
                needed = test + 2;
                let w = self.layers[test].weakest_link(cycle)? as usize;
                let link = &mut self.layers[test].links[w];
                let num = link.num_pairs;
                let pairs = std::mem::take(&mut link.pairs);
                ppv[test] = ppv[test].wrapping_sub(num as u64);
                ppv[test + 1] = ppv[test + 1].wrapping_add(num as u64);
                for &sd in pairs.iter().take(num as usize) {
                    let (slid, dlid) = ((sd >> 16) as u16, sd as u16);
                    if *self.vl_at(slid, dlid) as usize != test {
                        ppv[test] = ppv[test].wrapping_add(1);
                        ppv[test + 1] = ppv[test + 1].wrapping_sub(1);
                        continue;
                    }
                    let src = self.order[self.port_of[slid as usize] as usize];
                    self.walk(&src, dlid)?;
                    let path = std::mem::take(&mut self.path);
                    self.layers[test].remove_path(&path)?;
                    self.layers[test + 1].add_path(&path, sd);
                    self.path = path;
                    let (s, d) = (
                        self.index_of[slid as usize] as usize,
                        self.index_of[dlid as usize] as usize,
                    );
                    self.vl[s * self.n + d] = (test + 1) as u8;
                }
                start = cycle;
            }
        }
        let last = &mut self.layers[avail - 1];
        if last.root != NONE {
            last.build_preorder();
            let root = last.root;
            if last.search_cycle(root).is_some() {
                needed = avail + 1;
            }
        }
        Ok((needed, ppv, self.vl))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balancing_follows_opensm() {
        // One layer on 8 VLs: all 8 SLs go to it.
        let mut ppv = vec![100, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            balance(1, 8, &mut ppv, None).unwrap(),
            vec![8, 0, 0, 0, 0, 0, 0, 0]
        );
        // Two layers 30/10 on 4 VLs: 3 + 1; layer 1 renumbered to SL 3.
        let n = 3;
        let mut table = vec![0, 1, 1, 0, 0, 1, 0, 0, 0];
        let mut ppv = vec![30, 3, 0, 0];
        assert_eq!(
            balance(2, 4, &mut ppv, Some((&mut table, n))).unwrap(),
            vec![3, 0, 0, 1]
        );
        assert_eq!(table, vec![0, 3, 3, 0, 0, 3, 0, 0, 0]);
        assert_eq!(ppv, vec![30, 0, 0, 3]);
        assert!(matches!(
            balance(3, 2, &mut [1, 1, 1], None),
            Err(RoutingError::NotEnoughLayers { .. })
        ));
    }
}
