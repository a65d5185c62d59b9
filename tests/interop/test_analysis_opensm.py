"""The congestion analysis on tables routed by the real OpenSM 3.3.23 on ibsim
(issue 4). Runs in CI, never skipped.

(a) The plain-Python reference of tests/unit/test_analysis_reference.py gives
    the same numbers as the Rust analysis on OpenSM's imported
    opensm-lfts.dump (ftree on ft324, updn and minhop on 4-ary-3-full).
(b) Shift on the full-bisection 2-level tree ft324 routed by OpenSM's ftree
    is contention-free in the order of OpenSM's own
    opensm-ftree-ca-order.dump. Whether it is in plain LID order depends on
    who chose the LIDs: our net files carry LIDs (ibsim presets them and
    OpenSM keeps them), and those follow the leaves, so the LID order is the
    ca order; with the LIDs cleared, OpenSM hands them out in discovery
    order, interleaved with the switches' and not leaf by leaf, and shift in
    LID order congests.
(c) ``ibcloud.analysis.ftree_ca_order`` equals OpenSM's dump, DUMMY slots
    (leaves with fewer CAs) included.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

import pytest

from ibcloud import Fabric, ForwardingTables, read_guid2lid, read_lfts
from ibcloud.analysis import analyze, ftree_ca_order, read_node_order, write_ftree_ca_order
from ibcloud.interop import IbSim, OpenSmRun, run_opensm

_spec = importlib.util.spec_from_file_location(
    "analysis_reference", Path(__file__).resolve().parent.parent / "unit" / "test_analysis_reference.py")
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)  # type: ignore[union-attr]


def drop_cas(fabric: Fabric, descriptions: set) -> str:
    """The fabric's ibsim net file without the CAs named (and their cables)."""
    blocks = fabric.to_text("ibsim").split("\n\n")
    names, keep = set(), []
    for block in blocks:
        m = re.search(r'^Hca\s+\d+\s+"([^"]+)"\s+#\s+"([^"]+)"', block, re.M)
        if m and m.group(2) in descriptions:
            names.add(m.group(1))
        else:
            keep.append(block)
    assert len(names) == len(descriptions)
    lines = [line for line in "\n\n".join(keep).splitlines() if not any(f'"{n}"' in line for n in names)]
    return "\n".join(lines) + "\n"


class Routed:
    """One OpenSM run: the fabric with OpenSM's LIDs and its imported tables."""

    def __init__(self, fabric: Fabric, run: OpenSmRun) -> None:
        self.run = run
        self.fabric = fabric.copy()
        if not self.fabric.ranked:
            self.fabric.infer_ranks()
        self.fabric.assign_lids(policy="guid2lid", guid2lid=read_guid2lid(run.guid2lid))
        self.tables: ForwardingTables = read_lfts(run.lfts, self.fabric)
        self.net = ref.RefNet(self.fabric, self.tables)

    @property
    def ca_order_dump(self) -> Path:
        return self.run.dump_dir / "opensm-ftree-ca-order.dump"

    def ca_lids_sorted(self) -> List[int]:
        return sorted(self.net.ca_lids)


# name -> (preset, keep the LIDs of our net file?, CAs to drop, engine)
SETUPS = {
    "ft324-ftree": ("ft324", False, set(), "ftree"),
    "ft324-ftree-preset-lids": ("ft324", True, set(), "ftree"),
    "4-ary-3-full-updn": ("4-ary-3-full", False, set(), "updn"),
    "4-ary-3-full-minhop": ("4-ary-3-full", False, set(), "minhop"),
    "8-ary-2-ftree-holes": ("8-ary-2", False, {"hca-00003 HCA-1", "hca-00010 HCA-1", "hca-00011 HCA-1",
                                               "hca-00064 HCA-1"}, "ftree"),
}


