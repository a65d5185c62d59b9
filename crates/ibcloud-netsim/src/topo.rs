//! The fabric flattened for the engine: one record per port slot (the
//! fabric's own slot numbering), the endpoints (CA ports with a LID and a
//! cable), LID → endpoint, and the forwarding tables copied into dense rows.

use crate::error::NetsimError;
use ibcloud_fabric::lft::{ForwardingTables, NO_PORT};
use ibcloud_fabric::{Fabric, NodeId, NodeKind, PortRef};

/// No slot / no endpoint.
pub(crate) const NONE: u32 = u32::MAX;

// Route-check memo values (hop counts below 64 are real).
const HOPS_UNREACHABLE: u8 = 64;
const HOPS_ON_PATH: u8 = 254;
const HOPS_UNKNOWN: u8 = 255;

/// One port slot (32 bytes, aligned so that one slot is one cache-line
/// access: every hop reads the slots of both ends of a link).
#[derive(Clone, Debug)]
#[repr(align(32))]
pub(crate) struct Slot {
    pub(crate) node: u32,
    pub(crate) port: u8,
    pub(crate) remote: u32,
    pub(crate) is_switch: bool,
    /// Data rate in kb/s (after line encoding).
    pub(crate) kbps: u64,
    /// Picoseconds per byte when that is a whole number (8e9 / kbps), so
    /// the serialisation time needs no division; 0 otherwise.
    pub(crate) ps_per_byte: u64,
    /// Endpoint index for CA ports.
    pub(crate) ep: u32,
}

/// The flattened network.
#[derive(Clone, Debug)]
pub(crate) struct Net {
    pub(crate) slots: Vec<Slot>,
    pub(crate) first_slot: Vec<u32>,
    pub(crate) num_ports: Vec<u8>,
    pub(crate) is_switch: Vec<bool>,
    /// Forwarding tables of all switches in one flat array, `lft_stride`
    /// entries per switch (NO_PORT past a switch's own table), so a lookup
    /// is one access into it after the small `lft_row` (on a large fabric
    /// the per-switch vectors' headers were a cache miss of their own).
    lft: Vec<u8>,
    lft_stride: usize,
    /// Node → offset of its row in `lft` (switches; 0 for CAs, unused).
    lft_row: Vec<usize>,
    /// Endpoint → slot.
    pub(crate) ep_slot: Vec<u32>,
    /// Endpoint → base LID.
    pub(crate) ep_lid: Vec<u16>,
    /// LID → endpoint (NONE if not a CA LID).
    pub(crate) lid_ep: Vec<u32>,
    pub(crate) labels: Vec<String>,
    pub(crate) node_names: Vec<String>,
}

impl Net {
    pub(crate) fn new(fabric: &Fabric, tables: &ForwardingTables) -> Result<Self, NetsimError> {
        let lid_table = fabric
            .lid_table()
            .map_err(|e| NetsimError::Fabric(e.to_string()))?;
        let n = fabric.num_nodes();
        let mut slots = Vec::with_capacity(fabric.num_port_slots());
        let mut first_slot = Vec::with_capacity(n);
        let mut num_ports = Vec::with_capacity(n);
        let mut is_switch = Vec::with_capacity(n);
        let mut labels = Vec::with_capacity(fabric.num_port_slots());
        let mut node_names = Vec::with_capacity(n);
        let mut ep_slot = Vec::new();
        let mut ep_lid = Vec::new();
        for (id, node) in fabric.iter_nodes() {
            let first = fabric
                .port_index(PortRef::new(id, 0))
                .ok_or_else(|| NetsimError::Fabric(format!("node {id} has no port slots")))?;
            first_slot.push(first as u32);
            num_ports.push(node.num_ports);
            is_switch.push(node.is_switch());
            node_names.push(node_name(fabric, id));
            for (p, port) in fabric.ports(id).iter().enumerate() {
                debug_assert_eq!(slots.len(), first + p);
                let up = port.remote.is_some() && p > 0;
                let mut ep = NONE;
                if up && node.kind == NodeKind::Ca && port.lid.is_set() {
                    ep = ep_slot.len() as u32;
                    ep_slot.push((first + p) as u32);
                    ep_lid.push(port.lid.0);
                }
                let kbps = (port.rate.data_gbps() * 1e6).round() as u64;
                slots.push(Slot {
                    node: id.0,
                    port: p as u8,
                    remote: NONE,
                    is_switch: node.is_switch(),
                    kbps,
                    ps_per_byte: if kbps > 0 && 8_000_000_000 % kbps == 0 {
                        8_000_000_000 / kbps
                    } else {
                        0
                    },
                    ep,
                });
                labels.push(fabric.port_label(PortRef::new(id, p as u8)));
            }
        }
        for s in slots.iter_mut() {
            if s.port == 0 {
                continue;
            }
            let node = NodeId(s.node);
            if let Some(r) = fabric
                .port(PortRef::new(node, s.port))
                .and_then(|p| p.remote)
            {
                if let Some(ri) = fabric.port_index(r) {
                    s.remote = ri as u32;
                }
            }
        }
        let mut lid_ep = vec![NONE; lid_table.len().max(1)];
        for (ep, &slot) in ep_slot.iter().enumerate() {
            let s = &slots[slot as usize];
            let port = fabric
                .port(PortRef::new(NodeId(s.node), s.port))
                .expect("slot exists");
            let count = 1usize << port.lmc.min(7);
            for k in 0..count {
                let l = port.lid.0 as usize + k;
                if l < lid_ep.len() {
                    lid_ep[l] = ep as u32;
                }
            }
        }
        let rows: Vec<Vec<u8>> = (0..n)
            .map(|i| tables.table(NodeId(i as u32)).to_vec())
            .collect();
        let (lft, lft_stride, lft_row) = Self::flatten(&rows, &is_switch);
        Ok(Self {
            slots,
            first_slot,
            num_ports,
            is_switch,
            lft,
            lft_stride,
            lft_row,
            ep_slot,
            ep_lid,
            lid_ep,
            labels,
            node_names,
        })
    }

