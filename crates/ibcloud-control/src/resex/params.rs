//! Reading a ResEx policy's parameter table (scenario `[[controllers]]`
//! keys or `AGENT.toml`'s `[policy]`): every value checked, every error
//! names the policy, the key and what was expected.

use crate::Time;
use serde_json::{Map, Value};

/// A parameter table with the policy's name for its error messages.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Params<'a> {
    pub(crate) kind: &'static str,
    pub(crate) map: &'a Map<String, Value>,
}

/// What a number may be.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Range {
    /// > 0.
    Positive,
    /// In [0, 1).
    UnitOpen,
    /// In (0, 1).
    Fraction,
}

impl<'a> Params<'a> {
    /// Rejects keys outside `allowed`, listing the allowed ones.
    pub(crate) fn check_keys(&self, allowed: &[&str]) -> Result<(), String> {
        if let Some(k) = self.map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(format!(
                "{}: unknown parameter `{k}`, expected one of {}",
                self.kind,
                allowed.join(", ")
            ));
        }
        Ok(())
    }

    fn err(&self, key: &str, what: impl std::fmt::Display) -> String {
        format!("{}: {key}: {what}", self.kind)
    }

    /// A finite number in `range` (default if absent).
    pub(crate) fn num(&self, key: &str, default: f64, range: Range) -> Result<f64, String> {
        let Some(v) = self.map.get(key) else {
            return Ok(default);
        };
        let x = v
            .as_f64()
            .ok_or_else(|| self.err(key, format!("expected a number, got {v}")))?;
        check_num(x, range).map_err(|m| self.err(key, m))
    }

    /// An optional finite number in `range`.
    pub(crate) fn opt_num(&self, key: &str, range: Range) -> Result<Option<f64>, String> {
        match self.map.contains_key(key) {
            false => Ok(None),
            true => self.num(key, 0.0, range).map(Some),
        }
    }

    /// A positive integer.
    pub(crate) fn count(&self, key: &str, default: usize) -> Result<usize, String> {
        let Some(v) = self.map.get(key) else {
            return Ok(default);
        };
        match v.as_u64() {
            Some(n) if n > 0 => Ok(n as usize),
            _ => Err(self.err(key, format!("expected a positive integer, got {v}"))),
        }
    }

    /// One of `options` (the first is the default).
    pub(crate) fn choice(
        &self,
        key: &str,
        options: &[&'static str],
    ) -> Result<&'static str, String> {
        let Some(v) = self.map.get(key) else {
            return Ok(options[0]);
        };
        let s = v.as_str().unwrap_or("");
        options.iter().copied().find(|o| *o == s).ok_or_else(|| {
            self.err(
                key,
                format!("expected one of {}, got {v}", options.join(", ")),
            )
        })
    }

    /// true or false.
    pub(crate) fn boolean(&self, key: &str, default: bool) -> Result<bool, String> {
        match self.map.get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(self.err(key, format!("expected true or false, got {v}"))),
        }
    }

    /// A positive duration like `"1ms"`.
    pub(crate) fn duration(&self, key: &str, default: Time) -> Result<Time, String> {
        let t =
            crate::dur_param(self.map, key, default).map_err(|e| format!("{}: {e}", self.kind))?;
        if t == 0 {
            return Err(self.err(key, "must be positive"));
        }
        Ok(t)
    }

    /// A list of VM names → indices (`None` if absent).
    pub(crate) fn vm_list(
        &self,
        key: &str,
        names: &[String],
    ) -> Result<Option<Vec<usize>>, String> {
        let Some(v) = self.map.get(key) else {
            return Ok(None);
        };
        let list = v
            .as_array()
            .ok_or_else(|| self.err(key, "expected a list of VM names"))?;
        let mut out = Vec::new();
        for x in list {
            let s = x
                .as_str()
                .ok_or_else(|| self.err(key, format!("expected a VM name, got {x}")))?;
            let i = names
                .iter()
                .position(|n| n == s)
                .ok_or_else(|| self.err(key, format!("unknown VM '{s}'")))?;
            if !out.contains(&i) {
                out.push(i);
            }
        }
        Ok(Some(out))
    }

    /// A positive number per VM: one number for all, a list in VM order, or
    /// a table `{name = value}` (unlisted VMs get `default`).
    pub(crate) fn per_vm(
        &self,
        key: &str,
        names: &[String],
        default: f64,
    ) -> Result<Vec<f64>, String> {
        let pos = |x: &Value| -> Result<f64, String> {
            let f = x
                .as_f64()
                .ok_or_else(|| self.err(key, format!("expected a number, got {x}")))?;
            check_num(f, Range::Positive).map_err(|m| self.err(key, m))
        };
        match self.map.get(key) {
            None => Ok(vec![default; names.len()]),
            Some(Value::Array(a)) => {
                if a.len() != names.len() {
                    return Err(self.err(
                        key,
                        format!(
                            "a list needs one value per VM ({}), got {}",
                            names.len(),
                            a.len()
                        ),
                    ));
                }
                a.iter().map(pos).collect()
            }
            Some(Value::Object(o)) => {
                let mut out = vec![default; names.len()];
                for (name, x) in o {
                    let i = names
                        .iter()
                        .position(|n| n == name)
                        .ok_or_else(|| self.err(key, format!("unknown VM '{name}'")))?;
                    out[i] = pos(x)?;
                }
                Ok(out)
            }
            Some(x) => Ok(vec![pos(x)?; names.len()]),
        }
    }
}

/// Checks a number against its range (NaN and infinities never pass).
pub(crate) fn check_num(x: f64, range: Range) -> Result<f64, String> {
    if !x.is_finite() {
        return Err(format!("must be a finite number, got {x}"));
    }
    let ok = match range {
        Range::Positive => x > 0.0,
        Range::UnitOpen => (0.0..1.0).contains(&x),
        Range::Fraction => x > 0.0 && x < 1.0,
    };
    if ok {
        Ok(x)
    } else {
        Err(match range {
            Range::Positive => format!("must be positive, got {x}"),
            Range::UnitOpen => format!("must lie in [0, 1), got {x}"),
            Range::Fraction => format!("must lie in (0, 1), got {x}"),
        })
    }
}
