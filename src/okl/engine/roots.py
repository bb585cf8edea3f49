"""The compiled roots of ``auto``'s engine (one call for every path, one per output kind) and
``auto``'s paths into them (:class:`EnginePaths`, :class:`AutoPlan`).

Every compiled path of ``auto`` -- blocks of rows (``run``, ``learn_many``, ``okl stream``, the
width window's buffered rows), the per-event plan (:class:`AutoPlan`: ``predict_one`` /
``learn_one`` behind the row check and input scale of :mod:`okl.engine.fastpath`) and the
generic per-event path (members outside the engine) -- is one compiled function, :func:`engine_one`
(one output: labels -1/+1 or targets) or :func:`engine_k` (K one-vs-rest outputs), with a ``mode``
argument. The orchestration of :mod:`okl.engine.core` is inlined into each of the two with the
member functions of its output kind.

Why one root (issue 34, docs/results/startup-compile.md): Numba compiles every function a root
calls into the root's machine code again, so each separate entry point (blocks, predict_one,
learn_one, each with its wrappers) costs a cold start the optimisation and code generation of the
whole engine again: the first 60 events of a River stream compiled the block path (for the width
window's rows) and both per-event calls, 31.7 s against 16.8 s for a ``run()``. One root per
output kind compiles the engine once for every path, and a stream with one output never compiles
the K-output code. The row's decisions are the same arithmetic whichever mode computes them.

Arguments (fixed first, so a plan binds them once; Numba's dispatch costs ~45 ns an array):
``mode``, the engine arrays ``F, I, R, S``, the plan's tail ``T`` (a dummy for the block and generic
modes), the block ``X, Y, D, out`` (dummies for the per-event modes), ``todo``, ``bound`` (the
largest absolute feature value), ``classification``, ``r0`` (the first row of a block; the generic
learn: 1 when the features of x are those of the generic predict), then the row ``x``, its label
``y`` and the round ``n``. Returns (a, b, f):

* ``ROWS``: (rows done up to, members needing Python, 0.0) -- :func:`okl.engine.core.engine_rows`;
* ``PREDICT`` / ``LEARN`` (the generic path; x already scaled): (ok, members needing Python, the
  mixture's first output) -- :func:`okl.engine.core.engine_event` without / with learning;
* ``EVENT_PREDICT`` / ``EVENT_LEARN`` (the plan; x raw): (code, 0, f) as
  :func:`okl.engine.fastpath.event_predict` / ``event_learn``: code >= 0 the members needing
  Python (``todo``), else BAD_ROW / BAD_LABEL with nothing learned; f NaN when the event goes to
  the generic path;
* ``SPARSE_ROWS``: ``ROWS`` on CSR rows (``Xp, Xi, Xv``; ``X`` the engine's work row) --
  :func:`okl.engine.core.engine_sparse_rows`;
* ``SPARSE_EVENT_PREDICT`` / ``SPARSE_EVENT_LEARN`` (the sparse plan; one raw CSR row in ``Xp, Xi,
  Xv``, ``X`` the work row its scaled non-zeros are written into and cleared from): as
  ``EVENT_PREDICT`` / ``EVENT_LEARN``, in O(nnz) besides the members' own work.
"""

from __future__ import annotations

import functools
import math
import os
import subprocess
import sys

import numpy as np
from numba import types

from okl._compiled import row_ok
from okl._jit import compiling, is_cached, jit_inline
from okl._validation import MAX_ABS_FEATURE
from okl.calibration import GAMMA, N_STATE, state_step as calibration_step
from okl.engine.aggregation import stack_learn, stack_predict
from okl._sparse import SparseRows
from okl.components.columns import I_COLS, R_COLS
from okl.engine.core import (engine_event, engine_rows, engine_sparse_rows, learn_all_dictionaries, learn_all_k,
                             learn_all_one, predict_all_dictionaries, predict_all_k, predict_all_one, state_size)
from okl.components.header import (BAD_LABEL, BAD_ROW, CAL, CLASSIFY, DIM, HEADER, K, O_CAL, O_SPR, O_XL, O_XS,
                                   PENDING, SCALE, SEEN)
from okl.engine.fastpath import (_F, _MAXF, _ROW, NO_SCALE, _input_part, _jit, _jit_for, _own, _same_row, _scale)
from okl.scaling import scaled_value

_I64 = np.dtype(np.int64)

