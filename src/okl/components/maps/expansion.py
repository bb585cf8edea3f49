"""The expansion map: f(x) = sum_{i<m} alpha_i kappa(sv_i, x) over the stored rows (component
``"expansion"`` of :mod:`okl.components`). Per round O(m d).

In auto's engine (the layout of :mod:`okl.components.columns`) the stored rows are B x d at
``O_A``, their norms at ``O_NRM`` (sparse rows' kernel values), the coefficients at ``O_W`` (K x B
with K outputs): :func:`expansion_outputs_one` and :func:`expansion_outputs_k`."""

from __future__ import annotations

from okl._compiled import jit, kernel_value, kernel_value_sparse, row_norm
from okl._jit import jit_inline
import okl.components.header as H
from okl.components.columns import BUDGET, KA, KB_, KC, KIND, M, O_A, O_NRM, O_W, member_rows, row_is_sparse


@jit
def expansion_decision(kind, a, b, c, SV, alpha, m, x):
    f = 0.0
    for j in range(m):
        f += alpha[j] * kernel_value(kind, a, b, c, SV[j], x)
    return f


@jit
def expansion_kernel(F, I, R, j, i, x, xi, xv, xn):
    """kappa(sv_i, x) for member j's stored row i: :func:`okl._compiled.kernel_value`, or for a
    sparse row (norm xn) :func:`okl._compiled.kernel_value_sparse` with the stored row's norm."""
    d = x.shape[0]
    o = I[j, O_A] + i * d
    kind, a, b, c = int(R[j, KIND]), R[j, KA], R[j, KB_], R[j, KC]
    if row_is_sparse(xi):
        return kernel_value_sparse(kind, a, b, c, F[o:o + d], F[I[j, O_NRM] + i], xi, xv, xn)
    return kernel_value(kind, a, b, c, F[o:o + d], x)


@jit_inline
def expansion_outputs_one(F, I, R, j, x, xi, xv, q, out):
    """Member j's kernel sum on row x into out[0]."""
    alpha = F[I[j, O_W]:I[j, O_W] + I[j, BUDGET]]
    xn = row_norm(int(R[j, KIND]), xv)
    f = 0.0
    for i in range(min(I[j, M], I[j, BUDGET])):
        f += alpha[i] * expansion_kernel(F, I, R, j, i, x, xi, xv, xn)
    out[0] = f


@jit_inline
def expansion_outputs_k(F, I, R, j, x, xi, xv, q, nk, out):
    """Member j's K = ``nk`` kernel sums on row x into out (coefficients K x B), each kernel value
    computed once for the K outputs."""
    B = I[j, BUDGET]
    alpha = member_rows(F, I, j, O_W, nk, B)
    xn = row_norm(int(R[j, KIND]), xv)
    for o in range(nk):
        out[o] = 0.0
    for i in range(min(I[j, M], B)):
        kv = expansion_kernel(F, I, R, j, i, x, xi, xv, xn)
        for o in range(nk):
            out[o] += alpha[o, i] * kv


# The layout (Python: :class:`okl.engine.layout.Engine`): a part is (column, the array copied in or
# the size of a work space, the member's attribute that becomes a view of it, or None).


def expansion_layout(plan, m, I, R):
    """The expansion's parts: its stored rows, coefficients (both the member's, shared) and the
    rows' norms; no features (``kb`` 0)."""
    I[M], I[BUDGET] = getattr(m, plan.counts), plan.budget
    return [(O_A, getattr(m, plan.SV), plan.SV), (O_W, getattr(m, plan.w), plan.w), (O_NRM, plan.budget, None)], 0


def expansion_norms(F, I, R, j, dim):
    """The stored rows' norms (sparse rows' kernel values: :func:`okl._compiled.row_norm`), as the
    support step keeps them."""
    B, kind = int(I[j, BUDGET]), int(R[j, KIND])
    SV = F[I[j, O_A]:I[j, O_A] + B * dim].reshape((B, dim))
    for i in range(min(int(I[j, M]), B)):
        F[I[j, O_NRM] + i] = row_norm(kind, SV[i])


# The single learners' per-event plan (:mod:`okl.engine.fastpath`; the header slots of
# :mod:`okl.components.header`, H): the scaled row xs, the plan's buffer F.


@jit_inline
def expansion_event_decision(F, xs):
    """The expansion's decision on xs over the rows stored so far (B x d at ``O_SV``)."""
    d = xs.shape[0]
    m = int(F[H.M])
    osv, ow = int(F[H.O_SV]), int(F[H.O_W])
    return expansion_decision(int(F[H.KKIND]), F[H.KA], F[H.KB], F[H.KC], F[osv:osv + m * d].reshape((m, d)),
                              F[ow:ow + m], min(int(F[H.COUNTER]), m), xs)


def expansion_event_layout(plan):
    """(m, k, fixed parts) of the per-event plan: the budget, the coefficients (k = B), none fixed
    (the stored rows are the learner's, moved in)."""
    return plan.budget, plan.budget, {}
