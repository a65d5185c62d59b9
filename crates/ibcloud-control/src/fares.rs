//! FaReS, Fair Resource Scheduling (F §4.4–4.5): the Cap-Boost algorithm
//! (Algorithm 1) as a [`CapPolicy`].
//!
//! Every control window the policy reads, per managed VM, the requests
//! completed (IBMon's new CQEs) and the bytes they carried, and changes the
//! VM's CPU cap by a *boost*:
//!
//! ```text
//! FindCPUBoost(reqs, t1req):
//!     reqs > HL        → α · reqs · t1req
//!     ML < reqs < HL   → β · reqs · t1req
//!     LL < reqs < ML   → γ · reqs · t1req
//!     reqs < LL        → δ · (MAX_REQs − reqs) · t1req
//! high priority, load < MAX_LOAD, reqs > HL → MAX_REQs · t1req
//! low priority                             → FindCPUBoost(reqs, t1req)
//! cap += boost
//! ```
//!
//! F leaves the numbers, units and edge cases open (F §4.5's ambiguity
//! list); every choice below is a parameter, documented in docs/fares.md:
//!
//! * **t1req** (time to send one request) = mean bytes per request in the
//!   window ÷ the link rate (`link-mib-s`, 932 MiB/s, F §4.3's peak), the
//!   last measured value when the window completed nothing, or a fixed
//!   `t1req`.
//! * **MAX_REQs** = window ÷ t1req: the most requests of this size the link
//!   completes in one window. So `reqs · t1req / window` is the share of
//!   the window the link spent on the VM, and every boost is a fraction of
//!   the window.
//! * **thresholds** `hl > ml > ll` are *fullness* levels: fractions of the
//!   VM's allocated proportion of MAX_REQs (the fairness policy below gives
//!   the proportion). `hl = 1` means "sent more than its share".
//! * **boost → cap**: Δcap = `boost-scale` × boost ÷ window (100: a boost of
//!   one window is one full CPU, the reference's suggestion).
//! * **boundaries**: `above` (default) puts `reqs == HL` in the band above
//!   (≥), `below` in the band below, `as-written` leaves the boost at 0
//!   (Algorithm 1's strict inequalities fall through).
//! * **caps**: start uncapped; a cap is kept within [`cap-min`, `cap-max`];
//!   reaching `cap-max` means uncapped (Xen cap 0). Xen caps are integers:
//!   `rounding = "carry"` keeps the real-valued cap between windows and
//!   applies it rounded to the nearest integer; `"truncate"` rounds it
//!   every window (small boosts then vanish).
//! * **load**: `load = "host"` (default) is Σ CPU % of every observed VM ÷
//!   `cpus`; `"vm"` is the VM's own CPU %.
//!
//! Fairness policies (F §1.3): `fairness = "resource"` with `proportion =
//! "X:Y"` gives each high-priority VM weight X and each low-priority VM
//! weight Y; `fairness = "degradation"` with `ratio = R` (degradation of the
//! background ÷ degradation of the main application, F §9 item 8) gives
//! the low-priority VMs weight R^−`gain` against 1: F §4.5's "degradation
//! inversely proportional to share" at `gain` 1; `gain` is what the
//! calibration procedure fits on a training pair. A VM's allocated
//! proportion is its weight ÷ the sum over the managed VMs.
//!
//! The policy never reads a clock: a recorded trace of [`VmSample`]s
//! replays to the same caps.

use crate::capping::{CapChange, CapPolicy, PolicyRecord, VmSample};
use crate::{dur_param, Time};
use serde::Serialize;
use serde_json::{Map, Value};

/// ps per second.
const PS_PER_S: f64 = 1e12;

/// A VM's class (F §4.4: administrator-given priority).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Main application: only ever boosted.
    High,
    /// Background application: charged back by FindCPUBoost.
    Low,
}

/// Where a request count equal to a threshold falls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Boundary {
    /// `reqs == HL` counts as above HL (bands are `[HL, ∞)`, `[ML, HL)` …).
    Above,
    /// `reqs == HL` counts as below HL (bands are `(HL, ∞)`, `(ML, HL]` …).
    Below,
    /// Algorithm 1 literally: equality matches no branch, boost 0.
    AsWritten,
}

