"""The normalised adaptive gradient step (component ``"nag"`` of :mod:`okl.components`): Ross,
Mineiro & Langford, UAI 2013, Algorithm 2 (Vowpal Wabbit's update). O(nnz) a round."""

from __future__ import annotations

import math


from okl._compiled import class_steps, jit, loss_derivative
from okl._jit import jit_inline
from okl.components.columns import (ETA, K, LOSS, NOTHING, NSEEN, O_G, O_W, UNMAP, feature_slot, member_rows,
                                    row_is_sparse)
from okl.components.maps.linear import linear_features, nonzero_features, sparse_features


@jit
def nag_value(w, A, idx, u):
    """NAG's decision sum_p w'_idx[p] u[p] over the non-zero features (indices ``idx`` ascending,
    values ``u``), w' the weights rescaled where |u| exceeds the feature's scale (module comment)."""
    k = w.shape[0]
    f = 0.0
    for p in range(idx.shape[0]):
        i = idx[p]
        wi = w[i]
        s = A[k + i]
        a = abs(u[p])
        if a > s and s > 0.0:  # (s = 0: the feature was never non-zero, so w_i = 0)
            wi = wi * ((s / a) * (s / a))
        f += wi * u[p]
    return f


@jit
def nag_step(w, A, idx, u, g, eta, t):
    """NAG's round on the non-zero features (``idx``, ``u``) with loss derivative g in round t >= 1:
    the rescale, N, and on g != 0 the step (module comment)."""
    k = w.shape[0]
    N = A[2 * k]
    for p in range(idx.shape[0]):
        i = idx[p]
        a = abs(u[p])
        s = A[k + i]
        if a > s:
            if s > 0.0:
                w[i] *= (s / a) * (s / a)
            A[k + i] = s = a
        r = u[p] / s
        N += r * r
    A[2 * k] = N
    if g != 0.0 and N > 0.0:
        rate = eta * math.sqrt(t / N)
        for p in range(idx.shape[0]):
            i = idx[p]
            gi = g * u[p]
            A[i] += gi * gi
            w[i] -= rate * gi / (A[k + i] * math.sqrt(A[i]))


# Member functions in auto's engine (the layout of :mod:`okl.components.columns`: the weights at
# ``O_W``, the per-feature sums, scales and normaliser at ``O_G``, 2k + 1 an output).


@jit
def nag_features(F, I, j, x, xi, xv, q):
    """(indices, values) of the non-zero features of member j, a linear map with the NAG step (the
    only map that step takes): on a sparse row of degree 1 from its non-zeros (O(nnz)), else the
    non-zeros of its features [x, (products), 1], written to its slot q of F."""
    k = I[j, K]
    if k == x.shape[0] + 1 and row_is_sparse(xi):
        return sparse_features(xi, xv, k, I[j, UNMAP] != 0)
    z = feature_slot(F, I, j, q)
    linear_features(x, k, I[j, UNMAP] != 0, z)
    return nonzero_features(z)


@jit_inline
def nag_outputs_one(F, I, R, j, x, xi, xv, q, out):
    """Member j's decision on row x into out[0] (the weights rescaled on the fly)."""
    idx, u = nag_features(F, I, j, x, xi, xv, q)
    k = I[j, K]
    out[0] = nag_value(F[I[j, O_W]:I[j, O_W] + k], F[I[j, O_G]:I[j, O_G] + 2 * k + 1], idx, u)


@jit_inline
def nag_outputs_k(F, I, R, j, x, xi, xv, q, nk, out):
    """:func:`nag_outputs_one` for K = ``nk`` outputs (each its own sums and scales)."""
    idx, u = nag_features(F, I, j, x, xi, xv, q)
    k = I[j, K]
    W, A = member_rows(F, I, j, O_W, nk, k), member_rows(F, I, j, O_G, nk, 2 * k + 1)
    for o in range(nk):
        out[o] = nag_value(W[o], A[o], idx, u)


@jit_inline
def nag_learn_one(F, I, R, j, x, xi, xv, y, out, q):
    """Member j's NAG step on row x (its features again from the row: O(nnz), no slot kept)."""
    g = loss_derivative(I[j, LOSS], out[0], y)
    k = I[j, K]
    idx, u = nag_features(F, I, j, x, xi, xv, q)
    nag_step(F[I[j, O_W]:I[j, O_W] + k], F[I[j, O_G]:I[j, O_G] + 2 * k + 1], idx, u, g, R[j, ETA], I[j, NSEEN] + 1)
    I[j, NSEEN] += 1
    return NOTHING


@jit_inline
def nag_learn_k(F, I, R, j, x, xi, xv, y, f, q, nk, g):
    """:func:`nag_learn_one` for K = ``nk`` one-vs-rest outputs, each its own sums and scales."""
    class_steps(I[j, LOSS], f, y, 1.0, g)
    k = I[j, K]
    idx, u = nag_features(F, I, j, x, xi, xv, q)
    W, A = member_rows(F, I, j, O_W, nk, k), member_rows(F, I, j, O_G, nk, 2 * k + 1)
    for o in range(nk):
        nag_step(W[o], A[o], idx, u, g[o], R[j, ETA], I[j, NSEEN] + 1)
    I[j, NSEEN] += 1
    return NOTHING



def nag_layout(plan, m, I, R):
    """The step's state ``A`` (the member's, shared) at ``O_G``."""
    return [(O_G, getattr(m, plan.A), plan.A)]
