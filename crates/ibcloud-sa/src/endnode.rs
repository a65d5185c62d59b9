//! The end-node model of Paper I §IV (Figs. 3–7): one RDS connection
//! between a client and a server VM, the server live-migrating, every SA
//! PathRecord query counted.
//!
//! - **RDS**: one connection per node pair; a dropped connection makes *both*
//!   sides reconnect after a random backoff (uniform in `[0, cur)`, `cur`
//!   doubling from `backoff_min` to `backoff_max`, reset on success); every
//!   attempt resolves the path (an SA query, or a cache hit) then sends a CM
//!   REQ; a node with its own REQ outstanding *rejects* incoming REQs.
//! - **CM**: a REQ nobody answers is retransmitted every
//!   `RESP = 4.096 µs · (2·2^PLT + 2^RTV)` (6.44 s for PLT 18, RTV 20) and
//!   given up after 15 retries (96.6 s): `RDMA_CM_EVENT_UNREACHABLE`, after
//!   which IPoIB re-resolves the peer's GID (ARP) and an SA query follows.
//! - **Migration** (server): detach starts (the connection drops, the
//!   server's VF rejects REQs until the detach completes), the VM is
//!   unreachable while it migrates, the VF is attached at the destination.
//!   [`AddressMode`] says what the VM's addresses do: Shared Port changes
//!   LID and GID; LIDtracker and the vSwitch architecture keep both; a
//!   heterogeneous vSwitch migration keeps them but changes the path's rate.
//! - **Cache**: Paper I's Algorithm 2 ([`crate::cache::PathCache`], keyed by
//!   DGID), with optional invalidation (beyond the paper): an SM notice on
//!   path change, or a versioned record (a REQ built from a stale version is
//!   rejected with the current version, which drops the entry).
//!
//! Deterministic: a seed fixes every backoff draw.

use crate::cache::{Lookup, PathCache};
use crate::wire::PathRecordRepr;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// CM response timeout in seconds for a PacketLifeTime and a ResponseTimeValue.
///
/// ```
/// let t = ibcloud_sa::endnode::cm_response_timeout(18, 20);
/// assert!((t - 6.442).abs() < 0.001);
/// assert!((t * 15.0 - 96.6).abs() < 0.1);
/// ```
pub fn cm_response_timeout(plt: u32, rtv: u32) -> f64 {
    4.096e-6 * (2.0 * f64::from(1u32 << plt.min(31)) + f64::from(1u32 << rtv.min(31)))
}

/// What happens to the migrating VM's addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AddressMode {
    /// Shared Port SR-IOV: new LID, vGUID and GID at the destination (Fig. 5).
    SharedPort,
    /// LIDtracker: LID, vGUID and GID move with the VM (Figs. 6–7).
    LidTracker,
    /// vSwitch: addresses move with the VM; the path may change speed.
    VSwitch,
    /// The GID moves with the VM but the LID does not (vGUID migrated, no
    /// LIDtracker): a DGID-keyed cache then holds a stale LID.
    GidOnly,
}

/// How a cache learns that a cached record went stale (beyond the paper).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Invalidation {
    /// Paper I: entries never expire.
    None,
    /// The SM sends every node a notice when a path's characteristics or
    /// LIDs change; the entry is dropped at once.
    SmNotice,
    /// Records carry a version (reserved bits 354–355 next to the caching
    /// flag); a REQ built from an old version is rejected with the current
    /// one and the entry is dropped.
    Versioned,
}

