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

The map's decision and the step are the components' per-event functions through the generated
dispatch (:func:`okl.components.dispatch.event_decision`, :func:`~okl.components.dispatch.event_step`;
the header's slots: :mod:`okl.components.header`): this module names no component, and the
buffer's parts come from each map's ``event_layout`` and step's ``event_state``.

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

from okl._compiled import loss_derivative, row_ok
from okl._jit import jit, jit_for
from okl._validation import MAX_ABS_FEATURE
from okl.calibration import GAMMA, N_STATE, state_step as calibration_step
from okl.components import EVENT, MAPS, STEPS, Plan
from okl.components.dispatch import event_decision, event_step, event_window, event_window_decision, event_window_learn
from okl.components.header import (BAD_LABEL, BAD_ROW, CAL, CB, CLASSIFY, COUNTER, DIM, ETA, FVAL, HEADER, K, KA, KB,
                                   KC, KKIND, LOSS, LR, M, MAP, MARGIN, MERGE, O_A, O_CAL, O_CEN, O_G, O_KB, O_P,
                                   O_SPR, O_SV, O_U, O_W, O_XL, O_XS, O_Z, PENDING, RHO, RULE, SCALE, SEEN, SHRINK,
                                   SKETCH, STEP, TRANSITION_DUE, UPDATE_DUE, WINDOW_DONE)
from okl.scaling import RULE_CODES, scale_row

__all__ = ["BAD_LABEL", "BAD_ROW", "TRANSITION_DUE", "UPDATE_DUE", "WINDOW_DONE", "FastPlan", "build", "event_learn",
           "event_predict"]

# input scales: none, else okl.scaling.RULE_CODES
NO_SCALE = 0

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
def _predict(F, x, n):
    """:func:`event_predict` on a row of the learner's width."""
    d = x.shape[0]
    if not row_ok(x, MAX_ABS_FEATURE):
        return np.nan
    if event_window(F):
        return event_window_decision(F, n)
    oxs, oxl = int(F[O_XS]), int(F[O_XL])
    xs = F[oxs:oxs + d]
    _scale(F, x, False, xs)
    f = event_decision(F, xs)
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
    if event_window(F):  # InputMap.advance inside the window: the row and label are buffered
        return event_window_learn(F, x, y, n)
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
                f = event_decision(F, xs)
    else:
        if not row_ok(x, MAX_ABS_FEATURE):
            return np.nan, BAD_ROW
        _scale(F, x, True, xs)
        f = event_decision(F, xs)
    lkind = int(F[LOSS])
    g = loss_derivative(lkind, f, y)
    before = int(F[COUNTER])
    code = event_step(F, xs, g, lkind, n)
    if code < 0:
        return f, code
    counter = int(F[COUNTER])
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

    __slots__ = ("F", "center", "counts", "d", "predict", "learn", "direct")

    def __init__(self, learner, plan: Plan, moved: dict, m: int, k: int, fixed: dict):
        d = learner.dim_
        lay, size = {}, HEADER

        def put(name, n):
            nonlocal size
            lay[name] = size
            size += int(n)

        A, SV = moved["A"], moved["SV"]
        for name, n in (("W", k), ("G", 0 if A is None else A.size), ("SV", 0 if SV is None else m * d),
                        ("A", fixed["A"].size if "A" in fixed else 0), ("P", fixed["P"].size if "P" in fixed else 0),
                        ("CEN", d), ("SPR", d), ("CAL", N_STATE), ("XS", d), ("XL", d), ("KB", m), ("Z", k),
                        ("U", k)):
            put(name, n)
        F = np.zeros(size)
        for name, a in fixed.items():  # (copies: the map is fixed in a stage)
            F[lay[name]:lay[name] + a.size] = a.ravel()
        kk, ka, kb, kc = plan.kernel
        loss = learner.events.loss(learner)
        counts = plan.counts
        head = {MAP: plan.map_code, STEP: plan.step_code, RULE: plan.rule_code, MERGE: plan.merge_threshold, M: m, K: k,
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
        self.direct = False  # (set by the per-event path: learn_one may call ``learn`` itself)

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
    d, w, A, SV, cal = learner.dim_, moved["w"], moved["A"], moved["SV"], moved["calibration_"]
    m, k, fixed = MAPS[plan.map].event_layout(plan)
    state = STEPS[plan.step].event_state
    shape = None if state is None else state(k)
    ok = w is not None and w.shape == (k,) and (plan.SV is None or SV is not None and SV.shape == (m, d)) and (
        shape is None or A is not None and A.shape == shape)
    ok = ok and (cal is None or cal.shape == (1, N_STATE)) and (
        moved["scale_spread_"] is None or moved["scale_spread_"].shape == (d,))
    if not ok:
        return None
    return FastPlan(learner, plan, moved, m, k, fixed)


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