/// How the real-valued cap becomes Xen's integer cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rounding {
    /// Keep the real value between windows, apply it rounded to nearest.
    Carry,
    /// Round every window (fractions are lost).
    Truncate,
}

/// Which CPU load Algorithm 1's `load < MAX_LOAD` test reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadScope {
    /// Σ CPU % of every observed VM ÷ `cpus`.
    Host,
    /// The VM's own CPU %.
    Vm,
}

/// The fairness policy of F §1.3.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "fairness")]
pub enum Fairness {
    /// Proportional resource: high-priority VMs weight `x`, low `y`.
    Resource {
        /// Weight of a high-priority (main) VM.
        x: f64,
        /// Weight of a low-priority (background) VM.
        y: f64,
    },
    /// Distribution of degradation: degradation(background) ÷
    /// degradation(main) = `ratio`; low-priority weight `ratio^−gain`.
    Degradation {
        /// Target ratio (background : main).
        ratio: f64,
        /// Exponent fitted by calibration (1 = inversely proportional).
        gain: f64,
    },
}

/// Every parameter of Cap-Boost (docs/fares.md gives the defaults' bases).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FaresParams {
    /// Control window (ps). Default 90 ms, three credit1 accounting periods.
    pub period: Time,
    /// Scaler above HL (default −0.6).
    pub alpha: f64,
    /// Scaler between ML and HL (default −0.3).
    pub beta: f64,
    /// Scaler between LL and ML (default −0.1).
    pub gamma: f64,
    /// Scaler below LL, on the unused part of MAX_REQs (default 0.2).
    pub delta: f64,
    /// High fullness threshold (fraction of the allocated proportion).
    pub hl: f64,
    /// Medium fullness threshold.
    pub ml: f64,
    /// Low fullness threshold.
    pub ll: f64,
    /// MAX_LOAD (% CPU) for the high-priority boost.
    pub max_load: f64,
    /// What `load` measures.
    pub load: LoadScope,
    /// CPUs of the host (for `load = host`).
    pub cpus: f64,
    /// Link rate for t1req (MiB/s).
    pub link_mib_s: f64,
    /// A fixed t1req (ps) instead of the measured one.
    pub t1req: Option<Time>,
    /// t1req before any completion was seen (ps; default 2 MB at the link
    /// rate would be a guess; 64 KiB at 932 MiB/s ≈ 67 µs).
    pub default_t1req: Time,
    /// Δcap (%) per window of boost.
    pub boost_scale: f64,
    /// Lowest cap (%).
    pub cap_min: f64,
    /// Highest cap (%); reaching it means uncapped.
    pub cap_max: f64,
    /// Threshold equality.
    pub boundary: Boundary,
    /// Integer caps.
    pub rounding: Rounding,
    /// The fairness policy.
    pub fairness: Fairness,
    /// Observe and log, never change a cap (F §4.6's overhead runs).
    pub monitor_only: bool,
}

impl Default for FaresParams {
    fn default() -> Self {
        Self {
            period: 90_000_000_000,
            alpha: -0.6,
            beta: -0.3,
            gamma: -0.1,
            delta: 0.2,
            hl: 1.0,
            ml: 0.5,
            ll: 0.1,
            max_load: 90.0,
            load: LoadScope::Host,
            cpus: 8.0,
            link_mib_s: 932.0,
            t1req: None,
            default_t1req: 67_060_000,
            boost_scale: 100.0,
            cap_min: 1.0,
            cap_max: 100.0,
            boundary: Boundary::Above,
            rounding: Rounding::Carry,
            fairness: Fairness::Degradation {
                ratio: 1.0,
                gain: 1.0,
            },
            monitor_only: false,
        }
    }
}

/// The band of FindCPUBoost a request count falls in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Band {
    /// Above HL (α).
    High,
    /// Between ML and HL (β).
    Medium,
    /// Between LL and ML (γ).
    Low,
    /// Below LL (δ).
    Idle,
    /// On a threshold with `boundary = as-written`: no branch.
    None,
}

