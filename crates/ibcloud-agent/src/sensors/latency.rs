//! Per-request latency reported by the applications (IOShares' latency
//! agent) over a local Unix stream socket.
//!
//! Protocol: one report per line, `VM LATENCY_US\n` — the VM's name as in
//! AGENT.toml, one space (or more), the latency in microseconds (a finite,
//! non-negative decimal number). A client may keep its connection open
//! and send any number of lines. Lines longer than 256 bytes, with the
//! wrong number of fields, an unknown VM, a VM not configured as a
//! reporter or a bad number are *malformed*: counted, the first few per
//! interval logged, never fatal.
//!
//! ```text
//! $ printf 'vm1 212.5\nvm1 230\n' | socat - UNIX-CONNECT:/run/ibcloud-agent.sock
//! ```
//!
//! Control line (Sphinx, G R16): `!target GROUP RATIO` changes LP group
//! `GROUP`'s target at the next step (`RATIO` as in the scenario: `1:4`,
//! `0.25`, `fair`, `latency-first`, `throughput-first`). A bad one is
//! malformed like a bad report; a policy without LP groups refuses it.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread;

/// Longest accepted line (bytes, newline excluded).
pub const MAX_LINE: usize = 256;

/// Reports collected since the last [`LatencyInbox::take`].
#[derive(Debug, Default)]
struct Inbox {
    per_vm: Vec<Vec<f64>>,
    targets: Vec<(usize, f64)>,
    malformed: u64,
    errors: Vec<String>,
}

/// Where the listener threads put the reports.
#[derive(Clone, Debug)]
pub struct LatencyInbox {
    inner: Arc<Mutex<Inbox>>,
    index: Arc<HashMap<String, (usize, bool)>>,
}

/// What [`LatencyInbox::take`] returns: one latency list per VM, the
/// malformed count and up to 5 of their messages.
#[derive(Debug, Default, PartialEq)]
pub struct Taken {
    /// Latencies (µs) per VM.
    pub per_vm: Vec<Vec<f64>>,
    /// `!target` requests (group, ratio), in arrival order.
    pub targets: Vec<(usize, f64)>,
    /// Malformed reports in the interval.
    pub malformed: u64,
    /// The first few malformed reports, explained.
    pub errors: Vec<String>,
}

impl LatencyInbox {
    /// An inbox for `vms` (name, is a latency reporter).
    pub fn new(vms: &[(String, bool)]) -> Self {
        let index = vms
            .iter()
            .enumerate()
            .map(|(i, (n, r))| (n.clone(), (i, *r)))
            .collect();
        Self {
            inner: Arc::new(Mutex::new(Inbox {
                per_vm: vec![Vec::new(); vms.len()],
                ..Default::default()
            })),
            index: Arc::new(index),
        }
    }

    /// Parses one report line; Ok((vm index, µs)) or why it is malformed.
    pub fn parse(&self, line: &str) -> Result<(usize, f64), String> {
        if line.len() > MAX_LINE {
            return Err(format!("line of {} bytes (limit {MAX_LINE})", line.len()));
        }
        let mut it = line.split_whitespace();
        let (Some(vm), Some(v), None) = (it.next(), it.next(), it.next()) else {
            return Err(format!("'{}': expected 'VM LATENCY_US'", line.trim()));
        };
        let &(i, reporter) = self
            .index
            .get(vm)
            .ok_or_else(|| format!("'{}': unknown VM '{vm}'", line.trim()))?;
        if !reporter {
            return Err(format!(
                "'{}': VM '{vm}' is not a latency reporter (set latency = true)",
                line.trim()
            ));
        }
        let us: f64 = v
            .parse()
            .map_err(|_| format!("'{}': '{v}' is not a number", line.trim()))?;
        if !us.is_finite() || us < 0.0 {
            return Err(format!(
                "'{}': latency must be finite and >= 0",
                line.trim()
            ));
        }
        Ok((i, us))
    }

