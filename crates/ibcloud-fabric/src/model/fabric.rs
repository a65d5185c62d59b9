//! The subnet: nodes, their ports and the links between them.

use super::builder::{FabricBuilder, NodeSpec};
use super::node::{port_slot, Node, NodeKind, Port};
use crate::error::{LidError, TopologyError};
use crate::ids::{Guid, Lid, NodeId, PortRef};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};

/// An InfiniBand subnet.
///
/// Nodes have dense ids ([`NodeId`]) in insertion order; ports live in one flat
/// array (slots `0..=num_ports` per node), so walking a fat-tree of 11,664
/// nodes touches a few contiguous megabytes. GUIDs are unique per fabric.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Fabric {
    nodes: Vec<Node>,
    ports: Vec<Port>,
    #[serde(skip)]
    guid_index: HashMap<Guid, NodeId>,
}

impl PartialEq for Fabric {
    fn eq(&self, other: &Self) -> bool {
        self.nodes == other.nodes && self.ports == other.ports
    }
}

/// A link between two ports, reported once with `a < b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// Lower end.
    pub a: PortRef,
    /// Higher end.
    pub b: PortRef,
}

impl Fabric {
    pub(crate) fn from_parts(
        nodes: Vec<Node>,
        ports: Vec<Port>,
        guid_index: HashMap<Guid, NodeId>,
    ) -> Self {
        Self {
            nodes,
            ports,
            guid_index,
        }
    }

