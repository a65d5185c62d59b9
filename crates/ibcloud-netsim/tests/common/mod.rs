//! Small fabrics with hand-written forwarding tables for the scenario tests.
#![allow(dead_code)]

use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{
    Fabric, FabricBuilder, Guid, Lid, LinkRate, NodeId, NodeKind, NodeSpec, PortRef,
};
use ibcloud_netsim::{FlowSample, SimResult};

pub fn rate(s: &str) -> LinkRate {
    s.parse().unwrap()
}

/// One switch, `n` hosts H1..Hn on ports 1..n; host i has LID i.
pub fn star(n: u32, r: &str) -> (Fabric, ForwardingTables) {
    let mut b = FabricBuilder::new();
    let sw = b
        .add_node(NodeSpec::new(NodeKind::Switch, Guid(0x100), n.max(2), "S"))
        .unwrap();
    let mut hosts = Vec::new();
    for i in 1..=n {
        let h = b
            .add_node(NodeSpec::new(
                NodeKind::Ca,
                Guid(0x1000 + i as u64),
                1,
                format!("H{i}"),
            ))
            .unwrap();
        b.connect(PortRef::new(sw, i as u8), PortRef::new(h, 1), rate(r))
            .unwrap();
        hosts.push(h);
    }
    let mut f = b.build();
    f.set_lid(PortRef::new(sw, 0), Lid(100), 0).unwrap();
    for (i, &h) in hosts.iter().enumerate() {
        f.set_lid(PortRef::new(h, 1), Lid(i as u16 + 1), 0).unwrap();
    }
    let mut t = ForwardingTables::new(&f);
    for i in 1..=n {
        t.set(sw, Lid(i as u16), i as u8);
    }
    t.set(sw, Lid(100), 0);
    (f, t)
}

/// S003's Fig. 3a as E §3.3.1 infers it: leaves A, B, C with two hosts each
/// (1,2 | 3,4 | 5,6) and two up-links each to one root (links 1–6). A leaf
/// sends up on up-link k for the destination that is host k of its leaf;
/// the root sends down on the matching link. So 2→3 shares up-link 1 of A
/// with 1→5, and 2→4 takes up-link 2 (link 2 of Exp. II).
pub fn testbed_3a(r: &str) -> (Fabric, ForwardingTables, Vec<NodeId>) {
    let mut b = FabricBuilder::new();
    let root = b
        .add_node(NodeSpec::new(NodeKind::Switch, Guid(0x200), 24, "Root"))
        .unwrap();
    let mut leaves = Vec::new();
    for (i, name) in ["A", "B", "C"].iter().enumerate() {
        let l = b
            .add_node(NodeSpec::new(
                NodeKind::Switch,
                Guid(0x300 + i as u64),
                24,
                *name,
            ))
            .unwrap();
        leaves.push(l);
    }
    let mut hosts = Vec::new();
    for h in 1..=6u32 {
        let id = b
            .add_node(NodeSpec::new(
                NodeKind::Ca,
                Guid(0x1000 + h as u64),
                1,
                format!("H{h}"),
            ))
            .unwrap();
        let leaf = leaves[((h - 1) / 2) as usize];
        let k = ((h - 1) % 2 + 1) as u8;
        b.connect(PortRef::new(leaf, k), PortRef::new(id, 1), rate(r))
            .unwrap();
        hosts.push(id);
    }
    for (li, &l) in leaves.iter().enumerate() {
        for k in 1..=2u8 {
            b.connect(
                PortRef::new(l, 2 + k),
                PortRef::new(root, (2 * li) as u8 + k),
                rate(r),
            )
            .unwrap();
        }
    }
    let mut f = b.build();
    f.set_lid(PortRef::new(root, 0), Lid(20), 0).unwrap();
    for (i, &l) in leaves.iter().enumerate() {
        f.set_lid(PortRef::new(l, 0), Lid(21 + i as u16), 0)
            .unwrap();
    }
    for (i, &h) in hosts.iter().enumerate() {
        f.set_lid(PortRef::new(h, 1), Lid(i as u16 + 1), 0).unwrap();
    }
    let mut t = ForwardingTables::new(&f);
    for h in 1..=6u16 {
        let leaf_of = ((h - 1) / 2) as usize;
        let k = ((h - 1) % 2 + 1) as u8;
        for (li, &l) in leaves.iter().enumerate() {
            t.set(l, Lid(h), if li == leaf_of { k } else { 2 + k });
        }
        t.set(root, Lid(h), (2 * leaf_of) as u8 + k);
    }
    (f, t, hosts)
}

/// Mean Gb/s of `flow` over sweep intervals ending in (from, to] (ps).
pub fn gbps(r: &SimResult, flow: u32, from: u64, to: u64) -> f64 {
    let s: Vec<&FlowSample> = r
        .flow_series
        .iter()
        .filter(|x| x.flow == flow && x.time > from && x.time <= to)
        .collect();
    assert!(!s.is_empty(), "no samples for flow {flow}");
    s.iter().map(|x| x.gbps).sum::<f64>() / s.len() as f64
}
