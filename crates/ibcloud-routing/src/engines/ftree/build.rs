//! Fat-tree construction: OpenSM's ranking, port groups, tuples ("indexing"),
//! leaf array and topology validation, step by step in the order of
//! `construct_fabric` in osm_ucast_ftree.c (3.3.23), refusing what it refuses.

use std::collections::HashSet;

use ibcloud_fabric::{Fabric, Guid, NodeId, NodeKind, PortNum};

use super::{unsupported, FtreeEngine};
use crate::engine::RoutingError;

/// "Not ranked" / "no tuple yet".
pub(crate) const UNRANKED: u32 = u32::MAX;
/// Tuple rank of a switch without a tuple: after every assigned tuple, equal to
/// every other unassigned one (OpenSM's all-0xFF tuple).
pub(crate) const NO_TUPLE: u32 = u32::MAX;
/// Tuple bytes OpenSM keeps (the tree rank is at most 8).
const TUPLE_LEN: usize = 8;
const FREE: u8 = 0xFF;

/// One port of a port group.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GroupPort {
    pub(crate) port: PortNum,
    pub(crate) remote_port: PortNum,
}

/// The ports of a switch that lead to one remote node (one remote LID), in one
/// direction.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    /// Tree switch index, or CA index when `!remote_is_sw`.
    pub(crate) remote: u32,
    pub(crate) remote_is_sw: bool,
    /// Grouping key: the remote switch's LID or the remote CA port's LID.
    pub(crate) remote_lid: u16,
    /// Tuple rank of the remote switch (NO_TUPLE for CAs and untupled switches).
    pub(crate) remote_trank: u32,
    /// Index of the first port in `Tree::ports`; the ports follow in order.
    pub(crate) first_port: u32,
    pub(crate) num_ports: u32,
}

/// A switch of the tree.
#[derive(Clone, Debug)]
pub(crate) struct Switch {
    pub(crate) node: NodeId,
    pub(crate) guid: Guid,
    pub(crate) lid: u16,
    pub(crate) rank: u32,
    pub(crate) tuple: [u8; TUPLE_LEN],
    /// Position of the tuple in tuple order (NO_TUPLE if unassigned).
    pub(crate) trank: u32,
    pub(crate) is_leaf: bool,
    pub(crate) removed: bool,
    /// Port groups by direction, in their current (sorted) order.
    pub(crate) down: Vec<u32>,
    pub(crate) up: Vec<u32>,
    pub(crate) sib: Vec<u32>,
    /// All down groups lead to CAs and there are no sibling groups.
    pub(crate) only_cas: bool,
    /// Sorting the down groups would compare a CA group (see [`undefined`]).
    pub(crate) sorts_cas: bool,
    /// Cabled ports in ascending order: (port, remote node, remote port).
    links: Vec<(PortNum, NodeId, PortNum)>,
}

/// One cabled CA port (OpenSM's CA "up port group").
#[derive(Clone, Debug)]
pub(crate) struct CaPort {
    pub(crate) lid: u16,
    pub(crate) guid: Guid,
    pub(crate) switch: u32,
    pub(crate) switch_port: PortNum,
    pub(crate) is_cn: bool,
}

/// A channel adapter of the tree.
#[derive(Clone, Debug)]
pub(crate) struct Ca {
    pub(crate) node: NodeId,
    pub(crate) guid: Guid,
    pub(crate) ports: Vec<CaPort>,
    pub(crate) cn_num: u32,
    disconnected: Vec<bool>,
}

/// The constructed fat-tree, ready to route.
#[derive(Clone, Debug)]
pub(crate) struct Tree {
    /// Switches in OpenSM's switch-table order (node GUID in network byte order).
    pub(crate) sw: Vec<Switch>,
    /// CAs in OpenSM's CA-table order.
    pub(crate) ca: Vec<Ca>,
    pub(crate) groups: Vec<Group>,
    pub(crate) ports: Vec<GroupPort>,
    /// Leaf switches in tuple order (may include CN-less switches of leaf rank).
    pub(crate) leaves: Vec<u32>,
    pub(crate) leaf_rank: u32,
    pub(crate) max_rank: u32,
    pub(crate) max_cn_per_leaf: u32,
}

