//! OpenSM's `opensm-lfts.dump`: every switch's unicast forwarding table.
//!
//! OpenSM writes it after each heavy sweep, and its `file` routing engine
//! (`-R file -U <dump>`) loads one back, so this is how ibcloud hands routes
//! to a real SM. Per switch:
//!
//! ```text
//! Unicast lids [0-6] of switch Lid 2 guid 0x0000000000200000 ('Switch1'):
//! 0x0001 003 # Switch portguid 0x0000000000200001: 'Switch2'
//! 0x0003 001 # Channel Adapter portguid 0x0000000000100001: 'Hca1'
//! 6 lids dumped
//! ```
//!
//! The range and the footer give the switch's top LID in decimal; entries are
//! hex LID, decimal port, and a comment naming the LID's owner (`unknown node
//! and type` for a LID nobody holds). Unset entries and LID 0 are not listed.
//! Switches come in the order of OpenSM's switch table, which is keyed by the
//! GUID in network byte order.

use super::text::{err, numbered_lines, parse_u64};
use crate::error::excerpt;
use crate::error::{FabricError, ParseError};
use crate::ids::{Guid, Lid, PortNum, PortRef};
use crate::lft::ForwardingTables;
use crate::model::{Fabric, NodeKind};
use std::collections::HashMap;
use std::io::{self, BufRead, Read, Write};

/// A parsed `opensm-lfts.dump`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LftDump {
    /// The file it was read from, for errors found later by [`LftDump::to_tables`].
    pub file: String,
    /// Switch blocks in file order.
    pub switches: Vec<SwitchLft>,
}

/// One switch block of the dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchLft {
    /// Switch node GUID.
    pub guid: Guid,
    /// The switch's LID when the dump was taken.
    pub lid: Lid,
    /// Node description as quoted in the header.
    pub description: String,
    /// Top LID of the table (the `[0-N]` range).
    pub max_lid: u16,
    /// Destination LID → output port, in file order.
    pub entries: Vec<(Lid, PortNum)>,
    /// Line of the block's header.
    pub line: usize,
    /// Per entry: its line and the port GUID its comment names, if any.
    notes: Vec<(usize, Option<Guid>)>,
}

/// Parses an `opensm-lfts.dump`; `file` names it in errors.
///
/// Stricter than OpenSM's own loader: a block must end with its `N lids
/// dumped` footer (a missing one means a truncated file), a LID may appear
/// once per switch and a switch once per file.
pub fn parse(text: &str, file: &str) -> Result<LftDump, FabricError> {
    let mut dump = LftDump {
        file: file.to_owned(),
        switches: Vec::new(),
    };
    let mut open = false; // inside a block whose footer has not been seen
    let mut seen: HashMap<Guid, usize> = HashMap::new();
    let mut seen_lids: HashMap<u16, usize> = HashMap::new();
    for (no, raw) in numbered_lines(text) {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with("Multicast mlids") {
            return Err(err(
                file,
                no,
                "this is a multicast dump (opensm-mfts.dump), not a unicast one",
            )
            .into());
        }
        if let Some(rest) = line.strip_prefix("Unicast lids") {
            if open {
                return Err(unterminated(file, no, &dump));
            }
            let sw = parse_header(rest, file, no)?;
            if let Some(first) = seen.insert(sw.guid, no) {
                return Err(err(
                    file,
                    no,
                    format!("switch {} is already listed at line {first}", sw.guid),
                )
                .into());
            }
            seen_lids.clear();
            dump.switches.push(sw);
            open = true;
            continue;
        }
        let Some(sw) = dump.switches.last_mut().filter(|_| open) else {
            return Err(err(
                file,
                no,
                format!(
                    "expected a 'Unicast lids [0-N] of switch ...' header, found {}",
                    excerpt(line)
                ),
            )
            .into());
        };
        // Entries start with 0x; only then can a description end in "lids dumped".
        if let Some(count) = line
            .strip_suffix("lids dumped")
            .filter(|_| !line.starts_with("0x"))
        {
            let n = count.trim().parse::<u16>().ok();
            if n != Some(sw.max_lid) {
                return Err(err(
                    file,
                    no,
                    format!(
                        "footer {} does not match the header's top LID {}",
                        excerpt(line),
                        sw.max_lid
                    ),
                )
                .into());
            }
            open = false;
            continue;
        }
        let (lid, port, guid) = parse_entry(line, file, no)?;
        if let Some(first) = seen_lids.insert(lid.0, no) {
            return Err(err(
                file,
                no,
                format!("LID {lid} is already listed for this switch at line {first}"),
            )
            .into());
        }
        sw.entries.push((lid, port));
        sw.notes.push((no, guid));
    }
    if open {
        let last = text.lines().count();
        return Err(unterminated(file, last, &dump));
    }
    Ok(dump)
}

