//! The control loop: every period read the sensors into one
//! [`VmSample`] per VM, step the policy, write the quotas it asks for (or,
//! in dry-run, only log them), and log every VM's observation and cap as a
//! JSON line. Whatever ends the loop — the caller's stop request, the step
//! limit, the end of a replay feed, or an error — the original limits are
//! restored before returning.

use crate::cgroup::{detect, Cgroup, Throttling};
use crate::config::Config;
use crate::opensm::{Emitter, FabricSummary};
use crate::policies::{AgentPolicy, Plain};
use crate::sensors::ib::IbSensor;
use crate::sensors::latency::{LatencyInbox, LatencySocket};
use crate::sensors::replay::Replay;
use crate::sensors::CpuMeter;
use crate::state::{self, Restored, Saved, State};
use crate::AgentError;
use ibcloud_control::capping::{CapPolicy, VmSample};
use serde::Serialize;
use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// Options the command line adds to the configuration.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Force dry-run on.
    pub dry_run: bool,
    /// Override `[agent] steps`.
    pub steps: Option<u64>,
    /// Override `[agent] log`.
    pub log: Option<std::path::PathBuf>,
    /// Guardian command (the agent appends the state file and its PID and
    /// feeds it a pipe on stdin). `None` = no guardian.
    pub guardian: Option<Vec<String>>,
}

/// What a run did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    /// Policy name.
    pub policy: String,
    /// Control steps taken.
    pub steps: u64,
    /// Cap changes written (or, in dry-run, that would have been).
    pub changes: u64,
    /// Dry run?
    pub dry_run: bool,
    /// cgroup version used.
    pub cgroup_version: String,
    /// Malformed latency reports received.
    pub malformed_reports: u64,
    /// Longest time from a step's complete observations to its last quota
    /// write (ms; steps that changed a cap; in a dry run, to the decision).
    pub caps_written_max_ms: Option<f64>,
    /// Why the loop ended (`stopped`, `steps`, `replay-end`).
    pub ended: String,
    /// A stale state file restored at start-up.
    pub recovered: Option<Restored>,
    /// The restore at exit.
    pub restored: Option<Restored>,
    /// The policy's report.
    pub report: serde_json::Value,
    /// The OpenSM actuator (DRX hardware policies, Sphinx).
    pub fabric: Option<FabricSummary>,
}

/// One line of the action log.
#[derive(Debug, Serialize)]
struct LogLine<'a> {
    t: f64,
    interval_s: f64,
    step: u64,
    vm: &'a str,
    bytes: u64,
    requests: u64,
    cpu_pct: f64,
    latencies: usize,
    latency_mean_us: Option<f64>,
    cap_before: u32,
    cap: u32,
    changed: bool,
    dry_run: bool,
    nr_periods: u64,
    nr_throttled: u64,
    throttled_ns: u64,
    /// The policy's own record of this VM at this step, when it made one
    /// (what it judged, the price in force, the balance left).
    policy_observed: Option<f64>,
    price: Option<f64>,
    balance: Option<f64>,
    /// The policy's own fields (DRX: caps, events; Sphinx: PL, LP,
    /// price, resource, delay) and the fabric push of the step.
    #[serde(flatten)]
    extra: serde_json::Map<String, serde_json::Value>,
}

/// Runs policy `kind` (built with `[policy]`) until `should_stop` says so.
pub fn run(
    cfg: &Config,
    kind: &str,
    opts: &RunOptions,
    should_stop: &mut dyn FnMut() -> bool,
) -> Result<Summary, AgentError> {
    let policy = crate::policies::build(kind, cfg).map_err(|e| {
        if e.starts_with(&cfg.path.display().to_string()) {
            AgentError::Input(e)
        } else {
            AgentError::Input(cfg.at(cfg.policy_line_of(&e), format!("policy '{kind}': {e}")))
        }
    })?;
    run_agent(cfg, policy, opts, should_stop)
}

