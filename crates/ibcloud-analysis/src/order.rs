//! The order of endpoints in a run: ranks 0..n of a pattern are positions in
//! it. As in ORCS, every run shuffles the endpoints, except a fixed prefix
//! (a node-order file such as OpenSM's opensm-ftree-ca-order.dump) that keeps
//! its order in front.

use crate::error::AnalysisError;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The random stream of run `run` (public for cross-checks: a run draws its
/// rank order from it first, then the pattern's own choices).
pub fn run_stream(seed: u64, run: u64) -> ChaCha8Rng {
    run_rng(seed, run)
}

/// The random stream of one run: the seed picks the key, the run the stream,
/// so runs are independent of each other and of how they are spread over threads.
pub(crate) fn run_rng(seed: u64, run: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(run);
    rng
}

/// The stream for choices made once per analysis (e.g. a random subset),
/// apart from every run's stream.
pub(crate) fn setup_rng(seed: u64) -> ChaCha8Rng {
    run_rng(seed, u64::MAX)
}

/// How ranks map to endpoints in each run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankOrder {
    fixed: Vec<u32>,
    rest: Vec<u32>,
    shuffle: bool,
}

impl RankOrder {
    /// `n` endpoints; `fixed` (endpoint positions) come first in that order,
    /// the others follow, shuffled per run when `shuffle` is set.
    pub fn new(n: usize, fixed: &[usize], shuffle: bool) -> Result<Self, AnalysisError> {
        let mut taken = vec![false; n];
        for (i, &f) in fixed.iter().enumerate() {
            if f >= n {
                return Err(AnalysisError::BadOptions(format!(
                    "order item {i}: endpoint {f} out of range 0..{n}"
                )));
            }
            if std::mem::replace(&mut taken[f], true) {
                return Err(AnalysisError::BadOptions(format!(
                    "order item {i}: endpoint listed twice"
                )));
            }
        }
        let rest = (0..n as u32).filter(|&i| !taken[i as usize]).collect();
        Ok(Self {
            fixed: fixed.iter().map(|&f| f as u32).collect(),
            rest,
            shuffle,
        })
    }

    /// Plain order: endpoint i is rank i in every run.
    pub fn identity(n: usize) -> Self {
        Self {
            fixed: Vec::new(),
            rest: (0..n as u32).collect(),
            shuffle: false,
        }
    }

    /// Number of ranks.
    pub fn len(&self) -> usize {
        self.fixed.len() + self.rest.len()
    }

    /// True when there are no ranks.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rank → endpoint position for one run, drawing from `rng` when shuffling.
    pub fn draw_with(&self, rng: &mut ChaCha8Rng) -> Vec<u32> {
        self.draw(rng)
    }

    pub(crate) fn draw(&self, rng: &mut ChaCha8Rng) -> Vec<u32> {
        let mut order = Vec::with_capacity(self.len());
        order.extend_from_slice(&self.fixed);
        let start = order.len();
        order.extend_from_slice(&self.rest);
        if self.shuffle {
            order[start..].shuffle(rng);
        }
        order
    }

    /// Rank → endpoint position in run `run` of an analysis seeded with `seed`
    /// (what [`analyze`](crate::analyze) uses; exposed for cross-checks).
    pub fn for_run(&self, seed: u64, run: u64) -> Vec<u32> {
        self.draw(&mut run_rng(seed, run))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_prefix_then_shuffled_rest() {
        let o = RankOrder::new(10, &[7, 3], true).unwrap();
        let a = o.for_run(5, 0);
        assert_eq!(&a[..2], &[7, 3]);
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..10).collect::<Vec<u32>>());
        assert_eq!(a, o.for_run(5, 0));
        assert_ne!(o.for_run(5, 0), o.for_run(5, 1));
        assert_eq!(RankOrder::identity(4).for_run(1, 2), vec![0, 1, 2, 3]);
        assert!(RankOrder::new(3, &[3], true).is_err());
        assert!(RankOrder::new(3, &[1, 1], true).is_err());
    }
}
