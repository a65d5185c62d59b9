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

import signal
import subprocess
import time

from ibcloud.interop import IbSim, InteropError

__all__ = ["IbSimConsole"]


class IbSimConsole(IbSim):
    """An :class:`~ibcloud.interop.IbSim` whose console takes commands.

    >>> IbSimConsole.command.__name__
    'command'
    """

    _console_stdin = subprocess.PIPE  # ibsim reads its console from stdin

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
