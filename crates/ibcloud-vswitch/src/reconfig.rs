//! Reconfiguration after a live migration (Paper II §VI, Paper V §6):
//! ItRC (LID swap under prepopulated LIDs, copy of the destination PF's
//! entries under dynamic LIDs), FTreeMinRC (the same per-switch change on the
//! marked switches only, active routes first), a full re-route for
//! comparison, and the partially static add-on (the migrating LID set to
//! port 255 on the switches to be updated first).
//!
//! A [`Plan`] is computed from the current tables without touching them: the
//! exact LFT entries to write and the SMPs to send — one per (physical
//! switch, 64-LID block) whose entries change, plus the hypervisor address
//! SMPs (LID on the destination VF, the source VF's LID set or unset, the
//! vGUID on the destination). The vSwitch tables of the emulated fabric
//! change with the VF LIDs (in hardware the address SMPs do that), so they
//! are written but not counted as switch SMPs. [`VirtualFabric::apply`]
//! writes a plan; nothing can fail half-way.

use std::collections::BTreeSet;

use ibcloud_fabric::lft::{ForwardingTables, NO_PORT};
use ibcloud_fabric::{Lid, NodeId, PortNum, PortRef};
use serde::Serialize;

use crate::error::VSwitchError;
use crate::marking::lft_path;
use crate::model::{Scheme, VirtualFabric};

/// One switch's changes: switch, on an active route, (LID, new port) pairs.
type SwitchChange = (NodeId, bool, Vec<(Lid, PortNum)>);

/// How the tables are fixed after a migration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Method {
    /// Every physical switch whose entries differ (Paper II).
    Itrc,
    /// Only the switches FTreeMinRC marks (Paper V).
    FtreeMinRc,
    /// A fresh `vswitch-ftree` routing, sent as a differential update.
    Full,
}

impl Method {
    /// `itrc`, `ftree-minrc`, `full`.
    pub fn name(self) -> &'static str {
        match self {
            Method::Itrc => "itrc",
            Method::FtreeMinRc => "ftree-minrc",
            Method::Full => "full",
        }
    }

    /// Parses a method name.
    pub fn parse(s: &str) -> Result<Self, VSwitchError> {
        match s.to_ascii_lowercase().replace('_', "-").as_str() {
            "itrc" => Ok(Self::Itrc),
            "ftree-minrc" | "ftreeminrc" | "minrc" => Ok(Self::FtreeMinRc),
            "full" => Ok(Self::Full),
            _ => Err(VSwitchError::BadInput(format!(
                "unknown method '{s}' (known: itrc, ftree-minrc, full)"
            ))),
        }
    }
}

/// What an SMP does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SmpKind {
    /// Partially static: a block with the migrating LID set to port 255.
    Invalidate,
    /// A LinearForwardingTable block.
    Lft,
    /// Set a LID on a VF (hypervisor).
    SetLid,
    /// Remove a LID from a VF (hypervisor).
    UnsetLid,
    /// Set the vGUID on the destination VF (hypervisor).
    SetVGuid,
}

/// One SMP.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Smp {
    /// What it does.
    pub kind: SmpKind,
    /// The switch (LFT kinds) or the hypervisor's vSwitch (address kinds).
    pub node: NodeId,
    /// LFT block (LFT kinds) or 0.
    pub block: u32,
    /// The LID it is about (address kinds) or the first LID of the block.
    pub lid: Lid,
    /// On a switch carrying an active route (FTreeMinRC sends these first).
    pub active: bool,
}

/// Everything a migration changes, computed before anything is changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// The VM.
    pub vm: usize,
    /// Source and destination hypervisors.
    pub src: usize,
    /// Destination hypervisor.
    pub dst: usize,
    /// VF on the source and on the destination.
    pub src_vf: usize,
    /// VF on the destination.
    pub dst_vf: usize,
    /// The VM's LID.
    pub vm_lid: Lid,
    /// Prepopulated: the destination VF's LID, which moves to the source VF.
    pub swapped_lid: Option<Lid>,
    /// Method.
    pub method: Method,
    /// Scheme.
    pub scheme: Scheme,
    /// Partially static (invalidation first).
    pub partially_static: bool,
    /// LFT writes (switch, LID, new port), physical and vSwitch, in send order.
    pub writes: Vec<(NodeId, Lid, PortNum)>,
    /// SMPs in send order.
    pub smps: Vec<Smp>,
    /// Physical switches whose tables change, in send order.
    pub updated: Vec<NodeId>,
    /// FTreeMinRC: marked switches.
    pub marked: Vec<NodeId>,
    /// FTreeMinRC: marked switches on the active routes.
    pub active: Vec<NodeId>,
    /// Full method: SMPs of a traditional full distribution (switches × blocks).
    pub full_distribution_smps: usize,
}

impl Plan {
    /// LFT SMPs to physical switches (the papers' count), invalidations included.
    pub fn switch_smps(&self) -> usize {
        self.smps
            .iter()
            .filter(|s| matches!(s.kind, SmpKind::Lft | SmpKind::Invalidate))
            .count()
    }

