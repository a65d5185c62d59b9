"""`ibcloud route`: routing, writing, comparing, and bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

import ibcloud
from ibcloud import Fabric
from ibcloud.cli.main import main


def test_route_writes_native_and_dump_that_read_back(tmp_path: Path, capsys) -> None:
    native, dump = tmp_path / "r.ibcf", tmp_path / "opensm-lfts.dump"
    assert main(["route", "ft324", "--engine", "minhop", "-o", str(native)]) == 0
    assert main(["route", "ft324", "--engine", "minhop", "-o", str(dump)]) == 0
    out = capsys.readouterr().out
    assert "minhop routed 36 switches x 360 LIDs" in out and "0 entries unrouted" in out
    fabric, tables = ibcloud.routing.read_tables(native)
    assert ibcloud.read_lfts(dump, fabric) == tables
    assert main(["route", "--compare", str(native), str(dump), "--fabric", "ft324"]) == 0
    assert "identical" in capsys.readouterr().out


def test_compare_reports_entries_and_blocks_and_fails(tmp_path: Path, capsys) -> None:
    fabric = Fabric.generate("ft324")
    a = ibcloud.route(fabric, "ftree").tables
    b = ibcloud.route(fabric, "minhop").tables
    a_path, b_path = tmp_path / "a.ibcf", tmp_path / "b.ibcf"
    ibcloud.routing.write_tables(a, a_path)
    ibcloud.routing.write_tables(b, b_path)
    assert main(["route", "--compare", str(a_path), str(b_path), "--json"]) == 1
    import json

    report = json.loads(capsys.readouterr().out)
    assert report["identical"] is False
    assert report["entries_differing"] == sum(d[2] for d in a.differences(b)) > 0
    assert report["blocks_differing"] <= 36 * 6


@pytest.mark.parametrize(
    "argv, message",
    [
        (["route", "ft324", "--engine", "nosuch"], "unknown routing engine 'nosuch'"),
        (["route"], "give a FABRIC"),
        (["route", "--compare", "a.dump", "b.dump"], "needs the fabric"),
    ],
)
def test_bad_requests_exit_2(argv, message, capsys) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_ftree_refuses_a_non_fat_tree_like_opensm(tmp_path: Path, capsys) -> None:
    broken, _ = Fabric.generate("ft648").inject_faults(links=3, seed=1)
    path = tmp_path / "broken.ibcf"
    broken.write(path)
    assert main(["route", str(path), "--engine", "ftree"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ibcloud: error: ftree:") and "port groups" in err
    assert main(["route", str(path), "--engine", "minhop"]) == 0


def test_roots_file_errors_name_file_and_line(tmp_path: Path, capsys) -> None:
    roots = tmp_path / "roots"
    roots.write_text("0x0002c90202000001\nnot-a-guid\n")
    assert main(["route", "ft324", "--engine", "updn", "--roots", str(roots)]) == 2
    assert f"{roots}:2: 'not-a-guid' is not a GUID" in capsys.readouterr().err


def test_python_engines_plug_in(capsys) -> None:
    def first_port_everywhere(fabric):
        tables = ibcloud.ForwardingTables(fabric)
        return tables

    ibcloud.register_engine("test-empty", first_port_everywhere, "for a test")
    assert ("test-empty", "for a test") in ibcloud.engines()
    assert main(["route", "8-ary-2", "--engine", "test-empty"]) == 0
    assert "1024 entries unrouted" in capsys.readouterr().out