@pytest.fixture(scope="module")
def opensm(tmp_path_factory) -> Iterator:
    """OpenSM runs by setup name, made on first use; simulators share a net file."""
    sims: Dict[Tuple[str, bool, frozenset], Tuple[Fabric, IbSim]] = {}
    done: Dict[str, Routed] = {}

    def get(name: str) -> Routed:
        if name in done:
            return done[name]
        preset, keep_lids, drop, engine = SETUPS[name]
        key = (preset, keep_lids, frozenset(drop))
        if key not in sims:
            fabric = Fabric.generate(preset)
            if not keep_lids:
                fabric.clear_lids()  # a fresh subnet: OpenSM picks every LID
            net = tmp_path_factory.mktemp(name) / f"{preset}.net"
            if drop:
                net.write_text(drop_cas(fabric, drop))
                fabric = Fabric.read(net)
            else:
                fabric.write(net)
            sims[key] = (fabric, IbSim(net).start())
        fabric, sim = sims[key]
        run = run_opensm(sim, routing_engine=engine)
        assert run.returncode == 0, run.log.read_text()[-3000:]
        assert run.engine_used == engine, f"OpenSM fell back to {run.engine_used} for {name}"
        done[name] = Routed(fabric, run)
        return done[name]

    yield get
    for _, sim in sims.values():
        sim.stop()
    for routed in done.values():
        routed.run.remove()


# --------------------------------------------------------------------------
# (a) reference = Rust on OpenSM's tables
# --------------------------------------------------------------------------

CROSS = [
    ("ft324-ftree", "bisect", None),
    ("ft324-ftree", "bruck", None),
    ("4-ary-3-full-updn", "bisect", None),
    ("4-ary-3-full-updn", "rand", None),
    ("4-ary-3-full-updn", "4neighbor", None),
    ("4-ary-3-full-minhop", "bisect", None),
    ("4-ary-3-full-minhop", "recdbl", None),
    ("8-ary-2-ftree-holes", "bisect_fb_sym", None),
    ("8-ary-2-ftree-holes", "recdbl", "fold"),
]


@pytest.mark.parametrize("name,pattern,arg", CROSS, ids=[f"{n}-{p}" for n, p, _ in CROSS])
def test_reference_equals_rust_on_opensm_tables(opensm, name: str, pattern: str, arg: Optional[str]) -> None:
    r = opensm(name)
    assert r.tables.unrouted() == 0
    a = analyze(r.tables, pattern, pattern_arg=arg, runs=20, seed=2024)
    assert a.endpoints == r.net.ca_lids
    assert a.broken_flows == 0
    ref.assert_identical(a, ref.reference_pattern(r.net, r.net.ca_lids, pattern, runs=20, seed=2024, arg=arg),
                         f"{pattern} on OpenSM's {name}")


# --------------------------------------------------------------------------
# (b) shift on ft324 routed by OpenSM's ftree
# --------------------------------------------------------------------------


def _shift(r: Routed, **kw):
    a = analyze(r.tables, "shift", shuffle=False, **kw)
    return a, a.runs.iloc[0]


def _assert_contention_free(a, row, n: int, what: str) -> None:
    # every route of every level has congestion 1: acc_band 1.0 and every level's worst link carries one flow
    assert (row["levels"], row["flows"], row["broken"]) == (n - 1, n * (n - 1), 0), what
    assert a.hist_max_cong[["max_cong", "routes"]].values.tolist() == [[1.0, n * (n - 1)]], \
        f"{what}: hist_max_cong {a.hist_max_cong.values.tolist()}"
    assert (row["acc_band"], row["max_cong"], row["sum_max_cong"], row["dep_max_delay"]) == \
        (1.0, 1.0, n - 1.0, n - 1.0), f"{what}: {dict(row)}"
    assert a.links["max"].max() == 1.0


@pytest.mark.parametrize("name", ["ft324-ftree", "ft324-ftree-preset-lids"])
def test_shift_is_contention_free_in_opensm_ca_order(opensm, name: str) -> None:
    r = opensm(name)
    n = len(r.net.ca_lids)
    assert n == 324
    dump = r.ca_order_dump
    assert dump.exists(), f"OpenSM wrote no {dump.name}"
    order = [v for v in read_node_order(dump) if v != 0xFFFF]
    a, row = _shift(r, order=dump)
    assert a.fixed_ranks == n and a.order_skipped == 0
    _assert_contention_free(a, row, n, f"shift in OpenSM's ca order ({name})")
    # The reference agrees, rank for rank (fixed ranks are the dump's LIDs in order).
    fixed = [r.net.ca_lids.index(lid) for lid in order]
    ref.assert_identical(a, ref.reference_pattern(r.net, r.net.ca_lids, "shift", runs=1, seed=0, shuffle=False,
                                                  fixed=fixed), f"shift in ca order ({name})")


