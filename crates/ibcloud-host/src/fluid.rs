//! The fluid (flow-level) time scale of G §10.1 item 9: bulk flows as rates
//! that share link capacity, chosen per workload (`mode = "fluid"`).
//!
//! ```text
//!  participants on a directed link: fluid flows (queued bytes) and packet-
//!  level flows (messages outstanding in netsim or in the pacer)
//!        │ max-min fair shares (progressive filling over every path link)
//!        ▼
//!  fluid flow:   head message done at now + remaining / rate (+ path latency)
//!  packet flow:  its messages stay packet-level in netsim, but the adapter
//!                holds each one so that it ends where the interleaved fluid
//!                packets would have let it end (the queueing delay fed back)
//! ```
//!
//! Why a pacer and not a slower link: netsim's links have one rate; the
//! fluid flows are invisible to it. A packet-level message of `w` wire bytes
//! whose flow's max-min share is `r` (fluid flows included) would, under
//! per-packet round robin, finish `w / r` after it reaches the head of its
//! queue pair; in netsim alone it takes about `w × n / C` (the `n` packet-
//! level flows on its bottleneck link `C` share it there). The pacer posts it
//! `w / r − w × n / C` late — exactly the time the fluid flows' packets
//! would have occupied — and keeps the flow's virtual finish times in order,
//! so the flow's throughput is its share and its latency includes the wait.
//!
//! Shares are max-min fair per flow (the arbitration's share when every
//! competing flow is backlogged and the bottleneck arbitrates per queue pair,
//! as an HCA does; a switch port arbitrating per input port can differ —
//! docs/host.md). Rates are recomputed whenever a flow starts or stops
//! having work outstanding; a packet-level message's wait is fixed when it
//! becomes the head of its flow's pacer.

use crate::Time;

/// How the capacity of a link is divided among the flows crossing it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ShareRule {
    /// As the hardware arbitrates (the default): per-packet round robin
    /// among queue pairs at an HCA's port; at a switch output, round robin
    /// among the input ports, and within one input port (a FIFO) in
    /// proportion to what each flow brings. Found by iterating every link's
    /// allocation against the others' to a fixed point.
    #[default]
    Arbitration,
    /// Max-min fair per flow (progressive filling), whatever the input port.
    MaxMin,
}

/// An arbitration group on a link: flows entering by the same input.
#[derive(Debug)]
struct Group {
    key: usize,
    /// What its flows bring together.
    demand: f64,
    /// What the link gives it.
    share: f64,
}

/// One participant's standing in the fluid model.
#[derive(Clone, Debug, Default)]
pub struct FlowShare {
    /// Directed links (dense ids) from source to destination.
    pub path: Vec<usize>,
    /// Fluid (true) or packet-level (false).
    pub fluid: bool,
    /// Has work outstanding (takes part in the sharing).
    pub active: bool,
    /// Share, wire bytes per ps (0 when inactive).
    pub rate: f64,
    /// The link that fixed the share.
    pub bottleneck: usize,
    /// Packet-level flows: the share the flow would have without the fluid
    /// flows — what netsim, which does not see them, gives it.
    pub alone: f64,
}

/// Link capacities and the flows that cross them.
#[derive(Clone, Debug, Default)]
pub struct Sharing {
    /// Capacity of every directed link, wire bytes per ps.
    pub capacity: Vec<f64>,
    /// Every flow (indexed like netsim's flows).
    pub flows: Vec<FlowShare>,
    /// The sharing rule.
    pub rule: ShareRule,
}

impl Sharing {
    /// Every active flow's share (and, for packet-level flows, the share
    /// without the fluid flows), by the sharing rule.
    ///
    /// ```
    /// use ibcloud_host::fluid::{FlowShare, ShareRule, Sharing};
    /// let f = |path: Vec<usize>| FlowShare { path, active: true, ..Default::default() };
    /// // Link 0 (capacity 1) carries flows 0 and 1; link 1 (capacity 1) flows 1 and 2,
    /// // link 2 (capacity 0.2) only flow 2.
    /// let mut s = Sharing { capacity: vec![1.0, 1.0, 0.2], flows: vec![f(vec![0]), f(vec![0, 1]), f(vec![1, 2])],
    ///                       rule: ShareRule::MaxMin };
    /// s.solve();
    /// let r: Vec<f64> = s.flows.iter().map(|x| (x.rate * 100.0).round() / 100.0).collect();
    /// assert_eq!(r, vec![0.5, 0.5, 0.2]);
    /// // Incast: two flows from host A's link 0, one from host B's link 1, all into link 2.
    /// let mut s = Sharing { capacity: vec![1.0; 3], flows: vec![f(vec![0, 2]), f(vec![0, 2]), f(vec![1, 2])],
    ///                       rule: ShareRule::Arbitration };
    /// s.solve();
    /// let r: Vec<f64> = s.flows.iter().map(|x| (x.rate * 100.0).round() / 100.0).collect();
    /// assert_eq!(r, vec![0.25, 0.25, 0.5]);   // the switch serves its two inputs equally
    /// s.rule = ShareRule::MaxMin;
    /// s.solve();
    /// assert!((s.flows[2].rate - 1.0 / 3.0).abs() < 1e-9);
    /// ```
    pub fn solve(&mut self) {
        let all = self.shares(&|f: &FlowShare| f.active);
        // Shares without the fluid flows: only packet-level flows need them.
        let alone = if self.flows.iter().any(|f| f.active && !f.fluid) {
            self.shares(&|f: &FlowShare| f.active && !f.fluid)
        } else {
            vec![(0.0, 0); self.flows.len()]
        };
        for (i, f) in self.flows.iter_mut().enumerate() {
            (f.rate, f.bottleneck) = all[i];
            f.alone = alone[i].0;
        }
    }

