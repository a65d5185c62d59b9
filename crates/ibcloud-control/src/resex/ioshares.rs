//! IOShares (F §5.6.3, Algorithm 3, equations 1–3): FreeMarket's Reso
//! accounting plus latency feedback. When a reporting VM's latency rises by
//! more than the SLA threshold, the VM interfering with it pays a higher
//! charging rate and gets a lower cap:
//!
//! 1. `r′ = IOShare × IntfPercent` (increase in rate),
//! 2. `IOShare = MTUs(interferer) / Σ MTUs(all VMs)`,
//! 3. `NewCPUCap = 100 × PreviousRate / (PreviousRate + r′)`.
//!
//! Per step, for each monitored VM `v` in index order, as Algorithm 3:
//! `GETIOINTF(v)` ([`LatencyTracker`]), `GETIOINTFVMID(v)` (the interferer
//! `u`), `GETIOSHARE`, `CHANGEIBRATE(u, intf)` (only above the SLA), then
//! the conversion to Resos, `GETCPUCAP(v)` (eq. 3 for a VM whose rate was
//! raised, FreeMarket's floor rule), `DECREMENTRESOS(v)`, `SETVMCAP(v)`.
//!
//! Algorithm 3 converts `v`'s usage "for IntfVMId" at the interferer's new
//! `ChargeRate` and deducts the result from `v` (F §9 item 7). `mode =
//! "as-written"` keeps exactly that: each VM pays for its own usage at the
//! rate of the VM it names as its interferer. `mode = "repaired"` (default)
//! charges each VM for its own usage at its own rate, which is what the
//! prose says ("the interfering VM ... will be charged with the new rate").

use super::latency::{Baseline, LatencyTracker, Statistic};
use super::params::{Params, Range};
use super::resos::{Ledger, ResoConfig};
use super::throttle::ThrottleRule;
use super::{usage, VmCaps};
use crate::capping::{CapChange, CapPolicy, PolicyRecord, VmSample};
use crate::Time;
use serde::Serialize;
use std::collections::VecDeque;

/// Which VM ids Algorithm 3's conversion and deduction use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Each VM pays for its own usage at its own rate.
    Repaired,
    /// Each VM pays for its own usage at its interferer's rate (the seed's
    /// `CONVERTTOIBRESOS(IntfVMId, IBMTUs, ChargeRate)` then
    /// `DECREMENTRESOS(ThisVMId, …)`).
    AsWritten,
}

/// How the interfering VM is found (F §5.6 ambiguity 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Interferer {
    /// The other VM with the most MTUs (default: the one eq. 2 weighs).
    LargestShare,
    /// The other VM with the largest bytes per request (the buffer ratio
    /// of F §5.5.1).
    LargestBuffer,
}

/// How equation 3 turns rates into a cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapFrom {
    /// `100 × base / rate`: eq. 3 with PreviousRate = the base rate and r′
    /// = every increase so far (default; successive eq.-3 cuts compose).
    Cumulative,
    /// `100 × PreviousRate / (PreviousRate + r′)` with the last increase
    /// only (literal; a later small increase can raise the cap again).
    LastIncrease,
}

/// The IOShares parameters beyond the Reso budget and the floor rule.
#[derive(Clone, Debug, Serialize)]
pub struct IoSharesConfig {
    /// Conversion/deduction ids.
    pub mode: Mode,
    /// SLA threshold: the latency increase (fraction, 0.1 = 10 %) above
    /// which the interferer is charged more.
    pub sla: f64,
    /// Reports in the judged window.
    pub window: usize,
    /// What the window is compared with.
    pub baseline: Baseline,
    /// Mean, standard deviation or either.
    pub statistic: Statistic,
    /// IntfPercent as a fraction (0.5) or a number of per cent (50) in eq. 1
    /// (F §5.6 ambiguity 3).
    pub intf_percent_units: bool,
    /// Interferer identification.
    pub interferer: Interferer,
    /// Intervals of MTUs summed for eq. 2.
    pub share_intervals: usize,
    /// Eq. 3's reading.
    pub cap_from: CapFrom,
    /// Whether the CPU conversion also uses the charge rate (Algorithm 3
    /// line 11 passes `ChargeRate`; default) or the fixed CPU price.
    pub cpu_at_charge_rate: bool,
    /// Fraction of a rate's excess over the base removed in each interval
    /// in which it was not raised (F §5.6 ambiguity 4; default 0: rates
    /// only rise, as written).
    pub rate_decay: f64,
    /// Rates fall back to the base at each epoch.
    pub rate_reset_at_epoch: bool,
    /// Whether FreeMarket's floor rule also cuts caps.
    pub floor_rule: bool,
}

