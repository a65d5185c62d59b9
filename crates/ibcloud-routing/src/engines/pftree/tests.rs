//! The worked examples of seed 002 (Figs. 3, 4, 5/6, 12) and the pFTree
//! oracles of E §4.5 that concern routing alone.

use super::*;
use crate::verify::{verify_routing, VerifyOptions};
use ibcloud_fabric::lids::{assign_lids, LidOptions};
use ibcloud_fabric::partitions::{Membership, Partition};
use ibcloud_fabric::{FabricBuilder, LinkRate, NodeId, NodeKind, NodeSpec, PortRef};

/// A 2-level tree: `roots` roots (R1 has the highest GUID), leaves with the
/// given node counts; leaf ports 1..=n to nodes, then one port per root.
/// Returns the fabric and every leaf's node port GUIDs.
fn two_level(roots: usize, per_leaf: &[usize]) -> (Fabric, Vec<Vec<Guid>>) {
    let mut b = FabricBuilder::new();
    let r: Vec<NodeId> = (0..roots)
        .map(|i| {
            b.add_node(NodeSpec::new(
                NodeKind::Switch,
                Guid(0x9000 - i as u64),
                (per_leaf.len() + 1) as u32,
                format!("R{}", i + 1),
            ))
            .unwrap()
        })
        .collect();
    let mut nodes = Vec::new();
    for (li, &n) in per_leaf.iter().enumerate() {
        let l = b
            .add_node(NodeSpec::new(
                NodeKind::Switch,
                Guid(0x5000 + li as u64),
                (n + roots) as u32,
                format!("L{}", li + 1),
            ))
            .unwrap();
        let mut g = Vec::new();
        for k in 0..n {
            let guid = Guid(0x10_0000 + ((li as u64) << 8) + ((k as u64) << 1));
            let ca = b
                .add_node(NodeSpec::new(NodeKind::Ca, guid, 1, format!("n{li}-{k}")))
                .unwrap();
            b.connect(
                PortRef::new(l, (k + 1) as u8),
                PortRef::new(ca, 1),
                LinkRate::default(),
            )
            .unwrap();
            g.push(Guid(guid.0 + 1));
        }
        for (ri, &root) in r.iter().enumerate() {
            b.connect(
                PortRef::new(l, (n + ri + 1) as u8),
                PortRef::new(root, (li + 1) as u8),
                LinkRate::default(),
            )
            .unwrap();
        }
        nodes.push(g);
    }
    let mut f = b.build();
    assign_lids(&mut f, &LidOptions::default()).unwrap();
    (f, nodes)
}

fn conf(parts: &[(&str, &[Guid], Isolation)]) -> PartitionConfig {
    let mut c = PartitionConfig::default();
    for (i, (name, members, iso)) in parts.iter().enumerate() {
        let mut p = Partition::new(*name, (i + 1) as u16).with_isolation(*iso);
        for &g in *members {
            p = p.with_member(g, Membership::Full);
        }
        c.partitions.push(p);
    }
    c
}

fn run(flavor: Flavor, f: &Fabric, o: EngineOptions) -> PftreeOutcome {
    let out = Pftree::new(flavor, &o).run(f).unwrap();
    // Every pair but root to root (as ftree: no down-then-up routes).
    let v = verify_routing(
        f,
        &out.routing,
        &VerifyOptions {
            include_switches: true,
            ..Default::default()
        },
    )
    .unwrap();
    let roots = f
        .switches()
        .filter(|&s| f.node(s).description.starts_with('R'))
        .count() as u64;
    assert_eq!(v.failures.total(), v.failures.unset, "{v:?}");
    assert_eq!(v.failures.unset, roots * (roots - 1), "{v:?}");
    assert!(v.credit_loops.as_ref().is_some_and(|c| c.acyclic));
    out
}

/// The root whose down-link carries `guid`'s LID to its leaf.
fn root_of(f: &Fabric, out: &PftreeOutcome, guid: Guid) -> String {
    let port = f.port_by_guid(guid).unwrap();
    let lid = f.port(port).unwrap().lid;
    let leaf = f.remote(port).unwrap().node;
    // Follow from another leaf: it goes up to the root that routes down.
    let other = f
        .switches()
        .find(|&s| f.node(s).description.starts_with('L') && s != leaf)
        .unwrap();
    let up = out.routing.tables.get(other, lid).unwrap();
    let root = f.remote(PortRef::new(other, up)).unwrap().node;
    f.node(root).description.clone()
}

