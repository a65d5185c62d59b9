//! # ibcloud-sa
//!
//! Subnet administration as Paper I needs it:
//!
//! - [`wire`]: the 64-byte PathRecord attribute and the SA MAD around it, in
//!   the checked-view / validated-repr style (getters on a view never panic;
//!   a `Repr` is parsed from and emitted into a view), including the caching
//!   flag Paper I puts in reserved bit 353;
//! - [`rate`]: the PathRecord rate and MTU encodings;
//! - [`resolve`]: what the SA answers for a (SLID, DLID) pair on a routed
//!   fabric — SL from the routing engine, MTU and rate as the minimum over
//!   the forward and the reverse path, hop counts;
//! - [`cache`]: the end-node path-record cache of Paper I's Algorithm 2 and
//!   its memory bound.
//!
//! ```
//! use ibcloud_sa::wire::{PathRecord, PathRecordRepr};
//! let mut buf = [0u8; 64];
//! let repr = PathRecordRepr { dlid: 7, slid: 3, caching: true, ..PathRecordRepr::default() };
//! repr.emit(&mut PathRecord::new_checked(&mut buf[..]).unwrap());
//! assert_eq!(buf[44] & 0x40, 0x40); // bit 353
//! assert_eq!(PathRecordRepr::parse(&PathRecord::new_checked(&buf[..]).unwrap()).unwrap(), repr);
//! ```
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub mod cache;
pub mod endnode;
mod error;
pub mod rate;
pub mod resolve;
pub mod service;
pub mod wire;

pub use error::SaError;