impl Default for IoSharesConfig {
    fn default() -> Self {
        Self {
            mode: Mode::Repaired,
            sla: 0.10,
            window: 32,
            baseline: Baseline::Running,
            statistic: Statistic::Either,
            intf_percent_units: false,
            interferer: Interferer::LargestShare,
            share_intervals: 1,
            cap_from: CapFrom::Cumulative,
            cpu_at_charge_rate: true,
            rate_decay: 0.0,
            rate_reset_at_epoch: false,
            floor_rule: true,
        }
    }
}

/// Keys of an `ioshares` table beyond the Reso and floor-rule keys.
const OWN_KEYS: [&str; 17] = [
    "mode",
    "reporters",
    "sla",
    "window",
    "baseline",
    "base-mean-us",
    "base-std-us",
    "statistic",
    "intf-units",
    "interferer",
    "share-intervals",
    "cap-from",
    "cpu-rate",
    "rate-decay",
    "rate-reset-at-epoch",
    "floor-rule",
    "record-every",
];

impl IoSharesConfig {
    fn from_params(p: &Params<'_>) -> Result<Self, String> {
        let d = Self::default();
        if let Some(v) = p.map.get("sla") {
            if v.as_f64().is_some_and(|x| x <= 0.0) {
                return Err(format!(
                    "ioshares: sla: a threshold of {v} cannot be met (any latency above the \
                     baseline would violate it); give the tolerated increase as a positive \
                     fraction, e.g. 0.1 for 10 %"
                ));
            }
        }
        let sla = p.num("sla", d.sla, Range::Positive)?;
        let base = match p.choice("baseline", &["running", "base", "previous"])? {
            "running" => Baseline::Running,
            "previous" => Baseline::Previous,
            _ => {
                let m = p.opt_num("base-mean-us", Range::Positive)?;
                let s = p.opt_num("base-std-us", Range::Positive)?;
                match (m, s) {
                    (Some(m), s) => Baseline::Base(Some((m, s))),
                    (None, None) => Baseline::Base(None),
                    (None, Some(_)) => {
                        return Err("ioshares: base-std-us needs base-mean-us".into())
                    }
                }
            }
        };
        if !matches!(base, Baseline::Base(_))
            && (p.map.contains_key("base-mean-us") || p.map.contains_key("base-std-us"))
        {
            return Err("ioshares: base-mean-us and base-std-us need baseline = \"base\"".into());
        }
        Ok(Self {
            mode: match p.choice("mode", &["repaired", "as-written"])? {
                "repaired" => Mode::Repaired,
                _ => Mode::AsWritten,
            },
            sla,
            window: match p.count("window", d.window)? {
                1 => {
                    return Err(
                        "ioshares: window: at least 2 reports (a standard deviation)".into(),
                    )
                }
                n => n,
            },
            baseline: base,
            statistic: match p.choice("statistic", &["either", "mean", "std"])? {
                "mean" => Statistic::Mean,
                "either" => Statistic::Either,
                _ => Statistic::Std,
            },
            intf_percent_units: p.choice("intf-units", &["fraction", "percent"])? == "percent",
            interferer: match p.choice("interferer", &["largest-share", "largest-buffer"])? {
                "largest-share" => Interferer::LargestShare,
                _ => Interferer::LargestBuffer,
            },
            share_intervals: p.count("share-intervals", d.share_intervals)?,
            cap_from: match p.choice("cap-from", &["cumulative", "last-increase"])? {
                "cumulative" => CapFrom::Cumulative,
                _ => CapFrom::LastIncrease,
            },
            cpu_at_charge_rate: p.choice("cpu-rate", &["charge-rate", "fixed"])? == "charge-rate",
            rate_decay: p.num("rate-decay", d.rate_decay, Range::UnitOpen)?,
            rate_reset_at_epoch: p.boolean("rate-reset-at-epoch", d.rate_reset_at_epoch)?,
            floor_rule: p.boolean("floor-rule", d.floor_rule)?,
        })
    }
}

