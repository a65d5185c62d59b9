//! The agent's policies: the simulator's own controller objects behind one
//! interface, [`AgentPolicy`], a [`CapPolicy`] that may also want fabric
//! (QoS / congestion-control) settings pushed through OpenSM.
//!
//! - FaReS, FreeMarket, IOShares: [`build_cap_policy`] as before, no fabric.
//! - `drx`: [`Drx`] (the cluster control plane the host simulator's
//!   `kind = "drx"` runs) with every VM of AGENT.toml on this host and the
//!   PM in-process; its caps go to the cgroups, its hardware actions
//!   (StMax/StMaxQ at start, DRXMax/DRXMaxQ on the first violation) become
//!   the preset's opensm.conf options.
//! - `sphinx`: [`SphinxHost`] (the simulator's `kind = "sphinx"`), fed the
//!   latencies the VMs report; its CC delays become CCTI_Min of each
//!   act-on VM's SL and/or that SL's VL arbitration weight.

use crate::config::{Actuator, Config};
use ibcloud_control::capping::{build_cap_policy, CapChange, CapPolicy, PolicyRecord, VmSample};
use ibcloud_control::drx::config::POLICY_NAMES;
use ibcloud_control::drx::record::HardwareSetting;
use ibcloud_control::drx::{Drx, DrxConfig};
use ibcloud_control::sphinx::host::SphinxHost;
use ibcloud_control::{Policy as HostPolicy, Time};
use ibcloud_host::Actuation;
use ibcloud_qos::{Policy as FabricPolicy, PortClass, Preset};
use serde_json::{json, Map, Value};

/// A capping policy that may also drive the fabric.
pub trait AgentPolicy: CapPolicy {
    /// The fabric settings wanted after the last step, when they changed.
    fn fabric(&mut self) -> Option<FabricPolicy> {
        None
    }
    /// Extra fields of VM `vm`'s log line for the last step.
    fn log_fields(&self, _vm: usize) -> Map<String, Value> {
        Map::new()
    }
    /// Does this policy need `[opensm]`?
    fn needs_fabric(&self) -> bool {
        false
    }
    /// The fabric settings the policy may push (checked at start).
    fn fabric_base(&self) -> Option<FabricPolicy> {
        None
    }
    /// Changes LP group `group`'s target (the socket's `!target` line).
    fn set_target(&mut self, _group: usize, _ratio: f64) -> Result<(), String> {
        Err(format!("policy '{}' has no LP target", self.name()))
    }
}

/// A plain capping policy.
#[derive(Debug)]
pub struct Plain(pub Box<dyn CapPolicy>);

impl CapPolicy for Plain {
    fn name(&self) -> String {
        self.0.name()
    }
    fn period(&self) -> Time {
        self.0.period()
    }
    fn step(&mut self, now: Time, obs: &[VmSample]) -> Vec<CapChange> {
        self.0.step(now, obs)
    }
    fn reporters(&self) -> Vec<usize> {
        self.0.reporters()
    }
    fn records(&self) -> &[PolicyRecord] {
        self.0.records()
    }
    fn clear_records(&mut self) {
        self.0.clear_records()
    }
    fn report(&self, vm_names: &[String]) -> Value {
        self.0.report(vm_names)
    }
}

impl AgentPolicy for Plain {}

/// Builds `kind` from AGENT.toml (errors are the policy's own messages;
/// the caller adds file and line).
pub fn build(kind: &str, cfg: &Config) -> Result<Box<dyn AgentPolicy>, String> {
    let names: Vec<String> = cfg.vms.iter().map(|v| v.name.clone()).collect();
    match kind {
        "drx" => Ok(Box::new(DrxAgent::new(cfg, &names)?)),
        "sphinx" => Ok(Box::new(SphinxAgent::new(cfg, &names)?)),
        _ => build_cap_policy(kind, &cfg.policy, &names)
            .map(|p| Box::new(Plain(p)) as Box<dyn AgentPolicy>)
            .map_err(|e| {
                if e.starts_with("unknown capping policy") {
                    format!("unknown policy '{kind}' (fares, freemarket, ioshares, drx, sphinx)")
                } else {
                    e
                }
            }),
    }
}

/// The base QoS/CC policy of `[opensm]` (preset or file).
fn base_policy(cfg: &Config) -> Result<Option<FabricPolicy>, String> {
    match &cfg.opensm {
        None => Ok(None),
        Some(o) => ibcloud_qos::resolve(&o.base, o.cc_sls)
            .map(Some)
            .map_err(|e| cfg.at(o.base_line, format!("[opensm] base: {e}"))),
    }
}

