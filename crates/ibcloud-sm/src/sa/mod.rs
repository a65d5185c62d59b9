//! The SM's subnet administrator (IBA 1.3 ch. 15) over the subnet the SM
//! discovered and programmed.
//!
//! * SubnAdmGet and SubnAdmGetTable of NodeRecord, PortInfoRecord,
//!   SwitchInfoRecord, LinkRecord, SMInfoRecord, GUIDInfoRecord,
//!   LinearForwardingTableRecord and PathRecord, with component-mask
//!   filtering ([`records::Layout`]); ClassPortInfo; ServiceRecord,
//!   MCMemberRecord, MulticastForwardingTableRecord and InformInfoRecord
//!   answer an empty table (GetTable) or ERR_NO_RECORDS (Get), as OpenSM
//!   does on a subnet with no services, groups or subscriptions.
//! * PathRecords come from `ibcloud-sa`'s resolver on the programmed tables
//!   (SL, MTU, rate as the SA computes them; Paper I's caching flag in
//!   reserved bit 353 when enabled).
//! * Tables travel by RMPP ([`rmpp`]): the SM registers the SA class with
//!   RMPP version 0 and [`SaServer`] runs the protocol itself, which is
//!   what ibsim's shim (one MAD per message, no RMPP) needs. On a real HCA
//!   the kernel would not hand a requester's ACK to a non-RMPP agent: that
//!   path is untested (docs/sm.md, "What it does not do yet").
//! * Anything else gets a MAD status: a bad version 0x0004, other methods
//!   or attributes 0x000C, a Get with several matches 0x0400, a PathRecord
//!   Get without end points 0x0600, unknown end points 0x0300.

pub mod client;
pub mod flood;
pub mod mad;
pub mod records;
pub mod rmpp;

use crate::discover::Discovery;
use crate::wire::{NodeType, SmInfoRepr};
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::{Fabric, NodeId, PortRef};
use ibcloud_routing::PathSls;
use ibcloud_sa::resolve::{MtuMap, Resolver};
use ibcloud_sa::wire::{PathRecord, PathRecordRepr};
use mad::{method, status, SaHeader, MAD_LEN, SA_DATA_OFFSET};
use records::{attr, get16, put16, put64, Layout};
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// SA status: unsupported method/attribute combination.
pub const STATUS_UNSUPPORTED: u16 = status::UNSUPPORTED_METHOD_ATTR;
/// SA status: no records.
pub const STATUS_NO_RECORDS: u16 = status::NO_RECORDS;
/// SA status: insufficient components.
pub const STATUS_INSUFFICIENT_COMPONENTS: u16 = status::INSUFFICIENT_COMPONENTS;

/// The link-local GID prefix, used when the SM's port reports none.
const DEFAULT_GID_PREFIX: u64 = 0xfe80_0000_0000_0000;

/// One port as the SA reports it.
#[derive(Debug, Clone)]
struct PortSnap {
    /// PortInfo as the port last answered (after the SM's Sets).
    info: [u8; 64],
    /// Port GUID (CA ports; switch port 0 = node GUID; 0 on switch
    /// external ports).
    guid: u64,
    /// The LID of the end port (a switch's ports: the switch's LID).
    lid: u16,
    /// LMC of the end port.
    lmc: u8,
}

/// One node as the SA reports it.
#[derive(Debug, Clone)]
struct NodeSnap {
    info: crate::wire::NodeInfoRepr,
    desc: [u8; 64],
    switch: Option<[u8; 64]>,
    ports: BTreeMap<u8, PortSnap>,
    id: Option<NodeId>,
}

impl NodeSnap {
    fn is_switch(&self) -> bool {
        self.info.node_type == NodeType::Switch
    }

    /// The end ports: port 0 of a switch, the ports of a CA.
    fn end_ports(&self) -> impl Iterator<Item = (u8, &PortSnap)> + '_ {
        let sw = self.is_switch();
        self.ports
            .iter()
            .filter(move |(&p, _)| (p == 0) == sw)
            .map(|(&p, s)| (p, s))
    }
}

/// What the SA answers from: the routed model and, once the SM has swept,
/// what every node and port reported.
#[derive(Debug, Clone)]
pub struct SaService {
    fabric: Fabric,
    tables: ForwardingTables,
    sls: Option<PathSls>,
    /// Set Paper I's caching flag in every PathRecord.
    pub caching: bool,
    /// PacketLifeTime of the records (OpenSM's default 0x12).
    pub pkt_life: u8,
    nodes: Vec<NodeSnap>,
    links: Vec<[u8; 8]>,
    sm: Option<(u16, SmInfoRepr)>,
    gid_prefix: u64,
    /// Base LID → (node, end port) for every LID of an LMC range.
    lid_owner: HashMap<u16, (usize, u8)>,
    /// Port GUID → base LID.
    guid_lid: HashMap<u64, u16>,
    /// The model's LID → port table, built once (the resolver needs it for
    /// every PathRecord; building it walks every port).
    lid_table: Vec<Option<PortRef>>,
    /// RMPP: time to wait for an ACK before resending the window.
    pub rmpp_timeout: Duration,
    /// RMPP: resends of an unacknowledged window before the transfer is
    /// dropped. 0 by default, as OpenSM's responses (sent with no retries):
    /// the requester repeats its request instead, and stray resends would
    /// reach the next process on ibsim's shim.
    pub rmpp_retries: u32,
}

