//! Fabric events on the model: fail or restore a link, fail or restore a
//! switch, shut down or boot a node.
//!
//! A [`FabricState`] keeps the fabric as built (the *base*) and the set of
//! links that are currently down; [`FabricState::current`] is the base
//! without them. Node ids never change (a failed switch or a shut-down node
//! stays in the model with no links), so tables before and after an event
//! can be compared entry by entry. Every event is validated first: an
//! unknown node or port, a port without a cable, failing what is already
//! down or booting what is up is an error and leaves the state unchanged.
//! After an event, [`FabricState::apply`] reports the live CA pairs that can
//! no longer reach each other at all (physically disconnected).

use std::collections::BTreeSet;

use ibcloud_fabric::{Fabric, Guid, Link, NodeId, PortRef};
use serde::{Deserialize, Serialize};

use crate::error::ReconfigError;

/// One change of the fabric.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    /// The cable on this port (either end) goes down.
    FailLink(PortRef),
    /// The cable on this port (either end) comes back.
    RestoreLink(PortRef),
    /// Every link of this switch goes down.
    FailSwitch(NodeId),
    /// A failed switch comes back with its links (except links failed on their own).
    RestoreSwitch(NodeId),
    /// A CA is shut down: its links go down.
    Shutdown(NodeId),
    /// A shut-down CA boots: its links come back.
    Boot(NodeId),
}

impl Event {
    /// Whether the switch topology changes (links between switches), as
    /// opposed to only compute nodes coming or going.
    pub fn changes_switch_topology(&self) -> bool {
        !matches!(self, Event::Shutdown(_) | Event::Boot(_))
    }

    /// Parses `kind` (`fail-link`, `restore-link`, `fail-switch`,
    /// `restore-switch`, `shutdown`, `boot`) with its arguments: a link is
    /// `NODE PORT` or `NODE:PORT`, everything else `NODE` (see
    /// [`resolve_node`]).
    pub fn parse(fabric: &Fabric, kind: &str, args: &[String]) -> Result<Self, ReconfigError> {
        let usage = |what: &str| ReconfigError::BadEvent(format!("{kind}: expected {what}"));
        let port_of = || -> Result<PortRef, ReconfigError> {
            let (node, port) = match args {
                [one] => one
                    .rsplit_once(':')
                    .map(|(n, p)| (n.to_owned(), p.to_owned()))
                    .ok_or_else(|| usage("NODE PORT or NODE:PORT"))?,
                [n, p] => (n.clone(), p.clone()),
                _ => return Err(usage("NODE PORT or NODE:PORT")),
            };
            let port: u8 = port.trim().parse().map_err(|_| {
                ReconfigError::NoSuchLink(format!("{kind}: '{port}' is not a port number"))
            })?;
            Ok(PortRef::new(resolve_node(fabric, &node)?, port))
        };
        let node_of = || -> Result<NodeId, ReconfigError> {
            match args {
                [one] => resolve_node(fabric, one),
                _ => Err(usage("one NODE")),
            }
        };
        Ok(match kind {
            "fail-link" => Self::FailLink(port_of()?),
            "restore-link" => Self::RestoreLink(port_of()?),
            "fail-switch" => Self::FailSwitch(node_of()?),
            "restore-switch" => Self::RestoreSwitch(node_of()?),
            "shutdown" => Self::Shutdown(node_of()?),
            "boot" => Self::Boot(node_of()?),
            other => {
                return Err(ReconfigError::BadEvent(format!(
                    "unknown event '{other}' (fail-link, restore-link, fail-switch, restore-switch, shutdown, boot)"
                )))
            }
        })
    }

    /// Short name (`fail-link`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            Event::FailLink(_) => "fail-link",
            Event::RestoreLink(_) => "restore-link",
            Event::FailSwitch(_) => "fail-switch",
            Event::RestoreSwitch(_) => "restore-switch",
            Event::Shutdown(_) => "shutdown",
            Event::Boot(_) => "boot",
        }
    }
}

/// What an event did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventOutcome {
    /// Links that went down (or came back) with this event.
    pub links: Vec<(PortRef, PortRef)>,
    /// Live CA pairs (each unordered pair once) with no physical path left.
    pub unreachable_pairs: u64,
    /// Up to 10 of them, as (CA, CA).
    pub examples: Vec<(NodeId, NodeId)>,
}

/// The base fabric and what is down.
#[derive(Clone, Debug)]
pub struct FabricState {
    base: Fabric,
    /// Links down on their own (fail-link).
    failed_links: BTreeSet<(PortRef, PortRef)>,
    failed_switches: BTreeSet<NodeId>,
    down_nodes: BTreeSet<NodeId>,
}

