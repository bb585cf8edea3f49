"""BSGD's step (component ``"budgeted sgd"`` of :mod:`okl.components`): the Pegasos decay and
step on the column expansion, then budget maintenance of the (B + 1)-th support vector by merging
two (Gaussian or Laplacian kernel), removing the smallest |alpha| or projecting it onto the others
(Wang, Crammer & Vucetic, JMLR 13 2012). The rule, its defaults and the merge's search are in
:mod:`okl.learners.bsgd`; the decision is the column expansion map's
(:mod:`okl.components.maps.columns`).

Declared state (:mod:`okl.components.spec`): the constants lambda, the rule and the inverse's
size (B + 1 under projection, else 0); K^{-1} (projection), the round counter t, the maintenance
events and the latest maintenance (m, n, h, degradation); work: the kernel row, a column, a row,
the projection coefficients and 14 rows of the merge's search. Per round O(B d), a maintenance
O(B d) more (merge), O(B^2) (project) or O(B) (remove).
"""

from __future__ import annotations

import math

import numpy as np

from okl._compiled import copy_into, jit, kernel_value, loss_derivative, times_and_quadratic
from okl._vecmath import exp_scalar
from okl.components.maps.columns import column_kernel_row, expansion_value_from
from okl.components.steps.projection import PROJECTRON_MIN_RESIDUAL, bordered_inverse_grow
from okl.components.spec import BUDGET_SIZE as M, WIDTH_SIZE as D, Field
from okl.kernels import RBF_KIND
from okl.losses import SQUARED, SQUARED_HINGE

#: the step's declared block (:func:`bsgd_member_round` reads it in this order)
CONSTANTS = ("regularization", "rule", "inverse")
STATE = (Field("Kinv", ("inverse", "inverse")), Field("t", (), "int"), Field("events", (), "int"),
         Field("last", (4,)))
WORK = (Field("kt", (M,)), Field("xm", (D,)), Field("km", (M,)), Field("d", (M,)), Field("W", (14, M)))



#: the maintenance rules' codes (``rule``)
REMOVE, PROJECT, MERGE = 0, 1, 2


#: the largest Pegasos step under a loss whose derivative grows with the residual (module docstring)
SQUARED_STEP_CAP = 0.25


#: golden-section search for the merge's h: stop when the bracket is shorter than 2 x this
MERGE_TOLERANCE = 1e-4


#: Newton steps after the golden-section search (quadratic convergence from within 1e-4)
NEWTON_STEPS = 3


#: the golden ratio's conjugate, (sqrt(5) - 1) / 2
GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


#: golden-section steps from [0, 1] to a bracket shorter than 2 MERGE_TOLERANCE (GOLDEN^k < 2 tol)
GOLDEN_STEPS = math.ceil(math.log(2.0 * MERGE_TOLERANCE) / math.log(GOLDEN))


@jit
def _merge_exponents(kind, h):
    """The exponents u_m(h), u_n(h) of k_mn in kappa(x_m, z) = k_mn^u_m, kappa(x_n, z) = k_mn^u_n
    for z = h x_m + (1 - h) x_n, and their first and second derivatives in h."""
    if kind == RBF_KIND:
        return (1.0 - h) * (1.0 - h), h * h, -2.0 * (1.0 - h), 2.0 * h, 2.0
    return 1.0 - h, h, -1.0, 1.0, 0.0


@jit
def merged_coefficient(kind, log_k, am, an, h):
    """alpha_z = alpha_m kappa(x_m, z) + alpha_n kappa(x_n, z) for z = h x_m + (1 - h) x_n, from
    log k_mn (Gaussian: kappa(x_m, z) = k_mn^((1-h)^2); Laplacian: k_mn^(1-h))."""
    um, un, _, _, _ = _merge_exponents(kind, h)
    return am * exp_scalar(log_k * um) + an * exp_scalar(log_k * un)


