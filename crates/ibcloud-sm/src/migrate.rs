//! Live VM migration on a vSwitch fabric (Papers II and V): the plan of
//! `ibcloud-vswitch` (ItRC, FTreeMinRC or a full differential update;
//! prepopulated or dynamic LIDs; optionally partially static) is sent as
//! real SMPs, in the plan's order:
//!
//! - `Invalidate`: the block holding the VM's LID with that entry set to 255;
//! - `Lft`: the block as the plan leaves it;
//! - `SetLid` / `UnsetLid`: PortInfo Set of the destination (source) VF's LID;
//! - `SetVGuid`: GUIDInfo Set of the vGUID on the destination VF (ibsim
//!   answers "method unsupported": it does not implement GUIDInfo Set; the
//!   SMP is sent and counted, and the refusal reported).
//!
//! Blocks the plan does not count (vSwitch LFTs) but that differ afterwards
//! are sent too and reported apart, so the fabric ends exactly as the model.
//!
//! **Transition check.** Before anything is sent, the plan goes through
//! `ibcloud-vswitch`'s transition check ([`ibcloud_vswitch::safety::transition`]):
//! the channel dependency graph of the union of old and new routes, because
//! while the SMPs travel some switches hold old and others new entries. With
//! [`TransitionPolicy::Refuse`] (the default) a plan whose union has a cycle
//! is refused and nothing is sent; [`TransitionPolicy::Report`] sends it and
//! reports the cycle; `Off` skips the check. A partially static plan is
//! checked as it runs: its invalidation phase only removes entries (old ∪
//! invalidated = old) and its update phase only adds (invalidated ∪ new =
//! new), so the old and the new tables are each checked, and the SM waits for
//! every invalidation to be acknowledged before it sends the first update.

use crate::discover::Discovery;
use crate::mads::{Mads, Request};
use crate::program::{block_of, Held};
use crate::transport::Transport;
use crate::wire::{attr, LinkState, PortInfoRepr, Route, SMP_DATA_LEN};
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Fabric, Lid, NodeId, PortRef};
use ibcloud_vswitch::safety::{transition, TransitionReport};
use ibcloud_vswitch::{Method, Plan, Scheme, SmpKind, VirtualFabric};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;

/// What a live migration did.
#[derive(Clone, Debug, Serialize)]
pub struct MigrationReport {
    /// VM name.
    pub vm: String,
    /// Source and destination hypervisors (PF descriptions).
    pub from: String,
    /// Destination.
    pub to: String,
    /// Method.
    pub method: String,
    /// The VM's LID (moves with it).
    pub vm_lid: u16,
    /// Prepopulated: the destination VF's LID, moved to the source VF.
    pub swapped_lid: Option<u16>,
    /// The model's SMPs: switch (LFT and invalidation) and hypervisor.
    pub predicted_switch_smps: usize,
    /// Hypervisor SMPs the model plans (LID and vGUID).
    pub predicted_hypervisor_smps: usize,
    /// SMPs sent for the plan, by kind of the plan.
    pub observed: BTreeMap<String, usize>,
    /// Observed switch SMPs (LFT + invalidation), retries excluded.
    pub observed_switch_smps: usize,
    /// Observed hypervisor SMPs.
    pub observed_hypervisor_smps: usize,
    /// Extra LFT blocks sent because they differed after the plan (vSwitches).
    pub extra_blocks: usize,
    /// SMPs that failed, with the reason.
    pub failures: Vec<String>,
    /// The transition check (None with [`TransitionPolicy::Off`]).
    pub transition: Option<TransitionCheck>,
    /// Why the SM refused the plan (nothing was sent), if it did.
    pub refused: Option<String>,
    /// Seconds from the decision to the last acknowledgement.
    pub seconds: f64,
}

/// What the SM does when the transition check finds a possible deadlock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum TransitionPolicy {
    /// Refuse the plan; nothing is sent.
    #[default]
    Refuse,
    /// Send it and report the cycle.
    Report,
    /// Do not check.
    Off,
}

impl TransitionPolicy {
    /// Parses `refuse`, `report` or `off`.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "refuse" => Ok(Self::Refuse),
            "report" => Ok(Self::Report),
            "off" => Ok(Self::Off),
            o => Err(format!(
                "unknown transition check policy '{o}' (refuse, report, off)"
            )),
        }
    }
    fn name(self) -> &'static str {
        match self {
            Self::Refuse => "refuse",
            Self::Report => "report",
            Self::Off => "off",
        }
    }
}

