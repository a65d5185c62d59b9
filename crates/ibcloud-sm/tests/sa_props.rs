//! The SA on arbitrary input: parsing SA MADs never panics and round-trips,
//! RMPP segmentation/reassembly gives back every byte for any payload and
//! window, and the SA of a subnet the SM brought up (on the in-memory
//! fabric) answers any 256 bytes with a MAD status, a table or nothing —
//! never a panic.

use ibcloud_fabric::generate;
use ibcloud_fabric::PortRef;
use ibcloud_sm::mads::Reliability;
use ibcloud_sm::memfabric::MemFabric;
use ibcloud_sm::sa::mad::{RmppHeader, SaHeader, MAD_LEN};
use ibcloud_sm::sa::records::{attr, LINK_RECORD, NODE_RECORD, PORT_INFO_RECORD};
use ibcloud_sm::sa::rmpp::{segment, Reassembler, Step};
use ibcloud_sm::sa::{Reply, SaServer};
use ibcloud_sm::sm::{SmConfig, SubnetManager};
use proptest::prelude::*;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The SA server of a 4-ary-2-full the SM brought up in memory.
fn server() -> &'static std::sync::Mutex<SaServer> {
    static S: OnceLock<std::sync::Mutex<SaServer>> = OnceLock::new();
    S.get_or_init(|| {
        let f = generate::preset("4-ary-2-full").unwrap().build().unwrap();
        let port = PortRef::new(f.cas().next().unwrap(), 1);
        let mut sm = SubnetManager::new(
            MemFabric::new(f, port),
            SmConfig {
                engine: "minhop".into(),
                reliability: Reliability {
                    timeout: Duration::from_millis(5),
                    retries: 2,
                    window: 4,
                },
                ..SmConfig::default()
            },
        )
        .unwrap();
        sm.heavy_sweep("bring-up").unwrap();
        std::sync::Mutex::new(
            sm.mads
                .sa
                .take()
                .expect("the SA is installed after bring-up"),
        )
    })
}

fn header() -> impl Strategy<Value = SaHeader> {
    (
        any::<u8>(),
        any::<u8>(),
        any::<u16>(),
        any::<u64>(),
        any::<u16>(),
        any::<u32>(),
        (
            any::<u8>(),
            any::<u8>(),
            0u8..32,
            0u8..8,
            any::<u8>(),
            any::<u32>(),
            any::<u32>(),
        ),
        (any::<u64>(), any::<u16>(), any::<u64>()),
    )
        .prop_map(|(cv, m, st, tid, a, am, r, (k, off, mask))| SaHeader {
            class_version: cv,
            method: m,
            status: st,
            tid,
            attr_id: a,
            attr_mod: am,
            rmpp: RmppHeader {
                version: r.0,
                kind: r.1,
                resp_time: r.2,
                flags: r.3,
                status: r.4,
                data1: r.5,
                data2: r.6,
            },
            sm_key: k,
            attr_offset: off,
            comp_mask: mask,
        })
}

