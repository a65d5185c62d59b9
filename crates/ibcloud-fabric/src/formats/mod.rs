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
    let text = std::str::from_utf8(data).map_err(|e| {
        let line = data[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        ParseError::new(file, line, "not valid UTF-8 text")
    })?;
    match format {
        Format::Ibnetdiscover => ibnetdiscover::parse(text, file),
        Format::IbsimNet => ibsim::parse(text, file),
        Format::SubnetLst => subnet_lst::parse(text, file),
        Format::Native => unreachable!("handled above"),
    }
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
    std::fs::write(path, bytes).map_err(|e| FabricError::io(path, e))
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
