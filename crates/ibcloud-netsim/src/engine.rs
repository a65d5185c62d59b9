//! The discrete-event core: links with credits, per-VL input FIFOs, output
//! and VL arbitration, HCAs (queue pairs, segmentation, host and sink
//! limits), congestion control, counters, sweeps and run-time actions.
//!
//! Everything lives in flat vectors indexed by port slot (× VL); packets come
//! from a preallocated pool; events pop in `(time, sequence)` order from a
//! timing wheel (`queue`), so equal-time events run in the order they were
//! scheduled.

use crate::config::{CaControl, CcConfig, CcDetection, SimConfig, VictimMask, VlArbEntry};
use crate::control::{Action, Controller, NoController, SlotInfo, SweepView, TimedAction};
use crate::error::NetsimError;
use crate::stats::{FlowCounters, FlowSample, FlowSummary, PortCounters, PortSample, SimResult};
use crate::time::Time;
use crate::topo::{Net, NONE};
use crate::traffic::{resolve, Arrival, Dst, FlowDef, TrafficSpec};
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::Fabric;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

mod external;
mod prefetch;
mod queue;
mod ring;
pub use external::Delivery;
use queue::{Ev, EventQueue};
use ring::Ring;

const F_FECN: u8 = 1;
const F_CNP: u8 = 2;
const F_LAST: u8 = 4;

const TX_DONE: u8 = 0;
const ARRIVE: u8 = 1;
const CREDIT: u8 = 2;
const SINK_DONE: u8 = 3;
const GEN: u8 = 4;
const FLOW_READY: u8 = 5;
const HCA_WAKE: u8 = 6;
const SWEEP: u8 = 7;
const ACTION: u8 = 8;

const NO_TIME: Time = Time::MAX;
const NO_SL: u8 = 255;

#[derive(Clone, Copy, Debug, Default)]
struct Pkt {
    flow: u32,
    /// Queue pair of the flow (congestion control keys its state by it).
    qp: u32,
    out_slot: u32,
    payload: u32,
    tail: Time,
    created: Time,
    dlid: u16,
    units: u16,
    sl: u8,
    vl: u8,
    out_vl: u8,
    flags: u8,
}

/// The per-slot state an event touches, together in one cache line (on a
/// large fabric a slot's state is rarely in the cache; one line per slot
/// instead of one per field).
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct PortState {
    /// End of the current transmission.
    tx_end: Time,
    /// A CREDIT wake-up is scheduled for this time (NO_TIME: none).
    credit_wake: Time,
    wait_since: Time,
    wait_acc: Time,
    /// HCA: the host DMA engine is free again at this time.
    dma_free: Time,
    /// Sequence number reserved for this transmission's TX_DONE (switch
    /// outputs): the event is scheduled only when something waits behind
    /// the packet, and then with this number, so it runs exactly where it
    /// would have run had it been scheduled at transmission.
    tx_seq: u64,
    /// Input FIFO whose head is on the wire (switch outputs), or NONE.
    cur_fifo: u32,
    /// Requests queued at this output (all VLs).
    pending: u32,
    busy: bool,
    /// A TX_DONE event is scheduled. An output gets one only when something
    /// waits to be sent on it (or, at a switch, behind its packet in the
    /// input FIFO); otherwise its link goes idle silently at `tx_end` and
    /// the next look at it retires the transmission (see `retire`).
    tx_done_due: bool,
    up: bool,
    wake_pending: bool,
}

impl Default for PortState {
    fn default() -> Self {
        Self {
            tx_end: 0,
            credit_wake: NO_TIME,
            wait_since: NO_TIME,
            wait_acc: 0,
            dma_free: 0,
            tx_seq: 0,
            cur_fifo: NONE,
            pending: 0,
            busy: false,
            tx_done_due: false,
            up: false,
            wake_pending: false,
        }
    }
}

/// The state of an output VL that arbitration reads, in one cache line
/// (each was a vector of its own: one line per field on every hop).
#[derive(Clone, Debug, Default)]
#[repr(align(64))]
struct OutLane {
    credits: i64,
    /// Units of the packets routed to this output VL and not yet sent.
    queued_units: u32,
    /// Credits on their way back from the receiver: (arrival, units), in
    /// arrival order. They count from their arrival on, taken in lazily
    /// (`absorb_credits`) when the output next arbitrates, so a credit
    /// return costs an event only when a blocked output waits for it.
    credit_q: Ring<(Time, u32)>,
    /// Requests: input FIFOs (switch) or flows (HCA) whose head waits.
    req: Ring<u32>,
}

/// An input VL's FIFO and its bookkeeping, in one record.
#[derive(Clone, Debug)]
struct InLane {
    fifo: Ring<u32>,
    /// When the last packet left the FIFO.
    last_pop: Time,
    /// The output the head is being sent on, or NONE (the packet record
    /// itself moves on with the packet).
    head_at: u32,
}

#[derive(Clone, Copy, Debug, Default)]
struct Arb {
    hi_idx: usize,
    hi_left: i32,
    lo_idx: usize,
    lo_left: i32,
    hi_bytes: u64,
}

#[derive(Clone, Copy, Debug)]
struct Msg {
    dst: u32,
    qp: u32,
    remaining: u32,
    created: Time,
    sl: u8,
}

#[derive(Debug)]
struct FlowState {
    def: FlowDef,
    rng: ChaCha8Rng,
    /// Messages waiting, one queue per VL (a source talks to each
    /// destination over its own connection, so a message stuck on one VL
    /// does not hold messages for the others).
    backlog: Vec<VecDeque<Msg>>,
    backlog_len: u32,
    /// Bit per VL: the flow sits in that VL's request queue.
    queued: u32,
    /// Waiting for its congestion-control injection delay.
    waiting: bool,
    /// CCTI floor set by [`Action::SetFlowCcDelay`] (0: none).
    cc_floor: u16,
    next_allowed: Time,
    next_gen: f64,
    gap: f64,
    trace_pos: usize,
    a2a_next: u32,
    sl: u8,
    c: FlowCounters,
    last: FlowCounters,
}

/// Congestion-control state of a QP (QP-based control) or of a source
/// port's SL (SL-based control).
#[derive(Clone, Copy, Debug, Default)]
struct CcState {
    ccti: u16,
    /// Start of the current CCTI_Timer period.
    cc_ref: Time,
    /// The earliest time this QP/SL may inject its next packet.
    next_allowed: Time,
}

/// Messages looked at past the head of a VL's queue when the head's QP is
/// waiting for its injection delay (QPs of one source are independent).
const QP_SCAN: usize = 64;

/// A prepared simulation: build with [`Simulation::new`], add actions and a
/// controller, then [`Simulation::run`].
pub struct Simulation {
    cfg: SimConfig,
    net: Net,
    v: usize,
    end: Time,
    now: Time,
    seq: u64,
    /// Sequence number of the event being run.
    cur_seq: u64,
    /// HCAs take each packet at its tail in one event (set by `begin`):
    /// with one VL and no sink rate limit an HCA's sink is always free when
    /// a packet's head comes in (the previous tail is in by then), so the
    /// completion time is the tail. Off with congestion control (the
    /// fields it needs carry the arrival's record) and for external
    /// drivers (their delivery order at equal times is kept as is).
    direct_sink: bool,
    /// Buckets with fewer sorted events left are not prefetched from
    /// (`prefetch::MIN_BUCKET`; a field so that a test can prefetch always).
    prefetch_min_bucket: usize,
    heap: EventQueue,
    pkts: Vec<Pkt>,
    free: Vec<u32>,
    /// Per slot: the hot state of each output, one cache line each.
    ports: Vec<PortState>,
    /// Per slot: link up (a copy of `PortState::up` for the sweep view).
    link_up: Vec<bool>,
    arb: Vec<Arb>,
    /// Per slot × VL: packets since the last FECN mark (Marking_Rate).
    mark_count: Vec<u16>,
    /// Per slot × VL: the output found its head packet short of credits
    /// since its last transmission (a victim port, IBA A10).
    stalled: Vec<bool>,
    /// CC state by [`Simulation::cc_key`].
    cc_states: std::collections::HashMap<u64, CcState>,
    cnp_q: Vec<VecDeque<u32>>,
    counters: Vec<PortCounters>,
    prev_counters: Vec<PortCounters>,
    /// Per slot × VL: the output lane (credits and queues).
    out: Vec<OutLane>,
    /// Per slot × VL: the input FIFO.
    inp: Vec<InLane>,
    // Per endpoint.
    sink_busy: Vec<bool>,
    sink_rr: Vec<u8>,
    dst_sl: Vec<u8>,
    // (source endpoint, destination endpoint) → SL set by a host agent.
    host_dst_sl: std::collections::HashMap<(u32, u32), u8>,
    /// Per node: SL2VL by (in, out) port; empty until an action sets one of
    /// the node's tables (then all `sl2vl_global` but those set), so the
    /// common case reads one shared 16-byte table.
    sl2vl: Vec<Vec<[u8; 16]>>,
    sl2vl_global: [u8; 16],
    /// Some node has its own SL2VL tables.
    sl2vl_any: bool,
    hi: Vec<VlArbEntry>,
    lo: Vec<VlArbEntry>,
    hi_limit_bytes: u64,
    flows: Vec<FlowState>,
    cc: Option<CcConfig>,
    cc_mark_units: u32,
    cc_min_payload: u32,
    host_kbps: Option<u64>,
    sink_kbps: Option<u64>,
    actions: Vec<TimedAction>,
    controller: Box<dyn Controller>,
    fatal: Option<NetsimError>,
    events: u64,
    unit_hops: u64,
    packet_hops: u64,
    dropped: u64,
    last_sweep: Time,
    port_series: Vec<PortSample>,
    flow_series: Vec<FlowSample>,
    slot_info: Vec<SlotInfo>,
    endpoint_names: Vec<String>,
    /// Deliveries (time, flow) of whole messages, kept only when an external
    /// driver (the host layer, see `external`) asked for them.
    delivery_log: Option<Vec<(Time, u32)>>,
}

impl std::fmt::Debug for Simulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulation")
            .field("now", &self.now)
            .field("end", &self.end)
            .field("flows", &self.flows.len())
            .field("events", &self.events)
            .finish()
    }
}

/// High_Limit in bytes: 255 = unlimited, 0 = one packet, else ×4096.
fn hi_limit_bytes(high_limit: u8) -> u64 {
    match high_limit {
        255 => u64::MAX,
        0 => 1,
        l => l as u64 * 4096,
    }
}

