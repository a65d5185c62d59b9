//! Readers and writers for the file formats of the field.
//!
//! | format | module | read | write |
//! |---|---|---|---|
//! | ibnetdiscover topology | [`ibnetdiscover`] | yes | yes |
//! | ibsim net file | [`ibsim`] | yes | yes |
//! | ibcloud native (binary) | [`native`] | yes | yes |
//! | OpenSM `opensm-subnet.lst` | [`subnet_lst`] | yes | no |
//! | OpenSM `opensm-lfts.dump` (tables) | [`lfts_dump`] | yes | yes |
//! | OpenSM `guid2lid` (LIDs) | [`guid2lid`] | yes | yes |
//! | OpenSM `opensm.fdbs` (tables for ibdmchk), `ibroute` output | [`fdbs`] | yes | yes (fdbs) |
//! | OpenSM `partitions.conf`, QoS options | [`partitions_conf`] | yes | yes |
//!
//! Text readers report problems as `file:line: problem` ([`ParseError`]).

pub mod fdbs;
pub mod guid2lid;
pub mod ibnetdiscover;
pub mod ibsim;
pub mod lfts_dump;
pub mod native;
pub mod node_order;
pub mod partitions_conf;
pub mod subnet_lst;
pub(crate) mod text;

use crate::error::{FabricError, ParseError};
use crate::model::Fabric;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// A file format that holds a whole fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// ibcloud's compact binary format (topology, LIDs, optional tables).
    Native,
    /// What `ibnetdiscover` prints.
    Ibnetdiscover,
    /// ibsim's net file.
    IbsimNet,
    /// OpenSM's `opensm-subnet.lst` dump (read only).
    SubnetLst,
}

impl Format {
    /// Every fabric format.
    pub const ALL: [Format; 4] = [
        Self::Native,
        Self::Ibnetdiscover,
        Self::IbsimNet,
        Self::SubnetLst,
    ];

    /// Name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Ibnetdiscover => "ibnetdiscover",
            Self::IbsimNet => "ibsim",
            Self::SubnetLst => "subnet-lst",
        }
    }

    /// Usual file name extension when writing.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Native => "ibcf",
            Self::Ibnetdiscover => "topo",
            Self::IbsimNet => "net",
            Self::SubnetLst => "lst",
        }
    }

    /// Whether ibcloud can write this format.
    pub fn can_write(self) -> bool {
        self != Self::SubnetLst
    }

    /// Guess from a path's name: `.ibcf` native, `.net` ibsim, `.topo`/`.ibnd`
    /// ibnetdiscover, `opensm-subnet.lst`/`.lst` subnet list.
    pub fn from_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "ibcf" => Some(Self::Native),
            "net" => Some(Self::IbsimNet),
            "topo" | "ibnd" | "ibnetdiscover" => Some(Self::Ibnetdiscover),
            "lst" => Some(Self::SubnetLst),
            _ => None,
        }
    }

    /// Guess from the first bytes of a file.
    pub fn sniff(head: &[u8]) -> Option<Format> {
        if head.starts_with(native::MAGIC) {
            return Some(Self::Native);
        }
        let text = String::from_utf8_lossy(&head[..head.len().min(64 * 1024)]);
        let first = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))?;
        if first.starts_with("{ ") {
            return Some(Self::SubnetLst);
        }
        // ibsim spells CAs `Hca`, ibnetdiscover `Ca`; both may carry GUID lines.
        let header = |word: &str| {
            text.lines()
                .any(|l| l.split_whitespace().next() == Some(word))
        };
        if text.contains("# Topology file") || (header("Ca") && !header("Hca")) {
            return Some(Self::Ibnetdiscover);
        }
        if header("Hca") || header("Switch") || header("Rt") {
            return Some(Self::IbsimNet);
        }
        None
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|f| f.name() == s || f.extension() == s)
            .ok_or_else(|| {
                format!(
                    "unknown format '{s}' (expected native, ibnetdiscover, ibsim or subnet-lst)"
                )
            })
    }
}

/// Parses a fabric from bytes; `file` names the source in error messages.
pub fn parse_fabric(data: &[u8], file: &str, format: Format) -> Result<Fabric, FabricError> {
    if format == Format::Native {
        return Ok(native::decode(data, file)?.fabric);
    }
    // A byte-order mark (Windows editors add one) is not content.
    let text = text_of(data, file)?;
    let fabric = match format {
        Format::Ibnetdiscover => ibnetdiscover::parse(text, file),
        Format::IbsimNet => ibsim::parse(text, file),
        Format::SubnetLst => subnet_lst::parse(text, file),
        Format::Native => unreachable!("handled above"),
    }?;
    // An empty or comment-only file is not a fabric of 0 nodes: every check
    // on it would pass vacuously ("all 0 pairs reachable").
    if fabric.num_nodes() == 0 {
        return Err(ParseError::new(
            file,
            text.lines().count().max(1),
            format!("no nodes: an empty {} file", format.name()),
        )
        .into());
    }
    Ok(fabric)
}

