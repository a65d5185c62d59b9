//! XGFT/PGFT fat-trees (Öhring et al.; Zahavi's PGFT), in textbook notation:
//! level 0 holds the compute nodes, level h the roots.
//!
//! `PGFT(h; m1..mh; w1..wh; p1..ph)`: a level-i node has m_i children
//! (1 ≤ i ≤ h), a level-(i−1) node has w_i parents, and p_i parallel links join
//! each connected pair across levels i−1 and i. XGFT is PGFT with every p_i = 1.
//!
//! A level-i node is labelled `(a_h … a_{i+1}; b_i … b_1)` with a_j < m_j and
//! b_j < w_j; it links to the level-(i+1) nodes `(a_h … a_{i+2}; b_{i+1} b_i … b_1)`
//! for every b_{i+1}, and is their child number a_{i+1}. Switch ports are
//! numbered down ports first (child a, parallel link k → port a·p + k + 1),
//! then up ports (parent b, link k → port m·p + b·p + k + 1).

use crate::error::{FabricError, TopologyError};
use crate::ids::{Guid, PortRef};
use crate::lids::{assign_lids, LidOptions};
use crate::model::{Fabric, FabricBuilder, LinkRate, NodeKind, NodeSpec};
use std::fmt;
use std::str::FromStr;

/// Vendor prefix of generated GUIDs: Mellanox's OUI 0x0002c9 in the top 24 bits.
const GUID_OUI: u64 = 0x0002_c900_0000_0000;
/// Type byte below the OUI: 0x02 switches, 0x03 channel adapters.
const GUID_SWITCH: u64 = 0x02 << 32;
const GUID_CA: u64 = 0x03 << 32;

/// Parameters of a PGFT (XGFT when every p is 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FatTreeParams {
    /// Switch levels.
    pub h: usize,
    /// m_1..m_h: children of a level-i node.
    pub m: Vec<u32>,
    /// w_1..w_h: parents of a level-(i−1) node.
    pub w: Vec<u32>,
    /// p_1..p_h: parallel links between connected nodes of levels i−1 and i.
    pub p: Vec<u32>,
    /// Switch port count (radix); ports beyond those in use stay unconnected.
    /// `None`: exactly the ports in use.
    pub radix: Option<u32>,
    /// Rate of every link.
    pub rate: LinkRate,
}

/// Saturating product, so absurd parameters fail validation instead of overflowing.
fn product(xs: &[u32]) -> u64 {
    xs.iter().fold(1u64, |acc, &x| acc.saturating_mul(x as u64))
}

impl FatTreeParams {
    /// An XGFT(h; m; w).
    pub fn xgft(m: &[u32], w: &[u32]) -> Self {
        Self::pgft(m, w, &vec![1; m.len()])
    }

    /// A PGFT(h; m; w; p).
    pub fn pgft(m: &[u32], w: &[u32], p: &[u32]) -> Self {
        Self {
            h: m.len(),
            m: m.to_vec(),
            w: w.to_vec(),
            p: p.to_vec(),
            radix: None,
            rate: LinkRate::default(),
        }
    }

    /// A k-ary-n-tree: k^n nodes, n·k^(n−1) switches of 2k ports.
    pub fn k_ary_n_tree(k: u32, n: usize) -> Self {
        let mut w = vec![k; n];
        w[0] = 1;
        Self {
            radix: Some(2 * k),
            ..Self::xgft(&vec![k; n], &w)
        }
    }

    /// Paper V's reversed notation `XGFT(n; m1..mn; w1..wn)` (roots at level 0,
    /// m_1 = children of a root, w_n = parents of a compute node): reverses both lists.
    pub fn from_roots_first(m: &[u32], w: &[u32]) -> Self {
        let rev = |v: &[u32]| v.iter().rev().copied().collect::<Vec<_>>();
        Self::xgft(&rev(m), &rev(w))
    }

    /// Sets the switch radix.
    pub fn with_radix(mut self, radix: u32) -> Self {
        self.radix = Some(radix);
        self
    }

    /// Sets the link rate.
    pub fn with_rate(mut self, rate: LinkRate) -> Self {
        self.rate = rate;
        self
    }

    /// Number of compute nodes: ∏ m_i.
    pub fn num_compute_nodes(&self) -> u64 {
        product(&self.m)
    }

    /// Nodes at level i (0 = compute nodes): ∏_{l>i} m_l · ∏_{l≤i} w_l.
    pub fn nodes_at_level(&self, i: usize) -> u64 {
        product(&self.m[i..]).saturating_mul(product(&self.w[..i]))
    }

