"""River estimators wrapping any registered okl learner: :class:`OKLRiverClassifier`, :class:`OKLRiverRegressor`.

River passes one example at a time as a dict ``{feature name: value}``; okl learners take a
fixed-length vector. The adapter keeps a column map:

* **Dimension**: ``n_features`` declared up front, or (``None``) the number of keys of the first
  *learned* example. The okl learner is built at the first ``learn_one``
  (``okl.make(learner, budget=..., kernel=RBF(sigma), loss=..., random_state=seed, **params)``,
  passing only what the learner accepts).
* **Columns**: keys get columns in first-seen order over the stream; the new keys of one example
  are taken in sorted order (by ``repr`` when keys are not comparable), so the map does not depend
  on a dict's iteration order. Only ``learn_one`` assigns columns (``predict_one`` never changes
  state). A key missing from an example is 0.
* **Unseen keys** arriving once every column is taken are **ignored** (their values dropped) and
  counted in ``n_ignored_values``; declare ``n_features`` larger than the first example's key
  count to leave room for features that appear later.
* Values must be numbers (``bool`` counts as 0/1); NaN/inf or a non-numeric value is a
  ``ValueError`` and leaves the model unchanged. No scaler is needed in front: the learner fixes
  a per-feature scale from its first 50 events (:mod:`okl.scaling`, the default ``scale="auto"``),
  so raw features on mixed scales give the results of [0, 1]-scaled ones, and a feature that
  first appears later enters at its first value as 1. (A ``preprocessing.StandardScaler`` in
  front changes little; River's ``MinMaxScaler`` returns NaN before it has seen a value, which
  the adapter refuses.)

Classification is binary with River's convention for binary labels: ``True``/``1``/``+1`` is the
positive class (+1), ``False``/``0``/``-1`` the negative one (-1); ``predict_one`` returns ``True``
when f(x) >= 0. ``predict_proba_one`` is a probability only for ``loss="logistic"`` (the model is
then P(y = +1 | x) = 1 / (1 + exp(-f(x)))); for margin losses (hinge, the default) f is not a
probability and ``predict_proba_one`` raises ``NotImplementedError`` (River's convention for
classifiers without probabilities; ``predict_one`` works for every loss).

Per example the cost is the learner's round plus the dict-to-vector copy, O(len(x) + dim).

>>> import numpy as np
>>> from okl.river import OKLRiverClassifier
>>> model = OKLRiverClassifier(learner="nogd", budget=20, sigma=0.5, loss="logistic", seed=0)
>>> for a, b in np.random.default_rng(0).random((300, 2)):
...     model.learn_one({"a": a, "b": b}, a + b > 1)
>>> model.predict_one({"a": 0.9, "b": 0.8}), model.predict_one({"b": 0.2, "a": 0.1})
(True, False)
>>> round(model.predict_proba_one({"a": 0.9, "b": 0.8})[True], 2)
0.99
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

try:
    from river import base as river_base
except ImportError as exc:  # pragma: no cover
    raise ImportError("okl.river needs the river package: pip install river") from exc

from okl._adapters import build_core
from okl.learners.base import Learner, learner_class


def _sort_keys(keys: list) -> list:
    try:
        return sorted(keys)
    except TypeError:
        return sorted(keys, key=lambda k: (type(k).__name__, repr(k)))


class _OKLRiverEstimator:
    _task = "classification"

    def __init__(self, learner: str = "auto", budget: int | None = 100, sigma: float | None = None,
                 loss: str | None = None, n_features: int | None = None,
                 params: dict | None = None, seed: int | None = None):
        self.learner = learner
        self.budget = budget
        self.sigma = sigma
        self.loss = loss
        self.n_features = n_features
        self.params = params
        self.seed = seed
        self.columns: dict[Any, int] = {}
        self.model: Learner | None = None
        self.n_ignored_values = 0
        learner_class(learner)  # unknown names fail here, listing the registered ones
        if n_features is not None and (isinstance(n_features, bool) or
                                       not isinstance(n_features, numbers.Integral) or n_features < 1):
            raise ValueError(f"n_features must be a positive integer or None, got {n_features!r}")

    # ---- building -----------------------------------------------------------------------

    def _build(self) -> Learner:
        loss = self.loss if self.loss is not None else (None if self._task == "classification" else "squared")
        return build_core(self, self._task, loss, random_state=self.seed)

    @property
    def dim(self) -> int | None:
        """Number of columns (None before the first learned example when not declared)."""
        if self.model is not None:
            return self.model.dim_
        return self.n_features

    @staticmethod
    def _number(key, value) -> float:
        if isinstance(value, (bool, np.bool_)):
            return float(value)
        if not isinstance(value, numbers.Real):
            raise ValueError(f"feature {key!r} has a non-numeric value {value!r}")
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"feature {key!r} has a non-finite value {value!r}")
        return value

    def _vector(self, x: dict, dim: int, assign: bool) -> tuple[np.ndarray, dict, int]:
        """(vector, new key -> column, ignored value count); assigns nothing itself."""
        v = np.zeros(dim)
        new: dict[Any, int] = {}
        ignored = 0
        unseen = [k for k in x if k not in self.columns]
        if assign and unseen:
            free = dim - len(self.columns)
            for k in _sort_keys(unseen)[:max(free, 0)]:
                new[k] = len(self.columns) + len(new)
        for key, value in x.items():
            col = self.columns.get(key, new.get(key))
            value = self._number(key, value)
            if col is None:
                ignored += 1
                continue
            v[col] = value
        return v, new, ignored

    def _decision(self, x: dict) -> float:
        if self.model is None or self.model.dim_ is None:
            for key, value in x.items():
                self._number(key, value)
            return 0.0
        v, _, _ = self._vector(x, self.model.dim_, assign=False)
        return self.model.predict_one(v)

    def _learn(self, x: dict, target: float) -> None:
        model = self.model if self.model is not None else self._build()
        dim = model.dim_ if model.dim_ is not None else (self.n_features or len(x))
        if dim < 1:
            raise ValueError("the first example has no features; declare n_features")
        v, new, ignored = self._vector(x, dim, assign=True)
        model.learn_one(v, target)  # validates before changing state
        self.model = model
        self.columns.update(new)
        self.n_ignored_values += ignored

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"learner": "forks", "budget": 20, "params": {"horizon": 500}}


class OKLRiverClassifier(_OKLRiverEstimator, river_base.Classifier):
    """Binary River classifier running a registered okl learner (see the module docstring).

    Parameters
    ----------
    learner : str, default "auto"
        Registered learner name (``okl.learners()``); "auto" runs a pool of learners and widths
        mixed online (``okl.learners.auto``).
    budget : int or None, default 100
    sigma : float or None, default None
        Width of the Gaussian kernel RBF(sigma), passed when the learner takes a kernel. None: the
        learner chooses it from the first 50 rows of the stream (``okl.kernels.scale_sigma``).
    loss : str or None, default None (the learner's, hinge)
        "logistic" makes ``predict_proba_one`` available.
    n_features : int or None
        Number of columns; None: the key count of the first learned example.
    params : dict or None
        Further hyperparameters of the learner (e.g. ``{"horizon": 100000}`` for FORKS/SkeGD).
    seed : int or None
        ``random_state`` of the learner.
    """

    @staticmethod
    def _target(y) -> float:
        if y is True or (isinstance(y, np.bool_) and bool(y)):
            return 1.0
        if y is False or (isinstance(y, np.bool_) and not bool(y)):
            return -1.0
        if isinstance(y, numbers.Real) and y in (1, -1, 0):
            return 1.0 if y == 1 else -1.0
        raise ValueError(f"binary labels must be True/False, 1/0 or +1/-1, got {y!r}")

    def learn_one(self, x: dict, y) -> None:
        self._learn(x, self._target(y))

    def decision_function_one(self, x: dict) -> float:
        """f(x) under the current model (0 before the first learned example)."""
        return self._decision(x)

    def predict_one(self, x: dict, **kwargs) -> bool:
        return self._decision(x) >= 0.0

    def predict_proba_one(self, x: dict, **kwargs) -> dict:
        loss = getattr(self.model, "loss", None) if self.model is not None else self.loss
        if loss != "logistic":
            raise NotImplementedError("predict_proba_one needs loss='logistic': the decision value "
                                      f"of a {loss or 'hinge'}-loss model is not a probability")
        f = self._decision(x)
        p = 1.0 / (1.0 + math.exp(-f)) if f >= 0 else math.exp(f) / (1.0 + math.exp(f))
        return {False: 1.0 - p, True: p}


class OKLRiverRegressor(_OKLRiverEstimator, river_base.Regressor):
    """River regressor running a registered okl learner with a regression loss (default squared).

    Parameters as :class:`OKLRiverClassifier`; targets are used as given.
    """

    _task = "regression"

    def learn_one(self, x: dict, y) -> None:
        if isinstance(y, bool) or not isinstance(y, numbers.Real):
            raise ValueError(f"regression target must be a number, got {y!r}")
        self._learn(x, float(y))

    def predict_one(self, x: dict, **kwargs) -> float:
        return self._decision(x)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"learner": "fogd", "budget": 20}


__all__ = ["OKLRiverClassifier", "OKLRiverRegressor"]
