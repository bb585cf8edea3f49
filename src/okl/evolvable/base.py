"""The evolvable learner protocol (:class:`EvolvableLearner`, described in :mod:`okl.evolvable`),
its per-run result and its place in the one learner registry (kind ``"evolvable"`` of
:mod:`okl.runtime.base`)."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from okl._validation import as_float64, check_random_state
from okl.runtime.base import learner_class, learners, make, mistakes_of, register
from okl.evolvable.stream import STAGES, EvolvableStream


@dataclass
class EvolvableResult:
    """Decisions of one run over an evolvable stream (decisions[t] is made before learning y[t])."""

    decisions: np.ndarray
    y: np.ndarray
    T1: int
    Te: int
    T2: int
    seconds: float
    diagnostics: dict[str, Any] = field(default_factory=dict)

    @property
    def mistakes(self) -> np.ndarray:
        return mistakes_of(self.decisions, self.y)

    def stage_error_rate(self, stage: str) -> float:
        """Fraction of mistakes within one stage ('previous', 'evolving' or 'current')."""
        s, e = {"previous": (0, self.T1), "evolving": (self.T1, self.T1 + self.Te),
                "current": (self.T1 + self.Te, self.T1 + self.Te + self.T2)}[stage]
        return float(self.mistakes[s:e].mean()) if e > s else float("nan")

    @property
    def current_error_rate(self) -> float:
        """Cumulative error rate over the current stage (OPFES Table 2's CER, a fraction)."""
        return self.stage_error_rate("current")

    def current_error_curve(self) -> np.ndarray:
        """CER after each current-stage round (OPFES Fig. 4)."""
        m = self.mistakes[self.T1 + self.Te:]
        return np.cumsum(m) / np.arange(1, m.shape[0] + 1)


_STAGE_INDEX = {s: i for i, s in enumerate(STAGES)}


def _stage_of(x1, x2) -> str:
    if x1 is None and x2 is None:
        raise ValueError("a round needs x1 (old features), x2 (new features) or both")
    return "previous" if x2 is None else "current" if x1 is None else "evolving"


def _vector(x, dim, what) -> np.ndarray:
    x = as_float64(x, what, 1)
    if x.shape[0] < 1:
        raise ValueError(f"{what} has no features")
    if dim is not None and x.shape[0] != dim:
        raise ValueError(f"{what} has {x.shape[0]} features but this space started with {dim}: a feature "
                         "dimension may change only when the stage changes")
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        raise ValueError(f"{what} has a non-finite value {x[bad[0]]!r} at column {bad[0]}")
    return x


def _label(y) -> float:
    try:
        v = float(y)
    except (TypeError, ValueError):
        raise ValueError(f"y must be a number, got {y!r}") from None
    if v not in (-1.0, 1.0):
        raise ValueError(f"labels must be -1 or +1, got {y!r}")
    return v


class EvolvableLearner:
    """Base class of learners on feature-evolvable streams (see the module docstring)."""

    name: ClassVar[str] = ""
    chunk_size: ClassVar[int] = 2048

    stage_: str | None = None
    dim_old_: int | None = None
    dim_new_: int | None = None
    n_seen_: int = 0

    # ---- bookkeeping -----------------------------------------------------------------------

    def get_params(self) -> dict[str, Any]:
        import inspect

        sig = inspect.signature(type(self).__init__)
        return {p: getattr(self, p) for p in sig.parameters if p != "self"}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.get_params().items())})"

    def clone(self) -> "EvolvableLearner":
        new = type(self)(**self.get_params())
        new.name = self.name
        return new

    def _ensure_rng(self) -> None:
        if not hasattr(self, "_rng"):
            self._rng = np.random.default_rng(check_random_state(getattr(self, "random_state", None)))
            self.stage_counts_ = [0, 0, 0]

    def _check_order(self, stage: str) -> None:
        if self.stage_ is not None and _STAGE_INDEX[stage] < _STAGE_INDEX[self.stage_]:
            raise ValueError(f"the stream went back from the {self.stage_} stage to the {stage} stage; "
                             "features evolve once: previous (x1) -> evolving (x1, x2) -> current (x2)")

    def _enter(self, stage: str, d1: int | None, d2: int | None) -> None:
        """Start spaces and run the transition when moving to ``stage`` (inputs already checked)."""
        self._ensure_rng()
        if d1 is not None and self.dim_old_ is None:
            self._start_old(d1)
            self.dim_old_ = d1
        if d2 is not None and self.dim_new_ is None:
            self._start_new(d2)
            self.dim_new_ = d2
        if stage == "current" and self.stage_ != "current":
            preview = getattr(self, "_preview", None)
            if preview is not None and preview[0] == self.n_seen_:
                state = dict(preview[1].__dict__)
                state.pop("_preview", None)
                self.__dict__.update(state)
            else:
                self._begin_current()
        self._preview = None
        self.stage_ = stage

    # ---- protocol --------------------------------------------------------------------------

    def predict_one(self, x1=None, x2=None) -> float:
        """Decision value for this round's features (0 before anything was learned)."""
        stage = _stage_of(x1, x2)
        self._check_order(stage)
        x1 = None if x1 is None else _vector(x1, self.dim_old_, "x1")
        x2 = None if x2 is None else _vector(x2, self.dim_new_, "x2")
        if stage == "previous":
            return float(self._decide_previous(x1)) if self.dim_old_ is not None else 0.0
        if stage == "evolving":
            if self.dim_new_ is None:
                saved, self._preview = getattr(self, "_preview", None), None
                probe = copy.deepcopy(self)
                self._preview = saved
                probe._enter("evolving", x1.shape[0], x2.shape[0])
                return float(probe._decide_evolving(x1, x2))
            return float(self._decide_evolving(x1, x2))
        if self.stage_ != "current" or self.dim_new_ is None:
            preview = getattr(self, "_preview", None)
            if preview is None or preview[0] != self.n_seen_:
                self._preview = None
                probe = copy.deepcopy(self)
                probe._enter("current", None, x2.shape[0])
                self._preview = (self.n_seen_, probe)
            return float(self._preview[1]._decide_current(x2))
        return float(self._decide_current(x2))

    def learn_one(self, x1=None, x2=None, y=None) -> "EvolvableLearner":
        """One test-then-train round; the features given say the stage (see the module docstring)."""
        stage = _stage_of(x1, x2)
        self._check_order(stage)
        x1 = None if x1 is None else _vector(x1, self.dim_old_, "x1")
        x2 = None if x2 is None else _vector(x2, self.dim_new_, "x2")
        y = _label(y)
        self._enter(stage, None if x1 is None else x1.shape[0], None if x2 is None else x2.shape[0])
        yy = np.array([y])
        if stage == "previous":
            self._previous(x1[None, :], yy)
        elif stage == "evolving":
            self._evolving(x1[None, :], x2[None, :], yy)
        else:
            self._current(x2[None, :], yy)
        self.stage_counts_[_STAGE_INDEX[stage]] += 1
        self.n_seen_ += 1
        return self

    def run(self, stream: EvolvableStream) -> EvolvableResult:
        """Test-then-train over the whole stream, stage by stage; continues from the current state."""
        if not isinstance(stream, EvolvableStream):
            raise ValueError(f"run expects an EvolvableStream, got {type(stream).__name__}")
        T1, Te, T2 = stream.T1, stream.Te, stream.T2
        for stage, length in zip(STAGES, (T1, Te, T2)):
            if length:
                self._check_order(stage)
                break
        D1, D2 = stream.dims
        if T1 + Te and self.dim_old_ is not None and D1 != self.dim_old_:
            raise ValueError(f"the stream's old space has {D1} features but the learner started with {self.dim_old_}")
        if Te + T2 and self.dim_new_ is not None and D2 != self.dim_new_:
            raise ValueError(f"the stream's new space has {D2} features but the learner started with {self.dim_new_}")
        out = np.empty(stream.n_rounds)
        t0 = time.perf_counter()
        if T1:
            self._enter("previous", D1, None)
            X1, y = stream.previous()
            out[:T1] = self._previous(X1, y)
            self.stage_counts_[0] += T1
            self.n_seen_ += T1   # per stage, as learn_one does: the next stage's hooks read it
        if Te:
            self._enter("evolving", D1, D2)
            X1, X2, y = stream.evolving()
            out[T1:T1 + Te] = self._evolving(X1, X2, y)
            self.stage_counts_[1] += Te
            self.n_seen_ += Te
        if T2:
            self._enter("current", None, D2)
            X2, y = stream.current()
            out[T1 + Te:] = self._current(X2, y)
            self.stage_counts_[2] += T2
            self.n_seen_ += T2
        seconds = time.perf_counter() - t0
        return EvolvableResult(out, stream.y.copy(), T1, Te, T2, seconds, self.diagnostics())

    def diagnostics(self) -> dict[str, Any]:
        return {}

    # ---- hooks -----------------------------------------------------------------------------

    def _start_old(self, dim: int) -> None:
        raise NotImplementedError

    def _start_new(self, dim: int) -> None:
        raise NotImplementedError

    def _previous(self, X1: np.ndarray, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _evolving(self, X1: np.ndarray, X2: np.ndarray, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _begin_current(self) -> None:
        raise NotImplementedError

    def _current(self, X2: np.ndarray, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _decide_previous(self, x1: np.ndarray) -> float:
        raise NotImplementedError

    def _decide_evolving(self, x1: np.ndarray, x2: np.ndarray) -> float:
        raise NotImplementedError

    def _decide_current(self, x2: np.ndarray) -> float:
        raise NotImplementedError


# ---- registry: the one learner registry of okl.runtime.base, kind "evolvable" ----------------


def register_evolvable(name: str, **fixed: Any):
    """Class decorator: make an evolvable learner available as ``okl.make(name)`` (and
    ``make_evolvable(name)``), listed by ``okl.learners(kind="evolvable")``."""
    return register(name, kind="evolvable", **fixed)


def evolvable_learners() -> list[str]:
    """Names of the registered evolvable learners (``okl.learners(kind="evolvable")``)."""
    return learners(kind="evolvable")


def evolvable_class(name: str) -> type:
    if name not in learners(kind="evolvable"):
        raise ValueError(f"unknown evolvable learner {name!r}; registered: {', '.join(evolvable_learners())}")
    return learner_class(name, kind="evolvable")


def make_evolvable(name: str, **params: Any) -> EvolvableLearner:
    """Build a registered evolvable learner, e.g. ``make_evolvable("opfes", sigma=2.0)``."""
    evolvable_class(name)
    return make(name, **params)


__all__ = ["EvolvableLearner", "EvolvableResult", "register_evolvable", "make_evolvable", "evolvable_learners",
           "evolvable_class"]
