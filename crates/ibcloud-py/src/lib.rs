//! # ibcloud-py
//!
//! The `ibcloud._native` extension module: thin PyO3 wrappers over the core
//! crates, one file per core area. Methods convert arguments, call the core
//! with the GIL released for long work, and map errors to the exceptions of
//! [`exceptions`] in one place ([`error`]). No algorithm lives here, and no
//! panic unwinds into Python.
//!
//! Internal: use the `ibcloud` Python package, which adds docs, defaults and
//! conversions on top.
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

mod agent;
mod analysis;
mod cloud;
mod dftree;
mod drx;
mod error;
mod exceptions;
mod fabric;
mod formats;
mod generate;
mod host;
mod lft;
mod lids;
mod netsim;
mod partitions;
mod qos;
mod reconfig;
mod routing;
mod sa;
mod sm;
mod sphinx;
mod summary;
mod vswitch;

use pyo3::prelude::*;

/// Native core of ibcloud; see the `ibcloud` package.
#[pymodule]
#[pyo3(name = "_native")]
fn ibcloud_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    exceptions::register(m)?;
    host::register(m)?;
    drx::register(m)?;
    m.add_class::<fabric::PyFabric>()?;
    m.add_class::<generate::PyFatTreeParams>()?;
    m.add_function(wrap_pyfunction!(generate::presets, m)?)?;
    m.add_function(wrap_pyfunction!(generate::inject_faults, m)?)?;
    m.add_function(wrap_pyfunction!(lids::assign_lids, m)?)?;
    m.add_function(wrap_pyfunction!(lids::guid2lid_of, m)?)?;
    m.add_function(wrap_pyfunction!(summary::summarize, m)?)?;
    m.add_class::<lft::PyForwardingTables>()?;
    m.add_function(wrap_pyfunction!(lft::read_lfts, m)?)?;
    m.add_function(wrap_pyfunction!(lft::read_guid2lid, m)?)?;
    m.add_function(wrap_pyfunction!(lft::write_guid2lid, m)?)?;
    m.add_class::<routing::PyPathSls>()?;
    m.add_function(wrap_pyfunction!(routing::engines, m)?)?;
    m.add_function(wrap_pyfunction!(routing::route, m)?)?;
    m.add_function(wrap_pyfunction!(routing::verify_tables, m)?)?;
    m.add_function(wrap_pyfunction!(routing::read_path_sls, m)?)?;
    m.add_function(wrap_pyfunction!(routing::write_fdbs, m)?)?;
    m.add_function(wrap_pyfunction!(routing::parse_ibroute, m)?)?;
    m.add_function(wrap_pyfunction!(routing::write_native_with_tables, m)?)?;
    m.add_function(wrap_pyfunction!(routing::read_native_with_tables, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::analyze, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::run_orders, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::pattern_levels, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::pattern_names, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::read_node_order, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::ftree_ca_order, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::write_ftree_ca_order, m)?)?;
    m.add_function(wrap_pyfunction!(formats::formats, m)?)?;
    m.add_function(wrap_pyfunction!(formats::format_from_path, m)?)?;
    m.add_function(wrap_pyfunction!(formats::format_name, m)?)?;
    m.add_function(wrap_pyfunction!(formats::read_fabric, m)?)?;
    m.add_function(wrap_pyfunction!(formats::write_fabric, m)?)?;
    m.add_function(wrap_pyfunction!(formats::parse_fabric, m)?)?;
    m.add_function(wrap_pyfunction!(formats::render_fabric, m)?)?;
    cloud::register(m)?;
    reconfig::register(m)?;
    netsim::register(m)?;
    dftree::register(m)?;
    partitions::register(m)?;
    vswitch::register(m)?;
    sa::register(m)?;
    sm::register(m)?;
    agent::register(m)?;
    sphinx::register(m)?;
    qos::register(m)?;
    Ok(())
}
