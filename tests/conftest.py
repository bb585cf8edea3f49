"""Shared fixtures, and the ``data`` marker: tests that read benchmark files beyond the bundled ones.

Where the tests look for those files (the first that is set or exists): ``$OKL_TEST_DATA``, the
staged ``../shared/datasets`` beside the checkout, else okl's own data directory (``$OKL_DATA``,
else ``~/.okl/data``: where ``okl fetch --tests`` puts them). A test is data-marked when it asks
for the ``data_dir`` fixture (or any fixture built on it) or carries ``@pytest.mark.data``. When
any of the files the tests read (:data:`okl.data.fetch.TEST_FILES`) is missing there, the marked
tests are skipped and the run ends with one line saying how many and how to get the files; with
``OKL_TEST_DATA_REQUIRED=1`` (CI, where the files are staged) they fail instead, so a skip cannot
hide a broken path.
"""

import os
from pathlib import Path

import pytest

import okl
from okl._threads import one_blas_thread
from okl.data import permutation
from okl.data.fetch import TEST_FILES, missing_test_files, target_dir

REPO = Path(__file__).resolve().parents[1]


def _data_root() -> Path:
    if os.environ.get("OKL_TEST_DATA"):
        return Path(os.environ["OKL_TEST_DATA"]).expanduser()
    beside = REPO.parent / "shared" / "datasets"
    return beside if beside.is_dir() else target_dir(None)


SHARED_DATA = _data_root()
MISSING = missing_test_files(SHARED_DATA)
REQUIRED = os.environ.get("OKL_TEST_DATA_REQUIRED", "") not in ("", "0")
#: the skip reason of every data-marked test without its files (one line in -ra's summary)
SKIP_REASON = ("needs the benchmark files: `okl fetch --tests [--data-dir DIR]` fetches them "
               "(then OKL_TEST_DATA=DIR if DIR was given)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "data_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.data)


def pytest_runtest_setup(item):
    if MISSING and item.get_closest_marker("data") is not None:
        where = f"{len(MISSING)} of the {len(TEST_FILES)} files missing under {SHARED_DATA} (first: {MISSING[0]})"
        if REQUIRED:
            pytest.fail(f"OKL_TEST_DATA_REQUIRED is set and {where}", pytrace=False)
        pytest.skip(SKIP_REASON)


def pytest_terminal_summary(terminalreporter):
    n = sum(1 for r in terminalreporter.stats.get("skipped", [])
            if isinstance(r.longrepr, tuple) and r.longrepr[2].endswith(SKIP_REASON))
    if n:
        terminalreporter.write_line(
            f"{n} test{'' if n == 1 else 's'} skipped for missing benchmark data ({len(MISSING)} of {len(TEST_FILES)} files not in "
            f"{SHARED_DATA}): `okl fetch --tests` fetches them there, or `okl fetch --tests --data-dir DIR` "
            f"and OKL_TEST_DATA=DIR (`--mirror DIR_OR_URL` to copy them from a mirror)", yellow=True, bold=True)


@pytest.fixture(scope="session")
def data_dir() -> str:
    """The directory of the benchmark files (data-marked tests only run when they are all there)."""
    return str(SHARED_DATA)


@pytest.fixture(scope="session", autouse=True)
def _one_blas_thread():
    """Tests compare against direct NumPy computations on small matrices: one BLAS thread
    (10-50x faster than threaded OpenBLAS on a busy 2-core machine)."""
    with one_blas_thread():
        yield


@pytest.fixture(scope="session")
def german():
    """german in file order (1000 x 24): the copy bundled with okl, so no download is needed."""
    return okl.load_dataset("german")


@pytest.fixture(scope="session")
def cpusmall(data_dir):
    """cpusmall (8192 x 12, regression) in the order of permutation 0."""
    X, y = okl.load_dataset("cpusmall", data_dir)
    p = permutation(len(y), 0)
    return X[p], y[p]