/// Classifies `reqs` against thresholds `hl > ml > ll`.
///
/// ```
/// use ibcloud_control::fares::{band, Band, Boundary};
/// assert_eq!(band(10.0, 10.0, 5.0, 1.0, Boundary::Above), Band::High);
/// assert_eq!(band(10.0, 10.0, 5.0, 1.0, Boundary::Below), Band::Medium);
/// assert_eq!(band(10.0, 10.0, 5.0, 1.0, Boundary::AsWritten), Band::None);
/// ```
pub fn band(reqs: f64, hl: f64, ml: f64, ll: f64, b: Boundary) -> Band {
    let on = reqs == hl || reqs == ml || reqs == ll;
    if on && b == Boundary::AsWritten {
        return Band::None;
    }
    let above = |t: f64| match b {
        Boundary::Below => reqs > t,
        _ => reqs >= t,
    };
    if above(hl) {
        Band::High
    } else if above(ml) {
        Band::Medium
    } else if above(ll) {
        Band::Low
    } else {
        Band::Idle
    }
}

/// One window's decision for one VM (the pieces the action log shows).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Boost {
    /// t1req used (s).
    pub t1req_s: f64,
    /// MAX_REQs (window ÷ t1req).
    pub max_reqs: f64,
    /// Band of FindCPUBoost (low priority) or of the HL test (high).
    pub band: Band,
    /// The boost (s of CPU; negative = charge-back).
    pub boost_s: f64,
    /// The boost as a cap change (%).
    pub dcap: f64,
}

/// FaReS Cap-Boost (see the module docs).
#[derive(Debug)]
pub struct Fares {
    params: FaresParams,
    /// Priority of each managed VM (`None` = not managed).
    priority: Vec<Option<Priority>>,
    /// Allocated proportion of each managed VM.
    share: Vec<f64>,
    /// Real-valued cap level (cap-max = uncapped).
    level: Vec<f64>,
    /// Cap last set (0 = uncapped).
    applied: Vec<u32>,
    /// Last measured t1req (s).
    t1req: Vec<Option<f64>>,
    records: Vec<PolicyRecord>,
    steps: u64,
}

impl Fares {
    /// A policy over `priority.len()` VMs (`None` = not managed).
    pub fn new(params: FaresParams, priority: Vec<Option<Priority>>) -> Result<Self, String> {
        validate(&params)?;
        let weight = |p: &Option<Priority>| match (p, params.fairness) {
            (None, _) => 0.0,
            (Some(Priority::High), Fairness::Resource { x, .. }) => x,
            (Some(Priority::Low), Fairness::Resource { y, .. }) => y,
            (Some(Priority::High), Fairness::Degradation { .. }) => 1.0,
            (Some(Priority::Low), Fairness::Degradation { ratio, gain }) => ratio.powf(-gain),
        };
        let total: f64 = priority.iter().map(weight).sum();
        let share = priority
            .iter()
            .map(|p| if total > 0.0 { weight(p) / total } else { 0.0 })
            .collect();
        let n = priority.len();
        Ok(Self {
            level: vec![params.cap_max; n],
            applied: vec![0; n],
            t1req: vec![None; n],
            share,
            priority,
            params,
            records: Vec::new(),
            steps: 0,
        })
    }

