//! The traffic endpoints of an analysis: CA and router ports with a LID, all
//! of them, a list of LIDs or GUIDs, or a subset chosen as ORCS chooses it.

use crate::error::AnalysisError;
use ibcloud_fabric::{Fabric, Guid, Lid, NodeId, NodeKind, PortRef};
use rand::seq::index;
use rand::Rng;
use std::collections::{HashSet, VecDeque};

/// One endpoint: a CA or router port and its base LID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// The port.
    pub port: PortRef,
    /// Its base LID (flows are addressed to it).
    pub lid: Lid,
    /// Its port GUID.
    pub guid: Guid,
}

/// An ordered set of endpoints ("ranks" are positions in a run's order of them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Endpoints {
    list: Vec<Endpoint>,
}

/// How to pick a subset of endpoints (ORCS's `--subset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subset {
    /// Uniformly at random (from the seed).
    Random,
    /// Lowest port GUIDs first.
    GuidAscending,
    /// Highest port GUIDs first.
    GuidDescending,
    /// In breadth-first order from the fabric's first node (ORCS's `linear_bfs`).
    LinearBfs,
}

impl Subset {
    /// Parses `rand`, `guid_asc`, `guid_desc`, `linear_bfs` (ORCS's names; `-`
    /// may replace `_`).
    pub fn parse(name: &str) -> Result<Self, AnalysisError> {
        match name.replace('-', "_").as_str() {
            "rand" | "random" => Ok(Self::Random),
            "guid_asc" | "guid_order_asc" => Ok(Self::GuidAscending),
            "guid_desc" | "guid_order_desc" => Ok(Self::GuidDescending),
            "linear_bfs" | "bfs" => Ok(Self::LinearBfs),
            _ => Err(AnalysisError::BadOptions(format!(
                "unknown subset method '{name}' (known: rand, guid_asc, guid_desc, linear_bfs)"
            ))),
        }
    }
}

fn endpoint_of(fabric: &Fabric, port: PortRef) -> Option<Endpoint> {
    let node = fabric.node(port.node);
    if node.kind == NodeKind::Switch {
        return None;
    }
    let p = fabric.port(port)?;
    p.lid.is_set().then_some(Endpoint {
        port,
        lid: p.lid,
        guid: p.guid,
    })
}

impl Endpoints {
    /// Every CA and router port with a LID, in fabric order. Ports without a
    /// cable are included: flows to or from them are reported as broken.
    pub fn cas(fabric: &Fabric) -> Self {
        let list = fabric
            .iter_nodes()
            .filter(|(_, n)| n.kind != NodeKind::Switch)
            .flat_map(|(id, n)| {
                n.addressable_ports()
                    .filter_map(move |p| endpoint_of(fabric, PortRef::new(id, p)))
            })
            .collect();
        Self { list }
    }

    /// The endpoints owning `lids`, in that order. A LID inside a port's LMC
    /// range names that port.
    pub fn from_lids(fabric: &Fabric, lids: &[Lid]) -> Result<Self, AnalysisError> {
        let table = fabric.lid_table()?;
        let mut list = Vec::with_capacity(lids.len());
        for (index, &lid) in lids.iter().enumerate() {
            let port = table
                .get(lid.0 as usize)
                .copied()
                .flatten()
                .ok_or(AnalysisError::UnknownLid { index, lid })?;
            let ep = endpoint_of(fabric, port).ok_or_else(|| AnalysisError::SwitchEndpoint {
                index,
                what: format!("LID {lid}"),
                switch: fabric.node(port.node).description.clone(),
            })?;
            list.push(ep);
        }
        Self::checked(list)
    }

    /// The endpoints with these port GUIDs; a node GUID names every port of
    /// that CA that has a LID, in port order.
    pub fn from_guids(fabric: &Fabric, guids: &[Guid]) -> Result<Self, AnalysisError> {
        let mut list = Vec::with_capacity(guids.len());
        for (index, &guid) in guids.iter().enumerate() {
            let switch_error = |node: NodeId| AnalysisError::SwitchEndpoint {
                index,
                what: format!("GUID {guid}"),
                switch: fabric.node(node).description.clone(),
            };
            if let Some(port) = fabric.port_by_guid(guid) {
                list.push(endpoint_of(fabric, port).ok_or_else(|| switch_error(port.node))?);
            } else if let Some(node) = fabric.node_by_guid(guid) {
                let n = fabric.node(node);
                if n.kind == NodeKind::Switch {
                    return Err(switch_error(node));
                }
                list.extend(
                    n.addressable_ports()
                        .filter_map(|p| endpoint_of(fabric, PortRef::new(node, p))),
                );
            } else {
                return Err(AnalysisError::UnknownGuid { index, guid });
            }
        }
        Self::checked(list)
    }

    /// Endpoints from a list built elsewhere; fails on duplicates.
    pub fn from_list(list: Vec<Endpoint>) -> Result<Self, AnalysisError> {
        Self::checked(list)
    }

    fn checked(list: Vec<Endpoint>) -> Result<Self, AnalysisError> {
        let mut seen = HashSet::with_capacity(list.len());
        for (index, ep) in list.iter().enumerate() {
            if !seen.insert(ep.port) {
                return Err(AnalysisError::DuplicateEndpoint {
                    index,
                    what: format!("LID {}", ep.lid),
                });
            }
        }
        Ok(Self { list })
    }

