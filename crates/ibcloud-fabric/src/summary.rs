//! What `ibcloud topo info` reports about a fabric.

use crate::model::{Fabric, NodeKind};
use serde::Serialize;
use std::collections::BTreeMap;

/// Switch counts and port use at one OpenSM rank.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LevelSummary {
    /// OpenSM rank (0 = roots); `None` for switches the ranking could not reach.
    pub rank: Option<u8>,
    /// Switches at this rank.
    pub switches: usize,
    /// Port count (radix) of those switches, smallest and largest.
    pub radix: (u8, u8),
    /// Cabled ports towards switches, per switch, smallest and largest.
    pub switch_links: (usize, usize),
    /// Cabled ports towards CAs and routers, per switch, smallest and largest.
    pub ca_links: (usize, usize),
}

/// A fabric at a glance.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Channel adapters.
    pub cas: usize,
    /// Switches.
    pub switches: usize,
    /// Routers.
    pub routers: usize,
    /// Links.
    pub links: usize,
    /// Per-rank switch data, roots first.
    pub levels: Vec<LevelSummary>,
    /// LIDs in use (LMC ranges counted in full).
    pub lids_used: usize,
    /// Highest LID in use.
    pub max_lid: u16,
    /// LFT blocks per switch: floor(max_lid/64)+1.
    pub lft_blocks_per_switch: usize,
    /// SMPs to write every switch's full LFT: switches × blocks.
    pub full_lft_smps: usize,
    /// Link rates and how many links run at each (`4xQDR` → count).
    pub link_rates: BTreeMap<String, usize>,
}

/// Summarises a fabric. Uses the ranks stored on switches; call
/// [`Fabric::infer_ranks`] first for fabrics read from files without them.
pub fn summarize(fabric: &Fabric) -> Summary {
    let mut levels: BTreeMap<Option<u8>, LevelSummary> = BTreeMap::new();
    for sw in fabric.switches() {
        let n = fabric.node(sw);
        let (mut to_sw, mut to_ca) = (0, 0);
        for (_, r) in fabric.neighbors(sw) {
            if fabric.node(r.node).kind == NodeKind::Switch {
                to_sw += 1;
            } else {
                to_ca += 1;
            }
        }
        let e = levels.entry(n.rank).or_insert(LevelSummary {
            rank: n.rank,
            switches: 0,
            radix: (u8::MAX, 0),
            switch_links: (usize::MAX, 0),
            ca_links: (usize::MAX, 0),
        });
        e.switches += 1;
        e.radix = (e.radix.0.min(n.num_ports), e.radix.1.max(n.num_ports));
        e.switch_links = (e.switch_links.0.min(to_sw), e.switch_links.1.max(to_sw));
        e.ca_links = (e.ca_links.0.min(to_ca), e.ca_links.1.max(to_ca));
    }
    // Known ranks first (roots at 0), unranked last.
    let mut levels: Vec<LevelSummary> = levels.into_values().collect();
    levels.sort_by_key(|l| l.rank.map_or(u16::MAX, u16::from));
    let mut link_rates = BTreeMap::new();
    for l in fabric.links() {
        let rate = fabric
            .port(l.a)
            .map(|p| p.rate.to_string())
            .unwrap_or_default();
        *link_rates.entry(rate).or_insert(0) += 1;
    }
    let switches = fabric.count(NodeKind::Switch);
    let blocks = fabric.lft_blocks();
    Summary {
        cas: fabric.count(NodeKind::Ca),
        switches,
        routers: fabric.count(NodeKind::Router),
        links: fabric.num_links(),
        levels,
        lids_used: fabric.lids_in_use(),
        max_lid: fabric.max_lid(),
        lft_blocks_per_switch: blocks,
        full_lft_smps: switches * blocks,
        link_rates,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::preset;

    #[test]
    fn lft_blocks_of_the_36_port_trees_match_paper_ii_table_i() {
        for (name, lids, blocks, smps) in [
            ("ft324", 360, 6, 216),
            ("ft648", 702, 11, 594),
            ("ft5832", 6804, 107, 104_004),
            ("ft11664", 13_284, 208, 336_960),
        ] {
            let s = summarize(&preset(name).unwrap().build().unwrap());
            assert_eq!(
                (s.lids_used, s.lft_blocks_per_switch, s.full_lft_smps),
                (lids, blocks, smps),
                "{name}"
            );
        }
    }

    #[test]
    fn levels_are_reported_roots_first_and_inferred_ranks_agree() {
        let mut f = preset("ft5832").unwrap().build().unwrap();
        let s = summarize(&f);
        assert_eq!(
            s.levels
                .iter()
                .map(|l| (l.rank, l.switches))
                .collect::<Vec<_>>(),
            vec![(Some(0), 324), (Some(1), 324), (Some(2), 324)]
        );
        assert_eq!(s.levels[0].switch_links, (18, 18));
        assert_eq!(s.levels[2].ca_links, (18, 18));
        let generated: Vec<_> = f.nodes().iter().map(|n| n.rank).collect();
        f.infer_ranks();
        assert_eq!(
            generated,
            f.nodes().iter().map(|n| n.rank).collect::<Vec<_>>()
        );
    }
}
