//! Tests with hand-built routings: a destination-based up/down router for
//! fat-trees (test helper only), a ring with shortest-path routing, and
//! tables broken on purpose.

use super::*;
use crate::graph::SwitchGraph;
use ibcloud_fabric::generate::preset;
use ibcloud_fabric::lids::{assign_lids, LidOptions};
use ibcloud_fabric::{FabricBuilder, Guid, Lid, LinkRate, NodeSpec};
use std::collections::HashMap;

/// Up/down routing on a ranked fat-tree (test helper): a switch above the
/// destination's switch goes down towards it, any other goes up towards a
/// switch above it; among equal ports the LID picks (`lid % count`). Targets
/// that no up*/down* path reaches (e.g. one root from another) stay unset.
pub(crate) fn updown(fabric: &Fabric) -> ForwardingTables {
    let mut fabric_ranked;
    let mut f = fabric;
    if fabric.switches().any(|s| fabric.node(s).rank.is_none()) {
        fabric_ranked = fabric.clone();
        fabric_ranked.infer_ranks();
        f = &fabric_ranked;
    }
    let g = SwitchGraph::new(f).unwrap();
    let rank: Vec<u8> = g
        .switches
        .iter()
        .map(|&s| f.node(s).rank.unwrap_or(0))
        .collect();
    let mut by_rank: Vec<u32> = (0..g.len() as u32).collect();
    by_rank.sort_by_key(|&s| rank[s as usize]);
    let is_up = |s: usize, r: u32| rank[r as usize] + 1 == rank[s];
    // Per destination switch: D = switches that reach it going down only,
    // U = switches that reach D going up only.
    let mut cache: HashMap<u32, (Vec<bool>, Vec<bool>)> = HashMap::new();
    let mut tables = ForwardingTables::new(f);
    for t in &g.targets {
        let Some(home) = t.switch else { continue };
        let (down, up) = cache.entry(home).or_insert_with(|| {
            let mut down = vec![false; g.len()];
            let mut todo = vec![home];
            down[home as usize] = true;
            while let Some(s) = todo.pop() {
                for p in &g.ports[s as usize] {
                    if is_up(s as usize, p.remote) && !down[p.remote as usize] {
                        down[p.remote as usize] = true;
                        todo.push(p.remote);
                    }
                }
            }
            let mut up = down.clone();
            for &s in &by_rank {
                let s = s as usize;
                up[s] = up[s]
                    || g.ports[s]
                        .iter()
                        .any(|p| is_up(s, p.remote) && up[p.remote as usize]);
            }
            (down, up)
        });
        for lid in t.lid.0..t.lid.0 + (1 << t.lmc) {
            for s in 0..g.len() {
                let candidates: Vec<u8> = if s as u32 == home {
                    vec![t.port]
                } else if down[s] {
                    g.ports[s]
                        .iter()
                        .filter(|p| {
                            rank[p.remote as usize] == rank[s] + 1 && down[p.remote as usize]
                        })
                        .map(|p| p.port)
                        .collect()
                } else {
                    g.ports[s]
                        .iter()
                        .filter(|p| is_up(s, p.remote) && up[p.remote as usize])
                        .map(|p| p.port)
                        .collect()
                };
                if !candidates.is_empty() {
                    tables.set(
                        g.switches[s],
                        Lid(lid),
                        candidates[lid as usize % candidates.len()],
                    );
                }
            }
        }
    }
    tables
}

