//! The DRX control plane as one deterministic state machine: the PM, one
//! HA per host and the messages between them. Fed with cumulative CQE
//! counts per VM at the times [`Drx::next_wakeup`] asks for (an interval
//! boundary, or a message arrival), it returns the caps to apply. It never
//! reads a clock: the same observation sequence gives the same records.

use super::agent::HostAgent;
use super::cap::cap_min_for;
use super::config::DrxConfig;
use super::manager::{Manager, PmOut};
use super::messages::{Mailbox, Message};
use super::placement::Placement;
use super::pricing::PriceKey;
use super::record::{
    CapCommand, DrxRecord, HardwareAction, HardwareSetting, RecordKind, Response, SmTiming,
};
use super::workload::{configure, Configuration, Priority, Workload};
use crate::Time;
use serde::Serialize;
use std::collections::BTreeMap;

/// What every actor may read: the layout, the specs and what follows.
#[derive(Debug)]
pub(crate) struct Ctx {
    pub(crate) cfg: DrxConfig,
    pub(crate) place: Placement,
    /// One per VME, in `place.vmes` order.
    pub(crate) workloads: Vec<Workload>,
    pub(crate) conf: Configuration,
    /// Per VME: in SS.
    pub(crate) in_ss: Vec<bool>,
    /// Per VM: SLA level (CQEs/s) if its VME is in SS.
    pub(crate) sla: Vec<Option<f64>>,
    /// Per VM: lowest cap (repaired mode, minimum allocation).
    pub(crate) cap_min: Vec<f64>,
    /// Per VM: Resos per epoch.
    pub(crate) vm_alloc: Vec<f64>,
    /// Per VME: the EM allocation (Resos per epoch).
    pub(crate) em_alloc: Vec<f64>,
}

/// The cluster's DRX.
#[derive(Debug)]
pub struct Drx {
    ctx: Ctx,
    pm: Manager,
    has: Vec<HostAgent>,
    mail: Mailbox,
    next_sample: Time,
    next_event: u64,
    records: Vec<DrxRecord>,
    responses: BTreeMap<u64, Response>,
    /// Responses folded out of `responses` by [`Drx::compact`] (a long-running
    /// agent), kept as the totals `response_summary` needs.
    folded: Folded,
    hardware: Vec<HardwareAction>,
    /// An SM model reports when pushes take effect.
    external_sm: bool,
}

/// Running totals of folded responses.
#[derive(Clone, Copy, Debug, Default)]
struct Folded {
    violations: usize,
    answered: usize,
    sum_s: f64,
    max_s: Option<f64>,
}

/// The summary of violation-to-cap times (G R5).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResponseSummary {
    /// Violations detected.
    pub violations: usize,
    /// Of which led to an action.
    pub answered: usize,
    /// Mean detection-to-last-action time (ms).
    pub mean_ms: Option<f64>,
    /// Largest (ms).
    pub max_ms: Option<f64>,
}

