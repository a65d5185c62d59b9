//! OpenSM's `guid2lid` cache: which LIDs each port GUID had, so an SM restart
//! keeps the LIDs stable. One entry per port:
//!
//! ```text
//! 0x0002c90300000002 0x0002 0x0002
//! ```
//!
//! port GUID, first LID, last LID (the last is higher with LMC > 0). OpenSM's
//! database writer puts a blank line after every entry; the reader here takes
//! entries with or without blank lines between them, and `#` comment lines.
//!
//! Whether a range fits the LMC in force is left to
//! [`assign_lids`](crate::lids::assign_lids), which, like OpenSM, drops
//! cached ranges that no longer fit: the file itself cannot know the LMC.

use super::text::{err, numbered_lines, parse_u64};
use crate::error::excerpt;
use crate::error::FabricError;
use crate::ids::{Guid, Lid};
use crate::lids::Guid2Lid;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

/// Parses a guid2lid file; `file` names it in errors.
///
/// Every problem OpenSM would log and skip is an error here, naming the line:
/// a bad GUID (or GUID 0), a bad or non-unicast LID, a range whose first LID
/// is above its last, a GUID listed twice, and two GUIDs whose ranges overlap.
pub fn parse(text: &str, file: &str) -> Result<Guid2Lid, FabricError> {
    let mut map = Guid2Lid::new();
    let mut guid_line: HashMap<Guid, usize> = HashMap::new();
    // first LID → (last LID, GUID, line), to find overlaps in O(log n).
    let mut ranges: BTreeMap<u16, (u16, Guid, usize)> = BTreeMap::new();
    for (no, raw) in numbered_lines(text) {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(g), Some(lo), Some(hi), None) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            return Err(err(
                file,
                no,
                format!(
                    "expected 'GUID FIRST_LID LAST_LID', found {}",
                    excerpt(line)
                ),
            )
            .into());
        };
        let guid = parse_u64(g, false)
            .filter(|&g| g != 0)
            .map(Guid)
            .ok_or_else(|| err(file, no, format!("bad port GUID '{g}'")))?;
        let lid = |w: &str| -> Result<Lid, FabricError> {
            let v = parse_u64(w, false).ok_or_else(|| err(file, no, format!("bad LID '{w}'")))?;
            let l = u16::try_from(v).ok().map(Lid).filter(|l| l.is_unicast());
            l.ok_or_else(|| {
                err(
                    file,
                    no,
                    format!("LID {w} is not a unicast LID (0x0001-0xbfff)"),
                )
                .into()
            })
        };
        let (lo, hi) = (lid(lo)?, lid(hi)?);
        if lo > hi {
            return Err(err(file, no, format!("first LID {lo} is above last LID {hi}")).into());
        }
        if let Some(first) = guid_line.insert(guid, no) {
            return Err(err(
                file,
                no,
                format!("port GUID {guid} is already listed at line {first}"),
            )
            .into());
        }
        // The nearest range starting at or below `hi` is the only one that can overlap.
        if let Some((&o_lo, &(o_hi, o_guid, o_line))) = ranges.range(..=hi.0).next_back() {
            if o_hi >= lo.0 {
                let shared = Lid(lo.0.max(o_lo));
                return Err(err(
                    file,
                    no,
                    format!("LID {shared} of {guid} is also held by {o_guid} (line {o_line}): LID collision"),
                )
                .into());
            }
        }
        ranges.insert(lo.0, (hi.0, guid, no));
        map.insert(guid, (lo, hi));
    }
    if map.is_empty() && text.trim().is_empty() {
        // OpenSM writes one line per port; an empty cache is a failed copy.
        return Err(err(
            file,
            1,
            "empty guid2lid file (expected 'GUID FIRST_LID LAST_LID' lines)",
        )
        .into());
    }
    Ok(map)
}