/// What one request turns into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// One response MAD.
    Single(Box<[u8; MAD_LEN]>),
    /// A GetTable response: its header and the records back to back (with
    /// padding to the AttributeOffset); goes out by RMPP.
    Table(Box<SaHeader>, Vec<u8>),
    /// Nothing to answer (a response, or not an SA MAD).
    Nothing,
}

impl SaService {
    /// An SA over a routed fabric (PathRecords only until
    /// [`SaService::with_subnet`] adds what the SM discovered).
    pub fn new(
        fabric: Fabric,
        tables: ForwardingTables,
        sls: Option<PathSls>,
        caching: bool,
    ) -> Self {
        let mut s = Self {
            fabric,
            tables,
            sls,
            caching,
            pkt_life: 0x12,
            nodes: Vec::new(),
            links: Vec::new(),
            sm: None,
            gid_prefix: DEFAULT_GID_PREFIX,
            lid_owner: HashMap::new(),
            guid_lid: HashMap::new(),
            lid_table: Vec::new(),
            rmpp_timeout: Duration::from_millis(200),
            rmpp_retries: 0,
        };
        s.lid_table = s.fabric.lid_table().unwrap_or_default();
        for (id, n) in s.fabric.iter_nodes() {
            for p in n.addressable_ports() {
                if let Some(port) = s.fabric.port(PortRef::new(id, p)) {
                    if port.lid.0 != 0 && port.guid.0 != 0 {
                        s.guid_lid.insert(port.guid.0, port.lid.0);
                    }
                }
            }
        }
        s
    }

    /// Adds the nodes, ports and links the SM discovered (`ids[i]` is the
    /// model node of discovered node i) and the SM's own SMInfo, so that
    /// the node, port, switch, link, SM and GUID records can be answered.
    /// LIDs and LMC come from the model (they move with a migrated VM).
    pub fn with_subnet(mut self, d: &Discovery, ids: &[NodeId], sm: Option<SmInfoRepr>) -> Self {
        self.nodes.clear();
        for (i, n) in d.nodes.iter().enumerate() {
            let id = ids.get(i).copied();
            let model = |p: u8| id.and_then(|id| self.fabric.port(PortRef::new(id, p)));
            let sw = n.info.node_type == NodeType::Switch;
            let sw_lid = if sw {
                model(0).map_or(0, |p| p.lid.0)
            } else {
                0
            };
            let sw_lmc = if sw { model(0).map_or(0, |p| p.lmc) } else { 0 };
            let mut ports = BTreeMap::new();
            for (&p, pi) in &n.ports {
                let mut info = [0u8; 64];
                pi.emit(&mut info);
                let (lid, lmc, guid) = if sw {
                    (sw_lid, sw_lmc, if p == 0 { n.info.node_guid } else { 0 })
                } else {
                    let m = model(p);
                    (
                        m.map_or(pi.lid, |m| m.lid.0),
                        m.map_or(pi.lmc, |m| m.lmc),
                        n.port_guids.get(&p).copied().unwrap_or(n.info.port_guid),
                    )
                };
                if p == 0 || !sw {
                    put16(&mut info, 16, lid);
                    info[34] = (info[34] & !0x07) | (lmc & 0x07);
                }
                ports.insert(
                    p,
                    PortSnap {
                        info,
                        guid,
                        lid,
                        lmc,
                    },
                );
            }
            let mut desc = [0u8; 64];
            let b = n.description.as_bytes();
            desc[..b.len().min(64)].copy_from_slice(&b[..b.len().min(64)]);
            let switch = n.switch_info.as_ref().map(|s| {
                let mut b = [0u8; 64];
                s.emit(&mut b);
                b
            });
            self.nodes.push(NodeSnap {
                info: n.info.clone(),
                desc,
                switch,
                ports,
                id,
            });
        }
        self.lid_owner.clear();
        for (i, n) in self.nodes.iter().enumerate() {
            for (p, s) in n.end_ports() {
                if s.lid == 0 {
                    continue;
                }
                for l in 0..(1u32 << s.lmc) {
                    self.lid_owner.insert(s.lid.wrapping_add(l as u16), (i, p));
                }
                if s.guid != 0 {
                    self.guid_lid.insert(s.guid, s.lid);
                }
            }
        }
        let lid_of = |n: usize, p: u8| -> u16 { self.nodes[n].ports.get(&p).map_or(0, |s| s.lid) };
        self.links.clear();
        for &((a, pa), (b, pb)) in &d.links {
            for ((x, px), (y, py)) in [((a, pa), (b, pb)), ((b, pb), (a, pa))] {
                let mut r = [0u8; 8];
                put16(&mut r, 0, lid_of(x, px));
                r[2] = px;
                r[3] = py;
                put16(&mut r, 4, lid_of(y, py));
                self.links.push(r);
            }
        }
        // The node order (see `by_port_guid`), each switch's ports in turn.
        let key = |lid: u16| -> u64 {
            self.lid_owner.get(&lid).map_or(u64::MAX, |&(n, _)| {
                self.nodes[n].info.node_guid.swap_bytes()
            })
        };
        self.links.sort_by_key(|r| (key(get16(r, 0)), r[2]));
        if let Some(sm) = sm {
            let (n, p) = d.sm_port;
            let lid = self
                .nodes
                .get(n)
                .and_then(|s| s.ports.get(&p))
                .map_or(0, |s| s.lid);
            self.gid_prefix = d
                .nodes
                .get(n)
                .and_then(|s| s.ports.get(&p))
                .map_or(0, |pi| pi.gid_prefix);
            if self.gid_prefix == 0 {
                self.gid_prefix = DEFAULT_GID_PREFIX;
            }
            self.sm = Some((lid, sm));
        }
        // OpenSM walks its node table keyed by the GUID in network order
        // read as a host (little-endian) integer; answer in the same order
        // so that tables compare line by line.
        let mut order: Vec<usize> = (0..self.nodes.len()).collect();
        order.sort_by_key(|&i| self.nodes[i].info.node_guid.swap_bytes());
        let nodes = std::mem::take(&mut self.nodes);
        let mut remap = vec![0usize; nodes.len()];
        for (new, &old) in order.iter().enumerate() {
            remap[old] = new;
        }
        let mut slots: Vec<Option<NodeSnap>> = nodes.into_iter().map(Some).collect();
        self.nodes = order
            .iter()
            .map(|&i| slots[i].take().expect("each once"))
            .collect();
        for v in self.lid_owner.values_mut() {
            v.0 = remap[v.0];
        }
        self
    }

