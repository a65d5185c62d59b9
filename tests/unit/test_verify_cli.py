"""`ibcloud verify` and `ibcloud.verify`: passing, failing and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import ibcloud
from ibcloud import Fabric
from ibcloud.cli.main import main


def test_verify_routed_fabric_passes_with_json(capsys) -> None:
    assert main(["verify", "8-ary-2", "--route", "minhop", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["reachable"] == data["pairs"] == 64 * 63
    assert data["credit_loops"]["acyclic"] is True


def test_broken_tables_fail_with_the_failing_pair(tmp_path: Path, capsys) -> None:
    fabric = Fabric.generate("8-ary-2")
    tables = ibcloud.route(fabric, "ftree").tables
    leaf = next(n for n in fabric.nodes() if n["kind"] == "switch")
    far = [n for n in fabric.nodes() if n["kind"] == "ca"][-1]
    tables.set(leaf["guid"], far["lid"], 1)  # to hca-00001 instead of towards hca-00064
    path = tmp_path / "broken.ibcf"
    ibcloud.routing.write_tables(tables, path)
    assert main(["verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert "hca-00064" in out and "hca-00001" in out and "8 pairs" in out.replace(",", "")


def test_dump_needs_its_fabric_and_bad_sl2vl_is_refused(tmp_path: Path, capsys) -> None:
    dump = tmp_path / "opensm-lfts.dump"
    ibcloud.route(Fabric.generate("8-ary-2"), "minhop").tables.write_opensm(dump)
    assert main(["verify", "8-ary-2", "--lfts", str(dump)]) == 0
    assert main(["verify", "8-ary-2", "--lfts", str(dump), "--sl2vl", "1,2"]) == 2
    assert "16 comma-separated VLs" in capsys.readouterr().err
    assert main(["verify", "ft324", "--lfts", str(dump)]) == 2
    assert "ibcloud: error:" in capsys.readouterr().err


def test_credit_loop_on_a_ring_is_found_and_printed() -> None:
    text = []
    n = 6
    for i in range(n):
        text.append(f'Switch 4 "s{i}"\n[1] "h{i}"[1]\n[2] "s{(i + 1) % n}"[3]\n[3] "s{(i - 1) % n}"[2]\n')
    for i in range(n):
        text.append(f'Hca 1 "h{i}"\n[1] "s{i}"[1]\n')
    ring = Fabric.from_text("\n".join(text), "ibsim")
    ring.assign_lids()
    report = ibcloud.verify(ibcloud.route(ring, "minhop"))
    assert report.data["reachable"] == report.data["pairs"]
    assert report.data["credit_loops"]["acyclic"] is False
    assert "->" in report.text and not report.ok
    deadlock_free = ibcloud.route(ring, "dfsssp")
    assert ibcloud.verify(deadlock_free).ok
