//! Simulated time: integer picoseconds, and the parser for `10ms`-style limits.

use crate::error::NetsimError;

/// Simulated time in picoseconds (u64: about 213 days).
pub type Time = u64;

/// One nanosecond.
pub const NS: Time = 1_000;
/// One microsecond.
pub const US: Time = 1_000_000;
/// One millisecond.
pub const MS: Time = 1_000_000_000;
/// One second.
pub const S: Time = 1_000_000_000_000;

/// The longest duration accepted: 10^7 s (about 116 days) in picoseconds,
/// within u64.
pub const MAX_DURATION: Time = 10_000_000 * S;

/// Parses a duration such as `10ms`, `2.5us`, `100ns`, `1s`, `500ps`
/// (a bare number is seconds) into picoseconds.
///
/// ```
/// use ibcloud_netsim::time::{parse_duration, MS, US};
/// assert_eq!(parse_duration("10ms").unwrap(), 10 * MS);
/// assert_eq!(parse_duration("2.5us").unwrap(), 2_500_000);
/// assert!(parse_duration("ten ms").is_err());
/// ```
pub fn parse_duration(text: &str) -> Result<Time, NetsimError> {
    let t = text.trim();
    let bad = || NetsimError::BadDuration(text.to_string());
    let split = t
        .find(|c: char| c.is_ascii_alphabetic() || c == 'µ')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.trim().parse().map_err(|_| bad())?;
    let scale = match unit.trim() {
        "" | "s" => S,
        "ms" => MS,
        "us" | "µs" => US,
        "ns" => NS,
        "ps" => 1,
        _ => return Err(bad()),
    } as f64;
    let ps = value * scale;
    if !ps.is_finite() || ps < 0.0 {
        return Err(bad());
    }
    if ps > MAX_DURATION as f64 {
        return Err(NetsimError::DurationTooLong(text.trim().to_string()));
    }
    Ok(ps.round() as Time)
}

/// Formats picoseconds with the largest unit that keeps the number ≥ 1.
pub fn format_duration(t: Time) -> String {
    let (v, u) = if t >= S {
        (t as f64 / S as f64, "s")
    } else if t >= MS {
        (t as f64 / MS as f64, "ms")
    } else if t >= US {
        (t as f64 / US as f64, "us")
    } else if t >= NS {
        (t as f64 / NS as f64, "ns")
    } else {
        (t as f64, "ps")
    };
    format!("{v}{u}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_duration("1s").unwrap(), S);
        assert_eq!(parse_duration("0.001").unwrap(), MS);
        assert_eq!(parse_duration("7 ns").unwrap(), 7 * NS);
        assert_eq!(parse_duration("3µs").unwrap(), 3 * US);
        for bad in ["", "ms", "-1ms", "1 parsec", "1e30s", "nan", "inf"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        let e = parse_duration("20000000s").unwrap_err().to_string();
        assert!(e.contains("too long"), "{e}");
        assert_eq!(parse_duration("10000000s").unwrap(), MAX_DURATION);
        assert_eq!(format_duration(10 * MS), "10ms");
    }
}
