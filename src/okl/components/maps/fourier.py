"""The random Fourier map: z = [cos U x, sin U x] / sqrt(D) (component ``"fourier"`` of
:mod:`okl.components`; Rahimi & Recht 2007). Per round O(d D)."""

from __future__ import annotations

import math

import numpy as np

from okl._compiled import jit, rows_axpy, sparse_axpy
from okl._jit import jit_inline
import okl.components.header as H
from okl._vecmath import sincos_scaled_into
from okl.components.columns import (GKIND, GSCALE, GSEED, K, MAP, NL, O_A, O_KB, O_Z, SRC, feature_slot,
                                    row_is_sparse)
from okl.features.generated import CACHE_COLUMNS, project_generated, project_generated_cached


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


@jit_inline
def _member_features(F, I, R, j, x, xi, xv, own, q, project):
    """Member j's features of row x into its slot q: ``project(F, I, R, j, x, xi, xv, p)`` writes
    the D projections u_i^T x into p (work at ``O_KB``), then their cosines and sines; a member not
    ``own`` has directions twice its source's (auto draws them so): the double angle of the
    source's features (:func:`double_angle`)."""
    z = feature_slot(F, I, j, q)
    k = I[j, K]
    if own:
        D = k // 2
        p = F[I[j, O_KB]:I[j, O_KB] + D]
        project(F, I, R, j, x, xi, xv, p)
        fourier_from_projections(p, 1.0 / math.sqrt(D), z)
    else:
        o = I[I[j, SRC], O_Z] + q * k
        double_angle(F[o:o + k], z)
    return z


@jit_inline
def _stored_projections(F, I, R, j, x, xi, xv, p):
    """The projections on the stored directions (``UT`` at ``O_A``, d x D): a sparse row sums
    the columns of its non-zeros, bit for bit :func:`project_t` on the dense row."""
    d, D = x.shape[0], p.shape[0]
    UT = F[I[j, O_A]:I[j, O_A] + d * D].reshape((d, D))
    if row_is_sparse(xi):
        sparse_axpy(UT, xi, xv, p)
    else:
        project_t(UT, x, p)


@jit_inline
def _generated_projections(F, I, R, j, x, xi, xv, p):
    """The projections on the directions' columns of the row's non-zeros, generated
    (:mod:`okl.features.generated`; seed and kind in ``GSEED`` / ``GKIND``, scale in ``GSCALE``),
    from the cache of C columns at ``O_A`` when it has one (``NL`` = C)."""
    D, C = p.shape[0], I[j, NL]
    if row_is_sparse(xi):
        nz, vals = xi, xv
    else:  # (a dense row: its non-zeros found here)
        nz = np.flatnonzero(x)
        vals = x[nz]
    if C > 0:
        project_generated_cached(I[j, GSEED], I[j, GKIND], R[j, GSCALE], nz, vals, p,
                                 F[I[j, O_A]:I[j, O_A] + C * D].reshape((C, D)),
                                 F[I[j, O_A] + C * D:I[j, O_A] + C * (D + 1)])
    else:
        project_generated(I[j, GSEED], I[j, GKIND], R[j, GSCALE], nz, vals, p)


@jit_inline
def fourier_member_features(F, I, R, j, x, xi, xv, own, q, pre):
    """The ``"fourier"`` map's features in auto's engine (:func:`_member_features` on the stored
    directions)."""
    return _member_features(F, I, R, j, x, xi, xv, own, q, _stored_projections)


@jit_inline
def generated_member_features(F, I, R, j, x, xi, xv, own, q, pre):
    """The ``"generated fourier"`` map's features in auto's engine (:func:`_member_features` on
    the generated directions)."""
    return _member_features(F, I, R, j, x, xi, xv, own, q, _generated_projections)


@jit
def double_angle(zs, z):
    """Fourier features of the directions 2U from those of U, zs = [cos p, sin p] / sqrt(D):
    z = [cos 2p, sin 2p] / sqrt(D) with cos 2p = (cos p - sin p)(cos p + sin p) and
    sin 2p = 2 sin p cos p (a few ulp from sin / cos of 2p, for 4 multiplications a feature
    instead of a range reduction)."""
    D = zs.shape[0] // 2
    r = math.sqrt(D)
    for i in range(D):
        c = zs[i]
        s = zs[D + i]
        z[i] = ((c - s) * (c + s)) * r
        z[D + i] = (2.0 * c * s) * r



def fourier_layout(plan, m, I, R):
    """The Fourier map's parts: its directions transposed (a copy); the projections' work (``kb``)."""
    D = plan.UT.shape[1]
    I[K] = 2 * D
    return [(O_A, np.ascontiguousarray(plan.UT), None)], D


