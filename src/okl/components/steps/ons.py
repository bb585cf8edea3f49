"""The Online Newton Step on sketched features as the FORKS code runs it (component ``"ons"`` of
:mod:`okl.components`; ALGORITHMS.md, FORKS): one output, deferred, and K outputs sharing one
preconditioner. O(k^2) a round."""

from __future__ import annotations

import math


from okl._compiled import class_steps, dot, jit, loss_derivative
from okl._jit import jit_inline
import okl.components.header as H
from okl.components.columns import (CB, COUNTER, ETA, K, LOSS, MARGIN_COUNTER, NOTHING, NSEEN, O_G, O_U, O_W, RHO,
                                    UPDATE, feature_slot, member_rows)
from okl.components.steps.update_rounds import update_round_due
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


@jit_inline
def ons_learn_one(F, I, R, j, x, xi, xv, y, out, q):
    """Member j's ONS step in auto's engine (features in its slot q; A^{-1} at ``O_G``, its
    deferred update at ``O_U``, which :meth:`okl.engine.layout.Engine.sync` applies for Python):
    UPDATE when an update round is due (the learner's Python takes the round), else NOTHING."""
    g = loss_derivative(I[j, LOSS], out[0], y)
    due, counter = update_round_due(g, I[j, COUNTER], I[j, NSEEN], I[j, RHO], I[j, MARGIN_COUNTER] != 0)
    I[j, COUNTER] = counter
    if due:
        return UPDATE
    if g != 0.0:
        k = I[j, K]
        Ainv = F[I[j, O_G]:I[j, O_G] + k * k].reshape((k, k))
        o = I[j, O_U]
        ons_code_step_deferred(feature_slot(F, I, j, q), F[I[j, O_W]:I[j, O_W] + k], Ainv, -R[j, ETA] * g,
                               CODE_PROJECTION_EPS, R[j, CB], F[o:o + k], F[o + k:o + k + pending_size(k)])
    I[j, NSEEN] += 1
    return NOTHING


@jit_inline
def ons_learn_k(F, I, R, j, x, xi, xv, y, f, q, nk, g):
    """:func:`ons_learn_one` for K = ``nk`` one-vs-rest outputs sharing one preconditioner
    (:func:`ons_shared_step`); a round counts when any output has a nonzero loss derivative."""
    any_ = class_steps(I[j, LOSS], f, y, -R[j, ETA], g)
    due, counter = update_round_due(1.0 if any_ else 0.0, I[j, COUNTER], I[j, NSEEN], I[j, RHO],
                                    I[j, MARGIN_COUNTER] != 0)
    I[j, COUNTER] = counter
    if due:
        return UPDATE
    if any_:
        k = I[j, K]
        ons_shared_step(feature_slot(F, I, j, q), member_rows(F, I, j, O_W, nk, k),
                        F[I[j, O_G]:I[j, O_G] + k * k].reshape((k, k)), g, CODE_PROJECTION_EPS, R[j, CB],
                        F[I[j, O_U]:I[j, O_U] + k])
    I[j, NSEEN] += 1
    return NOTHING



def ons_layout(plan, m, I, R):
    """The step's A^{-1} (the member's, shared) at ``O_G``, its update-round counter, and at
    ``O_U`` its work space (k) then a deferred update (:func:`pending_size`)."""
    k = int(I[K])
    I[COUNTER], I[RHO], I[MARGIN_COUNTER] = getattr(m, plan.counts), plan.rho, plan.margin
    return [(O_G, getattr(m, plan.A), plan.A), (O_U, k + pending_size(k), None)]


def ons_sync(plan, m, I, F):
    """Write the member's update-round counter back and apply the deferred update of A^{-1} (a
    view of F) before Python reads the member (``I``: its row)."""
    if plan.counts is not None:
        setattr(m, plan.counts, int(I[COUNTER]))
    k, o = int(I[K]), int(I[O_U])
    apply_pending(getattr(m, plan.A), F[o + k:o + k + pending_size(k)])


@jit_inline
def ons_event_step(F, z, w, g, lkind):
    """The code's ONS step in the single learners' per-event plan (:mod:`okl.engine.fastpath`;
    A^{-1} at ``O_G``, the work space at ``O_U``), not deferred."""
    k = z.shape[0]
    og, ou = int(F[H.O_G]), int(F[H.O_U])
    ons_code_step(z, w, F[og:og + k * k].reshape((k, k)), -F[H.ETA] * g, CODE_PROJECTION_EPS, F[H.CB], F[ou:ou + k])


def ons_event_state(k):
    """The shape of the step's state in the per-event plan (A^{-1})."""
    return (k, k)
