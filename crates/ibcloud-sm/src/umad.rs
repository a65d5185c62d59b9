//! The only unsafe code of ibcloud: calls into libibumad (`libibumad.so.3`,
//! rdma-core), linked dynamically so that ibsim's umad2sim `LD_PRELOAD` shim
//! intercepts the device files it opens, exactly as for OpenSM.
//!
//! Every call passes buffers this module owns and sizes from `umad_size()`;
//! nothing returned by the library outlives the call that produced it
//! (`umad_get_port` is released before returning).

use crate::error::SmError;
use std::ffi::{c_char, c_int, c_long, c_uint, c_void, CString};

/// Well-known QP0 (SMI) Q_Key is 0; SMPs always go to QP0.
const QP0: c_int = 0;

// libc's `open`/`close` (not Rust's `open64`): the umad2sim shim wraps
// exactly these, and the issm device must be opened through them.
extern "C" {
    fn open(path: *const c_char, flags: c_int, ...) -> c_int;
    fn close(fd: c_int) -> c_int;
}

const O_RDWR: c_int = 2;

#[link(name = "libibumad.so.3", kind = "dylib", modifiers = "+verbatim")]
extern "C" {
    fn umad_init() -> c_int;
    fn umad_get_port(ca_name: *const c_char, portnum: c_int, port: *mut c_void) -> c_int;
    fn umad_release_port(port: *mut c_void) -> c_int;
    fn umad_open_port(ca_name: *const c_char, portnum: c_int) -> c_int;
    fn umad_close_port(portid: c_int) -> c_int;
    fn umad_get_mad(umad: *mut c_void) -> *mut c_void;
    fn umad_size() -> usize;
    fn umad_status(umad: *mut c_void) -> c_int;
    fn umad_set_addr(umad: *mut c_void, dlid: c_int, dqp: c_int, sl: c_int, qkey: c_int) -> c_int;
    fn umad_send(
        portid: c_int,
        agentid: c_int,
        umad: *mut c_void,
        length: c_int,
        timeout_ms: c_int,
        retries: c_int,
    ) -> c_int;
    fn umad_recv(portid: c_int, umad: *mut c_void, length: *mut c_int, timeout_ms: c_int) -> c_int;
    fn umad_get_issm_path(
        ca_name: *const c_char,
        portnum: c_int,
        path: *mut c_char,
        max: c_int,
    ) -> c_int;
    fn umad_register(
        portid: c_int,
        mgmt_class: c_int,
        mgmt_version: c_int,
        rmpp_version: u8,
        method_mask: *mut c_long,
    ) -> c_int;
}

/// What libibumad says about the local port (`umad_port_t`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalPort {
    /// CA name (`mthca0`, ibsim: `ibsim0`-like).
    pub ca_name: String,
    /// Port number.
    pub portnum: u32,
    /// Base LID.
    pub base_lid: u16,
    /// SM LID the port knows.
    pub sm_lid: u16,
    /// Logical state (1 Down … 4 Active).
    pub state: u32,
    /// Port GUID (host order).
    pub port_guid: u64,
}

/// Size of the scratch buffer for `umad_port_t` (the struct is ~110 bytes).
const PORT_STRUCT: usize = 512;

/// One open port with the SMI agents registered.
#[derive(Debug)]
pub struct UmadPort {
    fd: c_int,
    /// Agent of class 0x81 (directed route).
    agent_dr: c_int,
    /// Agent of class 0x01 (LID routed).
    agent_lid: c_int,
    /// Agent of class 0x03 (subnet administration, version 2).
    agent_sa: c_int,
    /// The issm device held open: marks the port as an SM's (IsSM), so
    /// requests to the SM (SMInfo, traps) are delivered to it.
    issm_fd: c_int,
    hdr: usize,
    send_buf: Vec<u8>,
    recv_buf: Vec<u8>,
    /// The port.
    pub port: LocalPort,
}

fn cname(ca: Option<&str>) -> Result<Option<CString>, SmError> {
    ca.map(|c| CString::new(c).map_err(|_| SmError::Umad(format!("CA name {c:?} has a NUL"))))
        .transpose()
}

