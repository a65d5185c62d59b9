//! # ibcloud-control
//!
//! The general model of F §1.3 as one trait, [`Policy`]: observe (the
//! hypervisor's read-only view) → evaluate (does usage match the policy?) →
//! find culprits → actuate (caps, weights, quotas). [`ControlLoop`] runs a
//! policy periodically with a control-plane latency between observation and
//! actuation and logs every action (the host logs it again when applied).
//! Policies never read a clock or touch the OS: `now` is passed in, so a
//! recorded observation trace replays deterministically.
//!
//! [`ibmon::IbMon`] (F §3) is the first policy: observation only;
//! [`CpuMeter`] gives XenStat-like CPU % per interval from the view.
//! [`capping::CapPolicy`] is the backend-neutral face of the capping
//! policies (FaReS, FreeMarket, IOShares): [`sim::CapLoop`] runs one on the
//! host simulator, `ibcloud agent` on a real Linux host.
//! [`drx`] is DRX's cluster-wide control plane (PM / EM / HA).
//! [`build`] turns a scenario's `[[controllers]]` table into a controller.
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub mod capping;
pub mod drx;
pub mod fares;
pub mod ibmon;
pub mod resex;
pub mod sim;
pub mod sphinx;
pub mod xenstat;

pub use xenstat::CpuMeter;

use ibcloud_host::scenario::ControllerOptions;
use ibcloud_host::{Actuation, HostController, View};
use ibcloud_netsim::time::parse_duration;
use serde::Serialize;

/// Simulated time (ps).
pub type Time = ibcloud_host::Time;

