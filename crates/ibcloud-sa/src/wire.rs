//! Wire layouts: the 64-byte PathRecord attribute (IBA 1.3 §15.2.5.16,
//! OpenSM's `ib_path_rec_t`) and the 256-byte SA MAD that carries it
//! (common MAD header, RMPP header, SA header, 200 bytes of data).
//!
//! Smoltcp style: [`PathRecord`] and [`SaMad`] are checked views over a byte
//! buffer whose getters cannot panic once `new_checked` accepted the length;
//! [`PathRecordRepr`] and [`SaMadRepr`] are validated high-level forms with
//! `parse` and `emit`. All fields are big-endian.
//!
//! PathRecord bit layout (byte offsets):
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | ServiceID |
//! | 8..24 | DGID |
//! | 24..40 | SGID |
//! | 40..42 | DLID |
//! | 42..44 | SLID |
//! | 44..48 | RawTraffic:1 (bit 352), Reserved:3 (bits 353–355), FlowLabel:20, HopLimit:8 |
//! | 48 | TClass |
//! | 49 | Reversible:1, NumbPath:7 |
//! | 50..52 | P_Key |
//! | 52..54 | QoSClass:12, SL:4 |
//! | 54 | MTUSelector:2, MTU:6 |
//! | 55 | RateSelector:2, Rate:6 |
//! | 56 | PacketLifeTimeSelector:2, PacketLifeTime:6 |
//! | 57 | Preference |
//! | 58..64 | Reserved (48 bits) |
//!
//! Paper I's caching flag is reserved bit 353: the bit after RawTraffic, mask
//! `0x40` of byte 44.

use crate::error::SaError;

/// Length of a PathRecord attribute.
pub const PATH_RECORD_LEN: usize = 64;
/// Length of an SA MAD (header + data).
pub const MAD_LEN: usize = 256;
/// Offset of the SA data (the attribute) inside an SA MAD.
pub const SA_DATA_OFFSET: usize = 56;

/// Management class of Subnet Administration.
pub const MGMT_CLASS_SA: u8 = 0x03;
/// SA class version.
pub const SA_CLASS_VERSION: u8 = 2;
/// Attribute id of PathRecord.
pub const ATTR_PATH_RECORD: u16 = 0x0035;
/// Method SubnAdmGet.
pub const METHOD_GET: u8 = 0x01;
/// Method SubnAdmGetResp.
pub const METHOD_GET_RESP: u8 = 0x81;
/// Method SubnAdmGetTable.
pub const METHOD_GET_TABLE: u8 = 0x12;
/// Method SubnAdmGetTableResp.
pub const METHOD_GET_TABLE_RESP: u8 = 0x92;

/// PathRecord component-mask bits (IBA 1.3 Table 207).
pub mod comp {
    /// ServiceID.
    pub const SERVICE_ID: u64 = 0x3;
    /// DGID.
    pub const DGID: u64 = 1 << 2;
    /// SGID.
    pub const SGID: u64 = 1 << 3;
    /// DLID.
    pub const DLID: u64 = 1 << 4;
    /// SLID.
    pub const SLID: u64 = 1 << 5;
    /// RawTraffic.
    pub const RAW_TRAFFIC: u64 = 1 << 6;
    /// Reversible.
    pub const REVERSIBLE: u64 = 1 << 11;
    /// NumbPath.
    pub const NUMB_PATH: u64 = 1 << 12;
    /// P_Key.
    pub const PKEY: u64 = 1 << 13;
    /// SL.
    pub const SL: u64 = 1 << 15;
}

mod field {
    use core::ops::Range;
    pub(super) const SERVICE_ID: Range<usize> = 0..8;
    pub(super) const DGID: Range<usize> = 8..24;
    pub(super) const SGID: Range<usize> = 24..40;
    pub(super) const DLID: Range<usize> = 40..42;
    pub(super) const SLID: Range<usize> = 42..44;
    pub(super) const HOP_FLOW_RAW: Range<usize> = 44..48;
    pub(super) const TCLASS: usize = 48;
    pub(super) const NUM_PATH: usize = 49;
    pub(super) const PKEY: Range<usize> = 50..52;
    pub(super) const QOS_SL: Range<usize> = 52..54;
    pub(super) const MTU: usize = 54;
    pub(super) const RATE: usize = 55;
    pub(super) const PKT_LIFE: usize = 56;
    pub(super) const PREFERENCE: usize = 57;
    pub(super) const RESERVED: Range<usize> = 58..64;
}

