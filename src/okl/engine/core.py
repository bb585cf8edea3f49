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
:mod:`okl.engine.aggregation`, the K-output members in :mod:`okl.engine.k_outputs`.

Members: each member's :meth:`~okl.runtime.events.EventPath.engine_plan` (a map and a step of
the component table, :mod:`okl.components`) is laid out by :class:`okl.engine.layout.Engine`, and the
compiled code dispatches on its map (``I[j, MAP]``) and step (``I[j, STEP]``), never on the
learner's type: a learner assembled from those components is an engine member with no edit
here. The per-round arithmetic is that of the member alone:

* map "expansion" with the support step: f = sum alpha_i kappa(x_i, x) (NOGD and FORKS in stage
  1, :func:`okl.learners.kogd.expansion_rounds`); a margin error adds x while m < B; when full,
  the budget rule (``I[j, RULE]``, :func:`support_slot`): STOP leaves the round to the member's
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
own step per output (:mod:`okl.engine.k_outputs`; FORKS's ONS shares one preconditioner,
:func:`okl.components.steps.ons.ons_shared_step`). The aggregation then pays each member the mean of its
K clipped one-vs-rest hinge losses and mixes each output with the same weights.

Per-round cost: the members' own (see each learner) plus O(N) for the aggregation; the Python cost
of an event is two compiled calls (predict_one, learn_one), whatever N.
"""

from __future__ import annotations

import math

import numpy as np

from okl._compiled import (distances_t_sparse, dot, jit, kernel_features_rows, kernel_row_t,
                           kernel_row_t_sparse, kernel_value, kernel_value_sparse, loss_derivative, merge_into,
                           ogd_step, row_norm, row_ok, rows_axpy, sparse_axpy, sub_scaled)
from okl._jit import jit_inline
from okl.engine.aggregation import aggregate_outputs, aggregate_outputs_round
from okl.engine.columns import (BUDGET, CB, COUNTER, ETA, GKIND, GSCALE, GSEED, K, KA, KB_, KC, KIND, LOSS, LR,
                                M, MAP, MARGIN_COUNTER, MERGE, NL, NOTHING, NOUT, NSEEN, ORDER, O_A, O_G, O_KB, O_NRM, O_P,
                                O_U, O_W, O_Z, PY, RHO, RULE, SRC, STEP, TRANSITION, UNMAP, UPDATE)
from okl.components.steps.update_rounds import update_round_due
from okl.components.maps.fourier import fourier_from_projections, project_t
from okl.components.maps.linear import (linear_features, linear_step_sparse, linear_value_sparse, nonzero_features,
                                        sparse_features)
from okl.components.steps.nag import nag_step, nag_value
from okl.components.steps.ons import CODE_PROJECTION_EPS, ons_code_step_deferred, pending_size
from okl.components.steps.adagrad import adagrad_step
from okl.components.maps.columns import expansion_value
from okl.components.maps.window import window_decision, window_from_distances, window_store
from okl.features.generated import project_generated, project_generated_cached
from okl.components import (ADAGRAD, COLUMN_EXPANSION, EXPANSION, FOURIER_MAP, GENERATED_FOURIER, KERNEL_MAP,
                            LINEAR_MAP, MERGE_NEAREST, NAG, OGD, ONS, STOP, STORE, SUPPORT, WINDOW)



# ---------------------------------------------------------------------------------------------
# one member's round


@jit_inline
def _member_features(F, I, R, j, x, xi, xv, own, q, pre):
    """Member j's features of row x into its slot q of F at ``O_Z`` (a kernel, Fourier or linear
    map), computed when ``own`` (else they are its source member's, computed before).
    ``pre``: a kernel map's features of this row are already in slot q (:func:`_block_features`).
    A sparse row (``xi``, ``xv``: its non-zeros, x its dense copy) takes the maps' O(nnz) input
    side (:func:`_sparse`). Returns them."""
    mp = I[j, MAP]
    d = x.shape[0]
    k = I[j, K]
    z = F[I[j, O_Z] + q * k:I[j, O_Z] + (q + 1) * k]
    if own:
        if mp == KERNEL_MAP:
            if not pre:
                m = I[j, NL]
                LT = F[I[j, O_A]:I[j, O_A] + d * m].reshape((d, m))
                P = F[I[j, O_P]:I[j, O_P] + m * k].reshape((m, k))
                kb = F[I[j, O_KB]:I[j, O_KB] + m]
                kind = int(R[j, KIND])
                if _sparse(xi):
                    kernel_row_t_sparse(kind, R[j, KA], R[j, KB_], R[j, KC], LT, m, F[I[j, O_NRM]:I[j, O_NRM] + m],
                                        xi, xv, row_norm(kind, xv), kb)
                else:
                    kernel_row_t(kind, R[j, KA], R[j, KB_], R[j, KC], LT, m, x, kb)
                rows_axpy(P, kb, z)
        elif mp == FOURIER_MAP:
            D = k // 2
            UT = F[I[j, O_A]:I[j, O_A] + d * D].reshape((d, D))
            p = F[I[j, O_KB]:I[j, O_KB] + D]
            if _sparse(xi):
                sparse_axpy(UT, xi, xv, p)  # (bit for bit project_t on the dense row)
            else:
                project_t(UT, x, p)
            fourier_from_projections(p, 1.0 / math.sqrt(D), z)
        elif mp == GENERATED_FOURIER:  # the columns of the non-zeros, generated (a dense row: found here)
            D = k // 2
            p = F[I[j, O_KB]:I[j, O_KB] + D]
            C = I[j, NL]
            if _sparse(xi):
                nz, vals = xi, xv
            else:
                nz = np.flatnonzero(x)
                vals = x[nz]
            if C > 0:
                project_generated_cached(I[j, GSEED], I[j, GKIND], R[j, GSCALE], nz, vals, p,
                                         F[I[j, O_A]:I[j, O_A] + C * D].reshape((C, D)),
                                         F[I[j, O_A] + C * D:I[j, O_A] + C * (D + 1)])
            else:
                project_generated(I[j, GSEED], I[j, GKIND], R[j, GSCALE], nz, vals, p)
            fourier_from_projections(p, 1.0 / math.sqrt(D), z)
        else:  # LINEAR_MAP
            linear_features(x, k, I[j, UNMAP] != 0, z)
    elif mp == FOURIER_MAP or mp == GENERATED_FOURIER:  # directions twice the source's: the double angle
        o = I[I[j, SRC], O_Z] + q * k
        _double_angle(F[o:o + k], z)
    return z


@jit
def _sparse(xi):
    """Whether the row comes sparse: its non-zeros' indices given (a dense row comes with none; a
    sparse row without non-zeros is computed dense, on its dense copy of zeros)."""
    return xi.shape[0] > 0


@jit
def sparse_linear(I, j, x, xi):
    """Whether member j is a linear map of degree 1 with the OGD step on a sparse row: its
    features [u, 1] are never written, its decision and step run over the non-zeros and the bias
    (:func:`okl.components.maps.linear.linear_value_sparse`, ``linear_step_sparse``): O(nnz), where
    filling z costs O(d) (2^20 columns of hashed text)."""
    return I[j, MAP] == LINEAR_MAP and I[j, STEP] == OGD and I[j, K] == x.shape[0] + 1 and _sparse(xi)


@jit
def nag_features(F, I, j, x, xi, xv, q):
    """(indices, values) of the non-zero features of member j, a linear map with the NAG step (the
    only map that step takes): on a sparse row of degree 1 from its non-zeros (O(nnz)), else the
    non-zeros of its features [x, (products), 1], written to its slot q of F."""
    k = I[j, K]
    if k == x.shape[0] + 1 and _sparse(xi):
        return sparse_features(xi, xv, k, I[j, UNMAP] != 0)
    z = F[I[j, O_Z] + q * k:I[j, O_Z] + (q + 1) * k]
    linear_features(x, k, I[j, UNMAP] != 0, z)
    return nonzero_features(z)


@jit
def expansion_kernel(F, I, R, j, i, x, xi, xv, xn):
    """kappa(sv_i, x) for member j's stored row i: :func:`okl._compiled.kernel_value`, or for a
    sparse row (norm xn) :func:`okl._compiled.kernel_value_sparse` with the stored row's norm."""
    d = x.shape[0]
    o = I[j, O_A] + i * d
    kind, a, b, c = int(R[j, KIND]), R[j, KA], R[j, KB_], R[j, KC]
    if _sparse(xi):
        return kernel_value_sparse(kind, a, b, c, F[o:o + d], F[I[j, O_NRM] + i], xi, xv, xn)
    return kernel_value(kind, a, b, c, F[o:o + d], x)


