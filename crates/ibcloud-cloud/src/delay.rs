//! Workload delay (Paper VI, Section IV).
//!
//! A host of capacity C cores receives demand d(t) (cores, averaged over
//! interval t of Δt minutes). Work it cannot serve in an interval waits, first
//! come first served, and is served as soon as demand leaves room:
//!
//! ```text
//! q(t+1) = max{ q(t) + d(t+1)·Δt − C·Δt, 0 }      backlog, core-minutes, q(0) = 0
//! w(t)   = q(t) / C                               current delay, wall-clock minutes
//! Q      = Σ_t w(t) · Δt/1 min                    total delay (Eq. 1), minutes
//! ```
//!
//! [`DelayUnit::WallMinutes`] (the default, which matches the magnitudes of
//! the paper's tables) reports w and Q as above; [`DelayUnit::CoreMinutes`]
//! reports the literal Eq. (1), Σ q(t)·Δt/1 min, and q as current delay.
//! With Δt = 1 min, Q is the plain sum of the current delays.
//!
//! An interval counts as delayed when its backlog exceeds
//! [`BACKLOG_EPSILON`] cores·Δt, so that floating-point residue of an exactly
//! drained queue never counts as delay (the recursion itself is exact).

use crate::error::ConsolidationError;

/// Backlog (in cores × Δt) at or below which an interval does not count as delayed.
pub const BACKLOG_EPSILON: f64 = 1e-9;

/// The unit of reported delays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DelayUnit {
    /// Wall-clock minutes: current delay w = q/C, the time a request arriving
    /// now waits; Q = Σ w·Δt. The default.
    #[default]
    WallMinutes,
    /// Core-minutes: current delay is the backlog q itself; Q = Σ q·Δt
    /// (Eq. (1) read literally). C times larger than wall minutes.
    CoreMinutes,
}

impl DelayUnit {
    /// The unit named `wall` / `wall_minutes` or `core` / `core_minutes`.
    ///
    /// ```
    /// use ibcloud_cloud::DelayUnit;
    /// assert_eq!(DelayUnit::from_name("core_minutes").unwrap(), DelayUnit::CoreMinutes);
    /// assert!(DelayUnit::from_name("seconds").is_err());
    /// ```
    pub fn from_name(name: &str) -> Result<Self, ConsolidationError> {
        match name {
            "wall" | "wall_minutes" | "wall-minutes" => Ok(Self::WallMinutes),
            "core" | "core_minutes" | "core-minutes" => Ok(Self::CoreMinutes),
            _ => Err(ConsolidationError::UnknownName {
                what: "delay unit",
                name: name.to_owned(),
                expected: "wall_minutes, core_minutes",
            }),
        }
    }

    /// The canonical name (`wall_minutes`, `core_minutes`).
    pub fn name(self) -> &'static str {
        match self {
            Self::WallMinutes => "wall_minutes",
            Self::CoreMinutes => "core_minutes",
        }
    }
}

/// A host as the delay sees it: capacity in cores and sampling interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Host {
    /// Capacity C in cores (a 12-core host packed at θ = 70 % has 8.4).
    pub capacity: f64,
    /// Sampling interval Δt in minutes.
    pub interval_minutes: f64,
}

impl Host {
    /// A host, checked: capacity and interval must be positive and finite.
    ///
    /// ```
    /// use ibcloud_cloud::Host;
    /// assert!(Host::new(12.0, 1.0).is_ok());
    /// assert!(Host::new(0.0, 1.0).is_err());
    /// ```
    pub fn new(capacity: f64, interval_minutes: f64) -> Result<Self, ConsolidationError> {
        if !(capacity.is_finite() && capacity > 0.0) {
            return Err(ConsolidationError::BadParameter {
                name: "capacity",
                value: capacity,
                expected: "a host needs a positive number of cores",
            });
        }
        if !(interval_minutes.is_finite() && interval_minutes > 0.0) {
            return Err(ConsolidationError::BadParameter {
                name: "interval_minutes",
                value: interval_minutes,
                expected: "the sampling interval must be a positive number of minutes",
            });
        }
        Ok(Self {
            capacity,
            interval_minutes,
        })
    }