    /// Number of switches.
    pub fn num_switches(&self) -> u64 {
        (1..=self.h).fold(0u64, |acc, i| acc.saturating_add(self.nodes_at_level(i)))
    }

    /// Ports used by a level-i node: m_i·p_i down plus w_{i+1}·p_{i+1} up
    /// (saturating at u32::MAX).
    pub fn ports_used(&self, i: usize) -> u32 {
        let down = if i == 0 {
            0
        } else {
            self.m[i - 1] as u64 * self.p[i - 1] as u64
        };
        let up = if i == self.h {
            0
        } else {
            self.w[i] as u64 * self.p[i] as u64
        };
        u32::try_from(down + up).unwrap_or(u32::MAX)
    }

    /// Checks the parameters describe a buildable tree within the LID space.
    pub fn validate(&self) -> Result<(), TopologyError> {
        let bad = |msg: String| Err(TopologyError::InvalidParameters(msg));
        if self.h == 0 {
            return bad("a fat-tree needs at least one switch level".into());
        }
        if self.m.len() != self.h || self.w.len() != self.h || self.p.len() != self.h {
            return bad(format!(
                "h = {} but m, w and p have {}, {} and {} entries",
                self.h,
                self.m.len(),
                self.w.len(),
                self.p.len()
            ));
        }
        if self.m.iter().chain(&self.w).chain(&self.p).any(|&x| x == 0) {
            return bad("every m, w and p must be at least 1".into());
        }
        let total = self.num_compute_nodes().saturating_add(self.num_switches());
        if total > 49_151 {
            return bad(format!(
                "{total} nodes and switches would need more than the 49151 unicast LIDs"
            ));
        }
        if self.ports_used(0) > 254 {
            return bad(format!(
                "compute nodes would need {} ports",
                self.ports_used(0)
            ));
        }
        for i in 1..=self.h {
            let used = self.ports_used(i);
            let radix = self.radix.unwrap_or(used);
            if used > radix || radix > 254 {
                return bad(format!(
                    "level-{i} switches need {used} ports but the radix is {radix} (at most 254)"
                ));
            }
        }
        Ok(())
    }

    /// Builds the fabric with packed LIDs (CAs first, so hosts get LIDs
    /// 1..=N and switches N+1..=N+S).
    ///
    /// Node order: compute nodes by label, then switches level by level from the
    /// leaves up. GUIDs, descriptions and port numbers depend only on the
    /// parameters: the same parameters give byte-identical files.
    ///
    /// ```
    /// use ibcloud_fabric::generate::FatTreeParams;
    /// let f = FatTreeParams::xgft(&[4, 4, 3], &[1, 2, 3]).build()?;
    /// assert_eq!((f.cas().count(), f.switches().count()), (48, 24));
    /// # Ok::<(), ibcloud_fabric::FabricError>(())
    /// ```
    pub fn build(&self) -> Result<Fabric, FabricError> {
        self.validate()?;
        let h = self.h;
        let counts: Vec<u64> = (0..=h).map(|i| self.nodes_at_level(i)).collect();
        let total_ports: u64 = (0..=h)
            .map(|i| {
                counts[i]
                    * (self
                        .radix
                        .unwrap_or(self.ports_used(i))
                        .max(self.ports_used(i)) as u64
                        + 1)
            })
            .sum();
        let mut b =
            FabricBuilder::with_capacity(counts.iter().sum::<u64>() as usize, total_ports as usize);
        let mut ids = Vec::with_capacity(h + 1);
        for (level, &count) in counts.iter().enumerate() {
            let mut level_ids = Vec::with_capacity(count as usize);
            for j in 0..count {
                let spec = if level == 0 {
                    NodeSpec::new(
                        NodeKind::Ca,
                        // Port GUIDs are node GUID + port (≤ 254), so hosts sit 256 apart.
                        Guid(GUID_OUI | GUID_CA | (j + 1) << 8),
                        self.ports_used(0),
                        format!("hca-{:05} HCA-1", j + 1),
                    )
                } else {
                    let mut s = NodeSpec::new(
                        NodeKind::Switch,
                        Guid(GUID_OUI | GUID_SWITCH | (level as u64) << 24 | (j + 1)),
                        self.radix.unwrap_or(self.ports_used(level)),
                        format!("sw-L{level}-{:04}", j + 1),
                    );
                    s.rank = Some((h - level) as u8);
                    s
                };
                level_ids.push(b.add_node(spec)?);
            }
            ids.push(level_ids);
        }
        for i in 0..h {
            self.connect_level(&mut b, &ids[i], &ids[i + 1], i)?;
        }
        let mut fabric = b.build();
        assign_lids(&mut fabric, &LidOptions::default())?;
        Ok(fabric)
    }

