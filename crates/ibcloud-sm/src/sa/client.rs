//! A requester that runs RMPP itself: SubnAdmGetTable through a
//! [`SaPort`], segments reassembled and acknowledged by
//! [`Reassembler`](super::rmpp::Reassembler). Through ibsim's shim (which
//! passes single MADs) this is how a whole table crosses; saquery, which
//! relies on the kernel's RMPP, sees only the first segment there.

use super::flood::SaPort;
use super::mad::{method, rmpp_type, SaHeader, MAD_LEN, SA_DATA_OFFSET};
use super::rmpp::{Reassembler, Step};
use std::time::{Duration, Instant};

/// An ACK is a response-method MAD, and ibsim routes responses to the
/// client named in TransactionID bits 48–63 — which, in the TID of a table
/// we asked for, is ourselves. Clearing them sends the ACK to client 0, the
/// SM (the first process to attach to the simulator). The SA matches
/// transfers on the low 48 bits. (A real HCA's MAD layer delivers a
/// response only to a matching send: there the kernel does RMPP, see
/// docs/sm.md.)
fn for_ibsim(mut ack: [u8; MAD_LEN]) -> [u8; MAD_LEN] {
    ack[8] = 0;
    ack[9] = 0;
    ack
}

/// A table as received: status, AttributeOffset (words) and the records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// MAD status of the response.
    pub status: u16,
    /// AttributeOffset in 8-byte words (0: no records).
    pub attr_offset: u16,
    /// The records, each `attr_offset * 8` bytes.
    pub records: Vec<Vec<u8>>,
    /// Segments received.
    pub segments: u32,
}

