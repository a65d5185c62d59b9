//! DRX's policies and options, and reading them from a scenario's
//! `[[controllers]]` table (`kind = "drx"`; unknown keys rejected, every
//! error names the key).

use super::cap::{CapMode, CapRule, CcFloor};
use super::placement::{OwnVme, Scope};
use super::pricing::Blame;
use super::record::HardwareSetting;
use super::workload::{Capacity, Comparison, ConfiguratorOptions, Eviction, Priority};
use crate::resex::params::{Params, Range};
use crate::Time;
use serde::Serialize;
use serde_json::{Map, Value};

/// G Table 4's policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyKind {
    /// Equal-Blame, Distributed.
    EbDist,
    /// Equal-Blame, Local.
    EbLocal,
    /// Hurt-Based, Distributed.
    HbDist,
    /// Hurt-Based, Local.
    HbLocal,
    /// Platform-only, equal: −5 points per violation.
    CcDist,
    /// Platform-only, hurt-based: −5 × share.
    PcDist,
    /// Static CC + QoS 32:32.
    #[serde(rename = "stmax")]
    StMax,
    /// Static CC + QoS 254:1.
    #[serde(rename = "stmaxq")]
    StMaxQ,
    /// CC pushed on violation, QoS 32:32.
    #[serde(rename = "drxmax")]
    DrxMax,
    /// CC pushed on violation, QoS 254:1.
    #[serde(rename = "drxmaxq")]
    DrxMaxQ,
}

/// Names as the scenario spells them.
pub const POLICY_NAMES: [&str; 10] = [
    "eb-dist", "eb-local", "hb-dist", "hb-local", "cc-dist", "pc-dist", "stmax", "stmaxq",
    "drxmax", "drxmaxq",
];

impl PolicyKind {
    /// From its name.
    pub fn parse(s: &str) -> Option<Self> {
        use PolicyKind::*;
        let all = [
            EbDist, EbLocal, HbDist, HbLocal, CcDist, PcDist, StMax, StMaxQ, DrxMax, DrxMaxQ,
        ];
        POLICY_NAMES.iter().position(|n| *n == s).map(|i| all[i])
    }
    /// Pricing policies: blame and scope.
    pub fn pricing(self) -> Option<(Blame, Scope)> {
        use PolicyKind::*;
        match self {
            EbDist => Some((Blame::Equal, Scope::Distributed)),
            EbLocal => Some((Blame::Equal, Scope::Local)),
            HbDist => Some((Blame::Hurt, Scope::Distributed)),
            HbLocal => Some((Blame::Hurt, Scope::Local)),
            _ => None,
        }
    }
    /// Platform-only cap policies: blame.
    pub fn platform(self) -> Option<Blame> {
        match self {
            PolicyKind::CcDist => Some(Blame::Equal),
            PolicyKind::PcDist => Some(Blame::Hurt),
            _ => None,
        }
    }
    /// Hardware policies: the QoS set at start, and whether CC is static
    /// (else pushed at the first violation).
    pub fn hardware(self) -> Option<(HardwareSetting, bool)> {
        use PolicyKind::*;
        match self {
            StMax => Some((HardwareSetting::QosEqual, true)),
            StMaxQ => Some((HardwareSetting::QosPriority, true)),
            DrxMax => Some((HardwareSetting::QosEqual, false)),
            DrxMaxQ => Some((HardwareSetting::QosPriority, false)),
            _ => None,
        }
    }
}

/// When the DRX policies' QoS (G Table 6) reaches the fabric.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum QosAt {
    /// Before the workloads start, as for StMax/StMaxQ (G §3.3: QoS "applies
    /// only to QPs created after the SM restarts, so QoS is effectively
    /// static"; G §4.5: DRXMax's QoS "as StMax"); DRX pushes only the CC.
    /// Default.
    #[default]
    Start,
    /// With the CC at the first violation: the SM restarts for the QoS, and
    /// only QPs created afterwards use the new SL/VL mapping.
    Violation,
}

/// A4: what PD is measured against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PdReference {
    /// PD = (SLA level − m)/SLA level; violation when PD > tolerance.
    #[default]
    Base,
    /// PD = (threshold − m)/threshold with threshold = level·(1 −
    /// tolerance); violation when PD > 0.
    Threshold,
}

