//! The worked examples of reference C §4 (Papers III and IV) as tests.

use ibcloud_analysis::{analyze, AnalysisOptions, Pattern, TrafficMatrix};
use ibcloud_fabric::generate::FatTreeParams;
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::lids::{assign_lids, LidOptions};
use ibcloud_fabric::{
    Fabric, FabricBuilder, Guid, Lid, LinkRate, NodeId, NodeKind, NodeSpec, PortRef,
};
use ibcloud_reconfig::event::{Event, FabricState};
use ibcloud_reconfig::metabase::{tree_counts, Metabase, MetabaseOptions};
use ibcloud_reconfig::report::ChangeReport;
use ibcloud_reconfig::slimupdate::{slim_update, SlimUpdateOptions};
use ibcloud_reconfig::subtree::{SubtreeEngine, SubtreeOptions, SubtreeReconfigurer};
use ibcloud_routing::fat_tree::FatTree;
use ibcloud_routing::{registry, EngineOptions};

fn xgft(m: &[u32], w: &[u32]) -> Fabric {
    FatTreeParams::xgft(m, w).build().unwrap()
}

fn ftree(f: &Fabric, order: Option<Vec<Lid>>) -> ForwardingTables {
    let o = EngineOptions {
        node_order: order,
        ..EngineOptions::default()
    };
    let name = if o.node_order.is_some() {
        "noftree"
    } else {
        "ftree"
    };
    registry::engine(name, &o).unwrap().route(f).unwrap().tables
}

/// Compute nodes per leaf in ftree's order (a, b, c, … of the papers).
fn cns(f: &Fabric) -> Vec<Vec<(NodeId, Lid)>> {
    let t = FatTree::build(f, &EngineOptions::default()).unwrap();
    t.leaves()
        .iter()
        .map(|&l| t.compute_nodes(l).iter().map(|c| (c.node, c.lid)).collect())
        .collect()
}

/// Mean flow bandwidth (ORCS acc_band) of one level of flows.
fn bandwidth(f: &Fabric, t: &ForwardingTables, flows: &[(Lid, Lid)]) -> f64 {
    let rows: Vec<_> = flows.iter().map(|&(s, d)| (s, d, 1.0, 0)).collect();
    let (ep, m) = TrafficMatrix::from_lid_rows(f, &rows).unwrap();
    let opts = AnalysisOptions {
        runs: 1,
        shuffle: false,
        ..AnalysisOptions::default()
    };
    analyze(f, t, &ep, &Pattern::Matrix(m), &opts)
        .unwrap()
        .ebb()
        .mean
}

/// The switch a packet for `lid` leaves `from` towards.
fn next_switch(f: &Fabric, t: &ForwardingTables, from: NodeId, lid: Lid) -> NodeId {
    f.remote(PortRef::new(from, t.get(from, lid).unwrap()))
        .unwrap()
        .node
}

fn leaf_of(f: &Fabric, ca: NodeId) -> NodeId {
    f.remote(PortRef::new(ca, 1)).unwrap().node
}

// Paper III Fig. 2: a 3-level 2-ary tree; a and b (leaf 1) go down through
// different switches from different roots, and every switch has an entry.
#[test]
fn paper3_fig2_ftree_paths() {
    let f = FatTreeParams::k_ary_n_tree(2, 3).build().unwrap();
    let t = ftree(&f, None);
    let c = cns(&f);
    let (a, b) = (c[0][0], c[0][1]);
    let leaf1 = leaf_of(&f, a.0);
    // Source f on leaf 3 (another top-level sub-tree).
    let src_leaf = leaf_of(&f, c[2][1].0);
    let path = |lid: Lid| {
        let mut p = vec![src_leaf];
        while *p.last().unwrap() != leaf1 {
            p.push(next_switch(&f, &t, *p.last().unwrap(), lid));
        }
        p
    };
    let (p1, p2) = (path(a.1), path(b.1));
    assert_eq!(p1.len(), 5); // 3 -> 7 -> 9 -> 5 -> 1
    assert_eq!(p2.len(), 5);
    assert_ne!(p1[2], p2[2], "different roots");
    assert_ne!(p1[3], p2[3], "down through 5 and 6");
    assert_eq!(t.unrouted(&f, false), 0, "blank switches are filled too");
}

