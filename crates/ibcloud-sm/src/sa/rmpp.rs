//! RMPP (IBA 1.3 §13.6): the sender side that carries an SA table in
//! 200-byte segments, and the receiver side that reassembles one (used by
//! tests and by requesters that do RMPP themselves).
//!
//! Sender: segments 1..=N; the first says FIRST and PayloadLength = the
//! whole payload, the last says LAST and PayloadLength = its own payload.
//! Payload counts the 20-byte SA header of every segment, as the Linux MAD
//! layer (the receiver on a real HCA) computes it. The window starts at one
//! segment; every ACK(SegmentNumber, NewWindowLast) slides it; a timeout
//! resends the unacknowledged part of the window, `retries` times, then the
//! transfer is dropped (silently, as the Linux MAD layer does). A STOP or ABORT from the receiver
//! ends it. An ACK whose NewWindowLast is below its SegmentNumber, or that
//! acknowledges a segment not sent, aborts (§13.6.3.3 status 118/ 119).
//!
//! Receiver ([`Reassembler`]): takes segments in order, answers duplicates
//! and gaps with an ACK of the last in-order segment, ACKs the first
//! segment at once (as the Linux MAD layer does), then the end of every
//! window and the last segment, and hands back the data.

use super::mad::{
    rmpp_flag, rmpp_type, SaHeader, MAD_LEN, RMPP_SEGMENT_PAYLOAD, SA_DATA_LEN, SA_DATA_OFFSET,
};
use std::time::{Duration, Instant};

/// RMPP status: NewWindowLast too small.
pub const STATUS_BAD_WINDOW: u8 = 118;
/// RMPP status: segment number too big.
pub const STATUS_SEG_TOO_BIG: u8 = 119;

/// Cuts `data` (the records, back to back) into RMPP DATA segments, each a
/// full SA MAD with `header`'s fields and the RMPP header filled in. An
/// empty table is one segment with no data.
pub fn segment(header: &SaHeader, data: &[u8]) -> Vec<[u8; MAD_LEN]> {
    let n = data.len().div_ceil(SA_DATA_LEN).max(1);
    let pad = (n * SA_DATA_LEN - data.len()) as u32;
    let total = n as u32 * RMPP_SEGMENT_PAYLOAD - pad;
    (0..n)
        .map(|i| {
            let mut h = *header;
            h.rmpp.version = 1;
            h.rmpp.kind = rmpp_type::DATA;
            h.rmpp.status = 0;
            h.rmpp.flags = rmpp_flag::ACTIVE;
            h.rmpp.data1 = i as u32 + 1;
            h.rmpp.data2 = 0;
            if i + 1 == n {
                h.rmpp.flags |= rmpp_flag::LAST;
                h.rmpp.data2 = RMPP_SEGMENT_PAYLOAD - pad;
            }
            if i == 0 {
                h.rmpp.flags |= rmpp_flag::FIRST;
                h.rmpp.data2 = total;
            }
            let mut mad = [0u8; MAD_LEN];
            h.emit(&mut mad);
            let chunk =
                &data[(i * SA_DATA_LEN).min(data.len())..((i + 1) * SA_DATA_LEN).min(data.len())];
            mad[SA_DATA_OFFSET..SA_DATA_OFFSET + chunk.len()].copy_from_slice(chunk);
            mad
        })
        .collect()
}

/// A control MAD (ACK, STOP, ABORT) answering `to`.
pub fn control(to: &SaHeader, kind: u8, status: u8, seg: u32, window_last: u32) -> [u8; MAD_LEN] {
    let mut h = *to;
    h.rmpp = super::mad::RmppHeader {
        version: 1,
        kind,
        resp_time: 0,
        flags: rmpp_flag::ACTIVE,
        status,
        data1: seg,
        data2: window_last,
    };
    let mut mad = [0u8; MAD_LEN];
    h.emit(&mut mad);
    mad
}

/// How a sender's transfer ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every segment was acknowledged.
    Acknowledged,
    /// The receiver sent STOP or ABORT.
    Stopped,
    /// No ACK after every retry.
    TimedOut,
    /// The receiver's ACK broke the protocol (we sent ABORT).
    Aborted,
}

/// One outgoing RMPP transfer.
#[derive(Debug, Clone)]
pub struct Sender {
    segments: Vec<[u8; MAD_LEN]>,
    header: SaHeader,
    /// Highest segment acknowledged (0: none).
    acked: u32,
    /// Highest segment the receiver allows.
    window_last: u32,
    /// Highest segment sent.
    sent: u32,
    deadline: Instant,
    timeout: Duration,
    retries: u32,
    retries_left: u32,
    /// Set once the transfer is over.
    pub outcome: Option<Outcome>,
    /// Segments sent, resends included.
    pub segments_sent: u64,
    /// Resend rounds after a timeout.
    pub resends: u64,
}

