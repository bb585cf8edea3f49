"""scikit-learn's and River's conventions (issue 60): the chosen learner's hyperparameters flat and
grid-searchable, categorical columns by name and from pandas' category dtype, NaN / None / an
absent key as one missing-value rule, River's own Interval and an honest _multiclass."""

import math

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from okl.sklearn import OKLClassifier, OKLRegressor

pd = pytest.importorskip("pandas")


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, (X[:, 0] + X[:, 1] ** 2 > 0.5).astype(int)


def test_flat_hyperparameters_are_the_learners_and_grid_searchable():
    X, y = _data()
    flat = OKLClassifier(learner="nogd", eta=0.1, random_state=0).fit(X, y)
    nested = OKLClassifier(learner="nogd", params={"eta": 0.1}, random_state=0).fit(X, y)
    other = OKLClassifier(learner="nogd", eta=1.0, random_state=0).fit(X, y)
    np.testing.assert_array_equal(flat.decision_function(X), nested.decision_function(X))
    assert flat.learner_.eta == 0.1 and not np.array_equal(flat.decision_function(X), other.decision_function(X))
    assert flat.get_params()["eta"] == 0.1 and "eta" not in vars(flat)  # only the named parameters are attributes
    assert clone(flat).get_params() == flat.get_params()
    assert repr(flat) == "OKLClassifier(eta=0.1, learner='nogd', random_state=0)"
    half = len(y) // 2
    folds = [(np.arange(half, len(y)), np.arange(half)), (np.arange(half), np.arange(half, len(y)))]
    g = GridSearchCV(OKLClassifier(learner="nogd", random_state=0), {"eta": [0.01, 1.0], "k": [5, 20]},
                     cv=folds).fit(X, y)
    assert set(g.best_params_) == {"eta", "k"}
    best = g.best_estimator_
    assert (best.learner_.eta, best.learner_.k) == (g.best_params_["eta"], g.best_params_["k"])
    # each cell ran the learner it names: the grid's scores are those of the flat estimators
    for params, score in zip(g.cv_results_["params"], g.cv_results_["mean_test_score"]):
        own = np.mean([OKLClassifier(learner="nogd", random_state=0, **params).fit(X[a], y[a]).score(X[b], y[b])
                       for a, b in folds])
        assert own == pytest.approx(score)


def test_flat_hyperparameters_are_checked():
    X, y = _data(60)
    with pytest.raises(ValueError, match=r"Invalid parameter 'gamma' for estimator OKLClassifier\(learner='nogd'\)"
                                         r"\. Valid parameters are: \[.*'eta'"):
        OKLClassifier(learner="nogd").set_params(gamma=1.0)
    with pytest.raises(ValueError, match="learner 'nogd' has no hyperparameter 'gamma'"):
        OKLClassifier(learner="nogd", gamma=1.0).fit(X, y)
    with pytest.raises(ValueError, match="'eta' is given both flat and in params="):
        OKLClassifier(learner="nogd", eta=0.1, params={"eta": 0.2}).fit(X, y)
    # set_params with a new learner takes that learner's names
    est = OKLRegressor(learner="klms").set_params(learner="qklms", quantization=0.5)
    assert est.fit(X, y.astype(float)).learner_.quantization == 0.5


def test_categorical_by_name_and_from_dtype_are_the_index_form():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300),
                       "city": pd.Categorical(rng.choice(["paris", "rome", "oslo"], size=300))})
    y = ((df["a"] > 0) ^ (df["city"] == "rome")).astype(int)
    ref = OKLClassifier(categorical=[2], random_state=0).fit(df, y)
    for cat in ("from_dtype", ["city"]):
        m = OKLClassifier(categorical=cat, random_state=0).fit(df, y)
        assert m.categories_ == {2: ["oslo", "paris", "rome"]}
        np.testing.assert_array_equal(m.decision_function(df), ref.decision_function(df))
    assert ref.score(df, y) > 0.9
    # from_dtype on a frame without category columns (or an array): every column numeric
    plain = OKLClassifier(categorical="from_dtype", random_state=0).fit(df[["a", "b"]], y)
    np.testing.assert_array_equal(plain.decision_function(df[["a", "b"]]),
                                  OKLClassifier(random_state=0).fit(df[["a", "b"]], y).decision_function(df[["a", "b"]]))
    with pytest.raises(ValueError, match="no column named 'town'; X's columns: a, b, city"):
        OKLClassifier(categorical=["town"]).fit(df, y)
    with pytest.raises(ValueError, match="column name 'city' needs X as a pandas DataFrame"):
        OKLClassifier(categorical=["city"]).fit(df.to_numpy(), y)
    with pytest.raises(ValueError, match=r"row 0, column 2 \('city'\): '\w+' is not a number .*categorical=\['city'\]"):
        OKLClassifier().fit(df, y)


def test_nan_is_a_missing_number_zero_as_a_missing_river_key():
    X, y = _data()
    holes = X.copy()
    holes[::7, 1] = np.nan
    zeros = np.where(np.isnan(holes), 0.0, holes)
    a = OKLClassifier(learner="nogd", random_state=0).fit(holes, y)
    b = OKLClassifier(learner="nogd", random_state=0).fit(zeros, y)
    np.testing.assert_array_equal(a.decision_function(holes), b.decision_function(zeros))
    scipy_sparse = pytest.importorskip("scipy.sparse")
    s = OKLClassifier(learner="nogd", random_state=0).fit(scipy_sparse.csr_matrix(holes), y)
    np.testing.assert_allclose(s.decision_function(holes), b.decision_function(zeros), rtol=0, atol=1e-12)
    # the categorical path: NaN in a numeric column is 0, in a categorical column no level
    df = pd.DataFrame({"u": holes[:, 1], "c": np.where(np.arange(300) % 5 == 0, None, np.arange(300) % 3)})
    filled = df.assign(u=df["u"].fillna(0.0))
    c1 = OKLClassifier(categorical=["c"], random_state=0).fit(df, y)
    c2 = OKLClassifier(categorical=["c"], random_state=0).fit(filled, y)
    np.testing.assert_array_equal(c1.decision_function(df), c2.decision_function(filled))
    inf = X.copy()
    inf[3, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        OKLClassifier().fit(inf, y)


def test_river_interval_multiclass_and_missing_values():
    river = pytest.importorskip("river")
    from river.conf import Interval

    from okl.river import OKLRiverClassifier, OKLRiverRegressor

    assert OKLRiverClassifier()._multiclass is True
    m = OKLRiverRegressor(learner="krls-t")
    iv = m.predict_one({"u": 0.1}, with_interval=True)
    assert type(iv) is Interval and (iv.lower, iv.upper) == (-math.inf, math.inf)
    rng = np.random.default_rng(0)
    for u in rng.uniform(-1, 1, 300):
        m.learn_one({"u": u, "v": 1.0}, float(np.sin(3 * u)))
    iv = m.predict_one({"u": 0.5, "v": 1.0}, with_interval=True)
    assert type(iv) is Interval and iv.lower < iv.upper
    assert iv.center == pytest.approx(m.predict_one({"u": 0.5, "v": 1.0}), abs=1e-12)
    # a None value and an absent key: one rule; a NaN value in a dict is refused, naming the key (a
    # corrupt reading is not a missing one: River's dicts say missing by None or by leaving the key out)
    assert m.predict_one({"u": 0.5, "v": None}) == m.predict_one({"u": 0.5})
    with pytest.raises(ValueError, match="'v' has a non-finite value nan"):
        m.predict_one({"u": 0.5, "v": float("nan")})
    assert river.__version__
