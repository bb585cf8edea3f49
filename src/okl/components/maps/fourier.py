"""The random Fourier map: z = [cos U x, sin U x] / sqrt(D) (component ``"fourier"`` of
:mod:`okl.components`; Rahimi & Recht 2007). Per round O(d D)."""

from __future__ import annotations

from okl._compiled import jit, rows_axpy
from okl._vecmath import sincos_scaled_into


@jit
def project_t(UT, x, p):
    """p[j] = u_j^T x for the directions given transposed, UT = U^T (d x D, C-contiguous): the D
    sums advance together over the coordinates (:func:`okl._compiled.rows_axpy`, vectorised), each
    summed over c = 0..d-1 in order from 0.0, so p is bit for bit the per-direction loop of
    :func:`okl.learners.fogd.fourier_features`' projection."""
    rows_axpy(UT, x, p)


@jit
def fourier_from_projections(p, scale, z):
    """z = [cos p, sin p] * scale (2D entries) with :func:`okl._vecmath.sincos_scaled_into`:
    one vectorised range reduction for both, within 1 ulp of cos / sin."""
    D = p.shape[0]
    sincos_scaled_into(p, scale, z[:D], z[D:], D)
