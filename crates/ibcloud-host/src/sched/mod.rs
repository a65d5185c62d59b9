//! CPU schedulers: one trait, two models (Xen credit1 and Linux CFS with
//! bandwidth control), both event-driven with time passed in.
//!
//! A scheduler owns the physical CPUs (PCPUs) of one host and the virtual
//! CPUs (vCPUs) of its domains. The host calls [`CpuScheduler::wake`] and
//! [`CpuScheduler::block`] when a guest becomes runnable or sleeps,
//! [`CpuScheduler::poll`] at [`CpuScheduler::poll_at`] (ticks, slice ends,
//! accounting, bandwidth periods), and reads [`CpuScheduler::current`] to
//! learn which vCPU runs where. Run time per vCPU is exact (ps).

pub mod cfs;
pub mod credit1;

pub use cfs::{Cfs, CfsConfig};
pub use credit1::{Credit1, Credit1Config, Debit, Priority};

use crate::Time;

/// Errors of scheduler actuators.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SchedError {
    /// The domain does not exist.
    #[error("unknown domain {0}")]
    UnknownDomain(usize),
    /// A value is out of range.
    #[error("{0}")]
    Range(String),
    /// The knob does not exist for this scheduler.
    #[error("{0} is not supported by the {1} scheduler")]
    Unsupported(&'static str, &'static str),
}

/// A scheduler decision, recorded when tracing is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Switch {
    /// Time of the switch.
    pub time: Time,
    /// The PCPU.
    pub pcpu: usize,
    /// The vCPU now running (None: idle).
    pub vcpu: Option<usize>,
}

/// The interface of every CPU scheduler model.
pub trait CpuScheduler: std::fmt::Debug + Send {
    /// Short name (`credit1`, `cfs`).
    fn name(&self) -> &'static str;
    /// Number of PCPUs.
    fn pcpus(&self) -> usize;
    /// Adds a domain (VM) and returns its index.
    fn add_domain(&mut self) -> usize;
    /// Adds a vCPU of `domain`, optionally pinned to a set of PCPUs, and
    /// returns its index. It starts blocked.
    fn add_vcpu(&mut self, domain: usize, pin: Option<Vec<usize>>) -> usize;
    /// The vCPU becomes runnable at `now`.
    fn wake(&mut self, now: Time, v: usize);
    /// The vCPU stops being runnable at `now` (it sleeps or finished).
    fn block(&mut self, now: Time, v: usize);
    /// Handles every timer due at or before `now` and pending reschedules.
    fn poll(&mut self, now: Time);
    /// When the scheduler next needs [`CpuScheduler::poll`].
    fn poll_at(&self) -> Time;
    /// The vCPU running on a PCPU.
    fn current(&self, pcpu: usize) -> Option<usize>;
    /// Total run time of a vCPU up to `now`.
    fn runtime(&self, v: usize, now: Time) -> Time;
    /// Xen cap in % of one PCPU (0 = uncapped).
    fn set_cap(&mut self, now: Time, domain: usize, cap: u32) -> Result<(), SchedError>;
    /// Xen weight / CFS shares.
    fn set_weight(&mut self, now: Time, domain: usize, weight: u32) -> Result<(), SchedError>;
    /// CFS bandwidth quota per period (None = unlimited).
    fn set_quota(
        &mut self,
        now: Time,
        domain: usize,
        quota: Option<Time>,
        period: Time,
    ) -> Result<(), SchedError>;
    /// Starts recording every switch.
    fn enable_trace(&mut self);
    /// Recorded switches.
    fn trace(&self) -> &[Switch];
}

/// Per-vCPU run-time bookkeeping shared by the models.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunClock {
    total: Vec<Time>,
    since: Vec<Option<Time>>,
}

impl RunClock {
    pub(crate) fn add(&mut self) {
        self.total.push(0);
        self.since.push(None);
    }
    pub(crate) fn start(&mut self, v: usize, now: Time) {
        debug_assert!(self.since[v].is_none());
        self.since[v] = Some(now);
    }
    pub(crate) fn stop(&mut self, v: usize, now: Time) {
        if let Some(s) = self.since[v].take() {
            self.total[v] += now - s;
        }
    }
    pub(crate) fn read(&self, v: usize, now: Time) -> Time {
        self.total[v] + self.since[v].map_or(0, |s| now.saturating_sub(s))
    }
}

/// Helpers shared by the schedulers' hand-worked trace tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::{CpuScheduler, Time};

    /// Runs every scheduler event due up to `until` (inclusive).
    pub(crate) fn drive(s: &mut impl CpuScheduler, until: Time) {
        loop {
            let t = s.poll_at();
            if t > until {
                break;
            }
            s.poll(t);
        }
    }
}