impl UmadPort {
    /// Opens `ca`/`port` (None/0: the first active port, as OpenSM does) and
    /// registers the SMI agents.
    #[allow(unsafe_code)]
    pub fn open(ca: Option<&str>, port: u32) -> Result<Self, SmError> {
        let name = cname(ca)?;
        let name_ptr = name.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
        let mut raw = vec![0u8; PORT_STRUCT];
        // SAFETY: plain C calls; `raw` is larger than umad_port_t and lives
        // across the get/release pair; `name_ptr` is null or a live CString.
        let local = unsafe {
            if umad_init() < 0 {
                return Err(SmError::Umad(
                    "umad_init failed (no InfiniBand stack or shim?)".into(),
                ));
            }
            if umad_get_port(name_ptr, port as c_int, raw.as_mut_ptr().cast()) < 0 {
                return Err(SmError::Umad(format!(
                    "umad_get_port({}, {port}) failed: no such port",
                    ca.unwrap_or("first CA")
                )));
            }
            let parsed = parse_port(&raw);
            umad_release_port(raw.as_mut_ptr().cast());
            parsed
        };
        // SAFETY: as above.
        let fd = unsafe { umad_open_port(name_ptr, port as c_int) };
        if fd < 0 {
            return Err(SmError::Umad(format!("umad_open_port failed ({fd})")));
        }
        // SAFETY: fd is open; a null method mask is allowed (no unsolicited
        // methods). Requests to our port's SMI (SMInfo) are delivered by the
        // shim by class regardless.
        let (agent_dr, agent_lid, agent_sa, hdr) = unsafe {
            let dr = umad_register(fd, 0x81, 1, 0, std::ptr::null_mut());
            let lid = umad_register(fd, 0x01, 1, 0, std::ptr::null_mut());
            // RMPP version 0: the SA runs RMPP itself (sa::rmpp), so the
            // kernel must pass segments and ACKs through untouched.
            let sa = umad_register(fd, 0x03, 2, 0, std::ptr::null_mut());
            (dr, lid, sa, umad_size())
        };
        if agent_dr < 0 || agent_lid < 0 || agent_sa < 0 {
            // SAFETY: fd is open.
            unsafe { umad_close_port(fd) };
            return Err(SmError::Umad(format!(
                "umad_register of the SMI/SA classes failed ({agent_dr}, {agent_lid}, {agent_sa}); is another SM running?"
            )));
        }
        let mut issm = vec![0u8; 256];
        // SAFETY: `issm` has 256 bytes and the call is told so; the path it
        // writes is NUL-terminated; open/close are plain libc calls.
        let issm_fd = unsafe {
            if umad_get_issm_path(
                name_ptr,
                local.portnum as c_int,
                issm.as_mut_ptr().cast(),
                255,
            ) < 0
            {
                umad_close_port(fd);
                return Err(SmError::Umad("umad_get_issm_path failed".into()));
            }
            open(issm.as_ptr().cast(), O_RDWR)
        };
        if issm_fd < 0 {
            // SAFETY: fd is open.
            unsafe { umad_close_port(fd) };
            let path =
                String::from_utf8_lossy(&issm[..issm.iter().position(|&c| c == 0).unwrap_or(0)])
                    .into_owned();
            return Err(SmError::Umad(format!(
                "cannot open {path} ({}): another SM holds this port's SM device",
                std::io::Error::last_os_error()
            )));
        }
        let size = hdr + crate::wire::SMP_LEN;
        Ok(Self {
            fd,
            agent_dr,
            agent_lid,
            agent_sa,
            issm_fd,
            hdr,
            send_buf: vec![0; size],
            recv_buf: vec![0; size],
            port: local,
        })
    }

    /// Sends one 256-byte SMP; `directed` picks the DR agent and the
    /// permissive DLID, otherwise it goes to `dlid`.
    #[allow(unsafe_code)]
    pub fn send(
        &mut self,
        mad: &[u8; crate::wire::SMP_LEN],
        directed: bool,
        dlid: u16,
        timeout_ms: i32,
    ) -> Result<(), SmError> {
        self.send_buf[..self.hdr].fill(0);
        self.send_buf[self.hdr..].copy_from_slice(mad);
        let agent = if directed {
            self.agent_dr
        } else {
            self.agent_lid
        };
        let dlid = if directed { 0xffff } else { dlid as c_int };
        // SAFETY: send_buf holds umad_size() header bytes plus the MAD.
        let r = unsafe {
            let p: *mut c_void = self.send_buf.as_mut_ptr().cast();
            umad_set_addr(p, dlid as c_int, QP0, 0, 0);
            // Our own timeouts and retries (the shim ignores the kernel's).
            umad_send(self.fd, agent, p, mad.len() as c_int, timeout_ms, 0)
        };
        if r < 0 {
            return Err(SmError::Umad(format!("umad_send failed ({r})")));
        }
        Ok(())
    }

