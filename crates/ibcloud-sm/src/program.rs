//! Programming a discovered subnet: SwitchInfo (LinearFDBTop, clearing
//! PortStateChange), LFT blocks, port LIDs and SM LID, and the port states
//! INIT → ARMED → ACTIVE, in that order (a port may only become ACTIVE once
//! both ends are at least ARMED).
//!
//! LFT blocks are sent only when they differ from what the switch holds:
//! [`Held`] remembers every block a switch acknowledged (a Set's answer
//! echoes the block, which is checked) or reported (a Get). A block never
//! seen is sent, unless `read_unknown` asks to read it first (useful when
//! taking over a fabric another SM programmed).
//!
//! Every Set is a read-modify-write of the attribute the node reported, so
//! fields ibcloud does not model keep their values.

use crate::discover::Discovery;
use crate::error::SmError;
use crate::mads::{Mads, Request};
use crate::transport::Transport;
use crate::wire::{attr, LftBlockRepr, LinkState, NodeType, PortInfoRepr, Route, SMP_DATA_LEN};
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Fabric, Lid, NodeId, PortRef};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

/// What each switch is known to hold, by node GUID: block → contents.
#[derive(Clone, Debug, Default)]
pub struct Held {
    /// LFT blocks per switch GUID.
    pub lft: HashMap<u64, BTreeMap<u32, [u8; SMP_DATA_LEN]>>,
}

/// What one programming pass did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ProgramReport {
    /// SMPs sent in this pass by kind (retries included).
    pub smps: BTreeMap<String, u64>,
    /// All SMPs of this pass.
    pub total_smps: u64,
    /// LFT blocks sent (`(switch GUID, block)`), in order.
    pub lft_blocks_sent: Vec<(u64, u32)>,
    /// LFT blocks left alone because the switch already held them.
    pub lft_blocks_skipped: usize,
    /// Ports that reached ACTIVE in this pass.
    pub ports_activated: usize,
    /// What failed (node/route and reason); empty when all went through.
    pub failures: Vec<String>,
    /// Seconds from the decision to the last acknowledgement.
    pub seconds: f64,
}

/// Options of a programming pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProgramOptions {
    /// Read LFT blocks the SM has never seen before deciding to send them.
    pub read_unknown: bool,
}

fn route(d: &Discovery, idx: usize, port: u8) -> Route {
    Route::Directed(d.nodes[idx].route_to(port).cloned().unwrap_or_default())
}

/// The 64 entries of `block` of a table (255 beyond its end).
pub fn block_of(table: &[u8], block: u32) -> [u8; SMP_DATA_LEN] {
    let mut out = [0xffu8; SMP_DATA_LEN];
    let start = block as usize * Lid::PER_LFT_BLOCK;
    for (i, o) in out.iter_mut().enumerate() {
        if let Some(&p) = table.get(start + i) {
            *o = p;
        }
    }
    out
}

fn diff(
    before: &crate::mads::Counters,
    after: &crate::mads::Counters,
) -> (BTreeMap<String, u64>, u64) {
    let mut m = BTreeMap::new();
    for (k, v) in &after.sent {
        let d = v - before.sent.get(k).copied().unwrap_or(0);
        if d > 0 {
            m.insert(k.clone(), d);
        }
    }
    (m, after.total_sent - before.total_sent)
}

