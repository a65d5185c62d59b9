//! The native format round-trips whole fabrics, refuses corrupted files with a
//! `ParseError` (never a panic), and is fast enough for the largest presets.

use ibcloud_fabric::formats::{native, parse_fabric, Format};
use ibcloud_fabric::generate::preset;
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Fabric, FabricError, Lid};
use proptest::prelude::*;
use std::sync::OnceLock;
use std::time::Instant;

fn routed(name: &str) -> (Fabric, ForwardingTables) {
    let mut fabric = preset(name).unwrap().build().unwrap();
    fabric.infer_ranks();
    let mut tables = ForwardingTables::new(&fabric);
    for (i, sw) in fabric.switches().enumerate() {
        let ports = fabric.node(sw).num_ports as usize;
        for lid in 1..=fabric.max_lid() {
            tables.set(sw, Lid(lid), ((lid as usize + i) % ports + 1) as u8);
        }
    }
    (fabric, tables)
}

fn sample() -> &'static (Fabric, ForwardingTables, Vec<u8>) {
    static SAMPLE: OnceLock<(Fabric, ForwardingTables, Vec<u8>)> = OnceLock::new();
    SAMPLE.get_or_init(|| {
        let (f, t) = routed("4-ary-2-full");
        let bytes = native::encode(&f, Some(&t));
        (f, t, bytes)
    })
}

#[test]
fn round_trips_a_routed_fabric() {
    let (f, t, bytes) = sample();
    let back = native::decode(bytes, "s.ibcf").unwrap();
    assert_eq!(&back.fabric, f);
    assert_eq!(back.tables.as_ref(), Some(t));
    // Without tables, and through the format dispatch.
    let plain = native::encode(f, None);
    assert!(plain.len() < bytes.len());
    assert_eq!(&parse_fabric(&plain, "p.ibcf", Format::Native).unwrap(), f);
    assert_eq!(Format::sniff(&plain), Some(Format::Native));
}

#[test]
fn round_trips_ft11664_with_tables() {
    let (f, t) = routed("ft11664");
    let bytes = native::encode(&f, Some(&t));
    let back = native::decode(&bytes, "big.ibcf").unwrap();
    assert_eq!(back.fabric, f);
    assert_eq!(back.tables, Some(t));
    assert!(back.fabric.topology_difference(&f).is_none());
}

#[test]
fn errors_name_the_file() {
    let (_, _, bytes) = sample();
    let err = native::decode(&bytes[..bytes.len() - 3], "cut.ibcf").unwrap_err();
    assert!(matches!(err, FabricError::Parse(_)));
    assert!(
        err.to_string()
            .starts_with("cut.ibcf: truncated or corrupt payload"),
        "{err}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn byte_flips_never_panic(flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..8)) {
        let (f, _, bytes) = sample();
        let mut data = bytes.clone();
        for (at, x) in &flips {
            let i = at.index(data.len());
            data[i] ^= x;
        }
        match native::decode(&data, "flip.ibcf") {
            Ok(file) => {
                // A flip may land in a description or a LID; what loads must be self-consistent.
                prop_assert_eq!(file.fabric.num_nodes(), f.num_nodes());
                let _ = file.fabric.lid_table();
                let _ = file.fabric.max_lid();
            }
            Err(e) => prop_assert!(matches!(e, FabricError::Parse(_)) && e.to_string().starts_with("flip.ibcf: ")),
        }
    }

    #[test]
    fn truncations_never_panic_and_always_fail(len in 0usize..2048) {
        let (_, _, bytes) = sample();
        let cut = &bytes[..len.min(bytes.len() - 1)];
        prop_assert!(native::decode(cut, "cut.ibcf").is_err());
    }

    #[test]
    fn garbage_after_a_valid_header_never_panics(tail in prop::collection::vec(any::<u8>(), 0..512)) {
        let mut data = native::MAGIC.to_vec();
        data.extend_from_slice(&1u32.to_le_bytes());
        data.extend_from_slice(&tail);
        let _ = native::decode(&data, "junk.ibcf");
    }
}

/// Timing of the brief's target: generate ft11664, write and read it back.
/// Run with `cargo test --release -p ibcloud-fabric --test native_format -- --ignored --nocapture`.
#[test]
#[ignore = "timing; run in release"]
fn ft11664_generate_write_read_timing() {
    let t0 = Instant::now();
    let fabric = preset("ft11664").unwrap().build().unwrap();
    let t1 = Instant::now();
    let bytes = native::encode(&fabric, None);
    let t2 = Instant::now();
    let back = native::decode(&bytes, "ft11664.ibcf").unwrap();
    let t3 = Instant::now();
    assert_eq!(back.fabric, fabric);
    let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
    println!(
        "ft11664: {} nodes, {} bytes; generate {:.1} ms, write {:.1} ms, read {:.1} ms, total {:.1} ms",
        fabric.num_nodes(),
        bytes.len(),
        ms(t0, t1),
        ms(t1, t2),
        ms(t2, t3),
        ms(t0, t3)
    );
    let (f, t) = routed("ft11664");
    let t4 = Instant::now();
    let bytes = native::encode(&f, Some(&t));
    let t5 = Instant::now();
    let back = native::decode(&bytes, "ft11664.ibcf").unwrap();
    let t6 = Instant::now();
    assert!(back.tables.is_some());
    println!(
        "ft11664 with full tables: {} bytes; write {:.1} ms, read {:.1} ms",
        bytes.len(),
        ms(t4, t5),
        ms(t5, t6)
    );
    assert!(
        ms(t0, t3) < 500.0,
        "generate + write + read took {:.1} ms",
        ms(t0, t3)
    );
}
