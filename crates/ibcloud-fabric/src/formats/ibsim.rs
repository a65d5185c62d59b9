//! ibsim's net file, read as ibsim reads it and written so ibsim presents the
//! same fabric (the blanks below are tabs in written files):
//!
//! ```text
//! caguid=0x2c90300000010
//! Hca     1 "H-0002c90300000010"          # "hca-00001 HCA-1"
//! [1]     "S-0002c90201000001"[1]         # lid 1 lmc 0 "S-0002c90201000001" lid 649 4xQDR
//!
//! switchguid=0x2c90201000001
//! Switch  36 "S-0002c90201000001"         # "sw-L1-0001" base port 0 lid 649 lmc 0
//! [1]     "H-0002c90300000010"[1]         # lid 1 4xQDR
//! ```
//!
//! The quoted names are identifiers that port lines refer to; the node
//! description follows `#` (without one, ibsim uses the name). The reader
//! follows ibsim 0.10–0.12 (`ibsim/sim_net.c`) so that what it returns is the
//! fabric ibsim simulates for the same file:
//!
//! * GUIDs: `switchguid=`, `caguid=`/`hcaguids=` and `rtguid=` set the GUID of
//!   the next node of that type (`+N` is relative to the last absolute value);
//!   without them GUIDs count up from 0x200000 (switches, by 1), 0x100000 (CAs)
//!   and 0 (routers), CAs and routers reserving ports + 1 numbers. CA and
//!   router port GUIDs are always node GUID + port number and a switch's port
//!   0 GUID is its node GUID: ibsim ignores the `(portguid)` of ibnetdiscover
//!   lines, and so does this reader.
//! * `vendid=` and `sysimgguid=` apply to the next node only; `devid=` stays.
//! * Link rates are negotiated as ibsim does: every port has enabled widths
//!   and speeds (defaults 4x and SDR, changed by `width=`, `speed=`,
//!   `extspeed=` lines and by `w=`/`s=`/`e=` options on port lines); the
//!   ibnetdiscover-style comment `lid N 4xQDR` on switch and CA port lines
//!   enables everything up to that rate; the link runs at the best rate both
//!   ends enable, so a file without rates gives 4xSDR links. Router port
//!   lines get options only. NDR needs ibsim 0.12; 0.10 leaves such ports at
//!   its default speed.
//! * LIDs: a switch header's `lid`/`lmc` set port 0; on CA port lines the
//!   first `lid`/`lmc` after the remote name set the CA port's own.
//!
//! Where ibsim would silently do something surprising, the reader refuses the
//! file instead: a line that ibsim would swallow while ending a port list,
//! indented lines and port lines that ibsim ignores, unknown lines, unknown
//! speed names, and a link whose two ends state different rates. Aliases
//! (`@`), `module=`, `include` and `do` commands are not supported.

use super::text::assemble::{Assembler, PortDecl};
use super::text::{
    c_number_prefix, cable_port, err, numbered_lines, parse_c_number, take_bracketed_num,
    take_parenthesized, take_quoted, unwritable_description, DiscoverId,
};
use crate::error::excerpt;
use crate::error::{FabricError, ParseError};
use crate::ids::{Guid, NodeId};
use crate::model::{Fabric, LinkRate, LinkSpeed, LinkWidth, Node, NodeKind, NodeSpec};
use std::io::{self, Write};

/// Parses an ibsim net file. `file` names the source in error messages.
///
/// ```
/// use ibcloud_fabric::formats::ibsim;
/// let net = "Hca 1 \"h1\"\n[1] \"s1\"[1]\n\nSwitch 8 \"s1\"\n[1] \"h1\"[1]\n";
/// let f = ibsim::parse(net, "example.net")?;
/// assert_eq!(f.node(f.node_by_guid(ibcloud_fabric::Guid(0x200000)).unwrap()).description, "s1");
/// # Ok::<(), ibcloud_fabric::FabricError>(())
/// ```
pub fn parse(text: &str, file: &str) -> Result<Fabric, FabricError> {
    Ok(read(text, file)?)
}

// Bit masks of PortInfo's LinkWidthEnabled, LinkSpeedEnabled and LinkSpeedExtEnabled.
const W1X: u8 = 1;
const W4X: u8 = 2;
const W8X: u8 = 4;
const W12X: u8 = 8;
const W2X: u8 = 16;
const SDR: u8 = 1;
const DDR: u8 = 2;
const QDR: u8 = 4;
const FDR: u8 = 1;
const EDR: u8 = 2;
const HDR: u8 = 4;
const NDR: u8 = 8;

/// What one port enables, as ibsim keeps it, and the rate its line states.
#[derive(Clone, Copy, Debug)]
struct Enabled {
    width: u8,
    speed: u8,
    ext: u8,
    /// Mellanox FDR10 (ibsim's `mlnx_linkspeedena`).
    fdr10: bool,
    /// The rate of an ibnetdiscover-style comment, when both parts were understood.
    stated: Option<LinkRate>,
}

impl Default for Enabled {
    fn default() -> Self {
        Self {
            width: W4X,
            speed: SDR,
            ext: 0,
            fdr10: false,
            stated: None,
        }
    }
}

/// The port list being read: ibsim takes up to `left` more port lines.
#[derive(Clone, Copy, Debug)]
struct Record {
    node: u32,
    left: u32,
    listed: u32,
}

struct Reader<'t> {
    file: &'t str,
    asm: Assembler<'t, Enabled>,
    /// Next GUID per type (CA, switch, router) and the last absolute value set.
    next_guid: [u64; 3],
    base_guid: [u64; 3],
    vendid: u32,
    devid: u32,
    sysimg: u64,
    net: Enabled,
    /// Per node: what its ports enable unless a port line says otherwise.
    defaults: Vec<Enabled>,
    record: Option<Record>,
}

fn kind_index(kind: NodeKind) -> usize {
    match kind {
        NodeKind::Ca => 0,
        NodeKind::Switch => 1,
        NodeKind::Router => 2,
    }
}

