//! Unit tests of the fat-tree engine (fixtures from OpenSM in tests/ftree_opensm.rs).

use super::*;
use ibcloud_fabric::generate::preset;

fn route(name: &str) -> Result<Routing, RoutingError> {
    let f = preset(name).unwrap().build().unwrap();
    FtreeEngine::new().route(&f)
}

#[test]
fn routes_every_lid_of_a_small_tree() {
    let f = preset("4-ary-2-full").unwrap().build().unwrap();
    let r = FtreeEngine::new().route(&f).unwrap();
    // Roots cannot reach each other within up/down rules (connect_roots is off).
    assert_eq!(r.tables.unrouted(&f, true), 4 * 3);
    assert!(r.path_sls.is_none());
}

#[test]
fn is_registered() {
    let e = crate::registry::engine("ftree", &EngineOptions::default()).unwrap();
    assert_eq!(e.name(), "ftree");
    assert!(route("8-ary-2").is_ok());
}
