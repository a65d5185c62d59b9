//! One call for "this happened, re-route it this way": applies an event (or
//! none, for a performance-driven reconfiguration) to a [`FabricState`],
//! re-routes with the chosen method, verifies, and reports.
//!
//! Methods:
//!
//! - **full**: ftree (NoFTree with an order) on the whole fabric after the
//!   event, with the roots of the fabric as built (so a degraded tree is
//!   ranked as before; OpenSM's `root_guid_file`);
//! - **subtree**: Paper III — only the smallest sub-tree holding the given
//!   nodes (default: the node of a shutdown/boot, or the leaf at the lower
//!   end of a failed/restored link) is re-routed, with ftree or NoFTree.
//!   Meant for performance-driven changes; after a fault the verification
//!   shows whether the sub-tree was enough;
//! - **subtree-grow**: the sub-tree of **subtree**, grown one level at a
//!   time until the verification passes (`subtree::repair`): what an SM
//!   can use after a fault (`ibcloud sm run --reconfig subtree`);
//! - **slimupdate**: Paper IV Algorithms 1–3 from the installed tables;
//! - **metabase**: Paper IV Algorithm 4 — phase I again if the switch
//!   topology changed, phase II only otherwise (node events, a new order).

use std::time::Instant;

use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Fabric, Guid, Lid, NodeId};
use ibcloud_routing::{EngineOptions, RoutingEngine};
use serde::{Deserialize, Serialize};

use crate::error::ReconfigError;
use crate::event::{Event, FabricState};
use crate::metabase::{reroute, Metabase, MetabaseOptions};
use crate::report::{changed_paths, ChangeReport};
use crate::slimupdate::{roots_of, slim_update, SlimUpdateOptions, SlimUpdateStats};
use crate::subtree::{
    changed_links, check, nodes_for_links, ranks, repair, Check, Repair, Subtree, SubtreeEngine,
    SubtreeOptions, SubtreeReconfigurer,
};

/// How to re-route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Method {
    /// ftree on everything.
    Full,
    /// Paper III's sub-tree reconfiguration around these nodes (empty: from the event).
    Subtree(Vec<NodeId>),
    /// Paper III's sub-tree grown until verified (empty: from the event).
    SubtreeGrow(Vec<NodeId>),
    /// Paper IV's SlimUpdate.
    SlimUpdate,
    /// Paper IV's metabase (Algorithm 4); the metabase file to load and save.
    Metabase(Option<std::path::PathBuf>),
}

impl Method {
    /// Parses `full`, `subtree`, `subtree-grow`, `slimupdate`, `metabase`.
    pub fn parse(name: &str) -> Result<Self, ReconfigError> {
        Ok(match name {
            "full" => Self::Full,
            "subtree" => Self::Subtree(Vec::new()),
            "subtree-grow" => Self::SubtreeGrow(Vec::new()),
            "slimupdate" => Self::SlimUpdate,
            "metabase" => Self::Metabase(None),
            other => {
                return Err(ReconfigError::BadOptions(format!(
                    "unknown method '{other}' (full, subtree, subtree-grow, slimupdate, metabase)"
                )))
            }
        })
    }

    fn name(&self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Subtree(_) => "subtree",
            Self::SubtreeGrow(_) => "subtree-grow",
            Self::SlimUpdate => "slimupdate",
            Self::Metabase(_) => "metabase",
        }
    }
}

/// Options shared by the methods.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MethodOptions {
    /// A node order (NoFTree for full/subtree, Algorithm 5 for metabase).
    pub order: Option<Vec<Lid>>,
    /// Walk the new tables (reachability, credit loops, union up/down check).
    pub verify: bool,
    /// Count changed source–destination paths (a walk per destination).
    pub paths: bool,
    /// Metabase paths per leaf.
    pub metabase_paths: Option<usize>,
    /// Link-disjoint metabase trees only.
    pub disjoint: bool,
}

