//! Workload specifications and the Workload Configurator (G §2.1–2.2,
//! Algorithm 4): which workloads' SLAs DRX will meet (SS) and which may be
//! squeezed to their minimum (SV).
//!
//! Units: every I/O quantity is in **CQEs per second** (RDMA completions,
//! G §2.5); link capacities too.
//!
//! The seed's quirks are options (G §9):
//! - A1 [`Eviction`]: as written, an evicted workload's `g` leaves G but its
//!   `IOmin` never joins IO; repaired, `IO += IOmin_i` on eviction.
//! - A2 [`Comparison`]: Algorithm 4 evicts while `G > L − IO` (so equality
//!   is accepted); Eq. 2 asks for strict `G < L − IO`.
//! - A3 [`Capacity`]: L = the sum of every link (the literal reading), or a
//!   check per link. Per link, a workload's `g` and `IOmin` are split evenly
//!   over the links its VMs use (the host ports of its VMs: its VMs share
//!   its I/O evenly — our assumption, the seed says nothing).

use serde::{Deserialize, Serialize};

/// Algorithm 4's tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Priority {
    /// High priority: starts in SS.
    High,
    /// Low priority: starts in SV.
    Low,
}

/// W_i = (g, IOmin, α, HP|LP), plus the links its VMs use (A3 per link).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Name (the VME's).
    pub name: String,
    /// I/O guarantee g(W_i), CQEs/s.
    pub g: f64,
    /// Minimum progress IOmin(W_i), CQEs/s.
    pub io_min: f64,
    /// Weight/priority α_i ∈ (0, 1].
    pub alpha: f64,
    /// HP or LP.
    pub priority: Priority,
    /// Indices of the links (host ports) its VMs use.
    pub links: Vec<usize>,
}

/// A1: what an eviction does to IO.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Eviction {
    /// As the seed writes it: IO unchanged.
    #[default]
    AsWritten,
    /// IO += IOmin of the evicted workload.
    Repaired,
}

/// A2: the satisfiability test.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Comparison {
    /// Algorithm 4: evict while `G > L − IO` (equality accepted).
    #[default]
    Algorithm,
    /// Eq. 2: SS fits only if `G < L − IO`.
    Strict,
}

/// A3: what L is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Capacity {
    /// L = Σ of every link's capacity (literal).
    #[default]
    Sum,
    /// Every link checked on its own.
    PerLink,
}

/// The configurator's options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ConfiguratorOptions {
    /// A1.
    pub eviction: Eviction,
    /// A2.
    pub comparison: Comparison,
    /// A3.
    pub capacity: Capacity,
}

/// Algorithm 4's answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Configuration {
    /// Workloads whose SLAs are met (indices, ascending).
    pub ss: Vec<usize>,
    /// Workloads kept at or above IOmin (indices, ascending).
    pub sv: Vec<usize>,
    /// HP workloads moved to SV, in the order evicted.
    pub evicted: Vec<usize>,
    /// Whether Σ IOmin of the final SV (every member counted, whatever the
    /// eviction mode) plus Σ g of SS fits on every checked capacity. As
    /// written (A1) this can be false although the algorithm stopped.
    pub fits: bool,
}

fn check_spec(w: &Workload) -> Result<(), String> {
    let n = &w.name;
    if !w.g.is_finite() || w.g < 0.0 {
        return Err(format!(
            "workload '{n}': g must be a finite number ≥ 0 CQEs/s, got {}",
            w.g
        ));
    }
    if !w.io_min.is_finite() || w.io_min < 0.0 {
        return Err(format!(
            "workload '{n}': IOmin must be a finite number ≥ 0 CQEs/s, got {}",
            w.io_min
        ));
    }
    if w.io_min > w.g {
        return Err(format!(
            "workload '{n}': IOmin ({}) exceeds its guarantee g ({})",
            w.io_min, w.g
        ));
    }
    if !(w.alpha.is_finite() && w.alpha > 0.0 && w.alpha <= 1.0) {
        return Err(format!(
            "workload '{n}': alpha must lie in (0, 1], got {}",
            w.alpha
        ));
    }
    Ok(())
}

