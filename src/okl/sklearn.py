"""scikit-learn estimators wrapping any registered okl learner: :class:`OKLClassifier`, :class:`OKLRegressor`.

``__init__`` only stores the parameters (scikit-learn convention); the okl learner is built at
the first ``fit``/``partial_fit`` as ``okl.make(learner, budget=..., kernel=RBF(sigma), loss=...,
random_state=..., **hyperparameters)``, passing ``budget``/``sigma``/``loss``/``random_state`` only to
learners that accept them.

* **Every declared hyperparameter of the chosen learner is a flat parameter of the estimator**:
  ``OKLClassifier(learner="nogd", eta=0.1, k=20)``, ``set_params(eta=...)``, so
  ``GridSearchCV(OKLClassifier(learner="nogd"), {"eta": [0.01, 0.1, 1], "k": [10, 20]})`` searches
  them (``get_params`` lists those given; a name the learner does not take is a ValueError at
  ``set_params``, or at ``fit`` for one given to the constructor). ``params={...}`` (a dict, the
  older form) still works; a name given both ways is refused.

* ``fit(X, y)`` starts from scratch and makes **one online pass** over the rows in the given
  order (test-then-train, ``Learner.run``); learners that take a ``horizon`` (the expected
  stream length, e.g. FORKS/SkeGD's rho = 0.3 T) get ``horizon = len(X)`` unless ``params``
  sets it. ``partial_fit`` continues the same stream (no horizon is passed: the learner's
  documented fallback applies unless ``params`` sets one). Shuffle the rows yourself if the
  order is not random.
* ``decision_function(X)`` is the current f(x) per row (no state change); ``predict`` maps
  f >= 0 to ``classes_[1]`` and f < 0 to ``classes_[0]`` (okl's rule everywhere: a tie f = 0 goes
  to the positive class, where scikit-learn's linear models would pick ``classes_[0]``).
* Two classes: ``classes_`` (sorted, any labels) maps ``classes_[0]`` to -1 and ``classes_[1]``
  to +1. More than two: ``learner_`` is a :class:`okl.runtime.multiclass.MultiClass`, one-vs-rest
  over ``classes_`` (K outputs over one feature map for ``auto``, NOGD, FORKS, FOGD, linear; one
  binary head per class, K x the binary learner's cost per row, for the others),
  ``decision_function`` gives the (n, K) margins and ``predict`` the class of the largest.
* ``predict_proba(X)`` at every loss: f(x) through the learner's online calibration
  (:mod:`okl.calibration`: a two-slope Platt sigmoid learned test-then-train from the decisions
  of ``fit`` / ``partial_fit``, saved in the learner's model file); its argmax is ``predict``. ``partial_fit`` takes the
  classes from ``classes=`` or, when absent, from a first batch that shows both. Given by
  ``classes=`` (or by ``fit``), the classes are fixed: another label is a ValueError. Taken from
  the first batch, they grow: a later label joins ``classes_`` (after the others, in order of
  first appearance, so ``classes_`` is then not sorted), two classes turning into K one-vs-rest
  outputs by the same switch as River's third label and ``okl stream``'s
  (:meth:`okl.runtime.multiclass.MultiClass.from_binary`; nothing learned is lost, and a
  refused batch leaves the model as it was).
* Labels are told apart by Python equality (as dict keys): ``True``, ``1``, ``1.0`` and
  ``np.int64(1)`` are one class (``numpy.unique`` and River do the same).
* No scaler is needed in front: the learner fixes a per-feature scale from its first 50 rows
  (:mod:`okl.scaling`; ``scale=None`` in ``params`` uses the features as given).
  Sparse input is densified a block of rows at a time.
* **n_jobs** (``GridSearchCV(..., n_jobs=2)``): joblib's default process workers each import
  scikit-learn and okl and load okl's compiled loops once (about 4-5 s a worker on a loaded
  2-core machine: import 3.9 s, first fit 0.8 s), after which their tasks run at the serial speed
  (a 6-setting x 3-fold grid over 3,000 rows: serial 0.22 s, process workers 8.4 s the first time
  and 0.36 s once started). okl's compiled loops release the GIL, so threads pay none of it:
  ``with joblib.parallel_config(backend="threading"): GridSearchCV(..., n_jobs=2).fit(X, y)``
  took 0.25 s on that grid.
* **Missing values**: NaN in a numeric column is the value 0, the rule of a River key that is
  absent or None (:mod:`okl._tabular`; where 0 is a meaningful value, impute before); inf is refused.
* ``categorical=`` as scikit-learn's HistGradientBoosting takes it: ``"from_dtype"`` (a pandas
  DataFrame's ``category`` columns), column names of a DataFrame, column indices or a boolean
  mask. ``categorical=[j, ...]``: those columns hold categories
  (strings or integer codes): each level becomes a 0/1 column after the numeric columns, in
  sorted order, as scikit-learn's ``OneHotEncoder(handle_unknown="ignore")`` in front would do;
  the levels are fixed by ``fit`` (all of X) or the first ``partial_fit`` batch, a later unseen
  level enters as no level (counted in ``n_unknown_levels_`` when learned, a ``RuntimeWarning``
  the first time), ``None`` / NaN is a missing level. The levels are in ``categories_`` (column -> list).
  Dense input only.

Checks that do not apply (``check_estimator``), listed in :data:`EXPECTED_FAILED_CHECKS`
(per adapter) and :data:`EXPECTED_FAILED_CHECKS_BY_LEARNER` (per adapter and learner; both with
the reason, :func:`expected_failed_checks` merges them for one estimator): none for the
classifier, none per learner (the linear learner's squared-loss step is normalised, so the
checks' unscaled features no longer make it diverge). The regressor is tagged ``poor_score`` because one online pass with a budget over the
200-row check data does not reach the R^2 > 0.5 that ``check_regressors_train`` asks of batch
regressors (see the tests for the measured value). ``OKLRegressor`` refuses a learner that
learns -1/+1 labels only at construction (and at ``fit``).

>>> import numpy as np
>>> from okl.sklearn import OKLClassifier
>>> X = np.random.default_rng(0).random((300, 2))
>>> y = np.where(X.sum(axis=1) > 1, "yes", "no")
>>> clf = OKLClassifier(learner="nogd", budget=20, sigma=0.5, random_state=0).fit(X, y)
>>> clf.classes_.tolist(), clf.predict([[0.1, 0.2], [0.9, 0.8]]).tolist()
(['no', 'yes'], ['no', 'yes'])
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from okl._adapters import AdapterSettings, build_core, multiclass_core
from okl._tabular import category_dtype_columns, categorical_columns, is_missing, levels, not_a_number, zero_missing
from okl.runtime.base import Learner, learner_class, learner_kind, make
from okl.runtime.multiclass import MultiClass
from okl.runtime.hyperparameters import param_names

#: rows densified and run at a time
BLOCK_ROWS = 4096

#: checks of ``sklearn.utils.estimator_checks`` that cannot apply to the adapters, with the reason
#: (pass to ``check_estimator(..., expected_failed_checks=...)``); empty: every check applies.
EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = {"OKLClassifier": {}, "OKLRegressor": {}}

EXPECTED_FAILED_CHECKS_BY_LEARNER: dict[tuple[str, str], dict[str, str]] = {}


def expected_failed_checks(estimator) -> dict[str, str]:
    """The checks expected to fail for this adapter instance (its class and its learner), with the
    reason: ``check_estimator(est, expected_failed_checks=expected_failed_checks(est))``."""
    name = type(estimator).__name__
    return {**EXPECTED_FAILED_CHECKS.get(name, {}),
            **EXPECTED_FAILED_CHECKS_BY_LEARNER.get((name, getattr(estimator, "learner", None)), {})}


def _blocks(X):
    for s in range(0, X.shape[0], BLOCK_ROWS):
        block = X[s:s + BLOCK_ROWS]
        yield s, (block.toarray() if hasattr(block, "toarray") else block)


def _refuse_evolvable(learner) -> None:
    """A feature-evolvable learner (``okl.learners(kind="evolvable")``) learns from two feature
    spaces and has no ``fit(X, y)`` form: refused at construction, with the reason. Unknown names
    are left for ``fit`` to report, as scikit-learn asks of ``__init__``."""
    if isinstance(learner, str):
        try:
            kind = learner_kind(learner)
        except ValueError:
            return
        if kind != "streaming":
            raise ValueError(f"learner {learner!r} is a feature-evolvable learner (okl evolve); the "
                             "scikit-learn adapters take the streaming learners, okl.learners(kind='streaming')")


def _refuse_classification_only(learner) -> None:
    """OKLRegressor with a registered learner that learns -1/+1 labels only (it takes no
    regression loss): refused at construction (and again at ``fit``, after ``set_params``).
    Anything else (an unknown name, another type) is left for ``fit`` to report, as scikit-learn
    asks of ``__init__``."""
    if not isinstance(learner, str):
        return
    try:
        cls = learner_class(learner)
    except ValueError:
        return
    reason = None
    if "loss" not in param_names(cls):
        reason = "it takes no loss"
    else:
        try:
            make(learner, loss="squared")
        except (ValueError, TypeError) as exc:
            reason = f"it refuses the squared loss ({exc})"
    if reason:
        raise ValueError(f"OKLRegressor: learner {learner!r} learns -1/+1 labels only ({reason}); "
                         "use OKLClassifier, or a learner with a regression loss")


#: ``_input`` called without targets (prediction)
_NO_Y = object()


class _OKLEstimator(AdapterSettings, BaseEstimator):
    _task = "classification"
    _default_loss = "hinge"

    def __init__(self, learner: str = "auto", budget: int | None = 100, sigma: float | None = None,
                 loss: str | None = None, params: dict[str, Any] | None = None, random_state=None,
                 categorical=None, **hyperparameters):
        super().__init__(learner, budget, sigma, loss, params, categorical)
        self.random_state = random_state
        # the learner's own hyperparameters, flat (eta=..., k=...): checked at fit, as
        # scikit-learn asks; private, so that only the named parameters are attributes
        self._hyperparameters = dict(hyperparameters)
        _refuse_evolvable(learner)

    # ---- flat hyperparameters of the chosen learner ----------------------------------------

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The estimator's parameters and the learner's hyperparameters given to it (flat)."""
        return {**super().get_params(deep=deep), **self._hyperparameters}

    def set_params(self, **params) -> "_OKLEstimator":
        """Set the estimator's parameters and any declared hyperparameter of the chosen learner by
        its own name (``set_params(eta=0.1)``; what ``GridSearchCV(est, {"eta": [...]})`` does).
        ValueError naming the valid ones for a name the learner does not take."""
        own = set(self._get_param_names())
        if "learner" in params:
            super().set_params(learner=params.pop("learner"))
        flat = {k: params.pop(k) for k in list(params) if k not in own and "__" not in k}
        super().set_params(**params)
        valid = self._learner_hyperparameters()
        for key in flat:
            if valid is not None and key not in valid:
                raise ValueError(f"Invalid parameter {key!r} for estimator {type(self).__name__}(learner="
                                 f"{self.learner!r}). Valid parameters are: {sorted(own | valid)!r}.")
        self._hyperparameters.update(flat)
        return self

    def _learner_hyperparameters(self) -> set[str] | None:
        """The hyperparameters of the chosen learner settable flat (None: an unknown learner)."""
        try:
            names = set(param_names(learner_class(self.learner)))
        except (ValueError, TypeError):
            return None
        return names - set(self._get_param_names())

    def _learner_params(self) -> dict[str, Any]:
        """``params`` and the flat hyperparameters, one dict (ValueError for one given twice)."""
        both = set(self.params or {}) & set(self._hyperparameters)
        if both:
            raise ValueError(f"hyperparameter {sorted(both)[0]!r} is given both flat and in params=; give it once")
        own = set(self._hyperparameters) & set(self._get_param_names())
        if own:
            raise ValueError(f"{sorted(own)[0]!r} is a parameter of {type(self).__name__}, not a hyperparameter")
        return {**(self.params or {}), **self._hyperparameters}

    # ---- input: validation and categorical columns --------------------------------------------

    def _input(self, X, y=_NO_Y, reset: bool = False, **kw):
        """``X`` (and ``y``) validated as scikit-learn does; a missing number (NaN) is 0 (the rule of
        :mod:`okl._tabular`); with ``categorical`` the named columns one-hot after the numeric ones
        (columns and levels fixed at ``reset``, the module docstring)."""
        learning, raw = y is not _NO_Y, X  # (raw: a DataFrame's column names and dtypes)
        if reset:
            plain = self.categorical is None or (isinstance(self.categorical, str) and self.categorical == "from_dtype"
                                                 and not category_dtype_columns(X))
        else:
            plain = not getattr(self, "categories_", None)
        names = [str(c) for c in X.columns] if hasattr(X, "columns") else None
        try:
            out = validate_data(self, *((X, y) if learning else (X,)), reset=reset, **(kw if learning else {}),
                                **(dict(accept_sparse="csr", dtype=np.float64, ensure_all_finite="allow-nan") if plain
                                   else dict(dtype=None, ensure_all_finite=False)))
        except ValueError as exc:
            if plain and "could not convert" in str(exc):
                not_a_number(X, names=names)
            raise
        if plain:
            if reset and self.categorical is not None:
                self.categories_, self.n_unknown_levels_ = {}, 0
            return (zero_missing(out[0]), out[1]) if learning else zero_missing(out)
        X, y = out if learning else (out, None)
        X = np.asarray(X, dtype=object) if X.dtype.kind not in "fiub" else X
        if reset:
            cats = categorical_columns(self.categorical, raw, X.shape[1])
            self.categories_ = {j: levels(X[:, j]) for j in cats}
            self.n_unknown_levels_ = 0
        numeric = [j for j in range(X.shape[1]) if j not in self.categories_]
        try:
            Z = X[:, numeric].astype(np.float64)
        except (TypeError, ValueError):
            not_a_number(X, numeric, names)
            raise
        Z[np.isnan(Z)] = 0.0  # a missing number (okl._tabular)
        if Z.size and not np.isfinite(Z).all():
            i, k = np.argwhere(~np.isfinite(Z))[0]
            raise ValueError(f"row {i}, column {numeric[k]}: a non-finite value {Z[i, k]!r}")
        parts, unknown = [Z], 0
        for j, known in self.categories_.items():
            index = {v: k for k, v in enumerate(known)}
            onehot = np.zeros((X.shape[0], len(known)))
            for i, v in enumerate(X[:, j]):
                if is_missing(v):
                    continue
                k = index.get(v)
                if k is None:
                    unknown += 1
                else:
                    onehot[i, k] = 1.0
            parts.append(onehot)
        if unknown and learning and not reset:  # counted where the rows are learned (predict changes nothing)
            if not self.n_unknown_levels_:
                warnings.warn(f"{type(self).__name__}: {unknown} value(s) in categorical columns are levels not "
                              "seen when the levels were fixed (the first fit / partial_fit); they enter as no level "
                              "(counted in n_unknown_levels_)", RuntimeWarning, stacklevel=3)
            self.n_unknown_levels_ += unknown
        Z = np.hstack(parts)
        return (Z, y) if learning else Z

    # ---- the core learner --------------------------------------------------------------------

    def _seed(self) -> int | None:
        rs = self.random_state
        if rs is None:
            return None
        if isinstance(rs, numbers.Integral) and not isinstance(rs, bool):
            return int(rs)
        return int(check_random_state(rs).randint(2**31 - 1))

    def _build(self, n_rows: int | None) -> Learner:
        name = self.learner
        learner_class(name)  # unknown names: ValueError listing the registered ones
        if self._task == "regression":
            _refuse_classification_only(name)
        loss = self.loss if self.loss is not None else self._default_loss
        return build_core(self, self._task, loss, random_state=self._seed(), horizon=n_rows)

    def _run(self, X, targets: np.ndarray) -> None:
        for s, block in _blocks(X):
            self.learner_.run(block, targets[s:s + block.shape[0]])

    def _checked(self, X):
        check_is_fitted(self, "learner_")
        return self._input(X)

    def _decisions(self, X) -> np.ndarray:
        X = self._checked(X)
        if isinstance(self.learner_, MultiClass):
            out = np.empty((X.shape[0], self.learner_.n_classes_))
            for s, block in _blocks(X):
                out[s:s + block.shape[0]] = self.learner_.decision_many(block)
            return out
        out = np.empty(X.shape[0])
        for s, block in _blocks(X):
            out[s:s + block.shape[0]] = self.learner_.predict_many(block)  # predict_one per row
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = True  # a missing number (okl._tabular)
        return tags


