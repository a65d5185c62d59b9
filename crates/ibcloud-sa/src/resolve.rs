//! PathRecord resolution: what an SA answers for a (SLID, DLID) pair on a
//! routed fabric. Like OpenSM, the resolver walks the forwarding tables from
//! source to destination *and back* and takes the minimum MTU and rate over
//! every link of both directions; the SL is the routing engine's path SL
//! (dfsssp, lash) or 0.
//!
//! The fabric model carries no MTU, so MTUs are a [`MtuMap`]: one default
//! for every port (OpenSM on ibsim answers 2048) plus per-port overrides.

use crate::error::SaError;
use crate::rate::{min_rate, rate_code};
use crate::wire::PathRecordRepr;
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Fabric, Lid, NodeId, PortRef};
use ibcloud_routing::PathSls;
use std::collections::BTreeMap;

/// Per-port MTU codes (1 = 256 … 5 = 4096).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MtuMap {
    /// Code of every port not overridden.
    pub default: u8,
    /// Overrides by (node, port).
    pub ports: BTreeMap<PortRef, u8>,
}

impl Default for MtuMap {
    fn default() -> Self {
        Self {
            default: 4,
            ports: BTreeMap::new(),
        }
    }
}

impl MtuMap {
    /// The MTU code of one port.
    pub fn of(&self, p: PortRef) -> u8 {
        self.ports.get(&p).copied().unwrap_or(self.default)
    }
}

/// What the walk of one direction found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Walk {
    /// Links traversed.
    pub hops: u32,
    /// Minimum MTU code over the links (both ends of each).
    pub mtu: u8,
    /// Minimum rate code over the links (both ends of each).
    pub rate: u8,
}

/// A resolved path: the SA's answer, both directions' walks included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved {
    /// Source LID.
    pub slid: u16,
    /// Destination LID.
    pub dlid: u16,
    /// Service level.
    pub sl: u8,
    /// MTU code: minimum over forward and reverse.
    pub mtu: u8,
    /// Rate code: minimum over forward and reverse.
    pub rate: u8,
    /// The forward walk.
    pub forward: Walk,
    /// The reverse walk.
    pub reverse: Walk,
}

impl Resolved {
    /// The PathRecord an SA would send (selectors "exactly", reversible,
    /// one path, P_Key 0xFFFF, packet lifetime `pkt_life`, caching flag as given).
    pub fn record(&self, pkt_life: u8, caching: bool) -> PathRecordRepr {
        PathRecordRepr {
            dlid: self.dlid,
            slid: self.slid,
            caching,
            reversible: true,
            numb_path: 1,
            pkey: 0xFFFF,
            sl: self.sl,
            mtu_selector: 2,
            mtu: self.mtu,
            rate_selector: 2,
            rate: self.rate,
            pkt_life_selector: 2,
            pkt_life,
            ..PathRecordRepr::default()
        }
    }
}

/// Resolves paths on one routed fabric.
#[derive(Debug, Clone)]
pub struct Resolver<'a> {
    fabric: &'a Fabric,
    tables: &'a ForwardingTables,
    sls: Option<&'a PathSls>,
    mtus: MtuMap,
    lids: std::borrow::Cow<'a, [Option<PortRef>]>,
}

impl<'a> Resolver<'a> {
    /// A resolver over a fabric with assigned LIDs, its tables and optional path SLs.
    pub fn new(
        fabric: &'a Fabric,
        tables: &'a ForwardingTables,
        sls: Option<&'a PathSls>,
        mtus: MtuMap,
    ) -> Result<Self, SaError> {
        let lids = fabric.lid_table().map_err(|e| SaError::Malformed {
            what: "fabric LIDs",
            problem: e.to_string(),
        })?;
        Ok(Self {
            fabric,
            tables,
            sls,
            mtus,
            lids: std::borrow::Cow::Owned(lids),
        })
    }

    /// As [`Resolver::new`] with the fabric's LID table already computed
    /// (`fabric.lid_table()`), so that a service answering many queries
    /// builds it once: computing it walks every port.
    pub fn with_lid_table(
        fabric: &'a Fabric,
        tables: &'a ForwardingTables,
        sls: Option<&'a PathSls>,
        mtus: MtuMap,
        lids: &'a [Option<PortRef>],
    ) -> Self {
        Self {
            fabric,
            tables,
            sls,
            mtus,
            lids: std::borrow::Cow::Borrowed(lids),
        }
    }

    fn owner(&self, lid: u16) -> Result<PortRef, SaError> {
        self.lids
            .get(lid as usize)
            .copied()
            .flatten()
            .ok_or(SaError::UnknownLid(lid))
    }