fn labels(f: &Fabric, out: &PftreeOutcome, guids: &[Guid]) -> Vec<String> {
    guids.iter().map(|&g| root_of(f, out, g)).collect()
}

#[test]
fn fig4_pftree_is_balanced_and_isolated() {
    let (f, n) = two_level(2, &[4, 4]);
    // L1: a, d in P1; b, c in P2. L2: e, h in P1; f, g in P2.
    let p1 = [n[0][0], n[0][3], n[1][0], n[1][3]];
    let p2 = [n[0][1], n[0][2], n[1][1], n[1][2]];
    let o = EngineOptions {
        partitions: Some(conf(&[
            ("P1", &p1, Isolation::Def),
            ("P2", &p2, Isolation::Def),
        ])),
        ..Default::default()
    };
    let out = run(Flavor::Base, &f, o);
    // a -> R1, b -> R2, c -> R2 (mark), d -> R1; L2 follows the marks.
    assert_eq!(labels(&f, &out, &n[0]), ["R1", "R2", "R2", "R1"]);
    assert_eq!(labels(&f, &out, &n[1]), ["R1", "R2", "R2", "R1"]);
    assert!(out.report.partitions.iter().all(|p| p.shared.is_empty()));
    assert_eq!(out.vls, vec![0, 0]);
    assert!(out.routing.path_sls.is_none());
    assert_eq!(out.variant, "corrected");
}

#[test]
fn fig3_single_leaf_partitions_leave_the_balance_to_the_others() {
    // L1: A B C, L2: D E F; P1 = {B, C}, P2 = {A, C, D, F}, P3 = {D, E}.
    let (f, n) = two_level(2, &[3, 3]);
    let (a, b, c, d, e, ff) = (n[0][0], n[0][1], n[0][2], n[1][0], n[1][1], n[1][2]);
    let mut cf = conf(&[
        ("P2", &[a, c, d, ff], Isolation::Def),
        ("P1", &[b, c], Isolation::Def),
        ("P3", &[d, e], Isolation::Def),
    ]);
    cf.global = Some(GlobalPolicy::BestEffort);
    let o = EngineOptions {
        partitions: Some(cf.clone()),
        ..Default::default()
    };
    let out = run(Flavor::Base, &f, o);
    // P2's two nodes per leaf go down different roots (ftree: A and C both via R1).
    let l1 = labels(&f, &out, &[a, c]);
    let l2 = labels(&f, &out, &[d, ff]);
    assert_ne!(l1[0], l1[1]);
    assert_ne!(l2[0], l2[1]);
    let ft = crate::engines::ftree::FtreeEngine::new().route(&f).unwrap();
    let fake = PftreeOutcome {
        routing: ft,
        ..out.clone()
    };
    let lf = labels(&f, &fake, &[a, c]);
    assert_eq!(lf[0], lf[1], "ftree sends A and C down one root (link p)");
    // C and D are in two partitions: routed for the first, with a warning.
    assert_eq!(
        out.warnings
            .iter()
            .filter(|w| w.contains("member of both"))
            .count(),
        2
    );
}

/// Fig. 5: three leaves of three nodes, two roots; P1 = {A, E},
/// P2 = {B, F, I}, P3 = {C, D, G, H}.
fn fig5() -> (Fabric, [Vec<Guid>; 3]) {
    let (f, n) = two_level(2, &[3, 3, 3]);
    let p1 = vec![n[0][0], n[1][1]];
    let p2 = vec![n[0][1], n[1][2], n[2][2]];
    let p3 = vec![n[0][2], n[1][0], n[2][0], n[2][1]];
    (f, [p1, p2, p3])
}