/// Restores from the configuration's state file (`ibcloud agent
/// --restore`); `Ok(None)` when there was nothing to restore.
pub fn restore_from(cfg: &Config) -> Result<Option<Restored>, AgentError> {
    if let Some(st) = state::load(&cfg.state_file).map_err(AgentError::Runtime)? {
        if st.pid != std::process::id() && state::alive(st.pid) {
            return Err(AgentError::Input(format!(
                "the agent that wrote {} (pid {}) is still running: stop it (SIGTERM) instead",
                cfg.state_file.display(),
                st.pid
            )));
        }
    }
    let r = state::restore(&cfg.state_file).map_err(AgentError::Runtime)?;
    check_restored(&r)?;
    Ok(r)
}

fn check_restored(r: &Option<Restored>) -> Result<(), AgentError> {
    if let Some(r) = r {
        if !r.failed.is_empty() {
            let msg: Vec<String> = r.failed.iter().map(|(v, e)| format!("{v}: {e}")).collect();
            return Err(AgentError::Runtime(format!(
                "could not restore the original CPU limits ({}); the state file is kept, retry with --restore",
                msg.join("; ")
            )));
        }
    }
    Ok(())
}

struct Guardian {
    child: Child,
    pipe: Option<ChildStdin>,
}

impl Guardian {
    fn start(cmd: &[String], cfg: &Config) -> Result<Self, String> {
        let (prog, args) = cmd.split_first().ok_or("empty guardian command")?;
        use std::os::unix::process::CommandExt;
        let mut child = Command::new(prog)
            .args(args)
            .arg(&cfg.state_file)
            .arg(std::process::id().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            // its own process group: a terminal's Ctrl-C reaches the agent
            // (which restores) but not the guardian, which must outlive it
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start the guardian '{}': {e}", cmd.join(" ")))?;
        let pipe = child.stdin.take();
        Ok(Self { child, pipe })
    }

    /// Tells the guardian the agent restored everything, then reaps it.
    fn finish(mut self, clean: bool) {
        if let Some(mut p) = self.pipe.take() {
            if clean {
                let _ = writeln!(p, "{}", state::CLEAN_EXIT);
            }
        }
        let _ = self.child.wait();
    }
}

/// Per-VM live sensors.
struct Live {
    cgroup: Cgroup,
    cpu: CpuMeter,
    ib: Option<IbSensor>,
}

/// Runs an already built capping policy (tests inject their own).
pub fn run_policy(
    cfg: &Config,
    policy: Box<dyn CapPolicy>,
    opts: &RunOptions,
    should_stop: &mut dyn FnMut() -> bool,
) -> Result<Summary, AgentError> {
    run_agent(cfg, Box::new(Plain(policy)), opts, should_stop)
}

/// Runs an already built agent policy (capping, DRX, Sphinx).
pub fn run_agent(
    cfg: &Config,
    mut policy: Box<dyn AgentPolicy>,
    opts: &RunOptions,
    should_stop: &mut dyn FnMut() -> bool,
) -> Result<Summary, AgentError> {
    let dry_run = cfg.dry_run || opts.dry_run;
    let period_s = check_period(cfg, policy.as_ref())?;
    let mut emitter = match (&cfg.opensm, policy.needs_fabric()) {
        (None, true) => {
            return Err(AgentError::Input(cfg.at(
                cfg.policy_line,
                format!(
                    "policy '{}' pushes QoS / congestion-control settings through OpenSM: add an [opensm] \
                     table (conf = the running OpenSM's opensm.conf, pid-file)",
                    policy.name()
                ),
            )))
        }
        (Some(o), true) => {
            let em = Emitter::open(o, dry_run, &|l, m| cfg.at(l, m)).map_err(AgentError::Input)?;
            if let Some(b) = policy.fabric_base() {
                em.check_base(&b, &|l, m| cfg.at(l, m))
                    .map_err(AgentError::Input)?;
            }
            Some(em)
        }
        _ => None,
    };
    let hier = detect(&cfg.cgroup_root, cfg.cgroup_version)
        .map_err(|e| AgentError::Input(cfg.at(cfg.cgroup_version_line, e)))?;
    let mut summary = Summary {
        policy: policy.name(),
        dry_run,
        cgroup_version: format!("{:?}", hier.version).to_lowercase(),
        ..Default::default()
    };

    // A state file left by a crashed run: put its originals back first.
    if !dry_run {
        if let Some(st) = state::load(&cfg.state_file).map_err(AgentError::Runtime)? {
            if st.pid != std::process::id() && state::alive(st.pid) {
                return Err(AgentError::Input(format!(
                    "another agent (pid {}) is running with state file {}",
                    st.pid,
                    cfg.state_file.display()
                )));
            }
            let r = state::restore(&cfg.state_file).map_err(AgentError::Runtime)?;
            check_restored(&r)?;
            eprintln!(
                "ibcloud agent: recovered a stale state file {} (pid {} died): restored {:?}",
                cfg.state_file.display(),
                st.pid,
                r.as_ref().map(|r| &r.restored)
            );
            summary.recovered = r;
        }
    }

    let mut live = Vec::new();
    for vm in &cfg.vms {
        let cgroup = Cgroup::open(&hier, &vm.cgroup, !dry_run).map_err(|e| {
            AgentError::Input(cfg.at(vm.cgroup_line, format!("VM '{}': {e}", vm.name)))
        })?;
        live.push(Live {
            cgroup,
            cpu: CpuMeter::default(),
            ib: vm.ib.clone().map(|(s, d, b)| IbSensor::new(s, d, b)),
        });
    }
    let replay = match &cfg.replay {
        Some(p) => Some(
            Replay::load(
                p,
                &cfg.vms.iter().map(|v| v.name.clone()).collect::<Vec<_>>(),
            )
            .map_err(AgentError::Input)?,
        ),
        None => None,
    };
    let inbox = LatencyInbox::new(
        &cfg.vms
            .iter()
            .map(|v| (v.name.clone(), v.latency))
            .collect::<Vec<_>>(),
    );
    let _socket = match &cfg.socket {
        Some(p) => Some(LatencySocket::bind(p, inbox.clone()).map_err(AgentError::Input)?),
        None => None,
    };
    let log_path = opts.log.clone().or_else(|| cfg.log.clone());
    let mut log = match &log_path {
        Some(p) => Some(std::io::BufWriter::new(std::fs::File::create(p).map_err(
            |e| AgentError::Input(format!("cannot create log {}: {e}", p.display())),
        )?)),
        None => None,
    };
    let originals: Vec<_> = live
        .iter()
        .map(|l| l.cgroup.read_limit())
        .collect::<Result<_, _>>()
        .map_err(AgentError::Runtime)?;
    let mut caps: Vec<u32> = originals.iter().map(|l| l.cap()).collect();

    // From here on every exit path restores.
    let mut guardian = None;
    if !dry_run {
        let st = State {
            pid: std::process::id(),
            cgroups: cfg
                .vms
                .iter()
                .zip(&live)
                .zip(&originals)
                .map(|((vm, l), o)| Saved {
                    vm: vm.name.clone(),
                    version: l.cgroup.version,
                    cpu_dir: l.cgroup.cpu_dir.clone(),
                    acct_dir: l.cgroup.acct_dir.clone(),
                    original: *o,
                })
                .collect(),
            opensm: emitter.as_ref().map(Emitter::saved),
        };
        state::save(&cfg.state_file, &st).map_err(AgentError::Runtime)?;
        if let Some(cmd) = &opts.guardian {
            match Guardian::start(cmd, cfg) {
                Ok(g) => guardian = Some(g),
                Err(e) => {
                    let _ = state::restore(&cfg.state_file);
                    return Err(AgentError::Runtime(e));
                }
            }
        }
    }

    let steps_limit = opts.steps.or(cfg.steps);
    // A panic (a bug in a policy or here) must not skip the restore below.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        control_loop(
            cfg,
            policy.as_mut(),
            &mut live,
            &mut caps,
            replay.as_ref(),
            &inbox,
            log.as_mut(),
            steps_limit,
            dry_run,
            period_s,
            should_stop,
            &mut summary,
            emitter.as_mut(),
        )
    }))
    .unwrap_or_else(|p| {
        let what = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(format!(
            "internal error (a bug: please report it): the control loop panicked: {what}"
        ))
    });
    if let Some(l) = log.as_mut() {
        let _ = l.flush();
    }
    // The fabric first (its original file back, OpenSM reloaded), then
    // the cgroups; a failure of either is reported with the other's.
    let fabric_err = match emitter.as_mut() {
        Some(em) if !dry_run => match em.restore() {
            // Done: the state file need not write it back again.
            Ok(()) => state::load(&cfg.state_file)
                .and_then(|st| match st {
                    Some(mut st) => {
                        st.opensm = None;
                        state::save(&cfg.state_file, &st)
                    }
                    None => Ok(()),
                })
                .err(),
            Err(e) => Some(e),
        },
        _ => None,
    };
    summary.fabric = emitter.map(|e| e.summary);
    let result = match (result, fabric_err) {
        (r, None) => r,
        (Ok(()), Some(f)) => Err(format!("restoring opensm.conf: {f}")),
        (Err(e), Some(f)) => Err(format!("{e}; restoring opensm.conf: {f}")),
    };
    if !dry_run {
        let r = state::restore(&cfg.state_file);
        let ok = matches!(&r, Ok(Some(x)) if x.failed.is_empty()) || matches!(r, Ok(None));
        if let Some(g) = guardian {
            g.finish(ok);
        }
        let restore_err = match r {
            Ok(r) => {
                let c = check_restored(&r);
                summary.restored = r;
                c.err()
            }
            Err(e) => Some(AgentError::Runtime(e)),
        };
        if let Some(re) = restore_err {
            // Both failures matter: say why the loop stopped and that the
            // restore did not complete.
            return Err(AgentError::Runtime(match &result {
                Err(e) => format!("{e}; then {re}"),
                Ok(()) => re.to_string(),
            }));
        }
    }
    let done = if dry_run {
        "nothing was written (dry run)"
    } else {
        "the original CPU limits were restored"
    };
    result.map_err(|e| AgentError::Runtime(format!("{e}; {done}")))?;
    summary.report = policy.report(&cfg.vms.iter().map(|v| v.name.clone()).collect::<Vec<_>>());
    Ok(summary)
}

