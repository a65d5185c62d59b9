//! OpenSM's `partitions.conf` (OpenSM 3.3.23, `osm_prtn_config.c` and
//! `doc/partition-config.txt`): reader and writer, plus the QoS files that make
//! a real OpenSM hand out each partition's SL.
//!
//! Grammar, as OpenSM parses it line by line (`#` starts a comment):
//!
//! ```text
//! [Name][=PKey][,flag[=value]]* : [PortGUID[=full|limited|both]][,…]* ;
//! ```
//!
//! A definition ends at `;` and may span lines, but its header (up to `:`)
//! must be on one line. `mgid=…` consumes the rest of its line. Keywords
//! `ALL`, `ALL_CAS`, `ALL_SWITCHES`, `ALL_ROUTERS`, `SELF`, `NONE` and the
//! flag names are matched as OpenSM matches them: a word that is a prefix of
//! the keyword selects it. Definitions with the same P_Key are merged.
//!
//! Errors are OpenSM's fatal ones — `no partition definition found`,
//! `bad partition flags`, `bad partition definition`, `bad PortGUID` — with
//! file, line and column; where OpenSM only warns (unknown flag, bad `sl`
//! value, unknown port flag) we return a warning and go on as it does.
//!
//! pFTree-Ext's policies travel as partition flags OpenSM 3.3.23 ignores with
//! a `PARSE WARN … unrecognized partition flag … ignored` at verbose level:
//! `isolation=phy|vlane|def` per partition and `global_isolation=strict|best-effort`
//! (the writer puts the latter on the default partition). Neither word is a
//! prefix of an OpenSM flag, so OpenSM never mistakes them for one.
//!
//! ```
//! use ibcloud_fabric::formats::partitions_conf::{parse, write};
//! let text = "Default=0x7fff, ipoib : ALL=full, SELF=full ;\n\
//!             gold=0x8001, sl=1, isolation=vlane :\n  0x10=full, 0x11 ;\n";
//! let conf = parse(text, "partitions.conf")?;
//! assert_eq!(conf.partitions[1].pkey, Some(1)); // the membership bit is dropped
//! let mut out = Vec::new();
//! write(&conf, &mut out).unwrap();
//! assert_eq!(parse(std::str::from_utf8(&out).unwrap(), "x")?.partitions[1].members.len(), 2);
//! let bad = parse("gold=0x1 0x10 ;", "p.conf").unwrap_err();
//! assert_eq!((bad.line, bad.column), (1, 1));
//! # Ok::<(), ibcloud_fabric::formats::partitions_conf::PartitionsConfError>(())
//! ```

use crate::error::excerpt;
use crate::ids::Guid;
use crate::partitions::{
    GlobalPolicy, Isolation, Member, MemberSpec, Membership, Partition, PartitionConfig,
};
use std::fmt;
use std::io::{self, Write};

/// Longest line read: a definition spans lines, so no real line comes near it.
pub const MAX_LINE: usize = 64 * 1024;

/// OpenSM's default file name.
pub const FILE_NAME: &str = "partitions.conf";

/// A syntax error OpenSM would reject the file for, with its place.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {problem}")]
pub struct PartitionsConfError {
    /// File name as given.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (characters).
    pub column: usize,
    /// What is wrong (OpenSM's wording first).
    pub problem: String,
}

/// Something OpenSM accepts with a warning (and so do we).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfWarning {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What was ignored or assumed.
    pub message: String,
}

impl fmt::Display for ConfWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}:{}: {}", self.line, self.column, self.message)
    }
}

/// Reads a partitions.conf; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<PartitionConfig, PartitionsConfError> {
    parse_with_warnings(text, file).map(|(c, _)| c)
}

