//! `AGENT.toml`: the agent's settings, its VMs and the policy's
//! parameters. Every error names the file, the line and the problem.
//!
//! ```toml
//! [agent]
//! period = 1.0                 # seconds between steps (default: the policy's interval)
//! state-file = "/run/ibcloud-agent.state"
//! socket = "/run/ibcloud-agent.sock"   # latency reports (optional)
//! dry-run = false
//! cgroup-root = "/sys/fs/cgroup"
//! cgroup-version = "auto"      # "v1", "v2" or "auto"
//!
//! [[vm]]
//! name = "vm1"
//! cgroup = "machine/vm1"       # relative to the cpu (and cpuacct) roots
//! ib-device = "mlx5_0"
//! ib-port = 1
//! latency = true
//!
//! [policy]                     # passed to the policy as its parameters
//! epoch = 1.0
//! ```

use crate::cgroup::Version;
use crate::sensors::ib::{Direction, Source};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The `[agent]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawAgent {
    period: Option<Spanned<f64>>,
    state_file: Option<Spanned<String>>,
    socket: Option<Spanned<String>>,
    #[serde(default)]
    dry_run: bool,
    cgroup_root: Option<Spanned<String>>,
    cgroup_version: Option<Spanned<String>>,
    replay: Option<Spanned<String>>,
    log: Option<Spanned<String>>,
    steps: Option<Spanned<i64>>,
}

/// One `[[vm]]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawVm {
    name: Spanned<String>,
    cgroup: Spanned<String>,
    ib_source: Option<Spanned<String>>,
    ib_device: Option<Spanned<String>>,
    ib_port: Option<Spanned<i64>>,
    counters: Option<Spanned<String>>,
    ib_command: Option<Spanned<Vec<String>>>,
    ib_direction: Option<Spanned<String>>,
    counter_bits: Option<Spanned<i64>>,
    requests_counter: Option<Spanned<String>>,
    rdma_bytes_counter: Option<String>,
    rdma_requests_counter: Option<String>,
    #[serde(default)]
    latency: bool,
    sl: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    agent: Option<RawAgent>,
    vm: Option<Vec<Spanned<RawVm>>>,
    policy: Option<Spanned<std::collections::BTreeMap<Spanned<String>, toml::Value>>>,
    opensm: Option<Spanned<RawOpenSm>>,
}

/// The `[opensm]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawOpenSm {
    conf: Spanned<String>,
    pid_file: Option<Spanned<String>>,
    pid: Option<Spanned<i64>>,
    log: Option<Spanned<String>>,
    sweep_timeout: Option<Spanned<f64>>,
    base: Option<Spanned<String>>,
    cc_sls: Option<Spanned<String>>,
    actuator: Option<Spanned<String>>,
}

/// How the Sphinx resource stage reaches the fabric.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Actuator {
    /// CA congestion control: CCTI_Min of the flow's SL (the CC delay).
    #[default]
    Cc,
    /// VL arbitration: the low-priority weight of the flow's VL.
    Vlarb,
    /// Both.
    Both,
}

/// Where the QoS / congestion-control settings go: a running OpenSM's
/// configuration file and the process to reload.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenSmConfig {
    /// opensm.conf the running OpenSM was started with (`-F`).
    pub conf: PathBuf,
    /// Line of `conf =`.
    pub conf_line: usize,
    /// PID file of the running OpenSM (read at start).
    pub pid_file: Option<PathBuf>,
    /// Or its PID.
    pub pid: Option<u32>,
    /// Line of `pid =` / `pid-file =` (or of `[opensm]`).
    pub pid_line: usize,
    /// OpenSM's log: when given, each reload waits for the next
    /// "SUBNET UP" there (the sweep that applied the new settings).
    pub log: Option<PathBuf>,
    /// Longest wait for that sweep (s).
    pub sweep_timeout_s: f64,
    /// QoS/CC policy the settings start from (preset name or policy file).
    pub base: String,
    /// Line of `base =` (or of `[opensm]`).
    pub base_line: usize,
    /// G §9 A11 for the presets.
    pub cc_sls: ibcloud_qos::CcSls,
    /// Sphinx's actuator.
    pub actuator: Actuator,
    /// Line of `actuator =` (or of `[opensm]`).
    pub actuator_line: usize,
}

