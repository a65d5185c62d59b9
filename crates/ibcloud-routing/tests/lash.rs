//! The lash engine against OpenSM 3.3.23's lash on ibsim (fixtures under
//! `fixtures/opensm/lash`, see the README there), and deadlock freedom on tori.

#[path = "support/lash_support.rs"]
mod lash_support;

use ibcloud_fabric::formats::parse_fabric;
use ibcloud_fabric::lids::{assign_lids, LidOptions};
use ibcloud_fabric::{
    generate, Fabric, FabricBuilder, Guid, Lid, LinkRate, NodeKind, NodeSpec, PortRef,
};
use ibcloud_routing::engines::lash::{Lash, LashStats};
use ibcloud_routing::{registry, EngineOptions, RoutingEngine, RoutingError};
use lash_support::*;
use std::path::Path;

fn lash() -> Lash {
    Lash::new(&EngineOptions::default()).unwrap()
}

/// "Lanes in layer i: n" before and after balancing, from OpenSM's log lines.
fn opensm_layers(dir: &Path) -> (Vec<usize>, Vec<usize>) {
    opensm_layers_in(&dir.join("lanes.txt"))
}

fn opensm_layers_in(file: &Path) -> (Vec<usize>, Vec<usize>) {
    let text = std::fs::read_to_string(file).unwrap();
    let counts: Vec<usize> = text
        .lines()
        .filter_map(|l| {
            l.split_once("Lanes in layer ")?
                .1
                .split_once(": ")
                .map(|(_, n)| n.trim().parse().unwrap())
        })
        .collect();
    let needed: usize = text
        .lines()
        .find_map(|l| {
            l.split_once("Lanes needed: ")?
                .1
                .split(',')
                .next()?
                .trim()
                .parse()
                .ok()
        })
        .unwrap();
    assert_eq!(counts.len(), 2 * needed);
    (counts[..needed].to_vec(), counts[needed..].to_vec())
}

/// Routes the fixture's fabric with OpenSM's LIDs and compares tables, layer
/// counts and (where recorded) path SLs.
fn compare_with_opensm(mut fabric: Fabric, name: &str) -> (Fabric, LashStats) {
    let dir = fixture_dir(name);
    apply_guid2lid(&mut fabric, &dir);
    let (routing, stats) = lash().route_with_stats(&fabric).unwrap();
    let theirs = opensm_tables(&fabric, &dir);
    let (n, first) = table_diffs(&fabric, &routing.tables, &theirs, 10);
    assert_eq!(
        n, 0,
        "{name}: {n} LFT entries differ from OpenSM's:\n{first}"
    );
    assert_eq!(routing.tables, theirs);
    let (assigned, balanced) = opensm_layers(&dir);
    assert_eq!(
        stats.paths_per_layer_assigned, assigned,
        "{name}: layers before balancing"
    );
    assert_eq!(
        stats.paths_per_layer, balanced,
        "{name}: layers after balancing"
    );
    assert_eq!(stats.layers, assigned.len());
    let sls = routing.path_sls.as_ref().unwrap();
    if let Some(expected) = opensm_sls(&dir) {
        let wrong: Vec<_> = expected
            .iter()
            .filter(|(s, d, sl)| sls.get(*s, *d) != *sl)
            .take(5)
            .collect();
        assert!(
            wrong.is_empty(),
            "{name}: SLs differ from OpenSM's PathRecords, e.g. {wrong:?}"
        );
    } else {
        assert_eq!(sls.num_sls(), stats.layers.max(1));
    }
    (fabric, stats)
}

fn preset(name: &str) -> Fabric {
    generate::preset(name).unwrap().build().unwrap()
}

fn fixture_fabric(name: &str) -> Fabric {
    let path = fixture_dir(name).join("torus.net");
    let data = std::fs::read(&path).unwrap();
    parse_fabric(
        &data,
        "torus.net",
        ibcloud_fabric::formats::Format::IbsimNet,
    )
    .unwrap()
}

#[test]
fn paper_v_trees_match_opensm() {
    for (name, layers) in [("4-ary-2-full", 1), ("8-ary-2", 1), ("16-ary-2", 1)] {
        let (_, stats) = compare_with_opensm(preset(name), name);
        assert_eq!(stats.layers, layers, "{name}");
    }
}

#[test]
fn three_level_tree_needs_and_balances_layers_like_opensm() {
    // Minimal paths between middle switches may turn down through a leaf, so
    // the three-level tree needs 4 layers; the fixture has OpenSM's SL of
    // every switch pair and of 400 random CA pairs.
    let (fabric, stats) = compare_with_opensm(preset("4-ary-3-full"), "4-ary-3-full");
    assert_eq!(stats.layers, 4);
    let routing = lash().route(&fabric).unwrap();
    check_deadlock_free(&fabric, &routing.tables, routing.path_sls.as_ref()).unwrap();
}

