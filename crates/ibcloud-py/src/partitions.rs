//! Partitions and the partition-aware fat-tree engines: partitions.conf and
//! QoS files, pftree/-ext/-wt with their report, the partition validator on
//! any tables, and the partition analyses (victim under noise, contention,
//! interference).

use crate::error::{detached, PyIbcloudErr};
use crate::exceptions as exc;
use crate::fabric::PyFabric;
use crate::lft::PyForwardingTables;
use crate::routing::PyPathSls;
use ibcloud_analysis::partition::{
    partition_flows_of, receiver_contention, victim_delay, FlowSet, VictimNoise,
};
use ibcloud_analysis::{Endpoints, Pattern};
use ibcloud_fabric::formats::partitions_conf::{self, PartitionsConfError, QosSetup};
use ibcloud_fabric::partitions::{
    GlobalPolicy, Isolation, Member, MemberSpec, Membership, Partition, PartitionConfig,
};
use ibcloud_fabric::{FabricError, Guid, Lid, ParseError};
use ibcloud_routing::engines::pftree::weights::{self, Eq1};
use ibcloud_routing::engines::pftree::{Flavor, Pftree, PftreeVariant};
use ibcloud_routing::verify::partitions::validate_partitions;
use ibcloud_routing::{EngineOptions, RoutingError};
use pyo3::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

fn conf_error(e: PartitionsConfError) -> PyErr {
    Python::attach(|py| match exc::parse_error(py) {
        Ok(ty) => PyErr::from_type(ty.clone(), e.to_string()),
        Err(setup) => setup,
    })
}

fn value_error(msg: impl Into<String>) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(msg.into())
}

/// A partition configuration (OpenSM's partitions.conf with pFTree-Ext policies).
#[pyclass(name = "PartitionConfig", module = "ibcloud._native")]
#[derive(Clone, Debug)]
pub struct PyPartitionConfig {
    pub(crate) inner: PartitionConfig,
    warnings: Vec<String>,
}

/// One partition as a tuple: (name, pkey or None, isolation or None, sl or
/// None, [(member, membership or None)]) where member is a GUID or a keyword.
type PartTuple = (
    String,
    Option<u16>,
    Option<String>,
    Option<u8>,
    Vec<(String, Option<String>)>,
);

#[pymethods]
impl PyPartitionConfig {
    /// Parses partitions.conf text; `file` names it in errors.
    #[staticmethod]
    #[pyo3(signature = (text, file="<string>"))]
    fn parse(text: &str, file: &str) -> PyResult<Self> {
        let (inner, w) = partitions_conf::parse_with_warnings(text, file).map_err(conf_error)?;
        Ok(Self {
            inner,
            warnings: w.iter().map(|w| format!("{file}:{w}")).collect(),
        })
    }

    /// Builds a configuration from partition tuples (see `partitions`).
    #[staticmethod]
    #[pyo3(signature = (partitions, global_isolation=None))]
    fn build(partitions: Vec<PartTuple>, global_isolation: Option<&str>) -> PyResult<Self> {
        let mut conf = PartitionConfig {
            partitions: Vec::new(),
            global: global_isolation
                .map(|g| g.parse::<GlobalPolicy>())
                .transpose()
                .map_err(value_error)?,
        };
        for (name, pkey, iso, sl, members) in partitions {
            let mut p = Partition::new(name, pkey.unwrap_or(0));
            p.pkey = pkey.map(|k| k & 0x7FFF).filter(|&k| k != 0);
            p.isolation = iso
                .map(|i| i.parse::<Isolation>())
                .transpose()
                .map_err(value_error)?;
            if let Some(sl) = sl {
                if sl > 15 {
                    return Err(value_error(format!("SL {sl} is above 15")));
                }
            }
            p.sl = sl;
            for (m, ms) in members {
                let spec = match m.as_str() {
                    "ALL" => MemberSpec::All,
                    "ALL_CAS" => MemberSpec::AllCas,
                    "ALL_SWITCHES" => MemberSpec::AllSwitches,
                    "ALL_ROUTERS" => MemberSpec::AllRouters,
                    "SELF" => MemberSpec::SelfPort,
                    g => {
                        let v = match g.strip_prefix("0x") {
                            Some(h) => u64::from_str_radix(h, 16),
                            None => g.parse(),
                        }
                        .map_err(|_| value_error(format!("bad port GUID '{g}'")))?;
                        MemberSpec::Guid(Guid(v))
                    }
                };
                let membership = match ms.as_deref() {
                    None => None,
                    Some("full") => Some(Membership::Full),
                    Some("limited") => Some(Membership::Limited),
                    Some("both") => Some(Membership::Both),
                    Some(o) => return Err(value_error(format!("unknown membership '{o}'"))),
                };
                p.members.push(Member {
                    spec,
                    membership,
                    line: 0,
                });
            }
            conf.partitions.push(p);
        }
        Ok(Self {
            inner: conf,
            warnings: Vec::new(),
        })
    }

