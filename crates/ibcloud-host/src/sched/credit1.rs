//! Xen's credit scheduler (credit1), as in Xen 3.x `common/sched_credit.c`
//! and the Xen credit-scheduler documentation (F §4.2 [ext]).
//!
//! - Every PCPU ticks every 10 ms. The vCPU running at a tick is charged 100
//!   credits (tick sampling, Xen 3.x) — or, with [`Debit::Exact`], every vCPU
//!   is charged its exact run time at 10 credits/ms (later Xen's
//!   `burn_credits`). A vCPU found running at a tick loses BOOST and joins
//!   the active list.
//! - Every 3 ticks (30 ms) the master PCPU does the accounting: the
//!   `300 × PCPUs` credits are split across active domains by weight, each
//!   bounded by its peak (300 per active vCPU, or its cap: `⌈cap × 300/100⌉`);
//!   credit a capped-out domain cannot take goes to the domains after it
//!   (Xen's `credit_total` top-up). Then per vCPU: credit < 0 → OVER, and
//!   with a cap, credit < −cap share → **parked** (paused) until an
//!   accounting leaves its credit ≥ 0; credit ≥ 0 → UNDER (unpark); credit >
//!   300 → leaves the active list with credit 0; credit < −300 → −300.
//! - A vCPU that wakes while UNDER becomes BOOST unless it was unparked.
//! - Per-PCPU run queues sorted by priority (BOOST > UNDER > OVER; FIFO
//!   within one), time slice 30 ms; a waking vCPU of higher priority than
//!   the running one preempts it, an idle PCPU is tickled. When the local
//!   head is OVER or there is none, the PCPU steals the first vCPU of higher
//!   priority from a peer's queue (peers in order from the next PCPU),
//!   respecting pinning — F's order: local UNDER, remote UNDER, local OVER,
//!   remote OVER.

use super::{CpuScheduler, RunClock, SchedError, Switch};
use crate::Time;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// A millisecond in ps.
const MS: Time = 1_000_000_000;

/// How credits are debited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Debit {
    /// The vCPU running at each tick pays a whole tick (Xen 3.x).
    #[default]
    TickSample,
    /// Exact run time at `credits_per_tick` per tick (later Xen).
    Exact,
}

/// Credit1 parameters (defaults from Xen 3.x).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Credit1Config {
    /// Tick length. Default 10 ms.
    pub tick: Time,
    /// Ticks per time slice. Default 3 (30 ms).
    pub ticks_per_slice: u32,
    /// Ticks per accounting period. Default 3 (30 ms).
    pub ticks_per_acct: u32,
    /// Credits per tick. Default 100.
    pub credits_per_tick: i64,
    /// Credit of a new vCPU. Default 0 (Xen's `csched_vcpu_init`; F §4.2
    /// says 100 — an option).
    pub initial_credit: i64,
    /// Debit mode.
    pub debit: Debit,
    /// Boost on wake-up. Default true.
    pub boost: bool,
}

impl Default for Credit1Config {
    fn default() -> Self {
        Self {
            tick: 10 * MS,
            ticks_per_slice: 3,
            ticks_per_acct: 3,
            credits_per_tick: 100,
            initial_credit: 0,
            debit: Debit::TickSample,
            boost: true,
        }
    }
}

/// Credit1 priorities (higher runs first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Priority {
    /// Credit < 0.
    Over = 0,
    /// Credit ≥ 0.
    Under = 1,
    /// Woken while UNDER.
    Boost = 2,
}

#[derive(Clone, Debug)]
struct Dom {
    weight: u32,
    cap: u32,
    vcpus: Vec<usize>,
}

#[derive(Clone, Debug)]
struct Vcpu {
    dom: usize,
    credit: i64,
    pri: Priority,
    runnable: bool,
    parked: bool,
    active: bool,
    pcpu: usize,
    pin: Option<Vec<usize>>,
    in_runq: bool,
    /// ps of run time not yet converted to credits (exact debit).
    burn_rem: Time,
    burn_since: Time,
}

#[derive(Clone, Debug, Default)]
struct Pcpu {
    current: Option<usize>,
    runq: VecDeque<usize>,
    slice_end: Time,
    resched: bool,
}

