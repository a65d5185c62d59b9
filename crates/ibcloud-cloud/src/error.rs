//! The one error type of the crate: inputs that describe no valid run.

/// Inputs that describe no valid demand matrix, window or packing. Never
/// fatal: nothing was computed, fix the input and call again.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConsolidationError {
    /// The data does not hold `n_vms × n_samples` values.
    #[error("demand holds {got} values, expected {n_vms} VMs × {n_samples} samples = {}", n_vms * n_samples)]
    Shape {
        /// Rows announced.
        n_vms: usize,
        /// Columns announced.
        n_samples: usize,
        /// Values given.
        got: usize,
    },
    /// A demand value that is negative, NaN or infinite.
    #[error("demand of VM {vm} at sample {sample} is {value}; demand must be finite and ≥ 0")]
    BadDemand {
        /// Row of the value.
        vm: usize,
        /// Column of the value.
        sample: usize,
        /// The value.
        value: f64,
    },
    /// A window segment that is empty, out of range or out of order.
    #[error("window segment {start}..{end} is empty, overlaps the previous one or exceeds the {n_samples} samples")]
    BadWindow {
        /// Segment start.
        start: usize,
        /// Segment end (exclusive).
        end: usize,
        /// Samples in the demand.
        n_samples: usize,
    },
    /// A parameter out of its range; the message names the range.
    #[error("{name} = {value}: {expected}")]
    BadParameter {
        /// Parameter name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// What was expected, as a hint.
        expected: &'static str,
    },
    /// A name that is no delay unit or fit rule.
    #[error("unknown {what} '{name}' (expected one of: {expected})")]
    UnknownName {
        /// What kind of name.
        what: &'static str,
        /// The name given.
        name: String,
        /// The accepted names.
        expected: &'static str,
    },
    /// A VM index past the last row.
    #[error("VM index {vm} out of range (the demand has {n_vms} VMs)")]
    BadVm {
        /// The index given.
        vm: usize,
        /// Rows in the demand.
        n_vms: usize,
    },
}
