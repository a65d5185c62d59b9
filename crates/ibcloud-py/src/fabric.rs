//! `Fabric`: the subnet model of `ibcloud-fabric` (nodes, ports, links, LIDs)
//! with its queries, as columns ready for a DataFrame.

use ibcloud_fabric::{Fabric, NodeKind};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// An InfiniBand subnet: switches, channel adapters and routers, their ports,
/// LIDs and links. Build one with `FatTreeParams.build()` or `read_fabric()`.
#[pyclass(name = "Fabric", module = "ibcloud._native")]
#[repr(transparent)]
#[derive(Clone, Debug)]
pub struct PyFabric {
    pub(crate) inner: Fabric,
}

impl From<Fabric> for PyFabric {
    fn from(inner: Fabric) -> Self {
        Self { inner }
    }
}

#[pymethods]
impl PyFabric {
    /// Number of nodes of every kind.
    #[getter]
    fn num_nodes(&self) -> usize {
        self.inner.num_nodes()
    }

    /// Number of switches.
    #[getter]
    fn num_switches(&self) -> usize {
        self.inner.count(NodeKind::Switch)
    }

    /// Number of channel adapters.
    #[getter]
    fn num_cas(&self) -> usize {
        self.inner.count(NodeKind::Ca)
    }

    /// Number of routers.
    #[getter]
    fn num_routers(&self) -> usize {
        self.inner.count(NodeKind::Router)
    }

    /// Number of links.
    #[getter]
    fn num_links(&self) -> usize {
        self.inner.num_links()
    }

    /// Highest LID in use (LMC ranges counted in full), 0 without LIDs.
    #[getter]
    fn max_lid(&self) -> u16 {
        self.inner.max_lid()
    }

    /// LIDs in use, each LMC range counted in full.
    #[getter]
    fn lids_in_use(&self) -> usize {
        self.inner.lids_in_use()
    }

    /// LFT blocks each switch needs: floor(max_lid / 64) + 1.
    #[getter]
    fn lft_blocks(&self) -> usize {
        self.inner.lft_blocks()
    }

    /// True when every switch carries an OpenSM rank.
    #[getter]
    fn ranked(&self) -> bool {
        self.inner
            .nodes()
            .iter()
            .all(|n| !n.is_switch() || n.rank.is_some())
    }

    /// Sets OpenSM-style ranks (roots 0, leaves highest) on every switch from
    /// the topology, as OpenSM's fat-tree ranking does.
    fn infer_ranks(&mut self) {
        self.inner.infer_ranks();
    }

    /// Removes every LID (as on a subnet no SM has configured yet).
    fn clear_lids(&mut self) {
        self.inner.clear_lids();
    }

    /// The nodes as columns: id, kind, guid, description, num_ports, rank, lid.
    fn node_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = &self.inner;
        let nodes = f.nodes();
        let cols = PyDict::new(py);
        cols.set_item("id", f.iter_nodes().map(|(id, _)| id.0).collect::<Vec<_>>())?;
        cols.set_item(
            "kind",
            nodes.iter().map(|n| n.kind.as_str()).collect::<Vec<_>>(),
        )?;
        cols.set_item("guid", nodes.iter().map(|n| n.guid.0).collect::<Vec<_>>())?;
        cols.set_item(
            "description",
            nodes
                .iter()
                .map(|n| n.description.as_str())
                .collect::<Vec<_>>(),
        )?;
        // Vec<u8> would become `bytes` in Python: widen port numbers.
        cols.set_item(
            "num_ports",
            nodes
                .iter()
                .map(|n| u32::from(n.num_ports))
                .collect::<Vec<_>>(),
        )?;
        cols.set_item("rank", nodes.iter().map(|n| n.rank).collect::<Vec<_>>())?;
        cols.set_item(
            "lid",
            f.iter_nodes()
                .map(|(id, _)| f.node_lid(id).0)
                .collect::<Vec<_>>(),
        )?;
        Ok(cols)
    }

    /// The links as columns: node_a, port_a, node_b, port_b, rate (`4xQDR`).
    fn link_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = &self.inner;
        let links: Vec<_> = f.links().collect();
        let cols = PyDict::new(py);
        cols.set_item(
            "node_a",
            links.iter().map(|l| l.a.node.0).collect::<Vec<_>>(),
        )?;
        cols.set_item(
            "port_a",
            links
                .iter()
                .map(|l| u32::from(l.a.port))
                .collect::<Vec<_>>(),
        )?;
        cols.set_item(
            "node_b",
            links.iter().map(|l| l.b.node.0).collect::<Vec<_>>(),
        )?;
        cols.set_item(
            "port_b",
            links
                .iter()
                .map(|l| u32::from(l.b.port))
                .collect::<Vec<_>>(),
        )?;
        let rate =
            |l: &ibcloud_fabric::Link| f.port(l.a).map(|p| p.rate.to_string()).unwrap_or_default();
        cols.set_item("rate", links.iter().map(rate).collect::<Vec<_>>())?;
        Ok(cols)
    }

    /// An independent copy.
    fn copy(&self) -> Self {
        self.clone()
    }

    /// The first difference a discovery tool could see between two fabrics
    /// (node GUIDs, kinds, port counts, links), or None when they agree.
    fn topology_difference(&self, other: &PyFabric) -> Option<String> {
        self.inner.topology_difference(&other.inner)
    }

    fn __eq__(&self, other: &PyFabric) -> bool {
        self.inner == other.inner
    }

    fn __repr__(&self) -> String {
        format!(
            "Fabric(cas={}, switches={}, routers={}, links={}, max_lid={})",
            self.num_cas(),
            self.num_switches(),
            self.num_routers(),
            self.num_links(),
            self.max_lid()
        )
    }
}
