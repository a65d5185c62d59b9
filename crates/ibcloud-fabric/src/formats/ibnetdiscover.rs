//! The topology file `ibnetdiscover` prints (infiniband-diags), read and written.
//!
//! Each node is a block: `vendid=`, `devid=`, `sysimgguid=` and a GUID line
//! (`switchguid=0x…(port 0 GUID)`, `caguid=` or `rtguid=`), a header naming
//! the node by an id built from its GUID, then one line per cabled port
//! (the blanks are tabs in real files):
//!
//! ```text
//! switchguid=0x2c90200000001(2c90200000001)
//! Switch  36 "S-0002c90200000001"         # "sw-L1-0001" base port 0 lid 649 lmc 0
//! [1]     "H-0002c90300000010"[1](2c90300000011)          # "hca-00001 HCA-1" lid 1 4xQDR
//!
//! caguid=0x2c90300000010
//! Ca      1 "H-0002c90300000010"          # "hca-00001 HCA-1"
//! [1](2c90300000011)      "S-0002c90200000001"[1]         # lid 1 lmc 0 "sw-L1-0001" lid 649 4xQDR
//! ```
//!
//! The comments are data: descriptions, LIDs, LMCs and link rates live only
//! there. The writer reproduces ibnetdiscover's layout byte for byte (tabs,
//! field order, switches first, then CAs, then routers) so that tools which
//! parse ibnetdiscover output, ibsim among them, accept it; the date line is
//! left out so that the same fabric always gives the same bytes.

use super::text::assemble::{Assembler, PortDecl};
use super::text::{
    cable_port, err, guid_of_discover_id, numbered_lines, parse_u64, take_bracketed_num,
    take_parenthesized, take_quoted, take_word, unwritable_description, DiscoverId,
};
use crate::error::excerpt;
use crate::error::{FabricError, ParseError};
use crate::ids::{Guid, NodeId};
use crate::model::{Fabric, LinkRate, LinkSpeed, LinkWidth, Node, NodeKind, NodeSpec};
use std::io::{self, Write};

/// Parses ibnetdiscover output. `file` names the source in error messages.
///
/// Node GUIDs come from the GUID lines (or, failing those, from the
/// `S-`/`H-`/`R-` ids), port GUIDs from the parenthesised numbers, LIDs and
/// LMCs and rates from the comments. A link may be listed from one end only.
/// A rate that neither end states at all is taken as [`LinkRate::default`];
/// a rate that ibnetdiscover itself could not name (`4x???`) must be known
/// from the other end, or the file is refused rather than guessed at.
///
/// ```
/// use ibcloud_fabric::formats::ibnetdiscover;
/// let text = "caguid=0x10\nCa\t1 \"H-0000000000000010\"\t\t# \"host\"\n\
///             [1](11) \t\"S-0000000000000020\"[3]\t\t# lid 1 lmc 0 \"sw\" lid 2 4xEDR\n\n\
///             switchguid=0x20(20)\nSwitch\t8 \"S-0000000000000020\"\t\t# \"sw\" base port 0 lid 2 lmc 0\n";
/// let f = ibnetdiscover::parse(text, "example.topo")?;
/// assert_eq!((f.num_nodes(), f.num_links()), (2, 1));
/// # Ok::<(), ibcloud_fabric::FabricError>(())
/// ```
pub fn parse(text: &str, file: &str) -> Result<Fabric, FabricError> {
    Ok(read(text, file)?)
}

/// The rate one end of a link states: `4xQDR`, partly unknown (`4x???`), or nothing.
#[derive(Clone, Copy, Debug, Default)]
struct RateSeen<'t> {
    token: Option<&'t str>,
    width: Option<LinkWidth>,
    speed: Option<LinkSpeed>,
}

/// A `switchguid=`/`caguid=`/`rtguid=` line waiting for its header.
#[derive(Debug)]
struct GuidLine {
    kind: NodeKind,
    guid: Guid,
    port0: Option<Guid>,
    line: usize,
}

/// Settings that apply to the next node header only.
#[derive(Debug, Default)]
struct Pending {
    vendid: Option<u32>,
    devid: Option<u32>,
    sysimg: Option<Guid>,
    guid: Option<GuidLine>,
}

/// What a port line's comment says.
#[derive(Debug, Default)]
struct PortComment<'t> {
    own_lid: Option<u16>,
    own_lmc: Option<u8>,
    remote_lid: Option<u16>,
    rate: RateSeen<'t>,
}

struct Reader<'t> {
    file: &'t str,
    asm: Assembler<'t, RateSeen<'t>>,
    pending: Pending,
    /// Node whose port lines may follow.
    current: Option<u32>,
}

fn read<'t>(text: &'t str, file: &'t str) -> Result<Fabric, ParseError> {
    let mut r = Reader {
        file,
        asm: Assembler::new(file, text.len()),
        pending: Pending::default(),
        current: None,
    };
    for (no, raw) in numbered_lines(text) {
        let line = raw.trim();
        if line.is_empty() {
            r.current = None;
        } else if line.starts_with('#') {
            continue;
        } else if line.starts_with('[') {
            r.port_line(no, line)?;
        } else if let Some((key, value)) = setting(line) {
            r.current = None;
            r.setting(no, key, value)?;
        } else if line.starts_with("Chassis ") || line.starts_with("Hostname:") {
            // Grouping lines of `ibnetdiscover -g`; the nodes follow in full.
            r.current = None;
        } else {
            r.header(no, line)?;
        }
    }
    if let Some(g) = &r.pending.guid {
        return Err(err(
            file,
            g.line,
            "GUID line is not followed by its node header (is the file truncated?)",
        ));
    }
    r.asm.finish(resolve_rate)
}

