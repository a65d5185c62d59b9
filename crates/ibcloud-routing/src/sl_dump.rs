//! The path-SL dump: the service level of every (source LID, destination
//! LID) path, in the form OpenSM prints its SL table.
//!
//! OpenSM 3.3.23 writes no file with path SLs: the SLs of dfsssp (and lash)
//! only leave the SM in SA PathRecord answers. At debug verbosity (`-D 0x08`
//! or more) dfsssp logs its whole table after balancing, one line per ordered
//! pair of end-port LIDs (CA ports and switch ports 0), sources outer and
//! destinations inner, both ascending:
//!
//! ```text
//! route from src_lid=1 to dest_lid=2 on vl=0
//! ```
//!
//! (the log's `vl` is the SL handed out; OpenSM maps SL n to VL n.) This dump
//! is those lines, preceded by comments; the header `# lids:` lists the LIDs
//! the table covers as ranges, so a compact dump that leaves out SL-0 pairs
//! keeps them:
//!
//! ```text
//! # ibcloud path SLs (OpenSM dfsssp log form): SL of each (source LID, destination LID)
//! # lids: 1-32,33-44
//! route from src_lid=1 to dest_lid=2 on vl=0
//! ```
//!
//! [`parse`] reads a dump; [`parse_opensm_log`] reads the lines straight out
//! of an OpenSM log (skipping everything else). Pairs a dump does not list
//! are on SL 0. For dfsssp these SLs are the first SL of each layer's range;
//! OpenSM answers path records with that SL plus a random offset within the
//! range (see [`crate::engines::dfsssp`]).
//!
//! ```
//! use ibcloud_fabric::Lid;
//! use ibcloud_routing::{sl_dump, PathSls};
//! let mut sls = PathSls::new(&[Lid(1), Lid(2), Lid(3)]);
//! sls.set(Lid(1), Lid(3), 2);
//! let mut out = Vec::new();
//! sl_dump::write(&sls, &mut out, sl_dump::Mode::Full)?;
//! let text = String::from_utf8(out).unwrap();
//! assert!(text.contains("route from src_lid=1 to dest_lid=3 on vl=2\n"));
//! assert_eq!(sl_dump::parse(&text, "sl.dump")?, sls);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::sl::PathSls;
use ibcloud_fabric::{FabricError, Lid, ParseError};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};

/// A file name for the dump (OpenSM has none).
pub const FILE_NAME: &str = "ibcloud-path-sls.dump";

const MARKER: &str = "route from src_lid=";

/// Which pairs [`write()`] lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// Every ordered pair of distinct LIDs, as OpenSM logs them (n² lines).
    #[default]
    Full,
    /// Only pairs off SL 0 (the `# lids:` header keeps the others).
    NonZero,
}

/// Writes `sls` as a path-SL dump.
pub fn write(sls: &PathSls, out: &mut impl Write, mode: Mode) -> io::Result<()> {
    let mut lids = sls.lids().to_vec();
    lids.sort_unstable();
    lids.dedup();
    writeln!(
        out,
        "# ibcloud path SLs (OpenSM dfsssp log form): SL of each (source LID, destination LID)"
    )?;
    writeln!(out, "# lids: {}", ranges(&lids))?;
    let mut line = String::new();
    for &s in &lids {
        for &d in &lids {
            if s == d {
                continue;
            }
            let sl = sls.get(s, d);
            if mode == Mode::NonZero && sl == 0 {
                continue;
            }
            line.clear();
            use std::fmt::Write as _;
            let _ = writeln!(line, "{MARKER}{} to dest_lid={} on vl={sl}", s.0, d.0);
            out.write_all(line.as_bytes())?;
        }
    }
    Ok(())
}

/// `1-32,33,40-44`.
fn ranges(lids: &[Lid]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < lids.len() {
        let mut j = i;
        while j + 1 < lids.len() && lids[j + 1].0 == lids[j].0 + 1 {
            j += 1;
        }
        parts.push(if i == j {
            lids[i].0.to_string()
        } else {
            format!("{}-{}", lids[i].0, lids[j].0)
        });
        i = j + 1;
    }
    parts.join(",")
}

