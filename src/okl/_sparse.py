"""Sparse rows as okl's paths take them: :class:`SparseRows`, a CSR block (row pointers, column
indices sorted within each row, non-zero values) that ``run()`` and ``learn_many`` pass down without
making it dense.

Why: one-hot and hashed streams have a few non-zeros a row among hundreds to millions of columns
(LIBSVM's a9a: 14 of 123; a hashed text stream: 50 of 2^20). A dense row makes every member's input
side cost O(d) where O(nnz) does: a random-feature projection sums nnz columns of U instead of d,
a kernel value to a stored row gathers nnz of its entries (with the stored row's norm:
:func:`okl._compiled.kernel_value_sparse`), and a dense copy of the block costs n d floats of
memory. What takes the rows sparse (``accepts_csr``): ``auto``'s engine (:mod:`okl.engine.core`, every
map of the component table) and FOGD; every other learner gets dense blocks of :data:`DENSE_CHUNK_FLOATS` floats at
most, one after the other (bounded memory; what ``run()`` on those dense blocks in turn gives).

The input map of a learner whose width window came as sparse rows keeps zeros zero: centre 0 and
spread the window's largest magnitude of each column (:func:`okl.scaling.window_scale` with
``sparse=True``; scikit-learn's MaxAbsScaler, which is what it offers for sparse data, for the same
reason), so a mapped row has the non-zeros of the row given.
"""

from __future__ import annotations

import numpy as np

#: the most floats a dense block made from sparse rows holds at once (for a learner without a
#: sparse path: 2^22 floats, 32 MiB; at least one row)
DENSE_CHUNK_FLOATS = 1 << 22


