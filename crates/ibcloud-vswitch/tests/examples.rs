//! The worked examples and bad input.

use ibcloud_fabric::generate::{preset, FatTreeParams};
use ibcloud_fabric::{Fabric, FabricBuilder, Guid, LinkRate, NodeKind, NodeSpec, PortRef};
use ibcloud_routing::registry;
use ibcloud_routing::verify::{verify, VerifyOptions};
use ibcloud_routing::EngineOptions;
use ibcloud_vswitch::safety::{reachability, transition};
use ibcloud_vswitch::{Method, Scheme, SmpKind, VSwitchError, VirtualFabric};

fn lft_smps_per_switch(plan: &ibcloud_vswitch::Plan) -> Vec<usize> {
    plan.updated
        .iter()
        .map(|sw| {
            plan.smps
                .iter()
                .filter(|s| s.kind == SmpKind::Lft && s.node == *sw)
                .count()
        })
        .collect()
}

fn all_ok(vf: &VirtualFabric) {
    let r = verify(vf.fabric(), vf.tables(), None, &VerifyOptions::default()).unwrap();
    assert!(r.all_reachable(), "{:?}", r.failures);
    let lids: Vec<_> = vf.vms().map(|v| v.lid).collect();
    assert!(reachability(vf.fabric(), vf.tables(), &lids).ok());
}

/// Paper II Fig. 5: a swap of two LIDs in one block is 1 SMP per switch; a
/// swap across blocks is 2.
#[test]
fn fig5_swap_one_smp_cross_block_two() {
    let p = preset("4-ary-2-full").unwrap().build().unwrap();
    let mut vf = VirtualFabric::virtualize(&p, 4, Scheme::Prepopulated).unwrap();
    vf.boot_vm("vm1", 0).unwrap();
    vf.reroute().unwrap();
    let vm = vf.find_vm("vm1").unwrap();
    let lid = vf.vm(vm).unwrap().lid;
    assert!(lid.0 < 64);
    // Hypervisor 4 is on another leaf; its first VF's LID is in block 0.
    assert!(vf.hypervisors()[4].vfs[0].lid.0 < 64);
    let plan = vf.plan_migration(vm, 4, Method::Itrc, false).unwrap();
    assert!(!plan.updated.is_empty());
    assert!(lft_smps_per_switch(&plan).iter().all(|&n| n == 1));
    assert_eq!(plan.switch_smps(), plan.updated.len());
    assert_eq!(plan.hypervisor_smps(), 3);
    // Hypervisor 31's VFs are in block 3: 2 SMPs per updated switch.
    assert!(vf.hypervisors()[31].vfs[0].lid.0 >= 64);
    let far = vf.plan_migration(vm, 31, Method::Itrc, false).unwrap();
    assert!(!far.updated.is_empty());
    assert!(lft_smps_per_switch(&far).iter().all(|&n| n == 2));
    // Intra-leaf (hypervisor 1 is on leaf 0 too): 1 SMP to 1 switch with FTreeMinRC.
    assert_eq!(vf.hypervisors()[1].leaf, vf.hypervisors()[0].leaf);
    let near = vf.plan_migration(vm, 1, Method::FtreeMinRc, false).unwrap();
    assert_eq!(near.marked.len(), 1);
    assert_eq!(near.switch_smps(), 1);
    // The swap keeps every LID where it belongs.
    vf.apply(&far).unwrap();
    assert_eq!(vf.vm(vm).unwrap().lid, lid);
    assert_eq!(vf.vm(vm).unwrap().hypervisor, 31);
    all_ok(&vf);
}

