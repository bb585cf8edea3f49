"""The lean per-event path of NOGD, FOGD, SkeGD, FORKS, the linear learner and ``auto``: one
compiled call per method.

Why (issue 24): a single learner's round in ``run()`` costs 1.2-2.7 us on codrna; ``predict_one``
+ ``learn_one`` through the generic hooks cost 9-12 us, almost all of it Python (the row's bytes
as a cache key, a one-row scaling call, dictionary lookups, work-space checks, a separate
calibration call, and the whole generic ``inputs.advance`` in stage 1 and the width window). Here
everything these learners do with one row is one compiled call per method, from the second row
on (the width window's rows too: buffered, predicted by the running label mean):

* :func:`event_predict` -- check the row, map it through the input scale
  (:func:`okl.scaling.scale_row`, the arithmetic ``run()`` applies), the decision (the kernel
  expansion of stage 1, or the features z and w^T z of stage 2); it keeps a copy of the row, the
  round index ``n_seen`` and the decision next to the features;
* :func:`event_learn` -- the same for the row unless it is the row just predicted in the same
  round (a bitwise comparison with the copy: then nothing is computed again), then the learner's
  step (a support vector, or OGD / AdaGrad / the code's ONS), the update-round test of the
  sketched learners and the calibration's step. It returns (f, code): code >= 0 is a finished
  round (the learner's counter: ``m_`` in stage 1, ``counter_`` of the sketched learners); a
  negative code means nothing was learned yet: a refused row or label (the generic path takes
  the event and raises its message), or a transition / update round, which the learner's Python
  runs (:meth:`okl.runtime.events.EventPath.learn_round`).

Each call takes two arrays (a Numba dispatch costs ~45 ns per array argument): the row and one
float buffer ``F`` holding a header of sizes, constants and offsets (the slots below), copies of
the fixed parts of the map (landmarks or frequencies transposed, the projection, the input
centres), the work space, and the learner's mutable state: building a :class:`FastPlan` moves
the weights (or coefficients and support vectors), the AdaGrad sums or ONS inverse, the input
spreads and the calibration into ``F`` and makes the learner's attributes views of it. Their
values, shapes, model files and pickles are those of before; the plan itself lives in the
learner's event state (never saved or pickled), and every path other than these two calls that
changes the state (``run``, the generic path, a transition or update round, ``load``,
``check_state``, outputs) drops it first, so a plan never holds a stale map.

``auto`` (:class:`okl.engine.roots.AutoPlan`): the same row check and input scale, in a
small buffer T laid out like F's header (auto's spreads and calibration move into it), in front of
its engine's predict and learn, one compiled call per method too (the two per-event modes of
the engine's root, :mod:`okl.engine.roots`). Before it, auto's event went through
the generic hooks: the row's bytes as a cache key, a one-row scaling call in each method, the
calibration's separate call: ~8 us of Python on a 22 us event (codrna, stage 2;
docs/results/per-event-speed.md).

The arithmetic is that of the learners' own compiled code, called in the same order (kernel row
:func:`okl._compiled.kernel_row_t`, projection :func:`okl._compiled.rows_axpy`, Fourier
:func:`okl.components.maps.fourier.project_t`, expansion :func:`okl.components.maps.expansion.expansion_decision`,
steps :func:`okl.components.steps.adagrad.adagrad_step`, :func:`okl.components.steps.ons.ons_code_step`, ...), so
decisions equal the generic per-event path's bit for bit, and run()'s within rounding (run()
computes stage-2 features of a block with BLAS).
"""

from __future__ import annotations

import math
import weakref

import numpy as np
from numba import types

