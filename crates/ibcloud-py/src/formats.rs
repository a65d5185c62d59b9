//! Readers and writers of `ibcloud-fabric::formats`, by format name
//! (`native`, `ibnetdiscover`, `ibsim`, `subnet-lst`) or file extension.

use crate::error::{detached, PyIbcloudErr};
use crate::fabric::PyFabric;
use ibcloud_fabric::formats::{self as fabric_formats, Format};
use ibcloud_fabric::FabricError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::path::PathBuf;

fn parse_format(name: &str) -> Result<Format, PyIbcloudErr> {
    name.parse()
        .map_err(|msg| FabricError::Unsupported(msg).into())
}

fn parse_optional(name: Option<&str>) -> Result<Option<Format>, PyIbcloudErr> {
    name.map(parse_format).transpose()
}

/// Every fabric format: name, extension, whether it can be written.
#[pyfunction]
pub(crate) fn formats(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for f in Format::ALL {
        let d = PyDict::new(py);
        d.set_item("name", f.name())?;
        d.set_item("extension", f.extension())?;
        d.set_item("can_write", f.can_write())?;
        list.append(d)?;
    }
    Ok(list)
}

/// The format a file name implies (`.ibcf`, `.topo`, `.net`, `.lst`), or None.
#[pyfunction]
pub(crate) fn format_from_path(path: PathBuf) -> Option<&'static str> {
    Format::from_path(&path).map(Format::name)
}

/// The canonical name of a format given by name or extension.
#[pyfunction]
pub(crate) fn format_name(name: &str) -> PyResult<&'static str> {
    Ok(parse_format(name)?.name())
}

/// Reads a fabric; without `format`, guesses from the name, then the content.
#[pyfunction]
#[pyo3(signature = (path, format=None))]
pub(crate) fn read_fabric(
    py: Python<'_>,
    path: PathBuf,
    format: Option<&str>,
) -> PyResult<PyFabric> {
    let format = parse_optional(format)?;
    Ok(detached(py, || fabric_formats::read_fabric(&path, format))?.into())
}

/// Writes a fabric; without `format`, chooses from the file name.
#[pyfunction]
#[pyo3(signature = (fabric, path, format=None))]
pub(crate) fn write_fabric(
    py: Python<'_>,
    fabric: &PyFabric,
    path: PathBuf,
    format: Option<&str>,
) -> PyResult<()> {
    let format = parse_optional(format)?;
    Ok(detached(py, || {
        fabric_formats::write_fabric(&fabric.inner, &path, format)
    })?)
}

/// Parses a fabric from bytes; `file` names the source in error messages.
#[pyfunction]
#[pyo3(signature = (data, format, file="<input>"))]
pub(crate) fn parse_fabric(
    py: Python<'_>,
    data: &[u8],
    format: &str,
    file: &str,
) -> PyResult<PyFabric> {
    let format = parse_format(format)?;
    Ok(detached(py, || fabric_formats::parse_fabric(data, file, format))?.into())
}

/// Serialises a fabric to bytes.
#[pyfunction]
pub(crate) fn render_fabric<'py>(
    py: Python<'py>,
    fabric: &PyFabric,
    format: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let format = parse_format(format)?;
    let bytes = detached(py, || fabric_formats::render_fabric(&fabric.inner, format))?;
    Ok(PyBytes::new(py, &bytes))
}