impl Drx {
    /// DRX over hosts `hosts` and VMs `vms` = (name, host index), with the
    /// ensembles of `cfg.vmes`. Runs the Workload Configurator; errors name
    /// the workload, VM or VME at fault.
    pub fn new(
        cfg: DrxConfig,
        hosts: Vec<String>,
        vms: Vec<(String, usize)>,
    ) -> Result<Self, String> {
        let mut groups = Vec::new();
        for s in &cfg.vmes {
            let idx = s
                .vms
                .iter()
                .map(|n| {
                    vms.iter()
                        .position(|(m, _)| m == n)
                        .ok_or_else(|| format!("VME '{}': unknown VM '{n}'", s.name))
                })
                .collect::<Result<Vec<_>, _>>()?;
            groups.push((s.name.clone(), idx));
        }
        let place = Placement::new(hosts, vms, groups)?;
        let workloads: Vec<Workload> = cfg
            .vmes
            .iter()
            .enumerate()
            .map(|(j, s)| Workload {
                name: s.name.clone(),
                g: s.g,
                io_min: s.io_min,
                alpha: s.alpha,
                priority: s.priority,
                links: place.hosts_of(j),
            })
            .collect();
        let links = vec![cfg.link_cqe_per_s; place.hosts.len()];
        let conf = configure(&workloads, &links, cfg.configurator)?;
        let nvm = place.vm_names.len();
        let mut in_ss = vec![false; workloads.len()];
        for &i in &conf.ss {
            in_ss[i] = true;
        }
        // A9: supply = every link's capacity in CQEs over an epoch; each EM
        // gets an equal share, split equally among its VMs (G §2.4).
        let epoch_s = cfg.epoch as f64 * 1e-12;
        let supply = cfg.link_cqe_per_s * place.hosts.len() as f64 * epoch_s;
        let em_alloc = vec![supply / workloads.len().max(1) as f64; workloads.len()];
        let mut sla = vec![None; nvm];
        let mut cap_min = vec![1.0; nvm];
        let mut vm_alloc = vec![0.0; nvm];
        for (j, s) in cfg.vmes.iter().enumerate() {
            let n = place.vmes[j].vms.len() as f64;
            let floor = if in_ss[j] { s.g } else { s.io_min };
            for &v in &place.vmes[j].vms {
                if in_ss[j] {
                    let level = s.sla.unwrap_or(s.g / n);
                    sla[v] = (level > 0.0).then_some(level);
                }
                cap_min[v] = s.cap_min.unwrap_or_else(|| cap_min_for(floor, s.g));
                vm_alloc[v] = em_alloc[j] / n;
            }
        }
        let _ = Priority::High;
        let ctx = Ctx {
            cfg,
            place,
            workloads,
            conf,
            in_ss,
            sla,
            cap_min,
            vm_alloc,
            em_alloc,
        };
        let pm = Manager::new(&ctx);
        let has = (0..ctx.place.hosts.len())
            .map(|h| HostAgent::new(h, &ctx))
            .collect();
        let mut hardware = Vec::new();
        if let Some((qos, is_static)) = ctx.cfg.policy.hardware() {
            // QoS is static (it applies to QPs created after the SM restart,
            // G §3.3) unless `qos-at = "violation"` makes DRXMax/DRXMaxQ push
            // it with the CC; CC is static for St*.
            let mut push = |setting| {
                hardware.push(HardwareAction {
                    issued: 0,
                    sent: 0,
                    applied: ctx.cfg.mad_latency,
                    sm: None,
                    setting,
                    event: None,
                })
            };
            if is_static || ctx.cfg.qos_at == super::config::QosAt::Start {
                push(qos);
            }
            if is_static {
                push(HardwareSetting::CongestionControl);
            }
        }
        let records = hardware
            .iter()
            .map(|h| DrxRecord::at(h.applied, RecordKind::Hardware))
            .collect();
        Ok(Self {
            next_sample: ctx.cfg.interval,
            pm,
            has,
            mail: Mailbox::default(),
            next_event: 0,
            records,
            responses: BTreeMap::new(),
            folded: Folded::default(),
            hardware,
            external_sm: false,
            ctx,
        })
    }

    /// When the driver must be stepped next.
    pub fn next_wakeup(&self) -> Time {
        self.mail
            .next_arrival()
            .map_or(self.next_sample, |t| t.min(self.next_sample))
    }

    /// Processes everything due by `now` (messages first, then the
    /// interval's sample), with `cum[v]` = CQEs VM `v` completed so far.
    /// Returns the caps to apply.
    pub fn step(&mut self, now: Time, cum: &[u64]) -> Vec<CapCommand> {
        let mut caps = Vec::new();
        loop {
            let msg_t = self.mail.next_arrival().filter(|&t| t <= now);
            match msg_t {
                Some(t) if t <= self.next_sample || self.next_sample > now => {
                    let (t, m) = self.mail.pop_due(t).expect("due message");
                    self.deliver(t, m, &mut caps);
                }
                _ if self.next_sample <= now => {
                    let t = self.next_sample;
                    self.sample(t, cum, &mut caps);
                    self.next_sample += self.ctx.cfg.interval;
                }
                _ => break,
            }
        }
        caps
    }

    fn pm_out(&mut self, t: Time, out: PmOut) {
        let at = t + self.ctx.cfg.pm_processing + self.ctx.cfg.message_latency;
        for (_, m) in out.to_ha {
            self.mail.send(at, m);
        }
        if !self.external_sm {
            for h in &out.hardware {
                if let Some(r) = h.event.and_then(|e| self.responses.get_mut(&e)) {
                    r.applied(h.applied);
                }
                let mut r = DrxRecord::at(h.applied, RecordKind::HardwareInForce);
                r.event = h.event;
                self.records.push(r);
            }
        }
        self.hardware.extend(out.hardware);
        self.records.extend(out.records);
    }

    fn sample(&mut self, t: Time, cum: &[u64], caps: &mut Vec<CapCommand>) {
        let interval = t.saturating_sub(1) / self.ctx.cfg.interval;
        let out = self.pm.tick(t, interval, &self.ctx);
        self.pm_out(t, out);
        for h in 0..self.has.len() {
            let out = self.has[h].sample(t, interval, cum, &self.ctx, &mut self.next_event);
            for (vm, cap) in out.caps {
                caps.push(CapCommand { time: t, vm, cap });
            }
            for r in &out.records {
                if let (RecordKind::Violation, Some(e), Some(vm), Some(pd)) =
                    (r.kind, r.event, r.vm, r.pd)
                {
                    self.responses.insert(
                        e,
                        Response {
                            event: e,
                            vm,
                            host: h,
                            pd,
                            detected: t,
                            pm_received: None,
                            actions: 0,
                            first_applied: None,
                            last_applied: None,
                        },
                    );
                }
            }
            self.records.extend(out.records);
            for m in out.to_pm {
                self.mail.send(t + self.ctx.cfg.message_latency, m);
            }
        }
    }

