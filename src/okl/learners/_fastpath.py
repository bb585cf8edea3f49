"""The lean per-event path of NOGD, FOGD, SkeGD and FORKS: one compiled call per method.

Why: a single learner's round in ``run()`` costs 1.2-2.4 us on codrna; ``predict_one`` +
``learn_one`` through the generic hooks cost 9-12 us, almost all of it Python (the row's bytes as
a cache key, a one-row scaling call, dictionary lookups, work-space checks, a separate
calibration call). Here everything a started learner does with one row is one compiled call:

* :func:`event_predict` -- check the row, map it through the input scale
  (:func:`okl.scaling.scale_row`, the arithmetic ``run()`` applies), its features and the
  decision w^T z; it keeps a copy of the row and the round index ``n_seen`` next to the features;
* :func:`event_learn` -- the same for the row unless it is the row just predicted in the same
  round (then the features are reused), then the learner's step, the update-round test of the
  sketched learners and the calibration's step. It returns (f, code): code >= 0 is a finished
  round (the update-round counter), a negative code means nothing was learned yet (a refused row
  or label: the generic path takes over and raises its message) or an update round is due (the
  learner's Python ``_update_round`` runs it).

Every array the calls read besides the learner's own mutable state (its weights, the AdaGrad sums
or the ONS inverse, the input spreads and the calibration) lives in one float buffer ``F``: a
header of sizes, constants and offsets (the slots below), copies of the map (landmarks or
frequencies transposed, the projection) and the work space. :class:`FastPlan` builds it from a
learner's ``_fast_spec()``; it is kept in the learner's event state (never saved or pickled) and
dropped with the event cache whenever a path other than these two calls changes the state (its
copies of the map and the identities of the state arrays are then stale).

The arithmetic is that of the learners' own compiled loops, called in the same order (kernel row
:func:`okl._compiled.kernel_row_t`, projection :func:`okl._compiled.rows_axpy`, Fourier
:func:`okl.learners.fogd._project_t`, steps :func:`okl.learners.nogd.adagrad_step`,
:func:`okl.learners.forks.ons_code_step`, ...), so decisions equal the generic per-event path's bit
for bit, and run()'s within rounding.
"""

from __future__ import annotations

import functools
import math

import numba as nb
import numpy as np
from numba import types

from okl._compiled import dot, kernel_row_t, loss_derivative, ogd_step, row_ok, rows_axpy, sub_scaled
from okl._validation import MAX_ABS_FEATURE
from okl.calibration import GAMMA, _step as calibration_step
from okl.learners._sketched import update_round_due
from okl.learners.fogd import _fourier_from_projections, _project_t
from okl.learners.events import BAD_LABEL, BAD_ROW, UPDATE_DUE
from okl.learners.forks import CODE_PROJECTION_EPS, ons_code_step
from okl.learners.nogd import adagrad_step
from okl.scaling import scale_row

# feature maps and steps (``_fast_spec``'s "map" and "step")
KERNEL_MAP, FOURIER_MAP = 0, 1
OGD, ADAGRAD, ONS = 0, 1, 2
MAPS = {"kernel": KERNEL_MAP, "fourier": FOURIER_MAP}
STEPS = {"ogd": OGD, "adagrad": ADAGRAD, "ons": ONS}
# input scales
NO_SCALE, SYMLOG, RANGE = 0, 1, 2

# header slots of F
(MAP, STEP, DIM, M, K, KKIND, KA, KB, KC, SCALE, LOSS, CLASSIFY, CAL, ETA, LR, CB, SHRINK, SKETCH, RHO, MARGIN,
 SEEN, COUNTER, PENDING, O_A, O_P, O_CEN, O_SPR, O_XS, O_XL, O_KB, O_Z, O_U) = range(32)
HEADER = 32

_F = types.Array(types.float64, 1, "C")
_F2 = types.Array(types.float64, 2, "C")
_ROWS = (_F, types.Array(types.float64, 1, "C", readonly=True))
# explicit signatures: any other input (a list, a strided or 2-D array, another dtype) is refused
# by the dispatcher with a TypeError and takes the generic path
_jit = nb.njit(cache=True, fastmath=False, nogil=True)


def _jit_for(sigs):
    return nb.njit(sigs, cache=True, fastmath=False, nogil=True)


@_jit
def _same_row(x, c):
    """x equals the stored copy c entry by entry, the sign of zeros included."""
    for j in range(x.shape[0]):
        if x[j] != c[j] or math.copysign(1.0, x[j]) != math.copysign(1.0, c[j]):
            return False
    return True


@_jit
def _scale(F, x, spread, commit, xs):
    """xs = the row as the model sees it (:func:`okl.scaling.scale_row` with the stored centres
    and ``spread``; x itself without a scale)."""
    d = x.shape[0]
    rule = F[SCALE]
    if rule == NO_SCALE:
        for j in range(d):
            xs[j] = x[j]
        return
    o = int(F[O_CEN])
    scale_row(x, F[o:o + d], spread, commit, rule == SYMLOG, xs)


