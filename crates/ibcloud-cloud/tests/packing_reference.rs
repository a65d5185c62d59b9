//! The packers against a naive transcription of Paper VI's algorithms: no
//! block skipping, no lower bounds, every candidate host evaluated with the
//! plain recursion. The optimised packer must take exactly the same decisions.

use ibcloud_cloud::{delay_stats, pack, Criterion, DelayUnit, Demand, Fit, Host, PackSpec, Window};
use proptest::prelude::*;

fn naive(demand: &Demand, segments: &[std::ops::Range<usize>], spec: &PackSpec) -> Vec<Vec<usize>> {
    let capacity = spec.cores * spec.threshold;
    let window: Vec<Vec<f64>> = (0..demand.n_vms())
        .map(|vm| {
            segments
                .iter()
                .flat_map(|s| demand.row(vm)[s.clone()].iter().copied())
                .collect()
        })
        .collect();
    let lengths: Vec<usize> = segments.iter().map(|s| s.len()).collect();
    // Σ r of the plain recursion, restarting at every segment (cores × Δt).
    let raw = |series: &[f64]| {
        let (mut total, mut at) = (0.0, 0);
        for n in &lengths {
            let mut r: f64 = 0.0;
            for x in &series[at..at + n] {
                r = (r + (x - capacity)).max(0.0);
                total += r;
            }
            at += n;
        }
        total
    };
    // The paper's Q in wall-minutes is Σ r · Δt²/C; compare in raw units.
    let scale = (demand.interval_minutes() / capacity) * demand.interval_minutes();
    let means: Vec<f64> = window
        .iter()
        .map(|w| w.iter().sum::<f64>() / w.len() as f64)
        .collect();
    let mut order: Vec<usize> = (0..demand.n_vms()).collect();
    order.sort_by(|&a, &b| means[b].total_cmp(&means[a]));
    let mut bins: Vec<(Vec<usize>, f64, Vec<f64>)> = Vec::new();
    for vm in order {
        let mut candidates: Vec<usize> = (0..bins.len())
            .filter(|&b| bins[b].1 + means[vm] <= capacity)
            .collect();
        if spec.fit == Fit::Best {
            candidates.sort_by(|&a, &b| bins[b].1.total_cmp(&bins[a].1));
        }
        let chosen = candidates.into_iter().find(|&b| match spec.criterion {
            Criterion::Utilisation => true,
            Criterion::Delay { limit } => {
                let series: Vec<f64> = bins[b]
                    .2
                    .iter()
                    .zip(&window[vm])
                    .map(|(x, y)| x + y)
                    .collect();
                raw(&series) <= limit / scale
            }
        });
        match chosen {
            Some(b) => {
                bins[b].0.push(vm);
                bins[b].1 += means[vm];
                bins[b].2 = bins[b]
                    .2
                    .iter()
                    .zip(&window[vm])
                    .map(|(x, y)| x + y)
                    .collect();
            }
            None => bins.push((vec![vm], means[vm], window[vm].clone())),
        }
    }
    bins.into_iter().map(|b| b.0).collect()
}

fn case() -> impl Strategy<Value = (usize, usize, Vec<f64>, usize, f64, f64, Option<f64>, bool)> {
    (1usize..12, 40usize..140).prop_flat_map(|(n_vms, n)| {
        (
            Just(n_vms),
            Just(n),
            // Multiples of 1/16: exact sums, so decisions cannot differ by rounding.
            proptest::collection::vec((0u32..48).prop_map(|k| k as f64 / 16.0), n_vms * n),
            1..n,
            prop_oneof![Just(2.0), Just(4.0), Just(8.0)],
            prop_oneof![Just(0.5), Just(0.75), Just(1.0)],
            prop_oneof![
                Just(None),
                Just(Some(0.0)),
                Just(Some(0.5)),
                Just(Some(4.0)),
                Just(Some(40.0))
            ],
            any::<bool>(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn optimised_packer_takes_the_naive_decisions((n_vms, n, data, cut, cores, theta, limit, first) in case()) {
        let demand = Demand::new(n_vms, n, 1.0, data).unwrap();
        let segments = if cut % 2 == 0 { vec![0..cut, cut..n] } else { std::iter::once(0..n).collect() };
        let window = Window::new(&demand, segments.clone()).unwrap();
        let criterion = match limit { None => Criterion::Utilisation, Some(limit) => Criterion::Delay { limit } };
        let spec = PackSpec { cores, threshold: theta, criterion, fit: if first { Fit::First } else { Fit::Best },
                              unit: DelayUnit::WallMinutes };
        let got = pack(&demand, &window, &spec).unwrap();
        prop_assert_eq!(got.members(), naive(&demand, &segments, &spec));
        let host = Host::new(cores * theta, 1.0).unwrap();
        for bin in &got.bins {
            let series: Vec<f64> = segments.iter().flat_map(|s| {
                s.clone().map(|t| bin.vms.iter().map(|&vm| demand.row(vm)[t]).sum::<f64>()).collect::<Vec<_>>()
            }).collect();
            let mut pieces = Vec::new();
            let mut at = 0;
            for s in &segments {
                pieces.push(&series[at..at + s.len()]);
                at += s.len();
            }
            let q = delay_stats(&pieces, host, DelayUnit::WallMinutes).total_delay;
            if limit.is_some() {
                prop_assert!((bin.packing_delay - q).abs() <= 1e-9 * q.max(1.0));
            }
            if bin.vms.len() > 1 {
                if let Criterion::Delay { limit } = criterion {
                    prop_assert!(bin.packing_delay <= limit * (1.0 + 1e-12));
                }
            }
        }
    }
}

fn rough_case(
) -> impl Strategy<Value = (usize, usize, Vec<f64>, usize, f64, f64, Option<f64>, bool)> {
    (2usize..10, 100usize..700).prop_flat_map(|(n_vms, n)| {
        (
            Just(n_vms),
            Just(n),
            // Arbitrary values: decisions must still agree, since both sides
            // do the same additions in the same order and the lower bounds
            // only reject beyond a margin.
            proptest::collection::vec(0.0f64..3.0, n_vms * n),
            1..n,
            prop_oneof![Just(4.0), Just(12.0)],
            prop_oneof![Just(0.7), Just(0.9), Just(1.0)],
            prop_oneof![
                Just(None),
                Just(Some(1.0)),
                Just(Some(30.0)),
                Just(Some(500.0))
            ],
            any::<bool>(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]
    #[test]
    fn optimised_packer_agrees_on_arbitrary_demand((n_vms, n, data, cut, cores, theta, limit, first) in rough_case()) {
        let demand = Demand::new(n_vms, n, 1.0, data).unwrap();
        let segments = if cut % 2 == 0 { vec![0..cut, cut..n] } else { std::iter::once(0..n).collect() };
        let window = Window::new(&demand, segments.clone()).unwrap();
        let criterion = match limit { None => Criterion::Utilisation, Some(limit) => Criterion::Delay { limit } };
        let spec = PackSpec { cores, threshold: theta, criterion, fit: if first { Fit::First } else { Fit::Best },
                              unit: DelayUnit::WallMinutes };
        prop_assert_eq!(pack(&demand, &window, &spec).unwrap().members(), naive(&demand, &segments, &spec));
    }
}