    /// What OpenSM would have warned about while parsing.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// The global policy named in the file, if any.
    #[getter]
    fn global_isolation(&self) -> Option<String> {
        self.inner.global.map(|g| g.keyword().to_owned())
    }

    /// Partitions as tuples (name, pkey, isolation, sl, members, line).
    #[getter]
    #[allow(clippy::type_complexity)]
    fn partitions(
        &self,
    ) -> Vec<(
        String,
        Option<u16>,
        Option<String>,
        Option<u8>,
        Vec<(String, Option<String>)>,
        usize,
    )> {
        self.inner
            .partitions
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    p.pkey,
                    p.isolation.map(|i| i.keyword().to_owned()),
                    p.sl,
                    p.members
                        .iter()
                        .map(|m| {
                            (
                                m.spec.to_string(),
                                m.membership.map(|x| x.keyword().to_owned()),
                            )
                        })
                        .collect(),
                    p.line,
                )
            })
            .collect()
    }

    /// The configuration in OpenSM's syntax.
    fn to_text(&self) -> PyResult<String> {
        let mut out = Vec::new();
        partitions_conf::write(&self.inner, &mut out).map_err(|e| value_error(e.to_string()))?;
        String::from_utf8(out).map_err(|e| value_error(e.to_string()))
    }

    /// Resolved against a fabric: (partitions as (name, pkey, isolation,
    /// [(lid, guid, membership)]), warnings). `strict` turns unknown and
    /// overlapping members into errors.
    #[pyo3(signature = (fabric, strict=false))]
    #[allow(clippy::type_complexity)]
    fn resolve(
        &self,
        fabric: &PyFabric,
        strict: bool,
    ) -> PyResult<(
        Vec<(String, u16, String, Vec<(u16, u64, String)>)>,
        Vec<String>,
    )> {
        let r = self
            .inner
            .resolve(&fabric.inner, strict)
            .map_err(|e| PyIbcloudErr::from(RoutingError::BadOptions(e.to_string())))?;
        Ok((
            r.partitions
                .iter()
                .map(|p| {
                    (
                        p.name.clone(),
                        p.pkey,
                        p.isolation.keyword().to_owned(),
                        p.members
                            .iter()
                            .map(|&(_, g, l, m)| (l.0, g.0, m.keyword().to_owned()))
                            .collect(),
                    )
                })
                .collect(),
            r.warnings,
        ))
    }

    fn __repr__(&self) -> String {
        format!(
            "PartitionConfig({} partitions)",
            self.inner.partitions.len()
        )
    }
}

/// Reads a partitions.conf file.
#[pyfunction]
pub(crate) fn read_partitions_conf(py: Python<'_>, path: PathBuf) -> PyResult<PyPartitionConfig> {
    let text = detached(py, || {
        ibcloud_fabric::formats::read_text(std::path::Path::new(&path))
    })?;
    PyPartitionConfig::parse(&text, &path.display().to_string())
}

