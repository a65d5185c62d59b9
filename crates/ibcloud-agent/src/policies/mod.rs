//! The agent's policies: the simulator's own controller objects behind one
//! interface, [`AgentPolicy`], a [`CapPolicy`] that may also want fabric
//! (QoS / congestion-control) settings pushed through OpenSM.
//!
//! - FaReS, FreeMarket, IOShares: [`build_cap_policy`] as before, no fabric.
//! - `drx`: [`Drx`] (the cluster control plane the host simulator's
//!   `kind = "drx"` runs) with every VM of AGENT.toml on this host and the
//!   PM in-process; its caps go to the cgroups, its hardware actions
//!   (StMax/StMaxQ at start, DRXMax/DRXMaxQ on the first violation) become
//!   the preset's opensm.conf options.
//! - `sphinx`: [`SphinxHost`] (the simulator's `kind = "sphinx"`), fed the
//!   latencies the VMs report; its CC delays become CCTI_Min of each
//!   act-on VM's SL and/or that SL's VL arbitration weight.

mod drx;
mod sphinx;

pub use drx::DrxAgent;
pub use sphinx::SphinxAgent;

use crate::config::Config;
use ibcloud_control::capping::{build_cap_policy, CapChange, CapPolicy, PolicyRecord, VmSample};
use ibcloud_control::Time;
use ibcloud_qos::Policy as FabricPolicy;
use serde_json::{Map, Value};

/// A capping policy that may also drive the fabric.
pub trait AgentPolicy: CapPolicy {
    /// The fabric settings wanted after the last step, when they changed.
    fn fabric(&mut self) -> Option<FabricPolicy> {
        None
    }
    /// Extra fields of VM `vm`'s log line for the last step.
    fn log_fields(&self, _vm: usize) -> Map<String, Value> {
        Map::new()
    }
    /// Does this policy need `[opensm]`?
    fn needs_fabric(&self) -> bool {
        false
    }
    /// The fabric settings the policy may push (checked at start).
    fn fabric_base(&self) -> Option<FabricPolicy> {
        None
    }
    /// Changes LP group `group`'s target (the socket's `!target` line).
    fn set_target(&mut self, _group: usize, _ratio: f64) -> Result<(), String> {
        Err(format!("policy '{}' has no LP target", self.name()))
    }
}

/// A plain capping policy.
#[derive(Debug)]
pub struct Plain(pub Box<dyn CapPolicy>);

impl CapPolicy for Plain {
    fn name(&self) -> String {
        self.0.name()
    }
    fn period(&self) -> Time {
        self.0.period()
    }
    fn step(&mut self, now: Time, obs: &[VmSample]) -> Vec<CapChange> {
        self.0.step(now, obs)
    }
    fn reporters(&self) -> Vec<usize> {
        self.0.reporters()
    }
    fn records(&self) -> &[PolicyRecord] {
        self.0.records()
    }
    fn clear_records(&mut self) {
        self.0.clear_records()
    }
    fn report(&self, vm_names: &[String]) -> Value {
        self.0.report(vm_names)
    }
}

impl AgentPolicy for Plain {}

/// Builds `kind` from AGENT.toml (errors are the policy's own messages;
/// the caller adds file and line).
pub fn build(kind: &str, cfg: &Config) -> Result<Box<dyn AgentPolicy>, String> {
    let names: Vec<String> = cfg.vms.iter().map(|v| v.name.clone()).collect();
    match kind {
        "drx" => Ok(Box::new(DrxAgent::new(cfg, &names)?)),
        "sphinx" => Ok(Box::new(SphinxAgent::new(cfg, &names)?)),
        _ => build_cap_policy(kind, &cfg.policy, &names)
            .map(|p| Box::new(Plain(p)) as Box<dyn AgentPolicy>)
            .map_err(|e| {
                if e.starts_with("unknown capping policy") {
                    format!("unknown policy '{kind}' (fares, freemarket, ioshares, drx, sphinx)")
                } else {
                    e
                }
            }),
    }
}

/// The base QoS/CC policy of `[opensm]` (preset or file).
pub(crate) fn base_policy(cfg: &Config) -> Result<Option<FabricPolicy>, String> {
    match &cfg.opensm {
        None => Ok(None),
        Some(o) => ibcloud_qos::resolve(&o.base, o.cc_sls)
            .map(Some)
            .map_err(|e| cfg.at(o.base_line, format!("[opensm] base: {e}"))),
    }
}
