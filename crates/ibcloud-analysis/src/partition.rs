//! Partition-level analyses of seed 002 (pFTree): a victim pattern in one
//! node set under a noise pattern in another, `dep_max_delay` of the victim
//! only, and the static contention and inter-partition interference counts.
//!
//! **Victim under noise.** Link congestion is the number of routes on a link
//! in the combined victim + noise traffic (ORCS extended to partitions, E
//! §1.8). The noise runs all of its levels at once — for `shift` (ORCS's
//! all-to-all) that is every ordered pair of noise nodes, the same in every
//! run — and is laid on the links once; the victim's levels run one after
//! the other and each victim flow is weighted by the largest combined load on
//! its path. The victim's levels are chained as in [`crate::Analysis`]'s
//! `dep_max_delay` (a flow starts when the previous level's flows into its
//! source are done); the result is the longest chain. Victim ranks are
//! shuffled per run (ChaCha stream per run), noise ranks with a second stream.
//!
//! **Contention** (pFTree-Wt, Figs. 13–15): a directed switch-to-switch link
//! is contended when routes to more than one *receiver* cross it; R receivers
//! give contention R − 1. Sums and contended-link counts are kept per
//! direction (up = towards the roots). Routes to a receiver are its paths
//! from every other endpoint.
//!
//! **Interference**: per directed switch-to-switch link, the intra-partition
//! flows of each partition on it; [`FlowCounts::interference`] gives three
//! readings of the seed's undefined count (flow pairs, flows on shared links,
//! shared links), calibrated in docs/reproductions/pftree.md.

use rayon::prelude::*;

use crate::endpoints::Endpoints;
use crate::error::AnalysisError;
use crate::metrics::{DelayChain, Done};
use crate::order::{run_stream, RankOrder};
use crate::paths::{PathMode, Paths};
use crate::patterns::{Flow, Pattern};
use crate::result::Stats;
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Fabric, NodeKind, PortRef};
use ibcloud_routing::fat_tree::FatTree;
use ibcloud_routing::EngineOptions;

/// Salt of the noise order stream (independent of the victim's).
const NOISE_SALT: u64 = 0x6e6f_6973_6521;

/// A victim pattern on one node set and a noise pattern on another.
#[derive(Clone, Debug)]
pub struct VictimNoise {
    /// Victim endpoints.
    pub victims: Endpoints,
    /// The victim's pattern.
    pub victim_pattern: Pattern,
    /// Noise endpoints (may be empty).
    pub noise: Endpoints,
    /// The noise pattern (`Null` for none).
    pub noise_pattern: Pattern,
}

/// Per-run `dep_max_delay` of the victim.
#[derive(Clone, Debug, PartialEq)]
pub struct VictimDelay {
    /// One value per run.
    pub delays: Vec<f64>,
    /// Victim flows whose path did not arrive (all runs).
    pub broken: u64,
}

impl VictimDelay {
    /// min / mean / max and percentiles.
    pub fn stats(&self) -> Stats {
        Stats::of(self.delays.iter().copied())
    }
}

fn all_levels(
    p: &Pattern,
    n: usize,
    order: &[u32],
    offset: u32,
    rng: &mut rand_chacha::ChaCha8Rng,
    out: &mut Vec<(u32, u32)>,
) {
    let inst = p.instantiate(n, rng);
    let mut flows = Vec::new();
    for l in 0..inst.num_levels() {
        flows.clear();
        inst.level(l, &mut flows);
        out.extend(flows.iter().map(|f| {
            (
                order[f.src as usize] + offset,
                order[f.dst as usize] + offset,
            )
        }));
    }
}

