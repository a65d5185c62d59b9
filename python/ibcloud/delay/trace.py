"""Per-VM CPU demand on a common time grid: the input of every delay and
consolidation computation.

A :class:`Trace` holds one row per VM of CPU demand **in cores** (the sum of
the VM's per-core utilisation divided by 100, so a 2-vCPU VM ranges 0–2),
sampled every ``interval_minutes`` minutes, all VMs on the same grid with no
gaps, plus each VM's vCPU count and, optionally, its memory utilisation in
percent (carried along, unused by the paper's CPU-only method). The
constructor refuses anything else with a :class:`~ibcloud.delay.TraceError`
naming the VM and sample.

Loaders (:mod:`ibcloud.delay.loaders`) turn public trace layouts into a
``Trace``; :func:`ibcloud.delay.synthetic_trace` generates one.

>>> t = Trace([[0.1, 0.2, 0.3], [1.0, 2.0, 0.0]], vcpus=[1, 2], vm_ids=["a", "b"])
>>> t.n_vms, t.n_samples, t.vcores
(2, 3, 3)
>>> t.mean_demand().round(2).tolist()
[0.2, 1.0]
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ibcloud.delay.errors import DelayParameterError, TraceError
from ibcloud.safeio import checked_ints

__all__ = ["CleaningReport", "Trace", "MINUTES_PER_DAY"]

#: Minutes in a day: the length of a cross-validation fold.
MINUTES_PER_DAY = 1440

#: Demand may exceed the vCPU count by this much (cores) before it counts as >100 %.
_TOLERANCE = 1e-6


@dataclasses.dataclass
class CleaningReport:
    """What a loader dropped or adjusted, so no cleaning step is silent.

    >>> r = CleaningReport(dropped=[("vm7", "t.csv:12: gap: no sample at minute 5")])
    >>> r.text()
    'dropped 1 VM: vm7 (t.csv:12: gap: no sample at minute 5)'
    """

    dropped: List[Tuple[str, str]] = dataclasses.field(default_factory=list)
    """VMs dropped, with the first problem found for each."""
    notes: List[str] = dataclasses.field(default_factory=list)
    """Adjustments that kept the data (e.g. timestamps snapped to the grid)."""

    def text(self) -> str:
        """One line per fact; empty when nothing was done.

        >>> CleaningReport().text()
        ''
        """
        lines = list(self.notes)
        if self.dropped:
            shown = "; ".join(f"{vm} ({why})" for vm, why in self.dropped[:5])
            more = f"; and {len(self.dropped) - 5} more" if len(self.dropped) > 5 else ""
            noun = "VM" if len(self.dropped) == 1 else "VMs"
            lines.append(f"dropped {len(self.dropped)} {noun}: {shown}{more}")
        return "\n".join(lines)

    def as_dict(self) -> Dict[str, Any]:
        """JSON-ready form.

        >>> CleaningReport(notes=["n"]).as_dict()
        {'dropped': [], 'notes': ['n']}
        """
        return {"dropped": [{"vm": vm, "reason": why} for vm, why in self.dropped], "notes": list(self.notes)}


class Trace:
    """CPU demand of VMs on a common grid; see the module documentation.

    >>> Trace([[0.5, 3.0]], vcpus=[2])
    Traceback (most recent call last):
    ...
    ibcloud.delay.errors.TraceError: <array>: VM vm0, sample 1: demand 3 cores exceeds its 2 vCPUs (>100 %)
    """

    @checked_ints
    def __init__(
        self,
        cpu,
        vcpus: Sequence[int],
        vm_ids: Optional[Sequence[str]] = None,
        interval_minutes: float = 1.0,
        memory=None,
        source: str = "<array>",
        cleaning: Optional[CleaningReport] = None,
    ) -> None:
        cpu = np.array(cpu, dtype=float, ndmin=2, copy=True)
        if cpu.ndim != 2:
            raise TraceError(f"{source}: demand must be a VMs × samples matrix, got {cpu.ndim} dimensions")
        n_vms, n_samples = cpu.shape
        if n_vms == 0 or n_samples == 0:
            raise TraceError(f"{source}: the trace holds no VM or no sample")
        vcpus = np.asarray(vcpus)
        if vcpus.shape != (n_vms,):
            raise TraceError(f"{source}: {vcpus.size} vCPU counts for {n_vms} VMs (unequal lengths)")
        if not np.all(np.isfinite(vcpus.astype(float))) or np.any(vcpus != np.round(vcpus)) or np.any(vcpus < 1):
            bad = int(np.flatnonzero(~(np.isfinite(vcpus.astype(float)) & (vcpus == np.round(vcpus)) & (vcpus >= 1)))[0])
            raise TraceError(f"{source}: VM {bad}: vCPU count {vcpus[bad]} is not a positive integer")
        vcpus = vcpus.astype(np.int64)
        ids = [f"vm{i}" for i in range(n_vms)] if vm_ids is None else [str(v) for v in vm_ids]
        if len(ids) != n_vms:
            raise TraceError(f"{source}: {len(ids)} VM ids for {n_vms} VMs (unequal lengths)")
        if len(set(ids)) != n_vms:
            seen: set = set()
            dup = next(v for v in ids if v in seen or seen.add(v))
            raise TraceError(f"{source}: VM id {dup!r} appears twice")
        if not (np.isfinite(interval_minutes) and interval_minutes > 0):
            raise TraceError(f"{source}: sampling interval {interval_minutes} min is not a positive number")

        def where(mask: np.ndarray) -> str:
            vm, sample = np.argwhere(mask)[0]
            return f"{source}: VM {ids[vm]}, sample {sample}"

        if not np.all(np.isfinite(cpu)):
            raise TraceError(f"{where(~np.isfinite(cpu))}: demand is not a number")
        if np.any(cpu < 0):
            mask = cpu < 0
            raise TraceError(f"{where(mask)}: demand {cpu[mask][0]:g} cores is negative")
        over = cpu > vcpus[:, None] + _TOLERANCE
        if np.any(over):
            vm = int(np.argwhere(over)[0][0])
            raise TraceError(f"{where(over)}: demand {cpu[over][0]:g} cores exceeds its {vcpus[vm]} vCPUs (>100 %)")
        np.minimum(cpu, vcpus[:, None], out=cpu)
        if memory is not None:
            memory = np.array(memory, dtype=float, ndmin=2, copy=True)
            if memory.shape != cpu.shape:
                raise TraceError(f"{source}: memory is {memory.shape[0]} × {memory.shape[1]}, CPU {n_vms} × {n_samples} "
                                 "(unequal lengths)")
            bad = ~np.isfinite(memory) | (memory < 0) | (memory > 100 + _TOLERANCE)
            if np.any(bad):
                raise TraceError(f"{where(bad)}: memory utilisation {memory[bad][0]:g} % is outside 0–100 %")
        self._cpu = cpu
        self._cpu.setflags(write=False)
        self._vcpus = vcpus
        self._vcpus.setflags(write=False)
        self._memory = memory
        if memory is not None:
            memory.setflags(write=False)
        self._ids = ids
        self._interval = float(interval_minutes)
        self.source = source
        """Where the trace came from (file name, or ``synthetic(seed=...)``)."""
        self.cleaning = cleaning or CleaningReport()
        """What the loader dropped or adjusted."""

    # -- shape -------------------------------------------------------------
    @property
    def cpu(self) -> np.ndarray:
        """Demand in cores, VMs × samples (read-only).

        >>> Trace([[0.5, 1.0]], vcpus=[1]).cpu.tolist()
        [[0.5, 1.0]]
        """
        return self._cpu

    @property
    def memory(self) -> Optional[np.ndarray]:
        """Memory utilisation in percent, VMs × samples, or ``None``.

        >>> Trace([[0.5]], vcpus=[1]).memory is None
        True
        """
        return self._memory

    @property
    def vcpus(self) -> np.ndarray:
        """vCPU count per VM.

        >>> Trace([[0.5]], vcpus=[4]).vcpus.tolist()
        [4]
        """
        return self._vcpus

    @property
    def vm_ids(self) -> List[str]:
        """VM identifiers, one per row.

        >>> Trace([[0.5]], vcpus=[1], vm_ids=["web1"]).vm_ids
        ['web1']
        """
        return list(self._ids)

    @property
    def n_vms(self) -> int:
        """Number of VMs.

        >>> Trace([[0.5], [0.1]], vcpus=[1, 1]).n_vms
        2
        """
        return self._cpu.shape[0]

    @property
    def n_samples(self) -> int:
        """Samples per VM.

        >>> Trace([[0.5, 0.1]], vcpus=[1]).n_samples
        2
        """
        return self._cpu.shape[1]

    @property
    def vcores(self) -> int:
        """Total vCPUs.

        >>> Trace([[0.5], [0.1]], vcpus=[2, 4]).vcores
        6
        """
        return int(self._vcpus.sum())

    @property
    def interval_minutes(self) -> float:
        """Sampling interval Δt in minutes.

        >>> Trace([[0.5]], vcpus=[1], interval_minutes=5).interval_minutes
        5.0
        """
        return self._interval

    @property
    def minutes(self) -> float:
        """Length of the trace in minutes.

        >>> Trace(np.zeros((1, 288)), vcpus=[1], interval_minutes=5).minutes
        1440.0
        """
        return self.n_samples * self._interval

    @property
    def days(self) -> float:
        """Length of the trace in days (may be fractional).

        >>> Trace(np.zeros((1, 720)), vcpus=[1]).days
        0.5
        """
        return self.minutes / MINUTES_PER_DAY

    @property
    def samples_per_day(self) -> int:
        """Samples in one day; the interval must divide a day.

        >>> Trace(np.zeros((1, 1)), vcpus=[1], interval_minutes=5).samples_per_day
        288
        """
        per_day = MINUTES_PER_DAY / self._interval
        if abs(per_day - round(per_day)) > 1e-9:
            raise DelayParameterError(f"a {self._interval:g}-minute interval does not divide a day into whole samples")
        return int(round(per_day))

    @property
    def whole_days(self) -> int:
        """Number of complete days (consecutive blocks of :attr:`samples_per_day`
        samples from the first sample); a partial last day is left out of
        cross-validation.

        >>> Trace(np.zeros((1, 3000)), vcpus=[1]).whole_days
        2
        """
        return self.n_samples // self.samples_per_day

    @checked_ints
    def day_window(self, day: int) -> Tuple[int, int]:
        """Sample range ``(start, end)`` of day ``day`` (0-based).

        >>> Trace(np.zeros((1, 2880)), vcpus=[1]).day_window(1)
        (1440, 2880)
        """
        if not 0 <= day < self.whole_days:
            raise DelayParameterError(f"day {day} is not one of the {self.whole_days} whole days of the trace")
        n = self.samples_per_day
        return (day * n, (day + 1) * n)

    # -- derived -----------------------------------------------------------
    def mean_demand(self) -> np.ndarray:
        """Mean demand per VM in cores.

        >>> Trace([[1.0, 0.0]], vcpus=[1]).mean_demand().tolist()
        [0.5]
        """
        return self._cpu.mean(axis=1)

    @checked_ints
    def select(self, vms: Sequence[int]) -> "Trace":
        """A trace of the VMs at the given row indices.

        >>> Trace([[0.1], [0.2]], vcpus=[1, 2], vm_ids=["a", "b"]).select([1]).vm_ids
        ['b']
        """
        idx = np.asarray(vms, dtype=np.int64)
        memory = None if self._memory is None else self._memory[idx]
        return Trace(self._cpu[idx], self._vcpus[idx], [self._ids[i] for i in idx], self._interval, memory,
                     self.source, self.cleaning)

    def summary(self) -> Dict[str, Any]:
        """Counts and means for reports.

        >>> Trace([[1.0, 0.0]], vcpus=[2]).summary()["mean_demand_cores"]
        0.5
        """
        vcpu_counts = {int(k): int(v) for k, v in zip(*np.unique(self._vcpus, return_counts=True))}
        return {
            "source": self.source,
            "vms": self.n_vms,
            "vcores": self.vcores,
            "vcpu_histogram": vcpu_counts,
            "samples": self.n_samples,
            "interval_minutes": self._interval,
            "days": round(self.days, 6),
            "mean_demand_cores": round(float(self._cpu.sum(axis=0).mean()), 6),
            "mean_utilisation_pct_of_vcores": round(float(100 * self._cpu.sum() / (self.n_samples * self.vcores)), 6),
            "cleaning": self.cleaning.as_dict(),
        }

    def to_frame(self):
        """The plain layout as a pandas DataFrame: one row per VM and sample,
        columns ``vm_id, vcpus, minute_index, cpu_pct_of_one_core`` (and
        ``mem_pct`` when memory is known).

        >>> Trace([[0.5, 1.25]], vcpus=[2], vm_ids=["a"]).to_frame().values.tolist()
        [['a', 2, 0, 50.0], ['a', 2, 1, 125.0]]
        """
        import pandas as pd

        n_vms, n = self._cpu.shape
        minutes = np.rint(np.arange(n) * self._interval).astype(np.int64)
        data = {
            "vm_id": np.repeat(np.asarray(self._ids, dtype=object), n),
            "vcpus": np.repeat(self._vcpus, n),
            "minute_index": np.tile(minutes, n_vms),
            "cpu_pct_of_one_core": (self._cpu * 100.0).ravel(),
        }
        if self._memory is not None:
            data["mem_pct"] = self._memory.ravel()
        return pd.DataFrame(data)

    def write(self, path: Union[str, Path]) -> Path:
        """Writes the plain layout: Parquet for ``.parquet``/``.pq``, CSV
        otherwise. The loaders read it back unchanged.

        >>> t = Trace([[0.5, 1.0]], vcpus=[1], vm_ids=["a"])
        >>> print(t.write("t.csv").read_text().strip())
        vm_id,vcpus,minute_index,cpu_pct_of_one_core
        a,1,0,50.0
        a,1,1,100.0
        """
        if abs(self._interval - round(self._interval)) > 1e-9:
            raise DelayParameterError("the plain layout stores whole minutes; this trace's interval is "
                                      f"{self._interval:g} min")
        path = Path(path)
        if path.parent != Path(""):
            path.parent.mkdir(parents=True, exist_ok=True)
        frame = self.to_frame()
        from ibcloud.safeio import atomic_path

        with atomic_path(path) as tmp:
            if path.suffix.lower() in (".parquet", ".pq"):
                frame.to_parquet(tmp, index=False)
            else:
                frame.to_csv(tmp, index=False)
        return path

    def __repr__(self) -> str:
        def count(n: int, noun: str) -> str:
            return f"{n} {noun}" + ("" if n == 1 else "s")

        return (f"Trace({count(self.n_vms, 'VM')}, {count(self.vcores, 'vCPU')}, {count(self.n_samples, 'sample')} "
                f"of {self._interval:g} min, {self.days:.2f} days, from {self.source})")
