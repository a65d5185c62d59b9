//! The SMP attributes the SM reads and writes, each as a validated Repr with
//! `parse` (from the 64 data bytes) and `emit` (into them). Layouts follow
//! IBA 1.3 §14.2.5 (byte offsets inside the attribute, big-endian).
//!
//! PortInfo keeps the bytes it was parsed from: the SM sets a port by
//! changing a few fields of what the port reported (read-modify-write, as
//! OpenSM does), so fields this crate does not model survive unchanged.

use super::smp::SMP_DATA_LEN;
use crate::error::WireError;
use ibcloud_fabric::{LinkRate, LinkSpeed, LinkWidth};

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}
fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn be64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(a)
}

fn need(what: &'static str, b: &[u8], n: usize) -> Result<(), WireError> {
    if b.len() < n {
        return Err(WireError::Truncated {
            what,
            need: n,
            got: b.len(),
        });
    }
    Ok(())
}

/// NodeType of NodeInfo.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeType {
    /// Channel adapter (1).
    Ca,
    /// Switch (2).
    Switch,
    /// Router (3).
    Router,
}

/// NodeInfo (attribute 0x0011, 40 bytes used).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeInfoRepr {
    /// Node type.
    pub node_type: NodeType,
    /// Number of external ports.
    pub num_ports: u8,
    /// System image GUID.
    pub system_image_guid: u64,
    /// Node GUID.
    pub node_guid: u64,
    /// GUID of the port the SMP arrived on (switch: port 0's).
    pub port_guid: u64,
    /// Partition table capacity.
    pub partition_cap: u16,
    /// Device id.
    pub device_id: u16,
    /// Revision.
    pub revision: u32,
    /// The port the SMP arrived on.
    pub local_port: u8,
    /// IEEE vendor id (24 bits).
    pub vendor_id: u32,
}

impl NodeInfoRepr {
    /// Parses NodeInfo data.
    pub fn parse(b: &[u8]) -> Result<Self, WireError> {
        need("NodeInfo", b, 40)?;
        let node_type = match b[2] {
            1 => NodeType::Ca,
            2 => NodeType::Switch,
            3 => NodeType::Router,
            t => {
                return Err(WireError::Malformed {
                    what: "NodeInfo",
                    problem: format!("node type {t}"),
                })
            }
        };
        if b[3] == 0 || b[3] == 255 {
            return Err(WireError::Malformed {
                what: "NodeInfo",
                problem: format!("{} ports", b[3]),
            });
        }
        if b[36] > b[3] {
            return Err(WireError::Malformed {
                what: "NodeInfo",
                problem: format!("local port {} of {} ports", b[36], b[3]),
            });
        }
        Ok(Self {
            node_type,
            num_ports: b[3],
            system_image_guid: be64(b, 4),
            node_guid: be64(b, 12),
            port_guid: be64(b, 20),
            partition_cap: be16(b, 28),
            device_id: be16(b, 30),
            revision: be32(b, 32),
            local_port: b[36],
            vendor_id: be32(b, 36) & 0x00ff_ffff,
        })
    }

    /// Writes NodeInfo data (BaseVersion 1, ClassVersion 1).
    pub fn emit(&self, b: &mut [u8; SMP_DATA_LEN]) {
        b.fill(0);
        b[0] = 1;
        b[1] = 1;
        b[2] = match self.node_type {
            NodeType::Ca => 1,
            NodeType::Switch => 2,
            NodeType::Router => 3,
        };
        b[3] = self.num_ports;
        b[4..12].copy_from_slice(&self.system_image_guid.to_be_bytes());
        b[12..20].copy_from_slice(&self.node_guid.to_be_bytes());
        b[20..28].copy_from_slice(&self.port_guid.to_be_bytes());
        b[28..30].copy_from_slice(&self.partition_cap.to_be_bytes());
        b[30..32].copy_from_slice(&self.device_id.to_be_bytes());
        b[32..36].copy_from_slice(&self.revision.to_be_bytes());
        b[36..40].copy_from_slice(&(self.vendor_id & 0x00ff_ffff).to_be_bytes());
        b[36] = self.local_port;
    }
}