// ---------------------------------------------------------------- DRX

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

// ------------------------------------------------------------- Sphinx

/// Sphinx on one real host. See the module docs.
#[derive(Debug)]
pub struct SphinxAgent {
    host: SphinxHost,
    /// VM index of each flow (where its latency is read).
    flow_vm: Vec<usize>,
    /// SL of each VM (those that get a delay must have one).
    vm_sl: Vec<Option<u8>>,
    /// Delay in force per VM.
    vm_delay: Vec<u16>,
    base: Option<FabricPolicy>,
    actuator: Actuator,
    max_delay: u16,
    changed: bool,
    initial_done: bool,
    /// VM indices of each group's flows a and b.
    group_vms: Vec<(usize, usize)>,
    fields: Vec<Map<String, Value>>,
    steps: u64,
    waits: u64,
}

#[derive(serde::Deserialize)]
struct FlowVm {
    vm: String,
}

#[derive(serde::Deserialize)]
struct GroupVms {
    a: String,
    b: String,
}

/// The `[policy]` array `key` read as `T`s (empty when absent).
fn policy_list<T: serde::de::DeserializeOwned>(cfg: &Config, key: &str) -> Result<Vec<T>, String> {
    cfg.policy
        .get(key)
        .cloned()
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| format!("{key}: {e}"))
        .map(Option::unwrap_or_default)
}

impl SphinxAgent {
    /// From `[policy]` (the keys of the scenario's `kind = "sphinx"`) and
    /// `[opensm]`.
    pub fn new(cfg: &Config, names: &[String]) -> Result<Self, String> {
        let host = SphinxHost::from_params(&cfg.policy, names)?;
        // SphinxHost has checked that every flow and group names a VM; an
        // unknown name here is still an error, never a wrong VM.
        let vm_of = |n: &str| {
            names
                .iter()
                .position(|x| x == n)
                .ok_or_else(|| format!("unknown VM '{n}'"))
        };
        let flows: Vec<FlowVm> = policy_list(cfg, "flows")?;
        let flow_vm = flows
            .iter()
            .map(|f| vm_of(&f.vm))
            .collect::<Result<Vec<usize>, String>>()?;
        if cfg.replay.is_none() {
            for (i, &vm) in flow_vm.iter().enumerate() {
                if !cfg.vms[vm].latency {
                    return Err(format!(
                        "flows[{i}]: VM '{}' reports no latencies (set `latency = true` in its [[vm]], or give \
                         [agent] replay)",
                        cfg.vms[vm].name
                    ));
                }
            }
        }
        let groups: Vec<GroupVms> = policy_list(cfg, "groups")?;
        let group_vms = groups
            .iter()
            .map(|g| Ok((vm_of(&g.a)?, vm_of(&g.b)?)))
            .collect::<Result<Vec<_>, String>>()?;
        let o = cfg.opensm.as_ref().ok_or(
            "sphinx pushes its delays through OpenSM: add an [opensm] table (conf, pid-file)",
        )?;
        let base = base_policy(cfg)?.ok_or("sphinx needs an [opensm] table")?;
        let max_delay = cfg
            .policy
            .get("max-delay")
            .and_then(Value::as_u64)
            .unwrap_or(127) as u16;
        let a = Self {
            vm_sl: cfg.vms.iter().map(|v| v.sl.map(|s| s.0)).collect(),
            vm_delay: vec![0; names.len()],
            fields: vec![Map::new(); names.len()],
            flow_vm,
            base: Some(base.clone()),
            actuator: o.actuator,
            max_delay,
            changed: false,
            initial_done: false,
            group_vms,
            host,
            steps: 0,
            waits: 0,
        };
        a.check(cfg, &base)?;
        Ok(a)
    }

