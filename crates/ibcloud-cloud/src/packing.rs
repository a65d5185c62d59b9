//! Best-fit-decreasing consolidation by utilisation (Paper VI, Sec. V-A) and
//! by delay (Sec. V-B), and the evaluation of a packing.
//!
//! Both packers sort the VMs by mean demand over the packing window
//! (descending; ties by VM index) and place them one by one on hosts of
//! capacity θ·K cores:
//!
//! * **utilisation**: a host accepts the VM when the sum of the mean demands
//!   stays ≤ θ·K (equality allowed);
//! * **delay**: the same mean test, and the total delay of the host's summed
//!   demand over the packing window, at capacity θ·K, stays ≤ the limit.
//!
//! Among accepting hosts, [`Fit::Best`] takes the one with the largest mean
//! load (smallest residual; ties: the earliest opened) and [`Fit::First`] the
//! earliest opened. When none accepts, a new host is opened, and a VM that
//! alone breaks the test stays alone.

use crate::blocks::{
    add_peak, busy_exceeds, run, set_weights, slack_of, weight_order, Blocks, Outcome, Profile,
};
use crate::delay::{delay_stats, DelayStats, DelayUnit, Host};
use crate::demand::{Demand, Window};
use crate::error::ConsolidationError;

/// Which host takes a VM when several accept it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Fit {
    /// The fullest accepting host (largest summed mean demand); ties go to the
    /// earliest opened. The default ("best-fit decreasing").
    #[default]
    Best,
    /// The earliest opened accepting host ("first-fit decreasing").
    First,
}

impl Fit {
    /// `best` or `first`.
    ///
    /// ```
    /// use ibcloud_cloud::Fit;
    /// assert_eq!(Fit::from_name("first").unwrap(), Fit::First);
    /// ```
    pub fn from_name(name: &str) -> Result<Self, ConsolidationError> {
        match name {
            "best" => Ok(Self::Best),
            "first" => Ok(Self::First),
            _ => Err(ConsolidationError::UnknownName {
                what: "fit rule",
                name: name.to_owned(),
                expected: "best, first",
            }),
        }
    }
}

/// What decides whether a host accepts a VM.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Criterion {
    /// Summed mean demand ≤ θ·K.
    Utilisation,
    /// Summed mean demand ≤ θ·K and total delay at θ·K over the packing
    /// window ≤ `limit` (in the spec's unit).
    Delay {
        /// Accepted total delay per host over the whole packing window.
        limit: f64,
    },
}

/// One packing's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PackSpec {
    /// Cores per host, K.
    pub cores: f64,
    /// Fill threshold θ as a fraction (0.7 for 70 %): hosts are packed as if
    /// they had θ·K cores.
    pub threshold: f64,
    /// Utilisation or delay.
    pub criterion: Criterion,
    /// Best or first fit.
    pub fit: Fit,
    /// Unit of the delay limit.
    pub unit: DelayUnit,
}

impl PackSpec {
    /// Best fit, wall-clock minutes.
    pub fn new(cores: f64, threshold: f64, criterion: Criterion) -> Self {
        Self {
            cores,
            threshold,
            criterion,
            fit: Fit::Best,
            unit: DelayUnit::WallMinutes,
        }
    }

    fn check(&self) -> Result<(), ConsolidationError> {
        if !(self.cores.is_finite() && self.cores > 0.0) {
            return Err(ConsolidationError::BadParameter {
                name: "cores",
                value: self.cores,
                expected: "hosts need a positive number of cores",
            });
        }
        if !(self.threshold.is_finite() && self.threshold > 0.0 && self.threshold <= 1.0) {
            return Err(ConsolidationError::BadParameter {
                name: "threshold",
                value: self.threshold,
                expected: "the fill threshold is a fraction in (0, 1]",
            });
        }
        if let Criterion::Delay { limit } = self.criterion {
            if limit.is_nan() || limit < 0.0 {
                return Err(ConsolidationError::BadParameter {
                    name: "limit",
                    value: limit,
                    expected: "the accepted delay is a number of minutes ≥ 0",
                });
            }
        }
        Ok(())
    }
}

