use super::*;
use ibcloud_fabric::lids::{assign_lids, LidOptions};
use ibcloud_fabric::{FabricBuilder, Guid, LinkRate, NodeKind, NodeSpec, PortRef};

/// A small deterministic generator for test topologies.
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// A connected random switch graph (a random spanning tree plus extra
/// cables, parallel ones included), one CA per switch.
fn random_fabric(seed: u64, n: usize, extra: usize) -> Fabric {
    let mut rng = XorShift(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let ports = 12u32;
    let mut b = FabricBuilder::new();
    // GUIDs scrambled so that LASH order differs from fabric order.
    let sws: Vec<_> = (0..n)
        .map(|i| {
            let guid = Guid(0x1000 + ((i as u64 * 7919) % 65_521) * 256 + i as u64);
            b.add_node(NodeSpec::new(
                NodeKind::Switch,
                guid,
                ports,
                format!("s{i}"),
            ))
            .unwrap()
        })
        .collect();
    let mut used = vec![1u8; n]; // next free port; the last one is for the CA
    let cable = |b: &mut FabricBuilder, x: usize, y: usize, used: &mut Vec<u8>| {
        if x == y || used[x] as u32 >= ports || used[y] as u32 >= ports {
            return;
        }
        b.connect(
            PortRef::new(sws[x], used[x]),
            PortRef::new(sws[y], used[y]),
            LinkRate::default(),
        )
        .unwrap();
        used[x] += 1;
        used[y] += 1;
    };
    for i in 1..n {
        let j = rng.below(i);
        cable(&mut b, i, j, &mut used);
    }
    for _ in 0..extra {
        let (x, y) = (rng.below(n), rng.below(n));
        cable(&mut b, x, y, &mut used);
    }
    for (i, &s) in sws.iter().enumerate() {
        let ca = b
            .add_node(NodeSpec::new(
                NodeKind::Ca,
                Guid(0x100_0000 + i as u64 * 16),
                1,
                format!("c{i}"),
            ))
            .unwrap();
        b.connect(
            PortRef::new(s, ports as u8),
            PortRef::new(ca, 1),
            LinkRate::default(),
        )
        .unwrap();
    }
    let mut f = b.build();
    assign_lids(&mut f, &LidOptions::default()).unwrap();
    f
}

/// `lash_core`'s assignment as OpenSM runs it: its depth-first cycle search
/// from the first channel of each path, no maintained order.
fn assign_replay(paths: &Paths, available: usize) -> Option<(Vec<u8>, Vec<i64>)> {
    let n = paths.n;
    let mut cdg = Cdg::new(paths.to.len());
    cdg.ensure_lane(0);
    cdg.unorder(0);
    let mut lane = vec![0u8; n * n];
    let mut count = vec![0i64; 1];
    let mut needed = 1;
    for i in 0..n as u32 {
        for d in i + 1..n as u32 {
            let mut v = 0;
            let mut cycle = false;
            while v < needed {
                cdg.add_path(paths, i, d, v);
                cdg.add_path(paths, d, i, v);
                let c1 = cdg.dfs_cycle(cdg.first_vertex(paths, i, d, v));
                let c2 = cdg.dfs_cycle(cdg.first_vertex(paths, d, i, v));
                cdg.reset_visits();
                cycle = c1 || c2;
                if cycle {
                    cdg.remove_temp(paths, i, d, v);
                    cdg.remove_temp(paths, d, i, v);
                    v += 1;
                } else {
                    cdg.make_permanent(paths, i, d, v);
                    cdg.make_permanent(paths, d, i, v);
                    count[v] += 2;
                    break;
                }
            }
            if cycle {
                needed += 1;
                if needed > available {
                    return None;
                }
                cdg.ensure_lane(v);
                cdg.unorder(v);
                count.push(0);
                cdg.add_path(paths, i, d, v);
                cdg.add_path(paths, d, i, v);
                cdg.make_permanent(paths, i, d, v);
                cdg.make_permanent(paths, d, i, v);
                count[v] += 2;
            }
            lane[i as usize * n + d as usize] = v as u8;
            lane[d as usize * n + i as usize] = v as u8;
        }
    }
    Some((lane, count))
}

fn paths_of(f: &Fabric) -> Paths {
    let g = SwitchGraph::new(f).unwrap();
    Topology::new(f, &g).minimal_paths().unwrap()
}

#[test]
fn maintained_order_decides_like_opensms_search() {
    let mut multi = 0;
    for seed in 0..60u64 {
        let n = 4 + (seed as usize * 7) % 22;
        let f = random_fabric(seed, n, n + (seed as usize % 3) * n);
        let paths = paths_of(&f);
        let fast = Layers::assign(&paths, 15).ok().map(|l| (l.lane, l.count));
        let replay = assign_replay(&paths, 15);
        assert_eq!(fast, replay, "seed {seed}, {n} switches");
        if fast.is_some_and(|(_, c)| c.len() > 1) {
            multi += 1;
        }
    }
    assert!(multi > 10, "only {multi} graphs needed several layers");
}

#[test]
fn paths_are_minimal_and_use_the_first_cable() {
    for seed in 0..20u64 {
        let f = random_fabric(seed, 15, 25);
        let g = SwitchGraph::new(&f).unwrap();
        let topo = Topology::new(&f, &g);
        let paths = topo.minimal_paths().unwrap();
        let n = g.len();
        for s in 0..n {
            let dist = g.bfs(topo.sw_of[s]);
            for d in 0..n {
                let hops = {
                    let mut k = 0;
                    let mut w = s;
                    while w != d {
                        let c = paths.hop[w * n + d] as usize;
                        // First cable of the switch to that neighbour.
                        let first = g.ports[topo.sw_of[w] as usize]
                            .iter()
                            .find(|sp| topo.lash_of[sp.remote as usize] == paths.to[c])
                            .unwrap();
                        assert_eq!(first.port, topo.chan_port[c]);
                        w = paths.to[c] as usize;
                        k += 1;
                    }
                    k
                };
                assert_eq!(
                    hops, dist[topo.sw_of[d] as usize],
                    "seed {seed}: {s} -> {d}"
                );
            }
        }
    }
}

#[test]
fn balancing_keeps_every_layer_acyclic() {
    for seed in 0..30u64 {
        let f = random_fabric(seed, 20, 30);
        let (routing, stats) = Lash::new(&EngineOptions::default())
            .unwrap()
            .route_with_stats(&f)
            .unwrap();
        assert_eq!(stats.paths_per_layer.iter().sum::<usize>(), 20 * 19);
        assert_eq!(routing.tables.unrouted(&f, true), 0);
        // Each layer's dependencies, rebuilt from scratch, have no cycle.
        let paths = paths_of(&f);
        let g = SwitchGraph::new(&f).unwrap();
        let topo = Topology::new(&f, &g);
        let sls = routing.path_sls.unwrap();
        let n = paths.n;
        let lid = |l: usize| f.node_lid(g.switches[topo.sw_of[l] as usize]);
        let mut cdg = Cdg::new(paths.to.len());
        cdg.ensure_lane(stats.layers);
        for s in 0..n as u32 {
            for d in 0..n as u32 {
                if s != d {
                    let layer = sls.get(lid(s as usize), lid(d as usize)) as usize;
                    cdg.add_path(&paths, s, d, layer);
                    cdg.make_permanent(&paths, s, d, layer);
                }
            }
        }
        assert!(!cdg.take_cycle(), "seed {seed}");
    }
}

#[test]
fn glibc_rand_is_the_unseeded_sequence() {
    let mut r = GlibcRand::new(1);
    assert_eq!(r.next_u31(), 1_804_289_383);
}

#[test]
fn balancing_with_the_order_decides_like_the_replay() {
    let mut balanced = 0;
    for seed in 0..150u64 {
        let n = 8 + (seed as usize * 5) % 30;
        let f = random_fabric(seed, n, n * (1 + seed as usize % 3));
        let paths = paths_of(&f);
        let Ok(mut fast) = Layers::assign(&paths, 15) else {
            continue;
        };
        let mut slow = Layers::assign(&paths, 15).unwrap();
        for l in 0..slow.needed {
            slow.cdg.unorder(l);
        }
        // Some layers replayed, the others ordered.
        let mut mixed = Layers::assign(&paths, 15).unwrap();
        for l in (0..mixed.needed).filter(|l| (l + seed as usize).is_multiple_of(2)) {
            mixed.cdg.unorder(l);
        }
        fast.balance(&paths);
        slow.balance(&paths);
        mixed.balance(&paths);
        assert_eq!(mixed.lane, slow.lane, "seed {seed}");
        assert_eq!(fast.lane, slow.lane, "seed {seed}");
        assert_eq!(fast.count, slow.count, "seed {seed}");
        fast.cdg.check_list().unwrap();
        for l in 0..fast.needed {
            let (against_order, cyclic) = fast.cdg.audit(l);
            assert!(!cyclic, "seed {seed}: layer {l} has a cycle");
            assert!(
                !(against_order && fast.cdg.is_ordered(l)),
                "seed {seed}: layer {l} against its order"
            );
        }
        balanced += usize::from(fast.needed > 1);
    }
    assert!(balanced > 30, "{balanced}");
}
