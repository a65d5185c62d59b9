//! What the simulator applies, derived from what the SM programs.
//!
//! The simulator has one VL arbitration table, one SL2VL map and one
//! congestion-control setting for every port, so a policy converts only
//! when the settings it asks for are the same on every port class and on
//! every congestion-controlled SL; anything else is an error rather than a
//! silent approximation.

use crate::model::{FabricCc, FabricQos, Policy, PortClass, PortMask};
use ibcloud_netsim::config::RANADIVE_CCT_UNIT;
use ibcloud_netsim::time::Time;
use ibcloud_netsim::{CaControl, CcConfig, SimConfig, VictimMask, VlArbitration};

/// The simulator's view of a policy's QoS.
#[derive(Clone, Debug, PartialEq)]
pub struct SimQos {
    /// Operational data VLs.
    pub vls: u8,
    /// VL arbitration of every output port.
    pub vl_arbitration: VlArbitration,
    /// SL → VL.
    pub sl2vl: [u8; 16],
}

impl FabricQos {
    /// The tables of the simulator: those of CA ports and switch external
    /// ports, which must agree (the simulator has one table for both).
    pub fn to_sim(&self) -> Result<SimQos, String> {
        self.validate().map_err(|(c, f, m)| {
            let who = c.map_or("qos".to_string(), |c| format!("qos.{}", c.names().1));
            format!("{who}.{f}: {m}")
        })?;
        let ca = self.effective(PortClass::Ca);
        let swe = self.effective(PortClass::Swe);
        if ca != swe {
            return Err(
                "the simulator applies one set of QoS tables to every port, but CA ports and switch external ports differ"
                    .into(),
            );
        }
        if let Some(sl) = ca.sl2vl.iter().position(|&v| v == 15) {
            return Err(format!(
                "SL {sl} maps to VL15 (drop): the simulator has no dropping SL"
            ));
        }
        Ok(SimQos {
            vls: ca.max_vls,
            vl_arbitration: VlArbitration {
                high: ca.vlarb_high,
                low: ca.vlarb_low,
                high_limit: ca.high_limit,
            },
            sl2vl: ca.sl2vl,
        })
    }
}

impl FabricCc {
    /// The simulator's congestion control. The simulator applies one CA
    /// setting to every SL the Control_Map covers (the others never react to
    /// BECNs), so the entries of the covered SLs among `used_sls` must agree. `cct_unit` is the time of one
    /// CCT multiplier step (not an IBA quantity; [`RANADIVE_CCT_UNIT`] by
    /// default).
    pub fn to_sim(&self, used_sls: &[u8], cct_unit: Option<Time>) -> Result<CcConfig, String> {
        self.validate().map_err(|(f, m)| format!("cc.{f}: {m}"))?;
        let s = &self.switch;
        if s.control_map & 0b1_0100 != 0b1_0100 {
            return Err(format!(
                "cc.switch.control-map {:#x}: the simulator needs bit 2 (threshold, packet size) and bit 4 (marking rate) set",
                s.control_map
            ));
        }
        if s.control_map & 0b1000 != 0 && s.cs_threshold != 0 && s.credit_mask != PortMask::None {
            return Err("cc.switch: the simulator does not model credit starvation (credit-mask, credit-starvation-threshold)".into());
        }
        let victim_mask = if s.control_map & 1 == 0 {
            VictimMask::None
        } else {
            match &s.victim_mask {
                PortMask::None => VictimMask::None,
                PortMask::All => VictimMask::All,
                PortMask::Ports(_) => return Err(
                    "cc.switch.victim-mask: the simulator takes none or all ports, not a port list"
                        .into(),
                ),
            }
        };
        // The Control_Map's SLs react to BECNs with one shared setting; the
        // others do not react at all (netsim's `sl_map`).
        let mut chosen = None;
        for &sl in used_sls {
            let sl = sl & 15;
            if self.ca.control_map & (1 << sl) == 0 {
                continue;
            }
            let e = self.ca.entries[sl as usize];
            match chosen {
                None => chosen = Some(e),
                Some(c) if c != e => {
                    return Err(format!(
                        "cc.ca: SL {sl}'s entry differs from another controlled SL's, but the simulator applies one setting to every controlled SL"
                    ))
                }
                _ => {}
            }
        }
        let e = chosen.unwrap_or(self.ca.entries[0]);
        if e.ccti_timer == 0 {
            return Err(
                "cc.ca.ccti-timer: 0 (the simulator needs a running timer, 1-65535)".into(),
            );
        }
        Ok(CcConfig {
            threshold: s.threshold,
            marking_rate: s.marking_rate,
            min_packet_bytes: s.packet_size as u32 * 64,
            victim_mask,
            control: if self.ca.sl_based {
                CaControl::Sl
            } else {
                CaControl::Qp
            },
            sl_map: self.ca.control_map,
            ccti_increase: e.ccti_increase as u16,
            ccti_limit: self.ccti_limit(),
            ccti_min: e.ccti_min as u16,
            ccti_timer: e.ccti_timer as u32,
            cct: self.cct.clone(),
            cct_unit: cct_unit.unwrap_or(RANADIVE_CCT_UNIT),
            ..CcConfig::default()
        })
    }
}

