"""The width window (component ``"warmup"`` of :mod:`okl.components`): before a learner's state
exists its first rows are buffered, and predicted by the running label mean (the runtime's
:meth:`okl.runtime.inputs.InputMap.warmup_decision`). Only in the single learners' per-event plan
(:mod:`okl.engine.fastpath`; the header slots of :mod:`okl.components.header`): the rows at
``O_SV``, their labels at ``O_W``, the window's length in ``M``. O(d) a round."""

from __future__ import annotations

import numpy as np

from okl._compiled import jit, row_ok
from okl._validation import MAX_ABS_FEATURE
import okl.components.header as H
from okl.kernels import WIDTH_WINDOW


@jit
def warmup_event_decision(F, n):
    """The decision with n rows buffered: the mean of their labels (exact in any order: they are
    -1 / +1), 0 under target centring (the caller adds the running mean)."""
    if F[H.CLASSIFY] == 0.0 or n == 0:
        return 0.0
    ow = int(F[H.O_W])
    s = 0.0
    for i in range(n):
        s += F[ow + i]
    return s / n


@jit
def warmup_event_learn(F, x, y, n):
    """Buffer row x with its label y as row n of the window (:meth:`okl.runtime.inputs.InputMap.advance` inside it):
    (the decision before, 0 or WINDOW_DONE when the window is full), or (NaN, BAD_ROW) with
    nothing changed."""
    d = x.shape[0]
    if not row_ok(x, MAX_ABS_FEATURE) or n >= int(F[H.M]):
        return np.nan, H.BAD_ROW
    f = warmup_event_decision(F, n)
    osv = int(F[H.O_SV]) + n * d
    for j in range(d):
        F[osv + j] = x[j]
    F[int(F[H.O_W]) + n] = y
    return f, (H.WINDOW_DONE if n + 1 == int(F[H.M]) else 0)


def warmup_event_layout(plan):
    """(m, k, fixed parts): the window's rows and labels, nothing fixed."""
    return WIDTH_WINDOW, WIDTH_WINDOW, {}
