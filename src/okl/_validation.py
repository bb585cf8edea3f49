"""Parameter and input validation with messages that name the problem and the allowed range."""

from __future__ import annotations

import math
import numbers

import numpy as np

from okl._sparse import SparseRows, is_sparse_matrix


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_real(name: str, value, low=None, high=None, *, low_open=False, high_open=False) -> float:
    """Return ``float(value)`` if it is a finite real in the stated interval, else raise ValueError."""
    if not _is_real(value) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    value = float(value)
    lo_ok = low is None or (value > low if low_open else value >= low)
    hi_ok = high is None or (value < high if high_open else value <= high)
    if not (lo_ok and hi_ok):
        lo = "-inf" if low is None else repr(low)
        hi = "inf" if high is None else repr(high)
        interval = ("(" if low_open or low is None else "[") + f"{lo}, {hi}" + (")" if high_open or high is None else "]")
        raise ValueError(f"{name} must be in {interval}, got {value!r}")
    return value


def check_positive(name: str, value) -> float:
    return check_real(name, value, 0.0, None, low_open=True)


def check_nonnegative(name: str, value) -> float:
    return check_real(name, value, 0.0, None)


def check_int(name: str, value, low=None, high=None) -> int:
    """Return ``int(value)`` if it is an integer in [low, high], else raise ValueError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if _is_real(value) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value}")
    return value


def check_sigma(sigma, name: str = "--sigma") -> float:
    """A Gaussian width: a finite number > 0 whose square, and 1 / (2 sigma^2), are finite and
    nonzero in float64 (so the kernel exp(-||x - x'||^2 / (2 sigma^2)) is defined)."""
    if not _is_real(sigma) or not np.isfinite(sigma) or sigma <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {str(sigma)[:200]}")
    sigma = float(sigma)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        sq = np.float64(sigma) * np.float64(sigma)
        gamma = 1.0 / (2.0 * sq) if sq > 0 else np.inf
    if not (np.isfinite(sq) and sq > 0 and np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"{name} = {sigma!r}: sigma^2 must be a finite positive float64 "
                         "(between about 1e-154 and 1e154)")
    return sigma


#: rows a learner buffers before it fixes its kernel width (okl.kernels.WIDTH_WINDOW; repeated
#: here so that this module imports nothing from okl)
_WIDTH_WINDOW = 50
#: budget assumed when none is given (the learners' defaults are 100 or less)
_DEFAULT_BUDGET = 100


def _available_memory() -> int:
    try:
        import os

        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 1 << 40


def check_state_memory(budget: int | None, dim: int | None) -> None:
    """Refuse a budget B and input dimension D whose learner state cannot fit in memory: the
    largest learners keep B x D support vectors, B x B matrices and a 50 x D width window, about
    8 (B (D + 2B) + 50 D) bytes; this must be below the machine's physical memory."""
    B = _DEFAULT_BUDGET if budget is None else int(budget)
    D = 1 if dim is None else int(dim)
    need = 8 * (B * (D + 2 * B) + _WIDTH_WINDOW * D)
    have = _available_memory()
    if need > have:
        what = " x ".join(part for part in (f"budget {budget}" if budget is not None else "",
                                            f"dimension {dim}" if dim is not None else "") if part)
        raise ValueError(f"{what} needs about {need / 2**30:.3g} GiB of learner state, more than the "
                         f"{have / 2**30:.3g} GiB of memory; lower it")


def check_bool(name: str, value) -> bool:
    """A True/False hyperparameter (NumPy booleans accepted; 0/1 and strings are not)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_choice(name: str, value, choices) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {value!r}")
    return value


def check_random_state(random_state) -> int | None:
    if random_state is None:
        return None
    return check_int("random_state", random_state, 0, 2**63 - 1)


#: largest feature magnitude accepted: squared distances and inner products must stay finite in
#: float64 (1e100^2 = 1e200 < 1.8e308); the papers' features are scaled to [0, 1].
MAX_ABS_FEATURE = 1e100


_SHAPE_TEXT = {1: "one example (1-D)", 2: "2-D (rows x features)"}


def as_float64(x, what: str, ndim: int, contiguous: bool = False) -> np.ndarray:
    """``x`` as a float64 array of ``ndim`` dimensions (C-contiguous if asked), or a ValueError
    naming ``what`` (the shared first step of the input checks). Complex values are refused:
    casting would drop the imaginary part with only a NumPy warning."""
    if np.iscomplexobj(x):
        raise ValueError(f"{what} is complex; okl learns from real features (pass its .real or .imag, or "
                         "both as separate columns)")
    try:
        x = (np.ascontiguousarray if contiguous else np.asarray)(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} must be numeric: {exc}") from None
    if x.ndim != ndim:
        raise ValueError(f"{what} must be {_SHAPE_TEXT[ndim]}, got shape {x.shape}")
    return x


def check_vector(x, dim: int | None, what: str = "x", levels=None) -> np.ndarray:
    """A single example: 1-D, finite, float64, of the expected dimension. A sparse row (one row of
    a SciPy sparse matrix) is made dense. ``levels``: columns of category codes (any finite number
    names a level), exempt from the magnitude bound."""
    if hasattr(x, "toarray"):
        if len(x.shape) != 2 or x.shape[0] != 1:
            raise ValueError(f"{what} must be one example: a sparse matrix of shape (1, features), got "
                             f"shape {x.shape}")
        check_sparse_indices(x, what)
        x = x.toarray()[0]
    x = as_float64(x, what, 1)
    if x.shape[0] == 0:
        raise ValueError(f"{what} has no features (0 values); an example needs at least one")
    if dim is not None and x.shape[0] != dim:
        raise ValueError(f"{what} has {x.shape[0]} features but the learner was started with {dim}")
    _check_values(x, what, "column", "features", levels)
    return x


def _check_values(v: np.ndarray, what: str, place: str, kind: str, levels=None) -> None:
    """ValueError naming the first non-finite entry of the 1-D ``v``, or the first beyond
    :data:`MAX_ABS_FEATURE` in magnitude (squares and products must stay finite) outside the
    ``levels`` entries, by its ``place`` (column, row) and index."""
    bad = np.flatnonzero(~np.isfinite(v))
    if bad.size:
        raise ValueError(f"{what} has a non-finite value {float(v[bad[0]])!r} at {place} {bad[0]}")
    big = np.abs(v) > MAX_ABS_FEATURE
    if levels:  # (a column past the width is refused where the columns are checked against it)
        big[[c for c in levels if c < v.shape[0]]] = False
    big = np.flatnonzero(big)
    if big.size:
        raise ValueError(f"{what} has value {float(v[big[0]])!r} at {place} {big[0]}; {kind} must be "
                         f"at most {MAX_ABS_FEATURE:g} in magnitude (scale them, e.g. to [0, 1])")


def check_matrix(X, dim: int | None, what: str = "X", sparse: bool = False, levels=None):
    """A batch of examples: 2-D, finite, float64 (C-contiguous), of the expected width. A SciPy
    sparse matrix is made dense, or with ``sparse`` (the paths that take sparse rows: ``run``,
    ``learn_many``) becomes :class:`okl._sparse.SparseRows` with its values checked, O(nnz).
    ``levels``: columns of category codes, exempt from the magnitude bound (dense rows only)."""
    if is_sparse_matrix(X):
        if sparse:
            return _check_sparse(X, dim, what)
        check_sparse_indices(X, what)
        X = X.toarray()
    X = as_float64(X, what, 2, contiguous=True)
    if X.shape[1] == 0 and X.shape[0]:
        raise ValueError(f"{what} has {X.shape[0]} rows but no features (0 columns)")
    if dim is not None and X.shape[1] != dim:
        raise ValueError(f"{what} has {X.shape[1]} features but the learner was started with {dim}")
    finite = np.isfinite(X)
    if not finite.all():
        r, c = np.argwhere(~finite)[0]
        raise ValueError(f"{what} has a non-finite value {float(X[r, c])!r} at row {r}, column {c}")
    big = np.abs(X) > MAX_ABS_FEATURE
    if levels and X.ndim == 2:
        big[:, [c for c in levels if c < X.shape[1]]] = False
    if big.any():
        r, c = np.argwhere(big)[0]
        raise ValueError(f"{what} has value {float(X[r, c])!r} at row {r}, column {c}; features must be "
                         f"at most {MAX_ABS_FEATURE:g} in magnitude (scale them, e.g. to [0, 1])")
    return X


def check_sparse_indices(X, what: str = "X") -> None:
    """ValueError unless the index arrays of a SciPy sparse matrix are within its shape: SciPy builds
    ``csr_matrix((data, indices, indptr))`` without checking them, and a negative column index would
    be read as a column counted from the end, one past the width as a raw IndexError. O(nnz); the
    row pointers of CSR / CSC must start at 0, never decrease and end within the stored entries."""
    fmt = getattr(X, "format", None)
    if fmt in ("csr", "csc"):
        ptr, idx = np.asarray(X.indptr), np.asarray(X.indices)
        lines, width = (X.shape[0], X.shape[1]) if fmt == "csr" else (X.shape[1], X.shape[0])
        if ptr.shape != (lines + 1,) or ptr[0] != 0 or np.any(np.diff(ptr) < 0) or ptr[-1] > idx.shape[0] \
                or ptr[-1] > np.asarray(X.data).shape[0]:
            raise ValueError(f"{what} is a malformed {fmt.upper()} matrix: its index pointer (indptr) must have "
                             f"{lines + 1} entries, start at 0, never decrease and end within the stored entries")
        pairs = [(idx[:ptr[-1]], "column" if fmt == "csr" else "row", width, ptr)]
    elif fmt == "coo":
        pairs = [(np.asarray(X.row), "row", X.shape[0], None), (np.asarray(X.col), "column", X.shape[1], None)]
    else:
        return  # (the other formats check their indices as they are built)
    for idx, kind, width, ptr in pairs:
        bad = np.flatnonzero((idx < 0) | (idx >= width))
        if bad.size:
            p = int(bad[0])
            where = "" if ptr is None or kind == "row" else \
                f" in row {int(np.searchsorted(ptr, p, side='right') - 1)}"
            raise ValueError(f"{what} has {kind} index {int(idx[p])}{where} (stored entry {p}); {kind} indices "
                             f"must be in 0..{width - 1} (the matrix has {width} {kind}s)")


def _check_sparse(X, dim: int | None, what: str) -> SparseRows:
    """:func:`check_matrix` of a SciPy sparse matrix, kept sparse: its shape, and every stored value
    finite and at most MAX_ABS_FEATURE in magnitude (the first bad one named by row and column)."""
    if len(X.shape) != 2:
        raise ValueError(f"{what} must be {_SHAPE_TEXT[2]}, got shape {X.shape}")
    if np.iscomplexobj(getattr(X, "data", np.zeros(0))):
        raise ValueError(f"{what} is complex; okl learns from real features")
    check_sparse_indices(X, what)
    try:
        rows = SparseRows.from_scipy(X)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} must be numeric: {exc}") from None
    n, d = rows.shape
    if d == 0 and n:
        raise ValueError(f"{what} has {n} rows but no features (0 columns)")
    if dim is not None and d != dim:
        raise ValueError(f"{what} has {d} features but the learner was started with {dim}")
    bad = np.flatnonzero(~(np.abs(rows.data) <= MAX_ABS_FEATURE))
    if bad.size:
        p = int(bad[0])
        r, c, v = int(np.searchsorted(rows.indptr, p, side="right") - 1), int(rows.indices[p]), float(rows.data[p])
        if not np.isfinite(v):
            raise ValueError(f"{what} has a non-finite value {v!r} at row {r}, column {c}")
        raise ValueError(f"{what} has value {v!r} at row {r}, column {c}; features must be at most "
                         f"{MAX_ABS_FEATURE:g} in magnitude (scale them, e.g. to [0, 1])")
    return rows


def check_targets(y, task: str, n: int | None = None, what: str = "y") -> np.ndarray:
    """Labels -1/+1 for classification, finite reals for regression; anything else is a
    ValueError naming the labels found (and what to use: a mapping to -1/+1, the adapters that
    take any two labels, one-vs-rest for more than two classes)."""
    try:
        y = np.asarray(y, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(_label_message(y, what, task, numeric=False)) from None
    if n is not None and y.shape[0] != n:
        raise ValueError(f"{what} has {y.shape[0]} entries but X has {n} rows")
    # (a target beyond MAX_ABS_FEATURE makes its squared loss overflow to inf: 1e300^2)
    _check_values(y, what, "row", "targets")
    if task == "classification":
        bad = np.flatnonzero((y != 1.0) & (y != -1.0))
        if bad.size:
            raise ValueError(_label_message(y, what, task, numeric=True, row=int(bad[0])))
    return y


def _label_message(y, what: str, task: str, numeric: bool, row: int | None = None) -> str:
    """The error for labels that are not -1/+1 (classification) or not numbers: the labels
    found, and the way to go on."""
    values = np.asarray(y, dtype=object).reshape(-1)
    try:
        distinct = sorted(set(values.tolist()), key=lambda v: (str(type(v)), v))
    except TypeError:
        distinct = list(dict.fromkeys(map(repr, values.tolist())))
    shown = ", ".join(repr(v) for v in distinct[:8]) + (", ..." if len(distinct) > 8 else "")
    many = (f"; {len(distinct)} classes: learn them with okl.MultiClass(learner_name) (one head per "
            "class, any labels), or okl.sklearn.OKLClassifier / okl.river.OKLRiverClassifier, which take "
            "any labels")
    two = ("; okl.sklearn.OKLClassifier, okl.river.OKLRiverClassifier and okl.MultiClass take any labels, "
           "or map them yourself, e.g. y = np.where(labels == positive, 1.0, -1.0)")
    if not numeric:
        head = (f"{what} holds labels that are not numbers ({len(distinct)} distinct: {shown}); okl learners "
                "take labels -1/+1 (classification) or real-valued targets (regression)")
        return head + (two if len(distinct) <= 2 else many)
    head = f"classification labels must be -1 or +1, got {float(values[row])!r} at row {row} (labels found: {shown})"
    ys = np.asarray(y, dtype=np.float64)
    if not np.all(ys == np.round(ys)):
        return head + " (for real-valued targets use a regression loss such as loss='squared')"
    return head + (two if len(distinct) <= 2 else many)


def check_target(y, task: str) -> float:
    """One label/target (``learn_one``), checked as :func:`check_targets` checks a column: a
    finite number, at most MAX_ABS_FEATURE in magnitude (one target of 1e300 would make every
    later prediction overflow), -1/+1 for classification."""
    if not _is_real(y) and not (isinstance(y, np.ndarray) and y.ndim == 0):
        raise ValueError(f"y must be a number, got {y!r}")
    value = float(y)
    if math.isfinite(value) and abs(value) > MAX_ABS_FEATURE:
        raise ValueError(f"target {value!r} is beyond {MAX_ABS_FEATURE:g} in magnitude, as run() refuses it "
                         "(scale the targets, e.g. to [0, 1]); nothing was learned")
    return float(check_targets(np.array([y]), task)[0])
