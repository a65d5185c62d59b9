//! ibcloud's native binary format: the whole fabric (topology, GUIDs, LIDs,
//! descriptions, rates, ranks) and, optionally, the forwarding tables.
//!
//! Text formats of the field lose data (ranks, LMC, port states) and are slow
//! to parse at 10,000+ nodes; this one round-trips a [`Fabric`] exactly and
//! loads the 11,664-node fat-tree in milliseconds.
//!
//! Layout: [`MAGIC`] (8 bytes), the format version as a little-endian `u32`
//! ([`VERSION`]), then one postcard-encoded payload `(Fabric,
//! Option<ForwardingTables>)` that must end exactly at the end of the file.
//! Decoding re-checks every invariant the model relies on, so a corrupted or
//! hand-made file becomes a [`ParseError`], never a panic later on.

use crate::error::{FabricError, ParseError};
use crate::ids::Lid;
use crate::lft::{ForwardingTables, NO_PORT};
use crate::model::Fabric;
use serde::{Deserialize, Serialize};

/// First bytes of every native file.
pub const MAGIC: &[u8] = b"IBCLOUD\0";

/// The format version this build writes and reads.
pub const VERSION: u32 = 1;

/// Largest LFT a switch can have: 768 blocks of 64 LIDs cover 0x0000-0xBFFF.
const MAX_LFT_BLOCKS: usize = 768;

const HEADER_LEN: usize = MAGIC.len() + 4;

/// What a native file holds.
#[derive(Debug, Clone, PartialEq)]
pub struct NativeFile {
    /// The fabric, with its GUID index rebuilt and invariants checked.
    pub fabric: Fabric,
    /// Forwarding tables for that fabric, if the file carries them.
    pub tables: Option<ForwardingTables>,
}

/// Borrowing twin of the decoded payload, so encoding copies nothing.
#[derive(Serialize)]
struct PayloadRef<'a> {
    fabric: &'a Fabric,
    tables: Option<&'a ForwardingTables>,
}

#[derive(Deserialize)]
struct Payload {
    fabric: Fabric,
    tables: Option<ForwardingTables>,
}

/// Serialises a fabric and, optionally, its forwarding tables.
///
/// ```
/// use ibcloud_fabric::{formats::native, generate};
/// let fabric = generate::preset("ft324")?.build()?;
/// let bytes = native::encode(&fabric, None);
/// assert_eq!(native::decode(&bytes, "ft324.ibcf")?.fabric, fabric);
/// # Ok::<(), ibcloud_fabric::FabricError>(())
/// ```
pub fn encode(fabric: &Fabric, tables: Option<&ForwardingTables>) -> Vec<u8> {
    let payload = PayloadRef { fabric, tables };
    let mut out = Vec::with_capacity(HEADER_LEN + estimated_size(fabric, tables));
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    // Writing into a Vec cannot fail, and every field of the model is
    // serialisable (no maps with non-string keys, no untagged enums).
    match postcard::to_extend(&payload, out) {
        Ok(out) => out,
        Err(e) => unreachable!("postcard cannot fail writing into a Vec: {e}"),
    }
}

/// A generous guess of the payload size, to avoid regrowing a 20 MB buffer.
fn estimated_size(fabric: &Fabric, tables: Option<&ForwardingTables>) -> usize {
    let nodes: usize = fabric
        .nodes()
        .iter()
        .map(|n| 48 + n.description.len() + 40 * (n.num_ports as usize + 1))
        .sum();
    let lfts: usize = tables.map_or(0, |t| {
        t.iter().map(|(_, t)| t.len() + 4).sum::<usize>() + t.num_nodes()
    });
    nodes + lfts + 16
}

/// Reads a native file; `file` names it in error messages.
///
/// Errors (all [`ParseError`] at line 0): wrong magic, unknown version,
/// truncated or undecodable payload, trailing bytes, and content that breaks
/// the model's invariants (port offsets, duplicate GUIDs, one-sided links,
/// tables that do not fit the fabric).
pub fn decode(data: &[u8], file: &str) -> Result<NativeFile, FabricError> {
    let fail = |problem: String| FabricError::from(ParseError::new(file, 0, problem));
    if data.len() < MAGIC.len() || !data.starts_with(MAGIC) {
        return Err(fail("not an ibcloud native file (bad magic)".into()));
    }
    let Some(version) = data.get(MAGIC.len()..HEADER_LEN) else {
        return Err(fail(
            "truncated header: the format version is missing".into(),
        ));
    };
    let version = u32::from_le_bytes([version[0], version[1], version[2], version[3]]);
    if version != VERSION {
        return Err(fail(format!(
            "native format version {version} is not supported (this build reads version {VERSION})"
        )));
    }
    let (payload, rest) = postcard::take_from_bytes::<Payload>(&data[HEADER_LEN..])
        .map_err(|e| fail(format!("truncated or corrupt payload: {e}")))?;
    if !rest.is_empty() {
        return Err(fail(format!(
            "{} bytes of trailing garbage after the payload",
            rest.len()
        )));
    }
    let Payload { mut fabric, tables } = payload;
    fabric
        .reindex()
        .map_err(|e| fail(format!("inconsistent fabric: {e}")))?;
    check_fabric(&fabric).map_err(|e| fail(format!("inconsistent fabric: {e}")))?;
    if let Some(t) = &tables {
        check_tables(&fabric, t)
            .map_err(|e| fail(format!("forwarding tables do not fit the fabric: {e}")))?;
    }
    Ok(NativeFile { fabric, tables })
}

