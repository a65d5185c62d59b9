//! dFtree (S003): a performance manager that sweeps the port counters every
//! interval, marks endpoint hot-spots by Algorithm 1 (XmitWait ticks per
//! second above T at a switch port facing an HCA), sends repath/unpath traps
//! with a latency to the HCAs with high XmitWait and low utilisation, and
//! host agents that move only their QPs to the hot-spot's DLID to the
//! slow-lane SL (Algorithm 2); plus the SM's reroute around failed links.
//!
//! The controller runs on the simulator's sweeps: it acts at the first sweep
//! at or after each multiple of its interval and measures the deltas over
//! its own interval, so the simulator's sweep interval (default 100 µs)
//! should divide it. Link failures are seen at the next simulator sweep.

use crate::control::{Action, Controller, SweepView, TimedAction};
use crate::time::{Time, MS, US};
use crate::PortCounters;
use ibcloud_fabric::lft::{ForwardingTables, NO_PORT};
use ibcloud_fabric::{Fabric, NodeId};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};

/// What "MaxBandwidth" of Eq. 3 is (S003 does not say).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MaxBandwidth {
    /// The data rate after line coding (4x DDR = 16 Gb/s); the default.
    #[default]
    Data,
    /// The signalling rate (4x DDR = 20 Gb/s): 8b/10b links count 10/8 of
    /// the data rate, 64b/66b links 66/64.
    Signalling,
}

/// dFtree's parameters, each with S003's value where it gives one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct DftreeConfig {
    /// PM sweep interval t (ps). S003 does not state it; its timing points
    /// to about 2 s on the testbed; the default 2 ms keeps that ratio to the
    /// experiments, which are simulated 1000× faster (13 s → 13 ms).
    pub interval: Time,
    /// T: XmitWait ticks per second above which a port is congested (S003:
    /// 100,000). Strict: a port at exactly T is not congested.
    pub threshold: f64,
    /// Utilisation below which a congested HCA port is a contributor (S003:
    /// 0.5, strict).
    pub utilisation: f64,
    /// What the utilisation is relative to.
    pub max_bandwidth: MaxBandwidth,
    /// Latency from the PM's decision to the trap's arrival at the host
    /// (ps; S003 silent; default 10 µs, a MAD round through the SM node).
    pub trap_latency: Time,
    /// Time the host agent needs to change the SL of its QPs after the trap
    /// (ps; S003 saw ≈2 s glitches on its stack; default 0).
    pub host_delay: Time,
    /// SL every QP starts on (fast lane).
    pub fast_sl: u8,
    /// SL of the slow lane.
    pub slow_sl: u8,
    /// VL of the fast lane.
    pub fast_vl: u8,
    /// VL of the slow lane.
    pub slow_vl: u8,
    /// Program SL2VL on every port at start: every SL to the fast VL, the
    /// slow SL to the slow VL (E §2.6.5).
    pub configure_sl2vl: bool,
    /// Send unpath traps when a hot-spot clears (Algorithm 1's else-branch).
    pub unpath: bool,
    /// Consecutive PM sweeps below T before a mark is cleared (S003: 1, no
    /// hysteresis; larger values stop a hot-spot near T from flapping).
    pub clear_sweeps: u32,
    /// Reroute around failed links (the SM's part): entries whose port is
    /// down move to the live port closest to the destination.
    pub reroute: bool,
    /// Delay between a link failure and the SM's new forwarding entries
    /// (ps; trap to the SM plus its sweep; default 100 µs).
    pub reroute_delay: Time,
}

impl Default for DftreeConfig {
    fn default() -> Self {
        Self {
            interval: 2 * MS,
            threshold: 100_000.0,
            utilisation: 0.5,
            max_bandwidth: MaxBandwidth::Data,
            trap_latency: 10 * US,
            host_delay: 0,
            fast_sl: 0,
            slow_sl: 1,
            fast_vl: 0,
            slow_vl: 1,
            configure_sl2vl: true,
            unpath: true,
            clear_sweeps: 1,
            reroute: true,
            reroute_delay: 100 * US,
        }
    }
}

impl DftreeConfig {
    /// Checks the values; the problem in words.
    pub fn validate(&self) -> Result<(), String> {
        if self.interval == 0 {
            return Err("dftree interval must be positive".into());
        }
        if !(self.threshold >= 0.0 && self.threshold.is_finite()) {
            return Err("dftree threshold must be a non-negative number".into());
        }
        if !(self.utilisation > 0.0 && self.utilisation <= 1.0) {
            return Err("dftree utilisation cut-off must be in (0, 1]".into());
        }
        if self.fast_sl > 15 || self.slow_sl > 15 || self.fast_sl == self.slow_sl {
            return Err("dftree fast and slow SLs must differ and be 0-15".into());
        }
        if self.clear_sweeps == 0 {
            return Err("dftree clear-sweeps must be at least 1".into());
        }
        if self.fast_vl > 14 || self.slow_vl > 14 || self.fast_vl == self.slow_vl {
            return Err("dftree fast and slow VLs must differ and be 0-14".into());
        }
        Ok(())
    }
}