    fn deliver(&mut self, t: Time, m: Message, caps: &mut Vec<CapCommand>) {
        match m {
            Message::Usage { .. } | Message::Violation { .. } => {
                if let Message::Violation { event, .. } = &m {
                    if let Some(r) = self.responses.get_mut(event) {
                        r.pm_received = Some(t);
                    }
                }
                let out = self.pm.receive(t, m, &self.ctx);
                self.pm_out(t, out);
            }
            Message::CapUpdate {
                event,
                vm,
                change,
                price,
            } => {
                let h = self.ctx.place.vm_host[vm];
                if let Some((cap, r)) =
                    self.has[h].cap_update(t, event, vm, change, price, &self.ctx)
                {
                    caps.push(CapCommand { time: t, vm, cap });
                    self.records.push(r);
                    if let Some(x) = self.responses.get_mut(&event) {
                        x.applied(t);
                    }
                }
            }
            Message::Price { host, vme, price } => {
                if let Some(a) = self.has.get_mut(host) {
                    a.set_price(vme, price);
                }
            }
        }
    }

    /// Every control action so far.
    pub fn records(&self) -> &[DrxRecord] {
        &self.records
    }

    /// Hands over the records made since the last call and forgets them,
    /// and folds every response detected more than `keep` before `now`
    /// into the totals of [`Drx::response_summary`]: a long-running agent
    /// calls this each step so its memory stays bounded. `keep` must cover
    /// the slowest path from a violation to its last action (the message
    /// latencies, an SM restart); an epoch is ample.
    pub fn compact(&mut self, now: Time, keep: Time) -> Vec<DrxRecord> {
        let old: Vec<u64> = self
            .responses
            .values()
            .filter(|r| r.detected.saturating_add(keep) < now)
            .map(|r| r.event)
            .collect();
        for e in old {
            if let Some(r) = self.responses.remove(&e) {
                self.folded.violations += 1;
                if let Some(l) = r.latency() {
                    let s = l as f64 * 1e-12;
                    self.folded.answered += 1;
                    self.folded.sum_s += s;
                    self.folded.max_s = Some(self.folded.max_s.map_or(s, |m| m.max(s)));
                }
            }
        }
        std::mem::take(&mut self.records)
    }

    /// Every violation's response.
    pub fn responses(&self) -> Vec<&Response> {
        self.responses.values().collect()
    }

    /// Hardware settings pushed.
    pub fn hardware(&self) -> &[HardwareAction] {
        &self.hardware
    }

    /// An SM model times the pushes: [`Drx::sm_in_force`] reports when
    /// each took effect (instead of `sent` + `mad-latency`).
    pub fn use_external_sm(&mut self) {
        self.external_sm = true;
    }

    /// The SM reports that the push answering violation `event` is in force
    /// at `t`: every hardware action of it gets that time, the violation's
    /// response counts it (violation → in force), and a record is logged.
    pub fn sm_in_force(&mut self, event: u64, t: Time, sm: SmTiming) {
        let mut n = 0;
        for h in self.hardware.iter_mut().filter(|h| h.event == Some(event)) {
            h.applied = t;
            h.sm = Some(sm);
            n += 1;
        }
        if n == 0 {
            return;
        }
        if let Some(r) = self.responses.get_mut(&event) {
            r.applied(t);
        }
        let mut r = DrxRecord::at(t, RecordKind::HardwareInForce);
        r.event = Some(event);
        self.records.push(r);
    }

    /// The Workload Configurator's answer.
    pub fn configuration(&self) -> &Configuration {
        &self.ctx.conf
    }

    /// The layout.
    pub fn placement(&self) -> &Placement {
        &self.ctx.place
    }

    /// The configuration DRX runs with.
    pub fn config(&self) -> &DrxConfig {
        &self.ctx.cfg
    }

    /// Current cap of `vm` (%).
    pub fn cap(&self, vm: usize) -> f64 {
        let h = self.ctx.place.vm_host[vm];
        let a = &self.has[h];
        a.vms
            .iter()
            .position(|&v| v == vm)
            .map_or(100.0, |l| a.caps[l])
    }

    /// Current price of `vme` (the VME-wide one).
    pub fn price(&self, vme: usize) -> f64 {
        self.pm.book.price(PriceKey { vme, host: None })
    }