#[test]
fn tori_match_opensm_tables_layers_and_sls() {
    for (name, layers) in [
        ("torus-8", 4),
        ("torus-4x4", 2),
        ("torus-6x6", 4),
        ("torus-2x3", 1),
    ] {
        let (fabric, stats) = compare_with_opensm(fixture_fabric(name), name);
        assert_eq!(stats.layers, layers, "{name}");
        let routing = lash().route(&fabric).unwrap();
        let paths =
            check_deadlock_free(&fabric, &routing.tables, routing.path_sls.as_ref()).unwrap();
        let lids = fabric.lids_in_use();
        assert_eq!(paths, lids * (lids - 1));
    }
}

#[test]
fn start_vl_shifts_sls_and_shrinks_the_layers() {
    let mut fabric = fixture_fabric("torus-4x4");
    let dir = fixture_dir("torus-4x4");
    apply_guid2lid(&mut fabric, &dir);
    let routing = lash().with_start_vl(2).route(&fabric).unwrap();
    let text = std::fs::read_to_string(dir.join("sls-start-vl2.txt")).unwrap();
    let sls = routing.path_sls.unwrap();
    for line in text.lines() {
        let v: Vec<u16> = line
            .split_whitespace()
            .map(|w| w.parse().unwrap())
            .collect();
        assert_eq!(sls.get(Lid(v[0]), Lid(v[1])) as u16, v[2], "{line}");
    }

    // OpenSM: "ERR 4D02: Lane requirements (3) exceed available lanes (2) with starting lane (6)".
    let mut fabric = fixture_fabric("torus-6x6");
    apply_guid2lid(&mut fabric, &fixture_dir("torus-6x6"));
    let err = lash().with_start_vl(6).route(&fabric).unwrap_err();
    assert_eq!(
        err,
        RoutingError::NotEnoughLayers {
            engine: "lash",
            needed: 3,
            available: 2
        }
    );
    assert!(fixture_dir("torus-6x6")
        .join("lanes-start-vl6.txt")
        .exists());
    let err = lash().with_start_vl(8).route(&fabric).unwrap_err();
    assert!(matches!(err, RoutingError::BadOptions(_)), "{err}");
}

#[test]
fn built_tori_are_deadlock_free_with_several_layers() {
    for dims in [&[5usize][..], &[3, 4], &[5, 5], &[4, 4, 3], &[7, 3]] {
        let fabric = torus(dims, 1);
        let (routing, stats) = lash().route_with_stats(&fabric).unwrap();
        assert_eq!(routing.tables.unrouted(&fabric, true), 0, "{dims:?}");
        check_deadlock_free(&fabric, &routing.tables, routing.path_sls.as_ref()).unwrap();
        // With every path on SL 0 the same tables deadlock.
        if stats.layers > 1 {
            assert!(
                check_deadlock_free(&fabric, &routing.tables, None).is_err(),
                "{dims:?}"
            );
        }
        let n = dims.iter().product::<usize>();
        assert_eq!(stats.paths_per_layer.iter().sum::<usize>(), n * (n - 1));
        // Deterministic.
        assert_eq!(lash().route(&fabric).unwrap(), routing);
    }
    assert!(
        lash()
            .route_with_stats(&torus(&[5, 5], 1))
            .unwrap()
            .1
            .layers
            > 1
    );
}