// Paper III Fig. 4: sub-tree reconfiguration with the order (b, a) swaps the
// switches that carry a and b down inside the sub-tree; traffic from outside
// still arrives, and the union of old and new is up/down.
#[test]
fn paper3_fig4_subtree_swap_keeps_connectivity() {
    let f = FatTreeParams::k_ary_n_tree(2, 3).build().unwrap();
    let old = ftree(&f, None);
    let c = cns(&f);
    let (a, b) = (c[0][0], c[0][1]);
    let leaf1 = leaf_of(&f, a.0);
    let r = SubtreeReconfigurer::new(&f, &EngineOptions::default()).unwrap();
    let engine = SubtreeEngine::NoFtree(vec![b.1, a.1]);
    let (new, res) = r
        .reconfigure(&old, &[a.0], &engine, &SubtreeOptions::default())
        .unwrap();
    assert_eq!(res.subtree.levels, 2);
    assert_eq!(res.subtree.leaves.len(), 2);
    assert_eq!(res.subtree.switches.len(), 4);
    assert!(!res.subtree.full);
    let check = res.check.as_ref().unwrap();
    assert!(check.ok(), "{check:?}");
    // Inside the sub-tree: c on leaf 2 reaches a through the other mid switch now.
    let leaf2 = leaf_of(&f, c[1][0].0);
    let up_old = next_switch(&f, &old, leaf2, a.1);
    let up_new = next_switch(&f, &new, leaf2, a.1);
    assert_ne!(up_old, up_new);
    assert_eq!(
        next_switch(&f, &new, leaf2, b.1),
        up_old,
        "b takes a's old switch"
    );
    // Entries outside the sub-tree's switches × destinations are untouched.
    let inside: std::collections::HashSet<NodeId> = res.subtree.switches.iter().copied().collect();
    let dests: std::collections::HashSet<u16> =
        res.subtree.destinations.iter().map(|l| l.0).collect();
    for (sw, lid, _, _) in new.differences(&old) {
        assert!(inside.contains(&sw) && dests.contains(&lid.0));
    }
    assert!(res.changes.changed_entries > 0);
    let _ = leaf1;
}

// Paper III Figs. 5/6: b, c, d -> e, i, m share one up-link under ftree
// (1/3); NoFTree with the order (e, i, m) gives each its own (1.0).
#[test]
fn paper3_fig5_6_noftree_restores_bandwidth() {
    let f = xgft(&[4, 4], &[1, 4]);
    let c = cns(&f);
    let flows = [
        (c[0][1].1, c[1][0].1),
        (c[0][2].1, c[2][0].1),
        (c[0][3].1, c[3][0].1),
    ];
    let t = ftree(&f, None);
    assert!((bandwidth(&f, &t, &flows) - 1.0 / 3.0).abs() < 1e-9);
    let order = vec![c[1][0].1, c[2][0].1, c[3][0].1];
    let t2 = ftree(&f, Some(order.clone()));
    assert!((bandwidth(&f, &t2, &flows) - 1.0).abs() < 1e-9);
    // The same as a sub-tree reconfiguration inside a 3-level tree.
    let f3 = xgft(&[4, 4, 2], &[1, 4, 4]);
    let c3 = cns(&f3);
    let flows3 = [
        (c3[0][1].1, c3[1][0].1),
        (c3[0][2].1, c3[2][0].1),
        (c3[0][3].1, c3[3][0].1),
    ];
    let old = ftree(&f3, None);
    assert!((bandwidth(&f3, &old, &flows3) - 1.0 / 3.0).abs() < 1e-9);
    let r = SubtreeReconfigurer::new(&f3, &EngineOptions::default()).unwrap();
    let order3 = vec![c3[1][0].1, c3[2][0].1, c3[3][0].1];
    let nodes: Vec<NodeId> = [c3[0][1], c3[1][0], c3[2][0], c3[3][0]]
        .iter()
        .map(|x| x.0)
        .collect();
    let (new, res) = r
        .reconfigure(
            &old,
            &nodes,
            &SubtreeEngine::NoFtree(order3),
            &SubtreeOptions::default(),
        )
        .unwrap();
    assert_eq!(res.subtree.levels, 2);
    assert!(res.check.as_ref().unwrap().ok());
    assert!((bandwidth(&f3, &new, &flows3) - 1.0).abs() < 1e-9);
}