/// Reads a partitions.conf and returns what OpenSM would have warned about.
pub fn parse_with_warnings(
    text: &str,
    file: &str,
) -> Result<(PartitionConfig, Vec<ConfWarning>), PartitionsConfError> {
    let mut p = Parser {
        file,
        conf: PartitionConfig::default(),
        warnings: Vec::new(),
        current: None,
        line: 0,
        text: "",
    };
    for (i, raw) in text.split('\n').enumerate() {
        p.line = i + 1;
        if raw.len() > MAX_LINE {
            return Err(PartitionsConfError {
                file: file.to_owned(),
                line: p.line,
                column: 1,
                problem: format!(
                    "line of {} bytes: longer than any partition definition line ({MAX_LINE} at most)",
                    raw.len()
                ),
            });
        }
        let line = match raw.find('#') {
            Some(h) => &raw[..h],
            None => raw,
        };
        p.text = line;
        p.parse_line()?;
    }
    // OpenSM keeps a definition cut off before its ';' and an empty file;
    // both are far more often a truncated or wrong file than an intent.
    if let Some(i) = p.current {
        let part = &p.conf.partitions[i];
        return Err(PartitionsConfError {
            file: file.to_owned(),
            line: p.line,
            column: 1,
            problem: format!(
                "the file ends inside the definition of partition {} (line {}): no closing ';' (truncated file?)",
                excerpt(&part.name),
                part.line
            ),
        });
    }
    // An empty file (0 bytes, or blanks only) is a failed copy; a file of
    // comments only (ibcloud writes one for an empty configuration) is not.
    if p.conf.partitions.is_empty() && text.trim().is_empty() {
        return Err(PartitionsConfError {
            file: file.to_owned(),
            line: p.line.max(1),
            column: 1,
            problem: "no partition definition found: the file is empty".into(),
        });
    }
    Ok((p.conf, p.warnings))
}

struct Parser<'a> {
    file: &'a str,
    conf: PartitionConfig,
    warnings: Vec<ConfWarning>,
    /// Index of the partition whose definition is open (no `;` yet).
    current: Option<usize>,
    line: usize,
    text: &'a str,
}

fn is_ws(c: char) -> bool {
    c == ' ' || c == '\t' || c == '\r'
}

/// strtoul/strtoull with base 0: `0x` hex, leading `0` octal, else decimal;
/// the whole (trimmed) word must be a number.
fn c_number(s: &str) -> Option<u64> {
    let s = s.trim_matches(is_ws);
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    // strtoul saturates on overflow and still consumes every digit.
    Some(u64::from_str_radix(digits, radix).unwrap_or(u64::MAX))
}

/// OpenSM's `strncmp(word, keyword, strlen(word)) == 0` for a non-empty word.
fn prefix_of(word: &str, keyword: &str) -> bool {
    !word.is_empty() && keyword.starts_with(word)
}

/// Splits `name[=value]` with both sides trimmed.
fn name_value(token: &str) -> (&str, Option<&str>) {
    match token.find('=') {
        Some(e) => (
            token[..e].trim_matches(is_ws),
            Some(token[e + 1..].trim_matches(is_ws)),
        ),
        None => (token.trim_matches(is_ws), None),
    }
}

