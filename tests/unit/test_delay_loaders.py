"""Trace loaders: the fixtures of the public layouts, round trips, and every
kind of bad input named by file and line, or dropped as the paper did."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibcloud.delay import Trace, TraceError
from ibcloud.delay.loaders import detect_layout, read_azure, read_bitbrains, read_plain, read_trace

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "traces"
HEADER = "vm_id,vcpus,minute_index,cpu_pct_of_one_core"
BITBRAINS_HEADER = ";\t".join(["Timestamp [ms]", "CPU cores", "CPU capacity provisioned [MHZ]", "CPU usage [MHZ]",
                               "CPU usage [%]", "Memory capacity provisioned [KB]", "Memory usage [KB]",
                               "Disk read throughput [KB/s]", "Disk write throughput [KB/s]",
                               "Network received throughput [KB/s]", "Network transmitted throughput [KB/s]"])


def write(path: Path, lines) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def plain_lines(rows):
    return [HEADER] + [",".join(str(v) for v in row) for row in rows]


# -- the fixtures ------------------------------------------------------------

def test_fixtures_in_the_public_layouts_read():
    bb = read_trace(ROOT / "bitbrains")
    assert (bb.n_vms, bb.n_samples, bb.interval_minutes) == (3, 24, 5.0)
    assert bb.vm_ids == ["1", "2", "3"] and bb.vcpus.tolist() == [2, 4, 1]
    assert "snapped to a 300 s grid" in bb.cleaning.text() and bb.memory is not None
    az = read_trace(ROOT / "azure", vmtable=ROOT / "azure" / "vmtable.csv")
    assert (az.n_vms, az.n_samples, az.interval_minutes) == (3, 24, 5.0)
    assert sorted(az.vcpus.tolist()) == [2, 4, 8]
    plain = read_trace(ROOT / "plain.csv")
    assert (plain.n_vms, plain.n_samples, plain.interval_minutes) == (4, 60, 1.0)
    assert plain.memory.shape == (4, 60)


def test_bitbrains_demand_is_cores_times_usage_percent():
    first = (ROOT / "bitbrains" / "2.csv").read_text().splitlines()[1].split(";")
    trace = read_bitbrains(ROOT / "bitbrains" / "2.csv")
    assert trace.cpu[0, 0] == pytest.approx(float(first[1]) * float(first[4]) / 100)


def test_azure_demand_is_vcpus_times_average_percent():
    first = (ROOT / "azure" / "vm_cpu_readings-file-1-of-1.csv").read_text().splitlines()[0].split(",")
    trace = read_azure(ROOT / "azure" / "vm_cpu_readings-file-1-of-1.csv", vcpus=3)
    assert trace.cpu[trace.vm_ids.index(first[1]), 0] == pytest.approx(3 * float(first[4]) / 100)


def test_layouts_are_detected():
    assert [detect_layout(ROOT / p) for p in ("bitbrains", "azure", "plain.csv",
                                              "azure/vm_cpu_readings-file-1-of-1.csv")] == [
        "bitbrains", "azure", "plain", "azure"]


def test_synthetic_trace_round_trips_through_csv_and_parquet(tmp_path):
    from ibcloud.delay import synthetic_trace

    trace = synthetic_trace(seed=3, n_vms=6, days=1)
    for name in ("t.csv", "t.parquet"):
        back = read_trace(trace.write(tmp_path / name))
        assert back.vm_ids == trace.vm_ids and back.vcpus.tolist() == trace.vcpus.tolist()
        assert np.allclose(back.cpu, trace.cpu, rtol=1e-12, atol=1e-12)


# -- property tests ----------------------------------------------------------

@st.composite
def traces(draw):
    n_vms = draw(st.integers(2, 4))
    n = draw(st.integers(3, 12))
    vcpus = [draw(st.integers(1, 4)) for _ in range(n_vms)]
    cpu = np.array([[draw(st.integers(0, 100 * v * 8)) / 8 / 100 for _ in range(n)] for v in vcpus])
    return Trace(cpu, vcpus, [f"vm{i}" for i in range(n_vms)], interval_minutes=draw(st.sampled_from([1, 5])))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces(), st.sampled_from(["csv", "parquet"]))
def test_plain_layout_round_trips(tmp_path, trace, ext):
    back = read_plain(trace.write(Path(tempfile.mkdtemp(dir=tmp_path)) / f"t.{ext}"))
    assert back.vm_ids == trace.vm_ids and back.interval_minutes == trace.interval_minutes
    assert np.allclose(back.cpu, trace.cpu)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces(), st.booleans())
def test_bitbrains_layout_round_trips(tmp_path, trace, milliseconds):
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    for i, vm in enumerate(trace.vm_ids):
        lines = [BITBRAINS_HEADER]
        for t in range(trace.n_samples):
            stamp = (1376314846 + int(trace.interval_minutes * 60) * t) * (1000 if milliseconds else 1)
            pct = 100 * trace.cpu[i, t] / trace.vcpus[i]
            lines.append(";\t".join(str(v) for v in (stamp, int(trace.vcpus[i]), 2600 * int(trace.vcpus[i]), 0, repr(float(pct)), 0, 0,
                                                     0, 0, 0, 0)))
        write(folder / f"{vm}.csv", lines)
    back = read_bitbrains(folder)
    assert back.vm_ids == trace.vm_ids and back.interval_minutes == trace.interval_minutes
    assert np.allclose(back.cpu, trace.cpu)


CORRUPTIONS = ["negative", "over", "text", "empty", "gap", "duplicate", "vcpus"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces(), st.sampled_from(CORRUPTIONS), st.data())
def test_bad_samples_are_named_or_their_vm_dropped(tmp_path, trace, kind, data):
    frame = trace.to_frame()
    rows = [list(r) for r in frame.itertuples(index=False)]
    vm = data.draw(st.integers(0, trace.n_vms - 1))
    t = data.draw(st.integers(1, trace.n_samples - 2))  # interior: a gap, not a shorter VM
    i = vm * trace.n_samples + t
    if kind == "negative":
        rows[i][3] = -1
    elif kind == "over":
        rows[i][3] = 100 * rows[i][1] + 1
    elif kind == "text":
        rows[i][3] = "n/a"
    elif kind == "empty":
        rows[i][3] = ""
    elif kind == "gap":
        del rows[i]
    elif kind == "duplicate":
        rows[i][2] = rows[i - 1][2]
    elif kind == "vcpus":
        rows[i][1] = rows[i][1] + 1
    path = write(Path(tempfile.mkdtemp(dir=tmp_path)) / "bad.csv", plain_lines(rows))
    with pytest.raises(TraceError) as err:
        read_plain(path)
    message = str(err.value)
    line = i + 2 if kind != "gap" else i + 1  # a gap is reported at the sample before it
    assert message.startswith(f"{path}:{line}: VM vm{vm}:"), message
    dropped = read_plain(path, bad_vms="drop")
    assert dropped.vm_ids == [v for j, v in enumerate(trace.vm_ids) if j != vm]
    assert [d[0] for d in dropped.cleaning.dropped] == [f"vm{vm}"]


# -- each kind of bad input, by name ------------------------------------------

@pytest.mark.parametrize("rows, message", [
    ([("a", 1, 0, 10), ("a", 1, 1, -5)], ":3: VM a: cpu_pct_of_one_core -5 is negative"),
    ([("a", 2, 0, 10), ("a", 2, 1, 250)], ":3: VM a: cpu_pct_of_one_core 250 is above 100 % of its 2 vCPUs (200)"),
    ([("a", 1, 0, 10), ("a", 1, 1, 10), ("b", 1, 0, 10)], ":4: VM b: ends at minute 0, before the trace's end at "
                                                          "minute 1 (unequal lengths)"),
    ([("a", 1, 0, 10), ("a", 1, 1, 10), ("b", 1, 1, 10)], ":4: VM b: starts at minute 1, after the trace's start"),
    ([("a", 1, 0, 10), ("a", 1, 1, 10), ("a", 1, 2, 10), ("b", 1, 0, 1), ("b", 1, 2, 1)],
     ":5: VM b: gap: no sample at minute 1"),
    ([("a", 1, 0, 10), ("a", 1, 0, 12)], ":3: VM a: duplicate sample at minute 0 (also at "),
    ([("b", 1, 0, 1), ("a", 1, 0, "x")], ":3: VM a: cpu_pct_of_one_core 'x' is missing or not a number"),
    ([("b", 1, 0, 1), ("a", 0, 0, 1)], ":3: VM a: vcpus 0 is not a positive integer"),
    ([("b", 1, 0, 1), ("a", 1, -1, 1)], ":3: VM a: minute_index -1 is not a whole number of minutes"),
])
def test_plain_layout_problems_name_file_line_and_vm(tmp_path, rows, message):
    path = write(tmp_path / "t.csv", plain_lines(rows))
    with pytest.raises(TraceError, match="drops such VMs as the paper did") as err:
        read_plain(path)
    assert f"{path}{message}" in str(err.value)


@pytest.mark.parametrize("header, message", [
    ("vm_id,vcpus,minute_index,cpu_pct_of_one_core,disk", ":1: unknown column 'disk'"),
    ("vm_id,vcpus,cpu_pct_of_one_core", ":1: missing column 'minute_index'"),
])
def test_unknown_or_missing_columns(tmp_path, header, message):
    path = write(tmp_path / "t.csv", [header, "a,1,0,1,2" if "disk" in header else "a,1,1"])
    with pytest.raises(TraceError) as err:
        read_plain(path)
    assert f"{path}{message}" in str(err.value)


def test_parquet_problems_name_the_row(tmp_path):
    import pandas as pd

    path = tmp_path / "t.parquet"
    pd.DataFrame({"vm_id": ["a", "a"], "vcpus": [1, 1], "minute_index": [0, 1],
                  "cpu_pct_of_one_core": [5.0, 101.0]}).to_parquet(path)
    with pytest.raises(TraceError, match=r"t\.parquet: row 1: VM a: cpu_pct_of_one_core 101 is above 100 %"):
        read_plain(path)


def test_every_vm_bad_leaves_nothing(tmp_path):
    path = write(tmp_path / "t.csv", plain_lines([("a", 1, 0, -1), ("b", 1, 0, -2)]))
    with pytest.raises(TraceError, match="every VM has a problem"):
        read_plain(path, bad_vms="drop")


def test_bitbrains_problems(tmp_path):
    folder = tmp_path / "bb"
    folder.mkdir()
    write(folder / "1.csv", [BITBRAINS_HEADER, "1000;\t2;\t0;\t0;\t50;\t0;\t0;\t0;\t0;\t0;\t0",
                             "1300;\t2;\t0;\t0;\t101;\t0;\t0;\t0;\t0;\t0;\t0"])
    write(folder / "2.csv", [BITBRAINS_HEADER, "1000;\t1;\t0;\t0;\t50;\t0;\t0;\t0;\t0;\t0;\t0",
                             "1300;\t1;\t0;\t0;\t5;\t0;\t0;\t0;\t0;\t0;\t0"])
    with pytest.raises(TraceError, match=r"1\.csv:3: VM 1: CPU usage 101 % is above 100 %"):
        read_bitbrains(folder)
    kept = read_bitbrains(folder, bad_vms="drop")
    assert kept.vm_ids == ["2"] and kept.cpu.tolist() == [[0.5, 0.05]]
    write(folder / "3.csv", ["Timestamp [ms];\tCPU cores;\tCPU usage [%];\tGPU", "1000;\t1;\t5;\t0"])
    with pytest.raises(TraceError, match=r"3\.csv:1: unknown column 'GPU'"):
        read_bitbrains(folder)


def test_azure_problems(tmp_path):
    readings = write(tmp_path / "vm_cpu_readings-file-1-of-1.csv", [
        "0,a,1,5,2", "300,a,1,5,3", "0,b,1,5,2", "300,b,4,5,3", "0,c,1,2,1", "300,c,1,2,1"])
    table = write(tmp_path / "vmtable.csv", [
        "a,s,d,0,1,1,1,1,Unknown,2,4", "b,s,d,0,1,1,1,1,Unknown,4,4", "c,s,d,0,1,1,1,1,Unknown,>24,4"])
    with pytest.raises(TraceError, match=r":4: VM b: min/avg/max CPU 4/3/5 % are out of order"):
        read_azure(readings, vmtable=table)
    kept = read_azure(readings, vmtable=table, bad_vms="drop")
    assert kept.vm_ids == ["a"]
    reasons = dict(kept.cleaning.dropped)
    assert "core-count bucket '>24' is not a number" in reasons["c"]
    with pytest.raises(TraceError, match="give the vmtable"):
        read_azure(readings)
    table2 = write(tmp_path / "vmtable2.csv", ["a,s,d,0,1,1,1,1,Unknown,2,4"])
    with pytest.raises(TraceError, match="VM b: not in the vmtable"):
        read_azure(readings, vmtable=table2)


def test_missing_file_is_an_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_trace(tmp_path / "nope.csv")


def test_unknown_layout(tmp_path):
    path = write(tmp_path / "t.csv", ["what,is,this", "1,2,3"])
    with pytest.raises(TraceError, match="cannot tell the trace layout"):
        read_trace(path)


def test_trace_constructor_refuses_bad_arrays():
    with pytest.raises(TraceError, match="VM vm0, sample 1: demand -1 cores is negative"):
        Trace([[0.5, -1.0]], vcpus=[1])
    with pytest.raises(TraceError, match="not a number"):
        Trace([[np.nan]], vcpus=[1])
    with pytest.raises(TraceError, match="unequal lengths"):
        Trace([[0.5]], vcpus=[1, 2])
    with pytest.raises(TraceError, match="appears twice"):
        Trace([[0.5], [0.5]], vcpus=[1, 1], vm_ids=["a", "a"])


# -- the published Bitbrains files: month folders, jitter, the hold grid ------

SAMPLE = ROOT / "bitbrains-rnd-sample"


def bb_row(stamp, cores, pct) -> str:
    return ";\t".join(str(v) for v in (stamp, cores, 2600 * cores, 26 * cores * pct, pct, 0, 0, 0, 0, 0, 0))


def raw_sample(name: str):
    """(timestamps, cores, usage %) of a committed sample file, read plainly."""
    import gzip

    with gzip.open(SAMPLE / "2013-7" / f"{name}.csv.gz", "rt") as f:
        rows = [line.split(";") for line in f.read().splitlines()[1:]]
    return (np.array([float(r[0]) for r in rows]), np.array([float(r[1]) for r in rows]),
            np.array([float(r[4]) for r in rows]))


def test_committed_rnd_sample_reads_with_its_real_flaws():
    strict = read_trace(SAMPLE, "bitbrains", bad_vms="drop", grid="hold")
    assert strict.interval_minutes == 5.0 and strict.whole_days == 3
    dropped = dict(strict.cleaning.dropped)
    # VM 11 really misses a sample (a 600 s step) on 2013-07-03; VM 193 really reports 102.6 % usage.
    assert set(dropped) == {"11", "193"}
    assert "11.csv.gz:181: VM 11: gap: the slot from 2013-07-03 12:58:47 UTC" in dropped["11"]
    assert "193.csv.gz:2: VM 193: CPU usage 102.633 % is above 100 %" in dropped["193"]
    clipped = read_trace(SAMPLE, "bitbrains", bad_vms="drop", grid="hold", clip_over_100=True)
    assert "193" in clipped.vm_ids and "11" not in clipped.vm_ids
    assert "clipped to 100 % in 46 samples" in clipped.cleaning.text()
    assert np.all(clipped.cpu <= clipped.vcpus[:, None] + 1e-9)
    # Snapping the jittered stamps makes duplicates that are not in the data.
    with pytest.raises(TraceError, match=r"\.csv\.gz:\d+: VM \d+: "):
        read_trace(SAMPLE, "bitbrains")


def test_hold_grid_keeps_each_vms_demand_of_the_sample():
    trace = read_trace(SAMPLE, "bitbrains", bad_vms="drop", grid="hold")
    t0 = float(trace.cleaning.notes[-1].split("(")[-1].split(" s)")[0])
    for k, vm in enumerate(trace.vm_ids):
        stamps, cores, pct = raw_sample(vm)
        # The raw series as a step function: each sample holds until the next one.
        demand = cores * pct / 100
        end = t0 + trace.n_samples * 300
        edges = np.clip(np.append(stamps, stamps[-1] + 300), t0, end)
        raw_integral = float(np.sum(demand * np.diff(edges)))
        assert trace.cpu[k].sum() * 300 == pytest.approx(raw_integral, rel=1e-9), vm


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([299, 300, 300, 300, 301, 0]), st.integers(0, 400)), min_size=5,
                max_size=60),
       st.integers(0, 299), st.integers(-1, 80))
def test_hold_grid_properties(steps, phase, silence_at):
    """Jitter and repeated stamps are no gap; the slots keep the held
    series' integral; values stay within the samples'; a silence of two
    steps always leaves a slot at most half covered."""
    from ibcloud.delay.loaders import _hold_grid

    t0 = 1000.0
    stamps = t0 - 300 + phase + np.cumsum([0] + [s for s, _ in steps[1:]])
    silent = 2 <= silence_at < len(stamps) - 1  # after the grid's start, before the last sample
    if silent:
        stamps[silence_at + 1:] += 600
    cpu = np.array([v / 100 for _, v in steps])
    n = int((stamps[-1] + 300 - t0) // 300)
    if n < 1:
        return
    values, covered = _hold_grid(np.zeros(len(stamps), dtype=np.int64), stamps, cpu, 1, t0, 300.0, n)
    nxt = np.append(stamps[1:], np.inf)
    end = np.where(nxt - stamps > 450, stamps + 300, nxt)
    lo, hi = np.clip(stamps, t0, t0 + 300 * n), np.clip(end, t0, t0 + 300 * n)
    assert float((values * covered).sum()) == pytest.approx(float((cpu * (hi - lo)).sum()), rel=1e-9, abs=1e-9)
    assert np.all(covered <= 300 + 1e-9)
    held = covered[0] > 0
    assert np.all(values[0][held] >= cpu.min() - 1e-12) and np.all(values[0][held] <= cpu.max() + 1e-12)
    assert bool((covered[0] <= 150).any()) == silent


def test_hold_grid_gap_is_named_at_the_sample_before_it(tmp_path):
    folder = tmp_path / "bb"
    folder.mkdir()
    stamps = [1372629804 + 300 * i + (i % 3 == 0) for i in range(12)]
    stamps[7:] = [t + 600 for t in stamps[7:]]  # two samples missing after line 8
    write(folder / "1.csv", [BITBRAINS_HEADER] + [bb_row(t, 2, 10) for t in stamps])
    write(folder / "2.csv", [BITBRAINS_HEADER] + [bb_row(1372629804 + 300 * i, 1, 10) for i in range(15)])
    with pytest.raises(TraceError, match=r"1\.csv:8: VM 1: gap: the slot from 2013-06-30 22:38:24 UTC "):
        read_bitbrains(folder, grid="hold")
    kept = read_bitbrains(folder, grid="hold", bad_vms="drop")
    assert kept.vm_ids == ["2"] and np.allclose(kept.cpu, 0.1)


def test_month_folders_are_one_vm_per_file_name_in_time_order(tmp_path):
    for month, first in (("2013-9", 1377986608), ("2013-10", 1377986608 + 3 * 300)):
        (tmp_path / month).mkdir()
        write(tmp_path / month / "7.csv", [BITBRAINS_HEADER] + [bb_row(first + 300 * i, 2, 50 + month.count("10"))
                                                                for i in range(3)])
    trace = read_bitbrains(tmp_path, grid="hold")
    assert trace.vm_ids == ["7"] and trace.n_samples == 5
    assert trace.cpu.tolist() == [[1.0, 1.0, 1.02, 1.02, 1.02]]


def test_bitbrains_real_file_quirks_and_bad_rows(tmp_path):
    folder = tmp_path / "bb"
    folder.mkdir()
    # Trailing blanks and a CRLF line end read; a zero-core row (VM not provisioned) is no sample.
    write(folder / "1.csv", [BITBRAINS_HEADER + " ", bb_row(1000, 2, 50) + "  \r", bb_row(1300, 0, 0),
                             bb_row(1600, 2, 25), bb_row(1900, 2, 25), bb_row(2200, 2, 25)])
    with pytest.raises(TraceError, match=r"1\.csv:2: VM 1: gap: no sample at 1300 s"):
        read_bitbrains(folder)
    write(folder / "1.csv", [BITBRAINS_HEADER, bb_row(1000, 2, 50), "1300;\t2", bb_row(1600, 2, 25)])
    with pytest.raises(TraceError, match=r"1\.csv:3: VM 1: CPU usage \[%\] '' is missing or not a number"):
        read_bitbrains(folder, grid="hold")
    write(folder / "1.csv", [BITBRAINS_HEADER, bb_row(1000, 2, 50), bb_row(1300, -1, 5)])
    with pytest.raises(TraceError, match=r"1\.csv:3: VM 1: CPU cores -1 is not a whole number"):
        read_bitbrains(folder)


def test_windows_of_whole_days(tmp_path):
    trace = read_trace(SAMPLE, "bitbrains", bad_vms="drop", grid="hold", start_day=1, days=2)
    assert trace.whole_days == 2 and trace.n_samples == 576
    full = read_trace(SAMPLE, "bitbrains", bad_vms="drop", grid="hold")
    # VM 11's hole and VM 193's readings above 100 % are on the sample's first day: the window keeps both.
    assert set(trace.vm_ids) == set(full.vm_ids) | {"11", "193"}
    same = [trace.vm_ids.index(v) for v in full.vm_ids]
    assert np.allclose(trace.cpu[same], full.cpu[:, 288:864])
    with pytest.raises(TraceError, match="ends after the trace's last sample"):
        read_trace(SAMPLE, "bitbrains", bad_vms="drop", grid="hold", start_day=2, days=2)
    from ibcloud.delay import DelayParameterError

    with pytest.raises(DelayParameterError, match="grid = 'nearest'"):
        read_trace(SAMPLE, "bitbrains", grid="nearest")


def test_hold_grid_late_start_is_named_at_the_first_sample(tmp_path):
    folder = tmp_path / "bb"
    folder.mkdir()
    write(folder / "1.csv", [BITBRAINS_HEADER] + [bb_row(1372629804 + 300 * i, 1, 10) for i in range(12)])
    write(folder / "2.csv", [BITBRAINS_HEADER] + [bb_row(1372629804 + 300 * i, 1, 10) for i in range(3, 12)])
    with pytest.raises(TraceError, match=r"2\.csv:2: VM 2: starts at 2013-06-30 22:18:24 UTC \(1372630704 s\); the "
                                         r"slot from 2013-06-30 22:08:24 UTC .* is at most half covered"):
        read_bitbrains(folder, grid="hold")