fn unterminated(file: &str, line: usize, dump: &LftDump) -> FabricError {
    let header = dump.switches.last().map_or(0, |s| s.line);
    err(
        file,
        line,
        format!("the block of line {header} has no 'N lids dumped' footer (truncated file?)"),
    )
    .into()
}

/// `[0-6] of switch Lid 2 guid 0x0000000000200000 ('Switch1'):` (after "Unicast lids").
fn parse_header(rest: &str, file: &str, no: usize) -> Result<SwitchLft, ParseError> {
    let bad = |what: &str| err(file, no, format!("cannot parse switch header: {what}"));
    let rest = rest
        .trim_start()
        .strip_prefix('[')
        .ok_or_else(|| bad("expected '[0-N]'"))?;
    let (range, rest) = rest
        .split_once(']')
        .ok_or_else(|| bad("expected '[0-N]'"))?;
    let (lo, hi) = range
        .split_once('-')
        .ok_or_else(|| bad("expected '[0-N]'"))?;
    let max_lid = match (parse_u64(lo, false), parse_u64(hi, false)) {
        (Some(0), Some(hi)) if hi <= Lid::UNICAST_MAX.0 as u64 => hi as u16,
        _ => {
            return Err(bad(&format!(
                "LID range '[{range}]' is not [0-N] with N <= 49151"
            )))
        }
    };
    let rest = rest
        .trim_start()
        .strip_prefix("of switch Lid")
        .ok_or_else(|| bad("expected 'of switch Lid'"))?;
    let (lid, rest) = rest
        .trim_start()
        .split_once(' ')
        .ok_or_else(|| bad("expected 'Lid N guid 0x...'"))?;
    let lid = parse_u64(lid, false)
        .and_then(|l| u16::try_from(l).ok())
        .ok_or_else(|| bad(&format!("bad switch LID '{lid}'")))?;
    let rest = rest
        .trim_start()
        .strip_prefix("guid")
        .ok_or_else(|| bad("expected 'guid 0x...'"))?;
    let rest = rest.trim_start();
    let (guid, rest) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let guid = guid
        .strip_prefix("0x")
        .and_then(|g| u64::from_str_radix(g, 16).ok())
        .ok_or_else(|| bad(&format!("bad switch GUID '{guid}'")))?;
    let description = rest
        .trim()
        .strip_prefix("('")
        .and_then(|d| d.strip_suffix("'):"))
        .ok_or_else(|| bad("expected ('description'): at the end"))?;
    Ok(SwitchLft {
        guid: Guid(guid),
        lid: Lid(lid),
        description: description.to_owned(),
        max_lid,
        entries: Vec::new(),
        line: no,
        notes: Vec::new(),
    })
}

/// `0x0001 003 # Switch portguid 0x...: 'desc'`: LID, port, owner's port GUID.
fn parse_entry(
    line: &str,
    file: &str,
    no: usize,
) -> Result<(Lid, PortNum, Option<Guid>), ParseError> {
    let (body, comment) = line.split_once('#').unwrap_or((line, ""));
    let mut words = body.split_whitespace();
    let (Some(lid), Some(port), None) = (words.next(), words.next(), words.next()) else {
        return Err(err(
            file,
            no,
            format!("expected '0xLID PORT # comment', found {}", excerpt(line)),
        ));
    };
    let lid = lid
        .strip_prefix("0x")
        .and_then(|l| u16::from_str_radix(l, 16).ok())
        .ok_or_else(|| err(file, no, format!("bad LID '{lid}'")))?;
    if lid > Lid::UNICAST_MAX.0 {
        return Err(err(
            file,
            no,
            format!("LID {} is not a unicast LID", Lid(lid)),
        ));
    }
    let port = port
        .parse::<u8>()
        .ok()
        .filter(|&p| p <= 254)
        .ok_or_else(|| err(file, no, format!("bad port number '{port}'")))?;
    let guid = comment.split_once("portguid 0x").and_then(|(_, g)| {
        let end = g.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(g.len());
        u64::from_str_radix(&g[..end], 16).ok().map(Guid)
    });
    Ok((Lid(lid), port, guid))
}