    /// Sends a GSI MAD (an SA answer) to `dlid`/`dqp` with the GSI Q_Key.
    #[allow(unsafe_code)]
    pub fn send_gsi(&mut self, mad: &[u8], dlid: u16, dqp: u32) -> Result<(), SmError> {
        let mad = &mad[..mad.len().min(crate::wire::SMP_LEN)];
        self.send_buf[..self.hdr].fill(0);
        self.send_buf[self.hdr..self.hdr + mad.len()].copy_from_slice(mad);
        self.send_buf[self.hdr + mad.len()..].fill(0);
        // SAFETY: send_buf holds umad_size() header bytes plus the MAD.
        let r = unsafe {
            let p: *mut c_void = self.send_buf.as_mut_ptr().cast();
            umad_set_addr(p, dlid as c_int, dqp as c_int, 0, 0x8001_0000u32 as c_int);
            umad_send(self.fd, self.agent_sa, p, mad.len() as c_int, 0, 0)
        };
        if r < 0 {
            return Err(SmError::Umad(format!("umad_send (SA) failed ({r})")));
        }
        Ok(())
    }

    /// Waits up to `timeout_ms` for one MAD: `(status, source LID, source QP, bytes)`, or None.
    #[allow(unsafe_code)]
    pub fn recv(&mut self, timeout_ms: i32) -> Option<(i32, u16, u32, [u8; crate::wire::SMP_LEN])> {
        let mut len: c_int = self.recv_buf.len() as c_int;
        // SAFETY: recv_buf is umad_size() + 256 bytes and `len` says so.
        let (r, status, mad_ptr) = unsafe {
            let p: *mut c_void = self.recv_buf.as_mut_ptr().cast();
            let r = umad_recv(self.fd, p, &mut len, timeout_ms);
            (r, umad_status(p), umad_get_mad(p) as usize)
        };
        if r < 0 {
            return None;
        }
        let off = mad_ptr.wrapping_sub(self.recv_buf.as_ptr() as usize);
        let off = if off == self.hdr { off } else { self.hdr };
        let mut out = [0u8; crate::wire::SMP_LEN];
        out.copy_from_slice(&self.recv_buf[off..off + crate::wire::SMP_LEN]);
        // ib_user_mad_t: five u32, then ib_mad_addr_t {qpn, qkey, lid (be16)}.
        let slid = u16::from_be_bytes([self.recv_buf[28], self.recv_buf[29]]);
        let sqp = u32::from_be_bytes([
            self.recv_buf[20],
            self.recv_buf[21],
            self.recv_buf[22],
            self.recv_buf[23],
        ]);
        Some((status, slid, sqp, out))
    }
}

/// A requester's port: only the SA class registered (version 2, RMPP
/// version 0), no issm device. The SA flooder and SA clients use it.
#[derive(Debug)]
pub struct SaClientPort {
    fd: c_int,
    agent: c_int,
    hdr: usize,
    send_buf: Vec<u8>,
    recv_buf: Vec<u8>,
    /// The port.
    pub port: LocalPort,
}