/// NodeDescription (attribute 0x0010): 64 bytes of UTF-8, NUL-padded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeDescriptionRepr(pub String);

impl NodeDescriptionRepr {
    /// Parses the description (invalid UTF-8 is replaced, not rejected:
    /// descriptions are informational).
    pub fn parse(b: &[u8]) -> Result<Self, WireError> {
        need("NodeDescription", b, SMP_DATA_LEN)?;
        let end = b[..SMP_DATA_LEN]
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(SMP_DATA_LEN);
        Ok(Self(String::from_utf8_lossy(&b[..end]).into_owned()))
    }

    /// Writes the description, cut to 64 bytes.
    pub fn emit(&self, b: &mut [u8; SMP_DATA_LEN]) {
        b.fill(0);
        let s = self.0.as_bytes();
        let n = s.len().min(SMP_DATA_LEN);
        b[..n].copy_from_slice(&s[..n]);
    }
}

/// SwitchInfo (attribute 0x0012).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchInfoRepr {
    /// LinearFDBCap: LFT entries the switch holds.
    pub linear_fdb_cap: u16,
    /// RandomFDBCap.
    pub random_fdb_cap: u16,
    /// MulticastFDBCap.
    pub multicast_fdb_cap: u16,
    /// LinearFDBTop: highest LID the switch forwards by its LFT.
    pub linear_fdb_top: u16,
    /// DefaultPort.
    pub default_port: u8,
    /// LifeTimeValue (5 bits).
    pub life_time: u8,
    /// PortStateChange: some port changed state (set 1 to clear).
    pub port_state_change: bool,
    /// LIDsPerPort.
    pub lids_per_port: u16,
    /// PartitionEnforcementCap.
    pub partition_enforcement_cap: u16,
    /// EnhancedPort0.
    pub enhanced_port0: bool,
    /// The raw bytes, so fields not modelled survive a Set.
    pub raw: [u8; SMP_DATA_LEN],
}

impl SwitchInfoRepr {
    /// Parses SwitchInfo data.
    pub fn parse(b: &[u8]) -> Result<Self, WireError> {
        need("SwitchInfo", b, SMP_DATA_LEN)?;
        let mut raw = [0u8; SMP_DATA_LEN];
        raw.copy_from_slice(&b[..SMP_DATA_LEN]);
        Ok(Self {
            linear_fdb_cap: be16(b, 0),
            random_fdb_cap: be16(b, 2),
            multicast_fdb_cap: be16(b, 4),
            linear_fdb_top: be16(b, 6),
            default_port: b[8],
            life_time: b[11] >> 3,
            port_state_change: b[11] & 0x04 != 0,
            lids_per_port: be16(b, 12),
            partition_enforcement_cap: be16(b, 14),
            enhanced_port0: b[16] & 0x08 != 0,
            raw,
        })
    }

    /// Writes SwitchInfo data over `raw`.
    pub fn emit(&self, b: &mut [u8; SMP_DATA_LEN]) {
        *b = self.raw;
        b[0..2].copy_from_slice(&self.linear_fdb_cap.to_be_bytes());
        b[2..4].copy_from_slice(&self.random_fdb_cap.to_be_bytes());
        b[4..6].copy_from_slice(&self.multicast_fdb_cap.to_be_bytes());
        b[6..8].copy_from_slice(&self.linear_fdb_top.to_be_bytes());
        b[8] = self.default_port;
        b[11] = (b[11] & 0x03)
            | ((self.life_time & 0x1f) << 3)
            | if self.port_state_change { 0x04 } else { 0 };
        b[12..14].copy_from_slice(&self.lids_per_port.to_be_bytes());
        b[14..16].copy_from_slice(&self.partition_enforcement_cap.to_be_bytes());
        b[16] = (b[16] & !0x08) | if self.enhanced_port0 { 0x08 } else { 0 };
    }
}