ROWS, PREDICT, LEARN, EVENT_PREDICT, EVENT_LEARN, SPARSE_ROWS, SPARSE_EVENT_PREDICT, SPARSE_EVENT_LEARN = range(8)

#: the sparse plan's tail (:class:`AutoPlan` with ``sparse``): after the header of
#: :mod:`okl.engine.fastpath`, the number of non-zeros of the last predicted row (-1: none kept) and
#: the offsets of its indices and values (kept while it has at most :data:`LAST_ROW_NONZEROS`)
LAST_N, O_LAST_I, O_LAST_V = HEADER, HEADER + 1, HEADER + 2
SPARSE_HEADER = HEADER + 3
#: the most non-zeros of a row that learn_one can recognise as predict_one's (and so learn from its
#: features without computing them again); a row with more is computed again
LAST_ROW_NONZEROS = 1 << 14


@_jit
def _label_ok(T, y):
    """The label passes learn_one's check: a class index below K (K outputs), -1 or +1
    (classification), a finite target within the bound (regression)."""
    nk = T[K]
    if nk > 0.0:
        return 0.0 <= y < nk and y == math.floor(y)
    if T[CLASSIFY] != 0.0:
        return y == 1.0 or y == -1.0
    return abs(y) <= _MAXF


@_jit
def _event_start(T, x, y, n, predict):
    """A per-event mode's checks and input scale before the engine (T: the plan's tail): returns
    (code, have) -- code BAD_ROW / BAD_LABEL when the row (width, values) or the label fails the
    checks (nothing changed), else 0 with the scaled row in T's work space; ``have``: learning the
    row predict_one just computed (its features and outputs are still in the engine)."""
    d = x.shape[0]
    if d != int(T[DIM]):
        return BAD_ROW, False
    if not predict and not _label_ok(T, y):
        return BAD_LABEL, False
    oxs, oxl = int(T[O_XS]), int(T[O_XL])
    xs = T[oxs:oxs + d]
    have = not predict and T[SEEN] == n and _same_row(x, T[oxl:oxl + d])
    if not predict:
        T[SEEN] = -1.0
    if have:  # the features and outputs of predict_one: nothing was learned since
        pending = T[PENDING]
        if pending > 0.0:
            _scale(T, x, np.bool_(True), xs)
            have = T[PENDING] == pending  # else x fixed a spread: learn the row as run() maps it
    else:
        if not row_ok(x, MAX_ABS_FEATURE):
            return BAD_ROW, False
        _scale(T, x, np.bool_(not predict), xs)
    return 0, have


@_jit
def _event_end(T, x, y, n, predict, f, k):
    """A per-event mode's bookkeeping after the engine: predict_one keeps x and the round for
    learn_one; learn_one takes the calibration's step (when no member needs Python first)."""
    if predict:
        oxl = int(T[O_XL])
        for j in range(x.shape[0]):
            T[oxl + j] = x[j]
        T[SEEN] = n
    elif k == 0 and T[CAL] != 0.0 and abs(f) <= _MAXF:
        oc = int(T[O_CAL])
        calibration_step(T[oc:oc + N_STATE], f, y > 0.0, GAMMA)


@_jit
def _sparse_scale(T, xi, xv, commit, xs):
    """xs[p] = the model's value of the non-zero (xi[p], xv[p]) under the sparse input map (centre 0:
    :func:`okl.scaling.scaled_value`, as :func:`okl.scaling.scale_sparse_rows` maps a block; the row
    itself without a scale); ``commit`` stores the spreads the row fixes and counts them off the
    pending ones."""
    rule = T[SCALE]
    if rule == NO_SCALE:
        for p in range(xi.shape[0]):
            xs[p] = xv[p]
        return
    o = int(T[O_SPR])
    spread = T[o:o + int(T[DIM])]
    for p in range(xi.shape[0]):
        pending = spread[xi[p]] == 0.0
        xs[p] = scaled_value(xv[p] - 0.0, xi[p], spread, commit, int(rule))
        if commit and pending and spread[xi[p]] != 0.0:
            T[PENDING] -= 1.0


@_jit
def _sparse_same_row(T, xi, xv):
    """The row (xi, xv) is the last one predict_one kept, entry by entry (the sign of zeros too)."""
    nnz = xi.shape[0]
    if T[LAST_N] != nnz:
        return False
    oi, ov = int(T[O_LAST_I]), int(T[O_LAST_V])
    for p in range(nnz):
        if T[oi + p] != xi[p] or T[ov + p] != xv[p] or math.copysign(1.0, xv[p]) != math.copysign(1.0, T[ov + p]):
            return False
    return True