impl LftDump {
    /// Forwarding tables for `fabric` from this dump, switches matched by GUID.
    ///
    /// Fails, naming the dump line, when a switch GUID is not a switch of the
    /// fabric, an entry's port is above the switch's port count, or the LIDs
    /// disagree with the fabric's (the switch LID of a header, or a LID whose
    /// comment names a port that holds other LIDs): such a dump was taken with
    /// another LID assignment and its entries would point at the wrong ports.
    /// Ports without a LID in the fabric are not checked. Switches the dump
    /// does not list keep empty tables.
    pub fn to_tables(&self, fabric: &Fabric) -> Result<ForwardingTables, FabricError> {
        let mut tables = ForwardingTables::new(fabric);
        let owners: HashMap<Guid, (Lid, Lid)> = fabric
            .lid_ports()
            .map(|(_, p)| {
                (
                    p.guid,
                    (
                        p.lid,
                        Lid(p.lid.0.saturating_add((1u16 << p.lmc.min(15)) - 1)),
                    ),
                )
            })
            .collect();
        let known_ports = port_guids(fabric);
        for sw in &self.switches {
            let at = |line: usize, problem: String| {
                FabricError::from(ParseError::new(&self.file, line, problem))
            };
            let id = fabric
                .node_by_guid(sw.guid)
                .filter(|&id| fabric.node(id).is_switch())
                .ok_or_else(|| {
                    at(
                        sw.line,
                        format!(
                            "switch {} ('{}') is not a switch of the fabric",
                            sw.guid, sw.description
                        ),
                    )
                })?;
            let node = fabric.node(id);
            let own = fabric.node_lid(id);
            if own.is_set() && own != sw.lid {
                return Err(at(
                    sw.line,
                    format!(
                        "switch {} has LID {} here but {} in the fabric",
                        sw.guid, sw.lid.0, own.0
                    ),
                ));
            }
            for (i, &(lid, port)) in sw.entries.iter().enumerate() {
                let (line, guid) = sw.notes.get(i).copied().unwrap_or((sw.line, None));
                if port > node.num_ports {
                    return Err(at(
                        line,
                        format!(
                            "port {port} does not exist on switch {} ('{}'), which has {} ports",
                            sw.guid, node.description, node.num_ports
                        ),
                    ));
                }
                if let Some(g) = guid.filter(|g| !known_ports.contains(g)) {
                    return Err(at(
                        line,
                        format!("the comment names portguid {g}, which is not a port of the fabric (a dump of another fabric?)"),
                    ));
                }
                if let Some((lo, hi)) = guid.and_then(|g| owners.get(&g)) {
                    if lid < *lo || lid > *hi {
                        return Err(at(
                            line,
                            format!(
                                "LID {lid} is listed for port GUID {}, which has LID {lo} in the fabric",
                                guid.unwrap_or_default()
                            ),
                        ));
                    }
                }
                tables.set(id, lid, port);
            }
        }
        Ok(tables)
    }
}

/// Every addressable port GUID of the fabric (switch port 0, CA and router
/// ports), for O(1) checks of the GUIDs a dump's comments name.
fn port_guids(fabric: &Fabric) -> std::collections::HashSet<Guid> {
    fabric
        .iter_nodes()
        .flat_map(|(id, n)| {
            let ports = fabric.ports(id);
            n.addressable_ports()
                .filter_map(move |p| ports.get(p as usize).map(|port| port.guid))
        })
        .collect()
}

/// Longest line [`read_tables`] accepts: dump lines are a LID, a port and a
/// node description of at most 64 bytes; anything longer is not a dump.
pub const MAX_LINE: usize = 64 * 1024;