/// Copies `N` bytes from `start`, or zeros when the buffer is too short.
fn arr<const N: usize>(b: &[u8], start: usize) -> [u8; N] {
    let mut out = [0u8; N];
    if let Some(s) = b.get(start..start + N) {
        out.copy_from_slice(s);
    }
    out
}

/// A checked read/write view of a 64-byte PathRecord.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathRecord<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> PathRecord<T> {
    /// Wraps a buffer without checking its length (getters then return 0 on short buffers).
    pub fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// Wraps a buffer of at least 64 bytes.
    pub fn new_checked(buffer: T) -> Result<Self, SaError> {
        let got = buffer.as_ref().len();
        if got < PATH_RECORD_LEN {
            return Err(SaError::Truncated {
                what: "PathRecord",
                need: PATH_RECORD_LEN,
                got,
            });
        }
        Ok(Self { buffer })
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }
    fn u8_at(&self, i: usize) -> u8 {
        self.b().get(i).copied().unwrap_or(0)
    }

    /// ServiceID.
    pub fn service_id(&self) -> u64 {
        u64::from_be_bytes(arr(self.b(), field::SERVICE_ID.start))
    }
    /// Destination GID.
    pub fn dgid(&self) -> [u8; 16] {
        arr(self.b(), field::DGID.start)
    }
    /// Source GID.
    pub fn sgid(&self) -> [u8; 16] {
        arr(self.b(), field::SGID.start)
    }
    /// Destination LID.
    pub fn dlid(&self) -> u16 {
        u16::from_be_bytes(arr(self.b(), field::DLID.start))
    }
    /// Source LID.
    pub fn slid(&self) -> u16 {
        u16::from_be_bytes(arr(self.b(), field::SLID.start))
    }
    fn hop_flow_raw(&self) -> u32 {
        u32::from_be_bytes(arr(self.b(), field::HOP_FLOW_RAW.start))
    }
    /// RawTraffic (bit 352).
    pub fn raw_traffic(&self) -> bool {
        self.hop_flow_raw() >> 31 != 0
    }
    /// The 3 reserved bits 353–355 (bit 353 is the most significant).
    pub fn reserved_353(&self) -> u8 {
        ((self.hop_flow_raw() >> 28) & 0x7) as u8
    }
    /// Paper I's caching flag: reserved bit 353.
    pub fn caching(&self) -> bool {
        self.reserved_353() & 0x4 != 0
    }
    /// FlowLabel (20 bits).
    pub fn flow_label(&self) -> u32 {
        (self.hop_flow_raw() >> 8) & 0xF_FFFF
    }
    /// HopLimit.
    pub fn hop_limit(&self) -> u8 {
        (self.hop_flow_raw() & 0xFF) as u8
    }
    /// TClass.
    pub fn tclass(&self) -> u8 {
        self.u8_at(field::TCLASS)
    }
    /// Reversible.
    pub fn reversible(&self) -> bool {
        self.u8_at(field::NUM_PATH) & 0x80 != 0
    }
    /// NumbPath (7 bits).
    pub fn numb_path(&self) -> u8 {
        self.u8_at(field::NUM_PATH) & 0x7F
    }
    /// P_Key.
    pub fn pkey(&self) -> u16 {
        u16::from_be_bytes(arr(self.b(), field::PKEY.start))
    }
    /// QoSClass (12 bits).
    pub fn qos_class(&self) -> u16 {
        u16::from_be_bytes(arr(self.b(), field::QOS_SL.start)) >> 4
    }
    /// Service level.
    pub fn sl(&self) -> u8 {
        (u16::from_be_bytes(arr(self.b(), field::QOS_SL.start)) & 0xF) as u8
    }
    /// MTUSelector (2 bits).
    pub fn mtu_selector(&self) -> u8 {
        self.u8_at(field::MTU) >> 6
    }
    /// MTU code (6 bits).
    pub fn mtu(&self) -> u8 {
        self.u8_at(field::MTU) & 0x3F
    }
    /// RateSelector (2 bits).
    pub fn rate_selector(&self) -> u8 {
        self.u8_at(field::RATE) >> 6
    }
    /// Rate code (6 bits).
    pub fn rate(&self) -> u8 {
        self.u8_at(field::RATE) & 0x3F
    }
    /// PacketLifeTimeSelector (2 bits).
    pub fn pkt_life_selector(&self) -> u8 {
        self.u8_at(field::PKT_LIFE) >> 6
    }
    /// PacketLifeTime (6 bits).
    pub fn pkt_life(&self) -> u8 {
        self.u8_at(field::PKT_LIFE) & 0x3F
    }
    /// Preference.
    pub fn preference(&self) -> u8 {
        self.u8_at(field::PREFERENCE)
    }
    /// The 48 trailing reserved bits.
    pub fn reserved_tail(&self) -> [u8; 6] {
        arr(self.b(), field::RESERVED.start)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> PathRecord<T> {
    fn put(&mut self, start: usize, bytes: &[u8]) {
        if let Some(s) = self.buffer.as_mut().get_mut(start..start + bytes.len()) {
            s.copy_from_slice(bytes);
        }
    }
    fn put_u8(&mut self, i: usize, v: u8) {
        self.put(i, &[v]);
    }
    /// Sets ServiceID.
    pub fn set_service_id(&mut self, v: u64) {
        self.put(field::SERVICE_ID.start, &v.to_be_bytes());
    }
    /// Sets DGID.
    pub fn set_dgid(&mut self, v: [u8; 16]) {
        self.put(field::DGID.start, &v);
    }
    /// Sets SGID.
    pub fn set_sgid(&mut self, v: [u8; 16]) {
        self.put(field::SGID.start, &v);
    }
    /// Sets DLID.
    pub fn set_dlid(&mut self, v: u16) {
        self.put(field::DLID.start, &v.to_be_bytes());
    }
    /// Sets SLID.
    pub fn set_slid(&mut self, v: u16) {
        self.put(field::SLID.start, &v.to_be_bytes());
    }
    fn set_hop_flow_raw(&mut self, v: u32) {
        self.put(field::HOP_FLOW_RAW.start, &v.to_be_bytes());
    }
    /// Sets RawTraffic.
    pub fn set_raw_traffic(&mut self, v: bool) {
        let w = self.hop_flow_raw() & !(1 << 31) | (u32::from(v) << 31);
        self.set_hop_flow_raw(w);
    }
    /// Sets the 3 reserved bits 353–355 (values above 7 are masked).
    pub fn set_reserved_353(&mut self, v: u8) {
        let w = self.hop_flow_raw() & !(0x7 << 28) | (u32::from(v & 0x7) << 28);
        self.set_hop_flow_raw(w);
    }
    /// Sets or clears Paper I's caching flag (bit 353), leaving bits 354–355.
    pub fn set_caching(&mut self, v: bool) {
        let r = self.reserved_353() & 0x3 | if v { 0x4 } else { 0 };
        self.set_reserved_353(r);
    }
    /// Sets FlowLabel (masked to 20 bits).
    pub fn set_flow_label(&mut self, v: u32) {
        let w = self.hop_flow_raw() & !(0xF_FFFF << 8) | ((v & 0xF_FFFF) << 8);
        self.set_hop_flow_raw(w);
    }
    /// Sets HopLimit.
    pub fn set_hop_limit(&mut self, v: u8) {
        let w = self.hop_flow_raw() & !0xFF | u32::from(v);
        self.set_hop_flow_raw(w);
    }
    /// Sets TClass.
    pub fn set_tclass(&mut self, v: u8) {
        self.put_u8(field::TCLASS, v);
    }
    /// Sets Reversible and NumbPath (masked to 7 bits).
    pub fn set_num_path(&mut self, reversible: bool, numb_path: u8) {
        self.put_u8(
            field::NUM_PATH,
            (u8::from(reversible) << 7) | (numb_path & 0x7F),
        );
    }
    /// Sets P_Key.
    pub fn set_pkey(&mut self, v: u16) {
        self.put(field::PKEY.start, &v.to_be_bytes());
    }
    /// Sets QoSClass (12 bits) and SL (4 bits).
    pub fn set_qos_sl(&mut self, qos_class: u16, sl: u8) {
        let w = ((qos_class & 0xFFF) << 4) | u16::from(sl & 0xF);
        self.put(field::QOS_SL.start, &w.to_be_bytes());
    }
    /// Sets MTUSelector and MTU.
    pub fn set_mtu(&mut self, selector: u8, code: u8) {
        self.put_u8(field::MTU, ((selector & 0x3) << 6) | (code & 0x3F));
    }
    /// Sets RateSelector and Rate.
    pub fn set_rate(&mut self, selector: u8, code: u8) {
        self.put_u8(field::RATE, ((selector & 0x3) << 6) | (code & 0x3F));
    }
    /// Sets PacketLifeTimeSelector and PacketLifeTime.
    pub fn set_pkt_life(&mut self, selector: u8, value: u8) {
        self.put_u8(field::PKT_LIFE, ((selector & 0x3) << 6) | (value & 0x3F));
    }
    /// Sets Preference.
    pub fn set_preference(&mut self, v: u8) {
        self.put_u8(field::PREFERENCE, v);
    }
    /// Sets the 48 trailing reserved bits.
    pub fn set_reserved_tail(&mut self, v: [u8; 6]) {
        self.put(field::RESERVED.start, &v);
    }
}

/// A PathRecord's fields, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct PathRecordRepr {
    /// ServiceID.
    pub service_id: u64,
    /// Destination GID.
    pub dgid: [u8; 16],
    /// Source GID.
    pub sgid: [u8; 16],
    /// Destination LID.
    pub dlid: u16,
    /// Source LID.
    pub slid: u16,
    /// RawTraffic.
    pub raw_traffic: bool,
    /// Paper I's caching flag (reserved bit 353).
    pub caching: bool,
    /// FlowLabel (20 bits).
    pub flow_label: u32,
    /// HopLimit.
    pub hop_limit: u8,
    /// TClass.
    pub tclass: u8,
    /// Reversible.
    pub reversible: bool,
    /// NumbPath (7 bits).
    pub numb_path: u8,
    /// P_Key.
    pub pkey: u16,
    /// QoSClass (12 bits).
    pub qos_class: u16,
    /// Service level (4 bits).
    pub sl: u8,
    /// MTUSelector (2 bits).
    pub mtu_selector: u8,
    /// MTU code (1..=5 in a valid record, 0 in a query).
    pub mtu: u8,
    /// RateSelector (2 bits).
    pub rate_selector: u8,
    /// Rate code.
    pub rate: u8,
    /// PacketLifeTimeSelector (2 bits).
    pub pkt_life_selector: u8,
    /// PacketLifeTime (6 bits).
    pub pkt_life: u8,
    /// Preference.
    pub preference: u8,
}

