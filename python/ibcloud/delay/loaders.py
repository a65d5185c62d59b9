"""Reading per-VM CPU traces: the plain layout, the Bitbrains GWA-T-12 layout
and the Azure public VM CPU readings layout, from CSV or Parquet. No network:
files only.

**plain** (``read_plain``; what :meth:`Trace.write` writes), one row per VM
and sample, with a header::

    vm_id,vcpus,minute_index,cpu_pct_of_one_core[,mem_pct]

``minute_index`` counts whole minutes from the trace start (the sampling
interval is the greatest common step); ``cpu_pct_of_one_core`` is the VM's
utilisation summed over its cores, in percent of one core (0 to 100 × vcpus);
``mem_pct`` (optional) is memory utilisation in percent.

**bitbrains** (``read_bitbrains``): a directory of per-VM files (``<id>.csv``,
the VM id is the file name), fields separated by ``;`` and a tab, header
``Timestamp [ms]; CPU cores; CPU capacity provisioned [MHZ]; CPU usage [MHZ];
CPU usage [%]; Memory capacity provisioned [KB]; Memory usage [KB]; Disk
read throughput [KB/s]; Disk write throughput [KB/s]; Network received
throughput [KB/s]; Network transmitted throughput [KB/s]``. Demand is
``CPU cores × CPU usage [%] / 100``. The timestamps are seconds since 1970
in the published files despite the "[ms]" label; values above 10^11 are read
as milliseconds.

**azure** (``read_azure``): ``vm_cpu_readings-*.csv[.gz]`` files (a file or
a directory of them), no header: ``timestamp, vmid, mincpu, maxcpu, avgcpu``
(seconds from the trace start, percent of the whole VM). vCPU counts come
from the ``vmtable.csv[.gz]`` (no header; its 10th column is the core-count
bucket) or from one ``vcpus`` for every VM. Demand is
``vcpus × avgcpu / 100``.

Problems and what happens to them:

* file structure (unknown or missing columns, an unknown layout, an empty
  file): always a :class:`~ibcloud.delay.TraceError` naming the file;
* samples (a value that is missing or not a number, negative, above 100 %,
  Azure min > avg or avg > max, a duplicate timestamp, a vCPU count that
  changes, a gap in the grid, a VM that starts later or ends earlier than the
  others): with ``bad_vms="error"`` (default) a ``TraceError`` naming the file,
  line (or Parquet row) and problem; with ``bad_vms="drop"`` the VM is dropped,
  as the paper dropped "hosts with missing or corrupted data points", and the
  :class:`~ibcloud.delay.CleaningReport` of the trace lists it with its
  first problem. Nothing is imputed.

Timestamps of the public layouts are snapped to the nearest point of a grid
with the most common step, starting at the earliest timestamp (reported in
the cleaning notes with the largest shift).

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "t.csv").write_text("vm_id,vcpus,minute_index,cpu_pct_of_one_core\\nweb,2,0,150\\nweb,2,1,20\\n")
>>> read_trace(d / "t.csv").cpu.tolist()
[[1.5, 0.2]]
>>> _ = (d / "bad.csv").write_text("vm_id,vcpus,minute_index,cpu_pct_of_one_core\\nweb,2,0,250\\n")
>>> read_trace(d / "bad.csv")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ibcloud.delay.errors.TraceError: .../bad.csv:2: VM web: cpu_pct_of_one_core 250 is above 100 % of its 2 vCPUs (200)...
"""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ibcloud.delay.errors import DelayParameterError, TraceError
from ibcloud.delay.trace import CleaningReport, Trace
from ibcloud.safeio import checked_ints

__all__ = ["GRIDS", "LAYOUTS", "detect_layout", "read_azure", "read_bitbrains", "read_plain", "read_trace",
           "read_windows"]

PathLike = Union[str, Path]

#: The layouts :func:`read_trace` knows.
LAYOUTS = ("plain", "bitbrains", "azure")

PLAIN_COLUMNS = ("vm_id", "vcpus", "minute_index", "cpu_pct_of_one_core")
PLAIN_OPTIONAL = ("mem_pct",)
BITBRAINS_COLUMNS = (
    "Timestamp [ms]", "CPU cores", "CPU capacity provisioned [MHZ]", "CPU usage [MHZ]", "CPU usage [%]",
    "Memory capacity provisioned [KB]", "Memory usage [KB]", "Disk read throughput [KB/s]",
    "Disk write throughput [KB/s]", "Network received throughput [KB/s]", "Network transmitted throughput [KB/s]",
)
BITBRAINS_REQUIRED = ("Timestamp [ms]", "CPU cores", "CPU usage [%]")
AZURE_COLUMNS = ("timestamp", "vmid", "mincpu", "maxcpu", "avgcpu")
AZURE_VMTABLE_COLUMNS = ("vmid", "subscriptionid", "deploymentid", "vmcreated", "vmdeleted", "maxcpu", "avgcpu",
                         "p95maxcpu", "vmcategory", "vmcorecountbucket", "vmmemorybucket")
BAD_VMS = ("error", "drop")

_TOL = 1e-6


def _check_bad_vms(bad_vms: str) -> str:
    if bad_vms not in BAD_VMS:
        raise DelayParameterError(f"bad_vms = {bad_vms!r}: expected one of {', '.join(BAD_VMS)}")
    return bad_vms


def _is_parquet(path: Path) -> bool:
    return path.suffix.lower() in (".parquet", ".pq")


def _first_line(path: Path) -> str:
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8-sig", errors="replace") as f:  # type: ignore[operator]
            return f.readline()
    except (OSError, EOFError) as err:
        raise TraceError(f"{path}: cannot read: {err}") from None


def _read_table(path: Path, header: bool, names: Optional[Sequence[str]] = None, sep: str = ",",
                usecols: Optional[Sequence[str]] = None):
    """The file as a DataFrame of raw values and whether rows are CSV lines
    (only the columns ``usecols`` names, spaces around names ignored, when
    given: the public traces' files are large)."""
    import pandas as pd

    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", str(path))
    try:
        if _is_parquet(path):
            frame = pd.read_parquet(path)
            return frame, False
        # utf-8-sig: a byte-order mark (Excel adds one) is not part of the first column's name.
        wanted = None if usecols is None else {c.strip() for c in usecols}
        frame = pd.read_csv(path, sep=sep, header=0 if header else None, names=None if header else names,
                            usecols=None if wanted is None else (lambda c: str(c).strip() in wanted),
                            skip_blank_lines=False, dtype=str, keep_default_na=False, na_filter=False,
                            index_col=False, encoding="utf-8-sig")
    except UnicodeDecodeError:
        from ibcloud.safeio import read_text

        read_text(path)  # raises ParseError file:line: not UTF-8 text ...
        raise
    except (ValueError, pd.errors.ParserError, OSError, EOFError) as err:
        from ibcloud.safeio import bounded

        raise TraceError(f"{path}: cannot read as {'Parquet' if _is_parquet(path) else 'CSV'}: "
                         f"{bounded(str(err), 300)}") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    _check_field_sizes(path, frame, header)
    return frame, True


