//! Reliable SMP exchange: every request gets a fresh transaction id, at most
//! `window` are outstanding, a request unanswered within `timeout` is sent
//! again up to `retries` times and then reported as a [`SmError::Timeout`]
//! (never waited on forever). Every send is counted by kind and may be
//! logged as one JSON line (kind, target, modifier — the LFT block — try).
//!
//! Requests that arrive for the SM itself while it waits (SMInfo queries of
//! tools or other SMs, traps) are answered or recorded here, so a long
//! programming phase never leaves them unanswered.

use crate::error::SmError;
use crate::transport::{Received, Transport};
use crate::wire::{attr, smp, Route, SmInfoRepr, SmpRepr};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Write;
use std::time::{Duration, Instant};

/// Timeouts, retries and window.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Reliability {
    /// Time to wait for one answer.
    pub timeout: Duration,
    /// Extra sends after the first (OpenSM's `transaction_retries` is 3).
    pub retries: u32,
    /// Most SMPs outstanding at once (OpenSM's `max_wire_smps` is 4).
    pub window: usize,
}

impl Default for Reliability {
    fn default() -> Self {
        Self {
            timeout: Duration::from_millis(200),
            retries: 3,
            window: 4,
        }
    }
}

/// One SMP to send.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// SubnGet or SubnSet.
    pub method: u8,
    /// Attribute.
    pub attr_id: u16,
    /// Attribute modifier (port number, LFT block, …).
    pub attr_mod: u32,
    /// Where to.
    pub route: Route,
    /// Attribute data of a Set.
    pub data: [u8; 64],
}

impl Request {
    /// A SubnGet.
    pub fn get(attr_id: u16, attr_mod: u32, route: Route) -> Self {
        Self {
            method: smp::METHOD_GET,
            attr_id,
            attr_mod,
            route,
            data: [0; 64],
        }
    }
    /// A SubnSet.
    pub fn set(attr_id: u16, attr_mod: u32, route: Route, data: [u8; 64]) -> Self {
        Self {
            method: smp::METHOD_SET,
            attr_id,
            attr_mod,
            route,
            data,
        }
    }
    /// `Get NodeInfo` style label.
    pub fn kind(&self) -> String {
        let m = if self.method == smp::METHOD_SET {
            "Set"
        } else {
            "Get"
        };
        format!("{m} {}", attr::name(self.attr_id))
    }
}

/// What was sent and what came back, since the SM started.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Counters {
    /// SMPs sent (retries included), by kind (`Set LinearForwardingTable`, …).
    pub sent: BTreeMap<String, u64>,
    /// All SMPs sent.
    pub total_sent: u64,
    /// Resends after a timeout.
    pub retries: u64,
    /// Requests given up after every retry.
    pub timeouts: u64,
    /// Answers with a non-zero MAD status.
    pub status_errors: u64,
    /// Answers to a request already answered or given up.
    pub late: u64,
    /// MADs that did not parse.
    pub malformed: u64,
    /// Traps received.
    pub traps: u64,
    /// SMInfo queries answered.
    pub sminfo_answered: u64,
    /// SA requests received.
    pub sa_requests: u64,
    /// SA answers sent.
    pub sa_answered: u64,
}

#[derive(Serialize)]
struct LogLine<'a> {
    t_us: u128,
    kind: String,
    target: String,
    attr_mod: u32,
    attempt: u32,
    op: &'a str,
}

struct InFlight {
    idx: usize,
    deadline: Instant,
    attempt: u32,
}

/// The SM's SMP engine over a transport.
pub struct Mads<T: Transport> {
    transport: T,
    /// Reliability settings.
    pub reliability: Reliability,
    next_tid: u32,
    /// Counters.
    pub counters: Counters,
    log: Option<Box<dyn Write + Send>>,
    started: Instant,
    /// What the SM answers to SMInfo queries (None: not answered).
    pub sm_info: Option<SmInfoRepr>,
    /// Traps received and not yet handled (trap number, issuer LID).
    pub pending_traps: Vec<(u16, u16)>,
    /// SMInfo of other SMs that queried us (their GUIDs).
    pub other_sms: Vec<u64>,
    /// Answers SA requests (set by the SM once the subnet is routed).
    pub sa: Option<crate::sa::SaServer>,
}

impl<T: Transport> std::fmt::Debug for Mads<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mads")
            .field("reliability", &self.reliability)
            .field("counters", &self.counters)
            .finish()
    }
}

impl<T: Transport> Mads<T> {
    /// An engine over `transport`.
    pub fn new(transport: T, reliability: Reliability) -> Self {
        Self {
            transport,
            reliability,
            next_tid: 1,
            counters: Counters::default(),
            log: None,
            started: Instant::now(),
            sm_info: None,
            pending_traps: Vec::new(),
            other_sms: Vec::new(),
            sa: None,
        }
    }