/// Paper III's testbed, read top-down (reference C §3.1): 2 roots with 4
/// children, 4 middle switches with 2 parents and 2 leaves, 4 leaves with 2
/// parents and 4 CN ports; the rightmost leaf has 2 CNs (14 in all).
fn testbed() -> Fabric {
    let mut b = FabricBuilder::new();
    let sw = |b: &mut FabricBuilder, i: u64, name: &str| {
        b.add_node(NodeSpec::new(NodeKind::Switch, Guid(0x1000 + i), 8, name))
            .unwrap()
    };
    let roots: Vec<_> = (0..2)
        .map(|i| sw(&mut b, i, &format!("S{}", i + 9)))
        .collect();
    let mids: Vec<_> = (0..4)
        .map(|i| sw(&mut b, 10 + i, &format!("S{}", i + 5)))
        .collect();
    let leaves: Vec<_> = (0..4)
        .map(|i| sw(&mut b, 20 + i, &format!("S{}", i + 1)))
        .collect();
    let rate = LinkRate::default();
    for (ri, &r) in roots.iter().enumerate() {
        for (mi, &m) in mids.iter().enumerate() {
            b.connect(
                PortRef::new(r, mi as u8 + 1),
                PortRef::new(m, ri as u8 + 1),
                rate,
            )
            .unwrap();
        }
    }
    for (li, &l) in leaves.iter().enumerate() {
        let pod = li / 2;
        for k in 0..2 {
            let m = mids[pod * 2 + k];
            b.connect(
                PortRef::new(l, k as u8 + 1),
                PortRef::new(m, (li % 2) as u8 + 3),
                rate,
            )
            .unwrap();
        }
        let n = if li == 3 { 2 } else { 4 };
        for c in 0..n {
            let no = li * 4 + c + 1;
            let ca = b
                .add_node(NodeSpec::new(
                    NodeKind::Ca,
                    Guid(0x2000 + no as u64),
                    1,
                    format!("CN{no}"),
                ))
                .unwrap();
            b.connect(PortRef::new(ca, 1), PortRef::new(l, c as u8 + 3), rate)
                .unwrap();
        }
    }
    let mut f = b.build();
    assert_eq!((f.switches().count(), f.cas().count()), (10, 14));
    assign_lids(&mut f, &LidOptions::default()).unwrap();
    f
}

// Paper III Fig. 7/8: CN5->CN1 and CN7->CN3 share S5 under ftree (0.5
// each); NoFTree on the lower-left sub-tree with (CN1, CN3) gives 1.0.
#[test]
fn paper3_fig7_testbed() {
    let f = testbed();
    let by = |n: &str| {
        let id = f.iter_nodes().find(|(_, x)| x.description == n).unwrap().0;
        (id, f.node_lid(id))
    };
    let (cn1, cn3, cn5, cn7) = (by("CN1"), by("CN3"), by("CN5"), by("CN7"));
    let old = ftree(&f, None);
    let flows = [(cn5.1, cn1.1), (cn7.1, cn3.1)];
    assert!((bandwidth(&f, &old, &flows) - 0.5).abs() < 1e-9);
    let r = SubtreeReconfigurer::new(&f, &EngineOptions::default()).unwrap();
    let (new, res) = r
        .reconfigure(
            &old,
            &[cn1.0, cn5.0],
            &SubtreeEngine::NoFtree(vec![cn1.1, cn3.1]),
            &SubtreeOptions::default(),
        )
        .unwrap();
    assert_eq!(
        res.subtree.switches.len(),
        4,
        "lower-left two-level sub-tree"
    );
    assert!(res.check.as_ref().unwrap().ok());
    assert!((bandwidth(&f, &new, &flows) - 1.0).abs() < 1e-9);
    // An order naming a node outside the sub-tree is refused.
    let cn9 = by("CN9");
    let e = r
        .reconfigure(
            &old,
            &[cn1.0],
            &SubtreeEngine::NoFtree(vec![cn9.1]),
            &SubtreeOptions::default(),
        )
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("not a compute node of the selected sub-tree"),
        "{e}"
    );
}

