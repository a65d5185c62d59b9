//! Regression: after any single switch-to-switch link failure, SlimUpdate's
//! tables (compute-node routes and switch-LID routes) pass ibcloud's
//! verifier with switch LIDs included:
//!
//! - every CA reaches every CA and every switch (the SM's port among them:
//!   LID-routed SMPs and tools such as `ibroute -n LID` need it); before the
//!   fix, the leaf that lost a link could not reach the 12 switches with no
//!   up*/down* path from it on 4-ary-3-full (`sw-L1-0001:5`);
//! - CA-to-CA: no credit loop, no down→up turn in old ∪ new;
//! - a switch source fails only towards a destination it has no up*/down*
//!   path to (ftree's rule for switches, kept on purpose), and never from a
//!   leaf;
//! - after the second phase (`completion`), every switch reaches every CA
//!   too, and the compute-node paths are still all delivered, loop-free.

use ibcloud_fabric::generate::{preset, FatTreeParams};
use ibcloud_fabric::{Fabric, NodeId, PortRef};
use ibcloud_reconfig::completion::complete_blank_entries;
use ibcloud_reconfig::event::{resolve_node, Event, FabricState};
use ibcloud_reconfig::slimupdate::{roots_of, slim_update, SlimUpdateOptions};
use ibcloud_reconfig::subtree::{check, ranks};
use ibcloud_routing::fat_tree::FatTree;
use ibcloud_routing::verify::{verify, VerifyOptions};
use ibcloud_routing::{registry, EngineOptions};

/// Per source switch, the nodes it can reach going up then down (ranks: 0
/// at the roots); a CA destination counts by its leaf.
fn updown_reach(f: &Fabric, rank: &[Option<u32>]) -> Vec<Vec<bool>> {
    let r = |n: NodeId| rank[n.index()];
    let walk = |start: NodeId, up: bool| {
        let mut seen = vec![false; f.num_nodes()];
        let mut stack = vec![start];
        seen[start.index()] = true;
        while let Some(s) = stack.pop() {
            for (_, x) in f.neighbors(s) {
                let (Some(a), Some(b)) = (r(s), r(x.node)) else {
                    continue;
                };
                if (if up { b < a } else { b > a }) && !seen[x.node.index()] {
                    seen[x.node.index()] = true;
                    stack.push(x.node);
                }
            }
        }
        seen
    };
    let down: Vec<Vec<bool>> = (0..f.num_nodes())
        .map(|i| walk(NodeId(i as u32), false))
        .collect();
    (0..f.num_nodes())
        .map(|i| {
            let ups = walk(NodeId(i as u32), true);
            let mut acc = vec![false; f.num_nodes()];
            for (a, _) in ups.iter().enumerate().filter(|(_, &u)| u) {
                for (x, &d) in down[a].iter().enumerate() {
                    acc[x] |= d;
                }
            }
            acc
        })
        .collect()
}

/// Runs every single switch-to-switch link failure of `f`; returns how many.
fn every_single_link_failure(f: Fabric) -> usize {
    let ftree = registry::engine("ftree", &EngineOptions::default()).unwrap();
    let old = ftree.route(&f).unwrap().tables;
    let opts = VerifyOptions {
        include_switches: true,
        credit_loops: false,
        max_failures: usize::MAX,
        ..VerifyOptions::default()
    };
    let lids = f.lid_table().unwrap();
    // Rank the degraded tree as before the failure (OpenSM's root_guid_file).
    let rooted = EngineOptions {
        roots: Some(roots_of(&f).unwrap()),
        ..EngineOptions::default()
    };
    let owner = |lid: u16| lids[lid as usize].unwrap().node;
    // The CA's leaf stands for a CA destination.
    let at_switch = |f: &Fabric, n: NodeId| {
        if f.node(n).is_switch() {
            n
        } else {
            f.neighbors(n).next().unwrap().1.node
        }
    };
    let links: Vec<_> = f
        .links()
        .filter(|l| f.node(l.a.node).is_switch() && f.node(l.b.node).is_switch())
        .collect();
    for l in &links {
        let mut state = FabricState::new(f.clone());
        let out = state.apply(&Event::FailLink(l.a)).unwrap();
        assert_eq!(out.unreachable_pairs, 0);
        let now = state.current();
        let rank = ranks(&now, &FatTree::build(&now, &rooted).unwrap());
        let new = slim_update(&f, &old, &now, &SlimUpdateOptions::default())
            .unwrap()
            .tables;
        let c = check(&f, &old, &now, &new, &rank, &[]).unwrap();
        assert!(c.ok(), "link {l:?}: CA-to-CA check {c:?}");
        // Second phase: the blank entries filled, compute-node paths unchanged.
        let (done, _) = complete_blank_entries(&now, &new).unwrap();
        let c2 = check(&f, &old, &now, &done, &rank, &[]).unwrap();
        assert!(
            c2.pairs == c2.reachable && c2.credit_loop_free,
            "link {l:?}: {c2:?}"
        );
        let r2 = verify(&now, &done, None, &opts).unwrap();
        for p in &r2.first_failures {
            let dst = owner(p.destination_lid);
            assert!(
                now.node(dst).is_switch() && now.node(owner(p.source_lid)).is_switch(),
                "link {l:?} after completion: {} cannot reach {}",
                p.source,
                p.destination
            );
        }
        let r = verify(&now, &new, None, &opts).unwrap();
        let reach = updown_reach(&now, &rank);
        assert_eq!(r.first_failures.len() as u64, r.pairs - r.reachable);
        for p in &r.first_failures {
            let (src, dst) = (owner(p.source_lid), owner(p.destination_lid));
            let leaf_src = now.node(src).is_switch()
                && now
                    .neighbors(src)
                    .any(|(_, x)| !now.node(x.node).is_switch());
            assert!(
                now.node(src).is_switch() && !leaf_src,
                "link {l:?} failed: {} cannot reach {} ({:?})",
                p.source,
                p.destination,
                p.failure
            );
            assert!(
                !reach[src.index()][at_switch(&now, dst).index()],
                "link {l:?} failed: {} has an up/down path to {} but no route",
                p.source,
                p.destination
            );
        }
    }
    links.len()
}

#[test]
fn the_reported_case_routes_every_switch_lid_from_the_failed_leaf() {
    let f = preset("4-ary-3-full").unwrap().build().unwrap();
    let ftree = registry::engine("ftree", &EngineOptions::default()).unwrap();
    let old = ftree.route(&f).unwrap().tables;
    let leaf = resolve_node(&f, "sw-L1-0001").unwrap();
    let mut state = FabricState::new(f.clone());
    state
        .apply(&Event::FailLink(PortRef::new(leaf, 5)))
        .unwrap();
    let now = state.current();
    let new = slim_update(&f, &old, &now, &SlimUpdateOptions::default())
        .unwrap()
        .tables;
    let unrouted: Vec<_> = now
        .switches()
        .filter(|&s| new.get(leaf, now.node_lid(s)).is_none())
        .map(|s| now.node(s).description.clone())
        .collect();
    assert!(unrouted.is_empty(), "unrouted from the leaf: {unrouted:?}");
}

#[test]
fn every_single_link_failure_of_4_ary_3_full() {
    assert_eq!(
        every_single_link_failure(preset("4-ary-3-full").unwrap().build().unwrap()),
        256
    );
}

#[test]
fn every_single_link_failure_of_2_level_trees() {
    assert!(every_single_link_failure(FatTreeParams::k_ary_n_tree(4, 2).build().unwrap()) > 0);
    assert!(every_single_link_failure(FatTreeParams::k_ary_n_tree(3, 3).build().unwrap()) > 0);
}
