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
    /// Waits up to `timeout` for one MAD and its source LID; None when nothing came.
    fn recv(&mut self, timeout: Duration) -> Option<([u8; SMP_LEN], u16)>;
    /// The SM's own port (GUID, port number).
    fn local_port(&self) -> (u64, u8);
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

    fn recv(&mut self, timeout: Duration) -> Option<([u8; SMP_LEN], u16)> {
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        loop {
            let (status, slid, mad) = self.port.recv(ms)?;
            // A non-zero umad status is the kernel handing back a request it
            // timed out; our own timers handle that, so skip it.
            if status == 0 {
                return Some((mad, slid));
            }
        }
    }

    fn local_port(&self) -> (u64, u8) {
        (self.port.port.port_guid, self.port.port.portnum as u8)
    }
}