    /// Parses a `!target GROUP RATIO` control line.
    pub fn parse_target(line: &str) -> Result<(usize, f64), String> {
        let mut it = line.split_whitespace().skip(1);
        let (Some(g), Some(r), None) = (it.next(), it.next(), it.next()) else {
            return Err(format!("'{}': expected '!target GROUP RATIO'", line.trim()));
        };
        let g: usize = g
            .parse()
            .map_err(|_| format!("'{}': group '{g}' is not an index", line.trim()))?;
        let r = ibcloud_control::sphinx::policy_ratio(r)
            .map_err(|e| format!("'{}': {e}", line.trim()))?;
        Ok((g, r))
    }

    /// Files one line (what a connection thread does per line).
    pub fn push_line(&self, line: &str) {
        if line.split_whitespace().next() == Some("!target") && line.len() <= MAX_LINE {
            let r = Self::parse_target(line);
            let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            match r {
                Ok(t) => g.targets.push(t),
                Err(e) => {
                    g.malformed += 1;
                    if g.errors.len() < 5 {
                        g.errors.push(e);
                    }
                }
            }
            return;
        }
        let r = self.parse(line);
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        match r {
            Ok((i, us)) => g.per_vm[i].push(us),
            Err(e) => {
                g.malformed += 1;
                if g.errors.len() < 5 {
                    g.errors.push(e);
                }
            }
        }
    }

    /// Takes everything reported since the previous call.
    pub fn take(&self) -> Taken {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let n = g.per_vm.len();
        Taken {
            per_vm: std::mem::replace(&mut g.per_vm, vec![Vec::new(); n]),
            targets: std::mem::take(&mut g.targets),
            malformed: std::mem::take(&mut g.malformed),
            errors: std::mem::take(&mut g.errors),
        }
    }

    /// Reads `stream` line by line until it closes (bounded lines: an
    /// over-long line is counted once and skipped to its newline).
    pub fn serve(&self, stream: impl Read) {
        let mut r = BufReader::new(stream);
        let mut buf = Vec::with_capacity(64);
        loop {
            buf.clear();
            match (&mut r)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut buf)
            {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if buf.last() != Some(&b'\n') && buf.len() > MAX_LINE {
                self.push_line(&"x".repeat(MAX_LINE + 1));
                // discard the rest of the line
                let mut rest = Vec::new();
                if r.read_until(b'\n', &mut rest).unwrap_or(0) == 0 {
                    return;
                }
                continue;
            }
            let line = String::from_utf8_lossy(&buf);
            let line = line.trim_end_matches(['\n', '\r']);
            if !line.trim().is_empty() {
                self.push_line(line);
            }
        }
    }
}

/// The listening socket; removed when dropped.
#[derive(Debug)]
pub struct LatencySocket {
    path: PathBuf,
}

impl LatencySocket {
    /// Binds `path` and serves each connection on its own thread. A stale
    /// socket file (nobody listening) is replaced; a live one is an error.
    pub fn bind(path: &Path, inbox: LatencyInbox) -> Result<Self, String> {
        if path.exists() {
            if UnixStream::connect(path).is_ok() {
                return Err(format!(
                    "latency socket {} is in use by another process (another agent?)",
                    path.display()
                ));
            }
            std::fs::remove_file(path)
                .map_err(|e| format!("cannot remove stale socket {}: {e}", path.display()))?;
        }
        let listener = UnixListener::bind(path)
            .map_err(|e| format!("cannot listen on latency socket {}: {e}", path.display()))?;
        thread::Builder::new()
            .name("latency-accept".into())
            .spawn(move || {
                for conn in listener.incoming().flatten() {
                    let inbox = inbox.clone();
                    let _ = thread::Builder::new()
                        .name("latency-conn".into())
                        .spawn(move || inbox.serve(conn));
                }
            })
            .map_err(|e| format!("cannot start the latency listener: {e}"))?;
        Ok(Self {
            path: path.to_path_buf(),
        })
    }
}

impl Drop for LatencySocket {
    fn drop(&mut self) {
        // The accept thread stays blocked in accept(); removing the path
        // stops new clients, and the thread ends with the process.
        let _ = std::fs::remove_file(&self.path);
    }
}
