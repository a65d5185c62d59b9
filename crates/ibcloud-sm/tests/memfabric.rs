//! The SM against the in-memory fabric: discovery equals the model,
//! programming is differential, silent nodes are reported, lost SMPs are
//! retried, a link failure is seen by a light sweep.

use ibcloud_fabric::generate;
use ibcloud_fabric::{Fabric, PortRef};
use ibcloud_sm::mads::Reliability;
use ibcloud_sm::memfabric::MemFabric;
use ibcloud_sm::sm::{SmConfig, SubnetManager};
use ibcloud_sm::wire::LinkState;
use std::time::Duration;

fn fabric() -> Fabric {
    generate::preset("4-ary-2-full").unwrap().build().unwrap()
}

fn sm_port(f: &Fabric) -> PortRef {
    PortRef::new(f.cas().next().unwrap(), 1)
}

fn config() -> SmConfig {
    SmConfig {
        engine: "minhop".into(),
        reliability: Reliability {
            timeout: Duration::from_millis(5),
            retries: 2,
            window: 4,
        },
        ..SmConfig::default()
    }
}

#[test]
fn bring_up_matches_the_model_and_programs_every_switch() {
    let f = fabric();
    let mem = MemFabric::new(f.clone(), sm_port(&f));
    let mut sm = SubnetManager::new(mem, config()).unwrap();
    let r = sm.heavy_sweep("bring-up").unwrap();
    assert!(
        r.unreachable.is_empty() && r.program.failures.is_empty(),
        "{r:?}"
    );
    assert_eq!((r.switches, r.cas, r.links), (12, 32, 64));
    let s = sm.subnet.as_ref().unwrap();
    assert_eq!(s.fabric.topology_difference(&f), None);
    // One block per switch (44 LIDs), every link end ACTIVE.
    assert_eq!(r.program.smps["Set LinearForwardingTable"], 12);
    assert_eq!(r.program.ports_activated, 128);
    let mem = sm.mads.transport();
    for l in f.links() {
        assert_eq!(mem.port_state(l.a), Some(LinkState::Active));
        assert_eq!(mem.port_state(l.b), Some(LinkState::Active));
    }
    // What the switches hold is what the engine computed.
    for (i, &id) in s.ids.iter().enumerate() {
        if !s.fabric.node(id).is_switch() {
            continue;
        }
        let _ = i;
        for lid in 1..=s.fabric.max_lid() {
            let want = s.tables.get(id, ibcloud_fabric::Lid(lid)).unwrap_or(0xff);
            let guid = s.fabric.node(id).guid;
            let there = f.node_by_guid(guid).unwrap();
            assert_eq!(mem.lft_entry(there, lid), want, "switch {guid:?} lid {lid}");
        }
    }
}

#[test]
fn a_second_sweep_sends_no_lft_or_port_sets() {
    let f = fabric();
    let mut sm = SubnetManager::new(MemFabric::new(f.clone(), sm_port(&f)), config()).unwrap();
    sm.heavy_sweep("bring-up").unwrap();
    let r = sm.heavy_sweep("again").unwrap();
    assert_eq!(r.program.total_smps, 0, "{:?}", r.program.smps);
    assert_eq!(r.program.lft_blocks_skipped, 12);
}

#[test]
fn a_silent_switch_is_reported_not_waited_on() {
    let f = fabric();
    let mut mem = MemFabric::new(f.clone(), sm_port(&f));
    let spine = f.switches().last().unwrap();
    mem.silent.insert(f.node(spine).guid);
    let mut sm = SubnetManager::new(mem, config()).unwrap();
    let r = sm.heavy_sweep("bring-up").unwrap();
    assert_eq!(r.switches, 11);
    // Every path into the silent switch is reported, after 3 tries each.
    assert!(!r.unreachable.is_empty());
    assert!(
        r.unreachable.iter().all(|(_, why)| why.contains("3 tries")),
        "{:?}",
        r.unreachable
    );
    assert!(sm.mads.counters.timeouts as usize == r.unreachable.len());
}

#[test]
fn lost_smps_are_retried() {
    let f = fabric();
    let mut mem = MemFabric::new(f.clone(), sm_port(&f));
    mem.drop_next = 2;
    let mut sm = SubnetManager::new(mem, config()).unwrap();
    let r = sm.heavy_sweep("bring-up").unwrap();
    assert!(r.unreachable.is_empty());
    assert_eq!(sm.mads.counters.retries, 2);
    assert_eq!(sm.mads.counters.timeouts, 0);
}

