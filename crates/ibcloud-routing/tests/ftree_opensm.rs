//! The `ftree` engine against OpenSM 3.3.23's own tables.
//!
//! Fixtures: `fixtures/opensm/ftree/<case>/` (see the README there). The
//! `#[ignore]`d tests compare against a directory of fresh OpenSM runs
//! (`FTREE_REF_DIR`, one sub-directory per case with `fabric.ibcf`,
//! `opensm-lfts.dump`, `opensm.log` and optionally `roots.txt`, `cns.txt` and
//! an `undefined` marker) and time the big trees.

use std::path::{Path, PathBuf};

use ibcloud_fabric::formats::{guid2lid, lfts_dump, read_fabric};
use ibcloud_fabric::generate::preset;
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Fabric, Guid, Lid};
use ibcloud_routing::engines::ftree::FtreeEngine;
use ibcloud_routing::{EngineOptions, RoutingEngine, RoutingError};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/opensm/ftree")
}

/// The number of entries where the tables differ, and up to `n` of them as
/// "switch lid: ours theirs".
fn differences(
    f: &Fabric,
    ours: &ForwardingTables,
    theirs: &ForwardingTables,
    n: usize,
) -> (usize, Vec<String>) {
    let mut count = 0;
    let mut shown = Vec::new();
    for (sw, lid, x, y) in ours.differences(theirs).filter(|(_, lid, _, _)| lid.0 != 0) {
        count += 1;
        if shown.len() < n {
            shown.push(format!(
                "{} lid {}: ours {x} theirs {y}",
                f.node(sw).description,
                lid.0
            ));
        }
    }
    (count, shown)
}

fn compare(f: &Fabric, dump: &Path, engine: &FtreeEngine) -> Result<(), String> {
    let text = std::fs::read_to_string(dump).map_err(|e| e.to_string())?;
    let theirs = lfts_dump::parse(&text, &dump.display().to_string())
        .and_then(|d| d.to_tables(f))
        .map_err(|e| e.to_string())?;
    let ours = engine.route(f).map_err(|e| e.to_string())?.tables;
    let (n, shown) = differences(f, &ours, &theirs, 20);
    if n == 0 {
        Ok(())
    } else {
        Err(format!("{n} entries differ:\n{}", shown.join("\n")))
    }
}

/// GUIDs, one per line (OpenSM's root_guid_file / cn_guid_file), if the file exists.
fn guid_file(path: &Path) -> Option<Vec<Guid>> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(
        text.lines()
            .filter_map(|l| l.trim().strip_prefix("0x"))
            .filter_map(|g| u64::from_str_radix(g, 16).ok())
            .map(Guid)
            .collect(),
    )
}

/// The engine configured like OpenSM was for the case in `dir`.
fn engine_for(dir: &Path) -> FtreeEngine {
    FtreeEngine::with_options(&EngineOptions {
        roots: guid_file(&dir.join("roots.txt")),
        compute_nodes: guid_file(&dir.join("cns.txt")),
        ..EngineOptions::default()
    })
}

fn check_fixture(name: &str) {
    let dir = fixtures().join(name);
    let f = match std::fs::read_to_string(dir.join("preset.txt")) {
        Ok(p) => preset(p.trim()).unwrap().build().unwrap(),
        Err(_) => read_fabric(&dir.join("fabric.net"), None).unwrap(),
    };
    if let Ok(text) = std::fs::read_to_string(dir.join("guid2lid")) {
        // OpenSM kept our LIDs.
        let map = guid2lid::parse(&text, "guid2lid").unwrap();
        for (_, p) in f.lid_ports() {
            assert_eq!(
                map.get(&p.guid).map(|r| r.0),
                Some(p.lid),
                "LID of {}",
                p.guid
            );
        }
    }
    if let Err(e) = compare(&f, &dir.join("opensm-lfts.dump"), &engine_for(&dir)) {
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

#[test]
fn equals_opensm_with_dummy_cns() {
    check_fixture("8-ary-2-missing-cas");
}

#[test]
fn equals_opensm_with_a_cn_file() {
    check_fixture("8-ary-2-cn-file");
    check_fixture("ft324-cn-file-leaf3");
}

#[test]
fn equals_opensm_with_a_root_file() {
    check_fixture("4-ary-2-full-root-file");
    check_fixture("ft324-root-file-5");
}

#[test]
fn equals_opensm_with_sibling_links() {
    check_fixture("xgft-root-siblings");
}

#[test]
fn equals_opensm_with_parallel_links() {
    check_fixture("pgft2-parallel");
    check_fixture("pgft3-parallel");
}

/// Whether OpenSM's log gives our reason for refusing: the switches it names
/// (`GUID …, LID …, Index …`), or else its opening words.
fn same_reason(reason: &str, log: &str) -> bool {
    let named: Vec<&str> = reason
        .split("; ")
        .filter_map(|part| part.find("GUID 0x").map(|i| &part[i..]))
        .map(|part| part.split(" - ").next().unwrap_or(part))
        .collect();
    if named.is_empty() {
        let words: String = reason.chars().take(24).collect();
        log.contains(&words)
    } else {
        named.iter().all(|n| log.contains(n))
    }
}

/// Every case directory under `$FTREE_REF_DIR` (or those listed in
/// `$FTREE_REF_ONLY`): tables equal when OpenSM used ftree, a refusal for the
/// reason OpenSM logged when it fell back to minhop, and a refusal as
/// undefined where the case is marked so.
#[test]
#[ignore]
fn equals_opensm_runs_in_ref_dir() {
    let Ok(root) = std::env::var("FTREE_REF_DIR") else {
        eprintln!("FTREE_REF_DIR not set");
        return;
    };
    let only = std::env::var("FTREE_REF_ONLY").ok();
    let mut failed = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if only
            .as_ref()
            .is_some_and(|o| !o.split(',').any(|x| x == name))
        {
            continue;
        }
        let Ok(f) = read_fabric(&dir.join("fabric.ibcf"), None) else {
            continue;
        };
        let log = std::fs::read_to_string(dir.join("opensm.log")).unwrap_or_default();
        let used_ftree = log.contains("ftree tables configured on all switches");
        let engine = engine_for(&dir);
        let ours = engine.route(&f);
        match (used_ftree, ours) {
            (_, Err(RoutingError::Unsupported { reason, .. }))
                if dir.join("undefined").exists() =>
            {
                eprintln!("{name}: OpenSM's result is undefined, we refuse: {reason}");
            }
            (true, Ok(_)) => match compare(&f, &dir.join("opensm-lfts.dump"), &engine) {
                Ok(()) => eprintln!("{name}: identical"),
                Err(e) => {
                    eprintln!("{name}: {e}");
                    failed.push(name);
                }
            },
            (false, Err(RoutingError::Unsupported { reason, .. }))
                if same_reason(&reason, &log) =>
            {
                eprintln!("{name}: both refuse: {reason}");
            }
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
/// ftree_opensm -- --ignored timing --nocapture` (or the `ftree_time` example).
#[test]
#[ignore]
fn timing_on_big_trees() {
    for name in ["ft5832", "ft11664"] {
        let f = preset(name).unwrap().build().unwrap();
        let e = FtreeEngine::new();
        let mut best = f64::MAX;
        for _ in 0..5 {
            let t = std::time::Instant::now();
            let r = e.route(&f).unwrap();
            best = best.min(t.elapsed().as_secs_f64());
            assert!(r.tables.get(f.switches().next().unwrap(), Lid(1)).is_some());
        }
        eprintln!("{name}: ftree routes in {best:.3} s (best of 5)");
    }
}
