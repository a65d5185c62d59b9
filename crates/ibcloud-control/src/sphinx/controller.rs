//! The two-stage controller (G §6.5, Eqs. 9–10) over LP groups.

use super::lp::{error, performance_loss};
use super::{LpGroup, SphinxFlow, SphinxParams, Throttle};
use crate::Time;
use serde::Serialize;

/// A delay setting that changed: push it to the HCAs of `flow`'s endpoints
/// (through the SM, G §6.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SphinxAction {
    /// Step time (ps).
    pub time: Time,
    /// Flow index.
    pub flow: usize,
    /// New congestion-control delay setting (0 = none).
    pub delay: u16,
}

/// One group's state after one step (the figures of G §6.7 are plots of
/// these).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SphinxRecord {
    /// Step time (ps).
    pub time: Time,
    /// Group index.
    pub group: usize,
    /// Performance losses of a and b.
    pub pl_a: f64,
    /// See `pl_a`.
    pub pl_b: f64,
    /// `PL_a / PL_b`, or None when b loses nothing.
    pub lp: Option<f64>,
    /// Target ratio in force.
    pub target: f64,
    /// LP error integrated this step.
    pub error: f64,
    /// Price after the step (Eq. 9).
    pub price: f64,
    /// Price change of the step.
    pub d_price: f64,
    /// Resource after the step (signed with [`Throttle::Both`]).
    pub resource: f64,
    /// Delay settings of a and b.
    pub delay_a: u16,
    /// See `delay_a`.
    pub delay_b: u16,
    /// The resource is at a bound of the actuator's range.
    pub saturated: bool,
}

#[derive(Clone, Debug, Default)]
struct GroupState {
    integral: f64,
    price: f64,
    resource: f64,
}

/// Sphinx's controller. See the module docs.
///
/// ```
/// use ibcloud_control::sphinx::{LpGroup, Sphinx, SphinxFlow, SphinxParams};
/// let flows = vec![
///     SphinxFlow { name: "nectere".into(), base_us: 48.0 },
///     SphinxFlow { name: "memcached".into(), base_us: 187.0 },
/// ];
/// let groups = vec![LpGroup { a: 0, b: 1, target: 1.0 }];
/// let mut s = Sphinx::new(flows, groups, SphinxParams::default()).unwrap();
/// // Table 8's collocated latencies: Nectere loses 6.5× what Memcached does.
/// let acts = s.step(1_000_000_000_000, &[64.1, 196.7]).unwrap();
/// assert_eq!(acts.len(), 1);
/// assert_eq!(acts[0].flow, 1); // Memcached is delayed
/// assert!(acts[0].delay > 0);
/// ```
#[derive(Clone, Debug)]
pub struct Sphinx {
    params: SphinxParams,
    flows: Vec<SphinxFlow>,
    groups: Vec<LpGroup>,
    state: Vec<GroupState>,
    delays: Vec<u16>,
    records: Vec<SphinxRecord>,
    last: Option<Time>,
}

impl Sphinx {
    /// Checks flows, groups and parameters; errors name what is wrong. A
    /// flow belongs to at most one group (two groups would set its delay
    /// twice).
    pub fn new(
        flows: Vec<SphinxFlow>,
        groups: Vec<LpGroup>,
        params: SphinxParams,
    ) -> Result<Self, String> {
        params.validate()?;
        if flows.is_empty() {
            return Err("Sphinx needs at least one flow".into());
        }
        for f in &flows {
            if !f.base_us.is_finite() || f.base_us <= 0.0 {
                return Err(format!(
                    "flow '{}': base latency must be a positive number of µs, got {}",
                    f.name, f.base_us
                ));
            }
        }
        if groups.is_empty() {
            return Err("Sphinx needs at least one LP group".into());
        }
        let mut member = vec![None::<usize>; flows.len()];
        for (g, grp) in groups.iter().enumerate() {
            for i in [grp.a, grp.b] {
                if i >= flows.len() {
                    return Err(format!(
                        "LP group {g} names flow {i} but there are {} flows",
                        flows.len()
                    ));
                }
            }
            if grp.a == grp.b {
                return Err(format!("LP group {g} pairs flow {} with itself", grp.a));
            }
            check_target(g, grp.target)?;
            for i in [grp.a, grp.b] {
                if let Some(other) = member[i] {
                    return Err(format!(
                        "flow '{}' is in LP groups {other} and {g}: a flow belongs to one group",
                        flows[i].name
                    ));
                }
                member[i] = Some(g);
            }
        }
        let n = flows.len();
        Ok(Self {
            state: vec![GroupState::default(); groups.len()],
            params,
            flows,
            groups,
            delays: vec![0; n],
            records: Vec::new(),
            last: None,
        })
    }

