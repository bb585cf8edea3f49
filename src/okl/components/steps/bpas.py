"""BPA-S's step (component ``"budgeted pa"`` of :mod:`okl.components`; Wang & Vucetic, AISTATS
2010, the simple variant; LSOKL ``bpas.m``): a passive-aggressive step on a margin error, and
past the budget the replacement of the support vector whose removal costs least. The rule is in
:mod:`okl.learners.bpas`; the decision is the column expansion map's
(:mod:`okl.components.maps.columns`).

Declared state (:mod:`okl.components.spec`): the constants B and C; kappa(x_i, x_i) of each
support vector, the removals and the latest (index, cost); work: the kernel row. Per round
O(B d).
"""

from __future__ import annotations

import numpy as np

from okl._compiled import copy_into, jit, kernel_value
from okl.components.maps.columns import column_kernel_row, expansion_value
from okl.components.spec import BUDGET_SIZE as M, Field

#: the step's declared block (:func:`bpas_member_round` reads it in this order)
CONSTANTS = ("budget", "C")
STATE = (Field("kself", (M,)), Field("removals", (), "int"), Field("last", (2,)))
WORK = (Field("kt", (M,)),)


@jit
def bpas_learn(kind, a, b, c, x, y, f, ST, alpha, kself, m, budget, C, kt, last):
    """The learning half of a round after the decision f (the kernel row of x over the support
    set in kt[:m]): see :class:`okl.learners.bpas.BPAS`. Returns (m, 1 if a support vector was
    replaced else 0)."""
    loss = 1.0 - y * f
    if loss <= 0.0:
        return m, 0
    kxx = kernel_value(kind, a, b, c, x, x)
    tau = min(C, loss / kxx)
    if m < budget:
        copy_into(ST[:, m], x)
        alpha[m] = y * tau
        kself[m] = kxx
        return m + 1, 0
    best = np.inf
    star = 0
    star_beta = 0.0
    for r in range(m):
        krt = kt[r]
        ar = alpha[r]
        beta = ar * krt / kxx + tau * y
        dist = ar * ar * kself[r] + beta * beta * kxx - 2.0 * ar * beta * krt
        fr = f - ar * krt + beta * kxx
        cost = 0.5 * dist + C * max(0.0, 1.0 - y * fr)
        if cost < best:
            best = cost
            star = r
            star_beta = beta
    copy_into(ST[:, star], x)
    alpha[star] = star_beta
    kself[star] = kxx
    last[0] = star
    last[1] = best
    return m, 1


@jit
def bpas_rounds(kind, a, b, c, X, Y, out, ST, alpha, kself, m, budget, C, kt, last):
    """BPA-S rounds (see :class:`okl.learners.bpas.BPAS`). ``last`` receives (replaced index, its
    cost Q_r*) of the latest removal. Returns (m, removals in this call)."""
    removals = 0
    for i in range(X.shape[0]):
        x = X[i]
        y = Y[i]
        f = expansion_value(kind, a, b, c, ST, alpha, m, x, kt)
        out[i] = f
        m, removed = bpas_learn(kind, a, b, c, x, y, f, ST, alpha, kself, m, budget, C, kt, last)
        removals += removed
    return m, removals


@jit
def bpas_member_round(F, o, ST, alpha, m, kind, a, b, c, x, y, f, lkind):
    """One round of a member laid out by a compiled path (:data:`CONSTANTS`, :data:`STATE` and
    :data:`WORK` from offset o of F; f its decision): the kernel row of x again, then
    :func:`bpas_learn`. Returns the new m."""
    B = ST.shape[1]
    kself = F[o + 2:o + 2 + B]
    q = o + 2 + B
    kt = F[q + 3:q + 3 + B]
    column_kernel_row(kind, a, b, c, ST, m, x, kt)
    m, removed = bpas_learn(kind, a, b, c, x, y, f, ST, alpha, kself, m, int(F[o]), F[o + 1], kt, F[q + 1:q + 3])
    F[q] += removed
    return m