/// `key=value` with a lower-case key, as ibnetdiscover prints its settings.
fn setting(line: &str) -> Option<(&str, &str)> {
    let eq = line.find('=')?;
    let key = &line[..eq];
    (!key.is_empty() && key.bytes().all(|b| b.is_ascii_lowercase())).then(|| (key, &line[eq + 1..]))
}

/// Skips the `[ext N]` external port numbers of `ibnetdiscover -g`.
fn skip_ext(s: &str) -> &str {
    let t = s.trim_start();
    match (t.starts_with("[ext"), t.find(']')) {
        (true, Some(end)) => &t[end + 1..],
        _ => s,
    }
}

impl<'t> Reader<'t> {
    fn err(&self, line: usize, problem: impl Into<String>) -> ParseError {
        err(self.file, line, problem)
    }

    fn number(&self, no: usize, value: &str, max: u64, what: &str) -> Result<u64, ParseError> {
        match parse_u64(value, false) {
            Some(v) if v <= max => Ok(v),
            Some(v) => Err(self.err(
                no,
                format!("{what} {v:#x} is out of range (at most {max:#x})"),
            )),
            None if value.is_empty() => Err(self.err(no, format!("missing {what}"))),
            None => Err(self.err(
                no,
                format!("bad {what} '{value}': expected a number such as 0x2c9"),
            )),
        }
    }

