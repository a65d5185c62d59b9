//! SA record layouts (IBA 1.3 §15.2.5) and component-mask matching.
//!
//! Every record is its bytes; a [`Layout`] lists, per component-mask bit,
//! the bit range of that component in the record. A request matches a record
//! when every component its mask selects holds the same bits in both (the
//! SA's rule, §15.4.1). Records whose matching is not bit equality (a LID
//! inside an LMC range, a CapabilityMask subset) are handled where they
//! are built, and those bits are left out of the generic test.

/// Attribute ids of the SA (IBA 1.3 Table 205).
pub mod attr {
    /// ClassPortInfo.
    pub const CLASS_PORT_INFO: u16 = 0x0001;
    /// NodeRecord.
    pub const NODE_RECORD: u16 = 0x0011;
    /// PortInfoRecord.
    pub const PORT_INFO_RECORD: u16 = 0x0012;
    /// SLtoVLMappingTableRecord.
    pub const SL2VL_RECORD: u16 = 0x0013;
    /// SwitchInfoRecord.
    pub const SWITCH_INFO_RECORD: u16 = 0x0014;
    /// LinearForwardingTableRecord.
    pub const LFT_RECORD: u16 = 0x0015;
    /// MulticastForwardingTableRecord.
    pub const MFT_RECORD: u16 = 0x0017;
    /// SMInfoRecord.
    pub const SM_INFO_RECORD: u16 = 0x0018;
    /// LinkRecord.
    pub const LINK_RECORD: u16 = 0x0020;
    /// GUIDInfoRecord.
    pub const GUID_INFO_RECORD: u16 = 0x0030;
    /// ServiceRecord.
    pub const SERVICE_RECORD: u16 = 0x0031;
    /// P_KeyTableRecord.
    pub const PKEY_TABLE_RECORD: u16 = 0x0033;
    /// PathRecord.
    pub const PATH_RECORD: u16 = 0x0035;
    /// VLArbitrationTableRecord.
    pub const VL_ARB_RECORD: u16 = 0x0036;
    /// MCMemberRecord.
    pub const MC_MEMBER_RECORD: u16 = 0x0038;
    /// InformInfo.
    pub const INFORM_INFO: u16 = 0x0003;
    /// InformInfoRecord.
    pub const INFORM_INFO_RECORD: u16 = 0x00F3;
}

/// Component bit ranges of one record type: `fields[i]` = (first bit,
/// bits) of component i; `None` for a component matched elsewhere.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// Record size in bytes (before padding to 8).
    pub size: usize,
    /// Per component-mask bit.
    pub fields: &'static [Option<(usize, usize)>],
}

impl Layout {
    /// AttributeOffset: the record size in 8-byte words, rounded up.
    pub fn attr_offset(&self) -> u16 {
        self.size.div_ceil(8) as u16
    }

    /// Stride in bytes between records of a table.
    pub fn stride(&self) -> usize {
        self.attr_offset() as usize * 8
    }

    /// Whether `record` holds the bits of `template` selected by `mask`.
    pub fn matches(&self, mask: u64, template: &[u8], record: &[u8]) -> bool {
        self.fields.iter().enumerate().all(|(i, f)| {
            if mask & (1 << i) == 0 {
                return true;
            }
            let Some((start, len)) = *f else { return true };
            (start..start + len).all(|b| bit(template, b) == bit(record, b))
        })
    }
}

fn bit(b: &[u8], i: usize) -> bool {
    b.get(i / 8).is_some_and(|x| x & (0x80 >> (i % 8)) != 0)
}

/// NodeRecord: LID, reserved, the 40 bytes of NodeInfo field by field,
/// NodeDescription. The LID (bit 0) matches any LID of the port's LMC range.
pub const NODE_RECORD: Layout = Layout {
    size: 108,
    fields: &[
        None,
        Some((16, 16)),
        Some((32, 8)),
        Some((40, 8)),
        Some((48, 8)),
        Some((56, 8)),
        Some((64, 64)),
        Some((128, 64)),
        Some((192, 64)),
        Some((256, 16)),
        Some((272, 16)),
        Some((288, 32)),
        Some((320, 8)),
        Some((328, 24)),
        Some((352, 512)),
    ],
};

/// PortInfoRecord: EndportLID, PortNum, Options, then PortInfo (64 bytes).
/// Matched here: LID, PortNum and the PortInfo fields up to LocalPortNum
/// except CapabilityMask (bit 7, a subset test done by the caller).
pub const PORT_INFO_RECORD: Layout = Layout {
    size: 68,
    fields: &[
        Some((0, 16)),
        Some((16, 8)),
        None,
        Some((32, 64)),
        Some((96, 64)),
        Some((160, 16)),
        Some((176, 16)),
        None,
        Some((224, 16)),
        Some((240, 16)),
        Some((256, 8)),
    ],
};

