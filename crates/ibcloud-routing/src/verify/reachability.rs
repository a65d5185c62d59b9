//! The per-destination walk: outcome of every switch that has sources,
//! memoised, then pair counts, hop histogram, routes per link and channel
//! dependencies pushed along the in-tree of used channels.

use super::credit_loops::{self, Deps};
use super::report::{
    CreditCycle, CreditLoopReport, FailedPair, Failure, FailureCounts, LinkRouteStats, LinkRoutes,
    PathStep, VerifyReport,
};
use super::{Dest, Net, VerifyOptions, TO_ENDPOINT, UNCABLED};
use crate::sl::PathSls;
use ibcloud_fabric::Lid;
use rayon::prelude::*;

const UNKNOWN: u8 = 0;
const ON_STACK: u8 = 1;
const REACH: u8 = 2;
const FAIL: u8 = 3; // FAIL + failure code
const NONE: u32 = u32::MAX;

const FAILURES: [Failure; 6] = [
    Failure::Unset,
    Failure::NoSuchPort,
    Failure::Uncabled,
    Failure::WrongEndpoint,
    Failure::Port0,
    Failure::ForwardingLoop,
];

fn fail(kind: Failure) -> u8 {
    FAIL + FAILURES.iter().position(|&k| k == kind).unwrap_or(0) as u8
}

fn failure_of(status: u8) -> Failure {
    FAILURES[(status - FAIL) as usize]
}

/// One step of a walk at a switch.
enum Step {
    Deliver,
    Fail(Failure),
    Next(u32),
}

/// Where switch `s`'s entry for destination `d` leads, given its port `p`.
#[inline]
fn step(net: &Net<'_>, d: &Dest, s: u32, p: u8) -> Step {
    if p == 255 {
        return Step::Fail(Failure::Unset);
    }
    if p == 0 {
        return if d.is_switch && d.switch == s {
            Step::Deliver
        } else {
            Step::Fail(Failure::Port0)
        };
    }
    if p > net.num_ports[s as usize] {
        return Step::Fail(Failure::NoSuchPort);
    }
    match net.next[net.channel(s, p)] {
        UNCABLED => Step::Fail(Failure::Uncabled),
        TO_ENDPOINT if !d.is_switch && d.switch == s && d.port == p => Step::Deliver,
        TO_ENDPOINT => Step::Fail(Failure::WrongEndpoint),
        r => Step::Next(r),
    }
}

/// Per-thread state for one destination at a time.
struct Scratch {
    status: Vec<u8>,
    next: Vec<u32>,
    port: Vec<u8>,
    hops: Vec<u32>,
    flow: Vec<u64>,
    vls: Vec<u16>,
    /// Switches in resolution order: a switch comes after its next hop.
    order: Vec<u32>,
    stack: Vec<u32>,
}

impl Scratch {
    fn new(n: usize) -> Self {
        Self {
            status: vec![UNKNOWN; n],
            next: vec![NONE; n],
            port: vec![255; n],
            hops: vec![0; n],
            flow: vec![0; n],
            vls: vec![0; n],
            order: Vec::with_capacity(n),
            stack: Vec::new(),
        }
    }

    /// Follows the tables from `s0` until a switch with a known outcome, a
    /// delivery, a dead end or a switch already on the current walk.
    fn resolve(&mut self, net: &Net<'_>, d: &Dest, s0: u32) {
        let mut s = s0;
        let mut looped = false;
        loop {
            match self.status[s as usize] {
                UNKNOWN => {}
                ON_STACK => {
                    looped = true;
                    break;
                }
                _ => break,
            }
            self.status[s as usize] = ON_STACK;
            self.stack.push(s);
            let p = net.entry(s, d.lid);
            self.port[s as usize] = p;
            match step(net, d, s, p) {
                Step::Next(r) => {
                    self.next[s as usize] = r;
                    s = r;
                }
                end => {
                    self.stack.pop();
                    self.status[s as usize] = match end {
                        Step::Fail(kind) => fail(kind),
                        _ => REACH,
                    };
                    self.hops[s as usize] = 1;
                    self.order.push(s);
                    break;
                }
            }
        }
        while let Some(x) = self.stack.pop() {
            let x = x as usize;
            if looped {
                self.status[x] = fail(Failure::ForwardingLoop);
            } else {
                let n = self.next[x] as usize;
                self.status[x] = self.status[n];
                self.hops[x] = self.hops[n] + 1;
            }
            self.order.push(x as u32);
        }
    }

