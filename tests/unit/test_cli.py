"""The ``ibcloud`` command, called in-process through ``main([...])``:
exit statuses, what it prints, and how it reports bad input."""

import json
import os

import pytest

from ibcloud import Fabric, __version__
from ibcloud.cli.main import ExitStatus, main


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def assert_error(result, *fragments):
    status, out, err = result
    assert status == ExitStatus.ERROR == 2
    last = err.strip().splitlines()[-1]
    # `ibcloud: error: ...` from main, `ibcloud topo generate: error: ...` from argparse
    assert last.startswith("ibcloud") and ": error: " in last, err
    for fragment in fragments:
        assert fragment in err, f"{fragment!r} not in {err!r}"


def test_version(capsys):
    status, out, _ = run(capsys, "--version")
    assert status == 0 and out.strip() == f"ibcloud {__version__}"


def test_help_and_missing_command(capsys):
    assert run(capsys, "--help")[0] == 0
    assert_error(run(capsys), "required")
    assert_error(run(capsys, "topo"), "required")


def test_presets(capsys):
    status, out, _ = run(capsys, "topo", "presets")
    assert status == 0
    for name in ["ft324", "ft648", "ft11664", "ft20736", "8-ary-3-full"]:
        assert name in out
    status, out, _ = run(capsys, "topo", "presets", "--json")
    rows = json.loads(out)
    assert status == 0 and len(rows) == 16
    assert {"name": "ft648", "cas": 648, "switches": 54, "radix": 36}.items() <= rows[1].items()


@pytest.mark.parametrize(
    ("spec", "cas", "switches", "blocks", "smps"),
    [("ft324", 324, 36, 6, 216), ("ft648", 648, 54, 11, 594), ("ft5832", 5832, 972, 107, 104004),
     ("ft11664", 11664, 1620, 208, 336960)],
)
def test_info_json_of_the_36_port_trees(capsys, spec, cas, switches, blocks, smps):
    status, out, _ = run(capsys, "topo", "info", spec, "--json")
    info = json.loads(out)
    assert status == 0 and info["source"] == spec
    assert (info["cas"], info["switches"], info["lft_blocks_per_switch"], info["full_lft_smps"]) == (
        cas, switches, blocks, smps)
    assert info["levels"][0]["rank"] == 0
    assert sum(level["switches"] for level in info["levels"]) == switches
    assert info["link_rates"] == {"4xQDR": info["links"]}


def test_info_table(capsys):
    status, out, _ = run(capsys, "topo", "info", "ft11664")
    assert status == 0
    assert "ft11664: XGFT(3;18,18,36;1,18,18)" in out
    for text in ["11,664", "1,620", "13,284", "208", "336,960", "root", "middle", "leaf", "4xQDR"]:
        assert text in out, text


def test_generate_writes_and_summarises(capsys, tmp_path):
    path = tmp_path / "ft324.ibcf"
    status, out, _ = run(capsys, "topo", "generate", "ft324", "-o", str(path))
    assert status == 0 and path.exists()
    assert out.strip() == (
        f"ft324: 324 CAs, 36 switches, 648 links, max LID 360 (6 LFT blocks per switch) -> {path} (native)")


