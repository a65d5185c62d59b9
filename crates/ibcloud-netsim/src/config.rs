//! Simulation settings: link-layer constants, buffers, HCA limits, VL
//! arbitration, SL-to-VL, congestion control, sweeps and budgets.
//!
//! Every field has a default (see [`SimConfig::default`]); the whole
//! structure (de)serialises as JSON with kebab-case keys and rejects unknown
//! keys, so the CLI and Python can pass a partial document.

use crate::error::NetsimError;
use crate::time::{Time, MS, NS, US};
use serde::{Deserialize, Serialize};

/// The largest number of data VLs (VL0–VL14; VL15 is management and never
/// carries data here).
pub const MAX_DATA_VLS: u8 = 15;

/// Settings of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct SimConfig {
    /// Path MTU in bytes (256, 512, 1024, 2048 or 4096). Default 2048.
    pub mtu: u32,
    /// Operational data VLs on every port (1–15). Default 1.
    pub vls: u8,
    /// Receive buffer of a switch input port in bytes, split evenly across the
    /// operational VLs. Default 32768.
    pub buffer_bytes: u64,
    /// Receive buffer of an HCA port in bytes, split across the VLs. Default 32768.
    pub hca_buffer_bytes: u64,
    /// Bytes a packet occupies on the wire besides its payload: LRH 8 + BTH 12
    /// + ICRC 4 + VCRC 2 + 8 for start/end delimiters. Default 34.
    pub wire_overhead_bytes: u32,
    /// Propagation delay of every link (cable). Default 20 ns (about 4 m).
    pub link_delay: Time,
    /// Switch forwarding latency from head arrival to the earliest start on
    /// the output. Default 100 ns.
    pub switch_latency: Time,
    /// Store-and-forward instead of virtual cut-through. Default false.
    pub store_and_forward: bool,
    /// HCA injection limit (host/PCIe read side) in payload Gb/s; `None` =
    /// link rate. Default none.
    pub host_gbps: Option<f64>,
    /// HCA sink limit (host/PCIe write side) in payload Gb/s; `None` = no limit.
    pub sink_gbps: Option<f64>,
    /// VL arbitration of every output port.
    pub vl_arbitration: VlArbitration,
    /// SL → VL on every port pair; `None`: SL mod `vls`.
    pub sl2vl: Option<[u8; 16]>,
    /// IB congestion control; `None` = off.
    pub congestion_control: Option<CcConfig>,
    /// Interval of the performance-manager sweeps (counter samples, hooks,
    /// deadlock check). Default 100 us.
    pub sweep_interval: Time,
    /// Length of one XmitWait tick. Default 1 us… see docs/netsim.md.
    pub xmit_wait_tick: Time,
    /// Keep every port's counters at every sweep. Default true.
    pub record_ports: bool,
    /// Stop with an error after this many events. Default 2e9.
    pub max_events: u64,
    /// Stop with an error when more packets than this exist at once. Default 4e6.
    pub max_packets: u32,
    /// Seed of every random stream.
    pub seed: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            mtu: 2048,
            vls: 1,
            buffer_bytes: 32768,
            hca_buffer_bytes: 32768,
            wire_overhead_bytes: 34,
            link_delay: 20 * NS,
            switch_latency: 100 * NS,
            store_and_forward: false,
            host_gbps: None,
            sink_gbps: None,
            vl_arbitration: VlArbitration::default(),
            sl2vl: None,
            congestion_control: None,
            sweep_interval: 100 * US,
            xmit_wait_tick: US,
            record_ports: true,
            max_events: 2_000_000_000,
            max_packets: 4_000_000,
            seed: 1,
        }
    }
}

impl SimConfig {
    /// Checks ranges that do not depend on the fabric.
    pub fn validate(&self) -> Result<(), NetsimError> {
        let bad = |m: String| Err(NetsimError::Config(m));
        if ![256, 512, 1024, 2048, 4096].contains(&self.mtu) {
            return bad(format!(
                "mtu {} is not one of 256, 512, 1024, 2048, 4096",
                self.mtu
            ));
        }
        if self.vls == 0 || self.vls > MAX_DATA_VLS {
            return bad(format!("vls {} is not in 1..=15", self.vls));
        }
        for (name, g) in [("host-gbps", self.host_gbps), ("sink-gbps", self.sink_gbps)] {
            if let Some(g) = g {
                if !(g.is_finite() && g > 0.0) {
                    return bad(format!("{name} must be positive, not {g}"));
                }
            }
        }
        if self.sweep_interval == 0 || self.xmit_wait_tick == 0 {
            return bad("sweep-interval and xmit-wait-tick must be positive".into());
        }
        if self.link_delay == 0 {
            return bad("link-delay must be positive".into());
        }
        if let Some(map) = &self.sl2vl {
            if let Some(v) = map.iter().find(|&&v| v >= self.vls) {
                return bad(format!(
                    "sl2vl maps to VL {v} but only {} VLs are operational",
                    self.vls
                ));
            }
        }
        self.vl_arbitration.validate(self.vls)?;
        if let Some(cc) = &self.congestion_control {
            cc.validate()?;
        }
        Ok(())
    }

