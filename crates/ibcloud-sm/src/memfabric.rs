//! An in-memory fabric that answers directed-route SMPs from an ibcloud
//! [`Fabric`] model, as ibsim's SMA emulation does (NodeInfo,
//! NodeDescription, SwitchInfo, PortInfo, LinearForwardingTable,
//! SLtoVLMappingTable, VLArbitrationTable; Get and Set; port-state rules: ARMED needs the neighbour at least INIT, ACTIVE
//! needs it at least ARMED). Used by the unit tests of discovery,
//! programming and reliability; it can stay silent for chosen nodes and
//! drop chosen sends to exercise timeouts and retries.

use crate::error::SmError;
use crate::transport::Transport;
use crate::wire::{
    attr, smp, LftBlockRepr, LinkState, NodeDescriptionRepr, NodeInfoRepr, NodeType, PortInfoRepr,
    Route, SmpRepr, SwitchInfoRepr, SMP_DATA_LEN, SMP_LEN,
};
use ibcloud_fabric::{Fabric, Guid, LinkSpeed, LinkWidth, NodeKind, PortRef};
use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

/// VLCap and OperationalVLs of every port (4 = VL0–7, ibsim's value).
const VL_CAP: u8 = 4;
/// VLArbitrationHighCap and LowCap of every port (ibsim's value).
const VLARB_CAP: u8 = 8;

#[derive(Clone, Debug)]
struct PortState {
    state: LinkState,
    lid: u16,
    lmc: u8,
    sm_lid: u16,
}

/// A fabric model answering SMPs.
#[derive(Debug)]
pub struct MemFabric {
    fabric: Fabric,
    sm: PortRef,
    ports: HashMap<PortRef, PortState>,
    lft: HashMap<u32, Vec<u8>>,
    fdb_top: HashMap<u32, u16>,
    psc: HashSet<u32>,
    /// SL2VL tables by (node, input port, output port); CA ports use (node, port, port).
    sl2vl: HashMap<(u32, u8, u8), [u8; 8]>,
    /// VL arbitration blocks by (port, block 1–4).
    vlarb: HashMap<(PortRef, u8), [u8; SMP_DATA_LEN]>,
    answers: VecDeque<[u8; SMP_LEN]>,
    /// Node GUIDs that never answer.
    pub silent: HashSet<Guid>,
    /// Sends to drop before answering again (counts down).
    pub drop_next: usize,
    /// SMPs received, by attribute name and method ("Set LinearForwardingTable").
    pub received: HashMap<String, u64>,
    /// A cable pull scripted mid-sweep: after this many more SMPs, the
    /// link at this port fails (a fabric that changes during a sweep).
    pub fail_link_after: Option<(u64, PortRef)>,
}

impl MemFabric {
    /// A fresh fabric (ports INIT, no LIDs, LFTs empty); the SM sits on `sm`.
    pub fn new(fabric: Fabric, sm: PortRef) -> Self {
        let mut ports = HashMap::new();
        for (id, node) in fabric.iter_nodes() {
            let first = if node.is_switch() { 0 } else { 1 };
            for p in first..=node.num_ports {
                let pr = PortRef::new(id, p);
                let state = if node.is_switch() && p == 0 {
                    LinkState::Active
                } else if fabric.remote(pr).is_some() {
                    LinkState::Init
                } else {
                    LinkState::Down
                };
                ports.insert(
                    pr,
                    PortState {
                        state,
                        lid: 0,
                        lmc: 0,
                        sm_lid: 0,
                    },
                );
            }
        }
        let psc = fabric.switches().map(|s| s.0).collect();
        Self {
            fabric,
            sm,
            ports,
            lft: HashMap::new(),
            fdb_top: HashMap::new(),
            psc,
            sl2vl: HashMap::new(),
            vlarb: HashMap::new(),
            answers: VecDeque::new(),
            silent: HashSet::new(),
            drop_next: 0,
            received: HashMap::new(),
            fail_link_after: None,
        }
    }

    /// The state of a port.
    pub fn port_state(&self, p: PortRef) -> Option<LinkState> {
        self.ports.get(&p).map(|s| s.state)
    }

