//! Paths through forwarding tables as sequences of directed links. A directed
//! link is named by the fabric's flat port index of the port that sends on it
//! ([`Fabric::port_index`]), so loads are plain arrays.
//!
//! Paths are computed once per table set: from every switch that endpoints
//! attach to ("ingress"), to every endpoint, stored contiguously. A flow's
//! path is its own first link followed by its ingress switch's path. When
//! that table would exceed the memory budget (very many ingress switches,
//! e.g. one vSwitch per hypervisor), paths are walked through the tables per
//! flow instead; both give the same links.

use crate::endpoints::Endpoints;
use crate::error::AnalysisError;
use ibcloud_fabric::lft::{ForwardingTables, NO_PORT};
use ibcloud_fabric::{Fabric, NodeKind};
use ibcloud_routing::verify::Failure;
use rayon::prelude::*;

const NONE: u32 = u32::MAX;

/// How paths are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathMode {
    /// Precompute when the table fits `budget_bytes`, else walk.
    Auto {
        /// Memory the path table may take.
        budget_bytes: usize,
    },
    /// Always precompute.
    Table,
    /// Always walk the tables per flow.
    Walk,
}

impl Default for PathMode {
    fn default() -> Self {
        Self::Auto {
            budget_bytes: 2 << 30,
        }
    }
}

/// The fabric flattened for walking: per port slot its peer slot, per node
/// its first slot, port count, kind and table.
#[derive(Debug)]
struct Net<'a> {
    peer: Vec<u32>,
    owner: Vec<u32>,
    first: Vec<u32>,
    num_ports: Vec<u8>,
    is_switch: Vec<bool>,
    lft: Vec<&'a [u8]>,
    switches: usize,
}

impl<'a> Net<'a> {
    fn new(fabric: &Fabric, tables: &'a ForwardingTables) -> Self {
        let slots = fabric.num_port_slots();
        let mut peer = vec![NONE; slots];
        let mut owner = vec![NONE; slots];
        let mut first = Vec::with_capacity(fabric.num_nodes());
        let mut num_ports = Vec::with_capacity(fabric.num_nodes());
        let mut is_switch = Vec::with_capacity(fabric.num_nodes());
        let mut lft = Vec::with_capacity(fabric.num_nodes());
        for (id, node) in fabric.iter_nodes() {
            let base = fabric
                .port_index(ibcloud_fabric::PortRef::new(id, 0))
                .unwrap_or(0);
            first.push(base as u32);
            num_ports.push(node.num_ports);
            is_switch.push(node.kind == NodeKind::Switch);
            lft.push(tables.table(id));
            for (p, port) in fabric.ports(id).iter().enumerate() {
                owner[base + p] = id.0;
                if let Some(r) = port.remote.filter(|_| p > 0) {
                    peer[base + p] = fabric.port_index(r).map_or(NONE, |i| i as u32);
                }
            }
        }
        let switches = is_switch.iter().filter(|&&s| s).count();
        Self {
            peer,
            owner,
            first,
            num_ports,
            is_switch,
            lft,
            switches,
        }
    }

    /// Appends the links from switch `node` to the port `dst_slot` owning
    /// `dst_lid`.
    #[inline]
    fn walk_from(
        &self,
        mut node: u32,
        dst_lid: u16,
        dst_slot: u32,
        out: &mut Vec<u32>,
    ) -> Result<(), Failure> {
        let mut hops = 0;
        loop {
            if !self.is_switch[node as usize] {
                return Err(Failure::WrongEndpoint);
            }
            hops += 1;
            if hops > self.switches {
                return Err(Failure::ForwardingLoop);
            }
            let p = self.lft[node as usize]
                .get(dst_lid as usize)
                .copied()
                .unwrap_or(NO_PORT);
            if p == NO_PORT {
                return Err(Failure::Unset);
            }
            if p == 0 {
                return Err(Failure::Port0);
            }
            if p > self.num_ports[node as usize] {
                return Err(Failure::NoSuchPort);
            }
            let slot = self.first[node as usize] + p as u32;
            let r = self.peer[slot as usize];
            if r == NONE {
                return Err(Failure::Uncabled);
            }
            out.push(slot);
            if r == dst_slot {
                return Ok(());
            }
            node = self.owner[r as usize];
        }
    }
}

/// Flow paths between the endpoints of an analysis.
#[derive(Debug)]
pub struct Paths<'a> {
    net: Net<'a>,
    /// Per endpoint: its port slot, LID and ingress index (NONE: no switch peer).
    slot: Vec<u32>,
    lid: Vec<u16>,
    ingress_of: Vec<u32>,
    /// Ingress switches (node ids).
    ingress: Vec<u32>,
    table: Option<PathTable>,
}

