"""KRLS-T's step (component ``"krls-t"`` of :mod:`okl.components`): the Gaussian-process
posterior of the kernel recursive least-squares tracker over a dictionary D of at most M inputs,
with back-to-prior forgetting and pruning (Van Vaerenbergh, Lazaro-Gredilla & Santamaria, IEEE
TNNLS 23(8) 2012; ../shared/KAF.md K7; KAFBOX ``lib/krlst.m``). The rule, its defaults and its
measured coverage are in :mod:`okl.learners.krlst`; the decision is the expansion map over D
(f = sum_i alpha_i kappa(d_i, x), alpha = Q mu kept after every update).

State (:data:`STATE`, in this order in a compiled path's buffer after the three constants
forgetting, noise, jitter): K_D (M x M), Q (M x M), Sigma (M x M), mu (M), the two sums of the
signal power's estimate and the two removal counters; the dictionary's rows and alpha are the
expansion map's. Per round O(M^2 + M d), no allocation.
"""

from __future__ import annotations

import math

import numpy as np

from okl._compiled import copy_into, jit, kernel_value, row_ok, times_and_quadratic
from okl.components.spec import BUDGET_SIZE as M, Field

#: the step's constants, then its state and work space, in this order in a compiled path's block
#: (:mod:`okl.components.spec`; the views of :func:`krlst_member_round`)
CONSTANTS = ("forgetting", "noise", "jitter")
STATE = (Field("K_D", (M, M)), Field("Q", (M, M)), Field("Sigma", (M, M)), Field("mu", (M,)), Field("sums", (2,)),
         Field("removals", (2,), "int"))
WORK = (Field("kt", (M,)), Field("work", (4, "M+1")))



#: rows of the work space of :func:`krlst_round`: q = Q k, h = Sigma q, the extended mu, Q's pruned column
Q_ROW, H_ROW, MU_ROW, COLUMN_ROW = range(4)


#: the counters ``removals_``: bases pruned, and rounds whose new basis was dropped (the reduced update)
PRUNED, REDUCED = 0, 1


@jit
def krlst_first_pair(kind, a, b, c, noise, jitter, x, y, SV, K, Q, Sigma, mu, alpha, sums):
    """The posterior after the first pair (the dictionary is {x})."""
    kxx = kernel_value(kind, a, b, c, x, x)
    k = kxx + jitter
    Q[0, 0] = 1.0 / k
    mu[0] = y * k / (k + noise)
    Sigma[0, 0] = k - k * k / (k + noise)
    K[0, 0] = kxx
    copy_into(SV[0], x)
    sums[0] = y * y / (k + noise)
    sums[1] = 1.0
    alpha[0] = Q[0, 0] * mu[0]


@jit
def _prune_index(Q, mu_ext, q, gamma2, m):
    """The basis of the extended posterior (m + 1 bases, the new one last: Q_ext = [[Q, 0], [0', 0]]
    + [q; -1][q; -1]' / gamma2, mean ``mu_ext``) with the smallest |(Q_ext mu_ext)_i / (Q_ext)_ii|,
    the first on a tie, computed from Q without forming Q_ext."""
    s = 0.0
    for j in range(m):
        s += q[j] * mu_ext[j]
    t = (s - mu_ext[m]) / gamma2  # (Q_ext mu_ext)_i = (Q mu_ext[:m])_i + q_i t, and -t for the new basis
    best, at = abs(-t / (1.0 / gamma2)), m
    for i in range(m - 1, -1, -1):  # (from the end: the first index wins a tie)
        v = 0.0
        for j in range(m):
            v += Q[i, j] * mu_ext[j]
        err = abs((v + q[i] * t) / (Q[i, i] + q[i] * q[i] / gamma2))
        if err <= best:
            best, at = err, i
    return at