impl PathRecordRepr {
    /// Parses a view. Rejects field values no PathRecord may hold: an MTU
    /// code above 5 or a reserved rate code (0 is accepted for both, as
    /// queries leave them unset). Reserved bits 354–355 and the trailing 48
    /// reserved bits are ignored, as receivers must.
    pub fn parse<T: AsRef<[u8]>>(p: &PathRecord<T>) -> Result<Self, SaError> {
        let got = p.buffer.as_ref().len();
        if got < PATH_RECORD_LEN {
            return Err(SaError::Truncated {
                what: "PathRecord",
                need: PATH_RECORD_LEN,
                got,
            });
        }
        if p.mtu() > 5 {
            return Err(SaError::Malformed {
                what: "PathRecord",
                problem: format!("MTU code {} is not 1..=5", p.mtu()),
            });
        }
        if p.rate() != 0 && crate::rate::rate_gbps(p.rate()).is_none() {
            return Err(SaError::Malformed {
                what: "PathRecord",
                problem: format!("rate code {} is reserved", p.rate()),
            });
        }
        Ok(Self {
            service_id: p.service_id(),
            dgid: p.dgid(),
            sgid: p.sgid(),
            dlid: p.dlid(),
            slid: p.slid(),
            raw_traffic: p.raw_traffic(),
            caching: p.caching(),
            flow_label: p.flow_label(),
            hop_limit: p.hop_limit(),
            tclass: p.tclass(),
            reversible: p.reversible(),
            numb_path: p.numb_path(),
            pkey: p.pkey(),
            qos_class: p.qos_class(),
            sl: p.sl(),
            mtu_selector: p.mtu_selector(),
            mtu: p.mtu(),
            rate_selector: p.rate_selector(),
            rate: p.rate(),
            pkt_life_selector: p.pkt_life_selector(),
            pkt_life: p.pkt_life(),
            preference: p.preference(),
        })
    }

