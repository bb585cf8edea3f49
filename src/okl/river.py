"""River estimators wrapping any registered okl learner: :class:`OKLRiverClassifier`, :class:`OKLRiverRegressor`.

River passes one example at a time as a dict ``{feature name: value}`` (or a mini-batch as a pandas
DataFrame); okl learners take a fixed-length vector. The adapter keeps a column map, with this rule
for keys (features) that appear over the stream:

* **Columns**: a key gets the next column when it is first *learned* (first-seen order; the new
  keys of one example in sorted order, by ``repr`` when keys are not comparable), so the map does
  not depend on a dict's iteration order. Prediction never changes state. A key missing from an
  example is 0.
* **A growing input space until the width is fixed.** With ``n_features=None`` (the default) the
  input space grows with every new key while the okl learner is inside its width window (its first
  50 learned events, where it fixes its input scale and kernel width from the rows, labels unused):
  when a key appears there, the learner is rebuilt one column wider and the buffered events are
  learned again (at most 49 events; a window decision is the running label mean, which does not
  depend on the features, so nothing predicted changes). A learner that buffers no window (a kernel
  given and ``scale=None``) fixes its width at the first event.
* **Hashed columns for later keys.** When the width is fixed it gets ``n_hashed`` more columns, and
  a key first seen after that (with no free column) is mapped to one of them by a stable hash
  (CRC-32 of its ``repr``; feature hashing, Weinberger et al., ICML 2009): colliding keys add up,
  and ``n_hashed_values`` counts the (non-zero) values placed so. ``n_hashed=None`` (default): as many hashed
  columns as dedicated ones when a key first appeared after the first event, inside the window
  (a stream whose keys arrive over time), none when every key was in the first event (a fixed
  schema: no extra cost per round); an int fixes the count (0: none). With few columns two late
  keys often share one (3 hashed columns: one chance in 3 for two keys), so a collision is not
  silent: ``n_hash_collisions`` counts the values hashed into a column that another key took
  first, and the first collision raises a ``RuntimeWarning`` naming both keys (pass ``n_hashed``
  for more hashed columns, or ``n_features`` to give later keys their own).
* **Declared width**: ``n_features=d`` gives d dedicated columns from the start (first-seen
  order) plus ``n_hashed`` (None: 0) hashed ones; nothing is rebuilt.
* A value with no column (every column taken and no hashed column) is dropped, counted in
  ``n_ignored_values`` when it is not 0 (a 0 loses nothing), and the first one raises a ``RuntimeWarning`` naming the key and the
  parameters that keep it. Measured on River's ``synth.Mv`` behind a ``OneHotEncoder`` (which
  encodes its numeric features too, so 7 new keys arrive with every event: 21,007 keys in 3,000
  events) see ``tests/test_adapters.py``.
* **Categorical features** are one-hot: a string value ``v`` of key ``k`` (always), and any value
  of a key named in ``categorical`` (e.g. ``categorical=["chick", "diet"]`` for integer codes),
  enters as the feature ``(k, v)`` with value 1 (the key itself gets no numeric column), so each
  level is a column of its own under the rules above (levels seen in the width window get
  dedicated columns, later ones hashed columns, or none with ``n_hashed=0``), and ``None`` for a
  categorical key is a missing value (no level set). Integers are
  numbers unless named: a default that also one-hot encodes small integer codes was measured and
  is not safe (River's Agrawal -5.6 to -8.7 points, Planes2D +19 to +23 % MAE:
  docs/results/categorical.md).
* Other values must be numbers (``bool`` counts as 0/1); NaN/inf or a non-numeric value is a
  ``ValueError`` and leaves the model unchanged. No scaler is needed in front: the learner fixes
  a per-feature scale from its first 50 events (:mod:`okl.scaling`, the default ``scale="auto"``),
  so raw features on mixed scales give the results of [0, 1]-scaled ones, and a feature that
  first appears later enters at its first value as 1.

**Labels** (classifier, binary): ``True``/``1``/``+1`` is the positive class (+1) and
``False``/``0``/``-1`` the negative one (-1), River's convention; any other two labels (e.g.
``"spam"``/``"ham"``) are learned in order of appearance, the first as -1 and the second as +1
(paired with a label of the first kind, a label takes the other sign). Labels are told apart by
Python equality, as dict keys and River are: ``True``, ``1``, ``1.0`` and ``np.int64(1)`` are one
label (the first one seen names it). **More classes**: a third
distinct label (e.g. -1, 0 and +1 together, or River's ``ImageSegments``) switches the classifier
to K one-vs-rest outputs (:class:`okl.learners.multiclass.MultiClass`: over one feature map for
``auto``, NOGD, FORKS, FOGD, about the binary learner's cost per event; one binary head per class,
K x that cost, for the other learners): the binary learner becomes the outputs of its two labels
(the negative one as its exact mirror, so nothing learned is lost) and each later class gets a new
output at its first event; ``predict_one`` is the class of the largest margin,
``predict_proba_one`` the margins' softmax at an online-learned temperature (its argmax is
``predict_one``), ``classes`` the labels in the outputs' order.
``predict_one`` returns the positive label when f(x) >= 0, and ``None`` before the first learned
event (River's convention); ``predict_proba_one`` is ``{False: 0.5, True: 0.5}`` then (River's
binary convention) and afterwards the calibrated P(+1) = sigmoid(a_s f(x)) of
:mod:`okl.calibration` (learned test-then-train from the learner's decisions, at every loss,
saved with the learner's model file): P(positive) >= 1/2 exactly when ``predict_one`` says
positive, and it ranks examples as f does. While only one label has been seen, the other key is
present only for boolean labels. So River's ``ROCAUC``, ``LogLoss``, ``BaggingClassifier`` and
``OneVsRestClassifier`` work on the defaults.

**Mini-batches**: ``learn_many(X, y)`` / ``predict_many(X)`` / ``predict_proba_many(X)`` take a
pandas DataFrame (columns are keys; NaN refused as in ``learn_one``) as River's mini-batch API;
``learn_many`` runs the core learner's block path (``Learner.learn_many``: test-then-train inside
the batch), equal to a ``learn_one`` loop within 1e-9 (while the input space grows it goes one
event at a time). The regressor predicts 0.0 before its first learned event (as River's
regressors).

Per example the cost is the learner's round plus the dict-to-vector copy, O(len(x) + dim), plus
O(1) for the calibration; a rebuild inside the window costs at most 49 learner rounds.

>>> import numpy as np
>>> from okl.river import OKLRiverClassifier
>>> model = OKLRiverClassifier(learner="nogd", budget=20, sigma=0.5, seed=0)
>>> model.predict_one({"a": 0.5, "b": 0.5}) is None
True
>>> for a, b in np.random.default_rng(0).random((300, 2)):
...     model.learn_one({"a": a, "b": b}, "yes" if a + b > 1 else "no")
>>> model.predict_one({"a": 0.9, "b": 0.8}), model.predict_one({"b": 0.2, "a": 0.1})
('yes', 'no')
>>> p = model.predict_proba_one({"a": 0.9, "b": 0.8}); sorted(p), p["yes"] > 0.9
(['no', 'yes'], True)
"""

