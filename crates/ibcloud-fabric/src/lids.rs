//! LID assignment: OpenSM's order on a fresh subnet, packed from 1, or from a
//! guid2lid file (OpenSM's persistent LID cache), with LMC.

use crate::error::{FabricError, LidError};
use crate::ids::{Guid, Lid, PortRef};
use crate::model::Fabric;
use std::collections::{BTreeMap, HashMap};

/// How LIDs are handed out.
#[derive(Clone, Debug, PartialEq)]
pub enum LidPolicy {
    /// In fabric (node id) order from LID 1: generated fabrics list CAs first,
    /// so a fabric of N nodes and S switches uses exactly LIDs 1..=N+S at LMC 0.
    Packed,
    /// As OpenSM 3.3 does on a subnet without a guid2lid cache: the SM's port
    /// first, then every port in the order of OpenSM's port-GUID table, which
    /// is keyed by the GUID in network byte order (so, on x86, by the
    /// byte-swapped GUID).
    OpenSm {
        /// The port the SM runs on (ibsim: the first port in the net file).
        sm_port: Option<PortRef>,
    },
    /// Ports listed in a guid2lid map keep their LIDs; the others get the next
    /// free LIDs in OpenSM order, as OpenSM does with its cache file.
    Guid2Lid {
        /// Port GUID → (first LID, last LID).
        map: Guid2Lid,
        /// The SM's port, for the OpenSM order of the unlisted ports.
        sm_port: Option<PortRef>,
    },
}

/// OpenSM's guid2lid cache: port GUID → LID range.
pub type Guid2Lid = BTreeMap<Guid, (Lid, Lid)>;

/// Options for [`assign_lids`].
#[derive(Clone, Debug, PartialEq)]
pub struct LidOptions {
    /// Order and source of the LIDs.
    pub policy: LidPolicy,
    /// LMC for CA and router ports (0..=7): each gets 2^lmc aligned LIDs.
    pub lmc: u8,
    /// Give switch port 0 the LMC too (OpenSM's `lmc_esp0`); otherwise one LID.
    pub lmc_esp0: bool,
}

impl Default for LidOptions {
    fn default() -> Self {
        Self {
            policy: LidPolicy::Packed,
            lmc: 0,
            lmc_esp0: false,
        }
    }
}

/// First-fit allocator over the unicast space that keeps the holes alignment
/// leaves, like OpenSM's free-range list.
struct FreeRanges {
    /// start → end (inclusive), disjoint.
    free: BTreeMap<u32, u32>,
}

impl FreeRanges {
    fn new() -> Self {
        Self {
            free: BTreeMap::from([(Lid::UNICAST_MIN.0 as u32, Lid::UNICAST_MAX.0 as u32)]),
        }
    }

    fn take_exact(&mut self, start: u32, len: u32) -> bool {
        let Some((&s, &e)) = self.free.range(..=start).next_back() else {
            return false;
        };
        if start + len - 1 > e {
            return false;
        }
        self.free.remove(&s);
        if s < start {
            self.free.insert(s, start - 1);
        }
        if start + len <= e {
            self.free.insert(start + len, e);
        }
        true
    }

    fn take_aligned(&mut self, len: u32) -> Option<u32> {
        let start = self.free.iter().find_map(|(&s, &e)| {
            let aligned = s.div_ceil(len) * len;
            (aligned + len - 1 <= e).then_some(aligned)
        })?;
        self.take_exact(start, len).then_some(start)
    }
}

