//! A static congestion-control delay (`[[controllers]] kind = "cc-delay"`):
//! the SM pushes one CCT index to the named VMs' queue pairs once, `at` a
//! given time, and never again. This is G §6.3's "Collocated + LP" /
//! §6.7's "Manual" baseline: a hand-tuned delay that stays put, beside the
//! QoS weights of the fabric. Sphinx moves the same knob over time.

use crate::{dur_param, Policy, Time};
use ibcloud_host::{Actuation, View};

/// Keys of the table.
const KEYS: [&str; 4] = ["kind", "vms", "ccti", "at"];

/// One push of a fixed delay.
#[derive(Debug)]
pub struct StaticDelay {
    vms: Vec<usize>,
    ccti: u16,
    at: Time,
    done: bool,
}

impl StaticDelay {
    /// From `vms = [names]`, `ccti` (a CCT index, 0–16383; the fabric
    /// refuses one above its CCTI_Limit) and `at` (default `1us`).
    pub fn from_params(
        p: &serde_json::Map<String, serde_json::Value>,
        vm_names: &[String],
    ) -> Result<Self, String> {
        if let Some(k) = p.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(format!("cc-delay: unknown key '{k}' (vms, ccti, at)"));
        }
        let names = p
            .get("vms")
            .and_then(|v| v.as_array())
            .ok_or("cc-delay needs `vms` (a list of VM names)")?;
        let mut vms = Vec::new();
        for (i, n) in names.iter().enumerate() {
            let n = n
                .as_str()
                .ok_or_else(|| format!("vms[{i}]: expected a VM name"))?;
            vms.push(
                vm_names
                    .iter()
                    .position(|x| x == n)
                    .ok_or_else(|| format!("vms[{i}]: no VM '{n}'"))?,
            );
        }
        if vms.is_empty() {
            return Err("cc-delay: `vms` names no VM".into());
        }
        let ccti = p
            .get("ccti")
            .and_then(|v| v.as_u64())
            .filter(|&c| c <= 16383)
            .ok_or("cc-delay needs `ccti`, a CCT index in 0..=16383")? as u16;
        let at = dur_param(p, "at", ibcloud_netsim::time::US)?;
        if at == 0 {
            return Err("cc-delay: `at` must be positive".into());
        }
        Ok(Self {
            vms,
            ccti,
            at,
            done: false,
        })
    }
}

impl Policy for StaticDelay {
    type Obs = ();

    fn name(&self) -> String {
        "cc-delay".into()
    }

    /// `at` for the one push, then nothing for the rest of any run.
    fn period(&self) -> Time {
        if self.done {
            Time::MAX / 4
        } else {
            self.at
        }
    }

    fn observe(&mut self, _now: Time, _view: &View<'_>) -> Self::Obs {}

    fn evaluate(&mut self, _now: Time, _obs: &Self::Obs) -> bool {
        !self.done
    }

    fn culprits(&mut self, _now: Time, _obs: &Self::Obs) -> Vec<usize> {
        self.vms.clone()
    }

    fn actuate(&mut self, _now: Time, _obs: &Self::Obs, culprits: &[usize]) -> Vec<Actuation> {
        self.done = true;
        culprits
            .iter()
            .map(|&vm| Actuation::SetCcDelay {
                vm,
                ccti: self.ccti,
            })
            .collect()
    }

    fn report(&mut self, _vm_names: &[String]) -> serde_json::Value {
        serde_json::json!({"ccti": self.ccti, "pushed": self.done})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<StaticDelay, String> {
        let names = ["nc".to_string(), "ms".to_string()];
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        StaticDelay::from_params(v.as_object().unwrap(), &names)
    }

    #[test]
    fn pushes_once_then_sleeps() {
        let mut d = parse(r#"{"vms": ["ms"], "ccti": 32}"#).unwrap();
        assert_eq!(d.period(), ibcloud_netsim::time::US);
        assert!(d.evaluate(0, &()));
        let acts = d.actuate(0, &(), &[1]);
        assert!(matches!(
            acts[..],
            [Actuation::SetCcDelay { vm: 1, ccti: 32 }]
        ));
        assert!(!d.evaluate(1, &()));
        assert!(d.period() > 1_000_000_000_000_000);
    }

    #[test]
    fn bad_tables_are_named() {
        for (json, want) in [
            (r#"{"ccti": 3}"#, "needs `vms`"),
            (r#"{"vms": [], "ccti": 3}"#, "names no VM"),
            (r#"{"vms": ["zz"], "ccti": 3}"#, "no VM 'zz'"),
            (r#"{"vms": [1], "ccti": 3}"#, "vms[0]"),
            (r#"{"vms": ["ms"], "ccti": -1}"#, "needs `ccti`"),
            (r#"{"vms": ["ms"], "ccti": 3, "at": "0us"}"#, "positive"),
            (
                r#"{"vms": ["ms"], "ccti": 3, "when": 1}"#,
                "unknown key 'when'",
            ),
        ] {
            let e = parse(json).unwrap_err();
            assert!(e.contains(want), "{json}: {e}");
        }
    }
}
