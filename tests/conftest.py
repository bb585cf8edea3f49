"""Shared fixtures: the staged benchmark data (../shared/datasets beside the checkout)."""

import os
from pathlib import Path

import pytest

import okl
from okl._threads import one_blas_thread
from okl.data import permutation

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("OKL_TEST_DATA", REPO.parent / "shared" / "datasets"))


@pytest.fixture(scope="session")
def data_dir() -> str:
    if not (SHARED_DATA / "libsvm").is_dir():
        pytest.fail(f"benchmark data not found at {SHARED_DATA} (set OKL_TEST_DATA)")
    return str(SHARED_DATA)


@pytest.fixture(scope="session", autouse=True)
def _one_blas_thread():
    """Tests compare against direct NumPy computations on small matrices: one BLAS thread
    (10-50x faster than threaded OpenBLAS on a busy 2-core machine)."""
    with one_blas_thread():
        yield


@pytest.fixture(scope="session")
def german(data_dir):
    """german in file order (1000 x 24)."""
    return okl.load_dataset("german", data_dir)


@pytest.fixture(scope="session")
def cpusmall(data_dir):
    """cpusmall (8192 x 12, regression) in the order of permutation 0."""
    X, y = okl.load_dataset("cpusmall", data_dir)
    p = permutation(len(y), 0)
    return X[p], y[p]
