//! Paper IV's metabase-aided routing, mFatTree (reference C §2.6–2.7).
//!
//! **Phase I** ([`Metabase::build`]) computes, for every leaf `L`, `n`
//! leaf-to-leaf path sets, each the spanning tree of one root towards `L`:
//! on the chain from the root down to `L` every switch forwards down
//! towards `L`; every other switch below the root forwards up towards its
//! parent in the root's tree (so a leaf climbs only to its nearest common
//! ancestor with `L` on the chain: paths stay minimal); switches outside
//! the tree get a fallback (down towards `L` when `L` is below them, up
//! otherwise). A path set's column — one output port per switch — is a
//! "shadow LFT" entry under a path id that acts as a dummy LID.
//!
//! The `n` roots of a leaf are chosen like ftree balances its down-going
//! routes: the j-th path climbs from the leaf on the least-loaded up port
//! at every level (ties to the lower port), skipping parents that lead to no
//! unused root, so the j-th path of every leaf leaves it on its j-th up port
//! and consecutive paths use different roots. With
//! [`MetabaseOptions::disjoint`] only roots whose trees share no link with
//! the leaf's earlier ones are taken. `n` defaults to the most compute nodes
//! on a leaf (more paths would never be used), at most the number of
//! different trees.
//!
//! **Phase II** ([`Metabase::assign`]) gives the k-th compute node of each
//! leaf (in port order, or in a node order restricted to the leaf: the
//! paper's Algorithm 5, with its "=" read as "≠") the leaf's path
//! `k mod n`, and copies that path's column into the node's LID on every
//! switch except its leaf, whose entry is the port to the node. With more
//! nodes than paths, nodes share paths (the oversubscribed case).
//!
//! **Reconfiguration** ([`reroute`], Algorithm 4): a change of the switch
//! topology needs phase I again; anything else (node order, nodes shut
//! down or booted) only phase II on the stored metabase.
//!
//! **On disk** ([`Metabase::save`] / [`Metabase::load`]): the bytes
//! `IBCLOUD-METABASE` and a little-endian u32 format version (1), then the
//! [`MetabaseData`] in postcard encoding: switch GUIDs per switch slot (to
//! refuse another fabric), root GUIDs, leaves, per leaf its first path id,
//! path count and roots, and the shadow LFT (switch-major: per switch slot
//! one byte per path id, 255 = none).

use std::time::{Duration, Instant};

use ibcloud_fabric::lft::{ForwardingTables, NO_PORT};
use ibcloud_fabric::{Fabric, Guid, Lid, NodeId};
use ibcloud_routing::EngineOptions;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::ReconfigError;
use crate::switch_lids::route_switch_lids;
use crate::topo::{LeafSet, Topo, NONE};

const MAGIC: &[u8] = b"IBCLOUD-METABASE";
const VERSION: u32 = 1;

/// Phase I options.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetabaseOptions {
    /// Paths (spanning trees) per leaf; default: the most compute nodes on a
    /// leaf, capped by the trees available.
    pub paths: Option<usize>,
    /// Only link-disjoint trees (at most `min(w_2..w_h)` per leaf).
    pub disjoint: bool,
    /// Root switches (default: ftree's).
    pub roots: Option<Vec<Guid>>,
}

/// The stored part of a metabase.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetabaseData {
    /// Node GUID of every switch slot (0: not a tree switch).
    pub switch_guids: Vec<u64>,
    /// The roots the tree was ranked from.
    pub root_guids: Vec<u64>,
    /// Leaf switch slots in tuple order.
    pub leaves: Vec<u32>,
    /// First path id of each leaf.
    pub path_off: Vec<u32>,
    /// Roots (switch slots) of each leaf's paths, in path order.
    pub roots: Vec<Vec<u32>>,
    /// Shadow LFT, switch-major: `plft[s * paths + pid]` (one row per
    /// switch slot, one byte per path id, 255 = none).
    pub plft: Vec<u8>,
}

