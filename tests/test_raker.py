"""Raker and AdaRaker (okl.learners.raker): against a from-scratch NumPy transcription of the paper's
rules (the same random directions, drawn the same way from the same seed), the generic checks,
seeds, the published protocol's parameters and bad hyperparameters."""

import numpy as np
import pytest

import okl
from okl.checks import check_learner
from okl.learners.raker import DEFAULT_WIDTHS, PAPER_WIDTHS, AdaRaker, Raker


def _directions(seed, sigmas, D, d):
    """Each kernel's D directions in kernel order, N(0, sigma^-2 I), from one generator."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((D, d)) / s for s in sigmas]


def _loss_and_slope(loss, f, y):
    if loss == "squared":
        return (f - y) ** 2, 2.0 * (f - y)
    return max(0.0, 1.0 - y * f), (-y if y * f < 1.0 else 0.0)


def _reference(X, y, U, eta, eta_w, reg=0.0, loss="squared", decaying=False, unit_targets=True, periods=(0,),
               share="rounds"):
    """Raker (one instance, period 0) or AdaRaker as KAF.md K9 and the module docstring state them,
    in plain NumPy: kernel weights and instance weights as normalised probabilities (not exponents),
    a restarted instance's weight set to its share (1/(t + 1) after t rounds, or min(1/2, 1/sqrt(L)))
    and the others rescaled."""
    P, D = len(U), U[0].shape[0]
    K = len(periods)
    lengths = [float(L) if L else 0.0 for L in periods]
    if K > 1:
        lengths[-1] = 2.0 * lengths[-2]
    priors = np.array([min(0.5, 1.0 / np.sqrt(L)) if K > 1 else 1.0 for L in lengths])
    theta = np.zeros((K, P, 2 * D))
    kw = np.full((K, P), 1.0 / P)
    h = priors / priors.sum() if share == "interval" else np.full(K, 1.0 / K)
    sumsq, out = 0.0, []
    for t, (x, target) in enumerate(zip(X, y), start=1):
        z = [np.concatenate([np.cos(u @ x), np.sin(u @ x)]) / np.sqrt(D) for u in U]
        fk = np.array([[theta[i, k] @ z[k] for k in range(P)] for i in range(K)])
        fi = (kw * fk).sum(axis=1) / kw.sum(axis=1)
        out.append(fi[0] if K == 1 else h @ fi / h.sum())
        sumsq += target * target
        unit = sumsq / t if unit_targets else 1.0
        for i in range(K):
            age = t if not periods[i] else (t - 1) % periods[i] + 1
            rate = 1.0 / np.sqrt(age) if decaying else 1.0
            for k in range(P):
                value, slope = _loss_and_slope(loss, fk[i, k], target)
                value += reg * theta[i, k] @ theta[i, k]
                kw[i, k] *= np.exp(-eta_w * rate * value / unit)
                theta[i, k] = (1.0 - 2.0 * eta * rate * reg) * theta[i, k] - eta * rate * slope * z[k]
            kw[i] /= kw[i].sum()
            h[i] *= np.exp(-eta_w * rate * _loss_and_slope(loss, fi[i], target)[0] / unit)
        h /= h.sum()
        for i in range(K):
            if periods[i] and t % periods[i] == 0:
                theta[i] = 0.0
                kw[i] = 1.0 / P
                prior = priors[i] if share == "interval" else 1.0 / (t + 1)
                others = h.sum() - h[i]
                h *= (1.0 - prior) / others
                h[i] = prior
    return np.array(out)


def _stream(task, n, data_dir):
    X, y = okl.load_dataset("cpusmall" if task == "regression" else "german", data_dir)
    p = np.random.default_rng(1).permutation(len(y))[:n]
    return np.ascontiguousarray(X[p]), np.asarray(y, float)[p]


@pytest.mark.parametrize("options", [
    {},
    {"reg": 1e-3, "step_schedule": "inverse sqrt", "loss_unit": "none", "eta": 1.0, "eta_w": 1.0},
])
def test_raker_is_the_published_rule(options, data_dir):
    X, y = _stream("regression", 300, data_dir)
    sigma, mult, D, seed = 0.7, (0.5, 1.0, 2.0), 12, 4
    m = okl.make("raker", kernel=okl.RBF(sigma=sigma), widths=mult, n_components=D, loss="squared", scale=None,
                 center_targets=False, random_state=seed, **options)
    got = m.run(X, y).decisions
    U = _directions(seed, [sigma * w for w in mult], D, X.shape[1])
    np.testing.assert_array_equal(m.U_, np.concatenate(U))
    ref = _reference(X, y, U, eta=options.get("eta", 0.2), eta_w=options.get("eta_w", 0.5), reg=options.get("reg", 0.0),
                     decaying="step_schedule" in options, unit_targets="loss_unit" not in options)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)
    # it learns from uncentred targets (mean square 0.8): the last 100 rounds below the targets' variance
    assert np.mean((got[200:] - y[200:]) ** 2) < 0.75 * np.var(y)


def test_raker_hinge_is_the_published_rule(data_dir):
    X, y = _stream("classification", 300, data_dir)
    m = okl.make("raker", kernel=okl.RBF(sigma=1.5), widths=(0.5, 2.0), n_components=10, scale=None, random_state=2)
    got = m.run(X, y).decisions
    ref = _reference(X, y, _directions(2, [0.75, 3.0], 10, X.shape[1]), eta=0.5, eta_w=0.5, loss="hinge")
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("share", ["rounds", "interval"])
def test_adaraker_is_the_published_rule(share, data_dir):
    X, y = _stream("regression", 300, data_dir)
    m = okl.make("adaraker", kernel=okl.RBF(sigma=0.7), widths=(0.5, 2.0), n_components=8, n_instances=4, shortest=8,
                 loss="squared", scale=None, center_targets=False, random_state=5, step_schedule="inverse sqrt",
                 restart_share=share)
    got = m.run(X, y).decisions
    ref = _reference(X, y, _directions(5, [0.35, 1.4], 8, X.shape[1]), eta=0.2, eta_w=0.5, decaying=True,
                     periods=(8, 16, 32, 0), share=share)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)
    raker = okl.make("raker", kernel=okl.RBF(sigma=0.7), widths=(0.5, 2.0), n_components=8, loss="squared",
                     scale=None, center_targets=False, random_state=5, step_schedule="inverse sqrt").run(X, y)
    assert not np.allclose(got, raker.decisions)  # the restarted instances take part
    # the restarts happened: instance 0 (period 8) restarted after round 296, so it has learned 4 rounds
    w = m.instance_weights()
    assert w.shape == (4,) and abs(w.sum() - 1.0) < 1e-12
    assert m.stats_[0] == 300


def test_one_instance_adaraker_is_raker(data_dir):
    X, y = _stream("classification", 300, data_dir)
    a = okl.make("adaraker", n_instances=1, random_state=3).run(X, y).decisions
    b = okl.make("raker", random_state=3).run(X, y).decisions
    np.testing.assert_array_equal(a, b)


def test_check_learner_passes_on_both(data_dir):
    check_learner(Raker, data_dir)
    check_learner(AdaRaker, data_dir)


def test_same_random_state_same_numbers_other_state_other_numbers(data_dir):
    X, y = _stream("classification", 400, data_dir)
    for name in ("raker", "adaraker"):
        a = okl.make(name, random_state=7).run(X, y).decisions
        b = okl.make(name, random_state=7).run(X, y).decisions
        c = okl.make(name, random_state=8).run(X, y).decisions
        assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_default_widths_and_the_published_protocol(data_dir):
    assert len(DEFAULT_WIDTHS) == 9 and DEFAULT_WIDTHS[0] == pytest.approx(0.1) and DEFAULT_WIDTHS[-1] == 10.0
    assert len(PAPER_WIDTHS) == 17 and PAPER_WIDTHS[0] == 100.0 and PAPER_WIDTHS[-1] == pytest.approx(0.01)
    X, y = _stream("regression", 1000, data_dir)
    params = Raker.paper_params(100)
    m = okl.make("raker", loss="squared", random_state=0, **params)
    tr = m.run(X, y)
    assert m.diagnostics()["kernels"] == 17 and m.U_.shape == (17 * 50, X.shape[1])
    # the frequencies of kernel i have variance 10^((i - 8) / 2) (the OMKL-GF code's gamma_i)
    var = [np.var(m.U_[50 * i:50 * (i + 1)]) for i in (0, 8, 16)]
    assert 0.5e-4 < var[0] < 2e-4 and 0.5 < var[1] < 2.0 and 0.5e4 < var[2] < 2e4
    assert np.mean((tr.decisions[500:] - y[500:]) ** 2) < 0.5 * np.var(y)
    assert AdaRaker.paper_params(100)["shortest"] == 1


def test_bad_hyperparameters_name_themselves():
    with pytest.raises(ValueError, match="widths"):
        okl.make("raker", widths=[1.0, -2.0])
    with pytest.raises(ValueError, match="widths"):
        okl.make("raker", widths=[])
    with pytest.raises(ValueError, match="step_schedule"):
        okl.make("raker", step_schedule="linear")
    with pytest.raises(ValueError, match="n_instances"):
        okl.make("adaraker", n_instances=0)
    with pytest.raises(ValueError, match="kernel must be RBF or Laplacian"):
        okl.make("raker", kernel=okl.kernels.Polynomial(degree=2))


@pytest.mark.parametrize("name", ["raker", "adaraker"])
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_per_event_decisions_are_run_decisions_bit_for_bit(name, task, data_dir):
    X, y = _stream(task, 400, data_dir)
    params = {"budget": 10, "random_state": 0, **({"loss": "squared"} if task == "regression" else {})}
    ref = okl.make(name, **params).run(X, y).decisions
    m = okl.make(name, **params)
    d = []
    for i in range(len(y)):
        d.append(m.predict_one(X[i]))
        m.learn_one(X[i], float(y[i]))
    assert np.array_equal(np.array(d), ref)


def test_k_classes_beat_the_majority(german):
    from okl.runtime.multiclass import MultiClass

    X, _ = german
    k = np.digitize(X[:, 1], np.quantile(X[:, 1], [1 / 3, 2 / 3])).astype(float)
    majority = 100.0 * (1.0 - np.bincount(k.astype(int)).max() / len(k))  # 58.6 %
    # (measured: 36.2 % for both at budget 100)
    assert MultiClass("raker", params={"budget": 20}, random_state=0).run(X, k).mistake_rate < majority - 15.0
