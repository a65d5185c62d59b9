//! The SM/SA service model (Paper I §III, Table V): a discrete-event
//! simulation of one SA server and closed-loop flooder instances on hosts
//! with a per-host generation ceiling, run with Paper I's Algorithm 1
//! (round 1 = the SIF alone, then every MIF adds `k` instances per round).
//!
//! - **Server**: FIFO, service time lognormal (mean `service_us` +
//!   `per_hop_us` × hops of the query's path, shape `service_sigma`), an
//!   optional bound on queued queries (`queue_limit`: queries beyond it are
//!   dropped, as a full MAD receive queue drops them), and optional
//!   *vacations* (the SM's CPU busy elsewhere: exponential gaps of mean
//!   `vacation_every_ms`, each `vacation_ms` long) that give the heavy tail
//!   Table V's low-load mean/median ratio shows.
//! - **Hosts**: each host's CPU serves its instances FIFO, `1/ceiling`
//!   seconds per query (Table IV's ceilings: SIF 440, MIF1–4 2100, MIF5 1150).
//! - **Instances**: closed loop — host CPU, then the wire (`wire_us` round
//!   trip), the server, back; a query unanswered after `timeout_ms` is
//!   given up and the instance goes on — or, with `retries` > 0, re-sent
//!   by the kernel's MAD layer up to `retries` times, the response time
//!   counted from the first send (the variant that gives Table V's skew).
//!
//! Deterministic for a seed.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// The SA server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerParams {
    /// Mean service time of a query (µs), without the per-hop part.
    pub service_us: f64,
    /// Extra service time per hop of the resolved path (µs).
    pub per_hop_us: f64,
    /// Lognormal shape of the service time (0 = deterministic).
    pub service_sigma: f64,
    /// Queries the server holds at most (queued + in service); `None` = unbounded.
    pub queue_limit: Option<usize>,
    /// Mean gap between server vacations (ms); `None` = no vacations.
    pub vacation_every_ms: Option<f64>,
    /// Length of one vacation (ms).
    pub vacation_ms: f64,
    /// Wire and driver round trip not spent in the server (µs).
    pub wire_us: f64,
}

impl ServerParams {
    /// Calibrated to Paper I's OpenSM on the 1.1 GHz Atom of a Sun DCS 36
    /// switch (Table V): saturates at ~6,500 queries/s, median 0.22 ms at
    /// low load, mean ~0.45 ms, std. dev. ~1.2 ms.
    pub fn paper_switch() -> Self {
        Self {
            service_us: 135.0,
            per_hop_us: 0.0,
            service_sigma: 0.4,
            queue_limit: Some(60),
            vacation_every_ms: Some(150.0),
            vacation_ms: 8.0,
            wire_us: 90.0,
        }
    }
}

/// One flooder host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostParams {
    /// Name (SIF, MIF1, …).
    pub name: String,
    /// Most queries/s all instances on this host can generate together.
    pub ceiling_qps: f64,
}

/// An Algorithm 1 experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentParams {
    /// The server.
    pub server: ServerParams,
    /// The SIF (index 0) and the MIFs.
    pub hosts: Vec<HostParams>,
    /// MIFs taking part (n).
    pub mifs: usize,
    /// New instances per MIF per round (k).
    pub k: usize,
    /// Rounds (m).
    pub rounds: usize,
    /// Seconds per round.
    pub round_s: f64,
    /// Query timeout (ms).
    pub timeout_ms: f64,
    /// Hops of every query's path (the mean; a testbed of one or two switches: 2).
    pub hops: f64,
    /// Seed.
    pub seed: u64,
    /// Each instance's own time between an answer and its next query (µs),
    /// outside the host's shared CPU (0 in Paper I's setup, where the host
    /// ceiling plays that role).
    #[serde(default)]
    pub think_us: f64,
    /// Retransmissions of an unanswered query by the client's kernel MAD
    /// layer (`umad_send(…, timeout_ms, retries)`): at each timeout the same
    /// query is re-sent at once, without the host CPU stage, and its
    /// response time is counted from the first send. 0 (the default) = a
    /// timed-out query is given up and not counted in the response times.
    #[serde(default)]
    pub retries: u32,
}