/// Five switches in a ring (port 1: a CA, port 2: clockwise, port 3:
/// counter-clockwise), with shortest-path tables (ties never happen on 5).
fn ring() -> (Fabric, ForwardingTables, Vec<NodeId>) {
    let mut b = FabricBuilder::new();
    let sw: Vec<NodeId> = (0..5)
        .map(|i| {
            b.add_node(NodeSpec::new(
                NodeKind::Switch,
                Guid(0x100 + i),
                3,
                format!("ring-{i}"),
            ))
            .unwrap()
        })
        .collect();
    for i in 0..5 {
        let ca = b
            .add_node(NodeSpec::new(
                NodeKind::Ca,
                Guid(0x1000 + 0x100 * i),
                1,
                format!("host-{i}"),
            ))
            .unwrap();
        b.connect(
            PortRef::new(sw[i as usize], 1),
            PortRef::new(ca, 1),
            LinkRate::default(),
        )
        .unwrap();
        b.connect(
            PortRef::new(sw[i as usize], 2),
            PortRef::new(sw[(i as usize + 1) % 5], 3),
            LinkRate::default(),
        )
        .unwrap();
    }
    let mut f = b.build();
    assign_lids(&mut f, &LidOptions::default()).unwrap();
    let mut t = ForwardingTables::new(&f);
    for (pr, port) in f
        .lid_ports()
        .map(|(pr, p)| (pr, p.clone()))
        .collect::<Vec<_>>()
    {
        let (home, at) = if f.node(pr.node).is_switch() {
            (pr.node, 0)
        } else {
            let r = f.remote(pr).unwrap();
            (r.node, r.port)
        };
        let h = sw.iter().position(|&s| s == home).unwrap();
        for (i, &s) in sw.iter().enumerate() {
            let cw = (h + 5 - i) % 5;
            let p = match cw {
                0 => at,
                1 | 2 => 2,
                _ => 3,
            };
            t.set(s, port.lid, p);
        }
    }
    (f, t, sw)
}

fn tree() -> (Fabric, ForwardingTables) {
    let f = preset("4-ary-2-full").unwrap().build().unwrap();
    let t = updown(&f);
    (f, t)
}

fn check(f: &Fabric, t: &ForwardingTables) -> VerifyReport {
    verify(f, t, None, &VerifyOptions::default()).unwrap()
}

/// A CA and its leaf (switch, port), and a CA on another leaf.
fn two_cas(f: &Fabric) -> (PortRef, PortRef, PortRef) {
    let a = PortRef::new(f.cas().next().unwrap(), 1);
    let leaf = f.remote(a).unwrap();
    let b = f
        .cas()
        .map(|c| PortRef::new(c, 1))
        .find(|&p| f.remote(p).unwrap().node != leaf.node)
        .unwrap();
    (a, leaf, b)
}

fn lid_of(f: &Fabric, p: PortRef) -> Lid {
    f.port(p).unwrap().lid
}

#[test]
fn a_valid_up_down_routing_passes() {
    let (f, t) = tree();
    let r = check(&f, &t);
    assert!(r.ok(), "{r}");
    assert_eq!((r.sources, r.destinations, r.switches), (32, 32, 12));
    assert_eq!(r.pairs, 32 * 31);
    assert_eq!(r.reachable, r.pairs);
    // 8 leaves with 4 hosts: 3 neighbours on the leaf, 28 across a root.
    assert_eq!(r.switches_per_path, vec![0, 32 * 3, 0, 32 * 28]);
    assert_eq!(r.ca_pairs(), 32 * 31);
    assert_eq!(r.link_routes.links, 64);
    assert_eq!(r.link_routes.mean, (32 * 28 * 2) as f64 / 64.0);
    let c = r.credit_loops.as_ref().unwrap();
    assert!(c.acyclic && c.cycle.is_none());
    assert_eq!(c.vls, vec![0]);
    assert_eq!(c.channels, 64);
    assert!(c.dependencies > 0);
    let text = r.to_string();
    assert!(
        text.contains("reachability: all 992 pairs reachable"),
        "{text}"
    );
    assert!(text.contains("credit loops: none"), "{text}");
    assert!(
        text.contains("switches per CA->CA path: 1: 96, 3: 896"),
        "{text}"
    );
}

