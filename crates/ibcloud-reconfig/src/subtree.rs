//! Paper III's hybrid reconfiguration: re-route only the smallest sub-tree
//! that holds a set of nodes (reference C §2.2).
//!
//! 1. The leaves of the given nodes are found.
//! 2. The smallest sub-tree holding them: the smallest number of levels
//!    `k` (counted from the leaves, at least [`SubtreeOptions::min_levels`])
//!    for which all those leaves lie in one connected component of the
//!    switches of the lowest `k` levels. With OpenSM's tuples this is the
//!    common-prefix test the paper describes; `k` equal to the tree's height
//!    is a full reconfiguration.
//! 3. Every switch of the sub-tree is marked, and 4. every compute node on
//!    its leaves takes part (not only the given ones).
//! 5. The sub-tree alone — its switches and those compute nodes, cut out as
//!    a fabric of its own — is routed by ftree, or by NoFTree with a node
//!    order, as an isolated, shorter fat-tree; only the entries of the
//!    sub-tree's switches for the sub-tree's compute nodes are replaced.
//!    Every other entry stays as it was.
//!
//! Connectivity holds because every switch keeps an entry for every
//! destination (ftree fills "blank" switches); deadlock freedom because old
//! and new routings are both up/down in the same orientation. Both are
//! checked, not assumed: [`SubtreeReconfigurer::reconfigure`] walks the new
//! tables for all-pairs reachability and credit loops and checks the union of
//! old and new tables for down→up turns ([`crate::report::updown_union`]).
//!
//! The fat-tree view of the whole fabric is built once
//! ([`SubtreeReconfigurer::new`]): an SM keeps its topology between sweeps,
//! and Paper III's speed-up rests on reusing those data structures.

use std::time::{Duration, Instant};

use ibcloud_fabric::lft::{ForwardingTables, NO_PORT};
use ibcloud_fabric::{Fabric, FabricBuilder, Lid, NodeId, NodeSpec, Port, PortRef};
use ibcloud_routing::fat_tree::FatTree;
use ibcloud_routing::verify::{verify, VerifyError, VerifyOptions};
use ibcloud_routing::{EngineOptions, RoutingEngine};
use serde::{Deserialize, Serialize};

use crate::error::ReconfigError;
use crate::report::{updown_union, ChangeReport, UpDownViolation};
use crate::topo::Topo;

/// The engine that routes the sub-tree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SubtreeEngine {
    /// OpenSM's ftree (port order).
    #[default]
    Ftree,
    /// NoFTree: ftree in the slots a node order gives (compute-node LIDs,
    /// all inside the sub-tree).
    NoFtree(Vec<Lid>),
}

/// How to choose the sub-tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubtreeOptions {
    /// Fewest levels the sub-tree has (2: a leaf and its parents' level;
    /// a one-level "sub-tree" is a single leaf, whose entries never change).
    pub min_levels: u32,
}

impl Default for SubtreeOptions {
    fn default() -> Self {
        Self { min_levels: 2 }
    }
}

/// The chosen sub-tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subtree {
    /// Its switches, by node id.
    pub switches: Vec<NodeId>,
    /// Its leaves, in tuple order.
    pub leaves: Vec<NodeId>,
    /// Levels (2 = leaves and one level above).
    pub levels: u32,
    /// OpenSM rank of its top switches.
    pub top_rank: u32,
    /// Whether it is the whole tree (a full reconfiguration).
    pub full: bool,
    /// The compute nodes re-routed (all on its leaves), by LID.
    pub destinations: Vec<Lid>,
}

/// Time spent per step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SubtreeTimes {
    /// Finding the sub-tree.
    pub select: Duration,
    /// Cutting it out as a fabric of its own.
    pub build: Duration,
    /// Routing it.
    pub route: Duration,
    /// Writing the new entries into the tables (and counting the change).
    pub apply: Duration,
}

impl SubtreeTimes {
    /// The whole reconfiguration.
    pub fn total(&self) -> Duration {
        self.select + self.build + self.route + self.apply
    }
}

/// Result of one sub-tree reconfiguration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubtreeResult {
    /// The sub-tree.
    pub subtree: Subtree,
    /// What changed.
    pub changes: ChangeReport,
    /// Times per step.
    pub times: SubtreeTimes,
    /// Verification of the new tables (when asked for).
    pub check: Option<Check>,
}

/// Verification of a reconfiguration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// CA pairs checked.
    pub pairs: u64,
    /// CA pairs whose packets arrive.
    pub reachable: u64,
    /// No credit loop in the new tables.
    pub credit_loop_free: bool,
    /// Down→up turns in the union of old and new tables (at most 10 listed).
    pub updown_violations: Vec<UpDownViolation>,
}

