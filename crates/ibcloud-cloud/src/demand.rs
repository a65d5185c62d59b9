//! The demand matrix (one row of CPU demand per VM) and windows over it.

use crate::error::ConsolidationError;
use std::ops::Range;

/// CPU demand of `n_vms` VMs over `n_samples` equal intervals of
/// `interval_minutes`, row-major, in **cores** (a 2-vCPU VM ranges 0–2).
#[derive(Debug, Clone, PartialEq)]
pub struct Demand {
    n_vms: usize,
    n_samples: usize,
    interval_minutes: f64,
    data: Vec<f64>,
}

impl Demand {
    /// Checks the shape and that every value is finite and ≥ 0.
    ///
    /// ```
    /// use ibcloud_cloud::Demand;
    /// assert!(Demand::new(1, 2, 1.0, vec![0.5, 1.0]).is_ok());
    /// assert!(Demand::new(1, 2, 1.0, vec![0.5]).is_err());
    /// assert!(Demand::new(1, 1, 1.0, vec![-0.1]).is_err());
    /// ```
    pub fn new(
        n_vms: usize,
        n_samples: usize,
        interval_minutes: f64,
        data: Vec<f64>,
    ) -> Result<Self, ConsolidationError> {
        if n_samples == 0 {
            return Err(ConsolidationError::BadParameter {
                name: "n_samples",
                value: 0.0,
                expected: "a demand series needs at least one sample",
            });
        }
        if data.len() != n_vms * n_samples {
            return Err(ConsolidationError::Shape {
                n_vms,
                n_samples,
                got: data.len(),
            });
        }
        if !(interval_minutes.is_finite() && interval_minutes > 0.0) {
            return Err(ConsolidationError::BadParameter {
                name: "interval_minutes",
                value: interval_minutes,
                expected: "the sampling interval must be a positive number of minutes",
            });
        }
        if let Some(i) = data.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(ConsolidationError::BadDemand {
                vm: i / n_samples,
                sample: i % n_samples,
                value: data[i],
            });
        }
        Ok(Self {
            n_vms,
            n_samples,
            interval_minutes,
            data,
        })
    }

    /// Number of VMs (rows).
    pub fn n_vms(&self) -> usize {
        self.n_vms
    }

    /// Number of samples per VM (columns).
    pub fn n_samples(&self) -> usize {
        self.n_samples
    }

    /// Sampling interval Δt in minutes.
    pub fn interval_minutes(&self) -> f64 {
        self.interval_minutes
    }

    /// The demand series of one VM.
    ///
    /// # Panics
    /// When `vm >= n_vms()` (a programming error).
    pub fn row(&self, vm: usize) -> &[f64] {
        &self.data[vm * self.n_samples..(vm + 1) * self.n_samples]
    }
}

/// The samples a packing or an evaluation looks at: sorted, disjoint,
/// non-empty ranges. The backlog starts empty at the start of every segment
/// (a training window that skips the test day has two segments).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    segments: Vec<Range<usize>>,
}

impl Window {
    /// A window of the given segments, checked against `demand`.
    ///
    /// ```
    /// use ibcloud_cloud::{Demand, Window};
    /// let d = Demand::new(1, 10, 1.0, vec![0.0; 10]).unwrap();
    /// assert_eq!(Window::new(&d, vec![0..3, 5..10]).unwrap().len(), 8);
    /// assert!(Window::new(&d, vec![5..10, 0..3]).is_err());
    /// ```
    pub fn new(demand: &Demand, segments: Vec<Range<usize>>) -> Result<Self, ConsolidationError> {
        let mut previous_end = 0;
        for (i, s) in segments.iter().enumerate() {
            if s.start >= s.end || s.end > demand.n_samples || (i > 0 && s.start < previous_end) {
                return Err(ConsolidationError::BadWindow {
                    start: s.start,
                    end: s.end,
                    n_samples: demand.n_samples,
                });
            }
            previous_end = s.end;
        }
        if segments.is_empty() {
            return Err(ConsolidationError::BadWindow {
                start: 0,
                end: 0,
                n_samples: demand.n_samples,
            });
        }
        Ok(Self { segments })
    }

    /// Every sample of `demand`, as one segment.
    pub fn all(demand: &Demand) -> Self {
        Self {
            segments: std::iter::once(0..demand.n_samples).collect(),
        }
    }

    /// The segments.
    pub fn segments(&self) -> &[Range<usize>] {
        &self.segments
    }

    /// Number of samples in the window.
    pub fn len(&self) -> usize {
        self.segments.iter().map(|s| s.len()).sum()
    }

    /// Whether the window holds no sample (never true for a checked window).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
