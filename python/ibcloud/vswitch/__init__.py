"""SR-IOV vSwitches (Papers II and V): virtualized fat-trees whose VMs keep
their LID, vGUID and GID across live migration, the LID-space calculator,
reconfiguration with ItRC or FTreeMinRC, and the migration simulator.

>>> from ibcloud import Fabric
>>> from ibcloud.vswitch import VirtualFabric
>>> vf = VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=4, scheme="dynamic")
>>> vf.boot_vm("web", "hca-00001")["switch_smps"]   # dynamic LIDs: one SMP per physical switch
12
>>> r = vf.migrate("web", "hca-00002", method="ftree-minrc")
>>> r["switch_smps"], r["marked"]                  # same leaf: only the leaf is updated
(1, ['sw-L1-0001'])
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

from ibcloud import _native
from ibcloud.fabric import Fabric
from ibcloud.safeio import checked_ints
from ibcloud.tables import ForwardingTables

__all__ = [
    "VirtualFabric",
    "Simulation",
    "capacity",
    "simulate",
    "smp_time",
    "table2",
    "worst_case_marking",
]

#: Methods of :meth:`VirtualFabric.migrate`.
METHODS = ("itrc", "ftree-minrc", "full")
#: LID schemes.
SCHEMES = ("prepopulated", "dynamic")


class VirtualFabric:
    """A virtualized subnet: hypervisors (PF behind a vSwitch with VFs), VMs,
    and the forwarding tables its subnet manager keeps. Every change is
    atomic: a refused operation (``VSwitchError``) leaves it unchanged.

    >>> vf = VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=2, scheme="prepopulated")
    >>> vf.num_hypervisors, vf.num_vms, vf.scheme
    (32, 0, 'prepopulated')
    """

    def __init__(self, native: _native.VirtualFabric) -> None:
        self._native = native

    @classmethod
    @checked_ints
    def virtualize(cls, physical: Fabric, vfs: int = 4, scheme: str = "dynamic") -> "VirtualFabric":
        """Every CA of ``physical`` becomes a hypervisor with ``vfs`` VFs
        behind a vSwitch (port 1 uplink, port 2 PF, ports 3.. VFs); routed
        with ``vswitch-ftree``.

        >>> vf = VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=4)
        >>> vf.fabric().num_switches            # 12 physical + 32 vSwitches
        44
        """
        return cls(_native.VirtualFabric.virtualize(physical._native, vfs, scheme))

    @classmethod
    def from_fabric(cls, fabric: Fabric, scheme: str = "dynamic") -> "VirtualFabric":
        """Reads a fabric with vSwitches (a switch with a single uplink and
        only CAs otherwise); VMs come from the VF descriptions (``vm=NAME``).

        >>> vf = VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=2)
        >>> _ = vf.boot_vm("db", "hca-00003")
        >>> VirtualFabric.from_fabric(vf.fabric()).vms()[0]["name"]
        'db'
        """
        return cls(_native.VirtualFabric.from_fabric(fabric._native, scheme))

    @property
    def scheme(self) -> str:
        """``prepopulated`` or ``dynamic``.

        >>> VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=1).scheme
        'dynamic'
        """
        return self._native.scheme

    @property
    def num_vms(self) -> int:
        """Running VMs.

        >>> VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=1).num_vms
        0
        """
        return self._native.num_vms

    @property
    def num_hypervisors(self) -> int:
        """Hypervisors.

        >>> VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=1).num_hypervisors
        32
        """
        return self._native.num_hypervisors

    def fabric(self) -> Fabric:
        """The fabric as it is now (VF LIDs; VM names in the VF descriptions);
        write it with :meth:`Fabric.write` (ibsim net, ibnetdiscover, native).

        >>> f = VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=2).fabric()
        >>> f.num_cas                            # PF + 2 VFs per hypervisor
        96
        """
        return Fabric._from_native(self._native.fabric())

    def tables(self) -> ForwardingTables:
        """The current forwarding tables (physical switches and vSwitches).

        >>> vf = VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=1, scheme="prepopulated")
        >>> vf.tables().unrouted()
        0
        """
        return ForwardingTables._from_native(self._native.tables())

    def set_tables(self, tables: ForwardingTables) -> None:
        """Replaces the tables (e.g. OpenSM's LFTs for this fabric).

        >>> vf = VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=1)
        >>> vf.set_tables(vf.tables())
        """
        self._native.set_tables(tables._native)

    def hypervisors(self) -> List[Dict[str, Any]]:
        """Hypervisors: name, PF and vSwitch LIDs, leaf, VF LIDs, running VMs.

        >>> VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=2).hypervisors()[0]["leaf"]
        'sw-L1-0001'
        """
        return json.loads(self._native.hypervisors_json())

    def vms(self) -> List[Dict[str, Any]]:
        """Running VMs with LID, vGUID, GID and hypervisor.

        >>> vf = VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=2)
        >>> _ = vf.boot_vm("a", "hca-00001")
        >>> sorted(vf.vms()[0])
        ['gid', 'hypervisor', 'hypervisor_index', 'lid', 'name', 'vf', 'vguid']
        """
        return json.loads(self._native.vms_json())

    def boot_vm(self, name: str, hypervisor: str) -> Dict[str, Any]:
        """Boots a VM on a hypervisor (name, PF LID or ``#index``); returns
        its LID and the SMPs it cost (dynamic LIDs: one per physical switch).

        >>> vf = VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=2, scheme="prepopulated")
        >>> vf.boot_vm("a", "#0")["switch_smps"]   # prepopulated: the VF's LID is routed already
        0
        """
        return json.loads(self._native.boot_vm(name, hypervisor))

    def shutdown_vm(self, vm: str) -> int:
        """Shuts a VM down; returns the switch SMPs (dynamic: its LID is released).

        >>> vf = VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=2)
        >>> _ = vf.boot_vm("a", "#0")
        >>> vf.shutdown_vm("a")
        12
        """
        return self._native.shutdown_vm(vm)

    def reroute(self) -> None:
        """Routes the current placement afresh with ``vswitch-ftree``.

        >>> vf = VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=2)
        >>> vf.reroute()
        """
        self._native.reroute()

    def migrate(self, vm: str, to: str, method: str = "ftree-minrc", partially_static: bool = False,
                apply: bool = True, check: bool = True) -> Dict[str, Any]:
        """Live-migrates ``vm`` (name or LID) to hypervisor ``to`` and fixes
        the tables with ``method`` (``itrc``, ``ftree-minrc`` or ``full``).
        Returns the report: SMPs (switch, LFT block; hypervisor address SMPs),
        switches updated, marked and active switches, predicted time, and with
        ``check`` the reachability of the moved LIDs and the transition
        deadlock verdict. ``apply=False`` only plans.

        >>> vf = VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=2)
        >>> _ = vf.boot_vm("a", "hca-00001")
        >>> r = vf.migrate("a", "hca-00032", method="itrc", apply=False)
        >>> r["reachable"], r["hypervisor_smps"], r["applied"]
        (True, 3, False)
        """
        return json.loads(self._native.migrate(vm, to, method, partially_static, apply, check))

    def mark(self, src: str, dst: str) -> Dict[str, Any]:
        """FTreeMinRC's marked switches for a move between two hypervisors.

        >>> vf = VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=1)
        >>> len(vf.mark("#0", "#31")["marked"])   # 2 leaves + 4 roots
        6
        """
        return json.loads(self._native.mark(src, dst))

    def check(self) -> Dict[str, Any]:
        """Reachability of every VM LID from every switch.

        >>> vf = VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=1)
        >>> vf.check()["loops"]
        0
        """
        return json.loads(self._native.check())


@checked_ints
def capacity(vfs: int, switches: int = 0, routers: int = 0, others: int = 0, hypervisors: int = 0,
             extension_bits: int = 2, share: int = 0, dedicated_fraction: float = 1.0) -> Dict[str, Any]:
    """The LID-space calculator (reference B §1.5-1.6): prepopulated and
    dynamic limits, the LRH extension and the hybrid option.

    >>> c = capacity(16)
    >>> c["prepopulated"]["max_hypervisors"], c["prepopulated"]["max_vms"]
    (2891, 46256)
    >>> c["extension"]["vlids"]
    196608
    """
    return json.loads(_native.vswitch_capacity(vfs, switches, routers, others, hypervisors, extension_bits,
                                               share, dedicated_fraction))


@checked_ints
def smp_time(per_switch: Sequence[int], k_us: Optional[float] = None, r_us: float = 0.0, hops: int = 0,
             window: int = 16) -> float:
    """Predicted time (ms) to push ``per_switch[i]`` SMPs to switch ``i``
    (calibrated: 4,608 SMPs on 6 switches ≈ 300 ms).

    >>> round(smp_time([768] * 6)), round(smp_time([540] * 6))
    (300, 211)
    """
    return _native.vswitch_smp_time(list(per_switch), k_us, r_us, hops, window)


@checked_ints
def worst_case_marking(physical: Fabric, repeats: int = 5) -> Dict[str, Any]:
    """FTreeMinRC's marking between the first and the last leaf of a physical
    fat-tree: switches, marked switches and the best time in ms.

    >>> worst_case_marking(Fabric.generate("ft324"))["marked"]
    20
    """
    switches, marked, seconds = _native.vswitch_worst_marking(physical._native, repeats)
    return {"switches": switches, "marked": marked, "ms": seconds * 1e3}


def table2(fabric: Fabric) -> Dict[str, int]:
    """Paper II Table I / Paper V Table 2 for a physical fabric (one LID per
    switch and hypervisor, packed from 1): LIDs, LFT blocks per switch, SMPs
    of a full reconfiguration, and the LID swap/copy's best and worst case.

    >>> table2(Fabric.generate("ft324"))
    {'nodes': 324, 'switches': 36, 'lids': 360, 'blocks': 6, 'full_rc_smps': 216, 'min_smps': 1, 'max_smps': 72}
    """
    n = fabric.num_switches
    return {"nodes": fabric.num_cas, "switches": n, "lids": fabric.lids_in_use, "blocks": fabric.lft_blocks,
            "full_rc_smps": n * fabric.lft_blocks, "min_smps": 1, "max_smps": 2 * n}


@dataclass
class Simulation:
    """One migration simulation: configuration, per-migration statistics and
    snapshots (see :func:`simulate`).

    >>> s = simulate(Fabric.generate("4-ary-2-full"), bisect_runs=10, steps=2)
    >>> len(s.snapshots), s.unreachable
    (3, 0)
    """

    raw: Dict[str, Any]

    @property
    def migrations(self) -> "Any":
        """Per-migration statistics as a DataFrame.

        >>> s = simulate(Fabric.generate("4-ary-2-full"), bisect_runs=0, steps=1)
        >>> bool((s.migrations.minrc_switches <= s.migrations.minrc_marked).all())
        True
        """
        import pandas
        return pandas.DataFrame(self.raw["migrations"])

    @property
    def snapshots(self) -> "Any":
        """Snapshots (percent, migrations, ebb_minrc, ebb_fresh) as a DataFrame.

        >>> s = simulate(Fabric.generate("4-ary-2-full"), bisect_runs=10, steps=1)
        >>> list(s.snapshots.percent)
        [0.0, 100.0]
        """
        import pandas
        return pandas.DataFrame(self.raw["snapshots"])

    @property
    def unreachable(self) -> int:
        """Migrations after which the moved LID was not reachable (must be 0).

        >>> simulate(Fabric.generate("4-ary-2-full"), bisect_runs=0, steps=1).unreachable
        0
        """
        return self.raw["unreachable"]


@checked_ints
def simulate(physical: Fabric, vfs: int = 4, population: float = 0.25, placement: str = "random",
             pattern: str = "random", seed: int = 1, steps: int = 10, bisect_runs: int = 10000,
             transition_check: bool = False, endpoints: str = "vms") -> Simulation:
    """Runs one migration simulation (Paper V §7): VMs placed ``random`` or
    ``uniform`` at ``population`` of ``vfs`` per hypervisor, then the pattern
    (``random[:N]``, ``consolidate``, ``grouping[:N]``, ``to-uniform``), every
    migration planned with ItRC and FTreeMinRC and FTreeMinRC applied; every
    ``100/steps`` % the bisect effective bandwidth over the VMs is computed on
    the FTreeMinRC tables and on a fresh ``vswitch-ftree`` routing;
    ``endpoints`` says who takes part in the bisections: ``vms`` (default) or
    ``vms+pfs`` (Paper V does not say, reference B §5).

    >>> s = simulate(Fabric.generate("4-ary-2-full"), pattern="consolidate", bisect_runs=0, steps=1)
    >>> int(s.migrations.itrc_switches.mean() >= s.migrations.minrc_switches.mean())
    1
    """
    raw = _native.vswitch_simulate(physical._native, vfs, population, placement, pattern, seed, steps,
                                   bisect_runs, transition_check, endpoints)
    return Simulation(json.loads(raw))