@jit
def merged_values(kind, L, am, A, n, X, out):
    """out[j] = alpha_z(X[j])^2 of :func:`merged_coefficient` for the partners j < n (log k_mj in
    L[j], alpha_j in A[j]): a straight loop over the partners (vectorised exp)."""
    if kind == RBF_KIND:
        for j in range(n):
            h = X[j]
            z = am * exp_scalar(L[j] * ((1.0 - h) * (1.0 - h))) + A[j] * exp_scalar(L[j] * (h * h))
            out[j] = z * z
    else:
        for j in range(n):
            h = X[j]
            z = am * exp_scalar(L[j] * (1.0 - h)) + A[j] * exp_scalar(L[j] * h)
            out[j] = z * z


@jit
def _newton_step(kind, log_k, am, an, h):
    """One Newton step of h towards a stationary point of alpha_z(h)^2; returns (h', whether the
    curvature there is that of a maximum)."""
    um, un, dm, dn, dd = _merge_exponents(kind, h)
    em = am * exp_scalar(log_k * um)
    en = an * exp_scalar(log_k * un)
    value = em + en
    slope = log_k * (em * dm + en * dn)
    curve = em * (log_k * log_k * dm * dm + log_k * dd) + en * (log_k * log_k * dn * dn + log_k * dd)
    second = slope * slope + value * curve  # (alpha_z^2)'' / 2
    if not second < 0.0:
        return h, False
    return h - value * slope / second, True


@jit
def merge_positions(kind, L, am, A, n, H, V, W):
    """For each partner j < n (log k_mj in L[j], alpha_j in A[j]), H[j] = the h in [0, 1]
    maximising alpha_z(h)^2 and V[j] = that maximum (:func:`merged_values`): golden-section search
    to a bracket shorter than 2 ``MERGE_TOLERANCE`` (as BudgetedSVM), then Newton steps on the
    stationary point while they stay in that bracket (h then to rounding: a continuous function of
    the inputs, where the bracket's last comparisons are not), and an end of [0, 1] when its value
    is at least as large (a maximum at an end: opposite signs, the Laplacian kernel). The partners'
    searches advance in lockstep (each step of golden-section search shrinks every bracket by the
    same factor), so each step's evaluations are one vectorised loop. W: work space (9 x n)."""
    lo, hi, p, q, fp, fq, x, v, left = W[0], W[1], W[2], W[3], W[4], W[5], W[6], W[7], W[8]
    for j in range(n):
        lo[j], hi[j] = 0.0, 1.0
        p[j] = 1.0 - GOLDEN
        q[j] = GOLDEN
    merged_values(kind, L, am, A, n, p, fp)
    merged_values(kind, L, am, A, n, q, fq)
    for _ in range(GOLDEN_STEPS):
        for j in range(n):
            if fp[j] >= fq[j]:
                hi[j], q[j], fq[j] = q[j], p[j], fp[j]
                x[j] = hi[j] - GOLDEN * (hi[j] - lo[j])
                left[j] = 1.0
            else:
                lo[j], p[j], fp[j] = p[j], q[j], fq[j]
                x[j] = lo[j] + GOLDEN * (hi[j] - lo[j])
                left[j] = 0.0
        merged_values(kind, L, am, A, n, x, v)
        for j in range(n):
            if left[j] == 1.0:
                p[j], fp[j] = x[j], v[j]
            else:
                q[j], fq[j] = x[j], v[j]
    for j in range(n):
        h = 0.5 * (lo[j] + hi[j])
        for _ in range(NEWTON_STEPS):
            step, is_max = _newton_step(kind, L[j], am, A[j], h)
            if not (is_max and lo[j] - MERGE_TOLERANCE <= step <= hi[j] + MERGE_TOLERANCE and 0.0 <= step <= 1.0):
                break
            h = step
        H[j] = h
        p[j] = 0.0
        q[j] = 1.0
    merged_values(kind, L, am, A, n, H, V)
    merged_values(kind, L, am, A, n, p, fp)
    merged_values(kind, L, am, A, n, q, fq)
    for j in range(n):
        if fp[j] >= V[j]:
            H[j], V[j] = 0.0, fp[j]
        if fq[j] >= V[j]:
            H[j], V[j] = 1.0, fq[j]


