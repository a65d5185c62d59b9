//! Moving raw SMPs: the [`Transport`] trait, its libibumad implementation
//! ([`UmadTransport`]) and nothing else. Reliability lives in [`crate::mads`].

use crate::error::SmError;
use crate::umad::{LocalPort, UmadPort};
use crate::wire::{Route, SMP_LEN};
use std::time::Duration;

/// Sends and receives 256-byte SMPs.
pub trait Transport {
    /// Sends one SMP along `route`. `timeout` is handed to the kernel (which
    /// on real hardware matches the response to the sender within it).
    fn send(
        &mut self,
        smp: &[u8; SMP_LEN],
        route: &Route,
        timeout: Duration,
    ) -> Result<(), SmError>;
    /// Waits up to `timeout` for one MAD; None when nothing came.
    fn recv(&mut self, timeout: Duration) -> Option<Received>;
    /// Sends a GSI MAD (an SA answer) of `mad.len()` ≤ 256 bytes to `dlid`,
    /// QP `dqp` (a short MAD is zero-padded on the wire; through ibsim's
    /// shim the requester sees the length sent). Transports without a GSI
    /// drop it.
    fn send_gsi(&mut self, _mad: &[u8], _dlid: u16, _dqp: u32) -> Result<(), SmError> {
        Ok(())
    }
    /// The SM's own port (GUID, port number).
    fn local_port(&self) -> (u64, u8);
}

/// One MAD received and where it came from.
#[derive(Clone, Debug)]
pub struct Received {
    /// The 256 bytes.
    pub mad: [u8; SMP_LEN],
    /// Source LID (LID-routed and GSI MADs).
    pub slid: u16,
    /// Source QP.
    pub sqp: u32,
}

/// SMPs through libibumad.
#[derive(Debug)]
pub struct UmadTransport {
    port: UmadPort,
}

impl UmadTransport {
    /// Opens `ca`/`port` (None/0: the first port, as OpenSM does).
    pub fn open(ca: Option<&str>, port: u32) -> Result<Self, SmError> {
        Ok(Self {
            port: UmadPort::open(ca, port)?,
        })
    }

    /// What libibumad says about the port.
    pub fn port(&self) -> &LocalPort {
        &self.port.port
    }
}

impl Transport for UmadTransport {
    fn send(
        &mut self,
        smp: &[u8; SMP_LEN],
        route: &Route,
        timeout: Duration,
    ) -> Result<(), SmError> {
        let directed = matches!(route, Route::Directed(_));
        self.port.send(
            smp,
            directed,
            route.dlid(),
            timeout.as_millis().min(i32::MAX as u128) as i32,
        )
    }

    fn send_gsi(&mut self, mad: &[u8], dlid: u16, dqp: u32) -> Result<(), SmError> {
        self.port.send_gsi(mad, dlid, dqp)
    }

    fn recv(&mut self, timeout: Duration) -> Option<Received> {
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        loop {
            let (status, slid, sqp, mad) = self.port.recv(ms)?;
            // A non-zero umad status is the kernel handing back a request it
            // timed out; our own timers handle that, so skip it.
            if status == 0 {
                return Some(Received { mad, slid, sqp });
            }
        }
    }

    fn local_port(&self) -> (u64, u8) {
        (self.port.port.port_guid, self.port.port.portnum as u8)
    }
}
