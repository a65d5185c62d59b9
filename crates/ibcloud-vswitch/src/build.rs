//! Virtualized fabrics: every CA of a physical fabric becomes a hypervisor
//! whose SR-IOV HCA is emulated as the papers' ibsim testbed did — a small
//! switch (the vSwitch) with one uplink to the leaf, the PF and `vfs` VFs as
//! one-port CAs behind it — so the result exports as an ibsim net or
//! ibnetdiscover file with the existing writers.
//!
//! Layout of a vSwitch: port 1 = uplink, port 2 = PF, ports 3.. = VFs.
//! GUIDs: the PF keeps the physical CA's node and port GUIDs; vSwitch and VF
//! GUIDs are allocated above the highest GUID in the fabric. Descriptions:
//! PF `"<hyp>"` (the physical CA's description), vSwitch `"<w>-vSwitch"`, VF
//! `"<w>-VF<k>"` (`<w>`: the first word of the PF's; tools such as ibdmchk
//! name systems by it), with ` vm=<name>` while a VM holds it (that is how a
//! placement travels in a topology file).
//!
//! LIDs, packed from 1: physical switches in node order, then per hypervisor
//! (CA node order) its vSwitch, its PF and — prepopulated scheme — its VFs;
//! dynamic VF LIDs are handed out at VM boot.

use ibcloud_fabric::{Fabric, FabricBuilder, Guid, Lid, NodeId, NodeKind, NodeSpec, PortRef};

use crate::capacity::{lids_needed, UNICAST_LIDS};
use crate::error::VSwitchError;
use crate::model::Scheme;

/// Marker in a VF's description for the VM it holds.
pub const VM_TAG: &str = " vm=";

