"""The learner protocol, the per-run :class:`Trace`, safe model files and the learner registry.

This module holds :class:`Learner` and re-exports every name of the protocol, which lives in one
module per concern: :mod:`okl.runtime.trace` (:class:`Trace`, :func:`mistakes_of`),
:mod:`okl.runtime.state` (the state declarations and their checker),
:mod:`okl.runtime.modelfile` (save / load / check_state), :mod:`okl.runtime.events` (the per-event
path), :mod:`okl.runtime.inputs` (the input map), :mod:`okl.runtime.heads` (the heads) and
:mod:`okl.runtime.registry` (``register``, ``make``, ``learners``, ``select_params``).

A learner is composed of four objects besides its model, each a class attribute holding no state
of its own (the state stays the learner's attributes, so model files are unchanged) and declaring
its part of the state: its input map ``inputs`` (:class:`okl.runtime.inputs.InputMap`: the width
window, the input scale, the chosen width, categorical columns), its heads ``heads``
(:class:`okl.runtime.heads.Heads`: one output or K, target centring, calibration), its per-event
path ``events`` (:class:`okl.runtime.events.EventPath`: the fast plan, the generic hooks, numerical
failures) and its state I/O ``files`` (:class:`okl.runtime.modelfile.StateIO`: model files, the
state's declaration and checks). The model is the learner's own hooks below (or a compiled plan,
``compiled_plan()``). A learner that needs another behaviour gives a subclass of one of them
(``auto``: :class:`okl.ensemble.auto.PoolInputs`, ``PoolHeads``, ``PoolEvents``, ``PoolFiles``;
the window: its ``WindowHeads``); :class:`Learner` itself keeps the public protocol and the hooks.

Every learner (DESIGN.md, "The learner protocol"):

* takes only hyperparameters in ``__init__`` (validated there, scikit-learn style) plus
  ``random_state``; state is created at the first example, when the input dimension is known;
* ``predict_one(x)`` returns the decision value f_t(x) without changing state;
* ``learn_one(x, y)`` runs one online round with the true label/target;
* ``run(X, y)`` runs the whole test-then-train protocol and returns a :class:`Trace` whose
  ``decisions[t]`` is f_t(x_t) computed *before* learning (x_t, y_t);
* ``save(path)`` / ``load(path)`` store the complete state in one ``.npz`` file without pickle
  (arrays plus a JSON header).

Subclasses implement three hooks:

``_start(dim)``
    create the state for inputs of dimension ``dim``.
``_decision(x)``
    f(x) under the current state (no change).
``_process(X, y) -> decisions``
    run test-then-train over a block of rows, mutating the state. ``learn_one`` calls it with a
    single row, so the per-instance loop and ``run`` share one code path; ``run`` may process rows
    in chunks and call compiled loops, and a generic test checks that both agree to 1e-9.

Every learner also takes ``categorical=[column indices]`` (None by default; added to each
``__init__`` once, by :mod:`okl.runtime.categorical`): those columns hold category codes, each level
becomes an indicator column by :mod:`okl.categories`' rule (levels seen in the width window get
their own, later ones hashed columns), on every entry point, with the levels in model files and
``okl stream`` checkpoints. With None, a learner is exactly its class: same path, same numbers.

State attributes are listed in ``_state_attrs``; arrays, numbers, strings, ``None``, lists and
``numpy.random.Generator`` objects are saved.

Per-event path (optional hooks, issue 17): ``_event_features(x, ev) -> (f, z) | None`` computes
the decision and the features of one row in one compiled call (predict_one caches them, keyed on
the bytes of x and ``n_seen_``, dropped by every change of state; ``ev``, the learner's work space
and cache, is kept outside the learner: never saved, pickled or copied), ``_event_learn(x, y, z, ev)
-> f | None`` learns the row from them (or computes them), ``_event_block(X, y, out) -> rows done``
runs the same per-row arithmetic over a block (``okl stream``); NOGD, SkeGD, FORKS (code ONS) and
FOGD have them, every other learner takes the generic path (``_decision`` / ``inputs.advance``). Those four,
the linear learner, the window and KLMS also declare ``compiled_plan()`` (a map and a step of
:mod:`okl.components`), and ``auto`` has its own plan on its engine: then predict_one and
learn_one are one compiled call each
(:mod:`okl.engine.fastpath`; the plan is kept outside the learner and moves its mutable arrays
into its buffer, so they are views of it).
``predict_many`` / ``learn_many`` are River's mini-batch methods (test-then-train inside the batch).

Declaring the state (model files are untrusted input)
    Each learner declares its whole state once, in ``_state_spec(self) -> StateSpec``: every name
    of ``_state_attrs`` maps to ``Arr(shape, dtype, finite=True, low=None, high=None,
    optional=False)``, ``Num(kind, low, high, optional=False)``, ``Seq(length, low, high)`` (a
    list of ints) or ``Opaque()``. Shape entries and bounds are numbers computed from the
    hyperparameters, or names: ``"dim"``, ``"n_seen"``, a size declared in ``sizes={"j": (low,
    high)}`` (fixed by the first array that uses it, equal everywhere after), or a scalar field
    declared before; a tuple of bounds means their minimum. ``groups`` are attributes that are None
    together (a stage not reached), ``rules`` extra ``(predicate(learner), field, message)``
    checks. For example KOGD::

        def _state_spec(self):
            cap_high = self.budget if self.budget is not None else max(64, 2 * self.n_seen_)
            return StateSpec(sizes={"cap": (1, cap_high)}, fields={
                "SV_": Arr(("cap", "dim")), "alpha_": Arr(("cap",)),
                "m_": Num(int, 0, ("cap", "n_seen"))})

    :meth:`Learner.load` checks the declaration (plus the base state: generator, kernel, width
    window, ``dim``, ``n_seen``) in two passes: shapes, dtypes and numbers from the ``.npy``
    headers *before* any array is read (a header or zip bomb is refused without allocating), then
    the contents (finiteness, element ranges, rules). Every refusal is a :class:`ModelFileError`
    naming the file and the field; read-only or non-contiguous arrays are copied, not refused.
    :meth:`Learner.check_state` runs the same check on a live learner. A learner without a
    declaration (``_state_spec`` returns None, the default) gets the base checks only: nothing
    extra is refused, but its compiled loops are then exposed to forged files, so declare it.
    tests/test_untrusted_files.py forges files over every registered learner.
"""