    /// `(2c90300000011)` if present: a port GUID in bare hex.
    fn paren_guid<'s>(&self, no: usize, s: &'s str) -> Result<(Option<Guid>, &'s str), ParseError> {
        if !s.trim_start().starts_with('(') {
            return Ok((None, s));
        }
        let (hex, rest) = take_parenthesized(s)
            .ok_or_else(|| self.err(no, "truncated port GUID: '(' without ')'"))?;
        let guid = parse_u64(hex, true)
            .ok_or_else(|| self.err(no, format!("bad port GUID '{hex}': expected hex digits")))?;
        Ok((Some(Guid(guid)), rest))
    }

    fn lid(&self, no: usize, v: &str) -> Result<u16, ParseError> {
        Ok(self.number(no, v, 0xffff, "LID")? as u16)
    }

    fn lmc(&self, no: usize, v: &str) -> Result<u8, ParseError> {
        Ok(self.number(no, v, 0xff, "LMC")? as u8)
    }

    fn setting(&mut self, no: usize, key: &str, value: &str) -> Result<(), ParseError> {
        // `ibnetdiscover -g` appends "# Chassis N" remarks to some settings.
        let value = value.split('#').next().unwrap_or("").trim();
        match key {
            "vendid" => self.pending.vendid = Some(self.number(no, value, 0xff_ffff, "vendor id")? as u32),
            "devid" => self.pending.devid = Some(self.number(no, value, 0xffff, "device id")? as u32),
            "sysimgguid" => self.pending.sysimg = Some(Guid(self.number(no, value, u64::MAX, "system image GUID")?)),
            "switchguid" | "caguid" | "rtguid" => {
                if let Some(prev) = &self.pending.guid {
                    return Err(self.err(
                        no,
                        format!("second GUID line before a node header (the one on line {} has no header)", prev.line),
                    ));
                }
                let kind = match key {
                    "switchguid" => NodeKind::Switch,
                    "caguid" => NodeKind::Ca,
                    _ => NodeKind::Router,
                };
                let (main, port0) = match value.find('(') {
                    Some(i) => {
                        let (g, rest) = self.paren_guid(no, &value[i..])?;
                        if !rest.trim().is_empty() {
                            return Err(self.err(no, format!("unexpected text '{}' after the port GUID", rest.trim())));
                        }
                        (&value[..i], g)
                    }
                    None => (value, None),
                };
                let guid = Guid(self.number(no, main.trim(), u64::MAX, "GUID")?);
                self.pending.guid = Some(GuidLine { kind, guid, port0, line: no });
            }
            _ => {
                return Err(self.err(
                    no,
                    format!("unknown setting '{key}=' (expected vendid, devid, sysimgguid, switchguid, caguid or rtguid)"),
                ))
            }
        }
        Ok(())
    }

    fn header(&mut self, no: usize, line: &'t str) -> Result<(), ParseError> {
        let (word, rest) = take_word(line);
        let (count, after) = take_word(rest);
        let kind: NodeKind = match word.parse() {
            Ok(k) => k,
            Err(_) => {
                let looks_like_header = !count.is_empty()
                    && count.bytes().all(|b| b.is_ascii_digit())
                    && after.trim_start().starts_with('"');
                return Err(self.err(
                    no,
                    if looks_like_header {
                        format!("unknown node type '{word}' (expected Switch, Ca or Rt)")
                    } else {
                        format!("unrecognised line {}: expected a node header, a port line or a setting such as caguid=", excerpt(line))
                    },
                ));
            }
        };
        if count.is_empty() {
            return Err(self.err(
                no,
                format!(
                    "truncated node header: expected the port count and the quoted node name after '{word}'"
                ),
            ));
        }
        let num_ports: u32 = count
            .parse()
            .map_err(|_| self.err(no, format!("bad port count '{count}'")))?;
        let after = after.trim_start();
        if !after.starts_with('"') {
            return Err(self.err(
                no,
                "truncated node header: expected the quoted node name after the port count",
            ));
        }
        let (id, rest) = take_quoted(after).ok_or_else(|| {
            self.err(
                no,
                "truncated node header: the node name has no closing quote",
            )
        })?;
        if id.is_empty() {
            return Err(self.err(no, "empty node name"));
        }
        let rest = rest.trim();
        let (desc, tail) = match rest.strip_prefix('#').map(str::trim_start) {
            None if rest.is_empty() => (id, ""),
            None => {
                return Err(self.err(no, format!("unexpected text '{rest}' after the node name")))
            }
            Some("") => (id, ""),
            Some(c) if c.starts_with('"') => take_quoted(c).ok_or_else(|| {
                self.err(
                    no,
                    "truncated node header: the description has no closing quote",
                )
            })?,
            Some(_) => return Err(self.err(no, "expected the quoted node description after '#'")),
        };
        let (mut esp0, mut lid, mut lmc) = (false, None, None);
        if kind == NodeKind::Switch {
            let mut t = tail;
            loop {
                let (w, r) = take_word(t);
                t = r;
                match w {
                    "" => break,
                    "enhanced" | "base" => {
                        let (p, r) = take_word(t);
                        let (z, r) = take_word(r);
                        if p != "port" || z != "0" {
                            return Err(self.err(no, format!("expected '{w} port 0'")));
                        }
                        esp0 = w == "enhanced";
                        t = r;
                    }
                    "lid" | "lmc" => {
                        let (v, r) = take_word(t);
                        if w == "lid" {
                            lid = Some(self.lid(no, v)?);
                        } else {
                            lmc = Some(self.lmc(no, v)?);
                        }
                        t = r;
                    }
                    _ => {} // remarks of other ibnetdiscover builds
                }
            }
        }
        let guid_line = self.pending.guid.take();
        if let Some(g) = &guid_line {
            if g.kind != kind {
                return Err(self.err(
                    no,
                    format!(
                        "the GUID line on line {} is for a {} but this header declares a {}",
                        g.line, g.kind, kind
                    ),
                ));
            }
        }
        let from_id = guid_of_discover_id(id);
        let guid = match (guid_line.as_ref().map(|g| (g.guid, g.line)), from_id) {
            (Some((a, l)), Some(b)) if a != b => {
                return Err(self.err(no, format!("node id '{id}' does not match the GUID {a} given on line {l}")))
            }
            (Some((a, _)), _) => a,
            (None, Some(b)) => b,
            (None, None) => {
                return Err(self.err(
                    no,
                    format!("no GUID for node '{id}': expected a GUID line before the header or an id such as S-0002c90200000001"),
                ))
            }
        };
        let mut spec = NodeSpec::new(kind, guid, num_ports, desc);
        spec.system_image_guid = self.pending.sysimg.take().unwrap_or(Guid(0));
        spec.vendor_id = self.pending.vendid.take().unwrap_or(0);
        spec.device_id = self.pending.devid.take().unwrap_or(0);
        spec.enhanced_port0 = esp0;
        let node = self.asm.add_node(id, no, spec)?;
        if let Some(GuidLine {
            port0: Some(p0),
            line,
            ..
        }) = guid_line
        {
            self.asm.claim_guid(node, 0, p0, line)?;
        }
        if lid.is_some() || lmc.is_some() {
            self.asm
                .claim_lid(node, 0, lid.unwrap_or(0), Some(lmc.unwrap_or(0)), no)?;
        }
        self.current = Some(node);
        Ok(())
    }

    fn port_line(&mut self, no: usize, line: &'t str) -> Result<(), ParseError> {
        let Some(node) = self.current else {
            return Err(self.err(
                no,
                "port line outside a node: port lines must directly follow their node's header",
            ));
        };
        let (kind, _) = self.asm.node_shape(node);
        let (p, rest) = take_bracketed_num(line).ok_or_else(|| {
            self.err(
                no,
                "bad port number: expected [N] at the start of the port line",
            )
        })?;
        let port = cable_port(self.file, no, p, "port")?;
        let (own_guid, rest) = self.paren_guid(no, skip_ext(rest))?;
        let rest = rest.trim_start();
        if !rest.starts_with('"') {
            return Err(self.err(
                no,
                "truncated port line: expected the quoted remote node name after the port number",
            ));
        }
        let (remote, rest) = take_quoted(rest).ok_or_else(|| {
            self.err(
                no,
                "truncated port line: the remote node name has no closing quote",
            )
        })?;
        let (rp, rest) = take_bracketed_num(rest).ok_or_else(|| {
            self.err(
                no,
                "truncated port line: expected the remote port number as [N] after the remote node name",
            )
        })?;
        let remote_port = cable_port(self.file, no, rp, "remote port")?;
        let (remote_guid, rest) = self.paren_guid(no, skip_ext(rest))?;
        let rest = rest.trim();
        let comment = match rest.strip_prefix('#') {
            Some(c) => self.port_comment(no, c, kind)?,
            None if rest.is_empty() => PortComment::default(),
            None => {
                return Err(self.err(
                    no,
                    format!("unexpected text '{rest}' after the remote port"),
                ))
            }
        };
        if kind == NodeKind::Switch && own_guid.is_some() {
            return Err(self.err(
                no,
                "switch port lines carry no port GUID; only CA and router ports have one",
            ));
        }
        self.asm.add_port(PortDecl {
            node,
            port,
            line: no,
            remote,
            remote_port,
            remote_guid,
            remote_lid: comment.remote_lid,
            rate: comment.rate,
        })?;
        if let Some(g) = own_guid {
            self.asm.claim_guid(node, port, g, no)?;
        }
        if let Some(l) = comment.own_lid {
            self.asm
                .claim_lid(node, port, l, Some(comment.own_lmc.unwrap_or(0)), no)?;
        }
        Ok(())
    }

    /// Switch ports: `"far desc" lid <far LID> <rate>`; CA and router ports:
    /// `lid <own LID> lmc <own LMC> "far desc" lid <far LID> <rate>`.
    /// Words after the rate (`s=4 w=2 v=4` of `-f`, `(scp)`) are remarks.
    fn port_comment(
        &self,
        no: usize,
        c: &'t str,
        kind: NodeKind,
    ) -> Result<PortComment<'t>, ParseError> {
        let mut out = PortComment::default();
        let mut t = c;
        if kind != NodeKind::Switch {
            let (w, r) = take_word(t);
            if w == "lid" {
                let (v, r) = take_word(r);
                out.own_lid = Some(self.lid(no, v)?);
                t = r;
                let (w, r) = take_word(t);
                if w == "lmc" {
                    let (v, r) = take_word(r);
                    out.own_lmc = Some(self.lmc(no, v)?);
                    t = r;
                }
            }
        }
        let trimmed = t.trim_start();
        if trimmed.starts_with('"') {
            let (_, r) = take_quoted(trimmed).ok_or_else(|| {
                self.err(
                    no,
                    "truncated comment: the remote description has no closing quote",
                )
            })?;
            t = r;
        }
        let (w, r) = take_word(t);
        let rate = if w == "lid" {
            let (v, r) = take_word(r);
            out.remote_lid = Some(self.lid(no, v)?);
            take_word(r).0
        } else {
            w
        };
        if !rate.is_empty() {
            out.rate = self.rate(no, rate)?;
        }
        Ok(out)
    }

    /// `4xQDR`; `??` / `???` are ibnetdiscover's "unknown" and leave that part open.
    fn rate(&self, no: usize, token: &'t str) -> Result<RateSeen<'t>, ParseError> {
        let (width, speed) = match token.strip_prefix("??") {
            Some(rest) => (None, rest),
            None => {
                let x = token.find(['x', 'X']).ok_or_else(|| {
                    self.err(
                        no,
                        format!("bad link rate '{token}': expected width and speed such as 4xQDR"),
                    )
                })?;
                let w = token[..=x]
                    .parse::<LinkWidth>()
                    .map_err(|m| self.err(no, m))?;
                (Some(w), &token[x + 1..])
            }
        };
        let speed = if speed.bytes().all(|b| b == b'?') {
            None
        } else {
            Some(
                speed
                    .parse::<LinkSpeed>()
                    .map_err(|m| self.err(no, format!("{m} in '{token}'")))?,
            )
        };
        Ok(RateSeen {
            token: Some(token),
            width,
            speed,
        })
    }
}

