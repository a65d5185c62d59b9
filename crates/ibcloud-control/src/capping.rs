//! The backend-neutral face of a CPU-capping policy (FaReS, FreeMarket,
//! IOShares): one observation per VM per control interval in, new caps out.
//!
//! The same [`CapPolicy`] object runs in the host simulator (through
//! [`crate::sim::CapLoop`], whose sensors are IBMon's CQ scans, XenStat's
//! CPU % and the in-guest latency agent) and in `ibcloud agent` on a real
//! Linux host (sensors: InfiniBand counters, cgroup `cpu.stat`, latency
//! reports on a local socket; actuator: cgroup CPU quotas). A policy never
//! reads a clock or touches the OS: `now` and the observations come in, so a
//! recorded observation trace replays deterministically in a test.
//!
//! Caps are Xen's: per cent of one CPU, `0` = uncapped. The Linux backend
//! turns cap *c* into a CFS quota of *c*/100 × the period.

use crate::Time;
use serde::Serialize;

/// What one VM did during one control interval, as any backend measures it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct VmSample {
    /// Length of the interval (ps).
    pub interval: Time,
    /// Bytes the VM's I/O completed (IBMon: Σ `byte_len` of new CQEs; Linux:
    /// the port or per-QP transmit counters).
    pub bytes: u64,
    /// Requests completed (new CQEs; Linux: per-QP or port packet counts).
    pub requests: u64,
    /// CPU used, per cent of one CPU over the interval (XenStat / cpuacct).
    pub cpu_pct: f64,
    /// The cap in force when the interval ended (0 = none).
    pub cap: u32,
    /// Latencies (µs) the VM's application reported during the interval.
    pub latencies_us: Vec<f64>,
}

/// One decision: set `vm`'s cap (per cent of one CPU, 0 = uncapped).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CapChange {
    /// VM index (position in the observation slice).
    pub vm: usize,
    /// New cap.
    pub cap: u32,
}

/// One row of a policy's action log (the thesis's figures are plots of
/// these): written to Parquet by the Python layer.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PolicyRecord {
    /// Time of the decision (ps).
    pub time: Time,
    /// VM index.
    pub vm: usize,
    /// The usage the policy judged (policy-defined: requests, MTUs, µs …).
    pub observed: f64,
    /// Price or charging rate in force (Resos per unit; 0 where none).
    pub price: f64,
    /// Balance left (Resos; 0 where none).
    pub balance: f64,
    /// The cap after the decision (0 = uncapped).
    pub cap: u32,
}

/// A CPU-capping policy, independent of where it runs.
pub trait CapPolicy: std::fmt::Debug + Send {
    /// Name in logs (`fares`, `freemarket`, `ioshares`).
    fn name(&self) -> String;
    /// Control interval.
    fn period(&self) -> Time;
    /// One control step: the observations of every VM over the interval
    /// that ended at `now` → the caps to change (only those that change).
    fn step(&mut self, now: Time, obs: &[VmSample]) -> Vec<CapChange>;
    /// VMs whose application latency the policy wants reported (the
    /// latency agent runs in these; each report costs the VM CPU time).
    fn reporters(&self) -> Vec<usize> {
        Vec::new()
    }
    /// The action log since the last [`CapPolicy::clear_records`].
    fn records(&self) -> &[PolicyRecord];
    /// Forgets the action log (a long-running agent writes the records out
    /// after each step and clears them, so memory stays bounded).
    fn clear_records(&mut self);
    /// Results at the end (JSON).
    fn report(&self, vm_names: &[String]) -> serde_json::Value;
}

/// Builds a capping policy by name from its parameter table (scenario
/// `[[controllers]]` keys or `AGENT.toml`'s `[policy]`). The kinds are
/// registered here as they land.
pub fn build_cap_policy(
    kind: &str,
    params: &serde_json::Map<String, serde_json::Value>,
    vm_names: &[String],
) -> Result<Box<dyn CapPolicy>, String> {
    match kind {
        "freemarket" | "ioshares" => crate::resex::build(kind, params, vm_names),
        "fares" => Ok(Box::new(crate::fares::Fares::from_params(
            params, vm_names,
        )?)),
        _ => Err(format!(
            "unknown capping policy '{kind}' (fares, freemarket, ioshares)"
        )),
    }
}

/// Converts a Xen-style cap to a CFS quota for `period` (`None` =
/// unlimited). Caps above 100 × CPUs are allowed (a multi-vCPU VM).
///
/// ```
/// use ibcloud_control::capping::cap_to_quota;
/// assert_eq!(cap_to_quota(0, 100_000), None);
/// assert_eq!(cap_to_quota(25, 100_000), Some(25_000));
/// assert_eq!(cap_to_quota(150, 100_000), Some(150_000));
/// ```
pub fn cap_to_quota(cap: u32, period: u64) -> Option<u64> {
    (cap > 0).then(|| period * cap as u64 / 100)
}