impl Simulation {
    /// Checks the configuration and traffic against the fabric and prepares a
    /// run of `end` picoseconds. Every bad input is reported here.
    pub fn new(
        fabric: &Fabric,
        tables: &ForwardingTables,
        cfg: &SimConfig,
        traffic: &TrafficSpec,
        end: Time,
    ) -> Result<Self, NetsimError> {
        cfg.validate()?;
        if end == 0 {
            return Err(NetsimError::Config(
                "the run length must be positive".into(),
            ));
        }
        let net = Net::new(fabric, tables)?;
        let v = cfg.vls as usize;
        let nslots = net.slots.len();
        let mtu_units = cfg.units(cfg.mtu) as u64;
        let mut credits = vec![0i64; nslots * v];
        for (i, s) in net.slots.iter().enumerate() {
            if s.remote == NONE {
                continue;
            }
            let r = &net.slots[s.remote as usize];
            let bytes = if r.is_switch {
                cfg.buffer_bytes
            } else {
                cfg.hca_buffer_bytes
            };
            let units = cfg.units_per_vl(bytes);
            if units < mtu_units {
                return Err(NetsimError::BufferTooSmall {
                    port: net.labels[s.remote as usize].clone(),
                    buffer_bytes: bytes / cfg.vls as u64,
                    mtu: cfg.mtu,
                    packet_bytes: cfg.wire_bytes(cfg.mtu) as u64,
                });
            }
            for vl in 0..v {
                credits[i * v + vl] = units as i64;
            }
        }
        let defs = resolve(traffic, fabric, &net, cfg, end)?;
        let global = match cfg.sl2vl {
            Some(m) => m,
            None => {
                let mut m = [0u8; 16];
                for (sl, x) in m.iter_mut().enumerate() {
                    *x = (sl % v) as u8;
                }
                m
            }
        };
        let sl2vl = vec![Vec::new(); net.num_ports.len()];
        let lo = if cfg.vl_arbitration.low.is_empty() {
            (0..cfg.vls)
                .map(|vl| VlArbEntry { vl, weight: 32 })
                .collect()
        } else {
            cfg.vl_arbitration.low.clone()
        };
        let hi = cfg.vl_arbitration.high.clone();
        let arb0 = Arb {
            hi_left: hi.first().map_or(0, |e| e.weight as i32),
            lo_left: lo.first().map_or(0, |e| e.weight as i32),
            ..Default::default()
        };
        let flows = defs
            .into_iter()
            .enumerate()
            .map(|(i, def)| {
                let gap = match &def.arrival {
                    Arrival::Rate { gap, .. } => *gap,
                    _ => 0.0,
                };
                let mut rng = ChaCha8Rng::seed_from_u64(
                    cfg.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i as u64 + 1),
                );
                let phase = if def.random_phase {
                    rng.random::<f64>() * gap
                } else {
                    0.0
                };
                FlowState {
                    rng,
                    backlog: (0..v).map(|_| VecDeque::new()).collect(),
                    backlog_len: 0,
                    queued: 0,
                    waiting: false,
                    cc_floor: 0,
                    next_allowed: 0,
                    next_gen: def.start as f64 + phase,
                    gap,
                    trace_pos: 0,
                    a2a_next: 0,
                    sl: def.sl,
                    c: FlowCounters {
                        sl: def.sl,
                        ..Default::default()
                    },
                    last: FlowCounters::default(),
                    def,
                }
            })
            .collect::<Vec<_>>();
        let slot_info = net
            .slots
            .iter()
            .map(|s| SlotInfo {
                node: s.node,
                port: s.port,
                remote: s.remote,
                endpoint: s.ep,
                is_switch: s.is_switch,
                gbps: s.kbps as f64 / 1e6,
            })
            .collect();
        let endpoint_names = (0..net.num_eps() as u32).map(|e| net.ep_name(e)).collect();
        let neps = net.num_eps();
        let cc = cfg.congestion_control.clone();
        let cc_mark_units = cc.as_ref().map_or(0, |c| {
            let per_vl = cfg.units_per_vl(cfg.buffer_bytes) as u32;
            (per_vl * (16 - c.threshold as u32)) / 16
        });
        let cc_min_payload = cc.as_ref().map_or(0, |c| c.min_packet_bytes);
        let sim = Self {
            v,
            end,
            now: 0,
            seq: 0,
            cur_seq: 0,
            direct_sink: false,
            prefetch_min_bucket: prefetch::MIN_BUCKET,
            heap: EventQueue::new(),
            pkts: Vec::with_capacity(1 << 14),
            free: Vec::new(),
            ports: net
                .slots
                .iter()
                .map(|sl| PortState {
                    up: sl.remote != NONE,
                    ..PortState::default()
                })
                .collect(),
            link_up: net.slots.iter().map(|s| s.remote != NONE).collect(),
            arb: vec![arb0; nslots],
            mark_count: vec![0; nslots * v],
            stalled: vec![false; nslots * v],
            cc_states: std::collections::HashMap::new(),
            cnp_q: (0..nslots).map(|_| VecDeque::new()).collect(),
            counters: vec![PortCounters::default(); nslots],
            prev_counters: vec![PortCounters::default(); nslots],
            out: credits
                .into_iter()
                .map(|credits| OutLane {
                    credits,
                    ..OutLane::default()
                })
                .collect(),
            inp: (0..nslots * v)
                .map(|_| InLane {
                    fifo: Ring::default(),
                    last_pop: 0,
                    head_at: NONE,
                })
                .collect(),
            sink_busy: vec![false; neps],
            sink_rr: vec![0; neps],
            dst_sl: vec![NO_SL; neps],
            host_dst_sl: std::collections::HashMap::new(),
            sl2vl,
            sl2vl_any: false,
            sl2vl_global: global,
            hi_limit_bytes: hi_limit_bytes(cfg.vl_arbitration.high_limit),
            hi,
            lo,
            flows,
            cc,
            cc_mark_units,
            cc_min_payload,
            host_kbps: cfg.host_gbps.map(|g| (g * 1e6).round().max(1.0) as u64),
            sink_kbps: cfg.sink_gbps.map(|g| (g * 1e6).round().max(1.0) as u64),
            actions: Vec::new(),
            controller: Box::new(NoController),
            fatal: None,
            events: 0,
            unit_hops: 0,
            packet_hops: 0,
            dropped: 0,
            last_sweep: 0,
            port_series: Vec::new(),
            flow_series: Vec::new(),
            slot_info,
            endpoint_names,
            delivery_log: None,
            net,
            cfg: cfg.clone(),
        };
        Ok(sim)
    }

    /// Schedules actions (run-time events). Checked now: a bad node, port,
    /// flow, SL or VL is an error before the run.
    pub fn schedule(&mut self, actions: &[TimedAction]) -> Result<(), NetsimError> {
        for (i, a) in actions.iter().enumerate() {
            self.check_action(&a.action)
                .map_err(|problem| NetsimError::Event {
                    at: format!("event {i} at {} ps", a.time),
                    problem,
                })?;
            if a.time > self.end {
                continue;
            }
            self.actions.push(a.clone());
        }
        Ok(())
    }

    /// Installs the controller called at every sweep.
    pub fn set_controller(&mut self, c: Box<dyn Controller>) {
        self.controller = c;
    }

    /// The endpoint index of a name (as the traffic spec resolves it).
    pub fn endpoint(&self, fabric: &Fabric, name: &str) -> Option<u32> {
        self.net.resolve(fabric, name)
    }

    /// Resolves names for [`crate::control::parse_events`]: `node` (node
    /// description, first word, or index), `endpoint`, `flow` (flow name).
    pub fn resolve_name(&self, fabric: &Fabric, kind: &str, name: &str) -> Option<u32> {
        match kind {
            "node" => name
                .parse::<u32>()
                .ok()
                .filter(|&i| (i as usize) < fabric.num_nodes())
                .or_else(|| {
                    fabric
                        .iter_nodes()
                        .find(|(_, n)| {
                            n.description == name
                                || n.description.split_whitespace().next() == Some(name)
                        })
                        .map(|(id, _)| id.0)
                }),
            "endpoint" => self.net.resolve(fabric, name),
            "flow" => self
                .flows
                .iter()
                .position(|f| f.def.name == name)
                .map(|i| i as u32),
            _ => None,
        }
    }

    /// Flow names in index order.
    pub fn flow_names(&self) -> Vec<String> {
        self.flows.iter().map(|f| f.def.name.clone()).collect()
    }

    fn check_action(&self, a: &Action) -> Result<(), String> {
        let nodes = self.net.num_ports.len() as u32;
        let port_ok = |node: u32, port: u8| {
            node < nodes && port >= 1 && port <= self.net.num_ports[node as usize]
        };
        match *a {
            Action::SetFlowSl { flow, sl } => {
                if flow as usize >= self.flows.len() {
                    return Err(format!("no flow {flow}"));
                }
                if sl > 15 {
                    return Err(format!("SL {sl} is not 0-15"));
                }
            }
            Action::SetDestinationSl { dst, sl } => {
                if dst as usize >= self.net.num_eps() {
                    return Err(format!("no endpoint {dst}"));
                }
                if sl.is_some_and(|s| s > 15) {
                    return Err("SL is not 0-15".into());
                }
            }
            Action::SetHostDestinationSl { host, dst, sl } => {
                if dst as usize >= self.net.num_eps() {
                    return Err(format!("no endpoint {dst}"));
                }
                if host as usize >= self.net.num_eps() {
                    return Err(format!("no endpoint {host}"));
                }
                if sl.is_some_and(|s| s > 15) {
                    return Err("SL is not 0-15".into());
                }
            }
            Action::SetSl2Vl {
                node,
                in_port,
                out_port,
                map,
            } => {
                if node >= nodes {
                    return Err(format!("no node {node}"));
                }
                let np = self.net.num_ports[node as usize];
                if in_port.is_some_and(|p| p > np) || out_port.is_some_and(|p| p > np) {
                    return Err(format!("node {node} has {np} ports"));
                }
                if let Some(vl) = map.iter().find(|&&vl| vl as usize >= self.v) {
                    return Err(format!("VL {vl} is not operational ({} VLs)", self.v));
                }
            }
            Action::SetLft { switch, lid, .. } => {
                if switch >= nodes || !self.net.is_switch[switch as usize] {
                    return Err(format!("node {switch} is not a switch"));
                }
                if lid == 0 || lid > 0xBFFF {
                    return Err(format!("LID {lid} is not unicast"));
                }
            }
            Action::LinkDown { node, port } | Action::LinkUp { node, port } => {
                if !port_ok(node, port) {
                    return Err(format!("no port {port} on node {node}"));
                }
                let s = self.net.first_slot[node as usize] + port as u32;
                if self.net.slots[s as usize].remote == NONE {
                    return Err(format!("node {node} port {port} has no link"));
                }
            }
            Action::SetFlowRate { flow, gbps } => {
                if flow as usize >= self.flows.len() {
                    return Err(format!("no flow {flow}"));
                }
                if !(gbps > 0.0 && gbps.is_finite()) {
                    return Err(format!("rate {gbps} must be positive"));
                }
            }
            Action::SetFlowCcDelay { flow, ccti } => {
                if flow as usize >= self.flows.len() {
                    return Err(format!("no flow {flow}"));
                }
                let Some(cc) = &self.cc else {
                    return Err(
                        "set-flow-cc-delay needs congestion control on (a cc setting)".into(),
                    );
                };
                if ccti > cc.ccti_limit {
                    return Err(format!("CCTI {ccti} is above CCTI_Limit {}", cc.ccti_limit));
                }
            }
            Action::SetVlArbitration { ref table } => {
                table.validate(self.v as u8).map_err(|e| e.to_string())?;
            }
            Action::SetCongestionControl { ref config } => {
                if let Some(cc) = config {
                    cc.validate().map_err(|e| e.to_string())?;
                }
            }
        }
        Ok(())
    }

    /// (slot, VL) of a per slot × VL index. Most runs have one VL, where
    /// this is free instead of an integer division on every hop.
    #[inline(always)]
    fn slot_vl(&self, k: usize) -> (usize, usize) {
        if self.v == 1 {
            (k, 0)
        } else {
            (k / self.v, k % self.v)
        }
    }

    #[inline]
    fn push(&mut self, t: Time, kind: u8, a: u32, b: u32) {
        self.seq += 1;
        self.heap.push(Ev::new(t, self.seq, kind, a, b));
    }

    #[inline]
    fn ser(bytes: u32, kbps: u64) -> Time {
        (bytes as u64 * 8_000_000_000).div_ceil(kbps)
    }

    /// A record for packet `p`, reused from the free list if one is there
    /// (inlined: every generated packet takes one).
    #[inline]
    fn alloc(&mut self, p: Pkt) -> u32 {
        if let Some(i) = self.free.pop() {
            self.pkts[i as usize] = p;
            i
        } else {
            self.alloc_new(p)
        }
    }

    /// `alloc` with an empty free list: a new record while the pool may
    /// grow, else the budget error.
    #[cold]
    #[inline(never)]
    fn alloc_new(&mut self, p: Pkt) -> u32 {
        if self.pkts.len() < self.cfg.max_packets as usize {
            self.pkts.push(p);
            (self.pkts.len() - 1) as u32
        } else {
            if self.fatal.is_none() {
                self.fatal = Some(NetsimError::Budget {
                    time_us: self.now as f64 / 1e6,
                    what: format!(
                        "more than {} packets in flight (max-packets)",
                        self.cfg.max_packets
                    ),
                });
            }
            // Reuse slot 0 so the run can stop cleanly.
            0
        }
    }

    /// Runs to the end. `progress` is called at every sweep with (now, end).
    pub fn run_with(
        &mut self,
        progress: &mut dyn FnMut(Time, Time),
    ) -> Result<SimResult, NetsimError> {
        self.begin()?;
        while let Some(ev) = self.heap.pop() {
            if ev.t > self.end {
                break;
            }
            self.prefetch_ahead();
            self.dispatch(ev, progress)?;
        }
        Ok(self.result())
    }

    /// Prefetches, in four stages, what the next events of the current
    /// bucket will touch (see `prefetch`): far ahead the lines an event
    /// names directly, then those their contents point to (a packet's
    /// forwarding entry, the upstream sender whose credit queue a
    /// transmission writes, a generating flow's HCA output, the queues'
    /// buffers), then the output the forwarding entry selects (or the input
    /// FIFO an output serves next), and nearest the queue buffers, packet
    /// records and far link ends those point to.
    #[inline]
    fn prefetch_ahead(&self) {
        if self.heap.sorted_len() < self.prefetch_min_bucket {
            return;
        }
        let v = self.v;
        // The record the next new packet will take (the free list is a
        // stack: recently freed, but on a large pool no longer cached).
        if let Some(&pid) = self.free.last() {
            prefetch::elem(&self.pkts, pid as usize);
        }
        let pkt_in = |e: &Ev| self.pkts.get(e.b as usize);
        // The output a switch arrival will be forwarded to (its forwarding
        // entry, prefetched by the stage before, is read here).
        let arrival_out = |e: &Ev| {
            let (p, slot) = (pkt_in(e)?, self.net.slots.get(e.a as usize)?);
            let out = if slot.is_switch {
                self.net.route(slot.node, p.dlid)
            } else {
                NONE
            };
            (out != NONE).then_some(out as usize)
        };
        if let Some(e) = self.heap.ahead(prefetch::STAGE1) {
            let a = e.a as usize;
            match e.kind() {
                ARRIVE => {
                    prefetch::elem(&self.pkts, e.b as usize);
                    prefetch::elem(&self.net.slots, a);
                    prefetch::elem(&self.counters, a);
                    prefetch::elem(&self.inp, a * v);
                }
                TX_DONE | CREDIT | HCA_WAKE => {
                    prefetch::elem(&self.ports, a);
                    prefetch::elem(&self.net.slots, a);
                    prefetch::lane(&self.out, a * v);
                }
                SINK_DONE => {
                    if let Some(&s) = self.net.ep_slot.get(a) {
                        prefetch::elem(&self.inp, s as usize * v + e.b as usize);
                        prefetch::elem(&self.counters, s as usize);
                    }
                }
                GEN => prefetch::elem(&self.flows, a),
                _ => {}
            }
        }
        if let Some(e) = self.heap.ahead(prefetch::STAGE2) {
            let a = e.a as usize;
            match e.kind() {
                ARRIVE => {
                    if let (Some(p), Some(slot)) = (pkt_in(e), self.net.slots.get(a)) {
                        if slot.is_switch {
                            if let Some(r) = self.net.lft_entry_ref(slot.node, p.dlid) {
                                prefetch::line(r);
                            }
                        }
                        // The sender upstream gets this packet's credits
                        // when it leaves.
                        let up = slot.remote as usize;
                        prefetch::elem(&self.ports, up);
                        prefetch::lane(&self.out, up * v + p.vl as usize);
                    }
                    if let Some(b) = self.inp.get(a * v).and_then(|l| l.fifo.back()) {
                        prefetch::line(b);
                    }
                }
                TX_DONE | CREDIT | HCA_WAKE => {
                    if let Some(p) = self.ports.get(a) {
                        if p.cur_fifo != NONE {
                            prefetch::elem(&self.inp, p.cur_fifo as usize);
                        }
                    }
                    if let Some(f) = self.out.get(a * v).and_then(|l| l.req.front()) {
                        prefetch::line(f);
                    }
                    if let Some(c) = self.out.get(a * v).and_then(|l| l.credit_q.front()) {
                        prefetch::line(c);
                    }
                }
                SINK_DONE => {
                    if let Some(&s) = self.net.ep_slot.get(a) {
                        let q = self.inp.get(s as usize * v + e.b as usize);
                        if let Some(&pid) = q.and_then(|l| l.fifo.front()) {
                            prefetch::elem(&self.pkts, pid as usize);
                        }
                    }
                }
                GEN => {
                    // The source HCA's output, which the new message may
                    // be sent on at once.
                    let src = self.flows.get(a).map(|f| f.def.src as usize);
                    if let Some(&s) = src.and_then(|src| self.net.ep_slot.get(src)) {
                        let s = s as usize;
                        prefetch::elem(&self.ports, s);
                        prefetch::elem(&self.net.slots, s);
                        prefetch::elem(&self.counters, s);
                        prefetch::lane(&self.out, s * v);
                    }
                }
                _ => {}
            }
        }
        if let Some(e) = self.heap.ahead(prefetch::STAGE3) {
            let a = e.a as usize;
            match e.kind() {
                ARRIVE => {
                    if let Some(o) = arrival_out(e) {
                        prefetch::elem(&self.ports, o);
                        prefetch::elem(&self.net.slots, o);
                        prefetch::lane(&self.out, o * v);
                        prefetch::elem(&self.counters, o);
                    }
                    if let (Some(p), Some(slot)) = (pkt_in(e), self.net.slots.get(a)) {
                        let up = slot.remote as usize * v + p.vl as usize;
                        if let Some(c) = self.out.get(up).and_then(|l| l.credit_q.back()) {
                            prefetch::line(c);
                        }
                    }
                }
                TX_DONE | CREDIT => {
                    // The next request's input FIFO and its sender.
                    if let Some(&fid) = self.out.get(a * v).and_then(|l| l.req.front()) {
                        let f = fid as usize;
                        prefetch::elem(&self.inp, f);
                        let (fs, fv) = self.slot_vl(f);
                        if let Some(slot) = self.net.slots.get(fs) {
                            prefetch::elem(&self.ports, slot.remote as usize);
                            prefetch::lane(&self.out, slot.remote as usize * v + fv);
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some(e) = self.heap.ahead(prefetch::STAGE4) {
            let a = e.a as usize;
            match e.kind() {
                ARRIVE => {
                    if let Some(out) = arrival_out(e) {
                        let lane = self.out.get(out * v);
                        if let Some(r) = lane.and_then(|l| l.req.back()) {
                            prefetch::line(r);
                        }
                        if let Some(c) = lane.and_then(|l| l.credit_q.front()) {
                            prefetch::line(c);
                        }
                        // The far end of the output's link.
                        if let Some(o) = self.net.slots.get(out) {
                            prefetch::elem(&self.net.slots, o.remote as usize);
                            prefetch::elem(&self.inp, o.remote as usize * v);
                        }
                    }
                }
                TX_DONE | CREDIT => {
                    // The next request's packet and its sender's credit
                    // queue buffer.
                    if let Some(&fid) = self.out.get(a * v).and_then(|l| l.req.front()) {
                        let f = fid as usize;
                        if let Some(&pid) = self.inp.get(f).and_then(|l| l.fifo.front()) {
                            prefetch::elem(&self.pkts, pid as usize);
                        }
                        let (fs, fv) = self.slot_vl(f);
                        if let Some(slot) = self.net.slots.get(fs) {
                            let up = slot.remote as usize * v + fv;
                            if let Some(c) = self.out.get(up).and_then(|l| l.credit_q.back()) {
                                prefetch::line(c);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Applies the controller's start actions and schedules the first
    /// generations, actions and sweep (the part of a run before its loop).
    fn begin(&mut self) -> Result<(), NetsimError> {
        let mut start_actions = Vec::new();
        self.controller.on_start(&mut start_actions);
        for a in start_actions {
            if let Err(problem) = self.check_action(&a) {
                return Err(NetsimError::Event {
                    at: "controller start".into(),
                    problem,
                });
            }
            self.apply(&a);
        }
        for i in 0..self.flows.len() {
            let t = (self.flows[i].next_gen.round() as Time).max(self.flows[i].def.start);
            if t < self.end {
                self.push(t, GEN, i as u32, 0);
            }
        }
        self.actions.sort_by_key(|a| a.time);
        for i in 0..self.actions.len() {
            let t = self.actions[i].time;
            self.push(t, ACTION, i as u32, 0);
        }
        let iv = self.cfg.sweep_interval;
        self.push(iv.min(self.end), SWEEP, 0, 0);
        // A run-time congestion-control setting needs the per-arrival
        // records the direct sink skips, so it is off when one is scheduled.
        let cc_later = self
            .actions
            .iter()
            .any(|a| matches!(a.action, Action::SetCongestionControl { .. }));
        self.direct_sink = self.v == 1
            && self.sink_kbps.is_none()
            && self.cc.is_none()
            && !cc_later
            && self.delivery_log.is_none();
        Ok(())
    }

    /// Runs one event popped from the heap.
    fn dispatch(
        &mut self,
        ev: Ev,
        progress: &mut dyn FnMut(Time, Time),
    ) -> Result<(), NetsimError> {
        let iv = self.cfg.sweep_interval;
        {
            self.now = ev.t;
            self.cur_seq = ev.seq();
            self.events += 1;
            match ev.kind() {
                TX_DONE => self.tx_done(ev.a),
                ARRIVE => self.arrive(ev.a, ev.b),
                CREDIT => {
                    let s = ev.a as usize;
                    if self.ports[s].credit_wake <= self.now {
                        self.ports[s].credit_wake = NO_TIME;
                    }
                    self.try_send(ev.a);
                }
                SINK_DONE => self.sink_done(ev.a, ev.b as usize),
                GEN => self.gen(ev.a),
                FLOW_READY => {
                    let f = ev.a as usize;
                    self.flows[f].waiting = false;
                    self.activate(ev.a);
                }
                HCA_WAKE => {
                    self.ports[ev.a as usize].wake_pending = false;
                    self.try_send(ev.a);
                }
                SWEEP => {
                    self.sweep();
                    progress(self.now, self.end);
                    if self.now < self.end {
                        let next = (self.now + iv).min(self.end);
                        self.push(next, SWEEP, 0, 0);
                    }
                }
                ACTION => {
                    let a = self.actions[ev.a as usize].action.clone();
                    self.apply(&a);
                }
                _ => {}
            }
            // One test on the usual path, where neither holds.
            if self.events >= self.cfg.max_events || self.fatal.is_some() {
                return Err(self.fatal.take().unwrap_or_else(|| NetsimError::Budget {
                    time_us: self.now as f64 / 1e6,
                    what: format!("more than {} events (max-events)", self.cfg.max_events),
                }));
            }
        }
        Ok(())
    }

    /// Runs to the end without progress reports.
    pub fn run(&mut self) -> Result<SimResult, NetsimError> {
        self.run_with(&mut |_, _| {})
    }

    // ---- switches and links -------------------------------------------------

    fn tx_done(&mut self, slot: u32) {
        let s = slot as usize;
        self.ports[s].busy = false;
        self.ports[s].tx_done_due = false;
        if let Some(f) = self.pop_in_service(s, self.now) {
            // Its credits, queued when it started (`try_send_switch`), are
            // released: wake the sender if it waits.
            let sender = self.net.slots[self.slot_vl(f).0].remote;
            if sender != NONE && self.waiting_output(sender as usize) {
                let t = self.now + self.cfg.link_delay;
                self.wake_for_credits(sender as usize, t);
            }
            if !self.inp[f].fifo.is_empty() {
                self.head_request(f as u32);
            }
        }
        self.try_send(slot);
    }

    /// A switch output's packet leaves its input FIFO at `at`; returns that
    /// FIFO (None for an HCA output, which has no input FIFO).
    fn pop_in_service(&mut self, s: usize, at: Time) -> Option<usize> {
        let fid = std::mem::replace(&mut self.ports[s].cur_fifo, NONE);
        if fid == NONE {
            return None;
        }
        let f = fid as usize;
        let lane = &mut self.inp[f];
        lane.fifo.pop_front().expect("head in service");
        lane.head_at = NONE;
        lane.last_pop = at;
        Some(f)
    }

    /// Output `s` finished its transmission at `tx_end` (now or earlier)
    /// without a TX_DONE event, because nothing waited for it: the link is
    /// free and a switch output's packet leaves its input FIFO, as the
    /// TX_DONE would have done at `tx_end`.
    fn retire(&mut self, s: usize) {
        debug_assert!(self.ports[s].busy && !self.ports[s].tx_done_due);
        debug_assert!(self.now >= self.ports[s].tx_end);
        self.ports[s].busy = false;
        let tx_end = self.ports[s].tx_end;
        if let Some(f) = self.pop_in_service(s, tx_end) {
            if !self.inp[f].fifo.is_empty() {
                self.head_request(f as u32);
            }
        }
    }

    /// Output `s` is sending without a TX_DONE event and something now
    /// waits for it: retire the transmission if it has ended, else schedule
    /// the event (a switch output's with its reserved sequence number).
    #[inline]
    fn need_tx_done(&mut self, s: usize) {
        let end = self.ports[s].tx_end;
        let is_switch = self.net.slots[s].is_switch;
        // At `tx_end` itself, a switch output's TX_DONE has run already
        // only if it comes before the current event.
        if self.now > end
            || (self.now == end && (!is_switch || self.ports[s].tx_seq < self.cur_seq))
        {
            self.retire(s);
        } else {
            self.ports[s].tx_done_due = true;
            let t = end;
            if is_switch {
                let seq = self.ports[s].tx_seq;
                self.heap.push(Ev::new(t, seq, TX_DONE, s as u32, 0));
            } else {
                self.push(t, TX_DONE, s as u32, 0);
            }
        }
    }

    /// Returns `units` credits of input buffer `fid` to the sender upstream:
    /// they reach it a link delay after `at`. The sender takes them in when
    /// it next arbitrates; an event wakes it only if it is waiting now.
    #[inline]
    fn return_credit(&mut self, fid: u32, units: u32, at: Time) {
        let (in_slot, vl) = self.slot_vl(fid as usize);
        let sender = self.net.slots[in_slot].remote;
        if sender == NONE {
            return;
        }
        let u = sender as usize;
        let k = u * self.v + vl;
        let t = at + self.cfg.link_delay;
        self.queue_credit(k, t, units);
        if self.waiting_output(u) {
            self.wake_for_credits(u, t);
        }
    }

    /// Queues `units` credits arriving at `t` for output VL `k`.
    #[inline(always)]
    fn queue_credit(&mut self, k: usize, t: Time, units: u32) {
        let q = &mut self.out[k].credit_q;
        if q.back().is_none_or(|b| b.0 <= t) {
            q.push_back((t, units));
        } else {
            // A dropped packet's credits return after its tail, possibly
            // later than those of packets behind it: keep arrival order.
            let at = q.partition_point(|c| c.0 <= t);
            q.insert(at, (t, units));
        }
    }

    /// The input FIFO whose credits output VL `k` receives, if its head is
    /// on the wire and its credits (the last entry of `credit_q[k]`) are
    /// therefore not yet released.
    #[inline]
    fn unreleased_from(&self, k: usize) -> Option<u32> {
        let (s, vl) = self.slot_vl(k);
        let r = self.net.slots[s].remote;
        if r == NONE {
            return None;
        }
        let f = r as usize * self.v + vl;
        let o = self.inp[f].head_at;
        (o != NONE).then_some(o)
    }

    /// Output `s` is idle with requests it could not serve (for lack of
    /// credits, host DMA or an injection delay).
    #[inline]
    fn waiting_output(&self, s: usize) -> bool {
        !self.ports[s].busy && self.ports[s].up && self.ports[s].pending > 0
    }

    /// Schedules a CREDIT wake-up of output `s` at `t` unless one comes
    /// earlier.
    #[inline]
    fn wake_for_credits(&mut self, s: usize, t: Time) {
        if t < self.ports[s].credit_wake {
            self.ports[s].credit_wake = t;
            self.push(t, CREDIT, s as u32, 0);
        }
    }

    /// Takes in the credits of output VL `k` that have arrived by now.
    #[inline]
    fn absorb_credits(&mut self, k: usize) {
        let now = self.now;
        let lane = &mut self.out[k];
        while let Some(&(t, u)) = lane.credit_q.front() {
            if t > now {
                break;
            }
            lane.credit_q.pop_front();
            lane.credits += u as i64;
        }
    }

    fn arrive(&mut self, slot: u32, pid: u32) {
        let s = slot as usize;
        let v = self.v;
        let (wire, vl) = {
            let p = &self.pkts[pid as usize];
            (
                p.payload
                    + if p.flags & F_CNP != 0 {
                        64
                    } else {
                        self.cfg.wire_overhead_bytes
                    },
                p.vl as usize,
            )
        };
        let c = &mut self.counters[s];
        c.rcv_bytes += wire as u64;
        c.rcv_pkts += 1;
        let fid = s * v + vl;
        let o = self.inp[fid].head_at;
        if o != NONE && !self.ports[o as usize].tx_done_due {
            // The head is on the wire without a TX_DONE (only switch FIFOs
            // have a head in service): this packet waits behind it.
            self.need_tx_done(o as usize);
        }
        let info = &self.net.slots[s];
        if info.is_switch {
            let node = info.node;
            let in_port = info.port as usize;
            let p = &mut self.pkts[pid as usize];
            let out = self.net.route(node, p.dlid);
            p.out_slot = out;
            if out != NONE {
                // `sl2vl_any`: no per-node table was ever set, so the
                // node's (empty) entry need not be read on every hop.
                let tables = &self.sl2vl[node as usize];
                let map = if !self.sl2vl_any || tables.is_empty() {
                    &self.sl2vl_global
                } else {
                    let np = self.net.num_ports[node as usize] as usize + 1;
                    let out_port = self.net.slots[out as usize].port as usize;
                    &tables[in_port * np + out_port]
                };
                p.out_vl = map[p.sl as usize & 15];
                self.out[out as usize * v + p.out_vl as usize].queued_units += p.units as u32;
            }
            let fifo = &mut self.inp[fid].fifo;
            fifo.push_back(pid);
            if fifo.len() == 1 {
                self.head_request(fid as u32);
            }
        } else {
            let ep = info.ep;
            self.inp[fid].fifo.push_back(pid);
            if ep != NONE && !self.sink_busy[ep as usize] {
                self.start_sink(ep);
            }
        }
    }

    /// The head of input FIFO `fid` asks for its output (dropping packets
    /// whose output is gone).
    fn head_request(&mut self, fid: u32) {
        let f = fid as usize;
        while let Some(&pid) = self.inp[f].fifo.front() {
            let p = self.pkts[pid as usize];
            let out = p.out_slot;
            if out != NONE && self.ports[out as usize].up {
                let k = out as usize * self.v + p.out_vl as usize;
                self.out[k].req.push_back(fid);
                self.ports[out as usize].pending += 1;
                self.try_send(out);
                return;
            }
            // Drop: no route or the link is down.
            self.inp[f].fifo.pop_front();
            self.inp[f].last_pop = self.now;
            if out != NONE {
                self.out[out as usize * self.v + p.out_vl as usize].queued_units -= p.units as u32;
            }
            self.dropped += 1;
            self.return_credit(fid, p.units as u32, self.now.max(p.tail));
            self.free.push(pid);
        }
    }

    /// The request at the head of switch output VL `k` if its credits
    /// suffice: (input FIFO, its head packet, the packet's units).
    #[inline(always)]
    fn switch_head(&self, k: usize) -> Option<(u32, u32, u32)> {
        let lane = &self.out[k];
        let fid = *lane.req.front()?;
        let pid = *self.inp[fid as usize].fifo.front()?;
        let units = self.pkts[pid as usize].units as u32;
        (lane.credits >= units as i64).then_some((fid, pid, units))
    }

    #[inline]
    fn front_units(&self, k: usize, is_switch: bool) -> Option<u32> {
        let r = *self.out[k].req.front()?;
        if is_switch {
            let pid = *self.inp[r as usize].fifo.front()?;
            Some(self.pkts[pid as usize].units as u32)
        } else {
            let f = &self.flows[r as usize];
            let m = f.backlog[self.slot_vl(k).1].front()?;
            Some(self.cfg.units(m.remaining.min(self.cfg.mtu)))
        }
    }

    #[inline]
    fn eligible(&self, slot: usize, vl: u8, is_switch: bool) -> bool {
        let k = slot * self.v + vl as usize;
        match self.front_units(k, is_switch) {
            Some(u) => self.out[k].credits >= u as i64,
            None => false,
        }
    }

    /// VL arbitration: high table (within the high limit), then low table,
    /// skipping VLs with nothing to send or too few credits. Inlined for
    /// the one-VL case, which needs no arbitration.
    #[inline]
    fn pick_vl(&mut self, slot: usize, is_switch: bool) -> Option<(u8, bool)> {
        if self.v == 1 {
            return self.eligible(slot, 0, is_switch).then_some((0, false));
        }
        self.arbitrate(slot, is_switch)
    }

    /// `pick_vl` with more than one VL: the VL arbitration tables.
    #[inline(never)]
    fn arbitrate(&mut self, slot: usize, is_switch: bool) -> Option<(u8, bool)> {
        let mut st = self.arb[slot];
        let lo_any = self
            .lo
            .iter()
            .any(|e| e.weight > 0 && self.eligible(slot, e.vl, is_switch));
        let mut out = None;
        if !self.hi.is_empty() && (st.hi_bytes < self.hi_limit_bytes || !lo_any) {
            if let Some(vl) =
                self.pick_table(&self.hi, &mut st.hi_idx, &mut st.hi_left, slot, is_switch)
            {
                out = Some((vl, true));
            }
        }
        if out.is_none() && lo_any {
            if let Some(vl) =
                self.pick_table(&self.lo, &mut st.lo_idx, &mut st.lo_left, slot, is_switch)
            {
                out = Some((vl, false));
            }
        }
        self.arb[slot] = st;
        out
    }

    fn pick_table(
        &self,
        t: &[VlArbEntry],
        idx: &mut usize,
        left: &mut i32,
        slot: usize,
        sw: bool,
    ) -> Option<u8> {
        let n = t.len();
        for _ in 0..=n {
            let e = t[*idx];
            if e.weight > 0 && *left > 0 && self.eligible(slot, e.vl, sw) {
                return Some(e.vl);
            }
            *idx = (*idx + 1) % n;
            *left = t[*idx].weight as i32;
        }
        None
    }

    fn charge_arb(&mut self, slot: usize, hi: bool, units: u32, wire: u32) {
        if self.v == 1 {
            return;
        }
        let st = &mut self.arb[slot];
        if hi {
            st.hi_left -= units as i32;
            st.hi_bytes += wire as u64;
        } else {
            st.lo_left -= units as i32;
            st.hi_bytes = 0;
        }
    }

    fn try_send(&mut self, slot: u32) {
        let s = slot as usize;
        let p = &self.ports[s];
        // A link without a TX_DONE event: idle since `tx_end`, or it needs
        // the event now that something waits.
        if p.busy && !p.tx_done_due && (self.now >= p.tx_end || p.pending > 0) {
            self.need_tx_done(s);
        }
        if self.waiting_output(s) {
            if self.v == 1 {
                self.absorb_credits(s);
            } else {
                for k in s * self.v..(s + 1) * self.v {
                    self.absorb_credits(k);
                }
            }
            if self.net.slots[s].is_switch {
                self.try_send_switch(s);
            } else {
                self.try_send_hca(s);
            }
            if self.waiting_output(s) {
                // Still waiting: wake up when the next released credits
                // arrive; credits not released yet get their TX_DONE, which
                // wakes this output when they are.
                let mut next = None::<Time>;
                for k in s * self.v..(s + 1) * self.v {
                    let mut unreleased = 0;
                    if let Some(o) = self.unreleased_from(k) {
                        if !self.ports[o as usize].tx_done_due {
                            self.need_tx_done(o as usize);
                        }
                        if self.unreleased_from(k).is_some() {
                            unreleased = 1;
                        }
                    }
                    let q = &self.out[k].credit_q;
                    if q.len() > unreleased {
                        let t = q.front().expect("non-empty").0;
                        next = Some(next.map_or(t, |n| n.min(t)));
                    }
                }
                if let Some(t) = next {
                    self.wake_for_credits(s, t);
                }
            }
        }
        self.update_wait(s);
    }

    fn update_wait(&mut self, s: usize) {
        let now = self.now;
        let p = &mut self.ports[s];
        let waiting =
            !p.busy && p.up && p.pending > 0 && (self.net.slots[s].is_switch || now >= p.dma_free);
        if waiting {
            if p.wait_since == NO_TIME {
                p.wait_since = now;
            }
        } else if p.wait_since != NO_TIME {
            p.wait_acc += now - p.wait_since;
            p.wait_since = NO_TIME;
        }
    }

    fn try_send_switch(&mut self, s: usize) {
        if self.cc.is_some() {
            // Victim detection: a VL whose head request lacks credits while
            // the link is free cannot send for lack of credits.
            for vl in 0..self.v {
                let k = s * self.v + vl;
                if let Some(u) = self.front_units(k, true) {
                    if self.out[k].credits < u as i64 {
                        self.stalled[k] = true;
                    }
                }
            }
        }
        let ((vl, hi), (fid, pid, units)) = if self.v == 1 {
            // One VL: no arbitration, the head request either fits or not.
            let Some(head) = self.switch_head(s) else {
                return;
            };
            ((0, false), head)
        } else {
            let Some((vl, hi)) = self.pick_vl(s, true) else {
                return;
            };
            let head = self.switch_head(s * self.v + vl as usize);
            ((vl, hi), head.expect("eligible"))
        };
        let k = s * self.v + vl as usize;
        let lane = &mut self.out[k];
        lane.req.pop_front();
        lane.queued_units -= units;
        self.ports[s].pending -= 1;
        self.inp[fid as usize].head_at = s as u32;
        self.ports[s].cur_fifo = fid;
        if self.cc.is_some() {
            self.cc_mark(s, k, pid);
        }
        let wire = self.transmit(s, pid, vl);
        self.charge_arb(s, hi, units, wire);
        // The packet leaves its input buffer when its tail has gone out
        // (`tx_end`): its credits are queued for the sender now, stamped
        // with their arrival, and count from then on. They are *released*
        // at `tx_end` (this transmission's TX_DONE or `retire`); a sender
        // that waits for credits before that needs the TX_DONE, which wakes
        // it exactly as a credit return at `tx_end` would.
        let end = self.ports[s].tx_end;
        let (in_slot, in_vl) = self.slot_vl(fid as usize);
        let sender = self.net.slots[in_slot].remote;
        if sender != NONE {
            let k = sender as usize * self.v + in_vl;
            self.queue_credit(k, end + self.cfg.link_delay, units);
            if self.waiting_output(sender as usize) && !self.ports[s].tx_done_due {
                self.need_tx_done(s);
            }
        }
    }

    /// Congestion control at a switch output (IBA A10): output VL `k` is
    /// congested when what is queued for it (see [`CcDetection`]) exceeds
    /// the threshold; a victim (it waited for credits before this packet)
    /// marks only under Victim_Mask; one in Marking_Rate + 1 packets of at
    /// least Packet_Size gets FECN.
    fn cc_mark(&mut self, s: usize, k: usize, pid: u32) {
        let Some(cc) = &self.cc else { return };
        let victim = std::mem::take(&mut self.stalled[k]);
        let masked = match cc.victim_mask {
            VictimMask::None => false,
            VictimMask::All => true,
            VictimMask::CaPorts => {
                let r = self.net.slots[s].remote;
                r != NONE && !self.net.slots[r as usize].is_switch
            }
        };
        if self.cc_mark_units == 0 || (victim && !masked) {
            return;
        }
        let queued = match cc.detection {
            CcDetection::Buffered => self.out[k].queued_units,
            CcDetection::Heads => self.out[k]
                .req
                .iter()
                .filter_map(|&f| self.inp[f as usize].fifo.front())
                .map(|&q| self.pkts[q as usize].units as u32)
                .sum(),
        };
        if queued <= self.cc_mark_units {
            return;
        }
        let p = &self.pkts[pid as usize];
        if p.flags & F_CNP != 0 || p.payload < self.cc_min_payload {
            return;
        }
        self.mark_count[k] += 1;
        if self.mark_count[k] > cc.marking_rate {
            self.mark_count[k] = 0;
            self.pkts[pid as usize].flags |= F_FECN;
            self.counters[s].fecn_marked += 1;
        }
    }

    /// Starts sending packet `pid` on `slot` and VL `vl`; returns wire bytes.
    fn transmit(&mut self, s: usize, pid: u32, vl: u8) -> u32 {
        let now = self.now;
        let slot = &self.net.slots[s];
        let (kbps, ppb, remote, is_switch) =
            (slot.kbps, slot.ps_per_byte, slot.remote, slot.is_switch);
        let far = &self.net.slots[remote as usize];
        let (remote_switch, remote_ep) = (far.is_switch, far.ep);
        let cfg = &self.cfg;
        let p = &mut self.pkts[pid as usize];
        let wire: u32 = p.payload
            + if p.flags & F_CNP != 0 {
                64
            } else {
                cfg.wire_overhead_bytes
            };
        let units = p.units as u32;
        let ser = if ppb > 0 {
            wire as u64 * ppb
        } else {
            Self::ser(wire, kbps)
        };
        let end = (now + ser).max(p.tail);
        p.vl = vl;
        p.tail = end + cfg.link_delay;
        let lat = if remote_switch { cfg.switch_latency } else { 0 };
        let head = if cfg.store_and_forward {
            end + cfg.link_delay + lat
        } else {
            now + cfg.link_delay + lat
        };
        self.out[s * self.v + vl as usize].credits -= units as i64;
        let c = &mut self.counters[s];
        c.xmit_bytes += wire as u64;
        c.xmit_pkts += 1;
        self.unit_hops += units as u64;
        self.packet_hops += 1;
        let port = &mut self.ports[s];
        port.busy = true;
        port.tx_end = end;
        port.tx_done_due = false;
        if is_switch {
            self.seq += 1;
            port.tx_seq = self.seq;
            let fid = port.cur_fifo;
            let behind = fid != NONE && self.inp[fid as usize].fifo.len() > 1;
            if port.pending > 0 || behind {
                port.tx_done_due = true;
                self.heap.push(Ev::new(end, self.seq, TX_DONE, s as u32, 0));
            }
        } else if port.pending > 0 {
            port.tx_done_due = true;
            self.push(end, TX_DONE, s as u32, 0);
        }
        let sink_ep = if remote_switch { NONE } else { remote_ep };
        if self.direct_sink && sink_ep != NONE {
            // The receiving HCA takes the packet when its tail is in (its
            // sink is never busy then, see `direct_sink`): one event at the
            // tail instead of an arrival at the head and a completion at
            // the tail. The arrival's sequence number is reserved, and the
            // head time kept, so that sweeps count the receive as the
            // arrival event would have (`sink_rcv_in_flight`).
            self.seq += 1;
            let arrive_seq = self.seq;
            let p = &mut self.pkts[pid as usize];
            let tail = p.tail;
            p.out_slot = (tail - head).min(u32::MAX as Time) as u32;
            p.qp = arrive_seq as u32;
            self.inp[remote as usize * self.v + vl as usize]
                .fifo
                .push_back(pid);
            self.push(tail, SINK_DONE, sink_ep, vl as u32);
        } else {
            self.push(head, ARRIVE, remote, pid);
        }
        wire
    }

    // ---- HCAs -----------------------------------------------------------------

    fn try_send_hca(&mut self, s: usize) {
        // Congestion notifications first (they need no host DMA).
        if let Some(&pid) = self.cnp_q[s].front() {
            let vl = self.pkts[pid as usize].vl;
            if self.out[s * self.v + vl as usize].credits >= 1 {
                self.cnp_q[s].pop_front();
                self.ports[s].pending -= 1;
                self.ports[s].cur_fifo = NONE;
                self.transmit(s, pid, vl);
                return;
            }
        }
        if self.now < self.ports[s].dma_free {
            if !self.ports[s].wake_pending {
                self.ports[s].wake_pending = true;
                let t = self.ports[s].dma_free;
                self.push(t, HCA_WAKE, s as u32, 0);
            }
            return;
        }
        loop {
            let Some((vl, hi)) = self.pick_vl(s, false) else {
                return;
            };
            let k = s * self.v + vl as usize;
            let f = self.out[k].req.pop_front().expect("eligible") as usize;
            self.ports[s].pending -= 1;
            self.flows[f].queued &= !(1 << vl);
            if self.flows[f].waiting {
                continue; // FLOW_READY queues it again
            }
            let now = self.now;
            let mtu = self.cfg.mtu;
            // With congestion control each QP (or SL) keeps its own
            // injection delay: take the first message whose QP may send.
            let mi = if self.cc.is_some() {
                match self.cc_pick(f, vl as usize) {
                    Ok(i) => i,
                    Err(wake) => {
                        self.flows[f].waiting = true;
                        self.push(wake, FLOW_READY, f as u32, 0);
                        continue;
                    }
                }
            } else {
                0
            };
            if mi > 0 {
                let m = &self.flows[f].backlog[vl as usize][mi];
                let need = self.cfg.units(m.remaining.min(mtu)) as i64;
                if self.out[k].credits < need {
                    // Too few credits for this QP's packet: wait at the front.
                    self.flows[f].queued |= 1 << vl;
                    self.out[k].req.push_front(f as u32);
                    self.ports[s].pending += 1;
                    return;
                }
            }
            let fl = &mut self.flows[f];
            let q = &mut fl.backlog[vl as usize];
            let m = &mut q[mi];
            let payload = m.remaining.min(mtu);
            m.remaining -= payload;
            let last = m.remaining == 0;
            let (dst, created, sl, qp) = (m.dst, m.created, m.sl, m.qp);
            if last {
                // Almost always the head (`remove` is a call of its own).
                if mi == 0 {
                    q.pop_front();
                } else {
                    q.remove(mi);
                }
                fl.backlog_len -= 1;
            }
            fl.c.injected_bytes += payload as u64;
            let units = self.cfg.units(payload);
            let pkt = Pkt {
                flow: f as u32,
                qp,
                out_slot: NONE,
                payload,
                tail: 0,
                created,
                dlid: self.net.ep_lid[dst as usize],
                units: units as u16,
                sl,
                vl,
                out_vl: 0,
                flags: if last { F_LAST } else { 0 },
            };
            let pid = self.alloc(pkt);
            if let Some(h) = self.host_kbps {
                self.ports[s].dma_free = self.ports[s].dma_free.max(now) + Self::ser(payload, h);
            }
            self.ports[s].cur_fifo = NONE;
            let wire = self.transmit(s, pid, vl);
            self.charge_arb(s, hi, units, wire);
            if last && matches!(self.flows[f].def.arrival, Arrival::Greedy) {
                self.refill_greedy(f);
            }
            // Requeue the QP (round robin) unless congestion control delays it.
            // End of this packet's serialisation (a new packet has no
            // earlier tail, so `transmit` set exactly now + ser).
            let end = self.ports[s].tx_end;
            let key = self.cc_key(f, qp, sl);
            let ird = self.cc_ird(f, key);
            if ird > 0 && !self.single_qp(f) {
                // Other QPs of this source may still send. (A delay with no
                // state yet comes from a floor or a non-zero CCT[0].)
                self.cc_states.entry(key).or_default().next_allowed = end + ird;
                self.activate(f as u32);
            } else if ird > 0 {
                self.cc_states.entry(key).or_default().next_allowed = end + ird;
                let fl = &mut self.flows[f];
                fl.waiting = true;
                fl.next_allowed = end + ird;
                self.push(end + ird, FLOW_READY, f as u32, 0);
            } else {
                self.activate(f as u32);
            }
            return;
        }
    }

    /// The key of the CC state a packet of flow `f` on `qp` and `sl` uses:
    /// its QP (QP-based control) or its source port's SL (SL-based).
    fn cc_key(&self, f: usize, qp: u32, sl: u8) -> u64 {
        match self.cc.as_ref().map(|c| c.control) {
            Some(CaControl::Sl) => (1 << 63) | ((self.flows[f].def.src as u64) << 8) | sl as u64,
            _ => ((f as u64) << 32) | qp as u64,
        }
    }

    /// The QP of a message from flow `f` to `dst`: one per destination, or
    /// destination mod `qps`.
    fn qp_of(&self, dst: u32) -> u32 {
        match self.cc.as_ref().map_or(0, |c| c.qps) {
            0 => dst,
            n => dst % n,
        }
    }

    /// True when every message of flow `f` uses one QP/SL state, so the whole
    /// flow can wait for its injection delay.
    fn single_qp(&self, f: usize) -> bool {
        let fl = &self.flows[f];
        let qp_based = self.cc.as_ref().map(|c| c.control) == Some(CaControl::Qp);
        matches!(fl.def.dst, Dst::Fixed(_)) && fl.def.hot.is_empty()
            || (qp_based && self.cc.as_ref().map_or(0, |c| c.qps) == 1)
    }

    /// Index of the first message of flow `f` on VL `vl` whose QP/SL may
    /// inject now (the first message of a QP is its oldest, so order within
    /// a QP holds); `Err(t)`: none of the first [`QP_SCAN`] may before `t`.
    fn cc_pick(&self, f: usize, vl: usize) -> Result<usize, Time> {
        let mut wake = NO_TIME;
        for (i, m) in self.flows[f].backlog[vl].iter().take(QP_SCAN).enumerate() {
            let key = self.cc_key(f, m.qp, m.sl);
            let t = self.cc_states.get(&key).map_or(0, |st| st.next_allowed);
            if t <= self.now {
                return Ok(i);
            }
            wake = wake.min(t);
        }
        Err(wake)
    }

    /// Current injection delay of a QP/SL state (applying the CCTI_Timer
    /// decreases since its last update).
    fn cc_ird(&mut self, f: usize, key: u64) -> Time {
        let Some(cc) = &self.cc else { return 0 };
        let floor = self.flows[f].cc_floor;
        let Some(st) = self.cc_states.get_mut(&key) else {
            return cc.ird(floor);
        };
        if st.ccti > 0 {
            let period = cc.timer_period();
            let k = (self.now - st.cc_ref) / period;
            if k > 0 {
                st.ccti = st.ccti.saturating_sub(k.min(u16::MAX as u64) as u16);
                st.cc_ref += k * period;
            }
        }
        let ccti = st.ccti.max(floor);
        self.flows[f].c.ccti = ccti;
        cc.ird(ccti)
    }

    /// A BECN (a CNP) for flow `f`'s QP `qp` on `sl`.
    fn becn(&mut self, f: usize, qp: u32, sl: u8) {
        if let Some(cc) = &self.cc {
            if cc.sl_map & (1 << (sl & 15)) == 0 {
                // Control_Map leaves this SL out: the source does not react.
                self.flows[f].c.becns += 1;
                return;
            }
        }
        let key = self.cc_key(f, qp, sl);
        self.cc_ird(f, key);
        let Some(cc) = &self.cc else { return };
        let now = self.now;
        let st = self.cc_states.entry(key).or_default();
        st.ccti = (st.ccti + cc.ccti_increase)
            .max(cc.ccti_min)
            .min(cc.ccti_limit);
        st.cc_ref = now;
        let ccti = st.ccti;
        let fl = &mut self.flows[f];
        fl.c.becns += 1;
        fl.c.ccti = ccti.max(fl.cc_floor);
    }

    fn start_sink(&mut self, ep: u32) {
        let s = self.net.ep_slot[ep as usize] as usize;
        let v = self.v;
        let r = self.sink_rr[ep as usize] as usize;
        for i in 0..v {
            let vl = if v == 1 { 0 } else { (r + i) % v };
            if let Some(&pid) = self.inp[s * v + vl].fifo.front() {
                let p = self.pkts[pid as usize];
                let consume = match self.sink_kbps {
                    Some(k) if p.flags & F_CNP == 0 => Self::ser(p.payload, k),
                    _ => 0,
                };
                let done = (self.now + consume).max(p.tail);
                self.sink_busy[ep as usize] = true;
                self.sink_rr[ep as usize] = if v == 1 { 0 } else { ((vl + 1) % v) as u8 };
                self.push(done, SINK_DONE, ep, vl as u32);
                return;
            }
        }
    }

    fn sink_done(&mut self, ep: u32, vl: usize) {
        let s = self.net.ep_slot[ep as usize] as usize;
        let fid = s * self.v + vl;
        let pid = self.inp[fid].fifo.pop_front().expect("sink packet");
        self.inp[fid].last_pop = self.now;
        let p = self.pkts[pid as usize];
        if self.direct_sink {
            let c = &mut self.counters[s];
            c.rcv_bytes += (p.payload + self.cfg.wire_overhead_bytes) as u64;
            c.rcv_pkts += 1;
        }
        self.return_credit(fid as u32, p.units as u32, self.now);
        let f = p.flow as usize;
        if p.flags & F_CNP != 0 {
            self.becn(f, p.qp, p.sl);
        } else {
            let now = self.now;
            let fl = &mut self.flows[f];
            fl.c.delivered_bytes += p.payload as u64;
            if p.flags & F_LAST != 0 {
                let lat = now - p.created;
                if let Some(log) = self.delivery_log.as_mut() {
                    log.push((now, p.flow));
                }
                let fl = &mut self.flows[f];
                fl.c.completed_msgs += 1;
                fl.c.latency_sum += lat as u128;
                fl.c.latency_max = fl.c.latency_max.max(lat);
            }
            if p.flags & F_FECN != 0 && self.cc.is_some() {
                let src = self.flows[f].def.src;
                let cnp = Pkt {
                    flow: p.flow,
                    qp: p.qp,
                    out_slot: NONE,
                    payload: 0,
                    tail: 0,
                    created: now,
                    dlid: self.net.ep_lid[src as usize],
                    units: 1,
                    sl: p.sl,
                    vl: self.flow_vl_for_sl(s, p.sl),
                    out_vl: 0,
                    flags: F_CNP,
                };
                let c = self.alloc(cnp);
                self.cnp_q[s].push_back(c);
                self.ports[s].pending += 1;
                self.try_send(s as u32);
            }
        }
        self.free.push(pid);
        if !self.direct_sink {
            self.sink_busy[ep as usize] = false;
            self.start_sink(ep);
        }
    }

    /// With `direct_sink`: (bytes, packets) whose head has reached an HCA
    /// by now but whose tail has not, which the original arrival event
    /// would have counted as received already. `inclusive`: count a head
    /// arriving exactly now whatever its order (the end of the run, every
    /// event up to now has run); else only one whose arrival would have
    /// come before the event being run.
    fn sink_rcv_in_flight(&self, inclusive: bool) -> Vec<(usize, u64, u64)> {
        let mut out = Vec::new();
        if !self.direct_sink {
            return out;
        }
        let cur = self.cur_seq;
        for &slot in &self.net.ep_slot {
            let s = slot as usize;
            let (mut bytes, mut pkts) = (0u64, 0u64);
            for &pid in self.inp[s * self.v].fifo.iter() {
                let p = &self.pkts[pid as usize];
                let head = p.tail - p.out_slot as Time;
                // `qp` holds the low 32 bits of the arrival's sequence
                // number; a packet in flight is far fewer than 2^31 events
                // from now, so the wrapped difference says which came first.
                let before_cur = (cur as u32).wrapping_sub(p.qp) as i32 > 0;
                let arrived = head < self.now || (head == self.now && (inclusive || before_cur));
                if arrived {
                    bytes += (p.payload + self.cfg.wire_overhead_bytes) as u64;
                    pkts += 1;
                }
            }
            if pkts > 0 {
                out.push((s, bytes, pkts));
            }
        }
        out
    }

    fn flow_vl_for_sl(&self, s: usize, sl: u8) -> u8 {
        // Without per-node tables (`sl2vl_any`) every node's entry is
        // empty: skip reading it (a cache miss per new message).
        let map = if self.sl2vl_any {
            let node = self.net.slots[s].node as usize;
            self.sl2vl[node]
                .get(self.net.slots[s].port as usize)
                .unwrap_or(&self.sl2vl_global)
        } else {
            &self.sl2vl_global
        };
        map[sl as usize & 15].min(self.v as u8 - 1)
    }

    // ---- sources --------------------------------------------------------------

    fn pick_dst(&mut self, f: usize) -> u32 {
        let neps = self.net.num_eps() as u32;
        let fl = &mut self.flows[f];
        let src = fl.def.src;
        if !fl.def.hot.is_empty() && fl.rng.random::<f64>() < fl.def.hot_fraction {
            let h = fl.def.hot[fl.rng.random_range(0..fl.def.hot.len())];
            if h != src {
                return h;
            }
        }
        match fl.def.dst {
            Dst::Fixed(d) => d,
            Dst::Uniform => {
                let d = fl.rng.random_range(0..neps - 1);
                if d >= src {
                    d + 1
                } else {
                    d
                }
            }
            Dst::AllToAll => {
                let mut d = fl.a2a_next % neps;
                if d == src {
                    d = (d + 1) % neps;
                }
                fl.a2a_next = d + 1;
                d
            }
            Dst::Trace => fl.def.arrival_trace_dst(fl.trace_pos),
        }
    }

    /// The SL and VL of a new message from flow `f` to `dst`.
    fn msg_sl_vl(&self, f: usize, dst: u32) -> (u8, u8) {
        let fl = &self.flows[f];
        let host = if self.host_dst_sl.is_empty() {
            None
        } else {
            self.host_dst_sl.get(&(fl.def.src, dst)).copied()
        };
        let sl = if let Some(sl) = host {
            sl
        } else if self.dst_sl[dst as usize] != NO_SL {
            self.dst_sl[dst as usize]
        } else {
            fl.sl
        };
        let s = self.net.ep_slot[fl.def.src as usize] as usize;
        (sl, self.flow_vl_for_sl(s, sl))
    }

    /// A QP's SL lives in its context: after a host agent changes the SL
    /// for `dst`, the host's messages to `dst` that have not started move to
    /// the new VL's queue (in order, behind what is there). The message at
    /// the head of each queue stays (it may be partly sent).
    fn requeue_to(&mut self, host: u32, dst: u32) {
        for f in 0..self.flows.len() {
            if self.flows[f].def.src != host {
                continue;
            }
            let (nsl, nvl) = self.msg_sl_vl(f, dst);
            let v = self.v;
            let fl = &mut self.flows[f];
            let mut moved = Vec::new();
            for vl in 0..v {
                let q = &mut fl.backlog[vl];
                if vl == nvl as usize || q.len() <= 1 || !q.iter().skip(1).any(|m| m.dst == dst) {
                    continue;
                }
                let Some(front) = q.pop_front() else {
                    continue;
                };
                let (mv, keep): (VecDeque<Msg>, VecDeque<Msg>) =
                    q.drain(..).partition(|m| m.dst == dst);
                *q = keep;
                q.push_front(front);
                moved.extend(mv);
            }
            if !moved.is_empty() {
                for mut m in moved {
                    m.sl = nsl;
                    fl.backlog[nvl as usize].push_back(m);
                }
                self.activate(f as u32);
            }
        }
    }

    fn push_msg(&mut self, f: usize, dst: u32, size: u32) {
        let (sl, vl) = self.msg_sl_vl(f, dst);
        let qp = self.qp_of(dst);
        let now = self.now;
        let fl = &mut self.flows[f];
        fl.backlog[vl as usize].push_back(Msg {
            dst,
            qp,
            remaining: size,
            created: now,
            sl,
        });
        fl.backlog_len += 1;
    }

    fn post(&mut self, f: usize, dst: u32, size: u32) {
        let fl = &mut self.flows[f];
        fl.c.offered_msgs += 1;
        if fl.backlog_len >= fl.def.max_backlog {
            fl.c.refused_msgs += 1;
            return;
        }
        self.push_msg(f, dst, size);
        if self.flows[f].waiting && self.cc.is_some() && !self.single_qp(f) {
            // A message for a QP that may send now wakes a source whose
            // other QPs wait for their injection delays.
            let sl = self.msg_sl_vl(f, dst).0;
            let key = self.cc_key(f, self.qp_of(dst), sl);
            if self
                .cc_states
                .get(&key)
                .is_none_or(|st| st.next_allowed <= self.now)
            {
                self.flows[f].waiting = false;
            }
        }
        self.activate(f as u32);
    }

    /// Puts the flow in the request queue of every VL it has messages for.
    fn activate(&mut self, f: u32) {
        let fi = f as usize;
        let fl = &self.flows[fi];
        // `backlog_len` counts the messages of all VLs: with none there is
        // nothing to queue (the usual case after a source's last packet).
        if fl.waiting || self.now < fl.next_allowed || fl.backlog_len == 0 {
            return;
        }
        let s = self.net.ep_slot[self.flows[fi].def.src as usize] as usize;
        let mut added = false;
        for vl in 0..self.v {
            let fl = &mut self.flows[fi];
            if fl.queued & (1 << vl) == 0 && !fl.backlog[vl].is_empty() {
                fl.queued |= 1 << vl;
                self.out[s * self.v + vl].req.push_back(f);
                self.ports[s].pending += 1;
                added = true;
            }
        }
        if added {
            self.try_send(s as u32);
        }
    }

    fn refill_greedy(&mut self, f: usize) {
        while self.now < self.flows[f].def.stop
            && self.flows[f].backlog_len < self.flows[f].def.max_backlog
        {
            let size = {
                let fl = &mut self.flows[f];
                fl.def.size.draw(&mut fl.rng)
            };
            let d = self.pick_dst(f);
            self.flows[f].c.offered_msgs += 1;
            self.push_msg(f, d, size);
        }
    }

    fn gen(&mut self, f: u32) {
        let fi = f as usize;
        if self.now >= self.flows[fi].def.stop {
            return;
        }
        match self.flows[fi].def.arrival.clone_kind() {
            Kind::Greedy => {
                self.refill_greedy(fi);
                self.activate(f);
            }
            Kind::Trace => {
                let (t, d, b, sl) = self.flows[fi].def.trace_row(self.flows[fi].trace_pos);
                let _ = t;
                self.flows[fi].sl = sl;
                self.flows[fi].c.sl = sl;
                self.flows[fi].trace_pos += 1;
                self.post(fi, d, b);
                let pos = self.flows[fi].trace_pos;
                if let Some(next) = self.flows[fi].def.trace_time(pos) {
                    self.push(next.max(self.now), GEN, f, 0);
                }
            }
            Kind::Rate { poisson, on_off } => {
                let start = self.flows[fi].def.start;
                if let Some((on, off)) = on_off {
                    let period = on + off;
                    if period > 0 {
                        let phase = (self.now - start) % period;
                        if phase >= on {
                            let t = self.now + (period - phase);
                            self.flows[fi].next_gen = t as f64;
                            self.push(t, GEN, f, 0);
                            return;
                        }
                    }
                }
                let size = {
                    let fl = &mut self.flows[fi];
                    fl.def.size.draw(&mut fl.rng)
                };
                let d = self.pick_dst(fi);
                self.post(fi, d, size);
                let fl = &mut self.flows[fi];
                let g = if poisson {
                    let u: f64 = fl.rng.random::<f64>();
                    -(1.0 - u).ln() * fl.gap
                } else {
                    fl.gap
                };
                fl.next_gen += g;
                let t = (fl.next_gen.round() as Time).max(self.now);
                self.push(t, GEN, f, 0);
            }
        }
    }

    // ---- sweeps, actions, deadlock ---------------------------------------------

    fn snapshot_counters(&mut self) {
        let tick = self.cfg.xmit_wait_tick;
        for s in 0..self.counters.len() {
            let mut w = self.ports[s].wait_acc;
            if self.ports[s].wait_since != NO_TIME {
                w += self.now - self.ports[s].wait_since;
            }
            self.counters[s].xmit_wait = w / tick;
        }
    }

    fn sweep(&mut self) {
        self.snapshot_counters();
        // Receives whose head is in but whose tail is not (`direct_sink`)
        // count during the sweep, as their arrival events would have.
        let in_flight = self.sink_rcv_in_flight(false);
        for &(s, bytes, pkts) in &in_flight {
            self.counters[s].rcv_bytes += bytes;
            self.counters[s].rcv_pkts += pkts;
        }
        for k in 0..self.out.len() {
            self.absorb_credits(k);
        }
        let interval = self.now - self.last_sweep;
        if self.cfg.record_ports {
            for (s, c) in self.counters.iter().enumerate() {
                if self.net.slots[s].remote != NONE {
                    self.port_series.push(PortSample {
                        time: self.now,
                        slot: s as u32,
                        counters: *c,
                    });
                }
            }
        }
        for (i, fl) in self.flows.iter_mut().enumerate() {
            let d = fl.c.delivered_bytes - fl.last.delivered_bytes;
            let n = fl.c.completed_msgs - fl.last.completed_msgs;
            let lat = fl.c.latency_sum - fl.last.latency_sum;
            self.flow_series.push(FlowSample {
                time: self.now,
                flow: i as u32,
                gbps: if interval > 0 {
                    d as f64 * 8.0 * 1000.0 / interval as f64
                } else {
                    0.0
                },
                completed: n,
                mean_latency_us: if n > 0 {
                    lat as f64 / n as f64 / 1e6
                } else {
                    f64::NAN
                },
                sl: fl.sl,
            });
            fl.last = fl.c;
        }
        let flows: Vec<FlowCounters> = self.flows.iter().map(|f| f.c).collect();
        let mut actions = Vec::new();
        {
            let view = SweepView {
                time: self.now,
                interval,
                ports: &self.counters,
                previous_ports: &self.prev_counters,
                slots: &self.slot_info,
                flows: &flows,
                endpoint_lids: &self.net.ep_lid,
                link_up: &self.link_up,
            };
            self.controller.on_sweep(&view, &mut actions);
        }
        let mut later = Vec::new();
        self.controller.take_scheduled(&mut later);
        if let Some(why) = self.controller.stop() {
            self.fatal = Some(NetsimError::Event {
                at: format!("controller at {} ps", self.now),
                problem: why,
            });
            return;
        }
        for a in actions {
            if let Err(problem) = self.check_action(&a) {
                self.fatal = Some(NetsimError::Event {
                    at: format!("controller at {} ps", self.now),
                    problem,
                });
                return;
            }
            self.apply(&a);
        }
        for ta in later {
            if let Err(problem) = self.check_action(&ta.action) {
                self.fatal = Some(NetsimError::Event {
                    at: format!("controller at {} ps", self.now),
                    problem,
                });
                return;
            }
            let t = ta.time.max(self.now);
            if t <= self.end {
                self.actions.push(ta);
                let i = (self.actions.len() - 1) as u32;
                self.push(t, ACTION, i, 0);
            }
        }
        if let Some(cycle) = self.find_deadlock() {
            self.fatal = Some(NetsimError::Deadlock {
                time_us: self.now as f64 / 1e6,
                cycle,
            });
        }
        self.prev_counters.clone_from(&self.counters);
        for &(s, bytes, pkts) in &in_flight {
            self.counters[s].rcv_bytes -= bytes;
            self.counters[s].rcv_pkts -= pkts;
        }
        self.last_sweep = self.now;
    }

    /// Input buffers whose head has not moved for a whole sweep interval and
    /// waits for credits of a buffer that is itself stuck: a cycle is a
    /// credit deadlock.
    fn find_deadlock(&self) -> Option<Vec<String>> {
        let v = self.v;
        let n = self.inp.len();
        let horizon = self.last_sweep;
        let blocked_next = |f: usize| -> Option<usize> {
            let pid = *self.inp[f].fifo.front()?;
            if self.inp[f].head_at != NONE || self.inp[f].last_pop > horizon || self.now == horizon
            {
                return None;
            }
            let p = &self.pkts[pid as usize];
            if p.out_slot == NONE || !self.net.slots[f / v].is_switch {
                return None;
            }
            let k = p.out_slot as usize * v + p.out_vl as usize;
            if self.out[k].credits >= p.units as i64 {
                return None;
            }
            let r = self.net.slots[p.out_slot as usize].remote;
            if r == NONE || !self.net.slots[r as usize].is_switch {
                return None;
            }
            Some(r as usize * v + p.out_vl as usize)
        };
        let mut state = vec![0u8; n]; // 0 new, 1 on path, 2 done
        for startf in 0..n {
            if state[startf] != 0 || self.inp[startf].fifo.is_empty() {
                continue;
            }
            let mut path = Vec::new();
            let mut cur = startf;
            loop {
                if state[cur] == 1 {
                    let pos = path.iter().position(|&x| x == cur).unwrap_or(0);
                    let cyc = path[pos..]
                        .iter()
                        .map(|&f: &usize| format!("{} VL{}", self.net.labels[f / v], f % v))
                        .collect();
                    return Some(cyc);
                }
                if state[cur] == 2 {
                    break;
                }
                state[cur] = 1;
                path.push(cur);
                match blocked_next(cur) {
                    Some(nx) => cur = nx,
                    None => break,
                }
            }
            for f in path {
                state[f] = 2;
            }
        }
        None
    }

    fn apply(&mut self, a: &Action) {
        match *a {
            Action::SetFlowSl { flow, sl } => {
                let f = &mut self.flows[flow as usize];
                f.sl = sl;
                f.c.sl = sl;
            }
            Action::SetDestinationSl { dst, sl } => self.dst_sl[dst as usize] = sl.unwrap_or(NO_SL),
            Action::SetHostDestinationSl { host, dst, sl } => {
                match sl {
                    Some(sl) => {
                        self.host_dst_sl.insert((host, dst), sl);
                    }
                    None => {
                        self.host_dst_sl.remove(&(host, dst));
                    }
                }
                self.requeue_to(host, dst);
            }
            Action::SetSl2Vl {
                node,
                in_port,
                out_port,
                map,
            } => {
                let np = self.net.num_ports[node as usize] as usize + 1;
                if self.sl2vl[node as usize].is_empty() {
                    self.sl2vl_any = true;
                    self.sl2vl[node as usize] = vec![self.sl2vl_global; np * np];
                }
                for i in 0..np {
                    for o in 0..np {
                        if in_port.is_none_or(|p| p as usize == i)
                            && out_port.is_none_or(|p| p as usize == o)
                        {
                            self.sl2vl[node as usize][i * np + o] = map;
                        }
                    }
                }
            }
            Action::SetLft { switch, lid, port } => {
                self.net.set_lft(switch, lid, port);
            }
            Action::LinkDown { node, port } => {
                let s = (self.net.first_slot[node as usize] + port as u32) as usize;
                let r = self.net.slots[s].remote as usize;
                for x in [s, r] {
                    self.ports[x].up = false;
                    self.link_up[x] = false;
                    self.update_wait(x);
                    if self.net.slots[x].is_switch {
                        // Packets waiting for this output are dropped.
                        for vl in 0..self.v {
                            let k = x * self.v + vl;
                            let waiting: Vec<u32> = self.out[k].req.take_all();
                            self.ports[x].pending -= waiting.len() as u32;
                            for fid in waiting {
                                self.head_request(fid);
                            }
                        }
                    }
                }
            }
            Action::LinkUp { node, port } => {
                let s = (self.net.first_slot[node as usize] + port as u32) as usize;
                let r = self.net.slots[s].remote as usize;
                self.ports[s].up = true;
                self.ports[r].up = true;
                self.link_up[s] = true;
                self.link_up[r] = true;
                self.try_send(s as u32);
                self.try_send(r as u32);
            }
            Action::SetFlowRate { flow, gbps } => {
                let f = &mut self.flows[flow as usize];
                f.gap = f.def.size.mean() * 8.0 * 1000.0 / gbps;
            }
            Action::SetFlowCcDelay { flow, ccti } => {
                // Takes effect from the flow's next packet (a packet already
                // waiting for its delay keeps the time it was given).
                self.flows[flow as usize].cc_floor = ccti;
            }
            Action::SetVlArbitration { ref table } => self.set_vl_arbitration(table),
            Action::SetCongestionControl { ref config } => self.set_congestion_control(config),
        }
    }

    /// New VL arbitration tables on every output: each port starts again
    /// at the first entry of each table, as at time 0.
    fn set_vl_arbitration(&mut self, table: &crate::config::VlArbitration) {
        self.lo = if table.low.is_empty() {
            (0..self.v as u8)
                .map(|vl| VlArbEntry { vl, weight: 32 })
                .collect()
        } else {
            table.low.clone()
        };
        self.hi = table.high.clone();
        self.hi_limit_bytes = hi_limit_bytes(table.high_limit);
        let arb0 = Arb {
            hi_left: self.hi.first().map_or(0, |e| e.weight as i32),
            lo_left: self.lo.first().map_or(0, |e| e.weight as i32),
            ..Default::default()
        };
        self.arb.iter_mut().for_each(|a| *a = arb0);
        // Outputs that were idle for lack of an eligible VL may send now.
        for s in 0..self.ports.len() {
            if self.ports[s].up {
                self.try_send(s as u32);
            }
        }
    }

    /// New congestion-control settings for the whole fabric (or none).
    fn set_congestion_control(&mut self, config: &Option<CcConfig>) {
        self.cc = config.clone();
        self.cc_mark_units = self.cc.as_ref().map_or(0, |c| {
            let per_vl = self.cfg.units_per_vl(self.cfg.buffer_bytes) as u32;
            (per_vl * (16 - c.threshold as u32)) / 16
        });
        self.cc_min_payload = self.cc.as_ref().map_or(0, |c| c.min_packet_bytes);
        match &self.cc {
            Some(cc) => {
                let limit = cc.ccti_limit;
                for st in self.cc_states.values_mut() {
                    st.ccti = st.ccti.min(limit);
                }
                for f in &mut self.flows {
                    f.cc_floor = f.cc_floor.min(limit);
                }
            }
            None => {
                // Without CC no source waits for an injection delay.
                self.cc_states.clear();
                for f in 0..self.flows.len() {
                    self.flows[f].cc_floor = 0;
                }
            }
        }
    }

    fn result(&mut self) -> SimResult {
        self.snapshot_counters();
        for (s, bytes, pkts) in self.sink_rcv_in_flight(true) {
            self.counters[s].rcv_bytes += bytes;
            self.counters[s].rcv_pkts += pkts;
        }
        self.direct_sink = false;
        let flows = self
            .flows
            .iter()
            .map(|f| {
                let from = f.def.start.min(self.now);
                let to = f.def.stop.min(self.now);
                let span = to.saturating_sub(from).max(1);
                FlowSummary {
                    name: f.def.name.clone(),
                    src: f.def.src,
                    dst: match f.def.dst {
                        Dst::Fixed(d) => d,
                        _ => NONE,
                    },
                    gbps: f.c.delivered_bytes as f64 * 8.0 * 1000.0 / span as f64,
                    mean_latency_us: if f.c.completed_msgs > 0 {
                        f.c.latency_sum as f64 / f.c.completed_msgs as f64 / 1e6
                    } else {
                        f64::NAN
                    },
                    max_latency_us: f.c.latency_max as f64 / 1e6,
                    counters: f.c,
                }
            })
            .collect();
        SimResult {
            end_time: self.now,
            events: self.events,
            unit_hops: self.unit_hops,
            packet_hops: self.packet_hops,
            dropped: self.dropped,
            flows,
            ports: self.counters.clone(),
            port_series: std::mem::take(&mut self.port_series),
            flow_series: std::mem::take(&mut self.flow_series),
            port_labels: self.net.labels.clone(),
            endpoints: self.endpoint_names.clone(),
        }
    }
}

/// Arrival kind without the trace rows (cheap to copy).
enum Kind {
    Greedy,
    Trace,
    Rate {
        poisson: bool,
        on_off: Option<(Time, Time)>,
    },
}

impl Arrival {
    fn clone_kind(&self) -> Kind {
        match self {
            Arrival::Greedy => Kind::Greedy,
            Arrival::Trace(_) => Kind::Trace,
            Arrival::Rate {
                poisson, on_off, ..
            } => Kind::Rate {
                poisson: *poisson,
                on_off: *on_off,
            },
        }
    }
}

impl FlowDef {
    fn trace_row(&self, i: usize) -> (Time, u32, u32, u8) {
        match &self.arrival {
            Arrival::Trace(r) => r[i.min(r.len() - 1)],
            _ => (0, 0, 0, 0),
        }
    }
    fn trace_time(&self, i: usize) -> Option<Time> {
        match &self.arrival {
            Arrival::Trace(r) => r.get(i).map(|x| x.0),
            _ => None,
        }
    }
    fn arrival_trace_dst(&self, i: usize) -> u32 {
        self.trace_row(i).1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::parse_duration;

    /// The prefetch stage only hints the cache: a run that prefetches ahead
    /// in every bucket, however small (so every stage and event kind is
    /// exercised, stale packet records included), gives exactly the result
    /// of one that never prefetches.
    #[test]
    fn prefetch_never_changes_a_result() {
        let mut f = ibcloud_fabric::generate::preset("ft324")
            .unwrap()
            .build()
            .unwrap();
        ibcloud_fabric::lids::assign_lids(&mut f, &Default::default()).unwrap();
        let t = ibcloud_routing::registry::engine("ftree", &Default::default())
            .unwrap()
            .route(&f)
            .unwrap()
            .tables;
        let spec = TrafficSpec::parse_compact(
            "uniform:load=0.7,size=64,poisson=1;hotspot:hot=#0,load=1.5,size=512,poisson=1",
        )
        .unwrap();
        let cfg = SimConfig {
            mtu: 256,
            record_ports: true,
            sweep_interval: 1_000_000,
            ..SimConfig::default()
        };
        let end = parse_duration("20us").unwrap();
        let run = |min_bucket: usize| {
            let mut s = Simulation::new(&f, &t, &cfg, &spec, end).unwrap();
            s.prefetch_min_bucket = min_bucket;
            s.run().unwrap()
        };
        let always = run(0);
        let never = run(usize::MAX);
        assert!(always.events > 50_000, "{} events", always.events);
        // Compared as printed: some per-interval means are NaN (no sample),
        // which `==` would call different.
        assert_eq!(format!("{always:?}"), format!("{never:?}"));
    }
}