#[test]
fn a_light_sweep_sees_a_failed_link() {
    let f = fabric();
    let mut sm = SubnetManager::new(MemFabric::new(f.clone(), sm_port(&f)), config()).unwrap();
    sm.heavy_sweep("bring-up").unwrap();
    assert_eq!(sm.light_sweep(), None);
    let up = first_up_link(&f);
    sm.mads.transport_mut().fail_link(up);
    let why = sm.light_sweep().expect("change seen");
    assert!(why.contains("port state change"), "{why}");
    let r = sm.heavy_sweep(&why).unwrap();
    assert_eq!(r.links, 63);
    assert!(r.program.failures.is_empty(), "{:?}", r.program.failures);
    // Only blocks whose entries changed were sent.
    assert!(
        r.program
            .smps
            .get("Set LinearForwardingTable")
            .copied()
            .unwrap_or(0)
            <= 12
    );
}

#[test]
fn an_unknown_engine_is_refused_up_front() {
    let f = fabric();
    let mut c = config();
    c.engine = "nonsense".into();
    let err = SubnetManager::new(MemFabric::new(f.clone(), sm_port(&f)), c).unwrap_err();
    assert!(err.to_string().contains("unknown routing engine"), "{err}");
}

#[test]
fn slimupdate_after_a_link_failure_sends_exactly_the_predicted_blocks() {
    use ibcloud_sm::sm::Reconfig;
    let f = generate::preset("4-ary-3-full").unwrap().build().unwrap();
    let mut c = config();
    c.engine = "ftree".into();
    c.reconfig = Reconfig::SlimUpdate;
    let mut sm = SubnetManager::new(MemFabric::new(f.clone(), sm_port(&f)), c).unwrap();
    let first = sm.heavy_sweep("bring-up").unwrap();
    assert_eq!(first.predicted_lft_blocks, None);
    let up = first_up_link(&f);
    sm.mads.transport_mut().fail_link(up);
    let why = sm.light_sweep().unwrap();
    let r = sm.heavy_sweep(&why).unwrap();
    assert_eq!(r.method, "slimupdate");
    let (kept, moved) = r.slimupdate_kept_moved.unwrap();
    assert!(kept > 0 && moved > 0, "{kept} {moved}");
    let observed = r
        .program
        .smps
        .get("Set LinearForwardingTable")
        .copied()
        .unwrap_or(0);
    assert_eq!(Some(observed), r.predicted_lft_blocks);
    assert!(observed > 0);
    assert!(r.program.failures.is_empty());
    // Second phase: the switches left blank get their entries, as predicted.
    let c = r.completion.as_ref().unwrap();
    assert!(c.ca_pairs_reachable && c.entries_added > 0, "{c:?}");
    let p = c.program.as_ref().unwrap();
    assert_eq!(
        p.smps["Set LinearForwardingTable"] as u64,
        c.predicted_lft_blocks
    );
    assert!(p.failures.is_empty());
}

