//! Service levels of paths, and the SL-to-VL mapping used by the credit-loop check.

use ibcloud_fabric::Lid;
use serde::{Deserialize, Serialize};

/// The SL of every (source LID, destination LID) path, stored densely over the
/// LIDs in use: one byte per pair (a 6,804-LID fabric needs 46 MB).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathSls {
    /// LID → dense index (u32::MAX when the LID is not tracked).
    index: Vec<u32>,
    /// Tracked LIDs in index order.
    lids: Vec<Lid>,
    /// `sl[src_index * lids.len() + dst_index]`.
    sl: Vec<u8>,
}

impl PathSls {
    /// All paths between `lids` on SL 0.
    pub fn new(lids: &[Lid]) -> Self {
        let max = lids.iter().map(|l| l.0 as usize).max().unwrap_or(0);
        let mut index = vec![u32::MAX; max + 1];
        for (i, l) in lids.iter().enumerate() {
            index[l.0 as usize] = i as u32;
        }
        Self {
            index,
            lids: lids.to_vec(),
            sl: vec![0; lids.len() * lids.len()],
        }
    }

    fn slot(&self, src: Lid, dst: Lid) -> Option<usize> {
        let s = *self.index.get(src.0 as usize)?;
        let d = *self.index.get(dst.0 as usize)?;
        (s != u32::MAX && d != u32::MAX).then(|| s as usize * self.lids.len() + d as usize)
    }

    /// The SL of the path `src → dst` (0 for untracked LIDs).
    pub fn get(&self, src: Lid, dst: Lid) -> u8 {
        self.slot(src, dst).map_or(0, |i| self.sl[i])
    }

    /// Sets the SL of `src → dst`; false if either LID is untracked.
    pub fn set(&mut self, src: Lid, dst: Lid, sl: u8) -> bool {
        match self.slot(src, dst) {
            Some(i) => {
                self.sl[i] = sl;
                true
            }
            None => false,
        }
    }

    /// The tracked LIDs.
    pub fn lids(&self) -> &[Lid] {
        &self.lids
    }

    /// Highest SL in use plus one.
    pub fn num_sls(&self) -> usize {
        self.sl.iter().copied().max().map_or(0, |m| m as usize + 1)
    }
}

/// SL → VL for the credit-loop check; one table for the whole fabric
/// (identity when none is given, as OpenSM's default QoS setup with 16 SLs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sl2Vl(pub [u8; 16]);

impl Default for Sl2Vl {
    fn default() -> Self {
        let mut m = [0u8; 16];
        for (sl, vl) in m.iter_mut().enumerate() {
            *vl = sl as u8;
        }
        Self(m)
    }
}

impl Sl2Vl {
    /// The VL of an SL (SLs above 15 map to VL 15, which is never a data VL).
    pub fn vl(&self, sl: u8) -> u8 {
        self.0.get(sl as usize).copied().unwrap_or(15)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_sls_store_per_pair() {
        let mut p = PathSls::new(&[Lid(1), Lid(5), Lid(9)]);
        assert!(p.set(Lid(5), Lid(9), 3));
        assert_eq!(p.get(Lid(5), Lid(9)), 3);
        assert_eq!(p.get(Lid(9), Lid(5)), 0);
        assert!(!p.set(Lid(2), Lid(9), 1));
        assert_eq!(p.num_sls(), 4);
        assert_eq!(Sl2Vl::default().vl(7), 7);
    }
}
