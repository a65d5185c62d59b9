//! Control: run-time events (link failure and restore, table, SL and SL2VL
//! changes) and the hook API a controller (a performance manager such as
//! dFtree's, ResEx, DRX, Sphinx) uses at every sweep.
//!
//! A controller sees the counters of every port and every flow's progress at
//! each sweep ([`SweepView`]) and answers with [`Action`]s, applied at once.
//! All hooks default to doing nothing.

use crate::error::NetsimError;
use crate::stats::{FlowCounters, PortCounters};
use crate::time::parse_duration;
use crate::time::Time;
use serde::{Deserialize, Serialize};

/// A change to the running fabric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Action {
    /// Set the SL of a flow (a QP): its next packets use it.
    SetFlowSl {
        /// Flow index.
        flow: u32,
        /// New SL (0–15).
        sl: u8,
    },
    /// Set the SL used by every flow for messages to `dst` (an endpoint
    /// index), as dFtree's host agent does per DLID; `None` clears it.
    SetDestinationSl {
        /// Destination endpoint index.
        dst: u32,
        /// SL, or none to return to each flow's own SL.
        sl: Option<u8>,
    },
    /// Set the SL the host agent of endpoint `host` uses for its QPs to
    /// `dst` (S003's Algorithm 2: only that host's flows to that DLID);
    /// `None` clears it. Takes precedence over [`Action::SetDestinationSl`].
    SetHostDestinationSl {
        /// Source endpoint index (the host that got the trap).
        host: u32,
        /// Destination endpoint index (the DLID of the trap).
        dst: u32,
        /// SL, or none to return to the flow's own SL.
        sl: Option<u8>,
    },
    /// Set one SL2VL table: on `node`, for packets entering at `in_port`
    /// (None: every input) and leaving at `out_port` (None: every output).
    SetSl2Vl {
        /// Node index.
        node: u32,
        /// Input port or all.
        in_port: Option<u8>,
        /// Output port or all.
        out_port: Option<u8>,
        /// SL → VL.
        map: [u8; 16],
    },
    /// Set a forwarding entry: `switch` sends `lid` out of `port` (255 = drop).
    SetLft {
        /// Switch node index.
        switch: u32,
        /// Destination LID.
        lid: u16,
        /// Output port.
        port: u8,
    },
    /// Take a link down (both directions), given by one of its port slots
    /// (node index and port). Packets routed to it are dropped and counted.
    LinkDown {
        /// Node index.
        node: u32,
        /// Port.
        port: u8,
    },
    /// Bring a link back up.
    LinkUp {
        /// Node index.
        node: u32,
        /// Port.
        port: u8,
    },
    /// Change a flow's offered rate (payload Gb/s; only for rate-driven flows).
    SetFlowRate {
        /// Flow index.
        flow: u32,
        /// New rate.
        gbps: f64,
    },
    /// A static congestion-control delay for a flow, as an SM pushes it to
    /// the flow's HCA (Sphinx, G §6.4: "the HCA turns the delay into a
    /// per-QP IRD"): the flow's packets use CCTI `max(ccti, the QP/SL's own
    /// CCTI)`, so their injection delay is at least `CCT[ccti]`; BECNs and
    /// the CCTI_Timer move the QP/SL's own index as usual. 0 removes it.
    /// Needs congestion control on.
    SetFlowCcDelay {
        /// Flow index.
        flow: u32,
        /// CCTI floor (0 to CCTI_Limit).
        ccti: u16,
    },
    /// Replace the VL arbitration tables of every output port, as an SM's
    /// VLArbitrationTable MADs do. Every port's arbitration restarts at the
    /// first entry of each table (a port reloads its table when written);
    /// packets already queued keep their VL.
    SetVlArbitration {
        /// The new tables (VLs must be operational).
        table: crate::config::VlArbitration,
    },
    /// Replace the congestion-control settings (switch marking, CA
    /// settings, CCT) of the whole fabric, as an SM's SwitchCongestionSetting,
    /// CACongestionSetting and CongestionControlTable MADs do; `None` turns
    /// congestion control off. The CCTI of every QP/SL is kept (a CA keeps its
    /// state when its setting is rewritten) and clamped to the new
    /// CCTI_Limit; with no congestion control before, every CCTI is 0, so
    /// traffic after the change sees what the same setting from time 0 gives
    /// to traffic that starts then.
    SetCongestionControl {
        /// The new setting, or none.
        config: Option<crate::config::CcConfig>,
    },
}