@jit
def window_outputs(F, I, R, j, x, xi, xv, nk, out):
    """A window member's smoother on row x (:func:`okl.components.maps.window.window_decision`; a sparse
    row's distances from the stored rows' norms): returns the output (``nk`` = 0) or writes the K
    outputs to ``out``."""
    LT, Y, s = _window_state(F, I, j, x.shape[0])
    kind = int(R[j, KIND])
    if not _sparse(xi) or I[j, M] == 0:
        return window_decision(kind, R[j, KA], LT, Y, I[j, M], x, s, nk, out)
    m = I[j, M]
    distances_t_sparse(kind, LT, m, F[I[j, O_NRM]:I[j, O_NRM] + m], xi, xv, row_norm(kind, xv), s)
    return window_from_distances(R[j, KA], Y, m, s, nk, out)


@jit_inline
def one_output(F, I, R, j, x, xi, xv, own, q, pre, nk, out):
    """Member j's decision on row x into out[0] (one output): an expansion's kernel sum, the
    window's smoother, else w^T z on its features (:func:`_member_features`)."""
    mp = I[j, MAP]
    if mp == EXPANSION:
        alpha = F[I[j, O_W]:I[j, O_W] + I[j, BUDGET]]
        xn = row_norm(int(R[j, KIND]), xv)
        f = 0.0
        for i in range(min(I[j, M], I[j, BUDGET])):
            f += alpha[i] * expansion_kernel(F, I, R, j, i, x, xi, xv, xn)
        out[0] = f
    elif mp == WINDOW:
        out[0] = window_outputs(F, I, R, j, x, xi, xv, np.int64(0), out)
    elif mp == COLUMN_EXPANSION:  # (a sparse row: its dense copy x)
        B, d = I[j, BUDGET], x.shape[0]
        out[0] = expansion_value(int(R[j, KIND]), R[j, KA], R[j, KB_], R[j, KC],
                                 F[I[j, O_A]:I[j, O_A] + d * B].reshape((d, B)), F[I[j, O_W]:I[j, O_W] + B], I[j, M],
                                 x, F[I[j, O_KB]:I[j, O_KB] + B])
    elif I[j, STEP] == NAG:
        idx, u = nag_features(F, I, j, x, xi, xv, q)
        k = I[j, K]
        out[0] = nag_value(F[I[j, O_W]:I[j, O_W] + k], F[I[j, O_G]:I[j, O_G] + 2 * k + 1], idx, u)
    elif sparse_linear(I, j, x, xi):
        out[0] = linear_value_sparse(F[I[j, O_W]:I[j, O_W] + I[j, K]], xi, xv, I[j, UNMAP] != 0)
    else:
        z = _member_features(F, I, R, j, x, xi, xv, own, q, pre)
        out[0] = dot(F[I[j, O_W]:I[j, O_W] + I[j, K]], z)


