//! Hosts on a fabric read from a file (ibnetdiscover output or an ibsim
//! net file), as `ibcloud sim` reads them: the same run as on the
//! generated preset the file was written from.

use ibcloud_fabric::formats::{render_fabric, Format};
use ibcloud_host::{RunResult, Scenario, World};

mod common;
use common::no_controllers;

fn run(fabric: &str) -> Result<RunResult, String> {
    let json = format!(
        r#"{{"duration": "10ms", "fabric": {fabric},
        "hosts": [{{"name": "A"}}, {{"name": "B"}}, {{"name": "C"}}],
        "vms": [{{"name": "a", "host": "A"}}, {{"name": "c", "host": "C"}}, {{"name": "b", "host": "B"}}],
        "workloads": [{{"kind": "rdma-write", "vm": "a", "peer": "c", "size": "256k", "depth": 8}},
                      {{"kind": "nectere", "vm": "b", "peer": "c", "size": "64k"}}]}}"#
    );
    let sc = Scenario::from_json(&json).map_err(|e| e.to_string())?;
    World::new(&sc, &no_controllers)
        .map_err(|e| e.to_string())?
        .run(&mut |_, _| {})
        .map_err(|e| e.to_string())
}

#[test]
fn a_fabric_file_gives_the_run_of_its_preset() {
    let preset = run(r#"{"preset": "4-ary-2-tree"}"#).unwrap();
    let mut f = ibcloud_fabric::generate::preset("4-ary-2-tree")
        .unwrap()
        .build()
        .unwrap();
    ibcloud_fabric::lids::assign_lids(&mut f, &Default::default()).unwrap();
    let dir = std::env::temp_dir().join(format!("ibcloud-host-fabric-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // ibnetdiscover output keeps its LIDs; an ibsim net file has none and
    // gets OpenSM's assignment, the one the preset got.
    for (name, format) in [
        ("t.topo", Format::Ibnetdiscover),
        ("t.net", Format::IbsimNet),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, render_fabric(&f, format).unwrap()).unwrap();
        let from_file = run(&format!(r#"{{"file": {:?}}}"#, path.to_str().unwrap())).unwrap();
        assert_eq!(from_file.events, preset.events, "{name}");
        let key = |r: &RunResult| -> Vec<(u64, f64)> {
            r.workloads
                .iter()
                .map(|w| (w.completed, w.hw_mib_s))
                .collect()
        };
        assert_eq!(key(&from_file), key(&preset), "{name}");
        assert!(preset.workloads.iter().all(|w| w.completed > 0));
    }
    // Bad files and keys are named.
    let e = run(r#"{"file": "/no/such/fabric.topo"}"#).unwrap_err();
    assert!(e.starts_with("fabric.file: "), "{e}");
    let junk = dir.join("junk.topo");
    std::fs::write(&junk, "this is not a fabric\n").unwrap();
    let e = run(&format!(r#"{{"file": {:?}}}"#, junk.to_str().unwrap())).unwrap_err();
    assert!(e.starts_with("fabric.file: "), "{e}");
    let e = run(r#"{"file": "x.topo", "preset": "4-ary-2-tree"}"#).unwrap_err();
    assert!(e.contains("either preset or file"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}
