//! The SM as a daemon: a heavy sweep at start, then light sweeps every
//! interval (a change starts a heavy sweep), SMInfo queries answered while
//! idle, and a local control socket (Unix stream, one command line in, one
//! JSON line out):
//!
//! | command | answer |
//! |---|---|
//! | `status` | state, sweeps, uptime, the last heavy sweep's report |
//! | `counters` | SMPs sent by kind, retries, timeouts, …; `sa`: the SA's requests, errors and RMPP transfers |
//! | `sweep` | runs a heavy sweep now and returns its report |
//! | `light` | runs a light sweep now (and a heavy one if it finds a change) |
//! | `migrate VM HYP [itrc\|ftree-minrc\|full] [partial] [check=refuse\|report\|off]` | live VM migration on a vSwitch fabric, after the transition (deadlock) check; a refused plan answers `ok: false` with the report |
//! | `stop` | stops the SM after answering |
//!
//! Everything runs on one thread: a command waits for the sweep in
//! progress, so answers never describe a half-programmed fabric.

use crate::error::SmError;
use crate::sm::{SubnetManager, SweepReport};
use crate::transport::Transport;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How the daemon runs.
#[derive(Clone, Debug)]
pub struct DaemonOptions {
    /// Control socket path (removed and re-created at start, removed at stop).
    pub socket: Option<PathBuf>,
    /// Time between light sweeps (OpenSM's `sweep_interval`, 10 s).
    pub sweep_interval: Duration,
    /// Stop after the first heavy sweep (OpenSM's `-o`).
    pub once: bool,
}

impl Default for DaemonOptions {
    fn default() -> Self {
        Self {
            socket: None,
            sweep_interval: Duration::from_secs(10),
            once: false,
        }
    }
}

/// What the daemon did, returned when it stops.
#[derive(Debug, serde::Serialize)]
pub struct DaemonSummary {
    /// The first heavy sweep (bring-up).
    pub bring_up: SweepReport,
    /// Heavy sweeps, bring-up included.
    pub heavy_sweeps: u64,
    /// Light sweeps.
    pub light_sweeps: u64,
    /// All counters.
    pub counters: crate::mads::Counters,
    /// Why it stopped.
    pub stopped_by: String,
}

/// A JSON status of the SM.
pub fn status<T: Transport>(sm: &SubnetManager<T>) -> Value {
    json!({
        "state": format!("{:?}", sm.state),
        "engine": sm.config.engine,
        "heavy_sweeps": sm.heavy_sweeps,
        "light_sweeps": sm.light_sweeps,
        "uptime_seconds": sm.uptime(),
        "smps_sent": sm.mads.counters.total_sent,
        "last_sweep": sm.last_report,
        "last_migration": sm.last_migration,
    })
}

