//! # ibcloud-sm
//!
//! ibcloud's own subnet manager. It talks to the fabric with SMPs through
//! libibumad (so it runs on a real HCA or, like OpenSM, against ibsim through
//! the umad2sim `LD_PRELOAD` shim), discovers the subnet by directed route,
//! builds the same [`ibcloud_fabric::Fabric`] model the file readers build,
//! assigns LIDs as OpenSM does (guid2lid cache, LMC), routes with any
//! ibcloud engine and programs the switches: SwitchInfo, LFT blocks (only
//! those that differ from what the switch holds), port states
//! INIT → ARMED → ACTIVE, SM LID.
//!
//! Layers, bottom up: [`wire`] (SMP and attribute layouts, smoltcp style),
//! [`umad`] (the libibumad FFI, the crate's only unsafe code), [`transport`]
//! (send/receive raw SMPs; the libibumad port or an in-memory fabric for
//! tests), [`mads`] (timeouts, retries, a bounded window of outstanding
//! SMPs, counters and the SMP log), [`discover`], [`rediscover`], [`program`] and [`sm`]
//! (the sweep state machine), [`control`] (the local control socket).
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub mod control;
pub mod discover;
pub mod error;
pub mod mads;
pub mod memfabric;
pub mod migrate;
pub mod program;
pub mod rediscover;
pub mod sa;
pub mod sm;
pub mod transport;
#[allow(unsafe_code)]
pub mod umad;
pub mod wire;

pub use error::{SmError, WireError};