#: Characters a CSV field may have: VM ids, timestamps and numbers are short;
#: a longer field is a damaged file (and would make numpy ask for gigabytes).
MAX_FIELD_CHARS = 1024


def _check_field_sizes(path: Path, frame, header: bool) -> None:
    from ibcloud.safeio import excerpt

    for c in frame.columns:
        if len(c) > MAX_FIELD_CHARS:
            raise TraceError(f"{path}:1: a column name of {len(c):,} characters ({excerpt(c)})")
    for c in frame.columns:
        column = frame[c]
        if column.dtype.kind in "biufcmM" or not len(column):  # numbers: no long text possible
            continue
        lengths = column.str.len()
        if lengths.max() > MAX_FIELD_CHARS:
            row = int(lengths.to_numpy().argmax())
            raise TraceError(f"{path}:{row + (2 if header else 1)}: field {c!r} has {int(lengths.max()):,} "
                             f"characters (at most {MAX_FIELD_CHARS:,}): {excerpt(column.iloc[row])}")


def _numbers(frame, column: str):
    """Column as float, and a mask of cells that were missing or not numbers."""
    import pandas as pd

    raw = frame[column]
    if raw.dtype.kind in "fiub":
        values = raw.to_numpy(dtype=float)
        return values, ~np.isfinite(values)
    text = raw.astype(str).str.strip()
    values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
    return values, ~np.isfinite(values)


def _strings(frame, column: str) -> np.ndarray:
    return frame[column].astype(str).str.strip().to_numpy(dtype=object)


def _check_columns(path: Path, columns: Sequence[str], required: Sequence[str], allowed: Sequence[str],
                   layout: str) -> None:
    where = f"{path}:1" if not _is_parquet(path) else f"{path}"
    for c in columns:
        if c not in allowed:
            raise TraceError(f"{where}: unknown column {c!r} (the {layout} layout has: {', '.join(allowed)})")
    for c in required:
        if c not in columns:
            raise TraceError(f"{where}: missing column {c!r} (the {layout} layout needs: {', '.join(required)})")


@dataclasses.dataclass
class _Rows:
    """A long table of samples being assembled into a trace."""

    vm: List[np.ndarray] = dataclasses.field(default_factory=list)
    time: List[np.ndarray] = dataclasses.field(default_factory=list)  # minutes (plain) or seconds
    cpu: List[np.ndarray] = dataclasses.field(default_factory=list)  # cores
    vcpus: List[np.ndarray] = dataclasses.field(default_factory=list)
    mem: List[np.ndarray] = dataclasses.field(default_factory=list)  # percent, NaN when unknown
    file: List[np.ndarray] = dataclasses.field(default_factory=list)
    line: List[np.ndarray] = dataclasses.field(default_factory=list)
    bad: List[np.ndarray] = dataclasses.field(default_factory=list)  # problem index, -1 when fine
    files: List[Tuple[Path, bool, int]] = dataclasses.field(default_factory=list)  # path, CSV?, first line
    problems: List[object] = dataclasses.field(default_factory=list)  # message, or row -> message
    has_mem: bool = False
    notes: List[str] = dataclasses.field(default_factory=list)  # cleaning done while reading

    def add(self, path: Path, csv: bool, vm, time, cpu, vcpus, mem, problems: List[Tuple[np.ndarray, object]],
            header: bool = True) -> None:
        n = len(time)
        file_id = len(self.files)
        first = (2 if header else 1) if csv else 0
        self.files.append((path, csv, first))
        bad = np.full(n, -1, dtype=np.int64)
        # Earlier problems win: fill in reverse so the first listed is kept.
        for mask, message in reversed(problems):
            if np.any(mask):
                self.problems.append(message)
                bad[np.asarray(mask, dtype=bool)] = len(self.problems) - 1
        self.vm.append(np.asarray(vm, dtype=object))
        self.time.append(np.asarray(time, dtype=float))
        self.cpu.append(np.asarray(cpu, dtype=float))
        self.vcpus.append(np.asarray(vcpus, dtype=float))
        self.mem.append(np.full(n, np.nan) if mem is None else np.asarray(mem, dtype=float))
        self.has_mem = self.has_mem or mem is not None
        self.file.append(np.full(n, file_id, dtype=np.int64))
        self.line.append(np.arange(n, dtype=np.int64) + first)
        self.bad.append(bad)

    def message(self, problem: int, file_id: int, line: int) -> str:
        text = self.problems[problem]
        row = line - self.files[file_id][2]
        return text(row) if callable(text) else str(text)

    def where(self, file_id: int, line: int) -> str:
        path, csv, _ = self.files[file_id]
        return f"{path}:{line}" if csv else f"{path}: row {line}"


def _grid_step(vm_codes: np.ndarray, times: np.ndarray, integer: bool) -> float:
    """The sampling step: gcd of the steps (plain) or the most common step."""
    order = np.lexsort((times, vm_codes))
    t = times[order]
    same = vm_codes[order][1:] == vm_codes[order][:-1]
    steps = np.diff(t)[same]
    steps = steps[steps > 0]
    if steps.size == 0:
        return 1.0 if integer else 60.0
    if integer:
        return float(np.gcd.reduce(steps.astype(np.int64)))
    values, counts = np.unique(np.round(steps, 3), return_counts=True)
    return float(values[np.argmax(counts)])


