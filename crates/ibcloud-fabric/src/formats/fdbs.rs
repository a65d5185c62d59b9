//! OpenSM's `opensm.fdbs` (the unicast routes with hop counts, which
//! ibutils' `ibdmchk` verifies) and the output of infiniband-diags'
//! `ibroute` (a switch's table read back from the fabric).
//!
//! `opensm.fdbs`, written by OpenSM at routing verbosity (`-D 0x41` or more),
//! one block per switch in OpenSM's switch order (GUID in network byte order):
//!
//! ```text
//! dump_ucast_routes: Switch 0x0002c90201000001
//! LID    : Port : Hops : Optimal
//! 0x0001 : 001  : 01   : yes
//! 0x0013 : 019  : 03   : yes
//! 0x02BD : UNREACHABLE
//! ```
//!
//! Every LID from 1 to the top LID gets a line: `UNREACHABLE` when no port
//! holds the LID or the entry is unset; `PPP  : HOPS UNKNOWN` when the port
//! has no path in OpenSM's hop matrix; otherwise the hop count through that
//! port and whether it is the least (`yes`, or `No N hop path possible via
//! port P!`). The hop matrix is OpenSM's min-hop one: switch LIDs only, port 0
//! holding the least count; a CA's LID is counted through the switch it
//! hangs off, plus one. ibdmchk reads only the `0xLID : PORT` start of a line.
//!
//! `ibroute <lid>` prints `Unicast lids [0x0-0xN] of switch Lid L guid 0x…
//! (desc):`, two column-title lines, one `0xLLLL PPP` line per valid entry
//! (followed by ` : (destination)` unless `-n`; `-a` adds unset entries as
//! port 255) and `K valid lids dumped ` / `K lids dumped `.

use super::text::{err, numbered_lines};
use crate::error::excerpt;
use crate::error::{FabricError, ParseError};
use crate::ids::{Guid, Lid, NodeId, PortNum, PortRef};
use crate::lft::{ForwardingTables, NO_PORT};
use crate::model::Fabric;
use std::collections::{HashMap, VecDeque};
use std::io::{self, Write};

/// Forwarding tables read from an `opensm.fdbs` file or from `ibroute` output.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FdbDump {
    /// The file it was read from, for errors found by [`FdbDump::to_tables`].
    pub file: String,
    /// Switch blocks in file order.
    pub switches: Vec<SwitchFdb>,
}

/// One switch's entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchFdb {
    /// Switch node GUID.
    pub guid: Guid,
    /// The switch's LID, when the format states it (`ibroute`).
    pub lid: Option<Lid>,
    /// Destination LID → output port, in file order; unset entries are left out.
    pub entries: Vec<(Lid, PortNum)>,
    /// Line of the block's header.
    pub line: usize,
    /// Line of every entry.
    lines: Vec<usize>,
}

impl SwitchFdb {
    fn new(guid: Guid, lid: Option<Lid>, line: usize) -> Self {
        Self {
            guid,
            lid,
            entries: Vec::new(),
            line,
            lines: Vec::new(),
        }
    }
}

fn hex_u64(s: &str) -> Option<u64> {
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    u64::from_str_radix(h, 16).ok()
}

fn lid_token(tok: &str, file: &str, no: usize) -> Result<Lid, ParseError> {
    let lid = hex_u64(tok).ok_or_else(|| err(file, no, format!("bad LID '{tok}'")))?;
    if lid > Lid::UNICAST_MAX.0 as u64 {
        return Err(err(file, no, format!("LID {tok} is not a unicast LID")));
    }
    Ok(Lid(lid as u16))
}

fn port_token(tok: &str, file: &str, no: usize) -> Result<u8, ParseError> {
    tok.parse::<u8>()
        .ok()
        .ok_or_else(|| err(file, no, format!("bad port number '{tok}'")))
}

