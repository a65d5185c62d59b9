//! `ibcloud-cloud`: the demand matrix and consolidation jobs of Paper VI
//! (workload delay). Used by the `ibcloud.delay` package, which validates
//! traces and parameters first; errors that still reach this layer become
//! `ValueError`, a panic `InternalError`.

use ibcloud_cloud::{
    run_jobs, ConsolidationError, Criterion, DelayUnit, Demand, Fit, Job, PackSpec, Window,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::Arc;

/// Adds the classes of this file to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDemandMatrix>()
}

fn value_error(e: ConsolidationError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Runs `work` with the GIL released; a panic becomes `InternalError`.
fn detached<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> Result<T, ConsolidationError> + Send,
) -> PyResult<T> {
    crate::error::detached_map(py, work, value_error)
}

/// One job as Python passes it: pack segments, evaluation segments, cores,
/// threshold (fraction), accepted delay over the packing window (None: pack
/// by utilisation), fit rule, delay unit, whether utilisation packings also
/// compute their packing-window delay.
type JobTuple = (
    Vec<(usize, usize)>,
    Vec<(usize, usize)>,
    f64,
    f64,
    Option<f64>,
    String,
    String,
    bool,
);

/// Per host: total delay, max delay, intervals, delayed intervals, mean delay
/// when delayed, mean demand (cores), delayed share of the demand volume.
type StatsTuple = (f64, f64, usize, usize, f64, f64, f64);

/// Per job: hosts (VM indices in placement order), packing loads (cores),
/// packing delays, evaluation statistics per host.
type ResultTuple = (Vec<Vec<usize>>, Vec<f64>, Vec<f64>, Vec<StatsTuple>);

/// CPU demand of every VM in cores, row-major float64 (little-endian bytes),
/// `n_vms × n_samples`, sampled every `interval_minutes`.
#[pyclass(name = "DemandMatrix", module = "ibcloud._native", frozen)]
#[derive(Debug)]
pub struct PyDemandMatrix {
    inner: Arc<Demand>,
}

#[pymethods]
impl PyDemandMatrix {
    #[new]
    fn new(
        py: Python<'_>,
        data: &[u8],
        n_vms: usize,
        n_samples: usize,
        interval_minutes: f64,
    ) -> PyResult<Self> {
        if !data.len().is_multiple_of(8) {
            return Err(PyValueError::new_err(format!(
                "{} bytes is not a whole number of float64 values",
                data.len()
            )));
        }
        let values: Vec<f64> = data
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        let demand = detached(py, move || {
            Demand::new(n_vms, n_samples, interval_minutes, values)
        })?;
        Ok(Self {
            inner: Arc::new(demand),
        })
    }

    /// Number of VMs.
    #[getter]
    fn n_vms(&self) -> usize {
        self.inner.n_vms()
    }

    /// Samples per VM.
    #[getter]
    fn n_samples(&self) -> usize {
        self.inner.n_samples()
    }

    /// Sampling interval in minutes.
    #[getter]
    fn interval_minutes(&self) -> f64 {
        self.inner.interval_minutes()
    }

    /// Packs and evaluates every job, in parallel; results in job order.
    fn run_jobs(&self, py: Python<'_>, jobs: Vec<JobTuple>) -> PyResult<Vec<ResultTuple>> {
        let demand = Arc::clone(&self.inner);
        detached(py, move || {
            let jobs = jobs
                .into_iter()
                .map(
                    |(
                        pack_segments,
                        eval_segments,
                        cores,
                        threshold,
                        limit,
                        fit,
                        unit,
                        packing_delays,
                    )| {
                        let unit = DelayUnit::from_name(&unit)?;
                        let criterion = match limit {
                            None => Criterion::Utilisation,
                            Some(limit) => Criterion::Delay { limit },
                        };
                        let spec = PackSpec {
                            cores,
                            threshold,
                            criterion,
                            fit: Fit::from_name(&fit)?,
                            unit,
                        };
                        let window = |s: Vec<(usize, usize)>| {
                            Window::new(&demand, s.into_iter().map(|(a, b)| a..b).collect())
                        };
                        Ok(Job {
                            pack_window: window(pack_segments)?,
                            eval_window: window(eval_segments)?,
                            spec,
                            eval_unit: unit,
                            packing_delays,
                        })
                    },
                )
                .collect::<Result<Vec<_>, ConsolidationError>>()?;
            let results = run_jobs(&demand, &jobs)?;
            Ok(results
                .into_iter()
                .map(|r| {
                    let stats = r
                        .stats
                        .iter()
                        .map(|s| {
                            (
                                s.total_delay,
                                s.max_delay,
                                s.intervals,
                                s.delayed_intervals,
                                s.mean_delay_when_delayed,
                                s.mean_demand,
                                s.delayed_demand_share,
                            )
                        })
                        .collect();
                    let loads = r.packing.bins.iter().map(|b| b.load).collect();
                    let delays = r.packing.bins.iter().map(|b| b.packing_delay).collect();
                    (r.packing.members(), loads, delays, stats)
                })
                .collect())
        })
    }
}
