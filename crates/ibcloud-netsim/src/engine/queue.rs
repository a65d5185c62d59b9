//! The pending-event queue: a timing wheel in front of a binary heap.
//!
//! Events pop in `(time, sequence)` order exactly as from one binary heap
//! (so a run is bit-identical to one driven by `BinaryHeap<Ev>`), but only
//! the current bucket (2^`BUCKET_BITS` ps wide) is ever ordered: it is
//! sorted once when the wheel reaches it (plus a small heap for events
//! scheduled into it afterwards); the next `BUCKETS` buckets are plain
//! vectors appended to in O(1), and events further out wait in an overflow
//! heap until the wheel reaches them.
//! On a large fabric almost every event (link delays, serialisation, credit
//! returns: 10 ns – 1 µs ahead) lands in the wheel, so the cost per event no
//! longer grows with the logarithm of millions of pending events, and the
//! vectors are written and read sequentially instead of sifted through a
//! heap far larger than the cache.

use crate::time::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// One pending event (24 bytes); `kind`, `a`, `b` are the engine's.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ev {
    pub(super) t: Time,
    /// The time's low `BUCKET_BITS` bits, then the scheduling sequence
    /// number (52 bits), then the kind (4 bits): unique, so it orders
    /// equal-time events by sequence alone, and events of one bucket (which
    /// share the time's high bits) by (time, sequence) in one comparison.
    seq_kind: u64,
    pub(super) a: u32,
    pub(super) b: u32,
}

impl Ev {
    #[inline]
    pub(super) fn new(t: Time, seq: u64, kind: u8, a: u32, b: u32) -> Self {
        debug_assert!(kind < 16);
        debug_assert!(seq < 1 << SEQ_BITS);
        Self {
            t,
            seq_kind: (t & ((1 << BUCKET_BITS) - 1)) << (SEQ_BITS + 4) | seq << 4 | kind as u64,
            a,
            b,
        }
    }

    #[inline]
    pub(super) fn kind(&self) -> u8 {
        (self.seq_kind & 15) as u8
    }

    /// Orders the events of one bucket as `Ord` does: (time within its
    /// bucket, sequence), already packed in one u64.
    #[inline]
    fn bucket_key(&self) -> u64 {
        self.seq_kind
    }

    #[inline]
    pub(super) fn seq(&self) -> u64 {
        (self.seq_kind >> 4) & ((1 << SEQ_BITS) - 1)
    }
}

impl PartialEq for Ev {
    fn eq(&self, o: &Self) -> bool {
        self.t == o.t && self.seq_kind == o.seq_kind
    }
}
impl Eq for Ev {}
impl PartialOrd for Ev {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ev {
    /// Reversed: the max-heap pops the earliest (time, sequence).
    fn cmp(&self, o: &Self) -> Ordering {
        o.t.cmp(&self.t).then(o.seq_kind.cmp(&self.seq_kind))
    }
}

/// log2 of the bucket width in picoseconds (256 ps: a few events per bucket
/// per hundred ports at full load).
const BUCKET_BITS: u32 = 8;
/// Bits of an event's sequence number (with `BUCKET_BITS` and the kind's 4
/// they fill one u64; 2^52 events are far more than any run's budget).
const SEQ_BITS: u32 = 64 - BUCKET_BITS - 4;
/// Buckets on the wheel (a power of two): 4,096 × 256 ps ≈ 1 µs ahead,
/// beyond a packet's serialisation, link and switch delays; a small wheel
/// stays in the cache.
const BUCKETS: usize = 1 << 12;

/// Pending events in `(time, sequence)` order.
#[derive(Debug)]
pub(super) struct EventQueue {
    /// Events of the current bucket (index `cur`) as it was entered, sorted
    /// latest first (popped from the back).
    sorted: Vec<Ev>,
    /// Events pushed into the current bucket after it was entered.
    now: BinaryHeap<Ev>,
    /// Index of the current bucket (time >> BUCKET_BITS).
    cur: u64,
    /// Buckets `cur + 1 ..= cur + BUCKETS - 1`, by index modulo `BUCKETS`.
    wheel: Vec<Vec<Ev>>,
    /// Events on the wheel (not counting `now`).
    on_wheel: usize,
    /// Events at or past bucket `cur + BUCKETS`.
    far: BinaryHeap<Ev>,
}

impl EventQueue {
    pub(super) fn new() -> Self {
        Self {
            sorted: Vec::with_capacity(1 << 10),
            now: BinaryHeap::with_capacity(1 << 6),
            cur: 0,
            wheel: (0..BUCKETS).map(|_| Vec::new()).collect(),
            on_wheel: 0,
            far: BinaryHeap::new(),
        }
    }

    #[inline]
    fn bucket(t: Time) -> u64 {
        t >> BUCKET_BITS
    }