/// A metabase bound to its fabric.
#[derive(Clone, Debug)]
pub struct Metabase {
    data: MetabaseData,
    topo: Topo,
    /// Phase I time.
    pub build_time: Duration,
}

/// Number of different and of link-disjoint spanning trees towards a leaf
/// (Paper IV Eqs. 2–5, the disjoint minimum over the switch levels).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeCounts {
    /// Different trees (one per root above the leaf).
    pub different: usize,
    /// Most link-disjoint trees (found greedily over the roots).
    pub disjoint: usize,
}

fn topo_for(fabric: &Fabric, roots: Option<&[Guid]>) -> Result<Topo, ReconfigError> {
    let opts = EngineOptions {
        roots: roots.map(<[Guid]>::to_vec),
        ..EngineOptions::default()
    };
    Topo::build(fabric, &opts)
}

/// Non-leaf switches below a root (its own tree's inner switches).
fn inner_below(t: &Topo, r: u32) -> Vec<bool> {
    let mut seen = vec![false; t.len()];
    let mut stack = vec![r];
    seen[r as usize] = true;
    while let Some(s) = stack.pop() {
        for h in &t.down[s as usize] {
            let x = h.remote as usize;
            if !seen[x] && t.leaf_pos[x] == NONE {
                seen[x] = true;
                stack.push(h.remote);
            }
        }
    }
    seen
}

/// Roots above every switch, as sets of root positions.
fn roots_above(t: &Topo, roots: &[u32]) -> Vec<LeafSet> {
    let mut pos = vec![NONE; t.len()];
    for (i, &r) in roots.iter().enumerate() {
        pos[r as usize] = i as u32;
    }
    let mut above = vec![LeafSet::with_len(roots.len()); t.len()];
    for s in t.top_down() {
        let si = s as usize;
        if pos[si] != NONE {
            above[si].insert(pos[si] as usize);
        }
        let mine = above[si].clone();
        for h in &t.down[si] {
            above[h.remote as usize].union(&mine);
        }
    }
    above
}

/// The spanning-tree counts towards the first leaf of `fabric`.
pub fn tree_counts(fabric: &Fabric) -> Result<TreeCounts, ReconfigError> {
    let t = topo_for(fabric, None)?;
    let roots: Vec<u32> = t
        .top_down()
        .into_iter()
        .filter(|&s| t.rank[s as usize] == 0)
        .collect();
    let leaf = *t
        .leaves
        .first()
        .ok_or_else(|| ReconfigError::NotFatTree("no leaves".into()))?;
    let cand: Vec<u32> = roots
        .iter()
        .copied()
        .filter(|&r| t.below[r as usize].contains(t.leaf_pos[leaf as usize] as usize))
        .collect();
    let mut used = vec![false; t.len()];
    let mut disjoint = 0;
    for &r in &cand {
        let inner = inner_below(&t, r);
        if inner.iter().zip(&used).any(|(a, b)| *a && *b) {
            continue;
        }
        for (u, i) in used.iter_mut().zip(&inner) {
            *u |= *i;
        }
        disjoint += 1;
    }
    Ok(TreeCounts {
        different: cand.len(),
        disjoint,
    })
}