/// (opensm.conf QoS options, qos-policy.conf) for the partitions' SLs.
#[pyfunction]
#[pyo3(signature = (pkey_sls, max_vls=8))]
pub(crate) fn qos_files(pkey_sls: Vec<(u16, u8)>, max_vls: u8) -> PyResult<(String, String)> {
    let mut sl2vl = [0u8; 16];
    let vls = max_vls.clamp(1, 15);
    for (sl, vl) in sl2vl.iter_mut().enumerate() {
        *vl = if (sl as u8) < vls { sl as u8 } else { 0 };
    }
    let q = QosSetup {
        pkey_sls,
        max_vls: vls,
        sl2vl,
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    q.write_opensm_conf(&mut a)
        .map_err(|e| value_error(e.to_string()))?;
    q.write_qos_policy(&mut b)
        .map_err(|e| value_error(e.to_string()))?;
    Ok((
        String::from_utf8_lossy(&a).into_owned(),
        String::from_utf8_lossy(&b).into_owned(),
    ))
}

fn variant_from(names: &[String]) -> PyResult<PftreeVariant> {
    let mut v = PftreeVariant::default();
    for n in names {
        match n.as_str() {
            "corrected" => {}
            "literal" => v = PftreeVariant::literal(),
            "literal-marking" => v.literal_marking = true,
            "literal-exclusion" => v.literal_exclusion = true,
            "leaf-by-leaf" => v.leaf_by_leaf = true,
            "alg2-return" => v.literal_alg2_return = true,
            "vl-for-def" => v.vl_for_def = true,
            "marks-only" => v.marks_only = true,
            "grouped" => v.grouped = true,
            o => {
                return Err(value_error(format!(
                    "unknown pftree variant switch '{o}' (corrected, literal, literal-marking, literal-exclusion, leaf-by-leaf, alg2-return, vl-for-def, marks-only, grouped)"
                )))
            }
        }
    }
    Ok(v)
}

/// Routes with pftree / pftree-ext / pftree-wt. Returns (tables, path SLs
/// or None, seconds, report JSON, warnings, VL per partition, variant label).
#[pyfunction]
#[pyo3(signature = (fabric, engine, partitions=None, isolation=None, weights=None, max_vls=None, variant=Vec::new(), roots=None))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub(crate) fn route_pftree(
    py: Python<'_>,
    fabric: &PyFabric,
    engine: &str,
    partitions: Option<&PyPartitionConfig>,
    isolation: Option<&str>,
    weights: Option<Vec<(u64, f64)>>,
    max_vls: Option<u8>,
    variant: Vec<String>,
    roots: Option<Vec<u64>>,
) -> PyResult<(
    PyForwardingTables,
    Option<PyPathSls>,
    f64,
    String,
    Vec<String>,
    Vec<u8>,
    String,
)> {
    let flavor = match engine {
        "pftree" => Flavor::Base,
        "pftree-ext" => Flavor::Ext,
        "pftree-wt" => Flavor::Wt,
        o => {
            return Err(PyIbcloudErr::from(RoutingError::BadOptions(format!(
                "'{o}' is not a pftree engine (pftree, pftree-ext, pftree-wt)"
            )))
            .into())
        }
    };
    let options = EngineOptions {
        roots: roots.map(|g| g.into_iter().map(Guid).collect()),
        max_vls,
        partitions: partitions.map(|p| p.inner.clone()),
        isolation: isolation
            .map(|g| g.parse::<GlobalPolicy>())
            .transpose()
            .map_err(value_error)?,
        node_weights: weights.map(|w| w.into_iter().map(|(g, x)| (Guid(g), x)).collect()),
        pftree_variant: variant_from(&variant)?,
        ..EngineOptions::default()
    };
    let f = &fabric.inner;
    let (out, seconds) = detached(py, || -> Result<_, PyIbcloudErr> {
        let start = Instant::now();
        let out = Pftree::new(flavor, &options).run(f)?;
        Ok((out, start.elapsed().as_secs_f64()))
    })?;
    let json = serde_json::to_string(&out.report)
        .map_err(|e| exc::InternalError::new_err(e.to_string()))?;
    Ok((
        PyForwardingTables {
            inner: out.routing.tables,
            fabric: f.clone(),
        },
        out.routing.path_sls.map(|inner| PyPathSls { inner }),
        seconds,
        json,
        out.warnings,
        out.vls,
        out.variant,
    ))
}