/// Reads an `opensm-lfts.dump` straight into forwarding tables for `fabric`,
/// line by line: memory is the tables plus one line, whatever the size of
/// the file (the 11,664-node tree's 1.4 GB dump is never held in memory).
/// Same checks and messages as [`parse`] followed by [`LftDump::to_tables`],
/// plus: a line longer than [`MAX_LINE`], bytes that are not UTF-8 and NUL
/// bytes are errors naming the line.
///
/// ```
/// use ibcloud_fabric::formats::lfts_dump::{read_tables, write};
/// use ibcloud_fabric::generate;
/// let f = generate::preset("4-ary-2-full")?.build()?;
/// let t = ibcloud_fabric::lft::ForwardingTables::new(&f);
/// let mut out = Vec::new();
/// write(&f, &t, &mut out).unwrap();
/// assert_eq!(read_tables(&out[..], "x.dump", &f)?, t);
/// let last_line = out[..out.len() - 1].iter().rposition(|&b| b == b'\n').unwrap();
/// let cut = &out[..=last_line]; // the last footer is missing
/// assert!(read_tables(cut, "x.dump", &f).unwrap_err().to_string().contains("truncated"));
/// # Ok::<(), ibcloud_fabric::FabricError>(())
/// ```
pub fn read_tables(
    reader: impl io::BufRead,
    file: &str,
    fabric: &Fabric,
) -> Result<ForwardingTables, FabricError> {
    read_tables_with(reader, file, fabric, MissingPorts::Refuse)
}

/// What [`read_tables_with`] does with an entry whose port the switch does
/// not have (above its port count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissingPorts {
    /// An error naming the line: tables for analysis or simulation, which
    /// need every route to exist.
    Refuse,
    /// Kept as written, so that verification reports those routes as failed
    /// ("a port that does not exist") instead of refusing the whole dump: a
    /// checker must report a broken table, not decline to look at it.
    Keep,
}

