"""KOGD, FOGD, NOGD and the linear reference: exact identities and mistake-rate bands on real data."""

import numpy as np
import pytest

import okl
from okl.data import permutation
from okl.eval import evaluate, majority_rate


def test_kogd_decisions_equal_the_kernel_expansion(german):
    X, y = german
    p = permutation(len(y), 1)[:300]
    X, y = X[p], y[p]
    kernel = okl.RBF(sigma=1.0)
    trace = okl.KOGD(eta=0.3, decay=0.01, kernel=kernel).run(X, y)
    # direct NORMA: alpha_i(t) = eta y_i (1 - eta lambda)^(t - i - 1) for margin errors i < t
    alphas, sv = [], []
    for t in range(len(y)):
        f = sum(a * kernel(X[i][None], X[t][None])[0, 0] for a, i in zip(alphas, sv))
        assert trace.decisions[t] == pytest.approx(f, abs=1e-12)
        alphas = [a * (1 - 0.3 * 0.01) for a in alphas]
        if y[t] * f < 1:
            alphas.append(0.3 * y[t])
            sv.append(t)


def test_nogd_transition_keeps_predictions_on_the_top_eigenspace(german):
    from okl.learners.nogd import top_eigen_map

    X, y = german
    kernel = okl.RBF(sigma=1.0)
    m = okl.NOGD(budget=50, k=50, kernel=kernel)
    trace = m.run(X[:400], y[:400])
    tr = m.transition_round_
    assert m.diagnostics()["stage"] == 2 and tr is not None
    # the first stage is a 50-budget KOGD up to and including the transition round
    ref = okl.KOGD(budget=50, kernel=kernel).run(X[:400], y[:400]).decisions
    np.testing.assert_allclose(trace.decisions[: tr + 1], ref[: tr + 1], atol=1e-12)
    # with k = B the map z(x) = D^-1/2 V^T k_B(x) and w = D^1/2 V^T alpha reproduce the expansion
    K = kernel(m.SV_, m.SV_)
    M, root = top_eigen_map(K, 50)
    Kx = kernel(X[:400], m.SV_)
    np.testing.assert_allclose((Kx @ M.T) @ (root @ m.alpha_), Kx @ m.alpha_, atol=1e-8)
    # with k < B it is the projection onto the top-k eigenspace
    vals, vecs = np.linalg.eigh(K)
    P = vecs[:, -5:] @ vecs[:, -5:].T
    M5, root5 = top_eigen_map(K, 5)
    np.testing.assert_allclose((Kx @ M5.T) @ (root5 @ m.alpha_), Kx @ P @ m.alpha_, atol=1e-8)


def test_nogd_keeps_rank_budget_by_default():
    assert okl.NOGD(budget=100).k_ == 100
    assert okl.NOGD(budget=100).stage2_ == "adagrad"
    assert okl.NOGD(budget=100, loss="squared").stage2_ == "ogd"
    assert okl.NOGD(budget=100, loss="squared", stage2="adagrad").stage2_ == "adagrad"
    assert okl.FOGD(budget=100).n_components_ == 400
    assert okl.FOGD(budget=100).eta_ == 0.2 and okl.FOGD(budget=7, eta=0.8).eta_ == 0.8
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, 100\]"):
        okl.NOGD(budget=100, k=101)


# Bands (20 permutations, every round counted, B = 100). References at sigma 8 (ALGORITHMS.md 9.9,
# 9.10): the authors' FORKS code gives NOGD 30.24 ± 0.17 all rounds and 25.29 their way; LSOKL gives
# FOGD 32.74. We measured NOGD 30.24 ± 0.17 / 25.28 and FOGD 32.86 ± 0.78. At sigma 1: LSOKL FOGD
# 27.30, ours 27.59 ± 1.02.
@pytest.mark.parametrize("name, sigma, band, authors_band", [
    ("nogd", 8.0, (29.9, 30.6), (24.9, 25.7)),
    ("fogd", 8.0, (32.0, 33.7), None),
    ("fogd", 1.0, (26.6, 28.6), None),
])
def test_german_mistake_rates_within_bands(german, name, sigma, band, authors_band):
    X, y = german
    # the published settings (the library defaults differ, see the learners' docstrings)
    paper = {"nogd": dict(k=10, stage2="ogd"), "fogd": dict(eta=0.002 * 400)}[name]
    s = evaluate(name, X, y, runs=20, budget=100, kernel=okl.RBF(sigma=sigma), params=paper)
    assert band[0] <= s.metric.mean() <= band[1], s.metric.mean()
    if authors_band:
        assert authors_band[0] <= s.authors.mean() <= authors_band[1], s.authors.mean()


def test_codrna_kernel_learners_beat_linear_and_majority(data_dir):
    X, y = okl.load_dataset("codrna", data_dir)
    rows = {}
    for name in ("nogd", "fogd", "linear"):
        rows[name] = evaluate(name, X, y, runs=1, budget=200, kernel=okl.RBF(sigma=1.0), max_rows=20000).metric[0]
    assert majority_rate(y) == pytest.approx(33.333, abs=0.01)
    assert rows["nogd"] < 9.0 and rows["fogd"] < 9.0, rows
    # on the same features (a given width turns the kernel learners' input map off) the kernel
    # learners beat the linear one by 2 points; linear's own default map (symlog) closes much of it
    same = evaluate("linear", X, y, runs=1, params={"scale": None}, max_rows=20000).metric[0]
    assert same > rows["nogd"] + 2.0, (same, rows)
    assert rows["linear"] < same - 1.5, (same, rows)


def test_regression_squared_loss_beats_the_mean_predictor(data_dir):
    from okl.eval import mean_predictor_loss

    X, y = okl.load_dataset("cpusmall", data_dir)
    s = evaluate("nogd", X, y, runs=2, budget=100, kernel=okl.RBF(sigma=1.0), loss="squared")
    p = permutation(len(y), 0)
    baseline = mean_predictor_loss(y[p])
    assert s.task == "regression"
    assert s.metric.mean() < 0.5 * baseline, (s.metric.mean(), baseline)


def test_nogd_adagrad_stage_equals_direct_adagrad(german):
    X, y = german
    kernel = okl.RBF(sigma=2.0)
    m = okl.NOGD(budget=30, kernel=kernel)
    trace = m.run(X[:300], y[:300])
    t0 = m.transition_round_
    Z = kernel(X[:300], m.SV_) @ m.M_.T
    from okl.learners.nogd import top_eigen_map
    M, root = top_eigen_map(kernel(m.SV_, m.SV_), 30)
    w = root @ m.alpha_
    G = np.zeros_like(w)
    for t in range(t0, 300):
        f = trace.decisions[t] if t == t0 else Z[t] @ w
        if t > t0:
            assert trace.decisions[t] == pytest.approx(f, abs=1e-9)
        if y[t] * f < 1:
            g = -y[t] * Z[t]
            G += g * g
            w -= np.where(G > 0, g / np.sqrt(np.where(G > 0, G, 1.0)), 0.0)
    np.testing.assert_allclose(m.w_, w, atol=1e-9)