    fn reset(&mut self) {
        for &s in &self.order {
            let s = s as usize;
            self.status[s] = UNKNOWN;
            self.next[s] = NONE;
            self.flow[s] = 0;
            self.vls[s] = 0;
        }
        self.order.clear();
    }
}

/// Everything summed over destinations.
#[derive(Debug, Default)]
pub(crate) struct Sums {
    pairs: u64,
    reachable: u64,
    failures: FailureCounts,
    /// (destination position, source index, failure), the smallest keys.
    examples: Vec<(u32, u32, Failure)>,
    hops: Vec<u64>,
    /// CA→CA routes per channel.
    links: Vec<u64>,
    deps: Deps,
}

impl Sums {
    fn merge(mut self, mut o: Sums, max_examples: usize) -> Sums {
        if self.links.is_empty() {
            std::mem::swap(&mut self, &mut o);
        }
        self.pairs += o.pairs;
        self.reachable += o.reachable;
        self.failures.merge(&o.failures);
        self.examples.append(&mut o.examples);
        self.examples.sort_unstable_by_key(|&(d, s, _)| (d, s));
        self.examples.truncate(max_examples);
        if self.hops.len() < o.hops.len() {
            self.hops.resize(o.hops.len(), 0);
        }
        for (a, b) in self.hops.iter_mut().zip(&o.hops) {
            *a += b;
        }
        if !o.links.is_empty() {
            for (a, b) in self.links.iter_mut().zip(&o.links) {
                *a += b;
            }
        }
        self.deps.merge(o.deps);
        self
    }
}

struct Acc {
    sums: Sums,
    scratch: Scratch,
    /// VL of every (destination of the block, source), destination-major.
    vl_buf: Vec<u8>,
}

/// Destinations whose path VLs are looked up together: the SL matrix is
/// stored source-major, so a block reads 64 neighbouring bytes per source
/// instead of one cache line per (source, destination).
const SL_BLOCK: usize = 64;

fn fill_vls(
    net: &Net<'_>,
    sls: &PathSls,
    options: &VerifyOptions,
    block: &[Dest],
    buf: &mut Vec<u8>,
) {
    let n = net.sources.len();
    buf.clear();
    buf.resize(block.len() * n, 0);
    for (i, src) in net.sources.iter().enumerate() {
        for (j, d) in block.iter().enumerate() {
            buf[j * n + i] = options.sl2vl.vl(sls.get(Lid(src.lid), Lid(d.lid))) & 15;
        }
    }
}

/// Switches with at least one source.
fn source_switches(net: &Net<'_>) -> Vec<u32> {
    (0..net.switches.len() as u32)
        .filter(|&s| net.ca_sources[s as usize] > 0 || net.switch_source[s as usize])
        .collect()
}