from __future__ import annotations

import math
import numbers
import warnings
import zlib
from typing import Any

import numpy as np

try:
    from river import base as river_base
except ImportError as exc:  # pragma: no cover
    raise ImportError("okl.river needs the river package: pip install river") from exc

from okl._adapters import build_core
from okl._threads import one_blas_thread
from okl.kernels import WIDTH_WINDOW
from okl.learners._autoengine import load_compiled, roots_cached
from okl.learners.base import Learner, learner_class
from okl.learners.multiclass import MultiClass


def _sort_keys(keys: list) -> list:
    try:
        return sorted(keys)
    except TypeError:
        return sorted(keys, key=lambda k: (type(k).__name__, repr(k)))


def _bucket(key, n: int) -> int:
    """The hashed column (0..n-1) of a key: CRC-32 of its repr (stable across processes)."""
    return zlib.crc32(repr(key).encode("utf-8", "backslashreplace")) % n


def _count(value, what: str) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0):
        raise ValueError(f"{what} must be a non-negative integer or None, got {value!r}")
    return None if value is None else int(value)


def _categorical_keys(categorical) -> frozenset:
    """The keys named by ``categorical`` (None: none, strings are categorical anyway)."""
    if categorical is None:
        return frozenset()
    if isinstance(categorical, (str, bytes)) or not hasattr(categorical, "__iter__"):
        raise ValueError(f"categorical must be None or a list of feature keys, got {categorical!r} "
                         f"(one key: categorical=[{categorical!r}])")
    keys = list(categorical)
    for k in keys:
        try:
            hash(k)
        except TypeError:
            raise ValueError(f"categorical: a feature key must be hashable, got {k!r}") from None
    return frozenset(keys)