/// Sends the LFT blocks of `tables` that differ from what the switches hold.
/// `ids[i]` is the fabric node of discovery node `i`.
#[allow(clippy::too_many_arguments)]
pub fn program_lfts<T: Transport>(
    mads: &mut Mads<T>,
    d: &Discovery,
    ids: &[NodeId],
    fabric: &Fabric,
    tables: &ForwardingTables,
    held: &mut Held,
    options: ProgramOptions,
    report: &mut ProgramReport,
) {
    let blocks = (fabric.max_lid() as u32) / Lid::PER_LFT_BLOCK as u32 + 1;
    let switches: Vec<usize> = (0..d.nodes.len())
        .filter(|&i| d.nodes[i].info.node_type == NodeType::Switch)
        .collect();
    if options.read_unknown {
        let mut reqs = Vec::new();
        let mut what = Vec::new();
        for &i in &switches {
            let known = held.lft.get(&d.nodes[i].info.node_guid);
            for b in 0..blocks {
                if known.is_none_or(|k| !k.contains_key(&b)) {
                    reqs.push(Request::get(
                        attr::LINEAR_FORWARDING_TABLE,
                        b,
                        route(d, i, 0),
                    ));
                    what.push((i, b));
                }
            }
        }
        for ((i, b), ans) in what.into_iter().zip(mads.run(&reqs)) {
            if let Ok(blk) = ans.and_then(|s| Ok(LftBlockRepr::parse(&s.data)?)) {
                held.lft
                    .entry(d.nodes[i].info.node_guid)
                    .or_default()
                    .insert(b, blk.0);
            }
        }
    }
    let mut reqs = Vec::new();
    let mut what = Vec::new();
    for &i in &switches {
        let guid = d.nodes[i].info.node_guid;
        let table = tables.table(ids[i]);
        for b in 0..blocks {
            let want = block_of(table, b);
            if held.lft.get(&guid).and_then(|k| k.get(&b)) == Some(&want) {
                report.lft_blocks_skipped += 1;
                continue;
            }
            reqs.push(Request::set(
                attr::LINEAR_FORWARDING_TABLE,
                b,
                route(d, i, 0),
                want,
            ));
            what.push((i, b, want));
        }
    }
    for ((i, b, want), ans) in what.into_iter().zip(mads.run(&reqs)) {
        let guid = d.nodes[i].info.node_guid;
        match ans {
            Ok(s) if s.data == want => {
                held.lft.entry(guid).or_default().insert(b, want);
                report.lft_blocks_sent.push((guid, b));
            }
            Ok(s) => {
                held.lft.entry(guid).or_default().insert(b, s.data);
                report.failures.push(format!(
                    "switch 0x{guid:016x} block {b}: the answer holds other entries than were set"
                ));
            }
            Err(e) => {
                held.lft.entry(guid).or_default().remove(&b);
                report
                    .failures
                    .push(format!("switch 0x{guid:016x} block {b}: {e}"));
            }
        }
    }
}

