"""KAP's and KNLMS's step (component ``"affine projection"`` of :mod:`okl.components`): the
coherence criterion admits x_t to the dictionary (max_j |kappa(x_t, d_j)| <= mu_0 while it has
room), then the affine projection of order p over the last p inputs (KNLMS: p = 1) moves alpha
(Richard, Bermudez & Honeine, IEEE TSP 57(3) 2009; ../shared/KAF.md; KAFBOX ``lib/kap.m``,
``lib/knlms.m``). The rule, its defaults and why okl's regulariser differs from KAFBOX's are in
:mod:`okl.learners.knlms`; the decision is the column expansion map's
(:mod:`okl.components.maps.columns`).

Declared state (:mod:`okl.components.spec`): the constants p, mu_0, eta, eps; the ring of the
last p inputs (memX, p x d), their labels (memY) and kernel rows over the dictionary (H, p x M),
and the count of inputs pushed; work: the kernel row, G, r, z and L. Per round O(m d + p^2 m +
p^3).
"""

from __future__ import annotations

import math

from okl._compiled import copy_into, jit, kernel_value
from okl.components.maps.columns import column_kernel_row, expansion_value_from
from okl.components.spec import BUDGET_SIZE as M, WIDTH_SIZE as D, Field

#: the step's declared block (:func:`kap_member_round` reads it in this order)
CONSTANTS = ("p", "coherence", "eta", "regularization")
STATE = (Field("memX", ("p", D)), Field("memY", ("p",)), Field("H", ("p", M)), Field("pushed", (), "int"))
WORK = (Field("kt", (M,)), Field("G", ("p", "p")), Field("r", ("p",)), Field("z", ("p",)), Field("L", ("p", "p")))



@jit
def spd_solve(G, n, r, z, L):
    """z[:n] = G[:n, :n]^{-1} r[:n] for a symmetric positive definite G, by Cholesky (L: work
    space, n x n)."""
    for i in range(n):
        for j in range(i + 1):
            s = G[i, j]
            for q in range(j):
                s -= L[i, q] * L[j, q]
            if i == j:
                L[i, i] = math.sqrt(s) if s > 0.0 else 1e-300
            else:
                L[i, j] = s / L[j, j]
    for i in range(n):
        s = r[i]
        for q in range(i):
            s -= L[i, q] * z[q]
        z[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = z[i]
        for q in range(i + 1, n):
            s -= L[q, i] * z[q]
        z[i] = s / L[i, i]


@jit
def kap_learn(kind, a, b, c, ST, alpha, m, x, y, k, mu0, eta, eps, memX, memY, H, pushed, G, r, z, L):
    """The learning half of a round after the decision (its kernel row over the dictionary, the
    columns of ST, in k[:m]): the coherence criterion (x joins D when max |k| <= mu0 and D has
    room), x and y into the ring of the last p inputs (their kernel rows in H), then the affine
    projection step. Returns (m, pushed)."""
    B = ST.shape[1]
    p = memX.shape[0]
    n = min(pushed, p)  # inputs in the ring before this one
    if m < B:
        coherence = 0.0
        for j in range(m):
            coherence = max(coherence, abs(k[j]))
        if m == 0 or coherence <= mu0:
            copy_into(ST[:, m], x)
            alpha[m] = 0.0
            k[m] = kernel_value(kind, a, b, c, x, x)
            for i in range(n):
                H[i, m] = kernel_value(kind, a, b, c, memX[i], x)
            m += 1
    slot = pushed % p
    copy_into(memX[slot], x)
    memY[slot] = y
    for j in range(m):
        H[slot, j] = k[j]
    pushed += 1
    n = min(pushed, p)
    for i in range(n):
        s = 0.0
        for j in range(m):
            s += H[i, j] * alpha[j]
        r[i] = memY[i] - s
        for q in range(i + 1):
            s = 0.0
            for j in range(m):
                s += H[i, j] * H[q, j]
            G[i, q] = s
            G[q, i] = s
        G[i, i] += eps
    if n == 1:
        z[0] = r[0] / G[0, 0]
    else:
        spd_solve(G, n, r, z, L)
    for j in range(m):
        s = 0.0
        for i in range(n):
            s += H[i, j] * z[i]
        alpha[j] += eta * s
    return m, pushed


@jit
def kap_rounds(kind, a, b, c, X, Y, out, ST, alpha, m, mu0, eta, eps, memX, memY, H, pushed, k, G, r, z, L):
    """Predict-then-learn over the rows of X (out[i] = f(X[i])); returns (m, pushed)."""
    given = X.shape[0] < 0  # a run-time False: Numba compiles a callee again for a literal argument
    for i in range(X.shape[0]):
        out[i] = expansion_value_from(kind, a, b, c, ST, alpha, m, X[i], k, given)
        m, pushed = kap_learn(kind, a, b, c, ST, alpha, m, X[i], Y[i], k, mu0, eta, eps, memX, memY, H, pushed,
                              G, r, z, L)
    return m, pushed


@jit
def kap_event_learn(kind, a, b, c, ST, alpha, m, x, y, k, have_row, mu0, eta, eps, memX, memY, H, pushed, G, r, z,
                    L):
    """learn_one's compiled call: the round of :func:`kap_rounds` on x, from predict_one's kernel
    row in k when ``have_row``. Returns (f, m, pushed)."""
    f = expansion_value_from(kind, a, b, c, ST, alpha, m, x, k, have_row)
    m, pushed = kap_learn(kind, a, b, c, ST, alpha, m, x, y, k, mu0, eta, eps, memX, memY, H, pushed, G, r, z, L)
    return f, m, pushed


@jit
def kap_member_round(F, o, ST, alpha, m, kind, a, b, c, x, y, f, lkind):
    """One round of a member laid out by a compiled path (:data:`CONSTANTS`, :data:`STATE` and
    :data:`WORK` from offset o of F; ``ST`` and ``alpha`` its column expansion map's, m centres):
    the kernel row of x again (the decision was the map's, the same sum), then :func:`kap_learn`.
    Returns the new m."""
    B, d = ST.shape[1], x.shape[0]
    p = int(F[o])
    q = o + 4
    memX = F[q:q + p * d].reshape((p, d))
    q += p * d
    memY = F[q:q + p]
    H = F[q + p:q + p + p * B].reshape((p, B))
    q += p + p * B
    pushed = int(F[q])
    kt = F[q + 1:q + 1 + B]
    q += 1 + B
    G = F[q:q + p * p].reshape((p, p))
    r = F[q + p * p:q + p * p + p]
    z = F[q + p * p + p:q + p * p + 2 * p]
    L = F[q + p * p + 2 * p:q + 2 * p * p + 2 * p].reshape((p, p))
    column_kernel_row(kind, a, b, c, ST, m, x, kt)
    m, pushed = kap_learn(kind, a, b, c, ST, alpha, m, x, y, kt, F[o + 1], F[o + 2], F[o + 3], memX, memY, H, pushed,
                          G, r, z, L)
    F[o + 4 + p * d + p + p * B] = pushed
    return m
