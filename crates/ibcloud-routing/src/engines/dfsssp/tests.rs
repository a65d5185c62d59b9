use super::*;
use ibcloud_fabric::formats::{guid2lid, lfts_dump};
use ibcloud_fabric::generate::preset;
use ibcloud_fabric::{FabricBuilder, LinkRate, NodeSpec, PortRef};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/opensm/dfsssp")
}

/// Differences between two table sets: (switch, LID, ours, theirs), at most `max`.
pub(crate) fn differences(
    fabric: &Fabric,
    ours: &ForwardingTables,
    theirs: &ForwardingTables,
    max: usize,
) -> (usize, Vec<String>) {
    let mut count = 0;
    let mut shown = Vec::new();
    for (sw, lid, x, y) in ours.differences(theirs) {
        count += 1;
        if shown.len() < max {
            shown.push(format!(
                "{} lid {}: ours {x} theirs {y}",
                fabric.node(sw).description,
                lid.0
            ));
        }
    }
    (count, shown)
}

/// Compares our routing of `fabric` with OpenSM's dump in `dir`; returns the
/// number of differing entries and our routing.
pub(crate) fn compare_fabric(name: &str, fabric: &Fabric, dir: &Path) -> (usize, DfssspRouting) {
    let g2l = std::fs::read_to_string(dir.join("guid2lid")).unwrap();
    let map = guid2lid::parse(&g2l, "guid2lid").unwrap();
    for (pr, port) in fabric
        .lid_ports()
        .filter(|(pr, p)| p.remote.is_some() || fabric.node(pr.node).is_switch())
    {
        let guid = port.guid;
        assert_eq!(
            map.get(&guid).map(|r| r.0),
            Some(port.lid),
            "LID of {}",
            fabric.port_label(pr)
        );
    }
    let text = std::fs::read_to_string(dir.join("opensm-lfts.dump")).unwrap();
    let theirs = lfts_dump::parse(&text, "opensm-lfts.dump")
        .unwrap()
        .to_tables(fabric)
        .unwrap();
    let ours = Dfsssp::default().route_detailed(fabric).unwrap();
    let (count, shown) = differences(fabric, &ours.routing.tables, &theirs, 10);
    for s in &shown {
        eprintln!("{name}: {s}");
    }
    (count, ours)
}

pub(crate) fn compare_with(name: &str, dir: &Path) -> usize {
    compare_fabric(name, &preset(name).unwrap().build().unwrap(), dir).0
}

/// Our layer report against the head of OpenSM's info log (layers.log).
fn check_layers(name: &str, r: &DfssspRouting, dir: &Path) {
    let log = std::fs::read_to_string(dir.join("layers.log")).unwrap_or_else(|_| {
        // A whole OpenSM log: keep dfsssp's info lines.
        let full = std::fs::read_to_string(dir.join("opensm.log")).unwrap();
        full.lines()
            .filter_map(|l| l.split_once("dfsssp_remove_deadlocks: ").map(|(_, r)| r))
            .filter(|r| {
                r.starts_with("Virtual Lanes a")
                    || r.starts_with("Virtual Lanes n")
                    || r.contains("lane:")
                    || r.starts_with("Paths")
            })
            .map(|r| format!("{r}\n"))
            .collect()
    });
    let mut expect = vec![
        format!("Virtual Lanes available: {}", r.layers.vls_available),
        format!("Virtual Lanes needed: {}", r.layers.vls_needed),
        "Paths per VL (before balancing):".to_string(),
    ];
    for (i, p) in r.layers.paths_per_vl.iter().enumerate() {
        expect.push(format!("   {i}. lane: {p}"));
    }
    let got: Vec<&str> = log.lines().take(expect.len()).collect();
    assert_eq!(got, expect, "{name}");
}

#[test]
fn table4_trees_match_opensm() {
    for name in ["4-ary-2-full", "8-ary-2", "4-ary-3-full", "16-ary-2"] {
        assert_eq!(compare_with(name, &fixtures().join(name)), 0, "{name}");
    }
}

