//! The scenario format (Options layer): hosts, VMs, schedulers, adapters,
//! workloads, controllers, duration and seed. Every table rejects unknown
//! keys; [`Scenario::from_json`] deserialises table by table so an error
//! names its place (`workloads[2]`), which the Python front end turns into a
//! file and line. [`Scenario::validate`] checks everything else before a run.

use crate::sched::{CfsConfig, Credit1Config};
use crate::Time;
use ibcloud_netsim::time::parse_duration;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A scenario error: where (`vms[1].cap`) and what.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{path}: {problem}")]
pub struct ScenarioError {
    /// Table path and key, e.g. `workloads[0].depth`.
    pub path: String,
    /// What is wrong.
    pub problem: String,
}

fn err<T>(path: impl Into<String>, problem: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError {
        path: path.into(),
        problem: problem.into(),
    })
}

/// A byte count: an integer or a string with a `k`/`M`/`G` (binary) suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "serde_json::Value", into = "u64")]
pub struct Bytes(pub u64);

impl From<Bytes> for u64 {
    fn from(b: Bytes) -> u64 {
        b.0
    }
}

impl TryFrom<serde_json::Value> for Bytes {
    type Error = String;
    fn try_from(v: serde_json::Value) -> Result<Self, String> {
        match v {
            serde_json::Value::Number(n) => n
                .as_u64()
                .map(Bytes)
                .ok_or_else(|| format!("size {n} is not a non-negative integer")),
            serde_json::Value::String(s) => parse_bytes(&s).map(Bytes),
            other => Err(format!(
                "size {other} is neither a number nor a string like '64k'"
            )),
        }
    }
}

/// Parses `2048`, `64k`, `2M`, `1G` (binary multiples).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mul) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('m' | 'M') => (&t[..t.len() - 1], 1 << 20),
        Some('g' | 'G') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.trim()
        .parse::<u64>()
        .map(|n| n * mul)
        .map_err(|_| format!("cannot read size '{s}' (use e.g. 2048, 64k, 2M)"))
}

fn dur(path: &str, text: &str) -> Result<Time, ScenarioError> {
    if text.trim_start().starts_with('-') {
        return err(path, format!("duration '{text}' is negative"));
    }
    parse_duration(text).map_err(|_| ScenarioError {
        path: path.into(),
        problem: format!("cannot read duration '{text}' (use e.g. 10ms, 2.5us, 1s)"),
    })
}

/// Fabric settings (F testbed defaults: 4x SDR, 1 KB MTU, one switch).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct FabricOptions {
    /// Link rate of every host link. Default `4xSDR`.
    pub link: String,
    /// Path MTU. Default 1024.
    pub mtu: u32,
    /// Wire bytes per packet besides payload. Default 26 (LRH+BTH+ICRC+VCRC;
    /// **calibration**: gives 930 MB/s for one RDMA Write stream, F Table 3).
    pub wire_overhead_bytes: u32,
    /// Cable delay. Default `20ns`.
    pub link_delay: String,
    /// Switch latency. Default `100ns`.
    pub switch_latency: String,
    /// A generated topology instead of one switch (e.g. `4-ary-2-tree`, any
    /// `ibcloud topo` preset): host *i* is the fabric's *i*-th HCA port, and
    /// `link` is ignored (the preset's rates apply). Default none.
    pub preset: Option<String>,
    /// A fabric file instead of one switch: ibnetdiscover output, an ibsim
    /// net file or ibcloud's native format (the format is recognised from
    /// the name or the contents, as `ibcloud sim` does). Host *i* is the
    /// fabric's *i*-th HCA port; the file's LIDs are kept (OpenSM's
    /// assignment when it has none); `link` is ignored. A relative path is
    /// relative to the scenario file (the Python front end resolves it).
    pub file: Option<String>,
    /// Routing engine for `preset` and `file`. Default `ftree`.
    pub route: String,
    /// How fluid flows share links (`fluid.rs`): `arbitration` (default; as
    /// the HCA and the switch arbitrate) or `max-min` (per flow).
    pub fluid_share: String,
    /// Operational data VLs on every link (1–15). Default 1.
    pub vls: u8,
    /// SL → VL on every port (16 VLs). Default: SL mod `vls`.
    pub sl2vl: Option<Vec<u8>>,
    /// VL arbitration of every output, as netsim's `vl-arbitration`:
    /// `high` and `low` tables of `{vl, weight}` (weights in 64-byte
    /// units), `high-limit`. Default: every VL in the low table at 32.
    pub vl_arbitration: Option<ibcloud_netsim::VlArbitration>,
    /// IB congestion control: a preset (`default`, `ranadive` = G Table 5)
    /// or a table of netsim's `congestion-control` keys. Default off.
    pub congestion_control: Option<serde_json::Value>,
    /// A QoS / congestion-control policy as an SM programs it (docs/qos.md):
    /// a preset (`stmax`, `stmaxq`, `drxmax`, `drxmaxq`, G Tables 5–6) or a
    /// policy file; applied from time 0. Instead of `vls`, `sl2vl`,
    /// `vl-arbitration` and `congestion-control`.
    pub qos: Option<String>,
    /// Which SLs a preset's congestion control covers (G §9 A11): `all`
    /// (default) or `bulk` (all but SL0).
    pub qos_cc_sls: Option<String>,
    /// Which parts of `qos` apply from time 0: `all` (default), `qos` (SL2VL
    /// and VL arbitration only, e.g. DRXMax before DRX pushes its CC) or
    /// `cc` (congestion control only).
    pub qos_parts: Option<String>,
}