/// One host of a packing.
#[derive(Clone, Debug, PartialEq)]
pub struct Bin {
    /// VM indices in placement order.
    pub vms: Vec<usize>,
    /// Sum of the VMs' mean demands over the packing window, in cores.
    pub load: f64,
    /// Total delay over the packing window at capacity θ·K, in the spec's
    /// unit (NaN for utilisation packings run without packing delays).
    pub packing_delay: f64,
}

/// The hosts a packer opened, in opening order.
#[derive(Clone, Debug, PartialEq)]
pub struct Packing {
    /// The hosts.
    pub bins: Vec<Bin>,
}

impl Packing {
    /// The VM indices of every host.
    pub fn members(&self) -> Vec<Vec<usize>> {
        self.bins.iter().map(|b| b.vms.clone()).collect()
    }
}

struct OpenBin {
    vms: Vec<usize>,
    load: f64,
    /// Summed demand over the packing window (delay packing only).
    series: Vec<f64>,
    /// Maximum of `series` per block.
    block_max: Vec<f64>,
    peak: f64,
    /// Σ r of `series` at the packing capacity; +∞ when above the limit.
    sum_r: f64,
    /// Blocks where the host's own queue is non-empty.
    hot: Vec<u32>,
    /// Busy-period weights (see [`crate::blocks`]).
    weights: Vec<f64>,
    /// `hot` by decreasing weight.
    order: Vec<u32>,
}

impl OpenBin {
    /// Adds `vm` (its row) to the summed series and block maxima.
    fn add(&mut self, row: &[f64], blocks: &Blocks) {
        let mut peak = 0.0f64;
        for (i, b) in blocks.blocks.iter().enumerate() {
            let m = add_peak(
                &mut self.series[b.at..b.at + b.len],
                &row[b.row..b.row + b.len],
            );
            self.block_max[i] = m;
            peak = peak.max(m);
        }
        self.peak = peak;
    }
}

/// Packs every VM of `demand` by `spec`, looking at `window` only.
///
/// ```
/// use ibcloud_cloud::{pack, Criterion, Demand, PackSpec, Window};
/// // Two VMs that each fit, but burst in the same minute: the delay packer
/// // keeps them apart, the utilisation packer does not.
/// let d = Demand::new(2, 4, 1.0, vec![2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0]).unwrap();
/// let w = Window::all(&d);
/// let util = pack(&d, &w, &PackSpec::new(2.0, 1.0, Criterion::Utilisation)).unwrap();
/// let delay = pack(&d, &w, &PackSpec::new(2.0, 1.0, Criterion::Delay { limit: 0.5 })).unwrap();
/// assert_eq!((util.bins.len(), delay.bins.len()), (1, 2));
/// ```
pub fn pack(
    demand: &Demand,
    window: &Window,
    spec: &PackSpec,
) -> Result<Packing, ConsolidationError> {
    pack_profiled(demand, window, spec, &Profile::new(demand, window), true)
}