def merge_position(kind, log_k, am, an) -> float:
    """:func:`merge_positions` for one pair (log k_mn, alpha_m, alpha_n): its h."""
    H = np.empty(1)
    merge_positions(kind, np.array([float(log_k)]), float(am), np.array([float(an)]), 1, H, np.empty(1),
                    np.empty((9, 1)))
    return float(H[0])


@jit
def merge_degradation(am, an, k_mn, alpha_z):
    """||alpha_m phi(x_m) + alpha_n phi(x_n) - alpha_z phi(z)||^2 for a kernel with kappa(x, x) = 1
    and the optimal alpha_z (the projection of the pair onto phi(z))."""
    return am * am + an * an + 2.0 * am * an * k_mn - alpha_z * alpha_z


@jit
def smallest_coefficient(alpha, m):
    """The first index of the smallest |alpha_i|, i < m."""
    at = 0
    for i in range(1, m):
        if abs(alpha[i]) < abs(alpha[at]):
            at = i
    return at


@jit
def move_column(ST, alpha, src, dst):
    """Support vector ``src`` (column and coefficient) into slot ``dst``."""
    copy_into(ST[:, dst], ST[:, src])
    alpha[dst] = alpha[src]


@jit
def drop_from_inverse(Kinv, m, r):
    """Remove support vector r of m from K^{-1} (the Schur complement), the last one moving into
    slot r (as :func:`move_column` moves it)."""
    krr = Kinv[r, r]
    for p in range(m):
        if p != r:
            s = Kinv[p, r] / krr
            for q in range(m):
                if q != r:
                    Kinv[p, q] -= s * Kinv[r, q]
    last = m - 1
    if r != last:
        for q in range(m):
            Kinv[r, q] = Kinv[last, q]
        for p in range(m):
            Kinv[p, r] = Kinv[p, last]
        Kinv[r, r] = Kinv[last, last]


@jit
def maintain(kind, a, b, c, rule, ST, alpha, m, Kinv, xm, km, W, last):
    """Budget maintenance of m = B + 1 support vectors down to B (module docstring). ``xm``, ``km``,
    ``W``: work space (a column, a row of m, 14 rows of m); ``last`` receives (m, n, h, degradation) of the latest
    merge (n = -1, h = nan after a removal or projection). Returns the new count."""
    r = smallest_coefficient(alpha, m)
    ar = alpha[r]
    last[0] = r
    last[1] = -1.0
    last[2] = math.nan
    if rule == REMOVE:
        last[3] = ar * ar
    elif rule == PROJECT:
        krr = Kinv[r, r]
        # the removed vector's projection coefficients onto the rest: -K^{-1}[rest, r] / K^{-1}[r, r]
        for p in range(m):
            if p != r:
                alpha[p] -= ar * Kinv[p, r] / krr
        last[3] = ar * ar / krr
        drop_from_inverse(Kinv, m, r)
    else:
        copy_into(xm, ST[:, r])
        column_kernel_row(kind, a, b, c, ST, m, xm, km)
        # the partners n != r, packed: log k_rn, alpha_n and their slot
        L, A, slot, H, V = W[0], W[1], W[2], W[3], W[4]
        count = 0
        for n in range(m):
            if n != r:
                L[count] = max(math.log(km[n]) if km[n] > 0.0 else -math.inf, -700.0)
                A[count] = alpha[n]
                slot[count] = n
                count += 1
        merge_positions(kind, L, ar, A, count, H, V, W[5:])
        best, pick = math.inf, 0
        for j in range(count):
            loss = merge_degradation(ar, A[j], km[int(slot[j])], 0.0) - V[j]
            if loss < best:
                best, pick = loss, j
        partner, best_h = int(slot[pick]), H[pick]
        best_z = merged_coefficient(kind, L[pick], ar, A[pick], best_h)
        for i in range(ST.shape[0]):
            ST[i, partner] = best_h * xm[i] + (1.0 - best_h) * ST[i, partner]
        alpha[partner] = best_z
        last[1] = partner
        last[2] = best_h
        last[3] = best
    m -= 1
    if r != m:
        move_column(ST, alpha, m, r)
    return m