/// Paper II Fig. 6 / Paper V Fig. 3: a 12-switch fat-tree (2-ary-3-tree), VM3
/// moves from hypervisor 1 to hypervisor 2 of leaf 1. The paper's routing
/// sends traffic to the two hypervisors through disjoint upper switches
/// (P1 = 12→9→5→3→1, P2 = 12→10→6→4→1): ItRC updates 6 of the 12 switches,
/// FTreeMinRC 1. OpenSM's ftree on this cabling happens to share one
/// upper-level switch between the two routes, so there ItRC updates 5.
#[test]
fn twelve_switch_example() {
    let p = FatTreeParams::k_ary_n_tree(2, 3).build().unwrap();
    assert_eq!(p.count(NodeKind::Switch), 12);
    let mut vf = VirtualFabric::virtualize(&p, 2, Scheme::Dynamic).unwrap();
    let (pf1, pf2) = (vf.hypervisors()[0].pf_lid, vf.hypervisors()[1].pf_lid);
    // ftree (OpenSM's choices): 5 switches differ.
    vf.boot_vm("probe", 0).unwrap();
    let probe = vf.find_vm("probe").unwrap();
    assert_eq!(
        vf.plan_migration(probe, 1, Method::Itrc, false)
            .unwrap()
            .updated
            .len(),
        5
    );
    vf.shutdown_vm(probe).unwrap();
    // The paper's P1/P2: where the two routes share an up port, send P2 up
    // the switch's other up port (still a valid up/down route).
    let tree = vf.tree().unwrap().clone();
    let mut t = vf.tables().clone();
    for &sw in vf.physical_switches() {
        let ix = tree.index_of(sw).unwrap();
        let up: Vec<u8> = tree
            .fat_tree()
            .up_groups(ix)
            .flat_map(|g| g.ports.into_iter().map(|p| p.0))
            .collect();
        let (a, b) = (t.get(sw, pf1).unwrap(), t.get(sw, pf2).unwrap());
        if a == b && up.contains(&a) && tree.fat_tree().rank(ix) == 1 {
            let other = *up.iter().find(|&&p| p != a).unwrap();
            t.set(sw, pf2, other);
        }
    }
    vf.set_tables(t).unwrap();
    assert!(reachability(vf.fabric(), vf.tables(), &[pf1, pf2]).ok());
    // VM3 booted on hypervisor 1 after the initial routing: it uses P1.
    vf.boot_vm("vm3", 0).unwrap();
    let vm = vf.find_vm("vm3").unwrap();
    let itrc = vf.plan_migration(vm, 1, Method::Itrc, false).unwrap();
    assert_eq!(itrc.updated.len(), 6);
    assert_eq!(itrc.switch_smps(), 6);
    let min = vf.plan_migration(vm, 1, Method::FtreeMinRc, false).unwrap();
    assert_eq!(min.marked.len(), 1);
    assert_eq!(min.updated.len(), 1);
    assert_eq!(min.switch_smps(), 1);
    vf.apply(&min).unwrap();
    let lids: Vec<_> = vf.vms().map(|v| v.lid).collect();
    assert!(reachability(vf.fabric(), vf.tables(), &lids).ok());
}

/// Paper V Fig. 5: XGFT(4;2,2,2,2;2,2,2,1), 3.0.0.0 ↔ 3.0.1.1 marks 10
/// switches, 5 of them on the active routes.
#[test]
fn xgft4_marking() {
    let p = FatTreeParams::from_roots_first(&[2, 2, 2, 2], &[2, 2, 2, 1])
        .build()
        .unwrap();
    let mut vf = VirtualFabric::virtualize(&p, 2, Scheme::Dynamic).unwrap();
    let tree = vf.tree().unwrap();
    let ls = tree.leaf_by_tuple(&[3, 0, 0, 0]).unwrap();
    let ld = tree.leaf_by_tuple(&[3, 0, 1, 1]).unwrap();
    let m = tree.mark(ls, ld).unwrap();
    assert_eq!(m.marked.len(), 10);
    assert_eq!(m.ancestor_rank, 1);
    let src = vf.hypervisors().iter().position(|h| h.leaf == ls).unwrap();
    let dst = vf.hypervisors().iter().position(|h| h.leaf == ld).unwrap();
    vf.boot_vm("vm", src).unwrap();
    let vm = vf.find_vm("vm").unwrap();
    let plan = vf
        .plan_migration(vm, dst, Method::FtreeMinRc, false)
        .unwrap();
    assert_eq!(plan.marked.len(), 10);
    assert_eq!(plan.active.len(), 5);
    // Active switches are updated first.
    let first: Vec<_> = plan
        .smps
        .iter()
        .filter(|s| s.kind == SmpKind::Lft)
        .take_while(|s| s.active)
        .collect();
    assert!(!first.is_empty());
    let itrc = vf.plan_migration(vm, dst, Method::Itrc, false).unwrap();
    assert!(itrc.updated.len() >= plan.updated.len());
    vf.apply(&plan).unwrap();
    all_ok(&vf);
}

