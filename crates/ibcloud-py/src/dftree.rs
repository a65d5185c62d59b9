//! dFtree on the simulator: the controller from JSON settings, S003's
//! testbed fabrics, and parallel runs with and without dFtree.

use crate::lft::PyForwardingTables;
use crate::netsim::{internal, parse_config, parse_traffic_text, result_to_py, sim_err};
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::Fabric;
use ibcloud_netsim::dftree::{self, DftreeEvent, DftreeLog, DftreeRun};
use ibcloud_netsim::testbed::s003_testbed;
use ibcloud_netsim::{parse_events, sweep, Dftree, DftreeConfig, NetsimError, Simulation};
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Adds the functions of this file to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dftree_default_config, m)?)?;
    m.add_function(wrap_pyfunction!(dftree_testbed, m)?)?;
    m.add_function(wrap_pyfunction!(dftree_simulate_many, m)?)?;
    Ok(())
}

fn parse(text: &str) -> PyResult<DftreeConfig> {
    let c: DftreeConfig = serde_json::from_str(text)
        .map_err(|e| sim_err(NetsimError::Config(format!("dftree settings: {e}"))))?;
    c.validate().map_err(|e| sim_err(NetsimError::Config(e)))?;
    Ok(c)
}

/// The controller for a run, with its log.
pub(crate) fn controller(
    f: &Fabric,
    t: &ForwardingTables,
    text: &str,
) -> PyResult<(Dftree, DftreeLog)> {
    let d = Dftree::new(f, t, parse(text)?).map_err(|e| sim_err(NetsimError::Config(e)))?;
    let log = d.log();
    Ok((d, log))
}

/// The log as a JSON list.
pub(crate) fn log_json(log: &DftreeLog) -> String {
    let v: Vec<DftreeEvent> = log.lock().map(|l| l.clone()).unwrap_or_default();
    serde_json::to_string(&v).unwrap_or_else(|_| "[]".into())
}

/// dFtree's default settings as JSON (kebab-case keys).
#[pyfunction]
fn dftree_default_config() -> String {
    serde_json::to_string(&DftreeConfig::default()).unwrap_or_default()
}

/// S003's testbed (Fig. 3a: 2 hosts per leaf; 3b: 4) with its tables.
#[pyfunction]
fn dftree_testbed(
    hosts_per_leaf: u8,
    host_rate: &str,
    uplink_rate: &str,
) -> PyResult<PyForwardingTables> {
    let rate = |s: &str| {
        s.parse()
            .map_err(|e| sim_err(NetsimError::Config(format!("link rate '{s}': {e}"))))
    };
    let (fabric, inner) =
        s003_testbed(hosts_per_leaf, rate(host_rate)?, rate(uplink_rate)?).map_err(sim_err)?;
    Ok(PyForwardingTables { inner, fabric })
}

/// Runs `(config, traffic, end, dftree or None, events or None)` in
/// parallel; each result is the simulate() dict plus `dftree_events`, or a
/// `SimulationError` instance in its place.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn dftree_simulate_many(
    py: Python<'_>,
    tables: &PyForwardingTables,
    runs: Vec<(String, String, u64, Option<String>, Option<String>)>,
) -> PyResult<Py<PyList>> {
    let f = &tables.fabric;
    let t = &tables.inner;
    let mut specs = Vec::with_capacity(runs.len());
    for (c, tr, end, d, ev) in &runs {
        let run = sweep::RunSpec {
            config: parse_config(c)?,
            traffic: parse_traffic_text(tr).map_err(sim_err)?,
            end: *end,
        };
        let events = match ev {
            Some(text) => {
                let sim =
                    Simulation::new(f, t, &run.config, &run.traffic, run.end).map_err(sim_err)?;
                parse_events(text, &|kind, name| sim.resolve_name(f, kind, name))
                    .map_err(sim_err)?
            }
            None => Vec::new(),
        };
        specs.push(DftreeRun {
            run,
            dftree: d.as_deref().map(parse).transpose()?,
            events,
        });
    }
    let results = py
        .detach(|| catch_unwind(AssertUnwindSafe(|| dftree::run_many(f, t, &specs))))
        .map_err(internal)?;
    let out = PyList::empty(py);
    for r in results {
        match r {
            Ok((res, log)) => {
                let d = result_to_py(py, res)?;
                d.bind(py).set_item(
                    "dftree_events",
                    serde_json::to_string(&log).unwrap_or_else(|_| "[]".into()),
                )?;
                out.append(d)?;
            }
            Err(e) => out.append(sim_err(e).into_value(py))?,
        }
    }
    Ok(out.unbind())
}