    /// Factor from the internal backlog r (cores × Δt) to the current delay.
    fn current_scale(&self, unit: DelayUnit) -> f64 {
        match unit {
            DelayUnit::WallMinutes => self.interval_minutes / self.capacity,
            DelayUnit::CoreMinutes => self.interval_minutes,
        }
    }

    /// Factor from Σ r to the total delay Q.
    pub(crate) fn total_scale(&self, unit: DelayUnit) -> f64 {
        self.current_scale(unit) * self.interval_minutes
    }
}

/// What a host's demand did over a window.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DelayStats {
    /// Total delay Q over the window, in the unit asked for.
    pub total_delay: f64,
    /// Largest current delay of any interval.
    pub max_delay: f64,
    /// Intervals in the window.
    pub intervals: usize,
    /// Intervals that ended with a backlog (q(t) > 0).
    pub delayed_intervals: usize,
    /// Mean current delay over the delayed intervals (0 when there are none).
    pub mean_delay_when_delayed: f64,
    /// Mean demand in cores (may exceed the capacity).
    pub mean_demand: f64,
    /// Share (0–1) of the demand volume that arrived in delayed intervals.
    pub delayed_demand_share: f64,
}

impl DelayStats {
    /// Mean demand as a percentage of `cores` (the paper's "bin filling",
    /// from demand, so it can exceed 100 %).
    pub fn filling(&self, cores: f64) -> f64 {
        100.0 * self.mean_demand / cores
    }

    /// Percentage of intervals with a backlog.
    pub fn pct_delayed(&self) -> f64 {
        if self.intervals == 0 {
            0.0
        } else {
            100.0 * self.delayed_intervals as f64 / self.intervals as f64
        }
    }
}

#[inline]
pub(crate) fn step(r: f64, x: f64) -> f64 {
    let v = r + x;
    if v > 0.0 {
        v
    } else {
        0.0
    }
}

/// The backlog q(t) in core-minutes of one contiguous demand series.
///
/// ```
/// use ibcloud_cloud::{backlog, Host};
/// // Paper VI, Fig. 3, Case 2: one core, 150 % then 100 %: half a minute forever.
/// let q = backlog(&[1.5, 1.0, 1.0], Host::new(1.0, 1.0).unwrap());
/// assert_eq!(q, vec![0.5, 0.5, 0.5]);
/// ```
pub fn backlog(series: &[f64], host: Host) -> Vec<f64> {
    let mut r = 0.0;
    series
        .iter()
        .map(|d| {
            r = step(r, d - host.capacity);
            r * host.interval_minutes
        })
        .collect()
}

/// Total delay Q of one contiguous demand series.
///
/// ```
/// use ibcloud_cloud::{total_delay, DelayUnit, Host};
/// let host = Host::new(12.0, 1.0).unwrap();
/// // Constant 130 % of 12 cores for a day: 0.3·1440·1441/2 wall-minutes.
/// let q = total_delay(&vec![15.6; 1440], host, DelayUnit::WallMinutes);
/// assert!((q - 311_256.0).abs() < 1e-6);
/// ```
pub fn total_delay(series: &[f64], host: Host, unit: DelayUnit) -> f64 {
    delay_stats(&[series], host, unit).total_delay
}

