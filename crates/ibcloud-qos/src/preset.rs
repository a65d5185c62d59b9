//! The hardware policies of Ranadive's DRX evaluation (G Table 6 with the
//! IBCC values of G Table 5). Every reading the thesis leaves open is named
//! here and in docs/qos.md.

use crate::model::{
    CaCongestion, CaCongestionEntry, FabricCc, FabricQos, Policy, PortMask, QosTables,
    SwitchCongestion,
};
use ibcloud_netsim::{CcConfig, CctEntry, VlArbEntry};

/// The four static hardware policies of G Table 4/6.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// CC on, QoS SL0→VL0, SL1→VL1, weights 32:32.
    StMax,
    /// CC on, weights 254:1 (SL0, the transactional SL, favoured).
    StMaxQ,
    /// As StMax; DRX pushes the CC values only on an SLA violation.
    DrxMax,
    /// As StMaxQ; DRX pushes the CC values only on an SLA violation.
    DrxMaxQ,
}

/// G §9 A11: which SLs get congestion control in the "Max" policies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CcSls {
    /// Every SL, SL0 (transactional) and SL1 (everything else) alike ("all
    /// VMs equally"). Default.
    #[default]
    All,
    /// Every SL but SL0: the bulk traffic is throttled, the transactional
    /// SL0 is not.
    Bulk,
}

impl CcSls {
    /// Parses `all` / `bulk`.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "all" => Some(CcSls::All),
            "bulk" => Some(CcSls::Bulk),
            _ => None,
        }
    }

    /// The CA Control_Map.
    pub fn control_map(self) -> u16 {
        match self {
            CcSls::All => 0xFFFF,
            CcSls::Bulk => 0xFFFE,
        }
    }
}

impl Preset {
    /// Every preset with its name.
    pub const ALL: [(&'static str, Preset); 4] = [
        ("stmax", Preset::StMax),
        ("stmaxq", Preset::StMaxQ),
        ("drxmax", Preset::DrxMax),
        ("drxmaxq", Preset::DrxMaxQ),
    ];

    /// The preset called `name` (case-insensitive).
    pub fn by_name(name: &str) -> Option<Preset> {
        let n = name.trim().to_ascii_lowercase();
        Self::ALL.iter().find(|(k, _)| *k == n).map(|&(_, p)| p)
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, p)| *p == self)
            .map(|(k, _)| *k)
            .unwrap_or("?")
    }

    /// VL0 and VL1 weights of G Table 6.
    pub fn weights(self) -> (u8, u8) {
        match self {
            Preset::StMax | Preset::DrxMax => (32, 32),
            Preset::StMaxQ | Preset::DrxMaxQ => (254, 1),
        }
    }

    /// Table 6's QoS: two data VLs, SL0→VL0 and every other SL→VL1 ("SL1
    /// carries everything else"); both weights in the low-priority table,
    /// high-priority table empty, high limit 0 (reading: Table 6 gives
    /// weights only, and a VL in the high table would be served first
    /// regardless of them).
    pub fn qos(self) -> FabricQos {
        let (w0, w1) = self.weights();
        let mut sl2vl = [1u8; 16];
        sl2vl[0] = 0;
        FabricQos::uniform(QosTables {
            max_vls: 2,
            high_limit: 0,
            vlarb_high: Vec::new(),
            vlarb_low: vec![
                VlArbEntry { vl: 0, weight: w0 },
                VlArbEntry { vl: 1, weight: w1 },
            ],
            sl2vl,
        })
    }

    /// Table 5's IBCC values: SL based; CCTI_Timer 32767, CCTI_Increase 10,
    /// Trigger_Threshold 100, CCTI_Min 10 on the SLs of `sls`; the CCT of
    /// [`CcConfig::ranadive`] (128 entries, so CCTI_Limit 127, rising to
    /// shift 0 / multiplier 16383). Switch values are labelled assumptions
    /// (Mellanox defaults, G §3.2): threshold 15, marking rate 10, packet
    /// size 8 credits (512 bytes), every port may mark as a victim, no
    /// credit starvation.
    pub fn cc(self, sls: CcSls) -> FabricCc {
        let sim = CcConfig::ranadive();
        let entry = CaCongestionEntry {
            ccti_timer: 32767,
            ccti_increase: 10,
            trigger_threshold: 100,
            ccti_min: 10,
        };
        let map = sls.control_map();
        let mut entries = [CaCongestionEntry::default(); 16];
        for (sl, e) in entries.iter_mut().enumerate() {
            if map & (1 << sl) != 0 {
                *e = entry;
            }
        }
        FabricCc {
            cc_key: 0,
            max_outstanding_mads: 500,
            switch: SwitchCongestion {
                control_map: 0b1_0101,
                victim_mask: PortMask::All,
                credit_mask: PortMask::None,
                threshold: sim.threshold,
                packet_size: (sim.min_packet_bytes / 64) as u8,
                cs_threshold: 0,
                cs_return_delay: CctEntry::default(),
                marking_rate: sim.marking_rate,
            },
            ca: CaCongestion {
                sl_based: true,
                control_map: map,
                entries,
            },
            cct: sim.cct,
        }
    }

    /// The whole policy.
    pub fn policy(self, sls: CcSls) -> Policy {
        Policy {
            name: self.name().to_string(),
            qos: Some(self.qos()),
            cc: Some(self.cc(sls)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_follow_tables_5_and_6() {
        for (name, p) in Preset::ALL {
            assert_eq!(Preset::by_name(&name.to_uppercase()), Some(p));
            let pol = p.policy(CcSls::All);
            let q = pol.qos.unwrap();
            q.validate().unwrap();
            let t = q.effective(crate::PortClass::Ca);
            assert_eq!(&t.sl2vl[..2], &[0, 1]);
            let w: Vec<u8> = t.vlarb_low.iter().map(|e| e.weight).collect();
            assert_eq!(w, [p.weights().0, p.weights().1]);
            let cc = pol.cc.unwrap();
            cc.validate().unwrap();
            assert_eq!(cc.ccti_limit(), 127);
            assert_eq!(
                cc.cct.last().copied(),
                Some(CctEntry {
                    shift: 0,
                    multiplier: 16383
                })
            );
            assert_eq!(cc.ca.entries[1].ccti_timer, 32767);
            assert_eq!(cc.ca.entries[0].ccti_min, 10);
        }
        assert_eq!(Preset::StMaxQ.weights(), (254, 1));
        let bulk = Preset::StMax.cc(CcSls::Bulk);
        assert_eq!(bulk.ca.control_map, 0xFFFE);
        assert_eq!(bulk.ca.entries[0], CaCongestionEntry::default());
    }
}