/// The rate of a link from what its ends state; see [`parse`].
fn resolve_rate(
    a: &PortDecl<RateSeen>,
    b: Option<&PortDecl<RateSeen>>,
    _far: u32,
) -> Result<LinkRate, String> {
    let (mut width, mut speed) = (a.rate.width, a.rate.speed);
    if let Some(b) = b {
        let differ = matches!((width, b.rate.width), (Some(x), Some(y)) if x != y)
            || matches!((speed, b.rate.speed), (Some(x), Some(y)) if x != y);
        if differ {
            let (x, y) = if a.line <= b.line { (a, b) } else { (b, a) };
            return Err(format!(
                "link described differently on its two ends: {} on line {} but {} on line {}",
                x.rate.token.unwrap_or("?"),
                x.line,
                y.rate.token.unwrap_or("?"),
                y.line
            ));
        }
        width = width.or(b.rate.width);
        speed = speed.or(b.rate.speed);
    }
    match (width, speed) {
        (Some(w), Some(s)) => Ok(LinkRate::new(w, s)),
        _ if a.rate.token.is_none() && !matches!(b, Some(b) if b.rate.token.is_some()) => {
            Ok(LinkRate::default())
        }
        _ => {
            let stated = std::iter::once(a)
                .chain(b)
                .find(|d| d.rate.token.is_some())
                .unwrap_or(a);
            Err(format!(
                "link rate '{}' on line {} does not name the {}, and the other end does not either",
                stated.rate.token.unwrap_or(""),
                stated.line,
                if width.is_none() { "width" } else { "speed" }
            ))
        }
    }
}

/// Writes the fabric as ibnetdiscover prints it: switches, then CAs, then
/// routers, each in fabric order; only cabled ports are listed.
///
/// Fails with [`io::ErrorKind::InvalidInput`] for a node description that
/// the format cannot hold (a `"` or a line break).
pub fn write(fabric: &Fabric, out: &mut impl Write) -> io::Result<()> {
    for (_, n) in fabric.iter_nodes() {
        if let Some(why) = unwritable_description(&n.description) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "description of node {} {why}, which ibnetdiscover files cannot hold",
                    n.guid
                ),
            ));
        }
    }
    let mut w = io::BufWriter::with_capacity(1 << 16, out);
    let (from_node, from_port) = fabric
        .cas()
        .next()
        .or_else(|| fabric.iter_nodes().next().map(|(id, _)| id))
        .map(|id| {
            let n = fabric.node(id);
            (
                n.guid.0,
                fabric.ports(id)[if n.is_switch() { 0 } else { 1 }].guid.0,
            )
        })
        .unwrap_or((0, 0));
    write!(w, "#\n# Topology file: generated by ibcloud\n#\n# Initiated from node {from_node:016x} port {from_port:016x}\n")?;
    for kind in [NodeKind::Switch, NodeKind::Ca, NodeKind::Router] {
        for (id, n) in fabric.iter_nodes().filter(|(_, n)| n.kind == kind) {
            write_node(&mut w, fabric, id, n)?;
        }
    }
    w.flush()
}

