//! The control loop on the host simulator: a policy that caps a VM when it
//! uses more than 60 % CPU over its period; the decision leaves after the
//! control-plane latency and the host applies it after dom0's delay; every
//! action is logged with both times, and the cap takes effect (parking).

use ibcloud_control::{ControlLoop, CpuMeter, Policy, Time};
use ibcloud_host::{Actuation, HostController, Scenario, View, World};

const MS: Time = 1_000_000_000;

#[derive(Debug, Default)]
struct CapHog {
    meter: CpuMeter,
}

impl Policy for CapHog {
    type Obs = Vec<f64>;
    fn name(&self) -> String {
        "cap-hog".into()
    }
    fn period(&self) -> Time {
        30 * MS
    }
    fn observe(&mut self, _now: Time, view: &View<'_>) -> Vec<f64> {
        self.meter.read(view)
    }
    fn evaluate(&mut self, _now: Time, obs: &Vec<f64>) -> bool {
        obs.iter().any(|&p| p > 60.0)
    }
    fn culprits(&mut self, _now: Time, obs: &Vec<f64>) -> Vec<usize> {
        (0..obs.len()).filter(|&i| obs[i] > 60.0).collect()
    }
    fn actuate(&mut self, _now: Time, _obs: &Vec<f64>, c: &[usize]) -> Vec<Actuation> {
        c.iter()
            .map(|&vm| Actuation::SetCap { vm, cap: 25 })
            .collect()
    }
    fn report(&mut self, _names: &[String]) -> serde_json::Value {
        serde_json::json!({"kind": "cap-hog"})
    }
}

#[test]
fn decisions_are_delayed_logged_and_enforced() {
    let json = r#"{"duration": "600ms", "sample-interval": "100ms",
        "hosts": [{"name": "A", "actuation-delay": "5ms"}, {"name": "B"}],
        "vms": [{"name": "v", "host": "A"}, {"name": "s", "host": "B"}],
        "workloads": [{"kind": "rdma-write", "vm": "v", "peer": "s", "size": "64k", "depth": 1}],
        "controllers": [{"kind": "cap-hog"}]}"#;
    let sc = Scenario::from_json(json).unwrap();
    let factory = |_: &ibcloud_host::scenario::ControllerOptions,
                   _: &[String]|
     -> Result<Box<dyn HostController>, String> {
        Ok(Box::new(ControlLoop::new(CapHog::default(), 2 * MS)))
    };
    let r = World::new(&sc, &factory)
        .unwrap()
        .run(&mut |_, _| {})
        .unwrap();
    // Observed at 30 ms (busy polling: 100 %), released at 32 ms, applied at 37 ms.
    let a = &r.actions[0];
    assert_eq!((a.issued, a.applied), (32 * MS, 37 * MS));
    assert_eq!(
        (a.vm.as_str(), a.action.as_str(), a.ok.as_str()),
        ("v", "cap=25", "")
    );
    // Later observations of a capped VM re-issue the same cap only while > 60 %.
    let late: Vec<_> = r
        .samples
        .iter()
        .filter(|s| s.vm == 0 && s.time >= 300 * MS)
        .collect();
    let mean = late.iter().map(|s| s.cpu_pct).sum::<f64>() / late.len() as f64;
    assert!((mean - 25.0).abs() < 8.0, "capped CPU {mean}");
    let d = &r.controllers[0]["decisions"][0];
    assert_eq!(d["observed"], 30 * MS);
    assert_eq!(d["released"], 32 * MS);
}