fn norm(l: Link) -> (PortRef, PortRef) {
    if l.a <= l.b {
        (l.a, l.b)
    } else {
        (l.b, l.a)
    }
}

impl FabricState {
    /// Starts with every link of `base` up.
    pub fn new(base: Fabric) -> Self {
        Self {
            base,
            failed_links: BTreeSet::new(),
            failed_switches: BTreeSet::new(),
            down_nodes: BTreeSet::new(),
        }
    }

    /// The fabric as built.
    pub fn base(&self) -> &Fabric {
        &self.base
    }

    /// Nodes shut down.
    pub fn down_nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.down_nodes.iter().copied()
    }

    /// Every link that is down now, for whatever reason.
    pub fn down_links(&self) -> Vec<Link> {
        let mut down: BTreeSet<(PortRef, PortRef)> = self.failed_links.clone();
        for l in self.base.links() {
            if self.failed_switches.contains(&l.a.node)
                || self.failed_switches.contains(&l.b.node)
                || self.down_nodes.contains(&l.a.node)
                || self.down_nodes.contains(&l.b.node)
            {
                down.insert(norm(l));
            }
        }
        down.into_iter().map(|(a, b)| Link { a, b }).collect()
    }

    /// The fabric now: the base without the links that are down (node ids
    /// unchanged).
    pub fn current(&self) -> Fabric {
        self.base.without(&[], &self.down_links())
    }

    fn link_at(&self, p: PortRef) -> Result<(PortRef, PortRef), ReconfigError> {
        let label = || {
            if p.node.index() < self.base.num_nodes() {
                format!(
                    "port {} of '{}'",
                    p.port,
                    self.base.node(p.node).description
                )
            } else {
                format!("port {} of node {}", p.port, p.node.0)
            }
        };
        if p.node.index() >= self.base.num_nodes() || self.base.port(p).is_none() || p.port == 0 {
            return Err(ReconfigError::NoSuchLink(format!(
                "{} does not exist",
                label()
            )));
        }
        let r = self
            .base
            .remote(p)
            .ok_or_else(|| ReconfigError::NoSuchLink(format!("{} has no cable", label())))?;
        Ok(norm(Link { a: p, b: r }))
    }

    fn check_node(&self, n: NodeId) -> Result<(), ReconfigError> {
        if n.index() >= self.base.num_nodes() {
            return Err(ReconfigError::UnknownNode(format!("node {}", n.0)));
        }
        Ok(())
    }

    /// Applies `event`; on error nothing changes.
    pub fn apply(&mut self, event: &Event) -> Result<EventOutcome, ReconfigError> {
        let before = self.down_links();
        let mut next = self.clone();
        match *event {
            Event::FailLink(p) => {
                let l = self.link_at(p)?;
                if before.iter().any(|d| norm(*d) == l) {
                    return Err(ReconfigError::BadEvent(format!(
                        "fail-link: the link {} is already down",
                        self.describe(l)
                    )));
                }
                next.failed_links.insert(l);
            }
            Event::RestoreLink(p) => {
                let l = self.link_at(p)?;
                if !self.failed_links.contains(&l) {
                    let why = if before.iter().any(|d| norm(*d) == l) {
                        "is down because its switch failed or its node is shut down; restore or boot that instead"
                    } else {
                        "is not down"
                    };
                    return Err(ReconfigError::BadEvent(format!(
                        "restore-link: the link {} {why}",
                        self.describe(l)
                    )));
                }
                next.failed_links.remove(&l);
            }
            Event::FailSwitch(n) | Event::RestoreSwitch(n) => {
                self.check_node(n)?;
                let node = self.base.node(n);
                if !node.is_switch() {
                    return Err(ReconfigError::BadEvent(format!(
                        "{}: '{}' is not a switch",
                        event.kind(),
                        node.description
                    )));
                }
                let fail = matches!(event, Event::FailSwitch(_));
                if fail != next.failed_switches.insert(n) {
                    return Err(ReconfigError::BadEvent(format!(
                        "{}: switch '{}' is {}",
                        event.kind(),
                        node.description,
                        if fail { "already failed" } else { "not failed" }
                    )));
                }
                if !fail {
                    next.failed_switches.remove(&n);
                }
            }
            Event::Shutdown(n) | Event::Boot(n) => {
                self.check_node(n)?;
                let node = self.base.node(n);
                if node.is_switch() {
                    return Err(ReconfigError::BadEvent(format!(
                        "{}: '{}' is a switch; use fail-switch",
                        event.kind(),
                        node.description
                    )));
                }
                let down = matches!(event, Event::Shutdown(_));
                if down != next.down_nodes.insert(n) {
                    return Err(ReconfigError::BadEvent(format!(
                        "{}: node '{}' is {}",
                        event.kind(),
                        node.description,
                        if down {
                            "already shut down"
                        } else {
                            "not shut down"
                        }
                    )));
                }
                if !down {
                    next.down_nodes.remove(&n);
                }
            }
        }
        let after = next.down_links();
        let b: BTreeSet<_> = before.iter().map(|l| norm(*l)).collect();
        let a: BTreeSet<_> = after.iter().map(|l| norm(*l)).collect();
        let links: Vec<_> = a.symmetric_difference(&b).copied().collect();
        *self = next;
        let (unreachable_pairs, examples) = self.disconnected();
        Ok(EventOutcome {
            links,
            unreachable_pairs,
            examples,
        })
    }

    fn describe(&self, (a, b): (PortRef, PortRef)) -> String {
        format!(
            "'{}' port {} – '{}' port {}",
            self.base.node(a.node).description,
            a.port,
            self.base.node(b.node).description,
            b.port
        )
    }

    /// Live CA pairs without any physical path, and up to 10 examples.
    pub fn disconnected(&self) -> (u64, Vec<(NodeId, NodeId)>) {
        let f = self.current();
        let n = f.num_nodes();
        let mut comp = vec![u32::MAX; n];
        let mut c = 0u32;
        for start in 0..n {
            if comp[start] != u32::MAX {
                continue;
            }
            comp[start] = c;
            let mut stack = vec![NodeId(start as u32)];
            while let Some(x) = stack.pop() {
                for (_, r) in f.neighbors(x) {
                    if comp[r.node.index()] == u32::MAX {
                        comp[r.node.index()] = c;
                        stack.push(r.node);
                    }
                }
            }
            c += 1;
        }
        // Live CAs: not shut down. Group by component.
        let cas: Vec<NodeId> = f.cas().filter(|n| !self.down_nodes.contains(n)).collect();
        let mut sizes = std::collections::BTreeMap::<u32, Vec<NodeId>>::new();
        for &ca in &cas {
            sizes.entry(comp[ca.index()]).or_default().push(ca);
        }
        let total = cas.len() as u64;
        let same: u64 = sizes
            .values()
            .map(|v| (v.len() as u64) * (v.len() as u64 - 1) / 2)
            .sum();
        let pairs = total * total.saturating_sub(1) / 2 - same;
        let mut examples = Vec::new();
        if pairs > 0 {
            let mut groups: Vec<&Vec<NodeId>> = sizes.values().collect();
            // Smallest groups first: those are the cut-off nodes.
            groups.sort_by_key(|g| (g.len(), g[0]));
            'outer: for (i, g) in groups.iter().enumerate() {
                for h in &groups[i + 1..] {
                    for &a in g.iter() {
                        examples.push((a, h[0]));
                        if examples.len() == 10 {
                            break 'outer;
                        }
                    }
                }
            }
        }
        (pairs, examples)
    }
}