@jit
def _block_features(F, I, R, X, r, nb, alive, bound):
    """The kernel-map features of rows r..r+nb-1 (nb <= 4, rows already checked) into slots
    0..nb-1 of every KERNEL_MAP member alive that computes its own, by
    :func:`okl._compiled.kernel_features_rows`: four rows a pass over the map, each entry summed
    over the landmarks in order from 0.0, bit for bit :func:`rows_axpy` on one row."""
    d = X.shape[1]
    for j in range(I.shape[0]):
        src = I[j, SRC]
        if alive[j] <= 0.0 or I[j, MAP] != KERNEL_MAP or (src != j and alive[src] > 0.0):
            continue
        k, m = I[j, K], I[j, NL]
        kernel_features_rows(int(R[j, KIND]), R[j, KA], R[j, KB_], R[j, KC],
                             F[I[j, O_A]:I[j, O_A] + d * m].reshape((d, m)), m,
                             F[I[j, O_P]:I[j, O_P] + m * k].reshape((m, k)), X[r:r + nb], bound,
                             F[I[j, O_KB]:I[j, O_KB] + 4 * m].reshape((4, m)),
                             F[I[j, O_Z]:I[j, O_Z] + nb * k].reshape((nb, k)))


@jit
def _double_angle(zs, z):
    """Fourier features of the directions 2U from those of U, zs = [cos p, sin p] / sqrt(D):
    z = [cos 2p, sin 2p] / sqrt(D) with cos 2p = (cos p - sin p)(cos p + sin p) and
    sin 2p = 2 sin p cos p (a few ulp from sin / cos of 2p, for 4 multiplications a feature
    instead of a range reduction)."""
    D = zs.shape[0] // 2
    r = math.sqrt(D)
    for i in range(D):
        c = zs[i]
        s = zs[D + i]
        z[i] = ((c - s) * (c + s)) * r
        z[D + i] = (2.0 * c * s) * r