fn read<'t>(text: &'t str, file: &'t str) -> Result<Fabric, ParseError> {
    let initial = [0x100000, 0x200000, 0];
    let mut r = Reader {
        file,
        asm: Assembler::new(file, text.len()),
        next_guid: initial,
        base_guid: initial,
        vendid: 0,
        devid: 0,
        sysimg: 0,
        net: Enabled::default(),
        defaults: Vec::new(),
        record: None,
    };
    for (no, line) in numbered_lines(text) {
        if let Some(rec) = r.record {
            if line.starts_with('#') {
                continue;
            }
            if line.starts_with('[') || line.starts_with('@') {
                r.port_line(no, line, rec)?;
                continue;
            }
            r.record = None;
            if !line.trim().is_empty() {
                let (_, ports) = r.asm.node_shape(rec.node);
                return Err(r.err(
                    no,
                    format!(
                        "ibsim would swallow this line: it ends the port list of '{}' ({} of its {ports} ports listed), \
                         and ibsim consumes it in doing so; put a blank line before it",
                        r.asm.node_name(rec.node),
                        rec.listed
                    ),
                ));
            }
            continue;
        }
        r.line(no, line)?;
    }
    let defaults = r.defaults;
    r.asm.finish(move |a, b, far| {
        let far_end = b.map_or(defaults[far as usize], |d| d.rate);
        if let (Some(x), Some(y)) = (a.rate.stated, b.and_then(|d| d.rate.stated.map(|r| (r, d.line)))) {
            if x != y.0 {
                let ((r1, l1), (r2, l2)) = if a.line <= y.1 { ((x, a.line), y) } else { (y, (x, a.line)) };
                return Err(format!(
                    "link described differently on its two ends: {r1} on line {l1} but {r2} on line {l2}"
                ));
            }
        }
        negotiate(&a.rate, &far_end)
    })
}

/// The rate ibsim gives a link between ports enabling `a` and `b`, named as
/// ibnetdiscover names it.
fn negotiate(a: &Enabled, b: &Enabled) -> Result<LinkRate, String> {
    let w = a.width & b.width;
    let width = [
        (W12X, LinkWidth::X12),
        (W8X, LinkWidth::X8),
        (W4X, LinkWidth::X4),
        (W2X, LinkWidth::X2),
        (W1X, LinkWidth::X1),
    ]
    .into_iter()
    .find(|(bit, _)| w & bit != 0)
    .map(|(_, v)| v)
    .ok_or_else(|| {
        format!(
            "the two ends enable no link width in common (masks {} and {}); ibsim refuses such a link",
            a.width, b.width
        )
    })?;
    let s = a.speed & b.speed;
    let basic = [(QDR, LinkSpeed::Qdr), (DDR, LinkSpeed::Ddr), (SDR, LinkSpeed::Sdr)]
        .into_iter()
        .find(|(bit, _)| s & bit != 0)
        .map(|(_, v)| v)
        .ok_or_else(|| {
            format!(
                "the two ends enable no link speed in common (masks {} and {}); ibsim refuses such a link",
                a.speed, b.speed
            )
        })?;
    let e = a.ext & b.ext;
    let speed = [
        (NDR, LinkSpeed::Ndr),
        (HDR, LinkSpeed::Hdr),
        (EDR, LinkSpeed::Edr),
        (FDR, LinkSpeed::Fdr),
    ]
    .into_iter()
    .find(|(bit, _)| e & bit != 0)
    .map(|(_, v)| v)
    .unwrap_or(if basic == LinkSpeed::Qdr && a.fdr10 && b.fdr10 {
        LinkSpeed::Fdr10
    } else {
        basic
    });
    Ok(LinkRate::new(width, speed))
}

/// Masks a comment's width enables (ibsim's table: 4x also enables 1x, 12x also 1x and 4x).
fn width_mask(lanes: u64) -> Option<(u8, LinkWidth)> {
    match lanes {
        1 => Some((W1X, LinkWidth::X1)),
        2 => Some((W2X, LinkWidth::X2)),
        4 => Some((W1X | W4X, LinkWidth::X4)),
        8 => Some((W8X, LinkWidth::X8)),
        12 => Some((W1X | W4X | W12X, LinkWidth::X12)),
        _ => None,
    }
}

/// The speed a comment names: ibsim accepts any prefix of a name, tried in this order.
fn speed_of(token: &str) -> Option<LinkSpeed> {
    use LinkSpeed::*;
    [Sdr, Ddr, Qdr, Fdr, Edr, Hdr, Ndr, Fdr10]
        .into_iter()
        .find(|s| s.as_str().starts_with(token))
}

/// Reads `<ws><int><ws><int>x<word>` after a `lid`, as ibsim's `sscanf("lid %d %dx%9s")`.
fn scan_lid_rate(s: &str) -> Option<(u64, &str)> {
    fn int(s: &str) -> Option<(&str, &str)> {
        let s = s.trim_start();
        let unsigned = s.strip_prefix(['-', '+']).unwrap_or(s);
        let digits = unsigned.bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0).then(|| {
            let end = s.len() - unsigned.len() + digits;
            (&s[s.len() - unsigned.len()..end], &s[end..])
        })
    }
    let (_, rest) = int(s)?;
    let (lanes, rest) = int(rest)?;
    let rest = rest.strip_prefix('x')?.trim_start();
    let end = rest
        .find(|c: char| c.is_ascii_whitespace())
        .unwrap_or(rest.len());
    let mut word = &rest[..end];
    if word.is_empty() {
        return None;
    }
    if let Some((i, _)) = word.char_indices().nth(9) {
        word = &word[..i];
    }
    Some((lanes.parse().ok()?, word))
}

impl<'t> Reader<'t> {
    fn err(&self, line: usize, problem: impl Into<String>) -> ParseError {
        err(self.file, line, problem)
    }

    /// A number after `lid ` or `lmc ` in free text, read as ibsim reads it.
    fn free_number(
        &self,
        no: usize,
        text: &str,
        key: &str,
        max: u64,
    ) -> Result<Option<u64>, ParseError> {
        let Some(i) = text.find(key) else {
            return Ok(None);
        };
        match c_number_prefix(&text[i + key.len()..]) {
            Some(v) if v <= max => Ok(Some(v)),
            _ => Err(self.err(
                no,
                format!(
                    "the number after '{}' is out of range (at most {max})",
                    key.trim()
                ),
            )),
        }
    }

