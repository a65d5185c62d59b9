//! # ibcloud-netsim
//!
//! A packet-level, discrete-event model of an InfiniBand subnet, faithful
//! where head-of-line blocking, congestion trees, VL arbitration and
//! congestion control matter, and fast enough for 648-node fat-trees.
//!
//! ```text
//!   HCA (QPs → segmentation at the MTU → VL arbitration, host/DMA limit)
//!     │  link: width × speed data rate, propagation delay, credits per VL
//!     ▼
//!   switch input port: one FIFO per VL (buffer split across VLs)
//!     │  LFT (DLID → out port), SL2VL[in][out][SL] → out VL
//!     ▼
//!   output port: round robin over requesting inputs per VL,
//!                VL arbitration (high/low tables, high limit), credits,
//!                FECN marking (congestion control), counters
//!     │
//!     ▼  … → destination HCA: sink limit, completions, CNP/BECN back
//! ```
//!
//! Time is integer picoseconds; every packet is accounted in 64-byte credit
//! units; virtual cut-through by default (store-and-forward as an option).
//! A [`control::Controller`] sees the port counters at every sweep and can
//! change SLs, SL2VL tables, forwarding entries and links.
//!
//! ```
//! use ibcloud_fabric::{generate, lids, lft::ForwardingTables, Lid};
//! use ibcloud_netsim::{time::US, SimConfig, Simulation, TrafficSpec};
//! // One switch (the 2-level tree's leaf would do too): route by hand.
//! let mut fabric = generate::preset("4-ary-1")?.build()?;
//! lids::assign_lids(&mut fabric, &Default::default())?;
//! let mut tables = ForwardingTables::new(&fabric);
//! let sw = fabric.switches().next().unwrap();
//! for (p, r) in fabric.neighbors(sw) {
//!     tables.set(sw, fabric.port(r).unwrap().lid, p);
//! }
//! let spec = TrafficSpec::parse_compact("flow:src=#0,dst=#1,size=64k")?;
//! let r = Simulation::new(&fabric, &tables, &SimConfig::default(), &spec, 200 * US)?.run()?;
//! assert!(r.flows[0].gbps > 30.0); // a greedy QP fills the 4x QDR link
//! # let _ = Lid(1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Ordering and determinism
//!
//! Events at the same time run in the order they were scheduled (a sequence
//! number breaks ties), every random stream is a ChaCha8 generator seeded
//! from the run's seed and the flow index, and no floating-point value
//! decides an ordering, so one seed and one configuration give identical
//! results on any machine. [`sweep::run_many`] runs several configurations on
//! all cores and returns results in input order.
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub mod config;
pub mod control;
pub mod dftree;
mod engine;
pub mod error;
pub mod stats;
pub mod sweep;
pub mod testbed;
pub mod time;
mod topo;
pub mod traffic;

pub use config::{
    CaControl, CcConfig, CcDetection, CctEntry, SimConfig, VictimMask, VlArbEntry, VlArbitration,
};
pub use control::{
    parse_events, Action, Controller, NoController, SlotInfo, SweepView, TimedAction,
};
pub use dftree::{Dftree, DftreeConfig};
pub use engine::{Delivery, Simulation};
pub use error::NetsimError;
pub use stats::{FlowCounters, FlowSample, FlowSummary, PortCounters, PortSample, SimResult};
pub use traffic::{FlowSpec, PatternSpec, TraceRow, TrafficSpec};
