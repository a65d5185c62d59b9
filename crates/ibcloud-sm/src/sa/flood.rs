//! The SA flooder (Paper I's SAF) in Rust: SubnAdmGet(PathRecord) queries
//! with `window` outstanding, every answer checked against the expected
//! (SL, MTU, rate). It used to be a Python loop over ctypes, which cost
//! ~60–100 µs of CPU per query and capped a flood of OpenSM on ibsim at
//! ~10 k queries/s whatever the window (issue 19); here a query costs a
//! send, a receive and a parse.
//!
//! Counts, never crashes: answers that do not parse (`malformed`), whose
//! TID is not outstanding (`unmatched`), whose status is non-zero
//! (`status_errors`), whose (SLID, DLID, SL, MTU, rate) differ
//! (`mismatched`), requests unanswered within the timeout (`timeouts`) and
//! refused sends (`send_errors`).

use crate::error::SmError;
use crate::umad::SaClientPort;
use ibcloud_sa::wire::{SaMad, SaMadRepr, METHOD_GET_RESP};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Where the flooder sends and receives SA MADs.
pub trait SaPort {
    /// Sends one request to the SA at `dlid`.
    fn send(&mut self, mad: &[u8; 256], dlid: u16) -> Result<(), SmError>;
    /// Waits up to `timeout` for one MAD: (umad status, bytes).
    fn recv(&mut self, timeout: Duration) -> Option<(i32, [u8; 256])>;
}

impl SaPort for SaClientPort {
    fn send(&mut self, mad: &[u8; 256], dlid: u16) -> Result<(), SmError> {
        SaClientPort::send(self, mad, dlid, 0)
    }

    fn recv(&mut self, timeout: Duration) -> Option<(i32, [u8; 256])> {
        SaClientPort::recv(self, timeout.as_millis().min(i32::MAX as u128) as i32)
    }
}

/// What to flood.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FloodSpec {
    /// (SLID, DLID) pairs to query.
    pub pairs: Vec<(u16, u16)>,
    /// Expected (SLID, DLID, SL, MTU code, rate code) per pair.
    #[serde(default)]
    pub expected: Vec<(u16, u16, u8, u8, u8)>,
    /// Queries outstanding.
    #[serde(default = "one")]
    pub window: usize,
    /// Seconds to flood.
    #[serde(default = "five")]
    pub duration: f64,
    /// Per-query timeout, ms.
    #[serde(default = "thousand")]
    pub timeout_ms: u64,
    /// The SA's LID (None: the port's SM LID).
    #[serde(default)]
    pub sm_lid: Option<u16>,
    /// Seed of the pair choice.
    #[serde(default = "seed1")]
    pub seed: u64,
    /// Draw pairs at random (else cycle through them).
    #[serde(default = "yes")]
    pub random: bool,
    /// Stop after this many queries.
    #[serde(default)]
    pub max_queries: Option<u64>,
    /// Window of each round (Paper I's Algorithm 1); overrides window and duration.
    #[serde(default)]
    pub schedule: Option<Vec<usize>>,
    /// Length of a round, seconds.
    #[serde(default = "twenty")]
    pub round_s: f64,
}

fn one() -> usize {
    1
}
fn five() -> f64 {
    5.0
}
fn thousand() -> u64 {
    1000
}
fn seed1() -> u64 {
    1
}
fn yes() -> bool {
    true
}
fn twenty() -> f64 {
    20.0
}

