//! DFSSSP: deadlock-free single-source-shortest-path routing, as OpenSM
//! 3.3.23's `dfsssp` engine (Domke, Hoefler, Nagel) computes it.
//!
//! **Routing.** The switches form a graph whose inter-switch links all start
//! with weight P² (P = LIDs of CA ports and switch ports 0, counting LMC
//! ranges), which forces minimum-hop paths. Destinations are processed in
//! OpenSM's port order: switches sorted by attached end ports (descending,
//! stable, ties in switch node-GUID order as OpenSM's switch table keeps them:
//! by the GUID in network byte order); first every CA port of every switch in
//! that order (compute nodes first when given), then every switch's port 0.
//! For each LID of a destination, Dijkstra runs from it over the switches (a
//! replica of OpenSM's 4-ary heap, whose tie-breaking decides between equal
//! paths), every reached switch forwards that LID on the port its tree edge
//! arrives on, and every tree edge's weight grows by the number of end-port
//! LIDs whose route to the destination crosses it.
//!
//! **Deadlock removal.** Every (source LID, destination LID) pair of end ports
//! (CA ports and switch ports 0) starts on virtual layer 0. The paths of a
//! layer give a channel dependency graph over switch-to-switch channels
//! (paths starting at a switch contribute nothing, as in OpenSM). While a
//! layer's graph has a cycle, the pairs on the cycle's edge carrying the
//! fewest pairs move to the next layer, exactly in OpenSM's order (its
//! depth-first search, tree-ordered restarts and quirks included). A layer
//! graph that is acyclic from the start is checked with a fast topological
//! sort instead: the result is the same. Finally unused layers are shared
//! out: each needed layer gets a contiguous range of SLs
//! ([`LayerReport::split_count`]) and its pairs are renumbered to the first SL
//! of the range.
//!
//! **Service levels.** [`Routing::path_sls`] holds OpenSM's SL table over
//! the end-port LIDs: the first SL of each pair's range (`None` when one layer
//! suffices, as on fat-trees: every pair is then on SL 0). OpenSM answers a path-record query with that
//! SL plus `rand() % split_count`, which cannot be reproduced; any SL of the
//! range is deadlock-free.
//!
//! **Options.** `max_vls` (1..=15) overrides the number of VLs; OpenSM uses the
//! smallest operational VL count of all switch ports, which is 8 under ibsim
//! and on most hardware ([`DEFAULT_VLS`]). `compute_nodes` (port GUIDs) are
//! routed first, as OpenSM's `cn_guid_file`. `roots` is ignored.
//!
//! **Failures.** A fabric whose switches are not all connected is
//! [`RoutingError::Disconnected`] (OpenSM: ERR AD0C); one needing more layers
//! than VLs is [`RoutingError::NotEnoughLayers`] (ERR AD25; `needed` is then
//! one more than available, as OpenSM stops counting there). OpenSM falls back
//! to minhop in both cases.

mod cdg;
mod sssp;

use crate::engine::{EngineOptions, Routing, RoutingEngine, RoutingError};
use crate::sl::PathSls;
use ibcloud_fabric::lft::{ForwardingTables, NO_PORT};
use ibcloud_fabric::{Fabric, Guid, Lid, NodeId, NodeKind, PortNum};

/// Data VLs OpenSM finds on ibsim's switch ports (VLCap 8, OpenSM's default
/// `max_op_vls` 5 → 8 VLs), used when [`EngineOptions::max_vls`] is `None`.
pub const DEFAULT_VLS: u8 = 8;

/// Marks "none" in u32 index arrays.
const NONE: u32 = u32::MAX;

/// The dfsssp engine.
#[derive(Clone, Debug, Default)]
pub struct Dfsssp {
    max_vls: Option<u8>,
    compute_nodes: Option<Vec<Guid>>,
}

/// What the deadlock removal did, as OpenSM logs it at info level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerReport {
    /// VLs available ("Virtual Lanes available").
    pub vls_available: u8,
    /// Layers needed ("Virtual Lanes needed").
    pub vls_needed: usize,
    /// Paths per layer before balancing ("Paths per VL (before balancing)").
    pub paths_per_vl: Vec<u64>,
    /// SLs per layer after balancing, indexed by the layer's first SL (0 elsewhere).
    pub split_count: Vec<u8>,
}