impl FabricOptions {
    /// The VL and congestion-control part of the simulator's settings, with
    /// errors at `fabric.…`.
    pub fn sim_qos(&self) -> Result<ibcloud_netsim::SimConfig, ScenarioError> {
        let sl2vl = match &self.sl2vl {
            None => None,
            Some(v) => {
                let map: [u8; 16] = v.as_slice().try_into().map_err(|_| ScenarioError {
                    path: "fabric.sl2vl".into(),
                    problem: format!("needs 16 VLs (one per SL), got {}", v.len()),
                })?;
                Some(map)
            }
        };
        let congestion_control = match &self.congestion_control {
            None => None,
            Some(serde_json::Value::String(name)) => match name.as_str() {
                "default" => Some(ibcloud_netsim::CcConfig::default()),
                "ranadive" => Some(ibcloud_netsim::CcConfig::ranadive()),
                "off" | "none" => None,
                _ => {
                    return err(
                        "fabric.congestion-control",
                        format!("unknown preset '{name}' (default, ranadive, off, or a table)"),
                    )
                }
            },
            Some(v) => Some(
                serde_json::from_value(v.clone()).map_err(|e| ScenarioError {
                    path: "fabric.congestion-control".into(),
                    problem: e.to_string(),
                })?,
            ),
        };
        let mut cfg = ibcloud_netsim::SimConfig {
            vls: self.vls,
            sl2vl,
            vl_arbitration: self.vl_arbitration.clone().unwrap_or_default(),
            congestion_control,
            ..Default::default()
        };
        if let Some(q) = &self.qos {
            let raw = self.vls != 1
                || self.sl2vl.is_some()
                || self.vl_arbitration.is_some()
                || self.congestion_control.is_some();
            if raw {
                return err(
                    "fabric.qos",
                    "give either a qos policy or vls / sl2vl / vl-arbitration / congestion-control",
                );
            }
            let sls = match self.qos_cc_sls.as_deref() {
                None => ibcloud_qos::CcSls::All,
                Some(s) => ibcloud_qos::CcSls::parse(s).ok_or_else(|| ScenarioError {
                    path: "fabric.qos-cc-sls".into(),
                    problem: format!("'{s}' is not all or bulk"),
                })?,
            };
            let policy = ibcloud_qos::resolve(q, sls).map_err(|e| ScenarioError {
                path: "fabric.qos".into(),
                problem: e.to_string(),
            })?;
            let parts = match self.qos_parts.as_deref() {
                None => crate::sm::SmParts::All,
                Some(s) => crate::sm::SmParts::parse(s).ok_or_else(|| ScenarioError {
                    path: "fabric.qos-parts".into(),
                    problem: format!("'{s}' is not all, qos or cc"),
                })?,
            };
            let policy = parts.restrict(&policy);
            cfg = policy.apply_to(&cfg).map_err(|e| ScenarioError {
                path: "fabric.qos".into(),
                problem: e,
            })?;
        } else if self.qos_cc_sls.is_some() {
            return err("fabric.qos-cc-sls", "only with a qos preset");
        } else if self.qos_parts.is_some() {
            return err("fabric.qos-parts", "only with a qos preset");
        }
        cfg.validate().map_err(|e| ScenarioError {
            path: "fabric".into(),
            problem: e.to_string(),
        })?;
        Ok(cfg)
    }
}

impl Default for FabricOptions {
    fn default() -> Self {
        Self {
            link: "4xSDR".into(),
            mtu: 1024,
            wire_overhead_bytes: 26,
            link_delay: "20ns".into(),
            switch_latency: "100ns".into(),
            preset: None,
            file: None,
            route: "ftree".into(),
            fluid_share: "arbitration".into(),
            vls: 1,
            sl2vl: None,
            vl_arbitration: None,
            congestion_control: None,
            qos: None,
            qos_cc_sls: None,
            qos_parts: None,
        }
    }
}

/// Scheduler choice for a host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct SchedulerOptions {
    /// `credit1` (Xen) or `cfs` (Linux/KVM). Default credit1.
    pub kind: String,
    /// Credit1 parameters.
    pub credit1: Credit1Config,
    /// CFS parameters.
    pub cfs: CfsConfig,
}

impl Default for SchedulerOptions {
    fn default() -> Self {
        Self {
            kind: "credit1".into(),
            credit1: Credit1Config::default(),
            cfs: CfsConfig::default(),
        }
    }
}

/// The host's InfiniBand adapter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct AdapterOptions {
    /// `vmm-bypass` (Xen split driver, F §2) or `sriov` (PF + VFs, G).
    pub kind: String,
    /// Virtual functions (SR-IOV). Default 16, at most 16... 126 allowed by
    /// hardware; the thesis's ConnectX-2 had 16.
    pub vfs: u32,
    /// Control-path latency per verb (create CQ/QP, register MR): through
    /// dom0's back-end for vmm-bypass (default 50us), the VF directly for
    /// SR-IOV (default 5us).
    pub control_latency: Option<String>,
    /// HCA time to process one work request (WQE fetch, doorbell, DMA
    /// set-up), pipelined with the transfer of the previous one. Default
    /// 4.355us (**calibration**: 2 KB messages at 448 MB/s, F Table 3).
    pub msg_overhead: String,
    /// `per-packet` (QPs take turns per MTU packet) or `per-message` (one
    /// message at a time per destination, FIFO). Default per-packet.
    pub arbitration: String,
    /// Time from delivery of a Write/Send to the requester's CQE (ACK).
    /// Default 1us.
    pub ack_delay: String,
    /// Rate of the adapter's DMA engine, MB/s (10^6 B/s). A message between
    /// two VMs on the same host never reaches the link: the HCA reads it
    /// from the sender's memory and writes it into the receiver's, so it
    /// holds this host's WQE engine for 2 × bytes / rate (both DMAs on one
    /// adapter) after the WQE overhead, and the host's other work requests
    /// queue behind it. Default 1600 (**input**, not fitted: PCIe 1.1 x8 as
    /// on F's MT25208, 2 GB/s per direction less ~20 % TLP overhead); a
    /// loopback stream therefore peaks at 800 MB/s. docs/host.md.
    pub dma_mbps: f64,
}

impl Default for AdapterOptions {
    fn default() -> Self {
        Self {
            kind: "vmm-bypass".into(),
            vfs: 16,
            control_latency: None,
            msg_overhead: "4.355us".into(),
            arbitration: "per-packet".into(),
            ack_delay: "1us".into(),
            dma_mbps: 1600.0,
        }
    }
}

/// One physical host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct HostOptions {
    /// Name.
    pub name: String,
    /// Physical CPUs. Default 8 (F: 2 × quad-core).
    #[serde(default = "default_pcpus")]
    pub pcpus: usize,
    /// CPU scheduler.
    #[serde(default)]
    pub scheduler: SchedulerOptions,
    /// Adapter.
    #[serde(default)]
    pub adapter: AdapterOptions,
    /// Delay before dom0 / the host applies a cap, weight or quota change.
    /// Default `0ms`.
    #[serde(default = "zero")]
    pub actuation_delay: String,
}

fn default_pcpus() -> usize {
    8
}
fn zero() -> String {
    "0ms".into()
}

