//! The `ftree` engine against OpenSM 3.3.23's own tables.
//!
//! Fixtures under `fixtures/opensm/ftree/<preset>/` were taken by running
//! `opensm -R ftree` on ibsim with the preset's net file (our packed LIDs):
//! `opensm-lfts.dump` and `guid2lid`. The `#[ignore]`d tests compare against a
//! directory of fresh OpenSM runs (`FTREE_REF_DIR`, one sub-directory per case
//! with `fabric.ibcf` and `opensm-lfts.dump`) and time the big trees.

use std::path::{Path, PathBuf};

use ibcloud_fabric::formats::{guid2lid, lfts_dump, read_fabric};
use ibcloud_fabric::generate::preset;
use ibcloud_fabric::lft::{ForwardingTables, NO_PORT};
use ibcloud_fabric::{Fabric, Lid};
use ibcloud_routing::engines::ftree::FtreeEngine;
use ibcloud_routing::{RoutingEngine, RoutingError};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/opensm/ftree")
}

/// Up to `n` entries where the tables differ: (switch description, LID, ours, theirs).
fn differences(f: &Fabric, ours: &ForwardingTables, theirs: &ForwardingTables, n: usize) -> (usize, Vec<String>) {
    let mut count = 0;
    let mut shown = Vec::new();
    for sw in f.switches() {
        let (a, b) = (ours.table(sw), theirs.table(sw));
        for lid in 1..a.len().max(b.len()) {
            let x = a.get(lid).copied().unwrap_or(NO_PORT);
            let y = b.get(lid).copied().unwrap_or(NO_PORT);
            if x != y {
                count += 1;
                if shown.len() < n {
                    shown.push(format!("{} lid {lid}: ours {x} theirs {y}", f.node(sw).description));
                }
            }
        }
    }
    (count, shown)
}

fn compare(f: &Fabric, dump: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(dump).map_err(|e| e.to_string())?;
    let theirs = lfts_dump::parse(&text, &dump.display().to_string())
        .and_then(|d| d.to_tables(f))
        .map_err(|e| e.to_string())?;
    let ours = FtreeEngine::new().route(f).map_err(|e| e.to_string())?.tables;
    let (n, shown) = differences(f, &ours, &theirs, 20);
    if n == 0 {
        Ok(())
    } else {
        Err(format!("{n} entries differ:\n{}", shown.join("\n")))
    }
}

fn check_fixture(name: &str) {
    let dir = fixtures().join(name);
    let f = preset(name).unwrap().build().unwrap();
    // OpenSM kept our LIDs.
    let text = std::fs::read_to_string(dir.join("guid2lid")).unwrap();
    let map = guid2lid::parse(&text, "guid2lid").unwrap();
    for (_, p) in f.lid_ports() {
        assert_eq!(map.get(&p.guid).map(|r| r.0), Some(p.lid), "LID of {}", p.guid);
    }
    if let Err(e) = compare(&f, &dir.join("opensm-lfts.dump")) {
        panic!("{name}: {e}");
    }
}

#[test]
fn equals_opensm_on_4_ary_2_full() {
    check_fixture("4-ary-2-full");
}

#[test]
fn equals_opensm_on_8_ary_2() {
    check_fixture("8-ary-2");
}

#[test]
fn equals_opensm_on_4_ary_3_full() {
    check_fixture("4-ary-3-full");
}

#[test]
fn equals_opensm_on_16_ary_2() {
    check_fixture("16-ary-2");
}

/// Every case directory under `$FTREE_REF_DIR` (fresh OpenSM runs): tables
/// equal when OpenSM used ftree, a refusal when it fell back to minhop.
#[test]
#[ignore]
fn equals_opensm_runs_in_ref_dir() {
    let Ok(root) = std::env::var("FTREE_REF_DIR") else {
        eprintln!("FTREE_REF_DIR not set");
        return;
    };
    let mut failed = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.sort();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let Ok(f) = read_fabric(&dir.join("fabric.ibcf"), None) else { continue };
        let log = std::fs::read_to_string(dir.join("opensm.log")).unwrap_or_default();
        let used_ftree = log.contains("ftree tables configured on all switches");
        let ours = FtreeEngine::new().route(&f);
        match (used_ftree, ours) {
            (true, Ok(_)) => match compare(&f, &dir.join("opensm-lfts.dump")) {
                Ok(()) => eprintln!("{name}: identical"),
                Err(e) => {
                    eprintln!("{name}: {e}");
                    failed.push(name);
                }
            },
            (false, Err(RoutingError::Unsupported { reason, .. })) => eprintln!("{name}: both refuse: {reason}"),
            (true, Err(e)) => {
                eprintln!("{name}: OpenSM routed, we refused: {e}");
                failed.push(name);
            }
            (false, r) => {
                eprintln!("{name}: OpenSM refused, we gave {:?}", r.map(|_| "tables"));
                failed.push(name);
            }
        }
    }
    assert!(failed.is_empty(), "differences: {failed:?}");
}

/// Release-mode timing: `cargo test --release -p ibcloud-routing --test
/// ftree_opensm -- --ignored timing --nocapture`.
#[test]
#[ignore]
fn timing_on_big_trees() {
    for name in ["ft5832", "ft11664"] {
        let f = preset(name).unwrap().build().unwrap();
        let e = FtreeEngine::new();
        let mut best = f64::MAX;
        for _ in 0..3 {
            let t = std::time::Instant::now();
            let r = e.route(&f).unwrap();
            best = best.min(t.elapsed().as_secs_f64());
            assert!(r.tables.get(f.switches().next().unwrap(), Lid(1)).is_some());
        }
        eprintln!("{name}: ftree routes in {best:.3} s (best of 3)");
    }
}
