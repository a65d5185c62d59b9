//! The engines, one module each.
