//! The simulator backend of a [`CapPolicy`]: dom0's sensors on the host
//! model, and caps applied as Xen caps.
//!
//! Every `period` the loop scans each VM's CQ ring as IBMon does (Σ
//! `byte_len` and the count of new CQEs, no timestamps), reads XenStat's CPU
//! % since the previous step, and collects the latencies each reporting
//! VM's application recorded since then (the in-guest latency agent of F
//! §5.4; each report stalls the reporting VM by `report-cost`, 10 µs by
//! default, F §5.7.2). The policy's caps become [`Actuation::SetCap`]s,
//! which reach the scheduler after the control-plane latency of the
//! [`ControlLoop`] and the host's actuation delay.
//!
//! [`ControlLoop`]: crate::ControlLoop

use crate::capping::{CapPolicy, VmSample};
use crate::{CpuMeter, Policy, Time};
use ibcloud_host::cq::RingReader;
use ibcloud_host::{Actuation, View};

/// Default cost of one latency report to the reporting VM (F §5.7.2).
pub const REPORT_COST_PS: Time = 10_000_000;

/// A [`CapPolicy`] with the simulator's sensors (see the module docs).
#[derive(Debug)]
pub struct CapLoop {
    policy: Box<dyn CapPolicy>,
    readers: Vec<RingReader>,
    meter: CpuMeter,
    seen_latencies: Vec<usize>,
    last: Time,
    report_cost: Time,
}

impl CapLoop {
    /// Wraps `policy`; each latency report costs its VM `report_cost`.
    pub fn new(policy: Box<dyn CapPolicy>, report_cost: Time) -> Self {
        Self {
            policy,
            readers: Vec::new(),
            meter: CpuMeter::new(),
            seen_latencies: Vec::new(),
            last: 0,
            report_cost,
        }
    }

    /// The wrapped policy.
    pub fn policy(&self) -> &dyn CapPolicy {
        self.policy.as_ref()
    }
}

/// One step's observations plus the reports made (for their cost).
#[derive(Debug)]
pub struct CapObs {
    /// One sample per VM.
    pub samples: Vec<VmSample>,
    /// (VM, reports made) for the reporting VMs.
    pub reports: Vec<(usize, usize)>,
}

impl Policy for CapLoop {
    type Obs = CapObs;
    fn name(&self) -> String {
        self.policy.name()
    }
    fn period(&self) -> Time {
        self.policy.period()
    }
    fn observe(&mut self, now: Time, view: &View<'_>) -> CapObs {
        let n = view.vms.len();
        self.readers.resize(n, RingReader::default());
        self.seen_latencies.resize(n, 0);
        let cpu = self.meter.read(view);
        let interval = now.saturating_sub(self.last);
        self.last = now;
        let reporters = self.policy.reporters();
        let mut reports = Vec::new();
        let samples = (0..n)
            .map(|i| {
                let v = &view.vms[i];
                let mut bytes = 0u64;
                let requests = self.readers[i].scan(v.cq, |c| bytes += c.byte_len as u64);
                let mut latencies_us = Vec::new();
                if reporters.contains(&i) {
                    let new = &v.latencies[self.seen_latencies[i].min(v.latencies.len())..];
                    latencies_us = new.iter().map(|&(_, l)| l as f64 * 1e-6).collect();
                    reports.push((i, new.len()));
                }
                self.seen_latencies[i] = v.latencies.len();
                VmSample {
                    interval,
                    bytes,
                    requests,
                    cpu_pct: cpu[i],
                    cap: v.cap,
                    latencies_us,
                }
            })
            .collect();
        CapObs { samples, reports }
    }
    fn evaluate(&mut self, _now: Time, _obs: &CapObs) -> bool {
        true
    }
    fn culprits(&mut self, _now: Time, _obs: &CapObs) -> Vec<usize> {
        Vec::new()
    }
    fn actuate(&mut self, now: Time, obs: &CapObs, _c: &[usize]) -> Vec<Actuation> {
        self.policy
            .step(now, &obs.samples)
            .into_iter()
            .map(|c| Actuation::SetCap {
                vm: c.vm,
                cap: c.cap,
            })
            .collect()
    }
    fn perturb(&mut self, obs: &CapObs) -> Vec<Actuation> {
        obs.reports
            .iter()
            .filter(|&&(_, k)| k > 0 && self.report_cost > 0)
            .map(|&(vm, k)| Actuation::Stall {
                vm,
                time: self.report_cost * k as Time,
            })
            .collect()
    }
    fn report(&mut self, vm_names: &[String]) -> serde_json::Value {
        let mut r = self.policy.report(vm_names);
        if let Some(o) = r.as_object_mut() {
            o.insert(
                "records".into(),
                serde_json::to_value(self.policy.records()).unwrap_or_default(),
            );
        }
        r
    }
}
