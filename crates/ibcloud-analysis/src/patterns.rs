//! Communication patterns in levels, as ORCS generates them (pattern_generator.cpp
//! of the public ORCS sources), plus shift (all-to-all in rounds) and a user
//! traffic matrix. A pattern speaks of ranks `0..n`; each run maps ranks to
//! endpoints through its own [`RankOrder`](crate::RankOrder).
//!
//! Deliberate differences from ORCS (docs/analysis.md): bisect pairs rank 2i
//! with 2i+1 and sends 2i → 2i+1 (ORCS's `pair(c, c++)` leaves the direction
//! to the compiler); patterns that need an even or power-of-two rank count
//! refuse others instead of dropping ranks silently; recursive doubling folds
//! the ranks above the largest power of two in (as ORCS does) only when asked.

use crate::endpoints::Endpoints;
use crate::error::AnalysisError;
use ibcloud_fabric::{Fabric, Lid};
use rand::Rng;

/// One flow of a level: source rank, destination rank and weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Flow {
    /// Source rank.
    pub src: u32,
    /// Destination rank.
    pub dst: u32,
    /// Relative demand (1 for the built-in patterns).
    pub weight: f64,
}

/// A user traffic matrix over endpoints: weighted flows, optionally in levels.
#[derive(Clone, Debug, PartialEq)]
pub struct TrafficMatrix {
    levels: Vec<Vec<Flow>>,
    weighted: bool,
}

impl TrafficMatrix {
    /// Builds a matrix from rows `(source LID, destination LID, weight,
    /// level)`. Returns the endpoints in order of first appearance (rank i is
    /// endpoint i) and the matrix. Errors name the row (0-based).
    pub fn from_lid_rows(
        fabric: &Fabric,
        rows: &[(Lid, Lid, f64, u32)],
    ) -> Result<(Endpoints, Self), AnalysisError> {
        let table = fabric.lid_table()?;
        let mut rank_of_port = std::collections::HashMap::new();
        let mut list = Vec::new();
        let mut levels: Vec<Vec<Flow>> = Vec::new();
        let mut rank = |index: usize,
                        lid: Lid,
                        list: &mut Vec<crate::Endpoint>|
         -> Result<u32, AnalysisError> {
            let port = table
                .get(lid.0 as usize)
                .copied()
                .flatten()
                .ok_or(AnalysisError::UnknownLid { index, lid })?;
            if let Some(&r) = rank_of_port.get(&port) {
                return Ok(r);
            }
            let one = Endpoints::from_lids(fabric, &[lid]).map_err(|e| match e {
                AnalysisError::SwitchEndpoint { what, switch, .. } => {
                    AnalysisError::SwitchEndpoint {
                        index,
                        what,
                        switch,
                    }
                }
                other => other,
            })?;
            let r = list.len() as u32;
            list.push(one.as_slice()[0]);
            rank_of_port.insert(port, r);
            Ok(r)
        };
        for (index, &(s, d, weight, level)) in rows.iter().enumerate() {
            if !(weight.is_finite() && weight > 0.0) {
                return Err(AnalysisError::BadWeight { index, weight });
            }
            let src = rank(index, s, &mut list)?;
            let dst = rank(index, d, &mut list)?;
            if src == dst {
                return Err(AnalysisError::SelfFlow { index, lid: s });
            }
            let level = level as usize;
            if levels.len() <= level {
                levels.resize(level + 1, Vec::new());
            }
            levels[level].push(Flow { src, dst, weight });
        }
        levels.retain(|l| !l.is_empty());
        let weighted = levels.iter().flatten().any(|f| f.weight != 1.0);
        Ok((Endpoints::from_list(list)?, Self { levels, weighted }))
    }

    /// Number of flows over all levels.
    pub fn num_flows(&self) -> usize {
        self.levels.iter().map(Vec::len).sum()
    }

    /// Highest rank used + 1.
    fn ranks(&self) -> u32 {
        self.levels
            .iter()
            .flatten()
            .map(|f| f.src.max(f.dst) + 1)
            .max()
            .unwrap_or(0)
    }
}