#[test]
fn an_unset_entry_is_a_dead_end_with_its_path() {
    let (f, mut t) = tree();
    let (a, leaf, b) = two_cas(&f);
    t.set(leaf.node, lid_of(&f, b), 255);
    let r = check(&f, &t);
    assert_eq!(r.failures.unset, 4, "the 4 hosts of that leaf");
    assert_eq!(r.failures.total(), 4);
    assert_eq!(r.reachable, r.pairs - 4);
    assert!(!r.ok());
    let first = &r.first_failures[0];
    assert_eq!(first.failure, Failure::Unset);
    assert_eq!(first.source, net_name(&f, a));
    assert_eq!(first.destination_lid, lid_of(&f, b).0);
    assert_eq!(first.path.len(), 1);
    assert_eq!(first.path[0].port, None);
    assert_eq!(first.path[0].node, f.node(leaf.node).description);
    assert!(r.to_string().contains("4 pairs: no LFT entry (255)"));
}

fn net_name(f: &Fabric, p: PortRef) -> String {
    let n = f.node(p.node);
    format!("'{}' ({}) port {}", n.description, n.guid, p.port)
}

#[test]
fn a_forwarding_loop_is_found_and_shown() {
    let (f, mut t) = tree();
    let (_, leaf, b) = two_cas(&f);
    let d = lid_of(&f, b);
    // The leaf's up port for d leads to a root; send it back down to the leaf.
    let up = t.get(leaf.node, d).unwrap();
    let root = f.remote(PortRef::new(leaf.node, up)).unwrap();
    t.set(root.node, d, root.port);
    let r = check(&f, &t);
    assert!(r.failures.forwarding_loop >= 4, "{r}");
    assert_eq!(r.failures.total(), r.failures.forwarding_loop);
    let p = r
        .first_failures
        .iter()
        .find(|p| p.failure == Failure::ForwardingLoop)
        .unwrap();
    assert_eq!(
        p.path.first().unwrap().node,
        p.path.last().unwrap().node,
        "ends on the switch seen twice"
    );
    assert!(p.path.len() >= 3);
    // Loops make no dependencies: the CDG stays acyclic.
    assert!(r.credit_loops.unwrap().acyclic);
}

#[test]
fn dead_ends_of_every_kind() {
    let (f, t0) = tree();
    let (a, leaf, b) = two_cas(&f);
    let d = lid_of(&f, b);
    let dest_leaf = f.remote(b).unwrap();

    let mut t = t0.clone();
    t.set(dest_leaf.node, d, 0);
    assert_eq!(check(&f, &t).failures.port0, 31);

    let mut t = t0.clone();
    let other = (1..=f.node(dest_leaf.node).num_ports)
        .find(|&p| {
            p != dest_leaf.port
                && !f
                    .node(f.remote(PortRef::new(dest_leaf.node, p)).unwrap().node)
                    .is_switch()
        })
        .unwrap();
    t.set(dest_leaf.node, d, other);
    assert_eq!(check(&f, &t).failures.wrong_endpoint, 31);

    let mut t = t0.clone();
    t.set(leaf.node, d, 9);
    let r = check(&f, &t);
    assert_eq!(r.failures.no_such_port, 4);
    assert_eq!(r.first_failures[0].path[0].port, Some(9));

    // Remove the cable the leaf uses towards d; keep the tables.
    let up = t0.get(leaf.node, d).unwrap();
    let cut = f
        .links()
        .find(|l| l.a == PortRef::new(leaf.node, up) || l.b == PortRef::new(leaf.node, up))
        .unwrap();
    let g = f.without(&[], &[cut]);
    let r = check(&g, &t0);
    assert!(r.failures.uncabled >= 4, "{r}");
    assert_eq!(r.failures.total(), r.failures.uncabled);
    let _ = a;
}

