//! The partition model: IB partitions (P_Keys with full and limited
//! membership, members by port GUID), the per-partition isolation policy of
//! pFTree-Ext (seed 002 Table 1) and the global strict / best-effort mode,
//! and the resolution of a partition configuration against a fabric.
//!
//! A [`PartitionConfig`] is what OpenSM's `partitions.conf` says (read and
//! written by [`crate::formats::partitions_conf`]); [`PartitionConfig::resolve`]
//! turns it into [`Partitions`]: per partition its P_Key, policy, SL and the
//! CA ports that are members, with every problem (unknown GUIDs, a port in
//! two routed partitions) named.
//!
//! ```
//! use ibcloud_fabric::partitions::{Isolation, Membership, PartitionConfig};
//! let text = "Default=0x7fff : ALL=full ;\n\
//!             tenant1=0x0001, isolation=phy : 0x0002c9000000000a=full ;\n";
//! let conf = ibcloud_fabric::formats::partitions_conf::parse(text, "partitions.conf")?;
//! assert_eq!(conf.partitions.len(), 2);
//! let t = &conf.partitions[1];
//! assert_eq!((t.pkey, t.isolation), (Some(1), Some(Isolation::Phy)));
//! assert_eq!(t.members[0].membership, Some(Membership::Full));
//! # Ok::<(), ibcloud_fabric::formats::partitions_conf::PartitionsConfError>(())
//! ```

use crate::ids::{Guid, Lid, PortRef};
use crate::model::{Fabric, NodeKind};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// The default partition's P_Key (15 bits).
pub const DEFAULT_PKEY: u16 = 0x7FFF;

/// How a port belongs to a partition (the P_Key's top bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Membership {
    /// Talks only to full members (P_Key top bit 0).
    Limited,
    /// Talks to every member (P_Key top bit 1).
    Full,
    /// Both P_Keys (OpenSM's `both`, with `allow_both_pkeys`).
    Both,
}

impl Membership {
    /// The keyword in partitions.conf.
    pub fn keyword(self) -> &'static str {
        match self {
            Self::Limited => "limited",
            Self::Full => "full",
            Self::Both => "both",
        }
    }

    /// Whether this membership carries the full P_Key.
    pub fn is_full(self) -> bool {
        matches!(self, Self::Full | Self::Both)
    }
}

/// pFTree-Ext's per-partition isolation policy (seed 002 Table 1), in
/// increasing priority: `def` < `vlane` < `phy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Isolation {
    /// Best-effort isolation within available resources (base pFTree).
    #[default]
    Def,
    /// May share links with other partitions, but on its own VL.
    Vlane,
    /// Shares no link with any other partition.
    Phy,
}

impl Isolation {
    /// The value written in partitions.conf (`isolation=phy` …).
    pub fn keyword(self) -> &'static str {
        match self {
            Self::Phy => "phy",
            Self::Vlane => "vlane",
            Self::Def => "def",
        }
    }
}

impl FromStr for Isolation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "phy" | "phy-isolation" | "phy_isolation" => Ok(Self::Phy),
            "vlane" | "vlane-isolation" | "vlane_isolation" | "vl-isolation" => Ok(Self::Vlane),
            "def" | "def-isolation" | "def_isolation" | "default" => Ok(Self::Def),
            other => Err(format!(
                "unknown isolation policy '{other}' (expected phy, vlane or def)"
            )),
        }
    }
}

impl fmt::Display for Isolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

/// pFTree-Ext's global parameter: what happens when a policy cannot be met.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum GlobalPolicy {
    /// Routing fails.
    Strict,
    /// Routing continues with best-effort isolation and warns.
    #[default]
    BestEffort,
}

impl GlobalPolicy {
    /// The value written in partitions.conf (`global_isolation=strict`).
    pub fn keyword(self) -> &'static str {
        match self {
            Self::Strict => "strict",
            Self::BestEffort => "best-effort",
        }
    }
}

impl FromStr for GlobalPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "strict" => Ok(Self::Strict),
            "best-effort" | "best_effort" | "besteffort" => Ok(Self::BestEffort),
            other => Err(format!(
                "unknown global isolation '{other}' (expected strict or best-effort)"
            )),
        }
    }
}

impl fmt::Display for GlobalPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

/// Who a port specifier names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemberSpec {
    /// One end port by port GUID.
    Guid(Guid),
    /// `ALL`: every end port.
    All,
    /// `ALL_CAS`.
    AllCas,
    /// `ALL_SWITCHES` (switch port 0).
    AllSwitches,
    /// `ALL_ROUTERS`.
    AllRouters,
    /// `SELF`: the SM's port.
    SelfPort,
}

