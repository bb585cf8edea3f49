"""EX-KRLS's step (component ``"ex-krls"`` of :mod:`okl.components`): the extended kernel
recursive least squares of the tracking model (Liu, Park, Wang & Principe, "Extended kernel
recursive least squares algorithm", IEEE TSP 57(10) 2009; KAFBOX ``lib/exkrls.m``, whose
implementation of the tracking model this follows, with its maximum dictionary size M).

The state is a random walk x_{t+1} = alpha x_t + noise of the weights in feature space, with
state forgetting alpha (``alphaf``), data forgetting beta, regularisation lambda and the
trade-off q between the state's variation and the measurement noise. Round i (1, 2, ...) on
(x, y), with k = [kappa(d_j, x)]_j over the dictionary and k_xx = kappa(x, x):

* first pair: a = alphaf y / (lambda beta + k_xx); rho = lambda beta / (alphaf^2 beta + lambda q);
  Q = alphaf^2 / ((beta lambda + k_xx) (alphaf^2 + beta lambda q)); the dictionary is {x};
* while the dictionary holds fewer than M: z = Q k; r = beta^i rho + k_xx - k'z;
  e = y - k'a (the a-priori error: the decision); a <- alphaf [a - z e / r; e / r] (x joins);
  s = alphaf^2 + beta^i q rho; rho <- rho / s; Q <- alphaf^2 / (r s) [[Q r + z z', -z], [-z', 1]];
* once full (KAFBOX's "avoid infinite growth"): nothing changes (the round counter i still
  advances).

The decision is the expansion map over the dictionary, f(x) = sum_j a_j kappa(d_j, x), the sum of
:func:`okl.components.maps.expansion.expansion_decision` (same terms, same order). Q's update
forms each entry from products that are the same float for (i, j) and (j, i), so Q stays exactly
symmetric. Per round O(m d + m^2) while growing, O(m d) once full; memory O(M d + M^2).

Declared state (:mod:`okl.components.spec`): the constants alphaf, beta, lambda, q; Q (M x M), rho
and the round counter i; work: the kernel row and z.
"""

from __future__ import annotations

import math

from okl._compiled import copy_into, jit, kernel_value, times_and_quadratic
from okl.components.spec import BUDGET_SIZE as M, Field

#: the step's declared block (:func:`exkrls_member_round` reads it in this order)
CONSTANTS = ("state_forgetting", "forgetting", "regularization", "tradeoff")
STATE = (Field("Q", (M, M)), Field("rho", ()), Field("rounds", (), "int"))
WORK = (Field("kt", (M,)), Field("z", (M,)))


@jit
def exkrls_round(kind, a, b, c, alphaf, beta, lam, q, x, y, SV, alpha, Q, m, rho, i, kt, z):
    """One round (the module docstring) on x with target y, i the round's index (1, 2, ...):
    the decision f = k'a, then the update. Returns (f, m, rho)."""
    f = 0.0
    for j in range(m):
        kt[j] = kernel_value(kind, a, b, c, SV[j], x)
        f += alpha[j] * kt[j]
    kxx = kernel_value(kind, a, b, c, x, x)
    if m == 0:
        alpha[0] = alphaf * y / (lam * beta + kxx)
        rho = lam * beta / (alphaf * alphaf * beta + lam * q)
        Q[0, 0] = alphaf * alphaf / ((beta * lam + kxx) * (alphaf * alphaf + beta * lam * q))
        copy_into(SV[0], x)
        return f, 1, rho
    if m >= SV.shape[0]:
        return f, m, rho
    bi = math.pow(beta, i)
    r_ = bi * rho + kxx - times_and_quadratic(Q, kt, m, z)  # (z = Q k)
    e = y - f
    for j in range(m):
        alpha[j] = alphaf * (alpha[j] - z[j] * e / r_)
    alpha[m] = alphaf * (e / r_)
    copy_into(SV[m], x)
    dummy = alphaf * alphaf + bi * q * rho
    rho = rho / dummy
    g = alphaf * alphaf / (r_ * dummy)
    for p in range(m):
        for j in range(m):
            Q[p, j] = g * (Q[p, j] * r_ + z[p] * z[j])
        Q[p, m] = Q[m, p] = g * -z[p]
    Q[m, m] = g
    return f, m + 1, rho


@jit
def exkrls_rounds(kind, a, b, c, alphaf, beta, lam, q, X, Y, out, SV, alpha, Q, m, rho, i, kt, z):
    """Predict-then-learn over the rows of X (out[t] = f(X[t]) before learning it), i the rounds
    before; returns (m, rho, i)."""
    for t in range(X.shape[0]):
        i += 1
        out[t], m, rho = exkrls_round(kind, a, b, c, alphaf, beta, lam, q, X[t], Y[t], SV, alpha, Q, m, rho, i, kt,
                                      z)
    return m, rho, i


@jit
def exkrls_member_round(F, o, SV, alpha, m, kind, a, b, c, x, y, f, lkind):
    """One round of a member laid out by a compiled path (:data:`CONSTANTS`, :data:`STATE` and
    :data:`WORK` from offset o of F; ``SV`` and ``alpha`` its expansion map's, m stored): the
    round counter advances, then :func:`exkrls_round` (the kernel row again; its decision is the
    map's, the same sum). Returns the new m."""
    B = SV.shape[0]
    Q = F[o + 4:o + 4 + B * B].reshape((B, B))
    p = o + 4 + B * B
    i = int(F[p + 1]) + 1
    F[p + 1] = i
    kt = F[p + 2:p + 2 + B]
    z = F[p + 2 + B:p + 2 + 2 * B]
    _, m, rho = exkrls_round(kind, a, b, c, F[o], F[o + 1], F[o + 2], F[o + 3], x, y, SV, alpha, Q, m, F[p], i, kt, z)
    F[p] = rho
    return m