from __future__ import annotations

import math
import time
from typing import Any, ClassVar

import numpy as np

from okl._threads import one_blas_thread
from okl._validation import MAX_ABS_FEATURE, check_matrix, check_targets
from okl.kernels import WIDTH_WINDOW
from okl.losses import Loss, get_loss

from okl.runtime.categorical import new_learner, takes_categorical
from okl.runtime.params import SHARED_PARAMETER_DOCS, with_categorical, with_shared_parameters  # noqa: F401
from okl.runtime.heads import HEADS, Heads, Probabilities
from okl.runtime.inputs import INPUT_MAP, InputMap
from okl.components import ENGINE, Plan, runs_everywhere
from okl.engine.fastpath import BAD_LABEL, BAD_ROW, FastPlan
from okl.runtime.events import EVENTS, FLOAT_TYPES, NDARRAY, EventPath, drop_event_cache, event_state, _EventState  # noqa: F401
from okl.runtime.modelfile import STATE_IO, ModelFiles, StateIO, _available_memory, _writable  # noqa: F401
from okl.runtime.registry import (KINDS, _BY_KIND, _REGISTRY, _check_kind, _kind_of, accepts, learner_class,  # noqa: F401
                                  learner_kind, learners, make, register, select_params)
from okl.runtime.state import (_F64, MAX_DIM, MAX_HEADER_BYTES, MAX_ROUNDS, MODEL_FORMAT, MODEL_FORMAT_VERSION,  # noqa: F401
                               _BASE_STATE, Arr, ModelFileError, Num, Opaque, Seq, StateError, StateSpec,
                               _base_spec, _decode_param, encode_param, _Header, _SpecChecker)
