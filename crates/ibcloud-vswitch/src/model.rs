//! The virtualization model: hypervisors with SR-IOV HCAs behind vSwitches,
//! PF and VFs, VMs with their LID, vGUID and GID, the two LID schemes, VM
//! boot and shutdown, and the forwarding tables the subnet manager keeps.
//!
//! A [`VirtualFabric`] is read from any fabric with vSwitches (discovery by
//! the single uplink, [`find_vswitches`]); the placement is read from the VF
//! descriptions (`vm=<name>`, see [`crate::build`]). Its tables start as a
//! fresh `vswitch-ftree` routing of that placement.

use std::collections::HashMap;

use ibcloud_fabric::lft::{ForwardingTables, NO_PORT};
use ibcloud_fabric::{Fabric, Guid, Lid, NodeId, PortNum, PortRef};
use ibcloud_routing::engines::vswitch_ftree::{find_vswitches, VSwitchFtree};
use ibcloud_routing::EngineOptions;
use serde::Serialize;

use crate::build::VM_TAG;
use crate::capacity::UNICAST_LIDS;
use crate::error::VSwitchError;
use crate::marking::TreeInfo;

/// The GID subnet prefix used to form VM GIDs (IB's default, fe80::/64).
pub const GID_PREFIX: u64 = 0xfe80_0000_0000_0000;

/// How VM LIDs are handed out (Paper II §V).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Scheme {
    /// Every VF has a LID from boot; a VM takes its VF's LID.
    Prepopulated,
    /// A LID is assigned when a VM boots and stays with it.
    Dynamic,
}

impl Scheme {
    /// `prepopulated` / `dynamic`.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Prepopulated => "prepopulated",
            Scheme::Dynamic => "dynamic",
        }
    }

    /// Parses `prepopulated` / `dynamic`.
    pub fn parse(s: &str) -> Result<Self, VSwitchError> {
        match s {
            "prepopulated" | "prepop" => Ok(Self::Prepopulated),
            "dynamic" => Ok(Self::Dynamic),
            _ => Err(VSwitchError::BadInput(format!(
                "unknown LID scheme '{s}' (known: prepopulated, dynamic)"
            ))),
        }
    }
}

/// One VF of a hypervisor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Vf {
    /// The VF's CA node.
    pub node: NodeId,
    /// The vSwitch port it hangs from.
    pub vswitch_port: PortNum,
    /// Its LID (unset: dynamic scheme without a VM).
    pub lid: Lid,
    /// The VM it holds.
    pub vm: Option<usize>,
}

/// A hypervisor: its vSwitch, PF and VFs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Hypervisor {
    /// Name (the PF's node description).
    pub name: String,
    /// The vSwitch node.
    pub vswitch: NodeId,
    /// The vSwitch's LID.
    pub vswitch_lid: Lid,
    /// The vSwitch's uplink port.
    pub uplink: PortNum,
    /// The physical leaf switch.
    pub leaf: NodeId,
    /// The leaf's port to the vSwitch.
    pub leaf_port: PortNum,
    /// The PF's CA node.
    pub pf: NodeId,
    /// The PF's LID.
    pub pf_lid: Lid,
    /// The VFs in port order.
    pub vfs: Vec<Vf>,
}

impl Hypervisor {
    /// VFs holding a VM.
    pub fn running(&self) -> usize {
        self.vfs.iter().filter(|v| v.vm.is_some()).count()
    }

    /// The first free VF.
    pub fn free_vf(&self) -> Option<usize> {
        self.vfs.iter().position(|v| v.vm.is_none())
    }
}

/// A VM and its three addresses.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Vm {
    /// Name.
    pub name: String,
    /// Its LID (moves with it).
    pub lid: Lid,
    /// Its vGUID (moves with it).
    pub vguid: Guid,
    /// Hosting hypervisor.
    pub hypervisor: usize,
    /// VF on that hypervisor.
    pub vf: usize,
}

impl Vm {
    /// The GID: subnet prefix and vGUID.
    pub fn gid(&self) -> u128 {
        ((GID_PREFIX as u128) << 64) | self.vguid.0 as u128
    }
}