from okl._compiled import dot, kernel_row_t, loss_derivative, merge_into, ogd_step, row_ok, rows_axpy, sub_scaled
from okl._jit import jit, jit_for
from okl._validation import MAX_ABS_FEATURE
from okl.calibration import GAMMA, N_STATE, state_step as calibration_step
from okl.components.steps.update_rounds import update_round_due
from okl.kernels import WIDTH_WINDOW
from okl.components.maps.fourier import fourier_from_projections, project_t
from okl.components.steps.ons import CODE_PROJECTION_EPS, ons_code_step
from okl.components.maps.expansion import expansion_decision
from okl.components.maps.linear import linear_features
from okl.components.steps.adagrad import adagrad_step
from okl.components import (ADAGRAD, EVENT, EXPANSION, FOURIER_MAP, KERNEL_MAP, LINEAR_MAP, MERGE_NEAREST,
                                    OGD, STOP, WARMUP, Plan)
from okl.scaling import RULE_CODES, scale_row


#: the codes of :func:`event_learn` for "nothing learned yet": a refused row or label (the generic
#: path takes the event), an update round or the transition to run in Python; and "the width
#: window is full" (its last row is buffered)
BAD_ROW, BAD_LABEL, UPDATE_DUE, TRANSITION_DUE, WINDOW_DONE = -1, -2, -3, -4, -5

# input scales: none, else okl.scaling.RULE_CODES
NO_SCALE = 0

# header slots of F
(MAP, STEP, DIM, M, K, KKIND, KA, KB, KC, SCALE, LOSS, CLASSIFY, CAL, ETA, LR, CB, SHRINK, SKETCH, RHO, MARGIN,
 SEEN, FVAL, COUNTER, PENDING, O_W, O_G, O_SV, O_SPR, O_CAL, O_A, O_P, O_CEN, O_XS, O_XL, O_KB, O_Z,
 O_U, RULE, MERGE) = range(39)
HEADER = 39
_MAXF = 1.7976931348623157e308

_F = types.Array(types.float64, 1, "C")
# one explicit signature per call (a second one costs every call ~60 ns of dispatch): the row typed
# read-only, which writable rows convert to; any other row (a list, a strided or 2-D array,
# another dtype) is refused by the dispatcher with a TypeError and takes the generic path
_ROW = types.Array(types.float64, 1, "C", readonly=True)
_jit, _jit_for = jit, jit_for


@_jit
def _same_row(x, c):
    """x equals the stored copy c entry by entry, the sign of zeros included."""
    for j in range(x.shape[0]):
        if x[j] != c[j] or math.copysign(1.0, x[j]) != math.copysign(1.0, c[j]):
            return False
    return True


@_jit
def _scale(F, x, commit, xs):
    """xs = the row as the model sees it (:func:`okl.scaling.scale_row` with the learner's centres
    and spreads; x itself without a scale); ``commit`` stores the spreads x fixes."""
    d = x.shape[0]
    rule = F[SCALE]
    if rule == NO_SCALE:
        for j in range(d):
            xs[j] = x[j]
        return
    oc, os_ = int(F[O_CEN]), int(F[O_SPR])
    scale_row(x, F[oc:oc + d], F[os_:os_ + d], commit, int(rule), xs)
    if commit and F[PENDING] > 0.0:
        pending = 0
        for j in range(d):
            if F[os_ + j] == 0.0:
                pending += 1
        F[PENDING] = pending


@_jit
def _decide(F, xs):
    """f(xs) for the scaled row: the kernel expansion's sum, or w^T z with the features z."""
    d = xs.shape[0]
    m, k = int(F[M]), int(F[K])
    oa, okb, ow, oz = int(F[O_A]), int(F[O_KB]), int(F[O_W]), int(F[O_Z])
    kind = F[MAP]
    if kind == EXPANSION:
        osv = int(F[O_SV])
        return expansion_decision(int(F[KKIND]), F[KA], F[KB], F[KC], F[osv:osv + m * d].reshape((m, d)),
                                  F[ow:ow + m], min(int(F[COUNTER]), m), xs)
    z = F[oz:oz + k]
    if kind == LINEAR_MAP:  # z = [x, 1], degree 2 [x, products, 1] (okl.learners.linear)
        linear_features(xs, k, False, z)
    elif kind == KERNEL_MAP:
        op = int(F[O_P])
        kb = F[okb:okb + m]
        kernel_row_t(int(F[KKIND]), F[KA], F[KB], F[KC], F[oa:oa + d * m].reshape((d, m)), m, xs, kb)
        rows_axpy(F[op:op + m * k].reshape((m, k)), kb, z)
    else:
        project_t(F[oa:oa + d * m].reshape((d, m)), xs, F[okb:okb + m])
        fourier_from_projections(F[okb:okb + m], 1.0 / math.sqrt(m), z)
    return dot(F[ow:ow + k], z)


