//! The SA MAD (IBA 1.3 §15.2.1): the 24-byte common MAD header, the
//! 12-byte RMPP header (§13.6.2.1), the 20-byte SA header and 200 bytes of
//! data. [`SaHeader`] is the validated form of the first 56 bytes; parsing
//! never panics (property-tested in `tests/sa_props.rs`).
//!
//! | bytes | field |
//! |---|---|
//! | 0 | BaseVersion (1) |
//! | 1 | MgmtClass (0x03) |
//! | 2 | ClassVersion (2) |
//! | 3 | R:1, Method:7 |
//! | 4..6 | Status |
//! | 8..16 | TransactionID |
//! | 16..18 | AttributeID |
//! | 20..24 | AttributeModifier |
//! | 24 | RMPPVersion |
//! | 25 | RMPPType (1 DATA, 2 ACK, 3 STOP, 4 ABORT) |
//! | 26 | RRespTime:5, RMPPFlags:3 (Last, First, Active) |
//! | 27 | RMPPStatus |
//! | 28..32 | Data1: SegmentNumber |
//! | 32..36 | Data2: PayloadLength (DATA) or NewWindowLast (ACK) |
//! | 36..44 | SM_Key |
//! | 44..46 | AttributeOffset (8-byte words between records) |
//! | 48..56 | ComponentMask |
//! | 56..256 | SA data |

use crate::error::WireError;

/// Length of every SA MAD.
pub const MAD_LEN: usize = 256;
/// Offset of the SA data.
pub const SA_DATA_OFFSET: usize = 56;
/// Bytes of SA data in one MAD (and in one RMPP segment).
pub const SA_DATA_LEN: usize = MAD_LEN - SA_DATA_OFFSET;
/// Offset of the RMPP header.
pub const RMPP_OFFSET: usize = 24;
/// RMPP payload bytes of a full segment: SA header (20) + data (200). The
/// PayloadLength of an SA transfer counts these, as the Linux MAD layer does.
pub const RMPP_SEGMENT_PAYLOAD: u32 = (MAD_LEN - 36) as u32;

/// Management class of Subnet Administration.
pub const MGMT_CLASS_SA: u8 = 0x03;
/// The SA class version.
pub const SA_CLASS_VERSION: u8 = 2;

/// SA methods (IBA 1.3 Table 202).
pub mod method {
    /// SubnAdmGet.
    pub const GET: u8 = 0x01;
    /// SubnAdmSet.
    pub const SET: u8 = 0x02;
    /// SubnAdmGetResp.
    pub const GET_RESP: u8 = 0x81;
    /// SubnAdmReport.
    pub const REPORT: u8 = 0x06;
    /// SubnAdmGetTable.
    pub const GET_TABLE: u8 = 0x12;
    /// SubnAdmGetTableResp.
    pub const GET_TABLE_RESP: u8 = 0x92;
    /// SubnAdmGetMulti.
    pub const GET_MULTI: u8 = 0x14;
    /// SubnAdmDelete.
    pub const DELETE: u8 = 0x15;
    /// SubnAdmGetTraceTable.
    pub const GET_TRACE_TABLE: u8 = 0x13;
}

/// SA MAD statuses (IBA 1.3 §13.4.7 and Table 204).
pub mod status {
    /// Bad base or class version.
    pub const BAD_VERSION: u16 = 0x0004;
    /// The method is not supported.
    pub const UNSUPPORTED_METHOD: u16 = 0x0008;
    /// The method/attribute combination is not supported.
    pub const UNSUPPORTED_METHOD_ATTR: u16 = 0x000C;
    /// One or more fields of the attribute or modifier are invalid.
    pub const INVALID_FIELD: u16 = 0x001C;
    /// ERR_REQ_INVALID (SA class specific, code 2).
    pub const REQ_INVALID: u16 = 0x0200;
    /// ERR_NO_RECORDS.
    pub const NO_RECORDS: u16 = 0x0300;
    /// ERR_TOO_MANY_RECORDS.
    pub const TOO_MANY_RECORDS: u16 = 0x0400;
    /// ERR_REQ_INVALID_GID.
    pub const INVALID_GID: u16 = 0x0500;
    /// ERR_REQ_INSUFFICIENT_COMPONENTS.
    pub const INSUFFICIENT_COMPONENTS: u16 = 0x0600;
}

/// RMPP packet types.
pub mod rmpp_type {
    /// No RMPP (a plain MAD).
    pub const NONE: u8 = 0;
    /// A data segment.
    pub const DATA: u8 = 1;
    /// An acknowledgement.
    pub const ACK: u8 = 2;
    /// The receiver asks to stop.
    pub const STOP: u8 = 3;
    /// The transfer is abandoned.
    pub const ABORT: u8 = 4;
}

/// RMPP flag bits (low three bits of byte 26).
pub mod rmpp_flag {
    /// The MAD is part of an RMPP transfer.
    pub const ACTIVE: u8 = 0x01;
    /// First segment.
    pub const FIRST: u8 = 0x02;
    /// Last segment.
    pub const LAST: u8 = 0x04;
}

/// The RMPP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RmppHeader {
    /// RMPPVersion (1; 0 = not RMPP).
    pub version: u8,
    /// RMPPType.
    pub kind: u8,
    /// RRespTime (5 bits).
    pub resp_time: u8,
    /// RMPPFlags (3 bits).
    pub flags: u8,
    /// RMPPStatus.
    pub status: u8,
    /// Data1 (SegmentNumber).
    pub data1: u32,
    /// Data2 (PayloadLength or NewWindowLast).
    pub data2: u32,
}

