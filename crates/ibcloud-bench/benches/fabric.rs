//! Fabric-level benchmarks: generation, native round trip, ibnetdiscover
//! write and parse. Targets (issue [foundation], 2-core machine): generation
//! plus native round trip of ft11664 under 0.5 s; parsing its ibnetdiscover
//! file under 1 s.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ibcloud_bench::{fabric, FABRIC_TIERS};
use ibcloud_fabric::formats::{ibnetdiscover, native};
use ibcloud_fabric::generate;
use std::time::Duration;

fn configure(c: &mut Criterion) -> criterion::BenchmarkGroup<'_, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group("fabric");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    g
}

fn generation(c: &mut Criterion) {
    let mut g = configure(c);
    for name in FABRIC_TIERS {
        let params = generate::preset(name).unwrap();
        g.throughput(Throughput::Elements(params.num_compute_nodes()));
        g.bench_with_input(BenchmarkId::new("generate", name), &params, |b, p| {
            b.iter(|| p.build().unwrap())
        });
    }
    g.finish();
}

fn native_round_trip(c: &mut Criterion) {
    let mut g = configure(c);
    for name in FABRIC_TIERS {
        let f = fabric(name);
        g.bench_with_input(BenchmarkId::new("native-write-read", name), &f, |b, f| {
            b.iter(|| native::decode(&native::encode(f, None), "bench").unwrap())
        });
        g.bench_function(BenchmarkId::new("generate+native-write-read", name), |b| {
            let p = generate::preset(name).unwrap();
            b.iter(|| native::decode(&native::encode(&p.build().unwrap(), None), "bench").unwrap())
        });
    }
    g.finish();
}

fn ibnetdiscover_text(c: &mut Criterion) {
    let mut g = configure(c);
    for name in FABRIC_TIERS {
        let f = fabric(name);
        let mut text = Vec::new();
        ibnetdiscover::write(&f, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::new("ibnetdiscover-write", name), &f, |b, f| {
            b.iter(|| {
                let mut out = Vec::with_capacity(text.len());
                ibnetdiscover::write(f, &mut out).unwrap();
                out
            })
        });
        g.bench_with_input(
            BenchmarkId::new("ibnetdiscover-parse", name),
            &text,
            |b, t| b.iter(|| ibnetdiscover::parse(t, "bench.topo").unwrap()),
        );
    }
    g.finish();
}

criterion_group!(benches, generation, native_round_trip, ibnetdiscover_text);
criterion_main!(benches);