/// The credit1 model. See the module docs.
#[derive(Debug)]
pub struct Credit1 {
    cfg: Credit1Config,
    doms: Vec<Dom>,
    /// Active domains in Xen's list order.
    active_doms: Vec<usize>,
    vcpus: Vec<Vcpu>,
    pcpus: Vec<Pcpu>,
    clock: RunClock,
    next_tick: Time,
    ticks: u64,
    now: Time,
    trace: Option<Vec<Switch>>,
}

impl Credit1 {
    /// A host with `pcpus` PCPUs.
    pub fn new(pcpus: usize, cfg: Credit1Config) -> Self {
        let next_tick = cfg.tick;
        Self {
            cfg,
            doms: Vec::new(),
            active_doms: Vec::new(),
            vcpus: Vec::new(),
            pcpus: vec![Pcpu::default(); pcpus.max(1)],
            clock: RunClock::default(),
            next_tick,
            ticks: 0,
            now: 0,
            trace: None,
        }
    }

    /// Current credit of a vCPU.
    pub fn credit(&self, v: usize) -> i64 {
        self.vcpus[v].credit
    }
    /// Current priority of a vCPU.
    pub fn priority(&self, v: usize) -> Priority {
        self.vcpus[v].pri
    }
    /// Whether a vCPU is parked by its cap.
    pub fn parked(&self, v: usize) -> bool {
        self.vcpus[v].parked
    }

    fn credits_per_acct(&self) -> i64 {
        self.cfg.credits_per_tick * self.cfg.ticks_per_acct as i64
    }
    fn slice(&self) -> Time {
        self.cfg.tick * self.cfg.ticks_per_slice as Time
    }
    fn allowed(&self, v: usize, p: usize) -> bool {
        self.vcpus[v].pin.as_ref().is_none_or(|s| s.contains(&p))
    }

    fn acct_start(&mut self, v: usize) {
        if !self.vcpus[v].active {
            self.vcpus[v].active = true;
            let d = self.vcpus[v].dom;
            if !self.active_doms.contains(&d) {
                self.active_doms.push(d);
            }
        }
    }
    fn acct_stop(&mut self, v: usize) {
        self.vcpus[v].active = false;
        let d = self.vcpus[v].dom;
        if !self.doms[d].vcpus.iter().any(|&w| self.vcpus[w].active) {
            self.active_doms.retain(|&x| x != d);
        }
    }

    /// Exact debit of the running vCPU up to `now`.
    fn burn(&mut self, v: usize, now: Time) {
        if self.cfg.debit != Debit::Exact {
            return;
        }
        let vc = &mut self.vcpus[v];
        let ran = now.saturating_sub(vc.burn_since);
        vc.burn_since = now;
        let per_credit = self.cfg.tick / self.cfg.credits_per_tick as Time;
        let total = vc.burn_rem + ran;
        vc.credit -= (total / per_credit) as i64;
        vc.burn_rem = total % per_credit;
        if ran > 0 {
            self.acct_start(v);
        }
    }

    fn runq_insert(&mut self, p: usize, v: usize) {
        let pri = self.vcpus[v].pri;
        let q = &self.pcpus[p].runq;
        let pos = q
            .iter()
            .position(|&w| self.vcpus[w].pri < pri)
            .unwrap_or(q.len());
        self.pcpus[p].runq.insert(pos, v);
        self.vcpus[v].in_runq = true;
    }
    fn runq_remove(&mut self, v: usize) {
        if self.vcpus[v].in_runq {
            let p = self.vcpus[v].pcpu;
            self.pcpus[p].runq.retain(|&w| w != v);
            self.vcpus[v].in_runq = false;
        }
    }
    fn running_on(&self, v: usize) -> Option<usize> {
        self.pcpus.iter().position(|p| p.current == Some(v))
    }

    /// Xen's `__runq_tickle`: preempt the local PCPU if the newcomer has a
    /// higher priority, and wake idle PCPUs that may run it so they steal.
    fn tickle(&mut self, p: usize, v: usize) {
        let pri = self.vcpus[v].pri;
        match self.pcpus[p].current {
            None => self.pcpus[p].resched = true,
            Some(c) if pri > self.vcpus[c].pri => self.pcpus[p].resched = true,
            Some(_) => {
                for q in 0..self.pcpus.len() {
                    if q != p && self.pcpus[q].current.is_none() && self.allowed(v, q) {
                        self.pcpus[q].resched = true;
                        break;
                    }
                }
            }
        }
    }