    /// The switches' rows in one array (see `Net::lft`).
    fn flatten(rows: &[Vec<u8>], is_switch: &[bool]) -> (Vec<u8>, usize, Vec<usize>) {
        let stride = rows
            .iter()
            .zip(is_switch)
            .filter(|(_, &sw)| sw)
            .map(|(r, _)| r.len())
            .max()
            .unwrap_or(0);
        let mut lft = Vec::new();
        let mut row = vec![0; rows.len()];
        for (i, r) in rows.iter().enumerate() {
            if is_switch[i] {
                row[i] = lft.len();
                lft.extend_from_slice(r);
                lft.resize(row[i] + stride, NO_PORT);
            }
        }
        (lft, stride, row)
    }

    /// Forwarding-table entry of `switch` for `lid` (NO_PORT if unset).
    #[inline]
    pub(crate) fn lft_entry(&self, switch: u32, lid: u16) -> u8 {
        if (lid as usize) < self.lft_stride {
            self.lft[self.lft_row[switch as usize] + lid as usize]
        } else {
            NO_PORT
        }
    }

    /// Where `switch`'s forwarding entry for `lid` is stored, for the
    /// engine's prefetch (None past the table).
    #[inline]
    pub(crate) fn lft_entry_ref(&self, switch: u32, lid: u16) -> Option<&u8> {
        let row = *self.lft_row.get(switch as usize)?;
        if (lid as usize) < self.lft_stride {
            self.lft.get(row + lid as usize)
        } else {
            None
        }
    }

    /// Sets `switch`'s entry for `lid` (a run-time LFT change), widening
    /// every row if `lid` lies past the current stride.
    pub(crate) fn set_lft(&mut self, switch: u32, lid: u16, port: u8) {
        let lid = lid as usize;
        if lid >= self.lft_stride {
            let rows: Vec<Vec<u8>> = (0..self.lft_row.len())
                .map(|i| {
                    if self.is_switch[i] {
                        let o = self.lft_row[i];
                        let mut r = self.lft[o..o + self.lft_stride].to_vec();
                        // Rows grow in 64-LID blocks, as an LFT is written.
                        r.resize((lid / 64 + 1) * 64, NO_PORT);
                        r
                    } else {
                        Vec::new()
                    }
                })
                .collect();
            (self.lft, self.lft_stride, self.lft_row) = Self::flatten(&rows, &self.is_switch);
        }
        let o = self.lft_row[switch as usize];
        self.lft[o + lid] = port;
    }

    /// Output slot of `switch` for `lid`, or NONE.
    #[inline]
    pub(crate) fn route(&self, switch: u32, lid: u16) -> u32 {
        let p = self.lft_entry(switch, lid);
        if p == NO_PORT || p == 0 || p > self.num_ports[switch as usize] {
            return NONE;
        }
        self.first_slot[switch as usize] + p as u32
    }