#[test]
fn fig5_pftree_shares_links_on_separate_vls() {
    let (f, [p1, p2, p3]) = fig5();
    let o = EngineOptions {
        partitions: Some(conf(&[
            ("P1", &p1, Isolation::Def),
            ("P2", &p2, Isolation::Def),
            ("P3", &p3, Isolation::Def),
        ])),
        ..Default::default()
    };
    let out = run(Flavor::Base, &f, o);
    let r = &out.report.partitions;
    assert!(
        !r[0].shared.is_empty(),
        "two roots cannot separate three partitions"
    );
    // Every shared link joins partitions on different VLs.
    assert!(
        r.iter().all(|p| p.shared.iter().all(|s| !s.same_vl)),
        "{r:?}"
    );
    let sls = out.routing.path_sls.as_ref().unwrap();
    let lid = |g: Guid| f.port(f.port_by_guid(g).unwrap()).unwrap().lid;
    assert_eq!(sls.get(lid(p1[0]), lid(p1[1])), out.vls[0]);
    assert_eq!(
        sls.get(lid(p1[0]), lid(p2[0])),
        0,
        "stale routes stay on SL 0"
    );
}

#[test]
fn fig6_pftree_ext_phy_partition_shares_no_link() {
    let (f, [p1, p2, p3]) = fig5();
    for variant in [PftreeVariant::default(), PftreeVariant::literal()] {
        let o = EngineOptions {
            partitions: Some(conf(&[
                ("P1", &p1, Isolation::Phy),
                ("P2", &p2, Isolation::Def),
                ("P3", &p3, Isolation::Def),
            ])),
            isolation: Some(GlobalPolicy::Strict),
            pftree_variant: variant,
            ..Default::default()
        };
        let out = run(Flavor::Ext, &f, o);
        let r = &out.report.partitions;
        assert!(r[0].shared.is_empty() && r[0].ok, "{variant}: {r:?}");
        // A and E use R1 alone; P2 and P3 share R2's down-links.
        assert_eq!(labels(&f, &out, &p1), ["R1", "R1"]);
        assert!(labels(&f, &out, &p2).iter().all(|r| r == "R2"));
        assert!(labels(&f, &out, &p3).iter().all(|r| r == "R2"));
        assert!(r[1].shared.iter().all(|s| s.with == ["P3"]));
    }
}

#[test]
fn phy_partitions_beyond_the_roots_fail_strict_and_warn_best_effort() {
    // Three phy partitions spanning both leaves, two roots.
    let (f, n) = two_level(2, &[3, 3]);
    let parts: Vec<Vec<Guid>> = (0..3).map(|k| vec![n[0][k], n[1][k]]).collect();
    let c = conf(&[
        ("A", &parts[0], Isolation::Phy),
        ("B", &parts[1], Isolation::Phy),
        ("C", &parts[2], Isolation::Phy),
    ]);
    let strict = EngineOptions {
        partitions: Some(c.clone()),
        isolation: Some(GlobalPolicy::Strict),
        ..Default::default()
    };
    let err = Pftree::new(Flavor::Ext, &strict).run(&f).unwrap_err();
    assert!(err.to_string().contains("strict isolation"), "{err}");
    let be = EngineOptions {
        partitions: Some(c),
        isolation: Some(GlobalPolicy::BestEffort),
        ..Default::default()
    };
    let out = run(Flavor::Ext, &f, be);
    assert!(!out.report.ok());
    assert!(
        out.warnings.iter().any(|w| w.starts_with("best-effort")),
        "{:?}",
        out.warnings
    );
}

#[test]
fn vl_shortage_strict_fails_best_effort_wraps_to_vl1() {
    // Four vlane partitions on two roots: they must share; 2 data VLs.
    let (f, n) = two_level(2, &[4, 4]);
    let parts: Vec<Vec<Guid>> = (0..4).map(|k| vec![n[0][k], n[1][k]]).collect();
    let c = conf(&[
        ("A", &parts[0], Isolation::Vlane),
        ("B", &parts[1], Isolation::Vlane),
        ("C", &parts[2], Isolation::Vlane),
        ("D", &parts[3], Isolation::Vlane),
    ]);
    let mut o = EngineOptions {
        partitions: Some(c),
        isolation: Some(GlobalPolicy::Strict),
        max_vls: Some(2),
        ..Default::default()
    };
    let err = Pftree::new(Flavor::Ext, &o).run(&f).unwrap_err();
    assert!(err.to_string().contains("data VLs are in use"), "{err}");
    o.isolation = Some(GlobalPolicy::BestEffort);
    let out = run(Flavor::Ext, &f, o.clone());
    assert!(out.vls.iter().all(|&v| v <= 1), "{:?}", out.vls);
    assert!(
        out.warnings
            .iter()
            .any(|w| w.contains("wraps around to VL1")),
        "{:?}",
        out.warnings
    );
    // With enough VLs every vlane partition gets its own.
    o.max_vls = Some(8);
    let out = run(Flavor::Ext, &f, o);
    assert!(out.report.ok(), "{:?}", out.report);
}

