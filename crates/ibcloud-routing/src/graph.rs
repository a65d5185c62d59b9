//! The switch graph every engine starts from: switches densely indexed, their
//! switch-to-switch ports, and where every LID in use attaches.

use ibcloud_fabric::{Fabric, Lid, NodeId, PortNum, PortRef};

use crate::engine::RoutingError;

/// A switch-to-switch port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchPort {
    /// Local port number.
    pub port: PortNum,
    /// Switch index of the peer.
    pub remote: u32,
    /// Peer's port number.
    pub remote_port: PortNum,
}

/// Where a destination LID lives, seen from the switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LidTarget {
    /// Base LID.
    pub lid: Lid,
    /// LMC of the port (the target answers to 2^lmc LIDs).
    pub lmc: u8,
    /// The owning port (switch port 0, or a CA/router port).
    pub owner: PortRef,
    /// Switch index the LID is reached through: the switch itself, or the switch
    /// a CA port is cabled to. `None` for a CA port cabled to no switch.
    pub switch: Option<u32>,
    /// Port on that switch leading to the owner (0 for the switch's own LID).
    pub port: PortNum,
}

/// Switches, their inter-switch ports and the LID targets of a fabric.
#[derive(Clone, Debug)]
pub struct SwitchGraph {
    /// Switch index → node id, in fabric order.
    pub switches: Vec<NodeId>,
    /// Node index → switch index (`u32::MAX` for non-switches).
    pub index: Vec<u32>,
    /// Per switch, its switch-to-switch ports in ascending port order.
    pub ports: Vec<Vec<SwitchPort>>,
    /// Every LID owner: switch port 0 and every CA/router port with a LID, in
    /// fabric order.
    pub targets: Vec<LidTarget>,
}

impl SwitchGraph {
    /// Builds the graph; every switch must have a LID.
    pub fn new(fabric: &Fabric) -> Result<Self, RoutingError> {
        let switches: Vec<NodeId> = fabric.switches().collect();
        let mut index = vec![u32::MAX; fabric.num_nodes()];
        for (i, s) in switches.iter().enumerate() {
            index[s.index()] = i as u32;
        }
        let mut ports = Vec::with_capacity(switches.len());
        for &s in &switches {
            if !fabric.node_lid(s).is_set() {
                return Err(RoutingError::MissingLid(format!(
                    "switch '{}'",
                    fabric.node(s).description
                )));
            }
            let mut mine = Vec::new();
            for (p, r) in fabric.neighbors(s) {
                let ri = index[r.node.index()];
                if ri != u32::MAX {
                    mine.push(SwitchPort {
                        port: p,
                        remote: ri,
                        remote_port: r.port,
                    });
                }
            }
            ports.push(mine);
        }
        let mut targets = Vec::new();
        for (pr, port) in fabric.lid_ports() {
            let (switch, at) = if fabric.node(pr.node).is_switch() {
                (Some(index[pr.node.index()]), 0)
            } else {
                match port.remote {
                    Some(r) if index[r.node.index()] != u32::MAX => {
                        (Some(index[r.node.index()]), r.port)
                    }
                    _ => (None, 0),
                }
            };
            targets.push(LidTarget {
                lid: port.lid,
                lmc: port.lmc,
                owner: pr,
                switch,
                port: at,
            });
        }
        Ok(Self {
            switches,
            index,
            ports,
            targets,
        })
    }

    /// Number of switches.
    pub fn len(&self) -> usize {
        self.switches.len()
    }

    /// True without switches.
    pub fn is_empty(&self) -> bool {
        self.switches.is_empty()
    }

    /// Hop distances (in switch-to-switch links) from switch `from` to every switch.
    pub fn bfs(&self, from: u32) -> Vec<u32> {
        let mut dist = vec![u32::MAX; self.len()];
        let mut queue = std::collections::VecDeque::from([from]);
        dist[from as usize] = 0;
        while let Some(s) = queue.pop_front() {
            for sp in &self.ports[s as usize] {
                if dist[sp.remote as usize] == u32::MAX {
                    dist[sp.remote as usize] = dist[s as usize] + 1;
                    queue.push_back(sp.remote);
                }
            }
        }
        dist
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_of_a_two_level_tree() {
        let f = ibcloud_fabric::generate::preset("4-ary-2-full")
            .unwrap()
            .build()
            .unwrap();
        let g = SwitchGraph::new(&f).unwrap();
        assert_eq!(g.len(), 12);
        assert_eq!(g.targets.len(), 44);
        let leaf = 0;
        assert_eq!(g.ports[leaf].len(), 4);
        let d = g.bfs(leaf as u32);
        assert_eq!(
            d.iter().filter(|&&x| x == 2).count(),
            7,
            "other leaves are two hops away"
        );
        let ca = g
            .targets
            .iter()
            .find(|t| !f.node(t.owner.node).is_switch())
            .unwrap();
        assert_eq!((ca.switch, ca.port), (Some(0), 1));
    }

    #[test]
    fn switches_need_lids() {
        let mut f = ibcloud_fabric::generate::preset("4-ary-2-full")
            .unwrap()
            .build()
            .unwrap();
        f.clear_lids();
        assert!(matches!(
            SwitchGraph::new(&f),
            Err(RoutingError::MissingLid(_))
        ));
    }
}
