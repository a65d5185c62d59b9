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
//!
//! [`program_qos`] sets the SL2VL and VL arbitration tables of a QoS policy
//! (`ibcloud-qos`) the way OpenSM 3.3.23's QoS manager does, then reads
//! every table back.

use crate::discover::Discovery;
use crate::error::SmError;
use crate::mads::{Mads, Request};
use crate::transport::Transport;
use crate::wire::{
    attr, sl2vl_modifier, vlarb_modifier, LftBlockRepr, LinkState, NodeType, PortInfoRepr, Route,
    SlToVlRepr, VlArbBlock, VlArbBlockRepr, SMP_DATA_LEN, VLARB_BLOCK_ENTRIES,
};
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

/// What a QoS programming pass did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QosReport {
    /// SMPs sent by kind (retries included).
    pub smps: BTreeMap<String, u64>,
    /// All SMPs.
    pub total_smps: u64,
    /// SLtoVLMappingTable Sets (one per switch port pair, one per CA port).
    pub sl2vl_sets: usize,
    /// VLArbitrationTable block Sets.
    pub vlarb_sets: usize,
    /// Tables a Get read back equal to what was set.
    pub verified: usize,
    /// What failed or read back differently.
    pub failures: Vec<String>,
}

/// One table to set: route, attribute, modifier, data, entries that
/// count when comparing (bytes), label.
struct QosSet {
    route: Route,
    attr: u16,
    modifier: u32,
    data: [u8; SMP_DATA_LEN],
    compare: usize,
    label: String,
}

/// OpenSM masks every VL it programs with the port's operational VLs
/// (osm_qos.c: `vl & ((1 << (OperationalVLs - 1)) - 1)`; VL15 in SL2VL is
/// kept). A port that reports no operational VLs is left unmasked.
fn vl_mask(pi: &PortInfoRepr) -> u8 {
    match pi.operational_vls() {
        0 => 0x0f,
        op => ((1u16 << (op - 1)) - 1) as u8,
    }
}

fn sl2vl_data(t: &ibcloud_qos::QosTables, mask: u8) -> [u8; SMP_DATA_LEN] {
    let mut m = t.sl2vl;
    for v in m.iter_mut() {
        if *v != 15 {
            *v &= mask;
        }
    }
    let mut data = [0u8; SMP_DATA_LEN];
    SlToVlRepr(m).emit(&mut data);
    data
}

/// The VLArbitrationTable blocks of a port with these tables, caps and mask.
fn vlarb_blocks(
    t: &ibcloud_qos::QosTables,
    pi: &PortInfoRepr,
) -> Vec<(VlArbBlock, [u8; SMP_DATA_LEN], usize)> {
    let mask = vl_mask(pi);
    let (high_cap, low_cap) = pi.vl_arb_caps();
    let mut out = Vec::new();
    for (table, cap, first, second) in [
        (
            &t.vlarb_low,
            low_cap,
            VlArbBlock::LowFirst,
            VlArbBlock::LowSecond,
        ),
        (
            &t.vlarb_high,
            high_cap,
            VlArbBlock::HighFirst,
            VlArbBlock::HighSecond,
        ),
    ] {
        for (k, block) in [(0usize, first), (1, second)] {
            let start = k * VLARB_BLOCK_ENTRIES;
            if (cap as usize) <= start {
                continue;
            }
            let used = (cap as usize - start).min(VLARB_BLOCK_ENTRIES);
            let mut e = [(0u8, 0u8); VLARB_BLOCK_ENTRIES];
            for (j, x) in e.iter_mut().enumerate().take(used) {
                if let Some(v) = table.get(start + j) {
                    *x = (v.vl & mask, v.weight);
                }
            }
            let mut data = [0u8; SMP_DATA_LEN];
            VlArbBlockRepr(e).emit(&mut data);
            out.push((block, data, 2 * used));
        }
    }
    out
}