/// The refusal for a tree on which OpenSM's result depends on memory layout:
/// it orders port groups by the tuple of the remote switch and, for a group
/// leading to a CA, reads the CA's memory as a switch. That happens when a
/// switch above the leaf rank has a CA and other groups below it, or when a
/// switch's down groups include a CA and must be re-sorted because routes
/// through a switch below or beside it were counted.
pub(crate) fn undefined(switch: Guid, rank: u32) -> RoutingError {
    unsupported(format!(
        "switch {switch} (rank {rank}) has CAs among port groups that OpenSM sorts by remote switch tuple, \
         reading CA data as a tuple: its result is undefined here"
    ))
}

/// OpenSM keys its switch and CA tables by the GUID as stored (network byte
/// order), which on x86 sorts by the byte-swapped value.
fn table_key(g: Guid) -> u64 {
    g.0.swap_bytes()
}

fn tuple_str(t: &[u8; TUPLE_LEN]) -> String {
    if t[0] == FREE {
        return "INDEX.NOT.ASSIGNED".into();
    }
    t.iter()
        .take_while(|&&b| b != FREE)
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(".")
}

fn tuple_key(t: &[u8; TUPLE_LEN]) -> u64 {
    u64::from_le_bytes(*t)
}

impl Tree {
    /// Builds the tree the way OpenSM's `construct_fabric` does.
    pub(crate) fn build(fabric: &Fabric, engine: &FtreeEngine) -> Result<Tree, RoutingError> {
        if fabric.lid_ports().any(|(_, p)| p.lmc > 0) {
            return Err(unsupported("LMC > 0 is not supported by fat-tree routing"));
        }
        let all_switches = fabric.switches().count();
        if all_switches < 2 {
            return Err(unsupported(format!(
                "Fabric has {all_switches} switches - topology is not fat-tree"
            )));
        }
        if fabric.num_nodes() - all_switches < 2 {
            return Err(unsupported(format!(
                "Fabric has {} nodes ({all_switches} switches) - topology is not fat-tree",
                fabric.num_nodes()
            )));
        }

        let mut tree = Tree::populate_nodes(fabric)?;

        let cn_set: Option<HashSet<Guid>> = match &engine.compute_nodes {
            Some(list) if list.is_empty() => {
                return Err(unsupported(
                    "Compute node guids file has no valid guids - failed reading guid files",
                ));
            }
            Some(list) => Some(list.iter().copied().collect()),
            None => None,
        };

        if tree.ca.len() < 2 {
            return Err(unsupported(format!(
                "Fabric has {} CAs - topology is not fat-tree",
                tree.ca.len()
            )));
        }

        let sw_index = tree.switch_index(fabric);
        tree.rank(fabric, &sw_index, engine.roots.as_deref())?;
        tree.remove_unranked(fabric);
        let live = tree.sw.iter().filter(|s| !s.removed).count();
        if tree.max_rank == 0 && live > 1 {
            return Err(unsupported(
                "Found more than one root on fabric with maximum rank 0",
            ));
        }

        tree.populate_ports(fabric, &sw_index, cn_set.as_ref())?;
        let cn_num: u32 = tree.ca.iter().map(|c| c.cn_num).sum();
        if cn_num == 0 {
            return Err(unsupported("Fabric has no valid compute nodes"));
        }

        tree.set_leaf_rank(engine.roots.is_some());
        let tree_rank = tree.leaf_rank as u64 + 1;
        if !(2..=8).contains(&tree_rank) {
            return Err(unsupported(format!(
                "Fabric rank is {tree_rank} (should be between 2 and 8)"
            )));
        }
        tree.mark_leaf_switches()?;
        tree.make_indexing()?;
        tree.create_leaf_array()?;
        tree.set_max_cn_per_leaf();
        if engine.roots.is_none() {
            tree.validate()?;
        }
        tree.classify();
        Ok(tree)
    }