#[test]
fn an_unsafe_migration_is_refused_before_any_smp_and_partial_is_accepted() {
    use ibcloud_sm::migrate::TransitionPolicy;
    use ibcloud_vswitch::{Method, Scheme, VirtualFabric};
    let p = generate::preset("4-ary-2-full").unwrap().build().unwrap();
    let mut built = VirtualFabric::virtualize(&p, 2, Scheme::Prepopulated).unwrap();
    built.boot_vm("vm0", 0).unwrap();
    let f = built.fabric().clone();
    let mut c = config();
    c.engine = "vswitch-ftree".into();
    let mut sm = SubnetManager::new(MemFabric::new(f.clone(), sm_port(&f)), c).unwrap();
    sm.heavy_sweep("bring-up").unwrap();
    let sent = sm.mads.counters.total_sent;
    // vm0 leaves its leaf: the union of old and new routes of its LID has a
    // leaf ↔ middle-switch cycle while the switches are half updated.
    let r = sm
        .migrate("vm0", "#31", Method::Itrc, false, TransitionPolicy::Refuse)
        .unwrap();
    let t = r.transition.as_ref().unwrap();
    assert!(
        !t.deadlock_free && !t.cycle.is_empty() && r.refused.is_some(),
        "{r:?}"
    );
    assert_eq!(
        sm.mads.counters.total_sent, sent,
        "a refused plan sends nothing"
    );
    assert_eq!(r.observed_switch_smps, 0);
    // Partially static: each phase is checked on its own and passes.
    let r = sm
        .migrate("vm0", "#31", Method::Itrc, true, TransitionPolicy::Refuse)
        .unwrap();
    let t = r.transition.as_ref().unwrap();
    assert!(
        r.refused.is_none() && t.deadlock_free && !t.one_step_deadlock_free,
        "{r:?}"
    );
    assert_eq!(r.observed_switch_smps, r.predicted_switch_smps);
    assert!(r.observed["invalidate"] > 0);
    // `report` sends an unsafe plan and says so.
    let r = sm
        .migrate("vm0", "#0", Method::Itrc, false, TransitionPolicy::Report)
        .unwrap();
    let t = r.transition.as_ref().unwrap();
    assert!(r.refused.is_none() && !t.deadlock_free, "{r:?}");
    assert_eq!(r.observed_switch_smps, r.predicted_switch_smps);
    // `off` skips the check.
    let r = sm
        .migrate("vm0", "#31", Method::Itrc, false, TransitionPolicy::Off)
        .unwrap();
    assert!(r.transition.is_none() && r.refused.is_none());
}

#[test]
fn subtree_after_a_link_failure_grows_until_verified_and_sends_the_predicted_blocks() {
    use ibcloud_sm::sm::Reconfig;
    let f = generate::preset("4-ary-3-full").unwrap().build().unwrap();
    let mut c = config();
    c.engine = "ftree".into();
    c.reconfig = Reconfig::Subtree;
    let mut sm = SubnetManager::new(MemFabric::new(f.clone(), sm_port(&f)), c).unwrap();
    sm.heavy_sweep("bring-up").unwrap();
    let up = first_up_link(&f);
    sm.mads.transport_mut().fail_link(up);
    let why = sm.light_sweep().unwrap();
    let r = sm.heavy_sweep(&why).unwrap();
    assert_eq!(r.method, "subtree");
    assert!(r.routing_error.is_none(), "{r:?}");
    let rep = r.subtree.as_ref().unwrap();
    // The 2-level sub-tree leaves the roots sending into the broken link;
    // the whole 3-level tree passes.
    let tried: Vec<(u32, bool)> = rep
        .attempts
        .iter()
        .map(|a| (a.levels, a.check.ok()))
        .collect();
    assert_eq!(tried, vec![(2, false), (3, true)]);
    let observed = r.program.smps["Set LinearForwardingTable"];
    assert_eq!(Some(observed as u64), r.predicted_lft_blocks);
    assert_eq!(observed as u64, rep.attempts[1].changes.changed_blocks);
    assert!(r.program.failures.is_empty());
}

fn first_up_link(f: &Fabric) -> PortRef {
    let leaf = f.switches().next().unwrap();
    f.neighbors(leaf)
        .find(|(_, r)| f.node(r.node).is_switch())
        .map(|(p, _)| PortRef::new(leaf, p))
        .unwrap()
}

/// The subnet after `change`, found by an SM with the given rediscovery.
fn after_change(
    rediscovery: ibcloud_sm::rediscover::Rediscovery,
    change: impl Fn(&mut MemFabric),
) -> (ibcloud_sm::sm::SweepReport, SubnetManager<MemFabric>) {
    let f = fabric();
    let mut c = config();
    c.rediscovery = rediscovery;
    let mut sm = SubnetManager::new(MemFabric::new(f.clone(), sm_port(&f)), c).unwrap();
    sm.heavy_sweep("bring-up").unwrap();
    change(sm.mads.transport_mut());
    let why = sm.light_sweep().expect("change seen");
    let r = sm.heavy_sweep(&why).unwrap();
    (r, sm)
}