/// The full statistics of a demand given as segments (the backlog starts
/// empty at the start of each).
///
/// ```
/// use ibcloud_cloud::{delay_stats, DelayUnit, Host};
/// let s = delay_stats(&[&[2.0, 0.0, 1.0, 1.0]], Host::new(1.0, 1.0).unwrap(), DelayUnit::WallMinutes);
/// assert_eq!((s.total_delay, s.max_delay, s.delayed_intervals), (1.0, 1.0, 1));
/// assert_eq!(s.mean_demand, 1.0);
/// ```
pub fn delay_stats(pieces: &[&[f64]], host: Host, unit: DelayUnit) -> DelayStats {
    let c = host.capacity;
    let (mut sum_r, mut max_r, mut delayed_r) = (0.0f64, 0.0f64, 0.0f64);
    let (mut intervals, mut delayed) = (0usize, 0usize);
    let (mut volume, mut delayed_volume) = (0.0f64, 0.0f64);
    for piece in pieces {
        let mut r = 0.0;
        for &d in *piece {
            r = step(r, d - c);
            volume += d;
            sum_r += r;
            if r > BACKLOG_EPSILON {
                delayed_r += r;
                delayed += 1;
                delayed_volume += d;
                max_r = max_r.max(r);
            }
        }
        intervals += piece.len();
    }
    let current = host.current_scale(unit);
    DelayStats {
        total_delay: sum_r * host.total_scale(unit),
        max_delay: max_r * current,
        intervals,
        delayed_intervals: delayed,
        mean_delay_when_delayed: if delayed > 0 {
            delayed_r * current / delayed as f64
        } else {
            0.0
        },
        mean_demand: if intervals > 0 {
            volume / intervals as f64
        } else {
            0.0
        },
        delayed_demand_share: if volume > 0.0 {
            delayed_volume / volume
        } else {
            0.0
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(c: f64) -> Host {
        Host::new(c, 1.0).unwrap()
    }

    #[test]
    fn case1_constant_at_capacity_has_no_delay() {
        let s = delay_stats(&[&[1.0; 15]], host(1.0), DelayUnit::WallMinutes);
        assert_eq!(s.total_delay, 0.0);
        assert_eq!(s.delayed_intervals, 0);
    }

    #[test]
    fn case2_permanent_half_minute() {
        let mut d = vec![1.0; 15];
        d[0] = 1.5;
        let s = delay_stats(&[&d], host(1.0), DelayUnit::WallMinutes);
        assert_eq!(s.total_delay, 7.5);
        assert_eq!(s.max_delay, 0.5);
        assert_eq!(s.delayed_intervals, 15);
        assert_eq!(s.mean_delay_when_delayed, 0.5);
    }

    #[test]
    fn case3_less_total_but_higher_peak_than_case2() {
        let mut d = vec![1.0; 15];
        d[0] = 2.0;
        d[1] = 0.0;
        let s = delay_stats(&[&d], host(1.0), DelayUnit::WallMinutes);
        assert_eq!((s.total_delay, s.max_delay), (1.0, 1.0));
    }

    #[test]
    fn units_differ_by_the_capacity() {
        let d = vec![15.6; 100];
        let wall = total_delay(&d, host(12.0), DelayUnit::WallMinutes);
        let core = total_delay(&d, host(12.0), DelayUnit::CoreMinutes);
        assert!((core / wall - 12.0).abs() < 1e-9);
    }

    #[test]
    fn five_minute_samples_count_each_minute() {
        // One 5-minute interval 30 % over capacity, then exactly at capacity:
        // w = 0.3·5 = 1.5 min for every later minute.
        let d = [1.3, 1.0];
        let h = Host::new(1.0, 5.0).unwrap();
        let s = delay_stats(&[&d], h, DelayUnit::WallMinutes);
        assert!((s.max_delay - 1.5).abs() < 1e-12);
        assert!((s.total_delay - 2.0 * 1.5 * 5.0).abs() < 1e-12);
    }

    #[test]
    fn segments_reset_the_queue() {
        let s = delay_stats(
            &[&[2.0, 1.0], &[1.0, 1.0]],
            host(1.0),
            DelayUnit::WallMinutes,
        );
        assert_eq!(s.total_delay, 2.0);
    }
}
