//! Performance loss and the LP error (G §6.2, §9 A14, A16).

use serde::{Deserialize, Serialize};

/// Performance loss of a flow: the relative increase of its latency over
/// its base, `(L − L_base)/L_base` (G §6.2, reading A16: the reported
/// per-request latency). A flow faster than its base loses nothing (0, not
/// a negative loss: the ratio of two losses is meant to compare harm).
///
/// ```
/// use ibcloud_control::sphinx::performance_loss;
/// // Table 8, 1:1, Coll.+LP: Nectere 59.2 µs over a 48 µs base.
/// let pl = performance_loss(59.2, 48.0).unwrap();
/// assert!((pl - 0.2333).abs() < 1e-4);
/// assert_eq!(performance_loss(40.0, 48.0), Ok(0.0));
/// assert!(performance_loss(f64::NAN, 48.0).is_err());
/// ```
pub fn performance_loss(latency: f64, base: f64) -> Result<f64, String> {
    if !base.is_finite() || base <= 0.0 {
        return Err(format!(
            "base latency must be a positive number, got {base}"
        ));
    }
    if !latency.is_finite() || latency < 0.0 {
        return Err(format!(
            "latency must be a non-negative number, got {latency}"
        ));
    }
    Ok(((latency - base) / base).max(0.0))
}

/// How the error between the LP a group has and its target is measured
/// (A14: the seed's pseudocode writes `r − r*`; its normalisation is not
/// given). Positive: flow a loses too much against b.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorForm {
    /// `PL_a/PL_b − r*` (the seed's pseudocode). Default.
    #[default]
    RatioDifference,
    /// `ln(PL_a/PL_b) − ln r*`: symmetric in a and b (1:4 and 4:1 are
    /// equally far from 1:1).
    LogRatio,
    /// `PL_a/(PL_a + PL_b) − r*/(1 + r*)`: the difference of a's share of
    /// the total loss, bounded to (−1, 1).
    ShareDifference,
}

/// The LP error of losses `pl_a`, `pl_b` (≥ 0, finite) against target
/// `r*` (> 0), clamped to `±max_error`. A flow without loss makes the ratio
/// unbounded: the error is then `±max_error` toward the flow that loses,
/// and 0 when neither loses.
pub fn error(form: ErrorForm, pl_a: f64, pl_b: f64, target: f64, max_error: f64) -> f64 {
    let e = match (pl_a > 0.0, pl_b > 0.0) {
        (false, false) => 0.0,
        (true, false) => max_error,
        (false, true) => match form {
            ErrorForm::RatioDifference => -target,
            ErrorForm::LogRatio => -max_error,
            ErrorForm::ShareDifference => -target / (1.0 + target),
        },
        (true, true) => match form {
            ErrorForm::RatioDifference => pl_a / pl_b - target,
            ErrorForm::LogRatio => (pl_a / pl_b).ln() - target.ln(),
            ErrorForm::ShareDifference => pl_a / (pl_a + pl_b) - target / (1.0 + target),
        },
    };
    e.clamp(-max_error, max_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_8_hand_tuned_rows_are_near_their_targets() {
        // G Table 8 Coll.+LP (Nectere : Memcached over bases 48 : 187 µs):
        // 1:1 → 59.2 : 230, 1:4 → 54 : 284, 1:10 → 52.4 : 364.
        for (n, m, target) in [(59.2, 230.0, 1.0), (54.0, 284.0, 0.25), (52.4, 364.0, 0.1)] {
            let a = performance_loss(n, 48.0).unwrap();
            let b = performance_loss(m, 187.0).unwrap();
            let e = error(ErrorForm::ShareDifference, a, b, target, 10.0);
            assert!(e.abs() < 0.02, "{n}:{m} share error {e}");
            let e = error(ErrorForm::LogRatio, a, b, target, 10.0);
            assert!(e.abs() < 0.05, "{n}:{m} log error {e}");
        }
    }

    #[test]
    fn collocated_row_has_a_losing_too_much() {
        // Table 8 Collocated 64.1 : 196.7: PL ratio 6.47 against 1:1.
        let a = performance_loss(64.1, 48.0).unwrap();
        let b = performance_loss(196.7, 187.0).unwrap();
        let e = error(ErrorForm::RatioDifference, a, b, 1.0, 10.0);
        assert!((e - 5.47).abs() < 0.02, "{e}");
        for form in [ErrorForm::LogRatio, ErrorForm::ShareDifference] {
            assert!(error(form, a, b, 1.0, 10.0) > 0.0);
        }
    }

    #[test]
    fn unbounded_ratios_are_clamped_and_signed() {
        for form in [
            ErrorForm::RatioDifference,
            ErrorForm::LogRatio,
            ErrorForm::ShareDifference,
        ] {
            assert_eq!(error(form, 0.0, 0.0, 0.25, 10.0), 0.0);
            assert_eq!(error(form, 0.3, 0.0, 0.25, 10.0), 10.0);
            assert!(error(form, 0.0, 0.3, 0.25, 10.0) < 0.0);
            assert!(error(form, 1e9, 1e-9, 0.25, 10.0) <= 10.0);
        }
    }
}
