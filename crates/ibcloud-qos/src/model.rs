//! The settings an SM programs: QoS tables per OpenSM port class and the
//! congestion-control attributes of IBA Annex A10, each checked against the
//! limits of the specification and of OpenSM 3.3.23.

use ibcloud_netsim::{CctEntry, VlArbEntry};

/// VL arbitration tables hold at most 64 entries: two 32-entry blocks of
/// the VLArbitrationTable attribute per priority (IBA 14.2.5.9); OpenSM's
/// `qos_vlarb_*` strings take the same 64 `VL:weight` pairs.
pub const MAX_VLARB_ENTRIES: usize = 64;

/// OpenSM 3.3.23 keeps at most 128 CCT entries (`OSM_CCT_ENTRY_MAX`, two
/// 64-entry CongestionControlTable blocks) and sets CCTI_Limit to the
/// number of entries minus one.
pub const MAX_CCT_ENTRIES: usize = 128;

/// Data VLs are VL0–VL14; VL15 is management and never arbitrated.
pub const MAX_DATA_VLS: u8 = 15;

/// The kinds of port OpenSM programs with their own QoS options
/// (`qos_ca_*`, `qos_sw0_*`, `qos_swe_*`, `qos_rtr_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PortClass {
    /// Channel adapter ports.
    Ca,
    /// Enhanced switch port 0.
    Sw0,
    /// Switch external ports.
    Swe,
    /// Router ports.
    Rtr,
}

impl PortClass {
    /// All classes in OpenSM's order.
    pub const ALL: [PortClass; 4] = [
        PortClass::Ca,
        PortClass::Sw0,
        PortClass::Swe,
        PortClass::Rtr,
    ];

    /// The OpenSM option prefix (`qos_ca`, …) and the TOML table name (`ca`, …).
    pub fn names(self) -> (&'static str, &'static str) {
        match self {
            PortClass::Ca => ("qos_ca", "ca"),
            PortClass::Sw0 => ("qos_sw0", "sw0"),
            PortClass::Swe => ("qos_swe", "swe"),
            PortClass::Rtr => ("qos_rtr", "rtr"),
        }
    }
}

/// The QoS tables of one port class, complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QosTables {
    /// Data VLs the policy uses (1–15). OpenSM 3.3.23 parses `qos_max_vls`
    /// but programs operational VLs from `max_op_vls`; both are written.
    pub max_vls: u8,
    /// Limit of High-Priority (PortInfo:VLHighLimit), 0–255, in 4096-byte
    /// units; 255 = unlimited.
    pub high_limit: u8,
    /// High-priority VL arbitration table (VL, weight in 64-byte units).
    pub vlarb_high: Vec<VlArbEntry>,
    /// Low-priority VL arbitration table.
    pub vlarb_low: Vec<VlArbEntry>,
    /// SL → VL (VL15 drops the SL's packets).
    pub sl2vl: [u8; 16],
}

impl QosTables {
    /// OpenSM 3.3.23's built-in defaults (osm_base.h): 15 VLs, high limit 0,
    /// VL0 high with weight 4, VL1–14 low with weight 4, SL i → VL i but
    /// SL15 → VL7.
    pub fn opensm_default() -> Self {
        let mut sl2vl = [0u8; 16];
        for (sl, vl) in sl2vl.iter_mut().enumerate() {
            *vl = sl as u8;
        }
        sl2vl[15] = 7;
        QosTables {
            max_vls: 15,
            high_limit: 0,
            vlarb_high: (0..15)
                .map(|vl| VlArbEntry {
                    vl,
                    weight: if vl == 0 { 4 } else { 0 },
                })
                .collect(),
            vlarb_low: (0..15)
                .map(|vl| VlArbEntry {
                    vl,
                    weight: if vl == 0 { 0 } else { 4 },
                })
                .collect(),
            sl2vl,
        }
    }

