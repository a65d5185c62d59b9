//! `summarize`: what `ibcloud topo info` reports, as plain Python data.

use crate::fabric::PyFabric;
use ibcloud_fabric::summary::summarize as core_summarize;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// A fabric at a glance: node and link counts, per-rank switch data (roots
/// first), LIDs, LFT blocks and full-LFT SMPs, link rates. Pairs are
/// `[smallest, largest]` over the switches of a rank.
#[pyfunction]
pub(crate) fn summarize<'py>(py: Python<'py>, fabric: &PyFabric) -> PyResult<Bound<'py, PyDict>> {
    let s = core_summarize(&fabric.inner);
    let levels = PyList::empty(py);
    for l in &s.levels {
        let d = PyDict::new(py);
        d.set_item("rank", l.rank)?;
        d.set_item("switches", l.switches)?;
        // u8 pairs would become `bytes` in Python; widen them.
        d.set_item("radix", [u32::from(l.radix.0), u32::from(l.radix.1)])?;
        d.set_item("switch_links", [l.switch_links.0, l.switch_links.1])?;
        d.set_item("ca_links", [l.ca_links.0, l.ca_links.1])?;
        levels.append(d)?;
    }
    let d = PyDict::new(py);
    d.set_item("cas", s.cas)?;
    d.set_item("switches", s.switches)?;
    d.set_item("routers", s.routers)?;
    d.set_item("links", s.links)?;
    d.set_item("levels", levels)?;
    d.set_item("lids_used", s.lids_used)?;
    d.set_item("max_lid", s.max_lid)?;
    d.set_item("lft_blocks_per_switch", s.lft_blocks_per_switch)?;
    d.set_item("full_lft_smps", s.full_lft_smps)?;
    d.set_item("link_rates", s.link_rates)?;
    Ok(d)
}
