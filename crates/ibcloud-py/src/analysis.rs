//! The ORCS-style congestion analysis of `ibcloud-analysis`.

use crate::error::{detached, guarded, PyIbcloudErr};
use crate::fabric::PyFabric;
use crate::lft::PyForwardingTables;
use ibcloud_analysis::{
    analyze_with_paths, AnalysisError, AnalysisOptions, Endpoints, PathMode, Paths, Pattern,
    RankOrder, Subset, TrafficMatrix,
};
use ibcloud_fabric::formats::node_order::{self, OrderEntry};
use ibcloud_fabric::{Fabric, FabricError, Guid, Lid, PortRef};
use ibcloud_routing::engines::ftree::FtreeEngine;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

fn entry_of(v: u64) -> OrderEntry {
    match v {
        0xFFFF => OrderEntry::Dummy,
        v if v < 0xFFFF => OrderEntry::Lid(Lid(v as u16)),
        v => OrderEntry::Guid(Guid(v)),
    }
}

/// Positions in `eps` of the order's entries; entries that are not among the
/// endpoints (or DUMMY) are skipped and counted, as ORCS skips them.
fn resolve_order(fabric: &Fabric, eps: &Endpoints, order: &[OrderEntry]) -> (Vec<usize>, usize) {
    let pos_of_port = |p: PortRef| eps.position(p);
    let mut out = Vec::new();
    let mut skipped = 0;
    let mut seen = std::collections::HashSet::new();
    let table = fabric.lid_table().unwrap_or_default();
    for e in order {
        let found = match *e {
            OrderEntry::Dummy => None,
            OrderEntry::Lid(l) => table
                .get(l.0 as usize)
                .copied()
                .flatten()
                .and_then(pos_of_port),
            OrderEntry::Guid(g) => fabric.port_by_guid(g).and_then(pos_of_port).or_else(|| {
                fabric
                    .node_by_guid(g)
                    .and_then(|n| eps.as_slice().iter().position(|x| x.port.node == n))
            }),
        };
        match found {
            Some(p) if seen.insert(p) => out.push(p),
            _ => skipped += 1,
        }
    }
    (out, skipped)
}

