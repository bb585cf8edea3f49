"""The per-event path of a learner (``predict_one`` / ``learn_one`` / River's mini-batches): the
cache kept outside the learner and the :class:`EventPath` mixin of :class:`okl.runtime.base.Learner`."""

from __future__ import annotations

import math

import numpy as np

import okl.calibration as calibration
from okl._compiled import row_ok as _row_ok
from okl._threads import one_blas_thread
from okl._sparse import SparseRows, is_sparse_matrix
from okl._validation import MAX_ABS_FEATURE, check_matrix, check_target, check_targets, check_vector
from okl.kernels import WIDTH_WINDOW
from okl.components import ENGINE, EVENT, MAPS, STEPS, Plan, runs_everywhere
from okl.engine.fastpath import BAD_LABEL, BAD_ROW, TRANSITION_DUE, UPDATE_DUE, WINDOW_DONE, build as build_fast_plan
from okl.runtime.state import _F64
from okl.runtime.trace import NonFiniteError
from okl.losses import Loss, get_loss


class _EventState:
    """A learner's per-event cache, work space and fast plan (:meth:`Learner.predict_one`), in the
    learner's ``_event`` slot (:class:`okl.runtime.base.Learner`), not in its ``__dict__``: never
    saved, pickled or copied, and never in ``vars(learner)``. ``plan``: the fast plan
    (:class:`okl.engine.fastpath.FastPlan`, ``AutoPlan`` for auto), False (none in the current
    state), :data:`_NEVER` (none for its class) or None (not tried yet)."""

    __slots__ = ("cache", "buf", "loss", "window", "plan")

    def __init__(self):
        self.cache = self.buf = self.loss = self.window = self.plan = None


class EventWork:
    """A learner's per-event work space (kept in :attr:`_EventState.buf`, never saved): the objects
    it was built for (the learner checks them by identity and rebuilds it when its map, weights,
    kernel or loss changed) and the arrays and constants its compiled per-event calls take, as
    named attributes."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


class _Never:
    """A learner with no compiled plan the per-event path runs (none in its class, or its map or
    step not one this path has): kept across state changes (falsy)."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return False


_NEVER = _Never()


#: the event state of a learner that has had no event (read only: its plan is None, "not tried")
NO_EVENT = _EventState()


def event_state(learner) -> _EventState:
    """The learner's :class:`_EventState` (made at its first event)."""
    try:
        return learner._event
    except AttributeError:
        ev = learner._event = _EventState()
        return ev


def fast_plan_of(learner):
    """The learner's fast plan: a plan, False (none in its state), :data:`_NEVER` or None (not tried)."""
    return getattr(learner, "_event", NO_EVENT).plan


def drop_event_cache(learner) -> None:
    """Forget the features cached by predict_one and the fast plan (the state is about to change,
    and its arrays may be replaced)."""
    ev = getattr(learner, "_event", None)
    if ev is not None:
        ev.cache = None
        if ev.plan is not _NEVER:
            ev.plan = None


FLOAT_TYPES = (float, np.float64)
NDARRAY = np.ndarray


