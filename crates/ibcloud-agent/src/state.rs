//! Crash safety: the state file holding every cgroup's limit (and the
//! opensm.conf the agent rewrites) as it was before the agent's first write, the restore that puts them back, and
//! the guardian process that restores them when the agent dies without
//! doing so itself.
//!
//! The file is written atomically (temp file, fsync, rename) before any
//! quota is touched and removed only after a successful restore, so at
//! every instant either the file exists and names the originals, or the
//! agent has written nothing (or already restored). A state file found at
//! start-up is a crashed run's: it is restored first (unless its agent is
//! still alive).

use crate::cgroup::{Cgroup, Limit, Version};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// One cgroup's original limit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Saved {
    /// VM name (for messages).
    pub vm: String,
    /// Hierarchy version.
    pub version: Version,
    /// cpu-hierarchy directory.
    pub cpu_dir: PathBuf,
    /// cpuacct directory (v1) or the same (v2).
    pub acct_dir: PathBuf,
    /// The limit before the agent's first write.
    pub original: Limit,
}

impl Saved {
    fn cgroup(&self) -> Cgroup {
        Cgroup {
            version: self.version,
            cpu_dir: self.cpu_dir.clone(),
            acct_dir: self.acct_dir.clone(),
        }
    }
}

/// Contents of the state file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// PID of the agent that wrote it.
    pub pid: u32,
    /// The originals.
    pub cgroups: Vec<Saved>,
    /// The opensm.conf the agent rewrites (DRX hardware policies, Sphinx),
    /// as it was; `None` when the agent drives no OpenSM.
    #[serde(default)]
    pub opensm: Option<SavedConf>,
}

/// An opensm.conf as it was before the agent's first write.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedConf {
    /// The file.
    pub path: PathBuf,
    /// Its text.
    pub original: String,
    /// The OpenSM to reload after writing it back.
    pub pid: u32,
}

/// Writes `state` to `path` atomically (temp + fsync + rename).
pub fn save(path: &Path, state: &State) -> Result<(), String> {
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    let text = serde_json::to_string_pretty(state).map_err(|e| e.to_string())?;
    let mut f = fs::File::create(&tmp)
        .map_err(|e| format!("cannot create state file {}: {e}", tmp.display()))?;
    f.write_all(text.as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|e| format!("cannot write state file {}: {e}", tmp.display()))?;
    fs::rename(&tmp, path)
        .map_err(|e| format!("cannot rename {} to {}: {e}", tmp.display(), path.display()))
}

/// Reads a state file (`None` if there is none).
pub fn load(path: &Path) -> Result<Option<State>, String> {
    match fs::read_to_string(path) {
        Ok(s) => serde_json::from_str(&s)
            .map(Some)
            .map_err(|e| format!("state file {} is corrupt: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read state file {}: {e}", path.display())),
    }
}

/// Is process `pid` alive (it has a `/proc` entry that is not a zombie)?
pub fn alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|st| st != "Z" && st != "X"),
        Err(_) => false,
    }
}

/// What a restore did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Restored {
    /// VMs whose limit was written back.
    pub restored: Vec<String>,
    /// (VM, error) for those that could not be (e.g. the cgroup is gone).
    pub failed: Vec<(String, String)>,
}

/// Writes every saved limit back, then removes the state file if all
/// succeeded (a cgroup that no longer exists counts as done: nothing is
/// left capped). `Ok(None)` when there was no state file.
pub fn restore(path: &Path) -> Result<Option<Restored>, String> {
    let Some(state) = load(path)? else {
        return Ok(None);
    };
    let mut out = Restored::default();
    for s in &state.cgroups {
        if !s.cpu_dir.is_dir() {
            out.restored.push(s.vm.clone());
            continue;
        }
        match s.cgroup().write_limit(&s.original) {
            Ok(()) => out.restored.push(s.vm.clone()),
            Err(e) => out.failed.push((s.vm.clone(), e)),
        }
    }
    if let Some(c) = &state.opensm {
        // Written back whatever became of OpenSM; reloaded if it runs.
        let name = format!("opensm.conf ({})", c.path.display());
        match crate::opensm::write_atomic(&c.path, &c.original) {
            Ok(()) => {
                if crate::opensm::opensm_alive(c.pid).is_ok() {
                    match crate::opensm::sighup(c.pid) {
                        Ok(()) => out.restored.push(name),
                        Err(e) => out.failed.push((name, format!("written back, but {e}"))),
                    }
                } else {
                    out.restored.push(format!(
                        "{name}, not reloaded: OpenSM pid {} is gone",
                        c.pid
                    ));
                }
            }
            Err(e) => out.failed.push((name, e)),
        }
    }
    if out.failed.is_empty() {
        fs::remove_file(path).map_err(|e| {
            format!(
                "restored, but cannot remove state file {}: {e}",
                path.display()
            )
        })?;
    }
    Ok(Some(out))
}

/// The line the agent writes to its guardian before a clean exit.
pub const CLEAN_EXIT: &str = "clean-exit";

/// The guardian's body: reads `pipe` (the agent holds the write end) until
/// EOF; if the agent did not announce a clean exit first, restores from
/// `state_file` when the file still belongs to `agent_pid`. Returns what
/// was restored (`None` = clean exit or nothing to do).
pub fn guard(
    mut pipe: impl Read,
    state_file: &Path,
    agent_pid: u32,
) -> Result<Option<Restored>, String> {
    let mut buf = Vec::new();
    // EOF comes when the agent's last write end closes: exit or kill -9.
    let _ = pipe.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    if text.lines().any(|l| l.trim() == CLEAN_EXIT) {
        return Ok(None);
    }
    match load(state_file)? {
        Some(st) if st.pid == agent_pid => restore(state_file),
        _ => Ok(None),
    }
}
