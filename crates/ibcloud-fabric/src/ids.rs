//! Small newtypes shared by every ibcloud crate: identifiers the field uses
//! (GUIDs, LIDs, port numbers) and the dense ids the model uses inside.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A 64-bit globally unique identifier (node, port or system image GUID).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct Guid(pub u64);

impl fmt::Debug for Guid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for Guid {
    /// OpenSM style: `0x0002c90000000001`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:016x}", self.0)
    }
}

/// A 16-bit local identifier. 0 means "not assigned".
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct Lid(pub u16);

impl Lid {
    /// No LID assigned.
    pub const NONE: Lid = Lid(0);
    /// Lowest unicast LID.
    pub const UNICAST_MIN: Lid = Lid(0x0001);
    /// Highest unicast LID (0xBFFF = 49,151).
    pub const UNICAST_MAX: Lid = Lid(0xBFFF);
    /// LIDs per linear-forwarding-table block (one SMP each).
    pub const PER_LFT_BLOCK: usize = 64;

    /// True for 0x0001..=0xBFFF.
    pub fn is_unicast(self) -> bool {
        (Self::UNICAST_MIN.0..=Self::UNICAST_MAX.0).contains(&self.0)
    }

    /// True unless this is [`Lid::NONE`].
    pub fn is_set(self) -> bool {
        self.0 != 0
    }
}

impl fmt::Debug for Lid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for Lid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:04x}", self.0)
    }
}

/// A port number on a node. Port 0 is a switch's management port.
pub type PortNum = u8;

/// Dense index of a node inside one [`crate::Fabric`]; not stable across fabrics.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The id as a vector index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// One end of a link: a node and one of its ports.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct PortRef {
    /// The node.
    pub node: NodeId,
    /// The port number on that node.
    pub port: PortNum,
}

impl PortRef {
    /// Shorthand constructor.
    pub fn new(node: NodeId, port: PortNum) -> Self {
        Self { node, port }
    }
}
