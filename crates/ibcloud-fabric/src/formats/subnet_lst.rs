//! OpenSM's `opensm-subnet.lst`: the subnet as the SM last saw it, one line
//! per cabled port and direction:
//!
//! ```text
//! { CA Ports:02 SystemGUID:… NodeGUID:… PortGUID:… VenID:000000 DevID:0000 Rev:000000A1 {Hca1} LID:0003 PN:01 } { SW-SM Ports:08 … {Switch2} LID:0001 PN:03 } PHY=4x LOG=ACT SPD=2.5
//! ```
//!
//! Each half is a port: node type (`SW`, `CA`, `Rt`; `-SM` marks the SM's
//! node), port count, GUIDs, vendor/device/revision, `{description}`, the LID
//! (a switch's port-0 LID) and the port number, all numbers in hex. The tail
//! gives the local port's active width, state and per-lane signalling rate.
//! Every link is listed from both ends; the reader insists the two agree,
//! which catches truncated and hand-mangled files.
//!
//! OpenSM 3.3.23 prints the *remote* half's vendor and device ids wrongly
//! (32-bit and shifted: `VenID:000002C9 DevID:C7380000` for `0002C9`/`C738`),
//! so vendor and device ids are taken from local halves only.
//!
//! Read only: OpenSM never reads this file, so ibcloud has no reason to write it.

use super::text::{err, numbered_lines};
use crate::error::{FabricError, ParseError};
use crate::ids::{Guid, Lid, PortNum, PortRef};
use crate::model::{
    port_num, Fabric, FabricBuilder, LinkRate, LinkSpeed, LinkWidth, NodeKind, NodeSpec, PortState,
};
use std::collections::HashMap;

/// One half of a record: a port as seen by the SM.
#[derive(Clone, Debug, PartialEq)]
struct PortRecord {
    kind: NodeKind,
    num_ports: u32,
    system_image_guid: Guid,
    node_guid: Guid,
    port_guid: Guid,
    vendor_id: u32,
    device_id: u32,
    description: String,
    lid: Lid,
    port: PortNum,
}

/// The local end of a link line, with what the line says about the link.
#[derive(Clone, Debug)]
struct LinkEnd {
    remote: (Guid, PortNum),
    rate: LinkRate,
    state: PortState,
    line: usize,
}

/// What the file says about one node, with the line that said it first.
struct NodeInfo {
    rec: PortRecord,
    line: usize,
    /// Vendor and device id with their line, from the first local half naming the node.
    ids: Option<(u32, u32, usize)>,
    /// Port GUID and LID per port number (CAs and routers), from any line.
    ports: HashMap<PortNum, (Guid, Lid, usize)>,
}

