"""`ibcloud analyze`: reports, files, exit statuses and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import ibcloud
from ibcloud import Fabric
from ibcloud.cli.main import main


def test_json_csv_and_plot(tmp_path: Path, capsys) -> None:
    dump = tmp_path / "opensm-lfts.dump"
    ibcloud.route(Fabric.generate("8-ary-2"), "ftree").tables.write_opensm(dump)
    args = ["analyze", "8-ary-2", "--lfts", str(dump), "--runs", "50", "--seed", "4", "--json",
            "--csv", str(tmp_path / "res" / "b"), "--plot", str(tmp_path / "b.png"), "--force"]  # run twice below
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["runs"] == 50 and data["endpoints"] == 64 and data["flows"] == 50 * 32
    assert 0 < data["acc_band"]["mean"] <= 1 and sum(data["hist_acc_band"]) == 50
    assert sum(k for _, k in data["hist_max_cong"]) == 50 * 32
    assert data["forwarding_index"]["max"] > 0
    runs = (tmp_path / "res" / "b-runs.csv").read_text().splitlines()
    assert runs[0].startswith("run,levels,flows") and len(runs) == 51
    assert (tmp_path / "res" / "b-links.csv").exists() and (tmp_path / "b.png").stat().st_size > 1000
    # Same seed, same numbers.
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out) == data


def test_broken_tables_exit_1_and_list_the_flows(tmp_path: Path, capsys) -> None:
    fabric = Fabric.generate("8-ary-2")
    tables = ibcloud.route(fabric, "ftree").tables
    far = [n for n in fabric.nodes() if n["kind"] == "ca"][-1]
    for sw in (n for n in fabric.nodes() if n["kind"] == "switch"):
        tables.set(sw["guid"], far["lid"], 1)
    path = tmp_path / "broken.ibcf"
    ibcloud.routing.write_tables(tables, path)
    assert main(["analyze", str(path), "--pattern", "gather", "--no-shuffle", "--nodes",
                 f"{far['lid']},1,2,3"]) == 1
    out = capsys.readouterr().out
    assert "BROKEN: 3 flows do not arrive" in out and "not the destination" in out


def test_matrix_order_and_subset(tmp_path: Path, capsys) -> None:
    matrix = tmp_path / "m.csv"
    matrix.write_text("src,dst,weight,level\n1,2,1,0\n3,4,2.5,0\n2,1,1,1\n")
    assert main(["analyze", "8-ary-2", "--route", "minhop", "--matrix", str(matrix), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["pattern"] == "matrix" and data["levels"] == 2 and data["flows"] == 3
    order = tmp_path / "order"
    order.write_text("# ranks 0 and 1\n0x0001\n0xFFFF\tDUMMY\n0x0002\n")
    assert main(["analyze", "8-ary-2", "--route", "ftree", "--pattern", "recdbl", "--count", "16",
                 "--subset", "guid_desc", "--order", str(order), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["endpoints"] == 16 and data["levels"] == 4


def test_bad_input_is_reported_without_traceback(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("src,dst,weight\n1,2,1\n1,1,1\n")
    assert main(["analyze", "8-ary-2", "--route", "ftree", "--matrix", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:3" in err and "same endpoint" in err
    bad.write_text("source,dst\n1,2\n")
    assert main(["analyze", "8-ary-2", "--route", "ftree", "--matrix", str(bad)]) == 2
    assert f"{bad}:1" in capsys.readouterr().err
    bad.write_text("src,dst\n1,9999\n")
    assert main(["analyze", "8-ary-2", "--route", "ftree", "--matrix", str(bad)]) == 2
    assert f"{bad}:2" in capsys.readouterr().err
    assert main(["analyze", "8-ary-2", "--route", "ftree", "--pattern", "recdbl", "--count", "12"]) == 2
    assert "power-of-two" in capsys.readouterr().err
    assert main(["analyze", "8-ary-2", "--route", "ftree", "--pattern", "nope"]) == 2
    assert "known:" in capsys.readouterr().err
    assert main(["analyze", "8-ary-2", "--route", "ftree", "--order", str(tmp_path / "missing")]) == 2
    assert "missing" in capsys.readouterr().err
    order = tmp_path / "order"
    order.write_text("0x0001\nnot-a-guid\n")
    assert main(["analyze", "8-ary-2", "--route", "ftree", "--order", str(order)]) == 2
    assert f"{order}:2" in capsys.readouterr().err
    assert main(["analyze", "8-ary-2", "--route", "ftree", "--runs", "0"]) == 2
    assert main(["analyze", "8-ary-2", "--route", "ftree", "--nodes", "1,x"]) == 2
