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
