//! Incremental construction of a [`Fabric`] with consistency checks on every step.

use super::fabric::Fabric;
use super::link::{LinkRate, PortState};
use super::node::{port_slot, Node, NodeKind, Port};
use crate::error::TopologyError;
use crate::ids::{Guid, NodeId, PortNum, PortRef};
use std::collections::HashMap;

/// What a new node looks like; ports are added empty.
#[derive(Clone, Debug)]
pub struct NodeSpec {
    /// Node type.
    pub kind: NodeKind,
    /// Node GUID.
    pub guid: Guid,
    /// System image GUID; 0 means "same as the node GUID".
    pub system_image_guid: Guid,
    /// Node description.
    pub description: String,
    /// External port count (1..=254).
    pub num_ports: u32,
    /// IEEE vendor id.
    pub vendor_id: u32,
    /// Device id.
    pub device_id: u32,
    /// Port GUIDs of CA/router ports 1..=n; empty means node GUID + port number.
    pub port_guids: Vec<Guid>,
    /// Switch port 0 is enhanced.
    pub enhanced_port0: bool,
    /// OpenSM-style rank, when known.
    pub rank: Option<u8>,
}

impl NodeSpec {
    /// A node with default vendor data and derived port GUIDs.
    pub fn new(kind: NodeKind, guid: Guid, num_ports: u32, description: impl Into<String>) -> Self {
        Self {
            kind,
            guid,
            system_image_guid: Guid(0),
            description: description.into(),
            num_ports,
            vendor_id: 0x0002c9,
            device_id: if kind == NodeKind::Switch {
                0xc738
            } else {
                0x1003
            },
            port_guids: Vec::new(),
            enhanced_port0: false,
            rank: None,
        }
    }
}

/// Builds a fabric node by node and link by link.
///
/// ```
/// use ibcloud_fabric::{FabricBuilder, NodeSpec, NodeKind, Guid, LinkRate, PortRef};
/// let mut b = FabricBuilder::new();
/// let sw = b.add_node(NodeSpec::new(NodeKind::Switch, Guid(0x10), 8, "sw"))?;
/// let ca = b.add_node(NodeSpec::new(NodeKind::Ca, Guid(0x20), 1, "host"))?;
/// b.connect(PortRef::new(sw, 1), PortRef::new(ca, 1), LinkRate::default())?;
/// let fabric = b.build();
/// assert_eq!(fabric.num_links(), 1);
/// # Ok::<(), ibcloud_fabric::TopologyError>(())
/// ```
#[derive(Debug, Default)]
pub struct FabricBuilder {
    nodes: Vec<Node>,
    ports: Vec<Port>,
    guid_index: HashMap<Guid, NodeId>,
}

