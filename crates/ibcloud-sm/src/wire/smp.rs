//! The 256-byte SMP (IBA 1.3 §14.2.1): common MAD header, M_Key, the
//! directed-route fields and 64 bytes of attribute data.
//!
//! | bytes | LID-routed (class 0x01) | directed route (class 0x81) |
//! |---|---|---|
//! | 0 | BaseVersion (1) | same |
//! | 1 | MgmtClass | same |
//! | 2 | ClassVersion (1) | same |
//! | 3 | R:1, Method:7 | same |
//! | 4..6 | Status | D:1, Status:15 |
//! | 6 | ClassSpecific | HopPointer |
//! | 7 | ClassSpecific | HopCount |
//! | 8..16 | TransactionID | same |
//! | 16..18 | AttributeID | same |
//! | 20..24 | AttributeModifier | same |
//! | 24..32 | M_Key | same |
//! | 32..34 | reserved | DrSLID |
//! | 34..36 | reserved | DrDLID |
//! | 64..128 | SMP data | same |
//! | 128..192 | reserved | InitialPath |
//! | 192..256 | reserved | ReturnPath |
//!
//! [`Smp`] is a checked view (getters cannot panic once `new_checked`
//! accepted the length); [`SmpRepr`] is the validated high-level form.

use crate::error::WireError;

/// Length of every SMP.
pub const SMP_LEN: usize = 256;
/// Length of the attribute data of an SMP.
pub const SMP_DATA_LEN: usize = 64;
/// Most hops a directed route can name (path bytes 1..=63).
pub const MAX_HOPS: usize = 63;
/// The permissive LID: DrSLID/DrDLID of a purely directed route, and the
/// destination LID libibumad is given for one.
pub const PERMISSIVE_LID: u16 = 0xffff;

/// Management class: LID-routed SMP.
pub const CLASS_SMI_LID: u8 = 0x01;
/// Management class: directed-route SMP.
pub const CLASS_SMI_DR: u8 = 0x81;

/// SubnGet.
pub const METHOD_GET: u8 = 0x01;
/// SubnSet.
pub const METHOD_SET: u8 = 0x02;
/// SubnGetResp.
pub const METHOD_GET_RESP: u8 = 0x81;
/// SubnTrap.
pub const METHOD_TRAP: u8 = 0x05;
/// SubnTrapRepress.
pub const METHOD_TRAP_REPRESS: u8 = 0x07;

/// Attribute ids (IBA 1.3 Table 145).
pub mod attr {
    /// Notice (traps).
    pub const NOTICE: u16 = 0x0002;
    /// NodeDescription.
    pub const NODE_DESCRIPTION: u16 = 0x0010;
    /// NodeInfo.
    pub const NODE_INFO: u16 = 0x0011;
    /// SwitchInfo.
    pub const SWITCH_INFO: u16 = 0x0012;
    /// PortInfo.
    pub const PORT_INFO: u16 = 0x0015;
    /// SLtoVLMappingTable.
    pub const SL_TO_VL_MAPPING_TABLE: u16 = 0x0017;
    /// VLArbitrationTable.
    pub const VL_ARBITRATION_TABLE: u16 = 0x0018;
    /// LinearForwardingTable.
    pub const LINEAR_FORWARDING_TABLE: u16 = 0x0019;
    /// SMInfo.
    pub const SM_INFO: u16 = 0x0020;

    /// A short name for logs.
    pub fn name(id: u16) -> &'static str {
        match id {
            NOTICE => "Notice",
            NODE_DESCRIPTION => "NodeDescription",
            NODE_INFO => "NodeInfo",
            SWITCH_INFO => "SwitchInfo",
            PORT_INFO => "PortInfo",
            SL_TO_VL_MAPPING_TABLE => "SLtoVLMappingTable",
            VL_ARBITRATION_TABLE => "VLArbitrationTable",
            LINEAR_FORWARDING_TABLE => "LinearForwardingTable",
            SM_INFO => "SMInfo",
            _ => "Other",
        }
    }
}