impl Metabase {
    /// Phase I on `fabric`.
    pub fn build(fabric: &Fabric, options: &MetabaseOptions) -> Result<Self, ReconfigError> {
        let t0 = Instant::now();
        let t = topo_for(fabric, options.roots.as_deref())?;
        let n_sw = t.len();
        let roots: Vec<u32> = t
            .top_down()
            .into_iter()
            .filter(|&s| t.rank[s as usize] == 0)
            .collect();
        let above = roots_above(&t, &roots);
        let mut root_pos = vec![NONE; n_sw];
        for (i, &r) in roots.iter().enumerate() {
            root_pos[r as usize] = i as u32;
        }
        let max_cn = t
            .leaves
            .iter()
            .map(|&l| t.cns[l as usize].len())
            .max()
            .unwrap_or(0)
            .max(1);
        let want = options.paths.unwrap_or(max_cn);
        if want == 0 {
            return Err(ReconfigError::BadOptions(
                "the metabase needs at least one path per leaf".into(),
            ));
        }
        // Down-going counters on up hops, as ftree balances.
        let mut up_off = vec![0usize; n_sw + 1];
        for s in 0..n_sw {
            up_off[s + 1] = up_off[s] + t.up[s].len();
        }
        let mut cnt = vec![0u32; up_off[n_sw]];
        let mut inner_cache: Vec<Option<Vec<bool>>> = vec![None; n_sw];
        let mut data = MetabaseData {
            switch_guids: (0..n_sw)
                .map(|s| {
                    if t.is_switch(s as u32) {
                        t.guid[s].0
                    } else {
                        0
                    }
                })
                .collect(),
            root_guids: roots.iter().map(|&r| t.guid[r as usize].0).collect(),
            leaves: t.leaves.clone(),
            path_off: Vec::with_capacity(t.leaves.len()),
            roots: Vec::with_capacity(t.leaves.len()),
            plft: Vec::new(),
        };
        let mut next_pid = 0u32;
        // Roots are chosen in order (the counters make it sequential); the
        // columns, the expensive part, are then computed in parallel and
        // stored in the same order.
        let mut jobs: Vec<(usize, usize, u32)> = Vec::new();
        for (lp, &leaf) in t.leaves.iter().enumerate() {
            let mut used = LeafSet::with_len(roots.len());
            let mut used_inner = vec![false; n_sw];
            let mut mine = Vec::new();
            for j in 0..want {
                // Climb on least-loaded up hops towards an unused (disjoint) root.
                let mut sw = leaf;
                let mut climbed = Vec::new();
                let ok = loop {
                    let si = sw as usize;
                    if t.rank[si] == 0 {
                        break true;
                    }
                    let mut best: Option<(u32, usize)> = None;
                    for (i, h) in t.up[si].iter().enumerate() {
                        let r = h.remote as usize;
                        let fresh = roots.iter().enumerate().any(|(ri, &root)| {
                            above[r].contains(ri)
                                && !used.contains(ri)
                                && (!options.disjoint || {
                                    let inner = inner_cache[root as usize]
                                        .get_or_insert_with(|| inner_below(&t, root));
                                    !inner.iter().zip(&used_inner).any(|(a, b)| *a && *b)
                                })
                        });
                        if !fresh {
                            continue;
                        }
                        let key = (cnt[up_off[si] + i], i);
                        if best.is_none_or(|b| key < b) {
                            best = Some(key);
                        }
                    }
                    let Some((_, i)) = best else { break false };
                    climbed.push(up_off[si] + i);
                    sw = t.up[si][i].remote;
                };
                if !ok {
                    break;
                }
                for c in climbed {
                    cnt[c] += 1;
                }
                let root = sw;
                used.insert(root_pos[root as usize] as usize);
                if options.disjoint {
                    let inner =
                        inner_cache[root as usize].get_or_insert_with(|| inner_below(&t, root));
                    for (u, i) in used_inner.iter_mut().zip(inner.iter()) {
                        *u |= *i;
                    }
                }
                mine.push(root);
                jobs.push((lp, j, root));
            }
            if mine.is_empty() {
                return Err(ReconfigError::NotFatTree(format!(
                    "leaf '{}' reaches no root",
                    fabric.node(t.node[leaf as usize]).description
                )));
            }
            data.path_off.push(next_pid);
            next_pid += mine.len() as u32;
            data.roots.push(mine);
        }
        let reach: Vec<Vec<bool>> = (0..t.leaves.len())
            .into_par_iter()
            .map(|lp| t.reach(lp))
            .collect();
        let columns: Vec<Vec<u8>> = jobs
            .par_iter()
            .map(|&(lp, j, root)| column(&t, lp, root, j, &reach[lp]))
            .collect();
        // One row per switch (switch-major).
        let paths = next_pid as usize;
        let mut rows = vec![NO_PORT; paths * n_sw];
        for (pid, col) in columns.iter().enumerate() {
            for (sw, &p) in col.iter().enumerate() {
                rows[sw * paths + pid] = p;
            }
        }
        data.plft = rows;
        Ok(Self {
            data,
            topo: t,
            build_time: t0.elapsed(),
        })
    }