class OKLClassifier(ClassifierMixin, _OKLEstimator):
    """Classifier running a registered okl learner online (see the module docstring).

    Parameters
    ----------
    learner : str, default "auto"
        Registered learner name (``okl.learners()``), e.g. "nogd", "forks", "fogd"; "auto" runs its
        pool of learners and widths mixed online (``okl.ensemble.auto``).
    budget : int or None, default 100
        Budget B, passed when the learner takes one.
    sigma : float or None, default None
        Width of the Gaussian kernel RBF(sigma), passed when the learner takes a kernel. None: the
        learner chooses it from the first 50 rows of the stream (``okl.kernels.scale_sigma``).
    loss : str or None, default None (hinge)
        Classification loss: "hinge", "squared_hinge" or "logistic".
    params : dict or None
        Further hyperparameters of the learner (e.g. ``{"k": 20}`` for NOGD); the older form of the
        flat ones below.
    random_state : int, RandomState or None
    categorical : "from_dtype", list of column indices or names, boolean mask or None, default None
        Columns holding categories (strings or codes): each level becomes a 0/1 column after the
        numeric ones, the levels fixed at ``fit`` / the first ``partial_fit`` (module docstring).
    **hyperparameters
        Any declared hyperparameter of the learner by its name (``eta=0.1``, ``k=20`` for NOGD;
        ``okl.make(learner).hyperparameters`` lists them): grid-searchable as they are.

    Attributes
    ----------
    learner_ : okl.Learner
        The online learner (its ``save``/``load`` give safe model files).
    classes_ : ndarray of shape (K,)
        Two classes: ``classes_[0]`` is learned as -1, ``classes_[1]`` as +1; more: one head each.
    n_features_in_ : int
    """

    _task = "classification"
    _default_loss = "hinge"

    def _set_classes(self, classes) -> None:
        classes = np.unique(classes)
        if classes.shape[0] < 2:
            shown = ", ".join(repr(c) for c in classes.tolist())
            raise ValueError(f"{type(self).__name__} needs at least 2 classes, got "
                             f"{classes.shape[0]} class{'es' if classes.shape[0] != 1 else ''} ({shown}).")
        self.classes_ = classes

    @property
    def _multi(self) -> bool:
        return self.classes_.shape[0] > 2

    def _build_for_classes(self, n_rows: int | None):
        """The binary core learner, or with more than two classes its K-class form
        (:class:`okl.runtime.multiclass.MultiClass`, classes in ``classes_`` order)."""
        core = self._build(n_rows)
        return multiclass_core(core, self._seed(), self.classes_.tolist()) if self._multi else core

    def _targets(self, y) -> np.ndarray:
        if self._multi:
            known = np.isin(y, self.classes_)
            if not known.all():
                raise ValueError(f"label {y[np.flatnonzero(~known)[0]].tolist()!r} is not one of the classes "
                                 f"{self.classes_.tolist()}")
            return y
        pos = y == self.classes_[1]
        unknown = ~(pos | (y == self.classes_[0]))
        if unknown.any():
            raise ValueError(f"label {y[np.flatnonzero(unknown)[0]]!r} is not one of the classes "
                             f"{self.classes_.tolist()}")
        return np.where(pos, 1.0, -1.0)

    def _check_binary(self, y) -> None:
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        if y_type not in ("binary", "multiclass"):
            raise ValueError(f"Only binary classification is supported. The type of the target is {y_type}.")

    def fit(self, X, y) -> "OKLClassifier":
        """Start from scratch and learn the rows of ``X`` once, in order (test-then-train)."""
        X, y = self._input(X, y, reset=True)
        self._check_binary(y)
        self._set_classes(y)
        targets = self._targets(y)
        self.classes_grow_ = False
        self.learner_ = self._build_for_classes(X.shape[0])
        self._run(X, targets)
        self.learner_.end_width_window()  # a batch shorter than the width window: fix it now
        return self

    def partial_fit(self, X, y, classes=None) -> "OKLClassifier":
        """Continue the stream with the rows of ``X`` (the first call may give ``classes``)."""
        first = not hasattr(self, "learner_")
        X, y = self._input(X, y, reset=first)
        check_classification_targets(y)
        if first:
            if classes is None and np.unique(y).shape[0] < 2:
                raise ValueError(f"classes must be passed on the first call to partial_fit when its batch shows "
                                 f"fewer than 2 classes (this one: {np.unique(y).tolist()!r}); e.g. "
                                 f"partial_fit(X, y, classes=[...all labels...])")
            self._set_classes(y if classes is None else classes)
        elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError(f"classes={np.unique(classes).tolist()} differs from the classes of the "
                             f"first partial_fit call {self.classes_.tolist()}")
        if first:
            self.classes_grow_ = classes is None
            targets = self._targets(y)
            self.learner_ = self._build_for_classes(None)
            if self._multi:
                self.learner_.fixed = not self.classes_grow_
        else:
            new = ~np.isin(y, self.classes_)
            if new.any() and getattr(self, "classes_grow_", False):
                self._learn_new_classes(X, y)
                return self
            targets = self._targets(y)
        self._run(X, targets)
        return self

    def _learn_new_classes(self, X, y) -> None:
        """A batch with labels outside ``classes_`` when the first ``partial_fit`` inferred the
        classes (no ``classes=``): they join in order of first appearance. Two classes become K
        through the one switch (:meth:`okl.runtime.multiclass.MultiClass.from_binary`, which
        leaves the binary learner untouched); when the batch is refused, ``learner_`` and
        ``classes_`` stay as they were."""
        if self._multi:
            self._run(X, y)  # MultiClass checks every label and row before it changes anything
        else:
            multi = MultiClass.from_binary(self.learner_, self.classes_[0], self.classes_[1],
                                           random_state=self._seed())
            for s, block in _blocks(X):
                multi.run(block, y[s:s + block.shape[0]])
            self.learner_ = multi
        self.classes_ = np.asarray(self.learner_.classes_)

    def decision_function(self, X) -> np.ndarray:
        """f(x) per row: > 0 leans to ``classes_[1]``, < 0 to ``classes_[0]``; with more than two
        classes the (n, K) margins of the classes' heads."""
        return self._decisions(X)

    def predict(self, X) -> np.ndarray:
        """``classes_[1]`` where f(x) >= 0, else ``classes_[0]``; with more than two classes the
        class of the largest margin."""
        decisions = self._decisions(X)  # checks fitted first
        if decisions.ndim == 2:
            return self.classes_[np.argmax(decisions, axis=1)]
        return self.classes_[(decisions >= 0.0).astype(int)]

    def predict_proba(self, X) -> np.ndarray:
        """Columns P(``classes_[0]``), P(``classes_[1]``) per row: f(x) through the learner's
        online calibration (:mod:`okl.calibration`, learned test-then-train from the decisions of
        ``fit`` / ``partial_fit``, at any loss): P(``classes_[1]``) >= 1/2 exactly where
        ``predict`` gives ``classes_[1]``, and the probabilities rank rows as
        ``decision_function`` does."""
        if isinstance(getattr(self, "learner_", None), MultiClass):
            X = self._checked(X)
            return np.vstack([np.zeros((0, self.classes_.shape[0]))]
                             + [self.learner_.predict_proba_many(block) for _, block in _blocks(X)])
        decisions = self._decisions(X)  # checks fitted first
        p = self.learner_.calibrated(decisions)
        return np.column_stack([1.0 - p, p])


