"""Shared fixtures: paths to the interop files under fixtures/."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INTEROP = ROOT / "fixtures" / "interop"


@pytest.fixture
def interop_dir() -> Path:
    """fixtures/interop: files written by ibnetdiscover, ibsim and OpenSM."""
    return INTEROP
