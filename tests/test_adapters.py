"""scikit-learn and River adapters: the ecosystems' own estimator checks, and the numbers they wrap."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.datasets import make_regression
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import okl
from okl.data import dataset_info, permutation
from okl.sklearn import EXPECTED_FAILED_CHECKS, OKLClassifier, OKLRegressor

river = pytest.importorskip("river")
from river import checks as river_checks  # noqa: E402
from river import datasets as river_datasets  # noqa: E402

from okl.river import OKLRiverClassifier, OKLRiverRegressor  # noqa: E402


# --------------------------------------------------------------------------------------------
# scikit-learn


@parametrize_with_checks(
    [OKLClassifier(), OKLRegressor(), OKLClassifier(learner="forks", budget=20, params={"eta": 0.1})],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS[type(est).__name__])
def test_sklearn_check_estimator(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def svmguide1(data_dir):
    X, y = okl.load_dataset("svmguide1", data_dir)
    order = permutation(len(y), 0)
    return X[order], y[order], dataset_info("svmguide1").sigma


def test_classifier_is_the_okl_learner(svmguide1):
    """fit = one Learner.run over the rows; decision_function = predict_one; any two labels."""
    X, y, sigma = svmguide1
    X, y = X[:2000], y[:2000]
    labels = np.where(y > 0, "signal", "noise")
    clf = OKLClassifier(learner="forks", budget=100, sigma=sigma, random_state=3).fit(X, labels)
    assert clf.classes_.tolist() == ["noise", "signal"]  # noise -> -1, signal -> +1
    ref = okl.make("forks", budget=100, kernel=okl.RBF(sigma=sigma), horizon=2000, random_state=3)
    ref.run(X, y)
    expect = np.array([ref.predict_one(x) for x in X[:300]])
    np.testing.assert_array_equal(clf.decision_function(X[:300]), expect)
    np.testing.assert_array_equal(clf.predict(X[:300]), np.where(expect >= 0, "signal", "noise"))
    assert clf.learner_.n_seen_ == 2000


def test_classifier_accuracy_band(svmguide1):
    """One pass over 70 % of svmguide1, accuracy on the rest: measured 95.2 % (majority 57 %)."""
    X, y, sigma = svmguide1
    n = int(0.7 * len(y))
    clf = OKLClassifier(learner="nogd", budget=100, sigma=sigma, random_state=0).fit(X[:n], y[:n])
    assert 0.93 < clf.score(X[n:], y[n:]) < 0.97


def test_partial_fit_continues_the_stream(svmguide1):
    X, y, sigma = svmguide1
    X, y = X[:1200], y[:1200]
    whole = OKLClassifier(learner="nogd", budget=50, sigma=sigma).fit(X, y)
    parts = OKLClassifier(learner="nogd", budget=50, sigma=sigma)
    for s in range(0, 1200, 250):
        parts.partial_fit(X[s:s + 250], y[s:s + 250], classes=[-1, 1])
    np.testing.assert_allclose(parts.decision_function(X[:200]), whole.decision_function(X[:200]),
                               rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="not one of the classes"):
        parts.partial_fit(X[:3], [1, -1, 5])
    # fit starts from scratch
    again = parts.fit(X[:100], y[:100])
    assert again.learner_.n_seen_ == 100


def test_classifier_errors():
    X = np.random.default_rng(0).random((30, 3))
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        OKLClassifier().fit(X, np.arange(30) % 3)
    with pytest.raises(ValueError, match="got 1 class"):
        OKLClassifier().partial_fit(X, np.ones(30))  # classes= needed when one class is seen
    with pytest.raises(ValueError, match="unknown learner 'nope'"):
        OKLClassifier(learner="nope").fit(X, np.arange(30) % 2)
    with pytest.raises(ValueError, match="has no hyperparameter 'bogus'"):
        OKLClassifier(params={"bogus": 1}).fit(X, np.arange(30) % 2)
    with pytest.raises(ValueError, match="needs a regression loss"):
        OKLRegressor(loss="hinge").fit(X, np.arange(30) % 2)


def test_regressor_is_the_okl_learner_and_scores():
    # the data of scikit-learn's check_regressors_train (its private _regression_dataset)
    X, y = make_regression(n_samples=200, n_features=10, n_informative=1, bias=5.0, noise=4.0,
                           random_state=0)
    X = StandardScaler().fit_transform(X)
    y = (y - y.mean()) / y.std()
    reg = OKLRegressor(learner="nogd", budget=100, sigma=3.0, random_state=0).fit(X, y)
    ref = okl.make("nogd", budget=100, kernel=okl.RBF(sigma=3.0), loss="squared")
    ref.run(X, y)
    np.testing.assert_array_equal(reg.predict(X[:50]), [ref.predict_one(x) for x in X[:50]])
    # the check data of check_regressors_train: R^2 0.73 at sigma 3, 0.04 at sigma 1, 0.88 at the
    # default (the width chosen from the first 50 rows, sqrt(tr Cov / 2) = 2.2 here)
    assert reg.score(X, y) > 0.6
    assert OKLRegressor(learner="nogd", budget=100, sigma=1.0).fit(X, y).score(X, y) < 0.5
    assert OKLRegressor(learner="nogd", budget=100).fit(X, y).score(X, y) > 0.8


def test_pipeline_and_pickle(svmguide1):
    X, y, sigma = svmguide1
    pipe = make_pipeline(MinMaxScaler(), OKLClassifier(learner="fogd", budget=50, sigma=sigma, random_state=1))
    pipe.fit(X[:1000], y[:1000])
    clone = pickle.loads(pickle.dumps(pipe))
    np.testing.assert_array_equal(clone.decision_function(X[1000:1100]), pipe.decision_function(X[1000:1100]))


# --------------------------------------------------------------------------------------------
# River


def _river_variants():
    for cls in (OKLRiverClassifier, OKLRiverRegressor):
        for params in cls._unit_test_params():
            yield cls, params
    yield OKLRiverClassifier, {"loss": "logistic"}


@pytest.mark.parametrize("cls,params", list(_river_variants()),
                         ids=lambda v: v.__name__ if isinstance(v, type) else str(v))
def test_river_check_estimator(cls, params):
    model = cls(**params)
    checks = list(river_checks.yield_checks(model))
    assert len(checks) >= 20
    for check in checks:
        check(model.clone())


def test_river_classifier_is_the_okl_learner():
    """Columns: the first example's keys in sorted order; decisions equal Learner.run's."""
    stream = list(river_datasets.Phishing())[:600]
    keys = sorted(stream[0][0])
    X = np.array([[float(x.get(k, 0.0)) for k in keys] for x, _ in stream])
    y = np.array([1.0 if label else -1.0 for _, label in stream])
    model = OKLRiverClassifier(learner="nogd", budget=50, sigma=1.0, seed=0)
    decisions = []
    for x, label in stream:
        decisions.append(model.decision_function_one(x))
        model.learn_one(x, label)
    trace = okl.make("nogd", budget=50, kernel=okl.RBF(sigma=1.0)).run(X, y)
    np.testing.assert_allclose(decisions, trace.decisions, rtol=0, atol=1e-9)
    assert model.columns == {k: i for i, k in enumerate(keys)}
    assert 8.0 < trace.mistake_rate < 24.0  # Phishing, 600 rounds: measured 15.8 % (majority 40 %)
    with pytest.raises(NotImplementedError, match="loss='logistic'"):
        model.predict_proba_one(stream[0][0])


def test_river_logistic_probability_and_labels():
    model = OKLRiverClassifier(learner="kogd", budget=30, sigma=0.5, loss="logistic")
    assert model.predict_proba_one({"a": 1.0}) == {False: 0.5, True: 0.5}
    for x, y in [({"a": 0.0}, 0), ({"a": 1.0}, 1), ({"a": 0.1}, -1), ({"a": 0.9}, True)] * 5:
        model.learn_one(x, y)
    f = model.decision_function_one({"a": 0.8})
    proba = model.predict_proba_one({"a": 0.8})
    assert math.isclose(proba[True], 1.0 / (1.0 + math.exp(-f)), rel_tol=1e-15) and f > 0
    assert model.predict_one({"a": 0.8}) is True
    with pytest.raises(ValueError, match="binary labels"):
        model.learn_one({"a": 0.5}, "maybe")


def test_river_unseen_keys_and_declared_width():
    """Inferred width: later keys are ignored and counted; a declared width leaves room."""
    model = OKLRiverRegressor(learner="kogd", budget=20, sigma=1.0)
    model.learn_one({"b": 1.0, "a": 2.0}, 0.5)
    model.learn_one({"a": 1.0, "c": 3.0, "d": 4.0}, 0.1)
    assert model.columns == {"a": 0, "b": 1} and model.n_ignored_values == 2
    before = model.predict_one({"a": 1.0, "b": 0.0})
    assert model.predict_one({"a": 1.0, "zzz": 5.0}) == before  # predict never assigns columns
    assert model.columns == {"a": 0, "b": 1}
    wide = OKLRiverRegressor(learner="kogd", budget=20, sigma=1.0, n_features=4)
    wide.learn_one({"b": 1.0, "a": 2.0}, 0.5)
    wide.learn_one({"a": 1.0, "d": 4.0, "c": 3.0}, 0.1)
    assert wide.columns == {"a": 0, "b": 1, "c": 2, "d": 3} and wide.n_ignored_values == 0
    with pytest.raises(ValueError, match="non-numeric value 'x'"):
        wide.learn_one({"a": "x"}, 0.1)


def test_auto_is_the_default_learner_everywhere():
    """OKLClassifier, OKLRegressor, both River adapters and ``okl stream`` default to ``auto``."""
    import argparse

    from okl.cli.stream import add_stream_parser
    from okl.river import OKLRiverClassifier, OKLRiverRegressor
    from okl.sklearn import OKLClassifier, OKLRegressor

    for cls in (OKLClassifier, OKLRegressor, OKLRiverClassifier, OKLRiverRegressor):
        assert cls().learner == "auto"
    p = add_stream_parser(argparse.ArgumentParser().add_subparsers())
    assert p.parse_args(["--dim", "2"]).learner == "auto"
    assert "default auto" in p.format_help()
