//! The host world: hosts (schedulers, adapters), VMs (vCPU, CQ, program),
//! QPs, and the co-simulation with netsim.
//!
//! ```text
//!  host event heap (time, seq)          netsim (external mode)
//!  ├ vCPU op done / wake / sample        ▲ post_external(flow, bytes)
//!  ├ adapter: WQE processed ─────────────┘
//!  ├ CQE write (ACK back)                │ advance(t) → Delivery(time, flow)
//!  ├ controller step / actuation         ▼
//!  └ scheduler timers (poll_at)     deliveries → CQEs, read responses
//! ```
//!
//! The loop takes the earliest host time `t`, lets netsim run up to `t`
//! (stopping at each delivery, which is handled at its own time), then runs
//! the host work due at `t`. Host and network events at the same time: the
//! network goes first. Everything is deterministic.

use crate::cq::{CqRing, Opcode};
use crate::fluid::{FlowShare, ShareRule, Sharing};
use crate::nas::Bsp;
use crate::program::{
    Microbench, NectereClient, NectereServer, Op, Program, ProgramLog, RecvSink, ReplyCycle,
    Rounds, StampChannel, Wr, WrKind,
};
use crate::scenario::{d, Scenario, ScenarioError};

/// The flow of a QP whose peer is on the same host: no netsim flow, the
/// adapter's loopback instead.
const LOOPBACK: u32 = u32::MAX;
use crate::sched::{Cfs, CpuScheduler, Credit1};
use crate::view::{ActionRecord, Actuation, HostController, View};
use crate::Time;
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{FabricBuilder, Guid, Lid, LinkRate, NodeKind, NodeSpec, PortRef};
use ibcloud_netsim::{FlowSpec, SimConfig, Simulation, TrafficSpec};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

/// Errors of a run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Bad scenario (before the run).
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The network model refused something or stopped.
    #[error("network: {0}")]
    Net(#[from] ibcloud_netsim::NetsimError),
    /// A budget was exceeded. Fatal.
    #[error("stopped at {time_ms:.3} ms: {what}")]
    Budget {
        /// Simulated time.
        time_ms: f64,
        /// Which budget.
        what: String,
    },
    /// A controller could not be built.
    #[error("{0}")]
    Controller(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A vCPU's current operation finished (if `gen` still matches).
    OpDone { vm: usize, gen: u64 },
    /// A sleeping VM wakes.
    Wake { vm: usize },
    /// The workload may start (set-up done).
    Start { vm: usize },
    /// The adapter finished processing a WQE.
    Engine { host: usize },
    /// A CQE is written (ACK arrived).
    Cqe { qp: usize, bytes: u32, op: u8 },
    /// Sample the per-VM series.
    Sample,
    /// Run a controller.
    Control { c: usize },
    /// Apply a delayed actuation.
    Apply { idx: usize },
    /// An SM push request reaches the SM.
    SmReceive { idx: usize },
    /// An SM push's last MAD arrived: its settings act.
    SmApply { idx: usize },
    /// A fluid flow's head message has been sent (if `gen` still matches).
    FluidDone { flow: u32, gen: u64 },
    /// A fluid message's last byte reaches the destination.
    FluidArrive { flow: u32 },
    /// The paced head of a packet-level flow goes to netsim.
    Paced { flow: u32 },
}

#[derive(Clone, Copy, Debug)]
enum NetKind {
    Write,
    Send,
    ReadReq(u32),
    ReadResp,
}

#[derive(Clone, Copy, Debug)]
struct NetMsg {
    /// The requester's QP.
    qp: usize,
    kind: NetKind,
    bytes: u32,
    /// Netsim flow it goes on.
    flow: u32,
}

#[derive(Debug)]
struct Qp {
    vm: usize,
    peer: usize,
    /// Netsim flow this QP's packets use towards the peer.
    flow: u32,
    recvs: u32,
    unexpected: VecDeque<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Exec {
    NotStarted,
    /// CPU work left, and what it was for.
    Cpu {
        left: Time,
        post: Option<Wr>,
    },
    /// Busy-polling an empty CQ.
    Spin,
    /// A poll found CQEs: paying `poll-cost`.
    Consume {
        left: Time,
    },
    Sleeping,
    Done,
}

/// Per-VM accumulated statistics.
#[derive(Clone, Debug, Default, Serialize)]
pub struct VmStats {
    /// Polling (spinning) time, ps.
    pub ptime: Time,
    /// Bytes of the VM's own requests completed (requester CQEs + receives).
    pub bytes: u64,
    /// CQEs consumed by the guest.
    pub cqes: u64,
    /// Work requests posted.
    pub posted: u64,
    /// When the program finished.
    pub finish: Option<Time>,
    /// When the workload started.
    pub start: Option<Time>,
    /// Bytes of CQEs the HCA wrote (whether or not the guest read them).
    pub hw_bytes: u64,
    /// When the HCA wrote the last CQE.
    pub last_cqe: Time,
}

/// One vCPU of a VM and the program it runs (a VM with `vcpus = N` is N of
/// these, contiguous, sharing the scheduler domain `dom`).
#[derive(Debug)]
struct Vm {
    name: String,
    host: usize,
    /// The scheduler domain (Xen) / cgroup (CFS) of the whole VM.
    dom: usize,
    vcpu: usize,
    cq: CqRing,
    post_cost: Time,
    poll_cost: Time,
    prog: Option<Box<dyn Program>>,
    exec: Exec,
    running: bool,
    run_start: Time,
    gen: u64,
    /// Extra guest time owed to memory stalls (introspection overhead).
    stall: Time,
    stats: VmStats,
    log: ProgramLog,
    /// The workload this VM drives (for the summary).
    workload: Option<usize>,
    /// Cap as set (0 = none), for the view.
    cap: u32,
    /// Guest CPU to burn before the program starts.
    setup_cpu: Time,
}

#[derive(Debug)]
struct Host {
    name: String,
    sched: Box<dyn CpuScheduler>,
    msg_overhead: Time,
    ack_delay: Time,
    actuation_delay: Time,
    setup: Time,
    engine: VecDeque<NetMsg>,
    engine_busy: bool,
    /// DMA engine rate, bytes per ps (loopback transfers).
    dma_rate: f64,
    /// The loopback message the engine is moving (memory to memory).
    dma: Option<NetMsg>,
    vms: Vec<usize>,
    /// The scheduler's `poll_at`, refreshed by `sync` after every call
    /// that changes the scheduler (the run loop reads it per event).
    next_poll: Time,
}

/// One row of the per-VM time series.
#[derive(Clone, Debug, Serialize)]
pub struct SampleRow {
    /// End of the interval, ps.
    pub time: Time,
    /// VM index.
    pub vm: usize,
    /// CPU % of one PCPU over the interval.
    pub cpu_pct: f64,
    /// Bytes completed in the interval.
    pub bytes: u64,
    /// CQEs consumed in the interval.
    pub cqes: u64,
    /// Polling time in the interval, ps.
    pub ptime: Time,
    /// Mean request latency of requests completed in the interval (ps; 0 if none).
    pub latency_mean: f64,
    /// Requests completed in the interval.
    pub requests: u64,
}

/// Per-workload summary.
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadSummary {
    /// Name.
    pub name: String,
    /// Kind.
    pub kind: String,
    /// VM.
    pub vm: String,
    /// Requests completed.
    pub completed: u64,
    /// Bytes completed.
    pub bytes: u64,
    /// Start (after set-up), s.
    pub start_s: f64,
    /// Finish, s (None: still running at the end).
    pub finish_s: Option<f64>,
    /// Issue time (start → last post), s.
    pub issue_s: f64,
    /// Bandwidth over start → finish (or end), MiB/s (perftest's MB).
    pub mib_s: f64,
    /// Bandwidth the HCA delivered: CQE bytes written over start → last CQE
    /// (independent of when the guest read them), MiB/s.
    pub hw_mib_s: f64,
    /// Mean latency (nectere), µs.
    pub latency_mean_us: Option<f64>,
    /// Standard deviation of the latency, µs.
    pub latency_std_us: Option<f64>,
    /// Median latency, µs.
    pub latency_p50_us: Option<f64>,
    /// 99th-percentile latency, µs.
    pub latency_p99_us: Option<f64>,
    /// Nectere CTime (server compute, F §5.2): mean, µs.
    pub ctime_mean_us: Option<f64>,
    /// CTime median, µs.
    pub ctime_p50_us: Option<f64>,
    /// CTime 99th percentile, µs.
    pub ctime_p99_us: Option<f64>,
    /// Nectere WTime (request and reply with the HCAs and link): mean, µs.
    pub wtime_mean_us: Option<f64>,
    /// WTime median, µs.
    pub wtime_p50_us: Option<f64>,
    /// WTime 99th percentile, µs.
    pub wtime_p99_us: Option<f64>,
    /// Nectere PTime (guest polling and bookkeeping): mean, µs.
    pub ptime_mean_us: Option<f64>,
    /// PTime median, µs.
    pub ptime_p50_us: Option<f64>,
    /// PTime 99th percentile, µs.
    pub ptime_p99_us: Option<f64>,
    /// Guest polling time, s.
    pub ptime_s: f64,
    /// Guest CPU time, s.
    pub cpu_s: f64,
}

/// Mean, median and 99th percentile of a sample (nearest rank; all None
/// when empty).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spread {
    /// Mean.
    pub mean: Option<f64>,
    /// Median (nearest rank).
    pub p50: Option<f64>,
    /// 99th percentile (nearest rank).
    pub p99: Option<f64>,
}

impl Spread {
    /// The spread of `xs`.
    ///
    /// ```
    /// let s = ibcloud_host::world::Spread::of((1..=100).map(f64::from));
    /// assert_eq!((s.mean, s.p50, s.p99), (Some(50.5), Some(50.0), Some(99.0)));
    /// ```
    pub fn of(xs: impl Iterator<Item = f64>) -> Self {
        let mut v: Vec<f64> = xs.collect();
        if v.is_empty() {
            return Self::default();
        }
        v.sort_by(f64::total_cmp);
        let rank = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Self {
            mean: Some(v.iter().sum::<f64>() / v.len() as f64),
            p50: Some(rank(0.50)),
            p99: Some(rank(0.99)),
        }
    }
}

/// Results of a run.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    /// Simulated end time, ps.
    pub end: Time,
    /// VM names in index order.
    pub vms: Vec<String>,
    /// Per-VM time series.
    pub samples: Vec<SampleRow>,
    /// Per-request latencies: (vm, completion time, latency) in ps.
    pub latencies: Vec<(usize, Time, Time)>,
    /// Nectere's split of each request latency (F §5.2): (vm, completion
    /// time, CTime, WTime, PTime) in ps; CTime + WTime + PTime = latency.
    pub latency_parts: Vec<(usize, Time, Time, Time, Time)>,
    /// Workload summaries.
    pub workloads: Vec<WorkloadSummary>,
    /// Every controller action.
    pub actions: Vec<ActionRecord>,
    /// Every SM push (`crate::sm`).
    pub sm: Vec<crate::sm::SmPushRecord>,
    /// Controller reports (JSON).
    pub controllers: Vec<serde_json::Value>,
    /// Host + network events processed.
    pub events: u64,
}