/// One VM: a scheduler domain (Xen) or cgroup (CFS) with `vcpus` vCPUs.
/// Each vCPU runs at most one program (a workload's `vcpu` / `peer-vcpu`)
/// with its own CQ ring; outputs name vCPU *k* > 0 `name/k`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct VmOptions {
    /// Name.
    pub name: String,
    /// Host name.
    pub host: String,
    /// Virtual CPUs, 1-64. Default 1.
    #[serde(default = "one_vcpu")]
    pub vcpus: usize,
    /// PCPUs every vCPU of the VM may run on (Xen's `cpus =`; default: any).
    #[serde(default)]
    pub pin: Option<Vec<usize>>,
    /// CPU cap of the whole VM in % of one PCPU, 0 < cap ≤ 100 × vcpus
    /// (credit1 domain cap; CFS quota = cap × period for the VM's cgroup).
    /// Default uncapped.
    #[serde(default)]
    pub cap: Option<f64>,
    /// Credit1 weight / CFS shares. Default 256 / 1024.
    #[serde(default)]
    pub weight: Option<i64>,
    /// CFS quota per period (instead of `cap`).
    #[serde(default)]
    pub quota: Option<String>,
    /// CFS period. Default the scheduler's (100ms).
    #[serde(default)]
    pub period: Option<String>,
    /// CQ ring entries. Default 1024.
    #[serde(default = "default_cq")]
    pub cq_entries: usize,
    /// Guest CPU per posted work request. Default 1us.
    #[serde(default = "default_post")]
    pub post_cost: String,
    /// Guest CPU per successful poll of the CQ. Default 0.2us.
    #[serde(default = "default_poll")]
    pub poll_cost: String,
}

fn default_cq() -> usize {
    1024
}
fn one_vcpu() -> usize {
    1
}

/// Most vCPUs a VM may have (Xen 3.x's `MAX_VIRT_CPUS` on x86 was 32; 64
/// leaves room for later hypervisors).
pub const MAX_VCPUS: usize = 64;

/// The name outputs give vCPU `k` of VM `vm`: the VM's own name for vCPU 0,
/// `vm/k` for the others.
///
/// ```
/// assert_eq!(ibcloud_host::scenario::vcpu_name("db", 0), "db");
/// assert_eq!(ibcloud_host::scenario::vcpu_name("db", 2), "db/2");
/// ```
pub fn vcpu_name(vm: &str, k: usize) -> String {
    if k == 0 {
        vm.to_string()
    } else {
        format!("{vm}/{k}")
    }
}
fn default_post() -> String {
    "1us".into()
}
fn default_poll() -> String {
    "0.2us".into()
}

/// One workload: a program on `vm` (and a passive or serving peer on `peer`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct WorkloadOptions {
    /// `rdma-write`, `rdma-read`, `send` (microbenchmarks), `nectere`, or
    /// a round-based skeleton of G: `terasort`, `mrbench`, `hpl`
    /// ([`Skeleton`]).
    pub kind: String,
    /// Name (default `kind@vm`).
    #[serde(default)]
    pub name: Option<String>,
    /// The VM running the client / requester (`nas`: rank 0, default the
    /// first of `ranks`).
    #[serde(default)]
    pub vm: String,
    /// The vCPU of `vm` that runs the program (0 to its `vcpus` − 1).
    /// Default 0.
    #[serde(default)]
    pub vcpu: Option<usize>,
    /// The vCPU of `peer` that runs the serving or receiving program, and
    /// whose CQ gets the peer's completions. Default 0.
    #[serde(default)]
    pub peer_vcpu: Option<usize>,
    /// The peer VM (responder, receiver or Nectere server); on the same host
    /// the messages go through the adapter's loopback (`dma-mbps`). Not for
    /// `nas`.
    #[serde(default)]
    pub peer: String,
    /// Service level of the workload's queue pairs (0–15; its VL is
    /// `fabric.sl2vl[sl]`). Default 0.
    #[serde(default)]
    pub sl: Option<u8>,
    /// `nas`: the benchmark (`is`, `cg`, `ft`, `mg`, `bt`, `sp`, `lu`;
    /// [`crate::nas`]).
    #[serde(default)]
    pub benchmark: Option<String>,
    /// `nas`: the VMs running the ranks, in rank order (at least 2; one
    /// program per VM).
    #[serde(default)]
    pub ranks: Option<Vec<String>>,
    /// Message (request) size. Default 64 KB (a skeleton: its own).
    #[serde(default)]
    pub size: Option<Bytes>,
    /// Requests to complete; 0 = until the end of the run.
    #[serde(default)]
    pub iterations: u64,
    /// Outstanding requests (transmission depth). Default 1 for nectere, 16
    /// otherwise.
    #[serde(default)]
    pub depth: Option<u32>,
    /// Minimum time between posts (a throttled benchmark). Default 0.
    #[serde(default)]
    pub throttle: Option<String>,
    /// The throttle applies from this time on (F Fig. 8: VMs throttled
    /// mid-run). Default 0.
    #[serde(default)]
    pub throttle_from: Option<String>,
    /// Guest compute after each completion (fixed); `nas`: compute per
    /// superstep (default the benchmark's calibrated value).
    #[serde(default)]
    pub compute: Option<String>,
    /// Guest compute after each completion as a hashing rate over the
    /// buffer (e.g. MD5 at `md5-mbps` MB/s).
    #[serde(default)]
    pub md5_mbps: Option<f64>,
    /// Start after this delay (after the adapter's set-up).
    #[serde(default)]
    pub start: Option<String>,
    /// Busy guest CPU before the measured phase (connection set-up, memory
    /// registration); F Table 3's total − issue time is ≈ 1.45 s. Default 0.
    #[serde(default)]
    pub setup_cpu: Option<String>,
    /// Stop posting at this time (e.g. to change a rate mid-run, F Fig. 8).
    #[serde(default)]
    pub stop: Option<String>,
    /// Nectere: reply size. Default 64 bytes.
    #[serde(default)]
    pub reply_size: Option<Bytes>,
    /// Nectere: server compute per request (FCFS). Default 129.3us
    /// (**calibration**: standalone 64 KB latency 209 us on F's testbed).
    #[serde(default)]
    pub service: Option<String>,
    /// `nectere`, `memcached`: each request's server compute drawn uniformly
    /// from `service × (1 ± service-jitter)`, seeded by the scenario's seed,
    /// so closed loops of fixed period do not phase-lock with each other.
    /// A fraction in [0, 1). Default 0 (every request takes `service`).
    #[serde(default)]
    pub service_jitter: Option<f64>,
    /// Time scale of this workload's traffic (both directions): `packet`
    /// (default; every packet in netsim) or `fluid` (a flow-level rate
    /// sharing link capacity max-min with the others; `fluid.rs`).
    #[serde(default = "default_mode")]
    pub mode: String,
    /// Skeletons: RDMA Writes per round (default: the skeleton's).
    #[serde(default)]
    pub messages: Option<u64>,
    /// Skeletons: compute at the start of a round (map, DGEMM).
    #[serde(default)]
    pub compute_before: Option<String>,
    /// Skeletons: compute at the end of a round (reduce).
    #[serde(default)]
    pub compute_after: Option<String>,
    /// `memcached`: the value sizes of the Get responses, cycled in order
    /// (G Figs. 40–41: 4 KB, 16 KB, 512 KB). Default `["4k", "16k", "512k"]`.
    #[serde(default)]
    pub sizes: Option<Vec<Bytes>>,
    /// `memcached`: consecutive Gets of each size before moving to the
    /// next. Default 100.
    #[serde(default)]
    pub per_size: Option<u64>,
    /// `mapreduce-sort`: `"c:m"`, compute units to message units per round
    /// relative to the skeleton's base 1:1 (F Fig. 18: `"1:5"` issues five
    /// times the messages per unit of compute). Default `"1:1"`.
    #[serde(default)]
    pub io_ratio: Option<String>,
}

