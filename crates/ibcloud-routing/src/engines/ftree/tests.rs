//! Unit tests of the fat-tree engine; the comparisons with OpenSM's own
//! tables are in `tests/ftree_opensm.rs`.

use super::*;
use ibcloud_fabric::generate::{inject_faults, preset, FaultSpec};
use ibcloud_fabric::lids::{assign_lids, LidOptions};
use ibcloud_fabric::{FabricBuilder, LinkRate, NodeId, NodeKind, NodeSpec, PortRef};

fn tree(name: &str) -> Fabric {
    preset(name).unwrap().build().unwrap()
}

fn reason(r: Result<Routing, RoutingError>) -> String {
    match r {
        Err(RoutingError::Unsupported {
            engine: "ftree",
            reason,
        }) => reason,
        other => panic!("expected a refusal, got {:?}", other.map(|_| "tables")),
    }
}

/// Switches `0..switches` and CAs, cabled as listed (node, port, node, port),
/// with LIDs assigned.
fn fabric(switches: u32, cas: u32, links: &[(u32, u8, u32, u8)]) -> Fabric {
    let mut b = FabricBuilder::new();
    for i in 0..switches {
        b.add_node(NodeSpec::new(
            NodeKind::Switch,
            Guid(0x100 + i as u64),
            8,
            format!("sw{i}"),
        ))
        .unwrap();
    }
    for i in 0..cas {
        b.add_node(NodeSpec::new(
            NodeKind::Ca,
            Guid(0x10000 + ((i as u64) << 8)),
            2,
            format!("ca{i}"),
        ))
        .unwrap();
    }
    for &(a, pa, c, pc) in links {
        b.connect(
            PortRef::new(NodeId(a), pa),
            PortRef::new(NodeId(c), pc),
            LinkRate::default(),
        )
        .unwrap();
    }
    let mut f = b.build();
    assign_lids(&mut f, &LidOptions::default()).unwrap();
    f
}

#[test]
fn routes_every_lid_of_a_small_tree_but_root_to_root() {
    let f = tree("4-ary-2-full");
    let r = FtreeEngine::new().route(&f).unwrap();
    // Roots cannot reach each other within up/down rules (OpenSM's
    // connect_roots is off): 4 roots × 3 other roots.
    assert_eq!(r.tables.unrouted(&f, true), 4 * 3);
    assert!(r.path_sls.is_none());
    for sw in f.switches() {
        assert_eq!(
            r.tables.get(sw, f.node_lid(sw)),
            Some(0),
            "own LID on port 0"
        );
    }
}

#[test]
fn is_registered_and_deterministic() {
    let e = crate::registry::engine("ftree", &EngineOptions::default()).unwrap();
    assert_eq!(e.name(), "ftree");
    let f = tree("4-ary-3-full");
    assert_eq!(e.route(&f).unwrap(), e.route(&f).unwrap());
}

#[test]
fn refuses_lmc() {
    let mut f = tree("4-ary-2-full");
    assign_lids(
        &mut f,
        &LidOptions {
            lmc: 1,
            ..LidOptions::default()
        },
    )
    .unwrap();
    assert_eq!(
        reason(FtreeEngine::new().route(&f)),
        "LMC > 0 is not supported by fat-tree routing"
    );
}

#[test]
fn refuses_tiny_fabrics() {
    let one = fabric(1, 2, &[(1, 1, 0, 1), (2, 1, 0, 2)]);
    assert_eq!(
        reason(FtreeEngine::new().route(&one)),
        "Fabric has 1 switches - topology is not fat-tree"
    );
    let one_ca = fabric(2, 1, &[(0, 1, 1, 1), (2, 1, 0, 2)]);
    assert!(
        reason(FtreeEngine::new().route(&one_ca)).starts_with("Fabric has 3 nodes (2 switches)")
    );
    // Two leaves cabled to each other: both rank 0.
    let flat = fabric(2, 2, &[(0, 1, 1, 1), (2, 1, 0, 2), (3, 1, 1, 2)]);
    assert_eq!(
        reason(FtreeEngine::new().route(&flat)),
        "Found more than one root on fabric with maximum rank 0"
    );
}

