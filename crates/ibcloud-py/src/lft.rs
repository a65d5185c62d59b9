//! Forwarding tables and the OpenSM files that carry them: `opensm-lfts.dump`
//! (tables) and `guid2lid` (LIDs).

use crate::error::{detached, PyIbcloudErr};
use crate::exceptions;
use crate::fabric::PyFabric;
use crate::lids::to_guid2lid;
use ibcloud_fabric::formats::{guid2lid, lfts_dump, write_atomic_with};
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Fabric, FabricError, Guid, Lid, NodeId};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Linear forwarding tables of every switch, bound to a snapshot of the fabric
/// they were made for (switches are named by node GUID).
#[pyclass(name = "ForwardingTables", module = "ibcloud._native")]
#[derive(Clone, Debug)]
pub struct PyForwardingTables {
    pub(crate) inner: ForwardingTables,
    pub(crate) fabric: Fabric,
}

impl PyForwardingTables {
    fn switch(&self, guid: u64) -> PyResult<NodeId> {
        self.fabric
            .node_by_guid(Guid(guid))
            .filter(|&id| self.fabric.node(id).is_switch())
            .ok_or_else(|| {
                exceptions::TopologyError::new_err(format!("no switch with GUID {}", Guid(guid)))
            })
    }
}

#[pymethods]
impl PyForwardingTables {
    /// Empty tables (every entry unset) for `fabric`.
    #[new]
    fn new(fabric: &PyFabric) -> Self {
        Self {
            inner: ForwardingTables::new(&fabric.inner),
            fabric: fabric.inner.clone(),
        }
    }

    /// Number of switches with a table.
    #[getter]
    fn num_switches(&self) -> usize {
        self.inner.iter().count()
    }

    /// Output port of switch `switch_guid` for `lid`, or None if unset.
    fn get(&self, switch_guid: u64, lid: u16) -> PyResult<Option<u8>> {
        Ok(self.inner.get(self.switch(switch_guid)?, Lid(lid)))
    }

    /// Sets one entry; the port must exist on the switch.
    fn set(&mut self, switch_guid: u64, lid: u16, port: u8) -> PyResult<()> {
        let id = self.switch(switch_guid)?;
        let num_ports = self.fabric.node(id).num_ports;
        if port > num_ports {
            return Err(exceptions::TopologyError::new_err(format!(
                "port {port} does not exist on switch {}, which has {num_ports} ports",
                Guid(switch_guid)
            )));
        }
        if !self.inner.set(id, Lid(lid), port) {
            return Err(exceptions::LidError::new_err(format!(
                "LID {lid} is not a unicast LID"
            )));
        }
        Ok(())
    }

    /// Entries a complete routing needs but these tables lack: every CA and
    /// router LID (and switch LID with `switch_lids`), on every switch, without a port.
    #[pyo3(signature = (switch_lids=false))]
    fn unrouted(&self, switch_lids: bool) -> usize {
        self.inner.unrouted(&self.fabric, switch_lids)
    }