    fn error(req: &[u8; MAD_LEN], st: u16) -> Reply {
        let mut out = *req;
        out[3] = if req[3] == method::GET_TABLE {
            method::GET_TABLE_RESP
        } else {
            req[3] | 0x80
        };
        out[4..6].copy_from_slice(&st.to_be_bytes());
        // No RMPP on an error; SM_Key is never returned.
        out[24..36].fill(0);
        out[36..44].fill(0);
        Reply::Single(Box::new(out))
    }

    /// The answer to one SA MAD. `requester` is the LID it came from (the
    /// source of a PathRecord query that names none).
    pub fn answer(&self, req: &[u8; MAD_LEN], requester: u16) -> Reply {
        if req[1] != mad::MGMT_CLASS_SA || req[3] & 0x80 != 0 {
            return Reply::Nothing;
        }
        let h = match SaHeader::parse(req) {
            Ok(h) => h,
            Err(_) => return Self::error(req, status::BAD_VERSION),
        };
        if h.class_version != mad::SA_CLASS_VERSION {
            return Self::error(req, status::BAD_VERSION);
        }
        if h.method != method::GET && h.method != method::GET_TABLE {
            return Self::error(req, STATUS_UNSUPPORTED);
        }
        if h.attr_id == attr::CLASS_PORT_INFO {
            if h.method != method::GET {
                return Self::error(req, STATUS_UNSUPPORTED);
            }
            return self.respond(
                req,
                &h,
                CLASS_PORT_INFO_LAYOUT,
                vec![self.class_port_info()],
            );
        }
        let tpl = &req[SA_DATA_OFFSET..];
        let (layout, recs) = match h.attr_id {
            attr::NODE_RECORD => (records::NODE_RECORD, self.node_records(&h, tpl)),
            attr::PORT_INFO_RECORD => (records::PORT_INFO_RECORD, self.port_info_records(&h, tpl)),
            attr::SWITCH_INFO_RECORD => (
                records::SWITCH_INFO_RECORD,
                self.switch_info_records(&h, tpl),
            ),
            attr::LINK_RECORD => (records::LINK_RECORD, self.link_records(&h, tpl)),
            attr::SM_INFO_RECORD => (records::SM_INFO_RECORD, self.sm_info_records(&h, tpl)),
            attr::GUID_INFO_RECORD => (records::GUID_INFO_RECORD, self.guid_info_records(&h, tpl)),
            attr::LFT_RECORD => (records::LFT_RECORD, self.lft_records(&h, tpl)),
            attr::PATH_RECORD => match self.path_records(&h, tpl, requester) {
                Ok(r) => (records::PATH_RECORD, r),
                Err(st) => return Self::error(req, st),
            },
            attr::SERVICE_RECORD
            | attr::MC_MEMBER_RECORD
            | attr::MFT_RECORD
            | attr::INFORM_INFO_RECORD => (EMPTY_LAYOUT, Vec::new()),
            _ => return Self::error(req, STATUS_UNSUPPORTED),
        };
        self.respond(req, &h, layout, recs)
    }

