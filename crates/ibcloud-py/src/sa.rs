//! Subnet administration (`ibcloud-sa`): PathRecord resolution on a routed
//! fabric and the SA MAD wire codec the flooder uses. Errors become `SaError`.

use crate::exceptions as exc;
use crate::lft::PyForwardingTables;
use crate::routing::PyPathSls;
use ibcloud_sa::resolve::{MtuMap, Resolver};
use ibcloud_sa::wire::{SaMad, SaMadRepr, MAD_LEN};
use ibcloud_sa::SaError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SaError", m.py().get_type::<exc::SaError>())?;
    m.add_function(wrap_pyfunction!(sa_resolve, m)?)?;
    m.add_function(wrap_pyfunction!(sa_get_path_mad, m)?)?;
    m.add_function(wrap_pyfunction!(sa_parse_mad, m)?)?;
    m.add_function(wrap_pyfunction!(sa_path_record_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(sa_endnode_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(sa_endnode, m)?)?;
    m.add_function(wrap_pyfunction!(sa_service_paper, m)?)?;
    m.add_function(wrap_pyfunction!(sa_service_experiment, m)?)?;
    m.add_function(wrap_pyfunction!(sa_window_throughput, m)?)?;
    Ok(())
}

fn err(e: SaError) -> PyErr {
    exc::SaError::new_err(e.to_string())
}

/// One resolved pair: (sl, mtu code, rate code, forward hops, reverse hops).
type Answer = (u8, u8, u8, u32, u32);

/// Resolves (slid, dlid) pairs on `tables`' fabric: per pair either the
/// answer tuple or the reason it has none.
#[pyfunction]
#[pyo3(signature = (tables, pairs, path_sls=None, mtu=4))]
pub(crate) fn sa_resolve(
    py: Python<'_>,
    tables: &PyForwardingTables,
    pairs: Vec<(u16, u16)>,
    path_sls: Option<&PyPathSls>,
    mtu: u8,
) -> PyResult<Vec<(Option<Answer>, Option<String>)>> {
    if !(1..=5).contains(&mtu) {
        return Err(exc::SaError::new_err(format!(
            "MTU code {mtu} is not 1..=5"
        )));
    }
    let (fabric, inner, sls) = (&tables.fabric, &tables.inner, path_sls.map(|p| &p.inner));
    let map = MtuMap {
        default: mtu,
        ..MtuMap::default()
    };
    let resolver = Resolver::new(fabric, inner, sls, map).map_err(err)?;
    Ok(py.detach(|| {
        pairs
            .iter()
            .map(|&(s, d)| match resolver.resolve(s, d) {
                Ok(r) => (
                    Some((r.sl, r.mtu, r.rate, r.forward.hops, r.reverse.hops)),
                    None,
                ),
                Err(e) => (None, Some(e.to_string())),
            })
            .collect()
    }))
}

/// A 256-byte SubnAdmGet(PathRecord) MAD for (slid, dlid).
#[pyfunction]
pub(crate) fn sa_get_path_mad(
    py: Python<'_>,
    tid: u64,
    slid: u16,
    dlid: u16,
) -> PyResult<Py<PyBytes>> {
    let mut buf = [0u8; MAD_LEN];
    SaMadRepr::get_path(tid, slid, dlid)
        .emit(&mut buf)
        .map_err(err)?;
    Ok(PyBytes::new(py, &buf).unbind())
}

/// Parses an SA PathRecord MAD: (method, status, tid, slid, dlid, sl, mtu,
/// rate, caching flag, pkt_life). Raises `SaError` on a malformed MAD.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub(crate) fn sa_parse_mad(
    data: &[u8],
) -> PyResult<(u8, u16, u64, u16, u16, u8, u8, u8, bool, u8)> {
    let mad = SaMad::new_checked(data).map_err(err)?;
    let r = SaMadRepr::parse(&mad).map_err(err)?;
    let p = r.record;
    Ok((
        r.method, r.status, r.tid, p.slid, p.dlid, p.sl, p.mtu, p.rate, p.caching, p.pkt_life,
    ))
}

