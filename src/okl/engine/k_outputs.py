"""The K-output half of ``auto``'s engine (:mod:`okl.engine.core`): every member's K
one-vs-rest outputs and steps (labels are class indices; :class:`okl.runtime.multiclass.MultiClass`
describes the layout: a member's weights are K rows, its features computed once a round for the K
outputs), and the engine's orchestration compiled with them (:func:`predict_all_k`,
:func:`learn_all_k`). A stream with one output never compiles this module's code."""

from __future__ import annotations

from okl._compiled import class_steps, dot_rows, jit, ogd_step, row_norm, sub_scaled
from okl._jit import jit_inline
from okl.engine.columns import (BUDGET, CB, COUNTER, ETA, K, KIND, LOSS, LR, MAP, MARGIN_COUNTER, NOTHING, NSEEN,
                                O_G, O_U, O_W, O_Z, RHO, STEP, TRANSITION, UNMAP, UPDATE, M)
from okl.engine.core import (_learn_all, _member_features, _predict_all, _window_learn, expansion_kernel, merge_target,
                             nag_features, sparse_linear, store_row, window_outputs)
from okl.components.maps.linear import linear_step_sparse, linear_value_sparse
from okl.components.steps.nag import nag_step, nag_value
from okl.components.steps.update_rounds import update_round_due
from okl.components.steps.ons import CODE_PROJECTION_EPS, ons_shared_step
from okl.components.steps.adagrad import adagrad_step
from okl.components import ADAGRAD, EXPANSION, NAG, ONS, STORE, SUPPORT, WINDOW


@jit_inline
def _features_multi(F, I, R, j, x, xi, xv, own, q, pre, nk, out):
    """Member j's K outputs on row x into ``out`` (K outputs: its weights are K rows, ``O_W``
    K x k row-major; an expansion's coefficients K x B), the features computed once
    (:func:`_member_features`)."""
    mp = I[j, MAP]
    if mp == EXPANSION:
        B = I[j, BUDGET]
        alpha = F[I[j, O_W]:I[j, O_W] + nk * B].reshape((nk, B))
        xn = row_norm(int(R[j, KIND]), xv)
        for o in range(nk):
            out[o] = 0.0
        for i in range(min(I[j, M], B)):
            kv = expansion_kernel(F, I, R, j, i, x, xi, xv, xn)
            for o in range(nk):
                out[o] += alpha[o, i] * kv
        return
    if mp == WINDOW:
        window_outputs(F, I, R, j, x, xi, xv, nk, out)
        return
    k = I[j, K]
    if I[j, STEP] == NAG:
        idx, u = nag_features(F, I, j, x, xi, xv, q)
        W = F[I[j, O_W]:I[j, O_W] + nk * k].reshape((nk, k))
        A = F[I[j, O_G]:I[j, O_G] + nk * (2 * k + 1)].reshape((nk, 2 * k + 1))
        for o in range(nk):
            out[o] = nag_value(W[o], A[o], idx, u)
        return
    if sparse_linear(I, j, x, xi):
        W = F[I[j, O_W]:I[j, O_W] + nk * k].reshape((nk, k))
        for o in range(nk):
            out[o] = linear_value_sparse(W[o], xi, xv, I[j, UNMAP] != 0)
        return
    z = _member_features(F, I, R, j, x, xi, xv, own, q, pre)
    dot_rows(F[I[j, O_W]:I[j, O_W] + nk * k].reshape((nk, k)), z, out)


@jit_inline
def _learn_multi(F, I, R, j, x, xi, xv, y, f, q, nk, g):
    """:func:`learn_one_output` for K outputs (y the class index, f the K outputs, g work (K)): every output
    learns its one-vs-rest target; an expansion adds x when any output has a nonzero loss
    derivative (one support set for the K outputs), FORKS's counter counts such rounds."""
    st = I[j, STEP]
    lkind = I[j, LOSS]
    if st == STORE:
        _window_learn(F, I, R, j, x, y)
        return NOTHING
    if st == ONS:
        any_ = class_steps(lkind, f, y, -R[j, ETA], g)
        due, counter = update_round_due(1.0 if any_ else 0.0, I[j, COUNTER], I[j, NSEEN], I[j, RHO],
                                        I[j, MARGIN_COUNTER] != 0)
        I[j, COUNTER] = counter
        if due:
            return UPDATE
        if any_:
            k = I[j, K]
            ons_shared_step(F[I[j, O_Z] + q * k:I[j, O_Z] + (q + 1) * k],
                            F[I[j, O_W]:I[j, O_W] + nk * k].reshape((nk, k)),
                            F[I[j, O_G]:I[j, O_G] + k * k].reshape((k, k)), g, CODE_PROJECTION_EPS, R[j, CB],
                            F[I[j, O_U]:I[j, O_U] + k])
        I[j, NSEEN] += 1
        return NOTHING
    any_ = class_steps(lkind, f, y, 1.0, g)
    if st == SUPPORT:
        if any_:
            B = I[j, BUDGET]
            near = merge_target(F, I, R, j, x, xi, xv)
            if near >= 0:  # (QKLMS: into the most similar stored row, every output)
                for o in range(nk):
                    F[I[j, O_W] + o * B + near] += -R[j, ETA] * g[o]
            else:
                slot = store_row(F, I, R, j, x)
                if slot < 0:
                    return TRANSITION
                for o in range(nk):
                    F[I[j, O_W] + o * B + slot] = -R[j, ETA] * g[o]
        I[j, NSEEN] += 1
        return NOTHING
    k = I[j, K]
    W = F[I[j, O_W]:I[j, O_W] + nk * k].reshape((nk, k))
    if st == NAG:  # (each output its own sums and scales; its features again from the row, O(nnz))
        idx, u = nag_features(F, I, j, x, xi, xv, q)
        A = F[I[j, O_G]:I[j, O_G] + nk * (2 * k + 1)].reshape((nk, 2 * k + 1))
        for o in range(nk):
            nag_step(W[o], A[o], idx, u, g[o], R[j, ETA], I[j, NSEEN] + 1)
        I[j, NSEEN] += 1
        return NOTHING
    if sparse_linear(I, j, x, xi):
        for o in range(nk):
            if g[o] != 0.0:
                linear_step_sparse(W[o], xi, xv, I[j, UNMAP] != 0, R[j, ETA] * g[o], lkind)
        I[j, NSEEN] += 1
        return NOTHING
    z = F[I[j, O_Z] + q * k:I[j, O_Z] + (q + 1) * k]
    if st == ADAGRAD:
        G = F[I[j, O_G]:I[j, O_G] + nk * k].reshape((nk, k))
        for o in range(nk):
            if g[o] != 0.0:
                adagrad_step(z, g[o], W[o], G[o], R[j, LR])
    else:  # OGD
        for o in range(nk):
            if g[o] != 0.0:
                sub_scaled(W[o], ogd_step(R[j, ETA] * g[o], z, lkind), z)
    I[j, NSEEN] += 1
    return NOTHING


@jit
def predict_all_k(F, I, R, x, xi, xv, alive, d, q, pre):
    """:func:`_predict_all` with K outputs per member."""
    _predict_all(F, I, R, x, xi, xv, alive, d, q, pre, _features_multi)


@jit
def learn_all_k(F, I, R, x, xi, xv, y, d, alive, todo, q, g):
    """:func:`_learn_all` with K outputs per member."""
    return _learn_all(F, I, R, x, xi, xv, y, d, alive, todo, q, g, _learn_multi)