/// `dep_max_delay` of the victim under the noise, over `runs` runs.
pub fn victim_delay(
    fabric: &Fabric,
    tables: &ForwardingTables,
    setup: &VictimNoise,
    runs: u64,
    seed: u64,
) -> Result<VictimDelay, AnalysisError> {
    let v = setup.victims.len();
    let m = setup.noise.len();
    setup.victim_pattern.check(v)?;
    if m > 0 {
        setup.noise_pattern.check(m)?;
    }
    let mut list = setup.victims.as_slice().to_vec();
    list.extend_from_slice(setup.noise.as_slice());
    let all = Endpoints::from_list(list)?;
    let paths = Paths::new(fabric, tables, &all, PathMode::default())?;
    let links = paths.num_links();
    let noise_fixed = matches!(setup.noise_pattern, Pattern::Shift | Pattern::Null) || m < 2;
    let noise_load = |order: &[u32], run: u64| -> Vec<u32> {
        let mut load = vec![0u32; links];
        if m < 2 || setup.noise_pattern == Pattern::Null {
            return load;
        }
        let mut pairs = Vec::new();
        let mut rng = run_stream(seed ^ NOISE_SALT, run ^ NOISE_SALT);
        all_levels(
            &setup.noise_pattern,
            m,
            order,
            v as u32,
            &mut rng,
            &mut pairs,
        );
        let mut buf = Vec::new();
        for (s, d) in pairs {
            buf.clear();
            if paths.append(s, d, &mut buf).is_ok() {
                for &c in &buf {
                    load[c as usize] += 1;
                }
            }
        }
        load
    };
    let identity: Vec<u32> = (0..m as u32).collect();
    let fixed = if noise_fixed {
        Some(noise_load(&identity, 0))
    } else {
        None
    };
    let victim_order = RankOrder::new(v, &[], true)?;
    let noise_order = RankOrder::new(m, &[], true)?;
    let results: Vec<(f64, u64)> = (0..runs)
        .into_par_iter()
        .map(|run| {
            let own;
            let noise: &[u32] = match &fixed {
                Some(l) => l,
                None => {
                    own = noise_load(&noise_order.for_run(seed ^ NOISE_SALT, run), run);
                    &own
                }
            };
            let order = victim_order.for_run(seed, run);
            let mut rng = run_stream(seed, run);
            let inst = setup.victim_pattern.instantiate(v, &mut rng);
            let mut chain = DelayChain::new(v);
            let mut load = vec![0u32; links];
            let mut flows: Vec<Flow> = Vec::new();
            let mut cables: Vec<u32> = Vec::new();
            let mut spans: Vec<(usize, usize, u32, u32)> = Vec::new();
            let mut done: Vec<Done> = Vec::new();
            let mut broken = 0u64;
            for l in 0..inst.num_levels() {
                flows.clear();
                inst.level(l, &mut flows);
                cables.clear();
                spans.clear();
                for f in &flows {
                    let a = cables.len();
                    if paths
                        .append(order[f.src as usize], order[f.dst as usize], &mut cables)
                        .is_ok()
                    {
                        spans.push((a, cables.len(), f.src, f.dst));
                    } else {
                        broken += 1;
                    }
                }
                for &c in &cables {
                    load[c as usize] += 1;
                }
                done.clear();
                for &(a, b, s, d) in &spans {
                    let top = cables[a..b]
                        .iter()
                        .map(|&c| load[c as usize] + noise[c as usize])
                        .max()
                        .unwrap_or(1);
                    done.push(Done {
                        src: s,
                        dst: d,
                        load: top as f64,
                    });
                }
                chain.level(&done);
                for &c in &cables {
                    load[c as usize] = 0;
                }
            }
            (chain.delay, broken)
        })
        .collect();
    Ok(VictimDelay {
        delays: results.iter().map(|r| r.0).collect(),
        broken: results.iter().map(|r| r.1).sum(),
    })
}

/// A directed switch-to-switch link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirectedLink {
    /// Sending port.
    pub from: PortRef,
    /// Receiving port.
    pub to: PortRef,
    /// Towards the roots (lower OpenSM rank).
    pub up: bool,
}

struct LinkMap {
    /// Port slot → index into `links` (u32::MAX: not a switch-to-switch link).
    index: Vec<u32>,
    links: Vec<DirectedLink>,
}

fn link_map(fabric: &Fabric) -> Result<LinkMap, AnalysisError> {
    let tree = FatTree::build(fabric, &EngineOptions::default())
        .map_err(|e| AnalysisError::BadOptions(format!("not a fat-tree: {e}")))?;
    let rank = |n: ibcloud_fabric::NodeId| tree.index_of(n).map(|s| tree.rank(s));
    let mut index = vec![u32::MAX; fabric.num_port_slots()];
    let mut links = Vec::new();
    for s in fabric.switches() {
        for (p, r) in fabric.neighbors(s) {
            if fabric.node(r.node).kind != NodeKind::Switch {
                continue;
            }
            let from = PortRef::new(s, p);
            let (Some(a), Some(b)) = (rank(s), rank(r.node)) else {
                continue;
            };
            if let Some(i) = fabric.port_index(from) {
                index[i] = links.len() as u32;
                links.push(DirectedLink {
                    from,
                    to: r,
                    up: b < a,
                });
            }
        }
    }
    Ok(LinkMap { index, links })
}

/// Contention in one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ContentionSum {
    /// Σ (R − 1) over links with R ≥ 2 receivers.
    pub contention: u64,
    /// Links with R ≥ 2.
    pub contended_links: u64,
}

/// Receiver contention, up and down.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Contention {
    /// Links towards the roots.
    pub up: ContentionSum,
    /// Links towards the leaves.
    pub down: ContentionSum,
}

