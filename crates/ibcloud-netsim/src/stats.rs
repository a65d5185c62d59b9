//! Counters and results: port counters (PortXmitData, PortRcvData,
//! PortXmitWait, PortXmitPkts, PortRcvPkts), per-flow counters, the time
//! series sampled at sweeps, and the run's summary.

use crate::time::Time;
use serde::Serialize;

/// Cumulative counters of one port slot. Data counters are in bytes here;
/// the IB counters count 32-bit words ([`PortCounters::xmit_data_words`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PortCounters {
    /// Bytes sent (wire bytes of data packets, headers included).
    pub xmit_bytes: u64,
    /// Bytes received.
    pub rcv_bytes: u64,
    /// Packets sent.
    pub xmit_pkts: u64,
    /// Packets received.
    pub rcv_pkts: u64,
    /// XmitWait ticks: time with a packet waiting and nothing sent, over the tick.
    pub xmit_wait: u64,
    /// Packets marked FECN at this output.
    pub fecn_marked: u64,
}

impl PortCounters {
    /// PortXmitData in 32-bit words, as the PMA counts it.
    pub fn xmit_data_words(&self) -> u64 {
        self.xmit_bytes / 4
    }
    /// PortRcvData in 32-bit words.
    pub fn rcv_data_words(&self) -> u64 {
        self.rcv_bytes / 4
    }
}

/// Cumulative counters of one flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct FlowCounters {
    /// Payload bytes delivered to the destination host.
    pub delivered_bytes: u64,
    /// Payload bytes injected.
    pub injected_bytes: u64,
    /// Messages offered (posted or refused).
    pub offered_msgs: u64,
    /// Messages refused because the backlog was full.
    pub refused_msgs: u64,
    /// Messages completed (last byte delivered).
    pub completed_msgs: u64,
    /// Sum of message latencies (post → last byte at the sink), ps.
    pub latency_sum: u128,
    /// Largest message latency, ps.
    pub latency_max: Time,
    /// Current SL.
    pub sl: u8,
    /// Current CCTI (congestion control).
    pub ccti: u16,
    /// BECNs received.
    pub becns: u64,
}

/// One sample of one port.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PortSample {
    /// Sweep time (ps).
    pub time: Time,
    /// Port slot.
    pub slot: u32,
    /// Counters at that time.
    pub counters: PortCounters,
}

/// One interval of one flow.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FlowSample {
    /// End of the interval (ps).
    pub time: Time,
    /// Flow index.
    pub flow: u32,
    /// Payload Gb/s delivered in the interval.
    pub gbps: f64,
    /// Messages completed in the interval.
    pub completed: u64,
    /// Mean latency of those messages in us (NaN if none).
    pub mean_latency_us: f64,
    /// SL at the end of the interval.
    pub sl: u8,
}

/// Summary of one flow over the measured window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowSummary {
    /// Name.
    pub name: String,
    /// Source endpoint index.
    pub src: u32,
    /// Destination endpoint index, or u32::MAX for random destinations.
    pub dst: u32,
    /// Payload Gb/s over the whole run (after `start`).
    pub gbps: f64,
    /// Mean message latency in us.
    pub mean_latency_us: f64,
    /// Largest message latency in us.
    pub max_latency_us: f64,
    /// Cumulative counters.
    pub counters: FlowCounters,
}

/// What a run produced.
#[derive(Clone, Debug, Serialize)]
pub struct SimResult {
    /// Simulated time reached (ps).
    pub end_time: Time,
    /// Events processed.
    pub events: u64,
    /// 64-byte units times links crossed (HCA and switch links).
    pub unit_hops: u64,
    /// Packets times links crossed.
    pub packet_hops: u64,
    /// Packets dropped (routed to a down link or an empty LFT entry).
    pub dropped: u64,
    /// Per-flow summaries.
    pub flows: Vec<FlowSummary>,
    /// Final counters per port slot.
    pub ports: Vec<PortCounters>,
    /// Port counters at every sweep (if recorded).
    pub port_series: Vec<PortSample>,
    /// Flow throughput and latency per sweep interval.
    pub flow_series: Vec<FlowSample>,
    /// Port labels per slot.
    pub port_labels: Vec<String>,
    /// Endpoint names.
    pub endpoints: Vec<String>,
}