    fn populate_nodes(fabric: &Fabric) -> Result<Tree, RoutingError> {
        let mut sw = Vec::new();
        let mut ca = Vec::new();
        for (id, node) in fabric.iter_nodes() {
            match node.kind {
                NodeKind::Switch => {
                    if node.num_ports == 0 {
                        continue;
                    }
                    let lid = fabric.node_lid(id);
                    if !lid.is_set() {
                        return Err(RoutingError::MissingLid(format!(
                            "switch '{}'",
                            node.description
                        )));
                    }
                    let links = fabric
                        .neighbors(id)
                        .map(|(p, r)| (p, r.node, r.port))
                        .collect();
                    sw.push(Switch {
                        node: id,
                        guid: node.guid,
                        lid: lid.0,
                        rank: UNRANKED,
                        tuple: [FREE; TUPLE_LEN],
                        trank: NO_TUPLE,
                        is_leaf: false,
                        removed: false,
                        down: Vec::new(),
                        up: Vec::new(),
                        sib: Vec::new(),
                        only_cas: false,
                        sorts_cas: false,
                        links,
                    });
                }
                NodeKind::Ca => ca.push(Ca {
                    node: id,
                    guid: node.guid,
                    ports: Vec::new(),
                    cn_num: 0,
                    disconnected: vec![false; node.num_ports as usize + 1],
                }),
                NodeKind::Router => {}
            }
        }
        sw.sort_by_key(|s| table_key(s.guid));
        ca.sort_by_key(|c| table_key(c.guid));
        Ok(Tree {
            sw,
            ca,
            groups: Vec::new(),
            ports: Vec::new(),
            leaves: Vec::new(),
            leaf_rank: 0,
            max_rank: 0,
            max_cn_per_leaf: 0,
        })
    }

    /// Node index → tree switch index (u32::MAX for others).
    fn switch_index(&self, fabric: &Fabric) -> Vec<u32> {
        let mut idx = vec![u32::MAX; fabric.num_nodes()];
        for (i, s) in self.sw.iter().enumerate() {
            idx[s.node.index()] = i as u32;
        }
        idx
    }

    fn ca_index(&self, fabric: &Fabric) -> Vec<u32> {
        let mut idx = vec![u32::MAX; fabric.num_nodes()];
        for (i, c) in self.ca.iter().enumerate() {
            idx[c.node.index()] = i as u32;
        }
        idx
    }

    /// Ranks switches: from the given roots, or from the CAs and then again
    /// from the switches found farthest from them.
    fn rank(
        &mut self,
        fabric: &Fabric,
        sw_index: &[u32],
        roots: Option<&[Guid]>,
    ) -> Result<(), RoutingError> {
        if let Some(roots) = roots {
            let mut list = Vec::new();
            for g in roots {
                if let Some(i) = self.sw.iter().position(|s| s.guid == *g) {
                    self.sw[i].rank = 0;
                    list.push(i as u32);
                }
            }
            if !list.is_empty() {
                self.max_rank = self.bfs_rank(fabric, sw_index, list);
                return Ok(());
            }
            // No valid root: OpenSM falls back to ranking from the CAs.
        }
        let mut list = Vec::new();
        for c in &self.ca {
            let node = fabric.node(c.node);
            for p in node.external_ports() {
                let Some(r) = fabric.remote(ibcloud_fabric::PortRef::new(c.node, p)) else {
                    continue;
                };
                match fabric.node(r.node).kind {
                    NodeKind::Ca => {
                        return Err(unsupported(format!(
                            "CA connected directly to another CA: {} <---> {} - subnet ranking failed, subnet is not FatTree",
                            node.guid,
                            fabric.node(r.node).guid
                        )));
                    }
                    NodeKind::Router => continue,
                    NodeKind::Switch => {}
                }
                let s = sw_index[r.node.index()];
                if s == u32::MAX {
                    continue;
                }
                let sw = &mut self.sw[s as usize];
                if sw.rank != UNRANKED && sw.rank == 0 {
                    continue;
                }
                sw.rank = 0;
                list.push(s);
            }
        }
        let max = self.bfs_rank(fabric, sw_index, list);
        self.max_rank = max;
        for s in &mut self.sw {
            if s.rank != UNRANKED {
                s.rank = max.wrapping_sub(s.rank);
            }
        }
        let mut list = Vec::new();
        for (i, s) in self.sw.iter_mut().enumerate() {
            if s.rank == 0 {
                list.push(i as u32);
            } else {
                s.rank = UNRANKED;
            }
        }
        self.max_rank = self.bfs_rank(fabric, sw_index, list);
        Ok(())
    }

