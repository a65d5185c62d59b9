//! The actuator: CPU limits of named cgroups, through cgroup v1
//! (`cpu.cfs_quota_us` + `cpu.cfs_period_us`, usage from `cpuacct.usage`)
//! or v2 (`cpu.max`, usage from `cpu.stat usage_usec`), whichever the host
//! has.
//!
//! A cap is Xen's: per cent of one CPU, 0 = uncapped; it becomes a CFS
//! quota of cap/100 × the cgroup's *current* period (the period is never
//! changed by the agent, only restored).

use crate::AgentError;
use ibcloud_control::capping::cap_to_quota;
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

/// cgroup hierarchy version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Version {
    /// Legacy hierarchies: one mount per controller (`cpu`, `cpuacct`).
    V1,
    /// The unified hierarchy (`cpu.max`).
    V2,
}

/// Where the cpu (and, on v1, cpuacct) hierarchies are mounted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hierarchy {
    /// v1 or v2.
    pub version: Version,
    /// The cpu controller's root (v2: the unified root).
    pub cpu_root: PathBuf,
    /// The cpuacct root (v1; same as `cpu_root` on v2 and on a combined
    /// `cpu,cpuacct` mount).
    pub acct_root: PathBuf,
}

fn first_with(root: &Path, dirs: &[&str], file: &str) -> Option<PathBuf> {
    dirs.iter()
        .map(|d| root.join(d))
        .find(|d| d.join(file).is_file())
}

fn v2_root(root: &Path) -> Option<(PathBuf, String)> {
    // A pure v2 host mounts the unified hierarchy at the root; a hybrid one
    // at `unified/`. Either only counts if the cpu controller is enabled.
    for dir in [root.to_path_buf(), root.join("unified")] {
        if let Ok(s) = fs::read_to_string(dir.join("cgroup.controllers")) {
            return Some((dir, s));
        }
    }
    None
}

/// Finds the hierarchy under `root` (normally `/sys/fs/cgroup`): the
/// requested version, or v1 when the cpu controller is mounted there and
/// v2 otherwise. Errors name what the host lacks.
pub fn detect(root: &Path, want: Option<Version>) -> Result<Hierarchy, AgentError> {
    let v1 = || -> Result<Hierarchy, String> {
        let cpu = first_with(
            root,
            &["cpu", "cpu,cpuacct", "cpuacct,cpu"],
            "cpu.cfs_quota_us",
        )
        .ok_or_else(|| {
            format!(
                "no cgroup v1 cpu controller under {} (no cpu/cpu.cfs_quota_us)",
                root.display()
            )
        })?;
        let acct = first_with(
            root,
            &["cpuacct", "cpu,cpuacct", "cpuacct,cpu"],
            "cpuacct.usage",
        )
        .ok_or_else(|| {
            format!(
                "no cgroup v1 cpuacct controller under {} (no cpuacct/cpuacct.usage)",
                root.display()
            )
        })?;
        Ok(Hierarchy {
            version: Version::V1,
            cpu_root: cpu,
            acct_root: acct,
        })
    };
    let v2 = || -> Result<Hierarchy, String> {
        let (dir, controllers) = v2_root(root)
            .ok_or_else(|| format!("no cgroup v2 hierarchy under {}", root.display()))?;
        if !controllers.split_whitespace().any(|c| c == "cpu") {
            return Err(format!(
                "the cgroup v2 hierarchy at {} has no cpu controller (cgroup.controllers: '{}')",
                dir.display(),
                controllers.trim()
            ));
        }
        Ok(Hierarchy {
            version: Version::V2,
            cpu_root: dir.clone(),
            acct_root: dir,
        })
    };
    match want {
        Some(Version::V1) => v1().map_err(AgentError::Input),
        Some(Version::V2) => v2().map_err(AgentError::Input),
        None => v1().or_else(|e1| {
            v2().map_err(|e2| {
                AgentError::Input(format!("no usable cgroup CPU controller: {e1}; {e2}"))
            })
        }),
    }
}

/// A CPU limit as the kernel holds it (period and quota in µs; `None` =
/// unlimited: v1 `-1`, v2 `max`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limit {
    /// Quota per period (µs), `None` = unlimited.
    pub quota_us: Option<u64>,
    /// CFS period (µs).
    pub period_us: u64,
}

