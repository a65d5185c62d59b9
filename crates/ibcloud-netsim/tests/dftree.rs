//! dFtree on the S003 testbed: the E §4.5 oracles in simulation, recovery of
//! the victims of Exp. I–IV, protection through the link failure of Exp. II.

use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::Fabric;
use ibcloud_netsim::config::pcie_gbps;
use ibcloud_netsim::dftree::{DftreeEvent, DftreeLog};
use ibcloud_netsim::testbed::s003_testbed;
use ibcloud_netsim::time::{MS, US};
use ibcloud_netsim::{
    Action, Dftree, DftreeConfig, SimConfig, SimResult, Simulation, TimedAction, TrafficSpec,
};

fn ddr(vls: u8) -> SimConfig {
    let host = pcie_gbps(1, 8, 128, 0.04);
    SimConfig {
        mtu: 2048,
        vls,
        host_gbps: Some(host),
        sink_gbps: Some(host),
        ..SimConfig::default()
    }
}

fn bed(hosts: u8) -> (Fabric, ForwardingTables) {
    let r = |s: &str| s.parse().unwrap();
    if hosts == 2 {
        s003_testbed(2, r("4xDDR"), r("4xDDR")).unwrap()
    } else {
        s003_testbed(4, r("4xDDR"), r("4xQDR")).unwrap()
    }
}

fn run(
    f: &Fabric,
    t: &ForwardingTables,
    cfg: &SimConfig,
    spec: &str,
    end: u64,
    dftree: Option<DftreeConfig>,
    events: &[TimedAction],
) -> (SimResult, Vec<DftreeEvent>) {
    let spec = TrafficSpec::parse_compact(spec).unwrap();
    let mut sim = Simulation::new(f, t, cfg, &spec, end).unwrap();
    sim.schedule(events).unwrap();
    let mut log: Option<DftreeLog> = None;
    if let Some(c) = dftree {
        let d = Dftree::new(f, t, c).unwrap();
        log = Some(d.log());
        sim.set_controller(Box::new(d));
    }
    let r = sim.run().unwrap();
    let events = log.map(|l| l.lock().unwrap().clone()).unwrap_or_default();
    (r, events)
}

fn gbps(r: &SimResult, flow: u32, from: u64, to: u64) -> f64 {
    let s: Vec<f64> = r
        .flow_series
        .iter()
        .filter(|x| x.flow == flow && x.time > from && x.time <= to)
        .map(|x| x.gbps)
        .collect();
    assert!(!s.is_empty());
    s.iter().sum::<f64>() / s.len() as f64
}

fn ms(cfg: DftreeConfig) -> DftreeConfig {
    DftreeConfig {
        interval: MS,
        ..cfg
    }
}

const EXP1: &str = "flow:src=H2,dst=H3;flow:src=H1,dst=H5,start=2ms;\
                    flow:src=H3,dst=H5,start=2ms;flow:src=H6,dst=H5,start=2ms";

#[test]
fn exp1_victim_recovers_and_only_hot_spot_flows_move() {
    let (f, t) = bed(2);
    let (r0, _) = run(&f, &t, &ddr(2), EXP1, 7 * MS, None, &[]);
    let (r, log) = run(
        &f,
        &t,
        &ddr(2),
        EXP1,
        7 * MS,
        Some(ms(Default::default())),
        &[],
    );
    let before = gbps(&r0, 0, 500 * US, 2 * MS);
    let collapsed = gbps(&r0, 0, 4 * MS, 7 * MS);
    let recovered = gbps(&r, 0, 4 * MS, 7 * MS);
    eprintln!("victim {before:.2} -> {collapsed:.2}; dFtree {recovered:.2}");
    assert!(before > 12.5 && collapsed < 4.0 && recovered > 7.0);
    // Hot-spot H5 (endpoint 4) marked at the first PM sweep after 2 ms.
    assert!(log
        .iter()
        .any(|e| matches!(e, DftreeEvent::Mark { time, hotspot: 4, .. } if *time == 3 * MS)));
    // Traps go to contributors (and maybe victims), always for DLID H5; the
    // victim's own SL never changes.
    for e in &log {
        if let DftreeEvent::Trap { dst, sl, .. } = e {
            assert_eq!((*dst, *sl), (4, 1));
        }
    }
    let hosts: Vec<u32> = log
        .iter()
        .filter_map(|e| match e {
            DftreeEvent::Trap { host, .. } => Some(*host),
            _ => None,
        })
        .collect();
    assert!(
        hosts.contains(&0) && hosts.contains(&2),
        "1→5 and 3→5 trapped: {hosts:?}"
    );
    let victim_sl: Vec<u8> = r
        .flow_series
        .iter()
        .filter(|x| x.flow == 0)
        .map(|x| x.sl)
        .collect();
    assert!(victim_sl.iter().all(|&s| s == 0));
}

