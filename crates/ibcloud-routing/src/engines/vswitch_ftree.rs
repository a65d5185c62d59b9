//! `vswitch-ftree`: Paper V's vSwitchFatTree (reference B §3.2), OpenSM's
//! fat-tree routing generalised to SR-IOV vSwitches with weighted counters.
//!
//! **vSwitches** are recognised at discovery as Paper V does: a switch with
//! exactly one link to another switch (its uplink to a physical leaf) and only
//! CAs on its other cabled ports. The CA on its lowest port is the PF (the
//! hypervisor), the others are VFs, in port order. The switch it hangs from
//! must not itself be a vSwitch. A vSwitch is treated as part of its
//! hypervisor, never as a tree switch: the tree is built (ranks, tuples, port
//! groups, exactly as `ftree` builds it) on the **physical view**, where each
//! vSwitch with its PF and VFs is one CA on the leaf port, carrying the PF's
//! GUIDs and LID ([`physical_view`]).
//!
//! **Routing**, in three passes:
//!
//! 1. VMs (VF LIDs with a running VM): leaf by leaf in tuple order, the
//!    hypervisors with VMs by ascending VM count, then PF LID; each VM (LID
//!    order) weighs `1 / VMs on its vSwitch`. Weights are exact: they are
//!    scaled to integers by the least common multiple `W` of the VM counts in
//!    the fabric, so every vSwitch weighs `W` and a VM `W / n`. Counters are
//!    ftree's, raised by the weight instead of 1. Leaves with fewer
//!    hypervisors with VMs than the fullest leaf route dummies of weight `W`
//!    (ftree's padding; a hypervisor without VMs counts as a dummy). CAs that
//!    are not behind a vSwitch weigh `W` like a hypervisor with one VM.
//! 2. PFs, with fresh counters and equal weights: exactly `ftree` on the
//!    physical view (PFs and plain CAs as compute nodes, dummies, then switch
//!    LIDs), so vSwitch-to-vSwitch routes are balanced on their own; its
//!    columns for PF, plain-CA and switch LIDs are kept.
//! 3. Copies: vSwitch LIDs and VF LIDs without a running VM take their PF's
//!    column (the paper's "phase 2" copy; a VM booted there later uses it).
//!    Each vSwitch's own table sends its PF and VF LIDs to their ports, its own
//!    LID to port 0 and every other LID to the uplink.
//!
//! Regression (tested): with one VM per hypervisor, the physical switches'
//! tables are identical to `ftree`'s on the equivalent fabric where each
//! hypervisor is one CA with the VM's LID (ties among hypervisors go by PF
//! LID, which is port order when LIDs grow with port numbers, as in the
//! fabrics `ibcloud-vswitch` builds).
//!
//! Without any vSwitch the result is `ftree`'s. `node_order` is refused.
//! Counters are 48 bits: a fabric whose `W × destinations` exceeds that is
//! refused (never reached below thousands of distinct VM counts' LCMs).

use std::collections::{HashMap, HashSet};

use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{
    Fabric, FabricBuilder, Guid, Lid, NodeId, NodeKind, NodeSpec, PortNum, PortRef,
};

use super::ftree::build::Tree;
use super::ftree::route::{Passes, Router, MAX_COUNTER};
use super::ftree::slots::{leaf_slots, Slot};
use super::ftree::FtreeEngine;
use crate::engine::{EngineOptions, Routing, RoutingEngine, RoutingError};

/// A CA port behind a vSwitch (the PF or a VF).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VPort {
    /// The CA node.
    pub node: NodeId,
    /// Its port (towards the vSwitch).
    pub port: PortNum,
    /// The vSwitch's port towards it.
    pub vswitch_port: PortNum,
    /// Its LID ([`Lid::NONE`] for a VF without one, dynamic scheme).
    pub lid: Lid,
    /// Its port GUID.
    pub guid: Guid,
}

/// A vSwitch found in a fabric, with its hypervisor's PF and VFs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VSwitchInfo {
    /// The vSwitch node.
    pub node: NodeId,
    /// Its LID (switch port 0).
    pub lid: Lid,
    /// Its port to the physical leaf switch.
    pub uplink: PortNum,
    /// The physical leaf switch.
    pub leaf: NodeId,
    /// The leaf's port to the vSwitch.
    pub leaf_port: PortNum,
    /// The PF (CA on the lowest port).
    pub pf: VPort,
    /// The VFs, in port order.
    pub vfs: Vec<VPort>,
}

/// A vSwitch candidate: uplink port, the switch it leads to, CA ports.
type Candidate = (PortNum, PortRef, Vec<(PortNum, PortRef)>);

/// A hypervisor on a leaf for the VM pass: VM count, PF LID, leaf port, VM LIDs.
type LeafHyp = (u64, u16, PortNum, Vec<u16>);

