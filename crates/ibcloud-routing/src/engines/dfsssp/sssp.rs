//! The routing phase: one Dijkstra per destination LID over the switch graph,
//! with OpenSM's heap, tie-breaking and weight updates.

use super::{EndPort, LidMatrix, Topo, NONE};
use crate::engine::RoutingError;
use ibcloud_fabric::lft::NO_PORT;
use ibcloud_fabric::PortNum;

/// OpenSM's "infinity" for Dijkstra distances. Every key the heap ever
/// holds is at most this, so keys, distances and weights fit in 32 bits
/// (weights saturate: any weight above INF can never improve a distance).
const INF: u32 = 0x7FFF_FFFF;

/// OpenSM's heap: 4-ary, with the exact sift rules of complib's `cl_heap`
/// (ties decide which of several equal paths wins). Entries pack key and item
/// as `key << 32 | item`; only keys are compared.
#[derive(Debug)]
struct Heap {
    entry: Vec<u64>,
    /// Item → its index in the heap.
    pos: Vec<u32>,
    size: usize,
}

const D: usize = 4;

#[inline(always)]
fn key(e: u64) -> u32 {
    (e >> 32) as u32
}

#[inline(always)]
fn pack(key: u32, item: u32) -> u64 {
    (key as u64) << 32 | item as u64
}

impl Heap {
    fn new(capacity: usize) -> Self {
        Self {
            entry: vec![0; capacity],
            pos: vec![0; capacity],
            size: 0,
        }
    }

    #[inline(always)]
    fn place(&mut self, index: usize, e: u64) {
        self.entry[index] = e;
        self.pos[e as u32 as usize] = index as u32;
    }

    /// complib's `heap_up`: moves up while strictly smaller than the parent.
    fn up(&mut self, index: usize) {
        let t = self.entry[index];
        let tk = key(t);
        let mut child = index;
        while child > 0 {
            let parent = (child - 1) / D;
            let pe = self.entry[parent];
            if tk < key(pe) {
                self.place(child, pe);
                child = parent;
            } else {
                break;
            }
        }
        if child != index {
            self.place(child, t);
        }
    }

    /// complib's `heap_down`: the smallest child, the last one among equals,
    /// moves up while the element is strictly larger.
    fn down(&mut self, index: usize) {
        let t = self.entry[index];
        let tk = key(t);
        let size = self.size;
        let mut parent = index;
        loop {
            let first = parent * D + 1;
            if first >= size {
                break;
            }
            let (swap, sk) = if first + D <= size {
                // Four children: the last smallest, without branches.
                let k = [
                    key(self.entry[first]),
                    key(self.entry[first + 1]),
                    key(self.entry[first + 2]),
                    key(self.entry[first + 3]),
                ];
                let (a, ak) = if k[1] <= k[0] { (1, k[1]) } else { (0, k[0]) };
                let (b, bk) = if k[3] <= k[2] { (3, k[3]) } else { (2, k[2]) };
                if bk <= ak {
                    (b, bk)
                } else {
                    (a, ak)
                }
            } else {
                let kids = &self.entry[first..size];
                let mut swap = 0;
                let mut sk = key(kids[0]);
                for (c, &e) in kids.iter().enumerate().skip(1) {
                    let ck = key(e);
                    if ck <= sk {
                        swap = c;
                        sk = ck;
                    }
                }
                (swap, sk)
            };
            if tk > sk {
                let e = self.entry[first + swap];
                self.place(parent, e);
                parent = first + swap;
            } else {
                break;
            }
        }
        if parent != index {
            self.place(parent, t);
        }
    }

    fn modify_key(&mut self, k: u32, index: usize) {
        let old = self.entry[index];
        self.entry[index] = pack(k, old as u32);
        if k < key(old) {
            self.up(index);
        } else if k > key(old) {
            self.down(index);
        }
    }