#[test]
fn two_senders_at_half_rate_are_not_marked() {
    // 1→5 and 3→5 on 4x DDR without host limits: the hot-spot's switch port
    // is always busy (no XmitWait), each sender gets 50 %.
    let (f, t) = bed(2);
    let cfg = SimConfig {
        mtu: 2048,
        vls: 2,
        ..SimConfig::default()
    };
    let (r, log) = run(
        &f,
        &t,
        &cfg,
        "flow:src=H1,dst=H5;flow:src=H3,dst=H5",
        5 * MS,
        Some(ms(Default::default())),
        &[],
    );
    assert!((gbps(&r, 0, MS, 5 * MS) - 8.0).abs() < 0.5);
    assert!(log.is_empty(), "{log:?}");
}

#[test]
fn a_hot_spot_right_after_a_sweep_is_handled_one_interval_later() {
    let (f, t) = bed(2);
    let spec = "flow:src=H2,dst=H3;flow:src=H1,dst=H5,start=2001us;\
                flow:src=H3,dst=H5,start=2001us;flow:src=H6,dst=H5,start=2001us";
    let cfg = ms(DftreeConfig {
        trap_latency: 50 * US,
        ..Default::default()
    });
    let (_, log) = run(&f, &t, &ddr(2), spec, 4 * MS, Some(cfg), &[]);
    let first_mark = log.iter().find_map(|e| match e {
        DftreeEvent::Mark { time, .. } => Some(*time),
        _ => None,
    });
    assert_eq!(first_mark, Some(3 * MS));
    for e in &log {
        if let DftreeEvent::Trap { time, applied, .. } = e {
            assert_eq!((*time, *applied), (3 * MS, 3 * MS + 50 * US));
        }
    }
    // Threshold above anything seen: no trap at all.
    let high = ms(DftreeConfig {
        threshold: 1e9,
        ..Default::default()
    });
    let (_, log) = run(&f, &t, &ddr(2), spec, 4 * MS, Some(high), &[]);
    assert!(log.is_empty());
}

#[test]
fn contributors_return_to_the_fast_lane_when_the_hot_spot_clears() {
    let (f, t) = bed(2);
    let spec = "flow:src=H2,dst=H3;flow:src=H1,dst=H5,stop=3500us;\
                flow:src=H3,dst=H5,stop=3500us;flow:src=H6,dst=H5,stop=3500us";
    let (_, log) = run(
        &f,
        &t,
        &ddr(2),
        spec,
        6 * MS,
        Some(ms(Default::default())),
        &[],
    );
    let unmark = log
        .iter()
        .position(|e| matches!(e, DftreeEvent::Unmark { hotspot: 4, .. }))
        .expect("hot-spot cleared");
    let back = log[unmark..]
        .iter()
        .filter(|e| matches!(e, DftreeEvent::Trap { sl: 0, dst: 4, .. }))
        .count();
    assert!(back >= 2, "{log:?}");
}

#[test]
fn exp2_victim_protected_through_the_link_failure() {
    let (f, t) = bed(2);
    let a = f
        .iter_nodes()
        .find(|(_, n)| n.description == "A")
        .unwrap()
        .0;
    let spec = "flow:src=H2,dst=H4;flow:src=H1,dst=H5;flow:src=H3,dst=H5;flow:src=H6,dst=H5";
    // Link 2 (A's up-link 2) fails at 4 ms.
    let fail = [TimedAction {
        time: 4 * MS,
        action: Action::LinkDown { node: a.0, port: 2 },
    }];
    // Without dFtree: the SM's reroute alone (a dFtree controller that
    // never marks) couples the victim to 1→5.
    let sm_only = ms(DftreeConfig {
        threshold: f64::MAX,
        ..Default::default()
    });
    let (r0, log0) = run(&f, &t, &ddr(2), spec, 8 * MS, Some(sm_only), &fail);
    assert!(log0
        .iter()
        .any(|e| matches!(e, DftreeEvent::Reroute { entries, .. } if *entries > 0)));
    let (r, _) = run(
        &f,
        &t,
        &ddr(2),
        spec,
        8 * MS,
        Some(ms(Default::default())),
        &fail,
    );
    let before0 = gbps(&r0, 0, MS, 4 * MS);
    let after0 = gbps(&r0, 0, 5 * MS, 8 * MS);
    let after = gbps(&r, 0, 5 * MS, 8 * MS);
    eprintln!("exp2 victim {before0:.2} -> {after0:.2}; dFtree {after:.2}");
    assert!(before0 > 12.0 && after0 < 4.0 && after > 7.0);
}

#[test]
fn exp3_and_exp4_victims_recover_on_3b() {
    let (f, t) = bed(4);
    for (victim, lo) in [("H7", 4.0), ("H11", 3.0)] {
        let spec = format!(
            "flow:src=H2,dst={victim};flow:src=H1,dst=H9,start=2ms;\
             flow:src=H5,dst=H9,start=2ms;flow:src=H10,dst=H9,start=2ms"
        );
        let (r0, _) = run(&f, &t, &ddr(2), &spec, 6 * MS, None, &[]);
        let (r, _) = run(
            &f,
            &t,
            &ddr(2),
            &spec,
            6 * MS,
            Some(ms(Default::default())),
            &[],
        );
        let collapsed = gbps(&r0, 0, 3 * MS, 6 * MS);
        let recovered = gbps(&r, 0, 4 * MS, 6 * MS);
        eprintln!("2→{victim}: {collapsed:.2} -> {recovered:.2}");
        assert!(collapsed < lo && recovered > 12.0);
    }
}
