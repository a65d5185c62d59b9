//! The papers' experiments as functions the reproduction (`ibcloud
//! reproduce reconfig`) and the benchmarks call: each returns plain,
//! serialisable numbers and is deterministic for a seed.

use std::time::{Duration, Instant};

use ibcloud_analysis::{analyze, AnalysisOptions, Endpoints, Pattern, RankOrder};
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Fabric, Lid, NodeId};
use ibcloud_routing::fat_tree::FatTree;
use ibcloud_routing::{registry, EngineOptions, RoutingEngine};
use rand::seq::{IndexedRandom, SliceRandom};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::ReconfigError;
use crate::event::{Event, FabricState};
use crate::metabase::{Metabase, MetabaseOptions};
use crate::report::{changed_paths, ChangeReport};
use crate::slimupdate::{roots_of, slim_initial, slim_update, SlimUpdateOptions};
use crate::subtree::{SubtreeEngine, SubtreeOptions, SubtreeReconfigurer};

fn best<T>(
    repeats: usize,
    mut f: impl FnMut() -> Result<(T, Duration), ReconfigError>,
) -> Result<(T, Duration), ReconfigError> {
    let mut out = f()?;
    for _ in 1..repeats.max(1) {
        let r = f()?;
        if r.1 < out.1 {
            out = r;
        }
    }
    Ok(out)
}

fn ftree_engine(
    roots: Option<Vec<ibcloud_fabric::Guid>>,
) -> Result<Box<dyn RoutingEngine>, ReconfigError> {
    Ok(registry::engine(
        "ftree",
        &EngineOptions {
            roots,
            ..EngineOptions::default()
        },
    )?)
}

/// Paper III (Fig. 9/10): full ftree reconfiguration vs a sub-tree one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubtreeTiming {
    /// Compute nodes and switches.
    pub nodes: usize,
    /// Switches.
    pub switches: usize,
    /// Full ftree from scratch (build the tree + route), seconds.
    pub full: f64,
    /// Building ftree's data structures alone ("Build LID Matrices"), seconds.
    pub build: f64,
    /// Full re-route reusing the data structures (full − build), seconds.
    pub full_reuse: f64,
    /// Sub-tree reconfiguration (NoFTree, reversed port order), seconds.
    pub subtree: f64,
    /// Sub-tree levels, switches, destinations.
    pub subtree_levels: u32,
    /// Switches in the sub-tree.
    pub subtree_switches: usize,
    /// Destinations re-routed.
    pub subtree_destinations: usize,
    /// Entries and blocks the sub-tree reconfiguration changed.
    pub subtree_changed_entries: u64,
    /// Blocks (SMPs).
    pub subtree_changed_blocks: u64,
    /// Entries and blocks a full NoFTree re-route with the same order changed.
    pub full_changed_entries: u64,
    /// Blocks (SMPs).
    pub full_changed_blocks: u64,
    /// The sub-tree result verified (reachability, credit loops, union up/down).
    pub verified: bool,
}

/// Times a full ftree run and a 2-level sub-tree reconfiguration on `fabric`.
pub fn subtree_timing(fabric: &Fabric, repeats: usize) -> Result<SubtreeTiming, ReconfigError> {
    let ft = ftree_engine(None)?;
    let (routing, full) = best(repeats, || {
        let t = Instant::now();
        let r = ft.route(fabric)?;
        Ok((r, t.elapsed()))
    })?;
    let (_, build) = best(repeats, || {
        let t = Instant::now();
        let v =
            FatTree::build(fabric, &EngineOptions::default()).map_err(ReconfigError::from_tree)?;
        Ok((v, t.elapsed()))
    })?;
    let old = routing.tables;
    let r = SubtreeReconfigurer::new(fabric, &EngineOptions::default())?;
    let first = fabric
        .cas()
        .next()
        .ok_or_else(|| ReconfigError::NotFatTree("no CA".into()))?;
    let sub = r.select(&[first], &SubtreeOptions::default())?;
    let mut order = sub.destinations.clone();
    order.reverse();
    let engine = SubtreeEngine::NoFtree(order.clone());
    let (res, subtree) = best(repeats, || {
        let mut t = old.clone();
        let res = r.reconfigure_in_place(&mut t, &[first], &engine, &SubtreeOptions::default())?;
        let d = res.times.total();
        Ok((res, d))
    })?;
    let (_, checked) = r.reconfigure(&old, &[first], &engine, &SubtreeOptions::default())?;
    let full_order = registry::engine(
        "noftree",
        &EngineOptions {
            node_order: Some(order),
            ..EngineOptions::default()
        },
    )?
    .route(fabric)?;
    let fc = ChangeReport::between(&old, &full_order.tables);
    Ok(SubtreeTiming {
        nodes: fabric.cas().count(),
        switches: fabric.switches().count(),
        full: full.as_secs_f64(),
        build: build.as_secs_f64(),
        full_reuse: (full.as_secs_f64() - build.as_secs_f64()).max(0.0),
        subtree: subtree.as_secs_f64(),
        subtree_levels: res.subtree.levels,
        subtree_switches: res.subtree.switches.len(),
        subtree_destinations: res.subtree.destinations.len(),
        subtree_changed_entries: res.changes.changed_entries,
        subtree_changed_blocks: res.changes.changed_blocks,
        full_changed_entries: fc.changed_entries,
        full_changed_blocks: fc.changed_blocks,
        verified: checked.check.as_ref().is_some_and(|c| c.ok()),
    })
}