#[test]
fn a_ring_with_shortest_paths_has_a_credit_loop_and_a_dateline_breaks_it() {
    let (f, t, sw) = ring();
    let r = check(&f, &t);
    assert!(r.all_reachable(), "{r}");
    let c = r.credit_loops.as_ref().unwrap();
    assert!(!c.acyclic);
    let cycle = c.cycle.as_ref().unwrap();
    assert_eq!(cycle.vl, 0);
    assert_eq!(cycle.channels.len(), 5);
    assert_eq!(
        cycle.channels[0], "'ring-0' port 2 -> 'ring-1' port 3",
        "{cycle:?}"
    );
    assert_eq!(cycle.channels[4], "'ring-4' port 2 -> 'ring-0' port 3");
    assert!(r.to_string().contains(
        "credit loops: FOUND on VL 0 (5 channels):\n  'ring-0' port 2 -> 'ring-1' port 3\n"
    ));

    // Paths that cross the link between ring-4 and ring-0 (either way) go on SL 1.
    let lids: Vec<Lid> = f.lid_ports().map(|(_, p)| p.lid).collect();
    let home = |l: Lid| {
        let (pr, _) = f.lid_ports().find(|(_, p)| p.lid == l).unwrap();
        let n = if f.node(pr.node).is_switch() {
            pr.node
        } else {
            f.remote(pr).unwrap().node
        };
        sw.iter().position(|&s| s == n).unwrap()
    };
    let mut sls = PathSls::new(&lids);
    for &s in &lids {
        for &d in &lids {
            let (a, b) = (home(s), home(d));
            let cw = (b + 5 - a) % 5;
            let crosses = match cw {
                1 | 2 => a + cw >= 5,
                3 | 4 => a < 5 - cw,
                _ => false,
            };
            sls.set(s, d, u8::from(crosses));
        }
    }
    let r = verify(&f, &t, Some(&sls), &VerifyOptions::default()).unwrap();
    let c = r.credit_loops.as_ref().unwrap();
    assert!(c.acyclic, "{r}");
    assert_eq!(c.vls, vec![0, 1]);
    // All SLs on VL 0 again: the loop is back.
    let mut one_vl = VerifyOptions::default();
    one_vl.sl2vl.0[1] = 0;
    let r = verify(&f, &t, Some(&sls), &one_vl).unwrap();
    assert!(!r.credit_loops.unwrap().acyclic);
    // Without the check there is no credit-loop section.
    let r = verify(
        &f,
        &t,
        None,
        &VerifyOptions {
            credit_loops: false,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(r.credit_loops.is_none() && r.ok());
}

#[test]
fn path_sls_are_written_for_ibdmchk() {
    let (f, _, _) = ring();
    let lids: Vec<Lid> = f.lid_ports().map(|(_, p)| p.lid).collect();
    let mut sls = PathSls::new(&lids);
    sls.set(Lid(6), Lid(2), 3);
    let mut out = Vec::new();
    ibdmchk::write_psl(&f, &sls, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.lines().count(), 10 * 10);
    assert!(
        text.starts_with("0x0000000000000100 1 0\n0x0000000000000100 2 0\n"),
        "{text}"
    );
    let host0 = f.node(f.cas().next().unwrap()).guid;
    assert_eq!(f.node_lid(f.cas().next().unwrap()), Lid(6));
    assert!(text.contains(&format!("\n{host0} 2 3\n")));
}

#[test]
fn switch_lids_are_checked_when_asked() {
    let (f, t, _) = ring();
    let opts = VerifyOptions {
        include_switches: true,
        ..Default::default()
    };
    let r = verify(&f, &t, None, &opts).unwrap();
    assert_eq!((r.sources, r.destinations), (10, 10));
    assert_eq!(r.pairs, 10 * 9);
    assert!(r.all_reachable(), "{r}");
    assert_eq!(r.ca_pairs(), 5 * 4, "statistics stay CA to CA");
    let mut broken = t.clone();
    let s0 = f.switches().next().unwrap();
    let s1 = f.switches().nth(1).unwrap();
    broken.set(s1, f.node_lid(s0), 255);
    let r = verify(&f, &broken, None, &opts).unwrap();
    // Sources at ring-1 (its CA and itself) and those routed through it (ring-2's two) towards ring-0.
    assert_eq!(r.failures.unset, 4, "{r}");
    assert_eq!(r.failures.total(), 4);
    // The CA pairs come first among the examples.
    assert!(
        r.first_failures[0].source.starts_with("'host-1'"),
        "{:?}",
        r.first_failures[0]
    );
}

#[test]
fn lmc_ranges_are_destinations_too() {
    let mut f = preset("4-ary-2-full").unwrap().build().unwrap();
    assign_lids(
        &mut f,
        &LidOptions {
            lmc: 1,
            ..Default::default()
        },
    )
    .unwrap();
    let t = updown(&f);
    let r = check(&f, &t);
    assert_eq!(r.destinations, 64);
    assert_eq!(r.pairs, 32 * 31 * 2);
    assert!(r.ok(), "{r}");
}

#[test]
fn unattached_ports_are_listed_not_checked() {
    let f = preset("4-ary-2-full").unwrap().build().unwrap();
    let leaf = f
        .remote(PortRef::new(f.cas().next().unwrap(), 1))
        .unwrap()
        .node;
    let g = f.without(&[leaf], &[]);
    let t = updown(&g);
    let r = check(&g, &t);
    assert_eq!(r.unattached.len(), 4);
    assert_eq!(r.sources, 28);
    assert!(r.ok(), "{r}");
    assert!(r
        .to_string()
        .contains("ports with a LID but no switch (not checked): 4"));
}

#[test]
fn results_do_not_depend_on_threads_and_serialise() {
    let f = preset("ft324").unwrap().build().unwrap();
    let mut t = updown(&f);
    // A few broken entries spread over destinations.
    for (k, sw) in f.switches().enumerate().step_by(7) {
        t.set(sw, Lid((k * 13 % 300 + 1) as u16), 255);
    }
    let opts = VerifyOptions {
        per_link: true,
        max_failures: 5,
        ..Default::default()
    };
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| verify(&f, &t, None, &opts).unwrap())
    };
    let one = run(1);
    assert_eq!(one, run(3));
    assert!(one.failures.unset > 0);
    assert_eq!(one.first_failures.len(), 5);
    assert!(one
        .first_failures
        .windows(2)
        .all(|w| w[0].destination_lid <= w[1].destination_lid));
    let json = serde_json::to_value(&one).unwrap();
    assert_eq!(json["failures"]["unset"], one.failures.unset);
    assert_eq!(json["first_failures"][0]["failure"], "unset");
    assert!(json["credit_loops"]["acyclic"].as_bool().unwrap());
    assert_eq!(
        json["per_link"].as_array().unwrap().len(),
        one.per_link.len()
    );
    let cabled: usize = f.switches().map(|s| f.neighbors(s).count()).sum();
    assert_eq!(one.per_link.len(), cabled);
    let no_links = serde_json::to_value(check(&f, &t)).unwrap();
    assert!(no_links.get("per_link").is_none());
}