@_jit
def _window_decision(F, n):
    """The width window's decision (:meth:`okl.runtime.inputs.InputMap.warmup_decision`): the mean
    of the n labels buffered (exact in any order: they are -1 / +1), 0 under target centring
    (the caller adds the running mean)."""
    if F[CLASSIFY] == 0.0 or n == 0:
        return 0.0
    ow = int(F[O_W])
    s = 0.0
    for i in range(n):
        s += F[ow + i]
    return s / n


@_jit
def _predict(F, x, n):
    """:func:`event_predict` on a row of the learner's width."""
    d = x.shape[0]
    if not row_ok(x, MAX_ABS_FEATURE):
        return np.nan
    if F[MAP] == WARMUP:
        return _window_decision(F, n)
    oxs, oxl = int(F[O_XS]), int(F[O_XL])
    xs = F[oxs:oxs + d]
    _scale(F, x, False, xs)
    f = _decide(F, xs)
    for j in range(d):
        F[oxl + j] = x[j]
    F[SEEN] = n
    F[FVAL] = f
    return f


@_jit
def _learn(F, x, y, n):
    """:func:`event_learn` on a row of the learner's width."""
    d = x.shape[0]
    if F[CLASSIFY] != 0.0:
        if not (y == 1.0 or y == -1.0):
            return np.nan, BAD_LABEL
    elif not abs(y) <= _MAXF:
        return np.nan, BAD_LABEL
    if F[MAP] == WARMUP:  # InputMap.advance inside the window: the row and label are buffered
        if not row_ok(x, MAX_ABS_FEATURE) or n >= int(F[M]):
            return np.nan, BAD_ROW
        f = _window_decision(F, n)
        osv = int(F[O_SV]) + n * d
        for j in range(d):
            F[osv + j] = x[j]
        F[int(F[O_W]) + n] = y
        return f, (WINDOW_DONE if n + 1 == int(F[M]) else 0)
    oxs, oxl = int(F[O_XS]), int(F[O_XL])
    xs = F[oxs:oxs + d]
    cached = F[SEEN] == n and _same_row(x, F[oxl:oxl + d])
    F[SEEN] = -1.0
    if cached:  # the decision (and features) of predict_one: nothing was learned since
        f = F[FVAL]
        pending = F[PENDING]
        if pending > 0.0:
            _scale(F, x, True, xs)
            if F[PENDING] != pending:  # x fixed a spread: learn the row as run() maps it
                f = _decide(F, xs)
    else:
        if not row_ok(x, MAX_ABS_FEATURE):
            return np.nan, BAD_ROW
        _scale(F, x, True, xs)
        f = _decide(F, xs)
    lkind = int(F[LOSS])
    g = loss_derivative(lkind, f, y)
    counter = before = int(F[COUNTER])
    k, ow = int(F[K]), int(F[O_W])
    w = F[ow:ow + k]
    if F[MAP] == EXPANSION:  # the support step (okl.learners.kogd.expansion_rounds when it stops)
        if g != 0.0:
            B = int(F[M])
            osv = int(F[O_SV])  # (QKLMS's quantisation, or the merge-nearest rule when full)
            near = merge_into(int(F[KKIND]), F[KA], F[KB], F[KC], F[osv:osv + B * d].reshape((B, d)), counter, xs,
                              F[MERGE], F[RULE] == MERGE_NEAREST)
            if near >= 0:
                w[near] += -F[ETA] * g
            else:
                slot = counter
                if counter >= B:
                    if F[RULE] == STOP:
                        return f, TRANSITION_DUE
                    slot = counter % B  # replace the oldest row
                osv = int(F[O_SV]) + slot * d
                for j in range(d):
                    F[osv + j] = xs[j]
                w[slot] = -F[ETA] * g
                counter += 1
                F[COUNTER] = counter
    else:
        if F[SKETCH] != 0.0:
            due, counter = update_round_due(g, counter, n, int(F[RHO]), F[MARGIN] != 0.0)
            F[COUNTER] = counter
            if due:
                return f, UPDATE_DUE
        shrink = F[SHRINK]
        if shrink != 1.0:
            for j in range(k):
                w[j] *= shrink
        if g != 0.0:
            step = F[STEP]
            og, oz = int(F[O_G]), int(F[O_Z])
            z = F[oz:oz + k]
            if step == OGD:
                sub_scaled(w, ogd_step(F[ETA] * g, z, lkind), z)
            elif step == ADAGRAD:
                adagrad_step(z, g, w, F[og:og + k], F[LR])
            else:
                ou = int(F[O_U])
                ons_code_step(z, w, F[og:og + k * k].reshape((k, k)), -F[ETA] * g, CODE_PROJECTION_EPS, F[CB],
                              F[ou:ou + k])
    if F[CAL] != 0.0 and abs(f) <= _MAXF:
        oc = int(F[O_CAL])
        calibration_step(F[oc:oc + N_STATE], f, y > 0.0, GAMMA)
    return f, (counter + 1 if counter != before else 0)