/// One step of a fault scenario: what ftree and SlimUpdate changed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioStep {
    /// 1-based step.
    pub step: usize,
    /// ftree's changes against its tables before the step (every LID).
    pub ftree: ChangeReport,
    /// SlimUpdate's changes against its tables before the step (every LID).
    pub slim: ChangeReport,
    /// ftree's changes on the compute nodes live before and after the step
    /// (the unit the papers' "paths modified" fits; the departed node's own
    /// entries and switch LIDs left out).
    pub ftree_cn: ChangeReport,
    /// The same for SlimUpdate.
    pub slim_cn: ChangeReport,
    /// ftree's changes on the compute nodes live *before* the step: a
    /// departed node's removed entries count too (the reading "a shutdown
    /// removes a LID from every table").
    #[serde(default)]
    pub ftree_dep: ChangeReport,
    /// The same for SlimUpdate.
    #[serde(default)]
    pub slim_dep: ChangeReport,
    /// ftree's tables after the step against the tables before the first
    /// event (live compute nodes): the cumulative reading "modifications
    /// since the fault-free routing", not the sum of the steps.
    #[serde(default)]
    pub ftree_start: ChangeReport,
    /// The same for SlimUpdate.
    #[serde(default)]
    pub slim_start: ChangeReport,
    /// A variant beside SlimUpdate (its own chain of tables): Algorithm 2's
    /// literal switch-level counter ([`SlimUpdateOptions::switch_counter`]),
    /// live compute nodes.
    #[serde(default)]
    pub slim_switch_counter_cn: ChangeReport,
    /// A variant beside SlimUpdate: caps by integer division
    /// ([`SlimUpdateOptions::cap_floor`]), live compute nodes.
    #[serde(default)]
    pub slim_floor_cn: ChangeReport,
    /// The same, departed nodes' entries included.
    #[serde(default)]
    pub slim_floor_dep: ChangeReport,
    /// ftree's tables after the step against the fault-free ones, on every
    /// compute node live before the first event (departed nodes' removed
    /// entries included).
    #[serde(default)]
    pub ftree_start_dep: ChangeReport,
    /// The same for SlimUpdate.
    #[serde(default)]
    pub slim_start_dep: ChangeReport,
    /// The same for the integer-division variant.
    #[serde(default)]
    pub slim_floor_start_dep: ChangeReport,
}

/// Successive random link failures (`kind` = "link": switch-to-switch links,
/// never the last up link of a switch) or node shutdowns ("node"). Both
/// algorithms start from ftree's tables and then keep their own. Returns the
/// steps and the final tables (ftree, SlimUpdate) with the final fabric.
pub fn fault_scenario(
    fabric: &Fabric,
    kind: &str,
    steps: usize,
    seed: u64,
) -> Result<
    (
        Vec<ScenarioStep>,
        Fabric,
        ForwardingTables,
        ForwardingTables,
    ),
    ReconfigError,
