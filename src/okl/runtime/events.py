"""The per-event path of a learner (``predict_one`` / ``learn_one`` / River's mini-batches): the
cache kept outside the learner and the :class:`EventPath` mixin of :class:`okl.runtime.base.Learner`."""

from __future__ import annotations

import math

import numpy as np

import okl.calibration as calibration
from okl._compiled import row_ok as _row_ok
from okl._threads import one_blas_thread
from okl._sparse import SparseRows, is_sparse_matrix
from okl._validation import MAX_ABS_FEATURE, check_matrix, check_target, check_vector
from okl.kernels import WIDTH_WINDOW
from okl.components import EVENT, MAPS, STEPS, Plan
from okl.engine.fastpath import BAD_LABEL, BAD_ROW, TRANSITION_DUE, UPDATE_DUE, WINDOW_DONE, build as build_fast_plan
from okl.runtime.state import _F64, layout_key
from okl.runtime.trace import NonFiniteError, divergence_message
from okl.losses import Loss, get_loss
from okl.runtime.hyperparameters import param_names


class _EventState:
    """A learner's per-event cache, work space and fast plan (:meth:`Learner.predict_one`), in the
    learner's ``_event`` slot (:class:`okl.runtime.base.Learner`), not in its ``__dict__``: never
    saved, pickled or copied (a copy gets a fresh one), and never in ``vars(learner)``; made with the
    learner (:func:`okl.runtime.categorical.new_learner`), so the per-event path reads it without a test. ``plan``: the fast plan
    (:class:`okl.engine.fastpath.FastPlan`, ``AutoPlan`` for auto), False (none in the current
    state), :data:`_NEVER` (none for its class) or None (not tried yet). ``layout``: the
    :func:`~okl.runtime.state.layout_key` of the state last found to fit the learner's layout
    (:meth:`Learner.check_layout`), or left by the learner's own round from such a state
    (:meth:`EventPath.learn_generic`); None: none checked. Kept here, outside the learner's state,
    so that checking never changes what a learner holds (and a copy is checked anew)."""

    __slots__ = ("cache", "buf", "loss", "window", "plan", "layout")

    def __init__(self):
        self.cache = self.buf = self.loss = self.window = self.plan = self.layout = None


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


def event_state(learner) -> _EventState:
    """The learner's :class:`_EventState` (made with the learner: :func:`okl.runtime.categorical.new_learner`)."""
    return learner._event


def fast_plan_of(learner):
    """The learner's fast plan: a plan, False (none in its state), :data:`_NEVER` or None (not tried)."""
    return learner._event.plan


def drop_event_cache(learner) -> None:
    """Forget the features cached by predict_one and the fast plan (the state is about to change,
    and its arrays may be replaced)."""
    ev = learner._event
    ev.cache = None
    if ev.plan is not _NEVER:
        ev.plan = None


FLOAT_TYPES = (float, np.float64)
NDARRAY = np.ndarray