    /// Links every level-i node to its w_{i+1} parents at level i+1.
    fn connect_level(
        &self,
        b: &mut FabricBuilder,
        lower: &[crate::NodeId],
        upper: &[crate::NodeId],
        i: usize,
    ) -> Result<(), TopologyError> {
        // Index of a level-i node: digits (a_h..a_{i+1}) then (b_i..b_1), most significant first.
        let b_space = product(&self.w[..i]); // combinations of b_i..b_1
        let m_up = self.m[i] as u64; // children per level-(i+1) node = range of a_{i+1}
        let w_up = self.w[i] as u64; // parents per level-i node
        let p = self.p[i];
        let down_ports_below = if i == 0 {
            0
        } else {
            self.m[i - 1] * self.p[i - 1]
        };
        for (idx, &child) in lower.iter().enumerate() {
            let idx = idx as u64;
            let b_low = idx % b_space;
            let a_part = idx / b_space; // digits a_h..a_{i+1}
            let a_next = a_part % m_up; // a_{i+1}
            let a_rest = a_part / m_up; // a_h..a_{i+2}
            for parent_b in 0..w_up {
                // Parent label: (a_h..a_{i+2}; b_{i+1}=parent_b, b_i..b_1).
                let parent_idx = (a_rest * w_up + parent_b) * b_space + b_low;
                let parent = upper[parent_idx as usize];
                for k in 0..p {
                    let up_port = down_ports_below + parent_b as u32 * p + k + 1;
                    let down_port = a_next as u32 * p + k + 1;
                    b.connect(
                        PortRef::new(child, up_port as u8),
                        PortRef::new(parent, down_port as u8),
                        self.rate,
                    )?;
                }
            }
        }
        Ok(())
    }
}

fn join(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

impl fmt::Display for FatTreeParams {
    /// `XGFT(3;4,4,3;1,2,3)` or `PGFT(2;4,4;1,2;1,2)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.p.iter().all(|&p| p == 1) {
            write!(f, "XGFT({};{};{})", self.h, join(&self.m), join(&self.w))
        } else {
            write!(
                f,
                "PGFT({};{};{};{})",
                self.h,
                join(&self.m),
                join(&self.w),
                join(&self.p)
            )
        }
    }
}

impl FromStr for FatTreeParams {
    type Err = TopologyError;

