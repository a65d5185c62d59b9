//! The engines, one module each.

pub mod dfsssp;
pub mod ftree;
pub mod lash;
