"""``auto``'s aggregation: AdaHedge with fixed share over the members' decisions, one round at a
time (the mathematics is in :mod:`okl.ensemble.auto`'s docstring). Compiled; the engine
(:mod:`okl.engine.core`) runs it inside its round, ``auto``'s Python paths call it directly.

State: L (N effective cumulative losses, min 0 over the members alive), alive (N, 1.0 / 0.0),
agg = [Delta (cumulative mixability gap), t (rounds aggregated), lo, hi (target range seen)],
followed in regression (N >= 2 members) by the stacking layer's state (:func:`agg_size`; the
engine never reads it; the slots are named below): the top level's effective cumulative losses
(mixture, stack), its Delta and t, the ridge lambda (0 until fixed), the targets' mean and sum of
squared deviations (Welford, over t), the cumulative squared losses of the mixture and of the
stack (the gate), the target range, the stack's weights v (N) and its inverse Gram matrix P
(N x N, row major). A
four-entry agg in regression (a model file from before the stacking layer) runs without it.

The stacking layer runs beside the engine, on the mixture it returns and the member decisions it
leaves (:func:`stack_predict`, :func:`stack_learn`, :func:`stack_rows`; ``auto``'s paths call them
in regression only). Why outside the engine: every cold start compiles the engine, and the layer
in it cost classification's first run() about 1.5 s of compiling for code it never runs.
"""

from __future__ import annotations

import math

import numpy as np

from okl._jit import jit, jit_inline
from okl.kernels import WIDTH_WINDOW

#: agg's head: Delta, t, lo, hi
AGG_HEAD = 4
#: the stacking layer's state (agg[AGG_HEAD:]), its head's slots: the top level's effective
#: cumulative losses of the mixture and of the stack, its Delta and its rounds t (also the count of
#: the targets' Welford mean and M2), lambda, the cumulative squared losses (the gate), and the
#: target range before the round; then v (N) and P (N x N)
(L_MIX, L_STACK, DELTA, ROUNDS, LAMBDA, MEAN, M2, CUM_MIX, CUM_STACK, LO, HI) = range(11)
STACK_HEAD = 11
#: the stacking layer's ridge lambda, in units of the variance of the first targets aggregated
#: (auto's docstring, "Aggregation"; 0.1 and 10 gave the same results within 1 %)
STACK_RIDGE = 1.0


def agg_size(n_members: int, classification: bool) -> int:
    """The length of auto's agg: the head, and in regression with two or more members the
    stacking layer (module docstring)."""
    if classification or n_members < 2:
        return AGG_HEAD
    return AGG_HEAD + STACK_HEAD + n_members + n_members * n_members


def new_agg(n_members: int, classification: bool) -> np.ndarray:
    """A fresh agg: no round aggregated, the empty target range (the stack's too)."""
    agg = np.zeros(agg_size(n_members, classification))
    agg[2], agg[3] = np.inf, -np.inf
    if agg.shape[0] > AGG_HEAD:
        agg[AGG_HEAD + LO], agg[AGG_HEAD + HI] = np.inf, -np.inf
    return agg


@jit
def mixture_weights(L, alive, eta, w):
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
    mixture_weights(L, alive, _rate(agg, n), w)
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
        mixture_weights(L, alive, eta2, w)
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


@jit_inline
def _two_weight(l0, l1, eta):
    """The second of two experts' exponential weights at rate eta (the arithmetic of
    :func:`mixture_weights`; eta = inf: uniform on the minimisers)."""
    lmin = min(l0, l1)
    if eta == np.inf:
        w0 = 1.0 if l0 == lmin else 0.0
        w1 = 1.0 if l1 == lmin else 0.0
    else:
        w0 = math.exp(-eta * (l0 - lmin))
        w1 = math.exp(-eta * (l1 - lmin))
    return w1 / (w0 + w1)


@jit_inline
def stack_share(st):
    """(u, gate): the top level's weight u on the stack (AdaHedge's rate ln 2 / Delta) and the
    gate, whether the stack's cumulative squared loss is below the mixture's (st: the stacking
    layer's state, agg[AGG_HEAD:])."""
    eta = math.log(2.0) / st[DELTA] if st[DELTA] > 0.0 else np.inf
    return _two_weight(st[L_MIX], st[L_STACK], eta), st[CUM_STACK] < st[CUM_MIX]


@jit_inline
def _stack_mix(c, alive, st, f):
    """(s, u, gate) for the mixture f and the clipped member decisions c: the stack's prediction
    s = f + sum_i v_i (c_i - f) over the members alive, clipped to the target range, and
    :func:`stack_share`."""
    v = st[STACK_HEAD:]
    s = f
    for i in range(alive.shape[0]):
        if alive[i] > 0.0:
            s += v[i] * (c[i] - f)
    if st[LO] <= st[HI]:
        s = min(max(s, st[LO]), st[HI])
    u, gate = stack_share(st)
    return s, u, gate


