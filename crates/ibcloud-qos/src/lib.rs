//! Fabric QoS and InfiniBand congestion control as a subnet manager
//! programs them.
//!
//! - [`model`]: SL2VL, VL arbitration (high/low, 64-byte weights), high
//!   limit per OpenSM port class; SwitchCongestionSetting,
//!   CACongestionSetting and the CCT of IBA Annex A10; checked against the
//!   limits of the specification and of OpenSM 3.3.23.
//! - [`preset`]: Ranadive's hardware policies StMax, StMaxQ, DRXMax and
//!   DRXMaxQ (G Tables 5 and 6), with G §9 A11 as an option.
//! - [`parse`]: policy files (TOML) with `file:line: problem` errors.
//! - [`sim`]: the same settings as the simulator's `SimConfig` fields, so a
//!   simulated fabric applies exactly what the SM programs.
//! - [`opensm`]: the QoS and congestion-control options of opensm.conf.
//!
//! ```
//! use ibcloud_qos::{opensm, CcSls, Preset};
//! let policy = Preset::StMaxQ.policy(CcSls::All);
//! let conf = opensm::opensm_conf(&policy).unwrap();
//! assert!(conf.contains("qos_vlarb_low 0:254,1:1"));
//! assert!(conf.contains("congestion_control TRUE"));
//! ```

pub mod model;
pub mod opensm;
pub mod parse;
pub mod preset;
pub mod sim;

pub use model::{
    CaCongestion, CaCongestionEntry, FabricCc, FabricQos, Policy, PortClass, PortMask, QosOverride,
    QosTables, SwitchCongestion,
};
pub use parse::{load_policy, parse_policy, resolve, QosError};
pub use preset::{CcSls, Preset};
pub use sim::SimQos;