fn handle<T: Transport>(sm: &mut SubnetManager<T>, line: &str) -> (Value, bool) {
    let cmd = line.trim();
    let ok = |v: Value| (json!({"ok": true, "result": v}), false);
    let err = |e: String| (json!({"ok": false, "error": e}), false);
    match cmd {
        "status" => ok(status(sm)),
        "counters" => {
            let mut v = serde_json::to_value(&sm.mads.counters).unwrap_or(Value::Null);
            // The SA's own counters (requests, errors, RMPP transfers).
            if let (Some(map), Some(sa)) = (v.as_object_mut(), sm.mads.sa.as_ref()) {
                map.insert(
                    "sa".into(),
                    serde_json::to_value(&sa.stats).unwrap_or(Value::Null),
                );
            }
            ok(v)
        }
        "sweep" => match sm.heavy_sweep("requested over the control socket") {
            Ok(r) => ok(serde_json::to_value(r).unwrap_or(Value::Null)),
            Err(e) => err(e.to_string()),
        },
        "light" => match sm.light_sweep() {
            None => ok(json!({"changed": false})),
            Some(why) => match sm.heavy_sweep(&why) {
                Ok(r) => ok(json!({"changed": true, "reason": why, "heavy_sweep": r})),
                Err(e) => err(e.to_string()),
            },
        },
        "stop" => (json!({"ok": true, "result": "stopping"}), true),
        c if c.starts_with("migrate ") => {
            const USAGE: &str = "usage: migrate VM HYPERVISOR [itrc|ftree-minrc|full] [partial] [check=refuse|report|off]";
            let words: Vec<&str> = c.split_whitespace().collect();
            if words.len() < 3 {
                return err(USAGE.into());
            }
            let mut method = ibcloud_vswitch::Method::parse("itrc").expect("itrc is a method");
            let mut partial = false;
            let mut policy = crate::migrate::TransitionPolicy::default();
            for w in &words[3..] {
                if *w == "partial" {
                    partial = true;
                } else if let Some(p) = w.strip_prefix("check=") {
                    match crate::migrate::TransitionPolicy::parse(p) {
                        Ok(p) => policy = p,
                        Err(e) => return err(format!("{e}; {USAGE}")),
                    }
                } else {
                    match ibcloud_vswitch::Method::parse(w) {
                        Ok(m) => method = m,
                        Err(e) => return err(format!("{e}; {USAGE}")),
                    }
                }
            }
            match sm.migrate(words[1], words[2], method, partial, policy) {
                Ok(r) => match &r.refused {
                    Some(why) => (
                        json!({"ok": false, "error": why, "result": serde_json::to_value(&r).unwrap_or(Value::Null)}),
                        false,
                    ),
                    None => ok(serde_json::to_value(r).unwrap_or(Value::Null)),
                },
                Err(e) => err(e.to_string()),
            }
        }
        other => err(format!(
            "unknown command '{other}'; known: status, counters, sweep, light, migrate, stop"
        )),
    }
}

fn serve_one<T: Transport>(sm: &mut SubnetManager<T>, stream: UnixStream) -> bool {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return false,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return false;
    }
    let (answer, stop) = handle(sm, &line);
    let mut w = stream;
    let _ = writeln!(w, "{answer}");
    stop
}

/// Runs the SM until `stop` is asked over the socket, `should_stop` says so
/// (checked about every 100 ms) or, with `once`, after the bring-up.
pub fn run_daemon<T: Transport>(
    sm: &mut SubnetManager<T>,
    options: &DaemonOptions,
    should_stop: &mut dyn FnMut() -> bool,
) -> Result<DaemonSummary, SmError> {
    let listener = match &options.socket {
        Some(p) => {
            let _ = std::fs::remove_file(p);
            let l = UnixListener::bind(p).map_err(|e| SmError::Io {
                path: p.display().to_string(),
                source: e,
            })?;
            l.set_nonblocking(true).map_err(|e| SmError::Io {
                path: p.display().to_string(),
                source: e,
            })?;
            Some(l)
        }
        None => None,
    };
    let bring_up = sm.heavy_sweep("bring-up")?;
    let mut stopped_by = String::from("once");
    if !options.once {
        let mut next_light = Instant::now() + options.sweep_interval;
        loop {
            if should_stop() {
                stopped_by = "signal".into();
                break;
            }
            let mut stop = false;
            if let Some(l) = &listener {
                while let Ok((stream, _)) = l.accept() {
                    if serve_one(sm, stream) {
                        stop = true;
                        break;
                    }
                }
            }
            if stop {
                stopped_by = "control socket".into();
                break;
            }
            if Instant::now() >= next_light || !sm.mads.pending_traps.is_empty() {
                if let Some(why) = sm.light_sweep() {
                    // A failed heavy sweep is recorded in the next status; the daemon goes on.
                    let _ = sm.heavy_sweep(&why);
                }
                next_light = Instant::now() + options.sweep_interval;
            }
            sm.mads.idle(Duration::from_millis(50));
        }
    }
    if let Some(p) = &options.socket {
        let _ = std::fs::remove_file(p);
    }
    Ok(DaemonSummary {
        bring_up,
        heavy_sweeps: sm.heavy_sweeps,
        light_sweeps: sm.light_sweeps,
        counters: sm.mads.counters.clone(),
        stopped_by,
    })
}
