//! Times the three reconfigurations on one fat-tree against a full ftree
//! re-route of the same tree in the same run (best of `REPEATS`):
//! `cargo run --release -p ibcloud-reconfig --example reconfig_speed -- [PRESET] [REPEATS]`
//! (default ft11664 3). Prints one JSON object.

use std::time::{Duration, Instant};

use ibcloud_fabric::generate::preset;
use ibcloud_reconfig::event::{Event, FabricState};
use ibcloud_reconfig::metabase::{Metabase, MetabaseOptions};
use ibcloud_reconfig::slimupdate::{roots_of, slim_update, SlimUpdateOptions};
use ibcloud_reconfig::subtree::{SubtreeEngine, SubtreeOptions, SubtreeReconfigurer};
use ibcloud_routing::{registry, EngineOptions};

fn best<T>(n: usize, mut f: impl FnMut() -> (T, Duration)) -> (T, Duration) {
    let mut out = f();
    for _ in 1..n {
        let r = f();
        if r.1 < out.1 {
            out = r;
        }
    }
    out
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let name = args.get(1).map_or("ft11664", String::as_str);
    let repeats: usize = args.get(2).map_or(Ok(3), |s| s.parse())?;
    let fabric = preset(name)?.build()?;
    let ftree = registry::engine("ftree", &EngineOptions::default())?;
    let (routing, full) = best(repeats, || {
        let t = Instant::now();
        let r = ftree.route(&fabric).expect("ftree routes the preset");
        (r, t.elapsed())
    });
    let old = routing.tables;

    // Sub-tree: the 2-level sub-tree of the first compute node, NoFTree in reverse port order.
    let r = SubtreeReconfigurer::new(&fabric, &EngineOptions::default())?;
    let first = fabric.cas().next().ok_or("no CA")?;
    let sub = r.select(&[first], &SubtreeOptions::default())?;
    let mut order = sub.destinations.clone();
    order.reverse();
    let engine = SubtreeEngine::NoFtree(order);
    let (res, subtree) = best(repeats, || {
        let mut t = old.clone();
        let res = r
            .reconfigure_in_place(&mut t, &[first], &engine, &SubtreeOptions::default())
            .expect("sub-tree reconfiguration");
        let d = res.times.total();
        (res, d)
    });

    // SlimUpdate after one link failure (a leaf up-link).
    let link = fabric
        .links()
        .find(|l| fabric.node(l.a.node).is_switch() && fabric.node(l.b.node).is_switch())
        .ok_or("no switch link")?;
    let mut state = FabricState::new(fabric.clone());
    state.apply(&Event::FailLink(link.a))?;
    let now = state.current();
    let roots = roots_of(&fabric)?;
    let opts = SlimUpdateOptions {
        roots: Some(roots.clone()),
        keep: None,
        switch_counter: false,
        cap_floor: false,
    };
    let (slim, slim_t) = best(repeats, || {
        let t = Instant::now();
        let s = slim_update(&fabric, &old, &now, &opts).expect("slimupdate");
        (s, t.elapsed())
    });
    let ftree_roots = registry::engine(
        "ftree",
        &EngineOptions {
            roots: Some(roots),
            ..EngineOptions::default()
        },
    )?;
    let (full_after, full_after_t) = best(repeats, || {
        let t = Instant::now();
        let r = ftree_roots.route(&now).expect("ftree after the failure");
        (r.tables, t.elapsed())
    });
    let slim_changes = ibcloud_reconfig::report::ChangeReport::between(&old, &slim.tables);
    let full_changes = ibcloud_reconfig::report::ChangeReport::between(&old, &full_after);

    // Metabase: phase I once, phase II re-selection with a reversed order.
    let t = Instant::now();
    let mb = Metabase::build(&fabric, &MetabaseOptions::default())?;
    let phase1 = t.elapsed();
    let base = mb.route(&fabric, None)?;
    let mut cas: Vec<_> = ca_lids(&fabric);
    cas.reverse();
    let ((), phase2) = best(repeats, || {
        let mut t = base.clone();
        let d = mb.assign(&fabric, &mut t, Some(&cas)).expect("phase II");
        ((), d)
    });

    println!(
        "{{\"preset\":\"{name}\",\"repeats\":{repeats},\"ftree_full_ms\":{:.3},\
\"subtree_ms\":{:.3},\"subtree_select_ms\":{:.3},\"subtree_build_ms\":{:.3},\"subtree_route_ms\":{:.3},\"subtree_apply_ms\":{:.3},\
\"subtree_switches\":{},\"subtree_destinations\":{},\"subtree_changed_entries\":{},\"subtree_changed_blocks\":{},\
\"slimupdate_ms\":{:.3},\"ftree_after_failure_ms\":{:.3},\"slim_changed_entries\":{},\"ftree_changed_entries\":{},\
\"metabase_phase1_ms\":{:.3},\"metabase_phase2_ms\":{:.3},\
\"subtree_vs_ftree\":{:.5},\"slimupdate_vs_ftree\":{:.3},\"phase2_vs_ftree\":{:.4},\
\"targets\":{{\"subtree_under_10ms\":{},\"slimupdate_under_1s\":{},\"phase2_under_100ms\":{}}}}}",
        ms(full),
        ms(subtree),
        ms(res.times.select),
        ms(res.times.build),
        ms(res.times.route),
        ms(res.times.apply),
        res.subtree.switches.len(),
        res.subtree.destinations.len(),
        res.changes.changed_entries,
        res.changes.changed_blocks,
        ms(slim_t),
        ms(full_after_t),
        slim_changes.changed_entries,
        full_changes.changed_entries,
        ms(phase1),
        ms(phase2),
        subtree.as_secs_f64() / full.as_secs_f64(),
        slim_t.as_secs_f64() / full_after_t.as_secs_f64(),
        phase2.as_secs_f64() / full.as_secs_f64(),
        ms(subtree) < 10.0,
        ms(slim_t) < 1000.0,
        ms(phase2) < 100.0,
    );
    Ok(())
}

fn ca_lids(f: &ibcloud_fabric::Fabric) -> Vec<ibcloud_fabric::Lid> {
    f.cas().map(|c| f.node_lid(c)).collect()
}