    fn make_runnable(&mut self, v: usize, boost: bool) {
        if self.running_on(v).is_some() || self.vcpus[v].in_runq {
            return;
        }
        if boost && self.cfg.boost && self.vcpus[v].pri == Priority::Under && !self.vcpus[v].parked
        {
            self.vcpus[v].pri = Priority::Boost;
        }
        let p = self.vcpus[v].pcpu;
        self.runq_insert(p, v);
        self.tickle(p, v);
    }

    fn tick(&mut self, now: Time) {
        for p in 0..self.pcpus.len() {
            if let Some(v) = self.pcpus[p].current {
                match self.cfg.debit {
                    Debit::TickSample => {
                        self.vcpus[v].credit -= self.cfg.credits_per_tick;
                        self.acct_start(v);
                    }
                    Debit::Exact => self.burn(v, now),
                }
                if self.vcpus[v].pri == Priority::Boost {
                    self.vcpus[v].pri = Priority::Under;
                }
            }
        }
        self.ticks += 1;
        if self.ticks.is_multiple_of(self.cfg.ticks_per_acct as u64) {
            self.acct();
        }
    }

    fn acct(&mut self) {
        let per_acct = self.credits_per_acct();
        let active_count = |s: &Self, d: usize| {
            s.doms[d]
                .vcpus
                .iter()
                .filter(|&&v| s.vcpus[v].active)
                .count() as i64
        };
        let weight_total: i64 = self
            .active_doms
            .iter()
            .map(|&d| self.doms[d].weight as i64 * active_count(self, d))
            .sum();
        if weight_total == 0 {
            return;
        }
        let mut credit_total = per_acct * self.pcpus.len() as i64;
        let mut weight_left = weight_total;
        let mut credit_xtra = false;
        let order = self.active_doms.clone();
        let mut changes = Vec::new();
        for d in order {
            let n = active_count(self, d);
            if n == 0 {
                continue;
            }
            let w = self.doms[d].weight as i64;
            weight_left -= w * n;
            let mut peak = n * per_acct;
            let mut cap_share = 0;
            if self.doms[d].cap != 0 {
                let c = (self.doms[d].cap as i64 * per_acct + 99) / 100;
                peak = peak.min(c);
                cap_share = (c + n - 1) / n;
            }
            let mut fair = (credit_total * w * n + weight_total - 1) / weight_total;
            if fair < peak {
                credit_xtra = true;
            } else {
                if weight_left != 0 {
                    credit_total += ((fair - peak) * weight_total + weight_left - 1) / weight_left;
                }
                if credit_xtra {
                    // Xen lazily moves a domain with spare credit to the head.
                    self.active_doms.retain(|&x| x != d);
                    self.active_doms.insert(0, d);
                }
                fair = peak;
            }
            let per_vcpu = (fair + n - 1) / n;
            for &v in &self.doms[d].vcpus.clone() {
                if !self.vcpus[v].active {
                    continue;
                }
                self.vcpus[v].credit += per_vcpu;
                let credit = self.vcpus[v].credit;
                if credit < 0 {
                    self.vcpus[v].pri = Priority::Over;
                    if self.doms[d].cap != 0 && credit < -cap_share && !self.vcpus[v].parked {
                        changes.push((v, true));
                    }
                    if credit < -per_acct {
                        self.vcpus[v].credit = -per_acct;
                    }
                } else {
                    self.vcpus[v].pri = Priority::Under;
                    if self.vcpus[v].parked {
                        changes.push((v, false));
                    }
                    if credit > per_acct {
                        self.vcpus[v].credit = 0;
                        self.acct_stop(v);
                    }
                }
            }
        }
        // Priorities changed: re-sort every run queue (Xen's runq_sort).
        for p in 0..self.pcpus.len() {
            let mut q: Vec<usize> = self.pcpus[p].runq.drain(..).collect();
            q.sort_by(|&a, &b| self.vcpus[b].pri.cmp(&self.vcpus[a].pri));
            self.pcpus[p].runq = q.into();
        }
        for (v, park) in changes {
            if park {
                self.vcpus[v].parked = true;
                self.runq_remove(v);
                if let Some(p) = self.running_on(v) {
                    self.pcpus[p].resched = true;
                }
            } else {
                // vcpu_unpause runs before the flag is cleared: no BOOST.
                if self.vcpus[v].runnable {
                    self.make_runnable(v, true);
                }
                self.vcpus[v].parked = false;
            }
        }
    }

