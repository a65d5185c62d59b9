//! Property tests: any sequence of migrations, with any method and scheme,
//! keeps every VM reachable from every switch without loops, moves the VM's
//! addresses intact, and FTreeMinRC never updates more switches than ItRC.

use ibcloud_fabric::generate::preset;
use ibcloud_vswitch::safety::reachability;
use ibcloud_vswitch::{Method, Scheme, VirtualFabric};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn migrations_keep_everything_reachable(
        prepop in any::<bool>(),
        boots in proptest::collection::vec(0usize..32, 4..20),
        moves in proptest::collection::vec((0usize..64, 0usize..32, 0u8..3, any::<bool>()), 1..25),
    ) {
        let scheme = if prepop { Scheme::Prepopulated } else { Scheme::Dynamic };
        let p = preset("4-ary-2-full").unwrap().build().unwrap();
        let mut vf = VirtualFabric::virtualize(&p, 2, scheme).unwrap();
        for (i, h) in boots.iter().enumerate() {
            let _ = vf.boot_vm(&format!("vm{i}"), *h);
        }
        vf.reroute().unwrap();
        for (vm, dst, m, ps) in moves {
            let n = vf.num_vms();
            if n == 0 { break; }
            let idx = vf.vms().nth(vm % n).map(|v| v.name.clone()).unwrap();
            let i = vf.find_vm(&idx).unwrap();
            let method = [Method::Itrc, Method::FtreeMinRc, Method::Full][m as usize];
            let before = vf.vm(i).unwrap().clone();
            let Ok(plan) = vf.plan_migration(i, dst, method, ps) else { continue };
            if method == Method::FtreeMinRc {
                let itrc = vf.plan_migration(i, dst, Method::Itrc, ps).unwrap();
                prop_assert!(plan.updated.len() <= itrc.updated.len());
            }
            vf.apply(&plan).unwrap();
            let after = vf.vm(i).unwrap();
            prop_assert_eq!(after.lid, before.lid);
            prop_assert_eq!(after.vguid, before.vguid);
            prop_assert_eq!(after.hypervisor, dst);
            let lids: Vec<_> = vf.vms().map(|v| v.lid).collect();
            let r = reachability(vf.fabric(), vf.tables(), &lids);
            prop_assert!(r.ok(), "{:?}", r.problems);
        }
    }
}