    /// Wire bytes of a packet with `payload` bytes.
    pub fn wire_bytes(&self, payload: u32) -> u32 {
        payload + self.wire_overhead_bytes
    }

    /// 64-byte credit units of a packet with `payload` bytes.
    pub fn units(&self, payload: u32) -> u32 {
        self.wire_bytes(payload).div_ceil(64)
    }

    /// Credits (64-byte units) per VL of a receive buffer of `bytes`.
    pub fn units_per_vl(&self, bytes: u64) -> u64 {
        bytes / self.vls as u64 / 64
    }

    /// The VL of `sl` under the global map.
    pub fn vl_of(&self, sl: u8) -> u8 {
        match &self.sl2vl {
            Some(m) => m[(sl & 15) as usize],
            None => sl % self.vls,
        }
    }
}

/// One entry of a VL arbitration table: a VL and its weight in 64-byte units
/// (0 = entry unused).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VlArbEntry {
    /// The VL.
    pub vl: u8,
    /// Weight, 0–255, in 64-byte units.
    pub weight: u8,
}

/// The IB VL arbitration tables of an output port (same on every port).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct VlArbitration {
    /// High-priority table (up to 64 entries).
    pub high: Vec<VlArbEntry>,
    /// Low-priority table (up to 64 entries). Empty: every operational VL
    /// with weight 32.
    pub low: Vec<VlArbEntry>,
    /// Limit of High Priority in 4096-byte units; 255 = unlimited, 0 = one
    /// packet. Default 0.
    pub high_limit: u8,
}

impl VlArbitration {
    pub(crate) fn validate(&self, vls: u8) -> Result<(), NetsimError> {
        for (name, t) in [("high", &self.high), ("low", &self.low)] {
            if t.len() > 64 {
                return Err(NetsimError::Config(format!(
                    "VL arbitration {name} table has {} entries (at most 64)",
                    t.len()
                )));
            }
            if let Some(e) = t.iter().find(|e| e.vl >= vls) {
                return Err(NetsimError::Config(format!(
                    "VL arbitration {name} table names VL {} but only {vls} VLs are operational (VL15 is never arbitrated)",
                    e.vl
                )));
            }
        }
        Ok(())
    }

    /// Parses `0:32,1:32` (VL:weight pairs).
    pub fn parse_table(text: &str) -> Result<Vec<VlArbEntry>, NetsimError> {
        let mut out = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (v, w) = part.split_once(':').ok_or_else(|| {
                NetsimError::Config(format!("VL arbitration entry '{part}' is not VL:WEIGHT"))
            })?;
            let vl: u8 = v
                .trim()
                .parse()
                .map_err(|_| NetsimError::Config(format!("bad VL in '{part}'")))?;
            let weight: u8 = w
                .trim()
                .parse()
                .map_err(|_| NetsimError::Config(format!("bad weight in '{part}' (0-255)")))?;
            out.push(VlArbEntry { vl, weight });
        }
        Ok(out)
    }
}

/// What a switch counts as "queued for an output port and VL" when it tests
/// the marking threshold. The switches modelled here are input-buffered, so
/// an output has no queue of its own; the IBA annex speaks of the port's
/// queue, and hardware differs in what it measures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CcDetection {
    /// The packets at the heads of input VL FIFOs that request this output
    /// VL (the output's virtual output queue): only packets that compete for
    /// this output now. Packets stuck deeper in a FIFO behind a packet for
    /// another output are not counted. Default.
    #[default]
    Heads,
    /// Every packet anywhere in the switch's input FIFOs whose routed output
    /// is this port and VL (the reading before issue 18; it counts packets
    /// that are head-of-line blocked by other outputs, so victim-only outputs
    /// mark).
    Buffered,
}

/// Victim_Mask: which switch ports mark while they are victims (could not
/// send for lack of credits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VictimMask {
    /// No port: a credit-starved port never marks.
    None,
    /// Ports whose cable leads to a CA: a CA that consumes slower than its
    /// link is the end of a congestion tree, so the port in front of it
    /// marks although it waits for the CA's credits. Default.
    #[default]
    CaPorts,
    /// Every port.
    All,
}

