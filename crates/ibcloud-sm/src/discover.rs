//! Discovery by directed route, breadth first from the SM's port, one hop
//! level at a time (each level is one batch through the SMP window):
//! NodeInfo along every new path; for every node seen for the first time
//! NodeDescription, SwitchInfo (switches) and PortInfo on every port
//! (switches: 0..=N; CAs: the port reached). A switch's link-up ports other
//! than the one it was reached on extend the next level's paths. A node
//! reached again by another path only adds the link (and, for a CA, its
//! PortInfo on that port).
//!
//! Nodes that do not answer are listed in [`Discovery::unreachable`]; the
//! rest of the subnet is still discovered.

use crate::error::SmError;
use crate::mads::{Mads, Request};
use crate::transport::Transport;
use crate::wire::{
    attr, NodeDescriptionRepr, NodeInfoRepr, NodeType, PortInfoRepr, Route, SmpRepr, SwitchInfoRepr,
};
use ibcloud_fabric::{Fabric, FabricBuilder, Guid, NodeKind, NodeSpec, PortRef};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One node as the SM saw it.
#[derive(Clone, Debug)]
pub struct SeenNode {
    /// NodeInfo (as first reached).
    pub info: NodeInfoRepr,
    /// NodeDescription.
    pub description: String,
    /// SwitchInfo of a switch.
    pub switch_info: Option<SwitchInfoRepr>,
    /// PortInfo by port number.
    pub ports: BTreeMap<u8, PortInfoRepr>,
    /// Port GUIDs of CA ports by port number.
    pub port_guids: BTreeMap<u8, u64>,
    /// A directed route to every port reached (a switch: its port 0).
    pub routes: BTreeMap<u8, Vec<u8>>,
}

impl SeenNode {
    /// The directed route that reaches this node (switch) or CA port.
    pub fn route_to(&self, port: u8) -> Option<&Vec<u8>> {
        if self.info.node_type == NodeType::Switch {
            self.routes.get(&0)
        } else {
            self.routes.get(&port)
        }
    }
}

/// What one discovery sweep found.
#[derive(Clone, Debug, Default)]
pub struct Discovery {
    /// Nodes in discovery order (the SM's own node first).
    pub nodes: Vec<SeenNode>,
    /// Node GUID → index in `nodes`.
    pub by_guid: HashMap<u64, usize>,
    /// Links as ((node, port), (node, port)), each once, in discovery order.
    pub links: Vec<((usize, u8), (usize, u8))>,
    /// Paths that did not answer (route label and reason).
    pub unreachable: Vec<(String, String)>,
    /// The SM's own node and port.
    pub sm_port: (usize, u8),
}

impl Discovery {
    /// The number of switches.
    pub fn switches(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| n.info.node_type == NodeType::Switch)
            .count()
    }
}

struct Probe {
    path: Vec<u8>,
    from: Option<(usize, u8)>,
}

