//! Node orders for NoFTree (Paper III, reference C §2.3): which compute
//! nodes come first when a (sub-)tree is routed.
//!
//! Sources:
//!
//! - a file ([`read_order_file`]): ORCS-style GUID lists, LID lists and
//!   OpenSM's `opensm-ftree-ca-order.dump` (read by
//!   `ibcloud_fabric::formats::node_order`). `DUMMY` lines are skipped: an
//!   order is a list of nodes, positions count listed nodes only;
//! - received traffic ([`by_received_traffic`]): per-node receive counts of
//!   a communication pattern as the analysis lays it out (the flows'
//!   weights summed per destination over the runs), highest first — the
//!   paper's "nodes sorted by received traffic from the port counters", with
//!   the analysis standing in for the counters. Ties keep endpoint order.
//! - any per-node counts ([`by_counts`]), e.g. from a packet simulator.
//!
//! Every entry must name a compute node (a CA port on a leaf) of the fabric,
//! once; anything else is [`ReconfigError::BadOrder`] naming the item.

use std::collections::HashSet;

use ibcloud_analysis::{run_stream, AnalysisOptions, Endpoints, Flow, Pattern, RankOrder};
use ibcloud_fabric::formats::node_order::{parse, OrderEntry};
use ibcloud_fabric::{Fabric, Lid};

use crate::error::ReconfigError;

/// Resolves parsed order entries to CA LIDs; `source` names them in errors.
pub fn resolve(
    fabric: &Fabric,
    entries: &[OrderEntry],
    source: &str,
) -> Result<Vec<Lid>, ReconfigError> {
    let mut out = Vec::with_capacity(entries.len());
    let mut seen = HashSet::new();
    let ca_lids: std::collections::HashMap<u16, ibcloud_fabric::PortRef> = fabric
        .lid_ports()
        .filter(|(p, _)| !fabric.node(p.node).is_switch())
        .map(|(p, port)| (port.lid.0, p))
        .collect();
    for (i, e) in entries.iter().enumerate() {
        let lid = match *e {
            OrderEntry::Dummy => continue,
            OrderEntry::Lid(l) => {
                if !ca_lids.contains_key(&l.0) {
                    return Err(ReconfigError::BadOrder(format!(
                        "{source}: item {}: LID {} names no compute node of the fabric",
                        i + 1,
                        l.0
                    )));
                }
                l
            }
            OrderEntry::Guid(g) => {
                let port = fabric
                    .port_by_guid(g)
                    .filter(|p| !fabric.node(p.node).is_switch())
                    .or_else(|| {
                        fabric
                            .node_by_guid(g)
                            .filter(|&n| !fabric.node(n).is_switch())
                            .and_then(|n| {
                                fabric
                                    .lid_ports()
                                    .find(|(p, _)| p.node == n)
                                    .map(|(p, _)| p)
                            })
                    });
                let Some(p) = port else {
                    return Err(ReconfigError::BadOrder(format!(
                        "{source}: item {}: GUID {g} names no compute node of the fabric",
                        i + 1
                    )));
                };
                match fabric.port(p).map(|x| x.lid) {
                    Some(l) if l.is_set() => Lid(l.0),
                    _ => {
                        return Err(ReconfigError::BadOrder(format!(
                            "{source}: item {}: GUID {g} has no LID",
                            i + 1
                        )))
                    }
                }
            }
        };
        if !seen.insert(lid.0) {
            return Err(ReconfigError::BadOrder(format!(
                "{source}: item {}: LID {} is listed twice",
                i + 1,
                lid.0
            )));
        }
        out.push(lid);
    }
    Ok(out)
}

/// Reads an order file (GUIDs, LIDs or an ftree CA-order dump).
pub fn read_order_file(fabric: &Fabric, path: &std::path::Path) -> Result<Vec<Lid>, ReconfigError> {
    let name = path.display().to_string();
    let text = ibcloud_fabric::formats::read_text(path).map_err(|e| match e {
        ibcloud_fabric::FabricError::Io { source, .. } => {
            ReconfigError::Input(format!("{name}: {source}"))
        }
        other => ReconfigError::BadOrder(other.to_string()),
    })?;
    let entries = parse(&text, &name).map_err(|e| ReconfigError::BadOrder(e.to_string()))?;
    resolve(fabric, &entries, &name)
}