/// One rate increase (eqs. 1–3), for the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RateEvent {
    /// Time (ps).
    pub time: Time,
    /// The VM whose latency rose.
    pub reporter: usize,
    /// The VM charged more.
    pub interferer: usize,
    /// IntfPercent as a fraction.
    pub intf: f64,
    /// Eq. 2.
    pub share: f64,
    /// Eq. 1 (in the configured units).
    pub r_prime: f64,
    /// The interferer's rate after the increase.
    pub rate: f64,
    /// Eq. 3's cap for the interferer.
    pub cap: f64,
}

/// The IOShares policy (see the module docs).
#[derive(Debug)]
pub struct IoShares {
    names: Vec<String>,
    ledger: Ledger,
    rule: ThrottleRule,
    cfg: IoSharesConfig,
    reporters: Vec<usize>,
    trackers: Vec<LatencyTracker>,
    /// Per VM: (MTUs, bytes, requests) of the last `share_intervals`.
    history: Vec<VecDeque<(f64, u64, u64)>>,
    /// Per VM: MTUs over the share window (this step), and their total.
    window_mtus: Vec<f64>,
    total_mtus: f64,
    /// The two best-ranked interferer candidates this step.
    top2: [Option<usize>; 2],
    is_reporter: Vec<bool>,
    rates: Vec<f64>,
    rate_caps: Vec<f64>,
    caps: Vec<VmCaps>,
    events: Vec<RateEvent>,
    record_every: u64,
    steps: u64,
    records: Vec<PolicyRecord>,
}

impl IoShares {
    /// IOShares over `names`; `reporters` = VMs whose latency is judged.
    pub fn new(
        resos: ResoConfig,
        rule: ThrottleRule,
        cfg: IoSharesConfig,
        reporters: Vec<usize>,
        names: &[String],
    ) -> Self {
        let n = names.len();
        let tracker = LatencyTracker::new(cfg.window, cfg.baseline, cfg.statistic);
        Self {
            names: names.to_vec(),
            rates: vec![resos.mtu_price; n],
            ledger: Ledger::new(resos),
            rule,
            trackers: vec![tracker; n],
            cfg,
            history: vec![VecDeque::new(); n],
            window_mtus: vec![0.0; n],
            total_mtus: 0.0,
            top2: [None, None],
            is_reporter: (0..n).map(|i| reporters.contains(&i)).collect(),
            reporters,
            rate_caps: vec![0.0; n],
            caps: vec![VmCaps::default(); n],
            events: Vec::new(),
            record_every: 1,
            steps: 0,
            records: Vec::new(),
        }
    }

    /// From a parameter table; unknown keys and bad values are errors.
    pub fn from_params(
        p: &serde_json::Map<String, serde_json::Value>,
        names: &[String],
    ) -> Result<Self, String> {
        let (p, resos, rule) = super::common_params("ioshares", p, &OWN_KEYS, names)?;
        let cfg = IoSharesConfig::from_params(&p)?;
        let reporters = match p.vm_list("reporters", names)? {
            Some(r) => {
                if let Some(&x) = r.iter().find(|x| !resos.monitored.contains(x)) {
                    return Err(format!(
                        "ioshares: reporters: VM '{}' is not monitored (vms)",
                        names[x]
                    ));
                }
                r
            }
            None => resos.monitored.clone(),
        };
        let mut s = Self::new(resos, rule, cfg, reporters, names);
        s.record_every = p.count("record-every", 1)? as u64;
        Ok(s)
    }

    /// The balances.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// Current charging rate (Resos per MTU) of `vm`.
    pub fn rate(&self, vm: usize) -> f64 {
        self.rates[vm]
    }

    /// Every rate increase so far.
    pub fn events(&self) -> &[RateEvent] {
        &self.events
    }

    fn base_rate(&self) -> f64 {
        self.ledger.config().mtu_price
    }

