//! Node weights for pFTree-Wt: a weights file, or weights learned from
//! per-port receive counters with seed 002's Eq. 1.
//!
//! Eq. 1 maps measured receive bandwidths B linearly onto [a, b]. The
//! printed form W(x) = (x − a)(b − a)/(max B − min B) + a subtracts the
//! *target* minimum from a bandwidth; the corrected min–max form is
//! W(x) = a + (x − min B)(b − a)/(max B − min B) (E §2.4). Both are here;
//! when max B = min B every node gets the same weight (a; the printed form
//! divides by zero).
//!
//! Weights file: one `PORT_GUID WEIGHT` per line (`#` comments), GUIDs
//! as `0x…` hex or decimal, weights positive numbers.
//!
//! ```
//! use ibcloud_routing::engines::pftree::weights::{learn, Eq1};
//! use ibcloud_fabric::Guid;
//! let b = [(Guid(1), 0.0), (Guid(2), 50.0), (Guid(3), 100.0)];
//! let w = learn(&b, 1.0, 100.0, Eq1::Corrected);
//! assert_eq!(w[1].1, 50.5);
//! let same = learn(&[(Guid(1), 7.0), (Guid(2), 7.0)], 1.0, 100.0, Eq1::Corrected);
//! assert_eq!((same[0].1, same[1].1), (1.0, 1.0));
//! ```

use ibcloud_fabric::{Guid, ParseError};

/// Which form of Eq. 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Eq1 {
    /// W(x) = a + (x − min B)(b − a)/(max B − min B).
    #[default]
    Corrected,
    /// W(x) = (x − a)(b − a)/(max B − min B) + a, as printed.
    Literal,
}

/// Weights in [a, b] from receive bandwidths (or byte counts over one window).
pub fn learn(bandwidth: &[(Guid, f64)], a: f64, b: f64, form: Eq1) -> Vec<(Guid, f64)> {
    let min = bandwidth.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
    let max = bandwidth
        .iter()
        .map(|x| x.1)
        .fold(f64::NEG_INFINITY, f64::max);
    let span = max - min;
    bandwidth
        .iter()
        .map(|&(g, x)| {
            let w = if span.is_nan() || span <= 0.0 {
                a
            } else {
                match form {
                    Eq1::Corrected => a + (x - min) * (b - a) / span,
                    Eq1::Literal => (x - a) * (b - a) / span + a,
                }
            };
            (g, w)
        })
        .collect()
}

/// Reads a weights file.
pub fn parse(text: &str, file: &str) -> Result<Vec<(Guid, f64)>, ParseError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut it = line.split_whitespace();
        let (Some(g), Some(w), None) = (it.next(), it.next(), it.next()) else {
            return Err(ParseError::new(
                file,
                i + 1,
                format!("expected 'PORT_GUID WEIGHT', got '{line}'"),
            ));
        };
        let guid = match g.strip_prefix("0x").or_else(|| g.strip_prefix("0X")) {
            Some(h) => u64::from_str_radix(h, 16),
            None => g.parse(),
        }
        .map_err(|_| ParseError::new(file, i + 1, format!("bad port GUID '{g}'")))?;
        let weight: f64 = w
            .parse()
            .ok()
            .filter(|w: &f64| w.is_finite() && *w > 0.0)
            .ok_or_else(|| {
                ParseError::new(file, i + 1, format!("bad weight '{w}' (a positive number)"))
            })?;
        out.push((Guid(guid), weight));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_form_differs_unless_min_is_a() {
        let b = [(Guid(1), 10.0), (Guid(2), 110.0)];
        let c = learn(&b, 1.0, 100.0, Eq1::Corrected);
        let l = learn(&b, 1.0, 100.0, Eq1::Literal);
        assert_eq!((c[0].1, c[1].1), (1.0, 100.0));
        assert!((l[0].1 - 9.91).abs() < 1e-9 && (l[1].1 - 108.91).abs() < 1e-9);
        let b0 = [(Guid(1), 1.0), (Guid(2), 101.0)];
        assert_eq!(
            learn(&b0, 1.0, 100.0, Eq1::Literal),
            learn(&b0, 1.0, 100.0, Eq1::Corrected)
        );
    }

    #[test]
    fn file_errors_name_line() {
        assert_eq!(parse("# w\n0x10 5\n17 1.5\n", "w").unwrap().len(), 2);
        let e = parse("0x10 5\n0x11 -1\n", "w").unwrap_err();
        assert_eq!(e.location.line, 2);
        assert!(parse("zz 1", "w").is_err());
        assert!(parse("0x1", "w").is_err());
    }
}