impl fmt::Display for MemberSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Guid(g) => write!(f, "0x{:016x}", g.0),
            Self::All => f.write_str("ALL"),
            Self::AllCas => f.write_str("ALL_CAS"),
            Self::AllSwitches => f.write_str("ALL_SWITCHES"),
            Self::AllRouters => f.write_str("ALL_ROUTERS"),
            Self::SelfPort => f.write_str("SELF"),
        }
    }
}

/// One port specifier of a partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// Who.
    pub spec: MemberSpec,
    /// `=full|limited|both`; `None`: the partition's `defmember`.
    pub membership: Option<Membership>,
    /// 1-based line of the specifier in its file (0 when built in code).
    pub line: usize,
}

/// One partition as the configuration states it (definitions with the same
/// P_Key are merged, as OpenSM merges them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// Name (may be empty).
    pub name: String,
    /// The 15-bit P_Key; `None`: OpenSM generates one.
    pub pkey: Option<u16>,
    /// `defmember=`; OpenSM's default is limited.
    pub defmember: Option<Membership>,
    /// The `ipoib` flag.
    pub ipoib: bool,
    /// The `sl=` flag (the partition's SL when OpenSM runs with QoS).
    pub sl: Option<u8>,
    /// Our `isolation=` flag (OpenSM ignores unknown flags).
    pub isolation: Option<Isolation>,
    /// Other flags (`mtu=`, `rate=`, `indx0`, …) kept verbatim.
    pub other_flags: Vec<(String, Option<String>)>,
    /// `mgid=…` lines kept verbatim (without `mgid=`).
    pub mgroups: Vec<String>,
    /// Port specifiers in file order.
    pub members: Vec<Member>,
    /// 1-based line of the (first) definition; 0 when built in code.
    pub line: usize,
}

impl Partition {
    /// A partition with a P_Key and no members.
    pub fn new(name: impl Into<String>, pkey: u16) -> Self {
        Self {
            name: name.into(),
            pkey: Some(pkey & 0x7FFF),
            defmember: None,
            ipoib: false,
            sl: None,
            isolation: None,
            other_flags: Vec::new(),
            mgroups: Vec::new(),
            members: Vec::new(),
            line: 0,
        }
    }

    /// Adds one port GUID with a membership.
    pub fn with_member(mut self, guid: Guid, membership: Membership) -> Self {
        self.members.push(Member {
            spec: MemberSpec::Guid(guid),
            membership: Some(membership),
            line: 0,
        });
        self
    }

    /// Sets the isolation policy.
    pub fn with_isolation(mut self, isolation: Isolation) -> Self {
        self.isolation = Some(isolation);
        self
    }

    /// Whether this is the default partition (P_Key 0x7FFF).
    pub fn is_default(&self) -> bool {
        self.pkey == Some(DEFAULT_PKEY)
    }
}

/// A whole partition configuration.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PartitionConfig {
    /// Partitions in order of first definition.
    pub partitions: Vec<Partition>,
    /// Our `global_isolation=` flag (on any partition line; the writer puts
    /// it on the default partition).
    pub global: Option<GlobalPolicy>,
}

/// A partition resolved against a fabric.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedPartition {
    /// Index in the configuration.
    pub index: usize,
    /// Name.
    pub name: String,
    /// 15-bit P_Key (generated ones filled in).
    pub pkey: u16,
    /// Policy (`def` when unset).
    pub isolation: Isolation,
    /// The SL the configuration gives (`sl=`), if any.
    pub sl: Option<u8>,
    /// CA (and router) member ports: port, port GUID, LID, membership, sorted by GUID.
    pub members: Vec<(PortRef, Guid, Lid, Membership)>,
}

impl ResolvedPartition {
    /// Whether `a` may talk to `b` in this partition (at least one full member).
    pub fn may_talk(&self, a: Membership, b: Membership) -> bool {
        a.is_full() || b.is_full()
    }
}

/// A configuration resolved against a fabric: the partitions that route
/// (every partition except the default one), members as CA ports.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Partitions {
    /// Non-default partitions in configuration order.
    pub partitions: Vec<ResolvedPartition>,
    /// The global policy (best-effort when the file says nothing).
    pub global: GlobalPolicy,
    /// What was relaxed or ignored, in words (unknown GUIDs, overlaps …).
    pub warnings: Vec<String>,
}