/// Per-endpoint received weight of `pattern` over `options.runs` runs
/// (each with its own rank order, as the analysis draws them).
pub fn received_traffic(
    endpoints: &Endpoints,
    pattern: &Pattern,
    options: &AnalysisOptions,
) -> Result<Vec<f64>, ReconfigError> {
    let n = endpoints.len();
    pattern
        .check(n)
        .map_err(|e| ReconfigError::Input(e.to_string()))?;
    let order = RankOrder::new(n, &options.order, options.shuffle)
        .map_err(|e| ReconfigError::Input(e.to_string()))?;
    let mut recv = vec![0.0; n];
    let mut flows: Vec<Flow> = Vec::new();
    for run in 0..options.runs.max(1) {
        let mut rng = run_stream(options.seed, run);
        let ranks = order.draw_with(&mut rng);
        let inst = pattern.instantiate(n, &mut rng);
        for level in 0..inst.num_levels() {
            flows.clear();
            inst.level(level, &mut flows);
            for f in &flows {
                if let Some(&e) = ranks.get(f.dst as usize) {
                    recv[e as usize] += f.weight;
                }
            }
        }
    }
    Ok(recv)
}

/// An order from per-node counts: highest first, ties in the given order.
pub fn by_counts(counts: &[(Lid, f64)]) -> Vec<Lid> {
    let mut v: Vec<(usize, Lid, f64)> = counts
        .iter()
        .enumerate()
        .map(|(i, &(l, c))| (i, l, c))
        .collect();
    v.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    v.into_iter().map(|(_, l, _)| l).collect()
}

/// The compute nodes of `endpoints` sorted by the traffic `pattern` sends
/// them, highest first (nodes that receive nothing are left out: NoFTree
/// places them in port order).
pub fn by_received_traffic(
    endpoints: &Endpoints,
    pattern: &Pattern,
    options: &AnalysisOptions,
) -> Result<Vec<Lid>, ReconfigError> {
    let recv = received_traffic(endpoints, pattern, options)?;
    let counts: Vec<(Lid, f64)> = endpoints
        .as_slice()
        .iter()
        .zip(&recv)
        .filter(|(_, &r)| r > 0.0)
        .map(|(e, &r)| (e.lid, r))
        .collect();
    Ok(by_counts(&counts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibcloud_fabric::generate::preset;

    #[test]
    fn resolves_lids_and_guids_and_refuses_unknowns() {
        let f = preset("4-ary-2-full").unwrap().build().unwrap();
        let ca = f.cas().next().unwrap();
        let lid = f.node_lid(ca);
        let guid = f.ports(ca)[1].guid;
        let got = resolve(&f, &[OrderEntry::Guid(guid), OrderEntry::Dummy], "x").unwrap();
        assert_eq!(got, vec![lid]);
        let e = resolve(&f, &[OrderEntry::Lid(Lid(0x999))], "order.txt").unwrap_err();
        assert!(e.to_string().contains("order.txt: item 1"), "{e}");
        let sw = f.switches().next().unwrap();
        assert!(resolve(&f, &[OrderEntry::Lid(f.node_lid(sw))], "x").is_err());
        assert!(resolve(&f, &[OrderEntry::Lid(lid), OrderEntry::Lid(lid)], "x").is_err());
    }

    #[test]
    fn traffic_order_ranks_gather_root_first() {
        let f = preset("4-ary-2-full").unwrap().build().unwrap();
        let ep = Endpoints::cas(&f);
        let opts = AnalysisOptions {
            runs: 1,
            shuffle: false,
            ..Default::default()
        };
        let o = by_received_traffic(&ep, &Pattern::Gather, &opts).unwrap();
        assert_eq!(o, vec![ep.as_slice()[0].lid]);
        assert_eq!(
            by_counts(&[(Lid(1), 1.0), (Lid(2), 3.0), (Lid(3), 1.0)]),
            vec![Lid(2), Lid(1), Lid(3)]
        );
    }
}
