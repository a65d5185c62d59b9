//! `ibcloud-vswitch`: virtual fabrics with SR-IOV vSwitches, migrations,
//! capacity and the migration simulator. Results cross as JSON strings (the
//! Python layer turns them into dicts and DataFrames); errors become
//! `VSwitchError` (routing and analysis errors keep their own classes).

use std::time::Instant;

use crate::error::{guarded, PyIbcloudErr};
use crate::exceptions as exc;
use crate::fabric::PyFabric;
use crate::lft::PyForwardingTables;
use ibcloud_fabric::Fabric;
use ibcloud_vswitch::capacity::{Capacity, CapacityInput};
use ibcloud_vswitch::marking::TreeInfo;
use ibcloud_vswitch::safety::{reachability, transition};
use ibcloud_vswitch::sim::{simulate, BisectEndpoints, MigrationPattern, Placement, SimConfig};
use ibcloud_vswitch::timing::SmpTiming;
use ibcloud_vswitch::{Method, Scheme, VSwitchError, VirtualFabric};
use pyo3::prelude::*;
use serde_json::json;

/// Adds the classes and functions of this file to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("VSwitchError", m.py().get_type::<exc::VSwitchError>())?;
    m.add_class::<PyVirtualFabric>()?;
    m.add_function(wrap_pyfunction!(vswitch_capacity, m)?)?;
    m.add_function(wrap_pyfunction!(vswitch_simulate, m)?)?;
    m.add_function(wrap_pyfunction!(vswitch_worst_marking, m)?)?;
    m.add_function(wrap_pyfunction!(vswitch_smp_time, m)?)?;
    Ok(())
}

fn err(e: VSwitchError) -> PyErr {
    match e {
        VSwitchError::Routing(r) => PyIbcloudErr::from(r).into(),
        VSwitchError::Analysis(a) => PyIbcloudErr::from(a).into(),
        other => exc::VSwitchError::new_err(other.to_string()),
    }
}

/// Runs core work with the GIL released; a panic becomes `InternalError`.
fn run<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> Result<T, VSwitchError> + Send,
) -> PyResult<T> {
    py.detach(|| guarded(|| Ok::<_, PyIbcloudErr>(work())))
        .map_err(PyErr::from)?
        .map_err(err)
}

/// A virtualized subnet: hypervisors with vSwitches, VMs, current tables.
#[pyclass(name = "VirtualFabric", module = "ibcloud._native")]
#[derive(Debug)]
pub struct PyVirtualFabric {
    inner: VirtualFabric,
}

