//! `ibcloud agent` (`ibcloud-agent`): runs a capping policy against the
//! host's cgroups with the GIL released; a pending Python signal (Ctrl-C,
//! or SIGTERM once the CLI has installed its handler) stops the loop
//! within 100 ms, after which the original limits are restored.

use crate::exceptions::IbcloudError;
use ibcloud_agent::config::Config;
use ibcloud_agent::run::{restore_from, run, RunOptions};
use ibcloud_agent::AgentError as CoreError;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::time::{Duration, Instant};

pyo3::create_exception!(
    ibcloud.exceptions,
    AgentInputError,
    IbcloudError,
    "The agent cannot start: AGENT.toml is invalid (file:line: problem), a cgroup is missing or not writable, the host lacks the cgroup version asked for, an unknown policy or parameter."
);
pyo3::create_exception!(
    ibcloud.exceptions,
    AgentRuntimeError,
    IbcloudError,
    "The agent stopped on a failure while running (a sensor disappeared, a quota write was refused); the original CPU limits were restored unless the message says otherwise."
);

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("AgentInputError", m.py().get_type::<AgentInputError>())?;
    m.add("AgentRuntimeError", m.py().get_type::<AgentRuntimeError>())?;
    m.add_function(wrap_pyfunction!(agent_run, m)?)?;
    m.add_function(wrap_pyfunction!(agent_restore, m)?)?;
    m.add_function(wrap_pyfunction!(agent_guard, m)?)?;
    m.add_function(wrap_pyfunction!(agent_check_config, m)?)?;
    Ok(())
}

fn to_py(e: CoreError) -> PyErr {
    match e {
        CoreError::Input(m) => AgentInputError::new_err(m),
        CoreError::Runtime(m) => AgentRuntimeError::new_err(m),
    }
}

fn load(config: &str) -> PyResult<Config> {
    Config::load(&PathBuf::from(config)).map_err(AgentInputError::new_err)
}

/// Checks AGENT.toml; returns its VM names. Raises `AgentInputError`.
#[pyfunction]
pub(crate) fn agent_check_config(config: &str) -> PyResult<Vec<String>> {
    Ok(load(config)?.vms.into_iter().map(|v| v.name).collect())
}

/// Runs `policy` with the settings of `config` until a signal, `steps` or
/// the end of the replay feed; returns the summary as JSON. `guardian` is
/// the command of the guardian process (the agent appends the state file
/// and its PID). Raises `AgentInputError` / `AgentRuntimeError`.
#[pyfunction]
#[pyo3(signature = (config, policy, *, dry_run=false, steps=None, log=None, guardian=None))]
pub(crate) fn agent_run(
    py: Python<'_>,
    config: &str,
    policy: &str,
    dry_run: bool,
    steps: Option<u64>,
    log: Option<PathBuf>,
    guardian: Option<Vec<String>>,
) -> PyResult<String> {
    let cfg = load(config)?;
    let opts = RunOptions {
        dry_run,
        steps,
        log,
        guardian,
    };
    let mut signal: Option<String> = None;
    let result = py.detach(|| {
        let mut last_check = Instant::now() - Duration::from_secs(1);
        let mut should_stop = || {
            if last_check.elapsed() < Duration::from_millis(100) {
                return false;
            }
            last_check = Instant::now();
            Python::attach(|py| match py.check_signals() {
                Ok(()) => false,
                Err(e) => {
                    signal = Some(e.to_string().trim_end_matches([':', ' ']).to_string());
                    true
                }
            })
        };
        run(&cfg, policy, &opts, &mut should_stop)
    });
    let mut summary = serde_json::to_value(result.map_err(to_py)?)
        .map_err(|e| AgentRuntimeError::new_err(e.to_string()))?;
    if let Some(s) = signal {
        summary["signal"] = serde_json::Value::String(s);
    }
    Ok(summary.to_string())
}

/// Restores the limits saved in `config`'s state file; returns the
/// restore as JSON (`null` when there was no state file).
#[pyfunction]
pub(crate) fn agent_restore(config: &str) -> PyResult<String> {
    let cfg = load(config)?;
    let r = restore_from(&cfg).map_err(to_py)?;
    Ok(serde_json::to_string(&r).unwrap_or_else(|_| "null".into()))
}

/// The guardian: blocks (GIL released) until stdin closes, then restores
/// from `state_file` unless the agent `agent_pid` announced a clean exit.
/// Returns the restore as JSON (`null` = nothing to do).
#[pyfunction]
pub(crate) fn agent_guard(py: Python<'_>, state_file: PathBuf, agent_pid: u32) -> PyResult<String> {
    let r = py
        .detach(|| ibcloud_agent::state::guard(std::io::stdin().lock(), &state_file, agent_pid))
        .map_err(AgentRuntimeError::new_err)?;
    Ok(serde_json::to_string(&r).unwrap_or_else(|_| "null".into()))
}