    /// Walks from endpoint `src` to `dst`; Ok(hops) or why not.
    pub(crate) fn walk(&self, src: u32, dst: u32) -> Result<u32, String> {
        let lid = self.ep_lid[dst as usize];
        let mut slot = self.ep_slot[src as usize];
        let target = self.ep_slot[dst as usize];
        for hops in 1..=64u32 {
            let r = self.slots[slot as usize].remote;
            if r == NONE {
                return Err(format!("{} has no link", self.labels[slot as usize]));
            }
            if r == target {
                return Ok(hops);
            }
            let rs = &self.slots[r as usize];
            if !rs.is_switch {
                return Err(format!(
                    "reached the wrong endpoint {}",
                    self.labels[r as usize]
                ));
            }
            let out = self.route(rs.node, lid);
            if out == NONE {
                return Err(format!(
                    "switch {} has no forwarding entry for LID {lid}",
                    self.node_names[rs.node as usize]
                ));
            }
            slot = out;
        }
        Err("the path is longer than 64 hops (a forwarding loop)".into())
    }

    /// Checks that `src` reaches every endpoint, for many sources at once:
    /// the first failing pair, or None. Sources that enter the fabric at the
    /// same switch share one answer, and per destination each switch's hop
    /// count to it is computed once (its forwarding entry for the
    /// destination LID is followed until a switch already known), so the
    /// cost is O(destinations × switches), not O(sources × destinations ×
    /// hops) as walking every pair would be.
    pub(crate) fn first_unroutable_to_all(&self, srcs: &[u32]) -> Option<(u32, u32)> {
        let neps = self.num_eps() as u32;
        // Sources whose cable ends at a switch, by that switch; others (CA
        // to CA, or no link) are walked pair by pair.
        // (switch node, first source, a second source or NONE): a source
        // does not send to itself, so the pair (first, first) is checked as
        // (second, first) instead.
        let mut by_switch: Vec<(u32, u32, u32)> = Vec::new();
        let mut group = vec![NONE; self.num_ports.len()];
        let mut direct = Vec::new();
        for &s in srcs {
            let r = self.slots[self.ep_slot[s as usize] as usize].remote;
            if r != NONE && self.slots[r as usize].is_switch {
                let node = self.slots[r as usize].node as usize;
                if group[node] == NONE {
                    group[node] = by_switch.len() as u32;
                    by_switch.push((node as u32, s, NONE));
                } else {
                    let g = &mut by_switch[group[node] as usize];
                    if g.2 == NONE && g.1 != s {
                        g.2 = s;
                    }
                }
            } else {
                direct.push(s);
            }
        }
        for &s in &direct {
            if let Some(d) = (0..neps).find(|&d| d != s && self.walk(s, d).is_err()) {
                return Some((s, d));
            }
        }
        if by_switch.is_empty() {
            return None;
        }
        let mut memo = vec![HOPS_UNKNOWN; self.num_ports.len()];
        let mut touched = Vec::new();
        let mut path = Vec::new();
        for d in 0..neps {
            for &(sw, first, second) in &by_switch {
                let s = if first == d { second } else { first };
                if s != NONE && self.hops_to(sw, d, &mut memo, &mut touched, &mut path) >= 64 {
                    return Some((s, d));
                }
            }
            for &n in &touched {
                memo[n as usize] = HOPS_UNKNOWN;
            }
            touched.clear();
        }
        None
    }

    /// Links from switch `sw` to endpoint `d` (64 or more: unreachable),
    /// memoised per destination in `memo` (nodes set are listed in
    /// `touched` so the caller can reset them).
    fn hops_to(
        &self,
        sw: u32,
        d: u32,
        memo: &mut [u8],
        touched: &mut Vec<u32>,
        path: &mut Vec<u32>,
    ) -> u8 {
        let lid = self.ep_lid[d as usize];
        let target = self.ep_slot[d as usize];
        path.clear();
        let mut node = sw;
        // Hops from the last node on `path` onwards.
        let tail: u8 = loop {
            match memo[node as usize] {
                HOPS_UNKNOWN => {}
                HOPS_ON_PATH => break HOPS_UNREACHABLE, // a forwarding loop
                h => break h,
            }
            memo[node as usize] = HOPS_ON_PATH;
            touched.push(node);
            path.push(node);
            let out = self.route(node, lid);
            if out == NONE {
                break HOPS_UNREACHABLE;
            }
            let r = self.slots[out as usize].remote;
            if r == target {
                break 0;
            }
            if r == NONE || !self.slots[r as usize].is_switch {
                break HOPS_UNREACHABLE;
            }
            node = self.slots[r as usize].node;
        };
        // Fill the path backwards: each switch is one link further.
        let mut h = tail;
        for &n in path.iter().rev() {
            h = h.saturating_add(1).min(HOPS_UNREACHABLE);
            memo[n as usize] = h;
        }
        memo[sw as usize]
    }