/// Runs an analysis of `tables` (on the fabric they were made for); see `ibcloud.analysis.analyze` for the arguments.
#[pyfunction]
#[pyo3(signature = (tables, pattern, pattern_arg=None, runs=1, seed=0, shuffle=true, lids=None, guids=None,
                    matrix=None, subset="rand", count=None, order=None, order_ftree=false, threads=None,
                    paths="auto", progress=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn analyze<'py>(
    py: Python<'py>,
    tables: &PyForwardingTables,
    pattern: &str,
    pattern_arg: Option<&str>,
    runs: u64,
    seed: u64,
    shuffle: bool,
    lids: Option<Vec<u16>>,
    guids: Option<Vec<u64>>,
    matrix: Option<Vec<(u16, u16, f64, u32)>>,
    subset: &str,
    count: Option<usize>,
    order: Option<Vec<u64>>,
    order_ftree: bool,
    threads: Option<usize>,
    paths: &str,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let f = &tables.fabric;
    let t = &tables.inner;
    let path_mode = match paths {
        "auto" => PathMode::default(),
        "table" => PathMode::Table,
        "walk" => PathMode::Walk,
        other => {
            return Err(PyIbcloudErr::from(AnalysisError::BadOptions(format!(
                "unknown path mode '{other}' (auto, table, walk)"
            )))
            .into())
        }
    };
    let prepared = detached(py, || -> Result<_, PyIbcloudErr> {
        let (eps, pattern) = match matrix {
            Some(rows) => {
                let rows: Vec<_> = rows
                    .into_iter()
                    .map(|(s, d, w, l)| (Lid(s), Lid(d), w, l))
                    .collect();
                let (eps, m) = TrafficMatrix::from_lid_rows(f, &rows)?;
                (eps, Pattern::Matrix(m))
            }
            None => {
                let pattern = Pattern::parse(pattern, pattern_arg)?;
                let eps = match (lids, guids) {
                    (Some(l), _) => {
                        Endpoints::from_lids(f, &l.into_iter().map(Lid).collect::<Vec<_>>())?
                    }
                    (None, Some(g)) => {
                        Endpoints::from_guids(f, &g.into_iter().map(Guid).collect::<Vec<_>>())?
                    }
                    (None, None) => Endpoints::cas(f),
                };
                let eps = match count {
                    Some(c) => eps.subset_seeded(f, Subset::parse(subset)?, c, seed)?,
                    None => eps,
                };
                (eps, pattern)
            }
        };
        let mut entries: Vec<OrderEntry> = order
            .unwrap_or_default()
            .into_iter()
            .map(entry_of)
            .collect();
        if order_ftree {
            let ca = FtreeEngine::new().ca_order(f)?;
            entries.extend(
                ca.into_iter()
                    .map(|l| l.map_or(OrderEntry::Dummy, OrderEntry::Lid)),
            );
        }
        let dummies = entries.iter().filter(|e| **e == OrderEntry::Dummy).count();
        let (fixed, skipped) = resolve_order(f, &eps, &entries);
        Ok((eps, pattern, fixed, skipped - dummies.min(skipped)))
    })?;
    let (eps, pattern, fixed, skipped) = prepared;
    let options = AnalysisOptions {
        runs,
        seed,
        shuffle,
        order: fixed.clone(),
        path_mode,
        threads,
    };
    let mut callback_error: Option<PyErr> = None;
    let result = py.detach(|| {
        guarded(|| -> Result<_, PyIbcloudErr> {
            let paths = Paths::new(f, t, &eps, path_mode)?;
            let mut report = |done: u64, total: u64| -> bool {
                let Some(cb) = progress.as_ref() else {
                    return true;
                };
                Python::attach(|py| {
                    match py.check_signals().and_then(|_| cb.call1(py, (done, total))) {
                        Ok(_) => true,
                        Err(e) => {
                            callback_error = Some(e);
                            false
                        }
                    }
                })
            };
            Ok(analyze_with_paths(
                f,
                &paths,
                &pattern,
                &options,
                &mut report,
            )?)
        })
    });
    if let Some(e) = callback_error {
        return Err(e);
    }
    let a = result?;
    let out = PyDict::new(py);
    out.set_item("pattern", &a.pattern)?;
    out.set_item("seed", a.seed)?;
    out.set_item("precomputed_paths", a.precomputed_paths)?;
    out.set_item(
        "endpoint_lids",
        eps.as_slice().iter().map(|e| e.lid.0).collect::<Vec<_>>(),
    )?;
    out.set_item("fixed_ranks", fixed.len())?;
    out.set_item("order_skipped", skipped)?;
    let runs = PyDict::new(py);
    runs.set_item("run", a.runs.iter().map(|r| r.run).collect::<Vec<_>>())?;
    runs.set_item(
        "levels",
        a.runs.iter().map(|r| r.levels).collect::<Vec<_>>(),
    )?;
    runs.set_item("flows", a.runs.iter().map(|r| r.flows).collect::<Vec<_>>())?;
    runs.set_item(
        "broken",
        a.runs.iter().map(|r| r.broken).collect::<Vec<_>>(),
    )?;
    runs.set_item(
        "acc_band",
        a.runs.iter().map(|r| r.acc_band).collect::<Vec<_>>(),
    )?;
    runs.set_item(
        "max_cong",
        a.runs.iter().map(|r| r.max_cong).collect::<Vec<_>>(),
    )?;
    runs.set_item(
        "sum_max_cong",
        a.runs.iter().map(|r| r.sum_max_cong).collect::<Vec<_>>(),
    )?;
    runs.set_item(
        "dep_max_delay",
        a.runs.iter().map(|r| r.dep_max_delay).collect::<Vec<_>>(),
    )?;
    out.set_item("runs", runs)?;
    out.set_item("hist_max_cong", a.hist_max_cong.clone())?;
    let node = |p: PortRef| f.node(p.node);
    let links: Vec<_> = a
        .links
        .iter()
        .map(|l| {
            (
                node(l.port).guid.0,
                l.port.port,
                node(l.port).description.clone(),
                node(l.remote).guid.0,
                l.remote.port,
                node(l.remote).description.clone(),
                node(l.port).is_switch() && node(l.remote).is_switch(),
                l.total,
                l.max,
            )
        })
        .collect();
    out.set_item("links", links)?;
    let broken: Vec<_> = a
        .broken
        .iter()
        .map(|b| (b.run, b.level, b.src.0, b.dst.0, b.failure.to_string()))
        .collect();
    out.set_item("broken", broken)?;
    out.set_item("broken_flows", a.broken_flows)?;
    Ok(out)
}

