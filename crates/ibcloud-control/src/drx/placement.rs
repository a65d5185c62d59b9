//! Where VMs run and which ensemble (VME) each belongs to, and the DCCR
//! relation over it (G §2.3, Eq. 3).
//!
//! DCCR(x) = { VME_j | some VM of VME_j shares x's host }: the ensembles
//! that can interfere with VM x through its host's IB link. Whether x's own
//! VME belongs to it is not stated; we exclude it by default (G's
//! [inferred] reading) and [`OwnVme::Include`] keeps it.

use serde::Serialize;

/// Whether the victim's own VME may be in its DCCR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OwnVme {
    /// Excluded (default, G's [inferred] pseudocode).
    #[default]
    Exclude,
    /// Included.
    Include,
}

/// Which VMs of a DCCR VME a policy acts on (G §2.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Every VM of the VME, cluster-wide (*-Dist).
    Distributed,
    /// Only its VMs on the victim's host (*-Local).
    Local,
}

/// One ensemble.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Vme {
    /// Name.
    pub name: String,
    /// Its VMs (global indices, ascending).
    pub vms: Vec<usize>,
}

/// The cluster layout: hosts, VMs on hosts, VMs in VMEs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Placement {
    /// Host names (a host = one IB link).
    pub hosts: Vec<String>,
    /// VM names.
    pub vm_names: Vec<String>,
    /// Host of each VM.
    pub vm_host: Vec<usize>,
    /// VME of each VM (`None`: in no ensemble, never blamed).
    pub vm_vme: Vec<Option<usize>>,
    /// The ensembles.
    pub vmes: Vec<Vme>,
}

impl Placement {
    /// A layout from `vms` = (name, host index) and `vmes` = (name, VM
    /// indices). Errors name the VM or VME.
    pub fn new(
        hosts: Vec<String>,
        vms: Vec<(String, usize)>,
        vmes: Vec<(String, Vec<usize>)>,
    ) -> Result<Self, String> {
        let mut vm_vme = vec![None; vms.len()];
        if let Some((vm, h)) = vms.iter().find(|(_, h)| *h >= hosts.len()) {
            return Err(format!("VM '{vm}': host index {h} does not exist"));
        }
        let mut out = Vec::new();
        for (j, (name, members)) in vmes.into_iter().enumerate() {
            if members.is_empty() {
                return Err(format!("VME '{name}': has no VMs"));
            }
            let mut m = members;
            m.sort_unstable();
            m.dedup();
            for &v in &m {
                let Some(slot) = vm_vme.get_mut(v) else {
                    return Err(format!("VME '{name}': VM index {v} does not exist"));
                };
                if let Some(k) = *slot {
                    let other: &Vme = &out[k];
                    return Err(format!(
                        "VM '{}' is in two VMEs ('{}' and '{name}')",
                        vms[v].0, other.name
                    ));
                }
                *slot = Some(j);
            }
            if out.iter().any(|x: &Vme| x.name == name) {
                return Err(format!("VME '{name}': named twice"));
            }
            out.push(Vme { name, vms: m });
        }
        Ok(Self {
            hosts,
            vm_names: vms.iter().map(|(n, _)| n.clone()).collect(),
            vm_host: vms.iter().map(|&(_, h)| h).collect(),
            vm_vme,
            vmes: out,
        })
    }

    /// VMs on `host`, ascending.
    pub fn vms_on(&self, host: usize) -> Vec<usize> {
        (0..self.vm_host.len())
            .filter(|&v| self.vm_host[v] == host)
            .collect()
    }

    /// Hosts (links) the VMs of `vme` use, ascending.
    pub fn hosts_of(&self, vme: usize) -> Vec<usize> {
        let mut h: Vec<usize> = self.vmes[vme]
            .vms
            .iter()
            .map(|&v| self.vm_host[v])
            .collect();
        h.sort_unstable();
        h.dedup();
        h
    }