fn write_node(w: &mut impl Write, fabric: &Fabric, id: NodeId, n: &Node) -> io::Result<()> {
    write!(
        w,
        "\nvendid=0x{:x}\ndevid=0x{:x}\n",
        n.vendor_id, n.device_id
    )?;
    if n.system_image_guid.0 != 0 {
        writeln!(w, "sysimgguid=0x{:x}", n.system_image_guid.0)?;
    }
    let ports = fabric.ports(id);
    let me = DiscoverId(n.kind, n.guid);
    match n.kind {
        NodeKind::Switch => {
            writeln!(w, "switchguid=0x{:x}({:x})", n.guid.0, ports[0].guid.0)?;
            writeln!(
                w,
                "Switch\t{} \"{me}\"\t\t# \"{}\" {} port 0 lid {} lmc {}",
                n.num_ports,
                n.description,
                if n.enhanced_port0 { "enhanced" } else { "base" },
                ports[0].lid.0,
                ports[0].lmc
            )?;
        }
        NodeKind::Ca | NodeKind::Router => {
            let (key, word) = if n.kind == NodeKind::Ca {
                ("ca", "Ca")
            } else {
                ("rt", "Rt")
            };
            writeln!(w, "{key}guid=0x{:x}", n.guid.0)?;
            writeln!(
                w,
                "{word}\t{} \"{me}\"\t\t# \"{}\"",
                n.num_ports, n.description
            )?;
        }
    }
    for (p, port) in ports.iter().enumerate().skip(1) {
        let Some(r) = port.remote else { continue };
        let far = fabric.node(r.node);
        let far_ports = fabric.ports(r.node);
        let far_port = &far_ports[r.port as usize];
        let far_lid = if far.is_switch() {
            far_ports[0].lid.0
        } else {
            far_port.lid.0
        };
        let far_id = DiscoverId(far.kind, far.guid);
        if n.is_switch() {
            write!(w, "[{p}]\t\"{far_id}\"[{}]", r.port)?;
            if !far.is_switch() {
                write!(w, "({:x}) ", far_port.guid.0)?;
            }
            writeln!(
                w,
                "\t\t# \"{}\" lid {far_lid} {}",
                far.description, port.rate
            )?;
        } else {
            write!(w, "[{p}]({:x}) \t\"{far_id}\"[{}]", port.guid.0, r.port)?;
            if !far.is_switch() {
                write!(w, " ({:x}) ", far_port.guid.0)?;
            }
            writeln!(
                w,
                "\t\t# lid {} lmc {} \"{}\" lid {far_lid} {}",
                port.lid.0, port.lmc, far.description, port.rate
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::text::testing::{assert_error, assert_same_fabric, zoo};
    use crate::generate::{preset, FatTreeParams};
    use crate::{Lid, PortRef};

    const FIXTURE: &str = include_str!("../../../../fixtures/interop/ibnetdiscover-example.txt");

    fn render(f: &Fabric) -> String {
        let mut out = Vec::new();
        write(f, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn round_trip(f: &Fabric) {
        let text = render(f);
        let back = parse(&text, "rt.topo").unwrap();
        assert_same_fabric(f, &back);
        assert_eq!(render(&back), text, "re-rendering changes the bytes");
    }

    #[test]
    fn generated_fabrics_round_trip() {
        round_trip(&preset("ft648").unwrap().build().unwrap());
        round_trip(&preset("4-ary-3-full").unwrap().build().unwrap());
        let pgft = FatTreeParams::pgft(&[4, 4], &[1, 2], &[1, 3])
            .with_rate(LinkRate::new(LinkWidth::X12, LinkSpeed::Hdr))
            .build()
            .unwrap();
        assert_eq!(pgft.num_links(), 16 + 4 * 2 * 3);
        round_trip(&pgft);
    }

    #[test]
    fn every_field_round_trips() {
        let f = zoo(false);
        round_trip(&f);
        let text = render(&f);
        assert!(
            text.contains("Rt\t2 \"R-0002c90400000100\"\t\t# \"gateway\"\n"),
            "{text}"
        );
        assert!(
            text.contains("# \"spine #1 w=2 lid 7\" enhanced port 0 lid 1 lmc 0\n"),
            "{text}"
        );
        assert!(text.contains(
            "[1](2c90300000201) \t\"S-0002c90200002000\"[1]\t\t# lid 8 lmc 2 \"leaf\" lid 2 4xFDR10\n"
        ));
        assert!(text.contains("[1](2c90300000301) \t\"H-0002c90300000400\"[1] (2c90300000401) \t\t# lid 12 lmc 0 \"h4\" lid 13 1xSDR\n"));
    }

    #[test]
    fn output_is_deterministic_and_in_ibnetdiscover_layout() {
        let f = preset("4-ary-2-full").unwrap().build().unwrap();
        let (a, b) = (render(&f), render(&f));
        assert_eq!(a, b);
        let lines: Vec<&str> = a.lines().collect();
        assert_eq!(
            lines[3],
            "# Initiated from node 0002c90300000100 port 0002c90300000101"
        );
        assert_eq!(
            &lines[5..10],
            [
                "vendid=0x2c9",
                "devid=0xc738",
                "sysimgguid=0x2c90201000001",
                "switchguid=0x2c90201000001(2c90201000001)",
                "Switch\t8 \"S-0002c90201000001\"\t\t# \"sw-L1-0001\" base port 0 lid 33 lmc 0",
            ]
        );
        assert_eq!(
            lines[10],
            "[1]\t\"H-0002c90300000100\"[1](2c90300000101) \t\t# \"hca-00001 HCA-1\" lid 1 4xQDR"
        );
        let ca = lines.iter().position(|l| l.starts_with("Ca\t")).unwrap();
        assert_eq!(lines[ca - 1], "caguid=0x2c90300000100");
        assert_eq!(
            lines[ca + 1],
            "[1](2c90300000101) \t\"S-0002c90201000001\"[1]\t\t# lid 1 lmc 0 \"sw-L1-0001\" lid 33 4xQDR"
        );
    }

    #[test]
    fn the_fixture_from_real_ibnetdiscover_parses() {
        let f = parse(FIXTURE, "ibnetdiscover-example.txt").unwrap();
        assert_eq!(
            (
                f.count(NodeKind::Switch),
                f.count(NodeKind::Ca),
                f.num_links()
            ),
            (2, 4, 6)
        );
        let hca4 = f.node_by_guid(Guid(0x100009)).unwrap();
        assert_eq!(f.node(hca4).description, "Hca4");
        assert_eq!(f.ports(hca4)[1].guid, Guid(0x10000a));
        let s1 = f.node_by_guid(Guid(0x200000)).unwrap();
        assert_eq!(
            f.remote(PortRef::new(s1, 5))
                .map(|r| (f.node(r.node).guid, r.port)),
            Some((Guid(0x200001), 5))
        );
        assert!(f
            .links()
            .all(|l| f.port(l.a).unwrap().rate == LinkRate::new(LinkWidth::X4, LinkSpeed::Sdr)));
        assert_eq!(f.node_lid(s1), Lid(0));
        round_trip(&f);
    }

    #[test]
    fn tolerates_what_real_files_vary_in() {
        let text = "switchguid=0x20(20)\t\t# chassis remark\n\
                    Switch\t8 \"S-0000000000000020\"\t\t# \"sw\" enhanced port 0 lid 2 lmc 0 extra\n\
                    [1][ext 3]\t\"H-0000000000000010\"[1](11) \t\t# \"host\" lid 1 4xFDR10 s=4 w=2 v=4\n\
                    [2]\t\"H-0000000000000010\"[2](12) \t\t# \"host\" lid 5 12x???\n\
                    [3]\t\"H-0000000000000030\"[1](31) \t\t# \"h3\" lid 9 ??DDR\n\
                    [4]\t\"H-0000000000000040\"[1]\n\
                    \n\
                    Hca\t2 \"H-0000000000000010\"\t\t# \"host\"\n\
                    [1](11) \t\"S-0000000000000020\"[1]\t\t# lid 1 lmc 0 \"sw\" lid 2 4xFDR10\n\
                    [2](12) \t\"S-0000000000000020\"[2]\t\t# lid 5 lmc 0 \"sw\" lid 2 12xEDR\n\
                    \n\
                    Ca\t1 \"H-0000000000000030\"\t\t# \"h3\"\n\
                    [1](31) \t\"S-0000000000000020\"[3]\t\t# lid 9 lmc 0 \"sw\" lid 2 4x\n\
                    \n\
                    Ca\t1 \"H-0000000000000040\"\n";
        let f = parse(text, "t").unwrap();
        let sw = f.node_by_guid(Guid(0x20)).unwrap();
        let rate = |p| f.port(PortRef::new(sw, p)).unwrap().rate;
        assert!(f.node(sw).enhanced_port0);
        assert_eq!(rate(1), LinkRate::new(LinkWidth::X4, LinkSpeed::Fdr10));
        assert_eq!(
            rate(2),
            LinkRate::new(LinkWidth::X12, LinkSpeed::Edr),
            "unknown speed taken from the far end"
        );
        assert_eq!(
            rate(3),
            LinkRate::new(LinkWidth::X4, LinkSpeed::Ddr),
            "halves from both ends"
        );
        assert_eq!(rate(4), LinkRate::default(), "no rate on either end");
        let h3 = f.node_by_guid(Guid(0x40)).unwrap();
        assert_eq!(
            f.node(h3).description,
            "H-0000000000000040",
            "no description: the id"
        );
        assert_eq!(f.ports(f.node_by_guid(Guid(0x10)).unwrap())[2].lid, Lid(5));
    }

    #[test]
    fn unnamed_rates_are_refused_not_guessed() {
        let text = "switchguid=0x20\nSwitch\t8 \"S-0000000000000020\"\t\t# \"sw\"\n\
                    [1]\t\"H-0000000000000010\"[1](11) \t\t# \"h\" lid 1 4x???\n\n\
                    caguid=0x10\nCa\t1 \"H-0000000000000010\"\t\t# \"h\"\n";
        assert_error(parse(text, "t"), "t", 3, "does not name the speed");
        let xdr = text.replace("4x???", "4xXDR");
        assert_error(parse(&xdr, "t"), "t", 3, "unknown link speed 'XDR'");
        let nonsense = text.replace("4x???", "fast");
        assert_error(parse(&nonsense, "t"), "t", 3, "bad link rate 'fast'");
    }

    /// Two nodes; line 3 is the switch's port 1, line 7 the CA's port 1.
    const SMALL: &str = "switchguid=0x20(20)\n\
        Switch\t8 \"S-0000000000000020\"\t\t# \"sw\" base port 0 lid 2 lmc 0\n\
        [1]\t\"H-0000000000000010\"[1](11) \t\t# \"host\" lid 1 4xQDR\n\
        \n\
        caguid=0x10\n\
        Ca\t1 \"H-0000000000000010\"\t\t# \"host\"\n\
        [1](11) \t\"S-0000000000000020\"[1]\t\t# lid 1 lmc 0 \"sw\" lid 2 4xQDR\n";

    fn edit(line: usize, new: &str) -> String {
        let mut lines: Vec<&str> = SMALL.lines().collect();
        lines[line - 1] = new;
        lines.join("\n") + "\n"
    }

    #[test]
    fn small_is_valid() {
        let f = parse(SMALL, "t").unwrap();
        assert_eq!(f.num_links(), 1);
        assert_eq!(f.max_lid(), 2);
    }

    #[test]
    fn truncated_lines_are_refused() {
        assert_error(
            parse(&edit(2, "Switch\t8 \"S-00000000"), "t"),
            "t",
            2,
            "no closing quote",
        );
        assert_error(
            parse(&edit(2, "Switch"), "t"),
            "t",
            2,
            "truncated node header",
        );
        assert_error(
            parse(&edit(3, "[1]\t\"H-0000000000000010\""), "t"),
            "t",
            3,
            "expected the remote port number",
        );
        assert_error(
            parse(&edit(3, "[1]\t\"H-00000"), "t"),
            "t",
            3,
            "no closing quote",
        );
        assert_error(parse(&edit(3, "[1"), "t"), "t", 3, "bad port number");
        assert_error(parse(&edit(7, "[1](11"), "t"), "t", 7, "'(' without ')'");
        assert_error(
            parse(
                &edit(3, "[1]\t\"H-0000000000000010\"[1](11) \t\t# \"host"),
                "t",
            ),
            "t",
            3,
            "no closing quote",
        );
        assert_error(
            parse(
                &edit(3, "[1]\t\"H-0000000000000010\"[1](11) \t\t# \"host\" lid"),
                "t",
            ),
            "t",
            3,
            "missing LID",
        );
        assert_error(parse(&edit(5, "caguid="), "t"), "t", 5, "missing GUID");
        let cut = SMALL.lines().take(5).collect::<Vec<_>>().join("\n");
        assert_error(parse(&cut, "t"), "t", 5, "not followed by its node header");
    }

    #[test]
    fn unknown_node_types_and_lines_are_refused() {
        assert_error(
            parse(&edit(6, "Gateway\t1 \"H-0000000000000010\""), "t"),
            "t",
            6,
            "unknown node type 'Gateway'",
        );
        assert_error(
            parse(&edit(4, "hello world"), "t"),
            "t",
            4,
            "unrecognised line",
        );
        assert_error(
            parse(&edit(5, "nodeguid=0x10"), "t"),
            "t",
            5,
            "unknown setting 'nodeguid='",
        );
        assert_error(
            parse(&edit(2, "Ca\t8 \"S-0000000000000020\""), "t"),
            "t",
            2,
            "is for a switch but this header declares a ca",
        );
    }

    #[test]
    fn port_numbers_out_of_range_are_refused() {
        assert_error(
            parse(&edit(3, "[9]\t\"H-0000000000000010\"[1]"), "t"),
            "t",
            3,
            "port 9 does not exist on 'S-0000000000000020', which has 8 ports",
        );
        assert_error(
            parse(&edit(3, "[0]\t\"H-0000000000000010\"[1]"), "t"),
            "t",
            3,
            "port 0 cannot be cabled",
        );
        assert_error(
            parse(&edit(3, "[300]\t\"H-0000000000000010\"[1]"), "t"),
            "t",
            3,
            "port 300 is out of range",
        );
        assert_error(
            parse(&edit(7, "[1](11) \t\"S-0000000000000020\"[255]"), "t"),
            "t",
            7,
            "remote port 255 is out of range",
        );
        assert_error(
            parse(&edit(3, "[1]\t\"H-0000000000000010\"[2]"), "t"),
            "t",
            3,
            "port 2 does not exist on 'H-0000000000000010'",
        );
        assert_error(
            parse(&edit(2, "Switch\t255 \"S-0000000000000020\""), "t"),
            "t",
            2,
            "a node has 1 to 254",
        );
        assert_error(
            parse(&edit(2, "Switch\t0 \"S-0000000000000020\""), "t"),
            "t",
            2,
            "a node has 1 to 254",
        );
    }

    #[test]
    fn links_described_differently_are_refused() {
        let text = SMALL.to_owned()
            + "\ncaguid=0x30\nCa\t1 \"H-0000000000000030\"\t\t# \"other\"\n[1](31) \t\"S-0000000000000020\"[2]\n";
        assert!(parse(&text, "t").is_ok());
        let wrong_far = text.replace(
            "[1](11) \t\"S-0000000000000020\"[1]",
            "[1](11) \t\"S-0000000000000020\"[2]",
        );
        assert_error(parse(&wrong_far, "t"), "t", 7, "link described differently on its two ends: line 3 says 'S-0000000000000020'[1] -> 'H-0000000000000010'[1], line 7 says");
        let rates = edit(
            7,
            "[1](11) \t\"S-0000000000000020\"[1]\t\t# lid 1 lmc 0 \"sw\" lid 2 4xSDR",
        );
        assert_error(
            parse(&rates, "t"),
            "t",
            7,
            "link described differently on its two ends: 4xQDR on line 3 but 4xSDR on line 7",
        );
        let guids = edit(7, "[1](99) \t\"S-0000000000000020\"[1]");
        assert_error(parse(&guids, "t"), "t", 7, "port GUID of 'H-0000000000000010' port 1 is given as 0x0000000000000099 here but as 0x0000000000000011 on line 3");
        let lids = edit(
            7,
            "[1](11) \t\"S-0000000000000020\"[1]\t\t# lid 6 lmc 0 \"sw\" lid 2 4xQDR",
        );
        assert_error(
            parse(&lids, "t"),
            "t",
            7,
            "LID of 'H-0000000000000010' port 1 is given as 6 here but as 1 on line 3",
        );
        let one_sided = edit(7, "");
        assert_eq!(
            parse(&one_sided, "t").unwrap().num_links(),
            1,
            "a link listed from one end is accepted"
        );
    }

    #[test]
    fn unknown_nodes_are_refused() {
        assert_error(
            parse(&edit(7, "[1](11) \t\"S-00000000000000ff\"[1]"), "t"),
            "t",
            7,
            "unknown node 'S-00000000000000ff'",
        );
        assert_error(parse(&edit(6, ""), "t"), "t", 7, "port line outside a node");
    }

    #[test]
    fn duplicates_are_refused() {
        let twice = SMALL.to_owned() + "\ncaguid=0x10\nCa\t1 \"dup\"\t\t# \"again\"\n";
        assert_error(
            parse(&twice, "t"),
            "t",
            10,
            "duplicate node GUID 0x0000000000000010: 'H-0000000000000010' has it too (line 6)",
        );
        let name =
            SMALL.to_owned() + "\ncaguid=0x30\nCa\t1 \"dup\"\n\ncaguid=0x40\nCa\t1 \"dup\"\n";
        assert_error(
            parse(&name, "t"),
            "t",
            13,
            "duplicate node name 'dup' (first declared on line 10)",
        );
        let port = SMALL.to_owned() + "[1](11) \t\"S-0000000000000020\"[1]\n";
        assert_error(
            parse(&port, "t"),
            "t",
            8,
            "port 1 of 'H-0000000000000010' is declared twice (first on line 7)",
        );
        let port_guid = SMALL.to_owned()
            + "\ncaguid=0x30\nCa\t1 \"H-0000000000000030\"\t\t# \"x\"\n[1](11) \t\"S-0000000000000020\"[2]\n";
        assert_error(
            parse(&port_guid, "t"),
            "t",
            11,
            "duplicate port GUID 0x0000000000000011",
        );
    }

    #[test]
    fn lid_collisions_are_refused() {
        let text = edit(
            7,
            "[1](11) \t\"S-0000000000000020\"[1]\t\t# lid 2 lmc 0 \"sw\" lid 2 4xQDR",
        );
        let text = text.replace("\"host\" lid 1", "\"host\" lid 2");
        assert_error(parse(&text, "t"), "t", 7, "LID 2 is claimed by 'S-0000000000000020' port 0 (line 2) and by 'H-0000000000000010' port 1 here");
        let lmc = text
            .replace("lid 2 lmc 0 \"sw\"", "lid 4 lmc 1 \"sw\"")
            .replace("\"host\" lid 2", "\"host\" lid 4");
        assert!(parse(&lmc, "t").is_ok());
        let overlap = lmc
            .replace("base port 0 lid 2", "base port 0 lid 5")
            .replace("\"sw\" lid 2", "\"sw\" lid 5");
        assert_error(parse(&overlap, "t"), "t", 7, "LID 5 is claimed by");
        let misaligned = lmc
            .replace("lid 4 lmc 1", "lid 3 lmc 1")
            .replace("\"host\" lid 4", "\"host\" lid 3");
        assert_error(parse(&misaligned, "t"), "t", 7, "not aligned to LMC 1");
        let multicast = edit(
            2,
            "Switch\t8 \"S-0000000000000020\"\t\t# \"sw\" base port 0 lid 49152 lmc 0",
        );
        let multicast = multicast.replace("\"sw\" lid 2", "\"sw\" lid 49152");
        assert_error(parse(&multicast, "t"), "t", 2, "not a valid unicast LID");
        assert_error(
            parse(
                &edit(2, "Switch\t8 \"S-0000000000000020\"\t\t# \"sw\" lid 70000"),
                "t",
            ),
            "t",
            2,
            "LID 0x11170 is out of range",
        );
        let lmc = edit(
            7,
            "[1](11) \t\"S-0000000000000020\"[1]\t\t# lid 1 lmc 200 \"sw\" lid 2 4xQDR",
        );
        assert_error(parse(&lmc, "t"), "t", 7, "LMC 200 is out of range 0..=7");
        let top = edit(
            2,
            "Switch\t8 \"S-0000000000000020\"\t\t# \"sw\" lid 65535 lmc 1",
        )
        .replace("\"sw\" lid 2", "\"sw\" lid 65535");
        assert_error(
            parse(&top, "t"),
            "t",
            2,
            "LID 65535 with LMC 1 runs past 65535",
        );
    }

    #[test]
    fn bad_hex_numbers_are_refused() {
        assert_error(
            parse(&edit(5, "caguid=0xZZ"), "t"),
            "t",
            5,
            "bad GUID '0xZZ'",
        );
        assert_error(
            parse(&edit(1, "switchguid=0x20(2g)"), "t"),
            "t",
            1,
            "bad port GUID '2g'",
        );
        assert_error(
            parse(&edit(7, "[1](1x1) \t\"S-0000000000000020\"[1]"), "t"),
            "t",
            7,
            "bad port GUID '1x1'",
        );
        assert_error(
            parse(&edit(5, "vendid=0x2c9q"), "t"),
            "t",
            5,
            "bad vendor id '0x2c9q'",
        );
        assert_error(
            parse(&edit(5, "sysimgguid=0x1_0"), "t"),
            "t",
            5,
            "bad system image GUID",
        );
        assert_error(
            parse(&edit(1, "switchguid=0x21(20)"), "t"),
            "t",
            2,
            "does not match the GUID 0x0000000000000021",
        );
    }

    #[test]
    fn refuses_descriptions_it_cannot_write() {
        let mut b = crate::FabricBuilder::new();
        b.add_node(NodeSpec::new(NodeKind::Ca, Guid(1), 1, "say \"hi\""))
            .unwrap();
        let err = write(&b.build(), &mut Vec::new()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn ft11664_round_trips() {
        let f = preset("ft11664").unwrap().build().unwrap();
        let text = render(&f);
        let back = parse(&text, "ft11664.topo").unwrap();
        assert_eq!(back.topology_difference(&f), None);
        assert_eq!(back.num_links(), f.num_links());
    }

    /// `cargo test --release -p ibcloud-fabric --lib parse_speed -- --ignored --nocapture`
    #[test]
    #[ignore = "timing; run in release mode"]
    fn parse_speed_ft11664() {
        let f = preset("ft11664").unwrap().build().unwrap();
        let text = render(&f);
        let start = std::time::Instant::now();
        let runs = 10;
        for _ in 0..runs {
            std::hint::black_box(parse(&text, "ft11664.topo").unwrap());
        }
        let per = start.elapsed() / runs;
        println!(
            "ibnetdiscover parse of ft11664 ({} bytes, {} lines): {per:?} per parse",
            text.len(),
            text.lines().count()
        );
    }
}
