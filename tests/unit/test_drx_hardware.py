"""G R8 on the simulated SM: the hardware-policy scenarios of ``ibcloud
reproduce drx`` (DRX-triggered DRXMax/DRXMaxQ, the cause-isolation runs),
the push summary it prints, and bad ``[sm]`` settings named by file and
line."""

import pytest

from ibcloud.exceptions import ParseError
from ibcloud.host.drx_reproduction import DRX_HARDWARE, R8_BESIDE, R8_CAUSES, _hardware, _push
from ibcloud.host.scenario import Scenario

SLA = 900.0


@pytest.mark.parametrize("name", ("stmax", "stmaxq") + DRX_HARDWARE + R8_BESIDE + R8_CAUSES)
def test_every_hardware_case_is_a_valid_packet_level_scenario(name):
    sc = _hardware("symmetric", 2, 0.1, SLA, name)
    assert all(w["mode"] == "packet" for w in sc["workloads"])
    Scenario(sc).check()  # the core accepts it (fabric, [sm], controller keys)
    ctl = sc.get("controllers", [])
    if name in DRX_HARDWARE:
        # G §4.5: QoS from the start, the CC left to DRX's push.
        assert sc["fabric"]["qos"] == name and sc["fabric"]["qos-parts"] == "qos"
        assert ctl[0]["policy"] == name and "qos-at" not in ctl[0]
    elif name == "drxmaxq/qos-at-violation":
        assert "qos" not in sc["fabric"] and sc["fabric"]["vls"] == 2 and sc["sm"]["path-sl"] == "sa"
        assert ctl[0]["qos-at"] == "violation"
    elif name == "none/packet":
        assert not ctl and "qos" not in sc["fabric"] and sc["max-events"] >= 10**9
    elif name.endswith("/cc-bulk"):  # A11's other reading: the whole preset, CC on the bulk SL only
        assert not ctl and sc["fabric"]["qos-cc-sls"] == "bulk" and "qos-parts" not in sc["fabric"]
    else:
        assert not ctl and sc["fabric"]["qos"] == name.split("/")[0]
        assert sc["fabric"].get("qos-parts") == (name.split("/")[1].split("-")[0] if "/" in name else None)


def test_push_summary_reads_the_sm_timing_from_the_drx_report():
    rep = {"hardware": [{"event": None, "setting": "qos-equal", "sent": 0, "applied": 10**9, "sm": None},
                        {"event": 7, "setting": "congestion-control", "sent": 3_102_100_000_000,
                         "applied": 3_102_490_625_000, "sm": {"cc_mads": 25, "qos_mads": 0, "restart": 0}}],
           "responses": [{"event": 7, "detected": 3_100_000_000_000}]}
    p = _push(rep)
    assert p["settings"] == ["congestion-control"] and p["mads"] == 25 and p["by_sm"]
    assert p["violation_to_in_force_ms"] == pytest.approx(2.490625)
    assert _push({"hardware": rep["hardware"][:1]}) is None


@pytest.mark.parametrize("key, value, message", [
    ("mad-latency", '"-5us"', "sm.mad-latency: duration '-5us' is negative"),
    ("mad-latency", '"nan"', "sm.mad-latency: cannot read duration"),
    ("restart", '"7200s"', "sm.restart: duration '7200s' is absurd"),
    ("mad-window", "0", "sm.mad-window: 0 MADs outstanding"),
])
def test_bad_sm_settings_name_file_line_and_key(key, value, message):
    text = (f'duration = "10ms"\n[[hosts]]\nname = "A"\n[[hosts]]\nname = "B"\n'
            f'[sm]\npath-sl = "given"\n{key} = {value}\n')
    with pytest.raises(ParseError) as err:
        Scenario.from_text(text, "s.toml").check()
    assert str(err.value).startswith("s.toml:8: ") and message in str(err.value)
