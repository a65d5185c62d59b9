//! The crate's error type.

/// Why a wire buffer, a resolution or a cache operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SaError {
    /// A buffer is shorter than the layout needs.
    #[error("buffer too short: {what} needs {need} bytes, got {got}")]
    Truncated {
        /// The structure being read.
        what: &'static str,
        /// Bytes needed.
        need: usize,
        /// Bytes present.
        got: usize,
    },
    /// A field holds a value the layout does not allow.
    #[error("malformed {what}: {problem}")]
    Malformed {
        /// The structure being read.
        what: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// A LID is not assigned to any port of the fabric.
    #[error("LID {0} is not assigned to any port")]
    UnknownLid(u16),
    /// The forwarding tables do not lead from one LID to the other.
    #[error("no route from LID {slid} to LID {dlid}: {problem}")]
    NoRoute {
        /// Source LID.
        slid: u16,
        /// Destination LID.
        dlid: u16,
        /// Where the walk stopped.
        problem: String,
    },
}
