"""``auto``'s engine: every member's round and the aggregation in one compiled call per event.

Why: a Python method pair per member per event cost auto 14 x (two compiled calls + validation),
18x its own run(). Here the state of every member that the engine knows is laid out in one float
buffer ``F`` (its arrays are *views* of F, so the member objects, their model files and their
Python-side transitions see the same memory) and one int table ``I`` (one row per member: its
map and step, loss, sizes, counters and the offsets of its arrays in F), with the reals of each member in
``R``. Two pieces of orchestration use one per-member arithmetic:

* :func:`engine_event` -- one row: every member's features and outputs, then the mixture's
  (``predict_one``); with learning, the aggregation round and every member's step, on the
  features an event without learning left in F when it ran on the same row in the same state
  (``learn_one``), or computing them;
* :func:`engine_rows` -- both for each row of a block (``run``, ``learn_many``, ``okl stream``).

They are inlined into the engine's compiled roots (:mod:`okl.engine.roots`: one for one
output, one for K outputs), which every path calls. So a row's decisions are the same, bit for
bit, whichever path learns it, and however a stream is cut into blocks. The aggregation is in
:mod:`okl.engine.aggregation`.

Members: each member's :meth:`~okl.runtime.events.EventPath.engine_plan` (a map and a step of
the component table, :mod:`okl.components`) is laid out by :class:`okl.engine.layout.Engine`, and a
member's round is the generated dispatch (:mod:`okl.components.dispatch`) over its map
(``I[j, MAP]``) and step (``I[j, STEP]``) calling that component's member functions (its module);
this module names no component, and a learner assembled from those components is an engine member
with no edit here. The per-round arithmetic is that of the member alone:

* map "expansion" with the support step: f = sum alpha_i kappa(x_i, x) (NOGD and FORKS in stage
  1, :func:`okl.learners.kogd.expansion_rounds`); a margin error adds x while m < B; when full,
  the budget rule (``I[j, RULE]``, :func:`okl.components.steps.support.support_slot`): STOP leaves the round to the member's
  own ``_transition`` in Python, REPLACE_OLDEST overwrites the oldest row;
* map "kernel": z = P^T kappa_L(x) (:func:`okl._compiled.kernel_features`; NOGD's and FORKS's
  stage 2) with AdaGrad or OGD, or the code's ONS step with its update of A^{-1} deferred into the
  next round's product (:func:`okl.components.steps.ons.ons_code_step_deferred`; :meth:`okl.engine.layout.Engine.sync`
  applies it before Python reads the member) and its *update rounds* left to Python;
* map "fourier": z = [cos Ux, sin Ux] / sqrt(D) (:func:`okl.learners.fogd.fogd_event_features`), OGD;
  map "generated fourier": the same with U's columns generated for the row's non-zeros
  (:func:`okl.features.generated.project_generated`; FOGD's ``directions``);
* map "linear": z = [x, 1] or, degree 2, [x, products, 1]
  (:func:`okl.components.maps.linear.linear_features`; ``I[j, UNMAP]``: a member of the affine family,
  whose features undo auto's symlog map), OGD;
* map "window" with the store step: the kernel smoother on a sliding window
  (:mod:`okl.components.maps.window`): no features, the decision from the stored rows
  (:func:`okl.components.maps.window.window_decision`), learning stores the row
  (:func:`okl.components.maps.window.window_store`);
* PY (no plan the engine runs): Python fills its decision column before the engine runs (it
  learns through its own path) and the engine only aggregates it.

Shared work (``I[j, SRC]``, the source member; ``I[j, ORDER]`` computes sources first): a
kernel-map member whose landmarks and map equal another's (NOGD's two steps at one width in
classification: their stage 1 uses the same eta, so their support vectors and Nystrom map are
the same) reads that member's features, computed once a round for both (exactly NOGD alone); a
Fourier member whose directions are twice another's (auto draws them so) takes the double angle
of that member's features (within a few ulp of its own sines and cosines). A member whose
source left the pool computes its own.

Outputs (``I[j, NOUT]``, the same for every member): 0, one output (labels -1/+1 or targets), a
member's decisions a column of the (n, N) decision matrix and its output weights a vector of
length k (``I[j, K]``) laid out in F; or K >= 1 one-vs-rest outputs over the K classes (labels
are class indices; :class:`okl.runtime.multiclass.MultiClass`): a member's weights are K rows
(K x k row-major; an expansion's coefficients K x B), its features are computed once a round for
the K outputs, its decisions are K columns of the (n, N K) decision matrix, and its step is its
own step per output (each component's ``*_k`` member functions; FORKS's ONS shares one preconditioner,
:func:`okl.components.steps.ons.ons_shared_step`). The aggregation then pays each member the mean of its
K clipped one-vs-rest hinge losses and mixes each output with the same weights.

Per-round cost: the members' own (see each learner) plus O(N) for the aggregation; the Python cost
of an event is two compiled calls (predict_one, learn_one), whatever N.
"""