@_jit
def _sparse_event_start(T, Xp, xi, xv, y, n, predict, xs):
    """:func:`_event_start` for a sparse row (row pointers ``Xp`` of its one row, column indices
    ``xi``, values ``xv``): its checks (one row, indices increasing within the width, values
    finite and within the bound: else BAD_ROW, nothing changed), the label's, and the input map of
    its non-zeros into ``xs``. Returns (code, have) as there. O(nnz)."""
    d = int(T[DIM])
    nnz = xi.shape[0]
    if Xp.shape[0] != 2 or Xp[0] != 0 or Xp[1] != nnz or xv.shape[0] != nnz:
        return BAD_ROW, False
    if not predict and not _label_ok(T, y):
        return BAD_LABEL, False
    last = -1
    for p in range(nnz):
        if xi[p] <= last or xi[p] >= d or not abs(xv[p]) <= MAX_ABS_FEATURE:
            return BAD_ROW, False
        last = xi[p]
    have = not predict and T[SEEN] == n and _sparse_same_row(T, xi, xv)
    if not predict:
        T[SEEN] = -1.0
    pending = T[PENDING]
    _sparse_scale(T, xi, xv, not predict, xs)
    if have and T[PENDING] != pending:  # x fixed a spread: learn the row as run() maps it
        have = False
    return 0, have


@_jit
def _sparse_event_end(T, xi, xv, y, n, predict, f, k):
    """:func:`_event_end` for a sparse row: predict_one keeps its non-zeros (up to
    :data:`LAST_ROW_NONZEROS`) and the round for learn_one."""
    if predict:
        nnz = xi.shape[0]
        if nnz <= LAST_ROW_NONZEROS:
            oi, ov = int(T[O_LAST_I]), int(T[O_LAST_V])
            for p in range(nnz):
                T[oi + p] = xi[p]
                T[ov + p] = xv[p]
            T[LAST_N] = nnz
        else:
            T[LAST_N] = -1.0
        T[SEEN] = n
    elif k == 0 and T[CAL] != 0.0 and abs(f) <= _MAXF:
        oc = int(T[O_CAL])
        calibration_step(T[oc:oc + N_STATE], f, y > 0.0, GAMMA)


@jit_inline
def _engine_call(mode, F, I, R, S, T, X, Y, D, out, todo, bound, classification, r0, Xp, Xi, Xv, x, y, n,
                 predict_all, learn_all):
    """The body of both roots (see the module docstring; kept small: Numba copies an inlined
    body's variables once per block of it)."""
    if mode == ROWS:
        r, k = engine_rows(F, I, R, S, X, Y, r0, bound, classification, D, out, todo, Xi[:0], Xv[:0], predict_all,
                           learn_all)
        return r, k, 0.0
    if mode == SPARSE_ROWS:
        r, k = engine_sparse_rows(F, I, R, S, Xp, Xi, Xv, Y, r0, bound, classification, D, out, todo, X[0],
                                  predict_all, learn_all)
        return r, k, 0.0
    if mode == SPARSE_EVENT_PREDICT or mode == SPARSE_EVENT_LEARN:  # (the sparse plan: O(nnz) in and out)
        predict = mode == SPARSE_EVENT_PREDICT
        xs = np.empty(Xi.shape[0])
        code, have = _sparse_event_start(T, Xp, Xi, Xv, y, n, predict, xs)
        if code != 0:
            return code, 0, np.nan
        xw = X[0]  # (the row's dense copy in the engine's work row, cleared after)
        for p in range(Xi.shape[0]):
            xw[Xi[p]] = xs[p]
        ok, f, k = engine_event(F, I, R, S, xw, Xi, xs, y, bound, have, not predict, T[CLASSIFY] != 0.0, todo,
                                predict_all, learn_all)
        for p in range(Xi.shape[0]):
            xw[Xi[p]] = 0.0
        if not ok:
            return BAD_ROW, 0, np.nan
        _sparse_event_end(T, Xi, Xv, y, n, predict, f, k)
        return k, 0, f
    predict = mode == PREDICT or mode == EVENT_PREDICT
    if mode == EVENT_PREDICT or mode == EVENT_LEARN:
        code, have = _event_start(T, x, y, n, predict)
        if code != 0:
            return code, 0, np.nan
        o = int(T[O_XS])
        ok, f, k = engine_event(F, I, R, S, T[o:o + x.shape[0]], Xi[:0], Xv[:0], y, bound, have, not predict,
                                T[CLASSIFY] != 0.0, todo, predict_all, learn_all)
        if not ok:
            return BAD_ROW, 0, np.nan
        _event_end(T, x, y, n, predict, f, k)
        return k, 0, f
    ok, f, k = engine_event(F, I, R, S, x.copy(), Xi, Xv, y, bound, r0 != 0, not predict, classification, todo,
                            predict_all, learn_all)
    return 1 if ok else 0, k, f