#[test]
fn targeted_rediscovery_rereads_only_the_flagged_switches_and_finds_what_the_full_walk_finds() {
    use ibcloud_sm::rediscover::Rediscovery;
    let up = first_up_link(&fabric());
    let (t, sm_t) = after_change(Rediscovery::Targeted, |m| m.fail_link(up));
    let (full, sm_f) = after_change(Rediscovery::Full, |m| m.fail_link(up));
    assert_eq!(t.discovery, "targeted", "{t:?}");
    assert_eq!(t.discovery_changes, Some((2, 1, 0)));
    assert_eq!(full.discovery, "full");
    // 12 SwitchInfo + PortInfo on ports 0..=8 of the two switches the link
    // joined, against the whole walk.
    assert_eq!(t.discovery_smps, 12 + 2 * 9);
    assert!(
        full.discovery_smps > 5 * t.discovery_smps,
        "{}",
        full.discovery_smps
    );
    let (a, b) = (sm_t.subnet.as_ref().unwrap(), sm_f.subnet.as_ref().unwrap());
    assert_eq!(a.fabric.topology_difference(&b.fabric), None);
    assert_eq!(t.links, 63);
    assert_eq!(a.tables, b.tables);
    assert_eq!(t.program.smps, full.program.smps);
    assert!(t.program.failures.is_empty());
    // Every directed route the SM keeps avoids the failed link: a light
    // sweep over them sees nothing (the flags were cleared).
    let mut sm_t = sm_t;
    assert_eq!(sm_t.light_sweep(), None);
}

#[test]
fn targeted_rediscovery_sees_a_link_come_back_and_activates_it() {
    use ibcloud_sm::rediscover::Rediscovery;
    let up = first_up_link(&fabric());
    let (_, mut sm) = after_change(Rediscovery::Targeted, |m| m.fail_link(up));
    sm.mads.transport_mut().restore_link(up);
    let why = sm.light_sweep().expect("restore seen");
    let r = sm.heavy_sweep(&why).unwrap();
    assert_eq!(r.discovery, "targeted", "{r:?}");
    assert_eq!(r.discovery_changes, Some((2, 0, 1)));
    assert_eq!(r.links, 64);
    assert!(r.program.failures.is_empty(), "{:?}", r.program.failures);
    let remote = fabric().remote(up).unwrap();
    assert_eq!(sm.mads.transport().port_state(up), Some(LinkState::Active));
    assert_eq!(
        sm.mads.transport().port_state(remote),
        Some(LinkState::Active)
    );
}

#[test]
fn targeted_rediscovery_gives_up_when_a_node_is_cut_off() {
    use ibcloud_sm::rediscover::Rediscovery;
    let f = fabric();
    // A CA other than the SM's loses its only link: the node set changes.
    let ca = f.cas().nth(5).unwrap();
    let (r, _) = after_change(Rediscovery::Targeted, |m| m.fail_link(PortRef::new(ca, 1)));
    assert!(
        r.discovery.starts_with("full (targeted walk gave up"),
        "{}",
        r.discovery
    );
    assert!(
        r.discovery.contains("no longer reachable"),
        "{}",
        r.discovery
    );
    assert_eq!(r.cas, 31);
}

#[test]
fn a_link_that_fails_during_programming_is_reported_and_the_next_sweeps_converge() {
    let f = fabric();
    let mut sm = SubnetManager::new(MemFabric::new(f.clone(), sm_port(&f)), config()).unwrap();
    // The cable is pulled half-way through the bring-up (after discovery,
    // while the switches are being programmed).
    let up = first_up_link(&f);
    sm.mads.transport_mut().fail_link_after = Some((500, up));
    let first = sm.heavy_sweep("bring-up").unwrap();
    assert!(
        sm.mads.transport().fail_link_after.is_none(),
        "the pull happened"
    );
    assert_eq!(first.links, 64, "discovery saw the link before it failed");
    assert!(
        !first.program.failures.is_empty() || first.program.ports_activated < 128,
        "{:?}",
        first.program
    );
    // The bring-up says what it could not do (the ports of the dead link
    // never become ACTIVE), and the next light sweep sees the change.
    let why = sm.light_sweep().expect("the change is seen");
    let second = sm.heavy_sweep(&why).unwrap();
    assert_eq!(second.links, 63);
    assert!(
        second.program.failures.is_empty(),
        "{:?}",
        second.program.failures
    );
    // Converged: nothing left to change, and the tables are the engine's on
    // the fabric as it is now, with every CA pair reachable.
    assert_eq!(sm.light_sweep(), None);
    let s = sm.subnet.as_ref().unwrap();
    let fresh = ibcloud_routing::registry::engine("minhop", &Default::default())
        .unwrap()
        .route(&s.fabric)
        .unwrap();
    assert_eq!(s.tables, fresh.tables);
    // Every live link (in the emulation's own node ids) is ACTIVE.
    let mem = sm.mads.transport();
    for l in f.links().filter(|l| l.a != up && l.b != up) {
        assert_eq!(mem.port_state(l.a), Some(LinkState::Active));
        assert_eq!(mem.port_state(l.b), Some(LinkState::Active));
    }
}