/// Finds a node by name: a node GUID, a port GUID, `lid:N` (decimal or
/// 0x-hex), a unique node description, or the unique first word of one.
pub fn resolve_node(fabric: &Fabric, name: &str) -> Result<NodeId, ReconfigError> {
    let s = name.trim();
    let parse_num = |t: &str| -> Option<u64> {
        if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            u64::from_str_radix(h, 16).ok()
        } else {
            t.parse().ok()
        }
    };
    if let Some(l) = s.strip_prefix("lid:").or_else(|| s.strip_prefix("LID:")) {
        let lid = parse_num(l.trim())
            .filter(|&v| v > 0 && v < 0xC000)
            .ok_or_else(|| ReconfigError::UnknownNode(name.to_owned()))?;
        return fabric
            .lid_ports()
            .find(|(_, p)| p.lid.0 as u64 <= lid && lid < p.lid.0 as u64 + (1u64 << p.lmc))
            .map(|(pr, _)| pr.node)
            .ok_or_else(|| ReconfigError::UnknownNode(name.to_owned()));
    }
    if s.starts_with("0x") || s.starts_with("0X") {
        if let Some(g) = parse_num(s) {
            if let Some(n) = fabric.node_by_guid(Guid(g)) {
                return Ok(n);
            }
            if let Some(p) = fabric.port_by_guid(Guid(g)) {
                return Ok(p.node);
            }
        }
        return Err(ReconfigError::UnknownNode(name.to_owned()));
    }
    let pick = |hits: Vec<NodeId>| match hits.as_slice() {
        [one] => Some(Ok(*one)),
        [] => None,
        _ => Some(Err(ReconfigError::AmbiguousNode(name.to_owned()))),
    };
    let exact: Vec<NodeId> = fabric
        .iter_nodes()
        .filter(|(_, n)| n.description == s)
        .map(|(id, _)| id)
        .collect();
    if let Some(r) = pick(exact) {
        return r;
    }
    // The first word of a description ("hca-00001" for "hca-00001 HCA-1").
    let first: Vec<NodeId> = fabric
        .iter_nodes()
        .filter(|(_, n)| n.description.split_whitespace().next() == Some(s))
        .map(|(id, _)| id)
        .collect();
    pick(first).unwrap_or_else(|| Err(ReconfigError::UnknownNode(name.to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibcloud_fabric::generate::preset;

    fn state() -> FabricState {
        FabricState::new(preset("4-ary-2-full").unwrap().build().unwrap())
    }

    #[test]
    fn fail_and_restore_a_link() {
        let mut s = state();
        let l = s
            .base()
            .links()
            .find(|l| s.base().node(l.a.node).is_switch() && s.base().node(l.b.node).is_switch());
        let l = l.unwrap();
        let n0 = s.current().num_links();
        let out = s.apply(&Event::FailLink(l.b)).unwrap();
        assert_eq!(out.links.len(), 1);
        assert_eq!(out.unreachable_pairs, 0);
        assert_eq!(s.current().num_links(), n0 - 1);
        assert_eq!(s.current().num_nodes(), s.base().num_nodes());
        // Failing it again is refused and changes nothing.
        let e = s.apply(&Event::FailLink(l.a)).unwrap_err();
        assert!(e.to_string().contains("already down"), "{e}");
        assert_eq!(s.current().num_links(), n0 - 1);
        s.apply(&Event::RestoreLink(l.a)).unwrap();
        assert_eq!(s.current().num_links(), n0);
        assert!(s.apply(&Event::RestoreLink(l.a)).is_err());
    }

    #[test]
    fn bad_events_leave_the_state_unchanged() {
        let mut s = state();
        let n0 = s.current().num_links();
        let ca = s.base().cas().next().unwrap();
        let sw = s.base().switches().next().unwrap();
        assert!(matches!(
            s.apply(&Event::FailLink(PortRef::new(NodeId(9999), 1))),
            Err(ReconfigError::NoSuchLink(_))
        ));
        assert!(s.apply(&Event::FailLink(PortRef::new(sw, 200))).is_err());
        assert!(s.apply(&Event::Shutdown(sw)).is_err());
        assert!(s.apply(&Event::FailSwitch(ca)).is_err());
        assert!(s.apply(&Event::Boot(ca)).is_err());
        assert!(matches!(
            s.apply(&Event::Shutdown(NodeId(9999))),
            Err(ReconfigError::UnknownNode(_))
        ));
        assert_eq!(s.current().num_links(), n0);
        assert!(resolve_node(s.base(), "no such node").is_err());
        assert!(resolve_node(s.base(), "0x1234567890").is_err());
    }

    #[test]
    fn failing_a_leaf_disconnects_its_nodes() {
        let mut s = state();
        let f = s.base().clone();
        let ca = f.cas().next().unwrap();
        let leaf = f.remote(PortRef::new(ca, 1)).unwrap().node;
        let on_leaf = f
            .neighbors(leaf)
            .filter(|(_, r)| !f.node(r.node).is_switch())
            .count() as u64;
        let out = s.apply(&Event::FailSwitch(leaf)).unwrap();
        let total = f.cas().count() as u64;
        assert_eq!(
            out.unreachable_pairs,
            on_leaf * (total - on_leaf) + on_leaf * (on_leaf - 1) / 2
        );
        assert!(!out.examples.is_empty());
        s.apply(&Event::RestoreSwitch(leaf)).unwrap();
        assert_eq!(s.disconnected().0, 0);
        // Shutting a node down is not a disconnection.
        let out = s.apply(&Event::Shutdown(ca)).unwrap();
        assert_eq!(out.unreachable_pairs, 0);
        assert_eq!(resolve_node(&f, &f.node(ca).description).ok(), Some(ca));
    }
}