/// A dfsssp routing with its layer report.
#[derive(Clone, Debug, PartialEq)]
pub struct DfssspRouting {
    /// Tables and path SLs.
    pub routing: Routing,
    /// The layers.
    pub layers: LayerReport,
}

impl Dfsssp {
    /// The engine with `options` (`max_vls`, `compute_nodes`).
    pub fn new(options: &EngineOptions) -> Result<Self, RoutingError> {
        if let Some(v) = options.max_vls {
            if !(1..=15).contains(&v) {
                return Err(RoutingError::BadOptions(format!(
                    "dfsssp: max_vls must be 1..=15, not {v}"
                )));
            }
        }
        Ok(Self {
            max_vls: options.max_vls,
            compute_nodes: options.compute_nodes.clone(),
        })
    }

    /// Routes and reports the virtual layers.
    pub fn route_detailed(&self, fabric: &Fabric) -> Result<DfssspRouting, RoutingError> {
        let topo = Topo::new(fabric)?;
        let order = topo.port_order(fabric, self.compute_nodes.as_deref())?;
        let lft = sssp::route(&topo, &order, topo.num_hca(fabric), total_lids(fabric))?;
        let vls = self.max_vls.unwrap_or(DEFAULT_VLS);
        let layers = cdg::remove_deadlocks(&topo, &order, &lft, vls)?;
        let mut tables = ForwardingTables::new(fabric);
        for (row, &lid) in lft.lids.iter().enumerate() {
            for (v, &port) in lft.row(row).iter().enumerate() {
                if port != NO_PORT {
                    tables.set(topo.node_of[v], Lid(lid), port);
                }
            }
        }
        // One layer: every pair on SL 0, which `None` says without n² bytes.
        let path_sls = layers.vl.as_ref().map(|vl| {
            let mut sls = PathSls::new(&layers.lids.iter().map(|&l| Lid(l)).collect::<Vec<_>>());
            let n = layers.lids.len();
            for (i, &s) in layers.lids.iter().enumerate() {
                for (j, &d) in layers.lids.iter().enumerate() {
                    let sl = vl[i * n + j];
                    if sl != 0 {
                        sls.set(Lid(s), Lid(d), sl);
                    }
                }
            }
            sls
        });
        Ok(DfssspRouting {
            routing: Routing { tables, path_sls },
            layers: LayerReport {
                vls_available: vls,
                vls_needed: layers.needed,
                paths_per_vl: layers.paths_per_vl,
                split_count: layers.split_count,
            },
        })
    }
}

impl RoutingEngine for Dfsssp {
    fn name(&self) -> &'static str {
        "dfsssp"
    }

    fn route(&self, fabric: &Fabric) -> Result<Routing, RoutingError> {
        self.route_detailed(fabric).map(|r| r.routing)
    }
}

/// Registry constructor.
pub(crate) fn construct(options: &EngineOptions) -> Result<Box<dyn RoutingEngine>, RoutingError> {
    Ok(Box::new(Dfsssp::new(options)?))
}

/// The switches in OpenSM's order (vertices) and their ports.
#[derive(Debug)]
struct Topo {
    /// Vertex → switch node.
    node_of: Vec<NodeId>,
    /// Vertex → its switch LID.
    lid: Vec<u16>,
    /// Vertex → first port slot; slot = `base[v] + port`, ports 0..=num_ports.
    base: Vec<u32>,
    /// Slot → vertex of the peer switch (`NONE`: no cable, port 0, or not a switch).
    peer: Vec<u32>,
    /// Slot → the peer's port number.
    peer_port: Vec<PortNum>,
}

/// An end port in OpenSM's port order (CA port or switch port 0).
#[derive(Clone, Copy, Debug)]
struct EndPort {
    /// Base LID.
    lid: u16,
    /// LMC.
    lmc: u8,
    /// Switch port 0 (true) or CA port.
    is_switch: bool,
    /// The switch vertex (itself, or the one the CA is cabled to).
    vertex: u32,
    /// CA: the port on the switch it is cabled to; switch: 0.
    sw_port: PortNum,
}