impl Sender {
    /// A transfer of `data` with `header`'s fields; nothing is sent until
    /// [`Sender::start`].
    pub fn new(header: &SaHeader, data: &[u8], timeout: Duration, retries: u32) -> Self {
        Self {
            segments: segment(header, data),
            header: *header,
            acked: 0,
            window_last: 1,
            sent: 0,
            deadline: Instant::now() + timeout,
            timeout,
            retries,
            retries_left: retries,
            outcome: None,
            segments_sent: 0,
            resends: 0,
        }
    }

    /// Number of segments.
    pub fn len(&self) -> usize {
        self.segments.len()
    }

    /// Never true: a transfer has at least one segment.
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// When the sender next needs [`Sender::on_timeout`].
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether the transfer is over.
    pub fn done(&self) -> bool {
        self.outcome.is_some()
    }

    fn send_window(&mut self, from: u32, now: Instant) -> Vec<[u8; MAD_LEN]> {
        let last = self.window_last.min(self.segments.len() as u32);
        let out: Vec<[u8; MAD_LEN]> = (from..=last)
            .filter_map(|s| self.segments.get(s as usize - 1).copied())
            .collect();
        self.sent = self.sent.max(last);
        self.segments_sent += out.len() as u64;
        self.deadline = now + self.timeout;
        out
    }

    /// The first window (one segment).
    pub fn start(&mut self, now: Instant) -> Vec<[u8; MAD_LEN]> {
        self.send_window(1, now)
    }

    /// A MAD of this transfer from the receiver (ACK, STOP or ABORT).
    pub fn on_control(&mut self, h: &SaHeader, now: Instant) -> Vec<[u8; MAD_LEN]> {
        if self.done() {
            return Vec::new();
        }
        match h.rmpp.kind {
            rmpp_type::ACK => {
                let (seg, wl) = (h.rmpp.data1, h.rmpp.data2);
                if wl < seg {
                    self.outcome = Some(Outcome::Aborted);
                    return vec![control(
                        &self.header,
                        rmpp_type::ABORT,
                        STATUS_BAD_WINDOW,
                        0,
                        0,
                    )];
                }
                if seg > self.sent {
                    self.outcome = Some(Outcome::Aborted);
                    return vec![control(
                        &self.header,
                        rmpp_type::ABORT,
                        STATUS_SEG_TOO_BIG,
                        0,
                        0,
                    )];
                }
                if seg < self.acked {
                    return Vec::new(); // an old ACK
                }
                if seg > self.acked || wl > self.window_last {
                    // Progress: the retry budget starts again.
                    self.retries_left = self.retries;
                }
                self.acked = seg;
                self.window_last = self.window_last.max(wl);
                if self.acked as usize >= self.segments.len() {
                    self.outcome = Some(Outcome::Acknowledged);
                    return Vec::new();
                }
                let from = self.sent + 1;
                if from > self.window_last {
                    self.deadline = now + self.timeout;
                    return Vec::new();
                }
                self.send_window(from, now)
            }
            rmpp_type::STOP | rmpp_type::ABORT => {
                self.outcome = Some(Outcome::Stopped);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// The deadline passed: resend the unacknowledged window, or give up.
    pub fn on_timeout(&mut self, now: Instant) -> Vec<[u8; MAD_LEN]> {
        if self.done() || now < self.deadline {
            return Vec::new();
        }
        if self.retries_left == 0 {
            // Dropped without an ABORT, as the Linux MAD layer drops a send
            // whose ACK never came: a requester that does not do RMPP
            // (saquery through ibsim's shim) must not get stray MADs, which
            // the shim hands to whatever process holds its client slot next.
            self.outcome = Some(Outcome::TimedOut);
            return Vec::new();
        }
        self.retries_left -= 1;
        self.resends += 1;
        self.send_window(self.acked + 1, now)
    }
}

/// Why a reassembly failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RmppError {
    /// Not an RMPP DATA segment of this transfer.
    #[error("not an RMPP data segment: {0}")]
    NotData(String),
    /// The sender aborted or stopped.
    #[error("the sender ended the transfer (type {kind}, status {status})")]
    Ended {
        /// RMPPType.
        kind: u8,
        /// RMPPStatus.
        status: u8,
    },
    /// The last segment's PayloadLength does not fit.
    #[error("bad PayloadLength {0} in the last segment")]
    BadLength(u32),
}

/// What the receiver does after one segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Keep receiving; send the ACK if there is one.
    More(Option<[u8; MAD_LEN]>),
    /// The whole payload (the records, the SA data of every segment) and the
    /// final ACK to send.
    Done(Box<SaHeader>, Vec<u8>, [u8; MAD_LEN]),
}

/// Receiver side of one RMPP transfer.
#[derive(Debug, Clone)]
pub struct Reassembler {
    window: u32,
    expected: u32,
    window_last: u32,
    data: Vec<u8>,
    first: Option<SaHeader>,
}

impl Reassembler {
    /// A receiver granting `window` segments at a time (at least 1).
    pub fn new(window: u32) -> Self {
        let window = window.max(1);
        Self {
            window,
            expected: 1,
            window_last: window,
            data: Vec::new(),
            first: None,
        }
    }

