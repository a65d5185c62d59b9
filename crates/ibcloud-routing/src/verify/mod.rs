//! Verification of any set of forwarding tables — ours or OpenSM's — against a
//! fabric: all-pairs reachability with forwarding-loop and dead-end
//! detection, switches per path, routes per link, and the credit-loop
//! (deadlock) check on the channel dependency graph per VL.
//!
//! Routing is destination based, so for one destination LID every switch has
//! one next hop and the used channels form an in-tree. The check walks the
//! tables once per destination from every switch that has sources,
//! memoising each switch's outcome, and counts sources per switch: per
//! destination the work is O(switches), never O(pairs). Destinations are
//! spread over threads with rayon; every result is a sum, an OR or "the first
//! N by key", so the report does not depend on the number of threads.
//!
//! Channels are directed switch-to-switch links. A path that leaves switch A
//! on channel c1 and leaves the next switch on channel c2 makes c2 a
//! dependency of c1 on the path's VL (SL of the (source, destination) pair
//! through the [`Sl2Vl`] table). Channels into CAs and out of CAs can never be
//! part of a cycle and are left out. Only paths that arrive contribute
//! dependencies; broken paths are reported by the reachability check.
//!
//! ```
//! use ibcloud_fabric::{generate, lft::ForwardingTables};
//! use ibcloud_routing::verify::{verify, VerifyOptions};
//! let fabric = generate::preset("4-ary-2-full")?.build()?;
//! let empty = ForwardingTables::new(&fabric);
//! let report = verify(&fabric, &empty, None, &VerifyOptions::default()).unwrap();
//! assert_eq!(report.pairs, 32 * 31);
//! assert_eq!(report.failures.unset, report.pairs);
//! # Ok::<(), ibcloud_fabric::FabricError>(())
//! ```

mod credit_loops;
pub mod ibdmchk;
pub mod partitions;
mod reachability;
mod report;
#[cfg(test)]
mod tests;

pub use report::{
    CreditCycle, CreditLoopReport, FailedPair, Failure, FailureCounts, LinkRouteStats, LinkRoutes,
    PathStep, VerifyReport,
};

use crate::engine::Routing;
use crate::sl::{PathSls, Sl2Vl};
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Fabric, LidError, NodeId, NodeKind, PortRef};

/// What to check and how much to report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyOptions {
    /// Also check switch LIDs: every switch is a source and a destination
    /// (OpenSM routes them too). Hop and link statistics stay CA→CA.
    pub include_switches: bool,
    /// Build the channel dependency graph and look for a cycle.
    pub credit_loops: bool,
    /// SL → VL for the credit-loop check (identity by default).
    pub sl2vl: Sl2Vl,
    /// How many failing pairs to describe with their paths.
    pub max_failures: usize,
    /// Fill [`VerifyReport::per_link`] with every link's route count.
    pub per_link: bool,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        Self {
            include_switches: false,
            credit_loops: true,
            sl2vl: Sl2Vl::default(),
            max_failures: 10,
            per_link: false,
        }
    }
}

/// Why tables could not be verified at all (as opposed to failing the checks).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The tables were made for a fabric with another node count.
    #[error("the forwarding tables cover {tables} nodes but the fabric has {fabric}")]
    WrongFabric {
        /// Nodes the tables cover.
        tables: usize,
        /// Nodes in the fabric.
        fabric: usize,
    },
    /// The fabric's LIDs collide or are out of range.
    #[error("the fabric's LIDs are inconsistent: {0}")]
    Lids(#[from] LidError),
}

/// Verifies a routing (its tables and, if present, its path SLs).
pub fn verify_routing(
    fabric: &Fabric,
    routing: &Routing,
    options: &VerifyOptions,
) -> Result<VerifyReport, VerifyError> {
    verify(fabric, &routing.tables, routing.path_sls.as_ref(), options)
}