    /// Rebuilds the GUID index after deserialisation and checks the invariants
    /// that a hand-edited or corrupted file could break.
    pub(crate) fn reindex(&mut self) -> Result<(), String> {
        self.guid_index = HashMap::with_capacity(self.nodes.len());
        let mut expected_first = 0usize;
        for (i, node) in self.nodes.iter().enumerate() {
            if node.first_port as usize != expected_first {
                return Err(format!("node {i} has a bad port offset"));
            }
            expected_first += node.num_ports as usize + 1;
            if self
                .guid_index
                .insert(node.guid, NodeId(i as u32))
                .is_some()
            {
                return Err(format!("duplicate node GUID {}", node.guid));
            }
        }
        if expected_first != self.ports.len() {
            return Err("port table does not match the nodes".into());
        }
        for (i, node) in self.nodes.iter().enumerate() {
            for p in node.external_ports() {
                let me = PortRef::new(NodeId(i as u32), p);
                if let Some(r) = self.ports[node.first_port as usize + p as usize].remote {
                    let back = self
                        .nodes
                        .get(r.node.index())
                        .filter(|n| r.port >= 1 && r.port <= n.num_ports)
                        .and_then(|n| self.ports[n.first_port as usize + r.port as usize].remote);
                    if back != Some(me) {
                        return Err(format!("link from node {i} port {p} is not symmetric"));
                    }
                }
            }
        }
        Ok(())
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// All nodes, indexable by [`NodeId::index`].
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Node ids with their nodes.
    pub fn iter_nodes(&self) -> impl Iterator<Item = (NodeId, &Node)> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (NodeId(i as u32), n))
    }

    /// One node.
    ///
    /// # Panics
    /// If `id` is not from this fabric (a programming error).
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    /// The node with this node GUID.
    pub fn node_by_guid(&self, guid: Guid) -> Option<NodeId> {
        self.guid_index.get(&guid).copied()
    }

    /// The port with this port GUID (switch port 0 or a CA/router port).
    /// A linear scan: build a map for many look-ups.
    pub fn port_by_guid(&self, guid: Guid) -> Option<PortRef> {
        if guid.0 == 0 {
            return None;
        }
        self.iter_nodes().find_map(|(id, n)| {
            n.addressable_ports()
                .find(|&p| self.ports(id)[p as usize].guid == guid)
                .map(|p| PortRef::new(id, p))
        })
    }

    /// Switch ids, in id order.
    pub fn switches(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.iter_nodes()
            .filter(|(_, n)| n.kind == NodeKind::Switch)
            .map(|(i, _)| i)
    }

    /// Channel adapter ids, in id order.
    pub fn cas(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.iter_nodes()
            .filter(|(_, n)| n.kind == NodeKind::Ca)
            .map(|(i, _)| i)
    }

    /// Count of nodes of one kind.
    pub fn count(&self, kind: NodeKind) -> usize {
        self.nodes.iter().filter(|n| n.kind == kind).count()
    }

    /// All port slots of a node, index = port number (slot 0 included).
    pub fn ports(&self, id: NodeId) -> &[Port] {
        let n = &self.nodes[id.index()];
        let first = n.first_port as usize;
        &self.ports[first..=first + n.num_ports as usize]
    }

    /// Index of a port in the fabric's flat port array: a dense, stable id for
    /// per-port (per directed link) data such as loads. `None` for unknown ports.
    pub fn port_index(&self, p: PortRef) -> Option<usize> {
        let n = self.nodes.get(p.node.index())?;
        (p.port <= n.num_ports).then(|| n.first_port as usize + p.port as usize)
    }

    /// Length of the flat port array (every node's slots `0..=num_ports`).
    pub fn num_port_slots(&self) -> usize {
        self.ports.len()
    }

    /// One port, if the node has it.
    pub fn port(&self, p: PortRef) -> Option<&Port> {
        let n = self.nodes.get(p.node.index())?;
        (p.port <= n.num_ports).then(|| &self.ports[n.first_port as usize + p.port as usize])
    }

    #[cfg(test)]
    pub(crate) fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id.index()]
    }

    #[cfg(test)]
    pub(crate) fn port_mut(&mut self, p: PortRef) -> Option<&mut Port> {
        let n = self.nodes.get(p.node.index())?;
        (p.port <= n.num_ports).then(|| &mut self.ports[n.first_port as usize + p.port as usize])
    }

    /// The other end of a cabled port.
    pub fn remote(&self, p: PortRef) -> Option<PortRef> {
        self.port(p).and_then(|port| port.remote)
    }

    /// Cabled external ports of a node with their peers.
    pub fn neighbors(&self, id: NodeId) -> impl Iterator<Item = (u8, PortRef)> + '_ {
        self.ports(id)
            .iter()
            .enumerate()
            .skip(1)
            .filter_map(|(p, port)| port.remote.map(|r| (p as u8, r)))
    }

    /// Every link once, ordered by its lower end.
    pub fn links(&self) -> impl Iterator<Item = Link> + '_ {
        self.iter_nodes().flat_map(move |(id, _)| {
            self.neighbors(id).filter_map(move |(p, r)| {
                let a = PortRef::new(id, p);
                (a < r).then_some(Link { a, b: r })
            })
        })
    }

    /// Number of links.
    pub fn num_links(&self) -> usize {
        self.ports.iter().filter(|p| p.remote.is_some()).count() / 2
    }

    /// The base LID of a node's addressable port (switch port 0, CA port 1 by default).
    pub fn node_lid(&self, id: NodeId) -> Lid {
        let n = self.node(id);
        let p = if n.is_switch() { 0 } else { 1 };
        self.ports(id)[p as usize].lid
    }

    /// Ports that own a LID (switch port 0, CA and router ports with a LID).
    pub fn lid_ports(&self) -> impl Iterator<Item = (PortRef, &Port)> + '_ {
        self.iter_nodes().flat_map(move |(id, n)| {
            n.addressable_ports().filter_map(move |p| {
                let port = &self.ports(id)[p as usize];
                port.lid.is_set().then_some((PortRef::new(id, p), port))
            })
        })
    }

    /// Last LID of a port's LMC range, saturating so that corrupt data (LMC
    /// above 7, ranges past 0xFFFF) is caught by [`Fabric::lid_table`] instead
    /// of overflowing here.
    fn last_lid(port: &Port) -> u16 {
        let span = 1u32 << port.lmc.min(16);
        u16::try_from(port.lid.0 as u32 + span - 1).unwrap_or(u16::MAX)
    }

    /// Highest LID in use (counting LMC ranges), or 0.
    pub fn max_lid(&self) -> u16 {
        self.lid_ports()
            .map(|(_, p)| Self::last_lid(p))
            .max()
            .unwrap_or(0)
    }

    /// Number of LIDs in use, counting each LMC range in full.
    pub fn lids_in_use(&self) -> usize {
        self.lid_ports().map(|(_, p)| 1usize << p.lmc.min(16)).sum()
    }

    /// Linear-forwarding-table blocks each switch needs: floor(maxLID/64)+1.
    pub fn lft_blocks(&self) -> usize {
        self.max_lid() as usize / Lid::PER_LFT_BLOCK + 1
    }

    /// LID → owning port, for LIDs 0..=max_lid; checks for collisions and
    /// out-of-range or misaligned LIDs.
    pub fn lid_table(&self) -> Result<Vec<Option<PortRef>>, LidError> {
        for (_, port) in self.lid_ports() {
            if port.lmc > 7 {
                return Err(LidError::BadLmc(port.lmc));
            }
        }
        let mut table = vec![None; self.max_lid() as usize + 1];
        for (pr, port) in self.lid_ports() {
            let span = 1u32 << port.lmc;
            let last = port.lid.0 as u32 + span - 1;
            if !port.lid.is_unicast() || last > Lid::UNICAST_MAX.0 as u32 {
                return Err(LidError::NotUnicast {
                    lid: port.lid,
                    lmc: port.lmc,
                });
            }
            if !(port.lid.0 as u32).is_multiple_of(span) {
                return Err(LidError::Misaligned {
                    lid: port.lid,
                    lmc: port.lmc,
                });
            }
            for l in port.lid.0 as u32..=last {
                if let Some(other) = table[l as usize] {
                    return Err(LidError::Collision {
                        lid: Lid(l as u16),
                        first: self.port_label(other),
                        second: self.port_label(pr),
                    });
                }
                table[l as usize] = Some(pr);
            }
        }
        Ok(table)
    }

    /// Human-readable port name: `'desc' port N`.
    pub fn port_label(&self, p: PortRef) -> String {
        format!("'{}' port {}", self.node(p.node).description, p.port)
    }

    /// Sets a port's LID and LMC (no collision check; see [`Fabric::lid_table`]).
    pub fn set_lid(&mut self, p: PortRef, lid: Lid, lmc: u8) -> Result<(), TopologyError> {
        let slot = port_slot(&self.nodes, p, true)?;
        self.ports[slot].lid = lid;
        self.ports[slot].lmc = lmc;
        Ok(())
    }

    /// Replaces a node's description (unknown ids are ignored).
    pub fn set_description(&mut self, id: NodeId, description: String) {
        if let Some(n) = self.nodes.get_mut(id.index()) {
            n.description = description;
        }
    }

    /// Removes every LID.
    pub fn clear_lids(&mut self) {
        for p in &mut self.ports {
            p.lid = Lid::NONE;
            p.lmc = 0;
        }
    }

    /// Sets OpenSM-style ranks (roots 0) on every switch from the topology,
    /// the way OpenSM's fat-tree ranking does: switches with CAs attached are
    /// leaves, every other switch is ranked by its hop distance from the nearest
    /// leaf, and the ranks are flipped so the farthest switches are roots.
    /// Switches unreachable from any leaf keep `None`.
    pub fn infer_ranks(&mut self) {
        let n = self.nodes.len();
        let mut dist = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        for sw in self.switches().collect::<Vec<_>>() {
            if self
                .neighbors(sw)
                .any(|(_, r)| !self.node(r.node).is_switch())
            {
                dist[sw.index()] = 0;
                queue.push_back(sw);
            }
        }
        while let Some(sw) = queue.pop_front() {
            let d = dist[sw.index()];
            let next: Vec<NodeId> = self
                .neighbors(sw)
                .map(|(_, r)| r.node)
                .filter(|r| self.node(*r).is_switch() && dist[r.index()] == u32::MAX)
                .collect();
            for r in next {
                dist[r.index()] = d + 1;
                queue.push_back(r);
            }
        }
        let max = self
            .switches()
            .map(|s| dist[s.index()])
            .filter(|&d| d != u32::MAX)
            .max()
            .unwrap_or(0);
        for (node, &d) in self.nodes.iter_mut().zip(&dist) {
            if node.is_switch() {
                node.rank = (d != u32::MAX).then(|| (max - d).min(u8::MAX as u32) as u8);
            }
        }
    }

    /// A copy without the given nodes and links. Ids are renumbered densely in
    /// the original order; LIDs, GUIDs and ranks are kept.
    pub fn without(&self, nodes: &[NodeId], links: &[Link]) -> Fabric {
        let mut drop_node = vec![false; self.nodes.len()];
        for id in nodes {
            drop_node[id.index()] = true;
        }
        let drop_port: std::collections::HashSet<PortRef> =
            links.iter().flat_map(|l| [l.a, l.b]).collect();
        let mut b = FabricBuilder::with_capacity(self.nodes.len(), self.ports.len());
        let mut new_id = vec![None; self.nodes.len()];
        for (id, n) in self.iter_nodes().filter(|(id, _)| !drop_node[id.index()]) {
            let mut spec = NodeSpec::new(n.kind, n.guid, n.num_ports as u32, n.description.clone());
            spec.system_image_guid = n.system_image_guid;
            spec.vendor_id = n.vendor_id;
            spec.device_id = n.device_id;
            spec.enhanced_port0 = n.enhanced_port0;
            spec.rank = n.rank;
            let nid = b
                .add_node(spec)
                .expect("GUIDs of a valid fabric are unique");
            new_id[id.index()] = Some(nid);
            for (p, port) in self.ports(id).iter().enumerate() {
                let slot = b
                    .port_mut(PortRef::new(nid, p as u8))
                    .expect("same port count");
                *slot = Port {
                    remote: None,
                    state: Default::default(),
                    ..port.clone()
                };
            }
        }
        for l in self.links() {
            if drop_port.contains(&l.a) || drop_port.contains(&l.b) {
                continue;
            }
            if let (Some(a), Some(bn)) = (new_id[l.a.node.index()], new_id[l.b.node.index()]) {
                let rate = self.port(l.a).map(|p| p.rate).unwrap_or_default();
                b.connect(PortRef::new(a, l.a.port), PortRef::new(bn, l.b.port), rate)
                    .expect("links of a valid fabric are consistent");
            }
        }
        b.build()
    }

    /// Compares two fabrics by what a discovery tool can see: the same node
    /// GUIDs with the same kinds and port counts, and the same links between the
    /// same port numbers. Returns the first difference found.
    pub fn topology_difference(&self, other: &Fabric) -> Option<String> {
        if self.num_nodes() != other.num_nodes() {
            return Some(format!(
                "{} nodes vs {}",
                self.num_nodes(),
                other.num_nodes()
            ));
        }
        for (id, n) in self.iter_nodes() {
            let Some(oid) = other.node_by_guid(n.guid) else {
                return Some(format!("node {} ('{}') missing", n.guid, n.description));
            };
            let o = other.node(oid);
            if o.kind != n.kind || o.num_ports != n.num_ports {
                return Some(format!("node {} differs in type or port count", n.guid));
            }
            for p in n.external_ports() {
                let mine = self
                    .remote(PortRef::new(id, p))
                    .map(|r| (self.node(r.node).guid, r.port));
                let theirs = other
                    .remote(PortRef::new(oid, p))
                    .map(|r| (other.node(r.node).guid, r.port));
                if mine != theirs {
                    return Some(format!("node {} port {p}: {mine:?} vs {theirs:?}", n.guid));
                }
            }
        }
        None
    }
}
