"""``auto``'s paths into its engine (:class:`EnginePaths`, a mixin of
:class:`okl.ensemble.auto.Auto`): per event the plan's two compiled calls
(:class:`okl.engine.roots.AutoPlan`), else the generic hooks on the same engine, and blocks of rows."""

from __future__ import annotations

import math

import numpy as np

import okl.calibration as calibration
from okl._validation import MAX_ABS_FEATURE, check_matrix, check_vector
from okl.engine.aggregation import stack_rows
from okl.engine.fastpath import BAD_ROW
from okl.engine.roots import CSR_TYPES, build_auto, call_learn, call_predict, call_rows, is_csr, stacked, stacked_round
from okl.runtime.base import Learner, event_state
from okl.runtime.events import FLOAT_TYPES, NDARRAY, EventPath

_I64 = np.dtype(np.int64)


class EnginePaths:
    """``auto``'s paths into its engine (a mixin of :class:`okl.ensemble.auto.Auto`): per event, the
    plan's two compiled calls, else the generic hooks on the same engine, and blocks of rows
    (:meth:`_process`: ``run``, ``learn_many``, ``okl stream``, the width window's rows; sparse
    rows stay sparse, :func:`okl.engine.core.engine_sparse_rows`)."""

    accepts_csr = True

    # ---- per event: the engine's two calls behind the row check and input scale -------------
    #
    # The fast plan (:class:`AutoPlan`): on the common input (a float64, 1-D,
    # C-contiguous row and a float label) once the pool started (every member in the engine; one
    # output or K), predict_one is one compiled call (row check, input scale, every member's features
    # and the mixture) and learn_one one more (the aggregation round, every member's step and the
    # calibration's step on predict_one's features); the rest goes through the generic hooks
    # below, which run the same engine. The plan is dropped with the event cache whenever the
    # engine is rebuilt or the state changes otherwise.

    def _fast_plan(self, sparse: bool = False):
        ev = event_state(self)
        plan = build_auto(self, self._engine(ev), sparse) if self.started_ and self.dim_ is not None else None
        ev.plan = plan = plan or False
        return plan

    def predict_one(self, x):
        plan = self._event.plan
        if plan and (type(x) in CSR_TYPES if plan.sparse else type(x) is NDARRAY):
            f = self._plan_predict(plan, x)
            if f is not None:
                return f
        return self.events.predict_event(self, x)

    def _plan_predict(self, plan, x):
        """predict_one through the plan (dense or sparse), or None when it refused the row (the
        generic path then takes it and says why)."""
        try:
            f = (self._sparse_call(plan, x, 0.0, False) if plan.sparse else plan.predict(x, 0.0, self.n_seen_))[2]
        except TypeError:  # not a float64, C-contiguous, 1-D array (CSR: 1-D arrays of its row)
            return None
        if not f - f == 0.0:
            return None
        if plan.K:
            return self._outputs(plan.eng)
        f = stacked(plan.eng, f)
        return f + self.heads.target_mean(self) if plan.center else f

    def _sparse_call(self, plan, x, y, learn: bool):
        """The sparse plan's call on a 1-row CSR matrix x: its arrays as the root takes them (int64
        indices: SciPy's are int32 up to 2^31 entries); a refused row or shape comes back as
        BAD_ROW (the generic path then says why)."""
        if x.shape[1] != plan.d:
            return BAD_ROW, 0, math.nan
        indptr, indices = x.indptr, x.indices
        if indices.dtype is not _I64:
            indptr, indices = indptr.astype(_I64), indices.astype(_I64)
        return (plan.learn if learn else plan.predict)(indptr, indices, x.data, y, self.n_seen_)

    def _sparse_event(self, x, y, learn: bool):
        """A sparse row (see :meth:`EventPath.sparse_event`) once the pool runs in the engine under a
        map that keeps zeros zero: the sparse plan (:class:`AutoPlan` with ``sparse``), one
        compiled call each for predict_one and learn_one on the row's non-zeros (its checks, input
        map and every member's O(nnz) input side; a 2^20-column row is never made dense), with the
        decisions of ``run()`` on the CSR rows. Otherwise (other sparse formats, a refused row) the
        generic path, which makes the row dense, and learn_one reuses predict_one's features."""
        plan = self._event.plan
        csr = is_csr(x)
        if plan is None and csr:
            plan = self._fast_plan(sparse=True)
        if plan and plan.sparse and csr:
            f = self._plan_learn(plan, x, y) if learn else self._plan_predict(plan, x)
            if f is not None:
                return f
        return EventPath.sparse_event(self.events, self, x, y, learn)

    def _learn_round(self, x, y):
        plan = self._event.plan
        if plan is None and type(x) is NDARRAY:  # (the dense plan; a sparse row builds the sparse one)
            plan = self._fast_plan()
        if plan and (type(x) in CSR_TYPES if plan.sparse else type(x) is NDARRAY):
            f = self._plan_learn(plan, x, y)
            if f is not None:
                return f
        return self.events.learn_generic(self, x, y)  # (not the single learners' plan path: this plan is auto's)

    def _plan_learn(self, plan, x, y):
        """learn_one through the plan (dense or sparse), or None when it refused the event (nothing
        changed: the generic path takes it and says why). A target beyond MAX_ABS_FEATURE, which
        run() refuses, is left to the generic path, which refuses it."""
        if type(y) not in FLOAT_TYPES or not -MAX_ABS_FEATURE <= y <= MAX_ABS_FEATURE:
            return None
        n = self.n_seen_
        if plan.center:  # (self.heads.residual(self, y), inline: the per-event path)
            mu, r = (self.target_sum_ / n if n else 0.0), y - (self.target_sum_ + y) / (n + 1)
        else:
            mu, r = 0.0, y
        try:
            k, _, f = self._sparse_call(plan, x, r, True) if plan.sparse else plan.learn(x, r, n)
        except TypeError:  # not a float64, C-contiguous, 1-D array (CSR: 1-D arrays of its row)
            k = BAD_ROW
        if k < 0:
            return None
        if plan.K:
            f = self._outputs(plan.eng)
        f = stacked_round(plan.eng, r, f)
        if k:  # members' transitions / update rounds (the calibration's step after them)
            self._python_steps(plan.eng, self._scaled_dense(x) if plan.sparse else plan.xs.copy(), r)
            if not self.alive_.any():
                f = f * math.nan
            elif self.calibration_ is not None and f - f == 0.0:
                calibration.update_one(self.calibration_, f, y)
        if plan.center:
            self.target_sum_ += y
            f += mu
        self.n_seen_ = n + 1
        if not (np.isfinite(f).all() if plan.K else f - f == 0.0):
            self.events.non_finite(self, n)
        return f

    def _scaled_dense(self, x) -> np.ndarray:
        """The sparse row x as the members saw it, dense (for their Python steps: rare rounds)."""
        return self.inputs.scaled_rows(self, check_matrix(x, self.dim_, sparse=True), commit=False).toarray()[0]

    def _event_features(self, x, ev):
        eng = self._engine(ev)
        if eng.py:
            self.events.check_values(self, x)
            self._python_decisions(eng, x)
        ok, f = call_predict(eng, x, self._nonzero)
        if not ok:
            self.events.check_values(self, x)
        return (stacked(eng, f) if not eng.K else self._outputs(eng)), eng

    def _event_learn(self, x, y, z, ev):
        eng = self._engine(ev)
        if eng.py:
            self.events.check_values(self, x)
            self._python_decisions(eng, x, y)
        ok, f, n = call_learn(eng, x, y, z is eng, self._nonzero)
        if not ok:
            self.events.check_values(self, x)
        if eng.K:
            f = self._outputs(eng)
        f = stacked_round(eng, y, f)
        if n:
            self._python_steps(eng, x, y)
            if not self.alive_.any():
                return f * np.nan  # the last member failed in its Python step
        return f

    def _decision(self, x):
        return self._event_features(x, event_state(self))[0]

    def _member_block(self, member: Learner, X, y) -> np.ndarray:
        """One member's test-then-train decisions over a block (NaN once it fails)."""
        try:
            with np.errstate(all="ignore"):
                out = np.asarray(member.inputs.process_rows(member, X, y), dtype=float)
        except (ValueError, FloatingPointError, ArithmeticError, np.linalg.LinAlgError):
            out = np.full(X.shape[0], np.nan)
        member.n_seen_ += X.shape[0]
        return out

    def _process(self, X, y):
        n = X.shape[0]
        nout = max(self.n_outputs_, 1)
        out = np.empty((n, self.n_outputs_) if self.n_outputs_ else n)
        rows = out.reshape(n, nout)  # the engine writes the mixture's outputs row by row
        classification = self.task == "classification"
        for s in range(0, n, self.chunk_size):
            e = min(s + self.chunk_size, n)
            eng = self._engine()
            D = np.full((e - s, len(self._pool) * nout), np.nan)
            for j in eng.py:  # members outside the engine: their own block path
                if self.alive_[j] > 0.0:
                    D[:, j] = self._member_block(self._pool[j], X[s:e], y[s:e])
            r = 0
            while r < e - s:
                eng = self._engine()
                r0, alive = r, (eng.alive.copy() if eng.stack is not None else None)
                r, k = call_rows(eng, X[s:e], y[s:e], r, classification, D, rows[s:e])
                if eng.stack is not None and r > r0:  # (before a member's Python step can drop it)
                    stack_rows(D[r0:r], np.ascontiguousarray(y[s + r0:s + r], dtype=float), alive, eng.stack,
                               out[s + r0:s + r])
                if k:
                    eng.d[:] = D[r - 1]
                    self._python_steps(eng, X[s + r - 1], y[s + r - 1])
                elif r < e - s:
                    check_vector(X[s + r], self.dim_)  # raises the message naming the value
                    raise ValueError(f"row {s + r} has a value beyond {MAX_ABS_FEATURE:g}")
            if self._raw_member and self.n_outputs_:
                out[s:e] = D[:, :nout]
        if not (self.alive_ > 0.0).any():
            out[-1] = np.nan  # every member failed: the base class reports it
        return out

    def _event_block(self, X, y, out):
        if self._engine().py:
            return 0  # a member outside the engine learns blocks its own way: one event at a time
        out[:] = self._process(X, y)
        return X.shape[0]