    fn respond(
        &self,
        req: &[u8; MAD_LEN],
        h: &SaHeader,
        layout: Layout,
        recs: Vec<Vec<u8>>,
    ) -> Reply {
        let mut rh = *h;
        rh.method = h.method | 0x80;
        rh.status = 0;
        rh.sm_key = 0;
        rh.rmpp = mad::RmppHeader::default();
        rh.attr_offset = if recs.is_empty() {
            0
        } else {
            layout.attr_offset()
        };
        if h.method == method::GET {
            if recs.is_empty() {
                return Self::error(req, STATUS_NO_RECORDS);
            }
            if recs.len() > 1 {
                return Self::error(req, status::TOO_MANY_RECORDS);
            }
            let mut out = [0u8; MAD_LEN];
            rh.emit(&mut out);
            let r = &recs[0];
            let n = r.len().min(MAD_LEN - SA_DATA_OFFSET);
            out[SA_DATA_OFFSET..SA_DATA_OFFSET + n].copy_from_slice(&r[..n]);
            return Reply::Single(Box::new(out));
        }
        let stride = layout.stride();
        let mut data = vec![0u8; recs.len() * stride];
        for (i, r) in recs.iter().enumerate() {
            data[i * stride..i * stride + r.len().min(stride)]
                .copy_from_slice(&r[..r.len().min(stride)]);
        }
        Reply::Table(Box::new(rh), data)
    }

    fn class_port_info(&self) -> Vec<u8> {
        let mut b = vec![0u8; 72];
        b[0] = 1;
        b[1] = mad::SA_CLASS_VERSION;
        // IsSubnetOptionalRecordsSupported (SwitchInfo, Link, LFT and
        // GUIDInfo records are answered) and IsPortInfoCapMaskMatchSupported
        // (a PortInfoRecord CapabilityMask matches as a subset). No notices,
        // no multicast, no multipath: OpenSM's 0x2602 claims those.
        put16(&mut b, 2, 0x2100);
        // RespTimeValue 16 (4.096 µs × 2^16 ≈ 268 ms), as OpenSM answers.
        b[7] = 16;
        // No redirection: QP1 with the well-known Q_Key; traps to the same
        // Q_Key (OpenSM's values).
        b[32..36].copy_from_slice(&1u32.to_be_bytes());
        b[36..40].copy_from_slice(&0x8001_0000u32.to_be_bytes());
        b[68..72].copy_from_slice(&0x8001_0000u32.to_be_bytes());
        b
    }

    fn node_records(&self, h: &SaHeader, tpl: &[u8]) -> Vec<Vec<u8>> {
        let want_lid = get16(tpl, 0);
        let mut out = Vec::new();
        for n in &self.nodes {
            for (p, s) in n.end_ports() {
                if h.comp_mask & 1 != 0 && !lid_in(want_lid, s.lid, s.lmc) {
                    continue;
                }
                let mut r = records::blank(&records::NODE_RECORD);
                put16(&mut r, 0, s.lid);
                let mut ni = n.info.clone();
                ni.port_guid = s.guid;
                // A switch's record says port 0, a CA's the port (OpenSM).
                ni.local_port = p;
                let mut raw = [0u8; 64];
                ni.emit(&mut raw);
                r[4..44].copy_from_slice(&raw[..40]);
                r[44..108].copy_from_slice(&n.desc);
                if records::NODE_RECORD.matches(h.comp_mask, tpl, &r) {
                    out.push(r);
                }
            }
        }
        out
    }

    /// End ports in the order the tables are answered: by node, as
    /// OpenSM walks its node table (GUID in network order read as a
    /// little-endian integer, its map key), then by port. saquery's first
    /// PortInfo, GUIDInfo and Link records are then OpenSM's.
    fn by_port_guid(&self) -> Vec<(usize, u8)> {
        self.nodes
            .iter()
            .enumerate()
            .flat_map(|(i, n)| n.end_ports().map(move |(p, _)| (i, p)))
            .collect()
    }

    fn port_info_records(&self, h: &SaHeader, tpl: &[u8]) -> Vec<Vec<u8>> {
        let want_lid = get16(tpl, 0);
        let want_cap = u32::from_be_bytes([tpl[24], tpl[25], tpl[26], tpl[27]]);
        let mut out = Vec::new();
        for (ni, ep) in self.by_port_guid() {
            let n = &self.nodes[ni];
            // A switch contributes all its ports, a CA port itself.
            let ports: Vec<(&u8, &PortSnap)> = if n.is_switch() {
                n.ports.iter().collect()
            } else {
                n.ports.iter().filter(|(&p, _)| p == ep).collect()
            };
            for (&p, s) in ports {
                if h.comp_mask & 1 != 0 && !lid_in(want_lid, s.lid, s.lmc) {
                    continue;
                }
                let mut r = records::blank(&records::PORT_INFO_RECORD);
                put16(&mut r, 0, s.lid);
                r[2] = p;
                r[4..68].copy_from_slice(&s.info);
                let cap = u32::from_be_bytes([r[24], r[25], r[26], r[27]]);
                if h.comp_mask & (1 << 7) != 0 && cap & want_cap != want_cap {
                    continue;
                }
                if records::PORT_INFO_RECORD.matches(h.comp_mask & !1, tpl, &r) {
                    out.push(r);
                }
            }
        }
        out
    }