/// Paths from every ingress switch to every endpoint, contiguous.
#[derive(Debug)]
struct PathTable {
    /// `(ingress * endpoints + dst)` → start in `links`; `start[k+1]` ends it.
    start: Vec<u32>,
    links: Vec<u32>,
    /// Failure code per (ingress, dst): 0 = arrives.
    status: Vec<u8>,
}

const FAILURES: [Failure; 6] = [
    Failure::Unset,
    Failure::NoSuchPort,
    Failure::Uncabled,
    Failure::WrongEndpoint,
    Failure::Port0,
    Failure::ForwardingLoop,
];

fn code(f: Failure) -> u8 {
    1 + FAILURES.iter().position(|&k| k == f).unwrap_or(0) as u8
}

impl<'a> Paths<'a> {
    /// Prepares paths between `endpoints` through `tables`.
    pub fn new(
        fabric: &Fabric,
        tables: &'a ForwardingTables,
        endpoints: &Endpoints,
        mode: PathMode,
    ) -> Result<Self, AnalysisError> {
        if tables.num_nodes() != fabric.num_nodes() {
            return Err(AnalysisError::WrongFabric {
                tables: tables.num_nodes(),
                fabric: fabric.num_nodes(),
            });
        }
        fabric.lid_table()?;
        let net = Net::new(fabric, tables);
        let n = endpoints.len();
        let mut slot = Vec::with_capacity(n);
        let mut lid = Vec::with_capacity(n);
        let mut ingress_of = Vec::with_capacity(n);
        let mut ingress = Vec::new();
        let mut ingress_index = vec![NONE; fabric.num_nodes()];
        for ep in endpoints.as_slice() {
            let s = fabric.port_index(ep.port).expect("endpoint ports exist") as u32;
            slot.push(s);
            lid.push(ep.lid.0);
            let r = net.peer[s as usize];
            let at = if r == NONE {
                NONE
            } else {
                net.owner[r as usize]
            };
            if at != NONE && net.is_switch[at as usize] {
                if ingress_index[at as usize] == NONE {
                    ingress_index[at as usize] = ingress.len() as u32;
                    ingress.push(at);
                }
                ingress_of.push(ingress_index[at as usize]);
            } else {
                ingress_of.push(NONE);
            }
        }
        let mut paths = Self {
            net,
            slot,
            lid,
            ingress_of,
            ingress,
            table: None,
        };
        let build = match mode {
            PathMode::Table => true,
            PathMode::Walk => false,
            PathMode::Auto { budget_bytes } => paths.estimated_table_bytes() <= budget_bytes,
        };
        if build {
            paths.table = paths.build_table();
        }
        Ok(paths)
    }

    /// Whether paths were precomputed (else they are walked per flow).
    pub fn is_precomputed(&self) -> bool {
        self.table.is_some()
    }

    /// Number of endpoints.
    pub fn len(&self) -> usize {
        self.slot.len()
    }

    /// True when there are no endpoints.
    pub fn is_empty(&self) -> bool {
        self.slot.is_empty()
    }

    /// Size of the port-slot space (the length of a per-link array).
    pub fn num_links(&self) -> usize {
        self.net.peer.len()
    }

    /// LID of endpoint `e`.
    pub fn lid(&self, e: u32) -> u16 {
        self.lid[e as usize]
    }

    /// Bytes the table would take, from the path lengths of the first ingress.
    fn estimated_table_bytes(&self) -> usize {
        let n = self.len();
        let pairs = self.ingress.len() * n;
        let sample_links = match self.ingress.first() {
            Some(&sw) => {
                let mut buf = Vec::new();
                for d in 0..n {
                    let _ = self.net.walk_from(sw, self.lid[d], self.slot[d], &mut buf);
                }
                buf.len()
            }
            None => 0,
        };
        let per_pair_links = sample_links as f64 / n.max(1) as f64;
        (pairs as f64 * (4.0 + 1.0 + 4.0 * per_pair_links)) as usize
    }