    /// Parses `XGFT(h;m..;w..)`, `PGFT(h;m..;w..;p..)` (textbook order) or
    /// `K-ary-N` / `K-ary-N-tree`.
    fn from_str(s: &str) -> Result<Self, TopologyError> {
        let bad = |why: &str| TopologyError::InvalidParameters(format!("'{s}': {why}"));
        let t = s.trim();
        let lower = t.to_ascii_lowercase();
        if let Some((k, rest)) = lower.split_once("-ary-") {
            let n = rest.trim_end_matches("-tree");
            let k: u32 = k
                .parse()
                .map_err(|_| bad("K in K-ary-N must be a number"))?;
            let n: usize = n
                .parse()
                .map_err(|_| bad("N in K-ary-N must be a number"))?;
            if k == 0 || n == 0 {
                return Err(bad("K and N must be at least 1"));
            }
            return Ok(Self::k_ary_n_tree(k, n));
        }
        let (kind, body) = lower
            .split_once('(')
            .ok_or_else(|| bad("expected XGFT(h;m1,..;w1,..) or PGFT(h;m..;w..;p..)"))?;
        let body = body.strip_suffix(')').ok_or_else(|| bad("missing ')'"))?;
        let parts: Vec<&str> = body.split(';').map(str::trim).collect();
        let want = match kind.trim() {
            "xgft" => 3,
            "pgft" => 4,
            _ => return Err(bad("expected XGFT or PGFT")),
        };
        if parts.len() != want {
            return Err(bad(&format!(
                "expected {want} ';'-separated fields, found {}",
                parts.len()
            )));
        }
        let h: usize = parts[0].parse().map_err(|_| bad("h must be a number"))?;
        let list = |x: &str| -> Result<Vec<u32>, TopologyError> {
            x.split(',')
                .map(|v| {
                    v.trim()
                        .parse()
                        .map_err(|_| bad(&format!("'{v}' is not a number")))
                })
                .collect()
        };
        let (m, w) = (list(parts[1])?, list(parts[2])?);
        let p = if want == 4 {
            list(parts[3])?
        } else {
            vec![1; m.len()]
        };
        let params = Self {
            h,
            m,
            w,
            p,
            radix: None,
            rate: LinkRate::default(),
        };
        params.validate()?;
        Ok(params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_iv_fig10_counts() {
        let t = FatTreeParams::xgft(&[4, 4, 3], &[1, 2, 3]);
        assert_eq!(t.num_compute_nodes(), 48);
        assert_eq!(
            (1..=3).map(|i| t.nodes_at_level(i)).collect::<Vec<_>>(),
            vec![12, 6, 6]
        );
    }

    #[test]
    fn every_port_is_used_as_the_formulas_say() {
        let t = FatTreeParams::pgft(&[3, 2, 2], &[1, 2, 2], &[1, 2, 1]);
        let f = t.build().unwrap();
        for (id, n) in f.iter_nodes() {
            let level = if n.is_switch() {
                t.h - n.rank.unwrap() as usize
            } else {
                0
            };
            assert_eq!(
                f.neighbors(id).count() as u32,
                t.ports_used(level),
                "{}",
                n.description
            );
        }
        assert!(f.lid_table().is_ok());
    }

    #[test]
    fn parallel_links_join_the_same_pair() {
        let f = FatTreeParams::pgft(&[2, 2], &[1, 2], &[1, 3])
            .build()
            .unwrap();
        let leaf = f.switches().next().unwrap();
        let ups: Vec<_> = f
            .neighbors(leaf)
            .filter(|(_, r)| f.node(r.node).is_switch())
            .collect();
        assert_eq!(ups.len(), 6);
        assert_eq!(ups[0].1.node, ups[2].1.node);
        assert_ne!(ups[0].1.node, ups[3].1.node);
    }

    #[test]
    fn spec_strings_parse_and_print() {
        let t: FatTreeParams = "XGFT(3;4,4,3;1,2,3)".parse().unwrap();
        assert_eq!(t.to_string(), "XGFT(3;4,4,3;1,2,3)");
        let p: FatTreeParams = "pgft(2; 4,4; 1,2; 1,2)".parse().unwrap();
        assert_eq!(p.p, vec![1, 2]);
        assert_eq!(
            "4-ary-3-tree"
                .parse::<FatTreeParams>()
                .unwrap()
                .num_switches(),
            48
        );
        for bad in [
            "XGFT(2;4;1,2)",
            "XGFT(2;4,x;1,2)",
            "tree(2;1;1)",
            "XGFT(2;4,4;1,0)",
            "0-ary-2",
        ] {
            assert!(bad.parse::<FatTreeParams>().is_err(), "{bad}");
        }
    }

    #[test]
    fn guids_carry_the_vendor_prefix_and_never_collide() {
        let f = FatTreeParams::xgft(&[2, 2], &[17, 1]).build().unwrap();
        let mut port_guids: Vec<u64> = f.lid_ports().map(|(_, p)| p.guid.0).collect();
        let n = port_guids.len();
        port_guids.sort_unstable();
        port_guids.dedup();
        assert_eq!(port_guids.len(), n);
        let leaf = f.switches().next().unwrap();
        assert_eq!(f.node(leaf).guid, Guid(0x0002_c902_0100_0001));
        assert_eq!(
            f.node(f.cas().next().unwrap()).guid,
            Guid(0x0002_c903_0000_0100)
        );
        assert!(f.nodes().iter().all(|n| n.guid.0 >> 40 == 0x0002c9));
    }

    #[test]
    fn absurd_parameters_fail_without_overflow() {
        let t = FatTreeParams::pgft(&[u32::MAX, u32::MAX], &[u32::MAX, 2], &[u32::MAX, 3]);
        assert!(t.validate().is_err());
        assert_eq!(t.ports_used(1), u32::MAX);
    }

    #[test]
    fn over_radix_and_lid_overflow_are_refused() {
        assert!(FatTreeParams::k_ary_n_tree(18, 2)
            .with_radix(30)
            .build()
            .is_err());
        let err = FatTreeParams::xgft(&[100, 100, 10], &[1, 1, 1])
            .build()
            .unwrap_err();
        assert!(err.to_string().contains("49151"));
    }
}
