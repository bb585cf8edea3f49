"""The uniform-removal steps (components ``"random budget perceptron"`` and ``"bogd"`` of
:mod:`okl.components`): RBP (Cavallanti, Cesa-Bianchi & Gentile 2007; LSOKL ``RBP.m``) and BOGD
(Zhao, Wang, Wu, Jin & Hoi, ICML 2012; LSOKL ``BOGD.m``), whose full-budget updates remove a
support vector drawn uniformly from a buffer of pre-drawn indices (:mod:`okl.learners._expansion`,
"Randomness"). The rules are in :mod:`okl.learners.rbp` and :mod:`okl.learners.bogd`; the
decision is the column expansion map's (:mod:`okl.components.maps.columns`).

A member round runs the learner's own compiled loop on its one row (the same arithmetic by
construction). When the buffer is used up the round learns nothing and returns
:data:`ROUND_IN_PYTHON`: the learner's Python draws the next block from its generator and learns the
row (``_update_round``), so every path draws the same numbers in the same order.

Declared state (:mod:`okl.components.spec`): the constants (RBP: B and the buffer's length;
BOGD: B, the buffer's length, eta, lambda, gamma and the inclusive margin), the buffer (ints) and
its read position; work: the kernel row and two slots (the row's label, its decision).
"""

from __future__ import annotations

from okl._compiled import copy_into, jit, loss_derivative
from okl.components.maps.columns import expansion_value
from okl.components.spec import BUDGET_SIZE as M, ROUND_IN_PYTHON, Field
from okl.losses import HINGE

#: what a loop returns: every row learned, or the row that needs a removal index the buffer lacks
DONE, NEED_RANDOM = 0, 1

#: RBP's and BOGD's declared blocks (their member rounds read them in this order)
RBP_CONSTANTS = ("budget", "rb")
BOGD_CONSTANTS = ("budget", "rb", "eta", "decay", "gamma", "inclusive")
STATE = (Field("buffer", ("rb",), "int"), Field("next", (), "int"))
WORK = (Field("kt", (M,)), Field("slots", (2,)))


@jit
def rbp_rounds(kind, a, b, c, X, Y, out, i0, ST, alpha, m, budget, rand_idx, rnext, kt):
    """Random budget perceptron rounds on rows i0.. (see :class:`okl.learners.rbp.RBP`).

    Returns (status, row, m, rnext); status NEED_RANDOM: row ``row`` needs a removal index but
    the buffer is used up (nothing of that row was learned)."""
    for i in range(i0, X.shape[0]):
        x = X[i]
        y = Y[i]
        f = expansion_value(kind, a, b, c, ST, alpha, m, x, kt)
        out[i] = f
        yhat = 1.0 if f >= 0.0 else -1.0
        if yhat != y:
            if m >= budget and rnext >= rand_idx.shape[0]:
                return NEED_RANDOM, i, m, rnext
            r = m if m < budget else int(rand_idx[rnext])  # (int: a buffer laid out in floats)
            if m < budget:
                m += 1
            else:
                rnext += 1
            copy_into(ST[:, r], x)
            alpha[r] = y
    return DONE, X.shape[0], m, rnext


@jit
def bogd_rounds(kind, a, b, c, lkind, eta, decay, gamma, inclusive, X, Y, out, i0, ST, alpha, m,
                budget, rand_idx, rnext, kt):
    """BOGD rounds on rows i0.. (see :class:`okl.learners.bogd.BOGD`). Returns (status, row, m, rnext) as
    :func:`rbp_rounds`."""
    shrink = 1.0 - eta * decay
    cap = eta * gamma
    for i in range(i0, X.shape[0]):
        x = X[i]
        y = Y[i]
        f = expansion_value(kind, a, b, c, ST, alpha, m, x, kt)
        out[i] = f
        g = loss_derivative(lkind, f, y)
        if inclusive and lkind == HINGE and y * f == 1.0:
            g = -y
        if g == 0.0:
            for j in range(m):
                alpha[j] *= shrink
            continue
        if m < budget:
            for j in range(m):
                alpha[j] *= shrink
            r = m
            m += 1
        else:
            if rnext >= rand_idx.shape[0]:
                return NEED_RANDOM, i, m, rnext
            r = int(rand_idx[rnext])  # (a buffer laid out in floats)
            rnext += 1
            scale = budget * shrink / (budget - 1.0)
            for j in range(m):
                alpha[j] *= scale
        copy_into(ST[:, r], x)
        alpha[r] = -eta * g
        amax = 0.0
        for j in range(m):
            v = abs(alpha[j])
            if v > amax:
                amax = v
        if amax > cap:
            s = cap / amax
            for j in range(m):
                alpha[j] *= s
    return DONE, X.shape[0], m, rnext


@jit
def _row_views(F, o, n_constants, B, x, y):
    """(the buffer, the read position's offset, the row as a block of one, its label, its output
    slot, the kernel row) of a member's block from offset o."""
    rb = int(F[o + 1])
    q = o + n_constants
    buf = F[q:q + rb]
    at = q + rb
    kt = F[at + 1:at + 1 + B]
    slots = F[at + 1 + B:at + 3 + B]
    slots[0] = y
    return buf, at, x.reshape((1, x.shape[0])), slots[0:1], slots[1:2], kt


@jit
def rbp_member_round(F, o, ST, alpha, m, kind, a, b, c, x, y, f, lkind):
    """One RBP round of a member laid out by a compiled path (:data:`RBP_CONSTANTS`,
    :data:`STATE`, :data:`WORK` from offset o of F): :func:`rbp_rounds` on the row. Returns the new
    m, or :data:`ROUND_IN_PYTHON`."""
    buf, at, X, Y, out, kt = _row_views(F, o, 2, ST.shape[1], x, y)
    status, _, m, rnext = rbp_rounds(kind, a, b, c, X, Y, out, 0, ST, alpha, m, int(F[o]), buf, int(F[at]), kt)
    if status == NEED_RANDOM:
        return ROUND_IN_PYTHON
    F[at] = rnext
    return m


@jit
def bogd_member_round(F, o, ST, alpha, m, kind, a, b, c, x, y, f, lkind):
    """One BOGD round of a member laid out by a compiled path (:data:`BOGD_CONSTANTS`,
    :data:`STATE`, :data:`WORK` from offset o of F): :func:`bogd_rounds` on the row. Returns the
    new m, or :data:`ROUND_IN_PYTHON`."""
    buf, at, X, Y, out, kt = _row_views(F, o, 6, ST.shape[1], x, y)
    status, _, m, rnext = bogd_rounds(kind, a, b, c, lkind, F[o + 2], F[o + 3], F[o + 4], F[o + 5] != 0.0, X, Y, out,
                                      0, ST, alpha, m, int(F[o]), buf, int(F[at]), kt)
    if status == NEED_RANDOM:
        return ROUND_IN_PYTHON
    F[at] = rnext
    return m