/// Verifies `tables` on `fabric`; `path_sls` gives each (source LID,
/// destination LID) pair its SL (SL 0 everywhere when `None`).
pub fn verify(
    fabric: &Fabric,
    tables: &ForwardingTables,
    path_sls: Option<&PathSls>,
    options: &VerifyOptions,
) -> Result<VerifyReport, VerifyError> {
    if tables.num_nodes() != fabric.num_nodes() {
        return Err(VerifyError::WrongFabric {
            tables: tables.num_nodes(),
            fabric: fabric.num_nodes(),
        });
    }
    fabric.lid_table()?;
    let net = Net::new(fabric, tables, options.include_switches);
    let sums = reachability::run(&net, path_sls, options);
    Ok(reachability::report(&net, sums, options))
}

/// Where a switch port leads (indexed by channel id).
pub(crate) const TO_ENDPOINT: u32 = u32::MAX - 1;
pub(crate) const UNCABLED: u32 = u32::MAX;

/// A source: a CA/router port attached to a switch, or a switch itself.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Source {
    pub(crate) port: PortRef,
    /// Base LID (for path SLs).
    pub(crate) lid: u16,
    /// Switch index it injects at.
    pub(crate) switch: u32,
    pub(crate) is_switch: bool,
}

/// A destination LID and where it is delivered.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dest {
    pub(crate) lid: u16,
    /// Index of the owning source (every destination owner is also a source,
    /// except switches when they are not included).
    pub(crate) owner: u32,
    /// Switch index that delivers it, and the port it delivers on (0: the switch's own LID).
    pub(crate) switch: u32,
    pub(crate) port: u8,
    pub(crate) is_switch: bool,
}

/// The fabric flattened for the walks.
#[derive(Debug)]
pub(crate) struct Net<'a> {
    pub(crate) fabric: &'a Fabric,
    /// Switch index → node id.
    pub(crate) switches: Vec<NodeId>,
    /// Per switch its LFT.
    pub(crate) lft: Vec<&'a [u8]>,
    /// Per switch its port count.
    pub(crate) num_ports: Vec<u8>,
    /// Per switch its first channel id; channel of (s, p) = `chan_base[s] + p`.
    pub(crate) chan_base: Vec<u32>,
    /// Per channel: next switch index, [`TO_ENDPOINT`] or [`UNCABLED`].
    pub(crate) next: Vec<u32>,
    /// Largest port count + 1 (row width of the dependency bitsets).
    pub(crate) stride: usize,
    /// Sources in fabric order: CA/router ports first, then switches (if included).
    pub(crate) sources: Vec<Source>,
    /// CA/router sources per switch.
    pub(crate) ca_sources: Vec<u32>,
    /// Whether the switch is a source itself.
    pub(crate) switch_source: Vec<bool>,
    /// Destinations by ascending LID.
    pub(crate) dests: Vec<Dest>,
    /// CA/router ports with a LID but no switch at the other end.
    pub(crate) unattached: Vec<PortRef>,
}

