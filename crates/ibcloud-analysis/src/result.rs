//! What an analysis reports: per-run metrics, the congestion histogram over
//! all routes, per-link loads and the broken flows.

use ibcloud_fabric::{Lid, PortRef};
use ibcloud_routing::verify::Failure;
use serde::Serialize;

/// The metrics of one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunStats {
    /// Run number (0-based; the run's random stream).
    pub run: u64,
    /// Levels of the pattern in this run.
    pub levels: u32,
    /// Flows that arrived (the metrics are over these).
    pub flows: u64,
    /// Flows whose path breaks (unset entry, loop, …); not in the metrics.
    pub broken: u64,
    /// ORCS's hist_acc_band value: mean over flows of 1/congestion, the
    /// fraction of peak bandwidth (NaN when no flow arrived).
    pub acc_band: f64,
    /// Highest flow congestion in any level.
    pub max_cong: f64,
    /// ORCS's sum_max_cong: per level the highest link load, summed.
    pub sum_max_cong: f64,
    /// dep_max_delay: the longest chain of flows through the levels, each
    /// flow costing the load of its most loaded link.
    pub dep_max_delay: f64,
}

/// Load of one directed link over an analysis.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkLoad {
    /// The port that sends on the link.
    pub port: PortRef,
    /// The port at the other end.
    pub remote: PortRef,
    /// Flow weight crossing it, summed over all levels of all runs.
    pub total: f64,
    /// Highest load in any one level.
    pub max: f64,
}

/// A flow whose path does not arrive.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BrokenFlow {
    /// Run.
    pub run: u64,
    /// Level.
    pub level: u32,
    /// Source LID.
    pub src: Lid,
    /// Destination LID.
    pub dst: Lid,
    /// Why.
    pub failure: Failure,
}

/// Summary statistics of one metric over runs (percentiles interpolate
/// linearly between order statistics, as numpy's default does).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stats {
    /// Values (NaNs left out).
    pub count: usize,
    /// Mean.
    pub mean: f64,
    /// Population standard deviation.
    pub std: f64,
    /// Smallest.
    pub min: f64,
    /// 1st percentile.
    pub p1: f64,
    /// 5th percentile.
    pub p5: f64,
    /// 25th percentile.
    pub p25: f64,
    /// Median.
    pub p50: f64,
    /// 75th percentile.
    pub p75: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

impl Stats {
    /// Statistics of `values` (NaNs ignored; all NaN when none are left).
    pub fn of(values: impl IntoIterator<Item = f64>) -> Self {
        let mut v: Vec<f64> = values.into_iter().filter(|x| !x.is_nan()).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let q = |p: f64| -> f64 {
            if n == 0 {
                return f64::NAN;
            }
            let h = (n - 1) as f64 * p;
            let lo = h.floor() as usize;
            let hi = (lo + 1).min(n - 1);
            v[lo] + (h - lo as f64) * (v[hi] - v[lo])
        };
        let mean = if n == 0 {
            f64::NAN
        } else {
            v.iter().sum::<f64>() / n as f64
        };
        let std = if n == 0 {
            f64::NAN
        } else {
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt()
        };
        Self {
            count: n,
            mean,
            std,
            min: q(0.0),
            p1: q(0.01),
            p5: q(0.05),
            p25: q(0.25),
            p50: q(0.5),
            p75: q(0.75),
            p95: q(0.95),
            p99: q(0.99),
            max: q(1.0),
        }
    }
}

/// The result of [`analyze`](crate::analyze).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Analysis {
    /// Pattern name.
    pub pattern: String,
    /// Endpoints the pattern ran over.
    pub endpoints: usize,
    /// Seed of the run streams.
    pub seed: u64,
    /// Per-run metrics, by run.
    pub runs: Vec<RunStats>,
    /// ORCS's hist_max_cong over all routes of all levels and runs:
    /// (congestion, routes), ascending. Unshared routes count 1.
    pub hist_max_cong: Vec<(f64, u64)>,
    /// Every directed link some flow crossed, in port order.
    pub links: Vec<LinkLoad>,
    /// The first broken flows (by run, level, flow order), at most 20.
    pub broken: Vec<BrokenFlow>,
    /// Broken flows in all runs.
    pub broken_flows: u64,
    /// Whether paths came from a precomputed table (else walked per flow).
    pub precomputed_paths: bool,
}

impl Analysis {
    /// Effective bandwidth (acc_band) over runs: with the bisect pattern, the
    /// effective bisection bandwidth as a fraction of peak.
    pub fn ebb(&self) -> Stats {
        Stats::of(self.runs.iter().map(|r| r.acc_band))
    }

    /// Statistics of any per-run metric.
    pub fn stats(&self, metric: impl Fn(&RunStats) -> f64) -> Stats {
        Stats::of(self.runs.iter().map(metric))
    }

    /// ORCS's hist_acc_band: runs per bin of `width` over [0, 1] (the last
    /// bin includes 1.0; ORCS uses 0.05).
    pub fn hist_acc_band(&self, width: f64) -> Vec<u64> {
        let bins = (1.0 / width).round().max(1.0) as usize;
        let mut h = vec![0u64; bins];
        for r in &self.runs {
            if r.acc_band.is_finite() {
                let b = ((r.acc_band / width).floor() as usize).min(bins - 1);
                h[b] += 1;
            }
        }
        h
    }

    /// ORCS's "BW" line of hist_max_cong: mean of 1/congestion over all
    /// routes of all runs.
    pub fn hist_max_cong_bandwidth(&self) -> f64 {
        let (routes, inv) = self
            .hist_max_cong
            .iter()
            .fold((0u64, 0.0f64), |(n, s), &(c, k)| (n + k, s + k as f64 / c));
        if routes == 0 {
            f64::NAN
        } else {
            inv / routes as f64
        }
    }

    /// Flows that arrived, over all runs.
    pub fn flows(&self) -> u64 {
        self.runs.iter().map(|r| r.flows).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_match_numpy_linear() {
        let s = Stats::of([4.0, 1.0, 3.0, 2.0, f64::NAN]);
        assert_eq!(s.count, 4);
        assert_eq!(s.mean, 2.5);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 4.0);
        assert_eq!(s.p50, 2.5);
        assert!((s.p25 - 1.75).abs() < 1e-12);
        assert!((s.p99 - 3.97).abs() < 1e-12);
        assert!(Stats::of([]).mean.is_nan());
    }
}
