"""The per-feature input scale every learner learns from the stream (``scale``, on by default).

Why: one isotropic Gaussian width cannot serve features whose scales differ by orders of
magnitude. On raw cod-rna one column holds 98.8 % of the variance and the kernel sees only that
column; a column multiplied by 1e4 blinds it to all the others, and a constant offset of 1e6 on one
column sends a linear learner to the majority rate. Scaling the features to [0, 1] over the whole
file (what ``okl.load_dataset`` does, as the papers did) needs the whole file, i.e. hindsight.

The rule (no hindsight, no labels): in the window in which a learner fixes its kernel width (its
first :data:`~okl.kernels.WIDTH_WINDOW` rows, buffered and predicted by the running label mean)
it also fixes, for every feature j, a centre c_j and a spread s_j, and from then on every row, the
buffered ones included, enters the kernel, the sketch and the linear model as

    x_j -> (x_j - c_j) / s_j.

``scale="range"``: c_j = min and s_j = max - min over the window, i.e. the [0, 1] scaling of the
loaders, estimated on the window. ``scale=None``: features as given (the papers' tables pass this; their files are
scaled by the loader as the papers did). ``scale="auto"`` (the default of every learner):
``"range"`` when the learner chooses its width from the stream (no ``kernel`` given; the linear
learner, which has none), None when a kernel is given, because a given width is a length in the
units of the features as given (``kernel=RBF(sigma=3)`` on standardised data keeps its meaning);
pass ``scale="range"`` with a kernel to have the width read in scaled units.

A feature that is constant in the window (sparse one-hot columns are mostly absent from the first
rows) has c_j = its window value and s_j *pending*: it maps to 0 while it keeps that value, and
the first row where it differs fixes s_j = |x_j - c_j|, so that row's value maps to +-1 (a one-hot
column then enters as 0 / 1, exactly as the [0, 1]-scaled file gives it). Every earlier row had
x_j = c_j, which maps to 0 whatever s_j is, so fixing s_j late is the same as having known it from
the start: nothing learned before is re-interpreted, and the value neither blows up (a 1e6 on a
column that was 0 enters as 1, later values at most as 2: the clip below) nor is ignored. ``predict_one`` on a row that would fix a pending
spread uses the value that row would fix (+-1) without storing it; ``learn_one`` stores it.

Properties (tests/test_scaling.py): a per-feature positive affine map x_j -> a_j x_j + b_j of the
input leaves every decision unchanged up to rounding (c_j and s_j follow the map: a_j c_j + b_j and
a_j s_j), for every registered learner, whatever a_j (1e-3 .. 1e4) and b_j; raw and [0, 1]-scaled
copies of a file therefore give the same results; a block transformed at once equals the same rows
transformed one at a time (a pending spread is fixed by the first deviating row in either case).

Why the window range (measured with auto, 2 permutations, first 30,000 rows; against the
standard deviation, which is no longer offered): the range reproduces the loaders' [0, 1] scaling
that okl's default widths and steps were measured on, and was better on 9 of 15 sets, by up to
0.65 points or 11 % (codrna 3.94 against 4.10 %, german 27.05 / 27.70, parkinson 0.0234 /
0.0263); the standard deviation was better on the other 6 by at most 0.39 points (svmguide3
19.63 / 20.02, adult 14.97 / 15.09). It also leaves a 0 / 1 column
0 / 1, where a standard deviation inflates a rare one (active in 2 % of the window: s = 0.14).
Why the clip at one range beyond [0, 1] (:data:`CLIP`): 50 rows underestimate the range of a
heavy-tailed feature, and without a bound one later value 50 window ranges out dominates every
kernel distance. Measured on the staged files (auto; none / log beyond the range / clip):
spambase 10.38 / 9.30 / 8.92 %, cpusmall 0.00375 / 0.00323 / 0.00317, pol 5.22 / 5.17 / 4.97;
within 0.1 points or 2 % of each other on parkinson, ailerons, elevators and ijcnn1.

What it costs (docs/results/raw-features.md): on the staged files, which the loader already scaled
over the whole file, the window's range re-weights heavy-tailed features against the whole-file
range (on cpusmall the window holds 7-99 % of a column's range), and auto lost on cpusmall,
parkinson and pol while gaining on ijcnn1, adult and svmguide3; on a time-ordered stream whose
first rows come from one region (cadata in file order) the window reads the later regions
poorly (NOGD 0.0556 against 0.0438 on the whole-file scaling).

Cost: O(d) per row (one compiled pass that also checks the row's values); the state is two
length-d vectors, saved in model files and ``okl stream`` checkpoints (``scale_center_``,
``scale_spread_``) and reported in ``Trace.diagnostics`` (``input_scale``, ``scale_pending``).
"""

