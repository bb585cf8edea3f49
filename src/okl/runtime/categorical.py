"""The ``categorical=`` hyperparameter of every stream learner: its place in each learner's
constructor, and the learner form that maps each row through its :class:`okl.categories.CategoryMap`
before its own path.

Every :class:`okl.runtime.base.Learner` subclass takes ``categorical=None`` (a keyword added to its
``__init__`` once, here, by :func:`takes_categorical`; validated by
:func:`okl.categories.check_categorical`), so ``okl.make(name, categorical=[1, 3])`` works for every
registered stream learner, ``get_params`` / ``clone`` / model files carry it and the generic
checks try a bad value.

A learner built with ``categorical=None`` is an instance of its own class: nothing here is on its
path, so its numbers and per-event speed are exactly those of a learner without the parameter. A
learner built with categorical columns is an instance of :func:`categorical_class` (its class with
:class:`CategoricalInputs` first in its method order, made once per class, same name, pickled as
its class): every entry point (``predict_one``, ``learn_one``, ``predict_many``, ``learn_many``,
``run``, ``okl stream``'s rounds) maps the raw rows (``n_inputs`` columns) to the rows its model
sees (``dim_`` columns: :mod:`okl.categories` gives the rule) and then takes the class's own path,
fast plans included. It always buffers the width window (its first 50 learned rows, predicted by
the running label mean as when it chooses its width), since the window's rows fix the levels; its
map is part of its state (model files, ``okl stream`` checkpoints)."""

from __future__ import annotations

import functools
import inspect
import time

import numpy as np

from okl._validation import MAX_ABS_FEATURE, check_matrix, check_target, check_targets, check_vector
from okl.categories import CategoryMap
from okl.kernels import WIDTH_WINDOW
from okl.runtime.events import _EventState, drop_event_cache, fast_plan_of
from okl.runtime.hyperparameters import CATEGORICAL
from okl.runtime.state import StateError
from okl.runtime.trace import Trace

#: the parameter's text in each learner's help (:data:`okl.runtime.base.SHARED_PARAMETER_DOCS`)
CATEGORICAL_DOC = """categorical : list of column indices or None, default None
    Columns holding category codes (any finite number; the value names a level, it is not a
    magnitude): each level becomes an indicator column, levels seen in the first 50 rows their
    own and later ones hashed columns (:mod:`okl.categories`); the other columns are unchanged."""


def takes_categorical(cls: type) -> None:
    """Give ``cls.__init__`` (when ``cls`` defines one) the keyword-only ``categorical=None``,
    validated and stored as ``self.categorical`` (a sorted list of column indices, or None); its
    signature shows it, so it is one of the class's hyperparameters."""
    init = cls.__dict__.get("__init__")
    if init is None or getattr(init, "takes_categorical", False):
        return
    sig = inspect.signature(init)
    if "categorical" in sig.parameters:
        return

    @functools.wraps(init)
    def __init__(self, *args, categorical=None, **kwargs):
        init(self, *args, **kwargs)
        # (a subclass's __init__ calling its parent's: the outermost call sets the value last)
        if categorical is not None or "categorical" not in self.__dict__:
            self.categorical = CATEGORICAL.check(categorical)

    params = list(sig.parameters.values())
    at = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
    extra = inspect.Parameter("categorical", inspect.Parameter.KEYWORD_ONLY, default=None)
    __init__.__signature__ = sig.replace(parameters=params[:at] + [extra] + params[at:])
    __init__.takes_categorical = True
    cls.__init__ = __init__
    declared = cls.__dict__.get("hyperparameters")
    if declared and all(h.name != "categorical" for h in declared):
        cls.hyperparameters = (*declared, CATEGORICAL)


_FORMS: dict[type, type] = {}


def categorical_class(cls: type) -> type:
    """The form of learner class ``cls`` that maps categorical columns (made once per class)."""
    if issubclass(cls, CategoricalInputs):
        return cls
    form = _FORMS.get(cls)
    if form is None:
        form = type(cls.__name__, (CategoricalInputs, cls), {
            "__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__,
            "__slots__": (), "plain_class": cls, "events": CategoricalEvents(cls.events)})
        _FORMS[cls] = form
    return form


