use super::*;
use ibcloud_fabric::LinkRate;

/// Paper V Fig. 2: roots R1, R2; leaves L1, L2 cabled to both. L1 holds vSw1
/// (VMs 1, 2) and vSw2 (VMs 3, 4); L2 holds vSw3 (VMs 5, 6, 7) and vSw4 (VM 8).
/// Returns the fabric, roots, leaves and the VM LIDs in paper order.
fn fig2() -> (Fabric, [NodeId; 2], [NodeId; 2], Vec<Lid>) {
    let mut b = FabricBuilder::new();
    let sw = |b: &mut FabricBuilder, g: u64, ports: u32, d: &str| {
        b.add_node(NodeSpec::new(NodeKind::Switch, Guid(g), ports, d))
            .unwrap()
    };
    let r1 = sw(&mut b, 0x10, 4, "R1");
    let r2 = sw(&mut b, 0x11, 4, "R2");
    let l1 = sw(&mut b, 0x20, 4, "L1");
    let l2 = sw(&mut b, 0x21, 4, "L2");
    let rate = LinkRate::default();
    for (i, &l) in [l1, l2].iter().enumerate() {
        let p = i as u8 + 1;
        b.connect(PortRef::new(l, 1), PortRef::new(r1, p), rate)
            .unwrap();
        b.connect(PortRef::new(l, 2), PortRef::new(r2, p), rate)
            .unwrap();
    }
    let mut lids: Vec<(NodeId, u8, u16)> = vec![(r1, 0, 1), (r2, 0, 2), (l1, 0, 3), (l2, 0, 4)];
    let mut next = 5u16;
    let mut vms = Vec::new();
    let mut g = 0x100u64;
    for (leaf, port, n) in [(l1, 3, 2), (l1, 4, 2), (l2, 3, 3), (l2, 4, 1)] {
        let v = sw(&mut b, g, 1 + 1 + n, "vsw");
        g += 1;
        b.connect(PortRef::new(v, 1), PortRef::new(leaf, port), rate)
            .unwrap();
        lids.push((v, 0, next));
        next += 1;
        for k in 0..=n {
            let ca = b
                .add_node(NodeSpec::new(
                    NodeKind::Ca,
                    Guid(g),
                    1,
                    if k == 0 { "pf" } else { "vf" },
                ))
                .unwrap();
            g += 1;
            b.connect(PortRef::new(ca, 1), PortRef::new(v, 2 + k as u8), rate)
                .unwrap();
            lids.push((ca, 1, next));
            if k > 0 {
                vms.push(Lid(next));
            }
            next += 1;
        }
    }
    let mut f = b.build();
    for (n, p, l) in lids {
        f.set_lid(PortRef::new(n, p), Lid(l), 0).unwrap();
    }
    (f, [r1, r2], [l1, l2], vms)
}

#[test]
fn finds_the_four_vswitches() {
    let (f, _, leaves, _) = fig2();
    let v = find_vswitches(&f);
    assert_eq!(v.len(), 4);
    assert_eq!(v[0].leaf, leaves[0]);
    assert_eq!(v[2].vfs.len(), 3);
    let view = physical_view(&f).unwrap();
    assert_eq!(view.fabric.count(NodeKind::Switch), 4);
    assert_eq!(view.fabric.count(NodeKind::Ca), 4);
}

#[test]
fn fig2_weighted_routes() {
    let (f, roots, leaves, vms) = fig2();
    let r = VSwitchFtree::new(&EngineOptions::default())
        .route(&f)
        .unwrap();
    let t = &r.tables;
    // Which root a VM's traffic comes down from: the root whose entry points
    // at the VM's leaf (root port 1 = L1, 2 = L2), and the leaves' up ports.
    let via = |vm: Lid| -> Vec<usize> {
        let leaf = if vm.0 < 14 { leaves[1] } else { leaves[0] };
        // From the other leaf, the up port used: 1 = R1, 2 = R2.
        vec![t.get(leaf, vm).unwrap() as usize]
    };
    // L1: VM1 → R1, VM2 → R2, VM3 → R1, VM4 → R2.
    assert_eq!(via(vms[0]), vec![1]);
    assert_eq!(via(vms[1]), vec![2]);
    assert_eq!(via(vms[2]), vec![1]);
    assert_eq!(via(vms[3]), vec![2]);
    // L2: VM8 (vSw4, weight 1) first → R1; vSw3's three VMs (1/3 each) → R2.
    assert_eq!(via(vms[7]), vec![1]);
    for vm in &vms[4..7] {
        assert_eq!(via(*vm), vec![2]);
    }
    // Roots send every VM down to its own leaf.
    for (i, vm) in vms.iter().enumerate() {
        let port = if i < 4 { 1 } else { 2 };
        assert_eq!(t.get(roots[0], *vm), Some(port));
        assert_eq!(t.get(roots[1], *vm), Some(port));
    }
    // vSwitch tables: own VFs local, the rest up.
    let v = find_vswitches(&f);
    assert_eq!(t.get(v[0].node, vms[0]), Some(3));
    assert_eq!(t.get(v[0].node, vms[4]), Some(1));
    assert_eq!(t.get(v[0].node, v[0].lid), Some(0));
    assert_eq!(t.get(leaves[0], v[0].lid), t.get(leaves[0], v[0].pf.lid));
    let report =
        crate::verify::verify(&f, t, None, &crate::verify::VerifyOptions::default()).unwrap();
    assert!(report.ok(), "{report:?}");
}

#[test]
fn registered_and_refuses_node_order() {
    assert!(crate::registry::engine("vswitch-ftree", &EngineOptions::default()).is_ok());
    let bad = EngineOptions {
        node_order: Some(vec![Lid(1)]),
        ..Default::default()
    };
    assert!(matches!(
        crate::registry::engine("vswitch-ftree", &bad),
        Err(RoutingError::BadOptions(_))
    ));
}