from __future__ import annotations

import numpy as np

from okl._jit import jit

#: the maps a learner's ``scale`` hyperparameter can name (module docstring); the first is the default
SCALE_RULES = ("symlog", "range")


def check_scale(scale) -> str | None:
    """A learner's ``scale`` hyperparameter: ``"auto"`` (default), ``"symlog"``, ``"range"`` or None."""
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


def window_scale(X: np.ndarray, rule: str) -> tuple[np.ndarray, np.ndarray]:
    """(centre, spread) of every column of the window ``X`` under ``rule`` (module docstring): the
    spread is the window's range; the centre its median (``"symlog"``) or minimum (``"range"``).
    A column whose values are all equal gets spread 0 (pending) and its value as centre."""
    X = np.asarray(X, dtype=float)
    if rule not in SCALE_RULES:
        raise ValueError(f"unknown scale rule {rule!r}")
    lo, hi = X.min(axis=0), X.max(axis=0)
    spread = hi - lo
    spread[~(spread > 0.0) | ~np.isfinite(spread)] = 0.0
    center = np.median(X, axis=0) if rule == "symlog" else lo
    center = np.where(spread > 0.0, center, lo)  # a constant column: its value, exactly
    return center, spread


#: ``"range"``: how far beyond the window's [0, 1] a scaled value may go, in window ranges
CLIP = 1.0
#: ``"symlog"``: the knee, in window ranges from the median, where the map turns logarithmic
KNEE = 0.5
_SYMLOG_NORM = 1.0 / np.log1p(1.0 / KNEE)  # so that z = +-1 (one window range) maps to +-1


@jit
def scale_rows(X, center, spread, commit, bound, symlog, out):
    """out[i, j] = phi((X[i, j] - center[j]) / spread[j]) over the rows of X, after checking each
    row's values (finite, at most ``bound`` in magnitude); phi(z) = sign(z) ln(1 + |z| / KNEE) /
    ln(1 + 1 / KNEE) with ``symlog``, else z clipped to [-CLIP, 1 + CLIP]. A pending feature
    (spread 0) maps to 0 while x_j equals its centre; the first differing row fixes spread[j] =
    |x_j - c_j| when ``commit`` (the value then maps to +-1), and without ``commit`` maps to +-1
    without storing anything. Returns the number of rows done: a row that fails the check stops
    the pass before anything of it is stored."""
    n, d = X.shape
    for i in range(n):
        for j in range(d):
            if not abs(X[i, j]) <= bound:
                return i
        for j in range(d):
            v = X[i, j] - center[j]
            s = spread[j]
            if s == 0.0:
                if v == 0.0:
                    out[i, j] = 0.0
                    continue
                if commit:
                    spread[j] = abs(v)
                    s = spread[j]
                else:
                    out[i, j] = 1.0 if v > 0.0 else -1.0
                    continue
            z = v / s
            if symlog:
                out[i, j] = np.log1p(abs(z) / KNEE) * _SYMLOG_NORM * (1.0 if z >= 0.0 else -1.0)
            else:
                out[i, j] = min(max(z, -CLIP), 1.0 + CLIP)
    return n


__all__ = ["CLIP", "KNEE", "SCALE_RULES", "check_scale", "scale_rule", "window_scale", "scale_rows"]
