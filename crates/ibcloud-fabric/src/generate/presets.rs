//! Named fabrics from the reference documents (see docs/topologies.md).

use super::fat_tree::FatTreeParams;
use crate::error::TopologyError;

/// A named fabric with where it comes from.
#[derive(Clone, Debug)]
pub struct Preset {
    /// Name used on the command line.
    pub name: &'static str,
    /// Where the papers use it.
    pub source: &'static str,
    /// Its parameters.
    pub params: FatTreeParams,
}

fn xgft(m: &[u32], w: &[u32], radix: u32) -> FatTreeParams {
    FatTreeParams::xgft(m, w).with_radix(radix)
}

/// Every preset, smallest family first.
pub fn presets() -> Vec<Preset> {
    let pv = |m: &[u32], w: &[u32], radix| FatTreeParams::from_roots_first(m, w).with_radix(radix);
    vec![
        Preset {
            name: "ft324",
            source: "Papers II/V: 36-port 2-level, 324 nodes / 36 switches",
            params: xgft(&[18, 18], &[1, 18], 36),
        },
        Preset {
            name: "ft648",
            source: "Papers II/V: 36-port 2-level, 648 nodes / 54 switches",
            params: xgft(&[18, 36], &[1, 18], 36),
        },
        Preset {
            name: "ft5832",
            source: "Papers II/V: 36-port 3-level (18-ary-3), 5,832 nodes / 972 switches",
            params: xgft(&[18, 18, 18], &[1, 18, 18], 36),
        },
        Preset {
            name: "ft11664",
            source: "Papers II/V: 36-port full 3-level, 11,664 nodes / 1,620 switches",
            params: xgft(&[18, 18, 36], &[1, 18, 18], 36),
        },
        Preset {
            name: "ft20736",
            source: "Paper V Table 3: 4-level 12-ary-4-tree, 20,736 nodes / 6,912 switches",
            params: FatTreeParams::k_ary_n_tree(12, 4),
        },
        Preset {
            name: "ft27648",
            source: "48-port full 3-level, 27,648 nodes / 2,880 switches",
            params: xgft(&[24, 24, 48], &[1, 24, 24], 48),
        },
        Preset {
            name: "4-ary-2-full",
            source: "Paper V Table 4: XGFT(2;8,4;4,1), 32 / 12",
            params: pv(&[8, 4], &[4, 1], 8),
        },
        Preset {
            name: "8-ary-2",
            source: "Paper V Table 4: XGFT(2;8,8;8,1), 64 / 16",
            params: pv(&[8, 8], &[8, 1], 16),
        },
        Preset {
            name: "4-ary-3-full",
            source: "Paper V Table 4: XGFT(3;8,4,4;4,4,1), 128 / 80",
            params: pv(&[8, 4, 4], &[4, 4, 1], 8),
        },
        Preset {
            name: "16-ary-2",
            source: "Paper V Table 4: XGFT(2;16,16;16,1), 256 / 32",
            params: pv(&[16, 16], &[16, 1], 32),
        },
        Preset {
            name: "8-ary-3",
            source: "Paper V Table 4: XGFT(3;8,8,8;8,8,1), 512 / 192",
            params: pv(&[8, 8, 8], &[8, 8, 1], 16),
        },
        Preset {
            name: "8-ary-3-full",
            source: "Paper V Table 4: XGFT(3;16,8,8;8,8,1), 1,024 / 320",
            params: pv(&[16, 8, 8], &[8, 8, 1], 16),
        },
        Preset {
            name: "ft648-2to1",
            source: "648 nodes, 36-port leaves with 24 down / 12 up (2:1)",
            params: xgft(&[24, 27], &[1, 12], 36),
        },
        Preset {
            name: "ft648-4to1",
            source: "648 nodes, 36-port leaves with 24 down / 6 up (4:1)",
            params: xgft(&[24, 27], &[1, 6], 36),
        },
        Preset {
            name: "ft11664-2to1",
            source: "11,664 nodes, 3-level, leaves 24 down / 12 up (2:1)",
            params: xgft(&[24, 18, 27], &[1, 12, 18], 36),
        },
        Preset {
            name: "ft11664-4to1",
            source: "11,664 nodes, 3-level, leaves 24 down / 6 up (4:1)",
            params: xgft(&[24, 18, 27], &[1, 6, 18], 36),
        },
    ]
}

/// Parameters for a preset name, an `XGFT(...)`/`PGFT(...)` spec or `K-ary-N`.
///
/// ```
/// let p = ibcloud_fabric::generate::preset("ft11664")?;
/// assert_eq!((p.num_compute_nodes(), p.num_switches()), (11_664, 1_620));
/// # Ok::<(), ibcloud_fabric::TopologyError>(())
/// ```
pub fn preset(spec: &str) -> Result<FatTreeParams, TopologyError> {
    if let Some(p) = presets()
        .into_iter()
        .find(|p| p.name.eq_ignore_ascii_case(spec.trim()))
    {
        return Ok(p.params);
    }
    spec.parse().map_err(|e| match e {
        TopologyError::InvalidParameters(msg) if !spec.contains('(') && !spec.contains("-ary-") => {
            let names: Vec<_> = presets().iter().map(|p| p.name).collect();
            TopologyError::InvalidParameters(format!(
                "unknown preset '{spec}'; known: {}; or give XGFT(h;m..;w..), PGFT(h;m..;w..;p..) or K-ary-N ({msg})",
                names.join(", ")
            ))
        }
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preset_counts_match_the_papers() {
        let want = [
            ("ft324", 324, 36),
            ("ft648", 648, 54),
            ("ft5832", 5832, 972),
            ("ft11664", 11664, 1620),
            ("ft20736", 20736, 6912),
            ("ft27648", 27648, 2880),
            ("4-ary-2-full", 32, 12),
            ("8-ary-2", 64, 16),
            ("4-ary-3-full", 128, 80),
            ("16-ary-2", 256, 32),
            ("8-ary-3", 512, 192),
            ("8-ary-3-full", 1024, 320),
            ("ft648-2to1", 648, 39),
            ("ft648-4to1", 648, 33),
            ("ft11664-2to1", 11664, 1026),
            ("ft11664-4to1", 11664, 756),
        ];
        for (name, nodes, switches) in want {
            let p = preset(name).unwrap();
            assert_eq!(
                (p.num_compute_nodes(), p.num_switches()),
                (nodes, switches),
                "{name}"
            );
            p.validate().unwrap();
        }
        assert_eq!(want.len(), presets().len());
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let err = preset("ft999").unwrap_err().to_string();
        assert!(err.contains("ft648") && err.contains("ft999"), "{err}");
    }
}