/// Parses an `opensm-subnet.lst` into a fabric; `file` names it in errors.
///
/// Nodes keep the order in which they first appear. LIDs come with LMC 0
/// (the file does not record the LMC); CA ports that no line mentions get the
/// usual derived GUID (node GUID + port number) and no LID.
pub fn parse(text: &str, file: &str) -> Result<Fabric, FabricError> {
    let mut nodes: Vec<NodeInfo> = Vec::new();
    let mut index: HashMap<Guid, usize> = HashMap::new();
    let mut ends: HashMap<(Guid, PortNum), LinkEnd> = HashMap::new();
    let mut order: Vec<(Guid, PortNum)> = Vec::new();
    for (no, raw) in numbered_lines(text) {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (local, rest) = parse_port(line, file, no)?;
        let (remote, tail) = parse_port(rest, file, no)?;
        let (rate, state) = parse_tail(tail, file, no)?;
        for (rec, is_local) in [(&local, true), (&remote, false)] {
            note_node(rec, is_local, no, file, &mut nodes, &mut index)?;
        }
        let key = (local.node_guid, local.port);
        let end = LinkEnd {
            remote: (remote.node_guid, remote.port),
            rate,
            state,
            line: no,
        };
        if let Some(first) = ends.insert(key, end) {
            return Err(err(
                file,
                no,
                format!(
                    "port {} of {} is already listed at line {}",
                    local.port, local.node_guid, first.line
                ),
            )
            .into());
        }
        order.push(key);
    }

    let mut b = FabricBuilder::with_capacity(
        nodes.len(),
        nodes.iter().map(|n| n.rec.num_ports as usize + 1).sum(),
    );
    for n in &nodes {
        let r = &n.rec;
        let mut spec = NodeSpec::new(r.kind, r.node_guid, r.num_ports, r.description.clone());
        spec.system_image_guid = r.system_image_guid;
        // A node seen only as a remote end keeps NodeSpec's default ids.
        if let Some((vendor, device, _)) = n.ids {
            spec.vendor_id = vendor;
            spec.device_id = device;
        }
        if r.kind != NodeKind::Switch {
            spec.port_guids = (1..=r.num_ports)
                .map(|p| {
                    let derived = Guid(r.node_guid.0.wrapping_add(p as u64));
                    port_num(p as u64)
                        .and_then(|p| n.ports.get(&p))
                        .map_or(derived, |&(g, _, _)| g)
                })
                .collect();
        }
        let id = b
            .add_node(spec)
            .map_err(|e| err(file, n.line, e.to_string()))?;
        let lid_slots: Vec<(PortNum, Guid, Lid)> = if r.kind == NodeKind::Switch {
            vec![(0, r.port_guid, r.lid)]
        } else {
            n.ports.iter().map(|(&p, &(g, l, _))| (p, g, l)).collect()
        };
        for (p, guid, lid) in lid_slots {
            let port = b
                .port_mut(PortRef::new(id, p))
                .map_err(|e| err(file, n.line, e.to_string()))?;
            port.guid = guid;
            port.lid = lid;
        }
    }

    for key in &order {
        let Some(end) = ends.get(key) else { continue };
        let here = format!("port {} of {}", key.1, key.0);
        let there = format!("port {} of {}", end.remote.1, end.remote.0);
        let back = ends.get(&end.remote).ok_or_else(|| {
            err(
                file,
                end.line,
                format!("{here} is linked to {there}, but no line lists that link from {there}"),
            )
        })?;
        if back.remote != *key {
            return Err(err(
                file,
                end.line,
                format!(
                    "{here} is linked to {there}, but line {} links {there} to port {} of {}",
                    back.line, back.remote.1, back.remote.0
                ),
            )
            .into());
        }
        if back.rate != end.rate {
            return Err(err(
                file,
                end.line,
                format!(
                    "{here} runs at {} but line {} says {}",
                    end.rate, back.line, back.rate
                ),
            )
            .into());
        }
        let (Some(a), Some(z)) = (b.node_by_guid(key.0), b.node_by_guid(end.remote.0)) else {
            continue;
        };
        let (a, z) = (PortRef::new(a, key.1), PortRef::new(z, end.remote.1));
        b.connect(a, z, end.rate)
            .map_err(|e| err(file, end.line, e.to_string()))?;
        b.port_mut(a)
            .map_err(|e| err(file, end.line, e.to_string()))?
            .state = end.state;
    }
    Ok(b.build())
}

