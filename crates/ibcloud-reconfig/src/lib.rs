//! # ibcloud-reconfig
//!
//! Fast reconfiguration of fat-trees after the papers III ("Fast Hybrid
//! Network Reconfiguration", 2016) and IV ("Compact Network Reconfiguration
//! in Fat-Trees", 2016); reference notes C (docs/reconfig.md).
//!
//! - [`event`]: fail or restore links and switches, shut down or boot
//!   nodes on the model; disconnections are reported;
//! - [`subtree`]: Paper III's hybrid reconfiguration — the smallest sub-tree
//!   holding a set of nodes is re-routed alone (ftree or NoFTree), with the
//!   change report and the up/down check on the union of old and new tables;
//! - [`order`]: node orders for NoFTree (files, received traffic);
//! - [`slimupdate`]: Paper IV's SlimUpdate (Algorithms 1–3): re-routing that
//!   keeps existing port choices under per-port caps;
//! - [`metabase`]: Paper IV's metabase-aided routing (mFatTree): leaf-to-leaf
//!   spanning trees (phase I) kept in a metabase, assigned to nodes (phase
//!   II), node-order reconfiguration (Algorithm 5);
//! - [`completion`]: a second update phase filling the entries the
//!   path-keeping methods leave blank after a fault (switches' own traffic);
//! - [`report`]: the change metrics all of them report;
//! - [`method`]: one call for event + method + verification + report;
//! - [`experiments`]: the papers' experiments, for the reproduction and benchmarks.
//!
//! ```
//! use ibcloud_fabric::generate::preset;
//! use ibcloud_reconfig::{event::{Event, FabricState}, slimupdate, report::ChangeReport};
//! use ibcloud_routing::{registry, EngineOptions};
//!
//! let fabric = preset("16-ary-2")?.build()?;
//! let old = registry::engine("ftree", &EngineOptions::default())?.route(&fabric)?.tables;
//! let mut state = FabricState::new(fabric.clone());
//! let link = fabric.links().find(|l| fabric.node(l.a.node).is_switch()
//!     && fabric.node(l.b.node).is_switch()).unwrap();
//! state.apply(&Event::FailLink(link.a))?;
//! let new = slimupdate::slim_update(&fabric, &old, &state.current(), &Default::default())?;
//! let changes = ChangeReport::between(&old, &new.tables);
//! assert!(changes.changed_entries > 0 && changes.changed_entries < 256);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub mod completion;
mod error;
pub mod event;
pub mod experiments;
pub mod metabase;
pub mod method;
pub mod order;
pub mod report;
pub mod slimupdate;
pub mod subtree;
mod switch_lids;
mod topo;

pub use error::ReconfigError;
