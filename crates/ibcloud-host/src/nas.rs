//! NAS-like BSP skeletons (F §4.1 Tables 1–2, §7.1 item 7): each rank is a
//! VM; a superstep computes, sends the benchmark's messages to its peers
//! (Send/Recv, so the receiver sees a completion) and waits until its own
//! sends completed and every message of the superstep from its peers
//! arrived. A slow rank therefore holds up its neighbours, as MPI's
//! blocking exchanges do.
//!
//! Message patterns follow the NPB 3.x MPI codes at **class B** (F names
//! neither the class nor the problem size; class B is our stated
//! assumption), for `n` ranks; docs/host.md gives the arithmetic:
//!
//! | benchmark | pattern | per superstep, to each peer | supersteps |
//! |---|---|---|---|
//! | IS | all-to-all | 4 KiB bucket sizes + 2²⁷/n² B of keys (8 MiB at n = 4) | 10 |
//! | FT | all-to-all | 2²⁷/n² B (the transpose of 2²³ complex points) | 20 |
//! | CG | grid neighbours | 75000·8/n B vector segment + 2 × 8 B dot products | 75 × 25 |
//! | MG | grid neighbours | 8 faces of 256·(256/py)·8 B + 8 of a quarter of that | 20 |
//! | BT | grid neighbours | 4 faces of 102·(102/py)·5·8 B | 200 |
//! | SP | grid neighbours | 4 faces of 102·(102/py)·5·8 B | 400 |
//! | LU | grid neighbours | 2 × 102 wavefront blocks of (102/py)·5·8 B + 1 face | 250 |
//!
//! Grid neighbours: the ranks sit on a px × py grid (py the largest factor of
//! n not above √n), periodic, each rank talking to its x and y neighbours.
//! Compute per superstep: IS, CG and MG are **calibrations** (fitted so the
//! standalone run matches F Table 2's 14.57 s and 4.13 s and Table 1's MG-4
//! at 2538.25 MFlop/s, i.e. 7.67 s for class B's 1.946e10 flop); FT, BT, SP
//! and LU have no standalone figure in F, so theirs are **inputs** (round
//! placeholders, not from F; a scenario sets `compute`).

use crate::cq::{Cqe, Opcode};
use crate::program::{Op, Program, ProgramLog, Wr, WrKind};
use crate::Time;
use std::collections::VecDeque;

/// The benchmarks.
pub const BENCHMARKS: [&str; 7] = ["is", "cg", "ft", "mg", "bt", "sp", "lu"];

const MS: Time = 1_000_000_000;

/// A benchmark's superstep at `n` ranks.
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    /// Peers of each rank (symmetric: `j ∈ peers[i]` ⇔ `i ∈ peers[j]`).
    pub peers: Vec<Vec<usize>>,
    /// Messages to each peer per superstep, in posting order (bytes).
    pub messages: Vec<u32>,
    /// Supersteps (class B).
    pub supersteps: u64,
    /// Guest compute per superstep.
    pub compute: Time,
}

/// MG class B flop count (NPB: 58 · nit · nx·ny·nz), for MFlop/s.
pub const MG_B_FLOP: f64 = 58.0 * 20.0 * 256.0 * 256.0 * 256.0;

/// px × py grid with py the largest factor of `n` not above √n.
fn grid(n: usize) -> (usize, usize) {
    let mut py = 1;
    for f in 1..=n {
        if f * f <= n && n.is_multiple_of(f) {
            py = f;
        }
    }
    (n / py, py)
}

fn grid_peers(n: usize) -> Vec<Vec<usize>> {
    let (px, py) = grid(n);
    (0..n)
        .map(|r| {
            let (x, y) = (r % px, r / px);
            let mut p = vec![
                (x + 1) % px + y * px,
                (x + px - 1) % px + y * px,
                x + ((y + 1) % py) * px,
                x + ((y + py - 1) % py) * px,
            ];
            p.retain(|&q| q != r);
            p.sort_unstable();
            p.dedup();
            p
        })
        .collect()
}

fn all_peers(n: usize) -> Vec<Vec<usize>> {
    (0..n)
        .map(|r| (0..n).filter(|&q| q != r).collect())
        .collect()
}

/// The pattern of `bench` at `n` ≥ 2 ranks, or None for an unknown name.
///
/// ```
/// let p = ibcloud_host::nas::pattern("is", 4).unwrap();
/// assert_eq!(p.peers[0], vec![1, 2, 3]);
/// assert_eq!(p.messages, vec![4096, 8 << 20]);
/// assert!(ibcloud_host::nas::pattern("ep", 4).is_none());
/// ```
pub fn pattern(bench: &str, n: usize) -> Option<Pattern> {
    let n64 = n as u64;
    let (_, py) = grid(n);
    let a2a = ((1u64 << 27) / (n64 * n64)).max(1) as u32;
    let face = |x: u64| x.max(1) as u32;
    let p = match bench {
        "is" => Pattern {
            peers: all_peers(n),
            messages: vec![4096, a2a],
            supersteps: 10,
            compute: IS_COMPUTE,
        },
        "ft" => Pattern {
            peers: all_peers(n),
            messages: vec![a2a],
            supersteps: 20,
            compute: 400 * MS,
        },
        "cg" => Pattern {
            peers: grid_peers(n),
            messages: vec![face(75_000 * 8 / n64), 8, 8],
            supersteps: 75 * 25,
            compute: CG_COMPUTE,
        },
        "mg" => {
            let f = 256 * (256 / py as u64) * 8;
            let mut m = vec![face(f); 8];
            m.extend(vec![face(f / 4); 8]);
            Pattern {
                peers: grid_peers(n),
                messages: m,
                supersteps: 20,
                compute: MG_COMPUTE,
            }
        }
        "bt" | "sp" => Pattern {
            peers: grid_peers(n),
            messages: vec![face(102 * (102 / py as u64) * 5 * 8); 4],
            supersteps: if bench == "bt" { 200 } else { 400 },
            compute: if bench == "bt" { 280 * MS } else { 60 * MS },
        },
        "lu" => {
            let mut m = vec![face((102 / py as u64) * 5 * 8); 2 * 102];
            m.push(face(102 * (102 / py as u64) * 5 * 8));
            Pattern {
                peers: grid_peers(n),
                messages: m,
                supersteps: 250,
                compute: 190 * MS,
            }
        }
        _ => return None,
    };
    Some(p)
}

