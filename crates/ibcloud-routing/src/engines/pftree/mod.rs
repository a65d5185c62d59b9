//! `pftree`, `pftree-ext`, `pftree-wt`: partition-aware fat-tree routing
//! (seed 002; E §2.2–2.4), written over the [`FatTree`] view so that leaves,
//! roots and port groups are exactly ftree's.
//!
//! 1. The partition configuration ([`EngineOptions::partitions`]) is resolved
//!    against the fabric; the default partition is management only. Each
//!    CA port is routed for the first partition it belongs to. Partitions
//!    whose members sit on one leaf are filtered out (their traffic never
//!    leaves the leaf): their nodes are routed with the normal counters but
//!    neither mark switches nor prefer marks (E §2.2, suggestion for the GAP).
//! 2. Each leaf's nodes are ordered by Alg. 2 ([`order`]): pFTree-Ext sorts
//!    by policy first (phy, vlane, def), pFTree-Wt by weight (descending).
//! 3. Every node's LID is routed by Algs. 3/4 ([`route`]) leaf by leaf; in
//!    the corrected pFTree-Ext the `phy` nodes of all leaves go first.
//!    Switch LIDs follow, uncounted.
//! 4. VLs are assigned (Alg. 5, corrected, [`vl`]); each partition's paths
//!    get its VL as SL in [`Routing::path_sls`] (SL n → VL n).
//! 5. The validator ([`crate::verify::partitions`]) checks the policies:
//!    under pFTree-Ext `strict` a violation fails routing, `best-effort`
//!    warns. Base pFTree and pFTree-Wt ignore policies; their report is
//!    informative.
//!
//! [`PftreeVariant`] switches between the corrected algorithms and the
//! printed ones (D1–D5); [`PftreeOutcome::variant`] names the one used.
//! Not supported: LMC > 0 (like ftree); ftree's dummy nodes on short leaves
//! are not routed (they only pad counters).

pub mod options;
pub(crate) mod order;
pub(crate) mod route;
pub(crate) mod vl;
pub mod weights;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::partitions::{GlobalPolicy, Isolation, PartitionConfig, Partitions};
use ibcloud_fabric::{Fabric, Guid, Lid};

pub use options::{Flavor, PftreeVariant};

use crate::engine::{EngineOptions, Routing, RoutingEngine, RoutingError};
use crate::fat_tree::FatTree;
use crate::sl::PathSls;
use crate::verify::partitions::{check, link_usage, PartitionReport};

/// Default operational data VLs (common hardware: 8 data VLs + VL15).
pub const DEFAULT_DATA_VLS: u8 = 8;

/// The partition-aware fat-tree engines.
#[derive(Clone, Debug)]
pub struct Pftree {
    flavor: Flavor,
    options: EngineOptions,
}

/// Everything one pFTree run produced.
#[derive(Clone, Debug)]
pub struct PftreeOutcome {
    /// Tables and path SLs.
    pub routing: Routing,
    /// The partitions as resolved (default partition left out).
    pub partitions: Partitions,
    /// VL (= SL) per partition.
    pub vls: Vec<u8>,
    /// The validator's report.
    pub report: PartitionReport,
    /// What was relaxed (best-effort) or is worth knowing.
    pub warnings: Vec<String>,
    /// Engine name.
    pub engine: &'static str,
    /// Variant label ("corrected", "literal", …).
    pub variant: String,
}

impl Pftree {
    /// An engine of `flavor` configured by `options` (`partitions`,
    /// `isolation`, `node_weights`, `pftree_variant`, `max_vls`, `roots`).
    pub fn new(flavor: Flavor, options: &EngineOptions) -> Self {
        Self {
            flavor,
            options: options.clone(),
        }
    }

    pub(crate) fn base(o: &EngineOptions) -> Result<Box<dyn RoutingEngine>, RoutingError> {
        Ok(Box::new(Self::new(Flavor::Base, o)))
    }

