"""The learner protocol, the per-run :class:`Trace`, safe model files and the learner registry.

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

State attributes are listed in ``_state_attrs``; arrays, numbers, strings, ``None``, lists and
``numpy.random.Generator`` objects are saved.

Per-event path (optional hooks, issue 17): ``_event_features(x) -> (f, z) | None`` computes the
decision and the features of one row in one compiled call (predict_one caches them, keyed on the
bytes of x and ``n_seen_``, dropped by every change of state; kept outside the learner: never
saved, pickled or copied), ``_event_learn(x, y, z)
-> f | None`` learns the row from them (or computes them), ``_event_block(X, y, out) -> rows done``
runs the same per-row arithmetic over a block (``okl stream``); NOGD, SkeGD, FORKS (code ONS) and
FOGD have them, every other learner takes the generic path (``_decision`` / ``_advance``).
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

import inspect
import json
import math
import os
import time
import weakref
import zipfile
import zlib
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from okl._compiled import row_ok as _row_ok
from okl._threads import one_blas_thread
from okl._validation import MAX_ABS_FEATURE, check_matrix, check_random_state, check_target, check_targets, check_vector
from okl.kernels import RBF, WIDTH_WINDOW, Kernel, kernel_from_dict, scale_sigma
from okl.losses import Loss, get_loss

MODEL_FORMAT = "okl-model"
MODEL_FORMAT_VERSION = 1


class NonFiniteError(FloatingPointError):
    """A learner's decision became NaN or infinite: its step is too large for the stream."""


class ModelFileError(ValueError):
    """A model file that cannot be loaded: damaged, foreign, or from an incompatible version."""


# --------------------------------------------------------------------------------------------
# Trace


