//! DRX on the host simulator: one [`HostController`] holding the whole
//! control plane ([`Drx`]). At each interval it scans every VM's CQ ring as
//! IBMon does (new CQEs, no timestamps); messages between HAs and the PM
//! take their latency inside [`Drx`], and the controller wakes at every
//! arrival. Caps become CFS quotas ([`Actuation::SetQuota`]) applied after
//! the host's actuation delay. DRXMax/DRXMaxQ's pushes become
//! [`Actuation::SmPush`]es that reach the host's SM after the PM's
//! processing and message latency; the SM's report (in the view) tells
//! DRX when each took effect.
//!
//! The cluster layout (which VM on which host) is read from the view at
//! start. [`crate::build_on`] (the factory the Python layer uses) also
//! knows each VM's host and checks the layout when the scenario is built,
//! so an unsatisfiable configuration is a scenario error; with the plain
//! [`crate::build`] a layout error found at start stops the controller and
//! is the `error` of its report.

use super::cap::cap_quota;
use super::config::{CcSlsChoice, PolicyKind, QosAt};
use super::record::SmTiming;
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
    /// Hardware actions already sent to the SM.
    hw_sent: usize,
    /// Violation events whose push is not yet known to be in force.
    hw_waiting: Vec<u64>,
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
            hw_sent: 0,
            hw_waiting: Vec::new(),
        }
    }

    /// The SM request of the run-time push of `policy`.
    fn sm_request(cfg: &DrxConfig) -> Option<ibcloud_host::sm::SmRequest> {
        let preset = match cfg.policy {
            PolicyKind::DrxMax => ibcloud_qos::Preset::DrxMax,
            PolicyKind::DrxMaxQ => ibcloud_qos::Preset::DrxMaxQ,
            _ => return None,
        };
        Some(ibcloud_host::sm::SmRequest {
            preset,
            cc_sls: match cfg.cc_sls {
                CcSlsChoice::All => ibcloud_qos::CcSls::All,
                CcSlsChoice::Bulk => ibcloud_qos::CcSls::Bulk,
            },
            parts: match cfg.qos_at {
                QosAt::Start => ibcloud_host::sm::SmParts::Cc,
                QosAt::Violation => ibcloud_host::sm::SmParts::All,
            },
        })
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
            Ok(mut d) => {
                d.use_external_sm();
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
        if self.drx.is_none() {
            return 0;
        }
        for (i, v) in view.vms.iter().enumerate().take(self.readers.len()) {
            self.cum[i] += self.readers[i].scan(v.cq, |_| {});
        }
        // Pushes the SM has carried out since the last step.
        let name = self.name();
        let drx = self.drx.as_mut().expect("started");
        for r in view.sm.iter().filter(|r| r.by == name) {
            if let Some(i) = self.hw_waiting.iter().position(|&e| e == r.tag) {
                self.hw_waiting.remove(i);
                drx.sm_in_force(
                    r.tag,
                    r.in_force,
                    SmTiming {
                        cc_mads: r.cc_mads,
                        qos_mads: r.qos_mads,
                        restart: r.restart,
                        spread: r.spread,
                    },
                );
            }
        }
        let period = self.cfg.cfs_period;
        for c in drx.step(now, &self.cum) {
            actions.push(Actuation::SetQuota {
                vm: c.vm,
                quota: cap_quota(c.cap, period),
                period,
            });
        }
        // New run-time pushes: one SM request per violation event.
        let hw = drx.hardware();
        let mut events: Vec<(u64, crate::Time)> = Vec::new();
        for h in &hw[self.hw_sent.min(hw.len())..] {
            if let Some(e) = h.event {
                if !events.iter().any(|x| x.0 == e) {
                    events.push((e, h.sent));
                }
            }
        }
        self.hw_sent = hw.len();
        if let Some(request) = Self::sm_request(&self.cfg) {
            for (tag, sent) in events {
                self.hw_waiting.push(tag);
                actions.push(Actuation::SmPush {
                    request,
                    after: sent.saturating_sub(now),
                    tag,
                });
            }
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
