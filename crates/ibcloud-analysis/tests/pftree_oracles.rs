//! The pFTree test oracles of E §4.5 that need the analysis: a `phy`
//! victim's dep_max_delay does not change under noise, gather delay without
//! foreign sharing is v − 1, pFTree-Wt has no downward contention while
//! receivers per leaf ≤ up-links; and the contrast with base pFTree.

use ibcloud_analysis::partition::{
    partition_flows, receiver_contention, victim_delay, VictimNoise,
};
use ibcloud_analysis::{Endpoints, Pattern};
use ibcloud_fabric::generate::FatTreeParams;
use ibcloud_fabric::lids::{assign_lids, LidOptions};
use ibcloud_fabric::partitions::{Isolation, Membership, Partition, PartitionConfig};
use ibcloud_fabric::{Fabric, Guid};
use ibcloud_routing::engines::pftree::{Flavor, Pftree};
use ibcloud_routing::fat_tree::FatTree;
use ibcloud_routing::{EngineOptions, Routing};

/// XGFT(2; m1, m2; 1, w2) and its nodes per leaf (port GUIDs).
fn xgft(m1: u32, m2: u32, w2: u32) -> (Fabric, Vec<Vec<Guid>>) {
    let mut f = FatTreeParams::xgft(&[m1, m2], &[1, w2]).build().unwrap();
    assign_lids(&mut f, &LidOptions::default()).unwrap();
    let t = FatTree::build(&f, &EngineOptions::default()).unwrap();
    let leaves = t
        .leaves()
        .iter()
        .map(|&l| t.compute_nodes(l).iter().map(|c| c.port_guid).collect())
        .collect();
    (f, leaves)
}

/// Victims: `per_leaf` nodes of every leaf (spread: every third port); the rest interfere.
fn split(leaves: &[Vec<Guid>], per_leaf: usize) -> (Vec<Guid>, Vec<Guid>) {
    let (mut v, mut o) = (Vec::new(), Vec::new());
    for l in leaves {
        for (i, &g) in l.iter().enumerate() {
            if i % 3 == 1 && v.iter().filter(|x| l.contains(x)).count() < per_leaf {
                v.push(g);
            } else {
                o.push(g);
            }
        }
    }
    (v, o)
}

fn route_w(
    f: &Fabric,
    flavor: Flavor,
    v: &[Guid],
    o: &[Guid],
    weights: Option<Vec<(Guid, f64)>>,
) -> Routing {
    let mut c = PartitionConfig::default();
    let mut pv = Partition::new("victim", 1).with_isolation(Isolation::Phy);
    for &g in v {
        pv = pv.with_member(g, Membership::Full);
    }
    let mut po = Partition::new("noise", 2);
    for &g in o {
        po = po.with_member(g, Membership::Full);
    }
    c.partitions = vec![pv, po];
    let opts = EngineOptions {
        partitions: Some(c),
        node_weights: weights,
        ..Default::default()
    };
    Pftree::new(flavor, &opts).run(f).unwrap().routing
}

fn delays(f: &Fabric, r: &Routing, v: &[Guid], o: &[Guid], vp: Pattern, np: Pattern) -> Vec<f64> {
    let setup = VictimNoise {
        victims: Endpoints::from_guids(f, v).unwrap(),
        victim_pattern: vp,
        noise: Endpoints::from_guids(f, o).unwrap(),
        noise_pattern: np,
    };
    victim_delay(f, &r.tables, &setup, 12, 7).unwrap().delays
}

#[test]
fn phy_victim_delay_is_unchanged_by_alltoall_noise() {
    let (f, leaves) = xgft(8, 4, 4);
    let (v, o) = split(&leaves, 2);
    assert_eq!((v.len(), o.len()), (8, 24));
    let ext = route(&f, Flavor::Ext, &v, &o);
    for p in [
        Pattern::Bisect,
        Pattern::BisectFbSym,
        Pattern::Gather,
        Pattern::Scatter,
        Pattern::Shift,
    ] {
        let quiet = delays(&f, &ext, &v, &o, p.clone(), Pattern::Null);
        let noisy = delays(&f, &ext, &v, &o, p.clone(), Pattern::Shift);
        assert_eq!(quiet, noisy, "{}", p.name());
    }
    // Gather: no foreign sharing, so every run's delay is v - 1.
    let g = delays(&f, &ext, &v, &o, Pattern::Gather, Pattern::Shift);
    assert!(g.iter().all(|&d| d == 7.0), "{g:?}");
}

