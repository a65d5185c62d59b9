//! The SM's subnet administrator: SubnAdmGet(PathRecord) answered from the
//! fabric and tables the SM programmed, through `ibcloud-sa`'s resolver
//! (SL, MTU, rate as the SA computes them; Paper I's caching flag in
//! reserved bit 353 when enabled). Anything else gets a MAD status:
//! other methods or attributes 0x000C (unsupported method/attribute),
//! a PathRecord without SLID and DLID in the component mask 0x0600
//! (insufficient components), a pair with no path 0x0300 (no records).

use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::Fabric;
use ibcloud_routing::PathSls;
use ibcloud_sa::resolve::{MtuMap, Resolver};
use ibcloud_sa::wire::{comp, SaMad, SaMadRepr, ATTR_PATH_RECORD, METHOD_GET, METHOD_GET_RESP};

/// SA status: unsupported method/attribute combination.
pub const STATUS_UNSUPPORTED: u16 = 0x000C;
/// SA status: no records.
pub const STATUS_NO_RECORDS: u16 = 0x0300;
/// SA status: insufficient components.
pub const STATUS_INSUFFICIENT_COMPONENTS: u16 = 0x0600;

/// What the SA answers from.
#[derive(Debug, Clone)]
pub struct SaService {
    fabric: Fabric,
    tables: ForwardingTables,
    sls: Option<PathSls>,
    /// Set Paper I's caching flag in every PathRecord.
    pub caching: bool,
    /// PacketLifeTime of the records (OpenSM's default 0x12).
    pub pkt_life: u8,
}

impl SaService {
    /// An SA over a routed fabric.
    pub fn new(
        fabric: Fabric,
        tables: ForwardingTables,
        sls: Option<PathSls>,
        caching: bool,
    ) -> Self {
        Self {
            fabric,
            tables,
            sls,
            caching,
            pkt_life: 0x12,
        }
    }

    fn error(req: &[u8; 256], status: u16) -> [u8; 256] {
        let mut out = *req;
        // GetTable (0x12) → GetTableResp (0x92); everything else → GetResp.
        out[3] = if req[3] == 0x12 {
            0x92
        } else {
            METHOD_GET_RESP
        };
        out[4..6].copy_from_slice(&status.to_be_bytes());
        out
    }

    /// The answer to one SA request MAD (None: not a request to answer).
    pub fn answer(&self, req: &[u8; 256]) -> Option<[u8; 256]> {
        if req[3] & 0x80 != 0 {
            return None;
        }
        let attr = u16::from_be_bytes([req[16], req[17]]);
        if req[3] != METHOD_GET || attr != ATTR_PATH_RECORD || req[2] != 2 {
            return Some(Self::error(req, STATUS_UNSUPPORTED));
        }
        let Ok(q) = SaMad::new_checked(&req[..]).and_then(|m| SaMadRepr::parse(&m)) else {
            return Some(Self::error(req, STATUS_UNSUPPORTED));
        };
        if q.comp_mask & (comp::SLID | comp::DLID) != (comp::SLID | comp::DLID) {
            return Some(Self::error(req, STATUS_INSUFFICIENT_COMPONENTS));
        }
        let resolver = Resolver::new(
            &self.fabric,
            &self.tables,
            self.sls.as_ref(),
            MtuMap::default(),
        )
        .ok()?;
        let resolved = match resolver.resolve(q.record.slid, q.record.dlid) {
            Ok(r) => r,
            Err(_) => return Some(Self::error(req, STATUS_NO_RECORDS)),
        };
        let resp = SaMadRepr {
            method: METHOD_GET_RESP,
            status: 0,
            tid: q.tid,
            comp_mask: q.comp_mask,
            record: resolved.record(self.pkt_life, self.caching),
        };
        let mut out = [0u8; 256];
        resp.emit(&mut out).ok()?;
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibcloud_fabric::generate;
    use ibcloud_fabric::lids::{assign_lids, LidOptions};

    fn service(caching: bool) -> SaService {
        let mut f = generate::preset("4-ary-2-full").unwrap().build().unwrap();
        assign_lids(&mut f, &LidOptions::default()).unwrap();
        let r = ibcloud_routing::registry::engine("minhop", &Default::default())
            .unwrap()
            .route(&f)
            .unwrap();
        SaService::new(f, r.tables, None, caching)
    }

    #[test]
    fn answers_a_path_record_with_the_resolvers_values_and_flag() {
        let sa = service(true);
        let mut req = [0u8; 256];
        SaMadRepr::get_path(0x1234_0000_0000_0007, 1, 32)
            .emit(&mut req)
            .unwrap();
        let out = sa.answer(&req).unwrap();
        let r = SaMadRepr::parse(&SaMad::new_checked(&out[..]).unwrap()).unwrap();
        assert_eq!(
            (r.method, r.status, r.tid),
            (METHOD_GET_RESP, 0, 0x1234_0000_0000_0007)
        );
        assert_eq!((r.record.slid, r.record.dlid, r.record.mtu), (1, 32, 4));
        assert!(r.record.caching);
        assert!(
            !SaMadRepr::parse(
                &SaMad::new_checked(&service(false).answer(&req).unwrap()[..]).unwrap()
            )
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
        assert_eq!(
            u16::from_be_bytes(sa.answer(&req).unwrap()[4..6].try_into().unwrap()),
            STATUS_NO_RECORDS
        );
        let mut other = req;
        other[17] = 0x11; // NodeRecord
        assert_eq!(
            u16::from_be_bytes(sa.answer(&other).unwrap()[4..6].try_into().unwrap()),
            STATUS_UNSUPPORTED
        );
        let mut table = req;
        table[3] = 0x12;
        let out = sa.answer(&table).unwrap();
        assert_eq!(out[3], 0x92);
        let mut nomask = req;
        nomask[48..56].fill(0);
        assert_eq!(
            u16::from_be_bytes(sa.answer(&nomask).unwrap()[4..6].try_into().unwrap()),
            STATUS_INSUFFICIENT_COMPONENTS
        );
        let mut resp = req;
        resp[3] = 0x81;
        assert!(sa.answer(&resp).is_none());
    }
}
