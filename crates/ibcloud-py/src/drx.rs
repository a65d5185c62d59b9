//! DRX's pure pieces (`ibcloud_control::drx`): Algorithm 4 and DCCR. The
//! control plane itself runs inside `host_run` (`kind = "drx"`).

use ibcloud_control::drx::placement::{OwnVme, Placement};
use ibcloud_control::drx::sim::layout;
use ibcloud_control::drx::workload::{
    configure, Capacity, Comparison, ConfiguratorOptions, Eviction, Priority, Workload,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Adds the functions of this file to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(drx_configure, m)?)?;
    m.add_function(wrap_pyfunction!(drx_dccr, m)?)?;
    Ok(())
}

fn pick<T: Copy>(key: &str, got: &str, options: &[(&str, T)]) -> PyResult<T> {
    options
        .iter()
        .find(|(n, _)| *n == got)
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
            PyValueError::new_err(format!(
                "{key}: expected one of {}, got '{got}'",
                names.join(", ")
            ))
        })
}

/// One workload as Python passes it: (name, g, io_min, alpha, priority,
/// links). Numbers cross as floats, NaN included, so the core's checks
/// name the workload.
type WorkloadTuple = (String, f64, f64, f64, String, Vec<usize>);

/// Algorithm 4 on `workloads` over `links` (CQEs/s). Returns the
/// configuration as JSON (indices).
#[pyfunction]
fn drx_configure(
    workloads: Vec<WorkloadTuple>,
    links: Vec<f64>,
    eviction: &str,
    comparison: &str,
    capacity: &str,
) -> PyResult<String> {
    let ws = workloads
        .into_iter()
        .map(|(name, g, io_min, alpha, priority, links)| {
            let priority = pick(
                &format!("workload '{name}': priority"),
                &priority,
                &[("high", Priority::High), ("low", Priority::Low)],
            )?;
            Ok(Workload {
                name,
                g,
                io_min,
                alpha,
                priority,
                links,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let opts = ConfiguratorOptions {
        eviction: pick(
            "eviction",
            eviction,
            &[
                ("as-written", Eviction::AsWritten),
                ("repaired", Eviction::Repaired),
            ],
        )?,
        comparison: pick(
            "comparison",
            comparison,
            &[
                ("algorithm", Comparison::Algorithm),
                ("strict", Comparison::Strict),
            ],
        )?,
        capacity: pick(
            "capacity",
            capacity,
            &[("sum", Capacity::Sum), ("per-link", Capacity::PerLink)],
        )?,
    };
    let c = configure(&ws, &links, opts).map_err(PyValueError::new_err)?;
    serde_json::to_string(&c).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// DCCR (Eq. 3) of VM `vm`: `vms` = (VM, host) pairs, `vmes` = (VME, VMs).
/// Returns the VME names in the order of `vmes`.
#[pyfunction]
fn drx_dccr(
    vm: &str,
    vms: Vec<(String, String)>,
    vmes: Vec<(String, Vec<String>)>,
    include_own: bool,
) -> PyResult<Vec<String>> {
    let (hosts, placed) = layout(vms.iter().map(|(v, h)| (v.as_str(), h.as_str())));
    let index = |n: &str| placed.iter().position(|(m, _)| m == n);
    let groups = vmes
        .into_iter()
        .map(|(name, members)| {
            let idx = members
                .iter()
                .map(|m| {
                    index(m).ok_or_else(|| {
                        PyValueError::new_err(format!("VME '{name}': unknown VM '{m}'"))
                    })
                })
                .collect::<PyResult<Vec<_>>>()?;
            Ok((name, idx))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let p = Placement::new(hosts, placed, groups).map_err(PyValueError::new_err)?;
    let x = p
        .vm_names
        .iter()
        .position(|n| n == vm)
        .ok_or_else(|| PyValueError::new_err(format!("unknown VM '{vm}'")))?;
    let own = if include_own {
        OwnVme::Include
    } else {
        OwnVme::Exclude
    };
    Ok(p.dccr(x, own)
        .into_iter()
        .map(|j| p.vmes[j].name.clone())
        .collect())
}