/// Parameters of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndNodeParams {
    /// Address behaviour of the migration.
    pub mode: AddressMode,
    /// Whether the SM sets the caching flag (and nodes run Algorithm 2).
    pub cache: bool,
    /// Cache invalidation.
    pub invalidation: Invalidation,
    /// The migration changes the path's characteristics (FDR ↔ EDR).
    pub path_changes: bool,
    /// Time both RDS-stress sides start sending (after the TCP exchange and the 2 s sleep).
    pub start_s: f64,
    /// Detach begins (the connection drops).
    pub detach_s: f64,
    /// Detach completes; from then the VM is unreachable.
    pub detach_done_s: f64,
    /// Attach complete and drivers loaded at the destination.
    pub attach_done_s: f64,
    /// End of the run.
    pub end_s: f64,
    /// First backoff ceiling.
    pub backoff_min_s: f64,
    /// Largest backoff ceiling.
    pub backoff_max_s: f64,
    /// PacketLifeTime (opensm.conf default 18).
    pub plt: u32,
    /// ResponseTimeValue (20, hard-coded in cma.c).
    pub rtv: u32,
    /// CM retries (15, hard-coded).
    pub retries: u32,
    /// SA query round trip.
    pub sa_rtt_s: f64,
    /// One-way CM message latency.
    pub cm_latency_s: f64,
    /// Seed of the backoff draws.
    pub seed: u64,
    /// The migrated server's RDS reconnect backoff survives the live
    /// migration (kernel state moves with the VM; its attempts while the VF
    /// is gone fail locally, before any SA query, and double the ceiling up
    /// to `backoff_max_s`), instead of starting again from `backoff_min_s`
    /// at the attach (false, the default).
    #[serde(default)]
    pub server_backoff_kept: bool,
}

impl Default for EndNodeParams {
    /// Paper I's Fig. 5 timeline: start at 4 s, detach 13–14.5 s, attach done at 39 s.
    fn default() -> Self {
        Self {
            mode: AddressMode::SharedPort,
            cache: false,
            invalidation: Invalidation::None,
            path_changes: false,
            start_s: 4.0,
            detach_s: 13.0,
            detach_done_s: 14.5,
            attach_done_s: 39.0,
            end_s: 150.0,
            backoff_min_s: 0.001,
            backoff_max_s: 1.0,
            plt: 18,
            rtv: 20,
            retries: 15,
            sa_rtt_s: 0.0005,
            cm_latency_s: 0.0002,
            seed: 1,
            server_backoff_kept: false,
        }
    }
}

/// Per-node counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeCounts {
    /// SA PathRecord queries sent (RDS and IPoIB).
    pub sa_queries: u64,
    /// Queries a cache hit saved.
    pub sa_saved: u64,
    /// Queries sent at or after the migration started.
    pub sa_after_migration: u64,
    /// Queries sent once the VM is attached at the destination.
    pub sa_after_attach: u64,
    /// Connection attempts (REQs sent).
    pub attempts: u64,
    /// Incoming REQs rejected.
    pub rejects_sent: u64,
    /// Unreachable events.
    pub unreachable: u64,
    /// Cache entries dropped by invalidation.
    pub invalidations: u64,
}

/// Result of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndNodeResult {
    /// Client (index 0) and server (index 1) counts.
    pub nodes: [NodeCounts; 2],
    /// When the connection was first established.
    pub first_connect_s: Option<f64>,
    /// When it was re-established after the migration, if it was.
    pub restored_s: Option<f64>,
    /// Cumulative SA queries over time: (time, node, running total of that node).
    pub timeline: Vec<(f64, u8, u64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Attempt(u8),
    Resolved(u8),
    ReqArrives {
        from: u8,
        addr: u32,
        ver: u32,
        token: u64,
    },
    Rejected {
        to: u8,
        token: u64,
        ver: u32,
    },
    Accepted {
        to: u8,
        token: u64,
    },
    Retransmit {
        node: u8,
        token: u64,
    },
    Detach,
    DetachDone,
    AttachDone,
}

#[derive(Debug, Clone, Default)]
struct Node {
    /// Token of the outstanding REQ, if any.
    req: Option<u64>,
    /// Address (version) this node believes the peer has.
    peer_addr: u32,
    /// The record used for the outstanding REQ.
    req_record: Option<(u32, u32)>,
    retx: u32,
    busy: bool,
    backoff: f64,
    cache: PathCache,
}

/// Runs one end-node scenario.
pub fn simulate(p: &EndNodeParams) -> EndNodeResult {
    Sim::new(p).run()
}