/// A communication pattern.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// No communication.
    Null,
    /// Rank 2i sends to 2i+1: random bisections under shuffled orders
    /// (effective bisection bandwidth).
    Bisect,
    /// Rank 2i and 2i+1 send to each other (ORCS's `bisect_fb_sym`).
    BisectFbSym,
    /// A random permutation without fixed points (ORCS's `rand`).
    Rand,
    /// All-to-all in n−1 rounds: in level k rank i sends to (i+k) mod n.
    Shift,
    /// ORCS's ring: level l has the single flow l → (l+1) mod n (n levels).
    Ring,
    /// Every rank exchanges with k neighbours, paired greedily left to right
    /// (ORCS's `neighbor` pattern; 2, 4 and 6 are the usual ones).
    Neighbor(u32),
    /// Four neighbours on a near-square 2-D torus (ORCS's `neighbor2d`).
    Neighbor2d,
    /// Bruck: level l, rank i sends to (i + 2^l) mod n.
    Bruck,
    /// Recursive doubling: level l, ranks i and i xor 2^l exchange. `fold`
    /// adds ORCS's extra level for ranks above the largest power of two;
    /// without it the rank count must be a power of two.
    RecDbl {
        /// Allow any rank count (ORCS's behaviour).
        fold: bool,
    },
    /// Binomial tree broadcast: level l, rank i < 2^l sends to i + 2^l.
    Tree,
    /// Every rank sends to rank 0.
    Gather,
    /// Rank 0 sends to every rank.
    Scatter,
    /// A user traffic matrix (ranks are its own endpoints).
    Matrix(TrafficMatrix),
}

/// Names accepted by [`Pattern::parse`].
pub const PATTERN_NAMES: &[&str] = &[
    "null",
    "bisect",
    "bisect_fb_sym",
    "rand",
    "shift",
    "ring",
    "neighbor",
    "2neighbor",
    "4neighbor",
    "6neighbor",
    "neighbor2d",
    "bruck",
    "recdbl",
    "tree",
    "gather",
    "scatter",
];

impl Pattern {
    /// Parses a pattern name; `arg` is the pattern argument (the neighbour
    /// count of `neighbor`, `fold` for `recdbl`).
    pub fn parse(name: &str, arg: Option<&str>) -> Result<Self, AnalysisError> {
        let bad_arg = |what: &str| AnalysisError::BadPattern(format!("pattern '{name}': {what}"));
        let pattern = match name.replace('-', "_").as_str() {
            "null" => Self::Null,
            "bisect" => Self::Bisect,
            "bisect_fb_sym" => Self::BisectFbSym,
            "rand" | "random" | "permutation" => Self::Rand,
            "shift" | "alltoall" | "all_to_all" => Self::Shift,
            "ring" => Self::Ring,
            "2neighbor" => Self::Neighbor(2),
            "4neighbor" => Self::Neighbor(4),
            "6neighbor" => Self::Neighbor(6),
            "neighbor" => {
                let k = arg.ok_or_else(|| bad_arg("needs the neighbour count as its argument"))?;
                let k: u32 = k
                    .parse()
                    .map_err(|_| bad_arg(&format!("'{k}' is not a neighbour count")))?;
                if k == 0 {
                    return Err(bad_arg("the neighbour count must be at least 1"));
                }
                return Ok(Self::Neighbor(k));
            }
            "neighbor2d" => Self::Neighbor2d,
            "bruck" => Self::Bruck,
            "recdbl" => {
                return match arg {
                    None => Ok(Self::RecDbl { fold: false }),
                    Some("fold") => Ok(Self::RecDbl { fold: true }),
                    Some(a) => Err(bad_arg(&format!("unknown argument '{a}' (only 'fold')"))),
                }
            }
            "tree" => Self::Tree,
            "gather" => Self::Gather,
            "scatter" => Self::Scatter,
            _ => {
                return Err(AnalysisError::BadPattern(format!(
                    "unknown pattern '{name}' (known: {})",
                    PATTERN_NAMES.join(", ")
                )))
            }
        };
        if let Some(a) = arg {
            return Err(bad_arg(&format!("takes no argument (got '{a}')")));
        }
        Ok(pattern)
    }

    /// The pattern's name.
    pub fn name(&self) -> String {
        match self {
            Self::Null => "null".into(),
            Self::Bisect => "bisect".into(),
            Self::BisectFbSym => "bisect_fb_sym".into(),
            Self::Rand => "rand".into(),
            Self::Shift => "shift".into(),
            Self::Ring => "ring".into(),
            Self::Neighbor(k) => format!("{k}neighbor"),
            Self::Neighbor2d => "neighbor2d".into(),
            Self::Bruck => "bruck".into(),
            Self::RecDbl { fold: false } => "recdbl".into(),
            Self::RecDbl { fold: true } => "recdbl,fold".into(),
            Self::Tree => "tree".into(),
            Self::Gather => "gather".into(),
            Self::Scatter => "scatter".into(),
            Self::Matrix(_) => "matrix".into(),
        }
    }

    /// Whether runs differ only by the node order (everything but `rand`
    /// draws nothing itself; a matrix draws nothing at all).
    pub fn is_matrix(&self) -> bool {
        matches!(self, Self::Matrix(_))
    }