impl Parser<'_> {
    fn column(&self, byte: usize) -> usize {
        self.text[..byte.min(self.text.len())].chars().count() + 1
    }

    fn error(&self, byte: usize, problem: impl Into<String>) -> PartitionsConfError {
        PartitionsConfError {
            file: self.file.to_owned(),
            line: self.line,
            column: self.column(byte),
            problem: problem.into(),
        }
    }

    fn warn(&mut self, byte: usize, message: impl Into<String>) {
        self.warnings.push(ConfWarning {
            line: self.line,
            column: self.column(byte),
            message: message.into(),
        });
    }

    /// Offset of the first non-blank byte of `token` (which starts at `start`).
    fn first_char(token: &str, start: usize) -> usize {
        start + (token.len() - token.trim_start_matches(is_ws).len())
    }

    fn parse_line(&mut self) -> Result<(), PartitionsConfError> {
        let mut pos = 0;
        let len = self.text.len();
        loop {
            while pos < len && is_ws(self.text[pos..].chars().next().unwrap_or('x')) {
                pos += 1;
            }
            if pos >= len {
                return Ok(());
            }
            let semi = self.text[pos..].find(';').map(|s| pos + s);
            let end = semi.unwrap_or(len);
            let mut body = pos;
            if self.current.is_none() {
                let Some(colon) = self.text[pos..end].find(':').map(|c| pos + c) else {
                    return Err(self.error(
                        pos,
                        "no partition definition found (a header 'Name=PKey[,flags] :' must end with ':' on its line)",
                    ));
                };
                self.header(pos, colon)?;
                body = colon + 1;
            }
            self.body(body, end)?;
            match semi {
                Some(s) => {
                    self.current = None;
                    pos = s + 1;
                }
                None => return Ok(()),
            }
        }
    }

    fn header(&mut self, start: usize, colon: usize) -> Result<(), PartitionsConfError> {
        let text = self.text;
        let mut tokens = Vec::new();
        let mut t0 = start;
        for (i, c) in text[start..colon].char_indices() {
            if c == ',' {
                tokens.push((t0, &text[t0..start + i]));
                t0 = start + i + 1;
            }
        }
        tokens.push((t0, &text[t0..colon]));
        let (n0, first) = tokens[0];
        let (mut name, mut id) = name_value(first);
        if id.is_none() && name.starts_with(|c: char| c.is_ascii_digit()) {
            id = Some(name);
            name = "";
        }
        let pkey = match id {
            None => None,
            Some(id) => match c_number(id) {
                // A P_Key is 16 bits; OpenSM would keep the low 16 bits of a
                // larger number (strtoul saturates), silently turning it into
                // another partition's key.
                Some(v) if v > 0xFFFF => {
                    let at = Self::first_char(first, n0) + first.find('=').map_or(0, |e| e + 1);
                    return Err(self.error(
                        at,
                        format!(
                            "bad partition definition: P_Key {} is above 0xFFFF (a P_Key has 16 bits)",
                            excerpt(id)
                        ),
                    ));
                }
                Some(v) => {
                    let k = (v as u16) & 0x7FFF;
                    (k != 0).then_some(k)
                }
                None => {
                    let at = Self::first_char(first, n0) + first.find('=').map_or(0, |e| e + 1);
                    return Err(self.error(
                        at,
                        format!(
                            "bad partition definition: P_Key {} is not a number",
                            excerpt(id)
                        ),
                    ));
                }
            },
        };
        let mut part = Partition {
            name: name.to_owned(),
            pkey,
            defmember: None,
            ipoib: false,
            sl: None,
            isolation: None,
            other_flags: Vec::new(),
            mgroups: Vec::new(),
            members: Vec::new(),
            line: self.line,
        };
        for &(t, token) in &tokens[1..] {
            let (flag, val) = name_value(token);
            let at = Self::first_char(token, t);
            if flag.is_empty() {
                return Err(self.error(at, "bad partition flags: empty flag name"));
            }
            self.flag(&mut part, flag, val, at)?;
        }
        // Merge with an earlier definition of the same P_Key.
        if let Some(k) = pkey {
            if let Some(i) = self.conf.partitions.iter().position(|p| p.pkey == Some(k)) {
                let old = &mut self.conf.partitions[i];
                old.ipoib |= part.ipoib;
                old.defmember = part.defmember.or(old.defmember);
                old.sl = part.sl.or(old.sl);
                old.isolation = part.isolation.or(old.isolation);
                old.other_flags.extend(part.other_flags);
                self.current = Some(i);
                return Ok(());
            }
        }
        self.conf.partitions.push(part);
        self.current = Some(self.conf.partitions.len() - 1);
        Ok(())
    }

    fn flag(
        &mut self,
        part: &mut Partition,
        flag: &str,
        val: Option<&str>,
        at: usize,
    ) -> Result<(), PartitionsConfError> {
        // OpenSM's order: multicast-group flags, then partition flags.
        let group = ["mtu", "rate", "scope", "Q_Key", "TClass"];
        if group.iter().any(|g| prefix_of(flag, g)) || prefix_of(flag, "FlowLabel") {
            part.other_flags
                .push((flag.to_owned(), val.map(str::to_owned)));
            return Ok(());
        }
        if prefix_of(flag, "sl") {
            match val.and_then(c_number) {
                Some(v) if v <= 15 => part.sl = Some(v as u8),
                _ => self.warn(at, "flag 'sl' requires valid value - skipped"),
            }
            return Ok(());
        }
        if prefix_of(flag, "ipoib") {
            part.ipoib = true;
        } else if prefix_of(flag, "defmember") {
            let v = val.unwrap_or("");
            // OpenSM: strncmp(val, kw, strlen(val)); an empty value reads as limited.
            let m = if v.is_empty() || prefix_of(v, "limited") {
                Some(Membership::Limited)
            } else if prefix_of(v, "both") {
                Some(Membership::Both)
            } else if prefix_of(v, "full") {
                Some(Membership::Full)
            } else {
                None
            };
            match (val, m) {
                (Some(_), Some(m)) => part.defmember = Some(m),
                _ => self.warn(
                    at,
                    "flag 'defmember' requires valid value (limited or full or both) - skipped",
                ),
            }
        } else if flag == "isolation" {
            let v = val.unwrap_or("");
            part.isolation = Some(v.parse::<Isolation>().map_err(|e| self.error(at, e))?);
        } else if flag == "global_isolation" {
            let v = val.unwrap_or("");
            self.conf.global = Some(v.parse::<GlobalPolicy>().map_err(|e| self.error(at, e))?);
        } else {
            if flag != "indx0" {
                self.warn(
                    at,
                    format!("unrecognized partition flag {} - ignored", excerpt(flag)),
                );
            }
            part.other_flags
                .push((flag.to_owned(), val.map(str::to_owned)));
        }
        Ok(())
    }

    fn body(&mut self, start: usize, end: usize) -> Result<(), PartitionsConfError> {
        let Some(ci) = self.current else {
            return Ok(());
        };
        let text = self.text;
        let mut t0 = start;
        let mut cut: Vec<(usize, usize)> = Vec::new();
        for (i, c) in text[start..end].char_indices() {
            if c == ',' {
                cut.push((t0, start + i));
                t0 = start + i + 1;
            }
        }
        cut.push((t0, end));
        for &(a, b) in &cut {
            let token = &text[a..b];
            let (name, flag) = name_value(token);
            let at = Self::first_char(token, a);
            if name == "mgid" {
                let raw = text[a..end].trim_matches(is_ws);
                let raw = raw["mgid".len()..].trim_start_matches(is_ws);
                let raw = raw.strip_prefix('=').unwrap_or(raw).trim_matches(is_ws);
                self.conf.partitions[ci].mgroups.push(raw.to_owned());
                return Ok(());
            }
            if name.is_empty() || prefix_of(name, "NONE") {
                continue;
            }
            let membership = match flag {
                None => None,
                Some(f) if prefix_of(f, "full") => Some(Membership::Full),
                Some(f) if prefix_of(f, "both") => Some(Membership::Both),
                Some(f) if prefix_of(f, "limited") => Some(Membership::Limited),
                Some(f) => {
                    self.warn(
                        at,
                        format!("unrecognized port flag {}. Assume 'limited'", excerpt(f)),
                    );
                    Some(Membership::Limited)
                }
            };
            let spec = if prefix_of(name, "ALL") {
                MemberSpec::All
            } else if prefix_of(name, "ALL_CAS") {
                MemberSpec::AllCas
            } else if prefix_of(name, "ALL_SWITCHES") {
                MemberSpec::AllSwitches
            } else if prefix_of(name, "ALL_ROUTERS") {
                MemberSpec::AllRouters
            } else if prefix_of(name, "SELF") {
                MemberSpec::SelfPort
            } else {
                match c_number(name) {
                    Some(g) if g != 0 => MemberSpec::Guid(Guid(g)),
                    _ => {
                        return Err(self.error(
                            at,
                            format!("bad PortGUID '{name}' (a non-zero number, 0x… for hex, or ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF)"),
                        ))
                    }
                }
            };
            self.conf.partitions[ci].members.push(Member {
                spec,
                membership,
                line: self.line,
            });
        }
        Ok(())
    }
}

