//! The PM (cluster manager, G §4.2–4.5): on a VIOLATION it finds the DCCR
//! (Eq. 3), prices its VMEs (Eq. 6, EB or HB, Dist or Local), and sends
//! CAP_UPDATEs to the HAs of the target VMs; platform-only policies step
//! caps directly (CC-Dist, PC-Dist) or push hardware settings (DRXMax,
//! DRXMaxQ). It keeps the latest usage each HA reported (HB's I/O ratio,
//! the IOmin freeze).

use super::cluster::Ctx;
use super::config::{HbScope, LocalPrice};
use super::messages::{CapChange, Message};
use super::placement::Scope;
use super::pricing::{delta_p, relative_change, Blame, PriceBook, PriceKey, PriceOutcome};
use super::record::{DrxRecord, HardwareAction, HardwareSetting, RecordKind};
use crate::Time;
use std::collections::BTreeMap;

/// The PM's state.
#[derive(Debug)]
pub(crate) struct Manager {
    pub(crate) book: PriceBook,
    /// CQEs of each VM in the latest interval reported.
    io: Vec<u64>,
    cc_pushed: bool,
    /// Platform-only policies: the interval of each VME's last step.
    stepped: BTreeMap<usize, u64>,
}

/// What handling a message produced.
#[derive(Debug, Default)]
pub(crate) struct PmOut {
    /// (host addressed, message).
    pub(crate) to_ha: Vec<(usize, Message)>,
    pub(crate) records: Vec<DrxRecord>,
    pub(crate) hardware: Vec<HardwareAction>,
}

impl Manager {
    pub(crate) fn new(ctx: &Ctx) -> Self {
        let mut book = PriceBook::new(ctx.cfg.initial_price);
        let ints = ctx.cfg.ints_per_epoch();
        let local_keys = ctx.cfg.local_price == LocalPrice::VmeHost
            && ctx
                .cfg
                .policy
                .pricing()
                .is_some_and(|(_, s)| s == Scope::Local);
        for j in 0..ctx.place.vmes.len() {
            if local_keys {
                for h in ctx.place.hosts_of(j) {
                    let alloc: f64 = ctx.place.vmes[j]
                        .vms
                        .iter()
                        .filter(|&&v| ctx.place.vm_host[v] == h)
                        .map(|&v| ctx.vm_alloc[v])
                        .sum();
                    book.insert(
                        PriceKey {
                            vme: j,
                            host: Some(h),
                        },
                        alloc / ints,
                    );
                }
            } else {
                book.insert(PriceKey { vme: j, host: None }, ctx.em_alloc[j] / ints);
            }
        }
        Self {
            book,
            io: vec![0; ctx.place.vm_names.len()],
            cc_pushed: false,
            stepped: BTreeMap::new(),
        }
    }

    fn key(&self, ctx: &Ctx, vme: usize, host: usize, scope: Scope) -> PriceKey {
        let per_host = scope == Scope::Local && ctx.cfg.local_price == LocalPrice::VmeHost;
        PriceKey {
            vme,
            host: per_host.then_some(host),
        }
    }

    /// I/O of `vme` (CQEs in the latest interval), cluster-wide or on `host`.
    fn vme_io(&self, ctx: &Ctx, vme: usize, host: Option<usize>) -> f64 {
        ctx.place.vmes[vme]
            .vms
            .iter()
            .filter(|&&v| host.is_none_or(|h| ctx.place.vm_host[v] == h))
            .map(|&v| self.io[v] as f64)
            .sum()
    }

    /// The end of interval `interval` at `t`: the A8 epoch reset (when an
    /// epoch starts at `t`), the optional restore and the IOmin freeze.
    pub(crate) fn tick(&mut self, t: Time, interval: u64, ctx: &Ctx) -> PmOut {
        let mut out = PmOut::default();
        if t > 0 && t.is_multiple_of(ctx.cfg.epoch) {
            // A8: prices back for the epoch starting at t.
            self.book.reset();
            self.stepped.clear();
            out.records.push(DrxRecord::at(t, RecordKind::EpochReset));
        }
        if ctx.cfg.restore_rate > 0.0 && interval > 0 {
            for (k, p) in self.book.restore(ctx.cfg.restore_rate, interval - 1) {
                let mut r = DrxRecord::at(t, RecordKind::Restore);
                r.vme = Some(k.vme);
                r.host = k.host;
                r.price = Some(p);
                out.records.push(r);
                for h in ctx.place.hosts_of(k.vme) {
                    if k.host.is_none_or(|x| x == h) {
                        out.to_ha.push((
                            h,
                            Message::Price {
                                host: h,
                                vme: k.vme,
                                price: p,
                            },
                        ));
                    }
                }
            }
        }
        // G §2.9: a VME driven down to IOmin has its price frozen.
        let secs = ctx.cfg.interval as f64 * 1e-12;
        for k in self.book.keys() {
            let Some(s) = self.book.get(k).copied() else {
                continue;
            };
            if s.frozen || s.price <= self.book.initial() || ctx.in_ss[k.vme] {
                continue;
            }
            let rate = self.vme_io(ctx, k.vme, None) / secs;
            if rate <= ctx.workloads[k.vme].io_min && self.book.freeze(k) {
                let mut r = DrxRecord::at(t, RecordKind::FreezeIoMin);
                r.vme = Some(k.vme);
                r.host = k.host;
                r.io = Some(rate);
                r.price = Some(s.price);
                out.records.push(r);
            }
        }
        out
    }

