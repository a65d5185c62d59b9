//! The engines, one module each.

pub mod minhop;
mod ucast_mgr;
pub mod updn;