/// Finds every vSwitch (a switch with exactly one switch link and only CAs
/// otherwise, hanging from a switch that is not one), in node order.
pub fn find_vswitches(fabric: &Fabric) -> Vec<VSwitchInfo> {
    let candidate = |id: NodeId| -> Option<Candidate> {
        let n = fabric.node(id);
        if !n.is_switch() {
            return None;
        }
        let mut up = None;
        let mut cas = Vec::new();
        for (p, r) in fabric.neighbors(id) {
            if fabric.node(r.node).is_switch() {
                if up.is_some() {
                    return None;
                }
                up = Some((p, r));
            } else {
                cas.push((p, r));
            }
        }
        let (p, r) = up?;
        (!cas.is_empty()).then_some((p, r, cas))
    };
    let mut out = Vec::new();
    for id in fabric.switches() {
        let Some((uplink, remote, mut cas)) = candidate(id) else {
            continue;
        };
        if candidate(remote.node).is_some() {
            continue;
        }
        cas.sort_by_key(|&(p, _)| p);
        let vport = |(p, r): (PortNum, PortRef)| {
            let port = fabric.port(r).cloned().unwrap_or_default();
            VPort {
                node: r.node,
                port: r.port,
                vswitch_port: p,
                lid: port.lid,
                guid: port.guid,
            }
        };
        let pf = vport(cas[0]);
        let vfs = cas[1..].iter().map(|&c| vport(c)).collect();
        out.push(VSwitchInfo {
            node: id,
            lid: fabric.node_lid(id),
            uplink,
            leaf: remote.node,
            leaf_port: remote.port,
            pf,
            vfs,
        });
    }
    out
}

/// The fabric without its vSwitches: each vSwitch with its PF and VFs becomes
/// one CA on the leaf port with the PF's node GUID, port GUID and LID.
#[derive(Clone, Debug)]
pub struct PhysicalView {
    /// The physical fabric.
    pub fabric: Fabric,
    /// Node of the physical fabric → node of the original one (for a
    /// hypervisor CA: its vSwitch).
    pub original: Vec<NodeId>,
    /// The vSwitches, as [`find_vswitches`] returns them.
    pub vswitches: Vec<VSwitchInfo>,
}

impl PhysicalView {
    /// The physical-view node of an original node (switches and plain CAs;
    /// for a vSwitch, its hypervisor CA).
    pub fn node_of(&self, original: NodeId) -> Option<NodeId> {
        self.original
            .iter()
            .position(|&o| o == original)
            .map(|i| NodeId(i as u32))
    }
}

fn unsupported(reason: impl Into<String>) -> RoutingError {
    RoutingError::Unsupported {
        engine: "vswitch-ftree",
        reason: reason.into(),
    }
}