/// Assigns a base LID and LMC to every switch port 0 and every cabled CA or
/// router port (uncabled CA ports get none, as a real SM cannot reach them).
///
/// ```
/// use ibcloud_fabric::{generate, lids::{assign_lids, LidOptions}};
/// let mut f = generate::preset("ft324")?.build()?;
/// assign_lids(&mut f, &LidOptions::default())?;
/// assert_eq!(f.max_lid(), 360);
/// # Ok::<(), ibcloud_fabric::FabricError>(())
/// ```
pub fn assign_lids(fabric: &mut Fabric, options: &LidOptions) -> Result<(), FabricError> {
    if options.lmc > 7 {
        return Err(LidError::BadLmc(options.lmc).into());
    }
    let mut wanted: Vec<(PortRef, u32)> = Vec::new();
    for (id, node) in fabric.iter_nodes() {
        for p in node.addressable_ports() {
            let pr = PortRef::new(id, p);
            let reachable = node.is_switch() || fabric.remote(pr).is_some();
            if reachable {
                let lmc = if node.is_switch() && !options.lmc_esp0 {
                    0
                } else {
                    options.lmc
                };
                wanted.push((pr, 1u32 << lmc));
            }
        }
    }
    let needed: usize = wanted.iter().map(|(_, n)| *n as usize).sum();
    if needed > Lid::UNICAST_MAX.0 as usize {
        return Err(LidError::Exhausted { needed }.into());
    }
    let (map, sm_port) = match &options.policy {
        LidPolicy::Packed => (None, None),
        LidPolicy::OpenSm { sm_port } => (None, *sm_port),
        LidPolicy::Guid2Lid { map, sm_port } => (Some(map), *sm_port),
    };
    if !matches!(options.policy, LidPolicy::Packed) {
        let port_guid = |pr: PortRef| fabric.port(pr).map(|p| p.guid.0).unwrap_or(0);
        wanted.sort_by_key(|&(pr, _)| (Some(pr) != sm_port, port_guid(pr).swap_bytes()));
    }
    fabric.clear_lids();
    let mut free = FreeRanges::new();
    let mut assigned: HashMap<PortRef, u32> = HashMap::new();
    if let Some(map) = map {
        // Cached LIDs first, so new ports cannot steal them.
        let mut owner: HashMap<u32, PortRef> = HashMap::new();
        for &(pr, span) in &wanted {
            let guid = fabric.port(pr).map(|p| p.guid).unwrap_or_default();
            let Some(&(lo, hi)) = map.get(&guid) else {
                continue;
            };
            let ok = lo.is_unicast()
                && hi.0 >= lo.0
                && (hi.0 - lo.0 + 1) as u32 == span
                && (lo.0 as u32).is_multiple_of(span);
            if !ok {
                continue; // OpenSM discards a cached range that no longer fits the LMC.
            }
            if let Some(&other) = owner.get(&(lo.0 as u32)) {
                return Err(LidError::Collision {
                    lid: lo,
                    first: fabric.port_label(other),
                    second: fabric.port_label(pr),
                }
                .into());
            }
            if free.take_exact(lo.0 as u32, span) {
                owner.insert(lo.0 as u32, pr);
                assigned.insert(pr, lo.0 as u32);
            }
        }
    }
    for &(pr, span) in &wanted {
        if assigned.contains_key(&pr) {
            continue;
        }
        let lid = free
            .take_aligned(span)
            .ok_or(LidError::Exhausted { needed })?;
        assigned.insert(pr, lid);
    }
    for (pr, span) in wanted {
        let lid = assigned[&pr];
        fabric.set_lid(pr, Lid(lid as u16), span.trailing_zeros() as u8)?;
    }
    Ok(())
}

