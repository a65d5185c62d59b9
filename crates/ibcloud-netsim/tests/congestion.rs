//! IB congestion control (IBA Annex A10) against the published shape of the
//! classic hot-spot experiments (issue 18), on ft324 (k18n2, QDR) with ftree
//! routing: three nodes of one leaf send greedily to node #0 and, on other
//! QPs (other flows), 0.5-load victim flows to three nodes of another leaf.
//!
//! Tolerances were fixed before the first run, from the shape the hardware
//! and simulation studies report (victims regain most of their throughput,
//! the hot link stays near its rate, total throughput rises; too aggressive
//! parameters oscillate), not from our own numbers.

use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::Fabric;
use ibcloud_netsim::time::{MS, US};
use ibcloud_netsim::{
    Action, CaControl, CcConfig, CctEntry, SimConfig, SimResult, Simulation, TimedAction,
    TrafficSpec,
};

const SMALL: &str = "flow:src=#18,dst=#0,size=2048;flow:src=#19,dst=#0,size=2048;\
flow:src=#20,dst=#0,size=2048;flow:src=#18,dst=#37,load=0.5,size=2048;\
flow:src=#19,dst=#38,load=0.5,size=2048;flow:src=#20,dst=#39,load=0.5,size=2048";

fn ft324() -> (Fabric, ForwardingTables) {
    let mut f = ibcloud_fabric::generate::preset("ft324")
        .unwrap()
        .build()
        .unwrap();
    ibcloud_fabric::lids::assign_lids(&mut f, &Default::default()).unwrap();
    let routing = ibcloud_routing::registry::engine("ftree", &Default::default()).unwrap();
    let t = routing.route(&f).unwrap().tables;
    (f, t)
}

fn run(f: &Fabric, t: &ForwardingTables, spec: &str, cc: Option<CcConfig>, end: u64) -> SimResult {
    let cfg = SimConfig {
        congestion_control: cc,
        sweep_interval: 20 * US,
        ..SimConfig::default()
    };
    let spec = TrafficSpec::parse_compact(spec).unwrap();
    Simulation::new(f, t, &cfg, &spec, end)
        .unwrap()
        .run()
        .unwrap()
}

/// Mean payload Gb/s of `flows` over the samples in (from, to].
fn gbps(r: &SimResult, flows: &[u32], from: u64, to: u64) -> f64 {
    let s: Vec<_> = r
        .flow_series
        .iter()
        .filter(|x| x.time > from && x.time <= to)
        .collect();
    let n = s
        .iter()
        .map(|x| x.time)
        .collect::<std::collections::BTreeSet<_>>();
    let sum: f64 = s
        .iter()
        .filter(|x| flows.contains(&x.flow))
        .map(|x| x.gbps)
        .sum();
    sum / n.len().max(1) as f64
}

/// Payload capacity of a QDR link at 2 KB packets (34 bytes of overhead).
fn qdr_payload() -> f64 {
    32.0 * 2048.0 / 2082.0
}

#[test]
fn ports_that_carry_only_victims_do_not_mark() {
    let (f, t) = ft324();
    let contributors = "flow:src=#18,dst=#0,size=2048;flow:src=#19,dst=#0,size=2048;\
flow:src=#20,dst=#0,size=2048";
    let hot = run(&f, &t, contributors, None, 300 * US);
    let r = run(&f, &t, SMALL, Some(CcConfig::default()), 3 * MS);
    let mut roots = 0;
    for (i, p) in r.ports.iter().enumerate() {
        if p.fecn_marked > 0 {
            assert!(
                hot.ports[i].xmit_pkts > 0,
                "{} carries no contributor traffic but marked {}",
                r.port_labels[i],
                p.fecn_marked
            );
            roots += 1;
        }
    }
    assert!(roots >= 1, "the hot-spot's port marks");
    let becn = |i: usize| r.flows[i].counters.becns;
    let contrib: u64 = (0..3).map(becn).sum();
    let victims: u64 = (3..6).map(becn).sum();
    assert!(contrib > 0, "contributors get BECNs");
    assert!(
        victims * 10 <= contrib,
        "victims {victims} BECNs against contributors' {contrib}"
    );
}

/// The hot-spot case: the 18 nodes of leaf 1 send Poisson traffic
/// to node #0 at 1.5× its link in total and, on other QPs, 0.5-load flows to
/// the 18 nodes of leaf 2.
fn hot_spot_case() -> String {
    let each = 1.5 * qdr_payload() / 18.0;
    let mut parts = Vec::new();
    for k in 18..36 {
        parts.push(format!(
            "flow:src=#{k},dst=#0,gbps={each},size=2048,poisson=true"
        ));
    }
    for k in 18..36 {
        parts.push(format!(
            "flow:src=#{k},dst=#{},load=0.5,size=2048,poisson=true",
            k + 18
        ));
    }
    parts.join(";")
}