#[test]
fn a_migration_to_a_full_hypervisor_is_refused_and_nothing_is_sent() {
    use ibcloud_sm::migrate::TransitionPolicy;
    use ibcloud_vswitch::{Method, Scheme, VirtualFabric};
    let p = generate::preset("4-ary-2-full").unwrap().build().unwrap();
    let mut built = VirtualFabric::virtualize(&p, 2, Scheme::Prepopulated).unwrap();
    built.boot_vm("vm0", 0).unwrap();
    built.boot_vm("vm1", 5).unwrap();
    built.boot_vm("vm2", 5).unwrap();
    let f = built.fabric().clone();
    let mut c = config();
    c.engine = "vswitch-ftree".into();
    let mut sm = SubnetManager::new(MemFabric::new(f.clone(), sm_port(&f)), c).unwrap();
    sm.heavy_sweep("bring-up").unwrap();
    let sent = sm.mads.counters.total_sent;
    let tables = sm.subnet.as_ref().unwrap().tables.clone();
    let err = sm
        .migrate("vm0", "#5", Method::Itrc, false, TransitionPolicy::Off)
        .unwrap_err();
    assert!(err.to_string().contains("no free VF"), "{err}");
    assert_eq!(sm.mads.counters.total_sent, sent, "nothing sent");
    assert_eq!(
        sm.subnet.as_ref().unwrap().tables,
        tables,
        "model unchanged"
    );
    // The VM can still go where there is room.
    let r = sm
        .migrate("vm0", "#6", Method::Itrc, false, TransitionPolicy::Off)
        .unwrap();
    assert_eq!(r.observed_switch_smps, r.predicted_switch_smps);
}

/// A ring of `n` switches, two CAs on each (CAs first, as generated fabrics).
fn ring(n: usize) -> Fabric {
    use ibcloud_fabric::{FabricBuilder, Guid, LinkRate, NodeKind, NodeSpec};
    let mut b = FabricBuilder::new();
    let cas: Vec<_> = (0..2 * n)
        .map(|i| {
            b.add_node(NodeSpec::new(
                NodeKind::Ca,
                Guid(0x1000 + 2 * i as u64),
                1,
                format!("hca-{i}"),
            ))
            .unwrap()
        })
        .collect();
    let sws: Vec<_> = (0..n)
        .map(|i| {
            b.add_node(NodeSpec::new(
                NodeKind::Switch,
                Guid(0x2000 + i as u64),
                4,
                format!("sw-{i}"),
            ))
            .unwrap()
        })
        .collect();
    let r = LinkRate::default();
    for i in 0..n {
        b.connect(PortRef::new(sws[i], 1), PortRef::new(cas[2 * i], 1), r)
            .unwrap();
        b.connect(PortRef::new(sws[i], 2), PortRef::new(cas[2 * i + 1], 1), r)
            .unwrap();
        b.connect(
            PortRef::new(sws[i], 3),
            PortRef::new(sws[(i + 1) % n], 4),
            r,
        )
        .unwrap();
    }
    b.build()
}

#[test]
fn an_engine_that_needs_sls_is_programmed_with_a_warning_about_sl2vl() {
    let f = ring(5);
    for engine in ["lash", "dfsssp"] {
        let mut c = config();
        c.engine = engine.into();
        let mut sm = SubnetManager::new(MemFabric::new(f.clone(), sm_port(&f)), c).unwrap();
        let r = sm.heavy_sweep("bring-up").unwrap();
        assert!(
            r.routing_error.is_none() && r.program.failures.is_empty(),
            "{r:?}"
        );
        assert_eq!(r.warnings.len(), 1, "{engine}: {:?}", r.warnings);
        assert!(r.warnings[0].contains("SL2VL"), "{}", r.warnings[0]);
    }
    // minhop needs no SLs: no warning.
    let mut sm = SubnetManager::new(MemFabric::new(f.clone(), sm_port(&f)), config()).unwrap();
    assert!(sm.heavy_sweep("bring-up").unwrap().warnings.is_empty());
}