    /// SMPs to hypervisors.
    pub fn hypervisor_smps(&self) -> usize {
        self.smps.len() - self.switch_smps()
    }
}

impl VirtualFabric {
    /// Plans the migration of `vm` to `dst` (see [`Plan`]); the fabric is not
    /// changed. Refused: unknown VM or hypervisor, the same hypervisor, no
    /// free VF, FTreeMinRC on a fabric that is not a fat-tree.
    pub fn plan_migration(
        &self,
        vm: usize,
        dst: usize,
        method: Method,
        partially_static: bool,
    ) -> Result<Plan, VSwitchError> {
        let v = self
            .vm(vm)
            .ok_or_else(|| VSwitchError::UnknownVm(format!("#{vm}")))?;
        let dh = self
            .hyps
            .get(dst)
            .ok_or_else(|| VSwitchError::UnknownHypervisor(format!("#{dst}")))?;
        let (src, src_vf) = (v.hypervisor, v.vf);
        let sh = &self.hyps[src];
        if src == dst {
            return Err(VSwitchError::SameHypervisor {
                vm: v.name.clone(),
                hypervisor: sh.name.clone(),
            });
        }
        let dst_vf = dh
            .free_vf()
            .ok_or_else(|| VSwitchError::NoFreeVf(dh.name.clone()))?;
        let l_vm = v.lid;
        let l_x = (self.scheme == Scheme::Prepopulated).then(|| dh.vfs[dst_vf].lid);
        let mut plan = Plan {
            vm,
            src,
            dst,
            src_vf,
            dst_vf,
            vm_lid: l_vm,
            swapped_lid: l_x,
            method,
            scheme: self.scheme,
            partially_static,
            writes: Vec::new(),
            smps: Vec::new(),
            updated: Vec::new(),
            marked: Vec::new(),
            active: Vec::new(),
            full_distribution_smps: 0,
        };
        // Which physical switches may change, in send order, and which are active.
        let (order, active): (Vec<NodeId>, Vec<bool>) = match method {
            Method::Itrc => (self.physical.clone(), vec![false; self.physical.len()]),
            Method::FtreeMinRc => {
                let tree = self.tree()?;
                let m = tree.mark(sh.leaf, dh.leaf)?;
                let mut on_path: BTreeSet<NodeId> = BTreeSet::new();
                // The route the VM's traffic takes from its old region to
                // its new one (Paper V Fig. 5 counts this one path).
                on_path.extend(lft_path(self, &self.tables, sh.leaf, dh.pf_lid));
                plan.active = m
                    .marked
                    .iter()
                    .copied()
                    .filter(|s| on_path.contains(s))
                    .collect();
                plan.marked = m.marked.clone();
                let mut order: Vec<NodeId> = plan.active.clone();
                order.extend(m.marked.iter().copied().filter(|s| !on_path.contains(s)));
                let act = order.iter().map(|s| on_path.contains(s)).collect();
                (order, act)
            }
            Method::Full => (Vec::new(), Vec::new()),
        };
        let mut switch_changes: Vec<SwitchChange> = Vec::new();
        if method == Method::Full {
            let next = self.after_move(&plan)?;
            let fresh = next.fresh_tables()?;
            plan.full_distribution_smps = self.physical.len() * self.fabric.lft_blocks();
            for &sw in &self.physical {
                let ch: Vec<(Lid, PortNum)> = fresh
                    .differing_entries(&self.tables, sw)
                    .map(|(l, new, _)| (l, new))
                    .collect();
                if !ch.is_empty() {
                    switch_changes.push((sw, false, ch));
                }
            }
            // vSwitch tables: everything that differs.
            for h in &self.hyps {
                for (l, new, _) in fresh.differing_entries(&self.tables, h.vswitch) {
                    plan.writes.push((h.vswitch, l, new));
                }
            }
        } else {
            for (i, &sw) in order.iter().enumerate() {
                let t = &self.tables;
                let cur = t.get(sw, l_vm).unwrap_or(NO_PORT);
                let mut ch = Vec::new();
                match l_x {
                    Some(lx) => {
                        let other = t.get(sw, lx).unwrap_or(NO_PORT);
                        if cur != other {
                            ch.push((l_vm, other));
                            ch.push((lx, cur));
                        }
                    }
                    None => {
                        let p = t.get(sw, dh.pf_lid).unwrap_or(NO_PORT);
                        if cur != p {
                            ch.push((l_vm, p));
                        }
                    }
                }
                if !ch.is_empty() {
                    switch_changes.push((sw, active[i], ch));
                }
            }
            // vSwitch tables of the two hypervisors.
            let (sv, dv) = (sh.vswitch, dh.vswitch);
            plan.writes.push((sv, l_vm, sh.uplink));
            plan.writes.push((dv, l_vm, dh.vfs[dst_vf].vswitch_port));
            if let Some(lx) = l_x {
                plan.writes.push((sv, lx, sh.vfs[src_vf].vswitch_port));
                plan.writes.push((dv, lx, dh.uplink));
            }
        }
        // Partially static: invalidate the migrating LID(s) first.
        if partially_static {
            for (sw, act, ch) in &switch_changes {
                let blocks: BTreeSet<u32> = ch
                    .iter()
                    .map(|(l, _)| l.0 as u32 / 64)
                    .filter(|&b| {
                        b == l_vm.0 as u32 / 64 || l_x.is_some_and(|x| x.0 as u32 / 64 == b)
                    })
                    .collect();
                for b in blocks {
                    plan.smps.push(Smp {
                        kind: SmpKind::Invalidate,
                        node: *sw,
                        block: b,
                        lid: Lid((b * 64) as u16),
                        active: *act,
                    });
                }
            }
        }
        for (sw, act, ch) in switch_changes {
            let blocks: BTreeSet<u32> = ch.iter().map(|(l, _)| l.0 as u32 / 64).collect();
            for b in blocks {
                plan.smps.push(Smp {
                    kind: SmpKind::Lft,
                    node: sw,
                    block: b,
                    lid: Lid((b * 64) as u16),
                    active: act,
                });
            }
            plan.updated.push(sw);
            plan.writes.extend(ch.into_iter().map(|(l, p)| (sw, l, p)));
        }
        // Hypervisor address SMPs.
        let addr = |kind, node, lid| Smp {
            kind,
            node,
            block: 0,
            lid,
            active: false,
        };
        plan.smps.push(addr(SmpKind::SetLid, dh.vswitch, l_vm));
        match l_x {
            Some(lx) => plan.smps.push(addr(SmpKind::SetLid, sh.vswitch, lx)),
            None => plan.smps.push(addr(SmpKind::UnsetLid, sh.vswitch, l_vm)),
        }
        plan.smps.push(addr(SmpKind::SetVGuid, dh.vswitch, l_vm));
        Ok(plan)
    }

