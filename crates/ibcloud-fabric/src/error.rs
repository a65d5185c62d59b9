//! Errors of the fabric layer. Each is a value that says what is wrong and,
//! for file input, where: `file:line: problem`.

use crate::ids::{Guid, Lid, NodeId, PortNum};
use std::fmt;
use std::path::PathBuf;

/// An inconsistency in a fabric being built or edited.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// Two nodes carry the same node GUID.
    #[error("duplicate node GUID {guid}: '{first}' and '{second}'")]
    DuplicateGuid {
        /// The GUID.
        guid: Guid,
        /// Description of the first node.
        first: String,
        /// Description of the second node.
        second: String,
    },
    /// Two ports carry the same port GUID.
    #[error("duplicate port GUID {0}")]
    DuplicatePortGuid(Guid),
    /// A node name used as identifier appears twice.
    #[error("duplicate node name '{0}'")]
    DuplicateName(String),
    /// A port number above the node's port count.
    #[error("port {port} does not exist on '{node}', which has {num_ports} ports")]
    PortOutOfRange {
        /// Node description.
        node: String,
        /// Port asked for.
        port: PortNum,
        /// Ports the node has.
        num_ports: u8,
    },
    /// A port is cabled twice.
    #[error("port {port} of '{node}' is already linked to '{existing}' port {existing_port}, cannot also link it to '{requested}' port {requested_port}")]
    PortInUse {
        /// Node description.
        node: String,
        /// Port number.
        port: PortNum,
        /// Current peer.
        existing: String,
        /// Current peer port.
        existing_port: PortNum,
        /// Requested peer.
        requested: String,
        /// Requested peer port.
        requested_port: PortNum,
    },
    /// The two ends of one link disagree.
    #[error("link described differently on its two ends: {0}")]
    LinkMismatch(String),
    /// A link from a port to itself.
    #[error("port {port} of '{node}' is linked to itself")]
    SelfLink {
        /// Node description.
        node: String,
        /// Port number.
        port: PortNum,
    },
    /// A node id that is not in this fabric.
    #[error("no node {0} in this fabric")]
    UnknownNode(NodeId),
    /// A node with zero ports, or more than 254.
    #[error("node '{node}' has {num_ports} ports; a node has 1 to 254")]
    BadPortCount {
        /// Node description.
        node: String,
        /// Declared port count.
        num_ports: u32,
    },
    /// Generator parameters that describe no valid tree.
    #[error("invalid topology parameters: {0}")]
    InvalidParameters(String),
}

/// A problem with LID assignment or LID data.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LidError {
    /// More LIDs needed than the unicast space holds.
    #[error("the fabric needs {needed} unicast LIDs but only 49151 (0x0001-0xBFFF) exist")]
    Exhausted {
        /// LIDs needed.
        needed: usize,
    },
    /// Two ports claim overlapping LID ranges.
    #[error("LID {lid} is assigned to both {first} and {second}")]
    Collision {
        /// The LID.
        lid: Lid,
        /// First owner.
        first: String,
        /// Second owner.
        second: String,
    },
    /// A LID outside 0x0001..=0xBFFF, or a LID range crossing 0xBFFF.
    #[error("LID {lid} (LMC {lmc}) is not a valid unicast LID range")]
    NotUnicast {
        /// The base LID.
        lid: Lid,
        /// Its LMC.
        lmc: u8,
    },
    /// A base LID not aligned to its LMC.
    #[error("LID {lid} is not aligned to LMC {lmc} (must be a multiple of {})", 1u32 << .lmc)]
    Misaligned {
        /// The base LID.
        lid: Lid,
        /// Its LMC.
        lmc: u8,
    },
    /// LMC above 7.
    #[error("LMC {0} is out of range 0..=7")]
    BadLmc(u8),
}

/// Where a problem was found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// File name as given by the user (or `<input>` for in-memory text).
    pub file: String,
    /// 1-based line number; 0 when the problem concerns the whole file.
    pub line: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.file)
        } else {
            write!(f, "{}:{}", self.file, self.line)
        }
    }
}

/// Malformed or inconsistent file content.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{location}: {problem}")]
pub struct ParseError {
    /// File and line.
    pub location: Location,
    /// What is wrong, in words.
    pub problem: String,
}

impl ParseError {
    /// Builds an error for `file:line`. The problem text is made safe for a
    /// terminal here, whatever the caller quoted: control characters escaped,
    /// at most [`MESSAGE_CHARS`] characters (see [`excerpt`]).
    pub fn new(file: &str, line: usize, problem: impl Into<String>) -> Self {
        Self {
            location: Location {
                file: bounded(file, MESSAGE_CHARS),
                line,
            },
            problem: bounded(&problem.into(), MESSAGE_CHARS),
        }
    }
}

/// Characters of file content an error message quotes at most.
pub const EXCERPT_CHARS: usize = 60;
/// Characters of one error message at most (the backstop behind [`excerpt`]).
pub const MESSAGE_CHARS: usize = 2000;

fn escape_into(out: &mut String, c: char, backslash: bool) {
    use std::fmt::Write;
    match c {
        '\\' if backslash => out.push_str("\\\\"),
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        '\u{2028}' | '\u{2029}' | '\u{feff}' => {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => out.push(c),
    }
}

/// File content quoted for an error message: escaped, at most
/// [`EXCERPT_CHARS`] characters, and the full length when cut. The Python
/// layer quotes with the same rule (`ibcloud.safeio.excerpt`).
///
/// ```
/// use ibcloud_fabric::error::excerpt;
/// assert_eq!(excerpt("0x1 2"), "'0x1 2'");
/// assert_eq!(excerpt("a\u{1b}[2J"), "'a\\x1b[2J'");
/// assert!(excerpt(&"x".repeat(10_000)).ends_with("... (10,000 characters)"));
/// ```
pub fn excerpt(text: &str) -> String {
    let mut out = String::from("'");
    for (count, c) in text.chars().enumerate() {
        if count == EXCERPT_CHARS {
            let total = text.chars().count();
            out.push_str("'... (");
            out.push_str(&thousands(total));
            out.push_str(" characters)");
            return out;
        }
        escape_into(&mut out, c, true);
    }
    out.push('\'');
    out
}

fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A whole message made safe for a terminal: control characters escaped
/// (backslashes are left alone: the message may quote an [`excerpt`]), at
/// most `limit` characters.
pub fn bounded(message: &str, limit: usize) -> String {
    let mut out = String::with_capacity(message.len().min(limit + 32));
    for (i, c) in message.chars().enumerate() {
        if i == limit {
            out.push_str("... (");
            out.push_str(&thousands(message.chars().count()));
            out.push_str(" characters)");
            break;
        }
        escape_into(&mut out, c, false);
    }
    out
}

/// Any error of the fabric layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FabricError {
    /// Bad file content.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// Inconsistent topology.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// LID problem.
    #[error(transparent)]
    Lid(#[from] LidError),
    /// File could not be read or written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A format that cannot do what was asked (e.g. write a read-only format).
    #[error("{0}")]
    Unsupported(String),
}

impl FabricError {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}

/// Result alias of the fabric layer.
pub type Result<T, E = FabricError> = std::result::Result<T, E>;
