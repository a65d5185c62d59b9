//! A compact double-ended queue for the engine's per-lane queues.
//!
//! `VecDeque` takes 32 bytes of header; this ring takes 24 (a boxed buffer
//! whose length is a power of two, a 32-bit head and a 32-bit length), so
//! an output lane's credits, credit queue and request queue share one
//! 64-byte cache line. Only what the engine needs: FIFO use, a push to the
//! front, and an ordered insert for late credits.

/// A ring buffer of `Copy` items in insertion order.
#[derive(Clone, Debug)]
pub(super) struct Ring<T> {
    /// Capacity a power of two (or zero).
    buf: Box<[T]>,
    head: u32,
    len: u32,
}

impl<T: Copy + Default> Default for Ring<T> {
    fn default() -> Self {
        Self {
            buf: Box::new([]),
            head: 0,
            len: 0,
        }
    }
}

impl<T: Copy + Default> Ring<T> {
    /// Physical index of logical position `i` (the buffer is not empty).
    #[inline(always)]
    fn phys(&self, i: usize) -> usize {
        (self.head as usize + i) & (self.buf.len() - 1)
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        self.len as usize
    }

    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub(super) fn front(&self) -> Option<&T> {
        if self.len == 0 {
            None
        } else {
            Some(&self.buf[self.head as usize])
        }
    }

    #[inline]
    pub(super) fn back(&self) -> Option<&T> {
        if self.len == 0 {
            None
        } else {
            Some(&self.buf[self.phys(self.len as usize - 1)])
        }
    }

    #[inline]
    pub(super) fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let x = self.buf[self.head as usize];
        self.head = ((self.head as usize + 1) & (self.buf.len() - 1)) as u32;
        self.len -= 1;
        Some(x)
    }

    /// Always inlined: the engine pushes on every hop, and the call cost
    /// more than the push (the rare growth stays out of line).
    #[inline(always)]
    pub(super) fn push_back(&mut self, x: T) {
        if self.len as usize == self.buf.len() {
            self.grow();
        }
        let i = self.phys(self.len as usize);
        self.buf[i] = x;
        self.len += 1;
    }

    pub(super) fn push_front(&mut self, x: T) {
        if self.len as usize == self.buf.len() {
            self.grow();
        }
        let cap = self.buf.len();
        self.head = ((self.head as usize + cap - 1) & (cap - 1)) as u32;
        self.buf[self.head as usize] = x;
        self.len += 1;
    }

    /// The number of leading items for which `pred` holds (the items must
    /// be partitioned by it, as for `slice::partition_point`).
    pub(super) fn partition_point(&self, mut pred: impl FnMut(&T) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len as usize);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(&self.buf[self.phys(mid)]) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Inserts `x` at logical position `at` (≤ len), shifting later items.
    pub(super) fn insert(&mut self, at: usize, x: T) {
        assert!(at <= self.len as usize, "insert past the end");
        self.push_back(x);
        let mut i = self.len as usize - 1;
        while i > at {
            let (a, b) = (self.phys(i), self.phys(i - 1));
            self.buf[a] = self.buf[b];
            i -= 1;
        }
        let a = self.phys(at);
        self.buf[a] = x;
    }

    /// The items front to back.
    pub(super) fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.len as usize).map(move |i| &self.buf[self.phys(i)])
    }

    /// Removes and returns all items, front to back.
    pub(super) fn take_all(&mut self) -> Vec<T> {
        let v = self.iter().copied().collect();
        self.head = 0;
        self.len = 0;
        v
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let cap = (self.buf.len() * 2).max(4);
        let mut buf = vec![T::default(); cap].into_boxed_slice();
        for (d, s) in buf.iter_mut().zip(self.iter()) {
            *d = *s;
        }
        self.buf = buf;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::VecDeque;

    /// Behaves as a `VecDeque` under a random mix of every operation.
    #[test]
    fn matches_vecdeque() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let mut r = Ring::<(u64, u32)>::default();
        let mut d = VecDeque::new();
        for i in 0..20_000u32 {
            let x = (rng.random_range(0..1000u64), i);
            match rng.random_range(0..9) {
                0..=2 => {
                    r.push_back(x);
                    d.push_back(x);
                }
                3 => {
                    r.push_front(x);
                    d.push_front(x);
                }
                4..=6 => assert_eq!(r.pop_front(), d.pop_front()),
                7 => {
                    let at = rng.random_range(0..=d.len());
                    r.insert(at, x);
                    d.insert(at, x);
                }
                _ => {
                    if rng.random_range(0..50) == 0 {
                        assert_eq!(r.take_all(), d.drain(..).collect::<Vec<_>>());
                    }
                }
            }
            assert_eq!(r.len(), d.len());
            assert_eq!(r.is_empty(), d.is_empty());
            assert_eq!(r.front(), d.front());
            assert_eq!(r.back(), d.back());
            if i % 97 == 0 {
                assert!(r.iter().eq(d.iter()));
                let t = rng.random_range(0..1000u64);
                let mut sorted: Vec<_> = d.iter().copied().collect();
                sorted.sort();
                let s: Ring<(u64, u32)> = {
                    let mut s = Ring::default();
                    sorted.iter().for_each(|&x| s.push_back(x));
                    s
                };
                assert_eq!(
                    s.partition_point(|c| c.0 <= t),
                    sorted.partition_point(|c| c.0 <= t)
                );
            }
        }
    }
}
