//! Small helpers shared by the text parsers: numbered lines, hex numbers,
//! quoted strings. None of them panics on any input.

use crate::error::ParseError;
use crate::ids::Guid;
use crate::model::{port_num, NodeKind};

pub(crate) mod assemble;

/// Lines with 1-based numbers, `\r` stripped.
pub(crate) fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
}

/// Parses `0x1a2b`, `1a2b` (hex without prefix when `bare_hex`), or decimal.
pub(crate) fn parse_u64(token: &str, bare_hex: bool) -> Option<u64> {
    let t = token.trim();
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok();
    }
    if bare_hex {
        u64::from_str_radix(t, 16).ok()
    } else {
        t.parse().ok()
    }
}

/// Splits `"name" rest` into (`name`, `rest`); the text must start with a quote.
pub(crate) fn take_quoted(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start();
    let body = s.strip_prefix('"')?;
    let end = body.find('"')?;
    Some((&body[..end], &body[end + 1..]))
}

/// Splits `[12] rest` into (12, rest).
pub(crate) fn take_bracketed_num(s: &str) -> Option<(u64, &str)> {
    let s = s.trim_start();
    let body = s.strip_prefix('[')?;
    let end = body.find(']')?;
    Some((body[..end].trim().parse().ok()?, &body[end + 1..]))
}

/// Shorthand for a parse error.
pub(crate) fn err(file: &str, line: usize, problem: impl Into<String>) -> ParseError {
    ParseError::new(file, line, problem)
}

/// Splits `(1a2b) rest` into (`1a2b`, `rest`); the text must start with `(`.
pub(crate) fn take_parenthesized(s: &str) -> Option<(&str, &str)> {
    let body = s.trim_start().strip_prefix('(')?;
    let end = body.find(')')?;
    Some((&body[..end], &body[end + 1..]))
}

/// Splits off the first blank-delimited word: `("lid", " 3 4xQDR")`; empty when none.
pub(crate) fn take_word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    let end = s.find(|c: char| c.is_ascii_whitespace()).unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// A whole token as C's `strtoul(s, NULL, 0)` reads a number: `0x` hex,
/// leading-`0` octal, else decimal. Files for C tools (ibsim) use all three.
pub(crate) fn parse_c_number(token: &str) -> Option<u64> {
    let t = token.trim();
    let (radix, digits) = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => (16, h),
        None if t.len() > 1 && t.starts_with('0') => (8, &t[1..]),
        None => (10, t),
    };
    // from_str_radix alone would also take a sign.
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// What C's `strtoul(s, NULL, 0)` returns for text that may carry junk after
/// the number: leading blanks skipped, the longest number prefix read, 0 when
/// there is none, `None` on overflow. Mirrors how ibsim reads free text.
pub(crate) fn c_number_prefix(s: &str) -> Option<u64> {
    let t = s.trim_start().as_bytes();
    let (radix, digits) = match t {
        [b'0', b'x' | b'X', d, ..] if d.is_ascii_hexdigit() => (16, &t[2..]),
        [b'0', ..] => (8, t),
        _ => (10, t),
    };
    let mut value: u64 = 0;
    for &b in digits {
        let d = match (b as char).to_digit(radix) {
            Some(d) => d,
            None => break,
        };
        value = value.checked_mul(radix as u64)?.checked_add(d as u64)?;
    }
    Some(value)
}

/// The GUID inside an ibnetdiscover node id (`S-0002c90200000001`).
pub(crate) fn guid_of_discover_id(id: &str) -> Option<Guid> {
    let b = id.as_bytes();
    if b.len() != 18 || b[1] != b'-' || !matches!(b[0], b'S' | b'H' | b'R') {
        return None;
    }
    let hex = &id[2..];
    if !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(hex, 16).ok().map(Guid)
}

/// A port number from a file: 1..=254 (port 0 is a switch's internal port and
/// cannot be cabled; 255 is reserved).
pub(crate) fn cable_port(
    file: &str,
    line: usize,
    value: u64,
    what: &str,
) -> Result<u8, ParseError> {
    match port_num(value) {
        Some(0) => Err(err(
            file,
            line,
            format!("{what} 0 cannot be cabled (port 0 is a switch's internal management port)"),
        )),
        Some(p) if p <= 254 => Ok(p),
        _ => Err(err(
            file,
            line,
            format!("{what} {value} is out of range (ports are numbered 1 to 254)"),
        )),
    }
}

/// Displays a node's ibnetdiscover id (`S-0002c90200000001`) without allocating.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DiscoverId(pub(crate) NodeKind, pub(crate) Guid);

