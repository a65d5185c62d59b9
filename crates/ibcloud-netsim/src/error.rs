//! The crate's errors: bad configuration or traffic (found before the run
//! starts) and run-time stops (deadlock, budgets).

use thiserror::Error;

/// Why a simulation could not be set up or did not finish.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Error)]
pub enum NetsimError {
    /// A duration such as `10ms` that cannot be parsed. Not fatal.
    #[error("cannot parse duration '{0}' (expected a number with ps, ns, us, ms or s, e.g. 10ms)")]
    BadDuration(String),
    /// A duration longer than simulated time can hold.
    #[error("duration '{0}' is too long (at most 10000000 s, about 116 days)")]
    DurationTooLong(String),
    /// A configuration value out of range. Fix the option named.
    #[error("bad configuration: {0}")]
    Config(String),
    /// A traffic specification that names unknown nodes or cannot be read;
    /// `at` says where (file:line, flow index or spec text).
    #[error("bad traffic spec ({at}): {problem}")]
    Traffic {
        /// Where the problem is.
        at: String,
        /// What is wrong.
        problem: String,
    },
    /// A flow's destination cannot be reached with the forwarding tables.
    #[error("no route from {src} to {dst}: {why}")]
    NoRoute {
        /// Source port label.
        src: String,
        /// Destination port label or LID.
        dst: String,
        /// Where the walk stopped.
        why: String,
    },
    /// An input buffer per VL smaller than one MTU-sized packet.
    #[error("buffer of {buffer_bytes} bytes per VL on {port} is smaller than one {mtu}-byte MTU packet ({packet_bytes} bytes with headers); raise buffer-bytes or lower the MTU or the VL count")]
    BufferTooSmall {
        /// Port label.
        port: String,
        /// Bytes per VL.
        buffer_bytes: u64,
        /// The MTU.
        mtu: u32,
        /// Wire bytes of a full packet.
        packet_bytes: u64,
    },
    /// A run-time event that names something that does not exist.
    #[error("bad event at {at}: {problem}")]
    Event {
        /// Time or index of the event.
        at: String,
        /// What is wrong.
        problem: String,
    },
    /// The fabric stopped moving packets while some were waiting for credits
    /// in a cycle: a credit deadlock. Fatal. `cycle` lists `port/VL` buffers.
    #[error("credit deadlock at {time_us:.3} us: buffers wait for each other in a cycle: {}; check the routing (credit loops) and the SL-to-VL mapping", cycle.join(" -> "))]
    Deadlock {
        /// Simulated time in microseconds.
        time_us: f64,
        /// The cycle of input buffers (port label and VL).
        cycle: Vec<String>,
    },
    /// The run exceeded its event or memory budget. Fatal; raise the budget
    /// or shorten the run.
    #[error("budget exceeded at {time_us:.3} us: {what}")]
    Budget {
        /// Simulated time in microseconds.
        time_us: f64,
        /// Which budget.
        what: String,
    },
    /// The fabric itself is inconsistent (LIDs).
    #[error("fabric: {0}")]
    Fabric(String),
}
