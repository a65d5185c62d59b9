//! The delay packer's inner loop: the backlog recursion over a host's demand
//! plus one candidate VM, cut short as soon as the answer is known.
//!
//! A window is cut into blocks of [`BLOCK`] samples (never across a segment
//! boundary). Per block, the VM profile and each open host keep the maximum
//! demand, so a block where the queue is empty and `host max + VM max ≤ C`
//! cannot start a queue and is skipped in O(1).
//!
//! A lower bound rejects most VMs that do not fit before the full pass: while
//! the host alone is busy (its queue r(t) > 0 since s), added demand y cannot
//! be served, so the combined queue is at least r(t) + Σ_{k=s..t} y(k).
//! Summed over the busy periods, the total is at least Σr + Σ_k y(k)·(e − k),
//! e the end of k's busy period: a dot product with weights kept per host
//! (non-zero only in its *hot* blocks, where its queue was non-empty), taken
//! heaviest block first and stopped as soon as it exceeds the budget. The
//! bound rejects only when it exceeds the limit by a relative margin of
//! 1e-9, far above rounding. Accepted VMs always go through the full pass, so
//! results are exactly those of the plain recursion
//! ([`crate::delay::delay_stats`]): the same additions in the same order, only
//! provably idle blocks skipped.

use crate::delay::step;
use crate::demand::{Demand, Window};

/// Samples per block.
pub(crate) const BLOCK: usize = 32;

/// One block of a window.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Block {
    /// Start in the concatenated window.
    pub(crate) at: usize,
    /// Start in a VM's row.
    pub(crate) row: usize,
    /// Samples in the block.
    pub(crate) len: usize,
    /// First block of a segment: the queue starts empty.
    pub(crate) first: bool,
}

/// A window cut into blocks.
#[derive(Debug, Clone)]
pub(crate) struct Blocks {
    pub(crate) blocks: Vec<Block>,
    pub(crate) len: usize,
}

impl Blocks {
    pub(crate) fn new(window: &Window) -> Self {
        let mut blocks = Vec::new();
        let mut at = 0;
        for segment in window.segments() {
            let mut row = segment.start;
            let mut first = true;
            while row < segment.end {
                let len = BLOCK.min(segment.end - row);
                blocks.push(Block {
                    at,
                    row,
                    len,
                    first,
                });
                first = false;
                at += len;
                row += len;
            }
        }
        Self { blocks, len: at }
    }
}

/// Lanes of the vectorised sums and maxima (a fixed order: deterministic).
const LANES: usize = 8;

/// Sum and maximum (at least 0) of `x`.
pub(crate) fn sum_peak(x: &[f64]) -> (f64, f64) {
    let mut sums = [0.0f64; LANES];
    let mut peaks = [0.0f64; LANES];
    let mut chunks = x.chunks_exact(LANES);
    for chunk in &mut chunks {
        for i in 0..LANES {
            sums[i] += chunk[i];
            if chunk[i] > peaks[i] {
                peaks[i] = chunk[i];
            }
        }
    }
    let mut sum = sums.iter().sum::<f64>();
    let mut peak = peaks.iter().fold(0.0f64, |m, &v| if v > m { v } else { m });
    for &v in chunks.remainder() {
        sum += v;
        if v > peak {
            peak = v;
        }
    }
    (sum, peak)
}

/// `dst += src`, returning the maximum (at least 0) of the new `dst`.
pub(crate) fn add_peak(dst: &mut [f64], src: &[f64]) -> f64 {
    let mut peaks = [0.0f64; LANES];
    let mut d = dst.chunks_exact_mut(LANES);
    let mut s = src.chunks_exact(LANES);
    for (dc, sc) in (&mut d).zip(&mut s) {
        for i in 0..LANES {
            let v = dc[i] + sc[i];
            dc[i] = v;
            peaks[i] = if v > peaks[i] { v } else { peaks[i] };
        }
    }
    let mut peak = peaks.iter().fold(0.0f64, |m, &v| if v > m { v } else { m });
    for (dv, sv) in d.into_remainder().iter_mut().zip(s.remainder()) {
        *dv += sv;
        if *dv > peak {
            peak = *dv;
        }
    }
    peak
}

/// Mean, peak and per-block maxima of every VM over a window.
#[derive(Debug, Clone)]
pub(crate) struct Profile {
    pub(crate) blocks: Blocks,
    pub(crate) mean: Vec<f64>,
    pub(crate) peak: Vec<f64>,
    /// `n_vms × blocks`, row-major.
    pub(crate) block_max: Vec<f64>,
}

impl Profile {
    pub(crate) fn new(demand: &Demand, window: &Window) -> Self {
        let blocks = Blocks::new(window);
        let nb = blocks.blocks.len();
        let n = blocks.len as f64;
        let mut mean = Vec::with_capacity(demand.n_vms());
        let mut peak = Vec::with_capacity(demand.n_vms());
        let mut block_max = Vec::with_capacity(demand.n_vms() * nb);
        for vm in 0..demand.n_vms() {
            let row = demand.row(vm);
            let (mut sum, mut top) = (0.0, 0.0f64);
            for b in &blocks.blocks {
                let (s, p) = sum_peak(&row[b.row..b.row + b.len]);
                sum += s;
                top = top.max(p);
                block_max.push(p);
            }
            mean.push(sum / n);
            peak.push(top);
        }
        Self {
            blocks,
            mean,
            peak,
            block_max,
        }
    }