/// The partition validator on any tables: report JSON and resolve warnings.
/// `vls` gives each partition's VL (from path SLs; 0 when None).
#[pyfunction]
#[pyo3(signature = (tables, partitions, isolation=None, vls=None))]
pub(crate) fn check_partitions(
    py: Python<'_>,
    tables: &PyForwardingTables,
    partitions: &PyPartitionConfig,
    isolation: Option<&str>,
    vls: Option<Vec<u8>>,
) -> PyResult<(String, Vec<String>)> {
    let global = isolation
        .map(|g| g.parse::<GlobalPolicy>())
        .transpose()
        .map_err(value_error)?;
    let (fabric, inner, conf) = (&tables.fabric, &tables.inner, &partitions.inner);
    let (report, warnings) = detached(py, || -> Result<_, PyIbcloudErr> {
        let mut parts = conf
            .resolve(fabric, false)
            .map_err(|e| RoutingError::BadOptions(e.to_string()))?;
        if let Some(g) = global.or(conf.global) {
            parts.global = g;
        }
        let vls = vls.unwrap_or_else(|| vec![0; parts.partitions.len()]);
        let report = validate_partitions(fabric, inner, &parts, &vls);
        Ok((report, parts.warnings))
    })?;
    let json =
        serde_json::to_string(&report).map_err(|e| exc::InternalError::new_err(e.to_string()))?;
    Ok((json, warnings))
}

fn endpoints(fabric: &ibcloud_fabric::Fabric, lids: &[u16]) -> Result<Endpoints, PyIbcloudErr> {
    let lids: Vec<Lid> = lids.iter().map(|&l| Lid(l)).collect();
    Ok(Endpoints::from_lids(fabric, &lids)?)
}

fn pattern(name: &str) -> Result<Pattern, PyIbcloudErr> {
    Ok(Pattern::parse(name, None)?)
}

/// dep_max_delay of a victim pattern on `victims` under a noise pattern on
/// `noise` (LIDs), one value per run.
#[pyfunction]
#[pyo3(signature = (tables, victims, victim_pattern, noise, noise_pattern, runs=100, seed=1))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn victim_delays(
    py: Python<'_>,
    tables: &PyForwardingTables,
    victims: Vec<u16>,
    victim_pattern: &str,
    noise: Vec<u16>,
    noise_pattern: &str,
    runs: u64,
    seed: u64,
) -> PyResult<(Vec<f64>, u64)> {
    let (fabric, inner) = (&tables.fabric, &tables.inner);
    Ok(detached(py, || -> Result<_, PyIbcloudErr> {
        let setup = VictimNoise {
            victims: endpoints(fabric, &victims)?,
            victim_pattern: pattern(victim_pattern)?,
            noise: endpoints(fabric, &noise)?,
            noise_pattern: pattern(noise_pattern)?,
        };
        let d = victim_delay(fabric, inner, &setup, runs, seed)?;
        Ok((d.delays, d.broken))
    })?)
}

/// Receiver contention: ((up contention, up contended links), (down …)).
#[pyfunction]
pub(crate) fn contention(
    py: Python<'_>,
    tables: &PyForwardingTables,
    endpoints_lids: Vec<u16>,
    receivers: Vec<u32>,
) -> PyResult<((u64, u64), (u64, u64))> {
    let (fabric, inner) = (&tables.fabric, &tables.inner);
    Ok(detached(py, || -> Result<_, PyIbcloudErr> {
        let eps = endpoints(fabric, &endpoints_lids)?;
        let c = receiver_contention(fabric, inner, &eps, &receivers)?;
        Ok((
            (c.up.contention, c.up.contended_links),
            (c.down.contention, c.down.contended_links),
        ))
    })?)
}

/// Interference readings for endpoints labelled by partition (-1: none):
/// (flow pairs, flows on shared links, shared links). `flows`: `intra`,
/// `all-src` or `all-dst`.
#[pyfunction]
#[pyo3(signature = (tables, endpoints_lids, labels, flows="intra"))]
pub(crate) fn interference(
    py: Python<'_>,
    tables: &PyForwardingTables,
    endpoints_lids: Vec<u16>,
    labels: Vec<i64>,
    flows: &str,
) -> PyResult<(u64, u64, u64)> {
    let set = match flows {
        "intra" => FlowSet::Intra,
        "all-src" => FlowSet::AllBySource,
        "all-dst" => FlowSet::AllByDestination,
        o => {
            return Err(value_error(format!(
                "unknown flow set '{o}' (intra, all-src, all-dst)"
            )))
        }
    };
    let (fabric, inner) = (&tables.fabric, &tables.inner);
    Ok(detached(py, || -> Result<_, PyIbcloudErr> {
        let eps = endpoints(fabric, &endpoints_lids)?;
        let labels: Vec<Option<u32>> = labels.iter().map(|&l| u32::try_from(l).ok()).collect();
        let i = partition_flows_of(fabric, inner, &eps, &labels, set)?.interference();
        Ok((i.flow_pairs, i.flows_on_shared, i.shared_links))
    })?)
}

