//! Routing engines of `ibcloud-routing`, by registry name, and the native
//! file that holds a fabric with its tables.

use crate::error::{detached, PyIbcloudErr};
use crate::fabric::PyFabric;
use crate::lft::PyForwardingTables;
use ibcloud_fabric::formats::fdbs;
use ibcloud_fabric::formats::native;
use ibcloud_fabric::formats::{write_atomic, write_atomic_with};
use ibcloud_fabric::{FabricError, Guid};
use ibcloud_routing::verify::{self, VerifyOptions};
use ibcloud_routing::{registry, sl_dump, EngineOptions, PathSls, Sl2Vl};
use pyo3::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

/// The service level of every path of a routing (dfsssp, lash).
#[pyclass(name = "PathSls", module = "ibcloud._native")]
#[derive(Clone, Debug)]
pub struct PyPathSls {
    pub(crate) inner: PathSls,
}

#[pymethods]
impl PyPathSls {
    /// SL of the path from LID `src` to LID `dst` (0 for untracked LIDs).
    fn get(&self, src: u16, dst: u16) -> u8 {
        self.inner
            .get(ibcloud_fabric::Lid(src), ibcloud_fabric::Lid(dst))
    }

    /// Number of SLs in use (highest SL + 1).
    #[getter]
    fn num_sls(&self) -> usize {
        self.inner.num_sls()
    }

    /// Writes the SLs as `ibcloud-path-sls.dump` (OpenSM's own debug-line form,
    /// `route from src_lid=S to dest_lid=D on vl=N`); `nonzero_only` skips SL 0.
    #[pyo3(signature = (path, nonzero_only=false))]
    fn write(&self, py: Python<'_>, path: PathBuf, nonzero_only: bool) -> PyResult<()> {
        let inner = &self.inner;
        let mode = if nonzero_only {
            sl_dump::Mode::NonZero
        } else {
            sl_dump::Mode::Full
        };
        Ok(detached(py, || -> Result<(), FabricError> {
            write_atomic_with(&path, |mut w| sl_dump::write(inner, &mut w, mode))
        })?)
    }

    fn __repr__(&self) -> String {
        format!(
            "PathSls(lids={}, sls={})",
            self.inner.lids().len(),
            self.inner.num_sls()
        )
    }
}

/// Reads an `ibcloud-path-sls.dump` (or, with `opensm_log`, the SL lines of an
/// OpenSM log at verbosity 0x4b).
#[pyfunction]
#[pyo3(signature = (path, opensm_log=false))]
pub(crate) fn read_path_sls(
    py: Python<'_>,
    path: PathBuf,
    opensm_log: bool,
) -> PyResult<PyPathSls> {
    let inner = detached(py, || -> Result<PathSls, FabricError> {
        let text = ibcloud_fabric::formats::read_text(std::path::Path::new(&path))?;
        let file = path.display().to_string();
        if opensm_log {
            sl_dump::parse_opensm_log(&text, &file)
        } else {
            sl_dump::parse(&text, &file)
        }
    })?;
    Ok(PyPathSls { inner })
}

/// Registered engines as (name, description) pairs.
#[pyfunction]
pub(crate) fn engines() -> Vec<(&'static str, &'static str)> {
    registry::engines()
}

/// Routes `fabric` with engine `name`; returns (tables, path SLs or None,
/// seconds spent routing).
#[pyfunction]
#[pyo3(signature = (fabric, name, roots=None, compute_nodes=None, max_vls=None))]
pub(crate) fn route(
    py: Python<'_>,
    fabric: &PyFabric,
    name: &str,
    roots: Option<Vec<u64>>,
    compute_nodes: Option<Vec<u64>>,
    max_vls: Option<u8>,
) -> PyResult<(PyForwardingTables, Option<PyPathSls>, f64)> {
    let options = EngineOptions {
        roots: roots.map(|g| g.into_iter().map(Guid).collect()),
        compute_nodes: compute_nodes.map(|g| g.into_iter().map(Guid).collect()),
        max_vls,
        ..EngineOptions::default()
    };
    let f = &fabric.inner;
    let (routing, seconds) = detached(py, || -> Result<_, PyIbcloudErr> {
        let engine = registry::engine(name, &options)?;
        let start = Instant::now();
        let routing = engine.route(f)?;
        Ok((routing, start.elapsed().as_secs_f64()))
    })?;
    let tables = PyForwardingTables {
        inner: routing.tables,
        fabric: f.clone(),
    };
    Ok((
        tables,
        routing.path_sls.map(|inner| PyPathSls { inner }),
        seconds,
    ))
}