impl ExperimentParams {
    /// Paper I's setup: SIF 440 Q/s, MIF1–4 2100, MIF5 1150, 25 rounds of 20 s.
    pub fn paper(mifs: usize, k: usize) -> Self {
        let mut hosts = vec![HostParams {
            name: "SIF".into(),
            ceiling_qps: 440.0,
        }];
        for i in 1..=5 {
            hosts.push(HostParams {
                name: format!("MIF{i}"),
                ceiling_qps: if i == 5 { 1150.0 } else { 2100.0 },
            });
        }
        Self {
            server: ServerParams::paper_switch(),
            hosts,
            mifs: mifs.min(5),
            k,
            rounds: 25,
            round_s: 20.0,
            timeout_ms: 10.0,
            hops: 2.0,
            seed: 1,
            think_us: 0.0,
            retries: 0,
        }
    }
}

/// What one round measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundStats {
    /// Round number (1-based).
    pub round: usize,
    /// Instances running.
    pub instances: usize,
    /// SIF answers per second.
    pub sif_qps: f64,
    /// SIF mean response (ms).
    pub sif_mean_ms: f64,
    /// SIF median response (ms).
    pub sif_median_ms: f64,
    /// SIF standard deviation (ms).
    pub sif_std_ms: f64,
    /// All answers per second.
    pub total_qps: f64,
    /// Queries the server dropped per second.
    pub dropped_qps: f64,
    /// Queries that timed out per second.
    pub timeouts_qps: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Spawn(u32),
    HostDone(u32),
    Arrive { inst: u32, q: u64 },
    ServerDone,
    Response { inst: u32, q: u64 },
    Timeout { inst: u32, q: u64 },
    VacationStart,
    VacationEnd,
}

const NS: f64 = 1e9;

/// The event queue: (time in ns, sequence, event), earliest first.
type Queue = BinaryHeap<Reverse<(u64, u64, Ev)>>;