/// G §9 A11: which SLs the hardware policies' CC covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CcSlsChoice {
    /// Every SL ("all VMs equally"). Default.
    #[default]
    All,
    /// Every SL but SL0 (Nectere's).
    Bulk,
}

/// A7: what Local policies price.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LocalPrice {
    /// One price per VME, applied only to the caps on the victim's host.
    #[default]
    Vme,
    /// A price per (VME, host).
    VmeHost,
}

/// A7: whose I/O the HB-Local ratio counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HbScope {
    /// Every VM of the VME (as HB-Dist).
    #[default]
    Cluster,
    /// Only its VMs on the victim's host.
    Host,
}

/// One ensemble as the scenario gives it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VmeSpec {
    /// Name.
    pub name: String,
    /// VM names.
    pub vms: Vec<String>,
    /// g, CQEs/s (the VME's I/O uncapped).
    pub g: f64,
    /// IOmin, CQEs/s.
    pub io_min: f64,
    /// α.
    pub alpha: f64,
    /// HP/LP.
    pub priority: Priority,
    /// Per-VM SLA level (CQEs/s); default g / |VMs|.
    pub sla: Option<f64>,
    /// Cap floor override (%).
    pub cap_min: Option<f64>,
}

/// Everything DRX is told.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DrxConfig {
    /// Policy.
    pub policy: PolicyKind,
    /// Accounting interval (G: 1 s).
    pub interval: Time,
    /// Epoch (G: 60 s).
    pub epoch: Time,
    /// SLA tolerance (G: 15 %).
    pub tolerance: f64,
    /// A4.
    pub pd_reference: PdReference,
    /// DCCR: the victim's own VME.
    pub own_vme: OwnVme,
    /// A1–A3.
    pub configurator: ConfiguratorOptions,
    /// Capacity of each host link, CQEs/s (A9: the Resos supply too).
    pub link_cqe_per_s: f64,
    /// Initial price, Resos per CQE (A9: 1).
    pub initial_price: f64,
    /// A7.
    pub local_price: LocalPrice,
    /// A7.
    pub hb_scope: HbScope,
    /// A5.
    pub cap_rule: CapRule,
    /// A6.
    pub cc_floor: CcFloor,
    /// A8 option: per-interval restore rate (0 = only the epoch reset).
    pub restore_rate: f64,
    /// One-way HA ↔ PM message latency.
    pub message_latency: Time,
    /// PM processing time per violation.
    pub pm_processing: Time,
    /// PM → SM → fabric MAD latency, as one lump: used only when no SM
    /// model times the push (under the host simulator its `[sm]` does).
    pub mad_latency: Time,
    /// DRXMax/DRXMaxQ: when their QoS is in force.
    pub qos_at: QosAt,
    /// G §9 A11: the SLs their CC covers.
    pub cc_sls: CcSlsChoice,
    /// CFS period of the caps.
    pub cfs_period: Time,
    /// The ensembles.
    pub vmes: Vec<VmeSpec>,
}

/// QDR data rate (32 Gb/s after 8b/10b = 4·10⁹ B/s) over Nectere's 64 KB
/// messages (G Table 7): the default link capacity in CQEs/s (A9).
pub const DEFAULT_LINK_CQE_PER_S: f64 = 4.0e9 / 65536.0;
/// 1 ms in ps.
pub const MS: Time = 1_000_000_000;

impl DrxConfig {
    /// G's values (1 s / 60 s, 15 %) with our defaults for what G leaves
    /// open (docs/drx.md), for `policy` and `vmes`.
    pub fn new(policy: PolicyKind, vmes: Vec<VmeSpec>) -> Self {
        Self {
            policy,
            interval: 1000 * MS,
            epoch: 60_000 * MS,
            tolerance: 0.15,
            pd_reference: PdReference::Base,
            own_vme: OwnVme::Exclude,
            configurator: ConfiguratorOptions::default(),
            link_cqe_per_s: DEFAULT_LINK_CQE_PER_S,
            initial_price: 1.0,
            local_price: LocalPrice::Vme,
            hb_scope: HbScope::Cluster,
            cap_rule: CapRule::default(),
            cc_floor: CcFloor::Points25,
            restore_rate: 0.0,
            message_latency: MS,
            pm_processing: MS / 10,
            mad_latency: MS,
            qos_at: QosAt::Start,
            cc_sls: CcSlsChoice::All,
            cfs_period: 100 * MS,
            vmes,
        }
    }

