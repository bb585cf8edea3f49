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
import sys
from pathlib import Path

import numpy as np
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


#: files under the data directory this process opened (an audit hook, with the files present):
#: in CI the run fails if a test read one that ``okl fetch --tests`` would not fetch
READ: set[str] = set()


def _record_reads(event, args):
    if event == "open" and args and isinstance(args[0], (str, os.PathLike)):
        path = os.fspath(args[0])
        if isinstance(path, str) and path.startswith(_ROOT):
            READ.add(Path(os.path.relpath(path, _ROOT)).as_posix())


_ROOT = str(SHARED_DATA) + os.sep
if not MISSING:
    sys.addaudithook(_record_reads)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "data_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.data)


def _without_the_files():
    """Skip (or in CI fail) the test asking for the benchmark files, which are missing."""
    where = f"{len(MISSING)} of the {len(TEST_FILES)} files missing under {SHARED_DATA} (first: {MISSING[0]})"
    if REQUIRED:
        pytest.fail(f"OKL_TEST_DATA_REQUIRED is set and {where}", pytrace=False)
    pytest.skip(SKIP_REASON)


def pytest_runtest_setup(item):
    if MISSING and item.get_closest_marker("data") is not None:
        _without_the_files()


def _unlisted_reads() -> list[str]:
    return sorted(p for p in READ if p not in TEST_FILES and not p.startswith("."))


def pytest_sessionfinish(session):
    if REQUIRED and _unlisted_reads():
        session.exitstatus = pytest.ExitCode.TESTS_FAILED  # CI: okl fetch --tests would not give the tests a file


def pytest_terminal_summary(terminalreporter):
    n = sum(1 for r in terminalreporter.stats.get("skipped", [])
            if isinstance(r.longrepr, tuple) and r.longrepr[2].endswith(SKIP_REASON))
    if n:
        terminalreporter.write_line(
            f"{n} test{'' if n == 1 else 's'} skipped for missing benchmark data ({len(MISSING)} of {len(TEST_FILES)} "
            f"files not in {SHARED_DATA}): `okl fetch --tests` fetches them there, or `okl fetch --tests --data-dir "
            f"DIR` and OKL_TEST_DATA=DIR (`--mirror DIR_OR_URL` to copy them from a mirror)", yellow=True, bold=True)
    if READ:
        unlisted = _unlisted_reads()
        terminalreporter.write_line(f"the tests read {len(READ & set(TEST_FILES))} of the {len(TEST_FILES)} files of "
                                    f"okl fetch --tests" + (f"; and {len(unlisted)} it does not fetch: "
                                                            f"{', '.join(unlisted)}" if unlisted else ""),
                                    red=bool(unlisted))


@pytest.fixture(scope="session")
def data_dir() -> str:
    """The directory of the benchmark files (data-marked tests only run when they are all there;
    a test that asks for it at run time, ``request.getfixturevalue``, is skipped here)."""
    if MISSING:
        _without_the_files()
    return str(SHARED_DATA)


@pytest.fixture(scope="session")
def data_dir_if_present():
    """The benchmark directory when its files are there, else None: for a property that holds on
    bundled or generated data too (okl.checks: german, and Friedman's stream #1 for cpusmall), so
    a fresh clone still checks it. Not data-marked."""
    return None if MISSING else str(SHARED_DATA)


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


def _generated_classification(n: int, d: int = 4, seed: int = 0):
    """A stream like svmguide1's in shape and difficulty (``d`` >= 4 features in [0, 1], labels
    -1/+1 half and half, a non-linear boundary with a margin of 0.1: FORKS at budget 50, sigma 0.25
    errs on 5.47 % of 1500 rounds, svmguide1 5.07 %), for tests whose property holds on any stream
    (an equivalence, a resume, a refusal) and which must run without the benchmark files."""
    rng = np.random.default_rng(seed)
    X = rng.random((4 * n, d))
    score = np.sin(6.0 * X[:, 0]) + X[:, 1] - 2.0 * X[:, 2] * X[:, 3]
    score -= np.median(score)
    keep = np.abs(score) > 0.1
    return np.ascontiguousarray(X[keep][:n]), np.where(score[keep][:n] > 0, 1.0, -1.0)


@pytest.fixture(scope="session")
def svmguide1_rows():
    """``svmguide1_rows(n)`` -> (X, y) float64: svmguide1's first n rows of permutation 0 when the
    benchmark files are there, else a generated stream of the same shape
    (:func:`_generated_classification`), for properties that hold on any stream (an equivalence, a
    resume, a refusal): a fresh clone checks them too. Not data-marked."""
    def rows(n: int):
        if MISSING:
            return _generated_classification(n)
        X, y = okl.load_dataset("svmguide1", SHARED_DATA)
        order = permutation(len(y), 0)[:n]
        return np.ascontiguousarray(X[order], dtype=float), np.asarray(y[order], dtype=float)
    return rows


@pytest.fixture(scope="session")
def cpusmall(data_dir):
    """cpusmall (8192 x 12, regression) in the order of permutation 0."""
    X, y = okl.load_dataset("cpusmall", data_dir)
    p = permutation(len(y), 0)
    return X[p], y[p]