#[test]
fn opensm_tables_from_the_interop_fixture_pass() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/interop/");
    let f = ibcloud_fabric::formats::subnet_lst::parse(
        &std::fs::read_to_string(format!("{dir}opensm-subnet.lst")).unwrap(),
        "opensm-subnet.lst",
    )
    .unwrap();
    let text = std::fs::read_to_string(format!("{dir}opensm-lfts.dump")).unwrap();
    let t = ibcloud_fabric::formats::lfts_dump::parse(&text, "opensm-lfts.dump")
        .unwrap()
        .to_tables(&f)
        .unwrap();
    let r = verify(
        &f,
        &t,
        None,
        &VerifyOptions {
            include_switches: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(r.ok(), "{r}");
}

/// The ring whose tables OpenSM's `file` engine loaded with a detour into a
/// forwarding loop, an uncabled port and a CA port; ibdmchk's verdict on the
/// same files is in fixtures/interop/ibdmchk/ring8-file-missing-paths.out.
#[test]
fn agrees_with_ibdmchk_on_the_broken_ring() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/interop/");
    let read = |f: &str| std::fs::read_to_string(format!("{dir}{f}")).unwrap();
    let f = ibcloud_fabric::formats::subnet_lst::parse(
        &read("fdbs/ring8-file/opensm-subnet.lst"),
        "lst",
    )
    .unwrap();
    let t = ibcloud_fabric::formats::lfts_dump::parse(
        &read("fdbs/ring8-file/opensm-lfts.dump"),
        "lfts",
    )
    .unwrap()
    .to_tables(&f)
    .unwrap();
    let r = check(&f, &t);
    let ibdmchk = read("ibdmchk/ring8-file-missing-paths.out");
    assert!(ibdmchk.contains("-E- Found 4 missing paths out of:56 paths"));
    assert_eq!((r.pairs, r.failures.total()), (56, 4));
    assert_eq!(
        (
            r.failures.forwarding_loop,
            r.failures.uncabled,
            r.failures.wrong_endpoint
        ),
        (2, 1, 1)
    );
    // ibdmchk counts links: HOPS 3/4/5/6 with 16/15/14/7 pairs.
    assert!(ibdmchk.contains("  3   16\n  4   15\n  5   14\n  6   7\n"));
    assert_eq!(r.switches_per_path, vec![0, 0, 16, 15, 14, 7]);
    // Shortest paths on a ring: a credit loop, as ibdmchk finds on the minhop tables.
    assert!(!r.credit_loops.unwrap().acyclic);
    assert!(read("ibdmchk/ring8-minhop-credit-loop.out").contains("-E- credit loops in routing"));
}