impl Limit {
    /// The cap (per cent of one CPU, 0 = none) this limit amounts to,
    /// rounded to the nearest per cent.
    pub fn cap(&self) -> u32 {
        match self.quota_us {
            None => 0,
            Some(q) => ((q as f64 * 100.0 / self.period_us.max(1) as f64).round() as u32).max(1),
        }
    }
}

/// Throttling counters of `cpu.stat`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Throttling {
    /// Periods with runnable tasks.
    pub nr_periods: u64,
    /// Periods in which the group was throttled.
    pub nr_throttled: u64,
    /// Total time throttled (ns).
    pub throttled_ns: u64,
}

/// One VM's cgroup, opened and checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cgroup {
    /// Hierarchy version.
    pub version: Version,
    /// Directory in the cpu hierarchy.
    pub cpu_dir: PathBuf,
    /// Directory in the cpuacct hierarchy (v1) or the same directory (v2).
    pub acct_dir: PathBuf,
}

fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    fs::write(path, value).map_err(|e| format!("cannot write '{value}' to {}: {e}", path.display()))
}

fn parse_u64(path: &Path, s: &str) -> Result<u64, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("{}: '{}' is not a number", path.display(), s.trim()))
}

/// Looks `key` up in a `key value` per line file (`cpu.stat`).
fn stat_field(path: &Path, text: &str, key: &str) -> Result<Option<u64>, String> {
    for line in text.lines() {
        let mut it = line.split_whitespace();
        if it.next() == Some(key) {
            let v = it.next().unwrap_or("");
            return parse_u64(path, v).map(Some);
        }
    }
    Ok(None)
}

impl Cgroup {
    /// Opens cgroup `rel` (a path relative to the hierarchy roots, e.g.
    /// `machine/vm1`): it must exist and, with `writable`, its quota file
    /// must be writable.
    pub fn open(h: &Hierarchy, rel: &str, writable: bool) -> Result<Self, String> {
        let rel = rel.trim_start_matches('/');
        if rel.split('/').any(|c| c == ".." || c == ".") {
            return Err(format!("cgroup path '{rel}' must not contain '.' or '..'"));
        }
        let cg = Cgroup {
            version: h.version,
            cpu_dir: h.cpu_root.join(rel),
            acct_dir: h.acct_root.join(rel),
        };
        if !cg.cpu_dir.is_dir() {
            return Err(format!(
                "cgroup '{rel}' does not exist ({} is not a directory)",
                cg.cpu_dir.display()
            ));
        }
        if h.version == Version::V1 && !cg.acct_dir.is_dir() {
            return Err(format!(
                "cgroup '{rel}' has no cpuacct side ({} is not a directory); create it in both hierarchies",
                cg.acct_dir.display()
            ));
        }
        let quota = cg.quota_file();
        if !writable {
            return Ok(cg);
        }
        fs::OpenOptions::new()
            .write(true)
            .open(&quota)
            .map_err(|e| format!("cgroup '{rel}': {} is not writable: {e}", quota.display()))?;
        Ok(cg)
    }

    fn quota_file(&self) -> PathBuf {
        match self.version {
            Version::V1 => self.cpu_dir.join("cpu.cfs_quota_us"),
            Version::V2 => self.cpu_dir.join("cpu.max"),
        }
    }

    /// The limit in force.
    pub fn read_limit(&self) -> Result<Limit, String> {
        match self.version {
            Version::V1 => {
                let qp = self.cpu_dir.join("cpu.cfs_quota_us");
                let pp = self.cpu_dir.join("cpu.cfs_period_us");
                let q = read(&qp)?;
                let quota: i64 = q
                    .trim()
                    .parse()
                    .map_err(|_| format!("{}: '{}' is not a number", qp.display(), q.trim()))?;
                let period_us = parse_u64(&pp, &read(&pp)?)?;
                Ok(Limit {
                    quota_us: (quota >= 0).then_some(quota as u64),
                    period_us,
                })
            }
            Version::V2 => {
                let p = self.cpu_dir.join("cpu.max");
                let s = read(&p)?;
                parse_cpu_max(&s).map_err(|e| format!("{}: {e}", p.display()))
            }
        }
    }