impl Check {
    /// All pairs reachable, no credit loop, no down→up turn.
    pub fn ok(&self) -> bool {
        self.pairs == self.reachable && self.credit_loop_free && self.updown_violations.is_empty()
    }
}

/// Verifies `new` on `fabric_new` and the union of `old` and `new` for
/// down→up turns on the destinations `lids` (all CA LIDs when empty).
pub fn check(
    fabric_old: &Fabric,
    old: &ForwardingTables,
    fabric_new: &Fabric,
    new: &ForwardingTables,
    rank: &[Option<u32>],
    lids: &[Lid],
) -> Result<Check, ReconfigError> {
    let report = verify(fabric_new, new, None, &VerifyOptions::default()).map_err(|e| match e {
        VerifyError::WrongFabric { tables, fabric } => {
            ReconfigError::WrongTables { tables, fabric }
        }
        other => ReconfigError::BadOptions(other.to_string()),
    })?;
    let all: Vec<Lid>;
    let lids = if lids.is_empty() {
        all = crate::report::live_cas(fabric_new)
            .iter()
            .map(|c| c.0)
            .collect();
        &all
    } else {
        lids
    };
    Ok(Check {
        pairs: report.pairs,
        reachable: report.reachable,
        credit_loop_free: report.credit_loops.as_ref().is_none_or(|c| c.acyclic),
        updown_violations: updown_union(fabric_old, old, fabric_new, new, rank, lids, 10),
    })
}

/// Per node id, the OpenSM rank of the switch in `tree` (None otherwise).
pub fn ranks(fabric: &Fabric, tree: &FatTree) -> Vec<Option<u32>> {
    let mut r = vec![None; fabric.num_nodes()];
    for s in tree.switches() {
        r[tree.node(s).index()] = Some(tree.rank(s));
    }
    r
}

/// Sub-tree reconfiguration of one fabric; holds the fabric's fat-tree view.
#[derive(Debug)]
pub struct SubtreeReconfigurer<'a> {
    fabric: &'a Fabric,
    tree: FatTree,
    topo: Topo,
    rank: Vec<Option<u32>>,
}

impl<'a> SubtreeReconfigurer<'a> {
    /// Builds the fat-tree view of `fabric` (ftree's `options`: roots, CN
    /// list). A fabric ftree does not accept is [`ReconfigError::NotFatTree`].
    pub fn new(fabric: &'a Fabric, options: &EngineOptions) -> Result<Self, ReconfigError> {
        let tree = FatTree::build(fabric, options).map_err(ReconfigError::from_tree)?;
        let topo = Topo::from_tree(fabric, &tree);
        let rank = ranks(fabric, &tree);
        Ok(Self {
            fabric,
            tree,
            topo,
            rank,
        })
    }

    /// The fat-tree view.
    pub fn tree(&self) -> &FatTree {
        &self.tree
    }

    /// Per node id, the switch's OpenSM rank.
    pub fn ranks(&self) -> &[Option<u32>] {
        &self.rank
    }

    /// The leaf of a compute node or a leaf switch itself.
    fn leaf_of(&self, n: NodeId) -> Result<u32, ReconfigError> {
        let f = self.fabric;
        if n.index() >= f.num_nodes() {
            return Err(ReconfigError::UnknownNode(format!("node {}", n.0)));
        }
        let desc = &f.node(n).description;
        if f.node(n).is_switch() {
            return match self.tree.index_of(n) {
                Some(s) if self.tree.is_leaf(s) => Ok(s),
                _ => Err(ReconfigError::BadOptions(format!(
                    "switch '{desc}' is not a leaf of the fat-tree; give compute nodes or leaf switches"
                ))),
            };
        }
        for (_, r) in f.neighbors(n) {
            if let Some(s) = self.tree.index_of(r.node) {
                if self.tree.is_leaf(s) {
                    return Ok(s);
                }
            }
        }
        Err(ReconfigError::BadOptions(format!(
            "'{desc}' is not a compute node on a leaf of the fat-tree"
        )))
    }