    fn build_table(&self) -> Option<PathTable> {
        let n = self.len();
        let per_ingress: Vec<(Vec<u32>, Vec<u32>, Vec<u8>)> = self
            .ingress
            .par_iter()
            .map(|&sw| {
                let mut links = Vec::with_capacity(n * 4);
                let mut ends = Vec::with_capacity(n);
                let mut status = Vec::with_capacity(n);
                for d in 0..n {
                    let mark = links.len();
                    match self
                        .net
                        .walk_from(sw, self.lid[d], self.slot[d], &mut links)
                    {
                        Ok(()) => status.push(0),
                        Err(f) => {
                            links.truncate(mark);
                            status.push(code(f));
                        }
                    }
                    ends.push(links.len() as u32);
                }
                (links, ends, status)
            })
            .collect();
        let total: usize = per_ingress.iter().map(|(l, _, _)| l.len()).sum();
        if total >= u32::MAX as usize {
            return None;
        }
        let mut start = Vec::with_capacity(self.ingress.len() * n + 1);
        let mut links = Vec::with_capacity(total);
        let mut status = Vec::with_capacity(self.ingress.len() * n);
        start.push(0);
        for (l, ends, s) in per_ingress {
            let base = links.len() as u32;
            start.extend(ends.iter().map(|&e| base + e));
            links.extend_from_slice(&l);
            status.extend_from_slice(&s);
        }
        Some(PathTable {
            start,
            links,
            status,
        })
    }

    /// Appends the links of the path from endpoint `src` to endpoint `dst`
    /// (`out` is left as it was on failure).
    #[inline]
    pub fn append(&self, src: u32, dst: u32, out: &mut Vec<u32>) -> Result<(), Failure> {
        let (s, d) = (src as usize, dst as usize);
        let first = self.slot[s];
        let peer = self.net.peer[first as usize];
        if peer == NONE {
            return Err(Failure::Uncabled);
        }
        let mark = out.len();
        out.push(first);
        if peer == self.slot[d] {
            return Ok(());
        }
        let ing = self.ingress_of[s];
        if ing == NONE {
            out.truncate(mark);
            return Err(Failure::WrongEndpoint);
        }
        let result = match &self.table {
            Some(t) => {
                let k = ing as usize * self.len() + d;
                match t.status[k] {
                    0 => {
                        out.extend_from_slice(
                            &t.links[t.start[k] as usize..t.start[k + 1] as usize],
                        );
                        Ok(())
                    }
                    c => Err(FAILURES[c as usize - 1]),
                }
            }
            None => self
                .net
                .walk_from(self.ingress[ing as usize], self.lid[d], self.slot[d], out),
        };
        if result.is_err() {
            out.truncate(mark);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibcloud_fabric::{generate, Lid};
    use ibcloud_routing::{registry, EngineOptions};

    #[test]
    fn table_and_walk_agree_and_failures_are_named() {
        let f = generate::preset("4-ary-2-full").unwrap().build().unwrap();
        let mut tables = registry::engine("ftree", &EngineOptions::default())
            .unwrap()
            .route(&f)
            .unwrap()
            .tables;
        let eps = Endpoints::cas(&f);
        let table = Paths::new(&f, &tables, &eps, PathMode::Table).unwrap();
        let walk = Paths::new(&f, &tables, &eps, PathMode::Walk).unwrap();
        assert!(table.is_precomputed() && !walk.is_precomputed());
        let n = eps.len() as u32;
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for s in 0..n {
            for d in 0..n {
                if s != d {
                    a.clear();
                    b.clear();
                    assert!(table.append(s, d, &mut a).is_ok());
                    assert!(walk.append(s, d, &mut b).is_ok());
                    assert_eq!(a, b);
                    assert!(a.len() == 2 || a.len() == 4);
                }
            }
        }
        // Break one destination at every switch: unset entries everywhere.
        let dst = eps.as_slice()[5].lid;
        let switches: Vec<_> = f.switches().collect();
        for &s in &switches {
            tables.set(s, dst, NO_PORT);
        }
        let broken = Paths::new(&f, &tables, &eps, PathMode::Table).unwrap();
        let mut out = vec![7];
        assert_eq!(broken.append(0, 5, &mut out), Err(Failure::Unset));
        assert_eq!(out, vec![7]);
        // A loop: two switches pointing at each other.
        let sw = switches[0];
        let (p, r) = f
            .neighbors(sw)
            .find(|(_, r)| f.node(r.node).is_switch())
            .unwrap();
        tables.set(sw, dst, p);
        tables.set(r.node, dst, r.port);
        let looped = Paths::new(&f, &tables, &eps, PathMode::Walk).unwrap();
        let src = (0..n)
            .find(|&s| looped.ingress[looped.ingress_of[s as usize] as usize] == sw.0)
            .unwrap();
        assert_eq!(
            looped.append(src, 5, &mut out),
            Err(Failure::ForwardingLoop)
        );
        let _ = Lid(0);
    }
}