// Paper IV Fig. 1 (node shutdown): a, c up one port, b, d the other; after a
// and d shut down ftree moves b and c, SlimUpdate neither.
#[test]
fn paper4_fig1_mru_node_shutdown() {
    let f = xgft(&[4, 2], &[1, 2]);
    let c = cns(&f);
    let (a, b, cc, d) = (c[0][0], c[0][1], c[0][2], c[0][3]);
    let old = ftree(&f, None);
    let mut st = FabricState::new(f.clone());
    st.apply(&Event::Shutdown(a.0)).unwrap();
    st.apply(&Event::Shutdown(d.0)).unwrap();
    let now = st.current();
    let full = registry::engine("ftree", &EngineOptions::default())
        .unwrap()
        .route(&now)
        .unwrap()
        .tables;
    let slim = slim_update(&f, &old, &now, &SlimUpdateOptions::default())
        .unwrap()
        .tables;
    let moved = |t: &ForwardingTables, x: Lid| t.differences(&old).any(|(_, l, _, _)| l == x);
    assert!(moved(&full, b.1) && moved(&full, cc.1));
    assert!(!moved(&slim, b.1) && !moved(&slim, cc.1));
    let rf = ChangeReport::between(&old, &full);
    let rs = ChangeReport::between(&old, &slim);
    assert!(rs.changed_entries < rf.changed_entries, "{rs:?} vs {rf:?}");
}

// Paper IV (MRU, link failure): after a leaf up-link fails, SlimUpdate
// moves only the destinations whose routes used it; ftree moves more.
#[test]
fn paper4_link_failure_moves_only_affected_routes() {
    let f = FatTreeParams::k_ary_n_tree(4, 2).build().unwrap();
    let old = ftree(&f, None);
    let leaf = FatTree::build(&f, &EngineOptions::default()).unwrap();
    let l0 = leaf.node(leaf.leaves()[0]);
    let link = f
        .links()
        .find(|l| {
            (l.a.node == l0 || l.b.node == l0)
                && f.node(l.a.node).is_switch()
                && f.node(l.b.node).is_switch()
        })
        .unwrap();
    let mut st = FabricState::new(f.clone());
    st.apply(&Event::FailLink(link.a)).unwrap();
    let now = st.current();
    let roots = ibcloud_reconfig::slimupdate::roots_of(&f).unwrap();
    let o = EngineOptions {
        roots: Some(roots),
        ..EngineOptions::default()
    };
    let full = registry::engine("ftree", &o)
        .unwrap()
        .route(&now)
        .unwrap()
        .tables;
    let slim = slim_update(&f, &old, &now, &SlimUpdateOptions::default()).unwrap();
    for t in [&full, &slim.tables] {
        let v = ibcloud_routing::verify::verify(&now, t, None, &Default::default()).unwrap();
        assert!(v.ok(), "{:?}", v.failures);
    }
    let rf = ChangeReport::between(&old, &full);
    let rs = ChangeReport::between(&old, &slim.tables);
    assert!(
        rs.changed_destinations <= rf.changed_destinations,
        "{rs:?} vs {rf:?}"
    );
    assert!(rs.changed_entries < rf.changed_entries, "{rs:?} vs {rf:?}");
    assert!(slim.kept > slim.moved);
}

// Paper IV §7.1.1 / Fig. 10: XGFT(3; 4,4,3; 1,2,3) has 6 different and 2
// disjoint trees per leaf; a k-ary-n-tree k^(n-1) and k.
#[test]
fn paper4_fig10_tree_counts() {
    let c = tree_counts(&xgft(&[4, 4, 3], &[1, 2, 3])).unwrap();
    assert_eq!((c.different, c.disjoint), (6, 2));
    for (k, n) in [(4, 2), (2, 3), (3, 3), (4, 3)] {
        let c = tree_counts(&FatTreeParams::k_ary_n_tree(k, n).build().unwrap()).unwrap();
        assert_eq!(
            (c.different, c.disjoint),
            ((k as usize).pow(n as u32 - 1), k as usize),
            "{k}-ary-{n}"
        );
    }
}

