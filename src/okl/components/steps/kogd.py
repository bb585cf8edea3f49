"""KOGD's step (component ``"norma"`` of :mod:`okl.components`): kernelized online gradient
descent, NORMA with its decay (Kivinen, Smola & Williamson, IEEE TSP 52(8) 2004; LSOKL): every
coefficient shrinks by 1 - eta lambda, and on a nonzero loss derivative g the row joins the
expansion with -eta g while it has room. The rule is in :mod:`okl.learners.kogd`; the decision is
the expansion map's (:func:`okl.components.maps.expansion.expansion_decision`'s sum).

:func:`expansion_rounds` is also the first stage of NOGD, SkeGD and FORKS (``stop_when_full``). A
member round runs it on its one row; when the arrays are full below the budget (the expansion
grows by doubling) it returns ROUND_IN_PYTHON and the learner's Python grows them and learns the
row (``_update_round``).

Declared state (:mod:`okl.components.spec`): the constants eta, lambda and the budget (-1: none);
work: two slots (the row's label, its decision). Per round O(m d).
"""

from __future__ import annotations

import numpy as np

from okl._compiled import copy_into, jit, kernel_value, loss_derivative
from okl.components.spec import ROUND_IN_PYTHON, Field

#: the step's declared block (:func:`norma_member_round` reads it in this order)
CONSTANTS = ("eta", "decay", "budget")
STATE = ()
WORK = (Field("slots", (2,)),)

DONE, GROW, TRANSITION = 0, 1, 2


@jit
def expansion_rounds(kind, a, b, c, lkind, eta, decay, X, Y, out, i0, SV, alpha, m, budget,
                     stop_when_full):
    """KOGD rounds on rows i0.. of X. Returns (status, row, m).

    status DONE: every row processed. GROW: row ``row`` is unprocessed because the arrays are full
    (the caller enlarges them and calls again). TRANSITION: ``stop_when_full`` and row ``row`` has a
    nonzero loss derivative with m == budget; ``out[row]`` holds its decision, nothing was learned.
    """
    n = X.shape[0]
    shrink = 1.0 - eta * decay
    for i in range(i0, n):
        if m == SV.shape[0] and m < budget:
            return GROW, i, m
        x = X[i]
        f = 0.0
        for j in range(m):
            f += alpha[j] * kernel_value(kind, a, b, c, SV[j], x)
        out[i] = f
        g = loss_derivative(lkind, f, Y[i])
        if g != 0.0 and m >= budget and stop_when_full:
            return TRANSITION, i, m
        if decay > 0.0:
            for j in range(m):
                alpha[j] *= shrink
        if g != 0.0 and m < budget:
            copy_into(SV[m], x)
            alpha[m] = -eta * g
            m += 1
    return DONE, n, m


@jit
def norma_member_round(F, o, SV, alpha, m, kind, a, b, c, x, y, f, lkind):
    """One round of a member laid out by a compiled path (:data:`CONSTANTS`, :data:`WORK` from
    offset o of F): :func:`expansion_rounds` on the row. Returns the new m, or ROUND_IN_PYTHON
    (the arrays are full below the budget: the learner grows them)."""
    budget = int(F[o + 2])
    if budget < 0:
        budget = np.iinfo(np.int64).max
    slots = F[o + 3:o + 5]
    slots[0] = y
    status, _, m = expansion_rounds(kind, a, b, c, lkind, F[o], F[o + 1], x.reshape((1, x.shape[0])), slots[0:1],
                                    slots[1:2], 0, SV, alpha, m, budget, False)
    if status == GROW:
        return ROUND_IN_PYTHON
    return m