    fn line(&mut self, no: usize, line: &'t str) -> Result<(), ParseError> {
        if line.trim().is_empty() || line.starts_with('#') {
            return Ok(());
        }
        if line.starts_with(|c: char| c.is_whitespace()) {
            return Err(self.err(
                no,
                "indented line: ibsim ignores lines that do not start in the first column",
            ));
        }
        if line.starts_with('[') {
            return Err(self.err(
                no,
                "port line outside a port list: ibsim ignores it (the node above has all its ports listed, \
                 or a blank line ended its list)",
            ));
        }
        if line.starts_with('@') {
            return Err(self.err(no, "port aliases ('@...') are not supported"));
        }
        let word_end = line
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(line.len());
        let (word, rest) = line.split_at(word_end);
        let kind = match word {
            "Switch" => Some(NodeKind::Switch),
            "Hca" | "Ca" => Some(NodeKind::Ca),
            "Rt" => Some(NodeKind::Router),
            _ => None,
        };
        if let Some(kind) = kind.filter(|_| rest.starts_with(|c: char| c.is_ascii_whitespace())) {
            return self.header(no, kind, rest);
        }
        let op = rest.trim_start();
        let value = op.get(1..).unwrap_or("");
        match (word, op.chars().next()) {
            ("switchguid" | "hcaguids" | "caguid" | "rtguid", Some(sign @ ('=' | '+'))) => {
                let kind = match word {
                    "switchguid" => NodeKind::Switch,
                    "rtguid" => NodeKind::Router,
                    _ => NodeKind::Ca,
                };
                // ibnetdiscover writes `switchguid=0x…(port guid)`; ibsim reads the number only.
                let v = self.value(no, value.split('(').next().unwrap_or(""), u64::MAX, word)?;
                let k = kind_index(kind);
                if sign == '=' {
                    self.base_guid[k] = v;
                    self.next_guid[k] = v;
                } else {
                    self.next_guid[k] = self.base_guid[k].wrapping_add(v);
                }
            }
            ("vendid", Some('=')) => self.vendid = self.value(no, value, 0xff_ffff, word)? as u32,
            ("devid", Some('=')) => self.devid = self.value(no, value, 0xffff, word)? as u32,
            ("sysimgguid", Some('=')) => self.sysimg = self.value(no, value, u64::MAX, word)?,
            ("width", Some('=')) => self.net.width = self.option(no, 'w', value)?,
            ("speed", Some('=')) => self.net.speed = self.option(no, 's', value)?,
            ("extspeed", Some('=')) => self.net.ext = self.option(no, 'e', value)?,
            ("pdebug", _) => {}
            ("module" | "include", _) => {
                return Err(self.err(
                    no,
                    format!("'{word}' is not supported: give the whole fabric in one file"),
                ))
            }
            _ if word.starts_with("do") => {
                return Err(self.err(
                    no,
                    "ibsim commands ('do ...') in net files are not supported",
                ))
            }
            _ => {
                let mut words = rest.split_whitespace();
                let looks_like_header = !word.is_empty()
                    && words
                        .next()
                        .is_some_and(|w| w.bytes().all(|b| b.is_ascii_digit()))
                    && words.next().is_some_and(|w| w.starts_with('"'));
                return Err(self.err(
                    no,
                    if looks_like_header {
                        format!(
                            "unknown node type '{word}' (ibsim knows Switch, Hca (or Ca) and Rt)"
                        )
                    } else {
                        format!("unrecognised line {}: ibsim would ignore it", excerpt(line))
                    },
                ));
            }
        }
        Ok(())
    }

    /// The number of a `key=value` setting, as a whole token.
    fn value(&self, no: usize, value: &str, max: u64, key: &str) -> Result<u64, ParseError> {
        let token = value.split('#').next().unwrap_or("").trim();
        match parse_c_number(token) {
            Some(v) if v <= max => Ok(v),
            Some(v) => Err(self.err(
                no,
                format!("{key} {v:#x} is out of range (at most {max:#x})"),
            )),
            None if token.is_empty() => Err(self.err(no, format!("missing number after '{key}='"))),
            None => Err(self.err(
                no,
                format!("bad number '{token}' for {key}: expected decimal, 0x hex or 0 octal"),
            )),
        }
    }

    /// An enabled-width (`w`), speed (`s`) or extended-speed (`e`) mask, range-checked as ibsim does.
    fn option(&self, no: usize, key: char, value: &str) -> Result<u8, ParseError> {
        let v = c_number_prefix(value).unwrap_or(u64::MAX);
        let (range, what) = match key {
            'w' => (1..=31, "enabled link width mask"),
            's' => (1..=7, "enabled link speed mask"),
            _ => (0..=15, "enabled extended link speed mask"),
        };
        if !range.contains(&v) {
            return Err(self.err(
                no,
                format!(
                    "{what} {} is out of range {}..={}",
                    value.trim(),
                    range.start(),
                    range.end()
                ),
            ));
        }
        Ok(v as u8)
    }