def event_predict(F, x, n):
    """predict_one's decision for the row x in round n (NaN, nothing computed, when x has the
    wrong width or a value beyond the checks); keeps x, its scaled form, its features and the
    decision for :func:`event_learn`. (Both entry points are small and call their bodies: a
    large compiled entry costs every call ~40 ns more.)"""
    if x.shape[0] != int(F[DIM]):
        return np.nan
    return _predict(F, x, n)


def event_learn(F, x, y, n):
    """learn_one's round n on row x with label / target y (the residual under target centring):
    f before learning (predict_one's, when it ran on this row in this round), the step and the
    calibration's step (classification); returns (f, code): code 0, or the learner's counter + 1
    when the round changed it (F[COUNTER]: the support vectors of the expansion, the update-round
    counter of the sketched maps). Returns (NaN, BAD_ROW / BAD_LABEL) with nothing changed when x
    or y fails the checks, and (f, UPDATE_DUE / TRANSITION_DUE) before learning when the
    learner's Python takes the round (the scaled row is then in the work space)."""
    if x.shape[0] != int(F[DIM]):
        return np.nan, BAD_ROW
    return _learn(F, x, y, n)


#: id -> buffer of every live plan (a learner's arrays that are views of one are its own)
_BUFFERS: "weakref.WeakValueDictionary[int, np.ndarray]" = weakref.WeakValueDictionary()


def _own(a) -> bool:
    """Whether a state array can move into a plan's buffer: float64, C-contiguous, writable, and
    not a view of another live array (``auto``'s engine lays its members' arrays out in its own
    buffer and relies on sharing that memory), unless that array is a plan's buffer."""
    return isinstance(a, np.ndarray) and a.dtype == np.float64 and a.flags.c_contiguous and a.flags.writeable \
        and (not isinstance(a.base, np.ndarray) or _BUFFERS.get(id(a.base)) is a.base)


def _move(learner, attr: str, a: np.ndarray, F: np.ndarray, at: int) -> None:
    """Move the learner's state array ``a`` into the buffer F at ``at``: its attribute becomes a
    view of F (the same values and shape)."""
    view = F[at:at + a.size].reshape(a.shape)
    view[...] = a
    setattr(learner, attr, view)


