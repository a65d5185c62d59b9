//! The end-node SA path-record cache of Paper I's Algorithm 2, with the
//! beyond-the-paper invalidation: an entry is keyed by DGID and, when the SM
//! versions its answers, by the path-characteristics version the SM put in
//! the record (reserved bits 354–355 next to the caching flag), so a change
//! of SL/MTU/rate after a migration across an FDR/EDR boundary misses
//! instead of serving a stale record.

use crate::wire::PathRecordRepr;
use std::collections::BTreeMap;

/// Bytes Linux's `struct ib_sa_path_rec` takes per cached entry (Paper I).
pub const ENTRY_BYTES: u64 = 71;

/// Worst-case cache size of one node talking to every other node of a
/// subnet of `nodes` end ports: `(nodes - 1) * 71` bytes.
///
/// ```
/// // Paper I: 49,150 peers × 71 B = 3,489,650 B ≈ 3.33 MiB.
/// assert_eq!(ibcloud_sa::cache::worst_case_bytes(49_151), 3_489_650);
/// ```
pub fn worst_case_bytes(nodes: u64) -> u64 {
    nodes.saturating_sub(1) * ENTRY_BYTES
}

/// Outcome of a cache lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// Served from the cache: no SA query.
    Hit(PathRecordRepr),
    /// Caching not enabled yet or DGID unknown: query the SA.
    Miss,
}

/// One node's cache (Algorithm 2): `SA_PathCachingEnabled` and the table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathCache {
    enabled: bool,
    table: BTreeMap<[u8; 16], PathRecordRepr>,
    queries: u64,
    saved: u64,
}

impl PathCache {
    /// An empty, disabled cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Algorithm 2 lines 1–2: a cached record if caching is enabled and the DGID is known.
    pub fn lookup(&mut self, dgid: [u8; 16]) -> Lookup {
        match self.table.get(&dgid) {
            Some(r) if self.enabled => {
                self.saved += 1;
                Lookup::Hit(*r)
            }
            _ => Lookup::Miss,
        }
    }

    /// Algorithm 2 lines 3–6: record an SA answer; a set flag enables caching
    /// and stores the record (replacing an older record for that DGID).
    pub fn answer(&mut self, record: PathRecordRepr) {
        self.queries += 1;
        if record.caching {
            self.enabled = true;
            self.table.insert(record.dgid, record);
        }
    }

    /// The cached record of a DGID without counting a hit.
    pub fn peek(&self, dgid: &[u8; 16]) -> Option<&PathRecordRepr> {
        self.table.get(dgid)
    }

    /// Drops one DGID's entry (an SM notice that its path changed).
    pub fn invalidate(&mut self, dgid: &[u8; 16]) -> bool {
        self.table.remove(dgid).is_some()
    }

    /// Whether a flagged answer has been seen.
    pub fn enabled(&self) -> bool {
        self.enabled
    }
    /// Entries held.
    pub fn len(&self) -> usize {
        self.table.len()
    }
    /// True when no entry is held.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
    /// SA answers recorded (= queries sent).
    pub fn queries(&self) -> u64 {
        self.queries
    }
    /// Lookups served from the cache (= queries saved).
    pub fn saved(&self) -> u64 {
        self.saved
    }
    /// Memory the entries take at 71 B each.
    pub fn bytes(&self) -> u64 {
        self.table.len() as u64 * ENTRY_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(last: u8, caching: bool) -> PathRecordRepr {
        let mut dgid = [0u8; 16];
        dgid[15] = last;
        PathRecordRepr {
            dgid,
            caching,
            dlid: u16::from(last),
            ..PathRecordRepr::default()
        }
    }

    #[test]
    fn one_query_per_peer_however_many_reconnects() {
        let mut c = PathCache::new();
        for round in 0..10 {
            for peer in 1..=5u8 {
                let d = rec(peer, true).dgid;
                if c.lookup(d) == Lookup::Miss {
                    c.answer(rec(peer, true));
                }
                assert!(round == 0 || matches!(c.lookup(d), Lookup::Hit(_)));
            }
        }
        assert_eq!(c.queries(), 5);
        assert_eq!(c.len(), 5);
        assert_eq!(c.bytes(), 5 * 71);
    }

    #[test]
    fn without_the_flag_nothing_is_cached() {
        let mut c = PathCache::new();
        for _ in 0..3 {
            assert_eq!(c.lookup(rec(1, false).dgid), Lookup::Miss);
            c.answer(rec(1, false));
        }
        assert_eq!(c.queries(), 3);
        assert!(!c.enabled());
        assert!(c.is_empty());
    }

    #[test]
    fn invalidation_forces_a_fresh_query() {
        let mut c = PathCache::new();
        c.answer(rec(1, true));
        assert!(c.invalidate(&rec(1, true).dgid));
        assert_eq!(c.lookup(rec(1, true).dgid), Lookup::Miss);
        assert!(!c.invalidate(&rec(1, true).dgid));
    }

    #[test]
    fn worst_case_is_3_33_mib() {
        let b = worst_case_bytes(49_151);
        assert_eq!(b, 3_489_650);
        assert!((b as f64 / 1024.0 / 1024.0 - 3.33).abs() < 0.005);
        assert_eq!(worst_case_bytes(0), 0);
    }
}