    /// Finds the smallest sub-tree holding `nodes` (compute nodes or leaf
    /// switches).
    pub fn select(
        &self,
        nodes: &[NodeId],
        options: &SubtreeOptions,
    ) -> Result<Subtree, ReconfigError> {
        if nodes.is_empty() {
            return Err(ReconfigError::BadOptions(
                "no nodes given for the sub-tree".into(),
            ));
        }
        let want: Vec<u32> = nodes
            .iter()
            .map(|&n| self.leaf_of(n))
            .collect::<Result<_, _>>()?;
        let t = &self.topo;
        let height = t.leaf_rank + 1;
        let min = options.min_levels.clamp(1, height);
        for k in min..=height {
            let r_min = height - k;
            let mut seen = vec![false; t.len()];
            let mut stack = vec![want[0]];
            seen[want[0] as usize] = true;
            let mut comp = Vec::new();
            while let Some(s) = stack.pop() {
                comp.push(s);
                let si = s as usize;
                for h in t.up[si].iter().chain(&t.down[si]) {
                    let r = h.remote as usize;
                    if !seen[r] && t.rank[r] >= r_min && t.rank[r] != u32::MAX {
                        seen[r] = true;
                        stack.push(h.remote);
                    }
                }
            }
            if want.iter().all(|&w| seen[w as usize]) {
                let mut switches: Vec<NodeId> = comp.iter().map(|&s| t.node[s as usize]).collect();
                switches.sort();
                let leaves: Vec<u32> = t
                    .leaves
                    .iter()
                    .copied()
                    .filter(|&l| seen[l as usize])
                    .collect();
                let destinations = leaves
                    .iter()
                    .flat_map(|&l| t.cns[l as usize].iter().map(|c| c.lid))
                    .collect();
                return Ok(Subtree {
                    switches,
                    leaves: leaves.iter().map(|&l| t.node[l as usize]).collect(),
                    levels: k,
                    top_rank: r_min,
                    full: k == height,
                    destinations,
                });
            }
        }
        Err(ReconfigError::BadOptions(
            "the given nodes are not connected through the fat-tree".into(),
        ))
    }

    /// Cuts the sub-tree out: its switches and the compute nodes of its
    /// leaves, with their GUIDs, ports and LIDs; returns the fabric and the
    /// original node id of each of its nodes.
    fn cut(&self, sub: &Subtree) -> Result<(Fabric, Vec<NodeId>), ReconfigError> {
        let f = self.fabric;
        let mut include = vec![u32::MAX; f.num_nodes()];
        let mut members: Vec<NodeId> = sub.switches.clone();
        for &l in &sub.leaves {
            let s = self.tree.index_of(l).unwrap_or(u32::MAX);
            if s != u32::MAX {
                members.extend(self.tree.compute_nodes(s).iter().map(|c| c.node));
            }
        }
        members.sort();
        members.dedup();
        let mut b = FabricBuilder::with_capacity(members.len(), members.len() * 8);
        for (i, &id) in members.iter().enumerate() {
            include[id.index()] = i as u32;
            let n = f.node(id);
            let mut spec = NodeSpec::new(n.kind, n.guid, n.num_ports as u32, n.description.clone());
            spec.system_image_guid = n.system_image_guid;
            spec.vendor_id = n.vendor_id;
            spec.device_id = n.device_id;
            spec.enhanced_port0 = n.enhanced_port0;
            spec.rank = n.rank;
            let nid = b
                .add_node(spec)
                .map_err(|e| ReconfigError::NotFatTree(e.to_string()))?;
            for (p, port) in f.ports(id).iter().enumerate() {
                let slot = b
                    .port_mut(PortRef::new(nid, p as u8))
                    .map_err(|e| ReconfigError::NotFatTree(e.to_string()))?;
                *slot = Port {
                    remote: None,
                    state: Default::default(),
                    ..port.clone()
                };
            }
        }
        for (i, &id) in members.iter().enumerate() {
            for (p, port) in f.ports(id).iter().enumerate() {
                let Some(r) = port.remote else { continue };
                let j = include[r.node.index()];
                if j == u32::MAX || (j as usize, r.port) < (i, p as u8) {
                    continue;
                }
                b.connect(
                    PortRef::new(NodeId(i as u32), p as u8),
                    PortRef::new(NodeId(j), r.port),
                    port.rate,
                )
                .map_err(|e| ReconfigError::NotFatTree(e.to_string()))?;
            }
        }
        Ok((b.build(), members))
    }