/// [`read_tables`], choosing what happens to entries naming a port the
/// switch does not have.
///
/// ```
/// use ibcloud_fabric::formats::lfts_dump::{read_tables_with, write, MissingPorts};
/// use ibcloud_fabric::{generate, Lid};
/// let f = generate::preset("4-ary-2-full")?.build()?;
/// let mut t = ibcloud_fabric::lft::ForwardingTables::new(&f);
/// let sw = f.switches().next().unwrap();
/// t.set(sw, Lid(1), 1);
/// let mut out = Vec::new();
/// write(&f, &t, &mut out).unwrap();
/// let bad = String::from_utf8(out).unwrap().replacen("0x0001 001", "0x0001 099", 1);
/// assert!(read_tables_with(bad.as_bytes(), "x", &f, MissingPorts::Refuse).is_err());
/// let kept = read_tables_with(bad.as_bytes(), "x", &f, MissingPorts::Keep)?;
/// assert_eq!(kept.get(sw, Lid(1)), Some(99));
/// # Ok::<(), ibcloud_fabric::FabricError>(())
/// ```
pub fn read_tables_with(
    mut reader: impl io::BufRead,
    file: &str,
    fabric: &Fabric,
    missing_ports: MissingPorts,
) -> Result<ForwardingTables, FabricError> {
    let mut tables = ForwardingTables::new(fabric);
    let owners: HashMap<Guid, (Lid, Lid)> = fabric
        .lid_ports()
        .map(|(_, p)| {
            (
                p.guid,
                (
                    p.lid,
                    Lid(p.lid.0.saturating_add((1u16 << p.lmc.min(15)) - 1)),
                ),
            )
        })
        .collect();
    let known_ports = port_guids(fabric);
    let at = |line: usize, problem: String| FabricError::from(err(file, line, problem));
    let mut buf: Vec<u8> = Vec::with_capacity(256);
    let mut no = 0usize;
    // The open block: its header, the switch it fills, the LIDs seen in it.
    let mut open: Option<(SwitchLft, crate::ids::NodeId)> = None;
    let mut seen: HashMap<Guid, usize> = HashMap::new();
    let mut seen_lids: HashMap<u16, usize> = HashMap::new();
    let mut blocks = 0usize;
    loop {
        buf.clear();
        let n = (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| FabricError::io(file, e))?;
        if n == 0 {
            break;
        }
        no += 1;
        if buf.len() > MAX_LINE && buf.last() != Some(&b'\n') {
            return Err(at(
                no,
                format!("line longer than {MAX_LINE} bytes: not an OpenSM LFT dump"),
            ));
        }
        let bytes = if no == 1 {
            buf.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&buf)
        } else {
            &buf[..]
        };
        let raw = super::text_of(bytes, file).map_err(|e| {
            // text_of counts lines within this one line.
            FabricError::from(ParseError::new(file, no, e.problem.clone()))
        })?;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with("Multicast mlids") {
            return Err(at(
                no,
                "this is a multicast dump (opensm-mfts.dump), not a unicast one".into(),
            ));
        }
        if let Some(rest) = line.strip_prefix("Unicast lids") {
            if let Some((sw, _)) = &open {
                return Err(at(
                    no,
                    format!(
                        "the block of line {} has no 'N lids dumped' footer (truncated file?)",
                        sw.line
                    ),
                ));
            }
            let sw = parse_header(rest, file, no)?;
            if let Some(first) = seen.insert(sw.guid, no) {
                return Err(at(
                    no,
                    format!("switch {} is already listed at line {first}", sw.guid),
                ));
            }
            let id = fabric
                .node_by_guid(sw.guid)
                .filter(|&id| fabric.node(id).is_switch())
                .ok_or_else(|| {
                    at(
                        no,
                        format!(
                            "switch {} ({}) is not a switch of the fabric",
                            sw.guid,
                            excerpt(&sw.description)
                        ),
                    )
                })?;
            let own = fabric.node_lid(id);
            if own.is_set() && own != sw.lid {
                return Err(at(
                    no,
                    format!(
                        "switch {} has LID {} here but {} in the fabric",
                        sw.guid, sw.lid.0, own.0
                    ),
                ));
            }
            seen_lids.clear();
            blocks += 1;
            open = Some((sw, id));
            continue;
        }
        let Some((sw, id)) = &open else {
            return Err(at(
                no,
                format!(
                    "expected a 'Unicast lids [0-N] of switch ...' header, found {}",
                    excerpt(line)
                ),
            ));
        };
        if let Some(count) = line
            .strip_suffix("lids dumped")
            .filter(|_| !line.starts_with("0x"))
        {
            if count.trim().parse::<u16>().ok() != Some(sw.max_lid) {
                return Err(at(
                    no,
                    format!(
                        "footer {} does not match the header's top LID {}",
                        excerpt(line),
                        sw.max_lid
                    ),
                ));
            }
            open = None;
            continue;
        }
        let (lid, port, guid) = parse_entry(line, file, no)?;
        if let Some(first) = seen_lids.insert(lid.0, no) {
            return Err(at(
                no,
                format!("LID {lid} is already listed for this switch at line {first}"),
            ));
        }
        let node = fabric.node(*id);
        if port > node.num_ports && missing_ports == MissingPorts::Refuse {
            return Err(at(
                no,
                format!(
                    "port {port} does not exist on switch {} ({}), which has {} ports",
                    sw.guid,
                    excerpt(&node.description),
                    node.num_ports
                ),
            ));
        }
        if let Some(g) = guid.filter(|g| !known_ports.contains(g)) {
            return Err(at(
                no,
                format!("the comment names portguid {g}, which is not a port of the fabric (a dump of another fabric?)"),
            ));
        }
        if let Some((lo, hi)) = guid.and_then(|g| owners.get(&g)) {
            if lid < *lo || lid > *hi {
                return Err(at(
                    no,
                    format!(
                        "LID {lid} is listed for port GUID {}, which has LID {lo} in the fabric",
                        guid.unwrap_or_default()
                    ),
                ));
            }
        }
        tables.set(*id, lid, port);
    }
    if let Some((sw, _)) = open {
        return Err(at(
            no,
            format!(
                "the block of line {} has no 'N lids dumped' footer (truncated file?)",
                sw.line
            ),
        ));
    }
    if blocks == 0 {
        return Err(at(no.max(1), "no switch blocks: an empty LFT dump".into()));
    }
    Ok(tables)
}

