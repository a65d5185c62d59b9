//! Hand-computed metrics on small trees.

use super::*;
use crate::endpoints::Endpoints;
use crate::patterns::TrafficMatrix;
use ibcloud_fabric::generate::FatTreeParams;
use ibcloud_fabric::Lid;
use ibcloud_routing::{registry, EngineOptions, RoutingEngine};

/// XGFT(2; 2,2; 1,2): two leaves with two CAs each, two roots.
fn two_by_two() -> (Fabric, ForwardingTables) {
    let f = FatTreeParams::xgft(&[2, 2], &[1, 2]).build().unwrap();
    let t = registry::engine("ftree", &EngineOptions::default())
        .unwrap()
        .route(&f)
        .unwrap()
        .tables;
    (f, t)
}

/// CA LIDs grouped by leaf switch.
fn leaves(f: &Fabric) -> Vec<Vec<Lid>> {
    let mut by: std::collections::BTreeMap<u32, Vec<Lid>> = Default::default();
    for e in Endpoints::cas(f).as_slice() {
        by.entry(f.remote(e.port).unwrap().node.0)
            .or_default()
            .push(e.lid);
    }
    by.into_values().collect()
}

fn matrix(f: &Fabric, t: &ForwardingTables, rows: &[(Lid, Lid, f64, u32)]) -> Analysis {
    let (eps, m) = TrafficMatrix::from_lid_rows(f, rows).unwrap();
    analyze(f, t, &eps, &Pattern::Matrix(m), &AnalysisOptions::default()).unwrap()
}

#[test]
fn two_flows_disjoint_then_shared() {
    let (f, mut t) = two_by_two();
    let l = leaves(&f);
    let (a, b, c, d) = (l[0][0], l[0][1], l[1][0], l[1][1]);
    let r = matrix(&f, &t, &[(a, c, 1.0, 0), (b, d, 1.0, 0)]);
    assert_eq!(r.hist_max_cong, vec![(1.0, 2)]);
    let run = &r.runs[0];
    assert_eq!(
        (
            run.flows,
            run.acc_band,
            run.max_cong,
            run.sum_max_cong,
            run.dep_max_delay
        ),
        (2, 1.0, 1.0, 1.0, 1.0)
    );
    // Both flows up through the same root: the up link and the root's down
    // link carry two.
    let leaf = f
        .remote(Endpoints::from_lids(&f, &[a]).unwrap().as_slice()[0].port)
        .unwrap()
        .node;
    let up = t.get(leaf, c).unwrap();
    t.set(leaf, d, up);
    let r = matrix(&f, &t, &[(a, c, 1.0, 0), (b, d, 1.0, 0)]);
    assert_eq!(r.hist_max_cong, vec![(2.0, 2)]);
    let run = &r.runs[0];
    assert_eq!(
        (
            run.acc_band,
            run.max_cong,
            run.sum_max_cong,
            run.dep_max_delay
        ),
        (0.5, 2.0, 2.0, 2.0)
    );
    assert_eq!(r.broken_flows, 0);
    let busiest = r.links.iter().map(|l| l.max).fold(0.0, f64::max);
    assert_eq!(busiest, 2.0);
    // Each flow crosses 4 links; the 2 shared ones count once each.
    assert_eq!(r.links.len(), 6);
    assert_eq!(r.links.iter().map(|l| l.total).sum::<f64>(), 8.0);
}

#[test]
fn gather_delay_is_senders() {
    let (f, t) = two_by_two();
    let eps = Endpoints::cas(&f);
    let opts = AnalysisOptions {
        shuffle: false,
        ..AnalysisOptions::default()
    };
    let r = analyze(&f, &t, &eps, &Pattern::Gather, &opts).unwrap();
    let run = &r.runs[0];
    // Three senders share the link into rank 0.
    assert_eq!(r.hist_max_cong, vec![(3.0, 3)]);
    assert!((run.acc_band - 1.0 / 3.0).abs() < 1e-15);
    assert_eq!((run.dep_max_delay, run.sum_max_cong), (3.0, 3.0));
}