    fn header(&mut self, no: usize, kind: NodeKind, rest: &'t str) -> Result<(), ParseError> {
        let rest = rest.trim_start();
        let count_end = rest
            .find(|c: char| c.is_ascii_whitespace() || c == '"')
            .unwrap_or(rest.len());
        let (count, after) = rest.split_at(count_end);
        if count.is_empty() {
            return Err(self.err(
                no,
                "truncated node header: expected the port count and the quoted node name",
            ));
        }
        let num_ports = parse_c_number(count)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| self.err(no, format!("bad port count '{count}'")))?;
        let after = after.trim_start();
        if !after.starts_with('"') {
            return Err(self.err(
                no,
                "truncated node header: expected the quoted node name after the port count",
            ));
        }
        let (name, tail) = take_quoted(after).ok_or_else(|| {
            self.err(
                no,
                "truncated node header: the node name has no closing quote",
            )
        })?;
        self.check_name(no, name)?;
        // ibsim: the description follows '#', quoted or up to the first of these words.
        let (desc, rest) = match tail.find('#') {
            None => (name, None),
            Some(i) => {
                let s = tail[i + 1..].trim_start();
                if let Some(q) = s.strip_prefix('"') {
                    let end = q.find('"').ok_or_else(|| {
                        self.err(
                            no,
                            "truncated node header: the description has no closing quote",
                        )
                    })?;
                    (&q[..end], Some(&q[end + 1..]))
                } else {
                    match [" enhanced port ", " base port ", " lid ", " lmc "]
                        .iter()
                        .find_map(|p| s.find(p))
                    {
                        Some(cut) => (&s[..cut], Some(&s[cut + 1..])),
                        None => (s, None),
                    }
                }
            }
        };
        let desc = if desc.is_empty() { name } else { desc };
        let k = kind_index(kind);
        let guid = self.next_guid[k];
        let mut spec = NodeSpec::new(kind, Guid(guid), num_ports, desc);
        spec.system_image_guid = Guid(self.sysimg);
        spec.vendor_id = self.vendid;
        spec.device_id = self.devid;
        let mut lid = None;
        if kind == NodeKind::Switch {
            if let Some(t) = rest {
                spec.enhanced_port0 = t.contains("enhanced port 0");
                let l = self.free_number(no, t, "lid ", 0xffff)?;
                let m = self.free_number(no, t, "lmc ", 0xff)?;
                if l.is_some() || m.is_some() {
                    lid = Some((l.unwrap_or(0) as u16, m.unwrap_or(0) as u8));
                }
            }
        }
        let node = self.asm.add_node(name, no, spec)?;
        if let Some((l, m)) = lid {
            self.asm.claim_lid(node, 0, l, Some(m), no)?;
        }
        let step = if kind == NodeKind::Switch {
            1
        } else {
            num_ports as u64 + 1
        };
        self.next_guid[k] = guid.wrapping_add(step);
        self.vendid = 0;
        self.sysimg = 0;
        self.defaults.push(self.net);
        self.record = Some(Record {
            node,
            left: num_ports,
            listed: 0,
        });
        Ok(())
    }

    fn check_name(&self, no: usize, name: &str) -> Result<(), ParseError> {
        if name.is_empty() {
            Err(self.err(no, "empty node name"))
        } else if name.contains(['#', '@']) {
            Err(self.err(
                no,
                format!("node name '{name}' contains '#' or '@', which ibsim reserves"),
            ))
        } else if name.len() > 64 {
            Err(self.err(
                no,
                format!("node name '{name}' is longer than 64 bytes; ibsim would cut it short"),
            ))
        } else {
            Ok(())
        }
    }

    fn port_line(&mut self, no: usize, line: &'t str, rec: Record) -> Result<(), ParseError> {
        if line.starts_with('@') {
            return Err(self.err(no, "port aliases ('@...') are not supported"));
        }
        let node = rec.node;
        let (kind, _) = self.asm.node_shape(node);
        let (p, rest) = take_bracketed_num(line).ok_or_else(|| {
            self.err(
                no,
                "bad port number: expected [N] at the start of the port line",
            )
        })?;
        let port = cable_port(self.file, no, p, "port")?;
        // An ibnetdiscover-style (portguid): ibsim ignores it, but it must be well formed.
        let rest = if rest.trim_start().starts_with('(') {
            let (hex, r) = take_parenthesized(rest)
                .ok_or_else(|| self.err(no, "truncated port GUID: '(' without ')'"))?;
            if u64::from_str_radix(hex.trim(), 16).is_err() {
                return Err(self.err(no, format!("bad port GUID '{hex}': expected hex digits")));
            }
            r
        } else {
            rest
        };
        let rest = rest.trim_start();
        if !rest.starts_with('"') {
            return Err(self.err(
                no,
                "truncated port line: expected the quoted remote node name after the port number",
            ));
        }
        let (remote, region) = take_quoted(rest).ok_or_else(|| {
            self.err(
                no,
                "truncated port line: the remote node name has no closing quote",
            )
        })?;
        self.check_name(no, remote)?;
        let remote_port = if region.starts_with('[') {
            let (rp, _) = take_bracketed_num(region).ok_or_else(|| {
                self.err(
                    no,
                    "bad remote port number: expected [N] right after the remote node name",
                )
            })?;
            cable_port(self.file, no, rp, "remote port")?
        } else {
            1 // ibsim's default
        };
        let mut end = self.defaults[node as usize];
        // Options: every '=' takes its key from the nearest letter before it, as in ibsim.
        for (i, _) in region.match_indices('=') {
            match region[..i].chars().rev().find(char::is_ascii_alphabetic) {
                Some('w') => end.width = self.option(no, 'w', &region[i + 1..])?,
                Some('s') => end.speed = self.option(no, 's', &region[i + 1..])?,
                Some('e') => end.ext = self.option(no, 'e', &region[i + 1..])?,
                _ => {}
            }
        }
        if kind != NodeKind::Router {
            // ibsim reads the rate after the first "lid" that no quote follows.
            let tail = region.rfind('"').map_or(region, |q| &region[q + 1..]);
            if let Some((lanes, word)) =
                tail.find("lid").and_then(|i| scan_lid_rate(&tail[i + 3..]))
            {
                let (mask, width) = width_mask(lanes).ok_or_else(|| {
                    self.err(
                        no,
                        format!("unknown link width {lanes}x (ibsim knows 1x, 2x, 4x, 8x and 12x)"),
                    )
                })?;
                end.width = mask;
                if !word.contains('?') {
                    let speed = speed_of(word).ok_or_else(|| {
                        self.err(no, format!("unknown link speed '{word}' (expected SDR, DDR, QDR, FDR10, FDR, EDR, HDR or NDR)"))
                    })?;
                    let all_basic = SDR | DDR | QDR;
                    match speed {
                        LinkSpeed::Sdr => end.speed = SDR,
                        LinkSpeed::Ddr => end.speed = SDR | DDR,
                        LinkSpeed::Qdr => end.speed = all_basic,
                        LinkSpeed::Fdr10 => (end.speed, end.fdr10) = (all_basic, true),
                        LinkSpeed::Fdr => (end.speed, end.ext, end.fdr10) = (all_basic, FDR, true),
                        LinkSpeed::Edr => {
                            (end.speed, end.ext, end.fdr10) = (all_basic, FDR | EDR, true)
                        }
                        LinkSpeed::Hdr => {
                            (end.speed, end.ext, end.fdr10) = (all_basic, FDR | EDR | HDR, true)
                        }
                        LinkSpeed::Ndr => {
                            (end.speed, end.ext, end.fdr10) =
                                (all_basic, FDR | EDR | HDR | NDR, true)
                        }
                    }
                    end.stated = Some(LinkRate::new(width, speed));
                }
            }
        }
        self.asm.add_port(PortDecl {
            node,
            port,
            line: no,
            remote,
            remote_port,
            remote_guid: None,
            remote_lid: None,
            rate: end,
        })?;
        if kind == NodeKind::Ca {
            if let Some(lid) = self.free_number(no, region, "lid ", 0xffff)? {
                let lmc = self.free_number(no, region, "lmc ", 0xff)?.unwrap_or(0);
                self.asm
                    .claim_lid(node, port, lid as u16, Some(lmc as u8), no)?;
            }
        }
        let rec = Record {
            left: rec.left - 1,
            listed: rec.listed + 1,
            ..rec
        };
        self.record = (rec.left > 0).then_some(rec);
        Ok(())
    }
}