/// One thing dFtree did, for reports and tests.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum DftreeEvent {
    /// A switch port facing endpoint `hotspot` was marked.
    Mark {
        /// PM sweep time (ps).
        time: Time,
        /// Hot-spot endpoint.
        hotspot: u32,
        /// Its Congestion (ticks/s).
        congestion: f64,
    },
    /// The mark was cleared.
    Unmark {
        /// PM sweep time.
        time: Time,
        /// Hot-spot endpoint.
        hotspot: u32,
    },
    /// A trap to host `host`: its QPs to `dst` go to `sl` at `applied`.
    Trap {
        /// PM sweep time.
        time: Time,
        /// When the host changes its QPs (time + latency + host delay).
        applied: Time,
        /// Host endpoint.
        host: u32,
        /// DLID's endpoint.
        dst: u32,
        /// New SL.
        sl: u8,
    },
    /// The SM rewrote `entries` forwarding entries after a link change.
    Reroute {
        /// When the entries take effect.
        applied: Time,
        /// Number of entries changed.
        entries: usize,
    },
}

/// The shared event log of a [`Dftree`] controller (readable after the run).
pub type DftreeLog = Arc<Mutex<Vec<DftreeEvent>>>;

/// Congestion (ticks/s) and utilisation of one port over an interval.
pub fn port_metrics(
    now: &PortCounters,
    before: &PortCounters,
    interval: Time,
    max_gbps: f64,
) -> (f64, f64) {
    let secs = interval as f64 / 1e12;
    if secs <= 0.0 {
        return (0.0, 0.0);
    }
    let congestion = now.xmit_wait.saturating_sub(before.xmit_wait) as f64 / secs;
    let bytes = now
        .xmit_data_words()
        .saturating_sub(before.xmit_data_words()) as f64
        * 4.0;
    let util = if max_gbps > 0.0 {
        bytes * 8.0 / secs / (max_gbps * 1e9)
    } else {
        0.0
    };
    (congestion, util)
}

/// The dFtree controller: performance manager, traps, host agents and SM
/// reroute. Install with `Simulation::set_controller`.
#[derive(Debug)]
pub struct Dftree {
    cfg: DftreeConfig,
    /// Per node: LFT (LID → port) as the SM last set it, and the original.
    lft: Vec<Vec<u8>>,
    lft0: Vec<Vec<u8>>,
    is_switch: Vec<bool>,
    num_nodes: usize,
    last_pm: Time,
    snapshot: Vec<PortCounters>,
    /// Marked hot-spot ports: slot → (endpoint, sweeps below T so far).
    hot: BTreeMap<u32, (u32, u32)>,
    /// Contributors per hot-spot endpoint.
    contributors: BTreeMap<u32, BTreeSet<u32>>,
    link_state: Vec<bool>,
    pending: Vec<TimedAction>,
    log: DftreeLog,
}

impl Dftree {
    /// A controller for `fabric` routed by `tables` (needed for the SM's
    /// reroute). The configuration is checked.
    pub fn new(
        fabric: &Fabric,
        tables: &ForwardingTables,
        cfg: DftreeConfig,
    ) -> Result<Self, String> {
        let n = fabric.num_nodes();
        let lft: Vec<Vec<u8>> = (0..n)
            .map(|i| tables.table(NodeId(i as u32)).to_vec())
            .collect();
        let is_switch = (0..n)
            .map(|i| fabric.node(NodeId(i as u32)).kind == ibcloud_fabric::NodeKind::Switch)
            .collect();
        Self::from_parts(cfg, lft, is_switch)
    }

    /// A controller from per-node forwarding tables (LID → port) and the
    /// switch flags, without a fabric.
    pub fn from_parts(
        cfg: DftreeConfig,
        lft: Vec<Vec<u8>>,
        is_switch: Vec<bool>,
    ) -> Result<Self, String> {
        cfg.validate()?;
        let n = is_switch.len();
        Ok(Self {
            cfg,
            lft0: lft.clone(),
            lft,
            is_switch,
            num_nodes: n,
            last_pm: 0,
            snapshot: Vec::new(),
            hot: BTreeMap::new(),
            contributors: BTreeMap::new(),
            link_state: Vec::new(),
            pending: Vec::new(),
            log: Arc::new(Mutex::new(Vec::new())),
        })
    }

