"""KNLMS and KAP with the coherence criterion (okl.learners.knlms) against a from-scratch NumPy
transcription of KAF.md K3 (Richard, Bermudez & Honeine 2009; KAFBOX lib/knlms.m, lib/kap.m)."""

import numpy as np
import pytest

import okl
from okl.checks import check_learner
from okl.components.steps.kap import spd_solve
from okl.learners.knlms import KAP, KNLMS


def _gauss(D, x, sigma):
    return np.exp(-np.sum((np.asarray(D) - x) ** 2, axis=-1) / (2 * sigma ** 2))


def _reference_kap(X, y, sigma, mu0, eta, eps, p, budget):
    """KAF.md K3 in NumPy: the coherence criterion max_j |kappa(x, d_j)| <= mu0 (while the
    dictionary has room), then alpha += eta H' (eps I + H H')^{-1} (y_mem - H alpha) over the last
    p inputs (p = 1: KNLMS). Returns the decisions and the dictionary size."""
    D, alpha, mem_x, mem_y, out = [], np.zeros(0), [], [], []
    for x, t in zip(X, y):
        k = _gauss(D, x, sigma) if D else np.zeros(0)
        out.append(k @ alpha)
        if len(D) < budget and (not D or np.max(np.abs(k)) <= mu0):
            D.append(x)
            alpha = np.append(alpha, 0.0)
        mem_x, mem_y = (mem_x + [x])[-p:], (mem_y + [t])[-p:]
        H = np.array([_gauss(D, u, sigma) for u in mem_x])
        G = eps * np.eye(len(mem_x)) + H @ H.T
        alpha = alpha + eta * H.T @ np.linalg.solve(G, np.array(mem_y) - H @ alpha)
    return np.array(out), len(D)


def _stream(data_dir):
    X, y = okl.load_dataset("cpusmall", data_dir)
    return X[:400], y[:400]


@pytest.mark.parametrize("name, params, p", [
    ("knlms", dict(coherence=0.9, eta=0.1, regularization=1e-4), 1),
    ("knlms", dict(coherence=0.99, eta=0.7, regularization=1e-3, budget=12), 1),
    ("kap", dict(coherence=0.95, eta=0.5, regularization=1e-2, order=20), 20),
    ("kap", dict(coherence=0.99, eta=0.3, regularization=1e-3, order=4, budget=15), 4),
])
def test_the_published_rule(name, params, p, data_dir):
    X, y = _stream(data_dir)
    sigma = 1.5
    m = okl.make(name, loss="squared", kernel=okl.RBF(sigma=sigma), scale=None, center_targets=False, **params)
    got = m.run(X, y).decisions
    budget = params.get("budget", 100)
    ref, size = _reference_kap(X, y, sigma, params["coherence"], params["eta"], params["regularization"], p, budget)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)
    assert m.m_ == size and (size == budget) == ("budget" in params)  # the budget caps the dictionary
    assert size > 3
    # it learns: the last 200 rounds' error is far below predicting 0 (no target centring here)
    assert np.mean((got[200:] - y[200:]) ** 2) < 0.1 * np.mean(y[200:] ** 2)


def test_classification_is_least_squares_on_the_labels():
    """The hinge loss names the task; the rule is the same squared-error rule on the -1 / +1 labels."""
    X, y = okl.load_dataset("german")
    X, y = X[:300], y[:300]
    kw = dict(kernel=okl.RBF(sigma=2.0), scale=None, center_targets=False)
    clf = okl.make("kap", order=5, **kw).run(X, y)
    reg = okl.make("kap", order=5, loss="squared", **kw).run(X, y.astype(float))
    assert np.array_equal(clf.decisions, reg.decisions)
    assert clf.mistake_rate < 35.0


def test_spd_solve():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(6, 6))
    G = A @ A.T + 0.1 * np.eye(6)
    r = rng.normal(size=6)
    z = np.empty(6)
    spd_solve(G, 6, r, z, np.empty((6, 6)))
    np.testing.assert_allclose(G @ z, r, atol=1e-10)


def test_per_event_equals_run_bit_for_bit():
    X, y = okl.load_dataset("german")
    for name in ("knlms", "kap"):
        ref = okl.make(name, budget=30).run(X, y)
        m = okl.make(name, budget=30)
        d = []
        for i in range(len(y)):
            d.append(m.predict_one(X[i]))
            m.learn_one(X[i], float(y[i]))
        assert np.array_equal(np.array(d), ref.decisions), name
        # learn_one without predict_one computes the row itself: the same numbers
        m2 = okl.make(name, budget=30)
        d2 = [m2.events.learn_round(m2, X[i], float(y[i])) for i in range(len(y))]
        assert np.array_equal(np.array(d2), ref.decisions), name


@pytest.mark.parametrize("cls", [KNLMS, KAP])
def test_check_learner(cls):
    check_learner(cls)
