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