    pub(crate) fn ext(o: &EngineOptions) -> Result<Box<dyn RoutingEngine>, RoutingError> {
        Ok(Box::new(Self::new(Flavor::Ext, o)))
    }

    pub(crate) fn wt(o: &EngineOptions) -> Result<Box<dyn RoutingEngine>, RoutingError> {
        Ok(Box::new(Self::new(Flavor::Wt, o)))
    }

    fn err(&self, reason: impl Into<String>) -> RoutingError {
        RoutingError::Unsupported {
            engine: self.flavor.name(),
            reason: reason.into(),
        }
    }

    /// Routes and returns the tables with the partition report.
    pub fn run(&self, fabric: &Fabric) -> Result<PftreeOutcome, RoutingError> {
        let o = &self.options;
        let tree_options = EngineOptions {
            roots: o.roots.clone(),
            ..EngineOptions::default()
        };
        let tree = FatTree::build(fabric, &tree_options).map_err(|e| match e {
            RoutingError::Unsupported { reason, .. } => self.err(reason),
            other => other,
        })?;
        let empty = PartitionConfig::default();
        let conf = o.partitions.as_ref().unwrap_or(&empty);
        let global = o
            .isolation
            .or(conf.global)
            .unwrap_or(GlobalPolicy::BestEffort);
        let strict = global == GlobalPolicy::Strict && self.flavor == Flavor::Ext;
        let mut parts = conf
            .resolve(fabric, strict)
            .map_err(|e| RoutingError::BadOptions(format!("{}: {e}", self.flavor.name())))?;
        parts.global = global;
        if parts.partitions.len() > u16::MAX as usize {
            return Err(RoutingError::BadOptions(format!(
                "{}: {} partitions; at most 65535 are supported",
                self.flavor.name(),
                parts.partitions.len()
            )));
        }
        let mut warnings = parts.warnings.clone();
        let variant = o.pftree_variant;
        let policy: Vec<Isolation> = parts
            .partitions
            .iter()
            .map(|p| match self.flavor {
                Flavor::Ext => p.isolation,
                _ => Isolation::Def,
            })
            .collect();

        // Routing partition per CA port; single-leaf partitions filtered out.
        let home = parts.home();
        let mut leaf_of: HashMap<Guid, u32> = HashMap::new();
        for &leaf in tree.leaves() {
            for cn in tree.compute_nodes(leaf) {
                leaf_of.insert(cn.port_guid, leaf);
            }
        }
        let mut spans: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); parts.partitions.len()];
        for (g, &p) in &home {
            if let Some(&l) = leaf_of.get(g) {
                spans[p].insert(l);
            }
        }
        let weights: HashMap<Guid, f64> = match (self.flavor, &o.node_weights) {
            (Flavor::Wt, Some(w)) => w.iter().copied().collect(),
            _ => HashMap::new(),
        };
        for g in weights.keys() {
            if !leaf_of.contains_key(g) {
                warnings.push(format!(
                    "weight for port GUID {g}, which is no compute node, ignored"
                ));
            }
        }

        // Alg. 2 per leaf, then the routing sequence.
        let mut stopped = false;
        let mut seq: Vec<(u32, order::Slot, crate::fat_tree::ComputeNode)> = Vec::new();
        for &leaf in tree.leaves() {
            let cns = tree.compute_nodes(leaf);
            let slots: Vec<order::Slot> = cns
                .iter()
                .map(|cn| {
                    let part = home
                        .get(&cn.port_guid)
                        .copied()
                        .filter(|&p| spans[p].len() > 1)
                        .map(|p| p as u16);
                    order::Slot {
                        part,
                        policy: part.map_or(Isolation::Def, |p| policy[p as usize]),
                        weight: weights.get(&cn.port_guid).copied().unwrap_or(1.0),
                    }
                })
                .collect();
            let up: usize = tree.up_groups(leaf).map(|g| g.ports.len()).sum();
            let idx: Vec<usize> = if stopped || variant.marks_only {
                (0..cns.len()).collect()
            } else if variant.grouped {
                order::grouped(&slots, self.flavor)
            } else {
                if variant.literal_alg2_return && cns.len() <= up {
                    stopped = true;
                }
                order::order_leaf(&slots, up, self.flavor)
            };
            for i in idx {
                seq.push((leaf, slots[i], cns[i]));
            }
        }
        // The grouped reading routes leaf by leaf without the phy-first
        // packing pass (that pass is part of the corrected Alg. 2 reading).
        let leaf_by_leaf = variant.leaf_by_leaf || variant.grouped;
        if self.flavor == Flavor::Ext && !leaf_by_leaf {
            // Stable: phy nodes of all leaves first.
            seq.sort_by_key(|(_, s, _)| s.policy != Isolation::Phy || s.part.is_none());
        }

        let mut tables = ForwardingTables::new(fabric);
        let mut router = route::Router::new(&tree, policy.clone(), self.flavor, variant, global);
        let phy_first = self.flavor == Flavor::Ext && !leaf_by_leaf;
        for (leaf, slot, cn) in &seq {
            let w = if self.flavor == Flavor::Wt {
                slot.weight
            } else {
                1.0
            };
            let packing = phy_first && slot.part.is_some() && slot.policy == Isolation::Phy;
            router.route_cn(
                &mut tables,
                *leaf,
                cn.lid,
                cn.leaf_port,
                slot.part,
                w,
                packing,
            )?;
        }
        for s in tree.switches() {
            router.route_switch(&mut tables, s)?;
        }
        router.flush(&mut tables);
        let mut relaxed: BTreeMap<Option<u16>, usize> = BTreeMap::new();
        for &(_, p) in &router.relaxed {
            *relaxed.entry(p).or_default() += 1;
        }
        for (p, n) in relaxed {
            let name = p.map_or("(none)".to_owned(), |p| {
                parts.partitions[p as usize].name.clone()
            });
            warnings.push(format!(
                "best-effort: partition '{name}' could not avoid other partitions' switches at {n} switch(es); took the least-loaded up-port"
            ));
        }

        // VLs, SLs and the validator.
        let usage = link_usage(fabric, &tables, &parts);
        let max_vls = o.max_vls.unwrap_or(DEFAULT_DATA_VLS);
        let vls = vl::assign(
            &usage,
            &parts,
            self.flavor,
            variant.vl_for_def,
            max_vls,
            global,
        )
        .map_err(|e| self.err(e))?;
        warnings.extend(vls.warnings.iter().cloned());
        let vls = vls.vls;
        let report = check(&usage, &parts, &vls);
        if self.flavor == Flavor::Ext {
            if report.fails() {
                return Err(self.err(format!(
                    "strict isolation violated: {}",
                    report.violations.join("; ")
                )));
            }
            for v in &report.violations {
                warnings.push(format!("best-effort: {v}"));
            }
        }
        let path_sls = if vls.iter().any(|&v| v > 0) {
            let lids: Vec<Lid> = fabric
                .lid_ports()
                .map(|(_, p)| p.lid)
                .filter(|l| l.0 != 0)
                .collect();
            let mut sls = PathSls::new(&lids);
            for (pi, p) in parts.partitions.iter().enumerate() {
                if vls[pi] == 0 {
                    continue;
                }
                for &(_, _, s, sm) in &p.members {
                    for &(_, _, d, dm) in &p.members {
                        if s != d && p.may_talk(sm, dm) {
                            sls.set(s, d, vls[pi]);
                        }
                    }
                }
            }
            Some(sls)
        } else {
            None
        };
        Ok(PftreeOutcome {
            routing: Routing { tables, path_sls },
            partitions: parts,
            vls,
            report,
            warnings,
            engine: self.flavor.name(),
            variant: variant.label(),
        })
    }
}

impl RoutingEngine for Pftree {
    fn name(&self) -> &'static str {
        self.flavor.name()
    }

    fn route(&self, fabric: &Fabric) -> Result<Routing, RoutingError> {
        self.run(fabric).map(|o| o.routing)
    }
}
