//! The hypervisor's view and actuators, and the controller hook.
//!
//! A controller sees VMs only as dom0 would: read-only CQ rings in guest
//! memory (no timestamps), cumulative CPU time per VM from the scheduler
//! (XenStat; per-interval CPU % is the controller's own arithmetic), caps.
//! It acts through [`Actuation`]s, applied after the host's actuation delay
//! and logged with both times.

use crate::cq::CqRing;
use crate::Time;
use serde::Serialize;

/// What a controller may see of one VM.
#[derive(Debug)]
pub struct VmView<'a> {
    /// Name.
    pub name: &'a str,
    /// Host name.
    pub host: &'a str,
    /// The VM's CQ ring (read-only introspection).
    pub cq: &'a CqRing,
    /// Cumulative CPU time of its vCPU.
    pub cpu_time: Time,
    /// Current cap (0 = none).
    pub cap: u32,
    /// Whether its vCPU is running now.
    pub running: bool,
    /// Every latency the VM's application has recorded so far, as
    /// (completion time, latency) in ps, oldest first: what an in-guest
    /// latency agent can report to dom0 (IOShares, F §5.6.3). A controller
    /// remembers how many it has read; the host never drops entries.
    pub latencies: &'a [(Time, Time)],
}

/// The read-only, asynchronous view at one instant.
#[derive(Debug)]
pub struct View<'a> {
    /// Now.
    pub now: Time,
    /// Every VM, by index.
    pub vms: &'a [VmView<'a>],
    /// Every SM push carried out so far (a controller learns from it when
    /// the settings it asked for took effect).
    pub sm: &'a [crate::sm::SmPushRecord],
}

impl<'a> View<'a> {
    /// A view (no SM pushes).
    pub fn new(now: Time, vms: &'a [VmView<'a>]) -> Self {
        Self { now, vms, sm: &[] }
    }
    /// The same view with the SM's pushes.
    pub fn with_sm(mut self, sm: &'a [crate::sm::SmPushRecord]) -> Self {
        self.sm = sm;
        self
    }
    /// Index of a VM by name.
    pub fn vm(&self, name: &str) -> Option<usize> {
        self.vms.iter().position(|v| v.name == name)
    }
}

/// An action on a VM.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Actuation {
    /// Xen cap (% of one PCPU, 0 = none).
    SetCap {
        /// VM index.
        vm: usize,
        /// Cap.
        cap: u32,
    },
    /// Xen weight / CFS shares.
    SetWeight {
        /// VM index.
        vm: usize,
        /// Weight.
        weight: u32,
    },
    /// CFS quota per period.
    SetQuota {
        /// VM index.
        vm: usize,
        /// Quota (None = unlimited).
        quota: Option<Time>,
        /// Period.
        period: Time,
    },
    /// A static congestion-control delay (a CCT index) for the VM's queue
    /// pairs, as an SM pushes it to the HCA (Sphinx, G §6.4). Needs
    /// `fabric.congestion-control`. With `arbitration = "per-message"` the
    /// VMs of a host share one send queue per destination and SL, and the
    /// delay applies to that queue.
    SetCcDelay {
        /// VM index.
        vm: usize,
        /// CCT index (0 removes the delay).
        ccti: u16,
    },
    /// Memory-contention stall of the VM's guest (monitoring overhead
    /// model): its current work takes `time` longer. Immediate.
    Stall {
        /// VM index.
        vm: usize,
        /// Extra guest time.
        time: Time,
    },
    /// Ask the subnet manager to push a QoS and/or congestion-control
    /// policy (`crate::sm`): the request reaches the SM `after` the
    /// decision (the controller's message latency), the SM restarts when it
    /// carries QoS, then sends its MADs; everything acts when the last MAD
    /// arrives. `tag` comes back in the SM's record ([`View::sm`]).
    SmPush {
        /// The request.
        request: crate::sm::SmRequest,
        /// Delay until the SM has it.
        after: Time,
        /// The controller's tag.
        tag: u64,
    },
}

impl Actuation {
    /// The VM acted on.
    pub fn vm(&self) -> Option<usize> {
        match *self {
            Actuation::SetCap { vm, .. }
            | Actuation::SetWeight { vm, .. }
            | Actuation::SetQuota { vm, .. }
            | Actuation::SetCcDelay { vm, .. }
            | Actuation::Stall { vm, .. } => Some(vm),
            Actuation::SmPush { .. } => None,
        }
    }
    /// Human-readable form for the log.
    pub fn describe(&self) -> String {
        match *self {
            Actuation::SetCap { cap, .. } => format!("cap={cap}"),
            Actuation::SetWeight { weight, .. } => format!("weight={weight}"),
            Actuation::SetQuota { quota, period, .. } => match quota {
                Some(q) => format!("quota={}us/{}us", q / 1_000_000, period / 1_000_000),
                None => "quota=none".into(),
            },
            Actuation::SetCcDelay { ccti, .. } => format!("cc-delay={ccti}"),
            Actuation::Stall { time, .. } => format!("stall={}ns", time / 1000),
            Actuation::SmPush { request, .. } => format!(
                "sm-push={}:{}",
                request.preset.name(),
                match request.parts {
                    crate::sm::SmParts::All => "qos+cc",
                    crate::sm::SmParts::Qos => "qos",
                    crate::sm::SmParts::Cc => "cc",
                }
            ),
        }
    }
}

/// One logged action.
#[derive(Clone, Debug, Serialize)]
pub struct ActionRecord {
    /// When the controller decided (ps).
    pub issued: Time,
    /// When the host applied it (ps).
    pub applied: Time,
    /// Controller name.
    pub controller: String,
    /// VM name.
    pub vm: String,
    /// What.
    pub action: String,
    /// Empty, or the error the host returned.
    pub ok: String,
}

/// A controller driven by the host simulation (see `ibcloud-control` for
/// the observe → evaluate → culprits → actuate framework). It never reads a
/// clock: time comes in `now`.
pub trait HostController: std::fmt::Debug + Send {
    /// Name in logs.
    fn name(&self) -> String;
    /// Called once at time 0; returns when to step first.
    fn start(&mut self, view: &View<'_>) -> Time;
    /// One step; returns the delay to the next step (0 = never again).
    fn step(&mut self, now: Time, view: &View<'_>, actions: &mut Vec<Actuation>) -> Time;
    /// The controller's own results (JSON) at the end.
    fn report(&mut self, vm_names: &[String]) -> serde_json::Value;
}
