// Measurement driver for the congestion-control cases of issue 18 on ft324: 18 nodes at 1.5× the hot node's link with 0.5-load victim flows, and uniform plus a hot spot; CC off, default and ranadive.
use ibcloud_netsim::time::MS;
use ibcloud_netsim::{CcConfig, SimConfig, Simulation, TrafficSpec};

fn main() {
    let ms: u64 = std::env::args().nth(1).map_or(3, |a| a.parse().unwrap());
    let mut f = ibcloud_fabric::generate::preset("ft324")
        .unwrap()
        .build()
        .unwrap();
    ibcloud_fabric::lids::assign_lids(&mut f, &Default::default()).unwrap();
    let t = ibcloud_routing::registry::engine("ftree", &Default::default())
        .unwrap()
        .route(&f)
        .unwrap()
        .tables;
    let cap = 32.0 * 2048.0 / 2082.0;
    let each = 1.5 * cap / 18.0;
    let mut hs = Vec::new();
    for k in 18..36 {
        hs.push(format!(
            "flow:src=#{k},dst=#0,gbps={each},size=2048,poisson=true"
        ));
    }
    for k in 18..36 {
        hs.push(format!(
            "flow:src=#{k},dst=#{},load=0.5,size=2048,poisson=true",
            k + 18
        ));
    }
    let cases = [
        ("hot-spot", hs.join(";")),
        (
            "uniform+hot-spot",
            "uniform:load=0.3,size=2048,poisson=1;hotspot:hot=#0,load=1.5,size=2048,poisson=1"
                .to_string(),
        ),
    ];
    for (case, spec) in &cases {
        for (name, cc) in [
            ("off", None),
            ("default", Some(CcConfig::default())),
            ("ranadive", Some(CcConfig::ranadive())),
        ] {
            let cfg = SimConfig {
                congestion_control: cc,
                record_ports: false,
                ..SimConfig::default()
            };
            let sp = TrafficSpec::parse_compact(spec).unwrap();
            let r = Simulation::new(&f, &t, &cfg, &sp, ms * MS)
                .unwrap()
                .run()
                .unwrap();
            let secs = r.end_time as f64 / 1e12;
            let hot_slot = r
                .port_labels
                .iter()
                .position(|l| l == "'hca-00001 HCA-1' port 1")
                .unwrap();
            let to_hot = r.ports[hot_slot].rcv_bytes as f64 * 2048.0 / 2082.0;
            let victims: Vec<f64> = if *case == "hot-spot" {
                r.flows
                    .iter()
                    .filter(|x| x.dst != 0)
                    .map(|x| x.gbps)
                    .collect()
            } else {
                r.flows
                    .iter()
                    .filter(|x| x.name.ends_with("->uniform"))
                    .map(|x| x.gbps)
                    .collect()
            };
            let total: f64 = r
                .flows
                .iter()
                .map(|x| x.counters.delivered_bytes as f64)
                .sum::<f64>()
                * 8.0
                / secs
                / 1e9;
            let marks: u64 = r.ports.iter().map(|p| p.fecn_marked).sum();
            println!("{case:18} {name:9} victims {:6.2} Gb/s  hot link {:.3}  total {:6.1} Gb/s  FECN {marks}  events {}", victims.iter().sum::<f64>() / victims.len() as f64, to_hot * 8.0 / secs / 1e9 / cap, total, r.events);
        }
    }
}