#[test]
fn too_few_vls_is_an_error() {
    let fabric = torus(&[6, 6], 1);
    let needed = lash().route_with_stats(&fabric).unwrap().1.layers;
    assert!(needed > 2);
    let few = Lash::new(&EngineOptions {
        max_vls: Some(2),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(
        few.route(&fabric).unwrap_err(),
        RoutingError::NotEnoughLayers {
            engine: "lash",
            needed: 3,
            available: 2
        }
    );
    let exact = Lash::new(&EngineOptions {
        max_vls: Some(needed as u8),
        ..Default::default()
    })
    .unwrap();
    assert!(exact.route(&fabric).is_ok());
    for bad in [0, 16] {
        assert!(matches!(
            Lash::new(&EngineOptions {
                max_vls: Some(bad),
                ..Default::default()
            }),
            Err(RoutingError::BadOptions(_))
        ));
    }
}

#[test]
fn registry_builds_lash() {
    let e = registry::engine("lash", &EngineOptions::default()).unwrap();
    assert_eq!(e.name(), "lash");
    let f = preset("4-ary-2-full");
    assert_eq!(e.route(&f).unwrap(), lash().route(&f).unwrap());
}

#[test]
fn lmc_ranges_route_alike() {
    let mut f = torus(&[4, 4], 1);
    assign_lids(
        &mut f,
        &LidOptions {
            lmc: 2,
            ..Default::default()
        },
    )
    .unwrap();
    let r = lash().route(&f).unwrap();
    assert_eq!(r.tables.unrouted(&f, true), 0);
    let sls = r.path_sls.as_ref().unwrap();
    for (_, port) in f.lid_ports().filter(|(_, p)| p.lmc == 2) {
        for sw in f.switches() {
            let base = r.tables.get(sw, port.lid);
            for k in 1..4 {
                assert_eq!(r.tables.get(sw, Lid(port.lid.0 + k)), base);
            }
        }
    }
    for (_, a) in f.lid_ports().filter(|(_, p)| p.lmc == 2) {
        for (_, b) in f.lid_ports().filter(|(_, p)| p.lmc == 2) {
            assert_eq!(
                sls.get(Lid(a.lid.0 + 1), b.lid),
                sls.get(a.lid, Lid(b.lid.0 + 3))
            );
        }
    }
    check_deadlock_free(&f, &r.tables, Some(sls)).unwrap();
}

#[test]
fn odd_fabrics_are_errors_not_panics() {
    // Two switches without a cable between them.
    let mut b = FabricBuilder::new();
    let s1 = b
        .add_node(NodeSpec::new(NodeKind::Switch, Guid(0x10), 4, "s1"))
        .unwrap();
    let s2 = b
        .add_node(NodeSpec::new(NodeKind::Switch, Guid(0x11), 4, "s2"))
        .unwrap();
    let ca = b
        .add_node(NodeSpec::new(NodeKind::Ca, Guid(0x20), 2, "ca"))
        .unwrap();
    b.connect(
        PortRef::new(s1, 1),
        PortRef::new(ca, 1),
        LinkRate::default(),
    )
    .unwrap();
    b.connect(
        PortRef::new(s2, 1),
        PortRef::new(ca, 2),
        LinkRate::default(),
    )
    .unwrap();
    let mut f = b.build();
    assign_lids(&mut f, &LidOptions::default()).unwrap();
    assert!(matches!(
        lash().route(&f),
        Err(RoutingError::Disconnected { .. })
    ));

    // No switches: nothing to route.
    let mut b = FabricBuilder::new();
    let a = b
        .add_node(NodeSpec::new(NodeKind::Ca, Guid(0x20), 1, "a"))
        .unwrap();
    let z = b
        .add_node(NodeSpec::new(NodeKind::Ca, Guid(0x30), 1, "z"))
        .unwrap();
    b.connect(PortRef::new(a, 1), PortRef::new(z, 1), LinkRate::default())
        .unwrap();
    let mut f = b.build();
    assign_lids(&mut f, &LidOptions::default()).unwrap();
    let r = lash().route(&f).unwrap();
    assert_eq!(r.path_sls.unwrap().num_sls(), 1);

    // LIDs missing.
    let mut f = preset("4-ary-2-full");
    f.clear_lids();
    assert!(matches!(lash().route(&f), Err(RoutingError::MissingLid(_))));

    // One switch alone, with a CA and a dangling CA.
    let mut b = FabricBuilder::new();
    let s = b
        .add_node(NodeSpec::new(NodeKind::Switch, Guid(0x10), 4, "s"))
        .unwrap();
    let c = b
        .add_node(NodeSpec::new(NodeKind::Ca, Guid(0x20), 1, "c"))
        .unwrap();
    b.add_node(NodeSpec::new(NodeKind::Ca, Guid(0x30), 1, "alone"))
        .unwrap();
    b.connect(PortRef::new(s, 3), PortRef::new(c, 1), LinkRate::default())
        .unwrap();
    let mut f = b.build();
    assign_lids(&mut f, &LidOptions::default()).unwrap();
    let r = lash().route(&f).unwrap();
    assert_eq!(r.tables.get(s, f.node_lid(c)), Some(3));
    assert_eq!(r.tables.get(s, f.node_lid(s)), Some(0));
}

/// The big trees, against OpenSM dumps kept outside the repository:
/// `LASH_OPENSM_DIR=/dir/with/<preset>/{opensm-lfts.dump,guid2lid[,lanes.txt]}
/// cargo test --release -p ibcloud-routing --test lash -- --ignored`.
#[test]
#[ignore]
fn big_trees_match_opensm() {
    let Ok(root) = std::env::var("LASH_OPENSM_DIR") else {
        eprintln!("LASH_OPENSM_DIR not set");
        return;
    };
    for name in ["ft324", "ft648", "8-ary-3", "8-ary-3-full", "ft5832"] {
        let dir = Path::new(&root).join(name);
        if !dir.join("opensm-lfts.dump").exists() {
            eprintln!("{name}: no dump, skipped");
            continue;
        }
        let mut fabric = preset(name);
        apply_guid2lid(&mut fabric, &dir);
        let t = std::time::Instant::now();
        let (routing, stats) = lash().route_with_stats(&fabric).unwrap();
        let secs = t.elapsed().as_secs_f64();
        for log in ["lanes.txt", "lanes.log"]
            .map(|f| dir.join(f))
            .into_iter()
            .filter(|f| f.exists())
        {
            let (assigned, balanced) = opensm_layers_in(&log);
            assert_eq!(
                (
                    stats.paths_per_layer_assigned.clone(),
                    stats.paths_per_layer.clone()
                ),
                (assigned, balanced)
            );
        }
        let theirs = opensm_tables(&fabric, &dir);
        let (n, first) = table_diffs(&fabric, &routing.tables, &theirs, 10);
        eprintln!("{name}: {secs:.2} s, {n} entries differ");
        assert_eq!(n, 0, "{name}:\n{first}");
    }
}
