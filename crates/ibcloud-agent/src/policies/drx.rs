//! `drx`: DRX on one real host (see the parent module).

use super::AgentPolicy;
use crate::config::Config;
use ibcloud_control::capping::{CapChange, CapPolicy, PolicyRecord, VmSample};
use ibcloud_control::drx::config::POLICY_NAMES;
use ibcloud_control::drx::record::HardwareSetting;
use ibcloud_control::drx::{Drx, DrxConfig};
use ibcloud_control::Time;
use ibcloud_qos::{Policy as FabricPolicy, Preset};
use serde_json::{json, Map, Value};

/// DRX on one real host. See the module docs.
#[derive(Debug)]
pub struct DrxAgent {
    drx: Drx,
    interval: Time,
    cum: Vec<u64>,
    caps: Vec<u32>,
    hw_seen: usize,
    qos: Option<HardwareSetting>,
    cc: bool,
    sls: ibcloud_qos::CcSls,
    records: Vec<PolicyRecord>,
    fields: Vec<Map<String, Value>>,
    /// How long DRX keeps a violation's response before folding it into its
    /// totals (one epoch: every action for it has landed by then).
    keep: Time,
    want: Option<FabricPolicy>,
    hardware: bool,
}

impl DrxAgent {
    /// From `[policy]` (the keys of the scenario's `kind = "drx"`).
    pub fn new(cfg: &Config, names: &[String]) -> Result<Self, String> {
        let dc = DrxConfig::from_params(&cfg.policy, names)?;
        let hardware = dc.policy.hardware().is_some();
        let interval = dc.interval;
        let keep = dc.epoch;
        // One host: every VM of AGENT.toml is on it; the PM runs here.
        let vms = names.iter().map(|n| (n.clone(), 0)).collect();
        let drx = Drx::new(dc, vec![host_name()], vms).map_err(|e| format!("drx: {e}"))?;
        let n = names.len();
        let mut a = Self {
            drx,
            interval,
            cum: vec![0; n],
            caps: vec![0; n],
            hw_seen: 0,
            qos: None,
            cc: false,
            sls: cfg.opensm.as_ref().map_or(Default::default(), |o| o.cc_sls),
            records: Vec::new(),
            fields: vec![Map::new(); n],
            keep,
            want: None,
            hardware,
        };
        a.take_hardware();
        Ok(a)
    }

    /// Folds new hardware actions into the wanted fabric settings.
    fn take_hardware(&mut self) {
        let hw = self.drx.hardware();
        if hw.len() == self.hw_seen {
            return;
        }
        for h in &hw[self.hw_seen..] {
            match h.setting {
                HardwareSetting::CongestionControl => self.cc = true,
                s => self.qos = Some(s),
            }
        }
        self.hw_seen = hw.len();
        let preset = match self.qos {
            Some(HardwareSetting::QosPriority) => Preset::DrxMaxQ,
            _ => Preset::DrxMax,
        };
        self.want = Some(FabricPolicy {
            name: format!("drx-{}", POLICY_NAMES[self.drx.config().policy as usize]),
            qos: self.qos.map(|_| preset.qos()),
            cc: self.cc.then(|| preset.cc(self.sls)),
        });
    }
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "this-host".into())
}

impl CapPolicy for DrxAgent {
    fn name(&self) -> String {
        format!("drx-{}", POLICY_NAMES[self.drx.config().policy as usize])
    }
    fn period(&self) -> Time {
        self.interval
    }
    fn step(&mut self, now: Time, obs: &[VmSample]) -> Vec<CapChange> {
        for (c, o) in self.cum.iter_mut().zip(obs) {
            *c += o.requests;
        }
        // The interval's sample, then every message it set off (HA → PM →
        // HA, in-process): the modelled latencies order them in DRX's
        // clock, but the caps are written in this same loop iteration.
        let mut cmds = self.drx.step(now, &self.cum);
        let next_sample = (now / self.interval + 1) * self.interval;
        while self.drx.next_wakeup() < next_sample {
            let w = self.drx.next_wakeup();
            cmds.extend(self.drx.step(w, &self.cum));
        }
        self.take_hardware();
        let mut out: Vec<CapChange> = Vec::new();
        for c in cmds {
            let cap = if c.cap >= 100.0 {
                0
            } else {
                (c.cap.round() as u32).max(1)
            };
            if c.vm < self.caps.len() && self.caps[c.vm] != cap {
                self.caps[c.vm] = cap;
                out.retain(|o| o.vm != c.vm);
                out.push(CapChange { vm: c.vm, cap });
            }
        }
        // This step's records, per VM, for the log.
        for f in self.fields.iter_mut() {
            f.clear();
            // present on every row, so the Parquet column has one type
            f.insert("drx_events".into(), json!([]));
        }
        let secs = self.interval as f64 * 1e-12;
        let place = self.drx.placement();
        for (vm, o) in obs.iter().enumerate() {
            let vme = place.vm_vme.get(vm).copied().flatten();
            let price = vme.map_or(0.0, |j| self.drx.price(j));
            self.records.push(PolicyRecord {
                time: now,
                vm,
                observed: o.requests as f64 / secs,
                price,
                balance: 0.0,
                cap: self.caps[vm],
            });
            let f = &mut self.fields[vm];
            f.insert("drx_cap_pct".into(), json!(self.drx.cap(vm)));
            f.insert("cqe_per_s".into(), json!(o.requests as f64 / secs));
            if let Some(j) = vme {
                f.insert("vme".into(), json!(place.vmes[j].name));
            }
        }
        // DRX's new records, taken out of it so a long run's memory stays bounded.
        let recs = self.drx.compact(now, self.keep);
        for r in &recs {
            if let Some(vm) = r.vm.filter(|&v| v < self.fields.len()) {
                let f = &mut self.fields[vm];
                let kind = serde_json::to_value(r.kind).unwrap_or(Value::Null);
                let list = f.entry("drx_events").or_insert_with(|| json!([]));
                if let Value::Array(a) = list {
                    a.push(
                        json!({"kind": kind, "event": r.event, "pd": r.pd, "price": r.price,
                                  "rel": r.rel, "cap": r.cap}),
                    );
                }
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
    fn report(&self, _vm_names: &[String]) -> Value {
        let mut r = self.drx.report();
        if let Value::Object(m) = &mut r {
            // The per-interval records are in the action log already.
            m.remove("records");
            m.insert(
                "deployment".into(),
                json!("one host: every VM of AGENT.toml on this host, PM/EM/HA in-process"),
            );
        }
        r
    }
}

impl AgentPolicy for DrxAgent {
    fn fabric(&mut self) -> Option<FabricPolicy> {
        self.want.take()
    }
    fn log_fields(&self, vm: usize) -> Map<String, Value> {
        self.fields.get(vm).cloned().unwrap_or_default()
    }
    fn needs_fabric(&self) -> bool {
        self.hardware
    }
    fn fabric_base(&self) -> Option<FabricPolicy> {
        self.hardware.then(|| Preset::DrxMax.policy(self.sls))
    }
}