/// Builds controllers from their scenario tables.
pub type ControllerFactory<'a> = &'a dyn Fn(
    &crate::scenario::ControllerOptions,
    &[String],
) -> Result<Box<dyn HostController>, String>;

/// The fabric: one switch joining the hosts' HCA ports (port *i* + 1 ↔
/// host *i*), or a generated preset routed by an engine, where host *i* is
/// the *i*-th HCA port.
fn build_fabric(sc: &Scenario) -> Result<(ibcloud_fabric::Fabric, ForwardingTables), RunError> {
    let bad = |path: &str, e: String| {
        RunError::Scenario(ScenarioError {
            path: path.into(),
            problem: e,
        })
    };
    let given = match (&sc.fabric.preset, &sc.fabric.file) {
        (Some(name), _) => {
            let mut f = ibcloud_fabric::generate::preset(name)
                .map_err(|e| bad("fabric.preset", e.to_string()))?
                .build()
                .map_err(|e| bad("fabric.preset", e.to_string()))?;
            ibcloud_fabric::lids::assign_lids(&mut f, &Default::default())
                .map_err(|e| bad("fabric.preset", e.to_string()))?;
            Some((f, format!("preset '{name}'")))
        }
        (None, Some(path)) => {
            let mut f = ibcloud_fabric::formats::read_fabric(std::path::Path::new(path), None)
                .map_err(|e| bad("fabric.file", e.to_string()))?;
            if f.max_lid() == 0 {
                // No LIDs in the file (an ibsim net file): as OpenSM would.
                ibcloud_fabric::lids::assign_lids(&mut f, &Default::default())
                    .map_err(|e| bad("fabric.file", e.to_string()))?;
            }
            Some((f, format!("fabric file '{path}'")))
        }
        (None, None) => None,
    };
    if let Some((f, what)) = given {
        // Host i is the i-th HCA port with a cable and a LID (netsim's
        // endpoint order).
        let cas = f
            .iter_nodes()
            .map(|(id, n)| {
                f.ports(id)
                    .iter()
                    .enumerate()
                    .filter(|(p, port)| {
                        *p > 0
                            && n.kind == NodeKind::Ca
                            && port.remote.is_some()
                            && port.lid.is_set()
                    })
                    .count()
            })
            .sum::<usize>();
        if cas < sc.hosts.len() {
            return Err(bad(
                "hosts",
                format!(
                    "{} hosts but {what} has {cas} connected HCA ports with LIDs",
                    sc.hosts.len()
                ),
            ));
        }
        let engine = ibcloud_routing::registry::engine(&sc.fabric.route, &Default::default())
            .map_err(|e| bad("fabric.route", e.to_string()))?;
        let tables = engine
            .route(&f)
            .map_err(|e| bad("fabric.route", e.to_string()))?
            .tables;
        return Ok((f, tables));
    }
    let rate: LinkRate = sc.fabric.link.parse().expect("validated");
    // Fabric: one switch, hosts on ports 1..n.
    let mut b = FabricBuilder::new();
    let nh = sc.hosts.len();
    let sw = b
        .add_node(NodeSpec::new(
            NodeKind::Switch,
            Guid(0x100),
            (nh as u32).max(2) + 1,
            "switch",
        ))
        .map_err(|e| RunError::Controller(e.to_string()))?;
    let mut hnodes = Vec::new();
    for (i, h) in sc.hosts.iter().enumerate() {
        let n = b
            .add_node(NodeSpec::new(
                NodeKind::Ca,
                Guid(0x1000 + i as u64),
                1,
                h.name.clone(),
            ))
            .map_err(|e| RunError::Controller(e.to_string()))?;
        b.connect(PortRef::new(sw, i as u8 + 1), PortRef::new(n, 1), rate)
            .map_err(|e| RunError::Controller(e.to_string()))?;
        hnodes.push(n);
    }
    let mut fabric = b.build();
    fabric
        .set_lid(PortRef::new(sw, 0), Lid(1000), 0)
        .map_err(|e| RunError::Controller(e.to_string()))?;
    let mut tables = ForwardingTables::new(&fabric);
    for (i, &n) in hnodes.iter().enumerate() {
        fabric
            .set_lid(PortRef::new(n, 1), Lid(i as u16 + 1), 0)
            .map_err(|e| RunError::Controller(e.to_string()))?;
        tables.set(sw, Lid(i as u16 + 1), i as u8 + 1);
    }
    tables.set(sw, Lid(1000), 0);

    Ok((fabric, tables))
}

/// The world. Build with [`World::new`], run with [`World::run`].
#[derive(Debug)]
pub struct World {
    net: Simulation,
    hosts: Vec<Host>,
    vms: Vec<Vm>,
    qps: Vec<Qp>,
    flow_fifo: Vec<VecDeque<NetMsg>>,
    heap: BinaryHeap<Reverse<(Time, u64, Ev)>>,
    seq: u64,
    now: Time,
    end: Time,
    sample_iv: Time,
    max_events: u64,
    max_samples: usize,
    host_events: u64,
    controllers: Vec<Box<dyn HostController>>,
    pending: Vec<(usize, Actuation, Time)>,
    actions: Vec<ActionRecord>,
    samples: Vec<SampleRow>,
    last: Vec<(Time, u64, u64, Time, usize, u64)>,
    cpu_last: Vec<Time>,
    workloads: Vec<(String, String, usize)>,
    vm_index: HashMap<String, usize>,
    finite: Vec<usize>,
    /// The fluid time scale; `None` when every workload is packet-level.
    fluid: Option<Box<FluidState>>,
    /// The subnet manager (`crate::sm`).
    sm: SmState,
}

/// The SM's state in a run.
#[derive(Debug)]
struct SmState {
    settings: crate::sm::SmSettings,
    fabric: crate::sm::SmFabric,
    /// Requests: (request, tag, who).
    requests: Vec<(crate::sm::SmRequest, u64, String)>,
    /// Pushes carried out or under way, by request index.
    records: Vec<Option<crate::sm::SmPushRecord>>,
    /// The SM works on one push at a time.
    busy_until: Time,
    /// A QoS policy is in force (new QPs get their workload's SL).
    qos_in_force: bool,
    /// The simulator settings in force (what a push changes).
    cfg: SimConfig,
    /// Nodes of the fabric (every one gets the SL2VL table).
    nodes: u32,
    /// Per netsim flow: its workload's SL and the SL it has now.
    given_sl: Vec<u8>,
    flow_sl: Vec<u8>,
    /// Per VM: its workload opens new QPs for every job.
    new_qps: Vec<bool>,
}

/// State of the fluid time scale (`fluid.rs`): shares, fluid queues,
/// packet-level pacers.
#[derive(Debug)]
struct FluidState {
    share: Sharing,
    /// Fluid flows: queued messages with their wire bytes still to send.
    queue: Vec<VecDeque<(NetMsg, f64)>>,
    /// Fluid flows: sent messages on their way (path latency).
    in_flight: Vec<VecDeque<NetMsg>>,
    gen: Vec<u64>,
    /// Fluid flows that became active and have no end scheduled yet.
    fresh: Vec<bool>,
    /// When the fluid queues were last advanced.
    updated: Time,
    /// Packet-level flows: messages held by the pacer, and outstanding count
    /// (pacer + netsim).
    pacer: Vec<VecDeque<NetMsg>>,
    outstanding: Vec<u32>,
    vfinish: Vec<Time>,
    /// A `Paced` event is pending for the flow's head (its wait is fixed).
    paced_pending: Vec<bool>,
    /// Per flow: links × delay + switches × latency.
    latency: Vec<Time>,
    mtu: u32,
    overhead: u32,
}

impl FluidState {
    fn wire(&self, bytes: u32) -> f64 {
        let pkts = bytes.div_ceil(self.mtu).max(1);
        (bytes as u64 + pkts as u64 * self.overhead as u64) as f64
    }
}

