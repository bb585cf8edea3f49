"""Online gradient descent on a map's features: w <- w - eta g z (component ``"ogd"`` of
:mod:`okl.components`), ``okl._compiled.ogd_step``'s step size for the loss. O(k) a round.

Its member functions in auto's engine (the layout of :mod:`okl.components.columns`; features in
the member's slot q): :func:`ogd_learn_one`, :func:`ogd_learn_k`."""

from __future__ import annotations

from okl._compiled import class_steps, loss_derivative, ogd_step, sub_scaled
from okl._jit import jit_inline
import okl.components.header as H
from okl.components.columns import ETA, K, LOSS, NOTHING, NSEEN, O_W, feature_slot, member_rows


@jit_inline
def ogd_learn_one(F, I, R, j, x, xi, xv, y, out, q):
    """Member j's OGD step on its features of row x (decision out[0], label / target y)."""
    lkind = I[j, LOSS]
    g = loss_derivative(lkind, out[0], y)
    if g != 0.0:
        z = feature_slot(F, I, j, q)
        sub_scaled(F[I[j, O_W]:I[j, O_W] + I[j, K]], ogd_step(R[j, ETA] * g, z, lkind), z)
    I[j, NSEEN] += 1
    return NOTHING


@jit_inline
def ogd_learn_k(F, I, R, j, x, xi, xv, y, f, q, nk, g):
    """:func:`ogd_learn_one` for K = ``nk`` one-vs-rest outputs (weights K x k; y the class index)."""
    lkind = I[j, LOSS]
    class_steps(lkind, f, y, 1.0, g)
    W = member_rows(F, I, j, O_W, nk, I[j, K])
    z = feature_slot(F, I, j, q)
    for o in range(nk):
        if g[o] != 0.0:
            sub_scaled(W[o], ogd_step(R[j, ETA] * g[o], z, lkind), z)
    I[j, NSEEN] += 1
    return NOTHING


@jit_inline
def ogd_event_step(F, z, w, g, lkind):
    """The step in the single learners' per-event plan (:mod:`okl.engine.fastpath`)."""
    sub_scaled(w, ogd_step(F[H.ETA] * g, z, lkind), z)
