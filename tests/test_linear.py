"""The linear learner's features (okl.learners.linear): degree 2 against a plain NumPy reference,
and the per-event path against run() with every map."""

import numpy as np
import pytest

import okl
from okl.components.maps.linear import linear_features, n_linear_features


def quadratic_reference(x):
    d = len(x)
    return np.concatenate([x, [x[i] * x[j] for i in range(d) for j in range(i, d)], [1.0]])


def test_degree_two_features_are_the_products_in_order():
    x = np.array([0.5, -2.0, 3.0])
    z = np.empty(n_linear_features(3, 2))
    linear_features(x, z.shape[0], False, z)
    assert z.shape == (10,)  # 3 + 6 products + bias
    np.testing.assert_array_equal(z, quadratic_reference(x))
    z1 = np.empty(n_linear_features(3, 1))
    linear_features(x, z1.shape[0], False, z1)
    np.testing.assert_array_equal(z1, [0.5, -2.0, 3.0, 1.0])


def test_degree_two_regression_fits_a_gated_plane_that_degree_one_cannot():
    """River's Planes2D-like target: y = x0 (x1 + 2 x2) + noise, inputs in {-1, 0, 1}: a product of
    features, exactly in the degree-2 span (NLMS reaches the noise level), out of the linear one."""
    rng = np.random.default_rng(0)
    X = rng.choice([-1.0, 0.0, 1.0], size=(4000, 4))
    y = X[:, 0] * (X[:, 1] + 2.0 * X[:, 2]) + rng.normal(0.0, 0.1, 4000)
    losses = {}
    for degree in (1, 2):
        f = okl.make("linear", loss="squared", eta=0.2, degree=degree, scale=None).run(X, y).decisions
        losses[degree] = float(np.mean((f[2000:] - y[2000:]) ** 2))
    assert losses[2] < 0.02 < 1.0 < losses[1]