#[test]
fn tables_of_another_fabric_are_refused() {
    let (f, _) = tree();
    let other = preset("8-ary-2").unwrap().build().unwrap();
    let t = ForwardingTables::new(&other);
    assert!(matches!(
        verify(&f, &t, None, &VerifyOptions::default()),
        Err(VerifyError::WrongFabric { .. })
    ));
}

#[test]
fn a_fabric_without_switches_or_tables_is_fine() {
    let mut b = FabricBuilder::new();
    let x = b
        .add_node(NodeSpec::new(NodeKind::Ca, Guid(1), 1, "a"))
        .unwrap();
    let y = b
        .add_node(NodeSpec::new(NodeKind::Ca, Guid(2), 1, "b"))
        .unwrap();
    b.connect(PortRef::new(x, 1), PortRef::new(y, 1), LinkRate::default())
        .unwrap();
    let mut f = b.build();
    assign_lids(&mut f, &LidOptions::default()).unwrap();
    let r = check(&f, &ForwardingTables::new(&f));
    assert_eq!(
        (r.pairs, r.unattached.len(), r.link_routes.links),
        (0, 2, 0)
    );
    assert!(r.ok());
}

/// CPU seconds used by this process so far (user + system), from /proc.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, r)| r)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// Runs `f`, printing wall and CPU time.
fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let (t0, c0) = (std::time::Instant::now(), cpu_seconds());
    let r = f();
    eprintln!(
        "{what}: wall {:.2} s, cpu {:.2} s ({} threads)",
        t0.elapsed().as_secs_f64(),
        cpu_seconds() - c0,
        rayon::current_num_threads()
    );
    r
}

