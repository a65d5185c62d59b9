//! Test helpers for the lash engine: torus fabrics, OpenSM fixtures, and a
//! plain channel-dependency check of a routing.
#![allow(dead_code)]

use ibcloud_fabric::formats::{guid2lid, lfts_dump};
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::lids::{assign_lids, LidOptions, LidPolicy};
use ibcloud_fabric::{
    Fabric, FabricBuilder, Guid, Lid, LinkRate, NodeId, NodeKind, NodeSpec, PortRef,
};
use ibcloud_routing::PathSls;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A torus of switches (`dims`, e.g. `[4, 4]`; a single dimension is a ring)
/// with `cas` CAs per switch, LIDs packed. Switch `k` (row-major, last
/// dimension fastest) uses ports `2i+1` / `2i+2` towards its +/- neighbour in
/// dimension `i`, then its CAs. GUIDs follow the generator's scheme.
pub fn torus(dims: &[usize], cas: usize) -> Fabric {
    let n: usize = dims.iter().product();
    let mut b = FabricBuilder::new();
    let mut ca_ids = Vec::new();
    for k in 0..n {
        for c in 0..cas {
            let j = (k * cas + c + 1) as u64;
            let id = b
                .add_node(NodeSpec::new(
                    NodeKind::Ca,
                    Guid(0x0002_c903_0000_0000 + (j << 8)),
                    1,
                    format!("hca-{j:05} HCA-1"),
                ))
                .unwrap();
            ca_ids.push(id);
        }
    }
    let ports = (2 * dims.len() + cas) as u32;
    let sws: Vec<NodeId> = (0..n)
        .map(|k| {
            let guid = Guid(0x0002_c902_0000_0000 + (1 << 24) + k as u64 + 1);
            b.add_node(NodeSpec::new(
                NodeKind::Switch,
                guid,
                ports,
                format!("sw-T-{:04}", k + 1),
            ))
            .unwrap()
        })
        .collect();
    let coords = |mut k: usize| -> Vec<usize> {
        let mut c = vec![0; dims.len()];
        for i in (0..dims.len()).rev() {
            c[i] = k % dims[i];
            k /= dims[i];
        }
        c
    };
    let index = |c: &[usize]| c.iter().zip(dims).fold(0, |acc, (&x, &d)| acc * d + x);
    for k in 0..n {
        for (i, &d) in dims.iter().enumerate() {
            if d < 2 {
                continue;
            }
            let mut c = coords(k);
            c[i] = (c[i] + 1) % d;
            let plus = index(&c);
            let a = PortRef::new(sws[k], (2 * i + 1) as u8);
            let z = PortRef::new(sws[plus], (2 * i + 2) as u8);
            b.connect(a, z, LinkRate::default()).unwrap();
        }
        for c in 0..cas {
            let p = PortRef::new(sws[k], (2 * dims.len() + c + 1) as u8);
            b.connect(p, PortRef::new(ca_ids[k * cas + c], 1), LinkRate::default())
                .unwrap();
        }
    }
    let mut f = b.build();
    assign_lids(&mut f, &LidOptions::default()).unwrap();
    f
}

/// `fixtures/opensm/lash/<name>` of the workspace.
pub fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/opensm/lash")
        .join(name)
}

/// Gives `fabric` the LIDs of the fixture's guid2lid.
pub fn apply_guid2lid(fabric: &mut Fabric, dir: &Path) {
    let text = std::fs::read_to_string(dir.join("guid2lid")).unwrap();
    let map = guid2lid::parse(&text, "guid2lid").unwrap();
    assign_lids(
        fabric,
        &LidOptions {
            policy: LidPolicy::Guid2Lid { map, sm_port: None },
            ..Default::default()
        },
    )
    .unwrap();
}

/// OpenSM's tables from the fixture.
pub fn opensm_tables(fabric: &Fabric, dir: &Path) -> ForwardingTables {
    let text = std::fs::read_to_string(dir.join("opensm-lfts.dump")).unwrap();
    lfts_dump::parse(&text, "opensm-lfts.dump")
        .unwrap()
        .to_tables(fabric)
        .unwrap()
}

/// The first `limit` differences between two table sets, as text.
pub fn table_diffs(
    fabric: &Fabric,
    ours: &ForwardingTables,
    theirs: &ForwardingTables,
    limit: usize,
) -> (usize, String) {
    let mut count = 0;
    let mut text = String::new();
    for sw in fabric.switches() {
        let (a, b) = (ours.table(sw), theirs.table(sw));
        for lid in 0..a.len().max(b.len()) {
            let (x, y) = (
                a.get(lid).copied().unwrap_or(255),
                b.get(lid).copied().unwrap_or(255),
            );
            if x != y {
                if count < limit {
                    text += &format!(
                        "'{}' LID {lid}: ours {x}, OpenSM {y}\n",
                        fabric.node(sw).description
                    );
                }
                count += 1;
            }
        }
    }
    (count, text)
}