    /// Takes one MAD of the transfer.
    pub fn push(&mut self, mad: &[u8]) -> Result<Step, RmppError> {
        let h = SaHeader::parse(mad).map_err(|e| RmppError::NotData(e.to_string()))?;
        if matches!(h.rmpp.kind, rmpp_type::ABORT | rmpp_type::STOP) {
            return Err(RmppError::Ended {
                kind: h.rmpp.kind,
                status: h.rmpp.status,
            });
        }
        if h.rmpp.kind != rmpp_type::DATA || !h.rmpp.active() {
            return Err(RmppError::NotData(format!(
                "RMPP type {} flags {}",
                h.rmpp.kind, h.rmpp.flags
            )));
        }
        let seg = h.rmpp.data1;
        if seg != self.expected {
            // A duplicate or a gap: tell the sender where we are.
            let last = self.expected - 1;
            return Ok(Step::More(Some(control(
                &h,
                rmpp_type::ACK,
                0,
                last,
                self.window_last,
            ))));
        }
        if seg == 1 {
            self.first = Some(h);
        }
        self.data.extend_from_slice(&mad[SA_DATA_OFFSET..MAD_LEN]);
        self.expected += 1;
        if h.rmpp.flags & rmpp_flag::LAST != 0 {
            let pay = h.rmpp.data2;
            if !(RMPP_SEGMENT_PAYLOAD - SA_DATA_LEN as u32..=RMPP_SEGMENT_PAYLOAD).contains(&pay) {
                return Err(RmppError::BadLength(pay));
            }
            let pad = (RMPP_SEGMENT_PAYLOAD - pay) as usize;
            self.data.truncate(self.data.len() - pad);
            let ack = control(&h, rmpp_type::ACK, 0, seg, seg);
            let first = self.first.unwrap_or(h);
            return Ok(Step::Done(
                Box::new(first),
                std::mem::take(&mut self.data),
                ack,
            ));
        }
        // The first segment is acknowledged at once (the sender starts
        // with a window of one), then the end of every window.
        if seg == 1 || seg == self.window_last {
            self.window_last = seg + self.window;
            return Ok(Step::More(Some(control(
                &h,
                rmpp_type::ACK,
                0,
                seg,
                self.window_last,
            ))));
        }
        Ok(Step::More(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> SaHeader {
        SaHeader {
            class_version: 2,
            method: 0x92,
            tid: 42,
            attr_id: 0x11,
            attr_offset: 14,
            ..SaHeader::default()
        }
    }

    #[test]
    fn segments_carry_flags_numbers_and_payload_lengths() {
        let data: Vec<u8> = (0..450u32).map(|i| i as u8).collect();
        let segs = segment(&header(), &data);
        assert_eq!(segs.len(), 3);
        let hs: Vec<SaHeader> = segs.iter().map(|m| SaHeader::parse(m).unwrap()).collect();
        assert_eq!(hs[0].rmpp.flags, rmpp_flag::ACTIVE | rmpp_flag::FIRST);
        assert_eq!(hs[1].rmpp.flags, rmpp_flag::ACTIVE);
        assert_eq!(hs[2].rmpp.flags, rmpp_flag::ACTIVE | rmpp_flag::LAST);
        assert_eq!(
            hs.iter().map(|h| h.rmpp.data1).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        // 3 × 220 − 150 bytes of padding; the last carries 20 + 50.
        assert_eq!(
            (hs[0].rmpp.data2, hs[1].rmpp.data2, hs[2].rmpp.data2),
            (510, 0, 70)
        );
        assert_eq!(&segs[2][56..106], &data[400..450]);
        assert!(segs[2][106..].iter().all(|&b| b == 0));
        let one = segment(&header(), &[]);
        let h = SaHeader::parse(&one[0]).unwrap();
        assert_eq!((one.len(), h.rmpp.flags, h.rmpp.data2), (1, 7, 20));
    }

    /// Runs a sender against a receiver, dropping the sends `drop` says.
    fn transfer(data: &[u8], window: u32, mut drop: impl FnMut(u64) -> bool) -> (Vec<u8>, Sender) {
        let t0 = Instant::now();
        let mut s = Sender::new(&header(), data, Duration::from_millis(10), 20);
        let mut r = Reassembler::new(window);
        let mut wire = s.start(t0);
        let mut now = t0;
        let mut n = 0u64;
        let mut got = None;
        for _ in 0..10_000 {
            if s.done() {
                break;
            }
            if wire.is_empty() {
                now += Duration::from_millis(11);
                wire = s.on_timeout(now);
                continue;
            }
            let mut next = Vec::new();
            for mad in wire.drain(..) {
                n += 1;
                if drop(n) {
                    continue;
                }
                match r.push(&mad).unwrap() {
                    Step::More(Some(ack)) => {
                        next.extend(s.on_control(&SaHeader::parse(&ack).unwrap(), now))
                    }
                    Step::More(None) => {}
                    Step::Done(_, d, ack) => {
                        got = Some(d);
                        next.extend(s.on_control(&SaHeader::parse(&ack).unwrap(), now));
                    }
                }
            }
            wire = next;
        }
        let Some(got) = got else {
            panic!(
                "not reassembled: {:?} acked {} sent {} wl {}",
                s.outcome, s.acked, s.sent, s.window_last
            )
        };
        (got, s)
    }

    #[test]
    fn a_table_crosses_with_any_window_and_lost_segments() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
        for w in [1, 4, 16, 64] {
            let (got, s) = transfer(&data, w, |_| false);
            assert_eq!(got, data);
            assert_eq!(s.outcome, Some(Outcome::Acknowledged));
            assert_eq!(s.segments_sent, 25);
            let (got, s) = transfer(&data, w, |n| n.wrapping_mul(2_654_435_761) % 100 < 15);
            assert_eq!(got, data, "window {w} with losses");
            assert_eq!(s.outcome, Some(Outcome::Acknowledged));
            assert!(s.resends > 0);
        }
    }

    #[test]
    fn a_silent_receiver_costs_retries_then_the_transfer_is_dropped() {
        let t0 = Instant::now();
        let mut s = Sender::new(&header(), &[1; 600], Duration::from_millis(10), 2);
        assert_eq!(s.start(t0).len(), 1);
        assert!(s.on_timeout(t0).is_empty(), "before the deadline");
        let mut t = t0;
        for _ in 0..2 {
            t += Duration::from_millis(11);
            assert_eq!(s.on_timeout(t).len(), 1);
        }
        t += Duration::from_millis(11);
        assert!(s.on_timeout(t).is_empty(), "dropped without a stray ABORT");
        assert_eq!(s.outcome, Some(Outcome::TimedOut));
    }

    #[test]
    fn protocol_violations_abort_and_stop_ends() {
        let t0 = Instant::now();
        let mut s = Sender::new(&header(), &[1; 600], Duration::from_millis(10), 2);
        s.start(t0);
        let ack = SaHeader::parse(&control(&header(), rmpp_type::ACK, 0, 3, 1)).unwrap();
        assert_eq!(
            SaHeader::parse(&s.on_control(&ack, t0)[0])
                .unwrap()
                .rmpp
                .status,
            STATUS_BAD_WINDOW
        );
        let mut s = Sender::new(&header(), &[1; 600], Duration::from_millis(10), 2);
        s.start(t0);
        let ack = SaHeader::parse(&control(&header(), rmpp_type::ACK, 0, 2, 4)).unwrap();
        assert_eq!(
            SaHeader::parse(&s.on_control(&ack, t0)[0])
                .unwrap()
                .rmpp
                .status,
            STATUS_SEG_TOO_BIG
        );
        let mut s = Sender::new(&header(), &[1; 600], Duration::from_millis(10), 2);
        s.start(t0);
        let stop = SaHeader::parse(&control(&header(), rmpp_type::STOP, 0, 0, 0)).unwrap();
        assert!(s.on_control(&stop, t0).is_empty());
        assert_eq!(s.outcome, Some(Outcome::Stopped));
    }
}
