//! IOShares' interference estimate, `GETIOINTF` (F §5.6.3): "It looks at
//! the latencies reported by the VM and computes the average and standard
//! deviation of the values. The percentage increase in either of these is
//! then returned." Against what is not said (F §5.6 ambiguity 5): the
//! running average of all earlier reports (default; §5.7.4 "maintains the
//! running average latency"), a fixed base, or the previous window.
//!
//! The current window is the latest `window` reports; an increase is a
//! fraction (0.5 = 50 %); nothing is judged until the window (and, for
//! `running`/`previous`, the baseline) holds `window` reports.

use serde::Serialize;
use std::collections::VecDeque;

/// What the current window is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Baseline {
    /// Mean and standard deviation of every report before this interval's.
    Running,
    /// Fixed: given (mean µs, optional std µs), or learnt from the first
    /// full window and then frozen (`None`).
    Base(Option<(f64, Option<f64>)>),
    /// The `window` reports before the current window.
    Previous,
}

/// Which statistic's increase counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Statistic {
    /// The larger of the two increases.
    Either,
    /// The mean's (default; docs/resex.md says why).
    Mean,
    /// The standard deviation's.
    Std,
}

/// Mean and standard deviation of a stream (Welford).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Moments {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    /// Adds one value.
    pub fn push(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }
    /// Of a window (two passes, no division per value: this runs for
    /// every reporting VM every interval).
    pub fn of(xs: &VecDeque<f64>) -> Self {
        let n = xs.len();
        if n == 0 {
            return Self::default();
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        let m2 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
        Self {
            n: n as u64,
            mean,
            m2,
        }
    }
    /// Values seen.
    pub fn count(&self) -> u64 {
        self.n
    }
    /// Mean.
    pub fn mean(&self) -> f64 {
        self.mean
    }
    /// Sample standard deviation (0 below two values).
    pub fn std(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            (self.m2 / (self.n - 1) as f64).sqrt()
        }
    }
}

/// The relative increase of `now` over `base`, if `base` is positive.
fn increase(now: f64, base: f64) -> Option<f64> {
    (base > 0.0).then(|| (now - base) / base)
}

/// One reporting VM's latency history.
#[derive(Clone, Debug, Serialize)]
pub struct LatencyTracker {
    window: usize,
    baseline: Baseline,
    statistic: Statistic,
    recent: VecDeque<f64>,
    previous: VecDeque<f64>,
    running: Moments,
}

impl LatencyTracker {
    /// A tracker judging the latest `window` (≥ 2) reports.
    pub fn new(window: usize, baseline: Baseline, statistic: Statistic) -> Self {
        Self {
            window: window.max(2),
            baseline,
            statistic,
            recent: VecDeque::new(),
            previous: VecDeque::new(),
            running: Moments::default(),
        }
    }

    /// Takes one interval's reports (µs; non-finite or negative ones are
    /// dropped) and returns the interference fraction if it can be judged:
    /// only when new reports came, the window is full and the baseline is
    /// known.
    pub fn update(&mut self, reports: &[f64]) -> Option<f64> {
        let before = self.running;
        let mut new = 0;
        for &x in reports.iter().filter(|x| x.is_finite() && **x >= 0.0) {
            new += 1;
            self.running.push(x);
            self.recent.push_back(x);
            if self.recent.len() > self.window {
                let old = self.recent.pop_front().unwrap_or_default();
                self.previous.push_back(old);
                if self.previous.len() > self.window {
                    self.previous.pop_front();
                }
            }
        }
        if new == 0 || self.recent.len() < self.window {
            return None;
        }
        let cur = Moments::of(&self.recent);
        let (bm, bs) = match &mut self.baseline {
            Baseline::Running if before.count() >= self.window as u64 => {
                (before.mean(), Some(before.std()))
            }
            Baseline::Previous if self.previous.len() >= self.window => {
                let p = Moments::of(&self.previous);
                (p.mean(), Some(p.std()))
            }
            Baseline::Base(Some((m, s))) => (*m, *s),
            Baseline::Base(b @ None) => {
                // Learn the base from the first full window, judge later ones.
                *b = Some((cur.mean(), Some(cur.std())));
                return None;
            }
            _ => return None,
        };
        let dm = increase(cur.mean(), bm);
        let ds = bs.and_then(|s| increase(cur.std(), s));
        match self.statistic {
            Statistic::Mean => dm,
            Statistic::Std => ds,
            Statistic::Either => match (dm, ds) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_base_mean_increase() {
        let mut t = LatencyTracker::new(4, Baseline::Base(Some((200.0, None))), Statistic::Either);
        assert_eq!(t.update(&[300.0, 300.0, 300.0]), None); // window not full
        assert_eq!(t.update(&[300.0]), Some(0.5));
        assert_eq!(t.update(&[]), None); // nothing new, nothing judged
    }

    #[test]
    fn running_and_previous_baselines() {
        let mut t = LatencyTracker::new(2, Baseline::Running, Statistic::Mean);
        assert_eq!(t.update(&[100.0, 100.0]), None); // no baseline yet
        assert_eq!(t.update(&[200.0]), Some(0.5)); // (150 − 100) / 100
        let mut t = LatencyTracker::new(2, Baseline::Previous, Statistic::Mean);
        assert_eq!(t.update(&[100.0, 100.0, 300.0]), None); // previous = [100]
        assert_eq!(t.update(&[300.0]), Some(2.0)); // 300 vs [100, 100]
        let mut t = LatencyTracker::new(2, Baseline::Base(None), Statistic::Either);
        assert_eq!(t.update(&[100.0, 110.0]), None); // learnt
                                                     // Mean 115 vs 105 (+9.5 %); std 15·√2 vs 5·√2 (+200 %): either → 2.
        let s = t.update(&[100.0, 130.0]).unwrap();
        assert!((s - 2.0).abs() < 1e-12, "{s}");
    }
}
