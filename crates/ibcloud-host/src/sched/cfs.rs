//! Linux CFS with CPU bandwidth control, as KVM guests see it (G §3.1):
//! every VM is a cgroup with `cpu.cfs_quota_us` / `cpu.cfs_period_us`
//! (period default 100 ms) and its vCPUs are threads pinned to PCPUs.
//!
//! - Per PCPU, the runnable vCPUs are ordered by virtual run time
//!   (`vruntime += ran × 1024 / shares`); the one with the least runs for a
//!   slice of `max(sched_latency × shares / Σshares, min_granularity)`.
//! - A waking vCPU's vruntime is raised to at least `min_vruntime −
//!   sched_latency / 2` (gentle sleeper credit) and it preempts the running
//!   one when that one is ahead by more than `wakeup_granularity`.
//! - Bandwidth: a cgroup's runtime is refilled to its quota at every period
//!   boundary (no carry-over); when it reaches 0 the cgroup is throttled
//!   (its vCPUs leave the CPU) until the next refill. Throttling is exact
//!   (the kernel's slack timers and 5 ms runtime slices are not modelled).
//! - No load balancing: vCPUs stay where they are pinned (unpinned ones are
//!   placed round robin when created).

use super::{CpuScheduler, RunClock, SchedError, Switch};
use crate::Time;
use serde::{Deserialize, Serialize};

const MS: Time = 1_000_000_000;
const US: Time = 1_000_000;
const NICE_0: u64 = 1024;

/// CFS parameters (Linux defaults for a 2-CPU machine are close to these).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct CfsConfig {
    /// Default bandwidth period. Default 100 ms.
    pub period: Time,
    /// Target latency. Default 6 ms.
    pub sched_latency: Time,
    /// Minimum slice. Default 0.75 ms.
    pub min_granularity: Time,
    /// Wake-up preemption granularity. Default 1 ms.
    pub wakeup_granularity: Time,
}

impl Default for CfsConfig {
    fn default() -> Self {
        Self {
            period: 100 * MS,
            sched_latency: 6 * MS,
            min_granularity: 750 * US,
            wakeup_granularity: MS,
        }
    }
}

#[derive(Clone, Debug)]
struct Group {
    shares: u64,
    quota: Option<Time>,
    period: Time,
    runtime_left: Time,
    next_refill: Time,
    throttled: bool,
    vcpus: Vec<usize>,
}

#[derive(Clone, Debug)]
struct Vcpu {
    group: usize,
    pcpu: usize,
    runnable: bool,
    vruntime: u128,
}

#[derive(Clone, Debug, Default)]
struct Pcpu {
    current: Option<usize>,
    since: Time,
    slice_end: Time,
    min_vruntime: u128,
    resched: bool,
}

/// The CFS-bandwidth model. See the module docs.
#[derive(Debug)]
pub struct Cfs {
    cfg: CfsConfig,
    groups: Vec<Group>,
    vcpus: Vec<Vcpu>,
    pcpus: Vec<Pcpu>,
    clock: RunClock,
    trace: Option<Vec<Switch>>,
}

impl Cfs {
    /// A host with `pcpus` PCPUs.
    pub fn new(pcpus: usize, cfg: CfsConfig) -> Self {
        Self {
            cfg,
            groups: Vec::new(),
            vcpus: Vec::new(),
            pcpus: vec![Pcpu::default(); pcpus.max(1)],
            clock: RunClock::default(),
            trace: None,
        }
    }

    /// Whether a cgroup is throttled.
    pub fn throttled(&self, group: usize) -> bool {
        self.groups[group].throttled
    }

    fn eligible(&self, v: usize) -> bool {
        self.vcpus[v].runnable && !self.groups[self.vcpus[v].group].throttled
    }

    /// Charges the running vCPU of `p` up to `now`.
    fn update_curr(&mut self, p: usize, now: Time) {
        let Some(v) = self.pcpus[p].current else {
            return;
        };
        let ran = now.saturating_sub(self.pcpus[p].since);
        self.pcpus[p].since = now;
        if ran == 0 {
            return;
        }
        let g = self.vcpus[v].group;
        self.vcpus[v].vruntime += ran as u128 * NICE_0 as u128 / self.groups[g].shares as u128;
        if self.groups[g].quota.is_some() {
            let left = self.groups[g].runtime_left.saturating_sub(ran);
            self.groups[g].runtime_left = left;
            if left == 0 {
                self.throttle(g);
            }
        }
    }

    fn throttle(&mut self, g: usize) {
        self.groups[g].throttled = true;
        for &v in &self.groups[g].vcpus {
            let p = self.vcpus[v].pcpu;
            if self.pcpus[p].current == Some(v) {
                self.pcpus[p].resched = true;
            }
        }
    }