@_jit
def _features(F, xs, w, z):
    """The features z of the scaled row xs; returns w^T z."""
    d = xs.shape[0]
    m = int(F[M])
    if F[MAP] == KERNEL_MAP:
        k = int(F[K])
        oa, op, okb = int(F[O_A]), int(F[O_P]), int(F[O_KB])
        kb = F[okb:okb + m]
        kernel_row_t(int(F[KKIND]), F[KA], F[KB], F[KC], F[oa:oa + d * m].reshape((d, m)), m, xs, kb)
        rows_axpy(F[op:op + m * k].reshape((m, k)), kb, z)
    else:
        oa, okb = int(F[O_A]), int(F[O_KB])
        _project_t(F[oa:oa + d * m].reshape((d, m)), xs, F[okb:okb + m])
        _fourier_from_projections(F[okb:okb + m], 1.0 / math.sqrt(m), z)
    return dot(w, z)


@_jit_for([types.float64(_F, _F, X, types.int64) for X in _ROWS])
def event_predict(F, w, x, n):
    """predict_one's decision w^T z(x) for the row x in round n (NaN, nothing computed, when x
    has the wrong width or a value beyond the checks); keeps x, its scaled form and features."""
    d = int(F[DIM])
    if x.shape[0] != d or not row_ok(x, MAX_ABS_FEATURE):
        return np.nan
    oxs, oxl, oz = int(F[O_XS]), int(F[O_XL]), int(F[O_Z])
    xs = F[oxs:oxs + d]
    _scale(F, x, F[int(F[O_SPR]):int(F[O_SPR]) + d], False, xs)
    f = _features(F, xs, w, F[oz:oz + int(F[K])])
    xl = F[oxl:oxl + d]
    for j in range(d):
        xl[j] = x[j]
    F[SEEN] = n
    return f


@_jit_for([types.Tuple((types.float64, types.int64))(_F, _F, _F2, _F, _F2, X, types.float64, types.int64,
                                                     types.int64) for X in _ROWS])
def event_learn(F, w, A, spread, cal, x, y, n, counter):
    """learn_one's round n on row x with label / target y (the residual under target centring):
    f = w^T z(x) before learning, then the step (A: the AdaGrad sums as one row, or the ONS
    inverse), the calibration's step (classification), and returns (f, counter). Returns
    (NaN, BAD_ROW / BAD_LABEL) with nothing changed when x or y fails the checks, and
    (f, UPDATE_DUE) before learning on a sketched learner's update round (the counter in
    F[COUNTER], the scaled row in the work space)."""
    d = int(F[DIM])
    if x.shape[0] != d:
        return np.nan, BAD_ROW
    if F[CLASSIFY] != 0.0:
        if not (y == 1.0 or y == -1.0):
            return np.nan, BAD_LABEL
    elif not abs(y) <= 1.7976931348623157e308:
        return np.nan, BAD_LABEL
    oxs, oxl, oz, ospr = int(F[O_XS]), int(F[O_XL]), int(F[O_Z]), int(F[O_SPR])
    k = int(F[K])
    xs, z = F[oxs:oxs + d], F[oz:oz + k]
    cached = F[SEEN] == n and _same_row(x, F[oxl:oxl + d])
    F[SEEN] = -1.0
    if not cached:
        if not row_ok(x, MAX_ABS_FEATURE):
            return np.nan, BAD_ROW
        _scale(F, x, spread, True, xs)
        _features(F, xs, w, z)
    elif F[PENDING] > 0.0:
        _scale(F, x, spread, True, xs)  # a spread this row fixes is stored (the features stay)
    if F[PENDING] > 0.0:  # the copy predict_one reads follows the stored spreads
        pending = 0
        for j in range(d):
            F[ospr + j] = spread[j]
            if spread[j] == 0.0:
                pending += 1
        F[PENDING] = pending
    f = dot(w, z)
    lkind = int(F[LOSS])
    g = loss_derivative(lkind, f, y)
    if F[SKETCH] != 0.0:
        due, counter = update_round_due(g, counter, n, int(F[RHO]), F[MARGIN] != 0.0)
        if due:
            F[COUNTER] = counter
            return f, UPDATE_DUE
    shrink = F[SHRINK]
    if shrink != 1.0:
        for j in range(k):
            w[j] *= shrink
    if g != 0.0:
        step = F[STEP]
        if step == OGD:
            sub_scaled(w, ogd_step(F[ETA] * g, z, lkind), z)
        elif step == ADAGRAD:
            adagrad_step(z, g, w, A[0], F[LR])
        else:
            ou = int(F[O_U])
            ons_code_step(z, w, A, -F[ETA] * g, CODE_PROJECTION_EPS, F[CB], F[ou:ou + k])
    if F[CAL] != 0.0 and abs(f) <= 1.7976931348623157e308:
        calibration_step(cal[0], f, y > 0.0, GAMMA)
    return f, counter


