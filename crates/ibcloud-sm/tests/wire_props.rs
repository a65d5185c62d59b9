//! Parsing never panics on arbitrary bytes, and what emit writes parses back.

use ibcloud_sm::wire::*;
use proptest::prelude::*;

proptest! {
    #[test]
    fn smp_parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = SmpRepr::parse_bytes(&bytes);
    }

    #[test]
    fn attributes_parse_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
        let _ = NodeInfoRepr::parse(&bytes);
        let _ = NodeDescriptionRepr::parse(&bytes);
        let _ = SwitchInfoRepr::parse(&bytes);
        let _ = PortInfoRepr::parse(&bytes);
        let _ = LftBlockRepr::parse(&bytes);
        let _ = SmInfoRepr::parse(&bytes);
        let _ = SlToVlRepr::parse(&bytes);
        let _ = VlArbBlockRepr::parse(&bytes);
    }

    #[test]
    fn qos_tables_round_trip(
        map in proptest::collection::vec(0u8..16, 16),
        entries in proptest::collection::vec((0u8..16, any::<u8>()), 32),
    ) {
        let mut m = [0u8; 16];
        m.copy_from_slice(&map);
        let mut b = [0u8; SMP_DATA_LEN];
        SlToVlRepr(m).emit(&mut b);
        prop_assert_eq!(SlToVlRepr::parse(&b).unwrap().0, m);
        let mut e = [(0u8, 0u8); VLARB_BLOCK_ENTRIES];
        e.copy_from_slice(&entries);
        VlArbBlockRepr(e).emit(&mut b);
        prop_assert_eq!(VlArbBlockRepr::parse(&b).unwrap().0, e);
    }

    #[test]
    fn smp_emit_parse_round_trip(
        method in any::<u8>(), attr_id in any::<u16>(), attr_mod in any::<u32>(), tid in any::<u64>(),
        path in proptest::collection::vec(1u8..=36, 0..=63), data in proptest::collection::vec(any::<u8>(), 64),
        status in 0u16..0x8000, returning in any::<bool>(),
    ) {
        let mut r = SmpRepr::request(method, attr_id, attr_mod, Route::Directed(path));
        r.tid = tid;
        r.status = status;
        r.returning = returning;
        r.data.copy_from_slice(&data);
        let b = r.to_bytes().unwrap();
        prop_assert_eq!(SmpRepr::parse_bytes(&b).unwrap(), r);
    }

    #[test]
    fn port_info_round_trips_its_bytes(mut data in proptest::collection::vec(any::<u8>(), 64)) {
        data[32] = (data[32] & 0xf0) | (data[32] % 6);
        if let Ok(p) = PortInfoRepr::parse(&data) {
            let mut out = [0u8; 64];
            p.emit(&mut out);
            prop_assert_eq!(&out[..], &data[..]);
        }
    }
}