    fn steal(&mut self, p: usize, than: Option<Priority>) -> Option<usize> {
        let n = self.pcpus.len();
        for k in 1..n {
            let q = (p + k) % n;
            let found = self.pcpus[q]
                .runq
                .iter()
                .copied()
                .find(|&w| than.is_none_or(|t| self.vcpus[w].pri > t) && self.allowed(w, p));
            if let Some(w) = found {
                self.runq_remove(w);
                self.vcpus[w].pcpu = p;
                return Some(w);
            }
        }
        None
    }

    /// Xen's `csched_schedule` on PCPU `p`.
    fn schedule(&mut self, p: usize, now: Time) {
        self.pcpus[p].resched = false;
        let cur = self.pcpus[p].current;
        if let Some(c) = cur {
            self.burn(c, now);
            if self.vcpus[c].runnable && !self.vcpus[c].parked {
                self.runq_insert(p, c);
            }
        }
        let head = self.pcpus[p].runq.front().copied();
        let next = match head {
            Some(h) if self.vcpus[h].pri > Priority::Over => {
                self.runq_remove(h);
                Some(h)
            }
            _ => match self.steal(p, head.map(|h| self.vcpus[h].pri)) {
                Some(w) => Some(w),
                None => {
                    if let Some(h) = head {
                        self.runq_remove(h);
                    }
                    head
                }
            },
        };
        if next != cur {
            if let Some(c) = cur {
                self.clock.stop(c, now);
            }
            if let Some(n) = next {
                self.clock.start(n, now);
                self.vcpus[n].burn_since = now;
            }
            self.pcpus[p].current = next;
            if let Some(t) = self.trace.as_mut() {
                t.push(Switch {
                    time: now,
                    pcpu: p,
                    vcpu: next,
                });
            }
        }
        self.pcpus[p].slice_end = if next.is_some() {
            now + self.slice()
        } else {
            Time::MAX
        };
    }

    fn run_pending(&mut self, now: Time) {
        // A reschedule can tickle another PCPU; loop until quiet.
        for _ in 0..4 * self.pcpus.len() + 4 {
            let Some(p) = self.pcpus.iter().position(|p| p.resched) else {
                return;
            };
            self.schedule(p, now);
        }
    }
}