/// What booting a VM cost.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BootReport {
    /// The VM's index.
    pub vm: usize,
    /// Its LID.
    pub lid: Lid,
    /// LFT SMPs to physical switches (dynamic scheme: one per switch).
    pub switch_smps: usize,
    /// SMPs to the hypervisor (LID and vGUID on the VF).
    pub hypervisor_smps: usize,
}

/// A virtualized subnet as its subnet manager sees it.
#[derive(Clone, Debug)]
pub struct VirtualFabric {
    pub(crate) fabric: Fabric,
    pub(crate) scheme: Scheme,
    pub(crate) hyps: Vec<Hypervisor>,
    pub(crate) vms: Vec<Option<Vm>>,
    pub(crate) by_name: HashMap<String, usize>,
    pub(crate) tables: ForwardingTables,
    pub(crate) physical: Vec<NodeId>,
    pub(crate) lid_used: Vec<bool>,
    pub(crate) next_vguid: u64,
    pub(crate) tree: Result<TreeInfo, String>,
}

impl VirtualFabric {
    /// Reads a virtualized fabric: vSwitches by their single uplink, the
    /// placement from the VF descriptions (dynamic scheme: a VF with a LID
    /// holds a VM; unnamed VMs are called `vm-<LID>`), and routes it with
    /// `vswitch-ftree`.
    pub fn from_fabric(fabric: Fabric, scheme: Scheme) -> Result<Self, VSwitchError> {
        fabric
            .lid_table()
            .map_err(|e| VSwitchError::BadInput(format!("the fabric's LIDs are unusable: {e}")))?;
        let found = find_vswitches(&fabric);
        if found.is_empty() {
            return Err(VSwitchError::BadInput(
                "no vSwitch found (a vSwitch is a switch with exactly one link to another switch and only CAs otherwise)".into(),
            ));
        }
        let vsw: std::collections::HashSet<NodeId> = found.iter().map(|v| v.node).collect();
        let physical: Vec<NodeId> = fabric.switches().filter(|s| !vsw.contains(s)).collect();
        let mut lid_used = vec![false; UNICAST_LIDS as usize + 1];
        for (_, p) in fabric.lid_ports() {
            if let Some(u) = lid_used.get_mut(p.lid.0 as usize) {
                *u = true;
            }
        }
        let mut vf = Self {
            scheme,
            hyps: Vec::new(),
            vms: Vec::new(),
            by_name: HashMap::new(),
            tables: ForwardingTables::new(&fabric),
            physical,
            lid_used,
            next_vguid: 0,
            tree: Err(String::new()),
            fabric,
        };
        let mut max_guid = 0u64;
        for v in &found {
            let name = vf.fabric.node(v.pf.node).description.clone();
            let mut vfs = Vec::new();
            for f in &v.vfs {
                if scheme == Scheme::Prepopulated && !f.lid.is_set() {
                    return Err(VSwitchError::BadInput(format!(
                        "VF port of '{}' has no LID; the prepopulated scheme gives every VF one",
                        vf.fabric.node(f.node).description
                    )));
                }
                vfs.push(Vf {
                    node: f.node,
                    vswitch_port: f.vswitch_port,
                    lid: f.lid,
                    vm: None,
                });
            }
            for n in std::iter::once(v.pf.node).chain(v.vfs.iter().map(|f| f.node)) {
                max_guid = max_guid.max(vf.fabric.node(n).guid.0);
            }
            vf.hyps.push(Hypervisor {
                name,
                vswitch: v.node,
                vswitch_lid: v.lid,
                uplink: v.uplink,
                leaf: v.leaf,
                leaf_port: v.leaf_port,
                pf: v.pf.node,
                pf_lid: v.pf.lid,
                vfs,
            });
        }
        vf.next_vguid = (max_guid | 0xFF).wrapping_add(1) | (1 << 62);
        let mut names = std::collections::HashSet::new();
        for h in &vf.hyps {
            if !names.insert(h.name.clone()) {
                return Err(VSwitchError::BadInput(format!(
                    "two hypervisors are called '{}'; hypervisor names (PF descriptions) must be unique",
                    h.name
                )));
            }
        }
        // Placement from the VF descriptions.
        for hi in 0..vf.hyps.len() {
            for k in 0..vf.hyps[hi].vfs.len() {
                let node = vf.hyps[hi].vfs[k].node;
                let desc = vf.fabric.node(node).description.clone();
                let tagged = desc
                    .find(VM_TAG)
                    .map(|i| desc[i + VM_TAG.len()..].trim().to_string());
                let lid = vf.hyps[hi].vfs[k].lid;
                let name = match (scheme, tagged) {
                    (_, Some(n)) if !n.is_empty() => n,
                    (Scheme::Dynamic, _) if lid.is_set() => format!("vm-{}", lid.0),
                    _ => continue,
                };
                if !lid.is_set() {
                    return Err(VSwitchError::BadInput(format!(
                        "VF '{desc}' holds a VM but has no LID"
                    )));
                }
                vf.attach(name, hi, k, lid)?;
            }
        }
        vf.tree = TreeInfo::build(&vf).map_err(|e| e.to_string());
        vf.reroute()?;
        Ok(vf)
    }