    fn shares(&self, include: &dyn Fn(&FlowShare) -> bool) -> Vec<(f64, usize)> {
        match self.rule {
            ShareRule::MaxMin => self.max_min(include),
            ShareRule::Arbitration => self.arbitration(include),
        }
    }

    /// Progressive filling: repeatedly the link with the smallest equal
    /// share among its unfrozen flows fixes that share for them.
    fn max_min(&self, include: &dyn Fn(&FlowShare) -> bool) -> Vec<(f64, usize)> {
        let nl = self.capacity.len();
        let mut left = self.capacity.clone();
        let mut count = vec![0usize; nl];
        let mut frozen: Vec<bool> = self.flows.iter().map(|f| !include(f)).collect();
        let mut out = vec![(0.0, 0); self.flows.len()];
        for (i, f) in self.flows.iter().enumerate() {
            if !frozen[i] {
                for &l in &f.path {
                    count[l] += 1;
                }
            }
        }
        loop {
            let mut best: Option<(f64, usize)> = None;
            for l in 0..nl {
                if count[l] > 0 {
                    let share = left[l].max(0.0) / count[l] as f64;
                    if best.is_none_or(|(s, _)| share < s) {
                        best = Some((share, l));
                    }
                }
            }
            let Some((share, link)) = best else { break };
            for ((fl, fz), o) in self.flows.iter().zip(frozen.iter_mut()).zip(out.iter_mut()) {
                if *fz || !fl.path.contains(&link) {
                    continue;
                }
                *fz = true;
                *o = (share, link);
                for &l in &fl.path {
                    left[l] -= share;
                    count[l] -= 1;
                }
            }
        }
        out
    }

