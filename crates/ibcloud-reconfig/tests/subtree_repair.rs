//! Paper III's sub-tree after a fault (`subtree::repair`, method
//! `subtree-grow`, the SM's `--reconfig subtree`): the strict sub-tree is
//! not enough after a leaf up-link fails in a 3-level tree (the roots keep
//! sending into the broken link), so it grows until ibcloud's verification
//! passes; on an intact tree the switch-LID routes equal ftree's.

use ibcloud_fabric::generate::{preset, FatTreeParams};
use ibcloud_fabric::{Lid, PortRef};
use ibcloud_reconfig::event::{resolve_node, Event, FabricState};
use ibcloud_reconfig::method::{reconfigure, Method, MethodOptions};
use ibcloud_reconfig::report::ChangeReport;
use ibcloud_reconfig::slimupdate::roots_of;
use ibcloud_reconfig::subtree::repair;
use ibcloud_routing::{registry, EngineOptions};

#[test]
fn a_leaf_uplink_failure_needs_the_whole_3_level_tree() {
    let f = preset("4-ary-3-full").unwrap().build().unwrap();
    let old = registry::engine("ftree", &EngineOptions::default())
        .unwrap()
        .route(&f)
        .unwrap()
        .tables;
    let leaf = resolve_node(&f, "sw-L1-0001").unwrap();
    let ev = Event::FailLink(PortRef::new(leaf, 5));
    let opts = MethodOptions {
        verify: true,
        ..MethodOptions::default()
    };
    let (_, strict) = reconfigure(
        &mut FabricState::new(f.clone()),
        &old,
        Some(&ev),
        &Method::Subtree(Vec::new()),
        &opts,
    )
    .unwrap();
    let c = strict.check.unwrap();
    assert!(
        c.reachable < c.pairs,
        "Paper III's 2-level sub-tree alone: {c:?}"
    );
    let (_, grown) = reconfigure(
        &mut FabricState::new(f.clone()),
        &old,
        Some(&ev),
        &Method::SubtreeGrow(Vec::new()),
        &opts,
    )
    .unwrap();
    let rep = grown.subtree_repair.unwrap();
    assert_eq!(rep.nodes, vec![leaf]);
    let levels: Vec<u32> = rep.attempts.iter().map(|a| a.levels).collect();
    assert_eq!(levels, vec![2, 3]);
    assert!(rep.verified && !rep.attempts[0].check.ok() && rep.attempts[1].check.ok());
    assert!(grown.check.unwrap().ok());
    assert_eq!(grown.changes, rep.attempts[1].changes);
}

#[test]
fn a_4_level_tree_grows_to_the_roots() {
    let f = FatTreeParams::k_ary_n_tree(2, 4).build().unwrap();
    let old = registry::engine("ftree", &EngineOptions::default())
        .unwrap()
        .route(&f)
        .unwrap()
        .tables;
    let leaf = f
        .switches()
        .find(|&s| f.neighbors(s).any(|(_, r)| !f.node(r.node).is_switch()))
        .unwrap();
    let up = f
        .neighbors(leaf)
        .find(|(_, r)| f.node(r.node).is_switch())
        .map(|(p, _)| PortRef::new(leaf, p))
        .unwrap();
    let mut state = FabricState::new(f.clone());
    let (new, out) = reconfigure(
        &mut state,
        &old,
        Some(&Event::FailLink(up)),
        &Method::SubtreeGrow(Vec::new()),
        &MethodOptions {
            verify: true,
            ..MethodOptions::default()
        },
    )
    .unwrap();
    let rep = out.subtree_repair.unwrap();
    // In a k-ary-n-tree the switches above the middle switch that lost the
    // leaf reach only it on the way down, up to the roots: only the whole
    // tree (4 levels) repairs the routes.
    let tried: Vec<(u32, bool)> = rep
        .attempts
        .iter()
        .map(|a| (a.levels, a.check.ok()))
        .collect();
    assert_eq!(tried, vec![(2, false), (3, false), (4, true)]);
    assert!(rep.verified && out.check.unwrap().ok());
    assert_eq!(out.changes, ChangeReport::between(&old, &new));
}

#[test]
fn switch_lid_routes_on_an_intact_tree_equal_ftree() {
    let f = preset("4-ary-3-full").unwrap().build().unwrap();
    let old = registry::engine("ftree", &EngineOptions::default())
        .unwrap()
        .route(&f)
        .unwrap()
        .tables;
    let rooted = EngineOptions {
        roots: Some(roots_of(&f).unwrap()),
        ..EngineOptions::default()
    };
    let leaf = resolve_node(&f, "sw-L1-0001").unwrap();
    let (new, rep) = repair(&f, &old, &f, &[leaf], &rooted).unwrap();
    assert!(rep.verified);
    let switch_lids: Vec<Lid> = f.switches().map(|s| f.node_lid(s)).collect();
    let c = ChangeReport::between_for(&old, &new, &switch_lids);
    assert_eq!(c.changed_entries, 0, "{c:?}");
}
