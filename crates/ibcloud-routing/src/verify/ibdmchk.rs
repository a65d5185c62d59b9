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

/// Writes the SL2VL tables for ibdmchk's `-d` in its own line form,
/// `0x<node GUID> <in port> <out port> 0x(sl0)(sl1) … 0x(sl14)(sl15)`
/// (ibdm also reads OpenSM's `opensm-sl2vl.dump`): the same table for
/// every (input, output) pair of cabled switch ports and for each cabled CA
/// port (input 0).
pub fn write_sl2vl(
    fabric: &Fabric,
    sl2vl: &crate::sl::Sl2Vl,
    out: &mut impl Write,
) -> io::Result<()> {
    use ibcloud_fabric::{NodeKind, PortRef};
    let bytes: Vec<String> = (0..8u8)
        .map(|k| {
            format!(
                "0x{:x}{:x}",
                sl2vl.vl(2 * k) & 0xF,
                sl2vl.vl(2 * k + 1) & 0xF
            )
        })
        .collect();
    let row = bytes.join(" ");
    for (id, node) in fabric.iter_nodes() {
        let n = node.num_ports;
        let cabled: Vec<u8> = (1..=n)
            .filter(|&p| {
                fabric
                    .port(PortRef::new(id, p))
                    .is_some_and(|x| x.remote.is_some())
            })
            .collect();
        let guid = node.guid.0;
        if node.kind == NodeKind::Switch {
            for &o in &cabled {
                for i in 0..=n {
                    writeln!(out, "0x{guid:016x} {i} {o} {row}")?;
                }
            }
        } else {
            for &o in &cabled {
                writeln!(out, "0x{guid:016x} 0 {o} {row}")?;
            }
        }
    }
    Ok(())
}
