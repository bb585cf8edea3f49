"""The temperature of :class:`okl.runtime.multiclass.MultiClass`'s probabilities: P(k | x) =
softmax(a m(x)) over the K margins, with one temperature a learned online by a cumulative Newton
step per round (the :mod:`okl.runtime.multiclass` docstring, "Probabilities")."""

from __future__ import annotations

import math

import numpy as np

from okl._jit import jit

#: temperature state: [a, H] (see "Probabilities")
TEMPERATURE_START = (1.0, 1.0)
A_MIN, A_MAX = 1e-3, 1e3


@jit
def _softmax_row(a, m, p):
    """p = softmax(a m) over the finite entries of m (0 elsewhere); returns how many are finite."""
    top = -np.inf
    n = 0
    for k in range(m.shape[0]):
        if np.isfinite(m[k]):
            n += 1
            if a * m[k] > top:
                top = a * m[k]
    s = 0.0
    for k in range(m.shape[0]):
        p[k] = math.exp(a * m[k] - top) if np.isfinite(m[k]) else 0.0
        s += p[k]
    for k in range(m.shape[0]):
        p[k] /= s if s > 0.0 else 1.0
    return n


@jit
def temperature_update(state, D, y):
    """The temperature's test-then-train rounds over the margins D (n, K, before learning) and the
    class indices y (:mod:`okl.runtime.multiclass` docstring, "Probabilities"); rows with fewer
    than 2 classes seen or a class not seen yet teach nothing."""
    p = np.empty(D.shape[1])
    for i in range(D.shape[0]):
        yi = int(y[i])
        if yi >= D.shape[1] or not np.isfinite(D[i, yi]) or _softmax_row(state[0], D[i], p) < 2:
            continue
        mean = 0.0
        sq = 0.0
        for k in range(D.shape[1]):
            if p[k] > 0.0:
                mean += p[k] * D[i, k]
                sq += p[k] * D[i, k] * D[i, k]
        g = mean - D[i, yi]
        state[1] += max(sq - mean * mean, 0.0)
        state[0] = min(max(state[0] - g / state[1], A_MIN), A_MAX)


def softmax(a: float, D: np.ndarray) -> np.ndarray:
    """softmax(a m) per row of D over its finite entries (uniform over K for a row with none)."""
    D = np.atleast_2d(D)
    P = np.zeros(D.shape)
    for i in range(D.shape[0]):
        if _softmax_row(a, D[i], P[i]) == 0 and D.shape[1]:
            P[i] = 1.0 / D.shape[1]
    return P