fn check_word(what: &str, s: &str) -> io::Result<()> {
    let bad = s
        .chars()
        .any(|c| matches!(c, ',' | '=' | ':' | ';' | '#' | '\n' | '\r') || c.is_whitespace());
    if bad {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what} '{s}' cannot be written to partitions.conf (no , = : ; # or blanks)"),
        ));
    }
    Ok(())
}

/// Writes `conf` in OpenSM's syntax, one definition per partition (the
/// global policy goes on the default partition, or on the first one).
pub fn write(conf: &PartitionConfig, out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "# partitions.conf written by ibcloud (OpenSM 3.3.23 syntax)"
    )?;
    writeln!(
        out,
        "# isolation= and global_isolation= are pFTree-Ext policies; OpenSM ignores them"
    )?;
    let global_at = conf
        .partitions
        .iter()
        .position(|p| p.is_default())
        .unwrap_or(0);
    for (i, p) in conf.partitions.iter().enumerate() {
        check_word("partition name", &p.name)?;
        let mut head = p.name.clone();
        if let Some(k) = p.pkey {
            head.push_str(&format!("=0x{k:04x}"));
        } else if p.name.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "partition name '{}' starts with a digit and has no P_Key",
                    p.name
                ),
            ));
        }
        if p.ipoib {
            head.push_str(", ipoib");
        }
        if let Some(m) = p.defmember {
            head.push_str(&format!(", defmember={}", m.keyword()));
        }
        if let Some(sl) = p.sl {
            head.push_str(&format!(", sl={sl}"));
        }
        for (f, v) in &p.other_flags {
            check_word("flag", f)?;
            head.push_str(", ");
            head.push_str(f);
            if let Some(v) = v {
                check_word("flag value", v)?;
                head.push('=');
                head.push_str(v);
            }
        }
        if let Some(iso) = p.isolation {
            head.push_str(&format!(", isolation={}", iso.keyword()));
        }
        if i == global_at {
            if let Some(g) = conf.global {
                head.push_str(&format!(", global_isolation={}", g.keyword()));
            }
        }
        // The closing `;` goes on the last line of the definition: OpenSM
        // 3.3.23 reports "no partition definition found" for a line holding
        // only `;` after a definition spread over several member lines.
        let members: Vec<String> = p
            .members
            .iter()
            .map(|m| match m.membership {
                Some(ms) => format!("{}={}", m.spec, ms.keyword()),
                None => m.spec.to_string(),
            })
            .collect();
        for m in &p.mgroups {
            if m.contains(';') || m.contains('#') || m.contains('\n') {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("multicast group '{m}' cannot be written"),
                ));
            }
        }
        let mut lines: Vec<String> = p.mgroups.iter().map(|m| format!("\tmgid={m}")).collect();
        let chunks: Vec<&[String]> = members.chunks(4).collect();
        for (j, chunk) in chunks.iter().enumerate() {
            let sep = if j + 1 < chunks.len() { "," } else { "" };
            lines.push(format!("\t{}{sep}", chunk.join(", ")));
        }
        match lines.last_mut() {
            None => writeln!(out, "{head} : ;")?,
            Some(last) => {
                last.push_str(" ;");
                writeln!(out, "{head} :")?;
                for l in &lines {
                    writeln!(out, "{l}")?;
                }
            }
        }
    }
    Ok(())
}