/// Logical port state of PortInfo.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LinkState {
    /// 0: no state change (in a Set).
    NoChange,
    /// 1: Down.
    Down,
    /// 2: Initialize.
    Init,
    /// 3: Armed.
    Armed,
    /// 4: Active.
    Active,
    /// 5: ActiveDefer.
    ActiveDefer,
}

impl LinkState {
    fn from_code(c: u8) -> Result<Self, WireError> {
        Ok(match c {
            0 => Self::NoChange,
            1 => Self::Down,
            2 => Self::Init,
            3 => Self::Armed,
            4 => Self::Active,
            5 => Self::ActiveDefer,
            c => {
                return Err(WireError::Malformed {
                    what: "PortInfo",
                    problem: format!("port state {c}"),
                })
            }
        })
    }
    fn code(self) -> u8 {
        match self {
            Self::NoChange => 0,
            Self::Down => 1,
            Self::Init => 2,
            Self::Armed => 3,
            Self::Active => 4,
            Self::ActiveDefer => 5,
        }
    }
}

/// PortPhysicalState 5: LinkUp.
pub const PHYS_LINK_UP: u8 = 5;

/// PortInfo (attribute 0x0015; the modifier is the port number).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortInfoRepr {
    /// GID prefix.
    pub gid_prefix: u64,
    /// Base LID.
    pub lid: u16,
    /// LID of the master SM.
    pub master_sm_lid: u16,
    /// CapabilityMask (bit 1: IsSM).
    pub capability_mask: u32,
    /// Port this SMP arrived on.
    pub local_port: u8,
    /// LinkWidthActive (1=1x, 2=4x, 4=8x, 8=12x, 16=2x).
    pub link_width_active: u8,
    /// PortState.
    pub state: LinkState,
    /// PortPhysicalState (5 = LinkUp).
    pub phys_state: u8,
    /// LMC.
    pub lmc: u8,
    /// LinkSpeedActive (1=SDR, 2=DDR, 4=QDR).
    pub link_speed_active: u8,
    /// MasterSMSL.
    pub master_sm_sl: u8,
    /// LinkSpeedExtActive (1=FDR, 2=EDR, 4=HDR, 8=NDR; 0 = use LinkSpeedActive).
    pub link_speed_ext_active: u8,
    /// The raw bytes, so fields not modelled survive a Set.
    pub raw: [u8; SMP_DATA_LEN],
}

impl PortInfoRepr {
    /// Parses PortInfo data.
    pub fn parse(b: &[u8]) -> Result<Self, WireError> {
        need("PortInfo", b, SMP_DATA_LEN)?;
        let mut raw = [0u8; SMP_DATA_LEN];
        raw.copy_from_slice(&b[..SMP_DATA_LEN]);
        Ok(Self {
            gid_prefix: be64(b, 8),
            lid: be16(b, 16),
            master_sm_lid: be16(b, 18),
            capability_mask: be32(b, 20),
            local_port: b[28],
            link_width_active: b[31],
            state: LinkState::from_code(b[32] & 0x0f)?,
            phys_state: b[33] >> 4,
            lmc: b[34] & 0x07,
            link_speed_active: b[35] >> 4,
            master_sm_sl: b[36] & 0x0f,
            link_speed_ext_active: b[62] >> 4,
            raw,
        })
    }

    /// Writes PortInfo data over `raw`.
    pub fn emit(&self, b: &mut [u8; SMP_DATA_LEN]) {
        *b = self.raw;
        b[8..16].copy_from_slice(&self.gid_prefix.to_be_bytes());
        b[16..18].copy_from_slice(&self.lid.to_be_bytes());
        b[18..20].copy_from_slice(&self.master_sm_lid.to_be_bytes());
        b[20..24].copy_from_slice(&self.capability_mask.to_be_bytes());
        b[28] = self.local_port;
        b[31] = self.link_width_active;
        b[32] = (b[32] & 0xf0) | self.state.code();
        b[33] = (b[33] & 0x0f) | (self.phys_state << 4);
        b[34] = (b[34] & !0x07) | (self.lmc & 0x07);
        b[35] = (b[35] & 0x0f) | (self.link_speed_active << 4);
        b[36] = (b[36] & 0xf0) | (self.master_sm_sl & 0x0f);
        b[62] = (b[62] & 0x0f) | (self.link_speed_ext_active << 4);
    }