    /// Adds an event. One earlier than the current bucket (an external
    /// driver posting at a time it advanced to, after [`Self::peek_mut`]
    /// moved the wheel on) joins the current heap, which still pops it first.
    #[inline]
    pub(super) fn push(&mut self, ev: Ev) {
        let b = Self::bucket(ev.t);
        if b <= self.cur {
            self.now.push(ev);
        } else if b < self.cur + BUCKETS as u64 {
            self.wheel[b as usize & (BUCKETS - 1)].push(ev);
            self.on_wheel += 1;
        } else {
            self.far.push(ev);
        }
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<Ev> {
        if self.now.is_empty() {
            // The usual case: nothing was scheduled into the current bucket
            // since it was entered (`advance` leaves `now` empty too).
            if self.sorted.is_empty() && !self.advance() {
                return None;
            }
            return self.sorted.pop();
        }
        match (self.sorted.last(), self.now.peek()) {
            // `Ord` is reversed: the greater event is the earlier one.
            (Some(a), Some(b)) if b > a => self.now.pop(),
            (Some(_), _) => self.sorted.pop(),
            (None, _) => self.now.pop(),
        }
    }

    #[inline]
    fn first(&self) -> Option<&Ev> {
        match (self.sorted.last(), self.now.peek()) {
            (Some(a), Some(b)) => Some(if b > a { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    /// The event `d` places after the next one among those of the current
    /// bucket sorted on entry (events scheduled into the bucket since are
    /// not counted): a look ahead for prefetching, not an order guarantee.
    #[inline]
    pub(super) fn sorted_len(&self) -> usize {
        self.sorted.len()
    }

    #[inline]
    pub(super) fn ahead(&self, d: usize) -> Option<&Ev> {
        let n = self.sorted.len();
        (d < n).then(|| &self.sorted[n - 1 - d])
    }

    /// The earliest event, moving the wheel on to it if need be.
    #[inline]
    pub(super) fn peek_mut(&mut self) -> Option<&Ev> {
        if self.sorted.is_empty() && self.now.is_empty() && !self.advance() {
            return None;
        }
        self.first()
    }

    /// The earliest event, without removing it (scans the wheel).
    pub(super) fn peek(&self) -> Option<&Ev> {
        if let Some(e) = self.first() {
            return Some(e);
        }
        if self.on_wheel > 0 {
            for i in 1..BUCKETS as u64 {
                let w = &self.wheel[(self.cur + i) as usize & (BUCKETS - 1)];
                if !w.is_empty() {
                    return w.iter().max(); // `Ord` is reversed: max = earliest
                }
            }
        }
        self.far.peek()
    }

    /// Moves to the next non-empty bucket; false when no event is left.
    fn advance(&mut self) -> bool {
        loop {
            if self.on_wheel == 0 {
                // Jump straight to the first far event's bucket.
                let Some(first) = self.far.peek() else {
                    return false;
                };
                self.cur = Self::bucket(first.t) - 1;
            }
            self.cur += 1;
            // The bucket that just entered the wheel's horizon takes its far
            // events.
            let horizon = self.cur + BUCKETS as u64 - 1;
            while let Some(e) = self.far.peek() {
                let b = Self::bucket(e.t);
                if b > horizon {
                    break;
                }
                let e = self.far.pop().expect("peeked");
                self.wheel[b as usize & (BUCKETS - 1)].push(e);
                self.on_wheel += 1;
            }
            let slot = self.cur as usize & (BUCKETS - 1);
            if !self.wheel[slot].is_empty() {
                self.on_wheel -= self.wheel[slot].len();
                // Reuse allocations: the bucket's vector becomes the sorted
                // run, the run's (empty) vector becomes the bucket.
                std::mem::swap(&mut self.sorted, &mut self.wheel[slot]);
                // Latest first. All events of a bucket share `t >>
                // BUCKET_BITS`, so one u64 (the time's low bits above the
                // sequence number) orders them as `Ord` does, at the cost
                // of one comparison. Events are appended in scheduling
                // order, so the sequence part is mostly ascending: reversed
                // first, the vector is nearly in the order wanted and the
                // (insertion) sort moves few events instead of almost all.
                self.sorted.reverse();
                self.sorted
                    .sort_unstable_by_key(|e| std::cmp::Reverse(e.bucket_key()));
            }
            if !self.sorted.is_empty() || !self.now.is_empty() {
                return true;
            }
        }
    }

    /// Pending events.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.sorted.len() + self.now.len() + self.on_wheel + self.far.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Pops in exactly the order of a plain binary heap, with pushes
    /// interleaved (at the current time, within the wheel and far beyond).
    #[test]
    fn pops_in_binary_heap_order() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut q = EventQueue::new();
        let mut h = BinaryHeap::new();
        let mut seq = 0u64;
        let mut now: Time = 0;
        let mut popped = 0;
        for round in 0..200_000 {
            let pushes = if round < 100 {
                5
            } else {
                rng.random_range(0..3)
            };
            for _ in 0..pushes {
                let ahead: Time = match rng.random_range(0..10) {
                    0 => 0,
                    1..=6 => rng.random_range(0..2_000_000),
                    7 | 8 => rng.random_range(0..20_000),
                    _ => rng.random_range(0..50_000_000_000),
                };
                seq += 1;
                let ev = Ev::new(now + ahead, seq, (seq % 9) as u8, seq as u32, 0);
                q.push(ev);
                h.push(ev);
            }
            let want = h.peek().map(|e| (e.t, e.seq()));
            assert_eq!(q.peek().map(|e| (e.t, e.seq())), want);
            if rng.random_range(0..4) == 0 {
                // Look ahead (moving the wheel on), then keep scheduling at
                // `now`, which may now lie before the current bucket.
                assert_eq!(q.peek_mut().map(|e| (e.t, e.seq())), want);
                continue;
            }
            match (q.pop(), h.pop()) {
                (Some(a), Some(b)) => {
                    assert_eq!((a.t, a.seq()), (b.t, b.seq()));
                    now = a.t;
                    popped += 1;
                }
                (None, None) => {}
                (a, b) => panic!("{a:?} vs {b:?}"),
            }
            assert_eq!(q.len(), h.len());
        }
        while let Some(b) = h.pop() {
            let a = q.pop().expect("same length");
            assert_eq!((a.t, a.seq()), (b.t, b.seq()));
        }
        assert!(q.pop().is_none());
        assert!(popped > 100_000);
    }
}
