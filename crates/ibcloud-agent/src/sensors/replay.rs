//! A scripted sensor feed for tests and dry runs: the observations of each
//! control period read from a file instead of the host.
//!
//! JSON lines, one object per VM per period:
//! `{"period": 0, "vm": "vm1", "bytes": 2097152, "requests": 1, "latencies_us": [209.0]}`
//! or CSV with the header `period,vm,bytes,requests,cpu_pct,latencies_us`
//! (latencies separated by `;`). Every field but `period` and `vm` is
//! optional; a field present overrides the live sensor of that quantity
//! (so a feed can script the I/O while CPU % is measured from the real
//! cgroup), a missing one leaves it to the live sensor (or 0 when there
//! is none). The feed ends after its last period.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// One scripted observation (fields `None` = not scripted).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// Period index (0 = the first step).
    pub period: u64,
    /// VM name.
    pub vm: String,
    /// Bytes of I/O.
    pub bytes: Option<u64>,
    /// Requests.
    pub requests: Option<u64>,
    /// CPU %.
    pub cpu_pct: Option<f64>,
    /// Latencies (µs).
    pub latencies_us: Option<Vec<f64>>,
}

/// The feed: rows by period, then by VM index.
#[derive(Clone, Debug, Default)]
pub struct Replay {
    rows: BTreeMap<u64, Vec<(usize, Row)>>,
    /// Last period in the feed.
    pub last_period: u64,
}

fn check(path: &Path, line: usize, r: &Row) -> Result<(), String> {
    let bad = |what: &str| Err(format!("{}:{line}: {what}", path.display()));
    if let Some(c) = r.cpu_pct {
        if !c.is_finite() || c < 0.0 {
            return bad(&format!("cpu_pct {c} must be finite and >= 0"));
        }
    }
    if let Some(l) = &r.latencies_us {
        if l.iter().any(|x| !x.is_finite() || *x < 0.0) {
            return bad("latencies_us must be finite and >= 0");
        }
    }
    Ok(())
}

impl Replay {
    /// Reads a `.jsonl`/`.json` or `.csv` feed; `vms` are the configured
    /// names (rows for others are errors naming the line).
    pub fn load(path: &Path, vms: &[String]) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read replay feed {}: {e}", path.display()))?;
        let csv = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        let mut rows: Vec<(usize, Row)> = Vec::new();
        let mut header: Option<Vec<String>> = None;
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let row = if csv {
                let Some(h) = &header else {
                    let h: Vec<String> = t.split(',').map(|s| s.trim().to_string()).collect();
                    for c in &h {
                        if ![
                            "period",
                            "vm",
                            "bytes",
                            "requests",
                            "cpu_pct",
                            "latencies_us",
                        ]
                        .contains(&c.as_str())
                        {
                            return Err(format!("{}:{n}: unknown column '{c}'", path.display()));
                        }
                    }
                    header = Some(h);
                    continue;
                };
                parse_csv_row(h, t).map_err(|e| format!("{}:{n}: {e}", path.display()))?
            } else {
                serde_json::from_str::<Row>(t)
                    .map_err(|e| format!("{}:{n}: {e}", path.display()))?
            };
            check(path, n, &row)?;
            let Some(vm) = vms.iter().position(|v| *v == row.vm) else {
                return Err(format!("{}:{n}: unknown VM '{}'", path.display(), row.vm));
            };
            rows.push((vm, row));
        }
        let mut out = Replay::default();
        for (vm, r) in rows {
            out.last_period = out.last_period.max(r.period);
            out.rows.entry(r.period).or_default().push((vm, r));
        }
        if out.rows.is_empty() {
            return Err(format!("replay feed {} has no rows", path.display()));
        }
        Ok(out)
    }

    /// The scripted rows of `period` (VM index, row).
    pub fn rows(&self, period: u64) -> &[(usize, Row)] {
        self.rows.get(&period).map_or(&[], |v| v.as_slice())
    }
}

fn parse_csv_row(header: &[String], line: &str) -> Result<Row, String> {
    let cells: Vec<&str> = line.split(',').map(str::trim).collect();
    if cells.len() != header.len() {
        return Err(format!(
            "{} fields, header has {}",
            cells.len(),
            header.len()
        ));
    }
    let mut r = Row::default();
    let (mut has_period, mut has_vm) = (false, false);
    for (h, c) in header.iter().zip(cells) {
        let num = |what: &str| format!("{h} '{c}' is not {what}");
        match h.as_str() {
            "period" => {
                r.period = c.parse().map_err(|_| num("an integer"))?;
                has_period = true;
            }
            "vm" => {
                r.vm = c.to_string();
                has_vm = !c.is_empty();
            }
            _ if c.is_empty() => {}
            "bytes" => r.bytes = Some(c.parse().map_err(|_| num("an integer"))?),
            "requests" => r.requests = Some(c.parse().map_err(|_| num("an integer"))?),
            "cpu_pct" => r.cpu_pct = Some(c.parse().map_err(|_| num("a number"))?),
            "latencies_us" => {
                r.latencies_us = Some(
                    c.split(';')
                        .map(|x| {
                            x.trim()
                                .parse::<f64>()
                                .map_err(|_| num("a ;-separated list of numbers"))
                        })
                        .collect::<Result<_, _>>()?,
                )
            }
            _ => unreachable!("header checked"),
        }
    }
    if !has_period || !has_vm {
        return Err("every row needs period and vm".into());
    }
    Ok(r)
}
