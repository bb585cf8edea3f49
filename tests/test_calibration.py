"""okl.calibration: the online probability calibration of the decisions (every learning path)."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import okl
from okl import calibration
from okl.runtime.base import ModelFileError


def _true_p(f):
    return 1.0 / (1.0 + np.exp(-np.where(f >= 0, 1.5, 0.7) * f))


def test_online_fit_matches_a_batch_logistic_fit():
    """20,000 rounds of decisions with a known two-slope link: the online fit's probabilities
    match a batch maximum-likelihood fit on the same (decision, label) pairs within 0.01 (no
    forgetting) and 0.03 (the default memory of 1,000 rounds) over f in [-4, 4]."""
    rng = np.random.default_rng(0)
    F = rng.normal(0.0, 2.0, 20000)
    Y = np.where(rng.random(F.shape[0]) < _true_p(F), 1.0, -1.0)
    U = np.column_stack([np.maximum(F, 0), np.minimum(F, 0)])
    batch = LogisticRegression(C=1e8, fit_intercept=False).fit(U, Y)
    grid = np.linspace(-4, 4, 81)
    want = batch.predict_proba(np.column_stack([np.maximum(grid, 0), np.minimum(grid, 0)]))[:, 1]
    for memory, tol in ((1e12, 0.01), (calibration.MEMORY, 0.03)):
        state = calibration.new_state()
        calibration.update(state, F, Y, memory=memory)
        got = calibration.probabilities(state, grid)
        assert np.abs(got - want).max() < tol, (memory, np.abs(got - want).max())
    # and the batch fit recovers the link it was drawn from
    np.testing.assert_allclose(batch.coef_[0], [1.5, 0.7], atol=0.1)


def test_probability_agrees_with_the_sign_and_ranks_as_f():
    state = calibration.new_state()
    rng = np.random.default_rng(1)
    F = rng.normal(0.5, 3.0, 3000)
    calibration.update(state, F, np.where(F + rng.normal(0, 2, F.shape[0]) > 0, 1.0, -1.0))
    grid = np.sort(rng.normal(0, 5, 500))
    p = calibration.probabilities(state, grid)
    assert ((p >= 0.5) == (grid >= 0)).all() and (np.diff(p) > 0).all()
    assert calibration.probability(state, 0.0) == 0.5
    assert calibration.probability(state, 1.2) == pytest.approx(calibration.probabilities(state, [1.2])[0], abs=1e-15)


@pytest.mark.parametrize("name", ["nogd", "fogd", "linear", "kogd"])
def test_every_path_learns_the_same_calibration(name, tmp_path):
    """run, a learn_one loop and learn_many blocks give the same calibration (1e-9); the rounds of
    the width window are not used; the state is saved, loaded and checked with the model."""
    rng = np.random.default_rng(2)
    X = rng.random((400, 3))
    y = np.where(X.sum(axis=1) + rng.normal(0, 0.3, 400) > 1.5, 1.0, -1.0)
    a = okl.make(name, random_state=0)
    a.run(X, y)
    b = okl.make(name, random_state=0)
    for row, label in zip(X, y):
        b.learn_one(row, label)
    c = okl.make(name, random_state=0)
    for s in range(0, 400, 37):
        c.learn_many(X[s:s + 37], y[s:s + 37])
    np.testing.assert_allclose(b.calibration_, a.calibration_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(c.calibration_, a.calibration_, rtol=0, atol=1e-9)
    skipped = 50 if a.inputs.uses_window(a) else 1
    assert a.calibration_[0, 4:].sum() == 400 - skipped
    p = a.predict_proba_many(X[:50])
    assert ((p >= 0.5) == (a.predict_many(X[:50]) >= 0)).all()
    assert a.predict_proba_one(X[0]) == pytest.approx(p[0], abs=1e-12)
    a.save(tmp_path / "m.npz")
    loaded = okl.Learner.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.calibration_, a.calibration_)
    np.testing.assert_array_equal(loaded.predict_proba_many(X[:50]), p)


def test_forged_calibration_is_refused(tmp_path):
    X = np.random.default_rng(3).random((120, 2))
    m = okl.make("nogd")
    m.run(X, np.where(X[:, 0] > 0.5, 1.0, -1.0))
    m.calibration_[0, 0] = -3.0  # a decreasing link
    m.save(tmp_path / "bad.npz")
    with pytest.raises(ModelFileError, match="calibration_"):
        okl.Learner.load(tmp_path / "bad.npz")


def test_regression_has_no_probabilities():
    m = okl.make("nogd", loss="squared")
    m.run(np.random.default_rng(4).random((60, 2)), np.zeros(60))
    assert m.calibration_ is None
    with pytest.raises(ValueError, match="regression learner"):
        m.predict_proba_one(np.zeros(2))


@pytest.mark.parametrize("labels,message", [
    (list("TFTFTT"), r"labels that are not numbers \(2 distinct: 'F', 'T'\).*okl.MultiClass take any labels"),
    ([1, 2, 3, 4, 5, 26], r"labels found: 1.0, 2.0, 3.0, 4.0, 5.0, 26.0\); 6 classes: learn them with okl.MultiClass"),
    ([-1, 0, 1, 0, 1, -1], r"labels found: -1.0, 0.0, 1.0\); 3 classes: learn them with okl.MultiClass.*take any labels"),
    ([0.5, 1, 1, 1, 1, 1], r"use a regression loss such as loss='squared'"),
])
def test_label_errors_name_the_labels(labels, message):
    """Labels that are not -1/+1: the error names them, and suggests loss='squared' only for
    labels that are not integers (class ids are not regression targets)."""
    X = np.random.default_rng(0).random((6, 2))
    with pytest.raises(ValueError, match=message) as info:
        okl.make("auto").run(X, np.array(labels))
    if message.find("squared") < 0:
        assert "squared" not in str(info.value)