/// The UTF-8 text of a file, as every text reader takes it: a byte-order
/// mark dropped; bytes that are not UTF-8, or a NUL, are a [`ParseError`]
/// naming the file, line and column (not an I/O error). Python:
/// `ibcloud.safeio.read_text`.
pub fn read_text(path: &Path) -> Result<String, FabricError> {
    let data = std::fs::read(path).map_err(|e| FabricError::io(path, e))?;
    let file = path.display().to_string();
    Ok(text_of(&data, &file)?.to_owned())
}

/// [`read_text`] for bytes already in memory.
pub fn text_of<'d>(data: &'d [u8], file: &str) -> Result<&'d str, ParseError> {
    let data = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
    let text = std::str::from_utf8(data).map_err(|e| {
        let start = e.valid_up_to();
        let line = data[..start].iter().filter(|&&b| b == b'\n').count() + 1;
        let column = start
            - data[..start]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1)
            + 1;
        ParseError::new(
            file,
            line,
            format!(
                "not UTF-8 text: byte 0x{:02x} at column {column}",
                data[start]
            ),
        )
    })?;
    if let Some(pos) = text.find('\0') {
        let line = text[..pos].matches('\n').count() + 1;
        return Err(ParseError::new(file, line, "NUL byte in a text file"));
    }
    Ok(text)
}

/// Writes `bytes` to `path` through a temporary file in the same folder,
/// renamed over `path` once complete: an interrupted write leaves the old
/// file (or none), never a truncated one. Every writer of ibcloud uses this
/// (Python: `ibcloud.safeio.atomic_write`).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FabricError> {
    write_atomic_with(path, |w| std::io::Write::write_all(w, bytes))
}

/// [`write_atomic`] for a writer that streams: `fill` writes into a buffered
/// temporary file, which replaces `path` only when `fill` succeeded.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), FabricError> {
    // `/dev/null`, a FIFO, a terminal: written in place. Renaming over one
    // would replace a device node with a regular file (as root) or fail.
    if let Ok(meta) = std::fs::metadata(path) {
        if !meta.is_file() && !meta.is_dir() {
            let result = (|| -> std::io::Result<()> {
                let file = std::fs::OpenOptions::new().write(true).open(path)?;
                let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
                fill(&mut w)?;
                std::io::Write::flush(&mut w)
            })();
            return result.map_err(|e| FabricError::io(path, e));
        }
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let file = std::fs::File::create(&tmp)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
        fill(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(|e| FabricError::io(path, e))
}

/// Reads a fabric from a file, guessing the format from the name, then the
/// content, when `format` is `None`.
pub fn read_fabric(path: &Path, format: Option<Format>) -> Result<Fabric, FabricError> {
    let data = std::fs::read(path).map_err(|e| FabricError::io(path, e))?;
    let format = format
        .or_else(|| Format::from_path(path))
        .or_else(|| Format::sniff(&data))
        .ok_or_else(|| {
            ParseError::new(
                &path.display().to_string(),
                0,
                "cannot tell the file format; name it explicitly",
            )
        })?;
    parse_fabric(&data, &path.display().to_string(), format)
}

/// Serialises a fabric.
pub fn render_fabric(fabric: &Fabric, format: Format) -> Result<Vec<u8>, FabricError> {
    let mut out = Vec::new();
    match format {
        Format::Native => return Ok(native::encode(fabric, None)),
        Format::Ibnetdiscover => ibnetdiscover::write(fabric, &mut out),
        Format::IbsimNet => ibsim::write(fabric, &mut out),
        Format::SubnetLst => {
            return Err(FabricError::Unsupported(
                "opensm-subnet.lst can be read, not written".into(),
            ))
        }
    }
    .map_err(|e| FabricError::io("<memory>", e))?;
    Ok(out)
}

/// Writes a fabric to a file, choosing the format from the name when `None`.
pub fn write_fabric(
    fabric: &Fabric,
    path: &Path,
    format: Option<Format>,
) -> Result<(), FabricError> {
    let format = format.or_else(|| Format::from_path(path)).ok_or_else(|| {
        FabricError::Unsupported(format!(
            "{}: cannot tell the format from the name; use .ibcf, .net or .topo or name the format",
            path.display()
        ))
    })?;
    let bytes = render_fabric(fabric, format)?;
    write_atomic(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::preset;

    #[test]
    fn sniffing_tells_every_written_format_apart() {
        let f = preset("4-ary-2-full").unwrap().build().unwrap();
        for format in [Format::Native, Format::Ibnetdiscover, Format::IbsimNet] {
            assert_eq!(
                Format::sniff(&render_fabric(&f, format).unwrap()),
                Some(format)
            );
        }
        let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/interop/");
        for (file, format) in [
            ("ibsim-example.net", Format::IbsimNet),
            ("ibnetdiscover-example.txt", Format::Ibnetdiscover),
            ("opensm-subnet.lst", Format::SubnetLst),
        ] {
            let data = std::fs::read(format!("{fixtures}{file}")).unwrap();
            assert_eq!(Format::sniff(&data), Some(format), "{file}");
        }
        assert_eq!(Format::sniff(b"hello\nworld"), None);
    }
}
