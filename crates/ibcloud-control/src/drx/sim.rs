//! DRX on the host simulator: one [`HostController`] holding the whole
//! control plane ([`Drx`]). At each interval it scans every VM's CQ ring as
//! IBMon does (new CQEs, no timestamps); messages between HAs and the PM
//! take their latency inside [`Drx`], and the controller wakes at every
//! arrival. Caps become CFS quotas ([`Actuation::SetQuota`]) applied after
//! the host's actuation delay.
//!
//! The cluster layout (which VM on which host) is read from the view at
//! start. [`crate::build_on`] (the factory the Python layer uses) also
//! knows each VM's host and checks the layout when the scenario is built,
//! so an unsatisfiable configuration is a scenario error; with the plain
//! [`crate::build`] a layout error found at start stops the controller and
//! is the `error` of its report.

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

/// Hosts in order of first appearance and each VM's host index, from
/// (VM name, host name) pairs.
pub fn layout<'a>(
    vms: impl Iterator<Item = (&'a str, &'a str)>,
) -> (Vec<String>, Vec<(String, usize)>) {
    let mut hosts: Vec<String> = Vec::new();
    let vms = vms
        .map(|(name, host)| {
            let h = hosts.iter().position(|h| h == host).unwrap_or_else(|| {
                hosts.push(host.to_string());
                hosts.len() - 1
            });
            (name.to_string(), h)
        })
        .collect();
    (hosts, vms)
}

/// Checks `cfg` on a layout before a run (VM names and their hosts, in the
/// world's VM order): the same construction `start` does, so its errors
/// (e.g. an unsatisfiable configuration) surface when the scenario is
/// checked.
pub fn check_layout(
    cfg: &DrxConfig,
    vm_names: &[String],
    vm_hosts: &[String],
) -> Result<(), String> {
    if vm_names.len() != vm_hosts.len() {
        return Err(format!(
            "drx: {} VM names but {} hosts",
            vm_names.len(),
            vm_hosts.len()
        ));
    }
    let (hosts, vms) = layout(
        vm_names
            .iter()
            .map(String::as_str)
            .zip(vm_hosts.iter().map(String::as_str)),
    );
    Drx::new(cfg.clone(), hosts, vms)
        .map(|_| ())
        .map_err(|e| format!("drx: {e}"))
}

impl HostController for DrxController {
    fn name(&self) -> String {
        format!(
            "drx-{}",
            super::config::POLICY_NAMES[self.cfg.policy as usize]
        )
    }
    fn start(&mut self, view: &View<'_>) -> Time {
        let (hosts, vms) = layout(view.vms.iter().map(|v| (v.name, v.host)));
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