    /// `count` of these endpoints picked by `method` (`rng` serves
    /// [`Subset::Random`]); the result keeps the picking order.
    pub fn subset<R: Rng>(
        &self,
        fabric: &Fabric,
        method: Subset,
        count: usize,
        rng: &mut R,
    ) -> Result<Self, AnalysisError> {
        if count > self.len() {
            return Err(AnalysisError::BadOptions(format!(
                "cannot pick {count} endpoints out of {}",
                self.len()
            )));
        }
        let list = match method {
            Subset::Random => index::sample(rng, self.len(), count)
                .into_iter()
                .map(|i| self.list[i])
                .collect(),
            Subset::GuidAscending | Subset::GuidDescending => {
                let mut sorted = self.list.clone();
                sorted.sort_by_key(|e| e.guid);
                if method == Subset::GuidDescending {
                    sorted.reverse();
                }
                sorted.truncate(count);
                sorted
            }
            Subset::LinearBfs => {
                let mut ordered = self.bfs_order(fabric);
                ordered.truncate(count);
                ordered
            }
        };
        Ok(Self { list })
    }

    /// [`Endpoints::subset`] drawing from the analysis seed's setup stream
    /// (apart from every run's stream).
    pub fn subset_seeded(
        &self,
        fabric: &Fabric,
        method: Subset,
        count: usize,
        seed: u64,
    ) -> Result<Self, AnalysisError> {
        self.subset(fabric, method, count, &mut crate::order::setup_rng(seed))
    }

    /// These endpoints in breadth-first order of their nodes from the
    /// fabric's first node (ports of one node in port order); endpoints in
    /// parts of the fabric the search cannot reach come last, in list order.
    fn bfs_order(&self, fabric: &Fabric) -> Vec<Endpoint> {
        let mut by_node: Vec<Vec<Endpoint>> = vec![Vec::new(); fabric.num_nodes()];
        for ep in &self.list {
            by_node[ep.port.node.index()].push(*ep);
        }
        for eps in &mut by_node {
            eps.sort_by_key(|e| e.port.port);
        }
        let mut seen = vec![false; fabric.num_nodes()];
        let mut out = Vec::with_capacity(self.len());
        let mut queue = VecDeque::new();
        if fabric.num_nodes() > 0 {
            seen[0] = true;
            queue.push_back(NodeId(0));
        }
        while let Some(n) = queue.pop_front() {
            out.extend(by_node[n.index()].iter().copied());
            for (_, r) in fabric.neighbors(n) {
                if !seen[r.node.index()] {
                    seen[r.node.index()] = true;
                    queue.push_back(r.node);
                }
            }
        }
        out.extend(
            self.list
                .iter()
                .filter(|e| !seen[e.port.node.index()])
                .copied(),
        );
        out
    }

    /// Number of endpoints.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The endpoints in order.
    pub fn as_slice(&self) -> &[Endpoint] {
        &self.list
    }

    /// Position of the endpoint owning `port`, if it is one of these.
    pub fn position(&self, port: PortRef) -> Option<usize> {
        self.list.iter().position(|e| e.port == port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibcloud_fabric::generate;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn tree() -> Fabric {
        generate::preset("4-ary-2-full").unwrap().build().unwrap()
    }

    #[test]
    fn all_cas_and_lookups() {
        let f = tree();
        let all = Endpoints::cas(&f);
        assert_eq!(all.len(), 32);
        let lids: Vec<Lid> = all.as_slice().iter().rev().map(|e| e.lid).collect();
        let by_lid = Endpoints::from_lids(&f, &lids).unwrap();
        assert_eq!(by_lid.as_slice()[0], *all.as_slice().last().unwrap());
        let guids: Vec<Guid> = all.as_slice().iter().map(|e| e.guid).collect();
        assert_eq!(Endpoints::from_guids(&f, &guids).unwrap(), all);
    }

    #[test]
    fn bad_lists_are_errors() {
        let f = tree();
        let sw = f.switches().next().unwrap();
        let sw_lid = f.node_lid(sw);
        assert!(matches!(
            Endpoints::from_lids(&f, &[Lid(9999)]),
            Err(AnalysisError::UnknownLid { index: 0, .. })
        ));
        assert!(matches!(
            Endpoints::from_lids(&f, &[sw_lid]),
            Err(AnalysisError::SwitchEndpoint { index: 0, .. })
        ));
        let ep = Endpoints::cas(&f).as_slice()[0];
        assert!(matches!(
            Endpoints::from_lids(&f, &[ep.lid, ep.lid]),
            Err(AnalysisError::DuplicateEndpoint { index: 1, .. })
        ));
        assert!(matches!(
            Endpoints::from_guids(&f, &[Guid(0xdead)]),
            Err(AnalysisError::UnknownGuid { index: 0, .. })
        ));
    }

    #[test]
    fn subsets() {
        let f = tree();
        let all = Endpoints::cas(&f);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let r = all.subset(&f, Subset::Random, 10, &mut rng).unwrap();
        assert_eq!(r.len(), 10);
        assert_eq!(Endpoints::checked(r.list.clone()).unwrap().len(), 10);
        let asc = all.subset(&f, Subset::GuidAscending, 5, &mut rng).unwrap();
        assert!(asc.as_slice().windows(2).all(|w| w[0].guid < w[1].guid));
        let desc = all.subset(&f, Subset::GuidDescending, 5, &mut rng).unwrap();
        assert!(desc.as_slice().windows(2).all(|w| w[0].guid > w[1].guid));
        let bfs = all.subset(&f, Subset::LinearBfs, 32, &mut rng).unwrap();
        assert_eq!(bfs.len(), 32);
        assert!(all.subset(&f, Subset::Random, 33, &mut rng).is_err());
        assert_eq!(
            Subset::parse("guid-order-asc").unwrap(),
            Subset::GuidAscending
        );
        assert!(Subset::parse("zigzag").is_err());
    }
}