/// Why a configuration does not fit a fabric (strict reading).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PartitionError {
    /// A member GUID that is no end port of the fabric.
    #[error(
        "partition '{partition}' (line {line}): port GUID {guid} is not an end port of the fabric"
    )]
    UnknownMember {
        /// Partition name or P_Key.
        partition: String,
        /// Line of the specifier.
        line: usize,
        /// The GUID.
        guid: Guid,
    },
    /// A CA port in two partitions that are routed apart.
    #[error("port GUID {guid} is a member of both '{first}' and '{second}'; pFTree routes each port for one partition (the first is used in best-effort mode)")]
    Overlap {
        /// The port.
        guid: Guid,
        /// First partition.
        first: String,
        /// Second partition.
        second: String,
    },
    /// Two partitions with the same P_Key under different definitions that cannot merge.
    #[error("{0}")]
    Invalid(String),
}

impl PartitionConfig {
    /// The partition with this P_Key.
    pub fn by_pkey(&self, pkey: u16) -> Option<&Partition> {
        self.partitions
            .iter()
            .find(|p| p.pkey == Some(pkey & 0x7FFF))
    }

    /// Resolves the configuration against `fabric`: ALL-style keywords expand
    /// to end ports, P_Keys left to OpenSM get the lowest free value (as
    /// OpenSM's `generate_pkey`, which counts up from 1), `SELF` is ignored
    /// (no SM port in a model). The default partition is not returned: it
    /// carries management traffic only.
    ///
    /// With `strict`, unknown member GUIDs and CA ports in two non-default
    /// partitions are errors; otherwise they become warnings (the unknown
    /// GUID is skipped, as OpenSM skips it; an overlapping port stays in both
    /// partitions for the validator, and routing uses its first one).
    pub fn resolve(&self, fabric: &Fabric, strict: bool) -> Result<Partitions, PartitionError> {
        let mut used: Vec<u16> = self.partitions.iter().filter_map(|p| p.pkey).collect();
        let mut warnings = Vec::new();
        let mut out = Vec::new();
        let end_ports: Vec<(PortRef, Guid, Lid, NodeKind)> = fabric
            .lid_ports()
            .map(|(r, p)| (r, p.guid, p.lid, fabric.node(r.node).kind))
            .collect();
        let by_guid: std::collections::HashMap<Guid, usize> = end_ports
            .iter()
            .enumerate()
            .map(|(i, e)| (e.1, i))
            .collect();
        for (index, p) in self.partitions.iter().enumerate() {
            let pkey = match p.pkey {
                Some(k) => k,
                None => {
                    let k = (1..DEFAULT_PKEY).find(|k| !used.contains(k)).unwrap_or(1);
                    used.push(k);
                    k
                }
            };
            if pkey == DEFAULT_PKEY {
                continue;
            }
            let label = if p.name.is_empty() {
                format!("0x{pkey:04x}")
            } else {
                p.name.clone()
            };
            let def = p.defmember.unwrap_or(Membership::Limited);
            let mut members: BTreeMap<Guid, (PortRef, Lid, Membership)> = BTreeMap::new();
            let mut add = |r: PortRef, g: Guid, l: Lid, m: Membership| {
                let e = members.entry(g).or_insert((r, l, m));
                if e.2 != m {
                    e.2 = if e.2.is_full() || m.is_full() {
                        if e.2 == Membership::Limited || m == Membership::Limited {
                            Membership::Both
                        } else {
                            Membership::Full
                        }
                    } else {
                        Membership::Limited
                    };
                }
            };
            for m in &p.members {
                let ms = m.membership.unwrap_or(def);
                let kinds: &[NodeKind] = match m.spec {
                    MemberSpec::Guid(g) => {
                        match by_guid.get(&g).map(|&i| &end_ports[i]) {
                            Some(&(r, g, l, kind)) if kind != NodeKind::Switch => add(r, g, l, ms),
                            Some(_) => {}
                            None => {
                                let e = PartitionError::UnknownMember {
                                    partition: label.clone(),
                                    line: m.line,
                                    guid: g,
                                };
                                if strict {
                                    return Err(e);
                                }
                                warnings.push(format!("{e}; skipped"));
                            }
                        }
                        continue;
                    }
                    MemberSpec::All => &[NodeKind::Ca, NodeKind::Router],
                    MemberSpec::AllCas => &[NodeKind::Ca],
                    MemberSpec::AllRouters => &[NodeKind::Router],
                    MemberSpec::AllSwitches | MemberSpec::SelfPort => &[],
                };
                for &(r, g, l, kind) in &end_ports {
                    if kinds.contains(&kind) {
                        add(r, g, l, ms);
                    }
                }
            }
            out.push(ResolvedPartition {
                index,
                name: label,
                pkey,
                isolation: p.isolation.unwrap_or_default(),
                sl: p.sl,
                members: members
                    .into_iter()
                    .map(|(g, (r, l, m))| (r, g, l, m))
                    .collect(),
            });
        }
        // Overlaps between routed partitions.
        let mut first: BTreeMap<Guid, usize> = BTreeMap::new();
        for (i, p) in out.iter().enumerate() {
            for &(_, g, _, _) in &p.members {
                if let Some(&j) = first.get(&g) {
                    let e = PartitionError::Overlap {
                        guid: g,
                        first: out[j].name.clone(),
                        second: p.name.clone(),
                    };
                    if strict {
                        return Err(e);
                    }
                    warnings.push(e.to_string());
                } else {
                    first.insert(g, i);
                }
            }
        }
        Ok(Partitions {
            partitions: out,
            global: self.global.unwrap_or_default(),
            warnings,
        })
    }
}