def test_degree_two_run_equals_a_numpy_ogd_loop():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    m = okl.make("linear", degree=2, eta=0.1, scale=None)
    got = m.run(X, y).decisions
    w = np.zeros(10)
    ref = np.empty(300)
    for i, (x, t) in enumerate(zip(X, y)):
        z = quadratic_reference(x)
        ref[i] = w @ z
        if t * ref[i] < 1.0:  # hinge
            w += 0.1 * t * z
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(m.w_, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("scale", ["symlog", "affine", "range", None])
@pytest.mark.parametrize("degree", [1, 2])
def test_per_event_equals_run_for_every_map_and_degree(scale, degree, tmp_path):
    X, y = okl.load_dataset("german")
    X, y = X[:200, :8], y[:200]
    params = dict(degree=degree, scale=scale, loss="logistic", eta=0.05)
    trace = okl.make("linear", **params).run(X, y)
    m = okl.make("linear", **params)
    dec = []
    for x, t in zip(X, y):
        dec.append(m.predict_one(x))
        m.learn_one(x, t)
    np.testing.assert_array_equal(dec, trace.decisions)
    m.save(tmp_path / "m.npz")
    back = okl.Learner.load(tmp_path / "m.npz")
    assert back.degree == degree and back.w_.shape == (n_linear_features(8, degree),)
    np.testing.assert_array_equal(back.w_, m.w_)


def test_degree_is_checked():
    with pytest.raises(ValueError, match="degree"):
        okl.make("linear", degree=3)


def nag_reference(Z, y, eta, loss):
    """NAG (Ross, Mineiro & Langford 2013, Algorithm 2) in plain NumPy on the feature rows Z (bias
    included), test-then-train: the decisions before each update."""
    k = Z.shape[1]
    w, G, s, N = np.zeros(k), np.zeros(k), np.zeros(k), 0.0
    out = np.empty(len(y))
    for t, (z, label) in enumerate(zip(Z, y), start=1):
        nz = np.flatnonzero(z)
        u, a = z[nz], np.abs(z[nz])
        grow = (a > s[nz]) & (s[nz] > 0)
        rescaled = w[nz].copy()
        rescaled[grow] *= (s[nz][grow] / a[grow]) ** 2
        f = rescaled @ u
        out[t - 1] = f
        w[nz] = rescaled
        s[nz] = np.maximum(s[nz], a)
        N += np.sum((u / s[nz]) ** 2)
        g = -label / (1.0 + np.exp(label * f)) if loss == "logistic" else (
            -label if label * f < 1.0 else 0.0) if loss == "hinge" else 2.0 * (f - label)
        G[nz] += (g * u) ** 2
        if g != 0.0:
            w[nz] -= eta * np.sqrt(t / N) * g * u / (s[nz] * np.sqrt(G[nz]))
    return out


def _sparse_binary_rows(n, d, nnz, seed):
    rng = np.random.default_rng(seed)
    X = np.zeros((n, d))
    for i in range(n):
        X[i, rng.choice(d, size=nnz, replace=False)] = rng.choice([0.5, 1.0, 3.0], size=nnz)
    return X


@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared"])
def test_nag_step_equals_a_numpy_reference(loss):
    X = _sparse_binary_rows(400, 30, 5, 0)
    w = np.random.default_rng(1).standard_normal(30)
    y = X @ w if loss == "squared" else np.where(X @ w > 0.5, 1.0, -1.0)
    m = okl.make("linear", step="nag", eta=0.5, loss=loss, scale=None, center_targets=False)
    f = m.run(X, y).decisions
    ref = nag_reference(np.hstack([X, np.ones((400, 1))]), y, 0.5, loss)
    np.testing.assert_allclose(f, ref, rtol=1e-10, atol=1e-10)
    assert np.abs(ref).max() > 0.5  # (it learned: the decisions are not all near zero)


def test_nag_is_invariant_to_each_feature_scale_and_learns_rare_features():
    """NAG's step is invariant to a rescaling of any feature (its scale s_i, sums G_i and the
    normaliser absorb it): a column x 1000 leaves the decisions as they were, where plain OGD's
    change. And it learns a one-hot stream where a rare level decides the label better than OGD."""
    X = _sparse_binary_rows(300, 20, 4, 2)
    y = np.where(X[:, 0] + X[:, 1] - X[:, 2] > 0.2, 1.0, -1.0)
    scaled = X.copy()
    scaled[:, 0] *= 1000.0
    kw = dict(loss="logistic", scale=None)
    f = okl.make("linear", step="nag", eta=0.5, **kw).run(X, y).decisions
    g = okl.make("linear", step="nag", eta=0.5, **kw).run(scaled, y).decisions
    np.testing.assert_allclose(g, f, rtol=1e-9, atol=1e-12)
    h = okl.make("linear", eta=0.05, **kw).run(scaled, y).decisions
    assert np.abs(h - okl.make("linear", eta=0.05, **kw).run(X, y).decisions).max() > 0.1


def test_nag_per_event_model_files_and_k_outputs(tmp_path):
    X = _sparse_binary_rows(300, 25, 4, 3)
    y = np.where(X[:, :3].sum(axis=1) > X[:, 3:6].sum(axis=1), 1.0, -1.0)
    f = okl.make("linear", step="nag", eta=0.5).run(X, y).decisions
    m = okl.make("linear", step="nag", eta=0.5)
    got = []
    for i in range(300):
        got.append(m.predict_one(X[i]))
        m.learn_one(X[i], y[i])
        if i == 150:
            m.save(tmp_path / "nag.okl")
            m = okl.Learner.load(tmp_path / "nag.okl")
    np.testing.assert_array_equal(np.array(got), f)
    assert okl.Learner.load(tmp_path / "nag.okl").nag_.shape == (2 * 26 + 1,)  # (G, s: 25 features and the bias; N)
    ogd = okl.make("linear")
    ogd.run(X, y)
    assert ogd.nag_ is None  # (OGD keeps no NAG state)
    # K outputs inside auto's engine (okl.engine.k_outputs; 3 classes): run() and per event agree
    labels = np.argmax(X[:, :3], axis=1)
    params = {"members": [("linear", None, {"step": "nag", "eta": 0.5, "loss": "logistic"})]}
    k_run = okl.MultiClass("auto", params, random_state=0).run(X, labels)
    e = okl.MultiClass("auto", params, random_state=0)
    preds = []
    for i in range(300):
        preds.append(e.predict_one(X[i]))
        e.learn_one(X[i], labels[i])
    assert 100.0 * np.mean(np.array(preds) != labels) == pytest.approx(k_run.mistake_rate)
    assert k_run.mistake_rate < 25.0 < 100.0 * np.mean(labels != np.bincount(labels).argmax())


def test_nag_takes_degree_two_and_its_choice_is_checked():
    X = _sparse_binary_rows(200, 6, 3, 4)
    y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    f = okl.make("linear", step="nag", degree=2, loss="logistic", scale=None).run(X, y).decisions
    Z = np.array([quadratic_reference(x) for x in X])
    np.testing.assert_allclose(f, nag_reference(Z, y, 0.2, "logistic"), rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match="step"):
        okl.make("linear", step="adagrad")
    from okl.components import Plan

    with pytest.raises(ValueError, match="'nag' step takes the 'linear' map"):
        Plan("fourier", "nag", w="w_", A="G_", eta=0.5, UT=np.zeros((3, 4)))