    fn refill(&mut self, now: Time) {
        for g in 0..self.groups.len() {
            while self.groups[g].next_refill <= now {
                let period = self.groups[g].period;
                self.groups[g].next_refill += period;
                // Charge the running time before the refill.
                for &v in &self.groups[g].vcpus.clone() {
                    let p = self.vcpus[v].pcpu;
                    if self.pcpus[p].current == Some(v) {
                        self.update_curr(p, now);
                    }
                }
                if let Some(q) = self.groups[g].quota {
                    self.groups[g].runtime_left = q;
                    if self.groups[g].throttled {
                        self.groups[g].throttled = false;
                        for &v in &self.groups[g].vcpus.clone() {
                            self.pcpus[self.vcpus[v].pcpu].resched = true;
                        }
                    }
                }
            }
        }
    }

    fn pick(&self, p: usize) -> Option<usize> {
        (0..self.vcpus.len())
            .filter(|&v| self.vcpus[v].pcpu == p && self.eligible(v))
            .min_by_key(|&v| (self.vcpus[v].vruntime, v))
    }

    fn slice(&self, p: usize, v: usize) -> Time {
        let total: u64 = (0..self.vcpus.len())
            .filter(|&w| self.vcpus[w].pcpu == p && self.eligible(w))
            .map(|w| self.groups[self.vcpus[w].group].shares)
            .sum();
        let w = self.groups[self.vcpus[v].group].shares;
        let s = (self.cfg.sched_latency as u128 * w as u128 / total.max(1) as u128) as Time;
        s.max(self.cfg.min_granularity)
    }

