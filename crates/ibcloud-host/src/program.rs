//! Guest programs: what a VM's vCPU does, one operation at a time.
//!
//! An operation costs guest CPU and so only progresses while the vCPU runs:
//! `Compute` (a duration), `Post` (a work request; `post-cost` each, the
//! doorbell rings when it is paid), `Poll` (a busy loop on the CQ: spinning
//! time is PTime; a successful poll costs `poll-cost` and returns every
//! pending CQE), `Sleep` (the vCPU blocks) and `Done`.
//!
//! The workloads of F §6.2 are programs: [`Microbench`] (OFED-style RDMA
//! Write / Read / Send with iterations, size, depth, throttle and per-message
//! compute), [`RecvSink`] (the passive receiver of Send), [`NectereClient`]
//! and [`NectereServer`] (closed-loop request/response, server FCFS plus a
//! fixed compute time).

use crate::cq::{Cqe, Opcode};
use crate::Time;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// What a work request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WrKind {
    /// RDMA Write of `bytes` to the peer's memory.
    Write,
    /// RDMA Read of `bytes` from the peer's memory.
    Read,
    /// Send of `bytes` (consumes a receive at the peer).
    Send,
    /// Post a receive buffer.
    Recv,
}

/// A work request on one of the VM's QPs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wr {
    /// Local QP number.
    pub qp: u32,
    /// Operation.
    pub kind: WrKind,
    /// Bytes.
    pub bytes: u32,
}

/// One guest operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Burn guest CPU for this long.
    Compute(Time),
    /// Post a work request (costs `post-cost`).
    Post(Wr),
    /// Busy-poll the CQ until at least one CQE, then take all pending.
    Poll,
    /// Block the vCPU for this long.
    Sleep(Time),
    /// Finished.
    Done,
}

/// What programs report besides their operations.
#[derive(Clone, Debug, Default)]
pub struct ProgramLog {
    /// (completion time, latency) of every request (Nectere: post → reply).
    pub latencies: Vec<(Time, Time)>,
    /// Requests completed.
    pub completed: u64,
    /// Time the last request was posted (issue time, F Table 3).
    pub last_post: Time,
    /// Nectere's split of each latency (F §5.2), parallel to `latencies`
    /// for the requests that have one.
    pub parts: Vec<LatencyParts>,
}

/// One Nectere request's latency split into the three parts of F §5.2
/// (ps). They partition the client's latency, post → reply taken:
///
/// ```text
///  client post ─ WTime ─▶ request CQE written at the server
///              ─ PTime ─▶ server guest takes it, reposts its receive
///                         (and waits for earlier requests, FCFS)
///              ─ CTime ─▶ server compute (the `service` op, start → end)
///              ─ WTime ─▶ reply CQE written at the client
///              ─ PTime ─▶ client guest takes it (poll loop)
/// ```
///
/// WTime is the time the request and the reply spend with the adapters and
/// the link (post cost, WQE queue, wire, switch); PTime is the guest side
/// outside the compute: the polling loops noticing a completion (poll
/// cost, or the time a descheduled vCPU leaves a CQE unread) plus the
/// server's bookkeeping; CTime is the compute op's wall time (= `service`
/// when the server's vCPU is not descheduled during it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LatencyParts {
    /// Server compute.
    pub ctime: Time,
    /// Request and reply with the HCAs and the link.
    pub wtime: Time,
    /// Guest-side polling and bookkeeping outside the compute.
    pub ptime: Time,
}

/// What a Nectere reply carries back to its client (as Nectere's replies
/// carry the server's timestamps): when the request's CQE was written at
/// the server, when the server compute started and when it ended (= the
/// reply's post).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerStamps {
    /// The request's receive CQE was written.
    pub arrived: Time,
    /// The compute started.
    pub compute_start: Time,
    /// The compute ended and the reply was posted.
    pub compute_end: Time,
}

/// The stamps a server sends its client, in reply order (one QP pair, FCFS).
pub type StampChannel = Arc<Mutex<VecDeque<ServerStamps>>>;

/// A guest program.
pub trait Program: std::fmt::Debug + Send {
    /// The next operation, given the CQEs the previous `Poll` returned
    /// (empty after other operations).
    fn next(&mut self, now: Time, cqes: &[Cqe], log: &mut ProgramLog) -> Op;
}