/// Runs one experiment and returns per-round statistics.
pub fn run_experiment(p: &ExperimentParams) -> Vec<RoundStats> {
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let mut heap: BinaryHeap<Reverse<(u64, u64, Ev)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |heap: &mut BinaryHeap<Reverse<(u64, u64, Ev)>>, t: f64, ev: Ev| {
        seq += 1;
        heap.push(Reverse(((t * NS) as u64, seq, ev)));
    };
    // instance → (host, outstanding query id, sent at)
    let mut inst_host: Vec<usize> = Vec::new();
    // (query id, first sent at, retransmissions so far)
    let mut waiting: Vec<Option<(u64, f64, u32)>> = Vec::new();
    let nh = p.hosts.len().max(1);
    let mut host_queue: Vec<VecDeque<u32>> = vec![VecDeque::new(); nh];
    let mut host_busy = vec![false; nh];
    let mut server_q: VecDeque<(u32, u64)> = VecDeque::new();
    let mut server_busy = false;
    let mut on_vacation = false;
    let mut next_q = 1u64;
    let end = p.rounds as f64 * p.round_s;
    let mut rounds: Vec<(Vec<f64>, u64, u64, u64)> = vec![(Vec::new(), 0, 0, 0); p.rounds.max(1)];
    let service_mean = p.server.service_us + p.server.per_hop_us * p.hops;
    let sigma = p.server.service_sigma.max(0.0);
    let mu = (service_mean.max(1e-3)).ln() - sigma * sigma / 2.0;
    let draw_service = |rng: &mut ChaCha8Rng| -> f64 {
        if sigma == 0.0 {
            return service_mean * 1e-6;
        }
        let (u1, u2): (f64, f64) = (rng.random::<f64>().max(1e-12), rng.random());
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        (mu + sigma * z).exp() * 1e-6
    };
    let round_of = |t: f64| ((t / p.round_s) as usize).min(p.rounds.saturating_sub(1));
    // Spawns: the SIF at 0; each MIF k more at the start of rounds 2..=m.
    let spawn = |heap: &mut BinaryHeap<Reverse<(u64, u64, Ev)>>,
                 t: f64,
                 host: usize,
                 inst_host: &mut Vec<usize>,
                 waiting: &mut Vec<Option<(u64, f64, u32)>>,
                 push: &mut dyn FnMut(&mut Queue, f64, Ev)| {
        let id = inst_host.len() as u32;
        inst_host.push(host);
        waiting.push(None);
        push(heap, t, Ev::Spawn(id));
    };
    spawn(&mut heap, 0.0, 0, &mut inst_host, &mut waiting, &mut push);
    for r in 1..p.rounds {
        for h in 1..=p.mifs.min(nh - 1) {
            for _ in 0..p.k {
                spawn(
                    &mut heap,
                    r as f64 * p.round_s,
                    h,
                    &mut inst_host,
                    &mut waiting,
                    &mut push,
                );
            }
        }
    }
    if let Some(every) = p.server.vacation_every_ms {
        let gap = -rng.random::<f64>().max(1e-12).ln() * every * 1e-3;
        push(&mut heap, gap, Ev::VacationStart);
    }
    let wire = p.server.wire_us * 1e-6 / 2.0;
    let timeout = p.timeout_ms * 1e-3;
    while let Some(Reverse((t, _, ev))) = heap.pop() {
        let now = t as f64 / NS;
        if now >= end {
            break;
        }
        match ev {
            Ev::Spawn(i) => {
                let h = inst_host[i as usize];
                host_queue[h].push_back(i);
                if !host_busy[h] {
                    host_busy[h] = true;
                    push(
                        &mut heap,
                        now + 1.0 / p.hosts[h].ceiling_qps.max(1e-3),
                        Ev::HostDone(h as u32),
                    );
                }
            }
            Ev::HostDone(h) => {
                let h = h as usize;
                if let Some(i) = host_queue[h].pop_front() {
                    let q = next_q;
                    next_q += 1;
                    waiting[i as usize] = Some((q, now, 0));
                    push(&mut heap, now + wire, Ev::Arrive { inst: i, q });
                    push(&mut heap, now + timeout, Ev::Timeout { inst: i, q });
                }
                if host_queue[h].is_empty() {
                    host_busy[h] = false;
                } else {
                    push(
                        &mut heap,
                        now + 1.0 / p.hosts[h].ceiling_qps.max(1e-3),
                        Ev::HostDone(h as u32),
                    );
                }
            }
            Ev::Arrive { inst, q } => {
                let held = server_q.len() + usize::from(server_busy);
                if p.server.queue_limit.is_some_and(|l| held >= l) {
                    rounds[round_of(now)].2 += 1;
                    continue;
                }
                server_q.push_back((inst, q));
                if !server_busy && !on_vacation {
                    server_busy = true;
                    push(&mut heap, now + draw_service(&mut rng), Ev::ServerDone);
                }
            }
            Ev::ServerDone => {
                server_busy = false;
                if let Some((inst, q)) = server_q.pop_front() {
                    push(&mut heap, now + wire, Ev::Response { inst, q });
                }
                if !server_q.is_empty() && !on_vacation {
                    server_busy = true;
                    push(&mut heap, now + draw_service(&mut rng), Ev::ServerDone);
                }
            }
            Ev::Response { inst, q } | Ev::Timeout { inst, q } => {
                let i = inst as usize;
                match waiting[i] {
                    Some((wq, sent, tries))
                        if wq == q && matches!(ev, Ev::Timeout { .. }) && tries < p.retries =>
                    {
                        // The kernel re-sends the same query (same TID): the
                        // first answer to any copy completes it.
                        waiting[i] = Some((wq, sent, tries + 1));
                        push(&mut heap, now + wire, Ev::Arrive { inst, q });
                        push(&mut heap, now + timeout, Ev::Timeout { inst, q });
                    }
                    Some((wq, sent, _)) if wq == q => {
                        let r = round_of(now);
                        if matches!(ev, Ev::Response { .. }) {
                            rounds[r].1 += 1;
                            if inst_host[i] == 0 {
                                rounds[r].0.push((now - sent) * 1e3);
                            }
                        } else {
                            rounds[r].3 += 1;
                        }
                        waiting[i] = None;
                        push(&mut heap, now + p.think_us.max(0.0) * 1e-6, Ev::Spawn(inst));
                    }
                    _ => {}
                }
            }
            Ev::VacationStart => {
                on_vacation = true;
                push(
                    &mut heap,
                    now + p.server.vacation_ms * 1e-3,
                    Ev::VacationEnd,
                );
            }
            Ev::VacationEnd => {
                on_vacation = false;
                if !server_busy && !server_q.is_empty() {
                    server_busy = true;
                    push(&mut heap, now + draw_service(&mut rng), Ev::ServerDone);
                }
                if let Some(every) = p.server.vacation_every_ms {
                    let gap = -rng.random::<f64>().max(1e-12).ln() * every * 1e-3;
                    push(&mut heap, now + gap, Ev::VacationStart);
                }
            }
        }
    }
    rounds
        .into_iter()
        .enumerate()
        .map(|(r, (mut lat, answered, dropped, timeouts))| {
            lat.sort_by(f64::total_cmp);
            let n = lat.len() as f64;
            let mean = if lat.is_empty() {
                0.0
            } else {
                lat.iter().sum::<f64>() / n
            };
            let median = if lat.is_empty() {
                0.0
            } else if lat.len() % 2 == 1 {
                lat[lat.len() / 2]
            } else {
                (lat[lat.len() / 2 - 1] + lat[lat.len() / 2]) / 2.0
            };
            let var = if lat.len() > 1 {
                lat.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
            } else {
                0.0
            };
            RoundStats {
                round: r + 1,
                instances: 1 + if r == 0 {
                    0
                } else {
                    r * p.k * p.mifs.min(nh - 1)
                },
                sif_qps: n / p.round_s,
                sif_mean_ms: mean,
                sif_median_ms: median,
                sif_std_ms: var.sqrt(),
                total_qps: answered as f64 / p.round_s,
                dropped_qps: dropped as f64 / p.round_s,
                timeouts_qps: timeouts as f64 / p.round_s,
            }
        })
        .collect()
}