@jit
def _grow_and_remove(Q, Sigma, K, SV, mu, q, h, kt, mu_ext, column, x, kxx, gamma2, sf2, sy2, m, r):
    """Write the posterior extended by the new basis (index m) with basis r removed (r < 0: none),
    in place and compact: destination (i, j) reads extended entry (i', j'), i' = i + (i >= r) >= i,
    so no entry is overwritten before it is read. Returns the new dictionary size."""
    n = m + 1 if r < 0 else m
    if r >= 0:  # the removed basis' column of the extended Q
        for i in range(m):
            column[i] = Q[i, r] + q[i] * q[r] / gamma2
        column[m] = -q[r] / gamma2
        pivot = column[r]
    for i in range(n):
        ii = i + 1 if (r >= 0 and i >= r) else i
        for j in range(n):
            jj = j + 1 if (r >= 0 and j >= r) else j
            if ii < m and jj < m:
                qv = Q[ii, jj] + q[ii] * q[jj] / gamma2
                sv = Sigma[ii, jj] - h[ii] * h[jj] / sy2
                kv = K[ii, jj]
            elif ii < m:
                qv = -q[ii] / gamma2
                sv = h[ii] - h[ii] * sf2 / sy2
                kv = kt[ii]
            elif jj < m:
                qv = -q[jj] / gamma2
                sv = h[jj] - sf2 * h[jj] / sy2
                kv = kt[jj]
            else:
                qv = 1.0 / gamma2
                sv = sf2 - sf2 * sf2 / sy2
                kv = kxx
            if r >= 0:
                qv -= column[ii] * column[jj] / pivot
            Q[i, j] = qv
            Sigma[i, j] = sv
            K[i, j] = kv
        mu[i] = mu_ext[ii]
        if ii == m:
            copy_into(SV[i], x)
        elif ii != i:
            copy_into(SV[i], SV[ii])
    return n


@jit
def krlst_round(kind, a, b, c, forgetting, noise, jitter, x, y, kt, have_kt, SV, K, Q, Sigma, mu, alpha, sums,
                removals, m, work):
    """One KRLS-T round on row x with target y (the module docstring's rule): the decision
    f = sum_i alpha_i kappa(d_i, x) (``kt`` receives the kernel row, or holds it when ``have_kt``),
    then the update. The dictionary holds at most SV.shape[0] bases. Returns (f, new size)."""
    f = 0.0
    for j in range(m):
        if not have_kt:
            kt[j] = kernel_value(kind, a, b, c, SV[j], x)
        f += alpha[j] * kt[j]
    if m == 0:
        krlst_first_pair(kind, a, b, c, noise, jitter, x, y, SV, K, Q, Sigma, mu, alpha, sums)
        return f, 1
    q, h, mu_ext, column = work[Q_ROW], work[H_ROW], work[MU_ROW], work[COLUMN_ROW]
    keep = 1.0 - forgetting
    root = math.sqrt(forgetting)
    for i in range(m):  # forget: back to the prior
        for j in range(m):
            Sigma[i, j] = forgetting * Sigma[i, j] + keep * K[i, j]
        mu[i] *= root
    kxx = kernel_value(kind, a, b, c, x, x)
    kq = times_and_quadratic(Q, kt, m, q)
    yhat = 0.0
    for i in range(m):
        yhat += q[i] * mu[i]
    gamma2 = max(kxx + jitter - kq, 0.0)
    sf2 = max(gamma2 + times_and_quadratic(Sigma, q, m, h), 0.0)
    sy2 = noise + sf2
    e = y - yhat
    sums[0] += forgetting * e * e / sy2
    sums[1] += forgetting
    step = e / sy2
    for i in range(m):
        mu_ext[i] = mu[i] + step * h[i]
    mu_ext[m] = yhat + step * sf2
    if gamma2 < jitter:
        r = m  # the new basis is (numerically) in the span of D: the reduced update
    elif m == SV.shape[0]:
        r = _prune_index(Q, mu_ext, q, gamma2, m)
    else:
        r = -1
    if r == m:
        for i in range(m):
            for j in range(m):
                Sigma[i, j] -= h[i] * h[j] / sy2
            mu[i] = mu_ext[i]
        removals[REDUCED] += 1
    else:
        m = _grow_and_remove(Q, Sigma, K, SV, mu, q, h, kt, mu_ext, column, x, kxx, gamma2, sf2, sy2, m, r)
        if r >= 0:
            removals[PRUNED] += 1
    for i in range(m):
        v = 0.0
        for j in range(m):
            v += Q[i, j] * mu[j]
        alpha[i] = v
    return f, m