mod field {
    use core::ops::Range;
    pub(super) const BASE_VERSION: usize = 0;
    pub(super) const MGMT_CLASS: usize = 1;
    pub(super) const CLASS_VERSION: usize = 2;
    pub(super) const METHOD: usize = 3;
    pub(super) const STATUS: Range<usize> = 4..6;
    pub(super) const HOP_PTR: usize = 6;
    pub(super) const HOP_CNT: usize = 7;
    pub(super) const TID: Range<usize> = 8..16;
    pub(super) const ATTR_ID: Range<usize> = 16..18;
    pub(super) const ATTR_MOD: Range<usize> = 20..24;
    pub(super) const M_KEY: Range<usize> = 24..32;
    pub(super) const DR_SLID: Range<usize> = 32..34;
    pub(super) const DR_DLID: Range<usize> = 34..36;
    pub(super) const DATA: Range<usize> = 64..128;
    pub(super) const INITIAL_PATH: Range<usize> = 128..192;
    pub(super) const RETURN_PATH: Range<usize> = 192..256;
}

fn be16(b: &[u8], r: core::ops::Range<usize>) -> u16 {
    b.get(r)
        .map(|s| u16::from_be_bytes([s[0], s[1]]))
        .unwrap_or(0)
}

fn be32(b: &[u8], r: core::ops::Range<usize>) -> u32 {
    b.get(r)
        .map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
        .unwrap_or(0)
}

fn be64(b: &[u8], r: core::ops::Range<usize>) -> u64 {
    b.get(r)
        .map(|s| {
            let mut a = [0u8; 8];
            a.copy_from_slice(s);
            u64::from_be_bytes(a)
        })
        .unwrap_or(0)
}

/// A checked view of an SMP buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Smp<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Smp<T> {
    /// Wraps a buffer of at least [`SMP_LEN`] bytes.
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let got = buffer.as_ref().len();
        if got < SMP_LEN {
            return Err(WireError::Truncated {
                what: "SMP",
                need: SMP_LEN,
                got,
            });
        }
        Ok(Self { buffer })
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// BaseVersion (1 for IBA MADs).
    pub fn base_version(&self) -> u8 {
        self.b()[field::BASE_VERSION]
    }
    /// Management class.
    pub fn mgmt_class(&self) -> u8 {
        self.b()[field::MGMT_CLASS]
    }
    /// Class version.
    pub fn class_version(&self) -> u8 {
        self.b()[field::CLASS_VERSION]
    }
    /// Method including the response bit.
    pub fn method(&self) -> u8 {
        self.b()[field::METHOD]
    }
    /// The raw 16-bit status word (for DR: direction bit and status).
    pub fn status_word(&self) -> u16 {
        be16(self.b(), field::STATUS)
    }
    /// HopPointer (DR).
    pub fn hop_pointer(&self) -> u8 {
        self.b()[field::HOP_PTR]
    }
    /// HopCount (DR).
    pub fn hop_count(&self) -> u8 {
        self.b()[field::HOP_CNT]
    }
    /// Transaction id.
    pub fn tid(&self) -> u64 {
        be64(self.b(), field::TID)
    }
    /// Attribute id.
    pub fn attr_id(&self) -> u16 {
        be16(self.b(), field::ATTR_ID)
    }
    /// Attribute modifier.
    pub fn attr_mod(&self) -> u32 {
        be32(self.b(), field::ATTR_MOD)
    }
    /// M_Key.
    pub fn m_key(&self) -> u64 {
        be64(self.b(), field::M_KEY)
    }
    /// DrSLID.
    pub fn dr_slid(&self) -> u16 {
        be16(self.b(), field::DR_SLID)
    }
    /// DrDLID.
    pub fn dr_dlid(&self) -> u16 {
        be16(self.b(), field::DR_DLID)
    }
    /// The 64 data bytes.
    pub fn data(&self) -> &[u8] {
        &self.b()[field::DATA]
    }
    /// InitialPath bytes (index 0 unused).
    pub fn initial_path(&self) -> &[u8] {
        &self.b()[field::INITIAL_PATH]
    }
    /// ReturnPath bytes.
    pub fn return_path(&self) -> &[u8] {
        &self.b()[field::RETURN_PATH]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Smp<T> {
    fn m(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }
    /// Sets the transaction id.
    pub fn set_tid(&mut self, tid: u64) {
        self.m()[field::TID].copy_from_slice(&tid.to_be_bytes());
    }
}

/// How an SMP travels.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Route {
    /// Directed route: output port numbers from the SM's port, one per hop
    /// (empty: the SM's own port).
    Directed(Vec<u8>),
    /// LID-routed to this LID.
    Lid(u16),
}