def _first_per_vm(code: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Of ``rows`` (indices in file and line order), the first one of each VM."""
    if rows.size == 0:
        return rows
    _, first = np.unique(code[rows], return_index=True)
    return rows[first]


#: Grids :func:`read_bitbrains` and :func:`read_azure` can put samples on.
GRIDS = ("snap", "hold")

#: ``grid="hold"``: a sample holds its value until the next one if that comes
#: within this many steps; a longer silence is a gap (the sample then holds
#: for one step). 1.5 lets the public traces' 299/301 s jitter through and
#: stops at a missed sample (a 600 s step).
HOLD_STEPS = 1.5


def _check_window(grid: str, start_day: int, days: Optional[int]) -> None:
    if grid not in GRIDS:
        raise DelayParameterError(f"grid = {grid!r}: expected one of {', '.join(GRIDS)}")
    if isinstance(start_day, bool) or not isinstance(start_day, (int, np.integer)) or start_day < 0:
        raise DelayParameterError(f"start_day = {start_day!r}: must be a whole number ≥ 0")
    if days is not None and (isinstance(days, bool) or not isinstance(days, (int, np.integer)) or days < 1):
        raise DelayParameterError(f"days = {days!r}: must be a whole number ≥ 1")


def _when(seconds: float) -> str:
    """A timestamp for messages: UTC date and time of Unix seconds, else seconds."""
    import datetime

    if seconds > 1e8:
        utc = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
        return f"{utc:%Y-%m-%d %H:%M:%S} UTC ({seconds:.0f} s)"
    return f"{seconds:g} s"


def _hold_grid(code: np.ndarray, time: np.ndarray, cpu: np.ndarray, n_vms: int, t0: float, step: float,
               n_slots: int) -> Tuple[np.ndarray, np.ndarray]:
    """Time-weighted averages of every VM's sample-and-hold series over the
    slots ``[t0 + k·step, t0 + (k+1)·step)``, and how many seconds of each slot
    a sample covered. Rows are good samples sorted by (VM, time).

    >>> v, c = _hold_grid(np.array([0, 0]), np.array([0.0, 450.0]), np.array([1.0, 3.0]), 1, 0.0, 300.0, 3)
    >>> v.tolist(), c.tolist()
    ([[1.0, 2.0, 3.0]], [[300.0, 300.0, 150.0]])
    """
    nxt = np.empty_like(time)
    nxt[:-1] = time[1:]
    same = np.zeros(time.size, dtype=bool)
    same[:-1] = code[1:] == code[:-1]
    gap = ~same | (nxt - time > HOLD_STEPS * step)
    end = np.where(gap, time + step, nxt)
    integral = np.zeros(n_vms * n_slots)
    covered = np.zeros(n_vms * n_slots)
    first = np.floor((time - t0) / step).astype(np.int64)
    # A hold lasts at most HOLD_STEPS·step, so it touches at most three slots.
    for j in range(3):
        slot = first + j
        lo = np.maximum(time, t0 + slot * step)
        hi = np.minimum(end, t0 + (slot + 1) * step)
        seconds = hi - lo
        use = (seconds > 0) & (slot >= 0) & (slot < n_slots)
        flat = code[use] * n_slots + slot[use]
        covered += np.bincount(flat, weights=seconds[use], minlength=n_vms * n_slots)
        integral += np.bincount(flat, weights=seconds[use] * cpu[use], minlength=n_vms * n_slots)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(covered > 0, integral / np.where(covered > 0, covered, 1.0), 0.0)
    return values.reshape(n_vms, n_slots), covered.reshape(n_vms, n_slots)


def _assemble(rows: _Rows, source: str, bad_vms: str, seconds: bool, grid: str = "snap", start_day: int = 0,
              days: Optional[int] = None) -> Trace:
    """Checks the long table and builds the trace (or raises / drops);
    ``start_day``/``days`` keep a window of whole days counted from the
    earliest timestamp, and only its samples are judged."""
    if not rows.time or sum(len(t) for t in rows.time) == 0:
        raise TraceError(f"{source}: no samples")
    vm = np.concatenate(rows.vm)
    time = np.concatenate(rows.time)
    cpu = np.concatenate(rows.cpu)
    vcpus = np.concatenate(rows.vcpus)
    mem = np.concatenate(rows.mem)
    file = np.concatenate(rows.file)
    line = np.concatenate(rows.line)
    bad = np.concatenate(rows.bad)
    # VMs in order of first appearance (file order, then line order).
    names, first_at, code = np.unique(vm.astype(str), return_index=True, return_inverse=True)
    rank = np.empty(names.size, dtype=np.int64)
    rank[np.argsort(first_at, kind="stable")] = np.arange(names.size)
    ids = names[np.argsort(first_at, kind="stable")]
    code = rank[code]
    n_vms = ids.size
    first_row = first_at[np.argsort(first_at, kind="stable")]  # of each VM, in the order of ids
    first_file, first_line = file[first_row], line[first_row]
    problems: Dict[int, Tuple[int, int, str]] = {}  # vm -> (file, line, message)

    def flag(v: int, f: int, ln: int, message: str) -> None:
        old = problems.get(v)
        if old is None or (f, ln) < old[:2]:
            problems[v] = (f, ln, message)

    t_ok = (bad < 0) & np.isfinite(time)
    notes: List[str] = list(rows.notes)
    hold = grid == "hold" and seconds
    if start_day or days is not None or hold:
        step = _grid_step(code[t_ok], time[t_ok], integer=not seconds) if np.any(t_ok) else 1.0
        day = 86400.0 if seconds else 1440.0
        # A hold grid starts one step after the earliest timestamp: every VM
        # whose first sample falls in the trace's first step covers slot 0.
        begin = (time[t_ok].min() if np.any(t_ok) else 0.0) + (step if hold else 0.0) + start_day * day
        stop = begin + days * day if days is not None else np.inf
        if np.any(t_ok) and begin > time[t_ok].max():
            raise TraceError(f"{source}: the window starts on day {start_day}, after the trace's last sample "
                             f"(day {(time[t_ok].max() - time[t_ok].min()) / day:.2f})")
        if np.any(t_ok) and stop < np.inf and stop > time[t_ok].max() + step:
            raise TraceError(f"{source}: the window of days {start_day}–{start_day + days - 1} ends after the trace's "
                             f"last sample (day {(time[t_ok].max() - time[t_ok].min()) / day:.2f})")
        # Rows without a usable time stay (their problem is reported); a hold
        # grid also needs the last sample before the window.
        # Inclusive day numbers, as people count them: --window 2:13 is days 2–14.
        span = (f"days {start_day}–{start_day + days - 1}" if days is not None else f"days {start_day}–end")
        margin = HOLD_STEPS * step if hold else 0.0
        inside = ~np.isfinite(time) | ((time >= begin - margin) & (time < stop))
        if not np.all(inside):
            vm, time, cpu, vcpus, mem, file, line, bad, code, t_ok = (
                a[inside] for a in (vm, time, cpu, vcpus, mem, file, line, bad, code, t_ok))
            notes.append(f"kept {span} of the trace (whole days from the start of its grid)")
        if (start_day or days is not None) and "(days " not in source:
            source = f"{source} ({span})"
    for i in _first_per_vm(code, np.flatnonzero(bad >= 0)):
        flag(int(code[i]), int(file[i]), int(line[i]), rows.message(int(bad[i]), int(file[i]), int(line[i])))
    has_sample = np.zeros(n_vms, dtype=bool)
    has_sample[code[t_ok]] = True
    for v in np.flatnonzero(~has_sample):
        where = "in the window" if start_day or days is not None else "(every sample is absent: 0 CPU cores)"
        flag(int(v), int(first_file[v]), int(first_line[v]), f"VM {ids[v]}: no usable sample {where}")
    if not np.any(t_ok):
        f, ln, message = min(problems.values())
        if bad_vms == "drop":
            raise TraceError(f"{source}: every VM has a problem; nothing is left after dropping them "
                             f"(first: {rows.where(f, ln)}: {message})")
        raise TraceError(f"{rows.where(f, ln)}: {message} (no usable sample in the trace)")

    # Grid: snap times to the common step.
    step = _grid_step(code[t_ok], time[t_ok], integer=not seconds)
    if step <= 0:
        raise TraceError(f"{source}: cannot tell the sampling interval")
    t0 = time[t_ok].min() if not hold else begin
    index = np.full(time.shape, -1, dtype=np.int64)
    if hold:
        index[t_ok] = np.floor((time[t_ok] - t0) / step).astype(np.int64)
    else:
        index[t_ok] = np.rint((time[t_ok] - t0) / step).astype(np.int64)
        shift = np.abs(time[t_ok] - (t0 + index[t_ok] * step))
        if seconds and shift.size and shift.max() > 0:
            notes.append(f"timestamps snapped to a {step:g} s grid from the earliest one "
                         f"(largest shift {shift.max():g} s)")

    # The vCPU count of a VM is that of its first good sample and must not change.
    good = np.flatnonzero(t_ok)
    first_good = _first_per_vm(code, good)
    vcpus_of = np.full(n_vms, np.nan)
    vcpus_of[code[first_good]] = vcpus[first_good]
    for i in _first_per_vm(code, good[vcpus[good] != vcpus_of[code[good]]]):
        v = int(code[i])
        flag(v, int(file[i]), int(line[i]), f"VM {ids[v]}: vCPU count changes from {vcpus_of[v]:g} to {vcpus[i]:g}")

    if hold:
        return _assemble_hold(rows, source, bad_vms, code, ids, time, cpu, vcpus_of, file, line, good, problems,
                              flag, notes, t0, step, stop)

    # Duplicates, and coverage of the grid [0, n) by every VM, on rows sorted by (VM, time).
    order = good[np.lexsort((line[good], file[good], index[good], code[good]))]
    oc, oi = code[order], index[order]
    dup = np.flatnonzero((oc[1:] == oc[:-1]) & (oi[1:] == oi[:-1])) + 1
    for k in dup[np.unique(oc[dup], return_index=True)[1]] if dup.size else dup:
        j, i = order[k], order[k - 1]
        v = int(code[j])
        when = f"{time[j]:g} s" if seconds else f"minute {time[j]:g}"
        flag(v, int(file[j]), int(line[j]),
             f"VM {ids[v]}: duplicate sample at {when} (also at {rows.where(int(file[i]), int(line[i]))})")
    last = int(oi.max())
    n_samples = last + 1
    starts = np.searchsorted(oc, np.arange(n_vms), side="left")
    ends = np.searchsorted(oc, np.arange(n_vms), side="right")
    unit = "s" if seconds else "min"

    def stamp(i: int) -> str:
        value = t0 + i * step
        return f"{value:g} s" if seconds else f"minute {value:g}"

    def at(k: int) -> Tuple[int, int]:
        return int(file[order[k]]), int(line[order[k]])

    for v in range(n_vms):
        a, b = starts[v], ends[v]
        if a == b or v in problems:
            continue  # its bad samples, flagged above, would show up as gaps
        times = np.unique(oi[a:b])
        if times.size == n_samples:
            continue
        if times[0] > 0:
            flag(v, *at(a), f"VM {ids[v]}: starts at {stamp(times[0])}, after the trace's start at {stamp(0)} "
                            "(unequal lengths)")
        elif times[-1] < last:
            flag(v, *at(b - 1), f"VM {ids[v]}: ends at {stamp(times[-1])}, before the trace's end at {stamp(last)} "
                                "(unequal lengths)")
        else:
            missing = int(np.flatnonzero(np.diff(times) > 1)[0])
            k = a + int(np.searchsorted(oi[a:b], times[missing], side="right")) - 1
            flag(v, *at(k), f"VM {ids[v]}: gap: no sample at {stamp(times[missing] + 1)} (the {step:g} {unit} "
                            "grid) after this one")

    keep, report = _keep(rows, source, bad_vms, ids, problems, notes)
    kept = np.flatnonzero(keep)
    remap = np.full(n_vms, -1)
    remap[kept] = np.arange(kept.size)
    sel = t_ok & keep[code]
    # Survivors all cover the grid from 0 to `last` (their own firsts/lasts say so).
    matrix = np.zeros((kept.size, n_samples))
    matrix[remap[code[sel]], index[sel]] = cpu[sel]
    memory = None
    if rows.has_mem:
        memory = np.full((kept.size, n_samples), np.nan)
        memory[remap[code[sel]], index[sel]] = mem[sel]
        if np.isnan(memory).any():
            memory = None
            report.notes.append("memory utilisation is incomplete; left out")
    vcpu_counts = [int(round(vcpus_of[int(v)])) for v in kept]
    interval = step / 60.0 if seconds else step
    return Trace(matrix, vcpu_counts, [str(ids[v]) for v in kept], interval, memory, source=source,
                 cleaning=report)


def _keep(rows: _Rows, source: str, bad_vms: str, ids, problems, notes: List[str]):
    """Raises on the first problem, or drops the VMs that have one."""
    n_vms = ids.size
    if problems:
        if bad_vms == "error":
            f, ln, message = min(problems.values())
            more = len(problems) - 1
            hint = (f" (and {more} more VM{'s' if more != 1 else ''} with problems)" if more else "")
            raise TraceError(f"{rows.where(f, ln)}: {message}{hint}; bad_vms='drop' (ibcloud: --drop-bad-vms) "
                             "drops such VMs as the paper did")
        dropped = sorted(problems)
        report = CleaningReport(
            dropped=[(str(ids[v]), f"{rows.where(*problems[v][:2])}: {problems[v][2]}") for v in dropped], notes=notes)
        keep = np.ones(n_vms, dtype=bool)
        keep[dropped] = False
        if not keep.any():
            raise TraceError(f"{source}: every VM has a problem; nothing is left after dropping them "
                             f"(first: {report.dropped[0][1]})")
    else:
        report = CleaningReport(notes=notes)
        keep = np.ones(n_vms, dtype=bool)
    return keep, report


def _assemble_hold(rows: _Rows, source: str, bad_vms: str, code, ids, time, cpu, vcpus_of, file, line, good,
                   problems, flag, notes: List[str], t0: float, step: float, stop: float) -> Trace:
    """``grid="hold"``: every slot of the window must be more than half
    covered by the VM's held samples; its value is their time-weighted
    average (see :func:`_hold_grid`). Memory is not carried on this grid."""
    n_vms = ids.size
    order = good[np.lexsort((line[good], file[good], time[good], code[good]))]
    end = time[order].max() + step if stop == np.inf else stop
    n_slots = int(np.floor((end - t0) / step + 1e-9))
    if n_slots < 1:
        raise TraceError(f"{source}: the window holds no whole {step:g} s slot")
    values, covered = _hold_grid(code[order], time[order], cpu[order], n_vms, t0, step, n_slots)
    ok = covered > 0.5 * step  # strictly: a missed sample always leaves one slot at most half covered
    oc, ot = code[order], time[order]
    starts = np.searchsorted(oc, np.arange(n_vms), side="left")
    for v in np.flatnonzero(~ok.all(axis=1)):
        v = int(v)
        if v in problems:
            continue
        k = int(np.flatnonzero(~ok[v])[0])
        a, b = int(starts[v]), int(np.searchsorted(oc, v, side="right"))
        when = t0 + k * step
        if a == b:
            continue
        before = a + int(np.searchsorted(ot[a:b], when + step, side="left")) - 1
        if before < a:
            i = order[a]
            flag(v, int(file[i]), int(line[i]), f"VM {ids[v]}: starts at {_when(ot[a])}; the slot from "
                                                f"{_when(when)} (the {step:g} s grid of the window) is at most "
                                                "half covered")
        else:
            i = order[before]
            flag(v, int(file[i]), int(line[i]), f"VM {ids[v]}: gap: the slot from {_when(when)} (the {step:g} s "
                                                "grid) is at most half covered after this sample")
    keep, report = _keep(rows, source, bad_vms, ids, problems, notes)
    report.notes.append(f"samples held until the next one (at most {HOLD_STEPS:g} steps) and averaged over a "
                        f"{step:g} s grid from {_when(t0)}")
    kept = np.flatnonzero(keep)
    vcpu_counts = [int(round(vcpus_of[int(v)])) for v in kept]
    return Trace(values[kept], vcpu_counts, [str(ids[v]) for v in kept], step / 60.0, None, source=source,
                 cleaning=report)


@checked_ints
def read_plain(path: PathLike, bad_vms: str = "error", start_day: int = 0, days: Optional[int] = None) -> Trace:
    """Reads the plain layout (CSV or Parquet; see the module documentation).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("vm_id,vcpus,minute_index,cpu_pct_of_one_core\\na,1,0,50\\na,1,5,25\\n")
    >>> t = read_plain(p)
    >>> t.interval_minutes, t.cpu.tolist()
    (5.0, [[0.5, 0.25]])
    """
    path = Path(path)
    _check_bad_vms(bad_vms)
    _check_window("snap", start_day, days)
    frame, csv = _read_table(path, header=True)
    _check_columns(path, list(frame.columns), PLAIN_COLUMNS, PLAIN_COLUMNS + PLAIN_OPTIONAL, "plain")
    if len(frame) == 0:
        raise TraceError(f"{path}: no samples")
    vm = _strings(frame, "vm_id")
    vcpus, vcpus_bad = _numbers(frame, "vcpus")
    minute, minute_bad = _numbers(frame, "minute_index")
    pct, pct_bad = _numbers(frame, "cpu_pct_of_one_core")
    mem = None
    problems: List[Tuple[np.ndarray, object]] = []
    raw = {c: frame[c].astype(str).to_numpy() for c in frame.columns}

    def bad_value(column: str):
        return lambda i: f"VM {vm[i]}: {column} {raw[column][i].strip()!r} is missing or not a number"

    problems.append((vm == "", "vm_id is empty"))
    for column, mask in (("vcpus", vcpus_bad), ("minute_index", minute_bad), ("cpu_pct_of_one_core", pct_bad)):
        problems.append((mask, bad_value(column)))
    with np.errstate(invalid="ignore"):
        problems.append((~vcpus_bad & ((vcpus < 1) | (vcpus != np.round(vcpus))),
                         lambda i: f"VM {vm[i]}: vcpus {raw['vcpus'][i].strip()} is not a positive integer"))
        problems.append((~minute_bad & ((minute < 0) | (minute != np.round(minute))),
                         lambda i: f"VM {vm[i]}: minute_index {raw['minute_index'][i].strip()} is not a whole "
                                   "number of minutes ≥ 0"))
        problems.append((~pct_bad & (pct < 0),
                         lambda i: f"VM {vm[i]}: cpu_pct_of_one_core {pct[i]:g} is negative"))
        problems.append((~pct_bad & ~vcpus_bad & (pct > 100 * vcpus + _TOL),
                         lambda i: f"VM {vm[i]}: cpu_pct_of_one_core {pct[i]:g} is above 100 % of its "
                                   f"{vcpus[i]:g} vCPUs ({100 * vcpus[i]:g})"))
        if "mem_pct" in frame.columns:
            mem, mem_bad = _numbers(frame, "mem_pct")
            problems.append((mem_bad, bad_value("mem_pct")))
            problems.append((~mem_bad & ((mem < 0) | (mem > 100 + _TOL)),
                             lambda i: f"VM {vm[i]}: mem_pct {mem[i]:g} is outside 0–100 %"))
    rows = _Rows()
    rows.add(path, csv, vm, np.where(minute_bad, np.nan, minute), pct / 100.0, vcpus, mem, problems)
    return _assemble(rows, str(path), bad_vms, seconds=False, start_day=start_day, days=days)


def _natural(name: str) -> Tuple:
    """Sort key reading runs of digits as numbers: 2013-9 before 2013-10, 9.csv before 10.csv."""
    import re

    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def _is_trace_file(p: Path) -> bool:
    return p.is_file() and not p.name.startswith(".") and (
        p.suffix.lower() in (".csv", ".parquet", ".pq") or p.name.lower().endswith(".csv.gz"))


def _bitbrains_files(path: Path) -> List[Path]:
    """The per-VM files of a directory, or of its month folders (the
    published archives: ``rnd/2013-7/1.csv``, ``rnd/2013-8/1.csv``, ...; the
    same file name in every folder is the same VM), in time order."""
    if path.is_dir():
        files = sorted((p for p in path.iterdir() if _is_trace_file(p)), key=lambda p: _natural(p.name))
        if not files:
            folders = sorted((p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")),
                             key=lambda p: _natural(p.name))
            for folder in folders:
                files += sorted((p for p in folder.iterdir() if _is_trace_file(p)), key=lambda p: _natural(p.name))
        if not files:
            raise TraceError(f"{path}: no per-VM .csv or .parquet files in this directory or its month folders "
                             "(Bitbrains layout)")
        return files
    return [path]


@checked_ints
def read_bitbrains(path: PathLike, bad_vms: str = "error", grid: str = "snap", start_day: int = 0,
                   days: Optional[int] = None, clip_over_100: bool = False) -> Trace:
    """Reads Bitbrains GWA-T-12 per-VM files (a directory of them, a directory
    of month folders of them, or one file); the VM id is the file name without
    its extension. A sample with 0 CPU cores (the VM was not provisioned then:
    its capacity is 0 too) is read as no sample.

    ``grid="snap"`` puts each timestamp on the nearest point of the grid (an
    exact trace); ``grid="hold"`` holds each sample until the next one (for at
    most :data:`HOLD_STEPS` steps) and averages over the grid's slots, which
    the published traces need: their timestamps drift by a second now and then
    (299/301 s steps, repeated stamps), so snapping makes duplicates and gaps
    that are not missing data. ``start_day``/``days`` keep a window of whole
    days from the earliest timestamp (with ``grid="hold"``, from one step
    after it: the grid's first slot is one every VM that starts within the
    trace's first step covers); VMs are judged on the window alone.
    ``clip_over_100`` reads "CPU usage [%]" above 100 (the published rnd
    trace has them, up to 182 %: usage in MHz above the provisioned clock) as
    100 % and says so in the cleaning notes, instead of a problem of the VM.

    >>> import pathlib
    >>> t = read_bitbrains(pathlib.Path(__file__).parents[3] / "fixtures" / "traces" / "bitbrains")
    >>> t.n_vms, t.interval_minutes
    (3, 5.0)
    """
    path = Path(path)
    _check_bad_vms(bad_vms)
    _check_window(grid, start_day, days)
    return _assemble(_bitbrains_rows(path, clip_over_100), str(path), bad_vms, seconds=True, grid=grid,
                     start_day=start_day, days=days)


def _bitbrains_rows(path: Path, clip_over_100: bool = False) -> _Rows:
    rows = _Rows()
    clipped: List[Tuple[int, float]] = []
    wanted = BITBRAINS_REQUIRED + ("Memory capacity provisioned [KB]", "Memory usage [KB]")
    for file in _bitbrains_files(path):
        if _is_parquet(file):
            frame, csv = _read_table(file, header=True, sep=";")
            _check_columns(file, list(frame.columns), BITBRAINS_REQUIRED, BITBRAINS_COLUMNS, "Bitbrains GWA-T-12")
        else:
            # The header is checked whole; only the columns used are read.
            header = [c.strip() for c in _first_line(file).rstrip("\r\n").split(";")]
            _check_columns(file, [c for c in header if c], BITBRAINS_REQUIRED, BITBRAINS_COLUMNS,
                           "Bitbrains GWA-T-12")
            frame, csv = _read_table(file, header=True, sep=";", usecols=wanted)
        if len(frame) == 0:
            raise TraceError(f"{file}: no samples")
        name = file.name
        for suffix in (".gz", ".csv", ".parquet", ".pq"):
            if name.lower().endswith(suffix):
                name = name[: -len(suffix)]
        vm = np.full(len(frame), name, dtype=object)
        stamp, stamp_bad = _numbers(frame, "Timestamp [ms]")
        cores, cores_bad = _numbers(frame, "CPU cores")
        pct, pct_bad = _numbers(frame, "CPU usage [%]")
        raw = {c: frame[c].astype(str).to_numpy() for c in frame.columns}

        def bad_value(column: str, raw=raw, name=name):
            return lambda i: f"VM {name}: {column} {raw[column][i].strip()!r} is missing or not a number"

        problems: List[Tuple[np.ndarray, object]] = [
            (stamp_bad, bad_value("Timestamp [ms]")),
            (cores_bad, bad_value("CPU cores")),
            (pct_bad, bad_value("CPU usage [%]")),
        ]
        with np.errstate(invalid="ignore"):
            absent = ~cores_bad & (cores == 0)  # not provisioned: no sample
            problems.append((~cores_bad & ((cores < 0) | (cores != np.round(cores))),
                             lambda i, raw=raw, name=name: f"VM {name}: CPU cores {raw['CPU cores'][i].strip()} is "
                                                           "not a whole number ≥ 0"))
            problems.append((~absent & ~pct_bad & (pct < 0), lambda i, pct=pct, name=name: f"VM {name}: CPU usage {pct[i]:g} % "
                                                                                  "is negative"))
            over = ~absent & ~pct_bad & (pct > 100 + _TOL)
            if clip_over_100 and np.any(over):
                clipped.append((int(over.sum()), float(pct[over].max())))
                pct = np.where(over, 100.0, pct)
            else:
                problems.append((over, lambda i, pct=pct, name=name: f"VM {name}: CPU usage {pct[i]:g} % is above "
                                                                      "100 %"))
            problems = [(mask & ~absent if k >= 1 else mask, message) for k, (mask, message) in enumerate(problems)]
        seconds = np.where(stamp > 1e11, stamp / 1000.0, stamp)
        mem = None
        if "Memory capacity provisioned [KB]" in frame.columns and "Memory usage [KB]" in frame.columns:
            cap, cap_bad = _numbers(frame, "Memory capacity provisioned [KB]")
            used, used_bad = _numbers(frame, "Memory usage [KB]")
            with np.errstate(invalid="ignore", divide="ignore"):
                mem = np.where(cap > 0, 100.0 * used / cap, np.nan)
            # Memory is carried along, never used for packing: an odd value
            # drops the memory series, not the VM.
            if np.any(~absent & (cap_bad | used_bad | ~np.isfinite(mem) | (mem < 0) | (mem > 100 + _TOL))):
                mem = None
        vcpus = np.where(cores_bad | absent, np.nan, cores)
        seconds = np.where(absent, np.nan, seconds)
        # Demand uses the sample's own core count; the VM's count must not change.
        rows.add(file, csv, vm, np.where(stamp_bad, np.nan, seconds), np.nan_to_num(vcpus) * np.nan_to_num(pct) / 100.0,
                 vcpus, mem, problems)
    if clipped:
        rows.notes.append(f"CPU usage above 100 % clipped to 100 % in {sum(n for n, _ in clipped):,} samples of "
                          f"{len(clipped)} files (largest {max(m for _, m in clipped):g} %)")
    return rows


@checked_ints
def read_windows(path: PathLike, layout: Optional[str] = None, days: Optional[int] = None, *,
                 vmtable: Optional[PathLike] = None, vcpus: Optional[int] = None, bad_vms: str = "error",
                 grid: str = "snap", clip_over_100: bool = False) -> List[Trace]:
    """The trace cut into consecutive windows of ``days`` whole days from its
    earliest timestamp (the last partial one left out), each judged and
    cleaned on its own, as :func:`read_trace` with ``start_day``/``days``
    would; the files are read once. ``days=None``: the whole trace.

    >>> import pathlib
    >>> root = pathlib.Path(__file__).parents[3] / "fixtures" / "traces" / "bitbrains-rnd-sample"
    >>> [(t.n_vms, t.days) for t in read_windows(root, "bitbrains", 1, bad_vms="drop", grid="hold")]
    [(14, 1.0), (16, 1.0), (16, 1.0)]
    """
    layout = layout or detect_layout(path)
    _check_window(grid, 0, days)
    if layout != "bitbrains":
        whole = read_trace(path, layout, vmtable=vmtable, vcpus=vcpus, bad_vms=bad_vms, grid=grid)
        if days is None:
            return [whole]
        n = int(whole.days // days)
        return [read_trace(path, layout, vmtable=vmtable, vcpus=vcpus, bad_vms=bad_vms, grid=grid,
                           start_day=k * days, days=days) for k in range(n)]
    path = Path(path)
    _check_bad_vms(bad_vms)
    rows = _bitbrains_rows(path, clip_over_100)
    if days is None:
        return [_assemble(rows, str(path), bad_vms, seconds=True, grid=grid)]
    stamps = np.concatenate(rows.time)
    stamps = stamps[np.isfinite(stamps)]
    if stamps.size == 0:
        raise TraceError(f"{path}: no usable timestamp")
    span = (stamps.max() - stamps.min()) / 86400.0
    # A window may end one step after the last sample (its last slot).
    n = int((span + 1.0 / 288) // days)
    if n < 1:
        raise TraceError(f"{path}: the trace spans {span:.2f} days, less than one window of {days}")
    return [_assemble(rows, str(path), bad_vms, seconds=True, grid=grid,
                      start_day=k * days, days=days) for k in range(n)]


def _azure_files(path: Path) -> List[Path]:
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.name.startswith("vm_cpu_readings"))
        if not files:
            raise TraceError(f"{path}: no vm_cpu_readings* files in this directory (Azure layout)")
        return files
    return [path]


def _read_vmtable(path: Path) -> Dict[str, str]:
    frame, _ = _read_table(path, header=False, names=AZURE_VMTABLE_COLUMNS)
    if _is_parquet(path):
        _check_columns(path, list(frame.columns), ("vmid", "vmcorecountbucket"), AZURE_VMTABLE_COLUMNS,
                       "Azure vmtable")
    elif len(frame.columns) != len(AZURE_VMTABLE_COLUMNS):
        raise TraceError(f"{path}:1: {len(frame.columns)} columns; the Azure vmtable has "
                         f"{len(AZURE_VMTABLE_COLUMNS)}: {', '.join(AZURE_VMTABLE_COLUMNS)}")
    return dict(zip(_strings(frame, "vmid"), _strings(frame, "vmcorecountbucket")))


@checked_ints  # vcpus=0 gets the DelayParameterError below
def read_azure(path: PathLike, vmtable: Optional[PathLike] = None, vcpus: Optional[int] = None,
               bad_vms: str = "error", grid: str = "snap", start_day: int = 0, days: Optional[int] = None) -> Trace:
    """Reads Azure public VM CPU readings (a file or a directory of
    ``vm_cpu_readings*`` files). Give ``vmtable`` (the dataset's
    ``vmtable.csv``) for per-VM core counts, or ``vcpus`` for all VMs.
    ``grid``, ``start_day`` and ``days`` as in :func:`read_bitbrains`.

    >>> import pathlib
    >>> root = pathlib.Path(__file__).parents[3] / "fixtures" / "traces" / "azure"
    >>> t = read_azure(root / "vm_cpu_readings-file-1-of-1.csv", vmtable=root / "vmtable.csv")
    >>> t.n_vms, t.interval_minutes, t.vcpus.tolist()
    (3, 5.0, [2, 4, 8])
    """
    path = Path(path)
    _check_bad_vms(bad_vms)
    _check_window(grid, start_day, days)
    if vmtable is None and vcpus is None:
        raise TraceError(f"{path}: Azure readings give percent of the whole VM; give the vmtable "
                         "(ibcloud: --vmtable FILE) or one vCPU count for all VMs (--vcpus N)")
    if vcpus is not None and (int(vcpus) != vcpus or vcpus < 1):
        raise DelayParameterError(f"vcpus = {vcpus}: must be a positive integer")
    buckets = _read_vmtable(Path(vmtable)) if vmtable is not None else {}
    rows = _Rows()
    for file in _azure_files(path):
        header = not _is_parquet(file) and _first_line(file).strip().split(",")[0].strip().lower() == "timestamp"
        frame, csv = _read_table(file, header=header, names=AZURE_COLUMNS)
        if header or _is_parquet(file):
            _check_columns(file, list(frame.columns), AZURE_COLUMNS, AZURE_COLUMNS, "Azure VM CPU readings")
        elif len(frame.columns) != len(AZURE_COLUMNS):
            raise TraceError(f"{file}:1: {len(frame.columns)} columns; Azure VM CPU readings have "
                             f"{len(AZURE_COLUMNS)}: {', '.join(AZURE_COLUMNS)}")
        if len(frame) == 0:
            raise TraceError(f"{file}: no samples")
        vm = _strings(frame, "vmid")
        stamp, stamp_bad = _numbers(frame, "timestamp")
        lo, lo_bad = _numbers(frame, "mincpu")
        hi, hi_bad = _numbers(frame, "maxcpu")
        avg, avg_bad = _numbers(frame, "avgcpu")
        raw = {c: frame[c].astype(str).to_numpy() for c in frame.columns}
        if vmtable is not None:
            bucket = np.array([buckets.get(v, "") for v in vm], dtype=object)
            count = np.array([float(b) if b.replace(".", "", 1).isdigit() else np.nan for b in bucket])
        else:
            bucket = np.full(len(vm), str(vcpus), dtype=object)
            count = np.full(len(vm), float(vcpus))

        def bad_value(column: str, raw=raw, vm=vm):
            return lambda i: f"VM {vm[i]}: {column} {raw[column][i].strip()!r} is missing or not a number"

        problems: List[Tuple[np.ndarray, object]] = [
            (vm == "", "vmid is empty"),
            (stamp_bad, bad_value("timestamp")),
            (avg_bad, bad_value("avgcpu")),
            (lo_bad, bad_value("mincpu")),
            (hi_bad, bad_value("maxcpu")),
            (np.array([b == "" for b in bucket]), lambda i, vm=vm: f"VM {vm[i]}: not in the vmtable {vmtable}"),
            (np.array([b != "" for b in bucket]) & ~np.isfinite(count),
             lambda i, vm=vm, bucket=bucket: f"VM {vm[i]}: core-count bucket {bucket[i]!r} is not a number"),
        ]
        with np.errstate(invalid="ignore"):
            problems.append((~avg_bad & (avg < 0), lambda i, vm=vm, avg=avg: f"VM {vm[i]}: avgcpu {avg[i]:g} % is "
                                                                             "negative"))
            problems.append((~avg_bad & (avg > 100 + _TOL),
                             lambda i, vm=vm, avg=avg: f"VM {vm[i]}: avgcpu {avg[i]:g} % is above 100 %"))
            problems.append((~(avg_bad | lo_bad | hi_bad) & ((lo > avg + _TOL) | (avg > hi + _TOL)),
                             lambda i, vm=vm, lo=lo, avg=avg, hi=hi: f"VM {vm[i]}: min/avg/max CPU {lo[i]:g}/"
                                                                     f"{avg[i]:g}/{hi[i]:g} % are out of order"))
        rows.add(file, csv, vm, np.where(stamp_bad, np.nan, stamp), np.nan_to_num(count) * np.nan_to_num(avg) / 100.0,
                 count, None, problems, header=header)
    return _assemble(rows, str(path), bad_vms, seconds=True, grid=grid, start_day=start_day, days=days)


def detect_layout(path: PathLike) -> str:
    """The layout of a trace file or directory, from names and headers.

    >>> import pathlib
    >>> root = pathlib.Path(__file__).parents[3] / "fixtures" / "traces"
    >>> [detect_layout(root / p) for p in ("bitbrains", "azure", "plain.csv")]
    ['bitbrains', 'azure', 'plain']
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", str(path))
    if path.is_dir():
        names = [p.name for p in path.iterdir()]
        if any(n.startswith("vm_cpu_readings") for n in names):
            return "azure"
        return "bitbrains"
    if path.name.startswith("vm_cpu_readings"):
        return "azure"
    if _is_parquet(path):
        import pyarrow.parquet as pq

        try:
            columns = set(pq.read_schema(path).names)
        except Exception as err:  # pyarrow raises its own error types
            raise TraceError(f"{path}: cannot read as Parquet: {err}") from None
        if set(PLAIN_COLUMNS) <= columns:
            return "plain"
        if set(AZURE_COLUMNS) <= columns:
            return "azure"
        if set(BITBRAINS_REQUIRED) <= {c.strip() for c in columns}:
            return "bitbrains"
    else:
        first = _first_line(path)
        fields = [f.strip() for f in first.replace(";", ",").split(",")]
        if "Timestamp [ms]" in fields:
            return "bitbrains"
        if fields and fields[0] in ("vm_id",):
            return "plain"
        if len(fields) == 5 and fields[0].replace(".", "", 1).isdigit() or fields[:1] == ["timestamp"]:
            return "azure"
    raise TraceError(f"{path}: cannot tell the trace layout from its name and first line; give the layout "
                     f"({', '.join(LAYOUTS)})")


@checked_ints  # vcpus=0 gets the DelayParameterError below
def read_trace(path: PathLike, layout: Optional[str] = None, *, vmtable: Optional[PathLike] = None,
               vcpus: Optional[int] = None, bad_vms: str = "error", grid: str = "snap", start_day: int = 0,
               days: Optional[int] = None, clip_over_100: bool = False) -> Trace:
    """Reads a trace in any known layout (guessed when ``layout`` is None);
    ``grid``, ``start_day`` and ``days`` as in :func:`read_bitbrains` (the
    plain layout takes the window only: its minutes are exact).

    >>> import pathlib
    >>> root = pathlib.Path(__file__).parents[3] / "fixtures" / "traces"
    >>> read_trace(root / "plain.csv").n_vms
    4
    """
    layout = layout or detect_layout(path)
    _check_window(grid, start_day, days)
    if clip_over_100 and layout != "bitbrains":
        raise DelayParameterError(f"clip_over_100 is for the Bitbrains layout, not {layout!r}")
    if layout == "plain":
        if grid != "snap":
            raise DelayParameterError("the plain layout has whole minutes; grid='hold' is for the public traces")
        return read_plain(path, bad_vms, start_day=start_day, days=days)
    if layout == "bitbrains":
        return read_bitbrains(path, bad_vms, grid=grid, start_day=start_day, days=days, clip_over_100=clip_over_100)
    if layout == "azure":
        return read_azure(path, vmtable=vmtable, vcpus=vcpus, bad_vms=bad_vms, grid=grid, start_day=start_day,
                          days=days)
    raise DelayParameterError(f"unknown trace layout {layout!r} (expected one of: {', '.join(LAYOUTS)})")