/// Writes `tables` in OpenSM's `opensm-lfts.dump` layout, for every switch of
/// `fabric` in OpenSM's order, listing LIDs 1 up to the fabric's top LID.
///
/// Fails with [`io::ErrorKind::InvalidInput`] if the tables belong to another
/// fabric or route to a port the switch does not have: OpenSM would drop such
/// an entry, and a dump that silently loses routes is worse than none.
pub fn write(fabric: &Fabric, tables: &ForwardingTables, out: &mut impl Write) -> io::Result<()> {
    let invalid = |msg: String| io::Error::new(io::ErrorKind::InvalidInput, msg);
    if tables.num_nodes() != fabric.num_nodes() {
        return Err(invalid(format!(
            "forwarding tables for {} nodes cannot describe a fabric of {}",
            tables.num_nodes(),
            fabric.num_nodes()
        )));
    }
    let max_lid = fabric.max_lid();
    let owners = lid_owners(fabric, max_lid);
    let mut switches: Vec<_> = fabric.switches().collect();
    switches.sort_by_key(|&id| fabric.node(id).guid.0.swap_bytes());
    let mut buf = Vec::with_capacity(64 * (max_lid as usize + 2));
    for id in switches {
        let node = fabric.node(id);
        buf.clear();
        writeln!(
            buf,
            "Unicast lids [0-{max_lid}] of switch Lid {} guid 0x{:016x} ('{}'):",
            fabric.node_lid(id).0,
            node.guid.0,
            node.description
        )?;
        for lid in 1..=max_lid {
            let Some(port) = tables.get(id, Lid(lid)) else {
                continue;
            };
            if port > node.num_ports {
                return Err(invalid(format!(
                    "switch {} ('{}') routes LID {lid} to port {port} but has {} ports",
                    node.guid, node.description, node.num_ports
                )));
            }
            write!(buf, "0x{lid:04x} {port:03} # ")?;
            match owners[lid as usize] {
                Some(owner) => {
                    let n = fabric.node(owner.node);
                    let guid = fabric.port(owner).map_or(0, |p| p.guid.0);
                    let kind = match n.kind {
                        NodeKind::Switch => "Switch",
                        NodeKind::Ca => "Channel Adapter",
                        NodeKind::Router => "Router",
                    };
                    writeln!(buf, "{kind} portguid 0x{guid:016x}: '{}'", n.description)?;
                }
                None => writeln!(buf, "unknown node and type")?,
            }
        }
        writeln!(buf, "{max_lid} lids dumped")?;
        out.write_all(&buf)?;
    }
    Ok(())
}

