"""The Projectron's and Projectron++'s step (component ``"projection"`` of
:mod:`okl.components`; Orabona, Keshet & Caputo, ICML 2008 / JMLR 2009; LSOKL ``projectron.m``,
``proplus.m``): on a mistake, grow the support set by x_t (bordered inverse) or project phi(x_t)
onto its span; Projectron++ also projects on margin errors. The rule and its defaults are in
:mod:`okl.learners.projectron`; the decision is the column expansion map's
(:mod:`okl.components.maps.columns`).

Declared state (:mod:`okl.components.spec`): the constants B, eta^2, plus (Projectron++) and U;
K_SV^{-1} (B x B) and the counts (grown, projected on mistakes, on margin errors); work: the kernel
row and d*. Per round O(B d); O(B^2) more on update rounds.
"""

from __future__ import annotations

import math

from okl._compiled import copy_into, jit, kernel_value, times_and_quadratic
from okl.components.maps.columns import column_kernel_row, expansion_value
from okl.components.spec import BUDGET_SIZE as M, Field
from okl.components.steps.projection import PROJECTRON_MIN_RESIDUAL, bordered_inverse_grow

#: the step's declared block (:func:`projectron_member_round` reads it in this order)
CONSTANTS = ("budget", "threshold2", "plus", "U")
STATE = (Field("Kinv", (M, M)), Field("counts", (3,), "int"))
WORK = (Field("kt", (M,)), Field("d", (M,)))


@jit
def projectron_learn(kind, a, b, c, x, y, f, ST, alpha, Kinv, m, budget, threshold2, plus, U, kt, d, counts):
    """The learning half of a round after the decision f (the kernel row of x over the support
    set in kt[:m]): see :class:`okl.learners.projectron.Projectron`. Returns m."""
    yhat = 1.0 if f >= 0.0 else -1.0
    mistake = yhat != y
    loss = 1.0 - y * f
    if not mistake and not (plus and 0.0 < loss < 1.0):
        return m
    kxx = kernel_value(kind, a, b, c, x, x)
    if m == 0:
        if kxx > 0.0 and kxx > threshold2:
            copy_into(ST[:, 0], x)
            alpha[0] = y
            Kinv[0, 0] = 1.0 / kxx
            m = 1
            counts[0] += 1
        return m
    # d* = K^{-1} k_t (coefficients of the projection of phi(x_t) onto span(SV))
    proj2 = times_and_quadratic(Kinv, kt, m, d)
    delta2 = kxx - proj2
    if mistake:
        if m < budget and delta2 > threshold2 and delta2 > PROJECTRON_MIN_RESIDUAL * kxx:
            bordered_inverse_grow(Kinv, m, d, delta2)
            copy_into(ST[:, m], x)
            alpha[m] = y
            m += 1
            counts[0] += 1
        else:
            for p in range(m):
                alpha[p] += y * d[p]
            counts[1] += 1
    else:
        # Projectron++ margin error: project with step tau if beta >= 0
        delta = math.sqrt(delta2) if delta2 > 0.0 else 0.0
        tau = 1.0 if proj2 <= 0.0 else min(loss / proj2, 1.0)
        beta = tau * (2.0 * loss - tau * proj2 - 2.0 * U * delta)
        if beta >= 0.0:
            step = y * tau
            for p in range(m):
                alpha[p] += step * d[p]
            counts[2] += 1
    return m


@jit
def projectron_rounds(kind, a, b, c, X, Y, out, ST, alpha, Kinv, m, budget, threshold2, plus, U,
                      kt, d, counts):
    """Projectron / Projectron++ rounds (see :class:`okl.learners.projectron.Projectron`).
    ``counts`` accumulates (grown, projected on mistakes, projected on margin errors). Returns m."""
    for i in range(X.shape[0]):
        x = X[i]
        y = Y[i]
        f = expansion_value(kind, a, b, c, ST, alpha, m, x, kt)
        out[i] = f
        m = projectron_learn(kind, a, b, c, x, y, f, ST, alpha, Kinv, m, budget, threshold2, plus, U, kt, d, counts)
    return m


@jit
def projectron_member_round(F, o, ST, alpha, m, kind, a, b, c, x, y, f, lkind):
    """One round of a member laid out by a compiled path (:data:`CONSTANTS`, :data:`STATE` and
    :data:`WORK` from offset o of F; ``ST`` and ``alpha`` its column expansion map's, m support
    vectors; f its decision): the kernel row of x again, then :func:`projectron_learn`. Returns
    the new m."""
    B = ST.shape[1]
    q = o + 4
    Kinv = F[q:q + B * B].reshape((B, B))
    counts = F[q + B * B:q + B * B + 3]
    q += B * B + 3
    kt = F[q:q + B]
    d = F[q + B:q + 2 * B]
    column_kernel_row(kind, a, b, c, ST, m, x, kt)
    return projectron_learn(kind, a, b, c, x, y, f, ST, alpha, Kinv, m, int(F[o]), F[o + 1], F[o + 2] != 0.0,
                            F[o + 3], kt, d, counts)
