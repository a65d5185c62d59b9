//! The fabric actuator: QoS and congestion-control settings written as
//! OpenSM 3.3.23 configuration (ibcloud-qos's writer) into the opensm.conf
//! a running OpenSM was started with, then a reload of that OpenSM.
//!
//! Why SIGHUP is enough (OpenSM 3.3.23 source): `opensm/main.c`'s HUP
//! handler only sets a flag; the daemon loop then forces a heavy sweep
//! (`osm_opensm_sweep`). The heavy sweep in `opensm/osm_state_mgr.c`
//! (`do_sweep`) re-reads the file with `osm_subn_rescan_conf_files`
//! (`opensm/osm_subnet.c`), which re-parses every option whose entry in the
//! option table is marked updatable. The QoS options (`qos`, `qos_*`
//! and the per-class `qos_ca_*`/`qos_sw0_*`/… sets) and the
//! congestion-control options (`congestion_control`, every
//! `cc_sw_cong_setting_*`, `cc_ca_cong_setting_*`, `cc_cct`) are marked
//! updatable; `cc_key` and `cc_max_outstanding_mads` are not, so the
//! agent refuses settings that would change them ([`check_reloadable`]). The same
//! sweep then runs `osm_qos_setup` and `osm_congestion_control_setup`,
//! which send the new SL2VL/VLArb tables and the CC settings to every
//! port. So no restart is needed for anything the agent changes.
//!
//! What a reload cannot undo: the rescan re-initialises only the QoS
//! option sets before parsing; any other option missing from the file keeps
//! the value the daemon holds. Restoring an opensm.conf that names no CC
//! option therefore leaves the CC values the agent set in force until
//! OpenSM restarts (the summary says so).

use crate::config::OpenSmConfig;
use ibcloud_qos::Policy;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Is `key` an option this module manages (QoS or congestion control)?
///
/// ```
/// use ibcloud_agent::opensm::managed;
/// assert!(managed("qos_vlarb_low") && managed("cc_cct") && managed("max_op_vls"));
/// assert!(!managed("sweep_interval") && !managed("log_file"));
/// ```
pub fn managed(key: &str) -> bool {
    key == "qos"
        || key == "max_op_vls"
        || key == "congestion_control"
        || key.starts_with("qos_")
        || key.starts_with("cc_")
}

/// `original` without its QoS/CC option lines, then `policy`'s options.
pub fn compose(original: &str, policy: &Policy) -> Result<String, String> {
    let mut out = String::new();
    for line in original.lines() {
        let key = line
            .split('#')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .next();
        if key.is_some_and(managed) {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("# --- QoS / congestion control written by `ibcloud agent`; the original comes back when it stops ---\n");
    out.push_str(&ibcloud_qos::opensm::opensm_conf(policy)?);
    Ok(out)
}

/// Parses an OpenSM number (decimal or 0x-hex).
fn number(v: &str) -> Option<u64> {
    let v = v.trim();
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

/// The value of `key` in an opensm.conf text (the last one wins, as when
/// OpenSM reads it), or `default`.
fn conf_value(text: &str, key: &str, default: u64) -> u64 {
    text.lines()
        .rev()
        .filter_map(|l| {
            let l = l.split('#').next().unwrap_or("");
            let mut it = l.split_whitespace();
            (it.next() == Some(key)).then(|| it.next().and_then(number))?
        })
        .next()
        .unwrap_or(default)
}

/// OpenSM 3.3.23 reads `cc_key` and `cc_max_outstanding_mads` only at
/// start (not updatable in `osm_subnet.c`'s option table): settings that
/// change them cannot be applied by a reload. Defaults as OpenSM's
/// (`osm_subn_set_default_opt`: key 0, 500 MADs).
pub fn check_reloadable(original: &str, policy: &Policy) -> Result<(), String> {
    let Some(cc) = &policy.cc else {
        return Ok(());
    };
    for (key, want, default) in [
        ("cc_key", cc.cc_key, 0u64),
        (
            "cc_max_outstanding_mads",
            u64::from(cc.max_outstanding_mads),
            500,
        ),
    ] {
        let held = conf_value(original, key, default);
        if held != want {
            return Err(format!(
                "the settings need {key} {want:#x} but the running OpenSM holds {held:#x} (from its opensm.conf or \
                 its default), and OpenSM 3.3.23 reads {key} only at start: restart OpenSM with it, or give the \
                 base policy the same value"
            ));
        }
    }
    Ok(())
}

/// Writes `text` to `path` atomically (a temporary file in the same
/// directory, then rename), keeping the original's permissions.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.ibcloud-agent.{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("conf"),
        std::process::id()
    ));
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    if let Ok(m) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, m.permissions());
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot replace {}: {e}", path.display())
    })
}