class _ThirdLabel(ValueError):
    """A third distinct label reached the binary path (the classifier then learns K classes)."""


class _OKLRiverEstimator:
    _task = "classification"

    def __init__(self, learner: str = "auto", budget: int | None = 100, sigma: float | None = None,
                 loss: str | None = None, n_features: int | None = None, n_hashed: int | None = None,
                 params: dict | None = None, seed: int | None = None, categorical=None):
        self.learner = learner
        self.budget = budget
        self.sigma = sigma
        self.loss = loss
        self.n_features = n_features
        self.n_hashed = n_hashed
        self.params = params
        self.seed = seed
        self.categorical = categorical
        self._categorical = _categorical_keys(categorical)
        self.columns: dict[Any, int] = {}
        self.model: Learner | None = None
        self.n_ignored_values = 0
        self.n_hashed_values = 0
        self.n_hash_collisions = 0  # values hashed into a column that another key took first
        self._hashed_keys: dict[int, Any] = {}  # hashed column -> the first key hashed there
        self._dedicated: int | None = None  # dedicated columns once the width is fixed
        self._hashed = 0  # hashed columns once the width is fixed
        self._window: list[tuple[dict, float]] = []  # events learned while the width may grow
        self._grew = False  # a key appeared after the first event, inside the window
        self._multi = False  # the classifier switched to its classes' heads (okl.learners.multiclass)
        learner_class(learner)  # unknown names fail here, listing the registered ones
        if _count(n_features, "n_features") == 0:
            raise ValueError(f"n_features must be a positive integer or None, got {n_features!r}")
        _count(n_hashed, "n_hashed")

    # ---- building -----------------------------------------------------------------------

    def _build(self) -> Learner | MultiClass:
        loss = self.loss if self.loss is not None else (None if self._task == "classification" else "squared")
        core = build_core(self, self._task, loss, random_state=self.seed)
        if self._multi:
            params = {k: v for k, v in core.get_params().items() if k != "random_state"}
            return MultiClass(core.name, params, random_state=self.seed)
        return core

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

    def _values(self, x: dict) -> dict:
        """x as {feature: float}: numbers as they are, a categorical value v of key k as the
        feature (k, v) = 1.0 (the module docstring)."""
        cats = self._categorical
        out = {}
        for key, value in x.items():
            if isinstance(value, str) or key in cats:
                if value is None:  # a missing level: no indicator
                    continue
                try:
                    hash(value)
                except TypeError:
                    raise ValueError(f"categorical feature {key!r} has an unhashable value {value!r}") from None
                if isinstance(value, float) and not math.isfinite(value):
                    raise ValueError(f"categorical feature {key!r} has a non-finite value {value!r}")
                out[(key, value)] = 1.0
            else:
                out[key] = self._number(key, value)
        return out

    def _column(self, key, columns: dict, new: dict | None):
        """(column, kind) of a key: kind 0 dedicated, 1 hashed, 2 none; ``new`` (learning only)
        receives the new dedicated columns."""
        col = columns.get(key)
        if col is None and new is not None:
            col = new.get(key)
        if col is not None:
            return col, 0
        if self._dedicated is not None and self._hashed:
            return self._dedicated + _bucket(key, self._hashed), 1
        return None, 2

    def _vector(self, vals: dict, dim: int, columns: dict, new: dict | None) -> tuple[np.ndarray, int, int]:
        """(vector, hashed values, dropped values); ``new``: assign free dedicated columns to
        unseen keys (in sorted order) into this dict."""
        if new is not None:
            free = (self._dedicated if self._dedicated is not None else math.inf) - len(columns)
            unseen = [k for k in vals if k not in columns]
            for k in _sort_keys(unseen)[:max(0, int(min(free, len(unseen))))]:
                new[k] = len(columns) + len(new)
        v = np.zeros(dim)
        hashed = dropped = 0
        for key, value in vals.items():
            col, kind = self._column(key, columns, new)
            if kind == 2:
                dropped += value != 0.0
            elif kind == 1:
                v[col] += value
                hashed += value != 0.0
            elif col < dim:
                v[col] = value
        return v, hashed, dropped

    def _known_row(self, x: dict, dim: int) -> np.ndarray | None:
        """x's vector on the common path, in one pass: every key has a dedicated column and every
        value is a finite float or an int; None otherwise (the full conversion then takes x, and
        hashes, drops or refuses what it must)."""
        columns = self.columns
        v = np.zeros(dim)
        for key, value in x.items():
            col = columns.get(key)
            kind = type(value)
            if col is None or col >= dim or not (
                    (kind is float or kind is np.float64) and value - value == 0.0 or kind is int):
                return None
            v[col] = value
        return v

    def _row(self, x: dict) -> np.ndarray | None:
        """x as the learner's input vector (None before the first learned example)."""
        if self.model is not None and self.model.dim_ is not None:
            v = self._known_row(x, self.model.dim_)
            if v is not None:
                return v
        vals = self._values(x)
        if self.model is None or self.model.dim_ is None:
            return None
        return self._vector(vals, self.model.dim_, self.columns, None)[0]

    def _decision(self, x: dict) -> float:
        v = self._row(x)
        return 0.0 if v is None else self.model.predict_one(v)

    def _fix_width(self, columns: dict) -> None:
        self._dedicated = len(columns) if self.n_features is None else self.n_features
        self._hashed = self.n_hashed if self.n_hashed is not None else (
            len(columns) if self.n_features is None and self._grew else 0)

    def _learn(self, x: dict, target: float) -> None:
        if self._dedicated is not None and self.model is not None:
            v = self._known_row(x, self._dedicated + self._hashed)
            if v is not None:  # (no new column, nothing hashed or dropped)
                self.model.learn_one(v, target)  # validates before changing state
                return
        vals = self._values(x)
        if self._dedicated is None and self.n_features is not None:  # declared: fixed from the start
            self._fix_width({})
        if self._dedicated is not None:
            model = self.model if self.model is not None else self._build()
            new: dict = {}
            v, hashed, dropped = self._vector(vals, self._dedicated + self._hashed, self.columns, new)
            model.learn_one(v, target)  # validates before changing state
            self._commit(model, new, hashed, dropped, vals)
            return
        self._learn_growing(vals, target)

    def _learn_growing(self, vals: dict, target: float) -> None:
        """One event while the width may still grow (n_features None, inside the window)."""
        columns = dict(self.columns)
        unseen = [k for k in vals if k not in columns]
        for k in _sort_keys(unseen):
            columns[k] = len(columns)
        if not columns:
            raise ValueError("the first example has no features; declare n_features")
        grew = self._grew or bool(unseen and self.model is not None)
        model = self.model
        fresh = model is None
        if fresh:
            model = self._build()
        # this event fixes the width when the learner starts with it
        fixes = (not model._uses_window()) if fresh else (model.n_seen_ >= WIDTH_WINDOW - 1)
        saved = (self._grew, self._dedicated, self._hashed)
        dim = len(columns)
        if fixes:
            self._grew = grew
            self._fix_width(columns)
            dim = self._dedicated + self._hashed
        try:
            if not fresh and dim != model.dim_:
                model = self._build()
                for old_vals, old_target in self._window:
                    model.learn_one(self._plain(old_vals, columns, dim), old_target)
            model.learn_one(self._plain(vals, columns, dim), target)  # validates before changing state
        except Exception:
            self._grew, self._dedicated, self._hashed = saved
            raise
        self.model = model
        self.columns = columns
        self._grew = grew
        if fixes:
            self._window = []
        else:
            self._window.append((vals, target))

    @staticmethod
    def _plain(vals: dict, columns: dict, dim: int) -> np.ndarray:
        v = np.zeros(dim)
        for key, value in vals.items():
            v[columns[key]] = value
        return v

    def _commit(self, model: Learner, new: dict, hashed: int, dropped: int, vals) -> None:
        self.model = model
        self.columns.update(new)
        self.n_hashed_values += hashed
        if self._hashed:
            self._note_hashed_keys(vals)
        if dropped:
            if not self.n_ignored_values:
                key = next(k for k in vals if self._column(k, self.columns, None)[1] == 2
                           and (vals[k] is None or vals[k] != 0.0))
                warnings.warn(f"{type(self).__name__}: feature {key!r} first appeared after the input width "
                              f"was fixed ({self._dedicated} columns, {self._hashed} hashed) and is dropped "
                              "(counted in n_ignored_values); pass n_hashed=k to hash later keys into k columns, "
                              "or n_features to leave room", RuntimeWarning, stacklevel=3)
            self.n_ignored_values += dropped

    def _note_hashed_keys(self, vals) -> None:
        """Record which key took each hashed column first (memory: one key per hashed column); a
        value of another key hashed into a taken column is a collision (their values add up
        there): counted in ``n_hash_collisions``, and the first one raises a ``RuntimeWarning``
        naming both keys and what keeps them apart."""
        owners = self._hashed_keys
        for key, value in vals.items():
            col, kind = self._column(key, self.columns, None)
            if kind != 1:
                continue
            first = owners.setdefault(col, key)
            if first is key or first == key:
                continue
            if not self.n_hash_collisions:
                warnings.warn(f"{type(self).__name__}: features {first!r} and {key!r} first appeared after the "
                              f"input width was fixed and share hashed column {col - self._dedicated} of "
                              f"{self._hashed}: their values add up there (counted in n_hash_collisions); "
                              "pass n_hashed=k for more hashed columns, or n_features to give later keys "
                              "their own", RuntimeWarning, stacklevel=4)
            self.n_hash_collisions += 1

    # ---- mini-batches ---------------------------------------------------------------------

    def _frame_values(self, X) -> tuple[list, np.ndarray]:
        keys = list(X.columns)
        if len(set(keys)) != len(keys):
            twice = next(k for i, k in enumerate(keys) if k in keys[:i])
            raise ValueError(f"the DataFrame has {keys.count(twice)} columns named {twice!r}: each column is one "
                             "feature key, so one would silently replace the other; rename or drop them")
        try:
            M = X.to_numpy(dtype=np.float64, copy=True) if keys else np.zeros((len(X), 0))
        except (TypeError, ValueError):
            for k in keys:
                for value in X[k]:
                    self._number(k, value)
            raise
        if M.size and not np.isfinite(M).all():
            r, c = np.argwhere(~np.isfinite(M))[0]
            raise ValueError(f"feature {keys[c]!r} has a non-finite value {M[r, c]!r} (row {r})")
        return keys, M

    def _block(self, keys: list, M: np.ndarray, columns: dict, new: dict | None) -> tuple[np.ndarray, int, int]:
        """The rows of a frame as vectors (as :meth:`_vector` per row)."""
        if new is not None:
            free = self._dedicated - len(columns)
            unseen = [k for k in keys if k not in columns]
            for k in _sort_keys(unseen)[:max(0, min(free, len(unseen)))]:
                new[k] = len(columns) + len(new)
        dim = self.model.dim_ if self.model is not None and self.model.dim_ is not None else self._dedicated + self._hashed
        V = np.zeros((M.shape[0], dim))
        hashed = dropped = 0
        for j, key in enumerate(keys):
            col, kind = self._column(key, columns, new)
            if kind == 2:
                dropped += int(np.count_nonzero(M[:, j]))
            elif kind == 1:
                V[:, col] += M[:, j]
                hashed += int(np.count_nonzero(M[:, j]))
            elif col < dim:
                V[:, col] = M[:, j]
        return V, hashed, dropped

    def _has_categories(self, X) -> bool:
        """Whether a frame holds categorical columns (named in ``categorical``, or not numeric)."""
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        return any(k in self._categorical for k in X.columns) or any(
            not (is_numeric_dtype(t) or is_bool_dtype(t)) for t in X.dtypes)

    def _learn_frame(self, X, targets: list) -> None:
        if self._has_categories(X):  # one event at a time: the levels become columns as in learn_one
            rows = X.to_dict(orient="records")
            if len(targets) != len(rows):
                raise ValueError(f"y has {len(targets)} entries but X has {len(rows)} rows")
            for x, target in zip(rows, targets):
                self._learn(x, target)
            return
        keys, M = self._frame_values(X)
        if len(targets) != M.shape[0]:
            raise ValueError(f"y has {len(targets)} entries but X has {M.shape[0]} rows")
        i = 0
        while i < M.shape[0] and self._dedicated is None:  # the width may grow: one event at a time
            self._learn({k: M[i, j] for j, k in enumerate(keys)}, targets[i])
            i += 1
        if i == M.shape[0]:
            return
        model = self.model if self.model is not None else self._build()
        new: dict = {}
        V, hashed, dropped = self._block(keys, M[i:], self.columns, new)
        model.learn_many(V, list(targets[i:]) if self._multi else np.asarray(targets[i:], dtype=np.float64))
        self._commit(model, new, hashed, dropped, dict.fromkeys(keys))  # (None: a column's values)

    def _frame_rows(self, X) -> np.ndarray | None:
        """The rows of a frame as the learner's input (None before the first learned example)."""
        if self._has_categories(X):
            rows = [self._row(x) for x in X.to_dict(orient="records")]
            if self.model is None or self.model.dim_ is None:
                return None
            return np.array(rows).reshape(len(rows), self.model.dim_)
        keys, M = self._frame_values(X)
        if self.model is None or self.model.dim_ is None:
            return None
        return self._block(keys, M, self.columns, None)[0]

    def _frame_decisions(self, X) -> np.ndarray:
        V = self._frame_rows(X)
        return np.zeros(len(X)) if V is None else self.model.predict_many(V)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"learner": "forks", "budget": 20, "params": {"horizon": 500}}