    /// Checks every limit; the error names the field (`vlarb-low`, …).
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        check_max_vls(self.max_vls as i64).map_err(|m| ("max-vls", m))?;
        check_vlarb(&self.vlarb_high, self.max_vls).map_err(|m| ("vlarb-high", m))?;
        check_vlarb(&self.vlarb_low, self.max_vls).map_err(|m| ("vlarb-low", m))?;
        check_sl2vl(&self.sl2vl, self.max_vls).map_err(|m| ("sl2vl", m))?;
        Ok(())
    }

    /// The `max_op_vls` code OpenSM needs so that at least `max_vls` data
    /// VLs are operational (PortInfo:OperationalVLs: 1 = VL0, 2 = VL0–1,
    /// 3 = VL0–3, 4 = VL0–7, 5 = VL0–14).
    pub fn op_vls_code(&self) -> u8 {
        match self.max_vls {
            0 | 1 => 1,
            2 => 2,
            3..=4 => 3,
            5..=8 => 4,
            _ => 5,
        }
    }
}

/// Per-class changes to the default tables (OpenSM falls back to the
/// `qos_*` value for every field a class does not set).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QosOverride {
    /// `qos_<class>_max_vls`.
    pub max_vls: Option<u8>,
    /// `qos_<class>_high_limit`.
    pub high_limit: Option<u8>,
    /// `qos_<class>_vlarb_high`.
    pub vlarb_high: Option<Vec<VlArbEntry>>,
    /// `qos_<class>_vlarb_low`.
    pub vlarb_low: Option<Vec<VlArbEntry>>,
    /// `qos_<class>_sl2vl`.
    pub sl2vl: Option<[u8; 16]>,
}

impl QosOverride {
    /// True when it changes nothing.
    pub fn is_empty(&self) -> bool {
        *self == QosOverride::default()
    }
}

/// Fabric QoS as OpenSM configures it: default tables plus per-port-class
/// overrides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FabricQos {
    /// The `qos_*` options.
    pub default: QosTables,
    /// `qos_ca_*`, `qos_sw0_*`, `qos_swe_*`, `qos_rtr_*` (in [`PortClass::ALL`] order).
    pub classes: [QosOverride; 4],
}

impl FabricQos {
    /// The same tables on every port.
    pub fn uniform(tables: QosTables) -> Self {
        FabricQos {
            default: tables,
            classes: Default::default(),
        }
    }

    /// The override of `class`.
    pub fn class(&self, class: PortClass) -> &QosOverride {
        &self.classes[class as usize]
    }

    /// Mutable override of `class`.
    pub fn class_mut(&mut self, class: PortClass) -> &mut QosOverride {
        &mut self.classes[class as usize]
    }

    /// What OpenSM programs on ports of `class` (override, else default).
    pub fn effective(&self, class: PortClass) -> QosTables {
        let o = self.class(class);
        let d = &self.default;
        QosTables {
            max_vls: o.max_vls.unwrap_or(d.max_vls),
            high_limit: o.high_limit.unwrap_or(d.high_limit),
            vlarb_high: o.vlarb_high.clone().unwrap_or_else(|| d.vlarb_high.clone()),
            vlarb_low: o.vlarb_low.clone().unwrap_or_else(|| d.vlarb_low.clone()),
            sl2vl: o.sl2vl.unwrap_or(d.sl2vl),
        }
    }

    /// Checks the default and every class's effective tables; the error
    /// names the class (`None` = default) and the field.
    pub fn validate(&self) -> Result<(), (Option<PortClass>, &'static str, String)> {
        self.default.validate().map_err(|(f, m)| (None, f, m))?;
        for c in PortClass::ALL {
            self.effective(c)
                .validate()
                .map_err(|(f, m)| (Some(c), f, m))?;
        }
        Ok(())
    }

    /// The largest `max_vls` of any class (what `max_op_vls` must allow).
    pub fn max_vls(&self) -> u8 {
        PortClass::ALL
            .iter()
            .map(|&c| self.effective(c).max_vls)
            .max()
            .unwrap_or(self.default.max_vls)
    }
}

/// A 256-bit switch port mask of SwitchCongestionSetting (bit n = port n;
/// bit 255 reserved).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortMask {
    /// No port.
    None,
    /// Every port 0–254.
    All,
    /// These ports (0–254), sorted, without duplicates.
    Ports(Vec<u8>),
}

impl PortMask {
    /// The mask as 32 bytes, most significant first (OpenSM's order).
    pub fn bytes(&self) -> [u8; 32] {
        let mut b = [0u8; 32];
        let mut set = |p: u8| b[31 - (p as usize / 8)] |= 1 << (p % 8);
        match self {
            PortMask::None => {}
            PortMask::All => (0..=254).for_each(&mut set),
            PortMask::Ports(ps) => ps.iter().copied().for_each(set),
        }
        b
    }
}

