"""The expansion map: f(x) = sum_{i<m} alpha_i kappa(sv_i, x) over the stored rows (component
``"expansion"`` of :mod:`okl.components`). Per round O(m d)."""

from __future__ import annotations



from okl._compiled import jit, kernel_value


@jit
def expansion_decision(kind, a, b, c, SV, alpha, m, x):
    f = 0.0
    for j in range(m):
        f += alpha[j] * kernel_value(kind, a, b, c, SV[j], x)
    return f