/// Weights in [a, b] from receive bandwidths with seed 002's Eq. 1
/// (`literal` = the printed form).
#[pyfunction]
#[pyo3(signature = (bandwidth, a=1.0, b=100.0, literal=false))]
pub(crate) fn learn_weights(
    bandwidth: Vec<(u64, f64)>,
    a: f64,
    b: f64,
    literal: bool,
) -> Vec<(u64, f64)> {
    let bw: Vec<(Guid, f64)> = bandwidth.into_iter().map(|(g, x)| (Guid(g), x)).collect();
    let form = if literal {
        Eq1::Literal
    } else {
        Eq1::Corrected
    };
    weights::learn(&bw, a, b, form)
        .into_iter()
        .map(|(g, w)| (g.0, w))
        .collect()
}

/// Reads a weights file (`PORT_GUID WEIGHT` per line).
#[pyfunction]
pub(crate) fn read_weights(py: Python<'_>, path: PathBuf) -> PyResult<Vec<(u64, f64)>> {
    Ok(detached(py, || -> Result<_, FabricError> {
        let text = ibcloud_fabric::formats::read_text(std::path::Path::new(&path))?;
        let w = weights::parse(&text, &path.display().to_string())
            .map_err(|e: ParseError| FabricError::from(e))?;
        Ok(w.into_iter().map(|(g, x)| (g.0, x)).collect())
    })?)
}

/// Compute nodes per leaf switch as ftree sees them (leaves in tuple
/// order, nodes in port order): [[(LID, port GUID)]].
#[pyfunction]
pub(crate) fn leaf_nodes(py: Python<'_>, fabric: &PyFabric) -> PyResult<Vec<Vec<(u16, u64)>>> {
    let f = &fabric.inner;
    Ok(detached(py, || -> Result<_, PyIbcloudErr> {
        let t = ibcloud_routing::fat_tree::FatTree::build(f, &EngineOptions::default())?;
        Ok(t.leaves()
            .iter()
            .map(|&l| {
                t.compute_nodes(l)
                    .iter()
                    .map(|c| (c.lid.0, c.port_guid.0))
                    .collect()
            })
            .collect())
    })?)
}

/// Writes ibdmchk's inputs for a routing with path SLs: the path-SL file
/// (`-c`) and an `opensm-sl2vl.dump` (`-d`) with the identity SL2VL.
#[pyfunction]
pub(crate) fn write_ibdmchk_sl_files(
    py: Python<'_>,
    tables: &PyForwardingTables,
    path_sls: &PyPathSls,
    psl: PathBuf,
    sl2vl: PathBuf,
) -> PyResult<()> {
    let (fabric, sls) = (&tables.fabric, &path_sls.inner);
    Ok(detached(py, || -> Result<(), FabricError> {
        ibcloud_fabric::formats::write_atomic_with(&psl, |mut w| {
            ibcloud_routing::verify::ibdmchk::write_psl(fabric, sls, &mut w)
        })?;
        let mut buf = Vec::new();
        ibcloud_routing::verify::ibdmchk::write_sl2vl(
            fabric,
            &ibcloud_routing::Sl2Vl::default(),
            &mut buf,
        )
        .map_err(|e| FabricError::io(&sl2vl, e))?;
        ibcloud_fabric::formats::write_atomic(&sl2vl, &buf)
    })?)
}

/// Registers this file's classes and functions.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPartitionConfig>()?;
    m.add_function(wrap_pyfunction!(read_partitions_conf, m)?)?;
    m.add_function(wrap_pyfunction!(qos_files, m)?)?;
    m.add_function(wrap_pyfunction!(route_pftree, m)?)?;
    m.add_function(wrap_pyfunction!(check_partitions, m)?)?;
    m.add_function(wrap_pyfunction!(victim_delays, m)?)?;
    m.add_function(wrap_pyfunction!(contention, m)?)?;
    m.add_function(wrap_pyfunction!(interference, m)?)?;
    m.add_function(wrap_pyfunction!(learn_weights, m)?)?;
    m.add_function(wrap_pyfunction!(read_weights, m)?)?;
    m.add_function(wrap_pyfunction!(leaf_nodes, m)?)?;
    m.add_function(wrap_pyfunction!(write_ibdmchk_sl_files, m)?)?;
    Ok(())
}