#[test]
fn delay_chains_levels() {
    let (f, t) = two_by_two();
    let l = leaves(&f);
    // Ranks 0, 1 on one leaf and 2, 3 on the other.
    let eps = Endpoints::from_lids(&f, &[l[0][0], l[0][1], l[1][0], l[1][1]]).unwrap();
    let opts = AnalysisOptions {
        shuffle: false,
        ..AnalysisOptions::default()
    };
    // Tree: level 0 is 0→1, level 1 is 0→2 and 1→3 (disjoint under ftree).
    let r = analyze(&f, &t, &eps, &Pattern::Tree, &opts).unwrap();
    let run = &r.runs[0];
    assert_eq!(run.levels, 2);
    assert_eq!(
        (run.flows, run.sum_max_cong, run.dep_max_delay, run.acc_band),
        (3, 2.0, 2.0, 1.0)
    );
    // Ring: 4 sequential single flows, each waiting for the previous.
    let r = analyze(&f, &t, &eps, &Pattern::Ring, &opts).unwrap();
    assert_eq!(
        (
            r.runs[0].levels,
            r.runs[0].dep_max_delay,
            r.runs[0].sum_max_cong
        ),
        (4, 4.0, 4.0)
    );
}

#[test]
fn weighted_flows_share_by_weight() {
    let (f, mut t) = two_by_two();
    let l = leaves(&f);
    let (a, b, c, d) = (l[0][0], l[0][1], l[1][0], l[1][1]);
    let leaf = f
        .remote(Endpoints::from_lids(&f, &[a]).unwrap().as_slice()[0].port)
        .unwrap()
        .node;
    let up = t.get(leaf, c).unwrap();
    t.set(leaf, d, up);
    let r = matrix(&f, &t, &[(a, c, 1.0, 0), (b, d, 3.0, 0)]);
    // The shared link carries 4: the light flow sees congestion 4, the heavy 4/3.
    assert_eq!(r.hist_max_cong, vec![(4.0 / 3.0, 1), (4.0, 1)]);
    let run = &r.runs[0];
    assert!((run.acc_band - 0.5).abs() < 1e-15);
    assert_eq!((run.sum_max_cong, run.dep_max_delay), (4.0, 4.0));
    // Levels in a matrix do not interfere.
    let r = matrix(&f, &t, &[(a, c, 1.0, 0), (b, d, 3.0, 1)]);
    assert_eq!(r.runs[0].levels, 2);
    assert_eq!(r.runs[0].acc_band, 1.0);
}

#[test]
fn broken_flows_are_counted_not_dropped() {
    let (f, mut t) = two_by_two();
    let l = leaves(&f);
    for s in f.switches().collect::<Vec<_>>() {
        t.set(s, l[1][1], ibcloud_fabric::lft::NO_PORT);
    }
    let eps = Endpoints::cas(&f);
    let r = analyze(
        &f,
        &t,
        &eps,
        &Pattern::Shift,
        &AnalysisOptions {
            shuffle: false,
            ..Default::default()
        },
    )
    .unwrap();
    // Each of the 3 levels has one flow into the broken LID.
    assert_eq!(r.broken_flows, 3);
    assert_eq!(r.runs[0].broken, 3);
    assert_eq!(r.runs[0].flows, 9);
    assert_eq!(r.broken.len(), 3);
    assert!(r
        .broken
        .iter()
        .all(|b| b.dst == l[1][1] && b.failure == ibcloud_routing::verify::Failure::Unset));
}

