//! The one place where core errors become Python exceptions.
//!
//! | core error | Python exception |
//! |---|---|
//! | `FabricError::Parse` | `ParseError` (also a `ValueError`) |
//! | `FabricError::Topology` | `TopologyError` |
//! | `FabricError::Lid` | `LidError` |
//! | `FabricError::Unsupported` | `UnsupportedError` |
//! | `RoutingError` (any) | `RoutingError` |
//! | `AnalysisError` (any) | `AnalysisError` |
//! | `FabricError::Io` | `OSError` with errno and file name, so Python picks the subclass (`FileNotFoundError`, `PermissionError`, …) |
//! | a panic in the core | `InternalError` |
//!
//! All but `OSError` derive from `IbcloudError`.

use crate::exceptions as exc;
use ibcloud_analysis::AnalysisError;
use ibcloud_fabric::{FabricError, LidError, ParseError, TopologyError};
use ibcloud_routing::RoutingError;
use pyo3::exceptions::{PyFileNotFoundError, PyOSError};
use pyo3::prelude::*;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// An error on its way to Python.
#[derive(Debug)]
pub(crate) enum PyIbcloudErr {
    /// Any error of `ibcloud-fabric`.
    Fabric(FabricError),
    /// Any error of `ibcloud-routing`.
    Routing(RoutingError),
    /// Any error of `ibcloud-analysis`.
    Analysis(AnalysisError),
    /// The core panicked: a bug, reported instead of unwinding into Python.
    Internal(String),
}

impl From<FabricError> for PyIbcloudErr {
    fn from(e: FabricError) -> Self {
        Self::Fabric(e)
    }
}

impl From<RoutingError> for PyIbcloudErr {
    fn from(e: RoutingError) -> Self {
        Self::Routing(e)
    }
}

impl From<AnalysisError> for PyIbcloudErr {
    fn from(e: AnalysisError) -> Self {
        Self::Analysis(e)
    }
}

impl From<TopologyError> for PyIbcloudErr {
    fn from(e: TopologyError) -> Self {
        Self::Fabric(e.into())
    }
}

impl From<LidError> for PyIbcloudErr {
    fn from(e: LidError) -> Self {
        Self::Fabric(e.into())
    }
}

impl From<ParseError> for PyIbcloudErr {
    fn from(e: ParseError) -> Self {
        Self::Fabric(e.into())
    }
}

impl From<PyIbcloudErr> for PyErr {
    fn from(err: PyIbcloudErr) -> Self {
        match err {
            PyIbcloudErr::Fabric(FabricError::Parse(e)) => {
                Python::attach(|py| match exc::parse_error(py) {
                    Ok(ty) => PyErr::from_type(ty.clone(), e.to_string()),
                    Err(setup) => setup,
                })
            }
            PyIbcloudErr::Fabric(FabricError::Topology(e)) => {
                exc::TopologyError::new_err(e.to_string())
            }
            PyIbcloudErr::Fabric(FabricError::Lid(e)) => exc::LidError::new_err(e.to_string()),
            PyIbcloudErr::Fabric(FabricError::Unsupported(msg)) => {
                exc::UnsupportedError::new_err(msg)
            }
            PyIbcloudErr::Fabric(FabricError::Io { path, source }) => os_error(&path, &source),
            PyIbcloudErr::Fabric(other) => exc::IbcloudError::new_err(other.to_string()),
            PyIbcloudErr::Routing(e) => exc::RoutingError::new_err(e.to_string()),
            PyIbcloudErr::Analysis(e) => exc::AnalysisError::new_err(e.to_string()),
            PyIbcloudErr::Internal(msg) => exc::InternalError::new_err(msg),
        }
    }
}

/// `OSError(errno, strerror, filename)`, which Python turns into the matching
/// subclass; `FileNotFoundError` also when the OS gave no errno.
fn os_error(path: &Path, source: &io::Error) -> PyErr {
    let file = path.display().to_string();
    match source.raw_os_error() {
        Some(code) => {
            let text = source.to_string();
            let strerror = text
                .strip_suffix(&format!(" (os error {code})"))
                .unwrap_or(&text)
                .to_owned();
            PyOSError::new_err((code, strerror, file))
        }
        None if source.kind() == io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(format!("{file}: {source}"))
        }
        None => PyOSError::new_err(format!("{file}: {source}")),
    }
}

/// Runs core work, turning a panic into [`PyIbcloudErr::Internal`] so that
/// none unwinds into Python.
pub(crate) fn guarded<T, E, F>(work: F) -> Result<T, PyIbcloudErr>
where
    F: FnOnce() -> Result<T, E>,
    E: Into<PyIbcloudErr>,
{
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(result) => result.map_err(Into::into),
        Err(payload) => Err(PyIbcloudErr::Internal(panic_message(payload.as_ref()))),
    }
}

/// [`guarded`] with the GIL released, for generation, reading and writing.
pub(crate) fn detached<T, E, F>(py: Python<'_>, work: F) -> Result<T, PyIbcloudErr>
where
    F: FnOnce() -> Result<T, E> + Send,
    T: Send,
    E: Into<PyIbcloudErr> + Send,
{
    py.detach(|| guarded(work))
}

/// [`detached`] for bindings that map their crate's errors themselves (to
/// their own exception class); a panic still becomes `InternalError`.
pub(crate) fn detached_map<T, E, F>(
    py: Python<'_>,
    work: F,
    map: impl FnOnce(E) -> PyErr,
) -> PyResult<T>
where
    F: FnOnce() -> Result<T, E> + Send,
    T: Send,
    E: Send,
{
    match py.detach(|| catch_unwind(AssertUnwindSafe(work))) {
        Ok(result) => result.map_err(map),
        Err(payload) => Err(internal_error(payload)),
    }
}

/// The `InternalError` for a caught panic.
pub(crate) fn internal_error(payload: Box<dyn std::any::Any + Send>) -> PyErr {
    exc::InternalError::new_err(panic_message(payload.as_ref()))
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    format!("internal error (a bug in ibcloud, please report it): {what}")
}
