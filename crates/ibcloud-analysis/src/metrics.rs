//! One level at a time: lay the flows' paths on the links, read each flow's
//! congestion, clear the links. Loads are `u32` counts for unit flows and
//! `f64` weights for a weighted matrix (one code path, two instantiations).

use crate::paths::Paths;
use crate::patterns::Flow;
use crate::result::BrokenFlow;
use ibcloud_fabric::Lid;
use std::collections::BTreeMap;

/// Most broken flows kept as examples.
pub(crate) const MAX_EXAMPLES: usize = 20;

/// A link load: flow count or flow weight.
pub(crate) trait Load:
    Copy + Default + PartialOrd + std::ops::AddAssign + Send + Sync
{
    fn of_weight(w: f64) -> Self;
    fn to_f64(self) -> f64;
}

impl Load for u32 {
    #[inline]
    fn of_weight(_: f64) -> Self {
        1
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Load for f64 {
    #[inline]
    fn of_weight(w: f64) -> Self {
        w
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
}

/// Routes per congestion value: integers in a dense vector, anything else
/// (weighted flows) in a map keyed by the value's bits (ordered for positive floats).
#[derive(Clone, Debug, Default)]
pub(crate) struct Histogram {
    ints: Vec<u64>,
    other: BTreeMap<u64, u64>,
}

impl Histogram {
    #[inline]
    pub(crate) fn add(&mut self, c: f64, k: u64) {
        let i = c as usize;
        if i as f64 == c && i < 1 << 22 {
            if self.ints.len() <= i {
                self.ints.resize(i + 1, 0);
            }
            self.ints[i] += k;
        } else {
            *self.other.entry(c.to_bits()).or_default() += k;
        }
    }

    pub(crate) fn merge(&mut self, o: &Histogram) {
        for (i, &k) in o.ints.iter().enumerate() {
            if k > 0 {
                self.add(i as f64, k);
            }
        }
        for (&b, &k) in &o.other {
            *self.other.entry(b).or_default() += k;
        }
    }

    pub(crate) fn into_sorted(self) -> Vec<(f64, u64)> {
        let mut v: Vec<(f64, u64)> = self
            .ints
            .iter()
            .enumerate()
            .filter(|(_, &k)| k > 0)
            .map(|(i, &k)| (i as f64, k))
            .chain(self.other.iter().map(|(&b, &k)| (f64::from_bits(b), k)))
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    }
}

/// A flow that arrived, for the delay chain: ranks and bottleneck load.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Done {
    pub(crate) src: u32,
    pub(crate) dst: u32,
    pub(crate) load: f64,
}

/// Per-level results a worker hands back.
#[derive(Clone, Debug, Default)]
pub(crate) struct LevelSums {
    pub(crate) flows: u64,
    pub(crate) broken: u64,
    /// Σ over flows of 1/congestion, in flow order.
    pub(crate) inv_cong: f64,
    /// Highest flow congestion.
    pub(crate) max_cong: f64,
    /// Highest bottleneck load (ORCS's per-level maximum).
    pub(crate) max_load: f64,
}

struct Span {
    start: u32,
    end: u32,
    flow: u32,
}

/// Reusable per-thread state; `links_*` accumulate over the levels it runs.
pub(crate) struct Worker<L: Load> {
    load: Vec<L>,
    pub(crate) link_total: Vec<f64>,
    pub(crate) link_max: Vec<f64>,
    pub(crate) hist: Histogram,
    cables: Vec<u32>,
    spans: Vec<Span>,
}

impl<L: Load> Worker<L> {
    pub(crate) fn new(links: usize) -> Self {
        Self {
            load: vec![L::default(); links],
            link_total: vec![0.0; links],
            link_max: vec![0.0; links],
            hist: Histogram::default(),
            cables: Vec::new(),
            spans: Vec::new(),
        }
    }

    /// Runs one level of `flows` (ranks mapped to endpoints by `order`),
    /// appending arrived flows to `done` and broken ones to `broken`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn level(
        &mut self,
        paths: &Paths<'_>,
        order: &[u32],
        flows: &[Flow],
        run: u64,
        level: u32,
        done: &mut Vec<Done>,
        broken: &mut Vec<BrokenFlow>,
    ) -> LevelSums {
        let mut sums = LevelSums::default();
        self.cables.clear();
        self.spans.clear();
        for (i, f) in flows.iter().enumerate() {
            let (s, d) = (order[f.src as usize], order[f.dst as usize]);
            let start = self.cables.len() as u32;
            match paths.append(s, d, &mut self.cables) {
                Ok(()) => self.spans.push(Span {
                    start,
                    end: self.cables.len() as u32,
                    flow: i as u32,
                }),
                Err(failure) => {
                    sums.broken += 1;
                    if broken.len() < MAX_EXAMPLES {
                        broken.push(BrokenFlow {
                            run,
                            level,
                            src: Lid(paths.lid(s)),
                            dst: Lid(paths.lid(d)),
                            failure,
                        });
                    }
                }
            }
        }
        for sp in &self.spans {
            let w = L::of_weight(flows[sp.flow as usize].weight);
            for &c in &self.cables[sp.start as usize..sp.end as usize] {
                self.load[c as usize] += w;
            }
        }
        for sp in &self.spans {
            let f = &flows[sp.flow as usize];
            let mut top = L::default();
            for &c in &self.cables[sp.start as usize..sp.end as usize] {
                let l = self.load[c as usize];
                if l > top {
                    top = l;
                }
            }
            let load = top.to_f64();
            let cong = load / f.weight;
            self.hist.add(cong, 1);
            sums.flows += 1;
            sums.inv_cong += 1.0 / cong;
            sums.max_cong = sums.max_cong.max(cong);
            sums.max_load = sums.max_load.max(load);
            done.push(Done {
                src: f.src,
                dst: f.dst,
                load,
            });
        }
        for &c in &self.cables {
            let l = std::mem::take(&mut self.load[c as usize]);
            if l > L::default() {
                let l = l.to_f64();
                self.link_total[c as usize] += l;
                if l > self.link_max[c as usize] {
                    self.link_max[c as usize] = l;
                }
            }
        }
        sums
    }
}

/// The dep_max_delay chain: a flow starts when the flows of the previous
/// level that ended at its source are done, and takes its bottleneck load.
/// This is the longest path of ORCS's dependency graph of (level, rank)
/// vertices taken over every flow; ORCS's code links only the first flow per
/// rank and level and measures with BFS distances, so it can differ when a
/// rank sends or receives several flows in one level (docs/analysis.md).
#[derive(Clone, Debug)]
pub(crate) struct DelayChain {
    ready: Vec<f64>,
    next: Vec<f64>,
    ready_set: Vec<u32>,
    next_set: Vec<u32>,
    pub(crate) delay: f64,
}

impl DelayChain {
    pub(crate) fn new(ranks: usize) -> Self {
        Self {
            ready: vec![0.0; ranks],
            next: vec![0.0; ranks],
            ready_set: Vec::new(),
            next_set: Vec::new(),
            delay: 0.0,
        }
    }

    /// Back to no levels, keeping the allocation.
    pub(crate) fn reset(&mut self) {
        for r in self.ready_set.drain(..) {
            self.ready[r as usize] = 0.0;
        }
        for r in self.next_set.drain(..) {
            self.next[r as usize] = 0.0;
        }
        self.delay = 0.0;
    }

    /// Adds one level's arrived flows (loads are positive).
    pub(crate) fn level(&mut self, done: &[Done]) {
        for d in done {
            let finish = self.ready[d.src as usize] + d.load;
            let slot = &mut self.next[d.dst as usize];
            if *slot == 0.0 {
                self.next_set.push(d.dst);
            }
            if finish > *slot {
                *slot = finish;
            }
            if finish > self.delay {
                self.delay = finish;
            }
        }
        // Only the previous level's destinations carry a start time forward.
        for r in self.ready_set.drain(..) {
            self.ready[r as usize] = 0.0;
        }
        std::mem::swap(&mut self.ready, &mut self.next);
        std::mem::swap(&mut self.ready_set, &mut self.next_set);
    }
}