    /// Eq. 3: the VMEs with a VM on `vm`'s host, ascending (`vm` itself
    /// never counts; its own VME per `own`).
    pub fn dccr(&self, vm: usize, own: OwnVme) -> Vec<usize> {
        let h = self.vm_host[vm];
        let mine = self.vm_vme[vm];
        let mut d: Vec<usize> = (0..self.vm_host.len())
            .filter(|&v| v != vm && self.vm_host[v] == h)
            .filter_map(|v| self.vm_vme[v])
            .filter(|&j| own == OwnVme::Include || Some(j) != mine)
            .collect();
        d.sort_unstable();
        d.dedup();
        d
    }

    /// The VMs of `vme` a policy with `scope` acts on when the victim is on
    /// `victim_host`.
    pub fn targets(&self, vme: usize, scope: Scope, victim_host: usize) -> Vec<usize> {
        self.vmes[vme]
            .vms
            .iter()
            .copied()
            .filter(|&v| scope == Scope::Distributed || self.vm_host[v] == victim_host)
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// G's Symmetric layout (Fig. 31): 8 hosts, each with 4 Hadoop and 4
    /// Linpack VMs; one Nectere VM on each of hosts 0 and 1.
    pub(crate) fn symmetric() -> Placement {
        let hosts: Vec<String> = (0..8).map(|h| format!("h{h}")).collect();
        let mut vms = Vec::new();
        let (mut hadoop, mut linpack, mut nectere) = (vec![], vec![], vec![]);
        for h in 0..8 {
            for k in 0..4 {
                hadoop.push(vms.len());
                vms.push((format!("hadoop{}", h * 4 + k), h));
                linpack.push(vms.len());
                vms.push((format!("linpack{}", h * 4 + k), h));
            }
            if h < 2 {
                nectere.push(vms.len());
                vms.push((format!("nectere{h}"), h));
            }
        }
        Placement::new(
            hosts,
            vms,
            vec![
                ("nectere".into(), nectere),
                ("hadoop".into(), hadoop),
                ("linpack".into(), linpack),
            ],
        )
        .unwrap()
    }

    #[test]
    fn symmetric_dccr_and_targets() {
        let p = symmetric();
        assert_eq!(p.vm_names.len(), 66);
        let n0 = p.vmes[0].vms[0];
        assert_eq!(p.vm_host[n0], 0);
        assert_eq!(p.dccr(n0, OwnVme::Exclude), vec![1, 2]);
        // The other Nectere VM is on host 1, not host 0: own VME stays out
        // even when included, since no other Nectere VM shares host 0.
        assert_eq!(p.dccr(n0, OwnVme::Include), vec![1, 2]);
        // A Hadoop VM's DCCR includes Hadoop itself only when asked.
        let h0 = p.vmes[1].vms[0];
        assert_eq!(p.dccr(h0, OwnVme::Exclude), vec![0, 2]);
        assert_eq!(p.dccr(h0, OwnVme::Include), vec![0, 1, 2]);
        // Dist: all 32 Hadoop VMs; Local: the 4 on host 0.
        let dist = p.targets(1, Scope::Distributed, 0);
        let local = p.targets(1, Scope::Local, 0);
        assert_eq!((dist.len(), local.len()), (32, 4));
        assert!(local.iter().all(|&v| p.vm_host[v] == 0));
        assert_eq!(p.hosts_of(0), vec![0, 1]);
        assert_eq!(p.hosts_of(2).len(), 8);
    }

    #[test]
    fn bad_layouts() {
        let h = vec!["a".to_string()];
        let e = Placement::new(h.clone(), vec![("v".into(), 1)], vec![]).unwrap_err();
        assert!(e.contains("VM 'v'"), "{e}");
        let e = Placement::new(
            h.clone(),
            vec![("v".into(), 0)],
            vec![("x".into(), vec![0]), ("y".into(), vec![0])],
        )
        .unwrap_err();
        assert!(e.contains("two VMEs"), "{e}");
        let e = Placement::new(h, vec![("v".into(), 0)], vec![("x".into(), vec![])]).unwrap_err();
        assert!(e.contains("VME 'x'"), "{e}");
    }
}
