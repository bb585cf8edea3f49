"""The window map: the kernel smoother over the last B rows and its store step (components
``"window"`` and ``"store"`` of :mod:`okl.components`). O(B d) a round."""

from __future__ import annotations



from okl._compiled import distances_t, jit
from okl._vecmath import exp_neg_scaled


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