def _input_part(learner, F: np.ndarray, lay: dict, spread, cal, classify: bool) -> None:
    """The header slots and parts of a plan's buffer F that the row check and input scale read
    (:func:`_scale`, :func:`_same_row`; ``lay`` gives the offsets of CEN, SPR, CAL, XS and XL):
    the width, the scale rule and its centres, the spreads still pending, the calibration; the
    learner's spreads and calibration state move in (views of F); F is registered as a plan's
    buffer."""
    d = learner.dim_
    rule = learner.inputs.scale_rule(learner) if spread is not None else None
    if spread is not None:
        if lay["CEN"] is not None:  # (None: the sparse plan, whose map has centre 0)
            F[lay["CEN"]:lay["CEN"] + d] = learner.scale_center_
        _move(learner, "scale_spread_", spread, F, lay["SPR"])
    if cal is not None:
        _move(learner, "calibration_", cal, F, lay["CAL"])
    head = {DIM: d, SCALE: NO_SCALE if rule is None else RULE_CODES[rule],
            CLASSIFY: classify, CAL: cal is not None, SEEN: -1.0,
            PENDING: 0 if spread is None else int(np.count_nonzero(spread == 0.0)),
            **{slot: lay[name] or 0 for slot, name in ((O_SPR, "SPR"), (O_CAL, "CAL"), (O_CEN, "CEN"), (O_XS, "XS"),
                                                        (O_XL, "XL"))}}
    for slot, value in head.items():
        F[slot] = float(value)
    _BUFFERS[id(F)] = F


class FastPlan:
    """A started learner's compiled per-event state (see the module docstring), for
    ``event_predict(F, x, n) -> f`` and ``event_learn(F, x, y, n) -> (f, code)``. ``center``: the
    caller centres targets; ``counts``: the name of the learner's counter that ``code`` - 1 is
    when > 0 (``m_``, ``counter_``), or None.

    Building it moves the learner's mutable state arrays (weights or coefficients, support
    vectors, step state, input spreads, calibration) into the buffer: the learner's attributes
    become views of it (the same values and shapes, saved and pickled as before), so each call
    takes two arrays."""

    __slots__ = ("F", "center", "counts", "d", "predict", "learn")

    def __init__(self, learner, plan: Plan, moved: dict, m: int, k: int):
        d = learner.dim_
        kind = plan.map_code
        lay, size = {}, HEADER

        def put(name, n):
            nonlocal size
            lay[name] = size
            size += int(n)

        A = moved["A"]
        linear = kind in (KERNEL_MAP, FOURIER_MAP)
        for name, n in (("W", k), ("G", 0 if A is None else A.size), ("SV", 0 if linear else m * d),
                        ("A", d * m if linear else 0), ("P", m * k if kind == KERNEL_MAP else 0),
                        ("CEN", d), ("SPR", d), ("CAL", N_STATE), ("XS", d), ("XL", d), ("KB", m), ("Z", k),
                        ("U", k)):
            put(name, n)
        F = np.zeros(size)
        if kind == KERNEL_MAP:
            F[lay["A"]:lay["A"] + d * m] = plan.LT.ravel()
            F[lay["P"]:lay["P"] + m * k] = plan.P.ravel()
        elif kind == FOURIER_MAP:
            F[lay["A"]:lay["A"] + d * m] = plan.UT.ravel()
        kk, ka, kb, kc = plan.kernel
        loss = learner.events.loss(learner)
        counts = plan.counts
        head = {MAP: kind, STEP: plan.step_code, RULE: plan.rule_code, MERGE: plan.merge_threshold, M: m, K: k,
                KKIND: kk, KA: ka, KB: kb,
                KC: kc, LOSS: loss.kind, ETA: plan.eta, LR: plan.lr, CB: plan.C, SHRINK: plan.shrink,
                SKETCH: plan.rho is not None, RHO: 1 if plan.rho is None else plan.rho, MARGIN: plan.margin,
                FVAL: 0.0, COUNTER: getattr(learner, counts) if counts else 0,
                **{slot: lay[name] for slot, name in (
                    (O_W, "W"), (O_G, "G"), (O_SV, "SV"), (O_A, "A"), (O_P, "P"), (O_KB, "KB"), (O_Z, "Z"),
                    (O_U, "U"))}}
        for slot, value in head.items():
            F[slot] = float(value)
        _input_part(learner, F, lay, moved["scale_spread_"], moved["calibration_"], loss.task == "classification")
        # the learner's state moves in: its attributes become views of F
        for key, slot in (("w", "W"), ("A", "G"), ("SV", "SV")):
            if moved[key] is not None:
                _move(learner, getattr(plan, key), moved[key], F, lay[slot])
        self.F, self.d = F, d
        self.predict, self.learn = compiled_entries()
        self.center = learner.heads.centers_targets(learner)
        self.counts = counts

    @property
    def xs(self) -> np.ndarray:
        """The scaled row of the last call (what the learner's Python transition or update round
        takes)."""
        o = int(self.F[O_XS])
        return self.F[o:o + self.d]

    @property
    def counter(self) -> int:
        """The learner's counter (``counts``) as the last call left it."""
        return int(self.F[COUNTER])