def engine_one(mode, F, I, R, S, T, X, Y, D, out, todo, bound, classification, r0, Xp, Xi, Xv, x, y, n):
    """The engine's root with one output per member (labels -1/+1 or targets)."""
    return _engine_call(mode, F, I, R, S, T, X, Y, D, out, todo, bound, classification, r0, Xp, Xi, Xv, x, y, n,
                        predict_all_one, learn_all_one)


def engine_dictionaries(mode, F, I, R, S, T, X, Y, D, out, todo, bound, classification, r0, Xp, Xi, Xv, x, y, n):
    """The engine's root with one output per member, for pools with a member whose step keeps its
    own dictionary or asks for this root (``Component.in_second_root``: Raker's): compiled on the
    first such pool, so that the default pools' root does not compile those steps (they took its
    cold compile from 70 to 109 s)."""
    return _engine_call(mode, F, I, R, S, T, X, Y, D, out, todo, bound, classification, r0, Xp, Xi, Xv, x, y, n,
                        predict_all_dictionaries, learn_all_dictionaries)


def engine_k(mode, F, I, R, S, T, X, Y, D, out, todo, bound, classification, r0, Xp, Xi, Xv, x, y, n):
    """The engine's root with K one-vs-rest outputs per member (labels: class indices)."""
    return _engine_call(mode, F, I, R, S, T, X, Y, D, out, todo, bound, classification, r0, Xp, Xi, Xv, x, y, n,
                        predict_all_k, learn_all_k)


_I = types.Array(types.int64, 2, "C")
_IV = types.Array(types.int64, 1, "C")
_R = types.Array(types.float64, 2, "C")
_M = types.Array(types.float64, 2, "C")
# (X writable: its rows are the members' rows, as in the per-event modes, so every member function
# is compiled for one row type)
# (Xv writable: the sparse plan hands the members its row's mapped values, which it writes, and
# every member function is compiled for one type of them)
_SIGNATURE = types.Tuple((types.int64, types.int64, types.float64))(
    types.int64, _F, _I, _R, _F, _F, _M, _ROW, _M, _M, _IV,
    types.float64, types.boolean, types.int64, _IV, _IV, _F, _ROW, types.float64, types.int64)
_ROOTS: dict = {}


def compiled_engine(k_out: bool, dictionaries: bool = False):
    """The root for one output (``k_out`` False) or K outputs, compiled for its one signature at its
    first use in the process (loaded from Numba's cache when warm; on a cold cache, with half of
    its largest callees compiled by a second process at the same time: :func:`prepare_engine`);
    ``dictionaries``: one output with steps that keep their own dictionary (:func:`engine_dictionaries`,
    compiled in this process alone)."""
    key = (k_out, dictionaries and not k_out)
    root = _ROOTS.get(key)
    if root is None:
        if key[1]:
            root = _ROOTS[key] = _jit_for([_SIGNATURE])(engine_dictionaries)
            return root
        source = engine_k if k_out else engine_one
        if not is_cached(source):
            prepare_engine(k_out)
            compile_part(k_out, 0)
            child = _CHILDREN.pop(k_out, None)
            if child is not None:
                with compiling():
                    try:
                        child.wait(timeout=60)
                    except subprocess.TimeoutExpired:
                        child.kill()
                        child.wait()
        root = _ROOTS[key] = _jit_for([_SIGNATURE])(source)
    return root