    /// LFT entry of a switch.
    pub fn lft_entry(&self, switch: ibcloud_fabric::NodeId, lid: u16) -> u8 {
        self.lft
            .get(&switch.0)
            .and_then(|t| t.get(lid as usize))
            .copied()
            .unwrap_or(0xff)
    }

    /// The SL2VL table a port pair holds (CA: `in_port == out_port`), as
    /// the 8 bytes of the attribute; zeros (every SL on VL0) until set.
    pub fn sl2vl(&self, node: ibcloud_fabric::NodeId, in_port: u8, out_port: u8) -> [u8; 8] {
        self.sl2vl
            .get(&(node.0, in_port, out_port))
            .copied()
            .unwrap_or([0; 8])
    }

    /// A VL arbitration block a port holds (1–4), as the attribute's bytes.
    pub fn vlarb(&self, port: PortRef, block: u8) -> [u8; SMP_DATA_LEN] {
        self.vlarb
            .get(&(port, block))
            .copied()
            .unwrap_or([0; SMP_DATA_LEN])
    }

    /// Takes a link down (both ends DOWN) and flags the switches, as a cable pull.
    pub fn fail_link(&mut self, a: PortRef) {
        if let Some(b) = self.fabric.remote(a) {
            for p in [a, b] {
                if let Some(s) = self.ports.get_mut(&p) {
                    s.state = LinkState::Down;
                }
                if self.fabric.node(p.node).is_switch() {
                    self.psc.insert(p.node.0);
                }
            }
        }
    }

    /// Brings a failed link back (both ends INIT, as after training) and
    /// flags the switches, as a cable plugged in again.
    pub fn restore_link(&mut self, a: PortRef) {
        if let Some(b) = self.fabric.remote(a) {
            for p in [a, b] {
                if let Some(s) = self.ports.get_mut(&p) {
                    s.state = LinkState::Init;
                }
                if self.fabric.node(p.node).is_switch() {
                    self.psc.insert(p.node.0);
                }
            }
        }
    }

    fn walk(&self, path: &[u8]) -> Option<PortRef> {
        let mut at = self.sm;
        for (i, &out) in path.iter().enumerate() {
            if i > 0 && !self.fabric.node(at.node).is_switch() {
                return None;
            }
            let here = PortRef::new(at.node, out);
            if self
                .ports
                .get(&here)
                .is_none_or(|s| s.state == LinkState::Down)
            {
                return None;
            }
            at = self.fabric.remote(here)?;
        }
        Some(at)
    }

    fn port_info(&self, p: PortRef, local: u8) -> [u8; SMP_DATA_LEN] {
        let s = &self.ports[&p];
        let switch = self.fabric.node(p.node).is_switch();
        let (lid, lmc, sm_lid) = if switch {
            let p0 = &self.ports[&PortRef::new(p.node, 0)];
            (p0.lid, p0.lmc, p0.sm_lid)
        } else {
            (s.lid, s.lmc, s.sm_lid)
        };
        let rate = self.fabric.port(p).map(|x| x.rate).unwrap_or_default();
        let linked = self.fabric.remote(p).is_some() && s.state != LinkState::Down;
        let pi = PortInfoRepr {
            gid_prefix: 0xfe80_0000_0000_0000,
            lid,
            master_sm_lid: sm_lid,
            capability_mask: 0,
            local_port: local,
            link_width_active: match rate.width {
                LinkWidth::X1 => 1,
                LinkWidth::X2 => 16,
                LinkWidth::X4 => 2,
                LinkWidth::X8 => 4,
                LinkWidth::X12 => 8,
            },
            state: s.state,
            phys_state: if linked || (switch && p.port == 0) {
                5
            } else {
                2
            },
            lmc,
            link_speed_active: match rate.speed {
                LinkSpeed::Sdr => 1,
                LinkSpeed::Ddr => 2,
                _ => 4,
            },
            master_sm_sl: 0,
            link_speed_ext_active: match rate.speed {
                LinkSpeed::Fdr => 1,
                LinkSpeed::Edr => 2,
                LinkSpeed::Hdr => 4,
                LinkSpeed::Ndr => 8,
                _ => 0,
            },
            raw: [0; SMP_DATA_LEN],
        };
        let mut b = [0u8; SMP_DATA_LEN];
        pi.emit(&mut b);
        // As ibsim's ports: VLCap VL0-7, 8 entries in each arbitration table,
        // operational VLs VL0-7; every port maps SLs (CapabilityMask bit 0
        // is not modelled, the SM does not check it).
        b[37] = (b[37] & 0x0f) | (VL_CAP << 4);
        b[39] = VLARB_CAP;
        b[40] = VLARB_CAP;
        b[43] = (b[43] & 0x0f) | (VL_CAP << 4);
        b
    }

