"""`ibcloud consolidate` and `ibcloud reproduce delay`, and the campaign they
run, on small traces (the full campaign is bench/delay_campaign.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ibcloud.cli.main import main
from ibcloud.delay import run_campaign, synthetic_trace, table_i, table_ii
from ibcloud.delay.reproduction import reproduce

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "traces"


@pytest.fixture(scope="module")
def small_trace_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("delay") / "trace.parquet"
    synthetic_trace(seed=5, n_vms=60, days=3).write(path)
    return path


def test_consolidate_by_delay_reports_every_host(small_trace_file, tmp_path, capsys):
    placement = tmp_path / "placement.csv"
    status = main(["consolidate", str(small_trace_file), "--by", "delay", "--cap", "10", "--cores", "12",
                   "--pack-days", "0-1", "--eval-days", "2", "--placement", str(placement), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert status == (1 if report["hosts_over_cap"] else 0)
    assert report["spec"]["by"] == "delay" and report["eval_days"] == 1
    assert sum(h["n_vms"] for h in report["hosts"]) == 60
    assert all(h["packing_delay"] <= 20 + 1e-9 for h in report["hosts"] if h["n_vms"] > 1)
    lines = placement.read_text().splitlines()
    assert lines[0] == "vm_id,host" and len(lines) == 61


def test_consolidate_exit_status_says_whether_a_host_broke_the_cap(small_trace_file, capsys):
    assert main(["consolidate", str(small_trace_file), "--by", "utilisation", "--threshold", "100", "--cores", "12",
                 "--cap", "0.001"]) == 1
    out = capsys.readouterr().out
    assert "utilisation θ = 100 %, 12 cores" in out and "hosts above 0.001 min/day" in out
    assert main(["consolidate", str(small_trace_file), "--by", "utilisation", "--threshold", "30", "--cores", "32"]) == 0


def test_consolidate_cross_validation(small_trace_file, capsys):
    main(["consolidate", str(small_trace_file), "--by", "delay", "--cap", "100", "--threshold", "90", "--cores", "16",
          "--cross-validate", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["folds"] == 3 and report["packings"] == 3
    assert set(report["statistics"]) >= {"avg_delay", "max_filling", "avg_delay_when_delayed"}


@pytest.mark.parametrize("trace, extra", [
    ("bitbrains", []),
    ("azure", ["--vmtable", str(ROOT / "azure" / "vmtable.csv")]),
    ("plain.csv", []),
])
def test_consolidate_reads_the_public_layouts(trace, extra, capsys):
    assert main(["consolidate", str(ROOT / trace), "--by", "delay", "--cap", "1000", "--cores", "4", *extra]) == 0
    assert "hosts above 1000 min/day" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["consolidate", "PLAIN", "--by", "delay"], "--by delay needs --cap"),
    (["consolidate", "PLAIN", "--cap", "1", "--cross-validate"], "cross-validation needs at least two whole days"),
    (["consolidate", "PLAIN", "--cap", "1", "--pack-days", "3"], "day 3 is not one of the 0 whole days"),
    (["consolidate", "nope.csv", "--cap", "1"], "nope.csv: No such file or directory"),
    (["consolidate", "AZURE", "--cap", "1"], "give the vmtable"),
    (["consolidate", "BAD", "--cap", "1"], "bad.csv:3: VM a: cpu_pct_of_one_core -3 is negative"),
])
def test_consolidate_bad_input_exits_2(argv, message, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("vm_id,vcpus,minute_index,cpu_pct_of_one_core\na,1,0,5\na,1,1,-3\n")
    names = {"PLAIN": str(ROOT / "plain.csv"), "AZURE": str(ROOT / "azure"), "BAD": str(bad),
             "nope.csv": str(tmp_path / "nope.csv")}
    assert main([names.get(a, a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ibcloud: error:") and message in err and "Traceback" not in err


def test_reproduce_delay_bad_trace_is_a_usage_error_not_a_failed_task(tmp_path, capsys):
    # The reproduction runs as a campaign task; its bad-input error must come back as the CLI's own.
    out = tmp_path / "out"
    assert main(["reproduce", "delay", "--trace", str(ROOT / "plain.csv"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ibcloud: error:") and "at least two whole days" in err
    assert "Traceback" not in err and "did not finish" not in err


def test_consolidate_drops_bad_vms_when_asked(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("vm_id,vcpus,minute_index,cpu_pct_of_one_core\na,1,0,5\na,1,1,-3\nb,1,0,5\nb,1,1,5\n")
    assert main(["consolidate", str(bad), "--cap", "1", "--drop-bad-vms", "--cores", "2"]) == 0
    captured = capsys.readouterr()
    assert "dropped 1 VM: a (" in captured.err and "1 hosts" not in captured.err


def test_reproduce_lists_and_refuses_unknown_names(capsys):
    assert main(["reproduce", "--list"]) == 0
    assert capsys.readouterr().out.startswith("delay")
    assert main(["reproduce", "nosuch"]) == 2
    assert "unknown reproduction 'nosuch'" in capsys.readouterr().err
    assert main(["reproduce", "delay", "--vms", "0"]) == 2
    assert main(["reproduce", "delay", "--help"]) == 0


def test_reproduce_delay_small_scale_writes_results_and_plots(tmp_path, capsys):
    out = tmp_path / "repro"
    status = main(["reproduce", "delay", "--vms", "60", "--days", "3", "--out", str(out), "--json"])
    report = json.loads(capsys.readouterr().out)
    # On 60 VMs over 3 days Table I's delay is not strictly increasing (R4) and the headline ratios miss:
    # predictions that do not hold make the exit status 1, whatever the calibration rows say.
    verdicts = {c["id"]: c["verdict"] for c in report["checks"]}
    assert status == 1 and report["ok"] is False
    assert list(verdicts) == ["R1", "R2", "R3", "R4", "R4f", "R5", "R6", "R6b", "R6c", "R7", "R8"]
    assert verdicts["R1"] == verdicts["R3"] == "construction" and verdicts["R2"] == verdicts["R8"] == "not run"
    assert verdicts["R4"] == "not reproduced" and verdicts["R7"] == "shape only"
    assert report["scoreboard"]["reproduced"] == 0 and report["scoreboard"]["claims"] == 11
    assert len(report["table_i"]["rows"]) == 8 and len(report["table_ii"]["rows"]) == 16
    assert report["table_i"]["rows"][4]["paper"]["max_delay"] == 46706.97
    assert report["packings"] == 3 * 3 * 24 + 24
    for name in ("bins.csv", "table_i.csv", "table_ii.csv", "summary.json", "fig3_cases.png", "fig6_cv_utilisation.png",
                 "fig7_cv_delay.png", "pareto.png", "fig2_host.png", "fig4_full_data_utilisation.png"):
        assert (out / name).stat().st_size > 0, name


def test_reproduce_prints_tables_beside_the_paper(tmp_path, capsys):
    main(["reproduce", "delay", "--vms", "40", "--days", "2", "--no-plots", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "Table I" in out and "Table II" in out and "Headline ratios" in out and "46,707" in out
    assert "Scoreboard (delay)" in out and "11 claims: 0 reproduced" in out


def test_reproduce_delay_names_its_output_folder_not_the_temporary_one(tmp_path, capsys):
    """The campaign runner runs a reproduction in a temporary folder and copies its files to --out;
    the printed output names --out."""
    out = tmp_path / "rd"
    main(["reproduce", "delay", "--vms", "30", "--days", "2", "--no-plots", "--out", str(out)])
    printed = capsys.readouterr().out
    assert f"files to {out}" in printed and "ibcloud-reproduce-" not in printed
    assert (out / "summary.json").exists()


def test_reproduce_on_a_users_trace(small_trace_file, tmp_path, capsys):
    main(["reproduce", "delay", "--trace", str(small_trace_file), "--no-plots", "--out", str(tmp_path), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["trace"]["vms"] == 60
    assert report["checks"][1]["id"] == "R2" and report["checks"][1]["verdict"] == "not run"


def test_campaign_small_scale_same_code_path():
    trace = synthetic_trace(seed=8, n_vms=80, days=3)
    result = run_campaign(trace)
    assert result.packings == 3 * 3 * 24 + 24
    t1, t2 = table_i(result.bins), table_ii(result.bins)
    assert list(t1.index) == [30, 40, 50, 60, 70, 80, 90, 100]
    assert t1["avg_delay"].is_monotonic_increasing
    assert (t2.loc[(1.0, 100), "avg_filling"] <= t2.loc[(1000.0, 100), "avg_filling"])
    again = run_campaign(trace)
    assert again.bins.equals(result.bins)


def test_reproduction_is_deterministic():
    a = reproduce(synthetic_trace(seed=6, n_vms=40, days=2), out=None, plots=False).as_dict()
    b = reproduce(synthetic_trace(seed=6, n_vms=40, days=2), out=None, plots=False).as_dict()
    for d in (a, b):
        d.pop("campaign_seconds")
        d.pop("seconds")
    assert a == b


def test_reproduce_on_the_committed_public_sample(tmp_path, capsys):
    sample = ROOT / "bitbrains-rnd-sample"
    status = main(["reproduce", "delay", "--trace", str(sample), "--layout", "bitbrains", "--grid", "hold",
                   "--drop-bad-vms", "--clip-over-100", "--window", "1:2", "--no-plots", "--out", str(tmp_path),
                   "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["trace"]["vms"] == 16 and report["trace"]["days"] == 2.0
    assert any("clipped to 100 %" in n for n in report["trace"]["cleaning"]["notes"])
    judged = [c for c in report["checks"] if c["verdict"] not in ("not run", "not attempted")]
    assert {c["kind"] for c in judged} <= {"qualitative", "construction"}
    assert status == (0 if all(c["passed"] for c in judged if c["kind"] == "qualitative") else 1)


@pytest.mark.parametrize("argv, message", [
    (["--window", "0:13"], "--window and --grid apply to --trace"),
    (["--trace", "x", "--window", "3"], "is not START:DAYS"),
    (["--trace", str(ROOT / "plain.csv"), "--clip-over-100"], "clip_over_100 is for the Bitbrains layout"),
    (["--trace", str(ROOT / "bitbrains"), "--grid", "hold", "--window", "5:2"], "the window starts on day 5"),
])
def test_reproduce_delay_public_trace_options_bad_input_exits_2(argv, message, tmp_path, capsys):
    assert main(["reproduce", "delay", *argv, "--no-plots", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
