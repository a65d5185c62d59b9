//! Completion queues: fixed-size rings in guest memory, written by the HCA
//! and read by the guest (and, read-only, by the hypervisor).
//!
//! A CQE carries `byte_len`, the opcode, the QP number and an owner bit, and
//! no timestamp (F §2). Entry `i` lives in slot `i mod N`; its owner bit is
//! the parity of its lap `i / N`, so a reader knows a slot holds a new entry
//! when the bit matches the lap it expects. The HCA never waits: a reader
//! that falls more than `N` entries behind loses entries (they are
//! overwritten), and counts them if it can tell.

use serde::Serialize;

/// Work-completion opcodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Opcode {
    /// RDMA Write completed (acknowledged).
    RdmaWrite,
    /// RDMA Read completed (data arrived).
    RdmaRead,
    /// Send completed (acknowledged).
    Send,
    /// A message arrived on a posted receive.
    Recv,
}

/// One completion-queue entry as the HCA writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Cqe {
    /// Bytes transferred.
    pub byte_len: u32,
    /// What completed.
    pub opcode: Opcode,
    /// Local QP number.
    pub qp: u32,
    /// Owner bit: parity of the ring lap the entry was written in.
    pub owner: bool,
    /// When the HCA wrote the entry (ps). Simulator bookkeeping, not a
    /// field of the hardware CQE (which has no timestamp, F §2): only the
    /// measurement of Nectere's latency split reads it, never a policy or
    /// IBMon.
    #[serde(skip)]
    pub written: crate::Time,
}

/// A CQ ring. `produced` counts entries ever written; the guest's consumer
/// index is `consumed`.
#[derive(Clone, Debug)]
pub struct CqRing {
    slots: Vec<Option<Cqe>>,
    produced: u64,
    consumed: u64,
    overrun: u64,
}

impl CqRing {
    /// A ring of `entries` slots (≥ 1).
    pub fn new(entries: usize) -> Self {
        Self {
            slots: vec![None; entries.max(1)],
            produced: 0,
            consumed: 0,
            overrun: 0,
        }
    }
    /// Slots in the ring.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
    /// The HCA writes an entry (overwriting the oldest when full).
    pub fn push(&mut self, byte_len: u32, opcode: Opcode, qp: u32) {
        self.push_at(byte_len, opcode, qp, 0);
    }

    /// [`CqRing::push`] at simulated time `at` (kept in [`Cqe::written`]).
    pub fn push_at(&mut self, byte_len: u32, opcode: Opcode, qp: u32, at: crate::Time) {
        let n = self.slots.len() as u64;
        if self.produced - self.consumed >= n {
            // The guest falls behind: its oldest unread entry is lost.
            self.consumed += 1;
            self.overrun += 1;
        }
        let lap = self.produced / n;
        self.slots[(self.produced % n) as usize] = Some(Cqe {
            byte_len,
            opcode,
            qp,
            owner: lap % 2 == 1,
            written: at,
        });
        self.produced += 1;
    }
    /// Entries the guest has not read yet.
    pub fn pending(&self) -> u64 {
        self.produced - self.consumed
    }
    /// The guest polls up to `max` entries.
    pub fn poll(&mut self, max: usize, out: &mut Vec<Cqe>) {
        let n = self.slots.len() as u64;
        while self.consumed < self.produced && out.len() < max {
            out.push(self.slots[(self.consumed % n) as usize].expect("written"));
            self.consumed += 1;
        }
    }
    /// Raw slot `i` (what an introspecting reader sees).
    pub fn slot(&self, i: usize) -> Option<Cqe> {
        self.slots[i]
    }
    /// The guest's consumer index (in guest memory, readable by dom0).
    pub fn consumer_index(&self) -> u64 {
        self.consumed
    }
    /// Entries lost because the guest fell a whole ring behind.
    pub fn overruns(&self) -> u64 {
        self.overrun
    }
}

/// A read-only reader of someone else's ring (IBMon's scan): follows the
/// owner bits from its own index.
#[derive(Clone, Debug, Default)]
pub struct RingReader {
    next: u64,
    /// Entries the reader detected it missed.
    pub lost: u64,
}

impl RingReader {
    /// Reads every new entry visible in `ring`: slot `next mod N` holds
    /// entry `next` when its owner bit equals the parity of lap `next / N`.
    /// An entry two laps ahead looks the same (aliasing a real reader cannot
    /// see). A mismatch means "not written yet" — unless the guest's consumer
    /// index (also in guest memory) is already past `next`, which proves the
    /// reader was lapped: it then jumps to the consumer index and counts the
    /// skipped entries as lost (an upper bound: some may still be readable).
    pub fn scan(&mut self, ring: &CqRing, mut each: impl FnMut(&Cqe)) -> u64 {
        let n = ring.capacity() as u64;
        let cons = ring.consumer_index();
        let mut seen = 0;
        for _ in 0..2 * n {
            let idx = (self.next % n) as usize;
            match ring.slot(idx) {
                Some(c) if c.owner == ((self.next / n) % 2 == 1) => {
                    each(&c);
                    self.next += 1;
                    seen += 1;
                }
                _ if self.next < cons => {
                    self.lost += cons - self.next;
                    self.next = cons;
                }
                _ => break,
            }
        }
        seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_bits_and_overrun() {
        let mut r = CqRing::new(4);
        for i in 0..6 {
            r.push(100 + i, Opcode::RdmaWrite, 1);
        }
        // The guest never polled: 2 entries were lost.
        assert_eq!(r.overruns(), 2);
        assert_eq!(r.pending(), 4);
        assert!(r.slot(0).unwrap().owner); // lap 1
        assert!(!r.slot(2).unwrap().owner); // lap 0
        let mut out = Vec::new();
        r.poll(10, &mut out);
        let lens: Vec<u32> = out.iter().map(|c| c.byte_len).collect();
        assert_eq!(lens, vec![102, 103, 104, 105]);
    }

    #[test]
    fn reader_follows_and_detects_laps() {
        let mut r = CqRing::new(4);
        let mut rd = RingReader::default();
        r.push(1, Opcode::RdmaRead, 0);
        r.push(2, Opcode::RdmaRead, 0);
        let mut sum = 0;
        assert_eq!(rd.scan(&r, |c| sum += c.byte_len), 2);
        assert_eq!(sum, 3);
        assert_eq!(rd.scan(&r, |_| ()), 0);
        // The guest keeps up, the reader sleeps for 9 entries: lapped.
        for i in 0..9 {
            r.push(10 + i, Opcode::RdmaRead, 0);
            r.poll(1, &mut Vec::new());
        }
        // Entry k >= 2 has byte_len 8 + k. Slot 2 now holds entry 10 (two
        // laps on: same owner bit), read in place of entry 2; slot 3 holds
        // entry 7 (wrong bit) while the guest is at 9: lapped, jump to 9.
        let mut got = Vec::new();
        rd.scan(&r, |c| got.push(c.byte_len));
        assert_eq!(got, vec![18, 17, 18]);
        assert_eq!(rd.lost, 6);
    }
}
