//! Runs an analysis: runs × levels cut into jobs, jobs grouped in chunks of a
//! size fixed by the inputs alone, chunks computed in parallel and merged in
//! chunk order. Every sum is therefore taken in the same order whatever the
//! number of threads, and a seed gives bit-identical results.

use crate::endpoints::Endpoints;
use crate::error::AnalysisError;
use crate::metrics::{DelayChain, Done, Histogram, LevelSums, Load, Worker, MAX_EXAMPLES};
use crate::order::{run_rng, RankOrder};
use crate::paths::{PathMode, Paths};
use crate::patterns::{Flow, Pattern};
use crate::result::{Analysis, BrokenFlow, LinkLoad, RunStats};
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Fabric, NodeId, PortRef};
use rayon::prelude::*;

/// Flows per job (levels are grouped until a job holds about this many).
const FLOWS_PER_JOB: usize = 1 << 16;

/// How to run an analysis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnalysisOptions {
    /// Number of runs, each with its own node order (and draws of `rand`).
    pub runs: u64,
    /// Seed of the run streams.
    pub seed: u64,
    /// Shuffle the endpoints in every run (ORCS does; off: ranks are the
    /// endpoints in the given order).
    pub shuffle: bool,
    /// Endpoint positions that take ranks 0, 1, … in this order in every
    /// run, ahead of the shuffled rest (ORCS's node-order file).
    pub order: Vec<usize>,
    /// How paths are found.
    pub path_mode: PathMode,
    /// Threads (default: rayon's global pool).
    pub threads: Option<usize>,
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        Self {
            runs: 1,
            seed: 0,
            shuffle: true,
            order: Vec::new(),
            path_mode: PathMode::default(),
            threads: None,
        }
    }
}

/// Analyses `pattern` over `endpoints` through `tables`.
pub fn analyze(
    fabric: &Fabric,
    tables: &ForwardingTables,
    endpoints: &Endpoints,
    pattern: &Pattern,
    options: &AnalysisOptions,
) -> Result<Analysis, AnalysisError> {
    let paths = Paths::new(fabric, tables, endpoints, options.path_mode)?;
    analyze_with_paths(fabric, &paths, pattern, options, &mut |_, _| true)
}

/// Analyses with paths prepared once (to run several patterns on one table
/// set). `progress(done, total)` is called from the calling thread as jobs
/// finish; returning false cancels.
pub fn analyze_with_paths(
    fabric: &Fabric,
    paths: &Paths<'_>,
    pattern: &Pattern,
    options: &AnalysisOptions,
    progress: &mut (dyn FnMut(u64, u64) -> bool + Send),
) -> Result<Analysis, AnalysisError> {
    let n = paths.len();
    pattern.check(n)?;
    if options.runs == 0 {
        return Err(AnalysisError::BadOptions(
            "the number of runs must be at least 1".into(),
        ));
    }
    let order = if pattern.is_matrix() {
        RankOrder::identity(n)
    } else {
        RankOrder::new(n, &options.order, options.shuffle)?
    };
    let plan = Plan::new(pattern, n, options.runs);
    let job = Job {
        paths,
        pattern,
        order: &order,
        plan: &plan,
        seed: options.seed,
    };
    let go = |progress: &mut (dyn FnMut(u64, u64) -> bool + Send)| {
        if pattern.is_weighted() {
            execute::<f64>(&job, progress)
        } else {
            execute::<u32>(&job, progress)
        }
    };
    let merged = match options.threads {
        Some(t) => rayon::ThreadPoolBuilder::new()
            .num_threads(t.max(1))
            .build()
            .map_err(|e| AnalysisError::BadOptions(format!("cannot start {t} threads: {e}")))?
            .install(|| go(progress)),
        None => go(progress),
    }?;
    Ok(merged.finish(fabric, pattern, n, options.seed, paths.is_precomputed()))
}

/// How runs are cut into jobs and jobs into chunks.
#[derive(Debug)]
struct Plan {
    runs: u64,
    levels: usize,
    levels_per_job: usize,
    jobs_per_run: usize,
    chunk: usize,
}

