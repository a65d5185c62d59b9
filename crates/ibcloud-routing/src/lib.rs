//! # ibcloud-routing
//!
//! Routing engines that compute linear forwarding tables for a
//! [`Fabric`](ibcloud_fabric::Fabric), faithful to OpenSM 3.3.23's engines of
//! the same names, and verification of any table set (ours or OpenSM's):
//! reachability, forwarding loops, hop counts, routes per link and credit
//! loops on the channel dependency graph.
//!
//! Engines take a fabric whose LIDs are already assigned (the SM assigns LIDs
//! before routing) and never change it. They depend on `ibcloud-fabric` only.
//!
//! ```
//! use ibcloud_routing::registry;
//! for (name, what) in registry::engines() {
//!     println!("{name}: {what}");
//! }
//! ```
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

mod engine;
pub mod engines;
pub mod fat_tree;
pub mod graph;
pub mod registry;
mod sl;
pub mod sl_dump;
pub mod verify;

pub use engine::{EngineOptions, Routing, RoutingEngine, RoutingError};
pub use sl::{PathSls, Sl2Vl};
