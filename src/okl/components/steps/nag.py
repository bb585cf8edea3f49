"""The normalised adaptive gradient step (component ``"nag"`` of :mod:`okl.components`): Ross,
Mineiro & Langford, UAI 2013, Algorithm 2 (Vowpal Wabbit's update). O(nnz) a round."""

from __future__ import annotations

import math


from okl._compiled import jit


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