impl std::fmt::Display for DiscoverId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let letter = match self.0 {
            NodeKind::Switch => 'S',
            NodeKind::Ca => 'H',
            NodeKind::Router => 'R',
        };
        write!(f, "{letter}-{:016x}", self.1 .0)
    }
}

/// Why a description cannot go into a text topology file, if it cannot:
/// neither ibnetdiscover nor ibsim files can escape quotes or line breaks.
pub(crate) fn unwritable_description(desc: &str) -> Option<&'static str> {
    if desc.contains('"') {
        Some("contains '\"'")
    } else if desc.contains(['\n', '\r']) {
        Some("contains a line break")
    } else {
        None
    }
}

/// Test helpers shared by the text format modules.
#[cfg(test)]
pub(crate) mod testing {
    use crate::model::Fabric;

    /// Asserts `b` is `a` as far as text topology files can tell: same
    /// topology, descriptions, vendor data, port GUIDs, LIDs, LMCs and rates.
    pub(crate) fn assert_same_fabric(a: &Fabric, b: &Fabric) {
        assert_eq!(a.topology_difference(b), None);
        for (id, n) in a.iter_nodes() {
            let oid = b.node_by_guid(n.guid).expect("same GUIDs");
            let o = b.node(oid);
            assert_eq!(
                (
                    &o.description,
                    o.system_image_guid,
                    o.vendor_id,
                    o.device_id,
                    o.enhanced_port0
                ),
                (
                    &n.description,
                    n.system_image_guid,
                    n.vendor_id,
                    n.device_id,
                    n.enhanced_port0
                ),
                "node {}",
                n.guid
            );
            for (p, port) in a.ports(id).iter().enumerate() {
                let q = &b.ports(oid)[p];
                assert_eq!(
                    (q.guid, q.lid, q.lmc),
                    (port.guid, port.lid, port.lmc),
                    "node {} port {p}",
                    n.guid
                );
                if port.remote.is_some() {
                    assert_eq!(q.rate, port.rate, "node {} port {p}", n.guid);
                }
            }
        }
    }

    /// A small fabric with everything the text formats carry: enhanced and
    /// base switch port 0, LMC, a router, a CA-to-CA link, an unused port,
    /// parallel links and a different rate on every link. `for_ibsim` keeps
    /// to what ibsim can present (derived port GUIDs, no router LIDs).
    pub(crate) fn zoo(for_ibsim: bool) -> Fabric {
        use crate::model::{
            FabricBuilder, LinkRate, LinkSpeed as S, LinkWidth as W, NodeKind, NodeSpec,
        };
        use crate::{Guid, Lid, PortRef};
        let mut b = FabricBuilder::new();
        let mut node = |kind, guid: u64, ports, desc: &str, tweak: &dyn Fn(&mut NodeSpec)| {
            let mut spec = NodeSpec::new(kind, Guid(guid), ports, desc);
            tweak(&mut spec);
            b.add_node(spec).unwrap()
        };
        let sw1 = node(
            NodeKind::Switch,
            0x0002_c902_0000_1000,
            8,
            "spine #1 w=2 lid 7",
            &|s| {
                s.enhanced_port0 = true;
                s.system_image_guid = Guid(0x0002_c902_0000_ffff);
            },
        );
        let sw2 = node(NodeKind::Switch, 0x0002_c902_0000_2000, 4, "leaf", &|s| {
            s.vendor_id = 0x119f
        });
        let custom = !for_ibsim;
        let h1 = node(NodeKind::Ca, 0x0002_c903_0000_0100, 2, "host one", &|s| {
            if custom {
                s.port_guids = vec![Guid(0x0002_c903_0000_0100), Guid(0x0002_c903_0000_0777)];
            }
        });
        let h2 = node(NodeKind::Ca, 0x0002_c903_0000_0200, 1, "host two", &|s| {
            s.device_id = 0x1017
        });
        let h3 = node(NodeKind::Ca, 0x0002_c903_0000_0300, 1, "h3", &|_| {});
        let h4 = node(NodeKind::Ca, 0x0002_c903_0000_0400, 2, "h4", &|_| {});
        let r1 = node(
            NodeKind::Router,
            0x0002_c904_0000_0100,
            2,
            "gateway",
            &|_| {},
        );
        let links = [
            (sw1, 1, h1, 1, W::X4, S::Qdr),
            (sw1, 2, h1, 2, W::X12, S::Edr),
            (sw2, 1, h2, 1, W::X4, S::Fdr10),
            (h3, 1, h4, 1, W::X1, S::Sdr),
            (r1, 1, sw2, 2, W::X4, S::Hdr),
            (r1, 2, sw1, 8, W::X2, S::Ddr),
            (sw1, 3, sw2, 3, W::X8, S::Ndr),
            (sw1, 4, sw2, 4, W::X4, S::Fdr),
        ];
        for (a, pa, z, pz, w, s) in links {
            b.connect(
                PortRef::new(a, pa),
                PortRef::new(z, pz),
                LinkRate::new(w, s),
            )
            .unwrap();
        }
        let mut f = b.build();
        let lids = [
            (sw1, 0, 1, 0),
            (sw2, 0, 2, 0),
            (h1, 1, 4, 0),
            (h1, 2, 5, 0),
            (h2, 1, 8, 2),
            (h3, 1, 12, 0),
            (h4, 1, 13, 0),
        ];
        for (n, p, lid, lmc) in lids {
            f.set_lid(PortRef::new(n, p), Lid(lid), lmc).unwrap();
        }
        if !for_ibsim {
            f.set_lid(PortRef::new(r1, 1), Lid(14), 0).unwrap();
            f.set_lid(PortRef::new(r1, 2), Lid(15), 0).unwrap();
        }
        f.lid_table().unwrap();
        f
    }