    /// The event log (shared; read it after the run).
    pub fn log(&self) -> DftreeLog {
        Arc::clone(&self.log)
    }

    fn record(&self, e: DftreeEvent) {
        if let Ok(mut l) = self.log.lock() {
            l.push(e);
        }
    }

    fn max_gbps(&self, gbps: f64) -> f64 {
        match self.cfg.max_bandwidth {
            MaxBandwidth::Data => gbps,
            MaxBandwidth::Signalling if gbps < 50.0 => gbps * 10.0 / 8.0,
            MaxBandwidth::Signalling => gbps * 66.0 / 64.0,
        }
    }

    fn trap(&mut self, now: Time, host: u32, dst: u32, sl: u8) {
        let applied = now + self.cfg.trap_latency + self.cfg.host_delay;
        self.pending.push(TimedAction {
            time: applied,
            action: Action::SetHostDestinationSl {
                host,
                dst,
                sl: Some(sl),
            },
        });
        self.record(DftreeEvent::Trap {
            time: now,
            applied,
            host,
            dst,
            sl,
        });
    }

    /// Algorithm 1 over one PM interval.
    fn pm_sweep(&mut self, view: &SweepView<'_>) {
        let interval = view.time - self.last_pm;
        let metrics: Vec<(f64, f64)> = view
            .slots
            .iter()
            .enumerate()
            .map(|(i, s)| {
                port_metrics(
                    &view.ports[i],
                    &self.snapshot[i],
                    interval,
                    self.max_gbps(s.gbps),
                )
            })
            .collect();
        let t = self.cfg.threshold;
        // HCA ports: (slot, endpoint) in slot order.
        let hcas: Vec<(usize, u32)> = view
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.is_switch && s.endpoint != u32::MAX)
            .map(|(i, s)| (i, s.endpoint))
            .collect();
        for (p, s) in view.slots.iter().enumerate() {
            if !s.is_switch || s.remote == u32::MAX {
                continue;
            }
            let h = view.slots[s.remote as usize].endpoint;
            if h == u32::MAX {
                continue;
            }
            let cong = metrics[p].0;
            let p32 = p as u32;
            if cong > t {
                if let Some(m) = self.hot.get_mut(&p32) {
                    m.1 = 0;
                } else {
                    self.hot.insert(p32, (h, 0));
                    self.record(DftreeEvent::Mark {
                        time: view.time,
                        hotspot: h,
                        congestion: cong,
                    });
                }
                for &(q, ep) in &hcas {
                    if ep == h {
                        continue;
                    }
                    let (cq, uq) = metrics[q];
                    let known = self.contributors.get(&h).is_some_and(|c| c.contains(&ep));
                    if cq > t && !known && uq < self.cfg.utilisation {
                        self.contributors.entry(h).or_default().insert(ep);
                        self.trap(view.time, ep, h, self.cfg.slow_sl);
                    }
                }
            } else if cong < t && self.hot.contains_key(&p32) {
                let below = self.hot.get_mut(&p32).map(|m| {
                    m.1 += 1;
                    m.1
                });
                if below.unwrap_or(0) < self.cfg.clear_sweeps {
                    continue;
                }
                self.hot.remove(&p32);
                self.record(DftreeEvent::Unmark {
                    time: view.time,
                    hotspot: h,
                });
                let cs = self.contributors.remove(&h).unwrap_or_default();
                if self.cfg.unpath {
                    for ep in cs {
                        self.trap(view.time, ep, h, self.cfg.fast_sl);
                    }
                }
            }
        }
    }

    /// The SM's reaction to link changes: forwarding entries whose port is
    /// down go to the live port with the fewest hops to the destination
    /// (lowest port number on ties); entries whose original port is up
    /// again return to it.
    fn reroute(&mut self, view: &SweepView<'_>) {
        let n = self.num_nodes;
        let mut slot_of: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, s) in view.slots.iter().enumerate() {
            let v = &mut slot_of[s.node as usize];
            if v.len() <= s.port as usize {
                v.resize(s.port as usize + 1, u32::MAX);
            }
            v[s.port as usize] = i as u32;
        }
        let live = |slot: u32| -> Option<u32> {
            if slot == u32::MAX || !view.link_up[slot as usize] {
                return None;
            }
            let r = view.slots[slot as usize].remote;
            (r != u32::MAX).then(|| view.slots[r as usize].node)
        };
        let mut changes = Vec::new();
        for (ep, &lid) in view.endpoint_lids.iter().enumerate() {
            let Some(ep_slot) = view.slots.iter().position(|s| s.endpoint == ep as u32) else {
                continue;
            };
            let target = view.slots[ep_slot].node as usize;
            // Hop distance of every node to the endpoint over live links.
            let mut dist = vec![u32::MAX; n];
            dist[target] = 0;
            let mut queue = VecDeque::from([target]);
            while let Some(x) = queue.pop_front() {
                if x != target && !self.is_switch[x] {
                    continue;
                }
                for &sl in &slot_of[x] {
                    if let Some(y) = live(sl) {
                        if dist[y as usize] == u32::MAX {
                            dist[y as usize] = dist[x] + 1;
                            queue.push_back(y as usize);
                        }
                    }
                }
            }
            #[allow(clippy::needless_range_loop)] // sw indexes four tables
            for sw in 0..n {
                if !self.is_switch[sw] || (lid as usize) >= self.lft[sw].len() {
                    continue;
                }
                let cur = self.lft[sw][lid as usize];
                let orig = self.lft0[sw][lid as usize];
                if cur == NO_PORT {
                    continue;
                }
                let port_live = |p: u8| slot_of[sw].get(p as usize).and_then(|&s| live(s));
                let want = if port_live(orig).is_some() {
                    orig
                } else if port_live(cur).is_some() {
                    cur
                } else {
                    let mut best = (u32::MAX, NO_PORT);
                    for (p, &s) in slot_of[sw].iter().enumerate() {
                        if let Some(y) = live(s) {
                            let d = dist[y as usize];
                            if d != u32::MAX && d < best.0 {
                                best = (d, p as u8);
                            }
                        }
                    }
                    best.1
                };
                if want != cur && want != NO_PORT {
                    self.lft[sw][lid as usize] = want;
                    changes.push(Action::SetLft {
                        switch: sw as u32,
                        lid,
                        port: want,
                    });
                }
            }
        }
        let applied = view.time + self.cfg.reroute_delay;
        self.record(DftreeEvent::Reroute {
            applied,
            entries: changes.len(),
        });
        for a in changes {
            self.pending.push(TimedAction {
                time: applied,
                action: a,
            });
        }
    }
}