    /// A copy with the VM moved (addresses only, tables untouched).
    fn after_move(&self, plan: &Plan) -> Result<VirtualFabric, VSwitchError> {
        let mut next = self.clone();
        next.move_addresses(plan)?;
        Ok(next)
    }

    /// Moves the VM's LID and vGUID and the VF bookkeeping.
    fn move_addresses(&mut self, plan: &Plan) -> Result<(), VSwitchError> {
        let bad = |e: ibcloud_fabric::TopologyError| VSwitchError::BadInput(e.to_string());
        let src_node = self.hyps[plan.src].vfs[plan.src_vf].node;
        let dst_node = self.hyps[plan.dst].vfs[plan.dst_vf].node;
        let src_lid = plan.swapped_lid.unwrap_or(Lid::NONE);
        self.fabric
            .set_lid(PortRef::new(dst_node, 1), plan.vm_lid, 0)
            .map_err(bad)?;
        self.fabric
            .set_lid(PortRef::new(src_node, 1), src_lid, 0)
            .map_err(bad)?;
        self.hyps[plan.src].vfs[plan.src_vf].lid = src_lid;
        self.hyps[plan.src].vfs[plan.src_vf].vm = None;
        self.hyps[plan.dst].vfs[plan.dst_vf].lid = plan.vm_lid;
        self.hyps[plan.dst].vfs[plan.dst_vf].vm = Some(plan.vm);
        let name = self.vms[plan.vm].as_ref().map(|v| v.name.clone());
        if let Some(v) = self.vms[plan.vm].as_mut() {
            v.hypervisor = plan.dst;
            v.vf = plan.dst_vf;
        }
        self.set_description(src_node, None);
        self.set_description(dst_node, name.as_deref());
        Ok(())
    }

    /// Applies a plan made by [`VirtualFabric::plan_migration`] on this
    /// state. A plan for another state is refused, with nothing changed.
    pub fn apply(&mut self, plan: &Plan) -> Result<(), VSwitchError> {
        let ok = self.vm(plan.vm).is_some_and(|v| {
            v.hypervisor == plan.src && v.vf == plan.src_vf && v.lid == plan.vm_lid
        }) && self
            .hyps
            .get(plan.dst)
            .and_then(|h| h.vfs.get(plan.dst_vf))
            .is_some_and(|f| f.vm.is_none());
        if !ok {
            return Err(VSwitchError::BadInput(
                "the plan was made for another state of the fabric".into(),
            ));
        }
        self.move_addresses(plan)?;
        for &(sw, lid, port) in &plan.writes {
            self.tables.set(sw, lid, port);
        }
        Ok(())
    }

    /// Plans and applies a migration; returns the plan.
    pub fn migrate(
        &mut self,
        vm: usize,
        dst: usize,
        method: Method,
        partially_static: bool,
    ) -> Result<Plan, VSwitchError> {
        let plan = self.plan_migration(vm, dst, method, partially_static)?;
        self.apply(&plan)?;
        Ok(plan)
    }

    /// The tables a plan would leave (for safety checks before applying).
    pub fn tables_after(&self, plan: &Plan) -> ForwardingTables {
        let mut t = self.tables.clone();
        for &(sw, lid, port) in &plan.writes {
            t.set(sw, lid, port);
        }
        t
    }
}
