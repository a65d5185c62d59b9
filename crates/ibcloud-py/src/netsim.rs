//! `ibcloud-netsim`: the packet-level simulator. Configuration, traffic and
//! events cross as JSON text; results come back as a JSON summary plus
//! little-endian column buffers for the time series (numpy reads them
//! without copies). A Python controller and a progress callback are called
//! at sweeps with the GIL taken back only then.

use crate::exceptions::SimulationError;
use crate::lft::PyForwardingTables;
use ibcloud_netsim::{
    config::pcie_gbps, parse_events, sweep, time::parse_duration, traffic::parse_trace_csv, Action,
    CcConfig, Controller, NetsimError, SimConfig, SimResult, Simulation, SweepView, TrafficSpec,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Adds the functions of this file to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_many, m)?)?;
    m.add_function(wrap_pyfunction!(sim_parse_traffic, m)?)?;
    m.add_function(wrap_pyfunction!(sim_parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(sim_default_config, m)?)?;
    m.add_function(wrap_pyfunction!(sim_cc_preset, m)?)?;
    m.add_function(wrap_pyfunction!(sim_pcie_gbps, m)?)?;
    Ok(())
}

pub(crate) fn sim_err(e: NetsimError) -> PyErr {
    SimulationError::new_err(e.to_string())
}

pub(crate) use crate::error::internal_error as internal;

pub(crate) fn parse_config(text: &str) -> PyResult<SimConfig> {
    let c: SimConfig =
        serde_json::from_str(text).map_err(|e| sim_err(NetsimError::Config(e.to_string())))?;
    Ok(c)
}

pub(crate) fn parse_traffic_text(text: &str) -> Result<TrafficSpec, NetsimError> {
    let t = text.trim_start();
    if t.starts_with('{') {
        TrafficSpec::from_json(text)
    } else {
        TrafficSpec::parse_compact(text)
    }
}

/// Calls a Python function at every sweep; it gets a dict of counters and
/// returns a list of action dicts (or None).
struct PyController {
    func: Py<PyAny>,
    error: Option<PyErr>,
}

impl Controller for PyController {
    fn on_sweep(&mut self, view: &SweepView<'_>, actions: &mut Vec<Action>) {
        if self.error.is_some() {
            return;
        }
        let r = Python::attach(|py| -> PyResult<Vec<Action>> {
            let d = PyDict::new(py);
            d.set_item("time", view.time)?;
            d.set_item("interval", view.interval)?;
            let col = |f: &dyn Fn(&ibcloud_netsim::PortCounters) -> u64| {
                view.ports.iter().map(f).collect::<Vec<u64>>()
            };
            let prev = |f: &dyn Fn(&ibcloud_netsim::PortCounters) -> u64| {
                view.previous_ports.iter().map(f).collect::<Vec<u64>>()
            };
            d.set_item("xmit_wait", col(&|c| c.xmit_wait))?;
            d.set_item("xmit_data", col(&|c| c.xmit_data_words()))?;
            d.set_item("rcv_data", col(&|c| c.rcv_data_words()))?;
            d.set_item("xmit_pkts", col(&|c| c.xmit_pkts))?;
            d.set_item("prev_xmit_wait", prev(&|c| c.xmit_wait))?;
            d.set_item("prev_xmit_data", prev(&|c| c.xmit_data_words()))?;
            d.set_item("prev_rcv_data", prev(&|c| c.rcv_data_words()))?;
            d.set_item(
                "slot_node",
                view.slots.iter().map(|x| x.node).collect::<Vec<u32>>(),
            )?;
            d.set_item(
                "slot_port",
                view.slots
                    .iter()
                    .map(|x| x.port as u32)
                    .collect::<Vec<u32>>(),
            )?;
            d.set_item(
                "slot_remote",
                view.slots.iter().map(|x| x.remote).collect::<Vec<u32>>(),
            )?;
            d.set_item(
                "slot_endpoint",
                view.slots.iter().map(|x| x.endpoint).collect::<Vec<u32>>(),
            )?;
            d.set_item(
                "slot_is_switch",
                view.slots
                    .iter()
                    .map(|x| x.is_switch)
                    .collect::<Vec<bool>>(),
            )?;
            d.set_item(
                "slot_gbps",
                view.slots.iter().map(|x| x.gbps).collect::<Vec<f64>>(),
            )?;
            d.set_item(
                "endpoint_lids",
                view.endpoint_lids
                    .iter()
                    .map(|&l| l as u32)
                    .collect::<Vec<u32>>(),
            )?;
            d.set_item(
                "flow_delivered_bytes",
                view.flows
                    .iter()
                    .map(|f| f.delivered_bytes)
                    .collect::<Vec<_>>(),
            )?;
            d.set_item(
                "flow_sl",
                view.flows.iter().map(|f| f.sl as u32).collect::<Vec<u32>>(),
            )?;
            let out = self.func.call1(py, (d,))?;
            if out.is_none(py) {
                return Ok(Vec::new());
            }
            let json = py.import("json")?.call_method1("dumps", (out,))?;
            let text: String = json.extract()?;
            serde_json::from_str::<Vec<Action>>(&text).map_err(|e| {
                SimulationError::new_err(format!(
                    "the controller returned something that is not a list of actions: {e}"
                ))
            })
        });
        match r {
            Ok(a) => actions.extend(a),
            Err(e) => self.error = Some(e),
        }
    }