impl FabricBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty builder with room for `nodes` nodes and `ports` port slots.
    pub fn with_capacity(nodes: usize, ports: usize) -> Self {
        Self {
            nodes: Vec::with_capacity(nodes),
            ports: Vec::with_capacity(ports),
            guid_index: HashMap::with_capacity(nodes),
        }
    }

    /// Number of nodes added so far.
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// The node with this GUID, if added.
    pub fn node_by_guid(&self, guid: Guid) -> Option<NodeId> {
        self.guid_index.get(&guid).copied()
    }

    /// The node added as `id`.
    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.index())
    }

    /// Adds a node; fails on a duplicate GUID or a bad port count.
    pub fn add_node(&mut self, spec: NodeSpec) -> Result<NodeId, TopologyError> {
        if spec.num_ports == 0 || spec.num_ports > 254 {
            return Err(TopologyError::BadPortCount {
                node: spec.description,
                num_ports: spec.num_ports,
            });
        }
        if let Some(&other) = self.guid_index.get(&spec.guid) {
            return Err(TopologyError::DuplicateGuid {
                guid: spec.guid,
                first: self.nodes[other.index()].description.clone(),
                second: spec.description,
            });
        }
        let id = NodeId(self.nodes.len() as u32);
        let first_port = self.ports.len() as u32;
        let n = spec.num_ports as u8;
        for p in 0..=n {
            let guid = match (spec.kind, p) {
                (NodeKind::Switch, 0) => spec.guid,
                (NodeKind::Switch, _) | (_, 0) => Guid(0),
                _ => spec
                    .port_guids
                    .get(p as usize - 1)
                    .copied()
                    .unwrap_or(Guid(spec.guid.0.wrapping_add(p as u64))),
            };
            self.ports.push(Port {
                guid,
                ..Port::default()
            });
        }
        self.guid_index.insert(spec.guid, id);
        self.nodes.push(Node {
            kind: spec.kind,
            guid: spec.guid,
            system_image_guid: if spec.system_image_guid.0 == 0 {
                spec.guid
            } else {
                spec.system_image_guid
            },
            description: spec.description,
            vendor_id: spec.vendor_id,
            device_id: spec.device_id,
            num_ports: n,
            enhanced_port0: spec.enhanced_port0,
            rank: spec.rank,
            first_port,
        });
        Ok(id)
    }

    fn slot(&self, p: PortRef) -> Result<usize, TopologyError> {
        port_slot(&self.nodes, p, false)
    }

    /// The peer of an external port, if cabled.
    pub fn remote(&self, p: PortRef) -> Result<Option<PortRef>, TopologyError> {
        Ok(self.ports[self.slot(p)?].remote)
    }

    /// Cables `a` to `b`. Connecting the same pair again is a no-op when the
    /// rate agrees, and a [`TopologyError::LinkMismatch`] when it does not.
    pub fn connect(&mut self, a: PortRef, b: PortRef, rate: LinkRate) -> Result<(), TopologyError> {
        let (sa, sb) = (self.slot(a)?, self.slot(b)?);
        if sa == sb {
            return Err(TopologyError::SelfLink {
                node: self.name(a.node),
                port: a.port,
            });
        }
        if self.ports[sa].remote == Some(b) && self.ports[sb].remote == Some(a) {
            if self.ports[sa].rate != rate {
                return Err(TopologyError::LinkMismatch(format!(
                    "'{}' port {} <-> '{}' port {} is {} on one end and {} on the other",
                    self.name(a.node),
                    a.port,
                    self.name(b.node),
                    b.port,
                    self.ports[sa].rate,
                    rate
                )));
            }
            return Ok(());
        }
        for (slot, me, want) in [(sa, a, b), (sb, b, a)] {
            if let Some(cur) = self.ports[slot].remote {
                return Err(TopologyError::PortInUse {
                    node: self.name(me.node),
                    port: me.port,
                    existing: self.name(cur.node),
                    existing_port: cur.port,
                    requested: self.name(want.node),
                    requested_port: want.port,
                });
            }
        }
        for (slot, peer) in [(sa, b), (sb, a)] {
            let port = &mut self.ports[slot];
            port.remote = Some(peer);
            port.rate = rate;
            port.state = PortState::Active;
        }
        Ok(())
    }

    /// Mutable access to a port slot (LIDs, GUIDs, state) while building.
    pub fn port_mut(&mut self, p: PortRef) -> Result<&mut Port, TopologyError> {
        let slot = port_slot(&self.nodes, p, true)?;
        Ok(&mut self.ports[slot])
    }

    /// Mutable access to a node's metadata while building.
    pub fn node_mut(&mut self, id: NodeId) -> Result<&mut Node, TopologyError> {
        self.nodes
            .get_mut(id.index())
            .ok_or(TopologyError::UnknownNode(id))
    }

    fn name(&self, id: NodeId) -> String {
        self.nodes
            .get(id.index())
            .map(|n| n.description.clone())
            .unwrap_or_else(|| id.to_string())
    }

    /// Finishes the fabric. Switch port 0 counts as active.
    pub fn build(mut self) -> Fabric {
        for node in &self.nodes {
            if node.is_switch() {
                self.ports[node.first_port as usize].state = PortState::Active;
            }
        }
        Fabric::from_parts(self.nodes, self.ports, self.guid_index)
    }
}

/// Helper for parsers: port number from a wider integer, checked.
pub(crate) fn port_num(value: u64) -> Option<PortNum> {
    u8::try_from(value).ok()
}