/// How a CA applies congestion control (CA_Congestion_Setting Port_Control).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaControl {
    /// One CCTI and injection timer per queue pair (Port_Control = 0). Default.
    #[default]
    Qp,
    /// One CCTI and injection timer per (source port, SL), shared by every QP
    /// of the port on that SL (Port_Control = 1; G's setting).
    Sl,
}

/// One Congestion Control Table entry: a 2-bit CCT_Shift and a 14-bit
/// CCT_Multiplier. The injection rate delay is
/// `multiplier × 2^shift × cct-unit` (see [`CcConfig::ird`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CctEntry {
    /// CCT_Shift, 0–3.
    pub shift: u8,
    /// CCT_Multiplier, 0–16383.
    pub multiplier: u16,
}

/// IB congestion control (IBA Annex A10): switch marking, CNP/BECN, CCT at
/// the source. See docs/netsim.md for every reading.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct CcConfig {
    /// Switch marking Threshold 0–15 (0 = never mark; 15 = mark at the
    /// smallest queue). A port/VL is congested when the 64-byte blocks queued
    /// for it (see `detection`) exceed `(16 - threshold)/16` of one input
    /// buffer per VL.
    pub threshold: u8,
    /// Marking_Rate: mark one in `marking_rate + 1` eligible packets of a
    /// congested port/VL.
    pub marking_rate: u16,
    /// Packet_Size: only packets of at least this many payload bytes are
    /// marked.
    pub min_packet_bytes: u32,
    /// Victim_Mask: a congested port that is a victim (it could not send for
    /// lack of credits) marks only when the mask covers it.
    pub victim_mask: VictimMask,
    /// What counts as queued for an output.
    pub detection: CcDetection,
    /// QP-based or SL-based control at the CA.
    pub control: CaControl,
    /// The CA Congestion Setting's Control_Map: bit *s* set = sources react
    /// to BECNs on SL *s*. Switches mark whatever the SL; a source ignores
    /// the BECNs of an SL outside the map, so its packets are never
    /// delayed by congestion control (G §9 A11's "bulk SLs only" reading).
    /// Default every SL.
    pub sl_map: u16,
    /// QPs of a source that talks to many destinations: 0 = one QP per
    /// destination; n = destination mod n.
    pub qps: u32,
    /// CCTI_Increase per BECN.
    pub ccti_increase: u16,
    /// CCTI_Limit: largest CCTI.
    pub ccti_limit: u16,
    /// CCTI_Min: a source jumps to at least this CCTI on a BECN.
    pub ccti_min: u16,
    /// CCTI_Timer in units of 1.024 us: each expiry lowers the CCTI by one.
    pub ccti_timer: u32,
    /// The Congestion Control Table (entry i serves CCTI i); shorter tables
    /// repeat their last entry.
    pub cct: Vec<CctEntry>,
    /// Time of one multiplier step (ps).
    pub cct_unit: Time,
}

impl Default for CcConfig {
    fn default() -> Self {
        // A linear table: 100 ns more per index, 12.7 us at index 127.
        Self {
            threshold: 15,
            marking_rate: 10,
            min_packet_bytes: 512,
            victim_mask: VictimMask::CaPorts,
            detection: CcDetection::Heads,
            control: CaControl::Qp,
            sl_map: 0xffff,
            qps: 0,
            ccti_increase: 1,
            ccti_limit: 127,
            ccti_min: 0,
            ccti_timer: 150,
            cct: (0..128)
                .map(|i| CctEntry {
                    shift: 0,
                    multiplier: i,
                })
                .collect(),
            cct_unit: 100 * NS,
        }
    }
}

/// G §3.2's maximum injection rate delay (≈3.4 ms at shift 0, multiplier
/// 16383): one multiplier step is 3.4 ms / 16383 ≈ 207.5 ns (calibration).
pub const RANADIVE_CCT_UNIT: Time = 3_400 * US / 16_383;

impl CcConfig {
    /// The settings of Ranadive's ResEx/DRX/Sphinx experiments (G Table 5):
    /// CCTI_Timer 32767, CCTI_Increase 10, CCTI_Min 10, CCTI_Limit 127, SL
    /// based. Table 5's shift 0 / multiplier 16383 is read as the entry at
    /// CCTI_Limit (the table's maximum, ≈3.4 ms); the table rises linearly
    /// from 0 at index 0 to it (multiplier round(16383·i/127), shift 0).
    /// Switch-side values are Mellanox's defaults (threshold 15, marking rate
    /// 10, 512-byte minimum), labelled assumptions.
    pub fn ranadive() -> Self {
        let limit = 127u32;
        Self {
            threshold: 15,
            marking_rate: 10,
            min_packet_bytes: 512,
            victim_mask: VictimMask::CaPorts,
            detection: CcDetection::Heads,
            control: CaControl::Sl,
            sl_map: 0xffff,
            qps: 0,
            ccti_increase: 10,
            ccti_limit: limit as u16,
            ccti_min: 10,
            ccti_timer: 32767,
            cct: (0..=limit)
                .map(|i| CctEntry {
                    shift: 0,
                    multiplier: ((16_383 * i + limit / 2) / limit) as u16,
                })
                .collect(),
            cct_unit: RANADIVE_CCT_UNIT,
        }
    }

