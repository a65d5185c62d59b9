//! `minhop`: OpenSM's default routing (`osm_ucast_mgr.c`).
//!
//! Every switch forwards each LID through one of its ports on a shortest path
//! (in switch-to-switch hops) to the LID's switch, balancing the CA LIDs over
//! the equally short ports by how many each already carries. OpenSM builds its
//! hop matrices by repeated relaxation between neighbours until nothing
//! changes; at that fixed point a port's hop count towards a switch is one
//! more than its neighbour's distance, which is what a breadth-first search
//! from every switch gives directly. The balancing is shared with `updn` (module `ucast_mgr`).
//!
//! Reads no [`EngineOptions`]. Routes any connected topology (min-hop routes
//! are loop-free but not deadlock-free on non-trees, as in OpenSM); a fabric
//! whose switches are not all connected is [`RoutingError::Disconnected`]
//! (OpenSM would only see the part its port is in). CA and router ports
//! cabled to no switch, which OpenSM would not discover, stay unrouted.
//! Matches OpenSM 3.3.23 entry for entry on the fat-tree presets, on random
//! and torus topologies, and with LMC 1 and 2.

use super::ucast_mgr::{self, HopSource, PortMask};
use crate::engine::{EngineOptions, Routing, RoutingEngine, RoutingError};
use crate::graph::SwitchGraph;
use ibcloud_fabric::Fabric;

/// OpenSM's min-hop engine.
#[derive(Clone, Copy, Debug, Default)]
pub struct MinHop;

impl MinHop {
    /// The registry constructor (no options).
    pub fn boxed(_options: &EngineOptions) -> Result<Box<dyn RoutingEngine>, RoutingError> {
        Ok(Box::new(MinHop))
    }
}

impl RoutingEngine for MinHop {
    fn name(&self) -> &'static str {
        "minhop"
    }

    fn route(&self, fabric: &Fabric) -> Result<Routing, RoutingError> {
        let graph = SwitchGraph::new(fabric)?;
        let order = ucast_mgr::port_order(self.name(), fabric, &graph)?;
        let dist = ucast_mgr::distances(&graph);
        ucast_mgr::check_connected(self.name(), fabric, &graph, &dist)?;
        let hops = MinHopTables {
            graph: &graph,
            dist: &dist,
        };
        let tables = match ucast_mgr::mask_words(&graph) {
            1 => ucast_mgr::build_lfts::<1>(fabric, &graph, &order, &hops),
            2 => ucast_mgr::build_lfts::<2>(fabric, &graph, &order, &hops),
            3 => ucast_mgr::build_lfts::<3>(fabric, &graph, &order, &hops),
            _ => ucast_mgr::build_lfts::<4>(fabric, &graph, &order, &hops),
        };
        Ok(Routing {
            tables,
            path_sls: None,
        })
    }
}

/// Hop tables derived from the all-pairs switch distances.
pub(crate) struct MinHopTables<'a> {
    pub(crate) graph: &'a SwitchGraph,
    /// `dist[a * n + b]`, symmetric.
    pub(crate) dist: &'a [u8],
}