/// Rank → endpoint position of every run, as `analyze` draws them.
#[pyfunction]
#[pyo3(signature = (n, seed, runs, shuffle=true, fixed=Vec::new()))]
pub(crate) fn run_orders(
    n: usize,
    seed: u64,
    runs: u64,
    shuffle: bool,
    fixed: Vec<usize>,
) -> PyResult<Vec<Vec<u32>>> {
    let order = RankOrder::new(n, &fixed, shuffle).map_err(PyIbcloudErr::from)?;
    Ok((0..runs).map(|r| order.for_run(seed, r)).collect())
}

/// The flows of a pattern over `n` ranks in run `run`, level by level, as
/// (source rank, destination rank) pairs.
#[pyfunction]
#[pyo3(signature = (pattern, n, seed=0, run=0, pattern_arg=None, shuffle=true))]
pub(crate) fn pattern_levels(
    pattern: &str,
    n: usize,
    seed: u64,
    run: u64,
    pattern_arg: Option<&str>,
    shuffle: bool,
) -> PyResult<Vec<Vec<(u32, u32)>>> {
    let p = Pattern::parse(pattern, pattern_arg).map_err(PyIbcloudErr::from)?;
    p.check(n).map_err(PyIbcloudErr::from)?;
    // The run's stream first draws the order (as analyze does), then the pattern.
    let mut rng = ibcloud_analysis::run_stream(seed, run);
    let _ = RankOrder::new(n, &[], shuffle)
        .map_err(PyIbcloudErr::from)?
        .draw_with(&mut rng);
    let inst = p.instantiate(n, &mut rng);
    Ok(inst
        .all_levels()
        .into_iter()
        .map(|l| l.into_iter().map(|f| (f.src, f.dst)).collect())
        .collect())
}

/// Names of the built-in patterns.
#[pyfunction]
pub(crate) fn pattern_names() -> Vec<&'static str> {
    ibcloud_analysis::PATTERN_NAMES.to_vec()
}

/// Reads a node-order file (GUIDs, or OpenSM's opensm-ftree-ca-order.dump);
/// values up to 0xFFFF are LIDs, 0xFFFF a DUMMY slot.
#[pyfunction]
pub(crate) fn read_node_order(py: Python<'_>, path: PathBuf) -> PyResult<Vec<u64>> {
    Ok(detached(py, || -> Result<Vec<u64>, FabricError> {
        let text = ibcloud_fabric::formats::read_text(std::path::Path::new(&path))?;
        let entries = node_order::parse(&text, &path.display().to_string())?;
        Ok(entries
            .into_iter()
            .map(|e| match e {
                OrderEntry::Lid(l) => l.0 as u64,
                OrderEntry::Guid(g) => g.0,
                OrderEntry::Dummy => 0xFFFF,
            })
            .collect())
    })?)
}

/// ftree's compute-node order (None for OpenSM's DUMMY slots).
#[pyfunction]
pub(crate) fn ftree_ca_order(py: Python<'_>, fabric: &PyFabric) -> PyResult<Vec<Option<u16>>> {
    let f = &fabric.inner;
    let order = detached(py, || FtreeEngine::new().ca_order(f))?;
    Ok(order.into_iter().map(|l| l.map(|l| l.0)).collect())
}

/// Writes ftree's compute-node order as OpenSM's opensm-ftree-ca-order.dump.
#[pyfunction]
pub(crate) fn write_ftree_ca_order(
    py: Python<'_>,
    fabric: &PyFabric,
    path: PathBuf,
) -> PyResult<()> {
    let f = &fabric.inner;
    Ok(detached(py, || -> Result<(), PyIbcloudErr> {
        let order = FtreeEngine::new().ca_order(f)?;
        let table = f.lid_table()?;
        let desc = |l: Option<Lid>| {
            l.and_then(|l| table.get(l.0 as usize).copied().flatten())
                .map_or(String::new(), |p| f.node(p.node).description.clone())
        };
        let descs: Vec<String> = order.iter().map(|&l| desc(l)).collect();
        let mut buf = Vec::new();
        node_order::write_ca_order(
            &mut buf,
            order.iter().zip(&descs).map(|(&l, d)| (l, d.as_str())),
        )
        .map_err(|e| FabricError::io(&path, e))?;
        Ok(ibcloud_fabric::formats::write_atomic(&path, &buf)?)
    })?)
}
