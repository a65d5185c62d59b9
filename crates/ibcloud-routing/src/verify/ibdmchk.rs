//! Input for ibutils' `ibdmchk`, the reference checker: the path-SL file
//! (`-c`) it needs to check engines that spread paths over SLs (dfsssp,
//! lash). The tables go in OpenSM's `opensm.fdbs`
//! ([`ibcloud_fabric::formats::fdbs::write`]).

use crate::sl::PathSls;
use ibcloud_fabric::{Fabric, Lid};
use std::io::{self, Write};

/// Writes `path_sls` as ibdmchk's path-SL file: `0x<source node GUID>
/// <destination LID, decimal> <SL>`, one line per source port with a LID and
/// destination LID in use (LMC ranges in full), sources in fabric order.
///
/// ibdmchk keys the SLs by source *node*, so the ports of a multi-port CA
/// share one row (the last port written wins), and it takes every SL not
/// listed for a node that has some as unassigned; hence every pair is
/// written, SL 0 included (ft11664: 176 M lines, about 4 GB).
pub fn write_psl(fabric: &Fabric, path_sls: &PathSls, out: &mut impl Write) -> io::Result<()> {
    let dests: Vec<Lid> = fabric
        .lid_ports()
        .flat_map(|(_, p)| {
            (0..1u32 << p.lmc.min(7)).map(move |k| Lid((p.lid.0 as u32 + k).min(0xffff) as u16))
        })
        .collect();
    let mut buf = Vec::with_capacity(32 * dests.len());
    for (pr, port) in fabric.lid_ports() {
        buf.clear();
        let guid = fabric.node(pr.node).guid.0;
        for &d in &dests {
            writeln!(buf, "0x{guid:016x} {} {}", d.0, path_sls.get(port.lid, d))?;
        }
        out.write_all(&buf)?;
    }
    Ok(())
}

/// Writes one SL2VL table for every port in OpenSM's `opensm-sl2vl.dump`
/// form (ibdmchk's `-d` input): per end port a header line, then for a
/// switch one `in out : vl0 … vl15` row per (input, output) port pair of
/// cabled output ports, for a CA one row per cabled port.
pub fn write_sl2vl(fabric: &Fabric, sl2vl: &crate::sl::Sl2Vl, out: &mut impl Write) -> io::Result<()> {
    use ibcloud_fabric::NodeKind;
    let row: String = (0..16u8).map(|sl| format!(" {:<2}", sl2vl.vl(sl))).collect();
    for (pr, port) in fabric.lid_ports() {
        let node = fabric.node(pr.node);
        let kind = match node.kind {
            NodeKind::Switch => "Switch",
            NodeKind::Ca => "CA",
            NodeKind::Router => "Router",
        };
        writeln!(
            out,
            "{kind} 0x{:016x}, base LID {}, \"{}\"",
            port.guid.0, port.lid.0, node.description
        )?;
        writeln!(out, "#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15")?;
        writeln!(out, "#--------------------------------------------------------")?;
        let n = node.num_ports;
        if node.kind == NodeKind::Switch {
            for o in 0..=n {
                let cabled = o == 0
                    || fabric
                        .port(ibcloud_fabric::PortRef::new(pr.node, o))
                        .is_some_and(|p| p.remote.is_some());
                if !cabled {
                    continue;
                }
                for i in 0..=n {
                    writeln!(out, "{i:<3} {o:<3} :{row}")?;
                }
            }
        } else {
            writeln!(out, "{:<3} {:<3} :{row}", 0, pr.port)?;
        }
    }
    Ok(())
}