class OKLRiverClassifier(_OKLRiverEstimator, river_base.MiniBatchClassifier):
    """River classifier running a registered okl learner (see the module docstring): two classes,
    or K classes as K one-vs-rest outputs.

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
        Any classification loss; probabilities come from :mod:`okl.calibration` at every loss.
    n_features : int or None
        Dedicated columns; None: the keys seen in the learner's width window (a growing input
        space, see the module docstring).
    n_hashed : int or None
        Columns that keys first seen after the width is fixed are hashed into (None: see the
        module docstring).
    params : dict or None
        Further hyperparameters of the learner (e.g. ``{"horizon": 100000}`` for FORKS/SkeGD).
    seed : int or None
        ``random_state`` of the learner.
    categorical : list of keys or None, default None
        Keys whose values are category codes (one-hot, one column per level; e.g. integer ids).
        String values are categorical whatever this says; None: only they are (module docstring).
    """

    def __init__(self, learner: str = "auto", budget: int | None = 100, sigma: float | None = None,
                 loss: str | None = None, n_features: int | None = None, n_hashed: int | None = None,
                 params: dict | None = None, seed: int | None = None, categorical=None):
        super().__init__(learner=learner, budget=budget, sigma=sigma, loss=loss, n_features=n_features,
                         n_hashed=n_hashed, params=params, seed=seed, categorical=categorical)
        self.labels: dict[Any, float] = {}  # label -> its sign, in order of appearance

    # ---- labels -----------------------------------------------------------------------------

    @staticmethod
    def _canonical(y) -> float | None:
        """River's binary convention: +1 for True / 1, -1 for False / 0 / -1; None otherwise."""
        if isinstance(y, (bool, np.bool_)):
            return 1.0 if y else -1.0
        if isinstance(y, numbers.Real) and not (isinstance(y, float) and math.isnan(y)) and y in (1, 0, -1):
            return 1.0 if y == 1 else -1.0
        return None

    def _sign(self, y, labels: dict) -> float:
        """The sign of label y, adding it to ``labels`` when new; ValueError for a third label."""
        if y is None or (isinstance(y, float) and math.isnan(y)):
            raise ValueError(f"label {y!r} is not a class label")
        try:
            known = labels.get(y)
        except TypeError:
            raise ValueError(f"label {y!r} is not hashable; labels must be hashable values") from None
        if known is not None:
            return known
        if len(labels) == 2:
            raise _ThirdLabel(y)
        sign = self._canonical(y)
        if sign is None or any(self._canonical(k) is None for k in labels):
            sign = -next(iter(labels.values())) if labels else -1.0
        if labels and next(iter(labels.values())) == sign:
            other = next(iter(labels))
            raise ValueError(f"labels {other!r} and {y!r} are both {'positive' if sign > 0 else 'negative'} "
                             "under River's binary convention (True/1/+1 positive, False/0/-1 negative); "
                             "map them to True/False")
        labels[y] = sign
        return sign

    def _target(self, y) -> float:
        return self._sign(y, self.labels)

    def _label(self, sign: float):
        """The label learned with ``sign`` (the other known one when only one exists)."""
        for label, s in self.labels.items():
            if s == sign:
                return label
        if len(self.labels) == 1:
            only = next(iter(self.labels))
            if isinstance(only, (bool, np.bool_)):
                return not bool(only)
            return only
        return None

    def _proba(self, p: float) -> dict:
        if not self.labels:
            return {False: 1.0 - p, True: p}
        out = {}
        for sign, q in ((-1.0, 1.0 - p), (1.0, p)):
            label = self._label(sign)
            if label in out:
                out[label] += q
            else:
                out[label] = q
        return out

    # ---- River API --------------------------------------------------------------------------

    @property
    def classes(self) -> list:
        """The labels learned so far (binary: in order of appearance; multi-class: the heads' order)."""
        return list(self.model.classes_) if self._multi else list(self.labels)

    def _switching(self, learn) -> None:
        """A third label: from now on K outputs, through the one switch
        (:meth:`okl.learners.multiclass.MultiClass.from_binary`, which leaves the binary learner
        untouched): the binary learner's two labels continue as the first two classes (the
        negative one as its exact mirror), so nothing learned is lost, and the events buffered in
        the width window keep their labels (a rebuild replays them); then ``learn()``. A refused
        event puts back the binary classifier exactly as it was."""
        saved = (self.model, self._window, self._multi)
        neg, pos = self._label(-1.0), self._label(1.0)
        try:
            self._window = [(vals, pos if t > 0 else neg) for vals, t in self._window]
            self._multi = True
            if self.model is not None:
                self.model = MultiClass.from_binary(self.model, neg, pos, random_state=self.seed)
            learn()
        except BaseException:
            self.model, self._window, self._multi = saved
            raise

    def learn_one(self, x: dict, y) -> None:
        if not self._multi:
            labels = dict(self.labels)
            try:
                target = self._sign(y, labels)
            except _ThirdLabel:
                self._switching(lambda: self._learn(x, y))
            else:
                self._learn(x, target)
                self.labels = labels
            return
        self._learn(x, y)

    def decision_function_one(self, x: dict) -> float:
        """f(x) under the current model (0 before the first learned example); with more than two
        classes, {label: margin of its head}."""
        if self._multi:
            v = self._row(x)
            return {} if v is None else dict(zip(self.model.classes_, self.model.decision_one(v).tolist()))
        return self._decision(x)

    def predict_one(self, x: dict, **kwargs):
        """The positive label when f(x) >= 0, else the negative one; None before the first
        learned example."""
        if self._multi:
            v = self._row(x)
            return None if v is None else self.model.predict_one(v)
        f = self._decision(x)
        if not self.labels:
            return None
        return self._label(1.0 if f >= 0.0 else -1.0)

    def predict_proba_one(self, x: dict, **kwargs) -> dict:
        """{label: probability}: P(positive) = the calibrated probability of f(x)
        (:mod:`okl.calibration`); ``{False: 0.5, True: 0.5}`` before the first learned example."""
        v = self._row(x)
        if self._multi:
            return dict(zip(self.model.classes_, self.model.predict_proba_one(v).tolist()))
        return {False: 0.5, True: 0.5} if v is None else self._proba(self.model.predict_proba_one(v))

    def learn_many(self, X, y) -> None:
        y = list(y)
        if self._multi:
            self._learn_frame(X, y)
            return
        labels = dict(self.labels)
        targets = []
        for i, v in enumerate(y):
            try:
                targets.append(self._sign(v, labels))
            except _ThirdLabel:  # the rows before it as two classes, the rest with the heads
                if i:
                    self.learn_many(X.iloc[:i], y[:i])
                self._switching(lambda: self._learn_frame(X.iloc[i:], y[i:]))
                return
        before = self.model.n_seen_ if self.model is not None else 0
        try:
            self._learn_frame(X, targets)
        finally:  # the labels of every row learned (all of them unless a row was refused)
            if (self.model.n_seen_ if self.model is not None else 0) != before:
                self.labels = labels

    def predict_many(self, X):
        import pandas as pd
        if self._multi:
            V = self._frame_rows(X)
            return pd.Series(self.model.predict_many(V), index=X.index, dtype=object)
        f = self._frame_decisions(X)
        if not self.labels:
            return pd.Series([None] * len(f), index=X.index, dtype=object)
        pos, neg = self._label(1.0), self._label(-1.0)
        return pd.Series([pos if v >= 0.0 else neg for v in f.tolist()], index=X.index)

    def predict_proba_many(self, X):
        import pandas as pd
        V = self._frame_rows(X)
        if self._multi:
            return pd.DataFrame(self.model.predict_proba_many(V), index=X.index, columns=self.model.classes_)
        p = np.full(len(X), 0.5) if V is None else self.model.predict_proba_many(V)
        rows = [self._proba(q) for q in p.tolist()]
        return pd.DataFrame(rows, index=X.index, columns=list(self._proba(0.5)))