/// Walks every destination; the sums do not depend on the thread count.
pub(crate) fn run(net: &Net<'_>, path_sls: Option<&PathSls>, options: &VerifyOptions) -> Sums {
    let starts = source_switches(net);
    let n = net.switches.len();
    let channels = *net.chan_base.last().unwrap_or(&0) as usize;
    let max = options.max_failures;
    let threads = rayon::current_num_threads().max(1);
    let chunk = net.dests.len().div_ceil(threads * 8).max(1);
    net.dests
        .par_chunks(chunk)
        .enumerate()
        .fold(
            || Acc {
                sums: Sums {
                    links: vec![0; channels],
                    deps: Deps::new(channels * net.stride),
                    ..Sums::default()
                },
                scratch: Scratch::new(n),
                vl_buf: Vec::new(),
            },
            |mut acc, (ci, dests)| {
                for (bi, block) in dests.chunks(SL_BLOCK).enumerate() {
                    let first = ci * chunk + bi * SL_BLOCK;
                    let vls = match path_sls {
                        Some(sls) if options.credit_loops => {
                            fill_vls(net, sls, options, block, &mut acc.vl_buf);
                            Some(acc.vl_buf.as_slice())
                        }
                        _ => None,
                    };
                    for (j, d) in block.iter().enumerate() {
                        let src_vls =
                            vls.map(|v| &v[j * net.sources.len()..(j + 1) * net.sources.len()]);
                        destination(
                            net,
                            (first + j) as u32,
                            d,
                            &starts,
                            src_vls,
                            options,
                            &mut acc.sums,
                            &mut acc.scratch,
                        );
                    }
                }
                acc
            },
        )
        .map(|acc| acc.sums)
        .reduce(Sums::default, |a, b| a.merge(b, max))
}

/// One destination: walks, counts, and pushes flows and VLs down the in-tree.
/// `src_vls` is the VL of every source's path to `d` (all `sl2vl(0)` when `None`).
#[allow(clippy::too_many_arguments)]
fn destination(
    net: &Net<'_>,
    pos: u32,
    d: &Dest,
    starts: &[u32],
    src_vls: Option<&[u8]>,
    options: &VerifyOptions,
    sums: &mut Sums,
    sc: &mut Scratch,
) {
    for &s in starts {
        if sc.status[s as usize] == UNKNOWN {
            sc.resolve(net, d, s);
        }
    }
    let default_vl = 1u16 << (options.sl2vl.vl(0) & 15);
    let mut failing = false;
    for &s in starts {
        let here = d.switch == s;
        let n_ca = net.ca_sources[s as usize] as u64 - u64::from(here && !d.is_switch);
        let n_sw = u64::from(net.switch_source[s as usize] && !(here && d.is_switch));
        let n = n_ca + n_sw;
        if n == 0 {
            continue;
        }
        sums.pairs += n;
        let st = sc.status[s as usize];
        if st == REACH {
            sums.reachable += n;
            if !d.is_switch && n_ca > 0 {
                let h = sc.hops[s as usize] as usize;
                if sums.hops.len() <= h {
                    sums.hops.resize(h + 1, 0);
                }
                sums.hops[h] += n_ca;
                sc.flow[s as usize] = n_ca;
            }
            if src_vls.is_none() {
                sc.vls[s as usize] = default_vl;
            }
        } else {
            failing = true;
            sums.failures.add(failure_of(st), n);
        }
    }
    if let Some(vls) = src_vls {
        for (i, (src, &vl)) in net.sources.iter().zip(vls).enumerate() {
            if i as u32 != d.owner && sc.status[src.switch as usize] == REACH {
                sc.vls[src.switch as usize] |= 1 << vl;
            }
        }
    }
    for &x in sc.order.iter().rev() {
        let xi = x as usize;
        if sc.status[xi] != REACH {
            continue;
        }
        let nx = sc.next[xi];
        let c1 = net.channel(x, sc.port[xi]);
        let flow = sc.flow[xi];
        sums.links[c1] += flow;
        if nx == NONE {
            continue;
        }
        let ni = nx as usize;
        sc.flow[ni] += flow;
        let vls = sc.vls[xi];
        sc.vls[ni] |= vls;
        if options.credit_loops && vls != 0 && sc.next[ni] != NONE {
            let bit = c1 * net.stride + sc.port[ni] as usize;
            for vl in 0..16u8 {
                if vls & (1 << vl) != 0 {
                    sums.deps.set(vl, bit);
                }
            }
        }
    }
    if failing && sums.examples.len() < options.max_failures {
        for (i, src) in net.sources.iter().enumerate() {
            if sums.examples.len() >= options.max_failures {
                break;
            }
            let st = sc.status[src.switch as usize];
            if i as u32 == d.owner || st == REACH || st == UNKNOWN {
                continue;
            }
            sums.examples.push((pos, i as u32, failure_of(st)));
        }
    }
    sc.reset();
}