def test_shift_in_lid_order_congests_with_opensms_own_lids(opensm) -> None:
    """A fresh subnet: OpenSM hands out LIDs in discovery order, so the CAs by
    LID are not leaf by leaf, and shift in LID order shares links."""
    r = opensm("ft324-ftree")
    lids = r.ca_lids_sorted()
    order = [v for v in read_node_order(r.ca_order_dump) if v != 0xFFFF]
    assert lids != order, "OpenSM's LID order happens to be its ca order"
    a, row = _shift(r, lids=lids)
    assert row["max_cong"] > 1.0 and row["acc_band"] < 1.0, dict(row)
    # Observed with OpenSM 3.3.23: acc_band 0.8012..., max_cong 3, sum_max_cong 737, dep_max_delay 475.
    assert (row["max_cong"], row["sum_max_cong"], row["dep_max_delay"]) == (3.0, 737.0, 475.0), dict(row)
    assert abs(row["acc_band"] - 0.8012) < 1e-4, dict(row)
    ref.assert_identical(a, ref.reference_pattern(r.net, lids, "shift", runs=1, seed=0, shuffle=False),
                         "shift in OpenSM's LID order")


def test_shift_in_lid_order_with_preset_lids_is_the_ca_order(opensm) -> None:
    """Our net files carry LIDs (1..324 for the CAs, leaf by leaf); OpenSM
    keeps them, so LID order coincides with its ca order and shift in LID
    order is contention-free too."""
    r = opensm("ft324-ftree-preset-lids")
    lids = r.ca_lids_sorted()
    assert lids == list(range(1, 325))
    assert lids == [v for v in read_node_order(r.ca_order_dump) if v != 0xFFFF]
    a, row = _shift(r, lids=lids)
    _assert_contention_free(a, row, 324, "shift in LID order (preset LIDs)")


# --------------------------------------------------------------------------
# (c) ftree_ca_order = OpenSM's opensm-ftree-ca-order.dump
# --------------------------------------------------------------------------


def _dump_entries(path: Path) -> List[Optional[int]]:
    """OpenSM's dump read by hand: one '0xLLLL<TAB>description' per line, 0xFFFF DUMMY."""
    out: List[Optional[int]] = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        lid, desc = line.split("\t", 1)
        value = int(lid, 16)
        assert (value == 0xFFFF) == (desc == "DUMMY"), line
        out.append(None if value == 0xFFFF else value)
    return out


@pytest.mark.parametrize("name", ["ft324-ftree", "ft324-ftree-preset-lids", "8-ary-2-ftree-holes"])
def test_ftree_ca_order_equals_opensms_dump(opensm, name: str, tmp_path: Path) -> None:
    r = opensm(name)
    theirs = _dump_entries(r.ca_order_dump)
    mine = ftree_ca_order(r.fabric)
    first = next((i for i, (x, y) in enumerate(zip(mine, theirs)) if x != y), min(len(mine), len(theirs)))
    assert mine == theirs, f"{name}: ftree_ca_order differs from OpenSM's dump from slot {first}: " \
                           f"ours {mine[first:first + 5]}, OpenSM {theirs[first:first + 5]} " \
                           f"({len(mine)} vs {len(theirs)} slots)"
    assert sorted(lid for lid in theirs if lid is not None) == sorted(r.net.ca_lids)
    assert [None if v == 0xFFFF else v for v in read_node_order(r.ca_order_dump)] == theirs
    if name == "8-ary-2-ftree-holes":
        assert theirs.count(None) == 4 and len(theirs) == 64
    else:
        assert None not in theirs
    # The file ibcloud writes reads back the same, and is byte for byte OpenSM's.
    ours = tmp_path / "ca-order.dump"
    write_ftree_ca_order(r.fabric, ours)
    assert _dump_entries(ours) == theirs
    assert ours.read_text() == r.ca_order_dump.read_text()
    # order="ftree" (ibcloud's order) is the dump's order.
    a = analyze(r.tables, "bisect", order="ftree", shuffle=False)
    b = analyze(r.tables, "bisect", order=r.ca_order_dump, shuffle=False)
    assert a.runs.equals(b.runs) and a.fixed_ranks == b.fixed_ranks == len(r.net.ca_lids)
