//! S003's testbed topologies (Fig. 3, missing from the seed, as E §3.3.1
//! infers them) with their forwarding tables: leaves A, B, C under one
//! root, two up-links per leaf (links 1–6), hosts H1…Hn with LID = number.
//!
//! Routing: a leaf sends a destination up on up-link 1 when its number is
//! odd and on up-link 2 when even; the root sends it down on the matching
//! link of the destination's leaf. This puts 2→3 and 1→5 on A's up-link 1
//! and 2→4 on up-link 2 (Exp. I/II), 2→7 and 2→11 on up-link 1 with 1→9, and
//! 2→11 on C's down-link 5 with 1→9 (Exp. III/IV).

use crate::error::NetsimError;
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Fabric, FabricBuilder, Guid, Lid, LinkRate, NodeKind, NodeSpec, PortRef};

/// Builds Fig. 3a (`hosts_per_leaf` = 2, all links `host_rate`) or 3b (4,
/// up-links `uplink_rate`, e.g. 4x QDR).
pub fn s003_testbed(
    hosts_per_leaf: u8,
    host_rate: LinkRate,
    uplink_rate: LinkRate,
) -> Result<(Fabric, ForwardingTables), NetsimError> {
    let bad = |e: String| NetsimError::Config(format!("testbed: {e}"));
    if !(1..=20).contains(&hosts_per_leaf) {
        return Err(bad("hosts per leaf must be 1-20".into()));
    }
    let hpl = hosts_per_leaf as u16;
    let mut b = FabricBuilder::new();
    let root = b
        .add_node(NodeSpec::new(NodeKind::Switch, Guid(0x200), 24, "Root"))
        .map_err(|e| bad(e.to_string()))?;
    let mut leaves = Vec::new();
    for (i, name) in ["A", "B", "C"].iter().enumerate() {
        leaves.push(
            b.add_node(NodeSpec::new(
                NodeKind::Switch,
                Guid(0x300 + i as u64),
                24,
                *name,
            ))
            .map_err(|e| bad(e.to_string()))?,
        );
    }
    let mut hosts = Vec::new();
    for h in 1..=3 * hpl {
        let id = b
            .add_node(NodeSpec::new(
                NodeKind::Ca,
                Guid(0x1000 + h as u64),
                1,
                format!("H{h}"),
            ))
            .map_err(|e| bad(e.to_string()))?;
        let leaf = leaves[((h - 1) / hpl) as usize];
        let k = ((h - 1) % hpl + 1) as u8;
        b.connect(PortRef::new(leaf, 2 + k), PortRef::new(id, 1), host_rate)
            .map_err(|e| bad(e.to_string()))?;
        hosts.push(id);
    }
    for (li, &l) in leaves.iter().enumerate() {
        for k in 1..=2u8 {
            b.connect(
                PortRef::new(l, k),
                PortRef::new(root, (2 * li) as u8 + k),
                uplink_rate,
            )
            .map_err(|e| bad(e.to_string()))?;
        }
    }
    let mut f = b.build();
    let lid = |f: &mut Fabric, p: PortRef, l: u16| f.set_lid(p, Lid(l), 0).map(|_| ());
    lid(&mut f, PortRef::new(root, 0), 100).map_err(|e| bad(e.to_string()))?;
    for (i, &l) in leaves.iter().enumerate() {
        lid(&mut f, PortRef::new(l, 0), 101 + i as u16).map_err(|e| bad(e.to_string()))?;
    }
    for (i, &h) in hosts.iter().enumerate() {
        lid(&mut f, PortRef::new(h, 1), i as u16 + 1).map_err(|e| bad(e.to_string()))?;
    }
    let mut t = ForwardingTables::new(&f);
    for h in 1..=3 * hpl {
        let leaf_of = ((h - 1) / hpl) as usize;
        let up = ((h - 1) % 2 + 1) as u8;
        for (li, &l) in leaves.iter().enumerate() {
            let port = if li == leaf_of {
                2 + ((h - 1) % hpl + 1) as u8
            } else {
                up
            };
            t.set(l, Lid(h), port);
        }
        t.set(root, Lid(h), (2 * leaf_of) as u8 + up);
    }
    t.set(root, Lid(100), 0);
    for (i, &l) in leaves.iter().enumerate() {
        t.set(l, Lid(101 + i as u16), 0);
        t.set(root, Lid(101 + i as u16), (2 * i) as u8 + 1);
        for (j, &m) in leaves.iter().enumerate() {
            if i != j {
                t.set(m, Lid(101 + i as u16), 1);
            }
        }
        t.set(l, Lid(100), 1);
    }
    Ok((f, t))
}
