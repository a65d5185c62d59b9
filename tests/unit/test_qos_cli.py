"""``ibcloud qos write`` / ``ibcloud cc write``: presets, files, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ibcloud.cli.main import main
from ibcloud.exceptions import ParseError
from ibcloud.qos import opensm_conf, policy_tables


def test_presets_write_table_6_and_table_5(capsys) -> None:
    assert main(["qos", "write", "StMax"]) == 0
    out = capsys.readouterr().out
    assert "qos_vlarb_low 0:32,1:32\n" in out and "congestion_control" not in out
    assert main(["cc", "write", "drxmaxq", "--cc-sls", "bulk"]) == 0
    out = capsys.readouterr().out
    assert "cc_ca_cong_setting_control_map 0xFFFE\n" in out
    assert "cc_ca_cong_setting_ccti_timer 1 32767\n" in out
    assert "cc_ca_cong_setting_ccti_timer 0 " not in out
    assert "qos TRUE" not in out


def test_file_policy_to_out_file_and_json(tmp_path: Path, capsys) -> None:
    pol = tmp_path / "p.toml"
    pol.write_text('preset = "stmaxq"\n[qos.swe]\nhigh-limit = 9\n')
    conf = tmp_path / "opensm.conf"
    assert main(["qos", "write", str(pol), "--out", str(conf)]) == 0
    text = conf.read_text()
    assert "qos_swe_high_limit 9\n" in text and text == opensm_conf(pol, "qos")
    # An existing file is replaced only with --force.
    assert main(["qos", "write", str(pol), "--out", str(conf)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["qos", "write", str(pol), "--out", str(conf), "--force"]) == 0
    capsys.readouterr()
    assert main(["cc", "write", str(pol), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["cc"]["ccti_limit"] == 127 and data["name"] == "p"


@pytest.mark.parametrize("text, where, problem", [
    ('preset = "stmax"\n[qos]\nvlarb-low = "0:300"\n', ":3:", "weight 300"),
    ('preset = "stmax"\n[cc]\ncct = "5:1"\n', ":3:", "shift 5"),
    ('preset = "stmax"\n\n[qos]\nsl2vl = [0, 1]\n', ":4:", "16 SLs"),
    ('[qos]\nmax-vls = 0\n', ":2:", "1-15"),
    ("\x00\x01 binary", ":1:", ""),
])
def test_bad_files_exit_2_with_file_line_problem(tmp_path: Path, capsys, text: str, where: str,
                                                 problem: str) -> None:
    pol = tmp_path / "bad.toml"
    pol.write_text(text)
    assert main(["qos", "write", str(pol)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ibcloud: error: ") and f"bad.toml{where}" in err and problem in err, err
    assert "Traceback" not in err


def test_missing_file_and_missing_part(tmp_path: Path, capsys) -> None:
    assert main(["qos", "write", str(tmp_path / "nope.toml")]) == 2
    assert "not a preset" in capsys.readouterr().err
    only_qos = tmp_path / "q.toml"
    only_qos.write_text("[qos]\nmax-vls = 2\nvlarb-low = \"0:1,1:1\"\nvlarb-high = \"0:0\"\nsl2vl = [0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1]\n")
    assert main(["cc", "write", str(only_qos)]) == 2
    assert "no [cc] settings" in capsys.readouterr().err
    with pytest.raises(ParseError):
        policy_tables(tmp_path / "nope.toml")


def test_simulator_view_matches_what_opensm_gets() -> None:
    t = policy_tables("stmaxq")
    assert t["simulator"] == {"vls": 2, "sl2vl": t["qos"]["ca"]["sl2vl"]}
    # The bulk reading of A11 leaves SL0 out of the CA Control_Map, which the simulator now models (sl-map).
    assert policy_tables("stmaxq", cc_sls="bulk")["simulator"] == t["simulator"]
