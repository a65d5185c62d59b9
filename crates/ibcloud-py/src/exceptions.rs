//! The Python exception classes, one per error category of the core, all
//! rooted at `IbcloudError` and exposed as `ibcloud.exceptions`.

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

pyo3::create_exception!(
    ibcloud.exceptions,
    IbcloudError,
    PyException,
    "Base class of every error ibcloud raises (besides OSError for file access)."
);
pyo3::create_exception!(
    ibcloud.exceptions,
    TopologyError,
    IbcloudError,
    "An inconsistent topology or generator parameters that describe no valid tree."
);
pyo3::create_exception!(
    ibcloud.exceptions,
    LidError,
    IbcloudError,
    "A LID assignment that cannot be made or LID data that is inconsistent."
);
pyo3::create_exception!(
    ibcloud.exceptions,
    UnsupportedError,
    IbcloudError,
    "A format that cannot do what was asked (unknown name, read-only, binary as text)."
);
pyo3::create_exception!(
    ibcloud.exceptions,
    RoutingError,
    IbcloudError,
    "A fabric an engine cannot route (e.g. ftree on a non-fat-tree), an unknown engine or bad engine options."
);
pyo3::create_exception!(
    ibcloud.exceptions,
    AnalysisError,
    IbcloudError,
    "Inputs a congestion analysis cannot run on: a pattern that needs another node count, unknown endpoints, bad options."
);
pyo3::create_exception!(
    ibcloud.exceptions,
    InternalError,
    IbcloudError,
    "A bug in ibcloud: the Rust core panicked. Please report it with the input that caused it."
);

pyo3::create_exception!(
    ibcloud.exceptions,
    ReconfigError,
    IbcloudError,
    "A fabric event or reconfiguration that cannot be done: an unknown node or link, an event that does not apply, a sub-tree of a non-fat-tree, a bad node order."
);

static PARSE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `ParseError(IbcloudError, ValueError)`: malformed file content, reported as
/// `file:line: problem`. `create_exception!` takes a single base, so this one
/// is made by calling `type()` with both.
pub(crate) fn parse_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    let ty = PARSE_ERROR.get_or_try_init(py, || -> PyResult<Py<PyType>> {
        let bases = PyTuple::new(
            py,
            [py.get_type::<IbcloudError>(), py.get_type::<PyValueError>()],
        )?;
        let dict = PyDict::new(py);
        dict.set_item("__module__", "ibcloud.exceptions")?;
        dict.set_item(
            "__doc__",
            "Malformed or inconsistent file content, reported as `file:line: problem`.",
        )?;
        let ty = py.get_type::<PyType>().call1(("ParseError", bases, dict))?;
        Ok(ty.cast_into::<PyType>()?.unbind())
    })?;
    Ok(ty.bind(py))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("IbcloudError", py.get_type::<IbcloudError>())?;
    m.add("TopologyError", py.get_type::<TopologyError>())?;
    m.add("LidError", py.get_type::<LidError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add("RoutingError", py.get_type::<RoutingError>())?;
    m.add("AnalysisError", py.get_type::<AnalysisError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add("ParseError", parse_error(py)?)?;
    m.add("ReconfigError", py.get_type::<ReconfigError>())?;
    Ok(())
}

pyo3::create_exception!(
    ibcloud.exceptions,
    SimulationError,
    IbcloudError,
    "A simulation that cannot start (bad traffic, configuration or events) or that stopped (credit deadlock, budget)."
);

pyo3::create_exception!(
    ibcloud.exceptions,
    VSwitchError,
    IbcloudError,
    "A vSwitch operation refused: unknown VM or hypervisor, no free VF, LID space exhausted, FTreeMinRC on a non-fat-tree. The virtual fabric is left unchanged."
);
pyo3::create_exception!(
    ibcloud.exceptions,
    SaError,
    IbcloudError,
    "Subnet administration: a malformed or truncated MAD or PathRecord, a LID no port owns, or a pair the forwarding tables do not connect."
);
