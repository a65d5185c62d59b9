//! The subnet manager of the host model: it carries a QoS and/or
//! congestion-control policy (an `ibcloud_qos::Policy`) to the running
//! fabric with MAD latency, and it answers path queries, which fixes the SL
//! of every queue pair when it is created.
//!
//! * **MADs.** One per thing OpenSM sends. Congestion control (OpenSM's
//!   congestion-control manager): one SwitchCongestionSetting per switch,
//!   one CACongestionSetting per CA port and the CCT in blocks of 64 entries
//!   per CA port. QoS (as `ibcloud_sm::program::program_qos` and OpenSM's
//!   `osm_qos_setup` count them): per switch output port its VLArbitration
//!   blocks (low and high table, one block each for tables of at most 32
//!   entries) and one SL2VL table per input port (0 to the last port), per
//!   CA port two VLArbitration blocks and one SL2VL table.
//! * **Time.** Each MAD costs one round trip `mad-latency`; at most
//!   `mad-window` are outstanding, so `n` MADs take
//!   `⌈n / window⌉ · mad-latency`. The defaults (390.625 µs, window 16) are
//!   `ibcloud_vswitch::timing::SmpTiming::calibrated`, the SMP time fitted
//!   to Paper V Fig. 7 (4,608 SMPs ≈ 300 ms); G gives no MAD time.
//! * **QoS needs an SM restart** (G §3.3, §8 limitation 3): OpenSM reads
//!   its QoS options only when it starts, so a QoS push first costs
//!   `restart` (default 1 s, our choice: process start plus a heavy sweep of
//!   a small subnet; G gives none), then the MADs.
//! * **When settings act.** The simulator has one VL arbitration table and
//!   one congestion-control setting for the whole fabric, so everything a
//!   push carries takes effect when its *last* MAD arrives (a port's own
//!   MAD may arrive up to the push's MAD time earlier; the bound is printed
//!   with each push).
//! * **SL at QP creation** (`path-sl`): `given` (default) — a QP uses its
//!   workload's `sl` from time 0, as if the SA always answered it; `sa` —
//!   the SA answers the workload's `sl` only while a QoS policy is in force
//!   (from time 0 or after a QoS push), SL 0 before (OpenSM without QoS).
//!   A QP keeps its SL for its life: Hadoop (`terasort`, `mrbench`) opens
//!   new QPs for every job, every other workload keeps its QPs for the run.

use crate::scenario::ScenarioError;
use crate::Time;
use serde::{Deserialize, Serialize};

/// Which parts of a policy a push (or the fabric at time 0) applies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SmParts {
    /// QoS and congestion control.
    #[default]
    All,
    /// QoS only (SL2VL, VL arbitration).
    Qos,
    /// Congestion control only.
    Cc,
}

impl SmParts {
    /// From `all`, `qos` or `cc`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "all" => Some(SmParts::All),
            "qos" => Some(SmParts::Qos),
            "cc" => Some(SmParts::Cc),
            _ => None,
        }
    }
    /// Carries QoS.
    pub fn qos(self) -> bool {
        self != SmParts::Cc
    }
    /// Carries congestion control.
    pub fn cc(self) -> bool {
        self != SmParts::Qos
    }
    /// The part of `p` this covers.
    pub fn restrict(self, p: &ibcloud_qos::Policy) -> ibcloud_qos::Policy {
        ibcloud_qos::Policy {
            name: p.name.clone(),
            qos: if self.qos() { p.qos.clone() } else { None },
            cc: if self.cc() { p.cc.clone() } else { None },
        }
    }
}

/// A push scheduled in the scenario (`[[sm.pushes]]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SmPushOptions {
    /// When the SM gets the request.
    pub at: String,
    /// A preset (`stmax`, `stmaxq`, `drxmax`, `drxmaxq`).
    pub policy: String,
    /// `all` (default), `qos` or `cc`.
    #[serde(default)]
    pub parts: SmParts,
    /// Which SLs the preset's congestion control covers (`all`, `bulk`).
    #[serde(default)]
    pub cc_sls: Option<String>,
}