/// Parses an I/O ratio `"c:m"` (two positive integers).
///
/// ```
/// assert_eq!(ibcloud_host::scenario::parse_io_ratio("1:5"), Ok((1, 5)));
/// assert!(ibcloud_host::scenario::parse_io_ratio("1:0").is_err());
/// ```
pub fn parse_io_ratio(text: &str) -> Result<(u64, u64), String> {
    let bad = || format!("'{text}' is not a ratio 'c:m' of two positive integers (e.g. \"1:5\")");
    let (c, m) = text.split_once(':').ok_or_else(bad)?;
    let c: u64 = c.trim().parse().map_err(|_| bad())?;
    let m: u64 = m.trim().parse().map_err(|_| bad())?;
    if c == 0 || m == 0 || c > 1000 || m > 1000 {
        return Err(format!("{} (each 1-1000)", bad()));
    }
    Ok((c, m))
}

/// `memcached`'s default response sizes (G Figs. 40–41).
pub const MEMCACHED_SIZES: [u64; 3] = [4 << 10, 16 << 10, 512 << 10];

/// A round-based skeleton's defaults (G §5.3 and §10.1 item 6; chosen from
/// the workloads' published sizes before any comparison, not fitted —
/// docs/host.md gives the arithmetic). Each round: `before` compute,
/// `messages` RDMA Writes of `size` at `depth` with `per_message` compute
/// after each completion, then `after` compute.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Skeleton {
    /// Bytes per message.
    pub size: u64,
    /// Messages per round.
    pub messages: u64,
    /// Outstanding messages.
    pub depth: u32,
    /// Compute before (ps).
    pub before: Time,
    /// Compute per completion (ps).
    pub per_message: Time,
    /// Compute after (ps).
    pub after: Time,
}

/// The skeleton of a workload kind, if it is one.
///
/// ```
/// let t = ibcloud_host::scenario::skeleton("terasort").unwrap();
/// assert_eq!((t.size, t.messages), (1 << 20, 312));
/// assert!(ibcloud_host::scenario::skeleton("nectere").is_none());
/// ```
pub fn skeleton(kind: &str) -> Option<Skeleton> {
    const MS: Time = 1_000_000_000;
    match kind {
        // TeraSort, 10 GB over 32 VMs: 312.5 MB per VM; map and reduce at
        // 50 MB/s of guest CPU each (6.25 s), the shuffle as 312 1 MB writes,
        // merging at 100 MB/s (10 ms per MB).
        "terasort" => Some(Skeleton {
            size: 1 << 20,
            messages: 312,
            depth: 4,
            before: 6250 * MS,
            per_message: 10 * MS,
            after: 6250 * MS,
        }),
        // MRBench: many small jobs; 100 ms of map and of reduce, 16 4 KB writes.
        "mrbench" => Some(Skeleton {
            size: 4096,
            messages: 16,
            depth: 16,
            before: 100 * MS,
            per_message: 0,
            after: 100 * MS,
        }),
        // HPL, Ns 7500, NB 128, 32 ranks (4 × 8): one panel step per round:
        // 2/3·Ns³/32/59 ≈ 1.5e8 flop of DGEMM at 5 Gflop/s ≈ 30 ms, then the
        // panel (7500/4 rows × 128 × 8 B ≈ 1.9 MB) as 8 writes of 256 KB.
        "hpl" => Some(Skeleton {
            size: 256 << 10,
            messages: 8,
            depth: 8,
            before: 30 * MS,
            per_message: 0,
            after: 0,
        }),
        // GTC particle sort as an MPI map-reduce (F §7, Fig. 18): per round
        // 20 ms of particle push/binning per compute unit, then the
        // exchange of 16 64 KB messages per message unit, then a 10 ms
        // local sort. `io-ratio` "c:m" scales compute by c and messages by m.
        "mapreduce-sort" => Some(Skeleton {
            size: 64 << 10,
            messages: 16,
            depth: 8,
            before: 20 * MS,
            per_message: 0,
            after: 10 * MS,
        }),
        _ => None,
    }
}

impl WorkloadOptions {
    /// Message size (given, or the kind's default).
    pub fn size(&self) -> u64 {
        self.size
            .map(|b| b.0)
            .or_else(|| skeleton(&self.kind).map(|s| s.size))
            .unwrap_or(if self.kind == "memcached" { 64 } else { 65536 })
    }

    /// Transmission depth (given, or the kind's default).
    pub fn depth(&self) -> u32 {
        self.depth.unwrap_or_else(|| match skeleton(&self.kind) {
            Some(s) => s.depth,
            None if self.kind == "nectere" || self.kind == "memcached" => 1,
            None => 16,
        })
    }
}

fn default_mode() -> String {
    "packet".into()
}

/// A controller (kind-specific keys are checked by the controller crate).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ControllerOptions {
    /// Kind, e.g. `ibmon`.
    pub kind: String,
    /// The rest of the table.
    #[serde(flatten)]
    pub params: serde_json::Map<String, serde_json::Value>,
}

