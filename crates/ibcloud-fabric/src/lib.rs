//! # ibcloud-fabric
//!
//! The shared vocabulary of ibcloud: one model of an InfiniBand subnet
//! (switches, channel adapters and routers; their ports, GUIDs, LIDs, link
//! widths and speeds; the links between them), the generators for the
//! fat-trees of the reference documents, LID assignment, forwarding-table
//! types, and readers and writers for the file formats of the field
//! (ibnetdiscover, ibsim net files, OpenSM dumps, and ibcloud's own compact
//! native format).
//!
//! This crate computes no routes and runs no simulation; those live in the
//! crates that depend on it. It never panics on file input: every reader
//! returns a [`ParseError`] naming file, line and problem.
//!
//! ```
//! use ibcloud_fabric::{generate, summary::summarize};
//! let fabric = generate::preset("ft648")?.build()?;
//! let s = summarize(&fabric);
//! assert_eq!((s.cas, s.switches, s.lft_blocks_per_switch), (648, 54, 11));
//! # Ok::<(), ibcloud_fabric::FabricError>(())
//! ```
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub mod error;
pub mod formats;
pub mod generate;
mod ids;
pub mod lft;
pub mod lids;
mod model;
pub mod partitions;
pub mod summary;

pub use error::{FabricError, LidError, Location, ParseError, Result, TopologyError};
pub use ids::{Guid, Lid, NodeId, PortNum, PortRef};
pub use model::{
    Fabric, FabricBuilder, Link, LinkRate, LinkSpeed, LinkWidth, Node, NodeKind, NodeSpec, Port,
    PortState,
};