def prepare_engine(k_out: bool) -> None:
    """Start compiling the root's callees early, once per process and output kind, when its cache
    is cold: on a machine with two or more cores, a child process compiles the second half of
    :func:`_parts` into the same Numba cache while this one goes on (it compiles the first half at
    the root's first use, then loads the child's from the cache). Only the wall time of a cold
    start changes: a child that cannot start, fails or takes over a minute leaves its half to this
    process. ``OKL_COMPILE_PROCESSES=1`` turns it off. (auto calls this with its first rows: the
    child's start-up then overlaps the width window's input scale.)"""
    if (k_out, False) in _ROOTS or k_out in _PREPARED:
        return
    _PREPARED.add(k_out)
    if compile_processes() <= 1 or not sys.executable or is_cached(engine_k if k_out else engine_one):
        return
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    if cores < 2:
        return
    code = f"from okl.engine.roots import compile_part; compile_part({bool(k_out)}, 1)"
    try:
        _CHILDREN[k_out] = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        pass


def compile_processes() -> int:
    """``OKL_COMPILE_PROCESSES`` (default 2): how many processes a cold start of auto's engine
    compiles in (1 or less: this one only). Raises ValueError naming it when it is not an integer."""
    text = os.environ.get("OKL_COMPILE_PROCESSES", "").strip()
    if not text:
        return 2
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"OKL_COMPILE_PROCESSES={text!r}: expected an integer (1 or less: compile in this "
                         "process only; 2: with a second process)") from None


_PREPARED: set = set()
_CHILDREN: dict = {}


_A1, _A2 = types.Array(types.float64, 1, "C"), types.Array(types.float64, 2, "C")


def _parts(k_out: bool) -> list[list[tuple]]:
    """The root's largest callees, with the signatures the root types them with, in two lists of
    about equal compile time (this process's, then the child's: docs/results/startup-compile.md).
    The child compiles a leaf of the members' outputs first (the window's smoother), which this
    process reaches after the block features (it then loads it from the cache, or compiles it too
    when it gets there first: only time is at stake)."""
    from okl.calibration import state_steps
    from okl.engine.aggregation import aggregate_outputs_round
    from okl.components.dispatch import block_features
    from okl.components.maps.window import window_decision

    i64, f64, flag = types.int64, types.float64, types.boolean
    return [[(block_features, (_A1, _I, _A2, _A2, i64, i64, _A1, f64)),
             (predict_all_k if k_out else predict_all_one, (_A1, _I, _A2, _A1, _IV, _A1, _A1, _A1, i64, flag)),
             (state_steps, (_A1, _A1, _A1, _A1, f64)),
             (_event_start, (_F, _ROW, f64, i64, flag)),
             (_event_end, (_F, _ROW, f64, i64, flag, f64, i64))],
            [(window_decision, (i64, f64, _A2, _A1, i64, _A1, _A1, i64, _A1)),
             (learn_all_k if k_out else learn_all_one, (_A1, _I, _A2, _A1, _IV, _A1, f64, _A1, _A1, _IV, i64, _A1)),
             (aggregate_outputs_round, (_A1, f64, _A1, _A1, _A1, flag, _A1, _A1, _A1, i64, flag, _A1))]]


def compile_part(k_out: bool, part: int) -> None:
    """Compile one half of :func:`_parts` (into Numba's cache)."""
    for dispatcher, signature in _parts(k_out)[part]:
        dispatcher.compile(signature)


def roots_cached() -> bool:
    """Whether Numba's cache holds both roots (a lazy dispatcher of the same source reads the same
    index: nothing is compiled)."""
    return all(is_cached(root) for root in (engine_one, engine_k))


_NO_ROWS, _NO_LABELS, _NO_ROW = np.zeros((0, 0)), np.zeros(0), np.zeros(0)
_NO_INDEX = np.zeros(0, dtype=np.int64)


def _root(eng):
    return compiled_engine(eng.K > 0, eng.dictionaries)


def call_rows(eng, X, Y, r0: int, classification: bool, D, out) -> tuple[int, int]:
    """Rows r0.. of a block through the engine ``eng`` (:func:`okl.engine.core.engine_rows`; sparse
    rows, :class:`okl._sparse.SparseRows`: :func:`okl.engine.core.engine_sparse_rows`): returns
    (rows done up to, members needing Python)."""
    if isinstance(X, SparseRows):
        r, k, _ = _root(eng)(SPARSE_ROWS, eng.F, eng.I, eng.R, eng.S, _NO_ROW, work_row(eng, X.shape[1]),
                             np.ascontiguousarray(Y, dtype=float), D, out, eng.todo, MAX_ABS_FEATURE, classification,
                             r0, X.indptr, X.indices, X.data if X.data.flags.writeable else X.data.copy(), _NO_ROW,
                             0.0, 0)
        return r, k
    X = np.ascontiguousarray(X, dtype=float)
    if not X.flags.writeable:
        X = X.copy()
    r, k, _ = _root(eng)(ROWS, eng.F, eng.I, eng.R, eng.S, _NO_ROW, X,
                         np.ascontiguousarray(Y, dtype=float), D, out, eng.todo, MAX_ABS_FEATURE, classification,
                         r0, _NO_INDEX, _NO_INDEX, _NO_ROW, _NO_ROW, 0.0, 0)
    return r, k


