//! `ibcloud qos write` / `ibcloud cc write` (`ibcloud-qos`): a preset or a
//! policy file as OpenSM 3.3.23 options, and the tables it programs.

use crate::exceptions::{parse_error, IbcloudError};
use ibcloud_netsim::VlArbEntry;
use ibcloud_qos::{opensm, resolve, CcSls, FabricCc, Policy, PortClass, Preset, QosTables};
use pyo3::prelude::*;
use serde_json::{json, Value};

pyo3::create_exception!(
    ibcloud.exceptions,
    QosError,
    IbcloudError,
    "A QoS or congestion-control policy that cannot be written: a preset or option the command does not know, or a policy with nothing for the part asked for."
);

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("QosError", m.py().get_type::<QosError>())?;
    m.add_function(wrap_pyfunction!(qos_presets, m)?)?;
    m.add_function(wrap_pyfunction!(qos_opensm_conf, m)?)?;
    m.add_function(wrap_pyfunction!(qos_policy_json, m)?)?;
    Ok(())
}

fn load(py: Python<'_>, policy: &str, cc_sls: &str) -> PyResult<Policy> {
    let sls = CcSls::parse(cc_sls)
        .ok_or_else(|| QosError::new_err(format!("cc-sls '{cc_sls}': expected all or bulk")))?;
    resolve(policy, sls).map_err(|e| match parse_error(py) {
        Ok(ty) => PyErr::from_type(ty.clone(), e.to_string()),
        Err(setup) => setup,
    })
}

/// Names of the presets (G Table 6).
#[pyfunction]
pub(crate) fn qos_presets() -> Vec<&'static str> {
    Preset::ALL.iter().map(|(n, _)| *n).collect()
}

/// The opensm.conf options of `policy` (a preset name or a TOML file):
/// `part` is "qos", "cc" or "all". Raises ParseError (file:line: problem)
/// or QosError.
#[pyfunction]
#[pyo3(signature = (policy, part, cc_sls="all"))]
pub(crate) fn qos_opensm_conf(
    py: Python<'_>,
    policy: &str,
    part: &str,
    cc_sls: &str,
) -> PyResult<String> {
    let p = load(py, policy, cc_sls)?;
    let out = match part {
        "qos" => match &p.qos {
            Some(q) => opensm::qos_options(q),
            None => {
                return Err(QosError::new_err(format!(
                    "{policy}: the policy has no [qos] settings"
                )))
            }
        },
        "cc" => match &p.cc {
            Some(c) => opensm::cc_options(c),
            None => {
                return Err(QosError::new_err(format!(
                    "{policy}: the policy has no [cc] settings"
                )))
            }
        },
        "all" => opensm::opensm_conf(&p),
        o => {
            return Err(QosError::new_err(format!(
                "part '{o}': expected qos, cc or all"
            )))
        }
    };
    out.map_err(|m| QosError::new_err(format!("{policy}: {m}")))
}

fn table(t: &[VlArbEntry]) -> Value {
    Value::Array(t.iter().map(|e| json!([e.vl, e.weight])).collect())
}

/// `op_vls_code` is the fabric-wide `max_op_vls` OpenSM is given (the
/// largest class's), not the class's own.
fn tables(t: &QosTables, op_vls_code: u8) -> Value {
    json!({
        "max_vls": t.max_vls,
        "op_vls_code": op_vls_code,
        "high_limit": t.high_limit,
        "vlarb_high": table(&t.vlarb_high),
        "vlarb_low": table(&t.vlarb_low),
        "sl2vl": t.sl2vl.to_vec(),
    })
}

fn cc(c: &FabricCc) -> Value {
    let s = &c.switch;
    json!({
        "cc_key": c.cc_key,
        "max_outstanding_mads": c.max_outstanding_mads,
        "switch": {
            "control_map": s.control_map,
            "victim_mask": s.victim_mask.bytes().iter().map(|b| format!("{b:02X}")).collect::<String>(),
            "credit_mask": s.credit_mask.bytes().iter().map(|b| format!("{b:02X}")).collect::<String>(),
            "threshold": s.threshold,
            "packet_size": s.packet_size,
            "credit_starvation_threshold": s.cs_threshold,
            "credit_starvation_return_delay": [s.cs_return_delay.shift, s.cs_return_delay.multiplier],
            "marking_rate": s.marking_rate,
        },
        "ca": {
            "port_control": u16::from(c.ca.sl_based),
            "control_map": c.ca.control_map,
            "entries": c.ca.entries.iter().map(|e| json!({
                "ccti_timer": e.ccti_timer,
                "ccti_increase": e.ccti_increase,
                "trigger_threshold": e.trigger_threshold,
                "ccti_min": e.ccti_min,
            })).collect::<Vec<_>>(),
        },
        "ccti_limit": c.ccti_limit(),
        "cct": c.cct.iter().map(|e| json!([e.shift, e.multiplier])).collect::<Vec<_>>(),
    })
}

/// The policy as JSON: per port class ("ca", "sw0", "swe", "rtr") the
/// tables OpenSM programs, and the congestion-control settings.
#[pyfunction]
#[pyo3(signature = (policy, cc_sls="all"))]
pub(crate) fn qos_policy_json(py: Python<'_>, policy: &str, cc_sls: &str) -> PyResult<String> {
    let p = load(py, policy, cc_sls)?;
    let qos = p.qos.as_ref().map(|q| {
        let mut widest = q.default.clone();
        widest.max_vls = q.max_vls();
        let code = widest.op_vls_code();
        let mut m = serde_json::Map::new();
        for c in PortClass::ALL {
            m.insert(c.names().1.to_string(), tables(&q.effective(c), code));
        }
        Value::Object(m)
    });
    let sim = p
        .apply_to(&ibcloud_netsim::SimConfig::default())
        .ok()
        .map(|s| json!({"vls": s.vls, "sl2vl": s.sl2vl.map(|m| m.to_vec())}));
    Ok(json!({
        "name": p.name,
        "qos": qos,
        "cc": p.cc.as_ref().map(cc),
        "simulator": sim,
    })
    .to_string())
}
