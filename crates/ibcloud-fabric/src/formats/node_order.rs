//! Node-order files: which endpoints take ranks 0, 1, … in an analysis.
//!
//! Two layouts are read, line by line (`#` starts a comment, blank lines are
//! skipped), by the first word of each line:
//!
//! - ORCS's node-ordering file: one GUID per line (port or node GUID);
//! - OpenSM's `opensm-ftree-ca-order.dump`: `0x%04x<TAB>description`, the
//!   compute nodes' LIDs leaf by leaf, `0xFFFF<TAB>DUMMY` for an empty slot.
//!
//! Numbers are hexadecimal, with or without `0x` (as both tools write them).
//! A value up to 0xFFFF is a LID (0xFFFF the placeholder), anything larger a
//! GUID; real GUIDs are never that small.
//!
//! ```
//! use ibcloud_fabric::formats::node_order::{parse, OrderEntry};
//! use ibcloud_fabric::{Guid, Lid};
//! let entries = parse("0x0004\tH1\n0xFFFF\tDUMMY\n0x0002c90300000100\n", "order").unwrap();
//! assert_eq!(entries, vec![OrderEntry::Lid(Lid(4)), OrderEntry::Dummy, OrderEntry::Guid(Guid(0x0002c90300000100))]);
//! ```

use super::text::{err, numbered_lines, parse_u64};
use crate::error::FabricError;
use crate::ids::{Guid, Lid};
use std::io::{self, Write};

/// One line of a node-order file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderEntry {
    /// A port's LID.
    Lid(Lid),
    /// A port or node GUID.
    Guid(Guid),
    /// OpenSM's placeholder for a missing compute node (`0xFFFF DUMMY`).
    Dummy,
}

/// Parses a node-order file; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Vec<OrderEntry>, FabricError> {
    let mut out = Vec::new();
    for (no, raw) in numbered_lines(text) {
        let line = raw.split('#').next().unwrap_or("").trim();
        let Some(word) = line.split_whitespace().next() else {
            continue;
        };
        let v = parse_u64(word, true).ok_or_else(|| {
            err(
                file,
                no,
                format!("expected a hexadecimal LID or GUID, found '{word}'"),
            )
        })?;
        out.push(match v {
            0 => return Err(err(file, no, "LID/GUID 0 names no port").into()),
            0xFFFF => OrderEntry::Dummy,
            v if v < 0xFFFF => {
                let lid = Lid(v as u16);
                if !lid.is_unicast() {
                    return Err(err(
                        file,
                        no,
                        format!("LID {word} is not a unicast LID (0x0001-0xbfff)"),
                    )
                    .into());
                }
                OrderEntry::Lid(lid)
            }
            v => OrderEntry::Guid(Guid(v)),
        });
    }
    Ok(out)
}

/// Writes OpenSM's `opensm-ftree-ca-order.dump` layout: `(LID, description)`
/// per compute node, `None` for a DUMMY slot.
pub fn write_ca_order<'a, W: Write>(
    out: &mut W,
    entries: impl IntoIterator<Item = (Option<Lid>, &'a str)>,
) -> io::Result<()> {
    for (lid, desc) in entries {
        match lid {
            Some(l) => writeln!(out, "0x{:04x}\t{}", l.0, desc)?,
            None => writeln!(out, "0xFFFF\tDUMMY")?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_line() {
        let e = parse("0x0001\n\nzz\n", "f.dump").unwrap_err().to_string();
        assert!(e.contains("f.dump:3") && e.contains("zz"), "{e}");
        assert!(parse("0xC000 x\n", "f")
            .unwrap_err()
            .to_string()
            .contains("unicast"));
        assert!(parse("0\n", "f").is_err());
        assert_eq!(parse("# only a comment\n  \n", "f").unwrap(), vec![]);
    }

    #[test]
    fn round_trip_of_the_dump() {
        let mut buf = Vec::new();
        write_ca_order(&mut buf, [(Some(Lid(3)), "H 1"), (None, "")]).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert_eq!(text, "0x0003\tH 1\n0xFFFF\tDUMMY\n");
        assert_eq!(
            parse(&text, "f").unwrap(),
            vec![OrderEntry::Lid(Lid(3)), OrderEntry::Dummy]
        );
    }
}