    /// Builds from a scenario / agent parameter table (see docs/fares.md).
    pub fn from_params(p: &Map<String, Value>, names: &[String]) -> Result<Self, String> {
        const KEYS: [&str; 26] = [
            "period",
            "high",
            "low",
            "alpha",
            "beta",
            "gamma",
            "delta",
            "hl",
            "ml",
            "ll",
            "max-load",
            "load",
            "cpus",
            "link-mib-s",
            "t1req",
            "default-t1req",
            "boost-scale",
            "cap-min",
            "cap-max",
            "boundary",
            "rounding",
            "fairness",
            "proportion",
            "ratio",
            "gain",
            "monitor-only",
        ];
        if let Some(k) = p.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(format!(
                "unknown field `{k}` in a fares controller, expected one of {}",
                KEYS.join(", ")
            ));
        }
        let d = FaresParams::default();
        let num = |key: &str, default: f64| -> Result<f64, String> {
            match p.get(key) {
                None => Ok(default),
                Some(v) => v
                    .as_f64()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| format!("{key}: expected a finite number, got {v}")),
            }
        };
        let word = |key: &str, default: &str, allowed: &[&str]| -> Result<String, String> {
            match p.get(key) {
                None => Ok(default.to_string()),
                Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(s.clone()),
                Some(v) => Err(format!(
                    "{key}: expected one of {}, got {v}",
                    allowed.join(", ")
                )),
            }
        };
        let fairness = match word("fairness", "degradation", &["degradation", "resource"])?.as_str()
        {
            "resource" => {
                if p.contains_key("ratio") || p.contains_key("gain") {
                    return Err("ratio and gain belong to fairness = \"degradation\"".into());
                }
                let (x, y) = match p.get("proportion") {
                    None => (1.0, 1.0),
                    Some(Value::String(s)) => parse_ratio(s)?,
                    Some(v) => return Err(format!("proportion: expected \"X:Y\", got {v}")),
                };
                Fairness::Resource { x, y }
            }
            _ => {
                if p.contains_key("proportion") {
                    return Err("proportion belongs to fairness = \"resource\"".into());
                }
                let ratio = match p.get("ratio") {
                    Some(Value::String(s)) => {
                        let (a, b) = parse_ratio(s)?;
                        a / b
                    }
                    _ => num("ratio", 1.0)?,
                };
                Fairness::Degradation {
                    ratio,
                    gain: num("gain", 1.0)?,
                }
            }
        };
        let t1req = match p.get("t1req") {
            None => None,
            Some(Value::String(s)) if s == "measured" => None,
            Some(_) => Some(dur_param(p, "t1req", 0)?),
        };
        let params = FaresParams {
            period: dur_param(p, "period", d.period)?,
            alpha: num("alpha", d.alpha)?,
            beta: num("beta", d.beta)?,
            gamma: num("gamma", d.gamma)?,
            delta: num("delta", d.delta)?,
            hl: num("hl", d.hl)?,
            ml: num("ml", d.ml)?,
            ll: num("ll", d.ll)?,
            max_load: num("max-load", d.max_load)?,
            load: match word("load", "host", &["host", "vm"])?.as_str() {
                "vm" => LoadScope::Vm,
                _ => LoadScope::Host,
            },
            cpus: num("cpus", d.cpus)?,
            link_mib_s: num("link-mib-s", d.link_mib_s)?,
            t1req,
            default_t1req: dur_param(p, "default-t1req", d.default_t1req)?,
            boost_scale: num("boost-scale", d.boost_scale)?,
            cap_min: num("cap-min", d.cap_min)?,
            cap_max: num("cap-max", d.cap_max)?,
            boundary: match word("boundary", "above", &["above", "below", "as-written"])?.as_str() {
                "below" => Boundary::Below,
                "as-written" => Boundary::AsWritten,
                _ => Boundary::Above,
            },
            rounding: match word("rounding", "carry", &["carry", "truncate"])?.as_str() {
                "truncate" => Rounding::Truncate,
                _ => Rounding::Carry,
            },
            fairness,
            monitor_only: match p.get("monitor-only") {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(v) => return Err(format!("monitor-only: true or false, got {v}")),
            },
        };
        let mut priority = vec![None; names.len()];
        for (key, pr) in [("high", Priority::High), ("low", Priority::Low)] {
            let list = match p.get(key) {
                None => continue,
                Some(Value::Array(a)) => a,
                Some(v) => return Err(format!("{key}: a list of VM names, got {v}")),
            };
            for v in list {
                let s = v
                    .as_str()
                    .ok_or_else(|| format!("{key}: a list of VM names, got {v}"))?;
                let i = names
                    .iter()
                    .position(|n| n == s)
                    .ok_or_else(|| format!("{key}: unknown VM '{s}'"))?;
                if priority[i].is_some() {
                    return Err(format!("{key}: VM '{s}' is listed twice (high and low?)"));
                }
                priority[i] = Some(pr);
            }
        }
        if priority.iter().all(Option::is_none) {
            return Err("a fares controller needs at least one VM in `high` or `low`".into());
        }
        Self::new(params, priority)
    }

    /// The parameters.
    pub fn params(&self) -> &FaresParams {
        &self.params
    }

    /// Allocated proportion of each VM (0 for unmanaged ones).
    pub fn shares(&self) -> &[f64] {
        &self.share
    }

    /// Algorithm 1 for VM `i` over one window (no state change except the
    /// remembered t1req).
    pub fn boost(&mut self, i: usize, s: &VmSample, load: f64) -> Option<Boost> {
        let pr = self.priority.get(i).copied().flatten()?;
        let p = &self.params;
        let window = s.interval as f64 / PS_PER_S;
        if window <= 0.0 {
            return None;
        }
        let measured = (s.requests > 0 && s.bytes > 0)
            .then(|| s.bytes as f64 / s.requests as f64 / (p.link_mib_s * 1_048_576.0));
        if measured.is_some() {
            self.t1req[i] = measured;
        }
        let t1req = match p.t1req {
            Some(t) => t as f64 / PS_PER_S,
            None => self.t1req[i].unwrap_or(p.default_t1req as f64 / PS_PER_S),
        };
        let max_reqs = window / t1req;
        let quota = self.share[i] * max_reqs;
        let reqs = s.requests as f64;
        let b = band(reqs, p.hl * quota, p.ml * quota, p.ll * quota, p.boundary);
        let boost_s = match pr {
            Priority::High => {
                if load < p.max_load && b == Band::High {
                    max_reqs * t1req
                } else {
                    0.0
                }
            }
            Priority::Low => match b {
                Band::High => p.alpha * reqs * t1req,
                Band::Medium => p.beta * reqs * t1req,
                Band::Low => p.gamma * reqs * t1req,
                Band::Idle => p.delta * (max_reqs - reqs).max(0.0) * t1req,
                Band::None => 0.0,
            },
        };
        Some(Boost {
            t1req_s: t1req,
            max_reqs,
            band: b,
            boost_s,
            dcap: p.boost_scale * boost_s / window,
        })
    }

    fn load(&self, obs: &[VmSample], i: usize) -> f64 {
        match self.params.load {
            LoadScope::Vm => obs[i].cpu_pct,
            LoadScope::Host => obs.iter().map(|s| s.cpu_pct).sum::<f64>() / self.params.cpus,
        }
    }
}