    /// BFS over switch links from the ranked switches in `queue`; returns the
    /// rank of the last switch ranked (0 if none), as OpenSM does.
    fn bfs_rank(&mut self, fabric: &Fabric, sw_index: &[u32], mut queue: Vec<u32>) -> u32 {
        let mut max_rank = 0;
        let mut head = 0;
        while head < queue.len() {
            let s = queue[head] as usize;
            head += 1;
            let rank = self.sw[s].rank;
            for k in 0..self.sw[s].links.len() {
                let (_, rnode, _) = self.sw[s].links[k];
                if fabric.node(rnode).kind != NodeKind::Switch {
                    continue;
                }
                let r = sw_index[rnode.index()];
                if r == u32::MAX {
                    continue;
                }
                let remote = &mut self.sw[r as usize];
                if remote.rank != UNRANKED && remote.rank <= rank + 1 {
                    continue;
                }
                remote.rank = rank + 1;
                max_rank = rank + 1;
                queue.push(r);
            }
        }
        max_rank
    }

    /// Drops unranked switches; CA ports cabled to them count as disconnected.
    fn remove_unranked(&mut self, fabric: &Fabric) {
        let ca_index = self.ca_index(fabric);
        for i in 0..self.sw.len() {
            if self.sw[i].rank != UNRANKED {
                continue;
            }
            self.sw[i].removed = true;
            for k in 0..self.sw[i].links.len() {
                let (_, rnode, rport) = self.sw[i].links[k];
                let c = ca_index[rnode.index()];
                if c != u32::MAX {
                    if let Some(d) = self.ca[c as usize].disconnected.get_mut(rport as usize) {
                        *d = true;
                    }
                }
            }
        }
    }