    fn answer(&mut self, req: &SmpRepr, at: PortRef) -> Result<[u8; SMP_DATA_LEN], u16> {
        let node = self.fabric.node(at.node).clone();
        let set = req.method == smp::METHOD_SET;
        let nid = at.node.0;
        let mut out = [0u8; SMP_DATA_LEN];
        match req.attr_id {
            attr::NODE_INFO => {
                let port_guid = if node.is_switch() {
                    node.guid.0
                } else {
                    self.fabric.port(at).map(|p| p.guid.0).unwrap_or(0)
                };
                NodeInfoRepr {
                    node_type: match node.kind {
                        NodeKind::Switch => NodeType::Switch,
                        NodeKind::Ca => NodeType::Ca,
                        NodeKind::Router => NodeType::Router,
                    },
                    num_ports: node.num_ports,
                    system_image_guid: node.system_image_guid.0,
                    node_guid: node.guid.0,
                    port_guid,
                    partition_cap: 8,
                    device_id: node.device_id as u16,
                    revision: 0,
                    local_port: at.port,
                    vendor_id: node.vendor_id,
                }
                .emit(&mut out);
            }
            attr::NODE_DESCRIPTION => NodeDescriptionRepr(node.description.clone()).emit(&mut out),
            attr::SWITCH_INFO => {
                if !node.is_switch() {
                    return Err(0x0c);
                }
                if set {
                    let si = SwitchInfoRepr::parse(&req.data).map_err(|_| 0x1cu16)?;
                    self.fdb_top.insert(nid, si.linear_fdb_top);
                    if si.port_state_change {
                        self.psc.remove(&nid);
                    }
                }
                let mut raw = [0u8; SMP_DATA_LEN];
                raw[0..2].copy_from_slice(&0xc000u16.to_be_bytes());
                let mut si = SwitchInfoRepr::parse(&raw).map_err(|_| 0x1cu16)?;
                si.linear_fdb_top = self.fdb_top.get(&nid).copied().unwrap_or(0);
                si.port_state_change = self.psc.contains(&nid);
                si.life_time = 18;
                si.emit(&mut out);
            }
            attr::PORT_INFO => {
                let mut p = req.attr_mod as u8;
                if !node.is_switch() && p == 0 {
                    p = at.port;
                }
                if p > node.num_ports || (!node.is_switch() && p == 0) {
                    return Err(0x1c);
                }
                let pr = PortRef::new(at.node, p);
                if set {
                    if !node.is_switch() && p != at.port {
                        return Err(0x1c);
                    }
                    let want = PortInfoRepr::parse(&req.data).map_err(|_| 0x1cu16)?;
                    let remote = self
                        .fabric
                        .remote(pr)
                        .and_then(|r| self.ports.get(&r))
                        .map(|s| s.state);
                    let cur = self.ports[&pr].state;
                    let new_state = match want.state {
                        LinkState::NoChange => cur,
                        LinkState::Armed
                            if cur == LinkState::Init
                                && remote.is_some_and(|r| r >= LinkState::Init) =>
                        {
                            LinkState::Armed
                        }
                        LinkState::Active
                            if cur == LinkState::Armed
                                && remote.is_some_and(|r| r >= LinkState::Armed) =>
                        {
                            LinkState::Active
                        }
                        s if s == cur => cur,
                        _ => return Err(0x1c),
                    };
                    let st = self.ports.get_mut(&pr).ok_or(0x1cu16)?;
                    st.state = new_state;
                    if !node.is_switch() || p == 0 {
                        st.lid = want.lid;
                        st.lmc = want.lmc;
                        st.sm_lid = want.master_sm_lid;
                    }
                }
                out = self.port_info(pr, at.port);
            }
            attr::LINEAR_FORWARDING_TABLE => {
                if !node.is_switch() {
                    return Err(0x0c);
                }
                let b = req.attr_mod as usize;
                if b > 767 {
                    return Err(0x1c);
                }
                let t = self.lft.entry(nid).or_insert_with(|| vec![0xff; 768 * 64]);
                if set {
                    let blk = LftBlockRepr::parse(&req.data).map_err(|_| 0x1cu16)?;
                    t[b * 64..b * 64 + 64].copy_from_slice(&blk.0);
                }
                out.copy_from_slice(&t[b * 64..b * 64 + 64]);
            }
            attr::SL_TO_VL_MAPPING_TABLE => {
                let (inp, outp) = if node.is_switch() {
                    let (i, o) = ((req.attr_mod >> 8) as u8, req.attr_mod as u8);
                    if req.attr_mod > 0xffff || i > node.num_ports || o > node.num_ports {
                        return Err(0x1c);
                    }
                    (i, o)
                } else {
                    (at.port, at.port)
                };
                let t = self.sl2vl.entry((nid, inp, outp)).or_insert([0; 8]);
                if set {
                    t.copy_from_slice(&req.data[..8]);
                }
                out[..8].copy_from_slice(t);
            }
            attr::VL_ARBITRATION_TABLE => {
                let block = (req.attr_mod >> 16) as u8;
                let p = if node.is_switch() {
                    (req.attr_mod & 0xffff) as u8
                } else {
                    at.port
                };
                // Blocks 2 and 4 exist only when a table has more than 32
                // entries; these ports have 8, as ibsim's.
                if !(block == 1 || block == 3) || (req.attr_mod & 0xffff) > node.num_ports as u32 {
                    return Err(0x1c);
                }
                let used = 2 * VLARB_CAP as usize;
                let t = self
                    .vlarb
                    .entry((PortRef::new(at.node, p), block))
                    .or_insert([0; SMP_DATA_LEN]);
                if set {
                    t[..used].copy_from_slice(&req.data[..used]);
                }
                out[..used].copy_from_slice(&t[..used]);
            }
            _ => return Err(0x0c),
        }
        Ok(out)
    }
}