> {
    let roots = roots_of(fabric)?;
    let ft = ftree_engine(Some(roots.clone()))?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut state = FabricState::new(fabric.clone());
    let mut f_prev = fabric.clone();
    let mut t_ftree = ft.route(fabric)?.tables;
    let mut t_slim = t_ftree.clone();
    let t_start = t_ftree.clone();
    let mut t_lit = t_ftree.clone();
    let mut t_floor = t_ftree.clone();
    let start_lids: Vec<Lid> = crate::report::live_cas(fabric)
        .iter()
        .map(|c| c.0)
        .collect();
    let mut out = Vec::new();
    let mut cas: Vec<NodeId> = fabric.cas().collect();
    cas.shuffle(&mut rng);
    for step in 1..=steps {
        let event = match kind {
            "link" => {
                let cur = state.current();
                let up_count = |n: NodeId| {
                    cur.neighbors(n)
                        .filter(|(_, r)| cur.node(r.node).is_switch())
                        .count()
                };
                let mut links: Vec<_> = cur
                    .links()
                    .filter(|l| cur.node(l.a.node).is_switch() && cur.node(l.b.node).is_switch())
                    .filter(|l| up_count(l.a.node) > 1 && up_count(l.b.node) > 1)
                    .collect();
                links.sort_by_key(|l| (l.a, l.b));
                let Some(l) = links.choose(&mut rng) else {
                    break;
                };
                Event::FailLink(l.a)
            }
            "node" => match cas.pop() {
                Some(n) => Event::Shutdown(n),
                None => break,
            },
            other => {
                return Err(ReconfigError::BadOptions(format!(
                    "unknown scenario '{other}' (link, node)"
                )))
            }
        };
        state.apply(&event)?;
        let now = state.current();
        let nf = ft.route(&now)?.tables;
        // The baseline and the two labelled readings differ only in these two switches.
        let slim = |prev_tables: &_, switch_counter, cap_floor| {
            slim_update(
                &f_prev,
                prev_tables,
                &now,
                &SlimUpdateOptions {
                    roots: Some(roots.clone()),
                    keep: None,
                    switch_counter,
                    cap_floor,
                },
            )
            .map(|r| r.tables)
        };
        let ns = slim(&t_slim, false, false)?;
        let nl = slim(&t_lit, true, false)?;
        let nfl = slim(&t_floor, false, true)?;
        let rf = ChangeReport::between(&t_ftree, &nf);
        let rs = ChangeReport::between(&t_slim, &ns);
        let live_before: std::collections::HashSet<u16> = crate::report::live_cas(&f_prev)
            .iter()
            .map(|c| c.0 .0)
            .collect();
        let live: Vec<Lid> = crate::report::live_cas(&now)
            .iter()
            .map(|c| c.0)
            .filter(|l| live_before.contains(&l.0))
            .collect();
        let rf_cn = ChangeReport::between_for(&t_ftree, &nf, &live)
            .with_paths(changed_paths(&f_prev, &t_ftree, &now, &nf));
        let rs_cn = ChangeReport::between_for(&t_slim, &ns, &live)
            .with_paths(changed_paths(&f_prev, &t_slim, &now, &ns));
        let before: Vec<Lid> = crate::report::live_cas(&f_prev)
            .iter()
            .map(|c| c.0)
            .collect();
        out.push(ScenarioStep {
            step,
            ftree: rf,
            slim: rs,
            ftree_cn: rf_cn,
            slim_cn: rs_cn,
            ftree_dep: ChangeReport::between_for(&t_ftree, &nf, &before),
            slim_dep: ChangeReport::between_for(&t_slim, &ns, &before),
            ftree_start: ChangeReport::between_for(&t_start, &nf, &live),
            slim_start: ChangeReport::between_for(&t_start, &ns, &live),
            slim_switch_counter_cn: ChangeReport::between_for(&t_lit, &nl, &live),
            slim_floor_cn: ChangeReport::between_for(&t_floor, &nfl, &live),
            slim_floor_dep: ChangeReport::between_for(&t_floor, &nfl, &before),
            ftree_start_dep: ChangeReport::between_for(&t_start, &nf, &start_lids),
            slim_start_dep: ChangeReport::between_for(&t_start, &ns, &start_lids),
            slim_floor_start_dep: ChangeReport::between_for(&t_start, &nfl, &start_lids),
        });
        t_lit = nl;
        t_floor = nfl;
        t_ftree = nf;
        t_slim = ns;
        f_prev = now;
    }
    Ok((out, f_prev, t_ftree, t_slim))
}