impl SaClientPort {
    /// Opens `ca`/`port` (None/0: the first port) and registers the SA class.
    #[allow(unsafe_code)]
    pub fn open(ca: Option<&str>, port: u32) -> Result<Self, SmError> {
        let name = cname(ca)?;
        let name_ptr = name.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
        let mut raw = vec![0u8; PORT_STRUCT];
        // SAFETY: as in UmadPort::open: `raw` outlives the get/release pair,
        // `name_ptr` is null or a live CString, null method mask allowed.
        let (local, fd, agent, hdr) = unsafe {
            if umad_init() < 0 {
                return Err(SmError::Umad(
                    "umad_init failed (no InfiniBand stack or shim?)".into(),
                ));
            }
            if umad_get_port(name_ptr, port as c_int, raw.as_mut_ptr().cast()) < 0 {
                return Err(SmError::Umad(format!(
                    "umad_get_port({}, {port}) failed: no such port",
                    ca.unwrap_or("first CA")
                )));
            }
            let parsed = parse_port(&raw);
            umad_release_port(raw.as_mut_ptr().cast());
            let fd = umad_open_port(name_ptr, port as c_int);
            if fd < 0 {
                return Err(SmError::Umad(format!("umad_open_port failed ({fd})")));
            }
            let agent = umad_register(fd, 0x03, 2, 0, std::ptr::null_mut());
            (parsed, fd, agent, umad_size())
        };
        if agent < 0 {
            // SAFETY: fd is open.
            unsafe { umad_close_port(fd) };
            return Err(SmError::Umad(format!(
                "umad_register(SA class) failed ({agent})"
            )));
        }
        let size = hdr + crate::wire::SMP_LEN;
        Ok(Self {
            fd,
            agent,
            hdr,
            send_buf: vec![0; size],
            recv_buf: vec![0; size],
            port: local,
        })
    }

    /// Sends one SA MAD to QP1 of `dlid` with the GSI Q_Key.
    #[allow(unsafe_code)]
    pub fn send(
        &mut self,
        mad: &[u8; crate::wire::SMP_LEN],
        dlid: u16,
        sl: u8,
    ) -> Result<(), SmError> {
        self.send_buf[..self.hdr].fill(0);
        self.send_buf[self.hdr..].copy_from_slice(mad);
        // SAFETY: send_buf holds umad_size() header bytes plus the MAD.
        let r = unsafe {
            let p: *mut c_void = self.send_buf.as_mut_ptr().cast();
            umad_set_addr(p, dlid as c_int, 1, sl as c_int, 0x8001_0000u32 as c_int);
            umad_send(self.fd, self.agent, p, mad.len() as c_int, 0, 0)
        };
        if r < 0 {
            return Err(SmError::Umad(format!(
                "umad_send (SA request) failed ({r})"
            )));
        }
        Ok(())
    }

    /// Waits up to `timeout_ms` for one MAD: `(status, bytes)`, or None.
    #[allow(unsafe_code)]
    pub fn recv(&mut self, timeout_ms: i32) -> Option<(i32, [u8; crate::wire::SMP_LEN])> {
        let mut len: c_int = self.recv_buf.len() as c_int;
        // SAFETY: recv_buf is umad_size() + 256 bytes and `len` says so.
        let (r, status) = unsafe {
            let p: *mut c_void = self.recv_buf.as_mut_ptr().cast();
            let r = umad_recv(self.fd, p, &mut len, timeout_ms);
            (r, umad_status(p))
        };
        if r < 0 {
            return None;
        }
        let mut out = [0u8; crate::wire::SMP_LEN];
        out.copy_from_slice(&self.recv_buf[self.hdr..self.hdr + crate::wire::SMP_LEN]);
        Some((status, out))
    }
}

impl Drop for SaClientPort {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: fd was opened by umad_open_port and is closed once.
        unsafe {
            umad_close_port(self.fd);
        }
    }
}

impl Drop for UmadPort {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: fd was opened by umad_open_port, issm_fd by open; each is closed once.
        unsafe {
            close(self.issm_fd);
            umad_close_port(self.fd);
        }
    }
}

fn parse_port(raw: &[u8]) -> LocalPort {
    let u32le = |at: usize| u32::from_le_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]]);
    let name_end = raw[..20].iter().position(|&c| c == 0).unwrap_or(20);
    // umad_port_t: ca_name[20], portnum, base_lid, lmc, sm_lid, sm_sl, state,
    // phys_state, rate, capmask (be32), gid_prefix (be64 at 56), port_guid (be64 at 64).
    let mut g = [0u8; 8];
    g.copy_from_slice(&raw[64..72]);
    LocalPort {
        ca_name: String::from_utf8_lossy(&raw[..name_end]).into_owned(),
        portnum: u32le(20),
        base_lid: u32le(24) as u16,
        sm_lid: u32le(32) as u16,
        state: u32le(40) as c_uint,
        port_guid: u64::from_be_bytes(g),
    }
}