def test_generate_without_output_only_summarises(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, _ = run(capsys, "topo", "generate", "XGFT(2;4,4;1,4)", "--radix", "16", "--rate", "4xEDR")
    assert status == 0 and "16 CAs, 8 switches, 32 links" in out
    assert list(tmp_path.iterdir()) == []


def test_generate_with_lmc_and_faults(capsys, tmp_path):
    path = tmp_path / "broken.topo"
    status, out, _ = run(capsys, "topo", "generate", "ft648", "--lmc", "2", "--fail-links", "5",
                         "--fail-switches", "1", "--seed", "3", "-o", str(path), "--format", "ibnetdiscover")
    assert status == 0
    assert "648 CAs, 53 switches" in out and "removed 1 switches and 5 links (seed 3)" in out
    expected, _ = Fabric.generate("ft648").inject_faults(links=5, switches=1, seed=3)
    expected.assign_lids(lmc=2)
    # The 18 CAs of a removed leaf get no LID: 630 x 4 LIDs from 4, then the switches.
    assert expected.max_lid == 4 + 630 * 4 + 50 - 1
    assert f"max LID {expected.max_lid} ({expected.lft_blocks} LFT blocks per switch)" in out
    assert Fabric.read(path).topology_difference(expected) is None


def test_generate_to_stdout(capsys):
    status, out, err = run(capsys, "topo", "generate", "8-ary-2", "-o", "-", "--format", "ibsim")
    assert status == 0
    assert out.count("Switch") == 16 and "64 CAs, 16 switches" in err
    assert Fabric.from_text(out, "ibsim").num_links == Fabric.generate("8-ary-2").num_links


def test_info_reads_files_and_ranks_them(capsys, tmp_path):
    path = tmp_path / "tree.topo"
    Fabric.generate("ft5832").write(path)
    status, out, _ = run(capsys, "topo", "info", str(path), "--json")
    info = json.loads(out)
    assert status == 0
    assert [(lvl["rank"], lvl["switches"]) for lvl in info["levels"]] == [(0, 324), (1, 324), (2, 324)]
    assert info["lft_blocks_per_switch"] == 107


def test_info_of_the_fixtures(capsys, interop_dir):
    for name in ["ibnetdiscover-example.txt", "ibsim-example.net"]:
        status, out, _ = run(capsys, "topo", "info", str(interop_dir / name), "--json")
        info = json.loads(out)
        assert status == 0 and (info["cas"], info["switches"], info["links"]) == (4, 2, 6), name


def test_convert(capsys, tmp_path, interop_dir):
    out_path = tmp_path / "example.net"
    status, out, _ = run(capsys, "topo", "convert", str(interop_dir / "ibnetdiscover-example.txt"), str(out_path),
                         "--from", "ibnetdiscover")
    assert status == 0 and "(ibnetdiscover) -> " in out and "(ibsim)" in out
    back = Fabric.read(out_path)
    assert (back.num_cas, back.num_switches, back.num_links) == (4, 2, 6)


def test_run_writes_every_format(capsys, tmp_path):
    status, out, _ = run(capsys, "run", "--out", str(tmp_path), "--preset", "ft648", "--quick", "--scheduler", "inline",
                         "--report", str(tmp_path / "report"))
    assert status == 0
    assert "ft648: XGFT(2;18,36;1,18)" in out
    for ext, fmt in [("ibcf", "native"), ("topo", "ibnetdiscover"), ("net", "ibsim")]:
        path = tmp_path / f"ft648.{ext}"
        assert path.stat().st_size > 0
        assert f"wrote {path} ({fmt}," in out
        assert "read back: 648 CAs, 54 switches, 1296 links" in out
    # the tour: physical and virtual routing verified, migrations compared, the report written
    assert "verified: 419,256 of 419,256 CA pairs reachable, credit loops: none" in out
    assert "648 hypervisors x 4 VFs, 1296 VMs (50% of VF slots)" in out
    assert "10 random live migrations" in out and "moved VMs unreachable: 0" in out
    # then one live ItRC migration on ibsim with ibcloud's SM (4-ary-2-full, 2 VFs), read back
    live = next(line for line in out.splitlines() if line.startswith("live migration on ibsim"))
    assert "with ItRC, switch SMPs observed 24 == planned 24" in live, live
    assert "read back equal to the model's, VM reachable at LID" in live, live
    assert "live migration on ibsim" in (tmp_path / "report" / "index.html").read_text()
    assert f"report: {(tmp_path / 'report' / 'index.html').resolve()}" in out


def test_run_says_clearly_when_ibsim_cannot_start(capsys, tmp_path, monkeypatch):
    fake = tmp_path / "bin" / "ibsim"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'no fabric here' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    status, out, err = run(capsys, "run", "--out", str(tmp_path / "o"), "--preset", "4-ary-2-full", "--quick",
                           "--scheduler", "inline", "--report", str(tmp_path / "report"))
    assert status == ExitStatus.FAILURE == 1
    assert "ibcloud: the live migration on ibsim could not run: ibsim exited with 3" in err, err
    assert "no fabric here" in err and "--no-live" in err


# -- bad input: status 2, a message naming the culprit, no traceback ----------


def test_nonexistent_file(capsys, tmp_path):
    missing = tmp_path / "nonexistent.topo"
    assert_error(run(capsys, "topo", "info", str(missing)), str(missing), "No such file")
    assert_error(run(capsys, "topo", "convert", str(missing), str(tmp_path / "x.net")), str(missing))


def test_unknown_preset(capsys):
    assert_error(run(capsys, "topo", "info", "ft999"), "unknown preset 'ft999'", "ft648")
    assert_error(run(capsys, "topo", "generate", "ft999"), "ft999")
    assert_error(run(capsys, "run", "--preset", "ft999", "--out", "/nonexistent/never-created"), "ft999")


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [("XGFT(2;4,4;1)", "2, 1 and 2 entries"), ("XGFT(2;4,4;1,0)", "at least 1"), ("XGFT(2;4,x;1,2)", "'x'"),
     ("PGFT(2;4,4;1,2)", "4 ';'-separated fields"), ("XGFT(3;100,100,10;1,1,1)", "49151"), ("0-ary-3", "at least 1")],
)
def test_bad_xgft_parameters(capsys, spec, fragment):
    assert_error(run(capsys, "topo", "generate", spec), fragment)