def new_learner(cls: type, kwargs: dict):
    """A new, uninitialised learner of ``cls`` (:meth:`Learner.__new__`): of its categorical form
    when ``categorical`` is given."""
    return _with_event_state(object.__new__(categorical_class(cls) if kwargs.get("categorical") is not None else cls))


def _rebuild(cls: type):
    return _with_event_state(object.__new__(categorical_class(cls)))


def _with_event_state(learner):
    """A new learner's per-event state (its ``_event`` slot: every path that makes a learner, a copy
    or an unpickled one goes through ``__new__``, so the per-event path reads the slot, never tests it)."""
    learner._event = _EventState()
    return learner


def input_width(learner) -> int | None:
    """The number of columns a learner's rows have as given (its ``dim_`` unless it maps
    categorical columns); None before its first example."""
    m = getattr(learner, "categorical_map_", None)
    return m.n_inputs if m is not None else getattr(learner, "dim_", None)


class CategoricalEvents:
    """The per-event path of a learner with categorical columns: its class's (``inner``) on the
    mapped rows. Every other method is the inner path's."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def predict_event(self, learner, x):
        # (x is mapped here: the class's predict_one calls this; its plan is built first, so the
        # class's path does not call predict_one again with the mapped row)
        if fast_plan_of(learner) is None and type(x) is np.ndarray:
            self.inner.fast_plan(learner)
        return self.inner.predict_event(learner, x)

    def learn_round(self, learner, x, y):
        x = check_vector(x, learner._raw_width(), levels=learner.categorical)
        if not learner.n_outputs_:
            y = check_target(y, learner.task)
        return self.inner.learn_round(learner, learner._learned_rows(x[None, :])[0], y)

    def learn_rounds(self, learner, X, y):
        X = check_matrix(X, learner._raw_width(), levels=learner.categorical)
        return np.concatenate(learner._blocks(lambda X, y: self.inner.learn_rounds(learner, X, y), X, y))


class CategoricalInputs:
    """The entry points of a learner with categorical columns (see the module docstring); mixed in
    first by :func:`categorical_class`."""

    __slots__ = ()
    #: the levels and layout (:class:`okl.categories.CategoryMap`; None before the first example)
    categorical_map_: CategoryMap | None = None

    def __reduce_ex__(self, protocol):
        return _rebuild, (self.plain_class,), self.__getstate__()

    # ---- rows ---------------------------------------------------------------------------------

    def _raw_width(self) -> int | None:
        return None if self.categorical_map_ is None else self.categorical_map_.n_inputs

    def _learned_rows(self, X: np.ndarray) -> np.ndarray:
        """The mapped form of validated raw rows about to be learned (at most one row while the
        window is open): their levels recorded, the buffered rows widened to match."""
        big = ~(np.abs(X) <= MAX_ABS_FEATURE)
        codes = [c for c in self.categorical if c < X.shape[1]]  # (one past the width: CategoryMap says so)
        big[:, codes] &= ~np.isfinite(X[:, codes])  # (a finite code names a level)
        if big.any():
            r = int(np.argwhere(big)[0][0])
            check_vector(X[r], X.shape[1], levels=self.categorical)  # raises the message naming the value
            raise ValueError(f"row {r} has a value beyond {MAX_ABS_FEATURE:g} in magnitude")
        m = self.categorical_map_
        if m is None:
            m = CategoryMap(self.categorical, X.shape[1])
            self.categorical_map_ = m
        if not m.fixed and m.learn(X):
            self._widen(m.width)
        return m.rows(X, learned=True)

    def _widen(self, width: int) -> None:
        """Append zero columns to the window's buffered rows (new levels' indicators: 0 in the
        rows before them; the hashed columns: 0 in the window)."""
        if self.dim_ is None or width == self.dim_:
            return
        rows = np.zeros((WIDTH_WINDOW, width))
        rows[:, :self.dim_] = self.warmup_X_
        self.warmup_X_, self.dim_ = rows, width
        drop_event_cache(self)

    def _open_rows(self, n: int) -> int:
        """How many of the next n rows to learn one at a time (the window's: each may widen it)."""
        m = self.categorical_map_
        if m is not None and m.fixed:
            return 0
        return min(n, WIDTH_WINDOW - (self.n_seen_ if self.dim_ is not None else 0))

    def _blocks(self, step, X: np.ndarray, y: np.ndarray) -> list:
        """``step(mapped rows, y)`` over the rows: one at a time in the window, then one block."""
        head = self._open_rows(X.shape[0])
        out = [step(self._learned_rows(X[i:i + 1]), y[i:i + 1]) for i in range(head)]
        if head < X.shape[0] or not out:
            out.append(step(self._learned_rows(X[head:]), y[head:]))
        return out

    # ---- entry points ------------------------------------------------------------------------

    def predict_one(self, x):
        x = check_vector(x, self._raw_width(), levels=self.categorical)
        m = self.categorical_map_
        return super().predict_one(x if m is None else m.rows(x[None, :])[0])

    def predict_many(self, X):
        X = check_matrix(X, self._raw_width(), levels=self.categorical)
        m = self.categorical_map_
        return super().predict_many(X if m is None else m.rows(X))

    def learn_many(self, X, y):
        X = check_matrix(X, self._raw_width(), levels=self.categorical)
        y = check_targets(y, self.task, X.shape[0])
        if X.shape[0] == 0:
            return np.empty(0)
        return np.concatenate(self._blocks(super().learn_many, X, y))

    def run(self, X, y) -> Trace:
        X = check_matrix(X, self._raw_width(), levels=self.categorical)
        y = check_targets(y, self.task, X.shape[0])
        if self.categorical_map_ is None and X.shape[0] == 0:
            return Trace(np.empty(0), y, 0.0, self.task, None, self.all_diagnostics())
        t0, start_round = time.perf_counter(), self.n_seen_
        parts = self._blocks(super().run, X, y)
        first = self._first_counted_round() if self.started_ else None
        return Trace(np.concatenate([p.decisions for p in parts]), y, time.perf_counter() - t0, self.task,
                     None if first is None else max(0, first - start_round), self.all_diagnostics())

    def all_diagnostics(self):
        out = super().all_diagnostics()
        m = self.categorical_map_
        if m is not None:
            out["categorical_levels"] = len(m.levels)
            out["categorical_hashed"] = None if m.hashed is None else sum(m.hashed)
            out["categorical_hashed_values"] = m.n_hashed
        return out


# ---- model files ------------------------------------------------------------------------------

def map_header(learner) -> dict | None:
    """The map's entry of a model file's header (None: the learner has none)."""
    m = getattr(learner, "categorical_map_", None)
    return None if m is None else m.to_json()


def load_map(learner, meta: dict) -> None:
    """Set a loaded learner's map from its model file's header, checked against its
    hyperparameters and width; :class:`StateError` on ``categorical_map`` otherwise."""
    entry = meta.get("categorical_map")
    wanted = getattr(learner, "categorical", None) is not None and learner.dim_ is not None
    if entry is None:
        if wanted:
            raise StateError("categorical_map", "is missing although the learner has categorical columns")
        return
    if not wanted:
        raise StateError("categorical_map", "is present but the learner has no categorical columns or no state")
    try:
        m = CategoryMap.from_json(entry, learner.categorical)
    except ValueError as exc:
        raise StateError("categorical_map", str(exc)) from None
    if m.width != learner.dim_ or m.fixed != bool(learner.started_):
        raise StateError("categorical_map", f"maps to {m.width} columns ({'fixed' if m.fixed else 'open'}) but the "
                                            f"learner has {learner.dim_} ({'started' if learner.started_ else 'window'})")
    learner.categorical_map_ = m


__all__ = ["CATEGORICAL_DOC", "CategoricalInputs", "categorical_class", "input_width", "load_map", "map_header",
           "new_learner", "takes_categorical"]
