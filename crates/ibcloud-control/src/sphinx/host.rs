//! Sphinx on the host simulator (`[[controllers]] kind = "sphinx"`): each
//! watched VM's application reports its request latencies (the in-guest
//! agent of G §6.6), the controller steps every `period`, and the delays
//! that changed reach the VMs' queue pairs as congestion-control delays
//! after the loop's `control-latency` (the SM's MADs to the HCAs).

use super::controller::Sphinx;
use super::{policy_ratio, LpGroup, SphinxFlow, SphinxParams};
use crate::{dur_param, Policy, Time};
use ibcloud_host::{Actuation, View};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct FlowEntry {
    vm: String,
    base_us: f64,
    /// VMs whose queue pairs get the flow's delay (its senders of bulk
    /// data, e.g. a Memcached server); default the flow's own VM.
    #[serde(default)]
    act_on: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupEntry {
    a: String,
    b: String,
    target: serde_json::Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RetargetEntry {
    at: String,
    group: usize,
    target: serde_json::Value,
}

/// Keys of the controller table besides [`SphinxParams`]'s.
const OWN_KEYS: [&str; 4] = ["flows", "groups", "period", "retarget"];

fn ratio(v: &serde_json::Value, at: &str) -> Result<f64, String> {
    match v {
        serde_json::Value::String(s) => policy_ratio(s).map_err(|e| format!("{at}: {e}")),
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(r) if r.is_finite() && r > 0.0 => Ok(r),
            _ => Err(format!("{at}: a target must be a positive ratio, got {n}")),
        },
        _ => Err(format!("{at}: a target is a ratio like \"1:4\" or 0.25")),
    }
}

/// The Sphinx [`Policy`] of the host simulator. See the module docs.
#[derive(Debug)]
pub struct SphinxHost {
    sphinx: Sphinx,
    /// VM index of each Sphinx flow (where its latency is read).
    vms: Vec<usize>,
    /// VMs that get each flow's delay.
    act_on: Vec<Vec<usize>>,
    /// Latency records read so far, per flow.
    seen: Vec<usize>,
    period: Time,
    /// (time, group, ratio), earliest first.
    retarget: Vec<(Time, usize, f64)>,
    errors: Vec<String>,
}

impl SphinxHost {
    /// From a `[[controllers]]` table: `flows = [{vm, base-us, act-on}]`
    /// (the VM whose application reports the flow's latencies, its base
    /// latency, and the VMs that get its delay, default `[vm]`), `groups =
    /// [{a, b, target}]` (VM names; a target like `"1:4"`, `"fair"` or
    /// 0.25), `period` (default `10ms`), `retarget = [{at, group, target}]`
    /// and the controller options of [`SphinxParams`] (`k-i`, `k-p`,
    /// `period-s`, `error`, `max-error`, `throttle`, `max-delay`).
    pub fn from_params(
        p: &serde_json::Map<String, serde_json::Value>,
        vm_names: &[String],
    ) -> Result<Self, String> {
        let vm = |name: &str, at: &str| {
            vm_names
                .iter()
                .position(|n| n == name)
                .ok_or_else(|| format!("{at}: no VM '{name}'"))
        };
        let flows: Vec<FlowEntry> = serde_json::from_value(
            p.get("flows")
                .cloned()
                .ok_or("sphinx needs `flows` ([{vm, base-us}])")?,
        )
        .map_err(|e| format!("flows: {e}"))?;
        let groups: Vec<GroupEntry> = serde_json::from_value(
            p.get("groups")
                .cloned()
                .ok_or("sphinx needs `groups` ([{a, b, target}])")?,
        )
        .map_err(|e| format!("groups: {e}"))?;
        let mut vms = Vec::new();
        let mut act_on = Vec::new();
        let mut sflows = Vec::new();
        for (i, f) in flows.iter().enumerate() {
            vms.push(vm(&f.vm, &format!("flows[{i}].vm"))?);
            act_on.push(match &f.act_on {
                None => vec![vm(&f.vm, &format!("flows[{i}].vm"))?],
                Some(list) if list.is_empty() => {
                    return Err(format!("flows[{i}].act-on: name at least one VM"))
                }
                Some(list) => list
                    .iter()
                    .map(|n| vm(n, &format!("flows[{i}].act-on")))
                    .collect::<Result<_, _>>()?,
            });
            sflows.push(SphinxFlow {
                name: f.vm.clone(),
                base_us: f.base_us,
            });
        }
        let flow_of = |name: &str, at: &str| {
            flows
                .iter()
                .position(|f| f.vm == name)
                .ok_or_else(|| format!("{at}: '{name}' is not one of the flows"))
        };
        let mut sgroups = Vec::new();
        for (i, g) in groups.iter().enumerate() {
            sgroups.push(LpGroup {
                a: flow_of(&g.a, &format!("groups[{i}].a"))?,
                b: flow_of(&g.b, &format!("groups[{i}].b"))?,
                target: ratio(&g.target, &format!("groups[{i}].target"))?,
            });
        }
        let mut retarget = Vec::new();
        if let Some(v) = p.get("retarget") {
            let list: Vec<RetargetEntry> =
                serde_json::from_value(v.clone()).map_err(|e| format!("retarget: {e}"))?;
            for (i, r) in list.iter().enumerate() {
                let at = ibcloud_netsim::time::parse_duration(&r.at)
                    .map_err(|_| format!("retarget[{i}].at: cannot read duration '{}'", r.at))?;
                if r.group >= sgroups.len() {
                    return Err(format!("retarget[{i}].group: no LP group {}", r.group));
                }
                retarget.push((
                    at,
                    r.group,
                    ratio(&r.target, &format!("retarget[{i}].target"))?,
                ));
            }
        }
        retarget.sort_by_key(|r| r.0);
        let period = dur_param(p, "period", 10 * ibcloud_netsim::time::MS)?;
        if period == 0 {
            return Err("period must be positive".into());
        }
        let rest: serde_json::Map<String, serde_json::Value> = p
            .iter()
            .filter(|(k, _)| !OWN_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let params: SphinxParams = serde_json::from_value(serde_json::Value::Object(rest))
            .map_err(|e| format!("sphinx: {e}"))?;
        let n = vms.len();
        Ok(Self {
            sphinx: Sphinx::new(sflows, sgroups, params)?,
            vms,
            act_on,
            seen: vec![0; n],
            period,
            retarget,
            errors: Vec::new(),
        })
    }
}

impl SphinxHost {
    /// The controller (the real-host agent reads its records and delays).
    pub fn controller(&self) -> &Sphinx {
        &self.sphinx
    }

    /// The controller, mutable (the agent clears its records after logging
    /// them, so a long run's memory stays bounded).
    pub fn controller_mut(&mut self) -> &mut Sphinx {
        &mut self.sphinx
    }
}

impl Policy for SphinxHost {
    /// Mean latency (µs) per flow over the period, or None when a flow
    /// completed nothing in it.
    type Obs = Vec<Option<f64>>;

    fn name(&self) -> String {
        "sphinx".into()
    }

    fn period(&self) -> Time {
        self.period
    }

    fn observe(&mut self, _now: Time, view: &View<'_>) -> Self::Obs {
        self.vms
            .iter()
            .zip(self.seen.iter_mut())
            .map(|(&vm, seen)| {
                let l = view.vms.get(vm).map_or(&[][..], |v| v.latencies);
                let new = &l[(*seen).min(l.len())..];
                *seen = l.len();
                (!new.is_empty())
                    .then(|| new.iter().map(|x| x.1 as f64).sum::<f64>() / new.len() as f64 / 1e6)
            })
            .collect()
    }

    /// A step needs a latency from every flow; a period without one for
    /// some flow waits (its requests still count in the next period).
    fn evaluate(&mut self, _now: Time, obs: &Self::Obs) -> bool {
        obs.iter().all(Option::is_some)
    }

    fn culprits(&mut self, _now: Time, _obs: &Self::Obs) -> Vec<usize> {
        Vec::new()
    }

    fn actuate(&mut self, now: Time, obs: &Self::Obs, _culprits: &[usize]) -> Vec<Actuation> {
        while let Some(&(t, g, r)) = self.retarget.first() {
            if t > now {
                break;
            }
            self.retarget.remove(0);
            if let Err(e) = self.sphinx.set_target(g, r) {
                self.errors.push(e);
            }
        }
        let lat: Vec<f64> = obs.iter().map(|x| x.unwrap_or(0.0)).collect();
        match self.sphinx.step(now, &lat) {
            Ok(acts) => acts
                .into_iter()
                .flat_map(|a| {
                    self.act_on[a.flow]
                        .iter()
                        .map(move |&vm| Actuation::SetCcDelay { vm, ccti: a.delay })
                })
                .collect(),
            Err(e) => {
                self.errors.push(e);
                Vec::new()
            }
        }
    }

    fn report(&mut self, _vm_names: &[String]) -> serde_json::Value {
        serde_json::json!({
            "sphinx": self.sphinx.records(),
            "errors": self.errors,
        })
    }
}