    /// One link's contribution: the port's and its peer's MTU and rate.
    fn link(&self, out: PortRef, acc: &mut Walk) -> Result<PortRef, String> {
        let port = self
            .fabric
            .port(out)
            .ok_or_else(|| format!("{} does not exist", self.fabric.port_label(out)))?;
        let peer = port
            .remote
            .ok_or_else(|| format!("{} is not connected", self.fabric.port_label(out)))?;
        let peer_rate = self.fabric.port(peer).map_or(port.rate, |p| p.rate);
        acc.hops += 1;
        acc.mtu = acc.mtu.min(self.mtus.of(out)).min(self.mtus.of(peer));
        acc.rate = min_rate(
            min_rate(acc.rate, rate_code(port.rate)),
            rate_code(peer_rate),
        );
        Ok(peer)
    }

    /// Walks the forwarding tables from the port owning `slid` to the one owning `dlid`.
    pub fn walk(&self, slid: u16, dlid: u16) -> Result<Walk, SaError> {
        let src = self.owner(slid)?;
        let dst = self.owner(dlid)?;
        let fail = |problem: String| SaError::NoRoute {
            slid,
            dlid,
            problem,
        };
        let mut acc = Walk {
            hops: 0,
            mtu: 5,
            rate: 24,
        };
        let mut node: NodeId = src.node;
        if !self.fabric.node(node).is_switch() {
            if src == dst {
                // A port's path to itself: the SA answers with its own link's MTU and rate.
                self.link(src, &mut acc).map_err(fail)?;
                acc.hops = 0;
                return Ok(acc);
            }
            node = self.link(src, &mut acc).map_err(fail)?.node;
        }
        let limit = self.fabric.num_nodes() + 1;
        for _ in 0..limit {
            if node == dst.node {
                return Ok(acc);
            }
            if !self.fabric.node(node).is_switch() {
                return Err(fail(format!(
                    "reached '{}', not the destination",
                    self.fabric.node(node).description
                )));
            }
            let out = self.tables.get(node, Lid(dlid)).ok_or_else(|| {
                fail(format!(
                    "no LFT entry at '{}'",
                    self.fabric.node(node).description
                ))
            })?;
            if out == 0 {
                return Err(fail(format!(
                    "'{}' forwards to its port 0",
                    self.fabric.node(node).description
                )));
            }
            node = self
                .link(PortRef { node, port: out }, &mut acc)
                .map_err(fail)?
                .node;
        }
        Err(fail("forwarding loop".to_string()))
    }

    /// Resolves one pair: SL, and MTU and rate as the minimum over the forward
    /// and the reverse walk.
    pub fn resolve(&self, slid: u16, dlid: u16) -> Result<Resolved, SaError> {
        let forward = self.walk(slid, dlid)?;
        let reverse = self.walk(dlid, slid)?;
        let sl = self.sls.map_or(0, |s| s.get(Lid(slid), Lid(dlid)));
        Ok(Resolved {
            slid,
            dlid,
            sl,
            mtu: forward.mtu.min(reverse.mtu),
            rate: min_rate(forward.rate, reverse.rate),
            forward,
            reverse,
        })
    }