    /// VLCap (1 = VL0, 2 = VL0–1, 3 = VL0–3, 4 = VL0–7, 5 = VL0–14).
    pub fn vl_cap(&self) -> u8 {
        self.raw[37] >> 4
    }

    /// OperationalVLs, coded as VLCap.
    pub fn operational_vls(&self) -> u8 {
        self.raw[43] >> 4
    }

    /// VLHighLimit.
    pub fn vl_high_limit(&self) -> u8 {
        self.raw[38]
    }

    /// VLArbitrationHighCap and VLArbitrationLowCap: entries of each table.
    pub fn vl_arb_caps(&self) -> (u8, u8) {
        (self.raw[39], self.raw[40])
    }

    /// Whether the physical link is up.
    pub fn link_up(&self) -> bool {
        self.phys_state == PHYS_LINK_UP
    }

    /// The active width and speed as ibcloud's rate, when the codes are known.
    pub fn rate(&self) -> Option<LinkRate> {
        let width = match self.link_width_active {
            1 => LinkWidth::X1,
            2 => LinkWidth::X4,
            4 => LinkWidth::X8,
            8 => LinkWidth::X12,
            16 => LinkWidth::X2,
            _ => return None,
        };
        let speed = match (self.link_speed_ext_active, self.link_speed_active) {
            (1, _) => LinkSpeed::Fdr,
            (2, _) => LinkSpeed::Edr,
            (4, _) => LinkSpeed::Hdr,
            (8, _) => LinkSpeed::Ndr,
            (0, 1) => LinkSpeed::Sdr,
            (0, 2) => LinkSpeed::Ddr,
            (0, 4) => LinkSpeed::Qdr,
            _ => return None,
        };
        Some(LinkRate::new(width, speed))
    }
}

/// One 64-LID block of a LinearForwardingTable (modifier = block number).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LftBlockRepr(pub [u8; SMP_DATA_LEN]);

impl LftBlockRepr {
    /// Parses a block.
    pub fn parse(b: &[u8]) -> Result<Self, WireError> {
        need("LinearForwardingTable", b, SMP_DATA_LEN)?;
        let mut a = [0u8; SMP_DATA_LEN];
        a.copy_from_slice(&b[..SMP_DATA_LEN]);
        Ok(Self(a))
    }
    /// Writes a block.
    pub fn emit(&self, b: &mut [u8; SMP_DATA_LEN]) {
        *b = self.0;
    }
}

/// SLtoVLMappingTable (attribute 0x0017, 8 bytes): the VL of each of the 16
/// SLs, two per byte (SL 2k in the high nibble of byte k). On a switch the
/// modifier names the pair ([`sl2vl_modifier`]); on a CA it is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlToVlRepr(pub [u8; 16]);

/// The SLtoVLMappingTable modifier of a switch's (input port, output
/// port) pair (IBA 14.2.5.8): `in << 8 | out`.
pub fn sl2vl_modifier(in_port: u8, out_port: u8) -> u32 {
    (in_port as u32) << 8 | out_port as u32
}

