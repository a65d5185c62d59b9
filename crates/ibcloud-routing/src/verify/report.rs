//! What a verification found, as plain serialisable data (`--json`) with a
//! human-readable [`Display`](std::fmt::Display).

use serde::Serialize;
use std::fmt;

/// The result of [`verify`](super::verify): reachability, path lengths, routes
/// per link and the credit-loop check.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VerifyReport {
    /// Switches in the fabric.
    pub switches: usize,
    /// Source ports: CA and router ports with a LID, cabled to a switch
    /// (and every switch with a LID when switches were included).
    pub sources: usize,
    /// Destination LIDs checked (every LID of an LMC range counts).
    pub destinations: usize,
    /// Whether switch LIDs were checked as sources and destinations too.
    pub switches_included: bool,
    /// CA or router ports with a LID that are not cabled to a switch; they
    /// are neither sources nor destinations (no routing can reach them).
    pub unattached: Vec<String>,
    /// (source, destination LID) pairs checked; a port is never paired with
    /// its own LIDs.
    pub pairs: u64,
    /// Pairs whose walk through the tables arrives at the destination.
    pub reachable: u64,
    /// Pairs that do not arrive, by cause.
    pub failures: FailureCounts,
    /// The first failing pairs (destination LIDs ascending, then sources in
    /// fabric order), with the path their packets take.
    pub first_failures: Vec<FailedPair>,
    /// Switches traversed per reachable CA→CA pair: `switches_per_path[k]`
    /// pairs cross `k` switches (1 = both ends on one switch). Links
    /// traversed (ibdmchk's "HOPS") are `k + 1`.
    pub switches_per_path: Vec<u64>,
    /// CA→CA routes per directed switch-to-switch link.
    pub link_routes: LinkRouteStats,
    /// Every directed link a switch sends on (switch→switch and switch→CA)
    /// with its CA→CA route count, when asked for
    /// ([`VerifyOptions::per_link`](super::VerifyOptions::per_link)).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_link: Vec<LinkRoutes>,
    /// The channel-dependency check, when it ran.
    pub credit_loops: Option<CreditLoopReport>,
}

impl VerifyReport {
    /// Every pair reachable and, when checked, no credit loop.
    pub fn ok(&self) -> bool {
        self.all_reachable() && self.credit_loops.as_ref().is_none_or(|c| c.acyclic)
    }

    /// Every pair arrives at its destination.
    pub fn all_reachable(&self) -> bool {
        self.reachable == self.pairs
    }

    /// Reachable CA→CA pairs (the sum of [`VerifyReport::switches_per_path`]).
    pub fn ca_pairs(&self) -> u64 {
        self.switches_per_path.iter().sum()
    }

    /// Mean switches per reachable CA→CA path.
    pub fn mean_switches_per_path(&self) -> f64 {
        let n = self.ca_pairs();
        if n == 0 {
            return 0.0;
        }
        self.switches_per_path
            .iter()
            .enumerate()
            .map(|(k, &c)| k as f64 * c as f64)
            .sum::<f64>()
            / n as f64
    }
}

/// Pairs that do not arrive, by what stops them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FailureCounts {
    /// A switch on the way has no entry for the destination (255).
    pub unset: u64,
    /// An entry names a port the switch does not have.
    pub no_such_port: u64,
    /// An entry names a port without a cable.
    pub uncabled: u64,
    /// An entry leads to a CA or router port that is not the destination.
    pub wrong_endpoint: u64,
    /// An entry says port 0 on a switch that is not the destination.
    pub port0: u64,
    /// The walk comes back to a switch it has visited (forwarding loop).
    pub forwarding_loop: u64,
}

impl FailureCounts {
    /// All failing pairs.
    pub fn total(&self) -> u64 {
        self.unset
            + self.no_such_port
            + self.uncabled
            + self.wrong_endpoint
            + self.port0
            + self.forwarding_loop
    }

    pub(crate) fn add(&mut self, kind: Failure, n: u64) {
        match kind {
            Failure::Unset => self.unset += n,
            Failure::NoSuchPort => self.no_such_port += n,
            Failure::Uncabled => self.uncabled += n,
            Failure::WrongEndpoint => self.wrong_endpoint += n,
            Failure::Port0 => self.port0 += n,
            Failure::ForwardingLoop => self.forwarding_loop += n,
        }
    }

    pub(crate) fn merge(&mut self, o: &FailureCounts) {
        self.unset += o.unset;
        self.no_such_port += o.no_such_port;
        self.uncabled += o.uncabled;
        self.wrong_endpoint += o.wrong_endpoint;
        self.port0 += o.port0;
        self.forwarding_loop += o.forwarding_loop;
    }
}

/// Why a walk through the tables stops before the destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// No LFT entry (255).
    Unset,
    /// The entry's port does not exist on the switch.
    NoSuchPort,
    /// The entry's port has no cable.
    Uncabled,
    /// The entry leads to a CA or router port that is not the destination.
    WrongEndpoint,
    /// Port 0 on a switch that is not the destination.
    Port0,
    /// The walk revisits a switch.
    ForwardingLoop,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Unset => "no LFT entry (255)",
            Self::NoSuchPort => "entry names a port the switch does not have",
            Self::Uncabled => "entry names a port without a cable",
            Self::WrongEndpoint => "entry leads to a port that is not the destination",
            Self::Port0 => "entry says port 0 on a switch that is not the destination",
            Self::ForwardingLoop => "forwarding loop",
        })
    }
}