/// CC settings that act within the 3 ms of the test: every eligible packet
/// of a congested port marked, CCTI_Increase 1, CCTI_Timer 10 (10.24 us), a
/// linear table of 200 ns per index. The `default` preset (timer 150,
/// marking rate 10, 100 ns per index) is too slow to settle in 3 ms here
/// (victims 2.7 Gb/s at 3 ms): with 18 contributors each needs CCTI ≈ 45–90.
/// These settings were picked from five tried on this case (default,
/// ranadive and three faster ones, see docs/netsim.md); the tolerances below
/// were fixed before any of them ran.
fn responsive() -> CcConfig {
    CcConfig {
        marking_rate: 0,
        ccti_timer: 10,
        cct: (0..128u16)
            .map(|i| CctEntry {
                shift: 0,
                multiplier: 2 * i,
            })
            .collect(),
        ..CcConfig::default()
    }
}

#[test]
fn hot_spot_shape_victims_recover_hot_link_stays_busy_total_rises() {
    let (f, t) = ft324();
    let spec = hot_spot_case();
    let off = run(&f, &t, &spec, None, 3 * MS);
    let on = run(&f, &t, &spec, Some(responsive()), 3 * MS);
    let (a, b) = (MS, 3 * MS);
    let contrib: Vec<u32> = (0..18).collect();
    let victims: Vec<u32> = (18..36).collect();
    let all: Vec<u32> = (0..36).collect();
    let victim_off = gbps(&off, &victims, a, b) / 18.0;
    let victim_on = gbps(&on, &victims, a, b) / 18.0;
    let hot_on = gbps(&on, &contrib, a, b) / qdr_payload();
    let total_off = gbps(&off, &all, a, b);
    let total_on = gbps(&on, &all, a, b);
    let offered = 0.5 * qdr_payload();
    eprintln!(
        "victim off {victim_off:.2} on {victim_on:.2} Gb/s (offered {offered:.2}); \
         hot link {hot_on:.3}; total off {total_off:.1} on {total_on:.1}"
    );
    assert!(
        victim_off < 0.5 * offered,
        "without CC the victims collapse"
    );
    assert!(
        victim_on >= 0.75 * offered,
        "victims regain most of their throughput: {victim_on:.2} of {offered:.2}"
    );
    assert!(hot_on >= 0.85, "hot link near its rate: {hot_on:.3}");
    assert!(
        total_on > total_off,
        "total rises: {total_off:.1} → {total_on:.1}"
    );
    // SL-based control (one CCTI per source port and SL, G's setting): the
    // victims share their sources' SL with the contributors and are
    // throttled with them.
    let sl = CcConfig {
        control: CaControl::Sl,
        ..responsive()
    };
    let by_sl = run(&f, &t, &spec, Some(sl), 3 * MS);
    let victim_sl = gbps(&by_sl, &victims, a, b) / 18.0;
    eprintln!("SL-based: victim {victim_sl:.2} Gb/s");
    assert!(
        victim_sl < 0.5 * offered,
        "SL-based control throttles victims too"
    );
}

/// Too aggressive settings (large CCTI steps into a steep table, fast timer,
/// every packet marked) make the contributors swing between throttled and
/// free: the hot link's throughput oscillates and its mean falls.
#[test]
fn too_aggressive_parameters_oscillate() {
    let (f, t) = ft324();
    let aggressive = CcConfig {
        marking_rate: 0,
        ccti_increase: 64,
        ccti_timer: 10,
        cct: (0..128u16)
            .map(|i| CctEntry {
                shift: 0,
                multiplier: i * 100,
            })
            .collect(),
        ..CcConfig::default()
    };
    let cv = |r: &SimResult| {
        let xs: Vec<f64> = (51..=150)
            .map(|k| {
                let t = k * 20 * US;
                gbps(r, &[0, 1, 2], t - 20 * US, t)
            })
            .collect();
        let m = xs.iter().sum::<f64>() / xs.len() as f64;
        let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / xs.len() as f64;
        let swings = xs.windows(2).filter(|w| (w[0] > m) != (w[1] > m)).count();
        (v.sqrt() / m.max(1e-9), m / qdr_payload(), swings)
    };
    let (cv_default, mean_default, _) = cv(&run(&f, &t, SMALL, Some(CcConfig::default()), 3 * MS));
    let (cv_aggr, mean_aggr, swings) = cv(&run(&f, &t, SMALL, Some(aggressive), 3 * MS));
    eprintln!(
        "hot link: default cv {cv_default:.3} mean {mean_default:.3}; \
         aggressive cv {cv_aggr:.3} mean {mean_aggr:.3} crossings of the mean {swings}"
    );
    assert!(swings >= 4, "repeated swings, not one: {swings}");
    assert!(
        cv_aggr > 0.25,
        "aggressive settings oscillate: cv {cv_aggr:.3}"
    );
    assert!(
        cv_aggr > 2.0 * cv_default,
        "{cv_aggr:.3} vs {cv_default:.3}"
    );
    assert!(mean_aggr < mean_default, "and lose throughput");
}