struct Sim<'a> {
    p: &'a EndNodeParams,
    rng: ChaCha8Rng,
    q: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    now: f64,
    nodes: [Node; 2],
    counts: [NodeCounts; 2],
    conn_up: bool,
    /// Server address version (client's is constant 0).
    server_addr: u32,
    /// LID version (differs from the address in GidOnly mode).
    server_lid: u32,
    /// Path characteristics version.
    path_ver: u32,
    server_state: u8, // 0 up, 1 detaching (rejects), 2 gone
    migrating: bool,
    attached: bool,
    next_token: u64,
    first: Option<f64>,
    restored: Option<f64>,
    timeline: Vec<(f64, u8, u64)>,
}

const NS: f64 = 1e9;

impl<'a> Sim<'a> {
    fn new(p: &'a EndNodeParams) -> Self {
        let mut s = Self {
            p,
            rng: ChaCha8Rng::seed_from_u64(p.seed),
            q: BinaryHeap::new(),
            seq: 0,
            now: 0.0,
            nodes: Default::default(),
            counts: Default::default(),
            conn_up: false,
            server_addr: 0,
            server_lid: 0,
            path_ver: 0,
            server_state: 0,
            migrating: false,
            attached: false,
            next_token: 1,
            first: None,
            restored: None,
            timeline: Vec::new(),
        };
        for n in &mut s.nodes {
            n.backoff = p.backoff_min_s;
        }
        s.at(p.start_s, Ev::Attempt(0));
        s.at(p.start_s, Ev::Attempt(1));
        s.at(p.detach_s, Ev::Detach);
        s.at(p.detach_done_s, Ev::DetachDone);
        s.at(p.attach_done_s, Ev::AttachDone);
        s
    }

    fn at(&mut self, t: f64, ev: Ev) {
        self.seq += 1;
        self.q
            .push(Reverse(((t.max(0.0) * NS) as u64, self.seq, ev)));
    }

    fn after(&mut self, dt: f64, ev: Ev) {
        self.at(self.now + dt, ev);
    }

    fn node_up(&self, n: u8) -> bool {
        n == 0 || self.server_state == 0
    }

    fn backoff(&mut self, n: u8) {
        let node = &mut self.nodes[n as usize];
        let cur = node.backoff;
        node.backoff = (cur * 2.0).min(self.p.backoff_max_s);
        let d = self.rng.random::<f64>() * cur;
        self.after(d, Ev::Attempt(n));
    }

    /// DGID key of the peer as node `n` believes it.
    fn dgid(&self, n: u8) -> [u8; 16] {
        let mut g = [0u8; 16];
        g[0] = 0xfe;
        g[1] = 0x80;
        g[8] = 1 - n; // peer index
        g[12..16].copy_from_slice(&self.nodes[n as usize].peer_addr.to_be_bytes());
        g
    }

    fn sa_query(&mut self, n: u8) {
        let c = &mut self.counts[n as usize];
        c.sa_queries += 1;
        if self.migrating {
            c.sa_after_migration += 1;
        }
        if self.attached {
            c.sa_after_attach += 1;
        }
        self.timeline.push((self.now, n, c.sa_queries));
    }

