//! `ibcloud_control::sphinx`: the two-stage LP controller and the I/O model
//! sweep. Flows, groups, parameters and results cross as JSON text.

use crate::exceptions::SimulationError;
use crate::lft::PyForwardingTables;
use crate::netsim::parse_config;
use ibcloud_control::sphinx::{
    fit_eq8, io_sweep, policy_ratio, LpGroup, Sphinx, SphinxFlow, SphinxParams,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Adds the functions and class of this file to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySphinx>()?;
    m.add_function(wrap_pyfunction!(sphinx_policy_ratio, m)?)?;
    m.add_function(wrap_pyfunction!(sphinx_io_sweep, m)?)?;
    Ok(())
}

fn bad(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The controller. `flows` (`[{"name", "base_us"}]`), `groups`
/// (`[{"a", "b", "target"}]`) and `params` (kebab-case keys of
/// SphinxParams) are JSON.
#[pyclass(name = "Sphinx")]
pub(crate) struct PySphinx {
    inner: Sphinx,
}

#[pymethods]
impl PySphinx {
    #[new]
    fn new(flows: &str, groups: &str, params: &str) -> PyResult<Self> {
        let flows: Vec<SphinxFlow> =
            serde_json::from_str(flows).map_err(|e| bad(format!("flows: {e}")))?;
        let groups: Vec<LpGroup> =
            serde_json::from_str(groups).map_err(|e| bad(format!("groups: {e}")))?;
        let params: SphinxParams =
            serde_json::from_str(params).map_err(|e| bad(format!("parameters: {e}")))?;
        Ok(Self {
            inner: Sphinx::new(flows, groups, params).map_err(bad)?,
        })
    }

    /// One control period: latencies (µs) in flow order; returns the
    /// changed delays as (flow index, delay).
    fn step(&mut self, now_ps: u64, latency_us: Vec<f64>) -> PyResult<Vec<(usize, u16)>> {
        let acts = self.inner.step(now_ps, &latency_us).map_err(bad)?;
        Ok(acts.into_iter().map(|a| (a.flow, a.delay)).collect())
    }

    /// Changes a group's target ratio.
    fn set_target(&mut self, group: usize, target: f64) -> PyResult<()> {
        self.inner.set_target(group, target).map_err(bad)
    }

    /// Current delay of each flow.
    fn delays(&self) -> Vec<u16> {
        self.inner.delays().to_vec()
    }

    /// Every step's records as JSON.
    fn records_json(&self) -> PyResult<String> {
        serde_json::to_string(self.inner.records()).map_err(bad)
    }
}

/// A named LP policy or a ratio (`fair`, `1:4`, `0.25`).
#[pyfunction]
fn sphinx_policy_ratio(text: &str) -> PyResult<f64> {
    policy_ratio(text).map_err(bad)
}

/// The I/O model sweep: JSON `{"points": [...], "fits": {size: [slope,
/// intercept, r2] or null}}`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn sphinx_io_sweep(
    py: Python<'_>,
    tables: &PyForwardingTables,
    config: &str,
    src: &str,
    dst: &str,
    sizes: Vec<u32>,
    delays: Vec<u16>,
    messages: u32,
) -> PyResult<String> {
    let cfg = parse_config(config)?;
    let (f, t) = (&tables.fabric, &tables.inner);
    crate::error::detached_map(
        py,
        || -> Result<String, String> {
            let pts = io_sweep(f, t, &cfg, src, dst, &sizes, &delays, messages)?;
            let fits: serde_json::Map<String, serde_json::Value> = sizes
                .iter()
                .map(|&s| {
                    let v = fit_eq8(&pts, s).map_or(serde_json::Value::Null, |(a, b, r2)| {
                        serde_json::json!([a, b, r2])
                    });
                    (s.to_string(), v)
                })
                .collect();
            serde_json::to_string(&serde_json::json!({ "points": pts, "fits": fits }))
                .map_err(|e| e.to_string())
        },
        SimulationError::new_err,
    )
}
