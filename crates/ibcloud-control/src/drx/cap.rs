//! The CPU-cap controller (G §2.7, Eq. 7) and the platform-only baselines'
//! cap steps (G §4.3–4.4).
//!
//! Eq. 7: c ← c·(1 − rel·δC), rel = Δp/p of the VME's price, δC = EL_h /
//! RL (fraction of the epoch left on the host over fraction of the VM's
//! Resos left). A5 ([`CapMode`]):
//! - as written: δC unbounded (RL is floored at 1e-9 so it stays finite;
//!   an exhausted VM gets δC ≈ 1e9·EL), the cap only kept in [0, 100];
//! - repaired: δC ≤ `dc_max` (default 1, Eq. 5's 0 < Z < 1) and the cap
//!   kept in [cap_min, 100], cap_min the cap at which the VM still gets its
//!   IOmin.
//!
//! Caps are per cent of one CPU (the VMs of G have one pinned vCPU). A cap
//! becomes a CFS quota of cap/100 × period, at least CFS's smallest quota
//! (1 ms): a cap below that is applied as 1 ms per period.

use serde::Serialize;

/// Smallest RL δC divides by (as-written mode).
pub const RL_FLOOR: f64 = 1e-9;
/// CC-Dist / PC-Dist step: 5 points (G §4.3).
pub const PLATFORM_STEP: f64 = 5.0;

/// A5: Eq. 7 as written or repaired.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapMode {
    /// δC unbounded, cap in [0, 100].
    #[default]
    AsWritten,
    /// δC ≤ dc_max, cap in [cap_min, 100].
    Repaired,
}

/// Eq. 7's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CapRule {
    /// A5.
    pub mode: CapMode,
    /// Repaired mode's bound on δC.
    pub dc_max: f64,
}

impl Default for CapRule {
    fn default() -> Self {
        Self {
            mode: CapMode::AsWritten,
            dc_max: 1.0,
        }
    }
}

/// One Eq. 7 step.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CapStep {
    /// δC used.
    pub dc: f64,
    /// The new cap (% of one CPU).
    pub cap: f64,
}

fn unit(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}

/// δC = EL/RL (fractions in [0, 1]; NaN read as 0). EL = 0 (the epoch is
/// over) gives 0 whatever RL is.
pub fn delta_c(el: f64, rl: f64, rule: CapRule) -> f64 {
    let (el, rl) = (unit(el), unit(rl));
    if el == 0.0 {
        return 0.0;
    }
    let dc = el / rl.max(RL_FLOOR);
    match rule.mode {
        CapMode::AsWritten => dc,
        CapMode::Repaired => dc.min(rule.dc_max),
    }
}

/// Eq. 7 on cap `cap` with relative price change `rel`, epoch left `el`,
/// Resos left `rl`; `cap_min` bounds it in repaired mode. Never NaN or
/// infinite.
///
/// ```
/// use ibcloud_control::drx::cap::{eq7, CapMode, CapRule};
/// // Half the epoch and half the Resos left: δC = 1, a 15 % price rise
/// // cuts 100 to 85.
/// let s = eq7(100.0, 0.15, 0.5, 0.5, 10.0, CapRule::default());
/// assert_eq!(s.dc, 1.0);
/// assert!((s.cap - 85.0).abs() < 1e-9);
/// // Overspent (RL 10 %, EL 50 %): δC = 5 as written → cap 25; repaired
/// // bounds δC at 1 → cap 85.
/// let w = eq7(100.0, 0.15, 0.5, 0.1, 10.0, CapRule::default());
/// assert!((w.cap - 25.0).abs() < 1e-9);
/// let r = eq7(100.0, 0.15, 0.5, 0.1, 10.0, CapRule { mode: CapMode::Repaired, dc_max: 1.0 });
/// assert!((r.cap - 85.0).abs() < 1e-9);
/// ```
pub fn eq7(cap: f64, rel: f64, el: f64, rl: f64, cap_min: f64, rule: CapRule) -> CapStep {
    let cap = if cap.is_finite() {
        cap.clamp(0.0, 100.0)
    } else {
        100.0
    };
    let rel = if rel.is_finite() && rel > 0.0 {
        rel
    } else {
        0.0
    };
    let dc = delta_c(el, rl, rule);
    let raw = cap * (1.0 - rel * dc);
    let raw = if raw.is_finite() { raw } else { 0.0 };
    let lo = match rule.mode {
        CapMode::AsWritten => 0.0,
        CapMode::Repaired => clean_min(cap_min),
    };
    CapStep {
        dc,
        cap: raw.clamp(lo, 100.0),
    }
}

fn clean_min(m: f64) -> f64 {
    if m.is_finite() {
        m.clamp(0.0, 100.0)
    } else {
        0.0
    }
}

/// The cap at which a VM keeps its floor I/O when I/O is proportional to
/// CPU (the stability condition of G §2.9), taking `g` as the VME's I/O
/// uncapped: 100 × floor / g, within [1, 100]. SV VMEs' floor is IOmin;
/// an SS VME in a DCCR may only go down to its SLA (floor = g → 100).
pub fn cap_min_for(floor_io: f64, g: f64) -> f64 {
    if !(g.is_finite() && g > 0.0 && floor_io.is_finite()) {
        return 1.0;
    }
    (100.0 * floor_io / g).clamp(1.0, 100.0)
}