/// The layer counts OpenSM logged for the fixtures.
#[test]
fn table4_layers_match_opensm_log() {
    for name in ["4-ary-2-full", "8-ary-2", "4-ary-3-full", "16-ary-2"] {
        let fabric = preset(name).unwrap().build().unwrap();
        let r = Dfsssp::default().route_detailed(&fabric).unwrap();
        check_layers(name, &r, &fixtures().join(name));
        assert_eq!(r.layers.split_count[0], 8);
        assert!(r.routing.path_sls.is_none(), "one layer: SL 0 everywhere");
    }
}

/// Tori need several layers: tables, layer counts and every path's SL as OpenSM's.
#[test]
fn tori_match_opensm() {
    for (w, h, c) in TORI {
        let name = format!("torus-{w}x{h}-{c}");
        let dir = fixtures().join(&name);
        let f = torus(w, h, c);
        let (diff, ours) = compare_fabric(&name, &f, &dir);
        assert_eq!(diff, 0, "{name}");
        check_layers(&name, &ours, &dir);
        let text = std::fs::read_to_string(dir.join("path-sls.dump")).unwrap();
        let theirs = crate::sl_dump::parse(&text, "path-sls.dump").unwrap();
        let mine = ours.routing.path_sls.as_ref().unwrap();
        assert_eq!(mine.lids(), theirs.lids(), "{name}");
        let bad: Vec<_> = mine
            .lids()
            .iter()
            .flat_map(|&s| mine.lids().iter().map(move |&d| (s, d)))
            .filter(|&(s, d)| mine.get(s, d) != theirs.get(s, d))
            .take(5)
            .map(|(s, d)| {
                format!(
                    "{} -> {}: ours {} theirs {}",
                    s.0,
                    d.0,
                    mine.get(s, d),
                    theirs.get(s, d)
                )
            })
            .collect();
        assert!(bad.is_empty(), "{name}: {bad:?}");
        assert!(!has_credit_loop(&f, &ours.routing), "{name}");
    }
}

/// OpenSM runs for bigger presets: set DFSSSP_REF=<dir> holding <preset>/opensm-lfts.dump and guid2lid.
#[test]
#[ignore]
fn big_presets_match_opensm() {
    let Ok(root) = std::env::var("DFSSSP_REF") else {
        return;
    };
    let names = std::env::var("DFSSSP_PRESETS").unwrap_or_else(|_| "ft324,ft648".into());
    let mut bad = Vec::new();
    for name in names.split(',') {
        let n = compare_with(name, &Path::new(&root).join(name));
        eprintln!("{name}: {n} differing entries");
        if n != 0 {
            bad.push(name.to_string());
        }
    }
    assert!(bad.is_empty(), "{bad:?}");
}

/// A `w`×`h` torus (ring when h = 1) of switches, one CA each, LIDs packed.
pub(crate) fn torus(w: usize, h: usize, cas_per_switch: usize) -> Fabric {
    let mut b = FabricBuilder::new();
    let n = w * h;
    let mut sws = Vec::new();
    for i in 0..n {
        let spec = NodeSpec::new(
            NodeKind::Switch,
            Guid(0x1000 + i as u64),
            4 + cas_per_switch as u32,
            format!("sw{i}"),
        );
        sws.push(b.add_node(spec).unwrap());
    }
    let mut cas = Vec::new();
    for (i, &sw) in sws.iter().enumerate() {
        for k in 0..cas_per_switch {
            let g = 0x10_0000 + ((i * cas_per_switch + k) as u64) * 0x100;
            let mut spec = NodeSpec::new(NodeKind::Ca, Guid(g), 1, format!("ca{i}-{k}"));
            spec.system_image_guid = Guid(g);
            let ca = b.add_node(spec).unwrap();
            b.connect(
                PortRef::new(sw, 5 + k as u8),
                PortRef::new(ca, 1),
                LinkRate::default(),
            )
            .unwrap();
            cas.push(ca);
        }
    }
    let at = |x: usize, y: usize| sws[(y % h) * w + (x % w)];
    for y in 0..h {
        for x in 0..w {
            // port 1 east, 2 west, 3 north, 4 south
            if w > 2 || x + 1 < w {
                b.connect(
                    PortRef::new(at(x, y), 1),
                    PortRef::new(at(x + 1, y), 2),
                    LinkRate::default(),
                )
                .unwrap();
            }
            if h > 2 || (h == 2 && y == 0) {
                b.connect(
                    PortRef::new(at(x, y), 3),
                    PortRef::new(at(x, y + 1), 4),
                    LinkRate::default(),
                )
                .unwrap();
            }
        }
    }
    let mut f = b.build();
    let mut lid = 1u16;
    for &ca in &cas {
        f.set_lid(PortRef::new(ca, 1), Lid(lid), 0).unwrap();
        lid += 1;
    }
    for &s in &sws {
        f.set_lid(PortRef::new(s, 0), Lid(lid), 0).unwrap();
        lid += 1;
    }
    f
}

