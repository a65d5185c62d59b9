"""Regression tests of issue 20: every case it lists is a clear error (exit 2,
``ibcloud: error: ...`` naming the file or option), never a traceback, hang
or silently wrong answer; files are written safely; the command line follows
docs/cli.md. The damaged-input matrix itself is tests/fuzz."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ibcloud.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def assert_clear(status, err, *names):
    assert status == 2, err
    assert err.startswith("ibcloud: error:") or "error: argument" in err, err
    assert "Traceback" not in err and "\x1b" not in err
    for name in names:
        assert name in err, err


# -- tracebacks the issue lists ------------------------------------------------------------------


def test_random_bytes_as_campaign_file(tmp_path, capsys):
    f = tmp_path / "g.toml"
    f.write_bytes(os.urandom(4096))
    assert_clear(*run(capsys, "campaign", "check", f)[::2], "g.toml")


@pytest.mark.parametrize("option", ["--roots", "--cn-guids"])
def test_non_utf8_guid_lists(tmp_path, capsys, option):
    f = tmp_path / "guids.txt"
    f.write_bytes(b"0x0002c90200000001\n\xff\xfe\n")
    status, _, err = run(capsys, "route", "4-ary-2-full", "--engine", "updn" if option == "--roots" else "ftree",
                         option, f)
    assert_clear(status, err, "guids.txt:2", "not UTF-8")


@pytest.mark.parametrize("option", ["--events", "--config"])
@pytest.mark.parametrize("content", [b"", b"{not json", b"\x00\xff\x80"])
def test_sim_json_files(tmp_path, capsys, option, content):
    f = tmp_path / "x.json"
    f.write_bytes(content)
    status, _, err = run(capsys, "sim", "4-ary-2-full", "--route", "ftree", "--traffic", "uniform:load=0.5",
                         "--time", "1us", option, f)
    assert_clear(status, err, "x.json")


def test_binary_traffic_json(tmp_path, capsys):
    f = tmp_path / "t.json"
    f.write_bytes(bytes(range(256)) * 4)
    status, _, err = run(capsys, "sim", "4-ary-2-full", "--route", "ftree", "--traffic", f, "--time", "1us")
    assert_clear(status, err, "t.json")


@pytest.mark.parametrize("argv, option", [
    (["analyze", "ft324", "--route", "ftree", "--runs", "-1"], "--runs"),
    (["sa", "resolve", "ft324", "--route", "ftree", "1", "99999"], "LID"),
    (["campaign", "run", "docs/examples/campaign.toml", "-o", "W", "--workers", "-1"], "--workers"),
    (["run", "--quick", "--workers", "-1"], "--workers"),
    (["sim", "4-ary-2-full", "--route", "ftree", "--traffic", "uniform", "--seed", "1e30"], "--seed"),
])
def test_integer_ranges_name_the_parameter(tmp_path, monkeypatch, capsys, argv, option):
    monkeypatch.chdir(tmp_path)
    status, _, err = run(capsys, *argv)
    assert status == 2 and option in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())  # refused before anything was written


@pytest.mark.parametrize("load", ["1e20", "nan", "inf", "-1"])
def test_sim_loads_that_cannot_run(capsys, load):
    status, _, err = run(capsys, "sim", "4-ary-2-full", "--route", "ftree", "--traffic", f"uniform:load={load}",
                         "--time", "10us")
    assert_clear(status, err, "load")


def test_truncated_parquet_in_a_store(tmp_path, capsys):
    from ibcloud.campaign import Store, parse, run as run_campaign

    c = parse('[campaign]\nname = "t"\n[[experiment]]\nkind = "route"\ntopology = "4-ary-2-full"\n'
              'engine = ["ftree", "minhop"]\n', "c.toml")
    run_campaign(c, tmp_path / "s", scheduler="inline", progress=False)
    victim = sorted((tmp_path / "s" / "results").glob("*.parquet"))[0]
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])
    status, _, err = run(capsys, "results", "query", tmp_path / "s", "select count(*) from results")
    assert_clear(status, err, victim.name, "damaged")
    status, _, err = run(capsys, "report", tmp_path / "s", "-o", tmp_path / "rep")
    assert_clear(status, err, victim.name)
    assert not (tmp_path / "rep").exists()
    # a resume reruns the damaged task instead of counting it as done
    summary = run_campaign(c, tmp_path / "s", scheduler="inline", progress=False)
    assert (summary.ran, summary.skipped) == (1, 1)
    assert Store(tmp_path / "s").damaged() == []


@pytest.mark.parametrize("where", [0.1, 0.5, 0.9])
def test_parquet_damaged_in_the_middle_is_not_done(tmp_path, where):
    # Both ends intact (magic, footer length), bytes of the column data
    # inverted: the row groups no longer read (page checksums), so the task
    # counts as unfinished and a resume runs it again.
    from ibcloud.campaign import Store, parse, run as run_campaign

    c = parse('[campaign]\nname = "t"\n[[experiment]]\nkind = "route"\ntopology = "4-ary-2-full"\n'
              'engine = "ftree"\n', "c.toml")
    run_campaign(c, tmp_path / "s", scheduler="inline", progress=False)
    store = Store(tmp_path / "s")
    [victim] = (tmp_path / "s" / "results").glob("*.parquet")
    assert store.finished() == {victim.stem}
    data = bytearray(victim.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    at = 4 + int((len(data) - 8 - footer - 4) * where)
    data[at:at + 4] = bytes(b ^ 0xFF for b in data[at:at + 4])
    victim.write_bytes(bytes(data))
    assert data[:4] == data[-4:] == b"PAR1"
    assert store.finished() == set() and store.damaged() == [victim]
    summary = run_campaign(c, tmp_path / "s", scheduler="inline", progress=False)
    assert (summary.ran, summary.skipped) == (1, 0)
    assert store.finished() == {victim.stem}


def test_huge_csv_field_is_bounded(tmp_path, capsys):
    f = tmp_path / "long.csv"
    f.write_text("vm_id,vcpus,minute_index,cpu_pct_of_one_core\n" + "a" * 3_000_000 + ",4,0,10\n")
    status, _, err = run(capsys, "consolidate", f, "--cap", "10")
    assert_clear(status, err, "long.csv:2")
    assert len(err) < 1000


def test_python_api_overflow_is_a_clear_error(capsys):
    status, _, err = run(capsys, "topo", "generate", "ft324", "--radix", "-1")
    assert status == 2 and "--radix" in err


# -- silently wrong ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["e.topo", "e.net", "e.lst"])
def test_empty_fabric_file_is_not_a_fabric(tmp_path, capsys, name):
    f = tmp_path / name
    f.write_text("# nothing here\n")
    status, out, err = run(capsys, "verify", f, "--route", "minhop")
    assert_clear(status, err, name, "no nodes")
    assert "reachable" not in out


@pytest.mark.parametrize("text, problem", [
    ("Default=0x7fff : ALL ;\nbig=99999999999999999999 : ALL ;\n", "above 0xFFFF"),
    ("Default=0x7fff : ALL ;\nbig=0x10000 : ALL ;\n", "above 0xFFFF"),
    ("Default=0x7fff : ALL ;\ncut=0x8002 : 0x10", "no closing ';'"),
    ("", "empty"),
])
def test_partitions_conf_keys_and_truncation(tmp_path, capsys, text, problem):
    f = tmp_path / "partitions.conf"
    f.write_text(text)
    status, _, err = run(capsys, "partitions", "parse", f)
    assert_clear(status, err, "partitions.conf", problem)


def test_csv_with_byte_order_mark_is_read(tmp_path, capsys):
    plain = (ROOT / "fixtures" / "traces" / "plain.csv").read_bytes()
    f = tmp_path / "bom.csv"
    f.write_bytes(b"\xef\xbb\xbf" + plain)
    status, out, err = run(capsys, "consolidate", f, "--cap", "1000", "--cores", "4", "--json")
    assert status in (0, 1), err
    assert json.loads(out)["hosts"]


# -- hostile input reaches the terminal ----------------------------------------------------------


def test_error_quotes_a_bounded_escaped_excerpt(tmp_path, capsys):
    f = tmp_path / "evil.topo"
    f.write_text("\x1b]0;pwned\x07" + "A" * 1_000_000 + "\n")
    status, _, err = run(capsys, "topo", "info", f)
    assert_clear(status, err, "evil.topo:1")
    assert len(err) < 2500 and "\x07" not in err and "\\x1b" in err


def test_rust_and_python_quote_alike():
    from ibcloud.safeio import excerpt

    assert excerpt("a\x1b[2J") == "'a\\x1b[2J'"
    assert excerpt("x" * 10_000).endswith("... (10,000 characters)")


# -- data safety ---------------------------------------------------------------------------------


def test_atomic_write_keeps_the_old_file_when_the_writer_fails(tmp_path):
    from ibcloud.safeio import atomic_path

    target = tmp_path / "tables.dump"
    target.write_text("good\n")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert target.read_text() == "good\n" and [p.name for p in tmp_path.iterdir()] == ["tables.dump"]


def test_rust_writers_replace_atomically(tmp_path):
    from ibcloud import Fabric, route

    path = tmp_path / "x.dump"
    path.write_text("old")
    route(Fabric.generate("4-ary-2-full"), "ftree").tables.write_opensm(path)
    assert path.read_text().startswith("Unicast lids") and [p.name for p in tmp_path.iterdir()] == ["x.dump"]


def test_run_does_not_delete_files_it_did_not_write(tmp_path, capsys):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "thesis.csv").write_text("x")
    status, _, err = run(capsys, "run", "--quick", "--preset", "4-ary-2-full", "--scheduler", "inline",
                         "--out", tmp_path, "--report", tmp_path / "report")
    assert_clear(status, err, "thesis.csv", "--force")
    assert (tmp_path / "results" / "thesis.csv").read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]


def test_second_campaign_into_one_store_is_refused(tmp_path, capsys):
    for name, status in (("first", 0), ("second", 2)):
        f = tmp_path / f"{name}.toml"
        f.write_text(f'[campaign]\nname = "{name}"\n[[experiment]]\nkind = "route"\ntopology = "4-ary-2-full"\n')
        got, _, err = run(capsys, "campaign", "run", f, "-o", tmp_path / "store", "--scheduler", "inline")
        assert got == status, err
    assert "holds the results of campaign 'first'" in err


def test_report_removes_only_the_plots_it_made(tmp_path):
    from ibcloud.campaign import parse, render, run as run_campaign

    c = parse('[campaign]\nname = "r"\n[[experiment]]\nname = "e"\nkind = "route"\ntopology = "4-ary-2-full"\n'
              'engine = ["ftree", "minhop"]\n', "c.toml")
    run_campaign(c, tmp_path / "s", scheduler="inline", progress=False)
    out = tmp_path / "rep"
    render(tmp_path / "s", out)
    made = sorted(p.name for p in (out / "img").iterdir())
    assert made == ["00-e-route.png"]
    (out / "img" / "mine.png").write_bytes(b"user's")
    (out / "img" / "00-e-route.png").rename(out / "img" / "00-old-route.png")  # as if an earlier render made it
    manifest = json.loads((out / ".ibcloud-report.json").read_text())
    manifest["files"].append("img/00-old-route.png")
    (out / ".ibcloud-report.json").write_text(json.dumps(manifest))
    render(tmp_path / "s", out)
    assert sorted(p.name for p in (out / "img").iterdir()) == ["00-e-route.png", "mine.png"]


def test_report_refuses_a_foreign_index(tmp_path):
    from ibcloud.campaign import render
    from ibcloud.exceptions import CampaignError

    (tmp_path / "rep").mkdir()
    (tmp_path / "rep" / "index.html").write_text("<html>my page</html>")
    with pytest.raises(CampaignError, match="not written by ibcloud"):
        render(tmp_path / "s", tmp_path / "rep")
    assert (tmp_path / "rep" / "index.html").read_text() == "<html>my page</html>"


# -- one command line ----------------------------------------------------------------------------


def _parsers(parser, path=()):
    import argparse

    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, path + (name,))


def test_help_texts_have_no_doctests_and_outputs_are_dash_o():
    for path, parser in _parsers(build_parser()):
        text = parser.format_help()
        assert ">>>" not in text, path
        assert "--output " not in text and "--write " not in text, path


def test_old_spellings_still_work_with_a_warning(tmp_path, capsys):
    status, _, err = run(capsys, "topo", "generate", "4-ary-2-full", "--output", tmp_path / "a.net")
    assert status == 0 and (tmp_path / "a.net").exists() and "deprecated" in err
    status, _, err = run(capsys, "topo", "generate", "4-ary-2-full", "-o", tmp_path / "b.net",
                         "--output-format", "ibsim")
    assert status == 0 and "deprecated" not in err


def test_route_list_json(capsys):
    status, out, _ = run(capsys, "route", "--list", "--json")
    assert status == 0 and {e["engine"] for e in json.loads(out)} >= {"ftree", "minhop", "updn"}


def test_version_and_help_import_no_heavy_library():
    # `ibcloud --version`/`--help` fast comes from what they import (timed in
    # docs/cli.md; never timed here): no pandas, numpy, rich, matplotlib or
    # pyarrow even with every subcommand registered, and for the top-level
    # --version and --help not even the Rust core or a subcommand module.
    heavy = "('pandas', 'numpy', 'rich', 'matplotlib', 'pyarrow')"
    code = ("import sys; from ibcloud.cli.main import build_parser; build_parser(); "
            f"print(sorted(m for m in {heavy} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    for flag in ("--version", "--help"):
        code = ("import sys\nfrom ibcloud.cli.main import main\n"
                f"status = main([{flag!r}])\n"
                "print(status, sorted(m for m in sys.modules if m.split('.')[0] in "
                "('ibcloud', 'pandas', 'numpy', 'rich', 'matplotlib', 'pyarrow', 'dask', 'duckdb')), file=sys.stderr)")
        err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stderr
        status, modules = err.strip().split(" ", 1)
        light = {"ibcloud", "ibcloud._version", "ibcloud.cli", "ibcloud.cli._args", "ibcloud.cli._outputs",
                 "ibcloud.cli.main"}
        assert status == "0" and set(eval(modules)) <= light, (flag, err)  # no _native, no numpy, no subcommand


def test_version_without_the_core_is_the_cores():
    from ibcloud._native import __version__
    from ibcloud.cli.main import version

    assert version() == __version__


def test_stub_commands_match_the_real_ones():
    # main() registers only the command being run; the others are stubs
    # whose name and help must be the real ones (ibcloud --help lists them).
    import argparse

    from ibcloud.cli.main import COMMANDS

    def listed(parser):
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return [(c.dest, c.help) for c in sub._choices_actions]

    assert listed(build_parser(only=None)) == listed(build_parser())
    assert [n for _, names in COMMANDS for n in names] == [n for n, _ in listed(build_parser())]
    assert main(["topo", "info", "4-ary-2-full", "--json"]) == 0  # the real parser of the command ran


def test_lazy_package_keeps_its_names():
    import ibcloud
    import ibcloud.formats  # noqa: F401  (the submodule must not replace the function of the same name)
    import ibcloud.verify  # noqa: F401

    assert callable(ibcloud.formats) and callable(ibcloud.verify) and callable(ibcloud.route)
    assert {"Fabric", "IbcloudError", "__version__"} <= set(dir(ibcloud))
    assert ibcloud.campaign.__name__ == "ibcloud.campaign"
    with pytest.raises(AttributeError):
        ibcloud.no_such_name


def test_campaign_progress_without_a_terminal(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("IBCLOUD_PROGRESS_SECONDS", "0.01")
    f = tmp_path / "p.toml"
    f.write_text('[campaign]\nname = "p"\n[[experiment]]\nkind = "route"\ntopology = "4-ary-2-full"\n')
    status, _, err = run(capsys, "campaign", "run", f, "-o", tmp_path / "s", "--scheduler", "inline")
    assert status == 0
    assert "campaign p: 0 of 1 started" in err and "campaign p: 1 of 1 done" in err and "elapsed" in err


# -- routing files ------------------------------------------------------------------------------


def test_unknown_root_guid_is_reported(tmp_path, capsys):
    roots = tmp_path / "roots.txt"
    roots.write_text("0x1234\n")
    status, _, err = run(capsys, "route", "4-ary-2-full", "--engine", "ftree", "--roots", roots)
    assert status == 0 and "0x0000000000001234 is not a switch of the fabric" in err and "AB24" in err


def test_fabric_without_lids_gets_them_on_request(tmp_path, capsys):
    from ibcloud import Fabric

    Fabric.generate("4-ary-2-full").write(tmp_path / "x.net")
    text = (tmp_path / "x.net").read_text()
    (tmp_path / "nolids.net").write_text("\n".join(line.split("\t\t# lid")[0] for line in text.splitlines()))
    status, _, err = run(capsys, "route", tmp_path / "nolids.net", "--engine", "ftree")
    assert_clear(status, err, "has no LID", "--assign-lids")
    status, out, err = run(capsys, "route", tmp_path / "nolids.net", "--engine", "ftree", "--assign-lids", "opensm")
    assert status == 0, err


def test_lft_dump_streams_and_refuses_an_unknown_port_guid(tmp_path, capsys):
    dump = tmp_path / "opensm-lfts.dump"
    assert run(capsys, "route", "4-ary-2-full", "--engine", "ftree", "-o", dump)[0] == 0
    text = dump.read_text()
    assert run(capsys, "verify", "4-ary-2-full", "--lfts", dump)[0] == 0
    dump.write_text(text.replace("portguid 0x0", "portguid 0xf", 1))
    status, _, err = run(capsys, "verify", "4-ary-2-full", "--lfts", dump)
    assert_clear(status, err, "opensm-lfts.dump:", "not a port of the fabric")


def test_lft_dump_port_the_switch_lacks_is_a_failed_route_for_verify(tmp_path, capsys):
    # docs/routing.md: verify reports such an entry as a failed route (exit 1);
    # analyze and sim, which need every route, refuse it naming file and line.
    import re

    dump = tmp_path / "opensm-lfts.dump"
    assert run(capsys, "route", "4-ary-2-full", "--engine", "ftree", "-o", dump)[0] == 0
    lines = dump.read_text().splitlines(keepends=True)
    no = next(i for i, line in enumerate(lines) if re.match(r"0x[0-9a-f]{4} 0*[1-9]\d* ", line))
    lines[no] = re.sub(r"^(0x[0-9a-f]{4}) \d+", r"\1 200", lines[no])
    dump.write_text("".join(lines))
    status, out, err = run(capsys, "verify", "4-ary-2-full", "--lfts", dump, "--json")
    assert status == 1, err
    assert "Traceback" not in err
    report = json.loads(out)
    assert report["failures"]["no_such_port"] > 0 and report["reachable"] < report["pairs"]
    assert report["first_failures"][0]["path"][-1]["port"] == 200
    status, out, _ = run(capsys, "verify", "4-ary-2-full", "--lfts", dump)
    assert status == 1 and "port the switch does not have" in out, out
    for argv in (["analyze", "4-ary-2-full", "--lfts", dump],
                 ["sim", "4-ary-2-full", "--lfts", dump, "--traffic", "uniform:load=0.5", "--time", "1us"]):
        status, _, err = run(capsys, *argv)
        assert_clear(status, err, f"opensm-lfts.dump:{no + 1}", "port 200 does not exist")


# -- integer arguments of the Python API ---------------------------------------------------------

# Python-only integers (never handed to the Rust core), with the reason.
_PYTHON_ONLY_INTS = {
    "ibcloud.safeio.excerpt": "a length for Python string slicing",
    "ibcloud.safeio.bounded": "a length for Python reads",
    "ibcloud.progress.Reporter.__init__": "a count printed in progress lines",
}


# The command line is not swept here: argparse checks its numbers (_args.harden, tested above).
_NOT_YET_CHECKED = ("ibcloud.cli",)


def _public_int_parameters():
    """(qualified name, plain function, takes self/cls, parameter, annotation) for every
    parameter annotated with int of every public function and method of the ibcloud package."""
    import dataclasses
    import importlib
    import inspect
    import re

    import pkgutil

    import ibcloud

    found = []
    for info in sorted(pkgutil.walk_packages(ibcloud.__path__, prefix="ibcloud."), key=lambda i: i.name):
        if info.name.split(".")[-1].startswith("_") or info.name.startswith(_NOT_YET_CHECKED) \
                or "reproduc" in info.name:
            continue
        module = importlib.import_module(info.name)
        names = getattr(module, "__all__", [n for n in vars(module) if not n.startswith("_")])
        for name in names:
            obj = getattr(module, name)
            if getattr(obj, "__module__", None) != module.__name__:
                continue
            members = [(f"{module.__name__}.{name}", obj, False)] \
                if inspect.isfunction(obj) and name != "reproduce" else []
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if attr.startswith("_") and attr != "__init__" or attr == "reproduce":
                        continue
                    if attr == "__init__" and dataclasses.is_dataclass(obj):
                        continue  # a result record's fields, filled by ibcloud itself
                    if isinstance(member, (classmethod, staticmethod)):
                        members.append((f"{module.__name__}.{name}.{attr}", member.__func__,
                                        isinstance(member, classmethod)))
                    elif inspect.isfunction(member):
                        members.append((f"{module.__name__}.{name}.{attr}", member, True))
            for qual, fn, bound in members:
                if qual in _PYTHON_ONLY_INTS:
                    continue
                for param in inspect.signature(fn).parameters.values():
                    annotation = str(param.annotation)
                    if re.search(r"\bint\b", annotation):
                        found.append((qual, fn, bound, param.name, annotation))
    return found


def test_every_integer_parameter_of_the_python_api_is_range_checked_and_named():
    # Issue 20: Fabric.generate("ft324", radix=-1) raised a bare OverflowError
    # naming no parameter. Every int parameter of the public API, given -1
    # and 2**70 (as a scalar, or inside its sequence or dict), must raise
    # IntRangeError naming the parameter, before anything reaches Rust.
    import re

    from ibcloud.safeio import IntRangeError

    params = _public_int_parameters()
    assert len(params) >= 80, params  # the sweep found the API
    swept = {qual.split(".")[1] for qual, *_ in params}
    assert {"sa", "delay", "sm", "fabric", "analysis"} <= swept, swept  # every package with int parameters
    for qual, fn, bound, name, annotation in params:
        assert name in getattr(fn, "__ibcloud_checked_ints__", {}), f"{qual}({name}) is not @checked_ints"
        scalar = re.fullmatch(r"(Optional\[)?int\]?( \| None)?", annotation)
        low = fn.__ibcloud_checked_ints__[name][0]  # -1 is valid for some (a umad timeout: wait)
        for bad in (min(-1, low - 1), 2**70):
            value = bad if scalar else {bad: (1, 1)} if annotation.startswith("Dict") else [bad]
            args = (None,) if bound else ()
            with pytest.raises(IntRangeError, match=re.escape(name)):
                fn(*args, **{name: value})


def test_integer_errors_of_real_calls_name_the_parameter():
    from ibcloud import Fabric
    from ibcloud.safeio import IntRangeError

    with pytest.raises(IntRangeError, match=r"radix=-1 is out of range"):
        Fabric.generate("ft324", radix=-1)
    f = Fabric.generate("4-ary-2-full")
    with pytest.raises(OverflowError, match="links=2361183241434822606848"):  # old handlers still catch it
        f.inject_faults(links=2**71)
    with pytest.raises(ValueError, match="lmc=300"):  # u8 in Rust: named after the call
        f.assign_lids(lmc=300)


def test_json_on_generate_convert_run_and_report(tmp_path, capsys):
    status, out, _ = run(capsys, "topo", "generate", "4-ary-2-full", "-o", tmp_path / "a.net", "--json")
    assert status == 0 and json.loads(out)["cas"] == 32 and json.loads(out)["output"] == str(tmp_path / "a.net")
    status, out, err = run(capsys, "topo", "generate", "4-ary-2-full", "-o", "-", "--json")
    assert status == 0 and json.loads(err)["switches"] == 12 and out.startswith("#")
    status, out, _ = run(capsys, "topo", "convert", tmp_path / "a.net", tmp_path / "b.topo", "--json")
    assert status == 0 and json.loads(out)["output_format"] == "ibnetdiscover" and json.loads(out)["links"] == 64
    status, out, _ = run(capsys, "run", "--preset", "4-ary-2-full", "--quick", "--scheduler", "inline",
                         "-o", tmp_path / "out", "--report", tmp_path / "rep", "--json")
    data = json.loads(out)
    assert status == data["status"] == 0
    assert data["report"] == str(tmp_path / "rep" / "index.html")
    assert data["rows"]["physical"][0]["reachable"] == 992
    assert any(line.startswith("routed 4-ary-2-full") for line in data["lines"])
    status, out, _ = run(capsys, "report", tmp_path / "out" / "results", "-o", tmp_path / "rep2", "--json")
    data = json.loads(out)
    assert status == 0 and data["report"] == str(tmp_path / "rep2" / "index.html") and "index.html" in data["files"]


# Commands that print no summary of their own, with the reason (docs/cli.md: `--json` on every report).
_NO_JSON: dict = {}


def test_every_command_that_prints_a_summary_has_json():
    import argparse

    missing = []
    for path, parser in _parsers(build_parser()):
        if not path or any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
            continue
        options = {o for a in parser._actions for o in a.option_strings}
        if "--json" not in options and path not in _NO_JSON:
            missing.append(" ".join(path))
    assert missing == []


def test_sm_ctl_json_and_text():
    from ibcloud.cli.sm import _ctl_text

    parser = build_parser()
    assert parser.parse_args(["sm", "ctl", "s.sock", "status", "--json"]).json
    assert _ctl_text({"ok": True, "counters": {"sent": 3}}) == "ok: true\ncounters.sent: 3"


def _refuse_constant(name):
    raise AssertionError(f"{name} in a JSON document: not JSON")


def test_json_documents_have_no_nan_or_infinity():
    import numpy as np

    from ibcloud.safeio import dumps_json, finite_json

    doc = {"ratio": float("nan"), "mean": float("-inf"), "xs": (1.0, np.float64("inf"), np.float32(2.5)),
           "nested": [{"a": np.nan}], "n": 3, "s": "inf"}
    text = dumps_json(doc, indent=1)
    back = json.loads(text, parse_constant=_refuse_constant)
    assert back == {"ratio": None, "mean": None, "xs": [1.0, None, 2.5], "nested": [{"a": None}], "n": 3, "s": "inf"}
    assert finite_json(doc)["xs"][2] == 2.5
    # a caller's `default` that yields a non-finite float is caught as well
    assert dumps_json({"x": object()}, default=lambda _: float("nan")) == '{"x": null}'


def test_reproduce_json_carries_the_scoreboard_rows(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = ["reproduce", "sa-cache", "--no-flood", "--round-seconds", "0.5", "--no-plots", "--json"]
    status, out, err = run(capsys, *argv)
    # the reproduction's own document, with the scoreboard rows added; strict JSON (no NaN / Infinity)
    data = json.loads(out, parse_constant=_refuse_constant)
    assert status == data["status"] and status in (0, 1), err
    assert data["checks"] and data["claims"] and len(data["claims"]) == len(data["checks"])
    assert {"id", "kind", "verdict", "paper_value", "tolerance", "ours"} <= set(data["claims"][0])
    assert data["totals"]["overall"]["claims"] == len(data["claims"])
    # again into the folder it wrote: allowed; into a folder of the user's: refused
    assert run(capsys, *argv)[0] == status
    # a parent folder holding only what reproductions wrote (as `reproduce all` finds out/reproductions)
    from ibcloud.cli._outputs import check_folder

    check_folder(tmp_path / "out" / "reproductions", "reproduce")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.csv").write_text("x")
    status, _, err = run(capsys, *argv, "--out", tmp_path / "mine")
    assert_clear(status, err, "thesis.csv", "--force")


# -- outputs never replace what the command did not create (docs/cli.md) -------------------------


def _walk(parser, path=()):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:
                    seen.add(id(sub))
                    yield from _walk(sub, path + (name,))
        else:
            yield path, parser, action


def test_every_output_option_is_listed_and_has_force():
    import argparse
    import re

    from ibcloud.cli._outputs import OUTPUTS

    actions = list(_walk(build_parser()))
    dests = {(path, a.dest) for path, _, a in actions}
    for path, outputs in OUTPUTS.items():
        for dest in outputs:
            assert (path, dest) in dests, f"OUTPUTS names {' '.join(path)} {dest}, which does not exist"
        assert (path, "force") in dests, f"{' '.join(path)} writes files but has no --force"
    # an option whose help says it writes or saves must be listed
    unlisted = [f"{' '.join(path)} {'/'.join(a.option_strings) or a.dest}" for path, _, a in actions
                if a.help not in (None, argparse.SUPPRESS) and re.search(r"\b(write|save)", a.help, re.I)
                and a.dest not in OUTPUTS.get(path, {}) and a.dest not in ("force", "json", "no_plots")]
    assert unlisted == []


@pytest.mark.parametrize("argv, name", [
    (["topo", "generate", "4-ary-2-full", "-o", "{}"], "t.net"),
    (["topo", "convert", "{fabric}", "{}"], "t.topo"),
    (["route", "4-ary-2-full", "--engine", "ftree", "-o", "{}"], "opensm-lfts.dump"),
    (["route", "4-ary-2-full", "--engine", "dfsssp", "--path-sls", "{}"], "sls.dump"),  # refused up front
    (["analyze", "4-ary-2-full", "--route", "ftree", "--runs", "2", "--plot", "{}"], "a.png"),
    (["analyze", "4-ary-2-full", "--route", "ftree", "--runs", "2", "--csv", "{prefix}"], "p-links.csv"),
    (["vswitch", "build", "4-ary-2-full", "--vfs", "2", "-o", "{}"], "v.net"),
    (["migrate-sim", "4-ary-2-full", "--population", "0.25", "--steps", "1", "-o", "{}"], "m.csv"),
    (["sm", "run", "--once", "--summary", "{}"], "summary.json"),  # refused before it looks for a port
])
def test_existing_output_file_is_refused_without_force(tmp_path, capsys, argv, name):
    # Issue 20: `-o FILE` silently replaced an existing file.
    fabric = tmp_path / "f.net"
    main(["topo", "generate", "4-ary-2-full", "-o", str(fabric)])
    target = tmp_path / name
    target.write_text("the user's thesis\n")
    argv = [a.format(target, fabric=fabric, prefix=tmp_path / "p") for a in argv]
    capsys.readouterr()
    status, _, err = run(capsys, *argv)
    assert_clear(status, err, str(target), "already exists", "--force")
    assert target.read_text() == "the user's thesis\n"
    if "--summary" not in argv and "--path-sls" not in argv:  # (no SM port here; SL 0 only on this tree)
        status, _, err = run(capsys, *argv, "--force")
        assert status == 0, err
        assert target.read_bytes() != b"the user's thesis\n"


def test_special_files_are_written_in_place(tmp_path, capsys):
    # A FIFO (like /dev/null) exists but is not a regular file: written into,
    # never refused and never renamed over (as root that would replace a device node).
    import threading

    fifo = tmp_path / "pipe.net"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    status, _, err = run(capsys, "topo", "generate", "4-ary-2-full", "-o", fifo)
    reader.join(timeout=60)
    assert status == 0, err
    assert fifo.is_fifo() and got and got[0].count(b"Switch") == 12


def test_folder_outputs_refuse_foreign_files_and_rerun_into_their_own(tmp_path, capsys):
    argv = ["sim", "4-ary-2-full", "--route", "ftree", "--traffic", "uniform:load=0.3", "--time", "2us"]
    mine = tmp_path / "thesis"
    mine.mkdir()
    (mine / "chapter1.tex").write_text("x")
    status, _, err = run(capsys, *argv, "--out", mine)
    assert_clear(status, err, "chapter1.tex", "--force")
    assert sorted(p.name for p in mine.iterdir()) == ["chapter1.tex"]
    out = tmp_path / "sim"
    assert run(capsys, *argv, "--out", out)[0] == 0
    assert run(capsys, *argv, "--out", out)[0] == 0  # its own folder: no --force needed
    assert run(capsys, *argv, "--out", mine, "--force")[0] == 0
    assert (mine / "chapter1.tex").read_text() == "x"


def test_run_does_not_replace_fabric_files_it_did_not_write(tmp_path, capsys):
    # `run --out D` writes D/PRESET.ibcf/.topo/.net/.guid2lid: a user's file of that name is kept.
    out = tmp_path / "D"
    out.mkdir()
    (out / "4-ary-2-full.topo").write_text("my fabric\n")
    argv = ["run", "--preset", "4-ary-2-full", "--quick", "--scheduler", "inline", "--no-live", "-o", out,
            "--report", tmp_path / "rep"]
    status, _, err = run(capsys, *argv)
    assert_clear(status, err, "4-ary-2-full.topo", "--force")
    assert (out / "4-ary-2-full.topo").read_text() == "my fabric\n"
    assert run(capsys, *argv, "--force")[0] == 0
    assert run(capsys, *argv)[0] == 0  # its own folder now
