"""Numba building blocks shared by the compiled per-round loops.

Kernels and losses enter compiled code as numeric specs (``Kernel.spec()``, ``Loss.kind``), so
one compiled loop serves every kernel and loss without Python objects in the loop.

Gaussian and Laplacian kernel values take exp from :mod:`okl._vecmath` (``exp_scalar`` for one
value, ``exp_neg_scaled`` over a row), not ``math.exp``: the row loops then vectorise, and every
compiled path (a single :func:`kernel_value`, the rows of :func:`kernel_row`,
:func:`kernel_row_t` and ``okl.learners._expansion.column_kernel_row``) computes bit for bit the
same kernel values. NumPy's kernels (``okl.kernels``: their own sums, np.exp) agree with them
to rounding level, not bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from okl._jit import jit  # noqa: F401  (okl._compiled.jit: the decorator every compiled loop uses)
from okl._vecmath import exp_neg_scaled, exp_scalar
from okl.kernels import LAPLACIAN_KIND, LINEAR_KIND, POLYNOMIAL_KIND, RBF_KIND
from okl.losses import HINGE, LOGISTIC, SQUARED, SQUARED_HINGE


@jit
def kernel_value(kind, a, b, c, x, z):
    """kappa(x, z) for the kernel spec (kind, a, b, c) of okl.kernels (Gaussian and Laplacian:
    exp by :func:`okl._vecmath.exp_scalar`, the arithmetic of the vectorised rows)."""
    n = x.shape[0]
    if kind == RBF_KIND:
        s = 0.0
        for i in range(n):
            d = x[i] - z[i]
            s += d * d
        return exp_scalar(-a * s)
    if kind == LAPLACIAN_KIND:
        s = 0.0
        for i in range(n):
            s += abs(x[i] - z[i])
        return exp_scalar(-a * s)
    s = 0.0
    for i in range(n):
        s += x[i] * z[i]
    if kind == POLYNOMIAL_KIND:
        return (a * s + b) ** c
    return s


@jit
def row_norm(kind, x):
    """The norm of a row that a kernel's sparse evaluation needs (:func:`kernel_value_sparse`):
    sum x_i^2 (``RBF_KIND``), sum |x_i| (``LAPLACIAN_KIND``), else 0; summed in order from 0.0, so
    a sparse row's norm over its non-zeros is bit for bit its dense row's."""
    s = 0.0
    if kind == RBF_KIND:
        for i in range(x.shape[0]):
            s += x[i] * x[i]
    elif kind == LAPLACIAN_KIND:
        for i in range(x.shape[0]):
            s += abs(x[i])
    return s


@jit
def kernel_value_sparse(kind, a, b, c, z, zn, xi, xv, xn):
    """kappa(z, x) for a dense stored row z with its norm zn (:func:`row_norm`) and a sparse row x
    (column indices xi, values xv, norm xn), in O(nnz): the Gaussian's ||z - x||^2 = zn + xn -
    2 <z, x>, the Laplacian's ||z - x||_1 = zn + sum_{i in nnz} (|x_i - z_i| - |z_i|), each clipped
    at 0 (rounding), then exp as :func:`kernel_value`; linear and polynomial kernels from <z, x>.
    Equal to :func:`kernel_value` on the dense row up to rounding in the distance (relative 1e-16
    of the norms)."""
    t = 0.0
    if kind == LAPLACIAN_KIND:
        for p in range(xi.shape[0]):
            zj = z[xi[p]]
            t += abs(xv[p] - zj) - abs(zj)
        return exp_scalar(-a * max(zn + t, 0.0))
    for p in range(xi.shape[0]):
        t += xv[p] * z[xi[p]]
    if kind == RBF_KIND:
        return exp_scalar(-a * max(zn + xn - 2.0 * t, 0.0))
    if kind == POLYNOMIAL_KIND:
        return (a * t + b) ** c
    return t


@jit
def most_similar(kind, a, b, c, S, m, x, threshold):
    """The first of the rows S[:m] with the largest kappa(S[i], x), when that value is at least
    ``threshold``; else -1. For a distance kernel (Gaussian, Laplacian) the most similar row is
    the nearest, and kappa >= threshold a bound on the distance (QKLMS's quantisation)."""
    best, at = -1.0, -1
    for i in range(m):
        v = kernel_value(kind, a, b, c, S[i], x)
        if v > best:
            best, at = v, i
    return at if at >= 0 and best >= threshold else -1


@jit
def merge_into(kind, a, b, c, S, m, x, merge_above, merge_when_full):
    """The support step's merge (:mod:`okl.components`): the stored row of S (m rows
    added, at most S's B stored) that row x merges into, or -1 (then x is stored). Full under
    the merge-nearest rule (``merge_when_full``): the most similar row; else, with
    ``merge_above`` <= 1, the most similar when its kernel value reaches it."""
    B = S.shape[0]
    full = merge_when_full and m >= B
    if merge_above > 1.0 and not full:
        return -1
    return most_similar(kind, a, b, c, S, min(m, B), x, -1.0 if full else merge_above)


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
def class_steps(lkind, f, y, scale, g):
    """g_o = scale l'(f_o, y_o) for the one-vs-rest targets y_o = +1 (o = y), -1 else; returns
    whether any is nonzero."""
    any_ = False
    for o in range(f.shape[0]):
        g[o] = scale * loss_derivative(lkind, f[o], 1.0 if o == y else -1.0)
        if g[o] != 0.0:
            any_ = True
    return any_


@jit
def copy_into(dst, src):
    """dst[i] = src[i] (a row or column of a support set from a row). A loop rather than the
    slice assignment ``dst[:] = src``: Numba compiles that with a formatted shape-mismatch error
    whose string code took 3-5 s of a cold first run() (benchmarks/startup.py)."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


@jit
def times_and_quadratic(A, v, m, out):
    """out[:m] = A[:m, :m] v[:m] (each sum over j in order from 0.0); returns v' A v, the sum of
    v_i out_i in order (a projection's coefficients and its squared norm: Projectron, KRLS-T)."""
    total = 0.0
    for i in range(m):
        s = 0.0
        for j in range(m):
            s += A[i, j] * v[j]
        out[i] = s
        total += v[i] * s
    return total


@jit
def dot(u, v):
    """sum_i u_i v_i in one fixed order on every CPU: eight partial sums over i = 8m + r (r = 0..7),
    each in order from 0.0, added as ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)), then the
    last n mod 8 terms in order. One running sum is a chain of dependent additions; eight advance
    together (one SIMD register) with nothing left to the compiler to reassociate (IEEE
    arithmetic, no fastmath), so the bits are the same on any x86-64 CPU and BLAS. Measured at n =
    2,000 (an L1 FOGD member of auto), a call from Python: 1.38 -> 0.84 us."""
    n = u.shape[0]
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    i = 0
    while i + 8 <= n:
        s0 += u[i] * v[i]
        s1 += u[i + 1] * v[i + 1]
        s2 += u[i + 2] * v[i + 2]
        s3 += u[i + 3] * v[i + 3]
        s4 += u[i + 4] * v[i + 4]
        s5 += u[i + 5] * v[i + 5]
        s6 += u[i + 6] * v[i + 6]
        s7 += u[i + 7] * v[i + 7]
        i += 8
    s = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
    while i < n:
        s += u[i] * v[i]
        i += 1
    return s


@jit
def sum_as_dot(idx, terms, last, n):
    """The sum :func:`dot` forms over n products whose non-zero ones are ``terms`` at the ascending
    indices ``idx`` (< n - 1) and ``last`` at n - 1 (a sparse row's features [x, 1]): the same
    eight partial sums over i = 8m + r, combined the same way, then the last n mod 8 in order, so
    the result is dot's bit for bit (a zero product adds +-0.0 there). O(nnz)."""
    main = n - n % 8
    part = np.zeros(8)
    p = 0
    while p < idx.shape[0] and idx[p] < main:
        part[idx[p] & 7] += terms[p]
        p += 1
    if n - 1 < main:
        part[(n - 1) & 7] += last
    s = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]))
    while p < idx.shape[0]:
        s += terms[p]
        p += 1
    if n - 1 >= main:
        s += last
    return s