    /// The arbitration's shares: every link divides its capacity among its
    /// arbitration groups (the first link of a path: each flow its own
    /// group, an HCA's queue pairs; later links: the flows entering by the
    /// same previous link) by water-filling on the groups' demands, and a
    /// group's allocation among its flows in proportion to their demands; a
    /// flow's demand on a link is the least its other links allow. Iterated
    /// (links in turn) until no allocation moves by more than 1e-9.
    fn arbitration(&self, include: &dyn Fn(&FlowShare) -> bool) -> Vec<(f64, usize)> {
        // Flat buffers, allocated once per solve: alloc[first[i] + k] is flow
        // i's allocation on the k-th link of its path.
        let nl = self.capacity.len();
        let mut first = Vec::with_capacity(self.flows.len() + 1);
        let mut total = 0;
        for f in &self.flows {
            first.push(total);
            total += f.path.len();
        }
        first.push(total);
        let mut alloc = vec![f64::INFINITY; total];
        let mut on: Vec<Vec<(usize, usize)>> = vec![Vec::new(); nl];
        for (i, f) in self.flows.iter().enumerate() {
            if include(f) {
                for (k, &l) in f.path.iter().enumerate() {
                    on[l].push((i, k));
                }
            }
        }
        let maxcap = self.capacity.iter().cloned().fold(0.0, f64::max);
        let (mut offered, mut member_group) = (Vec::new(), Vec::new());
        let mut groups: Vec<Group> = Vec::new();
        let mut order: Vec<usize> = Vec::new();
        for _ in 0..200 {
            let mut moved = 0.0f64;
            for (l, members) in on.iter().enumerate() {
                if members.is_empty() {
                    continue;
                }
                let cap = self.capacity[l];
                groups.clear();
                offered.clear();
                member_group.clear();
                for &(i, k) in members {
                    let mine = &alloc[first[i]..first[i + 1]];
                    let o = mine
                        .iter()
                        .enumerate()
                        .filter(|&(k2, _)| k2 != k)
                        .map(|(_, &a)| a)
                        .fold(cap, f64::min);
                    let key = if k == 0 {
                        usize::MAX - i
                    } else {
                        self.flows[i].path[k - 1]
                    };
                    let g = match groups.iter().position(|g| g.key == key) {
                        Some(g) => g,
                        None => {
                            groups.push(Group {
                                key,
                                demand: 0.0,
                                share: 0.0,
                            });
                            groups.len() - 1
                        }
                    };
                    groups[g].demand += o;
                    offered.push(o);
                    member_group.push(g);
                }
                // Water-filling over the groups, smallest demand first.
                order.clear();
                order.extend(0..groups.len());
                order.sort_by(|&a, &b| groups[a].demand.total_cmp(&groups[b].demand));
                let mut left = cap;
                for (n, &g) in order.iter().enumerate() {
                    let share = left / (order.len() - n) as f64;
                    let a = groups[g].demand.min(share);
                    groups[g].share = a;
                    left -= a;
                }
                for (m, &(i, k)) in members.iter().enumerate() {
                    let g = &groups[member_group[m]];
                    let new = if g.demand > 0.0 {
                        g.share * offered[m] / g.demand
                    } else {
                        0.0
                    };
                    let old = alloc[first[i] + k];
                    moved = moved.max(if old.is_finite() {
                        (new - old).abs()
                    } else {
                        f64::INFINITY
                    });
                    alloc[first[i] + k] = new;
                }
            }
            if moved <= 1e-9 * maxcap {
                break;
            }
        }
        self.flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if !include(f) || f.path.is_empty() {
                    return (0.0, 0);
                }
                let (k, &r) = alloc[first[i]..first[i + 1]]
                    .iter()
                    .enumerate()
                    .min_by(|a, b| a.1.total_cmp(b.1))
                    .expect("a path");
                (r, f.path[k])
            })
            .collect()
    }

    /// Whether an active fluid flow crosses any link of flow `f`'s path.
    pub fn fluid_on_path(&self, f: usize) -> bool {
        let path = &self.flows[f].path;
        self.flows
            .iter()
            .any(|g| g.fluid && g.active && g.path.iter().any(|l| path.contains(l)))
    }

    /// When a packet-level message of `wire` bytes of flow `f`, at the head
    /// of its pacer at `now`, is handed to netsim, given the flow's previous
    /// virtual finish `vfinish` (updated): `(post time, new virtual finish)`.
    /// Without fluid traffic on the path it goes at once. It ends `wire /
    /// rate` after it starts; netsim alone takes `wire / alone` of that.
    pub fn pace(&self, f: usize, now: Time, vfinish: Time, wire: f64) -> (Time, Time) {
        let fl = &self.flows[f];
        if !self.fluid_on_path(f) || fl.rate <= 0.0 {
            return (now, now);
        }
        let alone = if fl.alone > 0.0 {
            fl.alone
        } else {
            self.capacity[fl.bottleneck]
        };
        let start = now.max(vfinish);
        let finish = start + (wire / fl.rate).ceil() as Time;
        let in_netsim = (wire / alone).ceil() as Time;
        (finish.saturating_sub(in_netsim).max(now), finish)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(path: Vec<usize>, fluid: bool) -> FlowShare {
        FlowShare {
            path,
            fluid,
            active: true,
            ..Default::default()
        }
    }

    #[test]
    fn one_fluid_one_packet_halve_the_link_and_the_packet_message_waits_its_own_length() {
        // Link 0: 1 byte/ps; flow 0 fluid, flow 1 packet-level.
        let mut s = Sharing {
            capacity: vec![1.0, 1.0],
            flows: vec![flow(vec![0, 1], true), flow(vec![0, 1], false)],
            ..Default::default()
        };
        s.solve();
        assert!((s.flows[0].rate - 0.5).abs() < 1e-12);
        assert!((s.flows[1].rate - 0.5).abs() < 1e-12);
        // 1000 wire bytes: 2000 ps at half the link, 1000 ps of them in netsim.
        let (post, fin) = s.pace(1, 0, 0, 1000.0);
        assert_eq!((post, fin), (1000, 2000));
        // The next message starts where the previous one's share ended.
        let (post, fin) = s.pace(1, 100, fin, 1000.0);
        assert_eq!((post, fin), (3000, 4000));
    }

    #[test]
    fn without_fluid_traffic_packet_messages_go_at_once() {
        let mut s = Sharing {
            capacity: vec![1.0],
            flows: vec![flow(vec![0], false), flow(vec![0], false)],
            ..Default::default()
        };
        s.solve();
        assert_eq!(s.pace(0, 7, 0, 1000.0), (7, 7));
    }

    #[test]
    fn inactive_flows_take_nothing() {
        let mut s = Sharing {
            capacity: vec![1.0],
            flows: vec![flow(vec![0], true), flow(vec![0], false)],
            ..Default::default()
        };
        s.flows[1].active = false;
        s.solve();
        assert_eq!(s.flows[0].rate, 1.0);
        assert_eq!(s.flows[1].rate, 0.0);
    }
}
