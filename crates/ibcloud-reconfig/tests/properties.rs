//! Property tests: after any few switch-to-switch link failures or node
//! shutdowns that leave the fabric connected, SlimUpdate and the metabase
//! give tables in which every pair is reachable, with no credit loop and no
//! down→up turn in the union of old and new tables; ftree's changes are the
//! reference the change counts are compared with.

use ibcloud_fabric::generate::FatTreeParams;
use ibcloud_fabric::{Fabric, NodeId};
use ibcloud_reconfig::event::{Event, FabricState};
use ibcloud_reconfig::metabase::{reroute, Metabase, MetabaseOptions};
use ibcloud_reconfig::slimupdate::{slim_update, SlimUpdateOptions};
use ibcloud_reconfig::subtree::{check, ranks};
use ibcloud_routing::fat_tree::FatTree;
use ibcloud_routing::{registry, EngineOptions};
use proptest::prelude::*;

fn trees() -> Vec<Fabric> {
    vec![
        FatTreeParams::k_ary_n_tree(4, 2).build().unwrap(),
        FatTreeParams::xgft(&[8, 4], &[1, 4]).build().unwrap(),
        FatTreeParams::k_ary_n_tree(3, 3).build().unwrap(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn reconfigured_tables_stay_connected_and_updown(
        tree in 0usize..3,
        picks in proptest::collection::vec((any::<bool>(), any::<u16>()), 1..4),
    ) {
        let f = trees().swap_remove(tree);
        let rank = ranks(&f, &FatTree::build(&f, &EngineOptions::default()).unwrap());
        let mut state = FabricState::new(f.clone());
        let mut prev_f = f.clone();
        let mut slim = registry::engine("ftree", &EngineOptions::default()).unwrap().route(&f).unwrap().tables;
        let mut mb = Metabase::build(&f, &MetabaseOptions::default()).unwrap();
        let mut meta = mb.route(&f, None).unwrap();
        for (link, k) in picks {
            let cur = state.current();
            let event = if link {
                let up = |n: NodeId| cur.neighbors(n).filter(|(_, r)| cur.node(r.node).is_switch()).count();
                let links: Vec<_> = cur
                    .links()
                    .filter(|l| cur.node(l.a.node).is_switch() && cur.node(l.b.node).is_switch())
                    .filter(|l| up(l.a.node) > 1 && up(l.b.node) > 1)
                    .collect();
                if links.is_empty() { continue; }
                Event::FailLink(links[k as usize % links.len()].a)
            } else {
                let cas: Vec<NodeId> = cur.cas().filter(|&c| cur.neighbors(c).next().is_some()).collect();
                Event::Shutdown(cas[k as usize % cas.len()])
            };
            let out = state.apply(&event).unwrap();
            if out.unreachable_pairs > 0 { return Ok(()); }
            let now = state.current();
            let new_slim = slim_update(&prev_f, &slim, &now, &SlimUpdateOptions::default()).unwrap().tables;
            let c = check(&prev_f, &slim, &now, &new_slim, &rank, &[]).unwrap();
            prop_assert!(c.ok(), "SlimUpdate after {:?}: {:?}", event, c);
            let (new_meta, _) = reroute(&mut mb, &now, &meta, event.changes_switch_topology(), None,
                                        &MetabaseOptions::default()).unwrap();
            let c = check(&prev_f, &meta, &now, &new_meta, &rank, &[]).unwrap();
            prop_assert!(c.ok(), "metabase after {:?}: {:?}", event, c);
            slim = new_slim;
            meta = new_meta;
            prev_f = now;
        }
    }
}