    /// Paths of each leaf.
    pub fn paths_per_leaf(&self) -> Vec<usize> {
        self.data.roots.iter().map(Vec::len).collect()
    }

    /// The stored data.
    pub fn data(&self) -> &MetabaseData {
        &self.data
    }

    /// Bytes of the on-disk form.
    pub fn to_bytes(&self) -> Result<Vec<u8>, ReconfigError> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&VERSION.to_le_bytes());
        let body =
            postcard::to_stdvec(&self.data).map_err(|e| ReconfigError::Metabase(e.to_string()))?;
        out.extend_from_slice(&body);
        Ok(out)
    }

    /// Reads the on-disk form for `fabric`; a metabase of another fabric is refused.
    pub fn from_bytes(bytes: &[u8], fabric: &Fabric) -> Result<Self, ReconfigError> {
        let rest = bytes
            .strip_prefix(MAGIC)
            .ok_or_else(|| ReconfigError::Metabase("not a metabase file (bad magic)".into()))?;
        if rest.len() < 4 {
            return Err(ReconfigError::Metabase("truncated header".into()));
        }
        let version = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
        if version != VERSION {
            return Err(ReconfigError::Metabase(format!(
                "format version {version}, expected {VERSION}"
            )));
        }
        let data: MetabaseData = postcard::from_bytes(&rest[4..])
            .map_err(|e| ReconfigError::Metabase(format!("corrupt: {e}")))?;
        let roots: Vec<Guid> = data.root_guids.iter().map(|&g| Guid(g)).collect();
        let topo = topo_for(fabric, Some(&roots))?;
        let guids: Vec<u64> = (0..topo.len())
            .map(|s| {
                if topo.is_switch(s as u32) {
                    topo.guid[s].0
                } else {
                    0
                }
            })
            .collect();
        let paths: usize = data.roots.iter().map(Vec::len).sum();
        if guids != data.switch_guids
            || topo.leaves != data.leaves
            || data.path_off.len() != data.leaves.len()
            || data.plft.len() != paths * topo.len()
        {
            return Err(ReconfigError::Metabase(
                "it was built for another fabric (switches, leaves or sizes differ)".into(),
            ));
        }
        Ok(Self {
            data,
            topo,
            build_time: Duration::ZERO,
        })
    }

    /// Writes the on-disk form.
    pub fn save(&self, path: &std::path::Path) -> Result<(), ReconfigError> {
        ibcloud_fabric::formats::write_atomic(path, &self.to_bytes()?)
            .map_err(|e| ReconfigError::Input(e.to_string()))
    }

    /// Reads a metabase file for `fabric`.
    pub fn load(path: &std::path::Path, fabric: &Fabric) -> Result<Self, ReconfigError> {
        let bytes = std::fs::read(path)
            .map_err(|e| ReconfigError::Input(format!("{}: {e}", path.display())))?;
        Self::from_bytes(&bytes, fabric).map_err(|e| match e {
            ReconfigError::Metabase(m) => {
                ReconfigError::Metabase(format!("{}: {m}", path.display()))
            }
            other => other,
        })
    }

    /// Tables with switch LIDs routed (min-hop up/down) and no compute-node
    /// entries: the base phase II writes into.
    pub fn base_tables(&self, fabric: &Fabric, old: Option<&ForwardingTables>) -> ForwardingTables {
        let mut t = ForwardingTables::new(fabric);
        route_switch_lids(&self.topo, fabric, old, &mut t);
        t
    }

    /// Phase II: writes every live compute node's entries into `tables`
    /// (switch-LID entries are left as they are). `order`: compute-node LIDs
    /// that come first on their leaves, in this order (Algorithm 5).
    /// `fabric` is the fabric now (nodes may have been shut down or booted
    /// since phase I; the switches must be the same). Returns the time spent.
    pub fn assign(
        &self,
        fabric: &Fabric,
        tables: &mut ForwardingTables,
        order: Option<&[Lid]>,
    ) -> Result<Duration, ReconfigError> {
        let t0 = Instant::now();
        let t = &self.topo;
        if tables.num_nodes() != fabric.num_nodes() || t.by_node.len() != fabric.num_nodes() {
            return Err(ReconfigError::WrongTables {
                tables: tables.num_nodes(),
                fabric: fabric.num_nodes(),
            });
        }
        let mut pos = std::collections::HashMap::new();
        if let Some(o) = order {
            for (i, l) in o.iter().enumerate() {
                if pos.insert(l.0, i).is_some() {
                    return Err(ReconfigError::BadOrder(format!(
                        "order item {i}: LID {} is listed twice",
                        l.0
                    )));
                }
            }
        }
        let n_sw = t.len();
        let switches: Vec<(usize, NodeId)> = (0..n_sw)
            .filter(|&s| t.is_switch(s as u32))
            .map(|s| (s, t.node[s]))
            .collect();
        let mut placed = 0usize;
        // (LID, path id, leaf node, leaf port) of every live compute node.
        let mut assigned: Vec<(Lid, usize, NodeId, u8)> = Vec::new();
        for (lp, &leaf) in t.leaves.iter().enumerate() {
            let ln = t.node[leaf as usize];
            // Compute nodes on the leaf now, in port order.
            let mut cns: Vec<(u8, Lid)> = Vec::new();
            for (p, port) in fabric.ports(ln).iter().enumerate().skip(1) {
                if let Some(r) = port.remote {
                    if !fabric.node(r.node).is_switch() {
                        if let Some(x) = fabric.port(r) {
                            if x.lid.is_set() {
                                cns.push((p as u8, Lid(x.lid.0)));
                            }
                        }
                    }
                }
            }
            if order.is_some() {
                cns.sort_by_key(|&(p, l)| (pos.get(&l.0).copied().unwrap_or(usize::MAX), p));
            }
            let paths = self.data.roots[lp].len();
            let off = self.data.path_off[lp] as usize;
            for (k, &(port, lid)) in cns.iter().enumerate() {
                assigned.push((lid, off + k % paths, ln, port));
                placed += usize::from(pos.contains_key(&lid.0));
            }
        }
        // Switch by switch: each switch's shadow row is read and its LFT
        // row written in one pass.
        let paths: usize = self.data.roots.iter().map(Vec::len).sum();
        for &(s, node) in &switches {
            let row = &self.data.plft[s * paths..(s + 1) * paths];
            for &(lid, pid, ln, port) in &assigned {
                tables.set(node, lid, if node == ln { port } else { row[pid] });
            }
        }
        if placed != pos.len() {
            let known: std::collections::HashSet<u16> = t
                .leaves
                .iter()
                .flat_map(|&l| {
                    let ln = t.node[l as usize];
                    fabric
                        .neighbors(ln)
                        .filter_map(|(_, r)| fabric.port(r).map(|x| x.lid.0))
                        .collect::<Vec<_>>()
                })
                .collect();
            let (i, l) = order
                .unwrap_or(&[])
                .iter()
                .enumerate()
                .find(|(_, l)| !known.contains(&l.0))
                .map(|(i, l)| (i, l.0))
                .unwrap_or((0, 0));
            return Err(ReconfigError::BadOrder(format!(
                "order item {i}: LID {l} is not a compute node on a leaf of the fat-tree"
            )));
        }
        Ok(t0.elapsed())
    }

    /// Full mFatTree routing: base tables plus phase II.
    pub fn route(
        &self,
        fabric: &Fabric,
        order: Option<&[Lid]>,
    ) -> Result<ForwardingTables, ReconfigError> {
        let mut t = self.base_tables(fabric, None);
        self.assign(fabric, &mut t, order)?;
        Ok(t)
    }
}