// Paper IV Fig. 9: three roots give leaf L1 three paths p1..p3 for a, b, c;
// re-assigning b to p1 (order b, a, c) changes only a's and b's entries and
// needs no path computation; Algorithm 5 keeps the leaf's own port (≠ fix).
#[test]
fn paper4_fig9_metabase_two_phases() {
    let f = xgft(&[3, 3], &[1, 3]);
    let c = cns(&f);
    let (a, b, cc) = (c[0][0], c[0][1], c[0][2]);
    let mb = Metabase::build(&f, &MetabaseOptions::default()).unwrap();
    assert_eq!(mb.paths_per_leaf(), vec![3, 3, 3]);
    let t1 = mb.route(&f, None).unwrap();
    let v = ibcloud_routing::verify::verify(&f, &t1, None, &Default::default()).unwrap();
    assert!(v.ok());
    // Each of a, b, c comes down from its own root.
    let l1 = leaf_of(&f, a.0);
    let l3 = leaf_of(&f, c[2][0].0);
    let roots: Vec<NodeId> = [a, b, cc]
        .iter()
        .map(|x| next_switch(&f, &t1, l3, x.1))
        .collect();
    assert!(roots[0] != roots[1] && roots[1] != roots[2] && roots[0] != roots[2]);
    let mut t2 = t1.clone();
    mb.assign(&f, &mut t2, Some(&[b.1, a.1, cc.1])).unwrap();
    let changed: std::collections::BTreeSet<u16> =
        t2.differences(&t1).map(|(_, l, _, _)| l.0).collect();
    assert_eq!(changed, [a.1 .0, b.1 .0].into_iter().collect());
    assert_eq!(next_switch(&f, &t2, l3, b.1), roots[0], "b now takes p1");
    assert_eq!(
        t2.get(l1, b.1),
        t1.get(l1, b.1),
        "the leaf keeps its port to b"
    );
    // Saved and loaded, the metabase gives the same tables.
    let bytes = mb.to_bytes().unwrap();
    let back = Metabase::from_bytes(&bytes, &f).unwrap();
    assert_eq!(back.route(&f, None).unwrap(), t1);
    assert!(Metabase::from_bytes(&bytes[..10], &f).is_err());
    let other = xgft(&[3, 4], &[1, 3]);
    assert!(Metabase::from_bytes(&bytes, &other).is_err());
}

// Oversubscribed leaves share paths; all metabase paths are minimal and the
// routing verifies (reachability, credit loops).
#[test]
fn metabase_oversubscribed_and_3_level() {
    for f in [
        xgft(&[8, 4], &[1, 2]),
        xgft(&[4, 4, 3], &[1, 2, 3]),
        FatTreeParams::k_ary_n_tree(4, 3).build().unwrap(),
    ] {
        for disjoint in [false, true] {
            let mb = Metabase::build(
                &f,
                &MetabaseOptions {
                    disjoint,
                    ..Default::default()
                },
            )
            .unwrap();
            let t = mb.route(&f, None).unwrap();
            let v = ibcloud_routing::verify::verify(&f, &t, None, &Default::default()).unwrap();
            assert!(v.ok(), "{:?}", v.failures);
            let ft = ftree(&f, None);
            let vf = ibcloud_routing::verify::verify(&f, &ft, None, &Default::default()).unwrap();
            assert_eq!(
                v.mean_switches_per_path(),
                vf.mean_switches_per_path(),
                "minimal paths"
            );
        }
    }
}

// Bad input: a sub-tree of a non-fat-tree, an order naming unknown nodes,
// tables of another fabric.
#[test]
fn bad_input_is_refused() {
    use ibcloud_reconfig::ReconfigError;
    // A 4-switch ring with one CA each is no fat-tree.
    let mut b = FabricBuilder::new();
    let sws: Vec<_> = (0..4)
        .map(|i| {
            b.add_node(NodeSpec::new(
                NodeKind::Switch,
                Guid(0x100 + i),
                4,
                format!("sw{i}"),
            ))
            .unwrap()
        })
        .collect();
    for i in 0..4 {
        b.connect(
            PortRef::new(sws[i], 1),
            PortRef::new(sws[(i + 1) % 4], 2),
            LinkRate::default(),
        )
        .unwrap();
        let ca = b
            .add_node(NodeSpec::new(
                NodeKind::Ca,
                Guid(0x200 + i as u64),
                1,
                format!("h{i}"),
            ))
            .unwrap();
        b.connect(
            PortRef::new(ca, 1),
            PortRef::new(sws[i], 3),
            LinkRate::default(),
        )
        .unwrap();
    }
    let mut ring = b.build();
    assign_lids(&mut ring, &LidOptions::default()).unwrap();
    assert!(matches!(
        SubtreeReconfigurer::new(&ring, &EngineOptions::default()),
        Err(ReconfigError::NotFatTree(_))
    ));
    assert!(matches!(
        Metabase::build(&ring, &MetabaseOptions::default()),
        Err(ReconfigError::NotFatTree(_))
    ));
    // NoFTree with an unknown LID, in a sub-tree and as an engine.
    let f = xgft(&[4, 4, 2], &[1, 4, 4]);
    let old = ftree(&f, None);
    let r = SubtreeReconfigurer::new(&f, &EngineOptions::default()).unwrap();
    let ca = f.cas().next().unwrap();
    let e = r
        .reconfigure(
            &old,
            &[ca],
            &SubtreeEngine::NoFtree(vec![Lid(0xBFF0)]),
            &SubtreeOptions::default(),
        )
        .unwrap_err();
    assert!(matches!(e, ReconfigError::BadOrder(_)), "{e}");
    assert!(r
        .reconfigure(&old, &[], &SubtreeEngine::Ftree, &SubtreeOptions::default())
        .is_err());
    let mb = Metabase::build(&f, &MetabaseOptions::default()).unwrap();
    let mut t = old.clone();
    assert!(matches!(
        mb.assign(&f, &mut t, Some(&[Lid(0xBFF0)])),
        Err(ReconfigError::BadOrder(_))
    ));
    let other = xgft(&[4, 4], &[1, 4]);
    let wrong = ftree(&other, None);
    assert!(matches!(
        slim_update(&f, &wrong, &f, &SlimUpdateOptions::default()),
        Err(ReconfigError::WrongTables { .. })
    ));
    assert!(Metabase::build(
        &f,
        &MetabaseOptions {
            paths: Some(0),
            ..Default::default()
        }
    )
    .is_err());
}