/// With one VM per hypervisor, vswitch-ftree's tables equal ftree's on the
/// equivalent fabric (each hypervisor one CA with the VM's LID).
#[test]
fn one_vm_per_hypervisor_equals_ftree() {
    for name in ["4-ary-2-full", "4-ary-3-full", "8-ary-2"] {
        let p = preset(name).unwrap().build().unwrap();
        let mut vf = VirtualFabric::virtualize(&p, 2, Scheme::Dynamic).unwrap();
        for h in 0..vf.hypervisors().len() {
            vf.boot_vm(&format!("vm{h}"), h).unwrap();
        }
        vf.reroute().unwrap();
        let mut eq: Fabric = p.clone();
        eq.clear_lids();
        for sw in vf.physical_switches() {
            let n = vf.fabric().node(*sw);
            let id = eq.node_by_guid(n.guid).unwrap();
            eq.set_lid(PortRef::new(id, 0), vf.fabric().node_lid(*sw), 0)
                .unwrap();
        }
        for v in vf.vms() {
            let h = &vf.hypervisors()[v.hypervisor];
            let id = eq.node_by_guid(vf.fabric().node(h.pf).guid).unwrap();
            eq.set_lid(PortRef::new(id, 1), v.lid, 0).unwrap();
        }
        let ft = registry::engine("ftree", &EngineOptions::default())
            .unwrap()
            .route(&eq)
            .unwrap();
        let mut compared = 0;
        for sw in vf.physical_switches() {
            let id = eq.node_by_guid(vf.fabric().node(*sw).guid).unwrap();
            for (_, port) in eq.lid_ports() {
                assert_eq!(
                    vf.tables().get(*sw, port.lid),
                    ft.tables.get(id, port.lid),
                    "{name}: switch {sw:?} LID {}",
                    port.lid.0
                );
                compared += 1;
            }
        }
        assert!(compared > 0);
    }
}

#[test]
fn transition_check_and_partially_static() {
    let p = preset("4-ary-3-full").unwrap().build().unwrap();
    let mut vf = VirtualFabric::virtualize(&p, 2, Scheme::Dynamic).unwrap();
    for h in 0..vf.hypervisors().len() {
        vf.boot_vm(&format!("vm{h}"), h).unwrap();
    }
    vf.reroute().unwrap();
    let vm = vf.find_vm("vm0").unwrap();
    let plan = vf
        .plan_migration(vm, 127, Method::FtreeMinRc, false)
        .unwrap();
    let t = transition(&vf, &plan);
    assert!(t.dependencies > 0);
    assert_eq!(t.needs_partially_static, !t.deadlock_free);
    let ps = vf
        .plan_migration(vm, 127, Method::FtreeMinRc, true)
        .unwrap();
    let inval = ps
        .smps
        .iter()
        .filter(|s| s.kind == SmpKind::Invalidate)
        .count();
    assert_eq!(inval, plan.updated.len());
    assert_eq!(ps.switch_smps(), plan.switch_smps() + plan.updated.len());
    // An intra-leaf move in a full fabric never needs it.
    let local = vf.plan_migration(vm, 1, Method::FtreeMinRc, false);
    assert!(matches!(local, Err(VSwitchError::NoFreeVf(_))) || local.is_ok());
}

#[test]
fn full_method_matches_fresh_routing() {
    let p = preset("4-ary-2-full").unwrap().build().unwrap();
    let mut vf = VirtualFabric::virtualize(&p, 4, Scheme::Dynamic).unwrap();
    for h in 0..8 {
        vf.boot_vm(&format!("vm{h}"), h).unwrap();
    }
    vf.reroute().unwrap();
    let vm = vf.find_vm("vm3").unwrap();
    let plan = vf.plan_migration(vm, 30, Method::Full, false).unwrap();
    assert_eq!(plan.full_distribution_smps, 12 * vf.fabric().lft_blocks());
    vf.apply(&plan).unwrap();
    assert_eq!(vf.tables(), &vf.fresh_tables().unwrap());
    all_ok(&vf);
}

fn snapshot(vf: &VirtualFabric) -> (Vec<Option<u8>>, String) {
    let t: Vec<_> = vf
        .tables()
        .iter()
        .flat_map(|(_, t)| t.to_vec())
        .map(Some)
        .collect();
    (t, format!("{:?}", vf.vms().collect::<Vec<_>>()))
}

