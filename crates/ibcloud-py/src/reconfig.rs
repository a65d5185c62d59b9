//! `ibcloud-reconfig`: fabric events and the reconfiguration methods of
//! Papers III and IV, NoFTree orders, and the papers' experiments. Results
//! cross as JSON text (the Python layer turns them into dicts and
//! DataFrames); errors become `ReconfigError` (`RoutingError` for engine
//! refusals), a panic `InternalError`.

use crate::exceptions as exc;
use crate::fabric::PyFabric;
use crate::lft::PyForwardingTables;
use ibcloud_analysis::{AnalysisOptions, Endpoints, Pattern};
use ibcloud_fabric::{Fabric, Guid, Lid};
use ibcloud_reconfig::event::{Event, FabricState};
use ibcloud_reconfig::method::{reconfigure, Method, MethodOptions};
use ibcloud_reconfig::{experiments, metabase, order, ReconfigError};
use ibcloud_routing::EngineOptions;
use pyo3::prelude::*;
use std::path::PathBuf;

/// Adds the functions of this file to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(reconfig_apply, m)?)?;
    m.add_function(wrap_pyfunction!(reconfig_route_noftree, m)?)?;
    m.add_function(wrap_pyfunction!(reconfig_read_order, m)?)?;
    m.add_function(wrap_pyfunction!(reconfig_order_by_traffic, m)?)?;
    m.add_function(wrap_pyfunction!(reconfig_tree_counts, m)?)?;
    m.add_function(wrap_pyfunction!(reconfig_subtree_timing, m)?)?;
    m.add_function(wrap_pyfunction!(reconfig_fault_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(reconfig_routing_times, m)?)?;
    m.add_function(wrap_pyfunction!(reconfig_node_order, m)?)?;
    m.add_function(wrap_pyfunction!(reconfig_slim_initial, m)?)?;
    Ok(())
}

fn to_py(e: ReconfigError) -> PyErr {
    match e {
        ReconfigError::Routing(r) => exc::RoutingError::new_err(r.to_string()),
        other => exc::ReconfigError::new_err(other.to_string()),
    }
}

/// Serialises a result to JSON text.
macro_rules! json {
    ($v:expr) => {
        serde_json::to_string($v).map_err(|e| exc::InternalError::new_err(e.to_string()))
    };
}

/// Runs `work` with the GIL released; a panic becomes `InternalError`.
fn detached<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> Result<T, ReconfigError> + Send,
) -> PyResult<T> {
    crate::error::detached_map(py, work, to_py)
}

/// Applies `before` events to `fabric` (the state `tables` belong to), then
/// `event` (None: a performance-driven reconfiguration), re-routes with
/// `method` and returns (fabric now, new tables, report as JSON).
#[pyfunction]
#[pyo3(signature = (fabric, tables, event, method, before=Vec::new(), nodes=None, order=None, verify=true, paths=false, metabase=None, metabase_paths=None, disjoint=false))]
#[allow(clippy::too_many_arguments)]
fn reconfig_apply(
    py: Python<'_>,
    fabric: &PyFabric,
    tables: &PyForwardingTables,
    event: Option<(String, Vec<String>)>,
    method: &str,
    before: Vec<(String, Vec<String>)>,
    nodes: Option<Vec<String>>,
    order: Option<Vec<u16>>,
    verify: bool,
    paths: bool,
    metabase: Option<PathBuf>,
    metabase_paths: Option<usize>,
    disjoint: bool,
) -> PyResult<(PyFabric, PyForwardingTables, String)> {
    let base = fabric.inner.clone();
    let old = tables.inner.clone();
    let (now, new, report) = detached(py, move || {
        let mut state = FabricState::new(base.clone());
        for (kind, args) in &before {
            let e = Event::parse(&base, kind, args)?;
            state.apply(&e)?;
        }
        let ev = event
            .as_ref()
            .map(|(k, a)| Event::parse(&base, k, a))
            .transpose()?;
        let mut m = Method::parse(method)?;
        if let Method::Subtree(list) = &mut m {
            for n in nodes.iter().flatten() {
                list.push(ibcloud_reconfig::event::resolve_node(&base, n)?);
            }
        }
        if let Method::Metabase(store) = &mut m {
            *store = metabase;
        }
        let opts = MethodOptions {
            order: order.map(|o| o.into_iter().map(Lid).collect()),
            verify,
            paths,
            metabase_paths,
            disjoint,
        };
        let (new, outcome) = reconfigure(&mut state, &old, ev.as_ref(), &m, &opts)?;
        Ok((state.current(), new, outcome))
    })?;
    let report = json!(&report)?;
    Ok((
        PyFabric::from(now.clone()),
        PyForwardingTables {
            inner: new,
            fabric: now,
        },
        report,
    ))
}

/// NoFTree: ftree routing `fabric` with a node order (CA LIDs); returns
/// (tables, seconds).
#[pyfunction]
#[pyo3(signature = (fabric, order, roots=None))]
fn reconfig_route_noftree(
    py: Python<'_>,
    fabric: &PyFabric,
    order: Vec<u16>,
    roots: Option<Vec<u64>>,
) -> PyResult<(PyForwardingTables, f64)> {
    let f = fabric.inner.clone();
    let (tables, secs) = detached(py, || {
        let o = EngineOptions {
            node_order: Some(order.into_iter().map(Lid).collect()),
            roots: roots.map(|r| r.into_iter().map(Guid).collect()),
            ..EngineOptions::default()
        };
        let start = std::time::Instant::now();
        let r = ibcloud_routing::registry::engine("noftree", &o)?
            .route(&f)
            .map_err(|e| match e {
                ibcloud_routing::RoutingError::BadOptions(m) => ReconfigError::BadOrder(m),
                other => ReconfigError::Routing(other),
            })?;
        Ok((r.tables, start.elapsed().as_secs_f64()))
    })?;
    Ok((
        PyForwardingTables {
            inner: tables,
            fabric: fabric.inner.clone(),
        },
        secs,
    ))
}