    pub(crate) fn validate(&self) -> Result<(), NetsimError> {
        let bad = |m: &str| Err(NetsimError::Config(m.into()));
        if self.threshold > 15 {
            return bad("cc threshold must be 0-15");
        }
        if self.cct.is_empty() {
            return bad("cc table (cct) must have at least one entry");
        }
        if let Some(e) = self
            .cct
            .iter()
            .find(|e| e.shift > 3 || e.multiplier > 16_383)
        {
            return Err(NetsimError::Config(format!(
                "cct entry shift {} multiplier {}: shift is 0-3 and multiplier 0-16383",
                e.shift, e.multiplier
            )));
        }
        if self.ccti_timer == 0 || self.ccti_timer > 0xFFFF {
            return bad("ccti-timer must be 1-65535 (units of 1.024 us)");
        }
        if self.ccti_min > self.ccti_limit {
            return bad("ccti-min is above ccti-limit");
        }
        if self.cct_unit == 0 {
            return bad("cct-unit must be positive");
        }
        Ok(())
    }

    /// The timer period in picoseconds.
    pub fn timer_period(&self) -> Time {
        self.ccti_timer as Time * 1_024 * NS
    }

    /// The injection rate delay at index `ccti`:
    /// `CCT_Multiplier × 2^CCT_Shift × cct-unit` of entry `min(ccti, last)`.
    pub fn ird(&self, ccti: u16) -> Time {
        let e = self.cct[(ccti as usize).min(self.cct.len() - 1)];
        ((e.multiplier as Time) << e.shift) * self.cct_unit
    }
}

/// Usable payload rate of a PCIe link in Gb/s: lanes × GT/s × encoding ×
/// MPS/(MPS + 24 bytes of TLP framing, header and LCRC) × (1 − DLLP share).
///
/// ```
/// use ibcloud_netsim::config::pcie_gbps;
/// let g = pcie_gbps(1, 8, 128, 0.04);   // ConnectX DDR on PCIe 1.1 x8
/// assert!((g - 12.93).abs() < 0.01);
/// ```
pub fn pcie_gbps(gen: u8, lanes: u32, max_payload: u32, dllp_share: f64) -> f64 {
    let (gts, enc) = match gen {
        1 => (2.5, 0.8),
        2 => (5.0, 0.8),
        3 => (8.0, 128.0 / 130.0),
        4 => (16.0, 128.0 / 130.0),
        _ => (32.0, 128.0 / 130.0),
    };
    let raw = lanes as f64 * gts * enc;
    raw * max_payload as f64 / (max_payload as f64 + 24.0) * (1.0 - dllp_share)
}

/// Default end of a run when none is given.
pub const DEFAULT_END: Time = MS;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_reject_bad_values() {
        let c = SimConfig::default();
        c.validate().unwrap();
        assert_eq!(c.units(2048), 33);
        assert_eq!(c.units_per_vl(32768), 512);
        let mut b = c.clone();
        b.mtu = 3000;
        assert!(b.validate().is_err());
        let mut b = c.clone();
        b.vl_arbitration.low = VlArbitration::parse_table("0:32,1:32").unwrap();
        assert!(b.validate().is_err());
        b.vls = 2;
        b.validate().unwrap();
        assert!(VlArbitration::parse_table("0-32").is_err());
        let j = serde_json::to_string(&c).unwrap();
        let back: SimConfig = serde_json::from_str(&j).unwrap();
        assert_eq!(back, c);
        assert!(serde_json::from_str::<SimConfig>("{\"mtuu\": 5}").is_err());
        let cc = CcConfig::ranadive();
        assert_eq!(cc.ird(0), 0);
        assert_eq!(cc.ird(500), 16_383 * RANADIVE_CCT_UNIT);
        assert!((cc.ird(127) as f64 / (3_400 * US) as f64 - 1.0).abs() < 1e-3);
        // Linear from 0: index 10 (CCTI_Min) is 10/127 of the maximum.
        assert_eq!(cc.cct[10].multiplier, 1290);
        assert_eq!(CcConfig::default().ird(5), 500 * NS);
        let mut b = CcConfig::default();
        b.cct[3].shift = 4;
        assert!(b.validate().is_err());
        assert_eq!(cc.timer_period(), 32767 * 1024 * NS);
    }
}
