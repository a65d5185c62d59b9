//! The subnet model: nodes, ports, links and their physical properties.

mod builder;
mod fabric;
mod link;
mod node;

pub(crate) use builder::port_num;
pub use builder::{FabricBuilder, NodeSpec};
pub use fabric::{Fabric, Link};
pub use link::{LinkRate, LinkSpeed, LinkWidth, PortState};
pub use node::{Node, NodeKind, Port};
