//! Resos, ResEx's virtual currency (F §5.5.3, §5.6.1): what each VM is
//! given per epoch, what it is charged per interval, and the balance.
//!
//! - CPU: `100 × vCPUs` Resos per charging interval (one per CPU %), so
//!   `100 × 1000 = 100,000` per VM-epoch at 1 ms / 1 s (F §5.6.1.1).
//! - InfiniBand: the link's MTUs per epoch, `LinkBW / MTU = 2^30 / 1024 =
//!   1,048,576` at 1 GiB/s and 1 KiB (F §5.6.1.2), shared among the
//!   monitored VMs equally or by weight.
//! - At each epoch boundary every balance is set back to its allocation;
//!   leftovers are discarded (F §5.5.3).
//! - One pooled balance per VM (default: a single currency buys both
//!   resources, F §5.5.3) or one per resource (F §5.6 ambiguity 1).

use super::params::{Params, Range};
use crate::Time;
use serde::Serialize;

/// One millisecond in ps: the charging interval (F §5.6.1).
pub const INTERVAL_PS: Time = 1_000_000_000;
/// One second in ps: the epoch (F §5.6.1).
pub const EPOCH_PS: Time = 1_000_000_000_000;
/// MTU in bytes (F §5.6.1.2).
pub const MTU_BYTES: f64 = 1024.0;
/// Link capacity the thesis accounts for: 8 Gb/s of data = 1 GiB/s
/// (F §5.6.1.2; the measured peak is ≈ 932 MiB/s, F §9 item 5).
pub const LINK_BYTES_PER_S: f64 = 1024.0 * 1024.0 * 1024.0;

/// Whether a VM holds one balance or one per resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BalanceMode {
    /// One balance buys CPU and MTUs; the floor test is on it.
    Pooled,
    /// A CPU balance and an IB balance; the floor test fires when either
    /// falls below its share.
    PerResource,
}

/// The Reso budget and prices (every ResEx policy shares these keys).
#[derive(Clone, Debug, Serialize)]
pub struct ResoConfig {
    /// Charging interval (ps) = the policy's period.
    pub interval: Time,
    /// Epoch (ps), a whole number of intervals.
    pub epoch: Time,
    /// MTU (bytes): MTUs = bytes / MTU.
    pub mtu: f64,
    /// Link capacity (bytes per second) the IB pool is made of.
    pub link_bytes_per_s: f64,
    /// Resos per CPU % (F: 1).
    pub cpu_price: f64,
    /// Resos per MTU (F: 1); IOShares' base charging rate.
    pub mtu_price: f64,
    /// Pooled or per-resource balances.
    pub balance: BalanceMode,
    /// vCPUs per VM (F: one PCPU per VM).
    pub vcpus: Vec<f64>,
    /// Share weights of the IB pool (equal by default).
    pub weights: Vec<f64>,
    /// The monitored VMs (default all).
    pub monitored: Vec<usize>,
}

/// Keys [`ResoConfig::from_params`] reads.
pub(crate) const RESO_KEYS: [&str; 10] = [
    "vms",
    "interval",
    "epoch",
    "mtu",
    "link-bytes-per-s",
    "cpu-price",
    "mtu-price",
    "balance",
    "vcpus",
    "weights",
];

impl ResoConfig {
    /// The thesis's budget for `n` VMs, all monitored.
    pub fn thesis(n: usize) -> Self {
        Self {
            interval: INTERVAL_PS,
            epoch: EPOCH_PS,
            mtu: MTU_BYTES,
            link_bytes_per_s: LINK_BYTES_PER_S,
            cpu_price: 1.0,
            mtu_price: 1.0,
            balance: BalanceMode::Pooled,
            vcpus: vec![1.0; n],
            weights: vec![1.0; n],
            monitored: (0..n).collect(),
        }
    }