from __future__ import annotations

import math

import numpy as np

from okl._compiled import jit, row_ok
from okl._jit import jit_inline
from okl.components.columns import NOTHING, NOUT, ORDER, SRC, row_is_sparse
from okl.components.dispatch import (block_features, member_learn_dictionary, member_learn_k, member_learn_one,
                                     member_outputs_dictionary, member_outputs_k, member_outputs_one, runs_compiled)
from okl.engine.aggregation import aggregate_outputs, aggregate_outputs_round


# ---------------------------------------------------------------------------------------------
# entry points


@jit
def _outputs(I):
    """(K, nout): K = ``I[:, NOUT]`` (0: one output with labels -1/+1 or targets; K >= 1: K
    one-vs-rest outputs with class-index labels) and nout = max(K, 1) outputs per member."""
    K = I[0, NOUT] if I.shape[0] else 0
    return K, max(K, 1)


# The orchestration below is written once for both output kinds (``jit_inline``: typed inside its
# callers) and compiled for each kind with that kind's dispatch (okl.components.dispatch): ``outputs(F,
# I, R, j, x, xi, xv, own, q, pre, nk, out)`` (member j's outputs on x into out) and ``learn(F, I, R,
# j, x, xi, xv, y, f, q, nk, g)`` (its step; f its outputs): :func:`predict_all_one` /
# :func:`learn_all_one` (one output; :func:`learn_all_dictionaries` with the steps that keep their
# own dictionary) and :func:`predict_all_k` / :func:`learn_all_k` (K outputs), which the compiled
# roots (okl.engine.roots) call. So the one-output root never compiles the K-output code and the
# reverse, and each of the four compiles on its own (a cold start can compile them in two
# processes at once; Numba compiles every function a root calls, used or not, and then optimises
# each caller with its callees again: docs/results/startup-compile.md).


@jit_inline
def _predict_all(F, I, R, x, xi, xv, alive, d, q, pre, outputs):
    """Every engine member's outputs on x into d (member j's at d[j nout:(j + 1) nout]), features
    in slot q (PY members' entries are left as given; ``pre``: see :func:`_member_features`)."""
    nk, nout = _outputs(I)
    for o in range(I.shape[0]):  # sources before the members that read them (``ORDER``)
        j = I[o, ORDER]
        src = I[j, SRC]
        if alive[j] > 0.0 and runs_compiled(I, j):
            outputs(F, I, R, j, x, xi, xv, src == j or alive[src] <= 0.0, q, pre, nk, d[j * nout:(j + 1) * nout])


@jit_inline
def _learn_all(F, I, R, x, xi, xv, y, d, alive, todo, q, g, learn):
    """Every engine member alive learns x (outputs d, features in slot q; g: work, nout); returns
    how many need Python (``todo``)."""
    nk, nout = _outputs(I)
    n = 0
    for j in range(I.shape[0]):
        todo[j] = NOTHING
        if alive[j] > 0.0 and runs_compiled(I, j):
            todo[j] = learn(F, I, R, j, x, xi, xv, y, d[j * nout:(j + 1) * nout], q, nk, g)
            if todo[j] != NOTHING:
                n += 1
    return n


