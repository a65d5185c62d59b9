//! ASSIGNVIRTUALLANES (seed 002 Alg. 5, corrected): after routing, give
//! partitions that share links their own VL, as far as VLs last.
//!
//! Every partition starts on the first data VL (VL0). In partition order,
//! a partition that *needs* a VL gets the next one: for pFTree-Ext a
//! `vlane` partition needs one when a link its routes use is also used by a
//! partition still on its VL (the printed branch is inverted; E §2.3.6).
//! When the VLs run out, `strict` fails and `best-effort` wraps around to the
//! second VL (VL1) and warns. Base pFTree and pFTree-Wt (and -Ext with
//! `vl_for_def`) give every sharing partition a VL the same way but never
//! fail. A partition's SL is its VL (SL n → VL n).

use ibcloud_fabric::partitions::{GlobalPolicy, Isolation, Partitions};

use super::options::Flavor;
use crate::verify::partitions::LinkUsage;

/// VL per partition, and what was relaxed.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(crate) struct VlAssignment {
    pub(crate) vls: Vec<u8>,
    pub(crate) warnings: Vec<String>,
}

fn shares_on_vl(usage: &LinkUsage, p: usize, vls: &[u8]) -> bool {
    (0..usage.channels.len())
        .any(|c| usage.get(c, p) > 0 && usage.users(c).any(|q| q != p && vls[q] == vls[p]))
}

/// Assigns VLs; `max_vls` is the number of operational data VLs (≥ 1).
pub(crate) fn assign(
    usage: &LinkUsage,
    partitions: &Partitions,
    flavor: Flavor,
    vl_for_def: bool,
    max_vls: u8,
    global: GlobalPolicy,
) -> Result<VlAssignment, String> {
    let np = partitions.partitions.len();
    let mut vls = vec![0u8; np];
    let mut warnings = Vec::new();
    let max = max_vls.max(1);
    // vl_count as printed: 1-based, 1 = VL0.
    let mut count: u8 = 1;
    let mut pass = |policy_filter: &dyn Fn(Isolation) -> bool,
                    may_fail: bool,
                    vls: &mut Vec<u8>,
                    warnings: &mut Vec<String>|
     -> Result<(), String> {
        for p in 0..np {
            let part = &partitions.partitions[p];
            if !policy_filter(part.isolation) || !shares_on_vl(usage, p, vls) {
                continue;
            }
            if count >= max {
                if may_fail && global == GlobalPolicy::Strict {
                    return Err(format!(
                        "partition '{}' (0x{:04x}, vlane) needs a VL of its own but all {max} data VLs are in use (strict)",
                        part.name, part.pkey
                    ));
                }
                if max == 1 {
                    warnings.push(format!(
                        "partition '{}' (0x{:04x}) shares links on VL0: only one data VL",
                        part.name, part.pkey
                    ));
                    continue;
                }
                warnings.push(format!(
                    "VLs exhausted ({max} data VLs): partition '{}' (0x{:04x}, {}) wraps around to VL1 and shares it",
                    part.name, part.pkey, part.isolation
                ));
                count = 1;
            }
            count += 1;
            vls[p] = count - 1;
        }
        Ok(())
    };
    match flavor {
        Flavor::Ext => {
            pass(&|i| i == Isolation::Vlane, true, &mut vls, &mut warnings)?;
            if vl_for_def {
                pass(&|i| i == Isolation::Def, false, &mut vls, &mut warnings)?;
            }
        }
        Flavor::Base | Flavor::Wt => pass(&|_| true, false, &mut vls, &mut warnings)?,
    }
    Ok(VlAssignment { vls, warnings })
}