/// Directed links (sending ports) from every endpoint (netsim's numbering:
/// CA ports with a cable and a LID, in node order) to every other, by the
/// forwarding tables; `(links of each path, capacity of each link in bytes/ps)`.
fn paths(
    fabric: &ibcloud_fabric::Fabric,
    tables: &ForwardingTables,
    pairs: &[(usize, usize)],
) -> (Vec<Vec<usize>>, Vec<f64>) {
    let mut eps = Vec::new();
    for (id, node) in fabric.iter_nodes() {
        for (p, port) in fabric.ports(id).iter().enumerate() {
            if p > 0 && node.kind == NodeKind::Ca && port.remote.is_some() && port.lid.is_set() {
                eps.push((PortRef::new(id, p as u8), port.lid));
            }
        }
    }
    let mut dense: HashMap<usize, usize> = HashMap::new();
    let mut cap = Vec::new();
    let mut out = Vec::new();
    for &(a, b) in pairs {
        let (mut at, dst) = (eps[a].0, eps[b].1);
        let mut path = Vec::new();
        for _ in 0..64 {
            let port = fabric.port(at).expect("port");
            let id = fabric.port_index(at).expect("slot");
            let k = *dense.entry(id).or_insert_with(|| {
                cap.push(port.rate.data_gbps() * 1e9 / 8.0 * 1e-12);
                cap.len() - 1
            });
            path.push(k);
            let Some(next) = port.remote else { break };
            if fabric.node(next.node).kind != NodeKind::Switch {
                break;
            }
            match tables.get(next.node, dst) {
                Some(p) => at = PortRef::new(next.node, p),
                None => break,
            }
        }
        out.push(path);
    }
    (out, cap)
}

impl World {
    /// Validates and builds a scenario (fabric: one switch, one HCA port per
    /// host; netsim flows for every QP direction).
    pub fn new(sc: &Scenario, factory: ControllerFactory<'_>) -> Result<Self, RunError> {
        sc.validate()?;
        let end = sc.duration_ps();
        let (fabric, tables) = build_fabric(sc)?;
        let hidx: HashMap<&str, usize> = sc
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (h.name.as_str(), i))
            .collect();

        // Hosts and their schedulers.
        let mut hosts: Vec<Host> = sc
            .hosts
            .iter()
            .map(|h| {
                let sched: Box<dyn CpuScheduler> = match h.scheduler.kind.as_str() {
                    "cfs" => Box::new(Cfs::new(h.pcpus, h.scheduler.cfs.clone())),
                    _ => Box::new(Credit1::new(h.pcpus, h.scheduler.credit1.clone())),
                };
                let control = match (&h.adapter.control_latency, h.adapter.kind.as_str()) {
                    (Some(t), _) => d(t),
                    (None, "sriov") => 5_000_000,
                    (None, _) => 50_000_000,
                };
                Host {
                    name: h.name.clone(),
                    sched,
                    msg_overhead: d(&h.adapter.msg_overhead),
                    ack_delay: d(&h.adapter.ack_delay),
                    actuation_delay: d(&h.actuation_delay),
                    // Create CQ, create QP, register MR: three control verbs.
                    setup: 3 * control,
                    engine: VecDeque::new(),
                    engine_busy: false,
                    dma_rate: h.adapter.dma_mbps * 1e6 / 1e12,
                    dma: None,
                    vms: Vec::new(),
                    next_poll: Time::MAX,
                }
            })
            .collect();

        let mut vms = Vec::new();
        for (i, v) in sc.vms.iter().enumerate() {
            let h = hidx[v.host.as_str()];
            let host = &mut hosts[h];
            let dom = host.sched.add_domain();
            if let Some(w) = v.weight {
                host.sched
                    .set_weight(0, dom, w as u32)
                    .map_err(|e| ScenarioError {
                        path: format!("vms[{i}].weight"),
                        problem: e.to_string(),
                    })?;
            }
            // The domain's vCPUs exist before its cap is set (Xen bounds a
            // cap by 100 % per vCPU).
            let vcpus: Vec<usize> = (0..v.vcpus)
                .map(|_| host.sched.add_vcpu(dom, v.pin.clone()))
                .collect();
            let mut cap = 0;
            if let Some(c) = v.cap {
                cap = c.round().max(1.0) as u32;
                host.sched.set_cap(0, dom, cap).map_err(|e| ScenarioError {
                    path: format!("vms[{i}].cap"),
                    problem: e.to_string(),
                })?;
            }
            if let Some(q) = &v.quota {
                let period = v
                    .period
                    .as_deref()
                    .map(d)
                    .unwrap_or(sc.hosts[h].scheduler.cfs.period);
                host.sched
                    .set_quota(0, dom, Some(d(q)), period)
                    .map_err(|e| ScenarioError {
                        path: format!("vms[{i}].quota"),
                        problem: e.to_string(),
                    })?;
            }
            for (k, vcpu) in vcpus.into_iter().enumerate() {
                host.vms.push(vms.len());
                vms.push(Vm {
                    name: crate::scenario::vcpu_name(&v.name, k),
                    host: h,
                    dom,
                    vcpu,
                    cq: CqRing::new(v.cq_entries),
                    post_cost: d(&v.post_cost),
                    poll_cost: d(&v.poll_cost),
                    prog: None,
                    exec: Exec::NotStarted,
                    running: false,
                    run_start: 0,
                    gen: 0,
                    stall: 0,
                    stats: VmStats::default(),
                    log: ProgramLog::default(),
                    workload: None,
                    cap,
                    setup_cpu: 0,
                });
            }
        }
        // Every vCPU by its output name (`vm`, `vm/1`, …).
        let vm_index: HashMap<String, usize> = vms
            .iter()
            .enumerate()
            .map(|(i, v)| (v.name.clone(), i))
            .collect();
        let entry = |vm: &str, k: Option<usize>| -> usize {
            vm_index[&crate::scenario::vcpu_name(vm, k.unwrap_or(0))]
        };