class OKLRiverRegressor(_OKLRiverEstimator, river_base.MiniBatchRegressor):
    """River regressor running a registered okl learner with a regression loss (default squared).

    Parameters as :class:`OKLRiverClassifier`; targets are used as given. Predicts 0.0 before
    the first learned example (as River's regressors).
    """

    _task = "regression"

    @staticmethod
    def _value(y) -> float:
        if isinstance(y, (bool, np.bool_)) or not isinstance(y, numbers.Real):
            raise ValueError(f"regression target must be a number, got {y!r}")
        return float(y)

    def learn_one(self, x: dict, y) -> None:
        self._learn(x, self._value(y))

    def predict_one(self, x: dict, **kwargs) -> float:
        return self._decision(x)

    def learn_many(self, X, y) -> None:
        self._learn_frame(X, [self._value(v) for v in list(y)])

    def predict_many(self, X):
        import pandas as pd
        return pd.Series(self._frame_decisions(X), index=X.index, dtype=float)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"learner": "fogd", "budget": 20}


__all__ = ["OKLRiverClassifier", "OKLRiverRegressor"]


def _load_compiled() -> None:
    """Load, when the adapter is imported, what a live stream's first events would otherwise wait
    for: the compiled engine and auto's per-event calls (from Numba's cache), the BLAS thread
    controller (okl._threads: ~0.1 s to inspect the loaded libraries), and the compiled steps the
    members' transitions, the input scale and the K-output path call from Python, by two short
    synthetic streams (three classes, then two) at a small budget, so that every member passes
    its transition. Only on a warm cache: on a cold one this would compile every path (K outputs,
    blocks) at import, 76 s measured before the first event that needs a fraction of it; the first
    events then compile what they use (okl._jit's notice says so). The K-output steps are in the
    test too: after a first, binary stream the cache lacks them, and the preload's three-class
    stream would compile them inside a later import."""
    from okl._compiled import class_steps
    from okl._jit import is_cached
    from okl.learners._multiclass_temperature import temperature_update

    if not (roots_cached() and all(is_cached(f) for f in (class_steps, temperature_update))):
        return
    load_compiled()
    with one_blas_thread():
        pass
    X = np.random.default_rng(0).random((WIDTH_WINDOW + 40, 2))
    for classes in (("a", "b", "c"), (False, True)):
        model = OKLRiverClassifier(budget=4, seed=0)
        for u, v in X:
            x = {"u": float(u), "v": float(v)}
            model.predict_proba_one(x)
            model.learn_one(x, classes[int(u * len(classes))])


_load_compiled()
