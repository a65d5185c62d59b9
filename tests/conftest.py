"""Shared fixtures: paths to the interop files under fixtures/."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INTEROP = ROOT / "fixtures" / "interop"


@pytest.fixture
def interop_dir() -> Path:
    """fixtures/interop: files written by ibnetdiscover, ibsim and OpenSM."""
    return INTEROP


@pytest.fixture(scope="session", autouse=True)
def interop_scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Scratch space for ibsim and OpenSM under pytest's temporary root, which
    pytest prunes (the last three runs are kept), instead of /dev/shm."""
    import os

    scratch = tmp_path_factory.mktemp("interop-scratch")
    os.environ["IBCLOUD_SCRATCH"] = str(scratch)
    return scratch