/// The loop's period: the policy's control interval, which `[agent]
/// period` may restate but not contradict (a ResEx policy charges per
/// interval, so stepping it at another rate would misprice everything).
fn check_period(cfg: &Config, policy: &dyn AgentPolicy) -> Result<f64, AgentError> {
    let own = policy.period() as f64 / 1e12;
    match cfg.period_s {
        Some(p) if (p - own).abs() > 1e-9 * own.max(1.0) => Err(AgentError::Input(cfg.at(
            cfg.period_line,
            format!(
                "period = {p} s, but policy '{}' steps every {own} s: set the policy's interval in [policy] \
                 (e.g. interval = \"{p}s\") or drop [agent] period",
                policy.name()
            ),
        ))),
        _ if !(0.01..=3600.0).contains(&own) => Err(AgentError::Input(cfg.at(
            cfg.policy_line,
            format!(
                "policy '{}' steps every {own} s; a host agent needs 0.01 s to 3600 s (set its interval in [policy])",
                policy.name()
            ),
        ))),
        _ => Ok(own),
    }
}

#[allow(clippy::too_many_arguments)]
fn control_loop(
    cfg: &Config,
    policy: &mut dyn AgentPolicy,
    live: &mut [Live],
    caps: &mut [u32],
    replay: Option<&Replay>,
    inbox: &LatencyInbox,
    mut log: Option<&mut std::io::BufWriter<std::fs::File>>,
    steps_limit: Option<u64>,
    dry_run: bool,
    period_s: f64,
    should_stop: &mut dyn FnMut() -> bool,
    summary: &mut Summary,
    mut emitter: Option<&mut Emitter>,
) -> Result<(), String> {
    let period = Duration::from_secs_f64(period_s);
    // Settings wanted from the start (Sphinx's base with no delay; DRX's
    // static hardware policies).
    if let (Some(p), Some(em)) = (policy.fabric(), emitter.as_deref_mut()) {
        em.push(&p, dry_run, Instant::now())
            .map_err(|e| format!("pushing the initial fabric settings: {e}"))?;
        if dry_run {
            eprintln!(
                "ibcloud agent: would write {} (dry run: not written)",
                p.name
            );
        }
    }
    let start = Instant::now();
    // Prime the cumulative sensors so the first step sees one interval.
    for l in live.iter_mut() {
        l.cpu.sample(&l.cgroup)?;
        if let Some(ib) = &mut l.ib {
            ib.sample()?;
        }
    }
    inbox.take();
    let mut last = start;
    let mut k: u64 = 0;
    loop {
        if steps_limit.is_some_and(|n| k >= n) {
            summary.ended = "steps".into();
            return Ok(());
        }
        if replay.is_some_and(|r| k > r.last_period) {
            summary.ended = "replay-end".into();
            return Ok(());
        }
        let deadline = start + period * (k as u32 + 1);
        // Sleep in short slices so a stop request is seen within 100 ms.
        loop {
            if should_stop() {
                summary.ended = "stopped".into();
                return Ok(());
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            std::thread::sleep((deadline - now).min(Duration::from_millis(100)));
        }
        let now = Instant::now();
        let interval = now.duration_since(last);
        last = now;
        let mut lat = inbox.take();
        for &(g, r) in &lat.targets {
            match policy.set_target(g, r) {
                Ok(()) => eprintln!("ibcloud agent: LP group {g} target set to {r}"),
                Err(e) => {
                    lat.malformed += 1;
                    lat.errors.push(format!("!target {g} {r}: {e}"));
                }
            }
        }
        if lat.malformed > 0 {
            summary.malformed_reports += lat.malformed;
            eprintln!(
                "ibcloud agent: {} malformed latency report(s) ignored, e.g. {}",
                lat.malformed,
                lat.errors.join("; ")
            );
        }
        let mut samples = Vec::with_capacity(live.len());
        let mut throttling = Vec::with_capacity(live.len());
        for (i, l) in live.iter_mut().enumerate() {
            let cpu_pct = l.cpu.sample(&l.cgroup)?;
            let (bytes, requests) = match &mut l.ib {
                Some(ib) => ib.sample()?,
                None => (0, 0),
            };
            throttling.push(l.cgroup.throttling().unwrap_or(Throttling::default()));
            samples.push(VmSample {
                interval: interval.as_nanos() as u64 * 1000,
                bytes,
                requests,
                cpu_pct,
                cap: caps[i],
                latencies_us: lat.per_vm[i].clone(),
            });
        }
        if let Some(r) = replay {
            for (vm, row) in r.rows(k) {
                let s = &mut samples[*vm];
                if let Some(b) = row.bytes {
                    s.bytes = b;
                }
                if let Some(q) = row.requests {
                    s.requests = q;
                }
                if let Some(c) = row.cpu_pct {
                    s.cpu_pct = c;
                }
                if let Some(l) = &row.latencies_us {
                    s.latencies_us.extend(l);
                }
            }
        }
        let t_ps = now.duration_since(start).as_nanos() as u64 * 1000;
        // The observations are complete: from here to the last quota write
        // is the host's own violation-to-cap time (G R5 asks ≤ 5 ms).
        let observed = Instant::now();
        let changes = policy.step(t_ps, &samples);
        let decided = Instant::now();
        let mut rec = vec![None; live.len()];
        for r in policy.records() {
            if let Some(slot) = rec.get_mut(r.vm) {
                *slot = Some((r.observed, r.price, r.balance));
            }
        }
        // The rows are in this step's log line now: keep memory bounded.
        policy.clear_records();
        let before: Vec<u32> = caps.to_vec();
        for c in &changes {
            let Some(l) = live.get(c.vm) else {
                return Err(format!(
                    "policy '{}' changed the cap of VM {} of {}",
                    policy.name(),
                    c.vm,
                    live.len()
                ));
            };
            if !dry_run {
                l.cgroup
                    .set_cap(c.cap)
                    .map_err(|e| format!("VM '{}': {e}", cfg.vms[c.vm].name))?;
            }
            caps[c.vm] = c.cap;
            summary.changes += 1;
            eprintln!(
                "ibcloud agent: t={:.1}s {} cap {} -> {}{}",
                t_ps as f64 / 1e12,
                cfg.vms[c.vm].name,
                before[c.vm],
                c.cap,
                if dry_run {
                    " (dry run: not written)"
                } else {
                    ""
                }
            );
        }
        let mut push_fields = serde_json::Map::new();
        if !changes.is_empty() {
            let ms = observed.elapsed().as_secs_f64() * 1e3;
            summary.caps_written_max_ms =
                Some(summary.caps_written_max_ms.map_or(ms, |m: f64| m.max(ms)));
            push_fields.insert("caps_written_ms".into(), serde_json::json!(ms));
        }
        if emitter.is_some() {
            push_fields.insert("fabric_reloaded".into(), false.into());
            push_fields.insert("fabric_applied_ms".into(), serde_json::Value::Null);
        }
        if let Some(p) = policy.fabric() {
            if let Some(em) = emitter.as_deref_mut() {
                let push = em.push(&p, dry_run, decided)?;
                if push.reloaded {
                    eprintln!(
                        "ibcloud agent: t={:.1}s opensm.conf rewritten ({}), OpenSM reloaded{}",
                        t_ps as f64 / 1e12,
                        p.name,
                        push.applied_ms.map_or(String::new(), |m| format!(
                            ", sweep done {m:.0} ms after the decision"
                        ))
                    );
                }
                push_fields.insert("fabric_reloaded".into(), push.reloaded.into());
                push_fields.insert(
                    "fabric_applied_ms".into(),
                    serde_json::json!(push.applied_ms),
                );
            }
        }
        if let Some(w) = log.as_mut() {
            for (i, s) in samples.iter().enumerate() {
                let mut extra = policy.log_fields(i);
                extra.extend(push_fields.clone());
                let n = s.latencies_us.len();
                let line = LogLine {
                    t: t_ps as f64 / 1e12,
                    interval_s: s.interval as f64 / 1e12,
                    step: k,
                    vm: &cfg.vms[i].name,
                    bytes: s.bytes,
                    requests: s.requests,
                    cpu_pct: s.cpu_pct,
                    latencies: n,
                    latency_mean_us: (n > 0).then(|| s.latencies_us.iter().sum::<f64>() / n as f64),
                    cap_before: before[i],
                    cap: caps[i],
                    changed: before[i] != caps[i],
                    dry_run,
                    nr_periods: throttling[i].nr_periods,
                    nr_throttled: throttling[i].nr_throttled,
                    throttled_ns: throttling[i].throttled_ns,
                    policy_observed: rec[i].map(|r| r.0),
                    price: rec[i].map(|r| r.1),
                    balance: rec[i].map(|r| r.2),
                    extra,
                };
                serde_json::to_writer(&mut **w, &line).map_err(|e| e.to_string())?;
                w.write_all(b"\n")
                    .and_then(|_| w.flush())
                    .map_err(|e| format!("action log: {e}"))?;
            }
        }
        k += 1;
        summary.steps = k;
    }
}