/// One VM to control.
#[derive(Clone, Debug, PartialEq)]
pub struct VmConfig {
    /// Name (in logs and latency reports).
    pub name: String,
    /// cgroup path relative to the hierarchy roots.
    pub cgroup: String,
    /// Line of `cgroup =` (for errors found when opening it).
    pub cgroup_line: usize,
    /// I/O counters (`None` = no IB sensor: bytes/requests 0 unless
    /// replayed).
    pub ib: Option<(Source, Direction, u32)>,
    /// Does the application report latencies on the socket?
    pub latency: bool,
    /// Service level of the VM's traffic (for fabric policies), and the
    /// line of `sl =`.
    pub sl: Option<(u8, usize)>,
}

/// The whole configuration, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The file it came from.
    pub path: PathBuf,
    /// Control period (s); `None` = the policy's own control interval.
    pub period_s: Option<f64>,
    /// Line of `period =`.
    pub period_line: usize,
    /// State file.
    pub state_file: PathBuf,
    /// Latency socket.
    pub socket: Option<PathBuf>,
    /// Log what would be done, write nothing.
    pub dry_run: bool,
    /// cgroup mount root.
    pub cgroup_root: PathBuf,
    /// Requested version (`None` = detect).
    pub cgroup_version: Option<Version>,
    /// Line of `cgroup-version` (errors about the host lacking it).
    pub cgroup_version_line: usize,
    /// Scripted feed.
    pub replay: Option<PathBuf>,
    /// Action log (JSON lines).
    pub log: Option<PathBuf>,
    /// Stop after this many steps (`None` = until stopped).
    pub steps: Option<u64>,
    /// VMs.
    pub vms: Vec<VmConfig>,
    /// Policy parameters (`[policy]`).
    pub policy: serde_json::Map<String, serde_json::Value>,
    /// Line of `[policy]` (errors from the policy's constructor).
    pub policy_line: usize,
    /// Each `[policy]` key and its line.
    pub policy_keys: Vec<(String, usize)>,
    /// The `[opensm]` table, if any.
    pub opensm: Option<OpenSmConfig>,
}

/// Line (1-based) of byte offset `at` in `text`.
pub fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())]
        .bytes()
        .filter(|b| *b == b'\n')
        .count()
        + 1
}