/// IS compute per superstep (**calibration**: F Table 2's 14.57 s alone,
/// less the 0.407 s of communication the skeleton measured with no compute
/// change, two ranks per host; over 10 supersteps).
pub const IS_COMPUTE: Time = 1_416_262_300_000;
/// CG compute per superstep (**calibration**: F Table 2's 4.13 s alone, less
/// 0.806 s of communication, over 1875 supersteps).
pub const CG_COMPUTE: Time = 1_773_064_000;
/// MG compute per superstep (**calibration**: F Table 1's MG-4 at
/// 2538.25 MFlop/s is 7.667 s for class B's flop count, less 0.137 s of
/// communication, over 20 supersteps).
pub const MG_COMPUTE: Time = 376_526_313_000;

/// One rank of a BSP skeleton.
#[derive(Debug)]
pub struct Bsp {
    /// Local QP towards each peer.
    qps: Vec<u32>,
    messages: Vec<u32>,
    compute: Time,
    supersteps: u64,
    depth: u32,
    step: u64,
    stage: u8,
    step_start: Time,
    /// Sends posted / completed in this superstep (index into qps × messages).
    posted: usize,
    done: usize,
    /// Receives arrived since the start (cumulative: a fast peer's next
    /// superstep may arrive early).
    received: u64,
    recv_queue: VecDeque<u32>,
    max_bytes: u32,
}

impl Bsp {
    /// A rank talking to its peers through `qps`, sending `messages` to each
    /// per superstep, with `depth` sends outstanding.
    pub fn new(
        qps: Vec<u32>,
        messages: Vec<u32>,
        compute: Time,
        supersteps: u64,
        depth: u32,
    ) -> Self {
        let max_bytes = messages.iter().copied().max().unwrap_or(1);
        // One receive per expected message of a superstep, reposted as each
        // is consumed.
        let recv_queue = qps
            .iter()
            .flat_map(|&q| std::iter::repeat_n(q, messages.len()))
            .collect();
        Self {
            qps,
            messages,
            compute,
            supersteps,
            depth: depth.max(1),
            step: 0,
            stage: 0,
            step_start: 0,
            posted: 0,
            done: 0,
            received: 0,
            recv_queue,
            max_bytes,
        }
    }

    fn per_step(&self) -> usize {
        self.qps.len() * self.messages.len()
    }
}

impl Program for Bsp {
    fn next(&mut self, now: Time, cqes: &[Cqe], log: &mut ProgramLog) -> Op {
        for c in cqes {
            if !self.qps.contains(&c.qp) {
                continue;
            }
            if c.opcode == Opcode::Recv {
                self.received += 1;
                self.recv_queue.push_back(c.qp);
            } else {
                self.done += 1;
            }
        }
        if let Some(q) = self.recv_queue.pop_front() {
            return Op::Post(Wr {
                qp: q,
                kind: WrKind::Recv,
                bytes: self.max_bytes,
            });
        }
        loop {
            match self.stage {
                0 => {
                    if self.step >= self.supersteps {
                        return Op::Done;
                    }
                    self.step_start = now;
                    self.posted = 0;
                    self.done = 0;
                    self.stage = 1;
                    if self.compute > 0 {
                        return Op::Compute(self.compute);
                    }
                }
                1 => {
                    let total = self.per_step();
                    if self.posted < total && self.posted - self.done < self.depth as usize {
                        // Message k to every peer before message k + 1.
                        let (k, p) = (self.posted / self.qps.len(), self.posted % self.qps.len());
                        self.posted += 1;
                        log.last_post = now;
                        return Op::Post(Wr {
                            qp: self.qps[p],
                            kind: WrKind::Send,
                            bytes: self.messages[k],
                        });
                    }
                    let need = (self.step + 1) * total as u64;
                    if self.done < total || self.received < need {
                        return Op::Poll;
                    }
                    self.step += 1;
                    log.completed += 1;
                    log.latencies.push((now, now - self.step_start));
                    self.stage = 0;
                }
                _ => unreachable!("two stages"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_are_symmetric_and_sizes_follow_the_class() {
        for b in BENCHMARKS {
            for n in [2, 4, 8] {
                let p = pattern(b, n).unwrap();
                for (i, ps) in p.peers.iter().enumerate() {
                    assert!(!ps.is_empty() && !ps.contains(&i));
                    for &j in ps {
                        assert!(p.peers[j].contains(&i), "{b} n={n}");
                    }
                }
            }
        }
        assert_eq!(grid(4), (2, 2));
        assert_eq!(grid(8), (4, 2));
        assert_eq!(pattern("cg", 4).unwrap().messages, vec![150_000, 8, 8]);
        assert_eq!(pattern("mg", 4).unwrap().messages[0], 256 << 10);
        assert_eq!(pattern("ft", 4).unwrap().messages, vec![8 << 20]);
        assert_eq!(pattern("cg", 4).unwrap().peers[0], vec![1, 2]);
    }
}
