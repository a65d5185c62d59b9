"""ibsim with its command console on a pipe, to inject faults while an SM
runs: ``Unlink "node"[port]`` (a cable pull), ``Relink "node"[port]`` (put
it back). ibsim reads its console from stdin, so this subclass of
:class:`~ibcloud.interop.IbSim` starts it with a pipe there; everything else
(own socket, scratch folder, stop by PID) is inherited.

>>> from ibcloud import Fabric
>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> Fabric.generate("4-ary-2-full").write(d / "t.net")
>>> with IbSimConsole(d / "t.net") as sim:
...     sim.command('Unlink "S-0002c90201000001"[5]')
...     "Switch" in sim.run_client(["ibnetdiscover"]).stdout
True
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

from ibcloud.interop import IbSim, InteropError, _tail

__all__ = ["IbSimConsole"]


class IbSimConsole(IbSim):
    """An :class:`~ibcloud.interop.IbSim` whose console takes commands.

    >>> IbSimConsole.command.__name__
    'command'
    """

    def start(self) -> "IbSimConsole":
        """Starts ibsim with a pipe on its console and waits until it accepts clients.

        >>> IbSimConsole.start.__name__
        'start'
        """
        n, s, p = self.limits
        # No -n: that flag switches the console off.
        cmd = ["ibsim", "-s", "-N", str(n), "-S", str(s), "-P", str(p), str(self.net_file)]
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        env["IBSIM_SOCKNAME"] = self.sockname
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(cmd, cwd=self.workdir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + self.timeout
        while not self._ready():
            if self.proc.poll() is not None:
                raise InteropError(f"ibsim exited with {self.proc.returncode} on {self.net_file}:\n{_tail(self.log)}")
            if time.monotonic() > deadline:
                self.stop()
                raise InteropError(f"ibsim did not come up within {self.timeout:.0f} s on {self.net_file}")
            time.sleep(0.05)
        return self

    def command(self, line: str) -> None:
        """Sends one console command (ibsim prints its answer to its log).

        >>> IbSimConsole.command.__doc__.split()[0]
        'Sends'
        """
        if self.proc is None or self.proc.stdin is None or self.proc.poll() is not None:
            raise InteropError("ibsim is not running")
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        time.sleep(0.2)  # ibsim handles its console between packets

    def stop(self) -> None:
        """Closes the console and stops ibsim by PID.

        >>> IbSimConsole.stop.__name__
        'stop'
        """
        if self.proc is not None and self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        super().stop()