/// [`pack`] with the window's [`Profile`] computed already; without
/// `packing_delays`, utilisation packings leave [`Bin::packing_delay`] NaN
/// (it costs a pass over every VM's demand).
pub(crate) fn pack_profiled(
    demand: &Demand,
    window: &Window,
    spec: &PackSpec,
    profile: &Profile,
    packing_delays: bool,
) -> Result<Packing, ConsolidationError> {
    spec.check()?;
    let capacity = spec.cores * spec.threshold;
    let host = Host::new(capacity, demand.interval_minutes())?;
    let scale = host.total_scale(spec.unit);
    let limit = match spec.criterion {
        Criterion::Utilisation => None,
        Criterion::Delay { limit } => Some(limit / scale),
    };
    let blocks = &profile.blocks;
    let n_blocks = blocks.blocks.len();
    let mut order: Vec<usize> = (0..demand.n_vms()).collect();
    // Stable sort: equal means keep index order.
    order.sort_by(|&a, &b| profile.mean[b].total_cmp(&profile.mean[a]));

    let mut bins: Vec<OpenBin> = Vec::new();
    let mut candidates: Vec<usize> = Vec::new();
    let mut queue = vec![0.0; if limit.is_some() { blocks.len } else { 0 }];
    for vm in order {
        let (mean, peak) = (profile.mean[vm], profile.peak[vm]);
        let row = demand.row(vm);
        candidates.clear();
        candidates.extend((0..bins.len()).filter(|&b| bins[b].load + mean <= capacity));
        if spec.fit == Fit::Best {
            // Fullest first; the sort is stable, so ties stay in opening order.
            candidates.sort_by(|&a, &b| bins[b].load.total_cmp(&bins[a].load));
        }
        let mut chosen: Option<(usize, f64, Vec<u32>)> = None;
        for &b in &candidates {
            let Some(limit) = limit else {
                chosen = Some((b, f64::NAN, Vec::new()));
                break;
            };
            let bin = &bins[b];
            if bin.sum_r > limit {
                continue; // adding demand never shortens the queue
            }
            if bin.peak + peak <= capacity {
                chosen = Some((b, 0.0, Vec::new())); // never over capacity: no queue at all
                break;
            }
            if busy_exceeds(
                &bin.weights,
                &bin.order,
                row,
                blocks,
                slack_of(limit) - bin.sum_r,
            ) {
                continue;
            }
            if let Outcome::Within(sum_r, hot) = run(
                &bin.series,
                &bin.block_max,
                row,
                profile.vm_blocks(vm),
                blocks,
                capacity,
                limit,
                &mut queue,
            ) {
                chosen = Some((b, sum_r, hot));
                break;
            }
        }
        match chosen {
            Some((b, sum_r, hot)) => {
                let bin = &mut bins[b];
                bin.vms.push(vm);
                bin.load += mean;
                if limit.is_some() {
                    bin.add(row, blocks);
                    bin.sum_r = sum_r;
                    set_weights(&mut bin.weights, &bin.hot, &hot, &queue, blocks);
                    bin.order = weight_order(&bin.weights, &hot, blocks);
                    bin.hot = hot;
                }
            }
            None => {
                let mut bin = OpenBin {
                    vms: vec![vm],
                    load: mean,
                    series: Vec::new(),
                    block_max: Vec::new(),
                    peak: 0.0,
                    sum_r: f64::NAN,
                    hot: Vec::new(),
                    weights: Vec::new(),
                    order: Vec::new(),
                };
                if let Some(limit) = limit {
                    bin.series = vec![0.0; blocks.len];
                    bin.block_max = vec![0.0; n_blocks];
                    bin.weights = vec![0.0; blocks.len];
                    match run(
                        &bin.series,
                        &bin.block_max,
                        row,
                        profile.vm_blocks(vm),
                        blocks,
                        capacity,
                        limit,
                        &mut queue,
                    ) {
                        Outcome::Within(sum_r, hot) => {
                            bin.sum_r = sum_r;
                            set_weights(&mut bin.weights, &[], &hot, &queue, blocks);
                            bin.order = weight_order(&bin.weights, &hot, blocks);
                            bin.hot = hot;
                        }
                        Outcome::Over => bin.sum_r = f64::INFINITY,
                    }
                    bin.add(row, blocks);
                }
                bins.push(bin);
            }
        }
    }
    let bins = bins
        .into_iter()
        .map(|bin| {
            let packing_delay = if bin.sum_r.is_finite() {
                bin.sum_r * scale // the packer's own sum, bit for bit what delay_stats gives
            } else if limit.is_some() || packing_delays {
                let series = if bin.series.is_empty() {
                    summed(demand, &bin.vms, blocks)
                } else {
                    bin.series
                };
                delay_stats(&segment_pieces(&series, window), host, spec.unit).total_delay
            } else {
                f64::NAN
            };
            Bin {
                vms: bin.vms,
                load: bin.load,
                packing_delay,
            }
        })
        .collect();
    Ok(Packing { bins })
}

/// The summed demand of `vms` over the blocks' window, concatenated.
fn summed(demand: &Demand, vms: &[usize], blocks: &Blocks) -> Vec<f64> {
    let mut series = vec![0.0; blocks.len];
    for &vm in vms {
        let row = demand.row(vm);
        for b in &blocks.blocks {
            add_peak(&mut series[b.at..b.at + b.len], &row[b.row..b.row + b.len]);
        }
    }
    series
}

/// A concatenated window series cut back into its segments.
fn segment_pieces<'a>(series: &'a [f64], window: &Window) -> Vec<&'a [f64]> {
    let mut pieces = Vec::with_capacity(window.segments().len());
    let mut offset = 0;
    for segment in window.segments() {
        pieces.push(&series[offset..offset + segment.len()]);
        offset += segment.len();
    }
    pieces
}