/// ft11664 in release mode: `cargo test --release -p ibcloud-routing -- --ignored --nocapture ft11664`.
/// Set `IBCLOUD_FT11664_LFTS` to an OpenSM `opensm-lfts.dump` of the same tree to check that too.
#[test]
#[ignore = "big tree; run in release mode"]
fn ft11664_is_verified_quickly() {
    let f = preset("ft11664").unwrap().build().unwrap();
    let t = timed("up/down helper routing", || updown(&f));
    let bytes: usize = t.iter().map(|(_, e)| e.len()).sum();
    eprintln!("tables: {:.1} MB", bytes as f64 / 1e6);
    for include_switches in [false, true] {
        let opts = VerifyOptions {
            include_switches,
            ..Default::default()
        };
        let r = timed(&format!("verify, switches {include_switches}"), || {
            verify(&f, &t, None, &opts).unwrap()
        });
        eprintln!("{r}");
        assert_eq!(r.ca_pairs(), 11664 * 11663);
        assert!(r.credit_loops.as_ref().unwrap().acyclic);
        if !include_switches {
            assert!(r.ok());
        }
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mem: Vec<&str> = status
        .lines()
        .filter(|l| l.starts_with("VmHWM") || l.starts_with("VmRSS"))
        .collect();
    eprintln!("memory so far (fabric, helper, tables, verify): {mem:?}");
    // Path SLs on two VLs: up/down stays deadlock-free on each.
    let lids: Vec<Lid> = f.lid_ports().map(|(_, p)| p.lid).collect();
    let sls = timed("path SLs built", || {
        let mut sls = PathSls::new(&lids);
        for &s in &lids {
            for &d in &lids {
                sls.set(s, d, ((s.0 ^ d.0) & 1) as u8);
            }
        }
        sls
    });
    let r = timed("verify with path SLs", || {
        verify(&f, &t, Some(&sls), &VerifyOptions::default()).unwrap()
    });
    eprintln!("{r}");
    assert!(r.ok());
    assert_eq!(r.credit_loops.as_ref().unwrap().vls, vec![0, 1]);
    drop(sls);
    if let Ok(path) = std::env::var("IBCLOUD_FT11664_LFTS") {
        let text = std::fs::read_to_string(&path).unwrap();
        let dump = timed("parse OpenSM dump", || {
            ibcloud_fabric::formats::lfts_dump::parse(&text, &path).unwrap()
        });
        let t = timed("dump to tables", || dump.to_tables(&f).unwrap());
        for include_switches in [false, true] {
            let opts = VerifyOptions {
                include_switches,
                ..Default::default()
            };
            let r = timed(
                &format!("verify OpenSM, switches {include_switches}"),
                || verify(&f, &t, None, &opts).unwrap(),
            );
            eprintln!("{r}");
            if !include_switches {
                assert!(r.ok());
            }
        }
    }
}

/// Verifies OpenSM dump folders: `IBCLOUD_VERIFY_DIRS=<dir>,<dir>…`, each with
/// `opensm-subnet.lst` and `opensm-lfts.dump` (the fabric with OpenSM's LIDs).
/// `cargo test --release -p ibcloud-routing -- --ignored --nocapture opensm_dump_dirs`
#[test]
#[ignore = "needs OpenSM dumps; see the doc comment"]
fn opensm_dump_dirs() {
    let Ok(dirs) = std::env::var("IBCLOUD_VERIFY_DIRS") else {
        return;
    };
    for dir in dirs.split(',') {
        let lst = std::fs::read_to_string(format!("{dir}/opensm-subnet.lst")).unwrap();
        let f = ibcloud_fabric::formats::subnet_lst::parse(&lst, "opensm-subnet.lst").unwrap();
        let text = std::fs::read_to_string(format!("{dir}/opensm-lfts.dump")).unwrap();
        let t = ibcloud_fabric::formats::lfts_dump::parse(&text, "opensm-lfts.dump")
            .unwrap()
            .to_tables(&f)
            .unwrap();
        for include_switches in [false, true] {
            let opts = VerifyOptions {
                include_switches,
                max_failures: 4,
                ..Default::default()
            };
            let r = timed(&format!("{dir}, switches {include_switches}"), || {
                verify(&f, &t, None, &opts).unwrap()
            });
            eprintln!("{r}");
        }
    }
}

/// Writes the up/down helper's tables of a preset for the interop tools:
/// `IBCLOUD_WRITE_UPDOWN=<preset>:<dir>` gives `<dir>/updown-lfts.dump` and
/// `<dir>/updown.fdbs` (for `opensm -R file -U` and `ibdmchk -f`).
#[test]
#[ignore = "writes files; see the doc comment"]
fn write_updown_tables() {
    let Ok(spec) = std::env::var("IBCLOUD_WRITE_UPDOWN") else {
        return;
    };
    let (name, dir) = spec.split_once(':').unwrap();
    let f = preset(name).unwrap().build().unwrap();
    let t = updown(&f);
    let r = timed("verify", || {
        verify(&f, &t, None, &VerifyOptions::default()).unwrap()
    });
    eprintln!("{r}");
    let mut out =
        std::io::BufWriter::new(std::fs::File::create(format!("{dir}/updown-lfts.dump")).unwrap());
    ibcloud_fabric::formats::lfts_dump::write(&f, &t, &mut out).unwrap();
    let mut out =
        std::io::BufWriter::new(std::fs::File::create(format!("{dir}/updown.fdbs")).unwrap());
    timed("write fdbs", || {
        ibcloud_fabric::formats::fdbs::write(&f, &t, &mut out).unwrap()
    });
    // What `ibroute -n <switch lid>` read back after `opensm -R file -U updown-lfts.dump`.
    if let Ok(text) = std::fs::read_to_string(format!("{dir}/ibroute.txt")) {
        let back = ibcloud_fabric::formats::fdbs::parse_ibroute(&text, "ibroute.txt").unwrap();
        assert_eq!(back.switches.len(), f.switches().count());
        assert_eq!(
            back.to_tables(&f).unwrap(),
            t,
            "the fabric holds our tables"
        );
        eprintln!(
            "ibroute.txt: all {} switch tables equal ours",
            back.switches.len()
        );
    }
}

/// Path SLs for the 8-switch ring of an OpenSM dump folder (`IBCLOUD_PSL_RING=<dir>`):
/// paths over the cable between `ring-7` and `ring-0` go on SL 1. Writes
/// `<dir>/psl.txt` for `ibdmchk -c` and prints our verdict with and without SLs.
#[test]
#[ignore = "needs OpenSM dumps; see the doc comment"]
fn ring_dateline_psl() {
    let Ok(dir) = std::env::var("IBCLOUD_PSL_RING") else {
        return;
    };
    let lst = std::fs::read_to_string(format!("{dir}/opensm-subnet.lst")).unwrap();
    let f = ibcloud_fabric::formats::subnet_lst::parse(&lst, "opensm-subnet.lst").unwrap();
    let text = std::fs::read_to_string(format!("{dir}/opensm-lfts.dump")).unwrap();
    let t = ibcloud_fabric::formats::lfts_dump::parse(&text, "opensm-lfts.dump")
        .unwrap()
        .to_tables(&f)
        .unwrap();
    let name = |n: NodeId| f.node(n).description.clone();
    let lids: Vec<(Lid, NodeId)> = f
        .lid_ports()
        .map(|(pr, p)| {
            (
                p.lid,
                if f.node(pr.node).is_switch() {
                    pr.node
                } else {
                    f.remote(pr).unwrap().node
                },
            )
        })
        .collect();
    let mut sls = PathSls::new(&lids.iter().map(|l| l.0).collect::<Vec<_>>());
    for &(s, home) in &lids {
        for &(d, _) in &lids {
            let (mut at, mut crosses) = (home, false);
            for _ in 0..16 {
                let Some(p) = t.get(at, d).filter(|&p| p != 0) else {
                    break;
                };
                let Some(r) = f.remote(PortRef::new(at, p)) else {
                    break;
                };
                if !f.node(r.node).is_switch() {
                    break;
                }
                let pair = [name(at), name(r.node)];
                crosses |=
                    pair.contains(&"ring-7".to_string()) && pair.contains(&"ring-0".to_string());
                at = r.node;
            }
            sls.set(s, d, u8::from(crosses));
        }
    }
    let mut out = std::io::BufWriter::new(std::fs::File::create(format!("{dir}/psl.txt")).unwrap());
    ibdmchk::write_psl(&f, &sls, &mut out).unwrap();
    eprintln!("without SLs:\n{}", check(&f, &t));
    eprintln!(
        "with SLs:\n{}",
        verify(&f, &t, Some(&sls), &VerifyOptions::default()).unwrap()
    );
}