    /// Re-routes the sub-tree holding `nodes` in `tables`, in place; returns
    /// what changed (no verification: see [`SubtreeReconfigurer::reconfigure`]).
    pub fn reconfigure_in_place(
        &self,
        tables: &mut ForwardingTables,
        nodes: &[NodeId],
        engine: &SubtreeEngine,
        options: &SubtreeOptions,
    ) -> Result<SubtreeResult, ReconfigError> {
        if tables.num_nodes() != self.fabric.num_nodes() {
            return Err(ReconfigError::WrongTables {
                tables: tables.num_nodes(),
                fabric: self.fabric.num_nodes(),
            });
        }
        let t0 = Instant::now();
        let subtree = self.select(nodes, options)?;
        if let SubtreeEngine::NoFtree(order) = engine {
            let inside: std::collections::HashSet<u16> =
                subtree.destinations.iter().map(|l| l.0).collect();
            if let Some((i, l)) = order
                .iter()
                .enumerate()
                .find(|(_, l)| !inside.contains(&l.0))
            {
                return Err(ReconfigError::BadOrder(format!(
                    "order item {i}: LID {} is not a compute node of the selected sub-tree",
                    l.0
                )));
            }
        }
        let t1 = Instant::now();
        let (sub, ids) = self.cut(&subtree)?;
        let t2 = Instant::now();
        let top: Vec<_> = subtree
            .switches
            .iter()
            .filter(|&&n| self.rank[n.index()] == Some(subtree.top_rank))
            .map(|&n| self.fabric.node(n).guid)
            .collect();
        let opts = EngineOptions {
            roots: Some(top),
            node_order: match engine {
                SubtreeEngine::Ftree => None,
                SubtreeEngine::NoFtree(o) => Some(o.clone()),
            },
            ..EngineOptions::default()
        };
        let routing = ibcloud_routing::engines::ftree::FtreeEngine::with_options(&opts)
            .route(&sub)
            .map_err(|e| match e {
                ibcloud_routing::RoutingError::BadOptions(m) => ReconfigError::BadOrder(m),
                other => ReconfigError::from_tree(other),
            })?;
        let t3 = Instant::now();
        let mut changes = ChangeReport::default();
        let mut dests = std::collections::BTreeSet::new();
        for (i, &id) in ids.iter().enumerate() {
            if !self.fabric.node(id).is_switch() {
                continue;
            }
            let sub_id = NodeId(i as u32);
            let mut blocks = std::collections::BTreeSet::new();
            for &lid in &subtree.destinations {
                let new = routing.tables.get(sub_id, lid).unwrap_or(NO_PORT);
                let old = tables.get(id, lid).unwrap_or(NO_PORT);
                if new != old {
                    tables.set(id, lid, new);
                    changes.changed_entries += 1;
                    blocks.insert(lid.0 as usize / Lid::PER_LFT_BLOCK);
                    dests.insert(lid.0);
                }
            }
            changes.changed_blocks += blocks.len() as u64;
            changes.switches_touched += u64::from(!blocks.is_empty());
        }
        changes.changed_destinations = dests.len() as u64;
        let t4 = Instant::now();
        Ok(SubtreeResult {
            subtree,
            changes,
            times: SubtreeTimes {
                select: t1 - t0,
                build: t2 - t1,
                route: t3 - t2,
                apply: t4 - t3,
            },
            check: None,
        })
    }

    /// Re-routes the sub-tree holding `nodes`; returns the new tables and
    /// the result with changed paths and the verification filled in.
    pub fn reconfigure(
        &self,
        old: &ForwardingTables,
        nodes: &[NodeId],
        engine: &SubtreeEngine,
        options: &SubtreeOptions,
    ) -> Result<(ForwardingTables, SubtreeResult), ReconfigError> {
        let mut new = old.clone();
        let mut result = self.reconfigure_in_place(&mut new, nodes, engine, options)?;
        let paths = crate::report::changed_paths(self.fabric, old, self.fabric, &new);
        result.changes.changed_paths = Some(paths);
        result.check = Some(check(
            self.fabric,
            old,
            self.fabric,
            &new,
            &self.rank,
            &result.subtree.destinations,
        )?);
        Ok((new, result))
    }
}

/// One sub-tree tried by [`repair`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepairAttempt {
    /// Levels of the sub-tree (2 = leaves and one level above).
    pub levels: u32,
    /// Whether it is the whole tree.
    pub full: bool,
    /// Switches re-routed.
    pub switches: usize,
    /// Compute nodes re-routed.
    pub destinations: usize,
    /// What it changed (switch-LID repairs included).
    pub changes: ChangeReport,
    /// CA pairs checked and reachable, credit loops, down→up turns.
    pub check: Check,
}

/// What [`repair`] did: every sub-tree tried, smallest first; the last is
/// the one whose tables were returned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Repair {
    /// The nodes the sub-tree had to hold.
    pub nodes: Vec<NodeId>,
    /// Attempts, smallest sub-tree first.
    pub attempts: Vec<RepairAttempt>,
    /// The returned tables passed the check.
    pub verified: bool,
}

