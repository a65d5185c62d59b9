//! DRX's Resource Pricer (G §2.6, §2.8, §2.9): per-VME prices in Resos per
//! CQE, raised by Eq. 6 on an SLA violation, at most once per interval,
//! never above MaxPrice = ResosAlloc / IntsPerEpoch (where the VME is frozen
//! at its minimum allocation).

use serde::Serialize;
use std::collections::BTreeMap;

/// Who is blamed how much (G §2.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Blame {
    /// Equal-Blame: δP = 1 / |DCCR|.
    Equal,
    /// Hurt-Based: δP = IO_i / Σ_{k ∈ DCCR} IO_k.
    Hurt,
}

/// δP of `vme` among `dccr`, with `io(k)` the I/O (CQEs) the PM last saw
/// from VME k. When the DCCR's total I/O is zero (or not a finite positive
/// number) Hurt-Based falls back to equal shares — our choice: nobody is
/// measurably hurting, so nobody is blamed more.
///
/// ```
/// use ibcloud_control::drx::pricing::{delta_p, Blame};
/// let io = |k: usize| [900.0, 100.0][k];
/// assert_eq!(delta_p(Blame::Equal, &[0, 1], 0, io), 0.5);
/// assert!((delta_p(Blame::Hurt, &[0, 1], 0, io) - 0.9).abs() < 1e-12);
/// ```
pub fn delta_p(blame: Blame, dccr: &[usize], vme: usize, io: impl Fn(usize) -> f64) -> f64 {
    if dccr.is_empty() {
        return 0.0;
    }
    let equal = 1.0 / dccr.len() as f64;
    match blame {
        Blame::Equal => equal,
        Blame::Hurt => {
            let clean = |k: usize| {
                let x = io(k);
                if x.is_finite() && x > 0.0 {
                    x
                } else {
                    0.0
                }
            };
            let total: f64 = dccr.iter().map(|&k| clean(k)).sum();
            if total > 0.0 && total.is_finite() {
                clean(vme) / total
            } else {
                equal
            }
        }
    }
}

/// Eq. 6's relative price change: Δp/p = δP·α·e (e = PD as a fraction; a
/// negative or non-finite product is no change).
pub fn relative_change(dp: f64, alpha: f64, e: f64) -> f64 {
    let r = dp * alpha * e;
    if r.is_finite() && r > 0.0 {
        r
    } else {
        0.0
    }
}

/// G §2.9: MaxPrice = ResosAlloc / IntsPerEpoch.
pub fn max_price(resos_alloc: f64, ints_per_epoch: f64) -> f64 {
    resos_alloc / ints_per_epoch
}

/// A priced thing: a VME, or (A7 option) a VME on one host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct PriceKey {
    /// VME index.
    pub vme: usize,
    /// Host, when prices are per (VME, host).
    pub host: Option<usize>,
}

/// One price.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PriceState {
    /// Resos per CQE.
    pub price: f64,
    /// The ceiling.
    pub max_price: f64,
    /// No more changes this epoch (ceiling or IOmin reached).
    pub frozen: bool,
    /// Interval of the last change.
    pub last_change: Option<u64>,
}

/// What a raise did.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "outcome")]
pub enum PriceOutcome {
    /// Eq. 6 applied.
    Raised {
        /// Before.
        old: f64,
        /// After.
        new: f64,
    },
    /// Eq. 6 hit MaxPrice: price = MaxPrice, frozen (minimum allocation).
    Ceiling {
        /// Before.
        old: f64,
        /// After (= MaxPrice).
        new: f64,
    },
    /// Frozen: nothing.
    Frozen,
    /// Already changed this interval: nothing.
    AlreadyChanged,
    /// Zero change asked.
    Unchanged,
}

/// Every price of the pricer.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PriceBook {
    initial: f64,
    states: BTreeMap<PriceKey, PriceState>,
}

impl PriceBook {
    /// Prices start at `initial` Resos per CQE (A9: 1).
    pub fn new(initial: f64) -> Self {
        Self {
            initial,
            states: BTreeMap::new(),
        }
    }

    /// Adds (or re-bounds) a price with ceiling `max_price`.
    pub fn insert(&mut self, key: PriceKey, max_price: f64) {
        let initial = self.initial.min(max_price);
        self.states.insert(
            key,
            PriceState {
                price: initial,
                max_price,
                frozen: false,
                last_change: None,
            },
        );
    }

    /// The state of `key`.
    pub fn get(&self, key: PriceKey) -> Option<&PriceState> {
        self.states.get(&key)
    }

    /// The price of `key` (the initial price if unknown).
    pub fn price(&self, key: PriceKey) -> f64 {
        self.states.get(&key).map_or(self.initial, |s| s.price)
    }

    /// The initial price.
    pub fn initial(&self) -> f64 {
        self.initial
    }