/// One checked resource: a capacity and each workload's share of it.
struct Resource {
    name: String,
    cap: f64,
    share: Vec<f64>,
}

fn resources(ws: &[Workload], links: &[f64], mode: Capacity) -> Result<Vec<Resource>, String> {
    for (l, &c) in links.iter().enumerate() {
        if !c.is_finite() || c <= 0.0 {
            return Err(format!(
                "link {l}: capacity must be a finite number > 0 CQEs/s, got {c}"
            ));
        }
    }
    if links.is_empty() {
        return Err("no links: the configurator needs at least one link capacity".into());
    }
    for w in ws {
        if let Some(&l) = w.links.iter().find(|&&l| l >= links.len()) {
            return Err(format!(
                "workload '{}': link {l} does not exist ({} links)",
                w.name,
                links.len()
            ));
        }
    }
    Ok(match mode {
        Capacity::Sum => vec![Resource {
            name: "all links".into(),
            cap: links.iter().sum(),
            share: vec![1.0; ws.len()],
        }],
        Capacity::PerLink => {
            if let Some(w) = ws.iter().find(|w| w.links.is_empty()) {
                return Err(format!(
                    "workload '{}': uses no link (a per-link check needs the links its VMs use)",
                    w.name
                ));
            }
            (0..links.len())
                .map(|l| Resource {
                    name: format!("link {l}"),
                    cap: links[l],
                    share: ws
                        .iter()
                        .map(|w| {
                            let mut ls = w.links.clone();
                            ls.sort_unstable();
                            ls.dedup();
                            if ls.contains(&l) {
                                1.0 / ls.len() as f64
                            } else {
                                0.0
                            }
                        })
                        .collect(),
                })
                .collect()
        }
    })
}