/// SwitchInfoRecord: LID, reserved, SwitchInfo (20 bytes).
pub const SWITCH_INFO_RECORD: Layout = Layout {
    size: 24,
    fields: &[Some((0, 16))],
};

/// LinkRecord: FromLID, FromPort, ToPort, ToLID.
pub const LINK_RECORD: Layout = Layout {
    size: 8,
    fields: &[Some((0, 16)), Some((16, 8)), Some((24, 8)), Some((32, 16))],
};

/// SMInfoRecord: LID, reserved, SMInfo (GUID, SM_Key, ActCount, Priority,
/// SMState).
pub const SM_INFO_RECORD: Layout = Layout {
    size: 25,
    fields: &[
        Some((0, 16)),
        Some((16, 16)),
        Some((32, 64)),
        Some((96, 64)),
        Some((160, 32)),
        Some((192, 4)),
        Some((196, 4)),
    ],
};

/// GUIDInfoRecord: LID, BlockNum, reserved, reserved, GUIDInfo (8 GUIDs).
pub const GUID_INFO_RECORD: Layout = Layout {
    size: 72,
    fields: &[
        Some((0, 16)),
        Some((16, 8)),
        Some((24, 8)),
        Some((32, 32)),
        Some((64, 64)),
        Some((128, 64)),
        Some((192, 64)),
        Some((256, 64)),
        Some((320, 64)),
        Some((384, 64)),
        Some((448, 64)),
        Some((512, 64)),
    ],
};

/// LinearForwardingTableRecord: LID, BlockNum, 32 reserved bits, 64 ports.
pub const LFT_RECORD: Layout = Layout {
    size: 72,
    fields: &[Some((0, 16)), Some((16, 16))],
};

/// PathRecord (64 bytes). SGID/DGID/SLID/DLID select the end points and are
/// handled by the caller; P_Key, SL and the MTU/rate values are matched
/// here (the selectors are the caller's).
pub const PATH_RECORD: Layout = Layout {
    size: 64,
    fields: &[
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        Some((384, 8)),
        None,
        None,
        Some((400, 16)),
        None,
        Some((428, 4)),
    ],
};

/// An empty record of `layout`'s size.
pub fn blank(layout: &Layout) -> Vec<u8> {
    vec![0u8; layout.size]
}

/// Writes a big-endian u16 at `at`.
pub fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// Writes a big-endian u64 at `at`.
pub fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_be_bytes());
}

/// Reads a big-endian u16 at `at` (0 past the end).
pub fn get16(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2)
        .map(|s| u16::from_be_bytes([s[0], s[1]]))
        .unwrap_or(0)
}

/// Reads a big-endian u64 at `at` (0 past the end).
pub fn get64(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .map(|s| {
            let mut a = [0u8; 8];
            a.copy_from_slice(s);
            u64::from_be_bytes(a)
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_the_record_sizes_in_words() {
        assert_eq!(NODE_RECORD.attr_offset(), 14);
        assert_eq!(PORT_INFO_RECORD.attr_offset(), 9);
        assert_eq!(SWITCH_INFO_RECORD.attr_offset(), 3);
        assert_eq!(LINK_RECORD.attr_offset(), 1);
        assert_eq!(SM_INFO_RECORD.attr_offset(), 4);
        assert_eq!(GUID_INFO_RECORD.attr_offset(), 9);
        assert_eq!(LFT_RECORD.attr_offset(), 9);
        assert_eq!(PATH_RECORD.attr_offset(), 8);
    }

    #[test]
    fn matching_compares_only_the_selected_bits() {
        let mut rec = blank(&LINK_RECORD);
        put16(&mut rec, 0, 7);
        rec[2] = 3;
        let mut tpl = blank(&LINK_RECORD);
        put16(&mut tpl, 0, 7);
        assert!(LINK_RECORD.matches(0b0001, &tpl, &rec));
        assert!(!LINK_RECORD.matches(0b0011, &tpl, &rec));
        tpl[2] = 3;
        assert!(LINK_RECORD.matches(0b0011, &tpl, &rec));
        assert!(LINK_RECORD.matches(0, &[], &rec), "no mask: everything");
        assert!(
            !LINK_RECORD.matches(1, &[], &rec),
            "a short template is zeros"
        );
    }
}