    /// Whether flows carry weights other than 1.
    pub fn is_weighted(&self) -> bool {
        matches!(self, Self::Matrix(m) if m.weighted)
    }

    /// Checks that the pattern can be laid over `n` ranks.
    pub fn check(&self, n: usize) -> Result<(), AnalysisError> {
        let size_error = |requirement: &str, hint: String| AnalysisError::PatternSize {
            pattern: self.name(),
            requirement: requirement.into(),
            nodes: n,
            hint,
        };
        match self {
            Self::Null => Ok(()),
            Self::Matrix(m) if (m.ranks() as usize) > n => Err(size_error("names more endpoints than given", String::new())),
            Self::Matrix(_) => Ok(()),
            _ if n < 2 => Err(size_error("needs at least 2 endpoints", String::new())),
            Self::Bisect | Self::BisectFbSym if n % 2 == 1 => {
                Err(size_error("needs an even number of endpoints", format!(" (pick {} with --count)", n - 1)))
            }
            Self::RecDbl { fold: false } if !n.is_power_of_two() => Err(size_error(
                "needs a power-of-two number of endpoints",
                format!(
                    " (pick {} with --count, or give the argument 'fold' to fold the extra {} in as ORCS does)",
                    prev_power_of_two(n),
                    n - prev_power_of_two(n)
                ),
            )),
            Self::Neighbor(k) if (*k as usize) >= n => {
                Err(size_error(&format!("needs more than {k} endpoints for {k} neighbours each"), String::new()))
            }
            _ => Ok(()),
        }
    }

    /// The pattern over `n` ranks for one run; `rng` serves the random
    /// patterns. Call [`Pattern::check`] first.
    pub fn instantiate<R: Rng>(&self, n: usize, rng: &mut R) -> PatternInstance<'_> {
        let n32 = n as u32;
        let table = match self {
            Self::Rand => Some(derangement(n, rng)),
            Self::Neighbor(k) => Some(greedy_neighbors(n, *k as usize)),
            Self::Neighbor2d => Some(neighbor2d(n)),
            _ => None,
        };
        PatternInstance {
            pattern: self,
            n: n32,
            table,
        }
    }
}

fn prev_power_of_two(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        1 << (usize::BITS - 1 - n.leading_zeros())
    }
}

fn ceil_log2(n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        u32::BITS - (n - 1).leading_zeros()
    }
}

/// A uniform random permutation, then every fixed point swapped with a random
/// other position (each swap removes one fixed point and creates none).
fn derangement<R: Rng>(n: usize, rng: &mut R) -> Vec<(u32, u32)> {
    use rand::seq::SliceRandom;
    let mut p: Vec<u32> = (0..n as u32).collect();
    p.shuffle(rng);
    for i in 0..n {
        if p[i] == i as u32 {
            let mut j = rng.random_range(0..n - 1);
            if j >= i {
                j += 1;
            }
            p.swap(i, j);
        }
    }
    p.into_iter()
        .enumerate()
        .map(|(i, d)| (i as u32, d))
        .collect()
}

/// ORCS's neighbour pairing: for each rank and each of its k slots, the
/// first higher rank with a free slot that is not yet its neighbour. Both
/// directions of each pairing are flows.
fn greedy_neighbors(n: usize, k: usize) -> Vec<(u32, u32)> {
    const FREE: u32 = u32::MAX;
    let mut slots = vec![FREE; n * k];
    for i in 0..n {
        for s in 0..k {
            if slots[i * k + s] != FREE {
                continue;
            }
            for j in i + 1..n {
                let peer = &slots[j * k..(j + 1) * k];
                if peer.contains(&(i as u32)) {
                    continue;
                }
                if let Some(l) = peer.iter().position(|&x| x == FREE) {
                    slots[i * k + s] = j as u32;
                    slots[j * k + l] = i as u32;
                    break;
                }
            }
        }
    }
    (0..n)
        .flat_map(|i| {
            slots[i * k..(i + 1) * k]
                .iter()
                .filter(|&&x| x != FREE)
                .map(move |&x| (i as u32, x))
        })
        .collect::<Vec<_>>()
}

