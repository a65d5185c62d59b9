"""``ibcloud reproduce sphinx`` (G R12-R16): scenario building, the BP
weights, the static ``cc-delay`` controller, bad input, and the tour size."""

from __future__ import annotations

import pytest

from ibcloud.cli.main import main
from ibcloud.host import run as run_host
from ibcloud.host.sphinx_reproduction import bp_weights, reproduce, scenario


def test_bp_weights_are_the_inverse_of_the_target():
    assert bp_weights(0.25) == (128, 32)
    assert bp_weights(4.0) == (32, 128)
    with pytest.raises(ValueError, match="positive"):
        bp_weights(0.0)


def test_a_static_delay_slows_memcached_only_by_the_cct():
    plain = run_host(scenario(10, nectere=False))
    slow = run_host(scenario(10, nectere=False, delay=64))
    lat = lambda r: float(r.latencies().query("vm == 'mc'").latency_us.iloc[5:].mean())  # noqa: E731
    # 127 gaps between a 512 KB value's 128 packets, 64 × 8.16 ns each.
    assert lat(slow) - lat(plain) == pytest.approx(127 * 64 * 8.16e-3, rel=0.02)
    acts = slow.actions()
    assert list(acts.action) == ["cc-delay=64"] and list(acts.vm) == ["ms"]


@pytest.mark.parametrize("ctl, problem", [
    ({"kind": "cc-delay", "ccti": 3}, "needs `vms`"),
    ({"kind": "cc-delay", "vms": ["zz"], "ccti": 3}, "no VM 'zz'"),
    ({"kind": "cc-delay", "vms": ["ms"]}, "needs `ccti`"),
    ({"kind": "cc-delay", "vms": ["ms"], "ccti": 3, "when": "1ms"}, "unknown key 'when'"),
])
def test_bad_cc_delay_tables_are_named(ctl, problem):
    from ibcloud.exceptions import IbcloudError

    with pytest.raises((IbcloudError, ValueError), match=problem):
        run_host(scenario(2, controllers=[ctl]))


def test_scenario_refuses_out_of_range_values():
    with pytest.raises(ValueError, match="delay=128 is out of range"):
        scenario(delay=128)
    with pytest.raises(ValueError, match="n_service_us"):
        scenario(n_service_us=float("nan"))


@pytest.mark.parametrize("argv, problem", [(["--threads", "0"], "threads"), (["--size", "huge"], "size")])
def test_reproduce_sphinx_bad_options(capsys, argv, problem):
    assert main(["reproduce", "sphinx", *argv]) == 2
    err = capsys.readouterr().err
    assert "error" in err and problem in err, err


def test_reproduce_sphinx_at_the_tour_size(tmp_path):
    s = reproduce("tour", out=str(tmp_path))
    v = {c["id"]: c["verdict"] for c in s["checks"]}
    assert v["R12-base-N"] == v["R12-base-M"] == v["R13-slope"] == "calibration"
    assert v["R13-linear"] == "construction"
    assert v["R14-1:1"] == "not run"  # the tour skips the Sphinx runs
    assert (tmp_path / "grid.parquet").exists()