/// Adds an entry to the open block, refusing a LID listed twice.
fn push(
    sw: &mut SwitchFdb,
    seen: &mut HashMap<u16, usize>,
    lid: Lid,
    port: u8,
    file: &str,
    no: usize,
) -> Result<(), ParseError> {
    if let Some(first) = seen.insert(lid.0, no) {
        return Err(err(
            file,
            no,
            format!("LID {lid} is already listed for this switch at line {first}"),
        ));
    }
    if port != NO_PORT {
        sw.entries.push((lid, port));
        sw.lines.push(no);
    }
    Ok(())
}

/// Parses an `opensm.fdbs`; `file` names it in errors.
///
/// Entries are `0xLID : PORT ...` lines after a `dump_ucast_routes: Switch
/// 0x…` header; `UNREACHABLE` lines carry no port and are skipped, as are
/// blank lines and the column titles.
pub fn parse(text: &str, file: &str) -> Result<FdbDump, FabricError> {
    let mut dump = FdbDump {
        file: file.to_owned(),
        switches: Vec::new(),
    };
    let mut seen_sw: HashMap<Guid, usize> = HashMap::new();
    let mut seen: HashMap<u16, usize> = HashMap::new();
    for (no, raw) in numbered_lines(text) {
        let line = raw.trim();
        if line.is_empty() || line.starts_with("LID") {
            continue;
        }
        if let Some(rest) = line.strip_prefix("dump_ucast_routes:") {
            let guid = rest
                .trim()
                .strip_prefix("Switch")
                .map(str::trim)
                .and_then(hex_u64)
                .ok_or_else(|| {
                    err(
                        file,
                        no,
                        format!(
                            "expected 'dump_ucast_routes: Switch 0x<guid>', found {}",
                            excerpt(line)
                        ),
                    )
                })?;
            if let Some(first) = seen_sw.insert(Guid(guid), no) {
                return Err(err(
                    file,
                    no,
                    format!("switch {} is already listed at line {first}", Guid(guid)),
                )
                .into());
            }
            seen.clear();
            dump.switches.push(SwitchFdb::new(Guid(guid), None, no));
            continue;
        }
        let Some(sw) = dump.switches.last_mut() else {
            return Err(err(
                file,
                no,
                format!(
                    "expected a 'dump_ucast_routes: Switch 0x...' header, found {}",
                    excerpt(line)
                ),
            )
            .into());
        };
        let mut parts = line.split(':').map(str::trim);
        let (Some(lid), Some(port)) = (parts.next(), parts.next()) else {
            return Err(err(
                file,
                no,
                format!(
                    "expected '0xLID : PORT : HOPS : OPTIMAL', found {}",
                    excerpt(line)
                ),
            )
            .into());
        };
        let lid = lid_token(lid, file, no)?;
        if port == "UNREACHABLE" {
            push(sw, &mut seen, lid, NO_PORT, file, no)?;
            continue;
        }
        let port = port_token(port, file, no)?;
        push(sw, &mut seen, lid, port, file, no)?;
    }
    Ok(dump)
}