/// Is `pid` an OpenSM process (alive, command name `opensm`)? The error
/// says what it is instead.
pub fn opensm_alive(pid: u32) -> Result<(), String> {
    if !crate::state::alive(pid) {
        return Err(format!("no process {pid} is running"));
    }
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    if comm.trim() != "opensm" {
        return Err(format!("process {pid} is '{}', not opensm", comm.trim()));
    }
    Ok(())
}

/// Sends SIGHUP to `pid`.
pub fn sighup(pid: u32) -> Result<(), String> {
    // `unsafe` is forbidden in this workspace, so the signal goes through
    // kill(1) rather than libc.
    let st = std::process::Command::new("kill")
        .args(["-s", "HUP", &pid.to_string()])
        .status()
        .map_err(|e| format!("cannot run kill(1): {e}"))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("kill -HUP {pid} failed ({st})"))
    }
}

/// Lines saying "SUBNET UP" in OpenSM's log so far.
fn subnet_ups(log: &Path) -> usize {
    std::fs::read_to_string(log).map_or(0, |t| t.matches("SUBNET UP").count())
}

/// What one push did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Push {
    /// The file changed and OpenSM was signalled (false: same settings, or
    /// dry run).
    pub reloaded: bool,
    /// Milliseconds from the decision to the end of OpenSM's sweep (when
    /// `[opensm] log` is given).
    pub applied_ms: Option<f64>,
}

/// Summary of the fabric actuator for the run's report.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct FabricSummary {
    /// opensm.conf managed.
    pub conf: String,
    /// OpenSM's PID.
    pub pid: u32,
    /// Reloads sent (restore excluded).
    pub reloads: u64,
    /// Pushes that repeated the settings in force (nothing sent).
    pub unchanged: u64,
    /// Mean / largest decision-to-sweep-done time (ms), when measured.
    pub applied_mean_ms: Option<f64>,
    /// See `applied_mean_ms`.
    pub applied_max_ms: Option<f64>,
    /// The original file was written back (and OpenSM reloaded).
    pub restored: bool,
    /// What the restore cannot undo.
    pub note: Option<String>,
}

/// The opensm.conf + reload actuator. See the module docs.
#[derive(Debug)]
pub struct Emitter {
    cfg: OpenSmConfig,
    original: String,
    pid: u32,
    last: Option<String>,
    wrote: bool,
    applied: Vec<f64>,
    /// Summary so far.
    pub summary: FabricSummary,
}

impl Emitter {
    /// What the state file keeps so a crashed run's opensm.conf comes back.
    pub fn saved(&self) -> crate::state::SavedConf {
        crate::state::SavedConf {
            path: self.cfg.conf.clone(),
            original: self.original.clone(),
            pid: self.pid,
        }
    }
}

impl Emitter {
    /// Checks the file, its directory and the OpenSM process. Errors are
    /// bad input (`file:line: problem` through `at`).
    pub fn open(
        cfg: &OpenSmConfig,
        dry_run: bool,
        at: &dyn Fn(usize, String) -> String,
    ) -> Result<Self, String> {
        let original = std::fs::read_to_string(&cfg.conf).map_err(|e| {
            at(
                cfg.conf_line,
                format!("[opensm] conf: cannot read {}: {e}", cfg.conf.display()),
            )
        })?;
        if !dry_run {
            // The atomic write needs a new file beside it: try one now.
            let probe: PathBuf = cfg
                .conf
                .with_file_name(format!(".ibcloud-agent-probe.{}", std::process::id()));
            std::fs::write(&probe, "")
                .and_then(|_| std::fs::remove_file(&probe))
                .map_err(|e| {
                    at(
                        cfg.conf_line,
                        format!(
                            "[opensm] conf: {} cannot be replaced (its directory is not writable: {e})",
                            cfg.conf.display()
                        ),
                    )
                })?;
            let meta =
                std::fs::metadata(&cfg.conf).map_err(|e| at(cfg.conf_line, e.to_string()))?;
            if meta.permissions().readonly() {
                return Err(at(
                    cfg.conf_line,
                    format!("[opensm] conf: {} is read-only", cfg.conf.display()),
                ));
            }
        }
        let pid = match (&cfg.pid_file, cfg.pid) {
            (_, Some(p)) => p,
            (Some(f), None) => {
                let t = std::fs::read_to_string(f).map_err(|e| {
                    at(
                        cfg.pid_line,
                        format!("[opensm] pid-file: cannot read {}: {e}", f.display()),
                    )
                })?;
                t.trim().parse::<u32>().map_err(|_| {
                    at(
                        cfg.pid_line,
                        format!(
                            "[opensm] pid-file: {} holds '{}', not a process id",
                            f.display(),
                            t.trim()
                        ),
                    )
                })?
            }
            (None, None) => return Err(at(cfg.pid_line, "[opensm]: no pid or pid-file".into())),
        };
        opensm_alive(pid).map_err(|e| {
            at(
                cfg.pid_line,
                format!("[opensm]: no running OpenSM to reload: {e}"),
            )
        })?;
        Ok(Self {
            summary: FabricSummary {
                conf: cfg.conf.display().to_string(),
                pid,
                ..Default::default()
            },
            cfg: cfg.clone(),
            original,
            pid,
            last: None,
            wrote: false,
            applied: Vec::new(),
        })
    }