    /// A message from an HA arriving at `t`.
    pub(crate) fn receive(&mut self, t: Time, m: Message, ctx: &Ctx) -> PmOut {
        match m {
            Message::Usage { cqes, .. } => {
                for (v, c) in cqes {
                    if let Some(x) = self.io.get_mut(v) {
                        *x = c;
                    }
                }
                PmOut::default()
            }
            Message::Violation {
                event,
                vm,
                host,
                pd,
                interval,
            } => self.violation(t, event, vm, host, pd, interval, ctx),
            _ => PmOut::default(),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn violation(
        &mut self,
        t: Time,
        event: u64,
        vm: usize,
        host: usize,
        pd: f64,
        interval: u64,
        ctx: &Ctx,
    ) -> PmOut {
        let mut out = PmOut::default();
        let dccr = ctx.place.dccr(vm, ctx.cfg.own_vme);
        let policy = ctx.cfg.policy;
        if let Some((blame, scope)) = policy.pricing() {
            let io_host = (blame == Blame::Hurt
                && scope == Scope::Local
                && ctx.cfg.hb_scope == HbScope::Host)
                .then_some(host);
            for &j in &dccr {
                let key = self.key(ctx, j, host, scope);
                let dp = delta_p(blame, &dccr, j, |k| self.vme_io(ctx, k, io_host));
                let rel = relative_change(dp, ctx.workloads[j].alpha, pd);
                let outcome = self.book.raise(key, rel, interval);
                let price = self.book.price(key);
                let kind = match outcome {
                    PriceOutcome::Raised { .. } => RecordKind::Price,
                    PriceOutcome::Ceiling { .. } => RecordKind::Ceiling,
                    PriceOutcome::Frozen => RecordKind::Frozen,
                    PriceOutcome::AlreadyChanged => RecordKind::AlreadyChanged,
                    PriceOutcome::Unchanged => continue,
                };
                let mut r = DrxRecord::at(t, kind);
                r.event = Some(event);
                r.vm = Some(vm);
                r.host = Some(host);
                r.vme = Some(j);
                r.pd = Some(pd);
                r.dp = Some(dp);
                r.rel = Some(rel);
                r.price = Some(price);
                out.records.push(r);
                let change = match outcome {
                    PriceOutcome::Raised { .. } => CapChange::Eq7 { rel },
                    PriceOutcome::Ceiling { .. } => CapChange::Minimum,
                    _ => continue,
                };
                let targets = ctx.place.targets(j, scope, host);
                for &v in &targets {
                    out.to_ha.push((
                        ctx.place.vm_host[v],
                        Message::CapUpdate {
                            event,
                            vm: v,
                            change,
                            price,
                        },
                    ));
                }
                if key.host.is_none() && scope == Scope::Local {
                    // One VME price: its other hosts charge it too.
                    for h in ctx.place.hosts_of(j) {
                        if h != host {
                            out.to_ha.push((
                                h,
                                Message::Price {
                                    host: h,
                                    vme: j,
                                    price,
                                },
                            ));
                        }
                    }
                }
            }
        } else if let Some(blame) = policy.platform() {
            for &j in &dccr {
                if self.stepped.get(&j) == Some(&interval) {
                    continue;
                }
                self.stepped.insert(j, interval);
                let share = match blame {
                    Blame::Equal => 1.0,
                    Blame::Hurt => delta_p(Blame::Hurt, &dccr, j, |k| self.vme_io(ctx, k, None)),
                };
                for &v in &ctx.place.vmes[j].vms {
                    out.to_ha.push((
                        ctx.place.vm_host[v],
                        Message::CapUpdate {
                            event,
                            vm: v,
                            change: CapChange::Points { share },
                            price: self.book.price(PriceKey { vme: j, host: None }),
                        },
                    ));
                }
            }
        } else if let Some((qos, is_static)) = policy.hardware() {
            if !is_static && !self.cc_pushed {
                // G §4.5: the first violation makes the PM ask the SM for
                // Table 5's CC (and, with `qos-at = "violation"`, Table 6's
                // QoS); the request reaches the SM after the PM's processing
                // and the PM → SM message.
                self.cc_pushed = true;
                let sent = t + ctx.cfg.pm_processing + ctx.cfg.message_latency;
                let mut settings = vec![HardwareSetting::CongestionControl];
                if ctx.cfg.qos_at == super::config::QosAt::Violation {
                    settings.insert(0, qos);
                }
                for setting in settings {
                    out.hardware.push(HardwareAction {
                        issued: t,
                        sent,
                        applied: sent + ctx.cfg.mad_latency,
                        sm: None,
                        setting,
                        event: Some(event),
                    });
                }
                let mut r = DrxRecord::at(t, RecordKind::Hardware);
                r.event = Some(event);
                r.vm = Some(vm);
                r.host = Some(host);
                r.pd = Some(pd);
                out.records.push(r);
            }
        }
        out
    }
}