    fn switch_info_records(&self, h: &SaHeader, tpl: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for n in &self.nodes {
            let (Some(si), Some(p0)) = (n.switch.as_ref(), n.ports.get(&0)) else {
                continue;
            };
            let mut r = records::blank(&records::SWITCH_INFO_RECORD);
            put16(&mut r, 0, p0.lid);
            r[4..24].copy_from_slice(&si[..20]);
            if records::SWITCH_INFO_RECORD.matches(h.comp_mask, tpl, &r) {
                out.push(r);
            }
        }
        out
    }

    fn link_records(&self, h: &SaHeader, tpl: &[u8]) -> Vec<Vec<u8>> {
        self.links
            .iter()
            .filter(|r| records::LINK_RECORD.matches(h.comp_mask, tpl, &r[..]))
            .map(|r| r.to_vec())
            .collect()
    }

    fn sm_info_records(&self, h: &SaHeader, tpl: &[u8]) -> Vec<Vec<u8>> {
        let Some((lid, sm)) = &self.sm else {
            return Vec::new();
        };
        let mut r = records::blank(&records::SM_INFO_RECORD);
        put16(&mut r, 0, *lid);
        let mut raw = [0u8; 64];
        let mut sm = sm.clone();
        sm.sm_key = 0; // never shown to an untrusted requester (C15-0.1.5)
        sm.emit(&mut raw);
        r[4..25].copy_from_slice(&raw[..21]);
        if records::SM_INFO_RECORD.matches(h.comp_mask, tpl, &r) {
            vec![r]
        } else {
            Vec::new()
        }
    }

    fn guid_info_records(&self, h: &SaHeader, tpl: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for (ni, p) in self.by_port_guid() {
            let Some(s) = self.nodes[ni].ports.get(&p) else {
                continue;
            };
            if s.guid == 0 {
                continue;
            }
            // One record per block of eight the port has room for
            // (PortInfo.GUIDCap); block 0 entry 0 is the port GUID, the SM
            // assigns no alias GUIDs.
            let blocks = (s.info[50] as usize).div_ceil(8).max(1);
            for block in 0..blocks {
                let mut r = records::blank(&records::GUID_INFO_RECORD);
                put16(&mut r, 0, s.lid);
                r[2] = block as u8;
                if block == 0 {
                    put64(&mut r, 8, s.guid);
                }
                if records::GUID_INFO_RECORD.matches(h.comp_mask, tpl, &r) {
                    out.push(r);
                }
            }
        }
        out
    }

    fn lft_records(&self, h: &SaHeader, tpl: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let top = self.fabric.max_lid() as usize;
        for n in &self.nodes {
            let (Some(id), Some(p0)) = (n.id, n.ports.get(&0)) else {
                continue;
            };
            if !n.is_switch() {
                continue;
            }
            let table = self.tables.table(id);
            for block in 0..=top / 64 {
                let mut r = records::blank(&records::LFT_RECORD);
                put16(&mut r, 0, p0.lid);
                put16(&mut r, 2, block as u16);
                r[8..72].copy_from_slice(&crate::program::block_of(table, block as u32));
                if records::LFT_RECORD.matches(h.comp_mask, tpl, &r) {
                    out.push(r);
                }
            }
        }
        out
    }

    /// The end points a PathRecord query names: by LID, else by GID (the
    /// port GUID after the subnet prefix), else every end port (a query
    /// with neither side is, as in OpenSM, the requester's port to all).
    fn path_ends(
        &self,
        mask: u64,
        lid_bit: u64,
        gid_bit: u64,
        lid: u16,
        gid: [u8; 16],
    ) -> Result<Option<Vec<u16>>, u16> {
        if mask & lid_bit != 0 {
            return Ok(Some(vec![lid]));
        }
        if mask & gid_bit != 0 {
            let guid = u64::from_be_bytes(gid[8..16].try_into().expect("8 bytes"));
            return match self.guid_lid.get(&guid) {
                Some(&l) => Ok(Some(vec![l])),
                None => Err(status::INVALID_GID),
            };
        }
        Ok(None)
    }

    fn gid_of(&self, lid: u16) -> [u8; 16] {
        let mut g = [0u8; 16];
        let guid = match self.lid_owner.get(&lid) {
            Some(&(n, p)) => self.nodes[n].ports.get(&p).map_or(0, |s| s.guid),
            None => self
                .lid_table
                .get(lid as usize)
                .copied()
                .flatten()
                .and_then(|pr| self.fabric.port(pr))
                .map_or(0, |p| p.guid.0),
        };
        g[..8].copy_from_slice(&self.gid_prefix.to_be_bytes());
        g[8..].copy_from_slice(&guid.to_be_bytes());
        g
    }

