//! Sphinx (G §6): Latency Proportionality (LP) held by a two-stage
//! controller.
//!
//! A flow's performance loss is its latency's relative increase over its
//! base (standalone) latency, `PL = (L − L_base)/L_base` (G §6.2, A16). An
//! LP group `(a, b, r*)` asks that `PL_a / PL_b` stay at `r*` (1:4 → 0.25).
//! Every control period the controller ([`Sphinx`]):
//!
//! 1. **price stage** (Eq. 9, integral): `P = K_I · ∫ LP_e dt` with the LP
//!    error of [`lp::error`] (K_I = 4);
//! 2. **resource stage** (Eq. 10, proportional on the price *change*):
//!    `ΔR = K_P · ΔP` (K_P = 0.25), `R` clamped to the actuator's range: the
//!    congestion-control delay setting of the throttled flow, whose largest
//!    value is the largest delay the CCT holds (G §6.7, Fig. 52(d): the
//!    actuator saturates).
//!
//! The target of a group can change at run time ([`Sphinx::set_target`],
//! G R16): the next error has the new target, so a looser target lowers
//! the price and gives the throttled flow its resources back (Fig. 55).
//!
//! Like every policy here it never reads a clock: [`Sphinx::step`] takes
//! `now` and the latencies observed, and returns the delay settings that
//! changed; every step is a [`SphinxRecord`]. What the seed leaves open
//! (A14: the error's normalisation, which flow is throttled, the period;
//! A15: the delay's units) is an option of [`SphinxParams`], documented in
//! docs/sphinx.md.

pub mod controller;
pub mod fabric;
pub mod host;
pub mod iomodel;
pub mod lp;
pub mod manual;

pub use controller::{Sphinx, SphinxAction, SphinxRecord};
pub use fabric::{SphinxLog, SphinxOnFabric};
pub use iomodel::{fit_eq8, io_sweep, IoPoint};
pub use lp::{performance_loss, ErrorForm};

use serde::{Deserialize, Serialize};

/// A flow Sphinx watches (G §6.6, flow specification).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SphinxFlow {
    /// Name in records and errors.
    pub name: String,
    /// Base (standalone) latency, µs: the reference of its performance loss.
    pub base_us: f64,
}

/// An LP group: `PL_a / PL_b` is held at `target`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LpGroup {
    /// Index of flow a (the latency-critical one in G's experiments, Nectere).
    pub a: usize,
    /// Index of flow b (Memcached in G's experiments).
    pub b: usize,
    /// Target ratio `PL_a / PL_b` (1:4 → 0.25).
    pub target: f64,
}

/// Which flow of a group the resource stage acts on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Throttle {
    /// Only flow b gets a delay, `R ∈ [0, max]`: G's experiments throttle
    /// Memcached to protect Nectere. Default.
    #[default]
    Second,
    /// The flow whose share of the loss is below its target: `R` is signed,
    /// `R > 0` delays b by `R`, `R < 0` delays a by `−R` (G's pseudocode,
    /// "the flow whose PL share is below target").
    Both,
}

/// Parameters of the two-stage controller.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct SphinxParams {
    /// Integral gain of the price stage (Eq. 9). G: 4.
    pub k_i: f64,
    /// Proportional gain of the resource stage (Eq. 10). G: 0.25.
    pub k_p: f64,
    /// Control period, seconds: the `dt` of the integral (not given by the
    /// seed; 1 s by default, so the integral is the sum of the errors).
    pub period_s: f64,
    /// How the LP error is normalised (A14).
    pub error: ErrorForm,
    /// Largest |error| one step integrates (a flow without loss makes the
    /// ratio unbounded).
    pub max_error: f64,
    /// Which flow is throttled.
    pub throttle: Throttle,
    /// Largest delay setting of the actuator (CCT index; G's CCTI_Limit
    /// 127). The resource stage is incremental (Eq. 10: `R += K_P·ΔP`,
    /// clamped every step), so a saturated actuator moves back as soon as
    /// the price falls; the price itself keeps integrating (it is reported
    /// with each step's `saturated` flag).
    pub max_delay: u16,
}

impl Default for SphinxParams {
    fn default() -> Self {
        Self {
            k_i: 4.0,
            k_p: 0.25,
            period_s: 1.0,
            error: ErrorForm::RatioDifference,
            max_error: 10.0,
            throttle: Throttle::Second,
            max_delay: 127,
        }
    }
}

impl SphinxParams {
    /// Checks every value; the error names the parameter.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("k-i", self.k_i),
            ("k-p", self.k_p),
            ("period-s", self.period_s),
            ("max-error", self.max_error),
        ] {
            if !v.is_finite() || v <= 0.0 {
                return Err(format!("{name} must be a positive number, got {v}"));
            }
        }
        if self.max_delay == 0 {
            return Err("max-delay must be at least 1".into());
        }
        Ok(())
    }
}

/// A named policy and its ratio (G §6.6: users pick "Fair" rather than a
/// raw ratio; the mapping is configurable). `fair` = 1:1, `latency-first`
/// = 1:4, `throughput-first` = 4:1, or a ratio written `1:4` or `0.25`.
///
/// ```
/// use ibcloud_control::sphinx::policy_ratio;
/// assert_eq!(policy_ratio("fair"), Ok(1.0));
/// assert_eq!(policy_ratio("1:4"), Ok(0.25));
/// assert_eq!(policy_ratio("0.1"), Ok(0.1));
/// assert!(policy_ratio("1:0").is_err());
/// assert!(policy_ratio("nan").is_err());
/// ```
pub fn policy_ratio(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let r = match t.to_ascii_lowercase().as_str() {
        "fair" => 1.0,
        "latency-first" => 0.25,
        "throughput-first" => 4.0,
        _ => {
            let num = |s: &str| -> Result<f64, String> {
                s.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("LP target '{t}': '{s}' is not a number"))
            };
            match t.split_once(':') {
                Some((x, y)) => num(x)? / num(y)?,
                None => num(t)?,
            }
        }
    };
    if !r.is_finite() || r <= 0.0 {
        return Err(format!(
            "LP target '{t}' must be a positive finite ratio (like 1:4, 0.25 or fair)"
        ));
    }
    Ok(r)
}

#[cfg(test)]
mod tests;