/// The `[sm]` table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct SmOptions {
    /// Round trip of one MAD. Default `390.625us`.
    pub mad_latency: String,
    /// MADs outstanding at most. Default 16.
    pub mad_window: u32,
    /// Time from a QoS change to the restarted SM's first MAD. Default `1s`.
    pub restart: String,
    /// `given` (default) or `sa` (see the module docs).
    pub path_sl: String,
    /// Pushes at fixed times (controllers push at run time too).
    pub pushes: Vec<SmPushOptions>,
}

impl Default for SmOptions {
    fn default() -> Self {
        Self {
            mad_latency: "390.625us".into(),
            mad_window: 16,
            restart: "1s".into(),
            path_sl: "given".into(),
            pushes: Vec::new(),
        }
    }
}

/// Longest MAD round trip accepted (a MAD that takes longer has timed out
/// many times over: OpenSM's transaction timeout is 200 ms).
pub const MAX_MAD_LATENCY: Time = 1_000_000_000_000;
/// Longest SM restart accepted (1 h).
pub const MAX_RESTART: Time = 3_600 * 1_000_000_000_000;

/// The checked `[sm]` settings.
#[derive(Clone, Debug, PartialEq)]
pub struct SmSettings {
    /// MAD round trip (ps).
    pub mad_latency: Time,
    /// Window.
    pub mad_window: u32,
    /// Restart (ps).
    pub restart: Time,
    /// QP SLs from the SA.
    pub path_sl_sa: bool,
    /// Scheduled pushes: (time, request).
    pub pushes: Vec<(Time, SmRequest)>,
}

/// What a push asks for (Copy, so it can travel in an actuation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SmRequest {
    /// The preset.
    pub preset: ibcloud_qos::Preset,
    /// SLs with congestion control.
    pub cc_sls: ibcloud_qos::CcSls,
    /// Which parts.
    pub parts: SmParts,
}

impl SmRequest {
    /// The policy it carries.
    pub fn policy(&self) -> ibcloud_qos::Policy {
        self.parts.restrict(&self.preset.policy(self.cc_sls))
    }
}

fn bad<T>(path: String, problem: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError {
        path,
        problem: problem.into(),
    })
}

/// A duration of the `[sm]` table, checked: not negative, not NaN, at most
/// `max` (`path` names the key).
fn duration(path: &str, text: &str, max: Time, min: Time) -> Result<Time, ScenarioError> {
    let t = text.trim();
    if t.starts_with('-') {
        return bad(path.into(), format!("duration '{text}' is negative"));
    }
    let v = ibcloud_netsim::time::parse_duration(t).map_err(|_| ScenarioError {
        path: path.into(),
        problem: format!("cannot read duration '{text}' (use e.g. 390us, 1ms, 1s)"),
    })?;
    if v < min {
        return bad(
            path.into(),
            format!("duration '{text}' must be at least {} ps", min),
        );
    }
    if v > max {
        return bad(
            path.into(),
            format!(
                "duration '{text}' is absurd (at most {} s)",
                max as f64 * 1e-12
            ),
        );
    }
    Ok(v)
}

impl SmOptions {
    /// Checks every key; errors name `sm.<key>`.
    pub fn settings(&self) -> Result<SmSettings, ScenarioError> {
        let mad_latency = duration("sm.mad-latency", &self.mad_latency, MAX_MAD_LATENCY, 1)?;
        let restart = duration("sm.restart", &self.restart, MAX_RESTART, 0)?;
        if !(1..=1024).contains(&self.mad_window) {
            return bad(
                "sm.mad-window".into(),
                format!("{} MADs outstanding: must be 1-1024", self.mad_window),
            );
        }
        let path_sl_sa = match self.path_sl.as_str() {
            "given" => false,
            "sa" => true,
            other => return bad("sm.path-sl".into(), format!("'{other}' is not given or sa")),
        };
        let mut pushes = Vec::new();
        for (i, p) in self.pushes.iter().enumerate() {
            let at = duration(&format!("sm.pushes[{i}].at"), &p.at, Time::MAX, 0)?;
            let Some(preset) = ibcloud_qos::Preset::by_name(&p.policy) else {
                return bad(
                    format!("sm.pushes[{i}].policy"),
                    format!(
                        "unknown preset '{}' (stmax, stmaxq, drxmax, drxmaxq)",
                        p.policy
                    ),
                );
            };
            let cc_sls = match p.cc_sls.as_deref() {
                None => ibcloud_qos::CcSls::All,
                Some(s) => ibcloud_qos::CcSls::parse(s).ok_or_else(|| ScenarioError {
                    path: format!("sm.pushes[{i}].cc-sls"),
                    problem: format!("'{s}' is not all or bulk"),
                })?,
            };
            pushes.push((
                at,
                SmRequest {
                    preset,
                    cc_sls,
                    parts: p.parts,
                },
            ));
        }
        Ok(SmSettings {
            mad_latency,
            mad_window: self.mad_window,
            restart,
            path_sl_sa,
            pushes,
        })
    }
}

