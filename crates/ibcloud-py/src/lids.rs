//! LID assignment of `ibcloud-fabric`.

use crate::error::detached;
use crate::exceptions;
use crate::fabric::PyFabric;
use ibcloud_fabric::lids::{self, LidOptions, LidPolicy};
use ibcloud_fabric::{Fabric, Guid, PortRef};
use pyo3::prelude::*;
use std::collections::BTreeMap;

fn port_by_guid(fabric: &Fabric, guid: u64) -> Option<PortRef> {
    fabric.iter_nodes().find_map(|(id, _)| {
        let p = fabric.ports(id).iter().position(|port| port.guid == Guid(guid))?;
        Some(PortRef::new(id, p as u8))
    })
}

/// Reassigns every LID in place. `policy` is `packed` (fabric order from LID
/// 1) or `opensm` (OpenSM 3.3's order on a fresh subnet, the SM's port
/// `sm_port_guid` first); `lmc` (0-7) gives each CA and router port 2^lmc
/// LIDs, and switch port 0 too with `lmc_esp0`.
#[pyfunction]
#[pyo3(signature = (fabric, policy="packed", lmc=0, lmc_esp0=false, sm_port_guid=None))]
pub(crate) fn assign_lids(
    py: Python<'_>,
    fabric: &mut PyFabric,
    policy: &str,
    lmc: u8,
    lmc_esp0: bool,
    sm_port_guid: Option<u64>,
) -> PyResult<()> {
    let sm_port = match sm_port_guid {
        None => None,
        Some(guid) => Some(port_by_guid(&fabric.inner, guid).ok_or_else(|| {
            exceptions::LidError::new_err(format!("no port with GUID {} to run the SM on", Guid(guid)))
        })?),
    };
    let policy = match policy.to_ascii_lowercase().as_str() {
        "packed" if sm_port.is_none() => LidPolicy::Packed,
        "packed" => return Err(exceptions::LidError::new_err("sm_port_guid only applies to the opensm policy")),
        "opensm" => LidPolicy::OpenSm { sm_port },
        other => {
            return Err(exceptions::LidError::new_err(format!(
                "unknown LID policy '{other}' (expected packed or opensm)"
            )))
        }
    };
    let options = LidOptions { policy, lmc, lmc_esp0 };
    Ok(detached(py, || lids::assign_lids(&mut fabric.inner, &options))?)
}

/// The fabric's LIDs as OpenSM's guid2lid cache holds them:
/// port GUID → (first LID, last LID).
#[pyfunction]
pub(crate) fn guid2lid_of(fabric: &PyFabric) -> BTreeMap<u64, (u16, u16)> {
    lids::guid2lid_of(&fabric.inner).into_iter().map(|(g, (lo, hi))| (g.0, (lo.0, hi.0))).collect()
}
