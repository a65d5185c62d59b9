//! Routes to switch LIDs for the path-keeping algorithms: min-hop up/down
//! (up*, then down*) on the fat-tree, keeping a switch's old port whenever
//! it is one of its min-hop choices.
//!
//! SlimUpdate and the metabase place compute-node routes; OpenSM's ftree
//! routes switch LIDs separately ("single-path and unbalanced", Paper IV
//! footnote 3), and so do these. Roots get no route to other roots (that
//! would need a down→up turn), as in ftree.

use ibcloud_fabric::lft::{ForwardingTables, NO_PORT};
use ibcloud_fabric::{Fabric, Lid};
use rayon::prelude::*;

use crate::topo::{Topo, NONE};

/// Writes every tree switch's LID into `new` on every tree switch.
pub(crate) fn route_switch_lids(
    topo: &Topo,
    fabric: &Fabric,
    old: Option<&ForwardingTables>,
    new: &mut ForwardingTables,
) {
    let order = topo.top_down();
    let targets: Vec<u32> = order.clone();
    let columns: Vec<(Lid, Vec<(u32, u8)>)> = targets
        .par_iter()
        .map(|&t| {
            let lid = fabric.node_lid(topo.node[t as usize]);
            let n = topo.len();
            let mut dd = vec![NONE; n];
            dd[t as usize] = 0;
            let mut queue = std::collections::VecDeque::from([t]);
            while let Some(s) = queue.pop_front() {
                for h in &topo.up[s as usize] {
                    if dd[h.remote as usize] == NONE {
                        dd[h.remote as usize] = dd[s as usize] + 1;
                        queue.push_back(h.remote);
                    }
                }
            }
            let mut du = vec![NONE; n];
            let mut col = Vec::with_capacity(n);
            let pick = |s: u32, opts: &mut dyn Iterator<Item = u8>| -> u8 {
                let oldp = old
                    .and_then(|o| o.get(topo.node[s as usize], lid))
                    .unwrap_or(NO_PORT);
                let mut first = NO_PORT;
                for p in opts {
                    if p == oldp {
                        return p;
                    }
                    if first == NO_PORT {
                        first = p;
                    }
                }
                first
            };
            for &s in &order {
                let si = s as usize;
                if s == t {
                    col.push((s, 0));
                    continue;
                }
                if dd[si] != NONE {
                    let want = dd[si] - 1;
                    let p = pick(
                        s,
                        &mut topo.down[si]
                            .iter()
                            .filter(|h| dd[h.remote as usize] == want)
                            .map(|h| h.port),
                    );
                    col.push((s, p));
                    continue;
                }
                let costs: Vec<u32> = topo.up[si]
                    .iter()
                    .map(|h| {
                        let r = h.remote as usize;
                        if dd[r] != NONE {
                            dd[r]
                        } else {
                            du[r]
                        }
                    })
                    .collect();
                let best = costs.iter().copied().min().unwrap_or(NONE);
                if best == NONE {
                    col.push((s, NO_PORT));
                    continue;
                }
                du[si] = best + 1;
                let p = pick(
                    s,
                    &mut topo.up[si]
                        .iter()
                        .zip(&costs)
                        .filter(|(_, &c)| c == best)
                        .map(|(h, _)| h.port),
                );
                col.push((s, p));
            }
            (lid, col)
        })
        .collect();
    for (lid, col) in columns {
        for (s, p) in col {
            new.set(topo.node[s as usize], lid, p);
        }
    }
}