    fn path_records(&self, h: &SaHeader, tpl: &[u8], requester: u16) -> Result<Vec<Vec<u8>>, u16> {
        use ibcloud_sa::wire::comp;
        let q = PathRecordRepr::parse(&PathRecord::new_unchecked(tpl))
            .or_else(|_| {
                // A query may carry MTU selector/values outside a record's
                // range; only the end points matter for parsing here.
                let mut t = [0u8; 64];
                t.copy_from_slice(&tpl[..64]);
                t[54] = 0;
                PathRecordRepr::parse(&PathRecord::new_unchecked(&t[..]))
            })
            .map_err(|_| status::REQ_INVALID)?;
        let m = h.comp_mask;
        let srcs = self.path_ends(m, comp::SLID, comp::SGID, q.slid, q.sgid)?;
        let dsts = self.path_ends(m, comp::DLID, comp::DGID, q.dlid, q.dgid)?;
        if h.method == method::GET && (srcs.is_none() || dsts.is_none()) {
            return Err(STATUS_INSUFFICIENT_COMPONENTS);
        }
        let all = || -> Vec<u16> {
            let mut v: Vec<u16> = self.guid_lid.values().copied().collect();
            v.sort_unstable();
            v
        };
        let srcs = match (srcs, &dsts) {
            (Some(s), _) => s,
            (None, Some(_)) => all(),
            (None, None) => vec![requester],
        };
        let dsts = dsts.unwrap_or_else(all);
        if self.lid_table.is_empty() {
            return Err(status::NO_RECORDS);
        }
        let resolver = Resolver::with_lid_table(
            &self.fabric,
            &self.tables,
            self.sls.as_ref(),
            MtuMap::default(),
            &self.lid_table,
        );
        let mut out = Vec::new();
        for &s in &srcs {
            for &d in &dsts {
                let Ok(res) = resolver.resolve(s, d) else {
                    continue;
                };
                let mut rec = res.record(self.pkt_life, self.caching);
                // NumbPath means something in a query only; OpenSM answers 0.
                rec.numb_path = 0;
                rec.sgid = self.gid_of(s);
                rec.dgid = self.gid_of(d);
                if m & comp::RAW_TRAFFIC == 0 {
                    rec.raw_traffic = false;
                }
                let mut r = vec![0u8; 64];
                rec.emit(&mut PathRecord::new_unchecked(&mut r[..]));
                if !records::PATH_RECORD.matches(m, tpl, &r) {
                    continue;
                }
                if !selector_ok(m, 16, tpl[54], rec.mtu) || !selector_ok(m, 18, tpl[55], rec.rate) {
                    continue;
                }
                out.push(r);
            }
        }
        if out.is_empty() && h.method == method::GET {
            return Err(STATUS_NO_RECORDS);
        }
        Ok(out)
    }
}

/// MTU/rate selection (IBA 1.3 Table 207): bit `sel_bit` is the selector's
/// component, `sel_bit + 1` the value's; selector 0 greater than, 1 less
/// than, 2 exactly, 3 largest available (always met by the one path).
fn selector_ok(mask: u64, sel_bit: u32, byte: u8, have: u8) -> bool {
    if mask & (1 << (sel_bit + 1)) == 0 {
        return true;
    }
    let want = byte & 0x3f;
    let sel = if mask & (1 << sel_bit) != 0 {
        byte >> 6
    } else {
        2
    };
    match sel {
        0 => have > want,
        1 => have < want,
        2 => have == want,
        _ => true,
    }
}

fn lid_in(want: u16, base: u16, lmc: u8) -> bool {
    base != 0 && want >= base && (want as u32) < base as u32 + (1u32 << lmc)
}

const CLASS_PORT_INFO_LAYOUT: Layout = Layout {
    size: 72,
    fields: &[],
};

const EMPTY_LAYOUT: Layout = Layout {
    size: 0,
    fields: &[],
};

/// A MAD to send: bytes and destination (LID, QP).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// The MAD.
    pub mad: [u8; MAD_LEN],
    /// Destination LID.
    pub dlid: u16,
    /// Destination QP.
    pub dqp: u32,
}

impl Outgoing {
    /// A MAD to `dlid`/`dqp`.
    pub fn new(mad: [u8; MAD_LEN], dlid: u16, dqp: u32) -> Self {
        Self { mad, dlid, dqp }
    }

    /// The bytes to hand to libibumad: the last segment of a table stops
    /// after its data (its PayloadLength says where), everything else is
    /// the full 256 bytes. On a real HCA the kernel pads the short MAD with
    /// zeros; through ibsim's shim the requester sees the length, and
    /// saquery counts the records of a one-segment table from it, as it
    /// does with OpenSM's (kernel-sized) answers.
    pub fn bytes(&self) -> &[u8] {
        let m = &self.mad;
        let data_seg = m[24] == 1 && m[25] == mad::rmpp_type::DATA;
        if data_seg && m[26] & mad::rmpp_flag::LAST != 0 {
            let pay = u32::from_be_bytes([m[32], m[33], m[34], m[35]]) as usize;
            let len = 36 + pay.min(mad::RMPP_SEGMENT_PAYLOAD as usize);
            return &m[..len.clamp(SA_DATA_OFFSET, MAD_LEN)];
        }
        m
    }
}

