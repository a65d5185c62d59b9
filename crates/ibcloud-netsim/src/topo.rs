//! The fabric flattened for the engine: one record per port slot (the
//! fabric's own slot numbering), the endpoints (CA ports with a LID and a
//! cable), LID → endpoint, and the forwarding tables copied into dense rows.

use crate::error::NetsimError;
use ibcloud_fabric::lft::{ForwardingTables, NO_PORT};
use ibcloud_fabric::{Fabric, NodeId, NodeKind, PortRef};

/// No slot / no endpoint.
pub(crate) const NONE: u32 = u32::MAX;

/// One port slot.
#[derive(Clone, Debug)]
pub(crate) struct Slot {
    pub(crate) node: u32,
    pub(crate) port: u8,
    pub(crate) remote: u32,
    pub(crate) is_switch: bool,
    /// Data rate in kb/s (after line encoding).
    pub(crate) kbps: u64,
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
    pub(crate) lft: Vec<Vec<u8>>,
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
                slots.push(Slot {
                    node: id.0,
                    port: p as u8,
                    remote: NONE,
                    is_switch: node.is_switch(),
                    kbps: (port.rate.data_gbps() * 1e6).round() as u64,
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
        let lft = (0..n)
            .map(|i| tables.table(NodeId(i as u32)).to_vec())
            .collect();
        Ok(Self {
            slots,
            first_slot,
            num_ports,
            is_switch,
            lft,
            ep_slot,
            ep_lid,
            lid_ep,
            labels,
            node_names,
        })
    }

    /// Output slot of `switch` for `lid`, or NONE.
    #[inline]
    pub(crate) fn route(&self, switch: u32, lid: u16) -> u32 {
        let p = self.lft[switch as usize]
            .get(lid as usize)
            .copied()
            .unwrap_or(NO_PORT);
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
