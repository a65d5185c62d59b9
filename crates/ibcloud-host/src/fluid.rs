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

/// One participant's standing in the fluid model.
#[derive(Clone, Debug, Default)]
pub struct FlowShare {
    /// Directed links (dense ids) from source to destination.
    pub path: Vec<usize>,
    /// Fluid (true) or packet-level (false).
    pub fluid: bool,
    /// Has work outstanding (takes part in the sharing).
    pub active: bool,
    /// Max-min share, wire bytes per ps (0 when inactive).
    pub rate: f64,
    /// The link that fixed the share (where the flow was frozen).
    pub bottleneck: usize,
}

/// Link capacities and the flows that cross them.
#[derive(Clone, Debug, Default)]
pub struct Sharing {
    /// Capacity of every directed link, wire bytes per ps.
    pub capacity: Vec<f64>,
    /// Every flow (indexed like netsim's flows).
    pub flows: Vec<FlowShare>,
}

impl Sharing {
    /// Max-min fair shares of the active flows by progressive filling:
    /// repeatedly the link with the smallest equal share among its unfrozen
    /// flows fixes that share for them.
    ///
    /// ```
    /// use ibcloud_host::fluid::{FlowShare, Sharing};
    /// let f = |path: Vec<usize>| FlowShare { path, active: true, ..Default::default() };
    /// // Link 0 (capacity 1) carries flows 0 and 1; link 1 (capacity 1) flows 1 and 2,
    /// // link 2 (capacity 0.2) only flow 2.
    /// let mut s = Sharing { capacity: vec![1.0, 1.0, 0.2], flows: vec![f(vec![0]), f(vec![0, 1]), f(vec![1, 2])] };
    /// s.solve();
    /// let r: Vec<f64> = s.flows.iter().map(|x| (x.rate * 100.0).round() / 100.0).collect();
    /// assert_eq!(r, vec![0.5, 0.5, 0.2]);
    /// ```
    pub fn solve(&mut self) {
        let nl = self.capacity.len();
        let mut left = self.capacity.clone();
        let mut count = vec![0usize; nl];
        let mut frozen: Vec<bool> = self.flows.iter().map(|f| !f.active).collect();
        for f in &mut self.flows {
            f.rate = 0.0;
        }
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
            for (fl, fz) in self.flows.iter_mut().zip(frozen.iter_mut()) {
                if *fz || !fl.path.contains(&link) {
                    continue;
                }
                *fz = true;
                fl.rate = share;
                fl.bottleneck = link;
                for &l in &fl.path {
                    left[l] -= share;
                    count[l] -= 1;
                }
            }
        }
    }

    /// Whether an active fluid flow crosses any link of flow `f`'s path.
    pub fn fluid_on_path(&self, f: usize) -> bool {
        let path = &self.flows[f].path;
        self.flows
            .iter()
            .any(|g| g.fluid && g.active && g.path.iter().any(|l| path.contains(l)))
    }

    /// Active packet-level flows crossing link `l`.
    pub fn packet_flows_on(&self, l: usize) -> usize {
        self.flows
            .iter()
            .filter(|g| !g.fluid && g.active && g.path.contains(&l))
            .count()
    }

    /// When a packet-level message of `wire` bytes of flow `f`, at the head
    /// of its pacer at `now`, is handed to netsim, given the flow's previous
    /// virtual finish `vfinish` (updated): `(post time, new virtual finish)`.
    /// Without fluid traffic on the path it goes at once.
    pub fn pace(&self, f: usize, now: Time, vfinish: Time, wire: f64) -> (Time, Time) {
        let fl = &self.flows[f];
        if !self.fluid_on_path(f) || fl.rate <= 0.0 {
            return (now, now);
        }
        let b = fl.bottleneck;
        let n = self.packet_flows_on(b).max(1) as f64;
        let start = now.max(vfinish);
        let finish = start + (wire / fl.rate).ceil() as Time;
        let in_netsim = (wire * n / self.capacity[b]).ceil() as Time;
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
        };
        s.solve();
        assert_eq!(s.pace(0, 7, 0, 1000.0), (7, 7));
    }

    #[test]
    fn inactive_flows_take_nothing() {
        let mut s = Sharing {
            capacity: vec![1.0],
            flows: vec![flow(vec![0], true), flow(vec![0], false)],
        };
        s.flows[1].active = false;
        s.solve();
        assert_eq!(s.flows[0].rate, 1.0);
        assert_eq!(s.flows[1].rate, 0.0);
    }
}