    /// Logs every send as a JSON line to `out`.
    pub fn set_log(&mut self, out: Box<dyn Write + Send>) {
        self.log = Some(out);
    }

    /// The transport.
    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// The transport, mutably.
    pub fn transport_mut(&mut self) -> &mut T {
        &mut self.transport
    }

    fn send_one(&mut self, req: &Request, attempt: u32) -> Result<u32, SmError> {
        let tid = self.next_tid;
        // Only the low 32 bits are ours: umad2sim puts its agent id in bits
        // 32..48 and ibsim its client id in 48..64.
        self.next_tid = self.next_tid.wrapping_add(1).max(1);
        let mut r = SmpRepr::request(req.method, req.attr_id, req.attr_mod, req.route.clone());
        r.tid = tid as u64;
        r.data = req.data;
        let bytes = r.to_bytes()?;
        self.transport
            .send(&bytes, &req.route, self.reliability.timeout)?;
        let kind = req.kind();
        if let Some(log) = self.log.as_mut() {
            let line = LogLine {
                t_us: self.started.elapsed().as_micros(),
                kind: kind.clone(),
                target: req.route.label(),
                attr_mod: req.attr_mod,
                attempt,
                op: "send",
            };
            if let Ok(s) = serde_json::to_string(&line) {
                let _ = writeln!(log, "{s}");
            }
        }
        *self.counters.sent.entry(kind).or_default() += 1;
        self.counters.total_sent += 1;
        if attempt > 0 {
            self.counters.retries += 1;
        }
        Ok(tid)
    }

    /// Sends every request (at most `window` outstanding) and returns the
    /// answers in request order: the response SMP, or why there is none.
    pub fn run(&mut self, reqs: &[Request]) -> Vec<Result<SmpRepr, SmError>> {
        let mut out: Vec<Option<Result<SmpRepr, SmError>>> =
            (0..reqs.len()).map(|_| None).collect();
        let mut queue: VecDeque<usize> = (0..reqs.len()).collect();
        let mut flying: HashMap<u32, InFlight> = HashMap::new();
        let rel = self.reliability;
        loop {
            while flying.len() < rel.window.max(1) {
                let Some(idx) = queue.pop_front() else { break };
                match self.send_one(&reqs[idx], 0) {
                    Ok(tid) => {
                        flying.insert(
                            tid,
                            InFlight {
                                idx,
                                deadline: Instant::now() + rel.timeout,
                                attempt: 0,
                            },
                        );
                    }
                    Err(e) => out[idx] = Some(Err(e)),
                }
            }
            if flying.is_empty() {
                break;
            }
            let now = Instant::now();
            let next = flying.values().map(|f| f.deadline).min().unwrap_or(now);
            let wait = next.saturating_duration_since(now);
            if let Some(got) = self.transport.recv(wait) {
                if !self.serve_sa(&got) {
                    self.receive(&got.mad, got.slid, reqs, &mut flying, &mut out);
                }
                continue;
            }
            // Deadlines passed: resend or give up.
            let now = Instant::now();
            let expired: Vec<u32> = flying
                .iter()
                .filter(|(_, f)| f.deadline <= now)
                .map(|(&t, _)| t)
                .collect();
            for tid in expired {
                let Some(f) = flying.remove(&tid) else {
                    continue;
                };
                let req = &reqs[f.idx];
                if f.attempt < rel.retries {
                    match self.send_one(req, f.attempt + 1) {
                        Ok(t) => {
                            flying.insert(
                                t,
                                InFlight {
                                    idx: f.idx,
                                    deadline: Instant::now() + rel.timeout,
                                    attempt: f.attempt + 1,
                                },
                            );
                        }
                        Err(e) => out[f.idx] = Some(Err(e)),
                    }
                } else {
                    self.counters.timeouts += 1;
                    out[f.idx] = Some(Err(SmError::Timeout {
                        attr: attr::name(req.attr_id),
                        target: req.route.label(),
                        tries: f.attempt + 1,
                        timeout: rel.timeout,
                    }));
                }
            }
        }
        out.into_iter()
            .map(|o| o.unwrap_or_else(|| Err(SmError::Refused("request never sent".into()))))
            .collect()
    }