    pub(crate) fn vm_blocks(&self, vm: usize) -> &[f64] {
        let nb = self.blocks.blocks.len();
        &self.block_max[vm * nb..(vm + 1) * nb]
    }
}

/// What the recursion over `host + vm` found.
pub(crate) enum Outcome {
    /// Σ r stayed within the limit; the hot blocks of the combined demand
    /// (their queue values are in the `queue` scratch).
    Within(f64, Vec<u32>),
    /// Σ r exceeded the limit.
    Over,
}

/// The full recursion over `series + row` (the host with the VM added),
/// skipping blocks that provably stay idle, stopping once Σ r > `limit`;
/// the queue of every block it runs goes to `queue`.
#[allow(clippy::too_many_arguments)] // the hot loop's inputs, kept as plain slices
pub(crate) fn run(
    series: &[f64],
    series_max: &[f64],
    row: &[f64],
    row_max: &[f64],
    blocks: &Blocks,
    capacity: f64,
    limit: f64,
    queue: &mut [f64],
) -> Outcome {
    let (mut acc, mut r) = (0.0, 0.0);
    let mut hot = Vec::new();
    for (i, b) in blocks.blocks.iter().enumerate() {
        if b.first {
            r = 0.0;
        }
        if r == 0.0 && series_max[i] + row_max[i] <= capacity {
            continue;
        }
        let before = acc;
        let out = &mut queue[b.at..b.at + b.len];
        for ((x, y), q) in series[b.at..b.at + b.len]
            .iter()
            .zip(&row[b.row..b.row + b.len])
            .zip(out)
        {
            r = step(r, (x + y) - capacity);
            acc += r;
            *q = r;
        }
        if acc > limit {
            return Outcome::Over;
        }
        if acc > before {
            hot.push(i as u32);
        }
    }
    Outcome::Within(acc, hot)
}

/// Relative margin by which a lower bound must exceed the limit to reject.
const MARGIN: f64 = 1e-9;

/// The value a lower bound must exceed to reject against `limit`.
#[inline]
pub(crate) fn slack_of(limit: f64) -> f64 {
    limit + MARGIN * (limit.abs() + 1.0)
}

/// Busy-period weights of a host from its queue values over its hot blocks:
/// e − k for every k with r(k) > 0 in a busy period ending at e, else 0.
/// Clears the weights of `old_hot` first.
pub(crate) fn set_weights(
    weights: &mut [f64],
    old_hot: &[u32],
    hot: &[u32],
    queue: &[f64],
    blocks: &Blocks,
) {
    for &h in old_hot {
        let b = blocks.blocks[h as usize];
        weights[b.at..b.at + b.len]
            .iter_mut()
            .for_each(|w| *w = 0.0);
    }
    // Walk the hot blocks backwards; a busy period never crosses a block
    // that is not hot, nor the start of a segment.
    let mut remaining = 0.0;
    let mut next: Option<u32> = None;
    for &h in hot.iter().rev() {
        let b = blocks.blocks[h as usize];
        let continues = next.is_some_and(|n| n == h + 1 && !blocks.blocks[n as usize].first);
        if !continues {
            remaining = 0.0;
        }
        for (w, &r) in weights[b.at..b.at + b.len]
            .iter_mut()
            .zip(&queue[b.at..b.at + b.len])
            .rev()
        {
            if r > 0.0 {
                remaining += 1.0;
                *w = remaining;
            } else {
                remaining = 0.0;
                *w = 0.0;
            }
        }
        next = Some(h);
    }
}

/// Whether Σ_k w(k)·y(k) over the hot blocks exceeds `slack`, visiting the
/// blocks in `order` (heaviest weights first) and stopping as soon as it does.
pub(crate) fn busy_exceeds(
    weights: &[f64],
    order: &[u32],
    row: &[f64],
    blocks: &Blocks,
    slack: f64,
) -> bool {
    let mut total = 0.0;
    for &h in order {
        let b = blocks.blocks[h as usize];
        let w = &weights[b.at..b.at + b.len];
        let y = &row[b.row..b.row + b.len];
        let mut lanes = [0.0f64; LANES];
        let mut wc = w.chunks_exact(LANES);
        let mut yc = y.chunks_exact(LANES);
        for (a, c) in (&mut wc).zip(&mut yc) {
            for i in 0..LANES {
                lanes[i] += a[i] * c[i];
            }
        }
        for (a, c) in wc.remainder().iter().zip(yc.remainder()) {
            total += a * c;
        }
        total += lanes.iter().sum::<f64>();
        if total > slack {
            return true;
        }
    }
    false
}

/// The hot blocks ordered by their summed weight, heaviest first (ties by
/// position), for [`busy_exceeds`].
pub(crate) fn weight_order(weights: &[f64], hot: &[u32], blocks: &Blocks) -> Vec<u32> {
    let mut mass: Vec<(f64, u32)> = hot
        .iter()
        .map(|&h| {
            let b = blocks.blocks[h as usize];
            (weights[b.at..b.at + b.len].iter().sum::<f64>(), h)
        })
        .collect();
    mass.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    mass.into_iter().map(|(_, h)| h).collect()
}
