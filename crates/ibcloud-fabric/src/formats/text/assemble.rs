//! Turns the node headers and port lines of a text topology file into a
//! [`Fabric`], reporting every inconsistency at the line that shows it.
//!
//! Shared by the ibnetdiscover and ibsim readers: both name nodes in headers
//! and describe each link from both ends, possibly before the far node is
//! declared. Readers add nodes and port declarations while reading; links are
//! resolved once the whole file is known, so forward references work and each
//! problem can still name its line.

use super::err;
use crate::error::{LidError, ParseError};
use crate::ids::{Guid, Lid, NodeId, PortRef};
use crate::model::{Fabric, FabricBuilder, LinkRate, NodeKind, NodeSpec};
use std::collections::HashMap;

/// No declaration in a port slot.
const NONE: u32 = u32::MAX;

/// One port line: "port `port` of node `node` is cabled to `remote`[`remote_port`]".
#[derive(Debug)]
pub(crate) struct PortDecl<'t, R> {
    /// Declaring node (index returned by [`Assembler::add_node`]).
    pub(crate) node: u32,
    /// Declaring port, 1..=254.
    pub(crate) port: u8,
    /// 1-based line.
    pub(crate) line: usize,
    /// Name of the far node, resolved after reading.
    pub(crate) remote: &'t str,
    /// Far port, 1..=254.
    pub(crate) remote_port: u8,
    /// Port GUID of the far port as this line states it.
    pub(crate) remote_guid: Option<Guid>,
    /// LID of the far node's addressable port as this line states it.
    pub(crate) remote_lid: Option<u16>,
    /// Format-specific description of the link rate seen from this end.
    pub(crate) rate: R,
}

#[derive(Debug)]
struct NodeEntry<'t> {
    name: &'t str,
    line: usize,
    kind: NodeKind,
    num_ports: u8,
    first_slot: u32,
}

#[derive(Clone, Copy, Debug)]
struct Claim<T> {
    value: T,
    line: usize,
}

/// A LID and, when stated, its LMC.
type LidClaim = Claim<(u16, Option<u8>)>;

/// Collects nodes, port declarations and GUID/LID statements; see the module docs.
#[derive(Debug)]
pub(crate) struct Assembler<'t, R> {
    file: &'t str,
    builder: FabricBuilder,
    nodes: Vec<NodeEntry<'t>>,
    names: HashMap<&'t str, u32>,
    /// Per port slot (node's first slot + port number): index into `decls`.
    slot_decl: Vec<u32>,
    slot_guid: Vec<Option<Claim<Guid>>>,
    slot_lid: Vec<Option<LidClaim>>,
    decls: Vec<PortDecl<'t, R>>,
}

impl<'t, R> Assembler<'t, R> {
    /// An empty assembler; `size_hint` is the input length, to size tables once.
    pub(crate) fn new(file: &'t str, size_hint: usize) -> Self {
        // Roughly 60 bytes per port line and one node per 1.5 kB of text.
        let lines = size_hint / 60;
        Self {
            file,
            builder: FabricBuilder::with_capacity(size_hint / 1500, lines),
            nodes: Vec::with_capacity(size_hint / 1500),
            names: HashMap::with_capacity(size_hint / 1500),
            slot_decl: Vec::with_capacity(lines),
            slot_guid: Vec::with_capacity(lines),
            slot_lid: Vec::with_capacity(lines),
            decls: Vec::with_capacity(lines),
        }
    }

    /// Error at a line of this file.
    pub(crate) fn err(&self, line: usize, problem: impl Into<String>) -> ParseError {
        err(self.file, line, problem)
    }

    /// Kind and port count of an added node.
    pub(crate) fn node_shape(&self, node: u32) -> (NodeKind, u8) {
        let n = &self.nodes[node as usize];
        (n.kind, n.num_ports)
    }

