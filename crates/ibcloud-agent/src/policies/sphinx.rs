//! `sphinx`: Sphinx on one real host, pushing through OpenSM (see the parent module).

use super::{base_policy, AgentPolicy};
use crate::config::{Actuator, Config};
use ibcloud_control::capping::{CapChange, CapPolicy, PolicyRecord, VmSample};
use ibcloud_control::sphinx::host::SphinxHost;
use ibcloud_control::{Policy as HostPolicy, Time};
use ibcloud_host::Actuation;
use ibcloud_qos::{Policy as FabricPolicy, PortClass};
use serde_json::{json, Map, Value};

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