    /// Intervals per epoch.
    pub fn ints_per_epoch(&self) -> f64 {
        (self.epoch / self.interval) as f64
    }
}

const KEYS: [&str; 21] = [
    "policy",
    "vmes",
    "interval",
    "epoch",
    "tolerance",
    "pd-reference",
    "own-vme",
    "eviction",
    "comparison",
    "capacity",
    "link-cqe-per-s",
    "initial-price",
    "local-price",
    "hb-scope",
    "cap-mode",
    "dc-max",
    "cc-floor",
    "restore-rate",
    "message-latency",
    "pm-processing",
    "mad-latency",
];
const EXTRA_KEYS: [&str; 3] = ["cfs-period", "qos-at", "cc-sls"];
const VME_KEYS: [&str; 7] = [
    "vms",
    "g",
    "io-min",
    "alpha",
    "priority",
    "sla-cqe-per-s",
    "cap-min",
];

fn latency(p: &Params<'_>, key: &str, default: Time) -> Result<Time, String> {
    crate::dur_param(p.map, key, default).map_err(|e| format!("drx: {e}"))
}

fn vme_spec(name: &str, v: &Value, vm_names: &[String]) -> Result<VmeSpec, String> {
    let at = |m: String| format!("drx: vmes.{name}: {m}");
    let t = v
        .as_object()
        .ok_or_else(|| at("expected a table (vms, g, io-min, alpha, priority)".into()))?;
    if let Some(k) = t.keys().find(|k| !VME_KEYS.contains(&k.as_str())) {
        return Err(at(format!(
            "unknown key `{k}`, expected one of {}",
            VME_KEYS.join(", ")
        )));
    }
    let num = |k: &str| -> Result<Option<f64>, String> {
        match t.get(k) {
            None => Ok(None),
            Some(x) => x
                .as_f64()
                .map(Some)
                .ok_or_else(|| at(format!("{k}: expected a number, got {x}"))),
        }
    };
    let vms = t
        .get("vms")
        .and_then(Value::as_array)
        .ok_or_else(|| at("vms: expected a list of VM names".into()))?
        .iter()
        .map(|x| {
            let s = x
                .as_str()
                .ok_or_else(|| at(format!("vms: expected a VM name, got {x}")))?;
            if vm_names.iter().any(|n| n == s) {
                Ok(s.to_string())
            } else {
                Err(at(format!("vms: unknown VM '{s}'")))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let g = num("g")?.ok_or_else(|| at("g: required (CQEs/s)".into()))?;
    let priority = match t.get("priority").map(|x| x.as_str()) {
        None => Priority::Low,
        Some(Some("high")) => Priority::High,
        Some(Some("low")) => Priority::Low,
        Some(_) => return Err(at("priority: expected \"high\" or \"low\"".into())),
    };
    let sla = num("sla-cqe-per-s")?;
    if let Some(s) = sla {
        if !(s.is_finite() && s > 0.0) {
            return Err(at(format!(
                "sla-cqe-per-s: must be a positive number, got {s}"
            )));
        }
    }
    let cap_min = num("cap-min")?;
    if let Some(c) = cap_min {
        if !(c.is_finite() && (1.0..=100.0).contains(&c)) {
            return Err(at(format!("cap-min: must lie in [1, 100], got {c}")));
        }
    }
    Ok(VmeSpec {
        name: name.to_string(),
        vms,
        g,
        io_min: num("io-min")?.unwrap_or(0.0),
        alpha: num("alpha")?.unwrap_or(1.0),
        priority,
        sla,
        cap_min,
    })
}

impl DrxConfig {
    /// Reads a `kind = "drx"` table (everything but `kind`).
    pub fn from_params(map: &Map<String, Value>, vm_names: &[String]) -> Result<Self, String> {
        let p = Params { kind: "drx", map };
        let keys: Vec<&str> = KEYS.iter().chain(&EXTRA_KEYS).copied().collect();
        p.check_keys(&keys)?;
        let policy = match map.get("policy") {
            None => {
                return Err(format!(
                    "drx: policy: required, one of {}",
                    POLICY_NAMES.join(", ")
                ))
            }
            Some(v) => v.as_str().and_then(PolicyKind::parse).ok_or_else(|| {
                format!(
                    "drx: policy: expected one of {}, got {v}",
                    POLICY_NAMES.join(", ")
                )
            })?,
        };
        let vt = map
            .get("vmes")
            .and_then(Value::as_object)
            .ok_or("drx: vmes: required, a table of ensembles ({ name = { vms = [...], g = ..., io-min = ..., alpha = ..., priority = \"high\" } })")?;
        let vmes = vt
            .iter()
            .map(|(n, v)| vme_spec(n, v, vm_names))
            .collect::<Result<Vec<_>, _>>()?;
        if vmes.is_empty() {
            return Err("drx: vmes: no ensemble given".into());
        }
        let mut c = DrxConfig::new(policy, vmes);
        c.interval = p.duration("interval", c.interval)?;
        c.epoch = p.duration("epoch", c.epoch)?;
        if c.epoch < c.interval || !c.epoch.is_multiple_of(c.interval) {
            return Err("drx: epoch must be a whole number (≥ 1) of intervals".into());
        }
        c.tolerance = p.num("tolerance", c.tolerance, Range::Fraction)?;
        c.pd_reference = match p.choice("pd-reference", &["base", "threshold"])? {
            "base" => PdReference::Base,
            _ => PdReference::Threshold,
        };
        c.own_vme = match p.choice("own-vme", &["exclude", "include"])? {
            "exclude" => OwnVme::Exclude,
            _ => OwnVme::Include,
        };
        c.configurator.eviction = match p.choice("eviction", &["as-written", "repaired"])? {
            "as-written" => Eviction::AsWritten,
            _ => Eviction::Repaired,
        };
        c.configurator.comparison = match p.choice("comparison", &["algorithm", "strict"])? {
            "algorithm" => Comparison::Algorithm,
            _ => Comparison::Strict,
        };
        c.configurator.capacity = match p.choice("capacity", &["sum", "per-link"])? {
            "sum" => Capacity::Sum,
            _ => Capacity::PerLink,
        };
        c.link_cqe_per_s = p.num("link-cqe-per-s", c.link_cqe_per_s, Range::Positive)?;
        c.initial_price = p.num("initial-price", c.initial_price, Range::Positive)?;
        c.local_price = match p.choice("local-price", &["vme", "vme-host"])? {
            "vme" => LocalPrice::Vme,
            _ => LocalPrice::VmeHost,
        };
        c.hb_scope = match p.choice("hb-scope", &["cluster", "host"])? {
            "cluster" => HbScope::Cluster,
            _ => HbScope::Host,
        };
        c.cap_rule.mode = match p.choice("cap-mode", &["as-written", "repaired"])? {
            "as-written" => CapMode::AsWritten,
            _ => CapMode::Repaired,
        };
        c.cap_rule.dc_max = p.num("dc-max", c.cap_rule.dc_max, Range::Positive)?;
        c.cc_floor = match p.choice("cc-floor", &["points-25", "cap-25"])? {
            "points-25" => CcFloor::Points25,
            _ => CcFloor::Cap25,
        };
        c.restore_rate = p.num("restore-rate", 0.0, Range::UnitOpen)?;
        c.message_latency = latency(&p, "message-latency", c.message_latency)?;
        c.pm_processing = latency(&p, "pm-processing", c.pm_processing)?;
        c.mad_latency = latency(&p, "mad-latency", c.mad_latency)?;
        c.cfs_period = p.duration("cfs-period", c.cfs_period)?;
        c.qos_at = match p.choice("qos-at", &["start", "violation"])? {
            "start" => QosAt::Start,
            _ => QosAt::Violation,
        };
        c.cc_sls = match p.choice("cc-sls", &["all", "bulk"])? {
            "all" => CcSlsChoice::All,
            _ => CcSlsChoice::Bulk,
        };
        Ok(c)
    }
}