/// What one reconfiguration did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The event (`reorder` for none).
    pub event: String,
    /// The method.
    pub method: String,
    /// What changed in the tables.
    pub changes: ChangeReport,
    /// Seconds spent re-routing (the method only; no verification).
    pub seconds: f64,
    /// Named phases, seconds.
    pub phases: Vec<(String, f64)>,
    /// Live CA pairs the event left without any physical path.
    pub unreachable_pairs: u64,
    /// Some of them, by node description.
    pub unreachable_examples: Vec<(String, String)>,
    /// The verification (when asked for).
    pub check: Option<Check>,
    /// The sub-tree (subtree method).
    pub subtree: Option<Subtree>,
    /// The sub-trees tried (subtree-grow method).
    pub subtree_repair: Option<Repair>,
    /// SlimUpdate's kept/moved choices (slimupdate method).
    pub slimupdate: Option<SlimUpdateStats>,
    /// Whether the metabase was rebuilt (metabase method).
    pub metabase_rebuilt: Option<bool>,
}

/// Applies `event` to `state` (tables `old` belong to the state before it),
/// re-routes with `method` and reports. On error the state is unchanged.
pub fn reconfigure(
    state: &mut FabricState,
    old: &ForwardingTables,
    event: Option<&Event>,
    method: &Method,
    options: &MethodOptions,
) -> Result<(ForwardingTables, Outcome), ReconfigError> {
    let before = state.current();
    if old.num_nodes() != before.num_nodes() {
        return Err(ReconfigError::WrongTables {
            tables: old.num_nodes(),
            fabric: before.num_nodes(),
        });
    }
    let roots = roots_of(state.base())?;
    let mut next = state.clone();
    let outcome = match event {
        Some(e) => Some(next.apply(e)?),
        None => None,
    };
    let now = next.current();
    let tree_opts = EngineOptions {
        roots: Some(roots.clone()),
        ..EngineOptions::default()
    };
    let mut phases = Vec::new();
    let mut sub = None;
    let mut slim = None;
    let mut rebuilt = None;
    let mut repaired = None;
    let t0 = Instant::now();
    let new = match method {
        Method::Full => {
            let o = EngineOptions {
                node_order: options.order.clone(),
                ..tree_opts.clone()
            };
            ibcloud_routing::engines::ftree::FtreeEngine::with_options(&o)
                .route(&now)
                .map_err(|e| match e {
                    ibcloud_routing::RoutingError::BadOptions(m) => ReconfigError::BadOrder(m),
                    other => ReconfigError::from_tree(other),
                })?
                .tables
        }
        Method::Subtree(nodes) => {
            let nodes = if nodes.is_empty() {
                default_nodes(state.base(), event)?
            } else {
                nodes.clone()
            };
            let r = SubtreeReconfigurer::new(&now, &tree_opts)?;
            let engine = match &options.order {
                Some(o) => SubtreeEngine::NoFtree(o.clone()),
                None => SubtreeEngine::Ftree,
            };
            let mut t = old.clone();
            let res =
                r.reconfigure_in_place(&mut t, &nodes, &engine, &SubtreeOptions::default())?;
            phases = vec![
                ("select".to_owned(), res.times.select.as_secs_f64()),
                ("build".to_owned(), res.times.build.as_secs_f64()),
                ("route".to_owned(), res.times.route.as_secs_f64()),
                ("apply".to_owned(), res.times.apply.as_secs_f64()),
            ];
            sub = Some(res.subtree);
            t
        }
        Method::SubtreeGrow(nodes) => {
            let nodes = if !nodes.is_empty() {
                nodes.clone()
            } else {
                let links = match event {
                    Some(Event::FailLink(_))
                    | Some(Event::RestoreLink(_))
                    | Some(Event::FailSwitch(_))
                    | Some(Event::RestoreSwitch(_)) => changed_links(&before, &now),
                    _ => Vec::new(),
                };
                if links.is_empty() {
                    default_nodes(state.base(), event)?
                } else {
                    nodes_for_links(state.base(), &links, &tree_opts)?
                }
            };
            let (t, rep) = repair(&before, old, &now, &nodes, &tree_opts)?;
            repaired = Some(rep);
            t
        }
        Method::SlimUpdate => {
            let r = slim_update(
                &before,
                old,
                &now,
                &SlimUpdateOptions {
                    roots: Some(roots.clone()),
                    keep: None,
                    switch_counter: false,
                    cap_floor: false,
                },
            )?;
            slim = Some(SlimUpdateStats {
                destinations: r.destinations,
                kept: r.kept,
                moved: r.moved,
            });
            r.tables
        }
        Method::Metabase(store) => {
            let mopts = MetabaseOptions {
                paths: options.metabase_paths,
                disjoint: options.disjoint,
                roots: Some(roots.clone()),
            };
            let ta = Instant::now();
            let mut mb = match store {
                Some(p) if p.exists() => Metabase::load(p, &before)?,
                _ => Metabase::build(&before, &mopts)?,
            };
            phases.push((
                "load or phase I before the event".to_owned(),
                ta.elapsed().as_secs_f64(),
            ));
            let changed = event.is_some_and(Event::changes_switch_topology);
            let (t, d) = reroute(
                &mut mb,
                &now,
                old,
                changed,
                options.order.as_deref(),
                &mopts,
            )?;
            phases.push((
                if changed { "phase I + II" } else { "phase II" }.to_owned(),
                d.as_secs_f64(),
            ));
            if let Some(p) = store {
                mb.save(p)?;
            }
            rebuilt = Some(changed);
            t
        }
    };
    let seconds = t0.elapsed().as_secs_f64();
    let mut changes = ChangeReport::between(old, &new);
    if options.paths {
        changes.changed_paths = Some(changed_paths(&before, old, &now, &new));
    }
    let check = if options.verify {
        let rank = match ibcloud_routing::fat_tree::FatTree::build(&now, &tree_opts) {
            Ok(t) => ranks(&now, &t),
            Err(_) => vec![None; now.num_nodes()],
        };
        Some(check(&before, old, &now, &new, &rank, &[])?)
    } else {
        None
    };
    let (pairs, examples) = match &outcome {
        Some(o) => (o.unreachable_pairs, o.examples.clone()),
        None => (0, Vec::new()),
    };
    let desc = |n: NodeId| now.node(n).description.clone();
    *state = next;
    Ok((
        new,
        Outcome {
            event: event.map_or("reorder", Event::kind).to_owned(),
            method: method.name().to_owned(),
            changes,
            seconds,
            phases,
            unreachable_pairs: pairs,
            unreachable_examples: examples
                .into_iter()
                .map(|(a, b)| (desc(a), desc(b)))
                .collect(),
            check,
            subtree: sub,
            subtree_repair: repaired,
            slimupdate: slim,
            metabase_rebuilt: rebuilt,
        },
    ))
}