    /// Sums each monitored VM's share window and ranks the candidates once
    /// per step (so finding every VM's interferer is O(VMs), not O(VMs²)).
    fn rank(&mut self) {
        let monitored = &self.ledger.config().monitored;
        let mut total = 0.0;
        // (VM, ranking key) of the best and second-best candidates.
        let mut top: Option<(usize, f64)> = None;
        let mut second: Option<(usize, f64)> = None;
        for &i in monitored {
            let (m, b, r) = self.history[i].iter().fold((0.0, 0u64, 0u64), |a, x| {
                (a.0 + x.0, a.1.saturating_add(x.1), a.2.saturating_add(x.2))
            });
            self.window_mtus[i] = m;
            total += m;
            if m <= 0.0 {
                continue;
            }
            let key = match self.cfg.interferer {
                Interferer::LargestShare => m,
                Interferer::LargestBuffer => b as f64 / r.max(1) as f64,
            };
            // Ties go to the lower index (the first seen).
            if top.is_none_or(|t| key > t.1) {
                second = top;
                top = Some((i, key));
            } else if second.is_none_or(|s| key > s.1) {
                second = Some((i, key));
            }
        }
        self.total_mtus = total;
        self.top2 = [top.map(|t| t.0), second.map(|s| s.0)];
    }

    /// `GETIOINTFVMID(v)` and `GETIOSHARE(v, u)`: the interferer (the
    /// best-ranked other VM that sent anything) and its share of all
    /// monitored VMs' MTUs.
    fn interferer(&self, v: usize) -> Option<(usize, f64)> {
        let u = match self.top2 {
            [Some(t), _] if t != v => t,
            [_, Some(s)] if s != v => s,
            _ => return None,
        };
        Some((u, self.window_mtus[u] / self.total_mtus))
    }

    /// `CHANGEIBRATE(u, intf)`: eqs. 1 and 3.
    fn raise(&mut self, now: Time, reporter: usize, u: usize, share: f64, intf: f64) {
        let units = if self.cfg.intf_percent_units {
            100.0
        } else {
            1.0
        };
        let r_prime = share * intf * units;
        // A rate that would overflow stays where it is (the cap is at its
        // floor long before).
        if r_prime <= 0.0 || !(self.rates[u] + r_prime).is_finite() {
            return;
        }
        let prev = self.rates[u];
        self.rates[u] = prev + r_prime;
        let full = 100.0 * self.ledger.config().vcpus[u];
        self.rate_caps[u] = match self.cfg.cap_from {
            CapFrom::Cumulative => full * self.base_rate() / self.rates[u],
            CapFrom::LastIncrease => full * prev / (prev + r_prime),
        }
        .max(self.rule.min_cap);
        self.events.push(RateEvent {
            time: now,
            reporter,
            interferer: u,
            intf,
            share,
            r_prime,
            rate: self.rates[u],
            cap: self.rate_caps[u],
        });
    }

    /// Decay (or reset) of the rates not raised this step.
    fn relax(&mut self, raised: &[bool], reset: bool) {
        let base = self.base_rate();
        for (vm, &was_raised) in raised.iter().enumerate() {
            if reset {
                self.rates[vm] = base;
            } else if !was_raised && self.cfg.rate_decay > 0.0 {
                self.rates[vm] = base + (self.rates[vm] - base) * (1.0 - self.cfg.rate_decay);
            } else {
                continue;
            }
            if self.rates[vm] <= base * (1.0 + 1e-3) {
                self.rates[vm] = base;
                self.rate_caps[vm] = 0.0;
            } else if self.cfg.cap_from == CapFrom::Cumulative {
                let full = 100.0 * self.ledger.config().vcpus[vm];
                self.rate_caps[vm] = (full * base / self.rates[vm]).max(self.rule.min_cap);
            }
        }
    }
}

impl CapPolicy for IoShares {
    fn name(&self) -> String {
        "ioshares".into()
    }

    fn period(&self) -> Time {
        self.ledger.config().interval
    }

    fn reporters(&self) -> Vec<usize> {
        self.reporters.clone()
    }

