"""The per-feature input map every learner learns from the stream (``scale``, on by default).

Why: one isotropic Gaussian width cannot serve features whose scales differ by orders of
magnitude. On raw cod-rna one column holds 98.8 % of the variance and the kernel sees only that
column; a column multiplied by 1e4 blinds it to all the others, and a constant offset of 1e6 on one
column sends a linear learner to the majority rate. Scaling the features to [0, 1] over the whole
file (what ``okl.load_dataset`` does, as the papers did) needs the whole file, i.e. hindsight.

The rule (no hindsight, no labels): in the window in which a learner fixes its kernel width (its
first :data:`~okl.kernels.WIDTH_WINDOW` rows, buffered and predicted by the running label mean)
it also fixes, for every feature j, a centre c_j and a spread s_j, and from then on every row, the
buffered ones included, enters the kernel, the sketch and the linear model as

    z_j = (x_j - c_j) / s_j,    x_j -> phi(z_j).

``scale="symlog"`` (what ``"auto"`` picks): c_j = the window's median, s_j = its range (max -
min), and phi(z) = sign(z) ln(1 + |z| / k) / ln(1 + 1 / k) with the knee k = :data:`KNEE` = 1/2:
close to linear within half a window range of the median, logarithmic beyond, phi(+-1) = +-1. A
value far outside the window keeps its order but cannot dominate the kernel distances (1e6
window ranges out enters as 13.2), so no clip is needed. ``scale="range"``: c_j = min, s_j = range,
phi = identity clipped to [-1, 2] (:data:`CLIP`): the loaders' [0, 1] scaling estimated on the
window. ``scale="affine"``: symlog's centre and spread without its curvature, phi(z) = T clip(z,
-2, 2) with T = phi_symlog'(0) = 1 / (k ln(1 + 1 / k)) = 1.82 (:data:`AFFINE_SLOPE`: the tangent
of the symlog map at the median, so both maps agree on the bulk of the data) and the clip at
1 + :data:`CLIP` = 2 window ranges. It is for models that are linear in their inputs: a linear
concept stays linear under it (under symlog a linear learner fits a curved boundary; River's
Hyperplane: 90.2 % against 92.4 %, docs/results/auto-pool.md), and it is what ``auto``'s linear
members of the affine family see (:func:`affine_from_symlog`). ``scale=None``: features as given
(the papers' tables pass this; their files are scaled by the loader as the papers did).
``scale="auto"`` (the default of every learner): ``"symlog"`` when the learner chooses its width
from the stream (no ``kernel`` given; the linear learner, which has none), None when a kernel is
given, because a given width is a length in the units of the
features as given (``kernel=RBF(sigma=3)`` on standardised data keeps its meaning); pass
``scale="symlog"`` with a kernel to have the width read in mapped units.

A feature that is constant in the window (sparse one-hot columns are mostly absent from the first
rows) has c_j = its window value and s_j *pending*: it maps to 0 while it keeps that value, and
the first row where it differs fixes s_j = |x_j - c_j|, so that row's value maps to +-1 (a one-hot
column then enters as 0 / 1, exactly as the [0, 1]-scaled file gives it). Every earlier row had
x_j = c_j, which maps to 0 whatever s_j is, so fixing s_j late is the same as having known it from
the start: nothing learned before is re-interpreted, and the value neither blows up (a 1e6 on a
column that was 0 enters as 1, later values logarithmically beyond) nor is ignored. ``predict_one``
on a row that would fix a pending spread uses the value that row would fix (+-1) without storing
it; ``learn_one`` stores it.

Properties (tests/test_scaling.py, and a generic check over every registered learner): a
per-feature positive affine map x_j -> a_j x_j + b_j of the input leaves every decision unchanged
up to rounding (c_j and s_j follow the map: a_j c_j + b_j and a_j s_j, so z_j does not change),
whatever a_j (1e-3 .. 1e4) and b_j; raw and [0, 1]-scaled copies of a file therefore give the same
results; a block transformed at once equals the same rows transformed one at a time (a pending
spread is fixed by the first deviating row in either case).

Why symlog (docs/results/scale-rules.md, ``docs/results/scripts/scale_rules.py``: 16 staged sets,
5 learners, 3 permutations, first 50,000 rows): 50 rows cannot tell a feature's whole range, and
the features where that matters are the heavy-tailed ones (counts, amounts): on cpusmall the window
holds 7-99 % of a column's range, on spambase 1-53 %. The window range then blows their bulk up,
and a clip at a fixed number of ranges cuts their tails off (every large value becomes the same
value). A logarithm beyond the knee keeps the tail's order at a bounded cost, and the median
centres the part of the feature where the data are (a linear model then needs no large bias).
Against ``"range"`` it was better for auto on 12 of 16 sets, NOGD 14, FORKS 13, FOGD 16 and
linear 15 (by up to 0.6 points for auto on ijcnn1 and spambase, 4.7 for linear on elevators; at
most 0.4 points worse: auto on german and elevators). Tried and measured worse (auto, 16 sets): no bound beyond the range,
the standard deviation or the interquartile range as unit, a running range updated every row (the
model's coordinates then drift: ijcnn1 6.12 against 3.95 %), and the knee at 1/4, 1 or 2 ranges
(mean change against the whole-file scaling +1.3, +1.9, +3.0 % against +0.9 % at 1/2).

What it cannot do (measured): reproduce the whole-file [0, 1] scaling where a heavy tail
decides which features the kernel sees. On cpusmall and parkinson, whose whole-file scaling
shrinks the bulk of their heavy-tailed columns, auto loses 23 % and 39 % against the file scaled
over all of its rows; any map fixed from the first rows loses there (the range of the first 1,000
rows, taken with hindsight: +5 % and +9 %; rebuilding the model from the buffered rows at 100,
200, ..., 6,400 rows: +8 % and +6 %); only windows of about 5,000 rows, i.e. most of these files,
get within 2 %. Elsewhere the window is as good or better (ijcnn1 3.33 % against 4.84 % with the
whole-file scaling, spambase 8.34 against 9.05).

Cost: O(d) per row (one compiled pass that also checks the row's values); the state is two
length-d vectors, saved in model files and ``okl stream`` checkpoints (``scale_center_``,
``scale_spread_``) and reported in ``Trace.diagnostics`` (``input_scale``, ``scale_pending``).
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np

from okl._jit import jit

#: the maps a learner's ``scale`` hyperparameter can name (module docstring); the first is the default
SCALE_RULES = ("symlog", "range", "affine")
#: the compiled code of each map (:func:`scale_row`'s ``rule``; 0 is no map)
SYMLOG_CODE, RANGE_CODE, AFFINE_CODE = 1, 2, 3
RULE_CODES = {"symlog": SYMLOG_CODE, "range": RANGE_CODE, "affine": AFFINE_CODE}


def check_scale(scale) -> str | None:
    """A learner's ``scale`` hyperparameter: ``"auto"`` (default), ``"symlog"``, ``"range"``,
    ``"affine"`` or None."""
    if scale is None or (isinstance(scale, str) and scale in ("auto", *SCALE_RULES)):
        return scale
    raise ValueError(f"scale must be one of 'auto', {', '.join(map(repr, SCALE_RULES))} or None "
                     f"(features as given), got {scale!r}")


def scale_rule(scale: str | None, kernel_given: bool) -> str | None:
    """The map a learner uses: ``"auto"`` is ``"symlog"`` when the learner also chooses its kernel
    width from the stream (no kernel given, or no kernel at all: the linear learner), and None when
    a kernel was given (its width is in the units of the features as given)."""
    if scale == "auto":
        return None if kernel_given else SCALE_RULES[0]
    return scale


def window_scale(X: np.ndarray, rule: str, sparse: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(centre, spread) of every column of the window ``X`` under ``rule`` (module docstring): the
    spread is the window's range; the centre its median (``"symlog"``, ``"affine"``) or minimum
    (``"range"``).
    A column whose values are all equal gets spread 0 (pending) and its value as centre.

    ``sparse`` (the window came as sparse rows, :mod:`okl._sparse`): zeros stay zero, so the centre
    is 0 and the spread the column's largest magnitude |x_j| in the window (scikit-learn's
    MaxAbsScaler: centring would make every absent entry non-zero); a column that is 0 throughout
    is pending as above, and its first non-zero value maps to +-1; ``X`` may then be
    :class:`okl._sparse.SparseRows` (O(nnz) besides the two d-vectors: no pass over a wide window)."""
    if rule not in SCALE_RULES:
        raise ValueError(f"unknown scale rule {rule!r}")
    if sparse and hasattr(X, "indptr"):  # (SparseRows: max |x_j| over the non-zeros, 0 elsewhere)
        spread = np.zeros(X.shape[1])
        finite = np.isfinite(X.data)  # (checked rows are finite; no d-long temporary either way)
        np.maximum.at(spread, X.indices[finite], np.abs(X.data[finite]))
        return np.zeros(X.shape[1]), spread
    X = np.asarray(X, dtype=float)
    if sparse:  # (max |x_j| as two reductions: no n x d temporary for a wide window)
        spread = np.maximum(X.max(axis=0), -X.min(axis=0)) if X.shape[0] else np.zeros(X.shape[1])
        spread[~np.isfinite(spread)] = 0.0
        return np.zeros(X.shape[1]), spread
    lo, hi = X.min(axis=0), X.max(axis=0)
    spread = hi - lo
    spread[~(spread > 0.0) | ~np.isfinite(spread)] = 0.0
    center = lo if rule == "range" else np.median(X, axis=0)
    center = np.where(spread > 0.0, center, lo)  # a constant column: its value, exactly
    return center, spread