/// OpenSM's path SLs from the fixture's `sls.txt` ("slid dlid sl" per line,
/// from PathRecord queries), if there is one.
pub fn opensm_sls(dir: &Path) -> Option<Vec<(Lid, Lid, u8)>> {
    let text = std::fs::read_to_string(dir.join("sls.txt")).ok()?;
    Some(
        text.lines()
            .filter_map(|l| {
                let v: Vec<u16> = l
                    .split_whitespace()
                    .filter_map(|w| w.parse().ok())
                    .collect();
                match v[..] {
                    [s, d, sl] => Some((Lid(s), Lid(d), sl as u8)),
                    _ => None,
                }
            })
            .collect(),
    )
}

/// Follows every (source LID, destination LID) path through the tables and
/// checks that it arrives, then that the channel dependency graph of each
/// SL (= VL) is acyclic. A channel is (switch, output port); a path from a
/// CA starts at the CA's switch. Returns the number of paths followed.
pub fn check_deadlock_free(
    fabric: &Fabric,
    tables: &ForwardingTables,
    sls: Option<&PathSls>,
) -> Result<usize, String> {
    let lid_owner = fabric.lid_table().map_err(|e| e.to_string())?;
    let mut entry: Vec<(Lid, NodeId)> = Vec::new(); // LID and the switch its packets enter
    for (pr, port) in fabric.lid_ports() {
        let sw = if fabric.node(pr.node).is_switch() {
            pr.node
        } else {
            match port.remote {
                Some(r) if fabric.node(r.node).is_switch() => r.node,
                _ => continue,
            }
        };
        for k in 0..1u16 << port.lmc {
            entry.push((Lid(port.lid.0 + k), sw));
        }
    }
    let mut chan_id: HashMap<(u8, NodeId, u8), usize> = HashMap::new();
    let mut edges: Vec<Vec<usize>> = Vec::new();
    let mut id = |key, edges: &mut Vec<Vec<usize>>| {
        let next = chan_id.len();
        let v = *chan_id.entry(key).or_insert(next);
        if v == edges.len() {
            edges.push(Vec::new());
        }
        v
    };
    let mut followed = 0;
    for &(src, first) in &entry {
        for &(dst, _) in &entry {
            if src == dst {
                continue;
            }
            let vl = sls.map_or(0, |s| s.get(src, dst));
            let mut sw = first;
            let mut prev: Option<usize> = None;
            let mut hops = 0;
            loop {
                let port = tables.get(sw, dst).ok_or_else(|| {
                    format!("no route at '{}' to {dst}", fabric.node(sw).description)
                })?;
                if port == 0 {
                    if lid_owner
                        .get(dst.0 as usize)
                        .copied()
                        .flatten()
                        .map(|p| p.node)
                        != Some(sw)
                    {
                        return Err(format!(
                            "port 0 at '{}' for {dst}",
                            fabric.node(sw).description
                        ));
                    }
                    break;
                }
                let c = id((vl, sw, port), &mut edges);
                if let Some(p) = prev {
                    if !edges[p].contains(&c) {
                        edges[p].push(c);
                    }
                }
                prev = Some(c);
                let next = fabric
                    .remote(PortRef::new(sw, port))
                    .ok_or_else(|| format!("dead port at '{}'", fabric.node(sw).description))?;
                if !fabric.node(next.node).is_switch() {
                    if lid_owner.get(dst.0 as usize).copied().flatten() != Some(next) {
                        return Err(format!("{src} -> {dst} ends at the wrong CA"));
                    }
                    break;
                }
                sw = next.node;
                hops += 1;
                if hops > fabric.num_nodes() {
                    return Err(format!("{src} -> {dst} loops"));
                }
            }
            followed += 1;
        }
    }
    // Kahn's algorithm over all channels (SLs are disjoint subgraphs).
    let n = edges.len();
    let mut indeg = vec![0usize; n];
    for es in &edges {
        for &e in es {
            indeg[e] += 1;
        }
    }
    let mut queue: Vec<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
    let mut done = 0;
    while let Some(v) = queue.pop() {
        done += 1;
        for &e in &edges[v] {
            indeg[e] -= 1;
            if indeg[e] == 0 {
                queue.push(e);
            }
        }
    }
    if done != n {
        return Err(format!(
            "credit loop: {} of {n} channels are on or behind a dependency cycle",
            n - done
        ));
    }
    Ok(followed)
}