impl SlToVlRepr {
    /// Parses the table.
    pub fn parse(b: &[u8]) -> Result<Self, WireError> {
        need("SLtoVLMappingTable", b, 8)?;
        let mut m = [0u8; 16];
        for (sl, v) in m.iter_mut().enumerate() {
            let byte = b[sl / 2];
            *v = if sl % 2 == 0 { byte >> 4 } else { byte & 0x0f };
        }
        Ok(Self(m))
    }
    /// Writes the table (VLs above 15 are cut to 4 bits).
    pub fn emit(&self, b: &mut [u8; SMP_DATA_LEN]) {
        *b = [0u8; SMP_DATA_LEN];
        for (k, byte) in b.iter_mut().take(8).enumerate() {
            *byte = (self.0[2 * k] & 0x0f) << 4 | (self.0[2 * k + 1] & 0x0f);
        }
    }
}

/// The four 32-entry blocks of a port's VLArbitrationTable (IBA 14.2.5.9);
/// the modifier's upper 16 bits are the block number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum VlArbBlock {
    /// Low-priority entries 0–31 (1).
    LowFirst = 1,
    /// Low-priority entries 32–63 (2).
    LowSecond = 2,
    /// High-priority entries 0–31 (3).
    HighFirst = 3,
    /// High-priority entries 32–63 (4).
    HighSecond = 4,
}

/// The VLArbitrationTable modifier: `block << 16 | port` (the port is
/// ignored on a CA).
pub fn vlarb_modifier(block: VlArbBlock, port: u8) -> u32 {
    (block as u32) << 16 | port as u32
}

/// Number of entries in one VLArbitrationTable block.
pub const VLARB_BLOCK_ENTRIES: usize = 32;

/// One VLArbitrationTable block (attribute 0x0018, 64 bytes): 32 entries of
/// (VL in the low 4 bits of the first byte, weight).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VlArbBlockRepr(pub [(u8, u8); VLARB_BLOCK_ENTRIES]);

impl VlArbBlockRepr {
    /// Parses a block (the 4 reserved bits are ignored).
    pub fn parse(b: &[u8]) -> Result<Self, WireError> {
        need("VLArbitrationTable", b, SMP_DATA_LEN)?;
        let mut e = [(0u8, 0u8); VLARB_BLOCK_ENTRIES];
        for (i, x) in e.iter_mut().enumerate() {
            *x = (b[2 * i] & 0x0f, b[2 * i + 1]);
        }
        Ok(Self(e))
    }
    /// Writes a block (reserved bits zero).
    pub fn emit(&self, b: &mut [u8; SMP_DATA_LEN]) {
        for (i, &(vl, w)) in self.0.iter().enumerate() {
            b[2 * i] = vl & 0x0f;
            b[2 * i + 1] = w;
        }
    }
}

/// SMState of SMInfo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmState {
    /// 0: not active.
    NotActive,
    /// 1: discovering.
    Discovering,
    /// 2: standby.
    Standby,
    /// 3: master.
    Master,
}

/// SMInfo (attribute 0x0020, 21 bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmInfoRepr {
    /// Port GUID of the SM.
    pub guid: u64,
    /// SM_Key (0 when not configured).
    pub sm_key: u64,
    /// ActCount: increments while the SM is active.
    pub act_count: u32,
    /// Priority (0..=15).
    pub priority: u8,
    /// State.
    pub state: SmState,
}

impl SmInfoRepr {
    /// Parses SMInfo data.
    pub fn parse(b: &[u8]) -> Result<Self, WireError> {
        need("SMInfo", b, 21)?;
        let state = match b[20] & 0x0f {
            0 => SmState::NotActive,
            1 => SmState::Discovering,
            2 => SmState::Standby,
            3 => SmState::Master,
            s => {
                return Err(WireError::Malformed {
                    what: "SMInfo",
                    problem: format!("SM state {s}"),
                })
            }
        };
        Ok(Self {
            guid: be64(b, 0),
            sm_key: be64(b, 8),
            act_count: be32(b, 16),
            priority: b[20] >> 4,
            state,
        })
    }