/// One path set's column: per switch slot its port for paths of leaf
/// position `lp` through `root` (the j-th path of the leaf).
fn column(t: &Topo, lp: usize, root: u32, j: usize, reach: &[bool]) -> Vec<u8> {
    let n = t.len();
    let mut col = vec![NO_PORT; n];
    // Tree membership: switches below the root (leaves included).
    let mut in_tree = vec![false; n];
    let mut stack = vec![root];
    in_tree[root as usize] = true;
    while let Some(s) = stack.pop() {
        for h in &t.down[s as usize] {
            if !in_tree[h.remote as usize] {
                in_tree[h.remote as usize] = true;
                stack.push(h.remote);
            }
        }
    }
    // The (j mod count)-th hop that passes `ok`, without allocating.
    let pick = |hops: &[crate::topo::Hop], ok: &dyn Fn(&crate::topo::Hop) -> bool| -> u8 {
        let count = hops.iter().filter(|h| ok(h)).count();
        if count == 0 {
            return NO_PORT;
        }
        hops.iter()
            .filter(|h| ok(h))
            .nth(j % count)
            .map_or(NO_PORT, |h| h.port)
    };
    // The chain from the root down to the leaf (parallel links: the
    // (j mod count)-th port towards the first child with the leaf below).
    let mut on_chain = vec![false; n];
    let mut s = root;
    let leaf = t.leaves[lp];
    while s != leaf {
        on_chain[s as usize] = true;
        let hops = &t.down[s as usize];
        let Some(first) = hops
            .iter()
            .find(|h| t.below[h.remote as usize].contains(lp))
        else {
            break;
        };
        let next = first.remote;
        col[s as usize] = pick(hops, &|h| h.remote == next);
        s = next;
    }
    for x in 0..n {
        if !t.is_switch(x as u32) || x == leaf as usize || on_chain[x] {
            continue;
        }
        col[x] = if in_tree[x] {
            match t.up[x].iter().find(|h| in_tree[h.remote as usize]) {
                Some(f) => {
                    let parent = f.remote;
                    pick(&t.up[x], &|h| h.remote == parent)
                }
                None => NO_PORT,
            }
        } else if t.below[x].contains(lp) {
            pick(&t.down[x], &|h| t.below[h.remote as usize].contains(lp))
        } else {
            pick(&t.up[x], &|h| reach[h.remote as usize])
        };
    }
    col
}

