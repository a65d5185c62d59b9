"""CI's slice of the hostile-input harness (tests/fuzz/fuzz_cli.py): every
target with two damaged inputs through the real ``ibcloud`` command. The
whole matrix is ``make fuzz``."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).parent


def _harness():
    spec = importlib.util.spec_from_file_location("fuzz_cli", HERE / "fuzz_cli.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_cli"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_fast_slice_every_input_is_a_clear_error(tmp_path):
    harness = _harness()
    report = tmp_path / "fuzz.json"
    status = harness.main(["--json", str(report), "--time-limit", "60"])
    data = json.loads(report.read_text())
    bad = [o for o in data["outcomes"] if o["verdict"] not in ("clear", "accepted")]
    assert status == 0 and not bad, "\n".join(f"{o['verdict']} {o['target']} {o['damage']}: {o['stderr'][-300:]}"
                                              for o in bad)
    # every target and every damage kind ran
    assert len({o["target"] for o in data["outcomes"]}) == len(harness.targets())
    assert {o["damage"] for o in data["outcomes"]} == set(harness.DAMAGES)


def test_classify_catches_what_it_must():
    h = _harness()
    assert h.classify(2, b"ibcloud: error: x.topo:1: bad", "x.topo", False, []) == "clear"
    assert h.classify(2, b"ibcloud: error: x.topo:1: \x1b[2J", "x.topo", False, []) == "unclear"
    assert h.classify(2, b"ibcloud: error: x.topo: " + b"A" * 5000, "x.topo", False, []) == "unclear"
    assert h.classify(2, b"ibcloud: error: something", "x.topo", False, []) == "unclear"
    assert h.classify(1, b"Traceback (most recent call last):\n", "x.topo", False, []) == "traceback"
    assert h.classify(None, b"", "x.topo", False, []) == "hang"
    assert h.classify(0, b"", "x.topo", False, []) == "wrong"
    assert h.classify(0, b"", "x.topo", True, []) == "accepted"
    assert h.classify(2, b"ibcloud: error: x.topo:1: bad", "x.topo", False, ["out.net"]) == "wrote"
