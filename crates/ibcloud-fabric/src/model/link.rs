//! Physical link properties: width, speed and port state, with the spellings
//! the tools of the field use (`4xQDR` in ibnetdiscover, `SPD=10` in OpenSM dumps).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Active link width (lanes).
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize, PartialOrd, Ord,
)]
pub enum LinkWidth {
    /// 1 lane.
    X1,
    /// 2 lanes.
    X2,
    /// 4 lanes (the usual width).
    #[default]
    X4,
    /// 8 lanes.
    X8,
    /// 12 lanes.
    X12,
}

impl LinkWidth {
    /// Every width, narrowest first.
    pub const ALL: [LinkWidth; 5] = [Self::X1, Self::X2, Self::X4, Self::X8, Self::X12];

    /// Number of lanes.
    pub fn lanes(self) -> u32 {
        match self {
            Self::X1 => 1,
            Self::X2 => 2,
            Self::X4 => 4,
            Self::X8 => 8,
            Self::X12 => 12,
        }
    }

    /// The lane count spelling used by ibnetdiscover and OpenSM (`4x`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::X1 => "1x",
            Self::X2 => "2x",
            Self::X4 => "4x",
            Self::X8 => "8x",
            Self::X12 => "12x",
        }
    }
}

impl fmt::Display for LinkWidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LinkWidth {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|w| w.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown link width '{s}' (expected 1x, 2x, 4x, 8x or 12x)"))
    }
}

/// Active link speed (signalling generation).
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize, PartialOrd, Ord,
)]
pub enum LinkSpeed {
    /// Single data rate, 2.5 Gb/s per lane.
    Sdr,
    /// Double data rate, 5 Gb/s per lane.
    Ddr,
    /// Quad data rate, 10 Gb/s per lane.
    #[default]
    Qdr,
    /// FDR10, 10.3125 Gb/s per lane.
    Fdr10,
    /// Fourteen data rate, 14.0625 Gb/s per lane.
    Fdr,
    /// Enhanced data rate, 25.78125 Gb/s per lane.
    Edr,
    /// High data rate, 53.125 Gb/s per lane (PAM4).
    Hdr,
    /// Next data rate, 106.25 Gb/s per lane.
    Ndr,
}

impl LinkSpeed {
    /// Every speed, slowest first.
    pub const ALL: [LinkSpeed; 8] = [
        Self::Sdr,
        Self::Ddr,
        Self::Qdr,
        Self::Fdr10,
        Self::Fdr,
        Self::Edr,
        Self::Hdr,
        Self::Ndr,
    ];

    /// Name as ibnetdiscover prints it (`QDR`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sdr => "SDR",
            Self::Ddr => "DDR",
            Self::Qdr => "QDR",
            Self::Fdr10 => "FDR10",
            Self::Fdr => "FDR",
            Self::Edr => "EDR",
            Self::Hdr => "HDR",
            Self::Ndr => "NDR",
        }
    }

    /// Signalling rate per lane in Gb/s, as OpenSM's subnet.lst prints it (`SPD=10`).
    pub fn signal_gbps(self) -> f64 {
        match self {
            Self::Sdr => 2.5,
            Self::Ddr => 5.0,
            Self::Qdr => 10.0,
            Self::Fdr10 => 10.3125,
            Self::Fdr => 14.0625,
            Self::Edr => 25.78125,
            Self::Hdr => 53.125,
            Self::Ndr => 106.25,
        }
    }

    /// Usable data rate per lane in Gb/s after line encoding
    /// (8b/10b up to QDR, 64b/66b from FDR10 on).
    pub fn data_gbps(self) -> f64 {
        match self {
            Self::Sdr | Self::Ddr | Self::Qdr => self.signal_gbps() * 0.8,
            _ => self.signal_gbps() * 64.0 / 66.0,
        }
    }
}

impl fmt::Display for LinkSpeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LinkSpeed {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|v| v.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                format!("unknown link speed '{s}' (expected SDR, DDR, QDR, FDR10, FDR, EDR, HDR or NDR)")
            })
    }
}

/// Width and speed together, spelled `4xQDR` by ibnetdiscover.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct LinkRate {
    /// Lanes.
    pub width: LinkWidth,
    /// Per-lane speed.
    pub speed: LinkSpeed,
}

impl LinkRate {
    /// Shorthand constructor.
    pub fn new(width: LinkWidth, speed: LinkSpeed) -> Self {
        Self { width, speed }
    }

    /// Usable data rate of the link in Gb/s.
    pub fn data_gbps(self) -> f64 {
        self.width.lanes() as f64 * self.speed.data_gbps()
    }
}

impl fmt::Display for LinkRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.width, self.speed)
    }
}

impl FromStr for LinkRate {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let x = s
            .find(['x', 'X'])
            .ok_or_else(|| format!("link rate '{s}' is not of the form 4xQDR"))?;
        Ok(Self {
            width: s[..=x].parse()?,
            speed: s[x + 1..].parse()?,
        })
    }
}

/// Logical port state.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub enum PortState {
    /// No physical link.
    #[default]
    Down,
    /// Link up, not yet configured by the SM.
    Init,
    /// Configured, waiting to become active.
    Armed,
    /// Carrying traffic.
    Active,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_round_trip_through_their_spelling() {
        for w in LinkWidth::ALL {
            for s in LinkSpeed::ALL {
                let r = LinkRate::new(w, s);
                assert_eq!(r.to_string().parse::<LinkRate>().unwrap(), r);
            }
        }
        assert!("4xQQR".parse::<LinkRate>().is_err());
        assert!("QDR".parse::<LinkRate>().is_err());
    }

    #[test]
    fn data_rates_match_the_standard() {
        assert_eq!(
            LinkRate::new(LinkWidth::X4, LinkSpeed::Qdr).data_gbps(),
            32.0
        );
        let edr = LinkRate::new(LinkWidth::X4, LinkSpeed::Edr).data_gbps();
        assert!((edr - 100.0).abs() < 1e-9);
    }
}
