"""Sphinx's Python face (G §6): the controller, named policies, the I/O
model sweep, and bad input."""

import math

import pytest

from ibcloud import Fabric, route
from ibcloud.exceptions import SimulationError
from ibcloud.host.sphinx import Controller, io_model, policy_ratio


def test_controller_throttles_the_second_flow_and_follows_a_new_target():
    # A plant where the bulk flow's delay d moves the losses linearly.
    c = Controller({"n": 48.0, "m": 187.0}, [("n", "m", "1:4")])
    d = 0
    for k in range(300):
        pl_n = max(0.0, 0.33 - 0.01 * d)
        pl_m = 0.05 + 0.004 * d
        d = c.step(k + 1.0, {"n": 48.0 * (1 + pl_n), "m": 187.0 * (1 + pl_m)}).get("m", d)
    assert 27 <= c.delays()["m"] <= 31
    c.set_target(0, "fair")
    for k in range(300, 600):
        pl_n = max(0.0, 0.33 - 0.01 * d)
        pl_m = 0.05 + 0.004 * d
        d = c.step(k + 1.0, {"n": 48.0 * (1 + pl_n), "m": 187.0 * (1 + pl_m)}).get("m", d)
    assert 18 <= c.delays()["m"] <= 22
    r = c.records()
    assert len(r) == 600 and r["delay_a"].eq(0).all()
    assert r.loc[300, "d_price"] < 0  # the price falls at the change


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="unknown flow 'x'"):
        Controller({"n": 48.0, "m": 187.0}, [("n", "x", 1.0)])
    with pytest.raises(ValueError, match="target"):
        Controller({"n": 48.0, "m": 187.0}, [("n", "m", "nan")])
    with pytest.raises(ValueError, match="k-i"):
        Controller({"n": 48.0, "m": 187.0}, [("n", "m", 1.0)], k_i=-1)
    with pytest.raises(ValueError, match="unknown field"):
        Controller({"n": 48.0, "m": 187.0}, [("n", "m", 1.0)], k_x=1)
    with pytest.raises(ValueError, match="memcached"):
        Controller({"n": 48.0, "memcached": -1.0}, [("n", "memcached", 1.0)])
    c = Controller({"n": 48.0, "m": 187.0}, [("n", "m", 1.0)])
    with pytest.raises(ValueError, match="no latency for flow"):
        c.step(1.0, {"n": 50.0})
    with pytest.raises(ValueError, match="'m'"):
        c.step(1.0, {"n": 50.0, "m": math.nan})
    c.step(1.0, {"n": 50.0, "m": 190.0})
    with pytest.raises(ValueError, match="not after"):
        c.step(1.0, {"n": 50.0, "m": 190.0})
    with pytest.raises(ValueError, match="no LP group 2"):
        c.set_target(2, 1.0)
    with pytest.raises(ValueError):
        policy_ratio("1:x")


def test_io_model_is_linear_for_a_large_send_and_flat_for_one_packet():
    t = route(Fabric.generate("4-ary-2-full"), "ftree").tables
    pts, fits = io_model(t, sizes=[65536, 524288], delays=[10, 40])
    big = pts[pts["size"] == 524288].set_index("delay")["latency_us"]
    # 255 gaps of 20 ns per index.
    assert big[40] - big[10] == pytest.approx(255 * 0.020 * 30, rel=0.01)
    slope, _, r2 = fits[524288]
    assert r2 > 0.9999 and slope == pytest.approx(big[0] / (100 * 255 * 0.020), rel=0.01)
    pts, fits = io_model(t, sizes=[4096], delays=[40], mtu=4096)
    assert pts["increase_pct"].eq(0).all() and fits[4096] is None
    with pytest.raises(SimulationError, match="cct_ns"):
        io_model(t, cct_ns=float("nan"))
    with pytest.raises(SimulationError, match="CCTI_Limit"):
        io_model(t, delays=[500])
    with pytest.raises(SimulationError, match="nobody"):
        io_model(t, dst="nobody")
    with pytest.raises(SimulationError, match="forwarding tables"):
        io_model("not tables")
