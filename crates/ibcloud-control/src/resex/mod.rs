//! ResEx (F §5.5–5.6): Resos, a virtual currency in which each VM pays for
//! the CPU % and InfiniBand MTUs it uses, and two pricing policies on top:
//! [`FreeMarket`] (fixed prices; a VM near the end of its Resos has its cap
//! cut, F Algorithm 2) and [`IoShares`] (the VM that interferes with a
//! latency-reporting VM is charged more and capped, F Algorithm 3 and
//! equations 1–3).
//!
//! Both are [`CapPolicy`](crate::capping::CapPolicy)s: they work from
//! `VmSample`s and their parameters only (no
//! clock, no OS), so the same object runs on the host simulator and in
//! `ibcloud agent`. Every choice the thesis leaves open is a parameter;
//! docs/resex.md gives each default with the seed's words.
//!
//! - [`resos`]: budgets, prices, balances, epochs.
//! - [`throttle`]: FreeMarket's 10 % / 10 % / −10 % cap rule.
//! - [`latency`]: IOShares' interference estimate (`GETIOINTF`).
//! - [`freemarket`], [`ioshares`]: the two policies.

pub mod freemarket;
pub mod ioshares;
pub mod latency;
pub(crate) mod params;
pub mod resos;
pub mod throttle;

pub use freemarket::FreeMarket;
pub use ioshares::IoShares;

use crate::capping::{CapChange, VmSample};
use params::Params;
use resos::{ResoConfig, RESO_KEYS};
use serde::Serialize;
use throttle::{ThrottleRule, THROTTLE_KEYS};

/// What both policies read from their table: it is checked against the
/// Reso keys, the cut-rule keys and the policy's `own` keys, then the Reso
/// budget and the cut rule are read from it.
pub(crate) fn common_params<'a>(
    kind: &'static str,
    map: &'a serde_json::Map<String, serde_json::Value>,
    own: &[&str],
    names: &[String],
) -> Result<(Params<'a>, ResoConfig, ThrottleRule), String> {
    let p = Params { kind, map };
    let keys: Vec<&str> = RESO_KEYS
        .iter()
        .chain(&THROTTLE_KEYS)
        .chain(own)
        .copied()
        .collect();
    p.check_keys(&keys)?;
    let cfg = ResoConfig::from_params(&p, names)?;
    let rule = ThrottleRule::from_params(&p)?;
    Ok((p, cfg, rule))
}

/// The CPU cap that gives a latency-sensitive VM its base latency back when
/// the interfering VM's buffers are `br` times larger (F §5.5.2, Figs.
/// 22–23): `100 / BR` per cent.
///
/// ```
/// use ibcloud_control::resex::{br_cap, buffer_ratio};
/// assert_eq!(br_cap(4.0), Ok(25.0)); // 256 KB beside 64 KB (F §5.5.2)
/// let br = buffer_ratio(2 << 20, 64 << 10).unwrap();
/// assert_eq!(br, 32.0);
/// assert_eq!(br_cap(br), Ok(3.125));
/// assert!(br_cap(0.0).is_err());
/// ```
pub fn br_cap(br: f64) -> Result<f64, String> {
    if !br.is_finite() || br <= 0.0 {
        return Err(format!("buffer ratio must be a positive number, got {br}"));
    }
    Ok(100.0 / br)
}

/// Buffer ratio (F §5.5.1): the interfering application's buffer over the
/// reporting application's.
pub fn buffer_ratio(interferer_bytes: u64, reporter_bytes: u64) -> Result<f64, String> {
    if interferer_bytes == 0 || reporter_bytes == 0 {
        return Err("buffer sizes must be positive".into());
    }
    Ok(interferer_bytes as f64 / reporter_bytes as f64)
}

/// A cap as Xen takes it: 0 = uncapped, else at least 1 %.
pub(crate) fn xen_cap(cap: f64) -> u32 {
    if cap <= 0.0 {
        0
    } else {
        cap.round().max(1.0) as u32
    }
}

/// One VM's usage over an interval in charging units: (MTUs, CPU % per
/// charging interval × intervals covered).
pub(crate) fn usage(s: &VmSample, cfg: &resos::ResoConfig) -> (f64, f64) {
    let mtus = s.bytes as f64 / cfg.mtu;
    let covered = if s.interval == 0 {
        1.0
    } else {
        s.interval as f64 / cfg.interval as f64
    };
    let cpu = if s.cpu_pct.is_finite() {
        s.cpu_pct.max(0.0) * covered
    } else {
        0.0
    };
    (mtus, cpu)
}

/// The caps a ResEx policy holds for one VM: the VM's own cap when first
/// seen (restored at epochs), FreeMarket's cut and IOShares' rate cap.
/// The VM gets the lowest active one.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct VmCaps {
    /// Cap when first observed (0 = none); `None` before the first step.
    pub(crate) original: Option<u32>,
    /// FreeMarket's cut cap (0 = not cutting).
    pub(crate) floor: f64,
    /// IOShares' equation-3 cap (0 = none).
    pub(crate) rate: f64,
    /// A cut happened this epoch.
    pub(crate) cut_this_epoch: bool,
    /// The cap last set (what the VM has).
    pub(crate) emitted: u32,
    /// Cuts so far.
    pub(crate) cuts: u64,
}

impl VmCaps {
    /// Remembers the cap the VM had before the policy.
    pub(crate) fn first_sight(&mut self, s: &VmSample) {
        if self.original.is_none() {
            self.original = Some(s.cap);
            self.emitted = s.cap;
        }
    }

    /// A new epoch: cuts may happen again and, if `restore`, are undone.
    pub(crate) fn new_epoch(&mut self, restore: bool) {
        self.cut_this_epoch = false;
        if restore {
            self.floor = 0.0;
        }
    }

    /// The lowest active cap (0 = none).
    pub(crate) fn effective(&self) -> f64 {
        let o = self.original.unwrap_or(0) as f64;
        [o, self.floor, self.rate]
            .into_iter()
            .filter(|&c| c > 0.0)
            .fold(0.0, |m, c| if m == 0.0 { c } else { m.min(c) })
    }

    /// The change to make, if the effective cap differs from the one set.
    pub(crate) fn change(&mut self, vm: usize) -> Option<CapChange> {
        let cap = xen_cap(self.effective());
        (cap != self.emitted).then(|| {
            self.emitted = cap;
            CapChange { vm, cap }
        })
    }
}

/// Builds a ResEx policy (`freemarket` or `ioshares`) from its table.
pub(crate) fn build(
    kind: &str,
    params: &serde_json::Map<String, serde_json::Value>,
    vm_names: &[String],
) -> Result<Box<dyn crate::capping::CapPolicy>, String> {
    match kind {
        "freemarket" => Ok(Box::new(FreeMarket::from_params(params, vm_names)?)),
        "ioshares" => Ok(Box::new(IoShares::from_params(params, vm_names)?)),
        other => Err(format!("unknown ResEx policy '{other}'")),
    }
}