/// Writes a guid2lid map as OpenSM does: `0x%016x 0x%04x 0x%04x` and a blank
/// line per entry, in GUID order (OpenSM's order is its hash table's, which
/// no reader depends on).
pub fn write(map: &Guid2Lid, out: &mut impl Write) -> io::Result<()> {
    let mut buf = String::with_capacity(map.len() * 36);
    for (guid, (lo, hi)) in map {
        use std::fmt::Write as _;
        // Writing to a String cannot fail.
        let _ = write!(buf, "0x{:016x} 0x{:04x} 0x{:04x}\n\n", guid.0, lo.0, hi.0);
    }
    out.write_all(buf.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::text::testing::mangle;

    const FIXTURE: &str = include_str!("../../../../fixtures/interop/guid2lid");

    fn problem(text: &str) -> String {
        match parse(text, "g2l") {
            Err(FabricError::Parse(e)) => e.to_string(),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn reads_the_opensm_fixture() {
        let map = parse(FIXTURE, "guid2lid").unwrap();
        assert_eq!(map.len(), 6);
        assert_eq!(map[&Guid(0x200001)], (Lid(1), Lid(1)));
        assert_eq!(map[&Guid(0x10000a)], (Lid(6), Lid(6)));
    }

    #[test]
    fn write_then_read_is_identity_and_matches_opensm_spelling() {
        let mut map = parse(FIXTURE, "guid2lid").unwrap();
        map.insert(Guid(0x0002c90300000010), (Lid(0x10), Lid(0x13)));
        let mut out = Vec::new();
        write(&map, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with(
            "0x0000000000100001 0x0003 0x0003\n\n0x0000000000100004 0x0004 0x0004\n\n"
        ));
        assert!(text.contains("0x0002c90300000010 0x0010 0x0013\n\n"));
        assert_eq!(parse(&text, "x").unwrap(), map);
        // Every fixture line appears verbatim in what we write.
        for line in FIXTURE.lines().filter(|l| !l.is_empty()) {
            assert!(text.lines().any(|l| l == line), "{line}");
        }
    }

    #[test]
    fn accepts_compact_files_and_decimal() {
        let map = parse("0x10 0x0001 0x0001\r\n# note\n0x20 2 3\n", "x").unwrap();
        assert_eq!(map[&Guid(0x20)], (Lid(2), Lid(3)));
    }

    #[test]
    fn errors_name_file_line_and_problem() {
        assert_eq!(problem("0x10 1 1\n\nzz 2 2\n"), "g2l:3: bad port GUID 'zz'");
        assert_eq!(problem("0x0 1 1\n"), "g2l:1: bad port GUID '0x0'");
        assert_eq!(problem("0x10 0xq 1\n"), "g2l:1: bad LID '0xq'");
        assert!(problem("0x10 0 0\n").contains("g2l:1: LID 0 is not a unicast LID"));
        assert!(problem("0x10 0xc000 0xc000\n").contains("not a unicast LID"));
        assert!(problem("0x10 0x10000 0x10000\n").contains("not a unicast LID"));
        assert_eq!(
            problem("0x10 5 4\n"),
            "g2l:1: first LID 0x0005 is above last LID 0x0004"
        );
        assert_eq!(
            problem("0x10 1 1\n0x10 2 2\n"),
            "g2l:2: port GUID 0x0000000000000010 is already listed at line 1"
        );
        assert_eq!(
            problem("0x10 4 7\n\n0x20 8 8\n\n0x30 7 7\n"),
            "g2l:5: LID 0x0007 of 0x0000000000000030 is also held by 0x0000000000000010 (line 1): LID collision"
        );
        assert!(problem("0x30 2 9\n0x10 4 4\n")
            .contains("g2l:2: LID 0x0004 of 0x0000000000000010 is also held by"));
        assert!(problem("0x10 1\n").contains("expected 'GUID FIRST_LID LAST_LID'"));
        assert!(problem("0x10 1 1 1\n").contains("expected"));
    }

    proptest::proptest! {
        #[test]
        fn mangled_input_never_panics(at in 0usize..4096, len in 0usize..64, junk in "[ -~{}\\n\u{e9}]{0,24}") {
            let text = mangle(FIXTURE, at, len, &junk);
            let _ = parse(&text, "m");
        }
    }
}