class EventPath:
    """The per-event methods of :class:`okl.runtime.base.Learner`."""

    # ---- per-event path ------------------------------------------------------------------
    #
    # The fast plan (issue 24, :mod:`okl.engine.fastpath`): a learner with ``compiled_plan()``
    # (NOGD, FOGD, SkeGD, FORKS with the code's ONS, the linear learner; in the width window and
    # both stages; ``auto`` has its own, :class:`okl.engine.roots.AutoPlan`) gets a plan
    # kept in its event state (:func:`fast_plan_of`): predict_one is then one compiled call (row check, input scale,
    # features, decision) and learn_one one more (the step and the calibration on predict_one's
    # features when x and n_seen_ are those of the last prediction), on the common input: a
    # float64, 1-D, C-contiguous ndarray of the learner's width and a float label (anything else,
    # a refused value, target centring's bookkeeping and the learner's Python transitions and
    # update rounds go through the code below). Every path that changes the state otherwise drops
    # the plan with the event cache.
    #
    # The generic hooks: ``_event_features(x, ev) -> (f, z) | None`` and ``_event_learn(x, y, z,
    # ev) -> f | None`` compute the features z of x in predict_one (one compiled call), and the
    # learn_one that follows for the same x (same bytes) in the same state (same n_seen_, nothing
    # learned in between) learns from them without computing them again. The cache lives outside
    # the learner (:class:`_EventState`: never saved, pickled or copied); every learning round,
    # load, clone and check_state drops it. The common input is checked for finiteness and
    # magnitude inside the compiled call; anything else goes through
    # :func:`okl._validation.check_vector`.

    #: the columns where the row of the event running now can be non-zero, when it came as a sparse
    #: row whose non-zeros the input map keeps (:meth:`_sparse_event`), else None
    _nonzero: np.ndarray | None = None
    #: the message of the :class:`NonFiniteError` that left the state unusable (None: usable)
    _failure: str | None = None

    # ---- a numerical failure: the learner refuses every entry point until reset() ------------

    def _fail(self, message: str) -> NonFiniteError:
        """Mark the learner unusable (``message``: the error's text) and return the error to raise;
        its fast plan is off for good (kept across state changes), so every entry point takes the
        generic path, which calls :meth:`_check_usable`."""
        self._failure = message
        ev = event_state(self)
        ev.cache, ev.plan = None, _NEVER
        return NonFiniteError(message)

    def _check_usable(self) -> None:
        """Raise a :class:`NonFiniteError` (the failure's message) when a numerical failure left the
        state unusable: predicting, learning and saving are refused until :meth:`reset_state`."""
        if self._failure is not None:
            raise NonFiniteError(f"refused: an earlier numerical failure left this learner unusable; call reset_state() "
                                 f"(it forgets everything learned) or make a new learner. {self._failure}")

    def reset_state(self):
        """Forget everything learned: the learner as :meth:`clone` makes it, in place (the way back
        after a :class:`NonFiniteError`); returns it."""
        fresh = self.clone()
        self.__dict__.clear()
        self.__dict__.update(fresh.__dict__)
        self._event = _EventState()
        return self

    def _sparse_event(self, x, y, learn: bool):
        """predict_one (``learn`` False) / learn_one on a sparse row (a SciPy sparse matrix of one
        row) through the generic hooks on its dense copy, with its non-zero columns in
        :attr:`_nonzero` while it runs: a width window that starts with it maps the input as sparse
        rows' windows do (zeros stay zero: :func:`okl.scaling.window_scale`), so the decisions are
        those of ``run()`` on the CSR rows; ``auto``'s engine members take its non-zeros (O(nnz)
        each). The row check and input map cost O(d)."""
        rows = check_matrix(x, self.dim_, sparse=True)
        if rows.shape[0] != 1:
            raise ValueError(f"x must be one example: a sparse matrix of shape (1, features), got shape {rows.shape}")
        self._nonzero = self.inputs.kept_nonzero(self, rows.indices)
        try:
            return self._learn_generic(rows[0], y) if learn else self._predict_event(rows[0])
        finally:
            self._nonzero = None

    def _event_row(self, x) -> tuple[np.ndarray, bool]:
        """(x, values_checked): the common case is only shape-checked here (its values are checked
        in the compiled call that reads them); anything else gets the full check."""
        if type(x) is np.ndarray and x.dtype is _F64 and x.ndim == 1 and self.dim_ is not None \
                and x.shape[0] == self.dim_ and x.flags.c_contiguous:
            return x, False
        return check_vector(x, self.dim_), True

    def _check_values(self, x: np.ndarray) -> None:
        """Finite entries of magnitude at most MAX_ABS_FEATURE (one compiled call); raises the
        message of :func:`~okl._validation.check_vector` otherwise."""
        if not _row_ok(x, MAX_ABS_FEATURE):
            check_vector(x, self.dim_)

    def _event_features(self, x: np.ndarray, ev: _EventState):
        """(f(x), features of x) with the values of x checked, or None when this learner (in its
        current stage) has no per-event features; see :meth:`_event_learn`. ``ev`` is this
        learner's :class:`_EventState`: its ``buf`` holds the learner's work space, and the
        features returned may live in it (predict_one caches them for the next learn_one;
        predict_many drops that cache first)."""
        return None

    def _event_learn(self, x: np.ndarray, y: float, z, ev: _EventState):
        """One round on the started learner with features ``z`` from :meth:`_event_features` in
        this same state (or None: compute them), the same arithmetic as ``_process(x[None], [y])``;
        returns the decision f, or None (no per-event path now: nothing was changed)."""
        return None

    def _event_block(self, X: np.ndarray, y: np.ndarray, out: np.ndarray) -> int:
        """Learn the first rows of a block of validated rows with the per-event arithmetic (each
        row's decision equals what :meth:`learn_one` would give; it does not depend on how the
        stream was cut into blocks), in compiled loops; returns the number of rows learned (0:
        none, the caller goes one event at a time). Only called on a started learner."""
        return 0

    def _learn_events(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """learn_one over the rows of a validated block (float64, C-contiguous, the learner's
        width; labels/targets checked), through :meth:`_event_block` where the learner has it:
        decisions equal to a learn_one loop, bit for bit (what ``okl stream`` uses, so a resumed
        stream prints exactly the uninterrupted predictions)."""
        self._check_usable()
        n = X.shape[0]
        out = self.heads.new_decisions(self, n)
        drop_event_cache(self)
        # the running means of the whole block at once: row i's is the same whichever path learns
        # it (learn_one adds the same targets in the same order)
        mu = None
        if self.heads.centers_targets(self):
            mu, residual, sums = self.heads.running_target_means(self, y)
        i = 0
        while i < n:
            if self.started_:
                pending = self.scale_spread_ is not None and not self.scale_spread_.all()
                # the rows as the model will see them when it learns them in order; a spread that
                # a row fixes is stored only once that row is learned (below), so a checkpoint
                # never holds a spread fixed by a row it has not learned
                Xs = self.inputs.scaled_rows(self, X[i:], commit=pending,
                                       spread=self.scale_spread_.copy() if pending else None)
                k = self._event_block(Xs, y[i:] if mu is None else residual[i:], out[i:])
                if k and pending:
                    self.inputs.scaled_rows(self, X[i:i + k], commit=True)
                if k and mu is not None:
                    out[i:i + k] += mu[i:i + k]
                    self.target_sum_ = float(sums[i + k])
                if k:
                    first = self.n_seen_
                    self.n_seen_ += k
                    self._check_finite(out[i:i + k], first)
                    i += k
                    continue
            if isinstance(X, SparseRows):  # (a sparse row: its window maps it as run() maps sparse rows)
                self._nonzero = self.inputs.kept_nonzero(self, X.row(i)[0])
            try:
                out[i] = self._learn_event(X[i], y[i])
            finally:
                self._nonzero = None
            i += 1
        return out

    def _event_loss(self, ev: _EventState | None = None) -> Loss:
        """:attr:`loss_`, looked up once per loss name (not saved)."""
        ev = ev or event_state(self)
        name = getattr(self, "loss", "hinge")
        if ev.loss is None or ev.loss[0] is not name:
            ev.loss = (name, get_loss(name))
        return ev.loss[1]

    def predict_one(self, x) -> float:
        """Decision value f(x) of the current model (0 before the first example): the fast plan's
        one compiled call when it takes the row, else :meth:`_predict_event`."""
        fp = getattr(self, "_event", NO_EVENT).plan
        if fp and type(x) is NDARRAY:
            try:
                f = fp.predict(fp.F, x, self.n_seen_)
            except TypeError:  # not a float64, C-contiguous, 1-D array
                f = math.nan
            if f - f == 0.0:
                return f + self.heads.target_mean(self) if fp.center else f
        return self._predict_event(x)

    def _predict_event(self, x) -> float:
        """predict_one through the generic hooks (any input, any state; a fast plan is built
        first when none was tried in this state)."""
        self._check_usable()
        if is_sparse_matrix(x):
            return self._sparse_event(x, None, False)
        if fast_plan_of(self) is None and type(x) is NDARRAY and self._nonzero is None and self._fast_plan():
            return self.predict_one(x)
        x, checked = self._event_row(x)
        if self.dim_ is None:
            return np.zeros(self.n_outputs_) if self.n_outputs_ else 0.0
        if self.started_:
            ev = event_state(self)
            xs = self.inputs.scaled_row(self, x, commit=False)
            r = self._event_features(xs, ev)
            if r is not None:
                ev.cache = (x.tobytes(), self.n_seen_, r[1])
                return r[0] + self.heads.target_mean(self) if self.heads.centers_targets(self, ev) else r[0]
        if not checked:
            self._check_values(x)
        if not self.started_:
            return self.inputs.warmup_decision(self, x)
        f = self._decision(xs)
        if self.n_outputs_:
            return f
        f = float(f)
        return f + self.heads.target_mean(self) if self.heads.centers_targets(self) else f

    # ---- the fast plan (okl.engine.fastpath) ---------------------------------------------

    def compiled_plan(self) -> Plan | None:
        """This learner's compiled state in its current stage as a map and a step of the component
        table (:class:`okl.components.Plan`), or None: the generic hooks only. The
        per-event plan (:class:`okl.engine.fastpath.FastPlan`) and ``auto``'s engine
        (:mod:`okl.engine.core`) run it when they have its map and step (``Plan.runs_on``): they
        copy the fixed arrays it gives and move the arrays it names into their buffers (the
        learner's attributes become views of them)."""
        return None

    #: the maps and steps of the component table (:mod:`okl.components`) that this learner's
    #: plans are made of in every stage: its composition (empty: none declared)
    composition: tuple[str, ...] = ()

    @classmethod
    def runs_in_engine(cls, params: dict) -> bool:
        """Whether ``auto``'s engine runs this learner with hyperparameters ``params`` from its
        :meth:`compiled_plan` in every stage; False: it learns through its own Python path as a
        member. The default: whether every component of its :attr:`composition` runs there. (K
        outputs in the engine also need each declared component on that path:
        :func:`okl.components.runs_everywhere`.)"""
        return bool(cls.composition) and runs_everywhere(cls.composition, ENGINE)

    def transition_work(self):
        """Work this learner's transition can share with other members of ``auto``'s pool: (key,
        compute), members of one class with equal keys get ``compute()``'s result once, as
        ``_transition(..., work=...)``; None (the default): nothing shared."""
        return None

    def engine_plan(self) -> Plan | None:
        """The plan ``auto``'s engine lays this member out from, or None (a Python member)."""
        if not type(self).runs_in_engine(self.get_params()):
            return None
        plan = self.compiled_plan()
        return plan if plan is not None and plan.runs_on(ENGINE) else None

    def _fast_plan(self):
        """Build this learner's fast plan for its current state and keep it in its event state
        (False: none now; dropped with the event cache)."""
        ev = event_state(self)
        if type(self).compiled_plan is EventPath.compiled_plan:
            ev.plan = _NEVER
            return _NEVER
        spec = plan = None
        # (a single learner's K outputs run in auto's engine: okl.runtime.multiclass)
        if self.started_ and not self.n_outputs_:
            spec = self.compiled_plan()
            if spec is not None and not (EVENT in MAPS[spec.map].paths and EVENT in STEPS[spec.step].paths):
                ev.plan = _NEVER  # (a map or step this path does not have, in every state)
                return _NEVER
        elif not self.n_outputs_ and self.dim_ is not None and getattr(self, "warmup_X_", None) is not None and (
                self._event_loss().task == "classification" or self.heads.centers_targets(self)):
            # the width window: rows and labels buffered, predicted by their running mean (exact
            # here: labels -1 / +1, or the targets' running mean added by the caller)
            spec = Plan("warmup", "none", SV="warmup_X_", w="warmup_y_")
        if spec is not None:
            self._check_plan_names(spec)
            plan = build_fast_plan(self, spec)
        ev.plan = plan = plan or False
        return plan

    def _check_plan_names(self, spec: Plan) -> None:
        """ValueError naming the :class:`~okl.components.Plan` field whose attribute name the
        learner does not have (a contributed learner's ``compiled_plan()``), before any is moved."""
        names = [(key, getattr(spec, key)) for key in ("w", "A", "SV", "counts")]
        names += [(f"extra_counts[{i}]", entry[0]) for i, entry in enumerate(spec.extra_counts)]
        for key, attr in names:
            if attr is not None and not hasattr(self, attr):
                raise ValueError(f"{self.name or type(self).__name__}.compiled_plan(): Plan field {key}={attr!r} "
                                 f"names no attribute of the learner; name one of its state attributes "
                                 f"({', '.join(getattr(self, '_state_attrs', ())) or 'none declared'})")

    def learn_one(self, x, y) -> "Learner":
        """One online round with example ``x`` and label/target ``y`` (:meth:`_learn_round`)."""
        self._learn_round(x, y)
        return self

    def _learn_round(self, x, y) -> float:
        """learn_one returning the round's decision (before learning); a classifier's calibration
        learns it. The fast plan's one compiled call when it takes the event, else
        :meth:`_learn_event`; ``okl stream`` uses it."""
        fp = getattr(self, "_event", NO_EVENT).plan
        if fp is None and type(x) is NDARRAY:  # (the plan takes only such rows: a sparse row builds none)
            self._check_usable()  # (a copy of a failed learner has no event state)
            fp = self._fast_plan()
        # (a target beyond MAX_ABS_FEATURE, which run() refuses, takes the generic path, which refuses it)
        if fp and type(x) is NDARRAY and type(y) in FLOAT_TYPES and -MAX_ABS_FEATURE <= y <= MAX_ABS_FEATURE:
            n = self.n_seen_
            center = fp.center
            if center:  # the model learns the residual from the running mean (Heads.centers_targets)
                mu = self.target_sum_ / n if n else 0.0
                r = y - (self.target_sum_ + y) / (n + 1)  # self.heads.residual(self, y), inline: the per-event path
            else:
                mu, r = 0.0, y
            try:
                f, c = fp.learn(fp.F, x, r, n)
            except TypeError:  # not a float64, C-contiguous, 1-D array
                c = BAD_ROW
            if c >= 0 and f - f == 0.0:
                self.n_seen_ = n + 1
                if c:  # the learner's counter changed (okl.engine.fastpath.event_learn)
                    setattr(self, fp.counts, c - 1)
                if center:
                    self.target_sum_ += y
                    return f + mu
                return f
            if c != BAD_ROW and c != BAD_LABEL:
                return self._fast_round_end(fp, y, r, mu, f, c)
        return self._learn_generic(x, y)

    def _learn_generic(self, x, y) -> float:
        """learn_one through the generic hooks (:meth:`_learn_event`), then the calibration's step:
        the event no fast plan took (``auto``'s plan falls back here too)."""
        self._check_usable()
        if is_sparse_matrix(x):
            return self._sparse_event(x, y, True)
        was_started = self.started_
        f = self._learn_event(x, y)
        if was_started and self.calibration_ is not None:
            calibration.update_one(self.calibration_, f, float(y))
        return f

    def _fast_round_end(self, fp, y, r, mu, f, c) -> float:
        """The rest of a fast round that needs Python: the transition or an update round (``c``;
        the row's scaled form is in the plan; ``r`` the label or residual it learns), or a
        decision that is not finite (raises)."""
        n = self.n_seen_
        if c == WINDOW_DONE:  # InputMap.advance: the buffered rows fix the scale and the width
            self.n_seen_ = n + 1
            if fp.center:
                self.target_sum_ += y
                f += mu
            drop_event_cache(self)
            with one_blas_thread():
                self.inputs.finish_warmup(self)
            return f
        python_step = c == UPDATE_DUE or c == TRANSITION_DUE
        if python_step:
            if fp.counts is not None:
                setattr(self, fp.counts, fp.counter)
            drop_event_cache(self)  # the map and the weights are replaced
            with one_blas_thread():
                if c == UPDATE_DUE:
                    self._update_round(fp.xs.copy(), r, f)
                else:
                    self._transition(fp.xs.copy(), r, f, n)
        elif c:
            setattr(self, fp.counts, c - 1)
        self.n_seen_ = n + 1
        if fp.center:
            self.target_sum_ += y
            f += mu
        if not math.isfinite(f):
            self._non_finite(n)
        if python_step and self.calibration_ is not None:
            calibration.update_one(self.calibration_, f, float(y))
        return f

    def _learn_event(self, x, y) -> float:
        """learn_one returning the decision made before learning (the round's prediction)."""
        x, checked = self._event_row(x)
        if self.n_outputs_:
            y = self._class_index(y)
        elif type(y) not in FLOAT_TYPES or not (y == 1.0 or y == -1.0 or (
                self._event_loss().task != "classification" and -MAX_ABS_FEATURE <= y <= MAX_ABS_FEATURE)):
            y = check_target(y, self.task)
        else:
            y = float(y)
        if self.started_:
            ev = event_state(self)
            cache, z = ev.cache, None
            if cache is not None:
                ev.cache = None
                if cache[1] == self.n_seen_ and cache[0] == x.tobytes():
                    z = cache[2]
            # the row as the model sees it (its values checked; a spread it fixes is stored: the
            # generic path below scales it again to the same values)
            spread = self.scale_spread_
            pending = z is not None and spread is not None and not spread.all()
            before = spread.copy() if pending else None
            xs = self.inputs.scaled_row(self, x, commit=True)
            if pending and not np.array_equal(before, spread):
                z = None  # x fixed a spread: its features are computed again, as run() maps it
            # (_event_learn checks the values of x when it computes its features)
            if self.heads.centers_targets(self, ev):
                mu = self.heads.target_mean(self)
                f = self._event_learn(xs, self.heads.residual(self, y), z, ev)
                if f is not None:
                    f += mu
                    self.target_sum_ += y
            else:
                f = self._event_learn(xs, y, z, ev)
            if f is not None:
                self.n_seen_ += 1
                if not np.isfinite(f).all():
                    self._non_finite(self.n_seen_ - 1)
                return f
        if not checked:
            self._check_values(x)
        self.inputs.ensure_started(self, x.shape[0])
        drop_event_cache(self)
        if (self._event_heavy() if self.started_ else self.n_seen_ >= WIDTH_WINDOW - 1):
            with one_blas_thread():
                f = self.inputs.advance(self, x[None, :], np.array([y]))[0]
        else:
            f = self.inputs.advance(self, x[None, :], np.array([y]))[0]
        return f if self.n_outputs_ else float(f)

    def _class_index(self, y) -> float:
        """A K-output learner's label: the class index 0..K-1 (as a float)."""
        if isinstance(y, (bool, np.bool_)) or not isinstance(y, (int, float, np.integer, np.floating)) \
                or not float(y).is_integer() or not 0 <= y < self.n_outputs_:
            raise ValueError(f"label {y!r}: a learner with {self.n_outputs_} outputs takes class indices "
                             f"0..{self.n_outputs_ - 1}")
        return float(y)

    def _event_heavy(self) -> bool:
        """Whether the next round may run matrix factorisations (then BLAS is held to one thread
        as in :meth:`run`; entering that costs ~10 us, so not on every round)."""
        return False

    # ---- mini-batches (River's predict_many / learn_many) -----------------------------------

    def predict_many(self, X) -> np.ndarray:
        """Decisions f(x) of the current model for every row of ``X`` (no learning)."""
        self._check_usable()
        X = check_matrix(X, self.dim_)
        if self.dim_ is None:
            return np.zeros(X.shape[0])
        if not self.started_:
            return np.array([self.inputs.warmup_decision(self, x) for x in X], dtype=float).reshape(
                (X.shape[0], self.n_outputs_) if self.n_outputs_ else X.shape[0])
        out = self.heads.new_decisions(self, X.shape[0])
        ev = event_state(self)
        ev.cache = None  # the features below may reuse the cached features' work space
        for i, x in enumerate(self.inputs.scaled_rows(self, X, commit=False)):
            r = self._event_features(x, ev)
            out[i] = r[0] if r is not None else self._decision(x)
        if self.heads.centers_targets(self):
            out += self.heads.target_mean(self)
        return out

    def learn_many(self, X, y) -> np.ndarray:
        """Test-then-train over the rows of a mini-batch: row i is predicted with the model that
        learned rows < i (as :meth:`run`, through the same compiled loop); returns the decisions.
        A SciPy sparse matrix stays sparse (:mod:`okl._sparse`)."""
        self._check_usable()
        X = check_matrix(X, self.dim_, sparse=True)
        y = check_targets(y, self.task, X.shape[0])
        if X.shape[0] == 0:
            return np.empty(0)
        self.inputs.ensure_started(self, X.shape[1])
        drop_event_cache(self)
        with one_blas_thread():
            return np.asarray(self.inputs.advance(self, X, y), dtype=float)