@jit
def dot_rows(W, z, out):
    """out[o] = dot(W[o], z) for every row of W (the K outputs of a multi-class model on one
    feature vector), bit for bit :func:`dot` on each row: two rows a pass over z, each with
    :func:`dot`'s eight partial sums and order (sixteen sums advance together)."""
    n, k = W.shape
    o = 0
    while o + 2 <= n:
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
        b0 = b1 = b2 = b3 = b4 = b5 = b6 = b7 = 0.0
        i = 0
        while i + 8 <= k:
            a0 += W[o, i] * z[i]
            a1 += W[o, i + 1] * z[i + 1]
            a2 += W[o, i + 2] * z[i + 2]
            a3 += W[o, i + 3] * z[i + 3]
            a4 += W[o, i + 4] * z[i + 4]
            a5 += W[o, i + 5] * z[i + 5]
            a6 += W[o, i + 6] * z[i + 6]
            a7 += W[o, i + 7] * z[i + 7]
            b0 += W[o + 1, i] * z[i]
            b1 += W[o + 1, i + 1] * z[i + 1]
            b2 += W[o + 1, i + 2] * z[i + 2]
            b3 += W[o + 1, i + 3] * z[i + 3]
            b4 += W[o + 1, i + 4] * z[i + 4]
            b5 += W[o + 1, i + 5] * z[i + 5]
            b6 += W[o + 1, i + 6] * z[i + 6]
            b7 += W[o + 1, i + 7] * z[i + 7]
            i += 8
        sa = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
        sb = ((b0 + b1) + (b2 + b3)) + ((b4 + b5) + (b6 + b7))
        while i < k:
            sa += W[o, i] * z[i]
            sb += W[o + 1, i] * z[i]
            i += 1
        out[o] = sa
        out[o + 1] = sb
        o += 2
    if o < n:
        out[o] = dot(W[o], z)


