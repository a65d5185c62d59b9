"""Run the real tools of the field against ibcloud's files.

ibsim emulates a fabric from a net file; programs linked against libibumad
(ibnetdiscover, OpenSM, ibroute) talk to it through the ``umad2sim`` shim
loaded with ``LD_PRELOAD``. This module starts and stops those processes in
scratch directories so that several can run side by side:

- every :class:`IbSim` gets its own socket name (``IBSIM_SOCKNAME``), which both
  ibsim and the shim honour, so simulators never collide;
- shimmed clients run in the simulator's scratch folder, where the shim leaves
  its ``sys-PID`` folders;
- OpenSM gets a config file with its own ``dump_files_dir`` and an
  ``OSM_CACHE_DIR`` for guid2lid, so nothing is written under /var.

Scratch space is ``$IBCLOUD_SCRATCH`` or /dev/shm (tmpfs, i.e. memory: OpenSM's
dumps of an 11,664-node tree take 2 GB). A simulator removes the folder it
made when it stops; OpenSM's results stay where :class:`OpenSmRun` says until
the caller deletes them (``OpenSmRun.remove()``).

Processes are stopped by their PID, never by name.

>>> import shutil
>>> shutil.which("ibsim") is not None
True
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ibcloud.safeio import checked_ints

if TYPE_CHECKING:
    from ibcloud.fabric import Fabric
    from ibcloud.tables import ForwardingTables

__all__ = [
    "SHIM",
    "IbSim",
    "IbdmchkResult",
    "OpenSmRun",
    "InteropError",
    "ibdmchk",
    "ibnetdiscover",
    "ibroute_tables",
    "run_opensm",
    "tools_available",
]

#: The umad2sim shim shipped by Debian's ibsim-utils.
SHIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"

_counter = itertools.count()


class InteropError(RuntimeError):
    """A real tool failed or did not answer in time; the message quotes its output."""


def tools_available() -> dict[str, bool]:
    """Which of the interop tools are installed.

    >>> sorted(tools_available())
    ['ibdmchk', 'ibnetdiscover', 'ibroute', 'ibsim', 'opensm', 'umad2sim']
    """
    found = {name: shutil.which(name) is not None for name in ("ibsim", "ibnetdiscover", "opensm", "ibroute", "ibdmchk")}
    found["umad2sim"] = Path(SHIM).exists()
    return found


def _example_net() -> Path:
    """A small net file (the 4-ary-2-full tree) for the examples in this module."""
    from ibcloud.fabric import Fabric

    path = Path(tempfile.mkdtemp(prefix="ibcloud-example-", dir=_scratch_root())) / "4-ary-2-full.net"
    Fabric.generate("4-ary-2-full").write(path)
    return path


def _scratch_root() -> Path:
    chosen = os.environ.get("IBCLOUD_SCRATCH")
    if chosen:
        Path(chosen).mkdir(parents=True, exist_ok=True)
        return Path(chosen)
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else Path(tempfile.gettempdir())


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no output)"


class IbSim:
    """An ibsim process emulating the fabric in ``net_file``.

    Use it as a context manager; the simulator stops on exit. ``nodes``,
    ``switches`` and ``ports`` raise ibsim's limits (-N, -S, -P) for big fabrics;
    by default they are derived from the file.

    >>> from ibcloud import Fabric
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> Fabric.generate("4-ary-2-full").write(d / "t.net")
    >>> with IbSim(d / "t.net") as sim:
    ...     "Switch" in ibnetdiscover(sim)
    True
    """

    #: ibsim's stdin: DEVNULL runs it with its console off (``-n``).
    _console_stdin: int = subprocess.DEVNULL

    @checked_ints
    def __init__(
        self,
        net_file: str | os.PathLike[str],
        *,
        workdir: str | os.PathLike[str] | None = None,
        nodes: int | None = None,
        switches: int | None = None,
        ports: int | None = None,
        timeout: float = 120.0,
    ) -> None:
        self.net_file = Path(net_file).resolve()
        self.sockname = f"ibc{os.getpid()}x{next(_counter)}"
        self._own_workdir = workdir is None
        self.workdir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="ibsim-", dir=_scratch_root()))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.timeout = timeout
        counts = self._count_nodes()
        # ibsim's limits are totals (nodes, switches, ports of all nodes incl.
        # port 0); never go below its defaults of 2048, 256 and 13312.
        self.limits = (
            nodes if nodes is not None else max(counts[0] + 16, 2048),
            switches if switches is not None else max(counts[1] + 16, 256),
            ports if ports is not None else max(counts[2] + 64, 13312),
        )
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = self.workdir / "ibsim.log"

    def _count_nodes(self) -> tuple[int, int, int]:
        nodes = switches = total_ports = 0
        header = re.compile(r"^\s*(Switch|Hca|Ca|Rt)\s+(\d+)\s")
        with open(self.net_file, errors="replace") as fh:
            for line in fh:
                m = header.match(line)
                if m:
                    nodes += 1
                    switches += m.group(1) == "Switch"
                    total_ports += int(m.group(2)) + 1
        return nodes, switches, total_ports

    def client_env(self) -> dict[str, str]:
        """Environment for a libibumad program that should talk to this simulator.

        >>> sim = IbSim(_example_net())
        >>> env = sim.client_env()
        >>> env["LD_PRELOAD"] == SHIM, env["IBSIM_SOCKNAME"] == sim.sockname
        (True, True)
        """
        env = dict(os.environ)
        env["LD_PRELOAD"] = SHIM
        env["IBSIM_SOCKNAME"] = self.sockname
        return env

    def _ready(self) -> bool:
        try:
            return f"@{self.sockname}:" in Path("/proc/net/unix").read_text()
        except OSError:
            return False

    def start(self) -> IbSim:
        """Starts ibsim and waits until it accepts clients.

        >>> sim = IbSim(_example_net()).start()
        >>> sim.proc.poll() is None
        True
        >>> sim.stop()
        """
        n, s, p = self.limits
        # -n switches ibsim's console off; a subclass that talks to the
        # console (ibcloud.sm.console) keeps it and gets a pipe on stdin.
        console = ["-n"] if self._console_stdin == subprocess.DEVNULL else []
        cmd = ["ibsim", "-s", *console, "-N", str(n), "-S", str(s), "-P", str(p), str(self.net_file)]
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        env["IBSIM_SOCKNAME"] = self.sockname
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(cmd, cwd=self.workdir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=self._console_stdin, start_new_session=True)
        deadline = time.monotonic() + self.timeout
        while not self._ready():
            if self.proc.poll() is not None:
                raise InteropError(f"ibsim exited with {self.proc.returncode} on {self.net_file}:\n{_tail(self.log)}")
            if time.monotonic() > deadline:
                self.stop()
                raise InteropError(f"ibsim did not come up within {self.timeout:.0f} s on {self.net_file}")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        """Stops the simulator (by PID) and removes the scratch folder it made;
        stopping twice is harmless.

        >>> sim = IbSim(_example_net()).start()
        >>> sim.stop(); sim.stop()
        >>> sim.proc is None
        True
        """
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def run_client(self, cmd: list[str], *, timeout: float | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Runs a shimmed client in the simulator's folder and returns its output.

        >>> with IbSim(_example_net()) as sim:
        ...     out = sim.run_client(["ibnetdiscover", "--Switch_list"]).stdout
        >>> len(out.splitlines())
        12
        """
        try:
            done = subprocess.run(cmd, cwd=self.workdir, env=self.client_env(), capture_output=True, text=True,
                                  timeout=timeout or self.timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as err:
            raise InteropError(f"{cmd[0]} did not finish within {err.timeout:.0f} s") from err
        if check and done.returncode != 0:
            raise InteropError(f"{' '.join(cmd)} exited with {done.returncode}:\n{done.stderr[-2000:]}")
        return done

    def __enter__(self) -> IbSim:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def ibnetdiscover(sim: IbSim, out: str | os.PathLike[str] | None = None) -> str:
    """Runs ``ibnetdiscover`` against the simulator; returns (and optionally writes) the topology.

    >>> from ibcloud import Fabric
    >>> with IbSim(_example_net()) as sim:
    ...     seen = Fabric.from_text(ibnetdiscover(sim), "ibnetdiscover")
    >>> seen.topology_difference(Fabric.generate("4-ary-2-full")) is None
    True
    """
    text = sim.run_client(["ibnetdiscover"]).stdout
    if out is not None:
        Path(out).write_text(text)
    return text


@dataclass
class OpenSmRun:
    """Where one OpenSM run left its results (see :func:`run_opensm`).

    >>> run = OpenSmRun(0, Path("/x/log"), Path("/x/dumps"), Path("/x/cache"), "minhop", None)
    >>> run.lfts.name, run.subnet_lst.name, run.guid2lid.name
    ('opensm-lfts.dump', 'opensm-subnet.lst', 'guid2lid')
    """

    returncode: int
    #: OpenSM's log file.
    log: Path
    #: dump_files_dir: opensm-lfts.dump, opensm-subnet.lst, …
    dump_dir: Path
    #: OSM_CACHE_DIR: guid2lid, …
    cache_dir: Path
    #: Routing engine OpenSM reports it used, if the log says.
    engine_used: str | None
    #: Seconds between "building routing with" and "tables configured" in the log, if present.
    routing_seconds: float | None

    def remove(self) -> None:
        """Deletes the run's folder (log, dumps, cache).

        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp())
        >>> (d / "dumps").mkdir()
        >>> OpenSmRun(0, d / "opensm.log", d / "dumps", d / "cache", None, None).remove()
        >>> d.exists()
        False
        """
        shutil.rmtree(self.dump_dir.parent, ignore_errors=True)

    @property
    def lfts(self) -> Path:
        """OpenSM's forwarding tables, ``opensm-lfts.dump``.

        >>> OpenSmRun(0, Path("l"), Path("d"), Path("c"), None, None).lfts
        PosixPath('d/opensm-lfts.dump')
        """
        return self.dump_dir / "opensm-lfts.dump"

    @property
    def subnet_lst(self) -> Path:
        """OpenSM's view of the fabric, ``opensm-subnet.lst``.

        >>> OpenSmRun(0, Path("l"), Path("d"), Path("c"), None, None).subnet_lst
        PosixPath('d/opensm-subnet.lst')
        """
        return self.dump_dir / "opensm-subnet.lst"

    @property
    def guid2lid(self) -> Path:
        """OpenSM's LID cache, ``guid2lid``.

        >>> OpenSmRun(0, Path("l"), Path("d"), Path("c"), None, None).guid2lid
        PosixPath('c/guid2lid')
        """
        return self.cache_dir / "guid2lid"


_STAMP = re.compile(r"^(\w{3} \d{2} \d{2}:\d{2}:\d{2} \d{6})")


def _stamp_seconds(line: str) -> float | None:
    m = _STAMP.match(line)
    if not m:
        return None
    hms, micros = m.group(1).split()[2], m.group(1).split()[3]
    h, mi, s = (int(x) for x in hms.split(":"))
    return h * 3600 + mi * 60 + s + int(micros) / 1e6


def _parse_log(log: Path) -> tuple[str | None, float | None]:
    engine = None
    start = end = None
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return None, None
    for line in lines:
        m = re.search(r"building routing with '([^']+)'", line)
        if m:
            engine, start = m.group(1), _stamp_seconds(line)
        m = re.search(r"(\S+) tables configured on all switches", line)
        if m:
            end = _stamp_seconds(line)
            engine = engine or m.group(1)
        m = re.search(r"[Rr]outing engine (\S+) (?:was used|used)", line)
        if m and engine is None:
            engine = m.group(1)
    seconds = end - start if start is not None and end is not None else None
    return engine, seconds


def run_opensm(
    sim: IbSim,
    *,
    routing_engine: str | None = None,
    lfts_file: str | os.PathLike[str] | None = None,
    verbosity: str = "0x43",
    extra_args: list[str] | None = None,
    config: dict[str, str] | None = None,
    guid2lid: str | os.PathLike[str] | None = None,
    timeout: float = 600.0,
    config_text: str = "",
) -> OpenSmRun:
    """Runs OpenSM once (``-o``) on the simulator and collects its dumps.

    ``routing_engine`` is passed as ``-R``; ``lfts_file`` as ``-U`` for the
    ``file`` engine. The default verbosity ``0x43`` (errors, info, routing)
    makes OpenSM write its dumps (routing level) and log the engine it used
    (info level). ``guid2lid`` seeds OpenSM's LID cache, so a second run
    keeps the LIDs of a first. The log is flushed on every line (``-d 2``).
    ``config_text`` is appended to the config file as it is (options that
    repeat, such as OpenSM's per-SL congestion settings); what OpenSM prints
    while reading it (``Loading Cached Option``, warnings) is kept in
    ``opensm.stdout`` beside the log.

    >>> from ibcloud import Fabric, read_lfts
    >>> with IbSim(_example_net()) as sim:
    ...     run = run_opensm(sim)
    >>> run.returncode, run.engine_used
    (0, 'minhop')
    >>> subnet = Fabric.read(run.subnet_lst)
    >>> read_lfts(run.lfts, subnet).unrouted()
    0
    """
    run_dir = Path(tempfile.mkdtemp(prefix="opensm-", dir=_scratch_root()))
    dump_dir, cache_dir = run_dir / "dumps", run_dir / "cache"
    dump_dir.mkdir()
    cache_dir.mkdir()
    if guid2lid is not None:
        shutil.copyfile(guid2lid, cache_dir / "guid2lid")
    settings = {"dump_files_dir": str(dump_dir), **(config or {})}
    conf = run_dir / "opensm.conf"
    conf.write_text("".join(f"{k} {v}\n" for k, v in settings.items()) + config_text)
    log = run_dir / "opensm.log"
    cmd = ["opensm", "-o", "-F", str(conf), "-f", str(log), "-d", "2", "-D", verbosity]
    if routing_engine:
        cmd += ["-R", routing_engine]
    if lfts_file:
        cmd += ["-U", str(Path(lfts_file).resolve())]
    cmd += extra_args or []
    env = sim.client_env()
    env["OSM_CACHE_DIR"] = str(cache_dir)
    try:
        done = subprocess.run(cmd, cwd=sim.workdir, env=env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as err:
        raise InteropError(f"opensm did not finish within {timeout:.0f} s; log: {log}\n{_tail(log)}") from err
    (run_dir / "opensm.stdout").write_text(done.stdout)
    engine, seconds = _parse_log(log)
    return OpenSmRun(done.returncode, log, dump_dir, cache_dir, engine, seconds)


def ibroute_tables(sim: IbSim, fabric: "Fabric") -> "ForwardingTables":
    """Reads every switch's LFT back from the simulator with ``ibroute -n``
    (after OpenSM configured it) as tables for ``fabric``.

    >>> from ibcloud import Fabric, read_lfts
    >>> with IbSim(_example_net()) as sim:
    ...     run = run_opensm(sim)
    ...     fabric = Fabric.read(run.subnet_lst)
    ...     ibroute_tables(sim, fabric) == read_lfts(run.lfts, fabric)
    True
    """
    from ibcloud import _native
    from ibcloud.tables import ForwardingTables

    texts = []
    for node in fabric.nodes():
        if node["kind"] == "switch":
            texts.append(sim.run_client(["ibroute", "-n", str(node["lid"])]).stdout)
    return ForwardingTables._from_native(_native.parse_ibroute("".join(texts), fabric._native, "ibroute"))


@dataclass
class IbdmchkResult:
    """ibdmchk's verdict, parsed from its output (it segfaults after printing
    it, so the exit code means nothing).

    >>> IbdmchkResult(True, False, 10, "").ok
    True
    """

    #: Every CA-to-CA path exists ("-I- Scanned:N CA to CA paths" and no missing paths).
    connected: bool
    #: A credit loop was reported (None when ibdmchk stopped before checking).
    credit_loops: Optional[bool]
    #: CA-to-CA paths scanned.
    paths: int
    #: Its whole output.
    output: str

    @property
    def ok(self) -> bool:
        """Full connectivity and no credit loops.

        >>> IbdmchkResult(True, None, 10, "").ok
        False
        """
        return self.connected and self.credit_loops is False


def ibdmchk(subnet_lst: str | os.PathLike[str], fdbs: str | os.PathLike[str], *, timeout: float = 1800.0) -> IbdmchkResult:
    """Runs ``ibdmchk -s SUBNET_LST -f FDBS -m /dev/null`` (ibutils) in
    verification mode and parses its verdict.

    >>> import tempfile, pathlib
    >>> from ibcloud import Fabric, route
    >>> from ibcloud.verify import write_fdbs
    >>> with IbSim(_example_net()) as sim:
    ...     run = run_opensm(sim)
    >>> fabric = Fabric.read(run.subnet_lst)
    >>> fdbs = pathlib.Path(tempfile.mkdtemp()) / "opensm.fdbs"
    >>> write_fdbs(route(fabric, "ftree").tables, fdbs)
    >>> ibdmchk(run.subnet_lst, fdbs).ok
    True
    """
    cmd = ["ibdmchk", "-s", os.fspath(subnet_lst), "-f", os.fspath(fdbs), "-m", "/dev/null"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as err:
        raise InteropError(f"ibdmchk did not finish within {timeout:.0f} s") from err
    out = done.stdout + done.stderr
    scanned = re.search(r"-I- Scanned:\s*(\d+) CA to CA paths", out)
    missing = bool(re.search(r"-E- Found (\d+) missing paths", out)) or "Traversals Failed" in out \
        or "-E- Fail to find a path" in out
    loops: Optional[bool] = None
    if "-I- no credit loops found" in out:
        loops = False
    elif "credit loops in routing" in out or "Found credit loop" in out:
        loops = True
    if scanned is None and loops is None and not missing:
        raise InteropError(f"ibdmchk printed no verdict:\n{out[-2000:]}")
    return IbdmchkResult(bool(scanned) and not missing, loops, int(scanned.group(1)) if scanned else 0, out)