/// Writes an ibsim net file that ibsim loads as this fabric: a CA first
/// (ibsim attaches its clients, the SM among them, to the first node), every
/// node preceded by its GUID, vendor, device and system image lines, each
/// link listed from both ends with its rate, LIDs and LMCs as ibsim reads them.
///
/// Node names are the ibnetdiscover ids (`H-<guid>`), unique by construction.
/// ibsim derives port GUIDs from node GUIDs (see the module docs), so other
/// port GUIDs do not survive. Fails with [`io::ErrorKind::InvalidInput`] for
/// what ibsim would change: a description that is empty, longer than 63
/// bytes, or holds a `"` or a line break, and FDR10 on a router port.
pub fn write(fabric: &Fabric, out: &mut impl Write) -> io::Result<()> {
    let invalid = |msg: String| Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
    for (id, n) in fabric.iter_nodes() {
        let why = match unwritable_description(&n.description) {
            Some(why) => why,
            None if n.description.is_empty() => "is empty (ibsim would use the node name)",
            None if n.description.len() > 63 => {
                "is longer than 63 bytes (ibsim would cut it short)"
            }
            None => "",
        };
        if !why.is_empty() {
            return invalid(format!(
                "description of node {} {why}; ibsim cannot reproduce it",
                n.guid
            ));
        }
        if n.kind == NodeKind::Router
            && fabric
                .ports(id)
                .iter()
                .any(|p| p.remote.is_some() && p.rate.speed == LinkSpeed::Fdr10)
        {
            return invalid(format!(
                "router {} has an FDR10 link, which ibsim cannot set on router ports",
                n.guid
            ));
        }
    }
    let first = fabric
        .cas()
        .next()
        .or_else(|| fabric.iter_nodes().next().map(|(id, _)| id));
    let order = first.into_iter().chain(
        fabric
            .iter_nodes()
            .map(|(id, _)| id)
            .filter(|&id| Some(id) != first),
    );
    let mut w = io::BufWriter::with_capacity(1 << 16, out);
    let count = |k| fabric.count(k);
    let ports: usize = fabric
        .nodes()
        .iter()
        .map(|n| n.num_ports as usize + usize::from(n.is_switch()))
        .sum();
    writeln!(
        w,
        "# ibsim net file written by ibcloud: {} switches, {} CAs, {} routers, {} links.",
        count(NodeKind::Switch),
        count(NodeKind::Ca),
        count(NodeKind::Router),
        fabric.num_links()
    )?;
    writeln!(
        w,
        "# Names are ibnetdiscover-style ids; the node description follows '#'."
    )?;
    writeln!(
        w,
        "# ibsim needs at least: -N {} -S {} -P {} (defaults 2048, 256, 13312).",
        fabric.num_nodes(),
        count(NodeKind::Switch),
        ports
    )?;
    for id in order {
        write_node(&mut w, fabric, id, fabric.node(id))?;
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
            writeln!(w, "switchguid=0x{:x}", n.guid.0)?;
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
        NodeKind::Ca => {
            writeln!(w, "caguid=0x{:x}", n.guid.0)?;
            writeln!(
                w,
                "Hca\t{} \"{me}\"\t\t# \"{}\"",
                n.num_ports, n.description
            )?;
        }
        NodeKind::Router => {
            writeln!(w, "rtguid=0x{:x}", n.guid.0)?;
            writeln!(w, "Rt\t{} \"{me}\"\t\t# \"{}\"", n.num_ports, n.description)?;
        }
    }
    for (p, port) in ports.iter().enumerate().skip(1) {
        let Some(r) = port.remote else { continue };
        let far = fabric.node(r.node);
        let far_ports = fabric.ports(r.node);
        let far_lid = if far.is_switch() {
            far_ports[0].lid.0
        } else {
            far_ports[r.port as usize].lid.0
        };
        let far_id = DiscoverId(far.kind, far.guid);
        write!(w, "[{p}]\t\"{far_id}\"[{}]\t\t", r.port)?;
        match n.kind {
            NodeKind::Switch => writeln!(w, "# lid {far_lid} {}", port.rate)?,
            // The quoted far name keeps ibsim from taking the own LID for the rate's.
            NodeKind::Ca => writeln!(
                w,
                "# lid {} lmc {} \"{far_id}\" lid {far_lid} {}",
                port.lid.0, port.lmc, port.rate
            )?,
            // ibsim reads no comment on router lines, only exact masks.
            NodeKind::Router => {
                let (s, e) = match port.rate.speed {
                    LinkSpeed::Sdr => (SDR, 0),
                    LinkSpeed::Ddr => (DDR, 0),
                    LinkSpeed::Qdr | LinkSpeed::Fdr10 => (QDR, 0),
                    LinkSpeed::Fdr => (QDR, FDR),
                    LinkSpeed::Edr => (QDR, EDR),
                    LinkSpeed::Hdr => (QDR, HDR),
                    LinkSpeed::Ndr => (QDR, NDR),
                };
                let wm = match port.rate.width {
                    LinkWidth::X1 => W1X,
                    LinkWidth::X2 => W2X,
                    LinkWidth::X4 => W4X,
                    LinkWidth::X8 => W8X,
                    LinkWidth::X12 => W12X,
                };
                write!(w, "w={wm} s={s}")?;
                if e != 0 {
                    write!(w, " e={e}")?;
                }
                writeln!(w)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::ibnetdiscover;
    use crate::formats::text::testing::{assert_error, assert_same_fabric, zoo};
    use crate::generate::{preset, FatTreeParams};
    use crate::{Lid, PortRef};

    const FIXTURE: &str = include_str!("../../../../fixtures/interop/ibsim-example.net");
    const DISCOVERED: &str = include_str!("../../../../fixtures/interop/ibnetdiscover-example.txt");

    fn render(f: &Fabric) -> String {
        let mut out = Vec::new();
        write(f, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn round_trip(f: &Fabric) {
        let text = render(f);
        let back = parse(&text, "rt.net").unwrap();
        assert_same_fabric(f, &back);
        assert_eq!(render(&back), text, "re-rendering changes the bytes");
    }

    fn rate(f: &Fabric, guid: u64, port: u8) -> LinkRate {
        f.port(PortRef::new(f.node_by_guid(Guid(guid)).unwrap(), port))
            .unwrap()
            .rate
    }

    fn r(w: LinkWidth, s: LinkSpeed) -> LinkRate {
        LinkRate::new(w, s)
    }

    #[test]
    fn generated_fabrics_round_trip() {
        round_trip(&preset("ft648").unwrap().build().unwrap());
        round_trip(&preset("4-ary-3-full").unwrap().build().unwrap());
        let pgft = FatTreeParams::pgft(&[4, 4], &[1, 2], &[1, 3])
            .with_rate(r(LinkWidth::X12, LinkSpeed::Hdr))
            .build()
            .unwrap();
        round_trip(&pgft);
    }

    #[test]
    fn every_field_ibsim_keeps_round_trips() {
        round_trip(&zoo(true));
    }

    #[test]
    fn a_ca_comes_first_and_layout_is_ibsims() {
        let f = preset("4-ary-2-full").unwrap().build().unwrap();
        let text = render(&f);
        let first = text
            .lines()
            .find(|l| l.starts_with(['S', 'H', 'R']))
            .unwrap();
        assert!(
            first.starts_with("Hca\t1 \"H-0002c90300000100\"\t\t# \"hca-00001 HCA-1\""),
            "{first}"
        );
        assert!(text.contains("\ncaguid=0x2c90300000100\nHca\t1 \"H-0002c90300000100\""));
        assert!(text.contains(
            "\n[1]\t\"S-0002c90201000001\"[1]\t\t# lid 1 lmc 0 \"S-0002c90201000001\" lid 33 4xQDR\n"
        ));
        assert!(text.contains("\nswitchguid=0x2c90201000001\nSwitch\t8 \"S-0002c90201000001\"\t\t# \"sw-L1-0001\" base port 0 lid 33 lmc 0\n"));
        assert!(text.contains("\n[1]\t\"H-0002c90300000100\"[1]\t\t# lid 1 4xQDR\n"));
        assert!(
            text.contains("-N 44 -S 12 -P 140"),
            "{}",
            text.lines().nth(2).unwrap()
        );
        // A fabric whose first node is a switch still starts with a CA.
        let ca_last = f.without(&f.cas().skip(1).collect::<Vec<_>>(), &[]);
        assert!(render(&ca_last).contains("# ibsim net"));
    }

    #[test]
    fn the_fixture_parses_to_what_ibsim_showed() {
        let f = parse(FIXTURE, "ibsim-example.net").unwrap();
        assert_eq!(
            (
                f.count(NodeKind::Switch),
                f.count(NodeKind::Ca),
                f.num_links()
            ),
            (2, 4, 6)
        );
        let guids: Vec<(u64, &str)> = f
            .nodes()
            .iter()
            .map(|n| (n.guid.0, n.description.as_str()))
            .collect();
        assert_eq!(
            guids,
            [
                (0x100000, "Hca1"),
                (0x200000, "Switch1"),
                (0x200001, "Switch2"),
                (0x100003, "Hca2"),
                (0x100006, "Hca3"),
                (0x100009, "Hca4")
            ]
        );
        let seen = ibnetdiscover::parse(DISCOVERED, "ibnetdiscover-example.txt").unwrap();
        assert_same_fabric(&f, &seen);
        // ibsim's grammar takes ibnetdiscover output too.
        assert_same_fabric(&parse(DISCOVERED, "as-net").unwrap(), &seen);
        round_trip(&f);
    }

    #[test]
    fn guids_and_ids_follow_ibsims_rules() {
        let text = "switchguid=0x500\nSwitch 4 \"s1\"\n[1] \"h1\"[1]\n\nSwitch 4 \"s2\" # plain words lid 9\n[1] \"h2\"\n\n\
                    caguid=0x1000\nHca 2 \"h1\"\n[1] \"s1\"[1]\n\nCa 1 \"h2\"\n[1] \"s2\"[1]\n\ncaguid+0x10\nHca 1 \"h3\"\n\n\
                    vendid=0x2c9\ndevid=0x1003\nsysimgguid=0x77\nRt 1 \"r1\"\n\nHca 1 \"h4\"\n";
        let f = parse(text, "t").unwrap();
        let node = |g: u64| f.node(f.node_by_guid(Guid(g)).unwrap());
        assert_eq!(
            (
                node(0x500).description.as_str(),
                node(0x501).description.as_str()
            ),
            ("s1", "plain words")
        );
        assert_eq!(f.node_lid(f.node_by_guid(Guid(0x501)).unwrap()), Lid(9));
        assert_eq!(
            (
                node(0x1000).description.as_str(),
                node(0x1003).description.as_str()
            ),
            ("h1", "h2")
        );
        assert_eq!(
            f.ports(f.node_by_guid(Guid(0x1000)).unwrap())[2].guid,
            Guid(0x1002)
        );
        assert_eq!(node(0x1010).description, "h3");
        let r1 = node(0);
        assert_eq!(
            (r1.kind, r1.vendor_id, r1.device_id, r1.system_image_guid),
            (NodeKind::Router, 0x2c9, 0x1003, Guid(0x77))
        );
        let h4 = node(0x1012);
        assert_eq!(
            (h4.vendor_id, h4.device_id, h4.system_image_guid),
            (0, 0x1003, Guid(0x1012))
        );
        assert_eq!(rate(&f, 0x501, 1), r(LinkWidth::X4, LinkSpeed::Sdr));
    }

    #[test]
    fn rates_are_negotiated_as_ibsim_does() {
        let net = |a: &str, b: &str| {
            format!("Switch 4 \"s\"\n[1] \"h\"[1]{a}\n\nHca 1 \"h\"\n[1] \"s\"[1]{b}\n")
        };
        let one = |a: &str, b: &str| rate(&parse(&net(a, b), "t").unwrap(), 0x200000, 1);
        use LinkSpeed::*;
        use LinkWidth::*;
        assert_eq!(one("", ""), r(X4, Sdr));
        assert_eq!(
            one("\t# \"h\" lid 1 4xQDR", ""),
            r(X4, Sdr),
            "only one end enables QDR"
        );
        assert_eq!(
            one("\t# lid 1 12xQDR", "\t# lid 1 lmc 0 \"s\" lid 2 12xQDR"),
            r(X12, Qdr)
        );
        assert_eq!(
            one("\t# lid 1 4xFDR10", "\t# lid 1 lmc 0 \"s\" lid 2 4xFDR10"),
            r(X4, Fdr10)
        );
        assert_eq!(
            one("\t# lid 1 4xE", "\t# lid 1 lmc 0 \"s\" lid 2 4xEDR"),
            r(X4, Edr),
            "ibsim takes a prefix"
        );
        assert_eq!(one(" w=3 s=7 e=2", " w=2 s=5 e=3"), r(X4, Edr));
        assert_eq!(one(" s=7 w=16", " w=17 s=3"), r(X2, Ddr));
        assert_eq!(
            one("\t# lid 1 4x???", "\t# lid 1 lmc 0 \"s\" lid 2 4xQDR"),
            r(X4, Sdr),
            "ibsim keeps the default speed"
        );
        let t = format!(
            "width=1\nspeed=3\nextspeed=1\n{}",
            net("\t# lid 1 4xFDR", "")
        );
        assert_eq!(rate(&parse(&t, "t").unwrap(), 0x200000, 1), r(X1, Fdr));
        assert_error(
            parse(&net(" s=2", " s=1"), "t"),
            "t",
            5,
            "no link speed in common",
        );
        assert_error(
            parse(&net(" w=8", ""), "t"),
            "t",
            5,
            "no link width in common",
        );
        assert_error(
            parse(&net(" s=0", ""), "t"),
            "t",
            2,
            "enabled link speed mask 0 is out of range 1..=7",
        );
        assert_error(
            parse(&net(" w=32", ""), "t"),
            "t",
            2,
            "enabled link width mask 32 is out of range",
        );
        assert_error(
            parse(&net("\t# lid 1 3xQDR", ""), "t"),
            "t",
            2,
            "unknown link width 3x",
        );
        assert_error(
            parse(&net("\t# lid 1 4xQQR", ""), "t"),
            "t",
            2,
            "unknown link speed 'QQR'",
        );
    }

    #[test]
    fn lids_come_from_switch_headers_and_ca_port_lines() {
        let text =
            "Switch 4 \"s\" # \"sw\" enhanced port 0 lid 0x10 lmc 0\n[1] \"h\"[1] # \"h\" lid 99 4xQDR\n\n\
                    Hca 1 \"h\"\n[1] \"s\"[1] # lid 4 lmc 2 \"sw\" lid 16 4xQDR\n";
        let f = parse(text, "t").unwrap();
        let (s, h) = (
            f.node_by_guid(Guid(0x200000)).unwrap(),
            f.node_by_guid(Guid(0x100000)).unwrap(),
        );
        assert!(f.node(s).enhanced_port0);
        assert_eq!(
            (f.node_lid(s), f.ports(h)[1].lid, f.ports(h)[1].lmc),
            (Lid(16), Lid(4), 2)
        );
    }

    #[test]
    fn what_ibsim_would_silently_do_otherwise_is_refused() {
        let swallowed = "Hca 2 \"h\"\n[1] \"s\"[1]\nSwitch 4 \"s\"\n[1] \"h\"[1]\n";
        assert_error(
            parse(swallowed, "t"),
            "t",
            3,
            "ibsim would swallow this line: it ends the port list of 'h' (1 of its 2 ports listed)",
        );
        assert_error(
            parse("Hca 1 \"h\"\n[1] \"s\"[1]\n[2] \"s\"[2]\n", "t"),
            "t",
            3,
            "port line outside a port list",
        );
        assert_error(parse("  Hca 1 \"h\"\n", "t"), "t", 1, "indented line");
        assert_error(parse("Hca 1 \"h\"\n@[1] \"a\"\n", "t"), "t", 2, "aliases");
        assert_error(
            parse("include \"other.net\"\n", "t"),
            "t",
            1,
            "'include' is not supported",
        );
        assert_error(parse("do link a b\n", "t"), "t", 1, "ibsim commands");
        assert_error(
            parse("module=\"m\"\n", "t"),
            "t",
            1,
            "'module' is not supported",
        );
        assert_error(parse("hcaguid=0x10\n", "t"), "t", 1, "unrecognised line");
        assert!(parse("pdebug=1\n# comment\n\n", "t").unwrap().num_nodes() == 0);
    }

    /// Two nodes; line 2 is the switch's port 1, line 6 the CA's port 1.
    const SMALL: &str = "switchguid=0x20\n\
        Switch\t8 \"sw\"\t\t# \"the switch\" lid 2\n\
        [1]\t\"host\"[1]\t\t# lid 1 4xQDR\n\
        \n\
        caguid=0x10\n\
        Hca\t1 \"host\"\t\t# \"a host\"\n\
        [1]\t\"sw\"[1]\t\t# lid 1 lmc 0 \"sw\" lid 2 4xQDR\n";

    fn edit(line: usize, new: &str) -> String {
        let mut lines: Vec<&str> = SMALL.lines().collect();
        lines[line - 1] = new;
        lines.join("\n") + "\n"
    }

    #[test]
    fn small_is_valid() {
        let f = parse(SMALL, "t").unwrap();
        assert_eq!((f.num_links(), f.max_lid()), (1, 2));
        assert_eq!(rate(&f, 0x20, 1), r(LinkWidth::X4, LinkSpeed::Qdr));
    }

    #[test]
    fn truncated_lines_are_refused() {
        assert_error(
            parse(&edit(2, "Switch\t8 \"sw"), "t"),
            "t",
            2,
            "no closing quote",
        );
        assert_error(
            parse(&edit(2, "Switch\t8"), "t"),
            "t",
            2,
            "expected the quoted node name",
        );
        assert_error(
            parse(&edit(2, "Switch "), "t"),
            "t",
            2,
            "truncated node header",
        );
        assert_error(
            parse(&edit(3, "[1]\t\"hos"), "t"),
            "t",
            3,
            "no closing quote",
        );
        assert_error(
            parse(&edit(3, "[1]"), "t"),
            "t",
            3,
            "expected the quoted remote node name",
        );
        assert_error(parse(&edit(3, "[1"), "t"), "t", 3, "bad port number");
        assert_error(
            parse(&edit(3, "[1]\t\"host\"[1"), "t"),
            "t",
            3,
            "bad remote port number",
        );
        assert_error(
            parse(&edit(5, "caguid="), "t"),
            "t",
            5,
            "missing number after 'caguid='",
        );
        assert_error(
            parse(&edit(6, "Hca\t1 \"host\"\t\t# \"a ho"), "t"),
            "t",
            6,
            "description has no closing quote",
        );
    }

    #[test]
    fn unknown_node_types_are_refused() {
        assert_error(
            parse(&edit(6, "Router\t1 \"host\""), "t"),
            "t",
            6,
            "unknown node type 'Router'",
        );
        assert_error(
            parse(&edit(5, "bogus"), "t"),
            "t",
            5,
            "unrecognised line 'bogus'",
        );
    }

    #[test]
    fn port_numbers_out_of_range_are_refused() {
        assert_error(
            parse(&edit(3, "[9]\t\"host\"[1]"), "t"),
            "t",
            3,
            "port 9 does not exist on 'sw', which has 8 ports",
        );
        assert_error(
            parse(&edit(3, "[0]\t\"host\"[1]"), "t"),
            "t",
            3,
            "port 0 cannot be cabled",
        );
        assert_error(
            parse(&edit(3, "[256]\t\"host\"[1]"), "t"),
            "t",
            3,
            "port 256 is out of range",
        );
        assert_error(
            parse(&edit(3, "[1]\t\"host\"[0]"), "t"),
            "t",
            3,
            "remote port 0 cannot be cabled",
        );
        assert_error(
            parse(&edit(3, "[1]\t\"host\"[2]"), "t"),
            "t",
            3,
            "port 2 does not exist on 'host', which has 1 ports",
        );
        assert_error(
            parse(&edit(2, "Switch\t0 \"sw\""), "t"),
            "t",
            2,
            "a node has 1 to 254",
        );
    }

    #[test]
    fn links_described_differently_are_refused() {
        let text = SMALL.to_owned() + "\nHca\t1 \"other\"\n[1]\t\"sw\"[2]\n";
        let wrong = text.replace("[1]\t\"sw\"[1]", "[1]\t\"sw\"[2]");
        assert_error(parse(&wrong, "t"), "t", 7, "link described differently on its two ends: line 3 says 'sw'[1] -> 'host'[1], line 7 says 'host'[1] -> 'sw'[2]");
        let rates = edit(7, "[1]\t\"sw\"[1]\t\t# lid 1 lmc 0 \"sw\" lid 2 4xSDR");
        assert_error(
            parse(&rates, "t"),
            "t",
            7,
            "link described differently on its two ends: 4xQDR on line 3 but 4xSDR on line 7",
        );
        assert_eq!(
            parse(&edit(7, ""), "t").unwrap().num_links(),
            1,
            "one end is enough"
        );
    }

    #[test]
    fn unknown_nodes_are_refused() {
        assert_error(
            parse(&edit(7, "[1]\t\"nobody\"[1]"), "t"),
            "t",
            7,
            "unknown node 'nobody'",
        );
    }

    #[test]
    fn duplicates_are_refused() {
        let guid = SMALL.to_owned() + "\ncaguid=0x10\nHca\t1 \"host2\"\n";
        assert_error(
            parse(&guid, "t"),
            "t",
            10,
            "duplicate node GUID 0x0000000000000010: 'host' has it too (line 6)",
        );
        let name = SMALL.to_owned() + "\nHca\t1 \"host\"\n";
        assert_error(
            parse(&name, "t"),
            "t",
            9,
            "duplicate node name 'host' (first declared on line 6)",
        );
        let port = edit(4, "[1]\t\"host\"[1]");
        assert_error(
            parse(&port, "t"),
            "t",
            4,
            "port 1 of 'sw' is declared twice (first on line 3)",
        );
    }

    #[test]
    fn lid_collisions_are_refused() {
        let text = edit(7, "[1]\t\"sw\"[1]\t\t# lid 2 lmc 0 \"sw\" lid 2 4xQDR");
        assert_error(
            parse(&text, "t"),
            "t",
            7,
            "LID 2 is claimed by 'sw' port 0 (line 2) and by 'host' port 1 here",
        );
        let text = edit(7, "[1]\t\"sw\"[1]\t\t# lid 3 lmc 1 \"sw\" lid 2 4xQDR");
        assert_error(
            parse(&text, "t"),
            "t",
            7,
            "'host' port 1: LID 0x0003 is not aligned to LMC 1",
        );
        let text = edit(7, "[1]\t\"sw\"[1]\t\t# lid 9 lmc 31 \"sw\" lid 2 4xQDR");
        assert_error(parse(&text, "t"), "t", 7, "LMC 31 is out of range 0..=7");
        let text = edit(7, "[1]\t\"sw\"[1]\t\t# lid 70000 lmc 0 \"sw\" lid 2 4xQDR");
        assert_error(
            parse(&text, "t"),
            "t",
            7,
            "the number after 'lid' is out of range",
        );
    }

    #[test]
    fn bad_hex_numbers_are_refused() {
        assert_error(
            parse(&edit(1, "switchguid=0xZZ"), "t"),
            "t",
            1,
            "bad number '0xZZ' for switchguid",
        );
        assert_error(
            parse(&edit(5, "caguid=0x10g"), "t"),
            "t",
            5,
            "bad number '0x10g'",
        );
        assert_error(
            parse(&edit(5, "vendid=0x2g9"), "t"),
            "t",
            5,
            "bad number '0x2g9' for vendid",
        );
        assert_error(
            parse(&edit(5, "devid=0x10000"), "t"),
            "t",
            5,
            "devid 0x10000 is out of range",
        );
        assert_error(
            parse(&edit(3, "[1](2q) \t\"host\"[1]"), "t"),
            "t",
            3,
            "bad port GUID '2q'",
        );
        assert_error(
            parse(&edit(2, "Switch\t0x1g \"sw\""), "t"),
            "t",
            2,
            "bad port count '0x1g'",
        );
    }

    #[test]
    fn refuses_to_write_what_ibsim_would_change() {
        for desc in ["", "say \"hi\"", "line\nbreak", &"x".repeat(64)] {
            let mut b = crate::FabricBuilder::new();
            b.add_node(NodeSpec::new(NodeKind::Ca, Guid(1), 1, desc))
                .unwrap();
            let err = write(&b.build(), &mut Vec::new()).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{desc:?}");
        }
        let mut b = crate::FabricBuilder::new();
        let rt = b
            .add_node(NodeSpec::new(NodeKind::Router, Guid(1), 1, "r"))
            .unwrap();
        let ca = b
            .add_node(NodeSpec::new(NodeKind::Ca, Guid(9), 1, "h"))
            .unwrap();
        b.connect(
            PortRef::new(rt, 1),
            PortRef::new(ca, 1),
            r(LinkWidth::X4, LinkSpeed::Fdr10),
        )
        .unwrap();
        assert_eq!(
            write(&b.build(), &mut Vec::new()).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    }
}