class EventPath:
    """A learner's per-event path (``Learner.events``, one object per class, holding nothing: the
    learner's event state is in its ``_event`` slot): predict_one and learn_one through the fast
    plan or the generic hooks, River's and ``okl stream``'s blocks of events, sparse rows, and the
    numerical failure that leaves the learner unusable until ``reset_state``. A learner whose events
    take another route (``auto``'s engine) gives a subclass.

    The fast plan (issue 24, :mod:`okl.engine.fastpath`): a learner with ``compiled_plan()``
    (NOGD, FOGD, SkeGD, FORKS with the code's ONS, the linear learner; in the width window and
    both stages; ``auto`` has its own, :class:`okl.engine.roots.AutoPlan`) gets a plan kept in its
    event state (:func:`fast_plan_of`): predict_one is then one compiled call (row check, input
    scale, features, decision) and learn_one one more (the step and the calibration on
    predict_one's features when x and n_seen_ are those of the last prediction), on the common
    input: a float64, 1-D, C-contiguous ndarray of the learner's width and a float label (anything
    else, a refused value, target centring's bookkeeping and the learner's Python transitions and
    update rounds go through the code below). Every path that changes the state otherwise drops
    the plan with the event cache.

    The generic hooks: ``_event_features(x, ev) -> (f, z) | None`` and ``_event_learn(x, y, z,
    ev) -> f | None`` compute the features z of x in predict_one (one compiled call), and the
    learn_one that follows for the same x (same bytes) in the same state (same n_seen_, nothing
    learned in between) learns from them without computing them again. The cache lives outside
    the learner (:class:`_EventState`: never saved, pickled or copied); every learning round,
    load, clone and check_state drops it. The common input is checked for finiteness and
    magnitude inside the compiled call; anything else goes through
    :func:`okl._validation.check_vector`."""

    def fail(self, learner, message: str) -> NonFiniteError:
        """Mark the learner unusable (``message``: the error's text) and return the error to raise;
        its fast plan is off for good (kept across state changes), so every entry point takes the
        generic path, which calls :meth:`check_usable`."""
        learner._failure = message
        ev = event_state(learner)
        ev.cache, ev.plan = None, _NEVER
        return NonFiniteError(message)

    def check_usable(self, learner) -> None:
        """Raise a :class:`NonFiniteError` (the failure's message) when a numerical failure left the
        state unusable: predicting, learning and saving are refused until :meth:`reset_state`."""
        if learner._failure is not None:
            raise NonFiniteError(f"refused: an earlier numerical failure left this learner unusable; call reset_state() "
                                 f"(it forgets everything learned) or make a new learner. {learner._failure}")

    def sparse_event(self, learner, x, y, learn: bool):
        """predict_one (``learn`` False) / learn_one on a sparse row (a SciPy sparse matrix of one
        row) through the generic hooks on its dense copy, with its non-zero columns in
        :attr:`_nonzero` while it runs: a width window that starts with it maps the input as sparse
        rows' windows do (zeros stay zero: :func:`okl.scaling.window_scale`), so the decisions are
        those of ``run()`` on the CSR rows; ``auto``'s engine members take its non-zeros (O(nnz)
        each). The row check and input map cost O(d)."""
        rows = check_matrix(x, learner.dim_, sparse=True)
        if rows.shape[0] != 1:
            raise ValueError(f"x must be one example: a sparse matrix of shape (1, features), got shape {rows.shape}")
        learner._nonzero = learner.inputs.kept_nonzero(learner, rows.indices)
        try:
            return self.learn_generic(learner, rows[0], y) if learn else self.predict_event(learner, rows[0])
        finally:
            learner._nonzero = None

    def event_row(self, learner, x) -> tuple[np.ndarray, bool]:
        """(x, values_checked): the common case is only shape-checked here (its values are checked
        in the compiled call that reads them); anything else gets the full check."""
        if type(x) is np.ndarray and x.dtype is _F64 and x.ndim == 1 and learner.dim_ is not None \
                and x.shape[0] == learner.dim_ and x.flags.c_contiguous:
            return x, False
        return check_vector(x, learner.dim_), True

    def check_values(self, learner, x: np.ndarray) -> None:
        """Finite entries of magnitude at most MAX_ABS_FEATURE (one compiled call); raises the
        message of :func:`~okl._validation.check_vector` otherwise."""
        if not _row_ok(x, MAX_ABS_FEATURE):
            check_vector(x, learner.dim_)

    def learn_events(self, learner, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """learn_one over the rows of a validated block (float64, C-contiguous, the learner's
        width; labels/targets checked), through :meth:`_event_block` where the learner has it:
        decisions equal to a learn_one loop, bit for bit (what ``okl stream`` uses, so a resumed
        stream prints exactly the uninterrupted predictions)."""
        self.check_usable(learner)
        n = X.shape[0]
        out = learner.heads.new_decisions(learner, n)
        drop_event_cache(learner)
        # the running means of the whole block at once: row i's is the same whichever path learns
        # it (learn_one adds the same targets in the same order)
        mu = None
        if learner.heads.centers_targets(learner):
            mu, residual, sums = learner.heads.running_target_means(learner, y)
        i = 0
        while i < n:
            if learner.started_:
                pending = learner.scale_spread_ is not None and not learner.scale_spread_.all()
                # the rows as the model will see them when it learns them in order; a spread that
                # a row fixes is stored only once that row is learned (below), so a checkpoint
                # never holds a spread fixed by a row it has not learned
                Xs = learner.inputs.scaled_rows(learner, X[i:], commit=pending,
                                       spread=learner.scale_spread_.copy() if pending else None)
                k = learner._event_block(Xs, y[i:] if mu is None else residual[i:], out[i:])
                if k and pending:
                    learner.inputs.scaled_rows(learner, X[i:i + k], commit=True)
                if k and mu is not None:
                    out[i:i + k] += mu[i:i + k]
                    learner.target_sum_ = float(sums[i + k])
                if k:
                    first = learner.n_seen_
                    learner.n_seen_ += k
                    self.check_finite(learner, out[i:i + k], first)
                    i += k
                    continue
            if isinstance(X, SparseRows):  # (a sparse row: its window maps it as run() maps sparse rows)
                learner._nonzero = learner.inputs.kept_nonzero(learner, X.row(i)[0])
            try:
                out[i] = self.learn_event(learner, X[i], y[i])
            finally:
                learner._nonzero = None
            i += 1
        return out

    def loss(self, learner, ev: _EventState | None = None) -> Loss:
        """:attr:`loss_`, looked up once per loss name (not saved)."""
        ev = ev or event_state(learner)
        name = getattr(learner, "loss", "hinge")
        if ev.loss is None or ev.loss[0] is not name:
            ev.loss = (name, get_loss(name))
        return ev.loss[1]

    def predict_event(self, learner, x) -> float:
        """predict_one through the generic hooks (any input, any state; a fast plan is built
        first when none was tried in this state)."""
        if learner._failure is not None:  # (the test inline: this runs every event)
            self.check_usable(learner)
        dense = type(x) is NDARRAY  # (then no sparse test: the common row costs no call)
        if not dense and is_sparse_matrix(x):
            return self.sparse_event(learner, x, None, False)
        ev = learner._event
        if ev.plan is None and dense and learner._nonzero is None and self.fast_plan(learner):
            return learner.predict_one(x)
        x, checked = self.event_row(learner, x)
        if learner.dim_ is None:
            return np.zeros(learner.n_outputs_) if learner.n_outputs_ else 0.0
        if learner.started_:
            xs = learner.inputs.scaled_row(learner, x, commit=False)
            r = learner._event_features(xs, ev)
            if r is not None:
                ev.cache = (x.tobytes(), learner.n_seen_, r[1])
                return r[0] + learner.heads.target_mean(learner) if learner.heads.centers_targets(learner, ev) else r[0]
        if not checked:
            self.check_values(learner, x)
        if not learner.started_:
            return learner.inputs.warmup_decision(learner, x)
        f = learner._decision(xs)
        if learner.n_outputs_:
            return f
        f = float(f)
        return f + learner.heads.target_mean(learner) if learner.heads.centers_targets(learner) else f

    def fast_plan(self, learner):
        """Build this learner's fast plan for its current state and keep it in its event state
        (False: none now; dropped with the event cache)."""
        ev = event_state(learner)
        if getattr(type(learner).compiled_plan, "declares_none", False):  # (the base class's: no plan)
            ev.plan = _NEVER
            return _NEVER
        spec = plan = None
        # (a single learner's K outputs run in auto's engine: okl.runtime.multiclass)
        if learner.started_ and not learner.n_outputs_:
            spec = learner.compiled_plan()
            if spec is not None and not (EVENT in MAPS[spec.map].paths and EVENT in STEPS[spec.step].paths):
                ev.plan = _NEVER  # (a map or step this path does not have, in every state)
                return _NEVER
        elif not learner.n_outputs_ and learner.dim_ is not None and getattr(learner, "warmup_X_", None) is not None and (
                self.loss(learner).task == "classification" or learner.heads.centers_targets(learner)):
            # the width window: rows and labels buffered, predicted by their running mean (exact
            # here: labels -1 / +1, or the targets' running mean added by the caller)
            spec = Plan("warmup", "none", SV="warmup_X_", w="warmup_y_")
        if spec is not None:
            self.check_plan_names(learner, spec)
            plan = build_fast_plan(learner, spec)
            if plan:  # Learner.learn_one runs the plan's round itself when this path's round is the class's
                plan.direct = not plan.center and type(learner.events).learn_round is EventPath.learn_round
        ev.plan = plan = plan or False
        return plan

    def check_plan_names(self, learner, spec: Plan) -> None:
        """ValueError naming the :class:`~okl.components.Plan` field whose attribute name the
        learner does not have (a contributed learner's ``compiled_plan()``), before any is moved."""
        names = [(key, getattr(spec, key)) for key in ("w", "A", "SV", "counts")]
        names += [(f"extra_counts[{i}]", entry[0]) for i, entry in enumerate(spec.extra_counts)]
        for key, attr in names:
            if attr is not None and not hasattr(learner, attr):
                raise ValueError(f"{learner.name or type(learner).__name__}.compiled_plan(): Plan field {key}={attr!r} "
                                 f"names no attribute of the learner; name one of its state attributes "
                                 f"({', '.join(getattr(learner, '_state_attrs', ())) or 'none declared'})")

    def learn_round(self, learner, x, y) -> float:
        """learn_one returning the round's decision (before learning); a classifier's calibration
        learns it. The fast plan's one compiled call when it takes the event, else
        :meth:`learn_event`; ``okl stream`` uses it."""
        fp = learner._event.plan
        if fp is None and type(x) is NDARRAY:  # (the plan takes only such rows: a sparse row builds none)
            self.check_usable(learner)  # (a copy of a failed learner has a fresh event state)
            fp = self.fast_plan(learner)
        # (a target beyond MAX_ABS_FEATURE, which run() refuses, takes the generic path, which refuses it)
        if fp and type(x) is NDARRAY and type(y) in FLOAT_TYPES and -MAX_ABS_FEATURE <= y <= MAX_ABS_FEATURE:
            n = learner.n_seen_
            center = fp.center
            if center:  # the model learns the residual from the running mean (Heads.centers_targets)
                mu = learner.target_sum_ / n if n else 0.0
                r = y - (learner.target_sum_ + y) / (n + 1)  # heads.residual(learner, y), inline: the per-event path
            else:
                mu, r = 0.0, y
            learn = fp.learn  # (a slot read, as in Learner.predict_one)
            try:
                f, c = learn(fp.F, x, r, n)
            except TypeError:  # not a float64, C-contiguous, 1-D array
                c = BAD_ROW
            if c >= 0 and f - f == 0.0:
                learner.n_seen_ = n + 1
                if c:  # the learner's counter changed (okl.engine.fastpath.event_learn)
                    setattr(learner, fp.counts, c - 1)
                if center:
                    learner.target_sum_ += y
                    return f + mu
                return f
            if c != BAD_ROW and c != BAD_LABEL:
                return self.fast_round_end(learner, fp, y, r, mu, f, c)
        return self.learn_generic(learner, x, y)

    def learn_generic(self, learner, x, y) -> float:
        """learn_one through the generic hooks (:meth:`learn_event`), then the calibration's step:
        the event no fast plan took (``auto``'s plan falls back here too)."""
        if learner._failure is not None:  # (the test inline: this runs every event)
            self.check_usable(learner)
        if type(x) is not NDARRAY and is_sparse_matrix(x):
            return self.sparse_event(learner, x, y, True)
        was_started = learner.started_
        stamp = learner._event.layout
        f = self.learn_event(learner, x, y)
        if was_started and learner.calibration_ is not None:
            calibration.update_one(learner.calibration_, f, float(y))
        checked = learner._event.layout
        if checked is not stamp and checked is not None:
            # the learner's round checked its layout (Learner.check_layout stamped it anew) and
            # then ran its own code, which keeps the layout (run() likewise checks once, then trusts
            # its rounds): the state it leaves counts as checked, so the next call's check is a lookup
            learner._event.layout = layout_key(learner)
        return f

    def fast_round_end(self, learner, fp, y, r, mu, f, c) -> float:
        """The rest of a fast round that needs Python: the transition or an update round (``c``;
        the row's scaled form is in the plan; ``r`` the label or residual it learns), or a
        decision that is not finite (raises)."""
        n = learner.n_seen_
        if c == WINDOW_DONE:  # InputMap.advance: the buffered rows fix the scale and the width
            learner.n_seen_ = n + 1
            if fp.center:
                learner.target_sum_ += y
                f += mu
            drop_event_cache(learner)
            with one_blas_thread():
                learner.inputs.finish_warmup(learner)
            return f
        python_step = c == UPDATE_DUE or c == TRANSITION_DUE
        if python_step:
            if fp.counts is not None:
                setattr(learner, fp.counts, fp.counter)
            drop_event_cache(learner)  # the map and the weights are replaced
            with one_blas_thread():
                if c == UPDATE_DUE:
                    learner._update_round(fp.xs.copy(), r, f)
                else:
                    learner._transition(fp.xs.copy(), r, f, n)
        elif c:
            setattr(learner, fp.counts, c - 1)
        learner.n_seen_ = n + 1
        if fp.center:
            learner.target_sum_ += y
            f += mu
        if not math.isfinite(f):
            self.non_finite(learner, n)
        if python_step and learner.calibration_ is not None:
            calibration.update_one(learner.calibration_, f, float(y))
        return f

    def learn_event(self, learner, x, y) -> float:
        """learn_one returning the decision made before learning (the round's prediction)."""
        x, checked = self.event_row(learner, x)
        if learner.n_outputs_:
            y = self.class_index(learner, y)
        elif type(y) not in FLOAT_TYPES or not (y == 1.0 or y == -1.0 or (
                self.loss(learner).task != "classification" and -MAX_ABS_FEATURE <= y <= MAX_ABS_FEATURE)):
            y = check_target(y, learner.task)
        else:
            y = float(y)
        if learner.started_ and not getattr(type(learner)._event_learn, "declares_none", False):
            ev = event_state(learner)
            cache, z = ev.cache, None
            if cache is not None:
                ev.cache = None
                if cache[1] == learner.n_seen_ and cache[0] == x.tobytes():
                    z = cache[2]
            # the row as the model sees it (its values checked; a spread it fixes is stored: the
            # generic path below scales it again to the same values)
            spread = learner.scale_spread_
            pending = z is not None and spread is not None and not spread.all()
            before = spread.copy() if pending else None
            xs = learner.inputs.scaled_row(learner, x, commit=True)
            if pending and not np.array_equal(before, spread):
                z = None  # x fixed a spread: its features are computed again, as run() maps it
            # (_event_learn checks the values of x when it computes its features)
            if learner.heads.centers_targets(learner, ev):
                mu = learner.heads.target_mean(learner)
                f = learner._event_learn(xs, learner.heads.residual(learner, y), z, ev)
                if f is not None:
                    f += mu
                    learner.target_sum_ += y
            else:
                f = learner._event_learn(xs, y, z, ev)
            if f is not None:
                learner.n_seen_ += 1
                if not (np.isfinite(f).all() if learner.n_outputs_ else f - f == 0.0):  # (a float: no NumPy call)
                    self.non_finite(learner, learner.n_seen_ - 1)
                return f
        if not checked:
            self.check_values(learner, x)
        learner.inputs.ensure_started(learner, x.shape[0])
        drop_event_cache(learner)
        if (learner._event_heavy() if learner.started_ else learner.n_seen_ >= WIDTH_WINDOW - 1):
            with one_blas_thread():
                f = learner.inputs.advance(learner, x[None, :], np.array([y]))[0]
        else:
            f = learner.inputs.advance(learner, x[None, :], np.array([y]))[0]
        return f if learner.n_outputs_ else float(f)

    def class_index(self, learner, y) -> float:
        """A K-output learner's label: the class index 0..K-1 (as a float)."""
        if isinstance(y, (bool, np.bool_)) or not isinstance(y, (int, float, np.integer, np.floating)) \
                or not float(y).is_integer() or not 0 <= y < learner.n_outputs_:
            raise ValueError(f"label {y!r}: a learner with {learner.n_outputs_} outputs takes class indices "
                             f"0..{learner.n_outputs_ - 1}")
        return float(y)

    def check_finite(self, learner, out: np.ndarray, first: int) -> None:
        """Raise :meth:`non_finite` for the first round (``first`` + row) of ``out`` whose
        decision (any output) is not finite."""
        ok = np.isfinite(out)
        if not ok.all():
            bad = ~ok.reshape(len(out), -1).all(axis=1)
            self.non_finite(learner, first + int(np.flatnonzero(bad)[0]))

    def non_finite(self, learner, round_index: int | None) -> None:
        """Raise the :class:`NonFiniteError` of round ``round_index`` (None: of the block just
        learned), the learner marked unusable until :meth:`reset_state`."""
        raise self.fail(learner, divergence_message(learner.name or type(learner).__name__, round_index,
                                                    learner._divergence_hint, "kernel" in param_names(learner)))

    def learn_rounds(self, learner, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """:meth:`learn_events` (a learn_one loop over a validated block, in compiled loops) with
        the calibration; ``okl stream`` uses it (a CSR block: to a learner that :attr:`accepts_csr`)."""
        if is_sparse_matrix(X):
            X = check_matrix(X, learner.dim_, sparse=True)
        start_round, was_started = learner.n_seen_, learner.started_
        out = self.learn_events(learner, X, y)
        learner.heads.calibrate(learner, out, y, start_round, was_started)
        return out


#: the per-event path of every learner that does not give its own
EVENTS = EventPath()
