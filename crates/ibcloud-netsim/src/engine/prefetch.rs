//! Software prefetch of the state the next events of the current bucket
//! will touch.
//!
//! On a large fabric an event's state (the packet record, the port slot,
//! the forwarding entry, the output's queues) is rarely in the cache, and
//! each miss is waited for in turn. The events of the current wheel bucket
//! are already sorted, so the engine knows a few events ahead which lines
//! it will need: it asks for them early, in three stages, because each
//! stage's addresses come from the lines the one before fetched (a packet's
//! DLID gives its forwarding entry, that entry gives the output). A
//! prefetch is only a hint: results are identical with or without it.

/// Asks the CPU to bring the cache line holding `p` into all cache levels.
#[inline(always)]
pub(super) fn line<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: `_mm_prefetch` is a hint that never faults, whatever the
    // address; SSE is part of the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Prefetches element `i` of `v` if it exists.
#[inline(always)]
pub(super) fn elem<T>(v: &[T], i: usize) {
    if i < v.len() {
        line(v.as_ptr().wrapping_add(i));
    }
}

/// Prefetches element `i` of `v` if it exists, both its first and its
/// last line (a record wider than a line, or one that straddles two).
#[inline(always)]
pub(super) fn lane<T>(v: &[T], i: usize) {
    if i < v.len() {
        let p = v.as_ptr().wrapping_add(i);
        line(p);
        line((p as *const u8).wrapping_add(std::mem::size_of::<T>() - 1));
    }
}

/// How many events ahead each stage looks: far enough for a miss to
/// resolve before the event runs, near enough that the line is still
/// there (a bucket of a large fabric holds hundreds of events; a small
/// fabric's few events stay in the cache anyway).
pub(super) const STAGE1: usize = 24;
pub(super) const STAGE2: usize = 16;
pub(super) const STAGE3: usize = 9;
pub(super) const STAGE4: usize = 3;

/// Buckets with fewer events left are not prefetched from: only a large
/// fabric fills its buckets, and a small one's state is in the cache
/// already, where the prefetches would only cost instructions.
pub(super) const MIN_BUCKET: usize = 64;