impl Transport for MemFabric {
    fn send(
        &mut self,
        bytes: &[u8; SMP_LEN],
        route: &Route,
        _timeout: Duration,
    ) -> Result<(), SmError> {
        let req = SmpRepr::parse_bytes(bytes)?;
        let Route::Directed(path) = route else {
            return Ok(()); // LID routing is not modelled: no answer
        };
        if req.is_response() {
            return Ok(());
        }
        let kind = format!(
            "{} {}",
            if req.method == smp::METHOD_SET {
                "Set"
            } else {
                "Get"
            },
            attr::name(req.attr_id)
        );
        *self.received.entry(kind).or_default() += 1;
        if let Some((n, port)) = self.fail_link_after {
            if n <= 1 {
                self.fail_link_after = None;
                self.fail_link(port);
            } else {
                self.fail_link_after = Some((n - 1, port));
            }
        }
        if self.drop_next > 0 {
            self.drop_next -= 1;
            return Ok(());
        }
        let Some(at) = self.walk(path) else {
            return Ok(());
        };
        if self.silent.contains(&self.fabric.node(at.node).guid) {
            return Ok(());
        }
        let mut resp = req.clone();
        resp.method = smp::METHOD_GET_RESP;
        resp.returning = true;
        match self.answer(&req, at) {
            Ok(data) => resp.data = data,
            Err(status) => resp.status = status,
        }
        self.answers.push_back(resp.to_bytes()?);
        Ok(())
    }

    fn recv(&mut self, timeout: Duration) -> Option<crate::transport::Received> {
        let a = self.answers.pop_front();
        if a.is_none() {
            // Nothing will come: let the time pass, as on a real port.
            std::thread::sleep(timeout);
        }
        a.map(|mad| crate::transport::Received {
            mad,
            slid: 0,
            sqp: 0,
        })
    }

    fn local_port(&self) -> (u64, u8) {
        (
            self.fabric.port(self.sm).map(|p| p.guid.0).unwrap_or(0),
            self.sm.port,
        )
    }
}