/// Parses the output of one or more `ibroute` runs (concatenated); `file`
/// names it in errors. Entries with port 255 (`ibroute -a`) are unset.
pub fn parse_ibroute(text: &str, file: &str) -> Result<FdbDump, FabricError> {
    let mut dump = FdbDump {
        file: file.to_owned(),
        switches: Vec::new(),
    };
    let mut seen_sw: HashMap<Guid, usize> = HashMap::new();
    let mut seen: HashMap<u16, usize> = HashMap::new();
    let mut open = false;
    for (no, raw) in numbered_lines(text) {
        let line = raw.trim();
        if line.is_empty() || line.starts_with("Lid") || line.starts_with("Port") {
            continue;
        }
        if let Some(rest) = line.strip_prefix("Unicast lids") {
            let bad = || {
                err(
                    file,
                    no,
                    format!("cannot parse ibroute header {}", excerpt(line)),
                )
            };
            let (_, rest) = rest.split_once("of switch Lid").ok_or_else(bad)?;
            let mut words = rest.split_whitespace();
            let lid = words
                .next()
                .and_then(|l| l.parse::<u16>().ok())
                .ok_or_else(bad)?;
            let guid = match (words.next(), words.next()) {
                (Some("guid"), Some(g)) => hex_u64(g).ok_or_else(bad)?,
                _ => return Err(bad().into()),
            };
            if let Some(first) = seen_sw.insert(Guid(guid), no) {
                return Err(err(
                    file,
                    no,
                    format!("switch {} is already listed at line {first}", Guid(guid)),
                )
                .into());
            }
            seen.clear();
            dump.switches
                .push(SwitchFdb::new(Guid(guid), Some(Lid(lid)), no));
            open = true;
            continue;
        }
        if line.ends_with("lids dumped") && !line.starts_with("0x") {
            open = false;
            continue;
        }
        let Some(sw) = dump.switches.last_mut().filter(|_| open) else {
            return Err(err(
                file,
                no,
                format!(
                    "expected an ibroute 'Unicast lids ...' header, found {}",
                    excerpt(line)
                ),
            )
            .into());
        };
        let body = line.split_once(':').map_or(line, |(b, _)| b);
        let mut words = body.split_whitespace();
        let (Some(lid), Some(port), None) = (words.next(), words.next(), words.next()) else {
            return Err(err(
                file,
                no,
                format!("expected '0xLID PORT', found {}", excerpt(line)),
            )
            .into());
        };
        let lid = lid_token(lid, file, no)?;
        let port = port_token(port, file, no)?;
        if lid.0 != 0 {
            push(sw, &mut seen, lid, port, file, no)?;
        }
    }
    Ok(dump)
}

impl FdbDump {
    /// Forwarding tables for `fabric`, switches matched by GUID. Fails, naming
    /// the line, for a GUID that is not a switch of the fabric, a port above
    /// the switch's port count or (`ibroute`) a switch LID that differs from
    /// the fabric's. Switches not listed keep empty tables.
    pub fn to_tables(&self, fabric: &Fabric) -> Result<ForwardingTables, FabricError> {
        let mut tables = ForwardingTables::new(fabric);
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
                        format!("switch {} is not a switch of the fabric", sw.guid),
                    )
                })?;
            let node = fabric.node(id);
            if let Some(lid) = sw.lid {
                let own = fabric.node_lid(id);
                if own.is_set() && own != lid {
                    return Err(at(
                        sw.line,
                        format!(
                            "switch {} has LID {} here but {} in the fabric",
                            sw.guid, lid.0, own.0
                        ),
                    ));
                }
            }
            for (i, &(lid, port)) in sw.entries.iter().enumerate() {
                if port > node.num_ports {
                    let line = sw.lines.get(i).copied().unwrap_or(sw.line);
                    return Err(at(
                        line,
                        format!(
                            "port {port} does not exist on switch {} ('{}'), which has {} ports",
                            sw.guid, node.description, node.num_ports
                        ),
                    ));
                }
                tables.set(id, lid, port);
            }
        }
        Ok(tables)
    }
}

const NO_PATH: u16 = u16::MAX;

/// Switch-to-switch hop distances, all pairs, by BFS from every switch.
struct Hops {
    index: Vec<u32>,
    n: usize,
    dist: Vec<u16>,
}

impl Hops {
    fn new(fabric: &Fabric) -> Self {
        let switches: Vec<NodeId> = fabric.switches().collect();
        let mut index = vec![u32::MAX; fabric.num_nodes()];
        for (i, s) in switches.iter().enumerate() {
            index[s.index()] = i as u32;
        }
        let adj: Vec<Vec<u32>> = switches
            .iter()
            .map(|&s| {
                fabric
                    .neighbors(s)
                    .map(|(_, r)| index[r.node.index()])
                    .filter(|&r| r != u32::MAX && switches[r as usize] != s)
                    .collect()
            })
            .collect();
        let n = switches.len();
        let mut dist = vec![NO_PATH; n * n];
        let mut queue = VecDeque::new();
        for from in 0..n {
            let row = &mut dist[from * n..(from + 1) * n];
            row[from] = 0;
            queue.push_back(from as u32);
            while let Some(s) = queue.pop_front() {
                let d = row[s as usize];
                for &r in &adj[s as usize] {
                    if row[r as usize] == NO_PATH {
                        row[r as usize] = d + 1;
                        queue.push_back(r);
                    }
                }
            }
        }
        Self { index, n, dist }
    }