impl EndPort {
    fn lids(&self) -> std::ops::RangeInclusive<u16> {
        self.lid..=self.lid + ((1u16 << self.lmc) - 1)
    }
}

impl Topo {
    fn new(fabric: &Fabric) -> Result<Self, RoutingError> {
        fabric.lid_table().map_err(|e| RoutingError::Unsupported {
            engine: "dfsssp",
            reason: e.to_string(),
        })?;
        let mut node_of: Vec<NodeId> = fabric.switches().collect();
        // OpenSM's switch table is keyed by the node GUID in network byte order.
        node_of.sort_by_key(|&s| fabric.node(s).guid.0.swap_bytes());
        let mut vertex_of = vec![NONE; fabric.num_nodes()];
        for (v, s) in node_of.iter().enumerate() {
            vertex_of[s.index()] = v as u32;
        }
        let mut lid = Vec::with_capacity(node_of.len());
        let mut base = Vec::with_capacity(node_of.len() + 1);
        let (mut peer, mut peer_port) = (Vec::new(), Vec::new());
        for &s in &node_of {
            let node = fabric.node(s);
            let port0 = &fabric.ports(s)[0];
            if !port0.lid.is_set() {
                return Err(RoutingError::MissingLid(format!(
                    "switch '{}'",
                    node.description
                )));
            }
            if port0.lmc > 7
                || port0.lid.0 as u32 + (1u32 << port0.lmc) - 1 > Lid::UNICAST_MAX.0 as u32
            {
                return Err(RoutingError::Unsupported {
                    engine: "dfsssp",
                    reason: format!("switch '{}' has a bad LID range", node.description),
                });
            }
            lid.push(port0.lid.0);
            base.push(peer.len() as u32);
            for (p, port) in fabric.ports(s).iter().enumerate() {
                let r = port.remote.filter(|r| p > 0 && r.node != s);
                match r.map(|r| (vertex_of[r.node.index()], r.port)) {
                    Some((rv, rp)) if rv != NONE => {
                        peer.push(rv);
                        peer_port.push(rp);
                    }
                    _ => {
                        peer.push(NONE);
                        peer_port.push(0);
                    }
                }
            }
        }
        base.push(peer.len() as u32);
        let topo = Self {
            node_of,
            lid,
            base,
            peer,
            peer_port,
        };
        topo.check_connected()?;
        Ok(topo)
    }

    fn len(&self) -> usize {
        self.node_of.len()
    }

    fn slots(&self, v: u32) -> std::ops::Range<usize> {
        self.base[v as usize] as usize..self.base[v as usize + 1] as usize
    }

    /// OpenSM's dry run: every switch must be reachable from the SM's switch.
    fn check_connected(&self) -> Result<(), RoutingError> {
        if self.len() == 0 {
            return Ok(());
        }
        let mut seen = vec![false; self.len()];
        let mut stack = vec![0u32];
        seen[0] = true;
        let mut count = 1;
        while let Some(v) = stack.pop() {
            for slot in self.slots(v) {
                let r = self.peer[slot];
                if r != NONE && !seen[r as usize] {
                    seen[r as usize] = true;
                    count += 1;
                    stack.push(r);
                }
            }
        }
        if count < self.len() {
            return Err(RoutingError::Disconnected {
                engine: "dfsssp",
                detail: format!(
                    "{} of {} switches cannot be reached from the others",
                    self.len() - count,
                    self.len()
                ),
            });
        }
        Ok(())
    }

    /// End ports attached to switches (CA and router ports) and the number of
    /// end-port LIDs per switch (its port 0 included), as OpenSM counts them.
    fn num_hca(&self, fabric: &Fabric) -> Vec<u64> {
        self.node_of
            .iter()
            .map(|&s| {
                let own = 1u64 << fabric.ports(s)[0].lmc.min(16);
                own + fabric
                    .neighbors(s)
                    .filter(|(_, r)| !fabric.node(r.node).is_switch())
                    .map(|(_, r)| 1u64 << fabric.port(r).map_or(0, |p| p.lmc.min(16)))
                    .sum::<u64>()
            })
            .collect()
    }