    fn extract_root(&mut self) -> Option<u32> {
        match self.size {
            0 => None,
            1 => {
                self.size = 0;
                Some(self.entry[0] as u32)
            }
            _ => {
                self.size -= 1;
                let last = self.size;
                let (le, re) = (self.entry[last], self.entry[0]);
                self.place(last, re);
                self.place(0, le);
                self.down(0);
                Some(re as u32)
            }
        }
    }
}

/// The weighted switch graph: vertices 0..n are the switches in OpenSM's
/// order, vertex n the CA a Dijkstra run starts from (one link, rewritten per run).
#[derive(Debug)]
struct Graph {
    n: usize,
    /// Links of v: `start[v]..start[v + 1]`, in port order.
    start: Vec<u32>,
    /// Per link: target vertex and weight (saturating).
    adj: Vec<(u32, u32)>,
    from: Vec<u32>,
    to_port: Vec<PortNum>,
    /// End-port LIDs per switch (its own LID included).
    num_hca: Vec<u32>,
}

fn saturate(x: u64) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

impl Graph {
    fn new(topo: &Topo, num_hca: &[u64], total: u64) -> Self {
        let n = topo.len();
        let w0 = saturate(total.saturating_mul(total));
        let (mut start, mut adj, mut from, mut to_port) = (
            Vec::with_capacity(n + 2),
            Vec::new(),
            Vec::new(),
            Vec::new(),
        );
        for v in 0..n as u32 {
            start.push(from.len() as u32);
            for slot in topo.slots(v) {
                if topo.peer[slot] != NONE {
                    from.push(v);
                    adj.push((topo.peer[slot], w0));
                    to_port.push(topo.peer_port[slot]);
                }
            }
        }
        start.push(from.len() as u32);
        // The CA's link.
        from.push(n as u32);
        adj.push((0, 1));
        to_port.push(0);
        start.push(from.len() as u32);
        Self {
            n,
            start,
            adj,
            from,
            to_port,
            num_hca: num_hca.iter().map(|&h| saturate(h)).collect(),
        }
    }
}

/// Per-run state of Dijkstra.
#[derive(Debug)]
struct Run {
    /// Distance; 0 once a vertex is done (so no edge can improve it).
    dist: Vec<u32>,
    used: Vec<u32>,
    order: Vec<u32>,
    acc: Vec<u32>,
    heap: Heap,
}

/// A shorter distance for `t` through link `l`.
#[inline(never)]
fn improve(heap: &mut Heap, dist: &mut [u32], used: &mut [u32], t: usize, d: u32, l: u32) {
    used[t] = l;
    dist[t] = d;
    let at = heap.pos[t] as usize;
    heap.modify_key(d, at);
}

/// Where a run starts.
#[derive(Clone, Copy, Debug)]
enum Source {
    Switch(u32),
    /// A CA cabled to switch `to` on its port `to_port`.
    Ca {
        to: u32,
        to_port: PortNum,
    },
}

impl Run {
    fn new(n: usize) -> Self {
        Self {
            dist: vec![INF; n + 1],
            used: vec![NONE; n + 1],
            order: Vec::with_capacity(n + 1),
            acc: vec![0; n + 1],
            heap: Heap::new(n + 1),
        }
    }