    /// Writes every field into a view (reserved bits other than 353 are zeroed).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut PathRecord<T>) {
        p.set_service_id(self.service_id);
        p.set_dgid(self.dgid);
        p.set_sgid(self.sgid);
        p.set_dlid(self.dlid);
        p.set_slid(self.slid);
        p.set_hop_flow_raw(0);
        p.set_raw_traffic(self.raw_traffic);
        p.set_caching(self.caching);
        p.set_flow_label(self.flow_label);
        p.set_hop_limit(self.hop_limit);
        p.set_tclass(self.tclass);
        p.set_num_path(self.reversible, self.numb_path);
        p.set_pkey(self.pkey);
        p.set_qos_sl(self.qos_class, self.sl);
        p.set_mtu(self.mtu_selector, self.mtu);
        p.set_rate(self.rate_selector, self.rate);
        p.set_pkt_life(self.pkt_life_selector, self.pkt_life);
        p.set_preference(self.preference);
        p.set_reserved_tail([0; 6]);
    }

    /// The 64 bytes of this record.
    pub fn to_bytes(&self) -> [u8; PATH_RECORD_LEN] {
        let mut b = [0u8; PATH_RECORD_LEN];
        self.emit(&mut PathRecord::new_unchecked(&mut b[..]));
        b
    }
}