/// Verifies tables (and path SLs): returns (all checks passed, report as
/// text, report as JSON).
// Keyword arguments of a Python function, not a Rust API.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (tables, path_sls=None, include_switches=false, credit_loops=true, max_failures=10, per_link=false, sl2vl=None))]
pub(crate) fn verify_tables(
    py: Python<'_>,
    tables: &PyForwardingTables,
    path_sls: Option<&PyPathSls>,
    include_switches: bool,
    credit_loops: bool,
    max_failures: usize,
    per_link: bool,
    sl2vl: Option<[u8; 16]>,
) -> PyResult<(bool, String, String)> {
    let sl2vl = sl2vl.map(Sl2Vl).unwrap_or_default();
    let options = VerifyOptions {
        include_switches,
        credit_loops,
        max_failures,
        per_link,
        sl2vl,
    };
    let (fabric, inner, sls) = (&tables.fabric, &tables.inner, path_sls.map(|p| &p.inner));
    let report = detached(py, || {
        verify::verify(fabric, inner, sls, &options).map_err(|e| {
            PyIbcloudErr::from(ibcloud_routing::RoutingError::BadOptions(e.to_string()))
        })
    })?;
    let json = serde_json::to_string(&report)
        .map_err(|e| crate::exceptions::InternalError::new_err(e.to_string()))?;
    Ok((report.ok(), report.to_string(), json))
}

/// Writes tables as OpenSM's `opensm.fdbs` (what ibdmchk reads with `-f`).
#[pyfunction]
pub(crate) fn write_fdbs(
    py: Python<'_>,
    tables: &PyForwardingTables,
    path: PathBuf,
) -> PyResult<()> {
    let (fabric, inner) = (&tables.fabric, &tables.inner);
    Ok(detached(py, || -> Result<(), FabricError> {
        write_atomic_with(&path, |mut w| fdbs::write(fabric, inner, &mut w))
    })?)
}

/// Parses `ibroute` output (one or more switches) into tables for `fabric`.
#[pyfunction]
#[pyo3(signature = (text, fabric, file="<ibroute>"))]
pub(crate) fn parse_ibroute(
    py: Python<'_>,
    text: &str,
    fabric: &PyFabric,
    file: &str,
) -> PyResult<PyForwardingTables> {
    let f = &fabric.inner;
    let inner = detached(py, || -> Result<_, FabricError> {
        fdbs::parse_ibroute(text, file)?.to_tables(f)
    })?;
    Ok(PyForwardingTables {
        inner,
        fabric: f.clone(),
    })
}

/// Writes a fabric with its tables in the native format.
#[pyfunction]
pub(crate) fn write_native_with_tables(
    py: Python<'_>,
    tables: &PyForwardingTables,
    path: PathBuf,
) -> PyResult<()> {
    let (fabric, inner) = (&tables.fabric, &tables.inner);
    Ok(detached(py, || -> Result<(), FabricError> {
        write_atomic(&path, &native::encode(fabric, Some(inner)))
    })?)
}

/// Reads a native file: the fabric and, if stored, its tables.
#[pyfunction]
pub(crate) fn read_native_with_tables(
    py: Python<'_>,
    path: PathBuf,
) -> PyResult<(PyFabric, Option<PyForwardingTables>)> {
    let file = detached(py, || -> Result<_, FabricError> {
        let data = std::fs::read(&path).map_err(|e| FabricError::io(&path, e))?;
        native::decode(&data, &path.display().to_string())
    })?;
    let tables = file.tables.map(|inner| PyForwardingTables {
        inner,
        fabric: file.fabric.clone(),
    });
    Ok((file.fabric.into(), tables))
}