/// The statistics of one host holding `vms`, over `window`, at `cores`.
///
/// ```
/// use ibcloud_cloud::{evaluate, DelayUnit, Demand, Window};
/// let d = Demand::new(2, 2, 1.0, vec![1.5, 0.0, 1.0, 0.5]).unwrap();
/// let s = evaluate(&d, &[0, 1], &Window::all(&d), 2.0, DelayUnit::WallMinutes).unwrap();
/// assert_eq!((s.total_delay, s.filling(2.0)), (0.25, 75.0));
/// ```
pub fn evaluate(
    demand: &Demand,
    vms: &[usize],
    window: &Window,
    cores: f64,
    unit: DelayUnit,
) -> Result<DelayStats, ConsolidationError> {
    let host = Host::new(cores, demand.interval_minutes())?;
    if let Some(&vm) = vms.iter().find(|&&vm| vm >= demand.n_vms()) {
        return Err(ConsolidationError::BadVm {
            vm,
            n_vms: demand.n_vms(),
        });
    }
    let series = summed(demand, vms, &Blocks::new(window));
    let pieces = segment_pieces(&series, window);
    Ok(delay_stats(&pieces, host, unit))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demand(rows: &[&[f64]]) -> Demand {
        let n = rows[0].len();
        Demand::new(rows.len(), n, 1.0, rows.concat()).unwrap()
    }

    #[test]
    fn best_fit_takes_the_fullest_first_fit_the_earliest() {
        // Means 5, 4, 3.5, 0.5 on 8-core hosts: 5 | 4 + 3.5; then 0.5 fits
        // both: best fit takes the fuller second host, first fit the first.
        let d = demand(&[&[5.0], &[4.0], &[3.5], &[0.5]]);
        let w = Window::all(&d);
        let best = pack(&d, &w, &PackSpec::new(8.0, 1.0, Criterion::Utilisation)).unwrap();
        assert_eq!(best.members(), vec![vec![0], vec![1, 2, 3]]);
        let mut spec = PackSpec::new(8.0, 1.0, Criterion::Utilisation);
        spec.fit = Fit::First;
        let first = pack(&d, &w, &spec).unwrap();
        assert_eq!(first.members(), vec![vec![0, 3], vec![1, 2]]);
    }

    #[test]
    fn oversized_vm_stays_alone() {
        let d = demand(&[&[10.0, 10.0], &[1.0, 1.0], &[1.0, 1.0]]);
        let p = pack(
            &d,
            &Window::all(&d),
            &PackSpec::new(8.0, 1.0, Criterion::Delay { limit: 0.5 }),
        )
        .unwrap();
        assert_eq!(p.members(), vec![vec![0], vec![1, 2]]);
        assert_eq!(p.bins[0].packing_delay, (2.0 + 4.0) / 8.0);
    }

    #[test]
    fn equality_is_accepted() {
        let d = demand(&[&[4.0], &[4.0]]);
        let p = pack(
            &d,
            &Window::all(&d),
            &PackSpec::new(8.0, 1.0, Criterion::Utilisation),
        )
        .unwrap();
        assert_eq!(p.bins.len(), 1);
    }

    #[test]
    fn ties_keep_index_order() {
        let d = demand(&[&[1.0], &[3.0], &[1.0], &[3.0]]);
        let p = pack(
            &d,
            &Window::all(&d),
            &PackSpec::new(4.0, 1.0, Criterion::Utilisation),
        )
        .unwrap();
        assert_eq!(p.members(), vec![vec![1, 0], vec![3, 2]]);
    }

    #[test]
    fn bad_parameters_are_refused() {
        let d = demand(&[&[1.0]]);
        let w = Window::all(&d);
        assert!(pack(&d, &w, &PackSpec::new(8.0, 0.0, Criterion::Utilisation)).is_err());
        assert!(pack(&d, &w, &PackSpec::new(8.0, 1.5, Criterion::Utilisation)).is_err());
        assert!(pack(&d, &w, &PackSpec::new(-1.0, 1.0, Criterion::Utilisation)).is_err());
        assert!(pack(
            &d,
            &w,
            &PackSpec::new(8.0, 1.0, Criterion::Delay { limit: f64::NAN })
        )
        .is_err());
        assert!(evaluate(&d, &[3], &w, 8.0, DelayUnit::WallMinutes).is_err());
    }
}