/// The fabric as the SM sees it: per switch (ports, live ports), and the
/// number of CA ports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SmFabric {
    /// (number of ports, ports with a link) per switch.
    pub switches: Vec<(u8, u8)>,
    /// CA ports with a link.
    pub ca_ports: usize,
}

/// VLArbitration blocks OpenSM writes for one port: each table in blocks of
/// 32 entries (ConnectX: 8-entry tables, one block each).
fn vlarb_blocks(q: &ibcloud_qos::QosTables) -> usize {
    let blocks = |n: usize| n.div_ceil(32).max(1);
    blocks(q.vlarb_low.len()) + blocks(q.vlarb_high.len())
}

impl SmFabric {
    /// MADs of the congestion-control part of `p` (0 without one).
    pub fn cc_mads(&self, p: &ibcloud_qos::Policy) -> usize {
        let Some(cc) = &p.cc else { return 0 };
        let cct_blocks = cc.cct.len().div_ceil(64).max(1);
        self.switches.len() + self.ca_ports * (1 + cct_blocks)
    }

    /// MADs of the QoS part of `p` (0 without one).
    pub fn qos_mads(&self, p: &ibcloud_qos::Policy) -> usize {
        let Some(q) = &p.qos else { return 0 };
        let swe = q.effective(ibcloud_qos::PortClass::Swe);
        let ca = q.effective(ibcloud_qos::PortClass::Ca);
        let per_switch: usize = self
            .switches
            .iter()
            .map(|&(ports, live)| live as usize * (vlarb_blocks(&swe) + ports as usize + 1))
            .sum();
        per_switch + self.ca_ports * (vlarb_blocks(&ca) + 1)
    }
}

impl SmSettings {
    /// Time to send `n` MADs.
    pub fn mad_time(&self, n: usize) -> Time {
        (n as Time).div_ceil(self.mad_window as Time) * self.mad_latency
    }
}

/// One push as the SM carried it out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SmPushRecord {
    /// The controller's tag (its violation event, or the push's index for
    /// scheduled pushes).
    pub tag: u64,
    /// Who asked: a controller's name, or `scenario`.
    pub by: String,
    /// What.
    pub request: SmRequest,
    /// When the SM got the request (ps).
    pub received: Time,
    /// SM restart included (ps; 0 for congestion control alone).
    pub restart: Time,
    /// Congestion-control MADs sent.
    pub cc_mads: usize,
    /// QoS MADs sent.
    pub qos_mads: usize,
    /// When its last MAD arrived and every setting took effect (ps).
    pub in_force: Time,
    /// How much earlier the first port's MAD arrived (the bound on the
    /// all-at-the-end simplification, ps).
    pub spread: Time,
    /// Empty, or why the fabric refused it.
    pub error: String,
}

/// Plans a push received at `now`: (restart, cc MADs, QoS MADs, in force,
/// spread).
pub fn plan(s: &SmSettings, f: &SmFabric, r: &SmRequest, now: Time) -> SmPushRecord {
    let p = r.policy();
    let cc = f.cc_mads(&p);
    let qos = f.qos_mads(&p);
    let restart = if p.qos.is_some() { s.restart } else { 0 };
    let t = s.mad_time(cc + qos);
    SmPushRecord {
        tag: 0,
        by: String::new(),
        request: *r,
        received: now,
        restart,
        cc_mads: cc,
        qos_mads: qos,
        in_force: now + restart + t,
        spread: t.saturating_sub(s.mad_latency),
        error: String::new(),
    }
}