from okl.runtime.trace import NonFiniteError, Trace, divergence_message, mistakes_of  # noqa: F401
from okl.runtime.hyperparameters import param_names


class Learner(Probabilities, ModelFiles):
    """Base class of every online learner (see the module docstring for the protocol)."""

    #: the per-event cache, work space and fast plan (:class:`okl.runtime.events._EventState`, made
    #: by ``__new__`` for a learner, a copy or an unpickled one): a slot, so never in ``vars()``,
    #: model files, pickles or copies
    __slots__ = ("_event",)

    def __getstate__(self):
        """What pickling and copying take: the attributes, without the event state (a copy or an
        unpickled learner makes its own at its first event)."""
        return self.__dict__

    def __new__(cls, *args, **kwargs):
        return new_learner(cls, kwargs)  # (categorical columns: okl.runtime.categorical)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.__doc__ = with_shared_parameters(with_categorical(cls.__doc__))
        takes_categorical(cls)  # every learner takes categorical= (okl.runtime.categorical)

    #: registry name given by :func:`register` (the CLI name)
    name: ClassVar[str] = ""
    #: the hyperparameters, declared once (:mod:`okl.runtime.hyperparameters`); model files save them
    hyperparameters: ClassVar[tuple] = ()
    _state_attrs: ClassVar[tuple[str, ...]] = ()  # the state model files save besides them
    #: rows per block in ``run`` (bounds the memory of chunked feature maps)
    chunk_size: ClassVar[int] = 4096
    #: the state I/O: model files and the state's declaration and checks (:class:`StateIO`)
    files: ClassVar[StateIO] = STATE_IO
    #: the heads: one output or K, target centring, calibration (:class:`okl.runtime.heads.Heads`)
    heads: ClassVar[Heads] = HEADS
    #: the input map: width window, input scale, categorical columns (:class:`okl.runtime.inputs.InputMap`)
    inputs: ClassVar[InputMap] = INPUT_MAP
    #: the per-event path: fast plan, generic hooks, failures (:class:`okl.runtime.events.EventPath`)
    events: ClassVar[EventPath] = EVENTS

    dim_: int | None = None
    n_seen_: int = 0
    started_: bool = False
    #: sum of the targets learned so far (see :meth:`okl.runtime.heads.Heads.centers_targets`)
    target_sum_: float = 0.0
    #: the input scale fixed in the window (:mod:`okl.scaling`; None: features as given)
    scale_center_: np.ndarray | None = None
    scale_spread_: np.ndarray | None = None
    #: the online calibration of the decisions (:mod:`okl.calibration`; None for regression)
    calibration_: np.ndarray | None = None
    #: outputs: 0 = one (labels -1/+1 or targets); K >= 1 = K one-vs-rest outputs over class
    #: indices, learned inside ``auto``'s engine (:mod:`okl.engine.core`; set by
    #: :class:`okl.runtime.multiclass.MultiClass` through :meth:`Heads.set_outputs`)
    n_outputs_: int = 0
    #: the state arrays that carry one row per output when ``n_outputs_`` >= 1, with the sign a
    #: mirrored output takes (-1: a weight, the opposite class's is -w; +1: a per-coordinate
    #: statistic such as AdaGrad's sums, the same for both); learners with K-output support set it
    _output_attrs: ClassVar[dict[str, float]] = {}

    # ---- hyperparameters -------------------------------------------------------------------

    def get_params(self) -> dict[str, Any]:
        """The hyperparameters given to ``__init__`` (scikit-learn style)."""
        return {p: getattr(self, p) for p in param_names(self)}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    @property
    def loss_(self) -> Loss:
        return get_loss(getattr(self, "loss", "hinge"))

    @property
    def task(self) -> str:
        """'classification' (labels -1/+1) or 'regression' (real targets), from the loss."""
        return self.loss_.task

    # ---- protocol ---------------------------------------------------------------------------

    def end_width_window(self) -> "Learner":
        """Fix the width now from the rows buffered so far, when a finite batch (a scikit-learn
        ``fit``) ended inside the width window; nothing happens otherwise."""
        if self.dim_ is not None and not self.started_ and self.n_seen_ > 0:
            drop_event_cache(self)
            self.warmup_X_ = self.warmup_X_[: self.n_seen_]
            self.warmup_y_ = self.warmup_y_[: self.n_seen_]
            self.inputs.finish_warmup(self)
        return self

    #: the remedy a :class:`NonFiniteError` names: the hyperparameter to change and the direction
    _divergence_hint: ClassVar[str] = "lower eta (the step size)"
    #: the width a learner that chooses its own takes, as a multiple of scale_sigma's (a smoother's
    #: neighbourhood is narrower than a fitted function's length scale: okl.learners.window)
    _width_factor: ClassVar[float] = 1.0
    #: a member of ``auto`` gets this many times auto's ``budget`` (the window keeps 2 B rows)
    _budget_scale: ClassVar[int] = 1
    #: how many input rows (d floats each) the learner keeps per unit of its budget, stored and in
    #: ``auto``'s engine (support vectors, landmarks, a window): its state is about this x budget x d
    #: floats (0: O(d) or not declared); ``auto`` leaves a default member out when that passes
    #: :data:`okl.ensemble.auto.MEMBER_INPUT_FLOATS`
    _rows_per_budget: ClassVar[int] = 0
    #: whether this learner takes CSR rows and blocks in its own sparse arithmetic (its
    #: :meth:`_process` takes :class:`okl._sparse.SparseRows`: ``auto``'s engine), so a reader hands
    #: them over as they are; every learner takes them, the others as dense rows and blocks of
    #: bounded size (:meth:`InputMap.process_rows`)
    accepts_csr: ClassVar[bool] = False
    #: whether the width window's rows came as sparse rows (then the input map keeps zeros zero:
    #: :func:`okl.scaling.window_scale`); set by the window's first row
    _sparse_window: bool = False
    #: the window's rows' non-zero columns where they came sparse (None where not known), kept while
    #: the window fills (not saved: ``auto``'s window estimate scans a row it lacks)
    _window_nonzero: list | None = None

    def run(self, X, y) -> Trace:
        """Test-then-train over the rows of ``X``; returns the :class:`Trace` (decisions before learning).

        Continues from the current state, so ``run`` on two halves equals ``run`` on the whole.
        """
        self.events.check_usable(self)
        X = check_matrix(X, self.dim_, sparse=True)
        y = check_targets(y, self.task, X.shape[0])
        self.inputs.ensure_started(self, X.shape[1])
        start_round, was_started = self.n_seen_, self.started_
        t0 = time.perf_counter()
        with one_blas_thread():
            decisions = self.inputs.advance(self, X, y) if X.shape[0] else np.empty(0)
        self.heads.calibrate(self, decisions, y, start_round, was_started)
        seconds = time.perf_counter() - t0
        first = self._first_counted_round() if self.started_ else None
        counted_from = None if first is None else max(0, first - start_round)
        return Trace(np.asarray(decisions, dtype=float), y, seconds, self.task, counted_from,
                     self.all_diagnostics())

    # ---- probabilities (okl.calibration): learned from every learning path's decisions --------

    def learn_many(self, X, y) -> np.ndarray:
        """River's mini-batch learning, test-then-train over the rows of a mini-batch: row i is
        predicted with the model that learned rows < i (as :meth:`run`, through the same compiled
        loop); returns the decisions before learning each row. A SciPy sparse matrix stays sparse
        (:mod:`okl._sparse`)."""
        self.events.check_usable(self)
        start_round, was_started, labels = self.n_seen_, self.started_, y
        X = check_matrix(X, self.dim_, sparse=True)
        y = check_targets(y, self.task, X.shape[0])
        if X.shape[0] == 0:
            return np.empty(0)
        self.inputs.ensure_started(self, X.shape[1])
        drop_event_cache(self)
        with one_blas_thread():
            out = np.asarray(self.inputs.advance(self, X, y), dtype=float)
        self.heads.calibrate(self, out, labels, start_round, was_started)
        return out

    # ---- per event (okl.runtime.events: the fast plan or the generic hooks) -----------------

    #: the columns where the row of the event running now can be non-zero, when it came as a sparse
    #: row whose non-zeros the input map keeps (:meth:`EventPath.sparse_event`), else None
    _nonzero: np.ndarray | None = None
    #: the message of the :class:`NonFiniteError` that left the state unusable (None: usable)
    _failure: str | None = None

    def reset_state(self):
        """Forget everything learned: the learner as :meth:`clone` makes it, in place (the way back
        after a :class:`NonFiniteError`); returns it."""
        fresh = self.clone()
        self.__dict__.clear()
        self.__dict__.update(fresh.__dict__)
        self._event = _EventState()
        return self

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

    _event_learn.declares_none = True  # (learn_one then skips the row's scaling for it: the rounds scale it)

    def _event_block(self, X: np.ndarray, y: np.ndarray, out: np.ndarray) -> int:
        """Learn the first rows of a block of validated rows with the per-event arithmetic (each
        row's decision equals what :meth:`learn_one` would give; it does not depend on how the
        stream was cut into blocks), in compiled loops; returns the number of rows learned (0:
        none, the caller goes one event at a time). Only called on a started learner."""
        return 0

    def predict_one(self, x) -> float:
        """Decision value f(x) of the current model (0 before the first example): the fast plan's
        one compiled call when it takes the row, else :meth:`EventPath.predict_event`."""
        fp = self._event.plan
        if fp and type(x) is NDARRAY:
            predict = fp.predict  # (a slot read; ``fp.predict(...)`` is a method lookup Python does not specialise)
            try:
                f = predict(fp.F, x, self.n_seen_)
            except TypeError:  # not a float64, C-contiguous, 1-D array
                f = math.nan
            if f - f == 0.0:
                return f + self.heads.target_mean(self) if fp.center else f
        return self.events.predict_event(self, x)

    # ---- the fast plan (okl.engine.fastpath) ---------------------------------------------

    def compiled_plan(self) -> Plan | None:
        """This learner's compiled state in its current stage as a map and a step of the component
        table (:class:`okl.components.Plan`), or None: the generic hooks only. The
        per-event plan (:class:`okl.engine.fastpath.FastPlan`) and ``auto``'s engine
        (:mod:`okl.engine.core`) run it when they have its map and step (``Plan.runs_on``): they
        copy the fixed arrays it gives and move the arrays it names into their buffers (the
        learner's attributes become views of them)."""
        return None

    compiled_plan.declares_none = True  # (the per-event path: no plan to try)

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

    def learn_one(self, x, y) -> "Learner":
        """One online round with example ``x`` and label/target ``y`` (:meth:`EventPath.learn_round`;
        its common round, the fast plan's compiled call taking the event, is here: one Python call
        a round fewer)."""
        fp = self._event.plan
        if type(fp) is FastPlan and fp.direct and type(x) is NDARRAY and type(y) in FLOAT_TYPES and (
                -MAX_ABS_FEATURE <= y <= MAX_ABS_FEATURE):
            n = self.n_seen_
            learn = fp.learn
            try:
                f, c = learn(fp.F, x, y, n)
            except TypeError:  # not a float64, C-contiguous, 1-D array: the path below says why
                c = BAD_ROW
            if c >= 0 and f - f == 0.0:
                self.n_seen_ = n + 1
                if c:  # the learner's counter changed (okl.engine.fastpath.event_learn)
                    setattr(self, fp.counts, c - 1)
                return self
            if c != BAD_ROW and c != BAD_LABEL:  # a transition, an update round or a non-finite decision
                self.events.fast_round_end(self, fp, y, y, 0.0, f, c)
                return self
        self.events.learn_round(self, x, y)
        return self

    def _event_heavy(self) -> bool:
        """Whether the next round may run matrix factorisations (then BLAS is held to one thread
        as in :meth:`run`; entering that costs ~10 us, so not on every round)."""
        return False

    # ---- mini-batches (River's predict_many / learn_many) -----------------------------------

    def predict_many(self, X) -> np.ndarray:
        """Decisions f(x) of the current model for every row of ``X`` (no learning)."""
        self.events.check_usable(self)
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

    def chosen_width(self) -> dict[str, Any]:
        """The kernel in use and how it was chosen: ``{"sigma": ..., "width_rule": ...}`` where the
        rule is ``"scale"`` (chosen from the first rows, :func:`okl.kernels.scale_sigma`),
        ``"given"`` or ``"pending"`` (still inside the width window); ``{}`` without a kernel."""
        if "kernel" not in param_names(self):
            return {}
        kernel = getattr(self, "kernel_", None) if self.dim_ is not None else getattr(self, "kernel", None)
        rule = "given" if getattr(self, "kernel", None) is not None else (
            "pending" if kernel is None else f"scale (first {WIDTH_WINDOW} rows)")
        sigma = getattr(kernel, "sigma", None)
        return {"sigma": None if sigma is None else float(sigma), "width_rule": rule}

    def chosen_scale(self) -> dict[str, Any]:
        """The input scale in use (:mod:`okl.scaling`): ``{"input_scale": rule}`` with the rule
        ``"symlog (first 50 rows)"``, ``"pending"`` (inside the window) or ``"off"`` (``scale=None``,
        or ``"auto"`` with a kernel given), plus, once fixed, ``scale_pending``: the number of features
        that have kept their window value so far (their spread is fixed by their first change)."""
        if not self.inputs.scales_input(self):
            return {"input_scale": "off"}
        if self.scale_spread_ is None:
            return {"input_scale": "pending"}
        return {"input_scale": f"{self.inputs.scale_rule(self)} (first {WIDTH_WINDOW} rows)",
                "scale_pending": int(self.scale_spread_.size - np.count_nonzero(self.scale_spread_))}

    def all_diagnostics(self) -> dict[str, Any]:
        """:meth:`diagnostics` (once the state exists) plus :meth:`chosen_width` and
        :meth:`chosen_scale`."""
        started = self.dim_ is not None and self.started_
        return {**(self.diagnostics() if started else {}), **self.chosen_width(), **self.chosen_scale()}

    @classmethod
    def paper_params(cls, budget: int) -> dict[str, Any]:
        """The published setting where the library default departs from it (for budget ``budget``):
        the paper-table experiments pass these explicitly, ``okl.make(name)`` does not. Every
        learner's includes ``scale=None``: the tables read files scaled as the papers did
        (subclasses extend this dictionary)."""
        return {"scale": None} if "scale" in param_names(cls) else {}

    def diagnostics(self) -> dict[str, Any]:
        """Learner-specific counts (support vectors, update rounds, resets, ...)."""
        return {}

    def _first_counted_round(self) -> int | None:
        """Round index (0-based, since the first example) after the first stage, for the authors'
        mistake count; ``None`` for single-stage learners."""
        return None

    # ---- hooks ------------------------------------------------------------------------------

    def _start(self, dim: int) -> None:
        raise NotImplementedError

    def _decision(self, x: np.ndarray) -> float:
        raise NotImplementedError

    def _process(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def clone(self) -> "Learner":
        """A fresh, unstarted learner with the same hyperparameters."""
        new = type(self)(**self.get_params())
        new.name = self.name
        return new


__all__ = ["Learner", "Trace", "ModelFileError", "StateError", "StateSpec", "Arr", "Num", "Seq", "Opaque", "NonFiniteError", "register", "make", "learners", "learner_class", "learner_kind", "KINDS",
           "accepts", "mistakes_of", "select_params"]