/// Records a node's data, checking it against earlier lines.
fn note_node(
    rec: &PortRecord,
    is_local: bool,
    no: usize,
    file: &str,
    nodes: &mut Vec<NodeInfo>,
    index: &mut HashMap<Guid, usize>,
) -> Result<(), ParseError> {
    let i = *index.entry(rec.node_guid).or_insert_with(|| {
        nodes.push(NodeInfo {
            rec: rec.clone(),
            line: no,
            ids: None,
            ports: HashMap::new(),
        });
        nodes.len() - 1
    });
    let n = &mut nodes[i];
    let first = &n.rec;
    let differs = |what: &str| {
        err(
            file,
            no,
            format!(
                "node {} is described differently at line {} ({what})",
                rec.node_guid, n.line
            ),
        )
    };
    if first.kind != rec.kind {
        return Err(differs("node type"));
    }
    if first.num_ports != rec.num_ports {
        return Err(differs("port count"));
    }
    if first.system_image_guid != rec.system_image_guid {
        return Err(differs("system image GUID"));
    }
    if is_local {
        match n.ids {
            None => n.ids = Some((rec.vendor_id, rec.device_id, no)),
            Some((vendor, device, at)) if (vendor, device) != (rec.vendor_id, rec.device_id) => {
                return Err(err(
                    file,
                    no,
                    format!(
                        "node {} is described differently at line {at} (vendor or device id)",
                        rec.node_guid
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    if first.description != rec.description {
        return Err(differs("description"));
    }
    if rec.port == 0 || rec.port as u32 > rec.num_ports {
        return Err(err(
            file,
            no,
            format!(
                "port {} of {} is outside 1..={}",
                rec.port, rec.node_guid, rec.num_ports
            ),
        ));
    }
    if rec.kind == NodeKind::Switch {
        if (first.port_guid, first.lid) != (rec.port_guid, rec.lid) {
            return Err(differs("switch port GUID or LID"));
        }
    } else {
        let (guid, lid) = (rec.port_guid, rec.lid);
        if let Some(&(g, l, at)) = n.ports.get(&rec.port) {
            if (g, l) != (guid, lid) {
                return Err(err(
                    file,
                    no,
                    format!(
                        "port {} of {} is described differently at line {at} (port GUID or LID)",
                        rec.port, rec.node_guid
                    ),
                ));
            }
        }
        n.ports.entry(rec.port).or_insert((guid, lid, no));
    }
    Ok(())
}

/// Parses `{ TYPE Ports:.. … PN:.. }` at the start of `s`; returns the rest.
fn parse_port<'a>(s: &'a str, file: &str, no: usize) -> Result<(PortRecord, &'a str), ParseError> {
    let bad = |what: String| err(file, no, format!("malformed port record: {what}"));
    let s = s
        .trim_start()
        .strip_prefix("{ ")
        .ok_or_else(|| bad("expected '{ ' to open it".into()))?;
    let (kind_word, mut s) = s
        .split_once(' ')
        .ok_or_else(|| bad("expected the node type".into()))?;
    let kind = match kind_word.strip_suffix("-SM").unwrap_or(kind_word) {
        "SW" => NodeKind::Switch,
        "CA" => NodeKind::Ca,
        "Rt" => NodeKind::Router,
        other => return Err(bad(format!("unknown node type '{other}'"))),
    };
    let mut field = |name: &str, max: u64| take_hex_field(&mut s, name, max).map_err(&bad);
    let num_ports = field("Ports", 0xff)? as u32;
    let system_image_guid = Guid(field("SystemGUID", u64::MAX)?);
    let node_guid = Guid(field("NodeGUID", u64::MAX)?);
    let port_guid = Guid(field("PortGUID", u64::MAX)?);
    let vendor_id = field("VenID", u32::MAX as u64)? as u32;
    let device_id = field("DevID", u32::MAX as u64)? as u32;
    field("Rev", u32::MAX as u64)?;
    let rest = s
        .strip_prefix(" {")
        .ok_or_else(|| bad("expected ' {description}'".into()))?;
    // The description may hold anything, braces included: take the first
    // "} LID:" that is followed by a well-formed remainder.
    let mut from = 0;
    while let Some(pos) = rest[from..].find("} LID:").map(|p| p + from) {
        let mut tail = &rest[pos + 1..];
        let lid = take_hex_field(&mut tail, "LID", 0xffff);
        let port = take_hex_field(&mut tail, "PN", 0xff);
        if let (Ok(lid), Ok(port), Some(after)) = (lid, port, tail.strip_prefix(" }")) {
            let rec = PortRecord {
                kind,
                num_ports,
                system_image_guid,
                node_guid,
                port_guid,
                vendor_id,
                device_id,
                description: rest[..pos].to_owned(),
                lid: Lid(lid as u16),
                port: port as u8,
            };
            return Ok((rec, after));
        }
        from = pos + 1;
    }
    Err(bad("expected '{description} LID:hex PN:hex }'".into()))
}

/// Takes ` NAME:hex` off the front of `s`, the value at most `max`.
fn take_hex_field(s: &mut &str, name: &str, max: u64) -> Result<u64, String> {
    let body = s
        .trim_start()
        .strip_prefix(name)
        .and_then(|b| b.strip_prefix(':'))
        .ok_or_else(|| format!("expected '{name}:'"))?;
    let end = body
        .find(|c: char| !c.is_ascii_hexdigit())
        .unwrap_or(body.len());
    let v = u64::from_str_radix(&body[..end], 16)
        .ok()
        .filter(|&v| v <= max)
        .ok_or_else(|| format!("bad {name} '{}'", &body[..end]))?;
    *s = &body[end..];
    Ok(v)
}

/// Parses `PHY=4x LOG=ACT SPD=2.5`.
fn parse_tail(s: &str, file: &str, no: usize) -> Result<(LinkRate, PortState), ParseError> {
    let mut words = s.split_whitespace();
    let (Some(phy), Some(log), Some(spd), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Err(err(
            file,
            no,
            format!(
                "expected 'PHY=.. LOG=.. SPD=..' after the two ports, found '{}'",
                s.trim()
            ),
        ));
    };
    let value = |w: &'_ str, key: &str| -> Result<String, ParseError> {
        w.strip_prefix(key)
            .and_then(|v| v.strip_prefix('='))
            .map(str::to_owned)
            .ok_or_else(|| err(file, no, format!("expected '{key}=..', found '{w}'")))
    };
    let width = match value(phy, "PHY")?.as_str() {
        "1x" => LinkWidth::X1,
        "2x" => LinkWidth::X2,
        "4x" => LinkWidth::X4,
        "8x" => LinkWidth::X8,
        "12x" => LinkWidth::X12,
        other => return Err(err(file, no, format!("unknown link width PHY={other}"))),
    };
    let state = match value(log, "LOG")?.as_str() {
        "ACT" => PortState::Active,
        "ARM" => PortState::Armed,
        "INI" => PortState::Init,
        "DWN" => PortState::Down,
        other => return Err(err(file, no, format!("unknown port state LOG={other}"))),
    };
    // OpenSM prints the per-lane signalling rate in Gb/s, or FDR10 by name.
    let speed = match value(spd, "SPD")?.as_str() {
        "2.5" => LinkSpeed::Sdr,
        "5" => LinkSpeed::Ddr,
        "10" => LinkSpeed::Qdr,
        "FDR10" => LinkSpeed::Fdr10,
        "14" => LinkSpeed::Fdr,
        "25" => LinkSpeed::Edr,
        "50" => LinkSpeed::Hdr,
        "100" => LinkSpeed::Ndr,
        other => return Err(err(file, no, format!("unknown link speed SPD={other}"))),
    };
    Ok((LinkRate::new(width, speed), state))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::text::testing::mangle;

    const FIXTURE: &str = include_str!("../../../../fixtures/interop/opensm-subnet.lst");

    fn problem(text: &str) -> String {
        match parse(text, "s.lst") {
            Err(FabricError::Parse(e)) => e.to_string(),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    fn rec(
        kind: &str,
        ports: u8,
        guid: u64,
        port_guid: u64,
        desc: &str,
        lid: u16,
        pn: u8,
    ) -> String {
        format!(
            "{{ {kind} Ports:{ports:02X} SystemGUID:{guid:016x} NodeGUID:{guid:016x} PortGUID:{port_guid:016x} VenID:0002C9 DevID:C738 Rev:000000A1 {{{desc}}} LID:{lid:04X} PN:{pn:02X} }}"
        )
    }

    fn link(a: &str, b: &str, tail: &str) -> String {
        format!("{a} {b} {tail}\n")
    }

    #[test]
    fn reads_the_opensm_fixture() {
        let f = parse(FIXTURE, "opensm-subnet.lst").unwrap();
        assert_eq!(
            (
                f.num_nodes(),
                f.count(NodeKind::Switch),
                f.count(NodeKind::Ca),
                f.num_links()
            ),
            (6, 2, 4, 6)
        );
        let s2 = f.node_by_guid(Guid(0x200001)).unwrap();
        let n = f.node(s2);
        assert_eq!(
            (
                n.description.as_str(),
                n.num_ports,
                n.system_image_guid,
                n.vendor_id,
                n.device_id
            ),
            ("Switch2", 8, Guid(0x200001), 0, 0)
        );
        assert_eq!(f.node_lid(s2), Lid(1));
        let hca4 = f.node_by_guid(Guid(0x100009)).unwrap();
        let p = f.port(PortRef::new(hca4, 1)).unwrap();
        assert_eq!(
            (p.guid, p.lid, p.lmc, p.state),
            (Guid(0x10000a), Lid(6), 0, PortState::Active)
        );
        assert_eq!(p.rate, LinkRate::new(LinkWidth::X4, LinkSpeed::Sdr));
        assert_eq!(f.remote(PortRef::new(hca4, 1)), Some(PortRef::new(s2, 2)));
        let s1 = f.node_by_guid(Guid(0x200000)).unwrap();
        assert_eq!(f.remote(PortRef::new(s1, 5)), Some(PortRef::new(s2, 5)));
        // Unmentioned CA port 2 gets the derived GUID and no LID.
        let p2 = f.port(PortRef::new(hca4, 2)).unwrap();
        assert_eq!((p2.guid, p2.lid, p2.remote), (Guid(0x10000b), Lid(0), None));
        assert!(f.lid_table().is_ok());
        assert_eq!(f.lids_in_use(), 6);
        // First appearance order: Hca1, Switch1, Hca3, Switch2, Hca2, Hca4.
        let order: Vec<_> = f.nodes().iter().map(|n| n.description.as_str()).collect();
        assert_eq!(
            order,
            ["Hca1", "Switch1", "Hca3", "Switch2", "Hca2", "Hca4"]
        );
    }

    #[test]
    fn reads_speeds_widths_states_and_braces_in_descriptions() {
        let sw = rec("SW", 36, 0x10, 0x10, "spine {a} LID:1", 1, 3);
        let ca = rec("CA", 1, 0x20, 0x21, "h} LID:0002 PN:01 x", 2, 1);
        for (spd, speed) in [
            ("2.5", LinkSpeed::Sdr),
            ("5", LinkSpeed::Ddr),
            ("10", LinkSpeed::Qdr),
            ("FDR10", LinkSpeed::Fdr10),
            ("14", LinkSpeed::Fdr),
            ("25", LinkSpeed::Edr),
            ("50", LinkSpeed::Hdr),
            ("100", LinkSpeed::Ndr),
        ] {
            for (phy, width) in [
                ("1x", LinkWidth::X1),
                ("2x", LinkWidth::X2),
                ("4x", LinkWidth::X4),
                ("8x", LinkWidth::X8),
                ("12x", LinkWidth::X12),
            ] {
                let text = link(&sw, &ca, &format!("PHY={phy} LOG=ACT SPD={spd}"))
                    + &link(&ca, &sw, &format!("PHY={phy} LOG=ARM SPD={spd}"));
                let f = parse(&text, "x").unwrap();
                let s = f.node_by_guid(Guid(0x10)).unwrap();
                let c = f.node_by_guid(Guid(0x20)).unwrap();
                assert_eq!(f.node(s).description, "spine {a} LID:1");
                assert_eq!(f.node(c).description, "h} LID:0002 PN:01 x");
                assert_eq!(f.node(s).num_ports, 36);
                assert_eq!(
                    f.port(PortRef::new(s, 3)).unwrap().rate,
                    LinkRate::new(width, speed)
                );
                assert_eq!(f.port(PortRef::new(s, 3)).unwrap().state, PortState::Active);
                assert_eq!(f.port(PortRef::new(c, 1)).unwrap().state, PortState::Armed);
                assert_eq!(f.node(c).vendor_id, 0x0002c9);
            }
        }
    }

    #[test]
    fn both_directions_must_agree() {
        let sw = rec("SW", 8, 0x10, 0x10, "s", 1, 3);
        let ca = rec("CA", 1, 0x20, 0x21, "c", 2, 1);
        let ca2 = rec("CA", 1, 0x30, 0x31, "d", 3, 1);
        let sw4 = rec("SW", 8, 0x10, 0x10, "s", 1, 4);
        let fwd = link(&sw, &ca, "PHY=4x LOG=ACT SPD=10");
        assert_eq!(
            problem(&fwd),
            "s.lst:1: port 3 of 0x0000000000000010 is linked to port 1 of 0x0000000000000020, but no line lists that link from port 1 of 0x0000000000000020"
        );
        let slower = fwd.clone() + &link(&ca, &sw, "PHY=4x LOG=ACT SPD=5");
        assert_eq!(
            problem(&slower),
            "s.lst:1: port 3 of 0x0000000000000010 runs at 4xQDR but line 2 says 4xDDR"
        );
        let elsewhere = fwd.clone()
            + &link(&ca, &sw4, "PHY=4x LOG=ACT SPD=10")
            + &link(&sw4, &ca2, "PHY=4x LOG=ACT SPD=10");
        assert!(problem(&elsewhere).starts_with(
            "s.lst:1: port 3 of 0x0000000000000010 is linked to port 1 of 0x0000000000000020, but line 2 links"
        ));
        let twice = fwd.clone() + &fwd;
        assert_eq!(
            problem(&twice),
            "s.lst:2: port 3 of 0x0000000000000010 is already listed at line 1"
        );
    }

    #[test]
    fn malformed_records_name_the_line() {
        let sw = rec("SW", 8, 0x10, 0x10, "s", 1, 3);
        let ca = rec("CA", 1, 0x20, 0x21, "c", 2, 1);
        let ok = link(&sw, &ca, "PHY=4x LOG=ACT SPD=10") + &link(&ca, &sw, "PHY=4x LOG=ACT SPD=10");
        assert!(parse(&ok, "x").is_ok());
        let cases: Vec<(String, &str)> = vec![
            (
                ok.replacen("{ SW", "SW", 1),
                "s.lst:1: malformed port record: expected '{ ' to open it",
            ),
            (
                ok.replacen("{ SW", "{ XX", 1),
                "s.lst:1: malformed port record: unknown node type 'XX'",
            ),
            (
                ok.replacen("NodeGUID:", "NodeGUID:x", 1),
                "s.lst:1: malformed port record: bad NodeGUID ''",
            ),
            (
                ok.replacen("Ports:08", "Ports:108", 1),
                "s.lst:1: malformed port record: bad Ports '108'",
            ),
            (
                ok.replacen(" PN:03 }", " PN:03", 1),
                "s.lst:1: malformed port record: ",
            ),
            (
                ok.replacen(" PN:01 }", " PN:01", 1),
                "s.lst:1: malformed port record: expected '{description} LID:hex PN:hex }'",
            ),
            (
                ok.replacen("SPD=10", "SPD=??", 1),
                "s.lst:1: unknown link speed SPD=??",
            ),
            (
                ok.replacen("PHY=4x", "PHY=??", 1),
                "s.lst:1: unknown link width PHY=??",
            ),
            (
                ok.replacen("LOG=ACT", "LOG=XYZ", 1),
                "s.lst:1: unknown port state LOG=XYZ",
            ),
            (
                ok.replacen(" SPD=10", "", 1),
                "s.lst:1: expected 'PHY=.. LOG=.. SPD=..'",
            ),
            (
                ok.replacen("PN:03", "PN:09", 1),
                "s.lst:1: port 9 of 0x0000000000000010 is outside 1..=8",
            ),
            (
                ok.replacen("Ports:08", "Ports:00", 1),
                "s.lst:1: port 3 of 0x0000000000000010 is outside 1..=0",
            ),
            (
                ok.replacen("{s}", "{t}", 1),
                "s.lst:2: node 0x0000000000000010 is described differently at line 1 (description)",
            ),
            (
                ok.replacen("{ SW Ports:08", "{ SW Ports:09", 1),
                "s.lst:2: node 0x0000000000000010 is described differently at line 1 (port count)",
            ),
            (
                ok.replacen("LID:0002", "LID:0005", 1),
                "s.lst:2: port 1 of 0x0000000000000020 is described differently at line 1",
            ),
        ];
        for (text, want) in cases {
            let got = problem(&text);
            assert!(got.starts_with(want), "want {want}\n got {got}");
        }
    }

    proptest::proptest! {
        #[test]
        fn mangled_input_never_panics(at in 0usize..4096, len in 0usize..64, junk in "[ -~{}\\n\u{e9}]{0,24}") {
            let text = mangle(FIXTURE, at, len, &junk);
            let _ = parse(&text, "m");
        }
    }

    #[test]
    fn opensm_garbles_remote_vendor_ids_and_we_ignore_that() {
        // OpenSM 3.3.23 on ibsim with ibcloud's 4-ary-2-full tree.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/interop/opensm-subnet-4-ary-2-full.lst"
        );
        let text = std::fs::read_to_string(path).unwrap();
        assert!(
            text.contains("DevID:C7380000"),
            "the fixture shows the quirk"
        );
        let f = parse(&text, "opensm-subnet.lst").unwrap();
        let generated = crate::generate::preset("4-ary-2-full")
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(f.topology_difference(&generated), None);
        for n in f.nodes() {
            assert_eq!(
                (n.vendor_id, n.device_id),
                (0x2c9, if n.is_switch() { 0xc738 } else { 0x1003 })
            );
        }
    }
}