    fn step(&mut self, now: Time, obs: &[VmSample]) -> Vec<CapChange> {
        let mut out = Vec::new();
        if self.ledger.begin(now) {
            for c in &mut self.caps {
                c.new_epoch(self.rule.restore_at_epoch);
            }
            if self.cfg.rate_reset_at_epoch && self.steps > 0 {
                self.relax(&vec![false; self.rates.len()], true);
            }
        }
        let record = self.steps.is_multiple_of(self.record_every);
        self.steps += 1;
        let epoch_left = self.ledger.epoch_left(now);
        let monitored = self.ledger.config().monitored.clone();
        for &vm in &monitored {
            let (mtus, bytes, requests) = match obs.get(vm) {
                Some(s) => (usage(s, self.ledger.config()).0, s.bytes, s.requests),
                None => (0.0, 0, 0),
            };
            let h = &mut self.history[vm];
            h.push_back((mtus, bytes, requests));
            if h.len() > self.cfg.share_intervals {
                h.pop_front();
            }
        }
        self.rank();
        let mut raised = vec![false; self.rates.len()];
        for &v in &monitored {
            let Some(s) = obs.get(v) else { continue };
            self.caps[v].first_sight(s);
            let (mtus, cpu) = usage(s, self.ledger.config());
            // Lines 6–9: interference, interferer, share, new rate.
            let intf = match self.is_reporter[v] {
                true => self.trackers[v].update(&s.latencies_us),
                false => None,
            };
            let culprit = self.interferer(v);
            if let (Some(x), Some((u, share))) = (intf, culprit) {
                if x > self.cfg.sla {
                    self.raise(now, v, u, share, x);
                    raised[u] = true;
                }
            }
            // Lines 10–11: which rate converts v's usage.
            let charge_rate = match (self.cfg.mode, culprit) {
                (Mode::AsWritten, Some((u, _))) => self.rates[u],
                _ => self.rates[v],
            };
            let cfg = self.ledger.config();
            let ib_r = mtus * charge_rate;
            let cpu_r = match self.cfg.cpu_at_charge_rate {
                true => cpu * cfg.cpu_price * charge_rate / cfg.mtu_price,
                false => cpu * cfg.cpu_price,
            };
            // Line 12: eq. 3 for a VM whose rate rose, and the floor rule.
            let full = 100.0 * cfg.vcpus[v];
            let left = self.ledger.left_after(v, ib_r, cpu_r);
            let caps = &mut self.caps[v];
            caps.rate = self.rate_caps[v];
            if self.cfg.floor_rule && self.rule.fires(left, epoch_left, caps.cut_this_epoch) {
                caps.floor = self.rule.cut_from(caps.effective(), full, s.cpu_pct);
                caps.cut_this_epoch = true;
                caps.cuts += 1;
            }
            // Lines 13–14.
            self.ledger.charge(v, ib_r, cpu_r);
            out.extend(caps.change(v));
            if record {
                self.records.push(PolicyRecord {
                    time: now,
                    vm: v,
                    observed: mtus,
                    price: charge_rate,
                    balance: self.ledger.balance(v),
                    cap: caps.emitted,
                });
            }
        }
        self.relax(&raised, false);
        out
    }

    fn records(&self) -> &[PolicyRecord] {
        &self.records
    }

    fn clear_records(&mut self) {
        self.records.clear();
    }

    fn report(&self, vm_names: &[String]) -> serde_json::Value {
        let cfg = self.ledger.config();
        let name = |vm: usize| vm_names.get(vm).or(self.names.get(vm)).cloned();
        let vms: Vec<_> = cfg
            .monitored
            .iter()
            .map(|&vm| {
                serde_json::json!({
                    "vm": name(vm),
                    "reporter": self.reporters.contains(&vm),
                    "allocation": cfg.cpu_allocation(vm) + cfg.ib_allocation(vm),
                    "balance": self.ledger.balance(vm),
                    "rate": self.rates[vm],
                    "cap": self.caps[vm].emitted,
                    "floor-cuts": self.caps[vm].cuts,
                    "raised": self.events.iter().filter(|e| e.interferer == vm).count(),
                })
            })
            .collect();
        serde_json::json!({
            "kind": "ioshares",
            "resos": cfg,
            "rule": self.rule,
            "ioshares": self.cfg,
            "vms": vms,
            "events": self.events,
        })
    }
}
