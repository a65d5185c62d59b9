//! The engines, one module each.

pub mod dfsssp;
pub mod ftree;
pub mod lash;
pub mod minhop;
pub mod pftree;
mod ucast_mgr;
pub mod updn;
pub mod vswitch_ftree;