    /// OpenSM's `dijkstra()`: all switches enter the heap at INF in order,
    /// then the CA (if any); the source drops to 0.
    fn dijkstra(&mut self, g: &mut Graph, source: Source) {
        let n = g.n;
        for v in 0..n {
            self.heap.place(v, pack(INF, v as u32));
        }
        self.dist[..n].fill(INF);
        self.used[..n].fill(NONE);
        self.heap.size = n;
        let src = match source {
            Source::Switch(v) => v as usize,
            Source::Ca { to, to_port } => {
                let l = g.start[n] as usize;
                g.adj[l] = (to, 1);
                g.to_port[l] = to_port;
                self.used[n] = NONE;
                self.heap.place(n, pack(INF, n as u32));
                self.heap.size = n + 1;
                n
            }
        };
        self.dist[src] = 0;
        let at = self.heap.pos[src] as usize;
        self.heap.modify_key(0, at);
        self.order.clear();
        let dist = &mut self.dist[..];
        let used = &mut self.used[..];
        while let Some(cur) = self.heap.extract_root() {
            let cur = cur as usize;
            self.order.push(cur as u32);
            let dc = dist[cur] as u64;
            dist[cur] = 0;
            let first = g.start[cur] as usize;
            let links = &g.adj[first..g.start[cur + 1] as usize];
            for (k, &(t, w)) in links.iter().enumerate() {
                let d = dc + w as u64;
                let t = t as usize;
                if d < dist[t] as u64 {
                    improve(&mut self.heap, dist, used, t, d as u32, (first + k) as u32);
                }
            }
        }
    }

    /// OpenSM's `update_weights()`: each reached switch adds its end-port LID
    /// count to every link of its path to the source. Summed per tree edge
    /// over the subtree below it, in reverse extraction order.
    fn update_weights(&mut self, g: &mut Graph) {
        self.acc.fill(0);
        for &v in self.order.iter().rev() {
            let v = v as usize;
            if v >= g.n || self.used[v] == NONE {
                continue;
            }
            let add = self.acc[v].saturating_add(g.num_hca[v]);
            let l = self.used[v] as usize;
            g.adj[l].1 = g.adj[l].1.saturating_add(add);
            let parent = g.from[l] as usize;
            self.acc[parent] = self.acc[parent].saturating_add(add);
        }
    }
}

/// Routes every LID of every end port in `order`; returns the forwarding
/// decision of every switch for every routed LID.
pub(super) fn route(
    topo: &Topo,
    order: &[EndPort],
    num_hca: Vec<u64>,
    total: u64,
) -> Result<LidMatrix, RoutingError> {
    let n = topo.len();
    let mut g = Graph::new(topo, &num_hca, total);
    let mut lids: Vec<u16> = Vec::new();
    let max_lid = order.iter().map(|e| *e.lids().end()).max().unwrap_or(0);
    let mut row_of = vec![NONE; max_lid as usize + 1];
    for e in order {
        for lid in e.lids() {
            row_of[lid as usize] = lids.len() as u32;
            lids.push(lid);
        }
    }
    let mut ports = vec![NO_PORT; lids.len() * n];
    // Each switch reaches its own LIDs through port 0.
    for e in order.iter().filter(|e| e.is_switch) {
        for lid in e.lids() {
            ports[row_of[lid as usize] as usize * n + e.vertex as usize] = 0;
        }
    }
    let mut run = Run::new(n);
    for e in order {
        let source = if e.is_switch {
            Source::Switch(e.vertex)
        } else {
            Source::Ca {
                to: e.vertex,
                to_port: e.sw_port,
            }
        };
        for lid in e.lids() {
            run.dijkstra(&mut g, source);
            let row = &mut ports[row_of[lid as usize] as usize * n..][..n];
            for (v, p) in row.iter_mut().enumerate() {
                let l = run.used[v];
                if l != NONE {
                    *p = g.to_port[l as usize];
                }
            }
            run.update_weights(&mut g);
        }
    }
    Ok(LidMatrix {
        lids,
        row_of,
        width: n,
        ports,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The heap against a plain reference: pops come out in key order.
    #[test]
    fn heap_pops_in_key_order() {
        let mut h = Heap::new(40);
        for i in 0..40u32 {
            h.place(i as usize, pack(INF, i));
        }
        h.size = 40;
        for i in 0..40u32 {
            let at = h.pos[i as usize] as usize;
            h.modify_key((i * 7919) % 13, at);
        }
        let mut last = 0;
        let mut seen = 0;
        while let Some(i) = h.extract_root() {
            let k = (i * 7919) % 13;
            assert!(k >= last);
            last = k;
            seen += 1;
        }
        assert_eq!(seen, 40);
    }
}
