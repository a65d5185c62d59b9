//! Topology generators of `ibcloud-fabric`: fat-tree parameters (XGFT, PGFT,
//! k-ary-n-trees), the named presets and seeded fault injection.

use crate::error::{detached, guarded, PyIbcloudErr};
use crate::fabric::PyFabric;
use ibcloud_fabric::generate::{self, FatTreeParams, FaultSpec};
use ibcloud_fabric::{LinkRate, TopologyError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// Parameters of a PGFT (an XGFT when every p is 1), textbook notation:
/// level 0 holds the compute nodes, level h the roots. Every constructor
/// validates, so a value of this class always describes a buildable tree.
#[pyclass(name = "FatTreeParams", module = "ibcloud._native", frozen, eq)]
#[repr(transparent)]
#[derive(Clone, Debug, PartialEq)]
pub struct PyFatTreeParams {
    inner: FatTreeParams,
}

impl PyFatTreeParams {
    fn checked(inner: FatTreeParams) -> Result<Self, PyIbcloudErr> {
        guarded(|| inner.validate())?;
        Ok(Self { inner })
    }

    fn level(&self, i: usize) -> Result<usize, PyIbcloudErr> {
        if i > self.inner.h {
            return Err(TopologyError::InvalidParameters(format!(
                "level {i} is above the roots (h = {})",
                self.inner.h
            ))
            .into());
        }
        Ok(i)
    }
}

fn bad(msg: String) -> PyIbcloudErr {
    TopologyError::InvalidParameters(msg).into()
}

pub(crate) fn parse_rate(rate: &str) -> Result<LinkRate, PyIbcloudErr> {
    rate.parse().map_err(bad)
}

#[pymethods]
impl PyFatTreeParams {
    /// A preset name (`ft648`), `XGFT(h;m..;w..)`, `PGFT(h;m..;w..;p..)` or `K-ary-N`.
    #[staticmethod]
    fn parse(spec: &str) -> PyResult<Self> {
        Ok(Self::checked(guarded(|| generate::preset(spec))?)?)
    }

    /// XGFT(h; m; w), textbook order (m_1 = children of a leaf switch).
    #[staticmethod]
    fn xgft(m: Vec<u32>, w: Vec<u32>) -> PyResult<Self> {
        Ok(Self::checked(FatTreeParams::xgft(&m, &w))?)
    }

    /// PGFT(h; m; w; p), textbook order.
    #[staticmethod]
    fn pgft(m: Vec<u32>, w: Vec<u32>, p: Vec<u32>) -> PyResult<Self> {
        Ok(Self::checked(FatTreeParams::pgft(&m, &w, &p))?)
    }

    /// Paper V's roots-first notation XGFT(n; m1..mn; w1..wn).
    #[staticmethod]
    fn from_roots_first(m: Vec<u32>, w: Vec<u32>) -> PyResult<Self> {
        Ok(Self::checked(FatTreeParams::from_roots_first(&m, &w))?)
    }

    /// A k-ary-n-tree: k^n nodes, n·k^(n−1) switches of 2k ports.
    #[staticmethod]
    fn k_ary_n_tree(k: u32, n: usize) -> PyResult<Self> {
        if k == 0 || n == 0 || k > 127 {
            return Err(bad(format!(
                "{k}-ary-{n}-tree: k must be 1 to 127 and n at least 1"
            ))
            .into());
        }
        Ok(Self::checked(FatTreeParams::k_ary_n_tree(k, n))?)
    }

    /// The same tree on switches of `radix` ports.
    fn with_radix(&self, radix: u32) -> PyResult<Self> {
        Ok(Self::checked(self.inner.clone().with_radix(radix))?)
    }

    /// The same tree with every link at `rate` (`4xQDR`, `4xEDR`, …).
    fn with_rate(&self, rate: &str) -> PyResult<Self> {
        Ok(Self {
            inner: self.inner.clone().with_rate(parse_rate(rate)?),
        })
    }

    /// Switch levels.
    #[getter]
    fn h(&self) -> usize {
        self.inner.h
    }

    /// m_1..m_h: children of a level-i node.
    #[getter]
    fn m(&self) -> Vec<u32> {
        self.inner.m.clone()
    }

    /// w_1..w_h: parents of a level-(i−1) node.
    #[getter]
    fn w(&self) -> Vec<u32> {
        self.inner.w.clone()
    }

    /// p_1..p_h: parallel links between connected nodes.
    #[getter]
    fn p(&self) -> Vec<u32> {
        self.inner.p.clone()
    }

    /// Switch radix, or None for exactly the ports in use.
    #[getter]
    fn radix(&self) -> Option<u32> {
        self.inner.radix
    }

    /// Link rate, spelled like `4xQDR`.
    #[getter]
    fn rate(&self) -> String {
        self.inner.rate.to_string()
    }

    /// Number of compute nodes.
    #[getter]
    fn num_compute_nodes(&self) -> u64 {
        self.inner.num_compute_nodes()
    }

    /// Number of switches.
    #[getter]
    fn num_switches(&self) -> u64 {
        self.inner.num_switches()
    }

    /// Nodes at level `i` (0 = compute nodes, h = roots).
    fn nodes_at_level(&self, i: usize) -> PyResult<u64> {
        Ok(self.inner.nodes_at_level(self.level(i)?))
    }

    /// Ports used by a level-`i` node.
    fn ports_used(&self, i: usize) -> PyResult<u32> {
        Ok(self.inner.ports_used(self.level(i)?))
    }

    /// Builds the fabric, with packed LIDs (CAs first).
    fn build(&self, py: Python<'_>) -> PyResult<PyFabric> {
        Ok(detached(py, || self.inner.build())?.into())
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        let radix = self
            .inner
            .radix
            .map_or("None".to_owned(), |r| r.to_string());
        format!(
            "FatTreeParams('{}', radix={radix}, rate='{}')",
            self.inner, self.inner.rate
        )
    }
}

/// Every named fabric: name, source, spec, cas, switches, radix.
#[pyfunction]
pub(crate) fn presets(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for p in generate::presets() {
        let d = PyDict::new(py);
        d.set_item("name", p.name)?;
        d.set_item("source", p.source)?;
        d.set_item("spec", p.params.to_string())?;
        d.set_item("cas", p.params.num_compute_nodes())?;
        d.set_item("switches", p.params.num_switches())?;
        d.set_item("radix", p.params.radix)?;
        list.append(d)?;
    }
    Ok(list)
}

/// A copy of `fabric` without `switches` random switches and then `links`
/// random switch-to-switch links, drawn with `seed`; and what was removed:
/// `{"switches": [guid, ...], "links": [(guid, port, guid, port), ...]}`.
#[pyfunction]
#[pyo3(signature = (fabric, links=0, switches=0, seed=0))]
pub(crate) fn inject_faults<'py>(
    py: Python<'py>,
    fabric: &PyFabric,
    links: usize,
    switches: usize,
    seed: u64,
) -> PyResult<(PyFabric, Bound<'py, PyDict>)> {
    let spec = FaultSpec {
        links,
        switches,
        seed,
    };
    let (broken, report) = detached(py, || generate::inject_faults(&fabric.inner, spec))?;
    let d = PyDict::new(py);
    d.set_item(
        "switches",
        report.switches.iter().map(|g| g.0).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "links",
        report
            .links
            .iter()
            .map(|&(a, pa, b, pb)| (a.0, pa, b.0, pb))
            .collect::<Vec<_>>(),
    )?;
    Ok((broken.into(), d))
}