    /// Every VM a flow acts on needs an SL, no SL is shared by VMs of
    /// different flows (CC and VL arbitration are per SL, so they could not
    /// be told apart), and the base policy has what the actuator changes.
    fn check(&self, cfg: &Config, base: &FabricPolicy) -> Result<(), String> {
        let act_on = self.act_on(cfg);
        let mut owner: Vec<Option<usize>> = vec![None; 16];
        for (f, vms) in act_on.iter().enumerate() {
            for &vm in vms {
                let v = &cfg.vms[vm];
                let Some((sl, _)) = v.sl else {
                    return Err(format!(
                        "flows[{f}]: VM '{}' gets the flow's delay but has no `sl` in its [[vm]] entry",
                        v.name
                    ));
                };
                match owner[sl as usize] {
                    Some(g) if g != f => {
                        return Err(cfg.at(
                            v.sl.map_or(0, |s| s.1),
                            format!(
                                "VM '{}': SL {sl} is also the SL of flow {g}'s VMs; per-SL congestion control \
                                 and VL arbitration cannot tell the two flows apart",
                                v.name
                            ),
                        ))
                    }
                    _ => owner[sl as usize] = Some(f),
                }
            }
        }
        let o = cfg
            .opensm
            .as_ref()
            .ok_or("sphinx needs an [opensm] table")?;
        if matches!(self.actuator, Actuator::Cc | Actuator::Both) {
            let cc = base.cc.as_ref().ok_or_else(|| {
                cfg.at(
                    o.base_line,
                    "[opensm] base has no congestion control, but the actuator is cc".to_string(),
                )
            })?;
            if self.max_delay > cc.ccti_limit() {
                return Err(format!(
                    "max-delay: {} is beyond the base policy's CCTI_Limit {} (its CCT has {} entries)",
                    self.max_delay,
                    cc.ccti_limit(),
                    cc.cct.len()
                ));
            }
            if !cc.ca.sl_based {
                return Err(cfg.at(
                    o.base_line,
                    "[opensm] base: the CA congestion setting is not SL based (port control 0), so a \
                     per-SL delay cannot be set"
                        .to_string(),
                ));
            }
        }
        if matches!(self.actuator, Actuator::Vlarb | Actuator::Both) && base.qos.is_none() {
            return Err(cfg.at(
                o.base_line,
                "[opensm] base has no QoS, but the actuator is vlarb".to_string(),
            ));
        }
        Ok(())
    }

    fn act_on(&self, cfg: &Config) -> Vec<Vec<usize>> {
        // SphinxHost keeps them private: re-read the same keys.
        let names: Vec<&str> = cfg.vms.iter().map(|v| v.name.as_str()).collect();
        let flows = cfg.policy.get("flows").and_then(Value::as_array);
        self.flow_vm
            .iter()
            .enumerate()
            .map(|(i, &vm)| {
                flows
                    .and_then(|f| f.get(i))
                    .and_then(|f| f.get("act-on"))
                    .and_then(Value::as_array)
                    .map(|l| {
                        l.iter()
                            .filter_map(|n| n.as_str())
                            .filter_map(|n| names.iter().position(|x| *x == n))
                            .collect()
                    })
                    .unwrap_or_else(|| vec![vm])
            })
            .collect()
    }

    /// The base policy with the delays in force.
    fn settings(&self) -> FabricPolicy {
        let mut p = self.base.clone().expect("base");
        p.name = "sphinx".into();
        let mut by_sl: Vec<Option<u16>> = vec![None; 16];
        for (vm, &d) in self.vm_delay.iter().enumerate() {
            if let Some(sl) = self.vm_sl[vm] {
                let e = &mut by_sl[sl as usize];
                *e = Some(e.map_or(d, |x| x.max(d)));
            }
        }
        if matches!(self.actuator, Actuator::Cc | Actuator::Both) {
            if let Some(cc) = p.cc.as_mut() {
                for (sl, d) in by_sl.iter().enumerate() {
                    if let Some(d) = d {
                        // Sphinx owns CCTI_Min of its flows' SLs: the
                        // delay floor of every QP on that SL (0 = none).
                        cc.ca.entries[sl].ccti_min = (*d).min(255) as u8;
                        cc.ca.control_map |= 1 << sl;
                    }
                }
            }
        }
        if matches!(self.actuator, Actuator::Vlarb | Actuator::Both) {
            if let Some(q) = p.qos.as_mut() {
                let sl2vl = q.effective(PortClass::Ca).sl2vl;
                let scale = |w: u8, d: u16| -> u8 {
                    // Our reading (G gives no mapping): the weight falls
                    // linearly from the base weight at delay 0 to 1 at the
                    // actuator's largest delay.
                    let f = 1.0 - f64::from(d) / f64::from(self.max_delay.max(1));
                    ((f64::from(w) * f).round() as u8).max(1)
                };
                let mut tables = vec![&mut q.default.vlarb_low];
                for c in q.classes.iter_mut() {
                    if let Some(t) = c.vlarb_low.as_mut() {
                        tables.push(t);
                    }
                }
                for t in tables {
                    for e in t.iter_mut() {
                        let d = by_sl
                            .iter()
                            .enumerate()
                            .filter(|(sl, _)| sl2vl[*sl] == e.vl)
                            .filter_map(|(_, d)| *d)
                            .max();
                        if let Some(d) = d {
                            if e.weight > 0 {
                                e.weight = scale(e.weight, d);
                            }
                        }
                    }
                }
            }
        }
        p
    }
}

