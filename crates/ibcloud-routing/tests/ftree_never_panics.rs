//! The `ftree` engine never panics: random cablings of switches and CAs,
//! fat-trees with random faults and extra cables, with or without root and
//! CN lists, give tables or an error. Tables it returns route every switch's
//! own LID to port 0 and only use cabled ports.

use ibcloud_fabric::generate::{inject_faults, preset, FaultSpec};
use ibcloud_fabric::lids::{assign_lids, LidOptions};
use ibcloud_fabric::{Fabric, FabricBuilder, Guid, LinkRate, NodeId, NodeKind, NodeSpec, PortRef};
use ibcloud_routing::engines::ftree::FtreeEngine;
use ibcloud_routing::{EngineOptions, Routing, RoutingEngine};
use proptest::prelude::*;

/// `switches` 6-port switches then `cas` 2-port CAs, cabled in order of
/// `pairs` (indices into the free ports, taken modulo), LIDs packed.
fn random_fabric(switches: usize, cas: usize, pairs: &[(usize, usize)]) -> Fabric {
    let mut b = FabricBuilder::new();
    let mut free = Vec::new();
    for i in 0..switches + cas {
        let (kind, ports) = if i < switches {
            (NodeKind::Switch, 6u8)
        } else {
            (NodeKind::Ca, 2)
        };
        let id = b
            .add_node(NodeSpec::new(
                kind,
                Guid(0x1000 + ((i as u64) << 8)),
                ports as u32,
                format!("n{i}"),
            ))
            .unwrap();
        free.extend((1..=ports).map(|p| PortRef::new(id, p)));
    }
    for &(x, y) in pairs {
        if free.len() < 2 {
            break;
        }
        let a = free.swap_remove(x % free.len());
        let c = free.swap_remove(y % free.len());
        b.connect(a, c, LinkRate::default()).unwrap();
    }
    let mut f = b.build();
    assign_lids(&mut f, &LidOptions::default()).unwrap();
    f
}

/// `f` with up to `n` more cables between free switch ports, chosen by `seed`.
fn with_extra_cables(f: &Fabric, n: usize, seed: u64) -> Fabric {
    let mut free: Vec<PortRef> = f
        .switches()
        .flat_map(|s| f.node(s).external_ports().map(move |p| PortRef::new(s, p)))
        .filter(|&p| f.remote(p).is_none())
        .collect();
    let mut b = FabricBuilder::new();
    for (id, node) in f.iter_nodes() {
        let nid = b
            .add_node(NodeSpec::new(
                node.kind,
                node.guid,
                node.num_ports as u32,
                node.description.clone(),
            ))
            .unwrap();
        assert_eq!(nid, id);
        for (p, port) in f.ports(id).iter().enumerate() {
            let slot = b.port_mut(PortRef::new(nid, p as u8)).unwrap();
            (slot.guid, slot.lid, slot.lmc) = (port.guid, port.lid, port.lmc);
        }
    }
    for l in f.links() {
        b.connect(l.a, l.b, LinkRate::default()).unwrap();
    }
    let mut x = seed | 1;
    for _ in 0..n {
        if free.len() < 2 {
            break;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let a = free.swap_remove(x as usize % free.len());
        let c = free.swap_remove((x >> 32) as usize % free.len());
        if a.node != c.node {
            b.connect(a, c, LinkRate::default()).unwrap();
        }
    }
    b.build()
}

/// The checks every result must pass.
fn check(f: &Fabric, r: Option<Routing>) -> Result<(), TestCaseError> {
    let Some(r) = r else { return Ok(()) };
    for sw in f.switches() {
        let t = r.tables.table(sw);
        let own = f.node_lid(sw).0 as usize;
        if t.get(own).is_some_and(|&p| p != 255) {
            prop_assert_eq!(t[own], 0);
        }
        for (lid, &p) in t.iter().enumerate() {
            if p != 255 && p != 0 {
                prop_assert!(
                    f.remote(PortRef::new(sw, p)).is_some(),
                    "LID {} leaves by an uncabled port {}",
                    lid,
                    p
                );
            }
        }
    }
    Ok(())
}

fn engines(f: &Fabric, seed: u64) -> Vec<FtreeEngine> {
    let switches: Vec<NodeId> = f.switches().collect();
    let ports: Vec<Guid> = f
        .lid_ports()
        .filter(|(p, _)| !f.node(p.node).is_switch())
        .map(|(_, p)| p.guid)
        .collect();
    let pick = |items: usize, k: u64| {
        (0..items).filter(move |i| (seed.rotate_left(*i as u32 % 64) ^ k) & 3 == 0)
    };
    let roots = pick(switches.len(), 1)
        .map(|i| f.node(switches[i]).guid)
        .collect();
    let cns = pick(ports.len(), 2).map(|i| ports[i]).collect();
    vec![
        FtreeEngine::new(),
        FtreeEngine::with_options(&EngineOptions {
            roots: Some(roots),
            ..Default::default()
        }),
        FtreeEngine::with_options(&EngineOptions {
            compute_nodes: Some(cns),
            ..Default::default()
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_cablings(switches in 0usize..9, cas in 0usize..12,
                       pairs in proptest::collection::vec((0usize..100, 0usize..100), 0..40), seed: u64) {
        let f = random_fabric(switches, cas, &pairs);
        for e in engines(&f, seed) {
            check(&f, e.route(&f).ok())?;
        }
    }

    #[test]
    fn faulty_trees(tree in prop::sample::select(vec!["4-ary-2-full", "8-ary-2", "4-ary-3-full", "XGFT(2;4,6;1,2)"]),
                    links in 0usize..6, switches in 0usize..3, seed: u64, extra in 0usize..3) {
        let mut params = preset(tree).unwrap();
        if tree.starts_with("XGFT") {
            params = params.with_radix(8);
        }
        let Ok((f, _)) = inject_faults(&params.build().unwrap(), FaultSpec { links, switches, seed }) else {
            return Ok(()); // more faults than the tree has links
        };
        let f = with_extra_cables(&f, extra, seed);
        for e in engines(&f, seed) {
            check(&f, e.route(&f).ok())?;
        }
    }
}