impl Plan {
    fn new(pattern: &Pattern, n: usize, runs: u64) -> Self {
        let mut rng = run_rng(0, 0);
        let levels = pattern.instantiate(n, &mut rng).num_levels();
        let levels_per_job = (FLOWS_PER_JOB / n.max(1)).max(1);
        let jobs_per_run = levels.div_ceil(levels_per_job).max(1);
        let jobs = runs as usize * jobs_per_run;
        let chunk = jobs.div_ceil(64).max(16);
        Self {
            runs,
            levels,
            levels_per_job,
            jobs_per_run,
            chunk,
        }
    }

    fn jobs(&self) -> usize {
        self.runs as usize * self.jobs_per_run
    }
}

struct Job<'a, 'p> {
    paths: &'a Paths<'p>,
    pattern: &'a Pattern,
    order: &'a RankOrder,
    plan: &'a Plan,
    seed: u64,
}

/// What one job (a run's level range) produced.
struct JobOut {
    run: u64,
    last_of_run: bool,
    sums: Vec<LevelSums>,
    /// The run's delay when the job covered the whole run.
    delay: Option<f64>,
    /// Otherwise the arrived flows per level, for the chain across jobs.
    done: Vec<Vec<Done>>,
}

struct ChunkOut {
    jobs: Vec<JobOut>,
    link_total: Vec<f64>,
    link_max: Vec<f64>,
    hist: Histogram,
    broken: Vec<BrokenFlow>,
}

fn run_chunk<L: Load>(job: &Job<'_, '_>, range: std::ops::Range<usize>) -> ChunkOut {
    let plan = job.plan;
    let n = job.paths.len();
    let mut worker = Worker::<L>::new(job.paths.num_links());
    let mut broken = Vec::new();
    let mut flows: Vec<Flow> = Vec::new();
    let mut done: Vec<Done> = Vec::new();
    let mut jobs = Vec::with_capacity(range.len());
    let mut chain = DelayChain::new(if plan.jobs_per_run == 1 { n } else { 0 });
    for j in range {
        let run = (j / plan.jobs_per_run) as u64;
        let part = j % plan.jobs_per_run;
        let first = part * plan.levels_per_job;
        let last = (first + plan.levels_per_job).min(plan.levels);
        let whole = plan.jobs_per_run == 1;
        let mut rng = run_rng(job.seed, run);
        let order = job.order.draw(&mut rng);
        let instance = job.pattern.instantiate(n, &mut rng);
        chain.reset();
        let mut out = JobOut {
            run,
            last_of_run: part + 1 == plan.jobs_per_run,
            sums: Vec::with_capacity(last.saturating_sub(first)),
            delay: None,
            done: Vec::new(),
        };
        for level in first..last {
            flows.clear();
            instance.level(level, &mut flows);
            done.clear();
            out.sums.push(worker.level(
                job.paths,
                &order,
                &flows,
                run,
                level as u32,
                &mut done,
                &mut broken,
            ));
            broken.truncate(MAX_EXAMPLES);
            if whole {
                chain.level(&done);
            } else {
                out.done.push(done.clone());
            }
        }
        out.delay = whole.then_some(chain.delay);
        jobs.push(out);
    }
    ChunkOut {
        jobs,
        link_total: worker.link_total,
        link_max: worker.link_max,
        hist: worker.hist,
        broken,
    }
}

fn execute<L: Load>(
    job: &Job<'_, '_>,
    progress: &mut (dyn FnMut(u64, u64) -> bool + Send),
) -> Result<Merged, AnalysisError> {
    let plan = job.plan;
    let total = plan.jobs();
    let chunks: Vec<std::ops::Range<usize>> = (0..total)
        .step_by(plan.chunk)
        .map(|s| s..(s + plan.chunk).min(total))
        .collect();
    let wave = rayon::current_num_threads() * 2;
    let mut merged = Merged::new(job.paths.num_links(), job.paths.len());
    let mut finished = 0u64;
    for group in chunks.chunks(wave) {
        let outs: Vec<ChunkOut> = group
            .par_iter()
            .map(|r| run_chunk::<L>(job, r.clone()))
            .collect();
        for (out, r) in outs.into_iter().zip(group) {
            merged.absorb(out);
            finished += r.len() as u64;
        }
        if !progress(finished, total as u64) {
            return Err(AnalysisError::BadOptions("cancelled".into()));
        }
    }
    Ok(merged)
}