/// Invariants the builder guarantees but `Fabric::reindex` does not check;
/// later code (LID arithmetic, port walks) relies on them.
fn check_fabric(fabric: &Fabric) -> Result<(), String> {
    for (id, node) in fabric.iter_nodes() {
        if node.num_ports == 0 || node.num_ports > 254 {
            return Err(format!(
                "node {id} has {} ports; a node has 1 to 254",
                node.num_ports
            ));
        }
        for (p, port) in fabric.ports(id).iter().enumerate() {
            if p == 0 && port.remote.is_some() {
                return Err(format!("node {id} port 0 is cabled"));
            }
            if port.lmc > 7 {
                return Err(format!("node {id} port {p} has LMC {}", port.lmc));
            }
            if port.lid.0 as u32 + (1u32 << port.lmc) - 1 > u16::MAX as u32 {
                return Err(format!(
                    "node {id} port {p}: LID {} with LMC {} overflows",
                    port.lid, port.lmc
                ));
            }
        }
    }
    Ok(())
}

/// Tables must have one slot per node, entries only on switches, whole
/// blocks, at most 768 blocks, and only ports the switch has (or no port).
fn check_tables(fabric: &Fabric, tables: &ForwardingTables) -> Result<(), String> {
    if tables.num_nodes() != fabric.num_nodes() {
        return Err(format!(
            "{} table slots for {} nodes",
            tables.num_nodes(),
            fabric.num_nodes()
        ));
    }
    for (id, table) in tables.iter() {
        let node = fabric.node(id);
        if !node.is_switch() {
            return Err(format!(
                "node {id} ('{}') is not a switch but has a table",
                node.description
            ));
        }
        if table.len() % Lid::PER_LFT_BLOCK != 0
            || table.len() > MAX_LFT_BLOCKS * Lid::PER_LFT_BLOCK
        {
            return Err(format!(
                "switch {id} has a table of {} entries",
                table.len()
            ));
        }
        if let Some(lid) = table
            .iter()
            .position(|&p| p != NO_PORT && p > node.num_ports)
        {
            return Err(format!(
                "switch {id} ('{}') routes LID {} to port {}, but has {} ports",
                node.description,
                Lid(lid as u16),
                table[lid],
                node.num_ports
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::preset;
    use crate::{Guid, LinkRate, LinkSpeed, LinkWidth, NodeKind, PortRef};

    fn small() -> Fabric {
        let mut f = preset("4-ary-2-full").unwrap().build().unwrap();
        f.infer_ranks();
        f
    }

    fn tables_for(f: &Fabric) -> ForwardingTables {
        let mut t = ForwardingTables::new(f);
        for (i, sw) in f.switches().enumerate() {
            for lid in 1..=f.max_lid() {
                assert!(t.set(
                    sw,
                    Lid(lid),
                    (lid as usize + i) as u8 % f.node(sw).num_ports + 1
                ));
            }
        }
        t
    }

    fn problem(data: &[u8]) -> String {
        match decode(data, "x.ibcf") {
            Err(FabricError::Parse(e)) => {
                assert_eq!(e.location.file, "x.ibcf");
                e.problem
            }
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn round_trips_without_tables() {
        let f = small();
        let bytes = encode(&f, None);
        assert!(bytes.starts_with(MAGIC));
        assert_eq!(&bytes[8..12], &1u32.to_le_bytes());
        let back = decode(&bytes, "x").unwrap();
        assert_eq!(back.fabric, f);
        assert!(back.tables.is_none());
        let any = f.nodes()[0].guid;
        assert_eq!(
            back.fabric.node_by_guid(any),
            f.node_by_guid(any),
            "GUID index rebuilt"
        );
    }

    #[test]
    fn round_trips_with_tables_and_odd_content() {
        let mut f = small();
        let sw = f.switches().next().unwrap();
        f.node_mut(sw).description = "spine 'β' {1}\n".into();
        let ca = f.cas().next().unwrap();
        f.set_lid(PortRef::new(ca, 1), Lid(0x40), 3).unwrap();
        f.port_mut(PortRef::new(ca, 1)).unwrap().rate =
            LinkRate::new(LinkWidth::X12, LinkSpeed::Ndr);
        let t = tables_for(&f);
        let back = decode(&encode(&f, Some(&t)), "x").unwrap();
        assert_eq!(back.fabric, f);
        assert_eq!(back.tables.as_ref(), Some(&t));
    }

    #[test]
    fn rejects_bad_headers() {
        let bytes = encode(&small(), None);
        assert!(problem(b"").contains("bad magic"));
        assert!(problem(b"IBCLOUD").contains("bad magic"));
        assert!(problem(b"IBCLOUX\0\x01\0\0\0").contains("bad magic"));
        assert!(problem(&bytes[..10]).contains("truncated header"));
        let mut v2 = bytes.clone();
        v2[8] = 2;
        assert!(
            problem(&v2).contains("version 2 is not supported"),
            "{}",
            problem(&v2)
        );
    }

    #[test]
    fn rejects_truncation_and_trailing_bytes() {
        let f = small();
        let t = tables_for(&f);
        let bytes = encode(&f, Some(&t));
        for cut in [12, 13, bytes.len() / 2, bytes.len() - 1] {
            assert!(
                problem(&bytes[..cut]).contains("truncated or corrupt"),
                "cut {cut}"
            );
        }
        let mut longer = bytes.clone();
        longer.extend_from_slice(b"xyz");
        assert_eq!(
            problem(&longer),
            "3 bytes of trailing garbage after the payload"
        );
    }

    #[test]
    fn rejects_inconsistent_content() {
        // A one-sided link: encode a fabric whose port claims a peer that does not point back.
        let mut f = small();
        let ca = f.cas().next().unwrap();
        let other = f.cas().nth(1).unwrap();
        f.port_mut(PortRef::new(ca, 1)).unwrap().remote = Some(PortRef::new(other, 1));
        assert!(problem(&encode(&f, None)).contains("not symmetric"));

        let mut f = small();
        let second = f.nodes()[1].guid;
        f.node_mut(crate::NodeId(0)).guid = second;
        assert!(problem(&encode(&f, None)).contains("duplicate node GUID"));

        let mut f = small();
        f.port_mut(PortRef::new(ca, 1)).unwrap().lmc = 9;
        assert!(problem(&encode(&f, None)).contains("LMC 9"));
    }

    #[test]
    fn rejects_tables_that_do_not_fit() {
        let f = small();
        let other = preset("8-ary-2").unwrap().build().unwrap();
        let t = ForwardingTables::new(&other);
        assert!(problem(&encode(&f, Some(&t))).contains("table slots"));

        let mut t = ForwardingTables::new(&f);
        let sw = f.switches().next().unwrap();
        t.set(sw, Lid(3), 9);
        let p = problem(&encode(&f, Some(&t)));
        assert!(p.contains("to port 9, but has 8 ports"), "{p}");

        // A table on a CA slot: build tables for a fabric where that node is a switch.
        let mut b = crate::FabricBuilder::new();
        let s = b
            .add_node(crate::NodeSpec::new(NodeKind::Switch, Guid(1), 4, "s"))
            .unwrap();
        let c = b
            .add_node(crate::NodeSpec::new(NodeKind::Switch, Guid(2), 4, "c"))
            .unwrap();
        b.connect(PortRef::new(s, 1), PortRef::new(c, 1), LinkRate::default())
            .unwrap();
        let two_switches = b.build();
        let t = ForwardingTables::new(&two_switches);
        let mut b = crate::FabricBuilder::new();
        let s = b
            .add_node(crate::NodeSpec::new(NodeKind::Switch, Guid(1), 4, "s"))
            .unwrap();
        let c = b
            .add_node(crate::NodeSpec::new(NodeKind::Ca, Guid(2), 4, "c"))
            .unwrap();
        b.connect(PortRef::new(s, 1), PortRef::new(c, 1), LinkRate::default())
            .unwrap();
        let p = problem(&encode(&b.build(), Some(&t)));
        assert!(p.contains("'c') is not a switch"), "{p}");
    }

    #[test]
    fn sniffed_as_native() {
        let bytes = encode(&small(), None);
        assert_eq!(
            super::super::Format::sniff(&bytes),
            Some(super::super::Format::Native)
        );
    }
}