class SparseRows:
    """n rows of ``dim`` columns in CSR form: row i's column indices ``indices[indptr[i]:indptr[i +
    1]]`` (ascending, no repeats) and values ``data[...]`` (float64, non-zero). ``X[a:b]`` is the rows
    a..b-1 (views, no copy), ``X[i]`` row i as a dense vector (O(dim)), :meth:`row` its indices and
    values. Built from a SciPy sparse matrix by :func:`okl._validation.check_matrix`."""

    __slots__ = ("indptr", "indices", "data", "shape")

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, dim: int):
        self.indptr = indptr
        self.indices = indices
        self.data = data
        self.shape = (indptr.shape[0] - 1, int(dim))

    @classmethod
    def from_scipy(cls, X) -> "SparseRows":
        """The rows of a SciPy sparse matrix (any format; never made dense): duplicates summed, explicit
        zeros dropped, indices sorted, values float64; indices and row pointers int64."""
        if getattr(X, "format", None) == "csr" and X.dtype == np.float64 and len(X.shape) == 2 \
                and X.has_canonical_format and X.data.all():  # (the common case: its arrays, read only)
            return cls(X.indptr.astype(np.int64, copy=False), X.indices.astype(np.int64, copy=False), X.data,
                       X.shape[1])
        import scipy.sparse as sp

        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        X.sum_duplicates()  # (also sorts the indices)
        X.eliminate_zeros()
        return cls(X.indptr.astype(np.int64), X.indices.astype(np.int64), np.ascontiguousarray(X.data), X.shape[1])

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1] - self.indptr[0])

    def __getitem__(self, key):
        n = self.shape[0]
        if isinstance(key, slice):
            start, stop, step = key.indices(n)
            if step != 1:
                raise ValueError("SparseRows: only contiguous row ranges can be sliced")
            stop = max(stop, start)
            p = self.indptr[start:stop + 1]
            lo, hi = int(p[0]), int(p[-1])
            return SparseRows(p - lo, self.indices[lo:hi], self.data[lo:hi], self.shape[1])
        i = int(key)
        if not -n <= i < n:
            raise IndexError(f"row {i} of {n}")
        idx, val = self.row(i % n)
        out = np.zeros(self.shape[1])
        out[idx] = val
        return out

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(column indices, values) of row i."""
        a, b = int(self.indptr[i]), int(self.indptr[i + 1])
        return self.indices[a:b], self.data[a:b]

    def toarray(self) -> np.ndarray:
        """The rows as a dense (n, dim) array."""
        out = np.zeros(self.shape)
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        out[rows, self.indices] = self.data
        return out

    @classmethod
    def from_columns(cls, X: np.ndarray, columns: list) -> "SparseRows":
        """The dense rows X given with each row's non-zero columns (ascending), O(nnz): what
        :meth:`from_dense` gives without scanning the rows (a wide window's buffer)."""
        columns = [np.asarray(c, dtype=np.int64) for c in columns]
        indptr = np.concatenate(([0], np.cumsum([len(c) for c in columns]))).astype(np.int64)
        indices = np.concatenate(columns) if columns else np.zeros(0, dtype=np.int64)
        data = np.concatenate([X[i, c] for i, c in enumerate(columns)]) if columns else np.zeros(0)
        keep = data != 0.0
        if not keep.all():  # (an explicit zero: dropped as from_dense drops it)
            counts = [int(keep[a:b].sum()) for a, b in zip(indptr[:-1], indptr[1:])]
            indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
            indices, data = indices[keep], data[keep]
        return cls(indptr, indices, np.ascontiguousarray(data, dtype=np.float64), X.shape[1])

    @classmethod
    def from_dense(cls, X: np.ndarray) -> "SparseRows":
        """The non-zeros of the dense rows X (a width window's buffer), row by row."""
        r, c = np.nonzero(X)
        return cls(np.searchsorted(r, np.arange(X.shape[0] + 1)).astype(np.int64), c.astype(np.int64),
                   np.ascontiguousarray(X[r, c], dtype=np.float64), X.shape[1])

    def compact(self) -> np.ndarray:
        """The rows as a dense (n, c) array over the c columns they use (the others are zero in
        every row): what the width rules (okl.kernels.scale_sigma, scale_sigma_l1), sums over
        columns, give the same values on as on the whole rows, at O(n c) memory."""
        columns, where = np.unique(self.indices, return_inverse=True)
        out = np.zeros((self.shape[0], max(len(columns), 1)))
        out[np.repeat(np.arange(self.shape[0]), np.diff(self.indptr)), where] = self.data
        return out

    def with_data(self, data: np.ndarray) -> "SparseRows":
        """The same pattern with other values (a mapped copy)."""
        return SparseRows(self.indptr, self.indices, data, self.shape[1])

    def dense_chunks(self):
        """(start, dense rows) blocks of at most :data:`DENSE_CHUNK_FLOATS` floats, in order."""
        step = max(1, DENSE_CHUNK_FLOATS // max(self.shape[1], 1))
        for s in range(0, self.shape[0], step):
            yield s, self[s:s + step].toarray()


#: a width window buffer past this many bytes is mapped on demand (:func:`window_buffer`)
LAZY_WINDOW_BYTES = 1 << 28


def window_buffer(rows: int, dim: int) -> np.ndarray:
    """A zero (rows, dim) float64 buffer (a width window's rows): ``np.zeros`` up to
    :data:`LAZY_WINDOW_BYTES`, beyond that an anonymous mapping that takes no memory until written
    (MAP_NORESERVE: the 50 rows of 2^31 columns, 800 GiB, are address space; sparse rows written into
    it touch a page per non-zero, so the window of sparse rows costs O(nnz) memory)."""
    size = 8 * rows * dim
    if size <= LAZY_WINDOW_BYTES:
        return np.zeros((rows, dim))
    import mmap
    import sys

    # (MAP_NORESERVE: Python's mmap names it from 3.13; Linux's value before that)
    noreserve = getattr(mmap, "MAP_NORESERVE", 0x4000 if sys.platform.startswith("linux") else 0)
    flags = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0) | noreserve
    try:
        buf = mmap.mmap(-1, size, flags=flags) if flags else mmap.mmap(-1, size)
    except (OSError, ValueError, OverflowError):
        return np.zeros((rows, dim))  # (no such mapping here: NumPy's own, or its MemoryError)
    return np.frombuffer(buf, dtype=np.float64).reshape(rows, dim)


def is_sparse_matrix(X) -> bool:
    """A SciPy sparse matrix or array (without importing SciPy)."""
    return hasattr(X, "tocsr") and hasattr(X, "nnz")