/// OFED-style microbenchmark: keep `depth` requests outstanding until
/// `iterations` completed (0 = forever), with optional throttle and compute.
#[derive(Debug)]
pub struct Microbench {
    /// QP.
    pub qp: u32,
    /// Write, Read or Send.
    pub kind: WrKind,
    /// Bytes per request.
    pub bytes: u32,
    /// Requests to complete (0 = unbounded).
    pub iterations: u64,
    /// Outstanding requests.
    pub depth: u32,
    /// Minimum gap between posts.
    pub throttle: Time,
    /// Compute after each completion.
    pub compute: Time,
    /// Stop posting at this time.
    pub stop: Time,
    /// The throttle applies from this time on (a rate change mid-run).
    pub throttle_from: Time,
    posted: u64,
    outstanding: u32,
    owed_compute: u64,
    next_post_at: Time,
}

impl Microbench {
    /// A microbenchmark on `qp`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        qp: u32,
        kind: WrKind,
        bytes: u32,
        iterations: u64,
        depth: u32,
        throttle: Time,
        compute: Time,
        stop: Time,
    ) -> Self {
        Self {
            qp,
            kind,
            bytes,
            iterations,
            depth,
            throttle,
            compute,
            stop,
            throttle_from: 0,
            posted: 0,
            outstanding: 0,
            owed_compute: 0,
            next_post_at: 0,
        }
    }
}

impl Program for Microbench {
    fn next(&mut self, now: Time, cqes: &[Cqe], log: &mut ProgramLog) -> Op {
        for c in cqes {
            if c.qp == self.qp && c.opcode != Opcode::Recv {
                self.outstanding -= 1;
                log.completed += 1;
                self.owed_compute += 1;
            }
        }
        if self.owed_compute > 0 && self.compute > 0 {
            self.owed_compute -= 1;
            return Op::Compute(self.compute);
        }
        self.owed_compute = 0;
        let more = (self.iterations == 0 || self.posted < self.iterations) && now < self.stop;
        if more && self.outstanding < self.depth {
            if now < self.next_post_at {
                if self.outstanding == 0 {
                    return Op::Sleep(self.next_post_at - now);
                }
            } else {
                self.posted += 1;
                self.outstanding += 1;
                if now >= self.throttle_from {
                    self.next_post_at = now + self.throttle;
                }
                log.last_post = now;
                return Op::Post(Wr {
                    qp: self.qp,
                    kind: self.kind,
                    bytes: self.bytes,
                });
            }
        }
        if self.outstanding == 0 {
            return if more { Op::Poll } else { Op::Done };
        }
        Op::Poll
    }
}

/// Keeps `depth` receives posted on `qp` and reposts each one consumed.
#[derive(Debug)]
pub struct RecvSink {
    qp: u32,
    bytes: u32,
    to_post: u32,
}

impl RecvSink {
    /// A receiver for messages of up to `bytes`.
    pub fn new(qp: u32, bytes: u32, depth: u32) -> Self {
        Self {
            qp,
            bytes,
            to_post: depth,
        }
    }
}

impl Program for RecvSink {
    fn next(&mut self, _now: Time, cqes: &[Cqe], log: &mut ProgramLog) -> Op {
        for c in cqes {
            if c.qp == self.qp && c.opcode == Opcode::Recv {
                self.to_post += 1;
                log.completed += 1;
            }
        }
        if self.to_post > 0 {
            self.to_post -= 1;
            return Op::Post(Wr {
                qp: self.qp,
                kind: WrKind::Recv,
                bytes: self.bytes,
            });
        }
        Op::Poll
    }
}

/// Nectere client: `depth` requests in flight; each is a Send of `bytes`
/// answered by a reply; latency = reply arrival − request post.
#[derive(Debug)]
pub struct NectereClient {
    qp: u32,
    bytes: u32,
    reply: u32,
    iterations: u64,
    depth: u32,
    stop: Time,
    think: Time,
    sent: u64,
    in_flight: VecDeque<Time>,
    recvs_to_post: u32,
    next_send_at: Time,
    stamps: Option<StampChannel>,
}

/// Reply sizes that change with the request count (Memcached Gets whose
/// values alternate sizes, G Figs. 40–41): request `k` (from 0) is answered
/// with `sizes[(k / per) % sizes.len()]` bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplyCycle {
    /// Reply sizes, in order.
    pub sizes: Vec<u32>,
    /// Consecutive requests per size (at least 1).
    pub per: u64,
}

impl ReplyCycle {
    /// The reply size of request `k`.
    pub fn size(&self, k: u64) -> u32 {
        self.sizes[((k / self.per.max(1)) % self.sizes.len() as u64) as usize]
    }

    /// The largest reply (the receive buffers' size).
    pub fn max(&self) -> u32 {
        self.sizes.iter().copied().max().unwrap_or(0)
    }
}

impl NectereClient {
    /// A client on `qp`.
    pub fn new(
        qp: u32,
        bytes: u32,
        reply: u32,
        iterations: u64,
        depth: u32,
        think: Time,
        stop: Time,
    ) -> Self {
        Self {
            qp,
            bytes,
            reply,
            iterations,
            depth,
            stop,
            think,
            sent: 0,
            in_flight: VecDeque::new(),
            recvs_to_post: depth,
            next_send_at: 0,
            stamps: None,
        }
    }