@jit
def predict_all_one(F, I, R, x, xi, xv, alive, d, q, pre):
    """:func:`_predict_all` with one output per member."""
    _predict_all(F, I, R, x, xi, xv, alive, d, q, pre, member_outputs_one)


@jit
def learn_all_one(F, I, R, x, xi, xv, y, d, alive, todo, q, g):
    """:func:`_learn_all` with one output per member."""
    return _learn_all(F, I, R, x, xi, xv, y, d, alive, todo, q, g, member_learn_one)


@jit
def predict_all_dictionaries(F, I, R, x, xi, xv, alive, d, q, pre):
    """:func:`_predict_all` with one output per member, some of them of the engine's second root
    (:func:`learn_all_dictionaries`)."""
    _predict_all(F, I, R, x, xi, xv, alive, d, q, pre, member_outputs_dictionary)


@jit
def learn_all_dictionaries(F, I, R, x, xi, xv, y, d, alive, todo, q, g):
    """:func:`_learn_all` with one output per member, some of them steps that keep their own
    dictionary (a root of their own, :func:`okl.engine.roots.engine_dictionaries`: the default
    pools' root does not compile those steps)."""
    return _learn_all(F, I, R, x, xi, xv, y, d, alive, todo, q, g, member_learn_dictionary)


@jit
def predict_all_k(F, I, R, x, xi, xv, alive, d, q, pre):
    """:func:`_predict_all` with K outputs per member."""
    _predict_all(F, I, R, x, xi, xv, alive, d, q, pre, member_outputs_k)


@jit
def learn_all_k(F, I, R, x, xi, xv, y, d, alive, todo, q, g):
    """:func:`_learn_all` with K outputs per member."""
    return _learn_all(F, I, R, x, xi, xv, y, d, alive, todo, q, g, member_learn_k)


def state_size(N: int, nout: int, n_agg: int = 4) -> int:
    """The length of the engine's state-and-work array S (:func:`state_views`) with an agg of n_agg
    entries (:func:`okl.engine.aggregation.agg_size`)."""
    return 4 * N + n_agg + 2 * N * nout + 2 * nout


@jit
def state_views(S, N, nout):
    """The aggregation's state and work in S: L, alive, agg (the learner's own state, see above;
    agg takes what the other parts leave) and the work spaces d (the members' outputs on the
    last row, N nout), w (N), c (N nout), loss (N), p (the mixture's nout outputs) and g (nout:
    the members' steps)."""
    e = 2 * N + S.shape[0] - (4 * N + 2 * N * nout + 2 * nout)
    f = e + 2 * N * nout + 2 * N
    return (S[0:N], S[N:2 * N], S[2 * N:e], S[e:e + N * nout], S[e + N * nout:e + N * nout + N],
            S[e + N * nout + N:e + 2 * N * nout + N], S[e + 2 * N * nout + N:f], S[f:f + nout],
            S[f + nout:f + 2 * nout])


@jit_inline
def engine_event(F, I, R, S, x, xi, xv, y, bound, have, learning, classification, todo, predict_all, learn_all):
    """One event on row x: every member's outputs on x (into d; the features stay in F) unless
    ``have`` (they are those an event without ``learning`` left, in this state), and the
    mixture's (into p); with ``learning``, the aggregation round and every member's step with
    label / target y (learn_one), else no change to the state (predict_one). ``xi``, ``xv``: the
    row's non-zeros when it comes sparse (x its dense copy), else empty. Returns (ok, p[0],
    number of members needing Python, listed in ``todo``); ok False (nothing computed) when x
    fails :func:`okl._compiled.row_ok`; p is NaN once no member is left."""
    nk, nout = _outputs(I)
    L, alive, agg, d, w, c, loss, p, g = state_views(S, I.shape[0], nout)
    if not have:
        if not row_ok(xv if row_is_sparse(xi) else x, bound):  # (a sparse row: its non-zeros)
            return False, 0.0, 0
        predict_all(F, I, R, x, xi, xv, alive, d, np.int64(0), np.bool_(False))
    if not learning:
        a = alive.copy()
        for j in range(a.shape[0]):
            for o in range(nout):
                if a[j] > 0.0 and not math.isfinite(d[j * nout + o]):
                    a[j] = 0.0  # learning this row would drop it
        aggregate_outputs(d, L, a, agg, classification, w, c, nout, p)
        return True, p[0], 0
    aggregate_outputs_round(d, y, L, alive, agg, classification, w, c, loss, nout, nk > 0, p)
    n = learn_all(F, I, R, x, xi, xv, y, d, alive, todo, np.int64(0), g)
    for j in range(alive.shape[0]):
        if alive[j] > 0.0:
            return True, p[0], n
    for o in range(nout):
        p[o] = np.nan
    return True, np.nan, n