def build(learner, plan: Plan | None) -> FastPlan | None:
    """The learner's :class:`FastPlan` for its :class:`~okl.components.Plan`, or None: no
    plan, one this path does not run, or state arrays that cannot move into a buffer (see
    :func:`_own`; the learner keeps the generic path)."""
    if plan is None or not plan.runs_on(EVENT):
        return None
    classify = learner.events.loss(learner).task == "classification"
    moved = {key: getattr(learner, getattr(plan, key)) if getattr(plan, key) else None for key in ("w", "A", "SV")}
    moved.update(scale_spread_=learner.scale_spread_, calibration_=learner.calibration_ if classify else None)
    if not all(a is None or _own(a) for a in moved.values()):
        return None
    d, w, A, cal = learner.dim_, moved["w"], moved["A"], moved["calibration_"]
    kind = plan.map_code
    if kind in (EXPANSION, WARMUP):
        m = k = plan.budget if kind == EXPANSION else WIDTH_WINDOW
        ok = moved["SV"] is not None and moved["SV"].shape == (m, d) and w is not None and w.shape == (m,)
    else:
        if kind == KERNEL_MAP:
            m, k = plan.P.shape
        elif kind == FOURIER_MAP:
            m, k = plan.UT.shape[1], 2 * plan.UT.shape[1]
        else:  # LINEAR_MAP: z = [x, 1] or [x, products, 1]
            m, k = 0, plan.features
        step = plan.step_code
        ok = w is not None and w.shape == (k,) and (
            step == OGD or A is not None and A.shape == ((k,) if step == ADAGRAD else (k, k)))
    ok = ok and (cal is None or cal.shape == (1, N_STATE)) and (
        moved["scale_spread_"] is None or moved["scale_spread_"].shape == (d,))
    if not ok:
        return None
    return FastPlan(learner, plan, moved, m, k)


_COMPILED = None


def compiled_entries():
    """(event_predict, event_learn) compiled for their one signature each (loaded from Numba's
    cache), each :class:`FastPlan`'s ``predict`` and ``learn``: at the first plan of the process rather
    than at import (the module's import measured 77 ms -> 4 ms: every ``import okl`` and command
    would pay it). The module-level :func:`event_predict` / :func:`event_learn` are their Python
    sources."""
    global _COMPILED
    if _COMPILED is None:
        _COMPILED = (_jit_for([types.float64(_F, _ROW, types.int64)])(event_predict),
                     _jit_for([types.Tuple((types.float64, types.int64))(_F, _ROW, types.float64, types.int64)])(
                         event_learn))
    return _COMPILED