    /// Reads the server's stamps from `ch` to split each latency into
    /// CTime / WTime / PTime ([`LatencyParts`], in `ProgramLog::parts`).
    pub fn with_stamps(mut self, ch: StampChannel) -> Self {
        self.stamps = Some(ch);
        self
    }
}

impl Program for NectereClient {
    fn next(&mut self, now: Time, cqes: &[Cqe], log: &mut ProgramLog) -> Op {
        for c in cqes {
            if c.qp == self.qp && c.opcode == Opcode::Recv {
                let t0 = self.in_flight.pop_front().expect("reply to a request");
                log.latencies.push((now, now - t0));
                let st = self
                    .stamps
                    .as_ref()
                    .and_then(|ch| ch.lock().expect("stamp channel").pop_front());
                if let Some(st) = st {
                    // Each interval's end is ≥ its start by causality; the
                    // saturating subtractions only guard the arithmetic.
                    let ctime = st.compute_end.saturating_sub(st.compute_start);
                    let wtime =
                        st.arrived.saturating_sub(t0) + c.written.saturating_sub(st.compute_end);
                    let ptime = (now - t0).saturating_sub(ctime + wtime);
                    log.parts.push(LatencyParts {
                        ctime,
                        wtime,
                        ptime,
                    });
                }
                log.completed += 1;
                self.recvs_to_post += 1;
            }
        }
        if self.recvs_to_post > 0 {
            self.recvs_to_post -= 1;
            return Op::Post(Wr {
                qp: self.qp,
                kind: WrKind::Recv,
                bytes: self.reply,
            });
        }
        let more = (self.iterations == 0 || self.sent < self.iterations) && now < self.stop;
        if more && (self.in_flight.len() as u32) < self.depth {
            if now < self.next_send_at {
                if self.in_flight.is_empty() {
                    return Op::Sleep(self.next_send_at - now);
                }
            } else {
                self.sent += 1;
                self.in_flight.push_back(now);
                self.next_send_at = now + self.think;
                log.last_post = now;
                return Op::Post(Wr {
                    qp: self.qp,
                    kind: WrKind::Send,
                    bytes: self.bytes,
                });
            }
        }
        if self.in_flight.is_empty() && !more {
            return Op::Done;
        }
        Op::Poll
    }
}

/// Nectere server: requests are served first come, first served; each costs
/// `service` of guest CPU, then a reply of `reply` bytes is sent.
#[derive(Debug)]
pub struct NectereServer {
    qp: u32,
    bytes: u32,
    reply: u32,
    service: Time,
    /// Queued requests: (CQE written, taken by the guest).
    queue: VecDeque<(Time, Time)>,
    recvs_to_post: u32,
    /// The compute of the head request started at this time.
    serving: Option<Time>,
    cycle: Option<ReplyCycle>,
    served: u64,
    stamps: Option<StampChannel>,
    /// Per-request compute spread: (fraction, generator).
    jitter: Option<(f64, ChaCha8Rng)>,
}

impl NectereServer {
    /// A server on `qp`.
    pub fn new(qp: u32, bytes: u32, reply: u32, service: Time, depth: u32) -> Self {
        Self {
            qp,
            bytes,
            reply,
            service,
            queue: VecDeque::new(),
            recvs_to_post: depth,
            serving: None,
            cycle: None,
            served: 0,
            stamps: None,
            jitter: None,
        }
    }

    /// Draws each request's compute uniformly from `service × (1 ± frac)`
    /// with a generator seeded by `seed` (the scenario's seed and the
    /// workload), so runs stay reproducible.
    pub fn with_jitter(mut self, frac: f64, seed: u64) -> Self {
        if frac > 0.0 {
            self.jitter = Some((frac, ChaCha8Rng::seed_from_u64(seed)));
        }
        self
    }

    /// The compute of the next request.
    fn compute(&mut self) -> Time {
        match &mut self.jitter {
            None => self.service,
            Some((frac, rng)) => {
                let u: f64 = rng.random_range(-1.0..=1.0);
                (self.service as f64 * (1.0 + *frac * u)).round() as Time
            }
        }
    }

    /// Sends each reply's [`ServerStamps`] to the client over `ch`.
    pub fn with_stamps(mut self, ch: StampChannel) -> Self {
        self.stamps = Some(ch);
        self
    }

    /// Answers request `k` with `cycle.size(k)` bytes instead of `reply`
    /// (the Memcached server: the value of the Get, after `service` of
    /// lookup compute).
    pub fn with_reply_cycle(mut self, cycle: ReplyCycle) -> Self {
        self.cycle = Some(cycle);
        self
    }
}