    fn populate_ports(
        &mut self,
        fabric: &Fabric,
        sw_index: &[u32],
        cn_set: Option<&HashSet<Guid>>,
    ) -> Result<(), RoutingError> {
        let ca_index = self.ca_index(fabric);
        for c in 0..self.ca.len() {
            let id = self.ca[c].node;
            let node = fabric.node(id);
            for p in node.external_ports() {
                if self.ca[c].disconnected[p as usize] {
                    continue;
                }
                let me = ibcloud_fabric::PortRef::new(id, p);
                let Some(r) = fabric.remote(me) else { continue };
                match fabric.node(r.node).kind {
                    NodeKind::Router => continue,
                    NodeKind::Ca => {
                        return Err(unsupported(format!(
                            "CA connected directly to another CA: {} <---> {} - topology is not a fat-tree",
                            node.guid,
                            fabric.node(r.node).guid
                        )));
                    }
                    NodeKind::Switch => {}
                }
                let s = sw_index[r.node.index()];
                if s == u32::MAX || self.sw[s as usize].removed {
                    continue;
                }
                let port = &fabric.ports(id)[p as usize];
                if !port.lid.is_set() {
                    return Err(RoutingError::MissingLid(fabric.port_label(me)));
                }
                let is_cn = cn_set.is_none_or(|set| set.contains(&port.guid));
                let ca = &mut self.ca[c];
                if is_cn {
                    ca.cn_num += 1;
                }
                if ca.ports.iter().any(|q| q.lid == port.lid.0) {
                    // OpenSM: "Duplicated LID for CA GUID" - the port is left out.
                    continue;
                }
                ca.ports.push(CaPort {
                    lid: port.lid.0,
                    guid: port.guid,
                    switch: s,
                    switch_port: r.port,
                    is_cn,
                });
            }
        }
        let mut pairs: Vec<(u32, GroupPort)> = Vec::new();
        #[derive(PartialEq, Clone, Copy)]
        enum Dir {
            Up,
            Same,
            Down,
        }
        for s in 0..self.sw.len() {
            if self.sw[s].removed {
                continue;
            }
            let my_rank = self.sw[s].rank;
            for k in 0..self.sw[s].links.len() {
                let (port, rnode, rport) = self.sw[s].links[k];
                if rnode == self.sw[s].node {
                    continue;
                }
                let (dir, remote, is_sw, remote_lid) = match fabric.node(rnode).kind {
                    NodeKind::Router => continue,
                    NodeKind::Ca => {
                        let lid = fabric.ports(rnode)[rport as usize].lid;
                        if !lid.is_set() {
                            return Err(RoutingError::MissingLid(
                                fabric.port_label(ibcloud_fabric::PortRef::new(rnode, rport)),
                            ));
                        }
                        (Dir::Down, ca_index[rnode.index()], false, lid.0)
                    }
                    NodeKind::Switch => {
                        let r = sw_index[rnode.index()];
                        if r == u32::MAX || self.sw[r as usize].removed {
                            continue;
                        }
                        let rr = self.sw[r as usize].rank;
                        let dir = match my_rank.cmp(&rr) {
                            std::cmp::Ordering::Greater => Dir::Up,
                            std::cmp::Ordering::Equal => Dir::Same,
                            std::cmp::Ordering::Less => Dir::Down,
                        };
                        (dir, r, true, self.sw[r as usize].lid)
                    }
                };
                let list = match dir {
                    Dir::Up => &self.sw[s].up,
                    Dir::Same => &self.sw[s].sib,
                    Dir::Down => &self.sw[s].down,
                };
                let found = list
                    .iter()
                    .copied()
                    .find(|&g| self.groups[g as usize].remote_lid == remote_lid);
                let g = match found {
                    Some(g) => g,
                    None => {
                        let g = self.groups.len() as u32;
                        self.groups.push(Group {
                            remote,
                            remote_is_sw: is_sw,
                            remote_lid,
                            remote_trank: NO_TUPLE,
                            first_port: 0,
                            num_ports: 0,
                        });
                        let sw = &mut self.sw[s];
                        match dir {
                            Dir::Up => sw.up.push(g),
                            Dir::Same => sw.sib.push(g),
                            Dir::Down => sw.down.push(g),
                        }
                        g
                    }
                };
                pairs.push((
                    g,
                    GroupPort {
                        port,
                        remote_port: rport,
                    },
                ));
            }
        }
        // Lay the ports out group by group, keeping port order inside a group.
        pairs.sort_by_key(|&(g, _)| g);
        for (i, &(g, p)) in pairs.iter().enumerate() {
            let g = &mut self.groups[g as usize];
            if g.num_ports == 0 {
                g.first_port = i as u32;
            }
            g.num_ports += 1;
            self.ports.push(p);
        }
        Ok(())
    }