/// A checked view of a 256-byte SA MAD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SaMad<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> SaMad<T> {
    /// Wraps a buffer of at least the 56-byte SA header plus one PathRecord.
    pub fn new_checked(buffer: T) -> Result<Self, SaError> {
        let got = buffer.as_ref().len();
        let need = SA_DATA_OFFSET + PATH_RECORD_LEN;
        if got < need {
            return Err(SaError::Truncated {
                what: "SA MAD",
                need,
                got,
            });
        }
        Ok(Self { buffer })
    }
    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }
    /// BaseVersion.
    pub fn base_version(&self) -> u8 {
        self.b().first().copied().unwrap_or(0)
    }
    /// MgmtClass.
    pub fn mgmt_class(&self) -> u8 {
        self.b().get(1).copied().unwrap_or(0)
    }
    /// ClassVersion.
    pub fn class_version(&self) -> u8 {
        self.b().get(2).copied().unwrap_or(0)
    }
    /// Method (with the response bit 0x80).
    pub fn method(&self) -> u8 {
        self.b().get(3).copied().unwrap_or(0)
    }
    /// Status.
    pub fn status(&self) -> u16 {
        u16::from_be_bytes(arr(self.b(), 4))
    }
    /// TransactionID.
    pub fn tid(&self) -> u64 {
        u64::from_be_bytes(arr(self.b(), 8))
    }
    /// AttributeID.
    pub fn attr_id(&self) -> u16 {
        u16::from_be_bytes(arr(self.b(), 16))
    }
    /// AttributeModifier.
    pub fn attr_mod(&self) -> u32 {
        u32::from_be_bytes(arr(self.b(), 20))
    }
    /// SM_Key.
    pub fn sm_key(&self) -> u64 {
        u64::from_be_bytes(arr(self.b(), 36))
    }
    /// AttributeOffset (in 8-byte words).
    pub fn attr_offset(&self) -> u16 {
        u16::from_be_bytes(arr(self.b(), 44))
    }
    /// ComponentMask.
    pub fn comp_mask(&self) -> u64 {
        u64::from_be_bytes(arr(self.b(), 48))
    }
    /// The first PathRecord of the SA data.
    pub fn path_record(&self) -> PathRecord<&[u8]> {
        PathRecord::new_unchecked(self.b().get(SA_DATA_OFFSET..).unwrap_or(&[]))
    }
}

/// An SA PathRecord MAD (request or response), validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SaMadRepr {
    /// Method (`METHOD_GET`, `METHOD_GET_RESP`, …).
    pub method: u8,
    /// MAD status (0 = success).
    pub status: u16,
    /// TransactionID.
    pub tid: u64,
    /// ComponentMask.
    pub comp_mask: u64,
    /// The PathRecord in the data.
    pub record: PathRecordRepr,
}

