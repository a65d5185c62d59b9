"""ibcloud's own subnet manager (the Rust crate ``ibcloud-sm``).

The SM runs in Rust over libibumad: on a real HCA, or against ibsim through
the umad2sim ``LD_PRELOAD`` shim exactly as OpenSM does. It discovers the
subnet by directed route, assigns LIDs as OpenSM does (guid2lid, LMC),
routes with any ibcloud engine, programs LFT blocks (only those that
differ from what a switch holds) and brings ports INIT → ARMED → ACTIVE.

- :func:`run` runs the SM in this process (GIL released; Ctrl-C stops it);
- :class:`SmDaemon` starts ``ibcloud sm run`` as a separate process on an
  :class:`~ibcloud.interop.IbSim` and stops it by PID;
- :func:`ctl` sends one command to a running SM's control socket.

>>> from ibcloud.sm import SmError
>>> issubclass(SmError, Exception)
True
"""

from __future__ import annotations

import json
import os
import signal
import socket as _socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from ibcloud import _native

if TYPE_CHECKING:
    from ibcloud.interop import IbSim

__all__ = ["SmDaemon", "SmError", "ctl", "run"]

#: Raised when the SM cannot run (no port, unknown engine, bad options).
SmError = _native.SmError


def run(engine: str = "minhop", *, once: bool = True, **options: Any) -> dict[str, Any]:
    """Runs the SM on the local port and returns its summary: the bring-up
    report (switches, CAs, links, SMPs by kind, seconds) and counters.

    ``options``: ``lmc``, ``guid2lid``, ``dump_dir``, ``smp_log``, ``socket``,
    ``sweep_interval`` (s), ``timeout_ms``, ``retries``, ``window``,
    ``read_lfts``, ``ca``, ``port``, ``priority``, ``sa`` (answer
    SubnAdmGet(PathRecord), default True), ``sa_caching`` (Paper I's flag),
    ``reconfig`` (``full``, ``slimupdate`` or ``subtree``: how sweeps after a change re-route),
    ``rediscovery`` (``targeted``, the default: a heavy sweep after the first
    re-reads only the switches that flag PortStateChange or sent a trap;
    ``full``: walk the whole subnet again, as OpenSM), ``qos`` (a QoS policy,
    preset name or TOML file: SL2VL and VL arbitration set on every port and
    read back after each heavy sweep; docs/qos.md). Without ``once`` it runs
    until ``stop`` arrives on the control socket or Ctrl-C.

    >>> run("nonsense")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.SmError: ...
    """
    for key in ("guid2lid", "dump_dir", "smp_log", "socket"):
        if options.get(key) is not None:
            options[key] = str(options[key])
    return json.loads(_native.sm_run(engine, once=once, **options))


def ctl(socket_path: str | os.PathLike[str], command: str, *, timeout: float = 600.0) -> dict[str, Any]:
    """Sends ``command`` (status, counters, sweep, light, stop) to the SM
    listening on ``socket_path``; returns its JSON answer.

    >>> ctl("/nonexistent.sock", "status")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileNotFoundError: ...
    """
    with _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        try:
            s.connect(os.fspath(socket_path))
        except OSError as err:  # name the socket in the message
            raise type(err)(err.errno, err.strerror or str(err), os.fspath(socket_path)) from None
        s.sendall(command.strip().encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return json.loads(data.decode())


class SmDaemon:
    """``ibcloud sm run`` on an ibsim fabric, as a separate process (the
    shim must be preloaded into it), with its control socket, SMP log and
    dumps (``fabric.topo``, ``opensm-lfts.dump``, ``guid2lid``) in a scratch
    folder. Stopped by PID on exit.

    >>> from ibcloud import Fabric
    >>> from ibcloud.interop import IbSim
    >>> import pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> Fabric.generate("4-ary-2-full").write(d / "t.net")
    >>> with IbSim(d / "t.net") as sim, SmDaemon(sim, engine="minhop") as sm:
    ...     ctl(sm.socket, "status")["result"]["state"]
    'Master'
    """

    def __init__(self, sim: "IbSim", *, engine: str = "minhop", args: Optional[list[str]] = None,
                 timeout: float = 120.0) -> None:
        self.sim = sim
        self.engine = engine
        self.dir = Path(tempfile.mkdtemp(prefix="ibcloud-sm-", dir=sim.workdir))
        self.socket = self.dir / "sm.sock"
        self.dump_dir = self.dir / "dumps"
        self.smp_log = self.dir / "smps.jsonl"
        self.summary = self.dir / "summary.json"
        self.log = self.dir / "sm.log"
        self.args = args or []
        self.timeout = timeout
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> "SmDaemon":
        """Starts the SM and waits until its control socket answers (bring-up done).

        >>> SmDaemon.start.__name__
        'start'
        """
        cmd = [sys.executable, "-m", "ibcloud.cli.main", "sm", "run", "--engine", self.engine,
               "--socket", str(self.socket), "--dump-dir", str(self.dump_dir), "--smp-log", str(self.smp_log),
               "--summary", str(self.summary), *self.args]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(cmd, cwd=self.sim.workdir, env=self.sim.client_env(), stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + self.timeout
        while True:
            if self.proc.poll() is not None:
                raise SmError(f"ibcloud sm exited with {self.proc.returncode}:\n{self.log.read_text(errors='replace')[-2000:]}")
            if self.socket.exists():
                try:
                    if ctl(self.socket, "status", timeout=5)["ok"]:
                        return self
                except OSError:
                    pass
            if time.monotonic() > deadline:
                self.stop()
                raise SmError(f"ibcloud sm did not come up within {self.timeout:.0f} s")
            time.sleep(0.05)

    def ctl(self, command: str) -> dict[str, Any]:
        """One control command (see :func:`ctl`).

        >>> SmDaemon.ctl.__name__
        'ctl'
        """
        return ctl(self.socket, command)

    def stop(self) -> None:
        """Stops the SM by PID (after asking it politely on its socket).

        >>> SmDaemon.stop.__name__
        'stop'
        """
        if self.proc and self.proc.poll() is None:
            try:
                ctl(self.socket, "stop", timeout=5)
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired, ValueError):
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        self.proc = None

    def __enter__(self) -> "SmDaemon":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