/// The QoS side of a partition set-up for OpenSM 3.3.23.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QosSetup {
    /// (P_Key, SL) per partition with its own SL.
    pub pkey_sls: Vec<(u16, u8)>,
    /// Operational data VLs (1..=15).
    pub max_vls: u8,
    /// SL → VL (16 entries).
    pub sl2vl: [u8; 16],
}

impl QosSetup {
    /// The opensm.conf options: QoS on, SL2VL and equal-weight low-priority
    /// VL arbitration over the data VLs (append to an opensm.conf or pass
    /// with `--config`).
    pub fn write_opensm_conf(&self, out: &mut impl Write) -> io::Result<()> {
        let vls = self.max_vls.clamp(1, 15);
        writeln!(out, "# QoS for the partitions' SLs (written by ibcloud)")?;
        writeln!(out, "qos TRUE")?;
        writeln!(out, "qos_max_vls {vls}")?;
        writeln!(out, "qos_high_limit 0")?;
        writeln!(out, "qos_vlarb_high 0:0")?;
        let low: Vec<String> = (0..vls).map(|v| format!("{v}:64")).collect();
        writeln!(out, "qos_vlarb_low {}", low.join(","))?;
        let sl2vl: Vec<String> = self.sl2vl.iter().map(|v| v.to_string()).collect();
        writeln!(out, "qos_sl2vl {}", sl2vl.join(","))?;
        Ok(())
    }

