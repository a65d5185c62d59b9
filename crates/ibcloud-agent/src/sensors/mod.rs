//! The agent's sensors: InfiniBand counters ([`ib`]), application latency
//! reports ([`latency`]), a scripted feed ([`replay`]) and CPU % from the
//! cgroup's usage ([`CpuMeter`]).

pub mod ib;
pub mod latency;
pub mod replay;

use crate::cgroup::Cgroup;

/// CPU % of one cgroup over each interval, from its cumulative usage.
#[derive(Clone, Debug, Default)]
pub struct CpuMeter {
    last: Option<(u64, std::time::Instant)>,
}

impl CpuMeter {
    /// Per cent of one CPU used since the previous call (0 on the first).
    pub fn sample(&mut self, cg: &Cgroup) -> Result<f64, String> {
        let usage = cg.usage_ns()?;
        let now = std::time::Instant::now();
        let pct = match self.last {
            Some((u, t)) => {
                let dt = now.duration_since(t).as_nanos() as f64;
                if dt > 0.0 {
                    usage.saturating_sub(u) as f64 * 100.0 / dt
                } else {
                    0.0
                }
            }
            None => 0.0,
        };
        self.last = Some((usage, now));
        Ok(pct)
    }
}