#[test]
fn noise_reaches_victims_only_where_partitions_share_links() {
    // 3:1 tree, the first 3 nodes of each leaf of 12 are victims, 4 roots. Partition-oblivious
    // ftree mixes the partitions on every root: noise raises the victim's
    // delay. pFTree's node order and marks give the victims one root per
    // leaf, and -Ext's phy policy guarantees it: noise changes nothing.
    let (f, leaves) = xgft(12, 4, 4);
    let (mut v, mut o) = (Vec::new(), Vec::new());
    for l in &leaves {
        for (i, &g) in l.iter().enumerate() {
            if i < 3 {
                v.push(g)
            } else {
                o.push(g)
            }
        }
    }
    let ftree = ibcloud_routing::registry::engine("ftree", &EngineOptions::default())
        .unwrap()
        .route(&f)
        .unwrap();
    let base = route(&f, Flavor::Base, &v, &o);
    let ext = route(&f, Flavor::Ext, &v, &o);
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    let f_quiet = delays(&f, &ftree, &v, &o, Pattern::Bisect, Pattern::Null);
    let f_noisy = delays(&f, &ftree, &v, &o, Pattern::Bisect, Pattern::Shift);
    assert!(
        mean(&f_noisy) > 5.0 * mean(&f_quiet),
        "{f_quiet:?} {f_noisy:?}"
    );
    for r in [&base, &ext] {
        let quiet = delays(&f, r, &v, &o, Pattern::Bisect, Pattern::Null);
        let noisy = delays(&f, r, &v, &o, Pattern::Bisect, Pattern::Shift);
        assert_eq!(quiet, noisy);
    }
    // Interference: none under pFTree here, plenty under ftree.
    let ep = Endpoints::from_guids(&f, &[v.clone(), o.clone()].concat()).unwrap();
    let labels: Vec<Option<u32>> = (0..ep.len())
        .map(|i| Some(u32::from(i >= v.len())))
        .collect();
    let fe = partition_flows(&f, &ext.tables, &ep, &labels)
        .unwrap()
        .interference();
    assert_eq!(fe.flow_pairs, 0);
    let ff = partition_flows(&f, &ftree.tables, &ep, &labels)
        .unwrap()
        .interference();
    assert!(ff.flow_pairs > 0 && ff.shared_links > 0);
}

#[test]
fn pftree_wt_has_no_downward_contention_when_receivers_fit_the_up_links() {
    let (f, leaves) = xgft(8, 4, 4);
    let (v, o) = split(&leaves, 2);
    let all: Vec<Guid> = leaves.iter().flatten().copied().collect();
    let ep = Endpoints::from_guids(&f, &all).unwrap();
    // 1..=4 receivers per leaf (4 up-links), weight 100.
    for per_leaf in 1..=4usize {
        let recv: Vec<Guid> = leaves
            .iter()
            .flat_map(|l| l.iter().step_by(2).take(per_leaf).copied())
            .collect();
        let w: Vec<(Guid, f64)> = recv.iter().map(|&g| (g, 100.0)).collect();
        let wt = route_w(&f, Flavor::Wt, &v, &o, Some(w));
        let idx: Vec<u32> = recv
            .iter()
            .map(|g| all.iter().position(|x| x == g).unwrap() as u32)
            .collect();
        let c = receiver_contention(&f, &wt.tables, &ep, &idx).unwrap();
        assert_eq!(c.down.contention, 0, "{per_leaf} receivers per leaf: {c:?}");
        assert_eq!(c.down.contended_links, 0);
    }
}

fn route(f: &Fabric, flavor: Flavor, v: &[Guid], o: &[Guid]) -> Routing {
    route_w(f, flavor, v, o, None)
}