/// The nodes a sub-tree reconfiguration starts from when none are given.
fn default_nodes(f: &Fabric, event: Option<&Event>) -> Result<Vec<NodeId>, ReconfigError> {
    let need =
        || ReconfigError::BadOptions("subtree: give the nodes whose sub-tree to re-route".into());
    match event {
        Some(Event::Shutdown(n)) | Some(Event::Boot(n)) => f
            .neighbors(*n)
            .map(|(_, r)| r.node)
            .find(|&x| f.node(x).is_switch())
            .map(|x| vec![x])
            .ok_or_else(need),
        Some(Event::FailLink(p)) | Some(Event::RestoreLink(p)) => {
            let r = f.remote(*p).map(|r| r.node);
            let ends = [Some(p.node), r];
            ends.into_iter()
                .flatten()
                .find(|&n| {
                    f.node(n).is_switch()
                        && f.neighbors(n).any(|(_, x)| !f.node(x.node).is_switch())
                })
                .map(|n| vec![n])
                .ok_or_else(need)
        }
        _ => Err(need()),
    }
}

/// The roots of a fabric as GUIDs (re-exported for callers that route
/// degraded trees with ftree themselves).
pub fn base_roots(f: &Fabric) -> Result<Vec<Guid>, ReconfigError> {
    roots_of(f)
}