/// The transition check of one migration, as the SM ran it.
#[derive(Clone, Debug, Serialize)]
pub struct TransitionCheck {
    /// `refuse` or `report`.
    pub policy: String,
    /// What was checked: `old ∪ new` (one-step update) or `old, then new`
    /// (partially static: invalidation phase, update phase).
    pub checked: String,
    /// No possible deadlock in what is checked.
    pub deadlock_free: bool,
    /// A cycle's channels (`'switch' port N`), when there is one.
    pub cycle: Vec<String>,
    /// Channels and dependencies of the (largest) graph checked.
    pub channels: usize,
    /// Distinct dependencies.
    pub dependencies: usize,
    /// The one-step (old ∪ new) verdict, also for a partially static plan:
    /// whether the plan would have needed it.
    pub one_step_deadlock_free: bool,
    /// Seconds the check took.
    pub seconds: f64,
}

/// Runs the transition check of `plan` on `vf` (tables before the plan).
pub fn check_transition(
    vf: &VirtualFabric,
    plan: &Plan,
    policy: TransitionPolicy,
) -> Result<TransitionCheck, String> {
    let t0 = Instant::now();
    let one_step = transition(vf, plan);
    let (checked, verdict): (&str, TransitionReport) = if plan.partially_static {
        // Each phase is as safe as the tables it ends in: check old, then new.
        let mut none = plan.clone();
        none.writes.clear();
        let old = transition(vf, &none);
        let mut after = vf.clone();
        after
            .set_tables(vf.tables_after(plan))
            .map_err(|e| e.to_string())?;
        let new = transition(&after, &none);
        let worse = if old.deadlock_free { new } else { old };
        ("old, then new (partially static)", worse)
    } else {
        ("old ∪ new", one_step.clone())
    };
    Ok(TransitionCheck {
        policy: policy.name().into(),
        checked: checked.into(),
        deadlock_free: verdict.deadlock_free,
        cycle: verdict.cycle,
        channels: verdict.channels,
        dependencies: verdict.dependencies,
        one_step_deadlock_free: one_step.deadlock_free,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// One plan SMP ready to send: its kind, the request, and the discovered
/// port whose PortInfo its answer updates.
type PlannedSmp = (SmpKind, Request, Option<(usize, u8)>);

fn kind_name(k: SmpKind) -> &'static str {
    match k {
        SmpKind::Invalidate => "invalidate",
        SmpKind::Lft => "lft",
        SmpKind::SetLid => "set-lid",
        SmpKind::UnsetLid => "unset-lid",
        SmpKind::SetVGuid => "set-vguid",
    }
}

/// The virtual view of a programmed fabric.
pub fn virtual_fabric(
    fabric: &Fabric,
    tables: &ForwardingTables,
    scheme: Scheme,
) -> Result<VirtualFabric, String> {
    let mut vf = VirtualFabric::from_fabric(fabric.clone(), scheme).map_err(|e| e.to_string())?;
    vf.set_tables(tables.clone()).map_err(|e| e.to_string())?;
    Ok(vf)
}

/// The discovered node behind a fabric node, and the directed route to it.
fn route_to(d: &Discovery, fabric: &Fabric, node: NodeId, port: u8) -> Option<(usize, Route)> {
    let guid = fabric.node(node).guid.0;
    let i = *d.by_guid.get(&guid)?;
    Some((i, Route::Directed(d.nodes[i].route_to(port)?.clone())))
}

/// Plans and performs a migration on the live fabric. On success the
/// model (`fabric` LIDs, `tables`) is updated to what the switches hold.
#[allow(clippy::too_many_arguments)]
pub fn migrate<T: Transport>(
    mads: &mut Mads<T>,
    d: &mut Discovery,
    ids: &[NodeId],
    fabric: &mut Fabric,
    tables: &mut ForwardingTables,
    held: &mut Held,
    state: &mut Option<VirtualFabric>,
    scheme: Scheme,
    vm: &str,
    dst: &str,
    method: Method,
    partially_static: bool,
    policy: TransitionPolicy,
) -> Result<MigrationReport, String> {
    let started = Instant::now();
    // The VM placement lives in the virtual model (NodeDescriptions on the
    // fabric do not move with a VM), kept from one migration to the next.
    if state.is_none() {
        *state = Some(virtual_fabric(fabric, tables, scheme)?);
    }
    let vf = state.as_mut().ok_or("no virtual fabric")?;
    let vm_idx = vf.find_vm(vm).map_err(|e| e.to_string())?;
    let dst_idx = vf.find_hypervisor(dst).map_err(|e| e.to_string())?;
    let plan: Plan = vf
        .plan_migration(vm_idx, dst_idx, method, partially_static)
        .map_err(|e| e.to_string())?;
    let after = vf.tables_after(&plan);
    let hyps = vf.hypervisors();
    let src_vf = hyps[plan.src].vfs[plan.src_vf].node;
    let dst_vf = hyps[plan.dst].vfs[plan.dst_vf].node;
    let vm_name = vf.vm(vm_idx).map(|v| v.name.clone()).unwrap_or_default();
    let vguid = vf.vm(vm_idx).map(|v| v.vguid.0).unwrap_or(0);
    let mut report = MigrationReport {
        vm: vm_name,
        from: hyps[plan.src].name.clone(),
        to: hyps[plan.dst].name.clone(),
        method: plan.method.name().to_string(),
        vm_lid: plan.vm_lid.0,
        swapped_lid: plan.swapped_lid.map(|l| l.0),
        predicted_switch_smps: plan.switch_smps(),
        predicted_hypervisor_smps: plan.hypervisor_smps(),
        observed: BTreeMap::new(),
        observed_switch_smps: 0,
        observed_hypervisor_smps: 0,
        extra_blocks: 0,
        failures: Vec::new(),
        transition: None,
        refused: None,
        seconds: 0.0,
    };
    // The transition check, on the plan, before any SMP.
    if policy != TransitionPolicy::Off {
        let c = check_transition(vf, &plan, policy)?;
        if !c.deadlock_free && policy == TransitionPolicy::Refuse {
            report.refused = Some(format!(
                "transition check: while the switches move from the old to the new entries, \
                 {} can deadlock (cycle of {} channels: {}); nothing was sent. Migrate \
                 partially static (`partial`: invalidation first) or pass `check=report` to \
                 send it anyway",
                c.checked,
                c.cycle.len(),
                c.cycle.join(" → ")
            ));
        }
        report.transition = Some(c);
        if report.refused.is_some() {
            report.seconds = started.elapsed().as_secs_f64();
            return Ok(report);
        }
    }
    // Build every SMP first (nothing is sent for a plan that cannot be addressed).
    let mut reqs: Vec<PlannedSmp> = Vec::new();
    for smp in &plan.smps {
        match smp.kind {
            SmpKind::Lft | SmpKind::Invalidate => {
                let (_, route) = route_to(d, fabric, smp.node, 0).ok_or("switch not discovered")?;
                let data = if smp.kind == SmpKind::Lft {
                    block_of(after.table(smp.node), smp.block)
                } else {
                    // The migrating LIDs (the VM's, and with a swap the
                    // destination VF's) that fall in this block go to 255.
                    let mut b = block_of(tables.table(smp.node), smp.block);
                    for l in std::iter::once(plan.vm_lid).chain(plan.swapped_lid) {
                        if l.0 as u32 / Lid::PER_LFT_BLOCK as u32 == smp.block {
                            b[l.0 as usize % Lid::PER_LFT_BLOCK] = 0xff;
                        }
                    }
                    b
                };
                reqs.push((
                    smp.kind,
                    Request::set(attr::LINEAR_FORWARDING_TABLE, smp.block, route, data),
                    None,
                ));
            }
            SmpKind::SetLid | SmpKind::UnsetLid => {
                let (node, lid) = match smp.kind {
                    SmpKind::SetLid if smp.lid == plan.vm_lid => (dst_vf, plan.vm_lid.0),
                    SmpKind::SetLid => (src_vf, smp.lid.0),
                    _ => (src_vf, 0),
                };
                let (i, route) = route_to(d, fabric, node, 1).ok_or("VF not discovered")?;
                let mut pi: PortInfoRepr = d.nodes[i]
                    .ports
                    .get(&1)
                    .cloned()
                    .ok_or("VF PortInfo unknown")?;
                pi.lid = lid;
                pi.state = LinkState::NoChange;
                pi.phys_state = 0;
                let mut data = [0u8; SMP_DATA_LEN];
                pi.emit(&mut data);
                reqs.push((
                    smp.kind,
                    Request::set(attr::PORT_INFO, 1, route, data),
                    Some((i, 1)),
                ));
            }
            SmpKind::SetVGuid => {
                let (_, route) = route_to(d, fabric, dst_vf, 1).ok_or("VF not discovered")?;
                let mut data = [0u8; SMP_DATA_LEN];
                let port_guid = fabric
                    .port(PortRef::new(dst_vf, 1))
                    .map(|p| p.guid.0)
                    .unwrap_or(0);
                data[0..8].copy_from_slice(&port_guid.to_be_bytes());
                data[8..16].copy_from_slice(&vguid.to_be_bytes());
                reqs.push((smp.kind, Request::set(0x0014, 0, route, data), None));
            }
        }
    }
    // Partially static: every invalidation acknowledged before the first
    // update is sent (the window would otherwise overlap the two phases).
    let split = reqs
        .iter()
        .position(|r| r.0 != SmpKind::Invalidate)
        .unwrap_or(reqs.len());
    let only: Vec<Request> = reqs.iter().map(|r| r.1.clone()).collect();
    let mut answers = mads.run(&only[..split]);
    answers.extend(mads.run(&only[split..]));
    for ((kind, req, port), ans) in reqs.into_iter().zip(answers) {
        *report
            .observed
            .entry(kind_name(kind).to_string())
            .or_default() += 1;
        if matches!(kind, SmpKind::Lft | SmpKind::Invalidate) {
            report.observed_switch_smps += 1;
        } else {
            report.observed_hypervisor_smps += 1;
        }
        match ans {
            Ok(s) => {
                if let (Some((i, p)), Ok(pi)) = (port, PortInfoRepr::parse(&s.data)) {
                    d.nodes[i].ports.insert(p, pi);
                }
                if req.attr_id == attr::LINEAR_FORWARDING_TABLE {
                    if let Some(sw) = route_guid(d, &req.route) {
                        held.lft
                            .entry(sw)
                            .or_default()
                            .insert(req.attr_mod, req.data);
                    }
                }
            }
            Err(e) => report.failures.push(format!("{}: {e}", kind_name(kind))),
        }
    }
    // The model moves too: addresses and tables.
    vf.apply(&plan).map_err(|e| e.to_string())?;
    for (n, l) in [
        (dst_vf, plan.vm_lid),
        (src_vf, plan.swapped_lid.unwrap_or(Lid(0))),
    ] {
        let lmc = fabric.port(PortRef::new(n, 1)).map(|p| p.lmc).unwrap_or(0);
        fabric
            .set_lid(PortRef::new(n, 1), l, lmc)
            .map_err(|e| e.to_string())?;
    }
    *tables = vf.tables().clone();
    // Blocks still differing from what switches hold (vSwitch LFTs).
    let mut extra = Vec::new();
    for (i, n) in d.nodes.iter().enumerate() {
        if n.switch_info.is_none() {
            continue;
        }
        let id = ids[i];
        for b in 0..=(fabric.max_lid() as u32 / Lid::PER_LFT_BLOCK as u32) {
            let want = block_of(tables.table(id), b);
            if held.lft.get(&n.info.node_guid).and_then(|k| k.get(&b)) != Some(&want) {
                extra.push(Request::set(
                    attr::LINEAR_FORWARDING_TABLE,
                    b,
                    Route::Directed(n.routes.get(&0).cloned().unwrap_or_default()),
                    want,
                ));
            }
        }
    }
    report.extra_blocks = extra.len();
    for (req, ans) in extra.iter().zip(mads.run(&extra)) {
        match ans {
            Ok(_) => {
                if let Some(sw) = route_guid(d, &req.route) {
                    held.lft
                        .entry(sw)
                        .or_default()
                        .insert(req.attr_mod, req.data);
                }
            }
            Err(e) => report.failures.push(format!("extra block: {e}")),
        }
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

fn route_guid(d: &Discovery, route: &Route) -> Option<u64> {
    let Route::Directed(path) = route else {
        return None;
    };
    d.nodes
        .iter()
        .find(|n| n.switch_info.is_some() && n.routes.get(&0) == Some(path))
        .map(|n| n.info.node_guid)
}