/// What the SA did since the SM started.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SaStats {
    /// Requests received.
    pub requests: u64,
    /// Requests answered with status 0.
    pub ok: u64,
    /// Requests answered with an error status.
    pub errors: u64,
    /// GetTable responses sent by RMPP.
    pub tables: u64,
    /// RMPP DATA segments sent, resends included.
    pub segments: u64,
    /// RMPP windows resent after a timeout.
    pub resends: u64,
    /// Transfers every segment of which was acknowledged.
    pub acknowledged: u64,
    /// Transfers abandoned (no ACK after every retry, STOP, ABORT).
    pub abandoned: u64,
    /// RMPP MADs (ACK/STOP/ABORT) of no open transfer.
    pub stray: u64,
    /// Tables refused because too many transfers were open.
    pub busy: u64,
}

/// Transfers are matched on the low 48 bits of the TransactionID: ibsim
/// keeps its client id in bits 48–63 of a request, which a requester's ACK
/// cannot carry back through the simulator (see `client`).
const TID_KEY: u64 = 0x0000_ffff_ffff_ffff;

struct Transfer {
    sender: rmpp::Sender,
    dlid: u16,
    dqp: u32,
}

/// The SA as a MAD endpoint: answers requests, runs the RMPP transfers of
/// table responses (ACKs, timeouts, resends) and keeps [`SaStats`].
pub struct SaServer {
    service: SaService,
    transfers: HashMap<(u16, u32, u64), Transfer>,
    /// Counters.
    pub stats: SaStats,
    /// Most transfers open at once; more get ERR_NO_RESOURCES.
    pub max_transfers: usize,
}

impl std::fmt::Debug for SaServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SaServer")
            .field("transfers", &self.transfers.len())
            .field("stats", &self.stats)
            .finish()
    }
}

impl SaServer {
    /// A server answering from `service`.
    pub fn new(service: SaService) -> Self {
        Self {
            service,
            transfers: HashMap::new(),
            stats: SaStats::default(),
            max_transfers: 256,
        }
    }

    /// Answers from a new snapshot from now on; open transfers go on.
    pub fn set_service(&mut self, service: SaService) {
        self.service = service;
    }

    /// Installs `service` in the SM's slot: a new server, or the running
    /// one with its transfers and counters kept.
    pub fn install(slot: &mut Option<SaServer>, service: SaService) {
        match slot {
            Some(s) => s.set_service(service),
            None => *slot = Some(SaServer::new(service)),
        }
    }

    /// One SA MAD from `slid`/`sqp`: what to send back.
    pub fn on_mad(
        &mut self,
        mad: &[u8; MAD_LEN],
        slid: u16,
        sqp: u32,
        now: Instant,
    ) -> Vec<Outgoing> {
        let to = |mad: [u8; MAD_LEN]| Outgoing::new(mad, slid, sqp);
        if mad[3] & 0x80 != 0 {
            // A response method: the requester's ACK/STOP/ABORT of a table.
            let Ok(h) = SaHeader::parse(mad) else {
                self.stats.stray += 1;
                return Vec::new();
            };
            let Some(t) = self.transfers.get_mut(&(slid, sqp, h.tid & TID_KEY)) else {
                self.stats.stray += 1;
                return Vec::new();
            };
            let out = t.sender.on_control(&h, now);
            self.stats.segments +=
                out.iter().filter(|m| m[25] == mad::rmpp_type::DATA).count() as u64;
            let out = out.into_iter().map(to).collect();
            self.reap();
            return out;
        }
        self.stats.requests += 1;
        let tid = u64::from_be_bytes(mad[8..16].try_into().expect("8 bytes"));
        match self.service.answer(mad, slid) {
            Reply::Nothing => Vec::new(),
            Reply::Single(m) => {
                if u16::from_be_bytes([m[4], m[5]]) == 0 {
                    self.stats.ok += 1;
                } else {
                    self.stats.errors += 1;
                }
                vec![to(*m)]
            }
            Reply::Table(h, data) => {
                let key = (slid, sqp, tid & TID_KEY);
                if self.transfers.contains_key(&key) {
                    return Vec::new(); // a resent request while its table is on the way
                }
                if self.transfers.len() >= self.max_transfers {
                    self.stats.busy += 1;
                    self.stats.errors += 1;
                    let mut e = [0u8; MAD_LEN];
                    let mut eh = *h;
                    eh.status = 0x0100; // ERR_NO_RESOURCES
                    eh.attr_offset = 0;
                    eh.emit(&mut e);
                    return vec![to(e)];
                }
                self.stats.ok += 1;
                self.stats.tables += 1;
                let mut sender = rmpp::Sender::new(
                    &h,
                    &data,
                    self.service.rmpp_timeout,
                    self.service.rmpp_retries,
                );
                let out: Vec<Outgoing> = sender.start(now).into_iter().map(to).collect();
                self.stats.segments += out.len() as u64;
                self.transfers.insert(
                    key,
                    Transfer {
                        sender,
                        dlid: slid,
                        dqp: sqp,
                    },
                );
                out
            }
        }
    }

