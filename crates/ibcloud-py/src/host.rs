//! `ibcloud-host` + `ibcloud-control`: virtualized hosts on the packet
//! simulator. The scenario crosses as JSON text (the TOML document as
//! Python parsed it); results come back as JSON.

use crate::exceptions::SimulationError;
use ibcloud_host::{RunError, Scenario, World};
use pyo3::prelude::*;

/// Adds the functions of this file to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(host_check, m)?)?;
    m.add_function(wrap_pyfunction!(host_run, m)?)?;
    m.add_function(wrap_pyfunction!(host_to_toml, m)?)?;
    Ok(())
}

fn build(sc: &Scenario) -> Result<World, RunError> {
    // The host of every vCPU context by the name the world gives it, so
    // layout-dependent controllers (DRX) are checked before the run.
    let hosts: std::collections::HashMap<String, String> = sc
        .vms
        .iter()
        .flat_map(|v| {
            (0..v.vcpus.max(1)).map(move |k| {
                (
                    ibcloud_host::scenario::vcpu_name(&v.name, k),
                    v.host.clone(),
                )
            })
        })
        .collect();
    World::new(sc, &|c, names| {
        let vm_hosts: Vec<String> = names
            .iter()
            .map(|n| hosts.get(n).cloned().unwrap_or_default())
            .collect();
        ibcloud_control::build_on(c, names, &vm_hosts)
    })
}

/// Checks a scenario (JSON) without running it. Returns None when it is
/// valid, else `(path, problem)` where path is like `workloads[1].depth`.
#[pyfunction]
fn host_check(scenario: &str) -> Option<(String, String)> {
    let sc = match Scenario::from_json(scenario) {
        Ok(s) => s,
        Err(e) => return Some((e.path, e.problem)),
    };
    match build(&sc) {
        Ok(_) => None,
        Err(RunError::Scenario(e)) => Some((e.path, e.problem)),
        Err(RunError::Controller(p)) => Some(("controllers".into(), p)),
        Err(e) => Some((String::new(), e.to_string())),
    }
}

/// Runs a scenario (JSON) and returns the results as JSON text.
/// `progress(now_ps, end_ps)` is called at every sample.
#[pyfunction]
#[pyo3(signature = (scenario, progress = None))]
fn host_run(py: Python<'_>, scenario: &str, progress: Option<Py<PyAny>>) -> PyResult<String> {
    let sc = Scenario::from_json(scenario).map_err(|e| SimulationError::new_err(e.to_string()))?;
    crate::error::detached_map(
        py,
        || -> Result<String, RunError> {
            let w = build(&sc)?;
            let mut cb = |now: u64, end: u64| {
                if let Some(p) = &progress {
                    Python::attach(|py| {
                        let _ = p.call1(py, (now, end));
                    });
                }
            };
            let r = w.run(&mut cb)?;
            Ok(serde_json::to_string(&r).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}")))
        },
        |e| SimulationError::new_err(e.to_string()),
    )
}

/// Writes a scenario (JSON) as a TOML document, for `ibcloud host layout`:
/// the `toml` crate's writer, so what `ibcloud host run` reads back is the
/// same document. Refuses what TOML cannot hold (null) by its path.
#[pyfunction]
fn host_to_toml(scenario: &str) -> PyResult<String> {
    let value: serde_json::Value = serde_json::from_str(scenario)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("scenario JSON: {e}")))?;
    if let Some(path) = null_path(&value, String::new()) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{path}: TOML has no null"
        )));
    }
    toml::to_string(&value).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
}

/// The path of the first null in `v`, like `workloads[1].sl`.
fn null_path(v: &serde_json::Value, at: String) -> Option<String> {
    match v {
        serde_json::Value::Null => Some(if at.is_empty() {
            "(document)".into()
        } else {
            at
        }),
        serde_json::Value::Array(xs) => xs
            .iter()
            .enumerate()
            .find_map(|(i, x)| null_path(x, format!("{at}[{i}]"))),
        serde_json::Value::Object(m) => m.iter().find_map(|(k, x)| {
            null_path(
                x,
                if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                },
            )
        }),
        _ => None,
    }
}