/// Paper IV Table 3 / Figs. 11–12: routing times.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoutingTimes {
    /// Compute nodes.
    pub nodes: usize,
    /// ftree, seconds.
    pub ftree: f64,
    /// SlimUpdate's first run (no old tables), seconds.
    pub slimupdate: f64,
    /// mFatTree initial run (phase I + base tables + phase II), seconds.
    pub mfattree: f64,
    /// Phase I alone.
    pub phase1: f64,
    /// Phase II alone (Recon-SM).
    pub phase2: f64,
    /// Recon-Parallel model: phase II divided by the switches (each switch
    /// writes its own rows).
    pub parallel: f64,
    /// Paths per leaf in the metabase.
    pub paths_per_leaf: usize,
    /// Deterministic work, for the claims judged without a clock: leaf
    /// switches.
    #[serde(default)]
    pub leaves: usize,
    /// Most compute nodes on a leaf (ftree routes this many destinations per
    /// leaf, missing ones as dummies).
    #[serde(default)]
    pub max_cn_per_leaf: usize,
    /// Routes ftree computes: one per compute-node slot (`leaves ×
    /// max_cn_per_leaf`), each a full column of the tables.
    #[serde(default)]
    pub ftree_routes: usize,
    /// Routes phase I computes with the default path count (one column per
    /// path, all leaves).
    #[serde(default)]
    pub metabase_routes: usize,
    /// Different and link-disjoint spanning trees per leaf (Eqs. 2–5).
    #[serde(default)]
    pub trees_different: usize,
    /// Link-disjoint trees per leaf.
    #[serde(default)]
    pub trees_disjoint: usize,
}

/// Times ftree, SlimUpdate's first run and the metabase on `fabric`.
pub fn routing_times(fabric: &Fabric, repeats: usize) -> Result<RoutingTimes, ReconfigError> {
    let ft = ftree_engine(None)?;
    let (_, ftree) = best(repeats, || {
        let t = Instant::now();
        let r = ft.route(fabric)?;
        Ok((r, t.elapsed()))
    })?;
    let (_, slim) = best(repeats, || {
        let t = Instant::now();
        let r = slim_initial(fabric)?;
        Ok((r, t.elapsed()))
    })?;
    let (mb, phase1) = best(repeats, || {
        let t = Instant::now();
        let m = Metabase::build(fabric, &MetabaseOptions::default())?;
        Ok((m, t.elapsed()))
    })?;
    let (_, mfat) = best(repeats, || {
        let t = Instant::now();
        let m = Metabase::build(fabric, &MetabaseOptions::default())?;
        let r = m.route(fabric, None)?;
        Ok((r, t.elapsed()))
    })?;
    let base = mb.base_tables(fabric, None);
    let (_, phase2) = best(repeats, || {
        let mut t = base.clone();
        let d = mb.assign(fabric, &mut t, None)?;
        Ok(((), d))
    })?;
    let switches = fabric.switches().count().max(1);
    let per_leaf = mb.paths_per_leaf();
    let leaves = per_leaf.len();
    let max_cn = crate::report::live_cas(fabric)
        .iter()
        .fold(
            std::collections::HashMap::<NodeId, usize>::new(),
            |mut m, c| {
                *m.entry(c.2).or_default() += 1;
                m
            },
        )
        .into_values()
        .max()
        .unwrap_or(0);
    let trees = crate::metabase::tree_counts(fabric)?;
    Ok(RoutingTimes {
        nodes: fabric.cas().count(),
        ftree: ftree.as_secs_f64(),
        slimupdate: slim.as_secs_f64(),
        mfattree: mfat.as_secs_f64(),
        phase1: phase1.as_secs_f64(),
        phase2: phase2.as_secs_f64(),
        parallel: phase2.as_secs_f64() / switches as f64,
        paths_per_leaf: per_leaf.iter().copied().max().unwrap_or(0),
        leaves,
        max_cn_per_leaf: max_cn,
        ftree_routes: leaves * max_cn,
        metabase_routes: per_leaf.iter().sum(),
        trees_different: trees.different,
        trees_disjoint: trees.disjoint,
    })
}