    /// Resends or abandons transfers whose ACK is overdue.
    pub fn on_timer(&mut self, now: Instant) -> Vec<Outgoing> {
        let mut out = Vec::new();
        for t in self.transfers.values_mut() {
            if t.sender.deadline() <= now {
                let before = t.sender.resends;
                for m in t.sender.on_timeout(now) {
                    if m[25] == mad::rmpp_type::DATA {
                        self.stats.segments += 1;
                    }
                    out.push(Outgoing::new(m, t.dlid, t.dqp));
                }
                self.stats.resends += t.sender.resends - before;
            }
        }
        self.reap();
        out
    }

    /// When [`SaServer::on_timer`] next has work.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.transfers.values().map(|t| t.sender.deadline()).min()
    }

    /// Open RMPP transfers.
    pub fn open_transfers(&self) -> usize {
        self.transfers.len()
    }

    fn reap(&mut self) {
        let stats = &mut self.stats;
        self.transfers.retain(|_, t| match t.sender.outcome {
            None => true,
            Some(rmpp::Outcome::Acknowledged) => {
                stats.acknowledged += 1;
                false
            }
            Some(_) => {
                stats.abandoned += 1;
                false
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibcloud_fabric::generate;
    use ibcloud_fabric::lids::{assign_lids, LidOptions};
    use ibcloud_sa::wire::{SaMad, SaMadRepr, METHOD_GET_RESP};

    fn service(caching: bool) -> SaService {
        let mut f = generate::preset("4-ary-2-full").unwrap().build().unwrap();
        assign_lids(&mut f, &LidOptions::default()).unwrap();
        let r = ibcloud_routing::registry::engine("minhop", &Default::default())
            .unwrap()
            .route(&f)
            .unwrap();
        SaService::new(f, r.tables, None, caching)
    }

    fn single(r: Reply) -> [u8; 256] {
        match r {
            Reply::Single(m) => *m,
            other => panic!("expected one MAD, got {other:?}"),
        }
    }

    fn st(m: &[u8; 256]) -> u16 {
        u16::from_be_bytes([m[4], m[5]])
    }

    #[test]
    fn answers_a_path_record_with_the_resolvers_values_and_flag() {
        let sa = service(true);
        let mut req = [0u8; 256];
        SaMadRepr::get_path(0x1234_0000_0000_0007, 1, 32)
            .emit(&mut req)
            .unwrap();
        let out = single(sa.answer(&req, 1));
        let r = SaMadRepr::parse(&SaMad::new_checked(&out[..]).unwrap()).unwrap();
        assert_eq!(
            (r.method, r.status, r.tid),
            (METHOD_GET_RESP, 0, 0x1234_0000_0000_0007)
        );
        assert_eq!((r.record.slid, r.record.dlid, r.record.mtu), (1, 32, 4));
        assert!(r.record.caching);
        let plain = single(service(false).answer(&req, 1));
        assert!(
            !SaMadRepr::parse(&SaMad::new_checked(&plain[..]).unwrap())
                .unwrap()
                .record
                .caching
        );
    }

    #[test]
    fn refuses_what_it_does_not_serve() {
        let sa = service(false);
        let mut req = [0u8; 256];
        SaMadRepr::get_path(1, 1, 999).emit(&mut req).unwrap();
        assert_eq!(st(&single(sa.answer(&req, 1))), STATUS_NO_RECORDS);
        let mut other = req;
        other[17] = 0x13; // SL2VL table record: not served
        assert_eq!(st(&single(sa.answer(&other, 1))), STATUS_UNSUPPORTED);
        let mut set = req;
        set[3] = 0x02;
        assert_eq!(st(&single(sa.answer(&set, 1))), STATUS_UNSUPPORTED);
        let mut nomask = req;
        nomask[48..56].fill(0);
        assert_eq!(
            st(&single(sa.answer(&nomask, 1))),
            STATUS_INSUFFICIENT_COMPONENTS
        );
        let mut version = req;
        version[2] = 1;
        assert_eq!(st(&single(sa.answer(&version, 1))), status::BAD_VERSION);
        let mut resp = req;
        resp[3] = 0x81;
        assert_eq!(sa.answer(&resp, 1), Reply::Nothing);
    }

    #[test]
    fn a_path_table_by_source_lists_every_destination() {
        let sa = service(false);
        let mut req = [0u8; 256];
        SaMadRepr::get_path(5, 1, 0).emit(&mut req).unwrap();
        req[3] = method::GET_TABLE;
        req[48..56].copy_from_slice(&ibcloud_sa::wire::comp::SLID.to_be_bytes());
        let Reply::Table(h, data) = sa.answer(&req, 1) else {
            panic!("a table")
        };
        assert_eq!((h.method, h.attr_offset), (method::GET_TABLE_RESP, 8));
        let n = data.len() / 64;
        assert_eq!(n, sa.guid_lid.len());
        for r in data.chunks(64) {
            assert_eq!(get16(r, 42), 1, "every record starts at SLID 1");
        }
    }
}
