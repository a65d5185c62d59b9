//! Messages between HAs (doubling as EMs, G §5.1) and the PM, delivered
//! after a latency, in (arrival time, send order) — deterministic.

use crate::Time;
use serde::Serialize;
use std::collections::BTreeMap;

/// How an HA must change a cap.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "type")]
pub enum CapChange {
    /// Eq. 7 with this relative price change.
    Eq7 {
        /// Δp/p.
        rel: f64,
    },
    /// CC-Dist / PC-Dist: 5 × `share` points.
    Points {
        /// 1 for CC-Dist, the hurt share for PC-Dist.
        share: f64,
    },
    /// Minimum allocation: the VM's cap_min (price at its ceiling).
    Minimum,
}

/// A message.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "type")]
pub enum Message {
    /// HA → PM: an SLA violation.
    Violation {
        /// Event id.
        event: u64,
        /// Victim.
        vm: usize,
        /// Its host.
        host: usize,
        /// PD (fraction).
        pd: f64,
        /// Interval it was seen in.
        interval: u64,
    },
    /// HA → PM: CQEs of each local VM in an interval (for HB and IOmin).
    Usage {
        /// Host.
        host: usize,
        /// (VM, CQEs).
        cqes: Vec<(usize, u64)>,
    },
    /// PM → HA: change a cap; charge `price` from now on.
    CapUpdate {
        /// Event it answers.
        event: u64,
        /// VM.
        vm: usize,
        /// How.
        change: CapChange,
        /// The VME's price.
        price: f64,
    },
    /// PM → HA: a VME's new price (for charging only).
    Price {
        /// Host addressed.
        host: usize,
        /// VME.
        vme: usize,
        /// Price.
        price: f64,
    },
}

/// Messages in flight.
#[derive(Clone, Debug, Default)]
pub struct Mailbox {
    queue: BTreeMap<(Time, u64), Message>,
    seq: u64,
}

impl Mailbox {
    /// Sends `m` to arrive at `at`.
    pub fn send(&mut self, at: Time, m: Message) {
        self.queue.insert((at, self.seq), m);
        self.seq += 1;
    }
    /// Arrival time of the next message.
    pub fn next_arrival(&self) -> Option<Time> {
        self.queue.keys().next().map(|k| k.0)
    }
    /// Takes the next message if it arrives by `now`.
    pub fn pop_due(&mut self, now: Time) -> Option<(Time, Message)> {
        let (&(t, s), _) = self.queue.iter().next()?;
        if t > now {
            return None;
        }
        self.queue.remove(&(t, s)).map(|m| (t, m))
    }
    /// Messages in flight.
    pub fn len(&self) -> usize {
        self.queue.len()
    }
    /// None in flight.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}