def work_row(eng, d: int) -> np.ndarray:
    """The engine's (1, d) row of zeros that a sparse row is copied into and cleared from (O(nnz)),
    allocated once: a fresh one costs O(d) a call (8 MiB at 2^20 hashed columns)."""
    row = getattr(eng, "sparse_row", None)
    if row is None or row.shape[1] != d:
        row = eng.sparse_row = np.zeros((1, d))
    return row


def _generic(eng, mode: int, x, y: float, have: bool, nonzero) -> tuple[int, int, float]:
    """The generic path's event (``mode`` PREDICT or LEARN) on the scaled row x; ``nonzero``: the
    columns where a row that came sparse can be non-zero (its members then take its non-zeros,
    O(nnz)), or None."""
    x = np.ascontiguousarray(x, dtype=float)
    xi, xv = (_NO_INDEX, _NO_ROW) if nonzero is None else (nonzero, x[nonzero])
    return _root(eng)(mode, eng.F, eng.I, eng.R, eng.S, _NO_ROW, _NO_ROWS, _NO_LABELS, _NO_ROWS, _NO_ROWS,
                      eng.todo, MAX_ABS_FEATURE, eng.classification, 1 if have else 0, _NO_INDEX, xi, xv, x,
                      float(y), 0)


def call_predict(eng, x, nonzero=None) -> tuple[bool, float]:
    """The generic path's predict_one on the scaled row x (``engine_event`` without learning):
    (ok, p[0])."""
    ok, _, f = _generic(eng, PREDICT, x, 0.0, False, nonzero)
    return ok != 0, f


def call_learn(eng, x, y: float, have: bool, nonzero=None) -> tuple[bool, float, int]:
    """The generic path's learn_one on the scaled row x (``engine_event`` learning; ``have``: x's
    features are those call_predict left): (ok, p[0], members needing Python)."""
    ok, k, f = _generic(eng, LEARN, x, y, have, nonzero)
    return ok != 0, f, k


def load_compiled() -> None:
    """Load both roots' machine code (Numba's cache; its runtime on the first call of a process) by
    running them on an empty pool: the first event of a stream then does not wait for it."""
    F, I, R = np.zeros(1), np.zeros((0, I_COLS), dtype=np.int64), np.zeros((0, R_COLS))
    S, x, todo = np.zeros(state_size(0, 1)), np.zeros(1), np.zeros(0, dtype=np.int64)
    for k_out in (False, True):
        compiled_engine(k_out)(ROWS, F, I, R, S, _NO_ROW, x[None, :], np.ones(1), np.zeros((1, 0)),
                               np.zeros((1, 1)), todo, 1.0, True, 0, _NO_INDEX, _NO_INDEX, _NO_ROW, _NO_ROW, 0.0, 0)