/// A6: how far CC-Dist and PC-Dist may cut.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CcFloor {
    /// "by 5 % (up to 25 %)" as at most 25 points removed: cap ≥ 75.
    #[default]
    #[serde(rename = "points-25")]
    Points25,
    /// Down to a cap of 25.
    #[serde(rename = "cap-25")]
    Cap25,
}

impl CcFloor {
    /// The lowest cap.
    pub fn floor(self) -> f64 {
        match self {
            CcFloor::Points25 => 75.0,
            CcFloor::Cap25 => 25.0,
        }
    }
}

/// CC-Dist (5 points) or PC-Dist (5 × share points) on `cap`, not below
/// the A6 floor (a cap already below it is left alone).
///
/// ```
/// use ibcloud_control::drx::cap::{platform_step, CcFloor};
/// assert_eq!(platform_step(100.0, 1.0, CcFloor::Points25), 95.0);
/// assert_eq!(platform_step(77.0, 1.0, CcFloor::Points25), 75.0);
/// assert_eq!(platform_step(77.0, 1.0, CcFloor::Cap25), 72.0);
/// assert_eq!(platform_step(100.0, 0.9, CcFloor::Cap25), 95.5); // PC-Dist, share 0.9
/// ```
pub fn platform_step(cap: f64, share: f64, floor: CcFloor) -> f64 {
    let cap = if cap.is_finite() {
        cap.clamp(0.0, 100.0)
    } else {
        100.0
    };
    let share = if share.is_finite() {
        share.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let f = floor.floor();
    if cap <= f {
        return cap;
    }
    (cap - PLATFORM_STEP * share).max(f)
}

/// CFS's smallest quota: 1 ms (ps).
pub const MIN_QUOTA_PS: u64 = 1_000_000_000;

/// A cap as a CFS quota for `period` (ps): `None` (unlimited) at 100 % or
/// more, else cap/100 × period, at least CFS's 1 ms (and never above the
/// period).
pub fn cap_quota(cap: f64, period: u64) -> Option<u64> {
    if !cap.is_finite() || cap >= 100.0 {
        return None;
    }
    let q = ((period as f64) * cap.max(0.0) / 100.0).round() as u64;
    Some(q.max(MIN_QUOTA_PS.min(period)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn exhausted_resos() {
        // RL = 0: as written δC is huge but finite, the cap falls to 0;
        // repaired it stops at cap_min.
        let w = eq7(80.0, 0.1, 0.5, 0.0, 30.0, CapRule::default());
        assert!(w.dc.is_finite() && w.dc > 1e6);
        assert_eq!(w.cap, 0.0);
        let r = eq7(
            80.0,
            0.1,
            0.5,
            0.0,
            30.0,
            CapRule {
                mode: CapMode::Repaired,
                dc_max: 1.0,
            },
        );
        assert_eq!((r.dc, r.cap), (1.0, 72.0));
        let r = eq7(
            31.0,
            0.5,
            1.0,
            0.0,
            30.0,
            CapRule {
                mode: CapMode::Repaired,
                dc_max: 1.0,
            },
        );
        assert_eq!(r.cap, 30.0);
        // End of the epoch: no cut.
        assert_eq!(eq7(80.0, 0.3, 0.0, 0.0, 0.0, CapRule::default()).cap, 80.0);
    }

    #[test]
    fn quota_and_floor() {
        const P: u64 = 100 * MIN_QUOTA_PS; // 100 ms
        assert_eq!(cap_quota(100.0, P), None);
        assert_eq!(cap_quota(25.0, P), Some(25 * MIN_QUOTA_PS));
        assert_eq!(cap_quota(0.0, P), Some(MIN_QUOTA_PS));
        assert_eq!(cap_quota(5.0, 10 * MIN_QUOTA_PS), Some(MIN_QUOTA_PS));
        assert_eq!(cap_min_for(20.0, 100.0), 20.0);
        assert_eq!(cap_min_for(100.0, 100.0), 100.0);
        assert_eq!(cap_min_for(0.0, 100.0), 1.0);
        assert_eq!(cap_min_for(1.0, 0.0), 1.0);
    }

    proptest! {
        #[test]
        fn caps_finite_and_bounded(
            cap in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), -10.0f64..200.0],
            rel in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), 0.0f64..50.0],
            el in prop_oneof![Just(f64::NAN), 0.0f64..1.0],
            rl in prop_oneof![Just(0.0), Just(f64::NAN), 0.0f64..1.0],
            cap_min in 0.0f64..100.0,
            dc_max in 0.01f64..10.0,
            repaired in any::<bool>(),
        ) {
            let mode = if repaired { CapMode::Repaired } else { CapMode::AsWritten };
            let s = eq7(cap, rel, el, rl, cap_min, CapRule { mode, dc_max });
            prop_assert!(s.cap.is_finite() && s.dc.is_finite());
            prop_assert!((0.0..=100.0).contains(&s.cap));
            if repaired {
                prop_assert!(s.cap >= cap_min - 1e-12);
                prop_assert!(s.dc <= dc_max);
            }
            // Never raises a (valid) cap.
            if cap.is_finite() && (0.0..=100.0).contains(&cap) && !repaired {
                prop_assert!(s.cap <= cap + 1e-9);
            }
        }
    }
}