@jit
def linear_round(w, z, y, lkind, out, i):
    """The start of a linear test-then-train round: f = w.z, recorded as ``out[i]``; returns
    l'(f, y)."""
    f = dot(w, z)
    out[i] = f
    return loss_derivative(lkind, f, y)


@jit
def ogd_step(step, z, lkind):
    """The OGD step ``step`` = eta l'(f, y) for the row z, divided by max(1, ||z||^2) under the
    squared loss. Its gradient 2 (f - y) z grows with the residual, and LMS is stable only while
    eta ||z||^2 < 1: kernel maps (||z||^2 <= kappa(x, x) = 1) are left as they are, while raw
    features (the linear learner, whose z = [x, 1] makes this NLMS) and sketched maps after an
    update (SkeGD) are not bounded. Other losses have bounded gradients: unchanged."""
    if lkind == SQUARED:
        return step / max(1.0, dot(z, z))
    return step


@jit
def sub_scaled(w, step, z):
    """w -= step z (the OGD step)."""
    for j in range(w.shape[0]):
        w[j] -= step * z[j]


@jit
def row_ok(x, bound):
    """Every entry of x finite and at most ``bound`` in magnitude (NaN fails the comparison)."""
    for i in range(x.shape[0]):
        if not abs(x[i]) <= bound:
            return False
    return True


@jit
def distances_t(kind, LT, m, x, out):
    """out[j] = ||L[j] - x||^2 (``RBF_KIND``) or ||L[j] - x||_1 (any other kind: Laplacian) for j < m,
    from the transposed rows LT = L^T (dim x m, C-contiguous): each sum over the coordinates in
    order from 0.0, the m sums advanced together (vectorisable)."""
    d = x.shape[0]
    for j in range(m):
        out[j] = 0.0
    if kind == RBF_KIND:
        for i in range(d):
            xi = x[i]
            row = LT[i]
            for j in range(m):
                t = row[j] - xi
                out[j] += t * t
        return
    for i in range(d):
        xi = x[i]
        row = LT[i]
        for j in range(m):
            out[j] += abs(row[j] - xi)


