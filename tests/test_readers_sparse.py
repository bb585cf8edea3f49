"""svmlight files read as CSR (``read_svmlight(..., sparse=True)``, ``parse_svmlight_block(...,
sparse=True)``): the dense reader's numbers, from indices and values, and the same errors."""

import gzip
import os

import numpy as np
import pytest
import scipy.sparse as sp

from okl.data import DataFormatError, read_svmlight
from okl.data import readers
from okl.data.readers import parse_svmlight_block


def _check_csr(X):
    assert isinstance(X, sp.csr_matrix)
    assert X.dtype == np.float64
    assert X.has_sorted_indices
    assert np.all(np.diff(X.indptr) >= 0)


@pytest.mark.parametrize("name, n_features", [("ijcnn1.gz", 22), ("svmguide3.gz", None)])
def test_staged_file_as_csr_equals_the_dense_reader(data_dir, name, n_features):
    """The fast path (files above SMALL_SVMLIGHT_BYTES): the CSR matrix holds the dense reader's
    matrix exactly, and only the file's idx:val entries (ijcnn1: 13 of 22 columns a row)."""
    path = os.path.join(data_dir, "libsvm", name)
    assert os.path.getsize(path) > readers.SMALL_SVMLIGHT_BYTES
    X, y = read_svmlight(path, n_features=n_features)
    S, ys = read_svmlight(path, n_features=n_features, sparse=True)
    _check_csr(S)
    assert S.shape == X.shape
    np.testing.assert_array_equal(S.toarray(), X)
    np.testing.assert_array_equal(ys, y)
    with gzip.open(path, "rt") as fh:
        tokens = sum(sum(":" in t for t in line.split("#")[0].split()) for line in fh)
    assert S.nnz == tokens
    if name == "ijcnn1.gz":
        assert X.shape == (49990, 22) and S.nnz == 13 * 49990


def test_small_file_as_csr_equals_the_dense_reader_line_parser(tmp_path, data_dir):
    """The line parser (files up to SMALL_SVMLIGHT_BYTES) builds the same CSR matrix."""
    head = tmp_path / "head.svm"
    with gzip.open(os.path.join(data_dir, "libsvm", "svmguide3.gz"), "rt") as fh:
        head.write_text("".join(fh.readlines()[:250]))
    assert os.path.getsize(head) <= readers.SMALL_SVMLIGHT_BYTES
    X, y = read_svmlight(head, n_features=22)
    S, ys = read_svmlight(head, n_features=22, sparse=True)
    _check_csr(S)
    np.testing.assert_array_equal(S.toarray(), X)
    np.testing.assert_array_equal(ys, y)


def test_written_file_as_csr_hand_computed(tmp_path):
    p = tmp_path / "d.svm"
    p.write_text("+1 1:0.5 3:2\n-1 2:1 # comment\n\n+1 4:0 5:-1.25\n")
    S, y = read_svmlight(p, sparse=True)
    _check_csr(S)
    np.testing.assert_array_equal(S.toarray(), [[0.5, 0, 2, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 0, -1.25]])
    np.testing.assert_array_equal(S.indptr, [0, 2, 3, 5])
    np.testing.assert_array_equal(S.indices, [0, 2, 1, 3, 4])  # (4:0 is a stored entry, as written)
    np.testing.assert_array_equal(y, [1, -1, 1])
    S, _ = read_svmlight(p, n_features=8, sparse=True)
    assert S.shape == (3, 8)


def _big_file(path, bad_line: str | None, at: int, lines: int = 3000):
    """An svmlight file above SMALL_SVMLIGHT_BYTES (the fast path) with ``bad_line`` as line ``at``."""
    rng = np.random.default_rng(0)
    out = []
    for i in range(lines):
        idx = np.sort(rng.choice(40, 5, replace=False)) + 1
        out.append(f"{1 if i % 2 else -1} " + " ".join(f"{j}:{rng.random():.6f}" for j in idx))
    if bad_line is not None:
        out[at - 1] = bad_line
    path.write_text("\n".join(out) + "\n")
    assert os.path.getsize(path) > readers.SMALL_SVMLIGHT_BYTES


@pytest.mark.parametrize("big", [False, True])
@pytest.mark.parametrize("line, problem", [
    ("+1 1:0.5 x:2", "feature index 'x' is not an integer"),
    ("+1 0:1", "must be >= 1"),
    ("+1 1:0.5 3:abc", "value 'abc' of feature 3 is not a number"),
    ("+1 1:inf", "not finite"),
])
def test_bad_lines_name_file_and_line_when_sparse(tmp_path, big, line, problem):
    """A bad index or value: both paths (a big file's fast path falls back to the line parser)
    name the file and line, as the dense reader does."""
    p = tmp_path / "bad.svm"
    if big:
        _big_file(p, line, 1234)
        where = "bad.svm:1234"
    else:
        p.write_text("+1 1:1 2:1\n-1 2:0.5\n" + line + "\n")
        where = "bad.svm:3"
    for sparse in (False, True):
        with pytest.raises(DataFormatError, match=f"{where}: .*{problem}"):
            read_svmlight(p, sparse=sparse)


def test_big_written_file_as_csr(tmp_path):
    p = tmp_path / "big.svm"
    _big_file(p, None, 0)
    X, y = read_svmlight(p)
    S, ys = read_svmlight(p, sparse=True)
    _check_csr(S)
    assert S.nnz == 5 * 3000
    np.testing.assert_array_equal(S.toarray(), X)
    np.testing.assert_array_equal(ys, y)


def test_block_parser_as_csr():
    data = b"+1 1:0.5 3:2\n-1 2:1\n+1 4:1e-3\n"
    X, y = parse_svmlight_block(data, 5, 3)
    S, ys = parse_svmlight_block(data, 5, 3, sparse=True)
    _check_csr(S)
    np.testing.assert_array_equal(S.toarray(), [[0.5, 0, 2, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 0.001, 0]])
    np.testing.assert_array_equal(S.toarray(), X)
    np.testing.assert_array_equal(ys, [1, -1, 1])
    # not plainly well formed: None (the stream parses such lines one at a time)
    assert parse_svmlight_block(b"+1 1:nan\n", 5, 1, sparse=True) is None
    assert parse_svmlight_block(b"+1 7:1\n", 5, 1, sparse=True) is None