    fn set_leaf_rank(&mut self, roots_provided: bool) {
        if !roots_provided {
            self.leaf_rank = self.max_rank;
            return;
        }
        if let Some(c) = self.ca.iter().find(|c| c.cn_num > 0) {
            if let Some(p) = c.ports.iter().find(|p| p.is_cn) {
                self.leaf_rank = self.sw[p.switch as usize].rank;
            }
        }
    }

    fn mark_leaf_switches(&mut self) -> Result<(), RoutingError> {
        for c in 0..self.ca.len() {
            if self.ca[c].cn_num == 0 {
                continue;
            }
            for k in 0..self.ca[c].ports.len() {
                let p = &self.ca[c].ports[k];
                if !p.is_cn {
                    continue;
                }
                let sw = &mut self.sw[p.switch as usize];
                if sw.is_leaf {
                    continue;
                }
                sw.is_leaf = true;
                if sw.rank != self.leaf_rank {
                    return Err(unsupported(format!(
                        "CN port {} is connected to switch {} with rank {}, while FatTree leaf rank is {} - topology is not a fat-tree",
                        p.guid, sw.guid, sw.rank, self.leaf_rank
                    )));
                }
            }
        }
        Ok(())
    }

    /// Assigns tuples by BFS from the first leaf (OpenSM's "indexing") and
    /// sorts the port groups of indexed switches by remote tuple.
    fn make_indexing(&mut self) -> Result<(), RoutingError> {
        let Some(first) = self.sw.iter().position(|s| !s.removed && s.is_leaf) else {
            return Ok(());
        };
        let mut used: HashSet<u64> = HashSet::new();
        let leaf_rank = self.leaf_rank as usize;
        let mut t = [FREE; TUPLE_LEN];
        t[0] = self.sw[first].rank as u8;
        for b in t.iter_mut().take(leaf_rank + 1).skip(1) {
            *b = 0;
        }
        self.sw[first].tuple = t;
        used.insert(tuple_key(&t));

        let mut queue = vec![first as u32];
        let mut head = 0;
        while head < queue.len() {
            let s = queue[head] as usize;
            head += 1;
            let rank = self.sw[s].rank;
            if rank < self.leaf_rank {
                for k in 0..self.sw[s].down.len() {
                    let g = &self.groups[self.sw[s].down[k] as usize];
                    if !g.remote_is_sw {
                        continue;
                    }
                    let r = g.remote as usize;
                    if self.sw[r].tuple[0] != FREE {
                        continue;
                    }
                    let t = self.new_tuple(&used, s, true)?;
                    self.sw[r].tuple = t;
                    used.insert(tuple_key(&t));
                    queue.push(r as u32);
                }
                let mut down = std::mem::take(&mut self.sw[s].down);
                if down.len() > 1 && down.iter().any(|&g| !self.groups[g as usize].remote_is_sw) {
                    return Err(undefined(self.sw[s].guid, rank));
                }
                self.sort_by_remote_tuple(&mut down);
                self.sw[s].down = down;
            }
            if rank != 0 {
                for k in 0..self.sw[s].up.len() {
                    let r = self.groups[self.sw[s].up[k] as usize].remote as usize;
                    if self.sw[r].tuple[0] != FREE {
                        continue;
                    }
                    let t = self.new_tuple(&used, s, false)?;
                    self.sw[r].tuple = t;
                    used.insert(tuple_key(&t));
                    queue.push(r as u32);
                }
                let mut up = std::mem::take(&mut self.sw[s].up);
                self.sort_by_remote_tuple(&mut up);
                self.sw[s].up = up;
            }
        }
        // Tuple ranks for cheap comparisons: position in tuple order.
        let mut order: Vec<u32> = (0..self.sw.len() as u32)
            .filter(|&i| self.sw[i as usize].tuple[0] != FREE)
            .collect();
        order.sort_by(|&a, &b| self.sw[a as usize].tuple.cmp(&self.sw[b as usize].tuple));
        for (pos, &i) in order.iter().enumerate() {
            self.sw[i as usize].trank = pos as u32;
        }
        for g in &mut self.groups {
            g.remote_trank = if g.remote_is_sw {
                self.sw[g.remote as usize].trank
            } else {
                NO_TUPLE
            };
        }
        Ok(())
    }

