"""Numba building blocks shared by the compiled per-round loops.

Kernels and losses enter compiled code as numeric specs (``Kernel.spec()``, ``Loss.kind``), so
one compiled loop serves every kernel and loss without Python objects in the loop.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from okl.kernels import LAPLACIAN_KIND, LINEAR_KIND, POLYNOMIAL_KIND, RBF_KIND
from okl.losses import HINGE, LOGISTIC, SQUARED, SQUARED_HINGE

jit = nb.njit(cache=True, fastmath=False, nogil=True)


@jit
def kernel_value(kind, a, b, c, x, z):
    """kappa(x, z) for the kernel spec (kind, a, b, c) of okl.kernels."""
    n = x.shape[0]
    if kind == RBF_KIND:
        s = 0.0
        for i in range(n):
            d = x[i] - z[i]
            s += d * d
        return math.exp(-a * s)
    if kind == LAPLACIAN_KIND:
        s = 0.0
        for i in range(n):
            s += abs(x[i] - z[i])
        return math.exp(-a * s)
    s = 0.0
    for i in range(n):
        s += x[i] * z[i]
    if kind == POLYNOMIAL_KIND:
        return (a * s + b) ** c
    return s


@jit
def kernel_row(kind, a, b, c, S, m, x, out):
    """out[i] = kappa(S[i], x) for the first m rows of S."""
    for i in range(m):
        out[i] = kernel_value(kind, a, b, c, S[i], x)


@jit
def loss_value(kind, z, y):
    if kind == HINGE:
        return max(0.0, 1.0 - y * z)
    if kind == SQUARED_HINGE:
        m = max(0.0, 1.0 - y * z)
        return m * m
    if kind == LOGISTIC:
        m = -y * z
        if m > 0:
            return m + math.log1p(math.exp(-m))
        return math.log1p(math.exp(m))
    return (z - y) * (z - y)


@jit
def loss_derivative(kind, z, y):
    """dl/dz at decision value z with label/target y."""
    if kind == HINGE:
        return -y if y * z < 1.0 else 0.0
    if kind == SQUARED_HINGE:
        return -2.0 * y * max(0.0, 1.0 - y * z)
    if kind == LOGISTIC:
        m = y * z
        if m > -30.0:
            return -y / (1.0 + math.exp(m))
        return -y
    return 2.0 * (z - y)


@jit
def dot(u, v):
    s = 0.0
    for i in range(u.shape[0]):
        s += u[i] * v[i]
    return s


def warm_up() -> None:
    """Compile the shared helpers once (cached on disk by Numba)."""
    x = np.zeros(2)
    kernel_value(RBF_KIND, 1.0, 0.0, 0.0, x, x)
    loss_derivative(SQUARED, 0.0, 0.0)


__all__ = ["jit", "kernel_value", "kernel_row", "loss_value", "loss_derivative", "dot", "LINEAR_KIND"]
