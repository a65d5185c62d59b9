//! Routes to switch LIDs for the path-keeping algorithms: min-hop up/down
//! (up*, then down*) on the fat-tree, keeping a switch's old port whenever
//! it is one of its min-hop choices.
//!
//! SlimUpdate and the metabase place compute-node routes; OpenSM's ftree
//! routes switch LIDs separately ("single-path and unbalanced", Paper IV
//! footnote 3), and so do these. Roots get no route to other roots (that
//! would need a down→up turn), as in ftree.
//!
//! **Leaves always get a route.** On an intact tree every leaf reaches every
//! switch going up then down, so every CA (the SM's port among them) can
//! LID-route to every switch, as with ftree. After a link fails that is no
//! longer true: when leaf `L` loses its link to middle switch `X`, no
//! up*/down* path leads from `L` to `X`, to the roots above `X`, nor (in a
//! 3-level tree) to the middle switches of other pods cabled to those roots
//! — 12 switches on 4-ary-3-full after `sw-L1-0001:5` fails. Routing them
//! needs one down→up turn (`L` → another middle switch → another leaf →
//! `X`). For those leaves only, the column is completed with a shortest path
//! through switches that have no entry yet (ties to the old port), like
//! OpenSM ftree's reverse hops; entries that already lead up/down are never
//! changed, and compute-node routes are untouched, so CA-to-CA traffic stays
//! up/down. Switch-LID traffic is management traffic (SMPs on VL15, which
//! has no flow control; GMPs to a switch's port 0 are rare), which is why the
//! turn is accepted here and nowhere else. Switches that are not leaves keep
//! ftree's rule (no entry where no up/down path exists).

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
            let mut col = vec![NO_PORT; n];
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
                    col[si] = 0;
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
                    col[si] = p;
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
                col[si] = p;
            }
            // Distance to `t` along the up/down entries just written.
            let dist: Vec<u32> = (0..n)
                .map(|s| if dd[s] != NONE { dd[s] } else { du[s] })
                .collect();
            let stranded = order
                .iter()
                .any(|&s| topo.leaf_pos[s as usize] != NONE && col[s as usize] == NO_PORT);
            if stranded {
                complete_for_leaves(topo, &order, &dist, &mut col, |s| {
                    old.and_then(|o| o.get(topo.node[s as usize], lid))
                        .unwrap_or(NO_PORT)
                });
            }
            let col: Vec<(u32, u8)> = order.iter().map(|&s| (s, col[s as usize])).collect();
            (lid, col)
        })
        .collect();
    for (lid, col) in columns {
        for (s, p) in col {
            new.set(topo.node[s as usize], lid, p);
        }
    }
}

/// Gives every leaf without an entry in `col` a shortest route to the
/// column's target through switches without an entry (any direction), ending
/// on a switch whose up/down entry (`dist` finite) takes over. Only the
/// switches on those routes are written; `old_port` breaks ties.
fn complete_for_leaves(
    topo: &Topo,
    order: &[u32],
    dist: &[u32],
    col: &mut [u8],
    old_port: impl Fn(u32) -> u8,
) {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let n = topo.len();
    // Labels: up/down distance where routed, else Dijkstra over all links
    // (unit weights) from the routed switches.
    let mut label = vec![NONE; n];
    let mut heap = BinaryHeap::new();
    for &s in order {
        let si = s as usize;
        if col[si] != NO_PORT && dist[si] != NONE {
            label[si] = dist[si];
            heap.push(Reverse((dist[si], s)));
        }
    }
    let routed: Vec<bool> = label.iter().map(|&l| l != NONE).collect();
    while let Some(Reverse((d, s))) = heap.pop() {
        if d > label[s as usize] {
            continue;
        }
        let si = s as usize;
        for h in topo.up[si].iter().chain(&topo.down[si]) {
            let r = h.remote as usize;
            if !routed[r] && d + 1 < label[r] {
                label[r] = d + 1;
                heap.push(Reverse((d + 1, h.remote)));
            }
        }
    }
    for &leaf in order {
        let mut s = leaf as usize;
        if topo.leaf_pos[s] == NONE {
            continue;
        }
        // Walk down the labels, writing entries until a switch that has one.
        while col[s] == NO_PORT && label[s] != NONE {
            let want = label[s] - 1;
            let hops = || {
                topo.up[s]
                    .iter()
                    .chain(&topo.down[s])
                    .filter(|h| label[h.remote as usize] == want)
            };
            let oldp = old_port(s as u32);
            let Some(h) = hops()
                .find(|h| h.port == oldp)
                .or_else(|| hops().next())
                .copied()
            else {
                break;
            };
            col[s] = h.port;
            s = h.remote as usize;
        }
    }
}