    fn stop(&mut self) -> Option<String> {
        self.error
            .as_ref()
            .map(|e| format!("the Python controller raised {e}"))
    }
}

fn columns<T: Copy>(rows: &[T], f: impl Fn(&T) -> [u8; 8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(rows.len() * 8);
    for r in rows {
        out.extend_from_slice(&f(r));
    }
    out
}

pub(crate) fn result_to_py(py: Python<'_>, r: SimResult) -> PyResult<Py<PyAny>> {
    let d = PyDict::new(py);
    let summary = serde_json::json!({
        "end_time": r.end_time,
        "events": r.events,
        "unit_hops": r.unit_hops,
        "packet_hops": r.packet_hops,
        "dropped": r.dropped,
        "flows": r.flows,
        "ports": r.ports,
        "port_labels": r.port_labels,
        "endpoints": r.endpoints,
    });
    d.set_item("summary", summary.to_string())?;
    let ps = &r.port_series;
    let port = PyDict::new(py);
    port.set_item(
        "time",
        PyBytes::new(py, &columns(ps, |x| x.time.to_le_bytes())),
    )?;
    port.set_item(
        "slot",
        PyBytes::new(py, &columns(ps, |x| (x.slot as u64).to_le_bytes())),
    )?;
    port.set_item(
        "xmit_bytes",
        PyBytes::new(py, &columns(ps, |x| x.counters.xmit_bytes.to_le_bytes())),
    )?;
    port.set_item(
        "rcv_bytes",
        PyBytes::new(py, &columns(ps, |x| x.counters.rcv_bytes.to_le_bytes())),
    )?;
    port.set_item(
        "xmit_pkts",
        PyBytes::new(py, &columns(ps, |x| x.counters.xmit_pkts.to_le_bytes())),
    )?;
    port.set_item(
        "rcv_pkts",
        PyBytes::new(py, &columns(ps, |x| x.counters.rcv_pkts.to_le_bytes())),
    )?;
    port.set_item(
        "xmit_wait",
        PyBytes::new(py, &columns(ps, |x| x.counters.xmit_wait.to_le_bytes())),
    )?;
    d.set_item("port_series", port)?;
    let fs = &r.flow_series;
    let flow = PyDict::new(py);
    flow.set_item(
        "time",
        PyBytes::new(py, &columns(fs, |x| x.time.to_le_bytes())),
    )?;
    flow.set_item(
        "flow",
        PyBytes::new(py, &columns(fs, |x| (x.flow as u64).to_le_bytes())),
    )?;
    flow.set_item(
        "gbps",
        PyBytes::new(py, &columns(fs, |x| x.gbps.to_le_bytes())),
    )?;
    flow.set_item(
        "completed",
        PyBytes::new(py, &columns(fs, |x| x.completed.to_le_bytes())),
    )?;
    flow.set_item(
        "mean_latency_us",
        PyBytes::new(py, &columns(fs, |x| x.mean_latency_us.to_le_bytes())),
    )?;
    flow.set_item(
        "sl",
        PyBytes::new(py, &columns(fs, |x| (x.sl as u64).to_le_bytes())),
    )?;
    d.set_item("flow_series", flow)?;
    Ok(d.into_any().unbind())
}

/// Runs one simulation. `config`, `traffic` (JSON or the compact form) and
/// `events` (JSON list) are text; `end` in picoseconds. Returns a dict with
/// `summary` (JSON), `port_series` and `flow_series` (column buffers) and,
/// with `wall`, the run's wall-clock seconds (setup excluded).
#[pyfunction]
#[pyo3(signature = (tables, config, traffic, end, events = None, controller = None, progress = None, dftree = None))]
#[allow(clippy::too_many_arguments)]
fn simulate(
    py: Python<'_>,
    tables: &PyForwardingTables,
    config: &str,
    traffic: &str,
    end: u64,
    events: Option<&str>,
    controller: Option<Py<PyAny>>,
    progress: Option<Py<PyAny>>,
    dftree: Option<&str>,
) -> PyResult<Py<PyAny>> {
    let cfg = parse_config(config)?;
    let spec = parse_traffic_text(traffic).map_err(sim_err)?;
    let f = &tables.fabric;
    let t = &tables.inner;
    let mut sim = Simulation::new(f, t, &cfg, &spec, end).map_err(sim_err)?;
    if let Some(ev) = events {
        let list =
            parse_events(ev, &|kind, name| sim.resolve_name(f, kind, name)).map_err(sim_err)?;
        sim.schedule(&list).map_err(sim_err)?;
    }
    if let Some(c) = controller {
        sim.set_controller(Box::new(PyController {
            func: c,
            error: None,
        }));
    }
    let dftree_log = match dftree {
        Some(text) => {
            let (d, log) = crate::dftree::controller(f, t, text)?;
            sim.set_controller(Box::new(d));
            Some(log)
        }
        None => None,
    };
    let (outcome, wall) = py.detach(|| {
        let t0 = std::time::Instant::now();
        let mut cb = |now: u64, end: u64| {
            if let Some(p) = &progress {
                Python::attach(|py| {
                    let _ = p.call1(py, (now, end));
                });
            }
        };
        let r = catch_unwind(AssertUnwindSafe(|| sim.run_with(&mut cb)));
        (r, t0.elapsed().as_secs_f64())
    });
    let result = outcome.map_err(internal)?.map_err(sim_err)?;
    let d = result_to_py(py, result)?;
    d.bind(py).set_item("wall", wall)?;
    if let Some(log) = dftree_log {
        d.bind(py)
            .set_item("dftree_events", crate::dftree::log_json(&log))?;
    }
    Ok(d)
}

/// Runs many simulations in parallel (rayon) over one fabric; each entry is
/// `(config, traffic, end)`. Results in input order; a failed run is a
/// `SimulationError` instance in its place.
#[pyfunction]
fn simulate_many(
    py: Python<'_>,
    tables: &PyForwardingTables,
    runs: Vec<(String, String, u64)>,
) -> PyResult<Py<PyList>> {
    let mut specs = Vec::with_capacity(runs.len());
    for (c, t, end) in &runs {
        specs.push(sweep::RunSpec {
            config: parse_config(c)?,
            traffic: parse_traffic_text(t).map_err(sim_err)?,
            end: *end,
        });
    }
    let f = &tables.fabric;
    let t = &tables.inner;
    let results = py
        .detach(|| catch_unwind(AssertUnwindSafe(|| sweep::run_many(f, t, &specs))))
        .map_err(internal)?;
    let out = PyList::empty(py);
    for r in results {
        match r {
            Ok(r) => out.append(result_to_py(py, r)?)?,
            Err(e) => out.append(sim_err(e).into_value(py))?,
        }
    }
    Ok(out.unbind())
}

/// Parses a traffic spec (JSON or compact) and returns its JSON form; a
/// trace CSV `trace_csv` (text, file name) is added as replayed messages.
#[pyfunction]
#[pyo3(signature = (text, trace_csv = None))]
fn sim_parse_traffic(text: &str, trace_csv: Option<(String, String)>) -> PyResult<String> {
    let mut spec = if text.trim().is_empty() && trace_csv.is_some() {
        TrafficSpec::default()
    } else {
        parse_traffic_text(text).map_err(sim_err)?
    };
    if let Some((csv, file)) = trace_csv {
        spec.trace
            .extend(parse_trace_csv(&csv, &file).map_err(sim_err)?);
    }
    serde_json::to_string(&spec).map_err(|e| sim_err(NetsimError::Config(e.to_string())))
}

/// Parses a duration (`10ms`) into picoseconds.
#[pyfunction]
fn sim_parse_duration(text: &str) -> PyResult<u64> {
    parse_duration(text).map_err(sim_err)
}

/// The default configuration as JSON (kebab-case keys).
#[pyfunction]
fn sim_default_config() -> String {
    serde_json::to_string(&SimConfig::default()).unwrap_or_default()
}

/// A congestion-control preset as JSON: `default` or `ranadive`.
#[pyfunction]
fn sim_cc_preset(name: &str) -> PyResult<String> {
    let cc = match name {
        "default" => CcConfig::default(),
        "ranadive" => CcConfig::ranadive(),
        _ => {
            return Err(sim_err(NetsimError::Config(format!(
                "unknown congestion-control preset '{name}' (default, ranadive)"
            ))))
        }
    };
    Ok(serde_json::to_string(&cc).unwrap_or_default())
}

/// Usable PCIe payload rate in Gb/s (the HCA host limit).
#[pyfunction]
fn sim_pcie_gbps(gen: u8, lanes: u32, max_payload: u32, dllp_share: f64) -> f64 {
    pcie_gbps(gen, lanes, max_payload, dllp_share)
}