@pytest.mark.parametrize("name", ["garbage.topo", "garbage.net", "garbage.ibcf", "garbage.dat"])
def test_garbage_file(capsys, tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"\x7fELF\x02\x01 garbage [[[ \"unterminated\n" * 3)
    assert_error(run(capsys, "topo", "info", str(path)), str(path))
    assert_error(run(capsys, "topo", "convert", str(path), str(tmp_path / "out.net")), str(path))


def test_bad_options(capsys, tmp_path):
    assert_error(run(capsys, "topo", "generate", "ft324", "--lmc", "8"), "--lmc", "0 to 7")
    assert_error(run(capsys, "topo", "generate", "ft324", "--radix", "0"), "--radix")
    assert_error(run(capsys, "topo", "generate", "ft324", "--fail-links", "-1"), "--fail-links")
    assert_error(run(capsys, "topo", "generate", "ft324", "--format", "dot"), "'dot'")
    assert_error(run(capsys, "topo", "generate", "ft324", "--format", "subnet-lst"), "subnet-lst")
    assert_error(run(capsys, "topo", "generate", "ft324", "--rate", "4xQQR"), "QQR")
    assert_error(run(capsys, "topo", "generate", "ft324", "--fail-switches", "37"), "37 switches")
    assert_error(run(capsys, "topo", "generate", "ft324", "-o", str(tmp_path / "x.txt")), "x.txt")
    assert_error(run(capsys, "topo", "generate", "ft324", "-o", str(tmp_path / "no" / "x.topo")), "No such file")
    assert_error(run(capsys, "topo", "generate", "ft324", "-o", "-", "--format", "native"), "binary")
    assert_error(run(capsys, "topo", "convert", "a.topo", str(tmp_path / "x.lst")), "a.topo")


def test_console_script_exit_status(tmp_path):
    import subprocess
    import sys

    missing = tmp_path / "missing.net"
    proc = subprocess.run(
        [sys.executable, "-m", "ibcloud.cli.main", "topo", "info", str(missing)],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr == f"ibcloud: error: {missing}: No such file or directory\n"
    assert proc.stdout == ""