    /// The first free tuple next to switch `s`'s, one rank down or up.
    fn new_tuple(
        &self,
        used: &HashSet<u64>,
        s: usize,
        down: bool,
    ) -> Result<[u8; TUPLE_LEN], RoutingError> {
        let from = self.sw[s].tuple;
        let mut t = from;
        let var = if down {
            t[0] = t[0].wrapping_add(1);
            from[0] as usize + 1
        } else {
            t[0] = t[0].wrapping_sub(1);
            from[0] as usize
        };
        if var >= TUPLE_LEN {
            return Err(unsupported(
                "switch tuple out of range - topology is not a fat-tree",
            ));
        }
        for i in 0..FREE {
            t[var] = i;
            if !used.contains(&tuple_key(&t)) {
                return Ok(t);
            }
        }
        Err(unsupported(format!(
            "no free tuple next to switch {} (index {}): more than 255 ports in one direction",
            self.sw[s].guid,
            tuple_str(&from)
        )))
    }

    /// Sorts groups by the tuple of their remote switch (all remotes have
    /// distinct tuples here, so any sort gives OpenSM's qsort order).
    fn sort_by_remote_tuple(&self, groups: &mut [u32]) {
        groups.sort_by(|&a, &b| {
            let ta = self.remote_tuple(a);
            let tb = self.remote_tuple(b);
            ta.cmp(&tb)
        });
    }

    fn remote_tuple(&self, g: u32) -> [u8; TUPLE_LEN] {
        let g = &self.groups[g as usize];
        if g.remote_is_sw {
            self.sw[g.remote as usize].tuple
        } else {
            [FREE; TUPLE_LEN]
        }
    }

    fn create_leaf_array(&mut self) -> Result<(), RoutingError> {
        let mut all: Vec<u32> = (0..self.sw.len() as u32)
            .filter(|&i| !self.sw[i as usize].removed && self.sw[i as usize].rank == self.leaf_rank)
            .collect();
        // glibc's qsort is a stable merge sort here: untupled switches (all
        // 0xFF) keep their switch-table order at the end.
        all.sort_by(|&a, &b| self.sw[a as usize].tuple.cmp(&self.sw[b as usize].tuple));
        let first = all.iter().position(|&i| self.sw[i as usize].is_leaf);
        let last = all.iter().rposition(|&i| self.sw[i as usize].is_leaf);
        match (first, last) {
            (Some(f), Some(l)) if f < l => {
                self.leaves = all[f..=l].to_vec();
                Ok(())
            }
            _ => Err(unsupported(
                "Failed to find leaf switches - topology is not fat-tree",
            )),
        }
    }

    fn set_max_cn_per_leaf(&mut self) {
        let mut max = 0;
        for &l in &self.leaves {
            let n = self.sw[l as usize]
                .down
                .iter()
                .filter(|&&g| {
                    let g = &self.groups[g as usize];
                    !g.remote_is_sw
                        && self
                            .ca_port(g.remote, g.remote_lid)
                            .is_some_and(|p| p.is_cn)
                })
                .count() as u32;
            max = max.max(n);
        }
        self.max_cn_per_leaf = max;
    }

