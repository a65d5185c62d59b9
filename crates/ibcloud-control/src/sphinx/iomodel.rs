//! The I/O control model of G §6.4 (Fig. 48, Eq. 8): the latency of one
//! RDMA Send between two hosts as the SM raises the sender's
//! congestion-control delay, for several message sizes, on the packet
//! simulator; and the linear regression Sphinx's resource stage rests on
//! (Eq. 8: ΔCCDelay = 1.28 · ΔLatency, ΔLatency in % — reading A15).
//!
//! One message is in flight at a time (the next is posted long after the
//! previous completes), so a message's latency is its own packets and the
//! delays between them: a message of `P` packets gets `P − 1` gaps of
//! `CCT[delay]`, and a one-packet message none.

use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::Fabric;
use ibcloud_netsim::time::{Time, US};
use ibcloud_netsim::{Action, SimConfig, Simulation, TimedAction, TrafficSpec};
use rayon::prelude::*;
use serde::Serialize;

/// One point of the sweep.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IoPoint {
    /// Message size, bytes.
    pub size: u32,
    /// Delay setting (CCT index).
    pub delay: u16,
    /// Mean message latency, µs.
    pub latency_us: f64,
    /// Increase over the same size at delay 0, %.
    pub increase_pct: f64,
}

/// Runs the sweep: `messages` sends of each size from endpoint `src` to
/// `dst` at each delay (delay 0 is always run: it is the reference). The
/// runs are independent and go on all cores; the result does not depend on
/// how many.
#[allow(clippy::too_many_arguments)]
pub fn io_sweep(
    fabric: &Fabric,
    tables: &ForwardingTables,
    cfg: &SimConfig,
    src: &str,
    dst: &str,
    sizes: &[u32],
    delays: &[u16],
    messages: u32,
) -> Result<Vec<IoPoint>, String> {
    let cc = cfg
        .congestion_control
        .as_ref()
        .ok_or("the I/O model needs congestion control on (the delay is a CCT index)")?;
    if sizes.is_empty() || messages == 0 {
        return Err("the I/O model needs at least one size and one message".into());
    }
    if let Some(&d) = delays.iter().find(|&&d| d > cc.ccti_limit) {
        return Err(format!("delay {d} is above CCTI_Limit {}", cc.ccti_limit));
    }
    let mut all: Vec<u16> = std::iter::once(0).chain(delays.iter().copied()).collect();
    all.sort_unstable();
    all.dedup();
    let cases: Vec<(u32, u16)> = sizes
        .iter()
        .flat_map(|&s| all.iter().map(move |&d| (s, d)))
        .collect();
    let lat: Vec<f64> = cases
        .par_iter()
        .map(|&(size, delay)| one(fabric, tables, cfg, src, dst, size, delay, messages))
        .collect::<Result<_, _>>()?;
    let mut out = Vec::with_capacity(cases.len());
    for (i, &(size, delay)) in cases.iter().enumerate() {
        let base = cases
            .iter()
            .position(|&c| c == (size, 0))
            .map(|j| lat[j])
            .unwrap_or(f64::NAN);
        out.push(IoPoint {
            size,
            delay,
            latency_us: lat[i],
            increase_pct: 100.0 * (lat[i] - base) / base,
        });
    }
    Ok(out)
}

/// Mean latency (µs) of `messages` sends of `size` at `delay`.
#[allow(clippy::too_many_arguments)]
fn one(
    fabric: &Fabric,
    tables: &ForwardingTables,
    cfg: &SimConfig,
    src: &str,
    dst: &str,
    size: u32,
    delay: u16,
    messages: u32,
) -> Result<f64, String> {
    let cc = cfg.congestion_control.as_ref().expect("checked");
    // A generous bound on one message's time: every packet at 1 Gb/s plus
    // its delay, doubled, and 10 µs; the next message comes after it.
    let packets = size.div_ceil(cfg.mtu.max(1)).max(1) as u64;
    let wire = cfg.mtu as u64 + cfg.wire_overhead_bytes as u64;
    let per_packet = wire * 8_000 + cc.ird(delay);
    let gap: Time = 2 * packets * per_packet + 10 * US;
    let gbps = size as f64 * 8.0 / (gap as f64 / 1e3);
    let spec =
        TrafficSpec::parse_compact(&format!("flow:src={src},dst={dst},size={size},gbps={gbps}"))
            .map_err(|e| e.to_string())?;
    let end = gap * (messages as u64 + 1);
    let mut sim = Simulation::new(fabric, tables, cfg, &spec, end).map_err(|e| e.to_string())?;
    sim.schedule(&[TimedAction {
        time: 0,
        action: Action::SetFlowCcDelay {
            flow: 0,
            ccti: delay,
        },
    }])
    .map_err(|e| e.to_string())?;
    let r = sim.run().map_err(|e| e.to_string())?;
    let c = &r.flows[0].counters;
    if c.completed_msgs == 0 {
        return Err(format!("no {size}-byte message completed at delay {delay}"));
    }
    Ok(c.latency_sum as f64 / c.completed_msgs as f64 / 1e6)
}

/// Least-squares line `delay = slope · increase_pct + intercept` through
/// the points of one size (Eq. 8's form), and its R². None with fewer than
/// two distinct increases (e.g. a size the delay does not affect).
pub fn fit_eq8(points: &[IoPoint], size: u32) -> Option<(f64, f64, f64)> {
    let p: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.size == size && p.increase_pct.is_finite())
        .map(|p| (p.increase_pct, p.delay as f64))
        .collect();
    let n = p.len() as f64;
    if p.len() < 2 {
        return None;
    }
    let (mx, my) = (
        p.iter().map(|q| q.0).sum::<f64>() / n,
        p.iter().map(|q| q.1).sum::<f64>() / n,
    );
    let sxx: f64 = p.iter().map(|q| (q.0 - mx).powi(2)).sum();
    let sxy: f64 = p.iter().map(|q| (q.0 - mx) * (q.1 - my)).sum();
    let syy: f64 = p.iter().map(|q| (q.1 - my).powi(2)).sum();
    if sxx <= 1e-12 || syy <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let r2 = sxy * sxy / (sxx * syy);
    Some((slope, my - slope * mx, r2))
}