#[test]
fn refuses_cas_cabled_to_each_other() {
    let f = fabric(
        2,
        4,
        &[(0, 1, 1, 1), (2, 1, 0, 2), (3, 1, 1, 2), (4, 1, 5, 1)],
    );
    assert!(reason(FtreeEngine::new().route(&f)).starts_with("CA connected directly to another CA"));
}

#[test]
fn refuses_a_tree_with_a_missing_link_as_opensm_does() {
    // OpenSM 3.3.23 on the same fabric: ERR AB0A naming these two switches.
    let (f, _) = inject_faults(
        &tree("ft324"),
        FaultSpec {
            links: 3,
            switches: 0,
            seed: 1,
        },
    )
    .unwrap();
    let why = reason(FtreeEngine::new().route(&f));
    assert!(
        why.starts_with("Different number of downward port groups on switches"),
        "{why}"
    );
    assert!(
        why.contains("GUID 0x0002c90202000001, LID 343, Index 0.0 - 18 port groups"),
        "{why}"
    );
    assert!(
        why.contains("GUID 0x0002c90202000005, LID 347, Index 0.4 - 17 port groups"),
        "{why}"
    );
}

/// ft324 without one switch of the given XGFT level (1 leaf, 2 root).
fn ft324_without(level: u64) -> Fabric {
    let full = tree("ft324");
    (0..)
        .map(|seed| {
            inject_faults(
                &full,
                FaultSpec {
                    links: 0,
                    switches: 1,
                    seed,
                },
            )
            .unwrap()
        })
        .find(|(_, report)| report.switches[0].0 >> 24 & 0xff == level)
        .unwrap()
        .0
}

#[test]
fn routes_a_tree_with_a_missing_root() {
    let f = ft324_without(2);
    let r = FtreeEngine::new().route(&f).unwrap();
    // 17 roots left, each without routes to the other 16.
    assert_eq!(r.tables.unrouted(&f, true), 17 * 16);
}

#[test]
fn routes_a_tree_with_a_missing_leaf() {
    // The leaf's 18 CAs stay in the fabric without a link; OpenSM (which
    // does not see them) routes the rest, and so does the engine.
    let f = ft324_without(1);
    let t = FtreeEngine::new().route(&f).unwrap().tables;
    let lost: Vec<NodeId> = f
        .cas()
        .filter(|&c| f.neighbors(c).next().is_none())
        .collect();
    assert_eq!(lost.len(), 18);
    assert_eq!(t.unrouted(&f, true), 18 * 35 + 18 * 17);
}

#[test]
fn compute_node_option() {
    let f = tree("8-ary-2");
    let empty = FtreeEngine::with_options(&EngineOptions {
        compute_nodes: Some(vec![]),
        ..Default::default()
    });
    assert!(reason(empty.route(&f)).starts_with("Compute node guids file has no valid guids"));
    // Every CA listed: the same as no list.
    let all: Vec<Guid> = f
        .lid_ports()
        .filter(|(p, _)| !f.node(p.node).is_switch())
        .map(|(_, p)| p.guid)
        .collect();
    let listed = FtreeEngine::with_options(&EngineOptions {
        compute_nodes: Some(all),
        ..Default::default()
    });
    assert_eq!(
        listed.route(&f).unwrap(),
        FtreeEngine::new().route(&f).unwrap()
    );
    // No CA listed (but the list not empty): no compute nodes.
    let none = FtreeEngine::with_options(&EngineOptions {
        compute_nodes: Some(vec![Guid(1)]),
        ..Default::default()
    });
    assert_eq!(reason(none.route(&f)), "Fabric has no valid compute nodes");
}

#[test]
fn unknown_roots_fall_back_to_ranking_from_the_cas() {
    let f = tree("4-ary-3-full");
    let e = FtreeEngine::with_options(&EngineOptions {
        roots: Some(vec![Guid(42)]),
        ..Default::default()
    });
    assert_eq!(e.route(&f).unwrap(), FtreeEngine::new().route(&f).unwrap());
}