@jit
def distances_t_sparse(kind, LT, m, norms, xi, xv, xn, out):
    """:func:`distances_t` for a sparse row x (indices xi, values xv, norm xn: :func:`row_norm`)
    from the stored rows' norms (``norms[j]`` = row_norm of L[j]): out[j] = norms[j] + xn - 2 <L[j],
    x> (Gaussian) or norms[j] + sum_{i in nnz} (|x_i - L[j, i]| - |L[j, i]|) (L1), clipped at 0;
    the m sums advanced together over the nnz rows of LT that x touches. O(nnz m)."""
    if kind == RBF_KIND:
        sparse_axpy(LT, xi, xv, out[:m])  # (<L[j], x>)
        for j in range(m):
            out[j] = max(norms[j] + xn - 2.0 * out[j], 0.0)
        return
    for j in range(m):
        out[j] = 0.0
    for p in range(xi.shape[0]):
        v = xv[p]
        row = LT[xi[p]]
        for j in range(m):
            out[j] += abs(row[j] - v) - abs(row[j])
    for j in range(m):
        out[j] = max(norms[j] + out[j], 0.0)


@jit
def kernel_row_t_sparse(kind, a, b, c, LT, m, norms, xi, xv, xn, out):
    """:func:`kernel_row_t` for a sparse row (see :func:`distances_t_sparse`): O(nnz m)."""
    if kind == RBF_KIND or kind == LAPLACIAN_KIND:
        distances_t_sparse(kind, LT, m, norms, xi, xv, xn, out)
        exp_neg_scaled(out, a, m)
        return
    sparse_axpy(LT, xi, xv, out[:m])
    if kind == POLYNOMIAL_KIND:
        for j in range(m):
            out[j] = (a * out[j] + b) ** c


@jit
def column_norms_t(kind, LT, m, out):
    """out[j] = :func:`row_norm` of column j < m of LT (the stored row L[j]; each sum over the
    coordinates in order from 0.0, as row_norm sums a row)."""
    for j in range(m):
        out[j] = 0.0
    if kind == RBF_KIND:
        for i in range(LT.shape[0]):
            row = LT[i]
            for j in range(m):
                out[j] += row[j] * row[j]
    elif kind == LAPLACIAN_KIND:
        for i in range(LT.shape[0]):
            row = LT[i]
            for j in range(m):
                out[j] += abs(row[j])


@jit
def sparse_axpy(M, xi, xv, out):
    """out <- M^T x for a sparse x (indices xi ascending, values xv): out += x_j M[j, :] over the
    non-zeros in order, from 0.0: bit for bit :func:`rows_axpy` on the dense x (whose zero entries
    add +-0.0 there). O(nnz len(out))."""
    for i in range(out.shape[0]):
        out[i] = 0.0
    for p in range(xi.shape[0]):
        row = M[xi[p]]
        v = xv[p]
        for i in range(out.shape[0]):
            out[i] += row[i] * v


@jit
def kernel_row_t(kind, a, b, c, LT, m, x, out):
    """out[j] = kappa(L[j], x) for j < m from the transposed rows LT = L^T (dim x m, C-contiguous):
    the same arithmetic as :func:`kernel_row` (each sum runs over the coordinates in order, from
    0.0, and exp by :func:`okl._vecmath.exp_neg_scaled`, the arithmetic of ``exp_scalar``), with
    the m sums advanced together (vectorisable; the distances by :func:`distances_t`)."""
    if kind == RBF_KIND or kind == LAPLACIAN_KIND:
        distances_t(kind, LT, m, x, out)
        exp_neg_scaled(out, a, m)
        return
    d = x.shape[0]
    for j in range(m):
        out[j] = 0.0
    for i in range(d):
        xi = x[i]
        row = LT[i]
        for j in range(m):
            out[j] += row[j] * xi
    if kind == POLYNOMIAL_KIND:
        for j in range(m):
            out[j] = (a * out[j] + b) ** c


