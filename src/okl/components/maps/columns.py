"""The column expansion map: f(x) = sum_{j<m} alpha_j kappa(s_j, x) over stored rows kept as the
*columns* of ``ST`` (d x B; component ``"column expansion"`` of :mod:`okl.components`), the
layout of the budgeted expansions (RBP to BSGD, KNLMS, KAP: :mod:`okl.learners._expansion`).

Why columns: the kernel row of a Gaussian kernel then accumulates squared distances over
contiguous memory, which the compiler vectorises (about 3x faster than a row-by-row
``kernel_row`` at d = 8, B = 200), and the exponentials by ``okl._vecmath.exp_neg_scaled``, also
vectorised; the values are bit-for-bit those of ``okl._compiled.kernel_value`` (same sums, same
exp arithmetic as ``okl._vecmath.exp_scalar``). Other kernels call ``kernel_value`` per column.
Per round O(m d).
"""

from __future__ import annotations

from okl._compiled import jit, kernel_value, row_ok
from okl._jit import jit_inline
from okl._vecmath import exp_neg_scaled
from okl.components.columns import BUDGET, KA, KB_, KC, KIND, M, O_A, O_KB, O_W
from okl.kernels import RBF_KIND


@jit
def column_kernel_row(kind, a, b, c, ST, m, x, out):
    """out[j] = kappa(ST[:, j], x) for the first m columns of ST."""
    if kind == RBF_KIND:
        for j in range(m):
            out[j] = 0.0
        for p in range(ST.shape[0]):
            xp = x[p]
            for j in range(m):
                t = ST[p, j] - xp
                out[j] += t * t
        exp_neg_scaled(out, a, m)
    else:
        for j in range(m):
            out[j] = kernel_value(kind, a, b, c, ST[:, j], x)


@jit
def row_decision(alpha, k, m):
    """sum_{j < m} alpha_j k_j in order from 0.0: an expansion's value from its kernel row (the
    sum of :func:`expansion_value` and of ``okl.learners.kogd.expansion_decision``, bit for bit)."""
    f = 0.0
    for j in range(m):
        f += alpha[j] * k[j]
    return f


@jit
def expansion_value(kind, a, b, c, ST, alpha, m, x, kt):
    """f(x) = sum_{j < m} alpha_j kappa(ST[:, j], x) (kt: work buffer of length >= m; it keeps
    the kernel row)."""
    column_kernel_row(kind, a, b, c, ST, m, x, kt)
    return row_decision(alpha, kt, m)


@jit
def expansion_event_value(kind, a, b, c, ST, alpha, m, x, bound, kt):
    """predict_one's compiled call: (ok, f(x)) with the kernel row in kt, after checking x
    (:func:`okl._compiled.row_ok`); nothing is computed when x fails the check."""
    if not row_ok(x, bound):
        return False, 0.0
    return True, expansion_value(kind, a, b, c, ST, alpha, m, x, kt)


@jit
def expansion_value_from(kind, a, b, c, ST, alpha, m, x, kt, have_row):
    """f(x) from the kernel row already in kt (``have_row``: predict_one's, the same sum) or
    computed into kt."""
    if have_row:
        return row_decision(alpha, kt, m)
    return expansion_value(kind, a, b, c, ST, alpha, m, x, kt)


@jit_inline
def columns_outputs_one(F, I, R, j, x, xi, xv, q, out):
    """Member j's value on row x into out[0] in auto's engine (the layout of
    :mod:`okl.components.columns`: the columns d x B at ``O_A``, alpha at ``O_W``, the kernel row
    kept at ``O_KB``; a sparse row is taken on its dense copy x)."""
    B, d = I[j, BUDGET], x.shape[0]
    out[0] = expansion_value(int(R[j, KIND]), R[j, KA], R[j, KB_], R[j, KC],
                             F[I[j, O_A]:I[j, O_A] + d * B].reshape((d, B)), F[I[j, O_W]:I[j, O_W] + B], I[j, M],
                             x, F[I[j, O_KB]:I[j, O_KB] + B])


def columns_layout(plan, m, I, R):
    """The column expansion's parts (:func:`okl.components.maps.expansion.expansion_layout`'s form):
    its columns and coefficients (the member's, shared) and the kernel row's work space."""
    I[M], I[BUDGET] = getattr(m, plan.counts), plan.budget
    return [(O_A, getattr(m, plan.SV), plan.SV), (O_W, getattr(m, plan.w), plan.w), (O_KB, plan.budget, None)], 0