impl SaMadRepr {
    /// A SubnAdmGet(PathRecord) query for one (SLID, DLID) pair.
    pub fn get_path(tid: u64, slid: u16, dlid: u16) -> Self {
        Self {
            method: METHOD_GET,
            status: 0,
            tid,
            comp_mask: comp::SLID | comp::DLID,
            record: PathRecordRepr {
                slid,
                dlid,
                ..PathRecordRepr::default()
            },
        }
    }

    /// Parses an SA MAD carrying a PathRecord: base version 1, class SA,
    /// class version 2, attribute PathRecord. A response with a non-zero
    /// status is returned as is (its record may be empty), so the caller can
    /// count the status.
    pub fn parse<T: AsRef<[u8]>>(m: &SaMad<T>) -> Result<Self, SaError> {
        let bad = |problem: String| SaError::Malformed {
            what: "SA MAD",
            problem,
        };
        if m.base_version() != 1 {
            return Err(bad(format!(
                "base version {} (expected 1)",
                m.base_version()
            )));
        }
        if m.mgmt_class() != MGMT_CLASS_SA {
            return Err(bad(format!(
                "management class {:#04x} is not SA",
                m.mgmt_class()
            )));
        }
        if m.class_version() != SA_CLASS_VERSION {
            return Err(bad(format!(
                "SA class version {} (expected 2)",
                m.class_version()
            )));
        }
        if m.attr_id() != ATTR_PATH_RECORD {
            return Err(bad(format!(
                "attribute {:#06x} is not PathRecord",
                m.attr_id()
            )));
        }
        let record = if m.status() == 0 {
            PathRecordRepr::parse(&m.path_record())?
        } else {
            PathRecordRepr::default()
        };
        Ok(Self {
            method: m.method(),
            status: m.status(),
            tid: m.tid(),
            comp_mask: m.comp_mask(),
            record,
        })
    }

