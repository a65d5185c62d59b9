//! Linear forwarding tables: per switch, destination LID → output port.

use crate::ids::{Lid, NodeId, PortNum};
use crate::model::Fabric;
use serde::{Deserialize, Serialize};

/// The LFT entry meaning "no route / drop".
pub const NO_PORT: PortNum = 255;

/// Forwarding tables of every switch of one fabric. Each switch's table is
/// dense over LIDs `0..blocks*64`; unset entries hold [`NO_PORT`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForwardingTables {
    /// Indexed by node id; empty for CAs and routers.
    tables: Vec<Vec<PortNum>>,
}

impl ForwardingTables {
    /// Empty tables (all [`NO_PORT`]) sized for the fabric's highest LID.
    pub fn new(fabric: &Fabric) -> Self {
        Self::with_blocks(fabric, fabric.lft_blocks())
    }

    /// Empty tables of `blocks` 64-LID blocks per switch.
    pub fn with_blocks(fabric: &Fabric, blocks: usize) -> Self {
        let len = blocks.min(768) * Lid::PER_LFT_BLOCK;
        let tables = fabric
            .nodes()
            .iter()
            .map(|n| {
                if n.is_switch() {
                    vec![NO_PORT; len]
                } else {
                    Vec::new()
                }
            })
            .collect();
        Self { tables }
    }

    /// Number of node slots (= nodes of the fabric these tables belong to).
    pub fn num_nodes(&self) -> usize {
        self.tables.len()
    }

    /// The table of one switch (empty slice for non-switches or unknown ids).
    pub fn table(&self, switch: NodeId) -> &[PortNum] {
        self.tables.get(switch.index()).map_or(&[], Vec::as_slice)
    }

    /// Output port for `lid` at `switch`, or `None` if unset or out of range.
    pub fn get(&self, switch: NodeId, lid: Lid) -> Option<PortNum> {
        self.table(switch)
            .get(lid.0 as usize)
            .copied()
            .filter(|&p| p != NO_PORT)
    }

    /// Sets one entry, growing the table in whole blocks if needed.
    /// Returns false if `switch` is not a switch slot or `lid` is beyond 0xBFFF.
    pub fn set(&mut self, switch: NodeId, lid: Lid, port: PortNum) -> bool {
        let Some(t) = self.tables.get_mut(switch.index()) else {
            return false;
        };
        if t.is_empty() || lid.0 > Lid::UNICAST_MAX.0 {
            return false;
        }
        let i = lid.0 as usize;
        if i >= t.len() {
            t.resize((i / Lid::PER_LFT_BLOCK + 1) * Lid::PER_LFT_BLOCK, NO_PORT);
        }
        t[i] = port;
        true
    }

    /// Switches with tables, with their entries.
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, &[PortNum])> + '_ {
        self.tables
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.is_empty())
            .map(|(i, t)| (NodeId(i as u32), t.as_slice()))
    }

    /// Entries a complete routing must have but these tables lack: for every
    /// switch, every LID in use in `fabric` (LMC ranges in full) without a
    /// port; only CA and router LIDs unless `switch_lids` (OpenSM's ftree, for
    /// one, routes no switch LID that only a down-up turn could reach).
    pub fn unrouted(&self, fabric: &Fabric, switch_lids: bool) -> usize {
        let lids: Vec<u16> = fabric
            .lid_ports()
            .filter(|(pr, _)| switch_lids || !fabric.node(pr.node).is_switch())
            .flat_map(|(_, p)| (0..1u16 << p.lmc).map(move |k| p.lid.0 + k))
            .collect();
        fabric
            .switches()
            .map(|sw| {
                lids.iter()
                    .filter(|&&l| self.get(sw, Lid(l)).is_none())
                    .count()
            })
            .sum()
    }

    /// Entries of one switch that differ from `other`, as (LID, ours, theirs);
    /// unset counts as a value ([`NO_PORT`]) and a shorter table as unset beyond its end.
    pub fn differing_entries<'a>(
        &'a self,
        other: &'a ForwardingTables,
        switch: NodeId,
    ) -> impl Iterator<Item = (Lid, PortNum, PortNum)> + 'a {
        let (a, b) = (self.table(switch), other.table(switch));
        (0..a.len().max(b.len())).filter_map(move |i| {
            let (x, y) = (
                a.get(i).copied().unwrap_or(NO_PORT),
                b.get(i).copied().unwrap_or(NO_PORT),
            );
            (x != y).then_some((Lid(i as u16), x, y))
        })
    }

    /// Every differing entry of every switch, in switch then LID order, as
    /// (switch, LID, ours, theirs).
    pub fn differences<'a>(
        &'a self,
        other: &'a ForwardingTables,
    ) -> impl Iterator<Item = (NodeId, Lid, PortNum, PortNum)> + 'a {
        let switches = (0..self.tables.len().max(other.tables.len())).map(|i| NodeId(i as u32));
        switches.flat_map(move |sw| {
            self.differing_entries(other, sw)
                .map(move |(l, x, y)| (sw, l, x, y))
        })
    }

    /// Number of entries of one switch that differ from `other`.
    pub fn changed_entries(&self, other: &ForwardingTables, switch: NodeId) -> usize {
        self.differing_entries(other, switch).count()
    }

    /// 64-LID blocks of one switch that differ from `other` (the SMPs a
    /// differential update sends to that switch).
    pub fn changed_blocks(&self, other: &ForwardingTables, switch: NodeId) -> Vec<usize> {
        let (a, b) = (self.table(switch), other.table(switch));
        let blocks = a.len().max(b.len()).div_ceil(Lid::PER_LFT_BLOCK);
        (0..blocks)
            .filter(|&blk| {
                (blk * Lid::PER_LFT_BLOCK..(blk + 1) * Lid::PER_LFT_BLOCK).any(|i| {
                    a.get(i).copied().unwrap_or(NO_PORT) != b.get(i).copied().unwrap_or(NO_PORT)
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::preset;

    #[test]
    fn set_get_and_block_diff() {
        let f = preset("4-ary-2-full").unwrap().build().unwrap();
        let mut t = ForwardingTables::new(&f);
        let sw = f.switches().next().unwrap();
        assert_eq!(t.table(sw).len(), 64);
        assert!(t.set(sw, Lid(5), 3));
        assert_eq!(t.get(sw, Lid(5)), Some(3));
        assert_eq!(t.get(sw, Lid(6)), None);
        assert!(t.set(sw, Lid(130), 1));
        assert_eq!(t.table(sw).len(), 192);
        let empty = ForwardingTables::new(&f);
        assert_eq!(t.changed_blocks(&empty, sw), vec![0, 2]);
        assert_eq!(t.changed_entries(&empty, sw), 2);
        assert!(!t.set(f.cas().next().unwrap(), Lid(1), 1));
        assert!(!t.set(sw, Lid(0xC000), 1));
        assert_eq!(empty.unrouted(&f, true), 12 * 44);
        assert_eq!(t.unrouted(&f, true), 12 * 44 - 1);
        assert_eq!(t.unrouted(&f, false), 12 * 32 - 1);
    }
}
