"""``auto``'s aggregation: AdaHedge with fixed share over the members' decisions, one round at a
time (the mathematics is in :mod:`okl.learners.auto`'s docstring). Compiled; the engine
(:mod:`okl.engine.core`) runs it inside its round, ``auto``'s Python paths call it directly.

State: L (N effective cumulative losses, min 0 over the members alive), alive (N, 1.0 / 0.0),
agg = [Delta (cumulative mixability gap), t (rounds aggregated), lo, hi (target range seen)].
"""

from __future__ import annotations

import math

import numpy as np

from okl._jit import jit


@jit
def _weights(L, alive, eta, w):
    """w_i ~ exp(-eta (L_i - min L)) over the members alive (eta = inf: uniform on the minimisers)."""
    lmin = np.inf
    for i in range(L.shape[0]):
        if alive[i] > 0.0 and L[i] < lmin:
            lmin = L[i]
    s = 0.0
    for i in range(L.shape[0]):
        if alive[i] <= 0.0:
            w[i] = 0.0
        elif eta == np.inf:
            w[i] = 1.0 if L[i] == lmin else 0.0
        else:
            w[i] = math.exp(-eta * (L[i] - lmin))
        s += w[i]
    if s > 0.0:
        for i in range(L.shape[0]):
            w[i] /= s


@jit
def _rate(agg, n_alive):
    """AdaHedge's learning rate ln N / Delta (inf while Delta = 0, or with one member left)."""
    if agg[0] > 0.0 and n_alive > 1:
        return math.log(n_alive) / agg[0]
    return np.inf


@jit
def _clip_row(d, alive, classification, lo, hi, c, nout):
    """Clip the decisions of the members alive (see auto's docstring; member i's nout outputs are
    d[i nout:(i + 1) nout]); returns how many members are alive."""
    n = 0
    for i in range(alive.shape[0]):
        if alive[i] > 0.0:
            n += 1
        for o in range(nout):
            v = d[i * nout + o]
            if alive[i] > 0.0:
                if classification:
                    v = min(max(v, -1.0), 1.0)
                elif lo <= hi:
                    v = min(max(v, lo), hi)
            c[i * nout + o] = v
    return n


@jit
def aggregate_outputs(d, L, alive, agg, classification, w, c, nout, p):
    """The mixture's nout outputs p_o = sum_i w_i c_io for member decisions ``d`` (no change to the
    state; p = 0 with no member alive)."""
    n = _clip_row(d, alive, classification, agg[2], agg[3], c, nout)
    for o in range(nout):
        p[o] = 0.0
    if n == 0:
        return
    _weights(L, alive, _rate(agg, n), w)
    for i in range(alive.shape[0]):
        if alive[i] > 0.0:
            for o in range(nout):
                p[o] += w[i] * c[i * nout + o]


@jit
def aggregate_predict(d, L, alive, agg, classification, w, c):
    """The mixture's decision for member decisions ``d`` (one output; no change to the state)."""
    p = np.empty(1)
    aggregate_outputs(d, L, alive, agg, classification, w, c, 1, p)
    return p[0]


#: the weight of the 0-1 part of a member's classification loss (auto's docstring: "Aggregation")
ZERO_ONE_SHARE = 0.5


@jit
def _member_loss(c, i, y, classification, nout, multi):
    """Member i's loss on its clipped outputs c. Classification: (1 - s) h + s m with s =
    :data:`ZERO_ONE_SHARE`, h the clipped hinge (1 - y c) / 2 (one output, y = -1/+1) or its mean
    over the K one-vs-rest outputs (``multi``: y is the class index, y_o = +1 for o = y, else -1),
    and m the member's 0-1 loss (its label sign(c), +1 at c = 0, or its argmax class, the last of
    a tie, is not y: two mirrored outputs [-c, c] pay the binary loss). Regression: the squared
    loss (c - y)^2."""
    if not classification:
        return (c[i] - y) * (c[i] - y)
    if not multi:
        wrong = (c[i] >= 0.0) != (y > 0.0)
        return (1.0 - ZERO_ONE_SHARE) * 0.5 * (1.0 - y * c[i]) + (ZERO_ONE_SHARE if wrong else 0.0)
    s = 0.0
    best = 0
    for o in range(nout):
        v = c[i * nout + o]
        s += 0.5 * (1.0 - (1.0 if o == y else -1.0) * v)
        if v >= c[i * nout + best]:
            best = o
    return (1.0 - ZERO_ONE_SHARE) * s / nout + (ZERO_ONE_SHARE if best != y else 0.0)


@jit
def aggregate_outputs_round(d, y, L, alive, agg, classification, w, c, loss, nout, multi, p):
    """One test-then-train aggregation round on member decisions d (a member with a non-finite
    output leaves the pool for good); the mixture's outputs go to p. w, loss: work (N); c: work
    (N nout)."""
    N = alive.shape[0]
    for i in range(N):
        if alive[i] > 0.0:
            for o in range(nout):
                if not math.isfinite(d[i * nout + o]):
                    alive[i] = 0.0
    aggregate_outputs(d, L, alive, agg, classification, w, c, nout, p)
    n = 0
    for i in range(N):
        if alive[i] > 0.0:
            n += 1
    if n == 0:
        return
    eta = _rate(agg, np.int64(n))
    # mixability gap of this round: h (mixture's dot loss) - m (mix loss)
    h = 0.0
    lmin = np.inf
    for i in range(N):
        if alive[i] > 0.0:
            li = _member_loss(c, i, y, classification, nout, multi)
            loss[i] = li
            h += w[i] * li
            if li < lmin:
                lmin = li
    if eta == np.inf:
        m = np.inf
        for i in range(N):
            if alive[i] > 0.0 and w[i] > 0.0 and loss[i] < m:
                m = loss[i]
    else:
        s = 0.0
        for i in range(N):
            if alive[i] > 0.0:
                s += w[i] * math.exp(-eta * (loss[i] - lmin))
        m = lmin - math.log(s) / eta
    agg[0] += max(h - m, 0.0)
    for i in range(N):
        if alive[i] > 0.0:
            L[i] += loss[i]
    agg[1] += 1.0
    # fixed share with alpha_t = 1 / (t + 1), applied to the next round's weights
    if n > 1 and agg[0] > 0.0:
        eta2 = math.log(n) / agg[0]
        a = 1.0 / (agg[1] + 1.0)
        _weights(L, alive, eta2, w)
        for i in range(N):
            if alive[i] > 0.0:
                L[i] = -math.log((1.0 - a) * w[i] + a / n) / eta2
    lmin = np.inf
    for i in range(N):
        if alive[i] > 0.0 and L[i] < lmin:
            lmin = L[i]
    for i in range(N):
        if alive[i] > 0.0:
            L[i] -= lmin
    if not classification:
        agg[2] = min(agg[2], y)
        agg[3] = max(agg[3], y)


@jit
def aggregate_round(d, y, L, alive, agg, classification, w, c, loss):
    """:func:`aggregate_outputs_round` with one output; returns the mixture's decision."""
    p = np.empty(1)
    aggregate_outputs_round(d, y, L, alive, agg, classification, w, c, loss, 1, False, p)
    return p[0]


@jit
def aggregate_rounds(D, Y, L, alive, agg, classification, out):
    """:func:`aggregate_round` over the rows of the member-decision matrix D (n x N)."""
    N = D.shape[1]
    w = np.empty(N)
    c = np.empty(N)
    loss = np.empty(N)
    for r in range(D.shape[0]):
        out[r] = aggregate_round(D[r], Y[r], L, alive, agg, classification, w, c, loss)
