//! FreeMarket (F §5.6.2, Algorithm 2): every VM pays the same fixed prices
//! (1 Reso per MTU and per CPU %) for what it used in each interval; a VM
//! may spend its whole allocation (work-conserving), and only when it is
//! about to run out early is its cap cut ([`ThrottleRule`]).
//!
//! Per step, for each monitored VM in index order, as Algorithm 2:
//! `GETMTUs`, `GETCPUPERCENT` (the sample), `CONVERTTO…RESOS` at the fixed
//! prices, `GETCPUCAP` (the rule, judged on the balance this interval's
//! charge leaves), `DECREMENTRESOS`, `SETVMCAP` (a [`CapChange`] when the
//! cap differs). At an epoch boundary the balances are replenished and,
//! by default, the cuts undone.

use super::resos::{Ledger, ResoConfig};
use super::throttle::ThrottleRule;
use super::{usage, VmCaps};
use crate::capping::{CapChange, CapPolicy, PolicyRecord, VmSample};
use crate::Time;

/// Keys of a `freemarket` table beyond the Reso and rule keys.
const OWN_KEYS: [&str; 1] = ["record-every"];

/// The FreeMarket policy (see the module docs).
#[derive(Debug)]
pub struct FreeMarket {
    names: Vec<String>,
    ledger: Ledger,
    rule: ThrottleRule,
    caps: Vec<VmCaps>,
    record_every: u64,
    steps: u64,
    records: Vec<PolicyRecord>,
}

impl FreeMarket {
    /// FreeMarket over `names` with a budget and a cut rule.
    pub fn new(cfg: ResoConfig, rule: ThrottleRule, names: &[String]) -> Self {
        Self {
            names: names.to_vec(),
            caps: vec![VmCaps::default(); names.len()],
            ledger: Ledger::new(cfg),
            rule,
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
        let (p, cfg, rule) = super::common_params("freemarket", p, &OWN_KEYS, names)?;
        let mut fm = Self::new(cfg, rule, names);
        fm.record_every = p.count("record-every", 1)? as u64;
        Ok(fm)
    }

    /// Log one row per VM every `n` steps (1 = every step, the saw-tooth).
    pub fn set_record_every(&mut self, n: u64) {
        self.record_every = n.max(1);
    }

    /// The balances.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }
}

impl CapPolicy for FreeMarket {
    fn name(&self) -> String {
        "freemarket".into()
    }

    fn period(&self) -> Time {
        self.ledger.config().interval
    }

    fn step(&mut self, now: Time, obs: &[VmSample]) -> Vec<CapChange> {
        let mut out = Vec::new();
        if self.ledger.begin(now) {
            for c in &mut self.caps {
                c.new_epoch(self.rule.restore_at_epoch);
            }
        }
        let record = self.steps.is_multiple_of(self.record_every);
        self.steps += 1;
        let epoch_left = self.ledger.epoch_left(now);
        let monitored = self.ledger.config().monitored.clone();
        for vm in monitored {
            let Some(s) = obs.get(vm) else { continue };
            let caps = &mut self.caps[vm];
            caps.first_sight(s);
            let cfg = self.ledger.config();
            let (mtus, cpu) = usage(s, cfg);
            let (ib_r, cpu_r) = (mtus * cfg.mtu_price, cpu * cfg.cpu_price);
            let (full, price) = (100.0 * cfg.vcpus[vm], cfg.mtu_price);
            let left = self.ledger.left_after(vm, ib_r, cpu_r);
            if self.rule.fires(left, epoch_left, caps.cut_this_epoch) {
                caps.floor = self.rule.cut_from(caps.effective(), full, s.cpu_pct);
                caps.cut_this_epoch = true;
                caps.cuts += 1;
            }
            self.ledger.charge(vm, ib_r, cpu_r);
            out.extend(caps.change(vm));
            if record {
                self.records.push(PolicyRecord {
                    time: now,
                    vm,
                    observed: mtus,
                    price,
                    balance: self.ledger.balance(vm),
                    cap: caps.emitted,
                });
            }
        }
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
        let vms: Vec<_> = cfg
            .monitored
            .iter()
            .map(|&vm| {
                serde_json::json!({
                    "vm": vm_names.get(vm).or(self.names.get(vm)),
                    "allocation": cfg.cpu_allocation(vm) + cfg.ib_allocation(vm),
                    "balance": self.ledger.balance(vm),
                    "cap": self.caps[vm].emitted,
                    "cuts": self.caps[vm].cuts,
                })
            })
            .collect();
        serde_json::json!({
            "kind": "freemarket",
            "resos": cfg,
            "rule": self.rule,
            "vms": vms,
        })
    }
}