/// Builds the virtualized fabric (LIDs assigned, no VM yet).
pub fn virtualize(physical: &Fabric, vfs: u32, scheme: Scheme) -> Result<Fabric, VSwitchError> {
    if vfs == 0 || vfs > 252 {
        return Err(VSwitchError::BadInput(format!(
            "VFs per hypervisor must be 1..=252 (got {vfs})"
        )));
    }
    let hyps: Vec<NodeId> = physical.cas().collect();
    if hyps.is_empty() {
        return Err(VSwitchError::BadInput(
            "the fabric has no CA to virtualize".into(),
        ));
    }
    for &h in &hyps {
        let n = physical.node(h);
        let cabled = physical.neighbors(h).count();
        if cabled != 1 {
            return Err(VSwitchError::BadInput(format!(
                "CA '{}' has {cabled} cabled ports; a hypervisor needs exactly one",
                n.description
            )));
        }
        let (_, r) = physical.neighbors(h).next().expect("one neighbour");
        if !physical.node(r.node).is_switch() {
            return Err(VSwitchError::BadInput(format!(
                "CA '{}' is not cabled to a switch",
                n.description
            )));
        }
    }
    let switches = physical.switches().count() as u64;
    let needed = lids_needed(
        switches,
        hyps.len() as u64,
        vfs as u64,
        0,
        scheme == Scheme::Prepopulated,
    );
    if needed > UNICAST_LIDS {
        return Err(VSwitchError::LidExhausted {
            scheme: scheme.name(),
            needed,
        });
    }
    let mut next_guid = physical
        .nodes()
        .iter()
        .map(|n| n.guid.0)
        .chain(physical.lid_ports().map(|(_, p)| p.guid.0))
        .max()
        .unwrap_or(0)
        .saturating_add(0x1000)
        & !0xFF;
    let mut guid = || {
        next_guid += 0x100;
        Guid(next_guid)
    };
    let extra = hyps.len() * (vfs as usize + 1);
    let mut b = FabricBuilder::with_capacity(
        physical.num_nodes() + extra,
        physical.num_port_slots() + extra * 3,
    );
    let bad = |e: ibcloud_fabric::TopologyError| VSwitchError::BadInput(e.to_string());
    // Hypervisor nodes first (PF, vSwitch, VFs), so that the first node of an
    // ibsim net file is a CA: ibsim puts the SM's port on it.
    struct Hyp {
        pf: NodeId,
        vsw: NodeId,
        vfs: Vec<NodeId>,
        leaf: PortRef,
        rate: ibcloud_fabric::LinkRate,
    }
    let mut hyp_nodes = Vec::with_capacity(hyps.len());
    for &h in &hyps {
        let n = physical.node(h);
        let (hp, r) = physical.neighbors(h).next().expect("checked");
        let rate = physical
            .port(PortRef::new(h, hp))
            .map(|p| p.rate)
            .unwrap_or_default();
        let name = n.description.clone();
        // Tools such as ibdmchk name a system by the first word of its
        // description: every node of a hypervisor gets its own first word.
        let word = name.split_whitespace().next().unwrap_or("hyp").to_string();
        let mut pf = NodeSpec::new(NodeKind::Ca, n.guid, 1, name.clone());
        pf.port_guids = vec![physical.ports(h)[hp as usize].guid];
        pf.system_image_guid = n.system_image_guid;
        let pf = b.add_node(pf).map_err(bad)?;
        let mut vs = NodeSpec::new(NodeKind::Switch, guid(), 2 + vfs, format!("{word}-vSwitch"));
        vs.device_id = 0x1003;
        let vsw = b.add_node(vs).map_err(bad)?;
        let mut list = Vec::new();
        for k in 0..vfs {
            list.push(
                b.add_node(NodeSpec::new(
                    NodeKind::Ca,
                    guid(),
                    1,
                    format!("{word}-VF{k}"),
                ))
                .map_err(bad)?,
            );
        }
        hyp_nodes.push(Hyp {
            pf,
            vsw,
            vfs: list,
            leaf: r,
            rate,
        });
    }
    let mut map = vec![NodeId(u32::MAX); physical.num_nodes()];
    for (id, n) in physical.iter_nodes().filter(|(_, n)| n.is_switch()) {
        let mut s = NodeSpec::new(n.kind, n.guid, n.num_ports as u32, n.description.clone());
        s.system_image_guid = n.system_image_guid;
        s.vendor_id = n.vendor_id;
        s.device_id = n.device_id;
        s.enhanced_port0 = n.enhanced_port0;
        s.rank = n.rank;
        map[id.index()] = b.add_node(s).map_err(bad)?;
    }
    for l in physical.links() {
        if physical.node(l.a.node).is_switch() && physical.node(l.b.node).is_switch() {
            let rate = physical.port(l.a).map(|p| p.rate).unwrap_or_default();
            b.connect(
                PortRef::new(map[l.a.node.index()], l.a.port),
                PortRef::new(map[l.b.node.index()], l.b.port),
                rate,
            )
            .map_err(bad)?;
        }
    }
    let mut lids: Vec<(NodeId, u8)> = physical.switches().map(|s| (map[s.index()], 0u8)).collect();
    for h in &hyp_nodes {
        b.connect(
            PortRef::new(h.vsw, 1),
            PortRef::new(map[h.leaf.node.index()], h.leaf.port),
            h.rate,
        )
        .map_err(bad)?;
        b.connect(PortRef::new(h.pf, 1), PortRef::new(h.vsw, 2), h.rate)
            .map_err(bad)?;
        lids.push((h.vsw, 0));
        lids.push((h.pf, 1));
        for (k, &vf) in h.vfs.iter().enumerate() {
            b.connect(
                PortRef::new(vf, 1),
                PortRef::new(h.vsw, 3 + k as u8),
                h.rate,
            )
            .map_err(bad)?;
            if scheme == Scheme::Prepopulated {
                lids.push((vf, 1));
            }
        }
    }
    let mut f = b.build();
    for (i, (n, p)) in lids.into_iter().enumerate() {
        f.set_lid(PortRef::new(n, p), Lid(i as u16 + 1), 0)
            .map_err(bad)?;
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibcloud_fabric::generate::preset;
    use ibcloud_routing::engines::vswitch_ftree::find_vswitches;

    #[test]
    fn layout_and_discovery() {
        let p = preset("4-ary-2-full").unwrap().build().unwrap();
        let f = virtualize(&p, 4, Scheme::Prepopulated).unwrap();
        assert_eq!(f.count(NodeKind::Switch), 12 + 32);
        assert_eq!(f.count(NodeKind::Ca), 32 * 5);
        assert_eq!(f.lids_in_use(), 12 + 32 * 6);
        f.lid_table().unwrap();
        let v = find_vswitches(&f);
        assert_eq!(v.len(), 32);
        assert!(v.iter().all(|v| v.vfs.len() == 4 && v.uplink == 1));
        let d = virtualize(&p, 4, Scheme::Dynamic).unwrap();
        assert_eq!(d.lids_in_use(), 12 + 32 * 2);
    }

    #[test]
    fn refuses_bad_input() {
        let p = preset("4-ary-2-full").unwrap().build().unwrap();
        assert!(matches!(
            virtualize(&p, 0, Scheme::Dynamic),
            Err(VSwitchError::BadInput(_))
        ));
        // 16-ary-2: 256 hypervisors × (2 + 252) LIDs > 49151.
        let big = preset("16-ary-2").unwrap().build().unwrap();
        assert!(matches!(
            virtualize(&big, 252, Scheme::Prepopulated),
            Err(VSwitchError::LidExhausted { .. })
        ));
    }
}
