"""G's DRX layouts (ibcloud.host.drx_layouts) and the options of
``ibcloud reproduce drx``: VM counts per host, staggered starts, the time
scale, and bad input as clear errors (exit 2)."""

from __future__ import annotations

import pytest

from ibcloud.exceptions import ParseError
from ibcloud.host.drx_layouts import G_TIMES, counts, ensembles, scenario, sensitivity
from ibcloud.host.drx_reproduction import controller


def _per_host(sc):
    out = {}
    for v in sc["vms"]:
        kind = "nectere" if v["name"].startswith("nectere") else v["name"].split("-", 1)[1].rstrip("0123456789")
        out.setdefault(v["host"], {}).setdefault(kind, 0)
        out[v["host"]][kind] += 1
    return out


def test_symmetric_has_4_hadoop_and_4_linpack_per_host_and_nectere_on_two_hosts():
    sc = scenario("symmetric", hosts=8)
    per = _per_host(sc)
    assert all(per[f"h{h}"]["hadoop"] == 4 and per[f"h{h}"]["linpack"] == 4 for h in range(8))
    assert per["h0"]["nectere"] == 1 and per["h1"]["nectere"] == 1
    assert sum(1 for w in sc["workloads"] if w["kind"] == "terasort") == 32
    assert sum(1 for w in sc["workloads"] if w["kind"] == "hpl") == 32
    # Every VM's peer is on another host (receiver-side paths exist), and no host exceeds its VFs.
    host = {v["name"]: v["host"] for v in sc["vms"]}
    assert all(host[w["vm"]] != host[w["peer"]] for w in sc["workloads"])
    assert max(sum(per[h].values()) for h in per) <= 16


def test_asymmetric_layouts_load_the_nectere_hosts_up_to_the_vfs():
    per = _per_host(scenario("asym1", hosts=8))
    assert per["h0"]["hadoop"] + per["h0"]["linpack"] == 15 and sum(per["h0"].values()) == 16
    assert per["h5"] == {"hadoop": 4, "linpack": 4}
    per = _per_host(scenario("asym2", hosts=8))
    assert per["h1"] == {"hadoop": 1, "linpack": 1, "nectere": 1}
    assert counts("asym1", hosts=2, interferers=6) == [{"hadoop": 3, "linpack": 3}] * 2


def test_staggered_starts_and_the_time_scale():
    for scale in (0.1, 0.5):
        sc = scenario("symmetric", hosts=2, scale=scale)
        start = {w["kind"]: float(w["start"][:-1]) for w in sc["workloads"]}
        assert start["terasort"] == 0.0
        assert start["hpl"] == pytest.approx(G_TIMES["linpack"] * scale)
        assert start["nectere"] == pytest.approx(G_TIMES["nectere"] * scale)
        assert start["terasort"] < start["hpl"] < start["nectere"]
        c = controller("eb-dist", sc, scale, 1000.0)
        assert float(c["epoch"][:-1]) == pytest.approx(60 * scale)
        assert float(c["interval"][:-1]) == pytest.approx(scale)


def test_ensembles_and_sensitivity_setups():
    e = ensembles(scenario("asym2", hosts=3))
    assert len(e["hadoop"]["vms"]) == 1 + 1 + 4 and e["nectere"]["vms"] == ["nectere-client", "nectere-server"]
    assert e["hadoop"]["io-min"] == pytest.approx(0.25 * e["hadoop"]["g"])
    a = ensembles(sensitivity("a"))
    assert sorted(a) == ["linpacka", "linpackb", "nectere"]


@pytest.mark.parametrize("call, message", [
    (lambda: scenario("ring"), "unknown layout 'ring'"),
    (lambda: scenario(scale=0), "scale must lie in"),
    (lambda: scenario(scale=float("nan")), "scale must lie in"),
    (lambda: counts("asym1", interferers=16), "interferers"),
    (lambda: scenario(hosts=1), "hosts"),
    (lambda: sensitivity("z"), "setup must be"),
    (lambda: controller("eb-dist", scenario(hosts=2), 0.1, 1.0, mode="x"), "mode must be"),
])
def test_bad_options_are_clear_errors(call, message):
    with pytest.raises((ParseError, ValueError, TypeError)) as e:
        call()
    assert message in str(e.value)


@pytest.mark.parametrize("argv", [["--hosts", "1"], ["--size", "huge"], ["--hosts", "x"], ["--hosts", "40"]])
def test_cli_bad_options_exit_2(argv, capsys, tmp_path, monkeypatch):
    from ibcloud.cli.main import main

    monkeypatch.chdir(tmp_path)  # the runner's default output folder is ./out/reproductions/drx

    assert main(["reproduce", "drx", *argv]) == 2
    assert "error" in capsys.readouterr().err