    /// `text` with `len` bytes at `at` (both clamped to char boundaries)
    /// replaced by `junk`: the mutation the parsers' property tests apply.
    pub(crate) fn mangle(text: &str, at: usize, len: usize, junk: &str) -> String {
        let boundary = |from: usize| {
            text.char_indices()
                .map(|(i, _)| i)
                .find(|&i| i >= from)
                .unwrap_or(text.len())
        };
        let start = boundary(at.min(text.len()));
        let end = boundary(start + len);
        let mut out = text.to_owned();
        out.replace_range(start..end, junk);
        out
    }

    /// Parses `text` expecting an error at `line` that mentions `what`.
    pub(crate) fn assert_error<T: std::fmt::Debug, E: std::fmt::Display>(
        result: Result<T, E>,
        file: &str,
        line: usize,
        what: &str,
    ) {
        let msg = result.expect_err("input should be refused").to_string();
        assert!(
            msg.starts_with(&format!("{file}:{line}: ")),
            "wrong line: {msg}"
        );
        assert!(msg.contains(what), "'{what}' not in: {msg}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_accept_and_refuse() {
        assert_eq!(parse_u64("0x1F", false), Some(31));
        assert_eq!(parse_u64("1F", true), Some(31));
        assert_eq!(parse_u64("1F", false), None);
        assert_eq!(take_quoted(" \"a b\"[1]"), Some(("a b", "[1]")));
        assert_eq!(take_quoted("\"open"), None);
        assert_eq!(take_bracketed_num("[12]\"x\""), Some((12, "\"x\"")));
        assert_eq!(take_bracketed_num("[x]"), None);
        assert_eq!(
            numbered_lines("a\r\nb").collect::<Vec<_>>(),
            vec![(1, "a"), (2, "b")]
        );
        assert_eq!(take_parenthesized(" (1a) x"), Some(("1a", " x")));
        assert_eq!(take_word("  lid 3"), ("lid", " 3"));
        assert_eq!(take_word("   "), ("", ""));
        assert_eq!(parse_c_number("0x10"), Some(16));
        assert_eq!(parse_c_number("010"), Some(8));
        assert_eq!(parse_c_number("0"), Some(0));
        assert_eq!(parse_c_number("09"), None);
        assert_eq!(parse_c_number("0xZZ"), None);
        assert_eq!(parse_c_number("0x+5"), None);
        assert_eq!(parse_c_number("+5"), None);
        assert_eq!(parse_c_number("0x"), None);
        assert_eq!(c_number_prefix(" 12ab"), Some(12));
        assert_eq!(c_number_prefix("0x1fq"), Some(31));
        assert_eq!(c_number_prefix("0xq"), Some(0));
        assert_eq!(c_number_prefix("abc"), Some(0));
        assert_eq!(c_number_prefix("99999999999999999999999"), None);
        assert_eq!(
            guid_of_discover_id("S-0002c90200000001"),
            Some(Guid(0x0002c90200000001))
        );
        assert_eq!(guid_of_discover_id("S-0002c9020000000g"), None);
        assert_eq!(guid_of_discover_id("Switch1"), None);
        assert!(cable_port("f", 1, 0, "port").is_err());
        assert!(cable_port("f", 1, 255, "port").is_err());
        assert_eq!(cable_port("f", 1, 254, "port").unwrap(), 254);
    }
}