/// Contention of the routes to `receivers` (positions in `endpoints`) from
/// every other endpoint.
pub fn receiver_contention(
    fabric: &Fabric,
    tables: &ForwardingTables,
    endpoints: &Endpoints,
    receivers: &[u32],
) -> Result<Contention, AnalysisError> {
    let map = link_map(fabric)?;
    let paths = Paths::new(fabric, tables, endpoints, PathMode::default())?;
    let n = endpoints.len() as u32;
    let mut count = vec![0u32; map.links.len()];
    let mut seen = vec![u32::MAX; map.links.len()];
    let mut buf = Vec::new();
    for &r in receivers {
        for s in 0..n {
            if s == r {
                continue;
            }
            buf.clear();
            if paths.append(s, r, &mut buf).is_err() {
                continue;
            }
            for &c in &buf {
                let i = map.index[c as usize];
                if i != u32::MAX && seen[i as usize] != r {
                    seen[i as usize] = r;
                    count[i as usize] += 1;
                }
            }
        }
    }
    let mut out = Contention::default();
    for (i, &k) in count.iter().enumerate() {
        if k >= 2 {
            let d = if map.links[i].up {
                &mut out.up
            } else {
                &mut out.down
            };
            d.contention += (k - 1) as u64;
            d.contended_links += 1;
        }
    }
    Ok(out)
}

/// Intra-partition flows per directed switch-to-switch link and partition.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowCounts {
    /// The links.
    pub links: Vec<DirectedLink>,
    /// Number of partitions.
    pub partitions: usize,
    /// `counts[link * partitions + p]`.
    pub counts: Vec<u64>,
}

/// Three readings of "inter-partition interference", both directions summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Interference {
    /// Σ over links of Σ over partition pairs p < q of flows_p × flows_q.
    pub flow_pairs: u64,
    /// Σ over links used by ≥ 2 partitions of the flows on them.
    pub flows_on_shared: u64,
    /// Links used by ≥ 2 partitions.
    pub shared_links: u64,
}

impl FlowCounts {
    /// The interference readings.
    pub fn interference(&self) -> Interference {
        let mut out = Interference::default();
        let np = self.partitions;
        for l in 0..self.links.len() {
            let row = &self.counts[l * np..(l + 1) * np];
            let users = row.iter().filter(|&&c| c > 0).count();
            if users < 2 {
                continue;
            }
            out.shared_links += 1;
            out.flows_on_shared += row.iter().sum::<u64>();
            let mut acc = 0u64;
            for &c in row {
                out.flow_pairs += acc * c;
                acc += c;
            }
        }
        out
    }
}

/// Which flows [`partition_flows`] counts, and under which partition.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlowSet {
    /// Flows between members of one partition (the partition's traffic).
    #[default]
    Intra,
    /// Every ordered endpoint pair, under its source's partition (stale
    /// routes included: the LFT view).
    AllBySource,
    /// Every ordered endpoint pair, under its destination's partition.
    AllByDestination,
}

/// Counts, per link, the flows of each partition (`labels[i]` is endpoint
/// i's partition, `None`: none).
pub fn partition_flows(
    fabric: &Fabric,
    tables: &ForwardingTables,
    endpoints: &Endpoints,
    labels: &[Option<u32>],
) -> Result<FlowCounts, AnalysisError> {
    partition_flows_of(fabric, tables, endpoints, labels, FlowSet::Intra)
}

/// [`partition_flows`] for a chosen [`FlowSet`].
pub fn partition_flows_of(
    fabric: &Fabric,
    tables: &ForwardingTables,
    endpoints: &Endpoints,
    labels: &[Option<u32>],
    set: FlowSet,
) -> Result<FlowCounts, AnalysisError> {
    if labels.len() != endpoints.len() {
        return Err(AnalysisError::BadOptions(format!(
            "{} labels for {} endpoints",
            labels.len(),
            endpoints.len()
        )));
    }
    let map = link_map(fabric)?;
    let paths = Paths::new(fabric, tables, endpoints, PathMode::default())?;
    let np = labels
        .iter()
        .flatten()
        .map(|&l| l as usize + 1)
        .max()
        .unwrap_or(0);
    let mut counts = vec![0u64; map.links.len() * np.max(1)];
    let mut buf = Vec::new();
    for (s, &l) in labels.iter().enumerate() {
        for (d, &ld) in labels.iter().enumerate() {
            if s == d {
                continue;
            }
            let label = match set {
                FlowSet::Intra if l.is_some() && l == ld => l,
                FlowSet::Intra => None,
                FlowSet::AllBySource => l,
                FlowSet::AllByDestination => ld,
            };
            let Some(label) = label else { continue };
            buf.clear();
            if paths.append(s as u32, d as u32, &mut buf).is_err() {
                continue;
            }
            for &c in &buf {
                let i = map.index[c as usize];
                if i != u32::MAX {
                    counts[i as usize * np + label as usize] += 1;
                }
            }
        }
    }
    Ok(FlowCounts {
        links: map.links,
        partitions: np,
        counts,
    })
}