/// Builds the physical view (see [`PhysicalView`]).
pub fn physical_view(fabric: &Fabric) -> Result<PhysicalView, RoutingError> {
    let vswitches = find_vswitches(fabric);
    let mut role: HashMap<NodeId, Option<usize>> = HashMap::new();
    for (i, v) in vswitches.iter().enumerate() {
        role.insert(v.node, Some(i));
        role.insert(v.pf.node, None);
        for f in &v.vfs {
            role.insert(f.node, None);
        }
        if !v.pf.lid.is_set() {
            return Err(unsupported(format!(
                "the PF of vSwitch '{}' has no LID",
                fabric.node(v.node).description
            )));
        }
    }
    let mut b = FabricBuilder::with_capacity(fabric.num_nodes(), fabric.num_port_slots());
    let mut original = Vec::new();
    let mut new_id: HashMap<NodeId, NodeId> = HashMap::new();
    let bad = |e: ibcloud_fabric::TopologyError| unsupported(format!("physical view: {e}"));
    for (id, n) in fabric.iter_nodes() {
        let spec = match role.get(&id) {
            Some(None) => continue,
            Some(Some(i)) => {
                let v = &vswitches[*i];
                let pf = fabric.node(v.pf.node);
                let mut s = NodeSpec::new(NodeKind::Ca, pf.guid, 1, pf.description.clone());
                s.port_guids = vec![v.pf.guid];
                s.system_image_guid = pf.system_image_guid;
                s
            }
            None => {
                let mut s =
                    NodeSpec::new(n.kind, n.guid, n.num_ports as u32, n.description.clone());
                s.system_image_guid = n.system_image_guid;
                s.vendor_id = n.vendor_id;
                s.device_id = n.device_id;
                s.enhanced_port0 = n.enhanced_port0;
                s.rank = n.rank;
                if !n.is_switch() {
                    s.port_guids = (1..=n.num_ports)
                        .map(|p| fabric.ports(id)[p as usize].guid)
                        .collect();
                }
                s
            }
        };
        let nid = b.add_node(spec).map_err(bad)?;
        new_id.insert(id, nid);
        original.push(id);
    }
    let mut phys = b;
    // Links between kept nodes, and hypervisor CAs to their leaves.
    for l in fabric.links() {
        let (a, z) = (l.a, l.b);
        let map_end = |p: PortRef| -> Option<PortRef> {
            match role.get(&p.node) {
                Some(None) => None,
                Some(Some(i)) => {
                    (vswitches[*i].uplink == p.port).then(|| PortRef::new(new_id[&p.node], 1))
                }
                None => Some(PortRef::new(new_id[&p.node], p.port)),
            }
        };
        if let (Some(x), Some(y)) = (map_end(a), map_end(z)) {
            let rate = fabric.port(a).map(|p| p.rate).unwrap_or_default();
            phys.connect(x, y, rate).map_err(bad)?;
        }
    }
    let mut out = phys.build();
    for (i, &o) in original.clone().iter().enumerate() {
        let nid = NodeId(i as u32);
        let n = fabric.node(o);
        if let Some(Some(v)) = role.get(&o) {
            let v = &vswitches[*v];
            let lmc = fabric
                .port(PortRef::new(v.pf.node, v.pf.port))
                .map_or(0, |p| p.lmc);
            out.set_lid(PortRef::new(nid, 1), v.pf.lid, lmc)
                .map_err(bad)?;
        } else {
            for p in n.addressable_ports() {
                let port = &fabric.ports(o)[p as usize];
                if port.lid.is_set() {
                    out.set_lid(PortRef::new(nid, p), port.lid, port.lmc)
                        .map_err(bad)?;
                }
            }
        }
    }
    Ok(PhysicalView {
        fabric: out,
        original,
        vswitches,
    })
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Paper V's vSwitchFatTree.
#[derive(Clone, Debug, Default)]
pub struct VSwitchFtree {
    options: EngineOptions,
    running: Option<Vec<Lid>>,
}

impl VSwitchFtree {
    /// The engine with ftree's `roots` and `compute_nodes` options; every VF
    /// LID counts as a running VM.
    pub fn new(options: &EngineOptions) -> Self {
        Self {
            options: options.clone(),
            running: None,
        }
    }

    /// Only these VF LIDs hold running VMs; other VF LIDs get their PF's
    /// routes (prepopulated LIDs of idle VFs).
    pub fn with_running(mut self, running: Vec<Lid>) -> Self {
        self.running = Some(running);
        self
    }

    /// Registry constructor.
    pub(crate) fn boxed(options: &EngineOptions) -> Result<Box<dyn RoutingEngine>, RoutingError> {
        if options.node_order.is_some() {
            return Err(RoutingError::BadOptions(
                "vswitch-ftree does not take a node order".into(),
            ));
        }
        Ok(Box::new(Self::new(options)))
    }

    /// Routes `fabric` and returns the tables with the physical view used.
    pub fn route_with_view(
        &self,
        fabric: &Fabric,
    ) -> Result<(Routing, PhysicalView), RoutingError> {
        fabric
            .lid_table()
            .map_err(|e| unsupported(format!("the fabric's LIDs are unusable: {e}")))?;
        let view = physical_view(fabric)?;
        let engine = FtreeEngine::with_options(&EngineOptions {
            node_order: None,
            ..self.options.clone()
        });
        let tree = Tree::build(&view.fabric, &engine).map_err(|e| match e {
            RoutingError::Unsupported { reason, .. } => unsupported(reason),
            other => other,
        })?;
        let map: Vec<NodeId> = tree
            .sw
            .iter()
            .map(|s| view.original[s.node.index()])
            .collect();
        let mut tables = ForwardingTables::new(fabric);

        // Pass 1: VMs, weighted.
        let running: Option<HashSet<u16>> = self
            .running
            .as_ref()
            .map(|r| r.iter().map(|l| l.0).collect());
        let is_running = |l: Lid| l.is_set() && running.as_ref().is_none_or(|r| r.contains(&l.0));
        let by_pf: HashMap<u16, &VSwitchInfo> =
            view.vswitches.iter().map(|v| (v.pf.lid.0, v)).collect();
        let pf_slots = leaf_slots(&tree, None)?;
        // Per leaf: (VM count, PF LID, leaf port, VM LIDs).
        let mut leaves: Vec<Vec<LeafHyp>> = Vec::new();
        let mut lcm = 1u64;
        for row in &pf_slots {
            let mut hyps = Vec::new();
            for s in row.iter().flatten() {
                let vms: Vec<u16> = match by_pf.get(&s.lid) {
                    Some(v) => {
                        let mut l: Vec<u16> = v
                            .vfs
                            .iter()
                            .filter(|f| is_running(f.lid))
                            .map(|f| f.lid.0)
                            .collect();
                        l.sort_unstable();
                        l
                    }
                    None => vec![s.lid],
                };
                if vms.is_empty() {
                    continue;
                }
                let n = vms.len() as u64;
                lcm = lcm / gcd(lcm, n) * n;
                if lcm > MAX_COUNTER {
                    return Err(unsupported(
                        "the VM counts' least common multiple is too large for exact 48-bit counters",
                    ));
                }
                hyps.push((n, s.lid, s.port, vms));
            }
            hyps.sort_by_key(|h| (h.0, h.1));
            leaves.push(hyps);
        }
        let width = tree.max_cn_per_leaf as usize;
        let destinations = (leaves.len() * width.max(1)) as u64;
        if lcm
            .checked_mul(destinations + 1)
            .is_none_or(|x| x > MAX_COUNTER)
        {
            return Err(unsupported(
                "VM weights would overflow the 48-bit port counters",
            ));
        }
        let vm_slots: Vec<Vec<Option<Slot>>> = leaves
            .iter()
            .map(|hyps| {
                let mut row: Vec<Option<Slot>> = Vec::new();
                for (n, _, port, vms) in hyps {
                    for &lid in vms {
                        row.push(Some(Slot {
                            lid,
                            port: *port,
                            weight: lcm / n,
                        }));
                    }
                }
                for _ in hyps.len()..width {
                    row.push(None);
                }
                row
            })
            .collect();
        Router::new(&tree, &vm_slots)
            .with_dummy_weight(lcm)
            .run_passes(&mut tables, &map, Passes::CNS)?;

        // Pass 2: ftree on the physical view.
        Router::new(&tree, &pf_slots).run_passes(&mut tables, &map, Passes::ALL)?;

        // Pass 3: copies and vSwitch tables.
        finish(fabric, &view, &map, &mut tables, &is_running);
        Ok((
            Routing {
                tables,
                path_sls: None,
            },
            view,
        ))
    }
}

/// Pass 3: vSwitch LIDs and VF LIDs that are not running VMs take their PF's
/// column on the physical switches `map`; every vSwitch gets its own table.
fn finish(
    fabric: &Fabric,
    view: &PhysicalView,
    map: &[NodeId],
    tables: &mut ForwardingTables,
    is_running: &dyn Fn(Lid) -> bool,
) {
    let physical: Vec<NodeId> = map.to_vec();
    let lids: Vec<(Lid, PortRef)> = fabric.lid_ports().map(|(p, port)| (port.lid, p)).collect();
    for v in &view.vswitches {
        let mut copy = vec![v.lid];
        copy.extend(
            v.vfs
                .iter()
                .filter(|f| f.lid.is_set() && !is_running(f.lid))
                .map(|f| f.lid),
        );
        for &sw in &physical {
            let pf_port = tables.get(sw, v.pf.lid);
            for &l in &copy {
                if l.is_set() {
                    tables.set(sw, l, pf_port.unwrap_or(ibcloud_fabric::lft::NO_PORT));
                }
            }
        }
        for &(l, _) in &lids {
            tables.set(v.node, l, v.uplink);
        }
        if v.lid.is_set() {
            tables.set(v.node, v.lid, 0);
        }
        for f in std::iter::once(&v.pf).chain(&v.vfs) {
            if f.lid.is_set() {
                tables.set(v.node, f.lid, f.vswitch_port);
            }
        }
    }
}

/// Routes a virtualized fabric of any topology with `engine` on its physical
/// view and gives every VF and vSwitch LID its PF's routes (Paper V's
/// two-phase "vSwitch-to-vSwitch" strategy): the fallback where
/// `vswitch-ftree` does not apply.
pub fn route_copying(fabric: &Fabric, engine: &dyn RoutingEngine) -> Result<Routing, RoutingError> {
    let view = physical_view(fabric)?;
    let r = engine.route(&view.fabric)?;
    let mut tables = ForwardingTables::new(fabric);
    let mut map = Vec::new();
    for sw in view.fabric.switches() {
        let orig = view.original[sw.index()];
        map.push(orig);
        for (lid, &p) in r.tables.table(sw).iter().enumerate() {
            if p != ibcloud_fabric::lft::NO_PORT {
                tables.set(orig, Lid(lid as u16), p);
            }
        }
    }
    finish(fabric, &view, &map, &mut tables, &|_| false);
    Ok(Routing {
        tables,
        path_sls: None,
    })
}

impl RoutingEngine for VSwitchFtree {
    fn name(&self) -> &'static str {
        "vswitch-ftree"
    }

    fn route(&self, fabric: &Fabric) -> Result<Routing, RoutingError> {
        self.route_with_view(fabric).map(|(r, _)| r)
    }
}

#[cfg(test)]
mod tests;