/// An action scheduled at a time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimedAction {
    /// When (ps).
    pub time: Time,
    /// What.
    pub action: Action,
}

/// What a controller sees at a sweep.
#[derive(Debug)]
pub struct SweepView<'a> {
    /// Simulated time now (ps).
    pub time: Time,
    /// Time since the previous sweep (ps).
    pub interval: Time,
    /// Cumulative counters per port slot (the fabric's slot numbering).
    pub ports: &'a [PortCounters],
    /// Counters per port slot at the previous sweep.
    pub previous_ports: &'a [PortCounters],
    /// Per port slot: (node index, port number, remote slot or u32::MAX,
    /// endpoint index or u32::MAX, is switch, data rate in Gb/s).
    pub slots: &'a [SlotInfo],
    /// Cumulative per-flow counters.
    pub flows: &'a [FlowCounters],
    /// Endpoint index → LID.
    pub endpoint_lids: &'a [u16],
    /// Per port slot: the link is up (false for unconnected slots and
    /// links taken down).
    pub link_up: &'a [bool],
}

/// Static description of a port slot for controllers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SlotInfo {
    /// Node index.
    pub node: u32,
    /// Port number.
    pub port: u8,
    /// Slot at the other end of the cable, or `u32::MAX`.
    pub remote: u32,
    /// Endpoint index of a CA port, or `u32::MAX`.
    pub endpoint: u32,
    /// True on switches.
    pub is_switch: bool,
    /// Data rate in Gb/s.
    pub gbps: f64,
}

/// A control loop run at every performance sweep. Every hook does nothing by
/// default.
pub trait Controller: Send {
    /// Called once before the first event.
    fn on_start(&mut self, _actions: &mut Vec<Action>) {}
    /// Called at every sweep with the counters; push actions to apply now.
    fn on_sweep(&mut self, _view: &SweepView<'_>, _actions: &mut Vec<Action>) {}
    /// Asked after every sweep, after [`Controller::on_sweep`]: actions to
    /// apply at a later time (a trap latency, a host-side delay, an SM
    /// reroute after its sweep). A time in the past means now.
    fn take_scheduled(&mut self, _later: &mut Vec<TimedAction>) {}
    /// Asked after every sweep: `Some(reason)` stops the run with an error
    /// (e.g. a scripted controller that failed).
    fn stop(&mut self) -> Option<String> {
        None
    }
}

/// The controller that does nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoController;

impl Controller for NoController {}

/// Reads run-time events from JSON: a list of objects with `time` (a
/// duration such as `"13ms"` or picoseconds) and the fields of an
/// [`Action`] (`type` in kebab-case). Names are resolved here: `node` and
/// `switch` may be node descriptions, `dst` an endpoint name, `flow` a flow
/// name; `resolve(kind, name)` answers for the simulation at hand.
pub fn parse_events(
    text: &str,
    resolve: &dyn Fn(&str, &str) -> Option<u32>,
) -> Result<Vec<TimedAction>, NetsimError> {
    let bad = |i: usize, problem: String| NetsimError::Event {
        at: format!("event {i}"),
        problem,
    };
    let list: Vec<serde_json::Value> =
        serde_json::from_str(text).map_err(|e| NetsimError::Event {
            at: format!("line {}", e.line()),
            problem: e.to_string(),
        })?;
    let mut out = Vec::with_capacity(list.len());
    for (i, mut v) in list.into_iter().enumerate() {
        let obj = v
            .as_object_mut()
            .ok_or_else(|| bad(i, "an event is a JSON object".into()))?;
        let time = match obj.remove("time") {
            Some(serde_json::Value::String(s)) => {
                parse_duration(&s).map_err(|e| bad(i, e.to_string()))?
            }
            Some(serde_json::Value::Number(n)) => n
                .as_u64()
                .ok_or_else(|| bad(i, "time must be non-negative".into()))?,
            _ => return Err(bad(i, "every event needs a time".into())),
        };
        for (key, kind) in [
            ("node", "node"),
            ("switch", "node"),
            ("dst", "endpoint"),
            ("flow", "flow"),
        ] {
            if let Some(serde_json::Value::String(name)) = obj.get(key).cloned() {
                let id = resolve(kind, &name)
                    .ok_or_else(|| bad(i, format!("unknown {kind} '{name}'")))?;
                obj.insert(key.into(), serde_json::Value::from(id));
            }
        }
        let action: Action = serde_json::from_value(v).map_err(|e| bad(i, e.to_string()))?;
        out.push(TimedAction { time, action });
    }
    Ok(out)
}