    /// A qos-policy.conf (`qos-ulps` section): the SL of each partition's P_Key.
    pub fn write_qos_policy(&self, out: &mut impl Write) -> io::Result<()> {
        writeln!(
            out,
            "# qos-policy.conf written by ibcloud: SL per partition"
        )?;
        writeln!(out, "qos-ulps")?;
        writeln!(out, "    default : 0")?;
        for &(pkey, sl) in &self.pkey_sls {
            writeln!(out, "    any, pkey 0x{:04X} : {sl}", pkey & 0x7FFF)?;
        }
        writeln!(out, "end-qos-ulps")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "\
 Default=0x7fff : ALL, SELF=full ;
 NewPartition , ipoib : 0x123456=full, 0x3456789034=limi, 0x2134af2306 ;
 YetAnotherOne = 0x300 : SELF=full ;
 YetAnotherOne = 0x300 : ALL=limited ;
 ShareIO = 0x80 , defmember=full : 0x123451, 0x123452;
 # 0x123453, 0x123454 will be limited
 ShareIO = 0x80 : 0x123453, 0x123454, 0x123455=full;
 Default=0x7fff,ipoib:
        mgid=ff12:401b::0707,sl=1 # random IPv4 group
        mgid=ff12::1,sl=1,Q_Key=0xDEADBEEF,rate=3,mtu=2 # random group
        ALL=full;
";

    #[test]
    fn opensm_doc_examples_parse() {
        let (c, w) = parse_with_warnings(DOC, "doc").unwrap();
        assert!(w.is_empty(), "{w:?}");
        // Default, NewPartition (auto P_Key), YetAnotherOne, ShareIO (merged).
        assert_eq!(c.partitions.len(), 4);
        let d = &c.partitions[0];
        assert!(d.is_default() && d.ipoib);
        assert_eq!(d.mgroups.len(), 2);
        assert_eq!(d.members.len(), 3);
        assert_eq!(c.partitions[1].pkey, None);
        assert_eq!(
            c.partitions[1].members[1].membership,
            Some(Membership::Limited)
        );
        assert_eq!(c.partitions[2].members.len(), 2);
        let s = &c.partitions[3];
        assert_eq!((s.pkey, s.members.len()), (Some(0x80), 5));
        assert_eq!(s.defmember, Some(Membership::Full));
    }

    #[test]
    fn errors_have_line_and_column() {
        let e = parse("# c\n  p1=0x1 0x5 ;", "f").unwrap_err();
        assert_eq!((e.line, e.column), (2, 3));
        assert!(e.problem.starts_with("no partition definition found"));
        let e = parse("p1=0x1, ,ipoib : ALL ;", "f").unwrap_err();
        assert!(e.problem.starts_with("bad partition flags"));
        assert_eq!(e.column, 9);
        let e = parse("p1=0xZZ : ALL ;", "f").unwrap_err();
        assert!(e.problem.starts_with("bad partition definition"));
        assert_eq!(e.column, 4);
        let e = parse("p1=1 :\n  0x10, 0x1g=full ;", "f").unwrap_err();
        assert_eq!((e.line, e.column), (2, 9));
        assert!(e.problem.starts_with("bad PortGUID"));
        let e = parse("p1=1, isolation=wall : ALL ;", "f").unwrap_err();
        assert!(e.problem.contains("unknown isolation policy"));
        assert_eq!(
            e.to_string(),
            "f:1:7: unknown isolation policy 'wall' (expected phy, vlane or def)"
        );
    }

    #[test]
    fn warnings_like_opensm() {
        let (c, w) = parse_with_warnings("p=2, sl=99, frobnicate : 0x5=fool ;", "f").unwrap();
        assert_eq!(w.len(), 3, "{w:?}");
        assert_eq!(c.partitions[0].sl, None);
        assert_eq!(
            c.partitions[0].members[0].membership,
            Some(Membership::Limited)
        );
    }

    #[test]
    fn policies_round_trip() {
        let text = "Default=0x7fff, global_isolation=strict : ALL=full ;\n\
                    a=0x10, sl=2, isolation=vlane : 0x1=full, 0x2 ;\n";
        let c = parse(text, "f").unwrap();
        assert_eq!(c.global, Some(GlobalPolicy::Strict));
        assert_eq!(c.partitions[1].isolation, Some(Isolation::Vlane));
        let mut out = Vec::new();
        write(&c, &mut out).unwrap();
        let back = parse(std::str::from_utf8(&out).unwrap(), "g").unwrap();
        let strip = |mut c: PartitionConfig| {
            for p in &mut c.partitions {
                p.line = 0;
                for m in &mut p.members {
                    m.line = 0;
                }
            }
            c
        };
        assert_eq!(strip(back), strip(c));
    }

    #[test]
    fn qos_files() {
        let q = QosSetup {
            pkey_sls: vec![(1, 1), (2, 2)],
            max_vls: 4,
            sl2vl: [0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        };
        let mut a = Vec::new();
        q.write_opensm_conf(&mut a).unwrap();
        let a = String::from_utf8(a).unwrap();
        assert!(a.contains("qos_sl2vl 0,1,2,3,0,0,0,0,0,0,0,0,0,0,0,0\n"));
        assert!(a.contains("qos_vlarb_low 0:64,1:64,2:64,3:64\n"));
        let mut b = Vec::new();
        q.write_qos_policy(&mut b).unwrap();
        assert!(String::from_utf8(b)
            .unwrap()
            .contains("any, pkey 0x0002 : 2"));
    }
}