/// A whole scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Scenario {
    /// Simulated time limit. Default `1s`.
    #[serde(default = "default_duration")]
    pub duration: String,
    /// Seed.
    #[serde(default = "one")]
    pub seed: u64,
    /// Time-series sampling interval. Default `10ms`.
    #[serde(default = "default_sample")]
    pub sample_interval: String,
    /// Stop with an error after this many events (host + network). Default 5e8.
    #[serde(default = "default_max_events")]
    pub max_events: u64,
    /// Stop with an error when a VM records more latency samples than this.
    /// Default 5e6 (the memory budget of the per-request series).
    #[serde(default = "default_max_samples")]
    pub max_samples: usize,
    /// Fabric.
    #[serde(default)]
    pub fabric: FabricOptions,
    /// Hosts.
    #[serde(default)]
    pub hosts: Vec<HostOptions>,
    /// VMs.
    #[serde(default)]
    pub vms: Vec<VmOptions>,
    /// Workloads.
    #[serde(default)]
    pub workloads: Vec<WorkloadOptions>,
    /// Controllers.
    #[serde(default)]
    pub controllers: Vec<ControllerOptions>,
    /// The subnet manager: MAD latency, restart time, SLs at QP creation,
    /// scheduled pushes (`crate::sm`).
    #[serde(default)]
    pub sm: crate::sm::SmOptions,
}

fn default_duration() -> String {
    "1s".into()
}
fn one() -> u64 {
    1
}
fn default_sample() -> String {
    "10ms".into()
}
fn default_max_events() -> u64 {
    500_000_000
}
fn default_max_samples() -> usize {
    5_000_000
}

fn table<T: DeserializeOwned>(path: &str, v: serde_json::Value) -> Result<T, ScenarioError> {
    serde_json::from_value(v).map_err(|e| ScenarioError {
        path: path.into(),
        problem: e.to_string(),
    })
}