// SlimUpdate after successive leaf up-link failures on a 3-level tree: all
// pairs reachable, no credit loop and no down->up turn in old ∪ new.
#[test]
fn slimupdate_transitions_are_updown_safe() {
    use ibcloud_reconfig::subtree::{check, ranks};
    let f = FatTreeParams::k_ary_n_tree(4, 3).build().unwrap();
    let tree = FatTree::build(&f, &EngineOptions::default()).unwrap();
    let rank = ranks(&f, &tree);
    let mut st = FabricState::new(f.clone());
    let mut prev_f = f.clone();
    let mut prev = ftree(&f, None);
    let links: Vec<_> = f
        .links()
        .filter(|l| f.node(l.a.node).is_switch() && f.node(l.b.node).is_switch())
        .step_by(7)
        .take(3)
        .collect();
    for l in links {
        st.apply(&Event::FailLink(l.a)).unwrap();
        let now = st.current();
        let new = slim_update(&prev_f, &prev, &now, &SlimUpdateOptions::default())
            .unwrap()
            .tables;
        let c = check(&prev_f, &prev, &now, &new, &rank, &[]).unwrap();
        assert!(c.ok(), "{c:?}");
        prev = new;
        prev_f = now;
    }
}

// The readings of "modifications" tried for Paper IV Fig. 8 (reference C
// §1.5): on a 2:1 two-level tree (8 nodes, 4 up links per leaf) one node
// shuts down. SlimUpdate's caps ceil(E/U) = ceil(7/4) = 2 keep every live
// route; the integer-division variant, floor(7/4) = 1, rejects the second
// route of three up links, and some of them land on another port. A departed
// node's removed entries count once per switch that had one.
#[test]
fn paper4_fig8_cap_rounding_decides_oversubscribed_shutdowns() {
    let f = xgft(&[8, 4], &[1, 4]);
    let c = cns(&f);
    let old = ftree(&f, None);
    let mut st = FabricState::new(f.clone());
    st.apply(&Event::Shutdown(c[0][0].0)).unwrap();
    let now = st.current();
    let live: Vec<Lid> = c.iter().flatten().skip(1).map(|x| x.1).collect();
    let run = |cap_floor| {
        slim_update(
            &f,
            &old,
            &now,
            &SlimUpdateOptions {
                cap_floor,
                ..SlimUpdateOptions::default()
            },
        )
        .unwrap()
        .tables
    };
    let ceil = ChangeReport::between_for(&old, &run(false), &live);
    let floor = ChangeReport::between_for(&old, &run(true), &live);
    assert_eq!(ceil.changed_entries, 0, "{ceil:?}");
    assert!(floor.changed_destinations > 0, "{floor:?}");
    let all: Vec<Lid> = c.iter().flatten().map(|x| x.1).collect();
    let dep = ChangeReport::between_for(&old, &run(false), &all);
    let switches = f.switches().count() as u64;
    assert_eq!(dep.changed_entries, switches, "{dep:?}");
}