    pub(crate) fn from_params(p: &Params<'_>, names: &[String]) -> Result<Self, String> {
        let mut c = Self::thesis(names.len());
        if let Some(v) = p.vm_list("vms", names)? {
            if v.is_empty() {
                return Err(format!("{}: vms: the list is empty", p.kind));
            }
            c.monitored = v;
        }
        c.interval = p.duration("interval", c.interval)?;
        c.epoch = p.duration("epoch", c.epoch)?;
        if c.epoch < c.interval || !c.epoch.is_multiple_of(c.interval) {
            return Err(format!(
                "{}: epoch must be a whole number (≥ 1) of intervals",
                p.kind
            ));
        }
        c.mtu = p.num("mtu", c.mtu, Range::Positive)?;
        c.link_bytes_per_s = p.num("link-bytes-per-s", c.link_bytes_per_s, Range::Positive)?;
        c.cpu_price = p.num("cpu-price", c.cpu_price, Range::Positive)?;
        c.mtu_price = p.num("mtu-price", c.mtu_price, Range::Positive)?;
        c.balance = match p.choice("balance", &["pooled", "per-resource"])? {
            "pooled" => BalanceMode::Pooled,
            _ => BalanceMode::PerResource,
        };
        c.vcpus = p.per_vm("vcpus", names, 1.0)?;
        c.weights = p.per_vm("weights", names, 1.0)?;
        for &vm in &c.monitored {
            let total = c.cpu_allocation(vm) + c.ib_allocation(vm);
            if !total.is_finite() {
                return Err(format!(
                    "{}: the Reso budget of VM '{}' is not a finite number (cpu-price, \
                     mtu-price, vcpus, weights or link-bytes-per-s too large)",
                    p.kind, names[vm]
                ));
            }
        }
        Ok(c)
    }

    /// Charging intervals per epoch.
    pub fn intervals_per_epoch(&self) -> f64 {
        (self.epoch / self.interval) as f64
    }

    /// CPU Resos of `vm` per epoch: `100 × vCPUs × intervals × price`.
    pub fn cpu_allocation(&self, vm: usize) -> f64 {
        100.0 * self.vcpus[vm] * self.intervals_per_epoch() * self.cpu_price
    }

    /// The link's MTUs per epoch (all VMs together).
    pub fn ib_pool(&self) -> f64 {
        self.link_bytes_per_s * (self.epoch as f64 * 1e-12) / self.mtu
    }

    /// `vm`'s IB Resos per epoch: its weighted share of the pool, at the
    /// base price (0 for an unmonitored VM).
    pub fn ib_allocation(&self, vm: usize) -> f64 {
        if !self.monitored.contains(&vm) {
            return 0.0;
        }
        let total: f64 = self.monitored.iter().map(|&i| self.weights[i]).sum();
        self.ib_pool() * self.weights[vm] / total * self.mtu_price
    }
}

/// The balances of every VM through the epochs.
#[derive(Clone, Debug)]
pub struct Ledger {
    cfg: ResoConfig,
    /// Allocations per VM (CPU, IB), computed once.
    alloc: Vec<(f64, f64)>,
    cpu: Vec<f64>,
    ib: Vec<f64>,
    epoch: Option<u64>,
}

