"""The support step (component ``"support"`` of :mod:`okl.components`): on a nonzero loss
derivative g the row joins the expansion with alpha = -eta g (the kernel perceptron, NORMA without
decay, KLMS), or merges into its most similar stored row (QKLMS's quantisation, ``merge_above``, or
a full expansion under ``"merge nearest"``); a full expansion follows the budget rule. O(m d).

Its member functions in auto's engine (the layout of :mod:`okl.components.columns`; the map's rows
B x d at ``O_A``): :func:`support_learn_one`, :func:`support_learn_k`."""

from __future__ import annotations

from okl._compiled import class_steps, jit, loss_derivative, merge_into, row_norm
from okl._jit import jit_inline
import okl.components.header as H
from okl.components.columns import (BUDGET, ETA, KA, KB_, KC, KIND, LOSS, M, MERGE, NOTHING, NSEEN, O_A, O_NRM, O_W,
                                    RULE, TRANSITION, row_is_sparse)
from okl.components.maps.expansion import expansion_kernel

#: budget rules of the support step (``I[j, RULE]``; :data:`okl.components.BUDGET_RULES` names them)
STOP, REPLACE_OLDEST, MERGE_NEAREST = range(3)


@jit_inline
def support_learn_one(F, I, R, j, x, xi, xv, y, out, q):
    """Member j's support step on row x with label / target y and decision out[0]: NOTHING, or
    TRANSITION (full under STOP: nothing learned, the learner's Python takes the round)."""
    g = loss_derivative(I[j, LOSS], out[0], y)
    if g != 0.0:
        near = merge_target(F, I, R, j, x, xi, xv)
        if near >= 0:  # (QKLMS: into the most similar stored row)
            F[I[j, O_W] + near] += -R[j, ETA] * g
        else:
            slot = store_row(F, I, R, j, x)
            if slot < 0:
                return TRANSITION
            F[I[j, O_W] + slot] = -R[j, ETA] * g
    I[j, NSEEN] += 1
    return NOTHING


@jit_inline
def support_learn_k(F, I, R, j, x, xi, xv, y, f, q, nk, g):
    """:func:`support_learn_one` for K = ``nk`` one-vs-rest outputs (y the class index, f the
    outputs, g work): x joins the expansion (one support set for the K outputs) when any output
    has a nonzero loss derivative."""
    any_ = class_steps(I[j, LOSS], f, y, 1.0, g)
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


@jit
def merge_target(F, I, R, j, x, xi, xv):
    """The stored row of member j's expansion that row x merges into: the most similar (first on
    ties) when its kernel value reaches R[j, MERGE] (``merge_above``), or whatever its value when
    the expansion is full under MERGE_NEAREST; else -1 (no threshold, an empty expansion, none
    similar enough). A sparse row's kernel values from the stored rows' norms
    (:func:`expansion_kernel`)."""
    B, d = I[j, BUDGET], x.shape[0]
    if not row_is_sparse(xi):
        return merge_into(int(R[j, KIND]), R[j, KA], R[j, KB_], R[j, KC],
                          F[I[j, O_A]:I[j, O_A] + B * d].reshape((B, d)), I[j, M], x, R[j, MERGE],
                          I[j, RULE] == MERGE_NEAREST)
    full = I[j, RULE] == MERGE_NEAREST and I[j, M] >= B
    if R[j, MERGE] > 1.0 and not full:
        return -1
    threshold = -1.0 if full else R[j, MERGE]
    xn = row_norm(int(R[j, KIND]), xv)
    best, at = -1.0, -1
    for i in range(min(I[j, M], B)):  # (okl._compiled.most_similar's rule)
        v = expansion_kernel(F, I, R, j, i, x, xi, xv, xn)
        if v > best:
            best, at = v, i
    return at if at >= 0 and best >= threshold else -1


@jit
def store_row(F, I, R, j, x):
    """Member j's support step stores row x in its slot (:func:`support_slot`) with its norm
    (:func:`okl._compiled.row_norm`, for sparse rows' kernel values) and counts it; returns the
    slot, or -1 (nothing stored) when full under STOP."""
    slot = support_slot(I, j)
    if slot >= 0:
        d = x.shape[0]
        o = I[j, O_A] + slot * d
        for i in range(d):
            F[o + i] = x[i]
        F[I[j, O_NRM] + slot] = row_norm(int(R[j, KIND]), x)
        I[j, M] += 1
    return slot


@jit
def support_slot(I, j):
    """Where member j's support step stores a row joining its expansion: the next free slot, the
    oldest row's when full under the REPLACE_OLDEST rule (the count of rows added, I[j, M], wraps
    over the budget), or -1 when full under STOP (the learner's transition)."""
    m, B = I[j, M], I[j, BUDGET]
    if m < B:
        return m
    if I[j, RULE] == STOP:
        return -1
    return m % B


# The single learners' per-event plan (:mod:`okl.engine.fastpath`; the header slots of
# :mod:`okl.components.header`, H).


@jit_inline
def support_event_step(F, xs, g):
    """The support step on the scaled row xs with loss derivative g (the rows B x d at ``O_SV``,
    the coefficients at ``O_W``, the rows added in ``COUNTER``): 0, or TRANSITION_DUE (full under
    STOP: nothing learned; the learner's Python takes the round)."""
    if g != 0.0:
        d = xs.shape[0]
        counter = int(F[H.COUNTER])
        B = int(F[H.M])
        ow = int(F[H.O_W])
        w = F[ow:ow + int(F[H.K])]
        osv = int(F[H.O_SV])  # (QKLMS's quantisation, or the merge-nearest rule when full)
        near = merge_into(int(F[H.KKIND]), F[H.KA], F[H.KB], F[H.KC], F[osv:osv + B * d].reshape((B, d)), counter,
                          xs, F[H.MERGE], F[H.RULE] == MERGE_NEAREST)
        if near >= 0:
            w[near] += -F[H.ETA] * g
        else:
            slot = counter
            if counter >= B:
                if F[H.RULE] == STOP:
                    return H.TRANSITION_DUE
                slot = counter % B  # replace the oldest row
            osv = int(F[H.O_SV]) + slot * d
            for j in range(d):
                F[osv + j] = xs[j]
            w[slot] = -F[H.ETA] * g
            F[H.COUNTER] = counter + 1
    return 0