/// Builds the report from the sums: failing paths re-walked, statistics, the cycle search.
pub(crate) fn report(net: &Net<'_>, mut sums: Sums, options: &VerifyOptions) -> VerifyReport {
    let first_failures = sums
        .examples
        .iter()
        .map(|&(pos, src, failure)| {
            let d = &net.dests[pos as usize];
            let s = &net.sources[src as usize];
            FailedPair {
                source: net.port_name(s.port),
                source_lid: s.lid,
                destination_lid: d.lid,
                destination: net.port_name(net.sources[d.owner as usize].port),
                failure,
                path: walk(net, d, s.switch),
            }
        })
        .collect();
    while sums.hops.last() == Some(&0) {
        sums.hops.pop();
    }
    let mut stats = LinkRouteStats::default();
    let mut per_link = Vec::new();
    let mut total = 0u64;
    for s in 0..net.switches.len() as u32 {
        for p in 1..=net.num_ports[s as usize] {
            let c = net.channel(s, p);
            let to = net.next[c];
            if to == UNCABLED {
                continue;
            }
            let routes = sums.links[c];
            let s2s = to != TO_ENDPOINT;
            if options.per_link {
                per_link.push(LinkRoutes {
                    link: net.link_label(s, p),
                    switch_to_switch: s2s,
                    routes,
                });
            }
            if !s2s {
                continue;
            }
            if stats.links == 0 || routes < stats.min {
                stats.min = routes;
            }
            if stats.links == 0 || routes > stats.max {
                stats.max = routes;
                stats.busiest = Some(net.link_label(s, p));
            }
            stats.links += 1;
            total += routes;
        }
    }
    if stats.links > 0 {
        stats.mean = total as f64 / stats.links as f64;
    }
    let credit_loops = options.credit_loops.then(|| {
        let cycle = credit_loops::find_cycle(net, &sums.deps).map(|(vl, chans)| CreditCycle {
            vl,
            channels: chans
                .iter()
                .map(|&c| {
                    let (s, p) = net.channel_ends(c);
                    net.link_label(s, p)
                })
                .collect(),
        });
        CreditLoopReport {
            vls: sums.deps.vls(),
            channels: stats.links,
            dependencies: sums.deps.count(),
            acyclic: cycle.is_none(),
            cycle,
        }
    });
    VerifyReport {
        switches: net.switches.len(),
        sources: net.sources.len(),
        destinations: net.dests.len(),
        switches_included: options.include_switches,
        unattached: net.unattached.iter().map(|&p| net.port_name(p)).collect(),
        pairs: sums.pairs,
        reachable: sums.reachable,
        failures: sums.failures,
        first_failures,
        switches_per_path: sums.hops,
        link_routes: stats,
        per_link,
        credit_loops,
    }
}

/// The switches a packet for `d` visits from switch `s`, with their ports,
/// until it is delivered, dropped or comes back to a switch.
fn walk(net: &Net<'_>, d: &Dest, mut s: u32) -> Vec<PathStep> {
    let mut seen = vec![false; net.switches.len()];
    let mut path = Vec::new();
    loop {
        let node = net.fabric.node(net.switches[s as usize]);
        let p = net.entry(s, d.lid);
        path.push(PathStep {
            node: node.description.clone(),
            guid: node.guid.to_string(),
            port: (p != 255).then_some(p),
        });
        if seen[s as usize] {
            break;
        }
        seen[s as usize] = true;
        match step(net, d, s, p) {
            Step::Next(r) => s = r,
            _ => break,
        }
    }
    path
}