    /// One control period: the latencies (µs, one per flow, in flow order)
    /// observed since the last step. Returns the delay settings that
    /// changed.
    pub fn step(&mut self, now: Time, latency_us: &[f64]) -> Result<Vec<SphinxAction>, String> {
        if latency_us.len() != self.flows.len() {
            return Err(format!(
                "{} latencies for {} flows",
                latency_us.len(),
                self.flows.len()
            ));
        }
        if let Some(last) = self.last {
            if now <= last {
                return Err(format!(
                    "step at {now} ps is not after the last step ({last} ps)"
                ));
            }
        }
        let mut pl = Vec::with_capacity(latency_us.len());
        for (f, &l) in self.flows.iter().zip(latency_us) {
            pl.push(performance_loss(l, f.base_us).map_err(|e| format!("flow '{}': {e}", f.name))?);
        }
        self.last = Some(now);
        let p = &self.params;
        let (lo, hi) = match p.throttle {
            Throttle::Second => (0.0, p.max_delay as f64),
            Throttle::Both => (-(p.max_delay as f64), p.max_delay as f64),
        };
        let mut actions = Vec::new();
        for (g, grp) in self.groups.iter().enumerate() {
            let (pl_a, pl_b) = (pl[grp.a], pl[grp.b]);
            let e = error(p.error, pl_a, pl_b, grp.target, p.max_error);
            let st = &mut self.state[g];
            st.integral += e * p.period_s;
            let price = p.k_i * st.integral;
            let d_price = price - st.price;
            st.price = price;
            st.resource = (st.resource + p.k_p * d_price).clamp(lo, hi);
            let r = st.resource;
            let (da, db) = if r >= 0.0 {
                (0, r.round() as u16)
            } else {
                ((-r).round() as u16, 0)
            };
            for (flow, d) in [(grp.a, da), (grp.b, db)] {
                if self.delays[flow] != d {
                    self.delays[flow] = d;
                    actions.push(SphinxAction {
                        time: now,
                        flow,
                        delay: d,
                    });
                }
            }
            self.records.push(SphinxRecord {
                time: now,
                group: g,
                pl_a,
                pl_b,
                lp: (pl_b > 0.0).then(|| pl_a / pl_b),
                target: grp.target,
                error: e,
                price,
                d_price,
                resource: r,
                delay_a: da,
                delay_b: db,
                saturated: r <= lo || r >= hi,
            });
        }
        Ok(actions)
    }

    /// Changes a group's target at run time (G R16, the REST call of G
    /// §6.6): the next step's error uses it.
    pub fn set_target(&mut self, group: usize, target: f64) -> Result<(), String> {
        check_target(group, target)?;
        let g = self
            .groups
            .get_mut(group)
            .ok_or_else(|| format!("no LP group {group}"))?;
        g.target = target;
        Ok(())
    }

    /// Every step's records so far.
    pub fn records(&self) -> &[SphinxRecord] {
        &self.records
    }

    /// Forgets the records so far (a long-running agent logs each step's
    /// records and then clears them; the control state is untouched).
    pub fn clear_records(&mut self) {
        self.records.clear();
    }

    /// The current delay setting of each flow.
    pub fn delays(&self) -> &[u16] {
        &self.delays
    }

    /// The flows.
    pub fn flows(&self) -> &[SphinxFlow] {
        &self.flows
    }
}

fn check_target(group: usize, target: f64) -> Result<(), String> {
    if !target.is_finite() || target <= 0.0 {
        return Err(format!(
            "LP group {group}: target ratio must be a positive number, got {target}"
        ));
    }
    Ok(())
}