/// Algorithm 4 (G §2.2) on `workloads` over links of capacity `links`
/// (CQEs/s each). Errors name the workload and the reason: a bad spec, or
/// minimums that no choice of SS can fit.
///
/// ```
/// use ibcloud_control::drx::workload::*;
/// let w = |name: &str, g, io_min, priority| Workload {
///     name: name.into(), g, io_min, alpha: 1.0, priority, links: vec![0],
/// };
/// let ws = [w("a", 30.0, 10.0, Priority::High), w("b", 60.0, 20.0, Priority::High),
///           w("lp", 50.0, 20.0, Priority::Low)];
/// // L − IO = 100 − 20 = 80 < 90: the smaller HP workload `a` is evicted.
/// let c = configure(&ws, &[100.0], ConfiguratorOptions::default()).unwrap();
/// assert_eq!((c.ss, c.sv, c.evicted), (vec![1], vec![0, 2], vec![0]));
/// ```
pub fn configure(
    workloads: &[Workload],
    links: &[f64],
    opts: ConfiguratorOptions,
) -> Result<Configuration, String> {
    let mut names = std::collections::BTreeSet::new();
    for w in workloads {
        check_spec(w)?;
        if !names.insert(w.name.as_str()) {
            return Err(format!("workload '{}': named twice", w.name));
        }
    }
    let res = resources(workloads, links, opts.capacity)?;
    let mut in_ss: Vec<bool> = workloads
        .iter()
        .map(|w| w.priority == Priority::High)
        .collect();
    // Per resource: G (Σ g of SS) and IO (Σ IOmin of SV, as the mode counts).
    let load = |sel: &dyn Fn(usize) -> bool, f: &dyn Fn(&Workload) -> f64, r: &Resource| {
        (0..workloads.len())
            .filter(|&i| sel(i))
            .map(|i| f(&workloads[i]) * r.share[i])
            .sum::<f64>()
    };
    let mut g: Vec<f64> = res
        .iter()
        .map(|r| load(&|i| in_ss[i], &|w| w.g, r))
        .collect();
    let mut io: Vec<f64> = res
        .iter()
        .map(|r| load(&|i| !in_ss[i], &|w| w.io_min, r))
        .collect();
    for (k, r) in res.iter().enumerate() {
        if io[k] > r.cap {
            let who: Vec<&str> = (0..workloads.len())
                .filter(|&i| !in_ss[i] && r.share[i] > 0.0 && workloads[i].io_min > 0.0)
                .map(|i| workloads[i].name.as_str())
                .collect();
            return Err(format!(
                "unsatisfiable: the minimums of the low-priority workloads {} sum to {} CQEs/s on {}, above its capacity {}",
                who.join(", "),
                io[k],
                r.name,
                r.cap
            ));
        }
    }
    let unsat = |g: &[f64], io: &[f64]| {
        res.iter().enumerate().any(|(k, r)| match opts.comparison {
            Comparison::Algorithm => g[k] > r.cap - io[k],
            Comparison::Strict => g[k] >= r.cap - io[k],
        })
    };
    let mut order: Vec<usize> = (0..workloads.len()).filter(|&i| in_ss[i]).collect();
    // Ascending g; ties in input order (stable sort).
    order.sort_by(|&a, &b| workloads[a].g.total_cmp(&workloads[b].g));
    let mut evicted = Vec::new();
    for i in order {
        if !unsat(&g, &io) {
            break;
        }
        in_ss[i] = false;
        evicted.push(i);
        for (k, r) in res.iter().enumerate() {
            g[k] -= workloads[i].g * r.share[i];
            if opts.eviction == Eviction::Repaired {
                io[k] += workloads[i].io_min * r.share[i];
            }
        }
    }
    // Honest fit test: every SV minimum counted.
    let fits = res.iter().all(|r| {
        let gg = load(&|i| in_ss[i], &|w| w.g, r);
        let ii = load(&|i| !in_ss[i], &|w| w.io_min, r);
        gg + ii <= r.cap
    });
    if opts.eviction == Eviction::Repaired {
        for (k, r) in res.iter().enumerate() {
            if io[k] > r.cap {
                let who: Vec<&str> = evicted
                    .iter()
                    .filter(|&&i| r.share[i] > 0.0)
                    .map(|&i| workloads[i].name.as_str())
                    .collect();
                return Err(format!(
                    "unsatisfiable: after evicting {} the minimums sum to {} CQEs/s on {}, above its capacity {}",
                    who.join(", "),
                    io[k],
                    r.name,
                    r.cap
                ));
            }
        }
    }
    Ok(Configuration {
        ss: (0..workloads.len()).filter(|&i| in_ss[i]).collect(),
        sv: (0..workloads.len()).filter(|&i| !in_ss[i]).collect(),
        evicted,
        fits,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(name: &str, g: f64, io_min: f64, p: Priority, links: &[usize]) -> Workload {
        Workload {
            name: name.into(),
            g,
            io_min,
            alpha: 1.0,
            priority: p,
            links: links.to_vec(),
        }
    }

    #[test]
    fn a1_as_written_and_repaired_differ() {
        // L = 100, SV minimum 10. HP: a (g 40, min 35), b (g 70, min 5).
        // G = 110 > 90: evict a. As written: G = 70 ≤ 90, stop, SS = {b};
        // but minimums 10 + 35 + g_b 70 = 115 > 100 (fits = false).
        // Repaired: IO = 45, 70 > 55: evict b too; SS = {}.
        let ws = [
            w("a", 40.0, 35.0, Priority::High, &[0]),
            w("b", 70.0, 5.0, Priority::High, &[0]),
            w("lp", 20.0, 10.0, Priority::Low, &[0]),
        ];
        let mut o = ConfiguratorOptions::default();
        let c = configure(&ws, &[100.0], o).unwrap();
        assert_eq!(
            (c.ss.clone(), c.evicted.clone(), c.fits),
            (vec![1], vec![0], false)
        );
        o.eviction = Eviction::Repaired;
        let c = configure(&ws, &[100.0], o).unwrap();
        assert_eq!((c.ss, c.evicted, c.fits), (vec![], vec![0, 1], true));
    }

    #[test]
    fn a2_equality() {
        // G = 80 = L − IO = 100 − 20: the algorithm keeps it, Eq. 2 does not.
        let ws = [
            w("hp", 80.0, 10.0, Priority::High, &[0]),
            w("lp", 50.0, 20.0, Priority::Low, &[0]),
        ];
        let mut o = ConfiguratorOptions::default();
        assert_eq!(configure(&ws, &[100.0], o).unwrap().ss, vec![0]);
        o.comparison = Comparison::Strict;
        let c = configure(&ws, &[100.0], o).unwrap();
        assert_eq!((c.ss, c.sv), (vec![], vec![0, 1]));
    }

    #[test]
    fn a3_per_link_catches_a_hot_link() {
        // Sum: 2 links of 100 = 200 ≥ 150 + 0. Per link: hp1 puts 120 on
        // link 0 alone → evicted; hp2 (30 over both links) stays.
        let ws = [
            w("hp1", 120.0, 10.0, Priority::High, &[0]),
            w("hp2", 30.0, 10.0, Priority::High, &[0, 1]),
        ];
        let mut o = ConfiguratorOptions::default();
        assert_eq!(configure(&ws, &[100.0, 100.0], o).unwrap().ss, vec![0, 1]);
        o.capacity = Capacity::PerLink;
        // Ascending g: hp2 (30) is evicted first (the rule), then hp1 still
        // overloads link 0 and goes too.
        let c = configure(&ws, &[100.0, 100.0], o).unwrap();
        assert_eq!(c.evicted, vec![1, 0]);
        assert!(c.ss.is_empty());
    }

    #[test]
    fn bad_input_names_the_workload() {
        let o = ConfiguratorOptions::default();
        let e = configure(&[w("x", -1.0, 0.0, Priority::High, &[0])], &[1.0], o).unwrap_err();
        assert!(e.contains("'x'") && e.contains("g must be"), "{e}");
        let e = configure(&[w("x", f64::NAN, 0.0, Priority::High, &[0])], &[1.0], o).unwrap_err();
        assert!(e.contains("'x'"), "{e}");
        let e = configure(&[w("y", 5.0, 6.0, Priority::High, &[0])], &[10.0], o).unwrap_err();
        assert!(e.contains("'y'") && e.contains("exceeds"), "{e}");
        let mut bad = w("z", 5.0, 1.0, Priority::High, &[0]);
        bad.alpha = 0.0;
        let e = configure(&[bad], &[10.0], o).unwrap_err();
        assert!(e.contains("'z'") && e.contains("alpha"), "{e}");
        let e = configure(
            &[
                w("l1", 80.0, 60.0, Priority::Low, &[0]),
                w("l2", 80.0, 50.0, Priority::Low, &[0]),
            ],
            &[100.0],
            o,
        )
        .unwrap_err();
        assert!(e.contains("l1, l2") && e.contains("unsatisfiable"), "{e}");
        let e = configure(&[w("q", 5.0, 1.0, Priority::High, &[3])], &[10.0], o).unwrap_err();
        assert!(e.contains("'q'") && e.contains("link 3"), "{e}");
        let e = configure(
            &[w("q", 5.0, 1.0, Priority::High, &[0])],
            &[f64::INFINITY],
            o,
        )
        .unwrap_err();
        assert!(e.contains("link 0"), "{e}");
    }

    #[test]
    fn repaired_eviction_that_overflows_is_an_error() {
        let ws = [
            w("big", 90.0, 60.0, Priority::High, &[0]),
            w("lp", 50.0, 50.0, Priority::Low, &[0]),
        ];
        let o = ConfiguratorOptions {
            eviction: Eviction::Repaired,
            ..Default::default()
        };
        let e = configure(&ws, &[100.0], o).unwrap_err();
        assert!(e.contains("after evicting big"), "{e}");
    }
}