/// Reads "X:Y" (both positive, finite).
///
/// ```
/// assert_eq!(ibcloud_control::fares::parse_ratio("5:1"), Ok((5.0, 1.0)));
/// assert!(ibcloud_control::fares::parse_ratio("0:1").is_err());
/// ```
pub fn parse_ratio(s: &str) -> Result<(f64, f64), String> {
    let bad = || format!("expected a ratio \"X:Y\" of two positive numbers, got '{s}'");
    let (a, b) = s.split_once(':').ok_or_else(bad)?;
    let a: f64 = a.trim().parse().map_err(|_| bad())?;
    let b: f64 = b.trim().parse().map_err(|_| bad())?;
    if !(a.is_finite() && b.is_finite() && a > 0.0 && b > 0.0) {
        return Err(bad());
    }
    Ok((a, b))
}

fn validate(p: &FaresParams) -> Result<(), String> {
    let finite = [
        ("alpha", p.alpha),
        ("beta", p.beta),
        ("gamma", p.gamma),
        ("delta", p.delta),
        ("hl", p.hl),
        ("ml", p.ml),
        ("ll", p.ll),
        ("max-load", p.max_load),
        ("cpus", p.cpus),
        ("link-mib-s", p.link_mib_s),
        ("boost-scale", p.boost_scale),
        ("cap-min", p.cap_min),
        ("cap-max", p.cap_max),
    ];
    if let Some((k, v)) = finite.iter().find(|(_, v)| !v.is_finite()) {
        return Err(format!("{k}: must be a finite number, got {v}"));
    }
    if p.period == 0 {
        return Err("period: must be positive".into());
    }
    if !(p.hl > p.ml && p.ml > p.ll && p.ll >= 0.0) {
        return Err(format!(
            "thresholds must satisfy hl > ml > ll ≥ 0, got hl {}, ml {}, ll {}",
            p.hl, p.ml, p.ll
        ));
    }
    if p.cpus <= 0.0 {
        return Err("cpus: must be positive".into());
    }
    if p.link_mib_s <= 0.0 {
        return Err("link-mib-s: must be positive".into());
    }
    if p.max_load <= 0.0 {
        return Err("max-load: must be positive".into());
    }
    if p.boost_scale <= 0.0 {
        return Err("boost-scale: must be positive".into());
    }
    if p.t1req == Some(0) || p.default_t1req == 0 {
        return Err("t1req and default-t1req: must be positive".into());
    }
    if !(p.cap_min >= 1.0 && p.cap_min <= p.cap_max && p.cap_max <= u32::MAX as f64) {
        return Err(format!(
            "caps: need 1 ≤ cap-min ≤ cap-max, got {} and {}",
            p.cap_min, p.cap_max
        ));
    }
    match p.fairness {
        Fairness::Resource { x, y } if !(x > 0.0 && y > 0.0 && x.is_finite() && y.is_finite()) => {
            Err(format!(
                "proportion: both parts must be positive, got {x}:{y}"
            ))
        }
        Fairness::Degradation { ratio, gain } => {
            if !(ratio.is_finite() && ratio > 0.0) {
                Err(format!(
                    "ratio: a degradation ratio must be positive and finite, got {ratio}"
                ))
            } else if !(gain.is_finite() && gain >= 0.0) {
                Err(format!("gain: must be finite and ≥ 0, got {gain}"))
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

impl CapPolicy for Fares {
    fn name(&self) -> String {
        "fares".into()
    }

    fn period(&self) -> Time {
        self.params.period
    }

    fn step(&mut self, now: Time, obs: &[VmSample]) -> Vec<CapChange> {
        self.steps += 1;
        let n = obs.len().min(self.priority.len());
        let mut out = Vec::new();
        for (i, s) in obs.iter().enumerate().take(n) {
            let load = self.load(obs, i);
            let Some(b) = self.boost(i, s, load) else {
                continue;
            };
            let p = &self.params;
            let mut level = (self.level[i] + b.dcap).clamp(p.cap_min, p.cap_max);
            if p.rounding == Rounding::Truncate {
                level = level.round();
            }
            self.level[i] = level;
            let cap = if level >= p.cap_max {
                0
            } else {
                (level.round() as u32).max(1)
            };
            if !p.monitor_only && cap != self.applied[i] {
                self.applied[i] = cap;
                out.push(CapChange { vm: i, cap });
            }
            self.records.push(PolicyRecord {
                time: now,
                vm: i,
                observed: s.requests as f64,
                price: b.dcap,
                balance: level,
                cap: if p.monitor_only { s.cap } else { cap },
            });
        }
        out
    }

    fn records(&self) -> &[PolicyRecord] {
        &self.records
    }

    fn clear_records(&mut self) {
        self.records.clear();
    }

    fn report(&self, vm_names: &[String]) -> Value {
        let vms: Vec<Value> = (0..self.priority.len())
            .filter(|&i| self.priority[i].is_some())
            .map(|i| {
                serde_json::json!({
                    "vm": vm_names.get(i).cloned().unwrap_or_else(|| i.to_string()),
                    "priority": self.priority[i],
                    "share": self.share[i],
                    "cap": self.applied[i],
                    "level": self.level[i],
                })
            })
            .collect();
        serde_json::json!({
            "kind": "fares",
            "params": self.params,
            "steps": self.steps,
            "vms": vms,
        })
    }
}

#[cfg(test)]
mod tests;