impl CapPolicy for SphinxAgent {
    fn name(&self) -> String {
        "sphinx".into()
    }
    fn period(&self) -> Time {
        HostPolicy::period(&self.host)
    }
    fn step(&mut self, now: Time, obs: &[VmSample]) -> Vec<CapChange> {
        self.steps += 1;
        for f in self.fields.iter_mut() {
            f.clear();
        }
        let lat: Vec<Option<f64>> = self
            .flow_vm
            .iter()
            .map(|&vm| {
                let l = &obs[vm].latencies_us;
                (!l.is_empty()).then(|| l.iter().sum::<f64>() / l.len() as f64)
            })
            .collect();
        if !self.host.evaluate(now, &lat) {
            self.waits += 1;
            return Vec::new();
        }
        for a in self.host.actuate(now, &lat, &[]) {
            if let Actuation::SetCcDelay { vm, ccti } = a {
                if self.vm_delay[vm] != ccti {
                    self.vm_delay[vm] = ccti;
                    self.changed = true;
                }
            }
        }
        let s = self.host.controller();
        for (f, &vm) in self.flow_vm.iter().enumerate() {
            self.fields[vm].insert("flow_latency_us".into(), json!(lat[f]));
            self.fields[vm].insert("flow_delay".into(), json!(s.delays()[f]));
        }
        for r in s.records() {
            let (va, vb) = self.group_vms[r.group];
            for (vm, pl) in [(va, r.pl_a), (vb, r.pl_b)] {
                let f = &mut self.fields[vm];
                f.insert("pl".into(), json!(pl));
                f.insert("lp".into(), json!(r.lp));
                f.insert("lp_target".into(), json!(r.target));
                f.insert("lp_error".into(), json!(r.error));
                f.insert("sphinx_price".into(), json!(r.price));
                f.insert("resource".into(), json!(r.resource));
                f.insert("saturated".into(), json!(r.saturated));
            }
        }
        for (vm, f) in self.fields.iter_mut().enumerate() {
            if self.vm_sl[vm].is_some() {
                f.insert("sl".into(), json!(self.vm_sl[vm]));
                f.insert("cc_delay".into(), json!(self.vm_delay[vm]));
            }
        }
        self.host.controller_mut().clear_records();
        Vec::new()
    }
    fn records(&self) -> &[PolicyRecord] {
        &[]
    }
    fn clear_records(&mut self) {}
    fn report(&self, vm_names: &[String]) -> Value {
        let s = self.host.controller();
        json!({
            "steps": self.steps,
            "waited_for_latencies": self.waits,
            "flows": s.flows().iter().zip(s.delays()).map(|(f, d)| json!({"flow": f.name, "delay": d})).collect::<Vec<_>>(),
            "vm_delays": vm_names.iter().zip(&self.vm_delay).map(|(n, d)| (n.clone(), json!(d))).collect::<Map<_, _>>(),
            "actuator": format!("{:?}", self.actuator).to_lowercase(),
        })
    }
}

impl AgentPolicy for SphinxAgent {
    fn fabric(&mut self) -> Option<FabricPolicy> {
        let first = !std::mem::replace(&mut self.initial_done, true);
        if std::mem::take(&mut self.changed) || first {
            Some(self.settings())
        } else {
            None
        }
    }
    fn log_fields(&self, vm: usize) -> Map<String, Value> {
        self.fields.get(vm).cloned().unwrap_or_default()
    }
    fn needs_fabric(&self) -> bool {
        true
    }
    fn fabric_base(&self) -> Option<FabricPolicy> {
        self.base.clone()
    }
    fn set_target(&mut self, group: usize, ratio: f64) -> Result<(), String> {
        self.host.controller_mut().set_target(group, ratio)
    }
}