_DUMMY2 = np.zeros((1, 1))


class FastPlan:
    """A started learner's compiled per-event calls, bound to its current arrays (see the module
    docstring): ``predict(x, n) -> f`` and ``learn(x, y, n, counter) -> (f, code)``; ``center``
    and ``counts`` say whether the caller centres targets and keeps ``counter_``."""

    __slots__ = ("F", "predict", "learn", "center", "counts", "d")

    def __init__(self, learner, spec: dict):
        d = learner.dim_
        w = spec["w"]
        A = spec.get("A")
        A = _DUMMY2 if A is None else (A if A.ndim == 2 else A.reshape(1, -1))
        spread = learner.scale_spread_
        cal = learner.calibration_
        classify = learner._event_loss().task == "classification"
        lay, size = {}, HEADER

        def put(name, n):
            nonlocal size
            lay[name] = size
            size += int(n)

        kind = MAPS[spec["map"]]
        if kind == KERNEL_MAP:
            LT, P = spec["LT"], spec["P"]
            m, k = P.shape
            put("A", d * m)
            put("P", m * k)
        else:
            UT = spec["UT"]
            m, k = UT.shape[1], 2 * UT.shape[1]
            put("A", d * m)
            lay["P"] = 0
        for name, n in (("CEN", d), ("SPR", d), ("XS", d), ("XL", d), ("KB", m), ("Z", k), ("U", k)):
            put(name, n)
        F = np.zeros(size)
        rule = learner._scale_rule() if spread is not None else None
        if kind == KERNEL_MAP:
            F[lay["A"]:lay["A"] + d * m] = LT.ravel()
            F[lay["P"]:lay["P"] + m * k] = P.ravel()
            kk, ka, kb, kc = spec["kernel"]
        else:
            F[lay["A"]:lay["A"] + d * m] = UT.ravel()
            kk, ka, kb, kc = 0, 0.0, 0.0, 0.0
        if spread is not None:
            F[lay["CEN"]:lay["CEN"] + d] = learner.scale_center_
            F[lay["SPR"]:lay["SPR"] + d] = spread
        head = {MAP: kind, STEP: STEPS[spec["step"]], DIM: d, M: m, K: k, KKIND: kk, KA: ka, KB: kb, KC: kc,
                SCALE: NO_SCALE if rule is None else (SYMLOG if rule == "symlog" else RANGE),
                LOSS: learner._event_loss().kind, CLASSIFY: classify, CAL: classify and cal is not None,
                ETA: spec.get("eta", 0.0), LR: spec.get("lr", 0.0), CB: spec.get("C", 0.0),
                SHRINK: spec.get("shrink", 1.0), SKETCH: "rho" in spec, RHO: spec.get("rho", 1),
                MARGIN: spec.get("margin", False), SEEN: -1.0, COUNTER: 0.0,
                PENDING: 0 if spread is None else int(np.count_nonzero(spread == 0.0)),
                O_A: lay["A"], O_P: lay["P"], O_CEN: lay["CEN"], O_SPR: lay["SPR"], O_XS: lay["XS"],
                O_XL: lay["XL"], O_KB: lay["KB"], O_Z: lay["Z"], O_U: lay["U"]}
        for slot, value in head.items():
            F[slot] = float(value)
        self.F, self.d = F, d
        self.center = learner._centers_targets()
        self.counts = "rho" in spec
        self.predict = functools.partial(event_predict, F, w)
        self.learn = functools.partial(event_learn, F, w, A, F if spread is None else spread,
                                       cal if F[CAL] else _DUMMY2)

    @property
    def xs(self) -> np.ndarray:
        """The scaled row of the last call (what the learner's Python update round takes)."""
        o = int(self.F[O_XS])
        return self.F[o:o + self.d]

    @property
    def counter(self) -> int:
        """The update-round counter after a round that returned UPDATE_DUE."""
        return int(self.F[COUNTER])


def _usable(a) -> bool:
    """Whether a state array can be bound to the compiled calls (float64, C-contiguous, writable:
    the calls' signatures; anything else keeps the learner on the generic path)."""
    return a is None or (isinstance(a, np.ndarray) and a.dtype == np.float64 and a.flags.c_contiguous
                         and a.flags.writeable)


def build(learner, spec: dict | None) -> FastPlan | None:
    """The learner's :class:`FastPlan` for its ``_fast_spec()``, or None (no spec, or state arrays
    the compiled calls cannot take)."""
    if spec is None or not all(_usable(a) for a in (spec["w"], spec.get("A"), learner.scale_spread_,
                                                     learner.calibration_)) or spec["w"].ndim != 1:
        return None
    return FastPlan(learner, spec)