#[test]
fn needs_lids() {
    let mut f = tree("4-ary-2-full");
    f.clear_lids();
    assert!(matches!(
        FtreeEngine::new().route(&f),
        Err(RoutingError::MissingLid(_))
    ));
}

#[test]
fn a_leaf_sibling_link_is_undefined_in_opensm() {
    // ft648-4to1 leaves have free ports; a cable between two leaves makes
    // OpenSM re-sort their CA groups by garbage "tuples" (checked: it
    // scrambles the CN order), so the engine refuses.
    let f = tree("ft648-4to1");
    let leaf = |j: u64| f.node_by_guid(Guid(0x0002c90201000000 + j)).unwrap();
    let (l1, l2) = (leaf(1), leaf(2));
    assert!(f.remote(PortRef::new(l1, 31)).is_none());
    let linked = with_link(&f, PortRef::new(l1, 31), PortRef::new(l2, 31));
    assert!(reason(FtreeEngine::new().route(&linked)).contains("undefined"));
}

/// A copy of `f` with one more cable.
fn with_link(f: &Fabric, a: PortRef, b: PortRef) -> Fabric {
    let mut fb = FabricBuilder::with_capacity(f.num_nodes(), 0);
    for (id, n) in f.iter_nodes() {
        let mut spec = NodeSpec::new(n.kind, n.guid, n.num_ports as u32, n.description.clone());
        spec.system_image_guid = n.system_image_guid;
        let nid = fb.add_node(spec).unwrap();
        assert_eq!(nid, id);
        for (p, port) in f.ports(id).iter().enumerate() {
            let slot = fb.port_mut(PortRef::new(nid, p as u8)).unwrap();
            slot.guid = port.guid;
            slot.lid = port.lid;
            slot.lmc = port.lmc;
        }
    }
    for l in f.links().map(|l| (l.a, l.b)).chain([(a, b)]) {
        fb.connect(l.0, l.1, LinkRate::default()).unwrap();
    }
    fb.build()
}

#[test]
fn node_order_slots_and_refusals() {
    let f = tree("4-ary-2-full");
    let view = crate::fat_tree::FatTree::build(&f, &EngineOptions::default()).unwrap();
    let plain = FtreeEngine::new().route(&f).unwrap().tables;
    // An order that is port order, leaf by leaf, puts node n of each leaf at
    // slot n only when max_cn_per_leaf divides evenly; the first node of
    // every leaf alone keeps the plain tables.
    let firsts: Vec<Lid> = view
        .leaves()
        .iter()
        .map(|&l| view.compute_nodes(l)[0].lid)
        .take(1)
        .collect();
    let e = FtreeEngine::with_options(&EngineOptions {
        node_order: Some(firsts),
        ..EngineOptions::default()
    });
    assert_eq!(e.route(&f).unwrap().tables, plain);

    // The first nodes of leaves 2..4 in order take slots 0, 1, 2.
    let order: Vec<Lid> = view.leaves()[1..4]
        .iter()
        .map(|&l| view.compute_nodes(l)[0].lid)
        .collect();
    let e = FtreeEngine::with_options(&EngineOptions {
        node_order: Some(order.clone()),
        ..EngineOptions::default()
    });
    let ca_order = e.ca_order(&f).unwrap();
    let width = view.max_cn_per_leaf() as usize;
    for (k, lid) in order.iter().enumerate() {
        assert_eq!(ca_order[(k + 1) * width + k], Some(*lid));
    }
    assert_ne!(e.route(&f).unwrap().tables, plain);

    let bad = |order: Vec<Lid>| match FtreeEngine::with_options(&EngineOptions {
        node_order: Some(order),
        ..EngineOptions::default()
    })
    .route(&f)
    {
        Err(RoutingError::BadOptions(m)) => m,
        other => panic!("expected BadOptions, got {:?}", other.map(|_| ())),
    };
    let sw_lid = view.lid(view.leaves()[0]);
    assert!(bad(vec![sw_lid]).contains("not a compute node"));
    assert!(bad(vec![order[0], order[0]]).contains("twice"));
}