    /// OpenSM's port order list (routers left out: dfsssp skips them).
    fn port_order(
        &self,
        fabric: &Fabric,
        compute_nodes: Option<&[Guid]>,
    ) -> Result<Vec<EndPort>, RoutingError> {
        let num_hca = self.num_hca(fabric);
        let mut sw_list: Vec<u32> = (0..self.len() as u32).collect();
        sw_list.sort_by(|a, b| num_hca[*b as usize].cmp(&num_hca[*a as usize]));
        let cn: Option<std::collections::HashSet<Guid>> = compute_nodes
            .filter(|c| !c.is_empty())
            .map(|c| c.iter().copied().collect());
        let mut order = Vec::new();
        let add_cas = |filter: &dyn Fn(Guid) -> bool,
                       order: &mut Vec<EndPort>|
         -> Result<(), RoutingError> {
            for &v in &sw_list {
                let s = self.node_of[v as usize];
                for (p, r) in fabric.neighbors(s) {
                    let node = fabric.node(r.node);
                    if node.kind != NodeKind::Ca {
                        continue;
                    }
                    let Some(port) = fabric.port(r) else { continue };
                    if !filter(port.guid) {
                        continue;
                    }
                    if !port.lid.is_set() {
                        return Err(RoutingError::MissingLid(fabric.port_label(r)));
                    }
                    if port.lmc > 7
                        || port.lid.0 as u32 + (1u32 << port.lmc) - 1 > Lid::UNICAST_MAX.0 as u32
                    {
                        return Err(RoutingError::Unsupported {
                            engine: "dfsssp",
                            reason: format!("{} has a bad LID range", fabric.port_label(r)),
                        });
                    }
                    order.push(EndPort {
                        lid: port.lid.0,
                        lmc: port.lmc,
                        is_switch: false,
                        vertex: v,
                        sw_port: p,
                    });
                }
            }
            Ok(())
        };
        match &cn {
            Some(cn) => {
                add_cas(&|g| cn.contains(&g), &mut order)?;
                add_cas(&|g| !cn.contains(&g), &mut order)?;
            }
            None => add_cas(&|_| true, &mut order)?,
        }
        for &v in &sw_list {
            let port0 = &fabric.ports(self.node_of[v as usize])[0];
            order.push(EndPort {
                lid: port0.lid.0,
                lmc: port0.lmc,
                is_switch: true,
                vertex: v,
                sw_port: 0,
            });
        }
        Ok(order)
    }
}

/// LIDs of every CA port OpenSM discovers (cabled) and of every switch port 0:
/// the P of the initial link weight P².
fn total_lids(fabric: &Fabric) -> u64 {
    fabric
        .iter_nodes()
        .map(|(id, n)| match n.kind {
            NodeKind::Switch => 1u64 << fabric.ports(id)[0].lmc.min(16),
            NodeKind::Ca => fabric.ports(id)[1..]
                .iter()
                .filter(|p| p.remote.is_some())
                .map(|p| 1u64 << p.lmc.min(16))
                .sum(),
            NodeKind::Router => 0,
        })
        .sum()
}

/// Forwarding decisions per routed LID: `rows[row * switches + vertex]`.
#[derive(Debug)]
struct LidMatrix {
    /// Row → LID.
    lids: Vec<u16>,
    /// LID → row (`NONE` if not routed).
    row_of: Vec<u32>,
    /// Switches per row.
    width: usize,
    /// The ports.
    ports: Vec<PortNum>,
}

impl LidMatrix {
    fn row(&self, row: usize) -> &[PortNum] {
        &self.ports[row * self.width..(row + 1) * self.width]
    }

    fn get(&self, lid: u16, v: u32) -> PortNum {
        match self.row_of.get(lid as usize) {
            Some(&r) if r != NONE => self.ports[r as usize * self.width + v as usize],
            _ => NO_PORT,
        }
    }
}

#[cfg(test)]
mod tests;