proptest! {
    #[test]
    fn sa_header_parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = SaHeader::parse(&bytes);
    }

    #[test]
    fn sa_header_emit_parse_round_trip(h in header()) {
        let mut b = [0u8; MAD_LEN];
        h.emit(&mut b);
        prop_assert_eq!(SaHeader::parse(&b).unwrap(), h);
    }

    #[test]
    fn rmpp_reassembles_any_payload_with_any_window(
        len in 0usize..3000, seed in any::<u8>(), window in 1u32..40,
    ) {
        let data: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect();
        let h = SaHeader { class_version: 2, method: 0x92, tid: 5, attr_id: 0x11, ..SaHeader::default() };
        let segs = segment(&h, &data);
        prop_assert_eq!(segs.len(), len.div_ceil(200).max(1));
        let mut rx = Reassembler::new(window);
        let mut done = None;
        for (i, s) in segs.iter().enumerate() {
            match rx.push(s).unwrap() {
                Step::Done(_, d, _) => { prop_assert_eq!(i + 1, segs.len()); done = Some(d); }
                Step::More(_) => prop_assert!(i + 1 < segs.len()),
            }
        }
        prop_assert_eq!(done.unwrap(), data);
    }

    #[test]
    fn a_record_matches_itself_and_not_a_changed_component(
        rec in proptest::collection::vec(any::<u8>(), 112), mask in any::<u64>(), pick in any::<prop::sample::Index>(),
        which in 0usize..3,
    ) {
        let layout = [NODE_RECORD, PORT_INFO_RECORD, LINK_RECORD][which];
        let rec = &rec[..layout.size];
        prop_assert!(layout.matches(mask, rec, rec));
        // Flip one bit of one selected, matchable component.
        let comps: Vec<(usize, (usize, usize))> = layout.fields.iter().enumerate()
            .filter_map(|(i, f)| f.map(|f| (i, f))).collect();
        let (i, (start, len)) = comps[pick.index(comps.len())];
        let bit = start + pick.index(len);
        let mut other = rec.to_vec();
        other[bit / 8] ^= 0x80 >> (bit % 8);
        prop_assert!(!layout.matches(mask | (1 << i), &other, rec));
        prop_assert!(layout.matches(mask & !(1 << i) & mask_without(&layout, i), &other, rec));
    }

    #[test]
    fn the_sa_answers_any_mad_without_panicking(
        bytes in proptest::collection::vec(any::<u8>(), 256),
        method in prop::sample::select(vec![0x01u8, 0x02, 0x12, 0x14, 0x15, 0x92, 0x81]),
        attr_id in prop::sample::select(vec![
            attr::CLASS_PORT_INFO, attr::NODE_RECORD, attr::PORT_INFO_RECORD, attr::SWITCH_INFO_RECORD,
            attr::LINK_RECORD, attr::SM_INFO_RECORD, attr::GUID_INFO_RECORD, attr::LFT_RECORD,
            attr::PATH_RECORD, attr::SERVICE_RECORD, attr::MC_MEMBER_RECORD, 0x7777,
        ]),
        keep_header in any::<bool>(),
    ) {
        let mut m = [0u8; MAD_LEN];
        m.copy_from_slice(&bytes);
        if keep_header {
            m[0] = 1;
            m[1] = 3;
            m[2] = 2;
            m[3] = method;
            m[16..18].copy_from_slice(&attr_id.to_be_bytes());
        }
        let mut s = server().lock().unwrap();
        let out = s.on_mad(&m, 3, 1, Instant::now());
        for o in &out {
            prop_assert_eq!(o.mad[1], 3);
            prop_assert!(o.bytes().len() >= 56 && o.bytes().len() <= 256);
            prop_assert!(o.mad[3] & 0x80 != 0, "only responses go out");
        }
        if keep_header && m[3] & 0x80 == 0 {
            prop_assert!(!out.is_empty(), "a request is always answered");
        }
        let _ = s.on_timer(Instant::now() + Duration::from_secs(10));
    }
}

#[test]
fn the_swept_sa_serves_every_record_kind() {
    let s = server().lock().unwrap();
    drop(s);
    let mut s = server().lock().unwrap();
    for (attr_id, layout, want) in [
        (attr::NODE_RECORD, NODE_RECORD, 32 + 12),
        (attr::LINK_RECORD, LINK_RECORD, 2 * 64),
        (attr::PORT_INFO_RECORD, PORT_INFO_RECORD, 32 + 12 * 9),
    ] {
        let mut m = [0u8; MAD_LEN];
        SaHeader {
            class_version: 2,
            method: 0x12,
            tid: u64::from(attr_id),
            attr_id,
            ..SaHeader::default()
        }
        .emit(&mut m);
        let out = s.on_mad(&m, 3, 1, Instant::now());
        let first = SaHeader::parse(&out[0].mad).unwrap();
        assert_eq!((first.status, first.attr_offset), (0, layout.attr_offset()));
        let total = first.rmpp.data2 as usize;
        let segs = total.div_ceil(220);
        let bytes = total - 20 * segs;
        assert_eq!(bytes / layout.stride(), want, "attribute 0x{attr_id:04x}");
    }
    let _ = Reply::Nothing;
}

/// A mask selecting only components that do not cover the bits of
/// component `i` (components never overlap, so: all but `i`).
fn mask_without(layout: &ibcloud_sm::sa::records::Layout, i: usize) -> u64 {
    (0..layout.fields.len())
        .filter(|&j| j != i)
        .fold(0, |m, j| m | (1 << j))
}