/// SubnAdmGetTable(`attr_id`) with `comp_mask` and the record template
/// `template` to the SA at `sa_lid`; ACKs every window of `window`
/// segments. Gives up after `timeout` without progress.
// The fields of one SA request; a struct would only rename them.
#[allow(clippy::too_many_arguments)]
pub fn get_table<P: SaPort>(
    port: &mut P,
    sa_lid: u16,
    attr_id: u16,
    comp_mask: u64,
    template: &[u8],
    tid: u64,
    window: u32,
    timeout: Duration,
) -> Result<Table, String> {
    let mut req = [0u8; MAD_LEN];
    SaHeader {
        class_version: 2,
        method: method::GET_TABLE,
        tid,
        attr_id,
        comp_mask,
        ..SaHeader::default()
    }
    .emit(&mut req);
    let n = template.len().min(MAD_LEN - SA_DATA_OFFSET);
    req[SA_DATA_OFFSET..SA_DATA_OFFSET + n].copy_from_slice(&template[..n]);
    port.send(&req, sa_lid).map_err(|e| e.to_string())?;
    let mut rx = Reassembler::new(window);
    let mut segments = 0;
    let mut deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!(
                "no answer within {timeout:?} after {segments} segments"
            ));
        }
        let Some((_, mad)) = port.recv(left.min(Duration::from_millis(100))) else {
            continue;
        };
        let Ok(h) = SaHeader::parse(&mad) else {
            continue;
        };
        if h.tid & 0xffff_ffff != tid & 0xffff_ffff
            || !h.is_response()
            || h.rmpp.kind == rmpp_type::ACK
        {
            continue;
        }
        if h.status != 0 || h.rmpp.kind == rmpp_type::NONE {
            return Ok(Table {
                status: h.status,
                attr_offset: h.attr_offset,
                records: Vec::new(),
                segments: 0,
            });
        }
        segments += 1;
        deadline = Instant::now() + timeout;
        match rx.push(&mad).map_err(|e| e.to_string())? {
            Step::More(ack) => {
                if let Some(a) = ack {
                    port.send(&for_ibsim(a), sa_lid)
                        .map_err(|e| e.to_string())?;
                }
            }
            Step::Done(first, data, ack) => {
                port.send(&for_ibsim(ack), sa_lid)
                    .map_err(|e| e.to_string())?;
                let stride = first.attr_offset as usize * 8;
                let records = if stride == 0 {
                    Vec::new()
                } else {
                    data.chunks(stride)
                        .filter(|c| c.len() == stride)
                        .map(<[u8]>::to_vec)
                        .collect()
                };
                return Ok(Table {
                    status: 0,
                    attr_offset: first.attr_offset,
                    records,
                    segments,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::SmError;
    use crate::sa::records::attr;
    use crate::sa::{SaServer, SaService};
    use ibcloud_fabric::generate;
    use ibcloud_fabric::lids::{assign_lids, LidOptions};
    use std::collections::VecDeque;

    /// The SA in memory, dropping every `drop_every`-th MAD it sends.
    struct Wire {
        server: SaServer,
        queue: VecDeque<[u8; 256]>,
        drop_every: u64,
        n: u64,
    }

    impl SaPort for Wire {
        fn send(&mut self, mad: &[u8; 256], _dlid: u16) -> Result<(), SmError> {
            for o in self.server.on_mad(mad, 7, 1, Instant::now()) {
                self.n += 1;
                if self.drop_every == 0 || !self.n.is_multiple_of(self.drop_every) {
                    self.queue.push_back(o.mad);
                }
            }
            Ok(())
        }

        fn recv(&mut self, _timeout: Duration) -> Option<(i32, [u8; 256])> {
            if self.queue.is_empty() {
                // Nothing in flight: let the server's timers resend.
                std::thread::sleep(Duration::from_millis(3));
                for o in self.server.on_timer(Instant::now()) {
                    self.queue.push_back(o.mad);
                }
            }
            self.queue.pop_front().map(|m| (0, m))
        }
    }

    fn wire(drop_every: u64) -> Wire {
        let mut f = generate::preset("4-ary-2-full").unwrap().build().unwrap();
        assign_lids(&mut f, &LidOptions::default()).unwrap();
        let r = ibcloud_routing::registry::engine("minhop", &Default::default())
            .unwrap()
            .route(&f)
            .unwrap();
        let mut svc = SaService::new(f, r.tables, None, false);
        svc.rmpp_timeout = Duration::from_millis(2);
        svc.rmpp_retries = 10;
        Wire {
            server: SaServer::new(svc),
            queue: VecDeque::new(),
            drop_every,
            n: 0,
        }
    }

    #[test]
    fn a_path_table_crosses_by_rmpp_even_with_losses() {
        for drop_every in [0, 7] {
            let mut w = wire(drop_every);
            let mut tpl = [0u8; 64];
            tpl[42..44].copy_from_slice(&1u16.to_be_bytes());
            let t = get_table(
                &mut w,
                1,
                attr::PATH_RECORD,
                1 << 5,
                &tpl,
                9,
                4,
                Duration::from_secs(5),
            )
            .unwrap();
            assert_eq!((t.status, t.attr_offset), (0, 8));
            assert_eq!(t.records.len(), 32 + 12, "from LID 1 to every end port");
            let needed = (t.records.len() * 64).div_ceil(200);
            if drop_every == 0 {
                assert_eq!(t.segments as usize, needed);
            } else {
                assert!(t.segments as usize > needed, "lost segments were resent");
            }
            assert!(t.records.iter().all(|r| r[42..44] == [0, 1]));
            assert_eq!(w.server.open_transfers(), 0);
            assert_eq!(w.server.stats.acknowledged, 1);
        }
    }

    #[test]
    fn errors_come_back_as_statuses() {
        let mut w = wire(0);
        let t = get_table(&mut w, 1, 0x0013, 0, &[], 3, 4, Duration::from_secs(1)).unwrap();
        assert_eq!(t.status, crate::sa::STATUS_UNSUPPORTED);
        let t = get_table(
            &mut w,
            1,
            attr::SERVICE_RECORD,
            0,
            &[],
            4,
            4,
            Duration::from_secs(1),
        )
        .unwrap();
        assert_eq!(
            (t.status, t.attr_offset, t.records.len()),
            (0, 0, 0),
            "an empty table, as OpenSM"
        );
    }
}