/// Closed-loop throughput of one client keeping `window` queries outstanding
/// against `server`, each outstanding slot spending `client_us` of its own
/// between an answer and its next query, simulated for `seconds`:
/// (queries/s, median response µs).
pub fn window_throughput(
    server: &ServerParams,
    client_us: f64,
    window: usize,
    hops: f64,
    seconds: f64,
    seed: u64,
) -> (f64, f64) {
    // Instance 1 on host 0 from the start, the other window − 1 on host 1
    // from round 2 on; round 2 is measured. Hosts are no limit here.
    let host = |name: &str| HostParams {
        name: name.into(),
        ceiling_qps: 1e9,
    };
    let p = ExperimentParams {
        server: server.clone(),
        hosts: vec![host("client"), host("client-window")],
        mifs: usize::from(window > 1),
        k: window.saturating_sub(1),
        rounds: 2,
        round_s: seconds,
        timeout_ms: 1000.0,
        hops,
        seed,
        think_us: client_us,
        retries: 0,
    };
    let r = run_experiment(&p);
    let last = &r[r.len() - 1];
    (last.total_qps, last.sif_median_ms * 1e3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sif_gets_its_ceiling_minus_the_response_time() {
        let mut p = ExperimentParams::paper(0, 0);
        p.rounds = 1;
        let r = run_experiment(&p);
        assert_eq!(r.len(), 1);
        // Period = 1/440 s + response; Table V's round 1: 396–417 Q/s.
        assert!(r[0].sif_qps > 330.0 && r[0].sif_qps < 440.0, "{:?}", r[0]);
        assert!(
            r[0].sif_median_ms > 0.15 && r[0].sif_median_ms < 0.35,
            "{:?}",
            r[0]
        );
    }

    #[test]
    fn heavy_load_saturates_the_server_and_starves_the_sif() {
        let mut p = ExperimentParams::paper(5, 8);
        p.rounds = 8;
        p.round_s = 5.0;
        let r = run_experiment(&p);
        let last = r.last().unwrap();
        assert!(
            last.total_qps > 5000.0 && last.total_qps < 7500.0,
            "{last:?}"
        );
        assert!(last.sif_qps < r[0].sif_qps / 2.0, "{last:?}");
    }

    #[test]
    fn path_length_slows_the_server() {
        let mut s = ServerParams::paper_switch();
        s.vacation_every_ms = None;
        s.queue_limit = None;
        s.per_hop_us = 50.0;
        let (short, _) = window_throughput(&s, 1.0, 16, 2.0, 2.0, 1);
        let (long, _) = window_throughput(&s, 1.0, 16, 6.0, 2.0, 1);
        assert!(long < short * 0.75, "{short} {long}");
    }

    #[test]
    fn kernel_retries_skew_the_response_times_under_load() {
        // Without retries a full bounded FIFO gives every answered SIF query
        // the same wait (median = mean); with the kernel re-sending dropped
        // queries inside the measured time, the dropped ones form a tail.
        let run = |retries: u32| {
            let mut p = ExperimentParams::paper(5, 8);
            p.rounds = 6;
            p.round_s = 2.0;
            p.server.queue_limit = Some(30);
            p.retries = retries;
            run_experiment(&p).last().unwrap().clone()
        };
        let (plain, retried) = (run(0), run(3));
        assert!(plain.sif_median_ms > 0.9 * plain.sif_mean_ms, "{plain:?}");
        assert!(
            retried.sif_median_ms < 0.7 * retried.sif_mean_ms,
            "{retried:?}"
        );
        assert!(
            retried.sif_std_ms > 0.5 * retried.sif_mean_ms,
            "{retried:?}"
        );
    }

    #[test]
    fn deterministic() {
        let mut p = ExperimentParams::paper(2, 2);
        p.rounds = 3;
        p.round_s = 2.0;
        assert_eq!(run_experiment(&p), run_experiment(&p));
    }
}