impl Ledger {
    /// Balances are filled by the first [`Ledger::begin`].
    pub fn new(cfg: ResoConfig) -> Self {
        let n = cfg.vcpus.len();
        Self {
            alloc: (0..n)
                .map(|vm| (cfg.cpu_allocation(vm), cfg.ib_allocation(vm)))
                .collect(),
            cfg,
            cpu: vec![0.0; n],
            ib: vec![0.0; n],
            epoch: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ResoConfig {
        &self.cfg
    }

    /// Epoch of the interval that ends at `now`: (now − 1 ps) / epoch, so
    /// the interval ending exactly at 1 s still belongs to epoch 0.
    pub fn epoch_of(&self, now: Time) -> u64 {
        now.saturating_sub(1) / self.cfg.epoch
    }

    /// Fraction of the epoch left after the interval ending at `now`.
    pub fn epoch_left(&self, now: Time) -> f64 {
        let end = (self.epoch_of(now) + 1) * self.cfg.epoch;
        (end - now.min(end)) as f64 / self.cfg.epoch as f64
    }

    /// Starts the interval ending at `now`: at a new epoch (or the first
    /// call) every balance is set back to its allocation. Returns whether
    /// it replenished.
    pub fn begin(&mut self, now: Time) -> bool {
        let e = self.epoch_of(now);
        if self.epoch == Some(e) {
            return false;
        }
        self.epoch = Some(e);
        for (vm, &(c, i)) in self.alloc.iter().enumerate() {
            self.cpu[vm] = c;
            self.ib[vm] = i;
        }
        true
    }

    /// Total balance of `vm` (both resources).
    pub fn balance(&self, vm: usize) -> f64 {
        self.cpu[vm] + self.ib[vm]
    }

    /// (CPU, IB) balances of `vm`.
    pub fn balances(&self, vm: usize) -> (f64, f64) {
        (self.cpu[vm], self.ib[vm])
    }

    /// The fraction of its allocation `vm` would have left after paying
    /// `ib` and `cpu` Resos: pooled, or the lower of the two resources.
    pub fn left_after(&self, vm: usize, ib: f64, cpu: f64) -> f64 {
        let (ca, ia) = self.alloc[vm];
        let (c, i) = ((self.cpu[vm] - cpu).max(0.0), (self.ib[vm] - ib).max(0.0));
        let frac = |x: f64, a: f64| if a > 0.0 { x / a } else { 1.0 };
        match self.cfg.balance {
            BalanceMode::Pooled => frac((self.balance(vm) - ib - cpu).max(0.0), ca + ia),
            BalanceMode::PerResource => frac(c, ca).min(frac(i, ia)),
        }
    }

    /// Deducts `ib` and `cpu` Resos from `vm`. A balance never goes below
    /// zero: usage past it is unpaid (a cap cannot stop VMM-bypass I/O at
    /// once). Pooled: the IB charge first eats the IB part, then the CPU
    /// part, and the other way round.
    pub fn charge(&mut self, vm: usize, ib: f64, cpu: f64) {
        match self.cfg.balance {
            BalanceMode::PerResource => {
                self.cpu[vm] = (self.cpu[vm] - cpu).max(0.0);
                self.ib[vm] = (self.ib[vm] - ib).max(0.0);
            }
            BalanceMode::Pooled => {
                let total = (self.balance(vm) - ib - cpu).max(0.0);
                // Keep the split only for the record; the pool is what counts.
                let ib_part = (self.ib[vm] - ib).clamp(0.0, total);
                self.ib[vm] = ib_part;
                self.cpu[vm] = total - ib_part;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thesis_budget() {
        let c = ResoConfig::thesis(2);
        assert_eq!(c.cpu_allocation(0), 100_000.0);
        assert_eq!(c.ib_pool(), 1_048_576.0);
        assert_eq!(c.ib_allocation(1), 524_288.0);
        let mut l = Ledger::new(c);
        assert!(l.begin(1_000_000_000));
        assert_eq!(l.balance(0), 624_288.0);
        l.charge(0, 1000.0, 100.0);
        assert_eq!(l.balance(0), 623_188.0);
        // Same epoch: nothing; the interval ending at 1 s is still epoch 0.
        assert!(!l.begin(EPOCH_PS));
        assert!(l.begin(EPOCH_PS + INTERVAL_PS));
        assert_eq!(l.balance(0), 624_288.0);
    }

    #[test]
    fn per_resource_floor_is_the_lower_resource() {
        let mut c = ResoConfig::thesis(2);
        c.balance = BalanceMode::PerResource;
        let mut l = Ledger::new(c);
        l.begin(1);
        l.charge(0, 500_000.0, 0.0);
        let f = l.left_after(0, 0.0, 0.0);
        assert!((f - 24_288.0 / 524_288.0).abs() < 1e-12, "{f}");
        assert_eq!(l.balances(0), (100_000.0, 24_288.0));
    }
}