#[test]
fn shift_is_contention_free_in_ftree_order() {
    let f = ibcloud_fabric::generate::preset("ft324")
        .unwrap()
        .build()
        .unwrap();
    let engine = ibcloud_routing::engines::ftree::FtreeEngine::new();
    let t = engine.route(&f).unwrap().tables;
    let order: Vec<Lid> = engine
        .ca_order(&f)
        .unwrap()
        .into_iter()
        .map(|l| l.unwrap())
        .collect();
    let eps = Endpoints::from_lids(&f, &order).unwrap();
    let opts = AnalysisOptions {
        shuffle: false,
        ..AnalysisOptions::default()
    };
    let r = analyze(&f, &t, &eps, &Pattern::Shift, &opts).unwrap();
    assert_eq!(r.runs[0].levels, 323);
    assert_eq!(r.hist_max_cong, vec![(1.0, 324 * 323)]);
    assert_eq!(r.runs[0].acc_band, 1.0);
    // A random order is not.
    let shuffled = analyze(
        &f,
        &t,
        &eps,
        &Pattern::Shift,
        &AnalysisOptions {
            seed: 3,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(shuffled.runs[0].acc_band < 0.9);
}

#[test]
fn same_seed_same_result_on_any_thread_count_and_path_mode() {
    let f = ibcloud_fabric::generate::preset("4-ary-3-full")
        .unwrap()
        .build()
        .unwrap();
    let t = registry::engine("updn", &EngineOptions::default())
        .unwrap()
        .route(&f)
        .unwrap()
        .tables;
    let eps = Endpoints::cas(&f);
    for pattern in [
        Pattern::Bisect,
        Pattern::Rand,
        Pattern::Shift,
        Pattern::Neighbor(4),
    ] {
        let base = AnalysisOptions {
            runs: 40,
            seed: 9,
            threads: Some(1),
            ..Default::default()
        };
        let one = analyze(&f, &t, &eps, &pattern, &base).unwrap();
        let three = analyze(
            &f,
            &t,
            &eps,
            &pattern,
            &AnalysisOptions {
                threads: Some(3),
                ..base.clone()
            },
        )
        .unwrap();
        let walk = analyze(
            &f,
            &t,
            &eps,
            &pattern,
            &AnalysisOptions {
                path_mode: PathMode::Walk,
                threads: Some(2),
                ..base.clone()
            },
        )
        .unwrap();
        assert!(one.precomputed_paths && !walk.precomputed_paths);
        assert_eq!(one, three, "{pattern:?}");
        assert_eq!(one.runs, walk.runs, "{pattern:?}");
        assert_eq!(one.hist_max_cong, walk.hist_max_cong);
        assert_eq!(one.links, walk.links);
        let other = analyze(
            &f,
            &t,
            &eps,
            &pattern,
            &AnalysisOptions {
                seed: 10,
                ..base.clone()
            },
        )
        .unwrap();
        assert_ne!(one.runs, other.runs, "{pattern:?}");
    }
}

#[test]
fn multi_job_runs_match_single_job_chaining() {
    // Shift over 128 ranks has 127 levels of 128 flows: one job per run. The
    // same analysis cut into many jobs must give the same delay chain.
    let f = ibcloud_fabric::generate::preset("4-ary-3-full")
        .unwrap()
        .build()
        .unwrap();
    let t = registry::engine("ftree", &EngineOptions::default())
        .unwrap()
        .route(&f)
        .unwrap()
        .tables;
    let eps = Endpoints::cas(&f);
    let paths = Paths::new(&f, &t, &eps, PathMode::Table).unwrap();
    let opts = AnalysisOptions {
        runs: 3,
        seed: 2,
        ..Default::default()
    };
    let whole = analyze_with_paths(&f, &paths, &Pattern::Shift, &opts, &mut |_, _| true).unwrap();
    let plan = Plan::new(&Pattern::Shift, eps.len(), 3);
    assert_eq!(plan.jobs_per_run, 1);
    let cut = Plan {
        levels_per_job: 5,
        jobs_per_run: 127usize.div_ceil(5),
        ..plan
    };
    let job = Job {
        paths: &paths,
        pattern: &Pattern::Shift,
        order: &RankOrder::new(128, &[], true).unwrap(),
        plan: &cut,
        seed: 2,
    };
    let merged = execute::<u32>(&job, &mut |_, _| true).unwrap();
    let split = merged.finish(&f, &Pattern::Shift, 128, 2, true);
    assert_eq!(whole.runs, split.runs);
    assert_eq!(whole.hist_max_cong, split.hist_max_cong);
}

#[test]
fn bad_options() {
    let (f, t) = two_by_two();
    let eps = Endpoints::cas(&f);
    let e = analyze(
        &f,
        &t,
        &eps,
        &Pattern::Bisect,
        &AnalysisOptions {
            runs: 0,
            ..Default::default()
        },
    );
    assert!(e.is_err());
    let three = Endpoints::from_list(eps.as_slice()[..3].to_vec()).unwrap();
    let e = analyze(
        &f,
        &t,
        &three,
        &Pattern::Bisect,
        &AnalysisOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("even"), "{e}");
    let other = FatTreeParams::xgft(&[2, 3], &[1, 2]).build().unwrap();
    assert!(matches!(
        analyze(
            &other,
            &t,
            &Endpoints::cas(&other),
            &Pattern::Bisect,
            &AnalysisOptions::default()
        ),
        Err(AnalysisError::WrongFabric { .. })
    ));
    let cancelled = analyze_with_paths(
        &f,
        &Paths::new(&f, &t, &eps, PathMode::Table).unwrap(),
        &Pattern::Bisect,
        &AnalysisOptions::default(),
        &mut |_, _| false,
    );
    assert!(cancelled.is_err());
}