@jit
def _stack_round(c, y, alive, st, loss, f, s, u):
    """The stacking layer's round on target y, for the mixture f, the stack s and the top level's
    weight u on it this round (loss: work): the top level's AdaHedge round with fixed share on
    their squared losses (:func:`aggregate_outputs_round`'s rule on two experts) and their
    cumulative squared losses (the gate); the targets' variance; once lambda is fixed (at the
    first round from :data:`~okl.kernels.WIDTH_WINDOW` targets on with a variance > 0: lambda =
    :data:`STACK_RIDGE` x that variance, P = I / lambda), the recursive least-squares step of v
    on the members' deviations r_i = c_i - f from the mixture and the mixture's residual y - f
    (ridge towards v = 0: the mixture itself). O(N^2). The top level is written out for its two
    experts rather than calling the members' rule, which lives inside the engine's round (a
    function of its own there cost every cold start its compile)."""
    l0 = (f - y) * (f - y)
    l1 = (s - y) * (s - y)
    if st[DELTA] > 0.0:  # the mixability gap h - m
        eta = math.log(2.0) / st[DELTA]
        lmin = min(l0, l1)
        m = lmin - math.log((1.0 - u) * math.exp(-eta * (l0 - lmin)) + u * math.exp(-eta * (l1 - lmin))) / eta
    else:
        m = l0 if u < 1.0 else np.inf
        if u > 0.0:
            m = min(m, l1)
    st[DELTA] += max((1.0 - u) * l0 + u * l1 - m, 0.0)
    st[L_MIX] += l0
    st[L_STACK] += l1
    st[ROUNDS] += 1.0
    if st[DELTA] > 0.0:  # fixed share, alpha_t = 1 / (t + 1)
        eta = math.log(2.0) / st[DELTA]
        a = 1.0 / (st[ROUNDS] + 1.0)
        w1 = _two_weight(st[L_MIX], st[L_STACK], eta)
        st[L_MIX] = -math.log((1.0 - a) * (1.0 - w1) + a / 2.0) / eta
        st[L_STACK] = -math.log((1.0 - a) * w1 + a / 2.0) / eta
    lmin = min(st[L_MIX], st[L_STACK])
    st[L_MIX] -= lmin
    st[L_STACK] -= lmin
    st[CUM_MIX] += l0
    st[CUM_STACK] += l1
    delta = y - st[MEAN]  # Welford over the ROUNDS targets
    st[MEAN] += delta / st[ROUNDS]
    st[M2] += delta * (y - st[MEAN])
    N = alive.shape[0]
    v = st[STACK_HEAD:STACK_HEAD + N]
    P = st[STACK_HEAD + N:]
    if st[LAMBDA] == 0.0:
        if st[ROUNDS] < WIDTH_WINDOW or not st[M2] > 0.0:
            return
        st[LAMBDA] = STACK_RIDGE * st[M2] / st[ROUNDS]
        for i in range(N * N):
            P[i] = 0.0
        for i in range(N):
            P[i * N + i] = 1.0 / st[LAMBDA]
            v[i] = 0.0
        return
    # r (in c) = the deviations of the members alive, 0 for the others; Px (in loss)
    for i in range(N):
        c[i] = c[i] - f if alive[i] > 0.0 else 0.0
    rv = 0.0
    for i in range(N):
        rv += c[i] * v[i]
    den = 1.0
    for i in range(N):
        q = 0.0
        for j in range(N):
            q += P[i * N + j] * c[j]
        loss[i] = q
        den += c[i] * q
    e = (y - f - rv) / den
    for i in range(N):
        v[i] += loss[i] * e
        gi = loss[i] / den
        for j in range(N):
            P[i * N + j] -= gi * loss[j]


@jit
def stack_predict(d, alive, st, f, c):
    """auto's regression prediction for the mixture f of member decisions d: (1 - u) f + u s
    when the stacking layer's gate is open, else f (st: agg[AGG_HEAD:]; c: work, N). No change to
    the state."""
    _clip_row(d, alive, False, st[LO], st[HI], c, 1)
    s, u, gate = _stack_mix(c, alive, st, f)
    if gate and u > 0.0:
        return (1.0 - u) * f + u * s
    return f


@jit
def stack_learn(d, y, alive, st, f, c, work):
    """:func:`stack_predict`, then the stacking layer's round on target y (c, work: N each)."""
    _clip_row(d, alive, False, st[LO], st[HI], c, 1)
    s, u, gate = _stack_mix(c, alive, st, f)
    p = (1.0 - u) * f + u * s if gate and u > 0.0 else f
    _stack_round(c, y, alive, st, work, f, s, u)
    st[LO] = min(st[LO], y)
    st[HI] = max(st[HI], y)
    return p


@jit
def stack_rows(D, Y, alive, st, out):
    """:func:`stack_learn` over rows of the engine's block: D the member decisions (n x N), out the
    mixture's outputs in and auto's predictions out; alive: the members alive before the block (a
    member whose decision turns non-finite leaves from that row on, as in the engine)."""
    N = D.shape[1]
    a = alive.copy()
    c = np.empty(N)
    work = np.empty(N)
    for r in range(D.shape[0]):
        for i in range(N):
            if a[i] > 0.0 and not math.isfinite(D[r, i]):
                a[i] = 0.0
        out[r] = stack_learn(D[r], Y[r], a, st, out[r], c, work)