impl Controller for Dftree {
    fn on_start(&mut self, actions: &mut Vec<Action>) {
        if !self.cfg.configure_sl2vl {
            return;
        }
        let mut map = [self.cfg.fast_vl; 16];
        map[self.cfg.slow_sl as usize] = self.cfg.slow_vl;
        for node in 0..self.num_nodes as u32 {
            actions.push(Action::SetSl2Vl {
                node,
                in_port: None,
                out_port: None,
                map,
            });
        }
    }

    fn on_sweep(&mut self, view: &SweepView<'_>, _actions: &mut Vec<Action>) {
        if self.snapshot.is_empty() {
            self.snapshot = vec![PortCounters::default(); view.slots.len()];
        }
        if self.link_state.is_empty() {
            self.link_state = view.slots.iter().map(|s| s.remote != u32::MAX).collect();
        }
        if self.cfg.reroute && self.link_state.as_slice() != view.link_up {
            self.link_state = view.link_up.to_vec();
            self.reroute(view);
        }
        if view.time >= self.last_pm + self.cfg.interval {
            self.pm_sweep(view);
            self.snapshot.copy_from_slice(view.ports);
            self.last_pm = view.time;
        }
    }

    fn take_scheduled(&mut self, later: &mut Vec<TimedAction>) {
        later.append(&mut self.pending);
    }
}

/// One run of [`run_many`]: settings, traffic, simulated time, dFtree's
/// settings (none: no controller) and scheduled events.
#[derive(Clone, Debug)]
pub struct DftreeRun {
    /// Settings, traffic and duration.
    pub run: crate::sweep::RunSpec,
    /// dFtree, or none for the run without it.
    pub dftree: Option<DftreeConfig>,
    /// Run-time events (link failures, …).
    pub events: Vec<TimedAction>,
}

