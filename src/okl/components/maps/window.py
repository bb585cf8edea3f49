"""The window map: the kernel smoother over the last B rows and its store step (components
``"window"`` and ``"store"`` of :mod:`okl.components`). O(B d) a round."""

from __future__ import annotations

import numpy as np

from okl._compiled import column_norms_t, distances_t, distances_t_sparse, jit, row_norm
from okl._jit import jit_inline
from okl._vecmath import exp_neg_scaled
from okl.components.columns import BUDGET, COUNTER, KA, KIND, M, NOTHING, NSEEN, O_A, O_KB, O_NRM, O_W, row_is_sparse


@jit
def window_decision(kind, a, LT, Y, m, x, s, nk, out):
    """The smoother's decision on x over the m stored rows (their transposes LT, d x B, and labels
    Y): one output returned (``nk`` = 0), or K = ``nk`` outputs written to ``out`` (Y holds class
    indices); ``s`` (length >= m) is work. The weights are exp(-a (r_i - r_min)), r_i the squared
    (Gaussian) or L1 (Laplacian) distance to row i: the kernel values divided by the nearest
    row's, so the sum is >= 1 (:func:`window_from_distances`)."""
    if m == 0:
        for o in range(nk):
            out[o] = 0.0
        return 0.0
    distances_t(kind, LT, m, x, s)
    return window_from_distances(a, Y, m, s, nk, out)


@jit
def window_from_distances(a, Y, m, s, nk, out):
    """:func:`window_decision` from the distances r_i to the m >= 1 stored rows in s (overwritten
    with the weights); a sparse row's come from the stored rows' norms
    (:func:`okl._compiled.distances_t_sparse`)."""
    near = s[0]
    for j in range(1, m):
        if s[j] < near:
            near = s[j]
    for j in range(m):
        s[j] -= near
    exp_neg_scaled(s, a, m)
    total = 0.0
    if nk == 0:
        num = 0.0
        for j in range(m):
            total += s[j]
            num += s[j] * Y[j]
        return num / total
    for o in range(nk):
        out[o] = 0.0
    for j in range(m):
        total += s[j]
        out[int(Y[j])] += s[j]
    for o in range(nk):
        out[o] = (2.0 * out[o] - total) / total
    return 0.0


@jit
def window_store(LT, Y, m, pos, x, y):
    """Store row x with label / target y at position ``pos`` (the oldest row once the window is
    full); returns the new (m, pos)."""
    for i in range(x.shape[0]):
        LT[i, pos] = x[i]
    Y[pos] = y
    B = Y.shape[0]
    return min(m + 1, B), (pos + 1) % B


# Member functions in auto's engine (the layout of :mod:`okl.components.columns`): the stored rows
# transposed (d x B) at ``O_A``, their labels at ``O_W``, the work space at ``O_KB``, their norms at
# ``O_NRM`` (sparse rows' distances), the write position in ``COUNTER``.


@jit
def window_state(F, I, j, d):
    """A window member's views in F: its stored rows transposed (d x B), their labels (B) and its
    work space (B)."""
    B = I[j, BUDGET]
    return (F[I[j, O_A]:I[j, O_A] + d * B].reshape((d, B)), F[I[j, O_W]:I[j, O_W] + B],
            F[I[j, O_KB]:I[j, O_KB] + B])


@jit
def window_outputs(F, I, R, j, x, xi, xv, nk, out):
    """A window member's smoother on row x (:func:`window_decision`; a sparse row's distances
    from the stored rows' norms): returns the output (``nk`` = 0) or writes the K outputs to
    ``out``."""
    LT, Y, s = window_state(F, I, j, x.shape[0])
    kind = int(R[j, KIND])
    if not row_is_sparse(xi) or I[j, M] == 0:
        return window_decision(kind, R[j, KA], LT, Y, I[j, M], x, s, nk, out)
    m = I[j, M]
    distances_t_sparse(kind, LT, m, F[I[j, O_NRM]:I[j, O_NRM] + m], xi, xv, row_norm(kind, xv), s)
    return window_from_distances(R[j, KA], Y, m, s, nk, out)


@jit
def store_learn(F, I, R, j, x, y):
    """A window member's store step: row x with label / target (K outputs: class index) y, and
    its norm (:func:`okl._compiled.row_norm`, for sparse rows' distances). Returns NOTHING."""
    LT, Y, _ = window_state(F, I, j, x.shape[0])
    F[I[j, O_NRM] + I[j, COUNTER]] = row_norm(int(R[j, KIND]), x)
    m, pos = window_store(LT, Y, I[j, M], I[j, COUNTER], x, y)
    I[j, M] = m
    I[j, COUNTER] = pos
    I[j, NSEEN] += 1
    return NOTHING


@jit_inline
def store_learn_one(F, I, R, j, x, xi, xv, y, out, q):
    """The store step's member round in auto's engine (one output)."""
    return store_learn(F, I, R, j, x, y)


@jit_inline
def store_learn_k(F, I, R, j, x, xi, xv, y, f, q, nk, g):
    """The store step's member round with K outputs (y the class index)."""
    return store_learn(F, I, R, j, x, y)


@jit_inline
def window_outputs_one(F, I, R, j, x, xi, xv, q, out):
    """The smoother's one output on row x into out[0]."""
    out[0] = window_outputs(F, I, R, j, x, xi, xv, np.int64(0), out)


@jit_inline
def window_outputs_k(F, I, R, j, x, xi, xv, q, nk, out):
    """The smoother's K = ``nk`` outputs (labels: class indices) on row x into out."""
    window_outputs(F, I, R, j, x, xi, xv, nk, out)



def window_layout(plan, m, I, R):
    """The window's parts: its rows transposed and labels (the member's, shared), the smoother's
    work space and the rows' norms; its write position in ``COUNTER``."""
    I[BUDGET], I[M] = plan.budget, getattr(m, plan.counts)
    for attr, _ in plan.extra_counts:
        I[COUNTER] = getattr(m, attr)
    return [(O_A, getattr(m, plan.SV), plan.SV), (O_W, getattr(m, plan.w), plan.w), (O_KB, plan.budget, None),
            (O_NRM, plan.budget, None)], 0


def window_norms(F, I, R, j, dim):
    """The stored rows' norms (sparse rows' distances), as :func:`store_learn` keeps them."""
    m = int(I[j, BUDGET])
    column_norms_t(int(R[j, KIND]), F[I[j, O_A]:I[j, O_A] + dim * m].reshape((dim, m)), m,
                   F[I[j, O_NRM]:I[j, O_NRM] + m])