    /// The LIDs of every CA port (one per port, LMC ignored), ascending.
    pub fn ca_lids(&self) -> Vec<u16> {
        let mut v: Vec<u16> = self
            .fabric
            .lid_ports()
            .filter(|(pr, _)| !self.fabric.node(pr.node).is_switch())
            .map(|(_, p)| p.lid.0)
            .collect();
        v.sort_unstable();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate::rate_gbps;
    use ibcloud_fabric::{FabricBuilder, Guid, LinkRate, LinkSpeed, LinkWidth, NodeKind, NodeSpec};

    /// Two leaves under one spine, two CAs per leaf; `slow` = the rate of
    /// leaf 1's uplink (the link every inter-leaf path crosses).
    fn small(slow: LinkRate) -> (Fabric, ForwardingTables) {
        let qdr = LinkRate::new(LinkWidth::X4, LinkSpeed::Qdr);
        let mut b = FabricBuilder::new();
        let sw = |b: &mut FabricBuilder, g, d: &str| {
            b.add_node(NodeSpec::new(NodeKind::Switch, Guid(g), 8, d))
                .unwrap()
        };
        let spine = sw(&mut b, 0x100, "spine");
        let l0 = sw(&mut b, 0x200, "leaf0");
        let l1 = sw(&mut b, 0x300, "leaf1");
        let pr = |node, port| PortRef { node, port };
        b.connect(pr(spine, 1), pr(l0, 1), qdr).unwrap();
        b.connect(pr(spine, 2), pr(l1, 1), slow).unwrap();
        for (i, leaf) in [(0u64, l0), (1, l0), (2, l1), (3, l1)] {
            let ca = b
                .add_node(NodeSpec::new(
                    NodeKind::Ca,
                    Guid(0x1000 + i),
                    1,
                    format!("h{i}"),
                ))
                .unwrap();
            b.connect(pr(ca, 1), pr(leaf, 2 + (i as u8 % 2)), qdr)
                .unwrap();
        }
        let mut f = b.build();
        ibcloud_fabric::lids::assign_lids(&mut f, &Default::default()).unwrap();
        let engine = ibcloud_routing::registry::engine("minhop", &Default::default()).unwrap();
        let t = engine.route(&f).unwrap().tables;
        (f, t)
    }

    fn lid_of(f: &Fabric, desc: &str) -> u16 {
        let (id, _) = f.iter_nodes().find(|(_, n)| n.description == desc).unwrap();
        f.port(PortRef { node: id, port: 1 }).unwrap().lid.0
    }

    #[test]
    fn homogeneous_fabric_gives_link_rate_and_default_mtu() {
        let qdr = LinkRate::new(LinkWidth::X4, LinkSpeed::Qdr);
        let (f, t) = small(qdr);
        let res = Resolver::new(&f, &t, None, MtuMap::default()).unwrap();
        let r = res.resolve(lid_of(&f, "h0"), lid_of(&f, "h3")).unwrap();
        assert_eq!(rate_gbps(r.rate), Some(40.0));
        assert_eq!(r.mtu, 4);
        assert_eq!(r.sl, 0);
        assert_eq!((r.forward.hops, r.reverse.hops), (4, 4));
        assert_eq!(
            res.resolve(lid_of(&f, "h0"), lid_of(&f, "h1"))
                .unwrap()
                .forward
                .hops,
            2
        );
        assert_eq!(
            res.resolve(lid_of(&f, "h0"), lid_of(&f, "h0"))
                .unwrap()
                .forward
                .hops,
            0
        );
        assert_eq!(res.ca_lids().len(), 4);
        let rec = r.record(18, true);
        assert_eq!(
            (rec.slid, rec.dlid, rec.mtu, rec.rate, rec.caching),
            (r.slid, r.dlid, 4, 7, true)
        );
    }

    #[test]
    fn a_slow_link_caps_only_the_paths_crossing_it() {
        let (f, t) = small(LinkRate::new(LinkWidth::X4, LinkSpeed::Sdr));
        let res = Resolver::new(&f, &t, None, MtuMap::default()).unwrap();
        let r = res.resolve(lid_of(&f, "h0"), lid_of(&f, "h2")).unwrap();
        assert_eq!(rate_gbps(r.rate), Some(10.0));
        let same_leaf = res.resolve(lid_of(&f, "h2"), lid_of(&f, "h3")).unwrap();
        assert_eq!(rate_gbps(same_leaf.rate), Some(40.0));
        // FDR (56) vs QDR (40): the code of the faster link is larger, the minimum is QDR.
        let (f, t) = small(LinkRate::new(LinkWidth::X4, LinkSpeed::Fdr));
        let res = Resolver::new(&f, &t, None, MtuMap::default()).unwrap();
        assert_eq!(
            rate_gbps(
                res.resolve(lid_of(&f, "h0"), lid_of(&f, "h2"))
                    .unwrap()
                    .rate
            ),
            Some(40.0)
        );
    }

    #[test]
    fn an_mtu_limit_on_one_end_caps_both_directions() {
        let (f, t) = small(LinkRate::new(LinkWidth::X4, LinkSpeed::Qdr));
        let (id, _) = f.iter_nodes().find(|(_, n)| n.description == "h3").unwrap();
        let mut m = MtuMap::default();
        m.ports.insert(PortRef { node: id, port: 1 }, 2);
        let res = Resolver::new(&f, &t, None, m).unwrap();
        assert_eq!(
            res.resolve(lid_of(&f, "h0"), lid_of(&f, "h3")).unwrap().mtu,
            2
        );
        assert_eq!(
            res.resolve(lid_of(&f, "h3"), lid_of(&f, "h0")).unwrap().mtu,
            2
        );
        assert_eq!(
            res.resolve(lid_of(&f, "h0"), lid_of(&f, "h2")).unwrap().mtu,
            4
        );
    }

    #[test]
    fn path_sls_are_reported() {
        let (f, t) = small(LinkRate::new(LinkWidth::X4, LinkSpeed::Qdr));
        let (a, b) = (lid_of(&f, "h0"), lid_of(&f, "h2"));
        let mut sls = PathSls::new(&[Lid(a), Lid(b)]);
        sls.set(Lid(a), Lid(b), 3);
        let res = Resolver::new(&f, &t, Some(&sls), MtuMap::default()).unwrap();
        assert_eq!(res.resolve(a, b).unwrap().sl, 3);
        assert_eq!(res.resolve(b, a).unwrap().sl, 0);
    }

    #[test]
    fn unknown_lids_and_missing_routes_are_errors() {
        let (f, t) = small(LinkRate::new(LinkWidth::X4, LinkSpeed::Qdr));
        let res = Resolver::new(&f, &t, None, MtuMap::default()).unwrap();
        let a = lid_of(&f, "h0");
        assert_eq!(res.resolve(a, 0xBFFE), Err(SaError::UnknownLid(0xBFFE)));
        let empty = ForwardingTables::new(&f);
        let res = Resolver::new(&f, &empty, None, MtuMap::default()).unwrap();
        assert!(matches!(
            res.resolve(a, lid_of(&f, "h3")),
            Err(SaError::NoRoute { .. })
        ));
    }
}
