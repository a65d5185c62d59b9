//! ibcloud's subnet manager (`ibcloud-sm`): runs the SM on the local
//! libibumad port (real, or ibsim's via the umad2sim shim) with the GIL
//! released; Ctrl-C (SIGINT) stops it between steps. Errors become `SmError`.

use crate::exceptions::IbcloudError;
use ibcloud_sm::control::{run_daemon, DaemonOptions};
use ibcloud_sm::mads::Reliability;
use ibcloud_sm::sm::{Reconfig, SmConfig, SubnetManager};
use ibcloud_sm::transport::UmadTransport;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::time::Duration;

pyo3::create_exception!(
    ibcloud.exceptions,
    SmError,
    IbcloudError,
    "The subnet manager could not run: no port or agent (libibumad), an unknown engine, a bad LMC, a guid2lid file that does not parse, or the SM's own port not answering."
);

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SmError", m.py().get_type::<SmError>())?;
    m.add_function(wrap_pyfunction!(sm_run, m)?)?;
    m.add_function(wrap_pyfunction!(sm_sa_flood, m)?)?;
    m.add_function(wrap_pyfunction!(sm_sa_get_table, m)?)?;
    Ok(())
}

/// Runs the SM: bring-up, then (unless `once`) light sweeps every
/// `sweep_interval` seconds and the control socket, until `stop` or Ctrl-C.
/// Returns the daemon's summary as JSON.
#[pyfunction]
#[pyo3(signature = (engine, *, lmc=0, guid2lid=None, dump_dir=None, smp_log=None, socket=None,
    sweep_interval=10.0, once=false, timeout_ms=200, retries=3, window=4, read_lfts=false,
    ca=None, port=0, priority=0, sa=true, sa_caching=false, reconfig="full", vswitch_scheme="prepopulated", rediscovery="targeted", qos=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn sm_run(
    py: Python<'_>,
    engine: String,
    lmc: u8,
    guid2lid: Option<PathBuf>,
    dump_dir: Option<PathBuf>,
    smp_log: Option<PathBuf>,
    socket: Option<PathBuf>,
    sweep_interval: f64,
    once: bool,
    timeout_ms: u64,
    retries: u32,
    window: usize,
    read_lfts: bool,
    ca: Option<String>,
    port: u32,
    priority: u8,
    sa: bool,
    sa_caching: bool,
    reconfig: &str,
    vswitch_scheme: &str,
    rediscovery: &str,
    qos: Option<String>,
) -> PyResult<String> {
    let qos = match qos {
        None => None,
        Some(policy) => {
            let p = ibcloud_qos::resolve(&policy, ibcloud_qos::CcSls::All).map_err(|e| {
                match crate::exceptions::parse_error(py) {
                    Ok(ty) => PyErr::from_type(ty.clone(), e.to_string()),
                    Err(setup) => setup,
                }
            })?;
            Some(p.qos.ok_or_else(|| {
                SmError::new_err(format!("{policy}: the policy has no [qos] settings"))
            })?)
        }
    };
    let rediscovery = ibcloud_sm::rediscover::Rediscovery::parse(rediscovery)
        .map_err(|e| SmError::new_err(e.to_string()))?;
    let vswitch_scheme = ibcloud_vswitch::Scheme::parse(vswitch_scheme)
        .map_err(|e| SmError::new_err(e.to_string()))?;
    let reconfig = Reconfig::parse(reconfig).map_err(|e| SmError::new_err(e.to_string()))?;
    if !(sweep_interval.is_finite() && sweep_interval > 0.0) {
        return Err(SmError::new_err(format!(
            "sweep interval {sweep_interval} is not a positive number of seconds"
        )));
    }
    if window == 0 || timeout_ms == 0 {
        return Err(SmError::new_err("window and timeout must be at least 1"));
    }
    let config = SmConfig {
        engine,
        lmc,
        guid2lid,
        reliability: Reliability {
            timeout: Duration::from_millis(timeout_ms),
            retries,
            window,
        },
        read_unknown_lfts: read_lfts,
        dump_dir,
        priority: priority.min(15),
        sa,
        sa_caching,
        reconfig,
        vswitch_scheme,
        rediscovery,
        qos,
    };
    let options = DaemonOptions {
        socket,
        sweep_interval: Duration::from_secs_f64(sweep_interval),
        once,
    };
    config
        .validate()
        .map_err(|e| SmError::new_err(e.to_string()))?;
    let mut interrupted: Option<PyErr> = None;
    let result = py.detach(|| -> Result<String, String> {
        let transport = UmadTransport::open(ca.as_deref(), port).map_err(|e| e.to_string())?;
        let mut sm = SubnetManager::new(transport, config).map_err(|e| e.to_string())?;
        if let Some(path) = &smp_log {
            let f = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
            sm.mads.set_log(Box::new(std::io::BufWriter::new(f)));
        }
        let mut last_check = std::time::Instant::now();
        let mut should_stop = || {
            if last_check.elapsed() < Duration::from_millis(100) {
                return false;
            }
            last_check = std::time::Instant::now();
            Python::attach(|py| match py.check_signals() {
                Ok(()) => false,
                Err(e) => {
                    interrupted = Some(e);
                    true
                }
            })
        };
        let summary = run_daemon(&mut sm, &options, &mut should_stop).map_err(|e| e.to_string())?;
        serde_json::to_string(&summary).map_err(|e| e.to_string())
    });
    if let Some(e) = interrupted {
        return Err(e);
    }
    result.map_err(SmError::new_err)
}

/// Runs the SA flooder (`ibcloud_sm::sa::flood`) through libibumad with
/// the GIL released: `spec` and the result are JSON (`FloodSpec`,
/// `FloodStats`). Raises `SmError` when the port cannot be opened, there
/// is no SM, or the spec is invalid.
#[pyfunction]
#[pyo3(signature = (spec, *, ca=None, port=0))]
pub(crate) fn sm_sa_flood(
    py: Python<'_>,
    spec: &str,
    ca: Option<String>,
    port: u32,
) -> PyResult<String> {
    let spec: ibcloud_sm::sa::flood::FloodSpec =
        serde_json::from_str(spec).map_err(|e| SmError::new_err(format!("flood spec: {e}")))?;
    py.detach(|| {
        ibcloud_sm::sa::flood::flood_umad(&spec, ca.as_deref(), port)
            .and_then(|st| serde_json::to_string(&st).map_err(|e| e.to_string()))
    })
    .map_err(SmError::new_err)
}

/// SubnAdmGetTable through libibumad with RMPP done by ibcloud (so a whole
/// table crosses ibsim's shim): returns (status, attribute offset in
/// words, records as bytes).
#[pyfunction]
#[pyo3(signature = (attr_id, *, comp_mask=0, template=Vec::new(), window=16, timeout_ms=2000, sa_lid=None, ca=None, port=0))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub(crate) fn sm_sa_get_table(
    py: Python<'_>,
    attr_id: u16,
    comp_mask: u64,
    template: Vec<u8>,
    window: u32,
    timeout_ms: u64,
    sa_lid: Option<u16>,
    ca: Option<String>,
    port: u32,
) -> PyResult<(u16, u16, Vec<Vec<u8>>)> {
    py.detach(|| {
        ibcloud_sm::sa::flood::get_table_umad(
            ca.as_deref(),
            port,
            sa_lid,
            attr_id,
            comp_mask,
            &template,
            window,
            Duration::from_millis(timeout_ms),
        )
    })
    .map(|t| (t.status, t.attr_offset, t.records))
    .map_err(SmError::new_err)
}