    /// Every set entry as columns `switch_guid`, `lid`, `port`.
    fn entries<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (mut sw, mut lids, mut ports) = (Vec::new(), Vec::new(), Vec::<u16>::new());
        for (id, table) in self.inner.iter() {
            let guid = self.fabric.node(id).guid.0;
            for (lid, &port) in table
                .iter()
                .enumerate()
                .filter(|(_, &p)| p != ibcloud_fabric::lft::NO_PORT)
            {
                sw.push(guid);
                lids.push(lid as u16);
                ports.push(port.into());
            }
        }
        let d = PyDict::new(py);
        d.set_item("switch_guid", sw)?;
        d.set_item("lid", lids)?;
        d.set_item("port", ports)?;
        Ok(d)
    }

    /// 64-LID blocks that differ from `other` on switch `switch_guid` (the SMPs
    /// of a differential update).
    fn changed_blocks(&self, other: &PyForwardingTables, switch_guid: u64) -> PyResult<Vec<usize>> {
        Ok(self
            .inner
            .changed_blocks(&other.inner, self.switch(switch_guid)?))
    }

    /// Per switch that differs from `other` (same fabric): (switch GUID,
    /// description, differing entries, differing 64-LID blocks), in fabric order.
    fn differences(
        &self,
        other: &PyForwardingTables,
    ) -> PyResult<Vec<(u64, String, usize, usize)>> {
        if self.fabric.topology_difference(&other.fabric).is_some()
            || self.fabric.num_nodes() != other.inner.num_nodes()
        {
            return Err(exceptions::TopologyError::new_err(
                "the tables belong to different fabrics",
            ));
        }
        Ok(self
            .fabric
            .switches()
            .filter_map(|sw| {
                let entries = self.inner.changed_entries(&other.inner, sw);
                (entries > 0).then(|| {
                    let node = self.fabric.node(sw);
                    (
                        node.guid.0,
                        node.description.clone(),
                        entries,
                        self.inner.changed_blocks(&other.inner, sw).len(),
                    )
                })
            })
            .collect())
    }

    /// Writes the tables in OpenSM's `opensm-lfts.dump` layout (loadable with
    /// `opensm -R file -U PATH`).
    fn write_opensm(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let (inner, fabric) = (&self.inner, &self.fabric);
        Ok(detached(py, || -> Result<(), FabricError> {
            // Streamed into a temporary file, renamed when complete: memory
            // does not grow with the fabric, and an interrupted write never
            // leaves a truncated dump in place of a good one.
            write_atomic_with(&path, |mut w| lfts_dump::write(fabric, inner, &mut w))
        })?)
    }

    fn __eq__(&self, other: &PyForwardingTables) -> bool {
        self.inner == other.inner && self.fabric == other.fabric
    }

    fn __repr__(&self) -> String {
        format!(
            "ForwardingTables(switches={}, lids={})",
            self.num_switches(),
            self.fabric.max_lid()
        )
    }
}

fn read_text(path: &PathBuf) -> Result<String, PyIbcloudErr> {
    ibcloud_fabric::formats::read_text(std::path::Path::new(path)).map_err(Into::into)
}

/// Reads `opensm-lfts.dump` for `fabric` (switches matched by GUID; the dump's
/// LIDs must agree with the fabric's). With `keep_missing_ports`, entries
/// naming a port the switch does not have are kept (verification reports
/// them as failed routes) instead of refused.
#[pyfunction]
#[pyo3(signature = (path, fabric, keep_missing_ports = false))]
pub(crate) fn read_lfts(
    py: Python<'_>,
    path: PathBuf,
    fabric: &PyFabric,
    keep_missing_ports: bool,
) -> PyResult<PyForwardingTables> {
    let missing = if keep_missing_ports {
        lfts_dump::MissingPorts::Keep
    } else {
        lfts_dump::MissingPorts::Refuse
    };
    let f = &fabric.inner;
    let inner = detached(py, || -> Result<ForwardingTables, PyIbcloudErr> {
        // Streamed: memory is the tables, not the (possibly GB-sized) file.
        let file = std::fs::File::open(&path).map_err(|e| FabricError::io(&path, e))?;
        let reader = std::io::BufReader::with_capacity(1 << 20, file);
        Ok(lfts_dump::read_tables_with(
            reader,
            &path.display().to_string(),
            f,
            missing,
        )?)
    })?;
    Ok(PyForwardingTables {
        inner,
        fabric: f.clone(),
    })
}

/// Reads OpenSM's `guid2lid` cache: port GUID → (first LID, last LID).
#[pyfunction]
pub(crate) fn read_guid2lid(py: Python<'_>, path: PathBuf) -> PyResult<BTreeMap<u64, (u16, u16)>> {
    let map = detached(py, || -> Result<_, PyIbcloudErr> {
        let text = read_text(&path)?;
        Ok(guid2lid::parse(&text, &path.display().to_string())?)
    })?;
    Ok(map
        .into_iter()
        .map(|(g, (lo, hi))| (g.0, (lo.0, hi.0)))
        .collect())
}

/// Writes a guid2lid map in OpenSM's format.
#[pyfunction]
pub(crate) fn write_guid2lid(
    py: Python<'_>,
    map: BTreeMap<u64, (u16, u16)>,
    path: PathBuf,
) -> PyResult<()> {
    let map = to_guid2lid(map);
    Ok(detached(py, || -> Result<(), FabricError> {
        write_atomic_with(&path, |mut w| guid2lid::write(&map, &mut w))
    })?)
}