@jit_inline
def engine_rows(F, I, R, S, X, Y, r0, bound, classification, D, out, todo, xi, xv, predict_all, learn_all):
    """Rows r0.. of a block, each as :func:`engine_event` predicting then learning (PY members' columns of D
    filled beforehand; D is n x N nout, out n x nout), the kernel maps' features four rows at a
    time (:func:`okl.components.dispatch.block_features`: the same values as one row at a time, so a row's decisions do
    not depend on the block). Stops after the first row some member needs Python for (the rows
    after it are recomputed: its map may change), or before a row that fails
    :func:`okl._compiled.row_ok`. Returns (rows done up to, number needing Python)."""
    nk, nout = _outputs(I)
    L, alive, agg, _, w, c, loss, _, g = state_views(S, I.shape[0], nout)
    r = r0
    n = X.shape[0]
    while r < n:
        nb = min(4, n - r)
        for q in range(nb):
            if not row_ok(X[r + q], bound):
                nb = q
                break
        if nb == 0:
            return r, 0
        block_features(F, I, R, X, r, nb, alive, bound)
        for q in range(nb):
            x = X[r + q]
            predict_all(F, I, R, x, xi, xv, alive, D[r + q], q, np.bool_(True))
            aggregate_outputs_round(D[r + q], Y[r + q], L, alive, agg, classification, w, c, loss, nout, nk > 0,
                                    out[r + q])
            k = learn_all(F, I, R, x, xi, xv, Y[r + q], D[r + q], alive, todo, q, g)
            if k:
                return r + q + 1, k
        r += nb
    return n, 0


@jit_inline
def engine_sparse_rows(F, I, R, S, Xp, Xi, Xv, Y, r0, bound, classification, D, out, todo, x, predict_all,
                       learn_all):
    """:func:`engine_rows` over sparse rows (row pointers Xp, column indices Xi, values Xv:
    :class:`okl._sparse.SparseRows`): each row's non-zeros go to the members' O(nnz) input side,
    with its dense copy in the work row x (zeros on entry and on return: O(nnz) to write and
    clear) for what stores a row or maps it densely (the linear map). One row at a time."""
    nk, nout = _outputs(I)
    L, alive, agg, _, w, c, loss, _, g = state_views(S, I.shape[0], nout)
    n = Xp.shape[0] - 1
    for r in range(r0, n):
        a, b = Xp[r], Xp[r + 1]
        xi, xv = Xi[a:b], Xv[a:b]
        if not row_ok(xv, bound):
            return r, 0
        for p in range(a, b):
            x[Xi[p]] = Xv[p]
        predict_all(F, I, R, x, xi, xv, alive, D[r], np.int64(0), np.bool_(False))
        aggregate_outputs_round(D[r], Y[r], L, alive, agg, classification, w, c, loss, nout, nk > 0, out[r])
        k = learn_all(F, I, R, x, xi, xv, Y[r], D[r], alive, todo, np.int64(0), g)
        for p in range(a, b):
            x[Xi[p]] = 0.0
        if k:
            return r + 1, k
    return n, 0