@jit
def _window_state(F, I, j, d):
    """A window member's views in F: its stored rows transposed (d x B), their labels (B) and its
    work space (B)."""
    B = I[j, BUDGET]
    return (F[I[j, O_A]:I[j, O_A] + d * B].reshape((d, B)), F[I[j, O_W]:I[j, O_W] + B],
            F[I[j, O_KB]:I[j, O_KB] + B])


@jit
def _window_learn(F, I, R, j, x, y):
    """A window member stores row x with label / target (K outputs: class index) y, and its norm
    (:func:`okl._compiled.row_norm`, for sparse rows' distances)."""
    LT, Y, _ = _window_state(F, I, j, x.shape[0])
    F[I[j, O_NRM] + I[j, COUNTER]] = row_norm(int(R[j, KIND]), x)
    m, pos = window_store(LT, Y, I[j, M], I[j, COUNTER], x, y)
    I[j, M] = m
    I[j, COUNTER] = pos
    I[j, NSEEN] += 1


@jit_inline
def learn_one_output(F, I, R, j, x, xi, xv, y, out, q, nk, g):
    """Member j's step on row x with label/target y and its decision out[0] (one output; features
    in its slot q of F); returns what it needs from Python (NOTHING, TRANSITION or UPDATE: then
    nothing was learned)."""
    f = out[0]
    st = I[j, STEP]
    if st == STORE:
        _window_learn(F, I, R, j, x, y)
        return NOTHING
    lkind = I[j, LOSS]
    g = loss_derivative(lkind, f, y)
    if st == SUPPORT:
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
    k = I[j, K]
    w = F[I[j, O_W]:I[j, O_W] + k]
    if st == NAG:  # (its features again from the row: O(nnz), no slot kept)
        idx, u = nag_features(F, I, j, x, xi, xv, q)
        nag_step(w, F[I[j, O_G]:I[j, O_G] + 2 * k + 1], idx, u, g, R[j, ETA], I[j, NSEEN] + 1)
        I[j, NSEEN] += 1
        return NOTHING
    if sparse_linear(I, j, x, xi):
        if g != 0.0:
            linear_step_sparse(w, xi, xv, I[j, UNMAP] != 0, R[j, ETA] * g, lkind)
        I[j, NSEEN] += 1
        return NOTHING
    z = F[I[j, O_Z] + q * k:I[j, O_Z] + (q + 1) * k]
    if st == ONS:
        due, counter = update_round_due(g, I[j, COUNTER], I[j, NSEEN], I[j, RHO], I[j, MARGIN_COUNTER] != 0)
        I[j, COUNTER] = counter
        if due:
            return UPDATE
        if g != 0.0:  # (A^{-1}'s update deferred to the next step: Engine.sync applies it for Python)
            Ainv = F[I[j, O_G]:I[j, O_G] + k * k].reshape((k, k))
            o = I[j, O_U]
            ons_code_step_deferred(z, w, Ainv, -R[j, ETA] * g, CODE_PROJECTION_EPS, R[j, CB], F[o:o + k],
                                   F[o + k:o + k + pending_size(k)])
    elif g != 0.0:
        if st == ADAGRAD:
            adagrad_step(z, g, w, F[I[j, O_G]:I[j, O_G] + k], R[j, LR])
        else:  # OGD
            sub_scaled(w, ogd_step(R[j, ETA] * g, z, lkind), z)
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
    if not _sparse(xi):
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