impl Route {
    /// The LID libibumad is given (permissive for directed routes).
    pub fn dlid(&self) -> u16 {
        match self {
            Route::Directed(_) => PERMISSIVE_LID,
            Route::Lid(l) => *l,
        }
    }

    /// `0,1,3` style (ibnetdiscover's `-D` form) or `lid 12`.
    pub fn label(&self) -> String {
        match self {
            Route::Directed(p) => {
                let mut s = String::from("0");
                for x in p {
                    s.push(',');
                    s.push_str(&x.to_string());
                }
                s
            }
            Route::Lid(l) => format!("lid {l}"),
        }
    }
}

/// A decoded SMP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmpRepr {
    /// Method (with the response bit, 0x81 for GetResp).
    pub method: u8,
    /// Status (15 bits for DR, 16 for LID-routed).
    pub status: u16,
    /// Transaction id.
    pub tid: u64,
    /// Attribute id.
    pub attr_id: u16,
    /// Attribute modifier.
    pub attr_mod: u32,
    /// M_Key (0: none configured, as on ibsim).
    pub m_key: u64,
    /// The route; for a DR response, the initial path as sent.
    pub route: Route,
    /// Direction bit of a DR SMP (true on the way back).
    pub returning: bool,
    /// Hop pointer of a DR SMP.
    pub hop_pointer: u8,
    /// Attribute data.
    pub data: [u8; SMP_DATA_LEN],
}

impl SmpRepr {
    /// A request (Get or Set) with zeroed header fields the SM does not use.
    pub fn request(method: u8, attr_id: u16, attr_mod: u32, route: Route) -> Self {
        Self {
            method,
            status: 0,
            tid: 0,
            attr_id,
            attr_mod,
            m_key: 0,
            route,
            returning: false,
            hop_pointer: 0,
            data: [0; SMP_DATA_LEN],
        }
    }

    /// Whether the response bit is set.
    pub fn is_response(&self) -> bool {
        self.method & 0x80 != 0
    }

    /// Parses an SMP, checking versions, class and path lengths.
    pub fn parse<T: AsRef<[u8]>>(smp: &Smp<T>) -> Result<Self, WireError> {
        let bad = |problem: String| WireError::Malformed {
            what: "SMP",
            problem,
        };
        if smp.base_version() != 1 {
            return Err(bad(format!("base version {}", smp.base_version())));
        }
        if smp.class_version() != 1 {
            return Err(bad(format!("class version {}", smp.class_version())));
        }
        let word = smp.status_word();
        let (route, status, returning) = match smp.mgmt_class() {
            CLASS_SMI_DR => {
                let hops = smp.hop_count() as usize;
                if hops > MAX_HOPS {
                    return Err(bad(format!("hop count {hops} > {MAX_HOPS}")));
                }
                let path = smp.initial_path()[1..=hops].to_vec();
                (Route::Directed(path), word & 0x7fff, word & 0x8000 != 0)
            }
            CLASS_SMI_LID => (Route::Lid(0), word, false),
            c => {
                return Err(bad(format!(
                    "management class 0x{c:02x} is not an SMP class"
                )))
            }
        };
        let mut data = [0u8; SMP_DATA_LEN];
        data.copy_from_slice(smp.data());
        Ok(Self {
            method: smp.method(),
            status,
            tid: smp.tid(),
            attr_id: smp.attr_id(),
            attr_mod: smp.attr_mod(),
            m_key: smp.m_key(),
            route,
            returning,
            hop_pointer: smp.hop_pointer(),
            data,
        })
    }

    /// Parses raw bytes.
    pub fn parse_bytes(bytes: &[u8]) -> Result<Self, WireError> {
        Self::parse(&Smp::new_checked(bytes)?)
    }