/// Results merged in job order.
struct Merged {
    runs: Vec<RunStats>,
    current: Option<RunAcc>,
    ranks: usize,
    link_total: Vec<f64>,
    link_max: Vec<f64>,
    hist: Histogram,
    broken: Vec<BrokenFlow>,
    broken_flows: u64,
}

struct RunAcc {
    stats: RunStats,
    inv_cong: f64,
    chain: Option<DelayChain>,
}

impl Merged {
    fn new(links: usize, ranks: usize) -> Self {
        Self {
            runs: Vec::new(),
            current: None,
            ranks,
            link_total: vec![0.0; links],
            link_max: vec![0.0; links],
            hist: Histogram::default(),
            broken: Vec::new(),
            broken_flows: 0,
        }
    }

    fn absorb(&mut self, out: ChunkOut) {
        for (t, x) in self.link_total.iter_mut().zip(&out.link_total) {
            *t += x;
        }
        for (m, x) in self.link_max.iter_mut().zip(&out.link_max) {
            if *x > *m {
                *m = *x;
            }
        }
        self.hist.merge(&out.hist);
        let room = MAX_EXAMPLES.saturating_sub(self.broken.len());
        self.broken.extend(out.broken.into_iter().take(room));
        for job in out.jobs {
            let ranks = self.ranks;
            let acc = self.current.get_or_insert_with(|| RunAcc {
                stats: RunStats {
                    run: job.run,
                    levels: 0,
                    flows: 0,
                    broken: 0,
                    acc_band: f64::NAN,
                    max_cong: 0.0,
                    sum_max_cong: 0.0,
                    dep_max_delay: 0.0,
                },
                inv_cong: 0.0,
                chain: job.delay.is_none().then(|| DelayChain::new(ranks)),
            });
            for s in &job.sums {
                acc.stats.levels += 1;
                acc.stats.flows += s.flows;
                acc.stats.broken += s.broken;
                acc.inv_cong += s.inv_cong;
                acc.stats.max_cong = acc.stats.max_cong.max(s.max_cong);
                acc.stats.sum_max_cong += s.max_load;
            }
            if let Some(chain) = acc.chain.as_mut() {
                for level in &job.done {
                    chain.level(level);
                }
            }
            if job.last_of_run {
                let mut acc = self.current.take().expect("a run in progress");
                acc.stats.dep_max_delay = job.delay.or(acc.chain.map(|c| c.delay)).unwrap_or(0.0);
                if acc.stats.flows > 0 {
                    acc.stats.acc_band = acc.inv_cong / acc.stats.flows as f64;
                }
                self.broken_flows += acc.stats.broken;
                self.runs.push(acc.stats);
            }
        }
    }

    fn finish(
        self,
        fabric: &Fabric,
        pattern: &Pattern,
        endpoints: usize,
        seed: u64,
        precomputed: bool,
    ) -> Analysis {
        let mut links = Vec::new();
        for (id, _) in fabric.iter_nodes() {
            for (p, port) in fabric.ports(id).iter().enumerate() {
                let me = PortRef::new(NodeId(id.0), p as u8);
                let Some(i) = fabric.port_index(me) else {
                    continue;
                };
                if self.link_total[i] > 0.0 {
                    if let Some(remote) = port.remote {
                        links.push(LinkLoad {
                            port: me,
                            remote,
                            total: self.link_total[i],
                            max: self.link_max[i],
                        });
                    }
                }
            }
        }
        Analysis {
            pattern: pattern.name(),
            endpoints,
            seed,
            runs: self.runs,
            hist_max_cong: self.hist.into_sorted(),
            links,
            broken: self.broken,
            broken_flows: self.broken_flows,
            precomputed_paths: precomputed,
        }
    }
}

#[cfg(test)]
mod tests;