def mistakes_of(decisions: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Boolean mistakes: the prediction is +1 when f >= 0 else -1 (as the authors' code and LSOKL)."""
    return np.where(decisions >= 0.0, 1.0, -1.0) != y


@dataclass
class Trace:
    """What one test-then-train run produced.

    ``decisions[t]`` is f_t(x_t) before (x_t, y_t) was learned. ``mistake_rate`` (percent) counts
    every round; ``authors_mistake_rate`` is the FORKS code's count (rounds before
    ``counted_from`` are skipped but the division is still by T, ALGORITHMS.md 4 "Evaluation
    quirk"); it is ``None`` for learners without a first stage.
    """

    decisions: np.ndarray
    y: np.ndarray
    seconds: float
    task: str = "classification"
    counted_from: int | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)

    @property
    def n_rounds(self) -> int:
        return int(self.decisions.shape[0])

    @property
    def mistakes(self) -> np.ndarray:
        return mistakes_of(self.decisions, self.y)

    @property
    def mistake_rate(self) -> float:
        """Percentage of rounds whose prediction sign(f) (f >= 0 -> +1) differs from y."""
        if self.task != "classification":
            raise ValueError("mistake_rate is defined for classification; use mean_squared_loss")
        return 100.0 * float(self.mistakes.mean()) if self.n_rounds else float("nan")

    @property
    def authors_mistake_rate(self) -> float | None:
        if self.task != "classification" or self.counted_from is None:
            return None
        return 100.0 * float(self.mistakes[self.counted_from:].sum()) / max(self.n_rounds, 1)

    @property
    def mean_squared_loss(self) -> float:
        """Average of (f_t(x_t) - y_t)^2 over every round."""
        return float(np.mean((self.decisions - self.y) ** 2)) if self.n_rounds else float("nan")

    @property
    def metric(self) -> float:
        """The task's headline metric: mistake rate (%) or mean squared loss."""
        return self.mistake_rate if self.task == "classification" else self.mean_squared_loss

    def cumulative_mistake_rate(self) -> np.ndarray:
        """Mistake rate (%) after each round, for mistake-rate-vs-rounds curves."""
        return 100.0 * np.cumsum(self.mistakes) / np.arange(1, self.n_rounds + 1)


# --------------------------------------------------------------------------------------------
# Learner


def _encode_param(value):
    if isinstance(value, Kernel):
        return {"__kernel__": value.to_dict()}
    if isinstance(value, Loss):
        return {"__loss__": value.name}
    if isinstance(value, np.generic):
        return value.item()
    return value


def _decode_param(value):
    if isinstance(value, dict) and "__kernel__" in value:
        return kernel_from_dict(value["__kernel__"])
    if isinstance(value, dict) and "__loss__" in value:
        return get_loss(value["__loss__"])
    return value


#: state every learner saves: its random generator, the kernel in use (chosen or given), whether
#: the learner's own state exists yet, and the rows buffered inside the width window
_BASE_STATE = ("_rng", "kernel_", "started_", "warmup_X_", "warmup_y_")


# --------------------------------------------------------------------------------------------
# State declarations (checked by Learner.load and Learner.check_state)
#
# A learner declares its saved state once, in ``_state_spec()``: every attribute of
# ``_state_attrs`` maps to an :class:`Arr` (an array: shape, dtype, finiteness, element range),
# a :class:`Num` (an int / float / bool: range), a :class:`Seq` (a list of ints) or
# :class:`Opaque` (not checked). Shapes and bounds are numbers, or names of *sizes* declared in
# :class:`StateSpec.sizes` (each with its own range); a size is fixed by the first array that
# uses it and every later use must agree. A bound may also be the name of a scalar field checked
# before it, or a tuple (the minimum of its entries). ``groups`` lists attributes that are None
# together (a stage not reached yet); ``rules`` are extra (predicate, field, message) checks on
# the loaded learner. The check runs in two passes: the layout (shapes, dtypes, scalars) from
# the ``.npy`` headers, *before* any array is read (so a header or zip bomb is refused without
# allocating), then the contents (finiteness, element ranges, rules). A learner without a
# declaration (``_state_spec`` returns None) gets only the base checks (its generator, kernel,
# width window, ``dim`` and ``n_seen``) and nothing extra is refused.
#
# Example (KOGD)::
#
#     def _state_spec(self):
#         return StateSpec(sizes={"cap": (1, ...)}, fields={
#             "SV_": Arr(("cap", "dim")), "alpha_": Arr(("cap",)),
#             "m_": Num(int, 0, ("cap", "n_seen"))})
#
# ``"dim"`` and ``"n_seen"`` are always available as sizes.

#: largest JSON header accepted in a model file (the arrays are checked against the declaration)
MAX_HEADER_BYTES = 64 << 20
#: largest input dimension a model file may declare
MAX_DIM = (1 << 31) - 1
#: largest round count a model file may declare
MAX_ROUNDS = 1 << 62


@dataclass(frozen=True)
class Arr:
    """A state array: ``shape`` (ints or size names), ``dtype``, all entries finite (unless
    ``finite=False``, e.g. NaN placeholders), entries within [low, high] (bounds as in
    :class:`Num`), or None when ``optional``."""

    shape: tuple
    dtype: Any = np.float64
    finite: bool = True
    low: Any = None
    high: Any = None
    optional: bool = False


@dataclass(frozen=True)
class Num:
    """A state number of type ``kind`` (int, float or bool) in [low, high], or None when
    ``optional``."""

    kind: type = int
    low: Any = None
    high: Any = None
    optional: bool = False


@dataclass(frozen=True)
class Seq:
    """A list of ints, of length ``length`` (an int or a size name), each in [low, high]."""

    length: Any = None
    low: Any = None
    high: Any = None


@dataclass(frozen=True)
class Opaque:
    """A state attribute that is saved but not checked (any JSON value or array)."""


@dataclass
class StateSpec:
    """One learner's state declaration (see the comment above :class:`Arr`)."""

    fields: dict[str, Any]
    sizes: dict[str, tuple] = field(default_factory=dict)
    groups: tuple = ()
    rules: tuple = ()


class _Header:
    """Shape and dtype of an array not read yet (from its ``.npy`` header)."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


class StateError(ValueError):
    """A state that does not fit its declaration; ``field`` names the attribute."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"state {field_name}: {message}")
        self.field = field_name


def _base_spec(learner: "Learner") -> StateSpec:
    """The declaration of the state every learner saves (:data:`_BASE_STATE`)."""
    if not learner.started_:
        return StateSpec(fields={"warmup_X_": Arr((WIDTH_WINDOW, "dim")), "warmup_y_": Arr((WIDTH_WINDOW,))})
    # started: None, or (inside _finish_warmup) the rows being learned
    return StateSpec(sizes={"_warmup": (0, WIDTH_WINDOW)}, fields={
        "warmup_X_": Arr(("_warmup", "dim"), optional=True), "warmup_y_": Arr(("_warmup",), optional=True)})


class _SpecChecker:
    """Checks one learner's state against a :class:`StateSpec` (layout, then contents)."""

    def __init__(self, learner: "Learner", spec: StateSpec, values: dict[str, Any]):
        self.learner, self.spec, self.values = learner, spec, values
        self.bound: dict[str, int] = {"dim": int(learner.dim_), "n_seen": int(learner.n_seen_)}

    def resolve(self, bound, what: str):
        """A bound: None, a number, a size or scalar-field name, or a tuple (their minimum)."""
        if bound is None or bound is Ellipsis:
            return None
        if isinstance(bound, tuple):
            vals = [v for v in (self.resolve(b, what) for b in bound) if v is not None]
            return min(vals) if vals else None
        if isinstance(bound, str):
            if bound in self.bound:
                return self.bound[bound]
            value = self.values.get(bound)
            if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
                return value
            raise StateError(what, f"bound {bound!r} is not known yet (declaration error)")
        return bound

    def bind(self, size: str, value: int, attr: str) -> None:
        if size in self.bound:
            if self.bound[size] != value:
                raise StateError(attr, f"size {size} is {value} here but {self.bound[size]} elsewhere")
            return
        low, high = self.spec.sizes.get(size, (0, None))
        low, high = self.resolve(low, attr), self.resolve(high, attr)
        if (low is not None and value < low) or (high is not None and value > high):
            raise StateError(attr, f"size {size} = {value} outside [{low}, {'inf' if high is None else high}]")
        self.bound[size] = value

    def layout(self) -> None:
        for group in self.spec.groups:
            present = [a for a in group if self.values.get(a) is not None]
            if present and len(present) != len(group):
                missing = next(a for a in group if self.values.get(a) is None)
                raise StateError(missing, f"is None while {present[0]} is set (they belong together)")
        for attr, decl in self.spec.fields.items():
            value = self.values.get(attr)
            if isinstance(decl, Opaque):
                continue
            if isinstance(decl, Arr):
                self._array_layout(attr, decl, value)
            elif isinstance(decl, Num):
                self._number(attr, decl, value)
            elif isinstance(decl, Seq):
                self._seq(attr, decl, value)

    def _array_layout(self, attr, decl: Arr, value) -> None:
        if value is None:
            if decl.optional:
                return
            raise StateError(attr, "is missing (None)")
        if not isinstance(value, (np.ndarray, _Header)):
            raise StateError(attr, f"must be an array, got {type(value).__name__}")
        if value.dtype != np.dtype(decl.dtype):
            raise StateError(attr, f"must be {np.dtype(decl.dtype).name}, got {value.dtype}")
        if len(value.shape) != len(decl.shape):
            raise StateError(attr, f"must have {len(decl.shape)} dimension(s), got shape {value.shape}")
        for n, want in zip(value.shape, decl.shape):
            if isinstance(want, str):
                self.bind(want, int(n), attr)
            elif n != want:
                raise StateError(attr, f"has shape {value.shape}, expected {self.shape_text(decl.shape)}")

    def shape_text(self, shape) -> str:
        return "(" + ", ".join(str(self.bound.get(s, s)) if isinstance(s, str) else str(s) for s in shape) + ")"

    def _number(self, attr, decl: Num, value) -> None:
        if value is None:
            if decl.optional:
                return
            raise StateError(attr, "is missing (None)")
        if decl.kind is bool:
            if not isinstance(value, (bool, np.bool_)):
                raise StateError(attr, f"must be True or False, got {value!r}")
            return
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise StateError(attr, f"must be a number, got {type(value).__name__}")
        if decl.kind is int and not (isinstance(value, (int, np.integer))
                                     or (np.isfinite(value) and float(value).is_integer())):
            raise StateError(attr, f"must be an integer, got {value!r}")
        if not np.isfinite(value):
            raise StateError(attr, f"must be finite, got {value!r}")
        self._in_range(attr, value, decl.low, decl.high)

    def _in_range(self, attr, value, low, high) -> None:
        lo, hi = self.resolve(low, attr), self.resolve(high, attr)
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise StateError(attr, f"= {value!r} outside [{'-inf' if lo is None else lo}, "
                                   f"{'inf' if hi is None else hi}]")

    def _seq(self, attr, decl: Seq, value) -> None:
        if not isinstance(value, list):
            raise StateError(attr, f"must be a list, got {type(value).__name__}")
        if decl.length is not None:
            if isinstance(decl.length, str):
                self.bind(decl.length, len(value), attr)
            elif len(value) != decl.length:
                raise StateError(attr, f"has {len(value)} entries, expected {decl.length}")
        lo, hi = self.resolve(decl.low, attr), self.resolve(decl.high, attr)
        for v in value:
            if isinstance(v, bool) or not isinstance(v, int) or (lo is not None and v < lo) or (
                    hi is not None and v > hi):
                raise StateError(attr, f"entry {v!r} is not an integer in [{lo}, {hi}]")

    def contents(self) -> None:
        for attr, decl in self.spec.fields.items():
            value = self.values.get(attr)
            if not isinstance(decl, Arr) or not isinstance(value, np.ndarray) or value.size == 0:
                continue
            if decl.finite and value.dtype.kind == "f" and not np.isfinite(value).all():
                raise StateError(attr, "has a non-finite entry (NaN or infinity)")
            lo, hi = self.resolve(decl.low, attr), self.resolve(decl.high, attr)
            with np.errstate(invalid="ignore"):
                if lo is not None and (value < lo).any():
                    raise StateError(attr, f"has an entry {value.min()!r} below {lo}")
                if hi is not None and (value > hi).any():
                    raise StateError(attr, f"has an entry {value.max()!r} above {hi}")
        for predicate, attr, message in self.spec.rules:
            try:
                ok = bool(predicate(self.learner))
            except (ValueError, TypeError, IndexError, AttributeError, ArithmeticError):
                ok = False
            if not ok:
                raise StateError(attr, message)


_F64 = np.dtype(np.float64)


class _EventState:
    """A learner's per-event cache and work space (:meth:`Learner.predict_one`): kept outside the
    learner, so it is never saved, pickled or copied and never shows in ``vars(learner)``."""

    __slots__ = ("cache", "buf", "loss")

    def __init__(self):
        self.cache = self.buf = self.loss = None


#: id(learner) -> its _EventState (removed when the learner is collected)
_EVENTS: dict[int, _EventState] = {}


def _event_state(learner) -> _EventState:
    ev = _EVENTS.get(id(learner))
    if ev is None:
        ev = _EVENTS[id(learner)] = _EventState()
        weakref.finalize(learner, _EVENTS.pop, id(learner), None)
    return ev


def _drop_event_cache(learner) -> None:
    """Forget the features cached by predict_one (the state is about to change)."""
    ev = _EVENTS.get(id(learner))
    if ev is not None:
        ev.cache = None
_FLOATS = (float, np.float64)


def _writable(value: np.ndarray, dtype=None) -> np.ndarray:
    """``value`` as a writable, C-contiguous array (copied only when it is not one already)."""
    if value.flags.writeable and value.flags.c_contiguous and (dtype is None or value.dtype == dtype):
        return value
    return np.array(value, dtype=dtype or value.dtype, order="C", copy=True)


#: learner -> the state last found to fit its layout (:meth:`Learner.check_layout`); kept outside
#: the learner so that checking never changes what a learner holds (or pickles)
_LAYOUT_CHECKED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class Learner:
    """Base class of every online learner (see the module docstring for the protocol)."""

    #: registry name given by :func:`register` (the CLI name)
    name: ClassVar[str] = ""
    #: attributes saved in model files besides the hyperparameters
    _state_attrs: ClassVar[tuple[str, ...]] = ()
    #: rows per block in ``run`` (bounds the memory of chunked feature maps)
    chunk_size: ClassVar[int] = 4096

    dim_: int | None = None
    n_seen_: int = 0
    started_: bool = False

    # ---- hyperparameters -------------------------------------------------------------------

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        kinds = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        return [p for p, spec in sig.parameters.items() if p != "self" and spec.kind in kinds]

    def get_params(self) -> dict[str, Any]:
        """The hyperparameters given to ``__init__`` (scikit-learn style)."""
        return {p: getattr(self, p) for p in self._param_names()}

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

    def _ensure_started(self, dim: int) -> None:
        if self.dim_ is None:
            self._rng = np.random.default_rng(check_random_state(getattr(self, "random_state", None)))
            self.n_seen_ = 0
            if self._chooses_width():
                self.kernel_ = None
                self.started_ = False
                self.warmup_X_ = np.zeros((WIDTH_WINDOW, int(dim)))
                self.warmup_y_ = np.zeros(WIDTH_WINDOW)
            else:
                self.kernel_ = getattr(self, "kernel", None)
                self.started_ = True
                self.warmup_X_ = self.warmup_y_ = None
                self._start(int(dim))
            self.dim_ = int(dim)

    def _chooses_width(self) -> bool:
        """True when the learner takes a kernel and none was given: it then fixes a Gaussian width
        from its first :data:`~okl.kernels.WIDTH_WINDOW` rows (see :meth:`_finish_warmup`)."""
        return "kernel" in self._param_names() and getattr(self, "kernel", None) is None

    def _warmup_decision(self) -> float:
        """Decision during the width window: the running mean of the labels/targets seen so far
        (the majority vote for labels -1/+1; 0, i.e. +1, before any label)."""
        n = self.n_seen_
        return float(self.warmup_y_[:n].sum() / n) if n else 0.0

    def _finish_warmup(self) -> None:
        """Fix the width from the buffered rows (:func:`okl.kernels.scale_sigma`, labels unused),
        create the state, and learn the buffered rows in order (their decisions were already
        given by the running mean, so nothing is predicted with a label it has seen)."""
        self.kernel_ = RBF(sigma=scale_sigma(self.warmup_X_))
        self._start(self.dim_)
        self.started_ = True
        seen, self.n_seen_ = self.n_seen_, 0
        self._process(self.warmup_X_, self.warmup_y_)
        self.n_seen_ = seen
        self.warmup_X_ = self.warmup_y_ = None

    def end_width_window(self) -> "Learner":
        """Fix the width now from the rows buffered so far, when a finite batch (a scikit-learn
        ``fit``) ended inside the width window; nothing happens otherwise."""
        if self.dim_ is not None and not self.started_ and self.n_seen_ > 0:
            self.warmup_X_ = self.warmup_X_[: self.n_seen_]
            self.warmup_y_ = self.warmup_y_[: self.n_seen_]
            self._finish_warmup()
        return self

    def _advance(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Test-then-train over validated rows (shared by ``learn_one`` and ``run``)."""
        _drop_event_cache(self)
        n = X.shape[0]
        out = np.empty(n)
        i = 0
        if not self.started_:
            while i < n and self.n_seen_ < WIDTH_WINDOW:
                out[i] = self._warmup_decision()
                self.warmup_X_[self.n_seen_] = X[i]
                self.warmup_y_[self.n_seen_] = y[i]
                self.n_seen_ += 1
                i += 1
            if self.n_seen_ == WIDTH_WINDOW:
                self._finish_warmup()
        if i < n:
            out[i:] = self._process(X[i:], y[i:])
            first = self.n_seen_
            self.n_seen_ += n - i
            if not np.isfinite(out[i:]).all():
                self._non_finite(first + int(np.flatnonzero(~np.isfinite(out[i:]))[0]))
        return out

    #: the hyperparameter(s) to lower when decisions become non-finite (named in the error)
    _divergence_hint: ClassVar[str] = "eta (the step size)"

    def _non_finite(self, round_index: int) -> None:
        raise NonFiniteError(
            f"{self.name or type(self).__name__}: the decision at round {round_index} (0-based) is not "
            f"finite; the updates diverged on this stream. Lower {self._divergence_hint}, or pass a "
            f"smaller kernel width. The learner's state is no longer usable.")

    # ---- per-event path ------------------------------------------------------------------
    #
    # predict_one / learn_one do the arithmetic of a round once: a learner with the hooks
    # ``_event_features(x) -> (f, z) | None`` and ``_event_learn(x, y, z) -> f | None`` computes the
    # features z of x in predict_one (one compiled call), and the learn_one that follows for the
    # same x (same bytes) in the same state (same n_seen_, nothing learned in between) learns from
    # them without computing them again. The cache lives outside the learner (:class:`_EventState`:
    # never saved, pickled or copied); every learning round, load, clone and check_state drops it.
    # The common input (a float64, 1-D, C-contiguous ndarray of the learner's dimension) is
    # checked for finiteness and magnitude inside the compiled call; anything else goes through
    # :func:`okl._validation.check_vector`.

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

    def _event_features(self, x: np.ndarray):
        """(f(x), features of x) with the values of x checked, or None when this learner (in its
        current stage) has no per-event features; see :meth:`_event_learn`."""
        return None

    def _event_learn(self, x: np.ndarray, y: float, z):
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
        n = X.shape[0]
        out = np.empty(n)
        _drop_event_cache(self)
        i = 0
        while i < n:
            if self.started_:
                k = self._event_block(X[i:], y[i:], out[i:])
                if k:
                    first = self.n_seen_
                    self.n_seen_ += k
                    done = out[i:i + k]
                    if not np.isfinite(done).all():
                        self._non_finite(first + int(np.flatnonzero(~np.isfinite(done))[0]))
                    i += k
                    continue
            out[i] = self._learn_event(X[i], y[i])
            i += 1
        return out

    def _event_loss(self) -> Loss:
        """:attr:`loss_`, looked up once per loss name (not saved)."""
        ev = _event_state(self)
        name = getattr(self, "loss", "hinge")
        if ev.loss is None or ev.loss[0] is not name:
            ev.loss = (name, get_loss(name))
        return ev.loss[1]

    def predict_one(self, x) -> float:
        """Decision value f(x) of the current model (0 before the first example)."""
        x, checked = self._event_row(x)
        if self.dim_ is None:
            return 0.0
        if self.started_:
            ev = self._event_features(x)
            if ev is not None:
                f, z = ev
                _event_state(self).cache = (x.tobytes(), self.n_seen_, z)
                return f
        if not checked:
            self._check_values(x)
        if not self.started_:
            return self._warmup_decision()
        return float(self._decision(x))

    def learn_one(self, x, y) -> "Learner":
        """One online round with example ``x`` and label/target ``y``."""
        self._learn_event(x, y)
        return self

    def _learn_event(self, x, y) -> float:
        """learn_one returning the decision made before learning (the round's prediction)."""
        x, checked = self._event_row(x)
        if type(y) not in _FLOATS or not (y == 1.0 or y == -1.0 or (
                self._event_loss().task != "classification" and math.isfinite(y))):
            y = check_target(y, self.task)
        else:
            y = float(y)
        if self.started_:
            ev = _event_state(self)
            cache, z = ev.cache, None
            if cache is not None:
                ev.cache = None
                if cache[1] == self.n_seen_ and cache[0] == x.tobytes():
                    z = cache[2]
            # (_event_learn checks the values of x when it computes its features)
            f = self._event_learn(x, y, z)
            if f is not None:
                self.n_seen_ += 1
                if not math.isfinite(f):
                    self._non_finite(self.n_seen_ - 1)
                return f
        if not checked:
            self._check_values(x)
        self._ensure_started(x.shape[0])
        _drop_event_cache(self)
        if (self._event_heavy() if self.started_ else self.n_seen_ >= WIDTH_WINDOW - 1):
            with one_blas_thread():
                return float(self._advance(x[None, :], np.array([y]))[0])
        return float(self._advance(x[None, :], np.array([y]))[0])

    def _event_heavy(self) -> bool:
        """Whether the next round may run matrix factorisations (then BLAS is held to one thread
        as in :meth:`run`; entering that costs ~10 us, so not on every round)."""
        return False

    # ---- mini-batches (River's predict_many / learn_many) -----------------------------------

    def predict_many(self, X) -> np.ndarray:
        """Decisions f(x) of the current model for every row of ``X`` (no learning)."""
        X = check_matrix(X, self.dim_)
        if self.dim_ is None:
            return np.zeros(X.shape[0])
        if not self.started_:
            return np.full(X.shape[0], self._warmup_decision())
        out = np.empty(X.shape[0])
        for i, x in enumerate(X):
            ev = self._event_features(x)
            out[i] = ev[0] if ev is not None else float(self._decision(x))
        return out

    def learn_many(self, X, y) -> np.ndarray:
        """Test-then-train over the rows of a mini-batch: row i is predicted with the model that
        learned rows < i (as :meth:`run`, through the same compiled loop); returns the decisions."""
        X = check_matrix(X, self.dim_)
        y = check_targets(y, self.task, X.shape[0])
        if X.shape[0] == 0:
            return np.empty(0)
        self._ensure_started(X.shape[1])
        _drop_event_cache(self)
        with one_blas_thread():
            return np.asarray(self._advance(X, y), dtype=float)

    def run(self, X, y) -> Trace:
        """Test-then-train over the rows of ``X``; returns the :class:`Trace` (decisions before learning).

        Continues from the current state, so ``run`` on two halves equals ``run`` on the whole.
        """
        X = check_matrix(X, self.dim_)
        y = check_targets(y, self.task, X.shape[0])
        self._ensure_started(X.shape[1])
        start_round = self.n_seen_
        t0 = time.perf_counter()
        with one_blas_thread():
            decisions = self._advance(X, y) if X.shape[0] else np.empty(0)
        seconds = time.perf_counter() - t0
        first = self._first_counted_round() if self.started_ else None
        counted_from = None if first is None else max(0, first - start_round)
        return Trace(np.asarray(decisions, dtype=float), y, seconds, self.task, counted_from,
                     self.all_diagnostics())

    def chosen_width(self) -> dict[str, Any]:
        """The kernel in use and how it was chosen: ``{"sigma": ..., "width_rule": ...}`` where the
        rule is ``"scale"`` (chosen from the first rows, :func:`okl.kernels.scale_sigma`),
        ``"given"`` or ``"pending"`` (still inside the width window); ``{}`` without a kernel."""
        if "kernel" not in self._param_names():
            return {}
        kernel = getattr(self, "kernel_", None) if self.dim_ is not None else getattr(self, "kernel", None)
        rule = "given" if getattr(self, "kernel", None) is not None else (
            "pending" if kernel is None else f"scale (first {WIDTH_WINDOW} rows)")
        sigma = getattr(kernel, "sigma", None)
        return {"sigma": None if sigma is None else float(sigma), "width_rule": rule}

    def all_diagnostics(self) -> dict[str, Any]:
        """:meth:`diagnostics` (once the state exists) plus :meth:`chosen_width`."""
        started = self.dim_ is not None and self.started_
        return {**(self.diagnostics() if started else {}), **self.chosen_width()}

    @classmethod
    def paper_params(cls, budget: int) -> dict[str, Any]:
        """The published setting where the library default departs from it (for budget ``budget``):
        the paper-table experiments pass these explicitly, ``okl.make(name)`` does not."""
        return {}

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

    # ---- model files ------------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> None:
        """Write the hyperparameters and complete state to ``path`` (a ``.npz`` file, no pickle).

        The file is written to a temporary name, flushed and renamed, so a crash never leaves a
        half-written model under ``path``.
        """
        from okl._version import __version__

        meta: dict[str, Any] = {
            "format": MODEL_FORMAT, "format_version": MODEL_FORMAT_VERSION, "okl_version": __version__,
            "learner": type(self).__module__ + "." + type(self).__qualname__, "name": self.name,
            "params": {k: _encode_param(v) for k, v in self.get_params().items()},
            "dim": self.dim_, "n_seen": self.n_seen_, "state": {},
        }
        arrays: dict[str, np.ndarray] = {}
        if self.dim_ is not None:
            for attr in _BASE_STATE + (tuple(self._state_attrs) if self.started_ else ()):
                value = getattr(self, attr)
                if isinstance(value, np.ndarray):
                    arrays["state__" + attr] = value
                    meta["state"][attr] = {"array": True}
                elif isinstance(value, np.random.Generator):
                    meta["state"][attr] = {"rng": value.bit_generator.state}
                else:
                    meta["state"][attr] = {"value": _encode_param(value)}
        arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        path = os.fspath(path)
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    # ---- state declaration ------------------------------------------------------------------

    def _state_spec(self) -> StateSpec | None:
        """The declaration of this learner's own state (``_state_attrs``), checked when a model
        file is loaded and by :meth:`check_state`; see :class:`StateSpec`. Called with the
        hyperparameters, ``dim_``, ``n_seen_`` and the base state set. None (the default): no
        learner-specific check (a learner should declare its state: the compiled loops do not
        check bounds)."""
        return None

    def _full_spec(self) -> StateSpec:
        base = _base_spec(self)
        own = self._state_spec() if self.started_ else None
        if own is None:
            return base
        missing = set(self._state_attrs) - set(own.fields)
        if missing:
            raise StateError(sorted(missing)[0], f"is not declared in {type(self).__name__}._state_spec")
        return StateSpec(fields={**base.fields, **own.fields}, sizes={**base.sizes, **own.sizes},
                         groups=base.groups + tuple(own.groups), rules=base.rules + tuple(own.rules))

    def _check_base_values(self) -> None:
        if not isinstance(self.started_, (bool, np.bool_)):
            raise StateError("started_", f"must be True or False, got {self.started_!r}")
        if not isinstance(self._rng, np.random.Generator):
            raise StateError("_rng", "must be a random generator")
        kernel = getattr(self, "kernel_", None)
        if kernel is not None and not isinstance(kernel, Kernel):
            raise StateError("kernel_", f"must be a kernel, got {type(kernel).__name__}")
        if self.started_:
            if kernel is None and "kernel" in self._param_names():
                raise StateError("kernel_", "is missing although the learner has started")
        else:
            if not self._chooses_width():
                raise StateError("started_", "is False but the learner does not choose its width")
            if kernel is not None:
                raise StateError("kernel_", "is set inside the width window")
            if not 0 <= self.n_seen_ < WIDTH_WINDOW:
                raise StateError("n_seen", f"= {self.n_seen_} inside the width window of {WIDTH_WINDOW} rows")

    def check_state(self) -> "Learner":
        """Check the whole state against the learner's declaration (as :meth:`load` does) and make
        read-only arrays writable copies; raises :class:`StateError` (a ValueError) naming the
        field. Nothing to check before the first example."""
        _drop_event_cache(self)
        checker = self._layout_checker()
        if checker is not None:
            self._check_base_values()
            checker.layout()
            checker.contents()
        return self

    def check_layout(self) -> "Learner":
        """:meth:`check_state` without reading every entry (shapes, dtypes and counters only):
        cheap enough for every call of a compiled loop."""
        if self.dim_ is None:
            return self
        attrs = _BASE_STATE + (tuple(self._state_attrs) if self.started_ else ())
        # unchanged since the last check (same array objects, writable, same numbers): nothing to do
        key = (self.dim_, self.started_, self.n_seen_) + tuple(
            (id(v), v.flags.writeable) if isinstance(v, np.ndarray) else
            (type(v), v) if v is None or type(v) in (int, float, bool) else id(v)
            for v in (getattr(self, a, None) for a in attrs))
        if _LAYOUT_CHECKED.get(self) == key:
            return self
        checker = self._layout_checker()
        if checker is not None:
            checker.layout()
            _LAYOUT_CHECKED[self] = key
        return self

    def _layout_checker(self) -> "_SpecChecker | None":
        if self.dim_ is None:
            return None
        attrs = _BASE_STATE + (tuple(self._state_attrs) if self.started_ else ())
        values = {}
        for attr in attrs:
            value = getattr(self, attr, None)
            if isinstance(value, np.ndarray) and not value.flags.writeable:
                value = _writable(value)
                setattr(self, attr, value)
            values[attr] = value
        return _SpecChecker(self, self._full_spec(), values)

    def __setstate__(self, state: dict) -> None:
        """Unpickling (e.g. joblib's read-only memory maps): read-only arrays become copies."""
        for key, value in state.items():
            if isinstance(value, np.ndarray) and not value.flags.writeable:
                state[key] = _writable(value)
        self.__dict__.update(state)

    # ---- model files ------------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Learner":
        """Rebuild a learner saved by :meth:`save`. Nothing in the file is executed or unpickled.

        Every refusal is a :class:`ModelFileError` naming the file (and the state field): the
        header, the hyperparameters, then the whole state against the learner's declaration
        (:meth:`_state_spec`). Array sizes are checked from the ``.npy`` headers before any array
        is read, so a file declaring more than the hyperparameters imply is refused without
        allocating it; read-only or non-contiguous arrays are copied.
        """
        path = os.fspath(path)
        try:
            with zipfile.ZipFile(path) as zf:
                return cls._load_zip(zf, path)
        except ModelFileError:
            raise
        except StateError as exc:
            raise ModelFileError(f"{path}: {exc}") from None
        except MemoryError:
            raise ModelFileError(f"{path}: an array does not fit in memory") from None
        except (OSError, ValueError, TypeError, KeyError, zipfile.BadZipFile, EOFError, RuntimeError,
                NotImplementedError, OverflowError, zlib.error) as exc:
            raise ModelFileError(f"{path}: not a readable okl model file ({type(exc).__name__}: "
                                 f"{str(exc)[:200]})") from None

    @staticmethod
    def _npy_header(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: str, what: str):
        """(shape, dtype, data bytes) of a ``.npy`` member, from its header only."""
        with zf.open(info) as fh:
            version = np.lib.format.read_magic(fh)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
            elif version in ((2, 0), (3, 0)):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
            else:
                raise ModelFileError(f"{path}: array {what}: unsupported .npy version {version}")
            offset = fh.tell()
        if dtype.hasobject:
            raise ModelFileError(f"{path}: not a readable okl model file (array {what} holds Python "
                                 "objects, i.e. pickled data, which okl never loads)")
        if dtype.kind not in "biuf" or not all(isinstance(n, int) and n >= 0 for n in shape):
            raise ModelFileError(f"{path}: not a readable okl model file (array {what} has the "
                                 f"unsupported type {dtype} {shape})")
        nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if nbytes != info.file_size - offset:
            raise ModelFileError(f"{path}: array {what}: its header declares {nbytes} bytes of data but "
                                 f"the file holds {max(info.file_size - offset, 0)}")
        return _Header(shape, dtype), nbytes

    @staticmethod
    def _npy_read(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
        with zf.open(info) as fh:
            return np.lib.format.read_array(fh, allow_pickle=False)

    @classmethod
    def _load_zip(cls, zf: zipfile.ZipFile, path: str) -> "Learner":
        from okl._version import __version__

        members = {info.filename[:-4]: info for info in zf.infolist() if info.filename.endswith(".npy")}
        if "__meta__" not in members:
            raise ModelFileError(f"{path}: no okl model header")
        head, nbytes = cls._npy_header(zf, members["__meta__"], path, "__meta__")
        if head.dtype != np.uint8 or len(head.shape) != 1 or nbytes > MAX_HEADER_BYTES:
            raise ModelFileError(f"{path}: the okl model header must be at most {MAX_HEADER_BYTES} bytes "
                                 f"of text, got a {head.dtype} array of shape {head.shape}")
        try:
            meta = json.loads(cls._npy_read(zf, members["__meta__"]).tobytes().decode())
        except (ValueError, UnicodeDecodeError) as exc:
            raise ModelFileError(f"{path}: no okl model header ({exc})") from None
        if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
            fmt = meta.get("format") if isinstance(meta, dict) else None
            raise ModelFileError(f"{path}: not an okl model file (format {fmt!r})")
        if meta.get("format_version") != MODEL_FORMAT_VERSION:
            raise ModelFileError(f"{path}: model format version {meta.get('format_version')} "
                                 f"but this okl ({__version__}) reads version {MODEL_FORMAT_VERSION}")
        if meta.get("okl_version") != __version__:
            raise ModelFileError(f"{path}: written by okl {meta.get('okl_version')}, this is okl "
                                 f"{__version__}; state layouts may differ between versions")
        name = meta.get("name")
        target = _REGISTRY.get(name, (None, None))[0] if isinstance(name, str) else None
        if target is None:
            raise ModelFileError(f"{path}: unknown learner {name!r}")
        if cls is not Learner and not issubclass(target, cls):
            raise ModelFileError(f"{path}: holds a {target.__name__} ({name}), not a {cls.__name__}")
        # A header that passed the checks above but does not fit the learner (edited or forged
        # files) must still fail with ModelFileError, and may only set the learner's own state.
        try:
            params = {k: _decode_param(v) for k, v in meta["params"].items()}
            learner = target(**params)
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            raise ModelFileError(f"{path}: invalid hyperparameters for {target.__name__} ({exc})") from None
        learner.name = name
        try:
            if meta["dim"] is not None:
                cls._load_state(learner, meta, zf, members, path)
        except (ModelFileError, MemoryError):
            raise
        except StateError as exc:
            raise ModelFileError(f"{path}: {target.__name__}: {exc}") from None
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            raise ModelFileError(f"{path}: invalid state for {target.__name__} ({exc!r})") from None
        return learner

    @classmethod
    def _load_state(cls, learner: "Learner", meta: dict, zf: zipfile.ZipFile, members: dict,
                    path: str) -> None:
        target = type(learner)
        for key, high in (("dim", MAX_DIM), ("n_seen", MAX_ROUNDS)):
            value = meta[key]
            if isinstance(value, bool) or not isinstance(value, int) or not (key != "dim" or value >= 1) \
                    or not 0 <= value <= high:
                raise StateError(key, f"must be an integer in [{1 if key == 'dim' else 0}, {high}], got {value!r}")
        learner.dim_ = int(meta["dim"])
        learner.n_seen_ = int(meta["n_seen"])
        state = meta["state"]
        if not isinstance(state, dict) or not all(isinstance(e, dict) for e in state.values()):
            raise StateError("state", "must map each attribute to its entry")
        started = state.get("started_", {}).get("value") is True
        expected = {*_BASE_STATE, *(target._state_attrs if started else ())}
        if set(state) != expected:
            raise ModelFileError(
                f"{path}: state attributes {sorted(state)} do not match "
                f"{target.__name__}'s {sorted(expected)}")
        values: dict[str, Any] = {}
        sizes: dict[str, int] = {}
        for attr, entry in state.items():
            if "array" in entry:
                info = members.get("state__" + attr)
                if info is None:
                    raise ModelFileError(f"{path}: state array {attr!r} is missing")
                values[attr], sizes[attr] = cls._npy_header(zf, info, path, attr)
            elif "rng" in entry:
                rng = np.random.default_rng()
                rng.bit_generator.state = entry["rng"]
                values[attr] = rng
            elif "value" in entry:
                values[attr] = _decode_param(entry["value"])
            else:
                raise StateError(attr, "has neither an array, a generator nor a value")
        for attr in _BASE_STATE:
            if not isinstance(values[attr], _Header):
                setattr(learner, attr, values[attr])
        learner._check_base_values()
        for attr, value in values.items():
            if not isinstance(value, _Header):
                setattr(learner, attr, value)
        spec = learner._full_spec()
        checker = _SpecChecker(learner, spec, values)
        checker.layout()  # shapes from the headers: nothing large is read before this passes
        undeclared = sum(n for a, n in sizes.items() if a not in spec.fields)
        if undeclared > _available_memory():
            raise ModelFileError(f"{path}: its arrays declare {undeclared} bytes, more than the "
                                 "memory available")
        for attr, value in values.items():
            if isinstance(value, _Header):
                decl = spec.fields.get(attr)
                array = cls._npy_read(zf, members["state__" + attr])
                if array.shape != value.shape or array.dtype != value.dtype:
                    raise StateError(attr, "changed between its header and its data")
                values[attr] = _writable(array, getattr(decl, "dtype", None))
                setattr(learner, attr, values[attr])
        checker.contents()


    def clone(self) -> "Learner":
        """A fresh, unstarted learner with the same hyperparameters."""
        new = type(self)(**self.get_params())
        new.name = self.name
        return new


def _available_memory() -> int:
    """Bytes of memory available now (a generous bound when it cannot be read)."""
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 1 << 40



# --------------------------------------------------------------------------------------------
# Registry

#: The one learner registry, by kind: ``"streaming"``, the learners of the protocol above
#: (:class:`Learner` subclasses: ``okl run``, ``sweep``, ``stream``, the adapters; model files
#: name them) and ``"evolvable"``, the learners on feature-evolvable streams
#: (:class:`okl.evolvable.EvolvableLearner`, ``okl evolve``), registered when okl is imported.
#: A name is registered once over all kinds.
KINDS = ("streaming", "evolvable")
_BY_KIND: dict[str, dict[str, tuple[type, dict[str, Any]]]] = {kind: {} for kind in KINDS}
#: the streaming learners (the names a model file may hold)
_REGISTRY: dict[str, tuple[type[Learner], dict[str, Any]]] = _BY_KIND["streaming"]


def _kind_of(name: str) -> str | None:
    return next((kind for kind, table in _BY_KIND.items() if name in table), None)


def _check_kind(kind: str | None) -> None:
    if kind is not None and kind not in _BY_KIND:
        raise ValueError(f"unknown kind of learner {kind!r}; kinds: {', '.join(KINDS)}")


def register(name: str, *, kind: str = "streaming", **fixed: Any):
    """Class decorator: make the learner available as ``okl.make(name)`` and on the command line.

    ``kind`` is the protocol the class follows (:data:`KINDS`); ``fixed`` are hyperparameters
    that define this registered variant (e.g. a budget cap).
    """
    _check_kind(kind)

    def deco(cls: type) -> type:
        if _kind_of(name) is not None:
            raise ValueError(f"learner name {name!r} is already registered")
        _BY_KIND[kind][name] = (cls, dict(fixed))
        if not fixed and not cls.name:
            cls.name = name
        return cls

    return deco


def make(name: str, **params: Any) -> Learner:
    """Build a registered learner by its CLI name, e.g. ``okl.make("nogd", budget=100)`` (any
    kind: ``okl.make("opfes")`` builds a feature-evolvable learner)."""
    kind = _kind_of(name)
    if kind is None:
        raise ValueError(f"unknown learner {name!r}; registered: {', '.join(sorted(_REGISTRY))}"
                         + "".join(f"; {k}: {', '.join(sorted(_BY_KIND[k]))}" for k in KINDS[1:] if _BY_KIND[k]))
    cls, fixed = _BY_KIND[kind][name]
    learner = cls(**{**fixed, **params})
    learner.name = name
    return learner


def select_params(name: str, params: dict[str, Any] | None = None, **common: Any) -> dict[str, Any]:
    """The one place where ``okl run``, ``sweep``, the paper tables (through
    :func:`okl.eval.progressive.learner_params`) and the scikit-learn and River adapters build
    learner ``name``'s hyperparameters (``okl stream`` passes the same settings; the
    feature-evolvable learners of ``okl evolve`` take theirs from :mod:`okl.evolvable.harness`).

    ``common`` holds the path's shared settings (budget, kernel, sigma, loss, horizon,
    random_state, ...): each that is not None and that the learner takes is passed, so a setting
    left out means the learner's own default. ``sigma`` (a number) becomes ``kernel=RBF(sigma)``;
    ``sigma=None`` or ``"auto"`` passes no kernel, and the learner chooses its width from the
    stream (:func:`okl.kernels.scale_sigma`). ``params`` override, and each must be a
    hyperparameter of the learner (ValueError otherwise).

    For example ``select_params("nogd", {"eta": 0.5}, sigma=2.0, budget=None, random_state=0)``
    gives ``{"kernel": RBF(sigma=2.0), "random_state": 0, "eta": 0.5}`` and
    ``select_params("linear", sigma=2.0, loss="squared")`` gives ``{"loss": "squared"}``
    (tests/test_defaults.py).
    """
    common = dict(common)
    sigma = common.pop("sigma", None)
    if sigma is not None and sigma != "auto" and common.get("kernel") is None:
        common["kernel"] = RBF(sigma=float(sigma))
    out = {key: value for key, value in common.items() if value is not None and accepts(name, key)}
    for key, value in (params or {}).items():
        if not accepts(name, key):
            raise ValueError(f"learner {name!r} has no hyperparameter {key!r}")
        out[key] = value
    return out


def learners(kind: str | None = None) -> list[str]:
    """Names of the registered learners: all of them, or those of one kind (:data:`KINDS`), e.g.
    ``okl.learners(kind="evolvable")`` for the feature-evolvable ones."""
    _check_kind(kind)
    return sorted(name for k, table in _BY_KIND.items() if kind in (None, k) for name in table)


def learner_kind(name: str) -> str:
    """The kind (:data:`KINDS`) of registered learner ``name``."""
    kind = _kind_of(name)
    if kind is None:
        raise ValueError(f"unknown learner {name!r}; registered: {', '.join(learners())}")
    return kind


def learner_class(name: str, kind: str | None = "streaming") -> type:
    """The class of registered learner ``name`` of ``kind`` (by default a streaming learner, the
    kind every path but ``okl evolve`` takes; ``kind=None``: any kind). ValueError otherwise."""
    _check_kind(kind)
    found = _kind_of(name)
    if found is None or (kind is not None and found != kind):
        if found is not None:
            raise ValueError(f"learner {name!r} is of kind {found!r}, not {kind!r}; registered {kind} learners: "
                             f"{', '.join(learners(kind))}")
        raise ValueError(f"unknown learner {name!r}; registered: {', '.join(learners(kind))}")
    return _BY_KIND[found][name][0]


def accepts(name: str, param: str) -> bool:
    """Whether the registered learner takes hyperparameter ``param``."""
    return param in learner_class(name)._param_names()


__all__ = ["Learner", "Trace", "ModelFileError", "StateError", "StateSpec", "Arr", "Num", "Seq", "Opaque", "NonFiniteError", "register", "make", "learners", "learner_class", "learner_kind", "KINDS",
           "accepts", "mistakes_of", "select_params"]