/// Programs `qos` on every discovered port, as OpenSM 3.3.23's QoS manager
/// does: on each switch, every live external port gets the `swe` VL
/// arbitration blocks its caps allow and the `swe` SL2VL table for every
/// input port (0–N); an enhanced port 0 gets the `sw0` tables; every live CA
/// port gets the `ca` tables (routers are not discovered by this SM). VLs
/// are masked with the port's operational VLs as OpenSM does. Each Set's
/// answer is checked, then every table is read back with a Get; a
/// difference is a failure. (OpenSM takes `cap % 32` entries for a second
/// block, which gives none for a 64-entry table; this sends `cap − 32`, as
/// the specification's cap means.)
pub fn program_qos<T: Transport>(
    mads: &mut Mads<T>,
    d: &Discovery,
    qos: &ibcloud_qos::FabricQos,
) -> QosReport {
    use ibcloud_qos::PortClass;
    let before = mads.counters.clone();
    let mut report = QosReport::default();
    let mut sets: Vec<QosSet> = Vec::new();
    let mut port_tables =
        |i: usize, port: u8, class: PortClass, route: Route, sl2vl_mods: Vec<u32>| {
            let n = &d.nodes[i];
            let Some(pi) = n.ports.get(&port) else { return };
            let t = qos.effective(class);
            for (block, data, compare) in vlarb_blocks(&t, pi) {
                sets.push(QosSet {
                    route: route.clone(),
                    attr: attr::VL_ARBITRATION_TABLE,
                    modifier: vlarb_modifier(block, port),
                    data,
                    compare,
                    label: format!("{} port {port} VLArb block {}", n.description, block as u8),
                });
            }
            let data = sl2vl_data(&t, vl_mask(pi));
            for m in sl2vl_mods {
                sets.push(QosSet {
                    route: route.clone(),
                    attr: attr::SL_TO_VL_MAPPING_TABLE,
                    modifier: m,
                    data,
                    compare: 8,
                    label: format!("{} SL2VL {}->{}", n.description, m >> 8, m & 0xff),
                });
            }
        };
    for (i, n) in d.nodes.iter().enumerate() {
        let live = |p: &u8| n.ports.get(p).is_some_and(|pi| pi.link_up());
        if n.info.node_type == NodeType::Switch {
            let ports = n.info.num_ports;
            for out in (1..=ports).filter(live) {
                let mods = (0..=ports).map(|inp| sl2vl_modifier(inp, out)).collect();
                port_tables(i, out, PortClass::Swe, route(d, i, 0), mods);
            }
            if n.switch_info.as_ref().is_some_and(|s| s.enhanced_port0) {
                port_tables(
                    i,
                    0,
                    PortClass::Sw0,
                    route(d, i, 0),
                    vec![sl2vl_modifier(0, 0)],
                );
            }
        } else {
            for p in n.ports.keys().copied().filter(|p| live(p)) {
                port_tables(i, p, PortClass::Ca, route(d, i, p), vec![0]);
            }
        }
    }
    let reqs: Vec<Request> = sets
        .iter()
        .map(|s| Request::set(s.attr, s.modifier, s.route.clone(), s.data))
        .collect();
    for (s, ans) in sets.iter().zip(mads.run(&reqs)) {
        match ans {
            Ok(a) if a.data[..s.compare] == s.data[..s.compare] => {
                if s.attr == attr::VL_ARBITRATION_TABLE {
                    report.vlarb_sets += 1;
                } else {
                    report.sl2vl_sets += 1;
                }
            }
            Ok(_) => report.failures.push(format!(
                "{}: the answer holds another table than was set",
                s.label
            )),
            Err(e) => report.failures.push(format!("{}: {e}", s.label)),
        }
    }
    let gets: Vec<Request> = sets
        .iter()
        .map(|s| Request::get(s.attr, s.modifier, s.route.clone()))
        .collect();
    for (s, ans) in sets.iter().zip(mads.run(&gets)) {
        match ans {
            Ok(a) if a.data[..s.compare] == s.data[..s.compare] => report.verified += 1,
            Ok(_) => report.failures.push(format!(
                "{}: reads back another table than was set",
                s.label
            )),
            Err(e) => report
                .failures
                .push(format!("{} (read back): {e}", s.label)),
        }
    }
    let (smps, total) = diff(&before, &mads.counters);
    report.smps = smps;
    report.total_smps = total;
    report
}