impl<const W: usize> HopSource<W> for MinHopTables<'_> {
    fn fill(&self, s: usize, least: &mut [u8], masks: &mut [PortMask<W>]) {
        let n = self.graph.len();
        let row = &self.dist[s * n..(s + 1) * n];
        least.copy_from_slice(row);
        masks.fill([0; W]);
        // Eight ports at a time into a byte per destination, which vectorises.
        let mut bytes = vec![0u8; n];
        for (g, group) in self.graph.ports[s].chunks(8).enumerate() {
            bytes.fill(0);
            for (j, sp) in group.iter().enumerate() {
                let r = sp.remote as usize;
                if r == s {
                    continue;
                }
                let rrow = &self.dist[r * n..(r + 1) * n];
                for ((b, &dr), &ds) in bytes.iter_mut().zip(rrow).zip(row) {
                    // dr == NO_PATH wraps to 0, which only the switch itself has.
                    *b |= u8::from(dr.wrapping_add(1) == ds) << j;
                }
            }
            let (w, shift) = (g * 8 / 64, g * 8 % 64);
            for (m, &b) in masks.iter_mut().zip(&bytes) {
                m[w] |= u64::from(b) << shift;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::ucast_mgr::tests::{check_routes, diff, fixture, random_fabric};
    use ibcloud_fabric::generate::preset;

    fn check_fixture(name: &str) {
        let (f, theirs) = fixture(
            name.split("-lmc").next().unwrap_or(name),
            &format!("minhop/{name}"),
        );
        let ours = MinHop.route(&f).unwrap().tables;
        let (n, first) = diff(&f, &ours, &theirs, 10);
        assert_eq!(
            n, 0,
            "{name}: {n} entries differ from OpenSM, first: {first:?}"
        );
    }

    #[test]
    fn matches_opensm_on_4_ary_2_full() {
        check_fixture("4-ary-2-full");
    }

    #[test]
    fn matches_opensm_on_8_ary_2() {
        check_fixture("8-ary-2");
    }

    #[test]
    fn matches_opensm_on_4_ary_3_full() {
        check_fixture("4-ary-3-full");
    }

    #[test]
    fn matches_opensm_on_16_ary_2() {
        check_fixture("16-ary-2");
    }

    #[test]
    fn matches_opensm_with_lmc_1() {
        check_fixture("4-ary-2-full-lmc1");
        check_fixture("8-ary-2-lmc1");
    }

    #[test]
    fn matches_opensm_with_lmc_2() {
        check_fixture("4-ary-2-full-lmc2");
    }

    #[test]
    fn matches_opensm_on_non_trees() {
        // 20 switches linked at random, 39 CAs with one or two ports, LMC 1.
        check_fixture("random-lmc1");
        // A 4 x 4 torus with some doubled links.
        check_fixture("torus");
    }

    #[test]
    fn routes_random_fabrics_on_shortest_paths() {
        let (mut routed, mut disconnected) = (0, 0);
        for seed in 0..200 {
            let f = random_fabric(seed, (seed % 3) as u8);
            match MinHop.route(&f) {
                Ok(r) => {
                    check_routes(&f, &r.tables, true, true);
                    routed += 1;
                }
                Err(RoutingError::Disconnected { .. }) => disconnected += 1,
                Err(e) => panic!("seed {seed}: {e}"),
            }
        }
        assert!(
            routed > 100 && disconnected > 0,
            "{routed} routed, {disconnected} disconnected"
        );
    }

    #[test]
    #[ignore = "big tree: run with --ignored (release mode recommended)"]
    fn routes_ft11664_on_shortest_paths() {
        let f = preset("ft11664").unwrap().build().unwrap();
        let t = MinHop.route(&f).unwrap().tables;
        assert_eq!(check_routes(&f, &t, true, true), 0);
    }

    #[test]
    fn disconnected_switches_are_an_error() {
        let f = preset("4-ary-2-full").unwrap().build().unwrap();
        let leaf = f.switches().next().unwrap();
        let uplinks: Vec<_> = f
            .links()
            .filter(|l| l.a.node == leaf || l.b.node == leaf)
            .filter(|l| f.node(l.a.node).is_switch() && f.node(l.b.node).is_switch())
            .collect();
        let cut = f.without(&[], &uplinks);
        let err = MinHop.route(&cut).unwrap_err();
        assert!(
            matches!(
                err,
                RoutingError::Disconnected {
                    engine: "minhop",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn cas_without_a_switch_stay_unrouted() {
        let f = preset("4-ary-2-full").unwrap().build().unwrap();
        let leaf = f.switches().next().unwrap();
        let cut = f.without(
            &[],
            &f.links()
                .filter(|l| {
                    l.a.node == leaf && !f.node(l.b.node).is_switch()
                        || l.b.node == leaf && !f.node(l.a.node).is_switch()
                })
                .take(1)
                .collect::<Vec<_>>(),
        );
        let t = MinHop.route(&cut).unwrap().tables;
        assert_eq!(
            t.unrouted(&cut, true),
            12,
            "one CA LID unset on every switch"
        );
    }

    #[test]
    fn unusable_lids_are_an_error() {
        let mut f = preset("4-ary-2-full").unwrap().build().unwrap();
        let ca = f.cas().next().unwrap();
        f.set_lid(
            ibcloud_fabric::PortRef::new(ca, 1),
            ibcloud_fabric::Lid(0xC000),
            0,
        )
        .unwrap();
        let err = MinHop.route(&f).unwrap_err();
        assert!(
            matches!(
                err,
                RoutingError::Unsupported {
                    engine: "minhop",
                    ..
                }
            ),
            "{err}"
        );
        let other = f.cas().nth(1).unwrap();
        f.set_lid(ibcloud_fabric::PortRef::new(ca, 1), f.node_lid(other), 0)
            .unwrap();
        assert!(MinHop.route(&f).is_err(), "colliding LIDs");
    }

    #[test]
    fn no_switches_no_tables() {
        let mut b = ibcloud_fabric::FabricBuilder::new();
        let spec = |g| {
            ibcloud_fabric::NodeSpec::new(
                ibcloud_fabric::NodeKind::Ca,
                ibcloud_fabric::Guid(g),
                1,
                "ca",
            )
        };
        let a = b.add_node(spec(1)).unwrap();
        let c = b.add_node(spec(2)).unwrap();
        b.connect(
            ibcloud_fabric::PortRef::new(a, 1),
            ibcloud_fabric::PortRef::new(c, 1),
            Default::default(),
        )
        .unwrap();
        let mut f = b.build();
        ibcloud_fabric::lids::assign_lids(&mut f, &Default::default()).unwrap();
        let t = MinHop.route(&f).unwrap().tables;
        assert_eq!(t.iter().count(), 0);
    }
}
