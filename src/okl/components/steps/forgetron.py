"""The self-tuned Forgetron's step (component ``"forgetron"`` of :mod:`okl.components`; Dekel,
Shalev-Shwartz & Singer, NIPS 2005 / SICOMP 2008; LSOKL ``forgetron.m``): on a mistake add x_t,
and past the budget shrink every coefficient by phi_t and drop the oldest support vector. The rule
(and where LSOKL's root differs) is in :mod:`okl.learners.forgetron`; the decision is the column
expansion map's (:mod:`okl.components.maps.columns`).

Declared state (:mod:`okl.components.spec`): the constant B; the labels of the support vectors,
the oldest's index, Q, M, the removals and the latest removal (phi, delta, mu, Q before, M); work:
the kernel row and the oldest's row. Per round O(B d) (two kernel rows on removal rounds).
"""

from __future__ import annotations

import math

from okl._compiled import copy_into, jit, kernel_value
from okl.components.maps.columns import expansion_value
from okl.components.spec import BUDGET_SIZE as M, WIDTH_SIZE as D, Field

#: the step's declared block (:func:`forgetron_member_round` reads it in this order)
CONSTANTS = ("budget",)
STATE = (Field("labels", (M,)), Field("head", (), "int"), Field("Q", ()), Field("M", (), "int"),
         Field("removals", (), "int"), Field("last", (5,)))
WORK = (Field("kt", (M,)), Field("xr", (D,)))


@jit
def forgetron_shrink(delta, mu, Q, M):
    """Largest phi in (0, 1] with Q + Psi(delta phi, phi mu) <= (15/32) M, where
    Psi(lam, nu) = lam^2 + 2 lam - 2 lam nu (Dekel et al. 2008, self-tuned Forgetron).

    The condition is g(phi) = A phi^2 + 2 delta phi + c <= 0 with A = delta^2 - 2 delta mu,
    c = Q - 15 M / 32 <= 0. If g(1) <= 0, phi = 1; else g(0) <= 0 < g(1) and the one root of g in
    [0, 1) is (-delta + sqrt(delta^2 - A c)) / A = -c / (delta + sqrt(delta^2 - A c)) for A of
    either sign (and -c / (2 delta) for A = 0), the cancellation-free form used here."""
    A = delta * delta - 2.0 * delta * mu
    cc = Q - 15.0 / 32.0 * M
    if A + 2.0 * delta + cc <= 0.0:
        return 1.0
    disc = delta * delta - A * cc
    if disc < 0.0:
        disc = 0.0
    return -cc / (delta + math.sqrt(disc))


@jit
def forgetron_learn(kind, a, b, c, x, y, f, ST, alpha, labels, m, head, budget, Q, M, removals, last, kt, xr):
    """The learning half of a round after the decision f: see
    :class:`okl.learners.forgetron.Forgetron`. Returns (m, head, Q, M, removals)."""
    if y * f > 0.0:
        return m, head, Q, M, removals
    M += 1
    if m < budget:
        copy_into(ST[:, m], x)
        alpha[m] = y
        labels[m] = y
        m += 1
        return m, head, Q, M, removals
    r = head
    copy_into(xr, ST[:, r])
    # f'(x_r): the hypothesis with (x_t, y_t) added, at the oldest support vector
    fr = y * kernel_value(kind, a, b, c, x, xr) + expansion_value(kind, a, b, c, ST, alpha, m,
                                                                    xr, kt)
    yr = labels[r]
    mu = yr * fr
    delta = alpha[r] * yr
    phi = forgetron_shrink(delta, mu, Q, float(M))
    last[0] = phi
    last[1] = delta
    last[2] = mu
    last[3] = Q
    last[4] = M
    Q += (delta * phi) ** 2 + 2.0 * delta * phi - 2.0 * delta * phi * phi * mu
    for j in range(m):
        alpha[j] *= phi
    copy_into(ST[:, r], x)
    alpha[r] = phi * y
    labels[r] = y
    head = (r + 1) % budget
    removals += 1
    return m, head, Q, M, removals


@jit
def forgetron_rounds(kind, a, b, c, X, Y, out, ST, alpha, labels, m, head, budget, Q, M,
                     removals, last, kt, xr):
    """Self-tuned Forgetron rounds (see :class:`okl.learners.forgetron.Forgetron`). ``last``
    receives (phi, delta, mu, Q before, M) of the latest removal. Returns (m, head, Q, M,
    removals)."""
    for i in range(X.shape[0]):
        x = X[i]
        y = Y[i]
        f = expansion_value(kind, a, b, c, ST, alpha, m, x, kt)
        out[i] = f
        m, head, Q, M, removals = forgetron_learn(kind, a, b, c, x, y, f, ST, alpha, labels, m, head, budget, Q, M,
                                                  removals, last, kt, xr)
    return m, head, Q, M, removals


@jit
def forgetron_member_round(F, o, ST, alpha, m, kind, a, b, c, x, y, f, lkind):
    """One round of a member laid out by a compiled path (:data:`CONSTANTS`, :data:`STATE` and
    :data:`WORK` from offset o of F; f its decision): :func:`forgetron_learn` (it computes the
    kernel rows it needs). Returns the new m."""
    B, d = ST.shape[1], x.shape[0]
    labels = F[o + 1:o + 1 + B]
    q = o + 1 + B
    last = F[q + 4:q + 9]
    kt = F[q + 9:q + 9 + B]
    xr = F[q + 9 + B:q + 9 + B + d]
    m, head, Q, M, removals = forgetron_learn(kind, a, b, c, x, y, f, ST, alpha, labels, m, int(F[q]), int(F[o]),
                                              F[q + 1], int(F[q + 2]), int(F[q + 3]), last, kt, xr)
    F[q], F[q + 1], F[q + 2], F[q + 3] = head, Q, M, removals
    return m
