//! LID-space arithmetic of the two LID schemes, the LRH extension and the
//! hybrid option (reference B §1.5-1.6).
//!
//! ```
//! use ibcloud_vswitch::capacity::{Capacity, CapacityInput};
//! let c = Capacity::compute(&CapacityInput { vfs: 16, ..Default::default() });
//! assert_eq!(c.prepopulated.max_hypervisors, 2891);
//! assert_eq!(c.prepopulated.max_vms, 46256);
//! ```

use serde::Serialize;

/// Unicast LIDs (0x0001-0xBFFF).
pub const UNICAST_LIDS: u64 = 49151;
/// Multicast LIDs of the 16-bit space (0xC000-0xFFFE plus the permissive LID).
pub const MULTICAST_LIDS: u64 = 16384;

/// What to size: other LID consumers and the VFs per hypervisor.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CapacityInput {
    /// VFs per hypervisor (V).
    pub vfs: u64,
    /// Switches (S).
    pub switches: u64,
    /// Routers (R).
    pub routers: u64,
    /// Other LID consumers such as dedicated SM nodes (M).
    pub others: u64,
    /// Hypervisors, for the dynamic scheme's VM budget (H); 0 = as many as
    /// the prepopulated bound allows.
    pub hypervisors: u64,
    /// LRH extension bits per LID (Paper V proposes 2; 3 is the footnote).
    pub extension_bits: u32,
    /// Hybrid: VMs per shared LID for the VMs without a dedicated one.
    pub share: u64,
    /// Hybrid: fraction of VMs with a dedicated LID (0..=1).
    pub dedicated_fraction: f64,
}

/// The prepopulated scheme: every VF holds a LID.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prepopulated {
    /// ⌊(49151 − S − R − M) / (V + 1)⌋.
    pub max_hypervisors: u64,
    /// max_hypervisors × V.
    pub max_vms: u64,
}

/// The dynamic scheme: LIDs only for running VMs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Dynamic {
    /// Hypervisors used in the figure.
    pub hypervisors: u64,
    /// Running VMs at most at one time: 49151 − S − R − M − H.
    pub max_running_vms: u64,
    /// VFs in total (unbounded by LIDs): H × V.
    pub total_vfs: u64,
}

/// The LRH extension (Paper V §4.1, option 2).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Extension {
    /// Extra bits per SLID/DLID.
    pub bits: u32,
    /// Bits of an extended LID.
    pub lid_bits: u32,
    /// vLIDs (secondary LFT entries): 2^(16+bits) − 2^16.
    pub vlids: u64,
    /// Whole space, pLIDs and vLIDs: 2^(16+bits).
    pub total: u64,
}

/// The hybrid vSwitch + shared-vPort option.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hybrid {
    /// VMs that fit with a fraction of them on dedicated LIDs and the rest
    /// sharing one LID per `share` VMs (dynamic LIDs, H hypervisors).
    pub max_vms: u64,
}

/// Every figure of the calculator.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Capacity {
    /// The input.
    pub input: CapacityInput,
    /// Prepopulated LIDs.
    pub prepopulated: Prepopulated,
    /// Dynamic LIDs.
    pub dynamic: Dynamic,
    /// The LRH extension.
    pub extension: Extension,
    /// The hybrid option (None without a share > 1).
    pub hybrid: Option<Hybrid>,
}

impl Capacity {
    /// Computes every figure; never panics (saturating arithmetic).
    pub fn compute(input: &CapacityInput) -> Self {
        let fixed = input
            .switches
            .saturating_add(input.routers)
            .saturating_add(input.others);
        let free = UNICAST_LIDS.saturating_sub(fixed);
        let max_hypervisors = free / input.vfs.saturating_add(1);
        let prepopulated = Prepopulated {
            max_hypervisors,
            max_vms: max_hypervisors.saturating_mul(input.vfs),
        };
        let h = if input.hypervisors == 0 {
            max_hypervisors
        } else {
            input.hypervisors
        };
        let dynamic = Dynamic {
            hypervisors: h,
            max_running_vms: free.saturating_sub(h),
            total_vfs: h.saturating_mul(input.vfs),
        };
        let bits = if input.extension_bits == 0 {
            2
        } else {
            input.extension_bits.min(16)
        };
        let total = 1u64 << (16 + bits);
        let extension = Extension {
            bits,
            lid_bits: 16 + bits,
            vlids: total - (1 << 16),
            total,
        };
        let hybrid = (input.share > 1).then(|| {
            // d·x + (1 − d)·x / share ≤ budget  ⇒  x ≤ budget / (d + (1 − d)/share)
            let d = input.dedicated_fraction.clamp(0.0, 1.0);
            let per_vm = d + (1.0 - d) / input.share as f64;
            let budget = dynamic.max_running_vms as f64;
            Hybrid {
                max_vms: (budget / per_vm).floor() as u64,
            }
        });
        Self {
            input: input.clone(),
            prepopulated,
            dynamic,
            extension,
            hybrid,
        }
    }
}

/// LIDs a virtual fabric needs: switches and vSwitches (one each, as the
/// emulated fabric gives every switch a LID), PFs, plus every VF
/// (prepopulated) or the running VMs (dynamic).
pub fn lids_needed(
    switches: u64,
    hypervisors: u64,
    vfs: u64,
    running: u64,
    prepopulated: bool,
) -> u64 {
    let per_hyp = 2 + if prepopulated { vfs } else { 0 };
    switches + hypervisors * per_hyp + if prepopulated { 0 } else { running }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_figures() {
        let c = Capacity::compute(&CapacityInput {
            vfs: 16,
            ..Default::default()
        });
        assert_eq!(c.prepopulated.max_hypervisors, 2891);
        assert_eq!(c.prepopulated.max_vms, 46256);
        assert_eq!(c.extension.vlids, 196608);
        assert_eq!(c.extension.total, 262144);
        let c3 = Capacity::compute(&CapacityInput {
            vfs: 16,
            extension_bits: 3,
            ..Default::default()
        });
        assert_eq!(c3.extension.total, 524288);
        for (v, h, vms) in [
            (4, 9830, 39320),
            (8, 5461, 43688),
            (32, 1489, 47648),
            (64, 756, 48384),
            (126, 387, 48762),
        ] {
            let c = Capacity::compute(&CapacityInput {
                vfs: v,
                ..Default::default()
            });
            assert_eq!(
                (c.prepopulated.max_hypervisors, c.prepopulated.max_vms),
                (h, vms)
            );
        }
    }

    #[test]
    fn dynamic_budget_and_hybrid() {
        let c = Capacity::compute(&CapacityInput {
            vfs: 16,
            switches: 151,
            hypervisors: 4000,
            share: 4,
            dedicated_fraction: 0.5,
            ..Default::default()
        });
        assert_eq!(c.dynamic.max_running_vms, 49151 - 151 - 4000);
        assert_eq!(c.dynamic.total_vfs, 64000);
        // 45000 / (0.5 + 0.125) = 72000
        assert_eq!(c.hybrid.unwrap().max_vms, 72000);
        // No panic on absurd input.
        let z = Capacity::compute(&CapacityInput {
            vfs: u64::MAX,
            switches: u64::MAX,
            ..Default::default()
        });
        assert_eq!(z.prepopulated.max_hypervisors, 0);
    }
}