impl RmppHeader {
    /// Whether the Active flag is set.
    pub fn active(&self) -> bool {
        self.flags & rmpp_flag::ACTIVE != 0
    }
}

/// The header of an SA MAD (first 56 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SaHeader {
    /// ClassVersion.
    pub class_version: u8,
    /// Method, with the response bit.
    pub method: u8,
    /// Status.
    pub status: u16,
    /// TransactionID.
    pub tid: u64,
    /// AttributeID.
    pub attr_id: u16,
    /// AttributeModifier.
    pub attr_mod: u32,
    /// RMPP header.
    pub rmpp: RmppHeader,
    /// SM_Key.
    pub sm_key: u64,
    /// AttributeOffset, in 8-byte words.
    pub attr_offset: u16,
    /// ComponentMask.
    pub comp_mask: u64,
}

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

impl SaHeader {
    /// Parses the header of an SA MAD: at least 256 bytes, base version 1,
    /// class 0x03. The class version is reported, not checked (the SA
    /// answers a wrong one with a status).
    pub fn parse(b: &[u8]) -> Result<Self, WireError> {
        if b.len() < MAD_LEN {
            return Err(WireError::Truncated {
                what: "SA MAD",
                need: MAD_LEN,
                got: b.len(),
            });
        }
        if b[0] != 1 {
            return Err(WireError::Malformed {
                what: "SA MAD",
                problem: format!("base version {} (expected 1)", b[0]),
            });
        }
        if b[1] != MGMT_CLASS_SA {
            return Err(WireError::Malformed {
                what: "SA MAD",
                problem: format!("management class 0x{:02x} (expected 0x03)", b[1]),
            });
        }
        Ok(Self {
            class_version: b[2],
            method: b[3],
            status: be16(b, 4),
            tid: be64(b, 8),
            attr_id: be16(b, 16),
            attr_mod: be32(b, 20),
            rmpp: RmppHeader {
                version: b[24],
                kind: b[25],
                resp_time: b[26] >> 3,
                flags: b[26] & 0x07,
                status: b[27],
                data1: be32(b, 28),
                data2: be32(b, 32),
            },
            sm_key: be64(b, 36),
            attr_offset: be16(b, 44),
            comp_mask: be64(b, 48),
        })
    }

    /// Writes the header into the first 56 bytes of `b` (the data is left
    /// as it is).
    pub fn emit(&self, b: &mut [u8; MAD_LEN]) {
        b[0] = 1;
        b[1] = MGMT_CLASS_SA;
        b[2] = self.class_version;
        b[3] = self.method;
        b[4..6].copy_from_slice(&self.status.to_be_bytes());
        b[6..8].fill(0);
        b[8..16].copy_from_slice(&self.tid.to_be_bytes());
        b[16..18].copy_from_slice(&self.attr_id.to_be_bytes());
        b[18..20].fill(0);
        b[20..24].copy_from_slice(&self.attr_mod.to_be_bytes());
        b[24] = self.rmpp.version;
        b[25] = self.rmpp.kind;
        b[26] = (self.rmpp.resp_time << 3) | (self.rmpp.flags & 0x07);
        b[27] = self.rmpp.status;
        b[28..32].copy_from_slice(&self.rmpp.data1.to_be_bytes());
        b[32..36].copy_from_slice(&self.rmpp.data2.to_be_bytes());
        b[36..44].copy_from_slice(&self.sm_key.to_be_bytes());
        b[44..46].copy_from_slice(&self.attr_offset.to_be_bytes());
        b[46..48].fill(0);
        b[48..56].copy_from_slice(&self.comp_mask.to_be_bytes());
    }

    /// Whether the MAD is a response (R bit).
    pub fn is_response(&self) -> bool {
        self.method & 0x80 != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_get_table_request_parses_field_by_field() {
        let mut b = [0u8; MAD_LEN];
        b[..4].copy_from_slice(&[1, 3, 2, 0x12]);
        b[8..16].copy_from_slice(&0x0102_0304_0506_0708u64.to_be_bytes());
        b[16..18].copy_from_slice(&0x0011u16.to_be_bytes());
        b[24..28].copy_from_slice(&[1, 2, 0x28 | 0x07, 0]);
        b[28..32].copy_from_slice(&3u32.to_be_bytes());
        b[32..36].copy_from_slice(&7u32.to_be_bytes());
        b[44..46].copy_from_slice(&14u16.to_be_bytes());
        b[48..56].copy_from_slice(&1u64.to_be_bytes());
        let h = SaHeader::parse(&b).unwrap();
        assert_eq!(
            (h.method, h.tid, h.attr_id, h.attr_offset, h.comp_mask),
            (0x12, 0x0102_0304_0506_0708, 0x11, 14, 1)
        );
        assert_eq!(
            h.rmpp,
            RmppHeader {
                version: 1,
                kind: rmpp_type::ACK,
                resp_time: 5,
                flags: 7,
                status: 0,
                data1: 3,
                data2: 7
            }
        );
        let mut out = [0u8; MAD_LEN];
        h.emit(&mut out);
        assert_eq!(out, b);
    }

    #[test]
    fn rejects_short_and_foreign_mads() {
        assert!(SaHeader::parse(&[1, 3, 2, 1]).is_err());
        let mut b = [0u8; MAD_LEN];
        b[0] = 1;
        b[1] = 0x81;
        assert!(SaHeader::parse(&b).is_err());
        b[1] = 3;
        b[0] = 2;
        assert!(SaHeader::parse(&b).is_err());
    }
}