    fn receive(
        &mut self,
        bytes: &[u8; 256],
        slid: u16,
        reqs: &[Request],
        flying: &mut HashMap<u32, InFlight>,
        out: &mut [Option<Result<SmpRepr, SmError>>],
    ) {
        let smp = match SmpRepr::parse_bytes(bytes) {
            Ok(s) => s,
            Err(_) => {
                self.counters.malformed += 1;
                return;
            }
        };
        if !smp.is_response() {
            self.unsolicited(&smp, slid);
            return;
        }
        let tid = smp.tid as u32;
        let Some(f) = flying.remove(&tid) else {
            self.counters.late += 1;
            return;
        };
        let req = &reqs[f.idx];
        if smp.attr_id != req.attr_id || smp.attr_mod != req.attr_mod {
            self.counters.malformed += 1;
            out[f.idx] = Some(Err(SmError::Wire(crate::WireError::Malformed {
                what: "SMP",
                problem: format!(
                    "answer to {} {} carries attribute 0x{:04x}/{}",
                    req.kind(),
                    req.route.label(),
                    smp.attr_id,
                    smp.attr_mod
                ),
            })));
            return;
        }
        if smp.status != 0 {
            self.counters.status_errors += 1;
            out[f.idx] = Some(Err(SmError::Status {
                attr: attr::name(req.attr_id),
                target: req.route.label(),
                status: smp.status,
            }));
            return;
        }
        out[f.idx] = Some(Ok(smp));
    }

    /// An SA MAD (class 0x03): a request or an RMPP ACK, handed to the SA
    /// server, if any; its overdue RMPP windows are resent on the way.
    /// Returns whether the MAD was an SA MAD.
    fn serve_sa(&mut self, got: &Received) -> bool {
        if got.mad[1] != 0x03 {
            return false;
        }
        let request = got.mad[3] & 0x80 == 0;
        if request {
            self.counters.sa_requests += 1;
        }
        let Some(sa) = self.sa.as_mut() else {
            return true;
        };
        let now = Instant::now();
        let mut out = sa.on_mad(&got.mad, got.slid, got.sqp, now);
        out.extend(sa.on_timer(now));
        let mut sent = false;
        for o in out {
            sent |= self.transport.send_gsi(o.bytes(), o.dlid, o.dqp).is_ok();
        }
        if request && sent {
            self.counters.sa_answered += 1;
        }
        true
    }

    /// Resends the SA's overdue RMPP windows.
    fn sa_timers(&mut self) {
        let Some(sa) = self.sa.as_mut() else { return };
        for o in sa.on_timer(Instant::now()) {
            let _ = self.transport.send_gsi(o.bytes(), o.dlid, o.dqp);
        }
    }

    /// Requests addressed to the SM: answer SMInfo Get, record traps.
    fn unsolicited(&mut self, smp: &SmpRepr, slid: u16) {
        // A LID-routed request is answered to the LID it came from.
        let back = match &smp.route {
            Route::Lid(_) => Route::Lid(slid),
            r => r.clone(),
        };
        match (smp.method, smp.attr_id) {
            (smp::METHOD_GET, attr::SM_INFO) => {
                let Some(mut info) = self.sm_info.clone() else {
                    return;
                };
                // As OpenSM does, ActCount is the number of SMPs sent so far.
                info.act_count = self.counters.total_sent as u32;
                let mut resp = smp.clone();
                resp.method = smp::METHOD_GET_RESP;
                resp.returning = true;
                info.emit(&mut resp.data);
                if let Ok(b) = resp.to_bytes() {
                    if self.transport.send(&b, &back, Duration::ZERO).is_ok() {
                        self.counters.sminfo_answered += 1;
                    }
                }
            }
            (smp::METHOD_SET, attr::SM_INFO) => {
                if let Ok(other) = SmInfoRepr::parse(&smp.data) {
                    self.other_sms.push(other.guid);
                }
            }
            (smp::METHOD_TRAP, attr::NOTICE) => {
                self.counters.traps += 1;
                let trap_num = u16::from_be_bytes([smp.data[4], smp.data[5]]);
                let issuer = u16::from_be_bytes([smp.data[6], smp.data[7]]);
                self.pending_traps.push((trap_num, issuer));
                let mut resp = smp.clone();
                resp.method = smp::METHOD_TRAP_REPRESS;
                if let Ok(b) = resp.to_bytes() {
                    let _ = self.transport.send(&b, &back, Duration::ZERO);
                }
            }
            _ => {}
        }
    }

    /// Waits up to `timeout` for requests addressed to the SM (between
    /// sweeps), waking for the SA's RMPP deadlines.
    pub fn idle(&mut self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            let now = Instant::now();
            let left = deadline.saturating_duration_since(now);
            if left.is_zero() {
                return;
            }
            let sa_due = self
                .sa
                .as_ref()
                .and_then(|s| s.next_deadline())
                .map(|d| d.saturating_duration_since(now));
            let wait = sa_due.map_or(left, |d| d.min(left));
            match self.transport.recv(wait) {
                Some(got) if self.serve_sa(&got) => {}
                Some(got) => match SmpRepr::parse_bytes(&got.mad) {
                    Ok(s) if !s.is_response() => self.unsolicited(&s, got.slid),
                    Ok(_) => self.counters.late += 1,
                    Err(_) => self.counters.malformed += 1,
                },
                None if sa_due.is_some_and(|d| d < left) => self.sa_timers(),
                None => return,
            }
        }
    }
}
