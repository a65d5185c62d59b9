//! LID assignment of `ibcloud-fabric`.

use crate::error::detached;
use crate::exceptions;
use crate::fabric::PyFabric;
use ibcloud_fabric::lids::{self, Guid2Lid, LidOptions, LidPolicy};
use ibcloud_fabric::{Guid, Lid};
use pyo3::prelude::*;
use std::collections::BTreeMap;

/// A guid2lid map from Python: port GUID → (first LID, last LID).
pub(crate) fn to_guid2lid(map: BTreeMap<u64, (u16, u16)>) -> Guid2Lid {
    map.into_iter()
        .map(|(g, (lo, hi))| (Guid(g), (Lid(lo), Lid(hi))))
        .collect()
}

/// Reassigns every LID in place. `policy` is `packed` (fabric order from LID
/// 1), `opensm` (OpenSM 3.3's order on a fresh subnet, the SM's port
/// `sm_port_guid` first) or `guid2lid` (the LIDs of `guid2lid`, a map port
/// GUID → (first, last), as OpenSM honours its cache; other ports get free
/// LIDs in OpenSM's order); `lmc` (0-7) gives each CA and router port 2^lmc
/// LIDs, and switch port 0 too with `lmc_esp0`.
#[pyfunction]
#[pyo3(signature = (fabric, policy="packed", lmc=0, lmc_esp0=false, sm_port_guid=None, guid2lid=None))]
pub(crate) fn assign_lids(
    py: Python<'_>,
    fabric: &mut PyFabric,
    policy: &str,
    lmc: u8,
    lmc_esp0: bool,
    sm_port_guid: Option<u64>,
    guid2lid: Option<BTreeMap<u64, (u16, u16)>>,
) -> PyResult<()> {
    let sm_port = match sm_port_guid {
        None => None,
        Some(guid) => Some(fabric.inner.port_by_guid(Guid(guid)).ok_or_else(|| {
            exceptions::LidError::new_err(format!(
                "no port with GUID {} to run the SM on",
                Guid(guid)
            ))
        })?),
    };
    let policy = match policy.to_ascii_lowercase().as_str() {
        "packed" if sm_port.is_none() => LidPolicy::Packed,
        "packed" => {
            return Err(exceptions::LidError::new_err(
                "sm_port_guid only applies to the opensm policy",
            ))
        }
        "opensm" if guid2lid.is_none() => LidPolicy::OpenSm { sm_port },
        "guid2lid" => match guid2lid {
            Some(map) => LidPolicy::Guid2Lid {
                map: to_guid2lid(map),
                sm_port,
            },
            None => {
                return Err(exceptions::LidError::new_err(
                    "the guid2lid policy needs a guid2lid map",
                ))
            }
        },
        "opensm" => {
            return Err(exceptions::LidError::new_err(
                "a guid2lid map needs policy='guid2lid'",
            ))
        }
        other => {
            return Err(exceptions::LidError::new_err(format!(
                "unknown LID policy '{other}' (expected packed, opensm or guid2lid)"
            )))
        }
    };
    let options = LidOptions {
        policy,
        lmc,
        lmc_esp0,
    };
    Ok(detached(py, || {
        lids::assign_lids(&mut fabric.inner, &options)
    })?)
}

/// The fabric's LIDs as OpenSM's guid2lid cache holds them:
/// port GUID → (first LID, last LID).
#[pyfunction]
pub(crate) fn guid2lid_of(fabric: &PyFabric) -> BTreeMap<u64, (u16, u16)> {
    lids::guid2lid_of(&fabric.inner)
        .into_iter()
        .map(|(g, (lo, hi))| (g.0, (lo.0, hi.0)))
        .collect()
}