def generated_layout(plan, m, I, R):
    """The generated Fourier map's parts: the column cache (C x D, then its C tags); the
    projections' work (``kb``). Seed, kind and scale from ``plan.generator``."""
    k = plan.features
    I[K] = k
    I[GSEED], I[GKIND], R[GSCALE] = plan.generator
    I[NL] = max(1, min(CACHE_COLUMNS, m.dim_))
    return [(O_A, int(I[NL]) * (k // 2 + 1), None)], k // 2


# The single learners' per-event plan (:mod:`okl.engine.fastpath`; the header slots of
# :mod:`okl.components.header`, H): the scaled row xs, the plan's buffer F.


@jit_inline
def fourier_event_features(F, xs, z):
    """z = [cos U xs, sin U xs] / sqrt(D) (U transposed at ``O_A``, D = ``M``; the projections'
    work at ``O_KB``)."""
    d = xs.shape[0]
    m = int(F[H.M])
    oa, okb = int(F[H.O_A]), int(F[H.O_KB])
    project_t(F[oa:oa + d * m].reshape((d, m)), xs, F[okb:okb + m])
    fourier_from_projections(F[okb:okb + m], 1.0 / math.sqrt(m), z)


def fourier_event_layout(plan):
    """(m, k, fixed parts): D directions, 2D features, the directions transposed."""
    D = plan.UT.shape[1]
    return D, 2 * D, {"A": plan.UT}


def generated_shares(I, R, j) -> tuple:
    """Before the layout: generated member j whose seed, kind and features are another member's
    at twice its scale (auto draws them so) takes the double angle of that member's features
    (``I[j, SRC]``), and keeps no column cache of its own (should its source leave the pool, it
    generates its columns uncached). Returns the columns whose parts it no longer needs."""
    for i in range(I.shape[0]):
        if i != j and I[i, MAP] == I[j, MAP] and I[i, K] == I[j, K] and I[i, GSEED] == I[j, GSEED] \
                and I[i, GKIND] == I[j, GKIND] and R[j, GSCALE] != 0.0 and R[j, GSCALE] == 2.0 * R[i, GSCALE]:
            I[j, SRC], I[j, NL] = i, 0
            return (O_A,)
    return ()


def fourier_shares(F, I, R, j, dim) -> None:
    """After the layout: member j whose directions are twice another's (auto draws them so: the
    ratio doubles a non-zero norm, no cycle) takes the double angle of that member's features."""
    D = I[j, K] // 2
    Uj = F[I[j, O_A]:I[j, O_A] + dim * D]
    for i in range(I.shape[0]):
        if i != j and I[i, MAP] == I[j, MAP] and I[i, K] == I[j, K]:
            if Uj.any() and np.array_equal(2.0 * F[I[i, O_A]:I[i, O_A] + dim * D], Uj):
                I[j, SRC] = i
                return


@jit
def fourier_kernels_features(UT, x, n_kernels, p, z):
    """Every kernel's Fourier features of x: the P D projections at once (:func:`project_t`,
    UT = U^T with kernel k's directions in columns k D .. (k + 1) D - 1), then z[2 k D : 2 (k + 1) D] =
    [cos, sin] / sqrt(D) of kernel k's projections (:func:`fourier_from_projections`; the
    ``"fourier kernels"`` map of Raker and AdaRaker)."""
    project_t(UT, x, p)
    D = p.shape[0] // n_kernels
    scale = 1.0 / math.sqrt(D)
    for k in range(n_kernels):
        fourier_from_projections(p[k * D:(k + 1) * D], scale, z[2 * k * D:2 * (k + 1) * D])


@jit_inline
def kernels_member_features(F, I, R, j, x, xi, xv, own, q, pre):
    """The ``"fourier kernels"`` map's features of row x in auto's engine: the P = ``NL`` kernels'
    directions transposed at ``O_A`` (d x P D), their projections' work at ``O_KB``, the P 2D
    features into the slot q (:func:`fourier_kernels_features`; a sparse row on its dense copy)."""
    z = feature_slot(F, I, j, q)
    d, PD = x.shape[0], I[j, K] // 2
    fourier_kernels_features(F[I[j, O_A]:I[j, O_A] + d * PD].reshape((d, PD)), x, I[j, NL],
                             F[I[j, O_KB]:I[j, O_KB] + PD], z)
    return z


def kernels_layout(plan, m, I, R):
    """The map's parts: the P kernels' directions transposed (a copy; ``plan.options["kernels"]``
    is P); the projections' work (``kb``)."""
    PD = plan.UT.shape[1]
    I[K], I[NL] = 2 * PD, plan.options["kernels"]
    return [(O_A, np.ascontiguousarray(plan.UT), None)], PD
