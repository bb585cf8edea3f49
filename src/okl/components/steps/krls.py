"""The recursive least-squares steps over a dictionary (components ``"ald-krls"`` and
``"window-krls"`` of :mod:`okl.components`): ALD-KRLS (Engel, Mannor & Meir, IEEE TSP 52(8) 2004;
../shared/KAF.md K4), and SW-KRLS / FB-KRLS (Van Vaerenbergh et al., ICASSP 2006 and 2010; K5, K6),
one step whose constants choose the element removed past the budget (the oldest, or the least
significant) and the label update. The rules, their defaults and their numerics are in
:mod:`okl.learners.krls`; the decision is the expansion map over the dictionary (f = k' alpha,
:func:`round_decision`'s sum in :func:`okl.components.maps.expansion.expansion_decision`'s order).

Declared state (:mod:`okl.components.spec`; M is the rows the dictionary stores: ``budget`` for
ALD-KRLS, ``budget`` + 1 for the window rules): ALD-KRLS its constant nu, Kinv and P (M x M each);
the window rules their constants (budget, c, prune smallest, label step mu), the stored labels y_D
(M) and Ainv (M x M). Per round O(m d + m^2).
"""

from __future__ import annotations

import numpy as np

from okl._compiled import copy_into, jit, kernel_row, kernel_value, row_ok
from okl.components.spec import BUDGET_SIZE as M, Field

#: ALD-KRLS's declared block (:func:`ald_member_round` reads it in this order)
ALD_CONSTANTS = ("threshold",)
ALD_STATE = (Field("Kinv", (M, M)), Field("P", (M, M)))
#: SW- and FB-KRLS's (:func:`window_member_round`)
WINDOW_CONSTANTS = ("budget", "regularization", "prune_smallest", "label_step")
WINDOW_STATE = (Field("yD", (M,)), Field("Ainv", (M, M)))
#: the work space of both: the kernel row and two rows
WORK = (Field("k", (M,)), Field("work", (2, M)))



@jit
def round_decision(kind, a, b, c, SV, alpha, m, x, k, have_k):
    """A round's decision f = sum_i alpha_i k_i from the kernel row k of x over the dictionary: given
    (``have_k``: predict_one's), else computed into k (the terms and order of
    :func:`okl.learners.kogd.expansion_decision`)."""
    if not have_k:
        kernel_row(kind, a, b, c, SV, m, x, k)
    f = 0.0
    for j in range(m):
        f += alpha[j] * k[j]
    return f


@jit
def event_features(kind, a, b, c, SV, alpha, m, x, bound, k):
    """predict_one's call: (row ok, f(x)) with the kernel row left in k."""
    if not row_ok(x, bound):
        return False, 0.0
    return True, round_decision(kind, a, b, c, SV, alpha, m, x, k, m < 0)  # (m < 0: a run-time False, see ald_rounds)


@jit
def mat_vec(A, v, m, out):
    """out[:m] = A[:m, :m] v[:m]."""
    for i in range(m):
        s = 0.0
        for j in range(m):
            s += A[i, j] * v[j]
        out[i] = s


@jit
def ald_round(kind, a, b, c, x, y, k, have_k, SV, alpha, Kinv, P, m, threshold, work):
    """One ALD-KRLS round (module docstring): the decision f = k' alpha, then the update with
    e = y - f. ``k``: the kernel row of x (computed here unless ``have_k``); ``work``: 2 x budget.
    Returns (f, m)."""
    f = round_decision(kind, a, b, c, SV, alpha, m, x, k, have_k)
    e = y - f
    av = work[0]
    mat_vec(Kinv, k, m, av)
    delta = kernel_value(kind, a, b, c, x, x)
    for i in range(m):
        delta -= k[i] * av[i]
    if delta > threshold and m < SV.shape[0]:
        for i in range(m):
            for j in range(m):  # (av[i] * av[j] = av[j] * av[i]: exactly symmetric, row by row)
                Kinv[i, j] += av[i] * av[j] / delta
            Kinv[i, m] = Kinv[m, i] = -av[i] / delta
            P[i, m] = P[m, i] = 0.0
            alpha[i] -= av[i] * e / delta
        Kinv[m, m] = 1.0 / delta
        P[m, m] = 1.0
        alpha[m] = e / delta
        copy_into(SV[m], x)
        return f, m + 1
    r = work[1]
    mat_vec(P, av, m, r)
    den = 1.0
    for i in range(m):
        den += av[i] * r[i]
    if den == 0.0:  # (P lost its definiteness to rounding: the caller raises NonFiniteError)
        return np.nan, m
    for i in range(m):
        for j in range(m):
            P[i, j] -= r[i] * r[j] / den
    # alpha += Kinv q e, q = r / den
    for i in range(m):
        s = 0.0
        for j in range(m):
            s += Kinv[i, j] * r[j]
        alpha[i] += s / den * e
    return f, m


@jit
def ald_rounds(kind, a, b, c, X, Y, out, SV, alpha, Kinv, P, m, threshold):
    """ALD-KRLS over the rows of X (out[i]: the decision before learning row i); returns m."""
    k = np.empty(SV.shape[0])
    work = np.empty((2, SV.shape[0]))
    given = X.shape[0] < 0  # a run-time False: Numba compiles a callee again for a literal argument
    for i in range(X.shape[0]):
        out[i], m = ald_round(kind, a, b, c, X[i], Y[i], k, given, SV, alpha, Kinv, P, m, threshold, work)
        if out[i] != out[i]:  # (a failed round: the rows after it are not learned; the caller raises)
            out[i + 1:] = np.nan
            return m
    return m


