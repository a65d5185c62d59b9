//! ORDERCOMPUTENODES (seed 002 Alg. 2, corrected): on each leaf, order the
//! compute nodes so that iterative least-loaded routing, which round-robins
//! over the U up-ports, puts the nodes of one partition on the same up-port
//! (index i lands on up-port i mod U; a partition steps by +U).

use super::options::Flavor;
use ibcloud_fabric::partitions::Isolation;

/// What Alg. 2 needs to know about one node of a leaf.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Slot {
    /// Routing partition (None: none, or a single-leaf partition).
    pub(crate) part: Option<u16>,
    /// The partition's policy.
    pub(crate) policy: Isolation,
    /// Weight (pFTree-Wt).
    pub(crate) weight: f64,
}

/// Returns the order (indices into `nodes`) in which to route a leaf's nodes.
/// `nodes` are in port order; `up` is the leaf's number of up-ports.
/// (The printed `return` of Alg. 2 is handled by the caller.)
pub(crate) fn order_leaf(nodes: &[Slot], up: usize, flavor: Flavor) -> Vec<usize> {
    // Nodes without a routing partition (none, or a single-leaf one) come
    // last, in port order: they must not use up the balancing budget that
    // spreads the partitions over the up-links (S002 Fig. 3a; a GAP in the
    // seed, decided here).
    let (routed, rest): (Vec<usize>, Vec<usize>) =
        (0..nodes.len()).partition(|&i| nodes[i].part.is_some());
    let sub: Vec<Slot> = routed.iter().map(|&i| nodes[i]).collect();
    let mut out: Vec<usize> = order_partitioned(&sub, up, flavor)
        .into_iter()
        .map(|k| routed[k])
        .collect();
    out.extend(rest);
    out
}

/// The `grouped` reading: the leaf's nodes sorted by routing partition
/// (stable, so port order within a partition), nodes without one last;
/// pFTree-Ext sorts by policy first (Alg. 2 line 4), pFTree-Wt puts a
/// partition's heavier nodes first.
pub(crate) fn grouped(nodes: &[Slot], flavor: Flavor) -> Vec<usize> {
    let mut out: Vec<usize> = (0..nodes.len()).collect();
    out.sort_by(|&a, &b| {
        let (x, y) = (&nodes[a], &nodes[b]);
        let policy = match flavor {
            Flavor::Ext => y.policy.cmp(&x.policy),
            _ => std::cmp::Ordering::Equal,
        };
        let part = |s: &Slot| s.part.map_or(u32::MAX, u32::from);
        let weight = match flavor {
            Flavor::Wt => y.weight.total_cmp(&x.weight),
            _ => std::cmp::Ordering::Equal,
        };
        policy.then(part(x).cmp(&part(y))).then(weight)
    });
    out
}

fn order_partitioned(nodes: &[Slot], up: usize, flavor: Flavor) -> Vec<usize> {
    let n = nodes.len();
    let mut sorted: Vec<usize> = (0..n).collect();
    // Stable sorts: pFTree-Ext puts phy, then vlane, then def first;
    // pFTree-Wt puts heavier nodes first (direction unstated; descending
    // matches the Fig. 12 example).
    match flavor {
        Flavor::Ext => sorted.sort_by_key(|&i| std::cmp::Reverse(nodes[i].policy)),
        Flavor::Wt => sorted.sort_by(|&a, &b| nodes[b].weight.total_cmp(&nodes[a].weight)),
        Flavor::Base => {}
    }
    if n <= up || up == 0 {
        return sorted;
    }
    let mut taken = vec![false; n];
    let mut table: Vec<(u16, usize)> = Vec::new();
    let mut index = vec![0usize; n];
    let mut id = 0usize;
    let free = |taken: &[bool]| taken.iter().position(|t| !t).unwrap_or(0);
    for &i in &sorted {
        let known = nodes[i]
            .part
            .and_then(|p| table.iter().find(|e| e.0 == p).map(|e| e.1));
        match known {
            None => {
                if taken[id] {
                    id = free(&taken);
                }
            }
            Some(prev) => {
                id = prev + up;
                if id >= n || taken[id] {
                    id = free(&taken);
                }
            }
        }
        index[i] = id;
        taken[id] = true;
        if let Some(p) = nodes[i].part {
            match table.iter_mut().find(|e| e.0 == p) {
                Some(e) => e.1 = id,
                None => table.push((p, id)),
            }
        }
    }
    let mut out: Vec<usize> = (0..n).collect();
    out.sort_by_key(|&i| index[i]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(part: u16) -> Slot {
        Slot {
            part: Some(part),
            policy: Isolation::Def,
            weight: 1.0,
        }
    }

    #[test]
    fn fig4_leaf_alternates_partitions_over_up_ports() {
        // a(P1) b(P2) c(P2) d(P1), two up-ports: order a, b, d, c.
        let nodes = [s(1), s(2), s(2), s(1)];
        assert_eq!(order_leaf(&nodes, 2, Flavor::Base), vec![0, 1, 3, 2]);
    }

    #[test]
    fn trace_p1_p2_steps_by_u() {
        // P1 P1 P1 P2 P2 P2 on 3 up-ports... P1 -> 0, 3; P2 -> 1, 4; then free.
        let nodes = [s(1), s(1), s(2), s(2), s(1), s(2)];
        let o = order_leaf(&nodes, 2, Flavor::Base);
        // index: P1 a=0, P1 b=2, P2 c=1 (0 taken -> free 1), P2 d=3, P1 e=4, P2 f=5.
        assert_eq!(o, vec![0, 2, 1, 3, 4, 5]);
    }

    #[test]
    fn grouped_sorts_by_partition_keeping_port_order() {
        let mut nodes = [s(2), s(1), s(2), s(1)];
        nodes[0].part = None;
        assert_eq!(grouped(&nodes, Flavor::Base), vec![1, 3, 2, 0]);
        // -Ext: phy first whatever the partition index.
        nodes[2].policy = Isolation::Phy;
        assert_eq!(grouped(&nodes, Flavor::Ext), vec![2, 1, 3, 0]);
    }

    #[test]
    fn ext_sorts_by_policy_and_small_leaves_keep_order() {
        let mut nodes = [s(1), s(2), s(2), s(1)];
        nodes[1].policy = Isolation::Phy;
        nodes[2].policy = Isolation::Phy;
        // phy P2 first (b at slot 0, c at 2), then P1 on the other up-port.
        assert_eq!(order_leaf(&nodes, 2, Flavor::Ext), vec![1, 0, 2, 3]);
        assert_eq!(order_leaf(&nodes[..2], 2, Flavor::Ext), vec![1, 0]);
    }
}