/// One pair that does not arrive, with the hops its packets take.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FailedPair {
    /// Source port, `'desc' (GUID) port N`.
    pub source: String,
    /// Source base LID.
    pub source_lid: u16,
    /// Destination LID.
    pub destination_lid: u16,
    /// The destination port, `'desc' (GUID) port N`.
    pub destination: String,
    /// What stops the walk.
    pub failure: Failure,
    /// Every switch visited with the port its table names (`None` for 255),
    /// in order; for a loop the last step is the first switch seen twice.
    pub path: Vec<PathStep>,
}

/// One switch on a walked path and the output port its table gives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PathStep {
    /// Node description.
    pub node: String,
    /// Node GUID, `0x…`.
    pub guid: String,
    /// Output port (`None`: the entry is unset).
    pub port: Option<u8>,
}

/// CA→CA routes per directed switch-to-switch link.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LinkRouteStats {
    /// Directed switch-to-switch links (two per cable).
    pub links: usize,
    /// Most routes on one link.
    pub max: u64,
    /// Fewest routes on one link (0 when some link is unused).
    pub min: u64,
    /// Mean routes per link.
    pub mean: f64,
    /// The first link carrying `max` routes, `'a' port N -> 'b' port M`.
    pub busiest: Option<String>,
}

/// Routes on one directed link.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkRoutes {
    /// The link, `'a' port N -> 'b' port M`.
    pub link: String,
    /// Whether both ends are switches.
    pub switch_to_switch: bool,
    /// CA→CA pairs routed over it.
    pub routes: u64,
}

/// The credit-loop (deadlock) check on the channel dependency graph.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CreditLoopReport {
    /// VLs that carry at least one checked path.
    pub vls: Vec<u8>,
    /// Directed switch-to-switch links (the channels that can form loops).
    pub channels: usize,
    /// Dependencies (channel → next channel on one VL), counted per VL.
    pub dependencies: u64,
    /// True when no VL's dependency graph has a cycle.
    pub acyclic: bool,
    /// One cycle, when there is one.
    pub cycle: Option<CreditCycle>,
}

/// A cycle of channel dependencies on one VL.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CreditCycle {
    /// The VL.
    pub vl: u8,
    /// The channels in dependency order (each depends on the next, the last on
    /// the first), `'a' port N -> 'b' port M`.
    pub channels: Vec<String>,
}

impl fmt::Display for PathStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.port {
            Some(p) => write!(f, "'{}' ({}) port {p}", self.node, self.guid),
            None => write!(f, "'{}' ({}) port none", self.node, self.guid),
        }
    }
}

impl fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.switches_included {
            "CA, router and switch"
        } else {
            "CA and router"
        };
        writeln!(
            f,
            "{what} pairs: {} ({} sources x {} destination LIDs, {} switches)",
            self.pairs, self.sources, self.destinations, self.switches
        )?;
        if !self.unattached.is_empty() {
            writeln!(
                f,
                "ports with a LID but no switch (not checked): {}",
                self.unattached.len()
            )?;
            for p in self.unattached.iter().take(5) {
                writeln!(f, "  {p}")?;
            }
        }
        if self.all_reachable() {
            writeln!(f, "reachability: all {} pairs reachable", self.pairs)?;
        } else {
            let c = &self.failures;
            writeln!(
                f,
                "reachability: {} of {} pairs unreachable",
                c.total(),
                self.pairs
            )?;
            for (n, what) in [
                (c.unset, Failure::Unset),
                (c.no_such_port, Failure::NoSuchPort),
                (c.uncabled, Failure::Uncabled),
                (c.wrong_endpoint, Failure::WrongEndpoint),
                (c.port0, Failure::Port0),
                (c.forwarding_loop, Failure::ForwardingLoop),
            ] {
                if n > 0 {
                    writeln!(f, "  {n} pairs: {what}")?;
                }
            }
            for p in &self.first_failures {
                writeln!(
                    f,
                    "  {} -> LID {} {}: {}",
                    p.source, p.destination_lid, p.destination, p.failure
                )?;
                let path: Vec<String> = p.path.iter().map(ToString::to_string).collect();
                writeln!(f, "    path: {}", path.join(" -> "))?;
            }
        }
        let hist: Vec<String> = self
            .switches_per_path
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(k, c)| format!("{k}: {c}"))
            .collect();
        writeln!(
            f,
            "switches per CA->CA path: {} (mean {:.3})",
            hist.join(", "),
            self.mean_switches_per_path()
        )?;
        let l = &self.link_routes;
        write!(
            f,
            "routes per switch-to-switch link: max {} min {} mean {:.1} over {} links",
            l.max, l.min, l.mean, l.links
        )?;
        match &l.busiest {
            Some(b) => writeln!(f, " (busiest {b})")?,
            None => writeln!(f)?,
        }
        match &self.credit_loops {
            None => writeln!(f, "credit loops: not checked")?,
            Some(c) => {
                let vls: Vec<String> = c.vls.iter().map(ToString::to_string).collect();
                if c.acyclic {
                    writeln!(
                        f,
                        "credit loops: none (channel dependency graph acyclic; {} dependencies on VLs {})",
                        c.dependencies,
                        vls.join(",")
                    )?;
                } else if let Some(cy) = &c.cycle {
                    writeln!(
                        f,
                        "credit loops: FOUND on VL {} ({} channels):",
                        cy.vl,
                        cy.channels.len()
                    )?;
                    for ch in &cy.channels {
                        writeln!(f, "  {ch}")?;
                    }
                }
            }
        }
        Ok(())
    }
}
