//! The Host Agent (G §4.1), one per host, doubling as the EM of its local
//! VMs (G §5.1): every interval it reads each VM's CQE count (IBMon),
//! charges it at its VME's price from the VM's Resos (a ResEx
//! [`Ledger`](crate::resex::resos::Ledger), renewed every epoch), reports
//! usage and SLA violations to the PM, and applies the caps the PM asks for
//! (Eq. 7 with its own EL_h and RL).

use super::cap::{eq7, platform_step};
use super::cluster::Ctx;
use super::config::PdReference;
use super::messages::{CapChange, Message};
use super::record::{DrxRecord, RecordKind};
use crate::resex::resos::{BalanceMode, Ledger, ResoConfig};
use crate::Time;
use std::collections::BTreeMap;

/// One host's agent.
#[derive(Debug)]
pub(crate) struct HostAgent {
    pub(crate) host: usize,
    /// Local VMs (global indices).
    pub(crate) vms: Vec<usize>,
    /// Ledger index of each local VM (VMs in no VME are not charged).
    slot: Vec<Option<usize>>,
    ledger: Option<Ledger>,
    /// Cap of each local VM (%).
    pub(crate) caps: Vec<f64>,
    last: Vec<u64>,
    started: Vec<bool>,
    touched: Vec<bool>,
    /// Local copy of prices for charging (per VME).
    prices: BTreeMap<usize, f64>,
}

/// What a sample produced.
#[derive(Debug, Default)]
pub(crate) struct SampleOut {
    pub(crate) to_pm: Vec<Message>,
    pub(crate) caps: Vec<(usize, f64)>,
    pub(crate) records: Vec<DrxRecord>,
}

impl HostAgent {
    pub(crate) fn new(host: usize, ctx: &Ctx) -> Self {
        let vms = ctx.place.vms_on(host);
        let mut slot = Vec::new();
        let mut allocs = Vec::new();
        for &v in &vms {
            if ctx.place.vm_vme[v].is_some() && ctx.vm_alloc[v] > 0.0 {
                slot.push(Some(allocs.len()));
                allocs.push(ctx.vm_alloc[v]);
            } else {
                slot.push(None);
            }
        }
        let ledger = (!allocs.is_empty()).then(|| {
            // ResEx's ledger with IB only, 1 Reso per CQE (A9): the "MTU"
            // is one CQE and the pool is the sum of the local allocations,
            // shared by weight = allocation; the CPU balance is never
            // charged, so RL is the fraction of IB Resos left.
            let total: f64 = allocs.iter().sum();
            let n = allocs.len();
            Ledger::new(ResoConfig {
                interval: ctx.cfg.interval,
                epoch: ctx.cfg.epoch,
                mtu: 1.0,
                link_bytes_per_s: total / (ctx.cfg.epoch as f64 * 1e-12),
                cpu_price: 1.0,
                mtu_price: 1.0,
                balance: BalanceMode::PerResource,
                vcpus: vec![1.0; n],
                weights: allocs,
                monitored: (0..n).collect(),
            })
        });
        let n = vms.len();
        Self {
            host,
            vms,
            slot,
            ledger,
            caps: vec![100.0; n],
            last: vec![0; n],
            started: vec![false; n],
            touched: vec![false; n],
            prices: BTreeMap::new(),
        }
    }

    fn local(&self, vm: usize) -> Option<usize> {
        self.vms.iter().position(|&v| v == vm)
    }

    fn price(&self, ctx: &Ctx, vme: usize) -> f64 {
        self.prices
            .get(&vme)
            .copied()
            .unwrap_or(ctx.cfg.initial_price)
    }

    /// Fraction of `vm`'s Resos left (1 if uncharged).
    pub(crate) fn resos_left(&self, vm: usize) -> f64 {
        match (self.local(vm).and_then(|l| self.slot[l]), &self.ledger) {
            (Some(s), Some(l)) => l.left_after(s, 0.0, 0.0),
            _ => 1.0,
        }
    }

