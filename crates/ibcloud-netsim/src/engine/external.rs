//! Stepping API for an external driver (the host layer of `ibcloud-host`):
//! flows whose messages are posted from outside instead of generated, a run
//! advanced in steps, and a report of every delivered message.
//!
//! ```text
//!   driver                         Simulation (external mode)
//!   start_external() ────────────► sources silenced, deliveries logged
//!   advance(t) ──────────────────► events ≤ t, stopping after the first
//!        ◄──────── Some(Delivery)   whole-message delivery (time, flow)
//!   post_external(flow, b)   ────► message into the QP's backlog
//! ```
//!
//! The driver keeps causality: it only posts at a time it has advanced to,
//! and a message of one flow completes in posting order (one path, one VL),
//! so the driver can match deliveries to its own FIFO of posted messages.
//! Nothing here changes a normal [`Simulation::run`].

use super::{Simulation, Time};
use crate::error::NetsimError;
use crate::stats::SimResult;

/// A whole message delivered: its last byte was consumed at the destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// When the last byte was consumed (ps).
    pub time: Time,
    /// The flow (queue pair) the message was posted on.
    pub flow: u32,
}

impl Simulation {
    /// Switches the simulation to external mode and starts it: every flow of
    /// the traffic spec stops generating messages (each is a queue pair the
    /// driver posts on with [`Simulation::post_external`]) and deliveries are logged.
    /// Call once, instead of [`Simulation::run`].
    pub fn start_external(&mut self) -> Result<(), NetsimError> {
        for f in &mut self.flows {
            f.def.stop = 0;
        }
        self.delivery_log = Some(Vec::new());
        self.begin()
    }

    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Time of the next pending event, if any.
    pub fn next_event_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.t)
    }

    /// Processes every event at or before `until` (and before the end of the
    /// run), but returns right after the first event that delivered a whole
    /// message. Without a delivery the clock is moved to `until`.
    pub fn advance(&mut self, until: Time) -> Result<Option<Delivery>, NetsimError> {
        let until = until.min(self.end);
        let mut quiet = |_: Time, _: Time| {};
        loop {
            if let Some(d) = self.take_delivery() {
                return Ok(Some(d));
            }
            match self.heap.peek_mut() {
                Some(e) if e.t <= until => {
                    let ev = self.heap.pop().expect("peeked");
                    self.dispatch(ev, &mut quiet)?;
                }
                _ => break,
            }
        }
        if self.now < until {
            self.now = until;
            // Every event up to `until` has run.
            self.cur_seq = u64::MAX;
        }
        Ok(None)
    }

    fn take_delivery(&mut self) -> Option<Delivery> {
        let log = self.delivery_log.as_mut()?;
        if log.is_empty() {
            return None;
        }
        let (time, flow) = log.remove(0);
        Some(Delivery { time, flow })
    }

    /// Posts a message of `bytes` on `flow` to the flow's destination at the
    /// current time. The backlog limit of generated traffic does not apply:
    /// the driver bounds its own outstanding work (transmission depth).
    pub fn post_external(&mut self, flow: u32, bytes: u32) -> Result<(), NetsimError> {
        let f = flow as usize;
        let Some(fl) = self.flows.get(f) else {
            return Err(NetsimError::Config(format!("post on unknown flow {flow}")));
        };
        let dst = match fl.def.dst {
            crate::traffic::Dst::Fixed(d) => d,
            _ => {
                return Err(NetsimError::Config(format!(
                    "flow {flow} has no single destination"
                )))
            }
        };
        self.flows[f].c.offered_msgs += 1;
        self.push_msg(f, dst, bytes);
        self.activate(flow);
        Ok(())
    }

    /// Applies a run-time action now (an SM's MAD reaching the fabric, a
    /// host agent's change), after the same check as [`Simulation::schedule`].
    pub fn act_external(&mut self, action: &crate::control::Action) -> Result<(), NetsimError> {
        self.check_action(action)
            .map_err(|problem| NetsimError::Event {
                at: format!("action at {} ps", self.now),
                problem,
            })?;
        self.apply(action);
        Ok(())
    }

    /// The results so far (counters and sampled series).
    pub fn external_result(&mut self) -> SimResult {
        self.result()
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }
}
