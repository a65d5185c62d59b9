"""`ibcloud reproduce vswitch --live` and `reproduce reconfig --live` on
ibsim with ibcloud's SM: observed SMPs beside the model's, every switch read
back. Small fabrics; runs in CI, never skipped; ibsim and the SM are stopped
by PID (ibcloud.sm.live's context managers)."""

from __future__ import annotations

import json

from ibcloud.cli.main import main


def _live(capsys, tmp_path, *argv: str) -> tuple:
    status = main(["reproduce", *argv, "--live", "--json", "--out", str(tmp_path / "out")])
    return status, json.loads(capsys.readouterr().out)


def test_reproduce_vswitch_live_itrc_and_ftree_minrc(capsys, tmp_path):
    status, rep = _live(capsys, tmp_path, "vswitch", "--live-moves", "vm0:#31", "vm3:#17")
    rows = rep["rows"]
    assert status == 0 and rep["construction"] and rep["evidence"], rows
    assert [(r["method"], r["vm"]) for r in rows] == [("itrc", "vm0"), ("itrc", "vm3"),
                                                     ("ftree-minrc", "vm0"), ("ftree-minrc", "vm3")]
    for r in rows:
        assert r["observed_switch_smps"] == r["predicted_switch_smps"] > 0, r
        assert r["observed_hypervisor_smps"] == r["predicted_hypervisor_smps"], r
        assert r["tables_match"] and r["vm_reachable"], r
    # FTreeMinRC never updates more switches than ItRC for the same move (Paper V).
    by = {(r["method"], r["vm"]): r["predicted_switch_smps"] for r in rows}
    assert all(by["ftree-minrc", vm] <= by["itrc", vm] for vm in ("vm0", "vm3"))
    # Paper II Table I / Paper V Table 2 on this tree: 1 to 2 x 12 switch SMPs per migration.
    assert rep["table2_bounds"] == {"switches": 12, "min_smps": 1, "max_smps": 24, "within": True}
    assert "construction" in rep["labels"]["observed == predicted SMPs"]
    assert (tmp_path / "out" / "live-vswitch.json").is_file()


def test_reproduce_reconfig_live_slimupdate_and_subtree(capsys, tmp_path):
    status, rep = _live(capsys, tmp_path, "reconfig")
    slim, sub = rep["rows"]
    assert status == 0 and rep["construction"] and rep["evidence"], rep["rows"]
    for r, method in ((slim, "slimupdate"), (sub, "subtree")):
        assert r["method"] == r["reconfig"] == method and r["swept"] and r["failures"] == [], r
        assert r["observed_lft_smps"] == r["predicted_lft_blocks"] == r["sm_predicted_lft_blocks"] > 0, r
        assert r["second_phase_lft_smps"] == r["second_phase_predicted_lft_blocks"] > 0, r
        assert r["tables_match"] and r["switches_not_answering_lid_routed"] == [], r
    # Paper IV: SlimUpdate sends fewer LFT blocks than a full re-route would.
    assert slim["observed_lft_smps"] < slim["full_reroute_lft_blocks"], slim
    # Paper III's strict sub-tree is not enough after this fault; the SM grows it to the whole tree.
    assert not sub["strict_subtree_ok"] and sub["subtree_levels"] == [[2, False], [3, True]], sub