@jit
def bsgd_learn(kind, a, b, c, lkind, lam, rule, ST, alpha, m, Kinv, x, y, f, kt, t, xm, km, d, W, last):
    """The learning half of round t (1, 2, ...) after the decision f (kernel row over the support
    vectors in kt[:m]): the Pegasos decay and step, then the budget maintenance. Returns (m,
    maintained)."""
    eta = 1.0 / (lam * t)
    if (lkind == SQUARED or lkind == SQUARED_HINGE) and eta > SQUARED_STEP_CAP:
        eta = SQUARED_STEP_CAP
    shrink = 1.0 - eta * lam
    for j in range(m):
        alpha[j] *= shrink
    g = loss_derivative(lkind, f, y)
    if g == 0.0:
        return m, False
    coef = -eta * g
    if rule == PROJECT:
        kxx = kernel_value(kind, a, b, c, x, x)
        proj2 = times_and_quadratic(Kinv, kt, m, d)
        delta2 = kxx - proj2
        if not delta2 > PROJECTRON_MIN_RESIDUAL * kxx:  # x is in the span: projected on arrival
            for p in range(m):
                alpha[p] += coef * d[p]
            return m, False
        bordered_inverse_grow(Kinv, m, d, delta2)
    copy_into(ST[:, m], x)
    alpha[m] = coef
    m += 1
    if m < ST.shape[1]:
        return m, False
    return maintain(kind, a, b, c, rule, ST, alpha, m, Kinv, xm, km, W, last), True


@jit
def bsgd_rounds(kind, a, b, c, lkind, lam, rule, X, Y, out, ST, alpha, m, Kinv, t, kt, xm, km, d, W, last):
    """Predict-then-learn over the rows of X. Returns (m, t, maintenance events)."""
    events = 0
    given = X.shape[0] < 0  # a run-time False: Numba compiles a callee again for a literal argument
    for i in range(X.shape[0]):
        x = X[i]
        f = out[i] = expansion_value_from(kind, a, b, c, ST, alpha, m, x, kt, given)
        t += 1
        m, maintained = bsgd_learn(kind, a, b, c, lkind, lam, rule, ST, alpha, m, Kinv, x, Y[i], f, kt, t, xm,
                                   km, d, W, last)
        events += maintained
    return m, t, events


@jit
def bsgd_event_learn(kind, a, b, c, lkind, lam, rule, ST, alpha, m, Kinv, x, y, kt, have_row, t, xm, km, d, W,
                     last):
    """learn_one's compiled call: the round of :func:`bsgd_rounds` on x, from predict_one's kernel
    row when ``have_row``. Returns (f, m, maintained)."""
    f = expansion_value_from(kind, a, b, c, ST, alpha, m, x, kt, have_row)
    m, maintained = bsgd_learn(kind, a, b, c, lkind, lam, rule, ST, alpha, m, Kinv, x, y, f, kt, t + 1, xm, km,
                               d, W, last)
    return f, m, maintained


@jit
def bsgd_member_round(F, o, ST, alpha, m, kind, a, b, c, x, y, f, lkind):
    """Round t of a member laid out by a compiled path (:data:`CONSTANTS`, :data:`STATE` and
    :data:`WORK` from offset o of F; ``ST`` and ``alpha`` its column expansion map's, m support
    vectors; f its decision, lkind its loss): the kernel row of x again, then :func:`bsgd_learn`.
    Returns the new m."""
    S, d = ST.shape[1], x.shape[0]
    n = int(F[o + 2])
    q = o + 3
    Kinv = F[q:q + n * n].reshape((n, n))
    q += n * n
    t = int(F[q]) + 1
    F[q] = t
    events = q + 1
    last = F[q + 2:q + 6]
    q += 6
    kt = F[q:q + S]
    xm = F[q + S:q + S + d]
    q += S + d
    km = F[q:q + S]
    dd = F[q + S:q + 2 * S]
    W = F[q + 2 * S:q + 16 * S].reshape((14, S))
    column_kernel_row(kind, a, b, c, ST, m, x, kt)
    m, maintained = bsgd_learn(kind, a, b, c, lkind, F[o], int(F[o + 1]), ST, alpha, m, Kinv, x, y, f, kt, t, xm, km,
                               dd, W, last)
    if maintained:
        F[events] += 1.0
    return m
