//! XenStat-like CPU accounting: per-VM CPU % of one PCPU over the interval
//! since the previous reading, from the cumulative run times in the view.

use crate::Time;
use ibcloud_host::View;

/// Remembers the previous reading; [`CpuMeter::read`] returns CPU % per VM.
#[derive(Clone, Debug, Default)]
pub struct CpuMeter {
    last_time: Time,
    last_cpu: Vec<Time>,
}

impl CpuMeter {
    /// A meter whose first interval starts at time 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// CPU % of one PCPU per VM since the previous call (or time 0).
    pub fn read(&mut self, view: &View<'_>) -> Vec<f64> {
        self.last_cpu.resize(view.vms.len(), 0);
        let dt = view.now.saturating_sub(self.last_time).max(1) as f64;
        self.last_time = view.now;
        view.vms
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let d = v.cpu_time.saturating_sub(self.last_cpu[i]);
                self.last_cpu[i] = v.cpu_time;
                d as f64 / dt * 100.0
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibcloud_host::cq::CqRing;
    use ibcloud_host::VmView;

    #[test]
    fn percent_per_interval() {
        let ring = CqRing::new(4);
        let mut m = CpuMeter::new();
        let vv = |cpu| {
            [VmView {
                name: "a",
                host: "h",
                cq: &ring,
                cpu_time: cpu,
                cap: 0,
                running: true,
                latencies: &[],
            }]
        };
        let a = vv(5_000);
        assert_eq!(m.read(&View::new(10_000, &a)), vec![50.0]);
        let b = vv(5_000 + 2_500);
        assert_eq!(m.read(&View::new(20_000, &b)), vec![25.0]);
    }
}