/// SwitchCongestionSetting (IBA A10.4.3.7), as OpenSM sends it to every switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchCongestion {
    /// Control_Map: which fields the switch applies (bit 0 victim mask,
    /// 1 credit mask, 2 threshold + packet size, 3 credit-starvation
    /// threshold + return delay, 4 marking rate).
    pub control_map: u32,
    /// Victim_Mask: ports that mark although they are victims.
    pub victim_mask: PortMask,
    /// Credit_Mask: ports that apply credit starvation.
    pub credit_mask: PortMask,
    /// Threshold 0–15 (0 none … 15 most aggressive).
    pub threshold: u8,
    /// Packet_Size in 64-byte credits: smaller packets are never marked.
    pub packet_size: u8,
    /// CS_Threshold 0–15.
    pub cs_threshold: u8,
    /// CS_ReturnDelay as a CCT entry (shift:multiplier).
    pub cs_return_delay: CctEntry,
    /// Marking_Rate: mean packets between markings.
    pub marking_rate: u16,
}

/// One CACongestionEntry (per SL).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaCongestionEntry {
    /// CCTI_Timer, units of 1.024 us.
    pub ccti_timer: u16,
    /// CCTI_Increase per BECN.
    pub ccti_increase: u8,
    /// Trigger_Threshold: CCTI at which the CA logs an event.
    pub trigger_threshold: u8,
    /// CCTI_Min.
    pub ccti_min: u8,
}

/// CACongestionSetting (IBA A10.4.3.9), as OpenSM sends it to every CA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaCongestion {
    /// Port_Control bit 0: false = QP based, true = SL (port) based.
    pub sl_based: bool,
    /// Control_Map: the SLs whose entries apply (bit n = SL n).
    pub control_map: u16,
    /// The 16 per-SL entries.
    pub entries: [CaCongestionEntry; 16],
}

/// Fabric congestion control as OpenSM configures it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FabricCc {
    /// CC_Key OpenSM uses (it does not set a new one).
    pub cc_key: u64,
    /// `cc_max_outstanding_mads`.
    pub max_outstanding_mads: u32,
    /// Switch congestion setting.
    pub switch: SwitchCongestion,
    /// CA congestion setting.
    pub ca: CaCongestion,
    /// The Congestion Control Table; CCTI_Limit is its length minus one.
    pub cct: Vec<CctEntry>,
}

impl FabricCc {
    /// CCTI_Limit as OpenSM programs it: entries − 1.
    pub fn ccti_limit(&self) -> u16 {
        self.cct.len().saturating_sub(1) as u16
    }

    /// Checks every limit; the error names the field.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let s = &self.switch;
        if s.control_map > 0x1F {
            return Err((
                "switch.control-map",
                format!(
                    "{:#x} sets bits above 4 (only 0-4 are defined)",
                    s.control_map
                ),
            ));
        }
        check_nibble(s.threshold as i64).map_err(|m| ("switch.threshold", m))?;
        check_nibble(s.cs_threshold as i64)
            .map_err(|m| ("switch.credit-starvation-threshold", m))?;
        check_cct_entry(s.cs_return_delay)
            .map_err(|m| ("switch.credit-starvation-return-delay", m))?;
        for (name, mask) in [
            ("switch.victim-mask", &s.victim_mask),
            ("switch.credit-mask", &s.credit_mask),
        ] {
            if let PortMask::Ports(ps) = mask {
                if let Some(p) = ps.iter().find(|&&p| p == 255) {
                    return Err((name, format!("port {p}: bit 255 is reserved (ports 0-254)")));
                }
            }
        }
        for (sl, e) in self.ca.entries.iter().enumerate() {
            if self.ca.control_map & (1 << sl) != 0
                && e.ccti_min as usize > self.ccti_limit() as usize
            {
                return Err((
                    "ca.ccti-min",
                    format!(
                        "SL {sl}: CCTI_Min {} is above CCTI_Limit {} (the CCT has {} entries)",
                        e.ccti_min,
                        self.ccti_limit(),
                        self.cct.len()
                    ),
                ));
            }
        }
        check_cct(&self.cct).map_err(|m| ("cct", m))
    }
}

/// A whole policy file: QoS, congestion control or both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Name (the preset's, or the file's stem).
    pub name: String,
    /// QoS settings, if any.
    pub qos: Option<FabricQos>,
    /// Congestion-control settings, if any.
    pub cc: Option<FabricCc>,
}