fn parse_lid(word: &str, file: &str, no: usize) -> Result<Lid, ParseError> {
    word.parse::<u16>()
        .ok()
        .map(Lid)
        .filter(|l| l.is_unicast())
        .ok_or_else(|| ParseError::new(file, no, format!("bad LID '{word}' (expected 1-49151)")))
}

fn parse_ranges(text: &str, file: &str, no: usize) -> Result<BTreeSet<Lid>, ParseError> {
    let mut set = BTreeSet::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let (lo, hi) = (
            parse_lid(lo.trim(), file, no)?,
            parse_lid(hi.trim(), file, no)?,
        );
        if lo > hi {
            return Err(ParseError::new(file, no, format!("bad LID range '{part}'")));
        }
        set.extend((lo.0..=hi.0).map(Lid));
    }
    Ok(set)
}

/// `src_lid=1 to dest_lid=2 on vl=0` (after the marker's `src_lid=`).
fn parse_route(rest: &str, file: &str, no: usize) -> Result<(Lid, Lid, u8), ParseError> {
    let bad = || {
        ParseError::new(
            file,
            no,
            format!(
                "expected 'route from src_lid=S to dest_lid=D on vl=N', found '{MARKER}{rest}'"
            ),
        )
    };
    let mut words = rest.split_whitespace();
    let (Some(s), Some("to"), Some(d), Some("on"), Some(v), None) = (
        words.next(),
        words.next(),
        words.next(),
        words.next(),
        words.next(),
        words.next(),
    ) else {
        return Err(bad());
    };
    let d = d.strip_prefix("dest_lid=").ok_or_else(bad)?;
    let v = v.strip_prefix("vl=").ok_or_else(bad)?;
    let sl = v
        .parse::<u8>()
        .ok()
        .filter(|&x| x <= 15)
        .ok_or_else(|| ParseError::new(file, no, format!("bad SL '{v}' (expected 0-15)")))?;
    Ok((parse_lid(s, file, no)?, parse_lid(d, file, no)?, sl))
}

fn read(text: &str, file: &str, log: bool) -> Result<PathSls, FabricError> {
    if text.trim().is_empty() {
        return Err(ParseError::new(file, 1, "empty file: no path SLs").into());
    }
    let mut header: Option<BTreeSet<Lid>> = None;
    let mut pairs: BTreeMap<(Lid, Lid), (u8, usize)> = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let line = raw.trim();
        let route = line.find(MARKER).map(|at| &line[at + MARKER.len()..]);
        let Some(rest) = route else {
            if let Some(list) = line
                .strip_prefix('#')
                .map(str::trim)
                .and_then(|c| c.strip_prefix("lids:"))
            {
                if header.is_some() {
                    return Err(ParseError::new(file, no, "a second '# lids:' header").into());
                }
                header = Some(parse_ranges(list, file, no)?);
            } else if !(log || line.is_empty() || line.starts_with('#')) {
                return Err(ParseError::new(
                    file,
                    no,
                    format!(
                        "expected a '{MARKER}...' line, found {}",
                        ibcloud_fabric::error::excerpt(line)
                    ),
                )
                .into());
            }
            continue;
        };
        if !log && !line.starts_with(MARKER) {
            return Err(
                ParseError::new(file, no, format!("unexpected text before '{MARKER}'")).into(),
            );
        }
        let (s, d, sl) = parse_route(rest, file, no)?;
        if s == d {
            return Err(
                ParseError::new(file, no, format!("a path from LID {} to itself", s.0)).into(),
            );
        }
        if let Some((_, first)) = pairs.insert((s, d), (sl, no)) {
            return Err(ParseError::new(
                file,
                no,
                format!("pair {} -> {} is already listed at line {first}", s.0, d.0),
            )
            .into());
        }
    }
    let lids: BTreeSet<Lid> = match header {
        Some(h) => {
            if let Some(((s, d), (_, no))) = pairs
                .iter()
                .find(|((s, d), _)| !h.contains(s) || !h.contains(d))
            {
                return Err(ParseError::new(
                    file,
                    *no,
                    format!(
                        "pair {} -> {} uses a LID the '# lids:' header does not list",
                        s.0, d.0
                    ),
                )
                .into());
            }
            h
        }
        None => pairs.keys().flat_map(|&(s, d)| [s, d]).collect(),
    };
    let lids: Vec<Lid> = lids.into_iter().collect();
    let mut sls = PathSls::new(&lids);
    for (&(s, d), &(sl, _)) in &pairs {
        sls.set(s, d, sl);
    }
    Ok(sls)
}