impl<'a> Net<'a> {
    pub(crate) fn new(
        fabric: &'a Fabric,
        tables: &'a ForwardingTables,
        include_switches: bool,
    ) -> Self {
        let switches: Vec<NodeId> = fabric.switches().collect();
        let mut index = vec![u32::MAX; fabric.num_nodes()];
        for (i, s) in switches.iter().enumerate() {
            index[s.index()] = i as u32;
        }
        let mut chan_base = Vec::with_capacity(switches.len() + 1);
        let mut next = Vec::new();
        let mut num_ports = Vec::with_capacity(switches.len());
        for &s in &switches {
            chan_base.push(next.len() as u32);
            let node = fabric.node(s);
            num_ports.push(node.num_ports);
            for (p, port) in fabric.ports(s).iter().enumerate() {
                next.push(match port.remote {
                    _ if p == 0 => UNCABLED,
                    None => UNCABLED,
                    Some(r) if index[r.node.index()] != u32::MAX => index[r.node.index()],
                    Some(_) => TO_ENDPOINT,
                });
            }
        }
        chan_base.push(next.len() as u32);
        let stride = num_ports.iter().map(|&n| n as usize + 1).max().unwrap_or(1);
        let lft = switches.iter().map(|&s| tables.table(s)).collect();

        let mut sources = Vec::new();
        let mut dests = Vec::new();
        let mut unattached = Vec::new();
        let mut ca_sources = vec![0u32; switches.len()];
        let mut switch_source = vec![false; switches.len()];
        for (pr, port) in fabric.lid_ports() {
            let node = fabric.node(pr.node);
            let (switch, at) = if node.kind == NodeKind::Switch {
                if !include_switches {
                    continue;
                }
                (index[pr.node.index()], 0)
            } else {
                match port.remote {
                    Some(r) if index[r.node.index()] != u32::MAX => (index[r.node.index()], r.port),
                    _ => {
                        unattached.push(pr);
                        continue;
                    }
                }
            };
            let is_switch = node.kind == NodeKind::Switch;
            let owner = sources.len() as u32;
            sources.push(Source {
                port: pr,
                lid: port.lid.0,
                switch,
                is_switch,
            });
            if is_switch {
                switch_source[switch as usize] = true;
            } else {
                ca_sources[switch as usize] += 1;
            }
            let span = 1u32 << port.lmc.min(7);
            for k in 0..span {
                let lid = port.lid.0 as u32 + k;
                if lid <= u16::MAX as u32 {
                    dests.push(Dest {
                        lid: lid as u16,
                        owner,
                        switch,
                        port: at,
                        is_switch,
                    });
                }
            }
        }
        // Switch sources after CA sources, so that CA pairs come first in examples.
        let (mut cas, sw): (Vec<_>, Vec<_>) =
            sources.iter().enumerate().partition(|(_, s)| !s.is_switch);
        cas.extend(sw);
        let mut renumber = vec![0u32; sources.len()];
        for (new, (old, _)) in cas.iter().enumerate() {
            renumber[*old] = new as u32;
        }
        let sources: Vec<Source> = cas.into_iter().map(|(_, s)| *s).collect();
        for d in &mut dests {
            d.owner = renumber[d.owner as usize];
        }
        dests.sort_by_key(|d| d.lid);
        Self {
            fabric,
            switches,
            lft,
            num_ports,
            chan_base,
            next,
            stride,
            sources,
            ca_sources,
            switch_source,
            dests,
            unattached,
        }
    }

    /// The LFT entry of switch `s` for `lid` (255 beyond the table).
    #[inline]
    pub(crate) fn entry(&self, s: u32, lid: u16) -> u8 {
        self.lft[s as usize]
            .get(lid as usize)
            .copied()
            .unwrap_or(255)
    }

    #[inline]
    pub(crate) fn channel(&self, s: u32, port: u8) -> usize {
        self.chan_base[s as usize] as usize + port as usize
    }

    /// The (switch, port) of a channel id.
    pub(crate) fn channel_ends(&self, c: usize) -> (u32, u8) {
        let s = self.chan_base.partition_point(|&b| b as usize <= c) - 1;
        (s as u32, (c - self.chan_base[s] as usize) as u8)
    }

    /// `'desc' port N -> 'desc' port M` for the link out of switch `s` on `port`.
    pub(crate) fn link_label(&self, s: u32, port: u8) -> String {
        let from = PortRef::new(self.switches[s as usize], port);
        match self.fabric.remote(from) {
            Some(r) => format!(
                "{} -> {}",
                self.fabric.port_label(from),
                self.fabric.port_label(r)
            ),
            None => format!("{} -> (no cable)", self.fabric.port_label(from)),
        }
    }

    /// `'desc' (GUID) port N`.
    pub(crate) fn port_name(&self, p: PortRef) -> String {
        let n = self.fabric.node(p.node);
        format!("'{}' ({}) port {}", n.description, n.guid, p.port)
    }
}
