//! Wire formats: the SMP header ([`smp`]) and the attributes the SM uses
//! ([`attrs`]). Nothing here panics on any input; see `tests/wire_props.rs`.

pub mod attrs;
pub mod smp;

pub use attrs::{
    sl2vl_modifier, vlarb_modifier, LftBlockRepr, LinkState, NodeDescriptionRepr, NodeInfoRepr,
    NodeType, PortInfoRepr, SlToVlRepr, SmInfoRepr, SmState, SwitchInfoRepr, VlArbBlock,
    VlArbBlockRepr, VLARB_BLOCK_ENTRIES,
};
pub use smp::{attr, Route, Smp, SmpRepr, SMP_DATA_LEN, SMP_LEN};