/// Channel dependency check per VL: every (src, dst) path of the routing,
/// with its SL, adds its switch-to-switch channel dependencies to the graph
/// of its VL (SL = VL); returns true if any VL's graph has a cycle.
pub(crate) fn has_credit_loop(fabric: &Fabric, routing: &Routing) -> bool {
    let all: Vec<Lid> = fabric
        .lid_ports()
        .filter(|(pr, p)| {
            fabric.node(pr.node).is_switch()
                || p.remote.is_some_and(|r| fabric.node(r.node).is_switch())
        })
        .map(|(_, p)| p.lid)
        .collect();
    let zero = PathSls::new(&all);
    let sls = routing.path_sls.as_ref().unwrap_or(&zero);
    let lids: Vec<Lid> = sls.lids().to_vec();
    let table = fabric.lid_table().unwrap();
    // channel = (node, port) of a switch port leading to a switch
    type Channel = (NodeId, u8);
    let mut edges: std::collections::BTreeSet<(u8, Channel, Channel)> = Default::default();
    for &s in &lids {
        let src = table[s.0 as usize].unwrap();
        if fabric.node(src.node).is_switch() {
            continue; // starts at port 0: no switch-to-switch channel before the first hop
        }
        for &d in &lids {
            if s == d {
                continue;
            }
            let sl = sls.get(s, d);
            let mut at = fabric.remote(src).unwrap().node;
            let mut last: Option<(NodeId, u8)> = None;
            for _ in 0..1000 {
                let p = routing.tables.get(at, d).expect("routed");
                let Some(r) = fabric.remote(PortRef::new(at, p)).filter(|_| p != 0) else {
                    break;
                };
                if !fabric.node(r.node).is_switch() {
                    break;
                }
                let ch = (at, p);
                if let Some(l) = last {
                    edges.insert((sl, l, ch));
                }
                last = Some(ch);
                at = r.node;
            }
        }
    }
    let mut vls: Vec<u8> = edges.iter().map(|e| e.0).collect();
    vls.dedup();
    for vl in vls {
        let es: Vec<_> = edges
            .iter()
            .filter(|e| e.0 == vl)
            .map(|e| (e.1, e.2))
            .collect();
        let mut nodes: Vec<(NodeId, u8)> = es.iter().flat_map(|&(a, b)| [a, b]).collect();
        nodes.sort();
        nodes.dedup();
        let idx = |c: &(NodeId, u8)| nodes.binary_search(c).unwrap();
        let mut indeg = vec![0; nodes.len()];
        let mut adj = vec![Vec::new(); nodes.len()];
        for (a, b) in &es {
            adj[idx(a)].push(idx(b));
            indeg[idx(b)] += 1;
        }
        let mut stack: Vec<usize> = (0..nodes.len()).filter(|&i| indeg[i] == 0).collect();
        let mut done = 0;
        while let Some(i) = stack.pop() {
            done += 1;
            for &j in &adj[i] {
                indeg[j] -= 1;
                if indeg[j] == 0 {
                    stack.push(j);
                }
            }
        }
        if done < nodes.len() {
            return true;
        }
    }
    false
}