class OKLRegressor(RegressorMixin, _OKLEstimator):
    """Regressor running a registered okl learner online with a regression loss (default squared).

    Parameters as :class:`OKLClassifier` (``loss`` default "squared"); targets are used as given
    (the papers scale them to [0, 1]). ``predict`` is the current f(x).
    """

    _task = "regression"
    _default_loss = "squared"

    def __init__(self, learner: str = "auto", budget: int | None = 100, sigma: float | None = None,
                 loss: str | None = None, params: dict[str, Any] | None = None, random_state=None,
                 categorical=None, **hyperparameters):
        super().__init__(learner=learner, budget=budget, sigma=sigma, loss=loss, params=params,
                         random_state=random_state, categorical=categorical, **hyperparameters)
        _refuse_classification_only(learner)

    def fit(self, X, y) -> "OKLRegressor":
        """Start from scratch and learn the rows of ``X`` once, in order (test-then-train)."""
        X, y = self._input(X, y, reset=True, y_numeric=True)
        self.learner_ = self._build(X.shape[0])
        self._run(X, np.asarray(y, dtype=np.float64))
        self.learner_.end_width_window()  # a batch shorter than the width window: fix it now
        return self

    def partial_fit(self, X, y) -> "OKLRegressor":
        """Continue the stream with the rows of ``X``."""
        first = not hasattr(self, "learner_")
        X, y = self._input(X, y, reset=first, y_numeric=True)
        if first:
            self.learner_ = self._build(None)
        self._run(X, np.asarray(y, dtype=np.float64))
        return self

    def predict(self, X) -> np.ndarray:
        """The current f(x) per row."""
        return self._decisions(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags


__all__ = ["OKLClassifier", "OKLRegressor", "EXPECTED_FAILED_CHECKS", "EXPECTED_FAILED_CHECKS_BY_LEARNER",
           "expected_failed_checks"]