/// Reads a node-order file (GUIDs, LIDs, ftree CA-order dump) as CA LIDs.
#[pyfunction]
fn reconfig_read_order(py: Python<'_>, fabric: &PyFabric, path: PathBuf) -> PyResult<Vec<u16>> {
    let f = &fabric.inner;
    detached(py, || {
        Ok(order::read_order_file(f, &path)?
            .into_iter()
            .map(|l| l.0)
            .collect())
    })
}

/// Per-CA received weight of `pattern` over `runs` analysis runs, highest
/// first: [(LID, weight)].
#[pyfunction]
#[pyo3(signature = (fabric, pattern, pattern_arg=None, runs=1, seed=0, shuffle=true))]
fn reconfig_order_by_traffic(
    py: Python<'_>,
    fabric: &PyFabric,
    pattern: &str,
    pattern_arg: Option<&str>,
    runs: u64,
    seed: u64,
    shuffle: bool,
) -> PyResult<Vec<(u16, f64)>> {
    let f = &fabric.inner;
    let p = Pattern::parse(pattern, pattern_arg)
        .map_err(|e| exc::AnalysisError::new_err(e.to_string()))?;
    detached(py, || {
        let ep = Endpoints::cas(f);
        let opts = AnalysisOptions {
            runs,
            seed,
            shuffle,
            ..AnalysisOptions::default()
        };
        let recv = order::received_traffic(&ep, &p, &opts)?;
        let counts: Vec<(Lid, f64)> = ep
            .as_slice()
            .iter()
            .zip(&recv)
            .map(|(e, &r)| (e.lid, r))
            .collect();
        let ranked = order::by_counts(&counts);
        let by: std::collections::HashMap<u16, f64> =
            counts.iter().map(|(l, c)| (l.0, *c)).collect();
        Ok(ranked.into_iter().map(|l| (l.0, by[&l.0])).collect())
    })
}

/// (different, disjoint) spanning trees towards the first leaf.
#[pyfunction]
fn reconfig_tree_counts(py: Python<'_>, fabric: &PyFabric) -> PyResult<(usize, usize)> {
    let f = &fabric.inner;
    detached(py, || {
        let c = metabase::tree_counts(f)?;
        Ok((c.different, c.disjoint))
    })
}

/// Paper III timing (JSON).
#[pyfunction]
#[pyo3(signature = (fabric, repeats=3))]
fn reconfig_subtree_timing(py: Python<'_>, fabric: &PyFabric, repeats: usize) -> PyResult<String> {
    let f = &fabric.inner;
    let r = detached(py, || experiments::subtree_timing(f, repeats))?;
    json!(&r)
}

/// Paper IV fault scenario: (steps JSON, fabric after, ftree tables, SlimUpdate tables).
#[pyfunction]
#[pyo3(signature = (fabric, kind, steps, seed=0))]
fn reconfig_fault_scenario(
    py: Python<'_>,
    fabric: &PyFabric,
    kind: &str,
    steps: usize,
    seed: u64,
) -> PyResult<(String, PyFabric, PyForwardingTables, PyForwardingTables)> {
    let f = &fabric.inner;
    let (s, now, a, b) = detached(py, || experiments::fault_scenario(f, kind, steps, seed))?;
    let wrap = |t, f: &Fabric| PyForwardingTables {
        inner: t,
        fabric: f.clone(),
    };
    Ok((
        json!(&s)?,
        PyFabric::from(now.clone()),
        wrap(a, &now),
        wrap(b, &now),
    ))
}

/// SlimUpdate's first run (no old tables): Paper IV's own initial routing.
#[pyfunction]
fn reconfig_slim_initial(py: Python<'_>, fabric: &PyFabric) -> PyResult<PyForwardingTables> {
    let f = &fabric.inner;
    let r = detached(py, || ibcloud_reconfig::slimupdate::slim_initial(f))?;
    Ok(PyForwardingTables {
        inner: r.tables,
        fabric: f.clone(),
    })
}

/// Paper IV routing times (JSON).
#[pyfunction]
#[pyo3(signature = (fabric, repeats=3))]
fn reconfig_routing_times(py: Python<'_>, fabric: &PyFabric, repeats: usize) -> PyResult<String> {
    let f = &fabric.inner;
    let r = detached(py, || experiments::routing_times(f, repeats))?;
    json!(&r)
}

/// Paper IV node-order experiment (JSON).
#[pyfunction]
#[pyo3(signature = (fabric, patterns, orders, seed=0, contiguous=false))]
fn reconfig_node_order(
    py: Python<'_>,
    fabric: &PyFabric,
    patterns: Vec<String>,
    orders: u64,
    seed: u64,
    contiguous: bool,
) -> PyResult<String> {
    let f = &fabric.inner;
    let r = detached(py, || {
        experiments::node_order(f, &patterns, orders, seed, contiguous)
    })?;
    json!(&r)
}