    /// Writes the SMP into a 256-byte buffer.
    pub fn emit(&self, out: &mut [u8; SMP_LEN]) -> Result<(), WireError> {
        out.fill(0);
        out[field::BASE_VERSION] = 1;
        out[field::CLASS_VERSION] = 1;
        out[field::METHOD] = self.method;
        out[field::TID].copy_from_slice(&self.tid.to_be_bytes());
        out[field::ATTR_ID].copy_from_slice(&self.attr_id.to_be_bytes());
        out[field::ATTR_MOD].copy_from_slice(&self.attr_mod.to_be_bytes());
        out[field::M_KEY].copy_from_slice(&self.m_key.to_be_bytes());
        out[field::DATA].copy_from_slice(&self.data);
        match &self.route {
            Route::Directed(path) => {
                if path.len() > MAX_HOPS {
                    return Err(WireError::Malformed {
                        what: "SMP",
                        problem: format!("directed route of {} hops > {MAX_HOPS}", path.len()),
                    });
                }
                out[field::MGMT_CLASS] = CLASS_SMI_DR;
                let word = (self.status & 0x7fff) | if self.returning { 0x8000 } else { 0 };
                out[field::STATUS].copy_from_slice(&word.to_be_bytes());
                out[field::HOP_PTR] = self.hop_pointer;
                out[field::HOP_CNT] = path.len() as u8;
                out[field::DR_SLID].copy_from_slice(&PERMISSIVE_LID.to_be_bytes());
                out[field::DR_DLID].copy_from_slice(&PERMISSIVE_LID.to_be_bytes());
                out[field::INITIAL_PATH.start + 1..field::INITIAL_PATH.start + 1 + path.len()]
                    .copy_from_slice(path);
            }
            Route::Lid(_) => {
                out[field::MGMT_CLASS] = CLASS_SMI_LID;
                out[field::STATUS].copy_from_slice(&self.status.to_be_bytes());
            }
        }
        Ok(())
    }

    /// The SMP as a fresh buffer.
    pub fn to_bytes(&self) -> Result<[u8; SMP_LEN], WireError> {
        let mut out = [0u8; SMP_LEN];
        self.emit(&mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DR SubnGet(NodeInfo) along 0,1,3 as ibnetdiscover sends it (TID 0x1234).
    fn fixture() -> [u8; SMP_LEN] {
        let mut b = [0u8; SMP_LEN];
        b[..8].copy_from_slice(&[0x01, 0x81, 0x01, 0x01, 0x00, 0x00, 0x00, 0x02]);
        b[8..16].copy_from_slice(&[0, 0, 0, 0, 0, 0, 0x12, 0x34]);
        b[16..18].copy_from_slice(&[0x00, 0x11]);
        b[32..36].copy_from_slice(&[0xff, 0xff, 0xff, 0xff]);
        b[129] = 1;
        b[130] = 3;
        b
    }

    #[test]
    fn parses_a_directed_route_get() {
        let r = SmpRepr::parse_bytes(&fixture()).unwrap();
        assert_eq!(r.method, METHOD_GET);
        assert_eq!(r.tid, 0x1234);
        assert_eq!(r.attr_id, attr::NODE_INFO);
        assert_eq!(r.route, Route::Directed(vec![1, 3]));
        assert!(!r.returning);
        assert_eq!(r.route.label(), "0,1,3");
    }

    #[test]
    fn emit_reproduces_the_fixture() {
        let mut r = SmpRepr::request(METHOD_GET, attr::NODE_INFO, 0, Route::Directed(vec![1, 3]));
        r.tid = 0x1234;
        assert_eq!(r.to_bytes().unwrap(), fixture());
    }

    #[test]
    fn response_direction_and_status_split() {
        let mut b = fixture();
        b[3] = METHOD_GET_RESP;
        b[4] = 0x80;
        b[5] = 0x1c;
        let r = SmpRepr::parse_bytes(&b).unwrap();
        assert!(r.returning && r.is_response());
        assert_eq!(r.status, 0x1c);
    }

    #[test]
    fn rejects_short_bad_version_and_foreign_class() {
        assert!(SmpRepr::parse_bytes(&[0u8; 100]).is_err());
        let mut b = fixture();
        b[0] = 2;
        assert!(SmpRepr::parse_bytes(&b).is_err());
        let mut b = fixture();
        b[1] = 0x03;
        assert!(SmpRepr::parse_bytes(&b).is_err());
        let mut b = fixture();
        b[7] = 64;
        assert!(SmpRepr::parse_bytes(&b).is_err());
    }

    #[test]
    fn lid_routed_round_trip() {
        let mut r = SmpRepr::request(METHOD_SET, attr::LINEAR_FORWARDING_TABLE, 3, Route::Lid(0));
        r.tid = 7;
        r.data[5] = 9;
        let b = r.to_bytes().unwrap();
        assert_eq!(b[1], CLASS_SMI_LID);
        assert_eq!(SmpRepr::parse_bytes(&b).unwrap(), r);
    }
}
