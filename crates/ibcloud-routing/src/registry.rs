//! Engines by name, as OpenSM's `-R` option selects them.

use crate::engine::{EngineOptions, RoutingEngine, RoutingError};

type Constructor = fn(&EngineOptions) -> Result<Box<dyn RoutingEngine>, RoutingError>;

/// Every engine: name, one-line description, constructor.
const ENGINES: &[(&str, &str, Constructor)] = &[
    (
        "ftree",
        "OpenSM fat-tree routing (osm_ucast_ftree.c)",
        crate::engines::ftree::FtreeEngine::boxed,
    ),
    (
        "noftree",
        "Paper III's NoFTree: ftree routing each leaf's nodes in the slots of a node order (ftree without one)",
        crate::engines::ftree::FtreeEngine::boxed,
    ),
    (
        "minhop",
        "OpenSM's default min-hop routing, balancing LIDs over equal-hop ports",
        crate::engines::minhop::MinHop::boxed,
    ),
    (
        "updn",
        "OpenSM's up/down routing from root switches, given or found by min-hop analysis",
        crate::engines::updn::UpDn::boxed,
    ),
    (
        "dfsssp",
        "deadlock-free SSSP: weighted Dijkstra, virtual layers",
        crate::engines::dfsssp::construct,
    ),
    (
        "lash",
        "LAyered SHortest path: minimal paths, virtual layers against deadlocks",
        |o| Ok(Box::new(crate::engines::lash::Lash::new(o)?)),
    ),
    (
        "pftree",
        "partition-aware fat-tree routing (seed 002): partitions on separate links, VLs where they share",
        crate::engines::pftree::Pftree::base,
    ),
    (
        "pftree-ext",
        "pFTree-Ext: per-partition isolation policies (phy, vlane, def), strict or best-effort",
        crate::engines::pftree::Pftree::ext,
    ),
    (
        "pftree-wt",
        "pFTree-Wt: partition-aware fat-tree routing balanced by node traffic weights",
        crate::engines::pftree::Pftree::wt,
    ),
    (
        "vswitch-ftree",
        "Paper V's vSwitchFatTree: ftree with weighted VM routes behind SR-IOV vSwitches",
        crate::engines::vswitch_ftree::VSwitchFtree::boxed,
    ),
];

/// Names of the registered engines, in registry order.
pub fn engine_names() -> Vec<&'static str> {
    ENGINES.iter().map(|(n, _, _)| *n).collect()
}

/// Names with their one-line descriptions.
pub fn engines() -> Vec<(&'static str, &'static str)> {
    ENGINES.iter().map(|(n, d, _)| (*n, *d)).collect()
}

/// The engine called `name`, configured by `options`.
pub fn engine(name: &str, options: &EngineOptions) -> Result<Box<dyn RoutingEngine>, RoutingError> {
    let (_, _, make) =
        ENGINES
            .iter()
            .find(|(n, _, _)| *n == name)
            .ok_or_else(|| RoutingError::UnknownEngine {
                name: name.to_owned(),
                known: engine_names().join(", "),
            })?;
    make(options)
}
