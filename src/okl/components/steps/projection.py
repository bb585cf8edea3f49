"""The Projectron's span projection (Orabona, Keshet & Caputo, JMLR 10 2009): the bordered
inverse of the support vectors' kernel matrix grown by one vector, and the floor on a new
vector's squared residual. Shared by the Projectron(++) and BSGD's projection rule."""

from __future__ import annotations

from okl._compiled import jit



#: Projectron: a mistake adds x_t to the support set only if its squared distance to span(SV),
#: delta_t^2 = kappa(x_t, x_t) - k_t^T K^{-1} k_t, exceeds this fraction of kappa(x_t, x_t);
#: otherwise the round projects. Guards the bordered inverse (it divides by delta_t^2) against
#: duplicates and numerically dependent points, which LSOKL adds, dividing by ~0. The rounding
#: error of the computed delta_t^2 grows like eps ||K^{-1}|| ||k_t||^2, and ||K^{-1}|| like one
#: over the smallest accepted delta^2, so the floor must be well above sqrt(eps B) ~ 1e-7 for the
#: test to mean anything: with 1e-10 the kept inverse of codrna (sigma 8) drifts to garbage
#: (||K^{-1} K - I|| up to 1e16, mistake rates 24-44 % by seed); with 1e-6 it stays bounded
#: (28-29 %). On german (sigma 8/2/1, 20 permutations) no floor between 1e-10 and 1e-5 changes
#: a decision; on svmguide3 (41 duplicate rows) the mean mistake rates move by at most 0.25.
PROJECTRON_MIN_RESIDUAL = 1e-6


@jit
def bordered_inverse_grow(Kinv, m, d, delta2):
    """K^{-1} of m support vectors grown by one whose projection coefficients are d and squared
    residual delta2 (:func:`okl._compiled.times_and_quadratic`):
    K^{-1} <- [[K^{-1}, 0], [0, 0]] + [d; -1][d; -1]' / delta2 (O(m^2), no refactorisation)."""
    inv = 1.0 / delta2
    for p in range(m):
        dp = d[p] * inv
        for q in range(m):
            Kinv[p, q] += dp * d[q]
        Kinv[p, m] = -dp
        Kinv[m, p] = -dp
    Kinv[m, m] = inv