# ---------------------------------------------------------------------------------------------
# entry points


@jit
def _outputs(I):
    """(K, nout): K = ``I[:, NOUT]`` (0: one output with labels -1/+1 or targets; K >= 1: K
    one-vs-rest outputs with class-index labels) and nout = max(K, 1) outputs per member."""
    K = I[0, NOUT] if I.shape[0] else 0
    return K, max(K, 1)


# The orchestration below is written once for both output kinds (``jit_inline``: typed inside its
# callers) and compiled for each kind with that kind's member functions: ``outputs(F, I, R, j, x,
# own, q, pre, nk, out)`` (member j's outputs on x into out) and ``learn(F, I, R, j, x, y, f, q, nk,
# g)`` (its step; f its outputs): :func:`predict_all_one` / :func:`learn_all_one` (one output) and
# ``predict_all_k`` / ``learn_all_k`` (K outputs, okl.engine.k_outputs), which the two compiled
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
        if alive[j] > 0.0 and I[j, MAP] != PY:
            outputs(F, I, R, j, x, xi, xv, src == j or alive[src] <= 0.0, q, pre, nk, d[j * nout:(j + 1) * nout])


@jit_inline
def _learn_all(F, I, R, x, xi, xv, y, d, alive, todo, q, g, learn):
    """Every engine member alive learns x (outputs d, features in slot q; g: work, nout); returns
    how many need Python (``todo``)."""
    nk, nout = _outputs(I)
    n = 0
    for j in range(I.shape[0]):
        todo[j] = NOTHING
        if alive[j] > 0.0 and I[j, MAP] != PY:
            todo[j] = learn(F, I, R, j, x, xi, xv, y, d[j * nout:(j + 1) * nout], q, nk, g)
            if todo[j] != NOTHING:
                n += 1
    return n


@jit
def predict_all_one(F, I, R, x, xi, xv, alive, d, q, pre):
    """:func:`_predict_all` with one output per member."""
    _predict_all(F, I, R, x, xi, xv, alive, d, q, pre, one_output)


@jit
def learn_all_one(F, I, R, x, xi, xv, y, d, alive, todo, q, g):
    """:func:`_learn_all` with one output per member."""
    return _learn_all(F, I, R, x, xi, xv, y, d, alive, todo, q, g, learn_one_output)


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
        if not row_ok(xv if _sparse(xi) else x, bound):  # (a sparse row: its non-zeros)
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
    time (:func:`_block_features`: the same values as one row at a time, so a row's decisions do
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
        _block_features(F, I, R, X, r, nb, alive, bound)
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


# ---------------------------------------------------------------------------------------------
# the layout (Python; rebuilt only when a member's arrays were replaced: a transition or an
# update round, a load)