/// The guid2lid map of a fabric's current LIDs.
pub fn guid2lid_of(fabric: &Fabric) -> Guid2Lid {
    fabric
        .lid_ports()
        .map(|(_, p)| {
            (
                p.guid,
                (
                    p.lid,
                    Lid(p.lid.0.saturating_add((1u16 << p.lmc.min(15)) - 1)),
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FabricBuilder, LinkRate, NodeKind, NodeSpec};

    fn two_switch_fabric() -> Fabric {
        // The ibsim example net: 2 switches, 4 HCAs.
        let mut b = FabricBuilder::new();
        let s1 = b
            .add_node(NodeSpec::new(
                NodeKind::Switch,
                Guid(0x200000),
                8,
                "Switch1",
            ))
            .unwrap();
        let s2 = b
            .add_node(NodeSpec::new(
                NodeKind::Switch,
                Guid(0x200001),
                8,
                "Switch2",
            ))
            .unwrap();
        let hcas: Vec<_> = [0x100000u64, 0x100003, 0x100006, 0x100009]
            .iter()
            .enumerate()
            .map(|(i, &g)| {
                b.add_node(NodeSpec::new(
                    NodeKind::Ca,
                    Guid(g),
                    2,
                    format!("Hca{}", i + 1),
                ))
                .unwrap()
            })
            .collect();
        let r = LinkRate::default();
        b.connect(PortRef::new(s1, 1), PortRef::new(hcas[0], 1), r)
            .unwrap();
        b.connect(PortRef::new(s2, 1), PortRef::new(hcas[1], 1), r)
            .unwrap();
        b.connect(PortRef::new(s1, 2), PortRef::new(hcas[2], 1), r)
            .unwrap();
        b.connect(PortRef::new(s2, 2), PortRef::new(hcas[3], 1), r)
            .unwrap();
        b.connect(PortRef::new(s1, 3), PortRef::new(s2, 3), r)
            .unwrap();
        b.build()
    }

    #[test]
    fn opensm_order_matches_what_opensm_assigned_on_ibsim() {
        // fixtures/interop/guid2lid: OpenSM 3.3.23 with the SM on Switch2.
        let mut f = two_switch_fabric();
        let sm = PortRef::new(f.node_by_guid(Guid(0x200001)).unwrap(), 0);
        assign_lids(
            &mut f,
            &LidOptions {
                policy: LidPolicy::OpenSm { sm_port: Some(sm) },
                ..Default::default()
            },
        )
        .unwrap();
        let lid = |g: u64| f.node_lid(f.node_by_guid(Guid(g)).unwrap()).0;
        assert_eq!(
            [
                lid(0x200001),
                lid(0x200000),
                lid(0x100000),
                lid(0x100003),
                lid(0x100006),
                lid(0x100009)
            ],
            [1, 2, 3, 4, 5, 6]
        );
    }

    #[test]
    fn lmc_ranges_are_aligned_and_switches_fill_holes() {
        let mut f = two_switch_fabric();
        assign_lids(
            &mut f,
            &LidOptions {
                lmc: 2,
                ..Default::default()
            },
        )
        .unwrap();
        let table = f.lid_table().unwrap();
        for (_, p) in f.lid_ports() {
            assert_eq!(p.lid.0 % (1 << p.lmc), 0);
        }
        // Switches take 1, 2; the HCAs take 4-7, 8-11, 12-15, 16-19; LID 3 stays free.
        assert_eq!(f.max_lid(), 19);
        assert!(table[3].is_none());
    }

    #[test]
    fn guid2lid_keeps_cached_lids_and_places_the_rest() {
        let mut f = two_switch_fabric();
        let mut map = Guid2Lid::new();
        map.insert(Guid(0x100001), (Lid(40), Lid(40)));
        let opts = LidOptions {
            policy: LidPolicy::Guid2Lid { map, sm_port: None },
            ..Default::default()
        };
        assign_lids(&mut f, &opts).unwrap();
        assert_eq!(f.node_lid(f.node_by_guid(Guid(0x100000)).unwrap()), Lid(40));
        assert!(f.lid_table().is_ok());
        assert_eq!(f.lids_in_use(), 6);
    }

    #[test]
    fn running_out_of_lids_is_an_error() {
        let mut f = two_switch_fabric();
        let err = assign_lids(
            &mut f,
            &LidOptions {
                lmc: 7,
                ..Default::default()
            },
        );
        assert!(err.is_ok(), "4 x 128 + 2 fits");
        let mut b = FabricBuilder::new();
        let mut prev = None;
        for i in 0..400u64 {
            let s = b
                .add_node(NodeSpec::new(
                    NodeKind::Switch,
                    Guid(0x1000 + i),
                    3,
                    format!("s{i}"),
                ))
                .unwrap();
            let c = b
                .add_node(NodeSpec::new(
                    NodeKind::Ca,
                    Guid(0x9000_0000 + i * 16),
                    1,
                    format!("c{i}"),
                ))
                .unwrap();
            b.connect(PortRef::new(s, 1), PortRef::new(c, 1), LinkRate::default())
                .unwrap();
            if let Some(p) = prev {
                b.connect(PortRef::new(p, 2), PortRef::new(s, 3), LinkRate::default())
                    .unwrap();
            }
            prev = Some(s);
        }
        let mut f = b.build();
        let err = assign_lids(
            &mut f,
            &LidOptions {
                lmc: 7,
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(err.to_string().contains("49151"), "{err}");
    }
}