/// Workloads whose jobs open new QPs (Hadoop tasks: every job's shuffle
/// connects anew); every other workload keeps its QPs for the whole run.
pub fn new_qps_per_round(kind: &str) -> bool {
    matches!(kind, "terasort" | "mrbench")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eight_hosts() -> SmFabric {
        SmFabric {
            switches: vec![(8, 8)],
            ca_ports: 8,
        }
    }

    #[test]
    fn mads_are_counted_as_opensm_sends_them() {
        let f = eight_hosts();
        let p = ibcloud_qos::Preset::DrxMaxQ.policy(ibcloud_qos::CcSls::All);
        // CC: 1 switch setting + 8 × (CA setting + 2 CCT blocks of 64).
        assert_eq!(p.cc.as_ref().unwrap().cct.len(), 128);
        assert_eq!(f.cc_mads(&p), 1 + 8 * 3);
        // QoS: 8 outputs × (2 VLArb blocks + 9 SL2VL tables) + 8 CAs × 3.
        assert_eq!(f.qos_mads(&p), 8 * (2 + 9) + 8 * 3);
        let cc_only = SmParts::Cc.restrict(&p);
        assert_eq!(f.qos_mads(&cc_only), 0);
        assert_eq!(f.cc_mads(&SmParts::Qos.restrict(&p)), 0);
    }

    #[test]
    fn a_push_takes_its_mads_in_windows_and_qos_a_restart() {
        let s = SmOptions::default().settings().unwrap();
        assert_eq!(s.mad_latency, 390_625_000);
        let f = eight_hosts();
        let cc = SmRequest {
            preset: ibcloud_qos::Preset::DrxMax,
            cc_sls: ibcloud_qos::CcSls::All,
            parts: SmParts::Cc,
        };
        let r = plan(&s, &f, &cc, 1_000);
        // 25 MADs, 16 at a time: two round trips, no restart.
        assert_eq!((r.cc_mads, r.qos_mads, r.restart), (25, 0, 0));
        assert_eq!(r.in_force, 1_000 + 2 * 390_625_000);
        let all = SmRequest {
            parts: SmParts::All,
            ..cc
        };
        let r = plan(&s, &f, &all, 0);
        let n = 25 + 112;
        assert_eq!(
            r.in_force,
            s.restart + (n as Time).div_ceil(16) * 390_625_000
        );
        assert_eq!(r.spread, ((n as Time).div_ceil(16) - 1) * 390_625_000);
    }

    #[test]
    fn bad_settings_name_their_key() {
        let e = |o: SmOptions| o.settings().unwrap_err();
        let x = e(SmOptions {
            mad_latency: "-5us".into(),
            ..Default::default()
        });
        assert_eq!(x.path, "sm.mad-latency");
        assert!(x.problem.contains("negative"), "{}", x.problem);
        let x = e(SmOptions {
            mad_latency: "nan".into(),
            ..Default::default()
        });
        assert_eq!(x.path, "sm.mad-latency");
        let x = e(SmOptions {
            mad_latency: "0us".into(),
            ..Default::default()
        });
        assert!(x.problem.contains("at least"), "{}", x.problem);
        let x = e(SmOptions {
            restart: "5000s".into(),
            ..Default::default()
        });
        assert_eq!(x.path, "sm.restart");
        assert!(x.problem.contains("absurd"), "{}", x.problem);
        let x = e(SmOptions {
            restart: "-1s".into(),
            ..Default::default()
        });
        assert_eq!(x.path, "sm.restart");
        let x = e(SmOptions {
            mad_window: 0,
            ..Default::default()
        });
        assert_eq!(x.path, "sm.mad-window");
        let x = e(SmOptions {
            path_sl: "maybe".into(),
            ..Default::default()
        });
        assert_eq!(x.path, "sm.path-sl");
        let x = e(SmOptions {
            pushes: vec![SmPushOptions {
                at: "1s".into(),
                policy: "fastest".into(),
                parts: SmParts::All,
                cc_sls: None,
            }],
            ..Default::default()
        });
        assert_eq!(x.path, "sm.pushes[0].policy");
    }
}
