//! DRX on the host simulator: one [`HostController`] holding the whole
//! control plane ([`Drx`]). At each interval it scans every VM's CQ ring as
//! IBMon does (new CQEs, no timestamps); messages between HAs and the PM
//! take their latency inside [`Drx`], and the controller wakes at every
//! arrival. Caps become CFS quotas ([`Actuation::SetQuota`]) applied after
//! the host's actuation delay.
//!
//! The cluster layout (which VM on which host) is read from the view at
//! start; the factory only sees VM names. A layout error found then (e.g.
//! minimums that no configuration fits) stops the controller and is the
//! `error` of its report.

use super::cap::cap_quota;
use super::{Drx, DrxConfig};
use crate::Time;
use ibcloud_host::cq::RingReader;
use ibcloud_host::{Actuation, HostController, View};

/// The `kind = "drx"` controller.
#[derive(Debug)]
pub struct DrxController {
    cfg: DrxConfig,
    drx: Option<Drx>,
    error: Option<String>,
    readers: Vec<RingReader>,
    cum: Vec<u64>,
}

impl DrxController {
    /// A controller for `cfg` (built at start from the view's layout).
    pub fn new(cfg: DrxConfig) -> Self {
        Self {
            cfg,
            drx: None,
            error: None,
            readers: Vec::new(),
            cum: Vec::new(),
        }
    }

    /// The control plane, once started.
    pub fn drx(&self) -> Option<&Drx> {
        self.drx.as_ref()
    }
}

/// Hosts in order of first appearance and each VM's host index.
pub fn layout(view: &View<'_>) -> (Vec<String>, Vec<(String, usize)>) {
    let mut hosts: Vec<String> = Vec::new();
    let vms = view
        .vms
        .iter()
        .map(|v| {
            let h = hosts.iter().position(|h| h == v.host).unwrap_or_else(|| {
                hosts.push(v.host.to_string());
                hosts.len() - 1
            });
            (v.name.to_string(), h)
        })
        .collect();
    (hosts, vms)
}

impl HostController for DrxController {
    fn name(&self) -> String {
        format!(
            "drx-{}",
            super::config::POLICY_NAMES[self.cfg.policy as usize]
        )
    }
    fn start(&mut self, view: &View<'_>) -> Time {
        let (hosts, vms) = layout(view);
        match Drx::new(self.cfg.clone(), hosts, vms) {
            Ok(d) => {
                let t = d.next_wakeup();
                self.drx = Some(d);
                self.readers = vec![RingReader::default(); view.vms.len()];
                self.cum = vec![0; view.vms.len()];
                t
            }
            Err(e) => {
                self.error = Some(format!("drx: {e}"));
                0
            }
        }
    }
    fn step(&mut self, now: Time, view: &View<'_>, actions: &mut Vec<Actuation>) -> Time {
        let Some(drx) = self.drx.as_mut() else {
            return 0;
        };
        for (i, v) in view.vms.iter().enumerate().take(self.readers.len()) {
            self.cum[i] += self.readers[i].scan(v.cq, |_| {});
        }
        let period = self.cfg.cfs_period;
        for c in drx.step(now, &self.cum) {
            actions.push(Actuation::SetQuota {
                vm: c.vm,
                quota: cap_quota(c.cap, period),
                period,
            });
        }
        drx.next_wakeup().saturating_sub(now).max(1)
    }
    fn report(&mut self, _vm_names: &[String]) -> serde_json::Value {
        match (&self.drx, &self.error) {
            (Some(d), _) => d.report(),
            (None, Some(e)) => serde_json::json!({ "error": e }),
            (None, None) => serde_json::json!({ "error": "drx: never started" }),
        }
    }
}
