"""A tiny ctypes binding of libibumad (``libibumad.so.3``): open a port,
register an SA agent, send and receive MADs. Works on a real HCA and under
ibsim's ``umad2sim`` shim (``LD_PRELOAD``).

>>> Umad.available()
True
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
from dataclasses import dataclass
from ibcloud.safeio import checked_ints

__all__ = ["PortInfo", "Umad", "UmadError"]

#: Well-known QP1 Q_Key (GSI).
QP1_QKEY = 0x80010000
#: Bytes of a MAD.
MAD_SIZE = 256


class UmadError(RuntimeError):
    """libibumad refused an operation (no device, no SM, no agent).

    >>> str(UmadError("umad_open_port failed"))
    'umad_open_port failed'
    """


@dataclass(frozen=True)
class PortInfo:
    """What ``umad_get_port`` says about the local port.

    >>> PortInfo("mthca0", 1, 3, 1, 0).sm_lid
    1
    """

    ca_name: str
    portnum: int
    base_lid: int
    sm_lid: int
    sm_sl: int


def _lib() -> ctypes.CDLL:
    name = ctypes.util.find_library("ibumad") or "libibumad.so.3"
    lib = ctypes.CDLL(name, use_errno=True)
    lib.umad_init.restype = ctypes.c_int
    lib.umad_open_port.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.umad_get_port.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p]
    lib.umad_release_port.argtypes = [ctypes.c_void_p]
    lib.umad_register.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_uint8, ctypes.c_void_p]
    lib.umad_get_mad.argtypes = [ctypes.c_void_p]
    lib.umad_get_mad.restype = ctypes.c_void_p
    lib.umad_size.restype = ctypes.c_size_t
    lib.umad_status.argtypes = [ctypes.c_void_p]
    lib.umad_set_addr.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    lib.umad_send.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    lib.umad_recv.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    lib.umad_poll.argtypes = [ctypes.c_int, ctypes.c_int]
    lib.umad_close_port.argtypes = [ctypes.c_int]
    return lib


class Umad:
    """One open port with one SA agent (class 0x03, version 2).

    >>> Umad.available()
    True
    """

    @checked_ints(port=(0, 255))
    def __init__(self, ca: str | None = None, port: int = 0) -> None:
        self.lib = _lib()
        if self.lib.umad_init() < 0:
            raise UmadError("umad_init failed (no InfiniBand stack?)")
        cname = ca.encode() if ca else None
        raw = ctypes.create_string_buffer(512)
        if self.lib.umad_get_port(cname, port, raw) < 0:
            raise UmadError(f"umad_get_port({ca or 'first CA'}, {port}) failed: no such port")
        buf = raw.raw
        self.port = PortInfo(
            buf[:20].split(b"\0", 1)[0].decode(errors="replace"),
            int.from_bytes(buf[20:24], "little"),
            int.from_bytes(buf[24:28], "little"),
            int.from_bytes(buf[32:36], "little"),
            int.from_bytes(buf[36:40], "little"),
        )
        self.lib.umad_release_port(raw)
        self.fd = self.lib.umad_open_port(cname, port)
        if self.fd < 0:
            raise UmadError(f"umad_open_port({ca or 'first CA'}, {port}) failed ({self.fd})")
        self.agent = self.lib.umad_register(self.fd, 0x03, 2, 0, None)
        if self.agent < 0:
            raise UmadError(f"umad_register(SA class) failed ({self.agent})")
        self.hdr = int(self.lib.umad_size())
        self.size = self.hdr + MAD_SIZE
        self._send = ctypes.create_string_buffer(self.size)
        self._recv = ctypes.create_string_buffer(self.size)
        self._len = ctypes.c_int(self.size)

    @staticmethod
    def available() -> bool:
        """Whether libibumad can be loaded.

        >>> isinstance(Umad.available(), bool)
        True
        """
        try:
            _lib()
        except OSError:
            return False
        return True

    @checked_ints(dlid=(0, 0xFFFF), sl=(0, 15), timeout_ms=(0, 2**31 - 1))
    def send(self, mad: bytes, dlid: int, sl: int = 0, timeout_ms: int = 1000) -> int:
        """Sends one MAD to QP1 of ``dlid``; returns libibumad's result (0 = sent).

        >>> Umad.send.__name__
        'send'
        """
        ctypes.memset(self._send, 0, self.hdr)
        ctypes.memmove(ctypes.addressof(self._send) + self.hdr, mad, len(mad))
        self.lib.umad_set_addr(self._send, dlid, 1, sl, QP1_QKEY)
        return int(self.lib.umad_send(self.fd, self.agent, self._send, len(mad), timeout_ms, 0))

    @checked_ints(timeout_ms=(-1, 2**31 - 1))
    def recv(self, timeout_ms: int) -> tuple[int, bytes] | None:
        """Waits up to ``timeout_ms`` for one MAD: (status, 256 bytes), or None.

        A status of ``errno.ETIMEDOUT`` is the kernel returning a request it
        gave up on (real HCAs; the shim never does).

        >>> Umad.recv.__name__
        'recv'
        """
        self._len.value = self.size
        r = self.lib.umad_recv(self.fd, self._recv, ctypes.byref(self._len), timeout_ms)
        if r < 0:
            return None
        status = int(self.lib.umad_status(self._recv))
        return status, self._recv.raw[self.hdr:self.hdr + MAD_SIZE]

    def close(self) -> None:
        """Closes the port.

        >>> Umad.close.__name__
        'close'
        """
        if self.fd >= 0:
            self.lib.umad_close_port(self.fd)
            self.fd = -1


ETIMEDOUT = errno.ETIMEDOUT