@jit
def rows_axpy(M, v, out):
    """out <- M^T v for M of shape (len(v), len(out)), accumulated a row of M at a time
    (out += v_j M[j, :], j = 0, 1, ...): each entry is summed over j in order from 0.0, and the
    inner loop is a vectorised axpy instead of a chain of dependent additions. Four rows go
    through one pass over ``out`` (((out + a) + b) + c) + d: the same additions in the same order,
    bit for bit the one-row loop, with a quarter of the loads and stores of ``out`` (1.7 -> 0.9 us
    at 100 x 100)."""
    n = out.shape[0]
    for i in range(n):
        out[i] = 0.0
    m = v.shape[0]
    j = 0
    while j + 4 <= m:
        r0, r1, r2, r3 = M[j], M[j + 1], M[j + 2], M[j + 3]
        v0, v1, v2, v3 = v[j], v[j + 1], v[j + 2], v[j + 3]
        for i in range(n):
            out[i] = (((out[i] + r0[i] * v0) + r1[i] * v1) + r2[i] * v2) + r3[i] * v3
        j += 4
    while j < m:
        row = M[j]
        vj = v[j]
        for i in range(n):
            out[i] += row[i] * vj
        j += 1


@jit
def kernel_features(kind, a, b, c, LT, m, P, w, x, bound, kb, z):
    """The per-event feature map z = kappa_L(x)^T P over the first m landmarks (given transposed,
    LT = L^T, dim x m; P: m x k, C-contiguous), after checking x (:func:`row_ok`). Returns
    (ok, w^T z); nothing is computed when x fails the check. Each z_i is summed over the landmarks
    in order (one pass over P, a row at a time: vectorisable, no reduction chain)."""
    if not row_ok(x, bound):
        return False, 0.0
    kernel_row_t(kind, a, b, c, LT, m, x, kb)
    rows_axpy(P[:m], kb[:m], z)
    return True, dot(w, z)


@jit
def kernel_features_rows(kind, a, b, c, LT, m, P, X, bound, KB, Z):
    """:func:`kernel_features` for each row of X into the rows of Z, four rows at a time (``KB``:
    4 x m work space): the same arithmetic for every row, so a row's features do not depend on
    the block it came in. Stops before the first row that fails :func:`row_ok`; returns the
    number of rows done."""
    n = X.shape[0]
    for r in range(n):
        if not row_ok(X[r], bound):
            n = r
            break
    k = Z.shape[1]
    r0 = 0
    while r0 < n:
        nb = min(4, n - r0)
        for q in range(nb):
            kernel_row_t(kind, a, b, c, LT, m, X[r0 + q], KB[q])
            for i in range(k):
                Z[r0 + q, i] = 0.0
        if nb == 4:
            z0, z1, z2, z3 = Z[r0], Z[r0 + 1], Z[r0 + 2], Z[r0 + 3]
            for j in range(m):
                p = P[j]
                k0, k1, k2, k3 = KB[0, j], KB[1, j], KB[2, j], KB[3, j]
                for i in range(k):
                    pi = p[i]
                    z0[i] += k0 * pi
                    z1[i] += k1 * pi
                    z2[i] += k2 * pi
                    z3[i] += k3 * pi
        else:
            for q in range(nb):
                z = Z[r0 + q]
                for j in range(m):
                    kj = KB[q, j]
                    for i in range(k):
                        z[i] += kj * P[j, i]
        r0 += nb
    return n


def warm_up() -> None:
    """Compile the shared helpers once (cached on disk by Numba)."""
    x = np.zeros(2)
    kernel_value(RBF_KIND, 1.0, 0.0, 0.0, x, x)
    loss_derivative(SQUARED, 0.0, 0.0)


__all__ = ["jit", "kernel_value", "kernel_row", "row_ok", "kernel_row_t", "kernel_features", "kernel_features_rows", "loss_value", "loss_derivative", "dot", "LINEAR_KIND"]