/// QoS (issue 22): the SM sets SL2VL on every switch port pair and CA port
/// and the VL arbitration blocks the ports' caps allow, as OpenSM does, and
/// reads them all back.
#[test]
fn program_qos_sets_every_table_and_reads_it_back() {
    use ibcloud_qos::{CcSls, PortClass, Preset};
    use ibcloud_sm::program::program_qos;
    use ibcloud_sm::wire::{SlToVlRepr, SMP_DATA_LEN};
    let f = fabric();
    let mut sm = SubnetManager::new(MemFabric::new(f.clone(), sm_port(&f)), config()).unwrap();
    sm.heavy_sweep("bring-up").unwrap();
    let mut qos = Preset::StMaxQ.policy(CcSls::All).qos.unwrap();
    // CA ports get their own tables, so a class mix-up shows.
    qos.class_mut(PortClass::Ca).sl2vl = Some([1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 15]);
    let d = sm.subnet.as_ref().unwrap().discovery.clone();
    let r = program_qos(&mut sm.mads, &d, &qos);
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    // 12 switches x 8 live ports x 9 input ports (0-8), and 32 CA ports.
    assert_eq!(r.sl2vl_sets, 12 * 8 * 9 + 32);
    // Low block 1 and high block 3 on every live port (caps of 8).
    assert_eq!(r.vlarb_sets, 2 * (12 * 8 + 32));
    assert_eq!(r.verified, r.sl2vl_sets + r.vlarb_sets);
    assert_eq!(r.smps["Set SLtoVLMappingTable"], r.sl2vl_sets as u64);
    let mem = sm.mads.transport();
    let decode = |b: [u8; 8]| {
        let mut a = [0u8; SMP_DATA_LEN];
        a[..8].copy_from_slice(&b);
        SlToVlRepr::parse(&a).unwrap().0
    };
    let swe = qos.effective(PortClass::Swe).sl2vl;
    let ca = qos.effective(PortClass::Ca).sl2vl;
    for (id, node) in f.iter_nodes() {
        if node.is_switch() {
            for inp in 0..=node.num_ports {
                assert_eq!(decode(mem.sl2vl(id, inp, 1)), swe);
            }
        } else {
            assert_eq!(decode(mem.sl2vl(id, 1, 1)), ca);
        }
    }
}

#[test]
fn program_qos_masks_vls_as_opensm_and_reports_a_port_that_does_not_keep_them() {
    use ibcloud_netsim::VlArbEntry;
    use ibcloud_qos::{FabricQos, QosTables};
    use ibcloud_sm::program::program_qos;
    let f = fabric();
    let mut sm = SubnetManager::new(MemFabric::new(f.clone(), sm_port(&f)), config()).unwrap();
    sm.heavy_sweep("bring-up").unwrap();
    // VL 9 on ports with VL0-7 operational: OpenSM sends 9 & 7 = 1.
    let mut t = QosTables::opensm_default();
    t.vlarb_low = vec![VlArbEntry { vl: 9, weight: 3 }];
    let d = sm.subnet.as_ref().unwrap().discovery.clone();
    let r = program_qos(&mut sm.mads, &d, &FabricQos::uniform(t));
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    let ca = PortRef::new(f.cas().nth(3).unwrap(), 1);
    let low = sm.mads.transport().vlarb(ca, 1);
    assert_eq!(&low[..4], &[1, 3, 0, 0]);
    // A silent switch: its Sets time out and are reported, nothing hangs.
    let victim = f.node(f.switches().next().unwrap()).guid;
    sm.mads.transport_mut().silent.insert(victim);
    let r = program_qos(
        &mut sm.mads,
        &d,
        &FabricQos::uniform(QosTables::opensm_default()),
    );
    assert!(!r.failures.is_empty());
    assert!(
        r.failures
            .iter()
            .all(|m| m.contains(&f.node(f.node_by_guid(victim).unwrap()).description)),
        "{:?}",
        r.failures
    );
}