    /// Compute-node LIDs leaf by leaf, `None` padding each leaf to
    /// `max_cn_per_leaf` (OpenSM's `fabric_dump_hca_ordering`).
    pub(crate) fn ca_order(&self) -> Vec<Option<ibcloud_fabric::Lid>> {
        let mut out = Vec::new();
        for &l in &self.leaves {
            let mut on_leaf = 0;
            for &g in &self.sw[l as usize].down {
                let g = &self.groups[g as usize];
                if g.remote_is_sw
                    || !self
                        .ca_port(g.remote, g.remote_lid)
                        .is_some_and(|p| p.is_cn)
                {
                    continue;
                }
                out.push(Some(ibcloud_fabric::Lid(g.remote_lid)));
                on_leaf += 1;
            }
            out.extend(std::iter::repeat_n(
                None,
                self.max_cn_per_leaf.saturating_sub(on_leaf) as usize,
            ));
        }
        out
    }

    /// The port of CA `ca` with LID `lid`.
    pub(crate) fn ca_port(&self, ca: u32, lid: u16) -> Option<&CaPort> {
        self.ca[ca as usize].ports.iter().find(|p| p.lid == lid)
    }

    fn sw_label(&self, s: usize) -> String {
        let sw = &self.sw[s];
        format!(
            "GUID {}, LID {}, Index {}",
            sw.guid,
            sw.lid,
            tuple_str(&sw.tuple)
        )
    }

    /// OpenSM's `fabric_validate_topology`: every switch of a rank compared
    /// with the first of that rank in switch-table order.
    fn validate(&self) -> Result<(), RoutingError> {
        let tree_rank = self.leaf_rank + 1;
        let mut reference: Vec<Option<usize>> = vec![None; tree_rank as usize];
        let fail = |what: String| Err(unsupported(format!("{what} - topology is not a fat-tree")));
        for (s, sw) in self.sw.iter().enumerate() {
            if sw.removed {
                continue;
            }
            let Some(slot) = reference.get_mut(sw.rank as usize) else {
                return fail(format!(
                    "switch {} has rank {} below the leaf rank",
                    sw.guid, sw.rank
                ));
            };
            let Some(r) = *slot else {
                *slot = Some(s);
                continue;
            };
            let rs = &self.sw[r];
            if rs.up.len() != sw.up.len() {
                return fail(format!(
                    "Different number of upward port groups on switches: {} - {} groups; {} - {} groups",
                    self.sw_label(r),
                    rs.up.len(),
                    self.sw_label(s),
                    sw.up.len()
                ));
            }
            if sw.rank != tree_rank - 1 && rs.down.len() != sw.down.len() {
                return fail(format!(
                    "Different number of downward port groups on switches: {} - {} port groups; {} - {} port groups",
                    self.sw_label(r),
                    rs.down.len(),
                    self.sw_label(s),
                    sw.down.len()
                ));
            }
            if let Some(&rg) = rs.up.first() {
                let want = self.groups[rg as usize].num_ports;
                for &g in &sw.up {
                    let have = self.groups[g as usize].num_ports;
                    if have != want {
                        return fail(format!(
                            "Different number of ports in an upward port group on switches: {} - {want} ports; {} - {have} ports",
                            self.sw_label(r),
                            self.sw_label(s)
                        ));
                    }
                }
            }
            if let Some(&rg) = rs.down.first() {
                if sw.rank != tree_rank - 1 && !sw.down.is_empty() {
                    // OpenSM compares the first downward group only (for every group).
                    let want = self.groups[rg as usize].num_ports;
                    let have = self.groups[sw.down[0] as usize].num_ports;
                    if have != want {
                        return fail(format!(
                            "Different number of ports in an downward port group on switches: {} - {want} ports; {} - {have} ports",
                            self.sw_label(r),
                            self.sw_label(s)
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Marks switches whose down groups all lead to CAs, with nothing beside.
    fn classify(&mut self) {
        for sw in self.sw.iter_mut().filter(|s| !s.removed) {
            let cas = sw
                .down
                .iter()
                .filter(|&&g| !self.groups[g as usize].remote_is_sw)
                .count();
            sw.only_cas = cas > 0 && cas == sw.down.len() && sw.sib.is_empty();
            sw.sorts_cas = cas > 0 && sw.down.len() > 1;
        }
    }
}
