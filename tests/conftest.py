"""Shared fixtures: the staged benchmark data (../shared/datasets beside the checkout)."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("OKL_TEST_DATA", REPO.parent / "shared" / "datasets"))


@pytest.fixture(scope="session")
def data_dir() -> str:
    if not (SHARED_DATA / "libsvm").is_dir():
        pytest.fail(f"benchmark data not found at {SHARED_DATA} (set OKL_TEST_DATA)")
    return str(SHARED_DATA)
