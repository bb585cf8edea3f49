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
"""

from __future__ import annotations

import inspect
import json
import os
import time
import zipfile
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from okl._threads import one_blas_thread
from okl._validation import check_matrix, check_random_state, check_target, check_targets, check_vector
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

    def predict_one(self, x) -> float:
        """Decision value f(x) of the current model (0 before the first example)."""
        x = check_vector(x, self.dim_)
        if self.dim_ is None:
            return 0.0
        if not self.started_:
            return self._warmup_decision()
        return float(self._decision(x))

    def learn_one(self, x, y) -> "Learner":
        """One online round with example ``x`` and label/target ``y``."""
        x = check_vector(x, self.dim_)
        y = check_target(y, self.task)
        self._ensure_started(x.shape[0])
        self._advance(x[None, :], np.array([y]))
        return self

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
        from okl import __version__

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

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Learner":
        """Rebuild a learner saved by :meth:`save`. Nothing in the file is executed or unpickled."""
        from okl import __version__

        path = os.fspath(path)
        try:
            with np.load(path, allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
            raise ModelFileError(f"{path}: not a readable okl model file ({exc})") from None
        try:
            meta = json.loads(arrays.pop("__meta__").tobytes().decode())
        except (KeyError, ValueError, UnicodeDecodeError) as exc:
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
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ModelFileError(f"{path}: invalid hyperparameters for {target.__name__} ({exc})") from None
        learner.name = name
        try:
            if meta["dim"] is not None:
                learner.dim_ = int(meta["dim"])
                learner.n_seen_ = int(meta["n_seen"])
                started = meta["state"].get("started_", {}).get("value") is True
                expected = {*_BASE_STATE, *(target._state_attrs if started else ())}
                if set(meta["state"]) != expected:
                    raise ModelFileError(
                        f"{path}: state attributes {sorted(meta['state'])} do not match "
                        f"{target.__name__}'s {sorted(expected)}")
                for attr, entry in meta["state"].items():
                    if "array" in entry:
                        key = "state__" + attr
                        if key not in arrays:
                            raise ModelFileError(f"{path}: state array {attr!r} is missing")
                        value = arrays[key]
                    elif "rng" in entry:
                        value = np.random.default_rng()
                        value.bit_generator.state = entry["rng"]
                    else:
                        value = _decode_param(entry["value"])
                    setattr(learner, attr, value)
        except ModelFileError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ModelFileError(f"{path}: invalid state for {target.__name__} ({exc!r})") from None
        return learner

    def clone(self) -> "Learner":
        """A fresh, unstarted learner with the same hyperparameters."""
        new = type(self)(**self.get_params())
        new.name = self.name
        return new


# --------------------------------------------------------------------------------------------
# Registry

_REGISTRY: dict[str, tuple[type[Learner], dict[str, Any]]] = {}


def register(name: str, **fixed: Any):
    """Class decorator: make the learner available as ``okl.make(name)`` and on the command line.

    ``fixed`` are hyperparameters that define this registered variant (e.g. a budget cap).
    """

    def deco(cls: type[Learner]) -> type[Learner]:
        if name in _REGISTRY:
            raise ValueError(f"learner name {name!r} is already registered")
        _REGISTRY[name] = (cls, dict(fixed))
        if not fixed and not cls.name:
            cls.name = name
        return cls

    return deco


def make(name: str, **params: Any) -> Learner:
    """Build a registered learner by its CLI name, e.g. ``okl.make("nogd", budget=100)``."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown learner {name!r}; registered: {', '.join(sorted(_REGISTRY))}")
    cls, fixed = _REGISTRY[name]
    learner = cls(**{**fixed, **params})
    learner.name = name
    return learner


def select_params(name: str, params: dict[str, Any] | None = None, **common: Any) -> dict[str, Any]:
    """The one place every path (``okl run``, ``sweep``, ``reproduce``, ``stream``, ``evolve``, the
    scikit-learn and River adapters) builds learner ``name``'s hyperparameters.

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


def learners() -> list[str]:
    """Names of all registered learners."""
    return sorted(_REGISTRY)


def learner_class(name: str) -> type[Learner]:
    if name not in _REGISTRY:
        raise ValueError(f"unknown learner {name!r}; registered: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name][0]


def accepts(name: str, param: str) -> bool:
    """Whether the registered learner takes hyperparameter ``param``."""
    return param in learner_class(name)._param_names()


__all__ = ["Learner", "Trace", "ModelFileError", "NonFiniteError", "register", "make", "learners", "learner_class",
           "accepts", "mistakes_of", "select_params"]