@jit
def krlst_rounds(kind, a, b, c, forgetting, noise, jitter, X, Y, out, SV, K, Q, Sigma, mu, alpha, sums, removals,
                 m, kt, work):
    """Predict-then-learn over the rows of X (out[i] = f(X[i]) before learning it) with
    :func:`krlst_round`; returns the dictionary size."""
    given = X.shape[0] < 0  # a run-time False: Numba compiles a callee again for a literal argument
    for i in range(X.shape[0]):
        f, m = krlst_round(kind, a, b, c, forgetting, noise, jitter, X[i], Y[i], kt, given, SV, K, Q, Sigma, mu,
                           alpha, sums, removals, m, work)
        out[i] = f
    return m


@jit
def krlst_event_features(kind, a, b, c, SV, alpha, m, x, bound, kt):
    """predict_one's call: (ok, f) with kt[:m] the kernel row of x, after checking x's values
    (:func:`okl._compiled.row_ok`); f summed as :func:`krlst_round` sums it."""
    if not row_ok(x, bound):
        return False, 0.0
    f = 0.0
    for j in range(m):
        kt[j] = kernel_value(kind, a, b, c, SV[j], x)
        f += alpha[j] * kt[j]
    return True, f


@jit
def krlst_event_round(kind, a, b, c, forgetting, noise, jitter, x, y, kt, have_kt, SV, K, Q, Sigma, mu, alpha, sums,
                      removals, m, work, bound):
    """learn_one's call: (ok, f, new size); x's values are checked first unless its kernel row is
    given (predict_one checked them), and a refused row changes nothing."""
    if not have_kt and not row_ok(x, bound):
        return False, 0.0, m
    f, m = krlst_round(kind, a, b, c, forgetting, noise, jitter, x, y, kt, have_kt, SV, K, Q, Sigma, mu, alpha,
                       sums, removals, m, work)
    return True, f, m


@jit
def krlst_mean_variance(kind, a, b, c, noise, jitter, SV, Q, Sigma, alpha, s02, m, x):
    """(f(x), s02 (sn2 + sf2)) with sf2 = kappa(x, x) + jitter + k' (Q Sigma Q - Q) k, clipped at 0,
    computed as q' Sigma q - k' q with q = Q k (Q symmetric); f summed as the decision is."""
    kt = np.empty(m)
    f = 0.0
    for j in range(m):
        kt[j] = kernel_value(kind, a, b, c, SV[j], x)
        f += alpha[j] * kt[j]
    q = np.empty(m)
    kq = times_and_quadratic(Q, kt, m, q)
    qsq = times_and_quadratic(Sigma, q, m, np.empty(m))
    sf2 = max(kernel_value(kind, a, b, c, x, x) + jitter + qsq - kq, 0.0)
    return f, s02 * (noise + sf2)


@jit
def krlst_member_round(F, o, SV, alpha, m, kind, a, b, c, x, y, f, lkind):
    """One round of a member laid out by a compiled path (:data:`CONSTANTS`, :data:`STATE` and
    :data:`WORK` from offset o of F; the dictionary ``SV`` and ``alpha`` its expansion map's, m
    bases): :func:`krlst_round` with the kernel row computed again (the decision was the map's, the
    same sum). Returns the new dictionary size."""
    M = SV.shape[0]
    forgetting, noise, jitter = F[o], F[o + 1], F[o + 2]
    p = o + 3
    K = F[p:p + M * M].reshape((M, M))
    p += M * M
    Q = F[p:p + M * M].reshape((M, M))
    p += M * M
    Sigma = F[p:p + M * M].reshape((M, M))
    p += M * M
    mu = F[p:p + M]
    sums = F[p + M:p + M + 2]
    removals = F[p + M + 2:p + M + 4]
    p += M + 4
    kt = F[p:p + M]
    work = F[p + M:p + M + 4 * (M + 1)].reshape((4, M + 1))
    given = M < 0  # (a run-time False: a literal would compile krlst_round again)
    f, m = krlst_round(kind, a, b, c, forgetting, noise, jitter, x, y, kt, given, SV, K, Q, Sigma, mu, alpha, sums,
                       removals, m, work)
    return m