impl Scenario {
    /// Reads a scenario from JSON (the TOML document as parsed by Python),
    /// table by table so errors carry their place.
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| ScenarioError {
            path: String::new(),
            problem: e.to_string(),
        })?;
        let serde_json::Value::Object(mut top) = v else {
            return err("", "a scenario is a table");
        };
        let mut arrays = HashMap::new();
        for key in ["hosts", "vms", "workloads", "controllers"] {
            if let Some(x) = top.remove(key) {
                let serde_json::Value::Array(items) = x else {
                    return err(key, "must be an array of tables ([[...]])");
                };
                arrays.insert(key, items);
            }
        }
        let fabric = top.remove("fabric");
        let sm = top.remove("sm");
        let mut s: Scenario = table("", serde_json::Value::Object(top))?;
        if let Some(f) = fabric {
            s.fabric = table("fabric", f)?;
        }
        if let Some(x) = sm {
            s.sm = table("sm", x)?;
        }
        for (key, items) in arrays {
            for (i, item) in items.into_iter().enumerate() {
                let path = format!("{key}[{i}]");
                match key {
                    "hosts" => s.hosts.push(table(&path, item)?),
                    "vms" => s.vms.push(table(&path, item)?),
                    "workloads" => s.workloads.push(table(&path, item)?),
                    _ => s.controllers.push(table(&path, item)?),
                }
            }
        }
        Ok(s)
    }

    /// Checks names, ranges and feasibility before a run.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let duration = dur("duration", &self.duration)?;
        if duration == 0 {
            return err("duration", "must be positive");
        }
        if dur("sample-interval", &self.sample_interval)? == 0 {
            return err("sample-interval", "must be positive");
        }
        if ![256, 512, 1024, 2048, 4096].contains(&self.fabric.mtu) {
            return err(
                "fabric.mtu",
                format!("{} is not an IB MTU", self.fabric.mtu),
            );
        }
        if self
            .fabric
            .link
            .parse::<ibcloud_fabric::LinkRate>()
            .is_err()
        {
            return err(
                "fabric.link",
                format!("'{}' is not a link rate like 4xSDR", self.fabric.link),
            );
        }
        self.fabric.sim_qos()?;
        let sm = self.sm.settings()?;
        if sm.path_sl_sa {
            if let Some(i) = self
                .hosts
                .iter()
                .position(|h| h.adapter.arbitration == "per-message")
            {
                return err(
                    format!("hosts[{i}].adapter.arbitration"),
                    "sm.path-sl = \"sa\" gives each QP its own SL at creation; per-message arbitration shares one send queue per SL",
                );
            }
        }
        if !["arbitration", "max-min"].contains(&self.fabric.fluid_share.as_str()) {
            return err(
                "fabric.fluid-share",
                format!(
                    "unknown rule '{}' (arbitration, max-min)",
                    self.fabric.fluid_share
                ),
            );
        }
        if self.fabric.preset.is_some() && self.fabric.file.is_some() {
            return err("fabric.file", "give either preset or file");
        }
        dur("fabric.link-delay", &self.fabric.link_delay)?;
        dur("fabric.switch-latency", &self.fabric.switch_latency)?;
        if self.hosts.len() < 2 {
            return err(
                "hosts",
                "a scenario needs at least two [[hosts]] (one switch joins their HCAs)",
            );
        }
        let mut hosts = HashMap::new();
        for (i, h) in self.hosts.iter().enumerate() {
            let p = format!("hosts[{i}]");
            if hosts.insert(h.name.as_str(), i).is_some() {
                return err(format!("{p}.name"), format!("duplicate host '{}'", h.name));
            }
            if h.pcpus == 0 || h.pcpus > 256 {
                return err(format!("{p}.pcpus"), "must be 1-256");
            }
            if !["credit1", "cfs"].contains(&h.scheduler.kind.as_str()) {
                return err(
                    format!("{p}.scheduler.kind"),
                    format!("unknown scheduler '{}' (credit1, cfs)", h.scheduler.kind),
                );
            }
            let c = &h.scheduler.credit1;
            if c.tick < 1_000_000
                || c.ticks_per_slice == 0
                || c.ticks_per_acct == 0
                || c.credits_per_tick <= 0
                || c.tick % c.credits_per_tick as Time != 0
            {
                return err(
                    format!("{p}.scheduler.credit1"),
                    "tick must be at least 1us and a multiple of credits-per-tick ps; ticks and credits positive",
                );
            }
            let f = &h.scheduler.cfs;
            if f.period < 1_000_000_000 || f.sched_latency == 0 || f.min_granularity == 0 {
                return err(
                    format!("{p}.scheduler.cfs"),
                    "period must be at least 1ms; sched-latency and min-granularity positive",
                );
            }
            let a = &h.adapter;
            if !["vmm-bypass", "sriov"].contains(&a.kind.as_str()) {
                return err(
                    format!("{p}.adapter.kind"),
                    format!("unknown adapter '{}' (vmm-bypass, sriov)", a.kind),
                );
            }
            if a.kind == "sriov" && !(1..=16).contains(&a.vfs) {
                return err(
                    format!("{p}.adapter.vfs"),
                    "an SR-IOV adapter has 1-16 VFs here",
                );
            }
            if !["per-packet", "per-message"].contains(&a.arbitration.as_str()) {
                return err(
                    format!("{p}.adapter.arbitration"),
                    format!(
                        "unknown arbitration '{}' (per-packet, per-message)",
                        a.arbitration
                    ),
                );
            }
            if let Some(c) = &a.control_latency {
                dur(&format!("{p}.adapter.control-latency"), c)?;
            }
            dur(&format!("{p}.adapter.msg-overhead"), &a.msg_overhead)?;
            dur(&format!("{p}.adapter.ack-delay"), &a.ack_delay)?;
            dur(&format!("{p}.actuation-delay"), &h.actuation_delay)?;
        }
        let mut vms = HashMap::new();
        let mut per_host = vec![0u32; self.hosts.len()];
        for (i, v) in self.vms.iter().enumerate() {
            let p = format!("vms[{i}]");
            if vms.insert(v.name.as_str(), i).is_some() {
                return err(format!("{p}.name"), format!("duplicate VM '{}'", v.name));
            }
            let Some(&h) = hosts.get(v.host.as_str()) else {
                return err(format!("{p}.host"), format!("unknown host '{}'", v.host));
            };
            per_host[h] += 1;
            let host = &self.hosts[h];
            if host.adapter.kind == "sriov" && per_host[h] > host.adapter.vfs {
                return err(
                    format!("{p}.host"),
                    format!(
                        "host '{}' has {} VFs but more VMs need one",
                        host.name, host.adapter.vfs
                    ),
                );
            }
            if let Some(pin) = &v.pin {
                if pin.is_empty() || pin.iter().any(|&c| c >= host.pcpus) {
                    return err(
                        format!("{p}.pin"),
                        format!("PCPUs must be in 0..{} on host '{}'", host.pcpus, host.name),
                    );
                }
            }
            if v.vcpus == 0 || v.vcpus > MAX_VCPUS {
                return err(
                    format!("{p}.vcpus"),
                    format!("{} vCPUs: a VM has 1-{MAX_VCPUS}", v.vcpus),
                );
            }
            if let Some(c) = v.cap {
                let max = 100.0 * v.vcpus as f64;
                if !(c.is_finite() && c > 0.0 && c <= max) {
                    return err(
                        format!("{p}.cap"),
                        format!(
                            "cap {c} is not in (0, {max}] % (100 % per vCPU, {} vCPU{})",
                            v.vcpus,
                            if v.vcpus == 1 { "" } else { "s" }
                        ),
                    );
                }
            }
            if let Some(w) = v.weight {
                if w <= 0 || w > 65535 {
                    return err(format!("{p}.weight"), format!("weight {w} must be 1-65535"));
                }
            }
            if v.quota.is_some() && host.scheduler.kind != "cfs" {
                return err(format!("{p}.quota"), "a quota needs the cfs scheduler");
            }
            if v.quota.is_some() && v.cap.is_some() {
                return err(format!("{p}.quota"), "give either cap or quota");
            }
            let period = match &v.period {
                Some(t) => dur(&format!("{p}.period"), t)?,
                None => host.scheduler.cfs.period,
            };
            if let Some(q) = &v.quota {
                let q = dur(&format!("{p}.quota"), q)?;
                if q == 0 || q > period.saturating_mul(v.vcpus as Time) {
                    return err(
                        format!("{p}.quota"),
                        "must be positive and at most the period × vcpus",
                    );
                }
            }
            if v.cq_entries == 0 || v.cq_entries > 1 << 22 {
                return err(format!("{p}.cq-entries"), "must be 1-4194304");
            }
            dur(&format!("{p}.post-cost"), &v.post_cost)?;
            dur(&format!("{p}.poll-cost"), &v.poll_cost)?;
        }
        for (i, v) in self.vms.iter().enumerate() {
            // Outputs name vCPU k > 0 `name/k`: no other VM may be called that.
            for k in 1..v.vcpus {
                if let Some(&j) = vms.get(vcpu_name(&v.name, k).as_str()) {
                    return err(
                        format!("vms[{j}].name"),
                        format!(
                            "'{}' is the name of vCPU {k} of VM '{}' (vms[{i}])",
                            self.vms[j].name, v.name
                        ),
                    );
                }
            }
        }
        let mut cq_use: HashMap<String, u64> = HashMap::new();
        for (i, w) in self.workloads.iter().enumerate() {
            let p = format!("workloads[{i}]");
            if let Some(sl) = w.sl.filter(|&sl| sl > 15) {
                return err(format!("{p}.sl"), format!("SL {sl} is not 0-15"));
            }
            if ![
                "rdma-write",
                "rdma-read",
                "send",
                "nectere",
                "terasort",
                "mrbench",
                "hpl",
                "nas",
                "memcached",
                "mapreduce-sort",
            ]
            .contains(&w.kind.as_str())
            {
                return err(
                    format!("{p}.kind"),
                    format!(
                        "unknown workload '{}' (rdma-write, rdma-read, send, nectere, memcached, terasort, mrbench, hpl, mapreduce-sort, nas)",
                        w.kind
                    ),
                );
            }
            if w.kind == "nas" {
                self.validate_nas(&p, w, &vms, &mut cq_use)?;
                continue;
            }
            if w.benchmark.is_some() || w.ranks.is_some() {
                return err(format!("{p}.benchmark"), "benchmark and ranks are for nas");
            }
            let Some(&a) = vms.get(w.vm.as_str()) else {
                return err(format!("{p}.vm"), format!("unknown VM '{}'", w.vm));
            };
            let Some(&b) = vms.get(w.peer.as_str()) else {
                return err(format!("{p}.peer"), format!("unknown VM '{}'", w.peer));
            };
            if a == b {
                return err(format!("{p}.peer"), "a VM cannot be its own peer");
            }
            let (ka, kb) = (w.vcpu.unwrap_or(0), w.peer_vcpu.unwrap_or(0));
            for (key, k, vm) in [("vcpu", ka, a), ("peer-vcpu", kb, b)] {
                let n = self.vms[vm].vcpus;
                if k >= n {
                    return err(
                        format!("{p}.{key}"),
                        format!(
                            "VM '{}' has {n} vCPU{} (0-{}), not vCPU {k}",
                            self.vms[vm].name,
                            if n == 1 { "" } else { "s" },
                            n - 1
                        ),
                    );
                }
            }
            if skeleton(&w.kind).is_none()
                && (w.messages.is_some() || w.compute_before.is_some() || w.compute_after.is_some())
            {
                return err(
                    format!("{p}.messages"),
                    "messages, compute-before and compute-after are for terasort, mrbench, hpl and mapreduce-sort",
                );
            }
            if skeleton(&w.kind).is_some() && (w.throttle.is_some() || w.md5_mbps.is_some()) {
                return err(
                    format!("{p}.throttle"),
                    "a skeleton (terasort, mrbench, hpl, mapreduce-sort) takes compute, not throttle or md5-mbps",
                );
            }
            for (key, v) in [
                ("compute-before", &w.compute_before),
                ("compute-after", &w.compute_after),
            ] {
                if let Some(t) = v {
                    dur(&format!("{p}.{key}"), t)?;
                }
            }
            if w.size() > u32::MAX as u64 {
                return err(format!("{p}.size"), "at most 4 GiB");
            }
            if w.size() == 0 {
                return err(format!("{p}.size"), "a message needs at least one byte");
            }
            if !["packet", "fluid"].contains(&w.mode.as_str()) {
                return err(
                    format!("{p}.mode"),
                    format!("unknown mode '{}' (packet, fluid)", w.mode),
                );
            }
            if w.mode == "fluid" {
                for vm in [a, b] {
                    let h = hosts[self.vms[vm].host.as_str()];
                    if self.hosts[h].adapter.arbitration == "per-message" {
                        return err(
                            format!("{p}.mode"),
                            format!(
                                "fluid mode needs per-packet arbitration, but host '{}' arbitrates per message",
                                self.hosts[h].name
                            ),
                        );
                    }
                }
            }
            let depth = w.depth();
            if depth == 0 {
                return err(format!("{p}.depth"), "must be at least 1");
            }
            for (name, vm, k) in [(&w.vm, a, ka), (&w.peer, b, kb)] {
                // One CQ per vCPU.
                let who = vcpu_name(name, k);
                let e = cq_use.entry(who.clone()).or_default();
                *e += 2 * depth as u64;
                if *e > self.vms[vm].cq_entries as u64 {
                    return err(
                        format!("{p}.depth"),
                        format!(
                            "VM '{}' has a CQ of {} entries, smaller than the {} completions its workloads can have outstanding (2 × depth per workload)",
                            who, self.vms[vm].cq_entries, e
                        ),
                    );
                }
            }
            let mut start = 0;
            if let Some(t) = &w.start {
                start = dur(&format!("{p}.start"), t)?;
            }
            if let Some(t) = &w.stop {
                let stop = dur(&format!("{p}.stop"), t)?;
                if stop <= start {
                    return err(format!("{p}.stop"), "must be after start");
                }
            }
            if let Some(t) = &w.throttle {
                let gap = dur(&format!("{p}.throttle"), t)?;
                if w.iterations > 0
                    && (gap as u128) * (w.iterations as u128) + start as u128 > duration as u128
                {
                    return err(
                        format!("{p}.iterations"),
                        format!(
                            "{} requests at one per {} can never finish within duration {}",
                            w.iterations, t, self.duration
                        ),
                    );
                }
            }
            if start >= duration {
                return err(format!("{p}.start"), "starts after the end of the run");
            }
            if let Some(t) = &w.throttle_from {
                dur(&format!("{p}.throttle-from"), t)?;
                if w.throttle.is_none() {
                    return err(format!("{p}.throttle-from"), "needs a throttle");
                }
            }
            if let Some(t) = &w.setup_cpu {
                dur(&format!("{p}.setup-cpu"), t)?;
            }
            if let Some(t) = &w.compute {
                dur(&format!("{p}.compute"), t)?;
            }
            if let Some(m) = w.md5_mbps {
                if !(m.is_finite() && m > 0.0) {
                    return err(format!("{p}.md5-mbps"), "must be positive");
                }
            }
            if let Some(t) = &w.service {
                dur(&format!("{p}.service"), t)?;
            }
            if !["nectere", "memcached"].contains(&w.kind.as_str()) && w.service.is_some() {
                return err(
                    format!("{p}.service"),
                    "service is for nectere and memcached",
                );
            }
            if let Some(j) = w.service_jitter {
                if !["nectere", "memcached"].contains(&w.kind.as_str()) {
                    return err(
                        format!("{p}.service-jitter"),
                        "service-jitter is for nectere and memcached",
                    );
                }
                if !(j.is_finite() && (0.0..1.0).contains(&j)) {
                    return err(
                        format!("{p}.service-jitter"),
                        format!("must be a fraction in [0, 1), got {j}"),
                    );
                }
            }
            if w.kind != "nectere" && w.reply_size.is_some() {
                return err(
                    format!("{p}.reply-size"),
                    "reply-size is for nectere (memcached takes sizes)",
                );
            }
            if w.kind != "memcached" && (w.sizes.is_some() || w.per_size.is_some()) {
                return err(format!("{p}.sizes"), "sizes and per-size are for memcached");
            }
            if let Some(sizes) = &w.sizes {
                if sizes.is_empty() {
                    return err(
                        format!("{p}.sizes"),
                        "needs at least one response size (e.g. [\"4k\", \"16k\", \"512k\"])",
                    );
                }
                if let Some(b) = sizes.iter().find(|b| b.0 == 0 || b.0 > u32::MAX as u64) {
                    return err(
                        format!("{p}.sizes"),
                        format!("response size {} must be 1 B to 4 GiB", b.0),
                    );
                }
            }
            if w.per_size == Some(0) {
                return err(format!("{p}.per-size"), "must be at least 1");
            }
            if let Some(r) = &w.io_ratio {
                if w.kind != "mapreduce-sort" {
                    return err(format!("{p}.io-ratio"), "io-ratio is for mapreduce-sort");
                }
                parse_io_ratio(r).map_err(|e| ScenarioError {
                    path: format!("{p}.io-ratio"),
                    problem: e,
                })?;
            }
        }
        Ok(())
    }

    /// The checks of a `nas` workload.
    fn validate_nas(
        &self,
        p: &str,
        w: &WorkloadOptions,
        vms: &HashMap<&str, usize>,
        cq_use: &mut HashMap<String, u64>,
    ) -> Result<(), ScenarioError> {
        let Some(b) = w.benchmark.as_deref() else {
            return err(
                format!("{p}.benchmark"),
                format!(
                    "a nas workload needs a benchmark ({})",
                    crate::nas::BENCHMARKS.join(", ")
                ),
            );
        };
        if !crate::nas::BENCHMARKS.contains(&b) {
            return err(
                format!("{p}.benchmark"),
                format!(
                    "unknown NAS benchmark '{b}' ({})",
                    crate::nas::BENCHMARKS.join(", ")
                ),
            );
        }
        let ranks = w.ranks.as_deref().unwrap_or_default();
        if ranks.len() < 2 {
            return err(
                format!("{p}.ranks"),
                format!("a nas workload needs at least 2 ranks, got {}", ranks.len()),
            );
        }
        let mut seen = std::collections::HashSet::new();
        for r in ranks {
            if !vms.contains_key(r.as_str()) {
                return err(format!("{p}.ranks"), format!("unknown VM '{r}'"));
            }
            if !seen.insert(r.as_str()) {
                return err(format!("{p}.ranks"), format!("VM '{r}' is listed twice"));
            }
        }
        if !w.vm.is_empty() && w.vm != ranks[0] {
            return err(
                format!("{p}.vm"),
                "vm is rank 0: leave it out or give ranks[0]",
            );
        }
        if !w.peer.is_empty() {
            return err(format!("{p}.peer"), "a nas workload has ranks, not a peer");
        }
        for (key, bad) in [
            ("size", w.size.is_some()),
            ("messages", w.messages.is_some()),
            (
                "throttle",
                w.throttle.is_some() || w.throttle_from.is_some(),
            ),
            ("md5-mbps", w.md5_mbps.is_some()),
            (
                "compute-before",
                w.compute_before.is_some() || w.compute_after.is_some(),
            ),
            ("service", w.service.is_some() || w.reply_size.is_some()),
            ("stop", w.stop.is_some()),
            ("sizes", w.sizes.is_some() || w.per_size.is_some()),
            ("io-ratio", w.io_ratio.is_some()),
            ("vcpu", w.vcpu.is_some() || w.peer_vcpu.is_some()),
        ] {
            if bad {
                return err(
                    format!("{p}.{key}"),
                    "not a nas key (nas takes benchmark, ranks, iterations = supersteps, compute per superstep, depth, start, setup-cpu, mode; every rank runs on vCPU 0 of its VM)",
                );
            }
        }
        if !["packet", "fluid"].contains(&w.mode.as_str()) {
            return err(
                format!("{p}.mode"),
                format!("unknown mode '{}' (packet, fluid)", w.mode),
            );
        }
        if w.depth == Some(0) {
            return err(format!("{p}.depth"), "must be at least 1");
        }
        if w.mode == "fluid" {
            for r in ranks {
                let host = &self.vms[vms[r.as_str()]].host;
                if let Some(h) = self.hosts.iter().find(|h| &h.name == host) {
                    if h.adapter.arbitration == "per-message" {
                        return err(
                            format!("{p}.mode"),
                            format!("fluid mode needs per-packet arbitration, but host '{host}' arbitrates per message"),
                        );
                    }
                }
            }
        }
        for (key, v) in [("compute", &w.compute), ("setup-cpu", &w.setup_cpu)] {
            if let Some(t) = v {
                dur(&format!("{p}.{key}"), t)?;
            }
        }
        if let Some(t) = &w.start {
            if dur(&format!("{p}.start"), t)? >= dur("duration", &self.duration)? {
                return err(format!("{p}.start"), "starts after the end of the run");
            }
        }
        let pat = crate::nas::pattern(b, ranks.len()).expect("known benchmark");
        for (r, name) in ranks.iter().enumerate() {
            // Sends of one superstep plus the receives posted for it.
            let per = 2 * (pat.peers[r].len() * pat.messages.len()) as u64;
            let e = cq_use.entry(name.clone()).or_default();
            *e += per;
            let cq = self.vms[vms[name.as_str()]].cq_entries as u64;
            if *e > cq {
                return err(
                    format!("{p}.ranks"),
                    format!(
                        "VM '{name}' has a CQ of {cq} entries, smaller than the {e} completions one superstep of {b} can leave (sends plus receives)"
                    ),
                );
            }
        }
        Ok(())
    }

    /// Resolved simulated duration.
    pub fn duration_ps(&self) -> Time {
        parse_duration(&self.duration).unwrap_or(0)
    }
}