    /// Builds a virtual fabric on a physical one (see [`crate::build`]).
    pub fn virtualize(physical: &Fabric, vfs: u32, scheme: Scheme) -> Result<Self, VSwitchError> {
        Self::from_fabric(crate::build::virtualize(physical, vfs, scheme)?, scheme)
    }

    fn attach(
        &mut self,
        name: String,
        hyp: usize,
        vf: usize,
        lid: Lid,
    ) -> Result<usize, VSwitchError> {
        if self.by_name.contains_key(&name) {
            return Err(VSwitchError::DuplicateVm(name));
        }
        let idx = self.vms.len();
        let vguid = Guid(self.next_vguid);
        self.next_vguid = self.next_vguid.wrapping_add(1);
        self.vms.push(Some(Vm {
            name: name.clone(),
            lid,
            vguid,
            hypervisor: hyp,
            vf,
        }));
        self.by_name.insert(name.clone(), idx);
        self.hyps[hyp].vfs[vf].vm = Some(idx);
        let node = self.hyps[hyp].vfs[vf].node;
        self.set_description(node, Some(&name));
        Ok(idx)
    }

    pub(crate) fn set_description(&mut self, node: NodeId, vm: Option<&str>) {
        let d = &self.fabric.node(node).description;
        let base = d.find(VM_TAG).map_or(d.as_str(), |i| &d[..i]).to_string();
        let new = match vm {
            Some(v) => format!("{base}{VM_TAG}{v}"),
            None => base,
        };
        self.fabric.set_description(node, new);
    }

    /// Routes the current placement afresh with `vswitch-ftree`.
    pub fn reroute(&mut self) -> Result<(), VSwitchError> {
        self.tables = self.fresh_tables()?;
        Ok(())
    }