/// Brings a discovered, LID-assigned and routed subnet up.
#[allow(clippy::too_many_arguments)]
pub fn bring_up<T: Transport>(
    mads: &mut Mads<T>,
    d: &mut Discovery,
    ids: &[NodeId],
    fabric: &Fabric,
    tables: &ForwardingTables,
    held: &mut Held,
    sm_lid: u16,
    options: ProgramOptions,
) -> ProgramReport {
    let started = Instant::now();
    let before = mads.counters.clone();
    let mut report = ProgramReport::default();
    let top = fabric.max_lid();

    // 1. SwitchInfo: LinearFDBTop, clear PortStateChange.
    let mut reqs = Vec::new();
    let mut who = Vec::new();
    for (i, n) in d.nodes.iter().enumerate() {
        let Some(si) = &n.switch_info else { continue };
        if si.linear_fdb_top == top && !si.port_state_change {
            continue;
        }
        let mut s = si.clone();
        s.linear_fdb_top = top;
        s.port_state_change = true; // writing 1 clears it
        let mut data = [0u8; SMP_DATA_LEN];
        s.emit(&mut data);
        reqs.push(Request::set(attr::SWITCH_INFO, 0, route(d, i, 0), data));
        who.push(i);
    }
    for (i, ans) in who.into_iter().zip(mads.run(&reqs)) {
        match ans.and_then(|s| Ok(crate::wire::SwitchInfoRepr::parse(&s.data)?)) {
            Ok(si) => d.nodes[i].switch_info = Some(si),
            Err(e) => report
                .failures
                .push(format!("SwitchInfo {}: {e}", d.nodes[i].description)),
        }
    }

    // 2. LFT blocks.
    program_lfts(mads, d, ids, fabric, tables, held, options, &mut report);

    // 3. LIDs and SM LID on switch port 0 and CA ports (CA ports go to ARMED
    //    in the same SMP), then 4. ARMED on switch ports, 5. ACTIVE everywhere.
    let addressed = |i: usize, p: u8| -> Option<(u16, u8)> {
        let port = fabric.port(PortRef::new(ids[i], p))?;
        port.lid.is_set().then_some((port.lid.0, port.lmc))
    };
    let phase = |mads: &mut Mads<T>, d: &mut Discovery, step: u8, report: &mut ProgramReport| {
        let mut reqs = Vec::new();
        let mut who = Vec::new();
        for i in 0..d.nodes.len() {
            let is_switch = d.nodes[i].info.node_type == NodeType::Switch;
            let ports: Vec<u8> = d.nodes[i].ports.keys().copied().collect();
            for p in ports {
                let pi = &d.nodes[i].ports[&p];
                let mut want: PortInfoRepr = pi.clone();
                want.phys_state = 0; // no change
                want.state = LinkState::NoChange;
                let addr = if !is_switch || p == 0 {
                    addressed(i, p)
                } else {
                    None
                };
                let needs = match step {
                    3 => {
                        let Some((lid, lmc)) = addr else { continue };
                        let arm = !is_switch && pi.state == LinkState::Init;
                        if pi.lid == lid && pi.lmc == lmc && pi.master_sm_lid == sm_lid && !arm {
                            continue;
                        }
                        want.lid = lid;
                        want.lmc = lmc;
                        want.master_sm_lid = sm_lid;
                        if arm {
                            want.state = LinkState::Armed;
                        }
                        true
                    }
                    4 => is_switch && p != 0 && pi.link_up() && pi.state == LinkState::Init,
                    _ => (p != 0 || !is_switch) && pi.link_up() && pi.state == LinkState::Armed,
                };
                if !needs {
                    continue;
                }
                if step == 4 {
                    want.state = LinkState::Armed;
                } else if step == 5 {
                    want.state = LinkState::Active;
                }
                let mut data = [0u8; SMP_DATA_LEN];
                want.emit(&mut data);
                reqs.push(Request::set(
                    attr::PORT_INFO,
                    p as u32,
                    route(d, i, p),
                    data,
                ));
                who.push((i, p));
            }
        }
        for ((i, p), ans) in who.into_iter().zip(mads.run(&reqs)) {
            match ans.and_then(|s| Ok(PortInfoRepr::parse(&s.data)?)) {
                Ok(pi) => {
                    if step == 5 && pi.state == LinkState::Active {
                        report.ports_activated += 1;
                    }
                    d.nodes[i].ports.insert(p, pi);
                }
                Err(e) => report.failures.push(format!(
                    "PortInfo step {step} {} port {p}: {e}",
                    d.nodes[i].description
                )),
            }
        }
    };
    phase(mads, d, 3, &mut report);
    phase(mads, d, 4, &mut report);
    phase(mads, d, 5, &mut report);

    let (smps, total) = diff(&before, &mads.counters);
    report.smps = smps;
    report.total_smps = total;
    report.seconds = started.elapsed().as_secs_f64();
    report
}

/// Reads every switch's LFT back (Get) as tables over `fabric`, for
/// verification without external tools.
pub fn read_back<T: Transport>(
    mads: &mut Mads<T>,
    d: &Discovery,
    ids: &[NodeId],
    fabric: &Fabric,
) -> Result<ForwardingTables, SmError> {
    let blocks = (fabric.max_lid() as u32) / Lid::PER_LFT_BLOCK as u32 + 1;
    let mut tables = ForwardingTables::new(fabric);
    let mut reqs = Vec::new();
    let mut what = Vec::new();
    for (i, n) in d.nodes.iter().enumerate() {
        if n.info.node_type != NodeType::Switch {
            continue;
        }
        for b in 0..blocks {
            reqs.push(Request::get(
                attr::LINEAR_FORWARDING_TABLE,
                b,
                route(d, i, 0),
            ));
            what.push((i, b));
        }
    }
    for ((i, b), ans) in what.into_iter().zip(mads.run(&reqs)) {
        let blk = LftBlockRepr::parse(&ans?.data)?;
        for (k, &port) in blk.0.iter().enumerate() {
            let lid = b as usize * Lid::PER_LFT_BLOCK + k;
            if port != 0xff && lid <= fabric.max_lid() as usize {
                tables.set(ids[i], Lid(lid as u16), port);
            }
        }
    }
    Ok(tables)
}