    fn run(mut self) -> EndNodeResult {
        let end = (self.p.end_s * NS) as u64;
        while let Some(Reverse((t, _, ev))) = self.q.pop() {
            if t > end {
                break;
            }
            self.now = t as f64 / NS;
            self.handle(ev);
        }
        EndNodeResult {
            nodes: self.counts,
            first_connect_s: self.first,
            restored_s: self.restored,
            timeline: self.timeline,
        }
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Attempt(n) => {
                let i = n as usize;
                if self.conn_up
                    || !self.node_up(n)
                    || self.nodes[i].req.is_some()
                    || self.nodes[i].busy
                {
                    return;
                }
                self.nodes[i].busy = true;
                let dgid = self.dgid(n);
                if self.p.cache {
                    if let Lookup::Hit(_) = self.nodes[i].cache.lookup(dgid) {
                        self.counts[i].sa_saved += 1;
                        self.handle(Ev::Resolved(n));
                        return;
                    }
                }
                self.sa_query(n);
                self.after(self.p.sa_rtt_s, Ev::Resolved(n));
            }
            Ev::Resolved(n) => {
                let i = n as usize;
                self.nodes[i].busy = false;
                if self.conn_up || !self.node_up(n) {
                    return;
                }
                let dgid = self.dgid(n);
                // The record: from the cache if it was a hit, else the SA's current answer.
                let (lid, ver) = match self.nodes[i].cache.peek(&dgid) {
                    Some(r) if self.p.cache => (u32::from(r.dlid), u32::from(r.sl)),
                    _ => {
                        let (lid, ver) = self.current_record(n);
                        if self.p.cache {
                            let rec = PathRecordRepr {
                                dgid,
                                dlid: lid as u16,
                                sl: ver as u8,
                                caching: true,
                                ..Default::default()
                            };
                            // The query was counted at send; record the answer without recounting.
                            self.nodes[i].cache.answer(rec);
                        }
                        (lid, ver)
                    }
                };
                let token = self.next_token;
                self.next_token += 1;
                self.nodes[i].req = Some(token);
                self.nodes[i].req_record = Some((lid, ver));
                self.nodes[i].retx = 0;
                self.counts[i].attempts += 1;
                self.send_req(n, token);
            }
            Ev::ReqArrives {
                from,
                addr,
                ver,
                token,
            } => {
                let to = 1 - from;
                let t = to as usize;
                let target_lid = if to == 1 { self.server_lid } else { 0 };
                let deliverable = self.node_up(to) || (to == 1 && self.server_state == 1);
                if !deliverable || addr != target_lid {
                    return; // lost: the CM retransmits
                }
                if to == 1 && self.server_state == 1 {
                    self.counts[t].rejects_sent += 1;
                    self.after(
                        self.p.cm_latency_s,
                        Ev::Rejected {
                            to: from,
                            token,
                            ver: self.path_ver,
                        },
                    );
                    return;
                }
                if ver != self.path_ver {
                    if self.p.invalidation == Invalidation::Versioned {
                        self.counts[t].rejects_sent += 1;
                        self.after(
                            self.p.cm_latency_s,
                            Ev::Rejected {
                                to: from,
                                token,
                                ver: self.path_ver,
                            },
                        );
                    }
                    return; // a stale path: without versioning the REQ is simply lost
                }
                if self.nodes[t].req.is_some() {
                    self.counts[t].rejects_sent += 1;
                    self.after(
                        self.p.cm_latency_s,
                        Ev::Rejected {
                            to: from,
                            token,
                            ver,
                        },
                    );
                    return;
                }
                self.after(self.p.cm_latency_s, Ev::Accepted { to: from, token });
            }
            Ev::Rejected { to, token, ver } => {
                let i = to as usize;
                if self.nodes[i].req != Some(token) {
                    return;
                }
                self.nodes[i].req = None;
                if let Some((_, used)) = self.nodes[i].req_record {
                    if used != ver && self.p.cache {
                        let dgid = self.dgid(to);
                        if self.nodes[i].cache.invalidate(&dgid) {
                            self.counts[i].invalidations += 1;
                        }
                    }
                }
                self.backoff(to);
            }
            Ev::Accepted { to, token } => {
                let i = to as usize;
                if self.nodes[i].req != Some(token) || self.conn_up {
                    return;
                }
                self.conn_up = true;
                for n in &mut self.nodes {
                    n.req = None;
                    n.backoff = self.p.backoff_min_s;
                }
                if self.first.is_none() {
                    self.first = Some(self.now);
                } else if self.migrating && self.restored.is_none() {
                    self.restored = Some(self.now);
                }
            }
            Ev::Retransmit { node, token } => {
                let i = node as usize;
                if self.nodes[i].req != Some(token) || self.conn_up {
                    return;
                }
                if self.nodes[i].retx + 1 >= self.p.retries {
                    // RDMA_CM_EVENT_UNREACHABLE: IPoIB re-resolves the peer (ARP + its own SA lookup).
                    self.nodes[i].req = None;
                    self.counts[i].unreachable += 1;
                    if self.node_up(1 - node) {
                        self.nodes[i].peer_addr = if node == 0 { self.server_addr } else { 0 };
                        self.sa_query(node);
                    }
                    self.backoff(node);
                    return;
                }
                self.nodes[i].retx += 1;
                self.send_req(node, token);
            }
            Ev::Detach => {
                self.migrating = true;
                self.conn_up = false;
                self.server_state = 1;
                self.nodes[1].req = None;
                self.backoff(0);
            }
            Ev::DetachDone => self.server_state = 2,
            Ev::AttachDone => {
                self.server_state = 0;
                self.attached = true;
                match self.p.mode {
                    AddressMode::SharedPort => {
                        self.server_addr += 1;
                        self.server_lid += 1;
                    }
                    AddressMode::GidOnly => self.server_lid += 1,
                    AddressMode::LidTracker | AddressMode::VSwitch => {}
                }
                if self.p.path_changes {
                    self.path_ver += 1;
                }
                if self.p.invalidation == Invalidation::SmNotice
                    && (self.p.path_changes || self.server_lid != self.server_addr)
                {
                    // The notice: drop the entry and abandon a REQ built from it, then reconnect.
                    for n in 0..2u8 {
                        let dgid = self.dgid(n);
                        if self.nodes[n as usize].cache.invalidate(&dgid) {
                            self.counts[n as usize].invalidations += 1;
                            if n == 0 && self.nodes[0].req.take().is_some() {
                                self.backoff(0);
                            }
                        }
                    }
                }
                self.nodes[1].req = None;
                self.nodes[1].busy = false;
                self.nodes[1].backoff = if self.p.server_backoff_kept {
                    // Attempts failing locally since the detach (24 s, far
                    // more than the doublings up to the ceiling take).
                    self.p.backoff_max_s
                } else {
                    self.p.backoff_min_s
                };
                self.backoff(1);
            }
        }
    }

    /// What the SA answers now for node `n`'s view of the peer: the LID the
    /// DGID maps to and the path version.
    fn current_record(&self, n: u8) -> (u32, u32) {
        if n == 1 {
            return (0, self.path_ver);
        }
        // The SA knows the GID→LID map: a stale GID still resolves to its old LID
        // until the SM forgets it (Shared Port: the old LID is gone after the restart).
        if self.nodes[0].peer_addr == self.server_addr {
            (self.server_lid, self.path_ver)
        } else {
            (self.nodes[0].peer_addr, self.path_ver)
        }
    }

    fn send_req(&mut self, n: u8, token: u64) {
        let i = n as usize;
        let (lid, ver) = self.nodes[i].req_record.unwrap_or((0, 0));
        self.after(
            self.p.cm_latency_s,
            Ev::ReqArrives {
                from: n,
                addr: lid,
                ver,
                token,
            },
        );
        let resp = cm_response_timeout(self.p.plt, self.p.rtv);
        self.after(resp, Ev::Retransmit { node: n, token });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(mode: AddressMode, cache: bool) -> EndNodeResult {
        simulate(&EndNodeParams {
            mode,
            cache,
            ..EndNodeParams::default()
        })
    }

    #[test]
    fn shared_port_waits_for_the_cm_timeout_and_floods() {
        let r = run(AddressMode::SharedPort, false);
        let restored = r.restored_s.expect("restored");
        // The client's last REQ goes out during the detach; 96.6 s later it is unreachable.
        assert!(
            restored > 13.0 + 96.0 && restored < 14.5 + 97.5,
            "{restored}"
        );
        assert!(r.nodes[0].unreachable >= 1);
        // The server retries for ~72 s at a mean backoff of 0.5 s.
        assert!(r.nodes[1].sa_after_migration > 100, "{:?}", r.nodes[1]);
    }

    #[test]
    fn lidtracker_restores_within_one_retransmission() {
        let r = run(AddressMode::LidTracker, false);
        let restored = r.restored_s.expect("restored");
        assert!(restored > 39.0 && restored < 39.0 + 6.5, "{restored}");
        assert_eq!(r.nodes[0].unreachable, 0);
    }

    #[test]
    fn the_cache_needs_exactly_one_query_per_side() {
        for mode in [AddressMode::LidTracker, AddressMode::VSwitch] {
            let r = run(mode, true);
            assert!(r.restored_s.is_some());
            assert_eq!(
                (r.nodes[0].sa_queries, r.nodes[1].sa_queries),
                (1, 1),
                "{mode:?}"
            );
            assert!(r.nodes[0].sa_saved + r.nodes[1].sa_saved > 0);
        }
    }

    #[test]
    fn a_stale_cached_lid_waits_for_the_cm_timeout_and_a_notice_avoids_it() {
        // The GID moves but the LID does not: the client's DGID-keyed entry
        // holds the old LID; only the migrated side (whose entry for the
        // client is still right) can reconnect, once the client's REQ is
        // unreachable.
        let r = run(AddressMode::GidOnly, true);
        assert!(
            r.restored_s.unwrap_or(f64::INFINITY) > 100.0,
            "{:?}",
            r.restored_s
        );
        let r = simulate(&EndNodeParams {
            mode: AddressMode::GidOnly,
            cache: true,
            invalidation: Invalidation::SmNotice,
            ..Default::default()
        });
        let t = r.restored_s.unwrap_or(f64::NAN);
        assert!(t > 39.0 && t < 46.0, "{t}");
    }

    #[test]
    fn heterogeneous_migration_breaks_the_plain_cache_not_the_invalidating_ones() {
        let base = EndNodeParams {
            mode: AddressMode::VSwitch,
            cache: true,
            path_changes: true,
            ..Default::default()
        };
        assert_eq!(simulate(&base).restored_s, None);
        for inv in [Invalidation::SmNotice, Invalidation::Versioned] {
            let r = simulate(&EndNodeParams {
                invalidation: inv,
                ..base.clone()
            });
            let t = r.restored_s.unwrap_or(f64::NAN);
            assert!(t > 39.0 && t < 46.0, "{inv:?}: {t}");
            // One extra query per side that held the stale record, no more.
            assert!(
                r.nodes[0].sa_queries + r.nodes[1].sa_queries <= 4,
                "{inv:?}: {:?}",
                r.nodes
            );
        }
        // Without a cache the path change costs nothing special.
        assert!(simulate(&EndNodeParams {
            cache: false,
            ..base
        })
        .restored_s
        .is_some());
    }

    #[test]
    fn same_seed_same_run() {
        let p = EndNodeParams {
            seed: 7,
            ..Default::default()
        };
        assert_eq!(simulate(&p), simulate(&p));
    }

    #[test]
    fn a_kept_server_backoff_cuts_the_queries_after_a_lidtracker_migration() {
        // Reset at the attach, the server's first ten doublings from 1 ms
        // take under a second: most of its queries before the client's
        // retransmission arrives. Kept at the ceiling, only a few remain.
        let count = |kept: bool, seed: u64| {
            let r = simulate(&EndNodeParams {
                mode: AddressMode::LidTracker,
                server_backoff_kept: kept,
                seed,
                ..EndNodeParams::default()
            });
            (r.nodes[1].sa_after_attach, r.restored_s)
        };
        let (reset, kept): (Vec<_>, Vec<_>) =
            (1..=20).map(|s| (count(false, s), count(true, s))).unzip();
        eprintln!("reset {reset:?}\nkept {kept:?}");
        let sum = |v: &[(u64, Option<f64>)]| v.iter().map(|x| x.0).sum::<u64>();
        assert!(sum(&kept) * 2 < sum(&reset), "{reset:?} {kept:?}");
        assert!(kept.iter().all(|x| x.1.is_some()));
    }
}