/// Mean message latency of flow `f` in µs.
fn mean_latency_us(r: &SimResult, f: usize) -> f64 {
    let c = &r.flows[f].counters;
    assert!(c.completed_msgs > 0, "flow {f} completed nothing");
    c.latency_sum as f64 / c.completed_msgs as f64 / US as f64
}

#[test]
fn a_static_cc_delay_stretches_messages_by_their_packet_gaps() {
    // Sphinx's actuator (G §6.4): the SM gives a flow's HCA a delay, the
    // HCA waits CCT[delay] after each packet. A 512 KB message of 256
    // packets then takes 255 delays longer; a one-packet message (4 KB at a
    // 4 KB MTU) is not slowed at all, since its next message comes later
    // than the delay (G: "buffers of 4 KB or less show no effect").
    let (f, t) = ft324();
    let cc = CcConfig::default(); // CCT[i] = i × 100 ns
    let case = |size: u32, mtu: u32, ccti: u16| {
        let cfg = SimConfig {
            congestion_control: Some(cc.clone()),
            mtu,
            ..SimConfig::default()
        };
        let spec = TrafficSpec::parse_compact(&format!("flow:src=#18,dst=#37,size={size},gbps=4"))
            .unwrap();
        let mut sim = Simulation::new(&f, &t, &cfg, &spec, 6 * MS).unwrap();
        sim.schedule(&[TimedAction {
            time: 0,
            action: Action::SetFlowCcDelay { flow: 0, ccti },
        }])
        .unwrap();
        let r = sim.run().unwrap();
        (mean_latency_us(&r, 0), r.flows[0].counters.ccti)
    };
    let (base, _) = case(524_288, 2048, 0);
    let (slow, ccti) = case(524_288, 2048, 10);
    assert_eq!(ccti, 10);
    let want = 255.0 * 1.0; // 255 gaps of CCT[10] = 1 µs
    assert!(
        ((slow - base) / want - 1.0).abs() < 0.02,
        "512 KB: {base:.1} → {slow:.1} µs, expected +{want} µs"
    );
    let (small, _) = case(4096, 4096, 0);
    let (small_delayed, _) = case(4096, 4096, 10);
    assert_eq!(small, small_delayed, "a one-packet message is not delayed");

    // Refused before the run: no congestion control, or above CCTI_Limit.
    let spec = TrafficSpec::parse_compact("flow:src=#18,dst=#37,size=4096,gbps=4").unwrap();
    let mut sim = Simulation::new(&f, &t, &SimConfig::default(), &spec, MS).unwrap();
    let e = sim
        .schedule(&[TimedAction {
            time: 0,
            action: Action::SetFlowCcDelay { flow: 0, ccti: 1 },
        }])
        .unwrap_err();
    assert!(e.to_string().contains("congestion control"), "{e}");
    let cfg = SimConfig {
        congestion_control: Some(cc.clone()),
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(&f, &t, &cfg, &spec, MS).unwrap();
    let e = sim
        .schedule(&[TimedAction {
            time: 0,
            action: Action::SetFlowCcDelay { flow: 0, ccti: 128 },
        }])
        .unwrap_err();
    assert!(e.to_string().contains("CCTI_Limit"), "{e}");
}

/// The CA Congestion Setting's Control_Map (G §9 A11's "bulk SLs only"):
/// switches mark whatever the SL, but sources ignore the BECNs of SLs outside
/// the map, so their CCTI never rises and the hot spot stays as without CC.
#[test]
fn sls_outside_the_control_map_ignore_becns() {
    let (f, t) = ft324();
    let spec = hot_spot_case(); // every flow on SL0
    let on = run(&f, &t, &spec, Some(responsive()), 2 * MS);
    let out = CcConfig {
        sl_map: 0xfffe,
        ..responsive()
    };
    let r = run(&f, &t, &spec, Some(out), 2 * MS);
    assert!(
        r.flows.iter().any(|x| x.counters.becns > 0),
        "switches still mark"
    );
    assert!(r.flows.iter().all(|x| x.counters.ccti == 0));
    assert!(on.flows.iter().any(|x| x.counters.ccti > 0));
    let victims: Vec<u32> = (18..36).collect();
    let offered = 0.5 * qdr_payload();
    let v = gbps(&r, &victims, MS, 2 * MS) / 18.0;
    assert!(v < 0.5 * offered, "victims collapse as without CC: {v:.2}");
}
