//! Which pFTree: the three engines (base, -Ext, -Wt) and the switches for
//! the reference's decisions D1–D5 on the printed pseudocode (E §2.3), so
//! every result can say which reading produced it.

use std::fmt;

/// The engine family member.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Flavor {
    /// Base pFTree: partition marks break ties between equally loaded ports.
    Base,
    /// pFTree-Ext: per-partition isolation policies, strict / best-effort.
    Ext,
    /// pFTree-Wt: loads are sums of node weights.
    Wt,
}

impl Flavor {
    /// Registry name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Base => "pftree",
            Self::Ext => "pftree-ext",
            Self::Wt => "pftree-wt",
        }
    }
}

/// Switches between the corrected algorithms (all `false`, the default) and
/// the literal printed pseudocode of seed 002.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PftreeVariant {
    /// D2: mark a switch with a P_Key only when it carries no mark yet (as
    /// printed) instead of always adding the P_Key to its mark set.
    pub literal_marking: bool,
    /// D3(a): exclude only switches marked by a partition of *higher* policy,
    /// and not in the preferred-mark branch (as printed), instead of the
    /// guaranteeing rule (a `phy` node avoids every switch another partition
    /// marked; other nodes avoid switches a `phy` partition marked).
    pub literal_exclusion: bool,
    /// Route leaf by leaf as printed, instead of routing the `phy` nodes of
    /// all leaves first (D3(b)).
    pub leaf_by_leaf: bool,
    /// Alg. 2's printed `return` (stop ordering at the first leaf with no
    /// more nodes than up-ports) instead of `continue`.
    pub literal_alg2_return: bool,
    /// Alg. 5: also give `def` partitions that share links a VL of their own
    /// when VLs are left (never fails). pFTree and pFTree-Wt always do this.
    pub vl_for_def: bool,
    /// Route each leaf's nodes in port order, without Alg. 2's ordering:
    /// marks alone break ties (the base pFTree of CCGrid 2015 as seed 002
    /// summarises it; an option to explore the seed's pFTree numbers).
    pub marks_only: bool,
    /// Route each leaf's nodes grouped by partition (a stable sort by
    /// partition, routed nodes first), without Alg. 2's interleaving:
    /// balance first, marks break ties. A reading of "order the nodes on
    /// each leaf by partition" (E §2.2 step 2) that puts a partition's first
    /// nodes on separate up-ports; it reproduces the maxima of seed 002's
    /// Table 4 pFTree column (docs/reproductions/pftree.md).
    pub grouped: bool,
}

impl PftreeVariant {
    /// Every switch on the printed reading.
    pub fn literal() -> Self {
        Self {
            literal_marking: true,
            literal_exclusion: true,
            leaf_by_leaf: true,
            literal_alg2_return: true,
            vl_for_def: false,
            marks_only: false,
            grouped: false,
        }
    }

    /// `corrected`, `literal`, or the switches that are on.
    pub fn label(&self) -> String {
        if *self == Self::default() {
            return "corrected".into();
        }
        if *self == Self::literal() {
            return "literal".into();
        }
        let mut on = Vec::new();
        for (b, n) in [
            (self.literal_marking, "literal-marking"),
            (self.literal_exclusion, "literal-exclusion"),
            (self.leaf_by_leaf, "leaf-by-leaf"),
            (self.literal_alg2_return, "alg2-return"),
            (self.vl_for_def, "vl-for-def"),
            (self.marks_only, "marks-only"),
            (self.grouped, "grouped"),
        ] {
            if b {
                on.push(n);
            }
        }
        on.join("+")
    }
}

impl fmt::Display for PftreeVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(PftreeVariant::default().label(), "corrected");
        assert_eq!(PftreeVariant::literal().label(), "literal");
        let v = PftreeVariant {
            vl_for_def: true,
            ..Default::default()
        };
        assert_eq!(v.to_string(), "vl-for-def");
    }
}