    /// The sample at the end of interval `interval` (time `t`), with
    /// cumulative CQE counts per VM (global).
    pub(crate) fn sample(
        &mut self,
        t: Time,
        interval: u64,
        cum: &[u64],
        ctx: &Ctx,
        next_event: &mut u64,
    ) -> SampleOut {
        let mut out = SampleOut::default();
        let secs = ctx.cfg.interval as f64 * 1e-12;
        if let Some(l) = self.ledger.as_mut() {
            // Balances are renewed when the first interval of an epoch is
            // charged (ResEx's ledger).
            l.begin(t);
        }
        let mut usage = Vec::new();
        for l in 0..self.vms.len() {
            let v = self.vms[l];
            let now_c = cum.get(v).copied().unwrap_or(self.last[l]);
            let d = now_c.saturating_sub(self.last[l]);
            self.last[l] = now_c.max(self.last[l]);
            usage.push((v, d));
            if d > 0 {
                self.started[l] = true;
            }
            if let (Some(s), Some(j)) = (self.slot[l], ctx.place.vm_vme[v]) {
                let price = self.price(ctx, j);
                if let Some(led) = self.ledger.as_mut() {
                    led.charge(s, d as f64 * price, 0.0);
                }
            }
            // A8 option: slow restore of caps not touched this interval.
            if ctx.cfg.restore_rate > 0.0 && !self.touched[l] && self.caps[l] < 100.0 {
                let c = self.caps[l] + (100.0 - self.caps[l]) * ctx.cfg.restore_rate;
                self.caps[l] = c;
                out.caps.push((v, c));
                let mut r = DrxRecord::at(t, RecordKind::Restore);
                r.host = Some(self.host);
                r.vm = Some(v);
                r.cap = Some(c);
                out.records.push(r);
            }
            self.touched[l] = false;
        }
        if t.is_multiple_of(ctx.cfg.epoch) {
            // A8: caps and local prices back for the epoch starting at t.
            self.prices.clear();
            for l in 0..self.vms.len() {
                if self.caps[l] < 100.0 {
                    self.caps[l] = 100.0;
                    out.caps.push((self.vms[l], 100.0));
                }
            }
            let mut r = DrxRecord::at(t, RecordKind::EpochReset);
            r.host = Some(self.host);
            out.records.push(r);
        }
        out.to_pm.push(Message::Usage {
            host: self.host,
            cqes: usage.clone(),
        });
        for (l, &(v, d)) in usage.iter().enumerate() {
            let (Some(level), true) = (ctx.sla[v], self.started[l]) else {
                continue;
            };
            let m = d as f64 / secs;
            let tol = ctx.cfg.tolerance;
            let pd = match ctx.cfg.pd_reference {
                PdReference::Base => (level - m) / level,
                PdReference::Threshold => {
                    let thr = level * (1.0 - tol);
                    (thr - m) / thr
                }
            };
            let violated = match ctx.cfg.pd_reference {
                PdReference::Base => pd > tol,
                PdReference::Threshold => pd > 0.0,
            };
            if violated {
                let event = *next_event;
                *next_event += 1;
                let mut r = DrxRecord::at(t, RecordKind::Violation);
                r.event = Some(event);
                r.host = Some(self.host);
                r.vm = Some(v);
                r.vme = ctx.place.vm_vme[v];
                r.io = Some(m);
                r.pd = Some(pd);
                out.records.push(r);
                out.to_pm.push(Message::Violation {
                    event,
                    vm: v,
                    host: self.host,
                    pd,
                    interval,
                });
            }
        }
        out
    }

    /// Sets the charging price of `vme`.
    pub(crate) fn set_price(&mut self, vme: usize, price: f64) {
        self.prices.insert(vme, price);
    }

    /// A CAP_UPDATE arriving at `t`: the new cap and the record.
    pub(crate) fn cap_update(
        &mut self,
        t: Time,
        event: u64,
        vm: usize,
        change: CapChange,
        price: f64,
        ctx: &Ctx,
    ) -> Option<(f64, DrxRecord)> {
        let l = self.local(vm)?;
        if let Some(j) = ctx.place.vm_vme[vm] {
            self.set_price(j, price);
        }
        let old = self.caps[l];
        let mut r = DrxRecord::at(t, RecordKind::Cap);
        r.event = Some(event);
        r.host = Some(self.host);
        r.vm = Some(vm);
        r.vme = ctx.place.vm_vme[vm];
        r.price = Some(price);
        let cap = match change {
            CapChange::Eq7 { rel } => {
                let el = self.ledger.as_ref().map_or(1.0, |led| led.epoch_left(t));
                let s = eq7(
                    old,
                    rel,
                    el,
                    self.resos_left(vm),
                    ctx.cap_min[vm],
                    ctx.cfg.cap_rule,
                );
                r.rel = Some(rel);
                r.dc = Some(s.dc);
                s.cap
            }
            CapChange::Points { share } => platform_step(old, share, ctx.cfg.cc_floor),
            CapChange::Minimum => ctx.cap_min[vm],
        };
        self.caps[l] = cap;
        self.touched[l] = true;
        r.cap = Some(cap);
        Some((cap, r))
    }
}