/// The 64-byte wire form of a PathRecord given by its main fields.
// Keyword arguments of a Python function, not a Rust API.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (slid, dlid, sl=0, mtu=4, rate=7, pkt_life=18, caching=false))]
pub(crate) fn sa_path_record_bytes(
    py: Python<'_>,
    slid: u16,
    dlid: u16,
    sl: u8,
    mtu: u8,
    rate: u8,
    pkt_life: u8,
    caching: bool,
) -> Py<PyBytes> {
    let rec = ibcloud_sa::wire::PathRecordRepr {
        slid,
        dlid,
        sl: sl & 0xF,
        mtu_selector: 2,
        mtu: mtu & 0x3F,
        rate_selector: 2,
        rate: rate & 0x3F,
        pkt_life_selector: 2,
        pkt_life: pkt_life & 0x3F,
        caching,
        reversible: true,
        numb_path: 1,
        pkey: 0xFFFF,
        ..Default::default()
    };
    PyBytes::new(py, &rec.to_bytes()).unbind()
}

fn json_err(e: serde_json::Error) -> PyErr {
    exc::InternalError::new_err(e.to_string())
}

fn bad_json(what: &str) -> impl Fn(serde_json::Error) -> PyErr + '_ {
    move |e| exc::SaError::new_err(format!("{what}: {e}"))
}

/// The end-node model's default parameters (Paper I's Fig. 5 timeline) as JSON.
#[pyfunction]
pub(crate) fn sa_endnode_defaults() -> PyResult<String> {
    serde_json::to_string(&ibcloud_sa::endnode::EndNodeParams::default()).map_err(json_err)
}

/// Runs the end-node model on parameters given as JSON; returns the result as JSON.
#[pyfunction]
pub(crate) fn sa_endnode(py: Python<'_>, params: &str) -> PyResult<String> {
    let p: ibcloud_sa::endnode::EndNodeParams =
        serde_json::from_str(params).map_err(bad_json("end-node parameters"))?;
    let r = py.detach(|| ibcloud_sa::endnode::simulate(&p));
    serde_json::to_string(&r).map_err(json_err)
}

/// Paper I's Algorithm 1 experiment for n MIFs and k instances per round, as JSON.
#[pyfunction]
pub(crate) fn sa_service_paper(mifs: usize, k: usize) -> PyResult<String> {
    serde_json::to_string(&ibcloud_sa::service::ExperimentParams::paper(mifs, k)).map_err(json_err)
}

/// Runs the service model on an experiment given as JSON; per-round statistics as JSON.
#[pyfunction]
pub(crate) fn sa_service_experiment(py: Python<'_>, params: &str) -> PyResult<String> {
    let p: ibcloud_sa::service::ExperimentParams =
        serde_json::from_str(params).map_err(bad_json("experiment parameters"))?;
    if p.hosts.is_empty() || p.rounds == 0 || p.round_s <= 0.0 {
        return Err(exc::SaError::new_err(
            "an experiment needs hosts, at least one round and a positive round length",
        ));
    }
    let r = py.detach(|| ibcloud_sa::service::run_experiment(&p));
    serde_json::to_string(&r).map_err(json_err)
}

/// One client with `window` queries outstanding against a server (JSON):
/// (queries/s, median response µs).
#[pyfunction]
#[pyo3(signature = (server, client_us, window, hops=2.0, seconds=5.0, seed=1))]
pub(crate) fn sa_window_throughput(
    py: Python<'_>,
    server: &str,
    client_us: f64,
    window: usize,
    hops: f64,
    seconds: f64,
    seed: u64,
) -> PyResult<(f64, f64)> {
    let s: ibcloud_sa::service::ServerParams =
        serde_json::from_str(server).map_err(bad_json("server parameters"))?;
    if window == 0 || seconds <= 0.0 {
        return Err(exc::SaError::new_err(
            "window must be at least 1 and seconds positive",
        ));
    }
    Ok(py.detach(|| {
        ibcloud_sa::service::window_throughput(&s, client_us, window, hops, seconds, seed)
    }))
}