/// Runs many simulations with or without dFtree on all cores; results (and
/// dFtree's log) in input order.
pub fn run_many(
    fabric: &Fabric,
    tables: &ForwardingTables,
    runs: &[DftreeRun],
) -> Vec<Result<(crate::SimResult, Vec<DftreeEvent>), crate::NetsimError>> {
    use rayon::prelude::*;
    runs.par_iter()
        .map(|r| {
            let mut sim =
                crate::Simulation::new(fabric, tables, &r.run.config, &r.run.traffic, r.run.end)?;
            sim.schedule(&r.events)?;
            let mut log = None;
            if let Some(c) = &r.dftree {
                let d =
                    Dftree::new(fabric, tables, c.clone()).map_err(crate::NetsimError::Config)?;
                log = Some(d.log());
                sim.set_controller(Box::new(d));
            }
            let res = sim.run()?;
            let events = log
                .and_then(|l| l.lock().ok().map(|v| v.clone()))
                .unwrap_or_default();
            Ok((res, events))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SlotInfo;

    /// Switch node 0 with ports 1..=3 facing HCAs at nodes 1..=3 (endpoints
    /// 0..=2), all 32 Gb/s. Slot 2k is the switch port, 2k+1 the HCA.
    fn slots() -> Vec<SlotInfo> {
        let mut v = Vec::new();
        for k in 0..3u32 {
            v.push(SlotInfo {
                node: 0,
                port: k as u8 + 1,
                remote: 2 * k + 1,
                endpoint: u32::MAX,
                is_switch: true,
                gbps: 32.0,
            });
            v.push(SlotInfo {
                node: k + 1,
                port: 1,
                remote: 2 * k,
                endpoint: k,
                is_switch: false,
                gbps: 32.0,
            });
        }
        v
    }

    /// Runs one PM sweep at 1 ms with the hot-spot port's XmitWait ticks and
    /// the two senders' (ticks, bytes); returns the log.
    fn one_sweep(hot_ticks: u64, senders: [(u64, u64); 2]) -> Vec<DftreeEvent> {
        let cfg = DftreeConfig {
            interval: MS,
            ..DftreeConfig::default()
        };
        let mut d =
            Dftree::from_parts(cfg, vec![Vec::new(); 4], vec![true, false, false, false]).unwrap();
        let s = slots();
        let prev = vec![PortCounters::default(); s.len()];
        let mut now = prev.clone();
        now[0].xmit_wait = hot_ticks;
        for (i, (t, b)) in senders.iter().enumerate() {
            now[2 * i + 3].xmit_wait = *t;
            now[2 * i + 3].xmit_bytes = *b;
        }
        let up = vec![true; s.len()];
        let view = SweepView {
            time: MS,
            interval: MS,
            ports: &now,
            previous_ports: &prev,
            slots: &s,
            flows: &[],
            endpoint_lids: &[1, 2, 3],
            link_up: &up,
        };
        let mut a = Vec::new();
        d.on_sweep(&view, &mut a);
        let mut later = Vec::new();
        d.take_scheduled(&mut later);
        let log = d.log().lock().unwrap().clone();
        let traps = log
            .iter()
            .filter(|e| matches!(e, DftreeEvent::Trap { .. }))
            .count();
        assert_eq!(later.len(), traps, "one host action per trap");
        log
    }

    // 1 ms at T = 100,000 ticks/s is 100 ticks; 32 Gb/s for 1 ms is 4 MB.
    #[test]
    fn no_trap_while_congestion_is_at_or_below_t() {
        assert!(one_sweep(100, [(500, 1_000_000); 2]).is_empty());
        assert!(one_sweep(99, [(500, 1_000_000); 2]).is_empty());
        let log = one_sweep(101, [(500, 1_000_000); 2]);
        assert!(matches!(log[0], DftreeEvent::Mark { hotspot: 0, .. }));
        assert_eq!(log.len(), 3, "mark plus a trap to each sender: {log:?}");
    }

    #[test]
    fn a_sender_at_half_the_link_is_not_a_contributor() {
        // Exactly 50 %: not below the cut-off.
        let log = one_sweep(1000, [(500, 2_000_000), (500, 1_999_996)]);
        let traps: Vec<_> = log
            .iter()
            .filter_map(|e| match e {
                DftreeEvent::Trap { host, dst, sl, .. } => Some((*host, *dst, *sl)),
                _ => None,
            })
            .collect();
        assert_eq!(traps, vec![(2, 0, 1)]);
        // A sender whose own XmitWait is at T is not one either.
        let log = one_sweep(1000, [(100, 1_000_000), (101, 1_000_000)]);
        assert_eq!(log.len(), 2, "{log:?}");
    }

    #[test]
    fn bad_settings_are_refused() {
        let bad = DftreeConfig {
            slow_sl: 0,
            ..DftreeConfig::default()
        };
        assert!(bad.validate().is_err());
        let bad = DftreeConfig {
            utilisation: 0.0,
            ..DftreeConfig::default()
        };
        assert!(bad.validate().is_err());
        let bad = DftreeConfig {
            interval: 0,
            ..DftreeConfig::default()
        };
        assert!(bad.validate().is_err());
    }
}