/// Paper IV Figs. 13–14: mean effective bandwidth of each pattern over
/// random node orders, ftree (fixed port-order routing) vs the metabase
/// re-routed for every order (Algorithm 5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeOrderResult {
    /// Pattern name.
    pub pattern: String,
    /// Orders drawn.
    pub orders: u64,
    /// Mean acc_band under ftree.
    pub ftree: f64,
    /// Mean acc_band under the metabase with Algorithm 5.
    pub metabase: f64,
}

/// Runs the node-order experiment for `patterns` over `orders` random
/// orders: uniformly random rank placements, or with `contiguous` random
/// orders that keep each leaf's nodes together (leaves in random order, each
/// leaf's nodes in random order), like hostfiles filled leaf by leaf.
pub fn node_order(
    fabric: &Fabric,
    patterns: &[String],
    orders: u64,
    seed: u64,
    contiguous: bool,
) -> Result<Vec<NodeOrderResult>, ReconfigError> {
    let ft = ftree_engine(None)?.route(fabric)?.tables;
    let mb = Metabase::build(fabric, &MetabaseOptions::default())?;
    let base = mb.base_tables(fabric, None);
    let endpoints = Endpoints::cas(fabric);
    let n = endpoints.len();
    let parsed: Vec<(String, Pattern)> = patterns
        .iter()
        .map(|p| {
            let (name, arg) = match p.as_str() {
                "2neighbor" | "4neighbor" | "6neighbor" => ("neighbor", Some(&p[..1])),
                "recdbl" => ("recdbl", Some("fold")),
                other => (other, None),
            };
            Pattern::parse(name, arg)
                .map(|x| (p.clone(), x))
                .map_err(|e| ReconfigError::Input(e.to_string()))
        })
        .collect::<Result<_, _>>()?;
    let rank_order =
        RankOrder::new(n, &[], true).map_err(|e| ReconfigError::Input(e.to_string()))?;
    // Endpoint positions grouped by leaf.
    let mut by_leaf: std::collections::BTreeMap<NodeId, Vec<usize>> =
        std::collections::BTreeMap::new();
    for (i, e) in endpoints.as_slice().iter().enumerate() {
        let leaf = fabric.remote(e.port).map_or(NodeId(u32::MAX), |r| r.node);
        by_leaf.entry(leaf).or_default().push(i);
    }
    let groups: Vec<Vec<usize>> = by_leaf.into_values().collect();
    let per_run: Vec<Vec<(f64, f64)>> = (0..orders)
        .into_par_iter()
        .map(|run| -> Result<Vec<(f64, f64)>, ReconfigError> {
            let order: Vec<usize> = if contiguous {
                let mut rng =
                    ChaCha8Rng::seed_from_u64(seed ^ run.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                let mut g = groups.clone();
                g.shuffle(&mut rng);
                for leaf in &mut g {
                    leaf.shuffle(&mut rng);
                }
                g.concat()
            } else {
                rank_order
                    .for_run(seed, run)
                    .into_iter()
                    .map(|x| x as usize)
                    .collect()
            };
            let lids: Vec<Lid> = order.iter().map(|&e| endpoints.as_slice()[e].lid).collect();
            let mut t = base.clone();
            mb.assign(fabric, &mut t, Some(&lids))?;
            let opts = AnalysisOptions {
                runs: 1,
                shuffle: false,
                order: order.clone(),
                threads: Some(1),
                ..AnalysisOptions::default()
            };
            parsed
                .iter()
                .map(|(_, p)| {
                    let a = analyze(fabric, &ft, &endpoints, p, &opts)
                        .map_err(|e| ReconfigError::Input(e.to_string()))?;
                    let b = analyze(fabric, &t, &endpoints, p, &opts)
                        .map_err(|e| ReconfigError::Input(e.to_string()))?;
                    Ok((a.ebb().mean, b.ebb().mean))
                })
                .collect()
        })
        .collect::<Result<_, _>>()?;
    Ok(parsed
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            let k = per_run.len().max(1) as f64;
            NodeOrderResult {
                pattern: name.clone(),
                orders,
                ftree: per_run.iter().map(|r| r[i].0).sum::<f64>() / k,
                metabase: per_run.iter().map(|r| r[i].1).sum::<f64>() / k,
            }
        })
        .collect())
}