/// A control policy. See the crate docs.
pub trait Policy: std::fmt::Debug + Send {
    /// What one observation holds.
    type Obs;
    /// Name in logs.
    fn name(&self) -> String;
    /// Delay to the next observation (may adapt).
    fn period(&self) -> Time;
    /// Reads the view (read-only, asynchronous).
    fn observe(&mut self, now: Time, view: &View<'_>) -> Self::Obs;
    /// Whether the observation violates the policy.
    fn evaluate(&mut self, now: Time, obs: &Self::Obs) -> bool;
    /// VMs to act on.
    fn culprits(&mut self, now: Time, obs: &Self::Obs) -> Vec<usize>;
    /// The actions for the culprits.
    fn actuate(&mut self, now: Time, obs: &Self::Obs, culprits: &[usize]) -> Vec<Actuation>;
    /// Immediate side effects of observing (e.g. memory contention).
    fn perturb(&mut self, _obs: &Self::Obs) -> Vec<Actuation> {
        Vec::new()
    }
    /// Results at the end.
    fn report(&mut self, vm_names: &[String]) -> serde_json::Value;
}

/// One decision of a loop, for its log.
#[derive(Clone, Debug, Serialize)]
pub struct Decision {
    /// Observation time (ps).
    pub observed: Time,
    /// When the actions were released to the host (ps).
    pub released: Time,
    /// Culprit VM indices.
    pub culprits: Vec<usize>,
    /// Actions.
    pub actions: Vec<Actuation>,
}

/// Runs a [`Policy`] periodically; actions leave `latency` after the
/// observation they answer.
#[derive(Debug)]
pub struct ControlLoop<P: Policy> {
    policy: P,
    latency: Time,
    queued: Vec<(Time, Time, Vec<usize>, Vec<Actuation>)>,
    log: Vec<Decision>,
    next_observe: Time,
}

impl<P: Policy> ControlLoop<P> {
    /// A loop with a control-plane latency.
    pub fn new(policy: P, latency: Time) -> Self {
        Self {
            policy,
            latency,
            queued: Vec::new(),
            log: Vec::new(),
            next_observe: 0,
        }
    }
    /// The policy.
    pub fn policy(&self) -> &P {
        &self.policy
    }
}

impl<P: Policy> HostController for ControlLoop<P> {
    fn name(&self) -> String {
        self.policy.name()
    }
    fn start(&mut self, _view: &View<'_>) -> Time {
        self.next_observe = self.policy.period();
        self.next_observe
    }
    fn step(&mut self, now: Time, view: &View<'_>, actions: &mut Vec<Actuation>) -> Time {
        // Release what is due.
        let mut keep = Vec::new();
        for (due, observed, c, a) in std::mem::take(&mut self.queued) {
            if due <= now {
                actions.extend(a.iter().copied());
                self.log.push(Decision {
                    observed,
                    released: now,
                    culprits: c,
                    actions: a,
                });
            } else {
                keep.push((due, observed, c, a));
            }
        }
        self.queued = keep;
        if now >= self.next_observe {
            let obs = self.policy.observe(now, view);
            actions.extend(self.policy.perturb(&obs));
            if self.policy.evaluate(now, &obs) {
                let c = self.policy.culprits(now, &obs);
                let a = self.policy.actuate(now, &obs, &c);
                if !a.is_empty() {
                    if self.latency == 0 {
                        actions.extend(a.iter().copied());
                        self.log.push(Decision {
                            observed: now,
                            released: now,
                            culprits: c,
                            actions: a,
                        });
                    } else {
                        self.queued.push((now + self.latency, now, c, a));
                    }
                }
            }
            self.next_observe = now + self.policy.period().max(1);
        }
        let next_due = self.queued.iter().map(|q| q.0).min().unwrap_or(Time::MAX);
        next_due.min(self.next_observe).saturating_sub(now).max(1)
    }
    fn report(&mut self, vm_names: &[String]) -> serde_json::Value {
        let mut r = self.policy.report(vm_names);
        if let Some(o) = r.as_object_mut() {
            o.insert(
                "decisions".into(),
                serde_json::to_value(&self.log).unwrap_or_default(),
            );
        }
        r
    }
}

/// Reads a duration parameter.
pub(crate) fn dur_param(
    p: &serde_json::Map<String, serde_json::Value>,
    key: &str,
    default: Time,
) -> Result<Time, String> {
    match p.get(key) {
        None => Ok(default),
        Some(serde_json::Value::String(s)) => {
            parse_duration(s).map_err(|_| format!("{key}: cannot read duration '{s}'"))
        }
        Some(v) => Err(format!("{key}: expected a duration like \"10us\", got {v}")),
    }
}

/// Builds a controller from its scenario table (`kind` = `ibmon`, or a
/// capping policy of [`capping::build_cap_policy`]; the loop's own keys
/// `control-latency` and, for capping policies, `report-cost` are taken
/// here).
pub fn build(
    c: &ControllerOptions,
    vm_names: &[String],
) -> Result<Box<dyn HostController>, String> {
    match c.kind.as_str() {
        "ibmon" => {
            let latency = dur_param(&c.params, "control-latency", 0)?;
            let mon = ibmon::IbMon::from_params(&c.params, vm_names)?;
            Ok(Box::new(ControlLoop::new(mon, latency)))
        }
        kind @ ("fares" | "freemarket" | "ioshares") => {
            let latency = dur_param(&c.params, "control-latency", 0)?;
            let cost = dur_param(&c.params, "report-cost", sim::REPORT_COST_PS)?;
            let mut params = c.params.clone();
            params.remove("control-latency");
            params.remove("report-cost");
            let policy = capping::build_cap_policy(kind, &params, vm_names)?;
            Ok(Box::new(ControlLoop::new(
                sim::CapLoop::new(policy, cost),
                latency,
            )))
        }
        "sphinx" => {
            let latency = dur_param(&c.params, "control-latency", 0)?;
            let mut params = c.params.clone();
            params.remove("control-latency");
            let policy = sphinx::host::SphinxHost::from_params(&params, vm_names)?;
            Ok(Box::new(ControlLoop::new(policy, latency)))
        }
        "drx" => {
            let cfg = drx::DrxConfig::from_params(&c.params, vm_names)?;
            Ok(Box::new(drx::sim::DrxController::new(cfg)))
        }
        "cc-delay" => {
            let latency = dur_param(&c.params, "control-latency", 0)?;
            let mut params = c.params.clone();
            params.remove("control-latency");
            let policy = sphinx::manual::StaticDelay::from_params(&params, vm_names)?;
            Ok(Box::new(ControlLoop::new(policy, latency)))
        }
        other => Err(format!(
            "unknown controller kind '{other}' (ibmon, fares, freemarket, ioshares, drx, sphinx, cc-delay)"
        )),
    }
}

/// As [`build`], knowing the host of every VM (`vm_hosts[i]` for
/// `vm_names[i]`): controllers whose checks need the cluster layout (DRX's
/// Workload Configurator) run them now, so the error is the scenario's.
pub fn build_on(
    c: &ControllerOptions,
    vm_names: &[String],
    vm_hosts: &[String],
) -> Result<Box<dyn HostController>, String> {
    if c.kind == "drx" {
        let cfg = drx::DrxConfig::from_params(&c.params, vm_names)?;
        drx::sim::check_layout(&cfg, vm_names, vm_hosts)?;
        return Ok(Box::new(drx::sim::DrxController::new(cfg)));
    }
    build(c, vm_names)
}