    /// Least hops between two switches (by node id).
    fn least(&self, a: NodeId, b: NodeId) -> u16 {
        let (i, j) = (self.index[a.index()], self.index[b.index()]);
        if i == u32::MAX || j == u32::MAX {
            return NO_PATH;
        }
        self.dist[i as usize * self.n + j as usize]
    }

    /// OpenSM's hop count from switch `s` to switch `t` through `port`:
    /// port 0 holds the least count; a port to another switch R counts
    /// 1 + least(R, t); any other port has no path.
    fn via(&self, fabric: &Fabric, s: NodeId, t: NodeId, port: PortNum) -> u16 {
        if port == 0 {
            return self.least(s, t);
        }
        match fabric.remote(PortRef::new(s, port)) {
            Some(r) if r.node != s && fabric.node(r.node).is_switch() => {
                match self.least(r.node, t) {
                    NO_PATH => NO_PATH,
                    h => h + 1,
                }
            }
            _ => NO_PATH,
        }
    }
}

/// Writes `tables` as OpenSM's `opensm.fdbs` for every switch of `fabric`
/// (OpenSM's order), LIDs 1 to the fabric's top LID.
///
/// Byte-identical to OpenSM's file for minimal routes. Where an entry is
/// not a least-hop one, OpenSM names the port its min-hop engine would
/// choose; this writer names the lowest-numbered least-hop port instead.
/// Fails with [`io::ErrorKind::InvalidInput`] if the tables belong to
/// another fabric.
pub fn write(fabric: &Fabric, tables: &ForwardingTables, out: &mut impl Write) -> io::Result<()> {
    if tables.num_nodes() != fabric.num_nodes() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "forwarding tables for {} nodes cannot describe a fabric of {}",
                tables.num_nodes(),
                fabric.num_nodes()
            ),
        ));
    }
    let max_lid = fabric.max_lid();
    // LID → (owner port, the switch that holds or serves it).
    let mut owners: Vec<Option<(PortRef, Option<NodeId>)>> = vec![None; max_lid as usize + 1];
    for (pr, port) in fabric.lid_ports() {
        let serving = if fabric.node(pr.node).is_switch() {
            Some(pr.node)
        } else {
            port.remote
                .map(|r| r.node)
                .filter(|&n| fabric.node(n).is_switch())
        };
        let span = 1usize << port.lmc.min(7);
        for slot in owners.iter_mut().skip(port.lid.0 as usize).take(span) {
            slot.get_or_insert((pr, serving));
        }
    }
    let hops = Hops::new(fabric);
    let mut switches: Vec<NodeId> = fabric.switches().collect();
    switches.sort_by_key(|&id| fabric.node(id).guid.0.swap_bytes());
    let mut buf = Vec::with_capacity(32 * (max_lid as usize + 2));
    for s in switches {
        buf.clear();
        writeln!(
            buf,
            "dump_ucast_routes: Switch 0x{:016x}\nLID    : Port : Hops : Optimal",
            fabric.node(s).guid.0
        )?;
        for lid in 1..=max_lid {
            write!(buf, "0x{lid:04X} : ")?;
            let (Some((owner, serving)), Some(port)) =
                (owners[lid as usize], tables.get(s, Lid(lid)))
            else {
                writeln!(buf, "UNREACHABLE")?;
                continue;
            };
            let to_switch = fabric.node(owner.node).is_switch();
            let (num, best, target) = match serving {
                None => (NO_PATH, NO_PATH, None),
                Some(t) if to_switch => (hops.via(fabric, s, t, port), hops.least(s, t), Some(t)),
                Some(t) => {
                    let num = if t == s {
                        0
                    } else {
                        hops.via(fabric, s, t, port)
                    };
                    let best = hops.least(s, t);
                    (num.saturating_add(1), best.saturating_add(1), Some(t))
                }
            };
            if num == NO_PATH {
                writeln!(buf, "{port:03}  : HOPS UNKNOWN")?;
                continue;
            }
            write!(buf, "{port:03}  : {num:02}   : ")?;
            if num == best {
                writeln!(buf, "yes")?;
            } else {
                let t = target.unwrap_or(s);
                let extra = u16::from(!to_switch);
                let best_port = (1..=fabric.node(s).num_ports)
                    .find(|&p| hops.via(fabric, s, t, p).saturating_add(extra) == best)
                    .unwrap_or(0);
                writeln!(buf, "No {best} hop path possible via port {best_port}!")?;
            }
        }
        out.write_all(&buf)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::text::testing::mangle;
    use crate::generate::preset;

    const SUBNET: &str = include_str!("../../../../fixtures/interop/opensm-subnet.lst");
    const LFTS: &str = include_str!("../../../../fixtures/interop/opensm-lfts.dump");

    fn fixture() -> (Fabric, ForwardingTables) {
        let f = super::super::subnet_lst::parse(SUBNET, "opensm-subnet.lst").unwrap();
        let t = super::super::lfts_dump::parse(LFTS, "opensm-lfts.dump")
            .unwrap()
            .to_tables(&f)
            .unwrap();
        (f, t)
    }

    fn render(f: &Fabric, t: &ForwardingTables) -> String {
        let mut out = Vec::new();
        write(f, t, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn problem(r: Result<impl std::fmt::Debug, FabricError>) -> String {
        match r {
            Err(FabricError::Parse(e)) => e.to_string(),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn writes_opensm_layout_and_reads_it_back() {
        let (f, t) = fixture();
        let text = render(&f, &t);
        assert!(text.starts_with(
            "dump_ucast_routes: Switch 0x0000000000200000\nLID    : Port : Hops : Optimal\n"
        ));
        // Switch1 (LID 2) reaches Switch2 (LID 1) in one hop over port 3 and owns LID 2.
        assert!(
            text.contains("\n0x0001 : 003  : 01   : yes\n0x0002 : 000  : 00   : yes\n"),
            "{text}"
        );
        let back = parse(&text, "x").unwrap();
        assert_eq!(back.switches.len(), 2);
        assert_eq!(back.to_tables(&f).unwrap(), t);
    }

    #[test]
    fn marks_unreachable_unknown_and_non_minimal_entries() {
        let f = preset("4-ary-2-full").unwrap().build().unwrap();
        let mut t = ForwardingTables::new(&f);
        let leaf = f
            .remote(PortRef::new(f.cas().next().unwrap(), 1))
            .unwrap()
            .node;
        let other_leaf = f
            .switches()
            .find(|&s| s != leaf && f.neighbors(s).any(|(_, r)| !f.node(r.node).is_switch()))
            .unwrap();
        let (up, root) = f
            .neighbors(leaf)
            .find(|(_, r)| f.node(r.node).is_switch())
            .unwrap();
        // Leaf → its own host on port 1 (1 hop), → another leaf's LID via a root (2), → a
        // host of that leaf (3), → its own LID on port 0 (0); root → leaf LID on port 0 (least, 1).
        t.set(leaf, Lid(1), 1);
        t.set(leaf, f.node_lid(other_leaf), up);
        t.set(leaf, Lid(5), up);
        t.set(leaf, f.node_lid(leaf), 0);
        t.set(leaf, Lid(6), 2); // a host of another leaf on a host port: no path
        t.set(root.node, f.node_lid(leaf), 0);
        // A non-minimal route: the root sends leaf's LID back up... it has no up ports, so use
        // the other leaf: route to a root LID via the first leaf (2 hops instead of 1).
        let root_lid = f.node_lid(root.node);
        let (_, other_root) = f
            .neighbors(other_leaf)
            .find(|(_, r)| f.node(r.node).is_switch())
            .unwrap();
        assert_eq!(
            other_root.node, root.node,
            "both leaves hang off every root in this tree"
        );
        t.set(leaf, root_lid, up);
        let text = render(&f, &t);
        let block: String = text
            .split("dump_ucast_routes: ")
            .find(|b| b.starts_with(&format!("Switch 0x{:016x}", f.node(leaf).guid.0)))
            .unwrap()
            .to_owned();
        assert!(block.contains("\n0x0001 : 001  : 01   : yes\n"), "{block}");
        assert!(block.contains("\n0x0002 : UNREACHABLE\n"));
        assert!(block.contains(&format!(
            "\n0x{:04X} : {up:03}  : 02   : yes\n",
            f.node_lid(other_leaf).0
        )));
        assert!(
            block.contains(&format!("\n0x0005 : {up:03}  : 03   : yes\n")),
            "{block}"
        );
        assert!(block.contains("\n0x0006 : 002  : HOPS UNKNOWN\n"));
        assert!(block.contains(&format!(
            "\n0x{:04X} : 000  : 00   : yes\n",
            f.node_lid(leaf).0
        )));
        assert!(block.contains(&format!("\n0x{:04X} : {up:03}  : 01   : yes\n", root_lid.0)));
        // Now a real detour: reach the root's LID through the other leaf's port to it.
        let mut t2 = t.clone();
        let (via, _) = f
            .neighbors(leaf)
            .filter(|(_, r)| f.node(r.node).is_switch())
            .nth(1)
            .unwrap();
        t2.set(leaf, root_lid, via);
        let text2 = render(&f, &t2);
        assert!(
            text2.contains(&format!(
                "\n0x{:04X} : {via:03}  : 03   : No 1 hop path possible via port {up}!\n",
                root_lid.0
            )),
            "{text2}"
        );
        assert_eq!(parse(&text2, "x").unwrap().to_tables(&f).unwrap(), t2);
    }

    /// OpenSM's own files: 4-ary-2-full routed by minhop, and an 8-switch ring whose
    /// tables (loaded with `-R file`) hold a detour, an uncabled port and a CA port.
    #[test]
    fn byte_identical_to_opensm_fixtures() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/interop/fdbs/");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}{f}")).unwrap();
        let tree = preset("4-ary-2-full").unwrap().build().unwrap();
        let ring =
            super::super::subnet_lst::parse(&read("ring8-file/opensm-subnet.lst"), "lst").unwrap();
        for (f, sub) in [(&tree, "4-ary-2-full-minhop"), (&ring, "ring8-file")] {
            let t =
                super::super::lfts_dump::parse(&read(&format!("{sub}/opensm-lfts.dump")), "lfts")
                    .unwrap()
                    .to_tables(f)
                    .unwrap();
            let theirs = read(&format!("{sub}/opensm.fdbs"));
            assert_eq!(render(f, &t), theirs, "{sub}");
            assert_eq!(parse(&theirs, "fdbs").unwrap().to_tables(f).unwrap(), t);
        }
        let ring_fdbs = read("ring8-file/opensm.fdbs");
        assert!(ring_fdbs.contains("0x0003 : 003  : 05   : No 3 hop path possible via port 2!\n"));
        assert!(ring_fdbs.contains("0x0004 : 004  : HOPS UNKNOWN\n"));
        // ibroute read the minhop tables back from ibsim (`-n` for all switches but the
        // last, `-a` with destinations for the last).
        let t =
            super::super::lfts_dump::parse(&read("4-ary-2-full-minhop/opensm-lfts.dump"), "lfts")
                .unwrap()
                .to_tables(&tree)
                .unwrap();
        let back = parse_ibroute(&read("4-ary-2-full-minhop/ibroute.txt"), "ibroute.txt").unwrap();
        assert_eq!(back.switches.len(), 12);
        assert_eq!(back.to_tables(&tree).unwrap(), t);
    }

    #[test]
    fn parses_ibroute_output() {
        let text = "Unicast lids [0x0-0x2c] of switch Lid 33 guid 0x0002c90201000001 (sw-L1-0001):\n  Lid  Out   Destination\n       Port     Info \n0x0001 001 : (Channel Adapter portguid 0x0002c90300000101: 'hca-00001 HCA-1')\n0x0021 000 : (Switch portguid 0x0002c90201000001: 'sw-L1-0001')\n2 valid lids dumped \nUnicast lids [0x0-0x2c] of switch Lid 41 guid 0x0002c90202000001 (sw-L2-0001):\n  Lid  Out   Destination\n       Port     Info \n0x0000 255 \n0x0001 001 \n0x0002 255 \n3 lids dumped \n";
        let d = parse_ibroute(text, "r").unwrap();
        assert_eq!(d.switches.len(), 2);
        assert_eq!(d.switches[0].lid, Some(Lid(33)));
        assert_eq!(d.switches[0].entries, vec![(Lid(1), 1), (Lid(0x21), 0)]);
        assert_eq!(d.switches[1].entries, vec![(Lid(1), 1)]);
        let f = preset("4-ary-2-full").unwrap().build().unwrap();
        let t = d.to_tables(&f).unwrap();
        let sw = f.node_by_guid(Guid(0x0002c90201000001)).unwrap();
        assert_eq!(t.get(sw, Lid(0x21)), Some(0));
        let relid = text.replace("switch Lid 33", "switch Lid 7");
        assert_eq!(
            problem(parse_ibroute(&relid, "r").unwrap().to_tables(&f)),
            "r:1: switch 0x0002c90201000001 has LID 7 here but 33 in the fabric"
        );
    }

    #[test]
    fn errors_name_file_and_line() {
        let cases: &[(&str, &str)] = &[
            (
                "0x0001 : 001  : 01   : yes\n",
                "d:1: expected a 'dump_ucast_routes: Switch 0x...' header",
            ),
            (
                "dump_ucast_routes: Switch zz\n",
                "d:1: expected 'dump_ucast_routes: Switch 0x<guid>'",
            ),
            (
                "dump_ucast_routes: Switch 0x1\n0xZZ : 001\n",
                "d:2: bad LID '0xZZ'",
            ),
            (
                "dump_ucast_routes: Switch 0x1\n0xC000 : 001\n",
                "d:2: LID 0xC000 is not a unicast LID",
            ),
            (
                "dump_ucast_routes: Switch 0x1\n0x0001 : 300\n",
                "d:2: bad port number '300'",
            ),
            (
                "dump_ucast_routes: Switch 0x1\n0x0001\n",
                "d:2: expected '0xLID : PORT : HOPS : OPTIMAL'",
            ),
            (
                "dump_ucast_routes: Switch 0x1\n0x0001 : 1\n0x0001 : UNREACHABLE\n",
                "d:3: LID 0x0001 is already listed",
            ),
            (
                "dump_ucast_routes: Switch 0x1\ndump_ucast_routes: Switch 0x1\n",
                "d:2: switch 0x0000000000000001 is already listed at line 1",
            ),
        ];
        for (text, want) in cases {
            let got = problem(parse(text, "d"));
            assert!(got.starts_with(want), "{text:?}: {got}");
        }
        let (f, _) = fixture();
        let unknown = "dump_ucast_routes: Switch 0x99\n";
        assert_eq!(
            problem(parse(unknown, "d").unwrap().to_tables(&f)),
            "d:1: switch 0x0000000000000099 is not a switch of the fabric"
        );
        let big = "dump_ucast_routes: Switch 0x200000\nLID    : Port : Hops : Optimal\n0x0001 : 009  : 01   : yes\n";
        assert!(problem(parse(big, "d").unwrap().to_tables(&f))
            .starts_with("d:3: port 9 does not exist on switch"));
        assert!(problem(parse_ibroute("0x0001 001\n", "r"))
            .starts_with("r:1: expected an ibroute 'Unicast lids ...' header"));
        assert!(problem(parse_ibroute(
            "Unicast lids [0x0-0x1] of switch Lid x\n",
            "r"
        ))
        .starts_with("r:1: cannot parse ibroute header"));
        let other = preset("8-ary-2").unwrap().build().unwrap();
        assert!(write(&f, &ForwardingTables::new(&other), &mut Vec::new()).is_err());
    }

    proptest::proptest! {
        #[test]
        fn mangled_input_never_panics(at in 0usize..2048, len in 0usize..64, junk in "[ -~{}\\n\u{e9}]{0,24}") {
            let (f, t) = fixture();
            let text = mangle(&render(&f, &t), at, len, &junk);
            if let Ok(d) = parse(&text, "m") {
                let _ = d.to_tables(&f);
            }
            if let Ok(d) = parse_ibroute(&text, "m") {
                let _ = d.to_tables(&f);
            }
        }
    }
}

/// Compares the writer with OpenSM's own file: `IBCLOUD_FDBS_CHECK=<preset, .net or lst>:<dir>,...` where
/// `<dir>` holds OpenSM's `opensm-lfts.dump` and `opensm.fdbs` for that fabric (`lst`: the
/// fabric is the dir's `opensm-subnet.lst`, with OpenSM's LIDs).
/// `cargo test --release -p ibcloud-fabric -- --ignored --nocapture fdbs_match`
#[cfg(test)]
#[test]
#[ignore = "needs OpenSM dumps; see the doc comment"]
fn fdbs_match_opensm() {
    let Ok(spec) = std::env::var("IBCLOUD_FDBS_CHECK") else {
        return;
    };
    for one in spec.split(',') {
        let (name, dir) = one.split_once(':').unwrap();
        let f = if name == "lst" {
            let lst = std::fs::read_to_string(format!("{dir}/opensm-subnet.lst")).unwrap();
            super::subnet_lst::parse(&lst, "opensm-subnet.lst").unwrap()
        } else if name.ends_with(".net") {
            super::read_fabric(std::path::Path::new(name), None).unwrap()
        } else {
            crate::generate::preset(name).unwrap().build().unwrap()
        };
        let lfts = std::fs::read_to_string(format!("{dir}/opensm-lfts.dump")).unwrap();
        let t = super::lfts_dump::parse(&lfts, "lfts")
            .unwrap()
            .to_tables(&f)
            .unwrap();
        drop(lfts);
        if let Ok(text) = std::fs::read_to_string(format!("{dir}/ibroute.txt")) {
            let back = parse_ibroute(&text, "ibroute.txt").unwrap();
            let n = back.switches.len();
            let mut theirs = back.to_tables(&f).unwrap();
            let listed: std::collections::HashSet<Guid> =
                back.switches.iter().map(|s| s.guid).collect();
            for (id, table) in t.iter() {
                if !listed.contains(&f.node(id).guid) {
                    for (lid, &p) in table.iter().enumerate() {
                        theirs.set(id, Lid(lid as u16), p);
                    }
                }
            }
            assert_eq!(theirs, t, "ibroute read back the dump's tables");
            eprintln!("{name}: ibroute.txt holds {n} switch tables, all equal to the dump");
        }
        let Ok(theirs) = std::fs::read_to_string(format!("{dir}/opensm.fdbs")) else {
            continue;
        };
        let t0 = std::time::Instant::now();
        let mut ours = Vec::new();
        write(&f, &t, &mut ours).unwrap();
        let elapsed = t0.elapsed();
        let ours = String::from_utf8(ours).unwrap();
        let diff: Vec<(usize, &str, &str)> = ours
            .lines()
            .zip(theirs.lines())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(i, (a, b))| (i + 1, a, b))
            .collect();
        eprintln!(
            "{name} ({dir}): {} bytes ours, {} theirs, {} differing lines, written in {elapsed:?}; first: {:?}",
            ours.len(),
            theirs.len(),
            diff.len(),
            &diff[..diff.len().min(5)]
        );
        let back = parse(&theirs, "theirs").unwrap().to_tables(&f).unwrap();
        assert_eq!(back, t, "OpenSM's fdbs read back equals its lfts dump");
    }
}
