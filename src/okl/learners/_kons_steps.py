"""The numerical steps of the PROS-N-KONS family (:mod:`okl.learners.kons`, whose docstring
gives the method): the two embeddings of the KORS dictionary, phi~(x) = E k_I(x) (the paper's
Nystrom map Lambda^{-1/2} U^T, or L^{-1} bordered in O(j m) per addition), and the compiled
exact-ONS rounds of one epoch in the embedded space."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from okl._compiled import dot, jit, loss_derivative


def _default_rtol(j: int, rtol: float | None) -> float:
    return j * np.finfo(float).eps if rtol is None else rtol


def nystrom_embedding(K: np.ndarray, rtol: float | None = None) -> np.ndarray:
    """E = Lambda^{-1/2} U^T (j' x j) from K = U Lambda U^T, so that phi~(x) = E k_I(x).

    Eigenvalues <= rtol * lambda_max are dropped (rtol None: j * machine epsilon).

    >>> K = np.array([[2.0, 1.0], [1.0, 2.0]])
    >>> E = nystrom_embedding(K)
    >>> np.allclose((E @ K).T @ (E @ K), K)
    True
    """
    j = K.shape[0]
    if j == 0:
        return np.zeros((0, 0))
    lam, U = scipy.linalg.eigh(K)
    lam, U = lam[::-1], U[:, ::-1]
    keep = lam > _default_rtol(j, rtol) * max(lam[0], 0.0)
    return np.ascontiguousarray(U[:, keep].T / np.sqrt(lam[keep])[:, None])


def cholesky_embedding_append(E: np.ndarray, phi_new: np.ndarray, k_xx: float,
                              rtol: float | None = None) -> tuple[np.ndarray, bool]:
    """Border E = L^{-1} (m x j) with a new dictionary point in O(j m).

    ``phi_new`` = E k_I(x_new) (the new point under the old map). Returns (E_new, grew): E_new is
    (m+1) x (j+1) with last row [-phi_new^T E, 1] / d, d^2 = k_xx - |phi_new|^2, or m x (j+1)
    (a zero column, ``grew`` False) when d^2 <= rtol * k_xx (numerically in the old span).
    """
    m, j = E.shape
    d2 = k_xx - float(phi_new @ phi_new)
    if d2 <= _default_rtol(j + 1, rtol) * k_xx:
        return np.ascontiguousarray(np.hstack([E, np.zeros((m, 1))])), False
    d = np.sqrt(d2)
    out = np.zeros((m + 1, j + 1))
    out[:m, :j] = E
    out[m, :j] = -(phi_new @ E) / d
    out[m, j] = 1.0 / d
    return out, True


@jit
def _matvec_sym(S, x, out):
    """out = S x for symmetric S, by rows (contiguous axpy, vectorisable)."""
    m = x.shape[0]
    for k in range(m):
        out[k] = 0.0
    for c in range(m):
        xc = x[c]
        if xc != 0.0:
            row = S[c]
            for k in range(m):
                out[k] += xc * row[k]


@jit
def kons_rounds(Phi, Y, lkind, C, half_sigma, v, w, Ainv, A, track_A, epoch_start, reset_learns,
                step_updated, out, a, start_projects=False):
    """Test-then-train ONS rounds of one epoch on precomputed embedded rows ``Phi``.

    ``v`` enters as v_t (the point before projection) and leaves as v_{t+1}; ``w`` leaves as the
    last iterate; ``Ainv`` (and ``A`` when ``track_A``) are updated in place. ``epoch_start``:
    row 0 is the first round of an epoch (no projection unless ``start_projects``; learns only if
    ``reset_learns``).
    """
    n = Phi.shape[0]
    m = Phi.shape[1]
    for i in range(n):
        phi = Phi[i]
        z = dot(v, phi)
        start = epoch_start and i == 0
        have_a = False
        if start and not start_projects:
            f = z
            for k in range(m):
                w[k] = v[k]
        else:
            hz = 0.0
            if z > C:
                hz = z - C
            elif z < -C:
                hz = z + C
            if hz != 0.0:
                _matvec_sym(Ainv, phi, a)
                have_a = True
                coef = hz / dot(phi, a)
                for k in range(m):
                    w[k] = v[k] - coef * a[k]
            else:
                for k in range(m):
                    w[k] = v[k]
            f = z - hz
        out[i] = f
        gd = loss_derivative(lkind, f, Y[i])
        if (start and not reset_learns) or gd == 0.0 or m == 0:
            for k in range(m):
                v[k] = w[k]
            continue
        if not have_a:
            _matvec_sym(Ainv, phi, a)
        c = half_sigma * gd * gd
        denom = 1.0 + c * dot(phi, a)
        step = gd / denom if step_updated else gd
        for k in range(m):
            v[k] = w[k] - step * a[k]
        s = c / denom
        for r in range(m):
            sr = s * a[r]
            row = Ainv[r]
            for k in range(m):
                row[k] -= sr * a[k]
        if track_A:
            for r in range(m):
                cr = c * phi[r]
                row = A[r]
                for k in range(m):
                    row[k] += cr * phi[k]