pub(crate) fn check_max_vls(v: i64) -> Result<u8, String> {
    if (1..=MAX_DATA_VLS as i64).contains(&v) {
        Ok(v as u8)
    } else {
        Err(format!(
            "{v} data VLs: must be 1-15 (VL0-VL14; VL15 is management)"
        ))
    }
}

pub(crate) fn check_nibble(v: i64) -> Result<u8, String> {
    if (0..=15).contains(&v) {
        Ok(v as u8)
    } else {
        Err(format!("{v} is out of range 0-15 (a 4-bit field)"))
    }
}

pub(crate) fn check_vlarb(t: &[VlArbEntry], max_vls: u8) -> Result<(), String> {
    if t.len() > MAX_VLARB_ENTRIES {
        return Err(format!(
            "{} entries: a VL arbitration table holds at most {MAX_VLARB_ENTRIES} (two 32-entry blocks)",
            t.len()
        ));
    }
    if let Some((i, e)) = t.iter().enumerate().find(|(_, e)| e.vl >= max_vls) {
        return Err(format!(
            "entry {} names VL {} but the policy has {max_vls} data VL(s) (VL0-VL{}); VL15 is never arbitrated",
            i + 1,
            e.vl,
            max_vls - 1
        ));
    }
    Ok(())
}

pub(crate) fn check_sl2vl(m: &[u8; 16], max_vls: u8) -> Result<(), String> {
    if let Some((sl, vl)) = m.iter().enumerate().find(|(_, &v)| v != 15 && v >= max_vls) {
        return Err(format!(
            "SL {sl} maps to VL {vl} but the policy has {max_vls} data VL(s) (VL0-VL{}; 15 drops the SL)",
            max_vls - 1
        ));
    }
    Ok(())
}

pub(crate) fn check_cct_entry(e: CctEntry) -> Result<(), String> {
    if e.shift > 3 || e.multiplier > 16_383 {
        return Err(format!(
            "shift {} multiplier {}: CCT_Shift is 0-3 (2 bits) and CCT_Multiplier 0-16383 (14 bits)",
            e.shift, e.multiplier
        ));
    }
    Ok(())
}

pub(crate) fn check_cct(cct: &[CctEntry]) -> Result<(), String> {
    if cct.is_empty() {
        return Err("the table needs at least one entry (CCTI_Limit = entries - 1)".into());
    }
    if cct.len() > MAX_CCT_ENTRIES {
        return Err(format!(
            "{} entries: OpenSM 3.3.23 programs at most {MAX_CCT_ENTRIES} (CCTI_Limit <= 127)",
            cct.len()
        ));
    }
    for (i, e) in cct.iter().enumerate() {
        check_cct_entry(*e).map_err(|m| format!("entry {i}: {m}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_are_big_endian_bit_per_port() {
        let b = PortMask::Ports(vec![0, 1, 9]).bytes();
        assert_eq!(b[31], 0b11);
        assert_eq!(b[30], 0b10);
        let all = PortMask::All.bytes();
        assert_eq!(all[0], 0x7F);
        assert!(all[1..].iter().all(|&x| x == 0xFF));
        assert_eq!(PortMask::None.bytes(), [0u8; 32]);
    }

    #[test]
    fn op_vls_code_covers_max_vls() {
        for v in 1..=15u8 {
            let mut t = QosTables::opensm_default();
            t.max_vls = v;
            let code = t.op_vls_code();
            let data_vls = 1u32 << (code - 1);
            assert!(data_vls.min(15) >= v as u32, "{v} -> {code}");
            if code > 1 {
                assert!((1u32 << (code - 2)) < v as u32);
            }
        }
    }

    #[test]
    fn opensm_defaults_validate_and_overrides_fall_back() {
        let mut q = FabricQos::uniform(QosTables::opensm_default());
        assert!(q.validate().is_ok());
        q.class_mut(PortClass::Ca).high_limit = Some(9);
        assert_eq!(q.effective(PortClass::Ca).high_limit, 9);
        assert_eq!(q.effective(PortClass::Swe).high_limit, 0);
        q.class_mut(PortClass::Swe).max_vls = Some(1);
        let e = q.validate().unwrap_err();
        assert_eq!((e.0, e.1), (Some(PortClass::Swe), "vlarb-high"));
    }
}