#: ``"range"``: how far beyond the window's [0, 1] a scaled value may go, in window ranges
#: (``"affine"``: 1 + CLIP window ranges either side of the median)
CLIP = 1.0
#: ``"symlog"``: the knee, in window ranges from the median, where the map turns logarithmic
KNEE = 0.5
# ln(1 + 1 / KNEE) in decimal arithmetic, correctly rounded: NumPy's log1p is the CPU's vector code (its
# baseline and AVX-512 answers differ by an ulp here), and compiled code freezes this value into machine
# code that a cache shares between processes (tests/test_machine_independence.py)
_SYMLOG_LOG = float((1 + 1 / Decimal(KNEE)).ln())
_SYMLOG_NORM = 1.0 / _SYMLOG_LOG  # so that z = +-1 (one window range) maps to +-1
#: ``"affine"``: the slope of the symlog map at the median, 1 / (KNEE ln(1 + 1 / KNEE))
AFFINE_SLOPE = float(_SYMLOG_NORM / KNEE)


@jit
def _map_value(z, rule):
    """phi(z) of the map with code ``rule`` (module docstring) for z = (x - c) / s."""
    if rule == SYMLOG_CODE:
        return np.log1p(abs(z) / KNEE) * _SYMLOG_NORM * (1.0 if z >= 0.0 else -1.0)
    if rule == AFFINE_CODE:
        return AFFINE_SLOPE * min(max(z, -1.0 - CLIP), 1.0 + CLIP)
    return min(max(z, -CLIP), 1.0 + CLIP)


