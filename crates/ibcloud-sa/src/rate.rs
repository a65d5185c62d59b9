//! PathRecord rate and MTU encodings (IBA 1.3 Table 205 and §14.2.5.6):
//! the 6-bit codes a PathRecord carries and what they mean.

use ibcloud_fabric::{LinkRate, LinkSpeed, LinkWidth};

/// The PathRecord rate codes with their nominal rate in Gb/s (the spec's
/// enumeration; codes 0 and 1 are reserved).
pub const RATE_CODES: [(u8, f64); 23] = [
    (2, 2.5),
    (3, 10.0),
    (4, 30.0),
    (5, 5.0),
    (6, 20.0),
    (7, 40.0),
    (8, 60.0),
    (9, 80.0),
    (10, 120.0),
    (11, 14.0),
    (12, 56.0),
    (13, 112.0),
    (14, 168.0),
    (15, 25.0),
    (16, 100.0),
    (17, 200.0),
    (18, 300.0),
    (19, 28.0),
    (20, 50.0),
    (21, 400.0),
    (22, 600.0),
    (23, 800.0),
    (24, 1200.0),
];

/// Nominal Gb/s of a rate code, or `None` for a reserved code.
///
/// ```
/// assert_eq!(ibcloud_sa::rate::rate_gbps(7), Some(40.0));
/// assert_eq!(ibcloud_sa::rate::rate_gbps(1), None);
/// ```
pub fn rate_gbps(code: u8) -> Option<f64> {
    RATE_CODES.iter().find(|(c, _)| *c == code).map(|(_, g)| *g)
}

/// The rate code of a link, as OpenSM computes it from the active width and
/// speed: FDR10 counts as QDR (its nominal rate is 10 Gb/s per lane), the
/// other speeds by their nominal lane rate (SDR 2.5, DDR 5, QDR 10, FDR 14,
/// EDR 25, HDR 50, NDR 100 Gb/s).
///
/// ```
/// use ibcloud_fabric::{LinkRate, LinkSpeed, LinkWidth};
/// use ibcloud_sa::rate::rate_code;
/// assert_eq!(rate_code(LinkRate::new(LinkWidth::X4, LinkSpeed::Qdr)), 7);
/// assert_eq!(rate_code(LinkRate::new(LinkWidth::X4, LinkSpeed::Fdr)), 12);
/// assert_eq!(rate_code(LinkRate::new(LinkWidth::X4, LinkSpeed::Edr)), 16);
/// ```
pub fn rate_code(rate: LinkRate) -> u8 {
    let lane = match rate.speed {
        LinkSpeed::Sdr => 2.5,
        LinkSpeed::Ddr => 5.0,
        LinkSpeed::Qdr | LinkSpeed::Fdr10 => 10.0,
        LinkSpeed::Fdr => 14.0,
        LinkSpeed::Edr => 25.0,
        LinkSpeed::Hdr => 50.0,
        LinkSpeed::Ndr => 100.0,
    };
    let lanes = match rate.width {
        LinkWidth::X1 => 1.0,
        LinkWidth::X2 => 2.0,
        LinkWidth::X4 => 4.0,
        LinkWidth::X8 => 8.0,
        LinkWidth::X12 => 12.0,
    };
    code_for_gbps(lane * lanes)
}

/// The code whose nominal rate is the largest not above `gbps` (2.5 Gb/s at least).
fn code_for_gbps(gbps: f64) -> u8 {
    let mut best = (2u8, 2.5f64);
    for &(c, g) in &RATE_CODES {
        if g <= gbps + 1e-9 && g > best.1 {
            best = (c, g);
        }
    }
    best.0
}

/// The slower of two rate codes (reserved codes lose).
pub fn min_rate(a: u8, b: u8) -> u8 {
    match (rate_gbps(a), rate_gbps(b)) {
        (Some(x), Some(y)) if y < x => b,
        (Some(_), _) => a,
        _ => b,
    }
}

/// MTU in bytes of a PathRecord MTU code (1 = 256 … 5 = 4096), `None` otherwise.
///
/// ```
/// assert_eq!(ibcloud_sa::rate::mtu_bytes(5), Some(4096));
/// ```
pub fn mtu_bytes(code: u8) -> Option<u32> {
    match code {
        1..=5 => Some(128 << code),
        _ => None,
    }
}

/// The MTU code of a size in bytes (256, 512, 1024, 2048 or 4096).
pub fn mtu_code(bytes: u32) -> Option<u8> {
    (1..=5).find(|&c| 128u32 << c == bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_width_and_speed_has_a_code_of_its_nominal_rate() {
        for w in LinkWidth::ALL {
            for s in LinkSpeed::ALL {
                let code = rate_code(LinkRate::new(w, s));
                assert!(rate_gbps(code).is_some(), "{w:?} {s:?}");
            }
        }
        let r = |w, s| rate_gbps(rate_code(LinkRate::new(w, s))).unwrap();
        assert_eq!(r(LinkWidth::X1, LinkSpeed::Sdr), 2.5);
        assert_eq!(r(LinkWidth::X12, LinkSpeed::Qdr), 120.0);
        assert_eq!(r(LinkWidth::X4, LinkSpeed::Fdr10), 40.0);
        assert_eq!(r(LinkWidth::X2, LinkSpeed::Fdr), 28.0);
        assert_eq!(r(LinkWidth::X12, LinkSpeed::Edr), 300.0);
        assert_eq!(r(LinkWidth::X4, LinkSpeed::Hdr), 200.0);
        assert_eq!(r(LinkWidth::X12, LinkSpeed::Ndr), 1200.0);
    }

    #[test]
    fn min_rate_compares_by_gbps_not_by_code() {
        // 7 = 40 Gb/s, 11 = 14 Gb/s: the larger code is the slower link.
        assert_eq!(min_rate(7, 11), 11);
        assert_eq!(min_rate(16, 12), 12);
        assert_eq!(min_rate(0, 7), 7);
    }

    #[test]
    fn mtu_codes_round_trip() {
        for c in 1..=5 {
            assert_eq!(mtu_code(mtu_bytes(c).unwrap()), Some(c));
        }
        assert_eq!(mtu_bytes(0), None);
        assert_eq!(mtu_bytes(6), None);
        assert_eq!(mtu_code(1500), None);
    }
}