    /// Emits the MAD into a buffer of at least 256 bytes (zeroing it first).
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), SaError> {
        let got = buf.len();
        let b = buf.get_mut(..MAD_LEN).ok_or(SaError::Truncated {
            what: "SA MAD",
            need: MAD_LEN,
            got,
        })?;
        b.fill(0);
        b[0] = 1;
        b[1] = MGMT_CLASS_SA;
        b[2] = SA_CLASS_VERSION;
        b[3] = self.method;
        b[4..6].copy_from_slice(&self.status.to_be_bytes());
        b[8..16].copy_from_slice(&self.tid.to_be_bytes());
        b[16..18].copy_from_slice(&ATTR_PATH_RECORD.to_be_bytes());
        b[44..46].copy_from_slice(&((PATH_RECORD_LEN / 8) as u16).to_be_bytes());
        b[48..56].copy_from_slice(&self.comp_mask.to_be_bytes());
        self.record.emit(&mut PathRecord::new_unchecked(
            &mut b[SA_DATA_OFFSET..SA_DATA_OFFSET + PATH_RECORD_LEN],
        ));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> PathRecordRepr {
        PathRecordRepr {
            service_id: 0x0102_0304_0506_0708,
            dgid: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 2, 0xc9, 3, 0, 0, 0, 0x11],
            sgid: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 2, 0xc9, 3, 0, 0, 0, 0x22],
            dlid: 0x1234,
            slid: 0xBFFF,
            raw_traffic: false,
            caching: true,
            flow_label: 0xABCDE,
            hop_limit: 0x40,
            tclass: 0x5A,
            reversible: true,
            numb_path: 0x7F,
            pkey: 0xFFFF,
            qos_class: 0xABC,
            sl: 0xD,
            mtu_selector: 2,
            mtu: 5,
            rate_selector: 2,
            rate: 16,
            pkt_life_selector: 2,
            pkt_life: 18,
            preference: 0x33,
        }
    }

    #[test]
    fn every_field_sits_at_its_ib_offset() {
        let b = sample().to_bytes();
        assert_eq!(&b[0..8], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(b[8], 0xfe);
        assert_eq!(b[23], 0x11);
        assert_eq!(b[24], 0xfe);
        assert_eq!(b[39], 0x22);
        assert_eq!(&b[40..42], &[0x12, 0x34]);
        assert_eq!(&b[42..44], &[0xBF, 0xFF]);
        // RawTraffic 0, reserved 0b100 (bit 353), FlowLabel 0xABCDE, HopLimit 0x40.
        assert_eq!(&b[44..48], &[0x4A, 0xBC, 0xDE, 0x40]);
        assert_eq!(b[48], 0x5A);
        assert_eq!(b[49], 0xFF);
        assert_eq!(&b[50..52], &[0xFF, 0xFF]);
        assert_eq!(&b[52..54], &[0xAB, 0xCD]);
        assert_eq!(b[54], 0x85);
        assert_eq!(b[55], 0x90);
        assert_eq!(b[56], 0x92);
        assert_eq!(b[57], 0x33);
        assert_eq!(&b[58..64], &[0; 6]);
    }

    #[test]
    fn bit_353_is_the_bit_after_raw_traffic() {
        let mut b = [0u8; 64];
        let mut p = PathRecord::new_checked(&mut b[..]).unwrap();
        p.set_caching(true);
        // Bit 353 counted from the record's first bit, MSB first.
        assert_eq!(b[353 / 8] & (0x80 >> (353 % 8)), 0x40);
        assert_eq!(b.iter().filter(|&&x| x != 0).count(), 1);
        let mut p = PathRecord::new_checked(&mut b[..]).unwrap();
        p.set_raw_traffic(true);
        p.set_flow_label(0xF_FFFF);
        p.set_hop_limit(0xFF);
        p.set_caching(false);
        assert!(!p.caching());
        assert!(p.raw_traffic());
        assert_eq!(p.flow_label(), 0xF_FFFF);
        assert_eq!(b[44], 0x8F);
    }

    #[test]
    fn parse_emit_round_trip() {
        let r = sample();
        let b = r.to_bytes();
        assert_eq!(
            PathRecordRepr::parse(&PathRecord::new_checked(&b[..]).unwrap()).unwrap(),
            r
        );
    }

    #[test]
    fn reserved_bits_other_than_353_are_ignored_on_parse() {
        let mut b = sample().to_bytes();
        b[44] |= 0x30;
        b[60] = 0xFF;
        let r = PathRecordRepr::parse(&PathRecord::new_checked(&b[..]).unwrap()).unwrap();
        assert_eq!(r, sample());
    }

    #[test]
    fn short_and_malformed_records_are_errors() {
        assert!(matches!(
            PathRecord::new_checked(&[0u8; 63][..]),
            Err(SaError::Truncated {
                need: 64,
                got: 63,
                ..
            })
        ));
        let mut b = sample().to_bytes();
        b[54] = 6;
        assert!(PathRecordRepr::parse(&PathRecord::new_checked(&b[..]).unwrap()).is_err());
        let mut b = sample().to_bytes();
        b[55] = 1;
        assert!(PathRecordRepr::parse(&PathRecord::new_checked(&b[..]).unwrap()).is_err());
        // Unchecked views over short buffers read zeros, never panic.
        let p = PathRecord::new_unchecked(&[0xFFu8; 10][..]);
        assert_eq!(p.rate(), 0);
        assert_eq!(p.service_id(), u64::MAX);
        assert_eq!(p.dlid(), 0);
    }

    #[test]
    fn mad_layout_and_round_trip() {
        let q = SaMadRepr::get_path(0x1122_3344_5566_7788, 3, 9);
        let mut buf = [0u8; MAD_LEN];
        q.emit(&mut buf).unwrap();
        assert_eq!(&buf[0..4], &[1, 3, 2, 1]);
        assert_eq!(&buf[8..16], &0x1122_3344_5566_7788u64.to_be_bytes());
        assert_eq!(&buf[16..18], &[0, 0x35]);
        assert_eq!(&buf[44..46], &[0, 8]);
        assert_eq!(&buf[48..56], &[0, 0, 0, 0, 0, 0, 0, 0x30]);
        assert_eq!(&buf[96..100], &[0, 9, 0, 3]);
        let back = SaMadRepr::parse(&SaMad::new_checked(&buf[..]).unwrap()).unwrap();
        assert_eq!(back, q);
        buf[1] = 0x81;
        assert!(SaMadRepr::parse(&SaMad::new_checked(&buf[..]).unwrap()).is_err());
        assert!(SaMad::new_checked(&buf[..100]).is_err());
        assert!(q.emit(&mut [0u8; 100]).is_err());
    }
}
