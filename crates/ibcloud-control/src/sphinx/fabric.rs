//! Sphinx on the packet simulator: a netsim [`Controller`] that measures
//! each watched flow's mean message latency over a control period, steps
//! [`Sphinx`] and pushes the delays that changed as `set-flow-cc-delay`
//! actions after an SM latency (G §6.6: the resource controller drives IB CC
//! through the SM; each push is a MAD to the flow's HCA).

use super::controller::{Sphinx, SphinxRecord};
use crate::Time;
use ibcloud_netsim::{Action, Controller, SweepView, TimedAction};
use std::sync::{Arc, Mutex};

/// The records of a [`SphinxOnFabric`], readable after the run.
pub type SphinxLog = Arc<Mutex<Vec<SphinxRecord>>>;

/// Runs [`Sphinx`] at the simulator's sweeps. See the module docs.
#[derive(Debug)]
pub struct SphinxOnFabric {
    sphinx: Sphinx,
    /// Simulator flow index of each Sphinx flow.
    flows: Vec<u32>,
    /// Sweeps per control period.
    every: u32,
    /// Delay from a decision to the HCA applying it (SM and MAD).
    sm_latency: Time,
    /// Cumulative (latency sum ps, completed) per watched flow at the last
    /// control step.
    last: Vec<(u128, u64)>,
    sweeps: u32,
    pending: Vec<TimedAction>,
    /// Target changes to apply at given times: (time, group, ratio).
    retarget: Vec<(Time, usize, f64)>,
    log: SphinxLog,
    error: Option<String>,
}

impl SphinxOnFabric {
    /// `flows[i]` is the simulator's index of Sphinx flow `i`; a control step
    /// every `every` sweeps; decisions reach the HCAs `sm_latency` later.
    pub fn new(
        sphinx: Sphinx,
        flows: Vec<u32>,
        every: u32,
        sm_latency: Time,
    ) -> Result<Self, String> {
        if flows.len() != sphinx.flows().len() {
            return Err(format!(
                "{} simulator flows for {} Sphinx flows",
                flows.len(),
                sphinx.flows().len()
            ));
        }
        if every == 0 {
            return Err("a control step needs at least one sweep".into());
        }
        let n = flows.len();
        Ok(Self {
            sphinx,
            flows,
            every,
            sm_latency,
            last: vec![(0, 0); n],
            sweeps: 0,
            pending: Vec::new(),
            retarget: Vec::new(),
            log: Arc::default(),
            error: None,
        })
    }

    /// Changes group `group`'s target to `ratio` at the first control step
    /// at or after `time` (G R16).
    pub fn retarget_at(&mut self, time: Time, group: usize, ratio: f64) {
        self.retarget.push((time, group, ratio));
    }

    /// The shared log (clone it before handing the controller to the
    /// simulation).
    pub fn log(&self) -> SphinxLog {
        self.log.clone()
    }
}

impl Controller for SphinxOnFabric {
    fn on_sweep(&mut self, view: &SweepView<'_>, _actions: &mut Vec<Action>) {
        if self.error.is_some() {
            return;
        }
        self.sweeps += 1;
        if !self.sweeps.is_multiple_of(self.every) {
            return;
        }
        // Mean latency per flow over the period; a flow that completed
        // nothing gives no latency, so the step waits for one.
        let mut lat = Vec::with_capacity(self.flows.len());
        for (i, &f) in self.flows.iter().enumerate() {
            let Some(c) = view.flows.get(f as usize) else {
                self.error = Some(format!("no simulator flow {f}"));
                return;
            };
            let (sum0, n0) = self.last[i];
            let n = c.completed_msgs - n0;
            if n == 0 {
                return;
            }
            lat.push((c.latency_sum - sum0) as f64 / n as f64 / 1e6);
        }
        for (i, &f) in self.flows.iter().enumerate() {
            let c = &view.flows[f as usize];
            self.last[i] = (c.latency_sum, c.completed_msgs);
        }
        let now = view.time;
        let due: Vec<_> = self
            .retarget
            .iter()
            .filter(|r| r.0 <= now)
            .copied()
            .collect();
        self.retarget.retain(|r| r.0 > now);
        for (_, g, ratio) in due {
            if let Err(e) = self.sphinx.set_target(g, ratio) {
                self.error = Some(e);
                return;
            }
        }
        let before = self.sphinx.records().len();
        match self.sphinx.step(now, &lat) {
            Ok(acts) => {
                for a in acts {
                    self.pending.push(TimedAction {
                        time: now + self.sm_latency,
                        action: Action::SetFlowCcDelay {
                            flow: self.flows[a.flow],
                            ccti: a.delay,
                        },
                    });
                }
            }
            Err(e) => {
                self.error = Some(e);
                return;
            }
        }
        if let Ok(mut log) = self.log.lock() {
            log.extend_from_slice(&self.sphinx.records()[before..]);
        }
    }

    fn take_scheduled(&mut self, later: &mut Vec<TimedAction>) {
        later.append(&mut self.pending);
    }

    fn stop(&mut self) -> Option<String> {
        self.error.take().map(|e| format!("Sphinx: {e}"))
    }
}
