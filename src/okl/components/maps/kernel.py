"""The kernel map: z = P^T kappa_L(x) over m landmarks (component ``"kernel"`` of
:mod:`okl.components`; the Nystrom and sketched maps of NOGD, SkeGD and FORKS: ``LT`` the landmarks
transposed, d x m, ``P`` the m x k projection). Per round O(m d + m k).

Its member functions in auto's engine (the layout of :mod:`okl.components.columns`):
:func:`kernel_member_features` (one row) and :func:`kernel_block_features` (up to four rows a pass
over the map, the same values)."""

from __future__ import annotations

import numpy as np

from okl._compiled import column_norms_t, kernel_features_rows, kernel_row_t, kernel_row_t_sparse, row_norm, rows_axpy
from okl._jit import jit_inline
import okl.components.header as H
from okl.components.columns import (K, KA, KB_, KC, KIND, MAP, NL, O_A, O_KB, O_NRM, O_P, O_Z, SRC, feature_slot,
                                    row_is_sparse)


@jit_inline
def kernel_member_features(F, I, R, j, x, xi, xv, own, q, pre):
    """Member j's features of row x into its slot q, when ``own`` (else they are its source's,
    the same map: computed before) and not ``pre`` (already there: :func:`kernel_block_features`);
    a sparse row's kernel row from the landmarks' norms (O(nnz m)). Returns them."""
    z = feature_slot(F, I, j, q)
    if own and not pre:
        d = x.shape[0]
        k, m = I[j, K], I[j, NL]
        LT = F[I[j, O_A]:I[j, O_A] + d * m].reshape((d, m))
        P = F[I[j, O_P]:I[j, O_P] + m * k].reshape((m, k))
        kb = F[I[j, O_KB]:I[j, O_KB] + m]
        kind = int(R[j, KIND])
        if row_is_sparse(xi):
            kernel_row_t_sparse(kind, R[j, KA], R[j, KB_], R[j, KC], LT, m, F[I[j, O_NRM]:I[j, O_NRM] + m],
                                xi, xv, row_norm(kind, xv), kb)
        else:
            kernel_row_t(kind, R[j, KA], R[j, KB_], R[j, KC], LT, m, x, kb)
        rows_axpy(P, kb, z)
    return z


@jit_inline
def kernel_block_features(F, I, R, j, X, r, nb, bound):
    """Member j's features of rows r..r+nb-1 (nb <= 4, rows already checked) into its slots
    0..nb-1, by :func:`okl._compiled.kernel_features_rows`: four rows a pass over the map, each
    entry summed over the landmarks in order from 0.0, bit for bit :func:`kernel_member_features`
    on one row."""
    d = X.shape[1]
    k, m = I[j, K], I[j, NL]
    kernel_features_rows(int(R[j, KIND]), R[j, KA], R[j, KB_], R[j, KC],
                         F[I[j, O_A]:I[j, O_A] + d * m].reshape((d, m)), m,
                         F[I[j, O_P]:I[j, O_P] + m * k].reshape((m, k)), X[r:r + nb], bound,
                         F[I[j, O_KB]:I[j, O_KB] + 4 * m].reshape((4, m)),
                         F[I[j, O_Z]:I[j, O_Z] + nb * k].reshape((nb, k)))



def kernel_layout(plan, m, I, R):
    """The kernel map's parts (copies: the map is fixed in a stage): its landmarks transposed, its
    projection and the landmarks' norms; the work of four rows' kernel values (``kb``)."""
    nl, k = plan.P.shape
    I[NL], I[K] = nl, k
    return [(O_A, np.ascontiguousarray(plan.LT), None), (O_P, np.ascontiguousarray(plan.P), None),
            (O_NRM, nl, None)], 4 * nl


def kernel_norms(F, I, R, j, dim):
    """The landmarks' norms (sparse rows' kernel rows)."""
    m = int(I[j, NL])
    column_norms_t(int(R[j, KIND]), F[I[j, O_A]:I[j, O_A] + dim * m].reshape((dim, m)), m,
                   F[I[j, O_NRM]:I[j, O_NRM] + m])


# The single learners' per-event plan (:mod:`okl.engine.fastpath`; the header slots of
# :mod:`okl.components.header`, H): the scaled row xs, the plan's buffer F.


@jit_inline
def kernel_event_features(F, xs, z):
    """z = P^T kappa_L(xs) (the landmarks transposed at ``O_A``, P at ``O_P``, the kernel row's
    work at ``O_KB``)."""
    d = xs.shape[0]
    m, k = int(F[H.M]), int(F[H.K])
    oa, okb, op = int(F[H.O_A]), int(F[H.O_KB]), int(F[H.O_P])
    kb = F[okb:okb + m]
    kernel_row_t(int(F[H.KKIND]), F[H.KA], F[H.KB], F[H.KC], F[oa:oa + d * m].reshape((d, m)), m, xs, kb)
    rows_axpy(F[op:op + m * k].reshape((m, k)), kb, z)


def kernel_event_layout(plan):
    """(m, k, fixed parts): the landmarks and features, the landmarks transposed and P."""
    m, k = plan.P.shape
    return m, k, {"A": plan.LT, "P": plan.P}


def kernel_shares(F, I, R, j, dim) -> None:
    """After the layout: member j whose map equals an earlier member's (the same kernel, landmarks
    and projection: NOGD's two steps at one width in classification, whose stage 1 is the same)
    reads that member's features (``I[j, SRC]``, its slot ``O_Z``), computed once a round for both."""
    nl, k = I[j, NL], I[j, K]
    for i in range(j):
        if I[i, MAP] == I[j, MAP] and I[i, SRC] == i and I[i, K] == k and I[i, NL] == nl \
                and (R[i, :4] == R[j, :4]).all() \
                and np.array_equal(F[I[i, O_A]:I[i, O_A] + dim * nl], F[I[j, O_A]:I[j, O_A] + dim * nl]) \
                and np.array_equal(F[I[i, O_P]:I[i, O_P] + nl * k], F[I[j, O_P]:I[j, O_P] + nl * k]):
            I[j, SRC], I[j, O_Z] = i, I[i, O_Z]
            return