    /// Eq. 6 on `key` in interval `interval`: p ← min(p·(1 + rel),
    /// MaxPrice), at most once per interval, never when frozen.
    pub fn raise(&mut self, key: PriceKey, rel: f64, interval: u64) -> PriceOutcome {
        let Some(s) = self.states.get_mut(&key) else {
            return PriceOutcome::Unchanged;
        };
        if s.frozen {
            return PriceOutcome::Frozen;
        }
        if s.last_change == Some(interval) {
            return PriceOutcome::AlreadyChanged;
        }
        if !(rel.is_finite() && rel > 0.0) {
            return PriceOutcome::Unchanged;
        }
        let old = s.price;
        let new = old * (1.0 + rel);
        s.last_change = Some(interval);
        // A non-finite product counts as reaching the ceiling.
        if !new.is_finite() || new >= s.max_price {
            s.price = s.max_price;
            s.frozen = true;
            PriceOutcome::Ceiling { old, new: s.price }
        } else {
            s.price = new;
            PriceOutcome::Raised { old, new }
        }
    }

    /// Freezes `key` (its VME reached IOmin). True if it was not frozen.
    pub fn freeze(&mut self, key: PriceKey) -> bool {
        self.states
            .get_mut(&key)
            .is_some_and(|s| !std::mem::replace(&mut s.frozen, true))
    }

    /// A8 default: every price back to the initial one, unfrozen.
    pub fn reset(&mut self) {
        let initial = self.initial;
        for s in self.states.values_mut() {
            s.price = initial.min(s.max_price);
            s.frozen = false;
            s.last_change = None;
        }
    }

    /// A8 option: prices not changed in `interval` move `rate` of the way
    /// back to the initial price. Returns the keys that moved.
    pub fn restore(&mut self, rate: f64, interval: u64) -> Vec<(PriceKey, f64)> {
        let initial = self.initial;
        let mut moved = Vec::new();
        for (k, s) in self.states.iter_mut() {
            if s.last_change != Some(interval) && s.price > initial && rate > 0.0 {
                s.price -= (s.price - initial) * rate.min(1.0);
                moved.push((*k, s.price));
            }
        }
        moved
    }

    /// Every key.
    pub fn keys(&self) -> Vec<PriceKey> {
        self.states.keys().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(vme: usize) -> PriceKey {
        PriceKey { vme, host: None }
    }

    #[test]
    fn g_worked_examples() {
        // G §2.8: PD 30 %, two VMEs in the DCCR, α = 1.
        let e = 0.30;
        let io = |k: usize| [9.0, 1.0][k];
        let eb = relative_change(delta_p(Blame::Equal, &[0, 1], 0, io), 1.0, e);
        assert!((eb - 0.15).abs() < 1e-12);
        let hb0 = relative_change(delta_p(Blame::Hurt, &[0, 1], 0, io), 1.0, e);
        let hb1 = relative_change(delta_p(Blame::Hurt, &[0, 1], 1, io), 1.0, e);
        assert!((hb0 - 0.27).abs() < 1e-12 && (hb1 - 0.03).abs() < 1e-12);
        let mut b = PriceBook::new(1.0);
        b.insert(key(0), 100.0);
        b.insert(key(1), 100.0);
        assert_eq!(
            b.raise(key(0), hb0, 0),
            PriceOutcome::Raised {
                old: 1.0,
                new: 1.27
            }
        );
        assert_eq!(
            b.raise(key(1), hb1, 0),
            PriceOutcome::Raised {
                old: 1.0,
                new: 1.03
            }
        );
    }

    #[test]
    fn hurt_with_no_io_is_equal() {
        assert_eq!(delta_p(Blame::Hurt, &[0, 1, 2], 1, |_| 0.0), 1.0 / 3.0);
        assert_eq!(delta_p(Blame::Hurt, &[0, 1], 1, |_| f64::NAN), 0.5);
    }

    #[test]
    fn one_change_per_interval_ceiling_and_freeze() {
        let mut b = PriceBook::new(1.0);
        // ResosAlloc 120 over 60 intervals: MaxPrice 2.
        b.insert(key(0), max_price(120.0, 60.0));
        assert!(matches!(
            b.raise(key(0), 0.5, 3),
            PriceOutcome::Raised { .. }
        ));
        assert_eq!(b.raise(key(0), 0.5, 3), PriceOutcome::AlreadyChanged);
        assert_eq!(b.price(key(0)), 1.5);
        assert_eq!(
            b.raise(key(0), 0.5, 4),
            PriceOutcome::Ceiling { old: 1.5, new: 2.0 }
        );
        assert_eq!(b.raise(key(0), 0.5, 5), PriceOutcome::Frozen);
        assert_eq!(b.price(key(0)), 2.0);
        b.reset();
        assert_eq!(b.price(key(0)), 1.0);
        assert!(matches!(
            b.raise(key(0), 0.1, 5),
            PriceOutcome::Raised { .. }
        ));
        assert!(b.freeze(key(0)));
        assert!(!b.freeze(key(0)));
        assert_eq!(b.raise(key(0), 0.1, 6), PriceOutcome::Frozen);
    }

    #[test]
    fn restore_moves_back() {
        let mut b = PriceBook::new(1.0);
        b.insert(key(0), 10.0);
        b.raise(key(0), 1.0, 0);
        assert!(b.restore(0.5, 0).is_empty());
        assert_eq!(b.restore(0.5, 1), vec![(key(0), 1.5)]);
    }
}
