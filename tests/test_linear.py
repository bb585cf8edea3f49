"""The linear learner's features (okl.learners.linear): degree 2 against a plain NumPy reference,
and the per-event path against run() with every map."""

import numpy as np
import pytest

import okl
from okl.learners.linear import linear_features, n_linear_features


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