#[test]
fn bad_input_leaves_everything_unchanged() {
    let p = preset("4-ary-2-full").unwrap().build().unwrap();
    let mut vf = VirtualFabric::virtualize(&p, 1, Scheme::Prepopulated).unwrap();
    vf.boot_vm("a", 0).unwrap();
    vf.boot_vm("b", 1).unwrap();
    let before = snapshot(&vf);
    let a = vf.find_vm("a").unwrap();
    assert!(matches!(
        vf.migrate(a, 1, Method::Itrc, false),
        Err(VSwitchError::NoFreeVf(_))
    ));
    assert!(matches!(
        vf.migrate(a, 0, Method::Itrc, false),
        Err(VSwitchError::SameHypervisor { .. })
    ));
    assert!(matches!(
        vf.migrate(99, 2, Method::Itrc, false),
        Err(VSwitchError::UnknownVm(_))
    ));
    assert!(matches!(
        vf.migrate(a, 999, Method::Itrc, false),
        Err(VSwitchError::UnknownHypervisor(_))
    ));
    assert!(matches!(
        vf.find_vm("nope"),
        Err(VSwitchError::UnknownVm(_))
    ));
    assert!(matches!(
        vf.find_hypervisor("nope"),
        Err(VSwitchError::UnknownHypervisor(_))
    ));
    assert!(matches!(vf.boot_vm("c", 0), Err(VSwitchError::NoFreeVf(_))));
    assert!(matches!(
        vf.boot_vm("a", 5),
        Err(VSwitchError::DuplicateVm(_))
    ));
    // A plan for another state is refused.
    let plan = vf.plan_migration(a, 2, Method::Itrc, false).unwrap();
    let b = vf.find_vm("b").unwrap();
    vf.migrate(b, 3, Method::Itrc, false).unwrap();
    let mid = snapshot(&vf);
    let stale = vf.plan_migration(a, 3, Method::Itrc, false);
    assert!(matches!(stale, Err(VSwitchError::NoFreeVf(_))));
    vf.migrate(b, 1, Method::Itrc, false).unwrap();
    let _ = plan;
    assert_ne!(mid, before);
    assert_eq!(vf.vm(a).unwrap().hypervisor, 0);
}

/// A ring of three switches is no fat-tree: FTreeMinRC refuses, ItRC works.
#[test]
fn ftree_minrc_refuses_a_non_fat_tree() {
    let mut b = FabricBuilder::new();
    let rate = LinkRate::default();
    let s: Vec<_> = (0..3)
        .map(|i| {
            b.add_node(NodeSpec::new(
                NodeKind::Switch,
                Guid(0x100 + i),
                8,
                format!("sw{i}"),
            ))
            .unwrap()
        })
        .collect();
    for i in 0..3 {
        b.connect(PortRef::new(s[i], 1), PortRef::new(s[(i + 1) % 3], 2), rate)
            .unwrap();
    }
    for i in 0..6u64 {
        let ca = b
            .add_node(NodeSpec::new(
                NodeKind::Ca,
                Guid(0x1000 + (i << 8)),
                1,
                format!("h{i}"),
            ))
            .unwrap();
        b.connect(
            PortRef::new(ca, 1),
            PortRef::new(s[i as usize % 3], 3 + (i / 3) as u8),
            rate,
        )
        .unwrap();
    }
    let p = b.build();
    let mut vf = VirtualFabric::virtualize(&p, 2, Scheme::Dynamic).unwrap();
    assert!(matches!(vf.tree(), Err(VSwitchError::NotFatTree(_))));
    vf.boot_vm("x", 0).unwrap();
    let x = vf.find_vm("x").unwrap();
    let before = snapshot(&vf);
    assert!(matches!(
        vf.migrate(x, 4, Method::FtreeMinRc, false),
        Err(VSwitchError::NotFatTree(_))
    ));
    assert_eq!(snapshot(&vf), before);
    vf.migrate(x, 4, Method::Itrc, false).unwrap();
    let lids: Vec<_> = vf.vms().map(|v| v.lid).collect();
    assert!(reachability(vf.fabric(), vf.tables(), &lids).ok());
}

/// Intra-leaf moves never need the partially static scheme; moves that leave
/// the leaf do when an ancestor still points down while a switch below it
/// already points up.
#[test]
fn which_migrations_need_partially_static() {
    let p = preset("4-ary-2-full").unwrap().build().unwrap();
    let mut vf = VirtualFabric::virtualize(&p, 2, Scheme::Dynamic).unwrap();
    for h in 0..32 {
        vf.boot_vm(&format!("vm{h}"), h).unwrap();
    }
    vf.reroute().unwrap();
    let vm = vf.find_vm("vm0").unwrap();
    let local = vf.plan_migration(vm, 1, Method::FtreeMinRc, false).unwrap();
    assert!(transition(&vf, &local).deadlock_free);
    let far = vf
        .plan_migration(vm, 31, Method::FtreeMinRc, false)
        .unwrap();
    let t = transition(&vf, &far);
    assert!(t.needs_partially_static);
    assert!(!t.cycle.is_empty());
}