impl Partitions {
    /// For every CA port (by port GUID), the index of the first partition it
    /// belongs to: the partition pFTree routes it for.
    pub fn home(&self) -> BTreeMap<Guid, usize> {
        let mut home = BTreeMap::new();
        for (i, p) in self.partitions.iter().enumerate() {
            for &(_, g, _, _) in &p.members {
                home.entry(g).or_insert(i);
            }
        }
        home
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::FatTreeParams;
    use crate::lids::{assign_lids, LidOptions};

    fn fabric() -> Fabric {
        let mut f = FatTreeParams::k_ary_n_tree(2, 2).build().unwrap();
        assign_lids(&mut f, &LidOptions::default()).unwrap();
        f
    }

    #[test]
    fn resolve_expands_all_and_skips_default() {
        let f = fabric();
        let guids: Vec<Guid> = f
            .lid_ports()
            .filter(|(r, _)| f.node(r.node).kind == NodeKind::Ca)
            .map(|(_, p)| p.guid)
            .collect();
        let mut conf = PartitionConfig::default();
        let mut d = Partition::new("Default", DEFAULT_PKEY);
        d.members.push(Member {
            spec: MemberSpec::All,
            membership: Some(Membership::Full),
            line: 1,
        });
        conf.partitions.push(d);
        conf.partitions.push(
            Partition::new("a", 1)
                .with_member(guids[0], Membership::Full)
                .with_member(guids[1], Membership::Limited)
                .with_isolation(Isolation::Phy),
        );
        let r = conf.resolve(&f, true).unwrap();
        assert_eq!(r.partitions.len(), 1);
        assert_eq!(r.partitions[0].members.len(), 2);
        assert_eq!(r.partitions[0].isolation, Isolation::Phy);
    }

    #[test]
    fn unknown_and_overlap_are_errors_when_strict_warnings_otherwise() {
        let f = fabric();
        let g = f
            .lid_ports()
            .find(|(r, _)| f.node(r.node).kind == NodeKind::Ca)
            .unwrap()
            .1
            .guid;
        let mut conf = PartitionConfig::default();
        conf.partitions
            .push(Partition::new("a", 1).with_member(Guid(0xdead), Membership::Full));
        assert!(matches!(
            conf.resolve(&f, true),
            Err(PartitionError::UnknownMember { .. })
        ));
        assert_eq!(conf.resolve(&f, false).unwrap().warnings.len(), 1);
        conf.partitions = vec![
            Partition::new("a", 1).with_member(g, Membership::Full),
            Partition::new("b", 2).with_member(g, Membership::Full),
        ];
        assert!(matches!(
            conf.resolve(&f, true),
            Err(PartitionError::Overlap { .. })
        ));
        let r = conf.resolve(&f, false).unwrap();
        assert_eq!(r.home()[&g], 0);
    }

    #[test]
    fn policies_order_and_parse() {
        assert!(Isolation::Phy > Isolation::Vlane && Isolation::Vlane > Isolation::Def);
        assert_eq!("vlane-isolation".parse::<Isolation>(), Ok(Isolation::Vlane));
        assert!("x".parse::<Isolation>().is_err());
        assert_eq!(
            "best-effort".parse::<GlobalPolicy>(),
            Ok(GlobalPolicy::BestEffort)
        );
    }
}