    /// Writes `limit` (period first when it changes, quota unlimited
    /// while it does, so no intermediate state is tighter than either).
    pub fn write_limit(&self, limit: &Limit) -> Result<(), String> {
        match self.version {
            Version::V1 => {
                let qp = self.cpu_dir.join("cpu.cfs_quota_us");
                let pp = self.cpu_dir.join("cpu.cfs_period_us");
                let cur = self.read_limit()?;
                if cur.period_us != limit.period_us {
                    write(&qp, "-1")?;
                    write(&pp, &limit.period_us.to_string())?;
                }
                let q = limit.quota_us.map_or("-1".to_string(), |q| q.to_string());
                write(&qp, &q)
            }
            Version::V2 => write(&self.cpu_dir.join("cpu.max"), &format_cpu_max(limit)),
        }
    }

    /// Sets a Xen-style cap on the current period; returns the limit
    /// written. Quotas below the kernel's 1 ms minimum are raised to it.
    pub fn set_cap(&self, cap: u32) -> Result<Limit, String> {
        let cur = self.read_limit()?;
        let quota_us = cap_to_quota(cap, cur.period_us).map(|q| q.max(1000));
        let limit = Limit {
            quota_us,
            period_us: cur.period_us,
        };
        self.write_limit(&limit)?;
        Ok(limit)
    }

    /// Cumulative CPU time used by the group (ns).
    pub fn usage_ns(&self) -> Result<u64, String> {
        match self.version {
            Version::V1 => {
                let p = self.acct_dir.join("cpuacct.usage");
                parse_u64(&p, &read(&p)?)
            }
            Version::V2 => {
                let p = self.cpu_dir.join("cpu.stat");
                let s = read(&p)?;
                stat_field(&p, &s, "usage_usec")?
                    .map(|u| u.saturating_mul(1000))
                    .ok_or_else(|| format!("{}: no usage_usec line", p.display()))
            }
        }
    }

    /// The throttling counters.
    pub fn throttling(&self) -> Result<Throttling, String> {
        let p = self.cpu_dir.join("cpu.stat");
        let s = read(&p)?;
        let f = |k: &str| stat_field(&p, &s, k);
        let throttled_ns = match self.version {
            Version::V1 => f("throttled_time")?,
            Version::V2 => f("throttled_usec")?.map(|u| u.saturating_mul(1000)),
        };
        Ok(Throttling {
            nr_periods: f("nr_periods")?.unwrap_or(0),
            nr_throttled: f("nr_throttled")?.unwrap_or(0),
            throttled_ns: throttled_ns.unwrap_or(0),
        })
    }
}

/// Parses v2 `cpu.max` (`"max 100000"`, `"50000 100000"`, or a lone quota
/// with the default period of 100 ms).
pub fn parse_cpu_max(s: &str) -> Result<Limit, String> {
    let mut it = s.split_whitespace();
    let q = it.next().ok_or("empty cpu.max")?;
    let period_us = match it.next() {
        Some(p) => p
            .parse()
            .map_err(|_| format!("bad period '{p}' in cpu.max"))?,
        None => 100_000,
    };
    if it.next().is_some() || period_us == 0 {
        return Err(format!("malformed cpu.max '{}'", s.trim()));
    }
    let quota_us = match q {
        "max" => None,
        q => Some(
            q.parse()
                .map_err(|_| format!("bad quota '{q}' in cpu.max"))?,
        ),
    };
    Ok(Limit {
        quota_us,
        period_us,
    })
}

/// Formats a limit as v2 `cpu.max`.
///
/// ```
/// use ibcloud_agent::cgroup::{format_cpu_max, parse_cpu_max, Limit};
/// let l = Limit { quota_us: Some(25_000), period_us: 100_000 };
/// assert_eq!(format_cpu_max(&l), "25000 100000");
/// assert_eq!(parse_cpu_max("max 100000").unwrap().quota_us, None);
/// ```
pub fn format_cpu_max(l: &Limit) -> String {
    match l.quota_us {
        None => format!("max {}", l.period_us),
        Some(q) => format!("{q} {}", l.period_us),
    }
}