    /// Writes SMInfo data.
    pub fn emit(&self, b: &mut [u8; SMP_DATA_LEN]) {
        b.fill(0);
        b[0..8].copy_from_slice(&self.guid.to_be_bytes());
        b[8..16].copy_from_slice(&self.sm_key.to_be_bytes());
        b[16..20].copy_from_slice(&self.act_count.to_be_bytes());
        b[20] = ((self.priority & 0x0f) << 4)
            | match self.state {
                SmState::NotActive => 0,
                SmState::Discovering => 1,
                SmState::Standby => 2,
                SmState::Master => 3,
            };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NodeInfo of an ibsim 36-port switch reached on its port 3.
    fn switch_node_info() -> [u8; SMP_DATA_LEN] {
        let mut b = [0u8; SMP_DATA_LEN];
        b[..4].copy_from_slice(&[1, 1, 2, 36]);
        b[4..12].copy_from_slice(&0x0002_c902_0000_0010u64.to_be_bytes());
        b[12..20].copy_from_slice(&0x0002_c902_0000_0010u64.to_be_bytes());
        b[20..28].copy_from_slice(&0x0002_c902_0000_0010u64.to_be_bytes());
        b[28..30].copy_from_slice(&[0, 8]);
        b[30..32].copy_from_slice(&[0xc7, 0x38]);
        b[36..40].copy_from_slice(&[3, 0x00, 0x02, 0xc9]);
        b
    }

    #[test]
    fn node_info_fixture() {
        let r = NodeInfoRepr::parse(&switch_node_info()).unwrap();
        assert_eq!(r.node_type, NodeType::Switch);
        assert_eq!(r.num_ports, 36);
        assert_eq!(r.node_guid, 0x0002_c902_0000_0010);
        assert_eq!(r.device_id, 0xc738);
        assert_eq!((r.local_port, r.vendor_id), (3, 0x0002c9));
        let mut out = [0u8; SMP_DATA_LEN];
        r.emit(&mut out);
        assert_eq!(out, switch_node_info());
    }

    #[test]
    fn node_info_rejects_nonsense() {
        let mut b = switch_node_info();
        b[2] = 7;
        assert!(NodeInfoRepr::parse(&b).is_err());
        let mut b = switch_node_info();
        b[36] = 40;
        assert!(NodeInfoRepr::parse(&b).is_err());
        assert!(NodeInfoRepr::parse(&b[..10]).is_err());
    }

    #[test]
    fn port_info_fields_and_read_modify_write() {
        let mut b = [0u8; SMP_DATA_LEN];
        b[16..18].copy_from_slice(&[0x00, 0x05]); // LID 5
        b[18..20].copy_from_slice(&[0x00, 0x01]); // SM LID 1
        b[28] = 2;
        b[31] = 2; // 4x
        b[32] = 0x42; // speed supported 4, state Init
        b[33] = 0x52; // LinkUp, polling default
        b[34] = 0x01; // LMC 1
        b[35] = 0x44; // QDR active, QDR enabled
        b[37] = 0x40; // VLCap, untouched by the model
        b[62] = 0x2f; // EDR active
        let mut r = PortInfoRepr::parse(&b).unwrap();
        assert_eq!((r.lid, r.master_sm_lid, r.lmc), (5, 1, 1));
        assert_eq!(r.state, LinkState::Init);
        assert!(r.link_up());
        assert_eq!(r.rate().unwrap().to_string(), "4xEDR");
        r.state = LinkState::Armed;
        r.lid = 9;
        let mut out = [0u8; SMP_DATA_LEN];
        r.emit(&mut out);
        assert_eq!(out[32], 0x43);
        assert_eq!(&out[16..18], &[0, 9]);
        assert_eq!(out[37], 0x40);
        assert_eq!(out[62], 0x2f);
        b[62] = 0;
        assert_eq!(
            PortInfoRepr::parse(&b).unwrap().rate().unwrap().to_string(),
            "4xQDR"
        );
        b[32] = 0x49;
        assert!(PortInfoRepr::parse(&b).is_err());
    }

    #[test]
    fn switch_info_round_trip_keeps_unmodelled_bits() {
        let mut b = [0u8; SMP_DATA_LEN];
        b[0..2].copy_from_slice(&[0xc0, 0x00]);
        b[6..8].copy_from_slice(&[0x00, 0x40]);
        b[11] = (18 << 3) | 0x04 | 0x01;
        b[16] = 0x08;
        let mut r = SwitchInfoRepr::parse(&b).unwrap();
        assert_eq!(
            (r.linear_fdb_cap, r.linear_fdb_top, r.life_time),
            (0xc000, 64, 18)
        );
        assert!(r.port_state_change && r.enhanced_port0);
        r.linear_fdb_top = 360;
        let mut out = [0u8; SMP_DATA_LEN];
        r.emit(&mut out);
        assert_eq!(&out[6..8], &[0x01, 0x68]);
        assert_eq!(out[11] & 0x03, 0x01);
    }

    #[test]
    fn sl2vl_nibbles_and_round_trip() {
        let mut b = [0u8; SMP_DATA_LEN];
        b[0] = 0x01; // SL0 -> VL0, SL1 -> VL1
        b[7] = 0xf3; // SL14 -> VL15 (drop), SL15 -> VL3
        let r = SlToVlRepr::parse(&b).unwrap();
        assert_eq!(r.0[..2], [0, 1]);
        assert_eq!(r.0[14..], [15, 3]);
        let mut out = [0xaau8; SMP_DATA_LEN];
        r.emit(&mut out);
        assert_eq!(out, b);
        assert!(SlToVlRepr::parse(&b[..7]).is_err());
        assert_eq!(sl2vl_modifier(3, 7), 0x0307);
    }

    #[test]
    fn vlarb_block_round_trip_ignores_reserved_bits() {
        let mut b = [0u8; SMP_DATA_LEN];
        b[0..4].copy_from_slice(&[0x00, 254, 0x01, 1]);
        b[62] = 0xf4; // reserved bits set, VL 4
        b[63] = 9;
        let r = VlArbBlockRepr::parse(&b).unwrap();
        assert_eq!((r.0[0], r.0[1], r.0[31]), ((0, 254), (1, 1), (4, 9)));
        let mut out = [0u8; SMP_DATA_LEN];
        r.emit(&mut out);
        b[62] = 0x04;
        assert_eq!(out, b);
        assert!(VlArbBlockRepr::parse(&b[..63]).is_err());
        assert_eq!(vlarb_modifier(VlArbBlock::HighFirst, 5), 0x0003_0005);
    }

    #[test]
    fn port_info_vl_fields() {
        let mut b = [0u8; SMP_DATA_LEN];
        b[37] = 0x40;
        b[38] = 4;
        b[39] = 8;
        b[40] = 64;
        b[43] = 0x20;
        let r = PortInfoRepr::parse(&b).unwrap();
        assert_eq!(
            (r.vl_cap(), r.operational_vls(), r.vl_high_limit()),
            (4, 2, 4)
        );
        assert_eq!(r.vl_arb_caps(), (8, 64));
    }

    #[test]
    fn sm_info_round_trip() {
        let r = SmInfoRepr {
            guid: 0x1234,
            sm_key: 0,
            act_count: 77,
            priority: 5,
            state: SmState::Master,
        };
        let mut out = [0u8; SMP_DATA_LEN];
        r.emit(&mut out);
        assert_eq!(out[20], 0x53);
        assert_eq!(SmInfoRepr::parse(&out).unwrap(), r);
    }

    #[test]
    fn node_description_stops_at_nul() {
        let mut b = [0u8; SMP_DATA_LEN];
        b[..5].copy_from_slice(b"leaf1");
        assert_eq!(NodeDescriptionRepr::parse(&b).unwrap().0, "leaf1");
        let mut out = [0u8; SMP_DATA_LEN];
        NodeDescriptionRepr("x".repeat(80)).emit(&mut out);
        assert_eq!(NodeDescriptionRepr::parse(&out).unwrap().0.len(), 64);
    }
}