    fn schedule(&mut self, p: usize, now: Time) {
        self.pcpus[p].resched = false;
        self.update_curr(p, now);
        let cur = self.pcpus[p].current;
        let next = self.pick(p);
        if let Some(n) = next {
            let mv = &mut self.pcpus[p].min_vruntime;
            *mv = (*mv).max(self.vcpus[n].vruntime);
        }
        if next != cur {
            if let Some(c) = cur {
                self.clock.stop(c, now);
            }
            if let Some(n) = next {
                self.clock.start(n, now);
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
        self.pcpus[p].since = now;
        self.pcpus[p].slice_end = match next {
            Some(n) => now + self.slice(p, n),
            None => Time::MAX,
        };
    }

    fn run_pending(&mut self, now: Time) {
        // Throttling a group while scheduling one PCPU reschedules the
        // others running its vCPUs: loop until quiet.
        for _ in 0..4 * self.pcpus.len() + 4 {
            let Some(p) = self.pcpus.iter().position(|p| p.resched) else {
                return;
            };
            self.schedule(p, now);
        }
    }

    /// When the vCPUs of group `g` that run now exhaust its runtime
    /// together: with `k` of them running since `s_i` (not yet charged),
    /// Σ (t − s_i) = runtime_left.
    fn group_throttle_at(&self, g: usize) -> Time {
        let grp = &self.groups[g];
        if grp.quota.is_none() || grp.throttled {
            return Time::MAX;
        }
        let (mut k, mut since) = (0u128, 0u128);
        for &v in &grp.vcpus {
            let p = self.vcpus[v].pcpu;
            if self.pcpus[p].current == Some(v) {
                k += 1;
                since += self.pcpus[p].since as u128;
            }
        }
        if k == 0 {
            return Time::MAX;
        }
        (grp.runtime_left as u128 + since).div_ceil(k) as Time
    }

    /// When the running vCPU of `p` is throttled (its group's runtime
    /// runs out, shared with the group's other running vCPUs).
    fn throttle_at(&self, p: usize) -> Time {
        match self.pcpus[p].current {
            Some(v) => self.group_throttle_at(self.vcpus[v].group),
            None => Time::MAX,
        }
    }

    /// Charges every running vCPU of each group whose runtime ran out by
    /// `now` (which throttles it and reschedules their PCPUs).
    fn charge_exhausted(&mut self, now: Time) {
        for g in 0..self.groups.len() {
            if self.group_throttle_at(g) <= now {
                for v in self.groups[g].vcpus.clone() {
                    let p = self.vcpus[v].pcpu;
                    if self.pcpus[p].current == Some(v) {
                        self.update_curr(p, now);
                    }
                }
            }
        }
    }
}

impl CpuScheduler for Cfs {
    fn name(&self) -> &'static str {
        "cfs"
    }
    fn pcpus(&self) -> usize {
        self.pcpus.len()
    }
    fn add_domain(&mut self) -> usize {
        self.groups.push(Group {
            shares: NICE_0,
            quota: None,
            period: self.cfg.period,
            runtime_left: 0,
            next_refill: self.cfg.period,
            throttled: false,
            vcpus: Vec::new(),
        });
        self.groups.len() - 1
    }
    fn add_vcpu(&mut self, domain: usize, pin: Option<Vec<usize>>) -> usize {
        let v = self.vcpus.len();
        let pcpu = match &pin {
            Some(s) if !s.is_empty() => s[0] % self.pcpus.len(),
            _ => v % self.pcpus.len(),
        };
        self.vcpus.push(Vcpu {
            group: domain,
            pcpu,
            runnable: false,
            vruntime: 0,
        });
        self.groups[domain].vcpus.push(v);
        self.clock.add();
        v
    }
    fn wake(&mut self, now: Time, v: usize) {
        if self.vcpus[v].runnable {
            return;
        }
        let p = self.vcpus[v].pcpu;
        self.update_curr(p, now);
        let floor = self.pcpus[p]
            .min_vruntime
            .saturating_sub(self.cfg.sched_latency as u128 / 2);
        let vc = &mut self.vcpus[v];
        vc.vruntime = vc.vruntime.max(floor);
        vc.runnable = true;
        if self.eligible(v) {
            match self.pcpus[p].current {
                None => self.pcpus[p].resched = true,
                Some(c) => {
                    if self.vcpus[c].vruntime
                        > self.vcpus[v].vruntime + self.cfg.wakeup_granularity as u128
                    {
                        self.pcpus[p].resched = true;
                    }
                }
            }
        }
        self.run_pending(now);
    }
    fn block(&mut self, now: Time, v: usize) {
        self.vcpus[v].runnable = false;
        let p = self.vcpus[v].pcpu;
        if self.pcpus[p].current == Some(v) {
            self.pcpus[p].resched = true;
        }
        self.run_pending(now);
    }
    fn poll(&mut self, now: Time) {
        self.refill(now);
        self.charge_exhausted(now);
        for p in 0..self.pcpus.len() {
            if self.pcpus[p].slice_end <= now {
                self.pcpus[p].resched = true;
            }
        }
        self.run_pending(now);
    }
    fn poll_at(&self) -> Time {
        let refill = self
            .groups
            .iter()
            .filter(|g| g.quota.is_some())
            .map(|g| g.next_refill)
            .min()
            .unwrap_or(Time::MAX);
        (0..self.pcpus.len())
            .map(|p| self.pcpus[p].slice_end.min(self.throttle_at(p)))
            .min()
            .unwrap_or(Time::MAX)
            .min(refill)
    }
    fn current(&self, pcpu: usize) -> Option<usize> {
        self.pcpus[pcpu].current
    }
    fn runtime(&self, v: usize, now: Time) -> Time {
        self.clock.read(v, now)
    }
    fn set_cap(&mut self, now: Time, domain: usize, cap: u32) -> Result<(), SchedError> {
        // A Xen-style cap maps to quota = cap % of the period (cap 0 = none),
        // at most 100 % per vCPU of the group.
        let g = self
            .groups
            .get(domain)
            .ok_or(SchedError::UnknownDomain(domain))?;
        if cap > 100 * g.vcpus.len().max(1) as u32 {
            return Err(SchedError::Range(format!(
                "cap {cap} % exceeds 100 % per vCPU"
            )));
        }
        let period = g.period;
        let quota = (cap > 0).then(|| period / 100 * cap as Time);
        self.set_quota(now, domain, quota, period)
    }
    fn set_weight(&mut self, now: Time, domain: usize, weight: u32) -> Result<(), SchedError> {
        if !(2..=262144).contains(&weight) {
            return Err(SchedError::Range(format!(
                "cpu.shares {weight} is not in 2..=262144"
            )));
        }
        let p: Vec<usize> = (0..self.pcpus.len()).collect();
        for q in p {
            self.update_curr(q, now);
        }
        self.groups
            .get_mut(domain)
            .ok_or(SchedError::UnknownDomain(domain))?
            .shares = weight as u64;
        Ok(())
    }
    fn set_quota(
        &mut self,
        now: Time,
        domain: usize,
        quota: Option<Time>,
        period: Time,
    ) -> Result<(), SchedError> {
        if !(MS..=1000 * MS).contains(&period) {
            return Err(SchedError::Range("cfs period must be 1 ms – 1 s".into()));
        }
        if quota.is_some_and(|q| q < MS) {
            return Err(SchedError::Range("cfs quota must be at least 1 ms".into()));
        }
        if domain >= self.groups.len() {
            return Err(SchedError::UnknownDomain(domain));
        }
        for q in 0..self.pcpus.len() {
            self.update_curr(q, now);
        }
        let g = &mut self.groups[domain];
        // Like writing cpu.cfs_quota_us: a new period starts now, full.
        g.quota = quota;
        g.period = period;
        g.runtime_left = quota.unwrap_or(0);
        g.next_refill = now + period;
        if g.throttled {
            g.throttled = false;
            for &v in &g.vcpus.clone() {
                let p = self.vcpus[v].pcpu;
                self.pcpus[p].resched = true;
            }
        }
        self.run_pending(now);
        Ok(())
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

    /// Hand-worked trace: a busy vCPU with quota 25 ms per 100 ms runs
    /// 0–25 ms, is throttled until the refill at 100 ms, runs 100–125 ms, …
    #[test]
    fn quota_throttles_until_next_period() {
        let mut s = Cfs::new(1, CfsConfig::default());
        s.enable_trace();
        let g = s.add_domain();
        let v = s.add_vcpu(g, Some(vec![0]));
        s.set_quota(0, g, Some(25 * MS), 100 * MS).unwrap();
        s.wake(0, v);
        drive(&mut s, 250 * MS);
        let t: Vec<_> = s.trace().iter().map(|x| (x.time / MS, x.vcpu)).collect();
        assert_eq!(
            t,
            vec![
                (0, Some(v)),
                (25, None),
                (100, Some(v)),
                (125, None),
                (200, Some(v)),
                (225, None)
            ]
        );
        assert_eq!(s.runtime(v, 250 * MS), 75 * MS);
    }

    /// Two pinned busy vCPUs on one PCPU, one throttled at 30 %: the other
    /// takes the rest; shares split an unthrottled PCPU 2:1.
    #[test]
    fn throttled_group_leaves_cpu_to_others() {
        let mut s = Cfs::new(1, CfsConfig::default());
        let (a, b) = (s.add_domain(), s.add_domain());
        let va = s.add_vcpu(a, Some(vec![0]));
        let vb = s.add_vcpu(b, Some(vec![0]));
        s.set_cap(0, a, 30).unwrap();
        s.wake(0, va);
        s.wake(0, vb);
        drive(&mut s, 1000 * MS);
        assert_eq!(s.runtime(va, 1000 * MS), 300 * MS);
        assert_eq!(s.runtime(vb, 1000 * MS), 700 * MS);

        let mut s = Cfs::new(1, CfsConfig::default());
        let (a, b) = (s.add_domain(), s.add_domain());
        s.set_weight(0, a, 2048).unwrap();
        let va = s.add_vcpu(a, Some(vec![0]));
        let vb = s.add_vcpu(b, Some(vec![0]));
        s.wake(0, va);
        s.wake(0, vb);
        drive(&mut s, 900 * MS);
        let ra = s.runtime(va, 900 * MS) as f64;
        assert!((ra / (900.0 * MS as f64) - 2.0 / 3.0).abs() < 0.01);
    }
    /// Hand-worked trace: one cgroup with two busy vCPUs pinned to PCPUs 0
    /// and 1, quota 100 ms per 100 ms (cap 100). The quota is the group's:
    /// together they drain it at 2 ms per ms, so both are throttled at 50 ms
    /// until the refill at 100 ms; run 100–150, 200–250 ms. Together: one
    /// PCPU's worth.
    #[test]
    fn two_vcpu_group_shares_its_quota() {
        let mut s = Cfs::new(2, CfsConfig::default());
        s.enable_trace();
        let g = s.add_domain();
        let v0 = s.add_vcpu(g, Some(vec![0]));
        let v1 = s.add_vcpu(g, Some(vec![1]));
        s.set_cap(0, g, 100).unwrap();
        s.wake(0, v0);
        s.wake(0, v1);
        drive(&mut s, 260 * MS);
        let t: Vec<_> = s
            .trace()
            .iter()
            .map(|x| (x.time / MS, x.pcpu, x.vcpu))
            .collect();
        assert_eq!(
            t,
            vec![
                (0, 0, Some(v0)),
                (0, 1, Some(v1)),
                (50, 0, None),
                (50, 1, None),
                (100, 0, Some(v0)),
                (100, 1, Some(v1)),
                (150, 0, None),
                (150, 1, None),
                (200, 0, Some(v0)),
                (200, 1, Some(v1)),
                (250, 0, None),
                (250, 1, None)
            ]
        );
        assert_eq!(s.runtime(v0, 260 * MS) + s.runtime(v1, 260 * MS), 300 * MS);
        // One vCPU busy: it alone may use the whole quota (one PCPU).
        s.block(260 * MS, v1);
        drive(&mut s, 400 * MS);
        assert_eq!(s.runtime(v0, 400 * MS), 150 * MS + 100 * MS);
        assert!(s.set_cap(400 * MS, g, 200).is_ok());
        assert!(s.set_cap(400 * MS, g, 201).is_err());
    }
}