/// Parses a validated duration field.
pub(crate) fn d(text: &str) -> Time {
    parse_duration(text).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"{"hosts": [{"name": "A"}, {"name": "B"}],
        "vms": [{"name": "a", "host": "A"}, {"name": "b", "host": "B"}],
        "workloads": [{"kind": "rdma-write", "vm": "a", "peer": "b"}]}"#;

    fn check(patch: impl Fn(&mut serde_json::Value)) -> Result<(), ScenarioError> {
        let mut v: serde_json::Value = serde_json::from_str(BASE).unwrap();
        patch(&mut v);
        Scenario::from_json(&v.to_string())?.validate()
    }

    #[test]
    fn bad_inputs_name_their_place() {
        assert!(check(|_| {}).is_ok());
        let e = check(|v| v["vms"][1]["colour"] = "red".into()).unwrap_err();
        assert_eq!(e.path, "vms[1]");
        assert!(e.problem.contains("unknown field `colour`"), "{e}");
        let e = check(|v| v["workloads"][0]["vm"] = "zz".into()).unwrap_err();
        assert_eq!(e.path, "workloads[0].vm");
        let e = check(|v| v["vms"][0]["cap"] = 150.into()).unwrap_err();
        assert_eq!(e.path, "vms[0].cap");
        let e = check(|v| v["vms"][0]["weight"] = 0.into()).unwrap_err();
        assert_eq!(e.path, "vms[0].weight");
        let e = check(|v| v["duration"] = "-3ms".into()).unwrap_err();
        assert_eq!(e.path, "duration");
        let e = check(|v| v["duration"] = "soon".into()).unwrap_err();
        assert_eq!(e.path, "duration");
        let e = check(|v| v["vms"][0]["cq-entries"] = 8.into()).unwrap_err();
        assert_eq!(e.path, "workloads[0].depth"); // 2 × depth 16 > 8
        let e = check(|v| {
            v["workloads"][0]["iterations"] = 1000.into();
            v["workloads"][0]["throttle"] = "10ms".into();
        })
        .unwrap_err();
        assert!(e.problem.contains("never finish"), "{e}");
        let e = check(|v| {
            v["hosts"][0]["adapter"] = serde_json::json!({"kind": "sriov", "vfs": 1});
            v["vms"]
                .as_array_mut()
                .unwrap()
                .push(serde_json::json!({"name": "c", "host": "A"}));
        })
        .unwrap_err();
        assert_eq!(e.path, "vms[2].host");
        let e = check(|v| v["workloads"][0]["peer"] = "a".into()).unwrap_err();
        assert!(e.problem.contains("its own peer"));
        let e = check(|v| v["fabric"] = serde_json::json!({"mtu": 1000})).unwrap_err();
        assert_eq!(e.path, "fabric.mtu");
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_bytes("64k"), Ok(65536));
        assert_eq!(parse_bytes("2M"), Ok(2 << 20));
        assert!(parse_bytes("lots").is_err());
    }
}