/// What one flood did.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FloodStats {
    /// The largest window used.
    pub window: usize,
    /// Seconds of the measured window (before the drain).
    pub duration: f64,
    /// Requests sent.
    pub sent: u64,
    /// Answers to outstanding requests.
    pub answered: u64,
    /// Answers equal to the expectation.
    pub valid: u64,
    /// Answers that differ from the expectation.
    pub mismatched: u64,
    /// Answers that do not parse.
    pub malformed: u64,
    /// Answers to nothing outstanding.
    pub unmatched: u64,
    /// Answers with a non-zero MAD status.
    pub status_errors: u64,
    /// Requests unanswered within the timeout.
    pub timeouts: u64,
    /// Sends libibumad refused.
    pub send_errors: u64,
    /// Answers carrying Paper I's caching flag.
    pub caching_flag: u64,
    /// Latency of every answer, µs.
    pub latencies_us: Vec<f64>,
    /// Up to ten mismatches, described.
    pub examples: Vec<String>,
    /// The SA's LID.
    pub sm_lid: u16,
    /// Answers within the measured window (the rate's numerator).
    pub answered_in_window: u64,
    /// Latencies per round of a schedule.
    pub round_latencies_us: Vec<Vec<f64>>,
}

/// SplitMix64: a small deterministic generator for the pair choice.
#[derive(Debug, Clone)]
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Floods the SA at `sm_lid` through `port`.
pub fn flood<P: SaPort>(port: &mut P, spec: &FloodSpec, sm_lid: u16) -> Result<FloodStats, String> {
    if spec.pairs.is_empty() {
        return Err("no (SLID, DLID) pairs to query".into());
    }
    let (window, duration) = match &spec.schedule {
        Some(s) => {
            if s.is_empty() || spec.round_s <= 0.0 {
                return Err("a schedule needs rounds and a positive round length".into());
            }
            (*s.iter().max().unwrap_or(&0), s.len() as f64 * spec.round_s)
        }
        None => (spec.window, spec.duration),
    };
    if window < 1 {
        return Err("window must be at least 1".into());
    }
    if !(duration.is_finite() && duration >= 0.0) {
        return Err(format!("duration {duration} is not a non-negative number"));
    }
    if sm_lid == 0 {
        return Err("no SM: the port knows no SM LID (is a subnet manager running?)".into());
    }
    let expected: HashMap<(u16, u16), (u8, u8, u8)> = spec
        .expected
        .iter()
        .map(|&(s, d, sl, mtu, rate)| ((s, d), (sl, mtu, rate)))
        .collect();
    let mut st = FloodStats {
        window,
        sm_lid,
        round_latencies_us: vec![Vec::new(); spec.schedule.as_ref().map_or(0, Vec::len)],
        ..FloodStats::default()
    };
    let timeout = Duration::from_millis(spec.timeout_ms.max(1));
    let mut rng = SplitMix(spec.seed);
    let mut outstanding: HashMap<u32, (Instant, usize)> = HashMap::with_capacity(window * 2);
    let mut tid: u32 = 0;
    let mut idx = 0usize;
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(duration);
    let round = Duration::from_secs_f64(spec.round_s.max(1e-9));
    let mut next_expiry = start + timeout;
    let mut req = [0u8; 256];
    let poll = timeout.min(Duration::from_millis(100));

    let take = |st: &mut FloodStats,
                outstanding: &mut HashMap<u32, (Instant, usize)>,
                status: i32,
                mad: &[u8; 256],
                t: Instant| {
        let parsed = SaMad::new_checked(&mad[..]).and_then(|m| SaMadRepr::parse(&m));
        let Ok(r) = parsed else {
            st.malformed += 1;
            return;
        };
        let entry = outstanding.remove(&(r.tid as u32));
        if status != 0 {
            if entry.is_some() {
                st.timeouts += 1;
            }
            return;
        }
        let Some((sent_at, pi)) = entry else {
            st.unmatched += 1;
            return;
        };
        if r.method != METHOD_GET_RESP {
            st.unmatched += 1;
            return;
        }
        let us = t.duration_since(sent_at).as_secs_f64() * 1e6;
        st.answered += 1;
        st.latencies_us.push(us);
        if !st.round_latencies_us.is_empty() {
            let k = (t.duration_since(start).as_secs_f64() / round.as_secs_f64()) as usize;
            let last = st.round_latencies_us.len() - 1;
            st.round_latencies_us[k.min(last)].push(us);
        }
        if r.status != 0 {
            st.status_errors += 1;
            return;
        }
        let p = r.record;
        st.caching_flag += u64::from(p.caching);
        let pair = spec.pairs[pi];
        let want = expected.get(&pair);
        if (p.slid, p.dlid) == pair && want.is_none_or(|&w| w == (p.sl, p.mtu, p.rate)) {
            st.valid += 1;
        } else {
            st.mismatched += 1;
            if st.examples.len() < 10 {
                st.examples.push(format!(
                    "{pair:?}: got slid={} dlid={} sl={} mtu={} rate={}, expected {want:?}",
                    p.slid, p.dlid, p.sl, p.mtu, p.rate
                ));
            }
        }
    };

    loop {
        let now = Instant::now();
        if now >= end || spec.max_queries.is_some_and(|m| st.sent >= m) {
            break;
        }
        let w = match &spec.schedule {
            Some(s) => {
                s[((now.duration_since(start).as_secs_f64() / round.as_secs_f64()) as usize)
                    .min(s.len() - 1)]
            }
            None => window,
        };
        while outstanding.len() < w && spec.max_queries.is_none_or(|m| st.sent < m) {
            let pi = if spec.random {
                (rng.next() % spec.pairs.len() as u64) as usize
            } else {
                idx = (idx + 1) % spec.pairs.len();
                idx
            };
            tid = tid.wrapping_add(1);
            let (s, d) = spec.pairs[pi];
            SaMadRepr::get_path(u64::from(tid), s, d)
                .emit(&mut req)
                .map_err(|e| e.to_string())?;
            if port.send(&req, sm_lid).is_err() {
                st.send_errors += 1;
                break;
            }
            outstanding.insert(tid, (Instant::now(), pi));
            st.sent += 1;
        }
        let wait = if w == 0 {
            // An idle round of a schedule.
            poll.min(end.saturating_duration_since(now))
        } else {
            poll
        };
        if let Some((status, mad)) = port.recv(wait) {
            take(&mut st, &mut outstanding, status, &mad, Instant::now());
        }
        let now = Instant::now();
        if now >= next_expiry {
            expire(&mut st, &mut outstanding, now, timeout);
            next_expiry = now + timeout / 4;
        }
    }
    st.duration = start.elapsed().as_secs_f64();
    st.answered_in_window = st.answered;
    // Drain: the last answers are checked but not counted in the rate.
    let drain_end = Instant::now() + timeout + poll;
    while !outstanding.is_empty() && Instant::now() < drain_end {
        if let Some((status, mad)) = port.recv(poll) {
            take(&mut st, &mut outstanding, status, &mad, Instant::now());
        }
        expire(&mut st, &mut outstanding, Instant::now(), timeout);
    }
    st.timeouts += outstanding.len() as u64;
    Ok(st)
}

