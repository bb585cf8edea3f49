"""``auto``'s column hashing: rows wider than :data:`HASH_WIDTH` columns are hashed into
:data:`HASH_WIDTH` columns before its input map, its engine and its members see them.

Why: auto's engine holds its input map (a centre and a spread per column) and its linear members'
weights as d-long arrays, so its memory grows with the width given, whatever the rows' non-zeros:
at 2^31 columns those arrays alone would be 16 GiB each. Feature hashing (Weinberger, Dasgupta,
Langford, Smola & Attenberg, "Feature hashing for large scale multitask learning", ICML 2009;
Vowpal Wabbit's ``-b`` bits) bounds them: column j of a wide row is added, with a sign, to column
h(j) mod W of the hashed row, so every array is W long and a row costs O(nnz). With the sign hash,
the hashed inner product is an unbiased estimate of the given one (colliding columns cancel in
expectation instead of adding up); on rows of a few hundred non-zeros among W = 2^20 columns, two
columns of a row collide with probability about nnz^2 / 2W.

The hash (fixed: a model file records it, and input width, and is refused with another):
    k = j as an unsigned 64-bit integer, mixed by MurmurHash3's 64-bit finaliser (``fmix64``:
    k ^= k >> 33; k *= 0xff51afd7ed558ccd; k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53; k ^= k >> 33, a
    bijection of the 64-bit integers in which every input bit flips each output bit with
    probability about 1/2); column = k mod W (W a power of two: the low bits), sign = +1 when
    bit 63 of k is 0, else -1 (a bit the column does not read, so the sign is independent of it).
    Vectorised in NumPy: O(nnz) a block, no per-column Python.

Rows of at most W columns are not hashed (auto's numbers on them are those it always gave).
Single learners are not concerned: FOGD with generated directions takes wide sparse rows as they
are (O(nnz) a row), the others get dense blocks of bounded size.
"""

from __future__ import annotations

import numpy as np

from okl._sparse import SparseRows, is_sparse_matrix
from okl._validation import check_matrix
from okl.runtime.events import EventPath

#: the widest rows auto takes as given; wider rows are hashed into this many columns (2^20, VW's
#: default is 2^18): auto's d-long arrays are then 8 MiB each
HASH_WIDTH = 1 << 20
#: the name of the hash (:func:`hash_columns`), kept in model files
COLUMN_HASH = "murmur3-fmix64-signed"

_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)
_S63 = np.uint64(63)


def hash_columns(indices: np.ndarray, width: int = HASH_WIDTH) -> tuple[np.ndarray, np.ndarray]:
    """(hashed columns in [0, width), signs +-1.0) of column indices (non-negative integers), by
    the rule in the module docstring. ``width`` must be a power of two."""
    k = np.asarray(indices, dtype=np.int64).astype(np.uint64)
    with np.errstate(over="ignore"):  # (the multiplications wrap modulo 2^64, as the hash says)
        k ^= k >> _S33
        k *= _M1
        k ^= k >> _S33
        k *= _M2
        k ^= k >> _S33
    columns = (k & np.uint64(width - 1)).astype(np.int64)
    signs = np.where((k >> _S63) == 0, 1.0, -1.0)
    return columns, signs


def hash_rows(rows: SparseRows, width: int = HASH_WIDTH) -> SparseRows:
    """The checked sparse rows hashed into ``width`` columns: each value times its column's sign,
    added at its hashed column (colliding columns of a row summed, a sum of exactly 0 dropped),
    indices ascending within each row. O(nnz log nnz_row)."""
    import scipy.sparse as sp

    columns, signs = hash_columns(rows.indices, width)
    M = sp.csr_matrix((rows.data * signs, columns, rows.indptr - rows.indptr[0]), shape=(rows.shape[0], width))
    M.sum_duplicates()  # (also sorts the indices)
    M.eliminate_zeros()
    return SparseRows(M.indptr.astype(np.int64), M.indices.astype(np.int64), np.ascontiguousarray(M.data), width)


def input_width(x) -> int | None:
    """The number of columns of a row or block as given (None: not an array-like with a shape)."""
    shape = getattr(x, "shape", None)
    if shape is None or len(shape) not in (1, 2):
        return None
    return int(shape[-1])


def hash_input(x, width: int, what: str = "X"):
    """A row (1-D array or a 1 x width sparse matrix) or block (2-D array or sparse matrix) of
    ``width`` columns, checked as auto's paths check them (the width, every value finite and
    bounded, sparse indices in range: the first bad one named), hashed into :data:`HASH_WIDTH`
    columns as a SciPy CSR matrix (one row for a 1-D x), which auto's sparse paths take as they are."""
    import scipy.sparse as sp

    if is_sparse_matrix(x):
        rows = check_matrix(x, width, what, sparse=True)
    else:
        dense = check_matrix(np.atleast_2d(np.asarray(x, dtype=float)) if np.ndim(x) == 1 else x, width, what)
        rows = SparseRows.from_dense(dense)
    if rows.shape[1] != width:
        raise ValueError(f"{what} has {rows.shape[1]} features but the learner was started with {width}")
    out = hash_rows(rows)
    return sp.csr_matrix((out.data, out.indices, out.indptr), shape=out.shape)


class WideRows:
    """``auto``'s entries for rows wider than :data:`HASH_WIDTH` (a mixin of
    :class:`okl.ensemble.auto.Auto`): every path (run, learn_many, predict_many, okl stream's blocks,
    predict_one, learn_one) hashes them by :func:`hash_input` before the input map; the width given
    is fixed by the first rows, as ``dim_`` is for narrower rows, and a row of another width is
    refused by name. One test of an attribute a row otherwise."""

    #: the width of the rows given when they were wider than :data:`~okl.ensemble.hashing.HASH_WIDTH`
    #: (then hashed into ``dim_`` = HASH_WIDTH columns by ``column_hash_``); None: rows taken as given
    input_width_: int | None = None
    column_hash_: str | None = None
    #: (width given, width hashed into) of the rows on their way in while dim_ is None (never saved)
    _arriving: tuple | None = None

    def _input(self, x, what="X"):
        """x as auto's map and engine take it: hashed into HASH_WIDTH columns when the rows given are
        wider (checked against the width given first), else as it is."""
        wide = self.input_width_
        if wide is None:
            if self.dim_ is not None:
                return x
            width = input_width(x)
            if width is None or width <= HASH_WIDTH:
                self._arriving = None
                return x
            wide = width
            self._arriving = (width, HASH_WIDTH)
        return hash_input(x, wide, what)

    def _fix_input_width(self, dim):
        """At the first example (before the input map starts): the width given, when the rows
        arriving were wider than HASH_WIDTH and hashed into ``dim`` columns."""
        if self.dim_ is None:
            wide = self._arriving is not None and self._arriving[1] == dim
            self.input_width_ = self._arriving[0] if wide else None
            self.column_hash_ = COLUMN_HASH if wide else None
            self._arriving = None

    def run(self, X, y):
        return super().run(self._input(X), y)

    def learn_many(self, X, y):
        return super().learn_many(self._input(X), y)

    def predict_many(self, X):
        return super().predict_many(self._input(X))

    def _learn_rounds(self, X, y):
        return EventPath.learn_rounds(self.events, self, self._input(X), y)

    def predict_one(self, x):
        if self.input_width_ is not None or self.dim_ is None:  # (one test a row on the common path)
            x = self._input(x, "x")
        return super().predict_one(x)

    def _learn_round(self, x, y):
        if self.input_width_ is not None or self.dim_ is None:
            x = self._input(x, "x")
        return super()._learn_round(x, y)