/// LID → owning port for 0..=max_lid, first owner winning on a collision
/// (the writer only needs a name for each LID, not a LID check).
fn lid_owners(fabric: &Fabric, max_lid: u16) -> Vec<Option<PortRef>> {
    let mut owners = vec![None; max_lid as usize + 1];
    for (pr, port) in fabric.lid_ports() {
        let span = 1usize << port.lmc.min(7);
        for slot in owners.iter_mut().skip(port.lid.0 as usize).take(span) {
            slot.get_or_insert(pr);
        }
    }
    owners
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::text::testing::mangle;
    use crate::generate::preset;
    use crate::lft::NO_PORT;

    const FIXTURE: &str = include_str!("../../../../fixtures/interop/opensm-lfts.dump");
    const SUBNET: &str = include_str!("../../../../fixtures/interop/opensm-subnet.lst");

    fn fixture_fabric() -> Fabric {
        super::super::subnet_lst::parse(SUBNET, "opensm-subnet.lst").unwrap()
    }

    fn problem(r: Result<impl std::fmt::Debug, FabricError>) -> String {
        match r {
            Err(FabricError::Parse(e)) => e.to_string(),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    fn render(fabric: &Fabric, tables: &ForwardingTables) -> String {
        let mut out = Vec::new();
        write(fabric, tables, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn parses_the_opensm_fixture() {
        let dump = parse(FIXTURE, "opensm-lfts.dump").unwrap();
        assert_eq!(dump.switches.len(), 2);
        let s1 = &dump.switches[0];
        assert_eq!(
            (
                s1.guid,
                s1.lid,
                s1.description.as_str(),
                s1.max_lid,
                s1.line
            ),
            (Guid(0x200000), Lid(2), "Switch1", 6, 1)
        );
        assert_eq!(s1.entries.len(), 6);
        assert_eq!(s1.entries[0], (Lid(1), 3));
        assert_eq!(dump.switches[1].entries.len(), 6);
        assert_eq!(dump.switches[1].entries[3], (Lid(4), 1));
    }

    #[test]
    fn fixture_converts_to_tables_and_writes_back_byte_for_byte() {
        let fabric = fixture_fabric();
        let tables = parse(FIXTURE, "opensm-lfts.dump")
            .unwrap()
            .to_tables(&fabric)
            .unwrap();
        let s2 = fabric.node_by_guid(Guid(0x200001)).unwrap();
        assert_eq!(tables.get(s2, Lid(1)), Some(0));
        assert_eq!(tables.get(s2, Lid(6)), Some(2));
        assert_eq!(tables.get(s2, Lid(7)), None);
        assert_eq!(render(&fabric, &tables), FIXTURE);
    }

    #[test]
    fn generated_tables_round_trip() {
        let fabric = preset("4-ary-2-full").unwrap().build().unwrap();
        let mut tables = ForwardingTables::new(&fabric);
        for (i, sw) in fabric.switches().enumerate() {
            for lid in 1..=fabric.max_lid() {
                // Ports 0..=8, and 9 for "leave unset".
                let port = ((lid as usize * 7 + i) % 10) as u8;
                if port <= 8 {
                    tables.set(sw, Lid(lid), port);
                }
            }
        }
        let text = render(&fabric, &tables);
        let dump = parse(&text, "x").unwrap();
        assert_eq!(dump.switches.len(), fabric.count(NodeKind::Switch));
        assert_eq!(dump.to_tables(&fabric).unwrap(), tables);
        assert_eq!(render(&fabric, &dump.to_tables(&fabric).unwrap()), text);
    }

    #[test]
    fn names_unowned_lids_and_lmc_ranges() {
        let mut fabric = fixture_fabric();
        let hca1 = fabric.node_by_guid(Guid(0x100000)).unwrap();
        fabric.set_lid(PortRef::new(hca1, 1), Lid(8), 2).unwrap(); // 8..=11; LID 3 is now free
        let mut tables = ForwardingTables::new(&fabric);
        let s1 = fabric.node_by_guid(Guid(0x200000)).unwrap();
        tables.set(s1, Lid(3), 1);
        tables.set(s1, Lid(10), 1);
        let text = render(&fabric, &tables);
        assert!(text.contains(
            "Unicast lids [0-11] of switch Lid 2 guid 0x0000000000200000 ('Switch1'):\n"
        ));
        assert!(text.contains("\n0x0003 001 # unknown node and type\n"));
        assert!(
            text.contains("\n0x000a 001 # Channel Adapter portguid 0x0000000000100001: 'Hca1'\n")
        );
        assert!(
            text.contains("Unicast lids [0-11] of switch Lid 1 guid 0x0000000000200001 ('Switch2'):\n11 lids dumped\n")
        );
        assert_eq!(
            parse(&text, "x").unwrap().to_tables(&fabric).unwrap(),
            tables
        );
    }

    #[test]
    fn write_refuses_tables_that_do_not_fit() {
        let fabric = fixture_fabric();
        let mut tables = ForwardingTables::new(&fabric);
        let s1 = fabric.node_by_guid(Guid(0x200000)).unwrap();
        tables.set(s1, Lid(2), 9);
        let e = write(&fabric, &tables, &mut Vec::new()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("to port 9 but has 8 ports"), "{e}");
        tables.set(s1, Lid(2), NO_PORT);
        let other = preset("4-ary-2-full").unwrap().build().unwrap();
        assert!(write(&other, &tables, &mut Vec::new()).is_err());
    }

    #[test]
    fn to_tables_errors_name_the_dump_line() {
        let fabric = fixture_fabric();
        // the header only (a comment naming the switch port would be caught first)
        let unknown = FIXTURE.replace(
            "guid 0x0000000000200001 ('Switch2')",
            "guid 0x0000000000200009 ('Switch2')",
        );
        assert_eq!(
            problem(parse(&unknown, "d").unwrap().to_tables(&fabric)),
            "d:9: switch 0x0000000000200009 ('Switch2') is not a switch of the fabric"
        );
        let hca_guid = FIXTURE.replace(
            "guid 0x0000000000200001 ('Switch2')",
            "guid 0x0000000000100000 ('Switch2')",
        );
        assert!(problem(parse(&hca_guid, "d").unwrap().to_tables(&fabric))
            .contains("d:9: switch 0x0000000000100000"));
        let big_port = FIXTURE.replace("0x0004 001", "0x0004 009");
        assert_eq!(
            problem(parse(&big_port, "d").unwrap().to_tables(&fabric)),
            "d:13: port 9 does not exist on switch 0x0000000000200001 ('Switch2'), which has 8 ports"
        );
        let moved = FIXTURE.replace(
            "0x0005 002 # Channel Adapter portguid 0x0000000000100007",
            "0x0007 002 # Channel Adapter portguid 0x0000000000100007",
        );
        assert!(
            problem(parse(&moved, "d").unwrap().to_tables(&fabric)).starts_with(
                "d:6: LID 0x0007 is listed for port GUID 0x0000000000100007, which has LID 0x0005"
            )
        );
        let relid = FIXTURE.replace("switch Lid 1 guid", "switch Lid 7 guid");
        assert_eq!(
            problem(parse(&relid, "d").unwrap().to_tables(&fabric)),
            "d:9: switch 0x0000000000200001 has LID 7 here but 1 in the fabric"
        );
    }

    #[test]
    fn parse_errors_name_file_and_line() {
        let cases: &[(&str, &str)] = &[
            ("0x0001 003 # x\n", "d:1: expected a 'Unicast lids [0-N] of switch ...' header, found '0x0001 003 # x'"),
            ("Multicast mlids [0xc000-0xc001] of switch Lid 1 guid 0x1:\n", "d:1: this is a multicast dump"),
            ("Unicast lids [0-6] of switch Lid 2 guid 0x1 ('a'):\n0x0001 003 # x\n", "d:2: the block of line 1 has no 'N lids dumped' footer"),
            ("Unicast lids [0-6] of switch Lid 2 guid 0x1 ('a'):\nUnicast lids [0-6] of switch Lid 2 guid 0x2 ('b'):\n", "d:2: the block of line 1 has no"),
            ("Unicast lids [0-6] of switch Lid 2 guid 0x1 ('a'):\n5 lids dumped\n", "d:2: footer '5 lids dumped' does not match the header's top LID 6"),
            ("Unicast lids [0-6] of switch Lid 2 guid 0x1 ('a'):\n0xzz 003\n", "d:2: bad LID '0xzz'"),
            ("Unicast lids [0-6] of switch Lid 2 guid 0x1 ('a'):\n0xc000 003\n", "d:2: LID 0xc000 is not a unicast LID"),
            ("Unicast lids [0-6] of switch Lid 2 guid 0x1 ('a'):\n0x0001 255\n", "d:2: bad port number '255'"),
            ("Unicast lids [0-6] of switch Lid 2 guid 0x1 ('a'):\n0x0001\n", "d:2: expected '0xLID PORT # comment'"),
            ("Unicast lids [0-6] of switch Lid 2 guid 0x1 ('a'):\n0x0001 1\n0x0001 2\n", "d:3: LID 0x0001 is already listed for this switch at line 2"),
            ("Unicast lids [0-1] of switch Lid 2 guid 0x1 ('a'):\n1 lids dumped\nUnicast lids [0-1] of switch Lid 3 guid 0x1 ('a'):\n", "d:3: switch 0x0000000000000001 is already listed at line 1"),
            ("Unicast lids [1-6] of switch Lid 2 guid 0x1 ('a'):\n", "d:1: cannot parse switch header: LID range '[1-6]'"),
            ("Unicast lids [0-6] of switch Lid 2 guid 0xg ('a'):\n", "d:1: cannot parse switch header: bad switch GUID '0xg'"),
            ("Unicast lids [0-6] of switch Lid 2 guid 0x1 'a':\n", "d:1: cannot parse switch header: expected ('description')"),
            ("Unicast lids [0-6] of switch guid 0x1 ('a'):\n", "d:1: cannot parse switch header: expected 'of switch Lid'"),
        ];
        for (text, want) in cases {
            let got = problem(parse(text, "d"));
            assert!(got.starts_with(want), "{text:?}: {got}");
        }
    }

    #[test]
    fn tolerates_comments_blank_lines_and_odd_descriptions() {
        let text = "# made by hand\n\nUnicast lids [0x0-0x2] of switch Lid 1 guid 0x10 ('it's (odd)'):\n  0x0002 001 # no portguid here\n0x0001 002 # unknown lids dumped\n2 lids dumped\r\n";
        let dump = parse(text, "d").unwrap();
        assert_eq!(dump.switches[0].description, "it's (odd)");
        assert_eq!(dump.switches[0].entries, vec![(Lid(2), 1), (Lid(1), 2)]);
        assert_eq!(parse("", "d").unwrap().switches.len(), 0);
    }

    proptest::proptest! {
        #[test]
        fn mangled_input_never_panics(at in 0usize..4096, len in 0usize..64, junk in "[ -~{}\\n\u{e9}]{0,24}") {
            let text = mangle(FIXTURE, at, len, &junk);
            if let Ok(dump) = parse(&text, "m") {
                let _ = dump.to_tables(&fixture_fabric());
            }
        }
    }
}
