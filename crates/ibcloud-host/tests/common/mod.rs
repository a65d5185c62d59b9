//! Helpers shared by the host crate's integration tests.
// Each test crate uses a subset of these.
#![allow(dead_code)]

use ibcloud_host::{RunResult, Scenario, World};

/// The controller factory of scenarios that declare none.
pub fn no_controllers(
    _: &ibcloud_host::scenario::ControllerOptions,
    _: &[String],
) -> Result<Box<dyn ibcloud_host::HostController>, String> {
    Err("no controllers here".into())
}

/// Runs a scenario given as JSON to its end.
pub fn run(json: &str) -> RunResult {
    let sc = Scenario::from_json(json).unwrap();
    World::new(&sc, &no_controllers)
        .unwrap()
        .run(&mut |_, _| {})
        .unwrap()
}