#[test]
fn fig12_pftree_wt_shares_exactly_one_downward_link() {
    let (f, n) = two_level(2, &[4, 4]);
    let p1 = [n[0][0], n[0][3], n[1][0], n[1][3]];
    let p2 = [n[0][1], n[0][2], n[1][1], n[1][2]];
    let o = EngineOptions {
        partitions: Some(conf(&[
            ("P1", &p1, Isolation::Def),
            ("P2", &p2, Isolation::Def),
        ])),
        node_weights: Some(vec![(n[0][0], 100.0)]),
        ..Default::default()
    };
    let out = run(Flavor::Wt, &f, o);
    // a alone on R1 -> L1; b, c, d share R2 -> L1; L2 isolated.
    assert_eq!(labels(&f, &out, &n[0]), ["R1", "R2", "R2", "R2"]);
    assert_eq!(labels(&f, &out, &n[1]), ["R1", "R2", "R2", "R1"]);
    let down_shared: BTreeSet<(Guid, u8)> = out
        .report
        .partitions
        .iter()
        .flat_map(|p| p.shared.iter())
        .filter(|s| {
            f.node(f.node_by_guid(s.from).unwrap())
                .description
                .starts_with('R')
        })
        .map(|s| (s.from, s.port))
        .collect();
    assert_eq!(down_shared.len(), 1, "{:?}", out.report);
    // The two partitions end up on different VLs.
    assert_ne!(out.vls[0], out.vls[1]);
}

#[test]
fn literal_alg2_return_and_labels() {
    let (f, n) = two_level(2, &[2, 4]);
    let p1 = [n[0][0], n[1][0], n[1][3]];
    let p2 = [n[0][1], n[1][1], n[1][2]];
    let o = EngineOptions {
        partitions: Some(conf(&[
            ("P1", &p1, Isolation::Def),
            ("P2", &p2, Isolation::Def),
        ])),
        pftree_variant: PftreeVariant::literal(),
        ..Default::default()
    };
    let out = run(Flavor::Base, &f, o);
    assert_eq!(out.variant, "literal");
    assert_eq!(out.engine, "pftree");
    // L1 has no more nodes than up-ports, so the printed `return` leaves L2
    // in port order (e, f, g, h instead of e, f, h, g); the marks still put
    // each partition on one root, so the tables equal the corrected ones.
    let o2 = EngineOptions {
        partitions: Some(conf(&[
            ("P1", &p1, Isolation::Def),
            ("P2", &p2, Isolation::Def),
        ])),
        ..Default::default()
    };
    let corrected = run(Flavor::Base, &f, o2);
    assert_eq!(corrected.routing.tables, out.routing.tables);
    assert_eq!(labels(&f, &out, &n[1]), ["R1", "R2", "R2", "R1"]);
}

#[test]
fn registry_has_the_three_engines() {
    for name in ["pftree", "pftree-ext", "pftree-wt"] {
        let e = crate::registry::engine(name, &EngineOptions::default()).unwrap();
        assert_eq!(e.name(), name);
        // Without partitions every engine still routes a whole fat-tree.
        let mut fab = ibcloud_fabric::generate::preset("4-ary-2-full")
            .unwrap()
            .build()
            .unwrap();
        assign_lids(&mut fab, &LidOptions::default()).unwrap();
        let r = e.route(&fab).unwrap();
        let v = verify_routing(&fab, &r, &VerifyOptions::default()).unwrap();
        assert!(v.ok(), "{v:?}");
    }
}

