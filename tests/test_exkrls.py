"""EX-KRLS (okl.learners.exkrls, the "ex-krls" step of okl.components): the rule against a
from-scratch NumPy transcription of KAFBOX's lib/exkrls.m (the tracking model, with its maximum
dictionary size), per event against run(), in auto's engine, in both adapters and in model files,
and check_learner."""

import numpy as np
import pytest

import okl
from okl.checks import check_learner, friedman_regression
from okl.learners.exkrls import EXKRLS


def _gauss(A, x, sigma):
    return np.exp(-((A - x) ** 2).sum(-1) / (2 * sigma ** 2))


def _reference(X, y, alphaf, beta, lam, q, M, sigma):
    """KAFBOX's exkrls.m written out with NumPy arrays: evaluate (k' alpha) before train, the
    dictionary grown with the bordered Q, nothing changed once it holds M."""
    mem, alpha, Q, rho, out = None, None, None, None, []
    for i, (x, t) in enumerate(zip(X, y), start=1):
        if mem is None:
            out.append(0.0)
            ktt = 1.0
            alpha = np.array([alphaf * t / (lam * beta + ktt)])
            rho = lam * beta / (alphaf ** 2 * beta + lam * q)
            Q = np.array([[alphaf ** 2 / ((beta * lam + ktt) * (alphaf ** 2 + beta * lam * q))]])
            mem = x[None]
            continue
        kt = _gauss(mem, x, sigma)
        out.append(kt @ alpha)
        if len(mem) < M:
            z = Q @ kt
            r = beta ** i * rho + 1.0 - kt @ z
            err = t - kt @ alpha
            alpha = alphaf * np.concatenate([alpha - z * err / r, [err / r]])
            mem = np.vstack([mem, x])
            dummy = alphaf ** 2 + beta ** i * q * rho
            rho = rho / dummy
            Q = alphaf ** 2 / (r * dummy) * np.block([[Q * r + np.outer(z, z), -z[:, None]], [-z[None, :], np.ones((1, 1))]])
    return np.array(out), alpha, len(mem)


@pytest.mark.parametrize("M", [30, 400])
def test_equals_kafbox_rule(M):
    """okl's ex-krls at KAFBOX's setting on a noisy sine of two inputs: every decision within 1e-9 of
    the transcription (the dictionary full at 30, growing past 300 rounds at 400)."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-2, 2, size=(300, 2))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.05 * rng.normal(size=300)
    sigma = 0.8
    ref, alpha, m = _reference(X, y, 0.999, 0.995, 1e-2, 1e-3, M, sigma)
    model = okl.make("ex-krls", **EXKRLS.paper_params(M), budget=M, loss="squared", kernel=okl.RBF(sigma=sigma))
    out = model.run(X, y).decisions
    assert np.abs(out - ref).max() < 1e-9
    assert model.m_ == m == min(M, 300)
    # (the coefficients reach |a| ~ 20 on 300 growing rounds: relative to their size)
    assert np.abs(model.alpha_[:m] - alpha).max() < 1e-9 * np.abs(alpha).max()
    assert np.array_equal(model.Q_[:m, :m], model.Q_[:m, :m].T)  # (exactly symmetric)


def test_per_event_equals_run_and_model_files(tmp_path):
    X, y = friedman_regression(600)
    a = okl.make("ex-krls", loss="squared", budget=80)
    run = a.run(X[:400], y[:400]).decisions
    b = okl.make("ex-krls", loss="squared", budget=80)
    ev = []
    for x, t in zip(X[:400], y[:400]):
        ev.append(b.predict_one(x))
        b.learn_one(x, t)
    assert np.array_equal(run, np.array(ev))
    a.save(tmp_path / "ex.npz")
    back = okl.Learner.load(tmp_path / "ex.npz")
    assert np.array_equal(back.run(X[400:], y[400:]).decisions, a.run(X[400:], y[400:]).decisions)
    assert back.rounds_ == a.rounds_ == 600 and back.m_ == 80


def test_in_autos_engine_through_a_parameter(monkeypatch):
    X, y = friedman_regression(500)

    def pool():
        m = okl.make("auto", members=[("ex-krls", 1.0, {"budget": 60}), ("linear", None, {})], loss="squared",
                     random_state=2)
        return m, m.run(X, y).decisions

    m, out = pool()
    assert m.diagnostics()["members_outside_engine"] == 0
    member = m.pool_[0]
    monkeypatch.setattr(EXKRLS, "composition", ())
    m2, out2 = pool()
    assert m2.diagnostics()["members_outside_engine"] == 1
    assert np.array_equal(out, out2)
    for attr in EXKRLS._state_attrs:
        assert np.array_equal(getattr(member, attr), getattr(m2.pool_[0], attr)), attr


def test_check_learner_and_adapters():
    check_learner(EXKRLS)
    from okl.river import OKLRiverRegressor
    from okl.sklearn import OKLRegressor
    X, y = friedman_regression(300)
    r = OKLRiverRegressor(learner="ex-krls", budget=50)
    for x, t in zip(X[:200], y[:200]):
        r.learn_one({f"x{i}": v for i, v in enumerate(x)}, t)
    assert np.isfinite(r.predict_one({f"x{i}": v for i, v in enumerate(X[250])}))
    s = OKLRegressor(learner="ex-krls", budget=50).fit(X[:200], y[:200])
    assert np.mean((s.predict(X[200:]) - y[200:]) ** 2) < np.var(y[200:])