@jit
def affine_from_symlog(v):
    """The ``"affine"`` value of a feature from its ``"symlog"`` value v (the same window's centre
    and spread): z = sign(v) k (exp(|v| ln(1 + 1 / k)) - 1) undoes the symlog map (exact up to
    rounding: a few ulp), then T clip(z, -2, 2). ``auto`` maps its input once, with symlog, for
    every member; its members of the affine family see this (:func:`okl.learners.linear.linear_features`)."""
    z = KNEE * np.expm1(abs(v) * _SYMLOG_LOG)
    return AFFINE_SLOPE * min(z, 1.0 + CLIP) * (1.0 if v >= 0.0 else -1.0)


@jit
def scale_row(x, center, spread, commit, rule, out):
    """out[j] = phi((x[j] - center[j]) / spread[j]) for one row whose values were checked, phi the
    map with code ``rule`` (:data:`RULE_CODES`; the arithmetic of :func:`scale_rows`, which calls
    it row by row; the per-event path of :mod:`okl.engine.fastpath` calls it on single rows, so
    both give the same bits)."""
    for j in range(x.shape[0]):
        out[j] = scaled_value(x[j] - center[j], j, spread, commit, rule)


@jit
def scaled_value(v, j, spread, commit, rule):
    """phi(v / spread[j]) for v = x_j - c_j (:func:`scale_row`, :func:`scale_sparse_rows`): a pending
    spread (0) maps 0 to 0 and fixes spread[j] = |v| when ``commit``, else maps v to +-1."""
    s = spread[j]
    if s == 0.0:
        if v == 0.0:
            return 0.0
        if not commit:  # phi(+-1): +-1 under symlog and range (as the commit below gives it, to 2^-52)
            return (AFFINE_SLOPE if rule == AFFINE_CODE else 1.0) * (1.0 if v > 0.0 else -1.0)
        spread[j] = abs(v)
        s = spread[j]
    return _map_value(v / s, rule)


@jit
def scale_rows(X, center, spread, commit, bound, rule, out):
    """out[i, j] = phi((X[i, j] - center[j]) / spread[j]) over the rows of X, after checking each
    row's values (finite, at most ``bound`` in magnitude); phi the map with code ``rule``
    (:data:`RULE_CODES`, module docstring). A pending feature (spread 0) maps to 0 while x_j
    equals its centre; the first differing row fixes spread[j] = |x_j - c_j| when ``commit``
    (the value then maps to phi(+-1)), and without ``commit`` maps to phi(+-1) without storing
    anything. Returns the number of rows done: a row that fails the check stops the pass before
    anything of it is stored."""
    n, d = X.shape
    for i in range(n):
        for j in range(d):
            if not abs(X[i, j]) <= bound:
                return i
        scale_row(X[i], center, spread, commit, rule, out[i])
    return n


@jit
def scale_sparse_rows(indptr, indices, data, spread, commit, bound, rule, out):
    """:func:`scale_rows` of sparse rows (:class:`okl._sparse.SparseRows`: row pointers, column
    indices, non-zero values) under a map with centre 0 in every column (``window_scale(...,
    sparse=True)``): out[p] = phi(data[p] / spread[indices[p]]), the values of the dense rows'
    map at the non-zeros (a zero maps to phi(0) = 0), pending spreads fixed by the first non-zero
    as there. O(nnz). Returns the number of rows done (a row with a value beyond ``bound`` stops
    the pass before anything of it is stored)."""
    n = indptr.shape[0] - 1
    for i in range(n):
        for p in range(indptr[i], indptr[i + 1]):
            if not abs(data[p]) <= bound:
                return i
        for p in range(indptr[i], indptr[i + 1]):
            out[p] = scaled_value(data[p] - 0.0, indices[p], spread, commit, rule)
    return n


__all__ = ["AFFINE_SLOPE", "CLIP", "KNEE", "RULE_CODES", "SCALE_RULES", "affine_from_symlog", "check_scale",
           "scale_rule", "scaled_value", "window_scale", "scale_row", "scale_rows", "scale_sparse_rows"]
