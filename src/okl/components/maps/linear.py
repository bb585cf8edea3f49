"""The linear map: z = [x, 1], or at degree 2 [x, the pairwise products, 1] (component ``"linear"``
of :mod:`okl.components`), dense and on a sparse row's non-zeros. Per round O(k), O(nnz) sparse."""

from __future__ import annotations


import numpy as np

from okl._compiled import class_steps, jit, loss_derivative, sum_as_dot
from okl._jit import jit_inline
import okl.components.header as H
from okl.components.columns import ETA, K, LOSS, NOTHING, NSEEN, O_W, UNMAP, feature_slot, member_rows
from okl.losses import SQUARED
from okl.scaling import affine_from_symlog


def n_linear_features(d: int, degree: int) -> int:
    """The number of features of :func:`linear_features`: d + 1, or d (d + 3) / 2 + 1 (degree 2)."""
    return d + 1 + (d * (d + 1) // 2 if degree == 2 else 0)


@jit
def linear_features(x, k, unmap, z):
    """The linear learner's features of row x into z (length k = :func:`n_linear_features`):
    [u, 1] when k = d + 1, else [u, (u_i u_j)_{i <= j}, 1] (degree 2, in the order i, then j),
    with u = x, or u = :func:`okl.scaling.affine_from_symlog` (x) when ``unmap`` (``auto``'s
    members of the affine family, whose input auto mapped with symlog)."""
    d = x.shape[0]
    for i in range(d):
        z[i] = affine_from_symlog(x[i]) if unmap else x[i]
    if k > d + 1:
        p = d
        for i in range(d):
            for j in range(i, d):
                z[p] = z[i] * z[j]
                p += 1
    z[k - 1] = 1.0


@jit
def _mapped(xv, unmap):
    """A sparse row's non-zero features u (:func:`linear_features`' map of its values)."""
    u = np.empty(xv.shape[0])
    for p in range(xv.shape[0]):
        u[p] = affine_from_symlog(xv[p]) if unmap else xv[p]
    return u


@jit
def linear_value_sparse(w, xi, xv, unmap):
    """w^T [u, 1] for a sparse row (non-zeros xi, xv; u as :func:`linear_features` maps them) in
    O(nnz), bit for bit :func:`okl._compiled.dot` on the dense features
    (:func:`okl._compiled.sum_as_dot`)."""
    u = _mapped(xv, unmap)
    for p in range(u.shape[0]):
        u[p] = w[xi[p]] * u[p]
    return sum_as_dot(xi, u, w[w.shape[0] - 1] * 1.0, w.shape[0])


@jit
def linear_step_sparse(w, xi, xv, unmap, step, lkind):
    """The OGD step w -= s [u, 1] on a sparse row, s as :func:`okl._compiled.ogd_step` gives it
    (under the squared loss divided by max(1, ||[u, 1]||^2), that norm as dot sums it), on the
    non-zeros and the bias only: O(nnz), bit for bit the dense step (a zero feature leaves its
    weight as it is)."""
    u = _mapped(xv, unmap)
    if lkind == SQUARED:
        step = step / max(1.0, sum_as_dot(xi, u * u, 1.0, w.shape[0]))
    for p in range(xi.shape[0]):
        w[xi[p]] -= step * u[p]
    w[w.shape[0] - 1] -= step * 1.0


@jit
def nonzero_features(z):
    """(indices, values) of the non-zero entries of the feature row z, ascending."""
    n = 0
    for i in range(z.shape[0]):
        if z[i] != 0.0:
            n += 1
    idx = np.empty(n, dtype=np.int64)
    u = np.empty(n)
    n = 0
    for i in range(z.shape[0]):
        if z[i] != 0.0:
            idx[n] = i
            u[n] = z[i]
            n += 1
    return idx, u


@jit
def sparse_features(xi, xv, k, unmap):
    """(indices, values) of the non-zero features [u, 1] of a sparse row (degree 1: k = d + 1)."""
    n = xi.shape[0]
    idx = np.empty(n + 1, dtype=np.int64)
    u = np.empty(n + 1)
    for p in range(n):  # (not idx[:n] = xi: a slice set from an array links Numba's shape error, whose
        idx[p] = xi[p]  # environment imports numba.np.arrayobj when auto's engine loads, ~16 ms a process)
        u[p] = affine_from_symlog(xv[p]) if unmap else xv[p]
    idx[n] = k - 1
    u[n] = 1.0
    return idx, u


@jit
def linear_feature_rows(X, k, unmap, Z):
    """:func:`linear_features` of every row of X into the rows of Z."""
    for i in range(X.shape[0]):
        linear_features(X[i], k, unmap, Z[i])


@jit_inline
def linear_member_features(F, I, R, j, x, xi, xv, own, q, pre):
    """Member j's features of row x into its slot q (auto's engine; ``UNMAP``: a member of the
    affine family, whose features undo auto's symlog map). Returns them."""
    z = feature_slot(F, I, j, q)
    if own:
        linear_features(x, I[j, K], I[j, UNMAP] != 0, z)
    return z


@jit_inline
def linear_sparse_outputs_one(F, I, R, j, x, xi, xv, q, out):
    """Member j's decision on a sparse row over its non-zeros and the bias (degree 1, the OGD
    step: :func:`linear_value_sparse`, O(nnz)) into out[0]."""
    out[0] = linear_value_sparse(F[I[j, O_W]:I[j, O_W] + I[j, K]], xi, xv, I[j, UNMAP] != 0)


@jit_inline
def linear_sparse_outputs_k(F, I, R, j, x, xi, xv, q, nk, out):
    """:func:`linear_sparse_outputs_one` for K = ``nk`` outputs (weights K x k)."""
    W = member_rows(F, I, j, O_W, nk, I[j, K])
    for o in range(nk):
        out[o] = linear_value_sparse(W[o], xi, xv, I[j, UNMAP] != 0)


@jit_inline
def linear_sparse_learn_one(F, I, R, j, x, xi, xv, y, out, q):
    """The OGD step of member j on a sparse row over its non-zeros (:func:`linear_step_sparse`,
    O(nnz)); returns NOTHING."""
    lkind = I[j, LOSS]
    g = loss_derivative(lkind, out[0], y)
    if g != 0.0:
        linear_step_sparse(F[I[j, O_W]:I[j, O_W] + I[j, K]], xi, xv, I[j, UNMAP] != 0, R[j, ETA] * g, lkind)
    I[j, NSEEN] += 1
    return NOTHING


@jit_inline
def linear_sparse_learn_k(F, I, R, j, x, xi, xv, y, f, q, nk, g):
    """:func:`linear_sparse_learn_one` for K = ``nk`` one-vs-rest outputs (y the class index, f
    the outputs, g work)."""
    lkind = I[j, LOSS]
    class_steps(lkind, f, y, 1.0, g)
    W = member_rows(F, I, j, O_W, nk, I[j, K])
    for o in range(nk):
        if g[o] != 0.0:
            linear_step_sparse(W[o], xi, xv, I[j, UNMAP] != 0, R[j, ETA] * g[o], lkind)
    I[j, NSEEN] += 1
    return NOTHING



def linear_layout(plan, m, I, R):
    """The linear map has no parts of its own (its features are computed into the slot)."""
    I[K], I[UNMAP] = plan.features, plan.unmap
    return [], 0


# The single learners' per-event plan (:mod:`okl.engine.fastpath`; the header slots of
# :mod:`okl.components.header`, H): the scaled row xs, the plan's buffer F.


@jit_inline
def linear_event_features(F, xs, z):
    """z = [xs, 1], degree 2 [xs, products, 1] (k = ``K``)."""
    linear_features(xs, int(F[H.K]), False, z)


def linear_event_layout(plan):
    """(m, k, fixed parts): no rows, k features, nothing fixed."""
    return 0, plan.features, {}