        // QPs and netsim flows.
        let per_message: Vec<bool> = sc
            .hosts
            .iter()
            .map(|h| h.adapter.arbitration == "per-message")
            .collect();
        let mut flows: Vec<FlowSpec> = Vec::new();
        let mut shared: HashMap<(usize, usize, u8), u32> = HashMap::new();
        // The SM: with `path-sl = "sa"` a QP created while no QoS policy is
        // in force gets SL 0 from the SA, whatever its workload's SL.
        let sm_settings = sc.sm.settings()?;
        let qos_at_start = sc.fabric.qos.is_some()
            && sc
                .fabric
                .qos_parts
                .as_deref()
                .and_then(crate::sm::SmParts::parse)
                .unwrap_or_default()
                .qos();
        let sa_zero = sm_settings.path_sl_sa && !qos_at_start;
        let mut given_sl: Vec<u8> = Vec::new();
        let mut flow_for = |src: usize, dst: usize, sl: u8, flows: &mut Vec<FlowSpec>| -> u32 {
            if src == dst {
                // Same host: the adapter's loopback, no link (`Ev::Engine`).
                return LOOPBACK;
            }
            let mut mk = |flows: &mut Vec<FlowSpec>| {
                flows.push(FlowSpec {
                    src: format!("#{src}"),
                    dst: format!("#{dst}"),
                    size: Some(1),
                    sl: if sa_zero { 0 } else { sl },
                    ..Default::default()
                });
                given_sl.push(sl);
                flows.len() as u32 - 1
            };
            if per_message[src] {
                // One send queue per destination and SL (a QP's SL lives
                // in its context).
                *shared.entry((src, dst, sl)).or_insert_with(|| mk(flows))
            } else {
                mk(flows)
            }
        };
        let mut qps = Vec::new();
        let mut fluid_flows: Vec<u32> = Vec::new();
        let mut workloads = Vec::new();
        let mut finite = Vec::new();
        for (wi, w) in sc.workloads.iter().enumerate() {
            // Each workload's own stream of service jitter, from the scenario's seed.
            let jitter_seed = sc.seed ^ (wi as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let (a, bv) = if w.kind == "nas" {
                (0, 0)
            } else {
                (entry(&w.vm, w.vcpu), entry(&w.peer, w.peer_vcpu))
            };
            let (ha, hb) = (vms[a].host, vms[bv].host);
            let sl = w.sl.unwrap_or(0);
            let qa = qps.len();
            let qb = qa + 1;
            let (fa, fb) = if w.kind == "nas" {
                (LOOPBACK, LOOPBACK)
            } else {
                (
                    flow_for(hnodes_index(ha), hnodes_index(hb), sl, &mut flows),
                    flow_for(hnodes_index(hb), hnodes_index(ha), sl, &mut flows),
                )
            };
            if w.kind == "nas" {
                let ranks: Vec<usize> = w
                    .ranks
                    .as_deref()
                    .unwrap_or_default()
                    .iter()
                    .map(|r| vm_index[r])
                    .collect();
                let bench = w.benchmark.as_deref().unwrap_or_default();
                let pat = crate::nas::pattern(bench, ranks.len()).expect("validated benchmark");
                let compute = w.compute.as_deref().map(d).unwrap_or(pat.compute);
                let steps = if w.iterations > 0 {
                    w.iterations
                } else {
                    pat.supersteps
                };
                let depth = w.depth.unwrap_or(u32::MAX);
                let mut rank_qps: Vec<Vec<u32>> = vec![Vec::new(); ranks.len()];
                for i in 0..ranks.len() {
                    for &j in &pat.peers[i] {
                        if j < i {
                            continue;
                        }
                        let (va, vb) = (ranks[i], ranks[j]);
                        let (ha, hb) = (vms[va].host, vms[vb].host);
                        let qa = qps.len();
                        let fa = flow_for(ha, hb, sl, &mut flows);
                        let fb = flow_for(hb, ha, sl, &mut flows);
                        if w.mode == "fluid" {
                            fluid_flows.extend([fa, fb].into_iter().filter(|&f| f != LOOPBACK));
                        }
                        for (vm, peer, flow) in [(va, qa + 1, fa), (vb, qa, fb)] {
                            qps.push(Qp {
                                vm,
                                peer,
                                flow,
                                recvs: 0,
                                unexpected: VecDeque::new(),
                            });
                        }
                        rank_qps[i].push(qa as u32);
                        rank_qps[j].push(qa as u32 + 1);
                    }
                }
                for (r, &vm) in ranks.iter().enumerate() {
                    if vms[vm].prog.is_some() {
                        return Err(ScenarioError {
                            path: format!("workloads[{wi}].ranks"),
                            problem: format!(
                                "VM '{}' already runs a program (one per vCPU: give the VM more `vcpus` and the workloads a `vcpu`)",
                                vms[vm].name
                            ),
                        }
                        .into());
                    }
                    let qs = std::mem::take(&mut rank_qps[r]);
                    vms[vm].prog = Some(Box::new(Bsp::new(
                        qs,
                        pat.messages.clone(),
                        compute,
                        steps,
                        depth,
                    )));
                    vms[vm].workload = Some(wi);
                    vms[vm].setup_cpu = w.setup_cpu.as_deref().map(d).unwrap_or(0);
                }
                let a = ranks[0];
                finite.extend(ranks.iter().copied());
                let name = w
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("nas-{bench}@{}", vms[a].name));
                workloads.push((name, w.kind.clone(), a));
                continue;
            }
            if w.mode == "fluid" {
                fluid_flows.extend([fa, fb].into_iter().filter(|&f| f != LOOPBACK));
            }
            qps.push(Qp {
                vm: a,
                peer: qb,
                flow: fa,
                recvs: 0,
                unexpected: VecDeque::new(),
            });
            qps.push(Qp {
                vm: bv,
                peer: qa,
                flow: fb,
                recvs: 0,
                unexpected: VecDeque::new(),
            });
            let size = w.size() as u32;
            let depth = w.depth();
            let stop = w.stop.as_deref().map(d).unwrap_or(Time::MAX);
            let throttle = w.throttle.as_deref().map(d).unwrap_or(0);
            let mut compute = w.compute.as_deref().map(d).unwrap_or(0);
            if let Some(m) = w.md5_mbps {
                compute += (size as f64 / (m * 1e6) * 1e12).round() as Time;
            }
            let name = w
                .name
                .clone()
                .unwrap_or_else(|| format!("{}@{}", w.kind, w.vm));
            let (pa, pb): (Box<dyn Program>, Option<Box<dyn Program>>) = match w.kind.as_str() {
                kind if crate::scenario::skeleton(kind).is_some() => {
                    let sk = crate::scenario::skeleton(kind).expect("skeleton");
                    let or = |t: &Option<String>, v: Time| t.as_deref().map(d).unwrap_or(v);
                    // mapreduce-sort: "c:m" scales the round's compute by c
                    // and its messages by m (validated).
                    let (c, m) = w
                        .io_ratio
                        .as_deref()
                        .and_then(|r| crate::scenario::parse_io_ratio(r).ok())
                        .unwrap_or((1, 1));
                    (
                        Box::new(Rounds::new(
                            qa as u32,
                            size,
                            or(&w.compute_before, sk.before).saturating_mul(c),
                            w.messages.unwrap_or(sk.messages).saturating_mul(m),
                            depth,
                            w.compute.as_deref().map(d).unwrap_or(sk.per_message),
                            or(&w.compute_after, sk.after).saturating_mul(c),
                            w.iterations,
                            stop,
                        )),
                        None,
                    )
                }
                "memcached" => {
                    let cycle = ReplyCycle {
                        sizes: match &w.sizes {
                            Some(v) => v.iter().map(|b| b.0 as u32).collect(),
                            None => crate::scenario::MEMCACHED_SIZES
                                .iter()
                                .map(|&b| b as u32)
                                .collect(),
                        },
                        per: w.per_size.unwrap_or(100),
                    };
                    // One pass over the sizes unless `iterations` is given.
                    let iterations = match w.iterations {
                        0 => cycle.per * cycle.sizes.len() as u64,
                        n => n,
                    };
                    // A Get's lookup (hash, item fetch): 2 us of server CPU.
                    let service = w.service.as_deref().map(d).unwrap_or(2_000_000);
                    let reply = cycle.max();
                    let ch = StampChannel::default();
                    (
                        Box::new(
                            NectereClient::new(
                                qa as u32, size, reply, iterations, depth, throttle, stop,
                            )
                            .with_stamps(ch.clone()),
                        ),
                        Some(Box::new(
                            NectereServer::new(qb as u32, size, reply, service, depth)
                                .with_reply_cycle(cycle)
                                .with_jitter(w.service_jitter.unwrap_or(0.0), jitter_seed)
                                .with_stamps(ch),
                        )),
                    )
                }
                "nectere" => {
                    let reply = w.reply_size.map(|b| b.0 as u32).unwrap_or(64);
                    let service = w.service.as_deref().map(d).unwrap_or(129_300_000);
                    // The reply carries the server's stamps: CTime/WTime/PTime.
                    let ch = StampChannel::default();
                    (
                        Box::new(
                            NectereClient::new(
                                qa as u32,
                                size,
                                reply,
                                w.iterations,
                                depth,
                                throttle,
                                stop,
                            )
                            .with_stamps(ch.clone()),
                        ),
                        Some(Box::new(
                            NectereServer::new(qb as u32, size, reply, service, depth)
                                .with_jitter(w.service_jitter.unwrap_or(0.0), jitter_seed)
                                .with_stamps(ch),
                        )),
                    )
                }
                kind => {
                    let k = match kind {
                        "rdma-read" => WrKind::Read,
                        "send" => WrKind::Send,
                        _ => WrKind::Write,
                    };
                    let peer: Option<Box<dyn Program>> = (k == WrKind::Send).then(|| {
                        Box::new(RecvSink::new(qb as u32, size, depth)) as Box<dyn Program>
                    });
                    let mut mb = Microbench::new(
                        qa as u32,
                        k,
                        size,
                        w.iterations,
                        depth,
                        throttle,
                        compute,
                        stop,
                    );
                    mb.throttle_from = w.throttle_from.as_deref().map(d).unwrap_or(0);
                    (Box::new(mb) as Box<dyn Program>, peer)
                }
            };
            for (vm, prog, path) in [(a, Some(pa), "vm"), (bv, pb, "peer")] {
                if let Some(p) = prog {
                    if vms[vm].prog.is_some() {
                        return Err(ScenarioError {
                            path: format!("workloads[{wi}].{path}"),
                            problem: format!(
                                "VM '{}' already runs a program (one per vCPU: give the VM more `vcpus` and the workloads a `vcpu`)",
                                vms[vm].name
                            ),
                        }
                        .into());
                    }
                    vms[vm].prog = Some(p);
                }
            }
            vms[a].workload = Some(wi);
            vms[a].setup_cpu = w.setup_cpu.as_deref().map(d).unwrap_or(0);
            if w.iterations > 0 {
                finite.push(a);
            }
            workloads.push((name, w.kind.clone(), a));
        }
        fn hnodes_index(h: usize) -> usize {
            h
        }

        let qos = sc.fabric.sim_qos()?;
        let cfg = SimConfig {
            vls: qos.vls,
            sl2vl: qos.sl2vl,
            vl_arbitration: qos.vl_arbitration,
            congestion_control: qos.congestion_control,
            mtu: sc.fabric.mtu,
            wire_overhead_bytes: sc.fabric.wire_overhead_bytes,
            link_delay: d(&sc.fabric.link_delay).max(1),
            switch_latency: d(&sc.fabric.switch_latency),
            record_ports: false,
            sweep_interval: end.max(1),
            max_events: sc.max_events,
            seed: sc.seed,
            ..Default::default()
        };
        if flows.is_empty() {
            // netsim wants at least one queue pair; this one never posts.
            flows.push(FlowSpec {
                src: "#0".into(),
                dst: "#1".into(),
                size: Some(1),
                ..Default::default()
            });
        }
        let traffic = TrafficSpec {
            flows,
            ..Default::default()
        };
        let fluid = (!fluid_flows.is_empty()).then(|| {
            let pairs: Vec<(usize, usize)> = traffic
                .flows
                .iter()
                .map(|f| {
                    let ep = |t: &str| t[1..].parse::<usize>().expect("#N");
                    (ep(&f.src), ep(&f.dst))
                })
                .collect();
            let (ps, capacity) = paths(&fabric, &tables, &pairs);
            let n = ps.len();
            let latency = ps
                .iter()
                .map(|p| {
                    p.len() as Time * cfg.link_delay
                        + p.len().saturating_sub(1) as Time * cfg.switch_latency
                })
                .collect();
            let flows = ps
                .into_iter()
                .enumerate()
                .map(|(i, path)| FlowShare {
                    path,
                    fluid: fluid_flows.contains(&(i as u32)),
                    ..Default::default()
                })
                .collect();
            Box::new(FluidState {
                share: Sharing {
                    capacity,
                    flows,
                    rule: if sc.fabric.fluid_share == "max-min" {
                        ShareRule::MaxMin
                    } else {
                        ShareRule::Arbitration
                    },
                },
                queue: vec![VecDeque::new(); n],
                in_flight: vec![VecDeque::new(); n],
                gen: vec![0; n],
                fresh: vec![false; n],
                updated: 0,
                pacer: vec![VecDeque::new(); n],
                outstanding: vec![0; n],
                vfinish: vec![0; n],
                paced_pending: vec![false; n],
                latency,
                mtu: cfg.mtu,
                overhead: cfg.wire_overhead_bytes,
            })
        });
        let mut net = Simulation::new(&fabric, &tables, &cfg, &traffic, end)?;
        net.start_external()?;
        while given_sl.len() < traffic.flows.len() {
            given_sl.push(0); // the placeholder flow
        }
        let sm_fabric = crate::sm::SmFabric {
            switches: fabric
                .iter_nodes()
                .filter(|(_, n)| n.kind == ibcloud_fabric::NodeKind::Switch)
                .map(|(id, n)| {
                    let live = (1..=n.num_ports)
                        .filter(|&p| {
                            fabric
                                .port(PortRef { node: id, port: p })
                                .is_some_and(|x| x.remote.is_some())
                        })
                        .count() as u8;
                    (n.num_ports, live)
                })
                .collect(),
            ca_ports: fabric
                .iter_nodes()
                .filter(|(_, n)| n.kind != ibcloud_fabric::NodeKind::Switch)
                .map(|(id, n)| {
                    (1..=n.num_ports)
                        .filter(|&p| {
                            fabric
                                .port(PortRef { node: id, port: p })
                                .is_some_and(|x| x.remote.is_some())
                        })
                        .count()
                })
                .sum(),
        };
        let new_qps = vms
            .iter()
            .map(|v| {
                v.workload
                    .is_some_and(|w| crate::sm::new_qps_per_round(&sc.workloads[w].kind))
            })
            .collect();
        let sm = SmState {
            busy_until: 0,
            qos_in_force: !sa_zero,
            nodes: fabric.iter_nodes().count() as u32,
            flow_sl: given_sl
                .iter()
                .map(|&x| if sa_zero { 0 } else { x })
                .collect(),
            given_sl,
            new_qps,
            requests: Vec::new(),
            records: Vec::new(),
            cfg: cfg.clone(),
            fabric: sm_fabric,
            settings: sm_settings,
        };
        let nflows = traffic.flows.len();