#[test]
fn d3_literal_exclusion_lets_phy_partitions_meet_corrected_does_not() {
    // Three phy partitions, one node per leaf each, two roots.
    let (f, n) = two_level(2, &[3, 3]);
    let parts: Vec<Vec<Guid>> = (0..3).map(|k| vec![n[0][k], n[1][k]]).collect();
    let c = conf(&[
        ("A", &parts[0], Isolation::Phy),
        ("B", &parts[1], Isolation::Phy),
        ("C", &parts[2], Isolation::Phy),
    ]);
    let opts = |variant| EngineOptions {
        partitions: Some(c.clone()),
        isolation: Some(GlobalPolicy::BestEffort),
        pftree_variant: variant,
        ..Default::default()
    };
    // Printed rule: phy excludes only higher priorities (none), so the third
    // partition silently joins a root; only the validator notices.
    let literal = PftreeVariant {
        literal_exclusion: true,
        ..Default::default()
    };
    let out = run(Flavor::Ext, &f, opts(literal));
    assert!(!out.report.ok());
    assert!(!out.warnings.iter().any(|w| w.contains("could not avoid")));
    assert_eq!(out.variant, "literal-exclusion");
    // Corrected rule: every up-port is excluded for the third (D1), named as such.
    let out = run(Flavor::Ext, &f, opts(PftreeVariant::default()));
    assert!(
        out.warnings.iter().any(|w| w.contains("could not avoid")),
        "{:?}",
        out.warnings
    );
}

#[test]
fn marks_only_shares_where_alg2_isolates() {
    // L1 and L2: a, b in P1 then c, d in P2 (port order), two roots.
    let (f, n) = two_level(2, &[4, 4]);
    let p1 = [n[0][0], n[0][1], n[1][0], n[1][1]];
    let p2 = [n[0][2], n[0][3], n[1][2], n[1][3]];
    let o = |variant| EngineOptions {
        partitions: Some(conf(&[
            ("P1", &p1, Isolation::Def),
            ("P2", &p2, Isolation::Def),
        ])),
        pftree_variant: variant,
        ..Default::default()
    };
    // Alg. 2 orders a, c, b, d: a R1, c R2, b follows P1's mark, d P2's.
    let with_order = run(Flavor::Base, &f, o(PftreeVariant::default()));
    assert_eq!(labels(&f, &with_order, &n[0]), ["R1", "R1", "R2", "R2"]);
    assert!(with_order
        .report
        .partitions
        .iter()
        .all(|p| p.shared.is_empty()));
    // Marks only, port order: a R1, b R2 (balance first), c and d split too.
    let marks = run(
        Flavor::Base,
        &f,
        o(PftreeVariant {
            marks_only: true,
            ..Default::default()
        }),
    );
    assert_eq!(marks.variant, "marks-only");
    assert_eq!(labels(&f, &marks, &n[0]), ["R1", "R2", "R1", "R2"]);
    assert!(marks.report.partitions.iter().all(|p| !p.shared.is_empty()));
}

#[test]
fn grouped_puts_each_partition_on_every_root_where_alg2_isolates() {
    // Port order a(P2) b(P1) c(P2) d(P1) on both leaves, two roots.
    let (f, n) = two_level(2, &[4, 4]);
    let p1 = [n[0][1], n[0][3], n[1][1], n[1][3]];
    let p2 = [n[0][0], n[0][2], n[1][0], n[1][2]];
    let o = |variant| EngineOptions {
        partitions: Some(conf(&[
            ("P1", &p1, Isolation::Def),
            ("P2", &p2, Isolation::Def),
        ])),
        pftree_variant: variant,
        ..Default::default()
    };
    let with_order = run(Flavor::Base, &f, o(PftreeVariant::default()));
    assert!(with_order
        .report
        .partitions
        .iter()
        .all(|p| p.shared.is_empty()));
    // Grouped: b, d (P1) first take one root each (balance first), then a, c
    // (P2) fill the second port of each root: every root link is shared.
    let grouped = run(
        Flavor::Base,
        &f,
        o(PftreeVariant {
            grouped: true,
            ..Default::default()
        }),
    );
    assert_eq!(grouped.variant, "grouped");
    assert_eq!(labels(&f, &grouped, &n[0]), ["R1", "R1", "R2", "R2"]);
    assert!(grouped
        .report
        .partitions
        .iter()
        .all(|p| !p.shared.is_empty()));
}