#[test]
fn fat_trees_need_one_layer() {
    let f = preset("4-ary-3-full").unwrap().build().unwrap();
    let r = Dfsssp::default().route_detailed(&f).unwrap();
    assert_eq!(r.layers.vls_needed, 1);
    assert_eq!(r.routing.tables.unrouted(&f, true), 0);
    assert!(!has_credit_loop(&f, &r.routing));
}

#[test]
fn rings_and_tori_need_layers_and_get_no_credit_loop() {
    for (w, h) in [(5, 1), (8, 1), (4, 4), (5, 3)] {
        let f = torus(w, h, 1);
        let r = Dfsssp::default().route_detailed(&f).unwrap();
        assert_eq!(r.routing.tables.unrouted(&f, true), 0, "{w}x{h}");
        assert!(r.layers.vls_needed > 1, "{w}x{h}: {:?}", r.layers);
        assert!(!has_credit_loop(&f, &r.routing), "{w}x{h}");
        // Everything on SL 0 would loop.
        let flat = Routing {
            tables: r.routing.tables.clone(),
            path_sls: Some(PathSls::new(r.routing.path_sls.as_ref().unwrap().lids())),
        };
        assert!(has_credit_loop(&f, &flat), "{w}x{h}");
    }
}

#[test]
fn too_few_vls_is_an_error() {
    let f = torus(6, 1, 1);
    let opts = EngineOptions {
        max_vls: Some(1),
        ..Default::default()
    };
    let err = Dfsssp::new(&opts).unwrap().route(&f).unwrap_err();
    assert!(
        matches!(
            err,
            RoutingError::NotEnoughLayers {
                needed: 2,
                available: 1,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn options_and_registry() {
    assert!(Dfsssp::new(&EngineOptions {
        max_vls: Some(0),
        ..Default::default()
    })
    .is_err());
    assert!(Dfsssp::new(&EngineOptions {
        max_vls: Some(16),
        ..Default::default()
    })
    .is_err());
    let e = crate::registry::engine("dfsssp", &EngineOptions::default()).unwrap();
    assert_eq!(e.name(), "dfsssp");
}

#[test]
fn disconnected_switches_are_an_error() {
    let f = preset("4-ary-2-full").unwrap().build().unwrap();
    let links: Vec<_> = f
        .links()
        .filter(|l| f.node(l.a.node).is_switch() && f.node(l.b.node).is_switch())
        .filter(|l| {
            f.node(l.a.node).description == "sw-L1-0001"
                || f.node(l.b.node).description == "sw-L1-0001"
        })
        .collect();
    let cut = f.without(&[], &links);
    assert!(matches!(
        Dfsssp::default().route(&cut),
        Err(RoutingError::Disconnected { .. })
    ));
}

#[test]
fn deterministic() {
    let f = torus(4, 3, 2);
    let a = Dfsssp::default().route_detailed(&f).unwrap();
    let b = Dfsssp::default().route_detailed(&f).unwrap();
    assert_eq!(a, b);
}

/// The tori compared with OpenSM (fixtures/opensm/dfsssp/torus-WxH-C).
const TORI: [(usize, usize, usize); 4] = [(5, 1, 1), (4, 4, 1), (5, 3, 2), (6, 6, 1)];

/// Writes the tori as ibsim net files into $DFSSSP_WRITE_NETS (for OpenSM runs).
#[test]
#[ignore]
fn write_torus_nets() {
    let Ok(dir) = std::env::var("DFSSSP_WRITE_NETS") else {
        return;
    };
    for (w, h, c) in TORI {
        let f = torus(w, h, c);
        let net =
            ibcloud_fabric::formats::render_fabric(&f, ibcloud_fabric::formats::Format::IbsimNet)
                .unwrap();
        std::fs::write(Path::new(&dir).join(format!("torus-{w}x{h}-{c}.net")), net).unwrap();
    }
}

/// `fabric` with the LIDs OpenSM handed out at LMC `lmc` (its guid2lid in `dir`).
fn with_opensm_lids(mut fabric: Fabric, dir: &Path, lmc: u8) -> Fabric {
    use ibcloud_fabric::lids::{assign_lids, LidOptions, LidPolicy};
    let map = guid2lid::parse(
        &std::fs::read_to_string(dir.join("guid2lid")).unwrap(),
        "guid2lid",
    )
    .unwrap();
    fabric.clear_lids();
    let opts = LidOptions {
        policy: LidPolicy::Guid2Lid { map, sm_port: None },
        lmc,
        lmc_esp0: false,
    };
    assign_lids(&mut fabric, &opts).unwrap();
    fabric
}

/// LMC 1: every LID of a port is routed on its own, with the weights so far.
#[test]
fn lmc_matches_opensm() {
    let dir = fixtures().join("4-ary-2-full-lmc1");
    let f = with_opensm_lids(preset("4-ary-2-full").unwrap().build().unwrap(), &dir, 1);
    let (diff, ours) = compare_fabric("4-ary-2-full-lmc1", &f, &dir);
    assert_eq!(diff, 0);
    check_layers("4-ary-2-full-lmc1", &ours, &dir);

    let dir = fixtures().join("torus-4x4-1-lmc1");
    let f = with_opensm_lids(torus(4, 4, 1), &dir, 1);
    let (diff, ours) = compare_fabric("torus-4x4-1-lmc1", &f, &dir);
    assert_eq!(diff, 0);
    check_layers("torus-4x4-1-lmc1", &ours, &dir);
    let theirs = crate::sl_dump::parse(
        &std::fs::read_to_string(dir.join("path-sls.dump")).unwrap(),
        "p",
    )
    .unwrap();
    let mine = ours.routing.path_sls.as_ref().unwrap();
    assert_eq!(mine, &theirs);
    assert!(!has_credit_loop(&f, &ours.routing));
}

/// Compute nodes (OpenSM's cn_guid_file) are routed first.
#[test]
fn compute_nodes_match_opensm() {
    for (name, fabric) in [
        (
            "4-ary-2-full-cn",
            preset("4-ary-2-full").unwrap().build().unwrap(),
        ),
        ("torus-4x4-1-cn", torus(4, 4, 1)),
    ] {
        let dir = fixtures().join(name);
        let text = std::fs::read_to_string(dir.join("cn_guid_file")).unwrap();
        let cn: Vec<Guid> = text
            .lines()
            .map(|l| Guid(u64::from_str_radix(l.trim_start_matches("0x"), 16).unwrap()))
            .collect();
        let engine = Dfsssp::new(&EngineOptions {
            compute_nodes: Some(cn),
            ..Default::default()
        })
        .unwrap();
        let ours = engine.route_detailed(&fabric).unwrap();
        let text = std::fs::read_to_string(dir.join("opensm-lfts.dump")).unwrap();
        let theirs = lfts_dump::parse(&text, "opensm-lfts.dump")
            .unwrap()
            .to_tables(&fabric)
            .unwrap();
        let (diff, shown) = differences(&fabric, &ours.routing.tables, &theirs, 5);
        assert_eq!(diff, 0, "{name}: {shown:?}");
        check_layers(name, &ours, &dir);
        if let Ok(text) = std::fs::read_to_string(dir.join("path-sls.dump")) {
            let theirs = crate::sl_dump::parse(&text, "path-sls.dump").unwrap();
            assert_eq!(ours.routing.path_sls.as_ref().unwrap(), &theirs, "{name}");
        }
    }
}

/// A connected random switch graph (a ring plus `extra` random links, some
/// parallel), `cas` CAs per switch, LIDs packed; deterministic per seed.
pub(crate) fn random_fabric(seed: u64, switches: usize, extra: usize, cas: usize) -> Fabric {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |m: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % m as u64) as usize
    };
    let ports = 16u8;
    let mut b = FabricBuilder::new();
    let sws: Vec<NodeId> = (0..switches)
        .map(|i| {
            let g = 0x0002_c902_0000_0000 + ((i as u64 * 7919) % 65521) * 0x1_0000 + i as u64;
            b.add_node(NodeSpec::new(
                NodeKind::Switch,
                Guid(g),
                ports as u32,
                format!("rsw{i}"),
            ))
            .unwrap()
        })
        .collect();
    let mut free: Vec<Vec<u8>> = (0..switches).map(|_| (1..=ports).rev().collect()).collect();
    let link = |b: &mut FabricBuilder, free: &mut Vec<Vec<u8>>, a: usize, c: usize| {
        if a == c || free[a].len() <= cas || free[c].len() <= cas {
            return;
        }
        let (pa, pc) = (free[a].pop().unwrap(), free[c].pop().unwrap());
        b.connect(
            PortRef::new(sws[a], pa),
            PortRef::new(sws[c], pc),
            LinkRate::default(),
        )
        .unwrap();
    };
    for i in 0..switches {
        link(&mut b, &mut free, i, (i + 1) % switches);
    }
    for _ in 0..extra {
        let (a, c) = (next(switches), next(switches));
        link(&mut b, &mut free, a, c);
    }
    let mut hosts = Vec::new();
    for i in 0..switches {
        for k in 0..cas {
            let g = 0x0002_c903_0000_0000 + ((i * cas + k) as u64 + 1) * 0x100;
            let ca = b
                .add_node(NodeSpec::new(
                    NodeKind::Ca,
                    Guid(g),
                    1,
                    format!("rca{i}-{k}"),
                ))
                .unwrap();
            let p = free[i].pop().unwrap();
            b.connect(
                PortRef::new(sws[i], p),
                PortRef::new(ca, 1),
                LinkRate::default(),
            )
            .unwrap();
            hosts.push(ca);
        }
    }
    let mut f = b.build();
    for (lid, id) in (1u16..).zip(hosts.into_iter().chain(sws)) {
        let p = if f.node(id).is_switch() { 0 } else { 1 };
        f.set_lid(PortRef::new(id, p), Lid(lid), 0).unwrap();
    }
    f
}

/// Irregular fabrics for OpenSM runs: (name, fabric).
fn irregular() -> Vec<(String, Fabric)> {
    use ibcloud_fabric::generate::{inject_faults, FaultSpec};
    let mut v = Vec::new();
    for (seed, sw, extra, cas) in [
        (1u64, 12usize, 10usize, 2usize),
        (2, 20, 25, 1),
        (3, 30, 40, 2),
    ] {
        v.push((
            format!("random-{seed}-{sw}-{extra}-{cas}"),
            random_fabric(seed, sw, extra, cas),
        ));
    }
    let ft = preset("ft324").unwrap().build().unwrap();
    let (faulty, _) = inject_faults(
        &ft,
        FaultSpec {
            links: 20,
            switches: 1,
            seed: 7,
        },
    )
    .unwrap();
    v.push(("ft324-faults-20-1-7".into(), faulty));
    v
}

/// Writes the irregular fabrics as ibsim net files into $DFSSSP_WRITE_NETS.
#[test]
#[ignore]
fn write_irregular_nets() {
    let Ok(dir) = std::env::var("DFSSSP_WRITE_NETS") else {
        return;
    };
    for (name, f) in irregular() {
        let net =
            ibcloud_fabric::formats::render_fabric(&f, ibcloud_fabric::formats::Format::IbsimNet)
                .unwrap();
        std::fs::write(Path::new(&dir).join(format!("{name}.net")), net).unwrap();
    }
}

/// Irregular fabrics (random switch graphs with cycles, a fat-tree with
/// faults) against OpenSM: tables, layers and path SLs. $DFSSSP_IRREGULAR
/// may point at fresh OpenSM runs (<name>/ with opensm.log) instead.
#[test]
fn irregular_match_opensm() {
    let root = std::env::var("DFSSSP_IRREGULAR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| fixtures());
    for (name, f) in irregular() {
        let dir = root.join(&name);
        let (diff, ours) = compare_fabric(&name, &f, &dir);
        assert_eq!(diff, 0, "{name}");
        check_layers(&name, &ours, &dir);
        let lids: Vec<Lid> = f
            .lid_ports()
            .filter(|(pr, p)| p.remote.is_some() || f.node(pr.node).is_switch())
            .map(|(_, p)| p.lid)
            .collect();
        let zero = PathSls::new(&lids);
        let mine = ours.routing.path_sls.as_ref().unwrap_or(&zero);
        let theirs = match std::fs::read_to_string(dir.join("path-sls.dump")) {
            Ok(text) => crate::sl_dump::parse(&text, "path-sls.dump").unwrap(),
            Err(_) => match std::fs::read_to_string(dir.join("opensm.log")) {
                Ok(log) => crate::sl_dump::parse_opensm_log(&log, "opensm.log").unwrap(),
                Err(_) => PathSls::new(mine.lids()),
            },
        };
        let differ = theirs
            .lids()
            .iter()
            .flat_map(|&s| theirs.lids().iter().map(move |&d| (s, d)));
        assert!(
            differ
                .clone()
                .all(|(s, d)| mine.get(s, d) == theirs.get(s, d)),
            "{name}"
        );
        if ours.routing.path_sls.is_some() {
            assert_eq!(mine.lids(), theirs.lids(), "{name}");
        }
        assert!(!has_credit_loop(&f, &ours.routing), "{name}");
    }
}

/// Odd fabrics: errors, never panics; a routing that succeeds reaches every
/// end port cabled to a switch and has no credit loop on its SLs.
#[test]
fn never_panics_on_odd_fabrics() {
    let mut fabrics = Vec::new();
    for seed in 0..30u64 {
        let f = random_fabric(
            seed + 10,
            2 + (seed % 9) as usize,
            (seed % 13) as usize,
            (seed % 3) as usize,
        );
        let links: Vec<_> = f.links().step_by(3 + (seed % 4) as usize).collect();
        fabrics.push(f.without(&[], &links));
        fabrics.push(f);
    }
    // Two CAs cabled to each other, next to a switch with one CA; a lone switch.
    let mut b = FabricBuilder::new();
    let s = b
        .add_node(NodeSpec::new(NodeKind::Switch, Guid(0x10), 4, "s"))
        .unwrap();
    let a = b
        .add_node(NodeSpec::new(NodeKind::Ca, Guid(0x100), 2, "a"))
        .unwrap();
    let c = b
        .add_node(NodeSpec::new(NodeKind::Ca, Guid(0x200), 1, "c"))
        .unwrap();
    b.connect(PortRef::new(s, 1), PortRef::new(a, 1), LinkRate::default())
        .unwrap();
    b.connect(PortRef::new(a, 2), PortRef::new(c, 1), LinkRate::default())
        .unwrap();
    b.connect(PortRef::new(s, 2), PortRef::new(s, 3), LinkRate::default())
        .ok();
    let mut f = b.build();
    for (i, p) in [
        PortRef::new(s, 0),
        PortRef::new(a, 1),
        PortRef::new(a, 2),
        PortRef::new(c, 1),
    ]
    .into_iter()
    .enumerate()
    {
        f.set_lid(p, Lid(i as u16 + 1), 0).unwrap();
    }
    fabrics.push(f.clone());
    let mut no_lid = f.clone();
    no_lid.set_lid(PortRef::new(a, 1), Lid::NONE, 0).unwrap();
    fabrics.push(no_lid);
    let mut clash = f;
    clash.set_lid(PortRef::new(c, 1), Lid(2), 0).unwrap();
    fabrics.push(clash);
    for f in &fabrics {
        for vls in [1, 2, 8] {
            let engine = Dfsssp::new(&EngineOptions {
                max_vls: Some(vls),
                ..Default::default()
            })
            .unwrap();
            if let Ok(r) = engine.route_detailed(f) {
                assert!(r.layers.vls_needed <= vls as usize);
                assert!(!has_credit_loop(f, &r.routing));
                for sw in f.switches() {
                    for (pr, p) in f.lid_ports() {
                        let attached = f.node(pr.node).is_switch()
                            || p.remote.is_some_and(|r| f.node(r.node).is_switch());
                        assert_eq!(
                            r.routing.tables.get(sw, p.lid).is_some(),
                            attached,
                            "{}",
                            f.port_label(pr)
                        );
                    }
                }
            }
        }
    }
}