impl CpuScheduler for Credit1 {
    fn name(&self) -> &'static str {
        "credit1"
    }
    fn pcpus(&self) -> usize {
        self.pcpus.len()
    }
    fn add_domain(&mut self) -> usize {
        self.doms.push(Dom {
            weight: 256,
            cap: 0,
            vcpus: Vec::new(),
        });
        self.doms.len() - 1
    }
    fn add_vcpu(&mut self, domain: usize, pin: Option<Vec<usize>>) -> usize {
        let v = self.vcpus.len();
        let pcpu = match &pin {
            Some(s) if !s.is_empty() => s[0] % self.pcpus.len(),
            _ => v % self.pcpus.len(),
        };
        self.vcpus.push(Vcpu {
            dom: domain,
            credit: self.cfg.initial_credit,
            pri: if self.cfg.initial_credit < 0 {
                Priority::Over
            } else {
                Priority::Under
            },
            runnable: false,
            parked: false,
            active: false,
            pcpu,
            pin,
            in_runq: false,
            burn_rem: 0,
            burn_since: 0,
        });
        self.doms[domain].vcpus.push(v);
        self.clock.add();
        v
    }
    fn wake(&mut self, now: Time, v: usize) {
        self.now = now;
        if self.vcpus[v].runnable {
            return;
        }
        self.vcpus[v].runnable = true;
        if !self.vcpus[v].parked {
            self.make_runnable(v, true);
        }
        self.run_pending(now);
    }
    fn block(&mut self, now: Time, v: usize) {
        self.now = now;
        self.vcpus[v].runnable = false;
        self.runq_remove(v);
        if let Some(p) = self.running_on(v) {
            self.pcpus[p].resched = true;
        }
        self.run_pending(now);
    }
    fn poll(&mut self, now: Time) {
        self.now = now;
        while self.next_tick <= now {
            let t = self.next_tick;
            self.tick(t);
            self.next_tick += self.cfg.tick;
        }
        for p in 0..self.pcpus.len() {
            if self.pcpus[p].slice_end <= now {
                self.pcpus[p].resched = true;
            }
        }
        self.run_pending(now);
    }
    fn poll_at(&self) -> Time {
        self.pcpus
            .iter()
            .map(|p| p.slice_end)
            .min()
            .unwrap_or(Time::MAX)
            .min(self.next_tick)
    }
    fn current(&self, pcpu: usize) -> Option<usize> {
        self.pcpus[pcpu].current
    }
    fn runtime(&self, v: usize, now: Time) -> Time {
        self.clock.read(v, now)
    }
    fn set_cap(&mut self, _now: Time, domain: usize, cap: u32) -> Result<(), SchedError> {
        let d = self
            .doms
            .get_mut(domain)
            .ok_or(SchedError::UnknownDomain(domain))?;
        if cap > 100 * d.vcpus.len().max(1) as u32 {
            return Err(SchedError::Range(format!(
                "cap {cap} % exceeds 100 % per vCPU"
            )));
        }
        d.cap = cap;
        Ok(())
    }
    fn set_weight(&mut self, _now: Time, domain: usize, weight: u32) -> Result<(), SchedError> {
        if !(1..=65535).contains(&weight) {
            return Err(SchedError::Range(format!(
                "weight {weight} is not in 1..=65535"
            )));
        }
        let d = self
            .doms
            .get_mut(domain)
            .ok_or(SchedError::UnknownDomain(domain))?;
        d.weight = weight;
        Ok(())
    }
    fn set_quota(&mut self, _: Time, _: usize, _: Option<Time>, _: Time) -> Result<(), SchedError> {
        Err(SchedError::Unsupported("a CFS quota", "credit1"))
    }
    fn enable_trace(&mut self) {
        self.trace.get_or_insert_with(Vec::new);
    }
    fn trace(&self) -> &[Switch] {
        self.trace.as_deref().unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::drive;
    use super::*;

    fn runs(s: &Credit1, v: usize, until: Time) -> Vec<(Time, Time)> {
        // Intervals during which v ran, from the trace: from a switch to v
        // on a PCPU to the next switch on that PCPU.
        let mut out = Vec::new();
        let mut start: Option<(Time, usize)> = None;
        for sw in s.trace() {
            match start {
                None if sw.vcpu == Some(v) => start = Some((sw.time, sw.pcpu)),
                Some((st, p)) if sw.pcpu == p && sw.vcpu != Some(v) => {
                    out.push((st, sw.time));
                    start = None;
                }
                _ => {}
            }
        }
        if let Some((st, _)) = start {
            out.push((st, until));
        }
        out
    }

    /// Hand-worked trace: one PCPU, one always-runnable vCPU capped at 50 %,
    /// tick sampling, initial credit 0. Ticks charge 100 per 10 ms; each
    /// 30 ms accounting adds ⌈50·300/100⌉ = 150 and parks when credit <
    /// −150: credit −300+150 = −150 at 30 ms (not parked), −450+150 = −300 at
    /// 60 ms (parked), −150 at 90 ms (parked), 0 at 120 ms (UNDER, unparked,
    /// no BOOST). Then the same again: run 120–180, parked 180–240.
    #[test]
    fn capped_vcpu_is_parked_and_resumed() {
        let mut s = Credit1::new(1, Credit1Config::default());
        s.enable_trace();
        let d = s.add_domain();
        let v = s.add_vcpu(d, None);
        s.set_cap(0, d, 50).unwrap();
        s.wake(0, v);
        drive(&mut s, 60 * MS);
        assert!(s.parked(v));
        assert_eq!(s.credit(v), -300);
        drive(&mut s, 120 * MS);
        assert!(!s.parked(v));
        assert_eq!(s.credit(v), 0);
        assert_eq!(s.priority(v), Priority::Under); // not boosted on unpark
        drive(&mut s, 300 * MS);
        assert_eq!(
            runs(&s, v, 300 * MS),
            vec![(0, 60 * MS), (120 * MS, 180 * MS), (240 * MS, 300 * MS)]
        );
        assert_eq!(s.runtime(v, 300 * MS), 180 * MS);
    }

    /// Hand-worked: `a` wakes at 0 (BOOST), is charged at the 10 ms tick and
    /// drops to UNDER; `b` wakes at 15 ms UNDER → BOOST and preempts it at
    /// once; `b` blocks at 16 ms (`a` resumes), wakes at 17 ms (preempts
    /// again) and, found running at the 20 ms tick, loses BOOST.
    #[test]
    fn boost_on_wake_preempts() {
        let mut s = Credit1::new(1, Credit1Config::default());
        s.enable_trace();
        let (a, b) = (s.add_domain(), s.add_domain());
        let va = s.add_vcpu(a, None);
        let vb = s.add_vcpu(b, None);
        s.wake(0, va);
        assert_eq!(s.priority(va), Priority::Boost);
        drive(&mut s, 15 * MS);
        assert_eq!(s.priority(va), Priority::Under);
        s.wake(15 * MS, vb);
        assert_eq!(s.current(0), Some(vb));
        s.block(16 * MS, vb);
        assert_eq!(s.current(0), Some(va));
        s.wake(17 * MS, vb);
        assert_eq!(s.priority(vb), Priority::Boost);
        assert_eq!(s.current(0), Some(vb));
        drive(&mut s, 20 * MS);
        assert_eq!(s.priority(vb), Priority::Under);
        assert_eq!(s.credit(vb), -100);
        let t: Vec<_> = s.trace().iter().map(|x| (x.time / MS, x.vcpu)).collect();
        assert_eq!(
            t,
            vec![
                (0, Some(va)),
                (15, Some(vb)),
                (16, Some(va)),
                (17, Some(vb))
            ]
        );
    }

    /// Two vCPUs queued on PCPU 0: the idle PCPU 1 is tickled and steals the
    /// second; pinned to PCPU 0 it cannot, and they share PCPU 0 by slices.
    #[test]
    fn idle_pcpu_steals_unless_pinned() {
        let mut s = Credit1::new(2, Credit1Config::default());
        let (a, b) = (s.add_domain(), s.add_domain());
        let va = s.add_vcpu(a, Some(vec![0]));
        let vb = s.add_vcpu(b, None);
        // vb's home is PCPU 1 (round robin); move both to 0 by pinning a.
        s.vcpus[vb].pcpu = 0;
        s.wake(0, va);
        s.wake(0, vb);
        assert_eq!(s.current(0), Some(va));
        assert_eq!(s.current(1), Some(vb));

        let mut s = Credit1::new(2, Credit1Config::default());
        s.enable_trace();
        let (a, b) = (s.add_domain(), s.add_domain());
        let va = s.add_vcpu(a, Some(vec![0]));
        let vb = s.add_vcpu(b, Some(vec![0]));
        s.wake(0, va);
        s.wake(0, vb);
        assert_eq!(s.current(1), None);
        drive(&mut s, 60 * MS);
        // Slices of 30 ms alternate on PCPU 0.
        assert_eq!(s.runtime(va, 60 * MS), 30 * MS);
        assert_eq!(s.runtime(vb, 60 * MS), 30 * MS);
    }

    #[test]
    fn weights_split_credit() {
        // Two busy domains on one PCPU, weights 512:256, exact debit: over
        // 3 s the heavier gets ~2/3 of the CPU.
        let cfg = Credit1Config {
            debit: Debit::Exact,
            ..Default::default()
        };
        let mut s = Credit1::new(1, cfg);
        let (a, b) = (s.add_domain(), s.add_domain());
        s.set_weight(0, a, 512).unwrap();
        let va = s.add_vcpu(a, None);
        let vb = s.add_vcpu(b, None);
        s.wake(0, va);
        s.wake(0, vb);
        drive(&mut s, 3000 * MS);
        let ra = s.runtime(va, 3000 * MS) as f64;
        let rb = s.runtime(vb, 3000 * MS) as f64;
        let share = ra / (ra + rb);
        assert!((share - 2.0 / 3.0).abs() < 0.04, "share {share}");
    }
    /// Hand-worked trace: one domain with two busy vCPUs (PCPUs 0 and 1 of
    /// 4), capped at 100 %, tick sampling, initial credit 0. The cap is the
    /// domain's: each accounting gives the domain 300 credits, the lesser of
    /// 2 × 300 and ⌈100·300/100⌉, so 150 per vCPU, and parks a vCPU below
    /// −⌈300/2⌉ = −150. Each vCPU pays 100 per tick, so both follow the 50 %
    /// trace above: credit −150 at 30 ms (−300 plus 150; not parked), −300
    /// at 60 ms (parked), −150 at 90 ms, 0 at 120 ms (unparked); they run
    /// 0–60, 120–180, 240–300 ms. Together: one PCPU's worth.
    #[test]
    fn two_vcpu_domain_capped_at_100_gets_one_pcpu() {
        let mut s = Credit1::new(4, Credit1Config::default());
        s.enable_trace();
        let d = s.add_domain();
        let (v0, v1) = (s.add_vcpu(d, None), s.add_vcpu(d, None));
        s.set_cap(0, d, 100).unwrap();
        s.wake(0, v0);
        s.wake(0, v1);
        assert_eq!((s.current(0), s.current(1)), (Some(v0), Some(v1)));
        drive(&mut s, 30 * MS);
        assert_eq!((s.credit(v0), s.credit(v1)), (-150, -150));
        assert!(!s.parked(v0) && !s.parked(v1));
        drive(&mut s, 60 * MS);
        assert!(s.parked(v0) && s.parked(v1));
        assert_eq!(s.credit(v0), -300);
        drive(&mut s, 120 * MS);
        assert!(!s.parked(v0) && !s.parked(v1));
        drive(&mut s, 300 * MS);
        let want = vec![(0, 60 * MS), (120 * MS, 180 * MS), (240 * MS, 300 * MS)];
        assert_eq!(runs(&s, v0, 300 * MS), want);
        assert_eq!(runs(&s, v1, 300 * MS), want);
        drive(&mut s, 1200 * MS);
        let total = s.runtime(v0, 1200 * MS) + s.runtime(v1, 1200 * MS);
        assert_eq!(total, 1200 * MS); // one PCPU in total
                                      // A cap is bounded by 100 % per vCPU of the domain.
        assert!(s.set_cap(0, d, 200).is_ok());
        assert!(s.set_cap(0, d, 201).is_err());
    }

    /// Hand-worked work stealing with a multi-vCPU domain. First, both vCPUs
    /// of one domain start on PCPU 0: the second, queued behind the first,
    /// is tickled onto the idle PCPU 1 at once. Then 2 PCPUs; domain A's
    /// vCPUs a0 (home PCPU 0) and a1 (1), domain B's b (home 0: round robin). All wake at 0 with BOOST: a0 runs
    /// on 0, a1 on 1, b waits on 0 (no PCPU is idle, BOOST does not preempt
    /// BOOST). a1 blocks at 5 ms: PCPU 1 is idle, finds nothing local and
    /// steals b from PCPU 0.
    #[test]
    fn idle_pcpu_steals_a_vcpu_of_another_domain() {
        let mut s = Credit1::new(2, Credit1Config::default());
        s.enable_trace();
        let d = s.add_domain();
        let (d0, d1) = (s.add_vcpu(d, None), s.add_vcpu(d, None));
        s.vcpus[d1].pcpu = 0;
        s.wake(0, d0);
        s.wake(0, d1);
        let t: Vec<_> = s.trace().iter().map(|x| (x.time, x.pcpu, x.vcpu)).collect();
        assert_eq!(t, vec![(0, 0, Some(d0)), (0, 1, Some(d1))]);
        drive(&mut s, 90 * MS);
        assert_eq!(s.runtime(d0, 90 * MS) + s.runtime(d1, 90 * MS), 180 * MS);

        let mut s = Credit1::new(2, Credit1Config::default());
        s.enable_trace();
        let (a, b) = (s.add_domain(), s.add_domain());
        let (a0, a1) = (s.add_vcpu(a, None), s.add_vcpu(a, None));
        let vb = s.add_vcpu(b, None);
        for v in [a0, a1, vb] {
            s.wake(0, v);
        }
        assert_eq!((s.current(0), s.current(1)), (Some(a0), Some(a1)));
        s.block(5 * MS, a1);
        assert_eq!((s.current(0), s.current(1)), (Some(a0), Some(vb)));
        let t: Vec<_> = s
            .trace()
            .iter()
            .map(|x| (x.time / MS, x.pcpu, x.vcpu))
            .collect();
        assert_eq!(
            t,
            vec![(0, 0, Some(a0)), (0, 1, Some(a1)), (5, 1, Some(vb))]
        );
        // a1 wakes at 7 ms (still BOOST: never ticked) on PCPU 1, where b
        // (BOOST) runs: it queues, and PCPU 0 is busy, so nobody steals it.
        // The 10 ms tick drops a0 and b to UNDER without a reschedule; at
        // the end of b's slice (5 + 30 = 35 ms) a1 outranks it and runs.
        s.wake(7 * MS, a1);
        assert_eq!((s.current(0), s.current(1)), (Some(a0), Some(vb)));
        drive(&mut s, 34 * MS);
        assert_eq!(s.current(1), Some(vb));
        drive(&mut s, 35 * MS);
        assert_eq!(s.current(1), Some(a1));
    }
}