fn hyp_json(vf: &VirtualFabric) -> serde_json::Value {
    let f = vf.fabric();
    serde_json::Value::Array(
        vf.hypervisors()
            .iter()
            .enumerate()
            .map(|(i, h)| {
                json!({
                    "index": i, "name": h.name, "pf_lid": h.pf_lid.0, "vswitch_lid": h.vswitch_lid.0,
                    "leaf": f.node(h.leaf).description, "leaf_port": h.leaf_port,
                    "vfs": h.vfs.len(), "running": h.running(),
                    "vf_lids": h.vfs.iter().map(|v| v.lid.0).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

#[pymethods]
impl PyVirtualFabric {
    /// Virtualizes a physical fabric: every CA becomes a hypervisor with `vfs` VFs.
    #[staticmethod]
    fn virtualize(py: Python<'_>, physical: &PyFabric, vfs: u32, scheme: &str) -> PyResult<Self> {
        let scheme = Scheme::parse(scheme).map_err(err)?;
        let p = physical.inner.clone();
        run(py, move || VirtualFabric::virtualize(&p, vfs, scheme)).map(|inner| Self { inner })
    }

    /// Reads the virtual fabric of a fabric with vSwitches.
    #[staticmethod]
    fn from_fabric(py: Python<'_>, fabric: &PyFabric, scheme: &str) -> PyResult<Self> {
        let scheme = Scheme::parse(scheme).map_err(err)?;
        let f = fabric.inner.clone();
        run(py, move || VirtualFabric::from_fabric(f, scheme)).map(|inner| Self { inner })
    }

    /// The fabric as it is now (VF LIDs, VM names in VF descriptions).
    fn fabric(&self) -> PyFabric {
        PyFabric::from(self.inner.fabric().clone())
    }

    /// The current tables.
    fn tables(&self) -> PyForwardingTables {
        PyForwardingTables {
            inner: self.inner.tables().clone(),
            fabric: self.inner.fabric().clone(),
        }
    }

    /// Replaces the tables.
    fn set_tables(&mut self, tables: &PyForwardingTables) -> PyResult<()> {
        self.inner.set_tables(tables.inner.clone()).map_err(err)
    }

    /// The scheme name.
    #[getter]
    fn scheme(&self) -> &'static str {
        self.inner.scheme().name()
    }

    /// Hypervisors as JSON.
    fn hypervisors_json(&self) -> String {
        hyp_json(&self.inner).to_string()
    }

    /// VMs as JSON.
    fn vms_json(&self) -> String {
        let h = self.inner.hypervisors();
        serde_json::Value::Array(
            self.inner
                .vms()
                .map(|v| {
                    json!({"name": v.name, "lid": v.lid.0, "vguid": format!("0x{:016x}", v.vguid.0),
                           "gid": format!("{:032x}", v.gid()), "hypervisor": h[v.hypervisor].name,
                           "hypervisor_index": v.hypervisor, "vf": v.vf})
                })
                .collect(),
        )
        .to_string()
    }

    /// Boots a VM; returns the boot report as JSON.
    fn boot_vm(&mut self, py: Python<'_>, name: &str, hypervisor: &str) -> PyResult<String> {
        let h = self.inner.find_hypervisor(hypervisor).map_err(err)?;
        let inner = &mut self.inner;
        let r = run(py, move || inner.boot_vm(name, h))?;
        Ok(serde_json::to_string(&r).unwrap_or_default())
    }

    /// Shuts a VM down; returns the switch SMPs it cost.
    fn shutdown_vm(&mut self, vm: &str) -> PyResult<usize> {
        let i = self.inner.find_vm(vm).map_err(err)?;
        self.inner.shutdown_vm(i).map_err(err)
    }

    /// Routes the placement afresh with vswitch-ftree.
    fn reroute(&mut self, py: Python<'_>) -> PyResult<()> {
        let inner = &mut self.inner;
        run(py, move || inner.reroute())
    }

    /// Plans (and with `apply`, applies) a migration; returns a JSON report
    /// with the plan, SMP list, timing and safety verdicts.
    #[pyo3(signature = (vm, to, method, partially_static=false, apply=true, check=true))]
    #[allow(clippy::too_many_arguments)]
    fn migrate(
        &mut self,
        py: Python<'_>,
        vm: &str,
        to: &str,
        method: &str,
        partially_static: bool,
        apply: bool,
        check: bool,
    ) -> PyResult<String> {
        let method = Method::parse(method).map_err(err)?;
        let v = self.inner.find_vm(vm).map_err(err)?;
        let d = self.inner.find_hypervisor(to).map_err(err)?;
        let inner = &mut self.inner;
        run(py, move || {
            let t0 = Instant::now();
            let plan = inner.plan_migration(v, d, method, partially_static)?;
            let plan_us = t0.elapsed().as_secs_f64() * 1e6;
            let trans = check.then(|| transition(inner, &plan));
            let timing = SmpTiming::calibrated();
            let lft: Vec<_> = plan
                .smps
                .iter()
                .filter(|s| {
                    !matches!(
                        s.kind,
                        ibcloud_vswitch::SmpKind::SetLid
                            | ibcloud_vswitch::SmpKind::UnsetLid
                            | ibcloud_vswitch::SmpKind::SetVGuid
                    )
                })
                .cloned()
                .collect();
            let mut lids = vec![plan.vm_lid];
            lids.extend(plan.swapped_lid);
            let f = inner.fabric();
            let name = |n: ibcloud_fabric::NodeId| f.node(n).description.clone();
            let vm_name = inner.vm(v).map(|x| x.name.clone()).unwrap_or_default();
            let hyps = inner.hypervisors();
            let mut report = json!({
                "vm": vm_name, "lid": plan.vm_lid.0, "swapped_lid": plan.swapped_lid.map(|l| l.0),
                "from": hyps[plan.src].name, "to": hyps[plan.dst].name,
                "method": method.name(), "scheme": inner.scheme().name(), "partially_static": partially_static,
                "switch_smps": plan.switch_smps(), "hypervisor_smps": plan.hypervisor_smps(),
                "switches_updated": plan.updated.iter().map(|&n| name(n)).collect::<Vec<_>>(),
                "marked": plan.marked.iter().map(|&n| name(n)).collect::<Vec<_>>(),
                "active": plan.active.iter().map(|&n| name(n)).collect::<Vec<_>>(),
                "physical_switches": inner.physical_switches().len(),
                "full_distribution_smps": plan.full_distribution_smps,
                "path_computation_s": 0.0,
                "plan_us": plan_us,
                "predicted_ms": timing.smps_ms(&lft),
                "predicted_active_ms": timing.active_ms(&plan.smps),
                "smps": plan.smps.iter().map(|s| json!({"kind": format!("{:?}", s.kind), "node": name(s.node), "block": s.block, "lid": s.lid.0, "active": s.active})).collect::<Vec<_>>(),
                "applied": false,
            });
            if check {
                // Reachability of the moved LIDs under the new tables, on the new placement.
                let after = inner.tables_after(&plan);
                let mut next = inner.clone();
                next.apply(&plan)?;
                let r = reachability(next.fabric(), &after, &lids);
                report["reachable"] = json!(r.ok());
                report["reachability_problems"] = json!(r.problems);
                if let Some(t) = trans {
                    report["transition"] = serde_json::to_value(&t).unwrap_or_default();
                }
            }
            if apply {
                let t1 = Instant::now();
                inner.apply(&plan)?;
                report["apply_us"] = json!(t1.elapsed().as_secs_f64() * 1e6);
                report["applied"] = json!(true);
            }
            Ok(report.to_string())
        })
    }

    /// FTreeMinRC's marking between two hypervisors, as JSON.
    fn mark(&self, src: &str, dst: &str) -> PyResult<String> {
        let s = self.inner.find_hypervisor(src).map_err(err)?;
        let d = self.inner.find_hypervisor(dst).map_err(err)?;
        let h = self.inner.hypervisors();
        let tree = self.inner.tree().map_err(err)?;
        let m = tree.mark(h[s].leaf, h[d].leaf).map_err(err)?;
        let f = self.inner.fabric();
        Ok(json!({"marked": m.marked.iter().map(|&n| f.node(n).description.clone()).collect::<Vec<_>>(),
                  "levels": m.levels, "ancestor_rank": m.ancestor_rank})
        .to_string())
    }

    /// Reachability of every running VM's LID from every switch, as JSON.
    fn check(&self, py: Python<'_>) -> PyResult<String> {
        let inner = &self.inner;
        run(py, move || {
            let lids: Vec<_> = inner.vms().map(|v| v.lid).collect();
            Ok(
                serde_json::to_string(&reachability(inner.fabric(), inner.tables(), &lids))
                    .unwrap_or_default(),
            )
        })
    }

    /// Number of running VMs.
    #[getter]
    fn num_vms(&self) -> usize {
        self.inner.num_vms()
    }

    /// Number of hypervisors.
    #[getter]
    fn num_hypervisors(&self) -> usize {
        self.inner.hypervisors().len()
    }
}

/// The LID-space calculator, as JSON.
#[pyfunction]
#[pyo3(signature = (vfs, switches=0, routers=0, others=0, hypervisors=0, extension_bits=2, share=0, dedicated_fraction=1.0))]
#[allow(clippy::too_many_arguments)]
fn vswitch_capacity(
    vfs: u64,
    switches: u64,
    routers: u64,
    others: u64,
    hypervisors: u64,
    extension_bits: u32,
    share: u64,
    dedicated_fraction: f64,
) -> String {
    let c = Capacity::compute(&CapacityInput {
        vfs,
        switches,
        routers,
        others,
        hypervisors,
        extension_bits,
        share,
        dedicated_fraction,
    });
    serde_json::to_string(&c).unwrap_or_default()
}

/// One migration simulation on a physical fabric, as JSON.
#[pyfunction]
#[pyo3(signature = (physical, vfs=4, population=0.25, placement="random", pattern="random", seed=1, steps=10, bisect_runs=10000, transition_check=false, endpoints="vms"))]
#[allow(clippy::too_many_arguments)]
fn vswitch_simulate(
    py: Python<'_>,
    physical: &PyFabric,
    vfs: u32,
    population: f64,
    placement: &str,
    pattern: &str,
    seed: u64,
    steps: u32,
    bisect_runs: u64,
    transition_check: bool,
    endpoints: &str,
) -> PyResult<String> {
    let endpoints = BisectEndpoints::parse(endpoints).map_err(err)?;
    let placement = match placement {
        "random" => Placement::Random,
        "uniform" => Placement::Uniform,
        other => {
            return Err(exc::VSwitchError::new_err(format!(
                "unknown placement '{other}' (known: random, uniform)"
            )))
        }
    };
    let pattern = MigrationPattern::parse(pattern).map_err(err)?;
    let cfg = SimConfig {
        vfs,
        population,
        placement,
        pattern,
        seed,
        steps,
        bisect_runs,
        transition_check,
        endpoints,
    };
    let p: Fabric = physical.inner.clone();
    let r = run(py, move || simulate(&p, &cfg))?;
    Ok(serde_json::to_string(&r).unwrap_or_default())
}

/// FTreeMinRC's worst-case marking on a physical fat-tree (first and last
/// leaf): (switches, marked, best time in seconds over `repeats`).
#[pyfunction]
#[pyo3(signature = (physical, repeats=5))]
fn vswitch_worst_marking(
    py: Python<'_>,
    physical: &PyFabric,
    repeats: u32,
) -> PyResult<(usize, usize, f64)> {
    let p: Fabric = physical.inner.clone();
    run(py, move || {
        let tree = TreeInfo::from_physical(&p)?;
        let leaves = tree.fat_tree().leaves();
        let (a, b) = match (leaves.first(), leaves.last()) {
            (Some(&a), Some(&b)) => (tree.node_of(a), tree.node_of(b)),
            _ => return Err(VSwitchError::NotFatTree("no leaves".into())),
        };
        let mut best = f64::INFINITY;
        let mut marked = 0;
        for _ in 0..repeats.max(1) {
            let t0 = Instant::now();
            let m = tree.mark(a, b)?;
            best = best.min(t0.elapsed().as_secs_f64());
            marked = m.marked.len();
        }
        Ok((tree.fat_tree().switches().count(), marked, best))
    })
}

/// Predicted time (ms) for `per_switch[i]` SMPs to switch i, with the
/// calibrated model or given parameters.
#[pyfunction]
#[pyo3(signature = (per_switch, k_us=None, r_us=0.0, hops=0, window=16))]
fn vswitch_smp_time(
    per_switch: Vec<usize>,
    k_us: Option<f64>,
    r_us: f64,
    hops: u32,
    window: u32,
) -> f64 {
    let mut t = SmpTiming::calibrated();
    if let Some(k) = k_us {
        t.k_us = k;
    }
    t.r_us = r_us;
    t.hops = hops;
    t.window = window;
    t.time_ms(&per_switch)
}