/// ORCS's 2-D nearest neighbours on a ceil(sqrt n)-wide torus, skipping empty
/// grid cells; duplicates and self-pairs removed, sorted.
fn neighbor2d(n: usize) -> Vec<(u32, u32)> {
    let xmax = (n as f64).sqrt().ceil() as i64;
    let ymax = (n as i64 + xmax - 1) / xmax;
    let node = |x: i64, y: i64| -> i64 { y.rem_euclid(ymax) * xmax + x.rem_euclid(xmax) };
    let mut out = Vec::with_capacity(4 * n);
    for v in 0..n as i64 {
        let (x, y) = (v % xmax, v / xmax);
        for (dx, dy) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
            let mut i = 1;
            let w = loop {
                let w = node(x + dx * i, y + dy * i);
                if w < n as i64 {
                    break w;
                }
                i += 1;
            };
            out.push((v as u32, w as u32));
        }
    }
    out.sort_unstable();
    out.dedup();
    out.retain(|(a, b)| a != b);
    out
}

/// A pattern laid over a number of ranks for one run.
#[derive(Clone, Debug)]
pub struct PatternInstance<'a> {
    pattern: &'a Pattern,
    n: u32,
    /// Flows of single-level patterns that draw or search (rand, neighbours).
    table: Option<Vec<(u32, u32)>>,
}

