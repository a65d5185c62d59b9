//! The engines, one module each.
pub mod lash;