    pub(crate) fn num_eps(&self) -> usize {
        self.ep_slot.len()
    }

    /// Label of an endpoint: node name (and port if not 1).
    pub(crate) fn ep_name(&self, ep: u32) -> String {
        let s = &self.slots[self.ep_slot[ep as usize] as usize];
        let name = &self.node_names[s.node as usize];
        if s.port == 1 {
            name.clone()
        } else {
            format!("{name}/P{}", s.port)
        }
    }

    /// Resolves an endpoint reference: `lid:N` or a bare number (LID),
    /// `0x…` (port or node GUID), `#N` (endpoint index), or a node
    /// description (whole, or its first word).
    pub(crate) fn resolve(&self, fabric: &Fabric, text: &str) -> Option<u32> {
        let t = text.trim();
        if let Some(i) = t.strip_prefix('#') {
            return i
                .parse::<u32>()
                .ok()
                .filter(|&i| (i as usize) < self.num_eps());
        }
        let lid_text = t.strip_prefix("lid:").unwrap_or(t);
        if let Ok(l) = lid_text.parse::<u32>() {
            return self.lid_ep.get(l as usize).copied().filter(|&e| e != NONE);
        }
        if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            let g = u64::from_str_radix(h, 16).ok()?;
            let guid = ibcloud_fabric::Guid(g);
            if let Some(p) = fabric.port_by_guid(guid) {
                let idx = fabric.port_index(p)?;
                return Some(self.slots[idx].ep).filter(|&e| e != NONE);
            }
            let node = fabric.node_by_guid(guid)?;
            let first = self.first_slot[node.index()] as usize;
            return (1..=self.num_ports[node.index()] as usize)
                .map(|p| self.slots[first + p].ep)
                .find(|&e| e != NONE);
        }
        // Node names.
        (0..self.num_eps() as u32).find(|&e| {
            let s = &self.slots[self.ep_slot[e as usize] as usize];
            let name = &self.node_names[s.node as usize];
            name == t || name.split_whitespace().next() == Some(t) || self.ep_name(e) == t
        })
    }
}

fn node_name(fabric: &Fabric, id: NodeId) -> String {
    let n = fabric.node(id);
    let d = n.description.trim();
    if d.is_empty() {
        format!("{}", n.guid)
    } else {
        d.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The grouped check finds an unroutable pair exactly when walking
    /// every pair does, under random damage to the forwarding tables
    /// (missing entries, wrong ports, loops).
    #[test]
    fn grouped_route_check_agrees_with_walking_every_pair() {
        let mut f = ibcloud_fabric::generate::preset("4-ary-2-full")
            .unwrap()
            .build()
            .unwrap();
        ibcloud_fabric::lids::assign_lids(&mut f, &Default::default()).unwrap();
        let t = ibcloud_routing::registry::engine("ftree", &Default::default())
            .unwrap()
            .route(&f)
            .unwrap()
            .tables;
        let clean = Net::new(&f, &t).unwrap();
        let all: Vec<u32> = (0..clean.num_eps() as u32).collect();
        assert_eq!(clean.first_unroutable_to_all(&all), None);
        let switches: Vec<u32> = (0..clean.num_ports.len() as u32)
            .filter(|&n| clean.is_switch[n as usize])
            .collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let (mut broken, mut fine) = (0, 0);
        for _ in 0..60 {
            let mut net = clean.clone();
            for _ in 0..rng.random_range(1..3) {
                let sw = switches[rng.random_range(0..switches.len())];
                let lid = net.ep_lid[rng.random_range(0..net.num_eps())] as usize;
                let np = net.num_ports[sw as usize];
                let port = if rng.random::<bool>() {
                    NO_PORT
                } else {
                    rng.random_range(1..=np)
                };
                net.set_lft(sw, lid as u16, port);
            }
            let srcs: Vec<u32> = all
                .iter()
                .copied()
                .filter(|_| rng.random::<f64>() < 0.5)
                .collect();
            let brute = srcs
                .iter()
                .flat_map(|&s| all.iter().map(move |&d| (s, d)))
                .any(|(s, d)| s != d && net.walk(s, d).is_err());
            match net.first_unroutable_to_all(&srcs) {
                Some((s, d)) => {
                    assert!(brute);
                    assert!(srcs.contains(&s) && s != d);
                    assert!(net.walk(s, d).is_err(), "{s} -> {d} is routable");
                    broken += 1;
                }
                None => {
                    assert!(!brute, "a pair is unroutable but the check passed");
                    fine += 1;
                }
            }
        }
        assert!(broken > 5 && fine > 5, "{broken} broken, {fine} fine");
    }
}