    /// Name of an added node.
    pub(crate) fn node_name(&self, node: u32) -> &'t str {
        self.nodes[node as usize].name
    }

    /// Adds a node declared on `line`; refuses duplicate names and GUIDs and bad port counts.
    pub(crate) fn add_node(
        &mut self,
        name: &'t str,
        line: usize,
        spec: NodeSpec,
    ) -> Result<u32, ParseError> {
        if let Some(&other) = self.names.get(name) {
            let first = self.nodes[other as usize].line;
            return Err(self.err(
                line,
                format!("duplicate node name '{name}' (first declared on line {first})"),
            ));
        }
        if let Some(other) = self.builder.node_by_guid(spec.guid) {
            let o = &self.nodes[other.index()];
            return Err(self.err(
                line,
                format!(
                    "duplicate node GUID {}: '{}' has it too (line {})",
                    spec.guid, o.name, o.line
                ),
            ));
        }
        let kind = spec.kind;
        let id = self
            .builder
            .add_node(spec)
            .map_err(|e| err(self.file, line, e.to_string()))?;
        let num_ports = self.builder.node(id).map_or(0, |n| n.num_ports);
        let first_slot = self.slot_decl.len() as u32;
        let end = self.slot_decl.len() + num_ports as usize + 1;
        self.slot_decl.resize(end, NONE);
        self.slot_guid.resize(end, None);
        self.slot_lid.resize(end, None);
        self.names.insert(name, id.0);
        self.nodes.push(NodeEntry {
            name,
            line,
            kind,
            num_ports,
            first_slot,
        });
        Ok(id.0)
    }

    fn slot(&self, node: u32, port: u8) -> usize {
        self.nodes[node as usize].first_slot as usize + port as usize
    }

    fn check_port(&self, node: u32, port: u8, line: usize) -> Result<(), ParseError> {
        let n = &self.nodes[node as usize];
        if port == 0 || port > n.num_ports {
            return Err(self.err(
                line,
                format!(
                    "port {port} does not exist on '{}', which has {} ports",
                    n.name, n.num_ports
                ),
            ));
        }
        Ok(())
    }

    /// Records a port line; refuses ports the node lacks and second declarations of a port.
    pub(crate) fn add_port(&mut self, decl: PortDecl<'t, R>) -> Result<(), ParseError> {
        self.check_port(decl.node, decl.port, decl.line)?;
        let slot = self.slot(decl.node, decl.port);
        if self.slot_decl[slot] != NONE {
            let first = self.decls[self.slot_decl[slot] as usize].line;
            return Err(self.err(
                decl.line,
                format!(
                    "port {} of '{}' is declared twice (first on line {first})",
                    decl.port,
                    self.node_name(decl.node)
                ),
            ));
        }
        self.slot_decl[slot] = self.decls.len() as u32;
        self.decls.push(decl);
        Ok(())
    }

    /// States the GUID of a port (switch port 0 or a CA/router port).
    pub(crate) fn claim_guid(
        &mut self,
        node: u32,
        port: u8,
        guid: Guid,
        line: usize,
    ) -> Result<(), ParseError> {
        let slot = self.slot(node, port);
        match self.slot_guid[slot] {
            Some(c) if c.value != guid => {
                Err(self.conflict(node, port, "port GUID", c.value, c.line, guid, line))
            }
            Some(_) => Ok(()),
            None => {
                self.slot_guid[slot] = Some(Claim { value: guid, line });
                Ok(())
            }
        }
    }

    /// States the LID (and LMC, if known) of an addressable port.
    pub(crate) fn claim_lid(
        &mut self,
        node: u32,
        port: u8,
        lid: u16,
        lmc: Option<u8>,
        line: usize,
    ) -> Result<(), ParseError> {
        let slot = self.slot(node, port);
        match self.slot_lid[slot] {
            Some(c) if c.value.0 != lid => {
                Err(self.conflict(node, port, "LID", c.value.0, c.line, lid, line))
            }
            Some(c) => match (c.value.1, lmc) {
                (Some(a), Some(b)) if a != b => {
                    Err(self.conflict(node, port, "LMC", a, c.line, b, line))
                }
                // The node's own line, which carries the LMC, is the better line to cite.
                (None, Some(_)) => {
                    self.slot_lid[slot] = Some(Claim {
                        value: (lid, lmc),
                        line,
                    });
                    Ok(())
                }
                _ => Ok(()),
            },
            None => {
                self.slot_lid[slot] = Some(Claim {
                    value: (lid, lmc),
                    line,
                });
                Ok(())
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn conflict(
        &self,
        node: u32,
        port: u8,
        what: &str,
        a: impl std::fmt::Display,
        a_line: usize,
        b: impl std::fmt::Display,
        b_line: usize,
    ) -> ParseError {
        let name = self.node_name(node);
        let (first, first_line, second, second_line) = if a_line <= b_line {
            (a.to_string(), a_line, b.to_string(), b_line)
        } else {
            (b.to_string(), b_line, a.to_string(), a_line)
        };
        self.err(
            second_line,
            format!(
                "{what} of '{name}' port {port} is given as {second} here but as {first} on line {first_line}"
            ),
        )
    }

    /// Resolves names and links and builds the fabric.
    ///
    /// `rate(a, b, remote)` gives the rate of the link declared by `a`, whose
    /// far end `b` is declared too unless `None`; `remote` is the far node.
    /// An `Err` text is reported at the later of the two lines.
    pub(crate) fn finish<F>(mut self, mut rate: F) -> Result<Fabric, ParseError>
    where
        F: FnMut(&PortDecl<'t, R>, Option<&PortDecl<'t, R>>, u32) -> Result<LinkRate, String>,
    {
        let mut remote_of = Vec::with_capacity(self.decls.len());
        for d in &self.decls {
            let Some(&rn) = self.names.get(d.remote) else {
                return Err(self.err(
                    d.line,
                    format!(
                        "unknown node '{}': no node of that name is declared",
                        d.remote
                    ),
                ));
            };
            self.check_port(rn, d.remote_port, d.line)?;
            remote_of.push(rn);
        }
        let decls = std::mem::take(&mut self.decls);
        for (d, &rn) in decls.iter().zip(&remote_of) {
            let far_kind = self.nodes[rn as usize].kind;
            if let Some(g) = d.remote_guid {
                if far_kind == NodeKind::Switch {
                    return Err(self.err(
                        d.line,
                        format!(
                            "switch '{}' has no GUID on port {}; only CA and router ports do",
                            d.remote, d.remote_port
                        ),
                    ));
                }
                self.claim_guid(rn, d.remote_port, g, d.line)?;
            }
            if let Some(l) = d.remote_lid {
                let p = if far_kind == NodeKind::Switch {
                    0
                } else {
                    d.remote_port
                };
                self.claim_lid(rn, p, l, None, d.line)?;
            }
        }
        for (i, (d, &rn)) in decls.iter().zip(&remote_of).enumerate() {
            let j = self.slot_decl[self.slot(rn, d.remote_port)];
            let back = if j == NONE {
                None
            } else {
                let e = &decls[j as usize];
                if remote_of[j as usize] != d.node || e.remote_port != d.port {
                    let (x, y) = if d.line <= e.line { (d, e) } else { (e, d) };
                    return Err(self.err(
                        y.line,
                        format!(
                            "link described differently on its two ends: line {} says '{}'[{}] -> '{}'[{}], line {} says '{}'[{}] -> '{}'[{}]",
                            x.line,
                            self.node_name(x.node),
                            x.port,
                            x.remote,
                            x.remote_port,
                            y.line,
                            self.node_name(y.node),
                            y.port,
                            y.remote,
                            y.remote_port
                        ),
                    ));
                }
                if (j as usize) < i {
                    continue; // connected when its first end was met
                }
                Some(e)
            };
            let line = back.map_or(d.line, |e| e.line.max(d.line));
            let r = rate(d, back, rn).map_err(|m| err(self.file, line, m))?;
            self.builder
                .connect(
                    PortRef::new(NodeId(d.node), d.port),
                    PortRef::new(NodeId(rn), d.remote_port),
                    r,
                )
                .map_err(|e| err(self.file, line, e.to_string()))?;
        }
        for (n, node) in self.nodes.iter().enumerate() {
            for p in 0..=node.num_ports {
                let slot = node.first_slot as usize + p as usize;
                let (guid, lid) = (self.slot_guid[slot], self.slot_lid[slot]);
                if guid.is_none() && lid.is_none() {
                    continue;
                }
                let port = self
                    .builder
                    .port_mut(PortRef::new(NodeId(n as u32), p))
                    .map_err(|e| err(self.file, node.line, e.to_string()))?;
                if let Some(g) = guid {
                    port.guid = g.value;
                }
                if let Some(l) = lid {
                    let (base, lmc) = (l.value.0, l.value.1.unwrap_or(0));
                    // Checked here because Fabric's LID arithmetic assumes LMC ≤ 7 and
                    // 16-bit LID ranges.
                    if lmc > 7 {
                        return Err(err(
                            self.file,
                            l.line,
                            format!("LMC {lmc} is out of range 0..=7"),
                        ));
                    }
                    if base as u32 + (1u32 << lmc) - 1 > 0xffff {
                        return Err(err(
                            self.file,
                            l.line,
                            format!("LID {base} with LMC {lmc} runs past 65535, the largest LID"),
                        ));
                    }
                    port.lid = Lid(base);
                    port.lmc = lmc;
                }
            }
        }
        let builder = std::mem::take(&mut self.builder);
        let fabric = builder.build();
        self.check_port_guids(&fabric)?;
        if let Err(e) = fabric.lid_table() {
            return Err(self.lid_error(&fabric, e));
        }
        Ok(fabric)
    }

    /// Line where a port's GUID is stated, or its node's header line.
    fn guid_line(&self, p: PortRef) -> usize {
        let slot = self.slot(p.node.0, p.port);
        self.slot_guid[slot].map_or(self.nodes[p.node.index()].line, |c| c.line)
    }

    /// Port GUIDs (switch port 0 and CA/router ports) must be unique.
    fn check_port_guids(&self, fabric: &Fabric) -> Result<(), ParseError> {
        let mut seen: HashMap<Guid, PortRef> = HashMap::with_capacity(fabric.num_nodes() * 2);
        for (id, node) in fabric.iter_nodes() {
            for p in node.addressable_ports() {
                let guid = fabric.ports(id)[p as usize].guid;
                if guid.0 == 0 {
                    continue;
                }
                let me = PortRef::new(id, p);
                if let Some(&other) = seen.get(&guid) {
                    let (a, b) = if self.guid_line(other) <= self.guid_line(me) {
                        (other, me)
                    } else {
                        (me, other)
                    };
                    return Err(self.err(
                        self.guid_line(b),
                        format!(
                            "duplicate port GUID {guid}: '{}' port {} (line {}) and '{}' port {}",
                            self.node_name(a.node.0),
                            a.port,
                            self.guid_line(a),
                            self.node_name(b.node.0),
                            b.port
                        ),
                    ));
                }
                seen.insert(guid, me);
            }
        }
        Ok(())
    }

    /// Maps a LID problem to the line of the (second) port claiming the LID.
    fn lid_error(&self, fabric: &Fabric, e: LidError) -> ParseError {
        // Every LID-owning port with the line that gave it its LID, in line order.
        let mut owners: Vec<(usize, PortRef, u16, u8)> = fabric
            .lid_ports()
            .map(|(pr, port)| {
                let line = self.slot_lid[self.slot(pr.node.0, pr.port)].map_or(0, |c| c.line);
                (line, pr, port.lid.0, port.lmc)
            })
            .collect();
        owners.sort_unstable_by_key(|o| o.0);
        let label = |o: &(usize, PortRef, u16, u8)| {
            format!("'{}' port {}", self.node_name(o.1.node.0), o.1.port)
        };
        let covers = |o: &(usize, PortRef, u16, u8), lid: u16| {
            let span = 1u32 << o.3.min(7);
            (o.2 as u32..o.2 as u32 + span).contains(&(lid as u32))
        };
        let (line, problem) = match &e {
            LidError::Collision { lid, .. } => {
                let mut claimants = owners.iter().filter(|o| covers(o, lid.0));
                match (claimants.next(), claimants.next()) {
                    (Some(a), Some(b)) => (
                        b.0,
                        format!(
                            "LID {} is claimed by {} (line {}) and by {} here",
                            lid.0,
                            label(a),
                            a.0,
                            label(b)
                        ),
                    ),
                    _ => (owners.last().map_or(1, |o| o.0), e.to_string()),
                }
            }
            LidError::NotUnicast { lid, lmc } | LidError::Misaligned { lid, lmc } => {
                let o = owners.iter().find(|o| o.2 == lid.0 && o.3 == *lmc);
                (
                    o.map_or(1, |o| o.0),
                    format!("{}: {e}", o.map_or(String::new(), label)),
                )
            }
            LidError::BadLmc(lmc) => {
                let o = owners.iter().find(|o| o.3 == *lmc);
                (
                    o.map_or(1, |o| o.0),
                    format!("{}: {e}", o.map_or(String::new(), label)),
                )
            }
            _ => (1, e.to_string()),
        };
        self.err(line.max(1), problem)
    }
}