/// Parses a path-SL dump; `file` names it in errors. Only comments, blank
/// lines and route lines are allowed; a pair listed twice, a path to itself,
/// a bad LID or an SL above 15 is an error naming the line.
pub fn parse(text: &str, file: &str) -> Result<PathSls, FabricError> {
    read(text, file, false)
}

/// Reads the route lines of an OpenSM log (debug verbosity, dfsssp), ignoring
/// every other line. The LIDs are those the lines mention.
pub fn parse_opensm_log(text: &str, file: &str) -> Result<PathSls, FabricError> {
    read(text, file, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> PathSls {
        let lids: Vec<Lid> = [1u16, 2, 3, 7, 9, 10].into_iter().map(Lid).collect();
        let mut p = PathSls::new(&lids);
        p.set(Lid(1), Lid(9), 3);
        p.set(Lid(10), Lid(2), 1);
        p.set(Lid(7), Lid(3), 15);
        p
    }

    fn render(p: &PathSls, mode: Mode) -> String {
        let mut out = Vec::new();
        write(p, &mut out, mode).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn round_trip_full_and_compact() {
        let p = sample();
        let full = render(&p, Mode::Full);
        assert_eq!(full.lines().filter(|l| l.starts_with(MARKER)).count(), 30);
        assert!(full.contains("# lids: 1-3,7,9-10\n"));
        assert_eq!(parse(&full, "f").unwrap(), p);
        let compact = render(&p, Mode::NonZero);
        assert_eq!(compact.lines().count(), 5);
        assert_eq!(parse(&compact, "c").unwrap(), p);
    }

    #[test]
    fn reads_opensm_log_lines() {
        let log = "Nov 21 07:53:57 537191 [B246C6C0] 0x08 -> vltable_print:    route from src_lid=1 to dest_lid=2 on vl=0\n\
                   Nov 21 07:53:57 537191 [B246C6C0] 0x02 -> something else\n\
                   Nov 21 07:53:57 537191 [B246C6C0] 0x08 -> vltable_print:    route from src_lid=2 to dest_lid=1 on vl=4\n";
        let p = parse_opensm_log(log, "opensm.log").unwrap();
        assert_eq!(p.lids(), &[Lid(1), Lid(2)]);
        assert_eq!((p.get(Lid(1), Lid(2)), p.get(Lid(2), Lid(1))), (0, 4));
        assert!(
            parse(log, "opensm.log").is_err(),
            "the strict reader wants a dump"
        );
    }

    #[test]
    fn rejects_bad_lines() {
        let cases = [
            ("route from src_lid=1 to dest_lid=2 on vl=16\n", ":1: bad SL"),
            ("route from src_lid=0 to dest_lid=2 on vl=1\n", ":1: bad LID"),
            ("route from src_lid=1 to dest_lid=1 on vl=1\n", "to itself"),
            (
                "route from src_lid=1 to dest_lid=2 on vl=1\nroute from src_lid=1 to dest_lid=2 on vl=1\n",
                ":2: pair 1 -> 2 is already",
            ),
            ("route from src_lid=1 to dest_lid=2\n", "expected 'route from"),
            ("# lids: 1-2\nroute from src_lid=1 to dest_lid=3 on vl=1\n", "header does not list"),
            ("# lids: 5-2\n", "bad LID range"),
            ("hello\n", "expected a 'route from"),
        ];
        for (text, want) in cases {
            let e = parse(text, "x").unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
