//! Seeded fault injection: remove random switch-to-switch links or whole switches.

use crate::error::TopologyError;
use crate::ids::{Guid, NodeId, PortNum};
use crate::model::{Fabric, Link};
use rand::seq::index::sample;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// What to break.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultSpec {
    /// Switch-to-switch links to remove.
    pub links: usize,
    /// Whole switches to remove (with all their links).
    pub switches: usize,
    /// RNG seed; the same seed on the same fabric removes the same elements.
    pub seed: u64,
}

/// What was removed, by GUID and port so it can be named in any fabric.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultReport {
    /// Removed links as (node GUID, port, node GUID, port).
    pub links: Vec<(Guid, PortNum, Guid, PortNum)>,
    /// Removed switches by node GUID.
    pub switches: Vec<Guid>,
}

/// Returns a copy of `fabric` with the faults applied. Switches are drawn
/// first, then links among the switch-to-switch links that remain.
///
/// ```
/// use ibcloud_fabric::generate::{preset, FaultSpec, inject_faults};
/// let f = preset("ft324")?.build()?;
/// let (broken, report) = inject_faults(&f, FaultSpec { links: 3, switches: 1, seed: 7 })?;
/// assert_eq!(report.links.len(), 3);
/// assert_eq!(broken.switches().count(), 35);
/// # Ok::<(), ibcloud_fabric::FabricError>(())
/// ```
pub fn inject_faults(
    fabric: &Fabric,
    spec: FaultSpec,
) -> Result<(Fabric, FaultReport), TopologyError> {
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let switches: Vec<NodeId> = fabric.switches().collect();
    if spec.switches > switches.len() {
        return Err(TopologyError::InvalidParameters(format!(
            "cannot remove {} switches from a fabric of {}",
            spec.switches,
            switches.len()
        )));
    }
    let mut gone: Vec<NodeId> = sample(&mut rng, switches.len(), spec.switches)
        .into_iter()
        .map(|i| switches[i])
        .collect();
    gone.sort();
    let is_gone = |id: NodeId| gone.binary_search(&id).is_ok();
    let candidates: Vec<Link> = fabric
        .links()
        .filter(|l| fabric.node(l.a.node).is_switch() && fabric.node(l.b.node).is_switch())
        .filter(|l| !is_gone(l.a.node) && !is_gone(l.b.node))
        .collect();
    if spec.links > candidates.len() {
        return Err(TopologyError::InvalidParameters(format!(
            "cannot remove {} switch-to-switch links; only {} remain",
            spec.links,
            candidates.len()
        )));
    }
    let mut picked: Vec<usize> = sample(&mut rng, candidates.len(), spec.links).into_vec();
    picked.sort_unstable();
    let links: Vec<Link> = picked.into_iter().map(|i| candidates[i]).collect();
    let guid = |id: NodeId| fabric.node(id).guid;
    let report = FaultReport {
        links: links
            .iter()
            .map(|l| (guid(l.a.node), l.a.port, guid(l.b.node), l.b.port))
            .collect(),
        switches: gone.iter().map(|&s| guid(s)).collect(),
    };
    Ok((fabric.without(&gone, &links), report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::preset;

    /// Links of the original fabric that touch any of the removed switches.
    fn links_lost_with(f: &Fabric, report: &FaultReport) -> usize {
        let gone: Vec<NodeId> = report
            .switches
            .iter()
            .map(|g| f.node_by_guid(*g).unwrap())
            .collect();
        f.links()
            .filter(|l| gone.contains(&l.a.node) || gone.contains(&l.b.node))
            .count()
    }

    #[test]
    fn same_seed_same_faults_and_counts_add_up() {
        let f = preset("ft648").unwrap().build().unwrap();
        let spec = FaultSpec {
            links: 10,
            switches: 2,
            seed: 42,
        };
        let (a, ra) = inject_faults(&f, spec).unwrap();
        let (b, rb) = inject_faults(&f, spec).unwrap();
        assert_eq!(ra, rb);
        assert_eq!(a, b);
        assert_eq!(a.switches().count(), 52);
        assert_eq!(a.num_links(), f.num_links() - 10 - links_lost_with(&f, &ra));
        let (c, rc) = inject_faults(&f, FaultSpec { seed: 43, ..spec }).unwrap();
        assert_ne!(ra, rc);
        assert_eq!(c.num_links(), f.num_links() - 10 - links_lost_with(&f, &rc));
        for (ga, pa, gb, pb) in &ra.links {
            let na = a.node_by_guid(*ga).unwrap();
            assert!(a.remote(crate::PortRef::new(na, *pa)).is_none());
            assert!(a.node_by_guid(*gb).is_some() && *pb > 0);
        }
    }

    #[test]
    fn too_many_faults_is_an_error() {
        let f = preset("4-ary-2-full").unwrap().build().unwrap();
        assert!(inject_faults(
            &f,
            FaultSpec {
                links: 33,
                ..Default::default()
            }
        )
        .is_err());
        assert!(inject_faults(
            &f,
            FaultSpec {
                switches: 13,
                ..Default::default()
            }
        )
        .is_err());
        assert!(inject_faults(
            &f,
            FaultSpec {
                links: 32,
                ..Default::default()
            }
        )
        .is_ok());
    }
}