/// Links present in one fabric and not in the other (same node ids): what
/// failed or came back between two sweeps.
pub fn changed_links(before: &Fabric, now: &Fabric) -> Vec<ibcloud_fabric::Link> {
    let key = |l: ibcloud_fabric::Link| (l.a, l.b);
    let a: std::collections::BTreeSet<_> = before.links().map(key).collect();
    let b: std::collections::BTreeSet<_> = now.links().map(key).collect();
    a.symmetric_difference(&b)
        .map(|&(a, b)| ibcloud_fabric::Link { a, b })
        .collect()
}

/// The leaves a sub-tree must hold after `links` changed (failed or came
/// back): per link its lower end (higher OpenSM rank, ranked on `before`
/// with `roots`) when it is a leaf, else the first leaf below it.
pub fn nodes_for_links(
    before: &Fabric,
    links: &[ibcloud_fabric::Link],
    options: &EngineOptions,
) -> Result<Vec<NodeId>, ReconfigError> {
    let tree = FatTree::build(before, options).map_err(ReconfigError::from_tree)?;
    let rank = ranks(before, &tree);
    let mut out = Vec::new();
    for l in links {
        let (a, b) = (l.a.node, l.b.node);
        let lower = match (rank[a.index()], rank[b.index()]) {
            (Some(x), Some(y)) => {
                if x >= y {
                    a
                } else {
                    b
                }
            }
            // A CA's link: its switch.
            (Some(_), None) => a,
            (None, Some(_)) => b,
            (None, None) => continue,
        };
        // Down from `lower` to the first leaf.
        let mut s = lower;
        while let Some(i) = tree.index_of(s) {
            if tree.is_leaf(i) {
                out.push(s);
                break;
            }
            let r = rank[s.index()];
            match before
                .neighbors(s)
                .map(|(_, x)| x.node)
                .find(|x| rank[x.index()].is_some_and(|rx| Some(rx) > r))
            {
                Some(x) => s = x,
                None => break,
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Paper III's sub-tree reconfiguration applied to a fault: the smallest
/// sub-tree holding `nodes` is re-routed with ftree on `now` (the fabric
/// after the event, ranked with `options`' roots, i.e. as before it) and
/// the result verified ([`check`]: all CA pairs, credit loops, down→up turns
/// in old ∪ new); while the check fails the sub-tree grows by one level,
/// up to the whole tree. Paper III re-routes a sub-tree for a
/// performance-driven change, where every old entry still works; after a
/// fault, switches outside a small sub-tree may still send traffic into the
/// broken link (e.g. roots into the middle switch that lost its link to a
/// leaf), which is why the growth — an SM policy, not the paper's — is
/// needed. Switch-LID entries are re-routed as SlimUpdate does (min-hop
/// up/down keeping old ports), so only broken ones change.
pub fn repair(
    before: &Fabric,
    old: &ForwardingTables,
    now: &Fabric,
    nodes: &[NodeId],
    options: &EngineOptions,
) -> Result<(ForwardingTables, Repair), ReconfigError> {
    let r = SubtreeReconfigurer::new(now, options)?;
    let height = r.topo.leaf_rank + 1;
    let mut attempts = Vec::new();
    let mut last = None;
    if nodes.is_empty() {
        return Ok((
            old.clone(),
            Repair {
                nodes: Vec::new(),
                attempts,
                verified: true,
            },
        ));
    }
    for k in 2.min(height)..=height {
        let mut new = old.clone();
        let res = r.reconfigure_in_place(
            &mut new,
            nodes,
            &SubtreeEngine::Ftree,
            &SubtreeOptions { min_levels: k },
        )?;
        crate::switch_lids::route_switch_lids(&r.topo, now, Some(old), &mut new);
        let c = check(before, old, now, &new, &r.rank, &[])?;
        let ok = c.ok();
        attempts.push(RepairAttempt {
            levels: res.subtree.levels,
            full: res.subtree.full,
            switches: res.subtree.switches.len(),
            destinations: res.subtree.destinations.len(),
            changes: ChangeReport::between(old, &new),
            check: c,
        });
        last = Some(new);
        if ok || res.subtree.full {
            break;
        }
    }
    let verified = attempts.last().is_some_and(|a| a.check.ok());
    Ok((
        last.unwrap_or_else(|| old.clone()),
        Repair {
            nodes: nodes.to_vec(),
            attempts,
            verified,
        },
    ))
}