        let names: Vec<String> = vms.iter().map(|v| v.name.clone()).collect();
        let mut controllers = Vec::new();
        for c in &sc.controllers {
            controllers.push(factory(c, &names).map_err(RunError::Controller)?);
        }
        let mut w = World {
            net,
            hosts,
            vms,
            qps,
            flow_fifo: vec![VecDeque::new(); nflows],
            heap: BinaryHeap::new(),
            seq: 0,
            now: 0,
            end,
            sample_iv: d(&sc.sample_interval),
            max_events: sc.max_events,
            max_samples: sc.max_samples,
            host_events: 0,
            controllers,
            pending: Vec::new(),
            actions: Vec::new(),
            samples: Vec::new(),
            last: Vec::new(),
            cpu_last: Vec::new(),
            workloads,
            vm_index,
            finite,
            fluid,
            sm,
        };
        for (i, (at, r)) in w.sm.settings.pushes.clone().into_iter().enumerate() {
            w.sm.requests.push((r, i as u64, "scenario".into()));
            w.sm.records.push(None);
            w.push(at.min(end), Ev::SmReceive { idx: i });
        }
        w.last = vec![(0, 0, 0, 0, 0, 0); w.vms.len()];
        for (i, wl) in sc.workloads.iter().enumerate() {
            let a = w.workloads[i].2;
            let mut involved = vec![a];
            if wl.kind == "nas" {
                involved.extend(wl.ranks.iter().flatten().map(|r| w.vm_index[r]));
            } else {
                involved.push(
                    w.vm_index[&crate::scenario::vcpu_name(&wl.peer, wl.peer_vcpu.unwrap_or(0))],
                );
            }
            for vm in involved {
                if w.vms[vm].prog.is_some() && w.vms[vm].exec == Exec::NotStarted {
                    // A VM's program starts with its own workload's `start`
                    // (a serving peer's at once), whichever workload names
                    // the VM first.
                    let start = w.vms[vm]
                        .workload
                        .and_then(|j| sc.workloads[j].start.as_deref())
                        .map(d)
                        .unwrap_or(0);
                    let t = w.hosts[w.vms[vm].host].setup + start;
                    w.vms[vm].exec = Exec::Sleeping;
                    w.push(t, Ev::Start { vm });
                }
            }
        }
        let iv = w.sample_iv;
        w.push(iv.min(end), Ev::Sample);
        Ok(w)
    }

    fn push(&mut self, t: Time, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, ev)));
    }

    /// VM names.
    pub fn vm_names(&self) -> Vec<String> {
        self.vms.iter().map(|v| v.name.clone()).collect()
    }

    /// Runs to the end (or until every finite workload finished).
    /// `progress(now, end)` is called at every sample.
    pub fn run(mut self, progress: &mut dyn FnMut(Time, Time)) -> Result<RunResult, RunError> {
        for c in 0..self.controllers.len() {
            let mut ctl = std::mem::take(&mut self.controllers);
            let first = {
                let vv = self.vms_view();
                let done = self.sm_done();
                let view = View::new(self.now, &vv).with_sm(&done);
                ctl[c].start(&view)
            };
            self.controllers = ctl;
            self.push(first, Ev::Control { c });
        }
        for h in &mut self.hosts {
            h.next_poll = h.sched.poll_at();
        }
        loop {
            let sched_t = self
                .hosts
                .iter()
                .map(|h| h.next_poll)
                .min()
                .unwrap_or(Time::MAX);
            let heap_t = self.heap.peek().map(|r| r.0 .0).unwrap_or(Time::MAX);
            let t = sched_t.min(heap_t);
            if let Some(dl) = self.net.advance(t.min(self.end))? {
                self.now = dl.time;
                self.deliver(dl)?;
                continue;
            }
            if t > self.end {
                self.now = self.end;
                break;
            }
            self.now = t;
            self.host_events += 1;
            if self.host_events + self.net.events() > self.max_events {
                return Err(RunError::Budget {
                    time_ms: t as f64 / 1e9,
                    what: format!("more than {} events (max-events)", self.max_events),
                });
            }
            if sched_t <= t {
                for h in 0..self.hosts.len() {
                    if self.hosts[h].next_poll <= t {
                        self.hosts[h].sched.poll(t);
                        self.sync(h);
                    }
                }
                continue;
            }
            let Reverse((_, _, ev)) = self.heap.pop().expect("peeked");
            if self.handle(ev, progress)? {
                break;
            }
        }
        Ok(self.finish())
    }

    fn all_finite_done(&self) -> bool {
        !self.finite.is_empty()
            && self.finite.iter().all(|&v| self.vms[v].exec == Exec::Done)
            && self.workloads.iter().all(|w| self.finite.contains(&w.2))
    }

    /// Handles one host event; true = stop the run.
    fn handle(&mut self, ev: Ev, progress: &mut dyn FnMut(Time, Time)) -> Result<bool, RunError> {
        let now = self.now;
        match ev {
            Ev::OpDone { vm, gen } => {
                if self.vms[vm].gen == gen {
                    self.op_done(vm);
                }
            }
            Ev::Start { vm } if self.vms[vm].setup_cpu > 0 => {
                let left = std::mem::take(&mut self.vms[vm].setup_cpu);
                self.vms[vm].exec = Exec::Cpu { left, post: None };
                let (h, vc) = (self.vms[vm].host, self.vms[vm].vcpu);
                self.hosts[h].sched.wake(now, vc);
                self.sync(h);
            }
            Ev::Wake { vm } | Ev::Start { vm } => {
                if self.vms[vm].exec == Exec::Sleeping {
                    self.next_op(vm, &[]);
                }
            }
            Ev::Engine { host } => {
                if let Some(m) = self.hosts[host].dma.take() {
                    // A loopback transfer finished: delivered in memory.
                    self.hosts[host].engine_busy = false;
                    self.arrived(m);
                    self.kick_engine(host);
                    return Ok(false);
                }
                let m = self.hosts[host].engine.pop_front().expect("engine work");
                if m.flow == LOOPBACK {
                    // Same host: the engine reads the sender's buffer and
                    // writes the receiver's, both at the DMA rate, and the
                    // host's other work requests wait behind it.
                    let t = (2.0 * m.bytes as f64 / self.hosts[host].dma_rate).ceil() as Time;
                    self.hosts[host].dma = Some(m);
                    self.push(now + t, Ev::Engine { host });
                    return Ok(false);
                }
                self.hosts[host].engine_busy = false;
                self.send_to_network(m)?;
                self.kick_engine(host);
            }
            Ev::FluidDone { flow, gen } => self.fluid_sent(flow as usize, gen),
            Ev::FluidArrive { flow } => {
                let fs = self.fluid.as_mut().expect("fluid");
                let m = fs.in_flight[flow as usize].pop_front().expect("in flight");
                self.arrived(m);
            }
            Ev::Paced { flow } => {
                let fs = self.fluid.as_mut().expect("fluid");
                fs.paced_pending[flow as usize] = false;
                let m = fs.pacer[flow as usize].pop_front().expect("paced");
                self.net.post_external(m.flow, m.bytes)?;
                self.flow_fifo[flow as usize].push_back(m);
                self.pace_head(flow as usize)?;
            }
            Ev::Cqe { qp, bytes, op } => {
                let opcode = match op {
                    0 => Opcode::RdmaWrite,
                    1 => Opcode::Send,
                    _ => Opcode::RdmaRead,
                };
                self.write_cqe(qp, bytes, opcode);
            }
            Ev::Sample => {
                self.sample();
                self.check_memory()?;
                progress(now, self.end);
                if self.all_finite_done() {
                    return Ok(true);
                }
                if now < self.end {
                    let iv = self.sample_iv;
                    self.push((now + iv).min(self.end), Ev::Sample);
                }
            }
            Ev::Control { c } => {
                let mut acts = Vec::new();
                let mut ctl = std::mem::take(&mut self.controllers);
                let next = {
                    let vv = self.vms_view();
                    let done = self.sm_done();
                    let view = View::new(now, &vv).with_sm(&done);
                    ctl[c].step(now, &view, &mut acts)
                };
                self.controllers = ctl;
                for a in acts {
                    self.actuate(c, a);
                }
                if next > 0 {
                    self.push(now + next, Ev::Control { c });
                }
            }
            Ev::Apply { idx } => {
                let (c, a, issued) = self.pending[idx];
                self.apply(c, a, issued);
            }
            Ev::SmReceive { idx } => self.sm_receive(idx),
            Ev::SmApply { idx } => self.sm_apply(idx),
        }
        Ok(false)
    }

    /// SM pushes whose settings are in force by now.
    fn sm_done(&self) -> Vec<crate::sm::SmPushRecord> {
        self.sm
            .records
            .iter()
            .flatten()
            .filter(|r| r.in_force <= self.now)
            .cloned()
            .collect()
    }

    /// A push request reaches the SM: it plans the restart and MADs after
    /// any push it is still working on.
    fn sm_receive(&mut self, idx: usize) {
        let (req, tag, by) = self.sm.requests[idx].clone();
        let start = self.now.max(self.sm.busy_until);
        let mut r = crate::sm::plan(&self.sm.settings, &self.sm.fabric, &req, start);
        r.received = self.now;
        r.tag = tag;
        r.by = by;
        self.sm.busy_until = r.in_force;
        let t = r.in_force;
        self.sm.records[idx] = Some(r);
        self.push(t, Ev::SmApply { idx });
    }

    /// A push's last MAD arrived: its settings act on the whole fabric, and
    /// a QoS policy is in force for QPs created from now on.
    fn sm_apply(&mut self, idx: usize) {
        let (req, _, _) = self.sm.requests[idx].clone();
        let policy = req.policy();
        let res = self.sm_set(&policy);
        if let Some(r) = self.sm.records[idx].as_mut() {
            r.error = res.err().unwrap_or_default();
        }
    }

    fn sm_set(&mut self, policy: &ibcloud_qos::Policy) -> Result<(), String> {
        let next = policy.apply_to(&self.sm.cfg)?;
        if policy.qos.is_some() {
            if next.vls > self.sm.cfg.vls {
                return Err(format!(
                    "the policy needs {} VLs but the fabric runs {} (give [fabric] vls = {} for a run-time QoS push)",
                    next.vls, self.sm.cfg.vls, next.vls
                ));
            }
            let map = next.sl2vl.unwrap_or_default();
            self.net
                .act_external(&ibcloud_netsim::Action::SetVlArbitration {
                    table: next.vl_arbitration.clone(),
                })
                .map_err(|e| e.to_string())?;
            for node in 0..self.sm.nodes {
                self.net
                    .act_external(&ibcloud_netsim::Action::SetSl2Vl {
                        node,
                        in_port: None,
                        out_port: None,
                        map,
                    })
                    .map_err(|e| e.to_string())?;
            }
            self.sm.cfg.vl_arbitration = next.vl_arbitration.clone();
            self.sm.cfg.sl2vl = Some(map);
            self.sm.qos_in_force = true;
        }
        if policy.cc.is_some() {
            self.net
                .act_external(&ibcloud_netsim::Action::SetCongestionControl {
                    config: next.congestion_control.clone(),
                })
                .map_err(|e| e.to_string())?;
            self.sm.cfg.congestion_control = next.congestion_control;
        }
        Ok(())
    }

    /// VM `vm` starts a job that opens new QPs: each takes the SL the SA
    /// answers now (its workload's under a QoS policy, else 0).
    fn new_qps(&mut self, vm: usize) {
        let mut flows: Vec<u32> = Vec::new();
        for q in self.qps.iter().filter(|q| q.vm == vm) {
            flows.push(q.flow);
            flows.push(self.qps[q.peer].flow);
        }
        for f in flows {
            if f == LOOPBACK {
                continue;
            }
            let fi = f as usize;
            let sl = if self.sm.qos_in_force {
                self.sm.given_sl[fi]
            } else {
                0
            };
            if self.sm.flow_sl[fi] != sl {
                self.sm.flow_sl[fi] = sl;
                // Checked: the flow exists and the SL is 0-15.
                let _ = self
                    .net
                    .act_external(&ibcloud_netsim::Action::SetFlowSl { flow: f, sl });
            }
        }
    }

    fn vms_view(&self) -> Vec<crate::view::VmView<'_>> {
        self.vms
            .iter()
            .map(|v| crate::view::VmView {
                name: &v.name,
                host: &self.hosts[v.host].name,
                cq: &v.cq,
                cpu_time: self.hosts[v.host].sched.runtime(v.vcpu, self.now),
                cap: v.cap,
                running: v.running,
                latencies: &v.log.latencies,
            })
            .collect()
    }

    fn actuate(&mut self, c: usize, a: Actuation) {
        match a {
            Actuation::SmPush {
                request,
                after,
                tag,
            } => {
                let by = self
                    .controllers
                    .get(c)
                    .map(|x| x.name())
                    .unwrap_or_default();
                let idx = self.sm.requests.len();
                self.sm.requests.push((request, tag, by));
                self.sm.records.push(None);
                self.push(self.now + after, Ev::SmReceive { idx });
            }
            Actuation::Stall { vm, time } => {
                // Memory contention: the guest's current work takes longer.
                if let Some(v) = self.vms.get_mut(vm) {
                    v.stall += time;
                }
                if let Some(v) = self.vms.get(vm) {
                    if v.running {
                        self.restart_timer(vm);
                    }
                }
            }
            _ => {
                let Some(vm) = a.vm() else { return };
                if vm >= self.vms.len() {
                    return;
                }
                let delay = self.hosts[self.vms[vm].host].actuation_delay;
                let idx = self.pending.len();
                self.pending.push((c, a, self.now));
                if delay == 0 {
                    self.apply(c, a, self.now);
                } else {
                    self.push(self.now + delay, Ev::Apply { idx });
                }
            }
        }
    }

    fn apply(&mut self, c: usize, a: Actuation, issued: Time) {
        let now = self.now;
        let Some(vm) = a.vm() else { return };
        let h = self.vms[vm].host;
        // Caps, weights and quotas act on the whole VM (its domain / cgroup),
        // whichever of its vCPUs the controller named.
        let v = self.vms[vm].dom;
        let res: Result<(), String> = match a {
            Actuation::SetCap { cap, .. } => {
                let r = self.hosts[h].sched.set_cap(now, v, cap);
                if r.is_ok() {
                    for &e in &self.hosts[h].vms {
                        if self.vms[e].dom == v {
                            self.vms[e].cap = cap;
                        }
                    }
                }
                r.map_err(|e| e.to_string())
            }
            Actuation::SetWeight { weight, .. } => self.hosts[h]
                .sched
                .set_weight(now, v, weight)
                .map_err(|e| e.to_string()),
            Actuation::SetQuota { quota, period, .. } => self.hosts[h]
                .sched
                .set_quota(now, v, quota, period)
                .map_err(|e| e.to_string()),
            Actuation::SetCcDelay { ccti, .. } => {
                // Every QP the VM (any of its vCPUs) sends on.
                let dom = self.vms[vm].dom;
                let mut flows: Vec<u32> = self
                    .qps
                    .iter()
                    .filter(|q| self.vms[q.vm].dom == dom && q.flow != LOOPBACK)
                    .map(|q| q.flow)
                    .collect();
                flows.sort_unstable();
                flows.dedup();
                flows
                    .into_iter()
                    .try_for_each(|flow| {
                        self.net
                            .act_external(&ibcloud_netsim::Action::SetFlowCcDelay { flow, ccti })
                    })
                    .map_err(|e| e.to_string())
            }
            Actuation::Stall { .. } | Actuation::SmPush { .. } => Ok(()),
        };
        self.actions.push(ActionRecord {
            issued,
            applied: now,
            controller: self
                .controllers
                .get(c)
                .map(|x| x.name())
                .unwrap_or_default(),
            vm: self.vms[vm].name.clone(),
            action: a.describe(),
            ok: res
                .as_ref()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default(),
        });
        self.sync(h);
    }

    // ---- vCPU execution ----------------------------------------------------

    /// Reconciles VM run states with the scheduler after it acted on host `h`.
    fn sync(&mut self, h: usize) {
        let now = self.now;
        let n = self.hosts[h].sched.pcpus();
        let mut running = vec![false; self.hosts[h].vms.len()];
        let vms = self.hosts[h].vms.clone();
        for p in 0..n {
            if let Some(vc) = self.hosts[h].sched.current(p) {
                if let Some(k) = vms.iter().position(|&vm| self.vms[vm].vcpu == vc) {
                    running[k] = true;
                }
            }
        }
        for (k, &vm) in vms.iter().enumerate() {
            match (self.vms[vm].running, running[k]) {
                (false, true) => {
                    self.vms[vm].running = true;
                    self.vms[vm].run_start = now;
                    self.restart_timer(vm);
                }
                (true, false) => {
                    self.charge(vm);
                    self.vms[vm].running = false;
                    self.vms[vm].gen += 1;
                }
                _ => {}
            }
        }
        self.hosts[h].next_poll = self.hosts[h].sched.poll_at();
    }

    /// Charges the CPU a running VM used since `run_start` to its op.
    fn charge(&mut self, vm: usize) {
        let now = self.now;
        let v = &mut self.vms[vm];
        let ran = now - v.run_start;
        v.run_start = now;
        let mut ran_left = ran;
        let st = v.stall.min(ran_left);
        v.stall -= st;
        ran_left -= st;
        match &mut v.exec {
            Exec::Cpu { left, .. } | Exec::Consume { left } => {
                *left = left.saturating_sub(ran_left)
            }
            Exec::Spin => v.stats.ptime += ran_left,
            _ => {}
        }
    }

    /// (Re)schedules the completion of the running VM's current op.
    fn restart_timer(&mut self, vm: usize) {
        self.charge(vm);
        let now = self.now;
        let v = &mut self.vms[vm];
        v.gen += 1;
        let gen = v.gen;
        let stall = v.stall;
        match v.exec {
            Exec::Cpu { left, .. } | Exec::Consume { left } => {
                self.push(now + stall + left, Ev::OpDone { vm, gen })
            }
            Exec::Spin if v.cq.pending() > 0 => {
                v.exec = Exec::Consume { left: v.poll_cost };
                let left = v.poll_cost;
                self.push(now + stall + left, Ev::OpDone { vm, gen });
            }
            _ => {}
        }
    }

    fn op_done(&mut self, vm: usize) {
        self.charge(vm);
        match self.vms[vm].exec {
            Exec::Cpu { post, .. } => {
                if let Some(wr) = post {
                    self.post_wr(vm, wr);
                }
                self.next_op(vm, &[]);
            }
            Exec::Consume { .. } => {
                let mut out = Vec::new();
                self.vms[vm].cq.poll(usize::MAX, &mut out);
                let v = &mut self.vms[vm];
                v.stats.cqes += out.len() as u64;
                v.stats.bytes += out.iter().map(|c| c.byte_len as u64).sum::<u64>();
                self.next_op(vm, &out);
            }
            _ => {}
        }
    }

    fn next_op(&mut self, vm: usize, cqes: &[crate::cq::Cqe]) {
        let now = self.now;
        let h = self.vms[vm].host;
        let v = &mut self.vms[vm];
        let Some(prog) = v.prog.as_mut() else {
            return;
        };
        v.stats.start.get_or_insert(now);
        let rounds = v.log.completed;
        let op = prog.next(now, cqes, &mut v.log);
        if v.log.completed != rounds && !matches!(op, Op::Done) && self.sm.new_qps[vm] {
            self.new_qps(vm);
        }
        let v = &mut self.vms[vm];
        let was_sleeping = v.exec == Exec::Sleeping;
        match op {
            Op::Compute(t) => {
                v.exec = Exec::Cpu {
                    left: t,
                    post: None,
                }
            }
            Op::Post(wr) => {
                v.stats.posted += 1;
                v.exec = Exec::Cpu {
                    left: v.post_cost,
                    post: Some(wr),
                }
            }
            Op::Poll => v.exec = Exec::Spin,
            Op::Sleep(t) => {
                v.exec = Exec::Sleeping;
                let vc = v.vcpu;
                self.push(now + t, Ev::Wake { vm });
                self.hosts[h].sched.block(now, vc);
                self.sync(h);
                return;
            }
            Op::Done => {
                v.exec = Exec::Done;
                v.stats.finish = Some(now);
                let vc = v.vcpu;
                self.hosts[h].sched.block(now, vc);
                self.sync(h);
                return;
            }
        }
        if was_sleeping || !self.vms[vm].running {
            let vc = self.vms[vm].vcpu;
            self.hosts[h].sched.wake(now, vc);
            self.sync(h);
        }
        if self.vms[vm].running {
            self.restart_timer(vm);
        }
    }

    // ---- adapter -------------------------------------------------------------

    fn post_wr(&mut self, vm: usize, wr: Wr) {
        let q = wr.qp as usize;
        debug_assert_eq!(self.qps[q].vm, vm);
        self.vms[vm].log.last_post = self.now;
        let (kind, bytes) = match wr.kind {
            WrKind::Recv => {
                self.qps[q].recvs += 1;
                if let Some(b) = self.qps[q].unexpected.pop_front() {
                    // A message waited for this receive (RNR retry succeeds).
                    self.qps[q].recvs -= 1;
                    self.recv_arrived(q, b);
                }
                return;
            }
            WrKind::Write => (NetKind::Write, wr.bytes),
            WrKind::Send => (NetKind::Send, wr.bytes),
            WrKind::Read => (NetKind::ReadReq(wr.bytes), 0),
        };
        let h = self.vms[vm].host;
        let flow = self.qps[q].flow;
        self.hosts[h].engine.push_back(NetMsg {
            qp: q,
            kind,
            bytes,
            flow,
        });
        self.kick_engine(h);
    }

    fn kick_engine(&mut self, h: usize) {
        if !self.hosts[h].engine_busy && !self.hosts[h].engine.is_empty() {
            self.hosts[h].engine_busy = true;
            let t = self.now + self.hosts[h].msg_overhead;
            self.push(t, Ev::Engine { host: h });
        }
    }

    /// A WQE the adapter processed goes to the network: straight to netsim
    /// (all packet-level), or to its fluid queue, or through the pacer of a
    /// packet-level flow (`fluid.rs`).
    fn send_to_network(&mut self, m: NetMsg) -> Result<(), RunError> {
        let f = m.flow as usize;
        let Some(fs) = self.fluid.as_mut() else {
            self.net.post_external(m.flow, m.bytes)?;
            self.flow_fifo[f].push_back(m);
            return Ok(());
        };
        if fs.share.flows[f].fluid {
            let w = fs.wire(m.bytes);
            self.fluid_advance();
            let fs = self.fluid.as_mut().expect("fluid");
            fs.queue[f].push_back((m, w));
            if fs.queue[f].len() == 1 {
                fs.share.flows[f].active = true;
                fs.fresh[f] = true;
                self.fluid_resolve();
            }
            return Ok(());
        }
        fs.outstanding[f] += 1;
        fs.pacer[f].push_back(m);
        let first = fs.pacer[f].len() == 1;
        if fs.outstanding[f] == 1 {
            fs.share.flows[f].active = true;
            self.fluid_resolve();
        }
        if first {
            self.pace_head(f)?;
        }
        Ok(())
    }

    /// Messages of a packet-level flow that netsim holds at once when the
    /// scenario has fluid flows: enough to keep the link busy across the
    /// delivery gap, few enough that a backlog in netsim cannot run at full
    /// link rate beside the fluid flows' shares.
    const PACED_WINDOW: usize = 2;

    /// Hands the pacer's head messages of packet-level flow `f` to netsim
    /// when their time has come, or schedules the head.
    fn pace_head(&mut self, f: usize) -> Result<(), RunError> {
        let now = self.now;
        loop {
            let fs = self.fluid.as_mut().expect("fluid");
            if fs.paced_pending[f] || self.flow_fifo[f].len() >= Self::PACED_WINDOW {
                return Ok(());
            }
            let Some(m) = fs.pacer[f].front() else {
                return Ok(());
            };
            let (post, fin) = fs.share.pace(f, now, fs.vfinish[f], fs.wire(m.bytes));
            fs.vfinish[f] = fin;
            if post > now {
                fs.paced_pending[f] = true;
                self.push(post, Ev::Paced { flow: f as u32 });
                return Ok(());
            }
            let m = fs.pacer[f].pop_front().expect("head");
            self.net.post_external(m.flow, m.bytes)?;
            self.flow_fifo[f].push_back(m);
        }
    }

    /// Moves every fluid flow's head message forward to now.
    fn fluid_advance(&mut self) {
        let now = self.now;
        let fs = self.fluid.as_mut().expect("fluid");
        let dt = now.saturating_sub(fs.updated) as f64;
        if dt > 0.0 {
            for (f, fl) in fs.share.flows.iter().enumerate() {
                if fl.fluid && fl.active {
                    if let Some(h) = fs.queue[f].front_mut() {
                        h.1 = (h.1 - fl.rate * dt).max(0.0);
                    }
                }
            }
        }
        fs.updated = now;
    }

    /// New shares after a flow started or stopped having work; every fluid
    /// head's completion rescheduled at its new rate.
    fn fluid_resolve(&mut self) {
        self.fluid_advance();
        let now = self.now;
        let fs = self.fluid.as_mut().expect("fluid");
        let before: Vec<f64> = fs.share.flows.iter().map(|f| f.rate).collect();
        fs.share.solve();
        let mut due = Vec::new();
        for (f, fl) in fs.share.flows.iter().enumerate() {
            // A head whose rate did not change keeps its scheduled end.
            if fl.fluid && fl.active && fl.rate > 0.0 && (fl.rate != before[f] || fs.fresh[f]) {
                fs.fresh[f] = false;
                if let Some(h) = fs.queue[f].front() {
                    fs.gen[f] += 1;
                    due.push((now + (h.1 / fl.rate).ceil() as Time, f, fs.gen[f]));
                }
            }
        }
        for (t, f, gen) in due {
            self.push(
                t,
                Ev::FluidDone {
                    flow: f as u32,
                    gen,
                },
            );
        }
    }

    /// A fluid flow's head message left the source; it arrives after the
    /// path latency.
    fn fluid_sent(&mut self, f: usize, gen: u64) {
        if self.fluid.as_ref().expect("fluid").gen[f] != gen {
            return;
        }
        self.fluid_advance();
        let now = self.now;
        let fs = self.fluid.as_mut().expect("fluid");
        let (m, _) = fs.queue[f].pop_front().expect("fluid head");
        fs.in_flight[f].push_back(m);
        let at = now + fs.latency[f];
        if fs.queue[f].is_empty() {
            fs.share.flows[f].active = false;
            self.push(at, Ev::FluidArrive { flow: f as u32 });
            self.fluid_resolve();
        } else {
            fs.gen[f] += 1;
            let (rate, gen) = (fs.share.flows[f].rate, fs.gen[f]);
            let next = now + (fs.queue[f][0].1 / rate).ceil() as Time;
            self.push(at, Ev::FluidArrive { flow: f as u32 });
            self.push(
                next,
                Ev::FluidDone {
                    flow: f as u32,
                    gen,
                },
            );
        }
    }

    fn deliver(&mut self, dl: ibcloud_netsim::Delivery) -> Result<(), RunError> {
        let f = dl.flow as usize;
        let m = self.flow_fifo[f]
            .pop_front()
            .expect("a delivery matches a posted message");
        if let Some(fs) = self.fluid.as_mut() {
            fs.outstanding[f] -= 1;
            if fs.outstanding[f] == 0 {
                fs.share.flows[f].active = false;
                self.fluid_resolve();
            }
            self.pace_head(f)?;
        }
        self.arrived(m);
        Ok(())
    }

    /// A message's last byte arrived (netsim or fluid), at `now`.
    fn arrived(&mut self, m: NetMsg) {
        let now = self.now;
        let q = m.qp;
        let vm = self.qps[q].vm;
        let h = self.vms[vm].host;
        let ack = self.hosts[h].ack_delay;
        match m.kind {
            NetKind::Write => self.push(
                now + ack,
                Ev::Cqe {
                    qp: q,
                    bytes: m.bytes,
                    op: 0,
                },
            ),
            NetKind::Send => {
                let peer = self.qps[q].peer;
                if self.qps[peer].recvs > 0 {
                    self.qps[peer].recvs -= 1;
                    self.recv_arrived(peer, m.bytes);
                } else {
                    self.qps[peer].unexpected.push_back(m.bytes);
                }
                self.push(
                    now + ack,
                    Ev::Cqe {
                        qp: q,
                        bytes: m.bytes,
                        op: 1,
                    },
                );
            }
            NetKind::ReadReq(n) => {
                // The responder's HCA answers without its CPU.
                let peer = self.qps[q].peer;
                let ph = self.vms[self.qps[peer].vm].host;
                let flow = self.qps[peer].flow;
                self.hosts[ph].engine.push_back(NetMsg {
                    qp: q,
                    kind: NetKind::ReadResp,
                    bytes: n,
                    flow,
                });
                self.kick_engine(ph);
            }
            NetKind::ReadResp => self.write_cqe(q, m.bytes, Opcode::RdmaRead),
        }
    }

    fn recv_arrived(&mut self, q: usize, bytes: u32) {
        self.write_cqe(q, bytes, Opcode::Recv);
    }

    fn write_cqe(&mut self, q: usize, bytes: u32, op: Opcode) {
        let vm = self.qps[q].vm;
        self.vms[vm].cq.push_at(bytes, op, q as u32, self.now);
        if op != Opcode::Send || self.vms[vm].workload.is_some() {
            self.vms[vm].stats.hw_bytes += bytes as u64;
            self.vms[vm].stats.last_cqe = self.now;
        }
        if self.vms[vm].running && self.vms[vm].exec == Exec::Spin {
            self.restart_timer(vm);
        }
    }

    // ---- results ---------------------------------------------------------------

    fn sample(&mut self) {
        let now = self.now;
        for i in 0..self.vms.len() {
            if self.vms[i].running {
                self.charge(i);
            }
            let v = &self.vms[i];
            let cpu = self.hosts[v.host].sched.runtime(v.vcpu, now);
            let (t0, b0, c0, p0, l0, r0) = self.last[i];
            let dt = (now - t0).max(1);
            let lats = &v.log.latencies[l0..];
            let mean = if lats.is_empty() {
                0.0
            } else {
                lats.iter().map(|x| x.1 as f64).sum::<f64>() / lats.len() as f64
            };
            let cpu_prev = self.last_cpu(i);
            self.samples.push(SampleRow {
                time: now,
                vm: i,
                cpu_pct: (cpu - cpu_prev) as f64 / dt as f64 * 100.0,
                bytes: v.stats.bytes - b0,
                cqes: v.stats.cqes - c0,
                ptime: v.stats.ptime - p0,
                latency_mean: mean,
                requests: v.log.completed - r0,
            });
            self.last[i] = (
                now,
                v.stats.bytes,
                v.stats.cqes,
                v.stats.ptime,
                v.log.latencies.len(),
                v.log.completed,
            );
            self.cpu_last_set(i, cpu);
        }
    }

    /// The memory budget: per-request records kept per VM.
    fn check_memory(&self) -> Result<(), RunError> {
        if let Some(v) = self
            .vms
            .iter()
            .find(|v| v.log.latencies.len() > self.max_samples)
        {
            return Err(RunError::Budget {
                time_ms: self.now as f64 / 1e9,
                what: format!(
                    "VM '{}' recorded more than {} request latencies (max-samples)",
                    v.name, self.max_samples
                ),
            });
        }
        Ok(())
    }

    fn last_cpu(&self, i: usize) -> Time {
        self.cpu_last.get(i).copied().unwrap_or(0)
    }
    fn cpu_last_set(&mut self, i: usize, t: Time) {
        if self.cpu_last.len() < self.vms.len() {
            self.cpu_last.resize(self.vms.len(), 0);
        }
        self.cpu_last[i] = t;
    }

    fn finish(mut self) -> RunResult {
        let now = self.now;
        if self.samples.last().is_none_or(|s| s.time < now) {
            self.sample();
        }
        let mut latencies = Vec::new();
        let mut latency_parts = Vec::new();
        for (i, v) in self.vms.iter().enumerate() {
            for &(t, l) in &v.log.latencies {
                latencies.push((i, t, l));
            }
            if v.log.parts.len() == v.log.latencies.len() {
                for (&(t, _), p) in v.log.latencies.iter().zip(&v.log.parts) {
                    latency_parts.push((i, t, p.ctime, p.wtime, p.ptime));
                }
            }
        }
        let ps = 1e-12;
        let workloads = self
            .workloads
            .iter()
            .map(|(name, kind, vm)| {
                let v = &self.vms[*vm];
                let start = v.stats.start.unwrap_or(0);
                let fin = v.stats.finish;
                let span = (fin.unwrap_or(now).saturating_sub(start)) as f64 * ps;
                let lats: Vec<f64> = v.log.latencies.iter().map(|x| x.1 as f64 * 1e-6).collect();
                let (mean, std) = if lats.is_empty() {
                    (None, None)
                } else {
                    let m = lats.iter().sum::<f64>() / lats.len() as f64;
                    let var =
                        lats.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / lats.len() as f64;
                    (Some(m), Some(var.sqrt()))
                };
                let bytes = v.stats.bytes;
                let us = |x: Time| x as f64 * 1e-6;
                let lat = Spread::of(v.log.latencies.iter().map(|x| us(x.1)));
                let split = v.log.parts.len() == v.log.latencies.len();
                let part = |f: fn(&crate::program::LatencyParts) -> Time| {
                    if split {
                        Spread::of(v.log.parts.iter().map(|p| us(f(p))))
                    } else {
                        Spread::default()
                    }
                };
                let (c, w, p) = (part(|p| p.ctime), part(|p| p.wtime), part(|p| p.ptime));
                WorkloadSummary {
                    name: name.clone(),
                    kind: kind.clone(),
                    vm: v.name.clone(),
                    completed: v.log.completed,
                    bytes,
                    start_s: start as f64 * ps,
                    finish_s: fin.map(|f| f as f64 * ps),
                    issue_s: v.log.last_post.saturating_sub(start) as f64 * ps,
                    mib_s: if span > 0.0 {
                        bytes as f64 / span / 1048576.0
                    } else {
                        0.0
                    },
                    hw_mib_s: {
                        let hs = v.stats.last_cqe.saturating_sub(start) as f64 * ps;
                        if hs > 0.0 {
                            v.stats.hw_bytes as f64 / hs / 1048576.0
                        } else {
                            0.0
                        }
                    },
                    latency_mean_us: mean,
                    latency_std_us: std,
                    latency_p50_us: lat.p50,
                    latency_p99_us: lat.p99,
                    ctime_mean_us: c.mean,
                    ctime_p50_us: c.p50,
                    ctime_p99_us: c.p99,
                    wtime_mean_us: w.mean,
                    wtime_p50_us: w.p50,
                    wtime_p99_us: w.p99,
                    ptime_mean_us: p.mean,
                    ptime_p50_us: p.p50,
                    ptime_p99_us: p.p99,
                    ptime_s: v.stats.ptime as f64 * ps,
                    cpu_s: self.hosts[v.host].sched.runtime(v.vcpu, now) as f64 * ps,
                }
            })
            .collect();
        let mut reports = Vec::new();
        let vm_names = self.vm_names();
        for c in &mut self.controllers {
            reports.push(c.report(&vm_names));
        }
        RunResult {
            end: now,
            vms: vm_names,
            samples: self.samples,
            latencies,
            latency_parts,
            workloads,
            actions: self.actions,
            sm: self.sm.records.into_iter().flatten().collect(),
            controllers: reports,
            events: self.host_events + self.net.events(),
        }
    }
}