    /// Writes `policy`'s options and reloads OpenSM, unless they equal
    /// what is in force. `decided` is when the controller decided (for the
    /// decision-to-applied time).
    pub fn push(
        &mut self,
        policy: &Policy,
        dry_run: bool,
        decided: Instant,
    ) -> Result<Push, String> {
        check_reloadable(&self.original, policy)?;
        let text = compose(&self.original, policy)?;
        if self.last.as_deref() == Some(text.as_str()) {
            self.summary.unchanged += 1;
            return Ok(Push::default());
        }
        self.last = Some(text.clone());
        if dry_run {
            return Ok(Push::default());
        }
        opensm_alive(self.pid).map_err(|e| format!("OpenSM went away: {e}"))?;
        let before = self.cfg.log.as_deref().map(subnet_ups);
        self.wrote = true;
        write_atomic(&self.cfg.conf, &text)?;
        sighup(self.pid)?;
        self.summary.reloads += 1;
        let applied_ms = match (&self.cfg.log, before) {
            (Some(log), Some(n)) => {
                self.wait_sweep(log, n)?;
                let ms = decided.elapsed().as_secs_f64() * 1e3;
                self.applied.push(ms);
                let n = self.applied.len() as f64;
                self.summary.applied_mean_ms = Some(self.applied.iter().sum::<f64>() / n);
                self.summary.applied_max_ms = self.applied.iter().copied().reduce(f64::max);
                Some(ms)
            }
            _ => None,
        };
        Ok(Push {
            reloaded: true,
            applied_ms,
        })
    }

    fn wait_sweep(&self, log: &Path, before: usize) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs_f64(self.cfg.sweep_timeout_s);
        while subnet_ups(log) <= before {
            if Instant::now() >= deadline {
                return Err(format!(
                    "OpenSM (pid {}) signalled but no new SUBNET UP in {} within {} s",
                    self.pid,
                    log.display(),
                    self.cfg.sweep_timeout_s
                ));
            }
            opensm_alive(self.pid).map_err(|e| format!("OpenSM died during the sweep: {e}"))?;
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Checks at start that `policy` (the settings the policy starts from)
    /// can be applied by a reload; the error names the `base` line.
    pub fn check_base(
        &self,
        policy: &Policy,
        at: &dyn Fn(usize, String) -> String,
    ) -> Result<(), String> {
        check_reloadable(&self.original, policy)
            .map_err(|e| at(self.cfg.base_line, format!("[opensm] base: {e}")))
    }

    /// Writes the original file back and reloads OpenSM (nothing when
    /// nothing was written).
    pub fn restore(&mut self) -> Result<(), String> {
        if !self.wrote {
            return Ok(());
        }
        write_atomic(&self.cfg.conf, &self.original)?;
        self.wrote = false;
        let keeps_cc = !self.original.lines().any(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|k| k == "congestion_control" || k.starts_with("cc_"))
        }) && self
            .last
            .as_deref()
            .is_some_and(|t| t.contains("congestion_control TRUE"));
        if keeps_cc {
            self.summary.note = Some(
                "the original opensm.conf names no congestion-control option, and OpenSM's reload keeps the \
                 values it holds for options absent from the file: the CC settings the agent pushed stay in \
                 force until OpenSM restarts"
                    .into(),
            );
        }
        if opensm_alive(self.pid).is_ok() {
            let before = self.cfg.log.as_deref().map(subnet_ups);
            sighup(self.pid)?;
            if let (Some(log), Some(n)) = (&self.cfg.log, before) {
                self.wait_sweep(log, n)?;
            }
        } else {
            self.summary.note = Some(format!(
                "OpenSM (pid {}) is gone: the original opensm.conf is back on disk for its next start",
                self.pid
            ));
        }
        self.summary.restored = true;
        Ok(())
    }
}