/// Discovers the subnet reachable from the SM's port.
pub fn discover<T: Transport>(mads: &mut Mads<T>) -> Result<Discovery, SmError> {
    let mut d = Discovery::default();
    let mut frontier = vec![Probe {
        path: Vec::new(),
        from: None,
    }];
    let mut link_set: BTreeSet<((usize, u8), (usize, u8))> = BTreeSet::new();
    let mut described: BTreeSet<usize> = BTreeSet::new();
    while !frontier.is_empty() {
        let reqs: Vec<Request> = frontier
            .iter()
            .map(|p| Request::get(attr::NODE_INFO, 0, Route::Directed(p.path.clone())))
            .collect();
        let answers = mads.run(&reqs);
        // Nodes and ports new at this level, with the path that reached them.
        let mut fresh: Vec<(usize, u8)> = Vec::new();
        for (probe, ans) in frontier.iter().zip(answers) {
            let info = match ans.and_then(|s| Ok(NodeInfoRepr::parse(&s.data)?)) {
                Ok(i) => i,
                Err(e) => {
                    let label = Route::Directed(probe.path.clone()).label();
                    if probe.path.is_empty() {
                        return Err(SmError::Refused(format!(
                            "the SM's own port does not answer NodeInfo: {e}"
                        )));
                    }
                    d.unreachable.push((label, e.to_string()));
                    continue;
                }
            };
            let port = info.local_port;
            let idx = match d.by_guid.get(&info.node_guid) {
                Some(&i) => i,
                None => {
                    let i = d.nodes.len();
                    d.by_guid.insert(info.node_guid, i);
                    d.nodes.push(SeenNode {
                        info: info.clone(),
                        description: String::new(),
                        switch_info: None,
                        ports: BTreeMap::new(),
                        port_guids: BTreeMap::new(),
                        routes: BTreeMap::new(),
                    });
                    i
                }
            };
            let node = &mut d.nodes[idx];
            let key = if info.node_type == NodeType::Switch {
                0
            } else {
                port
            };
            if let std::collections::btree_map::Entry::Vacant(e) = node.routes.entry(key) {
                e.insert(probe.path.clone());
                if info.node_type != NodeType::Switch {
                    node.port_guids.insert(port, info.port_guid);
                }
                fresh.push((idx, port));
            }
            if probe.path.is_empty() {
                d.sm_port = (idx, port);
            }
            if let Some(from) = probe.from {
                let (a, b) = (from, (idx, port));
                let key = if a <= b { (a, b) } else { (b, a) };
                if link_set.insert(key) {
                    d.links.push((a, b));
                }
            }
        }
        // Details of what is new.
        let mut reqs = Vec::new();
        let mut what: Vec<(usize, u16, u8)> = Vec::new();
        for &(idx, port) in &fresh {
            let node = &d.nodes[idx];
            let is_switch = node.info.node_type == NodeType::Switch;
            let route = Route::Directed(node.route_to(port).cloned().unwrap_or_default());
            if described.insert(idx) {
                reqs.push(Request::get(attr::NODE_DESCRIPTION, 0, route.clone()));
                what.push((idx, attr::NODE_DESCRIPTION, 0));
            }
            if is_switch {
                reqs.push(Request::get(attr::SWITCH_INFO, 0, route.clone()));
                what.push((idx, attr::SWITCH_INFO, 0));
                for p in 0..=node.info.num_ports {
                    reqs.push(Request::get(attr::PORT_INFO, p as u32, route.clone()));
                    what.push((idx, attr::PORT_INFO, p));
                }
            } else {
                reqs.push(Request::get(attr::PORT_INFO, port as u32, route.clone()));
                what.push((idx, attr::PORT_INFO, port));
            }
        }
        let answers = mads.run(&reqs);
        for ((idx, a, p), ans) in what.into_iter().zip(answers) {
            let label =
                Route::Directed(d.nodes[idx].route_to(p).cloned().unwrap_or_default()).label();
            let smp: SmpRepr = match ans {
                Ok(s) => s,
                Err(e) => {
                    d.unreachable.push((label, e.to_string()));
                    continue;
                }
            };
            let node = &mut d.nodes[idx];
            match a {
                attr::NODE_DESCRIPTION => {
                    node.description = NodeDescriptionRepr::parse(&smp.data)?.0
                }
                attr::SWITCH_INFO => node.switch_info = Some(SwitchInfoRepr::parse(&smp.data)?),
                _ => {
                    node.ports.insert(p, PortInfoRepr::parse(&smp.data)?);
                }
            }
        }
        // The next level: out of every new switch (and out of the SM's own
        // CA port), through each link-up port other than the arrival one.
        let mut next = Vec::new();
        for &(idx, port) in &fresh {
            let node = &d.nodes[idx];
            let base = node.route_to(port).cloned().unwrap_or_default();
            let is_switch = node.info.node_type == NodeType::Switch;
            if is_switch {
                if node.routes.len() != 1 {
                    continue;
                }
                for p in 1..=node.info.num_ports {
                    if p == port && !base.is_empty() {
                        continue;
                    }
                    if node.ports.get(&p).is_some_and(|pi| pi.link_up())
                        && base.len() < crate::wire::smp::MAX_HOPS
                    {
                        let mut path = base.clone();
                        path.push(p);
                        next.push(Probe {
                            path,
                            from: Some((idx, p)),
                        });
                    }
                }
            } else if base.is_empty() && node.ports.get(&port).is_some_and(|pi| pi.link_up()) {
                next.push(Probe {
                    path: vec![port],
                    from: Some((idx, port)),
                });
            }
        }
        frontier = next;
    }
    Ok(d)
}

/// Builds ibcloud's fabric model from a discovery (no LIDs yet), nodes in
/// discovery order.
pub fn to_fabric(d: &Discovery) -> Result<(Fabric, Vec<ibcloud_fabric::NodeId>), SmError> {
    to_fabric_ordered(d, None)
}

/// As [`to_fabric`], but when `previous` holds exactly the discovered
/// nodes, they keep its node ids (so old and new tables compare entry by
/// entry, as the reconfiguration methods need).
pub fn to_fabric_ordered(
    d: &Discovery,
    previous: Option<&Fabric>,
) -> Result<(Fabric, Vec<ibcloud_fabric::NodeId>), SmError> {
    let mut order: Vec<usize> = (0..d.nodes.len()).collect();
    if let Some(prev) = previous {
        let same = prev.num_nodes() == d.nodes.len()
            && d.nodes
                .iter()
                .all(|n| prev.node_by_guid(Guid(n.info.node_guid)).is_some());
        if same {
            order.sort_by_key(|&i| {
                prev.node_by_guid(Guid(d.nodes[i].info.node_guid))
                    .map(|x| x.0)
            });
        }
    }
    let mut b = FabricBuilder::with_capacity(d.nodes.len(), d.nodes.len() * 8);
    let mut ids = vec![ibcloud_fabric::NodeId(0); d.nodes.len()];
    for &i in &order {
        let n = &d.nodes[i];
        let kind = match n.info.node_type {
            NodeType::Switch => NodeKind::Switch,
            NodeType::Ca => NodeKind::Ca,
            NodeType::Router => NodeKind::Router,
        };
        let mut spec = NodeSpec::new(
            kind,
            Guid(n.info.node_guid),
            n.info.num_ports as u32,
            n.description.clone(),
        );
        spec.system_image_guid = Guid(n.info.system_image_guid);
        spec.vendor_id = n.info.vendor_id;
        spec.device_id = n.info.device_id as u32;
        if kind != NodeKind::Switch {
            spec.port_guids = (1..=n.info.num_ports)
                .map(|p| {
                    Guid(
                        n.port_guids
                            .get(&p)
                            .copied()
                            .unwrap_or(n.info.node_guid + p as u64),
                    )
                })
                .collect();
        } else if let Some(si) = &n.switch_info {
            spec.enhanced_port0 = si.enhanced_port0;
        }
        ids[i] = b.add_node(spec)?;
    }
    for &((a, pa), (bn, pb)) in &d.links {
        let rate = d.nodes[a]
            .ports
            .get(&pa)
            .and_then(|p| p.rate())
            .unwrap_or_default();
        b.connect(PortRef::new(ids[a], pa), PortRef::new(ids[bn], pb), rate)?;
    }
    Ok((b.build(), ids))
}
