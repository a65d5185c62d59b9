//! Nodes and ports as the subnet manager sees them.

use super::link::{LinkRate, PortState};
use crate::error::TopologyError;
use crate::ids::{Guid, Lid, PortRef};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The three node types of an InfiniBand subnet.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize, PartialOrd, Ord)]
pub enum NodeKind {
    /// A switch: one LID on its management port 0, forwards by LFT.
    Switch,
    /// A channel adapter (HCA/TCA): one LID per port.
    Ca,
    /// A router: one LID per port, like a CA.
    Router,
}

impl NodeKind {
    /// Short lower-case name (`switch`, `ca`, `router`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Switch => "switch",
            Self::Ca => "ca",
            Self::Router => "router",
        }
    }
}

impl fmt::Display for NodeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for NodeKind {
    type Err = String;
    /// Accepts the spellings of ibnetdiscover (`Switch`, `Ca`, `Rt`), ibsim (`Hca`)
    /// and OpenSM (`SW`, `CA`).
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "switch" | "sw" => Ok(Self::Switch),
            "ca" | "hca" => Ok(Self::Ca),
            "rt" | "router" => Ok(Self::Router),
            _ => Err(format!(
                "unknown node type '{s}' (expected Switch, Ca/Hca or Rt)"
            )),
        }
    }
}

/// One port slot of a node. Every node has slots `0..=num_ports`; slot 0 is a
/// switch's management port and is unused on CAs and routers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct Port {
    /// Port GUID: switch port 0 carries the node GUID, CA/router ports their own;
    /// external switch ports have none (0).
    pub guid: Guid,
    /// Base LID (switch port 0 and CA/router ports only), or [`Lid::NONE`].
    pub lid: Lid,
    /// LID mask control: the port answers to `2^lmc` LIDs starting at `lid`.
    pub lmc: u8,
    /// Width and speed of the link on this port.
    pub rate: LinkRate,
    /// Logical state.
    pub state: PortState,
    /// The port at the other end of the cable, if any.
    pub remote: Option<PortRef>,
}

/// A switch, channel adapter or router.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Node type.
    pub kind: NodeKind,
    /// Node GUID (unique in the fabric).
    pub guid: Guid,
    /// System image GUID (shared by the nodes of one chassis).
    pub system_image_guid: Guid,
    /// Node description (NodeDescription attribute); not necessarily unique.
    pub description: String,
    /// IEEE vendor id.
    pub vendor_id: u32,
    /// Vendor device id.
    pub device_id: u32,
    /// Number of external ports.
    pub num_ports: u8,
    /// Switches: enhanced (true) or base (false) switch port 0.
    pub enhanced_port0: bool,
    /// OpenSM-style switch rank (roots 0, leaves highest), when known.
    pub rank: Option<u8>,
    /// Index of this node's port slot 0 in the fabric's flat port array.
    pub(crate) first_port: u32,
}

impl Node {
    /// True for switches.
    pub fn is_switch(&self) -> bool {
        self.kind == NodeKind::Switch
    }

    /// Port numbers that can carry a link: 1..=num_ports.
    pub fn external_ports(&self) -> std::ops::RangeInclusive<u8> {
        1..=self.num_ports
    }

    /// The ports that own a LID: port 0 on a switch, ports 1.. elsewhere.
    pub fn addressable_ports(&self) -> std::ops::RangeInclusive<u8> {
        if self.is_switch() {
            0..=0
        } else {
            1..=self.num_ports
        }
    }

    /// ibnetdiscover-style identifier: `S-0002c90000000001`, `H-…`, `R-…`.
    pub fn discover_id(&self) -> String {
        let prefix = match self.kind {
            NodeKind::Switch => 'S',
            NodeKind::Ca => 'H',
            NodeKind::Router => 'R',
        };
        format!("{prefix}-{:016x}", self.guid.0)
    }
}

/// Index of port `p` in a flat port array laid out by `first_port`; port 0 is
/// accepted only with `allow_port0` (it cannot be cabled, but holds a switch's LID).
pub(crate) fn port_slot(
    nodes: &[Node],
    p: PortRef,
    allow_port0: bool,
) -> Result<usize, TopologyError> {
    let node = nodes
        .get(p.node.index())
        .ok_or(TopologyError::UnknownNode(p.node))?;
    if (p.port == 0 && !allow_port0) || p.port > node.num_ports {
        return Err(TopologyError::PortOutOfRange {
            node: node.description.clone(),
            port: p.port,
            num_ports: node.num_ports,
        });
    }
    Ok(node.first_port as usize + p.port as usize)
}