    /// G R5 figures over every violation.
    pub fn response_summary(&self) -> ResponseSummary {
        let lat: Vec<f64> = self
            .responses
            .values()
            .filter_map(|r| r.latency())
            .map(|l| l as f64 * 1e-9)
            .collect();
        let f = self.folded;
        let answered = lat.len() + f.answered;
        let sum_ms = lat.iter().sum::<f64>() + f.sum_s * 1e3;
        ResponseSummary {
            violations: self.responses.len() + f.violations,
            answered,
            mean_ms: (answered > 0).then(|| sum_ms / answered as f64),
            max_ms: lat
                .iter()
                .copied()
                .chain(f.max_s.map(|s| s * 1e3))
                .reduce(f64::max),
        }
    }

    /// Results as JSON (names resolved).
    pub fn report(&self) -> serde_json::Value {
        let p = &self.ctx.place;
        let names =
            |v: &[usize]| -> Vec<&str> { v.iter().map(|&i| p.vmes[i].name.as_str()).collect() };
        serde_json::json!({
            "policy": self.ctx.cfg.policy,
            "vmes": p.vmes.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
            "hosts": p.hosts,
            "config": self.ctx.cfg,
            "ss": names(&self.ctx.conf.ss),
            "sv": names(&self.ctx.conf.sv),
            "configuration_fits": self.ctx.conf.fits,
            "response": self.response_summary(),
            "evidence": {
                "response": "construction: violation-to-cap time = 2 x message-latency + pm-processing (assumed latencies; G gives none), judged against G R5's 5 ms",
                "prices_and_caps": "construction: G's Eq. 6 and Eq. 7 on the observed CQE counts; nothing fitted",
            },
            "responses": self.responses.values().collect::<Vec<_>>(),
            "hardware": self.hardware,
            "prices": (0..p.vmes.len()).map(|j| (p.vmes[j].name.clone(), self.price(j))).collect::<BTreeMap<_, _>>(),
            "caps": (0..p.vm_names.len()).map(|v| (p.vm_names[v].clone(), self.cap(v))).collect::<BTreeMap<_, _>>(),
            "records": self.records,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drx::cap::CapMode;
    use crate::drx::config::{PolicyKind, VmeSpec, MS};
    use crate::drx::placement::tests::symmetric;

    const S: Time = 1000 * MS;
    /// Uncapped CQE/s of one Hadoop and one Linpack VM, and Nectere's base.
    const HADOOP: f64 = 300.0;
    const LINPACK: f64 = 400.0;
    const NECTERE: f64 = 1000.0;

    fn cfg(policy: PolicyKind) -> (DrxConfig, Placement) {
        let p = symmetric();
        let names = |j: usize| -> Vec<String> {
            p.vmes[j]
                .vms
                .iter()
                .map(|&v| p.vm_names[v].clone())
                .collect()
        };
        let spec = |j: usize, g: f64, io_min: f64, priority| VmeSpec {
            name: p.vmes[j].name.clone(),
            vms: names(j),
            g,
            io_min,
            alpha: 1.0,
            priority,
            sla: None,
            cap_min: None,
        };
        let vmes = vec![
            spec(0, 2.0 * NECTERE, 0.0, Priority::High),
            spec(1, 32.0 * HADOOP, 32.0 * 60.0, Priority::Low),
            spec(2, 32.0 * LINPACK, 32.0 * 80.0, Priority::Low),
        ];
        (DrxConfig::new(policy, vmes), p)
    }

    /// A synthetic plant: bulk VMs do I/O in proportion to their cap; a
    /// Nectere VM loses 25 % × the local bulk load and 25 % × the Linpack
    /// load of the whole cluster (receiver-side incast from remote Linpack
    /// VMs). Returns DRX after `secs` intervals and Nectere's rate per
    /// interval.
    fn run(c: DrxConfig, p: &Placement, secs: u64) -> (Drx, Vec<f64>) {
        let vms: Vec<(String, usize)> = p
            .vm_names
            .iter()
            .cloned()
            .zip(p.vm_host.iter().copied())
            .collect();
        let mut d = Drx::new(c, p.hosts.clone(), vms).unwrap();
        let n = p.vm_names.len();
        let mut cum = vec![0u64; n];
        let mut nect = Vec::new();
        loop {
            let t = d.next_wakeup();
            if t > secs * S {
                break;
            }
            if t.is_multiple_of(S) {
                let rate = |v: usize| match p.vm_vme[v] {
                    Some(1) => HADOOP * d.cap(v) / 100.0,
                    Some(2) => LINPACK * d.cap(v) / 100.0,
                    _ => 0.0,
                };
                let lin_all: f64 =
                    p.vmes[2].vms.iter().map(|&v| rate(v)).sum::<f64>() / (32.0 * LINPACK);
                let mut rates: Vec<f64> = (0..n).map(rate).collect();
                for &v in &p.vmes[0].vms {
                    let h = p.vm_host[v];
                    let local: f64 = p.vms_on(h).iter().map(|&u| rate(u)).sum::<f64>()
                        / (4.0 * HADOOP + 4.0 * LINPACK);
                    rates[v] = NECTERE * (1.0 - 0.25 * local - 0.25 * lin_all);
                }
                nect.push(rates[p.vmes[0].vms[0]]);
                for v in 0..n {
                    cum[v] += rates[v].round() as u64;
                }
            }
            let caps = d.step(t, &cum);
            for c in caps {
                assert!(c.cap.is_finite() && (0.0..=100.0).contains(&c.cap), "{c:?}");
            }
        }
        (d, nect)
    }

    #[test]
    fn eb_dist_meets_the_sla_and_eb_local_cannot() {
        let (c, p) = cfg(PolicyKind::EbDist);
        let (d, nect) = run(c, &p, 20);
        assert_eq!(nect[0], 500.0); // PD 50 % uncontrolled.
        let last = *nect.last().unwrap();
        assert!(last >= 850.0, "EB-Dist: Nectere at {last} CQE/s");
        // EB: equal δP = 1/2 for both DCCR VMEs.
        let first = d
            .records()
            .iter()
            .find(|r| r.kind == RecordKind::Price)
            .unwrap();
        assert_eq!(first.dp, Some(0.5));
        assert!((first.rel.unwrap() - 0.25).abs() < 1e-12, "{first:?}");
        // G R5 with the defaults: 1 ms + 0.1 ms + 1 ms, every time.
        let s = d.response_summary();
        assert!(s.answered > 0);
        assert_eq!(s.max_ms, Some(2.1));
        assert_eq!(s.mean_ms, Some(2.1));

        let (c, p) = cfg(PolicyKind::EbLocal);
        let (d, nect) = run(c, &p, 20);
        let last = *nect.last().unwrap();
        assert!(last < 850.0, "EB-Local: Nectere at {last} CQE/s");
        // Local caps only the VMs on the two Nectere hosts.
        assert!(d
            .records()
            .iter()
            .filter(|r| r.kind == RecordKind::Cap)
            .all(|r| p.vm_host[r.vm.unwrap()] < 2));
    }

    #[test]
    fn hb_blames_by_io_share() {
        let (c, p) = cfg(PolicyKind::HbDist);
        let (d, _) = run(c, &p, 3);
        let first: Vec<&DrxRecord> = d
            .records()
            .iter()
            .filter(|r| r.kind == RecordKind::Price)
            .take(2)
            .collect();
        // Hadoop 32×300 vs Linpack 32×400 CQEs in the interval reported.
        let hadoop = 9600.0 / 22400.0;
        assert!((first[0].dp.unwrap() - hadoop).abs() < 1e-12);
        assert!((first[1].dp.unwrap() - (1.0 - hadoop)).abs() < 1e-12);
        // One price change per interval although both Nectere VMs report.
        let mut seen = std::collections::BTreeSet::new();
        for r in d.records().iter().filter(|r| r.kind == RecordKind::Price) {
            assert!(
                seen.insert((r.vme, r.time / S)),
                "two changes in one interval: {r:?}"
            );
        }
        assert!(d
            .records()
            .iter()
            .any(|r| r.kind == RecordKind::AlreadyChanged));
    }

    #[test]
    fn deterministic_and_serializable() {
        let (c, p) = cfg(PolicyKind::HbDist);
        let (a, _) = run(c.clone(), &p, 10);
        let (b, _) = run(c, &p, 10);
        assert_eq!(a.records(), b.records());
        let j = serde_json::to_string(&a.report()).unwrap();
        assert!(j.contains("\"ss\":[\"nectere\"]"), "{}", &j[..200]);
    }

    #[test]
    fn compact_bounds_memory_and_keeps_the_summary() {
        let (c, p) = cfg(PolicyKind::HbDist);
        let (mut d, _) = run(c, &p, 10);
        let before = d.response_summary();
        let n = d.records().len();
        assert!(before.violations > 0 && n > 0);
        // Nothing older than an hour: records handed over, responses kept.
        let recs = d.compact(10 * S, 3600 * S);
        assert_eq!(recs.len(), n);
        assert!(d.records().is_empty() && !d.responses().is_empty());
        // Everything older than 1 s folded into the totals; the summary is unchanged.
        d.compact(20 * S, S);
        assert!(d.responses().is_empty());
        let after = d.response_summary();
        assert_eq!(
            (after.violations, after.answered),
            (before.violations, before.answered)
        );
        assert_eq!(after.max_ms, before.max_ms);
        assert!((after.mean_ms.unwrap() - before.mean_ms.unwrap()).abs() < 1e-9);
    }

    #[test]
    fn message_latency_sets_violation_to_cap_time() {
        let (mut c, p) = cfg(PolicyKind::EbDist);
        c.message_latency = 3 * MS;
        c.pm_processing = 0;
        let (d, _) = run(c, &p, 3);
        let s = d.response_summary();
        assert_eq!(s.max_ms, Some(6.0)); // above G R5's 5 ms: reported as is
        for r in d.responses().iter().filter(|r| r.detected < 3 * S) {
            assert_eq!(r.pm_received, Some(r.detected + 3 * MS));
        }
    }

    #[test]
    fn a5_as_written_cuts_harder_when_overspending() {
        // Tiny supply: Hadoop/Linpack VMs spend their Resos faster than the
        // epoch elapses, so δC = EL/RL > 1.
        let (mut c, p) = cfg(PolicyKind::EbDist);
        c.link_cqe_per_s = 1000.0;
        let (w, _) = run(c.clone(), &p, 8);
        c.cap_rule.mode = CapMode::Repaired;
        let (r, _) = run(c, &p, 8);
        let dcs = |d: &Drx| -> Vec<f64> {
            d.records()
                .iter()
                .filter(|r| r.kind == RecordKind::Cap)
                .filter_map(|r| r.dc)
                .collect()
        };
        assert!(dcs(&w).iter().any(|&x| x > 1.0), "{:?}", dcs(&w));
        assert!(dcs(&r).iter().all(|&x| x <= 1.0));
        let min = |d: &Drx| (0..66).map(|v| d.cap(v)).fold(100.0, f64::min);
        assert!(min(&w) < min(&r), "{} vs {}", min(&w), min(&r));
        // Repaired caps never below cap_min = 100 × IOmin / g = 20.
        assert!(min(&r) >= 20.0);
    }

    #[test]
    fn platform_policies() {
        // CC-Dist, A6 floor 75: −5 per interval per DCCR VME, down to 75.
        let (c, p) = cfg(PolicyKind::CcDist);
        let (d, _) = run(c, &p, 12);
        let h0 = p.vmes[1].vms[0];
        assert_eq!(d.cap(h0), 75.0);
        let (mut c, p) = cfg(PolicyKind::CcDist);
        c.cc_floor = crate::drx::cap::CcFloor::Cap25;
        let (d, _) = run(c, &p, 12);
        assert!(d.cap(h0) < 75.0);
        // PC-Dist: Hadoop's step is 5 × its I/O share (< 5).
        let (c, p) = cfg(PolicyKind::PcDist);
        let (d, _) = run(c, &p, 2);
        let hadoop = 100.0 - 5.0 * 9600.0 / 22400.0;
        assert!((d.cap(h0) - hadoop).abs() < 1e-9, "{}", d.cap(h0));
    }

    #[test]
    fn hardware_policies() {
        let (c, p) = cfg(PolicyKind::DrxMaxQ);
        let (d, _) = run(c, &p, 4);
        let hw = d.hardware();
        assert_eq!(hw[0].setting, HardwareSetting::QosPriority);
        assert_eq!(hw[0].applied, MS);
        // CC pushed once: the violation (detected at S) reaches the PM after
        // 1 ms, the request the SM after processing + 1 ms, in force one
        // MAD latency (1 ms, no SM model here) later.
        assert_eq!(hw.len(), 2);
        assert_eq!(hw[1].setting, HardwareSetting::CongestionControl);
        assert_eq!(hw[1].sent, S + MS + MS / 10 + MS);
        assert_eq!(hw[1].applied, S + MS + MS / 10 + MS + MS);
        assert!(d.records().iter().all(|r| r.kind != RecordKind::Cap));
        let in_force = d
            .records()
            .iter()
            .filter(|r| r.kind == RecordKind::HardwareInForce)
            .count();
        assert_eq!(in_force, 1);
        // G's alternative reading: DRXMaxQ pushes its QoS with the CC.
        let (mut c, p) = cfg(PolicyKind::DrxMaxQ);
        c.qos_at = super::super::config::QosAt::Violation;
        let (d, _) = run(c, &p, 4);
        let hw = d.hardware();
        assert_eq!(hw.len(), 2);
        assert!(hw.iter().all(|h| h.event.is_some()));
        assert_eq!(hw[0].setting, HardwareSetting::QosPriority);
        // An SM model's time replaces the estimate.
        let (c, p) = cfg(PolicyKind::DrxMax);
        let (mut d, _) = run(c, &p, 4);
        let e = d.hardware()[1].event.unwrap();
        let sm = SmTiming {
            cc_mads: 25,
            qos_mads: 0,
            restart: 0,
            spread: 0,
        };
        d.sm_in_force(e, 5 * S, sm);
        assert_eq!(d.hardware()[1].applied, 5 * S);
        assert_eq!(d.hardware()[1].sm, Some(sm));
        let (c, p) = cfg(PolicyKind::StMax);
        let (d, _) = run(c, &p, 2);
        assert_eq!(d.hardware().len(), 2);
        assert!(d.hardware().iter().all(|h| h.event.is_none()));
    }

    #[test]
    fn epoch_resets_prices_and_caps() {
        let (mut c, p) = cfg(PolicyKind::EbDist);
        c.epoch = 5 * S;
        let (d, _) = run(c, &p, 6);
        assert!(d.records().iter().any(|r| r.kind == RecordKind::EpochReset));
        // The epoch starting at 5 s starts from the initial price: the
        // raises answering the 5 s violations are 1 + rel.
        let cut6: Vec<&DrxRecord> = d
            .records()
            .iter()
            .filter(|r| r.kind == RecordKind::Price && r.time > 5 * S && r.time < 6 * S)
            .collect();
        assert!(!cut6.is_empty());
        for r in cut6 {
            assert!((r.price.unwrap() - (1.0 + r.rel.unwrap())).abs() < 1e-12);
        }
    }

    #[test]
    fn unsatisfiable_layout_is_an_error() {
        let (mut c, p) = cfg(PolicyKind::EbDist);
        c.link_cqe_per_s = 100.0; // 800 in all < SV minimums 4480
        let vms: Vec<(String, usize)> = p
            .vm_names
            .iter()
            .cloned()
            .zip(p.vm_host.iter().copied())
            .collect();
        let e = Drx::new(c, p.hosts.clone(), vms).unwrap_err();
        assert!(e.contains("hadoop, linpack"), "{e}");
    }

    #[test]
    fn iomin_freeze_stops_raises() {
        // Hadoop's IOmin 8000 of 9600: the first cut (to 75 %) drops it to
        // 7200, so the PM freezes its price at the next tick.
        let (mut c, p) = cfg(PolicyKind::EbDist);
        c.vmes[1].io_min = 8000.0;
        let (d, _) = run(c, &p, 6);
        let f = d
            .records()
            .iter()
            .find(|r| r.kind == RecordKind::FreezeIoMin)
            .expect("a freeze");
        assert_eq!(f.vme, Some(1));
        assert!(d
            .records()
            .iter()
            .filter(|r| r.kind == RecordKind::Price && r.time > f.time)
            .all(|r| r.vme != Some(1)));
        assert!(d
            .records()
            .iter()
            .any(|r| r.kind == RecordKind::Frozen && r.vme == Some(1)));
    }

    #[test]
    fn ceiling_gives_the_minimum_allocation() {
        // MaxPrice = (8 × 1000 CQE/s × 60 s / 3 VMEs) / 60 = 2666.7; from
        // 2600 one 25 % raise reaches it.
        let (mut c, p) = cfg(PolicyKind::EbDist);
        c.link_cqe_per_s = 1000.0;
        c.initial_price = 2600.0;
        let (d, _) = run(c, &p, 2);
        let ceil: Vec<&DrxRecord> = d
            .records()
            .iter()
            .filter(|r| r.kind == RecordKind::Ceiling)
            .collect();
        assert_eq!(ceil.len(), 2);
        assert!((ceil[0].price.unwrap() - 8000.0 / 3.0).abs() < 1e-9);
        // cap_min = 100 × IOmin / g = 20 for both bulk VMEs.
        assert_eq!(d.cap(p.vmes[1].vms[5]), 20.0);
        assert_eq!(d.cap(p.vmes[2].vms[31]), 20.0);
        assert_eq!(d.price(1), 8000.0 / 3.0);
    }

    #[test]
    fn a7_price_per_vme_host() {
        let (mut c, p) = cfg(PolicyKind::EbLocal);
        c.local_price = crate::drx::config::LocalPrice::VmeHost;
        let (d, _) = run(c, &p, 2);
        // Both Nectere hosts raise their own Hadoop price in interval 1.
        let hadoop: Vec<Option<usize>> = d
            .records()
            .iter()
            .filter(|r| r.kind == RecordKind::Price && r.vme == Some(1) && r.time < 2 * S)
            .map(|r| r.host)
            .collect();
        assert_eq!(hadoop, vec![Some(0), Some(1)]);
        // The default (one VME price) allows one change per interval.
        let (c, p) = cfg(PolicyKind::EbLocal);
        let (d, _) = run(c, &p, 2);
        let n = d
            .records()
            .iter()
            .filter(|r| r.kind == RecordKind::Price && r.vme == Some(1) && r.time < 2 * S)
            .count();
        assert_eq!(n, 1);
    }

    #[test]
    fn a8_slow_restore() {
        let (mut c, p) = cfg(PolicyKind::EbDist);
        c.restore_rate = 0.5;
        let (d, _) = run(c, &p, 12);
        let r: Vec<&DrxRecord> = d
            .records()
            .iter()
            .filter(|r| r.kind == RecordKind::Restore)
            .collect();
        assert!(r.iter().any(|x| x.cap.is_some()) && r.iter().any(|x| x.price.is_some()));
    }

    /// G §2.8's worked examples through the whole path (HA → PM → HA):
    /// Nectere at 700 of its 1000 CQE/s SLA (PD 30 %), two VMEs in its
    /// DCCR doing I/O 9:1.
    #[test]
    fn g_worked_examples_end_to_end() {
        for (policy, want) in [
            (PolicyKind::EbDist, [1.15, 1.15]),
            (PolicyKind::HbDist, [1.27, 1.03]),
        ] {
            let spec = |name: &str, g: f64, priority| VmeSpec {
                name: name.into(),
                vms: vec![name.into()],
                g,
                io_min: 0.0,
                alpha: 1.0,
                priority,
                sla: None,
                cap_min: None,
            };
            let c = DrxConfig::new(
                policy,
                vec![
                    spec("nectere", 1000.0, Priority::High),
                    spec("vme1", 900.0, Priority::Low),
                    spec("vme2", 100.0, Priority::Low),
                ],
            );
            let vms = ["nectere", "vme1", "vme2"]
                .map(|n| (n.to_string(), 0))
                .to_vec();
            let mut d = Drx::new(c, vec!["h".into()], vms).unwrap();
            let cum = [700u64, 900, 100];
            while d.next_wakeup() <= S + 3 * MS {
                let t = d.next_wakeup();
                d.step(t, &cum);
            }
            let pd = d.records()[0].pd.unwrap();
            assert!((pd - 0.30).abs() < 1e-12);
            assert!(
                (d.price(1) - want[0]).abs() < 1e-12,
                "{policy:?} {}",
                d.price(1)
            );
            assert!(
                (d.price(2) - want[1]).abs() < 1e-12,
                "{policy:?} {}",
                d.price(2)
            );
            // Caps follow Eq. 7 with δC = EL/RL at the HA: 59/60 of the
            // epoch left, Resos barely used.
            let cap = d.cap(1);
            let rel = want[0] - 1.0;
            assert!(
                cap < 100.0 * (1.0 - rel * 0.98) && cap > 100.0 * (1.0 - rel),
                "{cap}"
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        /// Any observation sequence (CQE counts from 0 to 10⁷ per
        /// interval, hence any PD and any Resos state): caps stay finite,
        /// within [0, 100], and within [cap_min, 100] when repaired.
        #[test]
        fn caps_bounded_for_any_trace(
            policy in 0usize..10,
            repaired in proptest::bool::ANY,
            supply in 1.0f64..1e6,
            deltas in proptest::collection::vec(proptest::collection::vec(0u64..10_000_000, 66), 6),
        ) {
            let (mut c, p) = cfg(PolicyKind::parse(crate::drx::config::POLICY_NAMES[policy]).unwrap());
            c.cap_rule.mode = if repaired { CapMode::Repaired } else { CapMode::AsWritten };
            c.link_cqe_per_s = supply.max(1000.0);
            let vms: Vec<(String, usize)> =
                p.vm_names.iter().cloned().zip(p.vm_host.iter().copied()).collect();
            let mut d = Drx::new(c, p.hosts.clone(), vms).unwrap();
            let mut cum = vec![0u64; 66];
            let mut k = 0;
            while k < deltas.len() {
                let t = d.next_wakeup();
                if t.is_multiple_of(S) {
                    for v in 0..66 {
                        cum[v] += deltas[k][v];
                    }
                    k += 1;
                }
                for cc in d.step(t, &cum) {
                    proptest::prop_assert!(cc.cap.is_finite() && (0.0..=100.0).contains(&cc.cap));
                }
            }
            for v in 0..66 {
                let cap = d.cap(v);
                proptest::prop_assert!(cap.is_finite() && (0.0..=100.0).contains(&cap));
                if repaired && d.ctx.place.vm_vme[v] != Some(0) {
                    proptest::prop_assert!(cap >= d.ctx.cap_min[v] - 1e-9, "{} < {}", cap, d.ctx.cap_min[v]);
                }
            }
            for r in d.records() {
                for x in [r.pd, r.dp, r.rel, r.price, r.dc, r.cap, r.io].into_iter().flatten() {
                    proptest::prop_assert!(x.is_finite(), "{:?}", r);
                }
            }
        }
    }
}