impl Config {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::parse(path, &text)
    }

    /// Parses `text` as if read from `path` (relative paths in it are
    /// relative to `path`'s directory).
    pub fn parse(path: &Path, text: &str) -> Result<Config, String> {
        let file = path.display().to_string();
        let err = |span: std::ops::Range<usize>, msg: String| {
            format!("{file}:{}: {msg}", line_of(text, span.start))
        };
        let raw: Raw = toml::from_str(text).map_err(|e| match e.span() {
            Some(s) => err(s, e.message().trim().to_string()),
            None => format!("{file}: {}", e.message().trim()),
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        let resolve = |p: &str| -> PathBuf {
            let p = Path::new(p);
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                base.join(p)
            }
        };
        let agent = raw.agent.unwrap_or(RawAgent {
            period: None,
            state_file: None,
            socket: None,
            dry_run: false,
            cgroup_root: None,
            cgroup_version: None,
            replay: None,
            log: None,
            steps: None,
        });
        let period_s = match &agent.period {
            None => None,
            Some(p) => {
                let v = *p.get_ref();
                if !v.is_finite() || !(0.01..=3600.0).contains(&v) {
                    return Err(err(
                        p.span(),
                        format!("period = {v}: must be between 0.01 and 3600 seconds"),
                    ));
                }
                Some(v)
            }
        };
        let period_line = agent
            .period
            .as_ref()
            .map_or(0, |p| line_of(text, p.span().start));
        let (cgroup_version, cgroup_version_line) = match &agent.cgroup_version {
            None => (None, 0),
            Some(v) => (
                match v.get_ref().as_str() {
                    "auto" => None,
                    "v1" | "1" => Some(Version::V1),
                    "v2" | "2" => Some(Version::V2),
                    o => {
                        return Err(err(
                            v.span(),
                            format!("cgroup-version = '{o}': expected \"v1\", \"v2\" or \"auto\""),
                        ))
                    }
                },
                line_of(text, v.span().start),
            ),
        };
        let steps = match &agent.steps {
            None => None,
            Some(s) if *s.get_ref() < 0 => return Err(err(s.span(), "steps must be >= 0".into())),
            Some(s) => (*s.get_ref() > 0).then_some(*s.get_ref() as u64),
        };
        let Some(vms_raw) = raw.vm.filter(|v| !v.is_empty()) else {
            return Err(format!(
                "{file}: no [[vm]] entries: the agent needs at least one VM to control"
            ));
        };
        let mut vms: Vec<VmConfig> = Vec::new();
        for sv in vms_raw {
            let span = sv.span();
            let v = sv.into_inner();
            let name = v.name.get_ref().trim().to_string();
            if name.is_empty() || name.contains(char::is_whitespace) {
                return Err(err(
                    v.name.span(),
                    format!("VM name '{name}' must be non-empty without spaces"),
                ));
            }
            if vms.iter().any(|o| o.name == name) {
                return Err(err(v.name.span(), format!("duplicate VM name '{name}'")));
            }
            let cg = v.cgroup.get_ref().trim().to_string();
            if cg.trim_matches('/').is_empty() || cg.split('/').any(|c| c == ".." || c == ".") {
                return Err(err(
                    v.cgroup.span(),
                    format!(
                        "cgroup = '{cg}': must name a cgroup below the root, without '.' or '..'"
                    ),
                ));
            }
            if vms
                .iter()
                .any(|o| o.cgroup.trim_matches('/') == cg.trim_matches('/'))
            {
                return Err(err(
                    v.cgroup.span(),
                    format!("cgroup '{cg}' is given to two VMs"),
                ));
            }
            let bits = match &v.counter_bits {
                None => 64,
                Some(b) if [32, 64].contains(b.get_ref()) => *b.get_ref() as u32,
                Some(b) => {
                    return Err(err(
                        b.span(),
                        format!("counter-bits = {}: must be 32 or 64", b.get_ref()),
                    ))
                }
            };
            let direction = match &v.ib_direction {
                None => Direction::Xmit,
                Some(d) => match d.get_ref().as_str() {
                    "xmit" => Direction::Xmit,
                    "rcv" => Direction::Rcv,
                    "both" => Direction::Both,
                    o => {
                        return Err(err(
                            d.span(),
                            format!("ib-direction = '{o}': expected xmit, rcv or both"),
                        ))
                    }
                },
            };
            let kind = match (&v.ib_source, &v.counters, &v.ib_device) {
                (Some(s), _, _) => s.get_ref().clone(),
                (None, Some(_), _) | (None, None, Some(_)) => "sysfs".into(),
                _ => "none".into(),
            };
            let need_dev = |what: &str| -> Result<(String, i64), String> {
                let d = v.ib_device.as_ref().ok_or_else(|| {
                    err(span.clone(), format!("VM '{name}': {what} needs ib-device"))
                })?;
                let p = v.ib_port.as_ref().map_or(1, |p| *p.get_ref());
                if !(1..=254).contains(&p) {
                    let s = v.ib_port.as_ref().map_or(span.clone(), |p| p.span());
                    return Err(err(s, format!("ib-port = {p}: must be 1..254")));
                }
                Ok((d.get_ref().clone(), p))
            };
            let source = match kind.as_str() {
                "none" => None,
                "sysfs" => {
                    let dir = match &v.counters {
                        Some(c) => resolve(c.get_ref()),
                        None => {
                            let (d, p) = need_dev("ib-source = \"sysfs\"")?;
                            PathBuf::from(format!("/sys/class/infiniband/{d}/ports/{p}/counters"))
                        }
                    };
                    if !dir.join("port_xmit_data").is_file() {
                        let s = v.counters.as_ref().map_or(span.clone(), |c| c.span());
                        return Err(err(
                            s,
                            format!(
                                "VM '{name}': {} has no port_xmit_data (no such IB port?)",
                                dir.display()
                            ),
                        ));
                    }
                    if let Some(r) = &v.requests_counter {
                        let f = dir.parent().unwrap_or(&dir).join(r.get_ref());
                        if !f.is_file() {
                            return Err(err(
                                r.span(),
                                format!("requests-counter: {} does not exist", f.display()),
                            ));
                        }
                    }
                    Some(Source::Sysfs {
                        dir,
                        requests: v.requests_counter.as_ref().map(|r| r.get_ref().clone()),
                    })
                }
                "rdma" => {
                    let command = match &v.ib_command {
                        Some(c) => c.get_ref().clone(),
                        None => {
                            let (d, p) = need_dev("ib-source = \"rdma\"")?;
                            vec![
                                "rdma".into(),
                                "statistic".into(),
                                "show".into(),
                                "link".into(),
                                format!("{d}/{p}"),
                            ]
                        }
                    };
                    Some(Source::Rdma {
                        command,
                        bytes_counter: v.rdma_bytes_counter.clone().unwrap_or("tx_bytes".into()),
                        requests_counter: v
                            .rdma_requests_counter
                            .clone()
                            .unwrap_or("rx_write_requests".into()),
                    })
                }
                "perfquery" => {
                    let command = match &v.ib_command {
                        Some(c) => c.get_ref().clone(),
                        None => {
                            let (d, p) = need_dev("ib-source = \"perfquery\"")?;
                            vec![
                                "perfquery".into(),
                                "-x".into(),
                                "-C".into(),
                                d,
                                "-P".into(),
                                p.to_string(),
                            ]
                        }
                    };
                    Some(Source::Perfquery { command })
                }
                o => {
                    let s = v.ib_source.as_ref().map_or(span.clone(), |s| s.span());
                    return Err(err(
                        s,
                        format!("ib-source = '{o}': expected sysfs, rdma, perfquery or none"),
                    ));
                }
            };
            if let Some(c) = &v.ib_command {
                if c.get_ref().is_empty() {
                    return Err(err(c.span(), "ib-command is empty".into()));
                }
            }
            let sl = match &v.sl {
                None => None,
                Some(s) if (0..=15).contains(s.get_ref()) => {
                    Some((*s.get_ref() as u8, line_of(text, s.span().start)))
                }
                Some(s) => {
                    return Err(err(
                        s.span(),
                        format!("sl = {}: a service level is 0..15", s.get_ref()),
                    ))
                }
            };
            vms.push(VmConfig {
                sl,
                name,
                cgroup: cg.trim_matches('/').to_string(),
                cgroup_line: line_of(text, v.cgroup.span().start),
                ib: source.map(|s| (s, direction, bits)),
                latency: v.latency,
            });
        }
        let mut policy_keys = Vec::new();
        let (policy, policy_line) = match raw.policy {
            None => (serde_json::Map::new(), 0),
            Some(p) => {
                let line = line_of(text, p.span().start);
                let mut m = serde_json::Map::new();
                for (k, v) in p.into_inner() {
                    let kl = line_of(text, k.span().start);
                    let v = serde_json::to_value(v)
                        .map_err(|e| format!("{file}:{kl}: [policy]: {e}"))?;
                    policy_keys.push((k.get_ref().clone(), kl));
                    m.insert(k.into_inner(), v);
                }
                (m, line)
            }
        };
        let opt_path = |s: &Option<Spanned<String>>| s.as_ref().map(|s| resolve(s.get_ref()));
        let opensm = match raw.opensm {
            None => None,
            Some(o) => {
                let head = line_of(text, o.span().start);
                let o = o.into_inner();
                let at = |s: &Option<Spanned<String>>| {
                    s.as_ref().map_or(head, |s| line_of(text, s.span().start))
                };
                let pid = match &o.pid {
                    None => None,
                    Some(p) if (1..=i64::from(u32::MAX)).contains(p.get_ref()) => {
                        Some(*p.get_ref() as u32)
                    }
                    Some(p) => {
                        return Err(err(
                            p.span(),
                            format!("pid = {}: not a process id", p.get_ref()),
                        ))
                    }
                };
                if pid.is_some() == o.pid_file.is_some() {
                    return Err(format!(
                        "{file}:{head}: [opensm]: give exactly one of pid-file (the running OpenSM's PID file) or pid"
                    ));
                }
                let pid_line = o
                    .pid
                    .as_ref()
                    .map(|p| line_of(text, p.span().start))
                    .unwrap_or_else(|| at(&o.pid_file));
                let sweep_timeout_s = match &o.sweep_timeout {
                    None => 10.0,
                    Some(t) if t.get_ref().is_finite() && (0.1..=600.0).contains(t.get_ref()) => {
                        *t.get_ref()
                    }
                    Some(t) => {
                        return Err(err(
                            t.span(),
                            format!(
                                "sweep-timeout = {}: must be 0.1 to 600 seconds",
                                t.get_ref()
                            ),
                        ))
                    }
                };
                let cc_sls = match &o.cc_sls {
                    None => ibcloud_qos::CcSls::All,
                    Some(c) => ibcloud_qos::CcSls::parse(c.get_ref()).ok_or_else(|| {
                        err(
                            c.span(),
                            format!("cc-sls = '{}': expected all or bulk", c.get_ref()),
                        )
                    })?,
                };
                let actuator = match o.actuator.as_ref().map(|a| a.get_ref().as_str()) {
                    None | Some("cc") => Actuator::Cc,
                    Some("vlarb") => Actuator::Vlarb,
                    Some("both") => Actuator::Both,
                    Some(x) => {
                        let a = o.actuator.as_ref().expect("present");
                        return Err(err(
                            a.span(),
                            format!("actuator = '{x}': expected cc, vlarb or both"),
                        ));
                    }
                };
                Some(OpenSmConfig {
                    conf: resolve(o.conf.get_ref()),
                    conf_line: line_of(text, o.conf.span().start),
                    pid_file: opt_path(&o.pid_file),
                    pid,
                    pid_line,
                    log: opt_path(&o.log),
                    sweep_timeout_s,
                    base: o
                        .base
                        .as_ref()
                        .map(|b| {
                            let s = b.get_ref();
                            if ibcloud_qos::Preset::by_name(s).is_some() {
                                s.clone()
                            } else {
                                resolve(s).display().to_string()
                            }
                        })
                        .unwrap_or_else(|| "stmax".into()),
                    base_line: at(&o.base),
                    cc_sls,
                    actuator,
                    actuator_line: at(&o.actuator),
                })
            }
        };
        Ok(Config {
            opensm,
            path: path.to_path_buf(),
            period_s,
            period_line,
            state_file: opt_path(&agent.state_file)
                .unwrap_or_else(|| PathBuf::from("/run/ibcloud-agent.state")),
            socket: opt_path(&agent.socket),
            dry_run: agent.dry_run,
            cgroup_root: opt_path(&agent.cgroup_root)
                .unwrap_or_else(|| PathBuf::from("/sys/fs/cgroup")),
            cgroup_version,
            cgroup_version_line,
            replay: opt_path(&agent.replay),
            log: opt_path(&agent.log),
            steps,
            vms,
            policy,
            policy_line,
            policy_keys,
        })
    }

    /// The line a policy's error is about: that of the `[policy]` key it
    /// names (as `` `key` ``, `key:` or `key[i]`), else the `[policy]`
    /// header.
    pub fn policy_line_of(&self, msg: &str) -> usize {
        self.policy_keys
            .iter()
            .filter(|(k, _)| {
                msg.contains(&format!("`{k}`"))
                    || msg.contains(&format!("{k}:"))
                    || msg.contains(&format!("{k} "))
                    || msg.contains(&format!("{k}["))
            })
            .max_by_key(|(k, _)| k.len())
            .map_or(self.policy_line, |(_, l)| *l)
    }

    /// `file:line: msg` for a problem at `line` (0 = no line).
    pub fn at(&self, line: usize, msg: impl std::fmt::Display) -> String {
        if line == 0 {
            format!("{}: {msg}", self.path.display())
        } else {
            format!("{}:{line}: {msg}", self.path.display())
        }
    }
}