impl PatternInstance<'_> {
    /// Number of levels.
    pub fn num_levels(&self) -> usize {
        let n = self.n;
        if n < 2 {
            return match self.pattern {
                Pattern::Matrix(m) => m.levels.len(),
                _ => 0,
            };
        }
        match self.pattern {
            Pattern::Null => 0,
            Pattern::Shift => n as usize - 1,
            Pattern::Ring => n as usize,
            Pattern::Bruck | Pattern::Tree => ceil_log2(n) as usize,
            Pattern::RecDbl { .. } => {
                let p = prev_power_of_two(n as usize) as u32;
                p.trailing_zeros() as usize + usize::from(p != n)
            }
            Pattern::Matrix(m) => m.levels.len(),
            _ => 1,
        }
    }

    /// Appends the flows of `level` to `out`.
    pub fn level(&self, level: usize, out: &mut Vec<Flow>) {
        let n = self.n;
        let unit = |(src, dst): (u32, u32)| Flow {
            src,
            dst,
            weight: 1.0,
        };
        if level >= self.num_levels() {
            return;
        }
        match self.pattern {
            Pattern::Null => {}
            Pattern::Bisect => out.extend((0..n / 2).map(|i| unit((2 * i, 2 * i + 1)))),
            Pattern::BisectFbSym => out.extend(
                (0..n / 2).flat_map(|i| [unit((2 * i, 2 * i + 1)), unit((2 * i + 1, 2 * i))]),
            ),
            Pattern::Rand | Pattern::Neighbor(_) | Pattern::Neighbor2d => {
                out.extend(self.table.iter().flatten().map(|&p| unit(p)))
            }
            Pattern::Shift => {
                let k = level as u32 + 1;
                out.extend((0..n).map(|i| unit((i, (i + k) % n))))
            }
            Pattern::Ring => out.push(unit((level as u32, (level as u32 + 1) % n))),
            Pattern::Bruck => {
                let d = 1u32 << level;
                out.extend((0..n).map(|i| unit((i, (i + d) % n))))
            }
            Pattern::Tree => {
                let d = 1u32 << level;
                out.extend((0..d).take_while(|&i| i + d < n).map(|i| unit((i, i + d))))
            }
            Pattern::RecDbl { .. } => {
                let p = prev_power_of_two(n as usize) as u32;
                let d = 1u32 << level;
                if d < p {
                    for i in (0..p).step_by(2 * d as usize) {
                        for k in i..i + d {
                            if k + d < n {
                                out.push(unit((k, k + d)));
                                out.push(unit((k + d, k)));
                            }
                        }
                    }
                } else {
                    out.extend((0..n - p).map(|i| unit((i, i + p))));
                }
            }
            Pattern::Gather => out.extend((1..n).map(|i| unit((i, 0)))),
            Pattern::Scatter => out.extend((1..n).map(|i| unit((0, i)))),
            Pattern::Matrix(m) => out.extend_from_slice(&m.levels[level]),
        }
    }

    /// Every level's flows (small patterns and tests; analyses stream levels).
    pub fn all_levels(&self) -> Vec<Vec<Flow>> {
        (0..self.num_levels())
            .map(|l| {
                let mut v = Vec::new();
                self.level(l, &mut v);
                v
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn pairs(p: &Pattern, n: usize) -> Vec<Vec<(u32, u32)>> {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        p.instantiate(n, &mut rng)
            .all_levels()
            .into_iter()
            .map(|l| l.iter().map(|f| (f.src, f.dst)).collect())
            .collect()
    }

    #[test]
    fn orcs_shapes() {
        assert_eq!(
            pairs(&Pattern::Bisect, 6),
            vec![vec![(0, 1), (2, 3), (4, 5)]]
        );
        assert_eq!(
            pairs(&Pattern::BisectFbSym, 4),
            vec![vec![(0, 1), (1, 0), (2, 3), (3, 2)]]
        );
        assert_eq!(
            pairs(&Pattern::Gather, 4),
            vec![vec![(1, 0), (2, 0), (3, 0)]]
        );
        assert_eq!(pairs(&Pattern::Scatter, 3), vec![vec![(0, 1), (0, 2)]]);
        assert_eq!(
            pairs(&Pattern::Tree, 5),
            vec![vec![(0, 1)], vec![(0, 2), (1, 3)], vec![(0, 4)]]
        );
        assert_eq!(
            pairs(&Pattern::Ring, 3),
            vec![vec![(0, 1)], vec![(1, 2)], vec![(2, 0)]]
        );
        assert_eq!(
            pairs(&Pattern::Bruck, 5),
            vec![
                vec![(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)],
                vec![(0, 2), (1, 3), (2, 4), (3, 0), (4, 1)],
                vec![(0, 4), (1, 0), (2, 1), (3, 2), (4, 3)]
            ]
        );
        assert_eq!(
            pairs(&Pattern::RecDbl { fold: false }, 4),
            vec![
                vec![(0, 1), (1, 0), (2, 3), (3, 2)],
                vec![(0, 2), (2, 0), (1, 3), (3, 1)]
            ]
        );
        assert_eq!(
            pairs(&Pattern::RecDbl { fold: true }, 5).last().unwrap(),
            &vec![(0, 4)]
        );
        let shift = pairs(&Pattern::Shift, 4);
        assert_eq!(shift.len(), 3);
        assert_eq!(shift[2], vec![(0, 3), (1, 0), (2, 1), (3, 2)]);
    }

    #[test]
    fn neighbors_follow_orcs_greedy_pairing() {
        // 2 neighbours on 5 ranks: 0-1, 0-2, 1-2, 3-4; rank 3 and 4 keep one free slot each.
        let mut got = pairs(&Pattern::Neighbor(2), 5).remove(0);
        got.sort();
        assert_eq!(
            got,
            vec![
                (0, 1),
                (0, 2),
                (1, 0),
                (1, 2),
                (2, 0),
                (2, 1),
                (3, 4),
                (4, 3)
            ]
        );
        let n4 = pairs(&Pattern::Neighbor(4), 12).remove(0);
        assert!(n4.iter().all(|(a, b)| a != b && n4.contains(&(*b, *a))));
        let grid = pairs(&Pattern::Neighbor2d, 9).remove(0);
        assert_eq!(grid.len(), 9 * 4);
    }

    #[test]
    fn rand_is_a_derangement() {
        for n in [2usize, 3, 7, 100] {
            for seed in 0..20 {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let l = Pattern::Rand
                    .instantiate(n, &mut rng)
                    .all_levels()
                    .remove(0);
                let mut dsts: Vec<u32> = l.iter().map(|f| f.dst).collect();
                assert!(l.iter().all(|f| f.src != f.dst));
                dsts.sort();
                assert_eq!(dsts, (0..n as u32).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn size_checks_say_why() {
        let e = Pattern::Bisect.check(5).unwrap_err().to_string();
        assert!(e.contains("even") && e.contains("5"), "{e}");
        let e = Pattern::RecDbl { fold: false }
            .check(12)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("power-of-two") && e.contains("8") && e.contains("fold"),
            "{e}"
        );
        assert!(Pattern::RecDbl { fold: true }.check(12).is_ok());
        assert!(Pattern::Gather.check(1).is_err());
        assert!(Pattern::Neighbor(6).check(6).is_err());
        assert!(Pattern::parse("neighbor", Some("x")).is_err());
        assert_eq!(
            Pattern::parse("4neighbor", None).unwrap(),
            Pattern::Neighbor(4)
        );
        assert!(Pattern::parse("bisect", Some("3")).is_err());
        assert!(Pattern::parse("bogus", None)
            .unwrap_err()
            .to_string()
            .contains("known:"));
    }

    #[test]
    fn level_counts() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        for n in 2..40usize {
            for p in [
                Pattern::Tree,
                Pattern::Bruck,
                Pattern::RecDbl { fold: true },
                Pattern::Shift,
            ] {
                let inst = p.instantiate(n, &mut rng);
                let levels = inst.all_levels();
                assert!(levels.iter().all(|l| !l.is_empty()), "{p:?} {n}");
                assert!(levels
                    .iter()
                    .flatten()
                    .all(|f| f.src != f.dst && f.src < n as u32 && f.dst < n as u32));
            }
        }
    }
}
