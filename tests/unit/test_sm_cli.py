"""`ibcloud sm` bad input: clear errors, exit status 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from ibcloud.cli.main import main


def test_unknown_engine_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sm", "run", "--engine", "nonsense", "--once"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ibcloud: error:") and "unknown routing engine" in err and "Traceback" not in err


def test_bad_numbers_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sm", "run", "--lmc", "9", "--once"]) == 2
    assert main(["sm", "run", "--sweep-interval", "nan"]) == 2
    err = capsys.readouterr().err
    assert "--sweep-interval" in err and "not a finite number" in err
    assert main(["sm", "run", "--window", "0", "--once"]) == 2


def test_no_port_without_the_shim_is_an_error_not_a_crash(capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # This machine has no InfiniBand device: without ibsim's shim there is no port.
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    assert main(["sm", "run", "--once", "--ca", "no-such-ca"]) == 2
    err = capsys.readouterr().err
    assert "libibumad" in err and "Traceback" not in err


def test_ctl_to_a_missing_socket(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sm", "ctl", str(tmp_path / "none.sock"), "status"]) == 2
    assert "none.sock" in capsys.readouterr().err