/// Algorithm 4: routes `fabric` after a change. A switch-topology change
/// (`topology_changed`) rebuilds the metabase (phase I); otherwise the stored
/// one is used. Phase II then writes the compute-node entries on top of
/// `old` (switch-LID entries are re-routed only when the topology changed).
pub fn reroute(
    metabase: &mut Metabase,
    fabric: &Fabric,
    old: &ForwardingTables,
    topology_changed: bool,
    order: Option<&[Lid]>,
    options: &MetabaseOptions,
) -> Result<(ForwardingTables, Duration), ReconfigError> {
    let t0 = Instant::now();
    let mut tables = if topology_changed {
        let mut opts = options.clone();
        if opts.roots.is_none() {
            opts.roots = Some(metabase.data.root_guids.iter().map(|&g| Guid(g)).collect());
        }
        *metabase = Metabase::build(fabric, &opts)?;
        metabase.base_tables(fabric, Some(old))
    } else {
        // Compute-node entries are all rewritten; clear them first so nodes
        // that left lose their routes.
        let mut t = old.clone();
        clear_ca_entries(fabric, &mut t);
        t
    };
    metabase.assign(fabric, &mut tables, order)?;
    Ok((tables, t0.elapsed()))
}

/// Unsets every CA LID on every switch.
fn clear_ca_entries(fabric: &Fabric, t: &mut ForwardingTables) {
    let lids: Vec<Lid> = fabric
        .lid_ports()
        .filter(|(p, _)| !fabric.node(p.node).is_switch())
        .map(|(_, p)| Lid(p.lid.0))
        .collect();
    for sw in fabric.switches().collect::<Vec<_>>() {
        for &l in &lids {
            if t.get(sw, l).is_some() {
                t.set(sw, l, NO_PORT);
            }
        }
    }
}