class AutoPlan:
    """``auto``'s compiled per-event state: the engine ``eng`` it was built on
    (:class:`okl.engine.layout.Engine`, whose arrays the calls take), a tail
    ``T`` laid out as a :class:`okl.engine.fastpath.FastPlan` buffer's row check and input scale
    (:func:`okl.engine.fastpath._input_part`: auto's spreads and calibration move in and become
    views of it), and the root's two per-event modes with every fixed argument bound:
    ``predict(x, 0.0, n) -> (code, 0, f)`` and ``learn(x, y, n) -> (code, 0, f)``. ``center``: the
    caller centres targets; ``K``: the number of outputs (0: one; else f is the first of the K
    outputs the engine left in its work space, and labels are class indices)."""

    __slots__ = ("T", "eng", "center", "d", "K", "predict", "learn", "sparse")

    def __init__(self, learner, eng, spread, cal, sparse: bool = False):
        d = learner.dim_
        lay, size = {}, SPARSE_HEADER if sparse else HEADER
        last = min(d, LAST_ROW_NONZEROS)
        parts = (("SPR", d), ("CAL", N_STATE), ("LAST_I", last), ("LAST_V", last)) if sparse else (
            ("CEN", d), ("SPR", d), ("CAL", N_STATE), ("XS", d), ("XL", d))
        for name, n in parts:
            lay[name] = size
            size += n
        T = np.zeros(size)
        if sparse:
            lay.update(CEN=None, XS=None, XL=None)
        _input_part(learner, T, lay, spread, cal, eng.classification)
        if sparse:
            T[LAST_N], T[O_LAST_I], T[O_LAST_V] = -1.0, lay["LAST_I"], lay["LAST_V"]
        T[K] = self.K = eng.K
        self.T, self.eng, self.sparse = T, eng, sparse
        self.center = learner.heads.centers_targets(learner)
        self.d = d
        root = _root(eng)
        if sparse:  # (called with the work row, the row's pointers, indices and values, label and round)
            fixed = (eng.F, eng.I, eng.R, eng.S, T)
            after = (_NO_LABELS, _NO_ROWS, _NO_ROWS, eng.todo, MAX_ABS_FEATURE, eng.classification, 0)
            work = work_row(eng, d)
            self.predict = functools.partial(_sparse_root_call, root, SPARSE_EVENT_PREDICT, fixed, work, after)
            self.learn = functools.partial(_sparse_root_call, root, SPARSE_EVENT_LEARN, fixed, work, after)
            return
        fixed = (eng.F, eng.I, eng.R, eng.S, T, _NO_ROWS, _NO_LABELS, _NO_ROWS, _NO_ROWS, eng.todo, MAX_ABS_FEATURE,
                 eng.classification, 0, _NO_INDEX, _NO_INDEX, _NO_ROW)
        self.predict = functools.partial(root, EVENT_PREDICT, *fixed)
        self.learn = functools.partial(root, EVENT_LEARN, *fixed)

    @property
    def xs(self) -> np.ndarray:
        """The scaled row of the last call (what the members' Python steps take)."""
        o = int(self.T[O_XS])
        return self.T[o:o + self.d]


#: SciPy's CSR types met so far (the sparse plan's rows; SciPy is not imported for them)
CSR_TYPES: set = set()


def is_csr(x) -> bool:
    """Whether x is a SciPy CSR matrix or array (remembered in :data:`CSR_TYPES`)."""
    t = type(x)
    if t in CSR_TYPES:
        return True
    if t.__name__ in ("csr_matrix", "csr_array") and t.__module__.startswith("scipy.sparse"):
        CSR_TYPES.add(t)
        return True
    return False


def _sparse_root_call(root, mode, fixed, work, after, indptr, indices, data, y, n):
    """The sparse plan's call of the root on one row's CSR arrays (see :class:`AutoPlan`)."""
    return root(mode, *fixed, work, *after, indptr, indices, data, _NO_ROW, y, n)


def build_auto(learner, eng, sparse: bool = False) -> AutoPlan | None:
    """``auto``'s :class:`AutoPlan` on its engine ``eng`` (``sparse``: the plan for sparse rows,
    under a map that keeps zeros zero), or None: members outside the engine (the generic path's
    work), or state arrays that cannot move into a buffer."""
    if eng.py or learner.dim_ is None or (sparse and not learner.inputs.zero_centre(learner)):
        return None
    spread = learner.scale_spread_
    cal = learner.calibration_ if eng.classification else None
    if not all(a is None or _own(a) for a in (spread, cal)) or (cal is not None and cal.shape != (1, N_STATE)) or (
            spread is not None and spread.shape != (learner.dim_,)):
        return None
    return AutoPlan(learner, eng, spread, cal, sparse)


def stacked(eng, f):
    """auto's regression prediction for the engine's mixture f: the stacking layer's
    (:func:`okl.engine.aggregation.stack_predict`); f as it is without the layer or when f is
    not finite (no member left)."""
    if eng.stack is None or not f - f == 0.0:
        return f
    return stack_predict(eng.d, eng.alive, eng.stack, f, eng.c)


def stacked_round(eng, y, f):
    """auto's regression prediction after the engine's round on target y with mixture f:
    the stacking layer's (:func:`okl.engine.aggregation.stack_learn`), which then learns y; f as
    it is without the layer or when f is not finite (no member left)."""
    if eng.stack is None or not f - f == 0.0:
        return f
    return stack_learn(eng.d, y, eng.alive, eng.stack, f, eng.c, eng.loss)


