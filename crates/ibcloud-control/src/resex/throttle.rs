//! FreeMarket's cap rule (`GETCPUCAP` of F Algorithm 2): when a VM's
//! remaining Resos fall below 10 % of its allocation while more than 10 %
//! of the epoch remains, its CPU cap is "decremented by 10 % from its
//! earlier allocated value" (F §5.6.2). How much, how often and whether the
//! cap comes back are left open (F §5.6 ambiguity 2): options here, with
//! the defaults argued in docs/resex.md.

use super::params::{Params, Range};
use serde::Serialize;

/// How a cut lowers the previous cap.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cut {
    /// New = previous × (1 − step): "by 10 % from its earlier allocated
    /// value" read as 10 % *of* that value (default).
    Multiplicative(f64),
    /// New = previous − step percentage points.
    Points(f64),
}

/// How often a cut may happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Every {
    /// Every charging interval while the condition holds (default).
    Interval,
    /// At most once per epoch.
    Epoch,
}

/// What "the previous allocated value" of an uncapped VM is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UncappedBase {
    /// 100 × its vCPUs: what it was allowed (default).
    Vcpus,
    /// The CPU % it used in the interval.
    Observed,
}

/// The rule's parameters.
#[derive(Clone, Debug, Serialize)]
pub struct ThrottleRule {
    /// Cut when the remaining fraction of the allocation is below this
    /// (F: 10 %).
    pub floor: f64,
    /// … and more than this fraction of the epoch remains (F: 10 %).
    pub epoch_guard: f64,
    /// Size of a cut.
    pub cut: Cut,
    /// Frequency of cuts.
    pub every: Every,
    /// Whether the cuts are undone at the next epoch (with the Resos).
    pub restore_at_epoch: bool,
    /// Lowest cap a cut gives (Xen's granularity: 1 %; 0 would mean
    /// "uncapped" to Xen).
    pub min_cap: f64,
    /// Previous value of an uncapped VM.
    pub uncapped_base: UncappedBase,
}

/// Keys [`ThrottleRule::from_params`] reads.
pub(crate) const THROTTLE_KEYS: [&str; 8] = [
    "floor",
    "epoch-guard",
    "cut",
    "cut-step",
    "cut-every",
    "restore-at-epoch",
    "min-cap",
    "uncapped-base",
];

impl Default for ThrottleRule {
    fn default() -> Self {
        Self {
            floor: 0.10,
            epoch_guard: 0.10,
            cut: Cut::Multiplicative(0.10),
            every: Every::Interval,
            restore_at_epoch: true,
            min_cap: 1.0,
            uncapped_base: UncappedBase::Vcpus,
        }
    }
}

impl ThrottleRule {
    pub(crate) fn from_params(p: &Params<'_>) -> Result<Self, String> {
        let floor = p.num("floor", 0.10, Range::Fraction)?;
        let epoch_guard = p.num("epoch-guard", 0.10, Range::UnitOpen)?;
        let cut = match p.choice("cut", &["multiplicative", "points"])? {
            "multiplicative" => Cut::Multiplicative(p.num("cut-step", 0.10, Range::Fraction)?),
            _ => {
                let s = p.num("cut-step", 10.0, Range::Positive)?;
                Cut::Points(s)
            }
        };
        let every = match p.choice("cut-every", &["interval", "epoch"])? {
            "interval" => Every::Interval,
            _ => Every::Epoch,
        };
        let min_cap = p.num("min-cap", 1.0, Range::Positive)?;
        let uncapped_base = match p.choice("uncapped-base", &["vcpus", "observed"])? {
            "vcpus" => UncappedBase::Vcpus,
            _ => UncappedBase::Observed,
        };
        Ok(Self {
            floor,
            epoch_guard,
            cut,
            every,
            restore_at_epoch: p.boolean("restore-at-epoch", true)?,
            min_cap,
            uncapped_base,
        })
    }

    /// Whether the rule fires: `left` = fraction of the allocation left
    /// after this interval's charge, `epoch_left` = fraction of the epoch
    /// left, `cut_this_epoch` = a cut already happened this epoch.
    pub fn fires(&self, left: f64, epoch_left: f64, cut_this_epoch: bool) -> bool {
        left < self.floor
            && epoch_left > self.epoch_guard
            && !(self.every == Every::Epoch && cut_this_epoch)
    }

    /// The cut cap from the previous one (`previous` 0 = uncapped: then
    /// `full` = 100 × vCPUs or the `observed` CPU %).
    ///
    /// ```
    /// use ibcloud_control::resex::throttle::ThrottleRule;
    /// let r = ThrottleRule::default();
    /// assert_eq!(r.cut_from(0.0, 100.0, 37.0), 90.0);
    /// assert!((r.cut_from(90.0, 100.0, 37.0) - 81.0).abs() < 1e-9);
    /// assert_eq!(r.cut_from(1.05, 100.0, 37.0), 1.0); // min-cap
    /// ```
    pub fn cut_from(&self, previous: f64, full: f64, observed: f64) -> f64 {
        let prev = if previous > 0.0 {
            previous
        } else {
            match self.uncapped_base {
                UncappedBase::Vcpus => full,
                UncappedBase::Observed => observed.clamp(self.min_cap, full),
            }
        };
        let new = match self.cut {
            Cut::Multiplicative(f) => prev * (1.0 - f),
            Cut::Points(p) => prev - p,
        };
        new.max(self.min_cap)
    }
}