impl Policy {
    /// Applies the policy to `cfg` as the SM would program the fabric: VLs,
    /// VL arbitration, SL2VL and congestion control (on the SLs the QoS
    /// maps to data VLs, i.e. every SL). The result is checked by
    /// [`SimConfig::validate`].
    pub fn apply_to(&self, cfg: &SimConfig) -> Result<SimConfig, String> {
        let mut out = cfg.clone();
        if let Some(q) = &self.qos {
            let s = q.to_sim()?;
            out.vls = s.vls;
            out.vl_arbitration = s.vl_arbitration;
            out.sl2vl = Some(s.sl2vl);
        }
        if let Some(cc) = &self.cc {
            let used: Vec<u8> = (0..16).collect();
            let unit = cfg.congestion_control.as_ref().map(|c| c.cct_unit);
            out.congestion_control = Some(cc.to_sim(&used, unit)?);
        }
        out.validate().map_err(|e| e.to_string())?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::preset::{CcSls, Preset};
    use ibcloud_netsim::{CcConfig, SimConfig};

    #[test]
    fn presets_reach_the_simulator_as_table_5_and_6() {
        let q = Preset::StMaxQ.qos().to_sim().unwrap();
        assert_eq!(q.vls, 2);
        assert_eq!(q.sl2vl[0], 0);
        assert_eq!(q.sl2vl[1], 1);
        assert_eq!(q.vl_arbitration.low[0].weight, 254);
        let cc = Preset::StMax.cc(CcSls::All).to_sim(&[0, 1], None).unwrap();
        let g = CcConfig::ranadive();
        // Everything of G Table 5 and the CCT agree with the simulator's own
        // preset; only the victim mask is a different (documented) reading.
        assert_eq!(
            (
                cc.ccti_timer,
                cc.ccti_increase,
                cc.ccti_min,
                cc.ccti_limit,
                &cc.cct
            ),
            (
                g.ccti_timer,
                g.ccti_increase,
                g.ccti_min,
                g.ccti_limit,
                &g.cct
            )
        );
        assert_eq!(
            (
                cc.threshold,
                cc.marking_rate,
                cc.min_packet_bytes,
                cc.control
            ),
            (g.threshold, g.marking_rate, g.min_packet_bytes, g.control)
        );
        assert_eq!(cc.cct_unit, g.cct_unit);
        let applied = Preset::DrxMaxQ
            .policy(CcSls::All)
            .apply_to(&SimConfig::default())
            .unwrap();
        assert_eq!(applied.vls, 2);
        assert!(applied.congestion_control.is_some());
    }

    #[test]
    fn bulk_only_cc_leaves_sl0_out_of_the_simulators_map() {
        let cc = Preset::StMax.cc(CcSls::Bulk).to_sim(&[0, 1], None).unwrap();
        assert_eq!(cc.sl_map & 1, 0, "{:#x}", cc.sl_map);
        assert_ne!(cc.sl_map & 2, 0, "{:#x}", cc.sl_map);
        let all = Preset::StMax.cc(CcSls::All).to_sim(&[0, 1], None).unwrap();
        assert_eq!(all.sl_map & 3, 3);
    }

    #[test]
    fn differing_port_classes_are_refused() {
        let mut q = Preset::StMax.qos();
        q.class_mut(crate::PortClass::Ca).high_limit = Some(4);
        assert!(q.to_sim().unwrap_err().contains("differ"));
    }
}
