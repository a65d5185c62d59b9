//! The channel dependency graph per VL and the search for a cycle in it.
//!
//! A dependency is stored as one bit: row `c1` (the channel a path arrives
//! on at switch B), column `p2` (the port B sends it on). The row width is
//! the largest port count + 1, so ft11664 needs 60k × 37 bits ≈ 280 KB per VL,
//! allocated only for VLs that carry paths.

use super::{Net, TO_ENDPOINT, UNCABLED};

/// Dependency bitsets, one per VL in use.
#[derive(Debug, Default)]
pub(crate) struct Deps {
    bits: usize,
    vl: Vec<Vec<u64>>,
}

impl Deps {
    pub(crate) fn new(bits: usize) -> Self {
        Self {
            bits,
            vl: vec![Vec::new(); 16],
        }
    }

    #[inline]
    pub(crate) fn set(&mut self, vl: u8, bit: usize) {
        let words = self.bits.div_ceil(64);
        let row = &mut self.vl[vl as usize];
        if row.is_empty() {
            row.resize(words, 0);
        }
        row[bit / 64] |= 1 << (bit % 64);
    }

    fn get(&self, vl: u8, bit: usize) -> bool {
        self.vl
            .get(vl as usize)
            .and_then(|r| r.get(bit / 64))
            .is_some_and(|w| w & (1 << (bit % 64)) != 0)
    }

    pub(crate) fn merge(&mut self, o: Deps) {
        if self.vl.is_empty() {
            *self = o;
            return;
        }
        for (mine, theirs) in self.vl.iter_mut().zip(o.vl) {
            if theirs.is_empty() {
                continue;
            }
            if mine.is_empty() {
                *mine = theirs;
            } else {
                for (a, b) in mine.iter_mut().zip(theirs) {
                    *a |= b;
                }
            }
        }
    }

    /// VLs with at least one dependency.
    pub(crate) fn vls(&self) -> Vec<u8> {
        (0..self.vl.len() as u8)
            .filter(|&v| self.vl[v as usize].iter().any(|&w| w != 0))
            .collect()
    }

    /// Dependencies over all VLs.
    pub(crate) fn count(&self) -> u64 {
        self.vl
            .iter()
            .flatten()
            .map(|w| w.count_ones() as u64)
            .sum()
    }
}

/// The first cycle found (VLs ascending, channels ascending): its VL and
/// channel ids in dependency order.
pub(crate) fn find_cycle(net: &Net<'_>, deps: &Deps) -> Option<(u8, Vec<usize>)> {
    let channels = *net.chan_base.last().unwrap_or(&0) as usize;
    for vl in deps.vls() {
        // 0 unvisited, 1 on the DFS stack, 2 done.
        let mut color = vec![0u8; channels];
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for root in 0..channels {
            if color[root] != 0 || !is_switch_channel(net, root) {
                continue;
            }
            color[root] = 1;
            stack.push((root, 0));
            while let Some(&(c, start)) = stack.last() {
                let head = net.next[c];
                let mut pushed = None;
                let mut col = start;
                while col < net.stride {
                    let p2 = col;
                    col += 1;
                    if !deps.get(vl, c * net.stride + p2) {
                        continue;
                    }
                    let c2 = net.channel(head, p2 as u8);
                    match color[c2] {
                        0 => {
                            pushed = Some(c2);
                            break;
                        }
                        1 => {
                            let from = stack.iter().position(|&(x, _)| x == c2).unwrap_or(0);
                            return Some((vl, stack[from..].iter().map(|&(x, _)| x).collect()));
                        }
                        _ => {}
                    }
                }
                if let Some(top) = stack.last_mut() {
                    top.1 = col;
                }
                match pushed {
                    Some(c2) => {
                        color[c2] = 1;
                        stack.push((c2, 0));
                    }
                    None => {
                        color[c] = 2;
                        stack.pop();
                    }
                }
            }
        }
    }
    None
}

fn is_switch_channel(net: &Net<'_>, c: usize) -> bool {
    let n = net.next[c];
    n != UNCABLED && n != TO_ENDPOINT
}