impl Program for NectereServer {
    fn next(&mut self, now: Time, cqes: &[Cqe], log: &mut ProgramLog) -> Op {
        for c in cqes {
            if c.qp == self.qp && c.opcode == Opcode::Recv {
                self.queue.push_back((c.written, now));
                self.recvs_to_post += 1;
            }
        }
        if let Some(start) = self.serving.take() {
            // The compute of the head request finished: reply.
            let (arrived, t0) = self.queue.pop_front().expect("served request");
            log.latencies.push((now, now - t0));
            if let Some(ch) = &self.stamps {
                ch.lock().expect("stamp channel").push_back(ServerStamps {
                    arrived,
                    compute_start: start,
                    compute_end: now,
                });
            }
            log.completed += 1;
            let bytes = match &self.cycle {
                Some(c) => c.size(self.served),
                None => self.reply,
            };
            self.served += 1;
            return Op::Post(Wr {
                qp: self.qp,
                kind: WrKind::Send,
                bytes,
            });
        }
        if self.recvs_to_post > 0 {
            self.recvs_to_post -= 1;
            return Op::Post(Wr {
                qp: self.qp,
                kind: WrKind::Recv,
                bytes: self.bytes,
            });
        }
        if !self.queue.is_empty() {
            self.serving = Some(now);
            return Op::Compute(self.compute());
        }
        Op::Poll
    }
}

/// A round-based skeleton (G's Hadoop TeraSort / MRBench and HPL; see
/// docs/host.md for each one's parameters): every round computes
/// `before` (map, DGEMM), then RDMA-Writes `messages` messages of `bytes`
/// to the peer with `depth` outstanding and `per_message` of compute after
/// each completion (merge), waits for all, computes `after` (reduce);
/// `rounds` rounds (0 = until `stop`). A round's duration is logged as its
/// latency (job run time).
#[derive(Debug)]
pub struct Rounds {
    qp: u32,
    bytes: u32,
    /// Compute at the start of a round.
    pub before: Time,
    /// Messages per round.
    pub messages: u64,
    /// Outstanding messages.
    pub depth: u32,
    /// Compute after each completion.
    pub per_message: Time,
    /// Compute at the end of a round.
    pub after: Time,
    /// Rounds (0 = until `stop`).
    pub rounds: u64,
    /// No new round starts at or after this time.
    pub stop: Time,
    round: u64,
    stage: u8,
    round_start: Time,
    posted: u64,
    done: u64,
    owed: u64,
}

impl Rounds {
    /// A skeleton on `qp` (see the fields).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        qp: u32,
        bytes: u32,
        before: Time,
        messages: u64,
        depth: u32,
        per_message: Time,
        after: Time,
        rounds: u64,
        stop: Time,
    ) -> Self {
        Self {
            qp,
            bytes,
            before,
            messages,
            depth: depth.max(1),
            per_message,
            after,
            rounds,
            stop,
            round: 0,
            stage: 0,
            round_start: 0,
            posted: 0,
            done: 0,
            owed: 0,
        }
    }
}

impl Program for Rounds {
    fn next(&mut self, now: Time, cqes: &[Cqe], log: &mut ProgramLog) -> Op {
        for c in cqes {
            if c.qp == self.qp && c.opcode != Opcode::Recv {
                self.done += 1;
                self.owed += 1;
            }
        }
        loop {
            match self.stage {
                // Start a round: compute `before`.
                0 => {
                    if (self.rounds > 0 && self.round >= self.rounds) || now >= self.stop {
                        return Op::Done;
                    }
                    self.round_start = now;
                    self.posted = 0;
                    self.done = 0;
                    self.owed = 0;
                    self.stage = 1;
                    if self.before > 0 {
                        return Op::Compute(self.before);
                    }
                }
                // Communicate: keep `depth` writes outstanding.
                1 => {
                    if self.owed > 0 && self.per_message > 0 {
                        self.owed -= 1;
                        return Op::Compute(self.per_message);
                    }
                    self.owed = 0;
                    if self.posted < self.messages && self.posted - self.done < self.depth as u64 {
                        self.posted += 1;
                        log.last_post = now;
                        return Op::Post(Wr {
                            qp: self.qp,
                            kind: WrKind::Write,
                            bytes: self.bytes,
                        });
                    }
                    if self.done < self.messages {
                        return Op::Poll;
                    }
                    self.stage = 2;
                    if self.after > 0 {
                        return Op::Compute(self.after);
                    }
                }
                // Round finished.
                _ => {
                    self.round += 1;
                    log.completed += 1;
                    log.latencies.push((now, now - self.round_start));
                    self.stage = 0;
                }
            }
        }
    }
}