fn expire(
    st: &mut FloodStats,
    outstanding: &mut HashMap<u32, (Instant, usize)>,
    now: Instant,
    timeout: Duration,
) {
    let before = outstanding.len();
    outstanding.retain(|_, (sent, _)| now.duration_since(*sent) <= timeout);
    st.timeouts += (before - outstanding.len()) as u64;
}

/// SubnAdmGetTable through the first (or the named) port with libibumad,
/// RMPP done here ([`super::client::get_table`]).
#[allow(clippy::too_many_arguments)]
pub fn get_table_umad(
    ca: Option<&str>,
    port: u32,
    sa_lid: Option<u16>,
    attr_id: u16,
    comp_mask: u64,
    template: &[u8],
    window: u32,
    timeout: Duration,
) -> Result<super::client::Table, String> {
    let mut p = SaClientPort::open(ca, port).map_err(|e| e.to_string())?;
    let sm = sa_lid.unwrap_or(p.port.sm_lid);
    let tid = u64::from(std::process::id()) << 8 | 1;
    super::client::get_table(
        &mut p, sm, attr_id, comp_mask, template, tid, window, timeout,
    )
}

/// Floods through the first (or the named) port with libibumad.
pub fn flood_umad(spec: &FloodSpec, ca: Option<&str>, port: u32) -> Result<FloodStats, String> {
    let mut p = SaClientPort::open(ca, port).map_err(|e| e.to_string())?;
    let sm = spec.sm_lid.unwrap_or(p.port.sm_lid);
    flood(&mut p, spec, sm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sa::{SaServer, SaService};
    use ibcloud_fabric::generate;
    use ibcloud_fabric::lids::{assign_lids, LidOptions};
    use std::collections::VecDeque;

    /// The SA in memory: every request answered at once by `SaServer`.
    struct Loopback {
        server: SaServer,
        queue: VecDeque<[u8; 256]>,
        corrupt_every: u64,
        n: u64,
    }

    impl SaPort for Loopback {
        fn send(&mut self, mad: &[u8; 256], _dlid: u16) -> Result<(), SmError> {
            self.n += 1;
            for o in self.server.on_mad(mad, 1, 1, Instant::now()) {
                let mut m = o.mad;
                if self.corrupt_every > 0 && self.n.is_multiple_of(self.corrupt_every) {
                    m[0] = 9; // not a MAD any more
                }
                self.queue.push_back(m);
            }
            Ok(())
        }

        fn recv(&mut self, _timeout: Duration) -> Option<(i32, [u8; 256])> {
            self.queue.pop_front().map(|m| (0, m))
        }
    }

    fn loopback(corrupt_every: u64) -> (Loopback, Vec<(u16, u16)>) {
        let mut f = generate::preset("4-ary-2-full").unwrap().build().unwrap();
        assign_lids(&mut f, &LidOptions::default()).unwrap();
        let r = ibcloud_routing::registry::engine("minhop", &Default::default())
            .unwrap()
            .route(&f)
            .unwrap();
        let lids: Vec<u16> = f
            .iter_nodes()
            .filter(|(_, n)| !n.is_switch())
            .filter_map(|(id, _)| f.port(ibcloud_fabric::PortRef::new(id, 1)).map(|p| p.lid.0))
            .collect();
        let pairs = lids
            .iter()
            .flat_map(|&a| lids.iter().map(move |&b| (a, b)))
            .collect();
        let server = SaServer::new(SaService::new(f, r.tables, None, true));
        (
            Loopback {
                server,
                queue: VecDeque::new(),
                corrupt_every,
                n: 0,
            },
            pairs,
        )
    }

    #[test]
    fn floods_the_in_memory_sa_and_checks_every_answer() {
        let (mut lb, pairs) = loopback(0);
        let spec = FloodSpec {
            pairs,
            expected: Vec::new(),
            window: 8,
            duration: 60.0,
            timeout_ms: 1000,
            sm_lid: None,
            seed: 3,
            random: true,
            max_queries: Some(500),
            schedule: None,
            round_s: 20.0,
        };
        let st = flood(&mut lb, &spec, 1).unwrap();
        assert_eq!((st.sent, st.answered, st.valid), (500, 500, 500));
        assert_eq!(st.caching_flag, 500);
        assert_eq!(st.timeouts + st.malformed + st.unmatched + st.mismatched, 0);
    }

    #[test]
    fn counts_malformed_answers_and_their_timeouts_without_failing() {
        let (mut lb, pairs) = loopback(10);
        let spec = FloodSpec {
            pairs,
            expected: vec![(1, 1, 9, 9, 9)],
            window: 4,
            duration: 60.0,
            timeout_ms: 1,
            sm_lid: None,
            seed: 1,
            random: false,
            max_queries: Some(100),
            schedule: None,
            round_s: 20.0,
        };
        let st = flood(&mut lb, &spec, 1).unwrap();
        assert_eq!(st.malformed, 10);
        assert_eq!(
            st.answered + st.timeouts,
            100,
            "each corrupted answer's request times out"
        );
        assert!(flood(
            &mut lb,
            &FloodSpec {
                pairs: vec![],
                ..spec.clone()
            },
            1
        )
        .is_err());
        assert!(flood(
            &mut lb,
            &FloodSpec {
                window: 0,
                ..spec.clone()
            },
            1
        )
        .is_err());
        assert!(flood(&mut lb, &spec, 0).is_err());
    }
}
