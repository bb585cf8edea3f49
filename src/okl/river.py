"""River estimators wrapping any registered okl learner: :class:`OKLRiverClassifier`, :class:`OKLRiverRegressor`.

River passes one example at a time as a dict ``{feature name: value}`` (or a mini-batch as a pandas
DataFrame); okl learners take a fixed-length vector. The adapter keeps a column map, with this rule
for keys (features) that appear over the stream:

* **Columns**: a key gets the next column when it is first *learned* (first-seen order; the new
  keys of one example in sorted order, by ``repr`` when keys are not comparable), so the map does
  not depend on a dict's iteration order. Prediction never changes state. **Missing values**, one
  rule (:mod:`okl._tabular`, the scikit-learn adapters' NaN too): a key missing from an example, a
  ``None`` value and a NaN value are the same thing, the value 0 for a numeric key (no column is
  made for it) and no level for a categorical one.
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
* **Open vocabulary** (``n_features=0, n_hashed=k``, e.g. ``k = 2**20`` for words, ids or tokens
  whose set never ends): every key is hashed, none gets a dedicated column and the width is k from
  the first event (no window growth, no rebuild). Key k with value v adds s v at column c,
  (c, s) = :func:`okl.categories.signed_bucket` (k, n_hashed): c the CRC-32 column above and s = +1
  or -1 from an independent bit of the same hash (signed feature hashing, Weinberger et al., ICML
  2009, as the ``alternate_sign`` of River's and scikit-learn's FeatureHasher: the values of two
  colliding keys cancel in expectation instead of adding up, so inner products of hashed rows are
  unbiased). Each row goes to the learner as a 1 x k ``scipy.sparse.csr_matrix`` built from the
  (column, signed value) pairs, never a dense vector of length k (a DataFrame: an n x k CSR
  block); the cost of a round over such rows is the learner's (a learner whose input path is dense
  densifies them). ``n_hashed_values`` counts the non-zero values hashed, ``n_hash_collisions`` the
  values that met a column another key took first (no warning in this mode: with every key hashed
  collisions are expected, and the signs make them cancel). The same hash maps a feature name of
  ``okl stream --n-hashed k`` (``+1 word:1``): a dict key ``"word"`` and a line's ``word`` share a
  column and a sign. Measured on River's Phishing with ``learner="linear"``, ``params={"scale":
  None}``: 13.12 % mistakes, equal to the adapter with dedicated columns (a linear model does not
  care about signs or column order; 9 keys do not collide in 2^20 columns;
  ``tests/test_river_hashing.py``).
  The hashing of later keys above (``n_features`` None or >= 1) stays unsigned: signing it would
  change the numbers of every stream that uses it today, and whether a sign helps there (few late
  keys in a block of a few columns, mostly kernel learners on indicator columns) is not measured.
* A value with no column (every column taken and no hashed column) is dropped, counted in
  ``n_ignored_values`` when it is not 0 (a 0 loses nothing), and the first one raises a ``RuntimeWarning`` naming the key and the
  parameters that keep it. Measured on River's ``synth.Mv`` behind a ``OneHotEncoder`` (which
  encodes its numeric features too, so 7 new keys arrive with every event: 21,007 keys in 3,000
  events) see ``tests/test_adapters.py``.
* **Categorical features** are one-hot: a string value ``v`` of key ``k`` (always), and any value
  of a key named in ``categorical`` (e.g. ``categorical=["chick", "diet"]`` for integer codes),
  enters as the feature ``(k, v)`` with value 1 (the key itself gets no numeric column), so each
  level is a column of its own under the rules above (levels seen in the width window get
  dedicated columns, later ones hashed columns, or none with ``n_hashed=0``), and ``None`` (or NaN)
  for a categorical key is a missing value (no level set). Integers are
  numbers unless named: a default that also one-hot encodes small integer codes was measured and
  is not safe (River's Agrawal -5.6 to -8.7 points, Planes2D +19 to +23 % MAE:
  docs/results/categorical.md).
* Other values must be numbers (``bool`` counts as 0/1); inf or a non-numeric value is a
  ``ValueError`` and leaves the model unchanged (None and NaN are missing, above). No scaler is needed in front: the learner fixes
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
to K one-vs-rest outputs (:class:`okl.runtime.multiclass.MultiClass`: over one feature map for
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

Per example the cost is the learner's round plus the dict-to-vector copy, O(len(x) + dim) (open
vocabulary: O(len(x) log len(x)), no dense vector), plus O(1) for the calibration; a rebuild
inside the window costs at most 49 learner rounds.

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
from typing import Any

import numpy as np

try:
    from river import base as river_base
    from river.conf import Interval
except ImportError as exc:  # pragma: no cover
    raise ImportError("okl.river needs the river package: pip install river") from exc

from okl._river_features import _OKLRiverEstimator
from okl._threads import one_blas_thread
from okl.kernels import WIDTH_WINDOW
from okl.engine.roots import load_compiled, roots_cached
from okl.intervals import ConformalHead
from okl.runtime.multiclass import MultiClass


class _ThirdLabel(ValueError):
    """A third distinct label reached the binary path (the classifier then learns K classes)."""


class OKLRiverClassifier(_OKLRiverEstimator, river_base.MiniBatchClassifier):
    """River classifier running a registered okl learner (see the module docstring): two classes,
    or K classes as K one-vs-rest outputs.

    Multi-class (River's ``_multiclass`` is True): a third label turns the two classes into K
    one-vs-rest outputs, nothing learned lost (module docstring).

    Parameters
    ----------
    learner : str, default "auto"
        Registered learner name (``okl.learners()``); "auto" runs a pool of learners and widths
        mixed online (``okl.ensemble.auto``).
    budget : int or None, default 100
    sigma : float or None, default None
        Width of the Gaussian kernel RBF(sigma), passed when the learner takes a kernel. None: the
        learner chooses it from the first 50 rows of the stream (``okl.kernels.scale_sigma``).
    loss : str or None, default None (the learner's, hinge)
        Any classification loss; probabilities come from :mod:`okl.calibration` at every loss.
    n_features : int or None
        Dedicated columns; None: the keys seen in the learner's width window (a growing input
        space, see the module docstring); 0: none, every key hashed (the open-vocabulary mode,
        with ``n_hashed``).
    n_hashed : int or None
        Columns that keys first seen after the width is fixed are hashed into (None: see the
        module docstring); with ``n_features=0`` the columns every key is hashed into, with a sign,
        each row passed to the learner as a 1 x n_hashed CSR row.
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

    @property
    def _multiclass(self) -> bool:
        return True  # (River's flag: its checks then test K classes too)

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
        (:meth:`okl.runtime.multiclass.MultiClass.from_binary`, which leaves the binary learner
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

    **Prediction intervals** for every learner: ``predict_interval_one(x, alpha=0.1)`` and River's
    interval-regressor convention ``predict_one(x, with_interval=True, confidence=0.95)`` return River's
    own ``river.conf.Interval`` (``lower``, ``upper``; ``center`` their mean, ``width``) from online
    conformal calibration (:class:`okl.intervals.ConformalHead`: adaptive conformal inference /
    conformal PID on the errors of the predictions made before each example was learned, scaled by
    the learner's predictive standard deviation where it has one, krls-t, else by the stream's local
    error scale; symmetric about the prediction, so ``center`` is the prediction); ``Interval(-inf,
    inf)`` before two learned examples. Measured at 90 % with the default learner: TrumpApproval
    89.2 %, ChickWeights 89.8 %, Friedman #1 89.7 % (River's Jackknife around the same model: 93.8 %,
    71.0 %, 96.6 %; ../shared/checks/timeseries.py).

    >>> import numpy as np
    >>> from okl.river import OKLRiverRegressor
    >>> model = OKLRiverRegressor(learner="krls-t")
    >>> rng = np.random.default_rng(0)
    >>> for u in rng.uniform(-1, 1, 1000):
    ...     model.learn_one({"u": u}, float(np.sin(3 * u) + 0.1 * rng.standard_normal()))
    >>> iv = model.predict_one({"u": 0.5}, with_interval=True)
    >>> round(iv.lower, 2), round(iv.center, 2), round(iv.upper, 2), round(float(np.sin(1.5)), 2)
    (0.74, 1.0, 1.26, 1.0)
    """

    _task = "regression"

    @staticmethod
    def _value(y) -> float:
        if isinstance(y, (bool, np.bool_)) or not isinstance(y, numbers.Real):
            raise ValueError(f"regression target must be a number, got {y!r}")
        return float(y)

    def learn_one(self, x: dict, y) -> None:
        y = self._value(y)
        # the prediction before y is learned is the head's honest score; the placeholder 0.0 before
        # the first learned example is not a prediction, and is not scored
        learned = self.model is not None and self.model.n_seen_ > 0
        f, scale = self._mean_scale(x) if learned else (0.0, None)
        self._learn(x, y)
        head = self.__dict__.setdefault("interval_head_", ConformalHead())
        if learned:
            head.update(f, y, scale)

    def _mean_scale(self, x: dict) -> tuple[float, float | None]:
        """The prediction at x and the learner's predictive standard deviation (None without one:
        the head's local scale)."""
        v = self._row(x) if self.model is not None else None
        if v is not None and hasattr(self.model, "predict_mean_var_one"):
            mean, var = self.model.predict_mean_var_one(v)
            if math.isfinite(var) and var > 0.0:
                return mean, math.sqrt(var)
        return self._decision(x), None

    def predict_interval_one(self, x: dict, alpha: float = 0.1) -> Interval:
        """The 1 - alpha prediction interval at x from online conformal calibration
        (:class:`okl.intervals.ConformalHead`: conformal PID on the scores |y - f(x)| / u(x), u the
        learner's predictive standard deviation where it has one, else the stream's local scale),
        for every learner, as River's ``Interval``; (-inf, inf) before two learned examples."""
        f, scale = self._mean_scale(x)
        head = self.__dict__.get("interval_head_")
        if head is None:
            return Interval(-math.inf, math.inf)
        iv = head.interval(f, alpha, scale)
        return Interval(iv.lower, iv.upper)

    def predict_one(self, x: dict, with_interval: bool = False, confidence: float = 0.95, **kwargs):
        """The prediction f(x) (0.0 before the first learned example); with ``with_interval=True``
        the central ``confidence`` interval from :meth:`predict_interval_one` (alpha = 1 - confidence)."""
        if not with_interval:
            return self._decision(x)
        return self.predict_interval_one(x, round(1.0 - confidence, 12))  # (0.9 -> 0.1, not 0.0999..)

    def learn_many(self, X, y) -> None:
        self._learn_frame(X, [self._value(v) for v in list(y)])

    def predict_many(self, X):
        import pandas as pd
        return pd.Series(self._frame_decisions(X), index=X.index, dtype=float)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"learner": "fogd", "budget": 20}
        yield {"learner": "krls-t", "budget": 20}


__all__ = ["OKLRiverClassifier", "OKLRiverRegressor", "warm_up"]


def warm_up() -> bool:
    """Load, before a live stream starts, what its first events would otherwise wait for: the
    compiled engine and auto's per-event calls (from the compile cache), the BLAS thread
    controller (okl._threads: ~0.1 s to inspect the loaded libraries), and the compiled steps the
    members' transitions, the input scale and the K-output path call from Python, by two short
    synthetic streams (three classes, then two) at a small budget, so that every member passes its
    transition. About 0.4 s once a process; optional (importing the module does none of it: the
    first 60 events of a stream then take about 0.2 s more, and a process that needs none of it
    pays nothing). Only on a warm cache (``okl compile --check``): on a cold one it would compile
    every path (K outputs, blocks), about a minute; it then does nothing and returns False."""
    from okl._compiled import class_steps
    from okl._jit import is_cached
    from okl.runtime._multiclass_temperature import temperature_update

    if not (roots_cached() and all(is_cached(f) for f in (class_steps, temperature_update))):
        return False
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
    return True