@jit
def grow_inverse(Ainv, k, m, diagonal, regularization, h):
    """Ainv (of K_D + c I, m x m) grown by the row k[:m] and the diagonal k_tt + c, in place
    (the Schur complement s taken at least c: exact arithmetic gives s >= c)."""
    mat_vec(Ainv, k, m, h)
    s = diagonal + regularization
    for i in range(m):
        s -= k[i] * h[i]
    g = 1.0 / max(s, regularization)
    for i in range(m):
        for j in range(m):
            Ainv[i, j] += h[i] * h[j] * g
        Ainv[i, m] = Ainv[m, i] = -h[i] * g
    Ainv[m, m] = g


@jit
def remove_element(SV, yD, Ainv, m, r, f):
    """Remove element r of the m stored: Ainv <- G - f f' / e (e = Ainv[r, r], f its column without r),
    with the rows after r (of SV, the labels, Ainv's rows and columns) shifted up by one."""
    e = Ainv[r, r]
    for p in range(m):
        f[p] = Ainv[p, r]
    for p in range(m - 1):
        ps = p + (p >= r)
        for q in range(m - 1):
            qs = q + (q >= r)
            Ainv[p, q] = Ainv[ps, qs] - f[ps] * f[qs] / e
        if ps != p:
            copy_into(SV[p], SV[ps])
            yD[p] = yD[ps]


@jit
def window_round(kind, a, b, c, x, y, k, have_k, SV, yD, alpha, Ainv, m, budget, regularization,
                 prune_smallest, label_step, work):
    """One SW-KRLS (``prune_smallest`` False: the oldest leaves) or FB-KRLS (True: the smallest
    |alpha_i| / Ainv_ii leaves; ``label_step``: the paper's label update) round: the decision
    f = k' alpha, then the update (module docstring). ``work``: 2 x (budget + 1). Returns (f, m)."""
    f = round_decision(kind, a, b, c, SV, alpha, m, x, k, have_k)
    if label_step > 0.0:
        for i in range(m):
            yD[i] -= label_step * k[i] * (yD[i] - y)
    grow_inverse(Ainv, k, m, kernel_value(kind, a, b, c, x, x), regularization, work[0])
    copy_into(SV[m], x)
    yD[m] = y
    m += 1
    if m > budget:
        r = 0
        for i in range(m):  # (a zero diagonal: c so small that K_D + c I is singular in floats)
            if Ainv[i, i] == 0.0:
                return np.nan, m  # (the caller raises NonFiniteError: the state is unusable)
        if prune_smallest:
            mat_vec(Ainv, yD, m, alpha)
            best = np.inf
            for i in range(m):
                v = abs(alpha[i]) / Ainv[i, i]
                if v < best:
                    best, r = v, i
        remove_element(SV, yD, Ainv, m, r, work[1])
        m -= 1
    mat_vec(Ainv, yD, m, alpha)
    return f, m


@jit
def window_rounds(kind, a, b, c, X, Y, out, SV, yD, alpha, Ainv, m, budget, regularization, prune_smallest,
                  label_step):
    """SW- / FB-KRLS over the rows of X (out[i]: the decision before learning row i); returns m."""
    k = np.empty(SV.shape[0])
    work = np.empty((2, SV.shape[0]))
    given = X.shape[0] < 0  # a run-time False: Numba compiles a callee again for a literal argument
    for i in range(X.shape[0]):
        out[i], m = window_round(kind, a, b, c, X[i], Y[i], k, given, SV, yD, alpha, Ainv, m, budget,
                                 regularization, prune_smallest, label_step, work)
        if out[i] != out[i]:  # (a failed round: the rows after it are not learned; the caller raises)
            out[i + 1:] = np.nan
            return m
    return m


@jit
def ald_member_round(F, o, SV, alpha, m, kind, a, b, c, x, y, f, lkind):
    """One ALD-KRLS round of a member laid out by a compiled path (:data:`ALD_CONSTANTS`,
    :data:`ALD_STATE` and :data:`WORK` from offset o of F; ``SV`` and ``alpha`` its expansion
    map's, m stored): :func:`ald_round` with the kernel row computed again (the decision was the
    map's, the same sum). Returns the new m, or -1: the round failed (nothing usable is left)."""
    C = SV.shape[0]
    p = o + 1
    Kinv = F[p:p + C * C].reshape((C, C))
    P = F[p + C * C:p + 2 * C * C].reshape((C, C))
    p += 2 * C * C
    k = F[p:p + C]
    work = F[p + C:p + 3 * C].reshape((2, C))
    f, m = ald_round(kind, a, b, c, x, y, k, C < 0, SV, alpha, Kinv, P, m, F[o], work)  # (C < 0: a run-time False)
    return m if f == f else -1


@jit
def window_member_round(F, o, SV, alpha, m, kind, a, b, c, x, y, f, lkind):
    """One SW- or FB-KRLS round of a member laid out by a compiled path (:data:`WINDOW_CONSTANTS`,
    :data:`WINDOW_STATE` and :data:`WORK` from offset o of F): :func:`window_round` with the kernel
    row computed again. Returns the new m, or -1: the round failed."""
    C = SV.shape[0]
    p = o + 4
    yD = F[p:p + C]
    Ainv = F[p + C:p + C + C * C].reshape((C, C))
    p += C + C * C
    k = F[p:p + C]
    work = F[p + C:p + 3 * C].reshape((2, C))
    f, m = window_round(kind, a, b, c, x, y, k, C < 0, SV, yD, alpha, Ainv, m, int(F[o]), F[o + 1], F[o + 2] != 0.0,
                        F[o + 3], work)
    return m if f == f else -1
