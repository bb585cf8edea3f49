"""The Online Newton Step on sketched features as the FORKS code runs it (component ``"ons"`` of
:mod:`okl.components`; ALGORITHMS.md, FORKS): one output, deferred, and K outputs sharing one
preconditioner. O(k^2) a round."""

from __future__ import annotations

import math


from okl._compiled import dot, jit
from okl.linalg.inverse import matvec, matvec_after_update, symmetric_rank_one_apply


#: the code's constant added to phi^T A^{-1} phi in the ONS projection (not at the transition)
CODE_PROJECTION_EPS = 1e-4


@jit
def h_bound(z, C):
    """h(z) = sign(z) max(|z| - C, 0) (PNK Alg. 1 line 13)."""
    if z > C:
        return z - C
    if z < -C:
        return z + C
    return 0.0


@jit
def _ons_code_weights(z, w, u, step, eps, C):
    """The weight part of :func:`ons_code_step` given u = A^{-1} z; u becomes a = step u and the
    return is (whether A^{-1} takes the update, its denominator 1 + step^2 z^T A^{-1} z)."""
    k = z.shape[0]
    zu = dot(z, u)
    for i in range(k):
        w[i] += step * u[i]
    hz = h_bound(dot(z, w), C)
    den = zu + eps
    if hz != 0.0 and den > 0.0:
        coef = hz / den
        for i in range(k):
            w[i] -= coef * u[i]
    s2 = step * step
    if s2 > 0.0:
        # Sherman-Morrison with a = A^{-1} g~ = step u, 1 + g~^T A^{-1} g~ = 1 + step^2 zu
        for i in range(k):
            u[i] *= step
        return True, 1.0 + s2 * zu
    return False, 0.0


@jit
def ons_code_step(z, w, Ainv, step, eps, C, u):
    """The code's ONS step with g~ = step z (step = -eta l'): v = w + A^{-1} g~;
    w = v - h(z^T v) / (z^T A^{-1} z + eps) A^{-1} z; A^{-1} <- (A + g~ g~^T)^{-1}."""
    matvec(Ainv, z, u)
    update, den = _ons_code_weights(z, w, u, step, eps, C)
    if update:
        symmetric_rank_one_apply(Ainv, u, den)


@jit
def pending_size(k):
    """Length of a deferred update's record at rank k: a (k), its denominator, a flag (1.0: pending)."""
    return k + 2


@jit
def ons_code_step_deferred(z, w, Ainv, step, eps, C, u, pending):
    """:func:`ons_code_step` with its update of A^{-1} deferred: recorded in ``pending`` (a, its
    denominator, a flag) and applied by the next step's product with A^{-1}
    (:func:`okl.linalg.inverse.matvec_after_update`), or by :func:`apply_pending` before anything
    else reads A^{-1}. The same arithmetic in the same order (A^{-1}, w and every decision bit for
    bit those of :func:`ons_code_step`), one pass over the k x k matrix a round instead of two
    (auto's engine runs its FORKS members so)."""
    k = z.shape[0]
    if pending[k + 1] != 0.0:
        matvec_after_update(Ainv, z, u, pending[:k], pending[k])
        pending[k + 1] = 0.0
    else:
        matvec(Ainv, z, u)
    update, den = _ons_code_weights(z, w, u, step, eps, C)
    if update:
        for i in range(k):
            pending[i] = u[i]
        pending[k] = den
        pending[k + 1] = 1.0


@jit
def apply_pending(Ainv, pending):
    """Apply a deferred update of A^{-1} (:func:`ons_code_step_deferred`), if one is pending."""
    k = Ainv.shape[0]
    if pending[k + 1] != 0.0:
        symmetric_rank_one_apply(Ainv, pending[:k], pending[k])
        pending[k + 1] = 0.0


@jit
def ons_shared_step(z, W, Ainv, steps, eps, C, u):
    """The code's ONS step (:func:`okl.components.steps.ons.ons_code_step`) for K outputs with one
    preconditioner: u = A^{-1} z once; every output o with step_o != 0 takes v_o = w_o + step_o u,
    w_o = v_o - h(z^T v_o) / (z^T u + eps) u; then A <- A + s^2 z z^T with s^2 the mean of step_o^2
    over those outputs (one Sherman-Morrison update: O(k^2 + K k) a round, not O(K k^2)). Under the
    hinge loss every active output has step^2 = eta^2, the update each would make alone."""
    k = z.shape[0]
    matvec(Ainv, z, u)
    zu = dot(z, u)
    den = zu + eps
    s2 = 0.0
    na = 0
    for o in range(W.shape[0]):
        st = steps[o]
        if st == 0.0:
            continue
        na += 1
        s2 += st * st
        w = W[o]
        for i in range(k):
            w[i] += st * u[i]
        hz = h_bound(dot(z, w), C)
        if hz != 0.0 and den > 0.0:
            coef = hz / den
            for i in range(k):
                w[i] -= coef * u[i]
    if na > 0 and s2 > 0.0:
        s2 /= na
        r = math.sqrt(s2)
        for i in range(k):
            u[i] *= r
        symmetric_rank_one_apply(Ainv, u, 1.0 + s2 * zu)