    /// A fresh `vswitch-ftree` routing of the current placement (the
    /// reference a migrated fabric is compared with).
    pub fn fresh_tables(&self) -> Result<ForwardingTables, VSwitchError> {
        let running = self.vms().map(|v| v.lid).collect();
        match VSwitchFtree::new(&EngineOptions::default())
            .with_running(running)
            .route_with_view(&self.fabric)
        {
            Ok(r) => Ok(r.0.tables),
            // Not a fat-tree: ItRC still works on any topology; route with
            // OpenSM's default engine instead.
            Err(ibcloud_routing::RoutingError::Unsupported { .. }) if self.tree.is_err() => {
                let e = ibcloud_routing::registry::engine("minhop", &EngineOptions::default())?;
                Ok(ibcloud_routing::engines::vswitch_ftree::route_copying(
                    &self.fabric,
                    e.as_ref(),
                )?
                .tables)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Replaces the tables (e.g. LFTs dumped by OpenSM for this fabric).
    pub fn set_tables(&mut self, tables: ForwardingTables) -> Result<(), VSwitchError> {
        if tables.num_nodes() != self.fabric.num_nodes() {
            return Err(VSwitchError::BadInput(format!(
                "the tables are for {} nodes, the fabric has {}",
                tables.num_nodes(),
                self.fabric.num_nodes()
            )));
        }
        self.tables = tables;
        Ok(())
    }

    /// The fabric (vSwitches, PFs, VFs; VF LIDs as they are now).
    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }

    /// The current forwarding tables.
    pub fn tables(&self) -> &ForwardingTables {
        &self.tables
    }

    /// The LID scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// Hypervisors in fabric order ("left to right").
    pub fn hypervisors(&self) -> &[Hypervisor] {
        &self.hyps
    }

    /// Physical switches (every switch that is not a vSwitch).
    pub fn physical_switches(&self) -> &[NodeId] {
        &self.physical
    }

    /// Running VMs.
    pub fn vms(&self) -> impl Iterator<Item = &Vm> + '_ {
        self.vms.iter().flatten()
    }

    /// Number of running VMs.
    pub fn num_vms(&self) -> usize {
        self.by_name.len()
    }

    /// A VM by index.
    pub fn vm(&self, idx: usize) -> Option<&Vm> {
        self.vms.get(idx).and_then(Option::as_ref)
    }

    /// Resolves a VM by name or LID (decimal or 0x hex).
    pub fn find_vm(&self, key: &str) -> Result<usize, VSwitchError> {
        if let Some(&i) = self.by_name.get(key) {
            return Ok(i);
        }
        if let Some(l) = parse_num(key) {
            if let Some(i) = self
                .vms
                .iter()
                .position(|v| v.as_ref().is_some_and(|v| v.lid.0 as u64 == l))
            {
                return Ok(i);
            }
        }
        Err(VSwitchError::UnknownVm(key.to_string()))
    }

    /// Resolves a hypervisor by name, PF LID or `#index`.
    pub fn find_hypervisor(&self, key: &str) -> Result<usize, VSwitchError> {
        if let Some(i) = self.hyps.iter().position(|h| h.name == key) {
            return Ok(i);
        }
        // The first word of a name ("hca-00001" for "hca-00001 HCA-1"), if unique.
        let mut first = self
            .hyps
            .iter()
            .enumerate()
            .filter(|(_, h)| h.name.split_whitespace().next() == Some(key));
        if let (Some((i, _)), None) = (first.next(), first.next()) {
            return Ok(i);
        }
        if let Some(ix) = key.strip_prefix('#').and_then(parse_num) {
            if (ix as usize) < self.hyps.len() {
                return Ok(ix as usize);
            }
        } else if let Some(l) = parse_num(key) {
            if let Some(i) = self.hyps.iter().position(|h| h.pf_lid.0 as u64 == l) {
                return Ok(i);
            }
        }
        Err(VSwitchError::UnknownHypervisor(key.to_string()))
    }

    /// The lowest free unicast LID.
    pub(crate) fn free_lid(&self) -> Option<Lid> {
        (1..=UNICAST_LIDS as usize)
            .find(|&l| !self.lid_used[l])
            .map(|l| Lid(l as u16))
    }

    /// Boots a VM on a hypervisor (first free VF). Prepopulated: it takes the
    /// VF's LID, no LFT changes. Dynamic: it takes the lowest free LID and
    /// every physical switch copies the PF's entry (one SMP each); vSwitch
    /// tables learn the LID (their own VF's port on the host, the uplink
    /// elsewhere). Errors leave everything unchanged.
    pub fn boot_vm(&mut self, name: &str, hypervisor: usize) -> Result<BootReport, VSwitchError> {
        let h = self
            .hyps
            .get(hypervisor)
            .ok_or_else(|| VSwitchError::UnknownHypervisor(format!("#{hypervisor}")))?;
        if self.by_name.contains_key(name) {
            return Err(VSwitchError::DuplicateVm(name.to_string()));
        }
        let k = h
            .free_vf()
            .ok_or_else(|| VSwitchError::NoFreeVf(h.name.clone()))?;
        let (lid, switch_smps) = match self.scheme {
            Scheme::Prepopulated => (h.vfs[k].lid, 0),
            Scheme::Dynamic => {
                let lid = self.free_lid().ok_or(VSwitchError::LidExhausted {
                    scheme: "dynamic",
                    needed: self.fabric.lids_in_use() as u64 + 1,
                })?;
                let pf = h.pf_lid;
                let node = h.vfs[k].node;
                let vport = h.vfs[k].vswitch_port;
                let vsw = h.vswitch;
                let mut smps = 0;
                for &sw in &self.physical {
                    let p = self.tables.get(sw, pf).unwrap_or(NO_PORT);
                    self.tables.set(sw, lid, p);
                    smps += 1;
                }
                for hh in &self.hyps {
                    self.tables.set(hh.vswitch, lid, hh.uplink);
                }
                self.tables.set(vsw, lid, vport);
                self.fabric
                    .set_lid(PortRef::new(node, 1), lid, 0)
                    .map_err(|e| VSwitchError::BadInput(e.to_string()))?;
                self.lid_used[lid.0 as usize] = true;
                self.hyps[hypervisor].vfs[k].lid = lid;
                (lid, smps)
            }
        };
        let vm = self.attach(name.to_string(), hypervisor, k, lid)?;
        Ok(BootReport {
            vm,
            lid,
            switch_smps,
            hypervisor_smps: if self.scheme == Scheme::Dynamic { 2 } else { 1 },
        })
    }

    /// Shuts a VM down: its VF becomes free; dynamic: its LID is released
    /// and its entries invalidated (one SMP per physical switch, returned).
    pub fn shutdown_vm(&mut self, vm: usize) -> Result<usize, VSwitchError> {
        let v = self
            .vm(vm)
            .cloned()
            .ok_or_else(|| VSwitchError::UnknownVm(format!("#{vm}")))?;
        let node = self.hyps[v.hypervisor].vfs[v.vf].node;
        let mut smps = 0;
        if self.scheme == Scheme::Dynamic {
            for &sw in &self.physical {
                self.tables.set(sw, v.lid, NO_PORT);
                smps += 1;
            }
            for hh in &self.hyps {
                self.tables.set(hh.vswitch, v.lid, NO_PORT);
            }
            self.fabric
                .set_lid(PortRef::new(node, 1), Lid::NONE, 0)
                .map_err(|e| VSwitchError::BadInput(e.to_string()))?;
            self.lid_used[v.lid.0 as usize] = false;
            self.hyps[v.hypervisor].vfs[v.vf].lid = Lid::NONE;
        }
        self.hyps[v.hypervisor].vfs[v.vf].vm = None;
        self.by_name.remove(&v.name);
        self.vms[vm] = None;
        self.set_description(node, None);
        Ok(smps)
    }

    /// FTreeMinRC's view of the tree, or why there is none.
    pub fn tree(&self) -> Result<&TreeInfo, VSwitchError> {
        self.tree
            .as_ref()
            .map_err(|e| VSwitchError::NotFatTree(e.clone()))
    }
}

fn parse_num(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibcloud_fabric::generate::preset;

    #[test]
    fn dynamic_boot_refuses_when_lids_run_out_and_changes_nothing() {
        let p = preset("4-ary-2-full").unwrap().build().unwrap();
        let mut vf = VirtualFabric::virtualize(&p, 2, Scheme::Dynamic).unwrap();
        vf.boot_vm("a", 0).unwrap();
        // Every other unicast LID taken (as if by VMs elsewhere in the subnet).
        vf.lid_used.iter_mut().skip(1).for_each(|u| *u = true);
        let tables = vf.tables.clone();
        let err = vf.boot_vm("b", 1).unwrap_err();
        assert!(
            matches!(
                err,
                VSwitchError::LidExhausted {
                    scheme: "dynamic",
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(vf.tables, tables);
        assert_eq!(vf.num_vms(), 1);
        assert!(vf.hyps[1]
            .vfs
            .iter()
            .all(|f| f.vm.is_none() && !f.lid.is_set()));
        // Shutdown releases the LID, and the next boot takes it.
        let a = vf.find_vm("a").unwrap();
        let lid = vf.vm(a).unwrap().lid;
        assert_eq!(vf.shutdown_vm(a).unwrap(), 12);
        assert_eq!(vf.boot_vm("b", 1).unwrap().lid, lid);
    }

    #[test]
    fn vm_addresses() {
        let p = preset("4-ary-2-full").unwrap().build().unwrap();
        let mut vf = VirtualFabric::virtualize(&p, 2, Scheme::Prepopulated).unwrap();
        let r = vf.boot_vm("a", 3).unwrap();
        assert_eq!(r.switch_smps, 0);
        assert_eq!(r.lid, vf.hyps[3].vfs[0].lid);
        let vm = vf.vm(r.vm).unwrap();
        assert_eq!(vm.gid() >> 64, GID_PREFIX as u128);
        assert_eq!(vf.find_vm(&vm.lid.0.to_string()).unwrap(), r.vm);
        assert_eq!(vf.find_hypervisor("hca-00004").unwrap(), 3);
        assert_eq!(vf.find_hypervisor("#3").unwrap(), 3);
        assert!(Scheme::parse("static").is_err());
    }
}
